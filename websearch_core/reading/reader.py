"""A search that reads: the top results' pages fetched at once, under the search's deadline,
and their best passages for the query chosen within a token budget.

``WebSearch.search(query, read=3)`` searches as usual (any provider, the blend), then
fetches the top ``read`` results through the URL jail and the page memo (``FetchService``,
as ``web_fetch`` does: a later ``web_fetch`` with a passage's ``offset`` reads on from the
memo), splits each page into passages (``passages.py``), ranks them all against the query
(``ranking.py``) and keeps, within ``read_tokens`` of the rendered text (``tokens.py``),
each page's best passage, then the best of the rest, at most ``PER_RESULT`` a page. A page
that could not be read keeps its snippet and says why, in place; the others are unaffected.
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from websearch_core.errors import InvalidRequestError, WebSearchError
from websearch_core.models import (
    DEFAULT_READ_TOKENS,
    MAX_READ,
    MAX_READ_TOKENS,
    MIN_READ_TOKENS,
    Page,
    Passage,
    SearchResponse,
)
from websearch_core.reading.passages import Chunk, split_passages
from websearch_core.reading.ranking import rank_passages
from websearch_core.reading.tokens import estimate_tokens
from websearch_core.render import PASSAGES_NOTE, render_search

if TYPE_CHECKING:
    from websearch_core.fetch.service import FetchService

__all__ = ["DEFAULT_READ_TOKENS", "MAX_READ", "ReadRequest", "SearchReader", "read_request"]

#: Passages shown at most for one page, so one long page cannot take the whole budget.
PER_RESULT = 3


@dataclass(frozen=True)
class ReadRequest:
    """How many of the top results to read, and the token budget of the rendered answer."""

    read: int
    tokens: int


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestError(f"{name} must be a whole number from {low} to {high}")
    if not low <= value <= high:
        raise InvalidRequestError(f"{name} must be from {low:,} to {high:,}, not {value:,}")
    return value


def read_request(read: object, tokens: object) -> ReadRequest | None:
    """The checked request, or ``None`` for a plain search (``read=0``)."""
    count = _whole("read", read, 0, MAX_READ)
    budget = _whole("read_tokens", tokens, MIN_READ_TOKENS, MAX_READ_TOKENS)
    return ReadRequest(count, budget) if count else None


#: A page's outcome: the page, or the words that say why it was not read.
Outcome = Page | str


def _failure(exc: BaseException) -> str:
    if isinstance(exc, WebSearchError):
        return str(exc)
    return f"the page could not be read (internal error: {type(exc).__name__})"


def _timed_out(deadline_s: float) -> str:
    return f"not read within the search's {deadline_s:g} s deadline"


class SearchReader:
    """``read``/``aread``: a search's response, with the passages of its top results."""

    def __init__(self, pages: FetchService) -> None:
        self._pages = pages

    def read(self, response: SearchResponse, asked: ReadRequest, deadline: float) -> SearchResponse:
        started = time.monotonic()
        budget_s = max(0.0, deadline - started)
        urls = [result.url for result in response.results[: asked.read]]
        outcomes: list[Outcome] = [_timed_out(budget_s)] * len(urls)
        if urls and budget_s > 0:
            pool = concurrent.futures.ThreadPoolExecutor(len(urls), "websearch-read")
            try:
                futures = [
                    pool.submit(self._pages.fetch, url, None, 0, deadline_s=budget_s)
                    for url in urls
                ]
                concurrent.futures.wait(futures, timeout=budget_s)
                for index, future in enumerate(futures):
                    if future.done():
                        error = future.exception()
                        outcomes[index] = _failure(error) if error else future.result()
            finally:
                # A fetch still running ends by its own deadline (the same one); nobody waits.
                pool.shutdown(wait=False, cancel_futures=True)
        return chosen(response, asked, outcomes, time.monotonic() - started)

    async def aread(
        self, response: SearchResponse, asked: ReadRequest, deadline: float
    ) -> SearchResponse:
        started = time.monotonic()
        budget_s = max(0.0, deadline - started)
        urls = [result.url for result in response.results[: asked.read]]
        outcomes: list[Outcome] = [_timed_out(budget_s)] * len(urls)

        async def one(index: int, url: str) -> None:
            try:
                outcomes[index] = await self._pages.afetch(url, None, 0, deadline_s=budget_s)
            except Exception as exc:  # one page's failure is said in place, never the batch's
                outcomes[index] = _failure(exc)

        if urls and budget_s > 0:
            with anyio.move_on_after(budget_s):
                async with anyio.create_task_group() as group:
                    for index, url in enumerate(urls):
                        group.start_soon(one, index, url)
        return chosen(response, asked, outcomes, time.monotonic() - started)


@dataclass(frozen=True)
class _Candidate:
    rank: int
    chunk: Chunk
    score: float


