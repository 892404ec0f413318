"""Crawl the local test web, then index, rank and search it, as a user of the CLI would."""

from __future__ import annotations

import argparse
import dataclasses
import html
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from gossamer.cli.search import add_parsers
from gossamer.index import build_index, indexer
from gossamer.rank import rank_crawl
from gossamer.search import SearchEngine
from gossamer.testweb import ThreadedTestWeb, Web, WebSpec, build_web
from gossamer.testweb.model import Kind

from ..unit.web.served import Client, serve_and_check
from .conftest import crawl


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One crawl of the test web, never changed: each test indexes a copy of it."""
    web = build_web(WebSpec(seed=11, hosts=10, pages_per_host=25))
    with ThreadedTestWeb(web) as site:
        run = crawl(site, tmp_path_factory.mktemp("search-crawl"))
    return run.out


@pytest.fixture
def searchable(crawled: Path, tmp_path: Path) -> Path:
    """A copy of the crawl, not yet indexed or ranked: what a test builds there is its own."""
    return Path(shutil.copytree(crawled, tmp_path / "crawl"))


def _docs(folder: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(folder / "index" / "docs.db")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_index_rank_and_search_the_test_web(
    searchable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run the worker-process path even though this crawl is small.
    monkeypatch.setattr(indexer, "_POOL_MIN_PAGES", 0)
    report = build_index(searchable, workers=2)
    assert report.workers == 2
    assert report.indexed > 150
    assert report.exact_duplicates >= 1  # the test web serves identical /copy/ pages
    assert set(report.skipped) <= {"not_text", "noindex"}
    kinds = dict(_docs(searchable, "SELECT kind, count(*) FROM docs GROUP BY kind"))
    assert kinds.get("pdf", 0) >= 1
    assert build_index(searchable).pending == 0  # nothing new: nothing read

    ranks = rank_crawl(searchable)
    assert ranks.urls.converged and ranks.hosts.converged
    assert ranks.urls.iterations > 10

    with SearchEngine(searchable) as engine:
        # A page's exact title finds that page first, in the all-terms-in-title tier.
        [(url, title)] = _docs(
            searchable,
            "SELECT url, title FROM docs WHERE indexed = 1 AND kind = 'html' AND group_id = num"
            " ORDER BY length(title) DESC LIMIT 1",
        )
        result = engine.search(str(title))
        assert result.hits[0].scores.tier == 0
        assert url in [h.url for h in result.hits if h.scores.tier == 0]
        tiers = [h.scores.tier for h in result.hits]
        assert tiers == sorted(tiers)
        # Every hit of a site: query is on that host; exclusions hold.
        host = result.hits[0].host
        word = str(title).split()[0]
        assert {h.host for h in engine.search(f"{word} site:{host}").hits} == {host}
        assert all(h.host != host for h in engine.search(f"{word} -site:{host}").hits)
        excluded = engine.search(f"{word} -{str(title).split()[-1]}")
        assert url not in [h.url for h in excluded.hits]
        # Duplicate pages come back as one result that says how many others there are.
        [(group, size, copy_title)] = _docs(
            searchable,
            "SELECT group_id, count(*), max(title) FROM docs WHERE indexed = 1"
            " GROUP BY group_id HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 1",
        )
        folded = [h for h in engine.search(f'"{copy_title}"').hits if h.group == group]
        assert len(folded) == 1
        assert folded[0].duplicates == int(str(size)) - 1


def test_search_command_prints_json(searchable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_index(searchable)
    rank_crawl(searchable)
    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["search", str(searchable), "amber", "--json", "--english"])
    assert args.run(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["matched"] == "all"
    assert data["language"] == "en"
    assert 0 < len(data["hits"]) <= 30
    conn = sqlite3.connect(searchable / "index" / "anchors.db")
    try:
        named = {url for (url,) in conn.execute(
            "SELECT n.name FROM anchor_links AS a JOIN names AS n ON n.id = a.target"
            " WHERE lower(a.text) LIKE '%amber%'"
        )}  # fmt: skip
    finally:
        conn.close()
    for hit in data["hits"]:
        # The word is on the page, or in the words of a link to it (anchor text).
        shown = (hit["title"] + hit["snippet"]["text"] + hit["url"]).lower()
        assert "amber" in shown or hit["url"] in named


def _web_with_a_near_duplicate() -> Web:
    """The test web with one of its identical /copy/ pages changed in its markup only: its
    menu links in another order. Its text is the same; its bytes, and so its digest, differ."""
    web = build_web(WebSpec(seed=11, hosts=6, pages_per_host=8))
    first = web.find(Kind.DUPLICATE)[0]
    resources = dict(web.resources)
    resource = resources[first]
    assert len(set(resource.links)) > 1
    resources[first] = dataclasses.replace(resource, links=resource.links[::-1])
    hosts = [info for info in map(web.info, web.hosts) if info is not None]
    return Web(web.spec, hosts, resources, web.trap_year)


@pytest.fixture(scope="module")
def near_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with ThreadedTestWeb(_web_with_a_near_duplicate()) as site:
        run = crawl(site, tmp_path_factory.mktemp("near-crawl"))
    report = build_index(run.out)
    assert (report.exact_duplicates, report.near_duplicates) == (1, 1)
    return run.out


async def _listed(client: Client, href: str, section: str) -> list[str]:
    """The labels of the items under heading ``id=section`` of the page ``href`` leads to."""
    page = await (await client.get(href)).text()
    start = page.index(f'id="{section}"')
    listing = page[start : page.index("<h2", start + 1)]
    return re.findall(r'<li><span class="note">([^<]*)</span>', listing)


def test_each_duplicate_link_lists_what_it_counts(near_crawl: Path) -> None:
    with SearchEngine(near_crawl) as engine:
        [(title,)] = _docs(near_crawl, "SELECT DISTINCT title FROM docs WHERE url LIKE '%/copy/%'")
        [hit] = [h for h in engine.search(f'"{title}"').hits if h.duplicates]
    assert (hit.duplicates, hit.same_content + hit.near_duplicates) == (2, 2)
    assert sorted(c.exact for c in hit.copies) == sorted(
        [True] * hit.same_content + [False] * hit.near_duplicates
    )

    async def check(client: Client) -> None:
        page = await (await client.get("/search", params={"q": f'"{title}"'})).text()
        links = re.findall(r'<a href="(/info\?[^"]*#(same|near))">(\d+) ([^<]*)</a>', page)
        assert {section for _, section, _, _ in links} == {
            s for s, n in (("same", hit.same_content), ("near", hit.near_duplicates)) if n
        }
        for href, section, count, text in links:
            labels = await _listed(client, html.unescape(href), section)
            label = "same content" if section == "same" else "near-duplicate"
            assert labels == [label] * int(count)  # before: "2 other pages", an empty list
            assert text.startswith("other page") if section == "same" else "near-dup" in text

    serve_and_check(near_crawl, check)
