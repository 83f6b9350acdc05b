"""Properties that hold for every input, checked on generated ones (hypothesis).

What this file proves:

- the URL jail (``jail.parse_url``) only ever raises ``URLRefusedError``, and what it accepts
  is an http(s) URL httpx can send and read back, in a canonical form the jail reads the same;
- the charset decoder (``content.decode_text``) never raises and only ever decodes with a real
  text codec, whatever charset a page declares; ``content.convert`` never raises at all, and
  pretty-printed JSON stays within a linear factor of the body;
- the fence (``render.render_page``) cannot be closed or broken from inside: no line in it is
  a marker in any disguise, every line break is ``"\\n"`` and no control character survives;
- ``domains.normalise_domain`` returns a canonical DNS name or raises ``ValueError``;
- the extractor never raises on tag soup; the nesting model (``extract.nesting.flatten``) keeps
  lexbor's real tree within a bounded factor of its limit, on tag soup and on markup a model
  can misread (reopened formatting elements, raw-text names that are not raw text there);
  flattening keeps every word; and extraction of pathological nesting finishes;
- ``text.clean_text`` and ``text.one_line`` leave one kind of line break and no controls.

Nothing here touches the network: every function under test is pure. One test runs the
extractor in child processes, so that a parse that never ends can be stopped.
"""

from __future__ import annotations

import codecs
import datetime as dt
import encodings.aliases
import string
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from ipaddress import IPv4Address
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_core import URLRefusedError
from websearch_core.domains import normalise_domain
from websearch_core.extract import ExtractMode, extract
from websearch_core.extract.nesting import flatten
from websearch_core.fetch.content import _PAGE_CODECS, convert, decode_text
from websearch_core.models import Page
from websearch_core.net.jail import MAX_URL_CHARS, JailPolicy, Target, is_public, parse_url
from websearch_core.render import _QUOTED, FENCE_END, FENCE_NOTE, fence_skeleton
from websearch_core.text import clean_text, one_line, strip_controls

OPERATOR = JailPolicy(allow_private=True)
PUBLIC = JailPolicy()

