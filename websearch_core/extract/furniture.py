"""Which class and id names say "page furniture" (menus, share bars, comments ...).

The parser matches fragments as substrings to find candidates in one C-side pass; a
candidate is furniture only if its names hold a furniture word, read from its class and id
the way people write them (``share-bar``, ``ShareBar``, ``share_bar``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

from selectolax.lexbor import LexborNode

__all__ = [
    "ALWAYS_FURNITURE",
    "CACHED_NAMES",
    "CONTENT_WORDS",
    "ascii_lower",
    "furniture_of",
    "furniture_word",
    "is_always_furniture",
    "may_name_furniture",
    "name_words",
    "names",
    "remembered_furniture_of",
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
    "offscreen",
    "off-screen",
    "popular",
    "trending",
    "read-more",
    "readmore",
    "more-stories",
    "skip",
    "caption",
    "credit",
    "copyright",
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
_FURNITURE_PHRASES = frozenset(
    (
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
ALWAYS_FURNITURE = frozenset(
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
        "copyright",
        "mostpopular",
        "trending",
        "offscreen",
    )
)
#: Words that name furniture, compared with the words of a class or id (split at ``-``, ``_``
#: and case changes, lower-cased, a plural ``s`` dropped): the unexcusable ones above, and
#: these, which a content word excuses.
_FURNITURE_WORDS = ALWAYS_FURNITURE | frozenset(
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
_ALWAYS_PHRASES = frozenset(
    (
        ("sr", "only"),
        ("visually", "hidden"),
        ("screen", "reader"),
        ("off", "screen"),
        ("most", "popular"),
        ("more", "stories"),
    )
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
#: Class and id strings up to this long are remembered (``name_words``, ``furniture_word``,
#: ``remembered_furniture_of``).
CACHED_NAMES = 256
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


#: A name's parts recur across names ("entry" in "entry-title", "entry-content", "entry-meta"):
#: a page's first reading of a name mostly reads parts seen before. Only short ones are kept.
_cached_word = lru_cache(maxsize=16384)(_word)


def name_words(names: str) -> tuple[tuple[str, ...], ...]:
    """The words of each class or id name in ``names``; see ``_readings``. Remembered for
    the short strings real pages repeat; a long one (a hostile page's megabyte of classes)
    is read each time, never kept."""
    return _cached_name_words(names) if len(names) <= CACHED_NAMES else _read_names(names)


@lru_cache(maxsize=16384)
def _cached_name_words(names: str) -> tuple[tuple[str, ...], ...]:
    return _read_names(names)


def _read_names(names: str) -> tuple[tuple[str, ...], ...]:
    return tuple(words for words, *_ in _readings(names))


#: One class or id name, read (``_read_name``), as a plain tuple: a tuple of strings, numbers
#: and None is one the garbage collector stops tracking, and the cache keeps thousands of
#: readings for good. As NamedTuples they all stayed tracked, for every full collection to
#: scan: 36,318 tracked objects after the 121 DEV pages, 28,877 as plain tuples (27,970 after
#: the imports alone). Its fields, in order:
#:
#: - ``words``: "postComments" → (post, comment); see ``_read_name``;
#: - ``parts``: how many parts it was written in (an id of four or more is a heading's anchor);
#: - ``voided``: it says nothing about furniture ("no-share", "category-news": ``_VOIDING_HEADS``);
#: - ``content``: it holds a content word (``CONTENT_WORDS``);
#: - ``always``: the first furniture word or phrase it holds that nothing excuses
#:   (``ALWAYS_FURNITURE``);
#: - ``furniture``: the first furniture word or phrase it holds (a content word may excuse it).
_Reading = tuple[tuple[str, ...], int, bool, bool, str | None, str | None]


def _readings(names: str) -> list[_Reading]:
    """Each class or id name in "classes\\0id", read: an id of four words or more is a
    heading's anchor ("sharing-with-a-single-developer"), not a name, and is left out, as are
    a utility class (``_UTILITY``) and names past ``_MAX_NAMES``. Each name is read once
    (``_read_name``): a site's names recur in ever new combinations ("entry-title h2",
    "entry-title post-title"), so a class string new to ``name_words`` is mostly names read
    before."""
    found = []
    classes, _, ids = names.partition("\0")
    id_names = ids.split()[:_MAX_NAMES]
    for name in classes.split()[:_MAX_NAMES] + id_names:
        reading = _cached_reading(name) if len(name) <= CACHED_NAMES else _read_name(name)
        if reading is not None and not (reading[1] >= 4 and name in id_names):  # parts
            found.append(reading)
    return found


def _read_name(name: str) -> _Reading | None:
    """The words of a class or id name: "postComments" → (post, comment), "x_y" → (x, y),
    singular, compounds of a furniture word cut down to it (``_word``), and a name of two or
    three parts read as one word too ("sideBars", "side-bar": sidebar); then what they say
    (``_Reading``). ``None`` for a utility class or a name of no letters or digits."""
    if _UTILITY.search(name):
        return None
    lowered = name.lower()
    if lowered != name:  # a case change starts a word: "postComments"
        lowered = _CASE_CHANGE.sub("-", name).lower()
    parts = _NAME_SPLIT.split(lowered)
    if "" in parts:  # a name that starts or ends with a separator ("-x", "x_")
        parts = [part for part in parts if part]
        if not parts:
            return None
    read = _cached_word if len(name) <= CACHED_NAMES else _word
    words = [read(part) for part in parts]
    if len(parts) in (2, 3):
        words.append(read("".join(parts)))
    voided = words[0] in _VOIDING_HEADS and len(words) > 1
    voided = voided and not (words[0] == "tag" and words[1] in _TAG_PARTS)
    always = furniture = None
    # Most names hold no word that decides: two set tests say so without a loop.
    if not _DECIDING_WORDS.isdisjoint(words):
        for word in words:
            if word in ("ads", "tags"):
                word = word[:-1]
            if word in ALWAYS_FURNITURE:
                always = always or word
            if word in _FURNITURE_WORDS:
                furniture = furniture or word
    # A word beats a phrase: a name's words are weighed before its runs of two.
    if len(words) > 1 and not _PHRASE_HEADS.isdisjoint(words):
        for pair in pairwise(words):
            if pair in _ALWAYS_PHRASES:
                always = always or "-".join(pair)
            if pair in _FURNITURE_PHRASES:
                furniture = furniture or "-".join(pair)
    content = not CONTENT_WORDS.isdisjoint(words)
    return (tuple(words), len(parts), voided, content, always, furniture)


#: The words that make a name furniture, as written ("ads" and "tags" are read as "ad" and
#: "tag"), and the first words of the phrases that do.
_DECIDING_WORDS = ALWAYS_FURNITURE | _FURNITURE_WORDS | {"ads", "tags"}
_PHRASE_HEADS = frozenset(first for first, _ in _ALWAYS_PHRASES | _FURNITURE_PHRASES)


#: A name read once for every string it comes in; only short ones are kept.
_cached_reading = lru_cache(maxsize=16384)(_read_name)


def names(node: LexborNode) -> str:
    """``node``'s classes and id as ``furniture_word`` reads them: "classes\\0id"."""
    attrs = node.attributes
    return f"{attrs.get('class') or ''}\0{attrs.get('id') or ''}"


