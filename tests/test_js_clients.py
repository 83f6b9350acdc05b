"""``websearch serve`` used by Firecrawl's own JavaScript SDK (``@mendable/firecrawl-js``,
pinned in tests/js/package.json and installed by scripts/test.sh with ``npm ci``), unchanged,
on loopback: what its users see for a scrape, its warnings, and for the operations the
service does not serve (crawl, map, extract), which must print the service's message, never
``[object Object]``."""

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
from tests.support.service import Service, run_service

KEY = "js-client-key-6a5b4c3d2e1f"
CLIENTS = Path(__file__).parent / "js"


def _js_clients_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (CLIENTS / "node_modules" / "@mendable" / "firecrawl-js").is_dir():
        return "the JS clients are not installed (npm ci --prefix tests/js)"
    return None


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[Service, FakeEngines]]:
    missing = _js_clients_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the JavaScript clients: {missing}")
        pytest.skip(missing)
    with fake_engines() as engines:
        environment = {
            **engines.environment(),
            "WEBSEARCH_API_KEY": KEY,
            "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1",
        }
        with run_service(environment) as running:
            yield running, engines


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
