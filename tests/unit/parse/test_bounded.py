"""The parse's cost bound: ordinary pages parse untouched, deep ones lose only their nesting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.parse import parse_html
from gossamer.parse.bounded import MAX_DEPTH, SAFE_TAGS, SCAN_TAGS, bound_html, parse_bounded

URL = "http://a.test/page"


def deepest(tree: LexborHTMLParser) -> int:
    """The depth of the tree's deepest element, walked without recursion."""
    best = 0
    stack: list[tuple[LexborNode, int]] = [(tree.root, 1)] if tree.root else []
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        child = node.child
        while child is not None:
            stack.append((child, depth + 1))
            child = child.next
    return best


def ordinary_page(paragraphs: int) -> str:
    """Long enough to be scanned, with every construct the scan must not count as nesting:
    unclosed <p> and <li>, table cells, void elements, SVG with self-closed children, and
    markup inside comments, scripts, styles and textareas."""
    part = (
        "<div class=post><h2>Title</h2><p>Text <b>bold</b> <i>it</i> <a href='/x'>x</a>"
        "<p>More<br><img src=a.png><ul><li>one<li>two</ul>"
        "<table><tr><td>a<td>b<tr><td>c</table>"
        "<svg><path d='M0'/><circle r=1 /></svg>"
        "<!-- <div><div><div> --><script>if (a<b) x = '<div><div>'</script>"
        "<style>p > a { color: red }</style><textarea><div><div></textarea></div>\n"
    )
    return "<!DOCTYPE html><html><head><title>Ordinary</title></head><body>" + (part * paragraphs)


def test_a_short_page_is_parsed_as_it_is() -> None:
    page = "<title>t</title>" + "<div>" * (SAFE_TAGS - 10)
    bounded = bound_html(page)
    assert bounded.html is page and not bounded.capped


def test_a_long_ordinary_page_is_scanned_and_left_as_it_is() -> None:
    page = ordinary_page(200)
    assert page.count("<") > SAFE_TAGS  # scanned, not waved through
    bounded = bound_html(page)
    assert bounded.html is page and not bounded.capped
    assert parse_html(page.encode(), URL).depth_capped is False


def test_a_deep_page_keeps_its_links_title_and_text() -> None:
    page = (
        "<title>Deep</title><a href='/before'>before</a>"
        + "<div>" * 20_000
        + "bottom words <a href='/inside'>inside</a><img src=i.png>"
        + "</div>" * 20_000
        + "<a href='/after'>after</a>"
    )
    parsed = parse_html(page.encode(), URL)
    assert parsed.depth_capped
    assert parsed.title == "Deep"
    assert [link.url for link in parsed.links] == [
        "http://a.test/before",
        "http://a.test/inside",
        "http://a.test/after",
    ]
    bounded = parse_bounded(page)
    assert bounded.capped
    assert deepest(bounded.tree) <= MAX_DEPTH + 8
    body = bounded.tree.body
    assert body is not None and "bottom words" in body.text()
    assert bounded.tree.css_first("img[src='i.png']") is not None


def test_nesting_up_to_the_cap_is_kept() -> None:
    page = "<p>" + "<div>" * (MAX_DEPTH - 10) + "x" + "</div>" * (MAX_DEPTH - 10)
    page += "<span>y</span>" * SAFE_TAGS  # long enough to be scanned
    assert bound_html(page).html is page


def test_markup_in_raw_text_is_not_counted() -> None:
    # Thousands of <div> that are not tags: none may count as nesting...
    hidden = (
        "<script>var s = '<div><div>';</script><!-- <div><div> -->"
        "<style>/* <div> */</style><textarea><div></textarea><title><div></title>"
    )
    page = "<body>" + hidden * 1000
    assert page.count("<") > SAFE_TAGS
    assert bound_html(page).html is page
    # ...and end tags inside them do not hide real nesting.
    deep = "<body>" + "<div><script>'</div>'</script><!-- </div> -->" * 3000
    bounded = parse_bounded(deep)
    assert bounded.capped and deepest(bounded.tree) <= MAX_DEPTH + 8


def test_formatting_elements_left_open_are_closed_past_the_cap() -> None:
    # Each <font> closed by </div> stays pending and is re-opened at every later tag: left
    # alone, 3,000 of them make ~4.5 million elements (9 s of Lexbor); with at most 16
    # pending, each tag re-opens at most 16.
    page = "<body>" + "".join(f"<div><font id={n}></div>" for n in range(3000)) + "<p>end"
    bounded = parse_bounded(page)
    assert bounded.capped
    assert len(bounded.tree.css("font")) < 3000 * 18
    body = bounded.tree.body
    assert body is not None and "end" in body.text()


def test_a_page_too_long_to_scan_is_flattened() -> None:
    page = (
        "<title>Huge</title><script>if (a<b) {}</script><!-- <div> -->"
        + "<div><span>w</span> <a href='/l'>l</a></div>" * (SCAN_TAGS // 5 + 1)
    )
    bounded = parse_bounded(page)
    assert bounded.capped
    assert deepest(bounded.tree) < 10
    assert len(bounded.tree.css("a[href='/l']")) == SCAN_TAGS // 5 + 1
    script = bounded.tree.css_first("script")
    assert script is not None and script.text() == "if (a<b) {}"
    assert parse_html(page.encode(), URL).title == "Huge"


def test_foreign_content_cannot_hide_nesting() -> None:
    # Inside <svg>, "/>" closes an element, but <div/> leaves SVG and nests as HTML.
    page = "<body><svg>" + "<div/>" * 5000
    bounded = parse_bounded(page)
    assert bounded.capped and deepest(bounded.tree) <= MAX_DEPTH + 8


_element = st.sampled_from(["div", "span", "section", "b", "em", "p", "li", "td", "a"])


@st.composite
def nested(draw: st.DrawFn, depth: int = 0) -> str:
    """A small well-formed fragment: text, void elements and closed elements."""
    parts = []
    for _ in range(draw(st.integers(0, 3 if depth < 12 else 0))):
        kind = draw(st.sampled_from(["text", "void", "element"]))
        if kind == "text":
            parts.append(draw(st.sampled_from(["x", "a &amp; b", " "])))
        elif kind == "void":
            parts.append(draw(st.sampled_from(["<br>", "<img src=i>", "<hr/>", "<input>"])))
        else:
            name = draw(_element)
            parts.append(f"<{name}>{draw(nested(depth + 1))}</{name}>")
    return "".join(parts)


@settings(max_examples=40, deadline=None)
@given(nested())
def test_well_formed_pages_are_never_changed(fragment: str) -> None:
    # Repeated past SAFE_TAGS so that the scan, not the count, decides.
    filler = "<div><p>x</p></div>" * (SAFE_TAGS // 4 + 1)
    page = f"<!DOCTYPE html><body>{filler}{fragment}{filler}"
    assert bound_html(page).html is page
