"""A hostile web on loopback: every class of failure from the hardening audit, at its root.

Deadlines are measured (a 2 s deadline must end within 2 s plus a generous margin, whatever
the server does), memory is bounded with tracemalloc, and every failure must be one of the
package's typed errors. Speed is never asserted; only that the promised bound holds.
"""

from __future__ import annotations

import gzip
import ipaddress
import logging
import socket
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.fake_ddgs import FakeDDGS
from tests.support.http_server import Reply, ScriptedServer
from tests.support.pdf import content_bomb, xref_bomb
from tests.support.raw_server import RawServer, raw_server, read_request
from websearch_core import (
    FetchError,
    FetchTimeoutError,
    InternalError,
    InvalidRequestError,
    JailPolicy,
    Page,
    ProviderResponseError,
    ProviderUnavailableError,
    URLRefusedError,
    WebSearch,
    WebSearchError,
    extract,
)

LOOPBACK = JailPolicy(allow_private=True)
#: How far past its deadline a call may return: thread wake-ups and a loaded CI machine.
MARGIN_S = 1.5
CANARY = "canary-key-0f1e2d3c4b5a69788796a5b4"


def loopback_resolver(host: str, port: int) -> list[object]:
    return [ipaddress.ip_address("127.0.0.1")]


def session(**kwargs: object) -> WebSearch:
    options: dict[str, object] = {"fetch_policy": LOOPBACK, "resolver": loopback_resolver}
    options.update(kwargs)
    return WebSearch(**options)  # type: ignore[arg-type]


def trickle(head: bytes, then: bytes = b"x", every_s: float = 0.1, most: int = 600) -> Callable:
    """A handler that sends ``head`` at once, then ``then`` a byte at a time, slowly."""

    def handle(conn: socket.socket) -> None:
        if not read_request(conn):
            return
        conn.sendall(head)
        for _ in range(most):
            conn.sendall(then)
            time.sleep(every_s)

    return handle


HEADER_TRICKLE = trickle(b"HTTP/1.1 200 OK\r\nX-Slow: ")
BODY_TRICKLE = trickle(
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n"
)


def _stall_tls(conn: socket.socket) -> None:
    # A TLS record header announcing 16 kB, then its bytes one at a time: the handshake is
    # always waiting for "just one more byte".
    conn.recv(4096)
    conn.sendall(b"\x16\x03\x03\x40\x00")
    for _ in range(600):
        conn.sendall(b"\x02")
        time.sleep(0.1)


@pytest.fixture
def trickling_headers() -> Iterator[RawServer]:
    with raw_server(HEADER_TRICKLE) as server:
        yield server


# -- 3. one deadline holds everywhere ---------------------------------------------------------


@pytest.mark.parametrize("handler", [HEADER_TRICKLE, BODY_TRICKLE], ids=["headers", "body"])
def test_a_trickling_page_ends_at_the_fetch_deadline(handler: Callable) -> None:
    with raw_server(handler) as server:
        started = time.monotonic()
        with pytest.raises(FetchTimeoutError, match="within 2 s"):
            session(fetch_timeout=2).fetch(f"{server.url}/slow")
        assert time.monotonic() - started < 2 + MARGIN_S


@pytest.mark.parametrize("handler", [HEADER_TRICKLE, BODY_TRICKLE], ids=["headers", "body"])
async def test_a_trickling_page_ends_at_the_async_fetch_deadline(handler: Callable) -> None:
    with raw_server(handler) as server:
        started = time.monotonic()
        with pytest.raises(FetchTimeoutError):
            await session(fetch_timeout=2).afetch(f"{server.url}/slow")
        assert time.monotonic() - started < 2 + MARGIN_S


def test_a_trickled_tls_handshake_ends_at_the_deadline() -> None:
    with raw_server(_stall_tls) as server:
        started = time.monotonic()
        with pytest.raises(FetchTimeoutError):
            session(fetch_timeout=2).fetch(f"https://127.0.0.1:{server.port}/")
        assert time.monotonic() - started < 2 + MARGIN_S


def test_a_deadline_covers_a_redirect_chain_of_slow_hops() -> None:
    def handle(conn: socket.socket) -> None:
        while request := read_request(conn):
            time.sleep(0.8)
            following = request.split(b" ", 2)[1] + b"x"
            conn.sendall(
                b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % following
            )

    with raw_server(handle) as server:
        started = time.monotonic()
        with pytest.raises(FetchTimeoutError):
            session(fetch_timeout=2, fetch_max_redirects=10).fetch(f"{server.url}/a")
        assert time.monotonic() - started < 2 + MARGIN_S


