"""Bulk reads: many pages through a pipeline of two stages with limits of their own.

The network stage holds at most ``concurrency`` pages on the wire; the conversion stage runs
on ``convert_workers`` processes (``workers.py``). A page's network slot is freed when its
body has arrived, so slow sites do not idle the cores and big pages do not idle the network.
Each URL is jailed, checked against its site's robots.txt (``robots.py``), spaced and
limited per host (``politeness.py``), then fetched. Results come back in input order, a
failure in its page's place, and never stop the batch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from websearch_core.boundary import boundary, detached
from websearch_core.errors import InvalidRequestError, WebSearchError
from websearch_core.fetch.content import Converted, convert
from websearch_core.fetch.fetcher import Fetched, page_of
from websearch_core.fetch.politeness import HostPace, HostSlots
from websearch_core.fetch.robots import RobotsCache
from websearch_core.fetch.service import FetchService, PageKey
from websearch_core.models import Page
from websearch_core.redact import Redactor

__all__ = ["BulkReader", "urls_of"]

Outcome = tuple[str, Page | WebSearchError]


def urls_of(urls: object) -> Iterable[Any]:
    """A batch's ``urls``: one URL, or any iterable of them, read lazily (a long stream is
    never held in memory). Each item is checked when it is fetched, so one bad item is that
    item's failure; only an argument that is not a URL or an iterable at all is refused.
    Numpy scalars (a data engine's column) are made Python ones."""
    if isinstance(urls, str):
        return [urls]
    if isinstance(urls, Iterable) and not isinstance(urls, bytes | Mapping):
        return (item.item() if hasattr(item, "item") else item for item in urls)
    raise InvalidRequestError("urls must be a URL or a list of URLs, such as ['https://go.dev/']")


@dataclasses.dataclass(frozen=True)
class _Batch:
    """One bulk read's limits, and its stop (set when the caller leaves it early)."""

    concurrency: int
    robots: bool
    interval: float  # seconds between request starts to one host
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)


@dataclasses.dataclass(frozen=True)
class _Fetched:
    """A page between the stages: fetched, not yet converted."""

    key: PageKey
    fetched: Fetched


@dataclasses.dataclass(frozen=True)
class BulkDefaults:
    """The settings a batch falls back on."""

    concurrency: int
    robots: bool
    per_host_rate: float | None


