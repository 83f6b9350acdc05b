"""Bounding the input, and taking out what is never the article: code, chrome, boilerplate.

Nodes are only ever removed in reverse document order, after every decision about them has
been made: a descendant is removed before its ancestor, so no node object that is still
going to be used points into a subtree that has already been freed.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = [
    "CONTENT_WORDS",
    "carries_lead",
    "furniture_word",
    "is_always_furniture",
    "name_words",
    "names",
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

# Class and id fragments that may name page furniture. The parser matches them as substrings
# (one C-side selector pass, no Python loop over every element) to find the candidates; a
# candidate is furniture only if its names hold a furniture WORD (``furniture_words``):
# "evolve-shared-history" holds "share" as a substring and is a chapter, "taxomenu" holds
# "menu" and is a content pane.
_FURNITURE_FRAGMENTS = (
    "comment",
    "disqus",
    "share",
    "sharing",
    "social",
    "related",
    "recommend",
    "newsletter",
    "subscri",
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
    "addthis",
    "addtoany",
    "byline",
    "dateline",
    "timestamp",
    "author",
    "sr-only",
    "visually-hidden",
    "screen-reader",
    "popular",
    "trending",
    "read-more",
    "readmore",
    "more-stories",
    "skip",
    "caption",
    "credit",
    "widget",
    "banner",
    "print-only",
    "login",
    "tooltip",
    "dropdown",
)
_FURNITURE_PREFIXES = ("ad", "ads", "nav", "tags", "tag", "meta", "rail", "hidden", "aside")

#: Runs of words that name furniture together ("read more" is a link; "read" or "more" alone
#: is not).
_FURNITURE_PHRASES = (
    ("sign", "up"),
    ("author", "bio"),
    ("author", "info"),
    ("about", "author"),
    ("sr", "only"),
    ("visually", "hidden"),
    ("screen", "reader"),
    ("most", "popular"),
    ("read", "more"),
    ("more", "stories"),
    ("skip", "link"),
    ("print", "only"),
)
#: A name that starts with one of these words is not about furniture: "no-share" says the
#: block has no share bar, "has-sidebar" that the page has one, and "category-…", "tag-…" are
#: WordPress taxonomy classes ("category-no-newsletter-rss" is an article filed under a
#: category of that name) — but "tag-cloud" and "tags-links" (``_TAG_PARTS``) are the tags.
_TAG_PARTS = frozenset(("cloud", "link", "list", "box", "area", "wrap", "wrapper", "container"))
_VOIDING_HEADS = frozenset(
    ("no", "has", "with", "without", "category", "tag", "term", "format", "type", "status")
)
#: Words that name the content itself: a node whose names hold one of these and a furniture
#: word ("article-footer" no, "article-body-with-sidebar" yes) is judged by its text.
CONTENT_WORDS = frozenset(
    (
        "article",
        "body",
        "content",
        "entry",
        "main",
        "post",
        "story",
        "text",
        "blog",
        "prose",
        "markdown",
        "hentry",
        "articlebody",
    )
)
#: Furniture no content word can excuse: a share bar is a share bar whatever it is inside.
_ALWAYS_FURNITURE = frozenset(
    (
        "comment",
        "disqus",
        "share",
        "sharing",
        "sharebar",
        "social",
        "related",
        "recommend",
        "recommended",
        "recommendation",
        "newsletter",
        "subscribe",
        "subscription",
        "cookie",
        "consent",
        "promo",
        "advert",
        "advertisement",
        "sponsor",
        "sponsored",
        "outbrain",
        "taboola",
        "shareaholic",
        "addthis",
        "addtoany",
        "byline",
        "caption",
        "credit",
        "mostpopular",
        "trending",
    )
)
#: Words that name furniture, compared with the words of a class or id (split at ``-``, ``_``
#: and case changes, lower-cased, a plural ``s`` dropped): the unexcusable ones above, and
#: these, which a content word excuses.
_FURNITURE_WORDS = _ALWAYS_FURNITURE | frozenset(
    (
        "ad",
        "advertising",
        "aside",
        "banner",
        "breadcrumb",
        "dateline",
        "dropdown",
        "footer",
        "gdpr",
        "hidden",
        "login",
        "masthead",
        "menu",
        "meta",
        "modal",
        "nav",
        "navbar",
        "navigation",
        "pagination",
        "popup",
        "rail",
        "readmore",
        "sidebar",
        "signup",
        "tag",
        "timestamp",
        "toolbar",
        "tooltip",
        "widget",
    )
)
_ALWAYS_PHRASES = (
    ("sr", "only"),
    ("visually", "hidden"),
    ("screen", "reader"),
    ("most", "popular"),
    ("more", "stories"),
)
#: Furniture words run together with a word that only says what part of the furniture it is
#: ("relatedposts", "commentlist", "sharebuttons") or where it sits ("topnav", "mainmenu").
_COMPOUND_TAILS = frozenset(
    (
        "post",
        "article",
        "story",
        "stories",
        "content",
        "consent",
        "banner",
        "share",
        "this",
        "bot",
        "cloud",
        "list",
        "box",
        "bar",
        "button",
        "link",
        "area",
        "wrap",
        "wrapper",
        "container",
        "section",
        "icon",
        "item",
        "block",
        "widget",
        "form",
        "count",
        "panel",
        "module",
    )
)
_COMPOUND_HEADS = frozenset(
    ("top", "main", "sub", "site", "left", "right", "mobile", "primary", "secondary", "global")
)
#: Atomic or utility CSS ("Mend(380px)--modalMinWidth", "md:hidden", "w-[50%]") describes
#: layout, not what a block is: such a class is not read as a name.
_UTILITY = re.compile(r"[():!\[\]%]")
#: Only this many classes of an element are read (real ones have a handful; a hostile page's
#: hundred thousand would only cost time).
_MAX_NAMES = 32
#: Class and id strings up to this long are remembered (``name_words``, ``furniture_word``).
_CACHED_NAMES = 256
_NAME_SPLIT = re.compile(r"[^a-z0-9]+")
_CASE_CHANGE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _singular(word: str) -> str:
    if word in _FURNITURE_WORDS or len(word) <= 3 or not word.endswith("s") or word[-2] == "s":
        return word  # "disqus" stays "disqus"
    return word[:-1]


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_COMPOUND = re.compile(
    f"(?:(?P<head>{_alternatives(_FURNITURE_WORDS)})(?:{_alternatives(_COMPOUND_TAILS)})s?"
    f"|(?:{_alternatives(_COMPOUND_HEADS)})(?P<tail>{_alternatives(_FURNITURE_WORDS)})s?)"
)


def _word(word: str) -> str:
    """``word`` singular, or the furniture word it compounds ("relatedposts" → "related")."""
    single = _singular(word)
    if single in _FURNITURE_WORDS or len(word) < 6:
        return single
    compound = _COMPOUND.fullmatch(word)  # as written: "sharethis" is not a plural
    if compound is None:
        return single
    return compound.group("head") or compound.group("tail")


def name_words(names: str) -> tuple[tuple[str, ...], ...]:
    """The words of each class or id name in ``names``; see ``_read_names``. Remembered for
    the short strings real pages repeat; a long one (a hostile page's megabyte of classes)
    is read each time, never kept."""
    return _cached_name_words(names) if len(names) <= _CACHED_NAMES else _read_names(names)


@lru_cache(maxsize=16384)
def _cached_name_words(names: str) -> tuple[tuple[str, ...], ...]:
    return _read_names(names)


def _read_names(names: str) -> tuple[tuple[str, ...], ...]:
    """The words of each class or id name in ``names``: "postComments x_y" → [[post, comment],
    [x, y]], singular, compounds of a furniture word cut down to it (``_word``), and a name of
    two or three parts read as one word too ("sideBars", "side-bar": sidebar). An id of four
    words or more is a heading's anchor ("sharing-with-a-single-developer"), not a name, and
    is left out, as is a utility class (``_UTILITY``), and names past ``_MAX_NAMES``."""
    found = []
    classes, _, ids = names.partition("\0")
    id_names = ids.split()[:_MAX_NAMES]
    for name in classes.split()[:_MAX_NAMES] + id_names:
        if _UTILITY.search(name):
            continue
        lowered = name.lower()
        if lowered != name:  # a case change starts a word: "postComments"
            lowered = _CASE_CHANGE.sub("-", name).lower()
        parts = [part for part in _NAME_SPLIT.split(lowered) if part]
        if not parts or (name in id_names and len(parts) >= 4):
            continue
        words = [_word(part) for part in parts]
        if len(parts) in (2, 3):
            words.append(_word("".join(parts)))
        found.append(tuple(words))
    return tuple(found)


def names(node: LexborNode) -> str:
    """``node``'s classes and id as ``furniture_word`` reads them: "classes\\0id"."""
    attrs = node.attributes
    return f"{attrs.get('class') or ''}\0{attrs.get('id') or ''}"


def furniture_word(names: str) -> str | None:
    """The furniture word in "classes\\0id" that its content words do not excuse, if any;
    see ``_find_furniture_word``, remembered like ``name_words``."""
    if len(names) <= _CACHED_NAMES:
        return _cached_furniture_word(names)
    return _find_furniture_word(names)


@lru_cache(maxsize=16384)
def _cached_furniture_word(names: str) -> str | None:
    return _find_furniture_word(names)


def _find_furniture_word(names: str) -> str | None:
    """The furniture word in "classes\\0id" that its content words do not excuse, if any.

    Decided by whole words, never by substrings; see the word lists above. A content word
    among the names ("article-footer", "entry-content has-sidebar") excuses every furniture
    word but those in ``_ALWAYS_FURNITURE`` ("article-comments" is still the comments).
    """
    found: str | None = None
    content = False
    for words in name_words(names):
        voided = words[0] in _VOIDING_HEADS and len(words) > 1
        if voided and not (words[0] == "tag" and words[1] in _TAG_PARTS):
            continue
        content = content or any(word in CONTENT_WORDS for word in words)
        for word in words:
            if word in ("ads", "tags"):
                word = word[:-1]
            if word in _ALWAYS_FURNITURE:
                return word
            if word in _FURNITURE_WORDS and found is None:
                found = word
        for pair in pairwise(words):
            if pair in _ALWAYS_PHRASES:
                return "-".join(pair)
            if pair in _FURNITURE_PHRASES and found is None:
                found = "-".join(pair)
    return None if content else found


def _candidate_pattern() -> re.Pattern[str]:
    """Class or id values that may name furniture (a superset; ``furniture_word`` decides).

    A regular expression over each attribute value lowered in ASCII only, as CSS's ``i`` flag
    compares (the Kelvin sign is not a k); lowering first is several times faster than the
    regex's own IGNORECASE over these alternatives. It reads what a 196-part selector
    (``[class*=comment i]``, ``[class~=ad i]``, ...) read, at a fraction of the cost: that
    selector was half of a page's conversion time. tests/test_extract.py checks that the two
    agree on generated values.
    """
    fragments = "|".join(map(re.escape, _FURNITURE_FRAGMENTS))
    words = "|".join(map(re.escape, _FURNITURE_PREFIXES))
    space = "[ \t\n\f\r]"  # CSS whitespace, which ``~=`` splits on
    return re.compile(
        f"{fragments}"  # a fragment anywhere: [class*=comment i]
        f"|(?:{words})[-_]"  # the word before a joint anywhere: [class*="ad-" i]
        f"|[-_](?:{words})\\Z"  # or after one at the end: [class$="-ad" i]
        f"|(?:\\A|{space})(?:{words})(?:{space}|\\Z)"  # the whole name: [class~=ad i]
    )


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def may_name_furniture(node: LexborNode) -> bool:
    """Whether ``node``'s class or id may name furniture (``_candidate_pattern``)."""
    attrs = node.attributes
    return any(_candidate(attrs.get(attribute) or "") for attribute in ("class", "id"))


@lru_cache(maxsize=16384)  # a site repeats its class names on every node and page
def _candidate(value: str) -> bool:
    return bool(value) and _CANDIDATE.search(value.translate(_ASCII_LOWER)) is not None


_CHROME_TAGS = "nav, aside, footer, header, menu"
_HIDDEN = (
    '[hidden], [aria-hidden="true"], [style*="display:none" i], [style*="display: none" i], '
    '[style*="visibility:hidden" i], [style*="visibility: hidden" i]'
)
_ROLES = (
    '[role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"], '
    '[role="search"], [role="dialog"], [role="alert"], [role="menu"], [role="menubar"]'
)
#: Removed for what they are (tag, hidden, role), not for what they are called.
_STRUCTURAL = ", ".join((_CHROME_TAGS, _HIDDEN, _ROLES))
_CANDIDATE = _candidate_pattern()
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


def prose_by_node(body: LexborNode) -> dict[int, int]:
    """Characters of paragraph prose under each node that holds some (by ``mem_id``).

    Counted up to ``_PROSE_LEVELS`` ancestors of each paragraph, so the cost stays linear in
    the page's paragraphs whatever its nesting; ``body`` itself always gets the whole total.
    """
    prose: dict[int, int] = {}
    total = 0
    for paragraph in body.css("p"):
        chars = len(paragraph.text(deep=True).strip())
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
#: ... or, for a word in ``_ALWAYS_FURNITURE``, this share with less than ``_OUTSIDE_PROSE``
#: characters of prose anywhere else: a blog post's comment thread can hold more prose than
#: the post, but only a forum thread (every post "a comment") holds all of it.
_CONTENT_SHARE_ALWAYS = 0.75
_OUTSIDE_PROSE = 300


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
    structural = {node.mem_id for node in body.css(_STRUCTURAL)}
    doomed: list[tuple[LexborNode, str | None]] = []
    seen: set[int] = set()
    for node in body.css(f"{_STRUCTURAL}, [class], [id]"):  # document order, maybe repeated
        key = node.mem_id
        if key in seen or node.tag in _NEVER_REMOVED:
            continue
        seen.add(key)
        word = None
        if key in structural:
            if node.tag == "header" and carries_lead(node):
                continue
        else:
            if not may_name_furniture(node):
                continue
            word = furniture_word(names(node))
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
    word in ``_ALWAYS_FURNITURE`` also needs the prose outside its nodes to be next to none:
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
        if word in _ALWAYS_FURNITURE:
            if chars > page_prose * _CONTENT_SHARE_ALWAYS and page_prose - chars < _OUTSIDE_PROSE:
                spared.add(word)
        elif chars > page_prose * _CONTENT_SHARE:
            spared.add(word)
    return spared


def is_always_furniture(names: str) -> bool:
    """Whether ``names`` name furniture that nothing excuses (a comment, a share bar …)."""
    return furniture_word(names) in _ALWAYS_FURNITURE
