"""``extract``: bound the input, parse once, read metadata, clean, select, render."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from websearch_core.boundary import boundary
from websearch_core.errors import InvalidRequestError
from websearch_core.extract.clean import (
    bound_input,
    noscript_holds_the_prose,
    remove_chrome,
    remove_junk,
)
from websearch_core.extract.document import ExtractedDocument, ExtractMode
from websearch_core.extract.markdown import Rendered, render
from websearch_core.extract.metadata import PageMetadata, read_metadata
from websearch_core.extract.select import Selection, is_listing, prune, select_main

__all__ = ["extract"]

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
) -> ExtractedDocument:
    return ExtractedDocument(
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
    if not isinstance(html, str):
        raise InvalidRequestError("html must be text (str); decode bytes first")
    if url is not None and not isinstance(url, str):
        raise InvalidRequestError("url must be text (str) or None")
    if mode not in _MODES:
        raise InvalidRequestError(f"mode must be one of {', '.join(_MODES)}")
    with boundary("extraction"):
        return _extract(html, url, mode)


def _extract(html: str, url: str | None, mode: ExtractMode) -> ExtractedDocument:
    bounded, note = bound_input(html)
    tree = LexborHTMLParser(bounded)
    meta = read_metadata(tree, url)
    if mode == "raw":
        remove_junk(tree)
        body = tree.body
        text = body.text(deep=True, separator="\n", strip=True) if body is not None else ""
        return _document(Rendered(html, text), meta, "raw", None, note)
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
