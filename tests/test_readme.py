"""Every Python block in README.md runs as written, offline.

The ``readme_web`` fixture stands in for the internet the README's examples reach: a
SearXNG-shaped search on loopback (``SEARXNG_URL``), and an HTTPS server on loopback that
serves the pages the README fetches, under their own names (``go.dev`` …) with a certificate
from a throwaway CA. Names resolve to it, its port answers for 443, and the fetch jail lets
loopback through (``WEBSEARCH_FETCH_ALLOW_PRIVATE``) — the same loopback servers the rest of
the suite uses; nothing else about the blocks is changed.

A block that needs what no test can have — a real chat model and its key — says so in the
README itself, on the line before it (``<!-- readme-test: skip: … -->``), and is skipped
with that reason. Every other block must run.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpcore
import mcp.client.stdio  # noqa: F401  (see below)
import pytest
import trustme

from tests.support.http_server import Reply, scripted_server

# The MCP SDK's stdio client takes ``errlog=sys.stderr`` as a default argument, bound when it
# is first imported: imported here, it binds the test session's stderr, not the stream of the
# one test (closed after it) whose README block happened to import it first.

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<mark>[^\n]*?) -->\n)?```python\n(?P<code>.*?)```", re.DOTALL
)
#: The names the README's examples fetch from, all served by the fixture's HTTPS server.
HOSTS = ("go.dev", "www.go.dev", "docs.python.org", "example.com")


@dataclass(frozen=True)
class Block:
    line: int
    code: str
    skip: str | None


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in _BLOCK.finditer(text):
        mark = match.group("mark")
        if mark is not None and not mark.startswith("skip: "):
            raise ValueError(f"README.md: unknown readme-test mark {mark!r}")
        line = text.count("\n", 0, match.start("code")) + 1
        blocks.append(Block(line, match.group("code"), mark[6:] if mark else None))
    return blocks


BLOCKS = readme_blocks()

PAGE = """<!doctype html><html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a></nav><article><h1>{title}</h1>
<p>{title}: the release adds iterators over maps, a faster parser, and clearer errors in
the toolchain, with notes on upgrading existing modules.</p></article></body></html>"""


RESULTS = {
    "results": [
        {"title": t, "url": u, "content": c}
        for t, u, c in (
            ("Go 1.26 Release Notes", "https://go.dev/doc/go1.26", "Go 1.26 adds"),
            ("The Go Blog", "https://go.dev/blog/", "Announcing Go 1.26"),
            ("asyncio", "https://docs.python.org/3/library/asyncio.html", "Asynchronous I/O"),
        )
    ]
}


@pytest.fixture
def readme_web(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The internet as the README's blocks see it, on loopback (see the module docstring)."""
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*HOSTS).configure_cert(server_context)
    with scripted_server() as search, scripted_server(server_context) as pages:
        search.script("/search", Reply(200, RESULTS))
        html = {"Content-Type": "text/html; charset=utf-8"}
        pages.script("/doc/go1.26", Reply(200, PAGE.format(title="Go 1.26 Release Notes"), html))
        pages.script("/blog/", Reply(200, PAGE.format(title="The Go Blog"), html))
        pages.script("/3/library/asyncio.html", Reply(200, PAGE.format(title="asyncio"), html))
        monkeypatch.setenv("SEARXNG_URL", search.url)
        monkeypatch.setenv("WEBSEARCH_FETCH_ALLOW_PRIVATE", "1")
        # The installed `websearch` command is on PATH, as in the venv a user activated.
        bin_dir = str(Path(sys.executable).parent)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        _serve_hosts_from(pages.port, ca, monkeypatch)
        yield


def _serve_hosts_from(port: int, ca: trustme.CA, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names resolve to loopback, port 443 there is ``port``, and the CA is trusted."""

    def resolve(host: str, _port: int) -> list[Any]:
        if host not in HOSTS:
            raise AssertionError(f"a README block fetched {host!r}: add it to HOSTS")
        return [ipaddress.ip_address("127.0.0.1")]

    def redirected(connect: Any) -> Any:
        def connect_tcp(self: Any, host: str, to: int, *args: Any, **kwargs: Any) -> Any:
            return connect(
                self, host, port if (host, to) == ("127.0.0.1", 443) else to, *args, **kwargs
            )

        return connect_tcp

    def trusting(verify: Any) -> ssl.SSLContext:
        context = ssl.create_default_context()
        ca.configure_trust(context)
        return context

    monkeypatch.setattr("websearch_core.fetch.service.system_resolver", resolve)
    monkeypatch.setattr("websearch_core.net.transport._ssl_context", trusting)
    for backend in (httpcore.SyncBackend, httpcore.AnyIOBackend):
        monkeypatch.setattr(backend, "connect_tcp", redirected(backend.connect_tcp))


def test_the_readme_has_blocks_and_most_of_them_run() -> None:
    assert len(BLOCKS) >= 5
    assert sum(block.skip is None for block in BLOCKS) >= 4


@pytest.mark.parametrize("block", BLOCKS, ids=[f"README.md:{b.line}" for b in BLOCKS])
def test_every_readme_block_is_valid_python_as_a_script(block: Block) -> None:
    # Skipped blocks too: a top-level await, or a stray prompt, fails here.
    compile(block.code, f"README.md:{block.line}", "exec")


def test_every_url_the_readme_fetches_is_served() -> None:
    for block in BLOCKS:
        for url in re.findall(r"https?://[^\s\"')]+", block.code):
            host = urlsplit(url).hostname
            assert host in HOSTS or host in ("localhost", "127.0.0.1"), (block.line, url)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"README.md:{b.line}" for b in BLOCKS])
def test_a_readme_block_runs_as_written(
    block: Block, readme_web: None, capfd: pytest.CaptureFixture[str]
) -> None:
    # At the descriptor level: a block that starts a subprocess (an MCP client does) hands
    # it this process's stderr, which must be a real file.
    if block.skip is not None:
        pytest.skip(block.skip)
    code = compile(block.code, f"README.md:{block.line}", "exec")
    exec(code, {"__name__": "__readme__"})  # noqa: S102 (the README's own examples)
    printed = capfd.readouterr().out
    assert printed.strip(), "every runnable README block shows its result"
    assert "Traceback" not in printed
    # What a page fetch prints is a fence around the page the fixture served.
    if "--- begin fetched content:" in printed:
        assert "the release adds iterators over maps" in printed
