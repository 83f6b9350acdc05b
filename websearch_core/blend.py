"""The blend: one search sent to many engines at once, their answers fused into one menu.

Seed 003's meta-search. The engines are each keyless backend of the installed ddgs (its
per-backend mode) and every keyed provider the operator configured (brave, tavily, mojeek,
searxng). What lives here is pure: which engines there are and what each honours, how an
engine's answer becomes one of three outcomes, how answers are fused, how paid engines are
metered, and a cache a server can share. The session runs the engines (``session.py``).

- **Outcomes**, exactly three: ``answered`` (results), ``blind`` (it answered, but nothing
  usable: no results, or a body that is not a result list, such as a captcha page), ``down``
  (an error, a refusal, or no answer by the blend's deadline).
- **Fusion**: reciprocal-rank fusion (each engine adds ``1 / (60 + position)`` to a page's
  score), pages deduplicated by ``canonical_url``; a fused result keeps every engine that
  returned it and its position in each, the best-placed title and URL and the longest
  snippet. Ties go to the better best position, then to the engine listed first, so the same
  answers always fuse to the same menu.
- **Metering**: an engine is paid when its credential was set by the operator. Before a
  search its fee is asked of the ``Meter``; refused, the engine sits the search out and the
  others answer (it fails closed on spend, never on answer). Afterwards the meter is told
  what each engine cost: its fee if it answered (answered or blind), nothing if it was down.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol, runtime_checkable

from websearch_core.canonical import canonical_url
from websearch_core.errors import (
    AuthenticationError,
    ConfigurationError,
    InvalidRequestError,
    ProviderResponseError,
    RateLimitedError,
    WebSearchError,
)
from websearch_core.models import EngineOutcome, SearchResponse, SearchResult
from websearch_core.providers.base import Provider, ProviderAnswer, Support

__all__ = [
    "BUDGET_SPENT",
    "DDGS_BACKENDS_UNSUPPORTED",
    "METER_DOWN",
    "NO_SUCH_ENGINE",
    "RRF_K",
    "BlendCache",
    "BlendPlan",
    "BlendProvider",
    "BudgetMeter",
    "Engine",
    "Fees",
    "Meter",
    "blend_answer",
    "fuse",
    "match_engines",
    "merged_suggestions",
    "outcome_of",
]

#: Reciprocal-rank fusion's constant: the usual 60, so that the first few places of each
#: engine count for a lot and the tail for little.
RRF_K = 60
#: Why a paid engine sat a search out when its meter said no.
BUDGET_SPENT = "the metering budget is spent"
#: Why a paid engine sat a search out while its meter failed (it fails closed on spend).
METER_DOWN = "the meter is failing: paid engines sit out until it answers"

#: What each ddgs backend leaves out of the options ddgs takes, read from the installed ddgs
#: (9.16) engines' ``build_payload`` (the arguments each marks unused). A backend not listed
#: here is offered only plain searches: an option it may drop is never sent to it.
DDGS_BACKENDS_UNSUPPORTED: dict[str, frozenset[str]] = {
    "brave": frozenset(),
    "startpage": frozenset(),
    "duckduckgo": frozenset({"safesearch"}),
    "mojeek": frozenset({"freshness"}),
    "yahoo": frozenset({"country", "safesearch"}),
    # Encyclopedias: a site: filter or a date window has no meaning there.
    "wikipedia": frozenset(
        {"safesearch", "freshness", "page", "include_domains", "exclude_domains"}
    ),
    "grokipedia": frozenset(
        {"country", "safesearch", "freshness", "page", "include_domains", "exclude_domains"}
    ),
}


@dataclass(frozen=True)
class Engine:
    """One engine of the blend: a provider, what it honours, and whether it costs money."""

    name: str
    provider: Provider
    capabilities: Mapping[str, Support]
    paid: bool = False


#: Why an engine asked for by name sat a search out.
NO_SUCH_ENGINE = "no engine of that name here"


def match_engines(names: Sequence[str], here: Sequence[str]) -> tuple[list[str], list[str]]:
    """The engines here that ``names`` ask for, and the names that are none of them.

    A name is an engine's own (``brave``, ``ddgs/duckduckgo``) or the plain name of a search
    engine that a ddgs backend here reaches (``duckduckgo``, ``google``): what SearXNG's
    clients send (LibreChat asks for ``google,bing,duckduckgo``)."""
    matched: list[str] = []
    unknown: list[str] = []
    for name in names:
        engine = name if name in here else f"ddgs/{name}" if f"ddgs/{name}" in here else None
        if engine is None:
            unknown.append(name)
        elif engine not in matched:
            matched.append(engine)
    return matched, unknown


def ddgs_capabilities(backend: str, base: Mapping[str, Support]) -> dict[str, Support]:
    """ddgs's declared capabilities, less what this backend drops (everything, if unknown)."""
    dropped = DDGS_BACKENDS_UNSUPPORTED.get(backend, frozenset(base))
    return {
        option: Support.UNSUPPORTED if option in dropped else support
        for option, support in base.items()
    }


