"""A search call, planned before anything is sent: validated, and routed to one provider
or to the blend, with the query that provider will be sent.

Every refusal a search can meet before the network happens here: an unknown option, a bad
value, a pinned provider that cannot honour an option, a blend none of whose engines can.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from websearch_core.blend.plan import BlendProvider
from websearch_core.blend.run import BlendSearch
from websearch_core.boundary import detached
from websearch_core.errors import (
    ConfigurationError,
    InvalidRequestError,
    ProviderNotConfiguredError,
    WebSearchError,
)
from websearch_core.models import SEARCH_OPTIONS, SearchRequest, argument_message
from websearch_core.providers import PROVIDERS, Provider
from websearch_core.providers.base import Support
from websearch_core.search.routing import choose_provider, localised, rewrite_query
from websearch_core.search.service import Routed

__all__ = ["CHOICES", "Planner"]

#: What ``provider=`` may name.
CHOICES = ("auto", "blend", *PROVIDERS)


class Planner:
    """Plans a session's searches: its configured providers, its blend, its pin."""

    def __init__(
        self,
        pin: str,
        configured: list[Provider],
        unconfigured: Mapping[str, str],
        blend: BlendProvider,
    ) -> None:
        self._configured = configured
        self._unconfigured = unconfigured
        self._blend = blend
        self.pinned = self.check_pin(pin)

    def check_pin(self, name: str) -> str | None:
        """The provider ``name`` pins (``None`` for ``auto``), or why it cannot be pinned."""
        if name == "auto":
            return None
        if name == "blend":
            if not self._blend.engines:
                raise ProviderNotConfiguredError(
                    "blend", "it has no engines: install the ddgs extra, or set a provider's key"
                )
            return name
        if name not in PROVIDERS:
            raise ConfigurationError(
                f"unknown search provider {name!r}: choose one of {', '.join(CHOICES)}"
            )
        if name in self._unconfigured:
            raise ProviderNotConfiguredError(name, self._unconfigured[name])
        return name

    def plan(self, query: object, options: Mapping[str, Any]) -> Routed | BlendSearch:
        """Validate, choose the provider (or the blend) and rewrite the query."""
        if unknown := sorted(name for name in options if name not in SEARCH_OPTIONS):
            raise InvalidRequestError(
                f"search has no option {unknown[0]!r}: its options are "
                f"{', '.join(sorted(SEARCH_OPTIONS))}"
            )
        args = dict(options)
        override = args.pop("provider", None)
        if override is not None and not isinstance(override, str):
            raise InvalidRequestError(
                f"provider must be a provider's name: one of {', '.join(CHOICES)}"
            )
        try:
            pin = self.pinned if override is None else self.check_pin(override.strip().lower())
        except ConfigurationError as exc:  # this call's choice, not the host's configuration
            raise InvalidRequestError(str(exc)) from None
        site, include = args.pop("site", None), args.pop("include_domains", None)
        if site:  # validation of whatever ``include`` is happens in SearchRequest
            many = isinstance(include, Iterable) and not isinstance(include, str)
            include = [site, *include] if many else [site, include]
            include = [domain for domain in include if domain is not None]
        try:
            request = SearchRequest.model_validate(
                {"query": query, **args, "include_domains": include}
            )
        except ValidationError as exc:
            raise InvalidRequestError(argument_message(exc)) from None
        if request.engines and pin != "blend":
            raise InvalidRequestError(
                "engines chooses among a blend's engines: search with provider='blend', or "
                "leave engines out"
            )
        if pin == "blend":
            self._blend.refuse_unservable(request)
            return BlendSearch(request, (pin, request))
        chosen = choose_provider(request, pin, self._configured)
        sent = localised(request, chosen.capabilities)
        return Routed(sent, chosen, rewrite_query(request, chosen.capabilities), (pin, request))

    def refusal_for(self, options: Mapping[str, Any]) -> WebSearchError | None:
        """The error a search with ``options`` would raise before sending anything, if any."""
        try:
            self.plan("probe", options)
        except WebSearchError as refusal:
            return detached(refusal)
        return None

    def honoured_options(self) -> frozenset[str]:
        """Options a search can use here: the pinned provider's, or (``auto``) those at
        least one configured provider honours, since routing will pick that one."""
        capabilities: list[Mapping[str, Support]]
        if self.pinned == "blend":
            capabilities = [self._blend.capabilities]
        else:
            capabilities = [
                p.capabilities for p in self._configured if self.pinned in (None, p.name)
            ]
        return frozenset(
            option
            for declared in capabilities
            for option, support in declared.items()
            if support is not Support.UNSUPPORTED
        )
