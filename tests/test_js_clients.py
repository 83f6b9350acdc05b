"""``websearch serve`` used by Firecrawl's own JavaScript SDK (``@mendable/firecrawl-js``,
pinned in tests/js/package.json and installed by scripts/test.sh with ``npm ci``), unchanged,
on loopback: what its users see for a scrape, its warnings, a search that scrapes its results,
and for the operations the service does not serve (crawl, map, extract), which must print the
service's message, never ``[object Object]``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_engines import FakeEngines, fake_engines
from tests.support.http_server import Reply, ScriptedServer, scripted_server
from tests.support.service import Service, free_port, run_service

KEY = "js-client-key-6a5b4c3d2e1f"
CLIENTS = Path(__file__).parent / "js"


def _js_clients_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (CLIENTS / "node_modules" / "@mendable" / "firecrawl-js").is_dir():
        return "the JS clients are not installed (npm ci --prefix tests/js)"
    return None


def _need_js_clients() -> None:
    missing = _js_clients_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the JavaScript clients: {missing}")
        pytest.skip(missing)


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[Service, FakeEngines]]:
    _need_js_clients()
    with fake_engines() as engines:
        environment = {
            **engines.environment(),
            "WEBSEARCH_API_KEY": KEY,
            "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1",
        }
        with run_service(environment) as running:
            yield running, engines


@pytest.fixture(scope="module")
def search_service() -> Iterator[tuple[Service, ScrapedWeb]]:
    """The service searching a SearXNG-shaped engine on loopback whose results are pages on
    the same server: two articles, a 404, and a port nobody listens on."""
    _need_js_clients()
    with scripted_server() as server:
        results = [
            {"title": "Alpha", "url": f"{server.url}/pages/alpha", "content": "about alpha"},
            {"title": "Gone", "url": f"{server.url}/gone", "content": "a dead link"},
            {"title": "Beta", "url": f"{server.url}/pages/beta", "content": "about beta"},
            {"title": "Closed", "url": f"http://127.0.0.1:{free_port()}/", "content": "none"},
        ]
        server.script("/search", Reply(200, {"results": results}))
        html = {"Content-Type": "text/html; charset=utf-8"}
        for name in ("alpha", "beta"):
            server.script(f"/pages/{name}", Reply(200, FakeEngines.page(f"/pages/{name}"), html))
        server.script("/gone", Reply(404, "<html><p>no such page</p></html>", html))
        environment = {
            "WEBSEARCH_PROVIDER": "searxng",
            "SEARXNG_URL": server.url,
            "WEBSEARCH_API_KEY": KEY,
            "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1",
        }
        with run_service(environment) as running:
            yield running, ScrapedWeb(server, results)


class ScrapedWeb:
    def __init__(self, server: ScriptedServer, results: list[dict[str, str]]) -> None:
        self.server = server
        self.results = results


def firecrawl_js(service: Service, page: str, *calls: str) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        ["node", str(CLIENTS / "firecrawl_client.mjs"), service.url, KEY, page, *calls],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(Path.home())},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {outcome["call"]: outcome for outcome in outcomes}


def test_the_js_sdk_scrapes_and_shows_the_warning(service: tuple[Service, FakeEngines]) -> None:
    running, engines = service
    got = firecrawl_js(running, f"{engines.url}/pages/jspage", "v2.scrape", "v1.scrapeUrl")
    v2, v1 = got["v2.scrape"], got["v1.scrapeUrl"]
    assert v2["ok"], v2
    assert "This page is called jspage" in v2["value"]["markdown"]
    assert v2["value"]["metadata"]["statusCode"] == 200
    assert "waitFor has no effect" in v2["value"]["warning"]  # the document's own warning
    assert v1["ok"], v1
    assert "This page is called jspage" in v1["value"]["markdown"]
    assert "waitFor has no effect" in v1["value"]["warning"]


def test_unserved_operations_print_the_service_message(
    service: tuple[Service, FakeEngines],
) -> None:
    running, engines = service
    calls = ("v2.map", "v2.startCrawl", "v2.extract", "v1.mapUrl", "v1.asyncCrawlUrl")
    got = firecrawl_js(running, f"{engines.url}/pages/x", *calls)
    for call in ("v2.map", "v2.startCrawl", "v2.extract"):
        assert not got[call]["ok"], got[call]
        assert "is not served here" in got[call]["message"], got[call]
        assert got[call]["status"] == 404
    for call in ("v1.mapUrl", "v1.asyncCrawlUrl"):  # v1 prints only its HTTP client's words
        assert not got[call]["ok"], got[call]
        assert "[object Object]" not in got[call]["message"], got[call]
        assert "404" in got[call]["message"], got[call]


def test_the_js_sdk_searches_and_reads_each_result(
    search_service: tuple[Service, ScrapedWeb],
) -> None:
    running, web = search_service
    got = firecrawl_js(running, "page called prose", "v2.search", "v2.searchPlain", "v1.search")
    v2, plain, v1 = got["v2.search"], got["v2.searchPlain"], got["v1.search"]
    assert v2["ok"], v2
    alpha, gone, beta, closed = v2["value"]["web"]
    assert [r["position"] for r in v2["value"]["web"]] == [1, 2, 3, 4]
    assert "This page is called alpha" in alpha["markdown"]
    assert "This page is called beta" in beta["markdown"]
    assert alpha["metadata"]["statusCode"] == 200
    assert (gone["metadata"]["statusCode"], gone["metadata"]["error"]) == (404, "Not Found")
    assert "markdown" not in closed  # kept, with why its page could not be read
    assert (closed["url"], closed["title"]) == (web.results[3]["url"], "Closed")
    assert closed["metadata"]["statusCode"] == 0
    assert "could not connect" in closed["metadata"]["error"]
    assert plain["ok"], plain
    assert plain["value"] == {"web": [
        {"url": r["url"], "title": r["title"], "description": r["content"], "position": rank}
        for rank, r in enumerate(web.results[:2], 1)
    ]}  # fmt: skip
    assert v1["ok"], v1
    assert v1["value"]["success"] is True
    documents = v1["value"]["data"]
    assert [d["url"] for d in documents] == [r["url"] for r in web.results]
    assert "This page is called alpha" in documents[0]["markdown"]
    assert documents[3]["metadata"]["statusCode"] == 0
