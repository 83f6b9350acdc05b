"""The blend: every engine at once under one deadline, fused, each engine's outcome named,
paid engines metered.

Engines are faked at their boundary: the ddgs backends through the labelled ``FakeDDGS``
(ddgs talks to public engines through its own Rust client; nothing can answer it on
loopback), the keyed providers as scripted HTTP servers on loopback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fake_ddgs import FakeDDGS
from tests.support.http_server import Reply, ScriptedServer, scripted_server
from tests.support.raw_server import raw_server, read_request
from websearch_core import (
    AuthenticationError,
    ConfigurationError,
    InvalidRequestError,
    ProviderUnavailableError,
    RateLimitedError,
    SearchResult,
    UnsupportedOptionError,
    WebSearch,
)
from websearch_core.blend import (
    DDGS_BACKENDS_UNSUPPORTED,
    METER_DOWN,
    BlendCache,
    BudgetMeter,
    Fees,
    fuse,
)
from websearch_core.blend.canonical import canonical_url
from websearch_core.providers.ddgs import text_backends
from websearch_core.search.bulkheads import SLOTS

BACKENDS = text_backends()
MOJEEK_KEY = "canary-mojeek-key-d41d8cd98f00b204"
BRAVE_KEY = "canary-brave-key-0123456789abcdef"


def hits(*urls: str, body: str = "snippet") -> Callable[[str], list[dict[str, Any]]]:
    return lambda query: [{"title": f"T {u}", "href": u, "body": body} for u in urls]


def raising(error: Exception) -> Callable[[str], list[dict[str, Any]]]:
    def run(query: str) -> list[dict[str, Any]]:
        raise error

    return run


def sleeping(seconds: float) -> Callable[[str], list[dict[str, Any]]]:
    def run(query: str) -> list[dict[str, Any]]:
        time.sleep(seconds)
        return [{"title": "late", "href": "https://late.example/", "body": "late"}]

    return run


@pytest.fixture
def ddgs(monkeypatch: pytest.MonkeyPatch) -> type[FakeDDGS]:
    FakeDDGS.reset()
    FakeDDGS.backends = {name: hits(f"https://{name}.example/a") for name in BACKENDS}
    monkeypatch.setattr("ddgs.DDGS", FakeDDGS)
    return FakeDDGS


@pytest.fixture
def brave() -> Iterator[ScriptedServer]:
    with scripted_server() as running:
        results = [
            {
                "title": "B",
                "url": "https://shared.example/page?utm_source=brave",
                "description": "from brave, longest snippet of all",
            }
        ]
        running.script("/res/v1/web/search", Reply(200, {"web": {"results": results}}))
        yield running


@pytest.fixture
def mojeek() -> Iterator[ScriptedServer]:
    with scripted_server() as running:
        results = [{"title": "M", "url": "https://shared.example/page/", "desc": "from mojeek"}]
        running.script("/search", Reply(200, {"response": {"status": "OK", "results": results}}))
        yield running


def blend(brave: ScriptedServer, mojeek: ScriptedServer, **options: Any) -> WebSearch:
    return WebSearch(
        "blend",
        brave_api_key=BRAVE_KEY,
        brave_base_url=brave.url,
        mojeek_api_key=MOJEEK_KEY,
        mojeek_base_url=mojeek.url,
        **options,
    )


def outcome(response: Any, engine: str) -> tuple[str, str | None]:
    found = next(o for o in response.outcomes if o.engine == engine)
    return found.status, found.error


def test_the_installed_ddgs_backends_are_engines() -> None:
    assert BACKENDS  # the dev install has ddgs
    assert set(BACKENDS) <= set(DDGS_BACKENDS_UNSUPPORTED)  # each one's options were read


def test_all_engines_answer_and_are_fused(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    response = blend(brave, mojeek).search("q", count=10)
    assert response.provider == "blend"
    assert {o.status for o in response.outcomes} == {"answered"}
    assert [o.engine for o in response.outcomes] == [
        *(f"ddgs/{b}" for b in BACKENDS),
        "brave",
        "mojeek",
    ]
    # Two engines gave one page (a tracking parameter and a trailing slash apart): one result,
    # first, with both engines, their positions and the longest snippet.
    top = response.results[0]
    assert top.engines == ("brave", "mojeek")
    assert top.positions == (1, 1)
    assert top.url == "https://shared.example/page?utm_source=brave"
    assert top.snippet == "from brave, longest snippet of all"
    assert top.score == round(2 / 61, 6)
    assert len(response.results) == len(BACKENDS) + 1
    assert [r.rank for r in response.results] == list(range(1, len(response.results) + 1))
    # every ddgs engine asked its own backend, on its own worker thread
    assert sorted(call.options["backend"] for call in ddgs.calls) == sorted(BACKENDS)
    assert mojeek.seen[0].query["api_key"] == MOJEEK_KEY
    assert brave.seen[0].headers["x-subscription-token"] == BRAVE_KEY


@pytest.mark.parametrize(
    ("engine", "reason"),
    [
        ("captcha page", "unreadable answer"),
        ("empty list", "no results"),
        ("junk body", "unreadable answer"),
    ],
)
def test_an_engine_that_answers_nothing_usable_is_blind(
    engine: str, reason: str, ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    reply = {
        "captcha page": Reply(
            200, b"<html><h1>Are you a robot?</h1></html>", {"Content-Type": "text/html"}
        ),
        "empty list": Reply(200, {"web": {"results": []}}),
        "junk body": Reply(200, b"\x00\xff garbage", {"Content-Type": "application/json"}),
    }[engine]
    brave.script("/res/v1/web/search", reply)
    response = blend(brave, mojeek).search("q")
    assert outcome(response, "brave") == ("blind", reason)
    assert "Engines that answered with nothing usable: brave" in response.render()
    assert response.results  # the others still answer
    assert response.usage.paid == {"brave": 1.0, "mojeek": 1.0}  # it answered: it was billed


def test_an_engine_that_fails_is_down_and_the_blend_still_answers(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    brave.script("/res/v1/web/search", Reply(500, b"oops"))
    ddgs.backends[BACKENDS[0]] = raising(RuntimeError("boom"))
    response = blend(brave, mojeek).search("q")
    assert outcome(response, "brave") == ("down", "HTTP 500")
    assert outcome(response, f"ddgs/{BACKENDS[0]}")[0] == "down"
    assert "Engines that failed: " in response.render()
    assert response.render().endswith('results from blend for "q".')
    assert "brave" not in response.usage.paid  # down: not billed


def test_a_slow_engine_is_cut_off_at_the_deadline(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    ddgs.backends[BACKENDS[0]] = sleeping(5.0)
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=5.0))
    ws = blend(brave, mojeek, blend_timeout=1.0)
    started = time.monotonic()
    response = ws.search("q")
    assert time.monotonic() - started < 1.0 + 1.0  # the deadline plus a generous margin
    assert outcome(response, f"ddgs/{BACKENDS[0]}") == ("down", "timeout")
    assert outcome(response, "brave") == ("down", "timeout")
    assert outcome(response, "mojeek")[0] == "answered"


async def test_async_blend_is_cut_off_at_the_deadline_too(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    ddgs.backends[BACKENDS[0]] = sleeping(5.0)
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=5.0))
    started = time.monotonic()
    async with blend(brave, mojeek, blend_timeout=1.0) as ws:
        response = await ws.asearch("q")
    assert time.monotonic() - started < 1.0 + 1.0
    assert outcome(response, "brave") == ("down", "timeout")
    assert outcome(response, f"ddgs/{BACKENDS[0]}") == ("down", "timeout")
    assert response.results


#: A burst's deadline, and how long its hung engines hang (past it, so they hold their slots
#: and threads for the whole burst: the shared pool this replaced then starved the others).
BURST_DEADLINE = 4.0
BURST_HANG = 2 * BURST_DEADLINE


async def test_a_hung_engine_starves_no_other_in_a_burst(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    # Each engine has its own capacity (threads for ddgs backends, a pool for keyed ones):
    # sixty searches at once, one backend and one keyed engine hanging past the deadline,
    # and every other engine answers every one of them. The burst itself costs ~0.7 s of the
    # one GIL here (~12 ms of CPU a search, the in-process servers included): the deadline
    # stands well clear of that, so this measures starvation, not the machine's speed (at
    # 0.8 s a slower CI machine missed it with nothing hung).
    hung = BACKENDS[0]
    ddgs.backends[hung] = sleeping(BURST_HANG)
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=BURST_HANG))
    async with blend(brave, mojeek, blend_timeout=BURST_DEADLINE) as ws:
        responses = await asyncio.gather(*(ws.asearch(f"burst {i}") for i in range(60)))
    for response in responses:
        outcomes = {o.engine: (o.status, o.error) for o in response.outcomes}
        assert outcomes.pop(f"ddgs/{hung}") == ("down", "timeout")
        assert outcomes.pop("brave") == ("down", "timeout")
        assert set(outcomes.values()) == {("answered", None)}, outcomes


def test_a_hung_engine_starves_no_other_in_a_burst_of_threads(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    hung = BACKENDS[0]
    ddgs.backends[hung] = sleeping(BURST_HANG)
    with (
        blend(brave, mojeek, blend_timeout=BURST_DEADLINE) as ws,
        ThreadPoolExecutor(30) as callers,
    ):
        responses = list(callers.map(lambda i: ws.search(f"threads {i}"), range(30)))
    for response in responses:
        outcomes = {o.engine: (o.status, o.error) for o in response.outcomes}
        assert outcomes.pop(f"ddgs/{hung}") == ("down", "timeout")
        assert set(outcomes.values()) == {("answered", None)}, outcomes


def test_all_engines_down_is_an_error_naming_each(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    for name in BACKENDS:
        ddgs.backends[name] = raising(RuntimeError("boom"))
    brave.script("/res/v1/web/search", Reply(401, b"no"))
    mojeek.script("/search", Reply(503, b"later"))
    with pytest.raises(ProviderUnavailableError, match="every engine is down") as caught:
        blend(brave, mojeek, max_retry_wait=0).search("q")
    assert "brave (key refused)" in str(caught.value)
    assert "mojeek (HTTP 503)" in str(caught.value)
    assert all(f"ddgs/{b}" in str(caught.value) for b in BACKENDS)


def test_a_spent_budget_drops_the_paid_engines_and_the_search_still_answers(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    meter = BudgetMeter(budget_cents=3.0)
    ws = blend(brave, mojeek, meter=meter, memo_size=0)
    first = ws.search("q")
    assert first.usage.paid == {"brave": 1.0, "mojeek": 1.0}
    assert first.usage.cents == 2.0
    second = ws.search("q")  # one cent left: brave fits, mojeek does not
    assert second.usage.paid == {"brave": 1.0}
    assert second.skipped == {"mojeek": "the metering budget is spent"}
    third = ws.search("q")
    assert third.usage.paid == {}
    assert set(third.skipped) == {"brave", "mojeek"}
    assert third.results  # the free engines still answer
    assert "Engines left out: brave (the metering budget is spent)" in third.render()
    assert meter.total_cents == 3.0
    assert len(brave.seen) == 2
    assert len(mojeek.seen) == 1


def test_fee_variables_set_each_engine_its_price(
    ddgs: type[FakeDDGS],
    brave: ScriptedServer,
    mojeek: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBSEARCH_FEE_CENTS", "2")
    monkeypatch.setenv("WEBSEARCH_FEE_CENTS_BRAVE", "0.5")
    assert blend(brave, mojeek).search("q").usage.paid == {"brave": 0.5, "mojeek": 2.0}
    assert Fees.from_environment({}).of("mojeek") == 1.0
    monkeypatch.setenv("WEBSEARCH_FEE_CENTS_MOJEEK", "lots")
    with pytest.raises(Exception, match="WEBSEARCH_FEE_CENTS_MOJEEK must be a number of cents"):
        blend(brave, mojeek)


def test_a_meter_of_ones_own_is_asked_and_told(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    class Ledger:
        def __init__(self) -> None:
            self.asked: list[tuple[str, float]] = []
            self.told: list[tuple[str, float]] = []

        def allow(self, engine: str, cents: float) -> bool:
            self.asked.append((engine, cents))
            return engine != "mojeek"

        def spent(self, engine: str, cents: float) -> None:
            self.told.append((engine, cents))

    ledger = Ledger()
    brave.script("/res/v1/web/search", Reply(500, b"down"))
    response = blend(brave, mojeek, meter=ledger, max_retry_wait=0).search("q")
    assert ledger.asked == [("brave", 1.0), ("mojeek", 1.0)]
    assert ledger.told == [("brave", 0.0)]  # down: nothing spent; mojeek never joined
    assert response.skipped == {"mojeek": "the metering budget is spent"}


def test_a_meter_swapped_between_searches_is_the_one_asked(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    ws = blend(brave, mojeek)
    assert ws.search("q").usage.paid == {"brave": 1.0, "mojeek": 1.0}
    spent = BudgetMeter(budget_cents=0)
    ws.meter = spent  # a new budget period: the next search asks this one
    assert ws.meter is spent
    response = ws.search("other words")
    assert response.skipped == {
        "brave": "the metering budget is spent",
        "mojeek": "the metering budget is spent",
    }
    assert response.usage.paid == {}


def test_a_meter_swapped_while_a_blend_runs_leaves_that_blend_on_the_meter_it_asked(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    class Ledger:
        def __init__(self) -> None:
            self.asked: list[str] = []
            self.told: list[tuple[str, float]] = []

        def allow(self, engine: str, cents: float) -> bool:
            self.asked.append(engine)
            return True

        def spent(self, engine: str, cents: float) -> None:
            self.told.append((engine, cents))

    first, second = Ledger(), Ledger()
    results = {"web": {"results": [{"title": "B", "url": "https://b.example/"}]}}
    brave.script("/res/v1/web/search", Reply(200, results, delay_s=1.0))
    ws = blend(brave, mojeek, meter=first)
    searching = threading.Thread(target=ws.search, args=("q",))
    searching.start()
    deadline = time.monotonic() + 10
    while brave.hits("/res/v1/web/search") == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    ws.meter = second  # mid-search: brave has been asked and has not answered
    searching.join(timeout=30)
    assert sorted(first.asked) == ["brave", "mojeek"]
    assert sorted(first.told) == [("brave", 1.0), ("mojeek", 1.0)]  # billed where it was held
    assert second.asked == []
    assert second.told == []


def test_an_engine_that_cannot_honour_an_option_is_left_out_never_sent_without_it(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    response = blend(brave, mojeek).search("q", date_from="2026-01-01")
    # ddgs backends take no date range: none of them was asked
    assert ddgs.calls == []
    assert all(response.skipped[f"ddgs/{b}"] == "cannot honour date_range" for b in BACKENDS)
    assert [o.engine for o in response.outcomes] == ["brave", "mojeek"]
    assert mojeek.seen[0].query["since"] == "20260101"
    with pytest.raises(UnsupportedOptionError, match="blend"):
        blend(brave, mojeek).search("q", include_answer=True)


def test_the_same_answers_fuse_to_the_same_menu() -> None:
    answers = [
        (
            "a",
            [
                SearchResult(rank=1, title="X", url="https://x.org/"),
                SearchResult(rank=2, title="Y", url="https://y.org/"),
            ],
        ),
        (
            "b",
            [
                SearchResult(rank=1, title="Y", url="https://Y.org"),
                SearchResult(rank=2, title="X", url="https://x.org/?gclid=1"),
            ],
        ),
    ]
    first = fuse(answers, 10)
    assert fuse(answers, 10) == first
    # tied on score and best position: the page seen first leads; each keeps the link of
    # its best-placed sighting (Y's is engine b's first result)
    assert [r.url for r in first] == ["https://x.org/", "https://Y.org"]
    assert [r.engines for r in first] == [("a", "b"), ("a", "b")]


def test_the_mojeek_key_never_reaches_a_log_an_error_or_a_repr(
    ddgs: type[FakeDDGS],
    brave: ScriptedServer,
    mojeek: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    mojeek.script("/search", Reply(500, f"error for api_key={MOJEEK_KEY}"))
    ws = WebSearch(
        "mojeek", mojeek_api_key=MOJEEK_KEY, mojeek_base_url=mojeek.url, max_retry_wait=0
    )
    with pytest.raises(ProviderUnavailableError) as caught:
        ws.search("q")
    shown = [str(caught.value), repr(caught.value), repr(ws), repr(ws.settings)]
    shown += [r.getMessage() for r in caplog.records]
    assert any("api.mojeek" in m or "/search" in m for m in shown)  # httpx did log the request
    assert not [text for text in shown if MOJEEK_KEY in text]
    response = blend(brave, mojeek).search("q")
    assert MOJEEK_KEY not in response.model_dump_json()


def test_a_shared_cache_answers_identical_blends_across_sessions(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    cache = BlendCache(max_entries=2, ttl_s=60)
    first = blend(brave, mojeek, blend_cache=cache).search("q")
    again = blend(brave, mojeek, blend_cache=cache).search("q")
    assert again.from_memo
    assert again.results == first.results
    assert again.usage.paid == {}  # answered from the cache: nothing spent
    assert len(brave.seen) == 1
    for query in ("r", "s"):
        blend(brave, mojeek, blend_cache=cache).search(query)
    assert len(cache) == 2  # bounded: the oldest went


def test_cache_entries_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = BlendCache(max_entries=4, ttl_s=10)
    clock = [100.0]
    monkeypatch.setattr("websearch_core.blend.cache.time.monotonic", lambda: clock[0])
    cache.put("k", "v")  # type: ignore[arg-type]
    assert cache.get("k") == "v"
    clock[0] += 11
    assert cache.get("k") is None


def test_one_structured_line_per_engine_is_logged(
    ddgs: type[FakeDDGS],
    brave: ScriptedServer,
    mojeek: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="websearch_core")
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}))
    blend(brave, mojeek).search("q")
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("blend engine=")]
    assert len(lines) == len(BACKENDS) + 2
    assert "blend engine=brave status=blind results=0 reason=no results" in lines


def test_the_blend_works_from_the_cli(
    ddgs: type[FakeDDGS], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from websearch_core.cli import main

    assert main(["search", "q", "--provider", "blend", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["provider"] == "blend"
    assert {o["status"] for o in printed["outcomes"]} == {"answered"}


# -- canonical URLs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "canonical"),
    [
        (
            "HTTPS://Example.COM:443/a/b/?utm_source=x&utm_medium=y&id=7#top",
            "https://example.com/a/b?id=7",
        ),
        ("https://example.com/a/b?id=7&fbclid=abc", "https://example.com/a/b?id=7"),
        ("https://example.com/a/b?gclid=1&id=7", "https://example.com/a/b?id=7"),
        ("http://example.com:80/", "http://example.com"),
        ("http://example.com:8080/", "http://example.com:8080"),
        ("https://[2001:db8::1]:443/x/", "https://[2001:db8::1]/x"),
        # escapes written one way; an escaped tracking name is still a tracking name
        ("https://example.com/a%7Eb/%2f?utm%5Fsource=x&id=%41", "https://example.com/a~b/%2F?id=A"),
    ],
)
def test_tracking_variants_share_one_canonical_url(variant: str, canonical: str) -> None:
    assert canonical_url(variant) == canonical


@settings(max_examples=2_000)
@given(
    st.one_of(
        st.text(max_size=300),
        st.text(st.sampled_from("0a/ ?#&=:.%\t\u00a0\x08\x00\x1f"), max_size=40),
    )
)
def test_canonical_url_is_total_and_idempotent(url: str) -> None:
    once = canonical_url(url)
    assert canonical_url(once) == once


@pytest.mark.parametrize(
    "url",
    [
        "0 #",  # found by the property test: whitespace left where the fragment was
        "a/ #",
        "http://ab /",
        "a?x=1 ",
        "a?x=1& ",
        "a?x=1&\u00a0",
        "a?utm_source=1 ",
        "https://e.com/ / /",
        "\x08\xa0\x08",  # urlsplit strips leading C0 controls and space itself
        "////@",  # a path of '//@' with no host was written back as the host '@'
        "//",
        "///a//b",
    ],
)
def test_canonical_url_is_idempotent_where_the_property_test_found_it_was_not(url: str) -> None:
    once = canonical_url(url)
    assert canonical_url(once) == once


@pytest.mark.parametrize(
    "name", ["UTM_Source", "Utm_campaign", "FBCLID", "GClid", "%55tm_source", "_GA", "MSCLKID"]
)
def test_tracking_parameters_are_dropped_whatever_their_case(name: str) -> None:
    assert canonical_url(f"https://a.example/p?{name}=x&id=1") == "https://a.example/p?id=1"


@given(
    st.sampled_from(["http", "https", "HTTP"]),
    st.from_regex(r"[a-z]{1,10}(\.[a-z]{1,5}){1,2}", fullmatch=True),
    st.lists(st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True), max_size=4),
    st.lists(
        st.tuples(
            st.sampled_from(["id", "q", "utm_source", "fbclid", "page"]),
            st.from_regex(r"[a-z0-9]{0,4}", fullmatch=True),
        ),
        max_size=4,
    ),
)
@settings(max_examples=200)
def test_canonical_url_ignores_exactly_the_noise(
    scheme: str, host: str, path: list[str], query: list[tuple[str, str]]
) -> None:
    kept = "&".join(f"{k}={v}" for k, v in query if k in ("id", "q", "page"))
    plain = f"{scheme.lower()}://{host}/{'/'.join(path)}" + (f"?{kept}" if kept else "")
    noisy = (
        f"{scheme}://{host.upper()}/{'/'.join(path)}/?"
        + "&".join(f"{k}={v}" for k, v in query)
        + "#frag"
    )
    assert canonical_url(noisy) == canonical_url(plain)


@pytest.mark.parametrize(
    "adversarial",
    [
        "https://e.com/" + "/" * 200_000 + "x",
        "https://e.com/?" + "utm_a=1&" * 25_000,
        "https://e.com/?" + "&" * 200_000,
        "h" * 200_000,
        "https://" + "a." * 100_000 + "com/",
    ],
)
def test_canonical_url_is_linear_on_hostile_input(adversarial: str) -> None:
    started = time.perf_counter()
    canonical_url(adversarial)
    assert (
        time.perf_counter() - started < 0.5
    )  # milliseconds in practice; generous on a busy machine


def test_a_recorded_mojeek_cassette_holds_no_key(
    mojeek: ScriptedServer, tmp_path: Any, vcr_config: dict[str, Any]
) -> None:
    # Record a real exchange with the suite's own VCR settings, then read what was written.
    import vcr

    recorder = vcr.VCR(**{k: v for k, v in vcr_config.items() if k != "match_on"})
    path = tmp_path / "mojeek.yaml"
    with recorder.use_cassette(str(path), record_mode="all"):
        ws = WebSearch("mojeek", mojeek_api_key=MOJEEK_KEY, mojeek_base_url=mojeek.url)
        assert ws.search("q").results
    written = path.read_text("utf-8")
    assert "/search?" in written  # the request is there
    assert MOJEEK_KEY not in written
    assert "api_key" not in written


async def test_a_cancelled_blend_releases_what_the_meter_held(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    import anyio

    meter = BudgetMeter(budget_cents=2.0)
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=2.0))
    async with blend(brave, mojeek, meter=meter, memo_size=0) as ws:
        with anyio.move_on_after(0.3):
            await ws.asearch("q")
        assert meter.total_cents == 0.0
        assert meter.allow("brave", 1.0)  # nothing is still held for the cancelled search
        assert meter.allow("mojeek", 1.0)
        assert not meter.allow("brave", 1.0)


# -- after review ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error"),
    [("ERROR: Daily Limit Reached", RateLimitedError), ("ERROR: Invalid API key", None)],
)
def test_mojeek_reports_failure_inside_a_200(
    status: str, error: Any, mojeek: ScriptedServer
) -> None:
    mojeek.script("/search", Reply(200, {"response": {"status": status}}))
    ws = WebSearch("mojeek", mojeek_api_key=MOJEEK_KEY, mojeek_base_url=mojeek.url)
    with pytest.raises(error or AuthenticationError):
        ws.search("q")


def test_one_blend_on_fresh_sessions_leaves_no_client_open(
    ddgs: type[FakeDDGS],
    brave: ScriptedServer,
    mojeek: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx

    made: list[httpx.Client] = []
    real_init = httpx.Client.__init__

    def counted(self: httpx.Client, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(httpx.Client, "__init__", counted)
    for _ in range(10):
        with blend(brave, mojeek) as ws:
            ws.search("q")
    # One per keyed engine (each its own pool) per session, however many threads asked at
    # once; every one closed with its session.
    assert len(made) == 2 * 10
    assert all(client.is_closed for client in made)


def test_a_failing_meter_fails_closed_on_spend_never_on_answer(
    ddgs: type[FakeDDGS],
    brave: ScriptedServer,
    mojeek: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The billing backend is down for mojeek: mojeek sits out, saying so; brave (paid, its
    # meter fine) and the free engines answer; nothing is held back.
    class Flaky(BudgetMeter):
        def allow(self, engine: str, cents: float) -> bool:
            if engine == "mojeek":
                raise RuntimeError("the meter's database is down: secret-dsn://u:p@db")
            return super().allow(engine, cents)

    meter = Flaky(budget_cents=1.0)
    response = blend(brave, mojeek, meter=meter).search("q")
    assert response.skipped == {"mojeek": METER_DOWN}
    assert outcome(response, "brave") == ("answered", None)
    assert any(o.engine.startswith("ddgs/") and o.status == "answered" for o in response.outcomes)
    assert meter.total_cents == 1.0  # brave's cent, settled
    assert "RuntimeError" in caplog.text
    assert "secret-dsn" not in caplog.text  # logged by type only


def test_a_meter_that_fails_to_record_a_spend_loses_no_answer(
    ddgs: type[FakeDDGS],
    brave: ScriptedServer,
    mojeek: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Forgetful(BudgetMeter):
        def spent(self, engine: str, cents: float) -> None:
            raise ConnectionError("billing is down")

    response = blend(brave, mojeek, meter=Forgetful()).search("q")
    assert outcome(response, "brave") == ("answered", None)
    assert "meter.spent failed (ConnectionError)" in caplog.text


def test_a_blend_of_paid_engines_with_its_meter_down_is_unavailable(
    brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    class Down(BudgetMeter):
        def allow(self, engine: str, cents: float) -> bool:
            raise OSError("unreachable")

    ws = blend(brave, mojeek, meter=Down(), blend_engines=["brave", "mojeek"])
    with pytest.raises(ProviderUnavailableError, match="the meter is failing") as caught:
        ws.search("q")
    assert caught.value.retryable


@pytest.mark.parametrize("budget", ["5", b"5", [5], True, float("nan"), -1, float("inf")])
def test_a_budget_meter_takes_cents_or_says_what_it_takes(budget: object) -> None:
    with pytest.raises(ConfigurationError, match="budget"):
        BudgetMeter(budget)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "arguments",
    [{"max_entries": "x"}, {"max_entries": 0}, {"max_entries": 1.5}, {"ttl_s": "x"},
     {"ttl_s": float("nan")}, {"ttl_s": 0}, {"max_entries": True}],
)  # fmt: skip
def test_a_blend_cache_takes_numbers_or_says_what_it_takes(arguments: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError, match="blend cache"):
        BlendCache(**arguments)  # type: ignore[arg-type]


def test_the_shared_cache_keeps_only_answers_free_of_one_sessions_luck(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    cache = BlendCache()
    blend(brave, mojeek, blend_cache=cache, meter=BudgetMeter(budget_cents=0)).search("q")
    assert len(cache) == 0  # its paid engines sat out for this session's budget
    brave.script("/res/v1/web/search", Reply(500, b"down"))
    blend(brave, mojeek, blend_cache=cache, max_retry_wait=0).search("q")
    assert len(cache) == 0  # an engine was down
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}))
    blend(brave, mojeek, blend_cache=cache).search("q")
    assert len(cache) == 1


def test_every_engine_left_out_says_why_not_quota(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    long_names = [f"a-rather-long-subdomain-name-number-{i}.example.org" for i in range(50)]
    ws = blend(brave, mojeek)
    with pytest.raises(InvalidRequestError, match="no engine of the blend can run this search"):
        ws.search("w" * 380, include_domains=long_names)


def test_exact_ties_follow_the_documented_rule() -> None:
    def listing(*names: str) -> list[SearchResult]:
        return [
            SearchResult(rank=i + 1, title=n, url=f"https://{n}.org/") for i, n in enumerate(names)
        ]

    answers = [
        ("e1", listing("x", "y", "z", "w")),
        ("e2", listing("x", "z", "y", "w")),
        ("e3", listing("y", "x", "z", "w")),
        ("e4", listing("y", "z", "x", "w")),
    ]
    assert [r.title for r in fuse(answers, 4)][:2] == ["x", "y"]  # equal scores: seen first


def test_a_timed_out_paid_engine_is_billed_and_counted_as_reached(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=3.0))
    response = blend(brave, mojeek, blend_timeout=1.0).search("q")
    assert outcome(response, "brave") == ("down", "timeout")
    assert response.usage.paid == {"brave": 1.0, "mojeek": 1.0}
    assert response.usage.searches == len(BACKENDS) + 2


async def test_both_adapters_carry_the_blend(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    from langchain_websearch import WebSearchTool
    from llamaindex_websearch import WebSearchToolSpec

    brave.script("/res/v1/web/search", Reply(500, b"down"))
    ws = blend(brave, mojeek, max_retry_wait=0)
    call = {"name": "web_search", "args": {"query": "q"}, "id": "1", "type": "tool_call"}
    message = WebSearchTool(session=ws).invoke(call)
    assert "Engines that failed: brave (HTTP 500)." in message.content
    assert message.content.endswith('results from blend for "q".')
    ws2 = blend(brave, mojeek, max_retry_wait=0)
    output = await WebSearchToolSpec(ws2).to_tool_list()[0].acall(query="q")
    assert output.content == message.content  # one renderer: the same text in both


def test_a_locale_is_a_hint_each_engine_follows_as_far_as_it_can(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    # As SearXNG takes a locale: language first, the region where an engine has one; no
    # engine sits the search out for it (a strict language would leave out every ddgs one).
    response = blend(brave, mojeek).search("q", locale="en-US")
    assert response.skipped == {}
    assert (brave.seen[-1].query["search_lang"], brave.seen[-1].query["country"]) == ("en", "US")
    assert (mojeek.seen[-1].query["lb"], mojeek.seen[-1].query["rb"]) == ("EN", "US")
    regions = {call.options["backend"]: call.options.get("region") for call in ddgs.calls}
    for backend, region in regions.items():
        honours_country = "country" not in DDGS_BACKENDS_UNSUPPORTED[backend]
        assert region == ("us-en" if honours_country else None), backend
    strict = blend(brave, mojeek).search("q", language="en")
    assert set(strict.skipped) == {f"ddgs/{name}" for name in BACKENDS}
    assert set(strict.skipped.values()) == {"cannot honour language"}


def test_an_explicit_language_or_country_wins_over_the_locale(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    blend(brave, mojeek, blend_engines=["brave"]).search("q", locale="en-US", country="gb")
    assert (brave.seen[-1].query["search_lang"], brave.seen[-1].query["country"]) == ("en", "GB")


@pytest.mark.parametrize("locale", ["english", "en-USA", "e", "en-", "12-34", ""])
def test_a_locale_that_is_none_is_refused(ddgs: type[FakeDDGS], locale: str) -> None:
    with pytest.raises(InvalidRequestError, match="locale"):
        WebSearch("ddgs").search("q", locale=locale)
    assert ddgs.calls == []


def test_engines_by_their_plain_names_and_unknown_ones_sit_out(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    ws = blend(brave, mojeek)
    response = ws.search("q", engines=["duckduckgo", "nonesuch", "brave"])
    assert {o.engine for o in response.outcomes} == {"ddgs/duckduckgo", "brave"}
    assert response.skipped == {"nonesuch": "no engine of that name here"}
    assert "nonesuch (no engine of that name here)" in response.render()
    with pytest.raises(InvalidRequestError, match="choose among ddgs/"):
        ws.search("q", engines=["nonesuch"])


def test_suggestions_of_every_engine_are_kept_once(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    with scripted_server() as upstream:
        body = {"results": [{"url": "https://up.example/", "title": "Up"}],
                "suggestions": ["one", " one ", "two", 3, None, "x" * 500]}  # fmt: skip
        upstream.script("/search", Reply(200, body))
        ws = WebSearch("blend", searxng_url=upstream.url, blend_engines=["searxng"])
        response = ws.search("q")
    assert response.suggestions == ["one", "two", "x" * 120]


async def test_searches_cancelled_at_random_give_back_every_slot(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer
) -> None:
    # 300 blends cancelled at random moments while brave is slow: waiting for one of its
    # slots, connecting, sending, reading. Afterwards brave answers at once, every slot free
    # (one leaked slot per cancelled waiter was how a burst killed the service).
    results = [{"title": "B", "url": "https://b.example/", "description": "fast again"}]
    brave.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=2.0))
    rng = random.Random(24)
    async with blend(brave, mojeek, blend_engines=["brave"]) as ws:

        async def cancelled(i: int) -> None:
            with anyio.move_on_after(rng.uniform(0, 0.3)):
                await ws.asearch(f"cancelled {i}")

        await asyncio.gather(*(cancelled(i) for i in range(300)))
        brave.script("/res/v1/web/search", Reply(200, {"web": {"results": results}}))
        lane = ws._clients.async_("brave")
        assert lane.slots.value == SLOTS
        with anyio.fail_after(10):
            answers = await asyncio.gather(*(ws.asearch(f"after {i}") for i in range(SLOTS)))
    assert all(outcome(a, "brave") == ("answered", None) for a in answers)


# -- an engine's outcome is read from its status, whatever its body and headers --------------

_BODIES = {
    "junk bytes": (b"\xff\xfe\x00 junk <html>", b""),
    "a corrupt gzip": (b"\x1f\x8b\x08 not really gzip", b"Content-Encoding: gzip\r\n"),
    "an encoding never offered": (b"abc", b"Content-Encoding: zstd-nonsense\r\n"),
    "no results": (b'{"web": {"results": []}}', b""),
    "results in UTF-8": (
        '{"web": {"results": [{"title": "Café", "url": "https://a.example/ü"}]}}'.encode(),
        b"",
    ),
    "more than the ceiling": (b'{"web": {"results": [' + b" " * 20_000 + b"]}}", b""),
}
_HEADERS = {
    "plain": b"",
    "UTF-8 header": "X-Note: café ☕\r\n".encode(),
    "Latin-1 header": "X-Note: café\r\n".encode("latin-1"),
}


@pytest.fixture(scope="module")
def canned() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A raw server answering every request with the response a test puts in ``reply``."""
    reply: dict[str, bytes] = {"bytes": b""}

    def handler(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(reply["bytes"])

    with raw_server(handler) as running:
        yield running.url, reply


@settings(max_examples=60, deadline=None)
@given(
    status=st.sampled_from([200, 403, 429, 500, 503]),
    body=st.sampled_from(list(_BODIES)),
    header=st.sampled_from(list(_HEADERS)),
)
def test_an_engines_outcome_follows_its_status_whatever_its_body(
    canned: tuple[str, dict[str, bytes]], status: int, body: str, header: str
) -> None:
    url, reply = canned
    content, encoding = _BODIES[body]
    reply["bytes"] = (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n".encode()
        + encoding
        + _HEADERS[header]
        + f"Content-Length: {len(content)}\r\n\r\n".encode()
        + content
    )
    ws = WebSearch(
        "blend",
        brave_api_key=BRAVE_KEY,
        brave_base_url=url,
        blend_engines=["brave"],
        max_retry_wait=0,
        provider_max_bytes=10_000,
    )
    try:
        found = outcome(ws.search("q"), "brave")
    except ProviderUnavailableError as every_engine_down:
        (only,) = every_engine_down.outcomes
        found = (only.status, only.error)
    expected = {
        403: ("down", "key refused"),
        429: ("down", "rate limited"),
        500: ("down", "HTTP 500"),
        503: ("down", "HTTP 503"),
    }.get(status)
    if expected is None:  # 200: what the body says, never "down"
        expected = {
            "no results": ("blind", "no results"),
            "results in UTF-8": ("answered", None),
        }.get(body, ("blind", "unreadable answer"))
    assert found == expected


@settings(max_examples=300, deadline=None)
@given(snippets=st.lists(st.text(st.sampled_from("ab "), max_size=30), min_size=1, max_size=6))
def test_a_fused_result_keeps_the_longest_snippet_whichever_engine_gave_it(
    snippets: list[str],
) -> None:
    # The same page from each engine, each with its own snippet: the longest wins (the first
    # of equals), whatever the engines' order.
    results = [
        SearchResult(rank=1, title="T", url="https://a.example/p", snippet=s) for s in snippets
    ]
    (fused,) = fuse([(f"engine{i}", [r]) for i, r in enumerate(results)], count=5)
    assert fused.snippet == max((r.snippet for r in results), key=len)  # the first of equals


@pytest.mark.parametrize(
    "body",
    [b"<html>captcha</html>", b'{"web": ', b"\xff\xfe\xfd"],
    ids=["a captcha page", "cut JSON", "not text"],
)
def test_an_engine_whose_answer_cannot_be_read_is_blind_and_billed(
    ddgs: type[FakeDDGS], brave: ScriptedServer, mojeek: ScriptedServer, body: bytes
) -> None:
    # It answered (HTTP 200): the vendor bills that; it is blind, not down, and its fee is
    # spent, whatever the reason its body could not be read.
    brave.script("/res/v1/web/search", Reply(200, body, {"Content-Type": "application/json"}))
    meter = BudgetMeter()
    response = blend(brave, mojeek, meter=meter).search("unreadable")
    assert outcome(response, "brave") == ("blind", "unreadable answer")
    assert response.usage.paid["brave"] == 1.0
    assert meter.total_cents == 2.0  # brave's cent and mojeek's
