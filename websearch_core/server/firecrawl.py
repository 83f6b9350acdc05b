"""The Firecrawl door: scrape and search request bodies in, Firecrawl's envelopes out (v1
and v2 shapes).

What each scrape request key does here:

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

Search (``parse_search``, ``search_success``): the session's own search (any provider, the
blend), then, when ``scrapeOptions.formats`` names any, each result's page scraped as above.

- honoured: ``query``; ``limit`` (default 5, capped at 10, said in the warning);
  ``timeout`` (milliseconds: the whole request's deadline for reading the pages, counted from
  its arrival; without it, the fetch timeout); ``scrapeOptions`` (the scrape keys above but
  ``url``; no ``formats``: no page is read); ``tbs`` (``qdr:d|w|m|y`` as freshness, ``qdr:h``
  as the past day, ``cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY`` as a date range); ``lang`` and
  ``country`` (a locale hint, ``en-us``; each engine follows it as it can);
  ``includeDomains``, ``excludeDomains``; ``sources`` (``web``; others are left out, said in
  the warning);
- accepted for bookkeeping, or because the service does it anyway: ``origin``,
  ``integration``, ``ignoreInvalidURLs`` (a URL the jail refuses carries its refusal in
  place), ``enterprise``, ``threatProtection``, ``toolDetail``;
- accepted with a warning that they have no effect: ``location``, ``filter``,
  ``highlights``, ``domainTools``;
- refused: ``categories``, and any other key.

v1's reply is ``{"success": true, "data": [result, …], "warning"?}``, v2's
``{"success": true, "data": {"web": [result, …]}, "warning"?}``; a result is ``url``,
``title``, ``description`` (v2: and ``position``), and, when pages were read, a scrape's
``markdown``/``html``/``rawHtml``/``links``/``metadata``. A page that could not be read keeps
its result, with ``metadata.statusCode`` 0 (403: refused by the jail) and ``metadata.error``
saying why, as Firecrawl says it (Firecrawl's v1 then drops results without markdown; here
every result is kept). The ``warning`` also names a blend's engines that failed and the
search's notes. A search that failed is ``success: false``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from websearch_core.errors import (
    FetchError,
    FetchTimeoutError,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
    URLRefusedError,
    WebSearchError,
)
from websearch_core.fetch.scrape import ScrapedPage, ScrapeFormat, scrape_options
from websearch_core.models import DEFAULT_COUNT, MAX_COUNT, SearchResponse, said_number

__all__ = [
    "FORMATS",
    "ScrapeCall",
    "SearchCall",
    "document",
    "failure",
    "page_failure",
    "parse_body",
    "parse_search",
    "search_success",
    "success",
]

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

_SEARCH_HONOURED = frozenset(
    {
        "query",
        "limit",
        "timeout",
        "scrapeOptions",
        "tbs",
        "lang",
        "country",
        "includeDomains",
        "excludeDomains",
        "sources",
    }
)
_SEARCH_ACCEPTED = frozenset(
    {"origin", "integration", "ignoreInvalidURLs", "enterprise", "threatProtection", "toolDetail"}
)
#: Taken, but with no effect here: a value that asks for something is said in the warning.
_SEARCH_IGNORED = {
    "location": "location has no effect here: results are not geo-targeted (country is a hint)",
    "filter": "filter has no effect here",
    "highlights": "highlights are not served: ask for scrapeOptions.formats to read the pages",
    "domainTools": "domain tools are not served",
}
_SEARCH_REFUSED = {
    "categories": "search categories are not served: name the sites in includeDomains",
}
_SEARCH_KEYS = (
    _SEARCH_HONOURED | _SEARCH_ACCEPTED | frozenset(_SEARCH_IGNORED) | frozenset(_SEARCH_REFUSED)
)
#: A search's ``scrapeOptions``: a scrape's keys but its ``url``.
_SCRAPE_OPTION_KEYS = (_HONOURED - {"url"}) | _ACCEPTED | frozenset(_REFUSED)
#: Google's ``tbs=qdr:`` units → the core's freshness (an hour is served as the past day).
_QDR = {"h": "day", "d": "day", "w": "week", "m": "month", "y": "year"}


class ScrapeCall:
    """One parsed scrape request: ``WebSearch.scrape`` arguments and a warning, if any."""

    def __init__(self, url: str, arguments: dict[str, Any], warning: str | None) -> None:
        self.url = url
        self.arguments = arguments
        self.warning = warning


class SearchCall:
    """One parsed search request: ``WebSearch.search`` arguments; ``WebSearch.scrape``
    arguments for each result's page (``None``: no page is read); the request's deadline for
    reading them, in seconds, if it gave one; and what the reply must say was not honoured."""

    def __init__(
        self,
        arguments: dict[str, Any],
        scrape: dict[str, Any] | None,
        timeout_s: float | None,
        warnings: list[str],
    ) -> None:
        self.arguments = arguments
        self.scrape = scrape
        self.timeout_s = timeout_s
        self.warnings = warnings


def _strings(body: dict[str, Any], key: str, where: str = "") -> list[str]:
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidRequestError(f"{where}{key} must be a list of strings (CSS selectors)")
    return value


def _formats(raw: object, where: str = "", *, default: list[ScrapeFormat]) -> list[ScrapeFormat]:
    """The formats asked for; a search may ask for none (then no page is read)."""
    if raw is None:
        return default
    if not isinstance(raw, list) or (not raw and default):
        raise InvalidRequestError(f"{where}formats must be a non-empty list, such as ['markdown']")
    formats: list[ScrapeFormat] = []
    for entry in raw:
        name = entry.get("type") if isinstance(entry, dict) else entry
        if not isinstance(name, str):
            raise InvalidRequestError(
                f"{f'each of {where}formats' if where else 'each format'} is a name such as "
                "'markdown', or an object such as {'type': 'markdown'}"
            )
        if name not in FORMATS:
            raise InvalidRequestError(
                f"format {name[:40]!r} is not served here: ask for {', '.join(FORMATS)}"
            )
        formats.append(FORMATS[name])
    return formats


def _json_object(raw: bytes, example: str) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise InvalidRequestError(
            f"the body is not JSON: send a JSON object such as {example}"
        ) from None
    if not isinstance(body, dict):
        raise InvalidRequestError(f"the body must be a JSON object such as {example}")
    try:  # a lone \ud800 escape is JSON, but no text: nothing could be said back in UTF-8
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        raise InvalidRequestError(
            "the body holds text that is not Unicode (a lone surrogate escape such as "
            "\\ud800): send the text as UTF-8"
        ) from None
    return body


def _known(body: dict[str, Any], known: frozenset[str], where: str = "") -> None:
    unknown = sorted(str(key) for key in set(body) - known)
    if unknown:
        listed = ", ".join(f"{where}{key}" for key in unknown)
        raise InvalidRequestError(f"unrecognized keys in body: {listed[:200]}")


def _timeout_ms(value: object, where: str = "") -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise InvalidRequestError(f"{where}timeout must be a whole number of milliseconds above 0")
    return None if value is None else min(value, _LONGEST_TIMEOUT_MS)


def _scrape_arguments(
    body: dict[str, Any],
    where: str,
    *,
    default_timeout_ms: int | None,
    default_formats: list[ScrapeFormat],
) -> tuple[dict[str, Any], str | None]:
    """A scrape's options (a scrape body, or a search's ``scrapeOptions``) as
    ``WebSearch.scrape`` arguments, and the warning its reply must carry, if any."""
    for key, why in _REFUSED.items():
        if body.get(key):
            raise InvalidRequestError(f"{where}{key} is not supported: {why}")
    if body.get("mobile") not in (None, False):
        raise InvalidRequestError(
            f"{where}mobile is not supported: pages are read as a desktop does"
        )
    only_main = body.get("onlyMainContent", True)
    if not isinstance(only_main, bool):
        raise InvalidRequestError(f"{where}onlyMainContent must be true or false")
    timeout = _timeout_ms(body.get("timeout", default_timeout_ms), where)
    warning = (
        "waitFor has no effect here: pages are read without running their scripts"
        if body.get("waitFor")
        else None
    )
    arguments = {
        "formats": _formats(body.get("formats"), where, default=default_formats),
        "main_content": only_main,
        "include_tags": _strings(body, "includeTags", where),
        "exclude_tags": _strings(body, "excludeTags", where),
        "deadline_s": timeout / 1000 if timeout is not None else None,
    }
    return arguments, warning


def parse_body(raw: bytes, *, default_timeout_ms: int | None) -> ScrapeCall:
    """A scrape request from its JSON body; ``InvalidRequestError`` says what to fix."""
    body = _json_object(raw, '{"url": "https://..."}')
    _known(body, _HONOURED | _ACCEPTED | frozenset(_REFUSED))
    arguments, warning = _scrape_arguments(
        body, "", default_timeout_ms=default_timeout_ms, default_formats=["markdown"]
    )
    url = body.get("url")
    if not isinstance(url, str) or not url.strip():
        raise InvalidRequestError("url is missing: give the page's address as url")
    url = url.strip()
    if "://" not in url:
        url = f"http://{url}"
    return ScrapeCall(url, arguments, warning)


# -- search -----------------------------------------------------------------------------------


def _code(name: str, value: object) -> str | None:
    """A two-letter code (``en``, ``us``), lower case; ``None`` for anything else."""
    if not isinstance(value, str):
        raise InvalidRequestError(f"{name} must be a two-letter code such as 'en' or 'us'")
    code = value.strip().lower()
    return code if len(code) == 2 and code.isascii() and code.isalpha() else None


def _locale(body: dict[str, Any], warnings: list[str]) -> str | None:
    """``lang`` and ``country`` as a locale hint; Firecrawl's language is English unless
    ``lang`` says otherwise."""
    codes: dict[str, str] = {}
    for name in ("lang", "country"):
        if body.get(name) is None:
            continue
        code = _code(name, body[name])
        if code is None:
            warnings.append(f"{name} {str(body[name])[:40]!r} is not a two-letter code: ignored")
        else:
            codes[name] = code
    if "country" in codes:
        return f"{codes.get('lang', 'en')}-{codes['country']}"
    return codes.get("lang")


def _us_date(name: str, text: str) -> str:
    month, _, rest = text.partition("/")
    day, _, year = rest.partition("/")
    try:
        return dt.date(int(year), int(month), int(day)).isoformat()
    except (ValueError, OverflowError):
        raise InvalidRequestError(
            f"tbs {name} must be a date such as 1/31/2026 (month/day/year)"
        ) from None


def _tbs(value: object, warnings: list[str]) -> dict[str, str]:
    """Google's time filter as the core's ``freshness`` or date range."""
    if value is None or value == "":
        return {}
    if not isinstance(value, str):
        raise InvalidRequestError("tbs must be text such as 'qdr:w' (the past week)")
    parts = [part.strip().partition(":") for part in value.split(",") if part.strip()]
    given = {key: text for key, _, text in parts}
    options: dict[str, str] = {}
    if "qdr" in given:
        unit = given.pop("qdr")
        if unit in _QDR:
            options["freshness"] = _QDR[unit]
            if unit == "h":
                warnings.append("tbs qdr:h is served as the past day")
        else:
            warnings.append(f"tbs qdr:{unit[:20]} has no effect here: ask for qdr:d, w, m or y")
    if given.pop("cdr", None) == "1":
        for key, option in (("cd_min", "date_from"), ("cd_max", "date_to")):
            if key in given:
                options[option] = _us_date(key, given.pop(key))
    if given:
        warnings.append(f"tbs {', '.join(sorted(given))[:80]} has no effect here")
    return options


def _sources(value: object, warnings: list[str]) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise InvalidRequestError("sources must be a list, such as ['web']")
    kinds: list[str] = []
    for entry in value:
        kind = entry.get("type") if isinstance(entry, dict) else entry
        if not isinstance(kind, str):
            raise InvalidRequestError(
                "each source is a name such as 'web', or an object such as {'type': 'web'}"
            )
        kinds.append(kind)
    if kinds and "web" not in kinds:
        raise InvalidRequestError("only web results are served here: ask for sources ['web']")
    others = sorted(set(kinds) - {"web"})
    if others:
        warnings.append(f"only web results are served: {', '.join(others)[:80]} left out")


def parse_search(raw: bytes) -> SearchCall:
    """A search request from its JSON body; ``InvalidRequestError`` says what to fix."""
    body = _json_object(raw, '{"query": "..."}')
    _known(body, _SEARCH_KEYS)
    for key, why in _SEARCH_REFUSED.items():
        if body.get(key):
            raise InvalidRequestError(f"{key} is not supported: {why}")
    warnings = [why for key, why in _SEARCH_IGNORED.items() if body.get(key)]
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidRequestError("query is missing: give the words to search for as query")
    limit = body.get("limit")
    if limit is None:
        limit = DEFAULT_COUNT
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidRequestError("limit must be a whole number of results, at least 1")
    if limit > MAX_COUNT:
        warnings.append(f"limit capped at {MAX_COUNT} (asked for {said_number(limit)})")
        limit = MAX_COUNT
    arguments: dict[str, Any] = {"query": query, "count": limit, **_tbs(body.get("tbs"), warnings)}
    locale = _locale(body, warnings)
    if locale:
        arguments["locale"] = locale
    for key, option in (
        ("includeDomains", "include_domains"),
        ("excludeDomains", "exclude_domains"),
    ):
        if body.get(key) is not None:
            arguments[option] = body[key]
    _sources(body.get("sources"), warnings)
    timeout = _timeout_ms(body.get("timeout"))
    options = body.get("scrapeOptions")
    if options is not None and not isinstance(options, dict):
        raise InvalidRequestError(
            "scrapeOptions must be an object, such as {'formats': ['markdown']}"
        )
    scrape: dict[str, Any] | None = None
    if options:
        _known(options, _SCRAPE_OPTION_KEYS, "scrapeOptions.")
        scrape, warning = _scrape_arguments(
            options, "scrapeOptions.", default_timeout_ms=None, default_formats=[]
        )
        if not scrape["formats"]:
            scrape = None  # Firecrawl's default: the results alone, no page read
        else:
            scrape_options(**scrape)  # a selector that does not parse is refused here, once
            warnings.extend([warning] if warning else [])
    return SearchCall(arguments, scrape, None if timeout is None else timeout / 1000, warnings)


def page_failure(url: str, exc: WebSearchError) -> dict[str, Any]:
    """A result's page that could not be read, as Firecrawl's search says it: its status
    (0, or 403 for a URL refused) and why, in the result's ``metadata``."""
    status = 403 if isinstance(exc, URLRefusedError) else 0
    return {"sourceURL": url, "statusCode": status, "error": str(exc)}


