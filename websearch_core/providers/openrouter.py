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
- Native OpenAI search (the default model) is documented to pass OpenAI's spans on (no
  public recording shows it); those cover the link the model writes after a sentence
  (``… point. ([site.org](https://…))``):
  the link is taken out of the answer, its span moved onto the sentence, and that sentence
  is the snippet. Exa's spans are all 0/0 (a source list): its page ``content`` is.
- A billed search can come back with no annotations at all (the model wrote a bare URL): a
  ``blind`` outcome says it searched and returned no sources, never a calm "0 results".
- ``usage.cost`` is what the call cost in US dollars, the search fee included (Exa's adds
  $0.007 over ``cost_details.upstream_inference_cost``): it becomes ``Usage.cost_usd``.
- ``max_results`` and ``max_uses`` are honoured by the engines OpenRouter runs itself (Exa,
  for a model without native search) and documented as ignored by native OpenAI search,
  where nothing sent caps the searches: the model chooses (within its token cap).
- The queries the model ran are not in the answer (no tool call, no query field in any
  recorded response): ``searched`` stays empty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from websearch_core.errors import (
    AuthenticationError,
    ProviderError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
)
from websearch_core.models import EngineOutcome, SearchRequest, Usage
from websearch_core.providers.anthropic import MAX_SEARCHES
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
        # Both are honoured by the engines OpenRouter runs itself (Exa, for a model without
        # native search, bills per result) and documented as ignored with native provider
        # search (max_uses is forwarded to Anthropic's only). The engine is OpenRouter's
        # choice ("auto", by model), so both are sent: where ignored, they cost nothing.
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
        notes = [
            note
            for note in (_Note.of(as_dict(a), text) for a in as_list(message.get("annotations")))
            if note is not None
        ]
        # Native OpenAI's inline links out of the answer, their spans onto their sentences.
        text, moved = unlinked(text, [Span(n.start, n.end, n.url, n) for n in notes if n.spans])
        citations = Citations()
        for span, sentence in moved:
            note = span.title
            assert isinstance(note, _Note)
            claim = plain_claim(sentence)
            snippet = (claim or note.content) if note.link else (note.content or claim)
            citations.cite(span.start, span.end, note.url, note.title, snippet)
        for note in notes:  # every source counts, with a span or (Exa's 0/0) without
            citations.cite(0, 0, note.url, note.title, note.content)
        usage = as_dict(data.get("usage"))
        searches = count_of(
            as_dict(usage.get("server_tool_use_details")).get("web_search_requests")
        )
        if not searches and not notes:
            raise self.not_grounded()
        outcomes = []
        if searches and not citations.cited:  # billed, and not one page to show for it
            times = "once" if searches == 1 else f"{searches} times"
            outcomes.append(
                EngineOutcome(
                    engine=f"{self.name} web_search",
                    status="blind",
                    error=f"searched {times} and returned no sources",
                )
            )
        return citations.answer(
            request,
            text,
            usage=Usage(
                searches=searches if searches is not None else 1,
                input_tokens=count_of(usage.get("prompt_tokens")),
                output_tokens=count_of(usage.get("completion_tokens")),
                cost_usd=dollars(usage.get("cost")),
            ),
            truncated=choice.get("finish_reason") == "length",
            outcomes=outcomes,
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


def dollars(value: object) -> float | None:
    """OpenRouter's ``usage.cost`` (US dollars) if it is a finite amount, not negative."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    amount = float(value)
    return amount if math.isfinite(amount) and amount >= 0 else None


@dataclass(frozen=True)
class _Note:
    """One ``url_citation`` annotation; it rides through ``unlinked`` as its span's title."""

    url: str
    title: object
    #: The page's text OpenRouter adds (Exa's extract), or ``""``.
    content: str
    start: int
    end: int
    #: ``text[start:end]`` is the markdown link the model wrote (native OpenAI search).
    link: bool

    @property
    def spans(self) -> bool:
        return self.start < self.end

    @classmethod
    def of(cls, note: Mapping[str, Any], text: str) -> _Note | None:
        cited = as_dict(note.get("url_citation"))
        url = cited.get("url")
        if note.get("type") != "url_citation" or not isinstance(url, str):
            return None
        start, end = count_of(cited.get("start_index")), count_of(cited.get("end_index"))
        if start is None or end is None or not start < end <= len(text):
            start = end = 0  # the source still counts; the span does not (Exa's are all 0/0)
        content = cited.get("content")
        return cls(
            url,
            cited.get("title"),
            content if isinstance(content, str) else "",
            start,
            end,
            start < end and _is_link(text[start:end]),
        )


def _is_link(piece: str) -> bool:
    """Whether ``piece`` is wholly an inline link (``([site.org](https://…))``): ``unlinked``
    takes such a span out, leaving nothing, and keeps any other text as it is."""
    return not unlinked(piece, [Span(0, len(piece), None, None)])[0]
