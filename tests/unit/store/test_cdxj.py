"""CdxjWriter: our live index equals what cdxj-indexer rebuilds from the WARC files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cdxj_indexer.main import write_cdx_index

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.cdxj import CdxjWriter, cdxj_line, sort_cdxj, url_key
from gossamer.store.warc import WarcLocation, WarcStore

from .test_warc import fixed_store, sample_results

Entry = tuple[str, str, dict[str, str]]


def parse_cdxj(path: Path) -> list[Entry]:
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        key, timestamp, blob = line.split(" ", 2)
        entries.append((key, timestamp, json.loads(blob)))
    return entries


def index_while_crawling(
    folder: Path, results: list[FetchResult], store: WarcStore | None = None
) -> tuple[WarcStore, Path]:
    store = store or fixed_store(folder)
    with store, CdxjWriter(folder / "index.cdxj") as writer:
        for result in results:
            writer.add(result, store.write(result))
    return store, folder / "index.cdxj"


def test_lines_match_cdxj_indexer(tmp_path: Path) -> None:
    store, ours = index_while_crawling(tmp_path, sample_results())
    theirs = tmp_path / "rebuilt.cdxj"
    write_cdx_index(str(theirs), [str(path) for path in store.files], {"sort": True})
    expected = parse_cdxj(theirs)
    assert len(expected) == len(sample_results())
    assert parse_cdxj(ours) == expected
    # Same keys in the same order, so the JSON text itself is identical too.
    assert ours.read_text() == theirs.read_text()


def test_lines_match_across_rotated_files(tmp_path: Path) -> None:
    store = fixed_store(tmp_path, max_file_bytes=2_000)
    store, ours = index_while_crawling(tmp_path, sample_results() * 2, store)
    assert len(store.files) > 1
    theirs = tmp_path / "rebuilt.cdxj"
    write_cdx_index(str(theirs), [str(path) for path in store.files], {"sort": True})
    assert parse_cdxj(ours) == parse_cdxj(theirs)


def test_line_fields(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    with store:
        result = sample_results()[1]
        location = store.write(result)
    key, timestamp, blob = cdxj_line(result, location).rstrip("\n").split(" ", 2)
    assert key == "com,example)/"
    assert timestamp == "20231114221321"
    fields = json.loads(blob)
    assert list(fields) == ["url", "mime", "status", "digest", "length", "offset", "filename"]
    assert fields["mime"] == "text/html"
    assert fields["offset"] == str(location.offset)


def test_response_without_content_type_has_no_mime() -> None:
    line = cdxj_line(
        FetchResult(url="http://example.com/x", status=204, started_at=0.0),
        WarcLocation("a.warc.gz", 10, 20),
    )
    assert "mime" not in json.loads(line.split(" ", 2)[2])


def test_url_that_surt_rejects_is_its_own_key() -> None:
    assert url_key("http://example.com:bad/") == "http://example.com:bad/"
    assert url_key("http://Example.com/a") == "com,example)/a"


def test_index_is_sorted_at_close(tmp_path: Path) -> None:
    _, ours = index_while_crawling(tmp_path, list(reversed(sample_results())))
    lines = ours.read_text().splitlines()
    assert lines == sorted(lines)


@pytest.mark.parametrize("run_lines", [1, 7, 1_000])
def test_sort_merges_runs(tmp_path: Path, run_lines: int) -> None:
    rng = random.Random(run_lines)
    lines = [f"com,example{rng.randrange(50)})/p{i} 2024 {{}}\n" for i in range(200)]
    path = tmp_path / "index.cdxj"
    path.write_text("".join(lines))
    sort_cdxj(path, run_lines=run_lines)
    assert path.read_text().splitlines(keepends=True) == sorted(lines)
    assert [p.name for p in tmp_path.iterdir()] == ["index.cdxj"]  # no runs left behind


def test_sort_keeps_a_final_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "index.cdxj"
    path.write_text("b 1 {}\na 1 {}")
    sort_cdxj(path)
    assert path.read_text() == "a 1 {}\nb 1 {}\n"


def test_sort_of_empty_index_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "index.cdxj"
    path.write_text("")
    sort_cdxj(path)
    assert path.read_text() == ""


def test_unwritable_index_raises_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open CDXJ index"):
        CdxjWriter(tmp_path / "missing" / "index.cdxj")
