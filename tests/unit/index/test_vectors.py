"""Page vectors beside the index: built by ``gossamer index --embeddings``, kept up to date
by later runs (new pages embedded, replaced pages zeroed, a torn run's rows written again),
and the packaged model loaded with no network."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from gossamer.index import build_index
from gossamer.index.embed import Embedder, page_text, semantic_installed
from gossamer.index.schema import INDEX_DIR
from gossamer.index.vectors import HEADER_FILE, VECTORS_FILE, Vectors
from gossamer.store.docstore import DocStore

from .fake_crawl import START, FakePage, html, make_crawl
from .fake_embedder import FakeEmbedder

PAGES = [
    FakePage("http://g.test/revert", html("git-revert", "revert reverses an earlier commit")),
    FakePage("http://g.test/clone", html("git-clone", "clone a repository")),
    FakePage("http://g.test/img.png", b"\x89PNG", "image/png"),  # not text: no vector
]


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # The stand-in needs no package: these tests run without the semantic extra too.
    monkeypatch.setattr("gossamer.index.vectors.Embedder", FakeEmbedder)
    monkeypatch.setattr("gossamer.index.indexer.semantic_installed", lambda: True)


def _rows(folder: Path) -> np.ndarray:
    vectors = Vectors.open(folder)
    assert vectors is not None
    return np.asarray(vectors.matrix)


def _num(folder: Path, url: str) -> int:
    with DocStore(folder / INDEX_DIR / "docs.db", readonly=True) as store:
        row = store.by_url(url)
        assert row is not None
        return row.num


@pytest.mark.usefixtures("fake_model")
def test_every_indexed_page_gets_one_unit_row_and_later_runs_add_only_new_ones(
    tmp_path: Path,
) -> None:
    folder = make_crawl(tmp_path / "c", PAGES)
    assert build_index(folder).vectors is None  # not asked for: none made
    assert not (folder / INDEX_DIR / HEADER_FILE).exists()
    report = build_index(folder, embeddings=True)
    assert report.vectors is not None and report.vectors.embedded == 2
    rows = _rows(folder)
    revert, clone = _num(folder, PAGES[0].url), _num(folder, PAGES[1].url)
    assert rows.shape == (max(revert, clone) + 1, 256)
    norms = np.linalg.norm(rows, axis=1)
    assert norms[revert] == pytest.approx(1.0) and norms[clone] == pytest.approx(1.0)
    assert sum(norms > 0) == 2  # the image and row 0 are zeros
    before = rows.copy()

    # A later crawl adds a page; a plain ``gossamer index`` (no flag) embeds it alone.
    FakeEmbedder.calls = 0
    more = FakePage("http://g.test/log", html("git-log", "show the log"), fetched_at=START + 9)
    make_crawl(folder, [more])
    report = build_index(folder)
    assert report.vectors is not None and report.vectors.embedded == 1
    assert FakeEmbedder.calls == 1
    after = _rows(folder)
    assert np.array_equal(after[: len(before)], before)
    assert np.linalg.norm(after[_num(folder, more.url)]) == pytest.approx(1.0)


@pytest.mark.usefixtures("fake_model")
def test_a_refetched_page_moves_to_its_new_row_and_its_old_row_is_zeroed(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path / "c", PAGES[:2])
    build_index(folder, embeddings=True)
    old = _num(folder, PAGES[0].url)
    newer = FakePage(PAGES[0].url, html("git-revert", "undo a commit"), fetched_at=START + 50)
    make_crawl(folder, [newer])
    report = build_index(folder)
    assert report.vectors is not None
    assert (report.vectors.embedded, report.vectors.cleared) == (1, 1)
    rows = _rows(folder)
    assert not rows[old].any()
    assert np.linalg.norm(rows[_num(folder, newer.url)]) == pytest.approx(1.0)


@pytest.mark.usefixtures("fake_model")
def test_rows_past_the_header_are_written_again_after_a_torn_run(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path / "c", PAGES[:2])
    build_index(folder, embeddings=True)
    header = folder / INDEX_DIR / HEADER_FILE
    good = _rows(folder).copy()
    # As if killed after the first row was written and before the header said so.
    data = json.loads(header.read_text())
    header.write_text(json.dumps({**data, "rows": 1}))
    with (folder / INDEX_DIR / VECTORS_FILE).open("r+b") as out:
        out.seek(1024)
        out.write(b"\x7f" * 1024)  # garbage past the header's count
    report = build_index(folder)
    assert report.vectors is not None and report.vectors.embedded == 2
    assert np.array_equal(_rows(folder), good)
    # A header for another model starts the file anew.
    header.write_text(json.dumps({**data, "model": "another"}))
    assert Vectors.open(folder) is None
    report = build_index(folder)
    assert report.vectors is not None and report.vectors.embedded == 2


def test_page_text_is_title_headings_description_and_the_start_of_the_body() -> None:
    body = " ".join(f"w{i}" for i in range(1000))
    text = page_text("T", "H1 H2", "", body, body_words=3)
    assert text == "T\nH1 H2\nw0 w1 w2"


@pytest.mark.skipif(not semantic_installed(), reason="needs the semantic extra (wordllama)")
def test_the_packaged_model_loads_without_network_and_finds_a_page_by_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("HOME", str(tmp_path))  # no cache of an earlier download either
    model = Embedder()
    pages = model.embed(
        [
            page_text("git-revert", "", "", "Revert some existing commits"),
            page_text("git-clone", "", "", "Clone a repository into a new directory"),
            page_text("git-branch", "", "", "List, create, or delete branches"),
        ]
    )
    query = model.embed(["how do I undo a commit"])[0]
    assert pages.shape == (3, 256) and pages.dtype == np.float32
    assert np.linalg.norm(pages, axis=1) == pytest.approx([1.0, 1.0, 1.0], rel=1e-5)
    assert int(np.argmax(pages @ query)) == 0
    assert not model.embed([""]).any()  # no token: the zero vector, not NaN
