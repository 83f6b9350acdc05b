"""Web pages as LangChain ``Document``s, fetched through the URL jail."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from websearch_core import Page, WebSearch, WebSearchError
from websearch_core.documents import document_id, ok_or_error, page_metadata, url_list

__all__ = ["WebPageLoader", "page_document"]

logger = logging.getLogger(__name__)


def page_document(page: Page) -> Document:
    """A ``Document`` of a page: markdown content, stable metadata keys, deterministic id."""
    return Document(
        id=document_id(page.final_url, page.content),
        page_content=page.content,
        metadata=page_metadata(page),
    )


class WebPageLoader(BaseLoader):
    """Load web pages as markdown ``Document``s: SSRF-safe, budgeted, bounded concurrency.

    Setup:
        ``pip install -e '.[langchain]'`` in a clone (``websearch-pack[langchain]`` once
        released).

    Instantiate:
        .. code-block:: python

            from langchain_websearch import WebPageLoader

            loader = WebPageLoader(["https://go.dev/doc/go1.26", "https://go.dev/blog/"])

    Invoke:
        .. code-block:: python

            docs = loader.load()              # or lazy_load(), or: async for d in alazy_load()
            docs[0].metadata
            # {'url': 'https://go.dev/doc/go1.26', 'final_url': 'https://go.dev/doc/go1.26',
            #  'title': 'Go 1.26 Release Notes', 'status': 200, 'content_type': 'text/html',
            #  'charset': 'utf-8', 'fetched_at': '2026-…+00:00', 'truncated': False,
            #  'bytes_read': 41213}

        Documents come in input order. A URL that fails (refused, unreachable, HTTP error)
        is logged and kept in ``loader.failures`` as ``(url, message)``; with
        ``fail_on_error=True`` it raises instead. Nothing is dropped silently.
        As a bulk read it honours each site's ``robots.txt`` (a disallowed URL is a failure
        saying so; ``WebSearch(bulk_robots=False)`` turns that off for URLs a person chose)
        and converts HTML on worker processes (``convert_workers``).
    """

    def __init__(
        self,
        urls: str | Iterable[str],
        *,
        session: WebSearch | None = None,
        concurrency: int | None = None,
        fail_on_error: bool = False,
    ) -> None:
        self.urls = url_list(urls)
        self.session = session or WebSearch()
        self.concurrency = concurrency
        self.fail_on_error = fail_on_error
        self.failures: list[tuple[str, str]] = []

    def _document_or_failure(self, url: str, outcome: Page | WebSearchError) -> Document | None:
        error = ok_or_error(outcome)
        if isinstance(error, Page):
            return page_document(error)
        if self.fail_on_error:
            raise error
        logger.warning("could not load %s: %s", url, error)
        self.failures.append((url, str(error)))
        return None

    def lazy_load(self) -> Iterator[Document]:
        self.failures = []
        for url, outcome in self.session.fetch_many(self.urls, concurrency=self.concurrency):
            document = self._document_or_failure(url, outcome)
            if document is not None:
                yield document

    async def alazy_load(self) -> AsyncIterator[Document]:
        self.failures = []
        async for url, outcome in self.session.afetch_many(self.urls, concurrency=self.concurrency):
            document = self._document_or_failure(url, outcome)
            if document is not None:
                yield document
