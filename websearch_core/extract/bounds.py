"""What the converter reads of a page, so that its time and memory stay bounded whatever the
markup: the size, attribute floods and nesting before a parse, and a text reading of markup
too big to parse into a tree at all.

- ``bound_size``: at most ``MAX_INPUT_CHARS``; a start tag with more than ``MAX_ATTRIBUTES``
  attributes loses them (a parser checks each new attribute against the tag's others: the
  spec drops duplicates, so a tag costs its attributes squared — 60,000 took lexbor 6 s).
- ``bound_input``: that, then nesting deeper than ``MAX_NESTING`` flattened (``nesting``).
- ``markup_text``: the text of markup with more tags than a tree should be built for
  (``pipeline.MAX_TAGS``), in one linear scan, without a parse: a parsed tree costs a few
  hundred bytes a node, and 2 MB of tags is half a million of them.
"""

from __future__ import annotations

import html as entities
import re
from dataclasses import dataclass
from typing import NamedTuple

from websearch_core.extract.nesting import flatten
from websearch_core.extract.tokenizer import ATTRIBUTE, SPACE

__all__ = [
    "MAX_ATTRIBUTES",
    "MAX_INPUT_CHARS",
    "MAX_NESTING",
    "bound_input",
    "bound_nesting",
    "bound_size",
    "markup_text",
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
#: One start tag keeps at most this many attributes. A parser checks each new attribute
#: against those the tag already has (the spec drops duplicates), so a tag's parse costs its
#: attributes squared: 60,000 took lexbor 6 s (two parses, 12). Real tags have a handful.
MAX_ATTRIBUTES = 512


def flood_pattern(attributes: int) -> re.Pattern[str]:
    """A start tag (``<`` and an ASCII letter, its name up to a space, "/" or ">") with more
    than ``attributes`` attributes (``tokenizer.ATTRIBUTE``). Counted repetitions, never an
    open one: the engine keeps a mark per repetition, and 300,000 cost it 95 MB."""
    return re.compile(rf"<([a-zA-Z][^{SPACE}/>]*+)(?:{ATTRIBUTE}){{{attributes + 1}}}+")


#: Every ``<`` and letter is a tag to the search, even in a script or inside another tag's
#: value (which it is, the search cannot know: that takes the parser's whole state), so tags
#: it tries may overlap, and a page of ``<b a=<b a=<b …`` made it count hundreds of attributes
#: from each of a million places (14 s for 2 MB). So the search looks for tags of more than
#: this many attributes, cheap to count from anywhere; real tags have a handful (70 at most
#: on the 251 benchmark pages), and those it finds are counted on to ``MAX_ATTRIBUTES``.
_MANY_ATTRIBUTES = 16


#: Every ``<html>`` and ``<body>`` start tag after the first adds its attributes to the one
#: element the parser made for the first (13.2.6.4.7), so 120 ``<body>`` tags of 500
#: attributes each make one element of 60,000 (13 s), though no tag is a flood. The flood
#: search finds them as it goes (a search of its own cost a tenth of a millisecond a page);
#: written without IGNORECASE, which would cost it the quick scan for "<".
_MERGING = rf"<(?:[hH][tT][mM][lL]|[bB][oO][dD][yY])(?=[{SPACE}/>])"
_MERGED = re.compile(_MERGING)
_ONE_ATTRIBUTE = re.compile(ATTRIBUTE)


class _Patterns(NamedTuple):
    """What ``_bare_floods`` searches with, for a tag that keeps ``most`` attributes."""

    #: A look: a tag's attributes counted up to ``most`` (group 2: one more than that).
    look: re.Pattern[str]
    #: A tag of more than ``many`` attributes, a run of starts, or an ``<html>`` or
    #: ``<body>`` tag (``_patterns``).
    search: re.Pattern[str]
    #: A run of attributes, for the rest of a tag being left bare.
    more: re.Pattern[str]


def _patterns(most: int, many: int) -> _Patterns:
    """The patterns for tags of ``most`` attributes at most, looked at from ``many`` on.

    A tag's name runs to a space, "/" or ">", "<" included, so from every "<" in ``<b<b<b…``
    a search reads the rest of the run as its name (80 kB of it took 5 s, 2 MB minutes).
    Every start in a run has the same attributes after it, so a run of four starts or more is
    found as it is, looked at once from its first, and passed over whole. Each ``<html>``
    and ``<body>`` tag is found too, for its attributes to be counted (``_MERGING``)."""
    piece = rf"<[a-zA-Z][^{SPACE}/><]*+"
    return _Patterns(
        re.compile(rf"<([a-zA-Z][^{SPACE}/>]*+)(?:{ATTRIBUTE}){{0,{most}}}+({ATTRIBUTE})?+"),
        re.compile(rf"{piece}(?=(?:{piece}){{3}})|{_MERGING}|{flood_pattern(many).pattern}"),
        re.compile(rf"(?:{ATTRIBUTE}){{1,{most}}}+"),
    )


_FLOODS = _patterns(MAX_ATTRIBUTES, _MANY_ATTRIBUTES)
_NAME = re.compile(rf"<[a-zA-Z][^{SPACE}/>]*+")
#: Looks read at most this many times the page's length (an attribute can be as long as the
#: page, so a count of looks would not bound them). Past it, every tag of more than
#: ``_MANY_ATTRIBUTES`` attributes is left bare. Real pages: a few thousandths of their length
#: as a rule, 2.1 times at most on the 251 benchmark pages (minified scripts read as tags).
_LOOKS = 16
#: What a bared tag's removal stops at, closing the tag with a ">" first: an end tag (a
#: script's, say) or a comment's end. A "tag" the search found in a script or a comment may run
#: past it in a quoted value, and removing that would take the text after it; a real tag whose
#: value holds one is cut there, and what follows is read as text and as the end tag's
#: attributes, which cost the parser nothing.
_OUT_OF_TAG = re.compile(r"</[a-zA-Z]|--!?>")
#: A flood is said in the note only on a tag of such a name: what the search takes for a tag in
#: a script (``e<t.length?t:null}function``, on 3 of the 121 DEV pages) is left bare unsaid,
#: as it changes no text a reader sees.
_ELEMENT_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9:_-]*")


