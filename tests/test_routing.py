"""Capability and routing for every provider x option.

A pinned provider either sends the option the way it declares (natively, or as a query
operator) or refuses it before any request leaves; ``auto`` picks one that honours all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.fake_ddgs import FakeDDGS
from websearch_core import (
    ConfigurationError,
    InvalidRequestError,
    SearchResponse,
    UnsupportedOptionError,
    WebSearch,
)
from websearch_core.errors import FetchError
from websearch_core.models import SearchRequest
from websearch_core.providers import GROUNDED, PROVIDERS
from websearch_core.providers.base import OPTIONS, Support
from websearch_core.search.routing import unmet_options

OPTION_ARGS: dict[str, dict[str, Any]] = {
    "include_domains": {"site": "docs.python.org"},
    "exclude_domains": {"exclude_domains": ["pinterest.com"]},
    "freshness": {"freshness": "week"},
    "date_range": {"date_from": "2026-01-01", "date_to": "2026-02-01"},
    "include_answer": {"include_answer": True},
    "country": {"country": "DE"},
    "language": {"language": "de"},
    "safesearch": {"safesearch": "strict"},
    "page": {"page": 2},
}


@dataclass
class Sent:
    """What reached the provider, whatever its transport: query, parameters and body."""

    query: str
    params: dict[str, Any]
    body: dict[str, Any]

    @property
    def tool(self) -> dict[str, Any]:
        """A grounded vendor's search tool, as sent."""
        tool: dict[str, Any] = self.body["tools"][0]
        return tool.get("google_search", tool)


Check = Callable[[Sent, SearchResponse], bool]

