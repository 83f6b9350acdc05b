"""One walk over the chosen nodes, two outputs: markdown for the model and plain text.

Own renderer rather than html2text: html2text re-parses serialised HTML (a second parse per
page, ~15 ms for a 47 kB page), wraps tables it cannot express, and knows nothing of the
selection already made on the tree. Walking the selectolax tree once gives both ``markdown``
and ``text`` for the price of one.

What it keeps: headings (``#``), paragraphs, ordered and unordered lists with nesting,
GFM tables for data tables (layout tables are read as the blocks they hold), fenced code
blocks with the language when the page names one, inline code, ``**strong**``/``*em*``,
blockquotes, and links. Images are dropped (a model reading text cannot use them, and their
URLs are long).

Links are inline, ``[text](absolute-url)``, resolved against the page URL. An agent that
wants to follow a link needs the URL where the words are; a numbered reference list at the
bottom saves a few characters per link but makes the model match ``[12]`` to a line hundreds
of tokens away, which models do unreliably, and a head/tail output budget can cut the
reference list off entirely. In-page fragment links (``#section``) and ``javascript:`` links
keep their text only: they lead nowhere an agent can fetch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urljoin

from selectolax.lexbor import LexborNode

__all__ = ["MAX_LINK_CHARS", "MAX_OUTPUT_CHARS", "OutputBudgetExceeded", "Rendered", "render"]

#: A link target longer than this is left out (its text stays): browsers and servers stop
#: near 2,000 characters, and a page's every relative link would carry a long base's length.
MAX_LINK_CHARS = 2_048
#: The markdown of one page takes at most this many characters of text and link targets: a
#: few times the 2 MB read ceiling, far beyond any article, bounded for a hostile page.
MAX_OUTPUT_CHARS = 6_000_000

#: Invisible marks inside words: soft hyphens and zero-width spaces and joiners a page puts in
#: for line breaking ("Fried\u00adrich"). A model quoting or searching the text needs the word
#: whole. (U+200C/U+200D stay: they shape Persian and Indic script and emoji.)
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u2060\ufeff"))
_HAS_INVISIBLE = re.compile("[\u00ad\u200b\u2060\ufeff]")
_SPACES = re.compile(r"[ \t]+")

#: Deeper than this, a subtree is read as flat text: real content is never nested this deep,
#: and it keeps the walk clear of Python's recursion limit on hostile pages.
_MAX_DEPTH = 120

_SKIP = frozenset(
    (
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "button",
        "input",
        "select",
        "textarea",
        "option",
        "canvas",
        "video",
        "audio",
        "object",
        "embed",
        "head",
        "title",
        "meta",
        "link",
        "img",
        "picture",
        "source",
        "map",
        "-comment",
        "figcaption",
    )
)
_BLOCK = frozenset(
    (
        "address",
        "article",
        "aside",
        "body",
        "center",
        "details",
        "dialog",
        "div",
        "dl",
        "fieldset",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "html",
        "legend",
        "main",
        "nav",
        "p",
        "section",
        "summary",
        "dd",
        "dt",
        "caption",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
        "li",
    )
)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_EMPHASIS = {"strong": "**", "b": "**", "em": "*", "i": "*", "del": "~~", "s": "~~"}
_CODE = frozenset(("code", "kbd", "samp", "tt"))
_LAYOUT_IN_CELL = "table, p, div, ul, ol, h1, h2, h3, h4, pre, blockquote, section"


class Rendered:
    __slots__ = ("markdown", "text")

    def __init__(self, markdown: str, text: str) -> None:
        self.markdown = markdown
        self.text = text


class _Sink:
    """Blocks so far plus the inline run being built, markdown and text side by side."""

    __slots__ = ("blocks", "md", "tx")

    def __init__(self) -> None:
        self.blocks: list[tuple[str, str]] = []
        self.md: list[str] = []
        self.tx: list[str] = []

    def flush(self) -> None:
        if not self.md:
            return
        text = _tidy_inline("".join(self.tx))
        if text:
            self.blocks.append((_tidy_inline("".join(self.md)), text))
        self.md.clear()
        self.tx.clear()


def squash(raw: str) -> str:
    """A text node as it reads: invisible marks dropped (``_INVISIBLE``), each run of
    whitespace one space, a leading or trailing run kept as one. The same as
    ``re.sub(r"\\s+", " ", raw.translate(_INVISIBLE))`` (a property test holds it to that),
    several times faster: ``str.translate`` looks up every character of a non-ASCII text
    (73 ns a character, against 2 on ASCII), so it runs only on a text that holds a mark, and
    ``split`` and ``join`` do in C what the pattern did a step at a time."""
    if not raw.isascii() and _HAS_INVISIBLE.search(raw) is not None:
        raw = raw.translate(_INVISIBLE)
    words = raw.split()  # str.split's whitespace is the pattern's \s: str.isspace
    if not words:
        return " " if raw else ""
    run = " ".join(words)
    if raw[0].isspace():
        run = " " + run
    if raw[-1].isspace():
        run += " "
    return run


def _tidy_inline(run: str) -> str:
    if "\n" not in run:
        if "  " not in run and "\t" not in run:
            return run.strip()  # the text nodes' runs are squashed already: nothing to join
        return _SPACES.sub(" ", run).strip()
    lines = (_SPACES.sub(" ", line).strip() for line in run.split("\n"))
    return "\n".join(line for line in lines if line)


def _href(node: LexborNode, base: str | None) -> str | None:
    href = (node.attributes.get("href") or "").strip()
    if not href or href.startswith("#") or href[:11].lower() == "javascript:":
        return None
    if base:
        try:
            href = urljoin(base, href)
        except ValueError:
            return None
    if len(href) > MAX_LINK_CHARS:
        return None  # no reader follows it, and each copy would cost the output its length
    return href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _code_language(node: LexborNode) -> str:
    for candidate in (node, node.css_first("code")):
        if candidate is None:
            continue
        for name in (candidate.attributes.get("class") or "").split():
            for prefix in ("language-", "lang-", "highlight-source-"):
                if name.startswith(prefix) and len(name) > len(prefix):
                    return name[len(prefix) :]
    return ""


class OutputBudgetExceeded(Exception):
    """The markdown grew past its budget (``render``): the caller reads the page as text."""


class _Renderer:
    def __init__(self, base: str | None, budget: int) -> None:
        self.base = base
        #: Characters of text and link targets the markdown may still take.
        self.left = budget

    def spend(self, chars: int) -> None:
        self.left -= chars
        if self.left < 0:
            raise OutputBudgetExceeded

    def walk(self, node: LexborNode, sink: _Sink, depth: int) -> None:
        child = node.child
        while child is not None:
            self.visit(child, sink, depth)
            child = child.next

    def visit(self, node: LexborNode, sink: _Sink, depth: int) -> None:
        tag = node.tag
        if tag == "-text":
            raw = node.text_content
            if raw:
                run = squash(raw)
                self.spend(len(run))
                sink.md.append(run)
                sink.tx.append(run)
            return
        if tag is None or tag in _SKIP:
            return
        if depth > _MAX_DEPTH:
            run = squash(node.text(deep=True, separator=" "))
            sink.md.append(run)
            sink.tx.append(run)
            return
        if tag in _BLOCK:
            sink.flush()
            self.walk(node, sink, depth + 1)
            sink.flush()
        elif tag == "a":
            self.wrap(node, sink, depth, link=_href(node, self.base))
        elif tag in _EMPHASIS:
            self.wrap(node, sink, depth, marker=_EMPHASIS[tag])
        elif tag == "br":
            sink.md.append("\n")
            sink.tx.append("\n")
        elif tag in _HEADINGS:
            self.heading(node, sink, depth, _HEADINGS[tag])
        elif tag in ("ul", "ol", "menu"):
            self.listing(node, sink, depth, ordered=tag == "ol")
        elif tag == "pre":
            self.preformatted(node, sink)
        elif tag in _CODE:
            code = node.text(deep=True)
            if code.strip():
                fence = "``" if "`" in code else "`"
                sink.md.append(f"{fence}{code}{fence}")
                sink.tx.append(code)
        elif tag == "table":
            self.table(node, sink, depth)
        elif tag == "blockquote":
            self.quote(node, sink, depth)
        elif tag == "hr":
            sink.flush()
        else:
            self.walk(node, sink, depth + 1)

    def wrap(
        self,
        node: LexborNode,
        sink: _Sink,
        depth: int,
        *,
        link: str | None = None,
        marker: str = "",
    ) -> None:
        """Render an inline element's children, then wrap them as a link or in emphasis."""
        blocks, md_at = len(sink.blocks), len(sink.md)
        self.walk(node, sink, depth + 1)
        if len(sink.blocks) != blocks or (link is None and not marker):
            return  # a block inside an inline element (a card in a link): leave it as blocks
        inner = "".join(sink.md[md_at:])
        stripped = inner.strip()
        if not stripped:
            return
        lead = " " if inner[0].isspace() else ""
        trail = " " if inner[-1].isspace() else ""
        del sink.md[md_at:]
        if link is not None:
            self.spend(len(link) + 4)
            label = stripped.replace("\n", " ").replace("[", "\\[").replace("]", "\\]")
            sink.md.append(f"{lead}[{label}]({link}){trail}")
        elif stripped.startswith(marker) and stripped.endswith(marker):
            sink.md.append(inner)  # <b><b>x</b></b> is bold once, not ****x****
        else:
            sink.md.append(f"{lead}{marker}{stripped}{marker}{trail}")

    def heading(self, node: LexborNode, sink: _Sink, depth: int, level: int) -> None:
        sink.flush()
        inner = _Sink()
        self.walk(node, inner, depth + 1)
        inner.flush()
        if inner.blocks:
            md = " ".join(block[0].replace("\n", " ") for block in inner.blocks)
            text = " ".join(block[1].replace("\n", " ") for block in inner.blocks)
            sink.blocks.append((f"{'#' * level} {md}", text))

    def listing(self, node: LexborNode, sink: _Sink, depth: int, *, ordered: bool) -> None:
        sink.flush()
        start = node.attributes.get("start") if ordered else None
        number = int(start) if start and start.isdigit() and len(start) < 7 else 1
        md_items: list[str] = []
        tx_items: list[str] = []
        child = node.child
        while child is not None:
            if child.tag == "-text" or child.tag in _SKIP or child.tag is None:
                child = child.next
                continue
            inner = _Sink()
            if child.tag == "li":
                self.walk(child, inner, depth + 1)
            else:
                self.visit(child, inner, depth + 1)
            inner.flush()
            child = child.next
            if not inner.blocks:
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            pad = " " * len(marker)
            body = "\n".join(block[0] for block in inner.blocks)
            md_items.append(marker + body.replace("\n", "\n" + pad))
            tx_items.append("\n".join(block[1] for block in inner.blocks))
        if md_items:
            sink.blocks.append(("\n".join(md_items), "\n".join(tx_items)))

    def preformatted(self, node: LexborNode, sink: _Sink) -> None:
        sink.flush()
        code = node.text(deep=True).strip("\n")
        if not code.strip():
            return
        fence = "~~~" if "```" in code else "```"
        sink.blocks.append((f"{fence}{_code_language(node)}\n{code}\n{fence}", code))

    def quote(self, node: LexborNode, sink: _Sink, depth: int) -> None:
        sink.flush()
        inner = _Sink()
        self.walk(node, inner, depth + 1)
        inner.flush()
        if inner.blocks:
            md = "\n\n".join(block[0] for block in inner.blocks)
            quoted = "\n".join(f"> {line}" if line else ">" for line in md.split("\n"))
            sink.blocks.append((quoted, "\n\n".join(block[1] for block in inner.blocks)))

    def table(self, node: LexborNode, sink: _Sink, depth: int) -> None:
        sink.flush()
        rows = _rows(node)
        widest = max((len(cells) for cells in rows), default=0)
        layout = widest < 2 or any(
            cell.css_first(_LAYOUT_IN_CELL) is not None for cells in rows for cell in cells
        )
        if layout:
            # A table used for page layout, or one whose cells hold blocks: GFM cannot hold
            # it, and the reader wants the blocks, so read the cells in order.
            for cells in rows:
                for cell in cells:
                    self.walk(cell, sink, depth + 1)
                    sink.flush()
            caption = node.css_first("caption")
            if caption is not None and not rows:
                self.walk(caption, sink, depth + 1)
            sink.flush()
            return
        md_rows: list[list[str]] = []
        tx_rows: list[str] = []
        for cells in rows:
            md_cells: list[str] = []
            tx_cells: list[str] = []
            for cell in cells:
                inner = _Sink()
                self.walk(cell, inner, depth + 1)
                inner.flush()
                md = " ".join(block[0] for block in inner.blocks).replace("\n", " ")
                md_cells.append(md.replace("|", "\\|"))
                tx_cells.append(" ".join(block[1] for block in inner.blocks).replace("\n", " "))
                span = cell.attributes.get("colspan") or "1"
                extra = min(int(span), 20) - 1 if span.isdigit() else 0
                md_cells.extend([""] * max(0, extra))
            if any(tx_cells):
                md_rows.append(md_cells)
                tx_rows.append("\t".join(cell for cell in tx_cells if cell))
        if not md_rows:
            return
        caption = node.css_first("caption")
        if caption is not None:
            self.walk(caption, sink, depth + 1)
            sink.flush()
        # The header and its delimiter span every column; a shorter row is not padded (GFM
        # fills in the missing cells), so one wide row cannot make every row as wide.
        width = max(len(row) for row in md_rows)
        header = md_rows[0] + [""] * (width - len(md_rows[0]))
        lines = [_row(header), _row(["---"] * width)]
        lines.extend(_row(row) for row in md_rows[1:])
        sink.blocks.append(("\n".join(lines), "\n".join(tx_rows)))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _rows(table: LexborNode) -> list[list[LexborNode]]:
    """The table's own rows (not those of tables nested in its cells), as lists of cells."""
    rows: list[list[LexborNode]] = []
    sections: list[LexborNode] = [table]
    child = table.child
    while child is not None:
        if child.tag in ("thead", "tbody", "tfoot"):
            sections.append(child)
        child = child.next
    for section in sections:
        row = section.child
        while row is not None:
            if row.tag == "tr":
                cells = []
                cell = row.child
                while cell is not None:
                    if cell.tag in ("td", "th"):
                        cells.append(cell)
                    cell = cell.next
                rows.append(cells)
            row = row.next
    return rows


def render(
    nodes: Iterable[LexborNode], base: str | None, budget: int = MAX_OUTPUT_CHARS
) -> Rendered:
    """Markdown and text for ``nodes``, in order, as one document; ``OutputBudgetExceeded``
    once the text and link targets would pass ``budget`` characters."""
    renderer = _Renderer(base, budget)
    sink = _Sink()
    for node in nodes:
        renderer.visit(node, sink, 0)
    sink.flush()
    markdown = "\n\n".join(block[0] for block in sink.blocks)
    text = "\n\n".join(block[1] for block in sink.blocks)
    return Rendered(markdown, text)
