"""The ASGI app: three doors onto one ``WebSearch`` session, gated, bounded and logged.

Routes (every one but ``/healthz`` and the OpenAPI document behind the gate, ``gates.py``):

- ``POST /v1/websearch``: the typed search — ``SearchRequest`` fields (plus ``provider``,
  ``read``, ``read_tokens``) in, ``SearchResponse`` out (or, with ``Accept: text/plain``,
  exactly what a model reads); errors as ``{"error": {"type", "message", "retryable"}}``.
- ``GET|POST /v1/websearch/search``: SearXNG's JSON API (``searxng.py``).
- ``POST /v1/scrape``, ``/v2/scrape``, ``/v1/websearch/scrape``, and the search that may scrape
  its results, ``POST /v1/search``, ``/v2/search``: Firecrawl's (``firecrawl.py``).
- ``GET /healthz``; ``GET /v1/websearch/openapi.json``.

What lives across requests (the session, its blend cache and meter, its conversion worker
processes) is made by the lifespan at start-up and closed at shutdown. Each request is
admitted by its lane's ``Admission`` (a bounded number run, a bounded number wait; beyond
that, 503 at once): searches and scrapes have a lane each, so slow pages never hold a place
a search needs, nor the reverse. Its body is read under a size ceiling and a deadline, and it
ends in one structured log line: route, status, elapsed time, each engine's outcome, cents
metered. Never a key, a query or a page. (The core's own INFO lines do carry queries and
URLs: ``websearch serve`` keeps the ``websearch_core`` logger at WARNING and this one at INFO;
do the same under another ASGI server.)

Nothing CPU-bound runs on the event loop: a page is converted on the session's worker
processes (started with the service), so ``/healthz`` and every other request are answered
while pages convert. ``/healthz`` says whether the service can serve: 503 while no key is
configured and no principal hook is set, as every gated request is then refused.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import anyio
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from websearch_core.blend import BlendCache
from websearch_core.boundary import boundary
from websearch_core.errors import (
    ConfigurationError,
    FetchError,
    FetchTimeoutError,
    InternalError,
    InvalidRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
    RateLimitedError,
    URLRefusedError,
    WebSearchError,
)
from websearch_core.fetch.scrape import ScrapedPage
from websearch_core.models import SearchResponse, argument_message
from websearch_core.reading.fanout import each_within
from websearch_core.server import firecrawl, searxng
from websearch_core.server.gates import KEY_VARIABLE, Gate, Principal, Refusal
from websearch_core.server.openapi import TypedSearch, openapi_document
from websearch_core.session import WebSearch

__all__ = ["ServiceLimits", "create_app", "default_session"]

logger = logging.getLogger("websearch_core.server")

SCRAPE_PATHS = ("/v1/scrape", "/v2/scrape", "/v1/websearch/scrape")
SEARCH_PATHS = ("/v1/search", "/v2/search")


def firecrawl_path(path: str) -> bool:
    """A path in Firecrawl's API (``/v1/scrape``, ``/v2/crawl`` …): its clients read errors
    as ``{"success": false, "error": "<message>"}``, whether or not the route is served."""
    return path in SCRAPE_PATHS or (
        path.startswith(("/v0/", "/v1/", "/v2/")) and not path.startswith("/v1/websearch")
    )


@dataclass(frozen=True)
class ServiceLimits:
    """How much the service takes on at once, and from how slow or large a client."""

    #: Searches being answered at once. Each mostly waits on its engines (up to the blend's
    #: deadline when one hangs), but starting one costs the event loop a few milliseconds:
    #: measured in a burst of 300 requests, /healthz p99 was 82 ms with 64 here and 420 ms
    #: with 128 (benchmarks/service.py, the hung-engine scenario).
    max_inflight: int = 64
    #: Scrapes being answered at once: each may hold a page of up to the read ceiling.
    max_inflight_scrapes: int = 64
    #: Requests waiting for a place, per lane; one more is answered 503 at once.
    max_queued: int = 512
    #: How long a request may wait for a place before it is answered 503.
    queue_timeout_s: float = 15.0
    #: Request bodies (a scrape, a search form) beyond this are refused unread.
    max_body_bytes: int = 1 << 20
    #: A body must arrive within this; a client trickling it gets its door's bad-request answer.
    body_timeout_s: float = 10.0
    #: A request's line and headers must arrive within this (``serve``'s protocol).
    header_timeout_s: float = 10.0
    #: The request line and headers together, in bytes.
    max_header_bytes: int = 16 * 1024
    #: Open connections; uvicorn answers 503 beyond this.
    max_connections: int = 2048
    #: On shutdown, requests in flight get this long to finish.
    graceful_shutdown_s: int = 20

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            finite = isinstance(value, int | float) and math.isfinite(value)
            if not finite or (value <= 0 and name != "max_queued") or value < 0:
                raise ConfigurationError(f"the service's {name} must be above 0, not {value}")


class Overloaded(Exception):
    """No place for this request within the limits."""


class Admission:
    """At most ``max_inflight`` requests run and ``max_queued`` wait; the rest are refused."""

    def __init__(self, limits: ServiceLimits) -> None:
        self._limits = limits
        self._places = anyio.Semaphore(limits.max_inflight)
        self.waiting = 0

    @property
    def running(self) -> int:
        return self._limits.max_inflight - self._places.value

    @contextlib.asynccontextmanager
    async def place(self) -> AsyncIterator[None]:
        try:
            # A free place is taken at once: waiting to acquire one would yield to the event
            # loop, and a burst arriving meanwhile would count as queued and be refused.
            self._places.acquire_nowait()
        except anyio.WouldBlock:
            await self._wait_for_place()
        try:
            yield
        finally:
            self._places.release()

    async def _wait_for_place(self) -> None:
        if self.waiting >= self._limits.max_queued:
            raise Overloaded from None
        self.waiting += 1
        try:
            with anyio.fail_after(self._limits.queue_timeout_s):
                await self._places.acquire()
        except TimeoutError:
            raise Overloaded from None
        finally:
            self.waiting -= 1


# -- errors, one shape per door -------------------------------------------------------------


def _status_of(exc: WebSearchError) -> int:
    if isinstance(exc, InvalidRequestError):
        return 400
    if isinstance(exc, URLRefusedError):
        return 403
    if isinstance(exc, RateLimitedError):
        return 429
    if isinstance(exc, FetchTimeoutError):
        return 504
    if isinstance(exc, ConfigurationError | ProviderUnavailableError):
        return 503
    if isinstance(exc, ProviderResponseError | FetchError):
        return 502
    if isinstance(exc, InternalError):
        return 500
    return 502  # a provider refused us (a vendor key, for example): the upstream's failure


def _error(kind: str, message: str, retryable: bool, status: int) -> JSONResponse:
    """The typed and SearXNG doors' error: the typed error's class, its one message, and
    whether trying again may help (then with ``Retry-After``)."""
    headers = {"Retry-After": "1"} if retryable and status in (429, 503) else {}
    body = {"error": {"type": kind, "message": message, "retryable": retryable}}
    return JSONResponse(body, status, headers=headers)


def _typed_error(exc: WebSearchError) -> JSONResponse:
    """A typed error in the core's one JSON shape (``WebSearchError.as_dict``)."""
    status = _status_of(exc)
    headers = {"Retry-After": "1"} if exc.retryable and status in (429, 503) else {}
    if isinstance(exc, RateLimitedError) and exc.retry_after:
        headers["Retry-After"] = str(max(1, round(exc.retry_after)))
    return JSONResponse({"error": exc.as_dict()}, status, headers=headers)


