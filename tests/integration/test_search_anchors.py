"""Anchor text, field weights and proximity on a real crawl of the local test web."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from gossamer.index import build_index
from gossamer.rank import rank_crawl
from gossamer.search import RankingWeights, SearchEngine
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import crawl


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    web = build_web(WebSpec(seed=5, hosts=5, pages_per_host=12))
    with ThreadedTestWeb(web) as site:
        run = crawl(site, tmp_path_factory.mktemp("anchors-crawl"))
    build_index(run.out)
    rank_crawl(run.out)
    return run.out


def _rows(folder: Path, db: str, sql: str) -> list[tuple[str, ...]]:
    conn = sqlite3.connect(folder / "index" / db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_page_is_found_by_a_word_only_links_to_it_use(indexed: Path) -> None:
    anchors = _rows(
        indexed,
        "anchors.db",
        "SELECT n.name, a.text FROM anchor_links AS a JOIN names AS n ON n.id = a.target",
    )
    indexed_urls = {
        url for (url,) in _rows(indexed, "docs.db", "SELECT url FROM docs WHERE indexed")
    }
    without = RankingWeights(anchor_boost=0.0)
    found = 0
    with SearchEngine(indexed) as engine:
        for target, text in anchors:
            if target not in indexed_urls:
                continue
            for word in (w.strip(".") for w in text.lower().split()):
                # The word is nowhere in the page itself, so only its in-links can find it.
                engine.weights = without
                if engine.scores_for(target, word) is not None:
                    continue
                engine.weights = RankingWeights()
                scores = engine.scores_for(target, word)
                assert scores is not None, (target, word)
                assert target in [h.url for h in engine.search(word, per_page=1000).hits]
                found += 1
    assert found >= 5  # the test web's link words are drawn apart from the page text


def test_field_weights_and_proximity_raise_the_text_score(indexed: Path) -> None:
    [(url, title)] = _rows(
        indexed,
        "docs.db",
        "SELECT url, title FROM docs WHERE indexed AND kind = 'html' AND title LIKE '% % %'"
        " ORDER BY url LIMIT 1",
    )
    first, second = str(title).lower().split()[:2]
    base = RankingWeights(proximity_boost=0.0, title_boost=1.0)
    with SearchEngine(indexed) as engine:
        engine.weights = base
        plain = engine.scores_for(url, first)
        engine.weights = replace(base, title_boost=4.0)
        titled = engine.scores_for(url, first)
        engine.weights = base
        apart = engine.scores_for(url, f"{first} {second}")
        engine.weights = replace(base, proximity_boost=1.0)
        together = engine.scores_for(url, f"{first} {second}")
    assert plain is not None and titled is not None
    assert titled.bm25 > plain.bm25  # the title's words count more with a higher boost
    assert apart is not None and together is not None
    assert together.bm25 > apart.bm25  # the words stand together in the title
