"""``build_index``: what gets indexed, duplicate groups, and incremental runs."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import tantivy

from gossamer.index import (
    DOCSTORE_FILE,
    INDEX_DIR,
    Fields,
    IndexingError,
    build_index,
    open_index,
)
from gossamer.store.docstore import DocStore
from gossamer.testweb.pdf import make_pdf

from .fake_crawl import START, FakePage, html, make_crawl

WORDS = (  # noqa: SIM905 - prose reads better than 26 quoted items
    "the house river of and garden with water light under small green people bridge "
    "morning market music through window city evening paper story friend winter road"
).split()


def prose(seed: int, count: int = 400) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(count))


def pages() -> list[FakePage]:
    shared = html("Shared page", prose(1))
    near = prose(2)
    return [
        FakePage("http://a.test/", html("Home of alpha", prose(3))),
        FakePage("http://a.test/copy1", shared),
        FakePage("http://b.test/copy2", shared),
        FakePage("http://a.test/near1", html("Near one", near + " edition one")),
        FakePage("http://b.test/near2", html("Near two", near + " edition two")),
        FakePage("http://a.test/doc.pdf", make_pdf("Report", [prose(4, 30)]), "application/pdf"),
        FakePage("http://a.test/hidden", html("Hidden", prose(5), head=NOINDEX)),
        FakePage("http://a.test/logo.png", b"\x89PNG....", "image/png"),
        FakePage("http://a.test/gone", html("Gone", "missing"), status=404),
        FakePage("http://a.test/zipped", html("Zipped", prose(6)), gzip=True),
    ]


NOINDEX = '<meta name="robots" content="noindex">'


def _urls(folder: Path, query: tantivy.Query) -> set[str]:
    handle = open_index(folder, create=False)
    searcher = handle.index.searcher()
    hits = searcher.search(query, 100).hits
    return {searcher.doc(address).get_first(Fields.URL) for _, address in hits}


def test_first_run_indexes_text_pages_and_groups_duplicates(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path, pages())
    report = build_index(folder)
    assert report.pending == 9  # the 404 is never considered
    assert report.indexed == 7
    assert report.skipped == {"noindex": 1, "not_text": 1}
    assert report.exact_duplicates == 1
    assert report.near_duplicates == 1
    assert report.documents == 7
    assert report.languages == {"en": 7}
    assert "indexed:             7" in report.summary()
    with DocStore(folder / INDEX_DIR / DOCSTORE_FILE, readonly=True) as store:
        copy1, copy2 = store.by_url("http://a.test/copy1"), store.by_url("http://b.test/copy2")
        near1, near2 = store.by_url("http://a.test/near1"), store.by_url("http://b.test/near2")
        assert copy1 and copy2 and near1 and near2
        assert copy1.group_id == copy2.group_id == copy1.num
        assert near1.group_id == near2.group_id != copy1.group_id
        assert store.group_sizes() == {copy1.group_id: 2, near1.group_id: 2}
        hidden = store.by_url("http://a.test/hidden")
        assert hidden is not None and not hidden.indexed
    schema = open_index(folder, create=False).schema
    stemmed = tantivy.Query.term_query(schema, Fields.TITLE, "report")
    assert _urls(folder, stemmed) == {"http://a.test/doc.pdf"}
    zipped = tantivy.Query.term_query(schema, Fields.TITLE, "zip")  # "Zipped", stemmed
    assert _urls(folder, zipped) == {"http://a.test/zipped"}
    site = tantivy.Query.term_query(schema, Fields.SITE, "b.test")
    assert _urls(folder, site) == {"http://b.test/copy2", "http://b.test/near2"}


def test_second_run_only_adds_new_and_refetched_pages(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path, pages())
    build_index(folder)
    again = build_index(folder)
    assert (again.pending, again.indexed, again.documents) == (0, 0, 7)
    # A resumed crawl: one new page, one page fetched again with new text.
    make_crawl(
        tmp_path,
        [
            FakePage("http://c.test/new", html("Brand new", prose(7))),
            FakePage("http://a.test/", html("Home rewritten", prose(8)), fetched_at=START + 99),
        ],
    )
    third = build_index(folder)
    assert (third.pending, third.indexed, third.documents) == (2, 2, 8)
    schema = open_index(folder, create=False).schema
    assert _urls(folder, tantivy.Query.term_query(schema, Fields.URL, "http://a.test/")) == {
        "http://a.test/"
    }
    assert _urls(folder, tantivy.Query.term_query(schema, Fields.TITLE, "rewritten"))
    assert not _urls(folder, tantivy.Query.term_query(schema, Fields.TITLE, "home")) - {
        "http://a.test/"
    }


def test_interrupted_run_does_not_duplicate_documents(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path, pages())
    build_index(folder)
    store_path = folder / INDEX_DIR / DOCSTORE_FILE
    # Simulate a stop after tantivy's commit and before the store's: rows gone, mark set.
    with DocStore(store_path) as store:
        store.begin()
        row = store.by_url("http://a.test/")
        assert row is not None
        store.forget(row.num)
        store.commit()
        store.set_in_flight(True)
    report = build_index(folder)
    assert report.indexed == 1
    schema = open_index(folder, create=False).schema
    searcher = open_index(folder, create=False).index.searcher()
    query = tantivy.Query.term_query(schema, Fields.URL, "http://a.test/")
    assert len(searcher.search(query, 10).hits) == 1


def test_not_a_crawl_folder(tmp_path: Path) -> None:
    with pytest.raises(IndexingError, match=r"no crawl\.db"):
        build_index(tmp_path)
    with pytest.raises(IndexingError, match=re.escape(f"run 'gossamer index {tmp_path}' first")):
        open_index(tmp_path, create=False)
