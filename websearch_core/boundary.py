"""The last line at every public entry point: only ``WebSearchError``s leave the package.

Each class of failure we know of is handled where it arises (a redirect to ``data:``, a
charset naming a non-text codec, a PDF that bombs its parser …). This is for the ones we do
not know of yet: an agent loop must see a tool failure it can route around, never a crash,
and nothing it reads may hold a configured secret. So:

- a ``WebSearchError`` passes, with any configured secret in its message redacted;
- any other ``Exception`` becomes an ``InternalError`` naming the operation and the
  exception's type, and its traceback is logged at DEBUG level, redacted.

``KeyboardInterrupt``, ``SystemExit`` and task cancellation are not ``Exception``s and pass.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from websearch_core.errors import InternalError, WebSearchError
from websearch_core.secrets import Redactor

__all__ = ["boundary"]

logger = logging.getLogger("websearch_core")

_NOTHING = Redactor(())


@contextmanager
def boundary(operation: str, redactor: Redactor = _NOTHING) -> Iterator[None]:
    """Run the block as the public ``operation``; see the module docstring."""
    try:
        yield
    except WebSearchError as exc:
        redactor.scrub(exc)
        raise
    except Exception as exc:
        if logger.isEnabledFor(logging.DEBUG):
            trace = "".join(traceback.format_exception(exc))
            logger.debug("%s failed unexpectedly:\n%s", operation, redactor.redact(trace))
        raise InternalError(operation, exc) from None
