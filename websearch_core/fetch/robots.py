"""robots.txt for bulk reads (RFC 9309): read once per site, through the URL jail, cached.

Only bulk reads ask (``fetch_many``, the loaders, readers and retriever, ``bulk.py``): a
crawler reading thousands of pages is what robots.txt speaks to. An agent's single fetch is a
page a person or the model chose, like a browser's, and does not read it.

- The file is fetched like any page — jail, redirects, one deadline, a 512 kB ceiling — so a
  robots.txt that redirects to a private address is refused like a page would be.
- 2xx: its rules (below). 4xx: no rules (§2.3.1.3). 429, 5xx: everything disallowed for now
  (§2.3.1.4), retryable. A refused redirect, a redirect loop: no rules (the page's own fetch
  is jailed anyway). The site unreachable: the page fails with why, retryable, and the
  failure is remembered for a minute so a dead site's thousand URLs do not each wait out a
  deadline.
- The rules (§2.2): the group whose ``User-agent`` is our product token ``websearch-pack``
  (case-insensitive; groups naming it twice are merged), else the ``*`` group, else none. The
  longest matching ``Allow``/``Disallow`` path wins, ``Allow`` on a tie; ``*`` matches any
  run of characters and a final ``$`` the end of the path. ``/robots.txt`` is always allowed.
  ``Crawl-delay`` (not in the RFC, widely used) spaces requests to the site, up to 30 s.
- Matching is linear in the path and the pattern, whatever the file holds: a pattern is its
  literal pieces between ``*``s, each found after the last with ``str.find`` (the leftmost
  match is always the right one for ``*``-only patterns), never a regular expression built
  from the file (1,000 ``*``s in one rule made one backtrack for minutes). A group keeps at
  most ``MAX_RULES`` rules, tried longest first, so most paths stop at the first match; a
  site with that many is checked, and its file parsed, off the event loop.
- Rules are kept for an hour (the RFC allows a day), for the last 4,096 sites.
- Concurrent reads of the same site wait for one fetch of its robots.txt, from threads and
  event loops alike, but never longer than a fetch's deadline: then they read it themselves.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio

from websearch_core.errors import FetchError, URLRefusedError, WebSearchError
from websearch_core.fetch.fetcher import Fetched, Fetcher
from websearch_core.net.jail import Target

__all__ = ["AGENT", "MAX_RULES", "RobotsCache", "RobotsRules"]

#: The product token matched against ``User-agent:`` lines.
AGENT = "websearch-pack"
_MAX_BYTES = 512_000
_RULES_TTL_S = 3600.0
_FAILURE_TTL_S = 60.0
_SITES = 4096
#: A ``Crawl-delay`` above this is read as this: a site asking for one page an hour still
#: gets its pages read, slowly, rather than the batch stalling for days.
_MAX_CRAWL_DELAY_S = 30.0
#: Rules kept for one group (the rest of a longer file is not read): big sites publish a few
#: hundred; 512 kB of one-character rules would be 100,000, each tried for every page.
MAX_RULES = 5_000
#: A site with more rules than this is checked on a worker thread, not the event loop's;
#: a body longer than ``_PARSE_OFF_LOOP_BYTES`` is parsed there too.
_CHECK_OFF_LOOP_RULES = 200
_PARSE_OFF_LOOP_BYTES = 32_000


@dataclass(frozen=True)
class _Pattern:
    """A path pattern as the literal pieces between its ``*``s (and whether ``$`` ends it)."""

    allow: bool
    length: int  # of the pattern as written: the longest match wins
    pieces: tuple[str, ...]
    anchored: bool

    @classmethod
    def of(cls, allow: bool, pattern: str) -> _Pattern:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        return cls(allow, len(pattern), tuple(body.split("*")), anchored)

    def matches(self, path: str) -> bool:
        first, *rest = self.pieces
        if not path.startswith(first):
            return False
        if not rest:  # no ``*``: a prefix, or (anchored) the whole path
            return not self.anchored or path == first
        position = len(first)
        *middle, last = rest
        for piece in middle:
            found = path.find(piece, position)
            if found < 0:
                return False
            position = found + len(piece)
        if self.anchored:  # the last piece ends the path, after everything before it
            return path.endswith(last) and len(path) - len(last) >= position
        return path.find(last, position) >= 0


@dataclass(frozen=True)
class RobotsRules:
    """One site's rules for our product token: ``(allow, path pattern)`` pairs and a delay."""

    rules: tuple[tuple[bool, str], ...] = ()
    crawl_delay: float | None = None
    #: The rules as patterns, longest first (``Allow`` first on a tie).
    patterns: tuple[_Pattern, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = sorted(
            (_Pattern.of(allow, pattern) for allow, pattern in self.rules),
            key=lambda p: (-p.length, not p.allow),
        )
        object.__setattr__(self, "patterns", tuple(patterns))

    @classmethod
    def parse(cls, text: str, agent: str = AGENT) -> RobotsRules:
        groups: dict[str, list[tuple[bool, str]]] = {}
        delays: dict[str, float] = {}
        agents: list[str] = []
        in_rules = False
        for raw in text.lstrip("\ufeff").splitlines():
            line = raw.partition("#")[0].strip()
            name, colon, value = line.partition(":")
            if not colon:
                continue
            name, value = name.strip().lower(), value.strip()
            if name == "user-agent":
                if in_rules:  # a user-agent line after rules starts a new group
                    agents, in_rules = [], False
                token = value.split("/")[0].strip().lower()
                agents.append(token)
                groups.setdefault(token, [])
            elif name in ("allow", "disallow") and agents:
                in_rules = True
                if value:  # an empty Disallow allows everything: no rule
                    for token in agents:
                        if len(groups[token]) < MAX_RULES:
                            groups[token].append((name == "allow", value))
            elif name == "crawl-delay" and agents:
                in_rules = True
                try:
                    delay = float(value)
                except ValueError:
                    continue
                if delay == delay and delay > 0:  # not NaN
                    for token in agents:
                        delays[token] = min(delay, _MAX_CRAWL_DELAY_S)
        chosen = agent if agent in groups else "*" if "*" in groups else None
        if chosen is None:
            return cls()
        return cls(tuple(groups[chosen]), delays.get(chosen))

    def allows(self, path: str) -> bool:
        """Whether ``path`` (with its query) may be read: the longest match wins, Allow on a
        tie; no match allows."""
        if path == "/robots.txt":
            return True
        for pattern in self.patterns:  # longest first: the first that matches decides
            if pattern.matches(path):
                return pattern.allow
        return True


def _path_of(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


@dataclass(frozen=True)
class _Verdict:
    rules: RobotsRules = field(default_factory=RobotsRules)
    #: Set: every page of the site fails with a new error from this (one error object raised
    #: on many threads would share one traceback).
    refusal: Callable[[], WebSearchError] | None = None

    @property
    def heavy(self) -> bool:
        """Whether checking a page costs enough to keep it off an event loop."""
        return len(self.rules.rules) > _CHECK_OFF_LOOP_RULES

    def check(self, target: Target) -> float | None:
        """Raise if the page may not be read; else the site's crawl delay (seconds)."""
        if self.refusal is not None:
            raise self.refusal()
        if not self.rules.allows(_path_of(target.url)):
            raise URLRefusedError(
                "robots",
                f"refused: {_origin(target)}/robots.txt disallows this page for crawlers; a "
                "bulk read honours it (fetch the page on its own if a person asked for it)",
            )
        return self.rules.crawl_delay


def _origin(target: Target) -> str:
    default = 443 if target.scheme == "https" else 80
    port = "" if target.port == default else f":{target.port}"
    host = f"[{target.host}]" if ":" in target.host else target.host
    return f"{target.scheme}://{host}{port}"


def _verdict_of(fetched: Fetched, origin: str) -> tuple[_Verdict, float]:
    status = fetched.status
    if 200 <= status < 300:
        text = fetched.body.decode("utf-8-sig", errors="replace")  # a BOM is not a rule
        return _Verdict(RobotsRules.parse(text)), _RULES_TTL_S
    if status == 429 or status >= 500:

        def refusal() -> WebSearchError:
            refused = URLRefusedError(
                "robots",
                f"refused for now: {origin}/robots.txt answered HTTP {status}, and a crawler "
                "must then read nothing from the site (RFC 9309); try again later",
            )
            refused.retryable = True
            return refused

        return _Verdict(refusal=refusal), _FAILURE_TTL_S
    return _Verdict(), _RULES_TTL_S  # 4xx (or an unfollowed 3xx): no rules


class RobotsCache:
    """Per-site robots.txt rules for one session's bulk reads."""

    def __init__(self, fetcher: Fetcher) -> None:
        self._fetcher = fetcher
        self._lock = threading.Lock()
        self._known: OrderedDict[str, tuple[float, _Verdict]] = OrderedDict()
        self._reading: dict[str, Future[_Verdict | None]] = {}
        # Waiting for another caller's read: at most one fetch's deadline, then read it here.
        self._wait_s = fetcher.limits.deadline_s + 1.0

    def check(self, target: Target) -> float | None:
        """Raise ``URLRefusedError`` (reason ``robots``) or ``FetchError`` if the site's
        robots.txt keeps this page from a bulk read; else the site's crawl delay."""
        origin = _origin(target)
        while True:
            known, promise = self._claim(origin)
            if known is not None:
                return known.check(target)
            if promise is None:  # ours to read
                verdict: _Verdict | None = None
                try:
                    verdict, ttl = self._read(origin)
                finally:
                    self._settle(origin, verdict, ttl if verdict else 0.0)
                return verdict.check(target)
            try:
                waited = promise.result(timeout=self._wait_s)
            except FutureTimeout:  # the reader is stuck (its loop blocked): read it here
                waited, _ = self._read(origin)
            if waited is not None:  # None: the reader was interrupted; claim it again
                return waited.check(target)

    async def acheck(self, target: Target) -> float | None:
        """``check`` for the event loop."""
        origin = _origin(target)
        while True:
            known, promise = self._claim(origin)
            if known is not None:
                return await _acheck(known, target)
            if promise is None:
                verdict: _Verdict | None = None
                try:
                    verdict, ttl = await self._aread(origin)
                finally:  # cancelled: the others waiting claim the read again
                    self._settle(origin, verdict, ttl if verdict else 0.0)
                return await _acheck(verdict, target)
            try:
                # shield: giving up waiting must not cancel the read the others wait for.
                waited = await asyncio.wait_for(
                    asyncio.shield(asyncio.wrap_future(promise)), self._wait_s
                )
            except asyncio.TimeoutError:
                waited, _ = await self._aread(origin)
            if waited is not None:
                return await _acheck(waited, target)

    def _claim(self, origin: str) -> tuple[_Verdict | None, Future[_Verdict | None] | None]:
        """The site's verdict if known; else the read to wait for; else (None, None): the
        caller must read it and ``_settle``."""
        with self._lock:
            known = self._known.get(origin)
            if known is not None and known[0] > time.monotonic():
                self._known.move_to_end(origin)
                return known[1], None
            reading = self._reading.get(origin)
            if reading is not None:
                return None, reading
            self._reading[origin] = Future()
            return None, None

    def _settle(self, origin: str, verdict: _Verdict | None, ttl: float) -> None:
        with self._lock:
            promise = self._reading.pop(origin, None)
            if verdict is not None:
                self._known[origin] = (time.monotonic() + ttl, verdict)
                self._known.move_to_end(origin)
                while len(self._known) > _SITES:
                    self._known.popitem(last=False)
        if promise is not None:
            promise.set_result(verdict)

    def _read(self, origin: str) -> tuple[_Verdict, float]:
        try:
            fetched = self._fetcher.fetch_raw(f"{origin}/robots.txt", max_bytes=_MAX_BYTES)
        except FetchError as exc:
            return _failed(origin, exc)
        return _verdict_of(fetched, origin)

    async def _aread(self, origin: str) -> tuple[_Verdict, float]:
        try:
            fetched = await self._fetcher.afetch_raw(f"{origin}/robots.txt", max_bytes=_MAX_BYTES)
        except FetchError as exc:
            return _failed(origin, exc)
        if len(fetched.body) > _PARSE_OFF_LOOP_BYTES:
            return await anyio.to_thread.run_sync(_verdict_of, fetched, origin)
        return _verdict_of(fetched, origin)


async def _acheck(verdict: _Verdict, target: Target) -> float | None:
    """``verdict.check`` for the event loop: a long list of rules is tried on a thread."""
    if verdict.heavy:
        return await anyio.to_thread.run_sync(verdict.check, target)
    return verdict.check(target)


def _failed(origin: str, exc: FetchError) -> tuple[_Verdict, float]:
    if isinstance(exc, URLRefusedError) or (type(exc) is FetchError and "redirect" in str(exc)):
        # The jail refused where it redirects, or it redirects in a loop or too often: read
        # as no robots.txt at all (RFC 9309 §2.3.1.2); every page is still jailed.
        return _Verdict(), _RULES_TTL_S
    # The site itself failed (no name, no connection, no answer): the page's error is that,
    # said as the page's own fetch would say it, not as a robots.txt problem.
    message = f"{exc} (asked first for {origin}/robots.txt, so the page was not requested)"
    return _Verdict(refusal=lambda: FetchError(message, retryable=True)), _FAILURE_TTL_S
