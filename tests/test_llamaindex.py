"""The LlamaIndex adapters in use: the tool spec under FunctionAgent and ReActAgent, approval,
and the readers (sync, async, inside a running loop, through an IngestionPipeline), all
against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.workflow import HumanResponseEvent

from llamaindex_websearch import (
    ApprovalRequired,
    WebPageReader,
    WebSearchReader,
    WebSearchToolSpec,
    require_approval,
)
from tests.support.http_server import Reply, ScriptedServer
from websearch_core import FetchError, JailPolicy, URLRefusedError, WebSearch
from websearch_core.documents import METADATA_KEYS
from websearch_core.render import FENCE_END, FENCE_NOTE
from websearch_core.tooling import FETCH_DESCRIPTION, SEARCH_DESCRIPTION

DOCUMENTED = Path(__file__).parent / "fixtures" / "documented"


def session_for(server: ScriptedServer) -> WebSearch:
    return WebSearch("searxng", searxng_url=server.url, fetch_policy=JailPolicy(allow_private=True))


@pytest.fixture
def ws(site: ScriptedServer) -> Iterator[WebSearch]:
    with session_for(site) as session:
        yield session


# -- a scripted LLM ---------------------------------------------------------------------------


class Script:
    """Plays fixed replies in order and keeps what the LLM was shown at each turn."""

    def __init__(self, *replies: ChatMessage) -> None:
        self.replies = list(replies)
        self.seen: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.seen.append(list(messages))
        return self.replies[len(self.seen) - 1]

    def llm(self) -> MockFunctionCallingLLM:
        return MockFunctionCallingLLM(response_generator=self)


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> ChatMessage:
    blocks: list[Any] = [
        ToolCallBlock(tool_call_id=f"c{i}", tool_name=name, tool_kwargs=kwargs)
        for i, (name, kwargs) in enumerate(tool_calls)
    ]
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)


def react(tool: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content=f"Thought: I need {tool}.\nAction: {tool}\nAction Input: {json.dumps(kwargs)}",
    )


def answer(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


async def run_agent(
    agent: FunctionAgent | ReActAgent, question: str, approve: Sequence[str] = ()
) -> tuple[list[ToolCallResult], list[ApprovalRequired], str]:
    """Run to the end, answering approval requests in order; the tool results it recorded."""
    handler = agent.run(user_msg=question)
    results: list[ToolCallResult] = []
    asked: list[ApprovalRequired] = []
    decisions = iter(approve)
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            results.append(event)
        elif isinstance(event, ApprovalRequired):
            asked.append(event)
            assert handler.ctx is not None
            handler.ctx.send_event(HumanResponseEvent(response=next(decisions)))
    response = await handler
    return results, asked, str(response)


# -- the tool spec ------------------------------------------------------------------------------


def test_importing_the_package_does_not_import_langchain() -> None:
    probe = (
        "import sys, llamaindex_websearch; "
        "print(sorted(m for m in sys.modules if m.split('.')[0].startswith('langchain')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_spec_pairs_sync_and_async_under_the_tool_names(ws: WebSearch) -> None:
    spec = WebSearchToolSpec(ws)
    tools = spec.to_tool_list()
    assert [t.metadata.name for t in tools] == ["web_search", "web_fetch"]
    assert [t.metadata.description for t in tools] == [SEARCH_DESCRIPTION, FETCH_DESCRIPTION]
    assert tools[0].real_fn == spec.web_search
    assert tools[0].async_fn == spec.aweb_search
    assert tools[1].async_fn == spec.aweb_fetch
    assert "url (str): The page's full http(s) URL" in (spec.web_fetch.__doc__ or "")


def test_schema_offers_only_what_the_provider_honours() -> None:
    def fields(session: WebSearch) -> set[str]:
        tool = WebSearchToolSpec(session).to_tool_list()[0]
        return set(tool.metadata.get_parameters_dict()["properties"])

    searxng = fields(WebSearch("searxng", searxng_url="http://127.0.0.1:9"))
    tavily = fields(WebSearch("tavily", tavily_api_key="tvly-canary-key"))
    assert {"query", "count", "site", "freshness", "language", "page"} <= searxng
    assert not {"date_from", "country"} & searxng
    assert {"date_from", "date_to", "include_answer"} <= tavily
    assert not {"country", "language", "page", "safesearch"} & tavily


def test_search_is_left_out_when_no_provider_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("websearch_core.providers.ddgs.importlib.util.find_spec", lambda name: None)
    assert [t.metadata.name for t in WebSearchToolSpec().to_tool_list()] == ["web_fetch"]


def test_outputs_are_the_core_renderings(ws: WebSearch, site: ScriptedServer) -> None:
    search, fetch = WebSearchToolSpec(ws).to_tool_list()
    menu = search.call(query="go 1.26", count=2)
    assert menu.content == ws.search("go 1.26", count=2).render()
    assert menu.content.endswith('2 results from searxng for "go 1.26".')
    page = fetch.call(url=f"{site.url}/go")
    lines = page.content.splitlines()
    assert lines[0].startswith(f"--- begin fetched content: {site.url}/go (text/html")
    assert lines[-2:] == [FENCE_END, FENCE_NOTE]
    assert page.content == ws.fetch(f"{site.url}/go").render()


async def test_async_twins_and_argument_coercion(ws: WebSearch, site: ScriptedServer) -> None:
    spec = WebSearchToolSpec(ws)
    menu = await spec.aweb_search("go 1.26", count="1")  # type: ignore[arg-type]  # as a model may
    assert menu.endswith('1 result from searxng for "go 1.26".')
    assert "# Go 1.26" in await spec.aweb_fetch(f"{site.url}/go")


def test_the_default_policy_refuses_loopback(site: ScriptedServer) -> None:
    with pytest.raises(URLRefusedError, match="refused"):
        WebSearchToolSpec(WebSearch()).web_fetch(f"{site.url}/go")
    assert site.hits("/go") == 0


async def test_function_agent_searches_fetches_and_answers(
    ws: WebSearch, site: ScriptedServer
) -> None:
    script = Script(
        calls(("web_search", {"query": "go 1.26 release notes", "count": 2})),
        calls(("web_fetch", {"url": f"{site.url}/go"})),
        answer("Go 1.26 adds iterators."),
    )
    agent = FunctionAgent(tools=WebSearchToolSpec(ws).to_tool_list(), llm=script.llm())
    results, _, final = await run_agent(agent, "What is new in Go 1.26?")
    assert [r.tool_name for r in results] == ["web_search", "web_fetch"]
    assert not any(r.tool_output.is_error for r in results)
    searched, fetched = (r.tool_output.content for r in results)
    assert searched.endswith('2 results from searxng for "go 1.26 release notes".')
    assert "# Go 1.26" in fetched
    assert fetched.splitlines()[-1] == FENCE_NOTE
    assert final == "Go 1.26 adds iterators."
    # the model read the fetched page on its last turn
    assert any(m.role == MessageRole.TOOL and FENCE_NOTE in str(m.content) for m in script.seen[2])


async def test_failures_reach_the_model_as_error_outputs(ws: WebSearch) -> None:
    script = Script(
        calls(
            ("web_fetch", {"url": "http://169.254.169.254/latest/meta-data/"}),
            ("web_search", {"query": "x", "date_from": "2026-01-01"}),
        ),
        answer("I could not do it."),
    )
    agent = FunctionAgent(tools=WebSearchToolSpec(ws).to_tool_list(), llm=script.llm())
    results, _, _ = await run_agent(agent, "q")
    outputs = {r.tool_name: r.tool_output for r in results}
    assert all(o.is_error for o in outputs.values())
    assert outputs["web_fetch"].content.startswith("refused: cloud metadata endpoint")
    assert outputs["web_search"].content == (
        "provider 'searxng' cannot honour date_range: drop the option"
    )
    assert "Traceback" not in "".join(o.content for o in outputs.values())


async def test_react_agent_searches_fetches_and_answers(
    ws: WebSearch, site: ScriptedServer
) -> None:
    script = Script(
        react("web_search", query="go 1.26 release notes", count=2),
        react("web_fetch", url=f"{site.url}/go"),
        answer("Thought: I can answer without using any more tools.\nAnswer: Go 1.26 adds it."),
    )
    agent = ReActAgent(tools=WebSearchToolSpec(ws).to_tool_list(), llm=script.llm())
    results, _, final = await run_agent(agent, "What is new in Go 1.26?")
    assert [r.tool_name for r in results] == ["web_search", "web_fetch"]
    assert results[0].tool_output.content.startswith("1. Go 1.26 Release Notes — ")
    assert "# Go 1.26" in results[1].tool_output.content
    assert final == "Go 1.26 adds it."
    assert "Observation: --- begin fetched content" in str(script.seen[2])


async def test_approval_shows_the_detail_before_any_egress(
    ws: WebSearch, site: ScriptedServer
) -> None:
    script = Script(
        calls(("web_search", {"query": "go 1.26 release notes"})),
        calls(("web_fetch", {"url": f"{site.url}/go"})),
        answer("I was not allowed to read the page."),
    )
    tools = require_approval(WebSearchToolSpec(ws).to_tool_list())
    agent = FunctionAgent(tools=tools, llm=script.llm())
    results, asked, final = await run_agent(agent, "q", approve=["yes", "no"])
    assert [a.prefix for a in asked] == [
        'Search the web for: "go 1.26 release notes"',
        f"Fetch this URL: {site.url}/go",
    ]
    assert asked[1].tool_kwargs == {"url": f"{site.url}/go"}
    assert not results[0].tool_output.is_error
    assert results[1].tool_output.is_error
    assert (
        results[1].tool_output.content == f"not approved by the user: Fetch this URL: {site.url}/go"
    )
    assert (site.hits("/search"), site.hits("/go")) == (1, 0)
    assert final == "I was not allowed to read the page."


# -- WebPageReader ------------------------------------------------------------------------------


def test_reader_loads_in_order_with_stable_ids_and_keys(
    site: ScriptedServer, ws: WebSearch
) -> None:
    urls = [f"{site.url}/go", f"{site.url}/blog"]
    docs = WebPageReader(session=ws, concurrency=2).load_data(urls)
    with session_for(site) as other:
        again = WebPageReader(session=other).load_data(urls)
    assert [d.metadata["url"] for d in docs] == urls
    assert [d.id_ for d in docs] == [d.id_ for d in again]
    assert len({d.id_ for d in docs}) == 2
    assert tuple(docs[0].metadata) == METADATA_KEYS
    assert docs[0].metadata["title"] == "Go 1.26"
    assert docs[0].text.startswith("# Go 1.26")
    assert docs[1].text == "Blog post."
    embedded = docs[0].get_metadata_str(MetadataMode.EMBED)
    assert embedded == f"url: {site.url}/go\ntitle: Go 1.26"
    for_llm = docs[0].get_metadata_str(MetadataMode.LLM)
    assert "final_url" in for_llm
    assert "truncated" in for_llm
    assert "fetched_at" not in for_llm


def test_reader_is_serialisable_without_its_session(ws: WebSearch) -> None:
    reader = WebPageReader(session=ws, concurrency=3, fail_on_error=True)
    data = reader.to_dict()
    assert data["class_name"] == "WebPageReader"
    assert (data["concurrency"], data["fail_on_error"]) == (3, True)
    assert "session" not in data


def test_reader_reports_failures_rather_than_dropping_them(
    site: ScriptedServer, ws: WebSearch, caplog: pytest.LogCaptureFixture
) -> None:
    urls = [f"{site.url}/go", f"{site.url}/gone", "http://169.254.169.254/", f"{site.url}/blog"]
    reader = WebPageReader(session=ws)
    docs = reader.load_data(urls)
    assert [d.metadata["url"] for d in docs] == [urls[0], urls[3]]
    assert reader.failures[0] == (urls[1], "HTTP 404 Not Found")
    assert reader.failures[1][0] == urls[2]
    assert reader.failures[1][1].startswith("refused: cloud metadata")
    assert len(reader.failures) == 2
    assert "could not load" in caplog.text
    with pytest.raises(FetchError, match="HTTP 404"):
        WebPageReader(session=ws, fail_on_error=True).load_data(urls)
    with pytest.raises(URLRefusedError):
        WebPageReader(session=ws, fail_on_error=True).load_data([urls[2]])


async def test_reader_async_in_order(site: ScriptedServer, ws: WebSearch) -> None:
    urls = [f"{site.url}/go?i={i}" for i in range(12)] + [f"{site.url}/gone"]
    reader = WebPageReader(session=ws, concurrency=3)
    streamed = [d async for d in reader.alazy_load_data(urls)]
    assert [d.metadata["url"] for d in streamed] == urls[:12]
    assert reader.failures == [(urls[12], "HTTP 404 Not Found")]
    loaded = await reader.aload_data(urls[:2])
    assert [d.id_ for d in loaded] == [d.id_ for d in streamed[:2]]
    assert reader.failures == []


async def test_reader_sync_load_inside_a_running_loop(site: ScriptedServer, ws: WebSearch) -> None:
    docs = WebPageReader(session=ws).load_data([f"{site.url}/blog"])  # as in Jupyter
    assert docs[0].text == "Blog post."
    assert asyncio.get_running_loop().is_running()


def test_progress_bar_only_on_a_terminal_unless_asked(
    site: ScriptedServer, ws: WebSearch, capsys: pytest.CaptureFixture[str]
) -> None:
    WebPageReader(session=ws).load_data([f"{site.url}/blog"])
    assert capsys.readouterr().err == ""  # stderr is captured here, so not a terminal
    WebPageReader(session=ws, show_progress=True).load_data([f"{site.url}/blog"])
    assert "Fetching pages: 100%" in capsys.readouterr().err


def test_ingestion_pipeline_over_the_reader_skips_unchanged_pages(
    site: ScriptedServer, ws: WebSearch
) -> None:
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=256), MockEmbedding(embed_dim=8)],
        docstore=SimpleDocumentStore(),
        vector_store=SimpleVectorStore(),
    )
    urls = [f"{site.url}/go", f"{site.url}/blog"]
    nodes = pipeline.run(documents=WebPageReader(session=ws).load_data(urls))
    assert len(nodes) == 2
    assert all(node.embedding is not None and len(node.embedding) == 8 for node in nodes)
    assert nodes[0].metadata["url"] == urls[0]
    assert nodes[0].ref_doc_id == WebPageReader(session=ws).load_data(urls[:1])[0].id_
    with session_for(site) as fresh:  # a new run: same pages, same ids, nothing to redo
        assert pipeline.run(documents=WebPageReader(session=fresh).load_data(urls)) == []


# -- WebSearchReader ----------------------------------------------------------------------------


def test_search_reader_fetches_the_top_k_with_rank_and_snippet(
    site: ScriptedServer, ws: WebSearch
) -> None:
    reader = WebSearchReader(session=ws)
    docs = reader.load_data("go 1.26", k=3)
    assert [d.metadata["rank"] for d in docs] == [1, 2, 3]
    assert docs[0].text.startswith("# Go 1.26")
    assert docs[0].metadata["snippet"] == "Go 1.26 adds"
    assert (docs[0].metadata["provider"], docs[0].metadata["status"]) == ("searxng", 200)
    assert docs[1].metadata["title"] == "Blog"  # the page has none; the result's is kept
    assert docs[2].text == "a dead link"  # kept as its snippet ...
    assert docs[2].metadata["fetch_error"] == "HTTP 404 Not Found"  # ... and the failure said
    assert reader.failures == [(f"{site.url}/gone", "HTTP 404 Not Found")]
    assert "snippet" not in docs[0].get_metadata_str(MetadataMode.EMBED)
    with pytest.raises(FetchError, match="HTTP 404"):
        WebSearchReader(session=ws, fail_on_error=True).load_data("go 1.26", k=3)


async def test_search_reader_async(ws: WebSearch) -> None:
    reader = WebSearchReader(session=ws, search_options={"site": "go.dev"})
    docs = await reader.aload_data("go 1.26", k=2)
    assert [d.metadata["title"] for d in docs] == ["Go 1.26", "Blog"]
    assert reader.failures == []


def test_importing_without_llamaindex_names_the_extra_to_install() -> None:
    probe = "import sys; sys.modules['llama_index'] = None; import llamaindex_websearch"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: llamaindex_websearch needs LlamaIndex")
    assert "pip install 'websearch-pack[llamaindex]'" in last
    assert "ModuleNotFoundError" not in done.stderr


async def test_function_agent_with_a_grounded_provider_pinned(server: ScriptedServer) -> None:
    body = json.loads((DOCUMENTED / "anthropic_web_search.json").read_text("utf-8"))
    server.script("/v1/messages", Reply(200, body))
    ws = WebSearch(
        "anthropic", anthropic_api_key="canary-anthropic-key", anthropic_base_url=server.url
    )
    script = Script(
        calls(("web_search", {"query": "When was Claude Shannon born?", "include_answer": True})),
        answer("April 30, 1916."),
    )
    spec = WebSearchToolSpec(ws)
    agent = FunctionAgent(tools=spec.to_tool_list(), llm=script.llm())
    results, _, final = await run_agent(agent, "When was Claude Shannon born?")
    assert [r.tool_name for r in results] == ["web_search"]
    searched = results[0].tool_output
    assert not searched.is_error
    assert searched.content.startswith("Answer: Based on the search results, Claude Shannon")
    assert "Petoskey, Michigan.[1]" in searched.content
    assert "1. Claude Shannon - Wikipedia — https://en.wikipedia.org/wiki/Claude_Shannon" in (
        searched.content
    )
    assert final == "April 30, 1916."
    # the model read the cited answer on its last turn
    assert any(m.role == MessageRole.TOOL and "[1]" in str(m.content) for m in script.seen[1])
