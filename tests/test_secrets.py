"""A canary key must never reach a repr, str, log line, exception or cassette."""

from __future__ import annotations

import base64
import contextlib
import logging
import re
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SECRET_HEADERS
from tests.support.http_server import Reply, ScriptedServer
from websearch_core import AuthenticationError, ConfigurationError, WebSearch, WebSearchError
from websearch_core.config import SecretURL
from websearch_core.redact import Redactor, url_credentials

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


# -- the redactor and the masked URL, unit by unit ----------------------------------------------


def test_a_secret_shorter_than_four_characters_is_left_alone() -> None:
    assert Redactor(["abc"]).redact("abc and abcd") == "abc and abcd"
    assert Redactor(["abcd"]).redact("abc and abcd") == "abc and [redacted]"


def test_a_secret_inside_a_longer_one_does_not_leave_a_tail() -> None:
    assert Redactor(["abcd", "abcdefgh"]).redact("key=abcdefgh") == "key=[redacted]"


@pytest.mark.parametrize(
    "key", ["0123456789ABCDEF0123", "ABCDEFGHIJKLMNOPQRST", "zzzzzzzzzzzzzzzzzzzz"]
)
def test_an_echoed_key_is_redacted_whatever_it_starts_with(key: str) -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text=f"bad token {request.headers['x-subscription-token']}")

    client = httpx.Client(transport=httpx.MockTransport(echo))
    ws = WebSearch("brave", brave_api_key=key, http_client=client)
    with pytest.raises(WebSearchError) as caught:
        ws.search("q")
    assert key not in str(caught.value)
    assert "bad token [redacted]" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "secrets", "shown"),
    [
        ("http://searx.lan:8888", [], "http://searx.lan:8888"),
        ("http://admin:hunter22@searx.lan", ["hunter22", "admin:hunter22"], "http://***@searx.lan"),
        ("https://tok3n-abcdef@searx.lan/x", ["tok3n-abcdef"], "https://***@searx.lan/x"),
        ("http://a%40b:p%2Fw0rd@h", ["p%2Fw0rd", "p/w0rd", "a@b:p/w0rd"], "http://***@h"),
    ],
)
def test_credentials_in_an_operator_url_are_masked_and_known(
    url: str, secrets: list[str], shown: str
) -> None:
    assert SecretURL(url)._display() == shown
    assert repr(SecretURL(url)) == f"SecretURL('{shown}')"
    assert set(secrets) <= set(url_credentials(url))
    if not secrets:
        assert url_credentials(url) == []


def test_a_url_that_cannot_be_read_is_all_secret() -> None:
    broken = "http://user:pw12@[::1"
    assert SecretURL(broken)._display() == "**********"
    assert url_credentials(broken) == [broken]


def test_a_token_in_the_user_part_of_a_base_url_is_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = "tok-0f9e8d7c6b5a"

    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text=f"who is {request.headers.get('authorization')} {token}")

    client = httpx.Client(transport=httpx.MockTransport(echo))
    ws = WebSearch("searxng", searxng_url=f"https://{token}@searx.lan", http_client=client)
    with pytest.raises(WebSearchError) as caught:
        ws.search("q")
    assert token not in str(caught.value)
    assert token not in repr(ws.settings)


#: Where each grounded vendor takes its key: a header, never the URL.
VENDOR_KEY_HEADERS = {
    "openai": ("authorization", f"Bearer {CANARY}"),
    "anthropic": ("x-api-key", CANARY),
    "gemini": ("x-goog-api-key", CANARY),
    "openrouter": ("authorization", f"Bearer {CANARY}"),
}


@pytest.mark.parametrize("vendor", sorted(VENDOR_KEY_HEADERS))
def test_vendor_key_is_never_shown_and_never_in_a_url(
    vendor: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sent: list[httpx.Request] = []

    def refusing_and_echoing(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(401, json={"error": {"message": f"invalid key {CANARY}"}})

    client = httpx.Client(transport=httpx.MockTransport(refusing_and_echoing))
    ws = WebSearch(vendor, **{f"{vendor}_api_key": CANARY}, http_client=client)
    seen = [repr(ws), str(ws), repr(ws.settings), ws.settings.model_dump_json()]
    seen += [repr(p) for p in ws._configured]
    with pytest.raises(AuthenticationError) as caught:
        ws.search("what is my key")
    error = caught.value
    seen += [str(error), repr(error), repr(error.__dict__)]
    seen += [record.getMessage() for record in caplog.records]
    assert not [text for text in seen if CANARY in text]
    assert sent
    assert all(CANARY not in str(r.url) for r in sent)
    header, value = VENDOR_KEY_HEADERS[vendor]
    assert sent[0].headers[header] == value


def test_a_vendor_answer_that_echoes_the_key_is_redacted() -> None:
    echo = {
        "choices": [
            {
                "message": {
                    "content": f"Your key is {CANARY}.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url_citation": {
                                "url": f"https://e.org/?k={CANARY}",
                                "title": CANARY,
                                "start_index": 0,
                                "end_index": 4,
                            },
                        }
                    ],
                }
            }
        ]
    }
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=echo)))
    ws = WebSearch("openrouter", openrouter_api_key=CANARY, http_client=client)
    response = ws.search("q", include_answer=True)
    assert CANARY not in response.model_dump_json() + response.render()
    assert "[redacted]" in response.render()


