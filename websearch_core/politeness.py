"""Per-host limits for bulk reads, inside one process: requests at once, and their spacing.

They hold within one worker. N processes (N Ray actors, N Spark tasks) reading the same
host each apply them, so the host sees N times the rate: partition URLs by host before the
fetch stage so that each host's URLs land in one worker (the README's "Scale out").
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

__all__ = ["HostPace", "HostSlots"]

_PRUNE_AT = 10_000


class HostPace:
    """Spaces request starts to one host at least ``interval`` seconds apart; shared by a
    session's bulk reads, from threads and event loops alike."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, host: str, interval: float) -> float:
        """Book the host's next start; how long to wait for it."""
        with self._lock:
            now = time.monotonic()
            if len(self._next) > _PRUNE_AT:  # forget hosts whose turn has long come
                self._next = {h: t for h, t in self._next.items() if t > now}
            start = max(now, self._next.get(host, now))
            self._next[host] = start + interval
            return start - now

    def wait(self, host: str, interval: float) -> None:
        if interval > 0:
            time.sleep(self.reserve(host, interval))

    async def await_turn(self, host: str, interval: float) -> None:
        if interval > 0:
            await asyncio.sleep(self.reserve(host, interval))


class HostSlots:
    """At most ``limit`` requests at once per host, for one batch (``None``: no limit)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._sync: dict[str, threading.BoundedSemaphore] = {}
        self._async: dict[str, asyncio.Semaphore] = {}

    @contextmanager
    def hold(self, host: str) -> Iterator[None]:
        if self.limit is None:
            yield
            return
        with self._lock:
            slot = self._sync.setdefault(host, threading.BoundedSemaphore(self.limit))
        with slot:
            yield

    @asynccontextmanager
    async def ahold(self, host: str) -> AsyncIterator[None]:
        if self.limit is None:
            yield
            return
        slot = self._async.setdefault(host, asyncio.Semaphore(self.limit))
        async with slot:
            yield
