"""Who may use the service: the shared key, or a principal the operator's hook vouches for.

- Search takes the key as ``X-API-Key`` or as ``Authorization: Bearer`` (SearXNG clients can
  only set headers), either one that matches: a gateway may add its own Bearer beside the
  client's ``X-API-Key``. Firecrawl's scrape and search take it as a Bearer only (what
  Firecrawl clients send).
- No key configured (or only whitespace): 503, saying to set ``WEBSEARCH_API_KEY``. The
  service is never open because nobody configured it. A key read with surrounding whitespace
  (the newline a secrets file ends with) is stripped, and the start-up log says so.
- A missing or wrong key: 401. Keys are compared as SHA-256 digests with
  ``hmac.compare_digest``, so the time taken says nothing about the key's length or any
  prefix of it. A key is never logged, echoed or put in an error.
- ``principal``: the operator's hook, called with the request before any key check; a
  principal it returns (any non-empty string) is admitted without the key. A hook that raises
  admits nobody (logged by exception type only).
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request

__all__ = ["KEY_VARIABLE", "Gate", "Principal", "Refusal"]

logger = logging.getLogger("websearch_core.server")

KEY_VARIABLE = "WEBSEARCH_API_KEY"

#: The operator's hook: a request in, a principal's name (or ``None``) out; sync or async.
Principal = Callable[[Request], "str | Awaitable[str | None] | None"]


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    #: Whether the same request may succeed soon (a busy service), not after a change.
    retryable: bool = False


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


class Gate:
    """The key check. The principal hook is read from ``app.state.principal`` per request,
    so an operator may set it on the app at any time."""

    def __init__(self, key: str | None) -> None:
        stripped = key.strip() if key else ""
        #: The configured key had whitespace around it (stripped): said once, at start-up.
        self.key_was_padded = bool(stripped) and stripped != key
        self._key_digest = _digest(stripped) if stripped else None

    @property
    def has_key(self) -> bool:
        return self._key_digest is not None

    def __repr__(self) -> str:  # never the key, not even its digest
        return f"Gate(key={'set' if self._key_digest else 'unset'})"

    async def check(self, request: Request, *, bearer_only: bool) -> Refusal | None:
        """``None`` when the request may go on, else why not."""
        principal: Principal | None = getattr(request.app.state, "principal", None)
        if principal is not None and await _vouched(principal, request):
            return None
        if self._key_digest is None:
            return Refusal(
                503,
                f"the service has no key configured: the operator must set {KEY_VARIABLE} "
                "(it refuses every request until then)",
            )
        given = [_bearer(request.headers.get("authorization"))]
        if not bearer_only:
            given.append(request.headers.get("x-api-key", "").strip() or None)
        keys = [key for key in given if key]
        if not keys:
            where = "Authorization: Bearer <key>"
            if not bearer_only:
                where += " or X-API-Key: <key>"
            return Refusal(401, f"missing API key: send {where}")
        # Every credential given is compared (no early exit), each in constant time.
        matches = [hmac.compare_digest(_digest(key), self._key_digest) for key in keys]
        if not any(matches):
            return Refusal(401, "invalid API key")
        return None


async def _vouched(principal: Principal, request: Request) -> bool:
    try:
        found = principal(request)
        if inspect.isawaitable(found):
            found = await found
    except Exception as exc:
        logger.warning("principal hook failed (%s): request not admitted", type(exc).__name__)
        return False
    if isinstance(found, str) and found:
        request.state.log["principal"] = found
        return True
    return False


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, *rest = header.split(None, 1)
    token = rest[0].strip() if rest else ""
    return token or None if scheme.lower() == "bearer" else None
