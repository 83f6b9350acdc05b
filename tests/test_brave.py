"""Brave, replayed from cassettes constructed from its documentation (see each header)."""

from __future__ import annotations

import pytest

from tests.conftest import BRAVE_KEY
from websearch_core import AuthenticationError, WebSearch


@pytest.mark.vcr
def test_brave_maps_documented_example() -> None:
    response = WebSearch("brave", brave_api_key=BRAVE_KEY).search("python frameworks", count=3)
    assert response.provider == "brave"
    assert [(r.rank, r.title, r.url) for r in response.results] == [
        (1, "Top Python Web Frameworks", "https://example.com/python-frameworks"),
        (2, "Web frameworks for Python", "https://example.org/docs/web-frameworks/"),
        (3, "Choosing a Python framework", "https://example.net/blog/choosing-a-python-framework"),
    ]
    assert response.results[0].snippet == "A comprehensive guide to Python web frameworks..."
    assert [r.published for r in response.results] == ["2 days ago", "2025-04-12T14:22:41", None]
    assert response.answer is None


@pytest.mark.vcr
def test_brave_invalid_token_is_an_authentication_error() -> None:
    ws = WebSearch("brave", brave_api_key=BRAVE_KEY)
    with pytest.raises(AuthenticationError, match="brave refused the API key") as caught:
        ws.search("python frameworks")
    assert not caught.value.retryable


@pytest.mark.vcr
def test_brave_rate_limit_then_success(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("websearch_core.providers.send._sleep", slept.append)
    response = WebSearch("brave", brave_api_key=BRAVE_KEY).search("python frameworks", count=3)
    assert len(response.results) == 3
    assert slept == [2.0]  # the cassette's Retry-After, which is not the default wait
