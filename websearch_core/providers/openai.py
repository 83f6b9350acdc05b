"""OpenAI: the Responses API with the ``web_search`` tool.

Docs: https://developers.openai.com/api/docs/guides/tools-web-search

The vendor traps, and what is done about each:

- A ``web_search_call`` item with ``status: "failed"`` arrives inside an HTTP 200: an error
  when no search succeeded, a ``down`` outcome beside the results when another one did; a
  response whose own ``status`` is ``failed`` is an error, ``incomplete`` a cut-off answer.
- ``url_citation`` spans index the ``output_text`` they sit in (characters, checked against
  the text: a span outside it is dropped); ``include: ["web_search_call.action.sources"]``
  brings every page the searches returned, not only the cited ones.
- ``filters.allowed_domains`` takes at most 100 domains (we send at most 50) and there is no
  blocked list: excluding domains is refused before anything is sent.
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
    as_dict,
    as_list,
    count_of,
)
from websearch_core.text import one_line


class OpenAIProvider(GroundedProvider):
    name = "openai"
    key_setting = "openai_api_key"
    base_url_setting = "openai_base_url"
    model_setting = "openai_model"
    default_base_url = "https://api.openai.com"
    default_model = "gpt-5-mini"
    capabilities: ClassVar = {
        "include_domains": Support.NATIVE,  # filters.allowed_domains, at most 100
        "exclude_domains": Support.UNSUPPORTED,  # the tool has no blocked list
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
                searches += action.get("type", "search") == "search"
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
                    for note in as_list(part.get("annotations")):
                        note = as_dict(note)
                        start, end = note.get("start_index"), note.get("end_index")
                        if note.get("type") != "url_citation" or not (
                            isinstance(start, int)
                            and isinstance(end, int)
                            and 0 <= start < end <= len(text)
                        ):
                            continue
                        citations.cite(
                            length + start,
                            length + end,
                            note.get("url"),
                            note.get("title"),
                            text[start:end],
                        )
                    parts.append(text)
                    length += len(text)
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
        )

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        # A 429 that says the account's credit is spent will not pass by waiting.
        if response.status_code == 429 and "insufficient_quota" in response.text:
            return RateLimitedError(self.name, None, quota=True)
        return None
