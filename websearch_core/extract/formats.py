"""A page's HTML in the formats a program asks for (``scrape``): main-content or whole-page
markdown, cleaned HTML, its links, after CSS selector filters; read from one parse."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_core.extract.bounds import bound_nesting
from websearch_core.extract.clean import remove_chrome, remove_junk
from websearch_core.extract.metadata import read_metadata
from websearch_core.extract.pipeline import extraction, whole_page

__all__ = ["HtmlFormats", "html_formats"]


@dataclass(frozen=True)
class HtmlFormats:
    """What ``html_formats`` read: the page's metadata, and each format asked for."""

    title: str | None
    description: str | None
    language: str | None
    markdown: str | None = None
    html: str | None = None
    links: list[str] | None = None


def html_formats(
    sized: str,
    url: str,
    formats: Collection[str],
    *,
    main_content: bool,
    include_tags: Sequence[str],
    exclude_tags: Sequence[str],
    max_links: int,
) -> HtmlFormats:
    """``formats`` (of ``markdown``, ``html``, ``links``) of a page already cut to size
    (``bound_size``) and within ``MAX_TAGS``. ``exclude_tags`` are removed first, then only
    what ``include_tags`` match is kept (when it names any); links are read before either."""
    tree = LexborHTMLParser(bound_nesting(sized)[0])
    meta = read_metadata(tree, url)
    links = _links(tree, url, max_links) if "links" in formats else None
    filtered = _filtered(tree, include_tags, exclude_tags)
    markdown = html = None
    if "markdown" in formats and main_content:
        markdown = extraction(filtered, url, mode="article").markdown
    elif "markdown" in formats:
        markdown = whole_page(filtered, url)
    if "html" in formats:
        html = _clean_html(filtered, main_content)
    return HtmlFormats(meta.title, meta.description, meta.language, markdown, html, links)


def _links(tree: LexborHTMLParser, base: str, most: int) -> list[str]:
    found: dict[str, None] = {}
    for anchor in tree.css("a[href]"):
        href = (anchor.attributes.get("href") or "").strip()
        try:
            absolute = urldefrag(urljoin(base, href)).url
        except ValueError:  # an unclosed IPv6 bracket and the like: not a link
            continue
        if absolute.startswith(("http://", "https://")):
            found[absolute] = None
            if len(found) >= most:
                break
    return list(found)


def _filtered(tree: LexborHTMLParser, include: Sequence[str], exclude: Sequence[str]) -> str:
    """The page after ``exclude`` and ``include``, as HTML.

    Only the outermost element of nested matches is kept (once, however many selectors
    match it), so what is kept is never larger than the page: ``*`` or ``div`` on deeply
    nested markup would otherwise copy each element once per ancestor.
    """
    root = tree.root.mem_id if tree.root is not None else None
    for selector in exclude:
        for node in reversed(tree.css(selector)):
            if node.mem_id != root:  # the document's root element stays
                node.decompose()
    if not include:
        return tree.html or ""
    matched = {node.mem_id: node for selector in include for node in tree.css(selector)}
    kept = []
    for node in tree.root.traverse() if tree.root is not None else ():
        if node.mem_id in matched and not _inside(node, matched):
            kept.append(node.html or "")
    return "<html><body>" + "".join(kept) + "</body></html>"


def _inside(node: LexborNode, matched: dict[int, LexborNode]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.mem_id in matched:
            return True
        parent = parent.parent
    return False


def _clean_html(html: str, main_content: bool) -> str:
    tree = LexborHTMLParser(html)
    remove_junk(tree)
    if main_content:
        remove_chrome(tree)
    body = tree.body
    return (body.html or "") if body is not None else ""
