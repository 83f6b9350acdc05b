"""ddgs, the keyless default: mapping, errors, and never blocking the event loop.

ddgs cannot be pointed at a loopback server, so ``FakeDDGS`` stands in (see its docstring).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from tests.support.fake_ddgs import FakeDDGS
from websearch_core import ProviderUnavailableError, RateLimitedError, WebSearch

ROWS = [
    {
        "title": "asyncio — Asynchronous I/O",
        "href": "https://docs.python.org/3/library/asyncio.html",
        "body": "asyncio is a library to write <b>concurrent</b> code.",
    },
    {"title": "no link", "href": "", "body": "dropped"},
    {
        "title": "PEP 492",
        "href": "https://peps.python.org/pep-0492/",
        "body": "Coroutines &amp; async",
    },
]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[FakeDDGS]]:
    FakeDDGS.reset(ROWS)
    monkeypatch.setattr("ddgs.DDGS", FakeDDGS)
    return FakeDDGS


def test_ddgs_is_the_keyless_default(fake: type[FakeDDGS]) -> None:
    response = WebSearch().search("python asyncio")
    assert response.provider == "ddgs"
    assert [(r.rank, r.url) for r in response.results] == [
        (1, "https://docs.python.org/3/library/asyncio.html"),
        (2, "https://peps.python.org/pep-0492/"),
    ]
    assert response.results[0].snippet == "asyncio is a library to write concurrent code."
    assert response.results[1].snippet == "Coroutines & async"


def test_no_hidden_time_filter_or_region(fake: type[FakeDDGS]) -> None:
    WebSearch().search("python asyncio", count=3)
    options = fake.calls[-1].options
    assert options["timelimit"] is None
    assert "region" not in options
    assert options["max_results"] == 3


async def test_asearch_runs_ddgs_off_the_event_loop(fake: type[FakeDDGS]) -> None:
    fake.delay_s = 0.3
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    response = await WebSearch().asearch("python asyncio")
    task.cancel()
    assert len(response.results) == 2
    assert fake.calls[-1].thread != threading.get_ident()
    assert ticks >= 5  # the loop kept running while ddgs blocked its worker thread


@pytest.mark.parametrize(
    ("error", "expected", "message"),
    [
        (RatelimitException("202 Ratelimit"), RateLimitedError, "rate limiting"),
        (TimeoutException("timed out"), ProviderUnavailableError, "no answer within"),
        (
            DDGSException("boom\nlong chain"),
            ProviderUnavailableError,
            r"\(its search engines failed \(DDGSException\)\)",
        ),
    ],
)
def test_ddgs_errors_become_ours(
    fake: type[FakeDDGS], error: Exception, expected: type[Exception], message: str
) -> None:
    fake.error = error
    with pytest.raises(expected, match=message):
        WebSearch().search("python asyncio")


# What ddgs 9 raised when this machine had no network (its Rust client's error chain).
NO_DNS = (
    "DNSError: DNSError('error sending request for url (https://www.mojeek.com/search?q=python+"
    "asyncio&arc=none) > error resolving name > failed to lookup address information: Temporary "
    "failure in name resolution')"
)


@pytest.mark.parametrize(
    ("raw", "meaning"),
    [
        (NO_DNS, "names could not be resolved; check the machine's network"),
        ("https://html.duckduckgo.com/html: operation timed out", "did not answer in time"),
        ("ConnectError: tcp connect error: Connection refused (os error 111)", "could not connect"),
        ("https://lite.duckduckgo.com/lite/ 403 Forbidden", "refused the request"),
    ],
)
def test_a_ddgs_failure_is_one_clean_line_without_engine_urls(
    fake: type[FakeDDGS], raw: str, meaning: str
) -> None:
    fake.error = DDGSException(raw)
    with pytest.raises(ProviderUnavailableError) as caught:
        WebSearch().search("python asyncio")
    message = str(caught.value)
    assert meaning in message
    assert "http" not in message
    assert "\n" not in message
    assert message.startswith("ddgs is unavailable (")
    assert message.endswith("try again later or use another provider")


def test_ddgs_no_results_is_an_empty_menu_not_an_error(fake: type[FakeDDGS]) -> None:
    fake.error = DDGSException("No results found.")
    response = WebSearch().search("zzqx nothing")
    assert response.results == []
    assert response.render() == '0 results from ddgs for "zzqx nothing".'
