"""The menu the model reads (seed 000), and the memo that stops a looping agent."""

from __future__ import annotations

import pytest

from tests.support.http_server import Reply, ScriptedServer
from websearch_core import EngineOutcome, SearchResponse, SearchResult, WebSearch, WebSearchError


def response(**kwargs: object) -> SearchResponse:
    fields: dict[str, object] = {
        "query": "go 1.26 release notes",
        "provider": "brave",
        "sent_query": "go 1.26 release notes",
        "results": [
            SearchResult(
                rank=1,
                title="Go 1.26 Release Notes",
                url="https://go.dev/doc/go1.26",
                snippet="Go 1.26 adds\n  range-over-func   iterators.",
                published="2026-02-11T10:00:00",
            ),
            SearchResult(rank=2, title="Go 1.26 is released", url="https://go.dev/blog/go1.26"),
        ],
    }
    fields.update(kwargs)
    return SearchResponse.model_validate(fields)


def test_menu_matches_seed_000() -> None:
    assert response().render() == (
        "1. Go 1.26 Release Notes — https://go.dev/doc/go1.26\n"
        "   2026-02-11 · Go 1.26 adds range-over-func iterators.\n"
        "2. Go 1.26 is released — https://go.dev/blog/go1.26\n"
        "\n"
        '2 results from brave for "go 1.26 release notes".'
    )


def test_answer_leads_and_failed_engines_are_named() -> None:
    text = response(
        answer="Go 1.26 shipped in\nFebruary.",
        outcomes=[EngineOutcome(engine="google", status="down", error="timeout")],
        results=[],
    ).render()
    assert text == (
        "Answer: Go 1.26 shipped in February.\n"
        "\n"
        "Engines that failed: google (timeout).\n"
        "\n"
        '0 results from brave for "go 1.26 release notes".'
    )


def test_snippets_and_titles_are_capped_per_result() -> None:
    result = SearchResult(rank=1, title="T" * 500, url="https://e.org/", snippet="word " * 500)
    assert len(result.snippet) <= 240
    assert result.snippet.endswith("…")
    assert len(result.title) <= 160


def test_count_is_capped_at_ten() -> None:
    with pytest.raises(ValueError, match="less than or equal to 10"):
        WebSearch().search("x", count=11)


def test_memo_is_bounded(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    ws = WebSearch("searxng", searxng_url=server.url, memo_size=2)
    for query in ("a", "b", "c"):
        ws.search(query)
    assert len(ws._memo) == 2
    ws.search("a")  # fell out: asked again
    ws.search("c")  # still there
    assert server.hits("/search") == 4


def test_different_options_are_different_memo_entries(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    ws = WebSearch("searxng", searxng_url=server.url)
    ws.search("a")
    ws.search("a", count=3)
    ws.search("a", freshness="day")
    assert server.hits("/search") == 3


def test_an_identical_query_is_answered_from_the_memo(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": [{"title": "T", "url": "https://e.org/"}]}))
    ws = WebSearch("searxng", searxng_url=server.url)
    first = ws.search("memo probe")
    second = ws.search("  memo   probe ")  # the same query once whitespace is normalised
    assert server.hits("/search") == 1
    assert (first.from_memo, second.from_memo) == (False, True)
    assert second.results == first.results
    assert second.render() == first.render()


async def test_sync_and_async_searches_share_one_memo(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    ws = WebSearch("searxng", searxng_url=server.url)
    ws.search("shared")
    assert (await ws.asearch("shared")).from_memo
    await ws.asearch("only async")
    assert ws.search("only async").from_memo
    assert server.hits("/search") == 2


def test_memo_size_zero_asks_every_time(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    ws = WebSearch("searxng", searxng_url=server.url, memo_size=0)
    assert not ws.search("again").from_memo
    assert not ws.search("again").from_memo
    assert server.hits("/search") == 2


def test_each_session_has_its_own_memo(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    WebSearch("searxng", searxng_url=server.url).search("q")
    assert not WebSearch("searxng", searxng_url=server.url).search("q").from_memo
    assert server.hits("/search") == 2


def test_a_failed_search_is_not_memoised(server: ScriptedServer) -> None:
    server.script("/search", Reply(400, "bad"), Reply(200, {"results": []}))
    ws = WebSearch("searxng", searxng_url=server.url)
    with pytest.raises(WebSearchError):
        ws.search("q")
    assert not ws.search("q").from_memo
    assert server.hits("/search") == 2
