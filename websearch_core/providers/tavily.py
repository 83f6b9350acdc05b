"""Tavily: one POST built for agents, the key as a Bearer token.

Docs: https://docs.tavily.com/documentation/api-reference/endpoint/search
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from websearch_core.errors import ProviderError, RateLimitedError
from websearch_core.models import SearchRequest
from websearch_core.providers.base import KeyedHttpProvider, ProviderAnswer, Support, plain, ranked

# 432/433 are Tavily's "plan / pay-as-you-go limit reached": waiting will not help.
_QUOTA_STATUSES = (432, 433)


class TavilyProvider(KeyedHttpProvider):
    name = "tavily"
    key_setting = "tavily_api_key"
    base_url_setting = "tavily_base_url"
    paid = True  # the vendor bills each search
    blends = True
    default_base_url = "https://api.tavily.com"
    capabilities: ClassVar = {
        "include_domains": Support.NATIVE,
        "exclude_domains": Support.NATIVE,
        "freshness": Support.NATIVE,
        "date_range": Support.NATIVE,
        "include_answer": Support.NATIVE,
        "country": Support.UNSUPPORTED,  # takes full country names only, and only for "general"
        "language": Support.UNSUPPORTED,
        "safesearch": Support.UNSUPPORTED,
        "page": Support.UNSUPPORTED,
    }

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        body: dict[str, Any] = {
            "query": query,
            "max_results": request.count,
            "search_depth": "basic",
            "topic": "general",
            "include_answer": request.include_answer,
        }
        if request.include_domains:
            body["include_domains"] = list(request.include_domains)
        if request.exclude_domains:
            body["exclude_domains"] = list(request.exclude_domains)
        if request.freshness:
            body["time_range"] = request.freshness
        if request.date_from:
            body["start_date"] = request.date_from.isoformat()
        if request.date_to:
            body["end_date"] = request.date_to.isoformat()
        return self._endpoint.request(
            "POST",
            "/search",
            json=body,
            headers={
                "Accept": "application/json",
                "Authorization": f"Bearer {self._api_key.get_secret_value()}",
            },
        )

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        items = data.get("results")
        rows = (
            (
                item.get("title"),
                item.get("url"),
                item.get("content"),
                item.get("published_date"),
                None,
            )
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict)
        )
        answer = plain(data.get("answer")) if request.include_answer else ""
        return ProviderAnswer(results=ranked(rows)[: request.count], answer=answer or None)

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        if response.status_code in _QUOTA_STATUSES:
            return RateLimitedError(self.name, None, quota=True)
        return None
