"""Issue 31, the service part: the typed door's search that reads (``read``/``read_tokens``),
and Firecrawl's search (``POST /v1/search``, ``/v2/search``) beside its scrape.

Everything is on loopback: a SearXNG-shaped engine whose results point at pages served by the
same scripted server (two articles, a 404, a closed port), the service in-process (Starlette's
TestClient) for the mappings, the gates and bad input, and as a real ``websearch serve``
process for firecrawl-py, unchanged (firecrawl-js is in tests/test_js_clients.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.support.fake_engines import FakeEngines
from tests.support.http_server import Reply, ScriptedServer, scripted_server
from tests.support.service import Service, free_port, run_service
from websearch_core import InvalidRequestError, WebSearch
from websearch_core.server import create_app
from websearch_core.server.firecrawl import FORMATS, parse_search

KEY = "search-read-key-5e4d3c2b1a09"
SEARCH = {"X-API-Key": KEY}
BEARER = {"Authorization": f"Bearer {KEY}"}
HTML = {"Content-Type": "text/html; charset=utf-8"}
#: The words every result's page is about (FakeEngines.page: "This page is called <name>").
QUERY = "page called prose"


def _results(server: ScriptedServer, closed_port: int) -> list[dict[str, str]]:
    return [
        {"title": "Alpha", "url": f"{server.url}/pages/alpha", "content": "about alpha"},
        {"title": "Gone", "url": f"{server.url}/gone", "content": "a dead link"},
        {"title": "Beta", "url": f"{server.url}/pages/beta", "content": "about beta"},
        {"title": "Closed", "url": f"http://127.0.0.1:{closed_port}/x", "content": "nobody"},
    ]


def _script_web(server: ScriptedServer) -> list[dict[str, str]]:
    """The engine and its pages on ``server``; the results it answers every query with."""
    results = _results(server, free_port())  # nothing listens there: connection refused
    server.script("/search", Reply(200, {"results": results}))
    for name in ("alpha", "beta"):
        server.script(f"/pages/{name}", Reply(200, FakeEngines.page(f"/pages/{name}"), HTML))
    server.script("/gone", Reply(404, "<html><title>Gone</title><p>no such page</p></html>", HTML))
    server.script("/slow", Reply(200, FakeEngines.page("/pages/slow"), HTML, delay_s=3))
    return results


def _session(server: ScriptedServer, **extra: Any) -> WebSearch:
    options = {"convert_workers": 0, "fetch_allow_private": True, **extra}
    return WebSearch("searxng", searxng_url=server.url, **options)


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[ScriptedServer, list[dict[str, str]]]]:
    with scripted_server() as server:
        yield server, _script_web(server)


@pytest.fixture(scope="module")
def client(web: tuple[ScriptedServer, list[dict[str, str]]]) -> Iterator[TestClient]:
    server, _ = web
    with TestClient(create_app(lambda: _session(server), api_key=KEY)) as running:
        yield running


def _by_title(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["title"]: item for item in items}


# -- the typed door: a search that reads ------------------------------------------------------


def test_typed_search_with_read_returns_passages_and_says_what_it_could_not_read(
    client: TestClient, web: tuple[ScriptedServer, list[dict[str, str]]]
) -> None:
    server, results = web
    reply = client.post("/v1/websearch", json={"query": QUERY, "read": 2}, headers=SEARCH)
    assert reply.status_code == 200
    answer = reply.json()
    assert (answer["read"], answer["read_tokens"]) == (2, 1500)
    alpha, gone, beta, _ = answer["results"]
    assert alpha["url"] == results[0]["url"]
    assert alpha["passages"]
    assert all("This page is called alpha" in p["text"] for p in alpha["passages"][:1])
    assert all(p["offset"] >= 0 and p["score"] > 0 for p in alpha["passages"])
    assert gone["passages"] == []
    assert gone["read_error"] == "HTTP 404 Not Found"
    assert beta["passages"] == []  # not among the top 2: not read
    assert beta["read_error"] is None
    document = client.get("/v1/websearch/openapi.json").json()
    validator = jsonschema.Draft202012Validator(
        {"$ref": "#/components/schemas/SearchResponse", "components": document["components"]}
    )
    validator.validate(answer)
    text = client.post(
        "/v1/websearch",
        json={"query": QUERY, "read": 2, "read_tokens": 900},
        headers={**SEARCH, "Accept": "text/plain"},
    ).text
    with _session(server) as ws:
        assert text == ws.search(QUERY, read=2, read_tokens=900).render()
    assert "--- begin fetched content: passages of" in text
    assert "Not read: HTTP 404 Not Found" in text


@pytest.mark.parametrize(
    ("field", "value"),
    [("read", 9), ("read", -1), ("read", "two"), ("read", True), ("read", 1.5), ("read", [2]),
     ("read_tokens", 10), ("read_tokens", "many"), ("read_tokens", 10**30),
     ("read_tokens", False), ("read_tokens", {"n": 1})],
)  # fmt: skip
def test_typed_search_refuses_bad_read_values_in_the_python_api_words(
    client: TestClient, web: tuple[ScriptedServer, list[dict[str, str]]], field: str, value: Any
) -> None:
    server, _ = web
    reply = client.post("/v1/websearch", json={"query": "x", field: value}, headers=SEARCH)
    with _session(server) as ws, pytest.raises(InvalidRequestError) as raised:
        ws.search("x", **{field: value})
    assert reply.status_code == 400
    assert reply.json() == {
        "error": {"type": "InvalidRequestError", "message": str(raised.value), "retryable": False}
    }


def test_the_openapi_document_says_what_read_takes(client: TestClient) -> None:
    schema = client.get("/v1/websearch/openapi.json").json()["components"]["schemas"]
    fields = schema["TypedSearch"]["properties"]
    assert (fields["read"]["minimum"], fields["read"]["maximum"]) == (0, 5)
    assert (fields["read_tokens"]["minimum"], fields["read_tokens"]["maximum"]) == (200, 20_000)
    assert "passages" in schema["SearchResult"]["properties"]
    assert "read_error" in schema["SearchResult"]["properties"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.text(st.characters(categories=["Cs", "Ll", "Nd"]), max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)  # fmt: skip


@given(read=_JSON, read_tokens=_JSON)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_read_value_is_answered_or_refused_typed(
    client: TestClient, read: Any, read_tokens: Any
) -> None:
    body = {"query": QUERY, "read": read, "read_tokens": read_tokens}
    reply = client.post("/v1/websearch", content=json.dumps(body).encode(), headers=SEARCH)
    assert reply.status_code in (200, 400), reply.text
    if reply.status_code == 400:
        assert reply.json()["error"]["type"] == "InvalidRequestError"
    else:
        assert reply.json()["read"] == (read or 0)  # a whole number from 0 to 5 (or none)


# -- Firecrawl's search: shapes --------------------------------------------------------------


def test_search_without_formats_is_the_results_alone(
    client: TestClient, web: tuple[ScriptedServer, list[dict[str, str]]]
) -> None:
    _, results = web
    v1 = client.post("/v1/search", json={"query": QUERY, "limit": 3}, headers=BEARER)
    v2 = client.post("/v2/search", json={"query": QUERY, "limit": 3}, headers=BEARER)
    expected = [
        {"url": r["url"], "title": r["title"], "description": r["content"]} for r in results[:3]
    ]
    assert v1.status_code == v2.status_code == 200
    assert v1.json() == {"success": True, "data": expected}
    positioned = [{**item, "position": rank} for rank, item in enumerate(expected, 1)]
    assert v2.json() == {"success": True, "data": {"web": positioned}}


def test_search_with_formats_scrapes_each_result_and_keeps_the_failures_in_place(
    client: TestClient, web: tuple[ScriptedServer, list[dict[str, str]]]
) -> None:
    _, results = web
    body = {"query": QUERY, "scrapeOptions": {"formats": ["markdown", "html", "links"]}}
    web_results = client.post("/v2/search", json=body, headers=BEARER).json()["data"]["web"]
    got = _by_title(web_results)
    assert [item["position"] for item in web_results] == [1, 2, 3, 4]
    for name in ("Alpha", "Beta"):
        item = got[name]
        assert f"This page is called {name.lower()}" in item["markdown"]
        assert "Footer words" not in item["markdown"]  # onlyMainContent, Firecrawl's default
        assert f"This page is called {name.lower()}" in item["html"]
        assert item["links"]
        assert item["metadata"]["statusCode"] == 200
        assert item["metadata"]["sourceURL"] == item["url"]
        assert item["description"] == f"about {name.lower()}"
    # A target's 404 is a page, as in a scrape: its status and reason in the metadata.
    assert got["Gone"]["metadata"]["statusCode"] == 404
    assert got["Gone"]["metadata"]["error"] == "Not Found"
    assert got["Gone"]["markdown"] == "no such page"
    # A page that could not be fetched keeps its result, and says why in a scrape's words.
    closed = got["Closed"]
    assert set(closed) == {"url", "title", "description", "position", "metadata"}
    scraped = client.post("/v2/scrape", json={"url": closed["url"]}, headers=BEARER).json()
    assert scraped["success"] is False
    assert closed["metadata"] == {
        "sourceURL": results[3]["url"],
        "statusCode": 0,
        "error": scraped["error"],
    }


def test_v1_search_scrapes_into_its_list_of_documents(client: TestClient) -> None:
    body = {"query": QUERY, "limit": 2, "lang": "en", "country": "us", "timeout": 30000,
            "scrapeOptions": {"formats": ["markdown"], "timeout": 30000}}  # fmt: skip
    reply = client.post("/v1/search", json=body, headers=BEARER).json()
    assert reply["success"] is True
    alpha, gone = reply["data"]
    assert "This page is called alpha" in alpha["markdown"]
    assert "position" not in alpha  # v1's documents have none
    assert set(alpha) == {"url", "title", "description", "markdown", "metadata"}
    assert gone["metadata"]["statusCode"] == 404
    assert "warning" not in reply


def test_a_url_the_jail_refuses_carries_its_refusal_as_a_scrape_would(
    web: tuple[ScriptedServer, list[dict[str, str]]],
) -> None:
    server, _ = web
    app = create_app(lambda: _session(server, fetch_allow_private=False), api_key=KEY)
    with TestClient(app) as strict:
        body = {"query": QUERY, "limit": 1, "scrapeOptions": {"formats": ["markdown"]}}
        (alpha,) = strict.post("/v2/search", json=body, headers=BEARER).json()["data"]["web"]
        scraped = strict.post("/v2/scrape", json={"url": alpha["url"]}, headers=BEARER)
    assert scraped.status_code == 403
    assert alpha["metadata"]["statusCode"] == 403
    assert alpha["metadata"]["error"] == scraped.json()["error"]
    assert "WEBSEARCH_FETCH_ALLOW_PRIVATE" in alpha["metadata"]["error"]


def test_every_page_is_read_under_the_request_s_one_deadline(server: ScriptedServer) -> None:
    _script_web(server)
    slow = {"title": "Slow", "url": f"{server.url}/slow", "content": "late"}
    fast = {"title": "Alpha", "url": f"{server.url}/pages/alpha", "content": "about alpha"}
    server.script("/search", Reply(200, {"results": [slow, fast]}))
    with TestClient(create_app(lambda: _session(server), api_key=KEY)) as client:
        body = {"query": QUERY, "timeout": 800, "scrapeOptions": {"formats": ["markdown"]}}
        started = time.monotonic()
        reply = client.post("/v2/search", json=body, headers=BEARER).json()
        elapsed = time.monotonic() - started
    got = _by_title(reply["data"]["web"])
    assert elapsed < 2.5  # the slow page answers after 3 s
    assert "did not arrive within" in got["Slow"]["metadata"]["error"]
    assert got["Slow"]["metadata"]["statusCode"] == 0
    assert "This page is called alpha" in got["Alpha"]["markdown"]


def test_limit_over_ten_is_capped_and_says_so(server: ScriptedServer) -> None:
    many = [{"title": f"R{i}", "url": f"{server.url}/r{i}", "content": "c"} for i in range(14)]
    server.script("/search", Reply(200, {"results": many}))
    with TestClient(create_app(lambda: _session(server), api_key=KEY)) as client:
        reply = client.post("/v1/search", json={"query": "many", "limit": 25}, headers=BEARER)
    assert len(reply.json()["data"]) == 10
    assert reply.json()["warning"] == "limit capped at 10 (asked for 25)"


def test_no_results_says_so_as_firecrawl_does(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, {"results": []}))
    with TestClient(create_app(lambda: _session(server), api_key=KEY)) as client:
        v1 = client.post("/v1/search", json={"query": "nothing"}, headers=BEARER).json()
        v2 = client.post("/v2/search", json={"query": "nothing"}, headers=BEARER).json()
    assert v1 == {"success": True, "data": [], "warning": "No search results found"}
    assert v2 == {"success": True, "data": {"web": []}, "warning": "No search results found"}


# -- Firecrawl's search: what its clients send ------------------------------------------------

#: The bodies firecrawl-py 4.55.0 and @mendable/firecrawl-js 4.42.0 post, as captured from
#: each client on loopback (defaults, and with every search option firecrawl-py has set).
CLIENT_BODIES = [
    {"query": "q", "origin": "python-sdk@4.55.0"},
    {"query": "q", "limit": 3, "origin": "python-sdk@4.55.0",
     "scrapeOptions": {"onlyMainContent": True, "removeBase64Images": True, "fastMode": False,
                       "blockAds": True, "storeInCache": True, "maxAge": 14400000,
                       "formats": ["markdown"], "mobile": False}},
    {"query": "q", "sources": [{"type": "web"}], "limit": 3, "tbs": "qdr:d",
     "location": "Germany", "country": "de", "timeout": 5000, "ignoreInvalidURLs": True,
     "origin": "python-sdk@4.55.0",
     "scrapeOptions": {"includeTags": ["main"], "excludeTags": ["nav"], "onlyMainContent": False,
                       "removeBase64Images": True, "fastMode": False, "blockAds": True,
                       "storeInCache": True, "maxAge": 14400000,
                       "formats": ["markdown", "html", "links"], "mobile": False}},
    {"query": "q", "limit": 2, "lang": "en", "country": "us", "origin": "python-sdk@4.55.0",
     "timeout": 30000, "scrapeOptions": {"formats": ["markdown"], "timeout": 30000}},
    {"query": "q", "limit": 5, "lang": "en", "country": "us", "origin": "python-sdk@4.55.0",
     "timeout": 30000},
    {"query": "q", "origin": "js-sdk@4.42.0"},
    {"query": "q", "limit": 3, "scrapeOptions": {"formats": ["markdown"]},
     "origin": "js-sdk@4.42.0"},
    {"query": "q", "limit": 3, "lang": "en", "country": "us", "origin": "js-sdk@4.42.0",
     "timeout": 60000, "scrapeOptions": {"formats": ["markdown"]}},
    {"query": "q", "limit": 5, "lang": "en", "country": "us", "origin": "js-sdk@4.42.0",
     "timeout": 60000, "scrapeOptions": {"formats": []}},
    # Newer firecrawl-py and firecrawl-js options, as each sends them when set.
    {"query": "q", "includeDomains": ["go.dev"], "highlights": False, "enterprise": ["zdr"],
     "integration": "langchain", "threatProtection": {}, "toolDetail": "compact"},
]  # fmt: skip


@pytest.mark.parametrize("body", CLIENT_BODIES)
def test_what_the_firecrawl_clients_send_is_taken(body: dict[str, Any]) -> None:
    call = parse_search(json.dumps(body).encode())
    assert call.arguments["query"] == "q"
    assert call.arguments["count"] == body.get("limit", 5)
    formats = (body.get("scrapeOptions") or {}).get("formats")
    assert (call.scrape is not None) == bool(formats)


def test_firecrawl_options_map_onto_the_search() -> None:
    third = parse_search(json.dumps(CLIENT_BODIES[2]).encode())
    assert third.arguments == {"query": "q", "count": 3, "freshness": "day", "locale": "en-de"}
    assert third.scrape == {"formats": ["markdown", "html", "links"], "main_content": False,
                            "include_tags": ["main"], "exclude_tags": ["nav"],
                            "deadline_s": None}  # fmt: skip
    assert third.timeout_s == 5.0
    assert third.warnings == [
        "location has no effect here: results are not geo-targeted (country is a hint)"
    ]
    v1 = parse_search(json.dumps(CLIENT_BODIES[3]).encode())
    assert v1.arguments["locale"] == "en-us"
    assert v1.scrape is not None
    assert v1.scrape["deadline_s"] == 30.0
    dated = parse_search(b'{"query": "q", "tbs": "cdr:1,cd_min:1/2/2026,cd_max:3/4/2026,sbd:1"}')
    assert (dated.arguments["date_from"], dated.arguments["date_to"]) == (
        "2026-01-02",
        "2026-03-04",
    )
    assert dated.warnings == ["tbs sbd has no effect here"]
    hour = parse_search(b'{"query": "q", "tbs": "qdr:h", "sources": ["web", "news"]}')
    assert hour.arguments["freshness"] == "day"
    assert hour.warnings == [
        "tbs qdr:h is served as the past day",
        "only web results are served: news left out",
    ]
    domains = parse_search(json.dumps(CLIENT_BODIES[-1]).encode())
    assert domains.arguments["include_domains"] == ["go.dev"]


def test_a_warning_reaches_the_reply(client: TestClient) -> None:
    body = {"query": QUERY, "limit": 1, "location": "Germany", "tbs": "qdr:w,sbd:1",
            "scrapeOptions": {"formats": ["markdown"], "waitFor": 500}}  # fmt: skip
    reply = client.post("/v2/search", json=body, headers=BEARER).json()
    assert reply["success"] is True
    for words in ("location has no effect", "tbs sbd has no effect", "waitFor has no effect"):
        assert words in reply["warning"]


# -- Firecrawl's search: refusals -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b"{}", "query is missing"),
        (b'{"query": ""}', "query is missing"),
        (b'{"query": 5}', "query is missing"),
        (b'{"query": "q", "limit": "five"}', "limit must be a whole number"),
        (b'{"query": "q", "limit": 0}', "limit must be a whole number"),
        (b'{"query": "q", "limit": 2.5}', "limit must be a whole number"),
        (b'{"query": "q", "limit": true}', "limit must be a whole number"),
        (b'{"query": "q", "colour": 1}', "unrecognized keys in body: colour"),
        (b'{"query": "q", "categories": ["github"]}', "categories is not supported"),
        (b'{"query": "q", "sources": ["news"]}', "only web results are served"),
        (b'{"query": "q", "sources": "web"}', "sources must be a list"),
        (b'{"query": "q", "timeout": -1}', "timeout must be a whole number"),
        (b'{"query": "q", "tbs": 7}', "tbs must be text"),
        (b'{"query": "q", "tbs": "cdr:1,cd_min:13/45/2026"}', "cd_min must be a date"),
        (b'{"query": "q", "lang": 5}', "lang must be a two-letter code"),
        (b'{"query": "q", "scrapeOptions": "markdown"}', "scrapeOptions must be an object"),
        (b'{"query": "q", "scrapeOptions": {"formats": ["screenshot"]}}', "'screenshot'"),
        (b'{"query": "q", "scrapeOptions": {"url": "x"}}', "scrapeOptions.url"),
        (b'{"query": "q", "scrapeOptions": {"formats": "markdown"}}', "scrapeOptions.formats"),
        (b'{"query": "q", "scrapeOptions": {"actions": [{}]}}', "scrapeOptions.actions"),
        (b'{"query": "q", "scrapeOptions": {"formats": ["markdown"], "includeTags": ["p >"]}}',
         "CSS selector"),
        (b'{"query": "q", "scrapeOptions": {"onlyMainContent": "yes"}}', "onlyMainContent"),
        (json.dumps({"query": "q" * 401}).encode(), "query"),
        (b'{"query": "q", "includeDomains": 5}', "include_domains"),
        (b"{" + b" " * (2 << 20) + b"}", "over 1,048,576 bytes"),
    ],
)  # fmt: skip
def test_a_bad_search_body_is_success_false_as_for_scrape(
    client: TestClient, body: bytes, words: str
) -> None:
    for path in ("/v1/search", "/v2/search"):
        reply = client.post(path, content=body, headers=BEARER)
        assert reply.status_code == 200  # the scrape door's answer to a bad body
        assert reply.json()["success"] is False
        assert reply.json()["code"] == "BAD_REQUEST"
        assert words in reply.json()["error"]


def test_a_failing_search_provider_is_success_false_in_the_typed_door_s_words(
    server: ScriptedServer,
) -> None:
    server.script("/search", Reply(500, {"error": "down"}))
    with TestClient(create_app(lambda: _session(server), api_key=KEY)) as client:
        typed = client.post("/v1/websearch", json={"query": "down"}, headers=SEARCH)
        v1 = client.post("/v1/search", json={"query": "down"}, headers=BEARER)
        v2 = client.post("/v2/search", json={"query": "down", "scrapeOptions": {
            "formats": ["markdown"]}}, headers=BEARER)  # fmt: skip
    message = typed.json()["error"]["message"]
    assert typed.json()["error"]["type"] == "ProviderUnavailableError"
    for reply in (v1, v2):
        assert reply.status_code == 502  # an upstream's failure, as a scrape's fetch failure
        assert reply.json() == {"success": False, "code": "SEARCH_FAILED", "error": message}


def test_a_rate_limited_provider_is_429(server: ScriptedServer) -> None:
    server.script("/search", Reply(429, {"error": "slow down"}, {"Retry-After": "0"}))
    with TestClient(create_app(lambda: _session(server), api_key=KEY)) as client:
        reply = client.post("/v2/search", json={"query": "limited"}, headers=BEARER)
    assert reply.status_code == 429
    assert reply.json()["success"] is False
    assert reply.json()["code"] == "RATE_LIMITED"


# -- the gate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {KEY}"},
     {"Authorization": "Bearer "}, {"X-API-Key": KEY}, {"X-API-Key": "wrong"},
     {"Authorization": f"Bearer {KEY}x"}],
)  # fmt: skip
def test_the_bearer_gate_refuses_search_exactly_as_it_refuses_scrape(
    client: TestClient, headers: dict[str, str]
) -> None:
    scrape = client.post("/v2/scrape", json={"url": "https://a.example/"}, headers=headers)
    assert scrape.status_code == 401
    for path in ("/v1/search", "/v2/search"):
        search = client.post(path, json={"query": "gated"}, headers=headers)
        assert (search.status_code, search.json()) == (scrape.status_code, scrape.json())
        assert KEY not in search.text


def test_no_key_configured_refuses_search_as_scrape(
    web: tuple[ScriptedServer, list[dict[str, str]]],
) -> None:
    server, _ = web
    with TestClient(create_app(lambda: _session(server), environ={})) as keyless:
        scrape = keyless.post("/v2/scrape", json={"url": "https://a.example/"}, headers=BEARER)
        search = keyless.post("/v2/search", json={"query": "gated"}, headers=BEARER)
    assert scrape.status_code == search.status_code == 503
    assert search.json() == scrape.json()
    assert "WEBSEARCH_API_KEY" in search.json()["error"]


def test_unserved_firecrawl_operations_name_search_among_what_is_served(
    client: TestClient,
) -> None:
    reply = client.post("/v2/map", json={"url": "https://a.example/"}, headers=BEARER)
    assert reply.status_code == 404
    assert "/v1/search, /v2/search" in reply.json()["error"]


# -- hostile bodies ----------------------------------------------------------------------------

_KEYS = (
    *("query", "limit", "timeout", "scrapeOptions", "tbs", "lang", "country", "sources"),
    *("includeDomains", "excludeDomains", "location", "categories", "origin", "formats"),
)
_SCRAPE_OPTIONS = st.dictionaries(
    st.sampled_from(["formats", "onlyMainContent", "includeTags", "timeout", "waitFor", "url"]),
    _JSON | st.lists(st.sampled_from(["markdown", "html", "links", "rawHtml"]), max_size=3),
    max_size=3,
)
#: Bodies close to what a client sends: a query, and each option well or badly formed.
_NEAR_VALID = st.fixed_dictionaries(
    {"query": st.text(min_size=1, max_size=40)},
    optional={
        "limit": st.integers(-2, 40) | _JSON,
        "tbs": st.sampled_from(["qdr:d", "qdr:h", "qdr:x", "cdr:1,cd_min:1/2/2026", "sbd:1"])
        | st.text(max_size=30),
        "lang": st.sampled_from(["en", "de", "EN", "english"]) | _JSON,
        "country": st.sampled_from(["us", "de", "zz1"]),
        "timeout": st.integers(-1, 4000) | _JSON,
        "location": st.text(max_size=10),
        "sources": st.lists(st.sampled_from(["web", "news", "images"]), max_size=3),
        "origin": st.text(max_size=10),
        "scrapeOptions": st.fixed_dictionaries(
            {"formats": st.lists(st.sampled_from([*FORMATS, "screenshot"]), max_size=3)},
            optional={
                "onlyMainContent": st.booleans() | _JSON,
                "includeTags": st.lists(st.sampled_from(["article", "main", "p >", "footer"])),
                "timeout": st.integers(-1, 4000),
                "waitFor": st.integers(0, 1000),
                "mobile": st.booleans(),
                "maxAge": st.integers(0, 10**8),
            },
        )
        | _SCRAPE_OPTIONS,
    },
)
#: Bodies that ask for what is served, each in any of the ways a client may.
_VALID = st.fixed_dictionaries(
    {"query": st.text(st.characters(categories=["L", "N", "Zs"]), min_size=1, max_size=40)},
    optional={
        "limit": st.integers(1, 40),
        "tbs": st.sampled_from(["qdr:d", "qdr:h", "qdr:x", "sbd:1", ""]),
        "lang": st.sampled_from(["en", "de", "english"]),
        "country": st.sampled_from(["us", "de"]),
        "timeout": st.integers(1, 4000),
        "location": st.text(max_size=10),
        "sources": st.lists(st.sampled_from(["web", "news"]), max_size=2).map(
            lambda kinds: ["web", *kinds]
        ),
        "scrapeOptions": st.fixed_dictionaries(
            {"formats": st.lists(st.sampled_from(list(FORMATS)), min_size=1, max_size=4)},
            optional={
                "onlyMainContent": st.booleans(),
                "includeTags": st.lists(st.sampled_from(["article", "main", "footer"])),
                "timeout": st.integers(1, 4000),
                "waitFor": st.integers(0, 1000),
            },
        ),
    },
)
_BODIES = st.dictionaries(
    st.sampled_from(_KEYS) | st.text(max_size=8) | st.text(st.characters(categories=["Cs"])),
    _JSON | _SCRAPE_OPTIONS | st.text(max_size=30),
    max_size=6,
)


@given(_JSON | _BODIES | _NEAR_VALID)
@settings(max_examples=1500, deadline=None)
def test_parse_search_takes_any_json_or_says_what_to_fix(body: Any) -> None:
    try:
        call = parse_search(json.dumps(body).encode())
    except InvalidRequestError as exc:
        refused: str | None = str(exc)
    else:
        refused = None
        assert isinstance(call.arguments["query"], str)
        assert 1 <= call.arguments["count"] <= 10
    assert refused is None or refused.strip()  # a refusal always says what to fix


@given(
    st.one_of(
        st.binary(max_size=200),
        (_JSON | _BODIES).map(lambda body: json.dumps(body).encode()),
        (_NEAR_VALID | _VALID).map(lambda body: json.dumps(body).encode()),
    ),
    st.sampled_from(["/v1/search", "/v2/search"]),
)  # fmt: skip
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hostile_search_bodies_get_a_firecrawl_answer_never_a_crash(
    client: TestClient, raw: bytes, path: str
) -> None:
    reply = client.post(path, content=raw, headers=BEARER)
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    if answer["success"]:
        data = answer["data"] if path == "/v1/search" else answer["data"]["web"]
        assert all(set(item) >= {"url", "title", "description"} for item in data)
        if parse_search(raw).scrape is not None:  # each page read, or why not
            assert all(isinstance(item["metadata"]["statusCode"], int) for item in data)
    else:
        assert answer["code"] == "BAD_REQUEST"
        assert answer["error"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v2/search", b'{"query": "a \\ud800 b"}'),
        ("/v2/search", b'{"query": "a", "colour\\udfff": 1}'),
        ("/v1/search", b'{"query": "a", "tbs": "qdr:\\ud800"}'),
        ("/v1/search", b'{"query": "a", "sources": ["web", "n\\udc00"]}'),
        ("/v2/scrape", b'{"url": "https://a.example/", "x\\ud800": 1}'),
    ],
)
def test_a_lone_surrogate_anywhere_is_a_bad_request_never_a_crash(
    client: TestClient, path: str, body: bytes
) -> None:
    reply = client.post(path, content=body, headers=BEARER)
    assert reply.status_code == 200
    assert reply.json()["code"] == "BAD_REQUEST"
    assert "not Unicode" in reply.json()["error"]
    pair = client.post("/v2/search", content=b'{"query": "smile \\ud83d\\ude00"}', headers=BEARER)
    assert pair.json()["success"] is True  # an escaped pair is one character, and fine


# -- firecrawl-py, unchanged, against a real websearch serve ------------------------------------


@pytest.fixture(scope="module")
def service(web: tuple[ScriptedServer, list[dict[str, str]]]) -> Iterator[Service]:
    server, _ = web
    environment = {
        "WEBSEARCH_PROVIDER": "searxng",
        "SEARXNG_URL": server.url,
        "WEBSEARCH_API_KEY": KEY,
        "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1",
    }
    with run_service(environment) as running:
        yield running


def test_firecrawl_py_v2_search_reads_the_pages(
    service: Service, web: tuple[ScriptedServer, list[dict[str, str]]]
) -> None:
    from firecrawl import Firecrawl
    from firecrawl.v2.types import Document, ScrapeOptions, SearchResultWeb

    _, results = web
    client = Firecrawl(api_key=KEY, api_url=service.url)
    plain = client.search(QUERY, limit=3)
    assert plain.web is not None
    assert [(r.url, r.title, r.description, r.position) for r in plain.web] == [
        (r["url"], r["title"], r["content"], rank) for rank, r in enumerate(results[:3], 1)
    ]
    found = client.search(QUERY, limit=4, scrape_options=ScrapeOptions(formats=["markdown"]))
    assert found.web is not None
    alpha, gone, beta, closed = found.web
    for document, name in ((alpha, "alpha"), (beta, "beta")):
        assert isinstance(document, Document)
        assert f"This page is called {name}" in (document.markdown or "")
        assert document.metadata_typed.status_code == 200
        assert document.metadata_typed.source_url == f"{results[0]['url'][:-5]}{name}"
    assert isinstance(gone, Document)  # a 404 is a page: its status and reason say so
    assert gone.metadata_typed.status_code == 404
    assert gone.metadata_typed.error == "Not Found"
    # A page that could not be fetched keeps its result; firecrawl-py reads a result without
    # content as a plain one (as it does Firecrawl's own), so its failure is on the wire only.
    assert isinstance(closed, SearchResultWeb)
    assert (closed.url, closed.title) == (results[3]["url"], "Closed")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # firecrawl-py v1's .dict()
def test_firecrawl_py_v1_search_reads_the_pages_and_carries_the_failure(
    service: Service, web: tuple[ScriptedServer, list[dict[str, str]]]
) -> None:
    from firecrawl import V1FirecrawlApp
    from firecrawl.v1 import V1ScrapeOptions

    _, results = web
    found = V1FirecrawlApp(api_key=KEY, api_url=service.url).search(
        QUERY, limit=4, scrape_options=V1ScrapeOptions(formats=["markdown"])
    )
    assert found.success is True
    # firecrawl-py's v1 search hands its documents back as the dicts on the wire.
    alpha, gone, beta, closed = found.data
    assert "This page is called alpha" in alpha["markdown"]
    assert "This page is called beta" in beta["markdown"]
    assert (alpha["url"], alpha["title"], alpha["description"]) == (
        results[0]["url"],
        "Alpha",
        "about alpha",
    )
    assert gone["metadata"]["statusCode"] == 404
    assert "markdown" not in closed
    assert closed["url"] == results[3]["url"]
    assert closed["metadata"]["statusCode"] == 0
    assert "could not connect" in closed["metadata"]["error"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # firecrawl-py v1's .dict()
def test_firecrawl_py_search_is_gated_as_its_scrape_is(service: Service) -> None:
    from firecrawl import Firecrawl, V1FirecrawlApp
    from firecrawl.v2.utils.error_handler import UnauthorizedError

    wrong = Firecrawl(api_key="wrong", api_url=service.url)
    with pytest.raises(UnauthorizedError, match="invalid API key"):
        wrong.search(QUERY)
    with pytest.raises(UnauthorizedError, match="invalid API key"):
        wrong.scrape("https://a.example/")
    with pytest.raises(Exception, match="invalid API key"):
        V1FirecrawlApp(api_key="wrong", api_url=service.url).search(QUERY)


def test_the_served_search_over_the_wire_keeps_the_key_out_of_the_log(service: Service) -> None:
    reply = httpx.post(f"{service.url}/v2/search", json={"query": "secretive words"},
                       headers=BEARER, timeout=30)  # fmt: skip
    refused = httpx.post(f"{service.url}/v1/search", json={"query": "x"}, timeout=30)
    assert reply.json()["success"] is True
    assert refused.status_code == 401
    deadline = time.monotonic() + 5
    while '"route": "/v1/search"' not in service.log() and time.monotonic() < deadline:
        time.sleep(0.05)  # each request's line is written once its answer has gone out
    log = service.log()
    assert '"route": "/v2/search"' in log
    assert KEY not in log
    assert "secretive words" not in log
