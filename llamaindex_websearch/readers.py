"""Web pages, and the pages a search finds, as LlamaIndex ``Document``s."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from llama_index.core.readers.base import BasePydanticReader
from llama_index.core.schema import Document
from pydantic import Field, PrivateAttr
from tqdm import tqdm  # type: ignore[import-untyped]

from websearch_core import FetchError, Page, SearchResponse, SearchResult, WebSearch, WebSearchError
from websearch_core.documents import (
    document_id,
    ok_or_error,
    page_metadata,
    passage_records,
    read_for_passages,
    result_metadata,
    url_list,
)
from websearch_core.models import DEFAULT_COUNT

__all__ = [
    "EXCLUDED_EMBED_METADATA_KEYS",
    "EXCLUDED_LLM_METADATA_KEYS",
    "WebDocument",
    "WebPageReader",
    "WebSearchReader",
    "page_document",
]

logger = logging.getLogger(__name__)

#: Kept out of the text that is embedded: only ``title`` and ``url`` say what a page is about;
#: the rest is bookkeeping that would pull unrelated pages together in vector space.
EXCLUDED_EMBED_METADATA_KEYS = (
    "final_url",
    "status",
    "content_type",
    "charset",
    "fetched_at",
    "truncated",
    "bytes_read",
    "rank",
    "snippet",
    "published",
    "provider",
    "fetch_error",
)
#: Kept out of what the LLM reads beside each chunk. It keeps ``title``, ``url``,
#: ``final_url`` (to cite), ``published`` and ``truncated`` (the page was cut at the read
#: ceiling); the snippet would repeat the page, the rest is transport detail.
EXCLUDED_LLM_METADATA_KEYS = (
    "status",
    "content_type",
    "charset",
    "fetched_at",
    "bytes_read",
    "rank",
    "snippet",
    "provider",
    "fetch_error",
)


class WebDocument(Document):
    """A ``Document`` whose ``hash`` leaves out ``fetched_at``.

    An ``IngestionPipeline`` with a docstore compares hashes to skip unchanged documents; the
    fetch time changes on every load, so with it in the hash an unchanged page would be split
    and embedded again on every run. Serialised, it is a plain ``Document``.
    """

    @property
    def hash(self) -> str:
        stable = {key: value for key, value in self.metadata.items() if key != "fetched_at"}
        identity = f"{self.text}\n{json.dumps(stable, sort_keys=True, default=str)}"
        return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()


def _document(doc_id: str, text: str, metadata: dict[str, Any]) -> Document:
    # ``text`` is an argument of Document.__init__, not a field, which a typed keyword
    # call on a subclass cannot say.
    fields: dict[str, Any] = {
        "id_": doc_id,
        "text": text,
        "metadata": metadata,
        "excluded_embed_metadata_keys": list(EXCLUDED_EMBED_METADATA_KEYS),
        "excluded_llm_metadata_keys": list(EXCLUDED_LLM_METADATA_KEYS),
    }
    return WebDocument(**fields)


def page_document(page: Page) -> Document:
    """A ``Document`` of a page: markdown text, the core's metadata keys, deterministic id."""
    return _document(document_id(page.final_url, page.content), page.content, page_metadata(page))


class _FailureReporting(BasePydanticReader):
    """What both readers share: failures logged and kept, or raised, and the progress bar."""

    is_remote: bool = True
    session: WebSearch = Field(default_factory=WebSearch, exclude=True)
    concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Pages fetched at once (None: the session's fetch_concurrency, 16).",
    )
    fail_on_error: bool = Field(
        default=False,
        description="Raise the first failure instead of logging it and keeping it in `failures`.",
    )
    show_progress: bool | None = Field(
        default=None,
        description="Show a progress bar; None shows one only when stderr is a terminal.",
    )

    _failures: list[tuple[str, str]] = PrivateAttr(default_factory=list)

    @property
    def failures(self) -> list[tuple[str, str]]:
        """``(url, message)`` for each URL the last load could not turn into a page."""
        return self._failures

    def _report(self, url: str, error: WebSearchError) -> None:
        if self.fail_on_error:
            raise error
        logger.warning("could not load %s: %s", url, error)
        self._failures.append((url, str(error)))

    def _progress(self, total: int, description: str) -> Any:
        show = sys.stderr.isatty() if self.show_progress is None else self.show_progress
        return tqdm(total=total, desc=description, unit="page", disable=not show)


