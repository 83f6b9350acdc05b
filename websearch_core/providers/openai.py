"""OpenAI: the Responses API with the ``web_search`` tool.

Docs: https://developers.openai.com/api/docs/guides/tools-web-search

The vendor traps, and what is done about each:

- A ``web_search_call`` item with ``status: "failed"`` arrives inside an HTTP 200: an error
  when no search succeeded, a ``down`` outcome beside the results when another one did; a
  response whose own ``status`` is ``failed`` is an error, ``incomplete`` a cut-off answer.
- ``url_citation`` spans index the ``output_text`` they sit in (characters, checked against
  the text: a span outside it is dropped); ``include: ["web_search_call.action.sources"]``
  brings every page the searches returned, not only the cited ones.
- ``url_citation`` spans cover the markdown link the model writes after a sentence
  (``… point. ([site.org](https://…?utm_source=openai))``), not the sentence, as every
  recording other projects published shows: the link is taken out of the answer, our ``[n]``
  goes after the sentence it followed, and that sentence (not the link) is the snippet, since
  a source carries no text of its own. ``utm_source=openai`` is dropped from every URL, and a
  page known only by its URL gets its host and path as a title.
- The queries the model ran (``action.query``, newer models ``action.queries``) are shown.
- ``filters`` takes ``allowed_domains`` or ``blocked_domains`` (at most 100; we send at most
  50), one list per search. ``blocked_domains`` is documented and forwarded by other
  clients (pydantic-ai#8323, vercel/ai#17899, which saw Wikipedia vanish when blocked), but
  not typed in the SDK and reported to let a page through: it is sent, and a result from a
  blocked domain that still comes back is left out of the menu, so the menu holds to it even
  where the vendor's answer may not.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from websearch_core.errors import (
    ProviderError,
    ProviderUnavailableError,
    RateLimitedError,
)
from websearch_core.models import EngineOutcome, SearchRequest, Usage
from websearch_core.providers.base import ProviderAnswer, Support
from websearch_core.providers.grounded import (
    INSTRUCTIONS,
    MAX_ANSWER_TOKENS,
    Citations,
    GroundedProvider,
    Span,
    as_dict,
    as_list,
    count_of,
    plain_claim,
    unlinked,
)
from websearch_core.text import one_line


class OpenAIProvider(GroundedProvider):
    name = "openai"
    key_setting = "openai_api_key"
    base_url_setting = "openai_base_url"
    model_setting = "openai_model"
    default_base_url = "https://api.openai.com"
    default_model = "gpt-5-mini"
    #: "up to 100 allowed_domains or up to 100 blocked_domains": one list per search.
    exclusive_options: ClassVar = (frozenset({"include_domains", "exclude_domains"}),)
    capabilities: ClassVar = {
        "include_domains": Support.NATIVE,  # filters.allowed_domains, at most 100
        # filters.blocked_domains: documented, best-effort (see the module docstring)
        "exclude_domains": Support.NATIVE,
        "freshness": Support.UNSUPPORTED,
        "date_range": Support.UNSUPPORTED,
        "include_answer": Support.NATIVE,
        "country": Support.NATIVE,  # user_location.country
        "language": Support.UNSUPPORTED,
        "safesearch": Support.UNSUPPORTED,
        "page": Support.UNSUPPORTED,
    }

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        # An omitted user_location means "the United States"; a bare one means nowhere.
        location: dict[str, str] = {"type": "approximate"}
        if request.country:
            location["country"] = request.country.upper()
        tool: dict[str, Any] = {"type": "web_search", "user_location": location}
        if request.include_domains:
            tool["filters"] = {"allowed_domains": list(request.include_domains)}
        elif request.exclude_domains:
            tool["filters"] = {"blocked_domains": list(request.exclude_domains)}
        return self._endpoint.request(
            "POST",
            "/v1/responses",
            json={
                "model": self.model,
                "instructions": INSTRUCTIONS,
                "input": query,
                "tools": [tool],
                "include": ["web_search_call.action.sources"],
                # Reasoning models spend output tokens before answering: room for both.
                "max_output_tokens": 4 * MAX_ANSWER_TOKENS,
                "store": False,
            },
            headers={
                "Accept": "application/json",
                "Authorization": f"Bearer {self._api_key.get_secret_value()}",
            },
        )

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        if data.get("status") == "failed":
            error = as_dict(data.get("error"))
            code = one_line(str(error.get("code") or "unknown"))[:40]
            raise ProviderUnavailableError(self.name, f"the response failed ({code})")
        output = data.get("output")
        if not isinstance(output, list):
            raise self.malformed("no output list")
        citations = Citations()
        parts: list[str] = []
        length = 0
        completed = failed = searches = 0
        searched: list[str] = []
        for item in output:
            item = as_dict(item)
            kind = item.get("type")
            if kind == "web_search_call":
                if item.get("status") == "failed":
                    failed += 1
                    continue
                completed += 1
                action = as_dict(item.get("action"))
                # open_page and find_in_page (reasoning models) read a page; they do not search
                if action.get("type", "search") == "search":
                    searches += 1
                    # Newer models list every query (``queries``), older ones one (``query``).
                    asked = as_list(action.get("queries")) or [action.get("query")]
                    searched.extend(q for q in asked if isinstance(q, str))
                for source in as_list(action.get("sources")):
                    source = as_dict(source)
                    citations.saw(source.get("url"), source.get("title"))
            elif kind == "message":
                for part in as_list(item.get("content")):
                    part = as_dict(part)
                    text = part.get("text")
                    if part.get("type") != "output_text" or not isinstance(text, str):
                        continue
                    if parts:  # paragraphs stay apart; spans index their own part
                        parts.append("\n\n")
                        length += 2
                    text, cited = unlinked(text, _spans(text, part.get("annotations")))
                    for span, claim in cited:
                        citations.cite(
                            length + span.start,
                            length + span.end,
                            span.url,
                            span.title,
                            plain_claim(claim),
                        )
                    parts.append(text)
                    length += len(text)
        citations.leave_out(request.exclude_domains)
        if failed and not completed:
            raise ProviderUnavailableError(self.name, "its web search failed")
        if not completed:
            raise self.not_grounded()
        usage = as_dict(data.get("usage"))
        outcomes = (
            [
                EngineOutcome(
                    engine=f"{self.name} web_search", status="down", error=f"{failed} failed"
                )
            ]
            if failed
            else []
        )
        return citations.answer(
            request,
            "".join(parts),
            usage=Usage(
                searches=searches,
                input_tokens=count_of(usage.get("input_tokens")),
                output_tokens=count_of(usage.get("output_tokens")),
            ),
            truncated=data.get("status") == "incomplete",
            outcomes=outcomes,
            searched=searched,
        )

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        # A 429 that says the account's credit is spent will not pass by waiting.
        if response.status_code == 429 and "insufficient_quota" in response.text:
            return RateLimitedError(self.name, None, quota=True)
        return None


def _spans(text: str, annotations: object) -> list[Span]:
    """The ``url_citation`` annotations of one ``output_text`` whose span lies inside it."""
    spans = []
    for note in as_list(annotations):
        note = as_dict(note)
        start, end = note.get("start_index"), note.get("end_index")
        if (
            note.get("type") == "url_citation"
            and isinstance(start, int)
            and isinstance(end, int)
            and 0 <= start < end <= len(text)
        ):
            spans.append(Span(start, end, note.get("url"), note.get("title")))
    return spans
