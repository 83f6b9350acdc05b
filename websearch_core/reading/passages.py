"""A page's content cut into passages along its own structure, each with its place.

A passage is a block of the markdown the converter wrote (a paragraph, a list item, a table
row, a code block, a quote), under the headings it sits in. A block longer than
``MAX_PASSAGE_CHARS`` is cut between sentences, never inside one (a single sentence longer
than ``MAX_SENTENCE_CHARS`` is cut at a space); neighbouring short blocks of one section are
joined, so a list of one-word items is one passage, not twenty. ``start`` is the passage's
first character in the page's content: ``web_fetch`` with that ``offset`` reads on from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_PASSAGE_CHARS", "Chunk", "split_passages"]

#: A passage is at most about a paragraph: enough to hold a fact with its context.
MAX_PASSAGE_CHARS = 700
#: Blocks shorter than this join the next block of their section, while the two fit.
MIN_PASSAGE_CHARS = 160
#: A sentence longer than this (a run-on list, a page without full stops) is cut at a space.
MAX_SENTENCE_CHARS = 1_000

_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
#: The characters of a table's header rule (``|---|:--:|``), which carries no words.
_RULE_CHARS = frozenset("|:- \t")
#: Where a sentence ends: its closing mark (and any closing quote or bracket), then space.
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f\u2026])[\"'\u201d\u2019\u00bb)\]]*\s+")
_SECTION_JOINT = " \u203a "  # a single right-pointing angle quotation mark


@dataclass(frozen=True, slots=True)
class Chunk:
    """One passage: its text (``content[start:end]``), and the headings above it."""

    text: str
    start: int
    end: int
    section: str


@dataclass(slots=True)
class _Block:
    start: int
    end: int
    section: str
    kind: str  # "text", "item", "row", "code"


def _heading(bare: str) -> tuple[int, str] | None:
    """``(level, title)`` of an ATX heading line (``## Title ##``), else ``None``. String
    operations, not a regular expression: a line of a page's own ``#``s must cost its length,
    and the pattern for a heading's optional closing ``#``s backtracked on it (a line of
    20,000 took 2.5 s)."""
    if not bare.startswith("#"):
        return None
    level = len(bare) - len(bare.lstrip("#"))
    if level > 6 or (level < len(bare) and bare[level] not in " \t"):
        return None
    return level, bare[level:].strip().rstrip("#").rstrip()


def _blocks(content: str) -> list[_Block]:
    """The page's blocks in order, as spans of ``content``, with their section path."""
    blocks: list[_Block] = []
    headings: list[tuple[int, str]] = []
    section = ""
    current: _Block | None = None
    fence: str | None = None
    position = 0
    for line in content.splitlines(keepends=True):
        start, position = position, position + len(line)
        bare = line.strip()
        end = start + len(line.rstrip())
        if fence is not None:  # inside a code block: everything up to its closing fence
            if current is not None:
                current.end = end
            if bare.startswith(fence):
                fence, current = None, None
            continue
        if bare.startswith(("```", "~~~")):
            fence = bare[:3]
            current = _Block(start, end, section, "code")
            blocks.append(current)
            continue
        if not bare:
            current = None
            continue
        heading = _heading(bare)
        if heading is not None:
            level, title = heading
            headings = [h for h in headings if h[0] < level]
            if title:
                headings.append((level, title))
            section = _SECTION_JOINT.join(h[1] for h in headings)
            current = None
            continue
        if "---" in bare and _RULE_CHARS.issuperset(bare):
            continue  # a table's header rule carries no words
        if bare.startswith("|"):
            blocks.append(_Block(start, end, section, "row"))  # each row its own block
            current = None
            continue
        if _ITEM.match(line) is not None:
            current = _Block(start, end, section, "item")
            blocks.append(current)
            continue
        if current is not None and current.kind in ("text", "item"):
            current.end = end  # the paragraph (or the item) goes on
            continue
        current = _Block(start, end, section, "text")
        blocks.append(current)
    return blocks


def _sentence_spans(content: str, start: int, end: int) -> list[tuple[int, int]]:
    """``content[start:end]`` cut into sentences, each no longer than MAX_SENTENCE_CHARS."""
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END.finditer(content, start, end):
        spans.append((cursor, match.start() + len(match.group().rstrip())))
        cursor = match.end()
    if cursor < end:
        spans.append((cursor, end))
    cut: list[tuple[int, int]] = []
    for a, b in spans:
        while b - a > MAX_SENTENCE_CHARS:
            space = content.rfind(" ", a + MAX_SENTENCE_CHARS // 2, a + MAX_SENTENCE_CHARS)
            stop = space if space > a else a + MAX_SENTENCE_CHARS
            cut.append((a, stop))
            a = stop + (1 if space > a else 0)
        if b > a:
            cut.append((a, b))
    return cut


def _pieces(content: str, block: _Block) -> list[tuple[int, int]]:
    """A block as spans of at most about MAX_PASSAGE_CHARS, cut between sentences."""
    if block.end - block.start <= MAX_PASSAGE_CHARS or block.kind in ("code", "row"):
        return [(block.start, block.end)]
    pieces: list[tuple[int, int]] = []
    for a, b in _sentence_spans(content, block.start, block.end):
        if pieces and b - pieces[-1][0] <= MAX_PASSAGE_CHARS:
            pieces[-1] = (pieces[-1][0], b)
        else:
            pieces.append((a, b))
    return pieces


def split_passages(content: str) -> list[Chunk]:
    """``content`` (a page's markdown or text) as passages, in page order."""
    spans: list[tuple[int, int, str]] = []
    for block in _blocks(content):
        for a, b in _pieces(content, block):
            if spans:
                a0, b0, section0 = spans[-1]
                short = b0 - a0 < MIN_PASSAGE_CHARS or b - a < MIN_PASSAGE_CHARS
                if section0 == block.section and short and b - a0 <= MAX_PASSAGE_CHARS:
                    spans[-1] = (a0, b, section0)
                    continue
            spans.append((a, b, block.section))
    chunks = []
    for a, b, section in spans:
        text = content[a:b].strip()
        if text:
            chunks.append(
                Chunk(text, a + (len(content[a:b]) - len(content[a:b].lstrip())), b, section)
            )
    return chunks