def bound_size(html: str) -> tuple[str, list[str]]:
    """``html`` cut to ``MAX_INPUT_CHARS``, attribute floods removed; notes of what changed."""
    notes = []
    if len(html) > MAX_INPUT_CHARS:
        notes.append(
            f"the page's last {len(html) - MAX_INPUT_CHARS:,} characters of HTML were not "
            f"read (the extractor reads at most {MAX_INPUT_CHARS:,})"
        )
        html = html[:MAX_INPUT_CHARS]
    bared = _without_floods(html, _FLOODS, _LOOKS)
    if bared.as_text:
        notes.append(
            "the page's tags are built so that taking attributes out of one makes another too "
            "long: its text is read without its markup"
        )
    if bared.floods:
        notes.append(
            f"{bared.floods:,} element(s) with more than {MAX_ATTRIBUTES:,} attributes were read "
            "without them"
        )
    if bared.merged:
        notes.append(
            f"the page's <html> and <body> tags hold more than {MAX_ATTRIBUTES:,} attributes "
            "between them, which the parser gives one element: they were read without them"
        )
    if bared.past_looks:
        notes.append(
            f"{bared.past_looks:,} more element(s) with more than {_MANY_ATTRIBUTES} attributes "
            "were read without them (reading the page's tags had taken too long to go on)"
        )
    return bared.html, notes


def _without_merged_attributes(html: str) -> str:
    """``html`` with every ``<html>`` and ``<body>`` tag left bare (as floods are)."""
    pieces: list[str] = []
    kept = 0
    for tag in _MERGED.finditer(html):
        if tag.start() < kept:
            continue  # in what the last one's removal took
        resume, closing = _removal(html, tag.end(), _FLOODS.more)
        pieces += [html[kept : tag.end()], closing]
        kept = resume
    pieces.append(html[kept:])
    return "".join(pieces)


