"""The main-content extractor: selection, markdown structure, metadata, modes, fallbacks, limits."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_core import extract
from websearch_core.extract import ExtractedDocument
from websearch_core.fetch.content import convert

FIXTURES = Path(__file__).parent / "fixtures" / "extract"
BASE = "https://news.example.org/section/story.html"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def article() -> ExtractedDocument:
    return extract(fixture("article"), BASE)


def test_the_model_and_the_plain_extraction_agree(article: ExtractedDocument) -> None:
    # The fetch path and its workers use the plain dataclass; callers get the model. Both
    # must say the same of a page, field for field.
    import websearch_core
    from websearch_core.extract import Extraction, extraction

    plain = extraction(fixture("article"), BASE)
    assert isinstance(plain, Extraction)
    assert ExtractedDocument.of(plain) == article
    assert article.markdown
    assert article.byline == plain.byline
    assert websearch_core.ExtractedDocument is ExtractedDocument
    assert isinstance(extract("<p>x</p>"), ExtractedDocument)


# -- article pages --------------------------------------------------------------------------------


def test_article_keeps_the_story_and_drops_the_chrome(article: ExtractedDocument) -> None:
    assert article.mode == "article"
    assert article.fallback is None
    assert article.text.startswith("The swing bridge over the inner harbour reopened")
    assert "divided opinion in the town" in article.text
    for chrome in (
        "We use cookies",
        "Sport",
        "Share on X",
        "Advertisement",
        "Sign up for our morning briefing",
        "Ferry timetable cut",
        "About time too",
        "All rights reserved",
        "window.dataLayer",
        "display:flex",
    ):
        assert chrome not in article.markdown
        assert chrome not in article.text


def test_headline_is_metadata_not_body(article: ExtractedDocument) -> None:
    assert article.title == "Harbour bridge reopens after two-year refit"
    assert "# Harbour bridge" not in article.markdown


def test_markdown_keeps_structure(article: ExtractedDocument) -> None:
    md = article.markdown
    assert "## What changed" in md
    assert "an extra **£4.2 million**." in md
    assert "*a relief for every trader on the waterfront*" in md
    assert "- a new hydraulic turning mechanism" in md
    assert "  - separated from traffic by a kerb;" in md  # nested list, indented
    assert "| Day | Openings |\n| --- | --- |\n| Weekdays | 07:00, 13:00, 19:00 |" in md
    assert "> We said we would reopen it before the spring tides, and we have." in md
    assert '```python\nstatus = bridge.position()  # "open" or "closed"\nprint(status)\n```' in md


def test_links_are_inline_and_absolute(article: ExtractedDocument) -> None:
    assert (
        "[council's final report](https://news.example.org/reports/bridge-2024.pdf)"
        in article.markdown
    )


def test_text_is_the_same_content_without_markup(article: ExtractedDocument) -> None:
    text = article.text
    for markup in ("**", "](", "## ", "```", "| ---", "> We"):
        assert markup not in text
    assert "council's final report" in text
    assert "What changed" in text
    assert "separated from traffic by a kerb;" in text
    assert 'status = bridge.position()  # "open" or "closed"' in text
    assert text.split() == _words_of(article.markdown)


def _words_of(markdown: str) -> list[str]:
    """The markdown's words with its markup taken off, to compare with ``.text``."""
    import re

    stripped = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    stripped = re.sub(
        r"^#+ |^\s*(?:[-*]|\d+\.) |^> ?|\*\*|\*|^```\w*$|^\| --- .*$", "", stripped, flags=re.M
    )
    return [word for word in stripped.replace("|", " ").split() if word]


def test_metadata(article: ExtractedDocument) -> None:
    assert article.byline == "Mara Lindqvist"
    assert article.published == "2024-03-12T09:30:00Z"
    assert article.site_name == "The Coastal Courier"
    assert article.canonical_url == "https://news.example.org/news/2024/harbour-bridge-reopens"
    assert article.language == "en-GB"
    assert article.description == "The swing bridge over the inner harbour reopened on Tuesday."
    assert article.metadata["byline"] == "Mara Lindqvist"
    assert set(article.metadata) == {
        "title",
        "byline",
        "published",
        "site_name",
        "canonical_url",
        "language",
        "description",
    }


