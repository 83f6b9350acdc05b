"""Brave Search API: one GET, the key in ``X-Subscription-Token``.

Docs: https://api-dashboard.search.brave.com/app/documentation/web-search
"""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

import httpx

from websearch_core.errors import AuthenticationError, ProviderError
from websearch_core.models import SearchRequest
from websearch_core.providers.base import KeyedHttpProvider, ProviderAnswer, Support, ranked

_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
# Brave takes a date range only with both ends, so an open end is filled, never refused.
_EARLIEST = dt.date(1990, 1, 1)


class BraveProvider(KeyedHttpProvider):
    name = "brave"
    key_setting = "brave_api_key"
    base_url_setting = "brave_base_url"
    paid = True  # the vendor bills each search
    blends = True
    default_base_url = "https://api.search.brave.com"
    max_query_chars = 400  # Brave's documented limit (and at most 50 words)
    capabilities: ClassVar = {
        "include_domains": Support.QUERY_OPERATOR,
        "exclude_domains": Support.QUERY_OPERATOR,
        "freshness": Support.NATIVE,
        "date_range": Support.NATIVE,
        "include_answer": Support.UNSUPPORTED,  # the summarizer is a separate, paid API
        "country": Support.NATIVE,
        "language": Support.NATIVE,
        "safesearch": Support.NATIVE,
        "page": Support.NATIVE,
    }

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        params: dict[str, str | int] = {"q": query, "count": request.count}
        if request.page > 1:
            params["offset"] = request.page - 1  # Brave's offset counts pages, not results
        if request.freshness:
            params["freshness"] = _FRESHNESS[request.freshness]
        elif request.date_from or request.date_to:
            start = request.date_from or _EARLIEST
            end = request.date_to or dt.date.today()
            params["freshness"] = f"{start.isoformat()}to{end.isoformat()}"
        if request.safesearch:
            params["safesearch"] = request.safesearch
        if request.country:
            params["country"] = request.country.upper()
        if request.language:
            params["search_lang"] = request.language
        return self._endpoint.request(
            "GET",
            "/res/v1/web/search",
            params=params,
            headers={
                "Accept": "application/json",
                "X-Subscription-Token": self._api_key.get_secret_value(),
            },
        )

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        web = data.get("web")
        items = web.get("results") if isinstance(web, dict) else None
        rows = (
            (
                item.get("title"),
                item.get("url"),
                item.get("description"),
                item.get("page_age") or item.get("age"),
                None,
            )
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict)
        )
        return ProviderAnswer(results=ranked(rows)[: request.count])

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        # Brave answers a bad key with 422 and SUBSCRIPTION_TOKEN_INVALID, not 401.
        if response.status_code == 422 and "SUBSCRIPTION_TOKEN_INVALID" in response.text:
            return AuthenticationError(self.name, 422)
        return None
