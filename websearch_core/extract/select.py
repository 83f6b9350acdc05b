"""Which part of a cleaned page is the article.

The idea, shared by most extractors since the Readability bookmarklet: article text comes in
runs of long, comma-rich paragraphs that sit side by side under one container, while chrome
comes in short, link-heavy fragments. So every paragraph votes for its parent (fully), its
grandparent (half) and a few more ancestors (less); the container with the most votes, after
discounting the share of its text that is link text, is the article. Its siblings join it
when they vote nearly as strongly (an article split by an ad slot into two ``<div>``s), and
inside the result, blocks that look like chrome (link lists, share prompts) are pruned.

Speed: text lengths come from the parser (C), and link density, the one costly measure, is
only computed for the few best-voted containers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_core.extract.clean import carries_lead, prose_by_node, remove_nodes
from websearch_core.extract.furniture import (
    CONTENT_WORDS,
    furniture_word,
    is_always_furniture,
    name_words,
    names,
)

__all__ = ["Selection", "prune", "select_main"]

#: Paragraph-like nodes that vote. ``td``: older sites lay articles out in tables.
_VOTERS = "p, pre, td, blockquote"
#: A paragraph shorter than this is a caption, a label or a button, not article prose.
_MIN_VOTE_CHARS = 25
#: How much a paragraph's vote counts at its parent, grandparent, and further up.
_ANCESTOR_WEIGHTS = (1.0, 0.5, 1 / 6, 1 / 9, 1 / 12)
#: Only this many of the best-voted containers get the (costly) link-density discount.
_FINALISTS = 8

_TAG_PRIOR = {
    "article": 10.0,
    "main": 5.0,
    "div": 5.0,
    "section": 3.0,
    "pre": 3.0,
    "td": 3.0,
    "blockquote": 3.0,
    "form": -3.0,
    "ol": -3.0,
    "ul": -3.0,
    "li": -3.0,
    "dl": -3.0,
    "dd": -3.0,
    "dt": -3.0,
    "address": -3.0,
    "th": -5.0,
    "h1": -5.0,
    "h2": -5.0,
    "h3": -5.0,
}
#: Words in a class or id (``name_words``) that raise or lower a container's score.
_POSITIVE = CONTENT_WORDS | frozenset(("page",))
_NEGATIVE = frozenset(
    (
        "comment",
        "meta",
        "footer",
        "footnote",
        "foot",
        "sidebar",
        "widget",
        "sponsor",
        "promo",
        "related",
        "share",
        "social",
        "nav",
        "navigation",
        "navbar",
        "menu",
        "masthead",
        "header",
        "banner",
        "combx",
        "shoutbox",
        "pager",
        "pagination",
        "popup",
        "tag",
        "tool",
        "toolbar",
    )
)
#: Short blocks that are furniture by what they say, whatever their markup.
_BOILERPLATE_TEXT = re.compile(
    r"^\W*(advertisement|advertising|ad\b|sponsored|read more|read next|related|"
    r"recommended|see also|also read|more from|follow us|follow\b|share\b|sign up|"
    r"subscribe|newsletter|click here|continue reading|you might also|you may also|"
    r"most popular|trending|tags?:|topics?:|filed under|copyright|©|all rights reserved|"
    r"image:|photo:|getty images|credit:|listen to this|loading)",
    re.IGNORECASE,
)
#: When paragraph-like nodes hold less than this share of the page's text, <div>s that hold
#: no block are read as paragraphs too.
_DIV_PARAGRAPHS_BELOW = 0.1
#: Elements that make a ``<div>`` a container rather than a paragraph.
_BLOCK_TAGS = frozenset(
    ("div", "p", "ul", "ol", "table", "section", "article", "pre", "blockquote", "dl", "br")
) | frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_BLOCKS = ", ".join(_BLOCK_TAGS)
_INLINE = frozenset(("a", "b", "strong", "i", "em", "span", "font", "u", "small", "sup", "sub"))
_BR_CONTAINERS = frozenset(("div", "section", "article", "main", "span", "font", "center"))
_PROSE_ITEMS = frozenset(("p", "br", "h2", "h3", "h4", "blockquote", "pre", "span", "a"))
#: A sibling of the winner that holds this much paragraph prose, and this share of the
#: winner's, with little link text, is more of the article.
_SIBLING_PROSE = 400
_SIBLING_PROSE_SHARE = 0.3
_SIBLING_LINK_DENSITY = 0.25
#: Blocks a story is split over. Not <article>, nor a block with its own <h1>: that is the
#: next story of a stream.
_SPLIT_CONTAINERS = frozenset(("div", "section"))
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)]?(\s|$)")


class _Votes:
    """A container's running tally: its score and the raw votes of the prose under it."""

    __slots__ = ("mass", "node", "score")

    def __init__(self, node: LexborNode, prior: float) -> None:
        self.node = node
        self.score = prior
        self.mass = 0.0


