"""LangChain's own standard tests for both tools (langchain-tests), offline.

Unit tests construct the tools; integration tests invoke them against a scripted SearXNG
and a page, both real HTTP servers on loopback. No standard test is overridden.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_websearch import WebFetchTool, WebSearchTool
from tests.support.http_server import Reply, ScriptedServer, scripted_server
from websearch_core import JailPolicy, WebSearch

_servers: list[ScriptedServer] = []


@pytest.fixture(scope="module", autouse=True)
def _loopback_site() -> Iterator[None]:
    with scripted_server() as server:
        server.script(
            "/search",
            Reply(200, {"results": [{"title": "Doc", "url": f"{server.url}/doc", "content": "s"}]}),
        )
        server.script(
            "/doc", Reply(200, b"<h1>Doc</h1><p>Body.</p>", {"Content-Type": "text/html"})
        )
        _servers.append(server)
        yield
        _servers.remove(server)


def _session() -> WebSearch:
    url = _servers[-1].url if _servers else "http://127.0.0.1:9"
    return WebSearch("searxng", searxng_url=url, fetch_policy=JailPolicy(allow_private=True))


class TestWebSearchToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return WebSearchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"session": _session()}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "python asyncio", "count": 3, "site": "docs.python.org"}

    @property
    def init_from_env_params(self) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
        return {"SEARXNG_URL": "http://127.0.0.1:8888"}, {}, {"providers": ["searxng", "ddgs"]}


class TestWebFetchToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return WebFetchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"session": _session()}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"url": "https://docs.python.org/3/library/asyncio.html"}


class TestWebSearchToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return WebSearchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"session": _session()}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "python asyncio", "count": 3}


class TestWebFetchToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return WebFetchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"session": _session()}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"url": f"{_servers[-1].url}/doc"}