# -- outcomes ---------------------------------------------------------------------------------


def _reason(error: WebSearchError) -> str:
    """A down engine's reason in a few words (the full message is in the log)."""
    if isinstance(error, RateLimitedError):
        return "quota spent" if error.quota else "rate limited"
    if isinstance(error, AuthenticationError):
        return "key refused"
    if isinstance(error, InvalidRequestError):
        return "refused the request"
    if "no answer within" in str(error):
        return "timeout"
    status = getattr(error, "status", None)
    return f"HTTP {status}" if status else "unavailable"


def outcome_of(engine: str, answer: ProviderAnswer | WebSearchError | None) -> EngineOutcome:
    """``None`` is an engine still silent at the deadline."""
    if answer is None:
        return EngineOutcome(engine=engine, status="down", error="timeout")
    if isinstance(answer, ProviderAnswer):
        if answer.results:
            return EngineOutcome(engine=engine, status="answered", results=len(answer.results))
        return EngineOutcome(engine=engine, status="blind", error="no results")
    if isinstance(answer, ProviderResponseError) and (
        answer.status is None or 200 <= answer.status < 300
    ):
        # It answered, with something that is not a result list: a captcha or block page, a
        # body that does not parse.
        return EngineOutcome(engine=engine, status="blind", error="unreadable answer")
    return EngineOutcome(engine=engine, status="down", error=_reason(answer))


# -- fusion -----------------------------------------------------------------------------------


@dataclass
class _Fused:
    best: SearchResult
    order: int
    engines: list[str] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    score: float = 0.0
    snippet: str = ""
    published: str | None = None


def fuse(answers: Sequence[tuple[str, Sequence[SearchResult]]], count: int) -> list[SearchResult]:
    """Reciprocal-rank fusion of the engines' result lists, in the engines' given order."""
    fused: dict[str, _Fused] = {}
    for engine, results in answers:
        for position, result in enumerate(results, start=1):
            key = canonical_url(result.url)
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = _Fused(best=result, order=len(fused))
            elif position < min(entry.positions):
                entry.best = result
            if engine not in entry.engines:
                entry.engines.append(engine)
                entry.positions.append(position)
                entry.score += 1.0 / (RRF_K + position)
            if len(result.snippet) > len(entry.snippet):
                entry.snippet = result.snippet
            entry.published = entry.published or result.published
    # Scores compared exactly: summed in another order, equal ones may differ in the last bit.
    ordered = sorted(
        fused.values(),
        key=lambda e: (
            -sum(Fraction(1, RRF_K + p) for p in e.positions),
            min(e.positions),
            e.order,
        ),
    )
    return [
        entry.best.model_copy(
            update={
                "rank": rank,
                "snippet": entry.snippet,
                "published": entry.published,
                "engine": None,
                "engines": tuple(entry.engines),
                "positions": tuple(entry.positions),
                "score": round(entry.score, 6),
            }
        )
        for rank, entry in enumerate(ordered[:count], start=1)
    ]


# -- metering ---------------------------------------------------------------------------------


@runtime_checkable
class Meter(Protocol):
    """Asked before a paid engine joins a search, told afterwards what it cost.

    ``allow`` returns whether ``engine`` may spend ``cents`` on this search (a meter may hold
    the sum until ``spent``); ``spent`` is called once for every allowed engine, with what it
    cost: the fee if the engine answered, 0 if it was down. Called from worker threads and
    event loops alike, so an implementation must be thread-safe.
    """

    def allow(self, engine: str, cents: float) -> bool: ...

    def spent(self, engine: str, cents: float) -> None: ...


class BudgetMeter:
    """The in-process meter: a running total, and an optional budget it never lets pass.

    A fee is held when allowed and settled when spent, so concurrent searches cannot
    together spend past the budget.
    """

    def __init__(self, budget_cents: float | None = None) -> None:
        if budget_cents is not None and not _finite_number(budget_cents, at_least=0):
            raise ConfigurationError(
                "the metering budget must be a number of cents, 0 or more (or None: no budget)"
            )
        self.budget_cents = budget_cents
        self.total_cents = 0.0
        self._held: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def allow(self, engine: str, cents: float) -> bool:
        with self._lock:
            held = sum(sum(fees) for fees in self._held.values())
            if self.budget_cents is not None and self.total_cents + held + cents > (
                self.budget_cents + 1e-9
            ):
                return False
            self._held.setdefault(engine, []).append(cents)
            return True

    def spent(self, engine: str, cents: float) -> None:
        with self._lock:
            fees = self._held.get(engine)
            if fees:
                fees.pop()
            self.total_cents += cents

    @property
    def remaining_cents(self) -> float | None:
        with self._lock:
            if self.budget_cents is None:
                return None
            return max(0.0, self.budget_cents - self.total_cents)

    def __repr__(self) -> str:
        return f"BudgetMeter(total_cents={self.total_cents:g}, budget_cents={self.budget_cents})"


