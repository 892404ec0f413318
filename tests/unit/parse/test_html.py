"""Unit cases for gossamer.parse: charsets, base URLs, links and robots directives."""

from __future__ import annotations

import random

import pytest

from gossamer.parse import MAX_LINKS, Link, ParsedPage, decode_html, parse_html
from gossamer.urls import canonicalize
from gossamer.urls.canonical import CanonicalLinks

PAGE = "https://www.example.com/dir/page.html"


def _parse(
    html: str, url: str = PAGE, content_type: str = "text/html; charset=utf-8"
) -> ParsedPage:
    return parse_html(html.encode("utf-8"), url, content_type)


def _urls(html: str, url: str = PAGE) -> list[str]:
    return [link.url for link in _parse(html, url).links]


# --- links ---------------------------------------------------------------------------


def test_relative_and_absolute_links_in_document_order() -> None:
    html = """<html><head><title> My
        Page </title></head><body>
        <a href="other.html">1</a>
        <a href="/root">2</a>
        <a href="../up/x?q=1#frag">3</a>
        <a href="//cdn.example.org/lib">4</a>
        <a href="HTTP://Example.COM:80/Abs">5</a>
        <area href="map-target" shape=rect>
        </body></html>"""
    page = _parse(html)
    assert page.title == "My Page"
    assert [link.url for link in page.links] == [
        "https://www.example.com/dir/other.html",
        "https://www.example.com/root",
        "https://www.example.com/up/x?q=1",
        "https://cdn.example.org/lib",
        "http://example.com/Abs",
        "https://www.example.com/dir/map-target",
    ]
    assert page.base_url == PAGE
    assert not page.noindex
    assert not page.nofollow
    assert all(isinstance(link, Link) for link in page.links)


def test_non_http_links_are_skipped() -> None:
    html = """<a href="javascript:void(0)">j</a><a href="mailto:a@b.c">m</a>
        <a href="data:text/html,hi">d</a><a href="ftp://f.org/x">f</a>
        <a href="tel:+1">t</a><a href="http://[bad">b</a><a href="ok">ok</a><a>no href</a>"""
    assert _urls(html) == ["https://www.example.com/dir/ok"]


def test_duplicates_are_removed_keeping_first_position() -> None:
    html = """<a href="/a">1</a><a href="/b">2</a><a href="/a#x">3</a>
        <a href="https://www.example.com/a">4</a><a href="/%61">5</a>"""
    assert _urls(html) == ["https://www.example.com/a", "https://www.example.com/b"]


def test_link_cap() -> None:
    html = "".join(f'<a href="/p{i}">x</a>' for i in range(MAX_LINKS + 500))
    urls = _urls(html)
    assert len(urls) == MAX_LINKS
    assert urls[0] == "https://www.example.com/p0"
    assert urls[-1] == f"https://www.example.com/p{MAX_LINKS - 1}"


def test_many_repeats_of_one_link_stay_one_link() -> None:
    html = '<a href="/same">x</a>' * 50_000
    assert _urls(html) == ["https://www.example.com/same"]


# --- base href -----------------------------------------------------------------------


def test_base_href_changes_resolution() -> None:
    html = """<head><base href="https://static.example.net/assets/"></head>
        <a href="img/x.html">x</a><a href="/root">r</a>"""
    page = _parse(html)
    assert page.base_url == "https://static.example.net/assets/"
    assert [link.url for link in page.links] == [
        "https://static.example.net/assets/img/x.html",
        "https://static.example.net/root",
    ]


def test_relative_base_resolves_against_page_and_only_first_counts() -> None:
    html = '<base href="../other/"><base href="http://ignored.example/"><a href="x">x</a>'
    page = _parse(html)
    assert page.base_url == "https://www.example.com/other/"
    assert [link.url for link in page.links] == ["https://www.example.com/other/x"]