def test_a_trickling_provider_ends_at_the_search_deadline(trickling_headers: RawServer) -> None:
    ws = WebSearch("searxng", searxng_url=trickling_headers.url, timeout=2)
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError, match="no answer within 2 s"):
        ws.search("q")
    assert time.monotonic() - started < 2 + MARGIN_S


async def test_a_trickling_provider_ends_at_the_async_search_deadline(
    trickling_headers: RawServer,
) -> None:
    ws = WebSearch("searxng", searxng_url=trickling_headers.url, timeout=2)
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError, match="no answer within 2 s"):
        await ws.asearch("q")
    assert time.monotonic() - started < 2 + MARGIN_S


def test_the_search_deadline_includes_the_retry_and_its_wait(server: ScriptedServer) -> None:
    # A 503 asking for 1.5 s, then a slow answer: the retry would end past the deadline.
    server.script(
        "/search",
        Reply(503, "busy", {"Retry-After": "1.5"}),
        Reply(200, {"results": []}, delay_s=5),
    )
    ws = WebSearch("searxng", searxng_url=server.url, timeout=2, max_retry_wait=5)
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError):
        ws.search("q")
    assert time.monotonic() - started < 2 + MARGIN_S


@pytest.fixture
def slow_ddgs(monkeypatch: pytest.MonkeyPatch) -> type[FakeDDGS]:
    FakeDDGS.reset([{"title": "T", "href": "https://e.org/", "body": "b"}])
    FakeDDGS.delay_s = 5
    monkeypatch.setattr("ddgs.DDGS", FakeDDGS)
    return FakeDDGS


def test_a_blocking_provider_is_abandoned_at_the_deadline(slow_ddgs: type[FakeDDGS]) -> None:
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError, match="no answer within 1 s"):
        WebSearch("ddgs", timeout=1).search("q")
    assert time.monotonic() - started < 1 + MARGIN_S


async def test_a_blocking_provider_is_abandoned_at_the_async_deadline(
    slow_ddgs: type[FakeDDGS],
) -> None:
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError, match="no answer within 1 s"):
        await WebSearch("ddgs", timeout=1).asearch("q")
    assert time.monotonic() - started < 1 + MARGIN_S


# -- 4. provider answers are bounded like pages -----------------------------------------------


def _endless_json() -> Iterator[bytes]:
    yield b'{"results": ['
    while True:
        yield b'{"title": "t", "url": "https://e.org/", "content": "c"},' * 200


def _gzip_bomb(megabytes: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * 1_000_000
    return b"".join([*(packer.compress(block) for _ in range(megabytes)), packer.flush()])


def _peak_mb(call: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 1e6


def test_an_endless_provider_answer_stops_at_the_ceiling(server: ScriptedServer) -> None:
    server.script(
        "/search", Reply(200, headers={"Content-Type": "application/json"}, chunks=_endless_json)
    )
    ws = WebSearch("searxng", searxng_url=server.url, provider_max_bytes=1_000_000)

    def search() -> None:
        with pytest.raises(ProviderResponseError, match="more than 1,000,000 bytes"):
            ws.search("q")

    assert _peak_mb(search) < 20


async def test_an_endless_provider_answer_stops_at_the_ceiling_async(
    server: ScriptedServer,
) -> None:
    server.script(
        "/search", Reply(200, headers={"Content-Type": "application/json"}, chunks=_endless_json)
    )
    ws = WebSearch("searxng", searxng_url=server.url, provider_max_bytes=1_000_000)
    with pytest.raises(ProviderResponseError, match="more than 1,000,000 bytes"):
        await ws.asearch("q")


def test_a_gzip_bomb_from_a_provider_inflates_only_to_the_ceiling(server: ScriptedServer) -> None:
    bomb = _gzip_bomb(300)  # ~0.3 MB that inflates to 300 MB
    server.script(
        "/search",
        Reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"}),
    )
    ws = WebSearch("searxng", searxng_url=server.url, provider_max_bytes=2_000_000)

    def search() -> None:
        with pytest.raises(ProviderResponseError, match="more than 2,000,000 bytes"):
            ws.search("q")

    assert _peak_mb(search) < 30


def test_a_provider_is_asked_only_for_encodings_we_can_bound(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    WebSearch("searxng", searxng_url=server.url).search("q")
    assert server.seen[0].headers["accept-encoding"] == "gzip, deflate"


# -- 5. a connection is reused only after an exact read ---------------------------------------


def _desyncing(conn: socket.socket) -> None:
    while request := read_request(conn):
        path = request.split(b" ", 2)[1]
        if path == b"/first":
            # Content-Length says 5; a whole second response rides behind it.
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\nsmuggle"
            )
        else:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nsecond"
            )


def test_bytes_beyond_content_length_never_answer_the_next_fetch() -> None:
    with raw_server(_desyncing) as server:
        ws = session()
        assert ws.fetch(f"{server.url}/first").content == "hello"
        assert ws.fetch(f"{server.url}/second").content == "second"


async def test_bytes_beyond_content_length_never_answer_the_next_async_fetch() -> None:
    with raw_server(_desyncing) as server:
        ws = session()
        assert (await ws.afetch(f"{server.url}/first")).content == "hello"
        assert (await ws.afetch(f"{server.url}/second")).content == "second"


def _exact(conn: socket.socket) -> None:
    while request := read_request(conn):
        body = request.split(b" ", 2)[1]
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )


