"""What a page says about itself: ``<meta>`` tags, JSON-LD, ``<link rel=canonical>``, ``lang``.

Sources are ordered by how deliberately a publisher writes them: JSON-LD and Open Graph are
written for machines (search engines, link previews) and are usually right; ``<title>`` and
visible bylines are written for people and carry site names, separators and decoration.
Runs before the cleaner removes ``<script>`` (JSON-LD lives there) and ``<head>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["PageMetadata", "read_metadata"]

#: JSON-LD blobs beyond this are not parsed: some sites inline whole product catalogues.
_MAX_JSON_LD_CHARS = 1_000_000

_ARTICLE_TYPES = frozenset(
    (
        "article",
        "newsarticle",
        "blogposting",
        "reportagenewsarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "reviewnewsarticle",
        "backgroundnewsarticle",
        "liveblogposting",
        "scholarlyarticle",
        "techarticle",
        "report",
        "socialmediaposting",
        "webpage",
    )
)

#: Declared types whose pages are better read whole than cut down to one block.
_NOT_ARTICLE_TYPES = frozenset(
    (
        "product",
        "profilepage",
        "searchresultspage",
        "collectionpage",
        "itemlist",
        "discussionforumposting",
        "qapage",
        "faqpage",
        "event",
        "recipe",
        "softwareapplication",
    )
)

_DATE_METAS = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "date",
    "pubdate",
    "publishdate",
    "publish-date",
    "publication_date",
    "dc.date.issued",
    "dc.date",
    "dcterms.date",
    "sailthru.date",
    "parsely-pub-date",
    "citation_publication_date",
    "article.published",
)
_AUTHOR_METAS = (
    "author",
    "article:author",
    "byl",
    "dc.creator",
    "parsely-author",
    "sailthru.author",
)


@dataclass
class PageMetadata:
    title: str | None = None
    byline: str | None = None
    published: str | None = None
    site_name: str | None = None
    canonical_url: str | None = None
    language: str | None = None
    description: str | None = None
    #: ``articleBody`` from JSON-LD, when a page ships its own text (a hint for selection).
    article_body: str | None = None
    #: the page declares itself an article (og:type article or an Article JSON-LD type).
    is_article: bool = False
    #: the page declares itself something that is not an article (a product, a profile...).
    declared_kind: str | None = None


def _squash(text: str | None) -> str | None:
    if not text:
        return None
    squashed = " ".join(text.split())
    return squashed or None


def _metas(tree: LexborHTMLParser) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.css("meta[content]"):
        attrs = node.attributes
        key = attrs.get("property") or attrs.get("name") or attrs.get("itemprop")
        value = attrs.get("content")
        if key and value and value.strip():
            found.setdefault(key.strip().lower(), value.strip())
    return found


def _types(item: dict[str, Any]) -> set[str]:
    kind = item.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return {k.lower() for k in kinds if isinstance(k, str)}


def _json_ld_items(tree: LexborHTMLParser) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for script in tree.css('script[type="application/ld+json"]'):
        raw = script.text(deep=True)
        if not raw or len(raw) > _MAX_JSON_LD_CHARS:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        pending = data if isinstance(data, list) else [data]
        while pending and len(items) < 200:
            item = pending.pop(0)
            if isinstance(item, list):
                pending.extend(item)
            elif isinstance(item, dict):
                items.append(item)
                graph = item.get("@graph")
                if isinstance(graph, list):
                    pending.extend(graph)
    return items


def _names(value: Any) -> list[str]:
    """Person or organisation names from a JSON-LD ``author``/``publisher`` value."""
    values = value if isinstance(value, list) else [value]
    names = []
    for entry in values:
        name = entry.get("name") if isinstance(entry, dict) else entry
        if isinstance(name, str) and (squashed := _squash(name)) and "://" not in squashed:
            names.append(squashed)
    return names


def _first_str(item: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = item.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str) and (squashed := _squash(value)):
            return squashed
    return None


def _node_text(node: LexborNode | None, limit: int = 200) -> str | None:
    if node is None:
        return None
    text = _squash(node.text(deep=True, separator=" "))
    return text if text and len(text) <= limit else None


_TITLE_SEPARATORS = frozenset("|-\u2013\u2014:\u00b7")


def _strip_site_suffix(title: str, site_name: str | None) -> str:
    """``"Story headline | Example News"`` → ``"Story headline"`` when the tail is the site."""
    for separator in (" | ", " - ", " \u2013 ", " \u2014 ", " :: ", " \u00b7 "):
        head, found, tail = title.rpartition(separator)
        if not found or not head:
            continue
        if (site_name and tail.strip().lower() in site_name.lower()) or len(tail) < len(head) / 2:
            return head.strip()
    return title


def read_metadata(tree: LexborHTMLParser, url: str | None) -> PageMetadata:
    meta = _metas(tree)
    article: dict[str, Any] = {}
    website: dict[str, Any] = {}
    og_type = (meta.get("og:type") or "").lower()
    declared_kind = og_type if og_type in _NOT_ARTICLE_TYPES else None
    for item in _json_ld_items(tree):
        kinds = _types(item)
        if declared_kind is None and kinds & _NOT_ARTICLE_TYPES:
            declared_kind = next(iter(kinds & _NOT_ARTICLE_TYPES))
        if kinds & _ARTICLE_TYPES and (not article or "webpage" in _types(article)):
            article = item
        elif "website" in kinds or "organization" in kinds or "newsmediaorganization" in kinds:
            website = website or item

    site_name = (
        meta.get("og:site_name")
        or meta.get("application-name")
        or next(iter(_names(article.get("publisher"))), None)
        or _first_str(website, "name")
    )
    site_name = _squash(site_name)

    title_node = tree.css_first("title")
    page_title = _squash(title_node.text()) if title_node is not None else None
    title = (
        _squash(meta.get("og:title"))
        or _squash(meta.get("twitter:title"))
        or _first_str(article, "headline", "name")
        or page_title
    )
    headline = _node_text(tree.css_first("h1"))
    if title is None:
        title = headline
    if title:
        title = _strip_site_suffix(title, site_name)
        rest = title[len(headline) :].lstrip() if headline and title.startswith(headline) else ""
        if headline and rest[:1] in _TITLE_SEPARATORS:
            title = headline  # "Headline | Site" or "Headline - Section - Site": the headline

    authors = _names(article.get("author"))
    byline = ", ".join(dict.fromkeys(authors)) if authors else None
    if byline is None:
        for key in _AUTHOR_METAS:
            value = _squash(meta.get(key))
            if value and "://" not in value:
                byline = value
                break
    if byline is None:
        byline = _node_text(
            tree.css_first('[rel="author"], [itemprop="author"], .byline, .author-name'), 120
        )

    published = _first_str(article, "datePublished", "dateCreated")
    if published is None:
        published = next((meta[key] for key in _DATE_METAS if meta.get(key)), None)
    if published is None:
        time_node = tree.css_first("time[datetime]")
        if time_node is not None:
            published = _squash(time_node.attributes.get("datetime"))

    canonical = None
    link = tree.css_first('link[rel="canonical"][href]')
    if link is not None:
        canonical = _squash(link.attributes.get("href"))
    canonical = canonical or _squash(meta.get("og:url"))
    if canonical and url:
        canonical = urljoin(url, canonical)

    html_node = tree.css_first("html")
    language = _squash(html_node.attributes.get("lang")) if html_node is not None else None
    language = (
        language
        or _squash(meta.get("content-language"))
        or _first_str(article, "inLanguage")
        or _squash(meta.get("og:locale"))
    )

    description = (
        _squash(meta.get("description"))
        or _squash(meta.get("og:description"))
        or _squash(meta.get("twitter:description"))
        or _first_str(article, "description")
    )

    body = article.get("articleBody")
    declared = bool(article) and "webpage" not in _types(article)
    return PageMetadata(
        title=title,
        byline=byline,
        published=published,
        site_name=site_name,
        canonical_url=canonical,
        language=language,
        description=description,
        article_body=body if isinstance(body, str) and body.strip() else None,
        is_article=og_type == "article" or declared,
        declared_kind=None if og_type == "article" or declared else declared_kind,
    )
