"""One retry on 429/5xx honouring Retry-After, then a typed error; against a real server.

The wait is checked two ways: ``retry_delay`` is a pure function of the response, tested on
every form of the header, and the session's sleeps are recorded (``time.sleep`` and
``anyio.sleep`` patched), so honouring the header, the cap and "exactly one retry" are
asserted as values, never as timings. Values equal to ``DEFAULT_RETRY_WAIT`` would prove
nothing, so none is used.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import time

import httpx
import pytest

from tests.support.http_server import Reply, ScriptedServer
from websearch_core import (
    AuthenticationError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
    WebSearch,
)
from websearch_core.providers.send import DEFAULT_RETRY_WAIT, retry_after_seconds, retry_delay

OK = Reply(
    200, {"query": "q", "results": [{"title": "T", "url": "https://e.org/", "content": "c"}]}
)


def session(server: ScriptedServer, **kwargs: float) -> WebSearch:
    return WebSearch("searxng", searxng_url=server.url, **kwargs)  # type: ignore[arg-type]


def _http_date(seconds_from_now: float) -> str:
    when = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=seconds_from_now)
    return email.utils.format_datetime(when, usegmt=True)


def _response(status: int, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, headers=headers)


def test_the_default_wait_is_not_a_value_the_tests_send() -> None:
    assert DEFAULT_RETRY_WAIT == 1.0


@pytest.mark.parametrize(
    ("status", "header", "cap", "expected"),
    [
        (429, "2", 5.0, 2.0),  # delta-seconds, not the default
        (503, "3.5", 5.0, 3.5),  # fractional seconds
        (429, "0", 5.0, 0.0),  # retry at once
        (429, "120", 5.0, None),  # above the cap: not slept through, reported instead
        (429, "soon", 5.0, DEFAULT_RETRY_WAIT),  # malformed: the default
        (429, "-3", 5.0, 0.0),  # negative: at once
        (429, "", 5.0, DEFAULT_RETRY_WAIT),  # empty: the default
        (429, None, 5.0, DEFAULT_RETRY_WAIT),  # absent: the default
        (429, None, 0.5, 0.5),  # absent, and the cap is below the default
        (500, "2", 5.0, 2.0),
        (404, "2", 5.0, None),  # not retried at all
        (401, "2", 5.0, None),
        (499, "2", 5.0, None),  # the last status below 5xx is not retried
        (429, "Wed, 21 Oct 2015 07:28:00", 5.0, 0.0),  # an HTTP-date without a zone is UTC
    ],
)
def test_retry_delay_reads_every_form_of_retry_after(
    status: int, header: str | None, cap: float, expected: float | None
) -> None:
    assert retry_delay(_response(status, header), cap) == expected


def test_retry_after_as_an_http_date() -> None:
    ahead = retry_after_seconds(_response(429, _http_date(3)))
    assert ahead is not None
    assert 1.5 <= ahead <= 3.0  # the date has one-second granularity
    assert retry_after_seconds(_response(429, "Wed, 21 Oct 2015 07:28:00 GMT")) == 0.0
    assert retry_delay(_response(429, _http_date(600)), cap=5.0) is None


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the senders make, recorded instead of slept."""
    slept: list[float] = []

    async def asleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("websearch_core.providers.send._sleep", slept.append)
    monkeypatch.setattr("websearch_core.providers.send._asleep", asleep)
    return slept


@pytest.mark.parametrize(
    ("header", "waited"),
    [("2", 2.0), ("3.5", 3.5), ("soon", DEFAULT_RETRY_WAIT), (None, DEFAULT_RETRY_WAIT)],
)
def test_429_is_retried_exactly_once_after_the_wait_it_asks_for(
    server: ScriptedServer, sleeps: list[float], header: str | None, waited: float
) -> None:
    headers = {"Retry-After": header} if header is not None else {}
    server.script("/search", Reply(429, "slow down", headers), OK)
    response = session(server).search("q")
    assert [r.url for r in response.results] == ["https://e.org/"]
    assert server.hits("/search") == 2
    assert sleeps == [waited]


