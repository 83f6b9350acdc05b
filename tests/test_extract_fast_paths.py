"""The converter's fast paths give what the slow code they replaced gave, on generated input.

Each fast path (issue 30: a quarter less work per page) is held to its oracle, the code it
replaced, kept here: the output on the 121 benchmark pages was byte-identical, and these
properties stand for the pages nobody has seen.
"""

from __future__ import annotations

import html
import re
from itertools import pairwise

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from websearch_core.extract import bounds, clean, extraction, furniture, markdown, tokenizer
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
#
# A start tag's parse costs its attributes squared, so one with more than MAX_ATTRIBUTES loses
# them before the parse (``bounds.flood_pattern``). The pattern must count attributes as the
# parser does: one that reads a stray quote, a glued value or a slash differently lets a
# flood through. Its oracle is the standard's tokenizer, written out below, and the oracle is
# held to lexbor's own reading of the same tags.

_SPACES = "\t\n\f\r "


def _spec_attributes(tag: str) -> tuple[str, list[str], bool, int]:
    """The name and attribute names of the start tag at the start of ``tag``, as HTML's
    tokenizer reads them (https://html.spec.whatwg.org/multipage/parsing.html, "tag name
    state" to "after attribute value (quoted) state"), and whether the tag ends (a ">")
    before the text does (and the index of that ">"): the tokenizer drops a tag cut off by
    the end of the input."""
    assert tag.startswith("<")
    assert tag[1].isascii()
    assert tag[1].isalpha()
    i = 2
    while i < len(tag) and tag[i] not in _SPACES + "/>":
        i += 1
    element = tag[1:i]
    names: list[str] = []
    state = "before name"
    while i < len(tag):
        char = tag[i]
        if state == "before name":  # a "/" not before ">" is read again here: skipped too
            if char in _SPACES or char == "/":
                i += 1
            elif char == ">":
                return element, names, True, i
            else:
                names.append(char)  # even "=", a quote or "<": a parse error, but a name
                state, i = "name", i + 1
        elif state == "name":
            if char in _SPACES or char in "/>":
                state = "after name"
            elif char == "=":
                state, i = "before value", i + 1
            else:
                names[-1] += char
                i += 1
        elif state == "after name":
            if char in _SPACES:
                i += 1
            elif char == "/":  # "self-closing start tag state": not before ">", a new name
                state, i = "before name", i + 1
            elif char == "=":
                state, i = "before value", i + 1
            elif char == ">":
                return element, names, True, i
            else:
                state = "before name"
        elif state == "before value":
            if char in _SPACES:
                i += 1
            elif char in "\"'":
                state, quote, i = "quoted", char, i + 1
            elif char == ">":
                return element, names, True, i
            else:
                state = "unquoted"
        elif state == "quoted":
            if char == quote:
                state = "after quoted"
            i += 1
        elif state == "unquoted":
            if char in _SPACES:
                state = "before name"
            elif char == ">":
                return element, names, True, i
            i += 1
        else:  # after a quoted value: a space, "/" or ">" as after a name; else a new name
            if char == ">":
                return element, names, True, i
            state = "before name"
            if char in _SPACES or char == "/":
                i += 1
    return element, names, False, -1


_ATTRIBUTE_NAME = st.sampled_from(
    ["a", "class", "data-x", "x:y", "é", "on", "=", '"', "'", "<", "A", "b=c"]
)
_ATTRIBUTE_VALUE = st.sampled_from(
    [
        *("", "=1", '="v"', "='v'", '=">"', "='<'", '="a b"', "= x", '="', "='", "=", "=a>b"),
        *("/", "= ", " = 'x'", " =", '="a"b', "=\n", '=x"y', "=x'y", "==", '=""', '=""""'),
        *("=<", "=a=b", '="x"/', "\xa0"),
    ]
)
_ATTRIBUTE_GAP = st.sampled_from([" ", "  ", "\n", "\t", "\r", "\f", "", " /", "/", "//", "\xa0"])


def _tag(draw: st.DrawFn) -> str:
    attributes = draw(
        st.lists(
            st.tuples(_ATTRIBUTE_GAP, _ATTRIBUTE_NAME, _ATTRIBUTE_VALUE).map("".join), max_size=8
        )
    )
    end = draw(st.sampled_from([">", "/>", "", "<p>", " >", "/ >"]))
    return f"<div{''.join(attributes)}{end}"


_tags = st.composite(_tag)


@given(_tags())
@settings(max_examples=3000, deadline=None)
@example('<div b= a="v" c d>')  # the value after "= " is a's: b only, then c and d
@example("<div a='x'b c d e>")  # a name may follow a quoted value at once
@example('<div a=x"y b c d>')  # a quote in an unquoted value is the value's
@example("<div a/b/c/d>")  # slashes separate
@example('<div "a "b =c =d>')  # names may start with a quote or "="
def test_attribute_floods_are_counted_as_the_standards_tokenizer_counts(tag: str) -> None:
    _, names, ends, _ = _spec_attributes(tag)
    found = [bounds.flood_pattern(count).match(tag) is not None for count in range(9)]
    if ends:
        assert found == [len(names) > count for count in range(9)], names
    else:  # cut off by the end of the text: the parser drops it; counting more is harmless
        assert all(found[: len(names)])


