"""The data that crosses the core's boundary: what is asked, what comes back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, TypedDict

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from websearch_core.domains import normalise_domain
from websearch_core.errors import InvalidRequestError
from websearch_core.render import render_page, render_search
from websearch_core.text import one_line

__all__ = [
    "DEFAULT_READ_TOKENS",
    "MAX_COUNT",
    "MAX_READ",
    "MAX_READ_TOKENS",
    "MIN_READ_TOKENS",
    "SEARCH_OPTIONS",
    "AnswerCitation",
    "EngineOutcome",
    "FetchRequest",
    "Freshness",
    "Page",
    "Passage",
    "Redirect",
    "SafeSearch",
    "SearchOptions",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "Usage",
    "argument_message",
    "http_failure",
    "said_number",
    "validation_message",
]

#: A result list is a menu, not a document: ten entries is already more than a model reads.
MAX_COUNT = 10
DEFAULT_COUNT = 5
#: A search that reads (``read=``): at most this many pages, more is a crawl, not an answer;
#: the rendered answer (menu and passages) within a token budget, by default one tool
#: result's worth.
MAX_READ = 5
DEFAULT_READ_TOKENS = 1_500
MIN_READ_TOKENS = 200
MAX_READ_TOKENS = 20_000
#: Long enough for a question pasted with its error message, short enough for every provider.
MAX_QUERY_CHARS = 400
#: Per list: a filter, not a crawl scope. More would not fit a provider's query or request.
MAX_DOMAINS = 50
#: Two lines of snippet: enough to choose a link, never enough to write code against.
MAX_SNIPPET_CHARS = 240
MAX_TITLE_CHARS = 160
#: What one fetched page may put in front of the model (~6k tokens); the rest is cut in the
#: middle, with a marker saying how to ask for it.
DEFAULT_OUTPUT_CHARS = 24_000

Freshness = Literal["day", "week", "month", "year"]
SafeSearch = Literal["off", "moderate", "strict"]


def validation_message(exc: ValidationError) -> str:
    """Pydantic's errors in one line, without the offending input values (they could hold a
    key, and they are the caller's own words anyway)."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "request"
        parts.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def not_a_boolean(value: object) -> object:
    """A whole number, never ``True``: pydantic would quietly read true as 1 (and a strict
    int refuses it in other words than the tools' schemas, so this is the one wording)."""
    if isinstance(value, bool):
        raise ValueError("give a whole number, not true or false")
    return value


def said_number(number: int) -> str:
    """``number`` as a caller reads it in a note (``1,000,000``); an absurd one is not
    written out whole (Python refuses to make text of an int of over 4,300 digits)."""
    return f"{number:,}" if abs(number) < 10**18 else "more than 10^18"


def argument_message(exc: ValidationError) -> str:
    """The one wording of "these arguments do not fit", for the Python API and every tool."""
    return f"invalid arguments: {validation_message(exc)}; correct them and call again"


def _letters(code: str) -> bool:
    """A two-letter code (ISO 639-1 language, ISO 3166-1 region)."""
    return len(code) == 2 and code.isascii() and code.isalpha()


def _one_line(text: str, limit: int) -> str:
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class SearchOptions(TypedDict, total=False):
    """What ``WebSearch.search`` takes beside the query: ``SearchRequest``'s fields (with
    their defaults), ``site`` (one more entry of ``include_domains``) and ``provider`` (a
    provider pinned for this one call)."""

    count: int
    site: str | None
    include_domains: Iterable[str] | None
    exclude_domains: Iterable[str] | None
    freshness: Freshness | None
    date_from: dt.date | str | None
    date_to: dt.date | str | None
    include_answer: bool
    country: str | None
    language: str | None
    locale: str | None
    safesearch: SafeSearch | None
    page: int
    engines: Iterable[str] | None
    provider: str | None


#: The names ``SearchOptions`` holds.
SEARCH_OPTIONS = SearchOptions.__optional_keys__ | SearchOptions.__required_keys__


