"""``websearch mcp``: ``web_search`` and ``web_fetch`` as a Model Context Protocol server.

One more projection of the same core, next to the LangChain tools and the LlamaIndex spec:
the names, descriptions and argument schemas come from ``tooling.py`` (only the search
options this session's providers honour are offered), the text a tool returns is exactly
``render()``, and a failure is a tool result with ``isError`` and the one message every
adapter gives, never a protocol error. The structured result rides along as
``structuredContent``: the search response whole; for a fetch, everything known about it
but the page's text, which is only ever handed over fenced (a client that shows structured
content to its model, as LlamaIndex's MCP tool does with the result's repr, must not see
the page unfenced).

Transports: stdio (what desktop clients start) and, with ``--http``, streamable HTTP bound
to loopback, with the SDK's DNS-rebinding protection on. On stdio, stdout carries protocol
messages only; logs go to stderr. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, ValidationError

from websearch_core import __version__
from websearch_core.errors import (
    ConfigurationError,
    InternalError,
    InvalidRequestError,
    WebSearchError,
    install_hint,
)
from websearch_core.session import WebSearch
from websearch_core.tooling import (
    FETCH_ARGUMENTS,
    FETCH_DESCRIPTION,
    FETCH_TOOL,
    SEARCH_DESCRIPTION,
    SEARCH_TOOL,
    argument_failure,
    arguments_model,
    search_arguments,
)

if importlib.util.find_spec("mcp") is None:
    raise ConfigurationError(f"websearch mcp needs the MCP SDK: {install_hint('mcp')}")

from mcp import types
from mcp.server.lowlevel import Server

__all__ = [
    "LOOPBACK_HOSTS",
    "SERVER_NAME",
    "build_server",
    "http_app",
    "run_http",
    "run_stdio",
    "tools",
]

logger = logging.getLogger("websearch_core.mcp")

SERVER_NAME = "websearch"
#: Fetches reach whatever page a model names, and searches send its words to a provider:
#: not read-only, open world (clients ask before calling), and nothing is changed or deleted.
_ANNOTATIONS = types.ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=True)


class _Tools:
    """The tools this session offers, and their argument models."""

    def __init__(self, session: WebSearch) -> None:
        self.session = session
        self.schemas: dict[str, type[BaseModel]] = {
            FETCH_TOOL: arguments_model("WebFetchInput", FETCH_ARGUMENTS),
        }
        if session.providers:  # a tool that cannot run is not offered
            self.schemas[SEARCH_TOOL] = arguments_model("WebSearchInput", search_arguments(session))

    def definitions(self) -> list[types.Tool]:
        described = {SEARCH_TOOL: SEARCH_DESCRIPTION, FETCH_TOOL: FETCH_DESCRIPTION}
        return [
            types.Tool(
                name=name,
                description=described[name],
                inputSchema=self.schemas[name].model_json_schema(),
                annotations=_ANNOTATIONS,
            )
            for name in (SEARCH_TOOL, FETCH_TOOL)
            if name in self.schemas
        ]

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            text, structured = await self._run(name, arguments or {})
        except WebSearchError as exc:
            return _failure(str(exc))
        except Exception as exc:  # a bug must not take the server down for the next call
            logger.warning("%s failed unexpectedly (%s)", name, type(exc).__name__)
            return _failure(str(InternalError(name, exc)))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structuredContent=structured,
            isError=False,
        )

    async def _run(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        schema = self.schemas.get(name)
        if schema is None:
            offered = ", ".join(self.schemas)
            raise InvalidRequestError(f"no tool named {name[:80]!r} here: the tools are {offered}")
        try:
            checked = schema.model_validate(arguments)
        except ValidationError as exc:
            raise argument_failure(exc, name, self.session) from None
        given = {k: v for k, v in checked.model_dump(exclude_unset=True).items() if v is not None}
        if name == SEARCH_TOOL:
            response = await self.session.asearch(**given)
            return response.render(), response.model_dump(mode="json")
        page = await self.session.afetch(**given)
        return page.render(), page.model_dump(mode="json", exclude={"content"})


def _failure(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], isError=True
    )


def tools(session: WebSearch) -> list[types.Tool]:
    """The tool definitions a client lists for ``session``."""
    return _Tools(session).definitions()


def build_server(session: WebSearch) -> Server[Any, Any]:
    """The MCP server over ``session``, for any transport the SDK has."""
    offered = _Tools(session)
    server: Server[Any, Any] = Server(SERVER_NAME, version=__version__)

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return offered.definitions()

    # Arguments are checked against our own models, so the model reads the same message
    # the other adapters give, not the SDK's JSON-schema wording.
    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        return await offered.call(name, arguments)

    return server


async def run_stdio(session: WebSearch) -> None:
    """Serve on stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(session)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await session.aclose()


def http_app(session: WebSearch, host: str, port: int) -> Any:
    """The streamable-HTTP app at ``/mcp``; only this host and port are accepted as Host."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send

    names = [host, "127.0.0.1", "localhost", "[::1]"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in names],
        allowed_origins=[f"http://{name}:{port}" for name in names],
    )
    manager = StreamableHTTPSessionManager(
        app=build_server(session), stateless=True, security_settings=security
    )

    class Endpoint:  # an ASGI app, not a request handler: the manager answers itself
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run():
                yield
        finally:
            await session.aclose()

    return Starlette(routes=[Route("/mcp", Endpoint())], lifespan=lifespan)


#: The HTTP transport has no authentication of its own: it answers this machine only.
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def run_http(session: WebSearch, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until SIGINT or SIGTERM."""
    import uvicorn

    if host not in LOOPBACK_HOSTS:
        raise ConfigurationError(
            f"websearch mcp --http binds loopback only ({', '.join(LOOPBACK_HOSTS)}), not "
            f"{host[:80]!r}: it has no authentication; for a network service with a key, "
            "use websearch serve"
        )

    from websearch_core.server.run import listening_socket

    sock = listening_socket(host, port)  # a port in use is one line, not uvicorn's traceback
    app = http_app(session, host, port)
    uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False)
    ).run(sockets=[sock])
