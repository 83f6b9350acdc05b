"""Bulk reading: conversion on worker processes, pooled connections, robots.txt, per-host
limits, and the data-engine surface (``websearch_core.bulk``), against real servers on
loopback (reached through the test-only private policy, as in test_fetch.py)."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.http_server import Reply, ScriptedServer
from tests.support.pages import HTML, article, serve_articles
from tests.support.raw_server import raw_server, read_request
from websearch_core import (
    FetchError,
    InvalidRequestError,
    Page,
    URLRefusedError,
    WebSearch,
    WebSearchError,
)
from websearch_core.bulk import (
    COLUMNS,
    BulkConfig,
    WebReader,
    afetch_batch,
    arrow_schema,
    fetch_batch,
)
from websearch_core.documents import document_id
from websearch_core.fetch.robots import MAX_RULES, RobotsRules
from websearch_core.fetch.workers import _PACKAGE_ROOT, ConversionWorkers, _Worker
from websearch_core.net.jail import JailPolicy

LOOPBACK = JailPolicy(allow_private=True)
REPO = Path(__file__).resolve().parent.parent


def session(**kwargs: Any) -> WebSearch:
    options: dict[str, Any] = {"fetch_policy": LOOPBACK, "memo_size": 0}
    options.update(kwargs)
    return WebSearch(**options)


def on_workers(**kwargs: Any) -> WebSearch:
    """A session whose bulk reads convert every big page on its 2 worker processes."""
    ws = session(convert_workers=2, **kwargs)
    ws._converters.wait_for_start = True  # no in-process conversion while they start
    return ws


def count_connections(server: ScriptedServer) -> list[int]:
    """A counter of the TCP connections the server accepts from now on."""
    accepted = [0]
    httpd = server._httpd
    process = httpd.process_request

    def counting(request: Any, client_address: Any) -> None:
        accepted[0] += 1
        process(request, client_address)

    httpd.process_request = counting  # type: ignore[method-assign]
    return accepted


def pages_of(outcomes: list[tuple[str, Page | WebSearchError]]) -> list[Page]:
    pages = [outcome for _, outcome in outcomes]
    assert all(isinstance(page, Page) and page.ok for page in pages), pages
    return pages  # type: ignore[return-value]


# -- conversion on worker processes ---------------------------------------------------------


def test_bulk_pages_from_workers_equal_single_fetches_in_input_order(
    server: ScriptedServer,
) -> None:
    urls = serve_articles(server, 40)
    with session() as single:
        expected = [single.fetch(url) for url in urls]
    with on_workers() as ws:
        sync_pages = pages_of(list(ws.fetch_many(urls)))

        async def read() -> list[tuple[str, Page | WebSearchError]]:
            return [pair async for pair in ws.afetch_many(urls)]

        async_pages = pages_of(asyncio.run(read()))
        assert ws._converters.converted_on_workers == 2 * len(urls)  # none converted here
    for got in (sync_pages, async_pages):
        assert [page.url for page in got] == urls
        assert [page.content for page in got] == [page.content for page in expected]
        assert [page.text for page in got] == [page.text for page in expected]
        assert [document_id(p.final_url, p.content) for p in got] == [
            document_id(p.final_url, p.content) for p in expected
        ]
    assert "Article 7" in sync_pages[7].content
    assert "not the article" not in sync_pages[7].content


def test_small_pages_and_plain_text_never_go_to_a_worker(server: ScriptedServer) -> None:
    server.script("/small", Reply(200, b"<p>A small page.</p>", HTML))
    server.script("/text", Reply(200, "plain " * 10_000))
    with on_workers() as ws:
        outcomes = list(ws.fetch_many([f"{server.url}/small", f"{server.url}/text"] * 3))
        assert all(isinstance(page, Page) and page.ok for _, page in outcomes)
        assert ws._converters.converted_on_workers == 0
        assert ws._converters.pids == []  # and no worker was even started


def test_a_short_batch_never_starts_the_workers(server: ScriptedServer) -> None:
    # Starting two interpreters costs more than ten pages save (a retriever's top k).
    urls = serve_articles(server, 10)
    with session(convert_workers=2) as ws:
        pages_of(list(ws.fetch_many(urls)))
        assert ws._converters.pids == []
        assert ws._converters.converted_on_workers == 0


def test_a_worker_that_died_idle_is_replaced_and_no_page_fails(server: ScriptedServer) -> None:
    urls = serve_articles(server, 30)
    with on_workers() as ws:
        pages_of(list(ws.fetch_many(urls[:10])))
        victim = ws._converters.pids[0]
        os.kill(victim, signal.SIGKILL)  # out of memory, a stray kill: while it held nothing
        psutil.Process(victim).wait(timeout=10)
        pages = pages_of(list(ws.fetch_many(urls[10:])))
        assert [page.url for page in pages] == urls[10:]
        pages_of(list(ws.fetch_many(urls[:10])))
        assert len(ws._converters.pids) == 2
        assert victim not in ws._converters.pids


def test_a_worker_killed_while_converting_fails_only_that_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The worker is stopped (SIGSTOP), handed a page, and killed once the page is in its
    # pipe: it held that page and never answered, whatever the machine's speed. That page is
    # lost and says so; the next pages convert on a new worker.
    page = article(1, size=40_000)  # worth a worker, and small enough to sit in the pipe
    small = article(2)
    handed = threading.Event()
    real_send = _Worker.send

    def send_then_tell(worker: _Worker, *args: Any) -> None:
        real_send(worker, *args)
        handed.set()

    monkeypatch.setattr(_Worker, "send", send_then_tell)
    workers = ConversionWorkers(1)
    workers.wait_for_start = True
    try:
        workers.submit(small, "text/html", "http://a.test/warm").result(timeout=60)
        (pid,) = workers.pids
        handed.clear()
        os.kill(pid, signal.SIGSTOP)
        converting = workers.submit(page, "text/html", "http://a.test/held")
        assert handed.wait(timeout=60)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(FetchError, match="worker converting it stopped") as lost:
            converting.result(timeout=60)
        assert lost.value.retryable
        after = workers.submit(small, "text/html", "http://a.test/after").result(timeout=60)
        assert after.title == "Article 2"
        assert workers.converted_on_workers == 2  # the first page and the one after
    finally:
        workers.close()


def test_a_worker_killed_mid_conversion_fails_only_its_page_in_an_async_batch(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The third page's worker is stopped and killed once the page is in its pipe: that page
    # is a FetchError in its place; the batch goes on and every other page is read.
    urls = serve_articles(server, 6)
    handed: list[str] = []
    real_send = _Worker.send

    def send_then_kill_on_the_third(worker: _Worker, *args: Any) -> None:
        url = args[1][-1]  # the call's arguments end with the page's URL
        if url.endswith("/p/2"):
            os.kill(worker.process.pid, signal.SIGSTOP)
            real_send(worker, *args)
            os.kill(worker.process.pid, signal.SIGKILL)
        else:
            real_send(worker, *args)
        handed.append(url)

    monkeypatch.setattr(_Worker, "send", send_then_kill_on_the_third)
    with session(convert_workers=1, fetch_concurrency=1) as ws:
        ws._converters.wait_for_start = True

        async def read() -> list[tuple[str, Page | WebSearchError]]:
            return [pair async for pair in ws.afetch_many(urls, concurrency=1)]

        outcomes = asyncio.run(read())
    assert [url for url, _ in outcomes] == urls
    lost = [outcome for url, outcome in outcomes if url.endswith("/p/2")]
    assert len(lost) == 1
    assert isinstance(lost[0], FetchError)
    assert "worker converting it stopped" in str(lost[0])
    others = [outcome for url, outcome in outcomes if not url.endswith("/p/2")]
    assert all(isinstance(page, Page) and page.ok for page in others)
    assert any(url.endswith("/p/2") for url in handed)  # it did reach a worker


def test_close_stops_the_workers(server: ScriptedServer) -> None:
    urls = serve_articles(server, 6)
    ws = on_workers()
    pages_of(list(ws.fetch_many(urls)))
    pids = ws._converters.pids
    assert len(pids) == 2
    ws.close()
    assert not any(psutil.pid_exists(pid) for pid in pids)
    pages_of(list(ws.fetch_many(urls)))  # a closed pool starts again when needed
    ws.close()


def test_closing_the_workers_during_a_batch_loses_no_page(server: ScriptedServer) -> None:
    urls = serve_articles(server, 60)
    with on_workers() as ws:
        outcomes = []
        for n, outcome in enumerate(ws.fetch_many(urls)):
            outcomes.append(outcome)
            if n == 3:
                ws._converters.close()  # what ws.close() from another thread does to them
        pages = pages_of(outcomes)
        assert [page.url for page in pages] == urls
        pages_of(list(ws.fetch_many(urls[:10])))  # and the session converts on after it
        assert len(ws._converters.pids) == 2


def test_a_script_without_a_main_guard_runs_its_top_level_once(
    server: ScriptedServer, tmp_path: Path
) -> None:
    # multiprocessing's spawn would re-run this top level in each worker (fetching again).
    urls = serve_articles(server, 12)
    script = tmp_path / "flat_script.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from websearch_core import WebSearch
            from websearch_core.net.jail import JailPolicy
            print("TOP LEVEL RAN", flush=True)
            ws = WebSearch(fetch_policy=JailPolicy(allow_private=True), convert_workers=2)
            ws._converters.wait_for_start = True
            pages = [p for _, p in ws.fetch_many({urls!r})]
            print("OK", sum(p.ok for p in pages), ws._converters.converted_on_workers)
            ws.close()
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("TOP LEVEL RAN") == 1
    assert "OK 12 12" in done.stdout
    assert sum(1 for seen in server.seen if seen.path.startswith("/p/")) == 12


def test_bulk_reads_from_inside_a_running_loop_and_from_threads(server: ScriptedServer) -> None:
    urls = serve_articles(server, 20)
    with on_workers() as ws:

        async def notebook_cell() -> list[Page]:  # Jupyter: a sync call inside a running loop
            return pages_of(list(ws.fetch_many(urls)))

        assert len(asyncio.run(notebook_cell())) == 20
        results: dict[int, list[Page]] = {}

        def read(n: int) -> None:
            results[n] = pages_of(list(ws.fetch_many(urls)))

        threads = [threading.Thread(target=read, args=(n,)) for n in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(results) == [0, 1, 2]
        assert all([p.url for p in pages] == urls for pages in results.values())


def test_a_session_serves_a_second_event_loop(server: ScriptedServer) -> None:
    # Pooled connections belong to the loop that opened them; a second asyncio.run used to
    # fail with "Event loop is closed".
    urls = serve_articles(server, 4)
    with session() as ws:
        for _ in range(3):
            assert asyncio.run(ws.afetch(urls[0])).ok

            async def read() -> list[tuple[str, Page | WebSearchError]]:
                return [pair async for pair in ws.afetch_many(urls)]

            pages_of(asyncio.run(read()))


# -- connections ----------------------------------------------------------------------------


def test_one_host_is_read_over_a_pool_of_connections(server: ScriptedServer) -> None:
    urls = serve_articles(server, 300)
    accepted = count_connections(server)
    with session(convert_workers=0) as ws:

        async def bulk() -> None:
            pages_of([pair async for pair in ws.afetch_many(urls, concurrency=16)])

        asyncio.run(bulk())
        bulk_connections = accepted[0]

        async def singles() -> None:  # an agent's own gather over afetch
            gate = asyncio.Semaphore(16)

            async def one(url: str) -> Page:
                async with gate:
                    return await ws.afetch(url)

            await asyncio.gather(*(one(url) for url in urls))

        accepted[0] = 0
        asyncio.run(singles())
    # Each connection is kept for the next page (it was 612-1,000 for 1,000 pages).
    assert bulk_connections <= 20
    assert accepted[0] <= 20


def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    # The server answers keep-alive, then hangs up while the connection sits in the pool: the
    # next fetch must see the connection is finished (readable at its end) and open another.
    def answer_then_hang_up(conn: socket.socket) -> None:
        if read_request(conn):
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
            )

    with raw_server(answer_then_hang_up) as server, session() as ws:

        async def twice() -> list[str]:
            first = await ws.afetch(f"{server.url}/a")
            await asyncio.sleep(0.2)  # the server's FIN arrives
            second = await ws.afetch(f"{server.url}/b")
            return [first.content, second.content]

        assert asyncio.run(twice()) == ["ok", "ok"]
        assert server.connections == 2


def test_each_new_connection_is_resolved_and_checked_and_a_pooled_one_keeps_its_address(
    server: ScriptedServer,
) -> None:
    serve_articles(server, 1)
    port = server.url.rsplit(":", 1)[1]
    url = f"http://pages.test:{port}/p/0"
    answer = [ip_address("127.0.0.1")]
    lookups = [0]

    def resolver(host: str, port: int) -> list[Any]:
        lookups[0] += 1
        return list(answer)

    with session(resolver=resolver, convert_workers=0) as ws:
        for _ in range(5):  # one after another: one connection, looked up once
            assert ws._fetcher.fetch_raw(url).status == 200
        assert lookups[0] == 1
        answer[:] = [ip_address("169.254.169.254")]  # the name now points at metadata
        assert ws._fetcher.fetch_raw(url).status == 200  # pooled: still the checked address
        assert lookups[0] == 1
        outcomes = list(ws.fetch_many([url] * 6, concurrency=6, robots=False))
        refused = [o for _, o in outcomes if isinstance(o, URLRefusedError)]
        assert refused
        assert all(o.reason == "metadata" for o in refused)
        assert lookups[0] >= 1 + len(refused)


# -- robots.txt -----------------------------------------------------------------------------

ROBOTS = "User-agent: *\nDisallow: /private\n\nUser-agent: other-bot\nDisallow: /\n"


def test_bulk_reads_honour_robots_txt_and_a_single_fetch_does_not_read_it(
    server: ScriptedServer,
) -> None:
    server.script("/robots.txt", Reply(200, ROBOTS))
    server.script("/public", Reply(200, article(1), HTML))
    server.script("/private/page", Reply(200, article(2), HTML))
    public, private = f"{server.url}/public", f"{server.url}/private/page"
    with session() as ws:
        assert ws.fetch(private).ok  # a person chose this page: no robots.txt
        assert server.hits("/robots.txt") == 0
        outcomes = dict(ws.fetch_many([public, private]))
        assert isinstance(outcomes[public], Page)
        refused = outcomes[private]
        assert isinstance(refused, URLRefusedError)
        assert refused.reason == "robots"
        assert "robots.txt disallows this page" in str(refused)
        assert not refused.retryable
        assert isinstance(dict(ws.fetch_many([private], robots=False))[private], Page)
    with session(bulk_robots=False) as ws:
        assert isinstance(dict(ws.fetch_many([private]))[private], Page)
    assert server.hits("/robots.txt") == 1


def test_robots_txt_is_read_once_per_site_by_many_threads_and_tasks(
    server: ScriptedServer,
) -> None:
    server.script("/robots.txt", Reply(200, ROBOTS, delay_s=0.3))
    urls = serve_articles(server, 40)
    with session() as ws:
        pages_of(list(ws.fetch_many(urls, concurrency=16)))
    with session() as ws:

        async def read() -> None:
            pages_of([pair async for pair in ws.afetch_many(urls, concurrency=16)])

        asyncio.run(read())
    assert server.hits("/robots.txt") == 2  # once per session, not once per URL


@pytest.mark.parametrize(("status", "allowed"), [(404, True), (410, True), (503, False)])
def test_robots_txt_status_decides_for_the_whole_site(
    server: ScriptedServer, status: int, allowed: bool
) -> None:
    server.script("/robots.txt", Reply(status, "whatever"))
    urls = serve_articles(server, 3)
    with session() as ws:
        outcomes = [o for _, o in ws.fetch_many(urls)]
    if allowed:
        assert all(isinstance(o, Page) for o in outcomes)
    else:  # RFC 9309: a server error means read nothing for now
        assert all(isinstance(o, URLRefusedError) and o.retryable for o in outcomes)
        assert "answered HTTP 503" in str(outcomes[0])
    assert sum(1 for s in server.seen if s.path.startswith("/p/")) == (3 if allowed else 0)


@pytest.mark.parametrize(
    ("robots", "path", "allowed"),
    [
        ("User-agent: *\nAllow: /\nDisallow: /private\n", "/private/a", False),  # longest
        ("User-agent: *\nDisallow: /\nAllow: /public\n", "/public/a", True),
        ("User-agent: *\nDisallow: /a\nAllow: /a\n", "/a/b", True),  # a tie: Allow
        ("User-agent: *\nAllow: /a\nDisallow: /a\n", "/a/b", True),  # whichever comes first
        ("User-agent: *\nDisallow: /a*\nAllow: /a$\n", "/a", True),  # equal lengths again
        ("User-agent: *\nDisallow: /*.pdf$\n", "/docs/x.pdf", False),
        ("User-agent: *\nDisallow: /*.pdf$\n", "/docs/x.pdf?download=1", True),
        ("User-agent: *\nDisallow: /*/private\n", "/a/private/b", False),
        ("User-agent: *\nDisallow: /search?\n", "/search?q=1", False),
        ("\ufeffUser-agent: *\nDisallow: /x\n", "/x", False),  # a byte-order mark
        ("User-agent: web\nDisallow: /\n", "/a", True),  # not our token
        ("User-agent: WebSearch-Pack/0.1\nDisallow: /a\nUser-agent: *\nDisallow: /\n", "/b", True),
        (
            "User-agent: websearch-pack\nDisallow: /a\n\n"
            "User-agent: websearch-pack\nDisallow: /b\n",
            "/b",
            False,
        ),
        ("User-agent: *\nDisallow:\n", "/anything", True),
        ("User-agent: *\nDisallow: /\n", "/robots.txt", True),
    ],
)
def test_robots_rules_are_read_as_rfc_9309_says(robots: str, path: str, allowed: bool) -> None:
    assert RobotsRules.parse(robots).allows(path) is allowed


def _reference_match(pattern: str, path: str) -> bool:
    """RFC 9309's matching, as a regular expression: trusted for short inputs only."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.match(regex + (r"\Z" if anchored else ""), path, re.DOTALL) is not None


