"""Per-host limits for bulk reads, inside one process: requests at once, and their spacing.

They hold across every bulk read of a session (threads and batches alike; on event loops,
per loop), within one process. N processes (N Ray actors, N Spark tasks) reading the same
host each apply them, so the host sees N times the rate: partition URLs by host before the
fetch stage so that each host's URLs land in one worker (docs/scale-out.md).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from websearch_core.errors import FetchError

__all__ = ["HostPace", "HostSlots"]

_PRUNE_AT = 10_000


class HostPace:
    """Spaces request starts to one host at least ``interval`` seconds apart; shared by a
    session's bulk reads, from threads and event loops alike. A turn is taken when it is
    used, not booked ahead: a request held up elsewhere (a busy network slot, a late thread)
    does not let the next one start right behind it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def _turn(self, host: str, interval: float) -> float:
        """0 if the host's turn is taken now; else how long until it may be."""
        with self._lock:
            now = time.monotonic()
            if len(self._next) > _PRUNE_AT:  # forget hosts whose turn has long come
                self._next = {h: t for h, t in self._next.items() if t > now}
            earliest = self._next.get(host, now)
            if now < earliest:
                return earliest - now
            self._next[host] = now + interval
            return 0.0

    def wait(self, host: str, interval: float, stop: threading.Event) -> None:
        """Wait for the host's turn, unless the batch stops first."""
        if interval <= 0:
            return
        while (delay := self._turn(host, interval)) > 0:
            if stop.wait(delay):
                raise FetchError("the batch was stopped before this page was read")

    async def await_turn(self, host: str, interval: float) -> None:
        if interval <= 0:
            return
        # A time to wait for, not an event: another caller may take the turn meanwhile.
        while (delay := self._turn(host, interval)) > 0:  # noqa: ASYNC110
            await asyncio.sleep(delay)


class _Slot:
    """A host's semaphore and how many hold or wait for it."""

    def __init__(self, semaphore: Any) -> None:
        self.semaphore = semaphore
        self.users = 0


class HostSlots:
    """At most ``limit`` requests at once per host (``None``: no limit), for a whole
    session: threads share one count per host, each event loop has its own. A host's count
    is dropped when nobody holds or waits for it, so a million hosts do not stay in memory."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._threads: dict[str, _Slot] = {}
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Slot]] = (
            weakref.WeakKeyDictionary()
        )

    @contextmanager
    def hold(self, host: str) -> Iterator[None]:
        if self.limit is None:
            yield
            return
        with self._lock:
            slot = self._threads.get(host) or _Slot(threading.Semaphore(self.limit))
            self._threads[host] = slot
            slot.users += 1
        try:
            with slot.semaphore:
                yield
        finally:
            self._release(self._threads, host, slot)

    @asynccontextmanager
    async def ahold(self, host: str) -> AsyncIterator[None]:
        if self.limit is None:
            yield
            return
        with self._lock:
            hosts = self._loops.setdefault(asyncio.get_running_loop(), {})
            slot = hosts.get(host) or _Slot(asyncio.Semaphore(self.limit))
            hosts[host] = slot
            slot.users += 1
        try:
            async with slot.semaphore:
                yield
        finally:
            self._release(hosts, host, slot)

    def _release(self, hosts: dict[str, _Slot], host: str, slot: _Slot) -> None:
        with self._lock:
            slot.users -= 1
            if slot.users == 0 and hosts.get(host) is slot:
                del hosts[host]
