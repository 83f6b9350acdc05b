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

from websearch_core.extract import ExtractedDocument, extract

__all__ = ["Converted", "Kind", "convert", "decode_text", "media_type_of"]

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
_TEXT_LIKE = ("application/xml", "application/javascript", "application/x-yaml", "application/yaml")


@dataclass(frozen=True)
class Converted:
    kind: Kind
    content: str
    charset: str | None
    title: str | None = None


def media_type_of(content_type: str | None, body: bytes) -> str:
    """The media type from the header, or sniffed from the first bytes when it is missing."""
    media = (content_type or "").partition(";")[0].strip().lower()
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


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    # Browsers read a "latin-1"/"ascii" label as Windows-1252; so do we (RFC 7231 / WHATWG).
    return "cp1252" if codec in ("latin-1", "iso8859-1", "ascii") else codec


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
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body.decode(codec, errors="replace").lstrip("\ufeff"), codec
    candidates: list[str | None] = [_codec(_declared_charset(content_type))]
    if html:
        candidates.append(_codec(_meta_charset(body)))
    for declared in candidates:
        if declared is None:
            continue
        if declared in _SINGLE_BYTE and _is_utf8_beyond_ascii(body):
            # UTF-8 labelled as Latin-1/1252 is the commonest wrong label, and multi-byte
            # UTF-8 sequences almost never occur by accident in legacy single-byte text.
            return body.decode("utf-8"), "utf-8"
        try:
            return body.decode(declared), declared
        except UnicodeDecodeError:
            continue  # the declaration is wrong: fall through to the next source
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        if exc.start >= len(body) - 3:  # only a character cut by the read ceiling
            return body.decode("utf-8", errors="ignore"), "utf-8"
    return body.decode("cp1252", errors="replace"), "cp1252"


def convert(body: bytes, content_type: str | None, url: str) -> Converted:
    """The page as text for the model; binary content becomes a sentence, never bytes."""
    media = media_type_of(content_type, body)
    if media in ("text/html", "application/xhtml+xml"):
        text, charset = decode_text(body, content_type, html=True)
        document = extract(text, url)
        return Converted("html", _with_header(document), charset, document.title)
    if media == "application/json" or media.endswith("+json"):
        text, charset = decode_text(body, content_type)
        try:
            return Converted(
                "json", json.dumps(json.loads(text), indent=2, ensure_ascii=False), charset
            )
        except ValueError:
            return Converted("text", text, charset)  # truncated or invalid: show it as it is
    if media.startswith("text/") or media in _TEXT_LIKE or media.endswith("+xml"):
        text, charset = decode_text(body, content_type)
        return Converted("text", text, charset)
    if media == "application/pdf":
        return Converted("pdf", _pdf_text(body), None)
    return Converted(
        "binary",
        f"[binary content ({media}, {len(body):,} bytes) is not shown: web_fetch returns text "
        "pages, JSON and PDFs]",
        None,
    )


def _with_header(document: ExtractedDocument) -> str:
    """The title as a heading and one line of who/when/where, then the extracted markdown.

    ``extract`` leaves the headline out of the body (a benchmark's gold text has no title,
    and the page repeats it); the model still needs it, and the date and byline too, to judge
    how current and how authoritative the page is.
    """
    lines = []
    if document.title:
        lines.append(f"# {document.title}")
    about = [
        part
        for part in (
            f"By {document.byline}" if document.byline else None,
            f"Published {document.published}" if document.published else None,
            document.site_name,
        )
        if part
    ]
    if about:
        lines.append(" · ".join(about))
    if document.markdown:
        lines.append(document.markdown)
    return "\n\n".join(lines)


def _pdf_text(body: bytes) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        return (
            "[this is a PDF; reading PDFs needs the pdf extra: pip install 'websearch-pack[pdf]']"
        )
    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        return f"[the PDF could not be read: {type(exc).__name__}; it may be truncated or damaged]"
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    return text or "[the PDF has no extractable text: it may be scanned images]"
