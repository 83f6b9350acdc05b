"""Keep the HTML parser's stack shallow, whatever the markup, without dropping any text.

An HTML parser checks "is there a <p> in scope?" by walking its stack of open elements, so
parse time grows with the number of tags times the depth of that stack: 20,000 nested
``<div>``s take about a second, 60,000 take sixteen. Before parsing, ``flatten`` follows the
page's tags with a model of that stack and, where the stack would grow past ``limit``, drops
the extra start tags (and their end tags). Their text stays where it was, so nothing is lost;
only structure that deep — which no real page has — goes.

The model must never think the stack shallower than the parser will make it, or a page could
nest without limit behind its back; thinking it deeper only flattens a little early. So it
closes an element only where the HTML tree builder (WHATWG HTML 13.2.6) certainly does:

- an end tag closes a special element (``div``, ``li``, ``td`` …) only if it is in scope, and
  any other element only if no special element is open above it — so a stray ``</span>`` or
  a ``</span>`` with a ``<div>`` open inside the span closes nothing;
- a block start tag closes an open ``<p>`` in button scope; ``<li>``, ``<dd>``, ``<dt>`` close
  their like only when nothing special but ``address``/``div``/``p`` is in between; cells and
  rows close theirs within their table; ``<a>`` and ``<nobr>`` close their like as an end tag
  would; a tag that breaks out of SVG or MathML closes the innermost ``<svg>``/``<math>``;
- void elements never open, nor do ``/>`` tags directly inside SVG or MathML; raw-text
  elements (``<script>``, ``<style>`` …, outside SVG and MathML) and comments hold no tags;
- formatting elements (``<b>``, ``<font>``, ``<a>`` …) closed by a block stay active and are
  reopened in the next block, so the list of active ones is followed too, and kept short.

Implicit elements the parser adds (``tbody``, ``html``, ``body``, reconstructed formatting
elements) make its stack deeper than the model's by a bounded factor, which
tests/test_properties.py measures on random tag soup. Every step is O(1) (positions of open
elements are kept per name and per category), so the scan is linear in the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from websearch_core.extract.tokenizer import comment_end, script_end
from websearch_core.extract.tokenizer import tag_end as _tag_end

__all__ = ["Flattened", "flatten"]

#: A comment, a bogus comment (``<!…>``, ``<?…>``, ``</`` not before a letter: to the next
#: ">", 13.2.5.42), or a start or end tag and its name.
_TAG = re.compile(r"<!--|<[!?]|</(?![a-zA-Z])|<(/?)([a-zA-Z][^\t\n\f\r />]*)")
_VOID = frozenset(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param "
    "source track wbr".split()
)
#: Their content is text until their own end tag (``plaintext`` never ends) — in HTML
#: content only: inside SVG or MathML they are ordinary elements. ``noscript`` is not among
#: them: a parser without scripting (ours) reads its content as markup.
_RAW_TEXT = {
    name: re.compile(rf"</{name}[\t\n\f\r />]", re.IGNORECASE)
    for name in "script style textarea title xmp iframe noembed noframes".split()
}
#: The default scope's boundaries (13.2.4.2), SVG/MathML integration points included.
_SCOPE = frozenset(
    "applet caption html table td th marquee object template foreignobject desc mi mo mn ms "
    "mtext annotation-xml".split()
)
#: The "special" category (13.2.4.2), lower-cased.
_SPECIAL = frozenset(
    "address applet area article aside base basefont bgsound blockquote body br button "
    "caption center col colgroup dd details dir div dl dt embed fieldset figcaption figure "
    "footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img input "
    "keygen li link listing main marquee menu meta nav noembed noframes noscript object ol p "
    "param plaintext pre script search section select source style summary table tbody td "
    "template textarea tfoot th thead title tr track ul wbr xmp mi mo mn ms mtext "
    "annotation-xml foreignobject desc".split()
)
#: What stops the search for an ``<li>``/``<dd>``/``<dt>`` to close (13.2.6.4.7).
_STOPS_LIST_ITEM = _SPECIAL - {"address", "div", "p"}
_CLOSES_P = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 "
    "h6 pre listing form table hr xmp li dd dt".split()
)
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
_FOREIGN = ("svg", "math")
#: HTML start tags that end SVG or MathML content (13.2.6.5).
_BREAKOUT = frozenset(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i "
    "img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u "
    "ul var font".split()
)
_CATEGORIES = (("scope", _SCOPE), ("special", _SPECIAL), ("list_stop", _STOPS_LIST_ITEM))
#: Formatting elements (13.2.4.3): closed by a block around them, they stay "active" and are
#: reopened, as copies, wherever text comes next.
_FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
#: Elements that put a marker in the list of active formatting elements.
_MARKERS = frozenset("applet object marquee template td th caption".split())
#: Start tags that may close something before they open; the others only push.
_MAY_CLOSE = (
    _CLOSES_P
    | _HEADINGS
    | _BREAKOUT
    | {"li", "dd", "dt", "td", "th", "tr", "a", "nobr", "option", "optgroup"}
)


@dataclass(frozen=True)
class Flattened:
    html: str
    dropped_tags: int  # start and end tags removed; their text is kept
    deepest: int  # the model's deepest stack, after flattening


class _Stack:
    """The parser's stack of open elements, as far as its depth goes."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.at: dict[str, list[int]] = {}  # name -> indices where it is open, ascending
        self.marks: dict[str, list[int]] = {kind: [] for kind, _ in _CATEGORIES}
        #: The list of active formatting elements, as (name, attributes); None is a marker.
        self.active: list[tuple[str, str] | None] = []

    def __len__(self) -> int:
        return len(self.names)

    def push(self, name: str) -> None:
        index = len(self.names)
        self.names.append(name)
        self.at.setdefault(name, []).append(index)
        if name in _SPECIAL:
            for kind, members in _CATEGORIES:
                if name in members:
                    self.marks[kind].append(index)
            if name in _MARKERS:
                self.active.append(None)

    def close(self, index: int) -> None:
        """Pop every element from the top down to (and including) the one at ``index``."""
        if index < 0:
            return
        while len(self.names) > index:
            name = self.names.pop()
            self.at[name].pop()
            if name in _SPECIAL:
                for marks in self.marks.values():
                    if marks and marks[-1] == len(self.names):
                        marks.pop()
                if name in _MARKERS:  # clear the list back to the last marker
                    while self.active and self.active.pop() is not None:
                        pass

    def activated(self) -> list[tuple[str, str] | None]:
        """The active formatting elements after the last marker."""
        for index in range(len(self.active) - 1, -1, -1):
            if self.active[index] is None:
                return self.active[index + 1 :]
        return self.active

    def activate(self, entry: tuple[str, str]) -> None:
        """Add a formatting element to the list, as the parser does (Noah's Ark: at most three
        alike after the last marker; the earliest of them goes)."""
        after = len(self.active) - len(self.activated())
        alike = [i for i in range(after, len(self.active)) if self.active[i] == entry]
        if len(alike) >= 3:
            del self.active[alike[0]]
        self.active.append(entry)

    def deactivate(self, name: str) -> None:
        """Remove the latest ``name`` after the last marker (its end tag, or a new ``<a>``)."""
        after = len(self.active) - len(self.activated())
        for index in range(len(self.active) - 1, after - 1, -1):
            entry = self.active[index]
            if entry is not None and entry[0] == name:
                del self.active[index]
                return

    def last(self, name: str) -> int:
        positions = self.at.get(name)
        return positions[-1] if positions else -1

    def top(self) -> str | None:
        return self.names[-1] if self.names else None

    def _mark(self, kind: str, below: int | None = None) -> int:
        """The highest index of ``kind``, ignoring the element at ``below`` itself."""
        marks = self.marks[kind]
        if marks and marks[-1] == below:
            return marks[-2] if len(marks) > 1 else -1
        return marks[-1] if marks else -1

    def in_scope(self, name: str, *also: str) -> int:
        """Where ``name`` is open with no scope boundary (nor any of ``also``) above it."""
        index = self.last(name)
        if index < 0:
            return -1
        fence = max(self._mark("scope", index), *(self.last(other) for other in also), -1)
        return index if index > fence else -1

    def above_special(self, name: str, kind: str = "special") -> int:
        """Where ``name`` is open with no element of ``kind`` above it."""
        index = self.last(name)
        return index if index >= 0 and index >= self._mark(kind, index) else -1