#: Modest budgets: the whole file must run well under a minute on a slow two-core machine.
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Everything ``str.splitlines`` reads as a line break, besides ``"\n"``...
LINE_BREAKS = ("\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
#: ... and the characters among them.
OTHER_BREAKS = frozenset("".join(LINE_BREAKS)) - {"\n"}
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
DISGUISES = (*ZERO_WIDTH, "\u00ad", "\u202e", "\u0301", "\u0336")


def fullwidth(text: str) -> str:
    """ASCII ``!``..``~`` as their full-width forms (U+FF01..U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def is_control(char: str) -> bool:
    return unicodedata.category(char) == "Cc"


# -- 1. the URL jail --------------------------------------------------------------------------

#: Letters of many scripts, a few symbols, and marks that IDNA treats specially.
SCRIPTS = (
    "abcdefghijklmnopqrstuvwxyz0123456789-",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
    "αβγδεζηθικλμνξοπρστυφχψωςΣ",
    "אבגדהוזחטיכלמנסעפצקרשת",
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوي٠١٢",
    "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह्",
    "的一是不了人我在有他这为之大来以个中上们",
    "あいうえおかきくけこさしすせそアイウエオ",
    "가나다라마바사아자차카타파하",
    "กขคงจฉชซญดตถทธนบปผพฟมยรลวศษสหอ",
    "ÄÖÜäöüßéèêçñİıſǅﬁﬀ",
    "ⅠⅡⅢ①②☃★♥😀",
    "\u0301\u0336\u200c\u200d\u00b7\u30fb",
)
IDN_LABEL = st.sampled_from(SCRIPTS).flatmap(
    lambda alphabet: st.text(alphabet=alphabet, min_size=1, max_size=12)
)
ASCII_LABEL = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=20)
DOT = st.sampled_from([".", ".", ".", "\u3002", "\uff0e", "\uff61"])


@st.composite
def dotted_names(draw: st.DrawFn, label: st.SearchStrategy[str]) -> str:
    labels = draw(st.lists(label, min_size=1, max_size=4))
    tld = draw(st.sampled_from(["", ".com", ".org", ".xn--p1ai", ".рф", ".中国", ".local"]))
    trailing = draw(st.sampled_from(["", "", "."]))
    name = labels[0]
    for part in labels[1:]:
        name += draw(DOT) + part
    return name + tld + trailing


XN_LABELS = st.sampled_from(
    [
        "xn--zz",
        "xn--a",
        "xn--",
        "xn---",
        "xn--bcher-kva",
        "XN--BCHER-KVA",
        "xn--nxasmq6b",
        "xn--80ak6aa92e",
        "xn--ls8h",  # an emoji: valid punycode, invalid IDNA 2008
        "xn--fiqs8s",
        "xn--e1afmkfd",
        "xn--mgbh0fb",
        "xn--9krt00a",
        "xn--zz-",
        "xn--a-ecp.ru",
    ]
)


@st.composite
def ipv4_text(draw: st.DrawFn) -> str:
    """An IPv4 in any spelling inet_aton reads (and some it does not)."""
    value = draw(st.integers(0, 2**32 - 1) | st.sampled_from([0, 2**32, 2**40, 0x7F000001]))
    parts = draw(st.integers(1, 5))
    if parts == 5:
        numbers = [draw(st.integers(0, 300)) for _ in range(5)]
    else:
        tail_bits = 8 * (5 - parts)
        numbers = [(value >> (32 - 8 * i - 8)) & 0xFF for i in range(parts - 1)]
        numbers.append(value & ((1 << tail_bits) - 1) if value < 2**32 else value)
    out = []
    for number in numbers:
        style = draw(st.sampled_from(["dec", "dec", "oct", "hex", "HEX", "pad"]))
        if style == "oct":
            out.append("0" + format(number, "o"))
        elif style == "hex":
            out.append("0x" + format(number, "x"))
        elif style == "HEX":
            out.append("0X" + format(number, "X"))
        elif style == "pad":
            out.append("000" + str(number))
        else:
            out.append(str(number))
    return ".".join(out) + draw(st.sampled_from(["", "", "."]))


@st.composite
def ipv6_text(draw: st.DrawFn) -> str:
    address = draw(
        st.ip_addresses(v=6)
        | st.sampled_from([IPv4Address(0x7F000001), IPv4Address(0xA9FEA9FE)]).map(
            lambda v4: f"::ffff:{v4}"
        )
    )
    text = str(address)
    if draw(st.booleans()) and not isinstance(address, str):
        text = address.exploded
    zone = draw(st.sampled_from(["", "", "", "%eth0", "%25eth0", "%", "%1"]))
    brackets = draw(st.sampled_from([("[", "]"), ("[", "]"), ("", ""), ("[", "")]))
    return f"{brackets[0]}{text}{zone}{brackets[1]}"


HOSTS = st.one_of(
    st.sampled_from(
        [
            "example.com",
            "EXAMPLE.COM.",
            "localhost",
            "metadata.google.internal",
            "a_b.example",
            "-dash-.example",
            "0x",
            "1.2.3.4.5",
            "12345678901234567890",
            "",
            ".",
            "..",
            "a..b",
        ]
    ),
    dotted_names(ASCII_LABEL),
    dotted_names(IDN_LABEL),
    dotted_names(XN_LABELS),
    st.tuples(XN_LABELS, ASCII_LABEL).map(lambda pair: f"{pair[1]}.{pair[0]}.com"),
    dotted_names(ASCII_LABEL).map(fullwidth),
    ipv4_text(),
    ipv4_text().map(fullwidth),
    ipv6_text(),
)
GOOD_PORTS = st.one_of(
    st.just(""), st.integers(1, 65535).map(lambda port: f":{port}"), st.sampled_from([":", ":080"])
)
PORTS = st.one_of(
    GOOD_PORTS,
    st.integers(0, 70000).map(lambda port: f":{port}"),
    st.sampled_from([":0", ":0x50", ":-1", ":1:2", ":\uff18\uff10", ": 80", ":99999999"]),
)
#: What a browser shows in an address bar: printable, in any script, with stray escapes.
PRINTABLE = st.characters(exclude_categories=["Cs", "Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"])
QUERY_PIECES = st.one_of(
    PRINTABLE,
    st.characters(codec="ascii", min_codepoint=0x21),
    st.sampled_from(["%", "%2", "%zz", "%00", "%25", "/../", "?", "#", "@", ":", "[", "]"]),
    st.sampled_from(["é", "中", "😀", "\ud7ff", "ﬁ", "Ａ", "\u0301"]),
)
NOISE = st.one_of(
    st.sampled_from(["\\", " ", "\t", "\n", "\x00", "\x7f", "\x85", "\u2028", "\u200b", "\ufeff"]),
    st.characters(exclude_categories=["Cs"]),
)


def paths(pieces: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(pieces, max_size=20).map(
        lambda parts: "".join(parts) if parts[:1] in ([], ["?"], ["#"]) else "/" + "".join(parts)
    )


SCHEMES = st.sampled_from(
    ["http", "https", "HTTP", "HtTpS", "ftp", "data", "javascript", "file", "", "http\u200b"]
)
SEPARATORS = st.sampled_from(["://", "://", "://", ":/", ":", ":///", ":\\\\", "//"])
USERINFO = st.sampled_from(["", "", "", "user@", "user:pass@", "@", "a%40b@", "x:y@z@"])
SPACE = st.sampled_from(["", "", "", " ", "\t", "\n", "\x00", "\u3000"])


def joined(*parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(*parts).map("".join)


#: URLs a model might plausibly write: most of them should be accepted.
PLAUSIBLE_URLS = joined(
    st.sampled_from(["", " ", "\n"]),
    st.sampled_from(["http", "https", "HTTPS"]),
    st.just("://"),
    HOSTS,
    GOOD_PORTS,
    paths(QUERY_PIECES),
)
#: Every part may be hostile.
HOSTILE_URLS = joined(
    SPACE, SCHEMES, SEPARATORS, USERINFO, HOSTS, PORTS, paths(st.one_of(QUERY_PIECES, NOISE)), SPACE
)
URL_INPUTS = st.one_of(st.text(max_size=60), PLAUSIBLE_URLS, PLAUSIBLE_URLS, HOSTILE_URLS)


def accepted(url: str, policy: JailPolicy) -> Target | None:
    """``parse_url``'s answer, or ``None`` for a refusal; any other exception propagates."""
    try:
        return parse_url(url, policy)
    except URLRefusedError:
        return None


def assert_sendable_and_canonical(target: Target, policy: JailPolicy) -> None:
    assert target.scheme in ("http", "https")
    assert target.url.startswith(f"{target.scheme}://")
    httpx.Request("GET", target.url)  # raises httpx.InvalidURL if httpx cannot send it
    assert isinstance(httpx.URL(target.url).host, str)  # decodes xn-- labels with idna
    again = parse_url(target.url, policy)
    assert again.url == target.url
    assert (again.host, again.port, again.ip) == (target.host, target.port, target.ip)


@FAST
@given(URL_INPUTS)
def test_parse_url_refuses_or_returns_a_url_httpx_sends_and_the_jail_rereads(url: str) -> None:
    target = accepted(url, OPERATOR)
    if target is not None:
        assert_sendable_and_canonical(target, OPERATOR)


@FAST
@given(URL_INPUTS)
def test_parse_url_with_the_public_policy_only_refuses_and_accepts_only_public_ips(
    url: str,
) -> None:
    target = accepted(url, PUBLIC)
    if target is not None:
        assert_sendable_and_canonical(target, PUBLIC)
        if target.ip is not None:
            assert is_public(target.ip)


@pytest.mark.parametrize("char", ["é", "中", "😀"])
def test_accepted_url_stays_within_the_jails_own_length_limit_once_canonical(char: str) -> None:
    # Percent-encoding a non-ASCII path multiplies its length (up to 12x): a URL the jail
    # accepts must still be one it accepts when it reads its own canonical form (a redirect
    # back to it, a memo key), and one httpx will build a request for (at most 65,536 chars).
    url = "https://example.com/" + char * (MAX_URL_CHARS - 100)
    target = accepted(url, PUBLIC)
    if target is not None:
        assert_sendable_and_canonical(target, PUBLIC)


# -- 2. charsets ------------------------------------------------------------------------------

CODEC_NAMES = sorted(
    {*encodings.aliases.aliases, *encodings.aliases.aliases.values()}
    | {
        "rot-13",
        "rot13",
        "base64",
        "hex",
        "zlib",
        "bz2",
        "uu",
        "undefined",
        "unicode_escape",
        "raw_unicode_escape",
        "idna",
        "punycode",
        "utf-7",
        "quopri",
        "mbcs",
        "oem",
        "utf-8-sig",
        "latin-1",
        "x-user-defined",
    }
)
LABELS = st.one_of(
    st.sampled_from(CODEC_NAMES),
    st.sampled_from(CODEC_NAMES).map(str.upper),
    st.sampled_from(CODEC_NAMES).map(lambda name: f'"{name}"'),
    st.sampled_from(CODEC_NAMES).map(lambda name: f" {name}\t"),
    st.text(max_size=30),
)
BOMS = st.sampled_from(
    [
        b"",
        b"",
        b"",
        codecs.BOM_UTF8,
        codecs.BOM_UTF16_LE,
        codecs.BOM_UTF16_BE,
        codecs.BOM_UTF32_LE,
        codecs.BOM_UTF32_BE,
    ]
)
#: What ``decode_text`` may decode with: the page codecs, and the BOM and fallback ones.
TEXT_CODECS = {*_PAGE_CODECS.values(), "utf-8", "utf-16", "utf-32", "cp1252"}


@st.composite
def declared_pages(draw: st.DrawFn) -> tuple[bytes, str | None]:
    label = draw(LABELS)
    header = draw(
        st.sampled_from(
            [
                None,
                f"text/html; charset={label}",
                f"text/html;charset={label}; charset=utf-8",
                "text/html",
                f"text/html; CHARSET='{label}'",
            ]
        )
    )
    other = draw(LABELS) if draw(st.booleans()) else label  # the two may disagree
    meta = draw(
        st.sampled_from(
            [
                "",
                f'<meta charset="{other}">',
                f"<meta charset={other}>",
                f'<meta http-equiv="Content-Type" content="text/html; charset={other}">',
                "<meta charset=",
            ]
        )
    )
    body = draw(BOMS) + meta.encode("utf-8") + draw(st.binary(max_size=120))
    return body, header


@FAST
@given(declared_pages())
def test_decode_text_never_raises_and_decodes_only_with_a_text_codec(
    page: tuple[bytes, str | None],
) -> None:
    body, content_type = page
    text, charset = decode_text(body, content_type, html=True)
    assert isinstance(text, str)
    assert charset in TEXT_CODECS
    assert codecs.lookup(charset)._is_text_encoding


@FAST
@given(LABELS, st.binary(max_size=80))
def test_decode_text_never_decodes_with_a_declared_codec_that_is_not_a_text_encoding(
    label: str, body: bytes
) -> None:
    for html in (False, True):
        text, charset = decode_text(body, f"text/plain; charset={label}", html=html)
        assert isinstance(text, str)
        assert codecs.lookup(charset)._is_text_encoding


MEDIA_TYPES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "text/html",
            "text/html; charset=utf-8",
            "text/html; charset=rot-13",
            "application/xhtml+xml",
            "application/json",
            "application/ld+json; charset=utf-16",
            "text/plain; charset=base64",
            "text/plain; charset=undefined",
            "application/pdf",
            "application/octet-stream",
            "image/png",
            "application/xml",
            "TEXT/HTML; Charset=UTF-7",
            "",
            ";",
            "text/",
            "/",
        ]
    ),
    LABELS.map(lambda label: f"text/html; charset={label}"),
    st.text(max_size=40),
)
BODIES = st.builds(
    lambda prefix, rest: prefix + rest,
    st.sampled_from(
        [
            b"",
            b"%PDF-1.4\n",
            b"<!doctype html><html><body><p>",
            b"<html><meta charset=utf-16>",
            b"{",
            b"[" * 200,
            b'{"a": [1, 2.5e999, NaN, "\\ud800"]}',
            codecs.BOM_UTF16_LE,
            b"\x00\x00\xfe\xff",
        ]
    ),
    st.binary(max_size=160),
)