class SearchRequest(BaseModel):
    """One search as asked. Validation turns bad input into errors that say what to change.

    Types are strict: ``count="5"`` or ``count=True`` is an error, not 5 or 1. (The tools'
    argument schemas, which read a model's JSON, accept ``"5"``; the Python API does not.)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    #: At most ``MAX_COUNT``: a bigger count is capped, not refused (a framework's default of
    #: 20 is a wish, not an error), and ``count_asked`` keeps it so the response can say so.
    count: Annotated[StrictInt, BeforeValidator(not_a_boolean)] = Field(
        default=DEFAULT_COUNT, ge=1, description=f"1 to {MAX_COUNT}; more is capped at {MAX_COUNT}"
    )
    _count_asked: int | None = PrivateAttr(default=None)
    page: Annotated[StrictInt, BeforeValidator(not_a_boolean)] = Field(default=1, ge=1, le=10)
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    freshness: Freshness | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    include_answer: StrictBool = False
    country: StrictStr | None = Field(default=None, description="ISO 3166-1 alpha-2, e.g. 'us'")
    language: StrictStr | None = Field(default=None, description="ISO 639-1, e.g. 'en'")
    #: A hint, not a filter: a language and maybe its region (``en``, ``en-US``, as SearXNG
    #: takes them). Each engine follows as much of it as it can (its language, its region) and
    #: none sits a search out for it; ``language`` and ``country`` are the strict forms.
    locale: StrictStr | None = Field(
        default=None, description="a hint each engine follows as it can, e.g. 'en-US'"
    )
    safesearch: SafeSearch | None = None
    #: The engines of a blend to ask, by name (``WebSearch.engines``); none named: every one.
    engines: tuple[StrictStr, ...] = Field(default=(), max_length=50)

    @model_validator(mode="wrap")
    @classmethod
    def _cap_count(cls, data: object, handler: ModelWrapValidatorHandler[SearchRequest]) -> Any:
        asked = None
        if isinstance(data, Mapping):
            count = data.get("count")
            if isinstance(count, int) and not isinstance(count, bool) and count > MAX_COUNT:
                asked, data = count, {**data, "count": MAX_COUNT}
        request = handler(data)
        if asked is not None:  # private: kept by copies, never read from input
            request._count_asked = asked
        return request

    @property
    def count_asked(self) -> int | None:
        """The count asked for, when it was more than ``MAX_COUNT`` (and so capped)."""
        return self._count_asked

    @field_validator("engines", mode="before")
    @classmethod
    def _engine_names(cls, value: object) -> object:
        if value is None:
            return ()
        if isinstance(value, str):
            value = [value]
        if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
            names = []
            for item in value:
                if not isinstance(item, str):
                    raise ValueError("each engine is a name, such as 'ddgs/duckduckgo'")
                if item.strip():
                    names.append(item.strip().lower())
            return tuple(dict.fromkeys(names))
        return value

    @field_validator("query")
    @classmethod
    def _query_has_words(cls, value: str) -> str:
        flat = one_line(value)  # control characters never reach a provider or the menu
        if not flat:
            raise ValueError("the query is blank: write the words to search for")
        return flat

    @field_validator("date_from", "date_to", mode="before")
    @classmethod
    def _date_or_iso_text(cls, value: object) -> object:
        if value is None or (
            isinstance(value, str | dt.date) and not isinstance(value, dt.datetime)
        ):
            return value
        raise ValueError("give a date, or text such as '2026-01-31'")

    @field_validator("include_domains", "exclude_domains", mode="before")
    @classmethod
    def _normalise_domains(cls, value: object) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            items: list[object] = [value]
        elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
            items = []
            for item in value:
                items.append(item)
                if len(items) > MAX_DOMAINS:
                    raise ValueError(f"give at most {MAX_DOMAINS} domains")
        else:
            raise ValueError("give a domain or a list of domains, such as ['docs.python.org']")
        domains: list[str] = []
        for item in items:
            if not isinstance(item, str):
                raise ValueError("each domain must be text, such as 'docs.python.org'")
            domain = normalise_domain(item)
            if domain not in domains:
                domains.append(domain)
        return tuple(domains)

    @field_validator("country", "language")
    @classmethod
    def _two_letters(cls, value: str | None) -> str | None:
        if value is None:
            return None
        code = value.strip().lower()
        if len(code) != 2 or not code.isascii() or not code.isalpha():
            raise ValueError(f"expected a two-letter code such as 'us' or 'en', got {value!r}")
        return code

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str | None) -> str | None:
        if value is None:
            return None
        language, dash, region = value.strip().replace("_", "-").lower().partition("-")
        if not _letters(language) or (dash and not _letters(region)):
            raise ValueError(f"expected a locale such as 'en' or 'en-US', got {value[:40]!r}")
        return f"{language}-{region}" if region else language

    @model_validator(mode="after")
    def _dates_make_sense(self) -> SearchRequest:
        if self.freshness and (self.date_from or self.date_to):
            raise ValueError("give either freshness or a date range, not both")
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to: swap them")
        overlap = set(self.include_domains) & set(self.exclude_domains)
        if overlap:
            raise ValueError(f"{sorted(overlap)} is both included and excluded: pick one")
        return self

    def options_used(self) -> list[str]:
        """The names of the optional filters this request asks for (count is always honoured)."""
        used = {
            "include_domains": bool(self.include_domains),
            "exclude_domains": bool(self.exclude_domains),
            "freshness": self.freshness is not None,
            "date_range": bool(self.date_from or self.date_to),
            "include_answer": self.include_answer,
            "country": self.country is not None,
            "language": self.language is not None,
            "safesearch": self.safesearch is not None,
            "page": self.page > 1,
        }
        return [name for name, on in used.items() if on]


class FetchRequest(BaseModel):
    """One fetch as asked; strict like ``SearchRequest`` (``offset=1.5`` is an error)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: StrictStr
    max_bytes: StrictInt | None = Field(default=None, ge=1)
    offset: StrictInt = Field(default=0, ge=0)


