"""websearch-pack's framework-neutral core: web search (and page fetch) for LLM agents.

from websearch_core import WebSearch
ws = WebSearch()                       # arguments, then environment
print(ws.search("go 1.26 release notes", site="go.dev").render())

The session, the models, the jail and the providers are imported when first used (PEP 562),
not when the package is: a conversion worker imports ``websearch_core.fetch.workers`` and the
extractor, and must not pay for the session, the providers, httpx and the rest (measured: a
worker's start-up import fell from 0.88 s to a third of it), nor must a program that only
wants ``extract``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Imported now, not lazily: the errors cost nothing (no dependencies), and the subpackage
# ``websearch_core.extract`` and the function share a name: importing the subpackage (a worker
# does, first thing) binds the module to it, and this line binds the function after it. A
# worker needs the extractor anyway.
from websearch_core.errors import (
    AuthenticationError,
    ConfigurationError,
    FetchError,
    FetchTimeoutError,
    InternalError,
    InvalidRequestError,
    ProviderError,
    ProviderNotConfiguredError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
    UnsupportedOptionError,
    URLRefusedError,
    WebSearchError,
)
from websearch_core.extract import extract

if TYPE_CHECKING:
    from websearch_core.extract import ExtractedDocument
    from websearch_core.models import (
        AnswerCitation,
        EngineOutcome,
        Page,
        Redirect,
        SearchRequest,
        SearchResponse,
        SearchResult,
        Usage,
    )
    from websearch_core.net.jail import JailPolicy
    from websearch_core.providers.base import Support
    from websearch_core.session import WebSearch

#: Where each name imported on first use lives.
_HOMES = {
    **dict.fromkeys(
        (
            "AnswerCitation",
            "EngineOutcome",
            "Page",
            "Redirect",
            "SearchRequest",
            "SearchResponse",
            "SearchResult",
            "Usage",
        ),
        "websearch_core.models",
    ),
    "ExtractedDocument": "websearch_core.extract",
    "JailPolicy": "websearch_core.net.jail",
    "Support": "websearch_core.providers.base",
    "WebSearch": "websearch_core.session",
}

__all__ = [
    "AnswerCitation",
    "AuthenticationError",
    "ConfigurationError",
    "EngineOutcome",
    "ExtractedDocument",
    "FetchError",
    "FetchTimeoutError",
    "InternalError",
    "InvalidRequestError",
    "JailPolicy",
    "Page",
    "ProviderError",
    "ProviderNotConfiguredError",
    "ProviderResponseError",
    "ProviderUnavailableError",
    "RateLimitedError",
    "Redirect",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "Support",
    "URLRefusedError",
    "UnsupportedOptionError",
    "Usage",
    "WebSearch",
    "WebSearchError",
    "extract",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'websearch_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
