"""One index writer at a time; no answer from a half-built index; reading needs no writing."""

from __future__ import annotations

import json
import os
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

import gossamer.index
from gossamer.cli import main
from gossamer.index import DOCSTORE_FILE, INDEX_DIR
from gossamer.index import indexer as indexer_module
from gossamer.index.access import IndexLock, is_writing
from gossamer.store.connect import readonly_uri
from gossamer.store.docstore import DocStore

from ..cli_helpers import one_error, run
from .fake_crawl import make_crawl, search_corpus


@pytest.fixture
def crawl(tmp_path: Path) -> Path:
    return make_crawl(tmp_path / "crawl", search_corpus())


def test_a_second_index_run_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], crawl: Path
) -> None:
    with IndexLock(crawl, crawl / INDEX_DIR):
        assert is_writing(crawl / INDEX_DIR)
        error = one_error(*run(capsys, "index", crawl, "--workers", "1"))
    assert error.startswith(f"index of {crawl} is being written by another process")
    assert not is_writing(crawl / INDEX_DIR)
    assert run(capsys, "index", crawl, "--workers", "1")[0] == 0


def test_out_of_memory_while_indexing_then_search_says_the_index_is_incomplete(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, crawl: Path
) -> None:
    def no_memory(*args: object) -> str:
        raise MemoryError

    with monkeypatch.context() as patch:
        patch.setattr(indexer_module, "detect_language", no_memory)
        error = one_error(*run(capsys, "index", crawl, "--workers", "1"))
    assert error == (
        f"out of memory while indexing {crawl}: the batches already committed are kept;"
        f" run 'gossamer index {crawl}' again"
    )
    error = one_error(*run(capsys, "search", crawl, "write ahead"))
    assert error.startswith(f"the search index of {crawl} is incomplete")
    assert run(capsys, "index", crawl, "--workers", "1")[0] == 0
    assert main(["search", str(crawl), "write ahead", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"]


def test_a_worker_process_that_dies(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, crawl: Path
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise BrokenProcessPool("a child process terminated abruptly")

    monkeypatch.setattr(gossamer.index, "build_index", broken)  # what `index` calls
    error = one_error(*run(capsys, "index", crawl))
    assert error.startswith(f"an indexing process died (out of memory?) while indexing {crawl}")


def test_an_index_with_no_page_yet_is_incomplete(
    capsys: pytest.CaptureFixture[str], crawl: Path
) -> None:
    DocStore(crawl / INDEX_DIR / DOCSTORE_FILE).close()  # a run that died before its first batch
    error = one_error(*run(capsys, "search", crawl, "wal"))
    assert error == (
        f"the search index of {crawl} is incomplete: no page is indexed yet;"
        f" run 'gossamer index {crawl}'"
    )
    with IndexLock(crawl, crawl / INDEX_DIR):
        error = one_error(*run(capsys, "search", crawl, "wal"))
    assert "is being written by another process and holds no page yet" in error


def test_search_without_an_index_and_serve_without_a_crawl(
    capsys: pytest.CaptureFixture[str], crawl: Path, tmp_path: Path
) -> None:
    error = one_error(*run(capsys, "search", crawl, "wal"))
    assert error == f"no search index in {crawl}; run 'gossamer index {crawl}' first"
    # serve also serves a folder not indexed yet (its Crawl page watches the crawl), but
    # not a folder that holds no crawl at all.
    empty = tmp_path / "empty"
    empty.mkdir()
    error = one_error(*run(capsys, "serve", empty, "--port", "1"))
    assert error == f"{empty} holds no crawl (no crawl.db): nothing to serve"


def test_readonly_uri_is_immutable_only_where_nothing_can_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "docs.db"
    assert readonly_uri(path).endswith("?mode=ro")
    monkeypatch.setattr(os, "access", lambda *args: False)
    assert readonly_uri(path).endswith("?mode=ro&immutable=1")
