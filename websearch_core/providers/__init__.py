"""The providers, in the order ``auto`` tries them: cheapest first.

1. The plain indexes a key or URL enables (brave, tavily, mojeek, searxng): one request per
   search.
2. The keyless default (ddgs): free, but scraped, so slower and less steady.
3. The grounded vendors, whose model searches and answers, by documented price per search:
   openai ($10 per 1,000 calls plus tokens), anthropic ($10 per 1,000 searches plus the
   results as input tokens), gemini ($14 per 1,000 queries, several per prompt, after a free
   tier), openrouter (the underlying vendor's or engine's fee plus its own).

``auto`` takes the first configured provider that honours every requested option, so a
grounded provider runs only when no cheaper configured one can. Adding a provider is one
file here plus its cassette and test.
"""

from __future__ import annotations

from websearch_core.providers.anthropic import AnthropicProvider
from websearch_core.providers.base import BlockingProvider, HttpProvider, Provider, ProviderAnswer
from websearch_core.providers.brave import BraveProvider
from websearch_core.providers.ddgs import DdgsProvider
from websearch_core.providers.gemini import GeminiProvider
from websearch_core.providers.mojeek import MojeekProvider
from websearch_core.providers.openai import OpenAIProvider
from websearch_core.providers.openrouter import OpenRouterProvider
from websearch_core.providers.searxng import SearxngProvider
from websearch_core.providers.tavily import TavilyProvider

__all__ = [
    "GROUNDED",
    "PAID",
    "PROVIDERS",
    "BlockingProvider",
    "HttpProvider",
    "Provider",
    "ProviderAnswer",
]

PROVIDERS: dict[str, type[Provider]] = {
    provider.name: provider
    for provider in (
        BraveProvider,
        TavilyProvider,
        MojeekProvider,
        SearxngProvider,
        DdgsProvider,
        OpenAIProvider,
        AnthropicProvider,
        GeminiProvider,
        OpenRouterProvider,
    )
}
#: The providers whose results are an LLM vendor's citations.
GROUNDED = ("openai", "anthropic", "gemini", "openrouter")
#: The keyed providers a blend counts as paid engines (their vendor bills each search).
PAID = ("brave", "tavily", "mojeek")
