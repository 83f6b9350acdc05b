"""Settings: an explicit argument wins over the environment. Keys are ``SecretStr``.

| setting          | argument         | environment (first set wins)            |
|------------------|------------------|-----------------------------------------|
| provider         | ``provider``     | ``WEBSEARCH_PROVIDER``                  |
| Brave key        | ``brave_api_key``| ``BRAVE_API_KEY``, ``BRAVE_SEARCH_API_KEY`` |
| Tavily key       | ``tavily_api_key``| ``TAVILY_API_KEY``                     |
| SearXNG base URL | ``searxng_url``  | ``SEARXNG_URL``, ``SEARX_HOST``         |
| SearXNG door key | ``searxng_api_key`` | ``SEARXNG_API_KEY`` (sent as X-API-Key) |
| Brave base URL   | ``brave_base_url`` | ``BRAVE_BASE_URL``                    |
| Tavily base URL  | ``tavily_base_url`` | ``TAVILY_BASE_URL``                  |
| Mojeek key       | ``mojeek_api_key``  | ``MOJEEK_API_KEY``                    |
| blend deadline (s) | ``blend_timeout`` | ``WEBSEARCH_BLEND_TIMEOUT``           |
| blend's engines  | ``blend_engines``   | ``WEBSEARCH_BLEND_ENGINES`` (commas)  |
| Anthropic key    | ``anthropic_api_key`` | ``ANTHROPIC_API_KEY``               |
| OpenAI key       | ``openai_api_key``  | ``OPENAI_API_KEY``                    |
| OpenRouter key   | ``openrouter_api_key`` | ``OPENROUTER_API_KEY``             |
| Gemini key       | ``gemini_api_key``  | ``GEMINI_API_KEY``, ``GOOGLE_API_KEY`` |
| a vendor's model | ``<vendor>_model``  | ``WEBSEARCH_<VENDOR>_MODEL``          |
| a vendor's base URL | ``<vendor>_base_url`` | ``<VENDOR>_BASE_URL``             |
| search deadline (s) | ``timeout``   | ``WEBSEARCH_TIMEOUT``                   |
| provider answer ceiling | ``provider_max_bytes`` | ``WEBSEARCH_PROVIDER_MAX_BYTES`` |
| fetch ceiling    | ``fetch_max_bytes`` | ``WEBSEARCH_FETCH_MAX_BYTES``        |
| fetch deadline   | ``fetch_timeout``   | ``WEBSEARCH_FETCH_TIMEOUT``          |
| output budget    | ``output_chars``    | ``WEBSEARCH_OUTPUT_CHARS``           |
| allowed domains  | ``allow_domains``   | ``WEBSEARCH_ALLOW_DOMAINS`` (commas) |
| denied domains   | ``deny_domains``    | ``WEBSEARCH_DENY_DOMAINS`` (commas)  |
| fetch proxy      | ``fetch_proxy``     | ``WEBSEARCH_FETCH_PROXY``            |
| private fetches  | ``fetch_allow_private`` | ``WEBSEARCH_FETCH_ALLOW_PRIVATE`` (1/0) |
| bulk: pages fetched at once | ``fetch_concurrency`` | ``WEBSEARCH_FETCH_CONCURRENCY`` |
| bulk: conversion processes | ``convert_workers`` | ``WEBSEARCH_CONVERT_WORKERS`` (0: in-process) |
| bulk: at once per host | ``per_host_concurrency`` | ``WEBSEARCH_PER_HOST_CONCURRENCY`` |
| bulk: requests/s per host | ``per_host_rate`` | ``WEBSEARCH_PER_HOST_RATE`` |
| bulk: honour robots.txt | ``bulk_robots`` | ``WEBSEARCH_BULK_ROBOTS`` (1/0) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from websearch_core.domains import normalise_base_url
from websearch_core.models import DEFAULT_OUTPUT_CHARS
from websearch_core.redact import SecretURL, url_credentials

__all__ = ["ENVIRONMENT", "Settings"]

#: Which environment variables feed which setting, in order of precedence.
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "provider": ("WEBSEARCH_PROVIDER",),
    "brave_api_key": ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY"),
    "tavily_api_key": ("TAVILY_API_KEY",),
    "searxng_url": ("SEARXNG_URL", "SEARX_HOST"),
    "searxng_api_key": ("SEARXNG_API_KEY",),
    "blend_engines": ("WEBSEARCH_BLEND_ENGINES",),
    "brave_base_url": ("BRAVE_BASE_URL",),
    "tavily_base_url": ("TAVILY_BASE_URL",),
    "mojeek_api_key": ("MOJEEK_API_KEY",),
    "mojeek_base_url": ("MOJEEK_BASE_URL",),
    "blend_timeout": ("WEBSEARCH_BLEND_TIMEOUT",),
    "anthropic_api_key": ("ANTHROPIC_API_KEY",),
    "openai_api_key": ("OPENAI_API_KEY",),
    "openrouter_api_key": ("OPENROUTER_API_KEY",),
    "gemini_api_key": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "anthropic_base_url": ("ANTHROPIC_BASE_URL",),
    "openai_base_url": ("OPENAI_BASE_URL",),
    "openrouter_base_url": ("OPENROUTER_BASE_URL",),
    "gemini_base_url": ("GEMINI_BASE_URL",),
    "anthropic_model": ("WEBSEARCH_ANTHROPIC_MODEL",),
    "openai_model": ("WEBSEARCH_OPENAI_MODEL",),
    "openrouter_model": ("WEBSEARCH_OPENROUTER_MODEL",),
    "gemini_model": ("WEBSEARCH_GEMINI_MODEL",),
    "timeout": ("WEBSEARCH_TIMEOUT",),
    "provider_max_bytes": ("WEBSEARCH_PROVIDER_MAX_BYTES",),
    "fetch_max_bytes": ("WEBSEARCH_FETCH_MAX_BYTES",),
    "fetch_timeout": ("WEBSEARCH_FETCH_TIMEOUT",),
    "output_chars": ("WEBSEARCH_OUTPUT_CHARS",),
    "allow_domains": ("WEBSEARCH_ALLOW_DOMAINS",),
    "deny_domains": ("WEBSEARCH_DENY_DOMAINS",),
    "fetch_proxy": ("WEBSEARCH_FETCH_PROXY",),
    "fetch_allow_private": ("WEBSEARCH_FETCH_ALLOW_PRIVATE",),
    "fetch_concurrency": ("WEBSEARCH_FETCH_CONCURRENCY",),
    "convert_workers": ("WEBSEARCH_CONVERT_WORKERS",),
    "per_host_concurrency": ("WEBSEARCH_PER_HOST_CONCURRENCY",),
    "per_host_rate": ("WEBSEARCH_PER_HOST_RATE",),
    "bulk_robots": ("WEBSEARCH_BULK_ROBOTS",),
}


class Settings(BaseModel):
    """Resolved configuration of one ``WebSearch`` session."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str = "auto"
    brave_api_key: SecretStr | None = None
    tavily_api_key: SecretStr | None = None
    #: Mojeek's API takes its key in the URL's query: see providers/mojeek.py.
    mojeek_api_key: SecretStr | None = None
    #: For a SearXNG-shaped server behind a key (``websearch serve``): sent as ``X-API-Key``.
    searxng_api_key: SecretStr | None = None
    #: The engines a blend is made of, by name; empty: every engine configured here.
    blend_engines: tuple[str, ...] = ()
    #: Grounded vendors: a key turns the provider on; the model has a documented default
    #: (each provider's ``default_model``).
    anthropic_api_key: SecretStr | None = None
    openai_api_key: SecretStr | None = None
    openrouter_api_key: SecretStr | None = None
    gemini_api_key: SecretStr | None = None
    anthropic_model: str | None = None
    openai_model: str | None = None
    openrouter_model: str | None = None
    gemini_model: str | None = None
    #: Operator endpoints. A credential in one (``https://user:pass@host``) is a secret: shown
    #: masked, redacted from every message, and sent as a header, never in a URL.
    searxng_url: SecretURL | None = None
    brave_base_url: SecretURL | None = None
    tavily_base_url: SecretURL | None = None
    mojeek_base_url: SecretURL | None = None
    anthropic_base_url: SecretURL | None = None
    openai_base_url: SecretURL | None = None
    openrouter_base_url: SecretURL | None = None
    gemini_base_url: SecretURL | None = None
    #: One deadline for a whole search: connect, TLS, headers, body, the retry and its wait.
    timeout: float = Field(default=10.0, gt=0, le=120)
    #: One deadline for a whole blend: an engine silent by then is reported down (timeout).
    blend_timeout: float = Field(default=4.0, gt=0, le=60)
    #: A provider's answer is read like a page: decoded bytes up to this ceiling.
    provider_max_bytes: int = Field(default=5_000_000, ge=10_000, le=100_000_000)
    #: The longest ``Retry-After`` we sleep through before the one retry; a longer one is
    #: reported to the model instead, because a tool call should not hang for minutes.
    max_retry_wait: float = Field(default=5.0, ge=0, le=60)
    memo_size: int = Field(default=128, ge=0)
    fetch_max_bytes: int = Field(default=2_000_000, ge=1_000, le=10_000_000)
    fetch_timeout: float = Field(default=15.0, gt=0, le=120)
    fetch_max_redirects: int = Field(default=5, ge=0, le=10)
    output_chars: int = Field(default=DEFAULT_OUTPUT_CHARS, ge=1_000, le=200_000)
    allow_domains: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    #: None by default, and HTTP(S)_PROXY is never read for fetches: a proxy resolves names
    #: itself, so connections can no longer be pinned to the addresses the jail checked.
    #: Secret because a proxy URL often carries a password.
    fetch_proxy: SecretURL | None = None
    #: Fetches may reach loopback and private addresses (never metadata endpoints): for an
    #: intranet agent or local testing. Set by the operator; no tool argument reaches it.
    fetch_allow_private: bool = False
    #: Bulk reads (``fetch_many``, the loaders, readers and retriever, ``bulk.py``): pages on
    #: the network at once, and processes converting HTML at once (None: one per core; 0:
    #: in-process). Two settings because one is bound by latency, the other by cores.
    fetch_concurrency: int = Field(default=16, ge=1, le=1024)
    convert_workers: int | None = Field(default=None, ge=0, le=256)
    #: Politeness for bulk reads, per host within this process (None: no limit of its own).
    per_host_concurrency: int | None = Field(default=None, ge=1, le=1024)
    per_host_rate: float | None = Field(default=None, gt=0, le=10_000)
    #: Bulk reads skip what a site's robots.txt disallows; an agent's single fetch (a page a
    #: person or the model chose) never reads robots.txt.
    bulk_robots: bool = True

    @field_validator("allow_domains", "deny_domains", "blend_engines", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("provider")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()

    @field_validator("blend_engines")
    @classmethod
    def _engine_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(name.strip().lower() for name in value)  # as a search's engines= are read

    @field_validator(
        "brave_api_key",
        "tavily_api_key",
        "mojeek_api_key",
        "searxng_api_key",
        "anthropic_api_key",
        "openai_api_key",
        "openrouter_api_key",
        "gemini_api_key",
        mode="before",
    )
    @classmethod
    def _key(cls, value: object) -> object:
        """A key as read from a secrets file or the environment: surrounding whitespace (the
        file's last newline) is not part of it; blank is no key; a key holding anything but
        printable ASCII was not copied whole, and is refused (without being repeated)."""
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        if not isinstance(raw, str):
            return value
        key = raw.strip()
        if not key:
            return None
        if not (key.isascii() and key.isprintable()):
            raise ValueError(
                "the key holds characters no API key has (non-ASCII, or control characters): "
                "check it was copied whole"
            )
        return key

    @field_validator(
        "searxng_url",
        "brave_base_url",
        "tavily_base_url",
        "mojeek_base_url",
        "anthropic_base_url",
        "openai_base_url",
        "openrouter_base_url",
        "gemini_base_url",
        mode="before",
    )
    @classmethod
    def _base_url(cls, value: object) -> object:
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str):
            raise ValueError("give the base URL as a string, e.g. http://localhost:8080")
        return SecretURL(normalise_base_url(raw))

    @field_validator(
        "anthropic_model", "openai_model", "openrouter_model", "gemini_model", mode="before"
    )
    @classmethod
    def _model_name(cls, value: object) -> object:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str) or not value.strip().isprintable() or " " in value.strip():
            raise ValueError("give the model's name, such as 'claude-haiku-4-5'")
        return value.strip()

    @field_validator("fetch_proxy", mode="before")
    @classmethod
    def _proxy_url(cls, value: object) -> object:
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str) or not raw.strip().lower().startswith(("http://", "https://")):
            raise ValueError("the fetch proxy must be an http:// or https:// URL")
        return SecretURL(raw.strip())

    def secrets(self) -> list[str]:
        """Every secret value these settings hold, in the forms it could be echoed in."""
        found: list[str] = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretURL):
                found += url_credentials(value.get_secret_value())
            elif isinstance(value, SecretStr):
                found.append(value.get_secret_value())
        return found

    @classmethod
    def resolve(
        cls, explicit: Mapping[str, object], environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Settings from explicit arguments (``None`` means unset), then the environment."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for name in cls.model_fields:
            value = explicit.get(name)
            if value is None:
                value = next((env[var] for var in ENVIRONMENT.get(name, ()) if env.get(var)), None)
            if value is not None:
                values[name] = value
        return cls.model_validate(values)