def _end(stack: _Stack, name: str) -> None:
    if name == "p":
        stack.close(stack.in_scope("p", "button"))
    elif name == "li":
        stack.close(stack.in_scope("li", "ol", "ul"))
    elif name in ("td", "th", "tr", "table", "tbody", "thead", "tfoot", "caption"):
        stack.close(stack.in_scope(name) if name in _SCOPE else stack.in_scope(name, "table"))
    elif name in _SPECIAL:
        stack.close(stack.in_scope(name))
    else:
        stack.close(stack.above_special(name))


def _closes(stack: _Stack, name: str) -> int:
    """Down to where a start tag closes the stack before it opens (-1: nothing).

    Each rule is read on the stack as it is, and the deepest wins: where one closing would
    expose another (a heading under a closed ``<p>``), the model closes less than the parser.
    """
    if name not in _MAY_CLOSE:
        return -1
    found = [-1]
    if name in _CLOSES_P:
        found.append(stack.in_scope("p", "button"))
    if name == "li":
        found.append(stack.above_special("li", "list_stop"))
    elif name in ("dd", "dt"):
        found.append(stack.above_special("dd", "list_stop"))
        found.append(stack.above_special("dt", "list_stop"))
    elif name in ("td", "th"):
        found.append(stack.in_scope("td", "table"))
        found.append(stack.in_scope("th", "table"))
    elif name == "tr":
        found.append(stack.in_scope("tr", "table"))
    elif name in ("a", "nobr"):
        found.append(stack.above_special(name))
    elif name in ("option", "optgroup") and stack.top() == "option":
        found.append(len(stack) - 1)
    if name in _HEADINGS and stack.top() in _HEADINGS:
        found.append(len(stack) - 1)
    if name in _BREAKOUT and (stack.at.get("svg") or stack.at.get("math")):
        found.append(_foreign(stack))
    closing = [index for index in found if index >= 0]
    return min(closing) if closing else -1


