"""Reading pages as a step of an ``IngestionPipeline``, so that the pipeline distributes it.

A reader runs once, in the process that calls it: neither ``IngestionPipeline(num_workers=k)``
nor Ray-backed ingestion spreads a reader's work. A ``TransformComponent`` is what they
spread. ``WebPageFetch`` turns URL-only ``Document``s into fetched ones, so the reading runs
in every worker of the pipeline.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from llama_index.core.schema import BaseNode, Document, TransformComponent
from pydantic import Field, PrivateAttr, field_serializer

from llamaindex_websearch.readers import page_document
from websearch_core import Page, WebSearch, WebSearchError
from websearch_core.bulk import BulkConfig
from websearch_core.documents import ok_or_error

__all__ = ["WebPageFetch"]

logger = logging.getLogger(__name__)


class WebPageFetch(TransformComponent):
    """``Document(text="", metadata={"url": ...})`` → the page at that URL, as a document.

    Setup:
        ``pip install -e '.[llamaindex]'`` in a clone (``websearch-pack[llamaindex]`` once
        released).

    Use:
        .. code-block:: python

            from llama_index.core import Document
            from llama_index.core.ingestion import IngestionPipeline
            from llama_index.core.node_parser import SentenceSplitter
            from llamaindex_websearch import WebPageFetch

            urls = [Document(text="", metadata={"url": u}) for u in my_urls]
            pipeline = IngestionPipeline(transformations=[WebPageFetch(), SentenceSplitter()])
            nodes = pipeline.run(documents=urls, num_workers=2)  # reading in 2 processes

    A document with text, or without a ``url``, passes through unchanged. A fetched page gets
    the reader's text, metadata keys and deterministic id (``WebPageReader``), with the
    input's own metadata kept beside them. A URL that fails stays as its input document with
    ``fetch_error`` in its metadata and no text, and is logged at WARNING: filter on
    ``metadata.get("fetch_error")``. Reading honours ``robots.txt`` and the per-host limits
    of ``config`` (``websearch_core.bulk.BulkConfig``); each worker process builds its own
    session, once, on its first batch, and converts pages in that process (``num_workers`` is
    the parallelism). A pipeline's cache keeps what a run returned, failures included: pass
    ``IngestionPipeline(..., disable_cache=True)`` to read failed URLs again on the next run.
    """

    config: BulkConfig = Field(
        # Converted in each pipeline worker's own process: ``num_workers`` is the parallelism
        # (one conversion pool per worker would start num_workers x cores processes).
        default_factory=BulkConfig,
        description="How each worker reads (websearch_core.bulk.BulkConfig).",
    )
    _session: WebSearch | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "WebPageFetch"

    @field_serializer("config")
    def _config_without_keys(self, config: BulkConfig) -> str:
        # to_json / the pipeline's cache key: never the session keys it may carry.
        return repr(config)

    def __getstate__(self) -> dict[Any, Any]:
        state = super().__getstate__()
        # The session (sockets, worker processes) stays in the process that made it; the
        # pipeline's workers each make their own.
        state["__pydantic_private__"] = {"_session": None}
        return state

    def _wanted(self, node: BaseNode) -> str | None:
        url = node.metadata.get("url")
        if isinstance(node, Document) and isinstance(url, str) and not node.get_content():
            return url
        return None

    def _merged(self, node: BaseNode, outcome: Page | WebSearchError, url: str) -> BaseNode:
        settled = ok_or_error(outcome)
        if isinstance(settled, Page):
            document = page_document(settled)
            document.metadata = {**node.metadata, **document.metadata}
            return document
        logger.warning("could not load %s: %s", url, settled)
        failed = node.model_copy(deep=True)
        failed.metadata["fetch_error"] = str(settled)
        return failed

    def _session_for_use(self) -> WebSearch:
        if self._session is None:
            self._session = self.config.new_session()
        return self._session

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        wanted = [(index, url) for index, node in enumerate(nodes) if (url := self._wanted(node))]
        out = list(nodes)
        outcomes = self._session_for_use().fetch_many([url for _, url in wanted])
        for (index, url), (_, outcome) in zip(wanted, outcomes, strict=True):
            out[index] = self._merged(nodes[index], outcome, url)
        return out

    async def acall(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        wanted = [(index, url) for index, node in enumerate(nodes) if (url := self._wanted(node))]
        out = list(nodes)
        positions = iter(wanted)
        async for _, outcome in self._session_for_use().afetch_many([url for _, url in wanted]):
            index, url = next(positions)
            out[index] = self._merged(nodes[index], outcome, url)
        return out