def furniture_word(names: str) -> str | None:
    """The furniture word in "classes\\0id" that its content words do not excuse, if any;
    see ``_find_furniture_word``, remembered like ``name_words``."""
    if len(names) <= CACHED_NAMES:
        return _cached_furniture_word(names)
    return _find_furniture_word(names)


@lru_cache(maxsize=16384)
def _cached_furniture_word(names: str) -> str | None:
    return _find_furniture_word(names)


def _find_furniture_word(names: str) -> str | None:
    """The furniture word in "classes\\0id" that its content words do not excuse, if any.

    Decided by whole words, never by substrings; see the word lists above. A content word
    among the names ("article-footer", "entry-content has-sidebar") excuses every furniture
    word but those in ``ALWAYS_FURNITURE`` ("article-comments" is still the comments); the
    first name to hold one of those decides.
    """
    found: str | None = None
    content = False
    for _, _, voided, holds_content, always, furniture in _readings(names):
        if voided:
            continue
        if always is not None:
            return always
        content = content or holds_content
        found = found or furniture
    return None if content else found


def prefix_tree(words: Iterable[str]) -> str:
    """A regular expression matching exactly ``words``, factored by their common prefixes
    ("cookie|comment" → "co(?:mment|okie)"). The regex engine tries an alternation's branches
    one by one at every position; factored, a position that starts no word costs one test of
    each distinct first letter instead of one test per word."""
    branches: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        branches.setdefault(word[:1], []).append(word[1:])
    parts = []
    for first, tails in branches.items():
        if not first:
            continue  # the empty word: the optional group below
        rest = [tail for tail in tails if tail]
        tree = prefix_tree(rest) if rest else ""
        if rest and "" in tails:
            tree = f"(?:{tree})?"
        parts.append(re.escape(first) + tree)
    return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"


