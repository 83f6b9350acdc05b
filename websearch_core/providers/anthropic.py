"""Anthropic: the Messages API with the ``web_search`` server tool.

Docs: https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool

The vendor traps, and what is done about each:

- A failed search is a ``web_search_tool_result_error`` object inside an HTTP 200, not a list
  of results: every ``error_code`` maps to a typed error when no search succeeded, and to a
  ``down`` outcome beside the results when another one did, except ``max_uses_exceeded``:
  that is our own cap on searches per call (``max_uses``) refusing one more, not the engine
  failing, so beside good results it is a note. An empty list is "no results".
- The queries the model ran are each ``server_tool_use`` (``name: "web_search"``)'s
  ``input.query``, in order across continued turns: ``searched``.
- ``stop_reason: "refusal"``: the model declined; what text came is not passed off as a
  complete answer (cut off, with a note). ``"model_context_window_exceeded"`` (the search
  results filled the model's context) and ``"max_tokens"`` are cut off.
- ``stop_reason: "pause_turn"``: the turn is sent back unchanged (``encrypted_content`` and
  all) and continued, at most ``MAX_CONTINUATIONS`` times, summing text, citations and usage;
  still paused after that, the answer is marked cut off, never passed off as complete.
- Citations carry no offsets: text blocks are split at citation boundaries, so a block's span
  in the joined answer is computed while joining, in characters.
- Between its searches the model writes what it will search next ("Let me search for more
  specific ...", one uncited text block before each ``server_tool_use``, no space after it):
  that is not the answer, and is left out of it, as is the text before the first results.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from websearch_core.errors import (
    InvalidRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
    WebSearchError,
)
from websearch_core.models import EngineOutcome, SearchRequest, Usage
from websearch_core.providers.base import Call, Exchange, ProviderAnswer, Support
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

_API_VERSION = "2023-06-01"
#: The basic tool version: eligible for zero data retention, needs no code-execution tool.
TOOL_TYPE = "web_search_20250305"
#: Searches the model may run per API call (``max_uses``; each billed by Anthropic). A
#: paused turn that is continued is another call, so at most this many again.
MAX_SEARCHES = 3
#: How many times a paused turn is continued before the answer is reported cut off.
MAX_CONTINUATIONS = 3
#: ``stop_reason`` values of an answer that did not reach its end: still paused after the
#: last continuation, the token limit, the context window filled, the model declining.
CUT_OFF = frozenset({"pause_turn", "max_tokens", "model_context_window_exceeded", "refusal"})


class AnthropicProvider(GroundedProvider):
    name = "anthropic"
    key_setting = "anthropic_api_key"
    base_url_setting = "anthropic_base_url"
    model_setting = "anthropic_model"
    default_base_url = "https://api.anthropic.com"
    default_model = "claude-haiku-4-5"
    #: ``allowed_domains`` and ``blocked_domains`` together are a 400.
    exclusive_options: ClassVar = (frozenset({"include_domains", "exclude_domains"}),)
    capabilities: ClassVar = {
        "include_domains": Support.NATIVE,
        "exclude_domains": Support.NATIVE,
        "freshness": Support.UNSUPPORTED,  # no date filter; page_age is free text
        "date_range": Support.UNSUPPORTED,
        "include_answer": Support.NATIVE,
        "country": Support.NATIVE,  # user_location.country
        "language": Support.UNSUPPORTED,
        "safesearch": Support.UNSUPPORTED,
        "page": Support.UNSUPPORTED,
    }

    def _tool(self, request: SearchRequest) -> dict[str, Any]:
        tool: dict[str, Any] = {"type": TOOL_TYPE, "name": "web_search", "max_uses": MAX_SEARCHES}
        if request.include_domains:
            tool["allowed_domains"] = list(request.include_domains)
        if request.exclude_domains:
            tool["blocked_domains"] = list(request.exclude_domains)
        if request.country:
            tool["user_location"] = {"type": "approximate", "country": request.country.upper()}
        return tool

    def _messages_request(
        self, request: SearchRequest, messages: list[dict[str, Any]]
    ) -> httpx.Request:
        return self._endpoint.request(
            "POST",
            "/v1/messages",
            json={
                "model": self.model,
                "max_tokens": MAX_ANSWER_TOKENS,
                "system": INSTRUCTIONS,
                "messages": messages,
                "tools": [self._tool(request)],
            },
            headers={
                "Accept": "application/json",
                "anthropic-version": _API_VERSION,
                "x-api-key": self._api_key.get_secret_value(),
            },
        )

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        return self._messages_request(request, [{"role": "user", "content": query}])

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        return self._answer(request, self._content(data), [data])

    def exchange(self, request: SearchRequest, query: str) -> Exchange:
        question: dict[str, Any] = {"role": "user", "content": query}
        content: list[Any] = []
        turns: list[dict[str, Any]] = []
        for _ in range(1 + MAX_CONTINUATIONS):
            messages = [question]
            if content:  # the paused turn, exactly as it came back
                messages.append({"role": "assistant", "content": content})
            response = yield Call(self._messages_request(request, messages))
            assert isinstance(response, httpx.Response)
            data = self.read_json(response)
            turns.append(data)
            content = content + self._content(data)
            if data.get("stop_reason") != "pause_turn":
                break
        return self._answer(request, content, turns)

    def _content(self, data: dict[str, Any]) -> list[Any]:
        content = data.get("content")
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            raise self.malformed("no list of content blocks")
        return content

    def _answer(
        self, request: SearchRequest, content: list[Any], turns: list[dict[str, Any]]
    ) -> ProviderAnswer:
        citations = Citations()
        failures: list[str] = []
        queries: list[object] = []
        searched = answered = False
        parts: list[str] = []
        length = 0
        # The answer is the text after the first search's results, less the model announcing
        # its next search ("Let me search for more specific ..."): neither is the answer.
        first_result = next(
            (i for i, b in enumerate(content) if b.get("type") == "web_search_tool_result"),
            len(content),
        )
        announcing = _announcements(content)
        for index, block in enumerate(content):
            kind = block.get("type")
            if kind == "server_tool_use":
                searched = True
                if block.get("name") == "web_search":
                    queries.append(as_dict(block.get("input")).get("query"))
            elif kind == "web_search_tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    answered = True
                    for item in inner:
                        item = as_dict(item)
                        citations.saw(item.get("url"), item.get("title"), item.get("page_age"))
                elif as_dict(inner).get("type") == "web_search_tool_result_error":
                    failures.append(one_line(str(as_dict(inner).get("error_code")))[:40])
                else:
                    raise self.malformed(
                        "a web_search_tool_result that is neither results nor error"
                    )
            elif kind == "text" and index > first_result and index not in announcing:
                text = block.get("text")
                if not isinstance(text, str):
                    raise self.malformed("a text block without text")
                start, length = length, length + len(text)
                parts.append(text)
                for cited in as_list(block.get("citations")):
                    cited = as_dict(cited)
                    if cited.get("type") == "web_search_result_location":
                        citations.cite(
                            start,
                            length,
                            cited.get("url"),
                            cited.get("title"),
                            cited.get("cited_text"),
                        )
        last = turns[-1].get("stop_reason")
        if last == "refusal" and not answered:
            raise ProviderResponseError(
                self.name,
                f"{self.name}'s model declined to answer the query: rephrase it, or use "
                "another provider",
            )
        if failures and not answered:
            raise self._search_error(failures[0])
        if last == "pause_turn" and not answered:
            raise ProviderUnavailableError(
                self.name,
                f"its search was still paused after {MAX_CONTINUATIONS} continuations, with no "
                "results yet",
            )
        if not searched:
            raise self.not_grounded()
        outcomes = [
            EngineOutcome(engine=f"{self.name} web_search", status="down", error=code)
            for code in failures
            if code != "max_uses_exceeded"
        ]
        notes = []
        if last == "refusal":
            notes.append(f"{self.name}'s model declined to answer")
        if "max_uses_exceeded" in failures:
            notes.append(
                f"{self.name}'s model stopped searching at its cap of {MAX_SEARCHES} searches "
                "per call"
            )
        return citations.answer(
            request,
            "".join(parts),
            usage=self._usage(turns),
            truncated=isinstance(last, str) and last in CUT_OFF,
            outcomes=outcomes,
            searched=queries,
            notes=notes,
        )

    @staticmethod
    def _usage(turns: list[dict[str, Any]]) -> Usage:
        searches = 0
        tokens_in: int | None = None
        tokens_out: int | None = None
        for data in turns:
            usage = as_dict(data.get("usage"))
            tokens_in = add_counts(tokens_in, count_of(usage.get("input_tokens")))
            tokens_out = add_counts(tokens_out, count_of(usage.get("output_tokens")))
            tool_use = as_dict(usage.get("server_tool_use"))
            searches += count_of(tool_use.get("web_search_requests")) or 0
        return Usage(searches=searches, input_tokens=tokens_in, output_tokens=tokens_out)

    def _search_error(self, code: str) -> WebSearchError:
        """Each documented ``error_code`` of a failed search, as the error it is."""
        if code == "too_many_requests":
            return RateLimitedError(self.name, None)
        if code == "unavailable":
            return ProviderUnavailableError(self.name, "its web search is unavailable")
        if code == "query_too_long":
            return InvalidRequestError(
                f"{self.name}'s web search refused the query as too long: shorten it"
            )
        if code in ("invalid_tool_input", "invalid_input"):
            return InvalidRequestError(
                f"{self.name}'s web search refused its input ({code}): check the domain "
                "filters (bare domains such as 'docs.python.org', no wildcards)"
            )
        if code == "request_too_large":
            return InvalidRequestError(
                f"{self.name}'s web search refused the request as too large: use fewer domains"
            )
        if code == "max_uses_exceeded":
            return ProviderResponseError(
                self.name,
                f"{self.name}'s model used up its {MAX_SEARCHES} searches without finding "
                "anything: rephrase the query",
            )
        return ProviderResponseError(
            self.name, f"{self.name}'s web search failed ({code!r}): try another provider"
        )


def _announcements(content: list[Any]) -> set[int]:
    """The text blocks that only announce the model's next search: each run of text blocks
    up to a ``server_tool_use``, none of them citing a page ("Now let me search for ...")."""
    announcing: set[int] = set()
    run: list[int] = []
    cites = False
    for index, block in enumerate(content):
        kind = block.get("type")
        if kind == "text":
            run.append(index)
            cites = cites or bool(as_list(block.get("citations")))
            continue
        if kind == "server_tool_use" and not cites:
            announcing.update(run)
        run, cites = [], False
    return announcing
