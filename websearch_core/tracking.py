"""Which query parameters name the click, the campaign or the session, never the page.

Shared by the blend (two engines' links to one page are one) and the grounded providers (a
vendor tags the links its model cites, ``utm_source=openai``): a parameter is tracking when
its name starts with ``utm_`` or is one of ``TRACKING_PARAMETERS``, whatever its case.
"""

from __future__ import annotations

__all__ = ["TRACKING_PARAMETERS", "is_tracking", "without_tracking"]

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


def is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMETERS


def without_tracking(url: str) -> str:
    """``url`` as given, less its tracking parameters (and the ``?`` if none is left).

    Nothing else changes, unlike ``blend.canonical.canonical_url``: this is the link a
    reader is shown and may follow. Linear: one split of the query, one pass over it.
    """
    head, mark, rest = url.partition("?")
    if not mark:
        return url
    query, hash_mark, fragment = rest.partition("#")
    kept = [pair for pair in query.split("&") if pair and not is_tracking(pair.split("=")[0])]
    tail = f"{hash_mark}{fragment}"
    return f"{head}?{'&'.join(kept)}{tail}" if kept else f"{head}{tail}"
