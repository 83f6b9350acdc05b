"""One page for an agent (``fetch``) or for a program (``scrape``), through the URL jail.

Pages are remembered per session (a few, each at most the read ceiling) so that an
``offset`` continues a long page where the last render cut it without fetching it again.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import anyio
from pydantic import ValidationError

from websearch_core.config import Settings
from websearch_core.errors import ConfigurationError, InvalidRequestError
from websearch_core.fetch.fetcher import Fetched, Fetcher, FetchLimits
from websearch_core.fetch.scrape import (
    ScrapedPage,
    ScrapeOptions,
    scrape,
    scrape_options,
)
from websearch_core.fetch.workers import ConversionWorkers
from websearch_core.memo import Memo
from websearch_core.models import FetchRequest, Page, argument_message, said_number
from websearch_core.net.jail import JailPolicy, Target, parse_url
from websearch_core.net.transport import Resolver, system_resolver

__all__ = ["PAGE_MEMO_SIZE", "FetchService", "PageKey", "fetcher_for"]

T = TypeVar("T")

logger = logging.getLogger("websearch_core")

#: Fetched pages kept for ``offset`` continuations; each is at most the read ceiling.
PAGE_MEMO_SIZE = 16

#: A remembered page: its jailed URL and the byte ceiling it was read with.
PageKey = tuple[str, int]


class FetchService:
    """``fetch``/``afetch`` and ``scrape``/``ascrape``; the page memo the bulk reader shares."""

    def __init__(
        self,
        fetcher: Fetcher,
        converters: ConversionWorkers,
        pages: Memo[Page],
        output_chars: int,
    ) -> None:
        self.fetcher = fetcher
        self.converters = converters
        self._pages = pages
        self._output_chars = output_chars

    def fetch(
        self, url: object, max_bytes: object, offset: object, *, deadline_s: float | None = None
    ) -> Page:
        """One page, from the memo if it is there; ``deadline_s`` may shorten the fetch's
        deadline (a search that reads gives what is left of its own)."""
        request, target, key, page = self.recall(url, max_bytes, offset)
        if page is None:
            fetched = self.fetcher.fetch(target, max_bytes=request.max_bytes, deadline_s=deadline_s)
            page = self.remember(key, fetched, request.offset)
        return self.as_asked(page, request)

    async def afetch(
        self, url: object, max_bytes: object, offset: object, *, deadline_s: float | None = None
    ) -> Page:
        request, target, key, page = self.recall(url, max_bytes, offset)
        if page is None:
            fetched = await self.fetcher.afetch(
                target, max_bytes=request.max_bytes, deadline_s=deadline_s
            )
            page = self.remember(key, fetched, request.offset)
        return self.as_asked(page, request)

    def as_asked(self, page: Page, request: FetchRequest) -> Page:
        """``page``, saying so when its read ceiling is not the ``max_bytes`` asked for (held
        between a floor and a cap): never a silent change of what the caller asked."""
        asked = request.max_bytes
        used = self.fetcher.limits.bytes_for(asked)
        if asked is None or used == asked:
            return page
        change = "capped at" if used < asked else "raised to"
        note = f"max_bytes {change} {used:,} bytes (asked for {said_number(asked)})"
        return page.model_copy(update={"notes": [note]})

    def scrape(self, url: object, **options: object) -> ScrapedPage:
        target, checked = self._scrape_plan(url, **options)
        fetched = self.fetcher.fetch_raw(
            target, max_bytes=checked.max_bytes, deadline_s=checked.deadline_s
        )
        return _logged(scrape(fetched, checked))

    async def ascrape(self, url: object, **options: object) -> ScrapedPage:
        target, checked = self._scrape_plan(url, **options)
        fetched = await self.fetcher.afetch_raw(
            target, max_bytes=checked.max_bytes, deadline_s=checked.deadline_s
        )
        return _logged(await self.off_the_loop(fetched, scrape, fetched, checked))

    def _scrape_plan(
        self,
        url: object,
        *,
        formats: object,
        include_tags: object,
        exclude_tags: object,
        **scalars: object,
    ) -> tuple[str, ScrapeOptions]:
        """The jailed URL (refused before any I/O) and the checked options."""
        if not isinstance(url, str):
            raise InvalidRequestError("url must be text, such as 'https://example.org/'")
        lists: dict[str, tuple[object, ...]] = {}
        for name, value in (
            ("formats", formats),
            ("include_tags", include_tags),
            ("exclude_tags", exclude_tags),
        ):
            if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                raise InvalidRequestError(f"{name} must be a list, such as ['markdown']")
            lists[name] = tuple(value)
        options = scrape_options(**lists, **scalars)
        return parse_url(url, self.fetcher.policy).url, options

    async def off_the_loop(self, fetched: Fetched, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` for one fetched page (``convert``, ``scrape``), never holding
        the event loop's thread for longer than a small page takes: on a worker process when
        the page is worth one, else on a thread."""
        if self.converters.worth_a_worker(fetched.body, fetched.content_type):
            url = fetched.final.url
            return await asyncio.wrap_future(self.converters.call(url, function, *args))
        if self.converters.workers and len(fetched.body) < self.converters.in_process_below:
            return function(*args)  # a small page: ~1 ms, less than a thread hop
        return await anyio.to_thread.run_sync(function, *args)

    def recall(
        self, url: object, max_bytes: object, offset: object
    ) -> tuple[FetchRequest, Target, PageKey, Page | None]:
        """The request, its jailed target (refused before any I/O; the fetch reuses it), its
        memo key, and the memo's page at ``offset`` if it holds one."""
        try:
            request = FetchRequest(url=url, max_bytes=max_bytes, offset=offset)  # type: ignore[arg-type]
        except ValidationError as exc:
            raise InvalidRequestError(argument_message(exc)) from None
        target = parse_url(request.url, self.fetcher.policy)
        key = (target.url, self.fetcher.limits.bytes_for(request.max_bytes))
        hit = self._pages.get(key)
        if hit is None:
            return request, target, key, None
        page = _at_offset(hit.model_copy(update={"from_memo": True}), request.offset)
        return request, target, key, page

    def remember(self, key: PageKey, page: Page, offset: int) -> Page:
        """The page as the caller gets it (at ``offset``), logged and remembered."""
        page = page.model_copy(update={"max_chars": self._output_chars})
        logger.info(
            "fetch url=%s status=%d bytes=%d truncated=%s elapsed_ms=%.0f",
            page.final_url,
            page.status,
            page.bytes_read,
            page.truncated,
            page.elapsed_ms,
        )
        self._pages.put(key, page)
        return _at_offset(page, offset)


