"""Issue 33: extraction rules and plugins in every way of running a crawl.

One ``[[extract]]`` rule set, the example plugin (examples/plugins/page_facts.py) and a plugin
that raises on one page, drops every link into one host and admits one URL no page links to,
given in the config file of a real ``gossamer crawl`` in each mode (``--workers 1``,
``--workers 2``, and a crawl shared in Redis with a second worker). Every fetched HTML page
gets its items, the dropped links are never fetched, the admitted URL is, the raise is
counted once with its URL, and the crawl ends normally. Then ``gossamer extract`` gives the
same rule items from the WARC files afterwards. A small web without the slow special hosts
keeps each mode to a few seconds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gossamer.cli import main
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .modes import Mode, mode_fixture

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "page_facts.py"
SPEC = WebSpec(seed=5, hosts=6, pages_per_host=5, special_hosts=False, crawl_delay_hosts=False)
RULES = (
    '[[extract]]\nfield = "heading"\ncss = "h1"\n'
    '[[extract]]\nfield = "title"\nregex = "<title>(.*?)</title>"\n'
)
FAULTY = """
import asyncio

from gossamer.plugins import PageResult, Plugin

def on_a_loop():
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True

class Faulty(Plugin):
    name = "faulty"

    def on_page(self, page):
        if page.url == {raise_on!r}:
            raise ValueError("no price on this page")
        said = ({{"on_loop": on_a_loop()}},)  # where the hook runs
        if page.url == {admit_from!r}:
            return PageResult(items=said, admit=("/?from-plugin",))
        return PageResult(items=said)

    def keep_link(self, link):
        return not link.url.startswith({drop!r})

plugin = Faulty()
"""


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def _html_pages(folder: Path) -> set[str]:
    conn = sqlite3.connect(folder / "crawl.db")
    try:
        rows = conn.execute(
            "SELECT url FROM pages WHERE purpose = 'page' AND status BETWEEN 200 AND 299"
            " AND content_type LIKE 'text/html%' AND (error IS NULL OR error = '')"
        ).fetchall()
    finally:
        conn.close()
    return {url for (url,) in rows}


def _fetched(folder: Path) -> set[str]:
    conn = sqlite3.connect(folder / "crawl.db")
    try:
        rows = conn.execute("SELECT url FROM pages WHERE purpose = 'page'").fetchall()
    finally:
        conn.close()
    return {url for (url,) in rows}


def _items(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("mode", ["one", "workers", "shared"], indirect=True)
def test_rules_and_plugins_in_every_mode(mode: Mode, site: ThreadedTestWeb, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
    first, second = site.seeds()[:2]
    faulty = tmp_path / "faulty.py"
    faulty.write_text(FAULTY.format(raise_on=first, admit_from=second, drop=second), "utf-8")
    config = tmp_path / "c.toml"
    config.write_text(
        f'plugins = ["{EXAMPLE}", "{faulty}"]\n{RULES}'
        "[politeness]\ndelay = 0.0\nrobots_retry_delay = 60.0\nrobots_wait = 0.3\n",
        encoding="utf-8",
    )
    finished = mode.run(seeds, tmp_path / "out", "--config", config)
    assert set(finished.codes) == {0}, finished.stderr
    pages: set[str] = set()
    fetched: set[str] = set()
    items: list[dict[str, Any]] = []
    errors: list[str] = []
    failed = 0
    for folder in finished.folders:
        pages |= _html_pages(folder)
        fetched |= _fetched(folder)
        items += _items(folder / "items.jsonl")
        stats = json.loads((folder / "reports" / "stats.json").read_text())
        failed += stats["errors"].get("plugin_error", 0)
        report = folder / "reports" / "plugin-errors.tsv"
        errors += report.read_text().splitlines() if report.exists() else []
    assert len(pages) > 20
    by_source: dict[str, dict[str, dict[str, Any]]] = {}
    for item in items:
        by_source.setdefault(item["source"], {})[item["url"]] = item
    assert set(by_source) == {"extract", "page-facts", "faulty"}
    assert set(by_source["extract"]) == pages == set(by_source["page-facts"])
    # Hooks run off the event loop (a thread of their own), in every mode.
    assert set(by_source["faulty"]) == pages - {first}
    assert not any(item["on_loop"] for item in by_source["faulty"].values())
    assert all(item["title"] for item in by_source["extract"].values())
    assert all(item["words"] > 0 for item in by_source["page-facts"].values())
    # Every link into the second seed's site dropped; the URL the plugin admitted fetched.
    # (A shared crawl's worker that did not read robots.txt files /sitemap.xml as a page.)
    site_urls = {url for url in fetched if url.startswith(second)} - {f"{second}sitemap.xml"}
    assert site_urls == {second, f"{second}?from-plugin"}
    # The raise: reported once, with its URL, and the crawl went on.
    (line,) = errors
    assert line.split("\t")[1:4] == ["faulty", "on_page", first]
    assert "ValueError: no price on this page" in line
    said = f"plugin faulty: on_page failed on {first}: ValueError: no price on this page"
    assert said in finished.stderr
    if mode.name == "one":
        # Afterwards, from the WARC files: the same rule items.
        again = tmp_path / "again.jsonl"
        config.write_text(RULES, encoding="utf-8")
        assert (
            main(["extract", str(finished.out), "--config", str(config), "--out", str(again)]) == 0
        )
        assert {i["url"]: i for i in _items(again)} == by_source["extract"]
    assert failed == 1, finished.stderr
