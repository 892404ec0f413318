"""Turning fetched bytes into text: the first step of the parse stage.

The fetch stage hands over the decoded entity (``FetchResult.content``) and its
Content-Type; this module picks the character encoding the way browsers do, in
order: byte order mark, ``charset=`` in the header, ``<meta>`` in the first 4 KiB,
and UTF-8 otherwise. Labels go through Python's codec registry and are then mapped
to the superset encodings that browsers really use (ISO-8859-1 and ASCII mean
windows-1252, GB2312 means GB18030, and so on). Only encodings that the web uses
are accepted, so a page cannot ask for ``rot13``, ``utf-7`` or EBCDIC.
"""

from __future__ import annotations

import codecs
import functools
import re

__all__ = ["decode_html"]

PRESCAN_BYTES = 4096

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)

# WHATWG labels that Python's registry does not know under that spelling.
_LABEL_ALIASES = {
    "x-user-defined": "windows-1252",
    "windows-31j": "cp932",
    "x-sjis": "cp932",
    "ms932": "cp932",
    "x-mac-roman": "mac-roman",
    "x-mac-cyrillic": "mac-cyrillic",
    "iso-8859-8-i": "iso-8859-8",
    "x-cp1250": "cp1250",
    "x-cp1251": "cp1251",
    "x-cp1252": "cp1252",
    "x-gbk": "gbk",
    "x-euc-jp": "euc-jp",
    "unicode": "utf-16-le",
    "unicodefffe": "utf-16-be",
}


def _codec_name(label: str) -> str:
    return codecs.lookup(label).name


# Browsers decode these labels with a superset encoding; pages labelled with the
# narrower one routinely contain characters only the superset has.
_SUPERSETS = {
    _codec_name(narrow): _codec_name(wide)
    for narrow, wide in (
        ("iso-8859-1", "cp1252"),
        ("ascii", "cp1252"),
        ("iso-8859-9", "cp1254"),
        ("iso-8859-11", "cp874"),
        ("tis-620", "cp874"),
        ("gb2312", "gb18030"),
        ("gbk", "gb18030"),
        ("big5", "big5hkscs"),
        ("shift_jis", "cp932"),
        ("euc-kr", "cp949"),
        ("utf-16", "utf-16-le"),
    )
}

_WEB_ENCODINGS = frozenset(
    _codec_name(label)
    for label in (
        "utf-8", "utf-16-le", "utf-16-be", "cp866", "cp874", "cp932", "cp949",
        "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256",
        "cp1257", "cp1258", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5",
        "iso-8859-6", "iso-8859-7", "iso-8859-8", "iso-8859-10", "iso-8859-13",
        "iso-8859-14", "iso-8859-15", "iso-8859-16", "koi8-r", "koi8-u", "mac-roman",
        "mac-cyrillic", "gb18030", "big5hkscs", "euc-jp", "iso2022-jp",
    )
)  # fmt: skip

_UTF8 = "utf-8"
_WINDOWS_1252 = _codec_name("cp1252")

# Labels are limited to the characters real labels use, so odd header bytes never
# reach the codec registry.
_HEADER_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
_META_RE = re.compile(rb"<meta[\s/]([^>]*)", re.IGNORECASE)
_META_CHARSET_RE = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
# A lead byte followed by continuation bytes: a trace that the text really is UTF-8.
_UTF8_SEQUENCE_RE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")


@functools.lru_cache(maxsize=256)
def _web_encoding(label: str) -> str | None:
    """The Python codec a browser would use for ``label``, or None if not a web encoding."""
    cleaned = label.strip().strip("\"'").lower()
    if not cleaned or len(cleaned) > 40:
        return None
    cleaned = _LABEL_ALIASES.get(cleaned, cleaned)
    try:
        name = _codec_name(cleaned)
    except LookupError:
        return None
    name = _SUPERSETS.get(name, name)
    return name if name in _WEB_ENCODINGS else None


def _from_header(content_type: str) -> str | None:
    match = _HEADER_CHARSET_RE.search(content_type)
    return _web_encoding(match.group(1)) if match else None


def _from_meta(head: bytes) -> str | None:
    for meta in _META_RE.finditer(head):
        match = _META_CHARSET_RE.search(meta.group(1))
        if match is None:
            continue
        encoding = _web_encoding(match.group(1).decode("ascii"))
        if encoding is None:
            continue
        # A meta tag was readable as ASCII, so the document cannot really be UTF-16.
        return _UTF8 if encoding.startswith("utf-16") else encoding
    return None


def _decode_utf8(content: bytes) -> tuple[str, str]:
    try:
        return content.decode(_UTF8), _UTF8
    except UnicodeDecodeError:
        pass
    # Invalid UTF-8 without a single valid multi-byte sequence is legacy 8-bit text
    # that was labelled (or defaulted) wrongly; windows-1252 is what such pages mostly
    # are. Text that does show UTF-8 keeps it, with the broken bytes replaced.
    if _UTF8_SEQUENCE_RE.search(content) is None:
        return content.decode(_WINDOWS_1252, errors="replace"), _WINDOWS_1252
    return content.decode(_UTF8, errors="replace"), _UTF8


def decode_html(content: bytes, content_type: str) -> tuple[str, str]:
    """Decode an HTML body; returns ``(text, encoding)`` and never raises.

    ``encoding`` is the Python codec name actually used, e.g. ``"utf-8"`` or ``"cp1252"``.
    """
    for bom, encoding in _BOMS:
        if content.startswith(bom):
            return content[len(bom) :].decode(encoding, errors="replace"), encoding
    encoding = _from_header(content_type) or _from_meta(content[:PRESCAN_BYTES]) or _UTF8
    if encoding == _UTF8:
        return _decode_utf8(content)
    return content.decode(encoding, errors="replace"), encoding
