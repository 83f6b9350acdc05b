"""The last line at every public entry point: only ``WebSearchError``s leave the package.

Each class of failure we know of is handled where it arises (a redirect to ``data:``, a
charset naming a non-text codec, a PDF that bombs its parser …). This is for the ones we do
not know of yet: an agent loop must see a tool failure it can route around, never a crash,
and nothing it reads may hold a configured secret. So:

- a ``WebSearchError`` passes, with any configured secret in its message redacted;
- any other ``Exception`` becomes an ``InternalError`` naming the operation and the
  exception's type, and its traceback is logged at DEBUG level, redacted;
- what leaves chains nothing: ``raise … from None`` only hides the exception it replaced
  from a printed traceback, and ``__context__`` still holds it — pydantic's ValidationError
  with a base URL's password, httpx's error with a proxy URL. A ``with`` block cannot drop
  it (whatever its exit raises is chained to the exception passing through), so the public
  methods are wrapped by ``public``/``apublic``, which raise the error again from outside
  any handler with its chain cut; errors handed back as values (a batch's failures) are cut
  with ``detached``.

``KeyboardInterrupt``, ``SystemExit`` and task cancellation are not ``Exception``s and pass.
"""

from __future__ import annotations

import functools
import inspect
import logging
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar

from websearch_core.errors import InternalError, InvalidRequestError, WebSearchError
from websearch_core.redact import Redactor

__all__ = ["apublic", "boundary", "detached", "misfit", "public"]

logger = logging.getLogger("websearch_core")

_NOTHING = Redactor(())

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E", bound=BaseException)


S = TypeVar("S", bound=Any)


def detached(error: E) -> E:
    """``error`` with nothing chained to it (what it replaced may hold a secret)."""
    error.__cause__ = None
    error.__context__ = None
    return error


@contextmanager
def boundary(operation: str, redactor: Redactor = _NOTHING) -> Iterator[None]:
    """Run the block as the public ``operation``; see the module docstring."""
    try:
        yield
    except WebSearchError as exc:
        detached(redactor.scrub(exc))
        raise
    except Exception as exc:
        if logger.isEnabledFor(logging.DEBUG):
            trace = "".join(traceback.format_exception(exc))
            logger.debug("%s failed unexpectedly:\n%s", operation, redactor.redact(trace))
        raise InternalError(operation, exc) from None


def misfit(
    operation: str, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> InvalidRequestError | None:
    """Why ``args``/``kwargs`` do not fit ``signature``, as our error, or ``None`` if they
    do. Only asked after a ``TypeError``, so a call that fits pays nothing for it: an unknown
    keyword is bad input, which says what the valid ones are, not a bug in the package."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        pass
    else:
        return None
    named = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    ]
    unknown = sorted(set(kwargs) - set(named))
    options = ", ".join(named) or "none"
    if unknown:
        return InvalidRequestError(
            f"{operation} has no argument {unknown[0]!r}: its arguments are {options}"
        )
    return InvalidRequestError(f"{operation} was called with arguments that do not fit: {options}")


def _redactor_of(owner: object) -> Redactor:
    redactor = getattr(owner, "_redactor", None)  # absent while a constructor is failing
    return redactor if isinstance(redactor, Redactor) else _NOTHING


def public(
    operation: str,
) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """A method as a public entry point: under ``boundary``, its error raised unchained."""

    def wrap(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        signature = inspect.signature(method)

        @functools.wraps(method)
        def guarded(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                with boundary(operation, _redactor_of(self)):
                    try:
                        return method(self, *args, **kwargs)
                    except TypeError:
                        misfitting = misfit(operation, signature, (self, *args), kwargs)
                        if misfitting is None:
                            raise
                        raise misfitting from None
            except WebSearchError as exc:
                failure = exc
            raise detached(failure)  # outside the handler: nothing is chained to it again

        return guarded

    return wrap


def apublic(
    operation: str,
) -> Callable[
    [Callable[Concatenate[S, P], Awaitable[R]]], Callable[Concatenate[S, P], Awaitable[R]]
]:
    """``public`` for a coroutine method."""

    def wrap(
        method: Callable[Concatenate[S, P], Awaitable[R]],
    ) -> Callable[Concatenate[S, P], Awaitable[R]]:
        signature = inspect.signature(method)

        @functools.wraps(method)
        async def guarded(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                with boundary(operation, _redactor_of(self)):
                    try:
                        return await method(self, *args, **kwargs)
                    except TypeError:
                        misfitting = misfit(operation, signature, (self, *args), kwargs)
                        if misfitting is None:
                            raise
                        raise misfitting from None
            except WebSearchError as exc:
                failure = exc
            raise detached(failure)

        return guarded

    return wrap
