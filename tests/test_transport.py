"""The pinning transport: resolve once, check every address, connect to a checked one.

The rebinding tests use a network backend below the jail that records which address it was
asked to connect to; where the first hop must succeed, it carries the connection to a
loopback server instead, so nothing ever leaves the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import ssl
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from typing import Any

import anyio
import httpcore
import httpx
import pytest
import trustme
from httpcore._sync.connection_pool import PoolRequest

from tests.support.http_server import Reply, ScriptedServer
from tests.support.raw_server import raw_server, read_request
from websearch_core import FetchError, URLRefusedError, WebSearch
from websearch_core.fetch.fetcher import Fetcher
from websearch_core.net.jail import DEFAULT, JailPolicy
from websearch_core.net.transport import (
    PROVIDER_LIMITS,
    AsyncProviderTransport,
    JailedTransport,
    ProviderTransport,
    _TidyPool,
    proxy_transport,
)

PUBLIC = "93.184.216.34"  # a public address that no test ever connects to


class Rebinder:
    """A DNS answer that changes: public on the first lookup, loopback on every later one."""

    def __init__(self) -> None:
        self.lookups = 0

    def __call__(self, host: str, port: int) -> list[Any]:
        self.lookups += 1
        return [ip_address(PUBLIC if self.lookups == 1 else "127.0.0.1")]


class RecordingBackend(httpcore.NetworkBackend):
    """Records every address the jail asks to connect to; refuses or forwards to loopback."""

    def __init__(self, forward_to: int | None = None) -> None:
        self.connects: list[tuple[str, int]] = []
        self._forward_to = forward_to
        self._real = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        self.connects.append((host, port))
        if self._forward_to is None:
            raise httpcore.ConnectError("test backend: no network here")
        return self._real.connect_tcp("127.0.0.1", self._forward_to, timeout)


class AsyncRecordingBackend(httpcore.AsyncNetworkBackend):
    def __init__(self) -> None:
        self.connects: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        raise httpcore.ConnectError("test backend: no network here")


def test_dns_rebinding_never_reaches_loopback(server: ScriptedServer) -> None:
    server.script("/", Reply(200, "internal secret"))
    rebinder, backend = Rebinder(), RecordingBackend()
    fetcher = Fetcher(resolver=rebinder, network_backend=backend)
    port = int(server.url.rsplit(":", 1)[1])
    with pytest.raises(FetchError, match="could not connect"):
        fetcher.fetch(f"http://rebind.example.com:{port}/")
    assert rebinder.lookups == 1  # resolved once; the connect used that answer
    assert backend.connects == [(PUBLIC, port)]
    assert server.seen == []


def test_second_lookup_answering_loopback_is_refused_before_connecting() -> None:
    rebinder, backend = Rebinder(), RecordingBackend()
    fetcher = Fetcher(resolver=rebinder, network_backend=backend)
    with pytest.raises(FetchError, match="could not connect"):
        fetcher.fetch("http://rebind.example.com/a")
    with pytest.raises(URLRefusedError, match="not public"):
        fetcher.fetch("http://rebind.example.com/b")  # the name now answers loopback
    assert backend.connects == [(PUBLIC, 80)]


def test_any_private_address_in_the_answer_refuses_the_name() -> None:
    backend = RecordingBackend()
    fetcher = Fetcher(
        resolver=lambda h, p: [ip_address(PUBLIC), ip_address("10.0.0.7")], network_backend=backend
    )
    with pytest.raises(URLRefusedError, match="not public"):
        fetcher.fetch("http://mixed.example.com/")
    assert backend.connects == []


async def test_async_path_pins_the_same_way() -> None:
    rebinder, backend = Rebinder(), AsyncRecordingBackend()
    fetcher = Fetcher(resolver=rebinder, async_network_backend=backend)
    with pytest.raises(FetchError, match="could not connect"):
        await fetcher.afetch("http://rebind.example.com/a")
    with pytest.raises(URLRefusedError):
        await fetcher.afetch("http://rebind.example.com/b")
    assert backend.connects == [(PUBLIC, 80)]


def public_then_local_session(server: ScriptedServer) -> tuple[Fetcher, list[tuple[str, int]]]:
    """A default-policy fetcher whose one public name is carried to the loopback ``server``,
    which redirects to itself by its loopback address."""
    port = int(server.url.rsplit(":", 1)[1])
    server.script("/", Reply(302, "", {"Location": f"http://127.0.0.1:{port}/secret"}))
    server.script("/secret", Reply(200, "internal secret"))
    backend = RecordingBackend(forward_to=port)
    fetcher = Fetcher(
        policy=DEFAULT, resolver=lambda h, p: [ip_address(PUBLIC)], network_backend=backend
    )
    return fetcher, backend.connects


def test_host_header_keeps_the_name(server: ScriptedServer) -> None:
    server.script("/", Reply(200, "hello", {"Content-Type": "text/plain"}))
    port = server.url.rsplit(":", 1)[1]
    ws = WebSearch(
        fetch_policy=JailPolicy(allow_private=True), resolver=lambda h, p: [ip_address("127.0.0.1")]
    )
    assert ws.fetch(f"http://pinned.test:{port}/").content == "hello"
    assert server.seen[-1].headers["host"] == f"pinned.test:{port}"


@pytest.fixture(scope="module")
def tls_server() -> Iterator[tuple[int, trustme.CA, list[str | None], list[str]]]:
    """An HTTPS server on loopback with a certificate for ``pinned.test`` only."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("pinned.test").configure_cert(context)
    server_names: list[str | None] = []
    hosts: list[str] = []

    def remember_sni(sock: Any, name: str | None, ctx: Any) -> None:
        server_names.append(name)

    context.sni_callback = remember_sni

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hosts.append(self.headers["Host"])
            body = b"over tls"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1], ca, server_names, hosts
    httpd.shutdown()


