"""One spelling per page, so that two engines' links to it are seen as one.

``canonical_url`` lower-cases the scheme and host, drops a default port, the fragment, a
trailing slash and tracking parameters (``utm_*``, ``fbclid``, ``gclid`` …), keeping every
other parameter in its order. It is for comparing links, never for fetching them: the
result shows the link an engine gave. Linear in its input (splits and set lookups, no
regular expression), and total: any string gives a string.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["TRACKING_PARAMETERS", "canonical_url"]

#: Parameters that name the click, the campaign or the session, never the page.
TRACKING_PARAMETERS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "ref_src",
        "ref_url",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "spm",
    }
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMETERS


def canonical_url(url: str) -> str:
    """The form two links to the same page share (see the module docstring)."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # a malformed IPv6 literal or port: compare it as written
        return text
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = parts.path.rstrip("/")
    kept = [pair for pair in parts.query.split("&") if pair and not _tracking(pair.split("=")[0])]
    return urlunsplit((scheme, netloc, path, "&".join(kept), ""))
