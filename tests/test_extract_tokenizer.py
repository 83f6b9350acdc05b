"""Where a script and a comment end, held to lexbor's own reading of the same markup (the scans
that bound a page before it is parsed must read it as the parser will: ``extract.tokenizer``).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from websearch_core.extract import tokenizer

#: Pieces of script text that move the tokenizer between its script states, and text.
_SCRIPT_PIECES = st.sampled_from(
    [
        *("<!--", "-->", "<!-->", "<!--->", "--!>", "-", "--", "<", "!", ">", "x", " "),
        *("<script>", "<script ", "<SCRIPT/", "<scripts>", "</script>", "</script ", "</SCRIPT/"),
        *("</scripts>", "</script", "<script", "<!-- <script>", "</div>", "<b>"),
    ]
)


@given(st.lists(_SCRIPT_PIECES, max_size=12).map("".join))
@settings(max_examples=3000, deadline=None)
@example("<!--<script></script></div></script>")  # "</script>" in a double escape ends only it
@example("<!--><script></script>")  # "<!-->" ends the escape at once
@example("<!---><script></script>")
def test_a_script_ends_where_lexbor_ends_it(text: str) -> None:
    page = f"<html><head><script>{text}</script></head><body><i>after</i></body></html>"
    start = page.index("<script>") + len("<script>")
    end = tokenizer.script_end(page, start)
    script = LexborHTMLParser(page).css_first("script")
    assert script is not None
    assert script.text(deep=True) == page[start:end]


_COMMENT_PIECES = st.sampled_from(
    ["-", "--", "->", "-->", "--!>", "--!", "!", ">", "<!--", "<b>", "x", " ", "<!-", "--->"]
)


@given(st.lists(_COMMENT_PIECES, max_size=10).map("".join))
@settings(max_examples=3000, deadline=None)
@example(">")  # "<!-->": ended at once
@example("->")  # "<!--->"
@example(" x --!> <b>")
def test_a_comment_ends_where_lexbor_ends_it(text: str) -> None:
    page = f"<html><body><p><!--{text}<i>after</i></p></body></html>"
    start = page.index("<!--")
    end = tokenizer.comment_end(page, start)
    tree = LexborHTMLParser(page)
    first = next(node for node in tree.root.traverse(include_text=True) if node.is_comment_node)
    if page.startswith(("<!-->", "<!--->"), start):
        said = ""
    elif end == len(page):  # never closed: the rest of the page is the comment
        said = page[start + 4 :]
    else:
        said = page[start + 4 : end - (4 if page[end - 4 : end] == "--!>" else 3)]
    assert first.html == f"<!--{said}-->"  # written back with "-->" whatever closed it
    after = page.index("<i>after</i>")
    if end > after:
        assert tree.css_first("i") is None
    elif "<" not in page[end:after]:  # (a "<!-" after it would open a bogus comment)
        assert tree.css_first("i") is not None
