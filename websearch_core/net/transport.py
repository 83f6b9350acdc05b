"""httpx transports whose connect step resolves, checks and pins.

The check and the connection must use the same address, or DNS rebinding slips between them
(the name answers a public address to the check and loopback to the connect). So the jail sits
at httpcore's network-backend depth: ``connect_tcp`` resolves the name once, refuses it if ANY
address is not allowed, and opens the socket to an address that was checked. TLS still runs
with the name as SNI and for certificate checks, and the Host header keeps the name, because
httpcore takes both from the request's origin, not from the socket. Every request the client
sends — each redirect hop included — connects through here, so nobody has to remember to call
the jail.

Environment proxies would resolve the name themselves, defeating the pin; these transports
never read them (see ``fetch/fetcher.py`` for the operator's explicit opt-in).

Every transport here also holds one deadline at the socket (``deadline.py``) and hands a
connection back to the pool only if its last response was read exactly: a server whose
``Content-Length`` is shorter than what it sent leaves bytes behind that the next request on
that connection would read as its own response.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import anyio
import certifi
import httpcore
import httpx

from websearch_core.errors import ConfigurationError, FetchError
from websearch_core.net.deadline import AsyncDeadlineBackend, DeadlineBackend, bounded_timeout
from websearch_core.net.jail import DEFAULT, JailPolicy, check_address, check_host_name, read_ip

__all__ = [
    "PROVIDER_LIMITS",
    "AsyncJailedTransport",
    "AsyncProviderTransport",
    "IPAddress",
    "JailedTransport",
    "ProviderTransport",
    "Resolver",
    "async_proxy_transport",
    "proxy_transport",
    "resolve_checked",
    "system_resolver",
]

IPAddress = Any  # ipaddress.IPv4Address | IPv6Address; Any keeps httpcore's signatures simple
#: ``(host, port) -> addresses``; blocking. Tests and hosts with their own DNS pass their own.
Resolver = Callable[[str, int], Sequence[IPAddress]]

#: One provider's connections (each provider has its own pool): a blend asks each engine
#: once per search, so this many searches at once reach one engine without waiting.
PROVIDER_LIMITS = httpx.Limits(max_connections=20, max_keepalive_connections=10)
#: Fetches: a bulk read keeps ``fetch_concurrency`` (16) pages in flight, often to one host.
#: With fewer idle connections kept than that, each response closed one and the next request
#: opened another (1,000 pages from one host took 612-1,000 connections). Each connection is
#: one origin's, to the address that was checked when it was opened; reuse never re-targets it.
_FETCH_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64)
#: getaddrinfo cannot be cancelled or given a timeout, so it runs on a few threads of the
#: transport's own (a name that hangs holds only that transport's) and the caller stops
#: waiting when its connect timeout is up.
RESOLVER_THREADS = 8


def system_resolver(host: str, port: int) -> list[IPAddress]:
    """The operating system's answer for ``host``, as addresses."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"the site's name could not be resolved ({exc.strerror})") from None
    except (OSError, UnicodeError) as exc:  # no resolver at all, a name the codec refuses
        raise FetchError(
            f"the site's name could not be resolved ({type(exc).__name__})", retryable=True
        ) from None
    addresses = []
    for info in infos:
        address = read_ip(str(info[4][0]))
        if address is not None and address not in addresses:
            addresses.append(address)
    return addresses


def resolve_checked(
    host: str, port: int, policy: JailPolicy, resolver: Resolver
) -> list[IPAddress]:
    """Every address of ``host``, each one allowed by ``policy``; else ``URLRefusedError``."""
    literal = read_ip(host)
    if literal is not None:
        addresses = [literal]
    else:
        check_host_name(host, policy)
        addresses = list(resolver(host, port))
        if not addresses:
            raise FetchError("the site's name has no addresses")
    for address in addresses:
        check_address(address, policy, host=host)
    return addresses


