"""A real HTTP server on loopback whose answers a test scripts in advance.

Each path has a queue of responses; the last one repeats once the queue runs dry. Every
request is recorded (method, path, query, headers, body) so a test can assert on what was
actually sent over the wire.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Reply", "ScriptedServer", "Seen", "scripted_server"]


@dataclass
class Reply:
    """A scripted answer. With ``chunks``, the body is streamed (no Content-Length, the
    connection closes at the end) from a fresh iterator per request: endless bodies, trickles
    and bombs are written that way."""

    status: int = 200
    body: bytes | str | dict[str, object] | list[object] = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Callable[[], Iterable[bytes]] | None = None
    delay_s: float = 0.0  # before the status line: a slow server, not a slow body

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, dict | list):
            headers.setdefault("Content-Type", "application/json")
            return json.dumps(self.body).encode(), headers
        if isinstance(self.body, str):
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
            return self.body.encode(), headers
        return self.body, headers


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)  # when the request had arrived


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: a sixth simultaneous connect would wait for a SYN
    # retransmit (a second), which concurrency tests would read as slowness.
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up mid-answer (a read ceiling, a deadline) is what the tests
        # provoke on purpose; anything else is still reported.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class ScriptedServer:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.replies: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes; without this, Nagle plus delayed ACK
                # adds ~40 ms to every keep-alive response.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _answer(self) -> None:
                split = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                reply = server._record(
                    Seen(
                        method=self.command,
                        path=split.path,
                        query=dict(urllib.parse.parse_qsl(split.query)),
                        headers={k.lower(): v for k, v in self.headers.items()},
                        body=body,
                    )
                )
                payload, headers = reply.encoded()
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                self.send_response(reply.status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if reply.chunks is None:
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
                try:
                    for chunk in reply.chunks():
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: that is what the tests want

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: object) -> None:  # quiet test output
                pass

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.port = self._httpd.server_address[1]
        self.url = f"{scheme}://127.0.0.1:{self.port}"

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self.replies[path] = list(replies)

    def _record(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
            queue = self.replies.get(seen.path)
            if not queue:
                return Reply(404, "no reply scripted for this path")
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def hits(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path == path)

    def start(self) -> None:
        # A short poll interval: shutdown() waits up to one interval, once per test.
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def scripted_server(tls: ssl.SSLContext | None = None) -> Iterator[ScriptedServer]:
    server = ScriptedServer(tls)
    server.start()
    try:
        yield server
    finally:
        server.stop()