@SLOW
@given(BODIES, MEDIA_TYPES)
def test_convert_never_raises_and_returns_clean_text(body: bytes, content_type: str | None) -> None:
    converted = convert(body, content_type, "https://example.com/")
    assert converted.kind in ("html", "json", "text", "pdf", "binary")
    assert isinstance(converted.content, str)
    assert not any(is_control(c) for c in converted.content if c not in "\n\t")
    if converted.charset is not None:
        assert codecs.lookup(converted.charset)._is_text_encoding


def test_convert_output_stays_within_a_linear_factor_of_nested_json() -> None:
    # Pretty-printing puts each level on its own line, two spaces deeper than the last, so
    # JSON nested d deep grows to about 2·d² characters: this 600-byte body becomes 180 kB,
    # and a 2 MB body of such arrays side by side (fetch's default read limit) 600 MB.
    body = b"[" * 300 + b"]" * 300
    converted = convert(body, "application/json", "https://example.com/")
    assert converted.kind == "json"
    assert len(converted.content) <= 50 * len(body) + 10_000, len(converted.content)


# -- 3. the fence -----------------------------------------------------------------------------

#: Cyrillic and Greek letters that pass for Latin ones.
LOOKALIKES = {
    "e": "еε",
    "o": "оο",
    "c": "сϲ",
    "t": "тτ",
    "a": "аα",
    "p": "рρ",
    "n": "пη",
    "d": "ԁ",
    "h": "һ",
    "f": "ғ",
}
BEGIN_MARKERS = (
    "--- begin fetched content: https://example.com/ (text/html, 1.0 kB) ---",
    "--- begin fetched content ---",
)


