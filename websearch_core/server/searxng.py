"""The SearXNG door: ``/search?format=json`` parameters in, SearXNG's JSON envelope out.

Parameters come from the query string and from a form body, the form winning (as SearXNG
reads them). Every parameter that changes what is searched is honoured or refused with a
400 that says what to change; parameters that only change how SearXNG's own web page looks
(``theme``, ``image_proxy`` …) change nothing here and are accepted.

- ``q`` (required), ``format`` (``json`` only), ``pageno`` (1 to 10).
- ``time_range``: ``day``/``week``/``month``/``year``; empty means none.
- ``language``: ``en`` is a language; ``en-US`` is a locale, honoured as its region (the
  country ``us``: engines such as ddgs pick the language with the region); ``all``, ``auto``
  or empty mean none.
- ``safesearch``: 0, 1, 2 (off, moderate, strict). ``engines``: a comma list of this
  service's engine names. ``categories``: empty or ``general`` (web results are all it has).

The envelope is SearXNG's at HEAD plus ``number_of_results``, which older clients read.
``unresponsive_engines`` lists each engine that was down or blind, with why: an empty
result list is then never mistaken for "nothing found".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from websearch_core.errors import InvalidRequestError
from websearch_core.models import MAX_COUNT, EngineOutcome, SearchResponse

__all__ = ["empty_envelope", "envelope", "search_arguments"]

_TIME_RANGES = ("day", "week", "month", "year")
_PAGES = frozenset(str(page) for page in range(1, 11))
_SAFESEARCH = {"0": "off", "1": "moderate", "2": "strict"}
_ANY_LANGUAGE = ("", "all", "auto")
_CATEGORIES = ("", "general")
#: SearXNG parameters that select what is searched in ways this service cannot: refused.
_REFUSED = {
    "timeout_limit": "the service's blend deadline is set by its operator",
    "enabled_engines": "name the engines in engines=",
    "disabled_engines": "name the engines to use in engines=",
    "enabled_categories": "only the general category is served",
    "disabled_categories": "only the general category is served",
}


def search_arguments(params: Mapping[str, str]) -> dict[str, Any]:
    """``WebSearch.search`` keyword arguments for SearXNG parameters; raises
    ``InvalidRequestError`` naming the parameter to change."""
    fmt = params.get("format", "").strip().lower()
    if fmt != "json":
        raise InvalidRequestError(
            f"format={fmt or '(none: html)'} is not served: add format=json (this service "
            "answers SearXNG's JSON format only)"
        )
    for name, why in _REFUSED.items():
        if params.get(name, "").strip():
            raise InvalidRequestError(f"{name} is not supported here: {why}")
    query = params.get("q", "").strip()
    if not query:
        raise InvalidRequestError("q is missing: give the words to search for, as q=...")
    arguments: dict[str, Any] = {"count": MAX_COUNT}
    pageno = params.get("pageno", "").strip() or "1"
    if pageno not in _PAGES:
        raise InvalidRequestError(
            f"pageno must be a whole number from 1 to 10, not {pageno[:20]!r}"
        )
    arguments["page"] = int(pageno)
    time_range = params.get("time_range", "").strip().lower()
    if time_range:
        if time_range not in _TIME_RANGES:
            raise InvalidRequestError(
                f"time_range must be one of {', '.join(_TIME_RANGES)}, or empty for any time"
            )
        arguments["freshness"] = time_range
    arguments.update(_language(params.get("language", "")))
    safesearch = params.get("safesearch", "").strip()
    if safesearch:
        if safesearch not in _SAFESEARCH:
            raise InvalidRequestError("safesearch must be 0 (off), 1 (moderate) or 2 (strict)")
        arguments["safesearch"] = _SAFESEARCH[safesearch]
    categories = {part.strip().lower() for part in params.get("categories", "").split(",")}
    if not categories <= set(_CATEGORIES):
        raise InvalidRequestError(
            "categories: only general (web results) is served; leave categories out"
        )
    engines = [part.strip() for part in params.get("engines", "").split(",") if part.strip()]
    if engines:
        arguments["engines"] = engines
    return {"query": query, **arguments}


def _language(raw: str) -> dict[str, str]:
    code = raw.strip().replace("_", "-")
    if code.lower() in _ANY_LANGUAGE:
        return {}
    language, _, region = code.partition("-")
    if region:
        if len(region) != 2 or not region.isascii() or not region.isalpha():
            raise InvalidRequestError(
                f"language {raw!r} is not a language or locale such as 'en' or 'en-US'"
            )
        return {"country": region.lower()}
    return {"language": language}


def _published(value: str | None) -> str | None:
    """An ISO date or date-time as SearXNG sends it, or ``None`` (a client parses it)."""
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return None


def _parsed_url(url: str) -> list[str]:
    parts = urlsplit(url)
    path, _, params = parts.path.partition(";")
    return [parts.scheme, parts.netloc, path, params, parts.query, parts.fragment]


def _unresponsive(outcomes: list[EngineOutcome] | tuple[EngineOutcome, ...]) -> list[list[str]]:
    failed = [
        [outcome.engine, outcome.error or outcome.status]
        for outcome in outcomes
        if outcome.status != "answered"
    ]
    return sorted(failed)


def envelope(response: SearchResponse) -> dict[str, Any]:
    # Clients sort by score, highest first: the fused score when every result has one, else
    # one that falls with the rank.
    fused = all(result.score is not None for result in response.results)
    results = []
    for result in response.results:
        engines = list(result.engines) or [result.engine or response.provider]
        results.append(
            {
                "url": result.url,
                "title": result.title,
                "content": result.snippet,
                "engine": engines[0],
                "engines": engines,
                "positions": list(result.positions) or [result.rank],
                "score": result.score if fused and result.score is not None else 1 / result.rank,
                "category": "general",
                "template": "default.html",
                "parsed_url": _parsed_url(result.url),
                "publishedDate": _published(result.published),
                "priority": "",
            }
        )
    answers = []
    if response.answer:
        answers.append(
            {
                "answer": response.answer,
                "url": None,
                "engine": response.provider,
                "template": "answer/legacy.html",
            }
        )
    return _envelope(response.query, results, answers, response.outcomes)


def empty_envelope(query: str, outcomes: tuple[EngineOutcome, ...]) -> dict[str, Any]:
    """What SearXNG answers when every engine failed: no results, and each engine's why."""
    return _envelope(query, [], [], outcomes)


def _envelope(
    query: str,
    results: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    outcomes: list[EngineOutcome] | tuple[EngineOutcome, ...],
) -> dict[str, Any]:
    return {
        "query": query,
        "number_of_results": len(results),
        "results": results,
        "answers": answers,
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": _unresponsive(outcomes),
    }
