"""Where HTML's tokenizer (WHATWG HTML 13.2.5) says a tag, a comment or a script ends, for the
scans that bound a page before it is parsed (``bounds``, ``nesting``).

A scan that reads the markup more loosely than the parser can be led astray on purpose: a
``>`` in a quoted value, a comment closed by ``--!>`` or opened as ``<!-->``, a ``</div>``
inside ``<?…>`` or inside a script's ``<!--<script>`` all read one way to a ``find(">")`` and
another to the parser, and a page can then nest or flood the parser where the scan sees
nothing. These follow the standard's states, each with one possessive regular expression
search, so they stay linear.
"""

from __future__ import annotations

import re

__all__ = ["ATTRIBUTE", "SPACE", "comment_end", "script_end", "tag_end"]

#: What separates attributes in a tag, as HTML's tokenizer reads it: tab, LF, FF, CR (read as
#: an LF) and space; nothing else (a no-break space is part of a name).
SPACE = r"\t\n\f\r "
#: One attribute of a tag, read as the standard's tokenizer reads it, from "before attribute
#: name" to the end of its value: the spaces and stray slashes before it (they start no
#: attribute: ``a/b`` is two); its name (any first character but a space, "/" or ">", so "=",
#: a quote or "<" too; then up to a space, "/", ">" or "="); and, if an "=" follows, its value:
#: quoted, or unquoted up to a space or ">" (quotes, "/" and "=" in it are the value's:
#: ``a=x"y b`` is two attributes). After a quoted value the next name may follow at once
#: (``a="x"b="y"``). Every part is possessive: the tokenizer never goes back, so neither does
#: the match, and a failed one gives up at once; a quoted value scans to its own closing quote
#: only. (A quote never closed reads as an unquoted value here, where the parser reads the
#: rest of the page as the tag's: either way no tag follows that the parser would see.)
ATTRIBUTE = (
    rf"[{SPACE}/]*+[^{SPACE}/>][^{SPACE}/>=]*+"
    rf"""(?:[{SPACE}]*+=[{SPACE}]*+(?:"[^"]*+"|'[^']*+'|[^{SPACE}>]*+))?+"""
)
#: Up to this many attributes a match, so that no match repeats without bound.
_RUN = 512
_ATTRIBUTES = re.compile(rf"(?:{ATTRIBUTE}){{1,{_RUN}}}+")
#: What may follow a tag's last attribute: spaces and slashes, then its ">".
_CLOSE = re.compile(rf"[{SPACE}/]*+>")


def tag_end(html: str, position: int) -> tuple[int, bool]:
    """Where the tag whose name ends at ``position`` ends: the index of its ``>`` (-1 when the
    page ends first: the parser drops such a tag), and whether it is written self-closing
    (``/>`` after its last attribute; ``a=b/>`` is the value ``b/``)."""
    end = position
    while (run := _ATTRIBUTES.match(html, end)) is not None and run.end() > end:
        end = run.end()
    closing = _CLOSE.match(html, end)
    if closing is None:
        return -1, False
    return closing.end() - 1, closing.group().endswith("/>")


_COMMENT_CLOSE = re.compile(r"--!?>")


def comment_end(html: str, start: int) -> int:
    """Where the comment opened by the ``<!--`` at ``start`` ends: just past its ``-->`` or
    ``--!>``, or at once for ``<!-->`` and ``<!--->``; the end of the page if it never does."""
    if html.startswith("<!-->", start):
        return start + 5
    if html.startswith("<!--->", start):
        return start + 6
    closing = _COMMENT_CLOSE.search(html, start + 4)
    return len(html) if closing is None else closing.end()


#: In script data: an escape's start, or the script's end tag (13.2.5.4 onwards).
_SCRIPT_DATA = re.compile(r"<!--|</script[\t\n\f\r />]", re.IGNORECASE)
#: In an escape (after ``<!--``): its end, the script's end tag, or a ``<script`` that starts
#: a double escape, in which a ``</script`` only ends that.
_SCRIPT_ESCAPED = re.compile(r"-->|</script[\t\n\f\r />]|<script[\t\n\f\r />]", re.IGNORECASE)
_SCRIPT_DOUBLE = re.compile(r"-->|</script[\t\n\f\r />]", re.IGNORECASE)


def script_end(html: str, position: int) -> int:
    """Where the text of a ``<script>`` whose start tag ends just before ``position`` ends:
    the index of the ``</script`` that closes it, or the end of the page. Not always the
    first one: after ``<!--`` and a ``<script``, a ``</script>`` ends only that."""
    searching = _SCRIPT_DATA
    while (found := searching.search(html, position)) is not None:
        seen = found.group()
        if seen == "<!--":
            # "<!-->" ends the escape at once: its dashes may be the "-->"'s.
            searching, position = _SCRIPT_ESCAPED, found.start() + 2
        elif seen == "-->":
            searching, position = _SCRIPT_DATA, found.end()
        elif seen[1] == "/":
            if searching is not _SCRIPT_DOUBLE:
                return found.start()
            searching, position = _SCRIPT_ESCAPED, found.end()
        else:  # "<script" and a space, "/" or ">", in an escape
            searching, position = _SCRIPT_DOUBLE, found.end()
    return len(html)