#: How each provider must express each option it honours. Unlisted pairs must be refused.
EXPECTED: dict[tuple[str, str], Check] = {
    ("brave", "include_domains"): lambda s, r: s.query == "python asyncio site:docs.python.org",
    ("brave", "exclude_domains"): lambda s, r: s.query == "python asyncio -site:pinterest.com",
    ("brave", "freshness"): lambda s, r: s.params["freshness"] == "pw",
    ("brave", "date_range"): lambda s, r: s.params["freshness"] == "2026-01-01to2026-02-01",
    ("brave", "country"): lambda s, r: s.params["country"] == "DE",
    ("brave", "language"): lambda s, r: s.params["search_lang"] == "de",
    ("brave", "safesearch"): lambda s, r: s.params["safesearch"] == "strict",
    ("brave", "page"): lambda s, r: s.params["offset"] == "1",
    ("tavily", "include_domains"): lambda s, r: (
        s.body["include_domains"] == ["docs.python.org"] and s.query == "python asyncio"
    ),
    ("tavily", "exclude_domains"): lambda s, r: (
        s.body["exclude_domains"] == ["pinterest.com"] and s.query == "python asyncio"
    ),
    ("tavily", "freshness"): lambda s, r: s.body["time_range"] == "week",
    ("tavily", "date_range"): lambda s, r: (
        (s.body["start_date"], s.body["end_date"]) == ("2026-01-01", "2026-02-01")
    ),
    ("tavily", "include_answer"): lambda s, r: s.body["include_answer"] is True and r.answer == "A",
    ("searxng", "include_domains"): lambda s, r: s.query == "python asyncio site:docs.python.org",
    ("searxng", "exclude_domains"): lambda s, r: s.query == "python asyncio -site:pinterest.com",
    ("searxng", "freshness"): lambda s, r: s.params["time_range"] == "week",
    # SearXNG has no request parameter for answers: its answerers always run, and the option
    # decides whether their answer is passed on.
    ("searxng", "include_answer"): lambda s, r: r.answer == "A",
    ("searxng", "language"): lambda s, r: s.params["language"] == "de",
    ("searxng", "safesearch"): lambda s, r: s.params["safesearch"] == "2",
    ("searxng", "page"): lambda s, r: s.params["pageno"] == "2",
    ("ddgs", "include_domains"): lambda s, r: s.query == "python asyncio site:docs.python.org",
    ("ddgs", "exclude_domains"): lambda s, r: s.query == "python asyncio -site:pinterest.com",
    ("ddgs", "freshness"): lambda s, r: s.params["timelimit"] == "w",
    ("ddgs", "country"): lambda s, r: s.params["region"] == "de-de",
    ("ddgs", "safesearch"): lambda s, r: s.params["safesearch"] == "on",
    ("ddgs", "page"): lambda s, r: s.params["page"] == 2,
    ("mojeek", "include_domains"): lambda s, r: s.query == "python asyncio site:docs.python.org",
    ("mojeek", "freshness"): lambda s, r: len(s.params["since"]) == 8,
    ("mojeek", "date_range"): lambda s, r: (
        (s.params["since"], s.params["before"]) == ("20260101", "20260202")
    ),
    ("mojeek", "country"): lambda s, r: s.params["rb"] == "DE",
    ("mojeek", "language"): lambda s, r: s.params["lb"] == "DE",
    ("mojeek", "page"): lambda s, r: s.params["s"] == "6",
    # The grounded vendors: domain lists and locations in the tool, never in the query.
    ("openai", "include_domains"): lambda s, r: (
        s.tool["filters"] == {"allowed_domains": ["docs.python.org"]}
        and s.query == "python asyncio"
    ),
    ("openai", "exclude_domains"): lambda s, r: (
        s.tool["filters"] == {"blocked_domains": ["pinterest.com"]} and s.query == "python asyncio"
    ),
    ("openai", "include_answer"): lambda s, r: r.answer == "A",
    ("openai", "country"): lambda s, r: s.tool["user_location"]["country"] == "DE",
    ("anthropic", "include_domains"): lambda s, r: (
        s.tool["allowed_domains"] == ["docs.python.org"] and s.query == "python asyncio"
    ),
    ("anthropic", "exclude_domains"): lambda s, r: (
        s.tool["blocked_domains"] == ["pinterest.com"] and s.query == "python asyncio"
    ),
    ("anthropic", "include_answer"): lambda s, r: r.answer == "A",
    ("anthropic", "country"): lambda s, r: s.tool["user_location"]["country"] == "DE",
    ("gemini", "freshness"): lambda s, r: (
        set(s.tool["timeRangeFilter"]) == {"startTime", "endTime"}
    ),
    ("gemini", "date_range"): lambda s, r: (
        s.tool["timeRangeFilter"]
        == {
            "startTime": "2026-01-01T00:00:00Z",
            "endTime": "2026-02-02T00:00:00Z",  # 2026-02-01 included
        }
    ),
    ("gemini", "include_answer"): lambda s, r: r.answer == "A",
    ("openrouter", "include_domains"): lambda s, r: (
        s.tool["parameters"]["allowed_domains"] == ["docs.python.org"]
        and s.query == "python asyncio"
    ),
    ("openrouter", "exclude_domains"): lambda s, r: (
        s.tool["parameters"]["excluded_domains"] == ["pinterest.com"]
        and s.query == "python asyncio"
    ),
    ("openrouter", "include_answer"): lambda s, r: r.answer == "A",
    ("openrouter", "country"): lambda s, r: (
        s.tool["parameters"]["user_location"]["country"] == "DE"
    ),
}

