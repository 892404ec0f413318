"""Seed 000's consumers: index-builder threads, the statistics thread and the cleaner.

Data flow: crawler threads -> ``buffers`` -> **builders** -> ``urltree`` (+ the statistics
files). :class:`BuilderPipeline` is what the threaded engine holds: it makes K buffers of size
N, one :class:`IndexBuilder` thread per buffer, and a :class:`StatisticsThread`. Crawler
thread ``i`` puts ``(url, source, data)`` into ``buffer_for(i)``: crawlers 0 and 1 share
buffer 0, 2 and 3 buffer 1, and so on (two crawlers per buffer, as in the seed; with more
than 2K crawlers the numbering wraps round).

Shutdown, once the crawler threads have joined (``close``): the buffers are closed, which
lets each builder finish the batch it is filing and then stop; the builders are joined; the
:class:`Cleaner` files what the buffers still hold (fewer than N items each, or items put
after closing) and writes ``statistics.txt`` and ``res.txt`` (every data line of the tree,
the seed's result file); last, the statistics thread writes its final line and is joined.
The cleaner runs on the caller's thread: by then nothing runs beside it, so a thread of its
own would add nothing. If a builder fails (a full disk), it closes its buffer so that no
crawler waits for it, and ``close`` raises the fault as ``StoreError`` after cleaning up.

The statistics thread waits on an ``Event`` with the period as timeout (an hour by default,
the seed's hourly figures), so stopping it is immediate. Each line of
``hourly_statistics.txt`` reads ``kind=period elapsed=3600.0 filed_in_period=120
filed=480 added=250,240 removed=250,240``: URLs filed in the period and in all, then items
added to and removed from each buffer; the line written at stop has ``kind=final``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.threads.buffers import BoundedBuffer
from gossamer.threads.urltree import IndexedUrlTree, audit_tree, export_lines

__all__ = [
    "HOURLY_FILE",
    "RESULT_FILE",
    "STATISTICS_FILE",
    "BuilderPipeline",
    "Cleaner",
    "IndexBuilder",
    "Item",
    "PipelineReport",
    "StatisticsThread",
]

log = logging.getLogger(__name__)

Item = tuple[str, str, str]  # (url, source, data), one per crawled page
HOURLY_FILE = "hourly_statistics.txt"
STATISTICS_FILE = "statistics.txt"
RESULT_FILE = "res.txt"
HOUR = 3600.0


class IndexBuilder:
    """One thread that drains one buffer into the tree, a full buffer at a time."""

    def __init__(self, number: int, buffer: BoundedBuffer[Item], tree: IndexedUrlTree) -> None:
        self.buffer = buffer
        self.tree = tree
        self.filed = 0  # written by the builder thread; read it after join()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"gossamer-builder-{number}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        if self._thread.ident is not None:  # started
            self._thread.join()

    def _run(self) -> None:
        try:
            while self.buffer.drain(self._file):
                pass
        except BaseException as exc:  # kept for close(); crawlers must not wait for us
            self.failure = exc
            self.buffer.close()

    def _file(self, item: Item) -> None:
        if _filed(self.tree, item):
            self.filed += 1


def _filed(tree: IndexedUrlTree, item: Item) -> bool:
    """``tree.add(*item)``; a URL the tree cannot file (not absolute) is logged and skipped."""
    try:
        return tree.add(*item)
    except ValueError as exc:
        log.warning("not filed in the URL tree: %r (%s)", item[0], exc)
        return False


def _figures(buffers: Sequence[BoundedBuffer[Item]]) -> tuple[str, str]:
    counts = [buffer.counts() for buffer in buffers]
    return (
        ",".join(str(count.added) for count in counts),
        ",".join(str(count.removed) for count in counts),
    )


class StatisticsThread:
    """Appends a line of figures to ``folder/hourly_statistics.txt`` every ``period`` s."""

    def __init__(
        self,
        tree: IndexedUrlTree,
        buffers: Sequence[BoundedBuffer[Item]],
        folder: Path,
        *,
        period: float = HOUR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if period <= 0:
            raise ValueError("the statistics period must be positive")
        self.path = folder / HOURLY_FILE
        self._tree = tree
        self._buffers = tuple(buffers)
        self._period = period
        self._clock = clock
        self._started = clock()
        self._filed_before = 0
        self._lines = 0
        self._written = threading.Condition()  # over _lines and the file
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gossamer-statistics", daemon=True)

    def start(self) -> None:
        self._started = self._clock()
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread at once, join it and write the final line."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.tick("final")

    def tick(self, kind: str = "period") -> str:
        """Write one line of figures now (the thread calls this every period); the line."""
        with self._written:
            filed = self._tree.filed
            added, removed = _figures(self._buffers)
            line = (
                f"kind={kind} elapsed={self._clock() - self._started:.1f}"
                f" filed_in_period={filed - self._filed_before} filed={filed}"
                f" added={added} removed={removed}\n"
            )
            self._filed_before = filed
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
            self._lines += 1
            self._written.notify_all()
        return line

    def await_lines(self, count: int, timeout: float | None = None) -> bool:
        """Wait until ``count`` lines have been written; False on timeout."""
        with self._written:
            return self._written.wait_for(lambda: self._lines >= count, timeout)

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            self.tick()


@dataclass(frozen=True, slots=True)
class PipelineReport:
    """The figures of a finished pipeline, as written to ``statistics.txt``."""

    filed: int
    filed_by_cleaner: int
    added: tuple[int, ...]
    removed: tuple[int, ...]
    url_files: int
    data_lines: int
    duplicate_files: int

    def lines(self) -> list[str]:
        return [
            f"urls filed: {self.filed}",
            f"filed by the cleaner: {self.filed_by_cleaner}",
            f"buffer items added: {', '.join(map(str, self.added))}",
            f"buffer items removed: {', '.join(map(str, self.removed))}",
            f"url files in the tree: {self.url_files}",
            f"data lines in the tree: {self.data_lines}",
            f"files written more than once: {self.duplicate_files}",
        ]


class Cleaner:
    """Runs once after the builders have stopped: files what the buffers still hold, then
    writes ``statistics.txt`` and ``res.txt`` into ``folder``."""

    def __init__(
        self, tree: IndexedUrlTree, buffers: Sequence[BoundedBuffer[Item]], folder: Path
    ) -> None:
        self._tree = tree
        self._buffers = tuple(buffers)
        self._folder = folder

    def run(self) -> PipelineReport:
        filed = 0

        def file(item: Item) -> None:
            nonlocal filed
            if _filed(self._tree, item):
                filed += 1

        for buffer in self._buffers:
            buffer.flush(file)
        audit = audit_tree(self._tree.root)
        counts = [buffer.counts() for buffer in self._buffers]
        report = PipelineReport(
            filed=self._tree.filed,
            filed_by_cleaner=filed,
            added=tuple(count.added for count in counts),
            removed=tuple(count.removed for count in counts),
            url_files=audit.url_files,
            data_lines=audit.data_lines,
            duplicate_files=audit.duplicate_files,
        )
        self._folder.mkdir(parents=True, exist_ok=True)
        (self._folder / STATISTICS_FILE).write_text(
            "".join(f"{line}\n" for line in report.lines()), encoding="utf-8"
        )
        export_lines(self._tree.root, self._folder / RESULT_FILE)
        return report


class BuilderPipeline:
    """K buffers of size N, their builders, the statistics thread and the cleaner."""

    def __init__(
        self,
        tree: IndexedUrlTree,
        *,
        buffers: int = 1,
        size: int = 1000,
        stats_dir: Path,
        stats_period: float = HOUR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if buffers < 1:
            raise ValueError("the pipeline needs at least one buffer")
        self.tree = tree
        self.buffers = tuple(BoundedBuffer[Item](size) for _ in range(buffers))
        self.builders = tuple(
            IndexBuilder(number, buffer, tree) for number, buffer in enumerate(self.buffers)
        )
        try:
            stats_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {stats_dir}: {exc.strerror or exc}") from exc
        self.statistics = StatisticsThread(
            tree, self.buffers, stats_dir, period=stats_period, clock=clock
        )
        self._cleaner = Cleaner(tree, self.buffers, stats_dir)
        self._report: PipelineReport | None = None

    def buffer_for(self, crawler_index: int) -> BoundedBuffer[Item]:
        """The buffer crawler thread ``crawler_index`` (from 0) puts its pages into."""
        return self.buffers[(crawler_index // 2) % len(self.buffers)]

    def start(self) -> None:
        for builder in self.builders:
            builder.start()
        self.statistics.start()

    def close(self) -> PipelineReport:
        """Call once the crawler threads have joined; see the module docstring. Idempotent."""
        if self._report is not None:
            return self._report
        for buffer in self.buffers:
            buffer.close()
        for builder in self.builders:
            builder.join()
        try:
            self._report = self._cleaner.run()
        except OSError as exc:
            raise StoreError(f"cannot file into the URL tree {self.tree.root}: {exc}") from exc
        finally:
            self.statistics.stop()
        failure = next((b.failure for b in self.builders if b.failure is not None), None)
        if isinstance(failure, OSError):
            raise StoreError(f"an index builder could not write the tree: {failure}") from failure
        if failure is not None:
            raise failure  # a bug, not a fault of the disk: as it was raised
        return self._report

    def __enter__(self) -> BuilderPipeline:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
