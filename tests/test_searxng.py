"""SearXNG against a REAL searx 0.17 on loopback, plus cassettes recorded from it.

The searx instance (installed by scripts/install-searx.sh) has one engine, searx's own
``json_engine``, pointed at a scripted loopback server: a whole metasearch round trip
with no internet. Without Python 3.8 these tests skip locally and fail under CI=true.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import skip_or_fail
from tests.support.http_server import Reply, ScriptedServer, scripted_server
from tests.support.searx import ENGINE_NAME, run_searx, searx_unavailable_reason
from websearch_core import WebSearch

ENGINE_RESULTS = {
    "results": [
        {
            "url": "https://docs.python.org/3/library/asyncio.html",
            "title": "asyncio — Asynchronous I/O",
            "content": "asyncio is a library to write concurrent code using async/await.",
        },
        {
            "url": "https://peps.python.org/pep-0492/",
            "title": "PEP 492 – Coroutines",
            "content": "New syntax and semantics to enhance coroutine support.",
        },
        {"url": "not a url", "title": "broken entry", "content": "skipped: no http(s) URL"},
    ]
}


@pytest.fixture(scope="module")
def engine() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


@pytest.fixture(scope="module")
def searx(engine: ScriptedServer) -> Iterator[str]:
    reason = searx_unavailable_reason()
    if reason is not None:
        skip_or_fail(reason)
    with run_searx(f"{engine.url}/engine") as base_url:
        yield base_url


@pytest.fixture
def answering(engine: ScriptedServer) -> ScriptedServer:
    engine.script("/engine", Reply(200, ENGINE_RESULTS))
    engine.seen.clear()
    return engine


def test_real_searx_results_are_mapped(searx: str, answering: ScriptedServer) -> None:
    response = WebSearch("searxng", searxng_url=searx).search("python asyncio", count=5)
    assert response.provider == "searxng"
    assert [r.url for r in response.results] == [
        "https://docs.python.org/3/library/asyncio.html",
        "https://peps.python.org/pep-0492/",
    ]
    assert response.results[0].title == "asyncio — Asynchronous I/O"
    assert response.results[0].engine == ENGINE_NAME
    assert [(o.engine, o.status, o.results) for o in response.outcomes] == [
        (ENGINE_NAME, "answered", 2)
    ]
    assert answering.seen[-1].query["q"] == "python asyncio"


async def test_real_searx_async_and_site_operator(searx: str, answering: ScriptedServer) -> None:
    async with WebSearch("searxng", searxng_url=searx) as ws:
        response = await ws.asearch("asyncio", site="docs.python.org", count=1)
    assert len(response.results) == 1
    assert response.sent_query == "asyncio site:docs.python.org"
    assert answering.seen[-1].query["q"] == "asyncio site:docs.python.org"


def test_real_searx_engine_failure_is_visible(searx: str, engine: ScriptedServer) -> None:
    engine.script("/engine", Reply(500, "engine exploded"))
    response = WebSearch("searxng", searxng_url=searx).search("python asyncio broken")
    assert response.results == []
    assert [(o.engine, o.status) for o in response.outcomes] == [(ENGINE_NAME, "down")]
    assert response.outcomes[0].error
    assert f"Engines that failed: {ENGINE_NAME}" in response.render()


def test_real_searx_identical_query_is_memoised(searx: str, answering: ScriptedServer) -> None:
    ws = WebSearch("searxng", searxng_url=searx)
    first = ws.search("memo probe")
    second = ws.search("  memo   probe ")  # same query once whitespace is normalised
    assert answering.hits("/engine") == 1
    assert second.from_memo
    assert not first.from_memo
    assert second.results == first.results


@pytest.fixture(scope="module")
def recorded_searx(request: pytest.FixtureRequest) -> Iterator[str]:
    """Replaying needs no server (the port is not matched); recording needs the real one.

    Module scope starts searx before the cassette opens, so its readiness probe is not taped.
    """
    if request.config.getoption("--record-mode") in (None, "none"):
        yield "http://127.0.0.1:8888"
        return
    reason = searx_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with scripted_server() as engine:
        engine.script("/engine", Reply(200, ENGINE_RESULTS))
        with run_searx(f"{engine.url}/engine") as base_url:
            yield base_url


@pytest.mark.vcr
def test_searx_017_json_is_understood(recorded_searx: str) -> None:
    """Recorded from the real searx 0.17 (older JSON: string answers, number_of_results)."""
    response = WebSearch("searxng", searxng_url=recorded_searx).search("python asyncio")
    assert [r.title for r in response.results] == [
        "asyncio — Asynchronous I/O",
        "PEP 492 – Coroutines",
    ]
    assert response.outcomes[0].status == "answered"


@pytest.mark.vcr
def test_current_searxng_json_is_understood() -> None:
    """Constructed from SearXNG's source: answers are objects, number_of_results is gone."""
    ws = WebSearch("searxng", searxng_url="http://127.0.0.1:8888")
    response = ws.search("euro", include_answer=True)
    assert [r.url for r in response.results] == [
        "https://en.wikipedia.org/wiki/Euro",
        "https://example.org/euro/what-is-the-euro.html",
        "https://example.net/euro/banknotes?lang=en",
    ]
    assert response.results[0].published == "2025-11-02T00:00:00"
    assert response.answer is not None
    assert response.answer.startswith("The euro is the official currency")
    outcomes = {(o.engine, o.status) for o in response.outcomes}
    assert {("braveapi", "answered"), ("duckduckgo", "answered")} <= outcomes
    assert {("google", "down"), ("startpage", "down")} <= outcomes
    assert "google (timeout)" in response.render()