@st.composite
def disguised(draw: st.DrawFn, marker: str) -> str:
    """``marker`` with its letters recased, swapped for look-alikes, widened or padded."""
    out = []
    for char in marker:
        how = draw(st.integers(0, 9))
        if how == 0:
            char = char.swapcase()
        elif how == 1 and char.lower() in LOOKALIKES:
            char = draw(st.sampled_from(LOOKALIKES[char.lower()]))
        elif how == 2:
            char = fullwidth(char)
        elif how == 3:
            char += draw(st.sampled_from(DISGUISES))
        elif how == 4:
            char = draw(st.sampled_from(DISGUISES)) + char
        out.append(char)
    return "".join(out)


MARKER_LINES = st.one_of(
    st.just(FENCE_END),
    st.sampled_from(BEGIN_MARKERS),
    st.just(FENCE_NOTE),
    disguised(FENCE_END),
    st.sampled_from(BEGIN_MARKERS).flatmap(disguised),
    st.just(FENCE_END).map(str.upper),
    st.just(FENCE_END).map(fullwidth),
)
BREAKS = st.sampled_from(["\n", *LINE_BREAKS])
PADDING = st.text(alphabet=st.sampled_from([" ", "\t", "\u3000", "\u00a0", *DISGUISES]), max_size=3)


