"""The one path every provider request takes: send, one retry on 429/5xx, typed errors.

One deadline (the session's ``timeout``) covers the whole search, the retry and its wait
included: a retry whose wait would end past it is not made, and the error is reported at
once. The body is read like a page's (``body.py``): decoded bytes up to a ceiling, bounded
decompression, so an endless or bomb-shaped answer cannot grow the process.

The decisions (``retry_delay``, ``error_for_status``) are pure functions of the response, so
the sync and async senders differ only in how they wait and send.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import threading
import time

import anyio
import httpx

from websearch_core.errors import (
    AuthenticationError,
    FetchError,
    ProviderError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
)
from websearch_core.net.body import ACCEPT_ENCODING, BoundedBody, aread_bounded, read_bounded
from websearch_core.net.deadline import deadline_scope
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
    # Redacted before it is cut, so a cut cannot keep part of a key the provider echoed.
    excerpt = " ".join(provider.redact(response.text)[:_EXCERPT_CHARS].split())
    return ProviderResponseError(
        provider.name,
        f"{provider.name} rejected the request (HTTP {status}: {excerpt or response.reason_phrase})"
        ": change the query or options",
        status=status,
    )


# The waits before a retry, by name: tests record them here instead of patching the process's
# own ``time.sleep`` (which every other thread of the test run would then stop sleeping in).
_sleep = time.sleep
_asleep = anyio.sleep


def _transport_error(
    provider: HttpProvider, exc: httpx.TransportError, timeout: float
) -> ProviderError:
    if isinstance(exc, httpx.TimeoutException):
        return ProviderUnavailableError(provider.name, f"no answer within {timeout:g} s")
    # The exception text can hold the URL; a provider URL never holds a key, but say less anyway.
    return ProviderUnavailableError(provider.name, f"network error: {type(exc).__name__}")


def _prepared(
    client: httpx.Client | httpx.AsyncClient, request: httpx.Request, remaining: float
) -> httpx.Request:
    """Providers build bare requests; give them the client's defaults (User-Agent), only the
    encodings we can bound, and the time left as every timeout."""
    for name, value in client.headers.items():
        request.headers.setdefault(name, value)
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    request.extensions["timeout"] = httpx.Timeout(remaining).as_dict()
    return request


def _settled(
    provider: HttpProvider,
    response: httpx.Response,
    body: BoundedBody | FetchError,
    max_bytes: int,
) -> httpx.Response:
    """The response with its decoded body in memory, for the provider's pure decoder.

    A failure status decides, whatever its body: a 429 whose body is junk, cut at the
    ceiling or in an encoding that does not decode is still rate limiting (its body is then
    left out). A success whose body cannot be read is an unreadable answer, with its status.
    """
    unreadable = isinstance(body, FetchError) or body.truncated
    if unreadable and response.is_success:
        why = (
            f"answered with more than {max_bytes:,} bytes: the search was abandoned; check "
            "the provider's base URL or raise provider_max_bytes"
            if isinstance(body, BoundedBody)
            else f"answered with a body that could not be read ({body})"
        )
        raise ProviderResponseError(
            provider.name, f"{provider.name} {why}", status=response.status_code
        )
    content = b"" if isinstance(body, FetchError) or body.truncated else bytes(body.data)
    # As bytes: a header's value may be any octets (UTF-8, Latin-1), and text would have to
    # be encoded again as ASCII.
    headers = [
        (name, value)
        for name, value in response.headers.raw
        if name.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
    ]
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=content,
        request=response.request,
        extensions=response.extensions,
    )


def _retry_wait(response: httpx.Response, attempt: int, cap: float, deadline: float) -> float:
    """Seconds to wait before retrying, or -1 if ``response`` is the final answer."""
    delay = retry_delay(response, cap) if attempt == 1 else None
    if delay is None or time.monotonic() + delay >= deadline:
        return -1.0
    return delay


def send(
    client: httpx.Client,
    provider: HttpProvider,
    request: httpx.Request,
    *,
    cap: float,
    seconds: float,
    max_bytes: int,
    deadline: float | None = None,
    slots: threading.Semaphore | None = None,
) -> httpx.Response:
    """Send with one retry on 429/5xx, all within ``seconds``; return a 2xx response
    with a body of at most ``max_bytes`` decoded bytes, or raise a ``ProviderError``.

    ``deadline`` (``time.monotonic()`` clock), when given, is the end of a search that takes
    several calls; ``seconds`` is then its whole length, as the error messages say it. Each
    attempt holds one of ``slots`` (the provider's, ``bulkheads.py``) until its body is read,
    waiting for one no longer than the deadline."""
    if deadline is None:
        deadline = time.monotonic() + seconds
    if deadline <= time.monotonic():
        raise ProviderUnavailableError(provider.name, f"no answer within {seconds:g} s")
    with deadline_scope(deadline):
        for attempt in (1, 2):
            if slots is not None and not slots.acquire(timeout=deadline - time.monotonic()):
                raise ProviderUnavailableError(provider.name, f"no answer within {seconds:g} s")
            try:
                prepared = _prepared(client, request, deadline - time.monotonic())
                streamed = client.send(prepared, stream=True)
                try:
                    body: BoundedBody | FetchError = read_bounded(streamed, max_bytes)
                except FetchError as exc:  # an encoding we did not offer, a corrupt body
                    body = exc
                finally:
                    streamed.close()
            except httpx.TransportError as exc:
                raise _transport_error(provider, exc, seconds) from None
            finally:
                if slots is not None:
                    slots.release()
            response = _settled(provider, streamed, body, max_bytes)
            if response.is_success:
                return response
            wait = _retry_wait(response, attempt, cap, deadline)
            if wait < 0:
                raise error_for_status(provider, response)
            _sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


async def asend(
    client: httpx.AsyncClient,
    provider: HttpProvider,
    request: httpx.Request,
    *,
    cap: float,
    seconds: float,
    max_bytes: int,
    deadline: float | None = None,
    slots: anyio.Semaphore | None = None,
) -> httpx.Response:
    """``send`` for the event loop; the cancel scope also holds a client passed in, and a
    cancelled wait for a slot takes none."""
    if deadline is None:
        deadline = time.monotonic() + seconds
    if deadline <= time.monotonic():
        raise ProviderUnavailableError(provider.name, f"no answer within {seconds:g} s")
    try:
        with anyio.fail_after(deadline - time.monotonic()), deadline_scope(deadline):
            for attempt in (1, 2):
                async with slots or contextlib.nullcontext():
                    try:
                        prepared = _prepared(client, request, deadline - time.monotonic())
                        streamed = await client.send(prepared, stream=True)
                        try:
                            body: BoundedBody | FetchError = await aread_bounded(
                                streamed, max_bytes
                            )
                        except FetchError as exc:
                            body = exc
                        finally:
                            await streamed.aclose()
                    except httpx.TransportError as exc:
                        raise _transport_error(provider, exc, seconds) from None
                response = _settled(provider, streamed, body, max_bytes)
                if response.is_success:
                    return response
                wait = _retry_wait(response, attempt, cap, deadline)
                if wait < 0:
                    raise error_for_status(provider, response)
                await _asleep(wait)
    except TimeoutError:
        raise ProviderUnavailableError(provider.name, f"no answer within {seconds:g} s") from None
    raise AssertionError("unreachable")  # pragma: no cover