class WebPageReader(_FailureReporting):
    """Load web pages as markdown ``Document``s: SSRF-safe, budgeted, bounded concurrency.

    Setup:
        ``pip install -e '.[llamaindex]'`` in a clone (``websearch-pack[llamaindex]`` once
        released) (add ``[pdf]`` to read PDFs). No key.

    Instantiate:
        .. code-block:: python

            from llamaindex_websearch import WebPageReader

            reader = WebPageReader()                    # public internet only

    Load:
        .. code-block:: python

            documents = reader.load_data(["https://go.dev/doc/go1.26", "https://go.dev/blog/"])
            documents = await reader.aload_data(urls)  # or: async for d in alazy_load_data(urls)
            documents[0].metadata
            # {'url': 'https://go.dev/doc/go1.26', 'final_url': 'https://go.dev/doc/go1.26',
            #  'title': 'Go 1.26 Release Notes', 'status': 200, 'content_type': 'text/html',
            #  'charset': 'utf-8', 'fetched_at': '2026-…+00:00', 'truncated': False,
            #  'bytes_read': 41213}

        Documents come in input order; the text is the page's main content as markdown. The
        id is derived from the final URL and the text, so reloading an unchanged page gives
        the same id (an ``IngestionPipeline`` with a docstore skips it). Only ``title`` and
        ``url`` are embedded; the LLM also sees ``final_url`` and ``truncated``.

        A URL that fails (refused by the URL jail, unreachable, an HTTP error status) is
        logged at WARNING and kept in ``reader.failures`` as ``(url, message)``; with
        ``fail_on_error=True`` it raises instead. Nothing is dropped silently.
        As a bulk read it honours each site's ``robots.txt`` (a disallowed URL is a failure
        saying so; ``WebSearch(bulk_robots=False)`` turns that off for URLs a person chose)
        and converts HTML on worker processes (``convert_workers``).

        ``load_data`` needs no event loop, so it also works inside one (Jupyter); the async
        methods fetch on the running loop, never through ``asyncio.run``.
    """

    @classmethod
    def class_name(cls) -> str:
        return "WebPageReader"

    def lazy_load_data(self, urls: list[str]) -> Iterator[Document]:
        """Fetch ``urls`` on up to ``concurrency`` threads, yielding documents in input order.

        Args:
            urls (list[str]): The pages to load (http or https).
        """
        urls = url_list(urls)
        self._failures = []
        with self._progress(len(urls), "Fetching pages") as bar:
            for url, outcome in self.session.fetch_many(urls, concurrency=self.concurrency):
                bar.update()
                settled = ok_or_error(outcome)
                if isinstance(settled, Page):
                    yield page_document(settled)
                else:
                    self._report(url, settled)

    def load_data(self, urls: list[str]) -> list[Document]:
        """Fetch ``urls`` and return their documents, in input order.

        Args:
            urls (list[str]): The pages to load (http or https).
        """
        return list(self.lazy_load_data(urls))

    # BaseReader's alazy_load_data is a coroutine returning a list built on a worker thread;
    # this one is an async generator on the running loop, yielding each page as it settles.
    async def alazy_load_data(self, urls: list[str]) -> AsyncIterator[Document]:  # type: ignore[override]
        """Fetch ``urls`` on the running event loop, up to ``concurrency`` at once.

        Args:
            urls (list[str]): The pages to load (http or https).
        """
        urls = url_list(urls)
        self._failures = []
        with self._progress(len(urls), "Fetching pages") as bar:
            async for url, outcome in self.session.afetch_many(urls, concurrency=self.concurrency):
                bar.update()
                settled = ok_or_error(outcome)
                if isinstance(settled, Page):
                    yield page_document(settled)
                else:
                    self._report(url, settled)

    async def aload_data(self, urls: list[str]) -> list[Document]:
        """``load_data`` on the running event loop.

        Args:
            urls (list[str]): The pages to load (http or https).
        """
        return [document async for document in self.alazy_load_data(urls)]


