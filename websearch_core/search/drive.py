"""One provider's search, driven under one deadline, sync or async.

An HTTP provider's search is a sans-IO flow (``providers.base.Exchange``): each ``Call`` is
sent through that provider's own client and slots (``bulkheads.ProviderClients``), and each
``Locate`` (a vendor's redirect links) is resolved by the function the session gives (the
fetcher's), which
goes through the URL jail. Every call, its one retry and every redirect share the search's
deadline. A blocking provider (ddgs) runs on its own lane's threads even for a sync search,
so the caller can stop waiting at the deadline; the library's own timeout ends the abandoned
call.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import anyio

from websearch_core.errors import WebSearchError
from websearch_core.models import SearchRequest, Usage
from websearch_core.providers import send
from websearch_core.providers.base import (
    BlockingProvider,
    Call,
    HttpProvider,
    Provider,
    ProviderAnswer,
)
from websearch_core.search.bulkheads import BlockingLanes, ProviderClients

__all__ = ["LOCATE_BUDGET_S", "Driver"]

#: A vendor's redirect links (Gemini's) are resolved concurrently, within the search's
#: deadline and at most this long: a link not resolved in time is kept as it is.
LOCATE_BUDGET_S = 3.0

#: Where a redirect link leads (``None``: it does not redirect), by the deadline given.
Resolve = Callable[[str, float], "str | None"]
AResolve = Callable[[str, float], Awaitable["str | None"]]


def _spent(answer: ProviderAnswer, calls: int) -> ProviderAnswer:
    """The answer with its usage complete: a plain index's call is one search, no tokens."""
    usage = answer.usage or Usage(searches=1)
    return dataclasses.replace(answer, usage=usage.model_copy(update={"requests": calls}))


@dataclasses.dataclass(frozen=True)
class Limits:
    """What every provider call may spend besides its deadline."""

    max_retry_wait: float  # the longest Retry-After slept through before the one retry
    max_bytes: int  # a provider's answer is read like a page, up to this ceiling


class Driver:
    """Runs a provider's search: ``answer``/``aanswer`` (a twin pair)."""

    def __init__(
        self,
        clients: ProviderClients,
        lanes: BlockingLanes,
        limits: Limits,
        resolve: Resolve,
        aresolve: AResolve,
    ) -> None:
        self._clients = clients
        self._lanes = lanes
        self._limits = limits
        self._resolve = resolve
        self._aresolve = aresolve

    def answer(
        self,
        provider: Provider,
        request: SearchRequest,
        query: str,
        deadline: float,
        seconds: float,
    ) -> ProviderAnswer:
        """``provider``'s answer to ``request`` (sending ``query``), by ``deadline`` (the end
        of a budget ``seconds`` long, as error messages say it), or a ``WebSearchError``."""
        if isinstance(provider, BlockingProvider):
            call = _blocking_call(provider, request, query)
            return _spent(self._lanes[provider.bulkhead].run(call, deadline, seconds), 1)
        assert isinstance(provider, HttpProvider)
        flow = provider.exchange(request, query)
        reply: object = None
        calls = 0
        while True:
            try:
                step = flow.send(reply)
            except StopIteration as done:
                return _spent(done.value, calls)
            if isinstance(step, Call):
                calls += 1
                lane = self._clients.sync(provider.bulkhead)
                reply = send.send(
                    lane.client,
                    provider,
                    step.request,
                    slots=lane.slots,
                    **self._budget(deadline, seconds),
                )
            else:
                reply = self._locate(step.urls, deadline)

    async def aanswer(
        self,
        provider: Provider,
        request: SearchRequest,
        query: str,
        deadline: float,
        seconds: float,
    ) -> ProviderAnswer:
        """``answer`` for the event loop."""
        if isinstance(provider, BlockingProvider):
            call = _blocking_call(provider, request, query)
            return _spent(await self._lanes[provider.bulkhead].arun(call, deadline, seconds), 1)
        assert isinstance(provider, HttpProvider)
        flow = provider.exchange(request, query)
        reply: object = None
        calls = 0
        while True:
            try:
                step = flow.send(reply)
            except StopIteration as done:
                return _spent(done.value, calls)
            if isinstance(step, Call):
                calls += 1
                alane = self._clients.async_(provider.bulkhead)
                reply = await send.asend(
                    alane.client,
                    provider,
                    step.request,
                    slots=alane.slots,
                    **self._budget(deadline, seconds),
                )
            else:
                reply = await self._alocate(step.urls, deadline)

    def _budget(self, deadline: float, seconds: float) -> dict[str, Any]:
        """What every provider call may spend: the search's deadline, its retry wait, its
        answer ceiling."""
        return {
            "cap": self._limits.max_retry_wait,
            "seconds": seconds,
            "max_bytes": self._limits.max_bytes,
            "deadline": deadline,
        }

    def _locate(self, urls: tuple[str, ...], deadline: float) -> dict[str, str]:
        """Where each redirect link leads; links not resolved in time (or refused, or not
        redirecting) are left out. All links at once, as ``_alocate``."""
        if not urls:
            return {}
        end = min(deadline, time.monotonic() + LOCATE_BUDGET_S)
        # This search's own threads: a slow vendor's links never wait behind another's.
        workers = ThreadPoolExecutor(len(urls), thread_name_prefix="websearch-locate")
        try:
            pending = {workers.submit(self._resolve, url, end): url for url in urls}
            done, _ = wait(pending, timeout=max(0.0, end - time.monotonic()))
        finally:
            # Nothing waits for the stragglers: each ends at ``end`` on its own socket deadline.
            workers.shutdown(wait=False, cancel_futures=True)
        found: dict[str, str] = {}
        for future in done:
            with contextlib.suppress(WebSearchError):
                target = future.result()
                if target is not None:
                    found[pending[future]] = target
        return found

    async def _alocate(self, urls: tuple[str, ...], deadline: float) -> dict[str, str]:
        end = min(deadline, time.monotonic() + LOCATE_BUDGET_S)
        found: dict[str, str] = {}

        async def one(url: str) -> None:
            with contextlib.suppress(WebSearchError):
                target = await self._aresolve(url, end)
                if target is not None:
                    found[url] = target

        with anyio.move_on_after(max(0.0, end - time.monotonic())):
            async with anyio.create_task_group() as group:
                for url in urls:
                    group.start_soon(one, url)
        return found


def _blocking_call(
    provider: BlockingProvider, request: SearchRequest, query: str
) -> Callable[[float], ProviderAnswer]:
    """The search as a lane runs it: given the seconds left when a thread is free."""
    return lambda remaining: provider.search_blocking(request, query, remaining)
