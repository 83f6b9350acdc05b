"""The menu the model reads, and the memo that stops a looping agent."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.support.http_server import Reply, ScriptedServer
from websearch_core import (
    EngineOutcome,
    InvalidRequestError,
    Page,
    SearchResponse,
    SearchResult,
    WebSearch,
    WebSearchError,
)
from websearch_core.models import SearchRequest
from websearch_core.render import render_page


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


@pytest.mark.parametrize("asked", [11, 20, 10**9])
def test_a_count_over_ten_is_capped_and_the_response_says_so(
    server: ScriptedServer, asked: int
) -> None:
    rows = [{"title": f"r{i}", "url": f"https://e.org/{i}", "content": "c"} for i in range(30)]
    server.script("/search", Reply(200, {"results": rows}))
    response = WebSearch("searxng", searxng_url=server.url).search("x", count=asked)
    assert len(response.results) == 10
    assert response.notes == [f"count capped at 10 (asked for {asked:,})"]
    assert f"Note: count capped at 10 (asked for {asked:,}).\n\n10 results" in response.render()
    # Up to the cap nothing is said: a note is for what was not given as asked.
    exact = WebSearch("searxng", searxng_url=server.url).search("x", count=10)
    assert exact.notes == []
    assert "Note:" not in exact.render()


def test_an_absurd_count_is_capped_and_said_without_writing_it_out(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    response = WebSearch("searxng", searxng_url=server.url).search("x", count=10**5000)
    assert response.notes == ["count capped at 10 (asked for more than 10^18)"]


def test_a_capped_request_validated_again_keeps_what_was_asked() -> None:
    asked = SearchRequest(query="q", count=50)
    assert SearchRequest.model_validate(asked) is asked
    assert asked.count_asked == 50  # validating an instance must not rewrite it
    assert asked != SearchRequest(query="q", count=10)  # a memo keeps them apart


@pytest.mark.parametrize("count", [0, -1, True, "5", 2.0])
def test_a_count_that_is_no_whole_number_of_at_least_one_is_still_refused(count: object) -> None:
    with pytest.raises(InvalidRequestError, match="count"):
        WebSearch().search("x", count=count)  # type: ignore[arg-type]


def test_an_answer_asked_for_and_not_given_is_said(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": [{"title": "t", "url": "https://e.org/"}]}))
    response = WebSearch("searxng", searxng_url=server.url).search("x", include_answer=True)
    assert response.answer is None
    assert "Note: no answer: searxng gave none for this search, only results." in response.render()


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


# -- the fence's label, budget and continuation markers, exactly ----------------------------


def page(content: str = "x", **fields: object) -> Page:
    values: dict[str, object] = {
        "url": "https://e.org/p",
        "final_url": "https://e.org/p",
        "status": 200,
        "content_type": "text/plain",
        "kind": "text",
        "content": content,
        "bytes_read": len(content),
        "max_bytes": 2_000_000,
        "fetched_at": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    }
    values.update(fields)
    return Page.model_validate(values)


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (41_200, "41.2 kB"),
        (999_999, "1000.0 kB"),
        (1_000_000, "1.0 MB"),
        (1_049_999, "1.0 MB"),
        (1_050_000, "1.1 MB"),
        (2_500_000, "2.5 MB"),
    ],
)
def test_the_label_gives_the_size_read_in_b_kb_or_mb(size: int, shown: str) -> None:
    first = page(bytes_read=size).render().splitlines()[0]
    assert first == f"--- begin fetched content: https://e.org/p (text/plain, {shown}) ---"


def test_a_long_page_is_cut_in_the_middle_with_exact_counts() -> None:
    content = "".join(chr(ord("a") + i % 26) for i in range(100))
    body = page(content).render(max_chars=30).splitlines()[1:-2]
    assert body == [
        content[:20],
        "[… 70 characters cut here (characters 20 to 90 of 100): fetch again with offset=20"
        " to read them …]",
        content[90:],
    ]


def test_a_continuation_says_what_is_left_and_nothing_past_the_end() -> None:
    content = "0123456789" * 10
    middle = page(content).render(max_chars=30, offset=20).splitlines()[1:-2]
    assert middle == [
        "[… continuing at character 20 of 100 …]",
        content[20:50],
        "[… 50 more characters: fetch again with offset=50 …]",
    ]
    last = page(content).render(max_chars=30, offset=70).splitlines()[1:-2]
    assert last == ["[… continuing at character 70 of 100 …]", content[70:]]
    assert page(content).render(offset=99).splitlines()[2] == "9"
    for past in (100, 150):
        with pytest.raises(InvalidRequestError, match=f"offset {past} is past the end"):
            page(content).render(offset=past)


@pytest.mark.parametrize(
    ("offset", "marked"), [(0, True), (20, False), (60, False), (70, True), (90, True)]
)
def test_the_read_ceiling_is_said_where_the_window_reaches_the_end(
    offset: int, marked: bool
) -> None:
    content = "0123456789" * 10
    truncated = page(content, truncated=True, max_bytes=100)
    text = truncated.render(max_chars=30, offset=offset)
    assert ("larger than the 100 B read limit" in text) is marked
    assert "read limit" not in page(content).render(max_chars=30, offset=offset)


@pytest.mark.parametrize(
    ("published", "shown"),
    [
        ("2026-02-11T09:30:00Z", "2026-02-11"),
        ("2026-02-11", "2026-02-11"),
        ("2 days ago", "2 days ago"),
        ("2026/02/11 09:30", "2026/02/11 09:30"),
        ("20260-2-119", "20260-2-119"),
        (
            "Feb 11, 2026, updated: a note of more than forty letters",
            "Feb 11, 2026, updated: a note of more th",
        ),
    ],
)
def test_a_result_date_is_shortened_to_the_day_or_kept(published: str, shown: str) -> None:
    result = SearchResult(rank=1, title="T", url="https://e.org/", snippet="s", published=published)
    response = SearchResponse(query="q", provider="p", results=[result], sent_query="q")
    assert response.render().splitlines()[1] == f"   {shown} · s"


def test_a_page_of_exactly_the_budget_is_not_cut() -> None:
    content = "y" * 30
    assert page(content).render(max_chars=30).splitlines()[1:-2] == [content]
    assert "cut here" in page(content + "z").render(max_chars=30)


def test_an_error_page_shows_its_status_and_the_start_of_its_answer() -> None:
    answer = "<h1>Not here</h1>" + "e" * 1500
    rendered = page(answer, status=404, reason="Not Found").render().splitlines()
    assert (
        rendered[1]
        == "HTTP 404 Not Found: the server answered with an error. The start of its answer:"
    )
    assert rendered[2] == ""
    assert rendered[3] == answer[:1000]
    empty = page("", status=503, reason="Service Unavailable").render().splitlines()
    assert empty[1:-2] == ["HTTP 503 Service Unavailable: the server answered with an error."]


def test_a_page_shorter_than_the_budget_is_shown_whole() -> None:
    assert page("short").render(max_chars=30).splitlines()[1:-2] == ["short"]


def test_a_continuation_past_the_end_says_nothing_more() -> None:
    content = "0123456789" * 10
    assert page(content).render(max_chars=30, offset=90).splitlines()[1:-2] == [
        "[… continuing at character 90 of 100 …]",
        content[90:],
    ]


@pytest.mark.parametrize(
    ("published", "shown"),
    [("1234-", "1234-"), ("2026-0211234", "2026-0211234"), ("2026-02-11 10:00", "2026-02-11")],
)
def test_only_an_iso_date_is_shortened(published: str, shown: str) -> None:
    result = SearchResult(rank=1, title="T", url="https://e.org/", snippet="s", published=published)
    response = SearchResponse(query="q", provider="p", results=[result], sent_query="q")
    assert response.render().splitlines()[1] == f"   {shown} · s"


def test_down_engines_are_named_as_failed_and_blind_ones_apart() -> None:
    outcomes = [
        EngineOutcome(engine="alpha", status="answered", results=3),
        EngineOutcome(engine="beta", status="blind"),
        EngineOutcome(engine="gamma", status="down", error="timeout"),
    ]
    response = SearchResponse(
        query="q", provider="p", results=[], sent_query="q", outcomes=outcomes
    )
    shown = response.render()
    assert "Engines that failed: gamma (timeout)." in shown
    assert "Engines that answered with nothing usable: beta." in shown
    assert "alpha" not in shown


def test_render_page_starts_at_the_beginning_unless_told_otherwise() -> None:
    content = "abcdefghij" * 10
    shown = render_page(page(content), max_chars=20).splitlines()[1]
    assert shown.startswith("abcdefghij")
    assert render_page(page(content), max_chars=20) == page(content).render(max_chars=20)
