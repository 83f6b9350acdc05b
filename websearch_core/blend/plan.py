"""The blend as something a search is routed to, and who runs one search of it.

Everything here is decided before anything is sent: which engines a search asks for, which
of them honour its options, which paid ones the meter allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from websearch_core.blend.engines import NO_SUCH_ENGINE, Engine, match_engines
from websearch_core.blend.fusion import fuse
from websearch_core.blend.meter import BUDGET_SPENT, METER_DOWN, Fees, Meter, ask_meter, tell_meter
from websearch_core.blend.outcomes import outcome_of
from websearch_core.errors import (
    InvalidRequestError,
    ProviderUnavailableError,
    RateLimitedError,
    UnsupportedOptionError,
    WebSearchError,
)
from websearch_core.models import EngineOutcome, SearchRequest, SearchResult
from websearch_core.providers.base import ProviderAnswer, Support
from websearch_core.search.routing import rewrite_query, unmet_options

__all__ = ["BlendPlan", "BlendProvider", "blend_answer", "plan_blend"]


class BlendProvider:
    """``provider="blend"``: what a session pins to run its engines as one search.

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

    @property
    def names(self) -> list[str]:
        """The engines by name: what a search's ``engines=`` may choose among."""
        return [engine.name for engine in self.engines]

    def chosen(self, request: SearchRequest) -> tuple[tuple[Engine, ...], list[str]]:
        """The engines ``engines=`` names (every one, when it names none), and the names that
        are no engine here; a list naming only those is refused."""
        if not request.engines:
            return self.engines, []
        matched, unknown = match_engines(request.engines, self.names)
        if not matched:
            raise InvalidRequestError(
                f"no engine named {', '.join(map(repr, unknown))} in this blend: choose among "
                f"{', '.join(self.names) or 'none (the blend has no engines here)'}"
            )
        return tuple(e for e in self.engines if e.name in matched), unknown

    def refuse_unservable(self, request: SearchRequest) -> None:
        """Refuse, before anything is sent, a search no engine of the blend can honour."""
        chosen, _ = self.chosen(request)
        if any(not unmet_options(request, e.capabilities) for e in chosen):
            return
        gaps = "; ".join(
            f"{e.name} lacks {', '.join(unmet_options(request, e.capabilities))}" for e in chosen
        )
        raise UnsupportedOptionError("blend", request.options_used(), [], detail=gaps)

    def __repr__(self) -> str:
        return f"<BlendProvider engines={self.names}>"


@dataclass
class BlendPlan:
    """Who runs a search and who sits it out (and why), decided before anything is sent;
    ``billed`` once the meter has been told what the paid engines cost."""

    engines: tuple[Engine, ...]
    skipped: dict[str, str]
    fees: dict[str, float]
    #: The meter that allowed ``fees``: the one told what they cost, even if the session's
    #: meter is swapped while this search runs.
    meter: Meter
    billed: bool = False


def plan_blend(blend: BlendProvider, request: SearchRequest, meter: Meter, fees: Fees) -> BlendPlan:
    """Which engines run: those that honour every option and, if paid, that the meter
    allows. Each left out is named with its reason; a search none can run is refused."""
    engines: list[Engine] = []
    chosen, unknown = blend.chosen(request)
    skipped = dict.fromkeys(unknown, NO_SUCH_ENGINE)
    held: dict[str, float] = {}
    try:
        for engine in chosen:
            if unmet := unmet_options(request, engine.capabilities):
                skipped[engine.name] = f"cannot honour {', '.join(unmet)}"
            elif len(rewrite_query(request, engine.capabilities)) > engine.provider.max_query_chars:
                skipped[engine.name] = "the query with its site: filters is too long for it"
            elif engine.paid and (refused := ask_meter(meter, fees, engine.name)) is not None:
                skipped[engine.name] = refused
            else:
                if engine.paid:
                    held[engine.name] = fees.of(engine.name)
                engines.append(engine)
    except BaseException:  # interrupted (cancelled): release what the meter already held
        tell_meter(meter, held, {})
        raise
    if not engines:
        reasons = set(skipped.values()) - {NO_SUCH_ENGINE}
        if reasons == {BUDGET_SPENT}:
            raise RateLimitedError("blend", None, quota=True)
        if reasons == {METER_DOWN}:
            raise ProviderUnavailableError("blend", f"every engine is paid and {METER_DOWN}")
        every = "; ".join(f"{name} ({why})" for name, why in skipped.items())
        raise InvalidRequestError(f"no engine of the blend can run this search: {every}")
    return BlendPlan(tuple(engines), skipped, held, meter)


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