def test_metadata_from_meta_tags_when_there_is_no_json_ld() -> None:
    html = """<html lang="fr"><head><title>Le marché rouvre - Journal du Port</title>
    <meta name="author" content="Jeanne Roux">
    <meta property="og:site_name" content="Journal du Port">
    <meta property="article:published_time" content="2023-11-02">
    <meta property="og:url" content="https://port.example/marche"></head>
    <body><article><p>Le marché couvert a rouvert ce matin, après trois mois de travaux, et les
    commerçants se disent soulagés, même si la fréquentation reste timide.</p></article></body>
    </html>"""
    doc = extract(html)
    assert (doc.title, doc.byline, doc.published, doc.language, doc.canonical_url) == (
        "Le marché rouvre",
        "Jeanne Roux",
        "2023-11-02",
        "fr",
        "https://port.example/marche",
    )


def test_article_split_by_an_ad_slot_is_read_whole() -> None:
    paragraph = "<p>{} sentence of the story, long enough to count as prose, with a comma.</p>"
    first = "".join(paragraph.format(f"Part one, number {i}") for i in range(5))
    second = "".join(paragraph.format(f"Part two, number {i}") for i in range(5))
    html = (
        f"<html><body><nav><a href='/'>Home</a></nav><div class='story'>"
        f"<div class='chunk'>{first}</div><div class='ad'>Ad</div><div class='chunk'>{second}</div>"
        "</div><div class='related'><a href='/x'>Other story</a></div></body></html>"
    )
    doc = extract(html)
    assert "Part one, number 0" in doc.text
    assert "Part two, number 4" in doc.text
    assert "Other story" not in doc.text


def test_text_set_with_br_instead_of_paragraphs() -> None:
    lines = "<br><br>".join(
        f"Line {i} of an old-style page, set in a single div, with commas, and more."
        for i in range(8)
    )
    html = (
        "<html><body><div id='menu'><a href='/'>Home</a></div>"
        f"<div class='main'>{lines}</div></body></html>"
    )
    doc = extract(html)
    assert doc.mode == "article"
    assert "Line 0 of an old-style page" in doc.text
    assert "Line 7 of an old-style page" in doc.text
    assert "Home" not in doc.text


# -- pages that are not articles ------------------------------------------------------------------


def test_docs_page_is_read_whole() -> None:
    doc = extract(fixture("docs"), "https://docs.example.org/api/retry.html")
    assert doc.markdown.startswith("# retry()")
    assert "| attempts | int | how many tries in all |" in doc.markdown
    assert "```python\nfrom fastlib import retry" in doc.markdown
    assert "- `RetryError` when every attempt failed." in doc.markdown
    assert "[Client timeouts](https://docs.example.org/api/client.html#timeouts)" in doc.markdown
    assert "Errors" not in doc.markdown  # the sidebar


def test_forum_thread_keeps_every_post() -> None:
    # Posts written as <div>s of text, no <p>: each is a paragraph, and the thread that holds
    # them all is the article, in order, without the forum's chrome.
    doc = extract(fixture("forum"))
    assert doc.mode == "article"
    posts = ("loses pressure overnight", "pressure relief valve", "holds 1.4 bar now")
    assert [doc.text.index(post) for post in posts] == sorted(doc.text.index(p) for p in posts)
    for chrome in ("Log in", "Forums", "Next", "Forum rules"):
        assert chrome not in doc.text


def test_search_results_page_falls_back_to_full() -> None:
    doc = extract(fixture("search"), "https://recipes.example/search?q=sourdough")
    assert doc.mode == "full"
    assert doc.fallback is not None
    assert "list" in doc.fallback
    assert "[A rye starter](https://recipes.example/recipes/rye-starter)" in doc.markdown
    assert "Two feeds a day for three days." in doc.markdown


def test_product_page_falls_back_to_full() -> None:
    doc = extract(fixture("product"))
    assert doc.mode == "full"
    assert doc.fallback is not None
    assert "product" in doc.fallback
    assert "€129.00" in doc.text
    assert "| Weight | 1.1 kg |" in doc.markdown
    assert "Cart (0)" not in doc.text


