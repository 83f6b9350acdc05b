"""SearXNG (and the older searx): a self-hosted metasearch, no key, the operator's base URL.

Reads both JSON shapes: current SearXNG (answers are objects, no ``number_of_results``) and
older searx (answers are strings). Each engine behind it is reported as an outcome, because a
metasearch whose engines fail soft looks exactly like a calm one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

import httpx

from websearch_core.config import Settings, how_to_set
from websearch_core.errors import ProviderError, ProviderResponseError
from websearch_core.models import EngineOutcome, SearchRequest
from websearch_core.providers.base import (
    Endpoint,
    HttpProvider,
    ProviderAnswer,
    Support,
    is_web_url,
    plain,
    ranked,
)

_SAFESEARCH = {"off": 0, "moderate": 1, "strict": 2}
#: Suggested queries kept from an instance's answer: a few lines, never a page of text.
MAX_SUGGESTIONS = 5
MAX_SUGGESTION_CHARS = 120


class SearxngProvider(HttpProvider):
    name = "searxng"
    enabled_by = "searxng_url"
    blends = True  # the operator's own instance: no fee
    capabilities: ClassVar = {
        "include_domains": Support.QUERY_OPERATOR,
        "exclude_domains": Support.QUERY_OPERATOR,
        "freshness": Support.NATIVE,
        "date_range": Support.UNSUPPORTED,
        "include_answer": Support.NATIVE,  # the instance's answerers; may be empty
        "country": Support.UNSUPPORTED,
        "language": Support.NATIVE,
        "safesearch": Support.NATIVE,
        "page": Support.NATIVE,
    }

    def __init__(self, base_url: str, api_key: str | None = None) -> None:
        self._endpoint = Endpoint.of(base_url)
        # A SearXNG-shaped server behind a key (``websearch serve``) reads it from X-API-Key.
        self._headers = {"Accept": "application/json"}
        if api_key:
            self._headers["X-API-Key"] = api_key

    @classmethod
    def missing(cls, settings: Settings) -> str | None:
        if settings.searxng_url:
            return None
        return how_to_set("searxng_url")

    @classmethod
    def from_settings(cls, settings: Settings) -> SearxngProvider:
        assert settings.searxng_url is not None
        key = settings.searxng_api_key
        return cls(settings.searxng_url.get_secret_value(), key.get_secret_value() if key else None)

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        params: dict[str, str | int] = {"q": query, "format": "json"}
        if request.page > 1:
            params["pageno"] = request.page
        if request.freshness:
            params["time_range"] = request.freshness
        if request.language:
            params["language"] = request.language
        if request.safesearch:
            params["safesearch"] = _SAFESEARCH[request.safesearch]
        return self._endpoint.request("GET", "/search", params=params, headers=self._headers)

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        items = [
            item
            for item in data.get("results") or []
            if isinstance(item, dict) and is_web_url(item.get("url"))
        ]
        rows = (
            (
                item.get("title"),
                item.get("url"),
                item.get("content"),
                item.get("publishedDate"),
                item.get("engine"),
            )
            for item in items
        )
        answer = _answers(data.get("answers")) if request.include_answer else ""
        return ProviderAnswer(
            results=ranked(rows)[: request.count],
            answer=answer or None,
            outcomes=_outcomes(items, data.get("unresponsive_engines")),
            suggestions=suggestions(data.get("suggestions")),
        )

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        if response.status_code == 403:
            return ProviderResponseError(
                self.name,
                "the SearXNG instance refuses JSON output (HTTP 403): its operator must add "
                "`json` to `search.formats` in settings.yml; retrying will not help",
                status=403,
            )
        return None


def suggestions(raw: Any) -> list[str]:
    """An instance's suggested queries: a few short lines of text, nothing else."""
    found: list[str] = []
    for entry in raw if isinstance(raw, list) else []:
        text = " ".join(plain(entry).split())[:MAX_SUGGESTION_CHARS]
        if text and text not in found:
            found.append(text)
    return found[:MAX_SUGGESTIONS]


def _answers(raw: Any) -> str:
    """Old searx sends answers as strings, current SearXNG as objects with an ``answer``."""
    texts = []
    for entry in raw if isinstance(raw, list) else []:
        text = plain(entry.get("answer") if isinstance(entry, dict) else entry)
        if text and text not in texts:
            texts.append(text)
    return "\n".join(texts)


def _outcomes(items: list[dict[str, Any]], unresponsive: Any) -> list[EngineOutcome]:
    answered: Counter[str] = Counter()
    for item in items:
        engines = item.get("engines")
        for engine in engines if isinstance(engines, list) else [item.get("engine")]:
            if isinstance(engine, str):
                answered[engine] += 1
    outcomes = [EngineOutcome(engine=e, status="answered", results=n) for e, n in answered.items()]
    for entry in unresponsive if isinstance(unresponsive, list) else []:
        if isinstance(entry, list | tuple) and entry and isinstance(entry[0], str):
            reason = plain(entry[1]) if len(entry) > 1 else ""
            outcomes.append(EngineOutcome(engine=entry[0], status="down", error=reason or None))
    return outcomes