def test_tls_sni_and_certificate_use_the_name_not_the_pinned_address(tls_server: Any) -> None:
    port, ca, server_names, hosts = tls_server
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    ws = WebSearch(
        fetch_policy=JailPolicy(allow_private=True),
        resolver=lambda h, p: [ip_address("127.0.0.1")],
        verify=client_context,
    )
    page = ws.fetch(f"https://pinned.test:{port}/")
    assert page.content == "over tls"
    assert server_names[-1] == "pinned.test"
    assert hosts[-1] == f"pinned.test:{port}"


def test_tls_certificate_for_another_name_is_refused(tls_server: Any) -> None:
    port, ca, _, _ = tls_server
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    ws = WebSearch(
        fetch_policy=JailPolicy(allow_private=True),
        resolver=lambda h, p: [ip_address("127.0.0.1")],
        verify=client_context,
    )
    with pytest.raises(FetchError):
        ws.fetch(f"https://other.test:{port}/")


def test_an_untrusted_certificate_is_refused_by_default(tls_server: Any) -> None:
    # Nobody passed verify: the throwaway CA is trusted by nothing, so both a bare Fetcher
    # and a session refuse the page rather than read it.
    port, _, _, _ = tls_server
    resolver = lambda h, p: [ip_address("127.0.0.1")]  # noqa: E731
    policy = JailPolicy(allow_private=True)
    with pytest.raises(FetchError):
        Fetcher(policy=policy, resolver=resolver).fetch(f"https://pinned.test:{port}/")
    with pytest.raises(FetchError):
        WebSearch(fetch_policy=policy, resolver=resolver).fetch(f"https://pinned.test:{port}/")


def test_every_transport_shares_one_tls_context_per_setting(tls_server: Any) -> None:
    # Loading the CA bundle costs ~50 ms a time; each keyed engine's first search in a blend
    # made a transport (two loads each) on the event loop, which held a burst's loop for
    # 0.6 s. One context per setting now, and the non-verifying one still does not verify.
    pools = [
        ProviderTransport()._pool,
        AsyncProviderTransport()._pool,
        JailedTransport()._pool,
        proxy_transport("http://proxy.test:3128")._pool,
    ]
    contexts = {id(pool._ssl_context) for pool in pools}
    assert len(contexts) == 1
    assert next(iter(pools))._ssl_context.verify_mode is ssl.CERT_REQUIRED
    lax = ProviderTransport(verify=False)._pool._ssl_context
    assert lax is ProviderTransport(verify=False)._pool._ssl_context
    assert lax.verify_mode is ssl.CERT_NONE
    assert not lax.check_hostname
    port, _, _, _ = tls_server
    resolver = lambda h, p: [ip_address("127.0.0.1")]  # noqa: E731
    policy = JailPolicy(allow_private=True)
    lax_fetcher = Fetcher(policy=policy, resolver=resolver, verify=False)
    assert lax_fetcher.fetch(f"https://pinned.test:{port}/").content == "over tls"
    lax_fetcher.close()
    with pytest.raises(FetchError):  # and the shared verifying one still refuses
        Fetcher(policy=policy, resolver=resolver).fetch(f"https://pinned.test:{port}/")


# -- no cancellation leaks a pool slot ---------------------------------------------------------
#
# Every provider has a pool of ``PROVIDER_LIMITS.max_connections`` connections. A request
# cancelled or timed out at any stage must give back what it held: measured before the fix,
# a burst of searches cancelled at a blend's deadline left connections "CONNECTING" for good
# (encode/httpcore#1093), and the service then waited out every later search's deadline.

