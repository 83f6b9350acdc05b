"""The basic cleaner: drop what is never content, render the rest as markdown.

Seed 000's list: ``script``, ``style``, ``nav``, ``header`` and ``footer`` go; entities are
decoded; block elements become line breaks (html2text does both). Links stay inline, so a
model can follow one without looking it up elsewhere.
"""

from __future__ import annotations

from typing import Literal

import html2text
from pydantic import BaseModel, Field, PrivateAttr
from selectolax.lexbor import LexborHTMLParser as HTMLParser

__all__ = ["ExtractMode", "ExtractedDocument", "extract"]

ExtractMode = Literal["article", "full", "raw"]

# Never content for a reader: code, styling, page chrome, and things a text reader cannot use.
_DROP = "script, style, noscript, template, nav, header, footer, iframe, svg, canvas, form, button"


class ExtractedDocument(BaseModel):
    """What ``extract`` returns: markdown for the model, plain text, and what was learned.

    ``text`` is rendered on first use: fetch only needs the markdown, and a second html2text
    pass would nearly double the cost of every page.
    """

    markdown: str
    title: str | None = None
    mode: ExtractMode = "full"
    metadata: dict[str, str] = Field(default_factory=dict)
    _source: str = PrivateAttr(default="")
    _url: str | None = PrivateAttr(default=None)
    _text: str | None = PrivateAttr(default=None)

    @property
    def text(self) -> str:
        """The same content without markup (no link targets, no emphasis marks)."""
        if self._text is None:
            if self.mode == "raw":
                self._text = self.markdown
            else:
                self._text = _tidy(_converter(self._url, plain=True).handle(self._source))
        return self._text


def _converter(url: str | None, *, plain: bool = False) -> html2text.HTML2Text:
    converter = html2text.HTML2Text(baseurl=url or "")
    converter.body_width = 0  # no hard wrapping: the model reads lines, not a terminal
    converter.ignore_images = True
    converter.unicode_snob = True
    converter.ignore_links = plain
    converter.ignore_emphasis = plain
    return converter


def _tidy(markdown: str) -> str:
    lines = "\n".join(line.rstrip() for line in markdown.strip().splitlines())
    while "\n\n\n" in lines:
        lines = lines.replace("\n\n\n", "\n\n")
    return lines


def extract(html: str, url: str | None = None, mode: ExtractMode = "article") -> ExtractedDocument:
    """HTML → ``ExtractedDocument``. ``raw`` returns the HTML untouched as ``markdown``."""
    tree = HTMLParser(html)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text().split()) if title_node is not None else None
    if mode == "raw":
        return ExtractedDocument(markdown=html, title=title, mode="raw")
    for node in tree.css(_DROP):
        node.decompose()
    body = tree.body or tree.root
    cleaned = (body.html if body is not None else "") or ""
    document = ExtractedDocument(
        markdown=_tidy(_converter(url).handle(cleaned)), title=title or None, mode="full"
    )
    document._source, document._url = cleaned, url
    return document