def chain_text(error: BaseException) -> str:
    """Everything an exception carries along its chain, as a traceback or a debugger shows it."""
    seen: list[str] = []
    current: BaseException | None = error
    while current is not None and len(seen) < 20:
        seen += [repr(current), str(current), repr(current.args)]
        current = current.__cause__ or current.__context__
    return "\n".join(seen)


_SECRET_CHARS = st.characters(min_codepoint=0x30, max_codepoint=0x7A, categories=["L", "N"])


@settings(max_examples=60, deadline=None)
@given(
    password=st.text(_SECRET_CHARS, min_size=8, max_size=24),
    setting=st.sampled_from(
        ["searxng_url", "brave_base_url", "tavily_base_url", "mojeek_base_url", "openai_base_url"]
    ),
    shape=st.sampled_from(
        [
            "http://user:{p}@host.example/?q=1",  # a query: not a base URL
            "http://user:{p}@host.example/#frag",
            "ftp://user:{p}@host.example/",
            "http://user:{p}@host.example:99999/",
            "http://user:{p}@[::1/",
        ]
    ),
)
def test_no_error_chains_an_exception_holding_a_secret(
    password: str, setting: str, shape: str
) -> None:
    # pydantic's ValidationError carries the whole input; a ``raise ... from None`` only hides
    # it from a printed traceback. Nothing raised may keep it in ``__context__``/``__cause__``.
    url = shape.format(p=password)
    with pytest.raises(WebSearchError) as caught:
        WebSearch("searxng" if setting == "searxng_url" else "auto", **{setting: url})
    assert password not in chain_text(caught.value)


def test_a_proxy_password_is_in_no_error_chain() -> None:
    for proxy in ("socks5://u:pw-canary-123456@proxy.example:1080", "http://u:pw-canary-123456@"):
        with pytest.raises(WebSearchError) as caught:
            WebSearch(fetch_proxy=proxy).fetch("https://example.com/")
        assert "pw-canary-123456" not in chain_text(caught.value)


_B64 = re.compile(r"[A-Za-z0-9+/_-]{4,}={0,2}")


def _decodings(text: str) -> list[bytes]:
    """Every way the base64-looking runs of ``text`` decode (each alphabet, each alignment)."""
    found = []
    for run in _B64.findall(text):
        for alphabet in (run, run.replace("-", "+").replace("_", "/")):
            body = alphabet.rstrip("=")
            for start in range(4):
                chunk = body[start:]
                chunk += "=" * (-len(chunk) % 4)
                with contextlib.suppress(ValueError):
                    found.append(base64.b64decode(chunk))
    return found


@settings(max_examples=200, deadline=None)
@given(
    secret=st.text(_SECRET_CHARS, min_size=8, max_size=40),
    before=st.binary(max_size=5),
    after=st.binary(max_size=5),
    urlsafe=st.booleans(),
)
def test_a_secret_in_base64_is_redacted_wherever_it_sits(
    secret: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    # HTTP Basic auth sends user:password in base64, and an engine may echo it back.
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    echoed = f"Authorization: Basic {encode(before + secret.encode() + after).decode()}"
    redacted = Redactor([secret]).redact(echoed)
    assert not any(secret.encode() in decoded for decoded in _decodings(redacted))


def test_basic_auth_echoed_by_an_engine_is_redacted_everywhere(server: ScriptedServer) -> None:
    # The operator's SearXNG URL carries user:password (sent as Basic auth); the engine echoes
    # the header it got in a result. Nothing the session shows holds it, in any form.
    server.script("/search", Reply(200, {"results": []}))
    ws = WebSearch("searxng", searxng_url=f"http://admin:pw-{CANARY}@{server.url[7:]}")
    ws.search("warm")
    header = server.seen[-1].headers.get("authorization", "")  # what the engine was sent
    assert header.startswith("Basic ")
    echoed = {"url": "https://a.example/", "title": header, "content": f"you sent {header}"}
    server.script("/search", Reply(200, {"results": [echoed]}))
    response = ws.search("echo")
    for shown in (response.render(), response.model_dump_json(), repr(response)):
        assert CANARY not in shown
        assert header.removeprefix("Basic ") not in shown


def test_a_key_from_a_secrets_file_is_stripped_and_a_mangled_one_refused() -> None:
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"web": {"results": []}})

    client = httpx.Client(transport=httpx.MockTransport(record))
    WebSearch("brave", brave_api_key=f"{CANARY}\n", http_client=client).search("q")
    assert sent[0].headers["x-subscription-token"] == CANARY
    for mangled in (f"{CANARY}é", f"{CANARY[:10]}\x00{CANARY[10:]}", f"{CANARY}\u200b"):
        with pytest.raises(ConfigurationError, match="check it was copied whole") as caught:
            WebSearch("brave", brave_api_key=mangled)
        assert CANARY[:10] not in chain_text(caught.value)
