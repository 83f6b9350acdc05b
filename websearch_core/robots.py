"""robots.txt for bulk reads (RFC 9309): read once per site, through the URL jail, cached.

Only bulk reads ask (``fetch_many``, the loaders, readers and retriever, ``bulk.py``): a
crawler reading thousands of pages is what robots.txt speaks to. An agent's single fetch is a
page a person or the model chose, like a browser's, and does not read it.

- The file is fetched like any page — jail, redirects, one deadline, a 512 kB ceiling — so a
  robots.txt that redirects to a private address is refused like a page would be.
- 2xx: its rules, for the ``websearch-pack`` product token (``*`` otherwise). 4xx: no rules
  (RFC 9309 §2.3.1.3). 429, 5xx: everything disallowed for now (§2.3.1.4), retryable. A
  refused redirect: no rules (the page's own fetch is jailed anyway). The site unreachable:
  the page fails with why, retryable, and the failure is remembered for a minute so a dead
  site's thousand URLs do not each wait out a deadline.
- Rules are kept for an hour (the RFC allows a day), for the last 4,096 sites.
- Concurrent reads of the same site wait for one fetch of its robots.txt, from threads and
  event loops alike.
"""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.robotparser
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from websearch_core.errors import FetchError, URLRefusedError, WebSearchError
from websearch_core.fetch import Fetched, Fetcher
from websearch_core.jail import Target

__all__ = ["AGENT", "RobotsCache"]

#: The product token matched against ``User-agent:`` lines.
AGENT = "websearch-pack"
_MAX_BYTES = 512_000
_RULES_TTL_S = 3600.0
_FAILURE_TTL_S = 60.0
_SITES = 4096
#: A ``Crawl-delay`` above this is read as this: a site asking for one page an hour still
#: gets its pages read, slowly, rather than the batch stalling for days.
_MAX_CRAWL_DELAY_S = 30.0


@dataclass(frozen=True)
class _Rules:
    parser: urllib.robotparser.RobotFileParser | None = None  # None: everything allowed
    #: Set: every page of the site fails with a new error from this (one error object raised
    #: on many threads would share one traceback).
    refusal: Callable[[], WebSearchError] | None = None

    def check(self, target: Target) -> float | None:
        """Raise if the page may not be read; else the site's crawl delay (seconds)."""
        if self.refusal is not None:
            raise self.refusal()
        if self.parser is None:
            return None
        if not self.parser.can_fetch(AGENT, target.url):
            raise URLRefusedError(
                "robots",
                f"refused: {_origin(target)}/robots.txt disallows this page for crawlers; a "
                "bulk read honours it (fetch the page on its own if a person asked for it)",
            )
        delay = self.parser.crawl_delay(AGENT)
        return min(float(delay), _MAX_CRAWL_DELAY_S) if delay else None


def _origin(target: Target) -> str:
    default = 443 if target.scheme == "https" else 80
    port = "" if target.port == default else f":{target.port}"
    host = f"[{target.host}]" if ":" in target.host else target.host
    return f"{target.scheme}://{host}{port}"


def _rules_of(fetched: Fetched, origin: str) -> tuple[_Rules, float]:
    status = fetched.status
    if 200 <= status < 300:
        parser = urllib.robotparser.RobotFileParser()
        parser.parse(fetched.body.decode("utf-8", errors="replace").splitlines())
        return _Rules(parser=parser), _RULES_TTL_S
    if status == 429 or status >= 500:

        def refusal() -> WebSearchError:
            refused = URLRefusedError(
                "robots",
                f"refused for now: {origin}/robots.txt answered HTTP {status}, and a crawler "
                "must then read nothing from the site (RFC 9309); try again later",
            )
            refused.retryable = True
            return refused

        return _Rules(refusal=refusal), _FAILURE_TTL_S
    return _Rules(), _RULES_TTL_S  # 4xx (or an unfollowed 3xx): no rules


class RobotsCache:
    """Per-site robots.txt rules for one session's bulk reads."""

    def __init__(self, fetcher: Fetcher) -> None:
        self._fetcher = fetcher
        self._lock = threading.Lock()
        self._known: OrderedDict[str, tuple[float, Future[_Rules]]] = OrderedDict()
        self._reading: dict[str, Future[_Rules]] = {}

    def check(self, target: Target) -> float | None:
        """Raise ``URLRefusedError`` (reason ``robots``) or ``FetchError`` if the site's
        robots.txt keeps this page from a bulk read; else the site's crawl delay."""
        origin = _origin(target)
        rules, mine = self._claim(origin)
        if mine:
            read: _Rules | None = None
            ttl = 0.0
            try:
                read, ttl = self._read(origin)
            finally:
                self._settle(origin, rules, read, ttl)
        return rules.result().check(target)

    async def acheck(self, target: Target) -> float | None:
        """``check`` for the event loop."""
        origin = _origin(target)
        rules, mine = self._claim(origin)
        if mine:
            read: _Rules | None = None
            ttl = 0.0
            try:
                read, ttl = await self._aread(origin)
            finally:  # cancelled: the others waiting are told, not left hanging
                self._settle(origin, rules, read, ttl)
            return read.check(target)
        return (await asyncio.wrap_future(rules)).check(target)

    def _claim(self, origin: str) -> tuple[Future[_Rules], bool]:
        """The site's rules, known or being read, or a promise this caller must keep."""
        with self._lock:
            known = self._known.get(origin)
            if known is not None and known[0] > time.monotonic():
                self._known.move_to_end(origin)
                return known[1], False
            reading = self._reading.get(origin)
            if reading is not None:
                return reading, False
            promise: Future[_Rules] = Future()
            self._reading[origin] = promise
            return promise, True

    def _settle(
        self, origin: str, promise: Future[_Rules], rules: _Rules | None, ttl: float
    ) -> None:
        with self._lock:
            if promise.done():
                return
            self._reading.pop(origin, None)
            if rules is None:
                promise.set_exception(
                    FetchError(f"reading {origin}/robots.txt was interrupted", retryable=True)
                )
                return
            self._known[origin] = (time.monotonic() + ttl, promise)
            self._known.move_to_end(origin)
            while len(self._known) > _SITES:
                self._known.popitem(last=False)
            promise.set_result(rules)

    def _read(self, origin: str) -> tuple[_Rules, float]:
        try:
            return _rules_of(
                self._fetcher.fetch_raw(f"{origin}/robots.txt", max_bytes=_MAX_BYTES), origin
            )
        except URLRefusedError:
            return _Rules(), _RULES_TTL_S
        except FetchError as exc:
            return _unreachable(origin, exc)

    async def _aread(self, origin: str) -> tuple[_Rules, float]:
        try:
            return _rules_of(
                await self._fetcher.afetch_raw(f"{origin}/robots.txt", max_bytes=_MAX_BYTES),
                origin,
            )
        except URLRefusedError:
            return _Rules(), _RULES_TTL_S
        except FetchError as exc:
            return _unreachable(origin, exc)


def _unreachable(origin: str, exc: FetchError) -> tuple[_Rules, float]:
    message = f"could not read {origin}/robots.txt: {exc}"
    return _Rules(refusal=lambda: FetchError(message, retryable=True)), _FAILURE_TTL_S
