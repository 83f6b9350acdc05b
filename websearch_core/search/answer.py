"""A provider's answer as the response a caller gets: redacted, timed, and counted."""

from __future__ import annotations

import dataclasses
import itertools

from websearch_core.models import (
    MAX_COUNT,
    AnswerCitation,
    SearchRequest,
    SearchResponse,
    Usage,
    said_number,
)
from websearch_core.providers.base import ProviderAnswer, clean_strings
from websearch_core.redact import Redactor

__all__ = ["notes_on", "recalled", "response_of"]


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
        searched=answer.searched,
        notes=[*notes_on(request, provider, answer), *answer.notes],
        elapsed_ms=elapsed_ms,
    )
    if redactor:
        response = SearchResponse.model_validate(
            clean_strings(response.model_dump(), redactor.redact)
        )
    return response


def notes_on(request: SearchRequest, provider: str, answer: ProviderAnswer) -> list[str]:
    """What this response does not give as asked, said once here for every projection."""
    notes = []
    if request.count_asked is not None:
        notes.append(f"count capped at {MAX_COUNT} (asked for {said_number(request.count_asked)})")
    if request.include_answer and not answer.answer:
        notes.append(f"no answer: {provider} gave none for this search, only results")
    return notes


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
