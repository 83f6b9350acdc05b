"""``websearch mcp`` started as a subprocess and driven by real MCP clients: the SDK's own
(stdio and streamable HTTP), LangChain's ``langchain-mcp-adapters`` in a ``create_agent``
loop and LlamaIndex's ``McpToolSpec`` in a ``FunctionAgent``, against fake engines and pages
on loopback (the test-only private-address policy, as an operator could set it)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from llama_index.core.agent.workflow import FunctionAgent
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import CallToolRequest, CallToolRequestParams, CallToolResult

from llamaindex_websearch import WebSearchToolSpec
from tests.support.fake_engines import FakeEngines, fake_engines
from tests.support.http_server import Reply, ScriptedServer
from tests.support.scripted_chat import ScriptedChatModel, tool_call
from tests.support.service import free_port
from tests.test_llamaindex import Script, answer, calls, run_agent
from websearch_core import InvalidRequestError, JailPolicy, WebSearch
from websearch_core.render import FENCE_NOTE
from websearch_core.tooling import FETCH_ARGUMENTS, arguments_model, search_arguments

COMMAND = [sys.executable, "-m", "websearch_core.cli", "mcp"]
BEGIN = "--- begin fetched content: "


@pytest.fixture(scope="module")
def engines() -> Iterator[FakeEngines]:
    with fake_engines() as running:
        yield running


@pytest.fixture(autouse=True)
def _engines_up(engines: FakeEngines) -> None:
    engines.down.clear()


def environment(engines: FakeEngines) -> dict[str, str]:
    env = engines.environment()
    return {
        "PATH": os.environ.get("PATH", ""),
        "BRAVE_API_KEY": env["BRAVE_API_KEY"],
        "BRAVE_BASE_URL": env["BRAVE_BASE_URL"],
        "WEBSEARCH_PROVIDER": "brave",
        "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1",
    }


def in_process(engines: FakeEngines) -> WebSearch:
    """The same configuration as the server's, in this process."""
    env = engines.environment()
    return WebSearch(
        "brave",
        brave_api_key=env["BRAVE_API_KEY"],
        brave_base_url=env["BRAVE_BASE_URL"],
        fetch_policy=JailPolicy(allow_private=True),
    )


@asynccontextmanager
async def stdio_session(engines: FakeEngines) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=COMMAND[0], args=COMMAND[1:], env=environment(engines))
    # A server that dies mid-call must fail the test, not hang it.
    patience = dt.timedelta(seconds=60)
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=patience) as session,
    ):
        await session.initialize()
        yield session


async def exercise(session: ClientSession, engines: FakeEngines) -> None:
    """The calls every transport must answer the same way as the in-process API."""
    listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert list(listed) == ["web_search", "web_fetch"]
    with in_process(engines) as ws:
        expected_search = arguments_model("WebSearchInput", search_arguments(ws))
        assert listed["web_search"].inputSchema == expected_search.model_json_schema()
        expected_fetch = arguments_model("WebFetchInput", FETCH_ARGUMENTS)
        assert listed["web_fetch"].inputSchema == expected_fetch.model_json_schema()
        for tool in listed.values():
            assert tool.annotations is not None
            assert tool.annotations.readOnlyHint is False
            assert tool.annotations.openWorldHint is True

        searched = await session.call_tool("web_search", {"query": "mcp words", "count": 3})
        assert searched.isError is False
        assert searched.content[0].text == ws.search("mcp words", count=3).render()  # type: ignore[union-attr]
        assert searched.structuredContent is not None
        assert searched.structuredContent["provider"] == "brave"
        assert len(searched.structuredContent["results"]) == 3

        url = f"{engines.url}/pages/mcp-page"
        fetched = await session.call_tool("web_fetch", {"url": url})
        assert fetched.isError is False
        assert fetched.content[0].text == ws.fetch(url).render()  # type: ignore[union-attr]
        assert fetched.structuredContent is not None
        assert fetched.structuredContent["status"] == 200
        assert "content" not in fetched.structuredContent  # the page only ever fenced

    refused = await session.call_tool("web_fetch", {"url": "http://169.254.169.254/latest/"})
    assert refused.isError is True
    assert refused.content[0].text == (  # type: ignore[union-attr]
        "refused: cloud metadata endpoint; it is never fetched"
    )
    bad = await session.call_tool("web_search", {"query": "x", "count": 99, "colour": "red"})
    assert bad.isError is True
    spec = WebSearchToolSpec(in_process(engines))
    with pytest.raises(InvalidRequestError) as raised:  # the LlamaIndex spec's, for the same
        spec.web_search("x", count=99, colour="red")
    assert bad.content[0].text == str(raised.value)  # type: ignore[union-attr]


