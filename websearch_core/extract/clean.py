"""Taking out what is never the article: code, chrome, boilerplate (named as ``furniture``).

Nodes are only ever removed in reverse document order, after every decision about them has
been made: a descendant is removed before its ancestor, so no node object that is still
going to be used points into a subtree that has already been freed.
"""

from __future__ import annotations

from collections.abc import Iterable

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_core.extract.furniture import (
    ALWAYS_FURNITURE,
    CACHED_NAMES,
    ascii_lower,
    furniture_of,
    remembered_furniture_of,
)

__all__ = [
    "carries_lead",
    "is_structural",
    "noscript_holds_the_prose",
    "prose_by_node",
    "remove_chrome",
    "remove_junk",
    "remove_nodes",
]

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

#: Removed for what they are (tag, hidden, role), not for what they are called: ``_STRUCTURAL``
#: says it as a selector, ``is_structural`` decides it in Python from an element's tag and
#: attribute dict, on the nodes one cheap selector pass finds (``_CANDIDATES``).
#: tests/test_extract_fast_paths.py holds the two to the same answers.
_CHROME_TAG_NAMES = frozenset(("nav", "aside", "footer", "header", "menu"))
_HIDDEN_STYLES = ("display:none", "display: none", "visibility:hidden", "visibility: hidden")
_STRUCTURAL_ROLES = frozenset(
    (
        "navigation",
        "banner",
        "contentinfo",
        "complementary",
        "search",
        "dialog",
        "alert",
        "menu",
        "menubar",
    )
)
_STRUCTURAL = ", ".join(
    [
        *sorted(_CHROME_TAG_NAMES),
        "[hidden]",
        '[aria-hidden="true"]',
        *(f'[style*="{style}" i]' for style in _HIDDEN_STYLES),
        *(f'[role="{role}"]' for role in sorted(_STRUCTURAL_ROLES)),
    ]
)
#: The attributes ``is_structural`` reads besides the tag: a node with none of them, and not a
#: chrome tag, is judged by its names alone.
_STRUCTURAL_ATTRIBUTES = frozenset(("hidden", "aria-hidden", "role", "style"))
#: Every node ``remove_chrome`` weighs, found by tag or by an attribute's presence only: the
#: values are read in Python (``is_structural``, ``furniture_of``). Comparing values in the
#: selector (``_STRUCTURAL``'s ``[style*=... i]`` and roles) cost the parser as much again as
#: all the Python that decides.
_CANDIDATES = ", ".join(
    [
        *sorted(_CHROME_TAG_NAMES),
        *(f"[{name}]" for name in sorted(_STRUCTURAL_ATTRIBUTES)),
        "[class]",
        "[id]",
    ]
)
_NEVER_REMOVED = frozenset(("html", "body", "main"))
#: A paragraph this long is prose, for ``prose_by_node``.
PROSE_CHARS = 40
#: ... and counted for this many of its ancestors (real pages nest ~30 deep).
_PROSE_LEVELS = 48
#: ... and this long, a lead paragraph (``carries_lead``).
LEAD_CHARS = 150


def remove_nodes(nodes: Iterable[LexborNode]) -> None:
    """Remove ``nodes`` (given in document order), deepest-last-first; see module docstring."""
    for node in reversed(list(nodes)):
        node.decompose()


def remove_junk(tree: LexborHTMLParser, *, keep_noscript: bool = False) -> None:
    """Take out what is never text (``JUNK_TAGS``); ``keep_noscript`` unwraps ``<noscript>``
    instead, keeping what it holds."""
    if keep_noscript:
        tree.unwrap_tags(["noscript"])
    tree.strip_tags(JUNK_TAGS)


#: A page whose prose outside ``<noscript>`` is under this is read from its ``<noscript>``,
#: when that holds more: an app shell's "please enable JavaScript" is not the page.
_NOSCRIPT_ABOVE = 500


def noscript_holds_the_prose(tree: LexborHTMLParser) -> bool:
    """Whether the page's prose is in ``<noscript>`` and next to none is anywhere else."""
    body = tree.body
    if body is None or body.css_first("noscript p") is None:  # a tracking pixel's, mostly
        return False
    prose = prose_by_node(body)
    inside = sum(prose.get(node.mem_id, 0) for node in body.css("noscript"))
    outside = prose.get(body.mem_id, 0) - inside
    return inside > outside and outside < _NOSCRIPT_ABOVE


def _text_length(node: LexborNode) -> int:
    return len(node.text(deep=True))


def prose_by_node(
    body: LexborNode, paragraphs: Iterable[tuple[LexborNode, int]] | None = None
) -> dict[int, int]:
    """Characters of paragraph prose under each node that holds some (by ``mem_id``).

    Counted up to ``_PROSE_LEVELS`` ancestors of each paragraph, so the cost stays linear in
    the page's paragraphs whatever its nesting; ``body`` itself always gets the whole total.
    ``paragraphs``: the body's ``<p>``s with their stripped text's length, if the caller has
    measured them already (the selection has: a second walk was 3% of a page's conversion).
    """
    if paragraphs is None:
        paragraphs = ((p, len(p.text(deep=True).strip())) for p in body.css("p"))
    prose: dict[int, int] = {}
    total = 0
    for paragraph, chars in paragraphs:
        if chars < PROSE_CHARS:
            continue
        total += chars
        node: LexborNode | None = paragraph
        for _ in range(_PROSE_LEVELS):
            if node is None:
                break
            key = node.mem_id
            prose[key] = prose.get(key, 0) + chars
            node = node.parent
    prose[body.mem_id] = total
    return prose


