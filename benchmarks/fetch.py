"""Fetching pages: websearch-pack next to plain httpx, LangChain and LlamaIndex, in one run.

Three parts, all against HTTP servers this script starts on 127.0.0.1 (ephemeral ports):

1. Throughput: 200 article-like HTML pages (30-60 kB, with nav, header, footer, styles and
   scripts) from a server that waits 30 ms before each response; every contender fetches all
   of them, each in its own subprocess so that peak RSS belongs to one contender.
2. Cost per fetch: one page fetched N times in a row from a server without the delay, by the
   package's ``ws.fetch`` and by ``httpx.Client.get``; served as text/html (jail, fetch and
   HTML-to-markdown) and as text/plain (jail and fetch; the conversion is a decode).
3. Hostile bodies: a 1 GiB stream and a gzip bomb (1 GiB of zeros in ~1 MB), fetched by the
   package, whose 2 MB read ceiling should stop both; plain httpx on the bomb, stopped by
   hand at 100 MB of decoded bytes, shows what an unbounded decoder does instead.

    pip install -r benchmarks/requirements.txt
    python benchmarks/fetch.py [--pages 200] [--concurrency 16] [--n 200] [--json]

Each child process refuses (and reports) any connection or name lookup that is not loopback,
so the run also checks that no contender reaches off the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import platform
import random
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULT_MARKER = "BENCH-RESULT "
CHUNK = 64 * 1024
STREAM_BYTES = 1 << 30  # the "1 GB" body
BOMB_ZEROS = 1 << 30  # what the gzip bomb inflates to
HTTPX_GUARD = 100 * 1000 * 1000  # where the unbounded-decoder demo stops itself
MIN_SERVER_RATE = 300.0  # pages/s plain httpx must reach, or the server is the bottleneck
CHILD_TIMEOUT_S = 150.0

Json = dict[str, Any]


# -- the pages -----------------------------------------------------------------------------

_VOCABULARY_TEXT = (
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when who will "
    "more no if out so said what up its about into than them can only other new some could "
    "time these two may then do first any my now such like our over man me even most made "
    "after also did many before must through back years where much your way well down should "
    "because each just those people how too little state good very make world still own see "
    "men work long get here between both life being under never day same another know while "
    "last might us great old year off come since against go came right used take three "
    "market report policy council research water energy climate budget election hospital "
    "school transport museum football harbour railway festival café résumé naïve coöperate"
)
_VOCABULARY = _VOCABULARY_TEXT.split()


def _sentence(rng: random.Random, links: bool) -> str:
    words = [rng.choice(_VOCABULARY) for _ in range(rng.randint(8, 24))]
    if links and rng.random() < 0.35:
        at = rng.randrange(len(words))
        words[at] = f'<a href="/topic/{words[at]}">{words[at]}</a>'
    if rng.random() < 0.15:
        at = rng.randrange(len(words))
        tag = rng.choice(("em", "strong"))
        words[at] = f"<{tag}>{words[at]}</{tag}>"
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _paragraph(rng: random.Random) -> str:
    return "<p>" + " ".join(_sentence(rng, True) for _ in range(rng.randint(3, 7))) + "</p>\n"


def _script(rng: random.Random, functions: int) -> str:
    # Minified-bundle-like code: what a real page carries and a reader must throw away.
    body = []
    for i in range(functions):
        name = f"f{rng.randrange(10**6):x}"
        body.append(
            f"function {name}(e,t){{var n=e&&e.dataset?e.dataset.k{i}:null;if(!n)return t;"
            f"for(var r=0;r<n.length;r++){{t=(t<<5)-t+n.charCodeAt(r)|0}}"
            f'window.__q.push(["{name}",t]);return t}}'
        )
    return "<script>window.__q=window.__q||[];" + "".join(body) + "</script>\n"


def _style(rng: random.Random, rules: int) -> str:
    selectors = ("header", "nav a", ".byline", "article p", "figure", "aside li", "footer a")
    css = "".join(
        f"{rng.choice(selectors)}.c{i}{{margin:{rng.randint(0, 24)}px;"
        f"color:#{rng.randrange(16**6):06x};font-size:{rng.randint(11, 22)}px;"
        f"line-height:1.{rng.randint(2, 8)}}}"
        for i in range(rules)
    )
    return f"<style>{css}</style>\n"


def make_page(index: int, target_bytes: int) -> bytes:
    """An article page of roughly ``target_bytes``, the same every run for the same index."""
    rng = random.Random(index)
    title = " ".join(rng.choice(_VOCABULARY) for _ in range(7)).capitalize()
    sections = ("World", "Politics", "Business", "Science", "Health", "Sport", "Culture")
    nav = "".join(
        f'<li><a href="/section/{name.lower()}/{n}">{name} {n}</a></li>'
        for name in sections
        for n in range(5)
    )
    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title} | The Loopback Gazette</title>\n"
        f'<meta name="description" content="{_sentence(rng, False)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="stylesheet" href="/static/site.css">\n'
        + _style(rng, 40)
        + _script(rng, 12)
        + '<script type="application/ld+json">{"@type":"NewsArticle","headline":"'
        + title
        + '"}</script>\n</head>\n<body class="article">\n'
        '<header class="site-header"><a class="logo" href="/">The Loopback Gazette</a>\n'
        f'<nav aria-label="Sections"><ul>{nav}</ul></nav>\n'
        '<form class="search" action="/search"><input name="q"><button>Search</button></form>'
        "</header>\n<main>\n<article>\n"
        f"<h1>{title}</h1>\n"
        '<p class="byline">By A. Reporter, '
        '<time datetime="2026-02-11">11 February 2026</time></p>\n'
        '<figure><img src="/img/lead.jpg" alt="Lead image">'
        f"<figcaption>{_sentence(rng, False)}</figcaption></figure>\n"
    )
    related = "".join(
        f'<li><a href="/story/{rng.randrange(10**5)}">{_sentence(rng, False)}</a></li>'
        for _ in range(8)
    )
    tail = (
        "</article>\n"
        f'<aside class="related"><h3>Related</h3><ul>{related}</ul></aside>\n</main>\n'
        '<footer><ul><li><a href="/about">About us</a></li><li><a href="/privacy">Privacy</a>'
        '</li><li><a href="/terms">Terms</a></li><li><a href="/contact">Contact</a></li></ul>'
        '<form class="newsletter"><input type="email"><button>Subscribe</button></form>'
        "<p>&copy; 2026 The Loopback Gazette. All rights reserved.</p></footer>\n"
        + _script(rng, 30)
        + "</body>\n</html>\n"
    )
    body: list[str] = []
    size = len(head.encode()) + len(tail.encode())
    while size < target_bytes:
        if body and rng.random() < 0.2:
            piece = f"<h2>{_sentence(rng, False)[:-1]}</h2>\n"
        elif body and rng.random() < 0.08:
            items = "".join(f"<li>{_sentence(rng, True)}</li>" for _ in range(4))
            piece = f"<ul>{items}</ul>\n"
        elif body and rng.random() < 0.05:
            piece = f"<blockquote>{_sentence(rng, False)}</blockquote>\n"
        else:
            piece = _paragraph(rng)
        body.append(piece)
        size += len(piece.encode())
    return (head + "".join(body) + tail).encode()


def make_pages(count: int) -> list[bytes]:
    sizes = random.Random(2026)
    return [make_page(i, sizes.randint(30_000, 60_000)) for i in range(count)]


def make_gzip_bomb() -> bytes:
    """1 GiB of zeros, gzip level 9, compressed 1 MiB at a time: ~1 MB on the wire."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    parts = [compressor.compress(zeros) for _ in range(BOMB_ZEROS // len(zeros))]
    parts.append(compressor.flush())
    return b"".join(parts)