# An empty base resolves to the page itself; the others cannot serve as a base at all.
@pytest.mark.parametrize("base", ["javascript:alert(1)", "http://[broken", "data:,x", ""])
def test_unusable_base_falls_back_to_page_url(base: str) -> None:
    page = _parse(f'<base href="{base}"><a href="x">x</a>')
    assert page.base_url == PAGE
    assert [link.url for link in page.links] == ["https://www.example.com/dir/x"]


def test_base_without_href_is_ignored() -> None:
    page = _parse('<base target="_blank"><base href="/b/"><a href="x">x</a>')
    assert page.base_url == "https://www.example.com/b/"


def test_spellings_of_one_url_merge_as_one_link() -> None:
    # Different hrefs, one canonical URL: one link, at its first occurrence, followable if any
    # occurrence of any spelling is.
    html = (
        '<a href="/b">b</a><a href="/a" rel=nofollow>1</a>'
        '<a href="https://www.example.com/a" rel=nofollow>2</a><a href="/a#top">3</a>'
        '<a href="/c" rel=nofollow>c</a><a href="/%63" rel=nofollow>c again</a>'
    )
    assert _parse(html).links == (
        Link("https://www.example.com/b", nofollow=False),
        Link("https://www.example.com/a", nofollow=False),
        Link("https://www.example.com/c", nofollow=True),
    )


def test_the_link_cap_counts_urls_not_spellings() -> None:
    spellings = "".join(f'<a href="/p{i}">x</a><a href="/p{i}#x">y</a>' for i in range(MAX_LINKS))
    assert len(_urls(spellings + '<a href="/one-too-many">z</a>')) == MAX_LINKS


# --- meta refresh --------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "5; url=/next",
        "0;URL=/next",
        "0; url='/next'",
        '0; URL="/next"',
        "  3 ,  Url = /next  ",
        "0;/next",
        "1.5; url=/next#part",
        "url=/next",
    ],
)
def test_meta_refresh_variants(content: str) -> None:
    html = f"""<meta http-equiv="Refresh" content="{content.replace('"', "&quot;")}">"""
    assert _urls(html) == ["https://www.example.com/next"]


@pytest.mark.parametrize("content", ["5", "0;", "0; url=", "0; url=javascript:alert(1)"])
def test_meta_refresh_without_target(content: str) -> None:
    assert _urls(f'<meta http-equiv="refresh" content="{content}">') == []


def test_meta_refresh_comes_after_anchor_links() -> None:
    html = '<meta http-equiv=refresh content="0; url=/a"><a href="/b">b</a><a href="/a">a</a>'
    assert _urls(html) == ["https://www.example.com/b", "https://www.example.com/a"]


# --- nofollow and robots -------------------------------------------------------------


def test_rel_nofollow() -> None:
    html = """<a href="/a" rel="nofollow">a</a><a href="/b" rel="NoFollow noopener">b</a>
        <a href="/c" rel="nofollower">c</a><a href="/d" rel>d</a>"""
    assert [(link.url.rsplit("/", 1)[1], link.nofollow) for link in _parse(html).links] == [
        ("a", True),
        ("b", True),
        ("c", False),
        ("d", False),
    ]


def test_one_followable_occurrence_wins() -> None:
    html = (
        '<a href="/a" rel=nofollow>1</a><a href="/a">2</a>'
        '<a href="/b">3</a><a href="/b" rel=nofollow>'
    )
    assert _parse(html).links == (
        Link("https://www.example.com/a", nofollow=False),
        Link("https://www.example.com/b", nofollow=False),
    )


@pytest.mark.parametrize(
    ("content", "noindex", "nofollow"),
    [
        ("noindex", True, False),
        ("nofollow", False, True),
        ("NOINDEX, NOFOLLOW", True, True),
        ("none", True, True),
        ("index,follow", False, False),
        ("noindex,nofollow,noarchive", True, True),
        ("", False, False),
    ],
)
def test_meta_robots(content: str, noindex: bool, nofollow: bool) -> None:
    page = _parse(f'<meta name="ROBOTS" content="{content}"><a href="/x">x</a>')
    assert (page.noindex, page.nofollow) == (noindex, nofollow)
    assert page.links[0].nofollow is nofollow


