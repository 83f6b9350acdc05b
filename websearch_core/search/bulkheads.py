"""Each engine's own capacity: an HTTP provider has its own connection pool, a blocking one
(ddgs) its own threads. One engine that hangs fills only its own, so the others keep
answering at their own speed (measured before this: with one engine hanging, a healthy one
answering in 1 ms was reported down in 19 of 40 searches, waiting behind it for a slot of
the one pool they shared).

- ``ProviderClients``: one ``httpx`` client per provider, sync and (per event loop) async,
  each over its own transport (``transport.PROVIDER_LIMITS``), and its own slots: at most
  that many of its requests are in its pool at once; the others wait on a semaphore, in
  order, until their deadline. httpcore's pool matches every waiting request against every
  connection whenever one arrives or leaves: with a few hundred waiting on a hung engine,
  that alone took 28% of the service's event loop (measured, py-spy). A client the host
  passed in is the host's choice and is shared by every provider (the slots stay each
  provider's own).
- ``BlockingLane``: a blocking engine's threads. A search queued behind busy threads starts
  only if its deadline has not passed by the time a thread is free: a burst against a hung
  engine drains at once instead of running searches nobody waits for.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio
import httpx

from websearch_core.errors import ProviderUnavailableError
from websearch_core.net.transport import PROVIDER_LIMITS, AsyncProviderTransport, ProviderTransport

__all__ = ["BLOCKING_THREADS", "BlockingLane", "BlockingLanes", "Lane", "ProviderClients"]

T = TypeVar("T")
C = TypeVar("C", httpx.Client, httpx.AsyncClient)
S = TypeVar("S", threading.Semaphore, anyio.Semaphore)
#: A provider's requests in its pool at once (the rest wait for a slot).
SLOTS = PROVIDER_LIMITS.max_connections or 20


@dataclass(frozen=True)
class Lane(Generic[C, S]):
    """One provider's client and the slots its requests take (``providers/send.py``)."""

    client: C
    slots: S


#: Threads per blocking engine: its searches at once (each waits on the network, not a core).
BLOCKING_THREADS = 8


class ProviderClients:
    """One HTTP client per provider, made on first use and closed with the session."""

    def __init__(
        self,
        *,
        user_agent: str,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._headers = {"User-Agent": user_agent}
        self._given = http_client
        self._agiven = async_http_client
        self._lanes: dict[str, Lane[httpx.Client, threading.Semaphore]] = {}
        # A client's pooled connections belong to the loop that opened them (on another, a
        # second ``asyncio.run``, they fail with "Event loop is closed"): a set per loop.
        self._alanes: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, Lane[httpx.AsyncClient, anyio.Semaphore]]
        ] = weakref.WeakKeyDictionary()
        self._making = threading.Lock()  # a blend's threads may ask at once: one lane each

    def sync(self, provider: str) -> Lane[httpx.Client, threading.Semaphore]:
        with self._making:
            lane = self._lanes.get(provider)
            if lane is None:
                client = self._given or httpx.Client(
                    transport=ProviderTransport(), headers=self._headers
                )
                lane = self._lanes[provider] = Lane(client, threading.Semaphore(SLOTS))
            return lane

    def async_(self, provider: str) -> Lane[httpx.AsyncClient, anyio.Semaphore]:
        loop = asyncio.get_running_loop()
        with self._making:
            lanes = self._alanes.setdefault(loop, {})
            lane = lanes.get(provider)
            if lane is None:
                client = self._agiven or httpx.AsyncClient(
                    transport=AsyncProviderTransport(), headers=self._headers
                )
                lane = lanes[provider] = Lane(client, anyio.Semaphore(SLOTS))
            return lane

    def close(self) -> None:
        """Close the sync clients made here (not one passed in)."""
        with self._making:
            lanes = list(self._lanes.values())
            self._lanes.clear()
        for lane in lanes:
            if lane.client is not self._given:
                lane.client.close()

    async def aclose(self) -> None:
        """Close everything ``close`` does and this loop's async clients; another loop's cannot
        be closed from here and are dropped (their sockets close when they are collected)."""
        self.close()
        with self._making:
            lanes = self._alanes.pop(asyncio.get_running_loop(), {})
            self._alanes.clear()
        for lane in lanes.values():
            if lane.client is not self._agiven:
                await lane.client.aclose()


class BlockingLane:
    """One blocking engine's threads; a call waits for its answer until its deadline."""

    def __init__(self, name: str, threads: int = BLOCKING_THREADS) -> None:
        self.name = name
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix=f"websearch-{name}")

    def _submit(self, call: Callable[[float], T], deadline: float, seconds: float) -> Future[T]:
        def when_free() -> T:
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # its caller has stopped waiting: do not start it
                raise ProviderUnavailableError(self.name, f"no answer within {seconds:g} s")
            return call(remaining)

        return self._threads.submit(when_free)

    def run(self, call: Callable[[float], T], deadline: float, seconds: float) -> T:
        """``call(seconds_left)`` on one of the lane's threads; ``ProviderUnavailableError``
        at ``deadline`` (``seconds`` is the whole budget, as the message says it)."""
        future = self._submit(call, deadline, seconds)
        try:
            return future.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            future.cancel()  # not started yet: never will be
            raise ProviderUnavailableError(self.name, f"no answer within {seconds:g} s") from None

    async def arun(self, call: Callable[[float], T], deadline: float, seconds: float) -> T:
        """``run`` for the event loop (cancelling the wait cancels a call not yet started)."""
        future = self._submit(call, deadline, seconds)
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            return await asyncio.wrap_future(future)
        future.cancel()
        raise ProviderUnavailableError(self.name, f"no answer within {seconds:g} s")

    def close(self) -> None:
        """Searches not started are dropped; those running end on their own timeouts."""
        self._threads.shutdown(wait=False, cancel_futures=True)


class BlockingLanes:
    """The lanes of a session's blocking engines, by engine name, made on first use."""

    def __init__(self) -> None:
        self._lanes: dict[str, BlockingLane] = {}
        self._making = threading.Lock()

    def __getitem__(self, name: str) -> BlockingLane:
        with self._making:
            lane = self._lanes.get(name)
            if lane is None:
                lane = self._lanes[name] = BlockingLane(name)
            return lane

    def close(self) -> None:
        with self._making:
            lanes = list(self._lanes.values())
            self._lanes.clear()
        for lane in lanes:
            lane.close()
