"""Issue 36, rendering: a site whose links and text exist only once JavaScript has run is
crawled whole with ``--render``, in one process, with ``--workers 2`` and in a shared crawl on
Redis (``modes.py``), and the site's request log finds the crawl polite with the browser's own
requests counted: no overlap per host name, no robots.txt or Crawl-delay violation, no
request to the private address the page's script asks for. Without ``--render`` the crawl
finds one page and says it looked script-built. In one process ``--render-auto`` renders
exactly the script-built pages, whose text is then searchable, exported and shown as the
cached copy; a recovered crawl.db (its rows rebuilt from the WARC files alone) holds the same
rendered pages and links.

Needs Debian's ``chromium`` and the ``playwright`` package; skipped with the reason if either
is missing (``make test`` installs both when root).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.index.archive import WarcReader
from gossamer.search import SearchEngine, page_info
from gossamer.store import CrawlRecords
from gossamer.testweb.appsite import AppSite, ThreadedAppSite
from gossamer.web.cached import RENDERED_NOTE, load_cached
from gossamer.web.pages import info_page

from ..chromium import require_chromium
from .modes import ROOT, Mode, mode_fixture

CHROMIUM = require_chromium()

# Two app hosts (app2 with a robots.txt Crawl-delay), three pages each, and the static hosts.
SITE = AppSite(apps=2, pages=3, plain_pages=3, crawl_delay=0.15)
APPS = "app*.web.test"
FAST = ("--delay", "0.05")  # app2's Crawl-delay still holds for its pages and their requests


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


@pytest.fixture
def site() -> Iterator[ThreadedAppSite]:
    with ThreadedAppSite(SITE) as running:
        yield running


def _seeds(site: ThreadedAppSite, tmp_path: Path) -> Path:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
    return seeds


def _rows(folders: tuple[Path, ...], sql: str) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = []
    for folder in folders:
        with sqlite3.connect(folder / "crawl.db") as conn:
            found += conn.execute(sql).fetchall()
    return found


def _figures(folder: Path) -> dict[str, object]:
    stats: dict[str, object] = json.loads((folder / "reports" / "stats.json").read_text())
    return stats


@pytest.mark.parametrize("mode", ["one", "workers", "shared"], indirect=True)
def test_render_finds_every_page_politely_in_every_mode(
    mode: Mode, site: ThreadedAppSite, tmp_path: Path
) -> None:
    # one process renders by guess (--render-auto), which must pick the same pages: the
    # script-built ones, not the plain host's pages with their analytics script nor the thin
    # host's short ones
    asked = ("--render-auto", "*") if mode.name == "one" else ("--render", APPS)
    finished = mode.run(_seeds(site, tmp_path), tmp_path / "out", *FAST, *asked)
    assert set(finished.codes) == {0}, finished.stderr
    site.sync()
    report = site.report(rendered=True)
    assert report.ok(), report.summary()  # every page, 0 overlaps/violations/private requests
    assert report.private_requests == 0 and report.robots_violations == 0

    pages = set(_rows(finished.folders, "SELECT url, render FROM pages WHERE purpose = 'page'"))
    scripted = site.pages("script_built")
    assert {(url, "rendered") for url in scripted} <= pages
    assert {render for url, render in pages if url not in scripted} == {None}
    # the browser's own requests were fetched by the crawl and recorded as resources
    resources = {str(url) for (url,) in _rows(finished.folders, _RESOURCES)}
    assert any("/static/app.js" in url for url in resources)
    assert not any("/api/secret" in url or "/static/logo.png" in url for url in resources)
    # the figure, from crawl.db's rows, in every mode: a shared crawl's workers each report
    # their own folder's share (``gossamer merge`` adds them up)
    counted = [_figures(folder)["render"] for folder in finished.folders]
    assert sum(c.get("rendered", 0) for c in counted) == len(scripted), counted  # type: ignore[attr-defined]
    assert "rendered in a browser: " in finished.stdout
    if mode.name == "one":
        _what_is_kept(site, finished.out)


_RESOURCES = "SELECT url FROM pages WHERE purpose = 'resource'"


def test_without_render_the_crawl_says_the_page_looked_script_built(
    site: ThreadedAppSite, tmp_path: Path
) -> None:
    mode = Mode("workers")
    finished = mode.run(_seeds(site, tmp_path), tmp_path / "out", *FAST)
    assert finished.codes == (0,), finished.stderr
    assert _figures(finished.out)["pages"] == 1  # the app's empty shell, and nothing else
    assert _figures(finished.out)["render"] == {"hint": 1}
    assert "looked script-built: 1 page(s)" in finished.stdout
    site.sync()
    assert site.report(rendered=False).ok()


def _what_is_kept(site: ThreadedAppSite, out: Path) -> None:
    """A rendered page's text is searchable, exported and shown as its cached copy; a
    recovered crawl.db holds the same rendered pages and links."""
    scripted = site.pages("script_built")
    page = sorted(scripted)[-1]
    marker = site.marker(page)
    _gossamer("index", out, "--workers", "1")
    answer = json.loads(_gossamer("search", out, marker, "--json"))
    assert [hit["url"] for hit in answer["hits"]][:1] == [page]
    # the export's text of a rendered page is its DOM's too
    exported = _gossamer("export", out, "--out", "-", "--fields", "url,text")
    texts = {record["url"]: record["text"] for record in map(json.loads, exported.splitlines())}
    assert marker in texts[page]
    # and the web UI's cached copy shows the page as the browser rendered it, saying so
    with CrawlRecords(out / "crawl.db") as records, WarcReader(out / "warc") as reader:
        copy = load_cached(records, reader, page)
    assert copy is not None and marker.encode() in copy.body and copy.note == RENDERED_NOTE
    # and the page info says how it was read
    with SearchEngine(out) as engine, CrawlRecords(out / "crawl.db") as records:
        info = page_info(engine, records, page)
    assert info is not None and "rendered</th><td>in a browser:" in info_page(info, True)

    links = "SELECT from_url, to_url FROM link_urls ORDER BY 1, 2"
    renders = "SELECT url, render FROM pages ORDER BY url"
    before = (_rows((out,), links), _rows((out,), renders))
    (out / "crawl.db").unlink()
    _gossamer("recover", out)
    assert (_rows((out,), links), _rows((out,), renders)) == before


def _gossamer(*args: str | Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gossamer", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