def test_bare_link_list_is_not_empty() -> None:
    doc = extract(fixture("links"), "https://links.example/index.html")
    assert doc.fallback is not None
    assert "- [Python documentation](https://docs.python.org/3/)" in doc.markdown
    assert "- [A local page](https://links.example/local/page.html)" in doc.markdown


def test_table_heavy_page_becomes_gfm_tables() -> None:
    doc = extract(fixture("table"))
    assert "| Club | Played | Goals | Points |" in doc.markdown
    assert "| Athletic | 38 | 52 | 61 |" in doc.markdown
    assert "| J. Silva | United | 19 |" in doc.markdown
    assert "Goals by club" in doc.markdown
    assert "Stats" not in doc.markdown


@pytest.mark.parametrize(
    ("html", "markdown"),
    [
        ("", ""),
        ("   ", ""),
        ("<html></html>", ""),
        ("<p>", ""),
        ("just words", "just words"),
        ("<!-- c -->", ""),
    ],
)
def test_empty_or_trivial_input(html: str, markdown: str) -> None:
    doc = extract(html)
    assert doc.markdown == markdown
    assert doc.mode == "full"
    assert doc.fallback  # says why there is no article, never silently empty
    assert doc.mode in ("article", "full")


def test_tiny_page_is_returned_whole() -> None:
    doc = extract("<!DOCTYPE html><title>T</title><p>sniffed</p>")
    assert doc.text == "sniffed"


# -- modes ----------------------------------------------------------------------------------------


def test_full_mode_keeps_everything_but_chrome() -> None:
    doc = extract(fixture("article"), BASE, mode="full")
    assert doc.mode == "full"
    assert doc.fallback is None
    assert "# Harbour bridge reopens after two-year refit" in doc.markdown
    assert "divided opinion in the town" in doc.markdown
    for chrome in ("We use cookies", "Sport", "All rights reserved", "window.dataLayer"):
        assert chrome not in doc.markdown


def test_raw_mode_returns_the_html_untouched() -> None:
    html = fixture("article")
    doc = extract(html, BASE, mode="raw")
    assert doc.mode == "raw"
    assert doc.markdown == html
    assert "divided opinion in the town" in doc.text
    assert "window.dataLayer" not in doc.text
    assert doc.title == "Harbour bridge reopens after two-year refit"


# -- markdown details -----------------------------------------------------------------------------


def test_links_that_lead_nowhere_keep_only_their_text() -> None:
    html = (
        "<article><p>See <a href='#notes'>the notes</a>, <a href='javascript:void(0)'>this</a> "
        "and <a href='../up.html'>the index</a>, which is long enough to be an article."
        "</p></article>"
    )
    doc = extract(html, "https://a.example/b/c/page.html")
    assert "See the notes, this and [the index](https://a.example/b/up.html)" in doc.markdown


def test_ordered_list_numbering_and_start() -> None:
    html = "<body><h1>Steps</h1><ol start='3'><li>Mix</li><li>Knead</li></ol></body>"
    doc = extract(html, mode="full")
    assert "3. Mix\n4. Knead" in doc.markdown


def test_inline_code_and_emphasis_inside_links() -> None:
    html = (
        "<body><p>Use <a href='/api'><code>fetch()</code></a> or "
        "<b><a href='/x'>bold link</a></b>.</p></body>"
    )
    doc = extract(html, "https://e.example/", mode="full")
    assert "Use [`fetch()`](https://e.example/api) or **[bold link](https://e.example/x)**." in (
        doc.markdown
    )
    assert doc.text == "Use fetch() or bold link."


def test_layout_tables_are_read_as_blocks() -> None:
    html = (
        "<body><table><tr><td><p>Left column paragraph.</p></td>"
        "<td><p>Right column paragraph.</p></td></tr></table></body>"
    )
    doc = extract(html, mode="full")
    assert doc.markdown == "Left column paragraph.\n\nRight column paragraph."


# -- hostile input --------------------------------------------------------------------------------


