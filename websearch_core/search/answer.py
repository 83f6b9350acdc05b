"""A provider's answer as the response a caller gets: redacted, timed, and counted."""

from __future__ import annotations

import dataclasses
import itertools

from websearch_core.models import AnswerCitation, SearchRequest, SearchResponse, Usage
from websearch_core.providers.base import ProviderAnswer, clean_strings
from websearch_core.redact import Redactor

__all__ = ["recalled", "response_of"]


def response_of(
    request: SearchRequest,
    provider: str,
    query_sent: str,
    answer: ProviderAnswer,
    elapsed_ms: float,
    redactor: Redactor,
) -> SearchResponse:
    """The response for ``answer``, with every configured secret redacted from it: a
    provider that echoes the request must not echo a key."""
    if answer.answer and redactor:
        # Redacted here, span by span, so the citations still point at their words.
        text, citations = _redacted_answer(redactor, answer.answer, answer.citations)
        answer = dataclasses.replace(answer, answer=text, citations=citations)
    response = SearchResponse(
        query=request.query,
        provider=provider,
        results=answer.results,
        answer=answer.answer,
        citations=answer.citations,
        answer_truncated=answer.answer_truncated,
        skipped=answer.skipped,
        suggestions=answer.suggestions,
        usage=answer.usage or Usage(),
        sent_query=query_sent,
        outcomes=answer.outcomes,
        elapsed_ms=elapsed_ms,
    )
    if redactor:
        response = SearchResponse.model_validate(
            clean_strings(response.model_dump(), redactor.redact)
        )
    return response


def recalled(hit: SearchResponse) -> SearchResponse:
    """A memo (or shared cache) hit: the same answer, which spent nothing this time."""
    return hit.model_copy(update={"from_memo": True, "elapsed_ms": 0.0, "usage": Usage()})


def _redacted_answer(
    redactor: Redactor, answer: str, citations: list[AnswerCitation]
) -> tuple[str, list[AnswerCitation]]:
    """``answer`` with every secret redacted, and its citations moved to match; a secret
    across a span's edge cannot be moved, so those citations are dropped."""
    redacted = redactor.redact(answer)
    if redacted == answer:
        return answer, citations
    cuts = sorted({0, len(answer), *(c.start for c in citations), *(c.end for c in citations)})
    pieces = [redactor.redact(answer[a:b]) for a, b in itertools.pairwise(cuts)]
    if "".join(pieces) != redacted:
        return redacted, []
    moved, position = {}, 0
    for cut, piece in zip(cuts, [*pieces, ""], strict=True):
        moved[cut] = position
        position += len(piece)
    return redacted, [
        c.model_copy(update={"start": moved[c.start], "end": moved[c.end]}) for c in citations
    ]
