"""Small PDFs written by hand: one that reads, and two that bomb the reader."""

from __future__ import annotations

import zlib

__all__ = ["content_bomb", "pdf", "tiny_pdf", "xref_bomb"]


def pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1, the first is the catalogue), xref computed."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _one_page(contents: bytes, resources: bytes = b"") -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R %s>>" % resources,
        contents,
    ]


def tiny_pdf() -> bytes:
    """One page whose content stream shows "Hello PDF"."""
    stream = b"BT /F1 24 Tf 20 100 Td (Hello PDF) Tj ET"
    return pdf(
        [
            *_one_page(
                b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
                b"/Resources << /Font << /F1 5 0 R >> >> ",
            ),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def content_bomb() -> bytes:
    """A page whose content stream inflates past pypdf's 75 MB limit."""
    stream = zlib.compress(b"0" * 80_000_000, 9)
    return pdf(
        _one_page(
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream)
        )
    )


def xref_bomb() -> bytes:
    """A cross-reference stream that inflates past pypdf's limit: reading the file fails."""
    out = bytearray(b"%PDF-1.5\n")
    out += b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    out += b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    data = zlib.compress(b"\x00" * 80_000_000, 9)
    at = len(out)
    out += b"3 0 obj\n<< /Type /XRef /Size 4 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode "
    out += b"/Length %d >>\nstream\n%s\nendstream\nendobj\n" % (len(data), data)
    out += b"startxref\n%d\n%%%%EOF\n" % at
    return bytes(out)
