"""OpenRouter against the shapes its live answers take (tests/fixtures/wire/openrouter_*.json).

Each cassette is CONSTRUCTED from a fixture that copies the structure of an answer another
project recorded from the live API (its ``mirrors`` field names the repository, file and
commit), with text of our own; the request is the one this package builds. Three shapes:

- native OpenAI search (the default model): spans on the ``([domain](url))`` links the model
  writes, inferred (no public recording shows them through OpenRouter);
- Exa (a model without native search): every span 0/0, the page's ``content``, a $0.007 fee;
- a billed native search whose answer carries no annotations at all (the model wrote a URL).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import httpx
import openrouter.components
import pytest
from openai.types.chat.chat_completion_message import Annotation as ChatAnnotation

from tests.conftest import VENDOR_KEYS
from tests.support.vendor_types import invented_fields
from websearch_core import WebSearch
from websearch_core.models import EngineOutcome, SearchResponse
from websearch_core.providers.openrouter import dollars
from websearch_core.render import cited_answer

FIXTURES = Path(__file__).parent / "fixtures" / "wire"
NAMES = ("native_link_spans", "exa_zero_spans", "bare_url_no_annotations")
QUERY = "where does the rhine river begin and end"

#: In OpenRouter's live answers (the recordings the fixtures mirror) but not in its SDK's
#: chat types: ``message.annotations`` (documented, and checked against OpenAI's type below),
#: ``choices[].native_finish_reason`` (the upstream's own reason), the top-level ``provider``
#: and ``completion_tokens_details.image_tokens``.
LIVE_ONLY = frozenset(
    {
        "choices[*].message.annotations",
        "choices[*].native_finish_reason",
        "provider",
        "usage.completion_tokens_details.image_tokens",
    }
)


def body(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(
        (FIXTURES / f"openrouter_{name}.json").read_text(encoding="utf-8")
    )
    assert spec["provider"] == "openrouter"
    assert "pydantic/pydantic-ai" in spec["mirrors"]
    response: dict[str, Any] = spec["responses"][0]
    return response


def search(query: str = QUERY) -> SearchResponse:
    ws = WebSearch("openrouter", openrouter_api_key=VENDOR_KEYS["openrouter"])
    return ws.search(query, include_answer=True)


@pytest.mark.parametrize("name", NAMES)
def test_fixture_is_openrouters_own_sdk_type(name: str) -> None:
    answer = body(name)
    assert invented_fields(openrouter.components.ChatResult, answer, LIVE_ONLY) == []
    for note in answer["choices"][0]["message"].get("annotations", []):
        assert invented_fields(ChatAnnotation, note, frozenset({"url_citation.content"})) == []


def test_native_fixture_spans_cover_the_inline_links() -> None:
    message = body("native_link_spans")["choices"][0]["message"]
    for note in message["annotations"]:
        cited = note["url_citation"]
        piece = message["content"][cited["start_index"] : cited["end_index"]]
        assert piece.startswith("([")
        assert piece.endswith(f"]({cited['url']}))")


@pytest.mark.vcr
@pytest.mark.default_cassette("native_link_spans.yaml")
def test_native_openai_links_leave_the_answer_and_their_sentences_are_the_snippets() -> None:
    response = search()
    assert [(r.rank, r.title, r.url) for r in response.results] == [
        (1, "Where the Rhine begins", "https://rhine.example.org/source"),
        (2, "The Rhine\u2013Meuse delta", "https://rivers.example.com/rhine-delta"),
        (3, "Rhine | European atlas", "https://atlas.example.net/europe/rhine?lang=en"),
    ]
    first = "The Rhine rises at Lake Toma in the Swiss Alps, about 2,345 m above sea level."
    second = (
        "Its delta \u2014 shared with the Meuse \u2014 reaches the North Sea in the Netherlands."
    )
    # The sentence each page backs, even where OpenRouter added the page's content too.
    assert [r.snippet for r in response.results] == [first, second, second]
    for result in response.results:
        assert "http" not in result.snippet
        assert "utm_source" not in result.url
    assert response.answer == (
        "The Rhine rises at **Lake Toma** in the Swiss Alps, about 2,345 m above sea level."
        f"\n\n{second}"
    )
    assert cited_answer(response.answer, response.citations) == (
        "The Rhine rises at **Lake Toma** in the Swiss Alps, about 2,345 m above sea level.[1]"
        f"\n\n{second}[2][3]"
    )
    assert response.usage.model_dump() == {
        "searches": 2,
        "requests": 1,
        "input_tokens": 9676,
        "output_tokens": 412,
        "paid": {},
        "cost_usd": 0.0312431,
    }
    assert response.outcomes == []
    assert response.searched == []  # OpenRouter does not say what its model searched for
    rendered = response.render()
    assert rendered.startswith(
        "Answer: The Rhine rises at **Lake Toma** in the Swiss Alps, about 2,345 m above sea "
        f"level.[1] {second}[2][3]\n\n"
        "1. Where the Rhine begins — https://rhine.example.org/source\n"
        f"   {first}\n"
    )
    assert "utm_source" not in rendered
    assert "](" not in rendered
    assert rendered.endswith(f'3 results from openrouter for "{QUERY}".')


@pytest.mark.vcr
@pytest.mark.default_cassette("exa_zero_spans.yaml")
def test_exa_zero_spans_are_sources_with_the_page_content_and_no_markers() -> None:
    response = search()
    assert [(r.rank, r.title, r.url) for r in response.results] == [
        (1, "Where the Rhine begins", "https://rhine.example.org/source"),
        (2, "rivers.example.com/rhine-delta", "https://rivers.example.com/rhine-delta"),
        (3, "Rhine | European atlas", "https://atlas.example.net/europe/rhine"),
    ]
    assert [r.snippet for r in response.results] == [
        "# Where the Rhine begins ... The Rhine rises at Lake Toma, a small lake in the Swiss "
        "canton of Graub\u00fcnden. ... From there the Vorderrhein flows east to meet the "
        "Hinterrhein.",
        "## ... # Rhine\u2013Meuse delta ... The delta reaches the North Sea near Rotterdam.",
        "Rhine | European atlas ... Length: 1,230 km. Countries: Switzerland, Liechtenstein, "
        "Austria, Germany, France, the Netherlands.",
    ]
    assert all("http" not in r.snippet for r in response.results)
    # 0/0 spans are a source list: the answer is the model's own, with no markers.
    assert response.answer == (
        "The Rhine rises at Lake Toma in the Swiss Alps and reaches the North Sea near "
        "Rotterdam: https://rhine.example.org/source"
    )
    assert response.citations == []
    assert cited_answer(response.answer, response.citations) == response.answer
    assert response.usage.model_dump() == {
        "searches": 1,
        "requests": 1,
        "input_tokens": 2315,
        "output_tokens": 40,
        "paid": {},
        "cost_usd": 0.007637029,  # Exa's $0.007 over the upstream's cost, in usage.cost
    }
    assert response.outcomes == []
    assert response.searched == []
    rendered = response.render()
    assert "2. rivers.example.com/rhine-delta — https://rivers.example.com/rhine-delta" in rendered
    assert rendered.endswith(f'3 results from openrouter for "{QUERY}".')


@pytest.mark.vcr
@pytest.mark.default_cassette("bare_url_no_annotations.yaml")
def test_a_billed_search_with_no_annotations_says_it_returned_no_sources() -> None:
    response = search("rhine river official site")
    assert response.results == []
    assert response.outcomes == [
        EngineOutcome(
            engine="openrouter web_search",
            status="blind",
            error="searched once and returned no sources",
        )
    ]
    assert response.answer == "https://rhine.example.org/ "  # as the model wrote it
    assert response.citations == []
    assert (response.usage.searches, response.usage.cost_usd) == (1, 0.0133176)
    assert response.render() == (
        "Answer: https://rhine.example.org/\n\n"
        "Engines that answered with nothing usable: openrouter web_search (searched once and "
        "returned no sources).\n\n"
        '0 results from openrouter for "rhine river official site".'
    )


def test_searches_are_counted_in_the_blind_outcome() -> None:
    answer = body("bare_url_no_annotations")
    answer["usage"]["server_tool_use_details"]["web_search_requests"] = 3
    answer["choices"][0]["message"]["annotations"] = [{"type": "url_citation"}]  # no URL
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answer)))
    ws = WebSearch("openrouter", openrouter_api_key=VENDOR_KEYS["openrouter"], http_client=client)
    response = ws.search("q")
    assert [o.error for o in response.outcomes] == ["searched 3 times and returned no sources"]
    assert "openrouter web_search (searched 3 times and returned no sources)" in response.render()


@pytest.mark.parametrize(
    ("cost", "read"),
    [
        (0.0133176, 0.0133176),
        (0, 0.0),
        (None, None),
        ("0.01", None),
        (True, None),
        (-0.5, None),
        (math.inf, None),
        (math.nan, None),
    ],
)
def test_only_a_finite_cost_not_below_zero_is_read(cost: object, read: float | None) -> None:
    assert dollars(cost) == read


def test_an_odd_cost_is_no_cost_and_no_error() -> None:
    answer = body("exa_zero_spans")
    answer["usage"]["cost"] = -1
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answer)))
    ws = WebSearch("openrouter", openrouter_api_key=VENDOR_KEYS["openrouter"], http_client=client)
    response = ws.search("q")
    assert response.usage.cost_usd is None
    assert len(response.results) == 3
