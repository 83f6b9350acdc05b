"""One monotonic deadline for a whole operation, enforced at the socket.

httpx's timeouts are per operation: a read timeout restarts with every byte, so a server that
trickles its headers or body a byte a second never trips it, and a fetch or a search can be
held for as long as the server likes. Here, the operation (a fetch with its redirects, a
search with its retry) sets one deadline with ``deadline_scope``; the network backends below
wrap every stream so that each connect, TLS handshake, read and write gets at most the time
left until that deadline, and fails with httpcore's timeout once it has passed.

The deadline lives in a ``ContextVar``, so it follows the operation: each thread of
``fetch_many`` and each asyncio task has its own. CPython bounds a TLS handshake by the socket
timeout as a whole (not per byte), so a handshake trickled byte by byte is cut too.
"""

from __future__ import annotations

import contextvars
import select
import socket
import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore

__all__ = [
    "AsyncDeadlineBackend",
    "DeadlineBackend",
    "bounded_timeout",
    "deadline_scope",
    "seconds_left",
]

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "websearch_deadline", default=None
)


@contextmanager
def deadline_scope(at: float) -> Iterator[None]:
    """Every network step inside this block ends by ``at`` (a ``time.monotonic()`` value).

    Nested scopes keep the earlier deadline: an inner operation cannot extend an outer one.
    """
    current = _DEADLINE.get()
    token = _DEADLINE.set(at if current is None else min(current, at))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """Seconds until the current deadline (may be negative), or ``None`` outside any scope."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


def bounded_timeout(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left; raises ``expired`` once the deadline passed."""
    left = seconds_left()
    if left is None:
        return timeout
    if left <= 0:
        raise expired("the operation's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, bounded_timeout(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, bounded_timeout(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _AsyncDeadlineStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: socket.socket | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, bounded_timeout(timeout, httpcore.ReadTimeout))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, bounded_timeout(timeout, httpcore.WriteTimeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        stream = await self._inner.start_tls(ssl_context, server_hostname, bounded)
        return _AsyncDeadlineStream(stream)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # httpcore asks this of every idle connection each time it hands out one (dozens
            # of times per request in a bulk read), and anyio answers by building a dict of
            # the stream's attributes, with a getpeername call, every time. The socket under
            # the stream never changes: look it up once, then poll it as httpcore does.
            if self._socket is None:
                self._socket = self._inner.get_extra_info("socket")
            if self._socket is not None:
                return _readable(self._socket)
        return self._inner.get_extra_info(info)


def _readable(sock: socket.socket) -> bool:
    """Whether a read would return at once (data, or the end of a closed connection)."""
    fd = sock.fileno()
    if fd < 0:  # closed: the next read returns the end
        return True
    if not hasattr(select, "poll"):  # Windows
        readable, _, _ = select.select([fd], [], [], 0)
        return bool(readable)
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class DeadlineBackend(httpcore.NetworkBackend):
    """A network backend whose connections never outlive the current ``deadline_scope``."""

    def __init__(self, inner: httpcore.NetworkBackend | None = None) -> None:
        self._inner = inner or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, bounded, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class AsyncDeadlineBackend(httpcore.AsyncNetworkBackend):
    """``DeadlineBackend`` for the event loop."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        stream = await self._inner.connect_tcp(host, port, bounded, local_address, socket_options)
        return _AsyncDeadlineStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        stream = await self._inner.connect_unix_socket(path, bounded, socket_options)
        return _AsyncDeadlineStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
