"""Fetch one model-chosen URL: redirects inside the jail, one deadline, a decoded-byte ceiling.

- Every hop is parsed by the jail (``parse_url``) and connected through the pinning transport,
  so a redirect to a refused URL — another scheme, a private or metadata address, a denied
  domain — is refused like the first URL. At most ``max_redirects`` hops; loops are named.
  Requests go straight to the transport: httpx's client would parse a ``Location`` header
  itself (and raise on ``data:`` or ``javascript:``) before the jail could read it.
- One deadline covers the whole fetch — connect, TLS, headers, body, every redirect — held at
  the socket (``deadline.py``), so a server trickling a byte a second cannot hold the call
  past it. Turning the bytes into text happens after the deadline, and is bounded by the
  size of what was read (``extract`` is linear in its input; see ``extract/bounds.py``).
- The read ceiling counts DECODED bytes while streaming (``body.py``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urljoin

import anyio
import httpcore
import httpx

from websearch_core.errors import FetchError, FetchTimeoutError, URLRefusedError
from websearch_core.fetch.content import Converted, convert, media_type_of
from websearch_core.models import Page, Redirect
from websearch_core.net.body import ACCEPT_ENCODING, BoundedBody, aread_bounded, read_bounded
from websearch_core.net.deadline import deadline_scope
from websearch_core.net.jail import DEFAULT, JailPolicy, Target, parse_url
from websearch_core.net.transport import (
    AsyncJailedTransport,
    JailedTransport,
    Resolver,
    async_proxy_transport,
    proxy_transport,
    resolve_checked,
    system_resolver,
)

__all__ = ["ACCEPT_ENCODING", "FetchLimits", "Fetched", "Fetcher", "page_of"]

_ACCEPT = "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5"
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class FetchLimits:
    """Budgets for one fetch. ``max_bytes`` may be lowered per call, never raised past
    ``max_bytes_cap``."""

    max_bytes: int = 2_000_000
    max_bytes_cap: int = 10_000_000
    deadline_s: float = 15.0
    max_redirects: int = 5

    def bytes_for(self, requested: int | None) -> int:
        if requested is None:
            return self.max_bytes
        return max(1_000, min(requested, self.max_bytes_cap))


@contextmanager
def _fetch_errors(deadline_s: float) -> Iterator[None]:
    """httpx's failures in words a model can act on; jail refusals pass through unchanged."""
    try:
        yield
    except httpx.TimeoutException:
        raise FetchTimeoutError(deadline_s) from None
    except httpx.ConnectError:
        raise FetchError(
            "could not connect to the site: it may be down; try again later", retryable=True
        ) from None
    except (httpx.RemoteProtocolError, httpx.LocalProtocolError):
        raise FetchError(
            "the site sent a malformed or oversized response (for example, huge headers)"
        ) from None
    except httpx.DecodingError:
        raise FetchError("the site sent a body that could not be decoded") from None
    except httpx.TransportError as exc:
        raise FetchError(f"the fetch failed ({type(exc).__name__})", retryable=True) from None


def _redirect_target(
    response: httpx.Response, current: Target, policy: JailPolicy
) -> Target | None:
    if response.status_code not in _REDIRECT_STATUSES:
        return None
    location = response.headers.get("location")
    if not location:
        return None
    try:
        following = urljoin(current.url, location.strip())
    except ValueError:  # e.g. an unclosed IPv6 bracket
        raise URLRefusedError(
            "malformed", "refused: the page redirects to a malformed URL; use another source"
        ) from None
    try:
        return parse_url(following, policy)
    except URLRefusedError as exc:
        raise URLRefusedError(exc.reason, f"{exc} (the page redirected there)") from None


def _target(url: str | Target, policy: JailPolicy) -> Target:
    return url if isinstance(url, Target) else parse_url(url, policy)


def _hop_request(target: Target, headers: dict[str, str], remaining: float) -> httpx.Request:
    return httpx.Request(
        "GET",
        target.url,
        headers=headers,
        extensions={"timeout": httpx.Timeout(remaining).as_dict()},
    )