def _at_offset(page: Page, offset: int) -> Page:
    if offset and offset >= len(page.content):
        raise InvalidRequestError(
            f"offset {offset:,} is past the end of the page ({len(page.content):,} characters)"
        )
    return page.model_copy(update={"offset": offset}) if offset else page


def _logged(page: ScrapedPage) -> ScrapedPage:
    logger.info(
        "scrape url=%s status=%d bytes=%d truncated=%s elapsed_ms=%.0f",
        page.final_url,
        page.status,
        page.bytes_read,
        page.truncated,
        page.elapsed_ms,
    )
    return page


def fetcher_for(
    settings: Settings,
    policy: JailPolicy | None,
    resolver: Resolver | None,
    verify: ssl.SSLContext | bool,
    user_agent: str,
) -> Fetcher:
    """The session's fetcher: its jail (``_jail_policy``), limits and proxy from the settings."""
    return Fetcher(
        policy=_jail_policy(settings, policy),
        resolver=resolver or system_resolver,
        limits=FetchLimits(
            max_bytes=settings.fetch_max_bytes,
            deadline_s=settings.fetch_timeout,
            max_redirects=settings.fetch_max_redirects,
        ),
        verify=verify,
        proxy=settings.fetch_proxy.get_secret_value() if settings.fetch_proxy else None,
        user_agent=user_agent,
    )


def _jail_policy(settings: Settings, given: JailPolicy | None) -> JailPolicy:
    """Model-chosen URLs: public addresses only (unless the operator opened private ones),
    and the operator's domain lists (``allow_domains``/``deny_domains``, arguments or
    environment), which a policy the host passes is narrowed by, never replaces."""
    allow, deny = frozenset(settings.allow_domains), frozenset(settings.deny_domains)
    try:
        if given is None:
            return JailPolicy(
                allow_private=settings.fetch_allow_private, allow_domains=allow, deny_domains=deny
            )
        return given.restricted(allow, deny)
    except ValueError as exc:
        raise ConfigurationError(f"bad domain list: {exc}") from None
