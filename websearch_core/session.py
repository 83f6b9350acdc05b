"""``WebSearch``: the one object an adapter holds.

A facade. It resolves the settings, builds the services with their dependencies given
explicitly, and answers every public call by delegating to one of them under ``boundary``
(only a ``WebSearchError`` leaves it):

- searches: ``planning.Planner`` (validate, route), then ``search.service.SearchService``
  (one provider, ``search.drive.Driver``) or ``blend.run.BlendRunner`` (every engine at once);
- pages: ``fetch.service.FetchService`` (one page, the page memo) and
  ``fetch.many.BulkReader`` (many pages, two stages).

It owns what must be closed: the providers' HTTP clients, the blocking engines' threads,
the fetcher's connections and the conversion workers.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import anyio
import httpx
from pydantic import ValidationError
from typing_extensions import Unpack

from websearch_core.blend.cache import BlendCache
from websearch_core.blend.engines import blend_engines
from websearch_core.blend.meter import BudgetMeter, Fees, Meter
from websearch_core.blend.plan import BlendProvider
from websearch_core.blend.run import BlendRunner, BlendSearch
from websearch_core.boundary import apublic, public
from websearch_core.config import Settings, SettingsArguments
from websearch_core.errors import ConfigurationError, WebSearchError
from websearch_core.fetch.many import BulkDefaults, BulkReader
from websearch_core.fetch.politeness import HostPace, HostSlots
from websearch_core.fetch.robots import RobotsCache
from websearch_core.fetch.scrape import ScrapedPage, ScrapeFormat
from websearch_core.fetch.service import PAGE_MEMO_SIZE, FetchService, fetcher_for
from websearch_core.fetch.workers import ConversionWorkers, default_workers
from websearch_core.memo import Memo
from websearch_core.models import Page, SearchOptions, SearchResponse, validation_message
from websearch_core.net.jail import JailPolicy
from websearch_core.net.transport import Resolver
from websearch_core.planning import Planner
from websearch_core.providers import configure
from websearch_core.reading.reader import ReadRequest, SearchReader, read_request
from websearch_core.redact import Redactor, redact_library_logs
from websearch_core.search.bulkheads import BlockingLanes, ProviderClients
from websearch_core.search.drive import Driver, Limits
from websearch_core.search.service import SearchService

__all__ = ["WebSearch"]

_USER_AGENT = "websearch-pack/0.1 (+https://pypi.org/project/websearch-pack/)"


class WebSearch:
    """Search the web and fetch pages for an agent.

    Configuration comes from the arguments, then the environment (see ``config.py``). Only
    providers whose credential, URL or package is present are offered: ``providers`` lists
    them and ``unconfigured`` says, for the others, what is missing.

    ``provider="auto"`` (the default) routes each search to the first configured provider
    that honours every requested option; naming a provider pins it, and a pinned provider
    refuses an option it cannot honour before anything is sent.
    """

    @public("configure")
    def __init__(
        self,
        provider: str | None = None,
        *,
        meter: Meter | None = None,
        blend_cache: BlendCache | None = None,
        fees: Fees | None = None,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        fetch_policy: JailPolicy | None = None,
        resolver: Resolver | None = None,
        verify: ssl.SSLContext | bool = True,
        **settings: Unpack[SettingsArguments],
    ) -> None:
        """``settings`` are ``config.Settings``'s (``None``: read from the environment); the
        others are objects a host passes in: a ``Meter`` for the blend's paid engines, a
        ``BlendCache`` shared by sessions, ``Fees``, its own ``httpx`` clients (not closed
        here), a ``JailPolicy`` (the domain settings still narrow it), a DNS ``resolver``
        and TLS ``verify``."""
        try:
            self.settings = Settings.resolve({"provider": provider, **settings})
        except ValidationError as exc:
            raise ConfigurationError(f"bad configuration: {validation_message(exc)}") from None
        except ValueError as exc:  # a name that is no setting
            raise ConfigurationError(str(exc)) from None
        s = self.settings
        self._redactor = Redactor(s.secrets())
        redact_library_logs(self._redactor)
        # What providers read from a vendor is redacted before parsing.
        self._configured, self.unconfigured = configure(
            s, self._redactor.mask if self._redactor else None
        )
        blend = BlendProvider(
            blend_engines(self._configured, "ddgs" not in self.unconfigured, s.blend_engines)
        )
        self._planner = Planner(s.provider, self._configured, self.unconfigured, blend)
        # Bulkheads: each provider its own connections, each blocking engine its own threads.
        self._clients = ProviderClients(
            user_agent=_USER_AGENT, http_client=http_client, async_http_client=async_http_client
        )
        self._lanes = BlockingLanes()
        self._fetcher = fetcher_for(s, fetch_policy, resolver, verify, _USER_AGENT)
        driver = Driver(
            self._clients,
            self._lanes,
            Limits(max_retry_wait=s.max_retry_wait, max_bytes=s.provider_max_bytes),
            self._fetcher.locate,
            self._fetcher.alocate,
        )
        self._memo: Memo[SearchResponse] = Memo(s.memo_size)
        self._searches = SearchService(driver, self._memo, self._redactor, s.timeout)
        fees = fees if fees is not None else Fees.from_environment()
        self._blend = BlendRunner(
            blend,
            self._searches,
            meter if meter is not None else BudgetMeter(),
            fees,
            blend_cache,
            s.blend_timeout,
            self._redactor,
        )
        workers = s.convert_workers
        self._converters = ConversionWorkers(default_workers() if workers is None else workers)
        pages: Memo[Page] = Memo(PAGE_MEMO_SIZE if s.memo_size else 0)
        self._pages = FetchService(self._fetcher, self._converters, pages, s.output_chars)
        self._reader = SearchReader(self._pages, s.timeout)
        self._host_slots = HostSlots(s.per_host_concurrency)
        self._bulk = BulkReader(
            self._pages,
            RobotsCache(self._fetcher),
            HostPace(),
            self._host_slots,
            BulkDefaults(s.fetch_concurrency, s.bulk_robots, s.per_host_rate),
            self._redactor,
        )

    @property
    def providers(self) -> list[str]:
        """Names of the configured providers, in the order ``auto`` tries them."""
        return [p.name for p in self._configured]

    @property
    def engines(self) -> list[str]:
        """The blend's engines here, by name: what ``engines=`` may choose among."""
        return self._blend.blend.names

    def honoured_options(self) -> frozenset[str]:
        """Options a search can use here: the pinned provider's, or (``auto``) those at
        least one configured provider honours, since routing will pick that one."""
        return self._planner.honoured_options()

    def refusal_for(self, options: dict[str, Any]) -> WebSearchError | None:
        """The error a search with ``options`` would raise before sending anything, if any.

        For messages about arguments a tool's schema left out (``tooling.argument_error``).
        """
        return self._planner.refusal_for(options)

    @property
    def meter(self) -> Meter:
        """Asked before a paid engine joins a blend, told what it cost (``blend.Meter``); a
        host may swap it between searches (a new budget period)."""
        return self._blend.meter

    @meter.setter
    def meter(self, meter: Meter) -> None:
        self._blend.meter = meter

    def __repr__(self) -> str:
        return f"WebSearch(provider={self.settings.provider!r}, configured={self.providers})"

    # -- search ----------------------------------------------------------------------------

    @public("search")
    def search(
        self,
        query: str,
        *,
        read: int | None = None,
        read_tokens: int | None = None,
        **options: Unpack[SearchOptions],
    ) -> SearchResponse:
        """Search and return the results; raises a ``WebSearchError`` the model can act on.

        The options (``models.SearchOptions``): ``count`` (1 to 10, default 5), ``site`` (a
        shorthand for one entry of ``include_domains``), ``include_domains``,
        ``exclude_domains``, ``freshness`` (``day`` … ``year``), ``date_from``/``date_to``,
        ``include_answer``, ``country``, ``language``, ``locale``, ``safesearch``, ``page``
        (1 to 10), ``engines`` and ``provider`` (pinned for this call). ``engines`` chooses
        among a blend's engines (``self.engines``: a name none of them has sits the search
        out, said in ``skipped``). ``locale`` (``en-US``) is a hint each engine follows as far
        as it can; ``language`` and ``country`` are strict. The whole search, its one retry
        included, ends within ``timeout`` seconds.

        ``read`` (0 to 5; ``None``: the ``search_read`` setting, 0 unless set): also fetch the
        top ``read`` results and give each its passages that best answer the query
        (``SearchResult.passages``, each with its ``offset`` in the page), the rendered text
        within ``read_tokens`` (200 to 20,000; ``None``: the ``read_tokens`` setting, 1,500);
        the reading ends within the same ``timeout``, counted from the call (``reading/``).
        """
        started = time.monotonic()
        asked = self._read_request(read, read_tokens)
        planned = self._planner.plan(query, options)
        if isinstance(planned, BlendSearch):
            response = self._blend.run(planned)
        else:
            response = self._searches.run(planned)
        if asked is None:
            return response
        return self._reader.read(response, asked, started + self.settings.timeout)

    @apublic("search")
    async def asearch(
        self,
        query: str,
        *,
        read: int | None = None,
        read_tokens: int | None = None,
        **options: Unpack[SearchOptions],
    ) -> SearchResponse:
        """``search`` for the event loop; a blocking provider runs on a worker thread."""
        started = time.monotonic()
        asked = self._read_request(read, read_tokens)
        planned = self._planner.plan(query, options)
        if isinstance(planned, BlendSearch):
            response = await self._blend.arun(planned)
        else:
            response = await self._searches.arun(planned)
        if asked is None:
            return response
        return await self._reader.aread(response, asked, started + self.settings.timeout)

    def _read_request(self, read: object, read_tokens: object) -> ReadRequest | None:
        s = self.settings
        return read_request(
            s.search_read if read is None else read,
            s.read_tokens if read_tokens is None else read_tokens,
        )

    # -- fetch -----------------------------------------------------------------------------

    @public("fetch")
    def fetch(self, url: str, *, max_bytes: int | None = None, offset: int = 0) -> Page:
        """Fetch one page through the URL jail; ``page.render()`` is what the model reads.

        ``offset`` continues a long page where the previous render cut it, from the session's
        memo when the page is there (no refetch). HTTP error statuses come back as a ``Page``
        (``page.ok`` is False); refusals and network failures raise a ``FetchError``.
        """
        return self._pages.fetch(url, max_bytes, offset)

    @apublic("fetch")
    async def afetch(self, url: str, *, max_bytes: int | None = None, offset: int = 0) -> Page:
        """``fetch`` for the event loop."""
        return await self._pages.afetch(url, max_bytes, offset)

    @public("scrape")
    def scrape(
        self,
        url: str,
        *,
        formats: Iterable[ScrapeFormat] = ("markdown",),
        main_content: bool = True,
        include_tags: Iterable[str] = (),
        exclude_tags: Iterable[str] = (),
        deadline_s: float | None = None,
        max_bytes: int | None = None,
    ) -> ScrapedPage:
        """Fetch one page through the URL jail and return it in the formats asked for
        (``fetch/scrape.py``): for programs that store or index pages, not for a model to read.

        ``deadline_s`` may shorten the fetch's deadline, never lengthen it. HTTP error statuses
        come back as a ``ScrapedPage``; refusals and network failures raise a ``FetchError``.
        """
        return self._pages.scrape(
            url,
            formats=formats,
            main_content=main_content,
            include_tags=include_tags,
            exclude_tags=exclude_tags,
            deadline_s=deadline_s,
            max_bytes=max_bytes,
        )

    @apublic("scrape")
    async def ascrape(
        self,
        url: str,
        *,
        formats: Iterable[ScrapeFormat] = ("markdown",),
        main_content: bool = True,
        include_tags: Iterable[str] = (),
        exclude_tags: Iterable[str] = (),
        deadline_s: float | None = None,
        max_bytes: int | None = None,
    ) -> ScrapedPage:
        """``scrape`` for the event loop; the conversion never runs on the loop's thread (on a
        worker process once the workers run, ``start_workers``; else on a thread)."""
        return await self._pages.ascrape(
            url,
            formats=formats,
            main_content=main_content,
            include_tags=include_tags,
            exclude_tags=exclude_tags,
            deadline_s=deadline_s,
            max_bytes=max_bytes,
        )

    # -- bulk reads (fetch/many.py) --------------------------------------------------------

    @public("fetch_many")
    def fetch_many(
        self, urls: Iterable[str], *, concurrency: int | None = None, robots: bool | None = None
    ) -> Iterator[tuple[str, Page | WebSearchError]]:
        """Fetch ``urls`` on up to ``concurrency`` threads, yielding in input order.

        A failure is yielded in place of its page, never dropped, and never stops the batch.
        At most ``2 * concurrency`` pages are in flight or waiting, so a long list does not
        pile up in memory. ``concurrency`` defaults to the ``fetch_concurrency`` setting and
        ``robots`` (honour each site's robots.txt) to ``bulk_robots``.
        """
        return self._bulk.fetch_many(urls, concurrency, robots)

    @public("afetch_many")
    def afetch_many(
        self, urls: Iterable[str], *, concurrency: int | None = None, robots: bool | None = None
    ) -> AsyncIterator[tuple[str, Page | WebSearchError]]:
        """``fetch_many`` on the event loop: up to ``concurrency`` fetches at once."""
        return self._bulk.afetch_many(urls, concurrency, robots)

    def start_workers(self) -> None:
        """Start the conversion worker processes now and wait until they are ready, so that
        every page worth one is converted on one from the first (``websearch serve`` does
        this at start-up: its event loop must never be held by a conversion). Otherwise they
        start on their own once a session has read enough pages."""
        self._converters.start()

    # -- closing ---------------------------------------------------------------------------

    # Provider calls go through transports that hold the search's deadline at the socket and
    # reuse a connection only after an exact read (``search/bulkheads.py``). They do not read
    # HTTP(S)_PROXY: pass ``http_client``/``async_http_client`` for a proxy (the deadline then
    # holds between reads and, for async, through cancellation).

    def close(self) -> None:
        """Close the HTTP clients this session created (not ones passed in), and stop its
        conversion workers and its blocking engines' threads."""
        self._clients.close()
        self._fetcher.close()
        self._lanes.close()
        self._converters.close()

    async def aclose(self) -> None:
        """Close everything ``close`` does, and this event loop's async clients."""
        await self._clients.aclose()
        await self._fetcher.aclose()
        self._lanes.close()
        await anyio.to_thread.run_sync(self._converters.close)  # it waits for the workers

    def __enter__(self) -> WebSearch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> WebSearch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