SLOTS = PROVIDER_LIMITS.max_connections
STAGES = ("waiting for a slot", "connecting", "sending", "reading the head", "reading the body")


class PoolServer:
    """An HTTP/1.1 server on the test's own event loop: ``/ok`` answers at once, ``/hang``
    never answers, ``/trickle`` sends its head and then a byte a second, ``/close`` answers
    after 0.3 s and closes the connection, and ``/together`` answers only once ``SLOTS`` of
    them are in flight at the same time."""

    def __init__(self) -> None:
        self.together = 0
        self._all_here = asyncio.Event()
        self.port = 0
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1]
                if path == b"/hang":
                    await reader.read()  # until the client gives up
                    return
                if path == b"/trickle":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                    while True:
                        writer.write(b".")
                        await writer.drain()
                        await asyncio.sleep(1)
                if path == b"/close":  # answers late, on a connection it then closes
                    await asyncio.sleep(0.3)
                    writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n")
                    writer.write(b"Content-Length: 2\r\n\r\nok")
                    await writer.drain()
                    writer.close()
                    return
                if path == b"/together":
                    self.together += 1
                    if self.together >= SLOTS:
                        self._all_here.set()
                    await self._all_here.wait()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()


class _SlowStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream, backend: SlowBackend) -> None:
        self._inner = inner
        self._backend = backend

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await asyncio.sleep(self._backend.send_delay)
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class SlowBackend(httpcore.AsyncNetworkBackend):
    """Below the pool: connects and sends after a delay the test sets."""

    def __init__(self) -> None:
        self.connect_delay = 0.0
        self.send_delay = 0.0
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        await asyncio.sleep(self.connect_delay)
        return _SlowStream(await self._real.connect_tcp(host, port, timeout), self)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def assert_pool_whole(pool: Any) -> None:
    """Nothing queued, and every connection idle (free to reuse) or closed."""
    held = [c for c in pool.connections if not c.is_idle() and not c.is_closed()]
    assert held == [], pool
    assert pool._requests == [], pool  # httpcore's queue: a leaked entry would hold a slot


async def assert_every_slot_free(client: httpx.AsyncClient, server: PoolServer) -> None:
    """``SLOTS`` requests on ``SLOTS`` connections at once: the server answers none until
    all of them are in flight, so one leaked slot and this waits out its bound."""
    server.together = 0
    with anyio.fail_after(20):  # a generous bound: the answers come as soon as all arrive
        replies = await asyncio.gather(
            *(client.get(f"http://127.0.0.1:{server.port}/together") for _ in range(SLOTS))
        )
    assert [reply.text for reply in replies] == ["ok"] * SLOTS


