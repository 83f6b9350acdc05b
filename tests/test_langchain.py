"""The LangChain adapters in use: tool messages, errors, approval, an agent loop, retriever
and loader, all against real HTTP servers on loopback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_websearch import (
    WebFetchTool,
    WebPageLoader,
    WebSearchRetriever,
    WebSearchTool,
    WebSearchToolkit,
    interrupt_on,
)
from tests.support.http_server import Reply, ScriptedServer
from tests.support.scripted_chat import ScriptedChatModel, tool_call
from websearch_core import (
    FetchError,
    JailPolicy,
    Page,
    SearchResponse,
    URLRefusedError,
    WebSearch,
)
from websearch_core.render import FENCE_END, FENCE_NOTE

DOCUMENTED = Path(__file__).parent / "fixtures" / "documented"


@pytest.fixture
def ws(site: ScriptedServer) -> Iterator[WebSearch]:
    with WebSearch(
        "searxng", searxng_url=site.url, fetch_policy=JailPolicy(allow_private=True)
    ) as session:
        yield session


def call(name: str, call_id: str = "1", **args: object) -> dict[str, object]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


# -- tools ------------------------------------------------------------------------------------


def test_search_tool_message_is_the_menu_and_the_artifact_the_response(ws: WebSearch) -> None:
    message = WebSearchTool(session=ws).invoke(call("web_search", query="go 1.26"))
    assert isinstance(message, ToolMessage)
    assert message.content.startswith("1. Go 1.26 Release Notes — ")
    assert message.content.endswith('3 results from searxng for "go 1.26".')
    assert isinstance(message.artifact, SearchResponse)
    assert message.content == message.artifact.render()


def test_fetch_tool_message_is_the_fence(ws: WebSearch, site: ScriptedServer) -> None:
    message = WebFetchTool(session=ws).invoke(call("web_fetch", url=f"{site.url}/go"))
    lines = message.content.splitlines()
    assert lines[0].startswith(f"--- begin fetched content: {site.url}/go (text/html")
    assert lines[-2:] == [FENCE_END, FENCE_NOTE]
    assert isinstance(message.artifact, Page)
    assert message.artifact.title == "Go 1.26"


async def test_tools_are_natively_async(ws: WebSearch, site: ScriptedServer) -> None:
    searched = await WebSearchTool(session=ws).ainvoke(call("web_search", query="go"))
    fetched = await WebFetchTool(session=ws).ainvoke(call("web_fetch", url=f"{site.url}/go"))
    assert isinstance(searched.artifact, SearchResponse)
    assert isinstance(fetched.artifact, Page)


def test_failures_are_normal_tool_messages(ws: WebSearch) -> None:
    refused = WebFetchTool(session=ws.__class__()).invoke(
        call("web_fetch", url="http://169.254.169.254/latest/meta-data/")
    )
    assert refused.status == "error"
    assert refused.content.startswith("refused:")
    not_offered = WebSearchTool(session=ws).invoke(
        call("web_search", query="x", date_from="2026-01-01")
    )
    assert not_offered.status == "error"
    assert not_offered.content == "provider 'searxng' cannot honour date_range: drop the option"
    auto = WebSearch(searxng_url=ws.settings.searxng_url)  # searxng + ddgs, routed
    together = WebSearchTool(session=auto).invoke(
        call("web_search", query="x", country="de", language="de")
    )
    assert together.status == "error"
    assert "no configured provider honours country, language together" in together.content


def test_schema_offers_only_what_the_provider_honours() -> None:
    searxng = WebSearchTool(session=WebSearch("searxng", searxng_url="http://127.0.0.1:9"))
    tavily = WebSearchTool(session=WebSearch("tavily", tavily_api_key="tvly-canary-key"))
    searxng_fields = set(searxng.tool_call_schema.model_json_schema()["properties"])
    tavily_fields = set(tavily.tool_call_schema.model_json_schema()["properties"])
    assert {"query", "count", "site", "freshness", "language", "page"} <= searxng_fields
    assert not {"date_from", "country"} & searxng_fields
    assert {"date_from", "date_to", "include_answer"} <= tavily_fields
    assert not {"country", "language", "page", "safesearch"} & tavily_fields
    site_help = searxng.tool_call_schema.model_json_schema()["properties"]["site"]["description"]
    assert "Use it when you know where the answer lives" in site_help


def test_toolkit_leaves_out_search_when_no_provider_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("websearch_core.providers.ddgs.importlib.util.find_spec", lambda name: None)
    assert [t.name for t in WebSearchToolkit().get_tools()] == ["web_fetch"]
    ws = WebSearch("searxng", searxng_url="http://127.0.0.1:9")
    assert [t.name for t in WebSearchToolkit(session=ws).get_tools()] == ["web_search", "web_fetch"]


# -- approval and the agent loop ------------------------------------------------------------------


def agent_for(ws: WebSearch, model: ScriptedChatModel, *, approval: bool) -> object:
    middleware = [HumanInTheLoopMiddleware(interrupt_on=interrupt_on())] if approval else []
    return create_agent(
        model,
        tools=WebSearchToolkit(session=ws).get_tools(),
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )


def test_agent_searches_fetches_and_answers(ws: WebSearch, site: ScriptedServer) -> None:
    model = ScriptedChatModel(
        replies=[
            tool_call("web_search", "c1", query="go 1.26 release notes", count=2),
            tool_call("web_fetch", "c2", url=f"{site.url}/go"),
            AIMessage(content="Go 1.26 adds iterators."),
        ]
    )
    agent = agent_for(ws, model, approval=False)
    result = agent.invoke(  # type: ignore[attr-defined]
        {"messages": [{"role": "user", "content": "What is new in Go 1.26?"}]},
        {"configurable": {"thread_id": "loop"}},
    )
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_messages] == ["web_search", "web_fetch"]
    assert tool_messages[0].content.endswith('2 results from searxng for "go 1.26 release notes".')
    assert "# Go 1.26" in tool_messages[1].content
    assert tool_messages[1].content.splitlines()[-1] == FENCE_NOTE
    assert result["messages"][-1].content == "Go 1.26 adds iterators."
    assert model.bound_tools == ["web_search", "web_fetch"]
    # the model saw the tool output on its next turn
    assert any(isinstance(m, ToolMessage) and m.name == "web_fetch" for m in model.seen[2])


def test_approval_interrupts_before_each_egress_with_the_detail(
    ws: WebSearch, site: ScriptedServer
) -> None:
    model = ScriptedChatModel(
        replies=[
            tool_call("web_search", "c1", query="go 1.26 release notes"),
            tool_call("web_fetch", "c2", url=f"{site.url}/go"),
            AIMessage(content="done"),
        ]
    )
    agent = agent_for(ws, model, approval=True)
    config = {"configurable": {"thread_id": "approve"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "q"}]}, config)  # type: ignore[attr-defined]
    request = first["__interrupt__"][0].value["action_requests"][0]
    assert request["description"] == 'Search the web for: "go 1.26 release notes"'
    assert site.hits("/search") == 0  # nothing left before approval

    second = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)  # type: ignore[attr-defined]
    request = second["__interrupt__"][0].value["action_requests"][0]
    assert request["description"] == f"Fetch this URL: {site.url}/go"
    assert site.hits("/search") == 1
    assert site.hits("/go") == 0

    final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)  # type: ignore[attr-defined]
    assert site.hits("/go") == 1
    assert final["messages"][-1].content == "done"


def test_rejection_stops_the_egress(ws: WebSearch, site: ScriptedServer) -> None:
    model = ScriptedChatModel(
        replies=[
            tool_call("web_fetch", "c1", url=f"{site.url}/go"),
            AIMessage(content="I will not fetch it."),
        ]
    )
    agent = agent_for(ws, model, approval=True)
    config = {"configurable": {"thread_id": "reject"}}
    agent.invoke({"messages": [{"role": "user", "content": "q"}]}, config)  # type: ignore[attr-defined]
    final = agent.invoke(  # type: ignore[attr-defined]
        Command(resume={"decisions": [{"type": "reject", "message": "Not that site."}]}), config
    )
    rejected = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert rejected[0].status == "error"
    assert "Not that site." in rejected[0].content
    assert site.hits("/go") == 0


# -- retriever ----------------------------------------------------------------------------------


def test_retriever_returns_ranked_snippets(ws: WebSearch, site: ScriptedServer) -> None:
    docs = WebSearchRetriever(session=ws, k=3).invoke("go 1.26")
    assert [d.metadata["rank"] for d in docs] == [1, 2, 3]
    assert docs[0].metadata["url"] == f"{site.url}/go"
    assert docs[0].page_content == "Go 1.26 adds"
    assert docs[0].metadata["provider"] == "searxng"
    assert site.hits("/go") == 0


def test_retriever_fetches_the_top_pages_and_reports_failures(
    ws: WebSearch, site: ScriptedServer
) -> None:
    docs = WebSearchRetriever(session=ws, k=3, fetch_top=3).invoke("go 1.26")
    assert docs[0].page_content.startswith("# Go 1.26")
    assert (docs[0].metadata["rank"], docs[0].metadata["status"]) == (1, 200)
    assert docs[1].page_content == "Blog post."
    assert docs[2].page_content == "a dead link"  # kept as its snippet ...
    assert docs[2].metadata["fetch_error"] == "HTTP 404 Not Found"  # ... and the failure said


async def test_retriever_async(ws: WebSearch) -> None:
    docs = await WebSearchRetriever(session=ws, k=2, fetch_top=1).ainvoke("go 1.26")
    assert docs[0].metadata["title"] == "Go 1.26"
    assert docs[1].page_content == "Announcing Go 1.26"


async def test_retriever_sync_call_inside_a_running_loop(ws: WebSearch) -> None:
    docs = WebSearchRetriever(session=ws, k=1, fetch_top=1).invoke("go 1.26")  # as in Jupyter
    assert docs[0].metadata["status"] == 200


# -- loader -------------------------------------------------------------------------------------


def test_loader_loads_in_order_with_stable_ids(site: ScriptedServer, ws: WebSearch) -> None:
    urls = [f"{site.url}/go", f"{site.url}/blog"]
    docs = WebPageLoader(urls, session=ws, concurrency=2).load()
    again = WebPageLoader(
        urls, session=WebSearch(fetch_policy=JailPolicy(allow_private=True))
    ).load()
    assert [d.metadata["url"] for d in docs] == urls
    assert [d.id for d in docs] == [d.id for d in again]
    assert len({d.id for d in docs}) == 2
    assert set(docs[0].metadata) == {
        "url",
        "final_url",
        "title",
        "status",
        "content_type",
        "charset",
        "fetched_at",
        "truncated",
        "bytes_read",
    }
    assert docs[0].metadata["title"] == "Go 1.26"
    assert docs[0].metadata["truncated"] is False


def test_loader_reports_failures_rather_than_dropping_them(
    site: ScriptedServer, ws: WebSearch, caplog: pytest.LogCaptureFixture
) -> None:
    urls = [f"{site.url}/go", f"{site.url}/gone", "http://169.254.169.254/", f"{site.url}/blog"]
    loader = WebPageLoader(urls, session=ws)
    docs = loader.load()
    assert [d.metadata["url"] for d in docs] == [urls[0], urls[3]]
    assert loader.failures == [
        (urls[1], "HTTP 404 Not Found"),
        (urls[2], loader.failures[1][1]),
    ]
    assert loader.failures[1][1].startswith("refused: cloud metadata")
    assert "could not load" in caplog.text
    with pytest.raises(FetchError, match="HTTP 404"):
        WebPageLoader(urls, session=ws, fail_on_error=True).load()
    with pytest.raises(URLRefusedError):
        WebPageLoader([urls[2]], session=ws, fail_on_error=True).load()


async def test_loader_async_bounded_and_in_order(site: ScriptedServer, ws: WebSearch) -> None:
    urls = [f"{site.url}/go?i={i}" for i in range(12)] + [f"{site.url}/gone"]
    loader = WebPageLoader(urls, session=ws, concurrency=3)
    docs = [d async for d in loader.alazy_load()]
    assert [d.metadata["url"] for d in docs] == urls[:12]
    assert loader.failures == [(urls[12], "HTTP 404 Not Found")]


async def test_loader_sync_load_inside_a_running_loop(site: ScriptedServer, ws: WebSearch) -> None:
    docs = WebPageLoader([f"{site.url}/blog"], session=ws).load()
    assert docs[0].page_content == "Blog post."
    assert asyncio.get_running_loop().is_running()


def test_importing_the_adapter_does_not_import_llamaindex() -> None:
    code = (
        "import sys, langchain_websearch; "
        "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('llama_index')}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_importing_without_langchain_names_the_extra_to_install() -> None:
    probe = "import sys; sys.modules['langchain_core'] = None; import langchain_websearch"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: langchain_websearch needs LangChain")
    assert "pip install 'websearch-pack[langchain]'" in last
    assert "pip install -e '.[langchain]'" in last
    assert "ModuleNotFoundError" not in done.stderr


def test_agent_with_a_grounded_provider_pinned(server: ScriptedServer) -> None:
    # The tools are unchanged: the vendor's citations are the menu, its answer comes first
    # with [n] markers, and only the options the vendor honours are offered to the model.
    body = json.loads((DOCUMENTED / "openai_web_search.json").read_text("utf-8"))
    server.script("/v1/responses", Reply(200, body))
    ws = WebSearch("openai", openai_api_key="canary-openai-key", openai_base_url=server.url)
    model = ScriptedChatModel(
        replies=[
            tool_call("web_search", "c1", query="positive news story today", include_answer=True),
            AIMessage(content="A river reopened to swimmers."),
        ]
    )
    agent = agent_for(ws, model, approval=False)
    result = agent.invoke(  # type: ignore[attr-defined]
        {"messages": [{"role": "user", "content": "Any good news today?"}]},
        {"configurable": {"thread_id": "grounded"}},
    )
    searched = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert searched.content.startswith("Answer: On November 30, 2026,")
    assert "in a century.[1]" in searched.content
    assert "1. River reopens to swimmers — https://www.example.com/news/river-restored" in (
        searched.content
    )
    assert searched.content.endswith('2 results from openai for "positive news story today".')
    assert searched.artifact.usage.searches == 1
    schema = WebSearchTool(session=ws).tool_call_schema.model_json_schema()["properties"]
    assert set(schema) == {
        *("query", "count", "read", "site", "exclude_domains", "include_answer", "country"),
    }
    assert result["messages"][-1].content == "A river reopened to swimmers."
