"""The Firecrawl door: a scrape request body in, Firecrawl's envelope out (v1 and v2 shapes).

What each request key does here:

- honoured: ``url`` (``http://`` is put in front of a URL without a scheme, as Firecrawl
  does), ``formats`` (``markdown``, ``html``, ``rawHtml``, ``links``; v2's ``{"type": …}``
  objects as well as v1's strings), ``onlyMainContent``, ``includeTags``, ``excludeTags``,
  ``timeout`` (milliseconds; it can shorten the fetch's deadline, not lengthen it);
- accepted because they ask for what happens anyway, or only for bookkeeping: ``origin``,
  ``integration``, ``storeInCache``, ``maxAge``, ``zeroDataRetention``, ``removeBase64Images``,
  ``blockAds``, ``fastMode``, ``parsePDF``/``parsers``, ``proxy``, ``skipTlsVerification``
  (certificates are always verified), ``mobile: false``, ``waitFor`` (no script runs, so
  there is nothing to wait for: the reply's ``warning`` says so);
- refused (``success: false``, code ``BAD_REQUEST``): any other format (screenshots, JSON
  extraction, summaries, change tracking), ``actions``, ``headers``, ``location``,
  ``mobile: true``, and any key Firecrawl itself would reject as unknown.

A target's own error status is a success, with ``metadata.statusCode`` saying it (Firecrawl
does this); a refused URL, a timeout or a failed connection is ``success: false`` with a
Firecrawl error code; a body that is not a scrape request is ``200 {"success": false}``
because Firecrawl's clients read ``success`` rather than the status line. Whatever the reply
could not give as asked (``waitFor``, a page cut at the read ceiling) is said in
``data.warning``, where each Firecrawl SDK reads it (the document's ``warning``).
"""

from __future__ import annotations

import json
from typing import Any

from websearch_core.errors import (
    FetchError,
    FetchTimeoutError,
    InvalidRequestError,
    URLRefusedError,
    WebSearchError,
)
from websearch_core.fetch.scrape import ScrapedPage, ScrapeFormat

__all__ = ["FORMATS", "ScrapeCall", "failure", "parse_body", "success"]

#: Firecrawl's format names → the core's.
FORMATS: dict[str, ScrapeFormat] = {
    "markdown": "markdown",
    "html": "html",
    "rawHtml": "raw_html",
    "links": "links",
}
_ACCEPTED = frozenset(
    {
        "origin",
        "integration",
        "storeInCache",
        "maxAge",
        "zeroDataRetention",
        "removeBase64Images",
        "blockAds",
        "fastMode",
        "parsePDF",
        "parsers",
        "proxy",
        "skipTlsVerification",
        "waitFor",
        "mobile",  # false only: see below
    }
)
_HONOURED = frozenset(
    {"url", "formats", "onlyMainContent", "includeTags", "excludeTags", "timeout"}
)
#: A longer timeout asks for nothing more: the session's fetch deadline is the ceiling.
_LONGEST_TIMEOUT_MS = 3_600_000
_REFUSED = {
    "actions": "browser actions need a browser; this service reads pages without one",
    "headers": "the service sends its own request headers",
    "location": "pages are fetched from the service's own location",
    "jsonOptions": "JSON extraction is not served",
    "extract": "JSON extraction is not served",
    "changeTrackingOptions": "change tracking is not served",
}


class ScrapeCall:
    """One parsed scrape request: ``WebSearch.scrape`` arguments and a warning, if any."""

    def __init__(self, url: str, arguments: dict[str, Any], warning: str | None) -> None:
        self.url = url
        self.arguments = arguments
        self.warning = warning


def _strings(body: dict[str, Any], key: str) -> list[str]:
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidRequestError(f"{key} must be a list of strings (CSS selectors)")
    return value


