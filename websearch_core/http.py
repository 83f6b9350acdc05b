"""The one path every provider request takes: send, one retry on 429/5xx, typed errors.

The decisions (``retry_delay``, ``error_for_status``) are pure functions of the response, so
the sync and async senders differ only in how they wait and send.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import time

import httpx

from websearch_core.errors import (
    AuthenticationError,
    ProviderError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
)
from websearch_core.providers.base import HttpProvider

__all__ = ["asend", "error_for_status", "retry_after_seconds", "retry_delay", "send"]

#: Wait before the retry when a 429/5xx carries no Retry-After.
DEFAULT_RETRY_WAIT = 1.0
_EXCERPT_CHARS = 200


def retry_after_seconds(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or HTTP-date), or ``None`` if absent/garbled."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


def retry_delay(response: httpx.Response, cap: float) -> float | None:
    """Seconds to wait before the one retry, or ``None`` if this response is not retried.

    A ``Retry-After`` longer than ``cap`` is not slept through: the error reports it instead.
    """
    if response.status_code != 429 and response.status_code < 500:
        return None
    wait = retry_after_seconds(response)
    if wait is None:
        return min(DEFAULT_RETRY_WAIT, cap)
    return wait if wait <= cap else None


def error_for_status(provider: HttpProvider, response: httpx.Response) -> ProviderError:
    """The typed error for a failed response. Built from the status and body, never headers."""
    specific = provider.error_for(response)
    if specific is not None:
        return specific
    status = response.status_code
    if status in (401, 403):
        return AuthenticationError(provider.name, status)
    if status == 429:
        return RateLimitedError(provider.name, retry_after_seconds(response))
    if status >= 500:
        return ProviderUnavailableError(provider.name, f"HTTP {status}", status=status)
    excerpt = " ".join(response.text[:_EXCERPT_CHARS].split())
    return ProviderResponseError(
        provider.name,
        f"{provider.name} rejected the request (HTTP {status}: {excerpt or response.reason_phrase})"
        ": change the query or options",
        status=status,
    )


def _transport_error(
    provider: HttpProvider, exc: httpx.TransportError, timeout: float
) -> ProviderError:
    if isinstance(exc, httpx.TimeoutException):
        return ProviderUnavailableError(provider.name, f"no answer within {timeout:g} s")
    # The exception text can hold the URL; a provider URL never holds a key, but say less anyway.
    return ProviderUnavailableError(provider.name, f"network error: {type(exc).__name__}")


def _with_client_headers(client: httpx.Client | httpx.AsyncClient, request: httpx.Request) -> None:
    """Providers build bare requests; give them the client's defaults (User-Agent, encodings)."""
    for name, value in client.headers.items():
        request.headers.setdefault(name, value)


def send(
    client: httpx.Client,
    provider: HttpProvider,
    request: httpx.Request,
    *,
    cap: float,
    timeout: float,
) -> httpx.Response:
    """Send with one retry on 429/5xx; return a 2xx response or raise a ``ProviderError``."""
    _with_client_headers(client, request)
    for attempt in (1, 2):
        try:
            response = client.send(request)
            response.read()
        except httpx.TransportError as exc:
            raise _transport_error(provider, exc, timeout) from None
        if response.is_success:
            return response
        delay = retry_delay(response, cap) if attempt == 1 else None
        if delay is None:
            raise error_for_status(provider, response)
        time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


async def asend(
    client: httpx.AsyncClient,
    provider: HttpProvider,
    request: httpx.Request,
    *,
    cap: float,
    timeout: float,
) -> httpx.Response:
    """``send`` for the event loop."""
    _with_client_headers(client, request)
    for attempt in (1, 2):
        try:
            response = await client.send(request)
            await response.aread()
        except httpx.TransportError as exc:
            raise _transport_error(provider, exc, timeout) from None
        if response.is_success:
            return response
        delay = retry_delay(response, cap) if attempt == 1 else None
        if delay is None:
            raise error_for_status(provider, response)
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover
