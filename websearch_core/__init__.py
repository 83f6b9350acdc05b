"""websearch-pack's framework-neutral core: web search (and page fetch) for LLM agents.

from websearch_core import WebSearch
ws = WebSearch()                       # arguments, then environment
print(ws.search("go 1.26 release notes", site="go.dev").render())
"""

from websearch_core.errors import (
    AuthenticationError,
    ConfigurationError,
    InvalidRequestError,
    ProviderError,
    ProviderNotConfiguredError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
    UnsupportedOptionError,
    WebSearchError,
)
from websearch_core.models import EngineOutcome, SearchRequest, SearchResponse, SearchResult
from websearch_core.routing import Support
from websearch_core.session import WebSearch

__all__ = [
    "AuthenticationError",
    "ConfigurationError",
    "EngineOutcome",
    "InvalidRequestError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "ProviderResponseError",
    "ProviderUnavailableError",
    "RateLimitedError",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "Support",
    "UnsupportedOptionError",
    "WebSearch",
    "WebSearchError",
]

__version__ = "0.1.0"