def http_failure(page: Page) -> str:
    """An error status in the words every projection says it: ``HTTP 404 Not Found``."""
    return f"HTTP {page.status} {page.reason}".strip()


class Passage(BaseModel):
    """A passage of a result's page that answers the query (a search that reads)."""

    model_config = ConfigDict(frozen=True)

    text: str
    #: Where the passage starts in the page's content: ``fetch(url, offset=offset)`` (the
    #: ``web_fetch`` tool's ``offset``) reads on from here.
    offset: int = Field(ge=0)
    #: The headings the passage sits under, outermost first, joined by " \u203a " (an angle
    #: quotation mark).
    section: str = ""
    #: Its BM25 score against the query (``reading/ranking.py``), above 0: a page none of
    #: whose passages holds a word of the query shows none (its snippet stays).
    score: float = 0.0


class SearchResult(BaseModel):
    """One entry of the menu."""

    model_config = ConfigDict(frozen=True)

    rank: int
    title: str
    url: str
    snippet: str = ""
    published: str | None = None
    engine: str | None = None
    #: In a blend: every engine that returned this page, its position in each (1 = first),
    #: and its fused score (reciprocal-rank fusion).
    engines: tuple[str, ...] = ()
    positions: tuple[int, ...] = ()
    score: float | None = None
    #: A search that reads (``read=``): the page's passages that best answer the query, in
    #: page order, or why the page could not be read (its snippet is then all there is).
    passages: tuple[Passage, ...] = ()
    read_error: str | None = None

    @field_validator("title")
    @classmethod
    def _cap_title(cls, value: str) -> str:
        return _one_line(value, MAX_TITLE_CHARS)

    @field_validator("snippet")
    @classmethod
    def _cap_snippet(cls, value: str) -> str:
        return _one_line(value, MAX_SNIPPET_CHARS)

    @field_validator("published")
    @classmethod
    def _one_line_date(cls, value: str | None) -> str | None:
        # One line and bounded here; the menu shows at most 40 characters of it.
        return _one_line(value, 80) or None if value is not None else None


class EngineOutcome(BaseModel):
    """How one engine behind a provider fared: a failing engine is visible, never calm.

    ``answered``: it returned usable results; ``blind``: it answered with nothing usable;
    ``down``: it failed (``error`` says how).
    """

    model_config = ConfigDict(frozen=True)

    engine: str
    status: Literal["answered", "blind", "down"]
    results: int = 0
    error: str | None = None


class Usage(BaseModel):
    """What one search spent at the provider, for a caller who meters it.

    ``searches`` counts the searches the vendor ran and bills (a plain index: one per call;
    a grounded vendor: as many as its model chose, from the vendor's own count); ``requests``
    the calls made to the provider's API (a paused turn that is continued is two; a call
    retried after a 429 or 5xx counts once, as the failed attempt is not billed; Gemini's
    redirect-link lookups are not API calls); tokens are ``None`` for a provider that bills
    none. A memo hit spent nothing and says so (all zero).
    """

    model_config = ConfigDict(frozen=True)

    searches: int = 0
    requests: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    #: Paid engines this search reached, with the fee each one cost, in cents (a blend).
    paid: dict[str, float] = Field(default_factory=dict)
    #: What the vendor said the call cost in US dollars, its search fee included, where it
    #: says so (OpenRouter's ``usage.cost``); ``None`` elsewhere.
    cost_usd: float | None = None

    @property
    def cents(self) -> float:
        """What the paid engines cost, in all."""
        return sum(self.paid.values())


