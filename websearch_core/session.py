"""``WebSearch``: the one object an adapter holds."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import inspect
import itertools
import logging
import ssl
import threading
import time
import traceback
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import anyio
import httpx
from pydantic import SecretStr, ValidationError

from websearch_core.blend import (
    BUDGET_SPENT,
    METER_DOWN,
    NO_SUCH_ENGINE,
    BlendCache,
    BlendPlan,
    BlendProvider,
    BudgetMeter,
    Engine,
    Fees,
    Meter,
    blend_answer,
    ddgs_capabilities,
    match_engines,
    merged_suggestions,
)
from websearch_core.boundary import apublic, boundary, detached, public
from websearch_core.config import Settings
from websearch_core.errors import (
    ConfigurationError,
    InternalError,
    InvalidRequestError,
    ProviderNotConfiguredError,
    ProviderUnavailableError,
    RateLimitedError,
    UnsupportedOptionError,
    WebSearchError,
)
from websearch_core.fetch.content import Converted, convert
from websearch_core.fetch.fetcher import Fetched, Fetcher, FetchLimits, page_of
from websearch_core.fetch.politeness import HostPace, HostSlots
from websearch_core.fetch.robots import RobotsCache
from websearch_core.fetch.scrape import (
    ScrapedPage,
    ScrapeFormat,
    ScrapeOptions,
    scrape,
    scrape_options,
)
from websearch_core.fetch.workers import ConversionWorkers, default_workers
from websearch_core.memo import Memo
from websearch_core.models import (
    AnswerCitation,
    FetchRequest,
    Freshness,
    Page,
    SafeSearch,
    SearchRequest,
    SearchResponse,
    Usage,
    argument_message,
    validation_message,
)
from websearch_core.net.jail import JailPolicy, Target, parse_url
from websearch_core.net.transport import Resolver, system_resolver
from websearch_core.providers import PAID, PROVIDERS, BlockingProvider, HttpProvider, Provider, send
from websearch_core.providers.base import Call, ProviderAnswer, clean_strings
from websearch_core.providers.ddgs import DdgsProvider, text_backends
from websearch_core.redact import Redactor, redact_library_logs
from websearch_core.search.bulkheads import BlockingLanes, ProviderClients
from websearch_core.search.routing import (
    Support,
    choose_provider,
    localised,
    rewrite_query,
    unmet_options,
)

__all__ = ["WebSearch"]

T = TypeVar("T")

logger = logging.getLogger("websearch_core")

_USER_AGENT = "websearch-pack/0.1 (+https://pypi.org/project/websearch-pack/)"
#: Fetched pages kept for ``offset`` continuations; each is at most the read ceiling.
_PAGE_MEMO_SIZE = 16
#: A vendor's redirect links (Gemini's) are resolved concurrently, within the search's
#: deadline and at most this long: a link not resolved in time is kept as it is.
LOCATE_BUDGET_S = 3.0


#: What ``provider=`` may name.
CHOICES = ("auto", "blend", *PROVIDERS)
#: The keyed providers that join a blend as engines (grounded vendors do not).
_BLEND_PROVIDERS = ("brave", "tavily", "mojeek", "searxng")


def _kind(exc: BaseException) -> str:
    """An exception named by type only: a meter's message may hold anything."""
    return type(exc).__name__


def _blocking_call(
    provider: BlockingProvider, request: SearchRequest, query: str
) -> Callable[[float], ProviderAnswer]:
    """The search as a lane runs it: given the seconds left when a thread is free."""
    return lambda remaining: provider.search_blocking(request, query, remaining)


def _spent(answer: ProviderAnswer, calls: int) -> ProviderAnswer:
    """The answer with its usage complete: a plain index's call is one search, no tokens."""
    usage = answer.usage or Usage(searches=1)
    return dataclasses.replace(answer, usage=usage.model_copy(update={"requests": calls}))


@dataclasses.dataclass(frozen=True)
class _Batch:
    """One bulk read's limits, and its stop (set when the caller leaves it early)."""

    concurrency: int
    robots: bool
    interval: float  # seconds between request starts to one host
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)


@dataclasses.dataclass(frozen=True)
class _BulkFetched:
    """A bulk read's page between its stages: fetched, not yet converted."""

    key: tuple[str, int]
    fetched: Fetched


def _conversion_of(fetched: Fetched) -> tuple[bytes, str | None, str]:
    return fetched.body, fetched.content_type, fetched.final.url


def _settled(url: str, future: Future[Page]) -> tuple[str, Page | WebSearchError]:
    try:
        return url, future.result()
    except WebSearchError as exc:
        return url, detached(exc)


def _url_iterable(urls: object) -> Iterable[Any]:
    """A batch's ``urls``: one URL, or any iterable of them (checked one by one as fetched)."""
    if isinstance(urls, str):
        return [urls]
    if isinstance(urls, Iterable) and not isinstance(urls, bytes | Mapping):
        return urls
    raise InvalidRequestError("urls must be a URL or an iterable of URLs")


