"""Bulk reading: websearch-pack before and after, Ray Data, LangChain and LlamaIndex, in one run.

The workload of ``/work/shared/research/bulk-perf.md``, repeated: the 121 real pages of the
extraction benchmark (``*.html.gz``) served as ``text/html; charset=utf-8`` by an aiohttp
server on 127.0.0.1 in its own process, which sleeps a fixed latency before every response
(30 ms and 100 ms by default) and answers ``/robots.txt`` with 404. Every contender reads
1,000 URLs ``/p/<i>`` (page ``i % 121``), at concurrency 16 where its API has one, each in
its own subprocess, so that wall time, CPU time and peak RSS belong to one contender.

    pip install -e '.[dev]' && pip install -r benchmarks/requirements.txt   # dev brings ray
    python benchmarks/bulk.py [--latency 0.03 0.1] [--pages 1000] [--concurrency 16]
        [--rounds 1] [--only before,after-async] [--after REF] [--before REF] [--timeout 400]
        [--json]
        [--data DIR]

About 20 minutes on 2 cores: the sequential peers take 90-170 s each. ``--rounds N`` runs
every contender N times, interleaved, and reports medians (and each round's pages/s).
The current code is the working tree, read afresh by each child; ``--after REF`` measures a
commit instead (``git archive``), which a concurrent edit cannot change mid-run. Each row
records a digest of the ``websearch_core`` sources it imported, and the tables warn if the
current code changed during the run. "other processes" notes give the CPU the rest of the
machine used while a contender ran: on a shared machine, read those rows with care.

Contenders (``--only`` takes these keys):

- ``httpx-body``: httpx.AsyncClient, body only, nothing converted: what the server can give;
  ``aiohttp-body`` the same with aiohttp.
- ``before``: websearch-pack at ``--before`` (default 582382f; ``git archive`` into a temp
  dir, first on PYTHONPATH), ``afetch_many(urls, concurrency=16)``; ``before-sync`` the
  same commit's ``fetch_many``.
- ``in-process``: the current code, ``convert_workers=0``, ``afetch_many``.
- ``after-async``: the current code, default conversion workers (one per core), ``afetch_many``.
- ``after-sync``: the current code, ``fetch_many`` (threads).
- ``our-reader``, ``our-loader``: the current code's LlamaIndex ``WebPageReader.load_data``
  and LangChain ``WebPageLoader.load``.
- ``ray``: Ray Data, ``map_batches(WebReader, ...)`` on an actor pool of 2.
- ``llama-simple``, ``llama-trafilatura``, ``lc-asynchtml``, ``lc-webbase``,
  ``httpx-trafilatura``: the peers.

Each child process, and every Python process it starts (conversion workers, Ray's workers
and agents), refuses any connect or name lookup that is not loopback: an audit hook
installed by a ``sitecustomize`` that this script puts on the children's PYTHONPATH. Refused
attempts are reported. Progress goes to stderr, the tables to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "extraction" / "html"
BEFORE_COMMIT = "582382f"
RESULT_MARKER = "BENCH-RESULT "
CHILD_TIMEOUT_S = 400.0
SAMPLE_EVERY_S = 0.25  # how often the child samples its process tree's RSS

Json = dict[str, Any]

# -- the guard, for every Python process of a contender -------------------------------------

# Written into a temp dir that goes on the children's PYTHONPATH: Python imports it at start-up
# in the child and in every Python process below it (conversion workers inherit the
# environment, so do Ray's raylet-started workers). The check of ``_guard_loopback`` in
# benchmarks/fetch.py, with two differences so that Ray starts: a numeric address may be
# "looked up" (getaddrinfo parses it; nothing leaves the machine), and a refusal raises what an
# offline machine raises (ENETUNREACH, EAI_NONAME), so callers take their offline paths.
# Attempts are appended to the file named by BULK_BENCH_GUARD_LOG.
SITECUSTOMIZE = """\
import errno as _errno
import ipaddress as _ipaddress
import os as _os
import socket as _socket
import sys as _sys


def _bench_address(host):
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host is None or host == "localhost":
        return "loopback"
    try:
        return "loopback" if _ipaddress.ip_address(str(host)).is_loopback else "literal"
    except ValueError:
        return "name"


def _bench_note(what):
    path = _os.environ.get("BULK_BENCH_GUARD_LOG")
    if path:
        name = _os.path.basename(_sys.argv[0]) if _sys.argv and _sys.argv[0] else "python"
        with open(path, "a") as log:
            log.write(f"{what} (pid {_os.getpid()}, {name})\\n")


def _bench_hook(event, args):
    # Refused as an offline machine refuses, so that callers take their offline paths.
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and _bench_address(address[0]) != "loopback":
            kind = "udp" if getattr(args[0], "type", None) == _socket.SOCK_DGRAM else "tcp"
            _bench_note(f"connect {kind} {address[0]}")
            raise OSError(_errno.ENETUNREACH, "benchmark: off-box connection refused")
    elif event == "socket.getaddrinfo" and _bench_address(args[0]) == "name":
        # A numeric address is parsed, not looked up (nothing leaves the machine): only names.
        _bench_note(f"lookup {args[0]!r}")
        raise _socket.gaierror(_socket.EAI_NONAME, "benchmark: off-box name lookup refused")


