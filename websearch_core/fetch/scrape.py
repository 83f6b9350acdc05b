"""One page in the formats a crawler API returns: markdown, cleaned HTML, raw HTML, links.

``WebSearch.scrape`` is the fetch for programs that store or index pages (the Firecrawl-shaped
door of ``websearch serve``, a loader) rather than show them to a model: the markdown is the
page's own text, not fenced, and the HTML forms are there for who asked. The fetch is the same
jailed, deadlined, size-bounded one as ``WebSearch.fetch``; only the conversion differs.

- ``main_content``: the article (``extract(mode="article")``), or else the whole page as a
  crawler sees it, menus, headers and footers included (only scripts, styles and other
  elements that hold no text are left out).
- ``include_tags`` / ``exclude_tags``: CSS selectors applied before extraction; included
  elements become the whole page, excluded ones are removed. A selector that does not parse is
  an ``InvalidRequestError``, never a silent no-op.
- ``html``: the (filtered) body without scripts, styles and other non-text elements, and
  without menus, headers and footers when ``main_content``; ``raw_html``: the page as sent.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    field_validator,
)
from selectolax.lexbor import LexborHTMLParser, SelectolaxError

from websearch_core.errors import InvalidRequestError
from websearch_core.extract import MAX_TAGS, bound_size, extraction, html_formats
from websearch_core.fetch.content import convert, decode_text
from websearch_core.fetch.fetcher import Fetched
from websearch_core.models import argument_message
from websearch_core.text import clean_text, one_line

__all__ = [
    "MAX_LINKS",
    "MAX_SELECTORS",
    "ScrapeFormat",
    "ScrapeOptions",
    "ScrapedPage",
    "scrape",
    "scrape_options",
]

ScrapeFormat = Literal["markdown", "html", "raw_html", "links"]
#: Selectors per list: a filter, not a program.
MAX_SELECTORS = 50
#: Links per page: enough for any real page's navigation, bounded for a hostile one.
MAX_LINKS = 2_000


class ScrapeOptions(BaseModel):
    """What to return for one page, and how to cut it down first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    formats: tuple[ScrapeFormat, ...] = ("markdown",)
    main_content: StrictBool = True
    include_tags: tuple[StrictStr, ...] = Field(default=(), max_length=MAX_SELECTORS)
    exclude_tags: tuple[StrictStr, ...] = Field(default=(), max_length=MAX_SELECTORS)
    #: Shortens the fetch's deadline; the session's ``fetch_timeout`` stays the ceiling.
    deadline_s: float | None = Field(default=None, gt=0)
    max_bytes: int | None = Field(default=None, ge=1)

    @field_validator("formats")
    @classmethod
    def _some_format(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("ask for at least one format")
        return tuple(dict.fromkeys(value))

    @field_validator("include_tags", "exclude_tags")
    @classmethod
    def _selectors_parse(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        probe = LexborHTMLParser("<p></p>")
        for selector in value:
            try:
                probe.css(selector)
            except SelectolaxError:
                raise ValueError(
                    f"{one_line(selector)[:80]!r} is not a CSS selector; give tag names, "
                    "classes or ids such as 'article', '.content', '#main'"
                ) from None
        return value


class ScrapedPage(BaseModel):
    """One scraped page: what was asked for, and what the page says about itself."""

    model_config = ConfigDict(frozen=True)

    url: str = Field(description="the URL asked for, in canonical form")
    final_url: str = Field(description="where the redirects ended")
    status: int
    reason: str = ""
    content_type: str
    title: str | None = None
    description: str | None = None
    language: str | None = None
    markdown: str | None = None
    html: str | None = None
    raw_html: str | None = None
    links: list[str] | None = None
    #: What could not be given as asked (an HTML format of a page that is not HTML).
    warning: str | None = None
    bytes_read: int
    truncated: bool = False
    fetched_at: dt.datetime
    elapsed_ms: float = 0.0


def scrape(fetched: Fetched, options: ScrapeOptions) -> ScrapedPage:
    """Convert one fetched response into the formats ``options`` asks for (CPU only)."""
    url = fetched.final.url
    media = fetched.media_type
    wanted = set(options.formats)
    fields: dict[str, object] = {}
    if media in ("text/html", "application/xhtml+xml"):
        text, _ = decode_text(fetched.body, fetched.content_type, html=True)
        sized, _ = bound_size(text)
        if sized.count("<") > MAX_TAGS:
            return _scraped(fetched, _as_text(sized, text, url, options))
        read = html_formats(
            sized,
            url,
            wanted,
            main_content=options.main_content,
            include_tags=options.include_tags,
            exclude_tags=options.exclude_tags,
            max_links=MAX_LINKS,
        )
        fields.update(title=read.title, description=read.description, language=read.language)
        if read.links is not None:
            fields["links"] = read.links
        if read.markdown is not None:
            fields["markdown"] = clean_text(read.markdown)
        if read.html is not None:
            fields["html"] = read.html
        if "raw_html" in wanted:
            fields["raw_html"] = text
    else:
        converted = convert(fetched.body, fetched.content_type, url)
        fields["title"] = converted.title
        if "markdown" in wanted:
            fields["markdown"] = converted.content
        if "links" in wanted:
            fields["links"] = []
        warnings = []
        if wanted & {"html", "raw_html"}:
            warnings.append(f"the page is {media}, not HTML: no HTML formats are returned")
        if options.include_tags or options.exclude_tags:
            warnings.append("tag filters apply to HTML pages only; this one was returned whole")
        fields["warning"] = "; ".join(warnings) or None
    return _scraped(fetched, fields)


def _as_text(sized: str, raw: str, url: str, options: ScrapeOptions) -> dict[str, object]:
    """A page with more tags than a tree is built for: its text (``extract`` reads it so),
    without the formats and filters that need the tree, and a warning saying so."""
    document = extraction(sized, url, mode="full")
    wanted = set(options.formats)
    fields: dict[str, object] = {
        "title": document.title,
        "description": document.description,
        "language": document.language,
    }
    warnings = [document.fallback or "the page was read as text"]
    if "markdown" in wanted:
        fields["markdown"] = clean_text(document.markdown)
    if "links" in wanted:
        fields["links"] = []
        warnings.append("its links were not read")
    if "html" in wanted:
        warnings.append("no cleaned HTML is made of it (ask for rawHtml)")
    if "raw_html" in wanted:
        fields["raw_html"] = raw
    if options.include_tags or options.exclude_tags:
        warnings.append("tag filters were not applied")
    fields["warning"] = "; ".join(warnings)
    return fields


def _scraped(fetched: Fetched, fields: dict[str, object]) -> ScrapedPage:
    url = fetched.final.url
    return ScrapedPage(
        url=fetched.first.url,
        final_url=url,
        status=fetched.status,
        reason=fetched.reason,
        content_type=fetched.media_type,
        bytes_read=len(fetched.body),
        truncated=fetched.truncated,
        fetched_at=dt.datetime.now(dt.timezone.utc),
        elapsed_ms=(time.monotonic() - fetched.started) * 1000,
        **fields,  # type: ignore[arg-type]
    )


def scrape_options(**options: object) -> ScrapeOptions:
    """``ScrapeOptions`` from keyword arguments, bad ones as an ``InvalidRequestError``."""
    try:
        return ScrapeOptions.model_validate(options)
    except ValidationError as exc:
        raise InvalidRequestError(argument_message(exc)) from None