def _positive_int(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidRequestError(f"{name} must be a whole number of at least 1")
    return value


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
        brave_api_key: str | SecretStr | None = None,
        tavily_api_key: str | SecretStr | None = None,
        searxng_url: str | SecretStr | None = None,
        searxng_api_key: str | SecretStr | None = None,
        brave_base_url: str | SecretStr | None = None,
        tavily_base_url: str | SecretStr | None = None,
        mojeek_api_key: str | SecretStr | None = None,
        mojeek_base_url: str | SecretStr | None = None,
        anthropic_api_key: str | SecretStr | None = None,
        openai_api_key: str | SecretStr | None = None,
        openrouter_api_key: str | SecretStr | None = None,
        gemini_api_key: str | SecretStr | None = None,
        anthropic_model: str | None = None,
        openai_model: str | None = None,
        openrouter_model: str | None = None,
        gemini_model: str | None = None,
        anthropic_base_url: str | SecretStr | None = None,
        openai_base_url: str | SecretStr | None = None,
        openrouter_base_url: str | SecretStr | None = None,
        gemini_base_url: str | SecretStr | None = None,
        timeout: float | None = None,
        blend_timeout: float | None = None,
        blend_engines: Iterable[str] | None = None,
        meter: Meter | None = None,
        blend_cache: BlendCache | None = None,
        fees: Fees | None = None,
        provider_max_bytes: int | None = None,
        max_retry_wait: float | None = None,
        memo_size: int | None = None,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        fetch_max_bytes: int | None = None,
        fetch_timeout: float | None = None,
        fetch_max_redirects: int | None = None,
        output_chars: int | None = None,
        allow_domains: Iterable[str] | None = None,
        deny_domains: Iterable[str] | None = None,
        fetch_proxy: str | SecretStr | None = None,
        fetch_allow_private: bool | None = None,
        fetch_concurrency: int | None = None,
        convert_workers: int | None = None,
        per_host_concurrency: int | None = None,
        per_host_rate: float | None = None,
        bulk_robots: bool | None = None,
        fetch_policy: JailPolicy | None = None,
        resolver: Resolver | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        explicit = {
            "provider": provider,
            "brave_api_key": brave_api_key,
            "tavily_api_key": tavily_api_key,
            "searxng_url": searxng_url,
            "searxng_api_key": searxng_api_key,
            "blend_engines": blend_engines,
            "brave_base_url": brave_base_url,
            "tavily_base_url": tavily_base_url,
            "mojeek_api_key": mojeek_api_key,
            "mojeek_base_url": mojeek_base_url,
            "blend_timeout": blend_timeout,
            "anthropic_api_key": anthropic_api_key,
            "openai_api_key": openai_api_key,
            "openrouter_api_key": openrouter_api_key,
            "gemini_api_key": gemini_api_key,
            "anthropic_model": anthropic_model,
            "openai_model": openai_model,
            "openrouter_model": openrouter_model,
            "gemini_model": gemini_model,
            "anthropic_base_url": anthropic_base_url,
            "openai_base_url": openai_base_url,
            "openrouter_base_url": openrouter_base_url,
            "gemini_base_url": gemini_base_url,
            "timeout": timeout,
            "provider_max_bytes": provider_max_bytes,
            "max_retry_wait": max_retry_wait,
            "memo_size": memo_size,
            "fetch_max_bytes": fetch_max_bytes,
            "fetch_timeout": fetch_timeout,
            "fetch_max_redirects": fetch_max_redirects,
            "output_chars": output_chars,
            "allow_domains": allow_domains,
            "deny_domains": deny_domains,
            "fetch_proxy": fetch_proxy,
            "fetch_allow_private": fetch_allow_private,
            "fetch_concurrency": fetch_concurrency,
            "convert_workers": convert_workers,
            "per_host_concurrency": per_host_concurrency,
            "per_host_rate": per_host_rate,
            "bulk_robots": bulk_robots,
        }
        try:
            self.settings = Settings.resolve(explicit)
        except ValidationError as exc:
            raise ConfigurationError(f"bad configuration: {validation_message(exc)}") from None
        self._redactor = Redactor(self.settings.secrets())
        self._configured: list[Provider] = []
        self.unconfigured: dict[str, str] = {}
        for name, cls in PROVIDERS.items():
            missing = cls.missing(self.settings)
            if missing is None:
                self._configured.append(cls.from_settings(self.settings))
            else:
                self.unconfigured[name] = missing
        redact_library_logs(self._redactor)
        if self._redactor:  # what providers read from a vendor is redacted before parsing
            for configured in self._configured:
                if isinstance(configured, HttpProvider):
                    configured.redact = self._redactor.mask
        self._fees = fees if fees is not None else Fees.from_environment()
        #: Asked before a paid engine joins a blend, told what it cost (``blend.Meter``).
        self.meter: Meter = meter if meter is not None else BudgetMeter()
        self._blend_cache = blend_cache
        self._blend = BlendProvider(self._blend_engines())
        self._pinned = self._check_pin(self.settings.provider)
        self._memo: Memo[SearchResponse] = Memo(self.settings.memo_size)
        # Bulkheads: each provider its own connections, each blocking engine its own threads.
        self._clients = ProviderClients(
            user_agent=_USER_AGENT, http_client=http_client, async_http_client=async_http_client
        )
        self._lanes = BlockingLanes()
        self._pages: Memo[Page] = Memo(_PAGE_MEMO_SIZE if self.settings.memo_size else 0)
        self._fetcher = Fetcher(
            policy=self._policy(fetch_policy),
            resolver=resolver or system_resolver,
            limits=FetchLimits(
                max_bytes=self.settings.fetch_max_bytes,
                deadline_s=self.settings.fetch_timeout,
                max_redirects=self.settings.fetch_max_redirects,
            ),
            verify=verify,
            proxy=(
                self.settings.fetch_proxy.get_secret_value() if self.settings.fetch_proxy else None
            ),
            user_agent=_USER_AGENT,
        )
        self._robots = RobotsCache(self._fetcher)
        self._pace = HostPace()
        self._host_slots = HostSlots(self.settings.per_host_concurrency)
        workers = self.settings.convert_workers
        self._converters = ConversionWorkers(default_workers() if workers is None else workers)

    def _policy(self, given: JailPolicy | None) -> JailPolicy:
        """Model-chosen URLs: public addresses only (unless the operator opened private ones),
        and the operator's domain lists (``allow_domains``/``deny_domains``, arguments or
        environment), which a policy the host passes is narrowed by, never replaces."""
        try:
            if given is None:
                return JailPolicy(
                    allow_private=self.settings.fetch_allow_private,
                    allow_domains=frozenset(self.settings.allow_domains),
                    deny_domains=frozenset(self.settings.deny_domains),
                )
            return given.restricted(
                frozenset(self.settings.allow_domains), frozenset(self.settings.deny_domains)
            )
        except ValueError as exc:
            raise ConfigurationError(f"bad domain list: {exc}") from None

    def _blend_engines(self) -> list[Engine]:
        """Each ddgs backend, then each configured keyed provider (answers are not blended);
        only those ``blend_engines`` names, when it names any."""
        engines = self._every_blend_engine()
        chosen = self.settings.blend_engines
        if not chosen:
            return engines
        names = [engine.name for engine in engines]
        if unknown := [name for name in chosen if name not in names]:
            raise ConfigurationError(
                f"blend_engines names {', '.join(map(repr, unknown))}, which is not an engine "
                f"here: choose among {', '.join(names) or 'none (install ddgs or set a key)'}"
            )
        return [engine for engine in engines if engine.name in chosen]

    def _every_blend_engine(self) -> list[Engine]:
        engines = []
        if "ddgs" not in self.unconfigured:
            for backend in text_backends():
                engines.append(
                    Engine(
                        f"ddgs/{backend}",
                        DdgsProvider(backend),
                        ddgs_capabilities(backend, DdgsProvider.capabilities),
                    )
                )
        for provider in self._configured:
            if provider.name in _BLEND_PROVIDERS:
                capabilities = {**provider.capabilities, "include_answer": Support.UNSUPPORTED}
                engines.append(
                    Engine(provider.name, provider, capabilities, paid=provider.name in PAID)
                )
        return engines

    def _check_pin(self, name: str) -> str | None:
        if name == "auto":
            return None
        if name == "blend":
            if not self._blend.engines:
                raise ProviderNotConfiguredError(
                    "blend", "it has no engines: install the ddgs extra, or set a provider's key"
                )
            return name
        if name not in PROVIDERS:
            raise ConfigurationError(
                f"unknown search provider {name!r}: choose one of {', '.join(CHOICES)}"
            )
        if name in self.unconfigured:
            raise ProviderNotConfiguredError(name, self.unconfigured[name])
        return name

    @property
    def providers(self) -> list[str]:
        """Names of the configured providers, in the order ``auto`` tries them."""
        return [p.name for p in self._configured]

    def honoured_options(self) -> frozenset[str]:
        """Options a search can use here: the pinned provider's, or (``auto``) those at
        least one configured provider honours, since routing will pick that one."""
        if self._pinned == "blend":
            return frozenset(
                option
                for option, support in self._blend.capabilities.items()
                if support is not Support.UNSUPPORTED
            )
        candidates = [p for p in self._configured if self._pinned in (None, p.name)]
        return frozenset(
            option
            for provider in candidates
            for option, support in provider.capabilities.items()
            if support is not Support.UNSUPPORTED
        )

    def __repr__(self) -> str:
        return f"WebSearch(provider={self.settings.provider!r}, configured={self.providers})"

    # -- search ----------------------------------------------------------------------------

    @public("search")
    def search(
        self,
        query: str,
        *,
        count: int = 5,
        site: str | None = None,
        include_domains: Iterable[str] | None = None,
        exclude_domains: Iterable[str] | None = None,
        freshness: Freshness | None = None,
        date_from: dt.date | str | None = None,
        date_to: dt.date | str | None = None,
        include_answer: bool = False,
        country: str | None = None,
        language: str | None = None,
        locale: str | None = None,
        safesearch: SafeSearch | None = None,
        page: int = 1,
        engines: Iterable[str] | None = None,
        provider: str | None = None,
    ) -> SearchResponse:
        """Search and return the results; raises a ``WebSearchError`` the model can act on.

        ``site`` is a shorthand for one entry of ``include_domains``; ``engines`` chooses
        among a blend's engines (``self.engines``: a name none of them has sits the search out,
        said in ``skipped``). ``locale`` (``en-US``) is a hint each engine follows as far as it
        can; ``language`` and ``country`` are strict. The whole search, its one retry
        included, ends within ``timeout`` seconds.
        """
        args = dict(locals())
        del args["self"]
        request, chosen, query_sent, key = self._plan(args)
        if (hit := self._memo.get(key)) is not None:
            return self._recalled(hit)
        if isinstance(chosen, BlendProvider):
            return self._blend_search(request, key)
        started = time.perf_counter()
        if isinstance(chosen, BlockingProvider):
            answer = _spent(self._blocking(chosen, request, query_sent), 1)
        else:
            assert isinstance(chosen, HttpProvider)
            answer = self._exchange(chosen, request, query_sent)
        return self._finish(key, request, chosen, query_sent, answer, started)

    @apublic("search")
    async def asearch(
        self,
        query: str,
        *,
        count: int = 5,
        site: str | None = None,
        include_domains: Iterable[str] | None = None,
        exclude_domains: Iterable[str] | None = None,
        freshness: Freshness | None = None,
        date_from: dt.date | str | None = None,
        date_to: dt.date | str | None = None,
        include_answer: bool = False,
        country: str | None = None,
        language: str | None = None,
        locale: str | None = None,
        safesearch: SafeSearch | None = None,
        page: int = 1,
        engines: Iterable[str] | None = None,
        provider: str | None = None,
    ) -> SearchResponse:
        """``search`` for the event loop; a blocking provider runs on a worker thread."""
        args = dict(locals())
        del args["self"]
        request, chosen, query_sent, key = self._plan(args)
        if (hit := self._memo.get(key)) is not None:
            return self._recalled(hit)
        if isinstance(chosen, BlendProvider):
            return await self._ablend_search(request, key)
        started = time.perf_counter()
        if isinstance(chosen, BlockingProvider):
            answer = _spent(await self._ablocking(chosen, request, query_sent), 1)
        else:
            assert isinstance(chosen, HttpProvider)
            answer = await self._aexchange(chosen, request, query_sent)
        return self._finish(key, request, chosen, query_sent, answer, started)

    # A provider's exchange is driven step by step under ONE deadline (the session's
    # ``timeout``): every call, its retry, and any redirect resolution share it.

    def _exchange(
        self,
        provider: HttpProvider,
        request: SearchRequest,
        query: str,
        deadline: float | None = None,
    ) -> ProviderAnswer:
        deadline = deadline or time.monotonic() + self.settings.timeout
        flow = provider.exchange(request, query)
        reply: object = None
        calls = 0
        while True:
            try:
                step = flow.send(reply)
            except StopIteration as done:
                return _spent(done.value, calls)
            if isinstance(step, Call):
                calls += 1
                lane = self._clients.sync(provider.name)
                reply = send.send(
                    lane.client, provider, step.request, slots=lane.slots, **self._budget(deadline)
                )
            else:
                reply = self._locate(step.urls, deadline)

    async def _aexchange(
        self,
        provider: HttpProvider,
        request: SearchRequest,
        query: str,
        deadline: float | None = None,
    ) -> ProviderAnswer:
        deadline = deadline or time.monotonic() + self.settings.timeout
        flow = provider.exchange(request, query)
        reply: object = None
        calls = 0
        while True:
            try:
                step = flow.send(reply)
            except StopIteration as done:
                return _spent(done.value, calls)
            if isinstance(step, Call):
                calls += 1
                alane = self._clients.async_(provider.name)
                reply = await send.asend(
                    alane.client,
                    provider,
                    step.request,
                    slots=alane.slots,
                    **self._budget(deadline),
                )
            else:
                reply = await self._alocate(step.urls, deadline)

    # -- the blend: every engine at once, one deadline, fused ---------------------------------

    @property
    def engines(self) -> list[str]:
        """The blend's engines here, by name: what ``engines=`` may choose among."""
        return [engine.name for engine in self._blend.engines]

    def _chosen_engines(self, request: SearchRequest) -> tuple[tuple[Engine, ...], list[str]]:
        """The engines ``engines=`` names (every one, when it names none), and the names that
        are no engine here; a list naming only those is refused."""
        if not request.engines:
            return self._blend.engines, []
        matched, unknown = match_engines(request.engines, self.engines)
        if not matched:
            raise InvalidRequestError(
                f"no engine named {', '.join(map(repr, unknown))} in this blend: choose among "
                f"{', '.join(self.engines) or 'none (the blend has no engines here)'}"
            )
        return tuple(e for e in self._blend.engines if e.name in matched), unknown

    def _blend_refusal(self, request: SearchRequest) -> None:
        """Refuse, before anything is sent, a search no engine of the blend can honour."""
        chosen, _ = self._chosen_engines(request)
        if any(not unmet_options(request, e.capabilities) for e in chosen):
            return
        gaps = "; ".join(
            f"{e.name} lacks {', '.join(unmet_options(request, e.capabilities))}" for e in chosen
        )
        raise UnsupportedOptionError("blend", request.options_used(), [], detail=gaps)

    def _blend_plan(self, request: SearchRequest) -> BlendPlan:
        """Which engines run: those that honour every option and, if paid, that the meter
        allows. Each left out is named with its reason."""
        engines: list[Engine] = []
        chosen, unknown = self._chosen_engines(request)
        skipped = dict.fromkeys(unknown, NO_SUCH_ENGINE)
        fees: dict[str, float] = {}
        try:
            for engine in chosen:
                if unmet := unmet_options(request, engine.capabilities):
                    skipped[engine.name] = f"cannot honour {', '.join(unmet)}"
                elif (
                    len(rewrite_query(request, engine.capabilities))
                    > engine.provider.max_query_chars
                ):
                    skipped[engine.name] = "the query with its site: filters is too long for it"
                elif engine.paid and (refused := self._metered(engine.name)) is not None:
                    skipped[engine.name] = refused
                else:
                    if engine.paid:
                        fees[engine.name] = self._fees.of(engine.name)
                    engines.append(engine)
        except BaseException:  # interrupted (cancelled): release what the meter already held
            self._settle(fees, {})
            raise
        if not engines:
            reasons = set(skipped.values()) - {NO_SUCH_ENGINE}
            if reasons == {BUDGET_SPENT}:
                raise RateLimitedError("blend", None, quota=True)
            if reasons == {METER_DOWN}:
                raise ProviderUnavailableError("blend", f"every engine is paid and {METER_DOWN}")
            every = "; ".join(f"{name} ({why})" for name, why in skipped.items())
            raise InvalidRequestError(f"no engine of the blend can run this search: {every}")
        return BlendPlan(tuple(engines), skipped, fees)

    def _metered(self, engine: str) -> str | None:
        """Why a paid engine sits this search out (its budget spent, the meter failing), or
        ``None`` when the meter holds its fee. A meter that fails closes on spend, never on
        answer: the free engines still search."""
        try:
            allowed = self.meter.allow(engine, self._fees.of(engine))
        except Exception as exc:
            logger.warning("meter.allow failed (%s): %s sits this search out", _kind(exc), engine)
            return METER_DOWN
        return None if allowed else BUDGET_SPENT

    def _settle(self, fees: Mapping[str, float], paid: Mapping[str, float]) -> None:
        """Tell the meter what each held fee cost. A meter that fails here is logged (engine,
        cents) for the operator to reconcile; the search it metered is still answered."""
        for name in fees:
            cents = paid.get(name, 0.0)
            try:
                self.meter.spent(name, cents)
            except Exception as exc:  # the others are still settled
                logger.warning(
                    "meter.spent failed (%s): %s's %g cents for a search are not recorded",
                    _kind(exc),
                    name,
                    cents,
                )

    @contextlib.contextmanager
    def _settling(self, plan: BlendPlan) -> Iterator[None]:
        """If the blend ends before ``_blended`` settles the meter (a cancelled task, a bug),
        each fee the meter holds for it is released as unspent."""
        try:
            yield
        except BaseException:
            if not plan.settled:
                plan.settled = True
                self._settle(plan.fees, {})
            raise

    def _blended(
        self,
        plan: BlendPlan,
        answers: list[ProviderAnswer | WebSearchError | None],
        request: SearchRequest,
    ) -> ProviderAnswer:
        """Fuse, settle the meter, log each engine's outcome; fail only if all are down."""
        results, outcomes, paid = blend_answer(plan, answers, request.count)
        plan.settled = True
        self._settle(plan.fees, paid)
        for outcome in outcomes:
            logger.info(
                "blend engine=%s status=%s results=%d reason=%s",
                outcome.engine,
                outcome.status,
                outcome.results,
                outcome.error or "-",
            )
        if all(outcome.status == "down" for outcome in outcomes):
            every = "; ".join(f"{o.engine} ({o.error})" for o in outcomes)
            raise ProviderUnavailableError(
                "blend", f"every engine is down: {every}", outcomes=outcomes
            )
        # Searches that reached an engine (it answered, or it was cut off mid-request).
        reached = [o for o in outcomes if o.status != "down" or o.error == "timeout"]
        usage = Usage(searches=len(reached), requests=len(plan.engines), paid=paid)
        return ProviderAnswer(
            results=results,
            outcomes=outcomes,
            skipped=plan.skipped,
            usage=usage,
            suggestions=merged_suggestions(answers),
        )

    def _engine_bug(self, engine: Engine, exc: Exception) -> InternalError:
        if logger.isEnabledFor(logging.DEBUG):
            trace = "".join(traceback.format_exception(exc))
            logger.debug(
                "blend engine %s failed unexpectedly:\n%s",
                engine.name,
                self._redactor.redact(trace),
            )
        return InternalError(f"the {engine.name} engine", exc)

    def _engine_search(
        self, engine: Engine, request: SearchRequest, deadline: float
    ) -> ProviderAnswer | WebSearchError:
        """One engine's answer or its error, never raised: one engine never fails a blend."""
        query = rewrite_query(request, engine.capabilities)
        request = localised(request, engine.capabilities)
        try:
            if isinstance(engine.provider, BlockingProvider):
                search = _blocking_call(engine.provider, request, query)
                lane = self._lanes[engine.name]
                return lane.run(search, deadline, self.settings.blend_timeout)
            assert isinstance(engine.provider, HttpProvider)
            return self._exchange(engine.provider, request, query, deadline)
        except WebSearchError as exc:
            return exc
        except Exception as exc:  # a bug in one engine's path: reported, not raised
            return self._engine_bug(engine, exc)

    async def _aengine_search(
        self, engine: Engine, request: SearchRequest, deadline: float
    ) -> ProviderAnswer | WebSearchError:
        query = rewrite_query(request, engine.capabilities)
        request = localised(request, engine.capabilities)
        try:
            if isinstance(engine.provider, BlockingProvider):
                search = _blocking_call(engine.provider, request, query)
                lane = self._lanes[engine.name]
                return await lane.arun(search, deadline, self.settings.blend_timeout)
            assert isinstance(engine.provider, HttpProvider)
            return await self._aexchange(engine.provider, request, query, deadline)
        except WebSearchError as exc:
            return exc
        except Exception as exc:
            return self._engine_bug(engine, exc)

    def _blend_search(self, request: SearchRequest, key: tuple[Any, ...]) -> SearchResponse:
        shared = (request, tuple(e.name for e in self._blend.engines))
        if self._blend_cache is not None and (hit := self._blend_cache.get(shared)):
            return self._recalled(hit)
        started = time.perf_counter()
        plan = self._blend_plan(request)
        with self._settling(plan):
            deadline = time.monotonic() + self.settings.blend_timeout
            workers = ThreadPoolExecutor(len(plan.engines), thread_name_prefix="websearch-blend")
            try:
                pending = [
                    workers.submit(self._engine_search, engine, request, deadline)
                    for engine in plan.engines
                ]
                wait(pending, timeout=max(0.0, deadline - time.monotonic()))
            finally:
                # An engine still silent is cut off: nothing waits for it (ddgs ends on its
                # own timeout, an HTTP engine at the deadline held at its socket).
                workers.shutdown(wait=False, cancel_futures=True)
            answers = [f.result() if f.done() and not f.cancelled() else None for f in pending]
            answer = self._blended(plan, answers, request)
        response = self._finish(key, request, self._blend, request.query, answer, started)
        self._share(shared, response)
        return response

    def _share(self, key: tuple[Any, ...], response: SearchResponse) -> None:
        """Put a blend answer in the shared cache only when it says nothing about this
        session's luck or purse: no engine down, none left out for the budget."""
        if self._blend_cache is None:
            return
        if any(o.status == "down" for o in response.outcomes):
            return
        if BUDGET_SPENT in response.skipped.values():
            return
        self._blend_cache.put(key, response)

    async def _ablend_search(self, request: SearchRequest, key: tuple[Any, ...]) -> SearchResponse:
        shared = (request, tuple(e.name for e in self._blend.engines))
        if self._blend_cache is not None and (hit := self._blend_cache.get(shared)):
            return self._recalled(hit)
        started = time.perf_counter()
        plan = self._blend_plan(request)
        deadline = time.monotonic() + self.settings.blend_timeout
        answers: list[ProviderAnswer | WebSearchError | None] = [None] * len(plan.engines)

        async def one(index: int, engine: Engine) -> None:
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                answers[index] = await self._aengine_search(engine, request, deadline)

        with self._settling(plan):
            async with anyio.create_task_group() as group:
                for index, engine in enumerate(plan.engines):
                    group.start_soon(one, index, engine)
            answer = self._blended(plan, answers, request)
        response = self._finish(key, request, self._blend, request.query, answer, started)
        self._share(shared, response)
        return response

    def _budget(self, deadline: float) -> dict[str, Any]:
        """What every provider call may spend: the search's deadline, its retry wait, its
        answer ceiling."""
        return {
            "cap": self.settings.max_retry_wait,
            "seconds": self.settings.timeout,
            "max_bytes": self.settings.provider_max_bytes,
            "deadline": deadline,
        }

    def _locate(self, urls: tuple[str, ...], deadline: float) -> dict[str, str]:
        """Where each redirect link leads, through the URL jail; links not resolved in time
        (or refused, or not redirecting) are left out. All links at once, as ``_alocate``."""
        if not urls:
            return {}
        end = min(deadline, time.monotonic() + LOCATE_BUDGET_S)
        workers = ThreadPoolExecutor(len(urls), thread_name_prefix="websearch-locate")
        try:
            pending = {workers.submit(self._fetcher.locate, url, end): url for url in urls}
            done, _ = wait(pending, timeout=max(0.0, end - time.monotonic()))
        finally:
            # Nothing waits for the stragglers: each ends at ``end`` on its own socket deadline.
            workers.shutdown(wait=False, cancel_futures=True)
        found: dict[str, str] = {}
        for future in done:
            with contextlib.suppress(WebSearchError):
                target = future.result()
                if target is not None:
                    found[pending[future]] = target
        return found

    async def _alocate(self, urls: tuple[str, ...], deadline: float) -> dict[str, str]:
        end = min(deadline, time.monotonic() + LOCATE_BUDGET_S)
        found: dict[str, str] = {}

        async def one(url: str) -> None:
            with contextlib.suppress(WebSearchError):
                target = await self._fetcher.alocate(url, end)
                if target is not None:
                    found[url] = target

        with anyio.move_on_after(max(0.0, end - time.monotonic())):
            async with anyio.create_task_group() as group:
                for url in urls:
                    group.start_soon(one, url)
        return found

    @staticmethod
    def _recalled(hit: SearchResponse) -> SearchResponse:
        """A memo hit: the same answer, which spent nothing this time."""
        return hit.model_copy(update={"from_memo": True, "elapsed_ms": 0.0, "usage": Usage()})

    # A blocking provider runs on its lane's threads even for a sync search, so the caller
    # can stop waiting at the deadline; the library's own timeout ends the abandoned call.

    def _blocking(
        self, provider: BlockingProvider, request: SearchRequest, query: str
    ) -> ProviderAnswer:
        timeout = self.settings.timeout
        search = _blocking_call(provider, request, query)
        return self._lanes[provider.name].run(search, time.monotonic() + timeout, timeout)

    async def _ablocking(
        self, provider: BlockingProvider, request: SearchRequest, query: str
    ) -> ProviderAnswer:
        timeout = self.settings.timeout
        search = _blocking_call(provider, request, query)
        return await self._lanes[provider.name].arun(search, time.monotonic() + timeout, timeout)

    def _plan(
        self, args: dict[str, Any]
    ) -> tuple[SearchRequest, Provider | BlendProvider, str, tuple[Any, ...]]:
        """Validate, choose the provider and rewrite the query; nothing is sent here."""
        override = args.pop("provider")
        if override is not None and not isinstance(override, str):
            raise InvalidRequestError(
                f"provider must be a provider's name: one of {', '.join(CHOICES)}"
            )
        try:
            pin = self._pinned if override is None else self._check_pin(override.strip().lower())
        except ConfigurationError as exc:  # this call's choice, not the host's configuration
            raise InvalidRequestError(str(exc)) from None
        site, include = args.pop("site"), args.pop("include_domains")
        if site:  # validation of whatever ``include`` is happens in SearchRequest
            many = isinstance(include, Iterable) and not isinstance(include, str)
            include = [site, *include] if many else [site, include]
            include = [domain for domain in include if domain is not None]
        try:
            request = SearchRequest.model_validate({**args, "include_domains": include})
        except ValidationError as exc:
            raise InvalidRequestError(argument_message(exc)) from None
        if request.engines and pin != "blend":
            raise InvalidRequestError(
                "engines chooses among a blend's engines: search with provider='blend', or "
                "leave engines out"
            )
        if pin == "blend":
            self._blend_refusal(request)
            return request, self._blend, request.query, (pin, request)
        chosen = choose_provider(request, pin, self._configured)
        sent = localised(request, chosen.capabilities)
        return sent, chosen, rewrite_query(request, chosen.capabilities), (pin, request)

    def refusal_for(self, options: Mapping[str, Any]) -> WebSearchError | None:
        """The error a search with ``options`` would raise before sending anything, if any.

        For messages about arguments a tool's schema left out (``tooling.argument_error``).
        """
        args: dict[str, Any] = {
            name: parameter.default
            for name, parameter in inspect.signature(self.search).parameters.items()
        }
        args.update(query="probe", **options)
        try:
            self._plan(args)
        except WebSearchError as refusal:
            return detached(refusal)
        return None

    def _finish(
        self,
        key: tuple[Any, ...],
        request: SearchRequest,
        provider: Provider | BlendProvider,
        query_sent: str,
        answer: ProviderAnswer,
        started: float,
    ) -> SearchResponse:
        elapsed_ms = (time.perf_counter() - started) * 1000
        if answer.answer and self._redactor:
            # Redacted here, span by span, so the citations still point at their words.
            text, citations = self._redacted_answer(answer.answer, answer.citations)
            answer = dataclasses.replace(answer, answer=text, citations=citations)
        response = SearchResponse(
            query=request.query,
            provider=provider.name,
            results=answer.results,
            answer=answer.answer,
            citations=answer.citations,
            answer_truncated=answer.answer_truncated,
            skipped=answer.skipped,
            suggestions=answer.suggestions,
            usage=answer.usage or Usage(),
            sent_query=query_sent,
            outcomes=answer.outcomes,
            elapsed_ms=elapsed_ms,
        )
        if self._redactor:  # a provider that echoes the request must not echo a key
            response = SearchResponse.model_validate(
                clean_strings(response.model_dump(), self._redactor.redact)
            )
        logger.info(
            "search provider=%s query=%r results=%d searches=%d requests=%d elapsed_ms=%.0f",
            provider.name,
            self._redactor.redact(query_sent),
            len(answer.results),
            response.usage.searches,
            response.usage.requests,
            elapsed_ms,
        )
        self._memo.put(key, response)
        return response

    def _redacted_answer(
        self, answer: str, citations: list[AnswerCitation]
    ) -> tuple[str, list[AnswerCitation]]:
        """``answer`` with every secret redacted, and its citations moved to match; a secret
        across a span's edge cannot be moved, so those citations are dropped."""
        redacted = self._redactor.redact(answer)
        if redacted == answer:
            return answer, citations
        cuts = sorted({0, len(answer), *(c.start for c in citations), *(c.end for c in citations)})
        pieces = [self._redactor.redact(answer[a:b]) for a, b in itertools.pairwise(cuts)]
        if "".join(pieces) != redacted:
            return redacted, []
        moved, position = {}, 0
        for cut, piece in zip(cuts, [*pieces, ""], strict=True):
            moved[cut] = position
            position += len(piece)
        return redacted, [
            c.model_copy(update={"start": moved[c.start], "end": moved[c.end]}) for c in citations
        ]

    # -- fetch -----------------------------------------------------------------------------

    @public("fetch")
    def fetch(self, url: str, *, max_bytes: int | None = None, offset: int = 0) -> Page:
        """Fetch one page through the URL jail; ``page.render()`` is what the model reads.

        ``offset`` continues a long page where the previous render cut it, from the session's
        memo when the page is there (no refetch). HTTP error statuses come back as a ``Page``
        (``page.ok`` is False); refusals and network failures raise a ``FetchError``.
        """
        request, target, key, hit = self._page_memo(url, max_bytes, offset)
        if hit is not None:
            return hit
        page = self._fetcher.fetch(target, max_bytes=request.max_bytes)
        return self._remember_page(key, page, request.offset)

    @apublic("fetch")
    async def afetch(self, url: str, *, max_bytes: int | None = None, offset: int = 0) -> Page:
        """``fetch`` for the event loop."""
        request, target, key, hit = self._page_memo(url, max_bytes, offset)
        if hit is not None:
            return hit
        page = await self._fetcher.afetch(target, max_bytes=request.max_bytes)
        return self._remember_page(key, page, request.offset)

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
        (``scrape.py``): for programs that store or index pages, not for a model to read.

        ``deadline_s`` may shorten the fetch's deadline, never lengthen it. HTTP error statuses
        come back as a ``ScrapedPage``; refusals and network failures raise a ``FetchError``.
        """
        target, options = self._scrape_plan(
            url, formats, main_content, include_tags, exclude_tags, deadline_s, max_bytes
        )
        fetched = self._fetcher.fetch_raw(
            target, max_bytes=options.max_bytes, deadline_s=options.deadline_s
        )
        return self._logged(scrape(fetched, options))

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
        target, options = self._scrape_plan(
            url, formats, main_content, include_tags, exclude_tags, deadline_s, max_bytes
        )
        fetched = await self._fetcher.afetch_raw(
            target, max_bytes=options.max_bytes, deadline_s=options.deadline_s
        )
        return self._logged(await self._off_the_loop(fetched, scrape, fetched, options))

    def _scrape_plan(
        self,
        url: object,
        formats: object,
        main_content: object,
        include_tags: object,
        exclude_tags: object,
        deadline_s: object,
        max_bytes: object,
    ) -> tuple[str, ScrapeOptions]:
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
        options = scrape_options(
            **lists, main_content=main_content, deadline_s=deadline_s, max_bytes=max_bytes
        )
        return parse_url(url, self._fetcher.policy).url, options  # refuses before any I/O

    @staticmethod
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

    # -- bulk reads -------------------------------------------------------------------------

    # A bulk read is a pipeline of two stages with their own limits: the network (at most
    # ``concurrency`` pages on the wire) and conversion (``convert_workers`` processes,
    # ``workers.py``). A page's network slot is freed when its body has arrived, so slow
    # sites do not idle the cores and big pages do not idle the network. Each URL is jailed,
    # checked against its site's robots.txt, spaced and limited per host, then fetched.

    def fetch_many(
        self, urls: Iterable[str], *, concurrency: int | None = None, robots: bool | None = None
    ) -> Iterator[tuple[str, Page | WebSearchError]]:
        """Fetch ``urls`` on up to ``concurrency`` threads, yielding in input order.

        A failure is yielded in place of its page, never dropped, and never stops the batch.
        At most ``2 * concurrency`` pages are in flight or waiting, so a long list does not
        pile up in memory. ``concurrency`` defaults to the ``fetch_concurrency`` setting and
        ``robots`` (honour each site's robots.txt) to ``bulk_robots``.
        """
        batch = self._batch(concurrency, robots)
        window: deque[tuple[str, Future[Page]]] = deque()
        pool = ThreadPoolExecutor(max_workers=batch.concurrency)
        try:
            for url in _url_iterable(urls):
                fetched = pool.submit(self._bulk_fetch, url, batch)
                window.append((url, self._then_convert(fetched)))
                if len(window) >= 2 * batch.concurrency:
                    yield _settled(*window.popleft())
            while window:
                yield _settled(*window.popleft())
        finally:
            # Left early (a break, an exception): pages not started are not fetched, and no
            # thread keeps sleeping through a host's crawl delay.
            batch.stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

    async def afetch_many(
        self, urls: Iterable[str], *, concurrency: int | None = None, robots: bool | None = None
    ) -> AsyncIterator[tuple[str, Page | WebSearchError]]:
        """``fetch_many`` on the event loop: up to ``concurrency`` fetches at once."""
        batch = self._batch(concurrency, robots)
        network = asyncio.Semaphore(batch.concurrency)

        async def one(url: str) -> Page | WebSearchError:
            try:
                fetched = await self._abulk_fetch(url, batch, network)
                if isinstance(fetched, Page):
                    return fetched
                return await self._aconverted(fetched)
            except WebSearchError as exc:
                return detached(exc)

        window: deque[tuple[str, asyncio.Task[Page | WebSearchError]]] = deque()
        try:
            for url in _url_iterable(urls):
                window.append((url, asyncio.ensure_future(one(url))))
                if len(window) >= 2 * batch.concurrency:
                    url_done, task = window.popleft()
                    yield url_done, await task
            while window:
                url_done, task = window.popleft()
                yield url_done, await task
        finally:
            for _, task in window:
                task.cancel()

    def _batch(self, concurrency: object, robots: object) -> _Batch:
        if concurrency is None:
            concurrency = self.settings.fetch_concurrency
        if robots is None:
            robots = self.settings.bulk_robots
        if not isinstance(robots, bool):
            raise InvalidRequestError("robots must be True or False")
        rate = self.settings.per_host_rate
        return _Batch(
            concurrency=_positive_int("concurrency", concurrency),
            robots=robots,
            interval=1 / rate if rate else 0.0,
        )

    def _bulk_target(self, url: object) -> tuple[Target, tuple[str, int], Page | None]:
        _, target, key, hit = self._page_memo(url, None, 0)
        return target, key, hit

    def _bulk_fetch(self, url: object, batch: _Batch) -> _BulkFetched | Page:
        """One URL's network stage, on a batch thread: the memo's page, or the raw fetch."""
        with boundary("fetch", self._redactor):
            target, key, hit = self._bulk_target(url)
            if hit is not None:
                return hit
            with self._host_slots.hold(target.host):
                delay = self._robots.check(target) if batch.robots else None
                self._pace.wait(target.host, max(batch.interval, delay or 0.0), batch.stop)
                fetched = self._fetcher.fetch_raw(target)
            return _BulkFetched(key, fetched)

    async def _abulk_fetch(
        self, url: object, batch: _Batch, network: asyncio.Semaphore
    ) -> _BulkFetched | Page:
        with boundary("fetch", self._redactor):
            target, key, hit = self._bulk_target(url)
            if hit is not None:
                return hit
            async with self._host_slots.ahold(target.host), network:
                # Inside the network slot, as a batch thread is: a turn booked while waiting
                # for a slot would have passed by the time one is free.
                delay = await self._robots.acheck(target) if batch.robots else None
                await self._pace.await_turn(target.host, max(batch.interval, delay or 0.0))
                fetched = await self._fetcher.afetch_raw(target)
            return _BulkFetched(key, fetched)

    def _then_convert(self, fetching: Future[_BulkFetched | Page]) -> Future[Page]:
        """The page of a network stage's future: converted on a worker once the body is in."""
        page: Future[Page] = Future()

        def settle(make: Callable[[], Page]) -> None:
            try:
                with boundary("fetch", self._redactor):
                    page.set_result(make())
            except BaseException as exc:
                page.set_exception(exc)

        def fetched(done: Future[_BulkFetched | Page]) -> None:
            try:
                outcome = done.result()
                if isinstance(outcome, Page):
                    page.set_result(outcome)
                elif self._converters.worth_a_worker(*_conversion_of(outcome.fetched)[:2]):
                    converting = self._converters.submit(*_conversion_of(outcome.fetched))
                    converting.add_done_callback(
                        lambda done: settle(lambda: self._bulk_page(outcome, done.result()))
                    )
                else:  # small or not HTML: cheaper here than a round trip
                    settle(lambda: self._bulk_page(outcome, outcome.fetched.convert()))
            except BaseException as exc:  # never leave the page's future unresolved
                if not page.done():
                    page.set_exception(exc)

        fetching.add_done_callback(fetched)
        return page

    async def _aconverted(self, outcome: _BulkFetched) -> Page:
        fetched = outcome.fetched
        with boundary("fetch", self._redactor):
            converted = await self._off_the_loop(fetched, convert, *_conversion_of(fetched))
            return self._bulk_page(outcome, converted)

    async def _off_the_loop(self, fetched: Fetched, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` for one fetched page (``convert``, ``scrape``), never holding
        the event loop's thread for longer than a small page takes: on a worker process when
        the page is worth one, else on a thread."""
        if self._converters.worth_a_worker(fetched.body, fetched.content_type):
            url = fetched.final.url
            return await asyncio.wrap_future(self._converters.call(url, function, *args))
        if self._converters.workers and len(fetched.body) < self._converters.in_process_below:
            return function(*args)  # a small page: ~1 ms, less than a thread hop
        return await anyio.to_thread.run_sync(function, *args)

    def start_workers(self) -> None:
        """Start the conversion worker processes now and wait until they are ready, so that
        every page worth one is converted on one from the first (``websearch serve`` does
        this at start-up: its event loop must never be held by a conversion). Otherwise they
        start on their own once a session has read enough pages."""
        self._converters.start()

    def _bulk_page(self, outcome: _BulkFetched, converted: Converted) -> Page:
        return self._remember_page(outcome.key, page_of(outcome.fetched, converted), 0)

    def _page_memo(
        self, url: object, max_bytes: object, offset: object
    ) -> tuple[FetchRequest, Target, tuple[str, int], Page | None]:
        """The request, its jailed target (refused before any I/O; the fetch reuses it), its
        memo key, and the memo's page if it holds one."""
        try:
            request = FetchRequest(url=url, max_bytes=max_bytes, offset=offset)  # type: ignore[arg-type]
        except ValidationError as exc:
            raise InvalidRequestError(argument_message(exc)) from None
        target = parse_url(request.url, self._fetcher.policy)
        key = (target.url, self._fetcher.limits.bytes_for(request.max_bytes))
        hit = self._pages.get(key)
        if hit is None:
            return request, target, key, None
        return (
            request,
            target,
            key,
            self._at_offset(hit.model_copy(update={"from_memo": True}), request.offset),
        )

    def _remember_page(self, key: tuple[str, int], page: Page, offset: int) -> Page:
        page = page.model_copy(update={"max_chars": self.settings.output_chars})
        logger.info(
            "fetch url=%s status=%d bytes=%d truncated=%s elapsed_ms=%.0f",
            page.final_url,
            page.status,
            page.bytes_read,
            page.truncated,
            page.elapsed_ms,
        )
        self._pages.put(key, page)
        return self._at_offset(page, offset)

    @staticmethod
    def _at_offset(page: Page, offset: int) -> Page:
        if offset and offset >= len(page.content):
            raise InvalidRequestError(
                f"offset {offset:,} is past the end of the page ({len(page.content):,} characters)"
            )
        return page.model_copy(update={"offset": offset}) if offset else page

    # -- closing ---------------------------------------------------------------------------

    # Provider calls go through transports that hold the search's deadline at the socket and
    # reuse a connection only after an exact read (``bulkheads.py``). They do not read
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