class Fetcher:
    """Fetches pages through the jail. Holds one sync and one async transport, made lazily."""

    def __init__(
        self,
        *,
        policy: JailPolicy = DEFAULT,
        resolver: Resolver = system_resolver,
        limits: FetchLimits | None = None,
        verify: ssl.SSLContext | bool = True,
        proxy: str | None = None,
        user_agent: str = "websearch-pack",
        network_backend: httpcore.NetworkBackend | None = None,
        async_network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.policy = policy
        self.limits = limits or FetchLimits()
        self._resolver = resolver
        self._verify = verify
        self._proxy = proxy
        # Below the jail: where a checked address is actually connected (tests, custom stacks).
        self._network_backend = network_backend
        self._async_network_backend = async_network_backend
        self._headers = {
            "User-Agent": user_agent,
            "Accept": _ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        self._transport: httpx.BaseTransport | None = None
        self._atransports: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, httpx.AsyncBaseTransport
        ] = weakref.WeakKeyDictionary()
        # Threads (a batch, a search's link lookups) may ask for the transport at once: one
        # is made, so no connection pool is left behind unclosed.
        self._making = threading.Lock()

    # An operator's proxy (opt-in) resolves names itself, so the connection cannot be pinned;
    # each hop's addresses are still checked first, which stops plain SSRF but not a name that
    # changes its answer between our check and the proxy's lookup. Environment proxies are
    # never used.

    def _sync_transport(self) -> httpx.BaseTransport:
        with self._making:
            return self._made_sync_transport()

    def _made_sync_transport(self) -> httpx.BaseTransport:
        if self._transport is None:
            if self._proxy:
                self._transport = proxy_transport(self._proxy, verify=self._verify)
            else:
                self._transport = JailedTransport(
                    self.policy,
                    self._resolver,
                    verify=self._verify,
                    network_backend=self._network_backend,
                )
        return self._transport

    def _async_transport(self) -> httpx.AsyncBaseTransport:
        loop = asyncio.get_running_loop()
        with self._making:
            # Pooled connections belong to the loop that opened them: on another loop (a
            # second ``asyncio.run``, a thread with its own loop) they fail with "Event loop
            # is closed". So each loop has its own transport.
            transport = self._atransports.get(loop)
            if transport is None:
                transport = self._atransports[loop] = self._new_async_transport()
            return transport

    def _new_async_transport(self) -> httpx.AsyncBaseTransport:
        if self._proxy:
            return async_proxy_transport(self._proxy, verify=self._verify)
        return AsyncJailedTransport(
            self.policy,
            self._resolver,
            verify=self._verify,
            network_backend=self._async_network_backend,
        )

    def _before_hop(self, target: Target, deadline: float, budget: float) -> float:
        """The time left before this hop (``budget``, the whole fetch's, names a timeout)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchTimeoutError(budget)
        if self._proxy:
            resolve_checked(target.host, target.port, self.policy, self._resolver)
        return remaining

    def _after_hop(
        self, response: httpx.Response, target: Target, redirects: list[Redirect]
    ) -> Target | None:
        """The next hop's target, or ``None`` if this response is the page."""
        following = _redirect_target(response, target, self.policy)
        if following is None:
            return None
        redirects.append(Redirect(url=target.url, status=response.status_code))
        if following.url in {hop.url for hop in redirects}:
            raise FetchError("the site redirects in a loop: the page cannot be reached")
        if len(redirects) > self.limits.max_redirects:
            raise FetchError(
                f"more than {self.limits.max_redirects} redirects: the page cannot be reached"
            )
        return following

    def _deadline_s(self, deadline_s: float | None) -> float:
        """A caller may shorten the fetch's deadline, never lengthen it past the limit."""
        return (
            self.limits.deadline_s
            if deadline_s is None
            else min(deadline_s, self.limits.deadline_s)
        )

    def fetch(
        self, url: str | Target, *, max_bytes: int | None = None, deadline_s: float | None = None
    ) -> Page:
        return _page(self.fetch_raw(url, max_bytes=max_bytes, deadline_s=deadline_s))

    async def afetch(
        self, url: str | Target, *, max_bytes: int | None = None, deadline_s: float | None = None
    ) -> Page:
        fetched = await self.afetch_raw(url, max_bytes=max_bytes, deadline_s=deadline_s)
        # HTML conversion is CPU work: off the event loop, and outside the network deadline
        # (as in ``fetch``), so a page that arrived in time is not lost to its conversion.
        return await anyio.to_thread.run_sync(_page, fetched)

    def fetch_raw(
        self, url: str | Target, *, max_bytes: int | None = None, deadline_s: float | None = None
    ) -> Fetched:
        """The final response's head and bounded body, not yet converted. ``url`` may be a
        ``Target`` this fetcher's policy already accepted (it is not parsed twice)."""
        limit = self.limits.bytes_for(max_bytes)
        budget = self._deadline_s(deadline_s)
        started = time.monotonic()
        deadline = started + budget
        first = target = _target(url, self.policy)
        redirects: list[Redirect] = []
        transport = self._sync_transport()
        with deadline_scope(deadline), _fetch_errors(budget):
            while True:
                remaining = self._before_hop(target, deadline, budget)
                response = transport.handle_request(_hop_request(target, self._headers, remaining))
                try:
                    following = self._after_hop(response, target, redirects)
                    if following is None:
                        headers_at = time.monotonic()
                        body = read_bounded(response, limit)
                        break
                finally:
                    response.close()
                target = following
        return _fetched(first, target, redirects, response, body, started, headers_at)

    async def afetch_raw(
        self, url: str | Target, *, max_bytes: int | None = None, deadline_s: float | None = None
    ) -> Fetched:
        limit = self.limits.bytes_for(max_bytes)
        budget = self._deadline_s(deadline_s)
        started = time.monotonic()
        deadline = started + budget
        first = target = _target(url, self.policy)
        redirects: list[Redirect] = []
        transport = self._async_transport()
        try:
            # The socket-level deadline covers each step; the cancel scope also covers the
            # name lookup's worker thread and anything else that awaits.
            with (
                anyio.fail_after(budget),
                deadline_scope(deadline),
                _fetch_errors(budget),
            ):
                while True:
                    if self._proxy:  # the hop's check then resolves the name: off the loop
                        remaining = await anyio.to_thread.run_sync(
                            self._before_hop, target, deadline, budget
                        )
                    else:
                        remaining = self._before_hop(target, deadline, budget)
                    request = _hop_request(target, self._headers, remaining)
                    response = await transport.handle_async_request(request)
                    try:
                        following = self._after_hop(response, target, redirects)
                        if following is None:
                            headers_at = time.monotonic()
                            body = await aread_bounded(response, limit)
                            break
                    finally:
                        await response.aclose()
                    target = following
        except TimeoutError:
            raise FetchTimeoutError(budget) from None
        return _fetched(first, target, redirects, response, body, started, headers_at)

    # Where a redirect link leads (a grounded vendor's citation links): one request through
    # the jail, the Location read and checked by the jail's URL rules, never followed and no
    # body read. ``None`` when the answer is not a redirect.

    def locate(self, url: str, deadline: float) -> str | None:
        target = parse_url(url, self.policy)
        with deadline_scope(deadline), _fetch_errors(self.limits.deadline_s):
            remaining = self._before_hop(target, deadline, self.limits.deadline_s)
            request = _hop_request(target, self._headers, remaining)
            response = self._sync_transport().handle_request(request)
            try:
                following = _redirect_target(response, target, self.policy)
            finally:
                response.close()
        return following.url if following is not None else None

    async def alocate(self, url: str, deadline: float) -> str | None:
        target = parse_url(url, self.policy)
        try:
            with (
                anyio.fail_after(max(0.0, deadline - time.monotonic())),
                deadline_scope(deadline),
                _fetch_errors(self.limits.deadline_s),
            ):
                if self._proxy:
                    remaining = await anyio.to_thread.run_sync(
                        self._before_hop, target, deadline, self.limits.deadline_s
                    )
                else:
                    remaining = self._before_hop(target, deadline, self.limits.deadline_s)
                request = _hop_request(target, self._headers, remaining)
                response = await self._async_transport().handle_async_request(request)
                try:
                    following = _redirect_target(response, target, self.policy)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise FetchTimeoutError(self.limits.deadline_s) from None
        return following.url if following is not None else None

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    async def aclose(self) -> None:
        """Close the sync transport and this loop's; another loop's transport cannot be
        closed from here and is dropped (its sockets close when it is collected)."""
        self.close()
        transport = self._atransports.pop(asyncio.get_running_loop(), None)
        self._atransports.clear()
        if transport is not None:
            await transport.aclose()


@dataclass(frozen=True)
class Fetched:
    """One fetch before conversion: where it started and ended, the final response's head,
    and its body within the read ceiling."""

    first: Target
    final: Target
    redirects: list[Redirect]
    status: int
    reason: str
    content_type: str | None
    body: bytes
    truncated: bool
    max_bytes: int
    started: float
    headers_at: float

    @property
    def media_type(self) -> str:
        return media_type_of(self.content_type, self.body)

    def convert(self) -> Converted:
        return convert(self.body, self.content_type, self.final.url)


def _fetched(
    first: Target,
    final: Target,
    redirects: list[Redirect],
    response: httpx.Response,
    body: BoundedBody,
    started: float,
    headers_at: float,
) -> Fetched:
    return Fetched(
        first=first,
        final=final,
        redirects=redirects,
        status=response.status_code,
        reason=response.reason_phrase,
        content_type=response.headers.get("content-type"),
        body=bytes(body.data),
        truncated=body.truncated,
        max_bytes=body.limit,
        started=started,
        headers_at=headers_at,
    )


def _page(fetched: Fetched) -> Page:
    return page_of(fetched, fetched.convert())


def page_of(fetched: Fetched, converted: Converted) -> Page:
    """The ``Page`` of a fetch and its conversion (made here, or on a worker process)."""
    return Page(
        url=fetched.first.url,
        final_url=fetched.final.url,
        redirects=fetched.redirects,
        status=fetched.status,
        reason=fetched.reason,
        content_type=fetched.media_type,
        kind=converted.kind,
        charset=converted.charset,
        title=converted.title,
        content=converted.content,
        text=converted.text,
        bytes_read=len(fetched.body),
        truncated=fetched.truncated,
        max_bytes=fetched.max_bytes,
        fetched_at=dt.datetime.now(dt.timezone.utc),
        elapsed_ms=(time.monotonic() - fetched.started) * 1000,
        headers_ms=(fetched.headers_at - fetched.started) * 1000,
    )
