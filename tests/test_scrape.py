"""``WebSearch.scrape`` (crawler formats over the jailed fetch), ``engines=`` and
``blend_engines`` (which engines a blend asks), in the core, without the service."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.fake_engines import FakeEngines, fake_engines
from tests.support.http_server import Reply, ScriptedServer
from websearch_core import (
    ConfigurationError,
    FetchTimeoutError,
    InvalidRequestError,
    URLRefusedError,
    WebSearch,
)

PAGE = (
    "<html><head><title>T</title><script>var x = 1;</script></head><body>"
    "<nav>Menu</nav><article><p>" + "Body words here. " * 40 + "</p></article>"
    "<footer>Foot</footer></body></html>"
)


def _page(server: ScriptedServer, path: str = "/p", body: str = PAGE, **headers: str) -> str:
    server.script(path, Reply(200, body, headers={"Content-Type": "text/html", **headers}))
    return server.url + path


def test_scrape_formats_and_modes(server: ScriptedServer) -> None:
    url = _page(server)
    with WebSearch(fetch_allow_private=True) as ws:
        article = ws.scrape(url, formats=["markdown", "raw_html", "html"])
        whole = ws.scrape(url, main_content=False)
    assert article.raw_html == PAGE
    assert "Foot" not in article.markdown
    assert "var x" not in article.html
    assert "Menu" not in article.html
    assert "Menu" in whole.markdown
    assert "Foot" in whole.markdown
    assert whole.html is None
    assert whole.links is None
    assert article.title == "T"


async def test_ascrape_is_the_same_as_scrape(server: ScriptedServer) -> None:
    url = _page(server)
    with WebSearch(fetch_allow_private=True) as ws:
        sync = ws.scrape(url, formats=["markdown", "links"])
        asynchronous = await ws.ascrape(url, formats=["markdown", "links"])
        await ws.aclose()
    fields = {"fetched_at", "elapsed_ms"}
    assert sync.model_dump(exclude=fields) == asynchronous.model_dump(exclude=fields)


def test_scrape_of_a_non_html_page_warns_about_html_formats(server: ScriptedServer) -> None:
    server.script("/data", Reply(200, {"a": 1}))
    with WebSearch(fetch_allow_private=True) as ws:
        page = ws.scrape(server.url + "/data", formats=["markdown", "html"], exclude_tags=["p"])
    assert page.markdown == '{\n  "a": 1\n}'
    assert page.html is None
    assert page.warning is not None
    assert "not HTML" in page.warning
    assert "tag filters" in page.warning


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"formats": ["pdf"]}, "formats"),
        ({"formats": []}, "at least one format"),
        ({"formats": "markdown"}, "must be a list"),
        ({"include_tags": ["p >"]}, "not a CSS selector"),
        ({"exclude_tags": [3]}, "exclude_tags"),
        ({"deadline_s": 0}, "deadline_s"),
        ({"main_content": "yes"}, "main_content"),
    ],
)
def test_scrape_refuses_bad_arguments_before_any_request(
    server: ScriptedServer, arguments: dict[str, object], words: str
) -> None:
    url = _page(server)
    with WebSearch(fetch_allow_private=True) as ws, pytest.raises(InvalidRequestError, match=words):
        ws.scrape(url, **arguments)  # type: ignore[arg-type]
    assert server.hits("/p") == 0


def test_scrape_goes_through_the_jail_and_its_deadline(server: ScriptedServer) -> None:
    with WebSearch() as ws, pytest.raises(URLRefusedError):
        ws.scrape(_page(server))
    assert server.hits("/p") == 0
    server.script("/slow", Reply(200, "late", delay_s=2))
    with WebSearch(fetch_allow_private=True) as ws, pytest.raises(FetchTimeoutError) as late:
        ws.scrape(server.url + "/slow", deadline_s=0.3)
    assert "0.3 s" in str(late.value)


@pytest.fixture(scope="module")
def engines() -> FakeEngines:
    with fake_engines() as running:
        yield running  # type: ignore[misc]


def _blend(engines: FakeEngines, **extra: Any) -> WebSearch:
    return engines.blend(**extra)


def test_blend_engines_choose_the_blend_and_engines_a_search(engines: FakeEngines) -> None:
    with _blend(engines, blend_engines=["brave", "mojeek"]) as ws:
        assert ws.engines == ["brave", "mojeek"]
        only = ws.search("one engine", engines=["mojeek"])
        assert {o.engine for o in only.outcomes} == {"mojeek"}
        with pytest.raises(InvalidRequestError, match="choose among brave, mojeek"):
            ws.search("x", engines=["ddgs/yahoo"])
    with pytest.raises(ConfigurationError, match="'nonesuch'"):
        _blend(engines, blend_engines=["nonesuch"])
    with (
        _blend(engines, blend_engines=["brave"]) as ws,
        pytest.raises(InvalidRequestError, match="provider='blend'"),
    ):
        ws.search("x", engines=["brave"], provider="brave")


def test_nested_include_matches_are_kept_once(server: ScriptedServer) -> None:
    depth = 300
    body = "<html><body>" + "<div>" * depth + "deep words" + "</div>" * depth + "</body></html>"
    url = _page(server, "/nested", body)
    with WebSearch(fetch_allow_private=True) as ws:
        page = ws.scrape(url, formats=["markdown", "html"], include_tags=["*", "div", "body"],
                         main_content=False)  # fmt: skip
        emptied = ws.scrape(url, exclude_tags=["html", ":root", "*"], main_content=False)
    # The outermost match only: the words once, the HTML no larger than the page.
    assert page.markdown is not None
    assert page.markdown.count("deep words") == 1
    assert page.html is not None
    assert len(page.html) <= len(body)
    assert emptied.markdown == ""  # everything but the root removed, and no error
