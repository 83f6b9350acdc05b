"""``web_search`` and ``web_fetch`` as a LlamaIndex tool spec: a thin adapter over one
``WebSearch``.

This module deliberately has no ``from __future__ import annotations``: ``FunctionTool``
finds the workflow ``Context`` parameter of an approval-gated tool by comparing the live
annotation object, which a string annotation would hide.
"""

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent
from pydantic import BaseModel, ValidationError

from websearch_core import WebSearch
from websearch_core.tooling import (
    FETCH_ARGUMENTS,
    FETCH_DESCRIPTION,
    FETCH_TOOL,
    REQUIRED,
    SEARCH_ARGUMENTS,
    SEARCH_DESCRIPTION,
    SEARCH_TOOL,
    Argument,
    argument_failure,
    arguments_doc,
    arguments_model,
    describe_call,
    search_arguments,
)

__all__ = ["APPROVING_ANSWERS", "ApprovalRequired", "WebSearchToolSpec", "require_approval"]

#: What a reviewer may answer to let a gated call through; anything else refuses it.
APPROVING_ANSWERS = frozenset({"y", "yes", "approve", "allow"})

_TOOL_OF = {
    "web_search": SEARCH_TOOL,
    "aweb_search": SEARCH_TOOL,
    "web_fetch": FETCH_TOOL,
    "aweb_fetch": FETCH_TOOL,
}


