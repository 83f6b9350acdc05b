"""The converter's fast paths give what the slow code they replaced gave, on generated input.

Each fast path (issue 30: a quarter less work per page) is held to its oracle, the code it
replaced, kept here: the output on the 121 benchmark pages was byte-identical, and these
properties stand for the pages nobody has seen.
"""

from __future__ import annotations

import html
import re
from itertools import pairwise

from hypothesis import example, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from websearch_core.extract import bounds, clean, extraction, furniture, markdown
from websearch_core.fetch import content

# -- text nodes: invisible marks and whitespace -------------------------------------------

_OLD_WS = re.compile(r"\s+")


def _old_squash(raw: str) -> str:
    return _OLD_WS.sub(" ", raw.translate(markdown._INVISIBLE))


#: Whitespace of every kind str.isspace knows (ASCII, the information separators \x1c-\x1f,
#: NEL, no-break, ideographic, line and paragraph separators), the invisible marks, joiners
#: that must stay, and letters from several scripts.
_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *(" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028"),
            *("\u3000", "\u00ad", "\u200b", "\u2060", "\ufeff", "\u200c", "\u200d", "\u200a"),
            *("a", "Z", "é", "ß", "д", "中", "ש", "ल", "😀", ".", "-"),
        ]
    ),
    max_size=40,
)


@given(_TEXT)
@settings(max_examples=2000, deadline=None)
@example("\u200b")  # only a mark: nothing, as before, not a space
@example(" \u200b ")
@example("\xa0x\u3000")
def test_a_text_node_squashes_as_the_pattern_did(raw: str) -> None:
    assert markdown.squash(raw) == _old_squash(raw)


_OLD_SPACES = re.compile(r"[ \t]+")


def _old_tidy(run: str) -> str:
    if "\n" not in run:
        return _OLD_SPACES.sub(" ", run).strip()
    lines = (_OLD_SPACES.sub(" ", line).strip() for line in run.split("\n"))
    return "\n".join(line for line in lines if line)


@given(st.lists(st.one_of(_TEXT.map(markdown.squash), _TEXT), max_size=6).map("".join))
@settings(max_examples=1000, deadline=None)
@example("a  b")
@example("a\tb ")
@example(" a b ")
def test_a_block_is_tidied_as_the_pattern_did(run: str) -> None:
    assert markdown._tidy_inline(run) == _old_tidy(run)


# -- attribute floods ----------------------------------------------------------------------

#: The patterns differ only in how each attribute is matched, so they are compared at a
#: small count: tags of a handful of attributes try every way the counted run can end.
_FEW = 3


def _old_flood(attributes: int) -> re.Pattern[str]:
    return re.compile(rf"<([a-zA-Z][^\s/>]*)(?:{bounds._ATTRIBUTE}){{{attributes + 1}}}")


_NAME = st.sampled_from(["a", "class", "data-x", "x:y", "é", "on", "=", '"'])
_VALUE = st.sampled_from(
    [
        *("", "=1", '="v"', "='v'", '=">"', "='<'", '="a b"', "= x", '="', "='", "=", "=a>b"),
        *("/", "= ", " = 'x'", " =", '="a"b', "=\n"),
    ]
)
_GAP = st.sampled_from([" ", "  ", "\n", "\t", "", " /", "/"])


@st.composite
def _tags(draw: st.DrawFn) -> str:
    """Start tags of 0 to 7 attributes, odd quoting and spacing included, among text."""
    pieces = []
    for _ in range(draw(st.integers(1, 3))):
        attributes = draw(st.lists(st.tuples(_GAP, _NAME, _VALUE).map("".join), max_size=7))
        end = draw(st.sampled_from([">", "/>", "", "<p>", " >"]))
        pieces.append(f"text <div{''.join(attributes)}{end}more")
    return "".join(pieces)


@given(_tags())
@settings(max_examples=3000, deadline=None)
@example('<div b= a="v" c d>')  # the whitespace after "=" is the next attribute's
@example("<div a='x'b c d e>")
def test_attribute_floods_are_found_as_the_backtracking_pattern_found_them(page: str) -> None:
    old = [match.span() for match in _old_flood(_FEW).finditer(page)]
    new = [match.span() for match in bounds.flood_pattern(_FEW).finditer(page)]
    assert new == old


