"""OpenRouter: Chat Completions with the ``openrouter:web_search`` server tool.

Docs: https://openrouter.ai/docs/guides/features/server-tools/web-search (the older ``web``
plugin and ``:online`` suffix are deprecated there; the server tool serves every model).

The vendor traps, and what is done about each:

- Citations are ``message.annotations`` of type ``url_citation`` (nested ``url_citation``
  object: url, title, the page's ``content``, character ``start_index``/``end_index``).
- An error while the model runs arrives inside an HTTP 200: a top-level ``error`` object, or
  a choice with ``finish_reason: "error"`` and its own ``error``; both become typed errors by
  their ``code`` (429 rate limited, 402 credit spent, 401/403 bad key, 5xx/408 down).
- Allowed and excluded domains cannot be combined: refused together before sending.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from websearch_core.errors import (
    AuthenticationError,
    ProviderError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
)
from websearch_core.models import SearchRequest, Usage
from websearch_core.providers.anthropic import MAX_SEARCHES
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


class OpenRouterProvider(GroundedProvider):
    name = "openrouter"
    key_setting = "openrouter_api_key"
    base_url_setting = "openrouter_base_url"
    model_setting = "openrouter_model"
    default_base_url = "https://openrouter.ai/api"
    default_model = "openai/gpt-5-mini"
    exclusive_options: ClassVar = (frozenset({"include_domains", "exclude_domains"}),)
    capabilities: ClassVar = {
        "include_domains": Support.NATIVE,
        "exclude_domains": Support.NATIVE,
        "freshness": Support.UNSUPPORTED,
        "date_range": Support.UNSUPPORTED,
        "include_answer": Support.NATIVE,
        "country": Support.NATIVE,  # user_location
        "language": Support.UNSUPPORTED,
        "safesearch": Support.UNSUPPORTED,
        "page": Support.UNSUPPORTED,
    }

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        # max_results applies to the non-native engines (Exa bills per result).
        parameters: dict[str, Any] = {"max_results": request.count, "max_uses": MAX_SEARCHES}
        if request.include_domains:
            parameters["allowed_domains"] = list(request.include_domains)
        if request.exclude_domains:
            parameters["excluded_domains"] = list(request.exclude_domains)
        if request.country:
            parameters["user_location"] = {
                "type": "approximate",
                "country": request.country.upper(),
            }
        return self._endpoint.request(
            "POST",
            "/v1/chat/completions",
            json={
                "model": self.model,
                "messages": [
                    {"role": "system", "content": INSTRUCTIONS},
                    {"role": "user", "content": query},
                ],
                "tools": [{"type": "openrouter:web_search", "parameters": parameters}],
                "max_tokens": 4 * MAX_ANSWER_TOKENS,
            },
            headers={
                "Accept": "application/json",
                "Authorization": f"Bearer {self._api_key.get_secret_value()}",
            },
        )

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        if data.get("error") is not None:
            raise self._in_band_error(data["error"])
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.malformed("no choices")
        choice = choices[0]
        if choice.get("finish_reason") == "error" or choice.get("error") is not None:
            raise self._in_band_error(choice.get("error"))
        message = as_dict(choice.get("message"))
        text = message.get("content")
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise self.malformed("message content that is not text")
        citations = Citations()
        annotations = [as_dict(a) for a in as_list(message.get("annotations"))]
        for note in annotations:
            cited = as_dict(note.get("url_citation"))
            if note.get("type") != "url_citation" or not cited:
                continue
            start, end = cited.get("start_index"), cited.get("end_index")
            if not (isinstance(start, int) and isinstance(end, int) and start < end <= len(text)):
                start = end = 0  # the source still counts; the span does not
            citations.cite(start, end, cited.get("url"), cited.get("title"), cited.get("content"))
        usage = as_dict(data.get("usage"))
        searches = count_of(
            as_dict(usage.get("server_tool_use_details")).get("web_search_requests")
        )
        if not searches and not annotations:
            raise self.not_grounded()
        return citations.answer(
            request,
            text,
            usage=Usage(
                searches=searches if searches is not None else 1,
                input_tokens=count_of(usage.get("prompt_tokens")),
                output_tokens=count_of(usage.get("completion_tokens")),
            ),
            truncated=choice.get("finish_reason") == "length",
        )

    def _in_band_error(self, error: object) -> ProviderError:
        """An error reported inside a 200, by its HTTP-like ``code``."""
        code = as_dict(error).get("code")
        if code == 429:
            return RateLimitedError(self.name, None)
        if code == 402:
            return RateLimitedError(self.name, None, quota=True)
        if code in (401, 403):
            return AuthenticationError(self.name, code)
        if isinstance(code, int) and (code >= 500 or code == 408):
            return ProviderUnavailableError(self.name, f"the model failed (code {code})")
        said = "no code given" if code is None else f"code {one_line(str(code))[:40]}"
        return ProviderResponseError(
            self.name,
            f"{self.name} reported an error while its model ran ({said}): try again or use "
            "another provider",
        )

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        if response.status_code == 402:  # the account's credit is spent
            return RateLimitedError(self.name, None, quota=True)
        return None