_sys.addaudithook(_bench_hook)
"""


# -- the server: its own process ------------------------------------------------------------


def load_pages(data: Path) -> list[bytes]:
    files = sorted(data.glob("*.html.gz"))
    if not files:
        raise SystemExit(f"no *.html.gz pages in {data}")
    return [gzip.decompress(path.read_bytes()) for path in files]


def serve(config: Json) -> None:
    """The page server: ``/p/<i>`` answers page ``i % len(pages)``, after ``latency`` seconds.

    Prints ``PORT <n>`` when listening. Each ``stats`` line on stdin is answered with one
    JSON line (what happened since the previous one) and the counters restart; end of stdin
    stops the server.
    """
    from aiohttp import web

    pages = load_pages(Path(config["data"]))
    latency: float = config["latency"]
    stats: Json = {}

    def fresh() -> None:
        stats.update(
            connections=0,
            requests=0,
            pages=0,
            robots=0,
            unexpected=[],
            inflight=0,
            peak_inflight=0,
            cpu_s=_cpu(resource.RUSAGE_SELF),
        )

    fresh()

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        stats["requests"] += 1
        stats["inflight"] += 1
        stats["peak_inflight"] = max(stats["peak_inflight"], stats["inflight"])
        try:
            await asyncio.sleep(latency)
            path = request.path
            number = path[3:] if path.startswith("/p/") else ""
            if number.isdigit():
                stats["pages"] += 1
                body = pages[int(number) % len(pages)]
                return web.Response(body=body, content_type="text/html", charset="utf-8")
            if path == "/robots.txt":
                stats["robots"] += 1
            elif len(stats["unexpected"]) < 20:
                stats["unexpected"].append(path)
            return web.Response(status=404, text="not found")
        finally:
            stats["inflight"] -= 1

    async def main() -> None:
        loop = asyncio.get_running_loop()
        handlers = web.Server(handle, access_log=None)

        def connection() -> Any:
            stats["connections"] += 1  # one protocol per accepted TCP connection
            return handlers()

        server = await loop.create_server(connection, "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)
        stop = asyncio.Event()

        def control() -> None:  # a thread: blocking reads of the parent's commands
            for line in sys.stdin:
                if line.strip() == "stats":
                    done = threading.Event()

                    def report(done: threading.Event = done) -> None:
                        snapshot = {k: v for k, v in stats.items() if k != "inflight"}
                        snapshot["cpu_s"] = _cpu(resource.RUSAGE_SELF) - stats["cpu_s"]
                        print(json.dumps(snapshot), flush=True)
                        fresh()
                        done.set()

                    loop.call_soon_threadsafe(report)
                    done.wait()
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=control, daemon=True).start()
        await stop.wait()
        server.close()
        await handlers.shutdown(0.5)

    asyncio.run(main())


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class PageServer:
    """The server process, seen from the parent."""

    def __init__(self, data: Path, latency: float) -> None:
        config = json.dumps({"data": str(data), "latency": latency})
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--config", config],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            raise SystemExit(f"the page server did not start ({line!r})")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"

    def stats(self) -> Json:
        """What the server saw since the last call."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write("stats\n")
        self.process.stdin.flush()
        result: Json = json.loads(self.process.stdout.readline())
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- the child side: one contender per process ------------------------------------------------


def max_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)  # bytes vs KiB


class TreeWatch:
    """Samples the RSS of this process and all its descendants (conversion workers, Ray)."""

    def __init__(self) -> None:
        import psutil

        self._psutil = psutil
        self.me = psutil.Process()
        self.peak_tree_mb = 0.0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def descendants(self) -> list[Any]:
        try:
            return list(self.me.children(recursive=True))
        except self._psutil.Error:
            return []

    def sample(self) -> None:
        procs = [self.me, *self.descendants()]
        total = 0
        for proc in procs:
            with contextlib.suppress(self._psutil.Error):
                total += proc.memory_info().rss
        self.peak_tree_mb = max(self.peak_tree_mb, total / 2**20)
        self.peak_processes = max(self.peak_processes, len(procs))

    def cpu_by_descendant(self) -> dict[int, tuple[str, float]]:
        """Each live descendant's CPU seconds so far (user + system), with its name."""
        seen: dict[int, tuple[str, float]] = {}
        for proc in self.descendants():
            with contextlib.suppress(self._psutil.Error):
                times = proc.cpu_times()
                seen[proc.pid] = (proc.name(), times.user + times.system)
        return seen

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self.sample()

    def start(self) -> None:
        self.sample()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


@dataclass
class Outcome:
    """What a contender's run gave back."""

    ok: int
    failed: int
    words: int = 0  # whitespace-separated words across the pages that came back
    errors: dict[str, int] = field(default_factory=dict)  # a failure's kind -> how many
    extra: Json = field(default_factory=dict)


@dataclass
class Prepared:
    """A contender set up outside the timing: ``run`` reads the pages, ``close`` tidies up.

    ``run`` calls ``finished()`` when its last page is in (before closing a session), so
    that closing (stopping conversion workers) is not timed; if it never does, the clock
    stops when ``run`` returns.
    """

    run: Callable[[Callable[[], None]], Outcome]
    close: Callable[[], Json] = lambda: {}
    setup: Json = field(default_factory=dict)  # ray.init's time, the module's path ...
    cpu_from_psutil: bool = False  # Ray: its processes are not reaped before we measure


def _words(text: object) -> int:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return len(text.split()) if isinstance(text, str) else 0


def _tally(results: list[tuple[bool, object, str | None]]) -> Outcome:
    """(ok, text, error kind) per URL into an Outcome."""
    outcome = Outcome(ok=0, failed=0)
    for ok, text, error in results:
        if ok:
            outcome.ok += 1
            outcome.words += _words(text)
        else:
            outcome.failed += 1
            kind = error or "empty"
            outcome.errors[kind] = outcome.errors.get(kind, 0) + 1
    return outcome


