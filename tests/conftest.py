"""Shared fixtures: a scripted loopback server, and the VCR settings every cassette obeys.

Cassettes replay provider APIs (``record_mode="none"`` by default: a missing cassette fails,
nothing reaches the internet). Re-record with real keys, see tests/cassettes/README.md.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.http_server import Reply, ScriptedServer, scripted_server
from websearch_core.config import ENVIRONMENT

#: Header names whose values are credentials; VCR drops them before a cassette is written.
SECRET_HEADERS = (
    "x-subscription-token",
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "cookie",
    "set-cookie",
)
#: Body fields that carry a credential in some provider APIs (Tavily's older ``api_key``).
SECRET_FIELDS = ("api_key", "apiKey", "key", "token")

IN_CI = os.environ.get("CI", "").lower() == "true"

# Read before any test runs (the autouse fixture below clears them): real keys are only used
# to re-record cassettes; otherwise a canary stands in, and it must never reach a cassette.
BRAVE_KEY = os.environ.get("BRAVE_API_KEY") or "canary-brave-key-5f0c2a9d8e7b6a51"
TAVILY_KEY = os.environ.get("TAVILY_API_KEY") or "tvly-canary-3b8d1e6f9a2c4d7e"
#: The grounded vendors' keys, by provider name.
VENDOR_KEYS = {
    "anthropic": os.environ.get("ANTHROPIC_API_KEY") or "canary-anthropic-7c1d0e9f8a2b",
    "openai": os.environ.get("OPENAI_API_KEY") or "canary-openai-4e5f6a7b8c9d",
    "gemini": os.environ.get("GEMINI_API_KEY") or "canary-gemini-1a2b3c4d5e6f",
    "openrouter": os.environ.get("OPENROUTER_API_KEY") or "canary-openrouter-9e8d7c6b5a4f",
}


def skip_or_fail(reason: str) -> None:
    """Skip locally when a server cannot run here; under CI=true that is a failure."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: this test must run)")
    pytest.skip(reason)


def _scrub_body(request: Any) -> Any:
    body = request.body
    if not body:
        return request
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return request
    if isinstance(data, dict) and any(f in data for f in SECRET_FIELDS):
        for name in SECRET_FIELDS:
            data.pop(name, None)
        request.body = json.dumps(data).encode()
    return request


def _json_body(r1: Any, r2: Any) -> None:
    """Bodies match when equal as JSON (key order aside), secrets removed on both sides."""

    def parsed(request: Any) -> Any:
        if not request.body:
            return None
        try:
            data = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            return request.body
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in SECRET_FIELDS}
        return data

    assert parsed(r1) == parsed(r2), f"request bodies differ: {parsed(r1)!r} != {parsed(r2)!r}"


def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    vcr.register_matcher("json_body", _json_body)


@pytest.fixture(scope="session")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": list(SECRET_HEADERS),
        # Mojeek takes its key in the URL: it is dropped from every recorded request.
        "filter_query_parameters": ["api_key"],
        "before_record_request": _scrub_body,
        "decode_compressed_response": True,
        # The port is left out: the SearXNG cassettes are recorded from a searx on an
        # ephemeral loopback port.
        "match_on": ["method", "scheme", "host", "path", "query", "json_body"],
    }


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with scripted_server() as running:
        yield running


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _loopback(host: object) -> bool:
    text = host.decode() if isinstance(host, bytes) else str(host)
    return text in _LOOPBACK_NAMES or text.startswith("127.")


def _audit_connects(event: str, args: tuple[Any, ...]) -> None:
    """Every socket connect and name lookup in this process, checked for loopback.

    An audit hook sees what the monkeypatches below cannot: a raw ``socket.connect``, a
    connect from a library's own socket code, a lookup made during a session fixture. Only
    code outside Python (ddgs's Rust HTTP client) gets past it; the network namespace that
    scripts/test.sh runs the suite in stops that too.
    """
    if event == "socket.connect":
        sock, address = args
        family = getattr(sock, "family", None)
        if family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
            raise OSError(f"test tried to connect to {address[0]!r}: tests must stay on loopback")
    elif event == "socket.getaddrinfo" and args[0] is not None and not _loopback(args[0]):
        raise OSError(f"test tried to resolve {args[0]!r}: tests must stay on loopback")


sys.addaudithook(_audit_connects)

#: Where the suite runs: "netns" inside scripts/test.sh's namespace (only loopback exists).
OFFLINE = os.environ.get("WEBSEARCH_TESTS_OFFLINE", "")


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the internet: name lookups and sync connects off loopback fail loudly.

    Tests that need a public name pass their own resolver and a network backend below the
    jail that never opens a socket to it.
    """
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.create_connection

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(host):
            raise OSError(f"test tried to resolve {host!r}: tests must stay on loopback")
        return real_getaddrinfo(host, *args, **kwargs)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(address[0]):
            raise OSError(f"test tried to connect to {address[0]!r}: tests must stay on loopback")
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests configure providers explicitly; a developer's own keys and settings must not
    leak in (every variable ``Settings`` reads)."""
    for names in ENVIRONMENT.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


GO_PAGE = b"<html><head><title>Go 1.26</title></head><body><h1>Go 1.26</h1><p>Iterators.</p></body>"


@pytest.fixture
def site(server: ScriptedServer) -> ScriptedServer:
    """A small web on loopback for the adapters: a SearXNG-shaped /search with three results,
    two pages, and a dead link."""
    results = [
        {"title": "Go 1.26 Release Notes", "url": f"{server.url}/go", "content": "Go 1.26 adds"},
        {"title": "Blog", "url": f"{server.url}/blog", "content": "Announcing Go 1.26"},
        {"title": "Gone", "url": f"{server.url}/gone", "content": "a dead link"},
    ]
    server.script("/search", Reply(200, {"results": results}))
    server.script("/go", Reply(200, GO_PAGE, {"Content-Type": "text/html; charset=utf-8"}))
    server.script("/blog", Reply(200, b"<p>Blog post.</p>", {"Content-Type": "text/html"}))
    server.script("/gone", Reply(404, b"not here", {"Content-Type": "text/plain"}))
    return server