@pytest.mark.parametrize("stage", STAGES)
async def test_500_cancellations_leave_the_pool_whole(stage: str) -> None:
    server, backend = PoolServer(), SlowBackend()
    await server.start()
    client = httpx.AsyncClient(transport=AsyncProviderTransport(network_backend=backend))
    base = f"http://127.0.0.1:{server.port}"
    path = {"reading the head": "/hang", "reading the body": "/trickle"}.get(stage, "/ok")
    backend.connect_delay = 5.0 if stage == "connecting" else 0.0
    backend.send_delay = 5.0 if stage == "sending" else 0.0
    rng = random.Random(stage)
    blockers: list[asyncio.Task[Any]] = []
    if stage == "waiting for a slot":  # every slot held by a request that never ends
        blockers = [asyncio.ensure_future(client.get(f"{base}/hang")) for _ in range(SLOTS)]
        await asyncio.sleep(0.2)

    async def cancelled(i: int) -> None:
        with anyio.move_on_after(rng.uniform(0, 0.05)):
            await client.get(f"{base}{path}", timeout=30)
        if blockers and i % 25 == 0:  # a slot handed over while waiters are being cancelled
            blockers[i // 25].cancel()

    try:
        await asyncio.gather(*(cancelled(i) for i in range(500)))
        for blocker in blockers:
            blocker.cancel()
        await asyncio.gather(*blockers, return_exceptions=True)
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert_pool_whole(pool)
        backend.connect_delay = backend.send_delay = 0.0
        await assert_every_slot_free(client, server)
        assert_pool_whole(pool)
    finally:
        await client.aclose()
        await server.stop()


async def test_a_waiter_cancelled_as_it_is_handed_a_connection_gives_it_back() -> None:
    # The exact race: the request holding the only slot ends (on a connection the server
    # closes), the pool hands a new connection to the one waiting, and that one is cancelled
    # before it runs again, in the same turn of the event loop.
    server = PoolServer()
    await server.start()
    transport = AsyncProviderTransport(limits=httpx.Limits(max_connections=1))
    client = httpx.AsyncClient(transport=transport)
    base = f"http://127.0.0.1:{server.port}"
    waiter: asyncio.Task[Any] | None = None

    async def hold_then_cancel_the_waiter() -> None:
        await client.get(f"{base}/close")
        assert waiter is not None
        waiter.cancel()  # no await between the hand-over and this

    holder = asyncio.ensure_future(hold_then_cancel_the_waiter())
    await asyncio.sleep(0.05)
    waiter = asyncio.ensure_future(client.get(f"{base}/ok"))
    try:
        await holder
        await asyncio.gather(waiter, return_exceptions=True)
        assert waiter.cancelled()
        assert_pool_whole(transport._pool)
        with anyio.fail_after(10):
            assert (await client.get(f"{base}/ok")).text == "ok"
    finally:
        await client.aclose()
        await server.stop()


def test_sync_requests_timing_out_in_a_burst_leave_the_pool_whole() -> None:
    # Threads cannot be cancelled, but a request whose deadline passes while it waits for a
    # slot leaves the queue the same way.
    def handler(conn: socket.socket) -> None:
        while head := read_request(conn):
            if b" /hang " in head:
                conn.recv(1)  # until the client gives up
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    rng = random.Random(7)
    with raw_server(handler) as running, httpx.Client(transport=ProviderTransport()) as client:

        def one(i: int) -> None:
            path = "/hang" if i % 4 == 0 else "/ok"
            with contextlib.suppress(httpx.TimeoutException):
                client.get(f"{running.url}{path}", timeout=rng.uniform(0.001, 0.05))

        with ThreadPoolExecutor(64) as threads:
            list(threads.map(one, range(500)))
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert_pool_whole(pool)
        with ThreadPoolExecutor(SLOTS) as threads:
            replies = list(threads.map(lambda _: client.get(f"{running.url}/ok"), range(SLOTS)))
        assert [reply.text for reply in replies] == ["ok"] * SLOTS
        assert_pool_whole(pool)


class _Connection:
    """A pooled connection as the pool's bookkeeping sees it: idle until its request starts."""

    def __init__(self, origin: httpcore.Origin, *, idle: bool = True) -> None:
        self.origin, self.idle, self.closed = origin, idle, False

    def is_idle(self) -> bool:
        return self.idle and not self.closed

    def is_available(self) -> bool:
        return self.is_idle()

    def is_closed(self) -> bool:
        return self.closed

    def has_expired(self) -> bool:
        return False

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self.origin


class _Bookkeeping(_TidyPool):
    def __init__(self, connections: list[Any], *, most: int, idle_kept: int) -> None:
        self._connections, self._requests = connections, []
        self._max_connections, self._max_keepalive_connections = most, idle_kept

    def create_connection(self, origin: httpcore.Origin) -> Any:
        return _Connection(origin, idle=False)

    def arrives(self, url: str) -> PoolRequest:
        pool_request = PoolRequest(httpcore.Request("GET", url))
        self._requests.append(pool_request)
        for connection in self._assign_requests_to_connections():
            connection.closed = True  # what httpcore does next, outside its lock
        return pool_request


def test_a_connection_handed_to_a_request_is_never_closed_before_it_is_used() -> None:
    # The hand-over window: an idle connection is given to a queued request, whose thread
    # has not started on it yet (it still looks idle). Another request arriving then must not
    # close it as surplus idle, nor replace it to open one for another origin: httpcore closes
    # outside its lock, and the first request would read from a closed socket ("Bad file
    # descriptor", seen in one of six runs of the burst test above).
    a = httpcore.Request("GET", "http://a.test/").url.origin
    idle = _Connection(a)
    pool = _Bookkeeping([idle, _Connection(a, idle=False)], most=3, idle_kept=2)
    pool._requests.append(busy := PoolRequest(httpcore.Request("GET", "http://a.test/busy")))
    busy.assign_to_connection(pool._connections[1])
    first = pool.arrives("http://a.test/")
    assert first.connection is idle
    pool.arrives("http://c.test/")  # a third connection: now more than two idle may be kept
    third = pool.arrives("http://b.test/")  # a pass while ``first`` has not started
    assert not idle.is_closed()
    assert idle in pool._connections
    assert third.is_queued()  # the pool is full, and the idle connection is not free
    idle.idle = False  # ``first`` starts on it
    assert first.connection is idle
