"""Running the app under uvicorn with the service's limits on slow and oversized clients.

uvicorn bounds the size of a request's head (``h11_max_incomplete_event_size``) and the open
connections (``limit_concurrency``), and drops idle kept-alive connections, but gives a client
that trickles its request line and headers as long as it likes: each such connection would
hold a place for good. ``HeadDeadline`` closes a connection whose request head has not arrived
within ``header_timeout_s`` of the connection opening or of the previous response.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from websearch_core.errors import ConfigurationError
from websearch_core.server.app import ServiceLimits, create_app, default_session

__all__ = ["HeadDeadline", "serve"]

logger = logging.getLogger("websearch_core.server")


class HeadDeadline(H11Protocol):
    """uvicorn's h11 protocol, with a deadline for each request's head."""

    header_timeout_s: float = 10.0
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        # Still waiting for a request line and headers (h11's IDLE: none has completed).
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            logger.info("connection closed: no request head within %gs", self.header_timeout_s)
            self.transport.close()


def uvicorn_config(app: Any, host: str, port: int, limits: ServiceLimits) -> uvicorn.Config:
    protocol = type("HeadDeadline", (HeadDeadline,), {"header_timeout_s": limits.header_timeout_s})
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        limit_concurrency=limits.max_connections,
        # An idle connection is closed after this long (and after header_timeout_s at the
        # latest, HeadDeadline): longer than the clients' own keep-alive expiry (httpx's
        # 5 s), or a client may send its next request as the service closes the connection.
        timeout_keep_alive=max(6, math.ceil(limits.header_timeout_s)),
        timeout_graceful_shutdown=limits.graceful_shutdown_s,
        access_log=False,  # one structured line per request instead, without query strings
        log_config=None,
        lifespan="on",
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port``, or a ``ConfigurationError`` saying why not (a
    name that does not resolve, a port in use or not ours to take)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError, OverflowError) as exc:
        why = getattr(exc, "strerror", None) or type(exc).__name__
        raise ConfigurationError(f"cannot listen on {host[:80]!r}: {why}; give an address "
                                 "such as 127.0.0.1 or 0.0.0.0") from None  # fmt: skip
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(
            f"cannot listen on {host}:{port} ({exc.strerror or type(exc).__name__}): choose "
            "another --port, or stop what holds this one"
        ) from None
    return sock


def serve(host: str = "127.0.0.1", port: int = 8080, limits: ServiceLimits | None = None) -> None:
    """Run the service until SIGINT or SIGTERM; requests in flight are allowed to finish.

    The session is made and the port bound before the server starts, so a bad configuration
    or a port in use is one ``ConfigurationError`` here rather than a failed start-up inside
    uvicorn.
    """
    limits = limits or ServiceLimits()
    session = default_session()
    sock = listening_socket(host, port)
    app = create_app(lambda: session, limits=limits)
    uvicorn.Server(uvicorn_config(app, host, port, limits)).run(sockets=[sock])