def _finishes(html: str, limit_s: float = 120.0) -> ExtractedDocument:
    """Run extract in a thread; fail (rather than hang the suite) if it never returns."""
    result: list[ExtractedDocument] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(extract(html, "https://e.example/"))
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(limit_s)
    assert not worker.is_alive(), "extract did not finish"
    if errors:
        raise errors[0]
    return result[0]


def test_deeply_nested_html_finishes_and_keeps_its_text() -> None:
    html = "<div>" * 20_000 + "deep text" + "</div>" * 20_000
    doc = _finishes(html)
    assert "deep text" in doc.text
    assert doc.note is not None
    assert "flattened" in doc.note
    # Past the tags a tree is built for, it is read as text, without a parse at all.
    deeper = _finishes("<div>" * 400_000 + "deep text" + "</div>" * 400_000)  # 4.4 MB
    assert deeper.text == "deep text"
    assert deeper.fallback is not None
    assert "800,000 tags" in deeper.fallback


def test_nesting_below_the_cap_keeps_its_text() -> None:
    html = "<div>" * 1_500 + "<p>Deep but legitimate text, with a comma, and more words.</p>"
    doc = _finishes(html)
    assert "Deep but legitimate text" in doc.text


def test_huge_flat_list_finishes() -> None:
    items = "".join(f"<li><a href='/item/{i}'>item {i}</a></li>" for i in range(200_000))
    doc = _finishes(f"<html><body><ul>{items}</ul></body></html>")  # ~7 MB, cut at 5 MB
    assert "item 0" in doc.text


def test_malformed_html_does_not_crash() -> None:
    html = (
        "<html><body><p>Unclosed <b>bold <i>and italic <p>next <table><td>cell<tr><li>x"
        "</div></span><a href='http://[bad'>bad url</a> <a href>empty</a> &bogus; &#xFFFFFF;"
        "<pre>code<pre>more</p></article>"
    )
    doc = _finishes(html)
    assert "bad url" in doc.text


def test_unclosed_formatting_tags_finish() -> None:
    doc = _finishes("<p>" + "<b><i>word " * 50_000)
    assert "word" in doc.text


# -- what fetch passes on -------------------------------------------------------------------------


def test_convert_puts_title_and_byline_above_the_article() -> None:
    converted = convert(fixture("article").encode(), "text/html; charset=utf-8", BASE)
    lines = converted.content.split("\n\n")
    assert lines[0] == "# Harbour bridge reopens after two-year refit"
    assert lines[1] == ("By Mara Lindqvist · Published 2024-03-12T09:30:00Z · The Coastal Courier")
    assert lines[2].startswith("The swing bridge over the inner harbour")
    assert converted.title == "Harbour bridge reopens after two-year refit"


@pytest.mark.parametrize(
    ("byline", "shown"),
    [
        ("By The Go Team", "By The Go Team"),
        ("by Jane Doe", "By Jane Doe"),
        ("BY THE NEWSROOM", "BY THE NEWSROOM"),
        ("Von Anna Schmidt", "Von Anna Schmidt"),
        ("Par Jean Dupont", "Par Jean Dupont"),
        ("Door Piet Jansen", "Door Piet Jansen"),
        ("Jane Doe, staff writer", "By Jane Doe, staff writer"),
        ("Mara Lindqvist", "By Mara Lindqvist"),
        ("Bylinesmith", "By Bylinesmith"),
        ("March 3, 2026", None),
        ("2026-03-03", None),
        ("Updated 3 March 2026 at 10:00 GMT", None),
        ("15. März 2026", None),
    ],
)
def test_a_byline_is_shown_once_whatever_its_language_or_form(
    byline: str, shown: str | None
) -> None:
    html = (
        f'<html><head><meta name="author" content="{byline}"><title>T</title></head>'
        "<body><article><p>"
        + "A paragraph of article text, long enough to count. " * 8
        + "</p></article></body></html>"
    )
    from websearch_core.fetch.content import convert

    header = convert(html.encode(), "text/html", "https://example.com/").content.split("\n\n")
    about = [part for part in header[1:2] if not part.startswith("A paragraph")]
    if shown is None:
        assert about == []
    else:
        assert about == [shown]
    assert not any(part.casefold().startswith("by by ") for part in header)


# -- the furniture-name prefilter agrees with the CSS selector it replaced ------------------