def search_success(
    v1: bool,
    response: SearchResponse,
    pages: Sequence[ScrapedPage | WebSearchError] | None,
    warnings: Sequence[str],
) -> dict[str, Any]:
    """Firecrawl's search reply, v1's shape or v2's: each result, with its page when
    ``pages`` were read (one outcome per result, in order)."""
    results: list[dict[str, Any]] = []
    for index, result in enumerate(response.results):
        item: dict[str, Any] = {
            "url": result.url,
            "title": result.title,
            "description": result.snippet,
        }
        if not v1:
            item["position"] = result.rank
        if pages is not None:
            outcome = pages[index]
            if isinstance(outcome, ScrapedPage):
                item.update(document(outcome, result.url, None))
            else:
                item["metadata"] = page_failure(result.url, outcome)
        results.append(item)
    said = list(warnings)
    down = [o for o in response.outcomes if o.status == "down"]
    if down:
        failed = ", ".join(f"{o.engine} ({o.error})" if o.error else o.engine for o in down)
        said.append(f"engines that failed: {failed}")
    said.extend(response.notes)
    if not results:
        said.append("No search results found")  # Firecrawl's words
    body: dict[str, Any] = {
        "success": True,
        "data": results if v1 else {"web": results},
    }
    if said:
        body["warning"] = "; ".join(said)
    return body


