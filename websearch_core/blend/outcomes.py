"""An engine's answer as one of three outcomes: answered, blind or down."""

from __future__ import annotations

from websearch_core.errors import (
    AuthenticationError,
    InvalidRequestError,
    ProviderResponseError,
    RateLimitedError,
    WebSearchError,
)
from websearch_core.models import EngineOutcome
from websearch_core.providers.base import ProviderAnswer

__all__ = ["outcome_of"]


def _reason(error: WebSearchError) -> str:
    """A down engine's reason in a few words (the full message is in the log)."""
    if isinstance(error, RateLimitedError):
        return "quota spent" if error.quota else "rate limited"
    if isinstance(error, AuthenticationError):
        return "key refused"
    if isinstance(error, InvalidRequestError):
        return "refused the request"
    if "no answer within" in str(error):
        return "timeout"
    status = getattr(error, "status", None)
    return f"HTTP {status}" if status else "unavailable"


def outcome_of(engine: str, answer: ProviderAnswer | WebSearchError | None) -> EngineOutcome:
    """``None`` is an engine still silent at the deadline."""
    if answer is None:
        return EngineOutcome(engine=engine, status="down", error="timeout")
    if isinstance(answer, ProviderAnswer):
        if answer.results:
            return EngineOutcome(engine=engine, status="answered", results=len(answer.results))
        return EngineOutcome(engine=engine, status="blind", error="no results")
    if isinstance(answer, ProviderResponseError) and (
        answer.status is None or 200 <= answer.status < 300
    ):
        # It answered, with something that is not a result list: a captcha or block page, a
        # body that does not parse.
        return EngineOutcome(engine=engine, status="blind", error="unreadable answer")
    return EngineOutcome(engine=engine, status="down", error=_reason(answer))
