"""What a provider is: a name, what it honours, and pure functions.

An HTTP provider builds an ``httpx.Request`` and decodes an ``httpx.Response``; the session
sends it, sync or async, through one retry and timeout path (``websearch_core.providers.send``). A
provider whose search takes several steps (a grounded vendor that pauses its turn, redirect
links to resolve) writes them as an ``exchange``: a generator that yields each step (``Call``
the vendor, ``Locate`` redirect targets) and is sent the outcome, so one flow serves the sync
and the async session alike. A provider backed by a blocking library (``ddgs``) exposes one
blocking call, which the session runs on a worker thread under ``asearch`` so it never
blocks the event loop.
"""

from __future__ import annotations

import base64
import html
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

import httpx
from pydantic import SecretStr

from websearch_core.config import Settings, how_to_set
from websearch_core.errors import ProviderError, ProviderResponseError
from websearch_core.models import AnswerCitation, EngineOutcome, SearchRequest, SearchResult, Usage
from websearch_core.text import without_surrogates

__all__ = [
    "OPTIONS",
    "BlockingProvider",
    "Call",
    "Endpoint",
    "Exchange",
    "HttpProvider",
    "KeyedHttpProvider",
    "Locate",
    "Provider",
    "ProviderAnswer",
    "Support",
]


class Support(str, Enum):
    """How a provider honours one option."""

    NATIVE = "native"
    QUERY_OPERATOR = "query_operator"
    UNSUPPORTED = "unsupported"


#: Every optional filter a request can carry; ``count`` is honoured by every provider.
OPTIONS: tuple[str, ...] = (
    "include_domains",
    "exclude_domains",
    "freshness",
    "date_range",
    "include_answer",
    "country",
    "language",
    "safesearch",
    "page",
)


_FRESHNESS_LETTER = {"day": "d", "week": "w", "month": "m", "year": "y"}


@dataclass(frozen=True)
class ProviderAnswer:
    """A provider's results, mapped to our models."""

    results: list[SearchResult]
    answer: str | None = None
    outcomes: list[EngineOutcome] = field(default_factory=list)
    citations: list[AnswerCitation] = field(default_factory=list)
    answer_truncated: bool = False
    #: What the vendor reported spending; ``None``: one search, no tokens (a plain index).
    usage: Usage | None = None
    #: A blend's engines that sat the search out, and why.
    skipped: dict[str, str] = field(default_factory=dict)
    #: Other queries the engine proposed.
    suggestions: list[str] = field(default_factory=list)
    #: The queries a grounded vendor's own model ran for this search, in order.
    searched: list[str] = field(default_factory=list)
    #: What the vendor's answer does not give as asked (a refusal, sources lost), in words.
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Call:
    """A step of an exchange: send this request to the provider (one retry on 429/5xx, the
    search's deadline); the exchange is sent back the successful ``httpx.Response``."""

    request: httpx.Request


@dataclass(frozen=True)
class Locate:
    """A step of an exchange: these URLs are a vendor's redirect links; the exchange is sent
    back a ``dict`` from each to where it leads, for those resolved in time through the URL
    jail (the others are left out, so the caller keeps the link)."""

    urls: tuple[str, ...]


#: A provider's search as steps: yields ``Call``/``Locate``, returns the answer.
Exchange = Generator[Call | Locate, object, ProviderAnswer]


@dataclass(frozen=True)
class Endpoint:
    """An operator's base URL as it goes on the wire: without userinfo, with any credentials
    it carried as an HTTP Basic ``Authorization`` header (so no URL we send or log holds them).
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, base_url: str) -> Endpoint:
        parts = urlsplit(base_url)
        if parts.username is None and parts.password is None:
            return cls(base_url)
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        return cls(bare, {"Authorization": f"Basic {token}"})

    def request(
        self, method: str, path: str, *, headers: Mapping[str, str], **options: Any
    ) -> httpx.Request:
        """``method`` on ``path`` below the base URL; the provider's own headers win."""
        return httpx.Request(
            method, f"{self.url}{path}", headers={**self.headers, **headers}, **options
        )


class Provider(ABC):
    """One search backend."""

    name: ClassVar[str]
    capabilities: ClassVar[Mapping[str, Support]]
    #: The longest query (after ``site:`` rewriting) the provider accepts.
    max_query_chars: ClassVar[int] = 2_000
    #: Options it honours one at a time, never together (Anthropic's two domain lists).
    exclusive_options: ClassVar[tuple[frozenset[str], ...]] = ()
    #: The ``Settings`` field that turns it on (a key or a URL); ``None``: nothing to set.
    enabled_by: ClassVar[str | None] = None
    #: The ``Settings`` field of its base URL, for an operator's gateway.
    base_url_setting: ClassVar[str | None] = None
    #: Its vendor bills each search: a blend asks the meter before it runs.
    paid: ClassVar[bool] = False
    #: It joins a blend as an engine (a plain index: grounded answers are not blended).
    blends: ClassVar[bool] = False
    #: Its results are an LLM vendor's citations.
    grounded: ClassVar[bool] = False

    @classmethod
    @abstractmethod
    def missing(cls, settings: Settings) -> str | None:
        """What the host must set for this provider to run, or ``None`` if it can."""

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Settings) -> Provider:
        """An instance; only called when ``missing`` returned ``None``."""

    @property
    def bulkhead(self) -> str:
        """Whose capacity its searches take (its connections, its threads): its own."""
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class HttpProvider(Provider):
    """A provider spoken to over HTTP by the session's shared clients."""

    @abstractmethod
    def build_request(self, request: SearchRequest, query: str) -> httpx.Request:
        """The HTTP request for ``request``, sending ``query`` (already rewritten)."""

    @abstractmethod
    def parse_response(self, response: httpx.Response, request: SearchRequest) -> ProviderAnswer:
        """Map a successful response to results."""

    def exchange(self, request: SearchRequest, query: str) -> Exchange:
        """The search as steps; for most providers, one call and its answer."""
        response = yield Call(self.build_request(request, query))
        assert isinstance(response, httpx.Response)
        return self.parse_response(response, request)

    def error_for(self, response: httpx.Response) -> ProviderError | None:
        """A provider-specific error for a failed response, or ``None`` for the generic one."""
        return None

    #: Set by the session: every configured secret out of a text (identity without secrets).
    redact: Callable[[str], str] = staticmethod(lambda text: text)

    def read_json(self, response: httpx.Response) -> dict[str, Any]:
        """The response body as a JSON object, or an error that says it was not one.

        Every string in it is made safe before a provider reads it: lone surrogates replaced
        (they cannot be encoded or serialised) and secrets redacted, so that no later cut of
        a title or snippet can keep part of a key a vendor echoed.
        """
        try:
            data = clean_strings(response.json(), self.redact)
        except (ValueError, UnicodeDecodeError, RecursionError):  # also a 5,000-digit number
            data = None
        if not isinstance(data, dict):
            raise ProviderResponseError(
                self.name,
                f"{self.name} answered with something other than a JSON object "
                f"(content type {response.headers.get('content-type', 'unknown')!r}): "
                "check the provider's base URL",
                status=response.status_code,
            )
        return data


