"""Text a model reads: one kind of line break, no control characters.

A model reads ``\\r``, U+2028, U+2029, NEL (U+0085), VT, FF and the information separators
U+001C to U+001E as line breaks, whatever a terminal shows; ``str.splitlines`` splits on exactly
those (and ``\\n``, ``\\r\\n``), so every one becomes ``\\n`` here. Other control characters
(NUL, BEL, ESC, DEL, the C1 set) carry nothing a reader needs and can drive terminals, so they
are removed; a tab is kept.
"""

from __future__ import annotations

import re

__all__ = ["clean_text", "one_line", "strip_controls", "without_surrogates"]

_CONTROLS = dict.fromkeys(
    [*(c for c in range(0x20) if c not in (0x09, 0x0A)), 0x7F, *range(0x80, 0xA0)]
)
#: The same set as a pattern. ``str.translate`` looks up every character of a non-ASCII text
#: in the table (2.2 ms for a 47 kB page); most texts hold no control character at all,
#: which 60 substring searches tell in about 20 µs, and the pattern removes them when some do.
_CONTROL_RUN = re.compile("[" + "".join(f"\\x{code:02x}" for code in _CONTROLS) + "]+")
_CONTROL_CHARS = tuple(chr(code) for code in _CONTROLS)


def strip_controls(text: str) -> str:
    """``text`` without control characters other than tab and newline."""
    if not any(char in text for char in _CONTROL_CHARS):
        return text
    return _CONTROL_RUN.sub("", text)


#: What ``str.splitlines`` splits on, one character each (``\r\n`` is two of them).
_LINE_SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a JSON ``"\\ud800"`` escape decodes to one) as
    ``?``: it cannot be encoded, so whoever writes the text out (a JSON-RPC transport, a
    terminal) would fail on it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def clean_text(text: str) -> str:
    """Every line separator as ``\\n``, then no other control characters, and no lone
    surrogates."""
    text = without_surrogates(text)
    lines = text.splitlines()
    if text[-1:] and text[-1] in _LINE_SEPARATORS:
        lines.append("")
    return strip_controls("\n".join(lines))


def one_line(text: str) -> str:
    """``text`` on one line: every run of whitespace or line separators becomes one space."""
    return " ".join(strip_controls(text).split())
