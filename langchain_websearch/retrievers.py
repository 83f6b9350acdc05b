"""Search results (and optionally their pages) as LangChain ``Document``s."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from langchain_websearch.document_loaders import page_document
from websearch_core import Page, SearchResponse, WebSearch, WebSearchError
from websearch_core.documents import (
    document_id,
    ok_or_error,
    passage_records,
    read_for_passages,
    result_metadata,
)
from websearch_core.models import DEFAULT_COUNT

__all__ = ["WebSearchRetriever"]

logger = logging.getLogger(__name__)


class WebSearchRetriever(BaseRetriever):
    """Query → web search results as ``Document``s; optionally the top pages, fetched.

    Setup:
        ``pip install -e '.[langchain,ddgs]'`` in a clone
        (``websearch-pack[langchain,ddgs]`` once released); keys as for ``WebSearchTool``.

    Instantiate:
        .. code-block:: python

            from langchain_websearch import WebSearchRetriever

            retriever = WebSearchRetriever(k=5)                 # snippets only
            retriever = WebSearchRetriever(k=5, fetch_top=2)    # the first two as full pages
            retriever = WebSearchRetriever(k=3, passages=True)  # their passages for the query

    Invoke:
        .. code-block:: python

            docs = retriever.invoke("httpx retry transport")
            docs[0].metadata["rank"], docs[0].metadata["url"]

        Snippet documents carry ``url``, ``title``, ``rank``, ``snippet``, ``published`` and
        ``provider``. Fetched ones carry the page keys as well (see ``WebPageLoader``). A page
        that cannot be fetched stays as its snippet document with ``fetch_error`` set.
        With ``passages=True``, a document per passage that answers the query (a search that
        reads: ``WebSearch.search(read=)``, the first five results read, their best passages
        within ``read_tokens``), with ``section``, ``offset`` and ``score`` in its metadata.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: WebSearch = Field(default_factory=WebSearch)
    k: int = DEFAULT_COUNT
    fetch_top: int = 0
    search_options: dict[str, Any] = Field(default_factory=dict)
    passages: bool = False
    read_tokens: int | None = None

    def _passages(self, response: SearchResponse) -> list[Document]:
        documents = []
        for key, text, metadata, error in passage_records(response):
            if error is not None:
                logger.warning("could not read %s: %s", metadata["url"], error)
            documents.append(Document(id=key, page_content=text, metadata=metadata))
        return documents

    def _snippets(self, response: SearchResponse) -> list[Document]:
        return [
            Document(
                id=document_id(result.url, result.snippet),
                page_content=result.snippet or result.title,
                metadata=result_metadata(result, response.provider),
            )
            for result in response.results
        ]

    def _merge(self, snippet: Document, outcome: Page | WebSearchError) -> Document:
        settled = ok_or_error(outcome)
        if isinstance(settled, Page):
            page = page_document(settled)
            page.metadata = {**snippet.metadata, **page.metadata}
            return page
        logger.warning("could not fetch %s: %s", snippet.metadata["url"], settled)
        snippet.metadata["fetch_error"] = str(settled)
        return snippet

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.passages:
            read = read_for_passages(self.k, self.read_tokens)
            return self._passages(self.session.search(query, **self.search_options, **read))
        # Snippets or whole pages: never the passages of a session that reads by default.
        response = self.session.search(query, count=self.k, read=0, **self.search_options)
        documents = self._snippets(response)
        top = documents[: self.fetch_top]
        fetched = self.session.fetch_many([d.metadata["url"] for d in top])
        merged = [self._merge(d, outcome) for d, (_, outcome) in zip(top, fetched, strict=True)]
        return merged + documents[self.fetch_top :]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.passages:
            read = read_for_passages(self.k, self.read_tokens)
            return self._passages(await self.session.asearch(query, **self.search_options, **read))
        response = await self.session.asearch(query, count=self.k, read=0, **self.search_options)
        documents = self._snippets(response)
        top = documents[: self.fetch_top]
        urls = [d.metadata["url"] for d in top]
        outcomes = [outcome async for _, outcome in self.session.afetch_many(urls)]
        merged = [self._merge(d, outcome) for d, outcome in zip(top, outcomes, strict=True)]
        return merged + documents[self.fetch_top :]
