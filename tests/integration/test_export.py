"""Issue 33: ``gossamer export`` over a real crawl of the test web, judged by its readers.

One small crawl (four hosts, indexed) serves every test: JSON Lines whose text is, page for
page, the body the search index holds; Parquet that pyarrow reads with the documented schema;
CSV, WET (warcio reads it) and the filters; a WACZ that ``wacz validate`` accepts.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import tantivy
from warcio.archiveiterator import ArchiveIterator

from gossamer.cli import main
from gossamer.export.records import FIELD_NAMES, FIELDS
from gossamer.index import build_index
from gossamer.index.schema import open_index
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import crawl

WACZ_TOOL = Path(sys.executable).with_name("wacz")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("export")
    with ThreadedTestWeb(
        build_web(WebSpec(seed=7, hosts=4, pages_per_host=10, crawl_delay_hosts=False))
    ) as site:
        run = crawl(site, tmp, workers=1)
    build_index(run.out, workers=1)
    yield run.out


def _export(folder: Path, *args: str) -> bytes:
    """What ``gossamer export`` writes (run in this process: a child's start costs a second)."""
    out = folder.parent / "exported"
    assert main(["export", str(folder), "--jobs", "1", "--out", str(out), *args]) == 0
    try:
        return out.read_bytes()
    finally:
        out.unlink()


def _jsonl(folder: Path, *args: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _export(folder, *args).decode("utf-8").splitlines()]


def _indexed(folder: Path) -> dict[str, dict[str, str]]:
    """Every indexed document's stored url, body, title and language."""
    searcher = open_index(folder, create=False).index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), searcher.num_docs).hits
    docs = {}
    for _, address in hits:
        doc = searcher.doc(address)
        docs[doc["url"][0]] = {k: doc[k][0] for k in ("body", "title", "lang")}
    return docs


def test_jsonl_text_is_what_the_index_holds(folder: Path) -> None:
    records = _jsonl(folder)
    assert records and all(list(r) == list(FIELD_NAMES) for r in records)
    indexed = _indexed(folder)
    with_text = {r["url"]: r for r in records if r["text"] is not None}
    assert set(with_text) == set(indexed)
    for url, doc in indexed.items():
        record = with_text[url]
        assert (record["text"], record["title"], record["language"]) == (
            doc["body"],
            doc["title"],
            doc["lang"],
        )
        assert record["payload_digest"].startswith("sha1:")
        assert record["warc_file"].endswith(".warc.gz")


def test_redirects_name_where_they_end(folder: Path) -> None:
    records = _jsonl(folder, "--status", "3xx", "--fields", "url,final_url,status")
    assert records, "the test web has redirects"
    pages = {r["url"] for r in _jsonl(folder, "--status", "2xx", "--fields", "url")}
    moved = [r for r in records if r["final_url"] != r["url"]]
    assert moved and all(300 <= r["status"] < 400 for r in records)
    assert any(r["final_url"] in pages for r in moved)


def test_filters_and_fields(folder: Path) -> None:
    everything = _jsonl(folder, "--fields", "url,host,status,language")
    host = everything[0]["host"]
    site = _jsonl(folder, "--site", host, "--fields", "host")
    assert site and {r["host"] for r in site} == {host}
    assert len(site) == sum(r["host"] == host for r in everything)
    missing = _jsonl(folder, "--status", "404", "--fields", "status")
    assert [r["status"] for r in missing] == [r["status"] for r in everything if r["status"] == 404]
    english = _jsonl(folder, "--language", "en", "--fields", "url,language")
    assert english and len(english) == sum(r["language"] == "en" for r in everything)
    assert _jsonl(folder, "--since", "2999-01-01") == []


def test_parquet_has_the_documented_schema(folder: Path) -> None:
    table = pq.read_table(io.BytesIO(_export(folder, "--format", "parquet")))
    kinds = {f.name: f.kind for f in FIELDS}
    assert table.schema.names == list(FIELD_NAMES)
    shown = {"string": "string", "int": "int64", "timestamp": "timestamp[us, tz=UTC]"}
    for field in table.schema:
        expected = shown.get(kinds[field.name], "list<element: string>")
        assert str(field.type) == expected, field.name
    rows = table.to_pylist()
    assert [r["url"] for r in rows] == [r["url"] for r in _jsonl(folder, "--fields", "url")]
    assert any(r["text"] for r in rows)


def test_csv_and_wet(folder: Path) -> None:
    text = _export(folder, "--format", "csv", "--fields", "url,status,links").decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["url", "status", "links"] and len(rows) > 10
    wet = _export(folder, "--format", "wet")
    with io.BytesIO(wet) as stream:
        records = [(r.rec_type, r.content_stream().read()) for r in ArchiveIterator(stream)]
    assert records[0][0] == "warcinfo"
    texts = {body.decode() for kind, body in records[1:] if kind == "conversion"}
    jsonl = _jsonl(folder, "--fields", "title,text")
    assert texts == {f"{r['title']}\n{r['text']}" for r in jsonl if r["text"] is not None}


@pytest.mark.skipif(not WACZ_TOOL.exists(), reason="the wacz tool (dev extra) is not installed")
def test_wacz_passes_wacz_validate(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "crawl.wacz"
    out.write_bytes(_export(folder, "--format", "wacz"))
    with zipfile.ZipFile(out) as package:
        names = package.namelist()
        assert {"indexes/index.cdx", "pages/pages.jsonl", "datapackage.json"} <= set(names)
        stored = [i for i in package.infolist() if i.filename.startswith("archive/")]
        assert stored and all(i.compress_type == zipfile.ZIP_STORED for i in stored)
    checked = subprocess.run(
        [str(WACZ_TOOL), "validate", "-f", str(out)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert "WACZ is valid" in checked.stdout


def test_bad_flags_and_a_missing_extra(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(folder), "--status", "2zz"]) == 2
    assert capsys.readouterr().err.startswith("gossamer: error: --status '2zz'")
    assert main(["export", str(folder), "--fields", "url,price"]) == 2
    assert "no field 'price'" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if the parquet extra were missing
    assert main(["export", str(folder), "--format", "parquet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("needs the parquet extra: pip install 'gossamer[parquet]'")
    assert "\n" not in err