@st.composite
def fenced_content(draw: st.DrawFn) -> str:
    pieces = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            pieces.append(draw(st.text(max_size=20)))
        else:
            line = draw(PADDING) + draw(MARKER_LINES) + draw(PADDING)
            pieces.append(draw(BREAKS) + line + draw(BREAKS))
    return "".join(pieces)


def page(content: str, **fields: object) -> Page:
    values: dict[str, object] = {
        "url": "https://example.com/",
        "final_url": "https://example.com/",
        "status": 200,
        "content_type": "text/plain",
        "kind": "text",
        "content": content,
        "bytes_read": len(content.encode("utf-8")),
        "max_bytes": 2_000_000,
        "fetched_at": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    }
    values.update(fields)
    return Page.model_validate(values)


def assert_sealed_fence(rendered: str) -> None:
    lines = rendered.split("\n")
    assert len(lines) >= 3
    assert lines[0].startswith("--- begin fetched content: ")
    assert lines[-2:] == [FENCE_END, FENCE_NOTE]
    assert not OTHER_BREAKS.intersection(rendered)
    assert not [c for c in rendered if is_control(c) and c not in "\n\t"]
    for line in lines[1:-2]:
        assert line != FENCE_END
        folded = unicodedata.normalize("NFKC", line).strip().casefold()
        assert folded != FENCE_END.casefold()
        if "fetchedcontent" in fence_skeleton(line):
            assert line.startswith(_QUOTED), line


@FAST
@given(fenced_content(), st.booleans())
def test_page_content_cannot_close_or_break_the_fence(content: str, truncated: bool) -> None:
    assert_sealed_fence(page(content, truncated=truncated).render())


@FAST
@given(fenced_content(), st.integers(1, 40), st.data())
def test_fence_holds_when_the_page_is_cut_or_read_from_an_offset(
    content: str, max_chars: int, data: st.DataObject
) -> None:
    subject = page(content, truncated=data.draw(st.booleans()))
    assert_sealed_fence(subject.render(max_chars=max_chars))
    if content:
        offset = data.draw(st.integers(0, len(content) - 1))
        assert_sealed_fence(subject.render(max_chars=max_chars, offset=offset))


@FAST
@given(
    fenced_content(),
    st.lists(st.one_of(BREAKS, MARKER_LINES, st.text(max_size=8)), max_size=5).map("".join),
    st.lists(st.one_of(BREAKS, MARKER_LINES, st.text(max_size=8)), max_size=4).map("".join),
)
def test_error_page_keeps_the_fence_whatever_its_reason_and_labels(
    content: str, reason: str, label: str
) -> None:
    error = page(
        content,
        status=404,
        reason=reason,
        final_url=f"https://example.com/{label}",
        content_type=f"text/html{label}",
    )
    rendered = error.render()
    assert_sealed_fence(rendered)
    status = rendered.split("\n")[1].removeprefix(_QUOTED)
    assert status.startswith("HTTP 404")  # the status line and its reason are one line


# -- 4. domains -------------------------------------------------------------------------------

DOMAIN_INPUTS = st.one_of(
    st.text(max_size=40),
    joined(
        SPACE,
        st.sampled_from(["", "", "https://", "http://", "*.", ".", "HTTPS://"]),
        USERINFO,
        HOSTS,
        PORTS,
        st.sampled_from(["", "/", "/path?q#f", "?x", "#y"]),
        SPACE,
    ),
)
LABEL_CHARS = frozenset(string.ascii_lowercase + string.digits + "-")


@FAST
@given(DOMAIN_INPUTS)
def test_normalise_domain_returns_a_canonical_dns_name_or_raises_value_error(raw: str) -> None:
    try:
        name = normalise_domain(raw)
    except ValueError:
        return
    assert 0 < len(name) <= 253
    for label in name.split("."):
        assert 1 <= len(label) <= 63, name
        assert LABEL_CHARS.issuperset(label), name
        assert not label.startswith("-"), name
        assert not label.endswith("-"), name
    assert normalise_domain(name) == name