def carries_lead(header: LexborNode) -> bool:
    """Whether a ``<header>`` is an article's own (a child of ``<article>`` or ``<main>``)
    holding its lead paragraph: one of ``LEAD_CHARS`` or more. A headline's one-line
    subtitle or a dateline is not one."""
    parent = header.parent
    if parent is None or parent.tag not in ("article", "main"):
        return False
    return any(len(p.text(deep=True).strip()) >= LEAD_CHARS for p in header.css("p"))


#: A furniture word names the content instead when its nodes together hold more than this
#: share of the page's paragraph prose ...
_CONTENT_SHARE = 0.5
#: ... or, for a word in ``ALWAYS_FURNITURE``, this share with less than ``_OUTSIDE_PROSE``
#: characters of prose anywhere else: a blog post's comment thread can hold more prose than
#: the post, but only a forum thread (every post "a comment") holds all of it.
_CONTENT_SHARE_ALWAYS = 0.75
_OUTSIDE_PROSE = 300


def is_structural(tag: str | None, attrs: dict[str, str | None]) -> bool:
    """Whether an element matches ``_STRUCTURAL``: a chrome tag, hidden (the attribute,
    ``aria-hidden="true"`` or an inline style, whose words CSS's ``i`` compares in ASCII
    only), or a chrome role; attribute values compared as the selector compares them."""
    if tag in _CHROME_TAG_NAMES or "hidden" in attrs:
        return True
    if attrs.get("aria-hidden") == "true" or attrs.get("role") in _STRUCTURAL_ROLES:
        return True
    style = attrs.get("style")
    if not style:
        return False
    lowered = ascii_lower(style)
    return any(hidden in lowered for hidden in _HIDDEN_STYLES)


def remove_chrome(tree: LexborHTMLParser, *, keep_share: float = 0.4) -> set[str]:
    """Remove menus, headers, footers, hidden nodes and nodes named as furniture; return the
    furniture words that name the content on this page instead (see below).

    No rule removes what holds the page's prose. A node with more than ``keep_share`` of the
    page's text stays (the wrapper of a whole page called ``has-sidebar`` or set in a
    ``<header>``). A furniture word whose nodes together hold most of the page's paragraph
    prose (``_CONTENT_SHARE``) names the content on this page, not furniture, and removes
    nothing: the article body in a ``read-more`` panel, a page builder's ``…-widget-…``
    wrappers around every paragraph, a forum's posts each in a ``…Comment…``. An article's
    own ``<header>`` that carries its lead paragraph stays too.
    """
    body = tree.body
    if body is None:
        return set()
    limit = max(1, _text_length(body)) * keep_share
    prose = prose_by_node(body)
    doomed: list[tuple[LexborNode, str | None]] = []
    seen: set[int] = set()
    for node in body.css(_CANDIDATES):  # document order, maybe repeated
        key, tag = node.mem_id, node.tag
        if key in seen or tag in _NEVER_REMOVED:
            continue
        seen.add(key)
        word = None
        attrs = node.attributes  # a new dict each time: read once
        if tag in _CHROME_TAG_NAMES or (
            not _STRUCTURAL_ATTRIBUTES.isdisjoint(attrs) and is_structural(tag, attrs)
        ):
            if tag == "header" and carries_lead(node):
                continue
        else:
            classes, ident = attrs.get("class") or "", attrs.get("id") or ""
            if len(classes) + len(ident) <= CACHED_NAMES:
                word = remembered_furniture_of(classes, ident)
            else:
                word = furniture_of(classes, ident)
            if word is None:
                continue
        if _text_length(node) > limit:
            continue
        doomed.append((node, word))
    spared = _content_words(doomed, prose, prose.get(body.mem_id, 0))
    remove_nodes(node for node, word in doomed if word not in spared)
    return spared


def _content_words(
    doomed: list[tuple[LexborNode, str | None]], prose: dict[int, int], page_prose: int
) -> set[str]:
    """The furniture words whose nodes together hold most of the page's prose.

    A node counts unless a node above it (within ``_PROSE_LEVELS``) has the same word: a
    forum's "comment" posts inside a "hidden-print" wrapper are credited to "comment". A
    word in ``ALWAYS_FURNITURE`` also needs the prose outside its nodes to be next to none:
    a forum thread is all posts, a blog post with a long comment thread still has its post.
    """
    if not page_prose:
        return set()
    # Most pages' furniture holds little prose: if no word could pass even counting nested
    # nodes twice, there is nothing to weigh.
    bound: dict[str, int] = {}
    for node, word in doomed:
        if word is not None:
            bound[word] = bound.get(word, 0) + prose.get(node.mem_id, 0)
    if not any(chars > page_prose * _CONTENT_SHARE for chars in bound.values()):
        return set()
    words = {node.mem_id: word for node, word in doomed if word is not None}
    held: dict[str, int] = {}
    for node, word in doomed:
        if word is None:
            continue
        parent, nested = node.parent, False
        for _ in range(_PROSE_LEVELS):
            if parent is None or nested:
                break
            nested = words.get(parent.mem_id) == word
            parent = parent.parent
        if not nested:
            held[word] = held.get(word, 0) + prose.get(node.mem_id, 0)
    spared = set()
    for word, chars in held.items():
        if word in ALWAYS_FURNITURE:
            if chars > page_prose * _CONTENT_SHARE_ALWAYS and page_prose - chars < _OUTSIDE_PROSE:
                spared.add(word)
        elif chars > page_prose * _CONTENT_SHARE:
            spared.add(word)
    return spared
