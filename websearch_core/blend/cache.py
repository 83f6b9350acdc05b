"""A cache of blend answers that a server can share between sessions."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Hashable

from websearch_core.errors import ConfigurationError
from websearch_core.models import SearchResponse
from websearch_core.numeric import finite_number

__all__ = ["BlendCache"]


class BlendCache:
    """Blend answers by request, bounded in entries and age, safe from threads and tasks
    (the lock is held only for dictionary work, never across an await or a search).

    Separate from each session's memo: pass one to several sessions (``blend_cache=``) and
    an identical blend within ``ttl_s`` is answered once.
    """

    def __init__(self, max_entries: int = 256, ttl_s: float = 300.0) -> None:
        whole = isinstance(max_entries, int) and not isinstance(max_entries, bool)
        if not whole or max_entries < 1 or not finite_number(ttl_s, above=0):
            raise ConfigurationError(
                "a blend cache needs a whole number of entries, at least 1, and a TTL in "
                "seconds above 0"
            )
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._entries: OrderedDict[Hashable, tuple[float, SearchResponse]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> SearchResponse | None:
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            stored, response = entry
            if now - stored > self.ttl_s:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return response

    def put(self, key: Hashable, response: SearchResponse) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic(), response)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