CITED = "https://e.org/"
SUCCESS = {
    "openai": {
        "status": "completed",
        "output": [
            {"type": "web_search_call", "status": "completed", "action": {"type": "search"}},
            {
                "type": "message",
                "content": [
                    {
                        "type": "output_text",
                        "text": "A",
                        "annotations": [
                            {
                                "type": "url_citation",
                                "start_index": 0,
                                "end_index": 1,
                                "url": CITED,
                                "title": "T",
                            }
                        ],
                    }
                ],
            },
        ],
    },
    "anthropic": {
        "stop_reason": "end_turn",
        "content": [
            {"type": "server_tool_use", "name": "web_search"},
            {"type": "web_search_tool_result", "content": [{"url": CITED, "title": "T"}]},
            {
                "type": "text",
                "text": "A",
                "citations": [{"type": "web_search_result_location", "url": CITED, "title": "T"}],
            },
        ],
    },
    "gemini": {
        "candidates": [
            {
                "content": {"parts": [{"text": "A"}]},
                "groundingMetadata": {
                    "webSearchQueries": ["q"],
                    "groundingChunks": [{"web": {"uri": CITED, "title": "e.org"}}],
                    "groundingSupports": [
                        {"segment": {"endIndex": 1}, "groundingChunkIndices": [0]}
                    ],
                },
            }
        ]
    },
    "openrouter": {
        "choices": [
            {
                "message": {
                    "content": "A",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url_citation": {
                                "url": CITED,
                                "title": "T",
                                "start_index": 0,
                                "end_index": 1,
                            },
                        }
                    ],
                }
            }
        ],
        "usage": {"server_tool_use_details": {"web_search_requests": 1}},
    },
    "brave": {"web": {"results": [{"title": "T", "url": "https://e.org/", "description": "D"}]}},
    "mojeek": {"response": {"results": [{"title": "T", "url": "https://e.org/", "desc": "D"}]}},
    "tavily": {"results": [{"title": "T", "url": "https://e.org/", "content": "D"}], "answer": "A"},
    "searxng": {
        "results": [{"title": "T", "url": "https://e.org/", "content": "D"}],
        "answers": ["A"],
    },
}