def _foreign(stack: _Stack) -> int:
    """Where the innermost open ``<svg>``/``<math>`` is, if we are directly inside it."""
    index = max(stack.last(name) for name in _FOREIGN)
    return index if index > stack._mark("scope") else -1


#: At most this many formatting elements stay active at once. Each is reopened in every
#: paragraph that follows, so a page that leaves thousands open (each a little different, so
#: Noah's Ark keeps them all) makes the parser's tree quadratic in size; real pages leave a
#: handful. The ones past this are dropped like deep tags: their text stays.
_MAX_ACTIVE = 6


def flatten(html: str, limit: int) -> Flattened:
    """``html`` with the start tags that would nest past ``limit`` removed (see module doc)."""
    stack = _Stack()
    dropped: dict[str, int] = {}
    cuts: list[tuple[int, int]] = []
    deepest = 0
    position = 0
    while (match := _TAG.search(html, position)) is not None:
        if match.group(2) is None:
            if match.group(0) == "<!--":
                position = comment_end(html, match.start())
            elif html.startswith("<![CDATA[", match.start()) and _foreign(stack) >= 0:
                end = html.find("]]>", match.end())
                position = len(html) if end < 0 else end + 3
            elif html.startswith("</>", match.start()):
                position = match.start() + 3  # nothing at all to the parser
            else:
                end = html.find(">", match.end())
                position = len(html) if end < 0 else end + 1
            continue
        closing, name = match.group(1), match.group(2).lower()
        tag_end, self_closing = _tag_end(html, match.end())
        if tag_end < 0:
            break  # an unfinished tag at the end: the parser drops it
        position = tag_end + 1
        if closing:
            if dropped.get(name):
                dropped[name] -= 1
                cuts.append((match.start(), position))
            elif name not in _VOID:  # </br> reads as <br>; other void end tags are ignored
                if name in _FORMATTING:
                    stack.deactivate(name)
                _end(stack, name)
            continue
        if name == "plaintext":
            break  # the rest of the page is text
        if name in _VOID:
            continue
        if self_closing and name not in _BREAKOUT and _foreign(stack) >= 0:
            continue  # self-closing, directly inside SVG or MathML
        closes = _closes(stack, name)
        too_deep = (closes if closes >= 0 else len(stack)) >= limit
        formatting = name in _FORMATTING
        if too_deep or (formatting and len(stack.activated()) >= _MAX_ACTIVE):
            # Dropped, its closings are not made either: the parser will not see this tag.
            dropped[name] = dropped.get(name, 0) + 1
            cuts.append((match.start(), position))
            continue
        stack.close(closes)
        foreign = _foreign(stack) >= 0
        if formatting:
            if name in ("a", "nobr"):
                stack.deactivate(name)
            stack.activate((name, html[match.end() : tag_end].strip()))
        stack.push(name)
        deepest = max(deepest, len(stack))
        raw_end = _RAW_TEXT.get(name)
        if name == "script" and not foreign:
            position = script_end(html, position)
        elif raw_end is not None and not foreign:
            found = raw_end.search(html, position)
            position = len(html) if found is None else found.start()
    if not cuts:
        return Flattened(html, 0, deepest)
    pieces: list[str] = []
    kept_from = 0
    for start, end in cuts:
        pieces.append(html[kept_from:start])
        if html[start - 1 : start] == "<":
            # "<<div>b a0 a1 …": without the <div>, the "<" would open a tag nothing has read.
            pieces.append(" ")
        kept_from = end
    pieces.append(html[kept_from:])
    return Flattened("".join(pieces), len(cuts), deepest)
