"""The providers, in the order ``auto`` tries them: cheapest first.

1. The plain indexes a key or URL enables (brave, tavily, mojeek, searxng): one request per
   search.
2. The keyless default (ddgs): free, but scraped, so slower and less steady.
3. The grounded vendors, whose model searches and answers, by documented price per search:
   openai ($10 per 1,000 calls plus tokens), anthropic ($10 per 1,000 searches plus the
   results as input tokens), gemini ($14 per 1,000 queries, several per prompt, after a free
   tier), openrouter (the underlying vendor's or engine's fee plus its own).

``auto`` takes the first configured provider that honours every requested option, so a
grounded provider runs only when no cheaper configured one can.

What is true of a provider is said once, on its class: what turns it on (``enabled_by``,
``key_setting``), its base-URL setting, whether its vendor bills each search (``paid``),
whether it joins a blend (``blends``), whether it is a grounded vendor. Adding a provider is
its file here, one line in ``PROVIDERS``, its settings in ``config.py``, and its cassette and
test; ``tests/test_architecture.py`` names whatever of that is missing.
"""

from __future__ import annotations

from collections.abc import Callable

from websearch_core.config import Settings
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
    "configure",
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
GROUNDED = tuple(name for name, provider in PROVIDERS.items() if provider.grounded)
#: The providers a blend counts as paid engines (their vendor bills each search).
PAID = tuple(name for name, provider in PROVIDERS.items() if provider.paid)


def configure(
    settings: Settings, redact: Callable[[str], str] | None = None
) -> tuple[list[Provider], dict[str, str]]:
    """The providers these settings turn on, in ``auto``'s order, and for each of the
    others what is missing. ``redact`` takes every secret out of what an HTTP provider reads
    from its vendor, before it is parsed."""
    configured: list[Provider] = []
    unconfigured: dict[str, str] = {}
    for name, cls in PROVIDERS.items():
        missing = cls.missing(settings)
        if missing is not None:
            unconfigured[name] = missing
            continue
        provider = cls.from_settings(settings)
        if redact is not None and isinstance(provider, HttpProvider):
            provider.redact = redact
        configured.append(provider)
    return configured, unconfigured
