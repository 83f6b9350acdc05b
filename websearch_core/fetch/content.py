"""Bytes → the text a model reads: media type, charset, then a converter per kind.

Charset order: the Content-Type header, a byte-order mark, ``<meta charset>`` or its
``http-equiv`` form, then detection (UTF-8 if the bytes are valid UTF-8, else Windows-1252,
which decodes any byte and is what mislabelled Western pages almost always are). A declared
charset that is unknown, or that the bytes contradict, falls through to the next source
rather than producing mojibake.
"""

from __future__ import annotations

import codecs
import io
import json
from dataclasses import dataclass
from typing import Literal

from websearch_core.errors import install_hint
from websearch_core.extract import Extraction, extraction
from websearch_core.text import clean_text, one_line

__all__ = ["Converted", "Kind", "byline_line", "convert", "decode_text", "media_type_of"]

Kind = Literal["html", "json", "text", "pdf", "binary"]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: How far into a page ``<meta charset>`` is looked for (the HTML spec says 1024 bytes; a
#: little more forgives long ``<head>`` preambles).
_META_SCAN_BYTES = 4096
#: RFC 6838 restricted-name characters, plus the slash between type and subtype.
_MEDIA_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789!#$&^_.+-/")
_TEXT_LIKE = ("application/xml", "application/javascript", "application/x-yaml", "application/yaml")


@dataclass(frozen=True)
class Converted:
    kind: Kind
    content: str
    charset: str | None
    title: str | None = None
    #: The same content as plain text (for HTML: no markdown marks, link text without URLs);
    #: ``None`` when it is the content itself.
    text: str | None = None


def media_type_of(content_type: str | None, body: bytes) -> str:
    """The media type from the header, or sniffed from the first bytes when it is missing."""
    media = (content_type or "").partition(";")[0].strip().lower()
    if not _MEDIA_CHARS.issuperset(media) or len(media) > 100 or media.count("/") != 1:
        media = ""  # not a media type: sniff rather than show a server's free text
    if media and media != "application/octet-stream":
        return media
    head = body[:512].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "text/html"
    if head.startswith((b"{", b"[")):
        return "application/json"
    if b"\x00" not in body[:1024]:
        try:
            body[:4096].decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < 4090:  # not merely a character cut at the sample's end
                return media or "application/octet-stream"
        return "text/plain"
    return media or "application/octet-stream"


def _declared_charset(content_type: str | None) -> str | None:
    for parameter in (content_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def _meta_charset(body: bytes) -> str | None:
    """``<meta charset="x">`` or ``<meta http-equiv=Content-Type content="...; charset=x">``."""
    head = body[:_META_SCAN_BYTES].decode("ascii", errors="replace").lower()
    position = 0
    while (start := head.find("<meta", position)) != -1:
        end = head.find(">", start)
        if end == -1:
            return None
        tag = head[start:end]
        position = end
        at = tag.find("charset=")
        if at == -1:
            continue
        value = tag[at + len("charset=") :].lstrip("\"' ")
        stop = len(value)
        for delimiter in "\"' ;/":
            found = value.find(delimiter)
            if found != -1:
                stop = min(stop, found)
        if value[:stop]:
            return value[:stop]
    return None


#: The text encodings a page may declare, by Python's name for them, and the codec we decode
#: with: the WHATWG Encoding Standard's set, read as browsers read it (a "latin-1" or "ascii"
#: label is Windows-1252, "gb2312" is GBK, "shift_jis" is Windows-31J …). Anything else — a
#: codec that is not a text encoding (``rot-13``, ``base64``, ``zlib``, ``uu``), one that
#: always fails (``undefined``), one that interprets escapes (``unicode_escape``, ``utf-7``,
#: ``idna``) — is ignored, and the charset is detected instead.
_PAGE_CODECS = {
    "utf-8": "utf-8",
    "utf-16": "utf-16",
    "utf-16-be": "utf-16-be",
    "utf-16-le": "utf-16-le",
    "utf-32": "utf-32",
    "cp866": "cp866",
    **{f"iso8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "koi8-r": "koi8-r",
    "koi8-u": "koi8-u",
    "mac-roman": "mac-roman",
    "mac-cyrillic": "mac-cyrillic",
    "cp874": "cp874",
    **{f"cp125{n}": f"cp125{n}" for n in range(9)},
    "gbk": "gbk",
    "gb2312": "gbk",
    "gb18030": "gb18030",
    "big5": "big5hkscs",
    "big5hkscs": "big5hkscs",
    "euc_jp": "euc_jp",
    "iso2022_jp": "iso2022_jp",
    "shift_jis": "cp932",
    "cp932": "cp932",
    "euc_kr": "cp949",
    "cp949": "cp949",
}
_MAX_LABEL_CHARS = 40


def _codec(name: str | None) -> str | None:
    """The codec for a declared charset, or ``None`` if it is not a page encoding we read."""
    if not name or len(name) > _MAX_LABEL_CHARS or not name.isascii() or not name.isprintable():
        return None
    try:
        codec = codecs.lookup(name.strip()).name
    except LookupError:
        return None
    return _PAGE_CODECS.get(codec)


_SINGLE_BYTE = frozenset(("cp1252", "iso8859-15", "cp1250", "cp1251", "iso8859-2", "koi8-r"))


def _is_utf8_beyond_ascii(body: bytes) -> bool:
    if body.isascii():
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_text(body: bytes, content_type: str | None, *, html: bool = False) -> tuple[str, str]:
    """``(text, charset)`` by the order in the module docstring."""
    text, charset, _ = _decoded(body, content_type, html=html)
    return text, charset


def _decoded(body: bytes, content_type: str | None, *, html: bool) -> tuple[str, str, bool]:
    """``decode_text``'s text and charset, and whether the text is ``body`` decoded as strict
    UTF-8 (then ``body`` is the text's UTF-8 encoding as it stands, and the parser can read
    it without the text being encoded again)."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body.decode(codec, errors="replace").lstrip("\ufeff"), codec, False
    candidates: list[str | None] = [_codec(_declared_charset(content_type))]
    if html:
        candidates.append(_codec(_meta_charset(body)))
    for declared in candidates:
        if declared is None:
            continue
        if declared in _SINGLE_BYTE and _is_utf8_beyond_ascii(body):
            # UTF-8 labelled as Latin-1/1252 is the commonest wrong label, and multi-byte
            # UTF-8 sequences almost never occur by accident in legacy single-byte text.
            return body.decode("utf-8"), "utf-8", True
        try:
            return body.decode(declared), declared, declared == "utf-8"
        except UnicodeError:
            continue  # the declaration is wrong: fall through to the next source
    try:
        return body.decode("utf-8"), "utf-8", True
    except UnicodeDecodeError as exc:
        if exc.start >= len(body) - 3:  # only a character cut by the read ceiling
            return body.decode("utf-8", errors="ignore"), "utf-8", False
    return body.decode("cp1252", errors="replace"), "cp1252", False


def convert(body: bytes, content_type: str | None, url: str) -> Converted:
    """The page as text for the model; binary content becomes a sentence, never bytes.

    Whatever the kind, the text has one kind of line break and no control characters
    (``text.clean_text``): a NUL or an ESC in a page never reaches the model.
    """
    converted = _converted(body, content_type, url)
    title = one_line(converted.title) if converted.title else None
    text = clean_text(converted.text) if converted.text is not None else None
    return Converted(converted.kind, clean_text(converted.content), converted.charset, title, text)


def _converted(body: bytes, content_type: str | None, url: str) -> Converted:
    media = media_type_of(content_type, body)
    if media in ("text/html", "application/xhtml+xml"):
        text, charset, exact = _decoded(body, content_type, html=True)
        document = extraction(text, url, utf8=body if exact else None)
        return Converted("html", _with_header(document), charset, document.title, document.text)
    if media == "application/json" or media.endswith("+json"):
        text, charset = decode_text(body, content_type)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # truncated, invalid, or nested past the limit
            return Converted("text", text, charset)
        indent = 2 if _indenting_costs(data, len(text) + _INDENT_ALLOWANCE) else None
        return Converted("json", json.dumps(data, indent=indent, ensure_ascii=False), charset)
    if media.startswith("text/") or media in _TEXT_LIKE or media.endswith("+xml"):
        text, charset = decode_text(body, content_type)
        return Converted("text", text, charset)
    if media == "application/pdf":
        return Converted("pdf", _pdf_text(body), None)
    return Converted(
        "binary",
        f"[binary content ({media[:80]}, {len(body):,} bytes) is not shown: web_fetch returns "
        "text pages, JSON and PDFs]",
        None,
    )


#: How a byline already says "by" in the languages we see most; it is shown as it is.
_BY_WORDS = (
    *("by", "written by", "posted by", "words by", "story by", "reporting by", "von"),
    *("geschrieben von", "par", "por", "di", "door", "av", "af", "przez", "от", "автор"),
    *("kirjoittanut", "tekijä", "yazan", "di:", "by:", "von:", "par :", "por:"),
)
_DATE_WORDS = frozenset(
    " ".join(
        (
            "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april",
            "june july august september october november december mon tue wed thu fri sat sun",
            "monday tuesday wednesday thursday friday saturday sunday am pm at on updated",
            "published utc gmt januar februar märz mai juni juli oktober dezember janvier",
            "février mars avril juin juillet août septembre octobre novembre décembre enero",
            "febrero marzo abril mayo junio julio agosto septiembre octubre noviembre",
            "diciembre de del le um",
        )
    ).split()
)


def byline_line(byline: str | None) -> str | None:
    """The byline as the model reads it: "By X", never "By By X", and no "By" before a date.

    A byline that already says "by" in some language ("by X", "Von X", "par X") is kept as
    it is, with a capital; one that is only a date says nothing about who wrote the page and
    is left out (the date is shown as "Published" when the page declares one).
    """
    if not byline:
        return None
    text = one_line(byline)
    lowered = text.casefold()
    for word in _BY_WORDS:
        if lowered.startswith(word) and lowered[len(word) : len(word) + 1] in (" ", ""):
            return text[:1].upper() + text[1:] if len(text) > len(word) else None
    words = "".join(c if c.isalnum() else " " for c in lowered).split()
    if any(w.isdigit() for w in words) and all(w.isdigit() or w in _DATE_WORDS for w in words):
        return None
    return f"By {text}"


#: Indentation may add up to the document's own size plus this much; beyond, JSON is shown
#: compact. Each level indents every line two more spaces, so indenting JSON nested d deep
#: costs about d² characters: a 600-byte body of brackets would become 180 kB.
_INDENT_ALLOWANCE = 50_000


def _indenting_costs(data: object, budget: int) -> bool:
    """Whether ``json.dumps(data, indent=2)`` adds at most ``budget`` characters."""
    cost = 0
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list):
            children = node
        else:
            continue
        cost += (len(children) + 1) * (2 * depth + 1)  # a line break and indent per item
        if cost > budget:
            return False
        stack.extend((child, depth + 1) for child in children)
    return True


def _opens_with_heading(markdown: str, title: str) -> bool:
    """Whether the body's first line is already the title as a heading (a full-page read of
    a docs page keeps its ``<h1>``): the model would read the headline twice."""
    first = markdown.lstrip().partition("\n")[0]
    if not first.startswith("#"):
        return False
    text = first.lstrip("#").strip().rstrip("#")  # an ATX heading may close with #s
    return one_line(text).casefold() == one_line(title).casefold()


def _with_header(document: Extraction) -> str:
    """The title as a heading and one line of who/when/where, then the extracted markdown.

    ``extract`` leaves the headline out of the body (a benchmark's gold text has no title,
    and the page repeats it); the model still needs it, and the date and byline too, to judge
    how current and how authoritative the page is.
    """
    lines = []
    body = document.markdown
    if document.title and _opens_with_heading(body, document.title):
        # The page's own headline leads, and who/when/where follows it as for any page.
        heading, _, body = body.lstrip().partition("\n")
        lines.append(heading)
        body = body.lstrip("\n")
    elif document.title:
        lines.append(f"# {one_line(document.title)}")
    about = [
        one_line(part)
        for part in (
            byline_line(document.byline),
            f"Published {document.published}" if document.published else None,
            document.site_name,
        )
        if part
    ]
    if about:
        lines.append(" · ".join(about))
    if body:
        lines.append(body)
    elif not document.markdown:  # never an empty answer without a reason
        why = document.fallback or "it holds no text outside scripts, styles and page furniture"
        lines.append(f"[this page has no readable text: {why}]")
    if document.note:
        lines.append(f"[note: {document.note}]")
    return "\n\n".join(lines)


def _pdf_text(body: bytes) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import LimitReachedError, PdfReadError
    except ImportError:
        return f"[this is a PDF, and reading PDFs needs the pdf extra: {install_hint('pdf')}]"
    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
    except PdfReadError as exc:
        return f"[the PDF could not be read: {type(exc).__name__}; it may be truncated or damaged]"
    except LimitReachedError:
        return "[the PDF could not be read: its streams decompress past the reader's limit]"
    # A PDF is a program for a parser, and a hostile one reaches pypdf's every corner
    # (KeyError, AssertionError, RecursionError …): any failure here is a page we cannot read.
    except Exception as exc:
        return f"[the PDF could not be read: {type(exc).__name__}; it may be damaged]"
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    return text or "[the PDF has no extractable text: it may be scanned images]"
