"""Tavily, replayed from cassettes constructed from its documentation (see each header)."""

from __future__ import annotations

import pytest

from tests.conftest import TAVILY_KEY
from websearch_core import RateLimitedError, WebSearch


@pytest.mark.vcr
def test_tavily_maps_documented_example() -> None:
    ws = WebSearch("tavily", tavily_api_key=TAVILY_KEY)
    response = ws.search("Who is Leo Messi?", include_answer=True)
    assert [(r.title, r.url) for r in response.results] == [
        ("Lionel Messi Facts | Britannica", "https://www.britannica.com/facts/Lionel-Messi")
    ]
    assert response.results[0].snippet.startswith("Lionel Messi, an Argentine footballer")
    assert len(response.results[0].snippet) <= 240  # capped per result
    assert response.answer is not None
    assert response.answer.startswith("Lionel Messi, born in 1987")


@pytest.mark.vcr
def test_tavily_plan_limit_is_not_retried() -> None:
    ws = WebSearch("tavily", tavily_api_key=TAVILY_KEY)
    with pytest.raises(RateLimitedError, match="quota is exhausted") as caught:
        ws.search("Who is Leo Messi?")
    assert caught.value.quota
    assert not caught.value.retryable
