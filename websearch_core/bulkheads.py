"""Each engine's own capacity: an HTTP provider has its own connection pool, a blocking one
(ddgs) its own threads. One engine that hangs fills only its own, so the others keep
answering at their own speed (measured before this: with one engine hanging, a healthy one
answering in 1 ms was reported down in 19 of 40 searches, waiting behind it for a slot of
the one pool they shared).

- ``ProviderClients``: one ``httpx`` client per provider, sync and (per event loop) async,
  each over its own transport (``transport.PROVIDER_LIMITS``). A client the host passed in is
  the host's choice and is shared by every provider.
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
from typing import TypeVar

import anyio
import httpx

from websearch_core.errors import ProviderUnavailableError
from websearch_core.transport import AsyncProviderTransport, ProviderTransport

__all__ = ["BLOCKING_THREADS", "BlockingLane", "BlockingLanes", "ProviderClients"]

T = TypeVar("T")

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
        self._clients: dict[str, httpx.Client] = {}
        # A client's pooled connections belong to the loop that opened them (on another, a
        # second ``asyncio.run``, they fail with "Event loop is closed"): a set per loop.
        self._aclients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, httpx.AsyncClient]
        ] = weakref.WeakKeyDictionary()
        self._making = threading.Lock()  # a blend's threads may ask at once: one client each

    def sync(self, provider: str) -> httpx.Client:
        if self._given is not None:
            return self._given
        with self._making:
            client = self._clients.get(provider)
            if client is None:
                client = self._clients[provider] = httpx.Client(
                    transport=ProviderTransport(), headers=self._headers
                )
            return client

    def async_(self, provider: str) -> httpx.AsyncClient:
        if self._agiven is not None:
            return self._agiven
        loop = asyncio.get_running_loop()
        with self._making:
            clients = self._aclients.setdefault(loop, {})
            client = clients.get(provider)
            if client is None:
                client = clients[provider] = httpx.AsyncClient(
                    transport=AsyncProviderTransport(), headers=self._headers
                )
            return client

    def close(self) -> None:
        """Close the sync clients made here (not one passed in)."""
        with self._making:
            clients = list(self._clients.values())
            self._clients.clear()
        for client in clients:
            client.close()

    async def aclose(self) -> None:
        """Close everything ``close`` does and this loop's async clients; another loop's cannot
        be closed from here and are dropped (their sockets close when they are collected)."""
        self.close()
        with self._making:
            clients = self._aclients.pop(asyncio.get_running_loop(), {})
            self._aclients.clear()
        for client in clients.values():
            await client.aclose()


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
