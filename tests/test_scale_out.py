"""Reading distributed by the engines themselves: a real local Ray cluster running
``WebReader`` in an actor pool, and LlamaIndex's ``IngestionPipeline`` spreading
``WebPageFetch`` over worker processes. Pages come from a real server on loopback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.http_server import Reply, ScriptedServer
from tests.support.pages import HTML, article, serve_articles
from websearch_core.bulk import COLUMNS, BulkConfig, WebReader


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="the ray extra is part of dev")
    # 2 CPUs as on the build machines; no dashboard; the node's address is given, since a
    # machine with only loopback has no other to find.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
        logging_level=logging.WARNING,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def test_ray_map_batches_reads_every_url_in_an_actor_pool(
    ray_cluster: Any, server: ScriptedServer
) -> None:
    ray = ray_cluster
    urls = serve_articles(server, 300)
    server.script("/gone", Reply(404, b"not here", {"Content-Type": "text/plain"}))
    server.script("/robots.txt", Reply(200, "User-agent: *\nDisallow: /private\n"))
    server.script("/private/p", Reply(200, article(1), HTML))
    bad = [
        f"{server.url}/gone",
        f"{server.url}/private/p",
        "http://169.254.169.254/latest/meta-data/",  # refused even with private addresses open
        "file:///etc/passwd",
    ]
    items = [{"url": url, "row": n} for n, url in enumerate(urls + bad)]
    # The loopback pages need the test-only private policy, passed explicitly.
    config = BulkConfig(allow_private=True, per_host_concurrency=8)
    rows = (
        ray.data.from_items(items)
        .map_batches(
            WebReader,
            fn_constructor_kwargs={"config": config},
            compute=ray.data.ActorPoolStrategy(size=2),
            batch_size=40,
            num_cpus=1,
        )
        .take_all()
    )
    assert sorted(row["row"] for row in rows) == list(range(len(items)))  # every URL, once
    by_url = {row["url"]: row for row in rows}
    for n, url in enumerate(urls):
        row = by_url[url]
        assert row["error_code"] is None, row["error_message"]
        assert row["title"] == f"Article {n}"
        assert row["markdown"].startswith(f"# Article {n}")
    codes = [by_url[url]["error_code"] for url in bad]
    assert codes == ["http_error", "robots_disallowed", "blocked_by_policy", "blocked_by_policy"]
    assert set(rows[0]) == {*COLUMNS, "row"}
    # Two actors, each reading robots.txt once (not once per batch or per URL).
    assert 1 <= server.hits("/robots.txt") <= 2


def test_ray_actors_keep_the_jail_closed_to_private_addresses_by_default(
    ray_cluster: Any, server: ScriptedServer
) -> None:
    ray = ray_cluster
    urls = serve_articles(server, 20)
    rows = (
        ray.data.from_items([{"url": url} for url in urls])
        .map_batches(
            WebReader,
            compute=ray.data.ActorPoolStrategy(size=2),
            batch_size=10,
            num_cpus=1,
        )
        .take_all()
    )
    assert len(rows) == 20
    assert {row["error_code"] for row in rows} == {"blocked_by_policy"}
    assert not any(seen.path.startswith("/p/") for seen in server.seen)  # nothing was sent


def test_an_ingestion_pipeline_spreads_page_reading_over_its_workers(
    server: ScriptedServer,
) -> None:
    from llama_index.core import Document
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter

    from llamaindex_websearch import WebPageFetch, WebPageReader

    urls = serve_articles(server, 24)
    server.script("/gone", Reply(404, b"not here", {"Content-Type": "text/plain"}))
    documents = [Document(text="", metadata={"url": url, "batch": "b1"}) for url in urls]
    documents.append(Document(text="", metadata={"url": f"{server.url}/gone"}))
    documents.append(Document(text="Already has text.", metadata={"source": "notes"}))
    fetch = WebPageFetch(config=BulkConfig(allow_private=True, convert_workers=0))

    fetched = IngestionPipeline(transformations=[fetch]).run(documents=documents, num_workers=2)
    assert len(fetched) == len(documents)
    by_url = {node.metadata.get("url"): node for node in fetched}
    reader = WebPageReader(session=BulkConfig(allow_private=True).new_session())
    for expected in reader.load_data(urls):  # same text, metadata and id as the reader's
        got = by_url[expected.metadata["url"]]
        assert got.id_ == expected.id_
        assert got.get_content() == expected.get_content()
        assert got.metadata["batch"] == "b1"  # the input's own metadata kept
        assert got.metadata["title"] == expected.metadata["title"]
    failed = by_url[f"{server.url}/gone"]
    assert failed.get_content() == ""
    assert "HTTP 404" in failed.metadata["fetch_error"]
    assert any(node.get_content() == "Already has text." for node in fetched)  # passed through
    # Each page was read once, by the pipeline's worker processes: this process never made
    # a session of its own.
    assert fetch._session is None
    assert sum(1 for seen in server.seen if seen.path.startswith("/p/")) == 2 * len(urls)

    split = IngestionPipeline(transformations=[fetch, SentenceSplitter(chunk_size=256)])
    nodes = asyncio.run(split.arun(documents=documents[:6], num_workers=2))
    assert {node.metadata["url"] for node in nodes} == set(urls[:6])
    assert all(node.get_content() for node in nodes)