async def test_async_path_retries_the_same_way(server: ScriptedServer, sleeps: list[float]) -> None:
    server.script("/search", Reply(503, "busy", {"Retry-After": "2"}), OK)
    response = await session(server).asearch("q")
    assert len(response.results) == 1
    assert server.hits("/search") == 2
    assert sleeps == [2.0]


def test_an_http_date_retry_after_is_waited_for(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": _http_date(3)}), OK)
    assert len(session(server).search("q").results) == 1
    assert len(sleeps) == 1
    assert 1.5 <= sleeps[0] <= 3.0


def test_a_second_429_is_not_retried_again(server: ScriptedServer, sleeps: list[float]) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "2"}))
    with pytest.raises(RateLimitedError, match="wait 2 s"):
        session(server).search("q")
    assert server.hits("/search") == 2
    assert sleeps == [2.0]


def test_the_wait_is_really_slept(server: ScriptedServer) -> None:
    server.script("/search", Reply(429, "slow down", {"Retry-After": "2"}), OK)
    started = time.monotonic()
    session(server).search("q")
    assert time.monotonic() - started >= 1.9  # it honoured Retry-After, not the default 1 s


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_persistent_5xx_becomes_provider_unavailable_after_one_retry(
    server: ScriptedServer, status: int
) -> None:
    server.script("/search", Reply(status, "down", {"Retry-After": "0"}))
    with pytest.raises(ProviderUnavailableError, match=rf"HTTP {status}") as caught:
        session(server).search("q")
    assert caught.value.retryable
    assert server.hits("/search") == 2


def test_persistent_429_reports_retry_after_to_the_model(server: ScriptedServer) -> None:
    server.script(
        "/search", Reply(429, "", {"Retry-After": "0"}), Reply(429, "", {"Retry-After": "3"})
    )
    with pytest.raises(RateLimitedError, match="wait 3 s") as caught:
        session(server).search("q")
    assert caught.value.retry_after == 3
    assert server.hits("/search") == 2


def test_retry_after_beyond_the_cap_is_not_slept_through(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "120"}))
    with pytest.raises(RateLimitedError, match="wait 120 s"):
        session(server, max_retry_wait=2).search("q")
    assert server.hits("/search") == 1
    assert sleeps == []


def test_http_date_retry_after_in_the_past_retries_at_once(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), OK)
    assert len(session(server).search("q").results) == 1
    assert sleeps == [0.0]


def test_401_is_a_bad_key_and_is_not_retried(server: ScriptedServer) -> None:
    server.script("/search", Reply(401, "unauthorized"))
    with pytest.raises(AuthenticationError, match="refused the API key"):
        session(server).search("q")
    assert server.hits("/search") == 1


def test_searxng_403_says_how_to_enable_json(server: ScriptedServer) -> None:
    server.script("/search", Reply(403, "Forbidden"))
    with pytest.raises(ProviderResponseError, match=r"`json` to `search\.formats`"):
        session(server).search("q")
    assert server.hits("/search") == 1


def test_4xx_is_reported_with_an_excerpt(server: ScriptedServer) -> None:
    server.script("/search", Reply(400, "Invalid value for pageno"))
    with pytest.raises(ProviderResponseError, match="Invalid value for pageno"):
        session(server).search("q")


def test_html_instead_of_json_is_a_clear_error(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, b"<html>login</html>", {"Content-Type": "text/html"}))
    with pytest.raises(ProviderResponseError, match="check the provider's base URL"):
        session(server).search("q")


def test_unreachable_provider_is_unavailable_not_a_crash(server: ScriptedServer) -> None:
    url = server.url
    server.stop()
    with pytest.raises(ProviderUnavailableError, match="network error"):
        WebSearch("searxng", searxng_url=url).search("q")


