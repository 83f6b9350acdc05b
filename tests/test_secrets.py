"""A canary key must never reach a repr, str, log line, exception or cassette."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import httpx
import pytest

from tests.conftest import SECRET_HEADERS
from websearch_core import AuthenticationError, WebSearch, WebSearchError

CANARY = "canary-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
CASSETTES = Path(__file__).parent / "cassettes"


def refusing(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        401, json={"detail": {"error": "Unauthorized: missing or invalid API key."}}
    )


def test_canary_key_is_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    client = httpx.Client(transport=httpx.MockTransport(refusing))
    ws = WebSearch("tavily", tavily_api_key=CANARY, brave_api_key=CANARY, http_client=client)
    seen = [repr(ws), str(ws), repr(ws.settings), str(ws.settings), ws.settings.model_dump_json()]
    seen += [repr(p) for p in ws._configured]
    with pytest.raises(AuthenticationError) as caught:
        ws.search("what is my key")
    error = caught.value
    seen += [str(error), repr(error), repr(error.__dict__), str(error.__cause__)]
    for provider in ("brave", "tavily"):
        try:
            ws.search("again", provider=provider)
        except WebSearchError as exc:
            seen.append(str(exc))
    seen += [record.getMessage() for record in caplog.records]
    assert caplog.records, "the session should have logged something to check"
    assert not [text for text in seen if CANARY in text]


def test_bad_configuration_error_does_not_echo_inputs() -> None:
    with pytest.raises(WebSearchError) as caught:
        WebSearch(brave_api_key=CANARY, timeout=-1)
    assert CANARY not in str(caught.value)
    assert "timeout" in str(caught.value)


def test_key_is_never_sent_in_the_url() -> None:
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"results": [], "web": {"results": []}})

    client = httpx.Client(transport=httpx.MockTransport(record))
    ws = WebSearch(brave_api_key=CANARY, tavily_api_key=CANARY, http_client=client)
    ws.search("x", provider="brave")
    ws.search("x", provider="tavily")
    assert len(sent) == 2
    assert all(CANARY not in str(r.url) for r in sent)
    assert sent[0].headers["x-subscription-token"] == CANARY
    assert sent[1].headers["authorization"] == f"Bearer {CANARY}"


# Anything shaped like a credential: vendor prefixes, bearer tokens, long opaque values under a
# key-ish name. The placeholders our own builders write are allowed by name.
_VENDOR = re.compile(r"sk-ant-[\w-]{10,}|sk-[A-Za-z0-9]{20,}|tvly-[\w-]{10,}|BSA[\w-]{20,}")
_NAMED = re.compile(r"(?i)(api[_-]?key|token|secret|password)\W{1,4}([\w-]{16,})")
_ALLOWED = {"placeholder-not-a-key"}


def scan_for_keys(folder: Path) -> list[str]:
    """Every cassette under ``folder`` that holds something shaped like a credential."""
    leaks = []
    for path in sorted(folder.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        lowered = text.lower()
        for header in SECRET_HEADERS:
            if f"{header}:" in lowered:
                leaks.append(f"{path.name}: header {header}")
        for match in _VENDOR.finditer(text):
            leaks.append(f"{path.name}: {match.group(0)[:12]}…")
        for match in _NAMED.finditer(text):
            if match.group(2) not in _ALLOWED:
                leaks.append(f"{path.name}: {match.group(1)}=…")
        if "canary" in lowered:
            leaks.append(f"{path.name}: a test canary key")
    return leaks


def test_no_cassette_holds_anything_like_a_key() -> None:
    assert len(list(CASSETTES.rglob("*.yaml"))) >= 7
    assert scan_for_keys(CASSETTES) == []


@pytest.mark.parametrize(
    ("planted", "found"),
    [
        ("headers:\n  x-subscription-token:\n  - abc\n", "header x-subscription-token"),
        ("body: token sk-ant-api03-abcdefghijklmnop\n", "sk-ant-api03"),
        ('body: \'{"api_key": "0123456789abcdef0123"}\'\n', "api_key=…"),
        ("uri: https://api.example/?q=x&password=hunter2hunter2hunter2\n", "password=…"),
        ("headers:\n  authorization:\n  - Bearer tvly-canary-3b8d1e6f9a2c4d7e\n", "canary"),
    ],
)
def test_the_cassette_scan_catches_a_planted_key(tmp_path: Path, planted: str, found: str) -> None:
    (tmp_path / "clean.yaml").write_text("interactions: []\n", encoding="utf-8")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "leaky.yaml").write_text(planted, encoding="utf-8")
    leaks = scan_for_keys(tmp_path)
    assert leaks
    assert all(leak.startswith("leaky.yaml: ") for leak in leaks)
    assert any(found in leak for leak in leaks), leaks


def test_proxy_password_is_not_shown() -> None:
    ws = WebSearch(fetch_proxy=f"http://user:{CANARY}@127.0.0.1:3128")
    assert CANARY not in repr(ws.settings)
    assert CANARY not in ws.settings.model_dump_json()
