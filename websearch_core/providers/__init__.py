"""The providers, in the order ``auto`` tries them: keyed indexes first, the keyless default
last. Adding a provider is one file here plus its cassette and test."""

from __future__ import annotations

from websearch_core.providers.base import BlockingProvider, HttpProvider, Provider, ProviderAnswer
from websearch_core.providers.brave import BraveProvider
from websearch_core.providers.ddgs import DdgsProvider
from websearch_core.providers.searxng import SearxngProvider
from websearch_core.providers.tavily import TavilyProvider

__all__ = [
    "PROVIDERS",
    "BlockingProvider",
    "HttpProvider",
    "Provider",
    "ProviderAnswer",
]

PROVIDERS: dict[str, type[Provider]] = {
    provider.name: provider
    for provider in (BraveProvider, TavilyProvider, SearxngProvider, DdgsProvider)
}
