"""An example Gossamer plugin: a few facts about every page, and no calendars.

Run it while crawling (``plugins = ["examples/plugins/page_facts.py"]`` in the config given
to ``gossamer crawl --config``) or over a finished crawl
(``gossamer extract DIR --plugin examples/plugins/page_facts.py``). Each HTML page gives one
line of ``DIR/items.jsonl``::

    {"url": "http://a.test/", "source": "page-facts", "heading": "Harbor", "words": 120,
     "links": 14}

and links into ``/cal/`` (an endless calendar) are not followed. tests/unit/plugins/
test_page_facts.py holds it to that.
"""

from __future__ import annotations

from gossamer.plugins import Link, Page, PageResult, Plugin


class PageFacts(Plugin):
    name = "page-facts"

    def on_page(self, page: Page) -> PageResult | None:
        tree = page.tree()
        heading = tree.css_first("h1")
        words = len(tree.body.text(separator=" ").split()) if tree.body is not None else 0
        fact = {
            "heading": heading.text(strip=True) if heading is not None else None,
            "words": words,
            "links": len(page.links),
        }
        return PageResult(items=(fact,))

    def keep_link(self, link: Link) -> bool:
        return "/cal/" not in link.url


plugin = PageFacts()