def test_the_flood_pattern_in_use_is_the_fast_one_at_the_real_count() -> None:
    assert bounds._ATTRIBUTE_FLOOD.pattern == bounds.flood_pattern(bounds.MAX_ATTRIBUTES).pattern
    flood = "<div" + " a=1" * (bounds.MAX_ATTRIBUTES + 1) + ">"
    assert bounds._ATTRIBUTE_FLOOD.search(flood) is not None
    assert bounds._ATTRIBUTE_FLOOD.search(flood.replace(" a=1", "", 1)) is None


# -- the structural check, in Python instead of a second selector pass ----------------------

_ATTRIBUTE = st.sampled_from(
    [
        ("hidden", ""),
        ("HIDDEN", "no"),
        ("aria-hidden", "true"),
        ("aria-hidden", "TRUE"),
        ("aria-hidden", " true"),
        ("role", "navigation"),
        ("role", "Navigation"),
        ("role", "navigation main"),
        ("role", "menubar"),
        ("role", "main"),
        ("role", "search"),
        ("style", "display:none"),
        ("style", "DISPLAY: NONE"),
        ("style", "color:red;visibility:Hidden"),
        ("style", "display:\u212aone"),  # the Kelvin sign: CSS's i is ASCII only
        ("style", "d\u0130splay:none"),
        ("style", "display : none"),
        ("style", ""),
        ("class", "x"),
        ("id", "y"),
        ("title", "display:none"),
    ]
)
_TAG = st.sampled_from(["div", "nav", "aside", "footer", "header", "menu", "section", "p"])


@given(_TAG, st.lists(_ATTRIBUTE, max_size=3))
@settings(max_examples=600, deadline=None)
def test_structural_chrome_is_read_as_the_selector_reads_it(
    tag: str, attributes: list[tuple[str, str]]
) -> None:
    rendered = "".join(f' {name}="{html.escape(value)}"' for name, value in attributes)
    tree = LexborHTMLParser(f"<html><body><{tag}{rendered}>x</{tag}></body></html>")
    body = tree.body
    assert body is not None
    node = body.child
    assert node is not None
    assert node.tag == tag
    by_selector = any(found.mem_id == node.mem_id for found in body.css(clean._STRUCTURAL))
    assert clean.is_structural(node.tag, node.attributes) == by_selector
    # ... and remove_chrome's one pass, which reads no values, finds every such node
    weighed = any(found.mem_id == node.mem_id for found in body.css(clean._CANDIDATES))
    assert weighed or not by_selector


# -- furniture names: one search over a prefix tree, not over plain alternatives ------------

_SHORT_WORDS = st.text(alphabet="abc-.", min_size=1, max_size=5)


@given(st.lists(_SHORT_WORDS, min_size=1, max_size=12), st.text(alphabet="abc-.x ", max_size=12))
@settings(max_examples=1500, deadline=None)
@example(["ad", "ads", "aside"], "ads")  # a word that is another's prefix, and a shared head
@example(["a", "ab", "abc"], "xab")
def test_a_prefix_tree_finds_what_the_plain_alternatives_find(words: list[str], text: str) -> None:
    from websearch_core.extract.furniture import prefix_tree

    tree = re.compile(prefix_tree(words))
    plain = re.compile("|".join(map(re.escape, words)))
    assert bool(tree.fullmatch(text)) == (text in words)
    assert (tree.search(text) is None) == (plain.search(text) is None)
    # Followed by more pattern, the tree gives back as the alternatives do: "ad" then "s-".
    assert (re.search(f"{tree.pattern}-", text) is None) == (
        re.search(f"(?:{plain.pattern})-", text) is None
    )


