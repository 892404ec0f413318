"""The example plugin of examples/plugins/ does what its docstring promises."""

from __future__ import annotations

from pathlib import Path

from gossamer.plugins import Link, Page
from gossamer.plugins.loading import load_plugin

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "plugins" / "page_facts.py"


def test_page_facts_counts_and_skips_calendars() -> None:
    plugin = load_plugin(str(EXAMPLE))
    assert plugin.name == "page-facts"
    html = "<html><body><nav>Home</nav><h1> Harbor </h1><p>one two three</p></body></html>"
    page = Page("http://a.test/", 200, "text/html", html, ("http://a.test/x",), 0)
    result = plugin.on_page(page)
    assert result is not None
    assert result.items == ({"heading": "Harbor", "words": 5, "links": 1},)
    assert plugin.keep_link(Link("http://a.test/notes/1", page.url, 1))
    assert not plugin.keep_link(Link("http://a.test/cal/2030/04", page.url, 1))
