"""A TCP server on loopback that answers each connection with a handler a test writes.

For what a well-behaved HTTP server cannot do: trickle a status line a byte at a time, stall
a TLS handshake, or send more bytes than its ``Content-Length`` says.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["RawServer", "raw_server", "read_request"]

Handler = Callable[[socket.socket], None]


def read_request(conn: socket.socket) -> bytes:
    """One request's head (up to the blank line), or b"" if the client hung up."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return b""
        data += chunk
    return data


class RawServer:
    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self._open: list[socket.socket] = []
        self._stopped = threading.Event()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            self._handler(conn)
        except OSError:
            pass  # the client hung up mid-answer: what these tests provoke
        finally:
            conn.close()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def start(self) -> None:
        threading.Thread(target=self._serve, daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.close()


@contextmanager
def raw_server(handler: Handler) -> Iterator[RawServer]:
    server = RawServer(handler)
    server.start()
    try:
        yield server
    finally:
        server.stop()
