"""A fetched page as a document for pipelines: stable id, stable metadata keys.

Both the LangChain loader and the LlamaIndex reader use these, so the same page gets the same
id and the same keys in either framework.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from websearch_core.errors import FetchError, WebSearchError
from websearch_core.fetch.many import urls_of
from websearch_core.models import MAX_READ, Page, SearchResponse, SearchResult, http_failure

__all__ = [
    "METADATA_KEYS",
    "document_id",
    "ok_or_error",
    "page_metadata",
    "passage_records",
    "read_for_passages",
    "result_metadata",
    "url_list",
]

#: The keys every page document carries (values may be None where unknown).
METADATA_KEYS = (
    "url",
    "final_url",
    "title",
    "status",
    "content_type",
    "charset",
    "fetched_at",
    "truncated",
    "bytes_read",
)

_NAMESPACE = uuid.UUID("9d1c5c2e-7a4b-4c51-9a0f-1f1f2b3c4d5e")


def document_id(final_url: str, content: str) -> str:
    """Same final URL and same content → same id, in every run (a UUID, as stores expect)."""
    digest = hashlib.sha256(content.encode("utf-8", errors="replace")).hexdigest()
    return str(uuid.uuid5(_NAMESPACE, f"{final_url}\n{digest}"))


def page_metadata(page: Page) -> dict[str, Any]:
    """JSON-friendly metadata for a page document: the ``METADATA_KEYS``."""
    return {
        "url": page.url,
        "final_url": page.final_url,
        "title": page.title,
        "status": page.status,
        "content_type": page.content_type,
        "charset": page.charset,
        "fetched_at": page.fetched_at.isoformat(),
        "truncated": page.truncated,
        "bytes_read": page.bytes_read,
    }


def result_metadata(result: SearchResult, provider: str) -> dict[str, Any]:
    """Metadata for a search result: where it ranked and what the provider said of it."""
    return {
        "url": result.url,
        "title": result.title,
        "rank": result.rank,
        "snippet": result.snippet,
        "published": result.published,
        "provider": provider,
    }


def read_for_passages(k: int, read_tokens: int | None) -> dict[str, Any]:
    """The search arguments of a retriever or reader that returns passages: ``k`` results,
    the first ``MAX_READ`` of them read (a page beyond them stays its snippet)."""
    return {"count": k, "read": min(k, MAX_READ), "read_tokens": read_tokens}


def passage_records(
    response: SearchResponse,
) -> list[tuple[str, str, dict[str, Any], str | None]]:
    """A search that read, as documents: ``(id, text, metadata, read_error)`` for each
    passage, in rank order and then page order, with the result's keys (``result_metadata``)
    and ``section``, ``offset`` (into the page's content: ``fetch(url, offset=)`` reads on)
    and ``score``. A result with no passage is its snippet, with ``fetch_error`` in its
    metadata (and as ``read_error``) when its page could not be read."""
    records: list[tuple[str, str, dict[str, Any], str | None]] = []
    for result in response.results:
        metadata = result_metadata(result, response.provider)
        if not result.passages:
            text = result.snippet or result.title
            if result.read_error:
                metadata["fetch_error"] = result.read_error
            records.append((document_id(result.url, text), text, metadata, result.read_error))
            continue
        for passage in result.passages:
            place = {"section": passage.section, "offset": passage.offset, "score": passage.score}
            key = document_id(result.url, f"{passage.offset}\n{passage.text}")
            records.append((key, passage.text, {**metadata, **place}, None))
    return records


def ok_or_error(outcome: Page | WebSearchError) -> Page | WebSearchError:
    """A fetch outcome as a pipeline sees it: a non-2xx page is a failure, not a document
    made of the error page's text."""
    if isinstance(outcome, Page) and not outcome.ok:
        return FetchError(http_failure(outcome))
    return outcome


def url_list(urls: object) -> list[Any]:
    """A loader's or reader's ``urls`` argument as a list: one URL, or any iterable of them
    (read as every batch reads its ``urls``: ``fetch.many.urls_of``)."""
    return list(urls_of(urls))