_ROBOTS_CHARS = st.sampled_from("/ab*$.?=")


@settings(max_examples=500, deadline=None)
@given(
    rules=st.lists(
        st.tuples(st.booleans(), st.text(_ROBOTS_CHARS, min_size=1, max_size=8)), max_size=6
    ),
    path=st.text(st.sampled_from("/ab.?=$*"), max_size=12).map(lambda p: "/" + p),
)
def test_robots_matching_agrees_with_rfc_9309_without_regular_expressions(
    rules: list[tuple[bool, str]], path: str
) -> None:
    # The longest pattern that matches decides, Allow on a tie; no match allows.
    matching = [
        (len(pattern), allow) for allow, pattern in rules if _reference_match(pattern, path)
    ]
    expected = True if not matching or path == "/robots.txt" else max(matching)[1]
    text = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules
    )
    assert RobotsRules.parse(text).allows(path) is expected


@pytest.mark.parametrize(
    "rule",
    [
        "/" + "*a" * 1_000 + "$",  # a regular expression of this backtracks for minutes
        "/" + "*" * 1_000 + "b",
        "/" + "a*" * 5_000,
    ],
)
def test_a_robots_rule_of_many_stars_is_matched_at_once(rule: str) -> None:
    rules = RobotsRules.parse(f"User-agent: *\nDisallow: {rule}\n")
    started = time.process_time()
    for path in ("/" + "a" * 10_000, "/" + "a" * 9_999 + "b", "/" + "ab" * 5_000):
        rules.allows(path)
    assert time.process_time() - started < 2.0  # generous: the regex took minutes