def _css_candidate_selector() -> str:
    """The selector ``remove_chrome`` used before the regular expression (the oracle)."""
    from websearch_core.extract import furniture

    parts: list[str] = []
    for attribute in ("class", "id"):
        parts.extend(f"[{attribute}*={fragment} i]" for fragment in furniture._FURNITURE_FRAGMENTS)
        for word in furniture._FURNITURE_PREFIXES:
            parts.append(f"[{attribute}~={word} i]")
            for joint in ("-", "_"):
                parts.append(f'[{attribute}*="{word}{joint}" i]')
                parts.append(f'[{attribute}$="{joint}{word}" i]')
    return ", ".join(parts)


def _names() -> st.SearchStrategy[str]:
    """Class or id values built of furniture words, near-misses and separators: each word
    followed by a joint, CSS whitespace, other whitespace or nothing."""
    from websearch_core.extract import furniture

    prefixes = list(furniture._FURNITURE_PREFIXES)
    # Mostly the short words whose place in the name decides (``ad`` alone, before or after a
    # joint, inside a longer word), a few fragments, and near-misses that are neither.
    word = st.sampled_from(
        [
            *prefixes,
            *(w.upper() for w in prefixes),
            *(w.title() for w in prefixes),
            *furniture._FURNITURE_FRAGMENTS,  # prefixes shared in the tree: co-okie, co-mment
            *("x", "main", "adventure", "navy", "tagline", "metadata", "load", "head"),
            *("s\u212aip", "\u212aomment", "\u0130d", "é", "0"),  # \u212a: the Kelvin sign
        ]
    )
    joint = st.sampled_from(["", "", "-", "_", " ", "\t", "\n", "\f", "\r", "\u00a0", "."])
    return st.lists(st.tuples(word, joint).map("".join), max_size=6).map("".join)


@given(_names(), _names())
@settings(max_examples=600, deadline=None)
def test_the_candidate_pattern_reads_names_as_the_css_selector_did(
    class_value: str, id_value: str
) -> None:
    import html

    from selectolax.lexbor import LexborHTMLParser

    from websearch_core.extract.furniture import may_name_furniture

    page = (
        f'<html><body><div class="{html.escape(class_value)}" id="{html.escape(id_value)}">'
        "x</div></body></html>"
    )
    node = LexborHTMLParser(page).css_first("div")
    assert node is not None
    matched_by_css = bool(node.parent and node.parent.css(_css_candidate_selector()))
    assert may_name_furniture(node) == matched_by_css


# -- selection rules, each on a constructed page ---------------------------------------------

_PROSE = [
    "The new trail opens on Saturday after three years of work by volunteers, who cleared "
    "brush, rebuilt two bridges and laid almost four kilometres of gravel.",
    "Walkers can start from the car park by the old mill, where a small kiosk sells maps, "
    "water and the local honey that the valley is known for.",
    "The route climbs gently through beech woods before it reaches the ridge, from which, on "
    "a clear day, you can see the lighthouse and the islands beyond it.",
    "Dogs are welcome on leads, but cyclists are asked to use the forestry road instead, "
    "because the path is narrow in places and steep near the quarry.",
    "The council has promised to repair the steps near the waterfall before winter, and a "
    "group of students will count visitors over the first month.",
]
_MENU = (
    '<div class="top"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>'
    '<li><a href="/sport">Sport</a></li></ul></div>'
)


def _page(body: str) -> str:
    return f"<html><head><title>Trail opens</title></head><body>{_MENU}{body}</body></html>"


def _paragraphs(texts: list[str]) -> str:
    return "".join(f"<p>{text}</p>" for text in texts)


def test_screen_reader_labels_and_image_copyright_credits_are_not_text() -> None:
    figure = (
        '<figure class="media-landscape has-caption"><span class="image-and-copyright-container">'
        '<span class="off-screen">Image copyright</span>'
        '<span class="story-image-copyright">Getty Images</span></span></figure>'
    )
    doc = extract(_page(f'<div class="story-body">{figure}{_paragraphs(_PROSE)}</div>'))
    assert _PROSE[0] in doc.text
    assert _PROSE[-1] in doc.text
    assert "Image copyright" not in doc.text
    assert "Getty Images" not in doc.text