class Recorder:
    """An httpx transport standing in for the providers' hosts, recording what was sent."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        provider = HOSTS.get(request.url.host, "searxng")
        return httpx.Response(200, json=SUCCESS[provider])

    def sent(self) -> Sent:
        request = self.requests[-1]
        params = dict(request.url.params)
        body = json.loads(request.content) if request.content else {}
        query = params.get("q") or body.get("query") or body.get("input") or ""
        if "messages" in body:  # Anthropic, OpenRouter: the user's turn is the query
            query = body["messages"][-1]["content"]
        elif "contents" in body:  # Gemini
            query = body["contents"][0]["parts"][0]["text"]
        return Sent(query=query, params=params, body=body)


HOSTS = {
    "api.search.brave.com": "brave",
    "api.tavily.com": "tavily",
    "api.mojeek.com": "mojeek",
    "api.openai.com": "openai",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "gemini",
    "openrouter.ai": "openrouter",
}


def no_dns(host: str, port: int) -> list[Any]:
    raise FetchError("no name lookups in this test")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def fake_ddgs(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[FakeDDGS]]:
    FakeDDGS.reset([{"title": "T", "href": "https://e.org/", "body": "D"}])
    monkeypatch.setattr("ddgs.DDGS", FakeDDGS)
    return FakeDDGS


def all_configured(
    recorder: Recorder, provider: str = "auto", *, grounded: bool = True
) -> WebSearch:
    vendors = {f"{name}_api_key": f"canary-{name}" for name in GROUNDED} if grounded else {}
    return WebSearch(
        provider,
        brave_api_key="canary-brave",
        tavily_api_key="tvly-canary",
        mojeek_api_key="canary-mojeek",
        searxng_url="http://127.0.0.1:9",
        http_client=httpx.Client(transport=httpx.MockTransport(recorder)),
        resolver=no_dns,  # Gemini's citation links are left unresolved
        **vendors,
    )


def sent_by(provider: str, recorder: Recorder, fake: type[FakeDDGS]) -> Sent:
    if provider == "ddgs":
        call = fake.calls[-1]
        return Sent(query=call.query, params=call.options, body={})
    return recorder.sent()


PAIRS = [(p, o) for p in PROVIDERS for o in OPTIONS]


@pytest.mark.parametrize(("provider", "option"), PAIRS)
def test_pinned_provider_sends_or_refuses_each_option(
    provider: str, option: str, recorder: Recorder, fake_ddgs: type[FakeDDGS]
) -> None:
    ws = all_configured(recorder, provider)
    declared = PROVIDERS[provider].capabilities[option]
    if (provider, option) in EXPECTED:
        assert declared is not Support.UNSUPPORTED
        response = ws.search("python asyncio", **OPTION_ARGS[option])
        assert response.provider == provider
        assert EXPECTED[(provider, option)](sent_by(provider, recorder, fake_ddgs), response)
    else:
        assert declared is Support.UNSUPPORTED
        with pytest.raises(UnsupportedOptionError, match=option) as refused:
            ws.search("python asyncio", **OPTION_ARGS[option])
        assert refused.value.options == [option]
        assert recorder.requests == []
        assert fake_ddgs.calls == []


@pytest.mark.parametrize("provider", ["tavily", "searxng"])
def test_an_answer_is_passed_on_only_when_asked_for(provider: str, recorder: Recorder) -> None:
    ws = all_configured(recorder, provider)
    assert ws.search("python asyncio", include_answer=True).answer == "A"
    assert ws.search("python asyncio").answer is None


def test_refusal_names_a_provider_that_can() -> None:
    ws = WebSearch("searxng", searxng_url="http://127.0.0.1:9", tavily_api_key="tvly-canary")
    with pytest.raises(UnsupportedOptionError) as caught:
        ws.search("x", date_from="2026-01-01")
    assert "provider='tavily'" in str(caught.value)
    assert caught.value.options == ["date_range"]


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("include_domains", "brave"),
        ("include_answer", "tavily"),
        ("date_range", "brave"),
        ("freshness", "brave"),
        ("language", "brave"),
    ],
)
def test_auto_routes_to_first_provider_that_honours_everything(
    option: str, expected: str, recorder: Recorder, fake_ddgs: type[FakeDDGS]
) -> None:
    response = all_configured(recorder).search("python asyncio", **OPTION_ARGS[option])
    assert response.provider == expected


def test_auto_skips_providers_that_cannot(recorder: Recorder, fake_ddgs: type[FakeDDGS]) -> None:
    ws = WebSearch(
        searxng_url="http://127.0.0.1:9",
        http_client=httpx.Client(transport=httpx.MockTransport(recorder)),
    )
    assert ws.providers == ["searxng", "ddgs"]
    assert ws.search("x", country="de").provider == "ddgs"
    assert ws.search("x", language="de").provider == "searxng"


def test_auto_refuses_when_no_provider_honours_the_combination(
    recorder: Recorder, fake_ddgs: type[FakeDDGS]
) -> None:
    ws = all_configured(recorder, grounded=False)
    with pytest.raises(UnsupportedOptionError, match="together") as caught:
        ws.search("x", include_answer=True, country="de")
    assert "tavily lacks country" in str(caught.value)
    assert recorder.requests == []
    assert fake_ddgs.calls == []


def test_date_filters_are_never_emulated(recorder: Recorder, fake_ddgs: type[FakeDDGS]) -> None:
    ws = WebSearch("ddgs")
    with pytest.raises(UnsupportedOptionError, match="date_range"):
        ws.search("x", date_to="2026-01-01")
    assert fake_ddgs.calls == []


def test_brave_fills_the_open_end_of_a_date_range(recorder: Recorder) -> None:
    all_configured(recorder, "brave").search("x", date_from="2026-01-01")
    start, _, end = recorder.sent().params["freshness"].partition("to")
    assert start == "2026-01-01"
    assert end >= "2026-01-01"


def test_several_included_domains_become_one_or_group(
    recorder: Recorder, fake_ddgs: type[FakeDDGS]
) -> None:
    WebSearch("ddgs").search("x", include_domains=["a.org", "https://B.org/path"])
    assert fake_ddgs.calls[-1].query == "x (site:a.org OR site:b.org)"


def test_unknown_or_unconfigured_provider_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="choose one of auto, blend, brave"):
        WebSearch("bing")
    with pytest.raises(ConfigurationError, match="set BRAVE_API_KEY"):
        WebSearch("brave")


def test_unconfigured_providers_say_what_is_missing() -> None:
    ws = WebSearch()
    assert ws.providers == ["ddgs"]
    assert ws.unconfigured == {
        "brave": "set BRAVE_API_KEY",
        "tavily": "set TAVILY_API_KEY",
        "mojeek": "set MOJEEK_API_KEY",
        "searxng": "set SEARXNG_URL",
        "openai": "set OPENAI_API_KEY",
        "anthropic": "set ANTHROPIC_API_KEY",
        "gemini": "set GEMINI_API_KEY or GOOGLE_API_KEY",
        "openrouter": "set OPENROUTER_API_KEY",
    }


def test_environment_configures_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "canary-from-env")
    monkeypatch.setenv("SEARX_HOST", "http://127.0.0.1:9/")
    monkeypatch.setenv("WEBSEARCH_PROVIDER", "searxng")
    ws = WebSearch()
    assert ws.providers == ["brave", "searxng", "ddgs"]
    assert ws.settings.provider == "searxng"
    assert ws.settings.searxng_url is not None
    assert ws.settings.searxng_url.get_secret_value() == "http://127.0.0.1:9"
    assert WebSearch("brave").settings.provider == "brave"  # the argument wins


@pytest.mark.parametrize(
    ("kwargs", "sent"),
    [
        ({"site": "a.org", "include_domains": "b.org"}, "x (site:a.org OR site:b.org)"),
        (
            {"site": "a.org", "include_domains": (d for d in ["b.org"])},
            "x (site:a.org OR site:b.org)",
        ),
        ({"include_domains": ["a.org", "A.org/x"]}, "x site:a.org"),
    ],
)
def test_site_and_include_domains_combine(kwargs: dict[str, Any], sent: str) -> None:
    ws = WebSearch("searxng", searxng_url="http://127.0.0.1:9")
    assert ws._planner.plan("x", kwargs).query == sent


def test_malformed_domain_argument_is_a_request_error() -> None:
    ws = WebSearch("searxng", searxng_url="http://127.0.0.1:9")
    with pytest.raises(InvalidRequestError, match="list of domains"):
        ws.search("x", include_domains=5)  # type: ignore[arg-type]


def test_a_query_operator_cannot_stand_in_for_an_option_no_operator_expresses() -> None:
    # Only domain filters can be written into the query; a provider that declared another
    # option "by query operator" must still be refused it, not have it dropped.
    request = SearchRequest(query="q", freshness="week", include_domains=("a.org",))
    declared = {"freshness": Support.QUERY_OPERATOR, "include_domains": Support.QUERY_OPERATOR}
    assert unmet_options(request, declared) == ["freshness"]


def test_a_site_rewrite_may_use_exactly_the_providers_limit(recorder: Recorder) -> None:
    ws = all_configured(recorder, "brave")  # Brave takes at most 400 characters
    words = "w" * (400 - len(" site:example.org"))
    response = ws.search(words, site="example.org")
    assert len(response.sent_query) == 400
    with pytest.raises(InvalidRequestError, match="401 characters and brave takes at most 400"):
        ws.search(words + "w", site="example.org")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"include_answer": True, "country": "DE"}, "openai"),
        ({"exclude_domains": ["pinterest.com"], "include_answer": True}, "tavily"),
        ({"date_from": "2026-01-01", "include_answer": True}, "tavily"),
        (
            {"exclude_domains": ["pinterest.com"], "include_answer": True, "country": "DE"},
            "openai",  # filters.blocked_domains
        ),
    ],
)
def test_auto_reaches_a_grounded_provider_only_when_no_plain_one_can(
    options: dict[str, Any], expected: str, recorder: Recorder, fake_ddgs: type[FakeDDGS]
) -> None:
    assert all_configured(recorder).search("python asyncio", **options).provider == expected


def test_auto_names_each_grounded_gap_when_nothing_honours_the_combination(
    recorder: Recorder, fake_ddgs: type[FakeDDGS]
) -> None:
    ws = all_configured(recorder)
    with pytest.raises(UnsupportedOptionError, match="together") as caught:
        ws.search("x", site="a.org", exclude_domains=["b.org"], include_answer=True, country="de")
    assert "anthropic lacks include_domains with exclude_domains" in str(caught.value)
    assert "gemini lacks include_domains, exclude_domains, country" in str(caught.value)
    assert recorder.requests == []
