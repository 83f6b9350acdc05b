"""The extractor on sites that are not news: blogs, shops, forums, page builders, docs.

Each page is constructed to hold one class of trouble seen on real sites, wrapped in the
chrome such sites carry (a menu, a sidebar of links, a footer), so that the article is far
less than half of the page's text, as it is on those sites. Each failed before the extractor
decided furniture by whole words and by what a block holds.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_core import extract
from websearch_core.extract.furniture import _cached_name_words, furniture_word

LOREM = (
    "The valley road climbs past the old mill, where the river narrows and the water runs "
    "fast over the stones, and the walkers stop to rest before the last steep mile.",
    "Locals say the bridge was built in a single summer, by three families who shared the "
    "cost, the timber and the labour, and who argued about the design for a decade after.",
    "From the ridge you can see four villages, two churches and, on a clear day, the sea, "
    "which the guidebooks promise but which most visitors, in truth, never manage to spot.",
    "The descent is gentler, through beech woods and pasture, and ends at an inn that has "
    "served the same pie, by its own account, since before anyone can remember otherwise.",
)


def paragraphs(prefix: str, count: int = 4) -> list[str]:
    """``count`` distinct paragraphs of prose, each starting with ``prefix`` and its number."""
    return [f"{prefix} {n}: {LOREM[n % len(LOREM)]}" for n in range(1, count + 1)]


def chrome(content: str) -> str:
    """``content`` inside a site's usual chrome, which holds most of the page's text."""
    menu = "".join(
        f'<li><a href="/section/{n}">Section number {n} of the site</a></li>' for n in range(40)
    )
    links = "".join(
        f'<li><a href="/post/{n}">An older post about walking, part {n}</a></li>' for n in range(40)
    )
    return (
        "<!doctype html><html><head><title>Walks</title></head><body>"
        f'<div class="site-header"><ul class="nav-menu">{menu}</ul></div>'
        f'<div class="site-main">{content}</div>'
        f'<div class="sidebar widget-area"><div class="widget"><ul>{links}</ul></div></div>'
        '<div class="site-footer"><p>Copyright Walks Ltd, all rights reserved, 2026.</p></div>'
        "</body></html>"
    )


def html_paragraphs(texts: list[str]) -> str:
    return "".join(f"<p>{text}</p>" for text in texts)


def assert_article(doc_text: str, texts: list[str]) -> None:
    for text in texts:
        assert text in doc_text
    assert "Section number 3 of the site" not in doc_text
    assert "An older post about walking, part 7" not in doc_text


def test_a_taxonomy_class_naming_a_furniture_word_does_not_remove_the_article() -> None:
    body = paragraphs("Filed")
    page = chrome(
        '<article class="post-12 post type-post category-no-newsletter-rss tag-share-this">'
        f"<h1>A walk</h1>{html_paragraphs(body)}</article>"
    )
    doc = extract(page)
    assert doc.mode == "article"
    assert_article(doc.text, body)


def test_a_body_marked_no_share_is_the_body() -> None:
    body = paragraphs("Unshared")
    doc = extract(chrome(f'<div class="entry-content no-share">{html_paragraphs(body)}</div>'))
    assert_article(doc.text, body)


def test_a_word_inside_a_longer_word_is_not_that_word() -> None:
    # "taxomenu" holds "menu", "evolve-shared-history" holds "share": neither is furniture.
    first, second = paragraphs("Pane", 2), paragraphs("Shared history", 4)[2:]
    page = chrome(
        f'<div id="taxomenu1">{html_paragraphs(first)}</div>'
        f'<div class="evolve-shared-history">{html_paragraphs(second)}</div>'
    )
    assert_article(extract(page).text, first + second)


def test_a_heading_anchor_is_not_a_class_name() -> None:
    # Documentation generators give each section the id of its heading.
    first, second = paragraphs("Setting up", 2), paragraphs("Sharing", 4)[2:]
    page = chrome(
        f'<div class="section" id="setting-up">{html_paragraphs(first)}</div>'
        f'<div class="section" id="sharing-with-a-single-developer">'
        f"{html_paragraphs(second)}</div>"
    )
    assert_article(extract(page).text, first + second)


def test_a_forum_whose_every_post_is_called_a_comment_keeps_its_posts() -> None:
    posts = paragraphs("Post", 4)
    thread = "".join(
        f'<div class="message"><div class="author">user{n}</div>'
        f'<div class="post-text js-comment"><p>{post}</p></div></div>'
        for n, post in enumerate(posts)
    )
    doc = extract(chrome(f'<div class="thread">{thread}</div>'))
    assert_article(doc.text, posts)


@pytest.mark.parametrize("count", [4, 12, 40])
def test_a_blog_posts_comment_thread_is_still_furniture(count: int) -> None:
    # The other side of the rule above: here the comments hold more of the page's prose
    # than the post, up to nearly all of it, but the post is still there.
    post, comments = paragraphs("Post", 3), paragraphs("Comment", count)
    thread = "".join(f'<li class="comment"><p>{text}</p></li>' for text in comments)
    page = chrome(
        f'<article class="post"><div class="entry-content">{html_paragraphs(post)}</div>'
        f'<div id="comments" class="comments-area"><ol class="comment-list">{thread}</ol>'
        "</div></article>"
    )
    doc = extract(page)
    assert_article(doc.text, post)
    assert not any(text in doc.text for text in comments)


def test_a_forum_inside_another_named_wrapper_keeps_its_posts() -> None:
    # Each word is judged on its own nodes: the wrapper's "hidden-print" does not hide that
    # the "comment" posts inside it hold the page's prose.
    posts = paragraphs("Post", 4)
    thread = "".join(f'<div class="js-comment"><p>{post}</p></div>' for post in posts)
    doc = extract(chrome(f'<div class="thread hidden-print">{thread}</div>'))
    assert_article(doc.text, posts)


def test_the_next_story_of_a_stream_is_not_joined_to_the_first() -> None:
    # An endless-scroll page: the second <article> holds plenty of prose, but it is another
    # story, not the rest of this one.
    first, second = paragraphs("First story", 6), paragraphs("Second story", 4)
    deep = "<div><div><div><div><div>{}</div></div></div></div></div>"
    page = chrome(
        '<div class="stream">'
        f"<article><h1>One</h1>{deep.format(html_paragraphs(first))}</article>"
        f"<article><h1>Two</h1>{deep.format(html_paragraphs(second))}</article></div>"
    )
    doc = extract(page)
    assert_article(doc.text, first)
    assert not any(text in doc.text for text in second)


def test_a_huge_class_attribute_is_read_in_part_and_never_remembered() -> None:
    before = _cached_name_words.cache_info().currsize
    names = " ".join(f"menu-{n}" for n in range(100_000))
    body = paragraphs("Kept")
    doc = extract(chrome(f'<article>{html_paragraphs(body)}</article><div class="{names}">x</div>'))
    assert_article(doc.text, body)
    assert _cached_name_words.cache_info().currsize - before < 50  # the page's short names


def test_a_product_tab_named_like_a_menu_keeps_the_product_details() -> None:
    details = paragraphs("Details", 3)
    page = chrome(
        '<div class="product"><h1>Walking boots</h1>'
        '<ul class="tabs"><li><a href="#d">Details</a></li><li><a href="#r">Reviews</a></li></ul>'
        f'<div class="tab-menu--product" id="d">{html_paragraphs(details)}</div></div>'
    )
    assert_article(extract(page).text, details)


def test_an_article_header_with_the_lead_paragraph_keeps_it() -> None:
    lead, body = paragraphs("Lead", 1), paragraphs("Body", 4)[1:]
    page = chrome(
        f'<article><header class="entry-header"><h1>A walk</h1><p class="lead">{lead[0]}</p>'
        f'</header><div class="entry-content">{html_paragraphs(body)}</div></article>'
    )
    doc = extract(page)
    assert_article(doc.text, lead + body)
    assert doc.text.index(lead[0]) < doc.text.index(body[0])


def elementor(sections: list[list[str]]) -> str:
    """A page built the way one common WordPress page builder writes it: every heading and
    every text in a widget of its own, widgets in columns, columns in sections."""
    out = []
    for number, texts in enumerate(sections):
        widgets = (
            '<div class="elementor-element elementor-widget elementor-widget-heading">'
            '<div class="elementor-widget-container">'
            f'<h2 class="elementor-heading-title">Stage {number}</h2></div></div>'
        )
        for text in texts:
            widgets += (
                '<div class="elementor-element elementor-widget elementor-widget-text-editor">'
                f'<div class="elementor-widget-container"><p>{text}</p></div></div>'
            )
        out.append(
            '<section class="elementor-section elementor-top-section elementor-element">'
            '<div class="elementor-container elementor-column-gap-default">'
            '<div class="elementor-column elementor-col-100 elementor-top-column">'
            f'<div class="elementor-widget-wrap elementor-element-populated">{widgets}</div>'
            "</div></div></section>"
        )
    return f'<div data-elementor-type="wp-page" class="elementor elementor-42">{"".join(out)}</div>'


def test_a_page_builder_page_keeps_every_widget_of_text() -> None:
    sections = [paragraphs(f"Stage {n} part", 2) for n in range(4)]
    doc = extract(chrome(elementor(sections)))
    assert_article(doc.text, [text for texts in sections for text in texts])


def test_a_story_split_below_its_container_is_read_whole() -> None:
    # The opening's paragraphs sit five wrappers deep in the first block: too deep to vote
    # for it, so the vote goes to the second block, and the first, a sibling without votes,
    # was left out although it holds a third of the story.
    opening, middle, end = paragraphs("Opening", 3), paragraphs("Middle", 5), paragraphs("End", 1)
    deep = f"<div><div><div><div><div>{html_paragraphs(opening)}</div></div></div></div></div>"
    page = chrome(
        f'<div class="wrap"><div class="block">{deep}</div>'
        f'<div class="block">{html_paragraphs(middle)}</div>'
        f'<div class="block">{html_paragraphs(end)}</div></div>'
    )
    assert_article(extract(page).text, opening + middle + end)


def test_inline_markup_leaves_text_as_clean_prose() -> None:
    # Links, emphasis, a footnote mark and code stay readable in the markdown; the text is
    # the sentence as a reader sees it, words whole: no soft hyphens or zero-width spaces
    # (put in for line breaking) inside them, so a model can quote it and search for it.
    sentence = (
        'The <a href="/r">route</a> runs <em>past</em> un<em>believ</em>ably old walls'
        '<a href="#n1"><sup>[1]</sup></a>, then <strong>turns</strong> <code>north</code> '
        "at Fried&shy;richs&shy;hafen\u200b, in&nbsp;1882."
    )
    body = paragraphs("More")
    doc = extract(
        chrome(f"<article><p>{sentence}</p>{html_paragraphs(body)}</article>"),
        "https://walks.example/",
    )
    expected = (
        "The route runs past unbelievably old walls[1], then turns north at Friedrichshafen, "
        "in 1882."
    )
    assert expected in doc.text
    assert "[route](https://walks.example/r)" in doc.markdown
    assert "at Friedrichshafen, in 1882." in doc.markdown
    assert "*" not in doc.text
    assert "](" not in doc.text


def test_a_page_whose_every_word_is_chrome_is_shown_not_emptied() -> None:
    # Menus, a header and a footer, each far below the share of text that would spare it:
    # every rule removes something, and together they removed the whole page.
    blocks = (
        '<header class="top">Walks Ltd, the walking holiday company of the valley</header>'
        '<nav><a href="/a">Spring walks in the valley</a> <a href="/b">Autumn walks</a></nav>'
        '<div class="sidebar">Call us any day of the week on the number below</div>'
        "<footer>Registered in the valley, company number 1234567, VAT 7654321</footer>"
    )
    doc = extract(f"<html><body>{blocks}</body></html>")
    assert doc.mode == "full"
    assert doc.fallback is not None
    assert "menus, headers, footers" in doc.fallback
    for words in ("walking holiday company", "Autumn walks", "Call us", "company number"):
        assert words in doc.text


def test_text_only_in_noscript_is_read_when_nothing_else_holds_prose() -> None:
    story = paragraphs("Noscript", 3)
    page = chrome(
        '<div id="app"><p>You need to enable JavaScript to run this app.</p></div>'
        f'<noscript><div class="story">{html_paragraphs(story)}</div></noscript>'
    )
    doc = extract(page)
    assert doc.mode == "article"
    assert_article(doc.text, story)
    assert doc.note is not None
    assert "noscript" in doc.note
    assert "enable JavaScript" not in doc.text


def test_noscript_stays_out_when_the_page_has_its_prose() -> None:
    body = paragraphs("Scripted", 4)
    page = chrome(
        f"<article>{html_paragraphs(body)}</article>"
        "<noscript><p>Please enable JavaScript for the full experience of this site.</p></noscript>"
    )
    doc = extract(page)
    assert_article(doc.text, body)
    assert "enable JavaScript" not in doc.text
    assert doc.note is None


BLOCKS = st.sampled_from(
    (
        "<p>{}</p>",
        "<div>{}</div>",
        "<nav>{}</nav>",
        "<header>{}</header>",
        "<footer>{}</footer>",
        "<aside>{}</aside>",
        '<div class="sidebar">{}</div>',
        '<div class="comments">{}</div>',
        '<div class="share-bar">{}</div>',
        '<div class="widget">{}</div>',
        '<div role="navigation">{}</div>',
        '<ul class="menu"><li><a href="/x">{}</a></li></ul>',
        "<noscript>{}</noscript>",
        "<table><tr><td>{}</td></tr></table>",
        "<article><header><p>{}</p></header></article>",
    )
)
WORDS = st.text(st.sampled_from("abcdefgh ,."), min_size=0, max_size=300)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(BLOCKS, WORDS), min_size=1, max_size=8), st.booleans())
def test_article_mode_is_never_empty_when_the_page_has_text(
    blocks: list[tuple[str, str]], nested: bool
) -> None:
    inner = "".join(template.format(words) for template, words in blocks)
    page = f"<html><body>{'<div>' + inner + '</div>' if nested else inner}</body></html>"
    visible = extract(page, mode="raw").text  # the page's text once scripts and such are out
    noscript = " ".join(words for template, words in blocks if "noscript" in template)
    doc = extract(page)
    if any(c.isalpha() for c in visible + noscript):
        assert any(c.isalpha() for c in doc.text), (page, doc)


@pytest.mark.parametrize(
    ("classes", "element_id", "word"),
    [
        ("sidebar", "", "sidebar"),
        ("jp-relatedposts", "", "related"),  # a compound of a furniture word
        ("commentlist", "", "comment"),
        ("", "topnav", "nav"),
        ("", "sideBars", "sidebar"),  # parts read as one word
        ("side-bar", "", "sidebar"),
        ("read-more", "", "readmore"),
        ("post-text js-comment", "", "comment"),  # no content word excuses a comment
        ("article-footer", "", None),  # but one excuses a footer
        ("evolve-shared-history", "", None),  # "shared" is not "share"
        ("", "taxomenu1", None),
        ("entry-content no-share", "", None),  # negated
        ("post category-no-newsletter-rss tag-share", "", None),  # taxonomy
        ("section", "sharing-with-a-single-developer", None),  # a heading's anchor
        ("Cf Mend(380px)--modalMinWidth", "", None),  # atomic CSS
        ("md:hidden", "", None),
        ("", "disqus_thread", "disqus"),
        ("sharethis", "", "share"),
        ("socialshare", "", "social"),
        ("relatedstories", "", "related"),
        ("", "CybotCookiebotDialog", "cookie"),
        ("tags-links", "", "tag"),  # a second word that is part of the tags: not a slug
        ("tag-cloud", "", "tag"),
        ("ad", "", "ad"),
        ("ads-slot", "", "ad"),
        ("header", "", None),  # a tag's name, not furniture by name
    ],
)
def test_furniture_is_decided_by_whole_words(
    classes: str, element_id: str, word: str | None
) -> None:
    assert furniture_word(f"{classes}\0{element_id}") == word