# -- replies ----------------------------------------------------------------------------------


def document(page: ScrapedPage, source_url: str, warning: str | None) -> dict[str, Any]:
    """One scraped page as Firecrawl's document: its formats, ``metadata`` and ``warning``."""
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
    return data


def success(page: ScrapedPage, source_url: str, warning: str | None) -> dict[str, Any]:
    return {"success": True, "data": document(page, source_url, warning)}


def failure(exc: WebSearchError) -> tuple[int, dict[str, Any]]:
    """Firecrawl's error envelope and status for a failed scrape or search."""
    if isinstance(exc, InvalidRequestError):
        status, code = 200, "BAD_REQUEST"  # clients read success, not the status line
    elif isinstance(exc, URLRefusedError):
        status, code = 403, "URL_REFUSED"
    elif isinstance(exc, FetchTimeoutError):
        status, code = 408, "SCRAPE_TIMEOUT"
    elif isinstance(exc, FetchError):
        status, code = 502, "SCRAPE_FETCH_FAILED"
    elif isinstance(exc, RateLimitedError):
        status, code = 429, "RATE_LIMITED"
    elif isinstance(exc, ProviderError):
        status, code = 502, "SEARCH_FAILED"  # the upstream's failure, as a fetch's is
    else:
        status, code = 500, "UNKNOWN_ERROR"
    return status, {"success": False, "code": code, "error": str(exc)}