def test_an_exactly_read_connection_is_reused() -> None:
    with raw_server(_exact) as server:
        ws = session()
        for path in ("/a", "/b", "/c"):
            assert ws.fetch(f"{server.url}{path}").content == path
        assert server.connections == 1


async def test_an_exactly_read_connection_is_reused_async() -> None:
    with raw_server(_exact) as server:
        ws = session()
        for path in ("/a", "/b", "/c"):
            assert (await ws.afetch(f"{server.url}{path}")).content == path
        assert server.connections == 1


def test_a_provider_connection_is_reused_only_after_an_exact_read() -> None:
    def handle(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
                b'{"results": []}'
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
            )

    with raw_server(handle) as server:
        ws = WebSearch("searxng", searxng_url=server.url)
        ws.search("one")
        assert ws.search("two").results == []
        assert server.connections == 2


# -- 1. library exceptions become typed errors at their root ---------------------------------


@pytest.mark.parametrize(
    "location",
    [
        "data:text/html,<h1>hi</h1>",
        "javascript:alert(1)",
        "mailto:someone@example.com",
        "about:blank",
        "file:///etc/passwd",
        "http://[::1",
        "http://xn--zz.example/",
        "http://exa mple.com/",
    ],
)
def test_a_redirect_to_an_unfetchable_url_is_refused(server: ScriptedServer, location: str) -> None:
    server.script("/r", Reply(302, b"", {"Location": location}))
    with pytest.raises(URLRefusedError, match="redirect"):
        session().fetch(f"{server.url}/r")


@pytest.mark.parametrize(
    "url", ["http://xn--zz.example/", "http://xn--a.example/", "http://xn--ls8h.example/"]
)
def test_an_idn_label_httpx_cannot_read_is_refused(url: str) -> None:
    with pytest.raises(URLRefusedError, match="international domain name") as caught:
        session().fetch(url)
    assert caught.value.reason == "malformed"


@pytest.mark.parametrize(
    "charset",
    [
        "rot-13",
        "base64",
        "hex",
        "zlib",
        "bz2",
        "uu",
        "undefined",
        "quopri",
        "unicode_escape",
        "utf-7",
        "idna",
        "punycode",
        "x" * 300,
        "utf-8\x7f",
    ],
)
def test_a_declared_non_text_codec_falls_back_to_detection(
    server: ScriptedServer, charset: str
) -> None:
    body = "<p>caf\u00e9 au lait</p>".encode()
    server.script("/c", Reply(200, body, {"Content-Type": f"text/html; charset={charset}"}))
    server.script(
        "/m",
        Reply(200, f'<meta charset="{charset}">'.encode() + body, {"Content-Type": "text/html"}),
    )
    ws = session()
    for path in ("/c", "/m"):
        page = ws.fetch(f"{server.url}{path}")
        assert "café au lait" in page.content
        assert page.charset == "utf-8"


@pytest.mark.parametrize("bomb", [content_bomb, xref_bomb], ids=["content", "xref"])
def test_a_pdf_that_bombs_its_parser_is_a_sentence(
    server: ScriptedServer, bomb: Callable[[], bytes]
) -> None:
    pytest.importorskip("pypdf")
    server.script("/bomb.pdf", Reply(200, bomb(), {"Content-Type": "application/pdf"}))
    page = session().fetch(f"{server.url}/bomb.pdf")
    assert page.kind == "pdf"
    assert page.content.startswith("[the PDF ")
    assert page.content.endswith("]")


