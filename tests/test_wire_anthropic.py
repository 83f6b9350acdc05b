"""Anthropic's real wire shapes: answers built on the structure of published live recordings.

The cassettes in tests/cassettes/test_wire_anthropic/ are CONSTRUCTED (each fixture's
``mirrors`` names the recording it copies, in tests/fixtures/wire/): several searches across
a ``pause_turn`` (the first answer ends with a ``server_tool_use`` whose results open the
continuation), the model announcing each next search in a text block of its own,
``cited_text`` cut with "...", ``page_age`` strings, ``web_search_requests`` per response, a
search that found nothing (``content: []``). The stop reasons and error codes no recording
shows are scripted on loopback.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic.types
import httpx
import pytest
from pydantic import SecretStr

from tests.conftest import VENDOR_KEYS
from tests.support.http_server import Reply, ScriptedServer
from tests.support.vendor_types import invented_fields
from websearch_core import ProviderResponseError, WebSearch, WebSearchError
from websearch_core.models import EngineOutcome, SearchRequest, SearchResponse
from websearch_core.providers.anthropic import AnthropicProvider
from websearch_core.render import cited_answer

WIRE = Path(__file__).parent / "fixtures" / "wire"
FIXTURES = sorted(WIRE.glob("anthropic_*.json"))
PATH = "/v1/messages"


def fixture(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((WIRE / f"anthropic_{name}.json").read_text("utf-8"))
    return spec


def search(spec: dict[str, Any], base_url: str | None = None) -> SearchResponse:
    settings: dict[str, Any] = {"anthropic_api_key": VENDOR_KEYS["anthropic"]}
    if base_url is not None:
        settings["anthropic_base_url"] = base_url
    return WebSearch("anthropic", **settings).search(**spec["arguments"])


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_constructed_body_is_the_vendors_own_sdk_type(path: Path) -> None:
    spec = json.loads(path.read_text("utf-8"))
    assert spec["mirrors"].startswith(("answers recorded", "an answer recorded"))
    for body in spec["responses"]:
        assert invented_fields(anthropic.types.Message, body) == []


def test_the_paused_fixture_has_the_recorded_quirks() -> None:
    first, second = fixture("pause_turn")["responses"]
    assert first["stop_reason"] == "pause_turn"
    dangling = first["content"][-1]
    assert dangling["type"] == "server_tool_use"  # its results come in the next answer
    assert second["content"][0] == {**second["content"][0], "tool_use_id": dangling["id"]}
    assert second["content"][0]["type"] == "web_search_tool_result"
    searches = [r["usage"]["server_tool_use"]["web_search_requests"] for r in (first, second)]
    assert searches == [2, 2]  # per response, not a running total


PAUSED_QUERIES = [
    "Zion Canyon shuttle schedule January 2026",
    "Springdale Utah weather this week",
    "Zion Narrows flow rate today",
    "Zion Narrows top-down permit availability",
]


@pytest.mark.vcr
@pytest.mark.default_cassette("pause_turn.yaml")
def test_searches_across_a_paused_turn_are_one_answer() -> None:
    # The cassette holds both calls; the second matches only if the paused turn was sent
    # back unchanged (the request bodies are compared as JSON).
    response = search(fixture("pause_turn"))
    assert [(r.rank, r.url, r.published) for r in response.results] == [
        (1, "https://www.nationalparks.example/zion/planyourvisit/shuttle.htm", None),
        (2, "https://forecast.weather.example/MapClick.php?lat=37.2&lon=-112.99", "3 days ago"),
        (3, "https://www.wxunder.example/forecast/us/ut/springdale", "December 28, 2025"),
        (4, "https://www.waterdata.example/monitoring-location/09405500/", "29 minutes ago"),
        (5, "https://www.nationalparks.example/zion/planyourvisit/thenarrows.htm", None),
    ]
    assert response.results[0].snippet == (
        "The shuttle operates seasonally, from early March through late November. From December "
        "through February, private vehicles are permitted on the Zion Canyon Scen..."
    )
    assert response.answer is not None
    # What the model said before each search ("Next, the river conditions for the Narrows:")
    # is not the answer; each cited block keeps its markers on its own words.
    assert cited_answer(response.answer, response.citations) == (
        "The Zion Canyon shuttle does not run in January; visitors drive their own cars on the "
        "scenic drive.[1] Springdale expects highs near 48°F with dry skies until Friday.[2][3]"
        "\n\n**The Narrows:** the river is flowing at about 52 cubic feet per second — well "
        "under the 150 cfs limit,[4] but the bottom-up hike is open without a permit, while the "
        "top-down route needs a wilderness permit.[5]"
    )
    assert response.searched == PAUSED_QUERIES  # in order, across both calls
    assert response.usage.model_dump() == {
        "searches": 2 + 2,
        "requests": 2,
        "input_tokens": 18342 + 27905,
        "output_tokens": 211 + 344,
        "paid": {},
        "cost_usd": None,
    }
    assert not response.answer_truncated
    assert (response.outcomes, response.notes) == ([], [])
    assert response.render() == (
        f"Answer: {cited_answer(response.answer, response.citations).replace(chr(10) * 2, ' ')}"
        "\n\n"
        "1. Zion Canyon Shuttle System - Zion National Park (U.S. National Park Service) — "
        "https://www.nationalparks.example/zion/planyourvisit/shuttle.htm\n"
        "   The shuttle operates seasonally, from early March through late November. From "
        "December through February, private vehicles are permitted on the Zion Canyon Scen...\n"
        "2. 7-Day Forecast for Springdale, UT — "
        "https://forecast.weather.example/MapClick.php?lat=37.2&lon=-112.99\n"
        "   3 days ago · Sunny, with a high near 48. Light and variable wind.\n"
        "3. Springdale, UT 10-Day Weather Forecast — "
        "https://www.wxunder.example/forecast/us/ut/springdale\n"
        "   December 28, 2025 · Mostly sunny · High 48°F · Low 27°F · 0 % chance of "
        "precipitation...\n"
        "4. North Fork Virgin River near Springdale, UT - Water Data — "
        "https://www.waterdata.example/monitoring-location/09405500/\n"
        "   29 minutes ago · Most recent instantaneous value: 52 ft³/s\n"
        "5. The Narrows - Zion National Park (U.S. National Park Service) — "
        "https://www.nationalparks.example/zion/planyourvisit/thenarrows.htm\n"
        "   Hiking the Narrows from the bottom up to Big Spring does not require a permit. Hiking "
        "the Narrows from the top down requires a wilderness permit, av...\n\n"
        f"Searched for: {'; '.join(f'{chr(34)}{q}{chr(34)}' for q in PAUSED_QUERIES)}.\n\n"
        '5 results from anthropic for "Zion Narrows and shuttle this week".'
    )


@pytest.mark.vcr
@pytest.mark.default_cassette("empty_search.yaml")
def test_a_search_that_found_nothing_beside_one_that_did_is_billed_and_calm() -> None:
    response = search(fixture("empty_search"))
    assert [(r.rank, r.url, r.snippet) for r in response.results] == [
        (
            1,
            "https://www.transit.example/news/gotthard-september-2024",  # cited first
            "Full service through the Gotthard base tunnel resumes on 2 September 2024, a year "
            "after the derailment of a freight train in August 2023 damaged...",
        ),
        (2, "https://www.railnews.example/2024/09/26/alpine-tunnel-reopens", ""),  # found only
    ]
    assert response.answer is not None
    assert cited_answer(response.answer, response.citations) == (
        "Based on the search results:\n\nThe Gotthard base tunnel reopened fully to passenger "
        "trains on 2 September 2024, after a derailment in August 2023[1]\n\nI found no reports "
        "of a later closure."
    )
    assert response.searched == [
        "Gotthard base tunnel reopening September 2024",
        '"Gotthard" tunnel closure again October 2024',
    ]
    assert (response.usage.searches, response.usage.requests) == (2, 1)  # the empty one billed
    assert (response.outcomes, response.notes) == ([], [])  # no results is no failure
    assert response.render().endswith(
        'Searched for: "Gotthard base tunnel reopening September 2024"; '
        "'\"Gotthard\" tunnel closure again October 2024'.\n\n"
        '2 results from anthropic for "is the Gotthard base tunnel open".'
    )


# -- what no recording shows: scripted on loopback ----------------------------------------------


def turn(
    content: list[dict[str, Any]], stop: str = "end_turn", searches: int = 1
) -> dict[str, Any]:
    return {
        "id": "msg_01Xy",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 900,
            "output_tokens": 40,
            "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0},
        },
    }


def searched(query: str, n: int = 1) -> dict[str, Any]:
    return {
        "type": "server_tool_use",
        "id": f"srvtoolu_0{n}",
        "name": "web_search",
        "input": {"query": query},
    }


def found(url: str, n: int = 1) -> dict[str, Any]:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": f"srvtoolu_0{n}",
        "content": [
            {
                "type": "web_search_result",
                "url": url,
                "title": "A",
                "encrypted_content": "EqgfCioIARgBIiQ3",
                "page_age": None,
            }
        ],
    }


def failed(code: str, n: int = 2) -> dict[str, Any]:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": f"srvtoolu_0{n}",
        "content": {"type": "web_search_tool_result_error", "error_code": code},
    }


def cited(text: str, url: str) -> dict[str, Any]:
    return {
        "type": "text",
        "text": text,
        "citations": [
            {
                "type": "web_search_result_location",
                "url": url,
                "title": "A",
                "encrypted_index": "Eo8B",
                "cited_text": "The lift runs until 16:45. ",
            }
        ],
    }


ANSWERED = [
    searched("zermatt lifts"),
    found("https://a.org/"),
    cited("Lifts run late.", "https://a.org/"),
]


def test_scripted_bodies_are_sdk_types() -> None:
    for scripted in (
        turn(ANSWERED, stop="refusal"),
        turn(ANSWERED, stop="model_context_window_exceeded"),
        turn([*ANSWERED[:2], searched("more", 2), failed("max_uses_exceeded")]),
        turn([{"type": "text", "text": "I can't help with that."}], stop="refusal", searches=0),
    ):
        assert invented_fields(anthropic.types.Message, scripted) == []


def test_a_refusal_is_never_passed_off_as_a_complete_answer(server: ScriptedServer) -> None:
    server.script(PATH, Reply(200, turn(ANSWERED, stop="refusal")))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert [r.url for r in response.results] == ["https://a.org/"]
    assert response.answer_truncated
    assert response.notes == ["anthropic's model declined to answer"]
    assert response.searched == ["zermatt lifts"]
    rendered = response.render()
    assert "Lifts run late.[1] [… cut off: the provider stopped before finishing" in rendered
    assert "Note: anthropic's model declined to answer." in rendered


def test_a_refusal_before_any_search_is_an_error_not_ungrounded(server: ScriptedServer) -> None:
    refused = turn([{"type": "text", "text": "I can't help with that."}], "refusal", searches=0)
    server.script(PATH, Reply(200, refused))
    with pytest.raises(ProviderResponseError, match="declined to answer the query"):
        search({"arguments": {"query": "q"}}, server.url)


def test_a_full_context_window_is_cut_off(server: ScriptedServer) -> None:
    server.script(PATH, Reply(200, turn(ANSWERED, stop="model_context_window_exceeded")))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert response.answer_truncated
    assert response.notes == []
    assert "[… cut off: the provider stopped before finishing its answer]" in response.render()


def test_our_own_search_cap_beside_good_searches_is_a_note_not_a_failure(
    server: ScriptedServer,
) -> None:
    content = [*ANSWERED[:2], searched("more", 2), failed("max_uses_exceeded"), ANSWERED[2]]
    server.script(PATH, Reply(200, turn(content)))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert [r.url for r in response.results] == ["https://a.org/"]
    assert response.outcomes == []
    assert response.notes == [
        "anthropic's model stopped searching at its cap of 3 searches per call"
    ]
    assert response.searched == ["zermatt lifts", "more"]
    rendered = response.render()
    assert "Engines that failed" not in rendered
    assert (
        "Note: anthropic's model stopped searching at its cap of 3 searches per call." in rendered
    )


@pytest.mark.parametrize("code", ["too_many_requests", "unavailable", "query_too_long"])
def test_another_failed_search_beside_good_ones_stays_a_down_outcome(
    code: str, server: ScriptedServer
) -> None:
    content = [*ANSWERED[:2], searched("more", 2), failed(code), ANSWERED[2]]
    server.script(PATH, Reply(200, turn(content)))
    response = search({"arguments": {"query": "q"}}, server.url)
    assert response.outcomes == [
        EngineOutcome(engine="anthropic web_search", status="down", error=code)
    ]
    assert response.notes == []


def test_cited_text_before_a_further_search_is_kept(server: ScriptedServer) -> None:
    # Only an uncited announcement of the next search is left out of the answer.
    content = [
        searched("zermatt lifts"),
        found("https://a.org/"),
        cited("Lifts run late.", "https://a.org/"),
        {"type": "text", "text": " Let me check the trains too:"},
        searched("zermatt trains", 2),
        found("https://b.org/", 2),
        {"type": "text", "text": " Trains run every 20 minutes."},
    ]
    server.script(PATH, Reply(200, turn(content, searches=2)))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert cited_answer(response.answer or "", response.citations) == (
        "Lifts run late.[1] Let me check the trains too: Trains run every 20 minutes."
    )
    assert response.searched == ["zermatt lifts", "zermatt trains"]


def test_fuzzed_wire_bodies_raise_only_typed_errors() -> None:
    """Each field of each wire body replaced by a value of the wrong type, one at a time: an
    answer or a typed error, never an exception from deep inside a dict lookup."""
    provider = AnthropicProvider(SecretStr(VENDOR_KEYS["anthropic"]))
    for path in FIXTURES:
        spec = json.loads(path.read_text("utf-8"))
        request = SearchRequest(**spec["arguments"])
        for original in spec["responses"]:
            for where in list(paths_of(original)):
                for wrong in (None, 7, "x", [], {}):
                    broken = copy.deepcopy(original)
                    put(broken, where, wrong)
                    # a typed error is a fine answer to a broken body; nothing else is
                    with contextlib.suppress(WebSearchError):
                        provider.parse_response(httpx.Response(200, json=broken), request)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and index path in ``value``, outermost first."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from paths_of(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from paths_of(inner, (*prefix, index))


def put(body: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        body = body[step]
    body[path[-1]] = value