def _candidates(query: str, pages: dict[int, tuple[str, list[Chunk]]]) -> list[_Candidate]:
    """The passages of the pages read that hold some of the query's words, scored, in the
    order they are offered to the budget: each page's best first, the best of those first,
    then the rest from the best down. A page without one keeps its snippet: its lead would
    spend the budget on words the query did not ask for.

    Measured (``benchmarks/search_read.py``, 119 questions): offering the pages' bests in rank
    order, leads included, lost 5 answers on the third result to a distractor's byline.
    """
    flat = [(rank, title, chunk) for rank, (title, chunks) in pages.items() for chunk in chunks]
    scores = rank_passages(query, [f"{t}\n{c.section}\n{c.text}" for _, t, c in flat])
    scored = [
        _Candidate(rank, chunk, score)
        for (rank, _, chunk), score in zip(flat, scores, strict=True)
        if score > 0
    ]
    order = sorted(scored, key=lambda c: (-c.score, c.rank, c.chunk.start))
    firsts: dict[int, _Candidate] = {}
    for candidate in order:
        firsts.setdefault(candidate.rank, candidate)
    chosen = set(map(id, firsts.values()))
    return [*firsts.values(), *(c for c in order if id(c) not in chosen)]


def _passage(candidate: _Candidate) -> Passage:
    chunk = candidate.chunk
    return Passage(
        text=chunk.text, offset=chunk.start, section=chunk.section, score=round(candidate.score, 4)
    )


def chosen(
    response: SearchResponse, asked: ReadRequest, outcomes: list[Outcome], read_s: float
) -> SearchResponse:
    """``response`` with the passages that fit ``asked.tokens``, and each failure in place."""
    results = list(response.results)
    pages: dict[int, tuple[str, list[Chunk]]] = {}
    for index, outcome in enumerate(outcomes):
        result = results[index]
        if isinstance(outcome, str):
            results[index] = result.model_copy(update={"read_error": outcome})
        elif not outcome.ok:
            error = f"HTTP {outcome.status} {outcome.reason}".strip()
            results[index] = result.model_copy(update={"read_error": error})
        elif not (chunks := split_passages(outcome.content)):
            results[index] = result.model_copy(update={"read_error": "the page has no text"})
        else:
            pages[result.rank] = (outcome.title or result.title, chunks)
    base = response.model_copy(
        update={
            "results": results,
            "read": asked.read,
            "read_tokens": asked.tokens,
            "elapsed_ms": response.elapsed_ms + read_s * 1000,
        }
    )
    picked = _within_budget(base, asked.tokens, _candidates(response.query, pages))
    if picked is None:
        note = (
            f"no passages: the menu alone takes more than read_tokens={asked.tokens:,}; "
            "ask for fewer results or a bigger budget"
        )
        return base.model_copy(update={"notes": [*base.notes, note]})
    return picked


def _with(base: SearchResponse, picked: dict[int, list[_Candidate]]) -> SearchResponse:
    results = [
        r.model_copy(
            update={
                "passages": tuple(
                    _passage(c) for c in sorted(picked[r.rank], key=lambda c: c.chunk.start)
                )
            }
        )
        if picked.get(r.rank)
        else r
        for r in base.results
    ]
    return base.model_copy(update={"results": results})


def _within_budget(
    base: SearchResponse, budget: int, candidates: list[_Candidate]
) -> SearchResponse | None:
    """The response with as many passages as fit ``budget`` tokens of its rendered text."""
    used = estimate_tokens(render_search(base))
    if used > budget:
        return None
    # What a passage adds to the text: its label, its words and a blank line; a page's
    # first also its fence, and the first of all the closing lines (fence note, how to read
    # on). Overestimated (the quoting of a marker-like line adds one mark), then checked.
    fence = estimate_tokens(
        "--- begin fetched content: passages of --- --- end fetched content ---"
    )
    closing = estimate_tokens(PASSAGES_NOTE) + 1
    urls = {result.rank: result.url for result in base.results}
    picked: dict[int, list[_Candidate]] = {}
    shown: set[str] = set()  # a passage already shown is not shown again (mirrors, syndication)
    for candidate in candidates:
        held = picked.setdefault(candidate.rank, [])
        chunk = candidate.chunk
        said = " ".join(chunk.text.casefold().split())
        if len(held) >= PER_RESULT or said in shown:
            continue
        cost = estimate_tokens(f"[{candidate.rank}] {chunk.section} (offset={chunk.start})")
        cost += estimate_tokens(chunk.text) + 1
        if not held:
            cost += fence + estimate_tokens(urls[candidate.rank])
        if not any(picked.values()):
            cost += closing
        if used + cost <= budget:
            held.append(candidate)
            shown.add(said)
            used += cost
    response = _with(base, picked)
    # The estimate of the whole text decides: drop the weakest passage until it fits.
    while estimate_tokens(response.render()) > budget and any(picked.values()):
        weakest = min(
            (c for held in picked.values() for c in held),
            key=lambda c: (c.score, -c.rank, -c.chunk.start),
        )
        picked[weakest.rank].remove(weakest)
        response = _with(base, picked)
    return response
