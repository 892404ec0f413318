"""Which group a new page joins: same content, a near-duplicate, or its own; and an index
written before MinHash signatures were kept."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.index.near import Grouping, NearKeys, choose_group, near_keys
from gossamer.store.docstore import DocStore

WORDS = [f"w{i}" for i in range(3000)]


def _text(seed: int, count: int = 300) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(count))


def _add(store: DocStore, name: str, doc_id: str | None, keys: NearKeys) -> tuple[int, Grouping]:
    grouping = choose_group(store, doc_id, keys)
    row = store.add(
        url_id=name, url=f"http://a.test/{name}", host="a.test", doc_id=doc_id, fetched_at=1.0,
        kind="html", lang="en", title=name, words=300, keys=keys, group=grouping.group,
        indexed=True,
    )  # fmt: skip
    return row.group_id, grouping


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocStore]:
    with DocStore(tmp_path / "docs.db") as opened:
        opened.begin()
        yield opened
        opened.commit()


def test_exact_then_near_then_unrelated(store: DocStore) -> None:
    text = _text(1)
    first, how = _add(store, "one", "sha-1", near_keys(text))
    assert how == Grouping(None)
    assert _add(store, "copy", "sha-1", near_keys(text)) == (first, Grouping(first, "exact"))
    # A new date line and an advertisement paragraph: 8% of the words.
    edited = "updated 2024 05 17 " + text + " " + _text(9, 20)
    assert _add(store, "near", "sha-2", near_keys(edited)) == (first, Grouping(first, "near"))
    other, how = _add(store, "other", "sha-3", near_keys(_text(2)))
    assert other != first and how == Grouping(None)
    assert store.group_sizes() == {first: 3}
    assert store.exact_copies() == {(first, "sha-1"): 2}


def test_short_pages_and_pages_without_content_id_stay_alone(store: DocStore) -> None:
    stub = near_keys("not found")
    assert stub == NearKeys()
    first, _ = _add(store, "stub", None, stub)
    second, how = _add(store, "stub2", None, stub)
    assert first != second and how.how == ""


def _old_docs_db(path: Path) -> None:
    """A docs.db as Gossamer wrote it before MinHash: no ``minhash`` column, no ``lsh``."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE docs (num INTEGER PRIMARY KEY, url_id TEXT NOT NULL UNIQUE,
            url TEXT NOT NULL, host TEXT NOT NULL, doc_id TEXT, fetched_at REAL NOT NULL,
            kind TEXT NOT NULL, lang TEXT NOT NULL, title TEXT NOT NULL, words INTEGER NOT NULL,
            simhash INTEGER, group_id INTEGER NOT NULL, indexed INTEGER NOT NULL);
        CREATE TABLE bands (band INTEGER NOT NULL, value INTEGER NOT NULL,
            num INTEGER NOT NULL, PRIMARY KEY (band, value, num)) WITHOUT ROWID;
        """
    )
    conn.close()


def test_an_older_index_is_upgraded_and_its_pages_found_by_simhash(tmp_path: Path) -> None:
    path = tmp_path / "docs.db"
    _old_docs_db(path)
    text = _text(3)
    keys = near_keys(text)
    with DocStore(path) as old:
        assert old.upgraded
        old.begin()
        # A page indexed before: a fingerprint, no signature.
        legacy = NearKeys(simhash=keys.simhash)
        first, _ = _add(old, "legacy", "sha-1", legacy)
        old.commit()
    with DocStore(path, readonly=True) as reader:
        row = reader.by_url("http://a.test/legacy")
        assert row is not None and row.simhash == keys.simhash
    with DocStore(path) as again:
        assert not again.upgraded
        again.begin()
        assert _add(again, "new", "sha-2", keys) == (first, Grouping(first, "near"))
        again.commit()