def _candidate_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Class or id values that may name furniture (a superset; ``furniture_word`` decides):
    a value matches if either pattern finds something in it.

    Regular expressions over each attribute value lowered in ASCII only, as CSS's ``i`` flag
    compares (the Kelvin sign is not a k); lowering first is several times faster than the
    regex's own IGNORECASE over these alternatives. They read what a 196-part selector
    (``[class*=comment i]``, ``[class~=ad i]``, ...) read, at a fraction of the cost: that
    selector was half of a page's conversion time. Two searches over prefix trees
    (``prefix_tree``), not one over plain alternatives: 2.3 times faster over the class and
    id values of the 121 benchmark pages, where each new value cost ~5 µs (a fifth of the
    pipeline's instructions on pages not seen before). tests/test_extract.py checks that the
    patterns and the selector agree on generated values.
    """
    words = prefix_tree(_FURNITURE_PREFIXES)
    space = "[ \t\n\f\r]"  # CSS whitespace, which ``~=`` splits on
    return re.compile(prefix_tree(_FURNITURE_FRAGMENTS)), re.compile(  # [class*=comment i]
        f"{words}[-_]"  # the word before a joint anywhere: [class*="ad-" i]
        f"|[-_]{words}\\Z"  # or after one at the end: [class$="-ad" i]
        f"|(?:\\A|{space}){words}(?:{space}|\\Z)"  # the whole name: [class~=ad i]
    )


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def ascii_lower(value: str) -> str:
    """``value`` lowered as CSS's ``i`` compares it: ASCII letters only (the Kelvin sign is
    not a "k"). For an ASCII value (almost all) that is ``str.lower()``, at a tenth of the
    cost of the table."""
    return value.lower() if value.isascii() else value.translate(_ASCII_LOWER)


def may_name_furniture(node: LexborNode) -> bool:
    """Whether ``node``'s class or id may name furniture (``_candidate_patterns``)."""
    attrs = node.attributes
    return any(_candidate(attrs.get(attribute) or "") for attribute in ("class", "id"))


def furniture_of(classes: str, ident: str) -> str | None:
    """The furniture word that an element's ``class`` and ``id`` ("" if absent) name, if
    any: ``furniture_word`` of its names when ``may_name_furniture``."""
    if not (_candidate(classes) or _candidate(ident)):
        return None
    return furniture_word(f"{classes}\0{ident}")


#: ``furniture_of`` remembered, for names up to ``CACHED_NAMES`` characters together: a site
#: repeats its names on every node, and a hit costs no Python call (the chrome check asks for
#: each of a page's ~750 named nodes); a hostile page's megabyte of classes is never kept.
remembered_furniture_of = lru_cache(maxsize=16384)(furniture_of)


def _candidate(value: str) -> bool:
    if len(value) <= CACHED_NAMES:
        return _cached_candidate(value)
    return _may_name(value)


def _may_name(value: str) -> bool:
    if not value:
        return False
    lowered = ascii_lower(value)
    return _FRAGMENT.search(lowered) is not None or _NAME_WORD.search(lowered) is not None


#: A site repeats its class names on every node and page; only short ones are kept.
_cached_candidate = lru_cache(maxsize=16384)(_may_name)


_FRAGMENT, _NAME_WORD = _candidate_patterns()


def is_always_furniture(names: str) -> bool:
    """Whether ``names`` name furniture that nothing excuses (a comment, a share bar …)."""
    return furniture_word(names) in ALWAYS_FURNITURE