# -- the server ----------------------------------------------------------------------------


class BenchServer(ThreadingHTTPServer):
    """One thread per connection; ``delay_s`` before each response stands in for the net."""

    daemon_threads = True
    # The default listen backlog is 5: 16 clients connecting at once would overflow it and
    # pay a 1 s SYN retransmit, which would measure the server instead of the clients.
    request_queue_size = 256

    def __init__(self, delay_s: float, pages: list[bytes]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.delay_s = delay_s
        self.pages = pages
        self.bomb = b""
        self.unexpected: list[str] = []  # paths no contender should ask for (robots.txt, ...)
        self.requests = 0
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that stops reading the 1 GiB stream resets the connection: expected.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    server: BenchServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; with Nagle and delayed ACK each
        # keep-alive response would wait ~40 ms for the second one.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        server.requests += 1
        path = self.path.partition("?")[0]
        kind, _, number = path.strip("/").partition("/")
        if server.delay_s:
            time.sleep(server.delay_s)
        if kind in ("page", "text") and number.isdigit() and int(number) < len(server.pages):
            media = "text/html" if kind == "page" else "text/plain"
            self._send(server.pages[int(number)], f"{media}; charset=utf-8")
        elif path == "/stream":
            self._send_stream()
        elif path == "/bomb" and server.bomb:
            self._send(server.bomb, "text/plain; charset=utf-8", {"Content-Encoding": "gzip"})
        else:
            server.unexpected.append(self.path)
            self._send(b"not found", "text/plain", status=404)

    def _send(
        self, body: bytes, content_type: str, extra: dict[str, str] | None = None, status: int = 200
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        for start in range(0, len(body), CHUNK):
            self.wfile.write(body[start : start + CHUNK])

    def _send_stream(self) -> None:
        line = b"All work and no play makes a very long response body.\n"
        chunk = (line * (CHUNK // len(line) + 1))[:CHUNK]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(STREAM_BYTES))
        self.end_headers()
        try:
            for _ in range(STREAM_BYTES // CHUNK):
                self.wfile.write(chunk)
        except ConnectionError:
            self.close_connection = True  # the client stopped reading, as it should


# -- the child side: one contender per process ---------------------------------------------


def max_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)  # bytes vs KiB


_OFF_BOX: list[str] = []


def _is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host is None or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


def _guard_loopback() -> None:
    """Refuse and record any connect or name lookup that would leave the machine.

    An audit hook sees every ``socket.connect`` and ``getaddrinfo`` in the process, whatever
    library makes it (requests, aiohttp, httpx, an import-time download), which a proxy
    setting or a monkeypatch of one library would not.
    """

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "socket.connect":
            address = args[1]
            if isinstance(address, tuple) and not _is_loopback(address[0]):
                _OFF_BOX.append(f"connect {address[0]}")
                raise OSError("benchmark: off-box connection refused")
        elif event == "socket.getaddrinfo" and not _is_loopback(args[0]):
            _OFF_BOX.append(f"lookup {args[0]!r}")
            raise OSError("benchmark: off-box name lookup refused")

    sys.addaudithook(hook)


@dataclass
class Fetched:
    """What one contender returned for the pages: success per page and the text it gives."""

    ok: list[bool]
    texts: list[str | bytes] = field(repr=False)


Runner = Callable[[], Fetched]


def _words(text: str | bytes) -> int:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return len(text.split())


async def _gather(urls: list[str], concurrency: int, fetch: Callable[[str], Any]) -> list[Any]:
    """``fetch`` over ``urls``, at most ``concurrency`` at a time; failures are returned."""
    gate = asyncio.Semaphore(concurrency)

    async def one(url: str) -> Any:
        async with gate:
            return await fetch(url)

    return await asyncio.gather(*(one(url) for url in urls), return_exceptions=True)


def prepare_httpx(urls: list[str], concurrency: int) -> Runner:
    import httpx

    # Made here, outside the timing: building its SSL context alone takes ~20 ms.
    client = httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_connections=concurrency))

    def run() -> Fetched:
        async def main() -> list[Any]:
            async with client:
                return await _gather(urls, concurrency, client.get)  # body read, nothing else

        responses = asyncio.run(main())
        ok = [isinstance(r, httpx.Response) and r.status_code == 200 for r in responses]
        return Fetched(ok, [r.content if isinstance(r, httpx.Response) else b"" for r in responses])

    return run


def _package_session() -> Any:
    from websearch_core import WebSearch
    from websearch_core.net.jail import JailPolicy

    # The default policy refuses loopback; the operator lane lets the benchmark reach its
    # own server while every other jail check still runs.
    return WebSearch(fetch_policy=JailPolicy(allow_private=True))


def _pages_fetched(pages: list[Any]) -> Fetched:
    ok = [not isinstance(p, BaseException) and p.ok for p in pages]
    return Fetched(ok, [p.content if not isinstance(p, BaseException) else "" for p in pages])


def prepare_package_async(urls: list[str], concurrency: int) -> Runner:
    ws = _package_session()

    def run() -> Fetched:
        async def main() -> list[Any]:
            try:
                return await _gather(urls, concurrency, ws.afetch)
            finally:
                await ws.aclose()

        return _pages_fetched(asyncio.run(main()))

    return run


def prepare_package_sync(urls: list[str], concurrency: int) -> Runner:
    ws = _package_session()

    def fetch(url: str) -> Any:
        try:
            return ws.fetch(url)
        except Exception as exc:
            return exc

    def run() -> Fetched:
        with ThreadPoolExecutor(concurrency) as pool:
            pages = list(pool.map(fetch, urls))
        ws.close()
        return _pages_fetched(pages)

    return run


def _parser() -> str:
    # The faster of BeautifulSoup's parsers when present: the peers get their best setting.
    try:
        import lxml  # noqa: F401
    except ImportError:
        return "html.parser"
    return "lxml"


def prepare_async_html_loader(urls: list[str], concurrency: int) -> Runner:
    from langchain_community.document_loaders import AsyncHtmlLoader

    # requests_per_second is really the size of a semaphore around the fetches (see
    # AsyncHtmlLoader._lazy_fetch_all); each fetch opens its own aiohttp session.
    loader = AsyncHtmlLoader(urls, requests_per_second=concurrency, default_parser=_parser())

    def run() -> Fetched:
        docs = loader.load()
        return Fetched([bool(d.page_content) for d in docs], [d.page_content for d in docs])

    return run


def prepare_web_base_loader_async(urls: list[str], concurrency: int) -> Runner:
    from langchain_community.document_loaders import WebBaseLoader

    loader = WebBaseLoader(
        web_paths=urls, requests_per_second=concurrency, default_parser=_parser()
    )

    def run() -> Fetched:
        async def main() -> list[Any]:
            # alazy_load is the concurrent API (aload is deprecated and does the same
            # fetch_all under asyncio.run); both parse every page with BeautifulSoup.
            return [doc async for doc in loader.alazy_load()]

        docs = asyncio.run(main())
        return Fetched([bool(d.page_content) for d in docs], [d.page_content for d in docs])

    return run


def prepare_web_base_loader_sync(urls: list[str], concurrency: int) -> Runner:
    from langchain_community.document_loaders import WebBaseLoader

    # load() ignores requests_per_second: it is one requests.Session.get after another.
    loader = WebBaseLoader(
        web_paths=urls, requests_per_second=concurrency, default_parser=_parser()
    )

    def run() -> Fetched:
        docs = loader.load()
        return Fetched([bool(d.page_content) for d in docs], [d.page_content for d in docs])

    return run


def prepare_llamaindex(urls: list[str], concurrency: int) -> Runner:
    from llama_index.readers.web import SimpleWebPageReader

    # load_data has no concurrency: one requests.get (no session) after another.
    reader = SimpleWebPageReader(html_to_text=True)

    def run() -> Fetched:
        docs = reader.load_data(urls)
        # A page that failed is skipped, not returned: pad so every URL has a slot.
        texts: list[str | bytes] = [d.text for d in docs] + [""] * (len(urls) - len(docs))
        return Fetched([bool(t) for t in texts], texts)

    return run


@dataclass(frozen=True)
class Contender:
    key: str
    label: str
    output: str  # what the caller gets back
    prepare: Callable[[list[str], int], Runner]
    distributions: tuple[str, ...]  # whose versions the header prints


CONTENDERS = (
    Contender("httpx", "httpx.AsyncClient (baseline)", "raw HTML", prepare_httpx, ("httpx",)),
    Contender(
        "package-async",
        "websearch-pack ws.afetch",
        "markdown",
        prepare_package_async,
        ("websearch-pack",),
    ),
    Contender(
        "package-sync",
        "websearch-pack ws.fetch, 16 threads",
        "markdown",
        prepare_package_sync,
        ("websearch-pack",),
    ),
    Contender(
        "async-html-loader",
        "LangChain AsyncHtmlLoader.load",
        "raw HTML",
        prepare_async_html_loader,
        ("langchain-community",),
    ),
    Contender(
        "web-base-loader-async",
        "LangChain WebBaseLoader.alazy_load",
        "soup text",
        prepare_web_base_loader_async,
        ("langchain-community",),
    ),
    Contender(
        "web-base-loader-sync",
        "LangChain WebBaseLoader.load (sequential)",
        "soup text",
        prepare_web_base_loader_sync,
        ("langchain-community",),
    ),
    Contender(
        "llamaindex",
        "LlamaIndex SimpleWebPageReader (sequential)",
        "html2text",
        prepare_llamaindex,
        ("llama-index-readers-web",),
    ),
)


def child_throughput(config: Json) -> Json:
    contender = next(c for c in CONTENDERS if c.key == config["contender"])
    urls = [f"{config['slow']}/page/{i}" for i in range(config["pages"])]
    run = contender.prepare(urls, config["concurrency"])
    baseline = max_rss_mb()  # after imports and set-up, before the first request
    started = time.perf_counter()
    fetched = run()
    seconds = time.perf_counter() - started
    peak = max_rss_mb()
    good = [text for ok, text in zip(fetched.ok, fetched.texts, strict=True) if ok]
    return {
        "seconds": seconds,
        "ok": sum(fetched.ok),
        "pages_per_s": len(urls) / seconds,
        "words_per_page": statistics.mean(map(_words, good)) if good else 0.0,
        "rss_mb": peak,
        "rss_delta_mb": peak - baseline,
    }


def child_server_check(config: Json) -> Json:
    """Plain httpx at full concurrency, best of three warm passes: what the server can give.

    The contenders' rows are single cold passes; this one asks only whether the server keeps
    up, so it takes the best pass (a pass that the machine's noise slowed says nothing).
    """
    import httpx

    urls = [f"{config['slow']}/page/{i}" for i in range(config["pages"])]
    concurrency = config["concurrency"]
    limits = httpx.Limits(max_connections=concurrency)

    async def passes() -> list[float]:
        rates = []
        async with httpx.AsyncClient(trust_env=False, limits=limits) as client:
            for _ in range(4):  # the first pass opens the connections and is discarded
                started = time.perf_counter()
                await _gather(urls, concurrency, client.get)
                rates.append(len(urls) / (time.perf_counter() - started))
        return rates[1:]

    rates = asyncio.run(passes())
    return {"pages_per_s": max(rates), "passes": rates}


def child_overhead(config: Json) -> Json:
    import httpx

    ws = _package_session()
    client = httpx.Client(trust_env=False)
    n: int = config["n"]
    rounds: int = config["rounds"]
    base: str = config["fast"]
    counter = iter(range(10**9))

    def plain(path: str) -> None:
        client.get(f"{base}{path}?i={next(counter)}").raise_for_status()

    def package(path: str) -> None:
        # A fresh query string each time: the session's page memo must not answer.
        if not ws.fetch(f"{base}{path}?i={next(counter)}").ok:
            raise RuntimeError("the package fetch failed")

    def per_fetch_us(call: Callable[[str], None], path: str) -> float:
        started = time.perf_counter()
        for _ in range(n):
            call(path)
        return (time.perf_counter() - started) / n * 1e6

    for _ in range(20):  # connections, lazy imports and first-call caches out of the way
        for call in (plain, package):
            call("/page/0")
            call("/text/0")
    # Rounds interleave the four cases so that a burst of machine noise hits all of them.
    runs: dict[str, list[float]] = {}
    for _ in range(rounds):
        for kind, path in (("html", "/page/0"), ("text", "/text/0")):
            runs.setdefault(f"plain-{kind}", []).append(per_fetch_us(plain, path))
            runs.setdefault(f"package-{kind}", []).append(per_fetch_us(package, path))
    ws.close()
    client.close()
    return {name: statistics.median(values) for name, values in runs.items()}


def child_package_ceiling(config: Json) -> Json:
    ws = _package_session()
    baseline = max_rss_mb()
    started = time.perf_counter()
    page = ws.fetch(f"{config['fast']}{config['path']}")
    seconds = time.perf_counter() - started
    peak = max_rss_mb()
    ws.close()
    return {
        "seconds": seconds,
        "status": page.status,
        "bytes_read": page.bytes_read,
        "truncated": page.truncated,
        "rss_mb": peak,
        "rss_delta_mb": peak - baseline,
    }


def child_httpx_bomb(config: Json) -> Json:
    import httpx

    client = httpx.Client(trust_env=False)
    baseline = max_rss_mb()
    decoded = largest = 0
    started = time.perf_counter()
    with client.stream("GET", f"{config['fast']}/bomb") as response:
        # httpx inflates each network read in one call, with no output limit.
        for piece in response.iter_bytes():
            decoded += len(piece)
            largest = max(largest, len(piece))
            if decoded >= HTTPX_GUARD:
                break
    seconds = time.perf_counter() - started
    peak = max_rss_mb()
    client.close()
    return {
        "seconds": seconds,
        "bytes_read": decoded,
        "largest_piece": largest,
        "truncated": True,
        "rss_mb": peak,
        "rss_delta_mb": peak - baseline,
    }


CHILDREN: dict[str, Callable[[Json], Json]] = {
    "server-check": child_server_check,
    "throughput": child_throughput,
    "overhead": child_overhead,
    "package-ceiling": child_package_ceiling,
    "httpx-bomb": child_httpx_bomb,
}


def child_main(name: str, config: Json) -> None:
    _guard_loopback()
    result = CHILDREN[name](config)
    result["off_box"] = _OFF_BOX
    print(RESULT_MARKER + json.dumps(result), flush=True)


# -- the parent side -----------------------------------------------------------------------


def run_child(name: str, config: Json) -> Json:
    """Run one measurement in a fresh interpreter; its result, or ``{"error": ...}``."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["USER_AGENT"] = "websearch-pack-benchmark"  # LangChain warns without one
    env["PYTHONWARNINGS"] = "ignore"
    command = [sys.executable, __file__, "--child", name, "--config", json.dumps(config)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=CHILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {CHILD_TIMEOUT_S:.0f} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            result: Json = json.loads(line[len(RESULT_MARKER) :])
            return result
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return {"error": lines[-1] if lines else f"exit status {done.returncode}"}


def version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


VERSIONED = (
    "websearch-pack",
    "httpx",
    "httpcore",
    "html2text",
    "selectolax",
    "langchain-community",
    "langchain-core",
    "aiohttp",
    "beautifulsoup4",
    "lxml",
    "requests",
    "llama-index-readers-web",
    "llama-index-core",
)


@dataclass
class Report:
    settings: Json
    versions: dict[str, str]
    page_bytes: Json
    server_check: Json = field(default_factory=dict)
    throughput: dict[str, Json] = field(default_factory=dict)
    overhead: Json = field(default_factory=dict)
    hostile: dict[str, Json] = field(default_factory=dict)
    unexpected_paths: list[str] = field(default_factory=list)
    seconds: float = 0.0


def measure(args: argparse.Namespace) -> Report:
    started = time.perf_counter()
    pages = make_pages(args.pages)
    sizes = [len(page) for page in pages]
    slow = BenchServer(args.delay_ms / 1000, pages)
    fast = BenchServer(0.0, pages)
    report = Report(
        settings={
            "pages": args.pages,
            "concurrency": args.concurrency,
            "delay_ms": args.delay_ms,
            "n": args.n,
            "rounds": args.rounds,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        versions={name: version(name) for name in VERSIONED},
        page_bytes={"min": min(sizes), "mean": statistics.mean(sizes), "max": max(sizes)},
    )
    common = {"slow": slow.base, "fast": fast.base, "pages": args.pages}
    progress("server check")
    report.server_check = run_child("server-check", {**common, "concurrency": args.concurrency})
    for contender in CONTENDERS:
        missing = [d for d in contender.distributions if version(d) == "not installed"]
        if missing:
            report.throughput[contender.key] = {"error": f"{', '.join(missing)} not installed"}
            continue
        progress(f"throughput: {contender.label}")
        config = {**common, "contender": contender.key, "concurrency": args.concurrency}
        report.throughput[contender.key] = run_child("throughput", config)

    progress("per-fetch cost")
    report.overhead = run_child("overhead", {**common, "n": args.n, "rounds": args.rounds})

    progress("hostile bodies (compressing the gzip bomb first)")
    fast.bomb = make_gzip_bomb()
    report.settings["bomb_bytes"] = len(fast.bomb)
    report.hostile["package-stream"] = run_child("package-ceiling", {**common, "path": "/stream"})
    report.hostile["package-bomb"] = run_child("package-ceiling", {**common, "path": "/bomb"})
    report.hostile["httpx-bomb"] = run_child("httpx-bomb", common)

    report.unexpected_paths = slow.unexpected + fast.unexpected
    for server in (slow, fast):
        server.shutdown()
        server.server_close()
    report.seconds = time.perf_counter() - started
    return report


def progress(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


# -- the table -----------------------------------------------------------------------------


def _mb(value: float) -> str:
    return f"{value:,.1f}"


def table(report: Report) -> Iterator[str]:
    s, v = report.settings, report.versions
    yield (
        f"websearch-pack fetch benchmark: Python {s['python']}, {s['cpus']} CPUs, "
        f"everything on 127.0.0.1, one run"
    )
    yield (
        f"  websearch-pack {v['websearch-pack']} (httpx {v['httpx']}, httpcore {v['httpcore']}, "
        f"selectolax {v['selectolax']})"
    )
    yield (
        f"  langchain-community {v['langchain-community']} (langchain-core "
        f"{v['langchain-core']}, aiohttp {v['aiohttp']}, beautifulsoup4 {v['beautifulsoup4']}, "
        f"lxml {v['lxml']}, requests {v['requests']})"
    )
    yield (
        f"  llama-index-readers-web {v['llama-index-readers-web']} (llama-index-core "
        f"{v['llama-index-core']}, requests {v['requests']}, html2text {v['html2text']})"
    )
    b = report.page_bytes
    yield ""
    yield (
        f"1. throughput: {s['pages']} article pages of {b['min'] / 1000:.0f}-"
        f"{b['max'] / 1000:.0f} kB (mean {b['mean'] / 1000:.0f} kB), +{s['delay_ms']} ms per "
        f"response, concurrency {s['concurrency']} where the API has it"
    )
    header = (
        f"   {'contender':<44}{'pages/s':>9}{'vs httpx':>10}{'ok':>6}{'words/pg':>10}"
        f"{'RSS MB':>9}{'ΔRSS MB':>9}  returns"
    )
    yield header
    yield "   " + "-" * (len(header) - 3)
    baseline = report.throughput.get("httpx", {}).get("pages_per_s")
    for contender in CONTENDERS:
        row = report.throughput.get(contender.key, {})
        if "error" in row:
            yield f"   {contender.label:<44}  FAILED: {row['error'][:80]}"
            continue
        ratio = f"{row['pages_per_s'] / baseline:.2f}" if baseline else "-"
        yield (
            f"   {contender.label:<44}{row['pages_per_s']:>9.1f}{ratio:>10}{row['ok']:>6}"
            f"{row['words_per_page']:>10,.0f}{_mb(row['rss_mb']):>9}{_mb(row['rss_delta_mb']):>9}"
            f"  {contender.output}"
        )
    check = report.server_check
    if "error" in check:
        verdict = f"FAILED: {check['error'][:80]}"
    else:
        fast_enough = check["pages_per_s"] >= MIN_SERVER_RATE
        verdict = (
            f"{check['pages_per_s']:.0f} pages/s, best of 3 warm passes "
            f"({'ok' if fast_enough else 'TOO SLOW: the rows above are server-bound'})"
        )
    need = f"concurrency {s['concurrency']}, needs >= {MIN_SERVER_RATE:.0f}"
    yield f"   server check (plain httpx, {need}): {verdict}"

    o = report.overhead
    yield ""
    yield (
        f"2. cost per fetch: one page, {s['n']} sequential fetches x {s['rounds']} rounds "
        f"(median round), no server delay, fresh ?i= each time"
    )
    header = f"   {'path':<58}{'µs/fetch':>10}{'ratio':>8}"
    yield header
    yield "   " + "-" * (len(header) - 3)
    if "error" in o:
        yield f"   FAILED: {o['error'][:100]}"
    else:
        for kind, what in (("html", "text/html"), ("text", "text/plain")):
            plain, package = o[f"plain-{kind}"], o[f"package-{kind}"]
            doing = "jail + fetch + markdown" if kind == "html" else "jail + fetch + decode"
            yield f"   {'httpx.Client.get, ' + what:<58}{plain:>10,.0f}{1:>8.2f}"
            yield f"   {f'ws.fetch, {what} ({doing})':<58}{package:>10,.0f}{package / plain:>8.2f}"

    yield ""
    yield (
        f"3. hostile bodies: 1 GiB text/plain stream in 64 kB chunks; gzip bomb of "
        f"{s.get('bomb_bytes', 0) / 1e6:.1f} MB inflating to 1 GiB of zeros"
    )
    header = (
        f"   {'case':<44}{'bytes read':>14}{'truncated':>11}{'seconds':>9}{'RSS MB':>9}"
        f"{'ΔRSS MB':>9}"
    )
    yield header
    yield "   " + "-" * (len(header) - 3)
    labels = {
        "package-stream": "ws.fetch, 1 GiB stream",
        "package-bomb": "ws.fetch, gzip bomb",
        "httpx-bomb": f"httpx iter_bytes, gzip bomb, stop at {HTTPX_GUARD // 10**6} MB",
    }
    for key, label in labels.items():
        row = report.hostile.get(key, {})
        if "error" in row:
            yield f"   {label:<44}  FAILED: {row['error'][:80]}"
            continue
        yield (
            f"   {label:<44}{row['bytes_read']:>14,}{row['truncated']!s:>11}"
            f"{row['seconds']:>9.2f}{_mb(row['rss_mb']):>9}{_mb(row['rss_delta_mb']):>9}"
        )
    if "largest_piece" in report.hostile.get("httpx-bomb", {}):
        largest = report.hostile["httpx-bomb"]["largest_piece"]
        yield f"   (httpx's largest single decoded piece: {largest / 1e6:,.1f} MB)"

    children = [
        report.server_check,
        *report.throughput.values(),
        report.overhead,
        *report.hostile.values(),
    ]
    off_box = sorted({attempt for child in children for attempt in child.get("off_box", [])})
    yield ""
    yield (
        "RSS MB: peak RSS of the contender's own process, imports included; ΔRSS: that peak "
        "minus the peak after imports and set-up."
    )
    yield (
        f"off-box connects/lookups refused: {', '.join(off_box) or 'none'}; "
        f"unexpected paths requested: {', '.join(sorted(set(report.unexpected_paths))) or 'none'}; "
        f"wall time {report.seconds:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay-ms", type=int, default=30)
    parser.add_argument("--n", type=int, default=200, help="sequential fetches per round (part 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of part 2 (median kept)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(args.child, json.loads(args.config))
        return
    report = measure(args)
    if args.json:
        print(json.dumps(report.__dict__, indent=2))
    else:
        print("\n".join(table(report)))


if __name__ == "__main__":
    main()