@dataclass
class Selection:
    nodes: list[LexborNode]
    chars: int
    link_density: float


def _class_weight(node: LexborNode) -> float:
    attrs = node.attributes
    if attrs.get("itemprop") == "articleBody":
        return 50.0
    if not attrs.get("class") and not attrs.get("id"):
        return 0.0
    words = {word for name in name_words(names(node)) for word in name}
    weight = 0.0
    if not words.isdisjoint(_POSITIVE):
        weight += 25.0
    if not words.isdisjoint(_NEGATIVE):
        weight -= 25.0
    return weight


def _link_chars(node: LexborNode) -> int:
    return sum(len(link.text(deep=True)) for link in node.css("a"))


def _link_density(node: LexborNode, text_chars: int) -> float:
    if text_chars == 0:
        return 0.0
    return min(1.0, _link_chars(node) / text_chars)


def _own_text_chars(node: LexborNode) -> int:
    """Characters of text directly in ``node`` or in its inline children (not in blocks)."""
    chars = 0
    child = node.child
    while child is not None:
        tag = child.tag
        if tag == "-text":
            chars += len((child.text_content or "").strip())
        elif tag in _INLINE:
            chars += len(child.text(deep=True).strip())
        child = child.next
    return chars


def _text_voters(body: LexborNode) -> list[tuple[LexborNode, int]]:
    """Paragraph-like nodes with their text length."""
    voters = []
    for node in body.css(_VOTERS):
        voters.append((node, len(node.text(deep=True).strip())))
    seen: set[int] = set()
    # Text set in <div>s and split by <br> instead of <p>: the <br>s' parents vote too,
    # with the text they hold themselves.
    for br in body.css("br"):
        parent = br.parent
        if parent is None or parent.tag not in _BR_CONTAINERS or parent.mem_id in seen:
            continue
        seen.add(parent.mem_id)
        voters.append((parent, _own_text_chars(parent)))
    # A page written without <p> nor <br>-split text: each <div> that holds no block
    # (``<div><span>…</span></div>``) is a paragraph. Looked for only when those paragraphs
    # hold little of the page's text, since it costs a walk over every <div>.
    voted = sum(chars for _, chars in voters if chars >= _MIN_VOTE_CHARS)
    if voted < len(body.text(deep=True)) * _DIV_PARAGRAPHS_BELOW:
        for div in body.css("div"):
            if not _holds_block(div):
                chars = len(div.text(deep=True).strip())
                if chars >= _MIN_VOTE_CHARS:
                    voters.append((div, chars))
    return voters


def _holds_block(node: LexborNode) -> bool:
    child = node.child
    while child is not None:
        if child.is_element_node and (
            child.tag in _BLOCK_TAGS or child.css_first(_BLOCKS) is not None
        ):
            return True
        child = child.next
    return False


def _ancestors(node: LexborNode, limit: int = 64) -> list[int]:
    ids = []
    current = node.parent
    while current is not None and limit:
        ids.append(current.mem_id)
        current = current.parent
        limit -= 1
    return ids


def select_main(tree: LexborHTMLParser) -> Selection | None:
    """The article's nodes in document order, or ``None`` when nothing votes."""
    body = tree.body
    if body is None:
        return None
    votes: dict[int, _Votes] = {}
    declared = body.css_first('[itemprop="articleBody"]')
    voters = _text_voters(body)
    for voter, length in voters:
        if length < _MIN_VOTE_CHARS:
            continue
        commas = voter.text(deep=True).count(",") if voter.tag != "div" else 0
        vote = 1.0 + commas + min(length / 100, 3.0)
        ancestor = voter.parent
        for weight in _ANCESTOR_WEIGHTS:
            if ancestor is None or ancestor.tag in (None, "html", "-document"):
                break
            key = ancestor.mem_id
            entry = votes.get(key)
            if entry is None:
                prior = _TAG_PRIOR.get(ancestor.tag or "", 0.0) + _class_weight(ancestor)
                entry = votes[key] = _Votes(ancestor, prior)
            entry.score += vote * weight
            entry.mass += vote
            ancestor = ancestor.parent
    if not votes:
        return None
    ranked = sorted(votes.values(), key=lambda entry: entry.score, reverse=True)
    finals: list[tuple[float, LexborNode, int]] = []
    for entry in ranked[:_FINALISTS]:
        chars = len(entry.node.text(deep=True))
        finals.append((entry.score * (1 - _link_density(entry.node, chars)), entry.node, chars))
    finals.sort(key=lambda item: item[0], reverse=True)
    best_score, best, _ = finals[0]
    if declared is not None and len(declared.text(deep=True)) > 200:
        best, best_score = declared, max(best_score, 1.0)
    best = _climb(best, finals, best_score, votes)
    prose = prose_by_node(body, [(voter, chars) for voter, chars in voters if voter.tag == "p"])
    nodes = _with_siblings(best, votes, best_score, prose)
    parent = best.parent
    if (
        len(nodes) == 1
        and parent is not None
        and parent.tag not in ("html", "body", None)
        and parent.parent is not None
        and prose.get(parent.mem_id, 0) == prose.get(best.mem_id, 0)
        and prose.get(parent.parent.mem_id, 0) > prose.get(parent.mem_id, 0)
    ):
        # The winner's parent holds no prose of its own (a "Read more" panel around the rest
        # of a story): the siblings before it are read as the winner's would be, the story's
        # first paragraphs above that panel.
        nodes = []
        for node in _with_siblings(parent, votes, best_score, prose, outer=True):
            if node.mem_id == parent.mem_id:
                nodes.append(best)
                break
            nodes.append(node)
    chars = sum(len(node.text(deep=True)) for node in nodes)
    linked = sum(_link_chars(node) for node in nodes)
    return Selection(nodes, chars, min(1.0, linked / chars) if chars else 0.0)