def test_long_class_names_are_read_each_time_never_kept() -> None:
    """The furniture checks remember short names (a site repeats them on every node), never
    a hostile page's long ones: 16,384 kept values of a megabyte each would be 16 GB."""
    from websearch_core.extract import extract, furniture

    caches = (
        furniture._cached_candidate,
        furniture.remembered_furniture_of,
        furniture._cached_furniture_word,
        furniture._cached_name_words,
        furniture._cached_reading,
        furniture._cached_word,
    )
    names = [f"n{i}-" + "comment-box " * 400 for i in range(12)]  # distinct, ~5 kB, furniture
    names += [f"L{i}" + "-comment-box" * 400 for i in range(12)]  # one long name each
    prose = "<p>" + "A sentence of the article that holds the page together. " * 8 + "</p>"
    page = (
        "<html><body>"
        + "".join(f'<div class="{name}" id="{name}"><p>menu</p></div>' for name in names)
        + f"<article>{prose * 4}</article></body></html>"
    )
    extract(page)  # every short value the page holds ("", tag-less nodes) is kept now ...
    misses = [cache.cache_info().misses for cache in caches]
    different = page.replace('="n', '="m').replace('="L', '="K')
    document = extract(different)  # ... so only the long values could be new: none is kept
    # but one name at a time, a long value's short names are: the 12 new "m{i}-comment-box",
    # and their new parts "m{i}" and "m{i}commentbox" (the 12 long single names and their
    # parts, new too, are read each time)
    misses[-2] += 12
    misses[-1] += 24
    assert [cache.cache_info().misses for cache in caches] == misses
    assert "menu" not in document.text  # and they were still read as the furniture they name
    assert "holds the page together" in document.text


# -- class and id names: read one name at a time -------------------------------------------


def _old_furniture_word(names: str) -> str | None:
    """The furniture word as it was decided before names were read one at a time: the whole
    "classes\\0id" string read, then its words weighed in one loop."""
    read = []
    classes, _, ids = names.partition("\0")
    id_names = ids.split()[: furniture._MAX_NAMES]
    for name in classes.split()[: furniture._MAX_NAMES] + id_names:
        if furniture._UTILITY.search(name):
            continue
        lowered = name.lower()
        if lowered != name:
            lowered = furniture._CASE_CHANGE.sub("-", name).lower()
        parts = [part for part in furniture._NAME_SPLIT.split(lowered) if part]
        if not parts or (name in id_names and len(parts) >= 4):
            continue
        words = [furniture._word(part) for part in parts]
        if len(parts) in (2, 3):
            words.append(furniture._word("".join(parts)))
        read.append(tuple(words))
    found: str | None = None
    content_word = False
    for words in read:
        voided = words[0] in furniture._VOIDING_HEADS and len(words) > 1
        if voided and not (words[0] == "tag" and words[1] in furniture._TAG_PARTS):
            continue
        content_word = content_word or any(word in furniture.CONTENT_WORDS for word in words)
        for word in words:
            if word in ("ads", "tags"):
                word = word[:-1]
            if word in furniture.ALWAYS_FURNITURE:
                return word
            if word in furniture._FURNITURE_WORDS and found is None:
                found = word
        for pair in pairwise(words):
            if pair in furniture._ALWAYS_PHRASES:
                return "-".join(pair)
            if pair in furniture._FURNITURE_PHRASES and found is None:
                found = "-".join(pair)
    return None if content_word else found


#: Name parts that decide: furniture words of both kinds, content words, voiding heads, the
#: parts of phrases and compounds, a utility mark, and words that say nothing.
_NAME_PARTS = st.sampled_from(
    [
        *("share", "Comments", "ads", "tags", "tag", "cloud", "nav", "menu", "footer", "sr"),
        *("only", "read", "more", "sign", "up", "article", "entry", "content", "no", "has"),
        *("category", "related", "posts", "top", "side", "bar", "x", "md:hidden", "w-[5%]"),
        *("author", "bio", "visually", "hidden", "Post", "BODY", "7", "sharethis", "q"),
    ]
)
_NAME = st.lists(_NAME_PARTS, min_size=1, max_size=5).flatmap(
    lambda parts: st.sampled_from(["-", "_", ""]).map(lambda joint: joint.join(parts))
)
_NAMES = st.lists(_NAME, max_size=5).map(" ".join)


@given(_NAMES, _NAMES)
@settings(max_examples=3000, deadline=None)
@example("post-text js-comment", "")
@example("entry-content has-sidebar", "")
@example("article-footer", "sharing-with-a-single-developer")
@example("x tag-cloud", "tags-links")
@example("about-author", "sign-up-now")
def test_furniture_is_decided_name_by_name_as_it_was_for_the_whole_string(
    classes: str, ident: str
) -> None:
    names = f"{classes}\0{ident}"
    assert furniture._find_furniture_word(names) == _old_furniture_word(names)
    assert furniture.furniture_word(names) == _old_furniture_word(names)