def _package_setup() -> Json:
    """Which websearch_core this child imported, and a digest of its sources: the working
    tree may change while a run goes on."""
    import hashlib

    import websearch_core

    root = Path(websearch_core.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return {"websearch_core": str(root), "source_sha256": digest.hexdigest()[:12]}


def _page_result(outcome: Any) -> tuple[bool, object, str | None]:
    from websearch_core.errors import WebSearchError

    if isinstance(outcome, WebSearchError):
        return False, None, type(outcome).__name__
    if not outcome.ok:
        return False, None, f"status {outcome.status}"
    return True, outcome.content, None


def prepare_package_async(urls: list[str], config: Json, **session: Any) -> Prepared:
    from websearch_core import WebSearch

    ws = WebSearch(fetch_allow_private=True, memo_size=0, **session)
    concurrency = config["concurrency"]

    def run(finished: Callable[[], None]) -> Outcome:
        async def main() -> list[tuple[bool, object, str | None]]:
            try:
                results = [
                    _page_result(page)
                    async for _, page in ws.afetch_many(urls, concurrency=concurrency)
                ]
                finished()
                return results
            finally:
                await ws.aclose()  # stops the conversion workers: their CPU time is reaped

        outcome = _tally(asyncio.run(main()))
        converters = getattr(ws, "_converters", None)
        if converters is not None:
            outcome.extra["convert_workers"] = converters.workers
            outcome.extra["converted_on_workers"] = converters.converted_on_workers
        return outcome

    return Prepared(run, setup=_package_setup())


def prepare_before(urls: list[str], config: Json) -> Prepared:
    return prepare_package_async(urls, config)  # the old code is what PYTHONPATH finds


def prepare_in_process(urls: list[str], config: Json) -> Prepared:
    return prepare_package_async(urls, config, convert_workers=0)


def prepare_after_async(urls: list[str], config: Json) -> Prepared:
    return prepare_package_async(urls, config)


def prepare_after_sync(urls: list[str], config: Json) -> Prepared:
    from websearch_core import WebSearch

    ws = WebSearch(fetch_allow_private=True, memo_size=0)
    concurrency = config["concurrency"]

    def run(finished: Callable[[], None]) -> Outcome:
        try:
            pages = ws.fetch_many(urls, concurrency=concurrency)
            results = [_page_result(page) for _, page in pages]
            finished()
        finally:
            ws.close()
        outcome = _tally(results)
        outcome.extra["convert_workers"] = ws._converters.workers
        outcome.extra["converted_on_workers"] = ws._converters.converted_on_workers
        return outcome

    return Prepared(run, setup=_package_setup())


def _package_documents(load: Callable[[Any], list[str]]) -> Prepared:
    """A projection of the current code: ``load(session)`` reads the URLs and returns each
    document's text (a failure is left out, as the projections leave it out)."""
    from websearch_core import WebSearch

    ws = WebSearch(fetch_allow_private=True, memo_size=0)

    def run(finished: Callable[[], None]) -> Outcome:
        try:
            texts = load(ws)
            finished()
        finally:
            ws.close()
        outcome = _tally([(bool(t), t, None) for t in texts])
        outcome.extra["convert_workers"] = ws._converters.workers
        outcome.extra["converted_on_workers"] = ws._converters.converted_on_workers
        return outcome

    return Prepared(run, setup=_package_setup())


def prepare_our_reader(urls: list[str], config: Json) -> Prepared:
    from llamaindex_websearch import WebPageReader

    def load(ws: Any) -> list[str]:
        reader = WebPageReader(session=ws, concurrency=config["concurrency"], show_progress=False)
        texts = [d.text for d in reader.load_data(urls)]
        return texts + [""] * (len(urls) - len(texts))

    return _package_documents(load)


def prepare_our_loader(urls: list[str], config: Json) -> Prepared:
    from langchain_websearch import WebPageLoader

    def load(ws: Any) -> list[str]:
        loader = WebPageLoader(urls, session=ws, concurrency=config["concurrency"])
        texts = [d.page_content for d in loader.load()]
        return texts + [""] * (len(urls) - len(texts))

    return _package_documents(load)


def prepare_ray(urls: list[str], config: Json) -> Prepared:
    import ray

    started = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    init_s = time.perf_counter() - started
    ray.data.DataContext.get_current().enable_progress_bars = False
    from websearch_core.bulk import BulkConfig, WebReader

    concurrency = config["concurrency"]
    bulk = BulkConfig(allow_private=True, per_host_concurrency=concurrency, concurrency=concurrency)
    items = [{"url": url} for url in urls]

    def run(finished: Callable[[], None]) -> Outcome:
        rows = (
            ray.data.from_items(items)
            .map_batches(
                WebReader,
                fn_constructor_kwargs={"config": bulk},
                compute=ray.data.ActorPoolStrategy(size=2),
                batch_size=100,
                num_cpus=1,
            )
            .take_all()
        )
        finished()
        return _tally(
            [(row["error_code"] is None, row["markdown"], row["error_code"]) for row in rows]
        )

    def close() -> Json:
        ray.shutdown()
        return {}

    setup = {**_package_setup(), "ray_init_s": init_s}
    return Prepared(run, close, setup=setup, cpu_from_psutil=True)


def prepare_httpx_body(urls: list[str], config: Json) -> Prepared:
    import httpx

    concurrency = config["concurrency"]
    client = httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_connections=concurrency))

    def run(finished: Callable[[], None]) -> Outcome:
        async def one(url: str) -> tuple[bool, object, str | None]:
            async with gate:
                try:
                    response = await client.get(url)
                except httpx.HTTPError as exc:
                    return False, None, type(exc).__name__
            return response.status_code == 200, "", f"status {response.status_code}"

        async def main() -> list[tuple[bool, object, str | None]]:
            async with client:
                results = await asyncio.gather(*(one(url) for url in urls))
                finished()
                return list(results)

        gate = asyncio.Semaphore(concurrency)
        return _tally(asyncio.run(main()))

    return Prepared(run)


