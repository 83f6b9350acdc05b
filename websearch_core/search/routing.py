"""Which provider may serve a request, and how its query is rewritten.

Each provider declares, per option, whether it honours it natively, by a query operator
(``site:``), or not at all. A pinned provider refuses an unmet option before any request is
sent; ``auto`` takes the first configured provider that honours everything. Date filters are
never emulated by filtering results afterwards: that would break ``count`` and silently drop
every result whose date the provider omitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from websearch_core.config import ENVIRONMENT
from websearch_core.errors import (
    ConfigurationError,
    InvalidRequestError,
    UnsupportedOptionError,
    install_hint,
)
from websearch_core.providers import PROVIDERS
from websearch_core.providers.base import OPTIONS, Support

if TYPE_CHECKING:
    from websearch_core.models import SearchRequest
    from websearch_core.providers.base import Provider

__all__ = [
    "OPTIONS",
    "Support",
    "choose_provider",
    "localised",
    "rewrite_query",
    "unmet_by",
    "unmet_options",
]


_BY_OPERATOR = frozenset({"include_domains", "exclude_domains"})


def unmet_options(
    request: SearchRequest,
    capabilities: Mapping[str, Support],
    exclusive: Sequence[frozenset[str]] = (),
) -> list[str]:
    """The options ``request`` uses that these capabilities cannot honour; options in one
    ``exclusive`` set, used together, are one unmet entry (``"a with b"``)."""
    used = request.options_used()
    unmet = []
    for option in used:
        support = capabilities.get(option, Support.UNSUPPORTED)
        if support is Support.UNSUPPORTED or (
            support is Support.QUERY_OPERATOR and option not in _BY_OPERATOR
        ):
            unmet.append(option)
    for group in exclusive:
        together = [option for option in used if option in group]
        if len(together) > 1:
            unmet.append(" with ".join(together))
    return unmet


def unmet_by(request: SearchRequest, provider: Provider) -> list[str]:
    """``unmet_options`` for one provider's declarations."""
    return unmet_options(request, provider.capabilities, provider.exclusive_options)


def _too_long(request: SearchRequest, provider: Provider) -> int:
    """How long the query sent to ``provider`` would be, if over its limit; else 0."""
    sent = len(rewrite_query(request, provider.capabilities))
    return sent if sent > provider.max_query_chars else 0


def choose_provider(
    request: SearchRequest, pinned: str | None, configured: Sequence[Provider]
) -> Provider:
    """The provider that will serve ``request``; raises before anything is sent."""
    able = [p for p in configured if not unmet_by(request, p) and not _too_long(request, p)]
    if pinned is not None:
        provider = next((p for p in configured if p.name == pinned), None)
        if provider is None:
            raise ConfigurationError(f"search provider {pinned!r} is not configured")
        unmet = unmet_by(request, provider)
        if unmet:
            raise UnsupportedOptionError(pinned, unmet, [p.name for p in able])
        if length := _too_long(request, provider):
            raise InvalidRequestError(
                f"the query with its site: filters is {length:,} characters and {pinned} takes "
                f"at most {provider.max_query_chars:,}: use fewer domains or a shorter query"
            )
        return provider
    if not configured:
        raise ConfigurationError(_nothing_configured())
    if able:
        return able[0]
    gaps = "; ".join(_gap(request, p) for p in configured)
    raise UnsupportedOptionError("auto", request.options_used(), [], detail=gaps)


def _nothing_configured() -> str:
    """What turns each provider on, read from the providers' own declarations."""

    def variable(provider: type[Provider]) -> str:
        assert provider.enabled_by is not None
        return ENVIRONMENT[provider.enabled_by][0]

    plain = [variable(p) for p in PROVIDERS.values() if p.enabled_by and not p.grounded]
    grounded = [variable(p) for p in PROVIDERS.values() if p.enabled_by and p.grounded]
    keyless = [install_hint(p.name) for p in PROVIDERS.values() if p.enabled_by is None]
    return (
        f"no search provider is configured: set {', '.join(plain[:-1])} or {plain[-1]} "
        f"(or a grounded vendor's key: {', '.join(grounded)}), or for the keyless default, "
        f"{' or '.join(keyless)}"
    )


def _gap(request: SearchRequest, provider: Provider) -> str:
    unmet = unmet_by(request, provider)
    if unmet:
        return f"{provider.name} lacks {', '.join(unmet)}"
    return (
        f"{provider.name} takes queries of at most {provider.max_query_chars:,} characters "
        "with their site: filters"
    )


def localised(request: SearchRequest, capabilities: Mapping[str, Support]) -> SearchRequest:
    """The request as one provider takes it: its ``locale`` hint turned into the language and
    the region this provider honours (never over an explicit ``language`` or ``country``)."""
    if request.locale is None:
        return request
    language, _, region = request.locale.partition("-")
    update: dict[str, str | None] = {"locale": None}
    if request.language is None and capabilities.get("language") is Support.NATIVE:
        update["language"] = language
    if region and request.country is None and capabilities.get("country") is Support.NATIVE:
        update["country"] = region
    return request.model_copy(update=update)


def rewrite_query(request: SearchRequest, capabilities: Mapping[str, Support]) -> str:
    """The query to send, with ``site:`` operators for the domain filters done that way."""
    parts = [request.query]
    if capabilities.get("include_domains") is Support.QUERY_OPERATOR and request.include_domains:
        sites = [f"site:{domain}" for domain in request.include_domains]
        parts.append(sites[0] if len(sites) == 1 else "(" + " OR ".join(sites) + ")")
    if capabilities.get("exclude_domains") is Support.QUERY_OPERATOR:
        parts.extend(f"-site:{domain}" for domain in request.exclude_domains)
    return " ".join(parts)
