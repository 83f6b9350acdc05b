"""HTML → main-content markdown for the model; JSON and text pass through (``content``).

``extract(html, url=None, mode="article")`` returns an ``ExtractedDocument`` (``extraction``:
the same as a plain dataclass, for the fetch path and its conversion workers):

- ``article`` (fetch's default): the main content only. Pages that hold no article (docs
  indexes, search results, forums, product pages, link lists) come back as a ``full`` render
  with ``fallback`` saying why, never empty.
- ``full``: the whole page without chrome (scripts, menus, headers, footers, hidden and
  furniture-named blocks).
- ``raw``: the HTML untouched as ``markdown``; ``text`` is its visible text.

Pipeline: ``bounds`` (size, attribute and nesting caps, so time and memory stay bounded) → one
``selectolax`` (lexbor) parse → ``metadata`` (JSON-LD, Open Graph, ``<meta>``) →
``clean`` (junk tags, chrome) → ``select`` (paragraph votes, link density, siblings,
pruning) → ``markdown`` (one walk, markdown and text together; inline links).

``html_formats`` gives a program (``scrape``) the formats it asks for from one parse:
markdown, cleaned HTML, links, after CSS selector filters. Only this package's names are
used from outside it (``tests/test_architecture.py`` and import-linter check).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from websearch_core.extract.bounds import bound_size
from websearch_core.extract.extraction import Extraction, ExtractMode
from websearch_core.extract.formats import HtmlFormats, html_formats
from websearch_core.extract.pipeline import MAX_TAGS, extract, extraction, whole_page

if TYPE_CHECKING:
    from websearch_core.extract.document import ExtractedDocument

__all__ = [
    "MAX_TAGS",
    "ExtractMode",
    "ExtractedDocument",
    "Extraction",
    "HtmlFormats",
    "bound_size",
    "extract",
    "extraction",
    "html_formats",
    "whole_page",
]


def __getattr__(name: str) -> Any:
    # The model is imported on first use: a conversion worker imports this package and never
    # needs it (``extraction``'s docstring says why).
    if name != "ExtractedDocument":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from websearch_core.extract.document import ExtractedDocument

    globals()[name] = ExtractedDocument
    return ExtractedDocument
