"""Mojeek Search API: one GET against Mojeek's own index.

Docs: https://www.mojeek.com/support/api/search/request_parameters.html

Its key travels as the ``api_key`` query parameter, the one provider here whose request URL
holds a secret. So the URL is never put in an error (errors are built from statuses), the
key is one of the session's redacted secrets (httpx's own request log line included, see
``secrets.redact_library_logs``), and cassettes drop the parameter before they are written.
"""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

import httpx

from websearch_core.errors import (
    AuthenticationError,
    ProviderError,
    ProviderUnavailableError,
    RateLimitedError,
)
from websearch_core.models import SearchRequest
from websearch_core.providers.base import KeyedHttpProvider, ProviderAnswer, Support, ranked
from websearch_core.text import one_line

_WINDOW = {"day": 1, "week": 7, "month": 31, "year": 366}


def _day(day: dt.date) -> str:
    return day.strftime("%Y%m%d")


class MojeekProvider(KeyedHttpProvider):
    name = "mojeek"
    key_setting = "mojeek_api_key"
    base_url_setting = "mojeek_base_url"
    paid = True  # the vendor bills each search
    blends = True
    default_base_url = "https://api.mojeek.com"
    capabilities: ClassVar = {
        "include_domains": Support.QUERY_OPERATOR,  # site:, as its docs allow in the query
        "exclude_domains": Support.UNSUPPORTED,  # no documented way to leave a site out
        "freshness": Support.NATIVE,  # since=YYYYMMDD
        "date_range": Support.NATIVE,  # since, and before (exclusive)
        "include_answer": Support.UNSUPPORTED,
        "country": Support.NATIVE,  # rb, region bias
        "language": Support.NATIVE,  # lb, language bias
        "safesearch": Support.UNSUPPORTED,
        "page": Support.NATIVE,  # s, the first result's number
    }

    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        params: dict[str, str | int] = {
            "q": query,
            "fmt": "json",
            "t": request.count,
            "api_key": self._api_key.get_secret_value(),
        }
        if request.page > 1:
            params["s"] = (request.page - 1) * request.count + 1
        today = dt.date.today()
        if request.freshness:
            params["since"] = _day(today - dt.timedelta(days=_WINDOW[request.freshness]))
        if request.date_from:
            params["since"] = _day(request.date_from)
        if request.date_to:
            params["before"] = _day(request.date_to + dt.timedelta(days=1))
        if request.country:
            params["rb"] = request.country.upper()
        if request.language:
            params["lb"] = request.language.upper()
        return self._endpoint.request(
            "GET", "/search", params=params, headers={"Accept": "application/json"}
        )

    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        data = self.read_json(response)
        body = data.get("response")
        status = body.get("status") if isinstance(body, dict) else None
        if isinstance(status, str) and status.strip().upper() != "OK":
            raise self._in_band_error(status, response.status_code)
        items = body.get("results") if isinstance(body, dict) else None
        rows = (
            (item.get("title"), item.get("url"), item.get("desc"), item.get("date"), None)
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict)
        )
        return ProviderAnswer(results=ranked(rows)[: request.count])

    def _in_band_error(self, status: str, http_status: int) -> ProviderError:
        """Mojeek reports failures inside a 200: ``"ERROR: Daily Limit Reached"`` and the like."""
        said = status.lower()
        if "limit" in said:
            return RateLimitedError(self.name, None, quota=True)
        if "key" in said or "auth" in said:
            return AuthenticationError(self.name, http_status)
        return ProviderUnavailableError(self.name, f"it reported {one_line(status)[:60]!r}")
