"""Gemini (Developer API): ``generateContent`` with the ``google_search`` grounding tool.

Docs: https://ai.google.dev/gemini-api/docs/google-search

The vendor traps, and what is done about each:

- ``groundingSupports[].segment`` offsets are UTF-8 BYTE offsets within one part
  (``partIndex``), not character offsets into the answer: each is converted per part, so a
  non-ASCII answer keeps its citations on the right words. Zero values are omitted in the
  JSON (an absent ``startIndex`` is 0).
- No ``groundingMetadata`` (or no non-empty ``webSearchQueries``) means the model did not
  search: reported as "not grounded", an error, never as "no results found". But the model
  can search and the sources be lost: ``webSearchQueries`` without ``groundingChunks``, or no
  ``groundingMetadata`` at all while ``usageMetadata.toolUsePromptTokenCount`` (the search
  results read, billed) is above 0. That is an answer with no results, a ``blind`` outcome
  and a note, never "did not search".
- ``webSearchQueries`` are the queries the model ran (Gemini 3 also sends ``""``): the
  non-empty ones are ``searched``. ``toolUsePromptTokenCount`` is input billed beside
  ``promptTokenCount`` (it is in ``totalTokenCount``): counted in ``input_tokens``.
- ``finishReason`` (``google.genai.types.FinishReason``): ``STOP`` is a finished answer;
  ``MAX_TOKENS`` and ``CONTINUATION`` (the per-request token limit, "generation is not yet
  complete") are cut off; any other value (``SAFETY``, ``RECITATION``, ``OTHER``,
  ``TOO_MANY_TOOL_CALLS``, ...) stopped the answer before its end: cut off too, with a note
  naming the reason. An answer stopped so that never searched is an error naming it.
- A weather or time chunk's ``uri`` is ``https://www.google.com/search?q=…`` with literal
  spaces: they are encoded (``%20``), or the link would be no link and the source dropped.
- ``groundingChunks[].web.uri`` is a Google redirect link and ``title`` only the domain: each
  link is resolved to its target through the URL jail (concurrently, within the search's
  deadline and at most ``LOCATE_BUDGET_S``), keeping the link when that fails.
- ``timeRangeFilter`` takes both ends or neither: an open end is filled (the start with
  ``_EARLIEST``, the end with tomorrow, as the end is exclusive). Domain filters exist on
  Vertex only: refused here.
- A bad key is a 400 with ``API_KEY_INVALID``, not a 401.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

import httpx

from websearch_core.errors import AuthenticationError, ProviderError, ProviderResponseError
from websearch_core.models import EngineOutcome, SearchRequest, Usage
from websearch_core.providers.base import Call, Exchange, Locate, ProviderAnswer, Support
from websearch_core.providers.grounded import (
    INSTRUCTIONS,
    MAX_ANSWER_TOKENS,
    Citations,
    GroundedProvider,
    add_counts,
    as_dict,
    as_list,
    count_of,
)
from websearch_core.text import one_line

_EARLIEST = dt.datetime(1990, 1, 1, tzinfo=dt.timezone.utc)
_WINDOW = {
    "day": dt.timedelta(days=1),
    "week": dt.timedelta(weeks=1),
    "month": dt.timedelta(days=31),
    "year": dt.timedelta(days=366),
}
#: Redirect links resolved per search: the menu holds at most 10 results.
MAX_LOCATES = 20
REDIRECT_PATH = "/grounding-api-redirect/"
REDIRECT_HOST = "vertexaisearch.cloud.google.com"
#: Spans read per answer: far more than a few sentences carry, few enough to stay linear.
MAX_SUPPORTS = 500
#: ``finishReason`` values (``google.genai.types.FinishReason``) of a finished answer; an
#: absent one is taken as finished (a whole, unstreamed response always carries one).
FINISHED = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"})
#: Values of an answer stopped by its token limit: ``CONTINUATION`` is "the per-request token
#: limit, but generation is not yet complete" (continued with a ``continuation_token``, which
#: this package does not send). Every other value stopped the answer early for its reason.
TOKEN_LIMIT = frozenset({"MAX_TOKENS", "CONTINUATION"})
#: The outcome's words for a search whose sources were lost.
LOST_SOURCES = "searched but returned no sources"


def _stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)


def time_range(request: SearchRequest, now: dt.datetime | None = None) -> dict[str, str] | None:
    """``timeRangeFilter`` for the request: start inclusive, end exclusive, both always set."""
    now = now or dt.datetime.now(dt.timezone.utc)
    if request.freshness:
        return {"startTime": _stamp(now - _WINDOW[request.freshness]), "endTime": _stamp(now)}
    if not (request.date_from or request.date_to):
        return None
    start = _midnight(request.date_from) if request.date_from else _EARLIEST
    # The last day included (the end is exclusive); an open end is today, or the start day.
    last_day = request.date_to or max(now.date(), request.date_from or now.date())
    return {
        "startTime": _stamp(start),
        "endTime": _stamp(_midnight(last_day) + dt.timedelta(days=1)),
    }


def is_redirect(link: str, gateway_host: str | None = None) -> bool:
    """A Google grounding redirect link (``…/grounding-api-redirect/…`` on Google's host, or
    on the gateway the operator set as the base URL): only these are looked up; a page's
    own URL is never requested while searching."""
    try:
        parts = urlsplit(link)
    except ValueError:
        return False
    return parts.path.startswith(REDIRECT_PATH) and parts.hostname in (REDIRECT_HOST, gateway_host)


def characters(text: str, byte_offset: int) -> int:
    """The character offset in ``text`` of a UTF-8 byte offset (one inside a character
    counts up to that character's start)."""
    return ByteOffsets(text).character(byte_offset)


class ByteOffsets:
    """UTF-8 byte offsets to character offsets in one text: the text is measured once, then
    each offset is a binary search (a part may carry thousands of spans)."""

    def __init__(self, text: str) -> None:
        self.ends = list(itertools.accumulate(len(c.encode("utf-8", "replace")) for c in text))

    def character(self, byte_offset: int) -> int:
        # characters whose last byte ends at or before the offset
        return bisect.bisect_right(self.ends, byte_offset)


class GeminiProvider(GroundedProvider):
    name = "gemini"
    key_setting = "gemini_api_key"
    base_url_setting = "gemini_base_url"
    model_setting = "gemini_model"
    default_base_url = "https://generativelanguage.googleapis.com"
    #: Google's alias for its current Flash model (grounding is billed per search query).
    default_model = "gemini-flash-latest"
    capabilities: ClassVar = {
        "include_domains": Support.UNSUPPORTED,  # Vertex only
        "exclude_domains": Support.UNSUPPORTED,  # Vertex only
        "freshness": Support.NATIVE,  # a timeRangeFilter window ending now
        "date_range": Support.NATIVE,  # timeRangeFilter, both ends
        "include_answer": Support.NATIVE,
        "country": Support.UNSUPPORTED,  # no documented effect on search
        "language": Support.UNSUPPORTED,
        "safesearch": Support.UNSUPPORTED,
        "page": Support.UNSUPPORTED,
    }

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        search: dict[str, Any] = {}
        if window := time_range(request):
            search["timeRangeFilter"] = window
        return self._endpoint.request(
            "POST",
            f"/v1beta/models/{quote(self.model.removeprefix('models/'), safe='')}:generateContent",
            json={
                "systemInstruction": {"parts": [{"text": INSTRUCTIONS}]},
                "contents": [{"role": "user", "parts": [{"text": query}]}],
                "tools": [{"google_search": search}],
                # Thinking models spend output tokens before answering: room for both.
                "generationConfig": {"maxOutputTokens": 4 * MAX_ANSWER_TOKENS},
            },
            headers={
                "Accept": "application/json",
                "x-goog-api-key": self._api_key.get_secret_value(),
            },
        )

    def exchange(self, request: SearchRequest, query: str) -> Exchange:
        response = yield Call(self.build_request(request, query))
        assert isinstance(response, httpx.Response)
        grounding = self._grounding(self.read_json(response))
        gateway = urlsplit(self._endpoint.url).hostname
        seen = dict.fromkeys([*grounding.citations.cited, *grounding.citations.found])
        links = tuple(link for link in seen if is_redirect(link, gateway))[:MAX_LOCATES]
        targets = yield Locate(links)
        assert isinstance(targets, dict)
        return grounding.answer(request, rename=targets)

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        """One response without resolving its links (``exchange`` resolves them)."""
        return self._grounding(self.read_json(response)).answer(request)

    def _grounding(self, data: dict[str, Any]) -> _Grounding:
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = as_dict(data.get("promptFeedback")).get("blockReason")
            if feedback:
                reason = one_line(str(feedback))[:40]
                raise ProviderResponseError(
                    self.name, f"{self.name} blocked the query ({reason}): rephrase it"
                )
            raise self.malformed("no candidates")
        candidate = as_dict(candidates[0])
        parts = as_list(as_dict(candidate.get("content")).get("parts"))
        grounding = as_dict(candidate.get("groundingMetadata"))
        usage = as_dict(data.get("usageMetadata"))
        queries = [
            q for q in as_list(grounding.get("webSearchQueries")) if isinstance(q, str) and q
        ]
        chunks = [
            as_dict(as_dict(chunk).get("web"))
            for chunk in as_list(grounding.get("groundingChunks"))
        ]
        # The search results the model read, billed as input: it searched, whatever else says.
        tool_tokens = count_of(usage.get("toolUsePromptTokenCount"))
        finish = candidate.get("finishReason")
        reason = one_line(finish).upper()[:40] if isinstance(finish, str) else "STOP"
        if not (queries or any(chunk.get("uri") for chunk in chunks) or tool_tokens):
            if reason not in FINISHED:
                raise ProviderResponseError(
                    self.name,
                    f"{self.name} stopped its answer ({reason}) before its model searched the "
                    "web: rephrase the query, or use another provider",
                )
            raise self.not_grounded()
        # Where each text part starts in the joined answer (thoughts are not the answer).
        starts: dict[int, int] = {}
        texts: dict[int, str] = {}
        measured: dict[int, ByteOffsets] = {}
        length = 0
        for index, part in enumerate(parts):
            part = as_dict(part)
            if isinstance(part.get("text"), str) and not part.get("thought"):
                starts[index], texts[index] = length, part["text"]
                length += len(part["text"])
        citations = Citations()
        for support in as_list(grounding.get("groundingSupports"))[:MAX_SUPPORTS]:
            support = as_dict(support)
            segment = as_dict(support.get("segment"))
            part_index = count_of(segment.get("partIndex", 0))  # absent is 0, as in proto3
            if part_index not in texts:
                continue
            part_text = texts[part_index]
            if part_index not in measured:  # each part measured once
                measured[part_index] = ByteOffsets(part_text)
            offsets = measured[part_index]
            start = offsets.character(count_of(segment.get("startIndex")) or 0)
            end = offsets.character(count_of(segment.get("endIndex")) or 0)
            cited = part_text[start:end]
            for chunk_index in as_list(support.get("groundingChunkIndices"))[:MAX_LOCATES]:
                if isinstance(chunk_index, int) and 0 <= chunk_index < len(chunks):
                    chunk = chunks[chunk_index]
                    citations.cite(
                        starts[part_index] + start,
                        starts[part_index] + end,
                        _link(chunk.get("uri")),
                        chunk.get("title"),
                        cited,
                    )
        for chunk in chunks:
            citations.saw(_link(chunk.get("uri")), chunk.get("title"))
        tokens_out = add_counts(
            count_of(usage.get("candidatesTokenCount")), count_of(usage.get("thoughtsTokenCount"))
        )
        spent = Usage(
            # Empty queries are not billed; a search whose queries were lost was at least one.
            searches=len(queries) or 1,
            input_tokens=add_counts(count_of(usage.get("promptTokenCount")), tool_tokens),
            output_tokens=tokens_out,
        )
        found = _Grounding(
            citations,
            "".join(texts[index] for index in sorted(texts)),
            spent,
            truncated=reason not in FINISHED,
            searched=queries,
        )
        if reason not in FINISHED | TOKEN_LIMIT:
            found.notes.append(f"{self.name} stopped its answer early ({reason})")
        if not (citations.cited or citations.found):
            found.outcomes.append(
                EngineOutcome(
                    engine=f"{self.name} google_search", status="blind", error=LOST_SOURCES
                )
            )
            found.notes.append(
                f"{self.name}'s model searched the web (and is billed for it), but its answer "
                "came back without its sources"
            )
        return found

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        if response.status_code == 400 and "API_KEY_INVALID" in response.text:
            return AuthenticationError(self.name, 400)
        return None


def _link(uri: object) -> object:
    """A chunk's ``uri`` as a link: Google's own search links (weather, time) carry literal
    spaces (``?q=weather+in+San Francisco, CA,+US``), encoded here as ``%20``."""
    return uri.strip().replace(" ", "%20") if isinstance(uri, str) else uri


@dataclass
class _Grounding:
    """What one response says, before its redirect links are resolved."""

    citations: Citations
    text: str
    usage: Usage
    truncated: bool
    searched: list[str]
    notes: list[str] = field(default_factory=list)
    outcomes: list[EngineOutcome] = field(default_factory=list)

    def answer(
        self, request: SearchRequest, rename: dict[str, str] | None = None
    ) -> ProviderAnswer:
        return self.citations.answer(
            request,
            self.text,
            usage=self.usage,
            truncated=self.truncated,
            outcomes=self.outcomes,
            rename=rename,
            searched=self.searched,
            notes=self.notes,
        )
