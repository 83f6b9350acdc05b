"""Fetch one model-chosen URL: redirects inside the jail, one deadline, a decoded-byte ceiling.

- Every hop is parsed by the jail (``parse_url``) and connected through the pinning transport,
  so a redirect to a refused URL — another scheme, a private or metadata address, a denied
  domain — is refused like the first URL. At most ``max_redirects`` hops; loops are named.
- One deadline covers the whole fetch, redirects and body included; it is checked between
  body chunks, so a server trickling a byte a second cannot hold the call past it.
- The read ceiling counts DECODED bytes while streaming. We only offer the encodings we can
  bound while streaming (gzip, deflate) and decompress with a ``max_length`` on every call, so
  a gzip bomb stops at the ceiling with memory bounded by the ceiling plus one chunk.
"""

from __future__ import annotations

import datetime as dt
import ssl
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import anyio
import httpcore
import httpx

from websearch_core.content import convert, media_type_of
from websearch_core.errors import FetchError, FetchTimeoutError
from websearch_core.jail import DEFAULT, JailPolicy, Target, parse_url
from websearch_core.models import Page, Redirect
from websearch_core.transport import (
    AsyncJailedTransport,
    JailedTransport,
    Resolver,
    resolve_checked,
    system_resolver,
)

__all__ = ["ACCEPT_ENCODING", "FetchLimits", "Fetcher"]

#: Only encodings we can decompress with a bound on every step (no br, no zstd).
ACCEPT_ENCODING = "gzip, deflate"
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


