"""The SearXNG door: ``/search?format=json`` parameters in, SearXNG's JSON envelope out.

Parameters come from the query string and from a form body, the form winning (as SearXNG
reads them). Every parameter that changes what is searched is honoured, or refused with a
400 that says what to change, or (where SearXNG itself carries on) passed over and named in
``unresponsive_engines``; parameters that only change how SearXNG's own web page looks
(``theme``, ``image_proxy`` …) change nothing here and are accepted.

- ``q`` (required), ``format`` (``json`` only), ``pageno`` (1 to 10).
- ``time_range``: ``day``/``week``/``month``/``year``; empty means none.
- ``language``: a language or a locale (``en``, ``en-US``), as SearXNG takes it: a hint each
  engine follows as far as it can (its language, its region), never a reason for an engine
  to sit out; ``all``, ``auto`` or empty mean none.
- ``safesearch``: 0, 1, 2 (off, moderate, strict). ``categories``: empty, ``general`` or
  ``web`` (web results are all it has).
- ``engines``: a comma list of engines, by this service's names (``brave``,
  ``ddgs/duckduckgo``) or by the plain names SearXNG's clients send (``duckduckgo``,
  ``google``: the ddgs backend of that name). As in SearXNG, a name it does not have is
  passed over, and if none is left every engine runs; each one passed over is listed in
  ``unresponsive_engines``.
- Bangs in ``q``, as SearXNG reads them: ``!name`` or a SearXNG shortcut (``!ddg``, ``!br``)
  chooses that engine, ``!general`` every engine, ``:en``/``:en-US`` the locale; a bang this
  service cannot honour (``!gh``, ``!images``, ``!!w``, ``<3``) is taken out of the query and
  listed in ``unresponsive_engines`` with why, never sent to the engines as words.

The envelope is SearXNG's at HEAD plus ``number_of_results``, which older clients read.
``unresponsive_engines`` lists each engine that was down or blind, or sat the search out, with
why: an empty result list is then never mistaken for "nothing found".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from websearch_core.blend import NO_SUCH_ENGINE, match_engines
from websearch_core.errors import InvalidRequestError
from websearch_core.models import MAX_COUNT, EngineOutcome, SearchRequest, SearchResponse

__all__ = ["SearxngCall", "empty_envelope", "envelope", "search_arguments"]

_TIME_RANGES = ("day", "week", "month", "year")
_PAGES = frozenset(str(page) for page in range(1, 11))
_SAFESEARCH = {"0": "off", "1": "moderate", "2": "strict"}
_ANY_LANGUAGE = ("", "all", "auto")
_CATEGORIES = ("", "general", "web")
#: SearXNG parameters that select what is searched in ways this service cannot: refused.
_REFUSED = {
    "timeout_limit": "the service's blend deadline is set by its operator",
    "enabled_engines": "name the engines in engines=",
    "disabled_engines": "name the engines to use in engines=",
    "enabled_categories": "only the general category is served",
    "disabled_categories": "only the general category is served",
}
#: SearXNG's shortcuts (its settings.yml) for the engines a ddgs backend or a keyed provider
#: can stand for here; a bang may also spell the engine's name (``!duckduckgo``).
_SHORTCUTS = {
    "br": "brave",
    "ddg": "duckduckgo",
    "gp": "grokipedia",
    "mjk": "mojeek",
    "sp": "startpage",
    "wp": "wikipedia",
    "yh": "yahoo",
    "go": "google",
    "bi": "bing",
    "yd": "yandex",
    "qw": "qwant",
}
_NOT_SERVED = "the bang's engine or category is not served here: searched without it"
_CATEGORY = "only general web results are served here: searched the web"
#: SearXNG's categories other than the web's: a bang naming one is not an engine.
_OTHER_CATEGORIES = frozenset(
    {
        "images", "videos", "news", "map", "music", "it", "science", "files", "social media",
        "apps", "blogs", "cloud", "dictionaries", "movies", "onions", "packages", "q&a",
        "repos", "software wikis", "wikimedia",
    }
)  # fmt: skip


@dataclass
class SearxngCall:
    """One SearXNG request as a search: ``WebSearch.search`` keyword arguments, and what was
    passed over (unknown engines, bangs not served) as ``unresponsive_engines`` entries."""

    arguments: dict[str, Any]
    passed_over: list[list[str]] = field(default_factory=list)


def search_arguments(params: Mapping[str, str], engines_here: Sequence[str]) -> SearxngCall:
    """The search SearXNG parameters ask for, among ``engines_here``; raises
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
    call = SearxngCall({"count": MAX_COUNT})
    words, asked, locale = _read_bangs(params.get("q", ""), engines_here, call.passed_over)
    query = " ".join(words)
    if not query:
        raise InvalidRequestError("q is missing: give the words to search for, as q=...")
    call.arguments["query"] = query
    pageno = params.get("pageno", "").strip() or "1"
    if pageno not in _PAGES:
        raise InvalidRequestError(
            f"pageno must be a whole number from 1 to 10, not {pageno[:20]!r}"
        )
    call.arguments["page"] = int(pageno)
    time_range = params.get("time_range", "").strip().lower()
    if time_range:
        if time_range not in _TIME_RANGES:
            raise InvalidRequestError(
                f"time_range must be one of {', '.join(_TIME_RANGES)}, or empty for any time"
            )
        call.arguments["freshness"] = time_range
    language = params.get("language", "").strip()
    if language.lower() not in _ANY_LANGUAGE:
        locale = locale or _locale(language)
    if locale:
        call.arguments["locale"] = locale
    safesearch = params.get("safesearch", "").strip()
    if safesearch:
        if safesearch not in _SAFESEARCH:
            raise InvalidRequestError("safesearch must be 0 (off), 1 (moderate) or 2 (strict)")
        call.arguments["safesearch"] = _SAFESEARCH[safesearch]
    categories = {part.strip().lower() for part in params.get("categories", "").split(",")}
    if not categories <= set(_CATEGORIES):
        raise InvalidRequestError(
            "categories: only general (web results) is served; leave categories out"
        )
    named = [part.strip().lower() for part in params.get("engines", "").split(",")]
    matched, unknown = match_engines([name for name in named if name], engines_here)
    call.passed_over += [[name, NO_SUCH_ENGINE] for name in unknown]
    chosen = list(dict.fromkeys([*asked, *matched]))
    if chosen:  # none left (every name unknown): every engine runs, as in SearXNG
        call.arguments["engines"] = chosen
    return call


