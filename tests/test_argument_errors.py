"""Arguments a tool cannot take read the same in every projection: one formatter, in the core.

Each bad call is made through the LangChain tool (a ``ToolMessage`` with ``status="error"``)
and through the LlamaIndex tool spec (the error an agent hands the model), and the two texts
must be equal — and say what to change.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_websearch import WebFetchTool, WebSearchTool
from llamaindex_websearch import WebSearchToolSpec
from tests.support.http_server import ScriptedServer
from websearch_core import InvalidRequestError, JailPolicy, UnsupportedOptionError, WebSearch
from websearch_core.tooling import FETCH_TOOL, SEARCH_TOOL


@pytest.fixture
def ws(site: ScriptedServer) -> Iterator[WebSearch]:
    with WebSearch(
        "searxng", searxng_url=site.url, fetch_policy=JailPolicy(allow_private=True)
    ) as session:
        yield session


CASES: list[tuple[str, dict[str, Any], str]] = [
    (SEARCH_TOOL, {"query": "q", "bogus_arg": 1}, "bogus_arg: Extra inputs are not permitted"),
    (SEARCH_TOOL, {"query": "q", "count": 0}, "count: Input should be greater than or equal to 1"),
    (SEARCH_TOOL, {"query": "q", "count": True}, "count: give a whole number, not true or false"),
    (SEARCH_TOOL, {"query": "q", "page": 0}, "page: Input should be greater than or equal to 1"),
    (SEARCH_TOOL, {"count": 3}, "query: Field required"),
    (SEARCH_TOOL, {"query": "q", "date_from": "2026-01-01"}, "'searxng' cannot honour date_range"),
    (SEARCH_TOOL, {"query": "q", "country": "de"}, "'searxng' cannot honour country"),
    (FETCH_TOOL, {"url": "https://example.com/", "offset": -1}, "offset: Input should be greater"),
    (FETCH_TOOL, {"url": "https://example.com/", "bogus": 1}, "bogus: Extra inputs are not"),
    (FETCH_TOOL, {"offset": 3}, "url: Field required"),
    (FETCH_TOOL, {"url": "https://example.com/", "max_bytes": "lots"}, "max_bytes: Input should"),
]


def _langchain(ws: WebSearch, tool: str, args: dict[str, Any]) -> str:
    chosen = WebSearchTool(session=ws) if tool == SEARCH_TOOL else WebFetchTool(session=ws)
    message = chosen.invoke({"name": tool, "args": args, "id": "c1", "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    return str(message.content)


async def _llamaindex(ws: WebSearch, tool: str, args: dict[str, Any]) -> str:
    [function] = [t for t in WebSearchToolSpec(ws).to_tool_list() if t.metadata.name == tool]
    with pytest.raises(InvalidRequestError) as caught:
        await function.acall(**args)
    with pytest.raises(InvalidRequestError) as caught_sync:
        function.call(**args)
    assert str(caught_sync.value) == str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(("tool", "args", "says"), CASES, ids=[str(c[1]) for c in CASES])
async def test_an_argument_error_reads_the_same_in_both_frameworks(
    ws: WebSearch, tool: str, args: dict[str, Any], says: str
) -> None:
    langchain = _langchain(ws, tool, args)
    llamaindex = await _llamaindex(ws, tool, args)
    assert langchain == llamaindex
    assert says in langchain


def test_a_withheld_option_is_refused_like_a_pinned_provider_refuses_it(ws: WebSearch) -> None:
    text = _langchain(ws, SEARCH_TOOL, {"query": "q", "date_from": "2026-01-01"})
    with pytest.raises(InvalidRequestError) as caught:
        ws.search("q", date_from="2026-01-01")
    assert text == str(caught.value)
    assert "Extra inputs" not in text


def test_schema_errors_and_core_errors_share_one_wording(ws: WebSearch) -> None:
    schema = _langchain(ws, SEARCH_TOOL, {"query": "q", "count": 0})
    with pytest.raises(InvalidRequestError) as caught:
        ws.search("q", count=0)
    assert schema.startswith("invalid arguments: ")
    assert str(caught.value).startswith("invalid arguments: ")
    assert schema.endswith("; correct them and call again")
    assert str(caught.value).endswith("; correct them and call again")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"query": "q", "date_from": "2026-01-01"}, UnsupportedOptionError),
        ({"query": "q", "count": True}, InvalidRequestError),
    ],
)
async def test_a_refusal_is_the_same_error_in_the_api_and_the_llamaindex_tool(
    ws: WebSearch, args: dict[str, Any], error: type[InvalidRequestError]
) -> None:
    [function] = [t for t in WebSearchToolSpec(ws).to_tool_list() if t.metadata.name == SEARCH_TOOL]
    with pytest.raises(InvalidRequestError) as tool:
        await function.acall(**args)
    with pytest.raises(InvalidRequestError) as api:
        ws.search(**args)
    assert type(tool.value) is type(api.value) is error
    assert str(tool.value) == str(api.value)


def test_an_unknown_keyword_of_any_public_method_is_an_invalid_request(ws: WebSearch) -> None:
    calls = [
        (lambda: ws.fetch("https://example.com/", bogus=1), "fetch has no argument 'bogus'"),
        (lambda: ws.fetch_many(["https://example.com/"], bogus=1), "fetch_many has no argument"),
        (lambda: ws.scrape("https://example.com/", bogus=1), "bogus"),
        (lambda: ws.search("q", bogus=1), "search has no option 'bogus'"),
        (lambda: ws.fetch(), "fetch was called with arguments that do not fit: url"),
    ]
    for call, says in calls:
        with pytest.raises(InvalidRequestError, match=says):
            call()  # type: ignore[call-arg]


async def test_an_unknown_keyword_of_an_async_method_is_an_invalid_request(ws: WebSearch) -> None:
    with pytest.raises(InvalidRequestError, match="fetch has no argument 'bogus'"):
        await ws.afetch("https://example.com/", bogus=1)  # type: ignore[call-arg]
    with pytest.raises(InvalidRequestError, match="afetch_many has no argument 'bogus'"):
        ws.afetch_many(["https://example.com/"], bogus=1)  # type: ignore[call-arg]
