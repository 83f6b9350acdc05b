"""The HTTP service in-process (Starlette's TestClient runs its lifespan), with real fake
engines and pages on loopback: the three doors' mappings, the gates, bad input, the limits.

The same service as a real uvicorn process, and real third-party clients against it, are in
tests/test_server_process.py.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import jsonschema
import pytest
from starlette.testclient import TestClient

from tests.support.fake_engines import FakeEngines, fake_engines, result_url
from tests.support.http_server import Reply, ScriptedServer
from websearch_core import (
    ConfigurationError,
    InvalidRequestError,
    SearchRequest,
    SearchResponse,
    WebSearch,
)
from websearch_core.blend import BlendCache
from websearch_core.models import EngineOutcome, SearchResult
from websearch_core.server import ServiceLimits, create_app
from websearch_core.server import gates as gates_module
from websearch_core.server.app import Admission, Overloaded
from websearch_core.server.firecrawl import parse_body
from websearch_core.server.searxng import envelope, search_arguments

KEY = "service-key-0123456789"
SEARCH = {"X-API-Key": KEY}
BEARER = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def engines() -> Iterator[FakeEngines]:
    with fake_engines() as running:
        yield running


def _session(engines: FakeEngines, **extra: Any) -> WebSearch:
    # In-process, pages convert on threads (convert_workers=0): starting worker processes
    # for each test's app would cost more than these tests; the process tests run them.
    options = {"convert_workers": 0, **extra}
    return engines.blend(blend_engines=["brave", "mojeek"], blend_cache=BlendCache(), **options)


@pytest.fixture
def client(engines: FakeEngines) -> Iterator[TestClient]:
    engines.down.clear()
    app = create_app(lambda: _session(engines, fetch_allow_private=True), api_key=KEY)
    with TestClient(app) as running:
        yield running


# -- the typed door -------------------------------------------------------------------------


def test_typed_search_returns_the_core_response(client: TestClient) -> None:
    reply = client.post("/v1/websearch", json={"query": "typed one", "count": 3}, headers=SEARCH)
    assert reply.status_code == 200
    response = SearchResponse.model_validate(reply.json())
    assert response.provider == "blend"
    assert response.results[0].url in {
        result_url("brave", "typed one", 1),
        result_url("mojeek", "typed one", 1),
    }
    assert len(response.results) == 3
    assert {o.engine: o.status for o in response.outcomes} == {
        "brave": "answered",
        "mojeek": "answered",
    }


def test_typed_search_as_text_is_what_the_core_renders(
    client: TestClient, engines: FakeEngines
) -> None:
    text = client.post(
        "/v1/websearch",
        json={"query": "rendered", "count": 4},
        headers={**SEARCH, "Accept": "text/plain"},
    ).text
    with _session(engines) as ws:
        assert text == ws.search("rendered", count=4).render()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "invalid arguments"),
        (json.dumps({"query": "x", "count": "five"}).encode(), "count"),
        (json.dumps({"query": "x", "colour": "red"}).encode(), "colour"),
        (json.dumps({"count": 3}).encode(), "query"),
        (json.dumps({"query": "x", "provider": "nonesuch"}).encode(), "nonesuch"),
        (json.dumps({"query": "x", "engines": ["google"]}).encode(), "google"),
    ],
)
def test_typed_search_refuses_bad_input_with_the_core_message(
    client: TestClient, body: bytes, words: str
) -> None:
    reply = client.post("/v1/websearch", content=body, headers=SEARCH)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert words in error["message"]
    assert error["type"] == "InvalidRequestError"
    assert error["retryable"] is False


def test_typed_search_message_is_the_python_api_message(
    client: TestClient, engines: FakeEngines
) -> None:
    reply = client.post("/v1/websearch", json={"query": "x", "count": 0}, headers=SEARCH)
    with _session(engines) as ws, pytest.raises(InvalidRequestError) as raised:
        ws.search("x", count=0)
    assert reply.status_code == 400
    assert reply.json()["error"] == {
        "type": "InvalidRequestError",
        "message": str(raised.value),
        "retryable": False,
    }


def test_typed_search_over_ten_is_capped_and_says_so(client: TestClient) -> None:
    reply = client.post("/v1/websearch", json={"query": "capped", "count": 25}, headers=SEARCH)
    assert reply.status_code == 200
    assert reply.json()["notes"] == ["count capped at 10 (asked for 25)"]
    text = client.post(
        "/v1/websearch",
        json={"query": "capped", "count": 25},
        headers={**SEARCH, "Accept": "text/plain"},
    ).text
    assert "Note: count capped at 10 (asked for 25)." in text


@pytest.mark.parametrize(
    ("accept", "text"),
    [
        ("text/plain", True),
        ("text/plain, application/json;q=0.5", True),
        ("application/json, text/plain, */*", False),  # axios's default
        ("*/*", False),
        ("", False),
        ("application/json;q=0.2, text/plain;q=oops", False),
    ],
)
def test_typed_search_answers_text_only_when_text_is_preferred(
    client: TestClient, accept: str, text: bool
) -> None:
    reply = client.post(
        "/v1/websearch", json={"query": "negotiated"}, headers={**SEARCH, "Accept": accept}
    )
    assert reply.headers["content-type"].startswith("text/plain" if text else "application/json")


def test_openapi_document_describes_what_the_endpoint_takes_and_returns(
    client: TestClient,
) -> None:
    document = client.get("/v1/websearch/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert set(schemas["TypedSearch"]["properties"]) == {
        *SearchRequest.model_fields,
        *("provider", "read", "read_tokens"),
    }
    answer = client.post("/v1/websearch", json={"query": "schema"}, headers=SEARCH).json()
    validator = jsonschema.Draft202012Validator(
        {"$ref": "#/components/schemas/SearchResponse", "components": document["components"]}
    )
    validator.validate(answer)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({**answer, "results": "not a list"})


# -- the SearXNG door -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "a", "format": "json"}, {"query": "a", "count": 10, "page": 1}),
        (
            {"q": "a", "format": "json", "pageno": "3", "time_range": "week"},
            {"query": "a", "count": 10, "page": 3, "freshness": "week"},
        ),
        (
            {"q": "a", "format": "json", "language": "en-US", "safesearch": "1"},
            {"query": "a", "count": 10, "page": 1, "locale": "en-us", "safesearch": "moderate"},
        ),
        (
            {"q": "a", "format": "json", "language": "de", "safesearch": "0"},
            {"query": "a", "count": 10, "page": 1, "locale": "de", "safesearch": "off"},
        ),
        (
            {"q": ":fr-CA a !br", "format": "json", "language": "de"},
            {"query": "a", "count": 10, "page": 1, "locale": "fr-ca", "engines": ["brave"]},
        ),
        (
            # What Open WebUI sends: empty filters mean none; theme and image_proxy only
            # change SearXNG's own web page.
            {"q": "a", "format": "json", "time_range": "", "categories": "", "language": "all",
             "theme": "simple", "image_proxy": "0", "pageno": "1"},
            {"query": "a", "count": 10, "page": 1},
        ),
        (
            {"q": "a", "format": "json", "engines": "brave, mojeek", "categories": "general"},
            {"query": "a", "count": 10, "page": 1, "engines": ["brave", "mojeek"]},
        ),
    ],
)  # fmt: skip
def test_searxng_parameters_map_to_search_arguments(
    params: dict[str, str], expected: dict[str, Any]
) -> None:
    call = search_arguments(params, ["brave", "mojeek", "ddgs/duckduckgo"])
    assert call.arguments == expected
    assert call.passed_over == []


@pytest.mark.parametrize(
    ("params", "expected", "passed_over"),
    [
        # LibreChat's default: no such engine here; as SearXNG does, every engine runs.
        ({"engines": "google,bing,duckduckgo"}, {"engines": ["ddgs/duckduckgo"]},
         [["bing", "no engine of that name here"], ["google", "no engine of that name here"]]),
        ({"engines": "arxiv,google scholar,pubmed"}, {},
         [["arxiv", "no engine of that name here"], ["google scholar",
          "no engine of that name here"], ["pubmed", "no engine of that name here"]]),
        ({"engines": "brave,nonesuch"}, {"engines": ["brave"]},
         [["nonesuch", "no engine of that name here"]]),
        # Bangs: those it can honour choose engines; the rest are taken out, and said.
        ({"q": "!ddg !mjk a"}, {"engines": ["ddgs/duckduckgo", "mojeek"]}, []),
        ({"q": "!gh a"}, {}, [["!gh", "the bang's engine or category is not served here: "
                               "searched without it"]]),
        ({"q": "!images a"}, {}, [["!images", "only general web results are served here: "
                                   "searched the web"]]),
        ({"q": "a !!w <3 !general"}, {}, [
            ["!!w", "the bang's engine or category is not served here: searched without it"],
            ["<3", "the bang's engine or category is not served here: searched without it"]]),
    ],
)  # fmt: skip
def test_searxng_passes_over_what_it_cannot_honour_and_says_so(
    params: dict[str, str], expected: dict[str, Any], passed_over: list[list[str]]
) -> None:
    call = search_arguments({"q": "a", "format": "json", **params}, ENGINES_HERE)
    assert call.arguments == {"query": "a", "count": 10, "page": 1, **expected}
    assert sorted(call.passed_over) == passed_over


ENGINES_HERE = ["brave", "mojeek", "ddgs/duckduckgo"]


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"q": "a"}, "format=json"),
        ({"q": "a", "format": "html"}, "format=html"),
        ({"q": "a", "format": "csv"}, "format=csv"),
        ({"format": "json"}, "q is missing"),
        ({"q": "  ", "format": "json"}, "q is missing"),
        ({"q": "a", "format": "json", "pageno": "11"}, "pageno"),
        ({"q": "a", "format": "json", "pageno": "two"}, "pageno"),
        ({"q": "a", "format": "json", "time_range": "decade"}, "time_range"),
        ({"q": "a", "format": "json", "safesearch": "3"}, "safesearch"),
        ({"q": "a", "format": "json", "categories": "images"}, "categories"),
        ({"q": "a", "format": "json", "language": "en-USA"}, "language"),
        ({"q": "a", "format": "json", "timeout_limit": "2"}, "timeout_limit"),
        ({"q": "!gh", "format": "json"}, "q is missing"),  # nothing left but a bang
    ],
)
def test_searxng_parameters_that_cannot_be_honoured_are_refused(
    params: dict[str, str], words: str
) -> None:
    with pytest.raises(InvalidRequestError, match=words):
        search_arguments(params, ENGINES_HERE)


def test_searxng_envelope_has_every_field_clients_read() -> None:
    response = SearchResponse(
        query="q",
        provider="blend",
        sent_query="q",
        results=[
            SearchResult(rank=1, title="A", url="https://a.example/x;p?y=1#f", snippet="s",
                         engines=("brave", "mojeek"), positions=(1, 2), score=0.03,
                         published="2026-05-01T10:00:00Z"),
            SearchResult(rank=2, title="B", url="https://b.example/", published="last week"),
        ],
        outcomes=[
            EngineOutcome(engine="zeta", status="down", error="timeout"),
            EngineOutcome(engine="alpha", status="blind", error="no results"),
            EngineOutcome(engine="brave", status="answered", results=2),
        ],
    )  # fmt: skip
    body = envelope(response)
    assert set(body) == {
        "query", "number_of_results", "results", "answers", "corrections", "infoboxes",
        "suggestions", "unresponsive_engines",
    }  # fmt: skip
    first, second = body["results"]
    assert first["engines"] == ["brave", "mojeek"]
    assert first["positions"] == [1, 2]
    assert first["parsed_url"] == ["https", "a.example", "/x", "p", "y=1", "f"]
    assert first["publishedDate"] == "2026-05-01T10:00:00+00:00"
    assert second["publishedDate"] is None  # not a date a client could parse
    assert second["engines"] == ["blend"]
    assert first["category"] == "general"
    assert first["score"] > second["score"]
    assert body["unresponsive_engines"] == [["alpha", "no results"], ["zeta", "timeout"]]


def test_searxng_door_over_get_and_form_post(client: TestClient) -> None:
    got = client.get(
        "/v1/websearch/search", params={"q": "door", "format": "json"}, headers=SEARCH
    ).json()
    assert got["query"] == "door"
    assert {r["url"] for r in got["results"]} >= {result_url("brave", "door", 1)}
    assert got["unresponsive_engines"] == []
    # A form body wins over the query string, as in SearXNG.
    posted = client.post(
        "/v1/websearch/search?q=ignored&format=json",
        data={"q": "from the form"},
        headers=SEARCH,
    ).json()
    assert posted["query"] == "from the form"
    refused = client.post(
        "/v1/websearch/search?format=json", json={"q": "json body"}, headers=SEARCH
    )
    assert refused.status_code == 400
    assert "form" in refused.json()["error"]["message"]


def test_searxng_door_names_the_engines_that_failed(
    client: TestClient, engines: FakeEngines
) -> None:
    engines.down.add("mojeek")
    body = client.get(
        "/v1/websearch/search", params={"q": "half down", "format": "json"}, headers=SEARCH
    ).json()
    assert body["unresponsive_engines"] == [["mojeek", "HTTP 500"]]
    assert body["results"]
    engines.down.add("brave")
    body = client.get(
        "/v1/websearch/search", params={"q": "all down", "format": "json"}, headers=SEARCH
    )
    assert body.status_code == 200  # SearXNG's answer: nothing, and why
    assert body.json()["results"] == []
    assert body.json()["unresponsive_engines"] == [["brave", "HTTP 500"], ["mojeek", "HTTP 500"]]


def test_searxng_door_engines_choose_among_the_blend(client: TestClient) -> None:
    body = client.get(
        "/v1/websearch/search",
        params={"q": "only brave", "format": "json", "engines": "brave"},
        headers=SEARCH,
    ).json()
    assert {e for r in body["results"] for e in r["engines"]} == {"brave"}
    # A name it does not have is passed over, as SearXNG does: here none is left, so every
    # engine runs, and the name is listed.
    unknown = client.get(
        "/v1/websearch/search",
        params={"q": "x", "format": "json", "engines": "google"},
        headers=SEARCH,
    )
    assert unknown.status_code == 200
    assert {e for r in unknown.json()["results"] for e in r["engines"]} == {"brave", "mojeek"}
    assert unknown.json()["unresponsive_engines"] == [["google", "no engine of that name here"]]
    # The typed door (the Python API): a list naming no engine here is refused, saying which.
    typed = client.post(
        "/v1/websearch", json={"query": "x", "provider": "blend", "engines": ["google"]},
        headers=SEARCH,
    )  # fmt: skip
    assert typed.status_code == 400
    assert "choose among brave, mojeek" in typed.json()["error"]["message"]
    some = client.post(
        "/v1/websearch", json={"query": "x", "engines": ["google", "mojeek"]}, headers=SEARCH
    ).json()
    assert some["skipped"] == {"google": "no engine of that name here"}
    assert {o["engine"] for o in some["outcomes"]} == {"mojeek"}


def test_searxng_door_lists_engines_that_sat_out_for_an_option(
    engines: FakeEngines, server: ScriptedServer
) -> None:
    # A SearXNG upstream has no country filter: with mojeek it sits out a strict country
    # (listed), while a locale is a hint it follows as far as it can (it answers).
    server.script("/search", Reply(200, {"results": [{"url": "https://up.example/", "title":
                  "Up", "content": "c"}], "suggestions": ["up one", "up two"]}))  # fmt: skip
    ws = WebSearch("blend", searxng_url=server.url, mojeek_api_key="fake-mojeek-key",
                   mojeek_base_url=f"{engines.url}/mojeek", blend_engines=["searxng", "mojeek"],
                   convert_workers=0)  # fmt: skip
    app = create_app(lambda: ws, api_key=KEY)
    with TestClient(app) as client:
        hinted = client.get(
            "/v1/websearch/search",
            headers=SEARCH,
            params={"q": "loc", "format": "json", "language": "en-US"},
        ).json()
        strict = client.post("/v1/websearch", headers=SEARCH,
                             json={"query": "loc", "country": "us"}).json()  # fmt: skip
    assert hinted["unresponsive_engines"] == []
    assert {e for r in hinted["results"] for e in r["engines"]} == {"searxng", "mojeek"}
    assert hinted["suggestions"] == ["up one", "up two"]  # the upstream's, passed on
    assert strict["skipped"] == {"searxng": "cannot honour country"}
    sent = [request.query for request in server.seen if request.path == "/search"]
    assert sent[0]["language"] == "en"  # the locale's language, all SearXNG takes here


# -- the Firecrawl door ---------------------------------------------------------------------


def test_firecrawl_body_reads_v1_and_v2_formats() -> None:
    v1 = parse_body(b'{"url": "example.org", "formats": ["markdown", "rawHtml"]}',
                    default_timeout_ms=30_000)  # fmt: skip
    assert v1.url == "http://example.org"
    assert v1.arguments["formats"] == ["markdown", "raw_html"]
    assert v1.arguments["deadline_s"] == 30.0
    v2 = parse_body(
        json.dumps(
            {"url": "https://example.org/", "formats": [{"type": "html"}, "links"],
             "onlyMainContent": False, "includeTags": ["article"], "timeout": 5000,
             "origin": "python-sdk@4.55.0", "maxAge": 14400000, "waitFor": 500}
        ).encode(),
        default_timeout_ms=None,
    )  # fmt: skip
    assert v2.arguments == {
        "formats": ["html", "links"],
        "main_content": False,
        "include_tags": ["article"],
        "exclude_tags": [],
        "deadline_s": 5.0,
    }
    huge = parse_body(b'{"url": "https://a.example/", "timeout": 1' + b"0" * 400 + b"}",
                      default_timeout_ms=None)  # fmt: skip
    assert huge.arguments["deadline_s"] == 3600.0  # the fetch deadline stays the ceiling
    assert v2.warning is not None
    assert "waitFor" in v2.warning


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"[1, 2]", "JSON object"),
        (b"\xff\xfe", "not JSON"),
        (b'{"url": 5}', "url is missing"),
        (b'{"url": "https://a.example/", "formats": ["screenshot"]}', "screenshot"),
        (b'{"url": "https://a.example/", "formats": [{"type": "json"}]}', "'json'"),
        (b'{"url": "https://a.example/", "formats": []}', "non-empty"),
        (b'{"url": "https://a.example/", "colour": 1}', "colour"),
        (b'{"url": "https://a.example/", "actions": [{"type": "click"}]}', "actions"),
        (b'{"url": "https://a.example/", "mobile": true}', "mobile"),
        (b'{"url": "https://a.example/", "timeout": -1}', "timeout"),
        (b'{"url": "https://a.example/", "timeout": true}', "timeout"),
        (b'{"url": "https://a.example/", "onlyMainContent": "yes"}', "onlyMainContent"),
        (b'{"url": "https://a.example/", "includeTags": "article"}', "includeTags"),
    ],
)
def test_firecrawl_body_refusals_say_what_to_fix(body: bytes, words: str) -> None:
    with pytest.raises(InvalidRequestError, match=words):
        parse_body(body, default_timeout_ms=None)


def test_scrape_returns_each_format(client: TestClient, engines: FakeEngines) -> None:
    url = f"{engines.url}/pages/fmt"
    reply = client.post(
        "/v2/scrape",
        json={"url": url, "formats": ["markdown", "html", {"type": "rawHtml"}, "links"]},
        headers=BEARER,
    ).json()
    assert reply["success"] is True
    data = reply["data"]
    assert "This page is called fmt" in data["markdown"]
    assert "Footer words" not in data["markdown"]
    assert "Footer words" not in data["html"]
    assert data["rawHtml"] == FakeEngines.page("/pages/fmt").decode()
    assert "<script" not in data["html"]
    assert "This page is called fmt" in data["html"]
    assert data["links"] == [f"{engines.url}/pages/menu", f"{engines.url}/pages/next"]
    assert data["metadata"] == {
        "title": "Page fmt",
        "description": "about fmt",
        "language": "en",
        "sourceURL": url,
        "url": url,
        "statusCode": 200,
        "contentType": "text/html",
    }


def test_scrape_whole_page_and_tag_filters(client: TestClient, engines: FakeEngines) -> None:
    url = f"{engines.url}/pages/tags"
    whole = client.post(
        "/v1/scrape", json={"url": url, "onlyMainContent": False}, headers=BEARER
    ).json()["data"]["markdown"]
    assert "Footer words" in whole
    excluded = client.post(
        "/v1/scrape", json={"url": url, "excludeTags": [".aside", "footer"],
                            "onlyMainContent": False}, headers=BEARER
    ).json()["data"]["markdown"]  # fmt: skip
    assert "Aside for tags" not in excluded
    assert "Footer words" not in excluded
    assert "This page is called tags" in excluded
    included = client.post(
        "/v1/scrape", json={"url": url, "includeTags": ["footer"], "onlyMainContent": False},
        headers=BEARER,
    ).json()["data"]["markdown"]  # fmt: skip
    assert included.strip() == "Footer words"
    bad = client.post("/v1/scrape", json={"url": url, "includeTags": ["p >"]}, headers=BEARER)
    assert bad.status_code == 200
    assert bad.json()["success"] is False
    assert "CSS selector" in bad.json()["error"]


def test_scrape_target_404_is_a_success_with_its_status(
    client: TestClient, server: ScriptedServer
) -> None:
    server.script("/gone", Reply(404, "<html><title>Gone</title><p>no such page</p></html>",
                                 headers={"Content-Type": "text/html"}))  # fmt: skip
    reply = client.post("/v2/scrape", json={"url": server.url + "/gone"}, headers=BEARER).json()
    assert reply["success"] is True
    assert reply["data"]["metadata"]["statusCode"] == 404
    assert reply["data"]["metadata"]["error"] == "Not Found"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not JSON"),
        (b'{"url": ["https://a.example/"]}', "url is missing"),
        (b'{"url": "https://a.example/", "formats": ["summary"]}', "summary"),
        (b"{" + b" " * (2 << 20) + b"}", "over 1,048,576 bytes"),
    ],
)
def test_scrape_bad_body_is_200_with_success_false(
    client: TestClient, body: bytes, words: str
) -> None:
    reply = client.post("/v2/scrape", content=body, headers=BEARER)
    assert reply.status_code == 200
    assert reply.json()["success"] is False
    assert reply.json()["code"] == "BAD_REQUEST"
    assert words in reply.json()["error"]


def test_scrape_refused_url_under_the_default_policy(engines: FakeEngines) -> None:
    app = create_app(lambda: _session(engines), api_key=KEY)
    with TestClient(app) as client:
        reply = client.post("/v2/scrape", json={"url": f"{engines.url}/pages/x"}, headers=BEARER)
    assert reply.status_code == 403
    assert reply.json()["success"] is False
    assert reply.json()["code"] == "URL_REFUSED"


def test_scrape_timeout_is_a_firecrawl_timeout(client: TestClient, server: ScriptedServer) -> None:
    server.script("/slow", Reply(200, "late", delay_s=3))
    reply = client.post(
        "/v1/scrape", json={"url": server.url + "/slow", "timeout": 300}, headers=BEARER
    )
    assert reply.status_code == 408
    assert reply.json()["code"] == "SCRAPE_TIMEOUT"
    assert reply.json()["success"] is False


def test_firecrawl_search_runs_the_blend_and_names_an_engine_that_failed(
    client: TestClient, engines: FakeEngines
) -> None:
    engines.down.add("mojeek")
    reply = client.post("/v2/search", json={"query": "blended", "limit": 2}, headers=BEARER)
    assert reply.status_code == 200
    assert [r["url"] for r in reply.json()["data"]["web"]] == [
        result_url("brave", "blended", 1),
        result_url("brave", "blended", 2),
    ]
    assert reply.json()["warning"] == "engines that failed: mojeek (HTTP 500)"
    engines.down.add("brave")
    down = client.post("/v1/search", json={"query": "all down"}, headers=BEARER)
    typed = client.post("/v1/websearch", json={"query": "all down"}, headers=SEARCH)
    assert down.status_code == 502
    assert down.json() == {
        "success": False,
        "code": "SEARCH_FAILED",
        "error": typed.json()["error"]["message"],
    }


# -- gates ----------------------------------------------------------------------------------

ROUTES = [
    ("POST", "/v1/websearch", {"json": {"query": "gated"}}),
    ("GET", "/v1/websearch/search?q=gated&format=json", {}),
    ("POST", "/v1/websearch/search?q=gated&format=json", {}),
    ("POST", "/v1/scrape", {"json": {"url": "https://a.example/"}}),
    ("POST", "/v2/scrape", {"json": {"url": "https://a.example/"}}),
    ("POST", "/v1/websearch/scrape", {"json": {"url": "https://a.example/"}}),
    ("POST", "/v1/search", {"json": {"query": "gated"}}),
    ("POST", "/v2/search", {"json": {"query": "gated"}}),
]
#: Firecrawl's doors: their clients read ``{"success": false, "error": …}``.
FIRECRAWL = ("/v1/scrape", "/v2/scrape", "/v1/websearch/scrape", "/v1/search", "/v2/search")


@pytest.mark.parametrize(("method", "path", "extra"), ROUTES)
def test_no_key_configured_is_503_on_every_route(
    engines: FakeEngines, method: str, path: str, extra: dict[str, Any]
) -> None:
    with TestClient(create_app(lambda: _session(engines), environ={})) as client:
        reply = client.request(method, path, headers=BEARER, **extra)
    assert reply.status_code == 503
    assert "WEBSEARCH_API_KEY" in reply.text
    assert KEY not in reply.text
    # Not a busy service: retrying will not help until the operator sets the key.
    assert "retry-after" not in reply.headers


@pytest.mark.parametrize(("method", "path", "extra"), ROUTES)
@pytest.mark.parametrize(
    "headers",
    [{}, {"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"},
     {"Authorization": f"Basic {KEY}"}, {"Authorization": "Bearer "},
     {"X-API-Key": KEY[:-1]}, {"X-API-Key": KEY + "0"}],
)  # fmt: skip
def test_missing_or_wrong_key_is_401(
    client: TestClient, method: str, path: str, extra: dict[str, Any], headers: dict[str, str]
) -> None:
    reply = client.request(method, path, headers=headers, **extra)
    assert reply.status_code == 401
    assert KEY not in reply.text
    if path in FIRECRAWL:
        assert reply.json()["success"] is False


def test_scrape_takes_the_key_only_as_a_bearer(client: TestClient) -> None:
    reply = client.post("/v2/scrape", json={"url": "https://a.example/"}, headers=SEARCH)
    assert reply.status_code == 401
    assert "Bearer" in reply.json()["error"]
    searched = client.post("/v1/websearch", json={"query": "bearer search"}, headers=BEARER)
    assert searched.status_code == 200


def test_keys_are_compared_in_constant_time(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = gates_module.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(gates_module.hmac, "compare_digest", spy)
    for given in ("x", KEY[:5], KEY + "longer", KEY):
        client.post("/v1/websearch", json={"query": "timing"}, headers={"X-API-Key": given})
    # Every key, however long or whatever it starts with, reached the one comparison, of
    # digests of equal length (nothing about the key's length or prefix shows in the time).
    assert len(compared) == 4
    assert {len(a) for a, _ in compared} == {len(b) for _, b in compared} == {32}
    assert compared[-1][0] == hashlib.sha256(KEY.encode()).digest()


def test_a_principal_hook_admits_without_the_key(engines: FakeEngines) -> None:
    app = create_app(lambda: _session(engines), environ={})

    async def principal(request: Any) -> str | None:
        return "alice" if request.headers.get("x-user") == "alice" else None

    app.state.principal = principal
    with TestClient(app) as client:
        admitted = client.post("/v1/websearch", json={"query": "who"}, headers={"X-User": "alice"})
        refused = client.post("/v1/websearch", json={"query": "who"}, headers={"X-User": "bob"})
    assert admitted.status_code == 200
    assert refused.status_code == 503  # no key configured, and no principal vouched for

    def broken(request: Any) -> str:
        raise RuntimeError("the directory is down")

    app = create_app(lambda: _session(engines), api_key=KEY, principal=broken)
    with TestClient(app) as client:
        assert client.post("/v1/websearch", json={"query": "x"}).status_code == 401
        assert client.post("/v1/websearch", json={"query": "x"}, headers=SEARCH).status_code == 200


def test_gate_repr_never_shows_the_key() -> None:
    assert KEY not in repr(gates_module.Gate(KEY))
    assert hashlib.sha256(KEY.encode()).hexdigest() not in repr(gates_module.Gate(KEY))


# -- logs, health, limits -------------------------------------------------------------------


def test_one_log_line_per_request_without_key_or_query(
    client: TestClient, engines: FakeEngines, caplog: pytest.LogCaptureFixture
) -> None:
    engines.down.add("mojeek")
    with caplog.at_level("DEBUG"):
        client.get(
            "/v1/websearch/search",
            params={"q": "secretive words", "format": "json"},
            headers=SEARCH,
        )
        client.post("/v2/scrape", json={"url": f"{engines.url}/pages/logged"}, headers=BEARER)
        client.post("/v1/websearch", json={"query": "y"}, headers={"X-API-Key": "wrong-key"})
    lines = [
        json.loads(r.getMessage()) for r in caplog.records if r.name == "websearch_core.server"
    ]
    assert [line["route"] for line in lines] == ["/v1/websearch/search", "/v2/scrape",
                                                 "/v1/websearch"]  # fmt: skip
    search, scraped, refused = lines
    assert search["engines"] == {"brave": "answered", "mojeek": "HTTP 500"}
    assert search["cents"] == 1.0
    assert search["status"] == 200
    assert scraped["target_status"] == 200
    assert "markdown" not in scraped
    assert refused["status"] == 401
    everything = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert KEY not in everything
    assert "wrong-key" not in everything
    assert "secretive words" not in "".join(r.getMessage() for r in caplog.records
                                             if r.name == "websearch_core.server")  # fmt: skip


def test_a_long_request_line_counts_toward_the_head_limit(client: TestClient) -> None:
    reply = client.get(
        "/v1/websearch/search", params={"q": "a" * 20_000, "format": "json"}, headers=SEARCH
    )
    assert reply.status_code == 431
    assert reply.json()["error"]["type"] == "ServiceRefusal"


def test_healthz_is_open(client: TestClient) -> None:
    reply = client.get("/healthz")
    assert reply.status_code == 200
    assert reply.json() == {
        "status": "ok",
        "engines": ["brave", "mojeek"],
        "lanes": {"search": {"running": 0, "waiting": 0}, "scrape": {"running": 0, "waiting": 0}},
    }


def test_healthz_says_the_service_cannot_serve_without_a_key(engines: FakeEngines) -> None:
    with TestClient(create_app(lambda: _session(engines), environ={})) as keyless:
        reply = keyless.get("/healthz")
    assert reply.status_code == 503
    assert reply.json()["status"] == "unavailable"
    assert "WEBSEARCH_API_KEY is not set" in reply.json()["reason"]


async def test_admission_bounds_running_and_waiting_requests() -> None:
    admission = Admission(ServiceLimits(max_inflight=1, max_queued=1, queue_timeout_s=60))
    async with admission.place():
        refused_at_once = False
        async with anyio.create_task_group() as tasks:

            async def waiter() -> None:
                async with admission.place():
                    pass

            tasks.start_soon(waiter)  # one runs, this one waits
            await anyio.wait_all_tasks_blocked()
            assert admission.waiting == 1
            # One more, with the queue full, is refused without waiting (the queue's own
            # timeout is a minute: waiting for it would end this test with a TimeoutError).
            with anyio.fail_after(10), pytest.raises(Overloaded):
                async with admission.place():
                    pass
            refused_at_once = True
            tasks.cancel_scope.cancel()
        assert refused_at_once
    assert admission.waiting == 0
    async with admission.place():  # the place is free again
        pass


async def test_a_request_that_waits_too_long_is_refused() -> None:
    admission = Admission(ServiceLimits(max_inflight=1, max_queued=5, queue_timeout_s=0.2))
    async with admission.place():
        with pytest.raises(Overloaded):
            async with admission.place():
                pass
    assert admission.waiting == 0


def test_a_flood_beyond_the_queue_is_answered_503(
    engines: FakeEngines, monkeypatch: pytest.MonkeyPatch
) -> None:
    engines.delay_s["brave"] = 0.5
    limits = ServiceLimits(max_inflight=1, max_queued=1, queue_timeout_s=5)
    app = create_app(lambda: _session(engines), api_key=KEY, limits=limits)
    statuses: list[int] = []
    try:
        with TestClient(app) as client:

            def one(i: int) -> None:
                reply = client.post("/v1/websearch", json={"query": f"flood {i}"}, headers=SEARCH)
                statuses.append(reply.status_code)

            threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        engines.delay_s.clear()
    # The one running and the one waiting are answered; the three beyond the queue are not.
    assert sorted(statuses) == [200, 200, 503, 503, 503]


def test_slow_scrapes_never_hold_the_places_searches_need(
    engines: FakeEngines, server: ScriptedServer
) -> None:
    # One place per lane and no queue: a scrape of a page that takes 2 s holds the scrape
    # lane's place; a search meanwhile is answered, and a second scrape is refused at once.
    server.script("/slow", Reply(200, "<p>slow</p>", {"Content-Type": "text/html"}, delay_s=2))
    limits = ServiceLimits(max_inflight=1, max_inflight_scrapes=1, max_queued=0)
    app = create_app(
        lambda: _session(engines, fetch_allow_private=True), api_key=KEY, limits=limits
    )
    with TestClient(app) as client:
        slow = threading.Thread(
            target=client.post, args=("/v2/scrape",), kwargs={"json": {"url": f"{server.url}/slow"},
                                                             "headers": BEARER})  # fmt: skip
        slow.start()
        while not server.seen:  # the slow scrape is in flight, holding its lane's place
            threading.Event().wait(0.01)
        search = client.post("/v1/websearch", json={"query": "lanes"}, headers=SEARCH)
        second = client.post("/v2/scrape", json={"url": f"{server.url}/slow"}, headers=BEARER)
        slow.join()
    assert search.status_code == 200
    assert second.status_code == 503
    assert second.json() == {
        "success": False,
        "error": "the service is at capacity: retry in a moment",
    }


def test_service_limits_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="max_inflight"):
        ServiceLimits(max_inflight=0)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/nope", 404),
        ("PUT", "/v1/websearch", 405),
        ("GET", "/v1/websearch", 405),
        ("DELETE", "/v2/scrape", 405),
        ("GET", "/v2/search", 405),
    ],
)
def test_unknown_routes_and_methods_answer_in_json(
    client: TestClient, method: str, path: str, status: int
) -> None:
    reply = client.request(method, path, headers=BEARER)
    assert reply.status_code == status
    body = reply.json()
    if path in FIRECRAWL:
        assert body["success"] is False
    else:
        assert body["error"]["type"] == "ServiceRefusal"
    if status == 405:
        assert "allow" in reply.headers


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"query": "x", "engines": [{}]}, "each engine is a name"),
        ({"query": "x", "engines": [["brave"]]}, "each engine is a name"),
    ],
)
def test_engines_of_the_wrong_type_are_a_bad_request(
    client: TestClient, arguments: dict[str, Any], words: str
) -> None:
    reply = client.post("/v1/websearch", json=arguments, headers=SEARCH)
    assert reply.status_code == 400
    assert words in reply.json()["error"]["message"]


def test_a_huge_pageno_is_a_bad_request(client: TestClient) -> None:
    reply = client.get(
        "/v1/websearch/search", params={"q": "x", "format": "json", "pageno": "1" * 5000},
        headers=SEARCH,
    )  # fmt: skip
    assert reply.status_code == 400
    assert "pageno must be a whole number from 1 to 10" in reply.json()["error"]["message"]


def test_a_bearer_may_be_separated_by_any_whitespace(client: TestClient) -> None:
    reply = client.post(
        "/v1/websearch", json={"query": "tabbed"}, headers={"Authorization": f"Bearer\t{KEY}"}
    )
    assert reply.status_code == 200