def prepare_aiohttp_body(urls: list[str], config: Json) -> Prepared:
    import aiohttp

    concurrency = config["concurrency"]

    def run(finished: Callable[[], None]) -> Outcome:
        async def one(session: Any, url: str) -> tuple[bool, object, str | None]:
            async with gate:
                try:
                    async with session.get(url) as response:
                        await response.read()
                except aiohttp.ClientError as exc:
                    return False, None, type(exc).__name__
            return response.status == 200, "", f"status {response.status}"

        async def main() -> list[tuple[bool, object, str | None]]:
            connector = aiohttp.TCPConnector(limit=concurrency)
            async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
                results = await asyncio.gather(*(one(session, url) for url in urls))
                finished()
                return list(results)

        gate = asyncio.Semaphore(concurrency)
        return _tally(asyncio.run(main()))

    return Prepared(run)


def prepare_httpx_trafilatura(urls: list[str], config: Json) -> Prepared:
    import httpx
    import trafilatura

    concurrency = config["concurrency"]
    client = httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_connections=concurrency))

    def run(finished: Callable[[], None]) -> Outcome:
        async def one(url: str) -> tuple[bool, object, str | None]:
            async with gate:  # held through the conversion, as a plain gather would
                try:
                    response = await client.get(url)
                except httpx.HTTPError as exc:
                    return False, None, type(exc).__name__
                text = await asyncio.to_thread(trafilatura.extract, response.text)
            return bool(text), text, None if text else "extract returned nothing"

        async def main() -> list[tuple[bool, object, str | None]]:
            async with client:
                results = await asyncio.gather(*(one(url) for url in urls))
                finished()
                return list(results)

        gate = asyncio.Semaphore(concurrency)
        return _tally(asyncio.run(main()))

    return Prepared(run)


def prepare_llama_simple(urls: list[str], config: Json) -> Prepared:
    from llama_index.readers.web import SimpleWebPageReader

    # load_data has no concurrency: one requests.get (no session) after another.
    reader = SimpleWebPageReader(html_to_text=True)

    def run(finished: Callable[[], None]) -> Outcome:
        docs = reader.load_data(urls)
        finished()
        texts = [d.text for d in docs] + [""] * (len(urls) - len(docs))  # a failure is skipped
        return _tally([(bool(t), t, None) for t in texts])

    return Prepared(run)


def prepare_llama_trafilatura(urls: list[str], config: Json) -> Prepared:
    from llama_index.readers.web import TrafilaturaWebReader
    from trafilatura.settings import DEFAULT_CONFIG

    # trafilatura 2.3's fetch_url refuses non-public peers (SSRF_PROTECTION, after connecting);
    # load_data passes no config, so the default one is opened to loopback, as the package is
    # with fetch_allow_private.
    DEFAULT_CONFIG["DEFAULT"]["SSRF_PROTECTION"] = "off"
    # load_data has no concurrency: trafilatura.fetch_url then trafilatura.extract, per URL.
    reader = TrafilaturaWebReader()

    def run(finished: Callable[[], None]) -> Outcome:
        docs = reader.load_data(urls)
        finished()
        texts = [d.text for d in docs] + [""] * (len(urls) - len(docs))
        return _tally([(bool(t), t, None) for t in texts])

    return Prepared(run)


def _parser() -> str:
    try:
        import lxml  # noqa: F401
    except ImportError:
        return "html.parser"
    return "lxml"


def prepare_lc_asynchtml(urls: list[str], config: Json) -> Prepared:
    from langchain_community.document_loaders import AsyncHtmlLoader
    from langchain_community.document_transformers import Html2TextTransformer

    # requests_per_second is the size of a semaphore around the fetches, not a rate; each
    # fetch opens its own aiohttp session.
    loader = AsyncHtmlLoader(
        urls, requests_per_second=config["concurrency"], default_parser=_parser()
    )
    transformer = Html2TextTransformer()

    def run(finished: Callable[[], None]) -> Outcome:
        docs = transformer.transform_documents(loader.load())
        finished()
        texts = [d.page_content for d in docs]
        return _tally([(bool(t), t, None) for t in texts])

    return Prepared(run)


def prepare_lc_webbase(urls: list[str], config: Json) -> Prepared:
    from langchain_community.document_loaders import WebBaseLoader

    # requests_per_second is the semaphore of alazy_load's fetch_all (aiohttp); every page
    # is parsed with BeautifulSoup and returned as get_text().
    loader = WebBaseLoader(
        web_paths=urls,
        requests_per_second=config["concurrency"],
        default_parser=_parser(),
        show_progress=False,
    )

    def run(finished: Callable[[], None]) -> Outcome:
        async def main() -> list[Any]:
            return [doc async for doc in loader.alazy_load()]

        docs = asyncio.run(main())
        finished()
        texts = [d.page_content for d in docs]
        return _tally([(bool(t), t, None) for t in texts])

    return Prepared(run)


@dataclass(frozen=True)
class Contender:
    key: str
    label: str
    prepare: Callable[[list[str], Json], Prepared]
    code: str = "none"  # "before", "current" or "none": which websearch_core PYTHONPATH finds
    note: str = ""


