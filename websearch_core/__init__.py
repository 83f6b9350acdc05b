"""websearch-pack's framework-neutral core: web search (and page fetch) for LLM agents.

from websearch_core import WebSearch
ws = WebSearch()                       # arguments, then environment
print(ws.search("go 1.26 release notes", site="go.dev").render())
"""

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
from websearch_core.extract import ExtractedDocument, extract
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
