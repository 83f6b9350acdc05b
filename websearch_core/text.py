"""Text a model reads: one kind of line break, no control characters.

A model reads ``\\r``, U+2028, U+2029, NEL (U+0085), VT, FF and the information separators
U+001C to U+001E as line breaks, whatever a terminal shows; ``str.splitlines`` splits on exactly
those (and ``\\n``, ``\\r\\n``), so every one becomes ``\\n`` here. Other control characters
(NUL, BEL, ESC, DEL, the C1 set) carry nothing a reader needs and can drive terminals, so they
are removed; a tab is kept.
"""

from __future__ import annotations

__all__ = ["clean_text", "one_line", "strip_controls"]

_CONTROLS = dict.fromkeys(
    [*(c for c in range(0x20) if c not in (0x09, 0x0A)), 0x7F, *range(0x80, 0xA0)]
)


def strip_controls(text: str) -> str:
    """``text`` without control characters other than tab and newline."""
    return text.translate(_CONTROLS)


#: What ``str.splitlines`` splits on, one character each (``\r\n`` is two of them).
_LINE_SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def clean_text(text: str) -> str:
    """Every line separator as ``\\n``, then no other control characters."""
    lines = text.splitlines()
    if text[-1:] and text[-1] in _LINE_SEPARATORS:
        lines.append("")
    return strip_controls("\n".join(lines))


def one_line(text: str) -> str:
    """``text`` on one line: every run of whitespace or line separators becomes one space."""
    return " ".join(strip_controls(text).split())