CONTENDERS = (
    Contender(
        "httpx-body",
        "httpx.AsyncClient, body only (ceiling)",
        prepare_httpx_body,
        note="no conversion: what the server and loopback give at this concurrency",
    ),
    Contender(
        "aiohttp-body",
        "aiohttp, body only",
        prepare_aiohttp_body,
        note="no conversion: the fastest Python client on the same server",
    ),
    Contender(
        "before",
        "websearch-pack afetch_many before",
        prepare_before,
        "before",
        "afetch_many(concurrency=16) at --before",
    ),
    Contender(
        "before-sync",
        "websearch-pack fetch_many before",
        prepare_after_sync,
        "before",
        "fetch_many(concurrency=16) at --before",
    ),
    Contender(
        "in-process",
        "websearch-pack afetch_many, convert_workers=0",
        prepare_in_process,
        "current",
    ),
    Contender(
        "after-async",
        "websearch-pack afetch_many (workers)",
        prepare_after_async,
        "current",
    ),
    Contender(
        "after-sync",
        "websearch-pack fetch_many (threads, workers)",
        prepare_after_sync,
        "current",
    ),
    Contender(
        "our-reader",
        "websearch-pack WebPageReader.load_data (LlamaIndex)",
        prepare_our_reader,
        "current",
    ),
    Contender(
        "our-loader",
        "websearch-pack WebPageLoader.load (LangChain)",
        prepare_our_loader,
        "current",
    ),
    Contender(
        "ray",
        "Ray Data map_batches(WebReader), 2 actors",
        prepare_ray,
        "current",
    ),
    Contender(
        "llama-simple",
        "LlamaIndex SimpleWebPageReader(html_to_text)",
        prepare_llama_simple,
        note="sequential: no concurrency option",
    ),
    Contender(
        "llama-trafilatura",
        "LlamaIndex TrafilaturaWebReader",
        prepare_llama_trafilatura,
        note="sequential: no concurrency option",
    ),
    Contender(
        "lc-asynchtml",
        "LangChain AsyncHtmlLoader + Html2TextTransformer",
        prepare_lc_asynchtml,
    ),
    Contender(
        "lc-webbase",
        "LangChain WebBaseLoader.alazy_load",
        prepare_lc_webbase,
    ),
    Contender(
        "httpx-trafilatura",
        "httpx + trafilatura.extract (to_thread)",
        prepare_httpx_trafilatura,
    ),
)
BY_KEY = {c.key: c for c in CONTENDERS}
SIMPLE = "llama-simple"


def child_main(config: Json) -> None:
    contender = BY_KEY[config["contender"]]
    urls = [f"{config['base']}/p/{i}" for i in range(config["pages"])]
    prepared = contender.prepare(urls, config)
    watch = TreeWatch()
    rss_after_setup = max_rss_mb()
    ray_cpu_before = watch.cpu_by_descendant() if prepared.cpu_from_psutil else {}
    self_before = _cpu(resource.RUSAGE_SELF)
    children_before = _cpu(resource.RUSAGE_CHILDREN)
    watch.start()
    ended: list[float] = []
    started = time.perf_counter()
    outcome = prepared.run(lambda: ended.append(time.perf_counter()))
    seconds = (ended[0] if ended else time.perf_counter()) - started
    ray_cpu_after = watch.cpu_by_descendant() if prepared.cpu_from_psutil else {}
    watch.stop()
    closing = prepared.close()  # sessions are closed inside run; Ray shuts down here
    self_cpu = _cpu(resource.RUSAGE_SELF) - self_before
    cpu: Json = {"self_s": self_cpu}
    if prepared.cpu_from_psutil:
        # Ray's raylet, GCS, agents and actor workers run below this process but are not
        # reaped until shutdown: their CPU time is read from /proc before that.
        per_name: dict[str, float] = {}
        for pid, (title, after) in ray_cpu_after.items():
            before = ray_cpu_before.get(pid, ("", 0.0))[1]
            # An actor's process title carries the method it runs: "ray::_StatsActor.update".
            name = title.split(".")[0] if title.startswith("ray::") else title
            per_name[name] = per_name.get(name, 0.0) + after - before
        cpu["children_s"] = sum(per_name.values())
        cpu["children_by_name"] = per_name
        cpu["children_method"] = "psutil, live descendants"
    else:
        cpu["children_s"] = _cpu(resource.RUSAGE_CHILDREN) - children_before
        cpu["children_method"] = "RUSAGE_CHILDREN (reaped)"
    result: Json = {
        "seconds": seconds,
        "ok": outcome.ok,
        "failed": outcome.failed,
        "errors": outcome.errors,
        "pages_per_s": outcome.ok / seconds,
        "words_per_page": outcome.words / outcome.ok if outcome.ok else 0.0,
        "cpu": cpu,
        "cores_busy": (cpu["self_s"] + cpu["children_s"]) / seconds,
        "rss_mb": max_rss_mb(),
        "rss_after_setup_mb": rss_after_setup,
        "children_max_rss_mb": max_rss_mb(resource.RUSAGE_CHILDREN),
        "tree_peak_rss_mb": watch.peak_tree_mb,
        "tree_peak_processes": watch.peak_processes,
        "setup": prepared.setup,
        "extra": {**outcome.extra, **closing},
    }
    print(RESULT_MARKER + json.dumps(result), flush=True)


# -- the parent side --------------------------------------------------------------------------


