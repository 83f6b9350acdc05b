"""A stand-in for ``ddgs.DDGS``. A fake, because ddgs talks to public search engines through
its own Rust HTTP client with hard-wired hosts: nothing real can answer it on loopback.

Tests install it with ``monkeypatch.setattr("ddgs.DDGS", FakeDDGS)`` and script it through
class attributes; every call is recorded with the thread it ran on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["DdgsCall", "FakeDDGS"]


@dataclass
class DdgsCall:
    query: str
    options: dict[str, Any]
    timeout: int | None
    thread: int


class FakeDDGS:
    calls: ClassVar[list[DdgsCall]] = []
    results: ClassVar[list[dict[str, Any]]] = []
    error: ClassVar[Exception | None] = None
    delay_s: ClassVar[float] = 0.0
    #: Per backend (a blend's engines): what ``text(..., backend=name)`` does instead, a
    #: callable given the query that returns the results or raises.
    backends: ClassVar[dict[str, Callable[[str], list[dict[str, Any]]]]] = {}

    def __init__(self, proxy: str | None = None, timeout: int | None = 5, **_: Any) -> None:
        self._timeout = timeout

    @classmethod
    def reset(cls, results: list[dict[str, Any]] | None = None) -> None:
        cls.calls = []
        cls.results = results or []
        cls.error = None
        cls.delay_s = 0.0
        cls.backends = {}

    def text(self, query: str, **options: Any) -> list[dict[str, Any]]:
        type(self).calls.append(DdgsCall(query, options, self._timeout, threading.get_ident()))
        scripted = self.backends.get(options.get("backend", ""))
        if scripted is not None:
            return scripted(query)
        if self.delay_s:
            time.sleep(self.delay_s)  # as ddgs does: it blocks its caller
        if self.error is not None:
            raise self.error
        return list(self.results)