def _climb(
    best: LexborNode,
    finals: list[tuple[float, LexborNode, int]],
    score: float,
    votes: dict[int, _Votes],
) -> LexborNode:
    """Move up when several strong containers share an ancestor, or the parent only wraps."""
    # Other strong containers: not blocks inside best, nor its wrappers that hold no prose
    # but best's, which are the same candidate again (one forum post's five nested <div>s
    # are one post, not five).
    lineage = _ancestors(best, 8)
    line = set(lineage)
    entry = votes.get(best.mem_id)
    own = entry.mass * 1.05 if entry is not None else 0.0
    close = [
        node
        for value, node, _ in finals[1:]
        if value >= score * 0.75
        and not (node.mem_id in line and votes[node.mem_id].mass <= own)
        and best.mem_id not in _ancestors(node, 8)
    ]
    if len(close) >= 2:
        others = [set(_ancestors(node, 12)) for node in close]
        for level, key in enumerate(lineage):
            if sum(key in chain for chain in others) >= 2:
                node = best
                for _ in range(level + 1):
                    parent = node.parent
                    if parent is None or parent.tag in ("html", "body"):
                        break
                    node = parent
                best = node
                break
    parent = best.parent
    while parent is not None and parent.tag not in ("html", "body", None):
        child, elements = parent.child, 0
        while child is not None:
            if child.is_element_node:
                elements += 1
            elif child.tag == "-text" and (child.text_content or "").strip():
                elements += 2
            child = child.next
        if elements != 1:
            break
        best, parent = parent, parent.parent
    return best


def _with_siblings(
    best: LexborNode,
    votes: dict[int, _Votes],
    best_score: float,
    prose: dict[int, int],
    *,
    outer: bool = False,
) -> list[LexborNode]:
    """``best`` and the siblings that are more of the article; ``outer``: only paragraphs (and
    a lead ``<header>``) and blocks of ``best``'s own class (``best`` is a panel around the
    winner)."""
    parent = best.parent
    if parent is None or parent.tag in ("html", None):
        return [best]
    threshold = max(10.0, best_score * 0.2)
    best_entry = votes.get(best.mem_id)
    best_mass = best_entry.mass if best_entry is not None else 0.0
    mass_threshold = max(6.0, best_mass * 0.15)
    best_class = best.attributes.get("class")
    best_prose = prose.get(best.mem_id, 0)
    chosen: list[LexborNode] = []
    sibling = parent.child
    while sibling is not None:
        if sibling.mem_id == best.mem_id:
            chosen.append(sibling)
        elif sibling.is_element_node:
            entry = votes.get(sibling.mem_id)
            same_class = best_class and sibling.attributes.get("class") == best_class
            bonus = best_score * 0.2 if same_class else 0.0
            text = sibling.text(deep=True)
            chars = len(text.strip())
            held = prose.get(sibling.mem_id, 0)
            if (
                entry is not None
                and (same_class or not outer)
                and (entry.score + bonus >= threshold or entry.mass >= mass_threshold)
            ):
                # A comment thread the chrome rules kept (a forum's posts) votes like prose,
                # but next to an article it is still the comments.
                if _link_density(sibling, chars) < 0.5 and not is_always_furniture(names(sibling)):
                    chosen.append(sibling)
            elif (
                not outer
                and held >= max(_SIBLING_PROSE, best_prose * _SIBLING_PROSE_SHARE)
                and sibling.tag in _SPLIT_CONTAINERS
                and furniture_word(names(sibling)) is None
                and sibling.css_first("h1") is None
            ):
                # The story split below the shared container, its paragraphs nested too deep
                # in this sibling to have voted for it.
                if _link_density(sibling, chars) < _SIBLING_LINK_DENSITY:
                    chosen.append(sibling)
            elif sibling.tag == "p" and chars:
                density = _link_density(sibling, chars)
                if (chars > 80 and density < 0.25) or (
                    density == 0 and _SENTENCE_END.search(text) is not None
                ):
                    chosen.append(sibling)
            elif (
                sibling.tag == "div"
                and chars > 80
                and _SENTENCE_END.search(text) is not None
                and not _holds_block(sibling)
                and furniture_word(names(sibling)) is None
                and _link_density(sibling, chars) < 0.25
            ):
                # A paragraph set in a <div> (a standfirst beside the body): read as a <p>.
                chosen.append(sibling)
            elif sibling.tag == "header" and carries_lead(sibling):
                # The article's own header, with the standfirst: what the chrome rules kept.
                chosen.append(sibling)
        sibling = sibling.next
    return chosen


