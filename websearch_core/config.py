"""Settings: an explicit argument wins over the environment. Keys are ``SecretStr``.

Each setting is declared once, below: its field, its bounds, its environment variables (the
first set wins) and the sentence the docs show. ``ENVIRONMENT`` and the docs' table
(``settings_table``) are read from those declarations; ``SettingsArguments`` is the same
names as ``WebSearch(**settings)`` takes them, and a test keeps the two in step.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, TypedDict
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, SecretStr

from websearch_core.domains import normalise_base_url
from websearch_core.models import (
    DEFAULT_OUTPUT_CHARS,
    DEFAULT_READ_TOKENS,
    MAX_READ,
    MAX_READ_TOKENS,
    MIN_READ_TOKENS,
)
from websearch_core.redact import url_credentials

__all__ = ["ENVIRONMENT", "SecretURL", "Settings", "SettingsArguments", "settings_table"]


class SecretURL(SecretStr):
    """An operator's URL that may carry credentials: shown with its userinfo masked.

    ``repr``, ``str`` and JSON show ``http://***@host:8888``; ``get_secret_value()`` is the
    real URL.
    """

    def _display(self) -> str:
        url = self.get_secret_value()
        try:
            parts = urlsplit(url)
            if parts.username is None and parts.password is None:
                return url
        except ValueError:
            return "**********"
        host = parts.netloc.rpartition("@")[2]
        return parts._replace(netloc=f"***@{host}").geturl()


# -- how each kind of value is read (from an argument, a secrets file or the environment) ---


def _unwrapped(value: object) -> object:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def _key(value: object) -> object:
    """A key: surrounding whitespace (a secrets file's last newline) is not part of it; blank
    is no key; a key holding anything but printable ASCII was not copied whole, and is
    refused (without being repeated)."""
    raw = _unwrapped(value)
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


def _base_url(value: object) -> object:
    raw = _unwrapped(value)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str):
        raise ValueError("give the base URL as a string, e.g. http://localhost:8080")
    return SecretURL(normalise_base_url(raw))


def _proxy_url(value: object) -> object:
    raw = _unwrapped(value)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str) or not raw.strip().lower().startswith(("http://", "https://")):
        raise ValueError("the fetch proxy must be an http:// or https:// URL")
    return SecretURL(raw.strip())


def _model_name(value: object) -> object:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str) or not value.strip().isprintable() or " " in value.strip():
        raise ValueError("give the model's name, such as 'claude-haiku-4-5'")
    return value.strip()


def _commas(value: object) -> object:
    """One string of names separated by commas (as the environment has them) as a tuple."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def _lowered(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(name.strip().lower() for name in names)  # as a search's engines= are read


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


#: An API key: a secret, blank is none.
Key = Annotated[SecretStr | None, BeforeValidator(_key)]
#: An operator endpoint. A credential in one (``https://user:pass@host``) is a secret: shown
#: masked, redacted from every message, and sent as a header, never in a URL.
BaseURL = Annotated[SecretURL | None, BeforeValidator(_base_url)]
ModelName = Annotated[str | None, BeforeValidator(_model_name)]
Names = Annotated[tuple[str, ...], BeforeValidator(_commas), AfterValidator(_lowered)]
Domains = Annotated[tuple[str, ...], BeforeValidator(_commas)]


def setting(default: Any, meaning: str, *env: str, shown: str | None = None, **bounds: Any) -> Any:
    """One setting's declaration: its default, what the docs say it means, the environment
    variables that set it (the first set wins), how the docs show the default (``shown``),
    and its bounds (``gt``, ``le`` ...)."""
    extra: dict[str, Any] = {"env": list(env)}
    if shown is not None:
        extra["shown"] = shown
    return Field(default, description=meaning, json_schema_extra=extra, **bounds)


class Settings(BaseModel):
    """Resolved configuration of one ``WebSearch`` session."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # -- search ----------------------------------------------------------------------------
    provider: Annotated[str, BeforeValidator(_lower)] = setting(
        "auto",
        "`auto`, `blend` (every engine at once), or pin `brave`, `tavily`, `mojeek`, "
        "`searxng`, `ddgs`, or a grounded vendor: `openai`, `anthropic`, `gemini`, `openrouter`",
        "WEBSEARCH_PROVIDER",
    )
    brave_api_key: Key = setting(
        None,
        "enables Brave (sent as `X-Subscription-Token`)",
        "BRAVE_API_KEY",
        "BRAVE_SEARCH_API_KEY",
    )
    tavily_api_key: Key = setting(None, "enables Tavily (sent as a Bearer token)", "TAVILY_API_KEY")
    mojeek_api_key: Key = setting(
        None,
        "enables Mojeek's API (its key travels in the URL's query: it is redacted from every "
        "log line, httpx's included, and from cassettes)",
        "MOJEEK_API_KEY",
    )
    searxng_url: BaseURL = setting(
        None,
        "base URL of a SearXNG/searx instance with JSON output on",
        "SEARXNG_URL",
        "SEARX_HOST",
    )
    searxng_api_key: Key = setting(
        None,
        "for a SearXNG-shaped server behind a key (`websearch serve`): sent as `X-API-Key`",
        "SEARXNG_API_KEY",
    )
    openai_api_key: Key = setting(None, "enables OpenAI's grounded search", "OPENAI_API_KEY")
    anthropic_api_key: Key = setting(
        None, "enables Anthropic's grounded search", "ANTHROPIC_API_KEY"
    )
    gemini_api_key: Key = setting(
        None, "enables Gemini's grounded search", "GEMINI_API_KEY", "GOOGLE_API_KEY"
    )
    openrouter_api_key: Key = setting(
        None, "enables OpenRouter's grounded search", "OPENROUTER_API_KEY"
    )
    openai_model: ModelName = setting(
        None,
        "OpenAI's model that searches and answers",
        "WEBSEARCH_OPENAI_MODEL",
        shown="its `default_model`",
    )
    anthropic_model: ModelName = setting(
        None,
        "Anthropic's model that searches and answers",
        "WEBSEARCH_ANTHROPIC_MODEL",
        shown="its `default_model`",
    )
    gemini_model: ModelName = setting(
        None,
        "Gemini's model that searches and answers",
        "WEBSEARCH_GEMINI_MODEL",
        shown="its `default_model`",
    )
    openrouter_model: ModelName = setting(
        None,
        "OpenRouter's model that searches and answers",
        "WEBSEARCH_OPENROUTER_MODEL",
        shown="its `default_model`",
    )
    brave_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for Brave; the API path is appended",
        "BRAVE_BASE_URL",
        shown="the vendor's",
    )
    tavily_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for Tavily",
        "TAVILY_BASE_URL",
        shown="the vendor's",
    )
    mojeek_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for Mojeek",
        "MOJEEK_BASE_URL",
        shown="the vendor's",
    )
    openai_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for OpenAI",
        "OPENAI_BASE_URL",
        shown="the vendor's",
    )
    anthropic_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for Anthropic",
        "ANTHROPIC_BASE_URL",
        shown="the vendor's",
    )
    gemini_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for Gemini",
        "GEMINI_BASE_URL",
        shown="the vendor's",
    )
    openrouter_base_url: BaseURL = setting(
        None,
        "a gateway or compatible endpoint for OpenRouter",
        "OPENROUTER_BASE_URL",
        shown="the vendor's",
    )
    timeout: float = setting(
        10.0,
        "one deadline in seconds for a whole search: connect, TLS, headers, body, the retry "
        "and its wait",
        "WEBSEARCH_TIMEOUT",
        gt=0,
        le=120,
    )
    provider_max_bytes: int = setting(
        5_000_000,
        "ceiling on a provider's decoded answer; a bigger one is an error, not a memory spike",
        "WEBSEARCH_PROVIDER_MAX_BYTES",
        ge=10_000,
        le=100_000_000,
    )
    max_retry_wait: float = setting(
        5.0,
        "the longest `Retry-After` to sleep through before the one retry; a longer one is "
        "reported to the model instead, because a tool call should not hang for minutes",
        ge=0,
        le=60,
    )
    memo_size: int = setting(
        128, "identical searches remembered per session (0 turns it off)", ge=0
    )
    search_read: int = setting(
        0,
        "how many of a search's top results are read for their best passages when the call "
        "does not say (`read=`); 0: the menu alone",
        "WEBSEARCH_SEARCH_READ",
        ge=0,
        le=MAX_READ,
    )
    read_tokens: int = setting(
        DEFAULT_READ_TOKENS,
        "the token budget of a search that reads: its menu and passages together, "
        "estimated to err high",
        "WEBSEARCH_READ_TOKENS",
        ge=MIN_READ_TOKENS,
        le=MAX_READ_TOKENS,
    )
    # -- the blend -------------------------------------------------------------------------
    blend_timeout: float = setting(
        4.0,
        "one deadline in seconds for a whole blend; an engine silent by then is `down (timeout)`",
        "WEBSEARCH_BLEND_TIMEOUT",
        gt=0,
        le=60,
    )
    blend_engines: Names = setting(
        (),
        "the engines a blend is made of, by name (commas in the environment)",
        "WEBSEARCH_BLEND_ENGINES",
        shown="every engine here",
    )
    # -- fetch -----------------------------------------------------------------------------
    fetch_max_bytes: int = setting(
        2_000_000,
        "read ceiling, counted on decoded bytes (`fetch(max_bytes=)` may go up to 10 MB)",
        "WEBSEARCH_FETCH_MAX_BYTES",
        ge=1_000,
        le=10_000_000,
    )
    fetch_timeout: float = setting(
        15.0,
        "one deadline in seconds for the whole fetch, redirects included",
        "WEBSEARCH_FETCH_TIMEOUT",
        gt=0,
        le=120,
    )
    fetch_max_redirects: int = setting(
        5, "redirect hops; loops are detected and named", ge=0, le=10
    )
    output_chars: int = setting(
        DEFAULT_OUTPUT_CHARS,
        "what `page.render()` may show; the middle is cut beyond it",
        "WEBSEARCH_OUTPUT_CHARS",
        ge=1_000,
        le=200_000,
    )
    allow_domains: Domains = setting(
        (),
        "if set, only these domains and their subdomains may be fetched (commas in the "
        "environment)",
        "WEBSEARCH_ALLOW_DOMAINS",
        shown="any",
    )
    deny_domains: Domains = setting(
        (),
        "these domains and their subdomains are refused, whatever `fetch_policy` says "
        "(commas in the environment)",
        "WEBSEARCH_DENY_DOMAINS",
        shown="none",
    )
    # HTTP(S)_PROXY is never read for fetches: a proxy resolves names itself, so connections
    # can no longer be pinned to the addresses the jail checked.
    fetch_proxy: Annotated[SecretURL | None, BeforeValidator(_proxy_url)] = setting(
        None,
        "an `http://` or `https://` proxy for fetches (a secret: it often carries a password); "
        "the jail can then no longer pin the addresses it checked",
        "WEBSEARCH_FETCH_PROXY",
    )
    fetch_allow_private: bool = setting(
        False,
        "also fetch loopback and private addresses (never metadata endpoints; `1` in the "
        "environment): for an intranet agent or local testing. The operator's setting: no "
        "tool argument reaches it",
        "WEBSEARCH_FETCH_ALLOW_PRIVATE",
        shown="off",
    )
    # -- bulk reads (fetch_many, the loaders, readers and retriever, bulk.py) ----------------
    # Two settings for the two stages: the network is bound by latency, conversion by cores.
    fetch_concurrency: int = setting(
        16,
        "bulk reads: pages on the network at once (`fetch_many(concurrency=)` per call)",
        "WEBSEARCH_FETCH_CONCURRENCY",
        ge=1,
        le=1024,
    )
    convert_workers: int | None = setting(
        None,
        "bulk reads: processes converting HTML to markdown; `0` converts in-process",
        "WEBSEARCH_CONVERT_WORKERS",
        shown="one per core",
        ge=0,
        le=256,
    )
    per_host_concurrency: int | None = setting(
        None,
        "bulk reads: requests at once to one host, within this process",
        "WEBSEARCH_PER_HOST_CONCURRENCY",
        shown="no limit",
        ge=1,
        le=1024,
    )
    per_host_rate: float | None = setting(
        None,
        "bulk reads: request starts per second to one host, within this process",
        "WEBSEARCH_PER_HOST_RATE",
        shown="no limit",
        gt=0,
        le=10_000,
    )
    bulk_robots: bool = setting(
        True,
        "bulk reads skip what a site's `robots.txt` disallows (`1`/`0` in the environment; "
        "`fetch_many(robots=)` per call); an agent's single fetch never reads robots.txt",
        "WEBSEARCH_BULK_ROBOTS",
        shown="on",
    )

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
        """Settings from explicit arguments (``None`` means unset), then the environment.

        A name that is no setting is refused with the nearest one (a ``ValueError``)."""
        if unknown := [name for name in explicit if name not in cls.model_fields]:
            near = difflib.get_close_matches(unknown[0], cls.model_fields, n=1)
            hint = f": did you mean {near[0]!r}?" if near else ": see the settings in the docs"
            raise ValueError(f"{unknown[0]!r} is not a setting{hint}")
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for name in cls.model_fields:
            value = explicit.get(name)
            if value is None:
                value = next((env[var] for var in ENVIRONMENT[name] if env.get(var)), None)
            if value is not None:
                values[name] = value
        return cls.model_validate(values)


def _extra(name: str) -> dict[str, Any]:
    extra = Settings.model_fields[name].json_schema_extra
    assert isinstance(extra, dict)
    return extra


#: Which environment variables feed which setting, in order of precedence.
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    name: tuple(_extra(name)["env"]) for name in Settings.model_fields
}


class SettingsArguments(TypedDict, total=False):
    """The settings as ``WebSearch(provider, **settings)`` takes them (``None``: read the
    environment): ``Settings``'s fields but ``provider``, the positional argument, as
    ``tests/test_architecture.py`` checks."""

    brave_api_key: str | SecretStr | None
    tavily_api_key: str | SecretStr | None
    mojeek_api_key: str | SecretStr | None
    searxng_url: str | SecretStr | None
    searxng_api_key: str | SecretStr | None
    openai_api_key: str | SecretStr | None
    anthropic_api_key: str | SecretStr | None
    gemini_api_key: str | SecretStr | None
    openrouter_api_key: str | SecretStr | None
    openai_model: str | None
    anthropic_model: str | None
    gemini_model: str | None
    openrouter_model: str | None
    brave_base_url: str | SecretStr | None
    tavily_base_url: str | SecretStr | None
    mojeek_base_url: str | SecretStr | None
    openai_base_url: str | SecretStr | None
    anthropic_base_url: str | SecretStr | None
    gemini_base_url: str | SecretStr | None
    openrouter_base_url: str | SecretStr | None
    timeout: float | None
    provider_max_bytes: int | None
    max_retry_wait: float | None
    memo_size: int | None
    search_read: int | None
    read_tokens: int | None
    blend_timeout: float | None
    blend_engines: Iterable[str] | None
    fetch_max_bytes: int | None
    fetch_timeout: float | None
    fetch_max_redirects: int | None
    output_chars: int | None
    allow_domains: Iterable[str] | None
    deny_domains: Iterable[str] | None
    fetch_proxy: str | SecretStr | None
    fetch_allow_private: bool | None
    fetch_concurrency: int | None
    convert_workers: int | None
    per_host_concurrency: int | None
    per_host_rate: float | None
    bulk_robots: bool | None


def how_to_set(name: str) -> str:
    """How an operator turns ``name`` on, in words that hold in every projection: its
    environment variable (a CLI, a service or an MCP server has no Python arguments; in code,
    the argument is the setting's own name, as the configuration table says)."""
    variables = ENVIRONMENT.get(name, ())
    if not variables:
        return f"pass {name}="
    also = f" or {variables[1]}" if name == "gemini_api_key" and len(variables) > 1 else ""
    return f"set {variables[0]}{also}"


def _shown_default(name: str) -> str:
    shown = _extra(name).get("shown")
    if shown is not None:
        return str(shown)
    default = Settings.model_fields[name].default
    if default is None:
        return "—"
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, float) and default.is_integer():
        default = int(default)
    return f"`{default}`"


def settings_table() -> str:
    """The docs' table of every setting, one row each, from the declarations above."""
    rows = [
        "| argument | environment (first set wins) | default | meaning |",
        "|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        env = ", ".join(f"`{var}`" for var in ENVIRONMENT[name]) or "—"
        rows.append(f"| `{name}` | {env} | {_shown_default(name)} | {field.description} |")
    return "\n".join(rows)
