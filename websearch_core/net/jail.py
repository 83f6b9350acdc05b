"""The URL jail: which URLs and addresses a fetch may reach, as pure functions (no I/O).

A URL a model wrote is an SSRF attempt until proven otherwise. ``parse_url`` reads it the way
a browser or curl would, refuses what is ambiguous instead of guessing, and returns a
canonical ``Target``; a host written as an IP literal is checked here and then. A host name
is checked against the domain lists here, and every address it resolves to must pass
``check_address`` in the transport, which then connects to that checked address.

Decisions:

- A backslash, a ``%`` in the host (percent-encoding or an IPv6 zone id), whitespace and
  control characters are refused, not repaired: parsers disagree about them, and a URL that
  two parsers read differently is how a jail is escaped.
- The host is NFKC-normalised and IDNA-encoded before it is read, as browsers do, so
  127.0.0.1 in full-width digits and dots is 127.0.0.1. A name whose ``xn--`` labels do not
  decode under IDNA 2008 (what httpx reads them with) is refused as malformed. A host whose
  last label is a number must be a valid IPv4 address in some spelling, or it is refused
  (WHATWG's "ends in a number" rule), so that no resolver gets to guess what it means.
- An IPv6 address that carries an IPv4 (mapped, compatible, translated, NAT64 ``64:ff9b::/96``,
  6to4, ISATAP) is public only if every IPv4 it carries is public: ``::ffff:8.8.8.8`` is
  8.8.8.8. Teredo (in ``2001::/23``) and local-use NAT64 (``64:ff9b:1::/48``) are never
  public, whatever they carry.

Nothing here uses a regular expression; every step is one scan of input bounded first.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Literal, TypeAlias
from urllib.parse import quote

import idna

from websearch_core.errors import URLRefusedError

__all__ = [
    "DEFAULT",
    "MAX_URL_CHARS",
    "JailPolicy",
    "RefusalReason",
    "Target",
    "check_address",
    "check_host_name",
    "embedded_ipv4",
    "is_metadata",
    "is_public",
    "parse_url",
    "read_ip",
]

IPAddress: TypeAlias = IPv4Address | IPv6Address
RefusalReason = Literal[
    "scheme",
    "userinfo",
    "malformed",
    "port",
    "not_public",
    "metadata",
    "domain_denied",
    "domain_not_allowed",
]

MAX_URL_CHARS = 8192  # what common servers accept in a request line; longer is not a page URL
MAX_HOST_CHARS = 253  # RFC 1035
_MAX_IP_TEXT = 300  # a DNS-sized host plus brackets and a zone id; bounds int() on digits
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")
_DECIMAL = frozenset("0123456789")
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")

# IANA IPv4 Special-Purpose Address Registry, plus multicast. The AS112, AMT and 6to4-relay
# anycast blocks are globally reachable, but nothing a model should fetch lives there.
_NON_PUBLIC_V4 = tuple(
    IPv4Network(net)
    for net in (
        "0.0.0.0/8",  # RFC 791: "this network"; connecting to 0.0.0.0 reaches localhost
        "10.0.0.0/8",  # RFC 1918: private
        "100.64.0.0/10",  # RFC 6598: shared address space (CGNAT; Alibaba's metadata)
        "127.0.0.0/8",  # RFC 1122: loopback
        "169.254.0.0/16",  # RFC 3927: link-local (most clouds' metadata)
        "172.16.0.0/12",  # RFC 1918: private
        "192.0.0.0/24",  # RFC 6890: IETF protocol assignments
        "192.0.2.0/24",  # RFC 5737: TEST-NET-1
        "192.31.196.0/24",  # RFC 7535: AS112-v4
        "192.52.193.0/24",  # RFC 7450: AMT
        "192.88.99.0/24",  # RFC 7526: deprecated 6to4 relay anycast
        "192.168.0.0/16",  # RFC 1918: private
        "192.175.48.0/24",  # RFC 7534: direct delegation AS112 service
        "198.18.0.0/15",  # RFC 2544: benchmarking
        "198.51.100.0/24",  # RFC 5737: TEST-NET-2
        "203.0.113.0/24",  # RFC 5737: TEST-NET-3
        "224.0.0.0/4",  # RFC 5771: multicast
        "240.0.0.0/4",  # RFC 1112: reserved
        "255.255.255.255/32",  # RFC 919: limited broadcast
    )
)
# IANA IPv6 Special-Purpose Address Registry entries that are never public, whatever they
# carry, plus the ranges RFC 4291 and RFC 3879 set aside.
_NON_PUBLIC_V6 = tuple(
    IPv6Network(net)
    for net in (
        "::/128",  # RFC 4291: unspecified
        "::1/128",  # RFC 4291: loopback
        "64:ff9b:1::/48",  # RFC 8215: local-use IPv4/IPv6 translation
        "100::/64",  # RFC 6666: discard-only
        "2001::/23",  # RFC 2928: IETF protocol assignments (Teredo, benchmarking, ORCHID)
        "2001:db8::/32",  # RFC 3849: documentation
        "3fff::/20",  # RFC 9637: documentation
        "5f00::/16",  # RFC 9602: SRv6 SIDs
        "fc00::/7",  # RFC 4193: unique local
        "fe80::/10",  # RFC 4291: link-local
        "fec0::/10",  # RFC 3879: site-local, deprecated but still routed by some stacks
        "ff00::/8",  # RFC 4291: multicast
    )
)
_GLOBAL_UNICAST = IPv6Network("2000::/3")  # RFC 3587: all IANA allocates; the rest is reserved
# Prefixes outside 2000::/3 whose address is an IPv4 in disguise: judged by what they carry.
_MAPPED = IPv6Network("::ffff:0:0/96")  # RFC 4291: IPv4-mapped
_TRANSLATED = IPv6Network("::ffff:0:0:0/96")  # RFC 2765: IPv4-translated (SIIT)
_COMPATIBLE = IPv6Network("::/96")  # RFC 4291: IPv4-compatible, deprecated
_NAT64 = IPv6Network("64:ff9b::/96")  # RFC 6052: NAT64 well-known prefix
_V4_CARRIERS = (_MAPPED, _TRANSLATED, _COMPATIBLE, _NAT64)
_NAT64_LOCAL = IPv6Network("64:ff9b:1::/48")  # RFC 8215: operators embed at /48 to /96
# RFC 6052 2.2: where the IPv4 sits for a /96, /64, /56 and /48 prefix (byte 8 is skipped).
_NAT64_LOCAL_OFFSETS = ((12, 13, 14, 15), (9, 10, 11, 12), (7, 9, 10, 11), (6, 7, 9, 10))
_ISATAP_MARKER = b"\x00\x5e\xfe"  # RFC 5214: interface id [0|1|2|3]00:5efe:a.b.c.d

# Credential endpoints, refused even in the operator lane. 168.63.129.16 is a public address,
# so this list is the only thing that stops it.
_METADATA_V4 = frozenset(
    IPv4Address(ip)
    for ip in (
        "169.254.169.254",  # AWS, GCP, Azure, OCI, DigitalOcean, OpenStack, ...
        "169.254.170.2",  # AWS ECS task credentials
        "169.254.170.23",  # AWS EKS Pod Identity
        "169.254.42.42",  # Scaleway
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure WireServer
        "192.0.0.192",  # Oracle Cloud Classic
    )
)
_METADATA_V6 = frozenset(
    IPv6Address(ip)
    for ip in (
        "fd00:ec2::254",  # AWS IMDS
        "fd00:ec2::23",  # AWS EKS Pod Identity
        "fd20:ce::254",  # GCP
    )
)
_METADATA_NAMES = frozenset(
    (
        "metadata.google.internal",  # GCP
        "metadata.goog",  # GCP
        "metadata",  # GCP, through the instance's DNS search path
        "instance-data",  # AWS, through the search path
        "instance-data.ec2.internal",  # AWS
    )
)
# Special-use names that never resolve to a public address: refused before DNS is asked.
_LOCAL_NAMES = frozenset(("localhost", "local", "internal", "home.arpa"))  # RFC 6761/6762/8375


@dataclass(frozen=True)
class JailPolicy:
    """What a fetch may reach. Domain entries are normalised; a bad entry is a ``ValueError``."""

    #: Open every address that is not public — loopback, private, link-local, CGNAT, unique
    #: local, reserved — to fetches, for an intranet agent or local testing. Cloud metadata
    #: endpoints stay refused. The operator's choice (``fetch_allow_private``), never the
    #: model's: no tool argument reaches it.
    allow_private: bool = False
    allow_domains: frozenset[str] = frozenset()  # if set, only these and their subdomains
    deny_domains: frozenset[str] = frozenset()  # these and their subdomains, always
    allowed_ports: frozenset[int] | None = None  # None: any port

    def __post_init__(self) -> None:
        for name in ("allow_domains", "deny_domains"):
            domains = frozenset(_policy_domain(entry, name) for entry in getattr(self, name))
            object.__setattr__(self, name, domains)

    def restricted(
        self,
        allow_domains: frozenset[str] = frozenset(),
        deny_domains: frozenset[str] = frozenset(),
    ) -> JailPolicy:
        """This policy with an operator's domain lists added, never loosened: every domain
        either denies is denied; where both allow some, only what both allow is allowed.
        ``ValueError`` when nothing would be left to fetch (the lists contradict)."""
        extra = JailPolicy(allow_domains=allow_domains, deny_domains=deny_domains)
        allow = _both_allow(self.allow_domains, extra.allow_domains)
        deny = self.deny_domains | extra.deny_domains
        if (self.allow_domains or extra.allow_domains) and all(
            _within(domain, deny) for domain in allow
        ):
            raise ValueError(
                "the fetch policy and the allow_domains/deny_domains settings leave no domain "
                f"to fetch (the policy allows {_listed(self.allow_domains)}, the settings "
                f"allow {_listed(extra.allow_domains)} and deny {_listed(deny)}): make them "
                "agree"
            )
        return replace(self, allow_domains=allow, deny_domains=deny)


DEFAULT = JailPolicy()


@dataclass(frozen=True)
class Target:
    """A URL the jail accepted, in canonical form: what to connect to and what to send."""

    scheme: str  # "http" or "https"
    host: str  # lowercase ASCII name without trailing dot, or the canonical IP
    ip: IPAddress | None  # set when the URL named an IP literal, in whatever spelling
    port: int
    url: str  # no userinfo, no fragment, canonical host
    host_header: str


def parse_url(url: str, policy: JailPolicy = DEFAULT) -> Target:
    """Read ``url`` as a browser would and refuse it unless ``policy`` lets it through."""
    if len(url) > MAX_URL_CHARS:
        raise _refuse("malformed", f"it is longer than {MAX_URL_CHARS:,} characters")
    text = url.strip()
    if not text.isprintable() or " " in text:
        raise _refuse("malformed", "it contains whitespace or control characters")
    text = text.partition("#")[0]  # WHATWG: the fragment ends the URL, before '@' or ':'
    if "\\" in text:
        raise _refuse("malformed", "it contains a backslash, which browsers read as '/'")
    scheme, colon, rest = text.partition(":")
    scheme = scheme.lower()
    if not colon or (scheme != "http" and scheme != "https"):
        raise _refuse("scheme", _with_scheme(text, policy))
    if not rest.startswith("//"):
        raise _refuse("malformed", "write it as https://host/path")
    rest = rest[2:]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        raise _refuse("userinfo")
    if "%" in authority:
        raise _refuse("malformed", "the host is percent-encoded or has an IPv6 zone id")
    raw_host, port = _split_port(authority, _DEFAULT_PORTS[scheme])
    host, ip = _canonical_host(raw_host)
    if policy.allowed_ports is not None and port not in policy.allowed_ports:
        raise _refuse("port", ", ".join(str(p) for p in sorted(policy.allowed_ports)) or "none")
    check_host_name(host, policy)
    if ip is not None:
        check_address(ip, policy, host=host)
    authority = f"[{host}]" if isinstance(ip, IPv6Address) else host
    if port != _DEFAULT_PORTS[scheme]:
        authority = f"{authority}:{port}"
    path = "".join(c if c.isascii() else quote(c, safe="") for c in tail)
    if not path.startswith("/"):
        path = "/" + path
    canonical = f"{scheme}://{authority}{path}"
    if len(canonical) > MAX_URL_CHARS:  # percent-encoding can triple a path's length
        raise _refuse("malformed", f"it is longer than {MAX_URL_CHARS:,} characters once encoded")
    return Target(scheme, host, ip, port, canonical, authority)


def read_ip(host: str) -> IPAddress | None:
    """Read ``host`` as ``inet_aton`` / ``getaddrinfo`` would; ``None`` if it is not an IP.

    IPv4 in one to four parts, each decimal, octal (``0177``) or hex (``0x7f``), with an
    optional trailing dot; IPv6 bare or bracketed, with any zone id (``%eth0``, ``%25eth0``)
    dropped. Only ASCII digits count: ``int()`` would also take ``'1_0'`` and full-width
    digits, which the OS does not.
    """
    if len(host) > _MAX_IP_TEXT:
        return None
    if host.startswith("[") and host.endswith("]"):
        return _read_ipv6(host[1:-1])
    if ":" in host:
        return _read_ipv6(host)
    return _read_ipv4(host)


def embedded_ipv4(addr: IPv6Address) -> IPv4Address | None:
    """The IPv4 that ``addr`` delivers to through a transition mechanism, if any.

    For Teredo this is the client (the packet's destination); ``is_public`` and
    ``is_metadata`` also weigh the Teredo server and every other IPv4 the address may carry.
    """
    carried = _carried_ipv4s(addr)
    return carried[0] if carried else None


def is_public(addr: IPAddress) -> bool:
    """Whether ``addr`` is globally reachable and not special-purpose (see module doc)."""
    if isinstance(addr, IPv4Address):
        return not any(addr in net for net in _NON_PUBLIC_V4)
    if any(addr in net for net in _NON_PUBLIC_V6):
        return False
    if addr not in _GLOBAL_UNICAST and not any(addr in net for net in _V4_CARRIERS):
        return False
    return all(is_public(v4) for v4 in _carried_ipv4s(addr))


def is_metadata(addr_or_host: IPAddress | str) -> bool:
    """Whether this is a cloud metadata endpoint, by address (in any disguise) or by name."""
    if isinstance(addr_or_host, str):
        addr = read_ip(addr_or_host)
        if addr is None:
            name = unicodedata.normalize("NFKC", addr_or_host).lower().rstrip(".")
            return _within(name, _METADATA_NAMES)
    else:
        addr = addr_or_host
    if isinstance(addr, IPv4Address):
        return addr in _METADATA_V4
    unscoped = IPv6Address(int(addr))  # a zone id would defeat the set lookup
    return unscoped in _METADATA_V6 or any(v4 in _METADATA_V4 for v4 in _carried_ipv4s(addr))


def check_address(addr: IPAddress, policy: JailPolicy = DEFAULT, *, host: str) -> None:
    """Refuse ``addr`` (what ``host`` named or resolved to) unless ``policy`` allows it."""
    if is_metadata(addr) or is_metadata(host):
        raise _refuse("metadata")
    if not policy.allow_private and not is_public(addr):
        raise _refuse("not_public")


def check_host_name(host: str, policy: JailPolicy = DEFAULT) -> None:
    """Before DNS: the domain lists, metadata names and names that are local by definition.

    ``host`` is a ``Target.host``; a look-alike such as ``example.com.evil.net`` or
    ``evil-example.com`` is not a subdomain of ``example.com``.
    """
    name = host.lower().rstrip(".")
    if is_metadata(name):
        raise _refuse("metadata")
    if _within(name, policy.deny_domains):
        raise _refuse("domain_denied")
    if policy.allow_domains and not _within(name, policy.allow_domains):
        raise _refuse("domain_not_allowed", ", ".join(sorted(policy.allow_domains)[:10]))
    if not policy.allow_private and _within(name, _LOCAL_NAMES):
        raise _refuse("not_public")


_MESSAGES: dict[RefusalReason, str] = {
    "scheme": "refused: only http:// and https:// URLs can be fetched{}",
    "userinfo": "refused: the URL carries credentials (user@host); remove the part before '@'",
    "malformed": "refused: the URL is malformed ({}); fix it or fetch another URL",
    # The switch is named for the person running the agent (everyone testing on localhost, an
    # intranet or a Docker network meets this first); no tool argument reaches it.
    "not_public": (
        "refused: the address is not public (loopback, private, link-local, reserved or "
        "documentation); only pages on the public internet can be fetched. This is off by "
        "default so that a model cannot reach this machine or its network; the operator can "
        "allow it with WEBSEARCH_FETCH_ALLOW_PRIVATE=1 (websearch fetch --allow-private)"
    ),
    "metadata": "refused: cloud metadata endpoint; it is never fetched",
    "domain_denied": "refused: the domain is denied by the host application; use another source",
    "domain_not_allowed": "refused: the domain is not allowed; fetch a page on {} or a subdomain",
    "port": "refused: the port is not allowed; use one of: {}",
}


def _with_scheme(text: str, policy: JailPolicy) -> str:
    """For ``example.com/page`` written without a scheme, the suggestion of its https URL,
    only if that URL would be fetched: never a URL the jail would refuse next (an address,
    a metadata name), and never one holding credentials (they are not repeated back)."""
    authority = text.partition("/")[0]
    host = authority.partition(":")[0]
    if "://" in text or "@" in authority or "." not in host or len(text) > 200:
        return ""
    try:
        parse_url(f"https://{text}", policy)
    except URLRefusedError:
        return ""
    return f"; did you mean https://{text}?"


def _refuse(reason: RefusalReason, detail: str = "") -> URLRefusedError:
    return URLRefusedError(reason, _MESSAGES[reason].format(detail))


def _split_port(authority: str, default: int) -> tuple[str, int]:
    if authority.startswith("["):
        end = authority.find("]") + 1
        if not end:
            raise _refuse("malformed", "an IPv6 address is missing its ']'")
        host, after = authority[:end], authority[end:]
        if after and not after.startswith(":"):
            raise _refuse("malformed", "text follows the IPv6 address")
        port_text = after[1:]
    else:
        host, _, port_text = authority.partition(":")
        if ":" in port_text:
            raise _refuse("malformed", "an IPv6 address must be written in brackets")
    if not port_text:
        return host, default
    if len(port_text) > 5 or not _DECIMAL.issuperset(port_text) or not 0 < int(port_text) < 65536:
        raise _refuse("malformed", "the port is not a number from 1 to 65535")
    return host, int(port_text)


def _canonical_host(raw: str) -> tuple[str, IPAddress | None]:
    if raw.startswith("["):
        ip = read_ip(raw)
        if not isinstance(ip, IPv6Address):
            raise _refuse("malformed", "the text in brackets is not an IPv6 address")
        return str(ip), ip
    # What UTS 46 does before DNS: full-width digits and dots become ASCII ones. The idna
    # codec's nameprep would too, but the reading must not hang on one codec's internals.
    name = unicodedata.normalize("NFKC", raw).replace("\u3002", ".").lower()
    if len(name) > MAX_HOST_CHARS + 1:  # IDNA never shortens a name; bound its work first
        raise _refuse("malformed", "the host is longer than 253 characters")
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise _refuse("malformed", "the host is not a valid domain name") from None
    if name.endswith("."):
        name = name[:-1]
    if not name:
        raise _refuse("malformed", "it has no host")
    if len(name) > MAX_HOST_CHARS or not _HOST_CHARS.issuperset(name):
        raise _refuse("malformed", "the host is not a valid domain name")
    labels = name.split(".")
    if not all(0 < len(label) < 64 for label in labels):
        raise _refuse("malformed", "the host is not a valid domain name")
    if any(label.startswith("xn--") for label in labels):
        # httpx decodes these with the idna package (IDNA 2008) whenever it reads the host; a
        # label it cannot decode would fail there, after the jail said yes.
        try:
            idna.decode(name)
        except (idna.IDNAError, UnicodeError):
            raise _refuse(
                "malformed", "the host is not a valid international domain name"
            ) from None
    ip = read_ip(name)
    if ip is not None:
        return str(ip), ip
    if _is_number(labels[-1]):
        raise _refuse("malformed", "the host ends in a number but is not an IPv4 address")
    return name, None


def _policy_domain(raw: str, setting: str) -> str:
    text = raw.strip().lower().removeprefix("*.").removeprefix(".")
    try:
        return _canonical_host(text)[0]
    except URLRefusedError:
        raise ValueError(f"{setting}: {raw[:80]!r} is not a domain name") from None


def _both_allow(first: frozenset[str], second: frozenset[str]) -> frozenset[str]:
    """The domains two allow lists both allow (each entry covers its subdomains); either list
    empty allows every domain."""
    if not first or not second:
        return first or second
    return frozenset(a for a in first if _within(a, second)) | frozenset(
        b for b in second if _within(b, first)
    )


def _listed(domains: frozenset[str]) -> str:
    return ", ".join(sorted(domains)[:5]) or "any"


def _within(name: str, domains: frozenset[str]) -> bool:
    """``name`` is one of ``domains`` or a subdomain of one; a set lookup per label."""
    suffix = name
    while domains:
        if suffix in domains:
            return True
        _, dot, suffix = suffix.partition(".")
        if not dot:
            return False
    return False


def _read_ipv6(text: str) -> IPv6Address | None:
    address, percent, zone = text.partition("%")
    if percent and not zone:
        return None
    try:
        return IPv6Address(address)
    except ValueError:
        return None


def _read_ipv4(text: str) -> IPv4Address | None:
    if text.endswith("."):
        text = text[:-1]
    parts = text.split(".")
    if len(parts) > 4:
        return None
    numbers: list[int] = []
    for part in parts:
        number = _read_ipv4_part(part)
        if number is None:
            return None
        numbers.append(number)
    *head, last = numbers
    # The last part fills every byte the others left: 127.1 is 127.0.0.1.
    if any(n > 255 for n in head) or last >= 1 << (8 * (5 - len(numbers))):
        return None
    return IPv4Address(sum(n << (24 - 8 * i) for i, n in enumerate(head)) + last)


def _read_ipv4_part(part: str) -> int | None:
    if part[:2] in ("0x", "0X"):
        digits, base, charset = part[2:], 16, _HEX
        if not digits:
            return 0  # WHATWG reads a bare "0x" as zero
    elif len(part) > 1 and part[0] == "0":
        digits, base, charset = part[1:], 8, _OCTAL
    else:
        digits, base, charset = part, 10, _DECIMAL
    if not digits or not charset.issuperset(digits):
        return None
    return int(digits, base)


def _is_number(label: str) -> bool:
    if label[:2] in ("0x", "0X"):
        return _HEX.issuperset(label[2:])
    return _DECIMAL.issuperset(label)


def _carried_ipv4s(addr: IPv6Address) -> tuple[IPv4Address, ...]:
    """Every IPv4 that ``addr`` may deliver to; the destination proper comes first."""
    packed = addr.packed
    low32 = IPv4Address(packed[12:])
    found: list[IPv4Address] = []
    # ::/96 holds :: and ::1 too, which are not IPv4 in disguise.
    if any(addr in net for net in _V4_CARRIERS) and int(addr) > 1:
        found.append(low32)
    if addr in _NAT64_LOCAL:
        found += (IPv4Address(bytes(packed[i] for i in at)) for at in _NAT64_LOCAL_OFFSETS)
    if addr.sixtofour is not None:  # RFC 3056: 2002:AABB:CCDD::/48
        found.append(addr.sixtofour)
    if addr.teredo is not None:  # RFC 4380: client is the low 32 bits inverted
        server, client = addr.teredo
        found += (client, server)
    if packed[9:12] == _ISATAP_MARKER and packed[8] & 0xFC == 0:
        found.append(low32)
    return tuple(found)