async def test_stdio_lists_and_calls_both_tools(engines: FakeEngines) -> None:
    async with stdio_session(engines) as session:
        await exercise(session, engines)


async def test_a_failing_search_does_not_take_the_server_down(
    engines: FakeEngines, server: ScriptedServer
) -> None:
    server.script(
        "/odd.json",
        Reply(200, b'{"title": "lone \\ud800 surrogate"}', {"Content-Type": "application/json"}),
    )
    async with stdio_session(engines) as session:
        engines.down.add("brave")
        failed = await session.call_tool("web_search", {"query": "while down"})
        assert failed.isError is True
        assert "brave is unavailable (HTTP 500" in failed.content[0].text  # type: ignore[union-attr]
        engines.down.clear()
        again = await session.call_tool("web_search", {"query": "after the failure"})
        assert again.isError is False
        unknown = await session.call_tool("web_crawl", {"url": "https://a.example/"})
        assert unknown.isError is True
        # A JSON page with a lone surrogate escape: text a transport cannot encode must not
        # reach it (it ended the stdio server once).
        odd = await session.call_tool("web_fetch", {"url": f"{server.url}/odd.json"})
        assert odd.isError is False
        assert '"lone ? surrogate"' in odd.content[0].text  # type: ignore[union-attr]
        after = await session.call_tool("web_search", {"query": "still here"})
        assert after.isError is False


def test_stdout_holds_protocol_messages_only(engines: FakeEngines) -> None:
    """Drive the server by hand and read every byte it writes to stdout: each line must be a
    JSON-RPC message, around searches and fetches that log (at INFO, so that there are log
    lines to misplace) and fail."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "probe", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "web_search", "arguments": {"query": "logs somewhere"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "web_fetch", "arguments": {"url": "http://169.254.169.254/"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "web_fetch", "arguments": {"url": f"{engines.url}/pages/logged"}}},
    ]  # fmt: skip
    process = subprocess.Popen(
        COMMAND,
        env={**environment(engines), "WEBSEARCH_LOG_LEVEL": "INFO"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    for request in requests:
        process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    answered: dict[int, dict[str, Any]] = {}
    lines: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(answered) < 5 and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        message = json.loads(line)  # anything else on stdout fails here
        assert message["jsonrpc"] == "2.0"
        if "id" in message:
            answered[message["id"]] = message
    process.stdin.close()  # the client goes away: the server ends
    assert process.stderr is not None
    rest, errors = process.stdout.read(), process.stderr.read()
    process.wait(timeout=30)
    assert rest == b""  # nothing after the last answer either
    assert sorted(answered) == [1, 2, 3, 4, 5]
    assert answered[3]["result"]["isError"] is False  # a search that logs its line
    assert answered[4]["result"]["isError"] is True
    assert answered[5]["result"]["isError"] is False
    # There were log lines to put on stdout, and they all went to stderr.
    assert b"websearch_core search provider=brave" in errors
    assert b"websearch_core fetch url=" in errors
    assert b"fake-brave-key" not in b"".join(lines) + errors


@pytest.fixture(scope="module")
def http_server(engines: FakeEngines) -> Iterator[str]:
    """``websearch mcp --http`` on a free loopback port: its endpoint's URL."""
    port = free_port()
    process = subprocess.Popen(
        [*COMMAND, "--http", "--port", str(port)],
        env=environment(engines),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.communicate()[0]
                assert time.monotonic() < deadline, "websearch mcp --http did not start"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_streamable_http_answers_the_same(http_server: str, engines: FakeEngines) -> None:
    async with (
        streamablehttp_client(http_server) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await exercise(session, engines)


def test_streamable_http_turns_away_other_hosts(http_server: str) -> None:
    # A page elsewhere that points a browser here (DNS rebinding) is turned away.
    port = http_server.rsplit(":", 1)[1].split("/")[0]
    rebound = httpx.post(http_server, json={}, headers={"Host": f"attacker.example:{port}"})
    assert rebound.status_code in (400, 403, 421)


async def test_langchain_agent_loads_the_server(engines: FakeEngines) -> None:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient(
        {
            "websearch": {
                "command": COMMAND[0],
                "args": COMMAND[1:],
                "env": environment(engines),
                "transport": "stdio",
            }
        }
    )
    tools = await client.get_tools()
    assert [tool.name for tool in tools] == ["web_search", "web_fetch"]
    url = f"{engines.url}/pages/lc-page"
    model = ScriptedChatModel(
        replies=[
            tool_call("web_search", "c1", query="langchain mcp", count=2),
            tool_call("web_fetch", "c2", url=url),
            tool_call("web_fetch", "c3", url="http://127.0.0.1:9/x", max_bytes=True),
            AIMessage(content="done"),
        ]
    )
    agent = create_agent(model, tools=tools)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "find it"}]})
    messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in messages] == ["web_search", "web_fetch", "web_fetch"]
    searched, fetched, failed = (m.text for m in messages)
    assert searched.endswith('2 results from brave for "langchain mcp".')
    assert fetched.startswith(BEGIN + url)
    assert fetched.splitlines()[-1] == FENCE_NOTE
    assert failed.startswith("invalid arguments: max_bytes")
    assert messages[2].status == "error"
    # the model read each tool message on its next turn
    assert any(isinstance(m, ToolMessage) and FENCE_NOTE in m.text for m in model.seen[2])


