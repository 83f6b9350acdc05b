"""One spelling per page, so that two engines' links to it are seen as one.

``canonical_url`` lower-cases the scheme and host, drops a default port, the fragment, a
trailing slash and tracking parameters (``utm_*``, ``fbclid``, ``gclid`` …), keeping every
other parameter in its order, and writes percent-escapes one way. It is for comparing
links, never for fetching them: the result shows the link an engine gave. Linear in its
input (splits and set lookups, no regular expression), total (any string gives a string) and
idempotent: what it removes from the end of a part (slashes, whitespace, empty or blank
pairs) is removed together, so no removal exposes another for a second pass (``'0 #'`` once
became ``'0 '``, and that ``'0'``).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from websearch_core.tracking import TRACKING_PARAMETERS, is_tracking

__all__ = ["TRACKING_PARAMETERS", "canonical_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789abcdefABCDEF")


def _escapes(text: str) -> str:
    """Percent-escapes in one spelling (RFC 3986 §6.2.2): an escaped unreserved character is
    the character (``%7E`` is ``~``), any other escape is upper case (``%2f`` is ``%2F``).
    One pass, from ``%`` to ``%``."""
    if "%" not in text:
        return text
    pieces: list[str] = []
    position = 0
    while (found := text.find("%", position)) != -1:
        pieces.append(text[position:found])
        escape = text[found + 1 : found + 3]
        if len(escape) == 2 and escape[0] in _HEX and escape[1] in _HEX:
            character = chr(int(escape, 16))
            pieces.append(character if character in _UNRESERVED else "%" + escape.upper())
            position = found + 3
        else:
            pieces.append("%")
            position = found + 1
    pieces.append(text[position:])
    return "".join(pieces)


def _edge(character: str) -> bool:
    """What neither end of a canonical URL holds: whitespace, and the C0 controls and space
    that ``urlsplit`` itself strips from the front (WHATWG's "C0 control or space")."""
    return character.isspace() or character <= " "


def _trimmed(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _edge(text[start]):
        start += 1
    while end > start and _edge(text[end - 1]):
        end -= 1
    return text[start:end]


def _without_trailing(text: str, also: str = "") -> str:
    """``text`` without what it ends with of ``_edge`` characters (and of ``also``), in one
    pass."""
    end = len(text)
    while end and (_edge(text[end - 1]) or text[end - 1] in also):
        end -= 1
    return text[:end]


def canonical_url(url: str) -> str:
    """The form two links to the same page share (see the module docstring)."""
    text = _trimmed(url)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # a malformed IPv6 literal or port: compare it as written
        return text
    scheme = parts.scheme.lower()
    host = _without_trailing((parts.hostname or "").strip(), ".")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = _without_trailing(_escapes(parts.path), "/")
    if not netloc and path.startswith("//"):
        # Written back without a host, "//x" would be read as the host "x" next time: the
        # same path with one slash is what any later pass keeps.
        path = "/" + path.lstrip("/")
    pairs = (_escapes(pair) for pair in parts.query.split("&") if _trimmed(pair))
    kept = [pair for pair in pairs if not is_tracking(pair.split("=")[0])]
    return _trimmed(urlunsplit((scheme, netloc, path, _without_trailing("&".join(kept)), "")))