# -- 5. the extractor -------------------------------------------------------------------------

TAGS = (  # noqa: SIM905 (a list of tag names reads best as the HTML standard writes it)
    "div span p b i em strong a section article li ul ol dl dd dt td th tr table tbody thead "
    "caption h1 h2 h3 pre code blockquote nobr font s u small big sub sup form button label "
    "option optgroup select main nav aside header footer body html head center address "
    "details summary figure svg math g circle foreignObject desc title mi mo mtext "
    "annotation-xml marquee object applet template noscript textarea xmp iframe style "
    "br img hr input meta link wbr area col"
).split()
ATTRIBUTES = st.sampled_from(
    [
        "",
        ' class="content"',
        ' class="sidebar"',
        " id=main",
        ' href="/x"',
        ' href="javascript:alert(1)"',
        ' style="display:none"',
        " hidden",
        ' role="navigation"',
        ' class="article-body share"',
        " x='<div>'",
        ' data-x="</span>"',
        " t='>'</div>'",
        " a=b/",
    ]
)
WORDS = st.sampled_from(["alpha", "beta", "gamma ", "δέλτα", "&amp;", "&#0;", "<", "&", " ", "\n"])


MODES: tuple[ExtractMode, ...] = ("article", "full", "raw")


@st.composite
def tag_soup(draw: st.DrawFn, max_tokens: int = 80) -> str:
    tokens = []
    for _ in range(draw(st.integers(0, max_tokens))):
        kind = draw(st.integers(0, 12))
        name = draw(st.sampled_from(TAGS))
        if draw(st.integers(0, 7)) == 0:
            name = name.upper()
        if kind <= 4:
            tokens.append(f"<{name}{draw(ATTRIBUTES)}>")
        elif kind == 5:
            tokens.append(f"<{name}{draw(ATTRIBUTES)}/>")
        elif kind <= 7:
            tokens.append(f"</{name}>")
        elif kind == 8:
            tokens.append(draw(WORDS))
        elif kind == 9:
            comments = ["<!--x-->", "<!-- <div> -->", "<!--", "-->", "<!-->", "<!--->", "--!>"]
            comments += ["<?x </div>", "<!x </p>", "</ x</div>", "<![CDATA[ </g> ]]>"]
            tokens.append(draw(st.sampled_from(comments)))
        elif kind == 10:
            script = draw(st.sampled_from(["", "<!--", "<!--<script>", "<!--<script></script>"]))
            tokens.append(f"<script>{script}{draw(WORDS)}</div><p></script>")
        elif kind == 11:
            inner = draw(st.sampled_from(["circle/", "g", "p", "mi", "foreignObject", "div"]))
            tokens.append(f"<{draw(st.sampled_from(['svg', 'math']))}><{inner}>x")
        else:
            tokens.append(draw(st.sampled_from(["<", "</>", "<>", "< p>", "<p", "</p >"])))
    return "".join(tokens)


def tree_depth(tree: LexborHTMLParser) -> int:
    """The deepest element in lexbor's tree, counted from ``<html>`` as 1, without recursion."""
    root = tree.root
    if root is None:
        return 0
    deepest = 0
    pending: list[tuple[LexborNode, int]] = [(root, 1)]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        child = node.child
        while child is not None:
            if child.is_element_node:
                pending.append((child, depth + 1))
            child = child.next
    return deepest


FORMATTING = "a b big code em font i nobr s small strike strong tt u".split()  # noqa: SIM905


@st.composite
def reopened_formatting(draw: st.DrawFn) -> str:
    """Formatting elements left open when their paragraph or block ends: the parser reopens
    (reconstructs) every one of them, attributes and all, at the next text in the page."""
    tokens = []
    for _ in range(draw(st.integers(0, 120))):
        kind = draw(st.integers(0, 5))
        name = draw(st.sampled_from(FORMATTING))
        block = draw(st.sampled_from(["p", "div", "li", "section", "h2"]))
        unique = f' class="c{draw(st.integers(0, 9999))}"'
        if kind <= 2:
            tokens.append(f"<{block}><{name}{unique}>x</{block}>")
        elif kind == 3:
            tokens.append(f"</{name}>")
        elif kind == 4:
            tokens.append(f"<{name}{unique}>")
        else:
            tokens.append(draw(st.sampled_from([f"<{block}>", f"</{block}>", "x"])))
    return "".join(tokens)


