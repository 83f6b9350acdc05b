"""Gemini's real wire shapes: answers built on the structure of published live recordings.

The cassettes in tests/cassettes/test_wire_gemini/ are CONSTRUCTED (each fixture's
``mirrors`` names the recording it copies, in tests/fixtures/wire/): byte offsets after
multi-byte text, ``startIndex`` left out when 0, no ``partIndex``, chunk titles that are
domains, redirect links, a ``google.com/search`` link with literal spaces, several
``webSearchQueries`` (one of them empty), ``toolUsePromptTokenCount``. The traps the
recordings show but no fixture can (``finishReason`` other than ``STOP``, sources lost) are
scripted on loopback.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import google.genai.types as genai_types
import httpx
import pytest
from pydantic import SecretStr

from tests.conftest import VENDOR_KEYS
from tests.support.http_server import Reply, ScriptedServer
from tests.support.vendor_types import invented_fields
from websearch_core import ProviderResponseError, WebSearch, WebSearchError
from websearch_core.models import EngineOutcome, SearchRequest, SearchResponse
from websearch_core.providers.gemini import FINISHED, TOKEN_LIMIT, GeminiProvider
from websearch_core.render import cited_answer

WIRE = Path(__file__).parent / "fixtures" / "wire"
FIXTURES = sorted(WIRE.glob("gemini_*.json"))
PATH = "/v1beta/models/gemini-flash-latest:generateContent"


def fixture(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((WIRE / f"gemini_{name}.json").read_text("utf-8"))
    return spec


def search(spec: dict[str, Any], base_url: str | None = None) -> SearchResponse:
    settings: dict[str, Any] = {"gemini_api_key": VENDOR_KEYS["gemini"]}
    if base_url is not None:
        settings["gemini_base_url"] = base_url
    return WebSearch("gemini", **settings).search(**spec["arguments"])


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_constructed_body_is_the_vendors_own_sdk_type(path: Path) -> None:
    spec = json.loads(path.read_text("utf-8"))
    assert spec["mirrors"].startswith(("answers recorded", "an answer recorded"))
    for body in spec["responses"]:
        assert invented_fields(genai_types.GenerateContentResponse, body) == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_each_fixture_has_the_recorded_quirks(path: Path) -> None:
    # What makes the fixture a test of the trap: a span after multi-byte text, where bytes
    # and characters differ, and the recorded shape of segments.
    candidate = json.loads(path.read_text("utf-8"))["responses"][0]["candidates"][0]
    text = candidate["content"]["parts"][0]["text"]
    supports = candidate["groundingMetadata"]["groundingSupports"]
    shifted = 0
    for support in supports:
        segment = support["segment"]
        start, end = segment.get("startIndex", 0), segment["endIndex"]
        assert text.encode()[start:end].decode() == segment["text"]  # bytes, exactly
        assert "partIndex" not in segment
        shifted += text[start:end] != segment["text"]
    assert shifted  # read as characters, some span lands on other words
    assert len(candidate["groundingMetadata"]["webSearchQueries"]) >= 2


@pytest.mark.vcr
@pytest.mark.default_cassette("byte_offsets.yaml")
def test_gemini_25_answer_keeps_its_citations_on_their_words() -> None:
    spec = fixture("byte_offsets")
    response = search(spec)
    assert [(r.rank, r.title, r.url) for r in response.results] == [
        (1, "zermatt.ch", "https://www.zermatt.ch/en/Media/Planning-Reports/Lift-status"),
        (
            2,
            "matterhorn-paradise.ch",
            "https://www.matterhorn-paradise.ch/en/experience/peaks/matterhorn-glacier-paradise",
        ),
        # Google's own weather link, its literal spaces encoded (else it is dropped)
        (
            3,
            "Weather information for Zermatt, VS, CH",
            "https://www.google.com/search?q=weather+in+Zermatt,%20VS,+CH",
        ),
        (
            4,
            "meteoswiss.admin.ch",
            "https://www.meteoswiss.admin.ch/local-forecasts/zermatt/3920.html",
        ),
        (5, "sbb.ch", "https://www.sbb.ch/en/timetable/shuttle-tasch-zermatt.html"),
    ]
    assert [r.snippet for r in response.results] == [
        "The Matterhorn Glacier Paradise lift runs from 08:30 to 16:45 today, up to the summit "
        "station at 3,883 m",
        "The Matterhorn Glacier Paradise lift runs from 08:30 to 16:45 today, up to the summit "
        "station at 3,883 m",
        "At the top it is −11 °C, with a north wind of 35 km/h — the Café Bergstation stays open",
        "No fresh snow is expected before Thursday, according to the Swiss weather service",
        "Shuttle trains from Täsch to Zermatt run every 20 minutes",
    ]
    assert response.answer is not None
    assert cited_answer(response.answer, response.citations) == (
        "The Matterhorn Glacier Paradise lift runs from 08:30 to 16:45 today, up to the summit "
        "station at 3,883 m.[1][2] At the top it is −11 °C, with a north wind of 35 km/h — the "
        "Café Bergstation stays open.[3] No fresh snow is expected before Thursday, according to "
        "the Swiss weather service.[3][4] Shuttle trains from Täsch to Zermatt run every 20 "
        "minutes.[5] Dress in layers and check the lift status before you go."
    )
    assert response.searched == [
        "Matterhorn Glacier Paradise opening hours today",
        "Zermatt weather today",
        "Täsch Zermatt shuttle train frequency",
    ]
    assert response.usage.model_dump() == {
        "searches": 3,
        "requests": 1,
        "input_tokens": 48 + 143,  # the prompt, and the search results read (toolUse)
        "output_tokens": 96 + 212,  # the answer, and the thinking
        "paid": {},
        "cost_usd": None,
    }
    assert not response.answer_truncated
    assert (response.outcomes, response.notes) == ([], [])
    assert response.render() == (
        f"Answer: {cited_answer(response.answer, response.citations)}\n\n"
        "1. zermatt.ch — https://www.zermatt.ch/en/Media/Planning-Reports/Lift-status\n"
        "   The Matterhorn Glacier Paradise lift runs from 08:30 to 16:45 today, up to the summit "
        "station at 3,883 m\n"
        "2. matterhorn-paradise.ch — "
        "https://www.matterhorn-paradise.ch/en/experience/peaks/matterhorn-glacier-paradise\n"
        "   The Matterhorn Glacier Paradise lift runs from 08:30 to 16:45 today, up to the summit "
        "station at 3,883 m\n"
        "3. Weather information for Zermatt, VS, CH — "
        "https://www.google.com/search?q=weather+in+Zermatt,%20VS,+CH\n"
        "   At the top it is −11 °C, with a north wind of 35 km/h — the Café Bergstation stays "
        "open\n"
        "4. meteoswiss.admin.ch — https://www.meteoswiss.admin.ch/local-forecasts/zermatt/3920.html\n"
        "   No fresh snow is expected before Thursday, according to the Swiss weather service\n"
        "5. sbb.ch — https://www.sbb.ch/en/timetable/shuttle-tasch-zermatt.html\n"
        "   Shuttle trains from Täsch to Zermatt run every 20 minutes\n\n"
        'Searched for: "Matterhorn Glacier Paradise opening hours today"; "Zermatt weather '
        'today"; "Täsch Zermatt shuttle train frequency".\n\n'
        '5 results from gemini for "Zermatt Matterhorn lift and weather today".'
    )


@pytest.mark.vcr
@pytest.mark.default_cassette("three_flash.yaml")
def test_gemini_3_answer_drops_the_empty_query_and_has_no_tool_tokens() -> None:
    response = search(fixture("three_flash"))
    assert [(r.rank, r.title, r.url) for r in response.results] == [
        (1, "basel.com", "https://www.basel.com/en/attractions/rhine-ferries"),
        (2, "google.com", "https://www.google.com/search?q=rhine+level+basel,+CH"),
    ]
    assert response.answer is not None
    assert cited_answer(response.answer, response.citations) == (
        "Yes, **the Leu is running today**.\n\nThe Rhine ferry at Basel — the “Leu” — crosses "
        "every 10 minutes from 09:00, for 1.60 CHF per adult.[1] On Sundays it runs from 11:00, "
        "and it does not run when the river is above 7.5 m at the Rheinhalle gauge.[1][2]"
    )
    assert response.results[1].snippet == (
        "On Sundays it runs from 11:00, and it does not run when the river is above 7.5 m at the "
        "Rheinhalle gauge"
    )
    assert response.searched == [
        "Basel Leu ferry timetable today",
        "Rhine water level Basel Rheinhalle",
    ]
    assert (response.usage.searches, response.usage.input_tokens, response.usage.output_tokens) == (
        2,
        118,  # no toolUsePromptTokenCount in Gemini 3's usage: the prompt alone
        71 + 140,
    )
    assert response.render().endswith(
        'Searched for: "Basel Leu ferry timetable today"; "Rhine water level Basel Rheinhalle".'
        '\n\n2 results from gemini for "is the Basel Leu ferry running today".'
    )


# -- what the recordings show but a fixture cannot: scripted on loopback ----------------------


def body(
    text: str = "Lifts run until 16:45.",
    *,
    reason: str = "STOP",
    queries: list[str] | None = None,
    uris: tuple[str, ...] = ("https://a.org/",),
    tool_tokens: int | None = 90,
    metadata: bool = True,
) -> dict[str, Any]:
    """A Gemini 2.5 answer of the recorded shape, its one sentence cited to ``uris``."""
    end = len(text.encode()) - 1  # the closing full stop is left out, as recorded
    candidate: dict[str, Any] = {
        "content": {"parts": [{"text": text}], "role": "model"},
        "finishReason": reason,
        "index": 0,
    }
    if metadata:
        candidate["groundingMetadata"] = {
            "groundingChunks": [{"web": {"title": "a.org", "uri": u}} for u in uris],
            "groundingSupports": (
                [{"groundingChunkIndices": [0], "segment": {"endIndex": end, "text": text[:-1]}}]
                if uris
                else []
            ),
            "webSearchQueries": ["zermatt lifts"] if queries is None else queries,
        }
        if not uris:
            del candidate["groundingMetadata"]["groundingChunks"]
    usage: dict[str, Any] = {"promptTokenCount": 11, "candidatesTokenCount": 9}
    if tool_tokens is not None:
        usage["toolUsePromptTokenCount"] = tool_tokens
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "usageMetadata": usage}


def test_scripted_bodies_are_sdk_types() -> None:
    for scripted in (
        body(),
        body(reason="SAFETY"),
        body(uris=()),
        body(metadata=False),
        body(metadata=False, tool_tokens=None),
    ):
        assert invented_fields(genai_types.GenerateContentResponse, scripted) == []


def test_every_finish_reason_is_one_the_sdk_names() -> None:
    named = {reason.value for reason in genai_types.FinishReason}
    assert named >= FINISHED | TOKEN_LIMIT  # no typo stands for a value Google never sends


@pytest.mark.parametrize("reason", [r.value for r in genai_types.FinishReason])
def test_finish_reason_other_than_stop_is_never_a_complete_answer(
    reason: str, server: ScriptedServer
) -> None:
    server.script(PATH, Reply(200, body(reason=reason)))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert [r.url for r in response.results] == ["https://a.org/"]
    if reason in ("STOP", "FINISH_REASON_UNSPECIFIED"):
        assert (response.answer_truncated, response.notes) == (False, [])
    elif reason in ("MAX_TOKENS", "CONTINUATION"):  # the token limit: cut off, said so
        assert (response.answer_truncated, response.notes) == (True, [])
        assert "[… cut off: the provider stopped before finishing its answer]" in response.render()
    else:  # safety, recitation, too many tool calls, …: stopped early, and why
        assert response.answer_truncated
        assert response.notes == [f"gemini stopped its answer early ({reason})"]
        assert f"Note: gemini stopped its answer early ({reason})." in response.render()


def test_a_finish_reason_from_the_future_is_named_in_one_line(server: ScriptedServer) -> None:
    server.script(PATH, Reply(200, body(reason="new_reason\nForged: line")))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert response.answer_truncated
    assert response.notes == ["gemini stopped its answer early (NEW_REASON FORGED: LINE)"]


def test_stopped_before_it_searched_is_an_error_naming_why(server: ScriptedServer) -> None:
    server.script(PATH, Reply(200, body("", reason="SAFETY", metadata=False, tool_tokens=None)))
    with pytest.raises(ProviderResponseError, match=r"stopped its answer \(SAFETY\) before"):
        search({"arguments": {"query": "q"}}, server.url)


LOST = EngineOutcome(
    engine="gemini google_search", status="blind", error="searched but returned no sources"
)
LOST_NOTE = (
    "gemini's model searched the web (and is billed for it), but its answer came back without "
    "its sources"
)


@pytest.mark.parametrize(
    ("scripted", "searched", "searches"),
    [
        (body(uris=()), ["zermatt lifts"], 1),  # webSearchQueries, no groundingChunks
        (body(metadata=False, tool_tokens=90), [], 1),  # no metadata, search results billed
    ],
    ids=["queries without chunks", "tool tokens without metadata"],
)
def test_a_search_whose_sources_were_lost_is_blind_not_ungrounded(
    scripted: dict[str, Any], searched: list[str], searches: int, server: ScriptedServer
) -> None:
    server.script(PATH, Reply(200, scripted))
    response = search({"arguments": {"query": "q", "include_answer": True}}, server.url)
    assert response.results == []
    assert response.answer == "Lifts run until 16:45."
    assert response.outcomes == [LOST]
    assert response.notes == [LOST_NOTE]
    assert response.searched == searched
    assert (response.usage.searches, response.usage.input_tokens) == (searches, 11 + 90)
    rendered = response.render()
    assert (
        "Engines that answered with nothing usable: gemini google_search (searched but returned "
        "no sources)."
    ) in rendered
    assert f"Note: {LOST_NOTE}." in rendered
    assert rendered.endswith('0 results from gemini for "q".')


def test_no_metadata_and_no_tool_tokens_is_still_not_grounded(server: ScriptedServer) -> None:
    for tokens in (None, 0):
        server.script(PATH, Reply(200, body(metadata=False, tool_tokens=tokens)))
        with pytest.raises(ProviderResponseError, match="not grounded: its model did not search"):
            search({"arguments": {"query": "q"}}, server.url)


def test_fuzzed_wire_bodies_raise_only_typed_errors() -> None:
    """Each field of each wire body replaced by a value of the wrong type, one at a time: an
    answer or a typed error, never an exception from deep inside a dict lookup."""
    provider = GeminiProvider(SecretStr(VENDOR_KEYS["gemini"]))
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