class WebSearchToolSpec(BaseToolSpec):
    """Web search and page fetch for a LlamaIndex agent, over one ``WebSearch`` session.

    Setup:
        ``pip install -e '.[llamaindex,ddgs]'`` in a clone
        (``websearch-pack[llamaindex,ddgs]`` once released). With nothing else, the keyless
        ddgs provider runs. Set ``BRAVE_API_KEY``, ``TAVILY_API_KEY`` or ``SEARXNG_URL`` to
        add those providers (see docs/configuration.md).

    Instantiate:
        .. code-block:: python

            from llamaindex_websearch import WebSearchToolSpec
            from websearch_core import WebSearch

            spec = WebSearchToolSpec()                                  # configured from env
            spec = WebSearchToolSpec(WebSearch("searxng", searxng_url="http://localhost:8888"))
            tools = spec.to_tool_list()                                 # [web_search, web_fetch]

    Use:
        .. code-block:: python

            from llama_index.core.agent.workflow import FunctionAgent

            agent = FunctionAgent(tools=spec.to_tool_list(), llm=llm)
            print(spec.web_search("go 1.26 release notes", count=3))

        Each tool has a sync and an async function (``web_search``/``aweb_search``,
        ``web_fetch``/``aweb_fetch``); agents call the async one. The output is exactly the
        text the LangChain tools return: a numbered menu of results, or the page as markdown
        fenced as untrusted data. The schema the model sees offers only the search options
        this session's providers honour. A failure (refused URL, rate limit, an option no
        provider honours) is raised as a ``WebSearchError`` whose message the agent hands to
        the model as the tool's error output. With no search provider configured, only
        ``web_fetch`` is offered.

        Wrap the tools with ``require_approval`` to have a person approve each call, shown
        the query or URL verbatim (``describe_call``).
    """

    spec_functions: list[SPEC_FUNCTION_TYPE] = [  # noqa: RUF012 (BaseToolSpec's contract)
        ("web_search", "aweb_search"),
        ("web_fetch", "aweb_fetch"),
    ]

    def __init__(self, session: WebSearch | None = None) -> None:
        self.session = session or WebSearch()
        self.search_arguments = search_arguments(self.session)
        self._schemas: dict[str, type[BaseModel]] = {
            SEARCH_TOOL: arguments_model("WebSearchInput", self.search_arguments),
            FETCH_TOOL: arguments_model("WebFetchInput", FETCH_ARGUMENTS),
        }
        if not self.session.providers:
            # An agent is never offered a tool that cannot run.
            self.spec_functions = [("web_fetch", "aweb_fetch")]

    def get_fn_schema_from_fn_name(
        self, fn_name: str, spec_functions: list[SPEC_FUNCTION_TYPE] | None = None
    ) -> type[BaseModel] | None:
        """The argument schema the model sees for ``fn_name`` (sync or async twin)."""
        tool = _TOOL_OF.get(fn_name)
        return None if tool is None else self._schemas[tool]

    def get_metadata_from_fn_name(
        self, fn_name: str, spec_functions: list[SPEC_FUNCTION_TYPE] | None = None
    ) -> ToolMetadata | None:
        """Name, model-facing description and schema, shared with the LangChain tools."""
        tool = _TOOL_OF.get(fn_name)
        if tool is None:
            return None
        description = SEARCH_DESCRIPTION if tool == SEARCH_TOOL else FETCH_DESCRIPTION
        return ToolMetadata(name=tool, description=description, fn_schema=self._schemas[tool])

    def _validated(
        self, tool: str, arguments: tuple[Argument, ...], given: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The call's arguments checked against the schema the model was shown.

        LlamaIndex agents call a tool with the model's arguments as they are, unchecked (an
        unknown one included, and a missing query, which the function takes as
        ``REQUIRED``); checking here refuses it, and an option this session cannot honour,
        with the core's one message for argument errors (the same the LangChain tools give),
        and coerces '2026-01-01' to a date. An argument given at its default is not passed,
        so a default the schema leaves out is not mistaken for a request.
        """
        defaults = {a.name: a.default for a in arguments}
        asked = {
            name: value
            for name, value in given.items()
            if name not in defaults or value != defaults[name]
        }
        try:
            checked = self._schemas[tool].model_validate(asked)
        except ValidationError as exc:
            raise argument_failure(exc, tool, self.session) from None
        return {name: value for name, value in checked.model_dump().items() if value is not None}

    @staticmethod
    def describe_call(tool_name: str, tool_kwargs: Mapping[str, Any]) -> str:
        """The detail a person approves before egress: the query or URL, verbatim.

        Args:
            tool_name (str): ``web_search`` or ``web_fetch``.
            tool_kwargs (Mapping[str, Any]): The arguments the model chose.
        """
        return describe_call(tool_name, tool_kwargs)

    # The arguments are the schema's (``tooling``), shown to the model and checked here; the
    # functions pass them through, so a new option is written in tooling and the core only.

    def web_search(self, query: str = REQUIRED, **arguments: Any) -> str:
        """Search the web; returns a short numbered menu of results (title, URL, date, snippet).

        Options this session's providers cannot honour are refused (the schema the model sees
        offers only the others: ``search_arguments``).
        """
        checked = self._validated(SEARCH_TOOL, SEARCH_ARGUMENTS, {"query": query, **arguments})
        return self.session.search(**checked).render()

    async def aweb_search(self, query: str = REQUIRED, **arguments: Any) -> str:
        """``web_search`` on the running event loop."""
        checked = self._validated(SEARCH_TOOL, SEARCH_ARGUMENTS, {"query": query, **arguments})
        response = await self.session.asearch(**checked)
        return response.render()

    def web_fetch(self, url: str = REQUIRED, **arguments: Any) -> str:
        """Fetch one page through the URL jail; returns it as markdown, fenced as data."""
        checked = self._validated(FETCH_TOOL, FETCH_ARGUMENTS, {"url": url, **arguments})
        return self.session.fetch(**checked).render()

    async def aweb_fetch(self, url: str = REQUIRED, **arguments: Any) -> str:
        """``web_fetch`` on the running event loop."""
        checked = self._validated(FETCH_TOOL, FETCH_ARGUMENTS, {"url": url, **arguments})
        page = await self.session.afetch(**checked)
        return page.render()

    # Their ``Args:`` blocks, for help() and for readers of docstrings, from the same source.
    for _function, _arguments in (
        (web_search, SEARCH_ARGUMENTS),
        (aweb_search, SEARCH_ARGUMENTS),
        (web_fetch, FETCH_ARGUMENTS),
        (aweb_fetch, FETCH_ARGUMENTS),
    ):
        _function.__doc__ = inspect.cleandoc(_function.__doc__ or "") + arguments_doc(_arguments)
    del _function, _arguments


class ApprovalRequired(InputRequiredEvent):
    """Streamed before a gated tool sends anything: what a person is asked to approve."""

    prefix: str
    tool_name: str
    tool_kwargs: dict[str, Any]


def require_approval(tools: Sequence[FunctionTool]) -> list[FunctionTool]:
    """The same tools, each call waiting for a person's approval inside an agent workflow.

    Before anything is sent, the workflow streams an ``ApprovalRequired`` (an
    ``InputRequiredEvent``) whose ``prefix`` is the query or URL verbatim (``describe_call``),
    with ``tool_name`` and ``tool_kwargs``; it resumes on a ``HumanResponseEvent``. A response
    in ``APPROVING_ANSWERS`` runs the tool; anything else reaches the model as the tool's
    error output.

    The gated tools take the workflow ``Context``, so they run inside an agent workflow
    (``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``), not as bare ``tool.call()``.

    .. code-block:: python

        agent = FunctionAgent(tools=require_approval(spec.to_tool_list()), llm=llm)
        handler = agent.run("What is new in Go 1.26?")
        async for event in handler.stream_events():
            if isinstance(event, InputRequiredEvent):
                answer = input(f"{event.prefix} — allow? ")
                handler.ctx.send_event(HumanResponseEvent(response=answer))
        await handler
    """
    return [_gated(tool) for tool in tools]


def _gated(tool: FunctionTool) -> FunctionTool:
    name = tool.metadata.get_name()

    async def gated(ctx: Context, **tool_kwargs: Any) -> str:
        detail = describe_call(name, tool_kwargs)
        decision = await ctx.wait_for_event(
            HumanResponseEvent,
            waiter_id=f"approve {detail}",
            waiter_event=ApprovalRequired(prefix=detail, tool_name=name, tool_kwargs=tool_kwargs),
        )
        if str(decision.get("response", "")).strip().lower() not in APPROVING_ANSWERS:
            raise PermissionError(f"not approved by the user: {detail}")
        output = await tool.acall(**tool_kwargs)
        return output.content

    return FunctionTool.from_defaults(async_fn=gated, tool_metadata=tool.metadata)
