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
import logging
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
    http_failure,
    said_number,
)
from websearch_core.reading.fanout import each_within
from websearch_core.reading.passages import Chunk, split_passages
from websearch_core.reading.ranking import query_terms, rank_passages
from websearch_core.reading.tokens import estimate_tokens
from websearch_core.render import PASSAGES_NOTE, render_search

if TYPE_CHECKING:
    from websearch_core.fetch.service import FetchService

__all__ = ["DEFAULT_READ_TOKENS", "MAX_READ", "ReadRequest", "SearchReader", "read_request"]

logger = logging.getLogger("websearch_core")

#: A passage whose estimate from its parts overshoots the budget by at most this many tokens
#: is tried on the whole text, at most ``_NEAR_MISSES`` times a search (each try renders it).
_NEAR = 48
_NEAR_MISSES = 2
#: Passages shown at most for one page, so one long page cannot take the whole budget.
PER_RESULT = 3


@dataclass(frozen=True)
class ReadRequest:
    """How many of the top results to read, and the token budget of the rendered answer."""

    read: int
    tokens: int


def _bounded(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestError(f"{name} must be a whole number from {low} to {high}")
    if not low <= value <= high:
        said = said_number(value)
        raise InvalidRequestError(f"{name} must be from {low:,} to {high:,}, not {said}")
    return value


def read_request(read: object, tokens: object) -> ReadRequest | None:
    """The checked request, or ``None`` for a plain search (``read=0``)."""
    count = _bounded("read", read, 0, MAX_READ)
    budget = _bounded("read_tokens", tokens, MIN_READ_TOKENS, MAX_READ_TOKENS)
    return ReadRequest(count, budget) if count else None


#: A page's outcome: the page, or the words that say why it was not read.
Outcome = Page | str
#: What of each page is split and ranked: its first this many characters (a page's answer is
#: rarely past them), so that the ranking of five 2 MB pages costs milliseconds, not seconds.
RANKED_CHARS = 200_000


def _failure(exc: BaseException) -> str:
    if isinstance(exc, WebSearchError):
        return str(exc)
    logger.warning("reading a page failed unexpectedly (%s)", type(exc).__name__)
    return f"the page could not be read (internal error: {type(exc).__name__})"


@dataclass(frozen=True)
class _Plan:
    """What a read fetches: each distinct URL of the top results once, and until when."""

    urls: list[str]
    budget_s: float
    timeout_s: float

    def timed_out(self) -> str:
        return f"not read within the search's {self.timeout_s:g} s deadline"


class SearchReader:
    """``read``/``aread``: a search's response, with the passages of its top results.

    The twins share everything but the waiting: ``_plan`` before the fetches, ``chosen``
    after (run on a thread by ``aread``: ranking is CPU work, never the event loop's).
    """

    def __init__(self, pages: FetchService, timeout_s: float) -> None:
        self._pages = pages
        self._timeout_s = timeout_s  # the search's one deadline, counted from the call

    def _plan(
        self, response: SearchResponse, asked: ReadRequest, deadline: float
    ) -> _Plan | SearchResponse:
        """The fetches to make, or the response as it is when nothing read could be shown."""
        refusal = _nothing_to_show(response, asked)
        if refusal is not None:
            return refusal
        urls = list(dict.fromkeys(result.url for result in response.results[: asked.read]))
        return _Plan(urls, max(0.0, deadline - time.monotonic()), self._timeout_s)

    def read(self, response: SearchResponse, asked: ReadRequest, deadline: float) -> SearchResponse:
        started = time.monotonic()
        plan = self._plan(response, asked, deadline)
        if isinstance(plan, SearchResponse):
            return plan
        outcomes: dict[str, Outcome] = {}
        if plan.urls and plan.budget_s > 0:  # no results: nothing to fetch, no pool to start
            pool = concurrent.futures.ThreadPoolExecutor(len(plan.urls), "websearch-read")
            try:
                futures = {
                    url: pool.submit(self._pages.fetch, url, None, 0, deadline_s=plan.budget_s)
                    for url in plan.urls
                }
                concurrent.futures.wait(futures.values(), timeout=plan.budget_s)
                for url, future in futures.items():
                    if future.done():
                        error = future.exception()
                        outcomes[url] = _failure(error) if error else future.result()
            finally:
                # A fetch still running ends by its own deadline (the same one); nobody waits.
                pool.shutdown(wait=False, cancel_futures=True)
        return chosen(response, asked, plan, outcomes, time.monotonic() - started)

    async def aread(
        self, response: SearchResponse, asked: ReadRequest, deadline: float
    ) -> SearchResponse:
        started = time.monotonic()
        plan = self._plan(response, asked, deadline)
        if isinstance(plan, SearchResponse):
            return plan

        async def one(url: str) -> Page:
            return await self._pages.afetch(url, None, 0, deadline_s=plan.budget_s)

        got = await each_within(plan.urls, one, plan.budget_s)
        outcomes = {url: _failure(o) if isinstance(o, Exception) else o for url, o in got.items()}
        read_s = time.monotonic() - started
        return await anyio.to_thread.run_sync(chosen, response, asked, plan, outcomes, read_s)


def _nothing_to_show(response: SearchResponse, asked: ReadRequest) -> SearchResponse | None:
    """The response with a note, when no passage could be shown whatever the pages hold: a
    menu longer than the budget on its own, or a query with no word to rank by. Said before
    anything is fetched, so nothing is fetched for nothing."""
    if not query_terms(response.query):
        note = "no passages: the query has no words to look for in the pages (only common words)"
    elif estimate_tokens(render_search(response)) > asked.tokens:
        note = (
            f"no passages: the menu alone takes more than read_tokens={asked.tokens:,}; "
            "ask for fewer results or a bigger budget"
        )
    else:
        return None
    read = min(asked.read, len(response.results))
    update = {"notes": [*response.notes, note], "read": read, "read_tokens": asked.tokens}
    return response.model_copy(update=update)


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
    response: SearchResponse,
    asked: ReadRequest,
    plan: _Plan,
    outcomes: dict[str, Outcome],
    read_s: float,
) -> SearchResponse:
    """``response`` with the passages that fit ``asked.tokens``, and each failure in place."""
    results = list(response.results)
    pages: dict[int, tuple[str, list[Chunk]]] = {}
    for index, result in enumerate(results[: asked.read]):
        outcome = outcomes.get(result.url, plan.timed_out())
        if isinstance(outcome, str):
            results[index] = result.model_copy(update={"read_error": outcome})
        elif not outcome.ok:
            results[index] = result.model_copy(update={"read_error": http_failure(outcome)})
        elif not (chunks := split_passages(outcome.content[:RANKED_CHARS])):
            results[index] = result.model_copy(update={"read_error": "the page has no text"})
        else:
            pages[result.rank] = (outcome.title or result.title, chunks)
    base = response.model_copy(
        update={
            "results": results,
            "read": min(asked.read, len(results)),
            "read_tokens": asked.tokens,
            "elapsed_ms": response.elapsed_ms + read_s * 1000,
        }
    )
    return _within_budget(base, asked.tokens, _candidates(response.query, pages))


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
) -> SearchResponse:
    """The response with as many passages as fit ``budget`` tokens of its rendered text
    (``_nothing_to_show`` has made sure the menu alone fits)."""
    used = estimate_tokens(render_search(base))
    # What a passage adds to the text, from its parts: its label, its words and a blank line;
    # a page's first also its fence, and the first of all the closing lines (fence note, how
    # to read on). The parts err both ways (a page's snippet goes when its passages come; a
    # line quoted as a marker or a label gains a mark), so a near miss is tried on the whole
    # text (a few at most, each a render), which recounts what is taken, and the check after
    # the loop has the last word.
    fence = estimate_tokens(
        "--- begin fetched content: passages of --- --- end fetched content ---"
    )
    closing = estimate_tokens(PASSAGES_NOTE) + 1
    urls = {result.rank: result.url for result in base.results}
    picked: dict[int, list[_Candidate]] = {}
    shown: set[str] = set()  # a passage already shown is not shown again (mirrors, syndication)
    near_misses = _NEAR_MISSES
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
        if used + cost <= budget:  # fits by its parts: taken (the check below has the last word)
            held.append(candidate)
            shown.add(said)
            used += cost
            continue
        if used + cost > budget + _NEAR or near_misses <= 0:
            continue
        near_misses -= 1  # a near miss: tried on the whole text, which also recounts it
        held.append(candidate)
        whole = estimate_tokens(_with(base, picked).render())
        if whole <= budget:
            shown.add(said)
            used = whole
        else:
            held.remove(candidate)
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
