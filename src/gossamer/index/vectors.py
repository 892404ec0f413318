"""Index stage, vectors: one unit vector per indexed page, kept beside the tantivy index.

Data flow: tantivy (stored title, headings, description, body) -> ``embed`` -> **vectors**
(``DIR/index/vectors.f32`` + ``vectors.json``) -> ``gossamer.search``'s ``hybrid`` ranking.

The file is a plain matrix of little-endian float32, row ``num`` for the document store's
row number ``num`` (tantivy's ``num`` fast field), 1 KiB a row at 256 dimensions; a row of
zeros is a page with no vector (skipped, replaced by a newer version, never embedded). The
header (``vectors.json``) names the model and says how many rows are complete. A search
reads the matrix into memory and takes the exact dot product with every row: 100,000 pages
are 100 MB and about 5-12 ms a query on one core (BENCHMARKS.md, issue 35); an approximate
index (HNSW, e.g. usearch) would answer in well under a millisecond at the cost of its build
time, memory and recall, and is the next step past that size; it is not used yet.

Built incrementally by ``gossamer index``, under the index's lock, after tantivy's last
commit: the pages whose ``num`` lies past the header's row count are embedded and written;
rows of pages no longer in tantivy (replaced by a newer fetch of their URL, or gone after a
recrawl) are zeroed. A changed page gets a new ``num`` (the document store never gives one
twice), so it is embedded anew, never left with its old version's vector. The
rows are written and synced first, the header is replaced after: a run killed in between
leaves a header that still says the old count, and the next run writes those rows again.
A header naming another model (or none) starts the file anew.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import tantivy

from gossamer.index.embed import DIMENSIONS, MODEL, Embedder, page_text
from gossamer.index.errors import IndexingError
from gossamer.index.schema import INDEX_DIR, Fields, IndexHandle

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "HEADER_FILE",
    "VECTORS_FILE",
    "VectorReport",
    "Vectors",
    "has_vectors",
    "update_vectors",
]

log = logging.getLogger(__name__)

VECTORS_FILE = "vectors.f32"  # under DIR/index
HEADER_FILE = "vectors.json"
_ROW_BYTES = DIMENSIONS * 4
_BATCH = 1024  # pages read and embedded at a time: bounded memory at any index size


@dataclass(frozen=True, slots=True)
class VectorReport:
    """What one update did: pages embedded, rows zeroed, rows in the file, time taken."""

    embedded: int
    cleared: int
    rows: int
    seconds: float

    def summary(self) -> str:
        rate = self.embedded / self.seconds if self.seconds > 0 else 0.0
        return (
            f"vectors:             {self.embedded} pages embedded, {self.cleared} cleared,"
            f" {self.rows} rows ({self.seconds:.2f} s, {rate:.0f} pages/s)"
        )


def has_vectors(index_dir: Path) -> bool:
    """Whether ``gossamer index --embeddings`` has made vectors here (so later runs keep
    them up to date)."""
    return (index_dir / HEADER_FILE).is_file()


def _rows_done(index_dir: Path) -> int:
    """The header's row count, 0 when it is missing, unreadable or names another model."""
    try:
        header = json.loads((index_dir / HEADER_FILE).read_text(encoding="utf-8"))
        if header.get("model") == MODEL and header.get("dimensions") == DIMENSIONS:
            return max(0, int(header["rows"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return 0


def _write_header(index_dir: Path, rows: int) -> None:
    path = index_dir / HEADER_FILE
    temp = path.with_name(path.name + ".tmp")
    body = {"model": MODEL, "dimensions": DIMENSIONS, "rows": rows, "layout": "float32 LE"}
    with temp.open("w", encoding="utf-8") as out:
        json.dump(body, out)
        out.flush()
        os.fsync(out.fileno())
    temp.replace(path)


def _text_of(doc: tantivy.Document) -> str:
    values = doc.to_dict()  # one conversion of the stored document, not one per field

    def field(name: str) -> str:
        return " ".join(str(v) for v in values.get(name, ()))

    return page_text(
        field(Fields.TITLE), field(Fields.HEADINGS), field(Fields.DESCRIPTION), field(Fields.BODY)
    )


def _live_nums(searcher: tantivy.Searcher) -> list[int]:
    """The ``num`` of every document tantivy holds now."""
    total = int(searcher.num_docs)
    if not total:
        return []
    hits = searcher.search(tantivy.Query.all_query(), total, count=False).hits
    values = searcher.fast_field_values(Fields.NUM, [address for _, address in hits])
    return [int(v or 0) for v in values]


def update_vectors(
    crawl_dir: Path,
    handle: IndexHandle,
    make_embedder: Callable[[], Embedder] | None = None,
) -> VectorReport:
    """Embed the pages not embedded yet and zero the rows of pages gone; see the module
    docstring. The caller holds the index lock and has committed tantivy."""
    started = time.perf_counter()
    index_dir = crawl_dir / INDEX_DIR
    path = index_dir / VECTORS_FILE
    done = _rows_done(index_dir)
    handle.index.reload()
    searcher = handle.index.searcher()
    live = _live_nums(searcher)
    new = sorted(num for num in live if num >= done)
    rows = max(done, (max(live) + 1) if live else 0)
    embedder = (make_embedder or Embedder)() if new else None
    try:
        with path.open("r+b" if path.exists() and done else "w+b") as out:
            out.truncate(done * _ROW_BYTES)  # rows past the header's count are not trusted
            out.truncate(rows * _ROW_BYTES)  # zeros: pages not (yet) embedded
            cleared = _clear_gone(out, set(live), done)
            for start in range(0, len(new), _BATCH):
                batch = new[start : start + _BATCH]
                assert embedder is not None
                _write_rows(out, batch, _embedded(handle, searcher, batch, embedder))
            out.flush()
            os.fsync(out.fileno())
        _write_header(index_dir, rows)
    except OSError as exc:
        raise IndexingError(f"cannot write the page vectors {path}: {exc}") from exc
    return VectorReport(len(new), cleared, rows, time.perf_counter() - started)


def _embedded(
    handle: IndexHandle, searcher: tantivy.Searcher, nums: Sequence[int], embedder: Embedder
) -> npt.NDArray[np.float32]:
    """The vectors of the pages ``nums``, read back from tantivy's stored fields."""
    query = tantivy.Query.term_set_query(handle.schema, Fields.NUM, list(nums))
    texts: dict[int, str] = {}
    for _, address in searcher.search(query, len(nums), count=False).hits:
        doc = searcher.doc(address)
        texts[int(doc.get_first(Fields.NUM) or 0)] = _text_of(doc)
    return embedder.embed([texts.get(num, "") for num in nums])


def _write_rows(out: BinaryIO, nums: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
    """Rows at their numbers' offsets; runs of consecutive numbers in one write."""
    start = 0
    while start < len(nums):
        end = start + 1
        while end < len(nums) and nums[end] == nums[end - 1] + 1:
            end += 1
        out.seek(nums[start] * _ROW_BYTES)
        out.write(vectors[start:end].astype("<f4").tobytes())
        start = end


def _clear_gone(out: BinaryIO, live: set[int], done: int) -> int:
    """Zero the rows below ``done`` whose pages tantivy no longer holds; how many. (Rows of
    pages never indexed are zeros already and stay so.)"""
    zero = bytes(_ROW_BYTES)
    cleared = 0
    for num in range(done):
        if num in live:
            continue
        out.seek(num * _ROW_BYTES)
        if out.read(_ROW_BYTES).strip(b"\0"):
            out.seek(num * _ROW_BYTES)
            out.write(zero)
            cleared += 1
    return cleared


class Vectors:
    """The page vectors of one index, read for searching."""

    def __init__(self, matrix: npt.NDArray[np.float32]) -> None:
        self.matrix = matrix

    @classmethod
    def open(cls, crawl_dir: Path) -> Vectors | None:
        """The vectors of ``crawl_dir``'s index, or None when it has none (of this model)."""
        import numpy as np  # noqa: PLC0415 - a hybrid search's own

        index_dir = crawl_dir / INDEX_DIR
        rows = _rows_done(index_dir)
        path = index_dir / VECTORS_FILE
        if not rows or not path.is_file() or path.stat().st_size < rows * _ROW_BYTES:
            return None
        # Read whole, not memory-mapped: a product over a mapped file ran at half the speed
        # (21.6 against 12.2 ms at 100k rows on a loaded machine), and 100k rows are 100 MB.
        matrix = np.fromfile(path, dtype="<f4", count=rows * DIMENSIONS)
        return cls(matrix.reshape(rows, DIMENSIONS))

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])

    def nearest(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` rows most similar to the unit vector ``query`` (cosine, above 0), as
        (num, similarity), best first; ties by number."""
        import numpy as np  # noqa: PLC0415

        if k <= 0 or not self.rows:
            return []
        scores = self.matrix @ query.astype(np.float32)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        order = sorted(top.tolist(), key=lambda num: (-float(scores[num]), num))
        return [(num, float(scores[num])) for num in order if scores[num] > 0]

    def similarity(self, query: npt.NDArray[np.float32], nums: Sequence[int]) -> list[float]:
        """The cosine of ``query`` with the rows ``nums`` (0 for a number past the file)."""
        import numpy as np  # noqa: PLC0415

        inside = [num if 0 <= num < self.rows else -1 for num in nums]
        picked = np.asarray([n for n in inside if n >= 0], dtype=np.int64)
        values = iter((self.matrix[picked] @ query.astype(np.float32)).tolist())
        return [next(values) if n >= 0 else 0.0 for n in inside]
