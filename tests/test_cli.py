"""``websearch search``: the menu on stdout, errors as one line and a non-zero exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.http_server import Reply, ScriptedServer
from websearch_core.cli import main

RESULTS = {
    "results": [
        {
            "title": "Asyncio",
            "url": "https://docs.python.org/3/library/asyncio.html",
            "content": "Asynchronous I/O.",
        }
    ]
}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.endswith(("API_KEY", "_URL", "HOST"))}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "websearch_core.cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )


def test_search_prints_the_menu(server: ScriptedServer) -> None:
    server.script("/search", Reply(200, RESULTS))
    done = run(
        "search",
        "python",
        "asyncio",
        "--site",
        "docs.python.org",
        env={"SEARXNG_URL": server.url, "WEBSEARCH_PROVIDER": "searxng"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "1. Asyncio — https://docs.python.org/3/library/asyncio.html\n"
        "   Asynchronous I/O.\n\n"
        '1 result from searxng for "python asyncio".\n'
    )
    assert server.seen[-1].query["q"] == "python asyncio site:docs.python.org"


def test_json_output(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script("/search", Reply(200, RESULTS))
    monkeypatch.setenv("SEARXNG_URL", server.url)
    assert main(["search", "asyncio", "--provider", "searxng", "--count", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["provider"] == "searxng"
    assert data["results"][0]["url"] == "https://docs.python.org/3/library/asyncio.html"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["search", "x", "--provider", "brave"], 2, "'brave' is not configured: set BRAVE_API_KEY"),
        (["search", "x", "--count", "0"], 2, "count: Input should be greater than or equal to 1"),
        (["search", "x", "--site", "not a domain"], 2, "is not a domain"),
    ],
)
def test_errors_are_one_line_without_traceback(args: list[str], code: int, message: str) -> None:
    done = run(*args)
    assert done.returncode == code
    assert done.stdout == ""
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_provider_failure_exits_1(server: ScriptedServer) -> None:
    server.script("/search", Reply(403, "Forbidden"))
    done = run("search", "x", env={"SEARXNG_URL": server.url, "WEBSEARCH_PROVIDER": "searxng"})
    assert done.returncode == 1
    assert "search.formats" in done.stderr
    assert "Traceback" not in done.stderr


def test_providers_lists_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["providers"]) == 0
    out = capsys.readouterr().out
    assert "ddgs: configured" in out
    assert "brave: not configured (set BRAVE_API_KEY or pass brave_api_key=)" in out


def test_fetch_of_a_private_address_is_refused_unless_the_operator_allows_it(
    server: ScriptedServer,
) -> None:
    server.script("/notes", Reply(200, "local notes", {"Content-Type": "text/plain"}))
    refused = run("fetch", f"{server.url}/notes")
    assert refused.returncode == 2
    assert "not public" in refused.stderr
    flag = run("fetch", "--allow-private", f"{server.url}/notes")
    assert flag.returncode == 0, flag.stderr
    assert "local notes" in flag.stdout
    variable = run("fetch", f"{server.url}/notes", env={"WEBSEARCH_FETCH_ALLOW_PRIVATE": "1"})
    assert variable.returncode == 0, variable.stderr
    assert "local notes" in variable.stdout
    metadata = run("fetch", "--allow-private", "http://169.254.169.254/latest/meta-data/")
    assert metadata.returncode == 2
    assert "metadata" in metadata.stderr
    assert server.hits("/notes") == 2