def test_page_nofollow_applies_to_refresh_target() -> None:
    html = '<meta name=robots content=nofollow><meta http-equiv=refresh content="0;url=/r">'
    assert _parse(html).links == (Link("https://www.example.com/r", nofollow=True),)


def test_other_meta_names_are_ignored() -> None:
    page = _parse('<meta name="description" content="noindex nofollow">')
    assert not page.noindex
    assert not page.nofollow


# --- charsets ------------------------------------------------------------------------

LATIN1_PAGE = "<title>Café Brûlée</title><a href='/ç'>x</a>"


def test_header_charset_wins_over_meta() -> None:
    body = ('<meta charset="utf-8">' + LATIN1_PAGE).encode("cp1252")
    page = parse_html(body, PAGE, "text/html; charset=ISO-8859-1")
    assert page.title == "Café Brûlée"
    assert page.text_encoding == "cp1252"
    assert page.links[0].url == "https://www.example.com/%C3%A7"


def test_meta_charset_used_without_header_charset() -> None:
    body = ('<meta charset="windows-1251"><title>Привет</title>').encode("cp1251")
    page = parse_html(body, PAGE, "text/html")
    assert page.title == "Привет"
    assert page.text_encoding == "cp1251"


def test_meta_http_equiv_content_type() -> None:
    body = (
        '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        "<title>日本語</title>"
    ).encode("cp932")
    page = parse_html(body, PAGE, "")
    assert page.title == "日本語"
    assert page.text_encoding == "cp932"


def test_meta_after_4kib_is_not_seen() -> None:
    body = b"<!--" + b"x" * 5000 + b'--><meta charset="koi8-r"><title>ok</title>'
    assert decode_html(body, "text/html")[1] == "utf-8"


@pytest.mark.parametrize(
    ("bom", "codec", "expected"),
    [
        (b"\xef\xbb\xbf", "utf-8", "utf-8"),
        (b"\xff\xfe", "utf-16-le", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be", "utf-16-be"),
    ],
)
def test_bom_wins_over_header_and_meta(bom: bytes, codec: str, expected: str) -> None:
    body = bom + '<meta charset="koi8-r"><title>Ünïcode</title>'.encode(codec)
    page = parse_html(body, PAGE, "text/html; charset=windows-1252")
    assert page.text_encoding == expected
    assert page.title == "Ünïcode"


def test_latin1_body_labelled_utf8_is_read_as_windows_1252() -> None:
    page = parse_html(LATIN1_PAGE.encode("latin-1"), PAGE, "text/html; charset=utf-8")
    assert page.title == "Café Brûlée"
    assert page.text_encoding == "cp1252"


def test_mostly_utf8_body_with_a_stray_byte_stays_utf8() -> None:
    text, encoding = decode_html("<p>Olá ".encode() + b"\xff</p>", "text/html; charset=utf-8")
    assert encoding == "utf-8"
    assert text == "<p>Olá \ufffd</p>"


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("text/html; charset=latin1", "cp1252"),
        ("text/html; charset=US-ASCII", "cp1252"),
        ('text/html; charset="utf-8"', "utf-8"),
        ("text/html;charset='gb2312'", "gb18030"),
        ("text/html; charset=bogus-charset", "utf-8"),
        ("text/html; charset=utf-7", "utf-8"),
        ("text/html; charset=rot13", "utf-8"),
        ("text/html; charset=cp037", "utf-8"),
        ("text/html; charset=", "utf-8"),
        ("", "utf-8"),
    ],
)
def test_header_labels(content_type: str, expected: str) -> None:
    assert decode_html(b"<p>plain ascii</p>", content_type)[1] == expected