def test_any_failure_inside_the_pdf_reader_is_a_sentence(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pypdf = pytest.importorskip("pypdf")

    def exploding(*args: object, **kwargs: object) -> object:
        raise AssertionError("a corner of the parser nobody expected")

    monkeypatch.setattr(pypdf, "PdfReader", exploding)
    server.script("/odd.pdf", Reply(200, b"%PDF-1.4\n", {"Content-Type": "application/pdf"}))
    page = session().fetch(f"{server.url}/odd.pdf")
    assert page.content == "[the PDF could not be read: AssertionError; it may be damaged]"


@pytest.mark.parametrize("provider", [1, ["brave"], b"brave", object()])
def test_a_provider_that_is_not_a_name_is_an_invalid_request(provider: object) -> None:
    with pytest.raises(InvalidRequestError, match="provider must be"):
        WebSearch(searxng_url="http://127.0.0.1:9").search("q", provider=provider)  # type: ignore[arg-type]


def test_thousands_of_domains_are_refused_before_anything_is_sent(server: ScriptedServer) -> None:
    ws = WebSearch("searxng", searxng_url=server.url)
    many = [f"d{i}.example.com" for i in range(3000)]
    with pytest.raises(InvalidRequestError, match="at most 50 domains"):
        ws.search("q", include_domains=many)
    assert server.seen == []


def test_a_site_rewrite_too_long_for_the_provider_is_refused_or_routed(
    server: ScriptedServer,
) -> None:
    domains = [f"a-rather-long-subdomain-{i}.example.com" for i in range(12)]
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={})))
    brave = WebSearch("brave", brave_api_key=CANARY, http_client=client)
    with pytest.raises(InvalidRequestError, match="brave takes at most 400"):
        brave.search("q", include_domains=domains)
    routed = WebSearch(brave_api_key=CANARY, searxng_url=server.url, http_client=client)
    server.script("/search", Reply(200, {"results": []}))
    assert routed.search("q", include_domains=domains).provider == "searxng"


