"""A search routed to one provider: the memo, the drive under one deadline, the response.

The blend (``blend/run.py``) answers through the same memo and the same ``finish``, so a
repeated search is answered once whichever way it was routed.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from websearch_core.memo import Memo
from websearch_core.models import SearchRequest, SearchResponse
from websearch_core.providers.base import Provider, ProviderAnswer
from websearch_core.redact import Redactor
from websearch_core.search.answer import recalled, response_of
from websearch_core.search.drive import Driver

__all__ = ["Routed", "SearchService"]

logger = logging.getLogger("websearch_core")


@dataclass(frozen=True)
class Routed:
    """A search as planned, before anything is sent: the request as ``provider`` is sent
    it, the query it is sent (rewritten for its filters), and the memo key."""

    request: SearchRequest
    provider: Provider
    query: str
    key: tuple[Any, ...]


class SearchService:
    """``run``/``arun`` a routed search; ``recall`` and ``finish`` for the blend too."""

    def __init__(
        self, driver: Driver, memo: Memo[SearchResponse], redactor: Redactor, timeout: float
    ) -> None:
        self.driver = driver
        self.memo = memo
        self._redactor = redactor
        self._timeout = timeout  # one deadline for a whole search, its retry included

    def run(self, routed: Routed) -> SearchResponse:
        if (hit := self.recall(routed.key)) is not None:
            return hit
        started = time.perf_counter()
        deadline = time.monotonic() + self._timeout
        answer = self.driver.answer(
            routed.provider, routed.request, routed.query, deadline, self._timeout
        )
        return self.finish(
            routed.key, routed.request, routed.provider.name, routed.query, answer, started
        )

    async def arun(self, routed: Routed) -> SearchResponse:
        if (hit := self.recall(routed.key)) is not None:
            return hit
        started = time.perf_counter()
        deadline = time.monotonic() + self._timeout
        answer = await self.driver.aanswer(
            routed.provider, routed.request, routed.query, deadline, self._timeout
        )
        return self.finish(
            routed.key, routed.request, routed.provider.name, routed.query, answer, started
        )

    def recall(self, key: tuple[Any, ...]) -> SearchResponse | None:
        """The memo's answer to this search, if it holds one."""
        hit = self.memo.get(key)
        return None if hit is None else recalled(hit)

    def finish(
        self,
        key: tuple[Any, ...],
        request: SearchRequest,
        provider: str,
        query_sent: str,
        answer: ProviderAnswer,
        started: float,
    ) -> SearchResponse:
        """The response to ``answer``, logged and remembered."""
        elapsed_ms = (time.perf_counter() - started) * 1000
        response = response_of(request, provider, query_sent, answer, elapsed_ms, self._redactor)
        logger.info(
            "search provider=%s query=%r results=%d searches=%d requests=%d elapsed_ms=%.0f",
            provider,
            self._redactor.redact(query_sent),
            len(answer.results),
            response.usage.searches,
            response.usage.requests,
            elapsed_ms,
        )
        self.memo.put(key, response)
        return response