class WebSearchReader(_FailureReporting):
    """Query → web search → the top ``k`` pages, fetched, as ``Document``s.

    Setup:
        ``pip install -e '.[llamaindex,ddgs]'`` in a clone
        (``websearch-pack[llamaindex,ddgs]`` once released). With nothing else the keyless
        ddgs provider runs; set ``BRAVE_API_KEY``, ``TAVILY_API_KEY`` or ``SEARXNG_URL`` to
        add those providers (see docs/configuration.md).

    Instantiate:
        .. code-block:: python

            from llamaindex_websearch import WebSearchReader

            reader = WebSearchReader()
            reader = WebSearchReader(search_options={"site": "go.dev", "freshness": "year"})

    Load:
        .. code-block:: python

            documents = reader.load_data("go 1.26 release notes", k=3)
            documents[0].metadata["rank"], documents[0].metadata["snippet"]

        Each document carries the page keys (see ``WebPageReader``) plus ``rank``,
        ``snippet``, ``published`` and ``provider``. A result whose page cannot be fetched
        stays as its snippet, with ``fetch_error`` set, and is listed in ``reader.failures``;
        with ``fail_on_error=True`` it raises. A failed search always raises.

        ``WebSearchReader(passages=True)``: one document per passage that answers the query
        (a search that reads, ``WebSearch.search(read=)``: the first five results read, their
        best passages within ``read_tokens``), with ``section``, ``offset`` (where it starts
        in the page) and ``score`` beside the result's keys, instead of whole pages.
    """

    search_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Passed to WebSearch.search: site, freshness, exclude_domains, ….",
    )
    passages: bool = Field(
        default=False,
        description="Documents of the passages that answer the query, not whole pages.",
    )
    read_tokens: int | None = Field(
        default=None,
        description="With passages: their token budget (None: the session's read_tokens).",
    )

    @classmethod
    def class_name(cls) -> str:
        return "WebSearchReader"

    def _merge(
        self, result: SearchResult, provider: str, outcome: Page | WebSearchError
    ) -> Document:
        metadata = result_metadata(result, provider)
        settled = ok_or_error(outcome)
        if isinstance(settled, Page):
            page = page_document(settled)
            page.metadata = {**metadata, **page.metadata, "title": settled.title or result.title}
            return page
        self._report(result.url, settled)
        metadata["fetch_error"] = str(settled)
        return _document(
            document_id(result.url, result.snippet), result.snippet or result.title, metadata
        )

    def _passages(self, response: SearchResponse) -> list[Document]:
        documents = []
        for key, text, metadata, error in passage_records(response):
            if error is not None:
                self._report(metadata["url"], FetchError(error))
            documents.append(_document(key, text, metadata))
        return documents

    def _start(self, query: str, k: int) -> dict[str, Any]:
        """Forget the last load's failures; the search arguments for this one."""
        self._failures = []
        return {"query": query, **self.search_options, "count": k}

    def lazy_load_data(self, query: str, k: int = DEFAULT_COUNT) -> Iterator[Document]:
        """Search, then fetch the top ``k`` results' pages, yielding them in rank order.

        Args:
            query (str): What to search for.
            k (int): How many results to fetch, 1 to 10.
        """
        if self.passages:
            arguments = read_for_passages(k, self.read_tokens)
            yield from self._passages(self.session.search(**{**self._start(query, k), **arguments}))
            return
        # Whole pages: never the passages of a session that reads by default.
        response = self.session.search(**self._start(query, k), read=0)
        outcomes = self.session.fetch_many(_urls(response), concurrency=self.concurrency)
        with self._progress(len(response.results), "Fetching results") as bar:
            for result, (_, outcome) in zip(response.results, outcomes, strict=True):
                bar.update()
                yield self._merge(result, response.provider, outcome)

    def load_data(self, query: str, k: int = DEFAULT_COUNT) -> list[Document]:
        """Search, then fetch the top ``k`` results' pages.

        Args:
            query (str): What to search for.
            k (int): How many results to fetch, 1 to 10.
        """
        return list(self.lazy_load_data(query, k))

    async def alazy_load_data(  # type: ignore[override]
        self, query: str, k: int = DEFAULT_COUNT
    ) -> AsyncIterator[Document]:
        """``lazy_load_data`` on the running event loop.

        Args:
            query (str): What to search for.
            k (int): How many results to fetch, 1 to 10.
        """
        if self.passages:
            arguments = read_for_passages(k, self.read_tokens)
            read = await self.session.asearch(**{**self._start(query, k), **arguments})
            for document in self._passages(read):
                yield document
            return
        response = await self.session.asearch(**self._start(query, k), read=0)
        outcomes = self.session.afetch_many(_urls(response), concurrency=self.concurrency)
        results = iter(response.results)
        with self._progress(len(response.results), "Fetching results") as bar:
            async for _, outcome in outcomes:
                bar.update()
                yield self._merge(next(results), response.provider, outcome)

    async def aload_data(self, query: str, k: int = DEFAULT_COUNT) -> list[Document]:
        """``load_data`` on the running event loop.

        Args:
            query (str): What to search for.
            k (int): How many results to fetch, 1 to 10.
        """
        return [document async for document in self.alazy_load_data(query, k)]


def _urls(response: SearchResponse) -> Iterable[str]:
    return [result.url for result in response.results]