@SLOW
@given(st.one_of(tag_soup(), reopened_formatting()))
def test_extract_never_raises_on_tag_soup_in_any_mode(html: str) -> None:
    for mode in MODES:
        document = extract(html, "https://example.com/", mode)
        assert isinstance(document.markdown, str)
        assert isinstance(document.text, str)


# Shrinking a failure here takes minutes (the failing inputs are long and their elements must
# stay distinct), so the example found is reported as it is.
@settings(SLOW, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(st.one_of(tag_soup(max_tokens=200), reopened_formatting()), st.sampled_from([12, 20]))
def test_nesting_model_bounds_the_real_tree_depth(html: str, limit: int) -> None:
    flat = flatten(html, limit)
    assert flat.deepest <= limit
    depth = tree_depth(LexborHTMLParser(flat.html))
    assert depth <= 2 * limit + 10, (depth, flat.deepest)


def reopened(count: int) -> str:
    """``count`` paragraphs, each leaving one more distinct ``<b>`` open for the parser to
    reopen in every later paragraph: unflattened, lexbor's tree is ``count`` deep."""
    return "".join(f'<p><b class="c{index}">x</p>' for index in range(count))


#: Markup whose depth a nesting model can miss, ``count`` levels of it: formatting
#: elements the parser reopens, and tags inside elements the model reads as raw text but
#: lexbor does not (``<noscript>``: it parses with scripting off; ``<script>``, ``<style>`` …
#: directly inside SVG or MathML, where they are ordinary foreign elements).
ESCAPES: dict[str, Callable[[int], str]] = {
    "reopened-formatting": reopened,
    "noscript": lambda count: "<noscript>" + "<div>" * count,
    "svg-script": lambda count: "<svg><script>" + "<div>" * count,
    "math-style": lambda count: "<math><style>" + "<div>" * count,
    # End tags the parser never sees, where a scan reading "<" to ">" saw one: in a quoted
    # value, a bogus comment or a script's double escape; and comments it ends sooner.
    "end-tag-in-a-quoted-value": lambda count: "<div><p title='>'</div>'>" * count,
    "end-tag-in-an-end-tags-value": lambda count: "<div></p title='>'</div>'>" * count,
    "end-tag-in-a-bogus-comment": lambda count: "<div><?x </div>" * count,
    "end-tag-in-a-doctype-like-comment": lambda count: "<div><!x </div>" * count,
    "end-tag-after-a-slash": lambda count: "<div></ x</div>" * count,
    "end-tag-in-a-double-escape": lambda count: (
        "<div><script><!--<script></script></div></script>" * count
    ),
    "abrupt-comment": lambda count: "<!-->" + "<div>" * count + "-->",
    "dash-comment": lambda count: "<!--->" + "<div>" * count + "-->",
    "bang-comment": lambda count: "<!-- x --!>" + "<div>" * count + "-->",
    "self-closing-that-is-not": lambda count: "<svg>" + "<g a=b/>" * count,
}


@pytest.mark.parametrize("escape", ESCAPES)
def test_nesting_model_bounds_the_real_tree_depth_of_markup_it_may_misread(escape: str) -> None:
    limit = 20
    flat = flatten(ESCAPES[escape](200), limit)
    depth = tree_depth(LexborHTMLParser(flat.html))
    assert depth <= 2 * limit + 10, (depth, flat.deepest)


def test_a_dropped_tag_never_joins_a_lone_lt_to_what_follows() -> None:
    # Without the too-deep <div>, "<" and "b a0 …" would make a start tag nothing had read.
    html = "<br>" * 4_001 + "<div>" * 30 + "<<div>b a0 a1 a2>words"
    flat = flatten(html, 20)
    assert flat.dropped_tags > 0
    assert "<b a0" not in flat.html
    assert LexborHTMLParser(flat.html).css_first("b") is None
    assert flat.html.endswith("< b a0 a1 a2>words")


#: Pathological nesting, one level of each: a string repeated n times.
DEEP_SHAPES = {
    "div": "<div>",
    "div-stray-span-end": "<div></span>",
    "span-div-span-end": "<span><div></span>",
    "list-section-items": "<ul><li><section><li>",
    "p-table-cells": "<p><table><tr><td>",
    "bold": "<b>",
    "anchor": "<a>",
}
MARKER_WORDS = ("innermost", "quokka", "zephyr")


@pytest.mark.parametrize("shape", DEEP_SHAPES)
def test_flattening_deep_nesting_keeps_the_innermost_text(shape: str) -> None:
    level = DEEP_SHAPES[shape]
    html = level * (5_000 // level.count("<")) + "<p>" + " ".join(MARKER_WORDS) + "</p>"
    assert html.count("<") > 4_000  # past the tag count where bound_input flattens
    for mode in MODES[:2]:  # raw mode's markdown is the HTML itself
        document = extract(html, "https://example.com/", mode)
        for word in MARKER_WORDS:
            assert word in document.markdown or word in document.text, (mode, word)


#: The "no hang" bound: generous, so that only a hang (or a return to quadratic work on
#: pathological input) fails it, never a slow or busy machine.
NO_HANG_S = 20.0
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("shape", DEEP_SHAPES)
def test_extract_on_300_kb_of_pathological_nesting_finishes(shape: str) -> None:
    # A "no hang" check, not a speed test: unbounded nesting once took minutes.
    level = DEEP_SHAPES[shape]
    html = level * (300_000 // len(level)) + "deep text"
    started = time.monotonic()
    document = extract(html, "https://example.com/")
    assert time.monotonic() - started < NO_HANG_S
    assert "deep text" in document.text


_EXTRACT_IN_A_CHILD = """
import sys, time
try:
    import resource
except ImportError:  # not on Windows
    pass
else:  # a runaway parse fails here rather than taking the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from websearch_core.extract import extract
with open(sys.argv[1], encoding="utf-8") as page:
    html = page.read()
started = time.monotonic()
extract(html, "https://example.com/")
print(time.monotonic() - started)
"""


def test_extract_on_300_kb_of_markup_the_nesting_model_may_misread_finishes(
    tmp_path: Path,
) -> None:
    # The same "no hang" check for ``ESCAPES``, each in a child process, all at once: a parse
    # that never ends cannot be interrupted in this process, so a child is killed once it has
    # had its time, and its address space is capped at 2 GiB (lexbor's tree for reopened
    # formatting elements grows quadratically).
    children: dict[str, subprocess.Popen[str]] = {}
    failures: list[str] = []
    try:
        for name, build in ESCAPES.items():
            page = tmp_path / f"{name}.html"
            page.write_text(build(300_000 // (len(build(2)) - len(build(1)))), encoding="utf-8")
            children[name] = subprocess.Popen(
                [sys.executable, "-c", _EXTRACT_IN_A_CHILD, str(page)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                cwd=ROOT,
            )
        deadline = time.monotonic() + NO_HANG_S + 5  # the children's start-up included
        for name, child in children.items():
            try:
                out, err = child.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: did not finish in {NO_HANG_S + 5:.0f} s")
                continue
            if child.returncode != 0:
                failures.append(f"{name}: {(err.strip().splitlines() or ['crashed'])[-1]}")
            elif float(out) >= NO_HANG_S:
                failures.append(f"{name}: took {float(out):.0f} s")
    finally:
        for child in children.values():
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert not failures, "\n".join(failures)


# -- 6. text hygiene --------------------------------------------------------------------------

ANY_TEXT = st.one_of(
    st.text(max_size=60),
    st.text(
        alphabet=st.one_of(
            st.sampled_from(sorted(OTHER_BREAKS)),
            st.sampled_from(["\n", "\t", " ", "\x00", "\x1b", "\x7f", "\x9b"]),
            st.sampled_from(["\x1f", "\u00a0", "\u3000", "\u200b", "\u2009", "a", "é"]),
            st.characters(max_codepoint=0x2FFF),
        ),
        max_size=60,
    ),
)


@FAST
@given(ANY_TEXT)
def test_clean_text_leaves_only_newlines_and_no_control_characters(text: str) -> None:
    cleaned = clean_text(text)
    assert not OTHER_BREAKS.intersection(cleaned)
    assert not [c for c in cleaned if is_control(c) and c not in "\n\t"]


@FAST
@given(ANY_TEXT)
def test_strip_controls_removes_exactly_the_controls_and_keeps_every_other_character(
    text: str,
) -> None:
    # The fast path (no control present: the text as it is) and the removal agree with the
    # definition, character by character.
    kept = "".join(c for c in text if not (is_control(c) and c not in "\n\t"))
    assert strip_controls(text) == kept


@FAST
@given(ANY_TEXT)
def test_one_line_leaves_single_spaces_and_no_control_characters(text: str) -> None:
    flat = one_line(text)
    assert not [c for c in flat if c.isspace() and c != " "]
    assert "  " not in flat
    assert flat == flat.strip()
    assert not [c for c in flat if is_control(c)]


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("", ""),
        ("a", "a"),
        ("\n", "\n"),
        ("\r", "\n"),
        ("a\tb", "a\tb"),
        ("no\u00a0break", "no\u00a0break"),
        ("a\x85b\x9fc\x7fd", "a\nbcd"),
    ],
)
def test_clean_text_keeps_tabs_single_breaks_and_printable_spaces(text: str, cleaned: str) -> None:
    assert clean_text(text) == cleaned
