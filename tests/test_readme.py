"""Every code block in README.md and docs/ runs as written, offline; the markdown renders as
written; the README stays a five-minute read.

Every fenced block names its language. ``python`` blocks run in this process, ``bash``/``sh``
blocks under ``bash -euo pipefail``, ``json`` blocks must parse; ``text`` and ``console``
blocks are shown output, never run.

The ``readme_web`` fixture stands in for the internet the examples reach: a SearXNG-shaped
search on loopback (``SEARXNG_URL``), and an HTTPS server on loopback that serves the pages
the examples fetch, under their own names (``go.dev`` …) with a certificate from a throwaway
CA. Names resolve to it, its port answers for 443, and the fetch jail lets loopback through
(``WEBSEARCH_FETCH_ALLOW_PRIVATE``) — the same loopback servers the rest of the suite uses;
nothing else about the blocks is changed. A shell block runs in a subprocess, which gets the
environment (the venv's commands first on ``PATH``, ``SEARXNG_URL``) but not this process's
name resolution or trusted CA: it may search the fixture's SearXNG, not fetch ``go.dev``.

A block that cannot run here — it installs packages, starts a long-running server, needs a
real chat model and its key or the internet — says so on the line before it
(``<!-- readme-test: skip: … -->``), and is skipped with that reason. Every other block must
run.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import ssl
import subprocess
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
from markdown_it import MarkdownIt
from markdown_it.token import Token

from tests.support.http_server import Reply, scripted_server

# The MCP SDK's stdio client takes ``errlog=sys.stderr`` as a default argument, bound when it
# is first imported: imported here, it binds the test session's stderr, not the stream of the
# one test (closed after it) whose README block happened to import it first.

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: Every page the tests read: the README (GitHub renders it) and the docs site's pages.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
#: A newcomer reads the README in five minutes; the reference lives in docs/.
MAX_README_LINES = 200
#: The names the examples fetch from, all served by the fixture's HTTPS server.
HOSTS = ("go.dev", "www.go.dev", "docs.python.org", "example.com")
#: Languages whose blocks are run or parsed, and those that are shown output only.
RUN = {"python", "bash", "sh", "json"}
SHOWN = {"text", "console"}
#: A shell block gets this long; the slowest (a search through the CLI) takes seconds.
SHELL_TIMEOUT = 120

_MARK = re.compile(r"<!-- readme-test: (?P<mark>.*?) -->")


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _tokens(text: str) -> list[Token]:
    # CommonMark with GFM tables: what GitHub renders. The docs site's Python-Markdown is
    # stricter (lists and tables need a blank line before them, nested lists four spaces);
    # rendering_problems holds the pages to what reads the same in both.
    return MarkdownIt("commonmark").enable("table").parse(text)


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # the block's first line of code, 1-based
    lang: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def page_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    blocks = []
    for token in _tokens(text):
        if token.type != "fence" or token.map is None:
            continue
        start = token.map[0]
        mark = _MARK.fullmatch(lines[start - 1].strip()) if start > 0 else None
        skip = None
        if mark is not None:
            if not mark["mark"].startswith("skip: "):
                raise ValueError(f"{_name(path)}:{start}: unknown readme-test mark {mark[0]!r}")
            skip = mark["mark"][len("skip: ") :]
        lang = token.info.split()[0] if token.info.strip() else ""
        blocks.append(Block(_name(path), start + 2, lang, token.content, skip))
    fences = {block.line - 2 for block in blocks}
    for number, line in enumerate(lines):
        if _MARK.fullmatch(line.strip()) and number + 1 not in fences:
            raise ValueError(
                f"{_name(path)}:{number + 1}: a readme-test mark with no block after it"
            )
    return blocks


BLOCKS = [block for page in PAGES for block in page_blocks(page)]
PYTHON = [block for block in BLOCKS if block.lang == "python"]
SHELL = [block for block in BLOCKS if block.lang in ("bash", "sh")]
JSON = [block for block in BLOCKS if block.lang == "json"]


def _ids(blocks: list[Block]) -> list[str]:
    return [block.where for block in blocks]


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
    """The internet as the examples see it, on loopback (see the module docstring)."""
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
            raise AssertionError(f"a block fetched {host!r}: add it to HOSTS")
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


# -- the blocks ------------------------------------------------------------------------------


def test_the_readme_has_blocks_and_most_of_them_run() -> None:
    readme = [block for block in PYTHON if block.page == "README.md"]
    assert len(readme) >= 3, "the README's three quick starts are python blocks"
    assert all(block.skip is None for block in readme), "the README's quick starts run"
    assert sum(block.skip is None for block in PYTHON) >= 10
    assert any(block.skip is None for block in SHELL), "some shell block runs"
    first = next(block for block in BLOCKS if block.page == "README.md")
    assert "bash scripts/test.sh" in first.code, "the README's first block is the two commands"


@pytest.mark.parametrize("path", PAGES, ids=_name)
def test_every_block_names_its_language(path: Path) -> None:
    # An untagged fence renders without highlighting and is run by nothing here; an
    # indented code block is the same, by accident more often than not.
    found = []
    for token in _tokens(path.read_text(encoding="utf-8")):
        line = token.map[0] + 1 if token.map else 0
        if token.type == "code_block":
            found.append(f"line {line}: an indented code block: write it as a fenced block")
        elif token.type == "fence":
            lang = token.info.split()[0] if token.info.strip() else ""
            if not lang:
                found.append(f"line {line}: a fence without a language (```text for output)")
            elif lang not in RUN | SHOWN:
                found.append(
                    f"line {line}: ```{lang} is neither run ({sorted(RUN)}) nor shown output "
                    f"({sorted(SHOWN)})"
                )
    assert not found, f"{_name(path)}:\n" + "\n".join(found)


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_every_readme_block_is_valid_python_as_a_script(block: Block) -> None:
    # Skipped blocks too: a top-level await, or a stray prompt, fails here.
    compile(block.code, block.where, "exec")


def test_every_url_the_readme_fetches_is_served() -> None:
    for block in PYTHON:
        for url in re.findall(r"https?://[^\s\"')]+", block.code):
            host = urlsplit(url).hostname
            assert host in HOSTS or host in ("localhost", "127.0.0.1"), (block.where, url)


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_a_readme_block_runs_as_written(
    block: Block, readme_web: None, capfd: pytest.CaptureFixture[str]
) -> None:
    # At the descriptor level: a block that starts a subprocess (an MCP client does) hands
    # it this process's stderr, which must be a real file.
    if block.skip is not None:
        pytest.skip(block.skip)
    code = compile(block.code, block.where, "exec")
    exec(code, {"__name__": "__readme__"})  # noqa: S102 (the docs' own examples)
    printed = capfd.readouterr().out
    assert printed.strip(), "every runnable block shows its result"
    assert "Traceback" not in printed
    # What a page fetch prints is a fence around the page the fixture served.
    if "--- begin fetched content:" in printed:
        assert "the release adds iterators over maps" in printed


@pytest.mark.parametrize("block", SHELL, ids=_ids(SHELL))
def test_a_shell_block_runs_as_written(block: Block, readme_web: None) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=ROOT,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT,
        check=False,
    )
    said = f"{block.where} exited {ran.returncode}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    assert ran.returncode == 0, said
    assert ran.stdout.strip(), f"every runnable block shows its result\n{said}"
    assert "Traceback" not in ran.stdout + ran.stderr, said


@pytest.mark.parametrize("block", JSON, ids=_ids(JSON))
def test_a_json_block_parses(block: Block) -> None:
    try:
        json.loads(block.code)
    except ValueError as err:
        pytest.fail(f"{block.where}: not JSON: {err}")


# -- the pages -------------------------------------------------------------------------------


def test_the_readme_is_a_five_minute_read() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines (at most {MAX_README_LINES}): move the detail to docs/"
    )


#: What reads as a list marker at the start of a line: "2026. ", "1) ", "- ", "+ ", "* ".
_MARKER = re.compile(r"(?:\d{1,9}[.)]|[-+*])(?:[ \t]|$)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def rendering_problems(text: str) -> list[str]:
    """Where the markdown would not render as its author wrote it, on GitHub or the site.

    - A line starting with ``|`` that is not part of a table (a delimiter row with the wrong
      number of cells, a wrapped line), or a table right after a line of prose.
    - A list that a wrapped line of prose started: an ordered list not numbered from 1
      ("... released in\\n2026. The ..." after a blank line), a list right after a line of
      prose ("...\\n- the rest"), or a line inside a paragraph that starts like a list item
      (which CommonMark keeps as text and another renderer may not). A real list has a blank
      line before it, and a nested one is indented four spaces under its item.
    """
    lines = text.splitlines()
    tokens = _tokens(text)
    prose: set[int] = set()  # lines of paragraphs (a list item's text included)
    fixed: set[int] = set()  # lines of code and HTML blocks, never rendered as markdown
    tables: set[int] = set()
    for token in tokens:
        if token.map is not None:
            lines_of = set(range(*token.map))
            if token.type == "paragraph_open":
                prose |= lines_of
            elif token.type in ("fence", "code_block", "html_block"):
                fixed |= lines_of
            elif token.type == "table_open":
                tables |= lines_of
    found: list[str] = []

    def note(number: int, what: str) -> None:
        found.append(f"line {number + 1}: {what}: {lines[number].strip()[:70]!r}")

    items: list[Token] = []
    for token in tokens:
        if token.type == "list_item_close":
            items.pop()
        if token.map is None:
            continue
        start, end = token.map
        if token.type == "table_open" and start - 1 in prose:
            note(start, "a table right after a line of prose (the site reads it as prose)")
        elif token.type == "list_item_open":
            items.append(token)
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            if token.type == "ordered_list_open" and token.attrs.get("start", 1) != 1:
                note(start, "an ordered list not numbered from 1 (a wrapped line?)")
            if items:
                parent = lines[items[-1].map[0]] if items[-1].map else ""
                if _indent(lines[start]) - _indent(parent) < 4:
                    note(start, "a nested list indented less than 4 spaces under its item")
            elif start - 1 in prose:
                note(start, "a list right after a line of prose, with no blank line before it")
        elif token.type == "paragraph_open":
            for number in range(start + 1, end):
                if _MARKER.match(lines[number].lstrip(" \t>")):
                    note(number, "a line of a paragraph starts like a list item (rewrap it)")
    for number, line in enumerate(lines):
        if line.startswith("|") and number not in tables and number not in fixed:
            note(number, "starts with '|' but is not part of a table")
    return found


@pytest.mark.parametrize("path", PAGES, ids=_name)
def test_the_markdown_renders_as_written(path: Path) -> None:
    found = rendering_problems(path.read_text(encoding="utf-8"))
    assert not found, f"{_name(path)}:\n" + "\n".join(found)


ACCIDENTS = {
    "a year wrapped to a line's start": "Prices as of December\n2026. Tokens are extra.\n",
    "a year starting a paragraph": "Intro.\n\n2026. Tokens are extra.\n",
    "a dash wrapped to a line's start": "It costs one request\n- and one more for the page.\n",
    "a plus wrapped to a line's start": "Two engines\n+ one more.\n",
    "a one wrapped to a line's start": "It is not 5 or\n1. The schema accepts it.\n",
    "a wrapped line inside a list item": "- one price as of\n  2026. Tokens are extra.\n",
    "a dash wrapped inside a list item": "- one request\n  - and one more.\n",
    "a list with no blank line before it": "The doors:\n- search\n- scrape\n",
    "a table with a short delimiter row": "| a | b |\n|---|\n| 1 | 2 |\n",
    "a wrapped line starting with a bar": "Pipe it to head\n| or to less.\n",
    "a table right after text": "The table:\n| a | b |\n|---|---|\n| 1 | 2 |\n",
}
REAL = {
    "a list": "Text.\n\n- one\n- two\n",
    "an ordered list": "Text.\n\n1. one\n2. two\n",
    "a nested list": "Text.\n\n- one\n    - inner\n    - more\n- two\n",
    "a table": "Text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "a bar in code": "Text.\n\n```text\n| not a table\n```\n",
    "numbers in prose": "It took 1.5 s, or\n2.5 s at most, in 2026 and 2027.\n",
}


@pytest.mark.parametrize("text", ACCIDENTS.values(), ids=ACCIDENTS.keys())
def test_the_rendering_rule_catches_a_wrap_accident(text: str) -> None:
    assert rendering_problems(text)


@pytest.mark.parametrize("text", REAL.values(), ids=REAL.keys())
def test_the_rendering_rule_leaves_real_lists_and_tables_alone(text: str) -> None:
    assert rendering_problems(text) == []


def test_the_readme_links_to_pages_and_headings_that_exist() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        page = ROOT / path
        assert page.is_file(), f"README.md links to {target}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"README.md links to {target}: no such heading"
