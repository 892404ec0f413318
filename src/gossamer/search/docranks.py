"""Search side, ranks by document: PageRank and host rank of every indexed page, as arrays
indexed by the document store's ``num``.

Data flow: rank/ (every URL of the link graph) + index/docs.db -> **docranks** ->
``DIR/index/doc_ranks.npz`` -> the engine. A search needs the ranks of the pages it can
return, not of every URL the crawl saw (143k on a 10k-page crawl, 0.3 s to read into
dicts). ``gossamer index`` and ``gossamer rank`` write the file when they end (whichever
runs second has both inputs); the engine reads it when its stamp (the indexed pages, the
largest ``num``, the size and time of the rank file) still matches, else computes the arrays
itself, as before. The file holds numbers only and is read without pickle.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gossamer.errors import GossamerError
from gossamer.index.schema import DOCSTORE_FILE, INDEX_DIR
from gossamer.rank.export import RANK_DIR, URL_RANKS, load_ranks
from gossamer.search.ranking import log_scaled
from gossamer.store.docstore import DocStore
from gossamer.urls import host_or_empty as host_name

__all__ = ["DOC_RANKS", "DocRanks", "doc_ranks", "save_doc_ranks"]

log = logging.getLogger(__name__)

DOC_RANKS = "doc_ranks.npz"
_Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class DocRanks:
    """By ``num``: the log-scaled ranks the blend uses and the raw ones a hit shows."""

    pagerank: _Floats
    host_rank: _Floats
    raw_pagerank: _Floats
    raw_host_rank: _Floats
    used: bool  # the crawl has been ranked


def _stamp(crawl_dir: Path, store: DocStore) -> npt.NDArray[np.int64]:
    try:
        ranks = (crawl_dir / RANK_DIR / URL_RANKS).stat()
        rank_stamp = [ranks.st_mtime_ns, ranks.st_size]
    except OSError:
        rank_stamp = [0, -1]
    return np.array([store.count(), store.max_num(), *rank_stamp], dtype=np.int64)


def _compute(crawl_dir: Path, store: DocStore) -> DocRanks:
    nums_urls = list(store.nums_and_urls())
    size = max((num for num, _ in nums_urls), default=0) + 1
    scaled_pr, scaled_hr, all_pr, all_hr = (np.zeros(size) for _ in range(4))
    ranks = load_ranks(crawl_dir)
    if ranks is None:
        return DocRanks(scaled_pr, scaled_hr, all_pr, all_hr, used=False)
    nums = np.fromiter((num for num, _ in nums_urls), dtype=np.int64, count=len(nums_urls))
    raw_pr = np.fromiter((ranks.of_url(u) for _, u in nums_urls), dtype=np.float64)
    raw_hr = np.fromiter((ranks.of_host(host_name(u)) for _, u in nums_urls), dtype=np.float64)
    scaled_pr[nums] = log_scaled(raw_pr, ranks.urls)
    scaled_hr[nums] = log_scaled(raw_hr, ranks.hosts)
    all_pr[nums] = raw_pr
    all_hr[nums] = raw_hr
    return DocRanks(scaled_pr, scaled_hr, all_pr, all_hr, used=True)


def doc_ranks(crawl_dir: Path, store: DocStore) -> DocRanks:
    """The ranks of the indexed pages: from the saved file when it is current, else computed."""
    path = crawl_dir / INDEX_DIR / DOC_RANKS
    with contextlib.suppress(OSError, ValueError, KeyError), np.load(path) as saved:
        if np.array_equal(saved["stamp"], _stamp(crawl_dir, store)):
            return DocRanks(
                saved["pagerank"],
                saved["host_rank"],
                saved["raw_pagerank"],
                saved["raw_host_rank"],
                used=bool(saved["used"][0]),
            )
    return _compute(crawl_dir, store)


def save_doc_ranks(crawl_dir: Path) -> bool:
    """Write ``DIR/index/doc_ranks.npz`` for the index and ranks as they are now; False (and
    a warning) when it cannot, which only makes later searches compute the arrays again."""
    folder = crawl_dir / INDEX_DIR
    if not (folder / DOCSTORE_FILE).is_file():
        return False
    temporary = folder / f".{DOC_RANKS}.{os.getpid()}.tmp"
    try:
        store = DocStore(folder / DOCSTORE_FILE, readonly=True)
        try:
            stamp = _stamp(crawl_dir, store)
            found = _compute(crawl_dir, store)
        finally:
            store.close()
        with temporary.open("wb") as out:
            np.savez(
                out,
                stamp=stamp,
                pagerank=found.pagerank,
                host_rank=found.host_rank,
                raw_pagerank=found.raw_pagerank,
                raw_host_rank=found.raw_host_rank,
                used=np.array([found.used]),
            )
        temporary.replace(folder / DOC_RANKS)
    except (OSError, ValueError, GossamerError) as exc:  # searches stay correct without it
        log.warning("ranks by document not saved in %s: %s", folder, exc)
        with contextlib.suppress(OSError):
            temporary.unlink()
        return False
    return True