def _formats(raw: object) -> list[ScrapeFormat]:
    if raw is None:
        return ["markdown"]
    if not isinstance(raw, list) or not raw:
        raise InvalidRequestError("formats must be a non-empty list, such as ['markdown']")
    formats: list[ScrapeFormat] = []
    for entry in raw:
        name = entry.get("type") if isinstance(entry, dict) else entry
        if not isinstance(name, str):
            raise InvalidRequestError(
                "each format is a name such as 'markdown', or an object such as "
                "{'type': 'markdown'}"
            )
        if name not in FORMATS:
            raise InvalidRequestError(
                f"format {name[:40]!r} is not served here: ask for {', '.join(FORMATS)}"
            )
        formats.append(FORMATS[name])
    return formats


def parse_body(raw: bytes, *, default_timeout_ms: int | None) -> ScrapeCall:
    """A scrape request from its JSON body; ``InvalidRequestError`` says what to fix."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise InvalidRequestError(
            'the body is not JSON: send a JSON object such as {"url": "https://..."}'
        ) from None
    if not isinstance(body, dict):
        raise InvalidRequestError("the body must be a JSON object with a url")
    unknown = sorted(set(body) - _HONOURED - _ACCEPTED - set(_REFUSED))
    if unknown:
        raise InvalidRequestError(f"unrecognized keys in body: {', '.join(unknown)[:200]}")
    for key, why in _REFUSED.items():
        if body.get(key):
            raise InvalidRequestError(f"{key} is not supported: {why}")
    if body.get("mobile") not in (None, False):
        raise InvalidRequestError("mobile is not supported: pages are read as a desktop does")
    url = body.get("url")
    if not isinstance(url, str) or not url.strip():
        raise InvalidRequestError("url is missing: give the page's address as url")
    url = url.strip()
    if "://" not in url:
        url = f"http://{url}"
    only_main = body.get("onlyMainContent", True)
    if not isinstance(only_main, bool):
        raise InvalidRequestError("onlyMainContent must be true or false")
    timeout = body.get("timeout", default_timeout_ms)
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0
    ):
        raise InvalidRequestError("timeout must be a whole number of milliseconds above 0")
    if timeout is not None:
        timeout = min(timeout, _LONGEST_TIMEOUT_MS)
    wait_for = body.get("waitFor")
    warning = (
        "waitFor has no effect here: pages are read without running their scripts"
        if wait_for
        else None
    )
    arguments = {
        "formats": _formats(body.get("formats")),
        "main_content": only_main,
        "include_tags": _strings(body, "includeTags"),
        "exclude_tags": _strings(body, "excludeTags"),
        "deadline_s": timeout / 1000 if timeout is not None else None,
    }
    return ScrapeCall(url, arguments, warning)


def success(page: ScrapedPage, source_url: str, warning: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "title": page.title,
        "description": page.description,
        "language": page.language,
        "sourceURL": source_url,
        "url": page.final_url,
        "statusCode": page.status,
        "contentType": page.content_type,
    }
    if page.status >= 400:
        metadata["error"] = page.reason or f"HTTP {page.status}"
    data: dict[str, Any] = {"metadata": metadata}
    for field, name in (("markdown", "markdown"), ("html", "html"), ("raw_html", "rawHtml")):
        value = getattr(page, field)
        if value is not None:
            data[name] = value
    if page.links is not None:
        data["links"] = page.links
    cut = (
        f"the page is longer than the service reads ({page.bytes_read:,} bytes): the rest "
        "is missing"
        if page.truncated
        else None
    )
    warnings = [text for text in (warning, page.warning, cut) if text]
    if warnings:
        data["warning"] = "; ".join(warnings)
    return {"success": True, "data": data}


def failure(exc: WebSearchError) -> tuple[int, dict[str, Any]]:
    """Firecrawl's error envelope and status for a failed scrape."""
    if isinstance(exc, InvalidRequestError):
        status, code = 200, "BAD_REQUEST"  # clients read success, not the status line
    elif isinstance(exc, URLRefusedError):
        status, code = 403, "URL_REFUSED"
    elif isinstance(exc, FetchTimeoutError):
        status, code = 408, "SCRAPE_TIMEOUT"
    elif isinstance(exc, FetchError):
        status, code = 502, "SCRAPE_FETCH_FAILED"
    else:
        status, code = 500, "UNKNOWN_ERROR"
    return status, {"success": False, "code": code, "error": str(exc)}