class _PinnedBackend(httpcore.NetworkBackend):
    def __init__(
        self, policy: JailPolicy, resolver: Resolver, inner: httpcore.NetworkBackend | None
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = DeadlineBackend(inner)
        self._resolving: ThreadPoolExecutor | None = None
        self._resolving_lock = threading.Lock()

    def _lookups(self) -> ThreadPoolExecutor:
        """The threads names are looked up on, made when first needed (again after
        ``close``: a fetch still running on another thread when the session was closed, or a
        session used again, looks its names up as before)."""
        with self._resolving_lock:
            if self._resolving is None:
                self._resolving = ThreadPoolExecutor(
                    RESOLVER_THREADS, thread_name_prefix="websearch-dns"
                )
            return self._resolving

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        if read_ip(host) is not None:  # nothing to look up: checked here, at once
            addresses = resolve_checked(host, port, self._policy, self._resolver)
        else:
            future = self._look_up(host, port)
            try:
                addresses = future.result(timeout=bounded_timeout(timeout, httpcore.ConnectTimeout))
            except FutureTimeout:
                raise httpcore.ConnectTimeout("name resolution timed out") from None
        return _connect_first(
            addresses,
            lambda address: self._inner.connect_tcp(
                str(address), port, timeout, local_address, socket_options
            ),
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise FetchError("unix sockets are not reachable through the URL jail")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)

    def _look_up(self, host: str, port: int) -> Future[list[IPAddress]]:
        for _ in range(2):
            try:
                return self._lookups().submit(
                    resolve_checked, host, port, self._policy, self._resolver
                )
            except RuntimeError:  # ``close`` shut that pool down between the two lines
                continue
        raise FetchError("the session was closed while this page was being fetched")

    def close(self) -> None:
        """The lookup threads end once the lookups asked for are answered: a fetch another
        thread is still running when the session closes gets its answer, not an error."""
        with self._resolving_lock:
            resolving, self._resolving = self._resolving, None
        if resolving is not None:
            resolving.shutdown(wait=False)


class _AsyncPinnedBackend(httpcore.AsyncNetworkBackend):
    def __init__(
        self, policy: JailPolicy, resolver: Resolver, inner: httpcore.AsyncNetworkBackend | None
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = AsyncDeadlineBackend(inner)

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if read_ip(host) is not None:  # nothing to look up: no thread hop
            addresses = resolve_checked(host, port, self._policy, self._resolver)
        else:
            limit = bounded_timeout(timeout, httpcore.ConnectTimeout)
            with anyio.move_on_after(limit) as scope:
                addresses = await anyio.to_thread.run_sync(
                    resolve_checked,
                    host,
                    port,
                    self._policy,
                    self._resolver,
                    abandon_on_cancel=True,
                )
            if scope.cancelled_caught:
                raise httpcore.ConnectTimeout("name resolution timed out")
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise FetchError("unix sockets are not reachable through the URL jail")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _connect_first(
    addresses: Sequence[IPAddress], connect: Callable[[IPAddress], httpcore.NetworkStream]
) -> httpcore.NetworkStream:
    """Try the checked addresses in order (IPv6 and IPv4 may both be offered)."""
    last: Exception | None = None
    for address in addresses:
        try:
            return connect(address)
        except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
            last = exc
    assert last is not None
    raise last


# Loading certifi's bundle takes ~50 ms of CPU (more on a busy machine), and each transport
# used to load it twice (httpx's own pool, then ours). The first search of a blend makes a
# transport per keyed engine on the event loop: measured, that held the loop for 0.63 s, and a
# burst's healthy engines missed a 0.8 s deadline. One context per process and setting is
# enough: a context is only read once configured (httpcore sets the same ALPN, http/1.1, on
# every connection), exactly as one httpx client already shares it across all its threads.
_CONTEXTS: dict[bool, ssl.SSLContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def _ssl_context(verify: ssl.SSLContext | bool) -> ssl.SSLContext:
    if isinstance(verify, ssl.SSLContext):
        return verify
    with _CONTEXTS_LOCK:
        context = _CONTEXTS.get(bool(verify))
        if context is None:
            context = ssl.create_default_context(cafile=certifi.where())
            if not verify:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            _CONTEXTS[bool(verify)] = context
        return context


# -- reuse a connection only after an exact read ---------------------------------------------


def _left_unread(connection: object) -> bool:
    """Whether the HTTP/1.1 parser under ``connection`` holds bytes no response claimed.

    httpcore keeps such bytes in h11's buffer and would parse them as the next response on
    this connection. The h11 state sits a few private attributes down (through a proxy's
    connection too); if it cannot be found, the answer is "yes": never reusing a connection
    costs a handshake, reusing a desynchronised one serves a page under the wrong URL.
    """
    layer: object | None = connection
    for _ in range(4):
        state = getattr(layer, "_h11_state", None)
        if state is not None:
            trailing = getattr(state, "trailing_data", None)
            return trailing is None or bool(trailing[0])
        layer = getattr(layer, "_connection", None)
        if layer is None:
            return False  # not connected yet: nothing to reuse
    return True


class _ExactConnection(httpcore.ConnectionInterface):
    """A pooled connection that counts as expired once bytes were left unread on it."""

    def __init__(self, inner: httpcore.ConnectionInterface) -> None:
        self._inner = inner

    def handle_request(self, request: httpcore.Request) -> httpcore.Response:
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()

    def info(self) -> str:
        return self._inner.info()

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return self._inner.can_handle_request(origin)

    def is_available(self) -> bool:
        return self._inner.is_available()

    def has_expired(self) -> bool:
        return self._inner.has_expired() or (self._inner.is_idle() and _left_unread(self._inner))

    def is_idle(self) -> bool:
        return self._inner.is_idle()

    def is_closed(self) -> bool:
        return self._inner.is_closed()

    def __repr__(self) -> str:
        return repr(self._inner)


class _AsyncExactConnection(httpcore.AsyncConnectionInterface):
    """``_ExactConnection`` for the event loop."""

    def __init__(self, inner: httpcore.AsyncConnectionInterface) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def info(self) -> str:
        return self._inner.info()

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return self._inner.can_handle_request(origin)

    def is_available(self) -> bool:
        return self._inner.is_available()

    def has_expired(self) -> bool:
        return self._inner.has_expired() or (self._inner.is_idle() and _left_unread(self._inner))

    def is_idle(self) -> bool:
        return self._inner.is_idle()

    def is_closed(self) -> bool:
        return self._inner.is_closed()

    def __repr__(self) -> str:
        return repr(self._inner)


# -- no request leaves a connection behind ---------------------------------------------------


class _TidyPool:
    """httpcore's pool bookkeeping (which connection each queued request gets), redone in
    one pass per reassignment, and taking back connections no request holds any more.

    - Orphans: httpcore hands a queued request a new connection and wakes it; a request
      cancelled or timed out between that hand-over and its first use (waiting for a slot
      in a burst) leaves the queue, but the connection it was given stays: never connected,
      so never idle, closed or expired, it holds a slot for good (encode/httpcore#1093, open
      against 1.0.9). Enough of them and every later request waits out its deadline against
      a healthy server. In use, a connection always has its request in the queue; one that
      is neither idle nor closed and belongs to no request is taken out and closed.
    - Cost: httpcore counts the pool's connections once per idle connection and matches
      every queued request against every connection, each time a request arrives or leaves
      (quadratic; measured at 28% of the service's event loop in a burst of scrapes). Here
      the count is kept as connections are removed, a request takes the first connection
      that fits, and only an idle connection is asked whether it expired (an HTTP/1.1
      connection in use has no keep-alive expiry; asking polls its socket).

    - Hand-overs: a connection handed to a queued request is still idle until that request's
      thread starts on it. httpcore may close it then (expired, or surplus idle) outside its
      lock, while the request already reads from it: "Bad file descriptor" in a burst (seen
      here in one run of six of 500 requests timing out). A connection some request holds is
      never closed or replaced here; it is closed when its request is done with it.

    The decisions are otherwise httpcore 1.0.9's: closed connections leave, expired and
    surplus idle ones are closed, then each queued request in order gets an available
    connection for its origin, else a new one if there is room, else replaces an idle one.
    """

    _requests: list[Any]
    _connections: list[Any]
    _max_connections: int
    _max_keepalive_connections: int

    create_connection: Callable[[httpcore.Origin], Any]  # httpcore's, under the classes below

    def _assign_requests_to_connections(self) -> list[Any]:
        held = {id(request.connection) for request in self._requests}
        closing: list[Any] = []
        kept: list[Any] = []
        count = len(self._connections)
        for connection in self._connections:
            if connection.is_closed():
                count -= 1
                continue
            if id(connection) in held:
                # Handed to a request that may be starting to use it on another thread: the
                # close would happen outside the pool's lock, under that request's read.
                doomed = False
            elif connection.is_idle():
                doomed = connection.has_expired() or count > self._max_keepalive_connections
            else:
                doomed = True  # an orphan
            if doomed:
                closing.append(connection)
                count -= 1
            else:
                kept.append(connection)
        self._connections[:] = kept
        for pool_request in self._requests:
            if not pool_request.is_queued():
                continue
            origin = pool_request.request.url.origin
            connection = next(
                (c for c in self._connections if c.can_handle_request(origin) and c.is_available()),
                None,
            )
            if connection is None:
                if len(self._connections) >= self._max_connections:
                    idle = next(
                        (c for c in self._connections if c.is_idle() and id(c) not in held),
                        None,
                    )
                    if idle is None:
                        continue  # it waits for a connection to come free
                    self._connections.remove(idle)
                    closing.append(idle)
                connection = self.create_connection(origin)
                self._connections.append(connection)
            pool_request.assign_to_connection(connection)
            held.add(id(connection))
        return closing


class _ExactPool(_TidyPool, httpcore.ConnectionPool):
    def create_connection(self, origin: httpcore.Origin) -> httpcore.ConnectionInterface:
        return _ExactConnection(super().create_connection(origin))


class _AsyncExactPool(_TidyPool, httpcore.AsyncConnectionPool):
    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        return _AsyncExactConnection(super().create_connection(origin))


class _ExactProxy(_TidyPool, httpcore.HTTPProxy):
    def create_connection(self, origin: httpcore.Origin) -> httpcore.ConnectionInterface:
        return _ExactConnection(super().create_connection(origin))


class _AsyncExactProxy(_TidyPool, httpcore.AsyncHTTPProxy):
    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        return _AsyncExactConnection(super().create_connection(origin))


def _pool_options(verify: ssl.SSLContext | bool, limits: httpx.Limits) -> dict[str, Any]:
    return {
        "ssl_context": _ssl_context(verify),
        "max_connections": limits.max_connections,
        "max_keepalive_connections": limits.max_keepalive_connections,
        "keepalive_expiry": limits.keepalive_expiry,
    }


def _proxy_options(proxy: str) -> dict[str, Any]:
    parsed = httpx.Proxy(url=proxy)
    if parsed.url.scheme not in ("http", "https"):
        raise ConfigurationError("the fetch proxy must be an http:// or https:// proxy URL")
    return {
        "proxy_url": httpcore.URL(
            scheme=parsed.url.raw_scheme,
            host=parsed.url.raw_host,
            port=parsed.url.port,
            target=parsed.url.raw_path,
        ),
        "proxy_auth": parsed.raw_auth,
        "proxy_headers": parsed.headers.raw,
        "proxy_ssl_context": parsed.ssl_context,
    }


# httpx builds its pool without a way to pass a network backend; these transports replace it
# with the same pool plus ours, before the first request. tests/test_transport.py fails if
# that stops working.


class JailedTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` whose every connection goes through the URL jail."""

    def __init__(
        self,
        policy: JailPolicy = DEFAULT,
        resolver: Resolver = system_resolver,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = _FETCH_LIMITS,
        network_backend: httpcore.NetworkBackend | None = None,
    ) -> None:
        super().__init__(verify=_ssl_context(verify), trust_env=False)
        self._backend = _PinnedBackend(policy, resolver, network_backend)
        self._pool = _ExactPool(**_pool_options(verify, limits), network_backend=self._backend)

    def close(self) -> None:
        super().close()
        self._backend.close()


class AsyncJailedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose every connection goes through the URL jail."""

    def __init__(
        self,
        policy: JailPolicy = DEFAULT,
        resolver: Resolver = system_resolver,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = _FETCH_LIMITS,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        super().__init__(verify=_ssl_context(verify), trust_env=False)
        self._pool = _AsyncExactPool(
            **_pool_options(verify, limits),
            network_backend=_AsyncPinnedBackend(policy, resolver, network_backend),
        )


class ProviderTransport(httpx.HTTPTransport):
    """The operator lane (provider APIs): no jail, but the deadline and the exact reuse.

    Each provider has one of its own (``search/bulkheads.py``): a provider that hangs fills
    only its own pool, never another's."""

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = PROVIDER_LIMITS,
        network_backend: httpcore.NetworkBackend | None = None,
    ) -> None:
        super().__init__(verify=_ssl_context(verify), trust_env=False)
        self._pool = _ExactPool(
            **_pool_options(verify, limits), network_backend=DeadlineBackend(network_backend)
        )


class AsyncProviderTransport(httpx.AsyncHTTPTransport):
    """``ProviderTransport`` for the event loop."""

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = PROVIDER_LIMITS,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        super().__init__(verify=_ssl_context(verify), trust_env=False)
        self._pool = _AsyncExactPool(
            **_pool_options(verify, limits),
            network_backend=AsyncDeadlineBackend(network_backend),
        )


def proxy_transport(proxy: str, *, verify: ssl.SSLContext | bool = True) -> httpx.HTTPTransport:
    """The operator's fetch proxy, with the deadline and the exact reuse."""
    transport = httpx.HTTPTransport(verify=_ssl_context(verify), trust_env=False)
    transport._pool = _ExactProxy(
        **_pool_options(verify, _FETCH_LIMITS),
        **_proxy_options(proxy),
        network_backend=DeadlineBackend(),
    )
    return transport


def async_proxy_transport(
    proxy: str, *, verify: ssl.SSLContext | bool = True
) -> httpx.AsyncHTTPTransport:
    """``proxy_transport`` for the event loop."""
    transport = httpx.AsyncHTTPTransport(verify=_ssl_context(verify), trust_env=False)
    transport._pool = _AsyncExactProxy(
        **_pool_options(verify, _FETCH_LIMITS),
        **_proxy_options(proxy),
        network_backend=AsyncDeadlineBackend(),
    )
    return transport
