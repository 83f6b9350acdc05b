"""Bulk reading for data engines: URLs in, one flat record per URL out, never an exception.

For Ray Data, Spark, Dask or Daft, where a corpus outgrows one machine. Each worker reads
through the same URL jail, extractor, robots.txt rules and per-host limits as ``fetch_many``;
an engine's own downloader (``url.download``, a UDF around ``requests.get``) has no jail.

- ``fetch_batch(urls, config)`` / ``afetch_batch``: a pure function, for ``mapInArrow``,
  ``map_partitions`` and the like. A bad URL is a row with ``error_code`` and
  ``error_message``, in input order; nothing is dropped.
- ``WebReader(config)``: a callable class for actor pools,
  ``ds.map_batches(WebReader, fn_constructor_kwargs={"config": config}, concurrency=N)``. It
  is picklable; its session is made in the actor on the first batch and reused after. Its
  ``__call__`` is a coroutine, which Ray runs on the actor's event loop.
- ``SCHEMA`` / ``arrow_schema()``: the record's columns and types.

Politeness holds per worker: partition the URLs by host before this stage, so each host's
URLs meet in one worker (see docs/scale-out.md), or N workers send N times the rate.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from websearch_core.documents import ok_or_error, url_list
from websearch_core.errors import (
    ConfigurationError,
    FetchError,
    FetchTimeoutError,
    InternalError,
    InvalidRequestError,
    URLRefusedError,
    WebSearchError,
)
from websearch_core.models import Page
from websearch_core.session import WebSearch

__all__ = [
    "SCHEMA",
    "BulkConfig",
    "WebReader",
    "afetch_batch",
    "arrow_schema",
    "error_code",
    "fetch_batch",
    "record",
]

#: The record: each column's name and Arrow type (``arrow_schema()`` builds the schema).
SCHEMA: tuple[tuple[str, str], ...] = (
    ("url", "string"),  # as given
    ("final_url", "string"),  # where the redirects ended
    ("status", "int32"),  # HTTP status; null if nothing was fetched
    ("content_type", "string"),
    ("title", "string"),
    ("markdown", "large_string"),  # the main content as markdown; null on error
    ("text", "large_string"),  # the same as plain text; null on error
    ("bytes_read", "int64"),
    ("truncated", "bool"),  # the read ceiling cut the body
    ("fetched_at", "timestamp[us, tz=UTC]"),
    ("content_sha256", "string"),  # of ``markdown``: unchanged pages are skipped on re-runs
    ("error_code", "string"),  # null on success; see ``error_code``
    ("error_message", "string"),  # what went wrong, in words
)
COLUMNS = tuple(name for name, _ in SCHEMA)


@dataclass(frozen=True)
class BulkConfig:
    """How a worker reads: picklable, so an engine can ship it to every worker.

    ``convert_workers`` is 0 here: an engine's worker already holds one CPU, and the engine's
    concurrency is the parallelism (None: one conversion process per core, as a session's
    default). ``allow_private`` opens loopback and private addresses
    (never metadata endpoints) for an intranet crawl or a local test, as
    ``WEBSEARCH_FETCH_ALLOW_PRIVATE`` does. ``session`` passes any other ``WebSearch``
    argument.
    """

    concurrency: int = 16
    convert_workers: int | None = 0
    per_host_concurrency: int | None = 4
    per_host_rate: float | None = None
    robots: bool = True
    max_bytes: int | None = None
    timeout: float | None = None
    allow_private: bool = False
    allow_domains: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    url_column: str = "url"
    session: Mapping[str, Any] = field(default_factory=dict)

    def new_session(self) -> WebSearch:
        """A session reading as this config says; a bad config is a ``ConfigurationError``."""
        try:
            return self._session()
        except WebSearchError:
            raise
        except TypeError as exc:  # an unknown keyword in ``session``
            raise ConfigurationError(f"bad BulkConfig.session: {exc}") from None

    def _session(self) -> WebSearch:
        return WebSearch(
            **{
                "fetch_concurrency": self.concurrency,
                "convert_workers": self.convert_workers,
                "per_host_concurrency": self.per_host_concurrency,
                "per_host_rate": self.per_host_rate,
                "bulk_robots": self.robots,
                # Unset here (None): the environment's setting, as for any session.
                "fetch_max_bytes": self.max_bytes,
                "fetch_timeout": self.timeout,
                "fetch_allow_private": True if self.allow_private else None,
                "allow_domains": self.allow_domains or None,
                "deny_domains": self.deny_domains or None,
                "memo_size": 0,  # each URL once: a memo would only hold pages in memory
                **self.session,
            }
        )

    def __repr__(self) -> str:  # the session mapping may hold keys
        shown = {k: v for k, v in asdict(self).items() if k != "session"}
        return f"BulkConfig({shown}, session keys={sorted(self.session)})"


def error_code(error: WebSearchError) -> str:
    """A stable code for a failed URL, for filtering and counting.

    ``blocked_by_policy`` (the URL jail), ``robots_disallowed``, ``timeout``, ``http_error``
    (a non-2xx answer: ``status`` says which), ``fetch_error`` (network, TLS, redirects,
    malformed responses), ``invalid_url`` (not a URL at all), ``internal_error`` (a bug).
    """
    if isinstance(error, URLRefusedError):
        return "robots_disallowed" if error.reason == "robots" else "blocked_by_policy"
    if isinstance(error, FetchTimeoutError):
        return "timeout"
    if isinstance(error, FetchError):
        return "fetch_error"
    if isinstance(error, InvalidRequestError):
        return "invalid_url"
    if isinstance(error, InternalError):
        return "internal_error"
    return "error"


def record(url: object, outcome: Page | WebSearchError) -> dict[str, Any]:
    """One URL's row (``SCHEMA``)."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row["url"] = url if isinstance(url, str) else repr(url)
    if isinstance(outcome, Page):
        row.update(
            final_url=outcome.final_url,
            status=outcome.status,
            content_type=outcome.content_type,
            title=outcome.title,
            bytes_read=outcome.bytes_read,
            truncated=outcome.truncated,
            fetched_at=outcome.fetched_at,
        )
        if outcome.ok:
            row["markdown"] = outcome.content
            row["text"] = outcome.content if outcome.text is None else outcome.text
            row["content_sha256"] = hashlib.sha256(
                outcome.content.encode("utf-8", "surrogatepass")
            ).hexdigest()
            return row
        failure = ok_or_error(outcome)
        row["error_code"] = "http_error"
        row["error_message"] = str(failure)
        return row
    row["error_code"] = error_code(outcome)
    row["error_message"] = str(outcome)
    row["fetched_at"] = dt.datetime.now(dt.timezone.utc)
    return row


