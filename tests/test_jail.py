"""The URL jail refuses every spelling of an address a model must not reach (``net.jail``).

One parametrized test per attack class. Everything here is pure: no DNS, no sockets beyond
``socket.inet_aton``, which is a parser.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_core import ConfigurationError, WebSearch
from websearch_core.errors import FetchError, URLRefusedError, WebSearchError
from websearch_core.net.jail import (
    DEFAULT,
    JailPolicy,
    Target,
    check_address,
    check_host_name,
    embedded_ipv4,
    is_metadata,
    is_public,
    parse_url,
    read_ip,
)

OPERATOR = JailPolicy(allow_private=True)


def refusal(url: str, policy: JailPolicy = DEFAULT) -> URLRefusedError:
    with pytest.raises(URLRefusedError) as info:
        parse_url(url, policy)
    return info.value


# --- schemes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE://localhost/etc/passwd",
        "gopher://127.0.0.1:6379/_FLUSHALL",
        "ftp://example.com/pub/",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "dict://127.0.0.1:11211/stat",
        "ldap://example.com/",
        "ws://example.com/socket",
        "jar:http://example.com/a.jar!/",
        "example.com/page",
        "//example.com/page",
        "ｈｔｔｐ://example.com/",
    ],
)
def test_non_http_schemes_are_refused(url: str) -> None:
    err = refusal(url)
    assert err.reason == "scheme"
    assert "http://" in str(err)


@pytest.mark.parametrize(
    ("url", "canonical", "host_header"),
    [
        ("HTTP://example.com", "http://example.com/", "example.com"),
        ("hTtPs://Docs.Example.COM./a?q#f", "https://docs.example.com/a?q", "docs.example.com"),
        ("http://example.com:8080?x", "http://example.com:8080/?x", "example.com:8080"),
        ("https://example.com:443/", "https://example.com/", "example.com"),
        ("https://example.com:00443/", "https://example.com/", "example.com"),
        ("http://example.com:/x", "http://example.com/x", "example.com"),
        ("  https://example.com/\n", "https://example.com/", "example.com"),
        ("https://bücher.de/ß?ü", "https://xn--bcher-kva.de/%C3%9F?%C3%BC", "xn--bcher-kva.de"),
        ("http://ｅｘａｍｐｌｅ．ｃｏｍ/", "http://example.com/", "example.com"),
        ("http://8.8.8.8./", "http://8.8.8.8/", "8.8.8.8"),
        ("http://0x08080808/", "http://8.8.8.8/", "8.8.8.8"),
        ("http://[2606:4700:0:0:0:0:0:1]:81", "http://[2606:4700::1]:81/", "[2606:4700::1]:81"),
        ("http://example.com#@127.0.0.1", "http://example.com/", "example.com"),
        ("http://example.com?@127.0.0.1", "http://example.com/?@127.0.0.1", "example.com"),
    ],
)  # fmt: skip
def test_accepted_urls_are_rebuilt_canonically(url: str, canonical: str, host_header: str) -> None:
    target = parse_url(url)
    assert (target.url, target.host_header) == (canonical, host_header)
    assert parse_url(canonical) == target


def test_target_carries_the_canonical_host_and_the_literal_address() -> None:
    assert parse_url("https://[2606:4700:4700:0:0:0:0:1111]:8443/dns") == Target(
        scheme="https",
        host="2606:4700:4700::1111",
        ip=IPv6Address("2606:4700:4700::1111"),
        port=8443,
        url="https://[2606:4700:4700::1111]:8443/dns",
        host_header="[2606:4700:4700::1111]:8443",
    )
    assert parse_url("http://Example.com./").ip is None


@pytest.mark.parametrize("addr", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2001:4860::8888"])
def test_public_addresses_are_allowed(addr: str) -> None:
    ip = ip_address(addr)
    assert is_public(ip)
    host = f"[{addr}]" if ip.version == 6 else addr
    assert parse_url(f"https://{host}/").ip == ip
    check_address(ip, DEFAULT, host="dns.example")


# --- IPv4 spellings ------------------------------------------------------------------------

# (spelling, address it reads as); every one is what inet_aton or a browser would connect to.
IPV4_SPELLINGS = [
    ("127.0.0.1", "127.0.0.1"),
    ("2130706433", "127.0.0.1"),  # one decimal number
    ("017700000001", "127.0.0.1"),  # one octal number
    ("0x7f000001", "127.0.0.1"),  # one hex number
    ("0X7F000001", "127.0.0.1"),
    ("0177.0.0.1", "127.0.0.1"),  # octal part
    ("0x7f.0.0.1", "127.0.0.1"),  # hex part
    ("0x7f.0x0.0x0.0x1", "127.0.0.1"),
    ("0177.0x0.0.1", "127.0.0.1"),  # mixed bases
    ("127.1", "127.0.0.1"),  # short forms: the last part fills the rest
    ("127.0.1", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),
    ("0177.1", "127.0.0.1"),
    ("127.000.000.001", "127.0.0.1"),  # leading zeros are octal zeros
    ("0000000177.0.0.1", "127.0.0.1"),
    ("0127.0.0.1", "87.0.0.1"),  # a leading zero means octal: this one is public
    ("127.0.0.1.", "127.0.0.1"),  # trailing dot
    ("0", "0.0.0.0"),
    ("0x", "0.0.0.0"),  # WHATWG: a bare 0x is zero
    ("10.1", "10.0.0.1"),
    ("012.0.0.1", "10.0.0.1"),
    ("167772161", "10.0.0.1"),
    ("0xa9fea9fe", "169.254.169.254"),
    ("2852039166", "169.254.169.254"),
    ("169.254.43518", "169.254.169.254"),
    ("0251.0376.0251.0376", "169.254.169.254"),
    ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
    ("0xffffffff", "255.255.255.255"),
]


@pytest.mark.parametrize(("text", "address"), IPV4_SPELLINGS)
def test_read_ip_reads_every_ipv4_spelling(text: str, address: str) -> None:
    assert read_ip(text) == IPv4Address(address)


@pytest.mark.parametrize(("text", "address"), IPV4_SPELLINGS)
def test_read_ip_agrees_with_inet_aton(text: str, address: str) -> None:
    try:
        packed = socket.inet_aton(text)
    except OSError:
        assert text.endswith(".") or text == "0x", "only WHATWG's extra spellings may differ"
        return
    assert IPv4Address(packed) == IPv4Address(address) == read_ip(text)


@pytest.mark.parametrize("text", ["[::1", "::1]", "[127.0.0.1", "127.0.0.1]", "[]", "[::1]]"])
def test_read_ip_reads_brackets_only_as_a_pair(text: str) -> None:
    # "[::1" is not "::" (its inside without the first and last character).
    assert read_ip(text) is None


def test_read_ip_agrees_with_inet_aton_on_every_short_string() -> None:
    """Whatever the OS reads as an IPv4 address, read_ip reads as the same one."""
    disagreements = []
    for length in range(1, 7):
        for chars in itertools.product("0x7f.18", repeat=length):
            text = "".join(chars)
            try:
                os_reading = IPv4Address(socket.inet_aton(text))
            except OSError:
                continue
            if read_ip(text) != os_reading:
                disagreements.append(text)
    assert disagreements == []


@pytest.mark.parametrize(
    "text",
    [
        "example.com",
        "localhost",
        "",
        ".",
        "1..2",
        "1.2.3.4.5",
        "08.0.0.1",  # 8 is not an octal digit
        "0x7g.1",
        "256.1",  # a part before the last is one byte
        "1.16777216",  # the last part overflows its three bytes
        "4294967296",
        "0x100000000",
        "127.0.0.1 x",  # glibc's inet_aton stops at a space; we do not
        " 127.0.0.1",
        "+127.0.0.1",
        "1_27.0.0.1",  # int() would take these
        "１２７.0.0.1",
        "[1.2.3.4]",
        "fe80::1%",
        pytest.param("0" * 200_000, id="200k zeros"),
    ],
)
def test_read_ip_returns_none_for_what_is_not_an_address(text: str) -> None:
    assert read_ip(text) is None


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("[0:0:0:0:0:0:0:1]", "::1"),
        ("fe80::1%eth0", "fe80::1"),
        ("[fe80::1%25eth0]", "fe80::1"),
        ("[::FFFF:127.0.0.1]", "::ffff:7f00:1"),
    ],
)
def test_read_ip_reads_ipv6_with_brackets_and_zone_ids(text: str, address: str) -> None:
    assert read_ip(text) == IPv6Address(address)


@pytest.mark.parametrize(
    ("host", "reason"),
    [(text, "not_public") for text, address in IPV4_SPELLINGS if address == "127.0.0.1"]
    + [(text, "not_public") for text, address in IPV4_SPELLINGS if address == "10.0.0.1"]
    + [(text, "metadata") for text, address in IPV4_SPELLINGS if address == "169.254.169.254"]
    + [
        ("１２７．０．０．１", "not_public"),  # full-width digits and dot
        ("127。0。0。1", "not_public"),  # ideographic full stop
        ("127｡0｡0｡1", "not_public"),  # half-width ideographic full stop
        ("①②⑦.⓪.⓪.①", "not_public"),  # circled digits
        ("０ｘ７ｆ．１", "not_public"),
        ("%31%32%37.0.0.1", "malformed"),  # percent-encoded host
        ("127.0.0.%31", "malformed"),
        ("127.0.0.1%00.example.com", "malformed"),
        ("1.2.3.4.5", "malformed"),  # ends in a number, yet is no address
        ("08.0.0.1", "malformed"),
        ("example.0x7f", "malformed"),
        ("127.0.0.1:80:80", "malformed"),
    ],
)
def test_ipv4_spellings_of_internal_addresses_are_refused(host: str, reason: str) -> None:
    assert refusal(f"http://{host}/").reason == reason


# --- IPv6 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("[::1]", "not_public"),
        ("[::1]:8080", "not_public"),
        ("[0:0:0:0:0:0:0:1]", "not_public"),
        ("[0000:0000:0000:0000:0000:0000:0000:0001]", "not_public"),
        ("[::]", "not_public"),
        ("[fc00::1]", "not_public"),  # unique local
        ("[fd12:3456:789a::1]", "not_public"),
        ("[fe80::1]", "not_public"),  # link-local
        ("[FE80::abcd]", "not_public"),
        ("[fec0::1]", "not_public"),  # site-local
        ("[ff02::1]", "not_public"),  # multicast
        ("[ff05::1:3]", "not_public"),
        ("[2001:db8::1]", "not_public"),  # documentation
        ("[3fff::1]", "not_public"),
        ("[fe80::1%25eth0]", "malformed"),  # zone ids are refused outright
        ("[::1%25lo]", "malformed"),
        ("::1", "malformed"),  # unbracketed
        ("[::1", "malformed"),
        ("[::1]x", "malformed"),
        ("[1.2.3.4]", "malformed"),
        ("[v1.x]", "malformed"),
        ("［::1］", "malformed"),  # full-width brackets
    ],
)
def test_internal_ipv6_literals_are_refused(host: str, reason: str) -> None:
    assert refusal(f"http://{host}/").reason == reason


def _transition_forms(v4: str) -> dict[str, IPv6Address]:
    n = int(IPv4Address(v4))
    return {
        "mapped": IPv6Address(0xFFFF << 32 | n),
        "compatible": IPv6Address(n),
        "translated": IPv6Address(0xFFFF << 48 | n),
        "nat64": IPv6Address(int(IPv6Address("64:ff9b::")) | n),
        "nat64-local": IPv6Address(int(IPv6Address("64:ff9b:1::")) | n),
        "6to4": IPv6Address(0x2002 << 112 | n << 80 | 1),
        # server 65.54.227.120, flags 0x8000, port 40000; client inverted in the low 32 bits
        "teredo": IPv6Address(0x2001_0000_4136_E378_8000_63BF << 32 | n ^ 0xFFFFFFFF),
        "isatap": IPv6Address(0x2606_4700_0000_0001_0000_5EFE << 32 | n),
        "isatap-u": IPv6Address(0x2606_4700_0000_0001_0200_5EFE << 32 | n),
    }


FORMS = sorted(_transition_forms("0.0.0.0"))


@pytest.mark.parametrize("v4", ["127.0.0.1", "10.0.0.1", "169.254.169.254"])
@pytest.mark.parametrize("form", FORMS)
def test_ipv4_hidden_in_ipv6_transition_forms_is_refused(form: str, v4: str) -> None:
    addr = _transition_forms(v4)[form]
    assert embedded_ipv4(addr) == IPv4Address(v4)
    assert not is_public(addr)
    err = refusal(f"http://[{addr}]/")
    assert err.reason == ("metadata" if v4 == "169.254.169.254" else "not_public")
    assert v4 not in str(err)
    assert str(addr) not in str(err)


# Decision: a transition form is as public as the IPv4 it carries, unless its prefix is itself
# not globally reachable (Teredo sits in 2001::/23, local-use NAT64 in 64:ff9b:1::/48).
PUBLIC_CARRIER = {
    "mapped": True,
    "compatible": True,
    "translated": True,
    "nat64": True,
    "nat64-local": False,
    "6to4": True,
    "teredo": False,
    "isatap": True,
    "isatap-u": True,
}


@pytest.mark.parametrize("form", FORMS)
def test_transition_forms_carrying_a_public_ipv4_follow_the_documented_decision(form: str) -> None:
    addr = _transition_forms("8.8.8.8")[form]
    assert embedded_ipv4(addr) == IPv4Address("8.8.8.8")
    assert is_public(addr) is PUBLIC_CARRIER[form]
    if PUBLIC_CARRIER[form]:
        assert parse_url(f"https://[{addr}]/").ip == addr
    else:
        assert refusal(f"https://[{addr}]/").reason == "not_public"


@pytest.mark.parametrize(
    ("addr", "carried"),
    [
        ("2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", "169.254.169.254"),  # Teredo server position
        ("64:ff9b:1:a9fe:a9:fe00::", "169.254.169.254"),  # local-use NAT64 at /48
        ("64:ff9b:1:0:a9:fea9:fe00:0", "169.254.169.254"),  # ... at /64
        ("2002:808:808::5efe:a9fe:a9fe", "169.254.169.254"),  # 6to4 public, ISATAP not
    ],
)
def test_metadata_is_found_at_every_position_an_ipv4_can_hide(addr: str, carried: str) -> None:
    ip = IPv6Address(addr)
    assert is_metadata(ip)
    assert not is_public(ip)
    assert refusal(f"http://[{addr}]/", OPERATOR).reason == "metadata"


@pytest.mark.parametrize(
    "addr",
    ["::", "::1", "2606:4700:4700::1111", "fe80::1", "2001:4860::5eff:7f00:1", "2400::5efe:1"],
)
def test_addresses_without_an_embedded_ipv4_report_none(addr: str) -> None:
    assert embedded_ipv4(IPv6Address(addr)) is None


# --- userinfo, fragment, backslash and character tricks ------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://a@127.0.0.1/", "userinfo"),
        ("http://user:pass@example.com/", "userinfo"),
        ("http://example.com@127.0.0.1/", "userinfo"),
        ("http://example.com:80@127.0.0.1/", "userinfo"),
        ("http://[::1]@example.com/", "userinfo"),
        ("http://@example.com/", "userinfo"),
        ("http://127.0.0.1%2f@example.com/", "userinfo"),
        ("http://127.0.0.1#@example.com/", "not_public"),  # the fragment ends the authority
        ("http://127.0.0.1?@example.com/", "not_public"),
        ("http://127.0.0.1/@example.com/", "not_public"),
        ("http://example.com\\@127.0.0.1/", "malformed"),  # browsers read \ as /
        ("http:\\\\127.0.0.1\\", "malformed"),
        ("http://example.com/a\\b", "malformed"),
        ("http://example.com＠127.0.0.1/", "malformed"),  # full-width @
        ("http://example.com%40127.0.0.1/", "malformed"),
        ("http://example.com／@127.0.0.1/", "userinfo"),  # full-width solidus ends nothing
        ("http://example.com％2f@127.0.0.1/", "userinfo"),
        ("http:/127.0.0.1/", "malformed"),  # browsers would add the missing slashes
        ("http:127.0.0.1/", "malformed"),
        ("http:///127.0.0.1/", "malformed"),
        ("http://", "malformed"),
        ("http://:80/", "malformed"),
        ("http://exa mple.com/", "malformed"),
        ("http://127.0.0.1\t.example.com/", "malformed"),
        ("http://127.0.0.1\n.example.com/", "malformed"),
        ("http://127.0.0.1\x00.example.com/", "malformed"),
        ("http://example.com/a b", "malformed"),
        ("http://exa\u00admple.com/", "malformed"),  # soft hyphen: IDNA deletes it
        ("http://exa\u200bmple.com/", "malformed"),  # zero-width space
        ("http://example.com\u00a0/", "malformed"),  # no-break space
        ("http://example.com\u3000/", "malformed"),  # ideographic space
        ("http://\u202e127.0.0.1/", "malformed"),  # bidi override
        ("http://example.com:0/", "malformed"),
        ("http://example.com:65536/", "malformed"),
        ("http://example.com:８０/", "malformed"),  # full-width port digits
        ("http://example.com:+80/", "malformed"),
        ("http://example.com:80x/", "malformed"),
        ("http://.example.com/", "malformed"),
        ("http://example..com/", "malformed"),
        ("http://example.com../", "malformed"),
        pytest.param("http://" + "a" * 64 + ".com/", "malformed", id="64-char label"),
        pytest.param("http://" + "a." * 127 + "com/", "malformed", id="257-char host"),
        ("http://exa_mple.com℀/", "malformed"),  # NFKC turns it into a/c
    ],
)
def test_userinfo_fragment_backslash_and_character_tricks_are_refused(
    url: str, reason: str
) -> None:
    assert refusal(url).reason == reason


# --- cloud metadata ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "100.100.100.200",
        "168.63.129.16",  # a public address: only the metadata list stops it
        "192.0.0.192",
        "[fd00:ec2::254]",
        "[fd00:ec2::23]",
        "[::ffff:169.254.169.254]",
        "[::ffff:a9fe:a9fe]",
        "[64:ff9b::a9fe:a9fe]",
        "[64:ff9b::169.254.169.254]",
        "[2002:a9fe:a9fe::1]",
        "0xa9fea9fe",
        "2852039166",
        "169.254.43518",
        "１６９．２５４．１６９．２５４",
        "metadata.google.internal",
        "METADATA.Google.Internal.",
        "metadata",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    ],
)
@pytest.mark.parametrize("policy", [DEFAULT, OPERATOR], ids=["default", "allow_private"])
def test_metadata_endpoints_are_refused_even_in_the_operator_lane(
    host: str, policy: JailPolicy
) -> None:
    err = refusal(f"http://{host}/latest/meta-data/", policy)
    assert err.reason == "metadata"
    assert str(err) == "refused: cloud metadata endpoint; it is never fetched"


@pytest.mark.parametrize(
    "addr_or_host",
    [
        IPv4Address("169.254.169.254"),
        IPv6Address("fd00:ec2::254%eth0"),
        IPv6Address("::ffff:169.254.170.2"),
        "fd00:ec2::254%eth0",
        "[fd00:ec2::23]",
        "0251.0376.0251.0376",
        "Metadata.Google.Internal.",
        "ｍｅｔａｄａｔａ",
    ],
)
def test_is_metadata_sees_through_every_spelling(
    addr_or_host: IPv4Address | IPv6Address | str,
) -> None:
    assert is_metadata(addr_or_host)


@pytest.mark.parametrize(
    "addr_or_host", ["8.8.8.8", "169.254.1.1", "metadata.example.com", "google.internal.example"]
)
def test_is_metadata_is_not_fooled_by_neighbours(addr_or_host: str) -> None:
    assert not is_metadata(addr_or_host)


def test_a_name_that_resolves_to_a_metadata_address_is_refused_at_the_address() -> None:
    with pytest.raises(URLRefusedError) as info:
        check_address(IPv4Address("168.63.129.16"), OPERATOR, host="innocent.example.com")
    assert info.value.reason == "metadata"
    with pytest.raises(URLRefusedError) as info:
        check_address(IPv6Address("fd00:ec2::254%eth0"), OPERATOR, host="innocent.example.com")
    assert info.value.reason == "metadata"


# --- the IANA special-purpose registries ---------------------------------------------------

SPECIAL_ADDRESSES = [
    "0.0.0.0",  # 0.0.0.0/8
    "0.1.2.3",
    "10.0.0.1",  # 10/8
    "10.255.255.255",
    "100.64.0.1",  # 100.64/10
    "100.127.255.254",
    "127.0.0.1",  # 127/8
    "127.255.255.254",
    "169.254.1.1",  # 169.254/16
    "172.16.0.1",  # 172.16/12
    "172.31.255.255",
    "192.0.0.1",  # 192.0.0/24
    "192.0.0.9",
    "192.0.2.1",  # 192.0.2/24
    "192.31.196.1",  # 192.31.196/24
    "192.52.193.1",  # 192.52.193/24
    "192.88.99.1",  # 192.88.99/24
    "192.168.1.1",  # 192.168/16
    "192.175.48.1",  # 192.175.48/24
    "198.18.0.1",  # 198.18/15
    "198.19.255.255",
    "198.51.100.1",  # 198.51.100/24
    "203.0.113.1",  # 203.0.113/24
    "224.0.0.1",  # 224/4
    "239.255.255.250",
    "240.0.0.1",  # 240/4
    "255.255.255.254",
    "255.255.255.255",
    "::",  # ::/128
    "::1",  # ::1/128
    "::ffff:127.0.0.1",  # ::ffff:0:0/96
    "::ffff:0.0.0.0",
    "::2",  # ::/96, compatible 0.0.0.2
    "64:ff9b::7f00:1",  # 64:ff9b::/96
    "64:ff9b:1::808:808",  # 64:ff9b:1::/48
    "100::1",  # 100::/64
    "2001::1",  # 2001::/23, Teredo
    "2001:1::1",
    "2001:2::1",  # benchmarking
    "2001:10::1",  # ORCHID
    "2001:20::1",  # ORCHIDv2
    "2001:1ff:ffff::1",
    "2001:db8::1",  # 2001:db8::/32
    "2002:7f00:1::1",  # 2002::/16
    "2002::1",
    "3fff::1",  # 3fff::/20
    "3fff:fff::1",
    "5f00::1",  # 5f00::/16
    "fc00::1",  # fc00::/7
    "fdff:ffff::1",
    "fe80::1",  # fe80::/10
    "febf::1",
    "fec0::1",  # fec0::/10
    "ff00::1",  # ff00::/8
    "ff02::1",
    "4000::1",  # outside 2000::/3: reserved by the IETF
    "8000::1",
    "::1:0:0:1",
]


@pytest.mark.parametrize("addr", SPECIAL_ADDRESSES)
def test_every_special_purpose_range_is_refused(addr: str) -> None:
    ip = ip_address(addr)
    assert not is_public(ip)
    with pytest.raises(URLRefusedError) as info:
        check_address(ip, DEFAULT, host="attacker.example")
    assert info.value.reason in ("not_public", "metadata")
    assert refusal(f"http://[{addr}]/" if ip.version == 6 else f"http://{addr}/").reason in (
        "not_public",
        "metadata",
    )


@pytest.mark.parametrize(
    "addr",
    [
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2000::1",
        "2001:200::1",
        "2003::1",
        "3ffe:ffff::1",
        "2a00:1450:4001::1",
    ],
)
def test_neighbours_of_special_ranges_are_public(addr: str) -> None:
    assert is_public(ip_address(addr))


def test_the_operator_lane_reaches_private_addresses_but_not_metadata() -> None:
    assert parse_url("http://127.0.0.1:8888/search", OPERATOR).ip == IPv4Address("127.0.0.1")
    assert parse_url("http://[::1]:8888/", OPERATOR).host_header == "[::1]:8888"
    assert parse_url("http://localhost:8888/", OPERATOR).host == "localhost"
    check_address(IPv4Address("10.0.0.1"), OPERATOR, host="searx.internal")
    assert refusal("http://169.254.169.254/", OPERATOR).reason == "metadata"


# --- domain lists --------------------------------------------------------------------------

EXAMPLE_ONLY = JailPolicy(allow_domains=frozenset({"*.Example.COM."}))
NO_EVIL = JailPolicy(deny_domains=frozenset({"evil.com", "Bücher.de"}))
BOTH = JailPolicy(
    allow_domains=frozenset({"example.com"}), deny_domains=frozenset({"ads.example.com"})
)


@pytest.mark.parametrize(
    ("policy", "host", "reason"),
    [
        (EXAMPLE_ONLY, "example.com", None),
        (EXAMPLE_ONLY, "EXAMPLE.com.", None),
        (EXAMPLE_ONLY, "docs.example.com", None),
        (EXAMPLE_ONLY, "a.b.example.com", None),
        (EXAMPLE_ONLY, "evil-example.com", "domain_not_allowed"),
        (EXAMPLE_ONLY, "example.com.evil.net", "domain_not_allowed"),
        (EXAMPLE_ONLY, "notexample.com", "domain_not_allowed"),
        (EXAMPLE_ONLY, "example.co", "domain_not_allowed"),
        (EXAMPLE_ONLY, "com", "domain_not_allowed"),
        (EXAMPLE_ONLY, "8.8.8.8", "domain_not_allowed"),
        (EXAMPLE_ONLY, "[2606:4700:4700::1111]", "domain_not_allowed"),
        (EXAMPLE_ONLY, "ｅｘａｍｐｌｅ.com", None),
        (NO_EVIL, "evil.com", "domain_denied"),
        (NO_EVIL, "EVIL.COM.", "domain_denied"),
        (NO_EVIL, "www.evil.com", "domain_denied"),
        (NO_EVIL, "a.b.evil.com", "domain_denied"),
        (NO_EVIL, "ｅｖｉｌ．ｃｏｍ", "domain_denied"),
        (NO_EVIL, "bücher.de", "domain_denied"),
        (NO_EVIL, "xn--bcher-kva.de", "domain_denied"),
        (NO_EVIL, "notevil.com", None),
        (NO_EVIL, "evil.com.example.org", None),
        (NO_EVIL, "evil.co", None),
        (BOTH, "example.com", None),
        (BOTH, "ads.example.com", "domain_denied"),
        (BOTH, "x.ads.example.com", "domain_denied"),
        (BOTH, "adsexample.com", "domain_not_allowed"),
    ],
)  # fmt: skip
def test_allow_and_deny_lists_match_subdomains_but_not_look_alikes(
    policy: JailPolicy, host: str, reason: str | None
) -> None:
    if reason is None:
        assert parse_url(f"https://{host}/", policy).scheme == "https"
    else:
        assert refusal(f"https://{host}/", policy).reason == reason


def test_the_allow_list_is_named_in_the_refusal_so_the_model_can_comply() -> None:
    err = refusal("https://elsewhere.org/", EXAMPLE_ONLY)
    assert "example.com" in str(err)


@pytest.mark.parametrize("entry", ["", "exa mple.com", "https://example.com/", "a..b", "x" * 300])
def test_bad_policy_domains_are_a_value_error(entry: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        JailPolicy(deny_domains=frozenset({entry}))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://example.com/", None),
        ("https://example.com:443/", None),
        ("https://example.com:8443/", "port"),
        ("http://example.com/", "port"),
        ("https://example.com:22/", "port"),
    ],
)
def test_allowed_ports(url: str, reason: str | None) -> None:
    policy = JailPolicy(allowed_ports=frozenset({443}))
    if reason is None:
        assert parse_url(url, policy).port == 443
    else:
        assert refusal(url, policy).reason == reason


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST.", "app.localhost", "printer.local", "db.internal", "nas.home.arpa"],
)
def test_names_that_are_local_by_definition_are_refused_before_dns(host: str) -> None:
    assert refusal(f"http://{host}/").reason == "not_public"
    check_host_name(host.lower().rstrip("."), OPERATOR)


# --- errors --------------------------------------------------------------------------------

LEAKY_URLS = [
    "http://10.1.2.3/",
    "http://0x0a010203/",
    "http://167838211/",
    "http://10.66051/",
    "http://[::ffff:10.1.2.3]/",
    "http://[64:ff9b::a01:203]/",
    "http://[2002:a01:203::1]/",
    "http://[fd12:3456::1]/",
    "http://169.254.169.254/",
    "http://2852039166/",
    "http://user@10.1.2.3/",
    "http://192.168.7.7:8080/admin",
]


@pytest.mark.parametrize("url", LEAKY_URLS)
def test_refusals_never_echo_the_internal_address(url: str) -> None:
    err = refusal(url)
    host = url.split("//")[1].split("/")[0].rpartition("@")[2]
    for text in (str(err), repr(err), err.message):
        assert host.strip("[]") not in text
        for internal in ("10.1.2.3", "192.168.7.7", "169.254"):
            assert internal not in text
    resolved = IPv4Address("10.1.2.3")
    with pytest.raises(URLRefusedError) as info:
        check_address(resolved, DEFAULT, host="intranet.example.com")
    assert str(resolved) not in str(info.value)


def test_refusal_is_a_non_retryable_fetch_error_with_a_reason_code() -> None:
    err = refusal("http://127.0.0.1/")
    assert isinstance(err, FetchError)
    assert isinstance(err, WebSearchError)
    assert err.retryable is False
    assert err.reason == "not_public"
    assert str(err).startswith("refused: the address is not public")


# --- linear time ---------------------------------------------------------------------------


def _finishes(func: Callable[[str], object], arg: str, limit_s: float) -> bool:
    """Run ``func(arg)`` in a thread; True if it returned (or raised) within ``limit_s``.

    A hang guard, not a timing assertion: linear work on these inputs takes milliseconds.
    """
    done = threading.Event()

    def run() -> None:
        with contextlib.suppress(URLRefusedError, ValueError):
            func(arg)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(limit_s)


ADVERSARIAL = {
    "200k slashes": "http://example.com" + "/" * 200_000,
    "200k at signs": "http://" + "@" * 200_000 + "example.com",
    "8k dots": "http://" + "." * 8_000,
    "8k labels": "http://" + "a." * 4_000,
    "8k numeric labels": "http://" + "1." * 4_000,
    "8k hex": "http://0x" + "0" * 8_000,
    "8k zeros": "http://" + "0" * 8_000 + ".1",
    "8k colons": "http://a" + ":" * 8_000,
    "8k brackets": "http://" + "[" * 8_000,
    "8k percents": "http://" + "%" * 8_000,
    "8k expanding ligatures": "http://" + "\ufdfa" * 8_000,
    "8k umlauts": "http://" + "ü" * 8_000,
    "8k path": "http://example.com/" + "a/" * 4_000,
    "8k query": "http://example.com/?" + "&a=" * 2_700,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_urls_are_handled_in_linear_time(name: str) -> None:
    assert _finishes(parse_url, ADVERSARIAL[name], limit_s=5.0)
    assert _finishes(read_ip, ADVERSARIAL[name][7:], limit_s=5.0)
    assert _finishes(is_metadata, ADVERSARIAL[name][7:], limit_s=5.0)


def test_a_200k_url_is_refused_for_its_length() -> None:
    url = "http://example.com/" + "a" * 200_000
    assert _finishes(parse_url, url, limit_s=5.0)
    err = refusal(url)
    assert err.reason == "malformed"
    assert "8,192" in str(err)


# -- boundaries, exactly (each of these once let a mutant of the jail through) -----------------


def _name_of(length: int) -> str:
    """A valid host name of exactly ``length`` characters: 63-character labels and a rest."""
    labels: list[str] = []
    while sum(map(len, labels)) + len(labels) + 63 < length:
        labels.append("a" * 63)
    rest = length - (sum(map(len, labels)) + len(labels))
    return ".".join([*labels, "b" * rest])


def test_a_url_of_exactly_the_limit_is_read_and_one_more_is_refused() -> None:
    head = "https://example.com/"
    assert len(parse_url(head + "p" * (8192 - len(head)), OPERATOR).url) == 8192
    assert "longer than 8,192" in str(refusal(head + "p" * (8193 - len(head)), OPERATOR))
    # Percent-encoding is counted too: é becomes %C3%A9.
    accepted = parse_url(head + "é" * ((8192 - len(head)) // 6), OPERATOR)
    assert len(accepted.url) <= 8192
    assert "once encoded" in str(refusal(head + "é" * ((8192 - len(head)) // 6 + 1), OPERATOR))


def test_a_host_name_of_253_characters_is_read_and_254_are_refused() -> None:
    assert parse_url(f"http://{_name_of(253)}/", OPERATOR).host == _name_of(253)
    assert parse_url(f"http://{_name_of(253)}./", OPERATOR).host == _name_of(253)  # root dot
    assert refusal(f"http://{_name_of(254)}/", OPERATOR).reason == "malformed"
    assert "longer than 253" in str(refusal(f"http://{_name_of(300)}/", OPERATOR))


def test_a_label_of_63_characters_is_read_and_64_or_65_are_refused() -> None:
    assert parse_url(f"http://{'a' * 63}.example/", OPERATOR).host == f"{'a' * 63}.example"
    for length in (64, 65):
        assert refusal(f"http://{'a' * length}.example/", OPERATOR).reason == "malformed"


@pytest.mark.parametrize(
    ("port", "accepted"),
    [
        ("0", False),
        ("1", True),
        ("65535", True),
        ("65536", False),
        ("65537", False),
        ("70000", False),
        ("99999", False),
    ],
)
def test_ports_from_1_to_65535_are_read(port: str, accepted: bool) -> None:
    url = f"http://example.com:{port}/"
    if accepted:
        assert parse_url(url, OPERATOR).port == int(port)
    else:
        assert refusal(url, OPERATOR).reason == "malformed"


@pytest.mark.parametrize(
    ("url", "canonical", "port"),
    [
        ("http://example.com/", "http://example.com/", 80),
        ("http://example.com:80/x", "http://example.com/x", 80),
        ("https://example.com:80/x", "https://example.com:80/x", 80),
        ("http://example.com:443/x", "http://example.com:443/x", 443),
        ("https://example.com/", "https://example.com/", 443),
    ],
)
def test_a_port_is_written_only_when_it_is_not_the_schemes_own(
    url: str, canonical: str, port: int
) -> None:
    target = parse_url(url, OPERATOR)
    assert (target.url, target.port) == (canonical, port)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http:///x", "it has no host"),
        ("http://1.2.3.4.0/", "ends in a number"),
        ("http://1.16777217/", "ends in a number"),
        ("http://xn--zz.example/", "international domain name"),
        ("http://" + "ä" * 64 + ".example/", "not a valid domain name"),
    ],
)
def test_hosts_that_are_neither_names_nor_addresses_are_refused(url: str, says: str) -> None:
    assert says in str(refusal(url, OPERATOR))


def test_a_hex_looking_label_that_is_not_hex_is_a_name() -> None:
    assert parse_url("http://foo.0xg/", OPERATOR).host == "foo.0xg"


@pytest.mark.parametrize(
    "addr",
    [
        "64:ff9b:1:a9fe:a9:fe00::",  # /48: the IPv4 at bytes 6, 7, 9, 10
        "64:ff9b:1:a9:fe:a9fe::",  # /56: bytes 7, 9, 10, 11
        "64:ff9b:1::a9:fea9:fe00:0",  # /64: bytes 9 to 12
        "64:ff9b:1::a9fe:a9fe",  # /96: the last four bytes
    ],
)
def test_metadata_behind_local_use_nat64_at_every_prefix_length_is_refused(addr: str) -> None:
    assert is_metadata(IPv6Address(addr))
    with pytest.raises(URLRefusedError) as caught:
        check_address(IPv6Address(addr), OPERATOR, host=addr)
    assert caught.value.reason == "metadata"


def test_isatap_is_read_only_with_the_universal_and_group_bits_clear() -> None:
    assert not is_public(IPv6Address("2001:4860::5efe:7f00:1"))  # carries 127.0.0.1
    assert not is_public(IPv6Address("2001:4860::200:5efe:7f00:1"))  # 0x02: still ISATAP
    assert not is_public(IPv6Address("2001:4860::100:5efe:7f00:1"))  # 0x01: still ISATAP
    assert not is_public(IPv6Address("2001:4860::300:5efe:7f00:1"))  # 0x03: still ISATAP
    assert is_public(IPv6Address("2001:4860::400:5efe:7f00:1"))  # 0x04: an ordinary address
    assert not is_public(IPv6Address("2001:4860:0:4:0:5efe:7f00:1"))  # byte 7 does not matter


def test_a_refusal_lists_at_most_ten_allowed_domains_and_says_none_for_no_port() -> None:
    domains = [f"d{i:02}.example" for i in range(12)]
    message = str(refusal("http://other.example/", JailPolicy(allow_domains=frozenset(domains))))
    assert ", ".join(domains[:10]) in message
    assert domains[10] not in message
    no_ports = JailPolicy(allow_private=True, allowed_ports=frozenset())
    assert str(refusal("http://example.com/", no_ports)).endswith("use one of: none")


def test_a_bad_policy_domain_is_quoted_up_to_80_characters() -> None:
    with pytest.raises(ValueError, match="allow_domains") as caught:
        JailPolicy(allow_domains=frozenset({"x" * 100 + " y"}))
    assert repr("x" * 80) in str(caught.value)
    assert repr("x" * 81) not in str(caught.value)


def test_policies_and_targets_cannot_be_changed_after_the_jail_read_them() -> None:
    import dataclasses

    target = parse_url("http://example.com/", OPERATOR)
    with pytest.raises(dataclasses.FrozenInstanceError):
        target.host = "127.0.0.1"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        OPERATOR.allow_private = False  # type: ignore[misc]


# -- the operator's domain lists hold whatever policy the host passes -------------------------

_DOMAINS = ["a.example", "b.example", "x.a.example", "y.b.example", "c.example"]


def _allowed(url: str, policy: JailPolicy) -> bool:
    try:
        parse_url(url, policy)
    except URLRefusedError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(
    caller_allow=st.sets(st.sampled_from(_DOMAINS), max_size=3),
    caller_deny=st.sets(st.sampled_from(_DOMAINS), max_size=2),
    operator_allow=st.sets(st.sampled_from(_DOMAINS), max_size=3),
    operator_deny=st.sets(st.sampled_from(_DOMAINS), max_size=2),
    host=st.sampled_from([*_DOMAINS, "z.x.a.example", "other.example"]),
)
def test_a_policy_restricted_by_the_operator_allows_only_what_both_allow(
    caller_allow: set[str],
    caller_deny: set[str],
    operator_allow: set[str],
    operator_deny: set[str],
    host: str,
) -> None:
    caller = JailPolicy(allow_domains=frozenset(caller_allow), deny_domains=frozenset(caller_deny))
    operator = JailPolicy(
        allow_domains=frozenset(operator_allow), deny_domains=frozenset(operator_deny)
    )
    reachable = any(
        _allowed(f"https://{h}/", caller) and _allowed(f"https://{h}/", operator)
        for h in [*_DOMAINS, "z.x.a.example", "other.example"]
    )
    if not reachable:  # refused at construction only when nothing at all could be fetched
        with pytest.raises(ValueError, match="leave no domain to fetch"):
            caller.restricted(operator.allow_domains, operator.deny_domains)
        return
    combined = caller.restricted(operator.allow_domains, operator.deny_domains)
    url = f"https://{host}/"
    assert _allowed(url, combined) == (_allowed(url, caller) and _allowed(url, operator))


def test_the_deny_list_holds_when_the_host_passes_its_own_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBSEARCH_DENY_DOMAINS", "denied.example")
    ws = WebSearch(fetch_policy=JailPolicy(allow_private=True))
    with pytest.raises(URLRefusedError, match="denied"):
        ws.fetch("https://www.denied.example/page")
    with pytest.raises(ConfigurationError, match="leave no domain to fetch"):
        WebSearch(
            fetch_policy=JailPolicy(allow_domains=frozenset({"docs.example"})),
            deny_domains=["docs.example"],
        )