@dataclass(frozen=True)
class Fees:
    """Cents per search that reaches a paid engine: ``WEBSEARCH_FEE_CENTS_<ENGINE>`` over
    ``WEBSEARCH_FEE_CENTS`` over 1 cent."""

    default: float = 1.0
    per_engine: Mapping[str, float] = field(default_factory=dict)

    def of(self, engine: str) -> float:
        return self.per_engine.get(engine, self.default)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Fees:
        env = os.environ if environ is None else environ
        prefix = "WEBSEARCH_FEE_CENTS"
        default = _cents(prefix, env.get(prefix, "1"))
        per_engine = {
            name[len(prefix) + 1 :].lower(): _cents(name, value)
            for name, value in env.items()
            if name.startswith(prefix + "_") and len(name) > len(prefix) + 1
        }
        return cls(default, per_engine)


def _finite_number(
    value: object, *, at_least: float | None = None, above: float | None = None
) -> bool:
    """Whether ``value`` is a real number (not a bool, NaN or infinite) within the bound."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    return (at_least is None or value >= at_least) and (above is None or value > above)


def _cents(name: str, value: str) -> float:
    try:
        cents = float(value)
    except ValueError:
        cents = math.nan
    if math.isnan(cents) or math.isinf(cents) or cents < 0:
        raise ConfigurationError(f"{name} must be a number of cents, 0 or more, such as 1.5")
    return cents


# -- a cache a server can share ---------------------------------------------------------------


class BlendCache:
    """Blend answers by request, bounded in entries and age, safe from threads and tasks
    (the lock is held only for dictionary work, never across an await or a search).

    Separate from each session's memo: pass one to several sessions (``blend_cache=``) and
    an identical blend within ``ttl_s`` is answered once.
    """

    def __init__(self, max_entries: int = 256, ttl_s: float = 300.0) -> None:
        whole = isinstance(max_entries, int) and not isinstance(max_entries, bool)
        if not whole or max_entries < 1 or not _finite_number(ttl_s, above=0):
            raise ConfigurationError(
                "a blend cache needs a whole number of entries, at least 1, and a TTL in "
                "seconds above 0"
            )
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._entries: OrderedDict[Hashable, tuple[float, SearchResponse]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> SearchResponse | None:
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            stored, response = entry
            if now - stored > self.ttl_s:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return response

    def put(self, key: Hashable, response: SearchResponse) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic(), response)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


# -- the blend as a provider the session can pin -------------------------------------------------


class BlendProvider:
    """``provider="blend"``: what the session pins to run its engines as one search.

    It honours an option when at least one engine does; the engines that cannot are left
    out of that search, and the response says so. It sends nothing itself.
    """

    name = "blend"

    def __init__(self, engines: Sequence[Engine]) -> None:
        self.engines = tuple(engines)
        honoured = {
            option
            for engine in self.engines
            for option, support in engine.capabilities.items()
            if support is not Support.UNSUPPORTED
        }
        # Each engine rewrites the query for itself; the blend sends none of its own.
        self.capabilities: dict[str, Support] = {
            option: Support.NATIVE if option in honoured else Support.UNSUPPORTED
            for engine in self.engines
            for option in engine.capabilities
        }

    def __repr__(self) -> str:
        return f"<BlendProvider engines={[e.name for e in self.engines]}>"


@dataclass
class BlendPlan:
    """Who runs a search and who sits it out (and why), decided before anything is sent;
    ``settled`` once the meter has been told what the paid engines cost."""

    engines: tuple[Engine, ...]
    skipped: dict[str, str]
    fees: dict[str, float]
    settled: bool = False


def merged_suggestions(answers: Sequence[ProviderAnswer | WebSearchError | None]) -> list[str]:
    """Every engine's suggested queries, once each, in the engines' order."""
    merged: list[str] = []
    for answer in answers:
        if isinstance(answer, ProviderAnswer):
            merged += [text for text in answer.suggestions if text not in merged]
    return merged[:10]


def blend_answer(
    plan: BlendPlan,
    answers: Sequence[ProviderAnswer | WebSearchError | None],
    count: int,
) -> tuple[list[SearchResult], list[EngineOutcome], dict[str, float]]:
    """The fused menu, each engine's outcome, and what the paid engines cost."""
    outcomes = [outcome_of(e.name, a) for e, a in zip(plan.engines, answers, strict=True)]
    results = fuse(
        [
            (engine.name, answer.results)
            for engine, answer in zip(plan.engines, answers, strict=True)
            if isinstance(answer, ProviderAnswer)
        ],
        count,
    )
    # Billed: an engine that answered (usable or not), or that was cut off mid-request (the
    # vendor most likely counts it). An error answer (bad key, rate limit, 5xx) is not.
    paid = {
        outcome.engine: plan.fees[outcome.engine]
        for outcome in outcomes
        if outcome.engine in plan.fees and (outcome.status != "down" or outcome.error == "timeout")
    }
    return results, outcomes, paid