def _repeated_items(node: LexborNode) -> tuple[int, int]:
    """The largest run of same-tag, same-class children that each hold a link: (count, chars)."""
    groups: dict[tuple[str, str], list[int]] = {}
    child = node.child
    while child is not None:
        tag = child.tag
        if child.is_element_node and tag not in _PROSE_ITEMS and child.css_first("a[href]"):
            key = (tag or "", child.attributes.get("class") or "")
            groups.setdefault(key, []).append(len(child.text(deep=True).strip()))
        child = child.next
    if not groups:
        return 0, 0
    best = max(groups.values(), key=len)
    return len(best), sum(best)


def is_listing(selection: Selection) -> bool:
    """Whether the selection is a list of linked items (search results, an index, a feed).

    Such a page has no article; its "main block" is a run of four or more alike items, each
    with a link, short on average, that hold most of the block's text. Paragraphs do not
    count as items: an article whose every paragraph carries a link is still an article.
    """
    if selection.chars == 0:
        return False
    candidates = list(selection.nodes)
    for node in selection.nodes:
        child = node.child
        while child is not None and len(candidates) < 64:
            if child.is_element_node:
                candidates.append(child)
            child = child.next
    for node in candidates:
        count, chars = _repeated_items(node)
        if count >= 4 and chars >= selection.chars * 0.6 and chars / count < 400:
            return True
    return False


def _element_sibling(node: LexborNode, forward: bool) -> LexborNode | None:
    sibling = node.next if forward else node.prev
    while sibling is not None and not sibling.is_element_node:
        sibling = sibling.next if forward else sibling.prev
    return sibling


def _single_link_item(node: LexborNode) -> bool:
    """Whether a list holds one item and stands alone, not in a run of lists (a "More:" run of
    one-link lists is a link list)."""
    if len(node.css("li")) != 1:
        return False
    for forward in (False, True):
        sibling = _element_sibling(node, forward)
        if sibling is not None and sibling.tag in ("ul", "ol"):
            return False
    return True


def prune(nodes: list[LexborNode], title: str | None, content_words: set[str]) -> None:
    """Remove chrome left inside the selection: link lists, furniture phrases, the headline.

    ``content_words`` are the furniture words that name the content on this page
    (``remove_chrome`` spared them): a block named by one is not pruned for its name.
    """
    doomed: list[LexborNode] = []
    title_key = " ".join(title.split()).lower() if title else None
    headline_seen = False
    for root in nodes:
        for node in root.css("div, section, ul, ol, table, form, dl, p, h1, h2, span, figure"):
            tag = node.tag
            text = node.text(deep=True)
            chars = len(text.strip())
            if tag == "h1" or (tag == "h2" and not headline_seen and title_key):
                squashed = " ".join(text.split()).lower()
                if title_key and squashed and (squashed in title_key or title_key in squashed):
                    doomed.append(node)
                    headline_seen = True
                continue
            if tag == "h2":
                continue
            if chars == 0:
                continue
            if chars < 160 and _BOILERPLATE_TEXT.match(text.strip()):
                doomed.append(node)
                continue
            if tag in ("p", "span"):
                continue
            if text.count(",") >= 10 and tag not in ("ul", "ol"):
                continue
            density = _link_density(node, chars)
            limit = 0.5 if chars > 200 else 0.33
            link_list = density > limit and node.css_first("a") is not None
            if link_list and tag in ("ul", "ol") and _single_link_item(node):
                link_list = False  # the text's own link ("Get it at ..."), not a link list
            named = _class_weight(node) < 0 and chars < 500
            if named and content_words and furniture_word(names(node)) in content_words:
                named = False
            if link_list or named:
                doomed.append(node)
    remove_nodes(doomed)
