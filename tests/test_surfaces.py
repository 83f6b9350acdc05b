"""One failure, one text, on every surface: the Python API, the LangChain tool, the
LlamaIndex tool spec, MCP, the command line (text and ``--json``) and the HTTP service.

The case is the first wall everyone testing on localhost, an intranet or a Docker network
meets: a local address refused by the default policy. Wherever it is read, it names the
operator's switch and why the switch is off, so nobody is left with a bare "refused".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from langchain_core.messages import ToolMessage
from mcp.shared.memory import create_connected_server_and_client_session
from starlette.testclient import TestClient

from langchain_websearch import WebFetchTool
from llamaindex_websearch import WebSearchToolSpec
from tests.support.http_server import Reply, ScriptedServer
from websearch_core import URLRefusedError, WebSearch, __version__
from websearch_core.mcp import build_server
from websearch_core.server import create_app

KEY = "surfaces-key-0123456789"
SWITCH = "WEBSEARCH_FETCH_ALLOW_PRIVATE=1"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEARCH_")}
    return subprocess.run(
        [sys.executable, "-m", "websearch_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


async def test_a_local_address_reads_the_same_refusal_with_the_switch_on_every_surface(
    server: ScriptedServer,
) -> None:
    server.script("/page", Reply(200, "<p>a local page</p>", {"Content-Type": "text/html"}))
    url = f"{server.url}/page"
    ws = WebSearch(convert_workers=0)

    with pytest.raises(URLRefusedError) as api:
        ws.fetch(url)
    text = str(api.value)
    assert api.value.reason == "not_public"
    assert SWITCH in text
    assert "--allow-private" in text
    assert "so that a model cannot reach this machine or its network" in text
    assert str(server.port) not in text  # the refusal never repeats an internal address

    tool = WebFetchTool(session=ws).invoke(
        {"name": "web_fetch", "args": {"url": url}, "id": "c1", "type": "tool_call"}
    )
    assert isinstance(tool, ToolMessage)
    assert tool.status == "error"
    assert tool.content == text

    with pytest.raises(URLRefusedError) as spec:
        await WebSearchToolSpec(ws).aweb_fetch(url)
    assert str(spec.value) == text

    async with create_connected_server_and_client_session(build_server(ws)) as session:
        result = await session.call_tool("web_fetch", {"url": url})
    assert result.isError is True
    assert result.content[0].text == text  # type: ignore[union-attr]

    plain = _cli("fetch", url)
    assert plain.returncode == 2
    assert plain.stderr == f"websearch: error: {text}\n"
    assert plain.stdout == ""
    as_json = _cli("fetch", url, "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout) == {
        "error": {
            "type": "URLRefusedError",
            "message": text,
            "retryable": False,
            "reason": "not_public",
        }
    }
    assert as_json.stderr == ""

    app = create_app(lambda: WebSearch(convert_workers=0), api_key=KEY)
    with TestClient(app) as client:
        scrape = client.post(
            "/v2/scrape", json={"url": url}, headers={"Authorization": f"Bearer {KEY}"}
        )
    assert scrape.status_code == 403
    assert scrape.json()["error"] == text
    ws.close()


def test_the_switch_named_in_the_refusal_is_the_one_that_opens_it(server: ScriptedServer) -> None:
    server.script("/page", Reply(200, "<p>a local page</p>", {"Content-Type": "text/html"}))
    opened = _cli("fetch", f"{server.url}/page", "--allow-private")
    assert opened.returncode == 0, opened.stderr
    assert "a local page" in opened.stdout
    env = {**os.environ, "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1"}
    by_environment = subprocess.run(
        [sys.executable, "-m", "websearch_core.cli", "fetch", f"{server.url}/page"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert by_environment.returncode == 0, by_environment.stderr
    assert "a local page" in by_environment.stdout


def test_a_bare_host_is_refused_with_its_https_url_suggested() -> None:
    refused = _cli("fetch", "example.com/docs")
    assert refused.returncode == 2
    assert "did you mean https://example.com/docs?" in refused.stderr
    with pytest.raises(URLRefusedError, match=r"did you mean https://example\.com\?"):
        WebSearch().fetch("example.com")
    # Only a URL the jail would fetch is suggested: never an address, a metadata name or
    # credentials (which are never repeated back).
    for bare in (
        "10.0.0.7",
        "0x7f.0x0.0x0.0x1/",
        "metadata.google.internal/computeMetadata/v1/",
        "john.doe:hunter2@example.com/x",
        "localhost:8080/",
    ):
        with pytest.raises(URLRefusedError) as refused_bare:
            WebSearch().fetch(bare)
        assert "did you mean" not in str(refused_bare.value), bare
        assert "hunter2" not in str(refused_bare.value)


def test_the_command_line_says_its_version() -> None:
    shown = _cli("--version")
    assert shown.returncode == 0
    assert shown.stdout == f"websearch {__version__}\n"


async def test_the_mcp_server_reports_this_package_and_its_version() -> None:
    with WebSearch(convert_workers=0) as ws:
        async with create_connected_server_and_client_session(build_server(ws)) as session:
            info = await session.initialize()
    assert info.serverInfo.name == "websearch"
    assert info.serverInfo.version == __version__