def fetch_batch(
    urls: Iterable[object] | str,
    config: BulkConfig | None = None,
    *,
    session: WebSearch | None = None,
) -> list[dict[str, Any]]:
    """One record per URL, in input order; never raises for a URL (only for a bad
    ``config``, or ``urls`` that is not a URL or a list of them). A ``session`` may be passed
    to reuse its connections and robots.txt rules."""
    config = config or BulkConfig()
    own = session is None
    reader = config.new_session() if session is None else session
    try:
        return [record(url, outcome) for url, outcome in reader.fetch_many(url_list(urls))]
    finally:
        if own:
            reader.close()


async def afetch_batch(
    urls: Iterable[object] | str,
    config: BulkConfig | None = None,
    *,
    session: WebSearch | None = None,
) -> list[dict[str, Any]]:
    """``fetch_batch`` on the running event loop."""
    config = config or BulkConfig()
    own = session is None
    reader = config.new_session() if session is None else session
    try:
        return [record(url, outcome) async for url, outcome in reader.afetch_many(url_list(urls))]
    finally:
        if own:
            await reader.aclose()


def arrow_schema() -> Any:
    """``SCHEMA`` as a ``pyarrow.Schema`` (needs pyarrow: the ``ray`` extra brings it)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - the message is the point
        raise ImportError("arrow_schema needs pyarrow: pip install 'websearch-pack[ray]'") from None
    types = {
        "string": pa.string(),
        "large_string": pa.large_string(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "bool": pa.bool_(),
        "timestamp[us, tz=UTC]": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([(name, types[kind]) for name, kind in SCHEMA])


class WebReader:
    """A batch of URLs → the batch's other columns plus the record's (``SCHEMA``).

    Takes a batch in any of Ray's formats (a dict of arrays, a ``pyarrow.Table``, a pandas
    ``DataFrame``) with the URLs in ``config.url_column``; returns a ``pyarrow.Table``.
    """

    def __init__(self, config: BulkConfig | None = None) -> None:
        self.config = config or BulkConfig()
        self._session: WebSearch | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config}  # a session (sockets, processes) never travels

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config = state["config"]
        self._session = None

    def __repr__(self) -> str:
        return f"WebReader({self.config!r})"

    async def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        columns = _columns(batch)
        name = self.config.url_column
        if name not in columns:
            raise InvalidRequestError(
                f"the batch has no {name!r} column: name the URL column with "
                "BulkConfig(url_column=...)"
            )
        clashes = sorted(set(columns) & set(COLUMNS) - {name})
        if clashes:
            raise InvalidRequestError(
                f"the batch's columns {', '.join(clashes)} would be overwritten by the record's: "
                "rename them before this stage"
            )
        if self._session is None:
            self._session = self.config.new_session()
        rows = await afetch_batch(columns.pop(name), self.config, session=self._session)
        schema = arrow_schema()
        table = pa.Table.from_pylist(rows, schema=schema)
        for other, values in columns.items():  # carried through: ids, partition keys ...
            if other not in schema.names:
                table = table.append_column(other, pa.array(values))
        return table

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.aclose()
            self._session = None


def _columns(batch: Any) -> dict[str, list[Any]]:
    """A batch in Ray's formats as plain lists per column."""
    if hasattr(batch, "to_pydict"):  # pyarrow.Table
        return dict(batch.to_pydict())
    if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas.DataFrame
        return {str(name): batch[name].tolist() for name in batch.columns}
    if isinstance(batch, Mapping):  # dict of numpy arrays or lists
        return {
            str(name): values.tolist() if hasattr(values, "tolist") else list(values)
            for name, values in batch.items()
        }
    raise InvalidRequestError(
        "a batch must be a dict of columns, a pyarrow Table or a DataFrame, "
        f"not {type(batch).__name__}"
    )