def test_a_br_text_page_does_not_read_its_footer_divs_as_paragraphs() -> None:
    article = "<br><br>".join(_PROSE)
    footer = (
        '<div class="rodape"><div class="container"><div>Rua Walter Marquardt, 1111 - Barra do '
        "Rio Molha - 89259-565 - Caixa Postal 421 - Fone: (047) 2106-8000</div></div></div>"
    )
    side = "".join(f'<li><a href="/c/{i}">Category {i}</a></li>' for i in range(30))
    html = _page(
        f'<div id="wrap"><div class="container"><div class="row"><div class="col-3"><ul>{side}'
        f'</ul></div><div class="col-9"><p class="title">Trail opens</p>{article}</div></div>'
        f"</div>{footer}</div>"
    )
    doc = extract(html)
    assert _PROSE[0] in doc.text
    assert _PROSE[-1] in doc.text
    assert "Caixa Postal" not in doc.text


def test_forum_posts_in_nested_wrappers_are_all_kept() -> None:
    posts = "".join(
        f'<article class="message message--post"><div class="message-inner">'
        f'<div class="message-cell message-cell--user"><h4><a href="/m/{i}">user{i}</a></h4>'
        f"<dl><dt>Messages</dt><dd>{120 + i}</dd></dl></div>"
        f'<div class="message-cell message-cell--main"><div class="message-main">'
        f'<div class="message-content"><div class="message-userContent">'
        f'<article class="message-body"><div class="bbWrapper">{text}</div>'
        f"</article></div></div></div></div></div></article>"
        # two long posts and two short replies: the long ones' wrappers are every finalist
        for i, text in enumerate(
            [
                f"{_PROSE[0]}<br><br>{_PROSE[1]}",
                f"{_PROSE[2]}<br><br>{_PROSE[3]}",
                _PROSE[4],
                "Thanks!",
            ]
        )
    )
    doc = extract(_page(f'<div class="block-body">{posts}</div>'))
    for text in (*_PROSE, "Thanks!"):
        assert text in doc.text


def test_paragraphs_above_a_read_more_panel_are_kept() -> None:
    panel = (
        '<div id="read-more"><div id="read-more-link"><a href="#">Read more</a></div>'
        '<div id="middle-slot"></div>'
        f'<div id="read-more-content">{_paragraphs(_PROSE[2:] * 5)}</div></div>'
    )
    html = _page(
        f'<div id="story"><h1>Trail opens</h1><div class="story-body">'
        f"{_paragraphs(_PROSE[:2])}{panel}</div>"
        '<div class="more"><p>Another story, on the council budget, with many words in it.</p>'
        "</div></div>"
    )
    doc = extract(html)
    assert doc.text.startswith(_PROSE[0])
    assert _PROSE[1] in doc.text
    assert _PROSE[4] in doc.text
    assert "Another story" not in doc.text


def test_a_standfirst_set_in_a_div_beside_the_body_is_kept() -> None:
    lead = "Volunteers have finished a trail along the ridge after three years of weekend work."
    html = _page(
        f'<div class="article"><h1>Trail opens</h1><div class="article__summary">{lead}</div>'
        f'<div class="article__text">{_paragraphs(_PROSE * 2)}</div></div>'
    )
    doc = extract(html)
    assert doc.text.startswith(lead)
    assert _PROSE[-1] in doc.text


def test_a_lone_linked_item_is_text_but_a_run_of_them_is_a_link_list() -> None:
    offer = (
        '<ul><li><a href="https://shop.example/bag">Get it at Valley Outdoors for $89</a></li></ul>'
    )
    more = "".join(
        f'<ul><li><h4><a href="/story/{i}">Another story number {i}</a></h4></li></ul>'
        for i in range(3)
    )
    html = _page(
        f'<div class="story-body">{_paragraphs(_PROSE[:3])}{offer}{_paragraphs(_PROSE[3:])}'
        f"<h4>More:</h4>{more}</div>"
    )
    doc = extract(html)
    assert "Get it at Valley Outdoors for $89" in doc.text
    assert "Another story number" not in doc.text