# -- 9. no quiet coercions --------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"count": "5"},
        {"count": True},
        {"count": 2.0},
        {"page": "2"},
        {"include_answer": "yes"},
        {"date_from": 1_700_000_000},
        {"country": 49},
        {"include_domains": [b"example.com"]},
        {"include_domains": [42]},
    ],
)
def test_search_arguments_of_the_wrong_type_are_refused(options: dict[str, object]) -> None:
    ws = WebSearch(searxng_url="http://127.0.0.1:9")
    with pytest.raises(InvalidRequestError):
        ws.search("q", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [{"offset": 1.5}, {"offset": "1"}, {"offset": True}, {"max_bytes": "1000"}, {"max_bytes": 0}],
)
def test_fetch_arguments_of_the_wrong_type_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(InvalidRequestError):
        session().fetch("https://example.com/", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("url", [None, 42, b"https://example.com/", ["https://example.com/"]])
def test_a_url_that_is_not_text_is_refused(url: object) -> None:
    with pytest.raises(InvalidRequestError, match="url"):
        session().fetch(url)  # type: ignore[arg-type]


def test_control_characters_never_reach_the_provider_or_the_menu(server: ScriptedServer) -> None:
    server.script(
        "/search",
        Reply(
            200,
            {"results": [{"title": "T\x1b[31m\x07", "url": "https://e.org/", "content": "a\x00b"}]},
        ),
    )
    response = WebSearch("searxng", searxng_url=server.url).search("go\x1b[2J\x00 \x07release")
    assert server.seen[0].query["q"] == "go[2J release"
    rendered = response.render()
    assert not any(ord(c) < 32 and c != "\n" for c in rendered)
    assert "T[31m" in rendered
    assert "ab" in rendered


def test_control_characters_never_reach_the_model_from_a_page(server: ScriptedServer) -> None:
    server.script(
        "/t", Reply(200, b"nul\x00 bell\x07 esc\x1b[2J ok\r\n", {"Content-Type": "text/plain"})
    )
    page = session().fetch(f"{server.url}/t")
    assert page.content == "nul bell esc[2J ok\n"


# -- 7. secrets in error text -----------------------------------------------------------------


def _echoing(status: int) -> Callable[[socket.socket], None]:
    """A provider that echoes the request it got, credential headers first, in its answer."""

    def handle(conn: socket.socket) -> None:
        while request := read_request(conn):
            line, *headers = request.decode().strip().split("\r\n")
            headers.sort(key=lambda h: not h.lower().startswith(("authorization", "x-sub")))
            echo = " ".join([*headers, line]).replace('"', "'").encode()
            body = b'{"error": "%s", "results": [{"title": "%s", "url": "https://e.org/"}]}' % (
                echo,
                echo,
            )
            head = b"HTTP/1.1 %d Echo\r\nContent-Type: application/json\r\n" % status
            conn.sendall(head + b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    return handle


@pytest.mark.parametrize("status", [400, 401, 500])
def test_a_provider_echoing_the_request_never_shows_the_key(
    status: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with raw_server(_echoing(status)) as server:
        ws = WebSearch("brave", brave_api_key=CANARY, brave_base_url=server.url, max_retry_wait=0)
        with pytest.raises(WebSearchError) as caught:
            ws.search("what is my key")
    seen = [str(caught.value), repr(caught.value), *(r.getMessage() for r in caplog.records)]
    assert not [text for text in seen if CANARY in text]
    assert "[redacted]" in str(caught.value) or status != 400


def test_results_echoing_the_key_are_redacted() -> None:
    with raw_server(_echoing(200)) as server:
        # The echo is in Tavily's answer shape (top-level "results").
        tavily = WebSearch("tavily", tavily_api_key=CANARY, tavily_base_url=server.url)
        response = tavily.search("q")
    assert CANARY not in response.model_dump_json()
    assert response.results[0].title.startswith("Authorization: Bearer [redacted]")


def test_a_credentialed_searxng_url_is_a_secret(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    password = "hunter2-" + CANARY
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(400, text=f"bad request from {request.url} {request.headers}")

    client = httpx.Client(transport=httpx.MockTransport(record))
    ws = WebSearch(
        "searxng", searxng_url=f"http://admin:{password}@127.0.0.1:9/", http_client=client
    )
    shown = [repr(ws.settings), str(ws.settings), ws.settings.model_dump_json(), repr(ws)]
    with pytest.raises(ProviderResponseError) as caught:
        ws.search("q")
    shown += [str(caught.value), *(r.getMessage() for r in caplog.records)]
    assert not [text for text in shown if password in text]
    assert password not in str(sent[0].url)
    assert sent[0].headers["authorization"].startswith("Basic ")
    assert "http://***@127.0.0.1:9" in repr(ws.settings)


def test_a_bad_credentialed_url_is_not_echoed_in_the_configuration_error() -> None:
    with pytest.raises(WebSearchError) as caught:
        WebSearch(searxng_url=f"http://admin:{CANARY}@127.0.0.1:9/?format=json")
    assert CANARY not in str(caught.value)
    assert "query" in str(caught.value)


# -- 10. provider base URLs -------------------------------------------------------------------


def test_brave_and_tavily_can_be_aimed_at_a_gateway(server: ScriptedServer) -> None:
    server.script("/gw/res/v1/web/search", Reply(200, {"web": {"results": []}}))
    server.script("/gw/search", Reply(200, {"results": []}))
    ws = WebSearch(
        brave_api_key=CANARY,
        tavily_api_key=CANARY,
        brave_base_url=f"{server.url}/gw/",
        tavily_base_url=f"{server.url}/gw",
    )
    ws.search("q", provider="brave")
    ws.search("q", provider="tavily")
    brave, tavily = server.seen
    assert (brave.method, brave.path, brave.headers["x-subscription-token"]) == (
        "GET",
        "/gw/res/v1/web/search",
        CANARY,
    )
    assert (tavily.method, tavily.path, tavily.headers["authorization"]) == (
        "POST",
        "/gw/search",
        f"Bearer {CANARY}",
    )


@pytest.mark.parametrize(
    "base_url",
    ["ftp://gateway", "not a url", "http://gw/?key=1", "http://gw:99999/", "http://gw:0/"],
)
def test_a_bad_base_url_is_a_configuration_error(base_url: str) -> None:
    with pytest.raises(WebSearchError, match="brave_base_url"):
        WebSearch(brave_api_key=CANARY, brave_base_url=base_url)


# -- 8. pathological HTML ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit", ["<div></span>", "<div></b>", "<b>", "<span><div></span>", "<ul><li><section><li>"]
)
async def test_deep_markup_keeps_its_text_and_its_time_bound(
    server: ScriptedServer, unit: str
) -> None:
    html = (unit * (1_000_000 // len(unit)) + "<p>the last words survive</p>").encode()
    server.script("/deep", Reply(200, html, {"Content-Type": "text/html"}))
    started = time.monotonic()
    page = await session(fetch_timeout=15).afetch(f"{server.url}/deep")
    # Conversion is bounded by size, not by the fetch deadline: a generous bound, not a speed.
    assert time.monotonic() - started < 15 + 20
    assert "the last words survive" in page.content
    # and it says what was done to read it: flattened, or (past 60,000 tags) read as text
    assert "flattened" in page.content or "its text is shown without structure" in page.content


def test_html_cut_at_the_input_ceiling_says_so() -> None:
    from websearch_core import extract
    from websearch_core.extract.bounds import MAX_INPUT_CHARS

    document = extract("<p>" + "word " * (MAX_INPUT_CHARS // 5 + 1000) + "</p>")
    assert document.note is not None
    assert "were not read" in document.note


def test_a_page_with_nothing_to_read_says_why(server: ScriptedServer) -> None:
    server.script(
        "/empty",
        Reply(200, b"<script>x()</script><style>p{}</style>", {"Content-Type": "text/html"}),
    )
    page = session().fetch(f"{server.url}/empty")
    assert "[this page has no readable text:" in page.content


# -- 2. batches lose nothing, and the last-resort boundary ------------------------------------


def test_a_batch_reports_each_failure_and_keeps_every_other_page(server: ScriptedServer) -> None:
    server.script("/ok", Reply(200, b"fine", {"Content-Type": "text/plain"}))
    server.script("/to-data", Reply(302, b"", {"Location": "data:,x"}))
    server.script(
        "/rot13", Reply(200, b"<p>readable</p>", {"Content-Type": "text/html; charset=rot-13"})
    )
    urls: list[object] = [
        f"{server.url}/ok",
        "http://xn--zz.example/",
        f"{server.url}/to-data",
        None,
        f"{server.url}/rot13",
        f"{server.url}/ok?again",
    ]
    outcomes = list(session().fetch_many(urls))  # type: ignore[arg-type]
    assert [url for url, _ in outcomes] == urls
    kinds = [type(outcome).__name__ for _, outcome in outcomes]
    assert kinds == [
        "Page",
        "URLRefusedError",
        "URLRefusedError",
        "InvalidRequestError",
        "Page",
        "Page",
    ]


def test_an_unforeseen_exception_is_an_internal_error_with_a_redacted_log(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="websearch_core")

    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError(f"internal state with {CANARY}")

    monkeypatch.setattr("websearch_core.fetch.fetcher.convert", broken)
    server.script("/ok", Reply(200, b"fine", {"Content-Type": "text/plain"}))
    ws = session(brave_api_key=CANARY)
    with pytest.raises(InternalError, match=r"fetch failed unexpectedly \(KeyError\)") as caught:
        ws.fetch(f"{server.url}/ok")
    assert CANARY not in str(caught.value)
    traces = [r.getMessage() for r in caplog.records if "failed unexpectedly" in r.getMessage()]
    assert traces
    assert "KeyError" in traces[0]
    assert not [t for t in traces if CANARY in t]
    outcomes = list(ws.fetch_many([f"{server.url}/ok"]))
    assert isinstance(outcomes[0][1], InternalError)


def test_extract_refuses_arguments_of_the_wrong_type() -> None:
    from websearch_core import extract

    for bad in (b"<p>x</p>", None, 42):
        with pytest.raises(InvalidRequestError):
            extract(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError):
        extract("<p>x</p>", mode="everything")  # type: ignore[arg-type]


def test_page_render_refuses_arguments_of_the_wrong_type(server: ScriptedServer) -> None:
    server.script("/t", Reply(200, b"text", {"Content-Type": "text/plain"}))
    page = session().fetch(f"{server.url}/t")
    assert isinstance(page, Page)
    for options in ({"offset": 1.5}, {"max_chars": "10"}, {"offset": -1}):
        with pytest.raises(InvalidRequestError):
            page.render(**options)  # type: ignore[arg-type]


# -- 11. the CLI in a pipe --------------------------------------------------------------------


def test_the_cli_ends_quietly_when_its_reader_goes_away(server: ScriptedServer) -> None:
    lines = [
        {"title": f"R{i}", "url": f"https://e.org/{i}", "content": "x" * 200} for i in range(10)
    ]
    server.script("/search", Reply(200, {"results": lines}))
    env = {"SEARXNG_URL": server.url, "PATH": "", "PYTHONPATH": ":".join(sys.path)}
    reader = subprocess.Popen(
        [sys.executable, "-m", "websearch_core.cli", "search", "--provider", "searxng", "q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert reader.stdout is not None
    reader.stdout.close()  # `| head -0`: the reader is gone before the first write
    _, stderr = reader.communicate(timeout=60)
    assert b"Traceback" not in stderr
    assert reader.returncode == 141


def test_gzip_helper_is_a_real_bomb() -> None:
    bomb = _gzip_bomb(5)
    assert len(bomb) < 50_000
    assert len(gzip.decompress(bomb)) == 5_000_000


def test_a_fetch_error_is_still_a_fetch_error(server: ScriptedServer) -> None:
    server.script("/r", Reply(302, b"", {"Location": "/r"}))
    with pytest.raises(FetchError, match="loop"):
        session().fetch(f"{server.url}/r")


@pytest.mark.parametrize("urls", [5, None, b"https://example.com/", {"a": 1}])
async def test_a_batch_of_something_that_is_not_urls_is_an_invalid_request(urls: object) -> None:
    ws = session()
    with pytest.raises(InvalidRequestError, match="urls must be"):
        list(ws.fetch_many(urls))  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="urls must be"):
        [item async for item in ws.afetch_many(urls)]  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="concurrency"):
        list(ws.fetch_many([], concurrency=True))


# VmHWM is this process image's own peak RSS (getrusage's ru_maxrss would also count the
# parent's, which a forked child inherits on Linux).
_BOMB_IN_A_CHILD = """
import sys
from websearch_core import WebSearch, ProviderResponseError
ws = WebSearch("searxng", searxng_url=sys.argv[1], provider_max_bytes=2_000_000)
try:
    ws.search("q")
except ProviderResponseError as exc:
    print("refused:", exc)
with open("/proc/self/status") as status:
    peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print("peak_rss_mb", peak_kb / 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_provider_bomb_leaves_the_process_small(server: ScriptedServer) -> None:
    # RSS, not just Python's heap: measured in a child so nothing else this session did
    # counts, against a 300 MB bomb that once added ~945 MB.
    bomb = _gzip_bomb(300)
    server.script(
        "/search",
        Reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"}),
    )
    done = subprocess.run(
        [sys.executable, "-c", _BOMB_IN_A_CHILD, server.url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "refused: searxng answered with more than 2,000,000 bytes" in done.stdout
    peak = float(done.stdout.split("peak_rss_mb")[1])
    assert peak < 250, done.stdout


# -- pages whose markup would blow the conversion budget -------------------------------------
#
# Every conversion is bounded in time and memory whatever the markup (the 2 MB read ceiling:
# ~100 MB over the process's own). Each page here blew it before (CPU, resident memory, for
# the converter alone): 60,000 attributes on one element, 12 s; a 2 MB table of 200 columns,
# 60 MB of markdown and +404 MB; 200,000 links, +113 MB; <p><b> left open 120,000 times,
# +283 MB; 2 MB of valueless attributes in one tag, a quadratic parse.

_HOSTILE_PAGES = {
    "60k attributes on one element": (
        "<html><body><div " + " ".join(f'a{i}="v{i}"' for i in range(60_000))
        + "><p>the words after it</p></div></body></html>"
    ),
    "2 MB of valueless attributes": (
        "<html><body><div " + " ".join(f"a{i}" for i in range(300_000)) + "><p>after</p>"
    ),
    "a flood hidden behind quoted '>'": (
        "<html><body><div " + " ".join(f'a{i}="x>y"' for i in range(60_000)) + "><p>after</p>"
    ),
    # Attributes as the parser reads them, not as a looser pattern did (each of these went
    # past it to a parse of 12 s and more): a quote in an unquoted value is the value's ...
    "a flood behind a stray quote": (
        '<html><body><div a=x"y ' + " ".join(f"b{i}" for i in range(60_000)) + "><p>after</p>"
    ),
    # ... a name may follow a quoted value at once, and slashes separate names.
    "glued attributes": (
        "<html><body><div " + "".join(f'b{i}="v"' for i in range(60_000)) + "><p>after</p>"
    ),
    "attributes between slashes": (
        "<html><body><div " + "/".join(f"b{i}" for i in range(60_000)) + "><p>after</p>"
    ),
    # Tags inside tags, each a place the flood search must count from (14 s and 8 s before
    # it counted to 16 first): "<b" in every value, and as every attribute's name.
    "tags in every value": "<html><body>" + ("<b" + " a=<b" * 500 + ">") * 800,
    "tags as every name": "<html><body>" + ("<b" + " <b" * 500 + ">") * 1_300,
    # A name runs on over "<": from each start in a run of them the search read the rest of
    # the run (2 MB took minutes), and after one, each start read long attributes (43 s).
    "a run of starts": "<html><body>" + "<b" * 990_000,
    "long attributes after a run of starts": (
        "<b " + "<b" * 4_001 + (" a" + "x" * 4_800) * 400 + ">"
    ),
    # Each <body> (or <html>) tag adds its attributes to the one element: 60,000 (13 s).
    "attributes merged into <body>": "".join(
        "<body " + " ".join(f"a{j}_{i}" for i in range(500)) + ">" for j in range(120)
    ) + "<p>after</p>",
    "attributes merged into <html>": "".join(
        "<HTML " + " ".join(f"a{j}_{i}" for i in range(500)) + ">" for j in range(120)
    ) + "<p>after</p>",
    # A start tag the flattening would have made by dropping a too-deep <div> (11 s).
    "a tag made by flattening": "<br>" * 4_001 + "<div>" * 257 + "<<div>b "
    + " ".join(f"a{i}" for i in range(60_000)) + ">",
    "200k links": "<html><body><article>"
    + "".join(f'<a href="/l{i}">x</a>' for i in range(200_000)),
    "<p><b> left open": "<html><body>" + "<p><b>word " * 150_000,
    "a 200-column table": "<html><body><table><tr>" + "<td>x</td>" * 200 + "</tr>"
    + "<tr><td>y</td></tr>" * 100_000 + "</table>",
    "100k nested divs": "<html><body>" + "<div>" * 100_000 + "deep" + "</div>" * 100_000,
    "2 MB of '<'": "<html><body><p>" + "<" * 2_000_000,
    "long links from a long base": "<html><head><base href='/" + "b" * 1_900 + "/'></head>"
    + "<body><p>" + "<a href='x'>x</a> " * 90_000,
}  # fmt: skip

_MEASURE = """
import resource, sys, time
from websearch_core.fetch.content import convert
from websearch_core.fetch.fetcher import Fetched
from websearch_core.net.jail import DEFAULT, parse_url
from websearch_core.fetch.scrape import scrape, scrape_options
body = sys.stdin.buffer.read()[:2_000_000]
url = "https://example.com/" + "p" * 1_000 + "/"
target = parse_url(url, DEFAULT)
fetched = Fetched(target, target, [], 200, "OK", "text/html", body, False, len(body), 0.0, 0.0)
options = scrape_options(formats=("markdown", "html", "links"), main_content=sys.argv[2] == "1")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.process_time()
if sys.argv[1] == "convert":
    chars = len(convert(body, "text/html", url).content)
else:
    page = scrape(fetched, options)
    chars = len(page.markdown or "") + len(page.html or "")
cpu = time.process_time() - started
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(cpu, grown * 1024, chars)
"""


@pytest.mark.parametrize(
    "way", [("convert", "1"), ("scrape", "1"), ("scrape", "0")], ids=["fetch", "scrape", "crawl"]
)
@pytest.mark.parametrize("name", list(_HOSTILE_PAGES))
def test_a_hostile_page_converts_within_its_time_and_memory(
    name: str, way: tuple[str, str]
) -> None:
    # In a process of its own, so that its peak memory is the conversion's alone: the
    # agent's fetch, the service's scrape of the main content, and of the whole page.
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *way],
        input=_HOSTILE_PAGES[name].encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    cpu, grown, chars = done.stdout.decode().split()
    assert float(cpu) < 5.0, name  # generous: 0.5 s at most here, 12 s before
    assert int(grown) < 100 * 2**20, (name, int(grown) >> 20)
    assert int(chars) < 10_000_000, name


def test_markup_past_the_budgets_is_read_as_text_and_says_why() -> None:
    many = "<html><body><article>" + "<p>a <b>few</b> words</p>" * 40_000
    document = extract(many)
    assert document.fallback is not None
    assert "more than the converter renders as markdown (60,000)" in document.fallback
    assert document.markdown.startswith("a few words\na few words")
    flood = extract("<p " + " ".join(f"a{i}" for i in range(2_000)) + ">kept words</p>")
    assert flood.markdown == "kept words"
    assert flood.note is not None
    assert "1 element(s) with more than 512 attributes were read without them" in flood.note
    links = "<p>" + "<a href='x'>x</a> " * 5_000 + "</p>"
    long_base = extract(links, url="https://example.com/" + "p" * 1_500 + "/")
    assert long_base.fallback is not None
    assert "markdown would be longer than the converter writes" in long_base.fallback
