"""The pinning transport: resolve once, check every address, connect to a checked one.

The rebinding tests use a network backend below the jail that records which address it was
asked to connect to; where the first hop must succeed, it carries the connection to a
loopback server instead, so nothing ever leaves the machine.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from typing import Any

import httpcore
import pytest
import trustme

from tests.support.http_server import Reply, ScriptedServer
from websearch_core import FetchError, URLRefusedError, WebSearch
from websearch_core.fetch import Fetcher
from websearch_core.jail import DEFAULT, JailPolicy

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