# -- a fetched page's bytes go to the parser as they came -----------------------------------

_PAGE_TEXT = st.text(
    alphabet=st.sampled_from(["a", " ", "é", "中", "😀", "&", "<", ">", "\u2028", "\x00"]),
    max_size=30,
).map(lambda text: text.replace("&", "&amp;"))


@st.composite
def _pages(draw: st.DrawFn) -> str:
    blocks = draw(
        st.lists(
            st.tuples(st.sampled_from(["p", "div", "h2", "li", "nav", "pre"]), _PAGE_TEXT),
            max_size=8,
        )
    )
    title = draw(_PAGE_TEXT)
    body = "".join(f"<{tag} class='c'>{text}</{tag}>" for tag, text in blocks)
    return f"<html><head><title>{title}</title></head><body><article>{body}</article></body>"


@given(_pages())
@settings(max_examples=500, deadline=None)
def test_the_page_as_utf8_bytes_extracts_as_its_text_does(page: str) -> None:
    assert extraction(page, "https://e.com/", utf8=page.encode()) == extraction(
        page, "https://e.com/"
    )


def test_a_page_the_bounds_change_is_parsed_as_they_left_it_not_as_its_bytes() -> None:
    prose = "<p>" + "Ünïcode prose the reader came for, held deep in the page. " * 6 + "</p>"
    depth = bounds._SCAN_ABOVE_TAGS  # deeper than the bound, and tags enough to be scanned
    deep = "<div>" * depth + prose + "</div>" * depth
    for page in (
        f"<html><body><article>{deep}</article></body></html>",  # flattened
        # read bare: its class, past the flood, does not make it the comments
        f"<html><body><div {'a=1 ' * bounds.MAX_ATTRIBUTES}class=comments>{prose}</div>"
        f"<p>{'More of the article. ' * 9}</p></body></html>",
    ):
        expected = extraction(page, "https://e.com/")
        assert extraction(page, "https://e.com/", utf8=page.encode()) == expected
        assert expected.note  # the bounds did change it


@given(
    st.binary(max_size=64) | _pages().map(lambda page: page.encode()),
    st.sampled_from(["text/html", "text/html; charset=utf-8", "text/html; charset=latin-1"]),
    st.sampled_from([b"", b"\xef\xbb\xbf", b"<meta charset=utf-16>"]),
)
@settings(max_examples=1000, deadline=None)
def test_a_body_goes_to_the_parser_as_it_is_only_when_it_is_its_texts_utf8(
    body: bytes, content_type: str, prefix: bytes
) -> None:
    body = prefix + body
    text, charset, exact = content._decoded(body, content_type, html=True)
    assert (text, charset) == content.decode_text(body, content_type, html=True)
    if exact:
        assert text.encode() == body
    # and the page converts as its decoded text does, whatever its bytes declare
    url = "https://e.com/"
    expected = content._with_header(extraction(text, url))
    converted = content._converted(body, content_type, url)
    assert (converted.content, converted.charset) == (expected, charset)


def test_class_names_are_lowered_in_ascii_only_as_css_compares_them() -> None:
    # "K" (U+212A, the Kelvin sign) lowers to an ASCII "k" in Python, never in CSS
    assert furniture._may_name("COOKIE-Notice")
    assert not furniture._may_name("COO\u212aIE-Notice")
    assert not furniture._may_name("coo\u212aie-notice")


@given(st.lists(st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,30}", fullmatch=True), max_size=8))
@settings(max_examples=25, deadline=None)  # two full collections each
def test_the_readings_the_caches_keep_are_out_of_the_collectors_way(names: list[str]) -> None:
    """A name's reading is kept for good (``furniture._cached_reading``), thousands a batch:
    as plain tuples of strings, numbers and None the collector stops tracking them, so the
    objects a full collection scans do not grow with every page read."""
    import gc

    readings = [furniture._read_name(name) for name in names]
    gc.collect()  # the words first: a tuple holding a tracked one stays tracked this time ...
    gc.collect()  # ... and the reading at its next look (in a batch: its generation's next)
    assert not any(gc.is_tracked(reading) for reading in readings if reading is not None)
    assert all(
        furniture._read_name(name) == reading for name, reading in zip(names, readings, strict=True)
    )
