"""The bounded reader, byte by byte: the ceiling is exact, only offered encodings are read,
raw DEFLATE is forgiven only at the start, and a read between chunks respects the deadline.
"""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Iterator

import httpx
import pytest

from websearch_core.errors import FetchError
from websearch_core.net.body import _UNDECIDED_MAX, BoundedBody, read_bounded
from websearch_core.net.deadline import deadline_scope

TEXT = bytes(range(256)) * 40  # 10,240 bytes that do not compress to nothing


def _encoded(encoding: str, data: bytes) -> bytes:
    if encoding in ("gzip", "x-gzip"):
        return gzip.compress(data)
    if encoding == "deflate":
        return zlib.compress(data)
    if encoding == "raw-deflate":
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        return packer.compress(data) + packer.flush()
    return data


def _read(encoding: str, data: bytes, limit: int, chunk: int = 997) -> BoundedBody:
    wire = _encoded(encoding, data)
    body = BoundedBody("deflate" if encoding == "raw-deflate" else encoding, limit)
    for start in range(0, len(wire), chunk):
        if not body.feed(wire[start : start + chunk]):
            break
    return body


ENCODINGS = ["", "identity", "gzip", "x-gzip", "deflate", "raw-deflate"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_body_of_exactly_the_ceiling_is_whole_and_not_truncated(encoding: str) -> None:
    body = _read(encoding, TEXT, limit=len(TEXT))
    assert bytes(body.data) == TEXT
    assert body.truncated is False


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_one_byte_over_the_ceiling_is_cut_there_and_said(encoding: str) -> None:
    body = _read(encoding, TEXT, limit=len(TEXT) - 1)
    assert bytes(body.data) == TEXT[:-1]
    assert body.truncated is True


@pytest.mark.parametrize("chunk", [1, 7, 4096])
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
def test_decoding_is_the_same_whatever_the_chunking(encoding: str, chunk: int) -> None:
    assert bytes(_read(encoding, TEXT, limit=10**6, chunk=chunk).data) == TEXT


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "a" * 60])
def test_an_encoding_we_did_not_offer_is_refused(encoding: str) -> None:
    with pytest.raises(FetchError, match="an encoding we did not ask for") as caught:
        BoundedBody(encoding, 1000)
    assert f"({encoding[:40]})" in str(caught.value)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_corrupt_compressed_body_is_an_error_not_a_guess(encoding: str) -> None:
    body = BoundedBody(encoding, 1000)
    with pytest.raises(FetchError, match="corrupt compressed body"):
        body.feed(b"\x1f\x8b this is neither gzip nor any deflate" * 10)


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip"])
def test_raw_deflate_is_forgiven_only_when_labelled_deflate(encoding: str) -> None:
    # Servers mix up the two deflate formats under "deflate"; nobody sends raw DEFLATE as
    # gzip, and a gzip body that does not parse is corrupt, not another format.
    body = BoundedBody(encoding, 10**6)
    with pytest.raises(FetchError, match="corrupt compressed body"):
        body.feed(_encoded("raw-deflate", TEXT))


def test_gzip_is_read_as_gzip_only() -> None:
    # A zlib stream is not gzip, even if zlib could be told to guess between the two.
    with pytest.raises(FetchError, match="corrupt compressed body"):
        BoundedBody("gzip", 10**6).feed(zlib.compress(TEXT))


def test_gzip_with_the_full_32_kb_window_is_read() -> None:
    # Back-references 20 KB away, read in small chunks so that they reach into the window
    # rather than into the same call's output: a smaller window would refuse this stream.
    import random

    block = random.Random(7).randbytes(20_000)
    data = block + b"-" * 10 + block
    body = BoundedBody("gzip", 10**6)
    wire = gzip.compress(data)
    for start in range(0, len(wire), 64):
        assert body.feed(wire[start : start + 64])
    assert bytes(body.data) == data


def test_raw_deflate_is_forgiven_only_at_the_start() -> None:
    wire = zlib.compress(TEXT)
    broken = wire[:200] + b"\xff" * 50 + wire[250:]
    body = BoundedBody("deflate", 10**6)
    body.feed(broken[:100])  # a good zlib start: the raw fallback is closed from here on
    assert body.data
    with pytest.raises(FetchError, match="corrupt compressed body"):
        body.feed(broken[100:])


class _Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes], pause_s: float = 0.0) -> None:
        self._chunks = chunks
        self._pause_s = pause_s

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            time.sleep(self._pause_s)
            yield chunk


def test_read_bounded_reads_a_stream_outside_any_deadline() -> None:
    response = httpx.Response(200, stream=_Chunks([b"ab", b"cd"]))
    assert bytes(read_bounded(response, 10).data) == b"abcd"


def test_read_bounded_with_time_left_reads_to_the_end() -> None:
    response = httpx.Response(200, stream=_Chunks([b"ab", b"cd", b"ef"], pause_s=0.05))
    with deadline_scope(time.monotonic() + 0.8):
        assert bytes(read_bounded(response, 10).data) == b"abcdef"


def test_read_bounded_stops_between_chunks_once_the_deadline_passed() -> None:
    response = httpx.Response(200, stream=_Chunks([b"ab", b"cd"]))
    with deadline_scope(time.monotonic() - 0.01), pytest.raises(httpx.ReadTimeout):
        read_bounded(response, 10)


def test_what_is_kept_for_the_raw_deflate_guess_is_bounded() -> None:
    # A zlib stream can go on without output for as long as it likes (empty stored blocks):
    # the input kept in case it turns out to be raw DEFLATE stops growing at the bound.
    body = BoundedBody("deflate", 10**6)
    empty_blocks = b"\x00\x00\x00\xff\xff" * 1000
    stream = b"\x78\x9c" + empty_blocks * (_UNDECIDED_MAX // len(empty_blocks) + 2)
    fed = 0
    for size in (2, 60_000, _UNDECIDED_MAX - 60_002):  # kept whole up to the bound exactly ...
        assert body.feed(stream[fed : fed + size])
        fed += size
        assert body._undecided == stream[:fed]
    assert fed == _UNDECIDED_MAX
    assert body.feed(stream[fed : fed + 1])  # ... and given up one byte past it
    assert body._undecided is None
    assert body.data == b""
