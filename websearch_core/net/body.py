"""Reading a response body with a ceiling counted on DECODED bytes, for pages and providers.

We only offer the encodings we can bound while streaming (gzip, deflate) and decompress with a
``max_length`` on every call, so a gzip bomb stops at the ceiling with memory bounded by the
ceiling plus one chunk. Reads go through the transports' deadline (``deadline.py``), so a
trickled body ends at the deadline too.
"""

from __future__ import annotations

import zlib

import httpx

from websearch_core.errors import FetchError
from websearch_core.net.deadline import seconds_left

__all__ = ["ACCEPT_ENCODING", "BoundedBody", "aread_bounded", "read_bounded"]

#: Only encodings we can decompress with a bound on every step (no br, no zstd).
ACCEPT_ENCODING = "gzip, deflate"


#: "deflate" is decided as zlib-wrapped or raw by the first output; input that gave none yet
#: is kept to be read again as raw DEFLATE, but no more than this.
_UNDECIDED_MAX = 65_536


class BoundedBody:
    """Decoded body bytes up to ``limit``; decompression never produces more than fits."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False
        encoding = content_encoding.strip().lower()
        # Some servers send raw DEFLATE for "deflate"; browsers accept both, so do we. Until
        # the zlib reading has produced output, what it was given is kept here.
        self._undecided: bytearray | None = bytearray() if encoding == "deflate" else None
        if encoding in ("", "identity"):
            self._inflate: zlib._Decompress | None = None
        elif encoding in ("gzip", "x-gzip"):
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._inflate = zlib.decompressobj()
        else:
            raise FetchError(f"the server sent an encoding we did not ask for ({encoding[:40]})")

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
        """At most ``most`` decoded bytes of ``chunk``. What ``max_length`` holds back
        (``unconsumed_tail``) is never needed: it is left only when ``most`` bytes came out,
        one past the room, and then reading stops."""
        assert self._inflate is not None
        try:
            piece = self._inflate.decompress(chunk, most)
        except zlib.error:
            if self._undecided is None:
                raise FetchError("the server sent a corrupt compressed body") from None
            replay = bytes(self._undecided) + chunk
            self._undecided = None
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._inflate_bounded(replay, most)
        if self._undecided is not None:
            if piece or len(self._undecided) + len(chunk) > _UNDECIDED_MAX:
                self._undecided = None
            else:
                self._undecided += chunk
        return piece


def _past_deadline() -> None:
    # Our transports cut reads at the deadline themselves; a client the host passed in may
    # not, so it is also checked between chunks.
    left = seconds_left()
    if left is not None and left <= 0:
        raise httpx.ReadTimeout("the operation's deadline has passed")


def _in_memory(response: httpx.Response, limit: int) -> BoundedBody:
    # A response built in memory (a test double, an httpx.MockTransport) was decoded when it
    # was made; it still gets the ceiling.
    body = BoundedBody("", limit)
    body.feed(response.content)
    return body


def read_bounded(response: httpx.Response, limit: int) -> BoundedBody:
    """The body of a streamed ``response``, decoded, stopping at ``limit`` bytes."""
    if response.is_stream_consumed:
        return _in_memory(response, limit)
    body = BoundedBody(response.headers.get("content-encoding", ""), limit)
    for chunk in response.iter_raw():
        _past_deadline()
        if not body.feed(chunk):
            break
    return body


async def aread_bounded(response: httpx.Response, limit: int) -> BoundedBody:
    """``read_bounded`` for the event loop."""
    if response.is_stream_consumed:
        return _in_memory(response, limit)
    body = BoundedBody(response.headers.get("content-encoding", ""), limit)
    async for chunk in response.aiter_raw():
        _past_deadline()
        if not body.feed(chunk):
            break
    return body