def refusal_response(path: str, refusal: Refusal) -> JSONResponse:
    """A gate's or the admission's refusal, in the shape the door's clients read."""
    if firecrawl_path(path):
        headers = {"Retry-After": "1"} if refusal.retryable else {}
        body = {"success": False, "error": refusal.message}
        return JSONResponse(body, refusal.status, headers=headers)
    return _error("ServiceRefusal", refusal.message, refusal.retryable, refusal.status)


def _wants_text(accept: str) -> bool:
    """Whether ``Accept`` prefers text/plain to JSON (a tie, or ``*/*``, is JSON)."""
    quality = {"text/plain": 0.0, "application/json": 0.0}
    for part in accept.split(","):
        media, *parameters = (piece.strip() for piece in part.split(";"))
        if media.lower() in quality:
            q = 1.0
            for parameter in parameters:
                name, _, value = parameter.partition("=")
                if name.strip().lower() == "q":
                    try:
                        q = float(value)
                    except ValueError:
                        q = 0.0
            quality[media.lower()] = max(quality[media.lower()], q)
    return quality["text/plain"] > quality["application/json"]


# -- bodies ---------------------------------------------------------------------------------


async def read_body(request: Request, limits: ServiceLimits) -> bytes:
    """The body within the size ceiling and the deadline, or an ``InvalidRequestError``."""
    declared = request.headers.get("content-length", "")
    too_large = InvalidRequestError(
        f"the request body is over {limits.max_body_bytes:,} bytes: send a smaller one"
    )
    if declared.isdecimal() and int(declared) > limits.max_body_bytes:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(limits.body_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limits.max_body_bytes:
                    raise too_large
                chunks.append(chunk)
    except TimeoutError:
        raise InvalidRequestError(
            f"the request body did not arrive within {limits.body_timeout_s:g} s"
        ) from None
    return b"".join(chunks)


def _log(request: Request, **fields: Any) -> None:
    request.state.log.update(fields)


def _session(request: Request) -> WebSearch:
    session: WebSearch = request.state.session
    return session


def _limits(request: Request) -> ServiceLimits:
    limits: ServiceLimits = request.state.limits
    return limits


def _gate(request: Request) -> Gate:
    gate: Gate = request.state.gate
    return gate


def _engines(request: Request, outcomes: Any) -> None:
    _log(request, engines={o.engine: o.error or o.status for o in outcomes})


def _searched(request: Request, response: SearchResponse) -> None:
    _engines(request, response.outcomes)
    _log(request, provider=response.provider, cents=response.usage.cents)


# -- the typed door -------------------------------------------------------------------------


async def typed_search(request: Request) -> Response:
    if refusal := await _gate(request).check(request, bearer_only=False):
        return refusal_response(request.url.path, refusal)
    try:
        raw = await read_body(request, _limits(request))
        with boundary("search request"):
            try:
                asked = TypedSearch.model_validate_json(raw)
            except ValidationError as exc:
                raise InvalidRequestError(argument_message(exc)) from None
        arguments = asked.model_dump(exclude_unset=True)
        if asked.count_asked is not None:  # capped here: the search itself says so
            arguments["count"] = asked.count_asked
        response = await _session(request).asearch(**arguments)
    except WebSearchError as exc:
        _log(request, error=type(exc).__name__)
        if isinstance(exc, ProviderUnavailableError):
            _engines(request, exc.outcomes)
        return _typed_error(exc)
    _searched(request, response)
    if _wants_text(request.headers.get("accept", "")):
        return PlainTextResponse(response.render())
    return Response(response.model_dump_json(), media_type="application/json")


# -- the SearXNG door -----------------------------------------------------------------------


async def _searxng_params(request: Request) -> dict[str, str]:
    params = dict(request.query_params)
    if request.method == "POST":
        body = await read_body(request, _limits(request))
        media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media == "application/x-www-form-urlencoded":
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidRequestError("the form is not UTF-8 text") from None
            params.update(parse_qsl(text, keep_blank_values=True))
        elif body.strip():
            raise InvalidRequestError(
                "send the parameters in the query string or as an "
                "application/x-www-form-urlencoded form"
            )
    return params


async def searxng_search(request: Request) -> Response:
    if refusal := await _gate(request).check(request, bearer_only=False):
        return refusal_response(request.url.path, refusal)
    call = searxng.SearxngCall({"query": ""})
    try:
        params = await _searxng_params(request)
        with boundary("search request"):
            call = searxng.search_arguments(params, _session(request).engines)
        response = await _session(request).asearch(**call.arguments, read=0)  # no passages here
    except ProviderUnavailableError as exc:
        if not exc.outcomes:  # not a blend whose engines all failed
            _log(request, error=type(exc).__name__)
            return _typed_error(exc)
        # SearXNG's answer when every engine failed: no results, and each engine's why.
        _engines(request, exc.outcomes)
        query = call.arguments["query"]
        return JSONResponse(searxng.empty_envelope(query, exc.outcomes, call.passed_over))
    except WebSearchError as exc:
        _log(request, error=type(exc).__name__)
        return _typed_error(exc)
    _searched(request, response)
    return JSONResponse(searxng.envelope(response, call.passed_over))


# -- the Firecrawl door ---------------------------------------------------------------------


async def scrape(request: Request) -> Response:
    if refusal := await _gate(request).check(request, bearer_only=True):
        return refusal_response(request.url.path, refusal)
    default_timeout = 30_000 if request.url.path == "/v1/scrape" else None
    try:
        raw = await read_body(request, _limits(request))
        with boundary("scrape request"):
            call = firecrawl.parse_body(raw, default_timeout_ms=default_timeout)
        page = await _session(request).ascrape(call.url, **call.arguments)
    except WebSearchError as exc:
        status, body = firecrawl.failure(exc)
        _log(request, error=type(exc).__name__)
        return JSONResponse(body, status)
    _log(request, target_status=page.status, bytes=page.bytes_read)
    return JSONResponse(firecrawl.success(page, call.url, call.warning))


async def scrape_each(
    session: WebSearch, urls: list[str], arguments: dict[str, Any], deadline: float
) -> list[ScrapedPage | WebSearchError]:
    """Each URL scraped at once, fetched by ``deadline`` (``time.monotonic``) and converted a
    second later at most; a failure in its place, a page not read by then a timeout."""
    budget_s = round(max(0.0, deadline - time.monotonic()), 2)
    per_page = {**arguments, "deadline_s": min(budget_s, arguments["deadline_s"] or budget_s)}

    async def one(url: str) -> ScrapedPage:
        return await session.ascrape(url, **per_page)

    got = await each_within(urls, one, budget_s, grace_s=1.0)
    return [_typed(got.get(url, FetchTimeoutError(budget_s))) for url in urls]


def _typed(outcome: ScrapedPage | Exception) -> ScrapedPage | WebSearchError:
    if isinstance(outcome, ScrapedPage | WebSearchError):
        return outcome
    return InternalError("scrape", outcome)  # ascrape raises only its own: a bug, said so


async def firecrawl_search(request: Request) -> Response:
    if refusal := await _gate(request).check(request, bearer_only=True):
        return refusal_response(request.url.path, refusal)
    started, session = time.monotonic(), _session(request)
    try:
        raw = await read_body(request, _limits(request))
        with boundary("search request"):
            call = firecrawl.parse_search(raw)
        # The pages are read as Firecrawl reads them (scrapeOptions), never for passages.
        response = await session.asearch(**call.arguments, read=0)
    except WebSearchError as exc:
        _log(request, error=type(exc).__name__)
        if isinstance(exc, ProviderUnavailableError):
            _engines(request, exc.outcomes)
        status, body = firecrawl.failure(exc)
        return JSONResponse(body, status)
    _searched(request, response)
    pages = None
    if call.scrape is not None:
        deadline = started + (call.timeout_s or session.settings.fetch_timeout)
        pages = await scrape_each(session, [r.url for r in response.results], call.scrape, deadline)
        _log(request, pages_failed=sum(isinstance(page, WebSearchError) for page in pages))
    v1 = request.url.path.startswith("/v1/")
    return JSONResponse(firecrawl.search_success(v1, response, pages, call.warnings))


# -- the rest -------------------------------------------------------------------------------


async def healthz(request: Request) -> Response:
    """Whether the service can serve (at once, whatever the load: nothing here waits)."""
    lanes: dict[str, Admission] = request.state.lanes
    body: dict[str, Any] = {
        "status": "ok",
        "engines": _session(request).engines,
        "lanes": {name: {"running": a.running, "waiting": a.waiting} for name, a in lanes.items()},
    }
    if request.app.state.principal is None and not _gate(request).has_key:
        body["status"] = "unavailable"
        body["reason"] = f"{KEY_VARIABLE} is not set: every gated request is refused"
        return JSONResponse(body, 503)
    return JSONResponse(body)


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, a method a route does not take) in the door's
    JSON shape rather than as plain text; a Firecrawl operation this service does not serve
    (crawl, map, extract …) says so, in words each Firecrawl SDK prints."""
    assert isinstance(exc, HTTPException)
    path = request.url.path
    detail = exc.detail
    if exc.status_code == 404 and firecrawl_path(path):
        detail = (
            f"{path[:80]} is not served here: this service answers Firecrawl's scrape and "
            f"search only ({', '.join((*SCRAPE_PATHS[:2], *SEARCH_PATHS))})"
        )
    refused = refusal_response(path, Refusal(exc.status_code, detail))
    refused.headers.update(exc.headers or {})
    return refused


class Guard:
    """Outermost: admits a request to its lane (or answers 503), then logs how it went, in
    one line."""

    def __init__(self, app: ASGIApp, lanes: dict[str, Admission], max_header_bytes: int) -> None:
        self.app = app
        self.lanes = lanes
        self.max_header_bytes = max_header_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        record: dict[str, Any] = {}
        scope.setdefault("state", {})["log"] = record
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        request_line = len(scope["method"]) + len(scope.get("raw_path") or b"")
        head = (
            request_line
            + len(scope["query_string"])
            + sum(len(name) + len(value) + 4 for name, value in scope["headers"])
        )
        try:
            if head > self.max_header_bytes:
                # uvicorn bounds a head that arrives in pieces; this bounds one that came whole.
                too_big = f"request line and headers over {self.max_header_bytes:,} bytes"
                refused = refusal_response(scope["path"], Refusal(431, too_big))
                await refused(scope, receive, sending)
            elif scope["path"] in ("/healthz",):
                await self.app(scope, receive, sending)
            else:
                lane = self.lanes["scrape" if scope["path"] in SCRAPE_PATHS else "search"]
                try:
                    async with lane.place():
                        await self.app(scope, receive, sending)
                except Overloaded:
                    busy = Refusal(503, "the service is at capacity: retry in a moment", True)
                    refused = refusal_response(scope["path"], busy)
                    await refused(scope, receive, sending)
        except ClientDisconnect:
            status = status or 499
        except Exception:
            status = status or 500  # Starlette's outer handler answers it
            raise
        finally:
            entry = {
                "event": "request",
                "method": scope["method"],
                "route": scope["path"],
                "status": status,
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
                **record,
            }
            logger.info(json.dumps(entry, sort_keys=True))


def default_session() -> WebSearch:
    """The environment's configuration, pinned to ``WEBSEARCH_PROVIDER`` or the blend."""
    return WebSearch(os.environ.get("WEBSEARCH_PROVIDER") or "blend", blend_cache=BlendCache())


