"""One retry on 429/5xx honouring Retry-After, then a typed error; against a real server."""

from __future__ import annotations

import time

import pytest

from tests.support.http_server import Reply, ScriptedServer
from websearch_core import (
    AuthenticationError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
    WebSearch,
)

OK = Reply(
    200, {"query": "q", "results": [{"title": "T", "url": "https://e.org/", "content": "c"}]}
)


def session(server: ScriptedServer, **kwargs: float) -> WebSearch:
    return WebSearch("searxng", searxng_url=server.url, **kwargs)  # type: ignore[arg-type]


def test_429_with_retry_after_is_retried_once_after_waiting(server: ScriptedServer) -> None:
    server.script("/search", Reply(429, "slow down", {"Retry-After": "1"}), OK)
    started = time.monotonic()
    response = session(server).search("q")
    waited = time.monotonic() - started
    assert [r.url for r in response.results] == ["https://e.org/"]
    assert server.hits("/search") == 2
    assert waited >= 0.9  # it honoured Retry-After rather than retrying at once


async def test_async_path_retries_the_same_way(server: ScriptedServer) -> None:
    server.script("/search", Reply(503, "busy", {"Retry-After": "0"}), OK)
    response = await session(server).asearch("q")
    assert len(response.results) == 1
    assert server.hits("/search") == 2


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


def test_retry_after_beyond_the_cap_is_not_slept_through(server: ScriptedServer) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "120"}))
    with pytest.raises(RateLimitedError, match="wait 120 s"):
        session(server, max_retry_wait=2).search("q")
    assert server.hits("/search") == 1


def test_http_date_retry_after_is_understood(server: ScriptedServer) -> None:
    server.script("/search", Reply(429, "", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), OK)
    assert len(session(server).search("q").results) == 1  # a date in the past: retry at once


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
