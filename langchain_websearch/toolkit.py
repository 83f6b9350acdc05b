"""Both web tools sharing one session (one memo, one set of HTTP clients)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, BaseToolkit
from pydantic import ConfigDict, Field

from langchain_websearch.tools import WebFetchTool, WebSearchTool
from websearch_core import WebSearch

__all__ = ["WebSearchToolkit"]


class WebSearchToolkit(BaseToolkit):
    """``web_search`` and ``web_fetch`` over one ``WebSearch``.

    Setup:
        ``pip install -e '.[langchain,ddgs]'`` in a clone
        (``websearch-pack[langchain,ddgs]`` once released); keys as for ``WebSearchTool``.

    Instantiate:
        .. code-block:: python

            from langchain_websearch import WebSearchToolkit

            tools = WebSearchToolkit().get_tools()   # [web_search, web_fetch]

    Invoke:
        Pass ``get_tools()`` to ``create_agent(model, tools=...)``. If no search provider is
        configured, only ``web_fetch`` is returned: an agent is never offered a tool that
        cannot run.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: WebSearch = Field(default_factory=WebSearch)

    def get_tools(self) -> list[BaseTool]:
        tools: list[BaseTool] = []
        if self.session.providers:
            tools.append(WebSearchTool(session=self.session))
        tools.append(WebFetchTool(session=self.session))
        return tools
