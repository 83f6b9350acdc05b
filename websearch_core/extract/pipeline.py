"""``extract``: bound the input, parse once, read metadata, clean, select, render.

Every page converts within a bounded time and memory, whatever its markup: the input is
bounded first (``bounds``); a page with more than ``MAX_TAGS`` tags, or whose
markdown would pass ``markdown.MAX_OUTPUT_CHARS``, is read as plain text (the parser's own
text walk, in C), with ``fallback`` saying why. Measured before: 60,000 attributes on one
element took 12 s for 0.9 MB; a 2 MB table of 200 columns rendered 60 MB of markdown (+404 MB);
200,000 links +113 MB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from selectolax.lexbor import LexborHTMLParser

from websearch_core.boundary import boundary
from websearch_core.errors import InvalidRequestError
from websearch_core.extract.bounds import bound_input, bound_nesting, bound_size, markup_text
from websearch_core.extract.clean import (
    noscript_holds_the_prose,
    remove_chrome,
    remove_junk,
)
from websearch_core.extract.extraction import Extraction, ExtractMode
from websearch_core.extract.markdown import (
    MAX_OUTPUT_CHARS,
    OutputBudgetExceeded,
    Rendered,
    render,
)
from websearch_core.extract.metadata import PageMetadata, read_metadata
from websearch_core.extract.select import Selection, is_listing, prune, select_main

if TYPE_CHECKING:
    from websearch_core.extract.document import ExtractedDocument

__all__ = ["MAX_TAGS", "extract", "extraction", "whole_page"]

#: Pages with more tags than this are read as plain text: rendering costs Python work per
#: node (about 8 µs a tag, and memory with it), where the parser's own text walk costs next to
#: nothing. The benchmark's 121 news pages have at most 3,229; a 2 MB data table 50,000.
MAX_TAGS = 60_000

#: An article shorter than this many characters on a page with much more text is suspect:
#: the selection probably caught one block of a page that is not an article.
_SHORT_ARTICLE_CHARS = 400
#: ... "much more" meaning this many times the article's characters.
_PAGE_TO_ARTICLE = 4.0
#: A "main block" whose text is more than this share link text is a list of links (search
#: results, an index, a link page), which reads better whole.
_LINK_LIST_DENSITY = 0.4


def _document(
    rendered: Rendered,
    meta: PageMetadata,
    mode: ExtractMode,
    fallback: str | None,
    note: str | None,
) -> Extraction:
    return Extraction(
        markdown=rendered.markdown,
        text=rendered.text,
        mode=mode,
        fallback=fallback,
        note=note,
        title=meta.title,
        byline=meta.byline,
        published=meta.published,
        site_name=meta.site_name,
        canonical_url=meta.canonical_url,
        language=meta.language,
        description=meta.description,
    )


def _has_words(rendered: Rendered) -> bool:
    """Whether ``rendered`` says anything: a page of stray punctuation is no rendering."""
    return any(char.isalnum() for char in rendered.text)


def _full(html: str, url: str | None, noscript: bool, *, chrome: bool = True) -> Rendered:
    """The whole page rendered: without its chrome, or (``chrome=False``, the last resort
    before nothing) with only its junk removed, ``<noscript>`` kept."""
    tree = LexborHTMLParser(html)
    remove_junk(tree, keep_noscript=noscript or not chrome)
    if chrome:
        remove_chrome(tree)
    body = tree.body
    return render([body] if body is not None else [], url)


_MODES = ("article", "full", "raw")
#: Said when every word of a page is in what the chrome rules remove, so the page is shown
#: with them off rather than as nothing.
_ALL_CHROME = (
    "all of the page's text is in menus, headers, footers or blocks named as furniture, "
    "shown here as it is"
)
_NOSCRIPT = (
    "the text is what the page shows without scripts (its <noscript>): nothing else holds prose"
)


def extract(html: str, url: str | None = None, mode: ExtractMode = "article") -> ExtractedDocument:
    """HTML → ``ExtractedDocument``; see the package docstring for the modes.

    Raises only ``InvalidRequestError`` (for arguments of the wrong type or an unknown mode)
    or, for a failure nobody foresaw, ``InternalError``; malformed HTML is not an error.
    """
    # Imported here, not with the module: a conversion worker imports this module and never
    # the model (``extraction``'s docstring says why).
    from websearch_core.extract.document import ExtractedDocument

    extracted = extraction(html, url, mode)
    with boundary("extraction"):
        return ExtractedDocument.of(extracted)


def extraction(
    html: str,
    url: str | None = None,
    mode: ExtractMode = "article",
    *,
    utf8: bytes | None = None,
) -> Extraction:
    """``extract``'s result as a plain ``Extraction``, without pydantic (for conversion
    workers and the fetch path); it raises as ``extract`` does. ``utf8``: ``html`` encoded
    as UTF-8, when the caller holds that already (a fetched page's body): the parser reads
    those bytes instead of encoding ``html`` again, which costs it a third as much as the
    parse itself on a page that is not all ASCII."""
    if not isinstance(html, str):
        raise InvalidRequestError("html must be text (str); decode bytes first")
    if url is not None and not isinstance(url, str):
        raise InvalidRequestError("url must be text (str) or None")
    if mode not in _MODES:
        raise InvalidRequestError(f"mode must be one of {', '.join(_MODES)}")
    if utf8 is not None and not isinstance(utf8, bytes):
        raise InvalidRequestError("utf8 must be bytes (html encoded as UTF-8) or None")
    with boundary("extraction"):
        return _extract(html, url, mode, utf8)


def _plain(html: str) -> Rendered:
    """The page's text without markup, read without a parse (``bounds.markup_text``)."""
    text = markup_text(html)
    return Rendered(text, text)


def _too_big(tags: int) -> str:
    return (
        f"the page has {tags:,} tags, more than the converter renders as markdown "
        f"({MAX_TAGS:,}): its text is shown without structure"
    )


_TOO_LONG = (
    "the page's markdown would be longer than the converter writes "
    "(its text and links would pass {:,} characters): its text is shown without structure"
)


def whole_page(html: str, url: str | None) -> str:
    """The whole page as markdown, menus and footers included, only junk left out (what a
    crawler returns: ``scrape`` with ``main_content=False``), within the same bounds."""
    sized, _ = bound_size(html)
    if sized.count("<") > MAX_TAGS:
        return _plain(sized).markdown
    bounded, _ = bound_nesting(sized)
    tree = LexborHTMLParser(bounded)
    remove_junk(tree)
    body = tree.body
    try:
        return render([body] if body is not None else [], url).markdown
    except OutputBudgetExceeded:
        return _plain(bounded).markdown


#: A page read as text still has its title and metadata read from its ``<head>``, when the
#: head is no bigger than this (a head holding the whole page's tags is not parsed either).
_HEAD_CHARS = 200_000


def _head(sized: str, url: str | None) -> PageMetadata:
    end = sized.find("</head")
    head = sized[:end] if 0 <= end <= _HEAD_CHARS else ""
    if head.count("<") > MAX_TAGS // 10:
        head = ""
    bounded, _ = bound_input(head + "</head><body></body>")
    return read_metadata(LexborHTMLParser(bounded), url)


def _extract(html: str, url: str | None, mode: ExtractMode, utf8: bytes | None) -> Extraction:
    sized, notes = bound_size(html)
    tags = sized.count("<")
    if tags > MAX_TAGS and mode != "raw":  # said in the note too: what the reader sees
        reason = _too_big(tags)
        said = "; ".join([*notes, reason])
        return _document(_plain(sized), _head(sized, url), "full", reason, said)
    bounded, flattened = bound_nesting(sized, tags)
    note = "; ".join([*notes, *filter(None, [flattened])]) or None
    # The bytes say what ``bounded`` says only if the bounds left the page as it came.
    tree = LexborHTMLParser(utf8 if utf8 is not None and bounded is html else bounded)
    meta = read_metadata(tree, url)
    if mode == "raw":
        remove_junk(tree)
        body = tree.body
        text = body.text(deep=True, separator="\n", strip=True) if body is not None else ""
        return _document(Rendered(html, text), meta, "raw", None, note)
    try:
        return _rendered(tree, bounded, url, mode, meta, note)
    except OutputBudgetExceeded:
        reason = _TOO_LONG.format(MAX_OUTPUT_CHARS)
        note = "; ".join(filter(None, (note, reason)))
        return _document(_plain(bounded), meta, "full", reason, note)


def _rendered(
    tree: LexborHTMLParser,
    bounded: str,
    url: str | None,
    mode: ExtractMode,
    meta: PageMetadata,
    note: str | None,
) -> Extraction:
    noscript = noscript_holds_the_prose(tree)
    if noscript:
        note = "; ".join(filter(None, (note, _NOSCRIPT)))
    if mode == "full":
        rendered = _full(bounded, url, noscript)
        if _has_words(rendered):
            return _document(rendered, meta, "full", None, note)
        whole = _full(bounded, url, noscript, chrome=False)
        return _document(whole, meta, "full", _ALL_CHROME, note)
    remove_junk(tree, keep_noscript=noscript)
    content_words = remove_chrome(tree)
    body = tree.body
    page_chars = len(body.text(deep=True)) if body is not None else 0
    selection = select_main(tree)
    reason = _not_an_article(meta, selection, page_chars)
    if reason is None and selection is not None:
        prune(selection.nodes, meta.title, content_words)
        rendered = render(selection.nodes, url)
        if _has_words(rendered):
            return _document(rendered, meta, "article", None, note)
        reason = "the likeliest article block held only page furniture"
    rendered = _full(bounded, url, noscript)
    if _has_words(rendered):
        return _document(rendered, meta, "full", reason, note)
    whole = _full(bounded, url, noscript, chrome=False)
    return _document(whole, meta, "full", f"{reason}; {_ALL_CHROME}", note)


def _not_an_article(meta: PageMetadata, selection: Selection | None, page_chars: int) -> str | None:
    """Why the page should be read whole rather than cut down to ``selection``, if it should."""
    if selection is None:
        return "no block of prose on the page"
    if meta.declared_kind is not None:
        return f"the page declares itself a {meta.declared_kind}, not an article"
    if meta.is_article:
        return None
    if selection.chars < _SHORT_ARTICLE_CHARS and page_chars > selection.chars * _PAGE_TO_ARTICLE:
        return (
            f"the likeliest article block has {selection.chars} of the page's {page_chars} "
            "characters"
        )
    if selection.link_density > _LINK_LIST_DENSITY:
        return f"{selection.link_density:.0%} of the likeliest article block is link text"
    if is_listing(selection):
        return "the likeliest article block is a list of linked items"
    return None