def create_app(
    session: Callable[[], WebSearch] | None = None,
    *,
    api_key: str | None = None,
    principal: Principal | None = None,
    limits: ServiceLimits | None = None,
    environ: Mapping[str, str] | None = None,
) -> Starlette:
    """The service as an ASGI app, for ``websearch serve`` or any ASGI server.

    ``session`` makes the ``WebSearch`` every request shares (default: ``default_session``).
    ``api_key`` defaults to ``WEBSEARCH_API_KEY`` in ``environ`` (``os.environ`` by default);
    ``principal`` is the operator's hook (``gates.py``), kept on ``app.state.principal``,
    where it may also be set later.
    """
    env = os.environ if environ is None else environ
    limits = limits or ServiceLimits()
    gate = Gate(api_key if api_key is not None else env.get(KEY_VARIABLE))
    make = session or default_session
    # Each lane its own places: a burst of slow scrapes never holds the places searches need.
    lanes = {
        "search": Admission(limits),
        "scrape": Admission(dataclasses.replace(limits, max_inflight=limits.max_inflight_scrapes)),
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        try:
            ws = make()
        except WebSearchError as exc:
            logger.error("the service cannot start: %s", exc)
            raise
        if ws.settings.fetch_allow_private:
            logger.warning(
                "scrape may reach loopback and private addresses (WEBSEARCH_FETCH_ALLOW_PRIVATE)"
            )
        if gate.key_was_padded:
            logger.warning(
                "%s had whitespace around it (a secrets file's newline?): it was stripped",
                KEY_VARIABLE,
            )
        if app.state.principal is None and not gate.has_key:
            logger.warning("%s is not set: every gated request is answered 503", KEY_VARIABLE)
        try:
            # Pages convert on worker processes from the first request, never on this loop.
            await anyio.to_thread.run_sync(ws.start_workers)
            yield {"session": ws, "gate": gate, "limits": limits, "lanes": lanes}
        finally:
            await ws.aclose()

    routes = [
        Route("/v1/websearch", typed_search, methods=["POST"]),
        Route("/v1/websearch/search", searxng_search, methods=["GET", "POST"]),
        *(Route(path, scrape, methods=["POST"]) for path in SCRAPE_PATHS),
        *(Route(path, firecrawl_search, methods=["POST"]) for path in SEARCH_PATHS),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/v1/websearch/openapi.json", openapi, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={HTTPException: _http_error}
    )
    app.state.principal = principal
    app.add_middleware(Guard, lanes=lanes, max_header_bytes=limits.max_header_bytes)
    return app
