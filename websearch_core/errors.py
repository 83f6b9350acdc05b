"""Every failure websearch-pack can raise, in one place.

The tree::

    WebSearchError                      base; ``str(err)`` is a message a model can act on
    ├── ConfigurationError              the host application configured something wrong
    │   └── ProviderNotConfiguredError  the chosen provider has no key / URL / package
    ├── InvalidRequestError             the request itself is wrong (also a ``ValueError``)
    │   └── UnsupportedOptionError      the provider cannot honour an option; nothing was sent
    ├── ProviderError                   the provider was asked and the answer was a failure
    │   ├── AuthenticationError         the key was refused (401/403)
    │   ├── RateLimitedError            429 after one retry (``retry_after``), or quota spent
    │   ├── ProviderUnavailableError    5xx after one retry, timeout or network failure
    │   └── ProviderResponseError       the provider answered something we cannot use
    ├── FetchError                      a page could not be fetched (network, protocol, redirects)
    │   ├── FetchTimeoutError           the whole fetch, redirects included, ran past its deadline
    │   └── URLRefusedError             the URL jail said no (``reason``); nothing was sent
    └── InternalError                   something failed that the package did not foresee (a bug):
                                        the message names the operation; the traceback is logged
                                        at DEBUG level

Every message says what happened and what to do next, because the reader is usually a model
deciding its next step. No message, ``repr`` or attribute ever carries a credential: errors
are built from status codes, provider names and our own words, never from request headers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from websearch_core.models import EngineOutcome

__all__ = [
    "AuthenticationError",
    "ConfigurationError",
    "FetchError",
    "FetchTimeoutError",
    "InternalError",
    "InvalidRequestError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "ProviderResponseError",
    "ProviderUnavailableError",
    "RateLimitedError",
    "URLRefusedError",
    "UnsupportedOptionError",
    "WebSearchError",
    "install_hint",
]


def install_hint(extra: str) -> str:
    """How to install an extra, in words for the person who has to do it.

    Until a release is on the package index, the package installs from a clone of its
    repository (or its git URL); both spellings are given.
    """
    return (
        f"install the {extra} extra: pip install 'websearch-pack[{extra}]' "
        f"(from a clone of the repository: pip install -e '.[{extra}]')"
    )


class WebSearchError(Exception):
    """Base of every error the package raises."""

    #: Whether trying the same call again later may succeed.
    retryable: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def as_dict(self) -> dict[str, object]:
        """The error as JSON-able data, the one shape every JSON surface prints (the CLI's
        ``--json``, the service's typed door): its class, its message, whether trying again
        may help, and the fields a program branches on (``reason``, ``retry_after``)."""
        data: dict[str, object] = {
            "type": type(self).__name__,
            "message": str(self),
            "retryable": self.retryable,
        }
        for field in ("reason", "retry_after", "provider"):
            value = getattr(self, field, None)
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                data[field] = value
        return data


class ConfigurationError(WebSearchError):
    """The host application's configuration is wrong; the model cannot fix this itself."""


class ProviderNotConfiguredError(ConfigurationError):
    """A provider was requested that has no credential, URL or installed package."""

    def __init__(self, provider: str, missing: str) -> None:
        super().__init__(f"search provider {provider!r} is not configured: {missing}")
        self.provider = provider
        self.missing = missing


class InvalidRequestError(WebSearchError, ValueError):
    """The request is malformed; change the arguments and try again."""


class UnsupportedOptionError(InvalidRequestError):
    """A pinned provider cannot honour an option. Raised before any request is sent."""

    def __init__(
        self,
        provider: str,
        options: list[str],
        alternatives: list[str],
        *,
        detail: str | None = None,
    ) -> None:
        names = ", ".join(options)
        if provider == "auto":
            message = f"no configured provider honours {names} together: drop an option"
        elif alternatives:
            message = (
                f"provider {provider!r} cannot honour {names}: use "
                f"provider={alternatives[0]!r} (or 'auto'), or drop the option"
            )
        else:
            message = f"provider {provider!r} cannot honour {names}: drop the option"
        super().__init__(f"{message} ({detail})" if detail else message)
        self.provider = provider
        self.options = options
        self.alternatives = alternatives


class ProviderError(WebSearchError):
    """The provider was asked and answered with a failure."""

    def __init__(self, provider: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class AuthenticationError(ProviderError):
    """The provider refused the credential."""

    def __init__(self, provider: str, status: int | None = None) -> None:
        super().__init__(
            provider,
            f"{provider} refused the API key (HTTP {status}): the host application must set "
            "a valid key; retrying will not help",
            status=status,
        )


class RateLimitedError(ProviderError):
    """The provider is rate limiting us even after one retry, or the plan's quota is spent."""

    retryable = True

    def __init__(self, provider: str, retry_after: float | None, *, quota: bool = False) -> None:
        if quota:
            message = (
                f"{provider}'s usage quota is exhausted: searching again will not help until "
                "the host application raises the plan; answer from what you already have"
            )
        else:
            wait = f"wait {retry_after:g} s before searching again" if retry_after else "wait"
            message = (
                f"{provider} is rate limiting searches (HTTP 429): {wait}, "
                "or answer from what you already have"
            )
        super().__init__(provider, message, status=None if quota else 429)
        self.retry_after = retry_after
        self.quota = quota
        self.retryable = not quota


class ProviderUnavailableError(ProviderError):
    """The provider is down, slow or unreachable, even after one retry."""

    retryable = True

    def __init__(
        self,
        provider: str,
        reason: str,
        *,
        status: int | None = None,
        outcomes: Sequence[EngineOutcome] = (),
    ) -> None:
        super().__init__(
            provider,
            f"{provider} is unavailable ({reason}): try again later or use another provider",
            status=status,
        )
        #: A blend whose every engine was down: how each one failed.
        self.outcomes = tuple(outcomes)


class ProviderResponseError(ProviderError):
    """The provider answered, but not with anything usable."""


class FetchError(WebSearchError):
    """A page could not be fetched: the site, the network or the redirects failed."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class FetchTimeoutError(FetchError):
    """The fetch ran past its one deadline (redirects and slow bodies included)."""

    def __init__(self, deadline_s: float) -> None:
        super().__init__(
            f"the page did not arrive within {deadline_s:g} s (one deadline for the whole "
            "fetch, redirects included): try again later or use another source",
            retryable=True,
        )


class URLRefusedError(FetchError):
    """The URL jail refused a URL or an address before anything was sent to it.

    ``reason`` is a stable code for programs: ``scheme``, ``userinfo``, ``malformed``,
    ``port``, ``not_public``, ``metadata``, ``domain_denied`` or ``domain_not_allowed``. The
    message never names the address a host resolved to: that would hand the internal network's
    layout to whoever wrote the URL.
    """

    retryable = False

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class InternalError(WebSearchError):
    """An exception the package did not foresee escaped an operation: a bug, reported typed.

    The public entry points turn any such exception into this one, so an agent loop sees a
    tool failure it can route around instead of a crash. The message names the operation and
    the exception's type, never its text (which could echo a URL or a key); the traceback is
    logged at DEBUG level, with every configured secret redacted.
    """

    def __init__(self, operation: str, cause: BaseException) -> None:
        super().__init__(
            f"{operation} failed unexpectedly ({type(cause).__name__}): this is a bug in "
            "websearch-pack, not in the request; try another source, and report it with the "
            "DEBUG log"
        )
        self.operation = operation
        self.cause_type = type(cause).__name__
