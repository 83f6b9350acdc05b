"""OpenAI's Responses API as it answers on the real wire, not as its docs sketch it.

Every recording other projects published from the live API (see
tests/fixtures/wire/openai_inline_links.json's ``mirrors``) shows a ``url_citation`` span
covering the markdown link the model writes after a sentence, ``([site](url?utm_source=
openai))``, not the sentence it supports. Taken as it came, our answer showed the vendor's
link beside each ``[n]`` and the menu's snippet was the link. The cassette here is
constructed (the vendor cannot be reached from here) with that structure and our own text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import openai.types.responses
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import VENDOR_KEYS
from tests.support.http_server import Reply, ScriptedServer
from tests.support.vendor_types import invented_fields
from websearch_core import WebSearch
from websearch_core.providers.grounded import Span, readable_title, unlinked
from websearch_core.render import cited_answer
from websearch_core.tracking import without_tracking

FIXTURE = Path(__file__).parent / "fixtures" / "wire" / "openai_inline_links.json"
SPEC: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
LINK = re.compile(r"\]\(https?://")


def openai_session(base_url: str | None = None) -> WebSearch:
    settings: dict[str, Any] = {"openai_api_key": VENDOR_KEYS["openai"]}
    if base_url:
        settings["openai_base_url"] = base_url
    return WebSearch("openai", **settings)


def test_the_constructed_body_is_the_sdks_response_type() -> None:
    assert invented_fields(openai.types.responses.Response, SPEC["responses"][0]) == []


@pytest.mark.vcr
@pytest.mark.default_cassette("inline_links.yaml")
def test_citations_land_on_the_sentences_and_the_vendors_links_leave_the_answer() -> None:
    response = openai_session().search(**SPEC["arguments"])
    assert response.answer is not None
    answer = cited_answer(response.answer, response.citations)
    assert answer == (
        "Here is what changed for Europe’s night trains this year:\n\n"
        "- Six cross‑border routes reopened in 2026, the longest running 1,420 km from "
        "Brussels to Prague.[1]\n\n"
        "- The EU’s pilot call – the first since 2021 – pays for four sleeper services; "
        "funding runs to 2028.[2]\n\n"
        "- Nightjet added coaches with private cabins on its Vienna routes.[1][3]\n\n"
        "- In France, the Paris–Nice sleeper was renamed and its fares cut by a fifth "
        "(café car included).[4]\n\n"
        "Want a route-by-route table?"
    )
    assert not LINK.search(response.answer)
    assert "utm_source" not in response.model_dump_json()


@pytest.mark.vcr
@pytest.mark.default_cassette("inline_links.yaml")
def test_the_menu_holds_titles_and_claims_never_links() -> None:
    response = openai_session().search(**SPEC["arguments"])
    assert [(r.title, r.url, r.snippet) for r in response.results] == [
        (
            "Night trains return to six routes in 2026 – RailWatch",
            "https://www.railwatch.example/news/night-trains-2026",
            "Six cross‑border routes reopened in 2026, the longest running 1,420 km from "
            "Brussels to Prague.",
        ),
        (
            "Sleeper pilots funded under the 2026 call",
            "https://transport.ec.europa.eu/news/sleeper-pilots-2026_en",
            "The EU’s pilot call – the first since 2021 – pays for four sleeper services; "
            "funding runs to 2028.",
        ),
        (
            "Nightjet - Wikipedia",
            "https://en.wikipedia.org/wiki/Nightjet",
            "Nightjet added coaches with private cabins on its Vienna routes.",
        ),
        (
            "Trains de nuit : le retour",
            "https://www.lemonde.example/economie/article/2026/03/02/trains-de-nuit",
            "In France, the Paris–Nice sleeper was renamed and its fares cut by a fifth "
            "(café car included).",
        ),
        (  # known only by its URL: a title made of its host and path, not the URL again
            "seat61.example/night-trains/europe-overview.htm",
            "https://www.seat61.example/night-trains/europe-overview.htm",
            "",
        ),
    ]


@pytest.mark.vcr
@pytest.mark.default_cassette("inline_links.yaml")
def test_the_queries_the_model_ran_are_shown() -> None:
    response = openai_session().search(**SPEC["arguments"])
    assert response.searched == [
        "night train routes reopened 2026 Europe",
        "EU sleeper train pilot call 2026 funding",
        "Nightjet new coaches private cabins Vienna",
    ]
    assert response.usage.searches == 2  # two search calls; open_page reads, it does not search
    assert (
        'Searched for: "night train routes reopened 2026 Europe"; "EU sleeper train pilot '
        'call 2026 funding"; "Nightjet new coaches private cabins Vienna".'
    ) in response.render()


def _body(text: str, spans: list[tuple[int, int, str]], *sources: dict[str, Any]) -> Any:
    body = json.loads(json.dumps(SPEC["responses"][0]))
    body["output"] = [
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "q", "sources": list(sources)},
        },
        {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": text,
                    "annotations": [
                        {"type": "url_citation", "start_index": s, "end_index": e, "url": u}
                        for s, e, u in spans
                    ],
                }
            ],
        },
    ]
    return body


def test_a_blocked_domain_that_still_comes_back_is_left_out_of_the_menu(
    server: ScriptedServer,
) -> None:
    text = "Pins are boards. ([pinterest.com](https://pinterest.com/x)) Boards hold pins."
    link = text.index("([")
    body = _body(
        text,
        [(link, text.index(")) ") + 2, "https://www.pinterest.com/x")],
        {"type": "url", "url": "https://www.pinterest.com/x"},
        {"type": "url", "url": "https://boards.example/pins"},
    )
    server.script("/v1/responses", Reply(200, body))
    response = openai_session(server.url).search("pins", exclude_domains=["pinterest.com"])
    assert [r.url for r in response.results] == ["https://boards.example/pins"]


def test_a_source_the_sdk_does_not_type_and_an_answer_without_spans_are_read(
    server: ScriptedServer,
) -> None:
    # Recorded live: sources of type "api" (no URL), and a model writing a bare URL with no
    # annotation at all.
    body = _body(
        "See https://weather.example/today for the forecast.",
        [],
        {"type": "api", "name": "oai-weather"},
        {"type": "url", "url": "https://weather.example/today?utm_source=openai"},
    )
    server.script("/v1/responses", Reply(200, body))
    response = openai_session(server.url).search("weather", include_answer=True)
    assert [(r.title, r.url) for r in response.results] == [
        ("weather.example/today", "https://weather.example/today")
    ]
    assert response.answer == "See https://weather.example/today for the forecast."


def test_a_span_that_is_not_a_link_stays_on_its_words() -> None:
    text = "Alpha beta. ([a.org](https://a.org/)) Gamma delta."
    gamma = text.index("Gamma")
    new, moved = unlinked(text, [Span(gamma, gamma + 5, "https://g.org/", "G")])
    assert new == text  # no link was cited: nothing is taken out
    assert [(s.start, s.end, claim) for s, claim in moved] == [(gamma, gamma + 5, "Gamma")]


@given(
    st.lists(
        st.tuples(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_taking_the_links_out_keeps_every_word_and_puts_each_span_on_text(
    pieces: list[tuple[str, bool]],
) -> None:
    text, spans = "", []
    for words, linked in pieces:
        text += words
        if linked:
            start = len(text)
            text += "([x.org](https://x.org/p?utm_source=openai))"
            spans.append(Span(start, len(text), "https://x.org/p", "X"))
    new, moved = unlinked(text, spans)
    assert "](https://x.org" not in new
    # Only the links and the whitespace before them go: every other character stays, in order.
    assert re.sub(r"\s+", "", new) == re.sub(
        r"\s+", "", text.replace("([x.org](https://x.org/p?utm_source=openai))", "")
    )
    for span, claim in moved:
        assert 0 <= span.start < span.end <= len(new)
        assert new[span.start : span.end] == claim


def test_tracking_parameters_leave_a_shown_link_and_nothing_else_changes() -> None:
    assert without_tracking("https://a.org/p?utm_source=openai") == "https://a.org/p"
    assert without_tracking("https://a.org/p?id=1&utm_source=openai#top") == (
        "https://a.org/p?id=1#top"
    )
    assert without_tracking("https://A.org/P/?UTM_Medium=x&b=2") == "https://A.org/P/?b=2"
    assert without_tracking("https://a.org/p") == "https://a.org/p"
    assert readable_title("https://www.reuters.com/world/") == "reuters.com/world"
    assert len(readable_title("https://a.org/" + "x" * 300)) == 80
