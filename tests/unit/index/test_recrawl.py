"""``gossamer index`` after a recrawl (issue 31): changed pages replace their documents, gone
pages leave every store, pages not modified cost nothing, and a run killed half-way leaves
nothing gone searchable once the next run is through."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from gossamer.index import DOCSTORE_FILE, INDEX_DIR, build_index
from gossamer.index.anchors import AnchorStore
from gossamer.index.imagestore import IMAGES_FILE, ImageStore
from gossamer.index.vectors import Vectors
from gossamer.search import SearchEngine
from gossamer.store.docstore import DocStore

from .fake_crawl import FakePage, html, make_crawl
from .fake_embedder import FakeEmbedder
from .recrawl_folder import recrawl

HOME, KEEP, CHANGE = "http://a.test/", "http://a.test/keep", "http://a.test/change"
GONE, COPY = "http://a.test/gone", "http://b.test/gone-copy"
MOVED, DROPPED = "http://a.test/moved", "http://a.test/dropped"
WORDS = ("sand", "tide", "rock", "shell", "wave", "cliff", "dune", "reef", "kelp", "gull")


def _filler(url: str) -> str:
    """Words of its own for each page, so no two pages are near-duplicates by chance."""
    rng = random.Random(url)
    return " ".join(rng.choice(WORDS) for _ in range(120))


def _page(url: str, title: str, text: str, extra: str = "") -> FakePage:
    return FakePage(url, html(title, f"{text} {_filler(url)}", extra=extra))


GONE_BODY = html(
    "Quokka facts",
    "The quokka smiles: a clone. " + _filler(GONE),
    extra=f'<img src="/quokka.png" alt="quokka smiling"><a href="{KEEP}">marsupial haven</a>',
)
FIRST = [
    _page(HOME, "Home", "The start of the coast guide."),
    _page(KEEP, "Keeper notes", "Notes about otters that never change."),
    FakePage(GONE, GONE_BODY),
    FakePage(COPY, GONE_BODY),  # the same bytes: joins the group of GONE, named by GONE
    _page(MOVED, "Capybara corner", "The capybara sits by the water to revert."),
    _page(DROPPED, "Axolotl tank", "The axolotl keeps its gills in rollback."),
    # Last, so its row has the highest number, which a new row must not take again.
    _page(
        CHANGE,
        "Walrus page",
        "The walrus journal log lies on the ice.",
        f'<img src="/walrus.png" alt="walrus portrait"><a href="{KEEP}">seal colony</a>',
    ),
]
CHANGED = _page(
    CHANGE,
    "Narwhal page",
    "The narwhal weather forecast says rain.",
    f'<img src="/narwhal.png" alt="narwhal portrait"><a href="{KEEP}">penguin parade</a>',
)


def _recrawl(folder: Path) -> None:
    recrawl(
        folder,
        changed=[
            CHANGED,
            FakePage(GONE, html("Not found", "No such page."), status=404),
            FakePage(MOVED, b"", "text/html", status=301, location=KEEP),
        ],
        not_modified=[HOME, KEEP],
        dropped=[DROPPED],
    )


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gossamer.index.vectors.Embedder", FakeEmbedder)
    monkeypatch.setattr("gossamer.index.indexer.semantic_installed", lambda: True)


def _found(folder: Path, query: str) -> list[str]:
    with SearchEngine(folder) as engine:
        return [hit.url for hit in engine.search(query).hits]


def _keys_of(folder: Path, num: int) -> int:
    with closing(sqlite3.connect(folder / INDEX_DIR / DOCSTORE_FILE)) as conn:
        return sum(
            conn.execute(f"SELECT count(*) FROM {table} WHERE num = ?", (num,)).fetchone()[0]
            for table in ("docs", "bands", "lsh")
        )


def _image_pages(folder: Path, words: str) -> list[str]:
    with ImageStore(folder / INDEX_DIR / IMAGES_FILE, readonly=True) as images:
        return [row.page_url for row in images.search(f'"{words}"', 10)]


@pytest.mark.usefixtures("fake_model")
def test_the_index_follows_a_recrawl(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path, FIRST, cdxj=True)
    first = build_index(folder, embeddings=True)
    assert (first.indexed, first.exact_duplicates, first.removed) == (7, 1, 0)
    with DocStore(folder / INDEX_DIR / DOCSTORE_FILE, readonly=True) as store:
        gone_row, old_change = store.by_url(GONE), store.by_url(CHANGE)
        assert gone_row is not None and old_change is not None
        copy_row = store.by_url(COPY)
        assert copy_row is not None and copy_row.group_id == gone_row.num
    assert sorted(_found(folder, "seal")) == [CHANGE, KEEP]  # KEEP by the link's words
    _recrawl(folder)

    second = build_index(folder)
    assert (second.pending, second.indexed, second.removed, second.documents) == (1, 1, 3, 4)
    assert "gone, removed:       3" in second.summary()
    # The changed page: only its new text, once; the old version's keys are gone.
    assert _found(folder, "narwhal") == [CHANGE]
    assert _found(folder, "walrus") == []
    assert _keys_of(folder, old_change.num) == 0
    # Gone (404), moved (301) and dropped pages are found no more; the copy of the gone
    # page still is, alone in the group its first member named.
    for word in ("capybara", "axolotl"):
        assert _found(folder, word) == []
    assert _found(folder, "quokka") == [COPY]
    assert _keys_of(folder, gone_row.num) == 0
    with DocStore(folder / INDEX_DIR / DOCSTORE_FILE, readonly=True) as store:
        assert store.by_url(GONE) is store.by_url(MOVED) is store.by_url(DROPPED) is None
        new_change = store.by_url(CHANGE)
        assert new_change is not None and new_change.num > old_change.num  # never reused
        assert store.group_sizes() == {}
        assert store.group_members(gone_row.num) == [store.by_url(COPY)]
    # Anchor text follows the links: the old version's words are gone, the gone page's
    # link no longer counts (the copy's, from another host, counts twice), the new one's does.
    assert _found(folder, "seal") == []
    assert sorted(_found(folder, "penguin")) == [CHANGE, KEEP]
    with AnchorStore(folder / INDEX_DIR / "anchors.db") as anchors:
        assert anchors.values_for(KEEP, "a.test") == ["marsupial haven"] * 2 + ["penguin parade"]
    # Images: the old version's and the gone page's dropped, the new version's added.
    assert _image_pages(folder, "walrus") == []
    assert _image_pages(folder, "narwhal") == [CHANGE]
    assert _image_pages(folder, "quokka") == [COPY]
    # Vectors: the rows of the old version and of the gone pages zeroed, the new one's made.
    assert second.vectors is not None and second.vectors.cleared == 4
    vectors = Vectors.open(folder)
    assert vectors is not None
    assert not np.any(vectors.matrix[old_change.num])
    assert not np.any(vectors.matrix[gone_row.num])
    weather = FakeEmbedder().embed(["weather"])[0]
    assert float(vectors.matrix[new_change.num] @ weather) > 0.5

    # Nothing changed since: nothing is read, nothing removed.
    third = build_index(folder)
    assert (third.pending, third.indexed, third.removed, third.documents) == (0, 0, 0, 4)


def test_a_run_killed_after_tantivy_s_commit_deletes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_crawl(tmp_path, FIRST, cdxj=True)
    build_index(folder)
    _recrawl(folder)
    commit = AnchorStore.commit

    def killed(self: AnchorStore) -> None:
        raise KeyboardInterrupt  # after tantivy's commit, before the document store's

    monkeypatch.setattr(AnchorStore, "commit", killed)
    with pytest.raises(KeyboardInterrupt):
        build_index(folder)
    with DocStore(folder / INDEX_DIR / DOCSTORE_FILE, readonly=True) as store:
        assert store.by_url(GONE) is not None and store.in_flight  # rolled back: still listed
    monkeypatch.setattr(AnchorStore, "commit", commit)
    report = build_index(folder)
    assert (report.removed, report.indexed, report.documents) == (3, 1, 4)
    assert _found(folder, "quokka") == [COPY]
    assert _found(folder, "capybara") == []
    assert _found(folder, "narwhal") == [CHANGE]
    assert _found(folder, "walrus") == []


def test_a_changed_page_that_is_no_longer_text_loses_its_links_and_images(
    tmp_path: Path,
) -> None:
    folder = make_crawl(tmp_path, FIRST)
    build_index(folder)
    recrawl(folder, changed=[FakePage(CHANGE, b"\x89PNG....", "image/png")])
    report = build_index(folder)
    assert (report.indexed, report.skipped, report.documents) == (0, {"not_text": 1}, 6)
    assert _found(folder, "walrus") == []
    assert _found(folder, "seal") == []
    assert _image_pages(folder, "walrus") == []
