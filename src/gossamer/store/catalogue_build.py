"""Store stage, several crawl folders read as one without a merge: a catalogue, built.

Data flow: the folders of a shared crawl's workers (each ``crawl.db``, ``warc/``,
``index*.cdxj``) -> **catalogue** -> ``OUT``: a ``crawl.db`` with every folder's rows (the
database half of ``merge``: ``merge.merge_databases``), an ``index.cdxj`` with every folder's
lines, and a ``warc/`` of symbolic links, one to each WARC file where it is. No WARC file is
read or copied on the way: ``gossamer index DIR... --engine spark --out OUT`` builds it, and
the Spark tasks then read the workers' files through the links, as ``search`` and ``serve``
of OUT do for cached copies and page versions.

Names. The K-th folder's file ``NAME`` is linked as ``K~NAME`` (Gossamer never writes a ``~``
in a WARC name). A revisit record (an exact duplicate) names its original by the name it has
in its own folder, and its original is always in the same folder: ``revisits.beside`` turns
that name into ``K~NAME`` for every reader. Offsets do not change, so no record is rewritten.

A catalogue is derived data, made again by every ``index`` run with several folders (the
workers' crawls may have grown since): it is built in ``OUT/.catalogue-PID`` and then moved
in, the database by one atomic rename. A run killed on the way leaves the scratch folder
(removed by the next run, which holds the same lock) and at worst an OUT without ``warc/``
until that run. ``index/`` and ``rank/`` in OUT are kept: the index goes on incrementally
(a page's ``url_id`` is its URL's hash, whichever folder it came from).

``OUT/catalogue.json`` names the folders; a crawl, a resume, ``recover`` and ``merge`` refuse
a catalogue (``store/catalogue.py``), as it has no crawl of its own to go on with.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.lockfile import PidLock
from gossamer.store.catalogue import CATALOGUE_FILE, catalogue_of
from gossamer.store.merge import Source, merge_databases, read_source
from gossamer.store.merge_warc import Placement, Relocation, merge_index, warc_files
from gossamer.store.revisits import CATALOGUE_MARK

__all__ = ["CatalogueSummary", "build_catalogue"]

_LOCK = ".gossamer-catalogue.lock"
_SCRATCH = ".catalogue-"
# What an OUT may hold besides a catalogue's own files: what index and rank write there.
_KEPT = frozenset({"index", "rank", _LOCK})


@dataclass(frozen=True, slots=True)
class CatalogueSummary:
    """What ``build_catalogue`` made."""

    folder: Path
    sources: int
    pages: int
    files: int
    seconds: float

    def line(self) -> str:
        return (
            f"catalogue of {self.sources} crawl folder{'s' * (self.sources != 1)} in"
            f" {self.folder}: {self.pages} pages, {self.files} WARC files linked"
            f" ({self.seconds:.2f} s)"
        )


def build_catalogue(out: Path, folders: Sequence[Path]) -> CatalogueSummary:
    """Make ``out`` the catalogue of ``folders`` (again, if it is one already)."""
    started = time.perf_counter()
    out = out.resolve()
    _require_usable(out)
    sources = [read_source(folder, check_listed=False) for folder in folders]  # before OUT
    out.mkdir(parents=True, exist_ok=True)
    lock = PidLock(out / _LOCK)
    holder = lock.acquire()
    if holder is not None:
        raise StoreError(f"{out} is being catalogued by another 'gossamer index' (pid {holder})")
    try:
        for stale in out.glob(f"{_SCRATCH}*"):
            shutil.rmtree(stale, ignore_errors=True)  # a run killed on the way: ours now
        scratch = out / f"{_SCRATCH}{os.getpid()}"
        scratch.mkdir()
        try:
            files, relocations = _link_files(sources, scratch / "warc")
            merge_index(
                scratch / "index.cdxj",
                [(s.folder, r) for s, r in zip(sources, relocations, strict=True)],
            )
            pages, _, _ = merge_databases(scratch / "crawl.db", sources, relocations)
            _quiet(scratch / "crawl.db")
            _move_in(scratch, out, [str(s.folder.resolve()) for s in sources])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    finally:
        lock.release()
    return CatalogueSummary(out, len(sources), pages, files, time.perf_counter() - started)


def _require_usable(out: Path) -> None:
    """``out`` absent, empty, holding only an index and ranks, or a catalogue already."""
    if not out.exists():
        return
    if not out.is_dir():
        raise StoreError(f"{out} is not a folder")
    if catalogue_of(out) is not None:
        return
    others = sorted(p.name for p in out.iterdir() if p.name not in _KEPT)
    if others:
        raise StoreError(
            f"{out} holds {', '.join(others[:3])}: a catalogue of several crawl folders needs"
            " a folder of its own (absent, empty, or one an earlier 'gossamer index --out' or"
            " 'gossamer rank --out' wrote)"
        )


def _link_files(sources: Sequence[Source], warc: Path) -> tuple[int, list[Relocation]]:
    """A link ``K~NAME`` in ``warc`` to every WARC file of the K-th source."""
    warc.mkdir()
    linked = 0
    relocations = []
    for position, source in enumerate(sources, 1):
        relocation = Relocation()
        for file in sorted(warc_files(source.folder)):
            link = f"{position}{CATALOGUE_MARK}{file.name}"
            try:
                (warc / link).symlink_to(file.resolve())
            except OSError as exc:
                raise StoreError(f"cannot link {file} as {warc / link}: {exc.strerror}") from exc
            relocation.places[file.name] = Placement(link)
            linked += 1
        relocations.append(relocation)
    return linked, relocations


def _quiet(database: Path) -> None:
    """Leave the database without a write-ahead log: a catalogue is only read, and a reader
    then needs no ``-wal`` file beside it."""
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
    finally:
        conn.close()


def _move_in(scratch: Path, out: Path, folders: list[str]) -> None:
    """Replace OUT's catalogue files with the new ones: the mark first (so that a folder
    holding any of them is known as a catalogue), then the database atomically, then the
    WARC links' folder by two renames."""
    try:
        mark = scratch / CATALOGUE_FILE
        mark.write_text(json.dumps(folders, indent=1) + "\n", encoding="utf-8")
        mark.replace(out / CATALOGUE_FILE)
        for leftover in ("crawl.db-wal", "crawl.db-shm"):  # an old database's, empty
            (out / leftover).unlink(missing_ok=True)
        (scratch / "crawl.db").replace(out / "crawl.db")
        (scratch / "index.cdxj").replace(out / "index.cdxj")
        if (out / "warc").exists():
            (out / "warc").rename(scratch / "warc.old")
        (scratch / "warc").rename(out / "warc")
    except OSError as exc:
        raise StoreError(f"cannot write the catalogue in {out}: {exc.strerror}") from exc