class _BoundedBody:
    """Decoded body bytes up to ``limit``; decompression never produces more than fits."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False
        encoding = content_encoding.strip().lower()
        self._raw_deflate_fallback = encoding == "deflate"
        if encoding in ("", "identity"):
            self._inflate: zlib._Decompress | None = None
        elif encoding in ("gzip", "x-gzip"):
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._inflate = zlib.decompressobj()
        else:
            raise FetchError(f"the server sent an encoding we did not ask for ({encoding})")

    def feed(self, chunk: bytes) -> bool:
        """Add a raw chunk; False once the ceiling is reached (stop reading)."""
        room = self.limit - len(self.data)
        if self._inflate is None:
            piece = chunk[: room + 1]
        else:
            piece = self._inflate_bounded(chunk, room + 1)
        if len(piece) > room:
            self.data += piece[:room]
            self.truncated = True
            return False
        self.data += piece
        return True

    def _inflate_bounded(self, chunk: bytes, most: int) -> bytes:
        assert self._inflate is not None
        try:
            piece = self._inflate.decompress(chunk, most)
        except zlib.error:
            if not self._raw_deflate_fallback or self.data:
                raise FetchError("the server sent a corrupt compressed body") from None
            # Some servers send raw DEFLATE for "deflate"; browsers accept both, so do we.
            self._raw_deflate_fallback = False
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._inflate_bounded(chunk, most)
        self._raw_deflate_fallback = False
        while self._inflate.unconsumed_tail and len(piece) < most:
            piece += self._inflate.decompress(self._inflate.unconsumed_tail, most - len(piece))
        return piece


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
    return parse_url(urljoin(current.url, location.strip()), policy)


class Fetcher:
    """Fetches pages through the jail. Holds one sync and one async client, made lazily."""

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
        self._client_options: dict[str, Any] = {
            "trust_env": False,
            "follow_redirects": False,  # every hop goes through parse_url first (_after_hop)
            "headers": {
                "User-Agent": user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        }
        self._client: httpx.Client | None = None
        self._aclient: httpx.AsyncClient | None = None

    # An operator's proxy (opt-in) resolves names itself, so the connection cannot be pinned;
    # each hop's addresses are still checked first, which stops plain SSRF but not a name that
    # changes its answer between our check and the proxy's lookup. Environment proxies are
    # never used: httpx ignores them once a transport is given, and we always give one.

    def _sync_client(self) -> httpx.Client:
        if self._client is None:
            transport: httpx.BaseTransport
            if self._proxy:
                transport = httpx.HTTPTransport(proxy=self._proxy, verify=self._verify)
            else:
                transport = JailedTransport(
                    self.policy,
                    self._resolver,
                    verify=self._verify,
                    network_backend=self._network_backend,
                )
            self._client = httpx.Client(transport=transport, **self._client_options)
        return self._client

    def _async_client(self) -> httpx.AsyncClient:
        if self._aclient is None:
            transport: httpx.AsyncBaseTransport
            if self._proxy:
                transport = httpx.AsyncHTTPTransport(proxy=self._proxy, verify=self._verify)
            else:
                transport = AsyncJailedTransport(
                    self.policy,
                    self._resolver,
                    verify=self._verify,
                    network_backend=self._async_network_backend,
                )
            self._aclient = httpx.AsyncClient(transport=transport, **self._client_options)
        return self._aclient

    def _before_hop(self, target: Target, deadline: float) -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchTimeoutError(self.limits.deadline_s)
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

    def fetch(self, url: str, *, max_bytes: int | None = None) -> Page:
        limit = self.limits.bytes_for(max_bytes)
        started = time.monotonic()
        deadline = started + self.limits.deadline_s
        first = target = parse_url(url, self.policy)
        redirects: list[Redirect] = []
        client = self._sync_client()
        while True:
            remaining = self._before_hop(target, deadline)
            with _fetch_errors(self.limits.deadline_s):
                request = client.build_request("GET", target.url, timeout=remaining)
                response = client.send(request, stream=True)
                try:
                    following = self._after_hop(response, target, redirects)
                    if following is None:
                        headers_at = time.monotonic()
                        body = _BoundedBody(response.headers.get("content-encoding", ""), limit)
                        for chunk in response.iter_raw():
                            if time.monotonic() > deadline:
                                raise FetchTimeoutError(self.limits.deadline_s)
                            if not body.feed(chunk):
                                break
                        return _page(first, target, redirects, response, body, started, headers_at)
                finally:
                    response.close()
            target = following

    async def afetch(self, url: str, *, max_bytes: int | None = None) -> Page:
        limit = self.limits.bytes_for(max_bytes)
        started = time.monotonic()
        deadline = started + self.limits.deadline_s
        first = target = parse_url(url, self.policy)
        redirects: list[Redirect] = []
        client = self._async_client()
        try:
            with anyio.fail_after(self.limits.deadline_s):
                while True:
                    if self._proxy:  # the hop's check then resolves the name: off the loop
                        remaining = await anyio.to_thread.run_sync(
                            self._before_hop, target, deadline
                        )
                    else:
                        remaining = self._before_hop(target, deadline)
                    with _fetch_errors(self.limits.deadline_s):
                        request = client.build_request("GET", target.url, timeout=remaining)
                        response = await client.send(request, stream=True)
                        try:
                            following = self._after_hop(response, target, redirects)
                            if following is None:
                                headers_at = time.monotonic()
                                encoding = response.headers.get("content-encoding", "")
                                body = _BoundedBody(encoding, limit)
                                async for chunk in response.aiter_raw():
                                    if not body.feed(chunk):
                                        break
                                break
                        finally:
                            await response.aclose()
                    target = following
        except TimeoutError:
            raise FetchTimeoutError(self.limits.deadline_s) from None
        # HTML conversion is CPU work: off the event loop, and outside the network deadline
        # (as in ``fetch``), so a page that arrived in time is not lost to its conversion.
        return await anyio.to_thread.run_sync(
            _page, first, target, redirects, response, body, started, headers_at
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        self.close()
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None


def _page(
    first: Target,
    final: Target,
    redirects: list[Redirect],
    response: httpx.Response,
    body: _BoundedBody,
    started: float,
    headers_at: float,
) -> Page:
    raw = bytes(body.data)
    content_type = response.headers.get("content-type")
    converted = convert(raw, content_type, final.url)
    return Page(
        url=first.url,
        final_url=final.url,
        redirects=redirects,
        status=response.status_code,
        reason=response.reason_phrase,
        content_type=media_type_of(content_type, raw),
        kind=converted.kind,
        charset=converted.charset,
        title=converted.title,
        content=converted.content,
        bytes_read=len(raw),
        truncated=body.truncated,
        max_bytes=body.limit,
        fetched_at=dt.datetime.now(dt.timezone.utc),
        elapsed_ms=(time.monotonic() - started) * 1000,
        headers_ms=(headers_at - started) * 1000,
    )