def _read_bangs(
    q: str, engines_here: Sequence[str], passed_over: list[list[str]]
) -> tuple[list[str], list[str], str | None]:
    """The query's words, the engines its bangs choose, and its ``:locale`` bang."""
    words: list[str] = []
    chosen: list[str] = []
    locale: str | None = None
    for part in q.split():
        if part.startswith("!!") or (part.startswith("<") and part[1:].isdigit()):
            passed_over.append([part[:40], _NOT_SERVED])  # external bangs, SearXNG's timeout
        elif part.startswith("!") and len(part) > 1:
            name = part[1:].lower().replace("_", " ").replace("-", " ")
            if name in ("general", "web"):
                continue
            matched, _ = match_engines([_SHORTCUTS.get(name, name)], engines_here)
            if matched:
                chosen += matched
            else:
                why = _CATEGORY if name in _OTHER_CATEGORIES else _NOT_SERVED
                passed_over.append([part[:40], why])
        elif part.startswith(":") and len(part) > 1 and locale is None:
            try:
                locale = _locale(part[1:])
            except InvalidRequestError:
                words.append(part)  # not a locale (":)" and the like): words, as SearXNG does
        else:
            words.append(part)
    return words, chosen, locale


def _locale(raw: str) -> str:
    try:
        locale = SearchRequest(query="probe", locale=raw).locale
    except ValueError:
        raise InvalidRequestError(
            f"language {raw[:40]!r} is not a language or locale such as 'en' or 'en-US'"
        ) from None
    assert locale is not None
    return locale


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


def _unresponsive(
    outcomes: Sequence[EngineOutcome], skipped: Mapping[str, str], passed_over: list[list[str]]
) -> list[list[str]]:
    failed = [
        [outcome.engine, outcome.error or outcome.status]
        for outcome in outcomes
        if outcome.status != "answered"
    ]
    failed += [[engine, why] for engine, why in skipped.items()]
    return sorted(failed + passed_over)


def envelope(
    response: SearchResponse, passed_over: list[list[str]] | None = None
) -> dict[str, Any]:
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
    unresponsive = _unresponsive(response.outcomes, response.skipped, passed_over or [])
    return _envelope(response.query, results, answers, response.suggestions, unresponsive)


def empty_envelope(
    query: str, outcomes: Sequence[EngineOutcome], passed_over: list[list[str]] | None = None
) -> dict[str, Any]:
    """What SearXNG answers when every engine failed: no results, and each engine's why."""
    return _envelope(query, [], [], [], _unresponsive(outcomes, {}, passed_over or []))


def _envelope(
    query: str,
    results: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    suggestions: list[str],
    unresponsive: list[list[str]],
) -> dict[str, Any]:
    return {
        "query": query,
        "number_of_results": len(results),
        "results": results,
        "answers": answers,
        "corrections": [],
        "infoboxes": [],
        "suggestions": suggestions,
        "unresponsive_engines": unresponsive,
    }
