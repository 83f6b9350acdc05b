"""ddgs: the keyless default, a metasearch library with no API key.

ddgs is synchronous, so the session runs it on a worker thread under ``asearch``. It has no
hidden time filter here: ``timelimit`` is sent only when the caller asks for freshness.
"""

from __future__ import annotations

import importlib.util
from typing import Any, ClassVar

from websearch_core.config import Settings
from websearch_core.errors import ProviderUnavailableError, RateLimitedError, install_hint
from websearch_core.models import SearchRequest
from websearch_core.providers.base import (
    BlockingProvider,
    ProviderAnswer,
    Support,
    freshness_letter,
    ranked,
)

_SAFESEARCH = {"off": "off", "moderate": "moderate", "strict": "on"}
# DuckDuckGo regions are "country-language"; a few countries use their own spelling.
_REGION = {
    "gb": "uk-en",
    "us": "us-en",
    "ca": "ca-en",
    "au": "au-en",
    "in": "in-en",
    "br": "br-pt",
    "cn": "cn-zh",
    "jp": "jp-jp",
    "kr": "kr-kr",
    "mx": "mx-es",
}
_NO_RESULTS = "No results found"


class DdgsProvider(BlockingProvider):
    name = "ddgs"
    capabilities: ClassVar = {
        "include_domains": Support.QUERY_OPERATOR,
        "exclude_domains": Support.QUERY_OPERATOR,
        "freshness": Support.NATIVE,
        "date_range": Support.UNSUPPORTED,
        "include_answer": Support.UNSUPPORTED,
        "country": Support.NATIVE,
        "language": Support.UNSUPPORTED,
        "safesearch": Support.NATIVE,
        "page": Support.NATIVE,
    }

    def __init__(self, backend: str | None = None) -> None:
        #: One ddgs backend (``"duckduckgo"``, ``"mojeek"`` …) as a blend engine, or ``None``
        #: for ddgs's own choice ("auto").
        self.backend = backend

    @property
    def bulkhead(self) -> str:
        """A backend of a blend has threads of its own: one that hangs holds only its own."""
        return f"ddgs/{self.backend}" if self.backend else self.name

    @classmethod
    def missing(cls, settings: Settings) -> str | None:
        if importlib.util.find_spec("ddgs") is None:
            return install_hint("ddgs")
        return None

    @classmethod
    def from_settings(cls, settings: Settings) -> DdgsProvider:
        return cls()

    def search_blocking(self, request: SearchRequest, query: str, timeout: float) -> ProviderAnswer:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        options: dict[str, Any] = {
            "max_results": request.count,
            "page": request.page,
            "safesearch": _SAFESEARCH[request.safesearch or "moderate"],
            "timelimit": freshness_letter(request),
        }
        if request.country:
            options["region"] = _REGION.get(request.country, f"{request.country}-{request.country}")
        if self.backend is not None:
            options["backend"] = self.backend
        try:
            items = DDGS(timeout=max(1, round(timeout))).text(query, **options)
        except RatelimitException:
            raise RateLimitedError(self.name, None) from None
        except TimeoutException:
            raise ProviderUnavailableError(self.name, f"no answer within {timeout:g} s") from None
        except DDGSException as exc:
            if _NO_RESULTS in str(exc):
                items = []
            else:
                raise ProviderUnavailableError(self.name, _reason(exc)) from None
        rows = (
            (item.get("title"), item.get("href"), item.get("body"), item.get("date"), None)
            for item in items or []
            if isinstance(item, dict)
        )
        return ProviderAnswer(results=ranked(rows)[: request.count])


#: What a ddgs failure means, by what its message says (it nests each engine's whole error
#: chain, with URLs that change every run); the first match wins.
_FAILURES = (
    (("dns", "lookup", "resolve", "name or service"), "its search engines' names could not be "
     "resolved; check the machine's network"),
    (("timed out", "timeout", "deadline"), "its search engines did not answer in time"),
    (("connect", "refused", "unreachable", "reset", "tls", "ssl"), "it could not connect to "
     "its search engines; check the machine's network"),
    (("403", "forbidden", "captcha", "blocked"), "its search engines refused the request"),
)  # fmt: skip


def _reason(exc: Exception) -> str:
    """One clean line: what failed, in our words, never the engines' URLs."""
    text = str(exc).casefold()
    for needles, meaning in _FAILURES:
        if any(needle in text for needle in needles):
            return meaning
    return f"its search engines failed ({type(exc).__name__})"


def text_backends() -> tuple[str, ...]:
    """The installed ddgs's text backends, each a blend engine; none without ddgs."""
    if importlib.util.find_spec("ddgs") is None:
        return ()
    try:
        from ddgs.engines import ENGINES
    except ImportError:  # a ddgs that lays its engines out otherwise
        return ()
    return tuple(sorted(ENGINES.get("text", {})))