async def test_llamaindex_agent_loads_the_server(engines: FakeEngines) -> None:
    from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

    client = BasicMCPClient(COMMAND[0], args=COMMAND[1:], env=environment(engines))
    tools = await McpToolSpec(client=client).to_tool_list_async()
    assert [tool.metadata.name for tool in tools] == ["web_search", "web_fetch"]
    url = f"{engines.url}/pages/li-page"
    script = Script(
        calls(("web_search", {"query": "llamaindex mcp", "count": 2})),
        calls(("web_fetch", {"url": url})),
        answer("done"),
    )
    agent = FunctionAgent(tools=tools, llm=script.llm())
    results, _, final = await run_agent(agent, "find it")
    assert [r.tool_name for r in results] == ["web_search", "web_fetch"]
    searched, fetched = (str(r.tool_output.content) for r in results)
    # LlamaIndex's MCP tool hands the model the result object's repr: the text is inside it.
    assert searched.startswith("meta=None content=[TextContent(type='text', text='1. ")
    assert '2 results from brave for "llamaindex mcp".' in searched
    assert BEGIN + url in fetched
    assert FENCE_NOTE in fetched
    assert final == "done"
    # what the model was shown of the page is the fenced text, and nothing of it unfenced
    shown = " ".join(str(m.content) for m in script.seen[2])
    assert FENCE_NOTE in shown
    assert shown.count("This page is called li-page") == 1


async def test_an_unforeseen_failure_is_an_error_result(
    engines: FakeEngines, monkeypatch: pytest.MonkeyPatch
) -> None:
    from websearch_core.mcp import build_server

    ws = in_process(engines)

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug, with words that must not reach the model")

    monkeypatch.setattr(ws, "asearch", broken)
    server = build_server(ws)
    handler = server.request_handlers[CallToolRequest]
    request = CallToolRequest(params=CallToolRequestParams(name="web_search",
                                                           arguments={"query": "x"}))  # fmt: skip
    result = (await handler(request)).root
    assert isinstance(result, CallToolResult)
    assert result.isError is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("web_search failed unexpectedly (RuntimeError): this is a bug")
    assert "must not reach" not in text


def test_http_refuses_to_listen_beyond_loopback(engines: FakeEngines) -> None:
    done = subprocess.run(
        [*COMMAND, "--http", "--host", "0.0.0.0", "--port", str(free_port())],
        env=environment(engines),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("websearch: error: websearch mcp --http binds loopback only")
