"""``websearch search``: the menu on stdout, errors as one line and a non-zero exit."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

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
    assert "brave: not configured (set BRAVE_API_KEY)" in out


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


# -- the command's edges: unwritable output, signals, threads left behind, bad listen --------


def _searxng(server: ScriptedServer) -> dict[str, str]:
    return {"SEARXNG_URL": server.url, "WEBSEARCH_PROVIDER": "searxng"}


@pytest.mark.parametrize("where", ["a closed stdout", "a full disk"])
def test_output_that_cannot_be_written_is_one_line(server: ScriptedServer, where: str) -> None:
    server.script("/search", Reply(200, RESULTS))
    environ = {**os.environ, **_searxng(server)}
    redirect = ">&-" if where == "a closed stdout" else ">/dev/full"
    done = subprocess.run(  # noqa: S602 - our own interpreter, our own arguments
        f"{sys.executable} -m websearch_core.cli search asyncio {redirect}",
        shell=True,
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("websearch: error: the output")


def _started(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "websearch_core.cli", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def test_ctrl_c_ends_a_search_at_once(server: ScriptedServer) -> None:
    # A blend whose engine takes 30 s to answer (its deadline is 20 s): Ctrl-C ends the
    # process at once, with 130, instead of when the engine's thread gives up.
    server.script("/res/v1/web/search", Reply(200, {"web": {"results": []}}, delay_s=30))
    env = {"BRAVE_API_KEY": "fake-brave-key-0123456789", "BRAVE_BASE_URL": server.url,
           "WEBSEARCH_PROVIDER": "blend", "WEBSEARCH_BLEND_ENGINES": "brave",
           "WEBSEARCH_BLEND_TIMEOUT": "20"}  # fmt: skip
    process = _started(["search", "slow"], env)
    try:
        for _ in range(200):  # until the engine has the request
            if server.seen:
                break
            time.sleep(0.05)
        assert server.seen
        process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        assert process.wait(timeout=10) == 130
        assert time.monotonic() - stopped < 3  # generous; it was 18 s
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in process.stderr.read()


def test_ctrl_c_ends_an_idle_mcp_server() -> None:
    process = _started(["mcp"], {})
    try:
        time.sleep(1.5)  # started, waiting on stdin
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 130
    finally:
        process.kill()
        process.wait()


_STUBBORN = """
import time, ddgs
class Stubborn:
    def __init__(self, *args, **kwargs): pass
    def text(self, query, **options):
        time.sleep(20)  # ignores the timeout it was given
        return []
ddgs.DDGS = Stubborn
from websearch_core.cli import entry
entry()
"""


def test_a_blocking_engine_that_ignores_its_timeout_does_not_keep_the_process() -> None:
    # Stands in for ddgs: its Rust client reaches hard-wired public hosts (tests/support).
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _STUBBORN, "search", "q", "--provider", "ddgs"],
        capture_output=True,
        text=True,
        env={**os.environ, "WEBSEARCH_TIMEOUT": "1"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "no answer within 1 s" in done.stderr
    assert time.monotonic() - started < 1 + 8  # generous: the thread sleeps 20 s


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--port", "99999"], "'99999' is not a port"),
        (["serve", "--port", "-1"], "'-1' is not a port"),
        (["serve", "--header-timeout", "nan"], "'nan' is not a number of seconds"),
        (["serve", "--body-timeout", "inf"], "'inf' is not a number of seconds"),
        (["serve", "--host", "no-such-host.invalid"], "cannot listen on 'no-such-host.invalid'"),
        (["mcp", "--http", "--port", "70000"], "'70000' is not a port"),
    ],
)
def test_serve_refuses_what_it_cannot_listen_on_in_a_line(args: list[str], message: str) -> None:
    done = run(*args, env={"WEBSEARCH_API_KEY": "a-key-for-the-test"})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert message in line


def test_a_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for args in (["serve"], ["mcp", "--http"]):
            done = run(*args, "--port", str(port), env={"WEBSEARCH_API_KEY": "a-test-key"})
            assert done.returncode == 2, done.stderr
            (line,) = done.stderr.splitlines()
            assert f"cannot listen on 127.0.0.1:{port} (Address already in use)" in line
