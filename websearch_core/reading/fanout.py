"""Many pages at once under one deadline: each URL's outcome, a failure in its place.

The search that reads (``reader.SearchReader.aread``) and the service's Firecrawl search
(``server.app``, which scrapes every result) both wait this way: every URL started at once,
every one stopped at the deadline, none able to hold the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio

__all__ = ["each_within"]

T = TypeVar("T")


async def each_within(
    urls: Iterable[str],
    one: Callable[[str], Awaitable[T]],
    within_s: float,
    *,
    grace_s: float = 0.0,
) -> dict[str, T | Exception]:
    """``one(url)`` for each distinct URL at once; its result or the exception it raised, by
    URL. A URL not done ``within_s`` seconds (plus ``grace_s``, time to finish a conversion
    whose download made it) is cancelled and missing from the answer."""
    outcomes: dict[str, T | Exception] = {}

    async def run(url: str) -> None:
        try:
            outcomes[url] = await one(url)
        except Exception as exc:  # one page's failure is said in place, never the batch's
            outcomes[url] = exc

    distinct = list(dict.fromkeys(urls))
    if distinct and within_s > 0:
        with anyio.move_on_after(within_s + grace_s):
            async with anyio.create_task_group() as group:
                for url in distinct:
                    group.start_soon(run, url)
    return outcomes
