"""A blend search: every planned engine at once under one deadline, fused, billed, logged.

Each engine answers through the session's ``Driver`` (its own connections, its own lane),
so one engine that hangs holds only its own capacity: the others answer at their speed and
the hung one is reported down at the deadline. The sync twin runs the engines on threads of
its own search and stops waiting at the deadline; the async twin runs them as tasks.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import anyio

from websearch_core.blend.cache import BlendCache
from websearch_core.blend.engines import Engine
from websearch_core.blend.fusion import merged_suggestions
from websearch_core.blend.meter import BUDGET_SPENT, Fees, Meter, tell_meter
from websearch_core.blend.plan import BlendPlan, BlendProvider, blend_answer, plan_blend
from websearch_core.errors import InternalError, ProviderUnavailableError, WebSearchError
from websearch_core.models import SearchRequest, SearchResponse, Usage
from websearch_core.providers.base import ProviderAnswer
from websearch_core.redact import Redactor
from websearch_core.search.answer import recalled
from websearch_core.search.routing import localised, rewrite_query
from websearch_core.search.service import SearchService

__all__ = ["BlendRunner", "BlendSearch"]

logger = logging.getLogger("websearch_core")

Answers = list[ProviderAnswer | WebSearchError | None]


@dataclass(frozen=True)
class BlendSearch:
    """A search routed to the blend, before anything is sent (checked that some engine can
    honour it), and its memo key."""

    request: SearchRequest
    key: tuple[Any, ...]


class BlendRunner:
    """``run``/``arun`` a blend search."""

    def __init__(
        self,
        blend: BlendProvider,
        searches: SearchService,
        meter: Meter,
        fees: Fees,
        cache: BlendCache | None,
        timeout: float,
        redactor: Redactor,
    ) -> None:
        self.blend = blend
        self._searches = searches
        self.meter = meter
        self._fees = fees
        self._cache = cache
        self._timeout = timeout  # one deadline for the whole blend
        self._redactor = redactor

    def run(self, search: BlendSearch) -> SearchResponse:
        if (hit := self._recall(search)) is not None:
            return hit
        started = time.perf_counter()
        plan = plan_blend(self.blend, search.request, self.meter, self._fees)
        with self._released_if_unbilled(plan):
            deadline = time.monotonic() + self._timeout
            # This search's own threads: one per engine, so none waits behind another's.
            workers = ThreadPoolExecutor(len(plan.engines), thread_name_prefix="websearch-blend")
            try:
                pending = [
                    workers.submit(self._engine_search, engine, search.request, deadline)
                    for engine in plan.engines
                ]
                wait(pending, timeout=max(0.0, deadline - time.monotonic()))
            finally:
                # An engine still silent is cut off: nothing waits for it (ddgs ends on its
                # own timeout, an HTTP engine at the deadline held at its socket).
                workers.shutdown(wait=False, cancel_futures=True)
            answers: Answers = [
                f.result() if f.done() and not f.cancelled() else None for f in pending
            ]
            answer = self._blended(plan, answers, search.request)
        return self._finish(search, answer, started)

    async def arun(self, search: BlendSearch) -> SearchResponse:
        if (hit := self._recall(search)) is not None:
            return hit
        started = time.perf_counter()
        plan = plan_blend(self.blend, search.request, self.meter, self._fees)
        deadline = time.monotonic() + self._timeout
        answers: Answers = [None] * len(plan.engines)

        async def one(index: int, engine: Engine) -> None:
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                answers[index] = await self._aengine_search(engine, search.request, deadline)

        with self._released_if_unbilled(plan):
            async with anyio.create_task_group() as group:
                for index, engine in enumerate(plan.engines):
                    group.start_soon(one, index, engine)
            answer = self._blended(plan, answers, search.request)
        return self._finish(search, answer, started)

    def _shared_key(self, request: SearchRequest) -> tuple[Any, ...]:
        return (request, tuple(self.blend.names))

    def _recall(self, search: BlendSearch) -> SearchResponse | None:
        """This session's memo, then the cache shared with other sessions."""
        if (hit := self._searches.recall(search.key)) is not None:
            return hit
        if self._cache is not None and (hit := self._cache.get(self._shared_key(search.request))):
            return recalled(hit)
        return None

    def _finish(
        self, search: BlendSearch, answer: ProviderAnswer, started: float
    ) -> SearchResponse:
        request = search.request
        response = self._searches.finish(
            search.key, request, self.blend.name, request.query, answer, started
        )
        if self._cache is not None and _shareable(response):
            self._cache.put(self._shared_key(request), response)
        return response

    def _engine_search(
        self, engine: Engine, request: SearchRequest, deadline: float
    ) -> ProviderAnswer | WebSearchError:
        """One engine's answer or its error, never raised: one engine never fails a blend."""
        query = rewrite_query(request, engine.capabilities)
        request = localised(request, engine.capabilities)
        try:
            return self._searches.driver.answer(
                engine.provider, request, query, deadline, self._timeout
            )
        except WebSearchError as exc:
            return exc
        except Exception as exc:  # a bug in one engine's path: reported, not raised
            return self._engine_bug(engine, exc)

    async def _aengine_search(
        self, engine: Engine, request: SearchRequest, deadline: float
    ) -> ProviderAnswer | WebSearchError:
        query = rewrite_query(request, engine.capabilities)
        request = localised(request, engine.capabilities)
        try:
            return await self._searches.driver.aanswer(
                engine.provider, request, query, deadline, self._timeout
            )
        except WebSearchError as exc:
            return exc
        except Exception as exc:
            return self._engine_bug(engine, exc)

    def _engine_bug(self, engine: Engine, exc: Exception) -> InternalError:
        if logger.isEnabledFor(logging.DEBUG):
            trace = "".join(traceback.format_exception(exc))
            logger.debug(
                "blend engine %s failed unexpectedly:\n%s",
                engine.name,
                self._redactor.redact(trace),
            )
        return InternalError(f"the {engine.name} engine", exc)

    @contextlib.contextmanager
    def _released_if_unbilled(self, plan: BlendPlan) -> Iterator[None]:
        """If the blend ends before ``_blended`` bills it (a cancelled task, a bug), each fee
        the meter holds for it is released as unspent."""
        try:
            yield
        except BaseException:
            if not plan.billed:
                plan.billed = True
                tell_meter(plan.meter, plan.fees, {})
            raise

    def _blended(self, plan: BlendPlan, answers: Answers, request: SearchRequest) -> ProviderAnswer:
        """Fuse, bill, log each engine's outcome; fail only if every engine is down."""
        results, outcomes, paid = blend_answer(plan, answers, request.count)
        plan.billed = True
        tell_meter(plan.meter, plan.fees, paid)
        for outcome in outcomes:
            logger.info(
                "blend engine=%s status=%s results=%d reason=%s",
                outcome.engine,
                outcome.status,
                outcome.results,
                outcome.error or "-",
            )
        if all(outcome.status == "down" for outcome in outcomes):
            every = "; ".join(f"{o.engine} ({o.error})" for o in outcomes)
            raise ProviderUnavailableError(
                "blend", f"every engine is down: {every}", outcomes=outcomes
            )
        # Searches that reached an engine (it answered, or it was cut off mid-request).
        reached = [o for o in outcomes if o.status != "down" or o.error == "timeout"]
        usage = Usage(searches=len(reached), requests=len(plan.engines), paid=paid)
        return ProviderAnswer(
            results=results,
            outcomes=outcomes,
            skipped=plan.skipped,
            usage=usage,
            suggestions=merged_suggestions(answers),
        )


def _shareable(response: SearchResponse) -> bool:
    """Whether a blend answer may go in the shared cache: only when it says nothing about
    this session's luck or purse (no engine down, none left out for the budget)."""
    if any(o.status == "down" for o in response.outcomes):
        return False
    return BUDGET_SPENT not in response.skipped.values()