def test_a_robots_txt_of_100k_rules_keeps_its_first_ones(server: ScriptedServer) -> None:
    lines = "".join(f"Disallow: /r{i}/*x*y*z$\n" for i in range(100_000))
    rules = RobotsRules.parse("User-agent: *\nDisallow: /first\n" + lines)
    assert len(rules.rules) == MAX_RULES
    assert not rules.allows("/first/page")
    assert rules.allows("/r99999/xyz")  # past the rules kept: not read


async def test_a_site_with_many_rules_is_checked_off_the_event_loop(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = "".join(f"Disallow: /r{i}/\n" for i in range(1_000))
    server.script("/robots.txt", Reply(200, "User-agent: *\n" + rules))
    urls = serve_articles(server, 2)
    threads: list[int] = []
    real = RobotsRules.allows

    def allows(self: RobotsRules, path: str) -> bool:
        threads.append(threading.get_ident())
        return real(self, path)

    monkeypatch.setattr(RobotsRules, "allows", allows)
    with session() as ws:
        outcomes = [o async for _, o in ws.afetch_many(urls)]
    assert all(isinstance(o, Page) for o in outcomes)
    assert threads
    assert threading.get_ident() not in threads  # never the loop's thread


@pytest.mark.parametrize(("status", "allowed"), [(401, True), (403, True), (429, False)])
def test_robots_txt_auth_statuses_allow_and_429_waits(
    server: ScriptedServer, status: int, allowed: bool
) -> None:
    server.script("/robots.txt", Reply(status, "whatever"))
    urls = serve_articles(server, 2)
    with session() as ws:
        outcomes = [o for _, o in ws.fetch_many(urls)]
    assert all(isinstance(o, Page) for o in outcomes) is allowed


def test_a_blocked_loop_does_not_hang_a_sync_read_waiting_on_its_robots_txt(
    server: ScriptedServer,
) -> None:
    # An async batch on the loop owns the site's robots.txt read; a sync fetch_many then
    # runs on the loop's own thread (a notebook cell), so that read cannot finish. The sync
    # read waits at most a fetch deadline, then reads robots.txt itself.
    server.script("/robots.txt", Reply(200, "User-agent: *\n", delay_s=0.2))
    urls = serve_articles(server, 4)
    with session(fetch_timeout=2.0) as ws:

        async def cell() -> list[Page]:
            owner = asyncio.ensure_future(_drain(ws.afetch_many(urls)))
            await asyncio.sleep(0)  # the owner claims the read
            await asyncio.sleep(0.05)
            started = time.monotonic()
            pages = pages_of(list(ws.fetch_many(urls)))
            assert time.monotonic() - started < 10.0
            # The owner's own read ran out of time while the loop was blocked: its pages say
            # so, each in its place.
            assert [url for url, _ in await owner] == urls
            return pages

        assert len(asyncio.run(cell())) == 4


async def _drain(pairs: Any) -> list[tuple[str, Page | WebSearchError]]:
    return [pair async for pair in pairs]


def test_the_robots_fetch_goes_through_the_jail(server: ScriptedServer) -> None:
    # A robots.txt redirecting to the metadata endpoint: the jail refuses the hop (nothing is
    # sent there) and the site is read as having no rules. Without the jail, the hop would be
    # tried and fail, and every page of the site with it.
    server.script(
        "/robots.txt", Reply(302, b"", {"Location": "http://169.254.169.254/latest/meta-data/"})
    )
    urls = serve_articles(server, 3)
    with session() as ws:
        pages_of(list(ws.fetch_many(urls)))
    assert server.hits("/robots.txt") == 1


def test_an_unreachable_robots_txt_fails_the_sites_pages_with_why(
    server: ScriptedServer,
) -> None:
    server.script("/robots.txt", Reply(200, "User-agent: *\n", delay_s=2.0))
    urls = serve_articles(server, 3)
    with session(fetch_timeout=0.5) as ws:
        outcomes = [o for _, o in ws.fetch_many(urls)]
    assert all(isinstance(o, FetchError) and o.retryable for o in outcomes)
    # Said as the site's failure (it did not answer in time), and where it was found.
    assert str(outcomes[0]).startswith("the page did not arrive within")
    assert "asked first for http://127.0.0.1:" in str(outcomes[0])
    assert "/robots.txt, so the page was not requested" in str(outcomes[0])
    assert server.hits("/robots.txt") == 1  # remembered for a minute, not retried per URL


def test_crawl_delay_spaces_requests_to_the_site(server: ScriptedServer) -> None:
    # Python's robots.txt parser reads whole seconds only.
    server.script("/robots.txt", Reply(200, "User-agent: *\nCrawl-delay: 1\n"))
    urls = serve_articles(server, 3)
    with session() as ws:
        started = time.monotonic()
        pages_of(list(ws.fetch_many(urls)))
        assert time.monotonic() - started >= 1.9  # two gaps of a second


@pytest.mark.parametrize(("written", "read"), [("3600", 30.0), ("30", 30.0), ("29.5", 29.5)])
def test_a_crawl_delay_is_read_up_to_its_cap(written: str, read: float) -> None:
    assert RobotsRules.parse(f"User-agent: *\nCrawl-delay: {written}\n").crawl_delay == read


# -- per-host limits ------------------------------------------------------------------------


def test_per_host_concurrency_limits_requests_at_once(server: ScriptedServer) -> None:
    urls = serve_articles(server, 6, delay_s=0.3)
    with session(per_host_concurrency=2) as ws:
        started = time.monotonic()
        pages_of(list(ws.fetch_many(urls, concurrency=6)))
        sync_elapsed = time.monotonic() - started

        async def read() -> None:
            pages_of([pair async for pair in ws.afetch_many(urls, concurrency=6)])

        started = time.monotonic()
        asyncio.run(read())
        async_elapsed = time.monotonic() - started
    assert sync_elapsed >= 0.85
    assert async_elapsed >= 0.85


class _Gauge:
    """A page server that counts the requests it is answering at once."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self._lock = threading.Lock()
        gauge = self

        def handler(conn: socket.socket) -> None:
            while read_request(conn):
                with gauge._lock:
                    gauge.now += 1
                    gauge.most = max(gauge.most, gauge.now)
                time.sleep(0.15)  # long enough for every slot to fill, if it could
                with gauge._lock:
                    gauge.now -= 1
                page = article(1)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                    + f"Content-Length: {len(page)}\r\n\r\n".encode()
                    + page
                )

        self.handler = handler


@pytest.mark.parametrize("way", ["threads", "event loop"])
def test_per_host_concurrency_is_never_exceeded(way: str) -> None:
    gauge = _Gauge()
    with raw_server(gauge.handler) as running:
        urls = [f"{running.url}/p/{i}" for i in range(10)]
        with session(per_host_concurrency=2, bulk_robots=False) as ws:
            if way == "threads":
                pages_of(list(ws.fetch_many(urls, concurrency=10)))
            else:

                async def read() -> None:
                    pages_of([pair async for pair in ws.afetch_many(urls, concurrency=10)])

                asyncio.run(read())
    assert gauge.most == 2  # never more, and the limit was reached: the test can tell


def test_per_host_rate_spaces_request_starts(server: ScriptedServer) -> None:
    urls = serve_articles(server, 6)
    with session(per_host_rate=10.0) as ws:
        started = time.monotonic()
        pages_of(list(ws.fetch_many(urls, concurrency=6)))
        assert time.monotonic() - started >= 0.45  # five gaps of 0.1 s


def test_per_host_rate_holds_while_the_network_slots_are_busy(server: ScriptedServer) -> None:
    # Two slow pages hold both network slots; the four after them must still start 0.5 s
    # apart, not all at once when the slots free up.
    slow = [f"{server.url}/slow/{n}" for n in range(2)]
    for url in slow:
        server.script(url.removeprefix(server.url), Reply(200, article(0), HTML, delay_s=1.5))
    fast = serve_articles(server, 4)
    starts: list[float] = []
    with session(per_host_rate=2.0) as ws:
        fetch_raw = ws._fetcher.afetch_raw

        async def timed(*args: Any, **kwargs: Any) -> Any:  # when each request leaves us
            starts.append(time.monotonic())
            return await fetch_raw(*args, **kwargs)

        ws._fetcher.afetch_raw = timed  # type: ignore[method-assign]

        async def read() -> None:
            pages_of([pair async for pair in ws.afetch_many(slow + fast, concurrency=2)])

        asyncio.run(read())
    page_starts = starts[1:]  # the first request is robots.txt's
    gaps = [later - earlier for earlier, later in itertools.pairwise(page_starts)]
    assert len(page_starts) == 6
    assert min(gaps) >= 0.49, gaps


def test_per_host_concurrency_holds_across_batches_at_once(server: ScriptedServer) -> None:
    urls = serve_articles(server, 8, delay_s=0.3)
    with session(per_host_concurrency=2) as ws:
        started = time.monotonic()
        threads = [
            threading.Thread(target=lambda part=part: pages_of(list(ws.fetch_many(part))))
            for part in (urls[:4], urls[4:])
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert time.monotonic() - started >= 1.15  # 8 pages, 2 at a time: 4 waves of 0.3 s
        assert ws._host_slots._threads == {}  # nothing kept for a host nobody reads now


def test_leaving_a_batch_early_stops_its_waits_and_its_fetches(server: ScriptedServer) -> None:
    server.script("/robots.txt", Reply(200, "User-agent: *\nCrawl-delay: 5\n"))
    urls = serve_articles(server, 20)
    with session() as ws:
        started = time.monotonic()
        for _ in ws.fetch_many(urls, concurrency=4):
            break
        assert time.monotonic() - started < 4.0  # not three more crawl delays of 5 s
    assert sum(1 for seen in server.seen if seen.path.startswith("/p/")) <= 2


# -- the data-engine surface ----------------------------------------------------------------


def test_fetch_batch_returns_one_flat_record_per_url_and_never_raises(
    server: ScriptedServer,
) -> None:
    server.script("/robots.txt", Reply(200, "User-agent: *\nDisallow: /private\n"))
    server.script("/gone", Reply(404, b"not here", {"Content-Type": "text/plain"}))
    server.script("/private/x", Reply(200, article(9), HTML))
    urls = serve_articles(server, 3)
    batch: list[object] = [
        urls[0],
        f"{server.url}/gone",
        "http://169.254.169.254/latest/",
        f"{server.url}/private/x",
        "not a url",
        42,
        urls[1],
    ]
    config = BulkConfig(allow_private=True)
    rows = fetch_batch(batch, config)
    assert [row["url"] for row in rows] == [*batch[:5], "42", urls[1]]
    assert all(tuple(row) == COLUMNS for row in rows)
    codes = [row["error_code"] for row in rows]
    assert codes == [
        None,
        "http_error",
        "blocked_by_policy",
        "robots_disallowed",
        "blocked_by_policy",
        "invalid_url",
        None,
    ]
    ok = rows[0]
    assert ok["status"] == 200
    assert ok["title"] == "Article 0"
    assert ok["error_message"] is None
    assert ok["markdown"].startswith("# Article 0")
    assert "#" not in ok["text"].splitlines()[0]
    assert ok["content_sha256"] == hashlib.sha256(ok["markdown"].encode()).hexdigest()
    assert ok["fetched_at"].tzinfo is not None
    assert ok["bytes_read"] > 30_000
    gone = rows[1]
    assert gone["status"] == 404
    assert gone["markdown"] is None
    assert "HTTP 404" in gone["error_message"]
    assert "metadata" in rows[2]["error_message"]
    assert all(row["error_message"] for row in rows if row["error_code"])
    import pyarrow as pa

    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    assert table.num_rows == len(batch)
    assert table.schema == arrow_schema()
    again = asyncio.run(afetch_batch(batch, config))  # the same rows from the event loop
    assert [row["error_code"] for row in again] == codes
    assert [row["markdown"] for row in again] == [row["markdown"] for row in rows]


def test_fetch_batch_reads_one_url_given_alone(server: ScriptedServer) -> None:
    urls = serve_articles(server, 1)
    rows = fetch_batch(urls[0], BulkConfig(allow_private=True))
    assert [row["title"] for row in rows] == ["Article 0"]


def test_the_default_batch_config_refuses_private_addresses(server: ScriptedServer) -> None:
    urls = serve_articles(server, 3)
    rows = fetch_batch(urls)
    assert [row["error_code"] for row in rows] == ["blocked_by_policy"] * 3
    assert not any(seen.path.startswith("/p/") for seen in server.seen)


def test_web_reader_takes_every_batch_format_and_pickles_without_its_session(
    server: ScriptedServer,
) -> None:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    urls = serve_articles(server, 4)
    reader = WebReader(BulkConfig(allow_private=True))
    batches = [
        {"url": np.array(urls), "doc_id": np.arange(4)},
        pa.table({"url": urls, "doc_id": list(range(4))}),
        pd.DataFrame({"url": urls, "doc_id": list(range(4))}),
    ]
    for batch in batches:
        table = asyncio.run(reader(batch))
        assert isinstance(table, pa.Table)
        assert table.column_names == [*COLUMNS, "doc_id"]
        assert table.column("doc_id").to_pylist() == [0, 1, 2, 3]
        assert table.column("title").to_pylist() == [f"Article {n}" for n in range(4)]
        assert table.schema.field("fetched_at").type == pa.timestamp("us", tz="UTC")
    copy = pickle.loads(pickle.dumps(reader))  # noqa: S301 - an actor's copy: the config, not the session
    assert copy._session is None
    assert copy.config == reader.config
    with pytest.raises(InvalidRequestError, match="no 'link' column"):
        asyncio.run(WebReader(BulkConfig(url_column="link"))({"url": np.array(urls)}))
    with pytest.raises(InvalidRequestError, match="title would be overwritten"):
        asyncio.run(reader({"url": np.array(urls), "title": np.array(["mine"] * 4)}))
    with pytest.raises(InvalidRequestError, match="a batch must be"):
        asyncio.run(reader(urls))


def test_a_batch_config_never_shows_the_keys_it_carries() -> None:
    config = BulkConfig(session={"brave_api_key": "sk-bulk-secret-123"})
    assert "sk-bulk-secret-123" not in repr(config)
    assert "sk-bulk-secret-123" not in repr(WebReader(config))
    assert "brave_api_key" in repr(config)


def test_a_worker_is_pointed_at_the_directory_this_package_is_in() -> None:
    # Put first on a worker's PYTHONPATH (a clone found through sys.path alone): the package's
    # own directory there instead would shadow the standard library with its modules.
    assert (Path(_PACKAGE_ROOT) / "websearch_core" / "fetch" / "workers.py").is_file()


def test_a_worker_keeps_what_it_imported_out_of_the_collectors_way() -> None:
    # Frozen after its imports, a worker's full collections scan only what its conversions
    # made since, not the modules and the converter's caches; this process is left as it is.
    workers = ConversionWorkers(1)
    try:
        workers.start()
        pid = workers.call("http://127.0.0.1/", os.getpid).result(timeout=60)
        frozen = workers.call("http://127.0.0.1/", gc.get_freeze_count).result(timeout=60)
    finally:
        workers.close()
    assert pid != os.getpid()
    assert frozen > 1000  # the interpreter, the converter and its word lists
    assert gc.get_freeze_count() == 0


# -- workers ready when a batch starts (issue 30) -----------------------------------------


def test_a_large_list_starts_every_worker_as_its_batch_starts(server: ScriptedServer) -> None:
    # Before: workers started one at a time after a session's first 64 pages, so a batch of
    # 200 had most of its pages converted in this process, on one core.
    urls = serve_articles(server, 80)
    with session(convert_workers=2) as ws:
        pages = ws.fetch_many(urls)
        next(pages)  # the first page is in: at most 2 x concurrency pages have been fetched
        assert len(ws._converters.pids) == 2
        rest = list(pages)
        assert all(isinstance(page, Page) and page.ok for _, page in rest)
        assert ws._converters.converted_on_workers > 0


def test_a_large_list_starts_every_worker_in_an_async_batch_too(server: ScriptedServer) -> None:
    urls = serve_articles(server, 80)

    async def first_then_rest(ws: WebSearch) -> tuple[int, list[Any]]:
        pages = ws.afetch_many(urls)
        await pages.__anext__()
        running = len(ws._converters.pids)
        return running, [pair async for pair in pages]

    with session(convert_workers=2) as ws:
        running, rest = asyncio.run(first_then_rest(ws))
        assert running == 2
        assert len(rest) == len(urls) - 1


def test_a_stream_of_unknown_length_starts_workers_only_after_its_first_pages(
    server: ScriptedServer,
) -> None:
    urls = serve_articles(server, 80)
    with session(convert_workers=2) as ws:
        pages = ws.fetch_many(url for url in urls)
        next(pages)
        assert ws._converters.pids == []  # nothing said it would be long
        assert len(list(pages)) == len(urls) - 1


def test_a_single_fetch_never_starts_a_worker(server: ScriptedServer) -> None:
    urls = serve_articles(server, 3)
    with session(convert_workers=2) as ws:
        assert all(ws.fetch(url).ok for url in urls)
        assert ws._converters.pids == []


def test_many_threads_starting_the_workers_at_once_start_one_each_and_never_stall(
    server: ScriptedServer,
) -> None:
    # Each start queues one task per dispatcher thread behind a barrier; two starts whose
    # tasks interleaved would hold each thread at a different barrier until it timed out.
    urls = serve_articles(server, 70)
    with session(convert_workers=2) as ws:
        began = time.monotonic()
        threads = [
            threading.Thread(target=lambda: pages_of(list(ws.fetch_many(urls, concurrency=4))))
            for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)
        assert len(ws._converters.pids) == 2
        assert time.monotonic() - began < 50  # a stalled barrier waits 60 s


def test_a_conversion_worker_imports_the_converter_and_nothing_of_the_network() -> None:
    # The package's __init__ is lazy: a worker paid 0.88 s here importing the session,
    # httpx, trio and rich it never uses, and then ~0.2 s for pydantic and the
    # ExtractedDocument model, which the fetch path does not use either.
    probe = (
        "import sys; from websearch_core.fetch.workers import serve; "
        "from websearch_core import extract; "
        "print(sorted(m for m in ('httpx', 'httpcore', 'anyio', 'websearch_core.session', "
        "'websearch_core.providers.base', 'rich', 'click', 'pydantic', "
        "'websearch_core.extract.document') if m in sys.modules)); "
        "print(callable(extract))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.split("\n")[:2] == ["[]", "True"]


def test_a_container_whose_length_fails_is_still_read_whole(server: ScriptedServer) -> None:
    # The batch's size is only a hint for the workers: a caller's container that cannot say
    # it must not turn into an untyped error.
    urls = serve_articles(server, 3)

    class Stubborn:
        def __len__(self) -> int:
            raise RuntimeError("no length here")

        def __iter__(self) -> Any:
            return iter(urls)

    with session(convert_workers=2) as ws:
        assert [page.url for page in pages_of(list(ws.fetch_many(Stubborn())))] == urls