class AnswerCitation(BaseModel):
    """A span of ``answer`` (``start``/``end`` in characters of the Python string, end
    exclusive) backed by the results ranked ``ranks``."""

    model_config = ConfigDict(frozen=True)

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    ranks: tuple[int, ...]


class SearchResponse(BaseModel):
    """What a search returned, plus which provider ran and how its engines fared."""

    model_config = ConfigDict(frozen=True)

    query: str
    provider: str
    results: list[SearchResult]
    answer: str | None = None
    #: Which results back which part of ``answer`` (grounded providers), for the [n] markers.
    citations: list[AnswerCitation] = Field(default_factory=list)
    #: The vendor stopped before its answer was finished (a token limit, a turn paused too
    #: often): the answer is shown, marked as cut off, never passed off as complete.
    answer_truncated: bool = False
    usage: Usage = Field(default_factory=Usage)
    #: Engines of a blend left out of this search, and why (an option they cannot honour,
    #: the metering budget spent): nothing was sent to them.
    skipped: dict[str, str] = Field(default_factory=dict)
    #: Other queries the engines proposed (an upstream SearXNG's ``suggestions``).
    suggestions: list[str] = Field(default_factory=list)
    #: The queries a grounded vendor's own model ran on the caller's behalf (it chooses its
    #: own words): shown in the menu, so nobody has to guess what was searched.
    searched: list[str] = Field(default_factory=list)
    sent_query: str = Field(description="the query as sent, after any `site:` rewriting")
    outcomes: list[EngineOutcome] = Field(default_factory=list)
    #: What was not given as asked, in words (a count capped, no answer where one was asked
    #: for): shown before the last line, so a caller is never left to guess.
    notes: list[str] = Field(default_factory=list)
    from_memo: bool = False
    elapsed_ms: float = 0.0
    #: A search that reads: how many of the top results were read (0: a plain search), and
    #: the token budget the rendered text keeps within (``reading/tokens.py`` counts).
    read: int = 0
    read_tokens: int | None = None

    def render(self) -> str:
        """Exactly the text the model reads."""
        return render_search(self)


class Redirect(BaseModel):
    """One hop of a redirect chain: where we were sent from, and with which status."""

    model_config = ConfigDict(frozen=True)

    url: str
    status: int


class Page(BaseModel):
    """One fetched page: the converted text and everything known about how it was fetched."""

    model_config = ConfigDict(frozen=True)

    url: str = Field(description="the URL asked for, in canonical form")
    final_url: str = Field(description="where the redirects ended")
    redirects: list[Redirect] = Field(default_factory=list)
    status: int
    reason: str = ""
    content_type: str = Field(description="the media type, e.g. text/html")
    kind: Literal["html", "json", "text", "pdf", "binary"]
    charset: str | None = None
    title: str | None = None
    content: str = Field(description="the page as markdown or text, before the output budget")
    #: The content as plain text (an HTML page's prose without markdown marks), for bulk
    #: records and indexes; never serialised and never rendered (the model reads ``content``).
    text: str | None = Field(default=None, exclude=True, repr=False)
    bytes_read: int = Field(description="decoded body bytes read")
    truncated: bool = Field(default=False, description="the read ceiling cut the body")
    max_bytes: int
    fetched_at: dt.datetime
    elapsed_ms: float = Field(default=0.0, description="the whole fetch, redirects included")
    headers_ms: float = Field(default=0.0, description="until the final response's headers")
    from_memo: bool = False
    offset: int = Field(default=0, description="where render() starts reading content")
    max_chars: int = Field(default=DEFAULT_OUTPUT_CHARS, description="render()'s output budget")
    #: What was not done as asked (a ``max_bytes`` past the cap), said after the fence.
    notes: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def render(self, max_chars: int | None = None, offset: int | None = None) -> str:
        """Exactly the text the model reads: fenced, labelled, within the output budget."""
        for name, value in (("max_chars", max_chars), ("offset", offset)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise InvalidRequestError(f"{name} must be a whole number")
        if max_chars is not None and max_chars < 1:
            raise InvalidRequestError("max_chars must be at least 1")
        if offset is not None and offset < 0:
            raise InvalidRequestError("offset must be 0 or more")
        return render_page(
            self,
            max_chars=self.max_chars if max_chars is None else max_chars,
            offset=self.offset if offset is None else offset,
        )