def test_meta_declaring_utf16_means_utf8() -> None:
    assert decode_html(b'<meta charset="utf-16"><p>x</p>', "text/html")[1] == "utf-8"


def test_unknown_meta_label_falls_through_to_next_meta() -> None:
    body = b'<meta charset="nonsense"><meta charset="iso-8859-2">\xb1'
    assert decode_html(body, "text/html") == (body[:-1].decode("ascii") + "ą", "iso8859-2")


# --- hostile input -------------------------------------------------------------------


@pytest.mark.parametrize(
    "html",
    [
        "",
        "<",
        "<a href=",
        '<a href="/unterminated',
        "<a href='/x'><a href='/y'></b></i></table></a>",
        "<html><html><head><body><body><a href=/z>z",
        "<title>unclosed",
        "<!-- <a href='/commented'> -->",
        "<script>document.write('<a href=\"/js\">')</script><a href=/real>",
        "<meta http-equiv=refresh content>",
        "<meta name=robots>",
        "\x00\x01<a\x00 href=/nul>",
    ],
)
def test_malformed_html_never_raises(html: str) -> None:
    page = _parse(html)
    for link in page.links:
        assert canonicalize(link.url) == link.url
    assert "https://www.example.com/commented" not in [link.url for link in page.links]
    assert "https://www.example.com/js" not in [link.url for link in page.links]


def test_unclosed_anchors_still_yield_links() -> None:
    assert _urls("<a href='/x'><a href='/y'>") == [
        "https://www.example.com/x",
        "https://www.example.com/y",
    ]


@pytest.mark.parametrize("seed", range(5))
def test_binary_garbage_never_raises(seed: int) -> None:
    body = random.Random(seed).randbytes(20_000)
    page = parse_html(body, PAGE, "application/octet-stream")
    assert isinstance(page.title, str)


def test_markup_between_binary_garbage() -> None:
    rng = random.Random(42)
    body = rng.randbytes(4000) + b"<p><a href='/after-garbage'>x</a>" + rng.randbytes(4000)
    page = parse_html(body, PAGE)
    for link in page.links:
        assert canonicalize(link.url) == link.url


def test_a_late_base_and_a_second_title_read_as_before() -> None:
    # One walk of the tree collects everything; the base still applies to earlier links,
    # and the first title and the first base win.
    html = (
        b'<a href="a">a</a><base href="http://elsewhere.test/b/"><base href="/ignored/">'
        b"<title> First  one </title><title>second</title><area href='c'>"
    )
    page = parse_html(html, "http://site.test/dir/page")
    assert page.base_url == "http://elsewhere.test/b/"
    assert page.title == "First one"
    assert [link.url for link in page.links] == [
        "http://elsewhere.test/b/a",
        "http://elsewhere.test/b/c",
    ]


def test_links_met_on_earlier_pages_resolve_as_on_a_fresh_parse() -> None:
    body = b'<a href="/nav">n</a><a href="http://x.test/abs">a</a><a href="rel">r</a>'
    memory = CanonicalLinks()
    for url in (
        "http://one.test/a/b",
        "https://one.test/a/b",
        "http://user@one.test:81/c/d",
        "http://two.test/",
    ):
        remembered = parse_html(body, url, links=memory)
        assert remembered == parse_html(body, url)


def test_area_links_keep_their_place_among_anchors() -> None:
    html = (
        b'<a href="/1">1</a><map><area href="/2"></map><a>no href</a><a href="/3">3</a>'
        b'<svg><a xlink:href="/not-html-href">x</a></svg><area href="/4" rel="nofollow">'
    )
    page = parse_html(html, "http://site.test/")
    assert [(link.url, link.nofollow) for link in page.links] == [
        ("http://site.test/1", False),
        ("http://site.test/2", False),
        ("http://site.test/3", False),
        ("http://site.test/4", True),
    ]