def test_timeout_is_unavailable(server: ScriptedServer) -> None:
    class Slow(Reply):
        def encoded(self) -> tuple[bytes, dict[str, str]]:
            time.sleep(1.5)
            return super().encoded()

    server.script("/search", Slow(200, {"results": []}))
    with pytest.raises(ProviderUnavailableError, match=r"no answer within 0\.5 s"):
        session(server, timeout=0.5).search("q")


async def test_async_429_with_retry_after_zero_retries_at_once(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "0"}), OK)
    assert len((await session(server).asearch("q")).results) == 1
    assert server.hits("/search") == 2
    assert sleeps == [0.0]


async def test_async_4xx_is_final_after_one_request(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(400, "Invalid value for pageno"))
    with pytest.raises(ProviderResponseError, match="Invalid value for pageno"):
        await session(server).asearch("q")
    assert server.hits("/search") == 1
    assert sleeps == []


async def test_async_persistent_5xx_is_unavailable_after_one_retry(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(503, "busy", {"Retry-After": "0"}))
    with pytest.raises(ProviderUnavailableError, match="HTTP 503"):
        await session(server).asearch("q")
    assert server.hits("/search") == 2
    assert sleeps == [0.0]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_wait_that_would_end_past_the_deadline_is_not_made(
    server: ScriptedServer, sleeps: list[float], asynchronous: bool
) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "3"}), OK)
    ws = session(server, timeout=2, max_retry_wait=5)
    with pytest.raises(RateLimitedError, match="wait 3 s"):
        await ws.asearch("q") if asynchronous else ws.search("q")
    assert server.hits("/search") == 1
    assert sleeps == []


def test_a_long_error_body_is_excerpted_to_200_characters(server: ScriptedServer) -> None:
    server.script("/search", Reply(400, "x" * 300))
    with pytest.raises(ProviderResponseError) as caught:
        session(server).search("q")
    assert "x" * 200 in str(caught.value)
    assert "x" * 201 not in str(caught.value)


@pytest.mark.parametrize(
    ("encoding", "body", "says"),
    [
        ("br", b"\x1b\x00\x00", r"an encoding we did not ask for \(br\)"),
        ("gzip", b"\x1f\x8b not really gzip", "corrupt compressed body"),
    ],
)
def test_a_body_we_cannot_decode_is_a_provider_response_error(
    server: ScriptedServer, encoding: str, body: bytes, says: str
) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": encoding}
    server.script("/search", Reply(200, body, headers))
    with pytest.raises(ProviderResponseError, match=says):
        session(server).search("q")


def test_a_client_passed_in_still_gets_the_deadline_as_its_timeouts(
    server: ScriptedServer,
) -> None:
    # No deadline at the socket for a client the host built: the request's own timeouts are
    # the time left, so a server that stalls before its headers is cut there.
    server.script("/search", Reply(200, {"results": []}, delay_s=5))
    ws = WebSearch("searxng", searxng_url=server.url, timeout=1, http_client=httpx.Client())
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError, match="no answer within 1 s"):
        ws.search("q")
    assert time.monotonic() - started < 1 + 1.5


def test_a_retry_after_equal_to_the_cap_is_slept_through(
    server: ScriptedServer, sleeps: list[float]
) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "2"}), OK)
    assert len(session(server, max_retry_wait=2).search("q").results) == 1
    assert sleeps == [2.0]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, AuthenticationError),
        (403, AuthenticationError),
        (499, ProviderResponseError),
        (500, ProviderUnavailableError),
    ],
)
def test_each_status_becomes_its_error_for_a_provider_without_its_own(
    status: int, error: type[Exception], sleeps: list[float]
) -> None:
    # Brave has no error of its own for these statuses (only for its 422), so the generic
    # mapping decides: 401 and 403 are the key, 499 is the request, 5xx is the provider.
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(status)))
    ws = WebSearch("brave", brave_api_key="canary-key-for-status", http_client=client)
    with pytest.raises(error):
        ws.search("q")


def test_provider_requests_carry_our_user_agent(server: ScriptedServer) -> None:
    server.script("/search", OK)
    session(server).search("q")
    assert server.seen[0].headers["user-agent"].startswith("websearch-pack/")