class KeyedHttpProvider(HttpProvider):
    """An HTTP provider that is enabled by an API key in the settings."""

    #: The ``Settings`` field holding the key (the environment variables are config's).
    key_setting: ClassVar[str]
    #: The vendor's API root; an operator may point ``base_url_setting`` at a gateway.
    default_base_url: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "key_setting" in vars(cls):  # a key turns it on
            cls.enabled_by = cls.key_setting

    def __init__(self, api_key: SecretStr, base_url: str | None = None) -> None:
        self._api_key = api_key
        self._endpoint = Endpoint.of(base_url or self.default_base_url)

    @classmethod
    def missing(cls, settings: Settings) -> str | None:
        if getattr(settings, cls.key_setting) is None:
            return how_to_set(cls.key_setting)
        return None

    @classmethod
    def from_settings(cls, settings: Settings) -> Provider:
        key = getattr(settings, cls.key_setting)
        assert isinstance(key, SecretStr)
        return cls(key, base_url_of(cls, settings))


def base_url_of(cls: type[Provider], settings: Settings) -> str | None:
    """The operator's base URL for ``cls`` (``None``: the vendor's own)."""
    if cls.base_url_setting is None:
        return None
    base_url = getattr(settings, cls.base_url_setting)
    return base_url.get_secret_value() if base_url is not None else None


class BlockingProvider(Provider):
    """A provider backed by a synchronous library call."""

    @abstractmethod
    def search_blocking(self, request: SearchRequest, query: str, timeout: float) -> ProviderAnswer:
        """Run the search; blocks the calling thread."""


def clean_strings(value: object, redact: Callable[[str], str]) -> Any:
    """``value`` (parsed JSON) with every string repaired and redacted; iterative, so a
    deeply nested body costs no recursion."""
    if isinstance(value, str):
        return _clean(value, redact)
    if not isinstance(value, dict | list):
        return value
    stack: list[Any] = [value]
    while stack:
        container = stack.pop()
        keys = list(container) if isinstance(container, dict) else range(len(container))
        for key in keys:
            item = container[key]
            if isinstance(item, str):
                container[key] = _clean(item, redact)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value


def _clean(text: str, redact: Callable[[str], str]) -> str:
    return redact(without_surrogates(text))


def freshness_letter(request: SearchRequest) -> str | None:
    """``'day'`` → ``'d'``: the one-letter spelling several providers share."""
    return _FRESHNESS_LETTER[request.freshness] if request.freshness else None


def plain(value: object) -> str:
    """Provider text as plain text: ``None`` and non-strings become ``''``, markup such as
    Brave's ``<strong>`` highlights is dropped (a single linear scan, no regex), entities are
    decoded."""
    if not isinstance(value, str):
        return ""
    if "<" in value:
        kept: list[str] = []
        position = 0
        while (start := value.find("<", position)) != -1:
            end = value.find(">", start)
            if end == -1:
                break
            kept.append(value[position:start])
            position = end + 1
        kept.append(value[position:])
        value = "".join(kept)
    return html.unescape(value).strip()


def is_web_url(link: object) -> bool:
    """An absolute http(s) URL with a host and no whitespace: something a model can follow."""
    if (
        not isinstance(link, str)
        or not link[:8].lower().startswith(("http://", "https://"))
        or len(link) > MAX_LINK_CHARS
    ):
        return False
    if " " in link or not link.isprintable():  # whitespace, controls, invisible characters
        return False
    try:
        return bool(urlsplit(link).hostname)
    except ValueError:  # e.g. a malformed IPv6 literal
        return False


#: A link longer than this is no link a model should be shown (browsers stop near here).
MAX_LINK_CHARS = 4_096

Row = tuple[object, object, object, object, object]


def ranked(rows: Iterable[Row]) -> list[SearchResult]:
    """``(title, url, snippet, published, engine)`` rows → ranked results.

    Rows without an http(s) URL with a host are skipped rather than shown as dead menu entries.
    """
    results: list[SearchResult] = []
    for title, url, snippet, published, engine in rows:
        if not is_web_url(url):
            continue
        link = str(url).strip()
        results.append(
            SearchResult(
                rank=len(results) + 1,
                title=plain(title) or link,
                url=link,
                snippet=plain(snippet),
                published=plain(published) or None,
                engine=plain(engine) or None,
            )
        )
    return results