@given(_tags())
@settings(max_examples=1500, deadline=None)
@example('<div a=x"y b c d>')
def test_the_tokenizer_oracle_reads_tags_as_lexbor_does(tag: str) -> None:
    element, names, ends, at = _spec_attributes(tag)
    if not ends:
        return
    body = LexborHTMLParser(f"<html><body>{tag}x</body></html>").body
    assert body is not None
    lower = furniture.ascii_lower
    node = next(node for node in body.traverse() if node.tag == lower(element))
    assert set(node.attributes) == {lower(name) for name in names}  # duplicates dropped
    # ... and the scans find the tag's ">" where the oracle does
    assert tokenizer.tag_end(tag, len(element) + 1)[0] == at


_TEXT = st.sampled_from(
    ["text ", "</script>", "</p >", "-->", "--!>", "<!--", "<", ">", "'", '"', " ", "<p>", "a=<b"]
)
_PAGES = st.lists(st.one_of(_tags(), _TEXT), max_size=8).map("".join)


def _bare(page: str, looks: int) -> str:
    # A tag keeps 3 attributes; one of 2 or more is worth a look.
    return bounds._without_floods(page, bounds._patterns(3, 1), looks).html


@given(_PAGES, st.sampled_from([0, 2, 10**6]))
@settings(max_examples=2000, deadline=None)
@example("<b a=<b a=<b a=<b a=<b c d e f>", 10**6)  # tags inside values: each is looked at
@example("<b c d e f='</script>' g h i j>", 10**6)  # bared up to the end tag, then read on
@example("<b<b<b<b<b c d e f>", 10**6)  # a run of starts: looked at once, from its first
@example("<b<b<b<b<b c d e f>", 0)
# Baring the tag inside the first one's value took that value's closing quote: the first tag
# then ran on over four attributes, and is bared in a second pass.
@example("<div a='><div a='></script><div a=a>b a='v' a a>", 0)
def test_no_tag_is_left_with_more_attributes_than_it_may_keep(page: str, looks: int) -> None:
    # Wherever the parser may find a start tag (in a script, a comment or another tag's value
    # too: the search cannot know which), it finds at most the count a tag keeps, cut off by
    # the end of the text or not: the parser counts the attributes of a tag it then drops.
    out = _bare(page, looks)
    for at in range(len(out) - 1):
        if out[at] == "<" and out[at + 1].isascii() and out[at + 1].isalpha():
            _, names, _, _ = _spec_attributes(out[at:])
            assert len(names) <= 3, (out, at)


@given(_PAGES)
@settings(max_examples=1000, deadline=None)
def test_a_page_without_floods_is_left_as_it_is(page: str) -> None:
    # (A tag cut off inside a quoted value by the end of the text may be counted high: the
    # pattern then reads the quote as part of an unquoted value.)
    read = [
        _spec_attributes(page[at:])
        for at in range(len(page) - 1)
        if re.match("<[a-zA-Z]", page[at:])
    ]
    if all(len(names) <= 3 and ends for _, names, ends, _ in read):
        assert _bare(page, 10**6) == page


@pytest.mark.parametrize(
    ("tag", "self_closing"),
    [
        ("<g/>", True),
        ("<g a/>", True),
        ('<g a="x"/>', True),
        ("<g a />", True),
        ("<g a=b/>", False),  # the value is "b/"
        ("<g a= />", False),  # the value is "/"
        ("<g a/ >", False),  # a "/" not before ">" starts nothing
        ('<g a=">"/>', True),
    ],
)
def test_a_tag_is_self_closing_as_the_tokenizer_reads_it(tag: str, self_closing: bool) -> None:
    assert tokenizer.tag_end(tag, 2) == (len(tag) - 1, self_closing)
    assert tokenizer.tag_end(tag[:-1], 2)[0] == -1  # cut off by the end: no tag


def test_the_flood_pattern_in_use_counts_to_the_real_limit() -> None:
    look = bounds._FLOODS.look
    assert look.pattern == bounds._patterns(bounds.MAX_ATTRIBUTES, 16).look.pattern
    flood = "<div" + " a=1" * (bounds.MAX_ATTRIBUTES + 1) + ">"
    over, at = look.match(flood), look.match(flood.replace(" a=1", "", 1))
    assert over is not None
    assert over.group(2) is not None  # one attribute too many
    assert at is not None
    assert at.group(2) is None


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


def test_markup_that_does_not_settle_within_its_passes_is_read_as_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # This page needs a second pass (baring the inner tag takes the outer one's closing
    # quote); allowed one, it is read as text, which has no tag left to flood the parser.
    monkeypatch.setattr(bounds, "_PASSES", 1)
    page = "<p>kept &amp; read</p><div a='><div a='></script><div a=a>b a='v' a a>"
    bared = bounds._without_floods(page, bounds._patterns(1, 1), 0)
    assert bared.as_text
    assert bared.html.startswith("<html><body><pre>kept &amp; read")
    assert "<div" not in bared.html


def test_html_and_body_tags_are_bare_when_their_attributes_together_pass_the_limit() -> None:
    # The parser gives every <body> tag's attributes to one element (and every <html> tag's).
    def tags(count: int, each: int) -> str:
        return "".join(
            "<body " + " ".join(f"a{j}_{i}" for i in range(each)) + ">" for j in range(count)
        )

    page = f"<html lang=en>{tags(2, 200)}<p>words</p>"
    out, notes = bounds.bound_size(page)
    assert (out, notes) == (page, [])  # 401 together: kept
    out, notes = bounds.bound_size(f"<html lang=en>{tags(3, 200)}<p>words</p>")
    assert out == "<html><body><body><body><p>words</p>"
    assert "<html> and <body> tags hold more than 512 attributes" in notes[0]
    body = LexborHTMLParser(out).body
    assert body is not None
    assert body.attributes == {}
