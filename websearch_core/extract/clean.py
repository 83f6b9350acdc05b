"""Bounding the input, and taking out what is never the article: code, chrome, boilerplate.

Nodes are only ever removed in reverse document order, after every decision about them has
been made: a descendant is removed before its ancestor, so no node object that is still
going to be used points into a subtree that has already been freed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_core.extract.nesting import flatten

__all__ = [
    "MAX_INPUT_CHARS",
    "bound_input",
    "is_boilerplate",
    "remove_chrome",
    "remove_junk",
    "remove_nodes",
]

#: HTML beyond this is cut before parsing. Fetch reads at most 2 MB; a direct caller can pass
#: anything, and no article needs more than a few hundred kilobytes of markup.
MAX_INPUT_CHARS = 5_000_000

#: The parser's stack is kept at most this deep (``nesting.flatten``): real pages stay under
#: ~60 levels (51 at most on the benchmark's pages), and parse time grows with tags times depth.
MAX_NESTING = 256
#: A page with at most this many tags is parsed as it is: even nested all the way down, its
#: parse costs tags² steps, a few hundredths of a second, less than the scan that would
#: prevent it. Bigger pages are scanned (about 3 µs a tag).
_SCAN_ABOVE_TAGS = 4_000

#: Removed wherever they are: they carry code, media or controls, never article text.
JUNK_TAGS = [
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "iframe",
    "object",
    "embed",
    "canvas",
    "video",
    "audio",
    "button",
    "input",
    "select",
    "textarea",
    "dialog",
    "link",
    "meta",
    "img",
    "picture",
]

# Class and id fragments that name page furniture. Matched case-insensitively as substrings
# by the parser itself (one C-side selector pass, no Python loop over every element); the
# short, ambiguous ones ("ad", "nav", "tags") only as whole class names or name prefixes.
_FURNITURE_FRAGMENTS = (
    "comment",
    "disqus",
    "share",
    "sharing",
    "social",
    "related",
    "recommend",
    "newsletter",
    "subscribe",
    "signup",
    "sign-up",
    "cookie",
    "consent",
    "gdpr",
    "promo",
    "advert",
    "sponsor",
    "popup",
    "modal",
    "sidebar",
    "breadcrumb",
    "pagination",
    "footer",
    "masthead",
    "navbar",
    "navigation",
    "menu",
    "toolbar",
    "outbrain",
    "taboola",
    "byline",
    "dateline",
    "timestamp",
    "author-bio",
    "author-info",
    "sr-only",
    "visually-hidden",
    "screen-reader",
    "most-popular",
    "mostpopular",
    "trending",
    "read-more",
    "more-stories",
    "skip-link",
    "caption",
    "credit",
    "widget",
    "banner",
    "print-only",
    "login",
    "tooltip",
    "dropdown",
)
_FURNITURE_WORDS = ("ad", "ads", "nav", "tags", "tag", "meta", "rail", "hidden", "aside", "share")

#: Fragments that name the content itself: a node matching one of these and a furniture
#: fragment ("article-footer" no, "article-body-with-sidebar" yes) is judged by its text.
_CONTENT = re.compile(r"article|body|content|entry|main|post|story|text|blog|prose|markdown|hentry")
#: Furniture no content word can excuse: a share bar is a share bar whatever it is inside.
_ALWAYS_FURNITURE = re.compile(
    r"comment|disqus|share|sharing|social|related|recommend|newsletter|subscribe|cookie|"
    r"consent|promo|advert|sponsor|outbrain|taboola|sr-only|visually-hidden|screen-reader|"
    r"byline|caption|credit|most-?popular|trending|more-stories"
)


def _furniture_selector() -> str:
    parts: list[str] = []
    for attribute in ("class", "id"):
        parts.extend(f"[{attribute}*={fragment} i]" for fragment in _FURNITURE_FRAGMENTS)
        for word in _FURNITURE_WORDS:
            parts.append(f"[{attribute}~={word} i]")
            parts.append(f'[{attribute}^="{word}-" i]')
            parts.append(f'[{attribute}*=" {word}-" i]')
            parts.append(f'[{attribute}$="-{word}" i]')
    return ", ".join(parts)


_CHROME_TAGS = "nav, aside, footer, header, menu"
_CHROME_TAG_NAMES = frozenset(_CHROME_TAGS.split(", "))
#: The selector above, as a regex over "class id" (to tell which part of the selector matched).
_FURNITURE = re.compile(
    "|".join(re.escape(fragment) for fragment in _FURNITURE_FRAGMENTS)
    + r"|(?:^|[\s_-])(?:"
    + "|".join(_FURNITURE_WORDS)
    + r")(?:$|[\s-])",
    re.IGNORECASE,
)
_HIDDEN = (
    '[hidden], [aria-hidden="true"], [style*="display:none" i], [style*="display: none" i], '
    '[style*="visibility:hidden" i], [style*="visibility: hidden" i]'
)
_ROLES = (
    '[role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"], '
    '[role="search"], [role="dialog"], [role="alert"], [role="menu"], [role="menubar"]'
)
_NEVER_REMOVED = frozenset(("html", "body", "main"))
_SELECTOR = ", ".join((_CHROME_TAGS, _HIDDEN, _ROLES, _furniture_selector()))


def bound_input(html: str) -> tuple[str, str | None]:
    """The part of ``html`` that is safe to parse, and a note of what was changed, if anything.

    Beyond ``MAX_INPUT_CHARS`` the input is cut (the note says how much); nesting deeper
    than ``MAX_NESTING`` is flattened, which keeps every word.
    """
    notes = []
    if len(html) > MAX_INPUT_CHARS:
        notes.append(
            f"the page's last {len(html) - MAX_INPUT_CHARS:,} characters of HTML were not "
            f"read (the extractor reads at most {MAX_INPUT_CHARS:,})"
        )
        html = html[:MAX_INPUT_CHARS]
    if html.count("<") > _SCAN_ABOVE_TAGS:
        flat = flatten(html, MAX_NESTING)
        if flat.dropped_tags:
            html = flat.html
            notes.append(
                f"markup nested too deep or left open too often was flattened "
                f"({flat.dropped_tags:,} tags removed, their text kept)"
            )
    return html, "; ".join(notes) or None


def remove_nodes(nodes: Iterable[LexborNode]) -> None:
    """Remove ``nodes`` (given in document order), deepest-last-first; see module docstring."""
    for node in reversed(list(nodes)):
        node.decompose()


def remove_junk(tree: LexborHTMLParser) -> None:
    tree.strip_tags(JUNK_TAGS)


def is_boilerplate(names: str) -> bool:
    """Whether a class/id string that matched the furniture selector is not excused."""
    lowered = names.lower()
    return _ALWAYS_FURNITURE.search(lowered) is not None or _CONTENT.search(lowered) is None


def _text_length(node: LexborNode) -> int:
    return len(node.text(deep=True))


def remove_chrome(tree: LexborHTMLParser, *, keep_share: float = 0.4) -> None:
    """Remove menus, headers, footers, hidden nodes and furniture-named nodes.

    A node that holds more than ``keep_share`` of the page's text is never removed this way:
    on some sites the wrapper of the whole page is called ``has-sidebar`` or sits in a
    ``<header>``, and removing it would remove the article.
    """
    body = tree.body
    if body is None:
        return
    limit = max(1, _text_length(body)) * keep_share
    doomed: list[LexborNode] = []
    seen: set[int] = set()
    for node in body.css(_SELECTOR):  # document order, possibly with repeats
        key = node.mem_id
        if key in seen:
            continue
        seen.add(key)
        if node.tag in _NEVER_REMOVED:
            continue
        if node.tag not in _CHROME_TAG_NAMES:
            attrs = node.attributes
            names = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
            if _FURNITURE.search(names) and not is_boilerplate(names):
                continue
        if _text_length(node) > limit:
            continue
        doomed.append(node)
    remove_nodes(doomed)
