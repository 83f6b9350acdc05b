"""What WebSearch costs on top of the HTTP call it makes, measured in one run.

A local server answers SearXNG-shaped JSON. The same N searches go through ``WebSearch``
(validation, routing, retry path, decoding into models, memo bookkeeping) and through a bare
``httpx.Client.get`` + ``.json()`` on the same endpoint; the ratio is the package's overhead.
Then the cost of a memo hit, and of normalising 200,000-character adversarial domains.

    python benchmarks/search_overhead.py [--n 500]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from websearch_core import WebSearch
from websearch_core.domains import normalise_domain

BODY = json.dumps(
    {
        "query": "q",
        "number_of_results": 0,
        "results": [
            {
                "url": f"https://example.org/doc/{i}",
                "title": f"Result {i}: a reasonably long title like real ones",
                "content": "A snippet of about two lines of text, as engines return. " * 3,
                "engine": "localjson",
                "engines": ["localjson"],
                "publishedDate": "2026-02-11T10:00:00",
            }
            for i in range(10)
        ],
        "answers": [],
        "unresponsive_engines": [],
    }
).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle plus delayed ACK
        # adds ~40 ms to every keep-alive response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        pass


def per_call_us(func: Callable[[int], object], n: int) -> float:
    started = time.perf_counter()
    for i in range(n):
        func(i)
    return (time.perf_counter() - started) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=500)
    n = parser.parse_args().n

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"

    bare = httpx.Client()
    ws = WebSearch("searxng", searxng_url=base, memo_size=4 * n)

    def bare_call(i: int) -> object:
        response = bare.get(f"{base}/search", params={"q": f"query {i}", "format": "json"})
        return response.json()["results"][:5]

    def ws_call(i: int) -> object:
        return ws.search(f"query {i}").render()

    for warm in range(20):  # connection set-up and imports out of the way
        bare_call(warm)
        ws_call(10_000 + warm)

    # Interleave rounds so machine noise hits both sides alike.
    bare_runs, ws_runs = [], []
    for _ in range(5):
        bare_runs.append(per_call_us(bare_call, n // 5))
        ws_runs.append(per_call_us(lambda i: ws_call(i + 100_000 * len(ws_runs)), n // 5))
    bare_us, ws_us = statistics.median(bare_runs), statistics.median(ws_runs)

    memo_us = per_call_us(lambda i: ws.search("query 0"), n)

    async def async_side() -> tuple[float, float]:
        async with httpx.AsyncClient() as client, WebSearch("searxng", searxng_url=base) as aws:
            started = time.perf_counter()
            for i in range(n // 5):
                response = await client.get(
                    f"{base}/search", params={"q": f"a{i}", "format": "json"}
                )
                response.json()
            bare_a = (time.perf_counter() - started) / (n // 5) * 1e6
            started = time.perf_counter()
            for i in range(n // 5):
                (await aws.asearch(f"a{i}")).render()
            return bare_a, (time.perf_counter() - started) / (n // 5) * 1e6

    bare_async_us, ws_async_us = asyncio.run(async_side())

    adversarial = ["a" + "/" * 200_000 + "a", "a." * 100_000, "@" * 200_000 + "example.com"]
    redos_ms = []
    for raw in adversarial:
        started = time.perf_counter()
        with contextlib.suppress(ValueError):
            normalise_domain(raw)
        redos_ms.append((time.perf_counter() - started) * 1000)

    print(f"search overhead, {n} searches against a loopback server (10 results per answer)")
    rows = [
        ("bare httpx get + json (sync)", bare_us, bare_us),
        ("WebSearch.search + render (sync)", ws_us, bare_us),
        ("bare httpx get + json (async)", bare_async_us, bare_async_us),
        ("WebSearch.asearch + render (async)", ws_async_us, bare_async_us),
        ("memo hit (identical query, sync)", memo_us, bare_us),
    ]
    print(f"{'path':<40}{'µs/call':>12}{'ratio':>10}")
    for name, value, baseline in rows:
        print(f"{name:<40}{value:>12.1f}{value / baseline:>10.3f}")
    added = f"{ws_us - bare_us:.0f} µs sync, {ws_async_us - bare_async_us:.0f} µs async"
    print(f"added per search: {added}")
    timings = ", ".join(f"{ms:.2f} ms" for ms in redos_ms)
    print(f"normalise 200,000-char adversarial domains: {timings}")
    httpd.shutdown()


if __name__ == "__main__":
    main()
