"""Text extraction: boilerplate out, main text, title, headings, description, PDF text."""

from __future__ import annotations

from gossamer.index.extract import MAX_TEXT_CHARS, extract, extract_html, extract_pdf, kind_of
from gossamer.testweb.pdf import make_pdf

PAGE = b"""<!DOCTYPE html><html lang="en-GB"><head>
<title>  Write-Ahead   Logging </title>
<meta name="description" content="How the WAL works.">
<style>body { color: red }</style><script>var tracking = "beacon";</script>
</head><body>
<header><a href="/">Home</a> Site banner</header>
<nav><a href="/a">Docs</a><a href="/b">Download</a></nav>
<aside>Related: sidebar text</aside>
<div role="navigation">breadcrumb trail</div>
<h1>Write-ahead logging</h1>
<p>The WAL file records changes before the database file.</p>
<h2>Checkpoints</h2>
<p>A checkpoint moves pages back.</p>
<ul><li><a href="/x">Menu one</a></li><li><a href="/y">Menu two</a></li>
<li><a href="/z">Menu three</a></li></ul>
<ul><li>Plain item about durability</li></ul>
<form><input value="search here"><button>Go</button></form>
<noscript>enable scripts</noscript>
<footer>Copyright footer</footer>
</body></html>"""


def test_html_keeps_main_text_and_drops_boilerplate() -> None:
    text = extract_html(PAGE, "text/html; charset=utf-8")
    assert text.kind == "html"
    assert text.title == "Write-Ahead Logging"
    assert text.description == "How the WAL works."
    assert text.headings == ("Write-ahead logging", "Checkpoints")
    assert "records changes before the database file" in text.body
    assert "Plain item about durability" in text.body
    for gone in (
        "Site banner",
        "Docs",
        "sidebar",
        "breadcrumb",
        "Menu one",
        "search here",
        "enable scripts",
        "Copyright",
        "tracking",
        "color: red",
    ):
        assert gone not in text.body, gone
    assert text.lang_hint == "en"
    assert not text.noindex


def test_main_element_wins_and_article_headers_stay() -> None:
    page = b"""<body><div>outside chrome text</div>
    <main><article><header><h1>Article title</h1><p>by Someone</p></header>
    <p>Article body.</p><footer>Article footnote</footer></article></main></body>"""
    text = extract_html(page)
    assert text.body == "Article title by Someone Article body. Article footnote"
    assert text.title == "Article title"  # no <title>: the first heading stands in


def test_nested_boilerplate_is_removed_once() -> None:
    page = b"<body><aside><nav><script>x()</script>menu</nav></aside><p>kept</p></body>"
    assert extract_html(page).body == "kept"


def test_noindex_and_og_fallbacks() -> None:
    page = b"""<head><meta name="ROBOTS" content="NOINDEX, follow">
    <meta property="og:title" content="OG title">
    <meta property="og:description" content="OG description"></head><body>x</body>"""
    text = extract_html(page)
    assert text.noindex
    assert text.title == "OG title"
    assert text.description == "OG description"


def test_charset_from_meta_is_honoured() -> None:
    page = '<meta charset="windows-1252"><title>Caf\u00e9</title><p>\u201cquoted\u201d</p>'
    text = extract_html(page.encode("cp1252"), "text/html")
    assert text.title == "Caf\u00e9"
    assert "\u201cquoted\u201d" in text.body


def test_garbage_and_huge_pages_do_not_fail() -> None:
    assert extract_html(b"\x00\xff<<<>>>").kind == "html"
    huge = b"<p>" + b"word " * (MAX_TEXT_CHARS // 2) + b"</p>"
    assert len(extract_html(huge).body) == MAX_TEXT_CHARS


def test_pdf_text_and_title() -> None:
    text = extract_pdf(make_pdf("Quarterly report", ["first line of text", "second (line)"]))
    assert text.kind == "pdf"
    assert text.title == "Quarterly report"
    assert "first line of text" in text.body
    assert "second (line)" in text.body


def test_broken_pdf_gives_empty_text() -> None:
    text = extract_pdf(b"%PDF-1.4 this is not really a pdf")
    assert text.body == ""
    assert text.title == ""


def test_kind_of_content_types() -> None:
    assert kind_of("text/html; charset=utf-8") == "html"
    assert kind_of("application/xhtml+xml") == "html"
    assert kind_of("Application/PDF") == "pdf"
    assert kind_of("image/png") is None
    assert kind_of(None) is None
    assert extract(b"\x89PNG", "image/png") is None


def test_a_page_nested_past_the_bound_is_indexed_by_what_could_be_read() -> None:
    deep = (
        b"<title>Deep</title><nav>menu words</nav><h1>Top heading</h1>"
        + b"<div>" * 50_000
        + b"words at the bottom <a href='/inside'>inside link</a>"
    )
    text = extract_html(deep, "text/html", "http://a.test/deep")
    assert text.depth_capped
    assert text.title == "Deep"
    assert "words at the bottom" in text.body and "menu words" not in text.body
    assert text.headings == ("Top heading",)
    assert [anchor.target for anchor in text.anchors] == ["http://a.test/inside"]


def test_an_ordinary_page_is_not_marked_capped() -> None:
    assert extract_html(PAGE).depth_capped is False
    long_page = PAGE.replace(b"<p>", b"<p><b>x</b><i>y</i>" * 200)  # scanned, not capped
    assert long_page.count(b"<") > 2048
    assert extract_html(long_page).depth_capped is False
