"""Escaping and link helpers: nothing crawled reaches markup unescaped."""

from __future__ import annotations

from gossamer.web.render import esc, layout, local, outbound


def test_escape_covers_text_and_attributes() -> None:
    assert esc('<a href="x">\'&') == "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;"


def test_outbound_links_only_for_http() -> None:
    assert outbound("javascript:alert(1)", "x") == "x"
    assert outbound("data:text/html,<b>", "<b>") == "&lt;b&gt;"
    link = outbound('http://a.test/"onmouseover="x', "<t>")
    assert link.startswith('<a href="http://a.test/&quot;onmouseover=&quot;x"')
    assert 'rel="noopener noreferrer nofollow"' in link
    assert link.endswith(">&lt;t&gt;</a>")


def test_local_links_encode_their_parameters() -> None:
    assert local("/info", url="http://a.test/?a=1&b=2", q="", page=None) == (
        "/info?url=http%3A%2F%2Fa.test%2F%3Fa%3D1%26b%3D2"
    )
    assert local("/search", q="a b", page=2) == "/search?q=a+b&amp;page=2"


def test_layout_has_no_script_and_escapes_the_query() -> None:
    page = layout("T", "<p>body</p>", query='"><script>x</script>')
    assert "<script" not in page
    assert 'value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"' in page
