"""Settings: an explicit argument wins over the environment. Keys are ``SecretStr``.

| setting          | argument         | environment (first set wins)            |
|------------------|------------------|-----------------------------------------|
| provider         | ``provider``     | ``WEBSEARCH_PROVIDER``                  |
| Brave key        | ``brave_api_key``| ``BRAVE_API_KEY``, ``BRAVE_SEARCH_API_KEY`` |
| Tavily key       | ``tavily_api_key``| ``TAVILY_API_KEY``                     |
| SearXNG base URL | ``searxng_url``  | ``SEARXNG_URL``, ``SEARX_HOST``         |
| timeout (s)      | ``timeout``      | ``WEBSEARCH_TIMEOUT``                   |
| fetch ceiling    | ``fetch_max_bytes`` | ``WEBSEARCH_FETCH_MAX_BYTES``        |
| fetch deadline   | ``fetch_timeout``   | ``WEBSEARCH_FETCH_TIMEOUT``          |
| output budget    | ``output_chars``    | ``WEBSEARCH_OUTPUT_CHARS``           |
| allowed domains  | ``allow_domains``   | ``WEBSEARCH_ALLOW_DOMAINS`` (commas) |
| denied domains   | ``deny_domains``    | ``WEBSEARCH_DENY_DOMAINS`` (commas)  |
| fetch proxy      | ``fetch_proxy``     | ``WEBSEARCH_FETCH_PROXY``            |
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from websearch_core.domains import normalise_base_url
from websearch_core.models import DEFAULT_OUTPUT_CHARS

__all__ = ["ENVIRONMENT", "Settings"]

#: Which environment variables feed which setting, in order of precedence.
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "provider": ("WEBSEARCH_PROVIDER",),
    "brave_api_key": ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY"),
    "tavily_api_key": ("TAVILY_API_KEY",),
    "searxng_url": ("SEARXNG_URL", "SEARX_HOST"),
    "timeout": ("WEBSEARCH_TIMEOUT",),
    "fetch_max_bytes": ("WEBSEARCH_FETCH_MAX_BYTES",),
    "fetch_timeout": ("WEBSEARCH_FETCH_TIMEOUT",),
    "output_chars": ("WEBSEARCH_OUTPUT_CHARS",),
    "allow_domains": ("WEBSEARCH_ALLOW_DOMAINS",),
    "deny_domains": ("WEBSEARCH_DENY_DOMAINS",),
    "fetch_proxy": ("WEBSEARCH_FETCH_PROXY",),
}


class Settings(BaseModel):
    """Resolved configuration of one ``WebSearch`` session."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str = "auto"
    brave_api_key: SecretStr | None = None
    tavily_api_key: SecretStr | None = None
    searxng_url: str | None = None
    timeout: float = Field(default=10.0, gt=0, le=120)
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
    fetch_proxy: SecretStr | None = None

    @field_validator("allow_domains", "deny_domains", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("provider")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()

    @field_validator("brave_api_key", "tavily_api_key", mode="before")
    @classmethod
    def _blank_key_is_no_key(cls, value: object) -> object:
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        return None if isinstance(raw, str) and not raw.strip() else value

    @field_validator("searxng_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return normalise_base_url(value) if value and value.strip() else None

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