@dataclass
class Environment:
    """What the children run with: the guard, the old code, the log of refused attempts."""

    root: Path
    guard_dir: Path
    before_dir: Path | None
    after_dir: Path  # the current code: the working tree, or ``--after REF`` archived

    @classmethod
    def make(cls, want_before: bool, after: str | None, before: str) -> Environment:
        root = Path(tempfile.mkdtemp(prefix="bulk-bench-"))
        guard_dir = root / "guard"
        guard_dir.mkdir()
        (guard_dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
        before_dir = _archive(before, root / "before") if want_before else None
        after_dir = _archive(after, root / "after") if after else REPO
        return cls(root, guard_dir, before_dir, after_dir)

    def child_env(self, contender: Contender, guard_log: Path) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.lower().endswith("_proxy") and not k.startswith("WEBSEARCH_")
        }
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        env["USER_AGENT"] = "websearch-pack-benchmark"  # LangChain warns without one
        env["PYTHONWARNINGS"] = "ignore"
        env["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage report to send (and nowhere to)
        env["BULK_BENCH_GUARD_LOG"] = str(guard_log)
        code = self.before_dir if contender.code == "before" else self.after_dir
        assert code is not None
        env["PYTHONPATH"] = os.pathsep.join([str(code), str(self.guard_dir)])
        return env

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def _archive(ref: str, into: Path) -> Path:
    """``git archive ref`` extracted into ``into``: code that cannot change during the run."""
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _working_tree() -> str:
    """HEAD, and whether the package's files differ from it, as the run starts a child."""
    head = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--", "websearch_core")
    return f"{head}{' + uncommitted changes' if dirty else ''}"


def _kill_session(leader: int) -> list[int]:
    """Kill what is left of a child's process tree (its session) after it ended."""
    import psutil

    killed = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != leader and os.getsid(proc.pid) == leader:
                proc.kill()
                killed.append(proc.pid)
        except (OSError, psutil.Error):
            continue
    return killed


def run_child(contender: Contender, config: Json, env: Environment, timeout: float) -> Json:
    """One contender in a fresh interpreter (its own session); its result or an error."""
    guard_log = env.root / f"guard-{contender.key}-{time.monotonic_ns()}.log"
    command = [
        sys.executable,
        __file__,
        "--child",
        "--config",
        json.dumps({**config, "contender": contender.key}),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env.child_env(contender, guard_log),
        cwd=env.root,  # nothing importable: the code comes from PYTHONPATH alone
        start_new_session=True,
    )
    started = time.perf_counter()
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    leftovers = _kill_session(process.pid)
    result: Json = {}
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            result = json.loads(line[len(RESULT_MARKER) :])
            break
    if timed_out:
        result = {"error": f"timed out after {timeout:.0f} s", "timeout": True}
    elif not result:
        lines = [line for line in stderr.splitlines() if line.strip()]
        result = {"error": lines[-1] if lines else f"exit status {process.returncode}"}
        result["stderr_tail"] = lines[-15:]
    result["child_wall_s"] = time.perf_counter() - started
    result["off_box"] = guard_log.read_text().splitlines() if guard_log.exists() else []
    if leftovers:
        result["leftover_processes_killed"] = leftovers
    return result


def version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


VERSIONED = (
    "websearch-pack",
    "httpx",
    "httpcore",
    "aiohttp",
    "ray",
    "pyarrow",
    "psutil",
    "trafilatura",
    "html2text",
    "requests",
    "urllib3",
    "beautifulsoup4",
    "lxml",
    "langchain-community",
    "langchain-core",
    "llama-index-readers-web",
    "llama-index-core",
)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class _MachineCpu:
    """CPU the rest of the machine used while a child ran: all busy CPU time minus this
    process's, its reaped children's (the contender's tree) and the page server's."""

    def __init__(self) -> None:
        self.busy = self._busy()
        self.ours = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)

    @staticmethod
    def _busy() -> float:
        import psutil

        times = psutil.cpu_times()
        return sum(times) - times.idle - getattr(times, "iowait", 0.0)

    def foreign_cores(self, server_cpu_s: float, wall_s: float) -> float:
        ours = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - self.ours
        return max(0.0, self._busy() - self.busy - ours - server_cpu_s) / wall_s


def _summary(result: Json) -> str:
    if "error" in result:
        other = result["foreign_cores"]
        return f"FAILED: {result['error'][:120]} (other processes {other:.2f} cores)"
    return (
        f"{result['pages_per_s']:.1f} pages/s, ok {result['ok']}, "
        f"{result['cores_busy']:.2f} cores, RSS {result['rss_mb']:.0f} MB, "
        f"{result['server']['connections']} connections, "
        f"peak in flight {result['server']['peak_inflight']}; "
        f"other processes {result['foreign_cores']:.2f} cores"
    )


def measure(args: argparse.Namespace) -> Json:
    started = time.perf_counter()
    chosen = [c for c in CONTENDERS if not args.only or c.key in args.only]
    pages = load_pages(args.data)
    sizes = sorted(len(p) for p in pages)
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    report: Json = {
        "settings": {
            "pages": args.pages,
            "concurrency": args.concurrency,
            "latencies_s": args.latency,
            "rounds": args.rounds,
            "timeout_s": args.timeout,
            "data": str(args.data),
            "distinct_pages": len(pages),
            "page_bytes": {
                "min": sizes[0],
                "median": statistics.median(sizes),
                "max": sizes[-1],
            },
            "contenders": [c.key for c in chosen],
        },
        "machine": {
            "cpus": os.cpu_count(),
            "cpus_usable": affinity,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "memory_gb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
        },
        "versions": {name: version(name) for name in VERSIONED},
        "runs": {},
    }
    env = Environment.make(any(c.code == "before" for c in chosen), args.after, args.before)
    report["settings"]["after"] = args.after or "working tree"
    report["settings"]["before"] = args.before
    try:
        for latency in args.latency:
            server = PageServer(args.data, latency)
            runs: dict[str, list[Json]] = {c.key: [] for c in chosen}
            try:
                config = {
                    "base": server.base,
                    "pages": args.pages,
                    "concurrency": args.concurrency,
                }
                for round_ in range(args.rounds):
                    for contender in chosen:
                        progress(
                            f"+{latency * 1000:.0f} ms, round {round_ + 1}/{args.rounds}: "
                            f"{contender.label}"
                        )
                        server.stats()  # counters restart
                        machine = _MachineCpu()
                        tree = _working_tree() if contender.code == "current" else None
                        result = run_child(contender, config, env, args.timeout)
                        if tree is not None:
                            result["code"] = args.after or f"working tree at {tree}"
                        elif contender.code == "before":
                            result["code"] = args.before
                        result["server"] = server.stats()
                        result["foreign_cores"] = machine.foreign_cores(
                            result["server"]["cpu_s"], result["child_wall_s"]
                        )
                        runs[contender.key].append(result)
                        progress(f"   {_summary(result)} ({result['child_wall_s']:.0f} s)")
            finally:
                server.close()
            report["runs"][str(latency)] = runs
    finally:
        env.remove()
    report["seconds"] = time.perf_counter() - started
    return report


