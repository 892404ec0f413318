"""Spark engine, driver of ``gossamer index DIR --engine spark [--shards N]``: the reading and
extraction of the crawled pages run as Spark tasks; the index is written as the local
engine writes it.

Data flow: crawl.db (the pages to index, chosen by the driver's document store) -> Spark
tasks (``index.indexer.read_pages``: WARC record, decoding, HTML/PDF text, language,
near-duplicate keys) -> the driver (``index.indexer.build_index`` with ``extracted``): the
document store, near-duplicate groups, anchor text over every page, images, relinking and
the tantivy documents, routed to N shards by ``index.shards``. The expensive part is
spread; what must be decided once for the whole crawl (a page's ``num``, its duplicate
group, the anchors it gets) stays in one place, so a Spark-built index holds the same
documents as a local one.

The pending pages go to the tasks in chunks of ``CHUNK`` (one task each), all run at once
(as many at a time as the cluster has cores); their results stay with the executors (memory,
then their disks) and come to the driver one task at a time (``toLocalIterator``), so the
driver holds one chunk's pages while it writes, not the whole crawl's. (``toLocalIterator``
alone would run the tasks one or two at a time, as the driver asks for them.) On a cluster
the executors open the WARC files by the folder's path: it must be on a file system every
node mounts at the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gossamer.index.indexer import ExtractedPage, Extractor, IndexReport, build_index, read_pages
from gossamer.store.records import MAX_DECODED

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from gossamer.store.docstore import PendingPage

__all__ = ["CHUNK", "index_on_spark", "spark_extractor"]

CHUNK = 250  # pages per Spark task, as per local worker task


def _reader(
    folder: str, max_decoded: int
) -> Callable[[Sequence[PendingPage]], list[ExtractedPage]]:
    """The task: read and extract one chunk of pages. Spark pickles the closure; the code it
    calls (``read_pages``) goes by name, imported from Gossamer on the executor."""

    def read(pages: Sequence[PendingPage]) -> list[ExtractedPage]:
        return read_pages(Path(folder), pages, max_decoded)

    return read


def spark_extractor(
    spark: SparkSession, crawl_dir: Path, *, max_decoded: int = MAX_DECODED
) -> Extractor:
    """``build_index``'s ``extracted``: the pending pages read by Spark tasks."""
    folder = str(crawl_dir.resolve())

    def extracted(pending: Sequence[PendingPage]) -> Iterator[list[ExtractedPage]]:
        chunks = [list(pending[i : i + CHUNK]) for i in range(0, len(pending), CHUNK)]
        if not chunks:
            return
        from pyspark import StorageLevel  # noqa: PLC0415 - the spark extra

        tasks = spark.sparkContext.parallelize(chunks, len(chunks))
        results = tasks.map(_reader(folder, max_decoded)).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            results.count()  # every task at once, as many as the cluster has cores
            yield from results.toLocalIterator()  # then fetched one task's pages at a time
        finally:
            results.unpersist()

    return extracted


def index_on_spark(
    spark: SparkSession,
    crawl_dir: Path,
    *,
    shards: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    embeddings: bool = False,
) -> IndexReport:
    """Index ``crawl_dir`` with the reading and extraction done by ``spark``."""
    return build_index(
        crawl_dir,
        shards=shards,
        progress=progress,
        embeddings=embeddings,
        extracted=spark_extractor(spark, crawl_dir),
    )
