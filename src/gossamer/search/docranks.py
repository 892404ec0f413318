"""Search side, ranks by document: PageRank and host rank of every indexed page, as arrays
indexed by the document store's ``num``.

Data flow: rank/ (every URL of the link graph) + index/docs.db -> **docranks** ->
``DIR/index/doc_ranks.bin`` -> the engine. A search needs the ranks of the pages it can
return, not of every URL the crawl saw (143k on a 10k-page crawl, 0.3 s to read into
dicts). ``gossamer index`` and ``gossamer rank`` write the file when they end (whichever
runs second has both inputs); the engine reads it when its stamp (the indexed pages, the
largest ``num``, the size and time of the rank file) still matches, else computes the arrays
itself, as before.

The file is plain numbers, read into ``array`` objects in one pass: no numpy (its import
alone is a third of a ``gossamer search``), no pickle. Layout, little-endian: the magic
``GSDR0001``, the stamp (4 x int64), ``used`` and ``n`` (2 x int64), then four float64
arrays of ``n`` values (scaled PageRank, scaled host rank, raw PageRank, raw host rank).
"""

from __future__ import annotations

import contextlib
import logging
import struct
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path

from gossamer.errors import GossamerError
from gossamer.index.schema import DOCSTORE_FILE, INDEX_DIR
from gossamer.rank.export import RANK_DIR, URL_RANKS, load_ranks
from gossamer.search.ranking import log_scaled
from gossamer.store.docstore import DocStore
from gossamer.store.tempfiles import replacing
from gossamer.urls import host_or_empty as host_name

__all__ = ["DOC_RANKS", "DocRanks", "doc_ranks", "save_doc_ranks"]

log = logging.getLogger(__name__)

DOC_RANKS = "doc_ranks.bin"
_MAGIC = b"GSDR0001"
_HEADER = struct.Struct("<8s6q")  # magic, stamp (4), used, n
_Stamp = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class DocRanks:
    """By ``num``: the log-scaled ranks the blend uses and the raw ones a hit shows."""

    pagerank: array[float]
    host_rank: array[float]
    raw_pagerank: array[float]
    raw_host_rank: array[float]
    used: bool  # the crawl has been ranked


def _stamp(crawl_dir: Path, store: DocStore) -> _Stamp:
    try:
        ranks = (crawl_dir / RANK_DIR / URL_RANKS).stat()
        mtime, size = ranks.st_mtime_ns, ranks.st_size
    except OSError:
        mtime, size = 0, -1
    return (store.count(), store.max_num(), mtime, size)


def _compute(crawl_dir: Path, store: DocStore) -> DocRanks:
    nums_urls = list(store.nums_and_urls())
    size = max((num for num, _ in nums_urls), default=0) + 1
    scaled_pr, scaled_hr, all_pr, all_hr = (array("d", bytes(8 * size)) for _ in range(4))
    ranks = load_ranks(crawl_dir)
    if ranks is None:
        return DocRanks(scaled_pr, scaled_hr, all_pr, all_hr, used=False)
    raw_pr = [ranks.of_url(url) for _, url in nums_urls]
    raw_hr = [ranks.of_host(host_name(url)) for _, url in nums_urls]
    for (num, _), pr, hr, spr, shr in zip(
        nums_urls,
        raw_pr,
        raw_hr,
        log_scaled(raw_pr, ranks.urls),
        log_scaled(raw_hr, ranks.hosts),
        strict=True,
    ):
        all_pr[num], all_hr[num], scaled_pr[num], scaled_hr[num] = pr, hr, spr, shr
    return DocRanks(scaled_pr, scaled_hr, all_pr, all_hr, used=True)


def _read(path: Path, stamp: _Stamp) -> DocRanks | None:
    """The saved arrays when the file is whole and its stamp is ``stamp``."""
    data = path.read_bytes()
    if len(data) < _HEADER.size:
        return None
    magic, *saved, used, n = _HEADER.unpack_from(data)
    if magic != _MAGIC or tuple(saved) != stamp or n < 1:
        return None
    if len(data) != _HEADER.size + 4 * 8 * n:
        return None
    arrays = []
    for i in range(4):
        values = array("d")
        start = _HEADER.size + i * 8 * n
        values.frombytes(data[start : start + 8 * n])
        if sys.byteorder == "big":
            values.byteswap()
        arrays.append(values)
    pagerank, host_rank, raw_pagerank, raw_host_rank = arrays
    return DocRanks(pagerank, host_rank, raw_pagerank, raw_host_rank, used=bool(used))


def doc_ranks(crawl_dir: Path, store: DocStore) -> DocRanks:
    """The ranks of the indexed pages: from the saved file when it is current, else computed."""
    with contextlib.suppress(OSError):
        saved = _read(crawl_dir / INDEX_DIR / DOC_RANKS, _stamp(crawl_dir, store))
        if saved is not None:
            return saved
    return _compute(crawl_dir, store)


def _encode(stamp: _Stamp, found: DocRanks) -> bytes:
    n = len(found.pagerank)
    parts = [_HEADER.pack(_MAGIC, *stamp, int(found.used), n)]
    for values in (found.pagerank, found.host_rank, found.raw_pagerank, found.raw_host_rank):
        out = array("d", values)
        if sys.byteorder == "big":
            out.byteswap()
        parts.append(out.tobytes())
    return b"".join(parts)


def save_doc_ranks(crawl_dir: Path) -> bool:
    """Write ``DIR/index/doc_ranks.bin`` for the index and ranks as they are now; False (and
    a warning) when it cannot, which only makes later searches compute the arrays again."""
    folder = crawl_dir / INDEX_DIR
    if not (folder / DOCSTORE_FILE).is_file():
        return False
    try:
        store = DocStore(folder / DOCSTORE_FILE, readonly=True)
        try:
            stamp = _stamp(crawl_dir, store)
            found = _compute(crawl_dir, store)
        finally:
            store.close()
        with replacing() as replacement:  # a reader sees the old file or the new one
            replacement.beside(folder / DOC_RANKS).write_bytes(_encode(stamp, found))
        with contextlib.suppress(OSError):
            (folder / "doc_ranks.npz").unlink()  # an earlier version's file, no longer read
    except (OSError, ValueError, GossamerError) as exc:  # searches stay correct without it
        log.warning("ranks by document not saved in %s: %s", folder, exc)
        return False
    return True
