"""Minimal one-page PDF documents for the test web.

Role in the data flow: the server answers the test web's ``.pdf`` URLs with these bytes, so a
crawler meets real ``application/pdf`` bodies whose text an extractor can find. The file holds
the five objects a viewer needs (catalog, page tree, page, font, content stream) and an exact
cross-reference table, which is what makes it valid rather than merely PDF-looking.
"""

from __future__ import annotations

from collections.abc import Sequence

_LEADING = 16  # points between text lines
_TOP = 760  # baseline of the first line on a US Letter page


def _escape(text: str) -> bytes:
    """A PDF literal string body: backslash and parentheses escaped, Latin-1 only."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return escaped.encode("latin-1", errors="replace")


def make_pdf(title: str, lines: Sequence[str]) -> bytes:
    """A valid single-page PDF showing ``title`` large, then each of ``lines``."""
    content = b"BT /F1 18 Tf 72 %d Td (%s) Tj /F1 11 Tf %d TL" % (_TOP, _escape(title), _LEADING)
    for line in lines:
        content += b" T* (%s) Tj" % _escape(line)
    content += b" ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
        b" /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    # The binary comment after the header tells transfer tools the file is not plain text.
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    # Each cross-reference entry is exactly 20 bytes, its end of line included.
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref_at,
    )
    return bytes(out)