# -- the tables -------------------------------------------------------------------------------


def _median(runs: list[Json], pick: Callable[[Json], float]) -> float | None:
    values = [pick(run) for run in runs if "error" not in run]
    return statistics.median(values) if values else None


def summarise(runs: list[Json]) -> Json:
    """The medians of one contender's rounds at one latency."""
    good = [run for run in runs if "error" not in run]
    if not good:
        return {"error": runs[-1]["error"] if runs else "not run", "rounds": len(runs)}
    row: Json = {
        "rounds": len(runs),
        "failed_rounds": len(runs) - len(good),
        "pages_per_s": _median(good, lambda r: r["pages_per_s"]),
        "seconds": _median(good, lambda r: r["seconds"]),
        "ok_min": min(r["ok"] for r in good),
        "ok_max": max(r["ok"] for r in good),
        "cores_busy": _median(good, lambda r: r["cores_busy"]),
        "cpu_ms_per_page": _median(
            good, lambda r: 1000 * (r["cpu"]["self_s"] + r["cpu"]["children_s"]) / max(1, r["ok"])
        ),
        "rss_mb": _median(good, lambda r: r["rss_mb"]),
        "tree_peak_rss_mb": _median(good, lambda r: r["tree_peak_rss_mb"]),
        "children_max_rss_mb": _median(good, lambda r: r["children_max_rss_mb"]),
        "connections": _median(good, lambda r: r["server"]["connections"]),
        "peak_inflight": _median(good, lambda r: r["server"]["peak_inflight"]),
        "robots": _median(good, lambda r: r["server"]["robots"]),
        "requests": _median(good, lambda r: r["server"]["requests"]),
        "words_per_page": _median(good, lambda r: r["words_per_page"]),
        "foreign_cores": _median(good, lambda r: r["foreign_cores"]),
    }
    errors: dict[str, int] = {}
    for run in good:
        for kind, count in run["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    row["errors"] = errors
    return row


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _ratio(value: float | None, base: float | None) -> str:
    return f"{value / base:.2f}x" if value is not None and base else "-"


def tables(report: Json) -> list[str]:
    s, m, v = report["settings"], report["machine"], report["versions"]
    out = [
        f"# Bulk reading: {s['pages']:,} URLs over {s['distinct_pages']} real pages "
        f"(median {s['page_bytes']['median'] / 1000:.0f} kB, "
        f"{s['page_bytes']['min'] / 1000:.0f}-{s['page_bytes']['max'] / 1000:.0f} kB), "
        f"concurrency {s['concurrency']}, {s['rounds']} round(s)"
        + (" (medians)" if s["rounds"] > 1 else ""),
        "",
        f"Machine: {m['cpus']} cores ({m['cpus_usable']} usable), {m['memory_gb']:.0f} GB, "
        f"Python {m['python']}, {m['platform']}. Versions: "
        + ", ".join(f"{name} {v[name]}" for name in VERSIONED)
        + ".",
    ]
    for latency, runs in report["runs"].items():
        rows = {key: summarise(value) for key, value in runs.items()}
        base = rows.get("before", {}).get("pages_per_s")
        simple = rows.get(SIMPLE, {}).get("pages_per_s")
        ceiling = rows.get("httpx-body", {}).get("pages_per_s")
        out += [
            "",
            f"## +{float(latency) * 1000:.0f} ms per response",
            "",
            "| contender | pages/s | vs before | vs SimpleWebPageReader | vs httpx body | ok "
            "| cores busy | CPU ms/page | RSS MB | tree peak MB | TCP conns | peak in flight |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        notes: list[str] = []
        for key, row in rows.items():
            contender = BY_KEY[key]
            label = contender.label
            if contender.code == "before":
                label = f"{label} ({s.get('before', BEFORE_COMMIT)})"
            if "error" in row:
                what = "TIMEOUT" if "timed out" in row["error"] else "FAILED"
                conns = runs[key][-1].get("server", {}).get("connections", "-")
                served = runs[key][-1].get("server", {}).get("pages", "-")
                out.append(f"| {label} | {what} | - | - | - | - | - | - | - | - | {conns} | - |")
                notes.append(f"{label}: {row['error'][:160]} (server answered {served} pages)")
                continue
            ok = (
                str(row["ok_min"])
                if row["ok_min"] == row["ok_max"]
                else (f"{row['ok_min']}-{row['ok_max']}")
            )
            out.append(
                f"| {label} | {_fmt(row['pages_per_s'])} "
                f"| {_ratio(row['pages_per_s'], base)} | {_ratio(row['pages_per_s'], simple)} "
                f"| {_ratio(row['pages_per_s'], ceiling)} "
                f"| {ok} | {_fmt(row['cores_busy'], '.2f')} | {_fmt(row['cpu_ms_per_page'])} "
                f"| {_fmt(row['rss_mb'], '.0f')} "
                f"| {_fmt(row['tree_peak_rss_mb'], '.0f')} | {_fmt(row['connections'], '.0f')} "
                f"| {_fmt(row['peak_inflight'], '.0f')} |"
            )
            last = next(r for r in reversed(runs[key]) if "error" not in r)
            extra, setup = last["extra"], last["setup"]
            bits = []
            if extra.get("convert_workers"):
                bits.append(
                    f"{extra['converted_on_workers']} of {last['ok']} pages converted on "
                    f"{extra['convert_workers']} worker processes (the rest in-process while "
                    f"they started, or small); a worker's peak RSS "
                    f"{last['children_max_rss_mb']:.0f} MB"
                )
            if contender.code == "before":
                bits.append(f"websearch_core imported from {setup['websearch_core']}")
            if len(runs[key]) > 1:
                bits.append(
                    "rounds: "
                    + " / ".join(
                        "failed" if "error" in r else f"{r['pages_per_s']:.1f}" for r in runs[key]
                    )
                    + " pages/s"
                )
            if "ray_init_s" in setup:
                bits.append(f"ray.init {setup['ray_init_s']:.1f} s (not timed)")
                by_name = last["cpu"].get("children_by_name", {})
                top = sorted(by_name.items(), key=lambda item: -item[1])[:4]
                bits.append(
                    "Ray processes' CPU: " + ", ".join(f"{name} {sec:.1f} s" for name, sec in top)
                )
            if row["robots"]:
                bits.append(f"{row['robots']:.0f} robots.txt request(s)")
            if row["errors"]:
                bits.append(f"failures: {row['errors']}")
            # Ray's processes that its driver does not reap would count as "other" here.
            if row["foreign_cores"] > 0.15 and key != "ray":
                bits.append(f"other processes on the machine: {row['foreign_cores']:.2f} cores")
            if row["failed_rounds"]:
                bits.append(f"{row['failed_rounds']} round(s) failed")
            if bits:
                notes.append(f"{label}: " + "; ".join(bits))
        if notes:
            out += ["", *(f"- {note}" for note in notes)]
        # sources digest -> where the code came from, for the old and the current code
        codes: dict[str, dict[str, set[str]]] = {"before": {}, "current": {}}
        for key, rs in runs.items():
            for r in rs:
                digest = r.get("setup", {}).get("source_sha256")
                if digest:
                    which = "before" if BY_KEY[key].code == "before" else "current"
                    codes[which].setdefault(digest, set()).add(r.get("code", "?"))
        for which, digests in codes.items():
            if not digests:
                continue
            seen = "; ".join(
                f"sources {digest} ({', '.join(sorted(where))})"
                for digest, where in digests.items()
            )
            warning = " WARNING: the code changed during the run" if len(digests) > 1 else ""
            out.append(f"- {which} code: {seen}{warning}")
        attempts = [a for rs in runs.values() for r in rs for a in r["off_box"]]
        off_box = sorted({attempt.split(" (pid")[0] for attempt in attempts})
        unexpected = sorted(
            {
                path
                for rs in runs.values()
                for r in rs
                for path in r.get("server", {}).get("unexpected", [])
            }
        )
        out.append(
            f"- off-box connects/lookups refused: {', '.join(off_box) or 'none'}; "
            f"unexpected paths: {', '.join(unexpected) or 'none'}"
        )
    out += [
        "",
        "pages/s: pages that came back with content / wall time of the read (set-up, imports, "
        "ray.init and closing the session are outside it). cores busy: CPU seconds of the "
        "contender's process and its children (conversion workers: RUSAGE_CHILDREN after the "
        "session is closed; Ray: raylet, GCS, agents and actors read from /proc before "
        "ray.shutdown) / wall time; the page server's CPU is not included. RSS MB: peak RSS "
        "(ru_maxrss) of the contender's own process. tree peak MB: the largest sum of RSS over "
        f"that process and all its descendants, sampled every {SAMPLE_EVERY_S} s (workers, "
        "Ray's processes; Ray's shared-memory object store is counted in every process that "
        "maps it). TCP conns: connections the server accepted; peak in flight: most requests "
        "the server was answering at once.",
        f"Wall time of the whole run: {report['seconds'] / 60:.1f} min.",
    ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.03, 0.1])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians)")
    parser.add_argument(
        "--only",
        type=lambda text: [k.strip() for k in text.split(",") if k.strip()],
        help=f"contenders to run, comma-separated: {', '.join(BY_KEY)}",
    )
    parser.add_argument("--timeout", type=float, default=CHILD_TIMEOUT_S, help="per child, s")
    parser.add_argument(
        "--after",
        metavar="REF",
        help="measure the current code as committed at REF (git archive), not the working tree",
    )
    parser.add_argument(
        "--before",
        metavar="REF",
        default=BEFORE_COMMIT,
        help=f"the commit the 'before' rows run (default {BEFORE_COMMIT}, before bulk reading)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the *.html.gz pages")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(json.loads(args.config))
        return
    if args.child:
        child_main(json.loads(args.config))
        return
    unknown = [key for key in args.only or [] if key not in BY_KEY]
    if unknown:
        parser.error(f"unknown contender(s) {unknown}; choose from {', '.join(BY_KEY)}")
    report = measure(args)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    try:
        lines = tables(report)
    except Exception:  # a bug in the tables must not lose a 20-minute run's numbers
        print(json.dumps(report, indent=2))
        raise
    print("\n".join(lines))


if __name__ == "__main__":
    main()
