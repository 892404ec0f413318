"""The link graph from crawl.db, host level, and the Parquet files of ``gossamer rank``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gossamer.rank import RankError, host_graph, load_ranks, load_url_graph, rank_crawl

from ..index.fake_crawl import FakePage, html, make_crawl


def crawl(tmp_path: Path) -> Path:
    return make_crawl(
        tmp_path,
        [
            FakePage(
                "http://a.test/",
                html("A", "home"),
                links=("http://a.test/1", "http://b.test/", "http://a.test/"),
            ),
            FakePage(
                "http://a.test/1", html("A1", "one"), links=("http://b.test/", "http://c.test/x")
            ),
            FakePage("http://b.test/", html("B", "bee"), links=("http://a.test/",)),
        ],
    )


def test_url_graph_drops_self_links_and_keeps_uncrawled_targets(tmp_path: Path) -> None:
    graph = load_url_graph(crawl(tmp_path) / "crawl.db")
    assert set(graph.urls) == {
        "http://a.test/",
        "http://a.test/1",
        "http://b.test/",
        "http://c.test/x",
    }
    edges = {(graph.urls[s], graph.urls[d]) for s, d in zip(graph.src, graph.dst, strict=True)}
    assert ("http://a.test/", "http://a.test/") not in edges
    assert len(edges) == len(graph.src) == 5


def test_host_graph_counts_each_host_pair_once(tmp_path: Path) -> None:
    hosts = host_graph(load_url_graph(crawl(tmp_path) / "crawl.db"))
    assert sorted(hosts.hosts) == ["a.test", "b.test", "c.test"]
    pairs = {
        (hosts.hosts[s], hosts.hosts[d]): int(n)
        for s, d, n in zip(hosts.src, hosts.dst, hosts.links, strict=True)
    }
    assert pairs == {("a.test", "b.test"): 2, ("a.test", "c.test"): 1, ("b.test", "a.test"): 1}


def test_rank_crawl_writes_parquet_and_search_reads_it(tmp_path: Path) -> None:
    folder = crawl(tmp_path)
    report = rank_crawl(folder)
    assert report.urls.converged and report.hosts.converged
    assert report.urls.iterations > 0
    assert "URL level" in report.summary() and "host level" in report.summary()
    nodes = pq.read_table(folder / "rank" / "url_ranks.parquet").to_pylist()
    assert sum(row["pagerank"] for row in nodes) == pytest.approx(1.0)
    by_url = {row["url"]: row for row in nodes}
    assert by_url["http://b.test/"]["in_links"] == 2
    assert by_url["http://c.test/x"]["out_links"] == 0
    edges = pq.read_table(folder / "rank" / "url_edges.parquet")
    assert edges.num_rows == 5 and edges.column_names == ["src", "dst"]
    host_edges = pq.read_table(folder / "rank" / "host_edges.parquet").to_pylist()
    assert {"src": "a.test", "dst": "b.test", "links": 2} in host_edges
    summary = json.loads((folder / "rank" / "summary.json").read_text())
    assert summary["url"]["iterations"] == report.urls.iterations
    assert summary["tolerance"] == 1e-9
    ranks = load_ranks(folder)
    assert ranks is not None
    assert ranks.of_url("http://b.test/") > ranks.of_url("http://a.test/1")
    assert ranks.of_host("c.test") > 0
    assert ranks.of_url("http://nowhere.test/") == 0.0


def test_missing_inputs(tmp_path: Path) -> None:
    assert load_ranks(tmp_path) is None
    with pytest.raises(RankError, match=r"no crawl\.db"):
        rank_crawl(tmp_path)