@dataclass(frozen=True)
class _Bared:
    """``_without_floods``: the markup, and what was taken out of it."""

    html: str
    #: Tags (with an element's name, ``_ELEMENT_NAME``) that lost a flood of attributes ...
    floods: int = 0
    #: ... and that lost theirs past the looks a page gets.
    past_looks: int = 0
    #: Whether the ``<html>`` and ``<body>`` tags were left bare (``_MERGING``).
    merged: bool = False
    #: Whether the markup was given up for its text (``_PASSES``).
    as_text: bool = False


#: Taking a tag's attributes out can change how an earlier tag reads, when the removed text
#: held the closing quote of that tag's value (a search that tries every "<" finds tags inside
#: values): it may then run on over attributes it did not have. So the search runs again on
#: what it made, up to this many times, and markup that is still not settled is read as text
#: (``markup_text``). A real page settles in one pass (the 251 benchmark pages: at most one).
_PASSES = 3


def _without_floods(html: str, patterns: _Patterns, looks: int) -> _Bared:
    """``html`` with no start tag left anywhere that has more attributes than
    ``patterns.look`` counts to: each is left bare, as is each that ``patterns.search`` finds
    once looks have read ``looks`` times the page. The patterns are an argument so that tests
    can count to a few (``_patterns``)."""
    floods = past_looks = 0
    merged = False
    budget = looks * len(html)  # for all the passes: a look done once is not paid for again
    for _ in range(_PASSES):
        bared, found, past, merging, budget = _bare_floods(html, patterns, budget)
        if merging > MAX_ATTRIBUTES:
            bared, merged = _without_merged_attributes(bared), True
        if bared is html:
            return _Bared(html, floods, past_looks, merged)
        html, floods, past_looks = bared, floods + found, past_looks + past
    settled, _, _, merging, _ = _bare_floods(html, patterns, budget)
    if settled is html and merging <= MAX_ATTRIBUTES:
        return _Bared(html, floods, past_looks, merged)
    return _Bared(f"<html><body><pre>{entities.escape(markup_text(html))}</pre>", as_text=True)


def _bare_floods(html: str, patterns: _Patterns, budget: int) -> tuple[str, int, int, int, int]:
    """One pass of ``_without_floods``: the markup (``html`` itself when nothing was taken
    out), the tags bared as floods and past the looks, the ``<html>`` and ``<body>``
    attributes counted, and what is left of ``budget``, the characters looks may still read.
    Linear: a search from a start reads a bounded number of attributes, a run of starts is
    read once, looks read at most ``budget``, and the search goes on past what it removes."""
    pieces: list[str] = []
    kept = position = floods = past_looks = merged = 0
    look, search, more = patterns
    while (found := search.search(html, position)) is not None:
        start = found.start()
        if merged <= MAX_ATTRIBUTES and _MERGED.match(html, start):
            merged = _count_attributes(html, start + 5, merged)
        looked = budget > 0
        if looked:
            tag = look.match(html, start)
            assert tag is not None  # both patterns start with "<" and a letter
            budget -= tag.end() - start
            name = tag.group(1)
            if tag.group(2) is None:
                # Not a flood: on past its name (every start inside it reads as this one did).
                position = start + 1 + len(name)
                continue
            floods += _ELEMENT_NAME.fullmatch(name) is not None
        else:
            name_end = _NAME.match(html, start)
            assert name_end is not None
            name = name_end.group()[1:]
        after_name = start + 1 + len(name)
        resume, closing = _removal(html, after_name, more)
        if resume == after_name and not closing:
            position = resume  # (past the looks: a tag found with no attribute to take)
            continue
        if not looked:
            past_looks += _ELEMENT_NAME.fullmatch(name) is not None
        pieces += [html[kept:after_name], closing]
        kept = position = resume
    if not pieces:
        return html, 0, 0, merged, budget
    pieces.append(html[kept:])
    return "".join(pieces), floods, past_looks, merged, budget


