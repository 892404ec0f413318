"""URL resolution and canonical form, shared by seeds, parse and the frontier.

Every URL that enters the frontier passes through :func:`canonicalize` (seeds) or
:func:`canonical_link` (links found by the parser), so two spellings of one resource
collapse into one frontier entry and one ``url_id``. Parsing follows the WHATWG URL
standard through ``ada_url``; ada already lower-cases scheme and host, converts IDN
hosts to punycode, drops default ports, resolves dot segments and gives an empty path
the value ``/``. This module adds what the standard leaves alone: the fragment is
dropped, percent-escapes in path and query are normalised and an empty query is removed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from ada_url import join_url, parse_url

from gossamer.generations import Generations

__all__ = [
    "KNOWN_LINKS",
    "CanonicalLinks",
    "canonical_link",
    "canonicalize",
    "normalise_escapes",
    "resolve",
    "url_id",
]

# RFC 3986 section 2.3: these characters mean the same escaped or not, so they are kept bare.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _build_escape_table() -> dict[str, str]:
    """Map every ``%XX`` spelling (any hex case) and a lone ``%`` to its canonical text."""
    table: dict[str, str] = {"%": "%25"}
    digits = "0123456789abcdefABCDEF"
    for high in digits:
        for low in digits:
            char = chr(int(high + low, 16))
            table[f"%{high}{low}"] = char if char in _UNRESERVED else f"%{high}{low}".upper()
    return table


_ESCAPES = _build_escape_table()
# A '%' not followed by two hex digits matches alone and becomes "%25". Without that,
# "%%41b" would turn into "%Ab", which a second pass reads as an escape: not idempotent.
_ESCAPE_RE = re.compile(r"%[0-9A-Fa-f]{2}|%")
_HREF_ONLY = ("href",)


def _escape_replacement(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def normalise_escapes(text: str) -> str:
    """Every ``%XX`` in the canonical spelling: unreserved characters decoded, other hex
    upper-cased, a lone ``%`` as ``%25``. robots.txt rules are spelt this way too."""
    return _ESCAPE_RE.sub(_escape_replacement, text) if "%" in text else text


def _serialise(href: str, base: str | None) -> str | None:
    """WHATWG parse and serialisation of ``href`` against ``base``; None on failure."""
    # join_url and parse_url hand back the serialisation without building a URL
    # object, which costs about half as much on the link-extraction hot path.
    try:
        if base is None:
            return parse_url(href, _HREF_ONLY)["href"]
        return join_url(base, href)
    except ValueError:
        # Also raised for text that is not UTF-8 encodable (lone surrogates from a
        # badly decoded page): no server could be asked for such a URL anyway.
        return None


def resolve(href: str, base: str | None = None) -> str | None:
    """Parse ``href`` against ``base`` as a browser would; the serialised URL, or None."""
    return _serialise(href, base)


def _canonical_href(href: str) -> str | None:
    """Finish the canonical form of a WHATWG serialisation; None unless http(s)."""
    if href.startswith("https://"):
        authority_start = 8
    elif href.startswith("http://"):
        authority_start = 7
    else:
        return None
    # In a serialisation '#' only ever opens the fragment: path, query and userinfo
    # escape it, and hosts cannot hold it.
    hash_at = href.find("#")
    if hash_at >= 0:
        href = href[:hash_at]
    # Special URLs always serialise a path beginning with '/', and the authority
    # escapes '/', so the first '/' after "scheme://" is where the path begins.
    path_at = href.find("/", authority_start)
    if path_at < 0:  # not a serialisation ada produces, but never slice from -1
        return href + "/"
    rest = href[path_at:]
    if "%" in rest:
        rest = _ESCAPE_RE.sub(_escape_replacement, rest)
    # Only a query that is empty is dropped: stripping one '?' off "??" would leave
    # an empty query behind and make a second pass change the URL again.
    query_at = rest.find("?")
    if query_at == len(rest) - 1:
        rest = rest[:-1]
    return href[:path_at] + rest


def canonicalize(url: str) -> str | None:
    """The canonical form of an absolute http(s) URL, or None if it is not one.

    Idempotent: ``canonicalize(canonicalize(u)) == canonicalize(u)`` for every result.
    """
    serialised = _serialise(url, None)
    return None if serialised is None else _canonical_href(serialised)


def canonical_link(href: str, base: str) -> str | None:
    """Resolve a link found on a page and return its canonical form, or None.

    This runs for every link of every page, so it parses once and then works on the
    serialised string instead of reading URL components one by one.
    """
    serialised = _serialise(href, base)
    return None if serialised is None else _canonical_href(serialised)


def url_id(url: str) -> str:
    """Stable identifier of a URL: the SHA-1 hex digest of its UTF-8 bytes."""
    return hashlib.sha1(url.encode("utf-8"), usedforsecurity=False).hexdigest()


KNOWN_LINKS = 1 << 15  # links CanonicalLinks keeps per generation (about 10 MB for two)
_ABSOLUTE = ("http://", "https://")


class CanonicalLinks:
    """:func:`canonical_link` with a memory, for the links a crawl meets on page after page.

    Most links of a site are met again on its other pages (navigation bars, footers). Where the
    result cannot depend on more of the base than its scheme and authority, it is kept: an
    absolute ``http(s)://`` link (the base plays no part) and a path-absolute ``/path`` one
    (the base gives scheme, credentials, host and port only). Every other link, relative to
    the page's own path, is kept for the page only. The memory keeps two generations of up
    to ``capacity`` links: when the young one is full it becomes the old one, and a link found
    in the old one moves back to the young, so links in use stay while the rest age out.
    """

    def __init__(self, capacity: int = KNOWN_LINKS) -> None:
        self._known: Generations[tuple[str, str], str | None] = Generations(capacity)

    def for_page(self, base: str) -> Callable[[str], str | None]:
        """``canonical_link(href, base)`` for the links of one page whose base URL (an
        absolute http(s) URL) is ``base``."""
        path_at = base.find("/", base.find("//") + 2)
        authority = base if path_at < 0 else base[:path_at]  # scheme://[userinfo@]host[:port]
        page: dict[str, str | None] = {}

        def canonical(href: str) -> str | None:
            if href.startswith(_ABSOLUTE):
                key = ("", href)
            elif href[:1] == "/" and href[1:2] not in ("/", "\\"):
                key = (authority, href)  # "//" and "/\\" name another host: not path-absolute
            else:
                if href not in page:
                    page[href] = canonical_link(href, base)
                return page[href]
            return self._known.get_or(key, lambda _: canonical_link(href, base))

        return canonical
