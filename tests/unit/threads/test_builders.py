"""Seed 000's consumers: builders drain the buffers into the tree, the statistics thread writes
its lines on an Event's timeout, the cleaner files the rest, and a builder's fault never
leaves a crawler waiting."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gossamer.errors import StoreError
from gossamer.threads.buffers import BoundedBuffer
from gossamer.threads.builders import (
    HOURLY_FILE,
    RESULT_FILE,
    STATISTICS_FILE,
    BuilderPipeline,
    Item,
    StatisticsThread,
)
from gossamer.threads.urltree import IndexedUrlTree, audit_tree

LIMIT = 30.0  # seconds any wait here may take; only a failing test waits this long


def pipeline_threads() -> list[str]:
    names = [thread.name for thread in threading.enumerate()]
    return [name for name in names if name.startswith(("gossamer-builder-", "gossamer-stat"))]


def crawl_into(pipeline: BuilderPipeline, crawlers: int, pages: int) -> None:
    """``crawlers`` threads, each putting ``pages`` items; overlapping URLs across threads."""

    def crawler(number: int) -> None:
        buffer = pipeline.buffer_for(number)
        for n in range(pages):
            url = f"http://h{n % 4}.test/page/{n}"  # every crawler finds the same pages
            buffer.put((url, f"http://h0.test/from/{number}", f"200 text/html w:{n}"))

    threads = [threading.Thread(target=crawler, args=(n,)) for n in range(crawlers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LIMIT)
        assert not thread.is_alive()


def test_buffer_for_gives_two_crawlers_each_buffer(tmp_path: Path) -> None:
    pipeline = BuilderPipeline(IndexedUrlTree(tmp_path / "t"), buffers=3, stats_dir=tmp_path)
    chosen = [pipeline.buffers.index(pipeline.buffer_for(n)) for n in range(8)]
    assert chosen == [0, 0, 1, 1, 2, 2, 0, 0]


def test_the_pipeline_files_every_page_once(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path / "tree")
    stats = tmp_path / "stats"
    with BuilderPipeline(tree, buffers=3, size=4, stats_dir=stats) as pipeline:
        crawl_into(pipeline, crawlers=6, pages=30)
    report = pipeline.close()  # already closed on leaving the block: the same report
    assert (report.url_files, report.data_lines, report.duplicate_files) == (30, 30, 0)
    assert report.filed == 30
    assert report.added == (60, 60, 60)
    assert report.removed == report.added
    # A buffer of 4 drained in full batches leaves 60 % 4 == 0 items for the cleaner.
    assert report.filed_by_cleaner == 0
    assert sum(builder.filed for builder in pipeline.builders) == 30
    assert (stats / STATISTICS_FILE).read_text().splitlines() == report.lines()
    assert "files written more than once: 0" in report.lines()
    assert len((stats / RESULT_FILE).read_text().splitlines()) == 30
    (final,) = (stats / HOURLY_FILE).read_text().splitlines()  # the hour never came
    assert final.startswith("kind=final ") and " filed=30 " in final
    assert final.endswith(" added=60,60,60 removed=60,60,60")
    assert pipeline_threads() == []


def test_the_cleaner_files_what_the_builders_left(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path / "tree")
    pipeline = BuilderPipeline(tree, buffers=2, size=10, stats_dir=tmp_path)
    pipeline.start()
    crawl_into(pipeline, crawlers=4, pages=7)  # 14 items per buffer: one batch, 4 left over
    report = pipeline.close()
    assert report.added == (14, 14)
    assert report.removed == (14, 14)
    assert report.url_files == report.data_lines == 7
    assert audit_tree(tree.root).duplicate_files == 0
    assert report.filed == 7
    assert 0 <= report.filed_by_cleaner <= 7


def test_the_cleaner_alone_files_everything_when_no_buffer_fills(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path / "tree")
    pipeline = BuilderPipeline(tree, buffers=1, size=1000, stats_dir=tmp_path)
    pipeline.start()
    crawl_into(pipeline, crawlers=2, pages=5)
    report = pipeline.close()
    assert (report.filed, report.filed_by_cleaner, report.url_files) == (5, 5, 5)
    assert all(builder.filed == 0 for builder in pipeline.builders)


def test_the_statistics_thread_writes_a_line_each_period(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path / "tree")
    buffers = [BoundedBuffer[Item](5), BoundedBuffer[Item](5)]
    statistics = StatisticsThread(tree, buffers, tmp_path, period=0.01)
    statistics.start()
    assert statistics.await_lines(3, LIMIT)
    tree.add("http://a.test/", "")
    buffers[1].put(("http://a.test/", "", ""))
    statistics.stop()
    lines = statistics.path.read_text().splitlines()
    assert len(lines) >= 4
    assert all(line.startswith("kind=period ") for line in lines[:-1])
    assert lines[-1].startswith("kind=final ")
    assert " filed=1 " in lines[-1] and lines[-1].endswith(" added=0,1 removed=0,0")
    assert sum(int(line.split("filed_in_period=")[1].split()[0]) for line in lines) == 1


def test_a_tick_reports_the_period_and_the_totals(tmp_path: Path) -> None:
    now = [100.0]
    tree = IndexedUrlTree(tmp_path / "tree")
    buffer = BoundedBuffer[Item](5)
    statistics = StatisticsThread(tree, [buffer], tmp_path, clock=lambda: now[0])
    tree.add("http://a.test/1", "")
    tree.add("http://a.test/2", "")
    now[0] = 3700.0
    assert statistics.tick() == (
        "kind=period elapsed=3600.0 filed_in_period=2 filed=2 added=0 removed=0\n"
    )
    tree.add("http://a.test/3", "")
    now[0] = 7300.0
    assert statistics.tick() == (
        "kind=period elapsed=7200.0 filed_in_period=1 filed=3 added=0 removed=0\n"
    )
    with pytest.raises(ValueError, match="positive"):
        StatisticsThread(tree, [buffer], tmp_path, period=0)


def test_a_failing_builder_releases_its_crawlers_and_close_reports_it(tmp_path: Path) -> None:
    def full_disk(_url: str) -> None:
        raise OSError(28, "No space left on device")

    tree = IndexedUrlTree(tmp_path / "tree", hooks={"created": full_disk})
    pipeline = BuilderPipeline(tree, buffers=1, size=2, stats_dir=tmp_path / "stats")
    pipeline.start()
    # Without the failing builder closing its buffer, the third put would wait for ever.
    crawl_into(pipeline, crawlers=1, pages=5)
    with pytest.raises(StoreError, match=r"cannot file into the URL tree .*No space left"):
        pipeline.close()
    assert pipeline.buffers[0].counts().added == 5
    assert (tmp_path / "stats" / HOURLY_FILE).read_text().startswith("kind=final ")
    assert pipeline_threads() == []


def test_a_url_the_tree_cannot_file_is_skipped_and_the_builder_goes_on(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path / "tree")
    pipeline = BuilderPipeline(tree, buffers=1, size=2, stats_dir=tmp_path)
    pipeline.start()
    buffer = pipeline.buffer_for(0)
    for url in ("relative/url", "http://a.test/1", "", "http://a.test/2"):
        buffer.put((url, "", ""))
    report = pipeline.close()
    assert (report.filed, report.url_files) == (2, 2)
    assert report.removed == (4,)


def test_a_builder_fault_is_raised_after_the_cleaner_filed_everything(tmp_path: Path) -> None:
    faults = [OSError(5, "Input/output error")]

    def fails_once(_url: str) -> None:
        if faults:
            raise faults.pop()

    tree = IndexedUrlTree(tmp_path / "tree", hooks={"created": fails_once})
    pipeline = BuilderPipeline(tree, buffers=1, size=2, stats_dir=tmp_path / "stats")
    pipeline.start()
    crawl_into(pipeline, crawlers=1, pages=5)
    with pytest.raises(StoreError, match="an index builder could not write the tree"):
        pipeline.close()
    # The item that failed went back into the buffer, and the cleaner filed it and the rest.
    audit = audit_tree(tree.root)
    assert (audit.url_files, audit.data_lines) == (5, 5)
    assert pipeline.close().url_files == 5  # reported once; the figures stay readable