def _removal(html: str, after_name: int, more: re.Pattern[str]) -> tuple[int, str]:
    """Leaving bare the tag whose name ends at ``after_name``: where the page goes on after its
    attributes (runs of ``more``), and what to put before that: nothing, or a ">" when the
    removal stops at an end tag or a comment's end (``_OUT_OF_TAG``)."""
    end = after_name
    while (run := more.match(html, end)) is not None:
        end = run.end()  # each attribute is at least one character: this ends
    cut = _OUT_OF_TAG.search(html, after_name, end)
    return (end, "") if cut is None else (cut.start(), ">")


def _count_attributes(html: str, position: int, counted: int) -> int:
    """``counted`` and the attributes of the tag whose name ends at ``position``, counting
    to one more than ``MAX_ATTRIBUTES`` at most."""
    while counted <= MAX_ATTRIBUTES and (attribute := _ONE_ATTRIBUTE.match(html, position)):
        if attribute.end() == position:
            break
        counted, position = counted + 1, attribute.end()
    return counted


def bound_input(html: str) -> tuple[str, str | None]:
    """The part of ``html`` that is safe to parse, and a note of what was changed, if anything.

    ``bound_size``, then ``bound_nesting``.
    """
    html, notes = bound_size(html)
    html, flattened = bound_nesting(html)
    return html, "; ".join([*notes, *filter(None, [flattened])]) or None


def bound_nesting(html: str, tags: int | None = None) -> tuple[str, str | None]:
    """``html`` with nesting deeper than ``MAX_NESTING`` flattened (every word kept), and a
    note if it was. ``tags``: ``html.count("<")``, if the caller has counted already (a
    count of a non-ASCII page costs a third of a millisecond)."""
    if (html.count("<") if tags is None else tags) <= _SCAN_ABOVE_TAGS:
        return html, None
    flat = flatten(html, MAX_NESTING)
    if not flat.dropped_tags:
        return html, None
    return flat.html, (
        f"markup nested too deep or left open too often was flattened "
        f"({flat.dropped_tags:,} tags removed, their text kept)"
    )


_MARKUP = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)|<!--")
#: Elements whose content is never text here (the tree path's junk, ``clean.JUNK_TAGS``).
_SKIPPED = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
        "canvas", "video", "audio", "head", "select", "textarea", "title", "xmp", "noembed",
        "noframes",
    }
)  # fmt: skip
#: Elements that end a line of text.
_LINE_BREAKS = frozenset(
    {
        "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre",
        "section", "article", "header", "footer", "nav", "aside", "main", "ul", "ol", "dl",
        "dt", "dd", "table", "thead", "tbody", "tfoot", "caption", "figure", "figcaption",
        "hr", "form", "address", "details", "summary",
    }
)  # fmt: skip
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_CLOSINGS = {name: re.compile(rf"</{name}\b", re.IGNORECASE) for name in _SKIPPED}


def markup_text(html: str) -> str:
    """The visible text of ``html``, a line per block, entities decoded: linear in its length
    (each tag, comment and skipped element is passed over once, by ``find``)."""
    pieces: list[str] = []
    position = 0
    while (match := _MARKUP.search(html, position)) is not None:
        pieces.append(html[position : match.start()])
        if match.group(0) == "<!--":
            end = html.find("-->", match.end())
            position = len(html) if end < 0 else end + 3
            continue
        tag_end = html.find(">", match.end())
        if tag_end < 0:
            position = len(html)  # an unfinished tag at the end: the parser drops it too
            break
        position = tag_end + 1
        name = match.group(2).lower()
        if name in _LINE_BREAKS:
            pieces.append("\n")
        if name in _SKIPPED and not match.group(1):
            closing = _CLOSINGS[name].search(html, position)
            position = len(html) if closing is None else closing.start()
    pieces.append(html[position:])
    text = entities.unescape("".join(pieces))
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)
