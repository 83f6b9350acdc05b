"""The blend's engines: each ddgs backend and each configured provider that blends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from websearch_core.errors import ConfigurationError
from websearch_core.providers.base import Provider, Support
from websearch_core.providers.ddgs import DdgsProvider, text_backends

__all__ = [
    "DDGS_BACKENDS_UNSUPPORTED",
    "NO_SUCH_ENGINE",
    "Engine",
    "blend_engines",
    "ddgs_capabilities",
    "match_engines",
]

#: What each ddgs backend leaves out of the options ddgs takes, read from the installed ddgs
#: (9.16) engines' ``build_payload`` (the arguments each marks unused). A backend not listed
#: here is offered only plain searches: an option it may drop is never sent to it.
DDGS_BACKENDS_UNSUPPORTED: dict[str, frozenset[str]] = {
    "brave": frozenset(),
    "startpage": frozenset(),
    "duckduckgo": frozenset({"safesearch"}),
    "mojeek": frozenset({"freshness"}),
    "yahoo": frozenset({"country", "safesearch"}),
    # Encyclopedias: a site: filter or a date window has no meaning there.
    "wikipedia": frozenset(
        {"safesearch", "freshness", "page", "include_domains", "exclude_domains"}
    ),
    "grokipedia": frozenset(
        {"country", "safesearch", "freshness", "page", "include_domains", "exclude_domains"}
    ),
}

#: Why an engine asked for by name sat a search out.
NO_SUCH_ENGINE = "no engine of that name here"


@dataclass(frozen=True)
class Engine:
    """One engine of the blend: a provider, what it honours, and whether it costs money."""

    name: str
    provider: Provider
    capabilities: Mapping[str, Support]
    paid: bool = False


def ddgs_capabilities(backend: str, base: Mapping[str, Support]) -> dict[str, Support]:
    """ddgs's declared capabilities, less what this backend drops (everything, if unknown)."""
    dropped = DDGS_BACKENDS_UNSUPPORTED.get(backend, frozenset(base))
    return {
        option: Support.UNSUPPORTED if option in dropped else support
        for option, support in base.items()
    }


def every_engine(configured: Sequence[Provider], ddgs_installed: bool) -> list[Engine]:
    """Each ddgs backend (when ddgs is installed), then each configured provider whose class
    ``blends``; a blend never asks an engine for an answer of its own."""
    engines = []
    if ddgs_installed:
        for backend in text_backends():
            engines.append(
                Engine(
                    f"ddgs/{backend}",
                    DdgsProvider(backend),
                    ddgs_capabilities(backend, DdgsProvider.capabilities),
                )
            )
    for provider in configured:
        if provider.blends:
            capabilities = {**provider.capabilities, "include_answer": Support.UNSUPPORTED}
            engines.append(Engine(provider.name, provider, capabilities, paid=provider.paid))
    return engines


def blend_engines(
    configured: Sequence[Provider], ddgs_installed: bool, chosen: Sequence[str]
) -> list[Engine]:
    """The blend's engines here: every one (``every_engine``), or only those the operator's
    ``blend_engines`` setting names, when it names any."""
    engines = every_engine(configured, ddgs_installed)
    if not chosen:
        return engines
    names = [engine.name for engine in engines]
    if unknown := [name for name in chosen if name not in names]:
        raise ConfigurationError(
            f"blend_engines names {', '.join(map(repr, unknown))}, which is not an engine "
            f"here: choose among {', '.join(names) or 'none (install ddgs or set a key)'}"
        )
    return [engine for engine in engines if engine.name in chosen]


def match_engines(names: Sequence[str], here: Sequence[str]) -> tuple[list[str], list[str]]:
    """The engines here that ``names`` ask for, and the names that are none of them.

    A name is an engine's own (``brave``, ``ddgs/duckduckgo``) or the plain name of a search
    engine that a ddgs backend here reaches (``duckduckgo``, ``google``): what SearXNG's
    clients send (LibreChat asks for ``google,bing,duckduckgo``)."""
    matched: list[str] = []
    unknown: list[str] = []
    for name in names:
        engine = name if name in here else f"ddgs/{name}" if f"ddgs/{name}" in here else None
        if engine is None:
            unknown.append(name)
        elif engine not in matched:
            matched.append(engine)
    return matched, unknown
