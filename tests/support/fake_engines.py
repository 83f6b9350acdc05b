"""Search engines and pages on loopback for the service's tests: Brave's and Mojeek's APIs
answering every query with results that name it (so a test can tell each answer belongs to
its request), pages that name their path, and switches to take an engine down mid-run.

Not recorded from the vendors: the shapes are the ones the providers' cassettes hold
(tests/cassettes), reduced to the fields the providers read.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from websearch_core import WebSearch

__all__ = ["FakeEngines", "fake_engines", "result_url"]


def result_url(engine: str, query: str, index: int) -> str:
    return f"https://{engine}.example/{urllib.parse.quote(query, safe='')}/{index}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # hundreds of connects at once must not wait on SYN retries

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that stopped waiting (a hung engine's request cut at its deadline) is
        # what the tests provoke; anything else is still reported.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeEngines:
    def __init__(self) -> None:
        self.down: set[str] = set()
        self.delay_s: dict[str, float] = {}
        self.hits: dict[str, int] = {}
        self._lock = threading.Lock()
        engines = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without this, each answer waits ~40 ms
            # for the client's delayed acknowledgement.
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query))
                engine = parts.path.split("/")[1]
                with engines._lock:
                    engines.hits[engine] = engines.hits.get(engine, 0) + 1
                time.sleep(engines.delay_s.get(engine, 0.0))
                if engine == "pages":
                    self._send(200, "text/html; charset=utf-8", engines.page(parts.path))
                    return
                if engine in engines.down:
                    self._send(500, "application/json", b'{"error": "down"}')
                    return
                q = query.get("q", "")
                rows = [
                    {"title": f"{q} ({engine} {i})", "url": result_url(engine, q, i)}
                    for i in range(1, 4)
                ]
                if engine == "brave":
                    body = {"web": {"results": [{**r, "description": "b"} for r in rows]}}
                elif engine == "mojeek":
                    results = [{**r, "desc": "m"} for r in rows]
                    body = {"response": {"status": "OK", "results": results}}
                else:
                    self._send(404, "text/plain", b"no such engine")
                    return
                self._send(200, "application/json", json.dumps(body).encode())

            def _send(self, status: int, media: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @staticmethod
    def page(path: str) -> bytes:
        """A small article named by the path's last part; a name starting with ``big`` is
        an article of about 120 kB (worth a conversion worker)."""
        name = path.rsplit("/", 1)[-1]
        more = "".join(
            f"<p>Section {i} of {name} goes on about its subject at some length. "
            + "Every sentence here adds a little more prose to read. " * 20
            + "</p>"
            for i in range(100 if name.startswith("big") else 0)
        )
        return (
            f"<!doctype html><html lang='en'><head><title>Page {name}</title>"
            f"<meta name='description' content='about {name}'></head><body>"
            f"<nav><a href='/pages/menu'>Menu</a></nav><main><article><h1>Page {name}</h1>"
            f"<p>This page is called {name}. " + "It has a paragraph of prose. " * 20 + "</p>"
            f"{more}<p class='aside'>Aside for {name}.</p><a href='/pages/next#top'>next</a>"
            "</article></main><footer>Footer words</footer></body></html>"
        ).encode()

    def environment(self) -> dict[str, str]:
        """The service's settings for these engines (the keys are fakes)."""
        return {
            "BRAVE_API_KEY": "fake-brave-key",
            "BRAVE_BASE_URL": f"{self.url}/brave",
            "MOJEEK_API_KEY": "fake-mojeek-key",
            "MOJEEK_BASE_URL": f"{self.url}/mojeek",
            "WEBSEARCH_BLEND_ENGINES": "brave,mojeek",
        }

    def blend(self, **options: Any) -> WebSearch:
        """A blend of these engines, in this process."""
        env = self.environment()
        return WebSearch(
            "blend",
            brave_api_key=env["BRAVE_API_KEY"],
            brave_base_url=env["BRAVE_BASE_URL"],
            mojeek_api_key=env["MOJEEK_API_KEY"],
            mojeek_base_url=env["MOJEEK_BASE_URL"],
            **options,
        )

    def start(self) -> None:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def fake_engines() -> Iterator[FakeEngines]:
    engines = FakeEngines()
    engines.start()
    try:
        yield engines
    finally:
        engines.stop()
