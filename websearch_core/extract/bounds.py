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

from websearch_core.extract.nesting import flatten

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
#: A start tag's first ``MAX_ATTRIBUTES`` + 1 attributes, quoted values and all, and then up to
#: that many more. Linear: names, separators and values are disjoint, so a failed match gives
#: back one step at a time, and a quoted value scans only to its own closing quote (measured:
#: 2 MB of unterminated tags and quotes in under 0.1 s). Counted repetitions, never an open
#: one: the engine keeps a mark per repetition, and 300,000 cost it 95 MB.
_ATTRIBUTE = r"""\s+[^\s"'<>=/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']*))?"""
#: The same attribute with the parts that can never give back made possessive: the leading
#: whitespace (a name follows, never whitespace), the name (whitespace, ``=`` or the tag's end
#: follows, never a name character) and a value (its end is the end of a quoted run or of the
#: unquoted characters). The whitespace around ``=`` may still give back: ``b= a="v"`` is
#: ``b`` and ``a`` to the original. tests/test_extract_fast_paths.py holds the two to the same
#: matches; the search of every page's every tag is 2.5 times faster (it was a seventh of a
#: news page's conversion).
_ATTRIBUTE_FAST = r"""\s++[^\s"'<>=/]++(?:\s*=\s*(?:"[^"]*+"|'[^']*+'|[^\s>"']*+))?"""


def flood_pattern(attributes: int, attribute: str = _ATTRIBUTE_FAST) -> re.Pattern[str]:
    """A start tag with more than ``attributes`` attributes (``attribute`` says what one is)."""
    return re.compile(rf"<([a-zA-Z][^\s/>]*+)(?:{attribute}){{{attributes + 1}}}")


_ATTRIBUTE_FLOOD = flood_pattern(MAX_ATTRIBUTES)
_MORE_ATTRIBUTES = re.compile(rf"(?:{_ATTRIBUTE}){{1,{MAX_ATTRIBUTES}}}")


def bound_size(html: str) -> tuple[str, list[str]]:
    """``html`` cut to ``MAX_INPUT_CHARS``, attribute floods removed; notes of what changed."""
    notes = []
    if len(html) > MAX_INPUT_CHARS:
        notes.append(
            f"the page's last {len(html) - MAX_INPUT_CHARS:,} characters of HTML were not "
            f"read (the extractor reads at most {MAX_INPUT_CHARS:,})"
        )
        html = html[:MAX_INPUT_CHARS]
    html, floods = _without_floods(html)
    if floods:
        notes.append(
            f"{floods:,} element(s) with more than {MAX_ATTRIBUTES:,} attributes were read "
            "without them"
        )
    return html, notes


def _without_floods(html: str) -> tuple[str, int]:
    """``html`` with each start tag of more than ``MAX_ATTRIBUTES`` attributes left bare."""
    pieces: list[str] = []
    kept = floods = 0
    while (flood := _ATTRIBUTE_FLOOD.search(html, kept)) is not None:
        end = flood.end()
        while (more := _MORE_ATTRIBUTES.match(html, end)) is not None:
            end = more.end()  # each attribute is at least two characters: this ends
        pieces += [html[kept : flood.start()], f"<{flood.group(1)}"]
        kept = end
        floods += 1
    if not floods:
        return html, 0
    pieces.append(html[kept:])
    return "".join(pieces), floods


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