class BulkReader:
    """``fetch_many``/``afetch_many``."""

    def __init__(
        self,
        pages: FetchService,
        robots: RobotsCache,
        pace: HostPace,
        host_slots: HostSlots,
        defaults: BulkDefaults,
        redactor: Redactor,
    ) -> None:
        self._pages = pages
        self._robots = robots
        self._pace = pace
        self.host_slots = host_slots
        self._defaults = defaults
        self._redactor = redactor

    def fetch_many(self, urls: object, concurrency: object, robots: object) -> Iterator[Outcome]:
        batch = self._batch(concurrency, robots)
        self._expect(urls)
        window: deque[tuple[str, Future[Page]]] = deque()
        # The batch's own threads, shut down when it ends: no other batch waits behind it.
        pool = ThreadPoolExecutor(max_workers=batch.concurrency)
        try:
            for url in urls_of(urls):
                fetched = pool.submit(self._fetch, url, batch)
                window.append((url, self._then_convert(fetched)))
                if len(window) >= 2 * batch.concurrency:
                    yield _outcome(*window.popleft())
            while window:
                yield _outcome(*window.popleft())
        finally:
            # Left early (a break, an exception): pages not started are not fetched, and no
            # thread keeps sleeping through a host's crawl delay.
            batch.stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

    async def afetch_many(
        self, urls: object, concurrency: object, robots: object
    ) -> AsyncIterator[Outcome]:
        batch = self._batch(concurrency, robots)
        self._expect(urls)
        network = asyncio.Semaphore(batch.concurrency)

        async def one(url: str) -> Page | WebSearchError:
            try:
                fetched = await self._afetch(url, batch, network)
                if isinstance(fetched, Page):
                    return fetched
                return await self._aconverted(fetched)
            except WebSearchError as exc:
                return detached(exc)

        window: deque[tuple[str, asyncio.Task[Page | WebSearchError]]] = deque()
        try:
            for url in urls_of(urls):
                window.append((url, asyncio.ensure_future(one(url))))
                if len(window) >= 2 * batch.concurrency:
                    url_done, task = window.popleft()
                    yield url_done, await task
            while window:
                url_done, task = window.popleft()
                yield url_done, await task
        finally:
            for _, task in window:
                task.cancel()

    def _expect(self, urls: object) -> None:
        """Tell the conversion workers how big the batch is, when it is a list (the loaders'
        and readers' are): a large one starts them all now, not after its first pages."""
        if isinstance(urls, Sized) and not isinstance(urls, str | bytes | Mapping):
            try:
                size = len(urls)
            except Exception:  # a caller's own container: the size is only a hint
                return
            self._pages.converters.expect(size)

    def _batch(self, concurrency: object, robots: object) -> _Batch:
        if concurrency is None:
            concurrency = self._defaults.concurrency
        if robots is None:
            robots = self._defaults.robots
        if not isinstance(robots, bool):
            raise InvalidRequestError("robots must be True or False")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise InvalidRequestError("concurrency must be a whole number of at least 1")
        rate = self._defaults.per_host_rate
        return _Batch(concurrency=concurrency, robots=robots, interval=1 / rate if rate else 0.0)

    # The stages run on batch threads and in callbacks, outside the facade's boundary: each
    # holds its own, so only a WebSearchError ever reaches the caller.

    def _fetch(self, url: object, batch: _Batch) -> _Fetched | Page:
        """One URL's network stage, on a batch thread: the memo's page, or the raw fetch."""
        with boundary("fetch", self._redactor):
            _, target, key, hit = self._pages.recall(url, None, 0)
            if hit is not None:
                return hit
            with self.host_slots.hold(target.host):
                delay = self._robots.check(target) if batch.robots else None
                self._pace.wait(target.host, max(batch.interval, delay or 0.0), batch.stop)
                fetched = self._pages.fetcher.fetch_raw(target)
            return _Fetched(key, fetched)

    async def _afetch(
        self, url: object, batch: _Batch, network: asyncio.Semaphore
    ) -> _Fetched | Page:
        with boundary("fetch", self._redactor):
            _, target, key, hit = self._pages.recall(url, None, 0)
            if hit is not None:
                return hit
            async with self.host_slots.ahold(target.host), network:
                # Inside the network slot, as a batch thread is: a turn booked while waiting
                # for a slot would have passed by the time one is free.
                delay = await self._robots.acheck(target) if batch.robots else None
                await self._pace.await_turn(target.host, max(batch.interval, delay or 0.0))
                fetched = await self._pages.fetcher.afetch_raw(target)
            return _Fetched(key, fetched)

    def _then_convert(self, fetching: Future[_Fetched | Page]) -> Future[Page]:
        """The page of a network stage's future: converted on a worker once the body is in."""
        page: Future[Page] = Future()
        converters = self._pages.converters

        def resolve(make: Callable[[], Page]) -> None:
            try:
                with boundary("fetch", self._redactor):
                    page.set_result(make())
            except BaseException as exc:
                page.set_exception(exc)

        def fetched(done: Future[_Fetched | Page]) -> None:
            try:
                outcome = done.result()
                if isinstance(outcome, Page):
                    page.set_result(outcome)
                elif converters.worth_a_worker(*_conversion_of(outcome.fetched)[:2]):
                    converting = converters.submit(*_conversion_of(outcome.fetched))
                    converting.add_done_callback(
                        lambda done: resolve(lambda: self._page(outcome, done.result()))
                    )
                else:  # small or not HTML: cheaper here than a round trip
                    resolve(lambda: self._page(outcome, outcome.fetched.convert()))
            except BaseException as exc:  # never leave the page's future unresolved
                if not page.done():
                    page.set_exception(exc)

        fetching.add_done_callback(fetched)
        return page

    async def _aconverted(self, outcome: _Fetched) -> Page:
        fetched = outcome.fetched
        with boundary("fetch", self._redactor):
            converted = await self._pages.off_the_loop(fetched, convert, *_conversion_of(fetched))
            return self._page(outcome, converted)

    def _page(self, outcome: _Fetched, converted: Converted) -> Page:
        return self._pages.remember(outcome.key, page_of(outcome.fetched, converted), 0)


def _conversion_of(fetched: Fetched) -> tuple[bytes, str | None, str]:
    return fetched.body, fetched.content_type, fetched.final.url


def _outcome(url: str, future: Future[Page]) -> Outcome:
    try:
        return url, future.result()
    except WebSearchError as exc:
        return url, detached(exc)
