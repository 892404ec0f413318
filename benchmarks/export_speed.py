"""Export throughput and peak memory at two crawl sizes: is memory flat as the crawl grows?

Role: measurement only (issue 33). For each page budget, crawls the test web (pages filled to
a real page's size, ``WebSpec(page_bytes=(5_000, 40_000))``, no special or Crawl-delay hosts,
served in this process) with ``gossamer crawl --max-pages N --delay 0 --workers 1``, then
runs ``gossamer export DIR --format F --out FILE`` for each format and measures it from the
outside: wall time, pages per second, and memory sampled from /proc every 0.1 s over the
export's whole process tree (``compare_scrapy.TreeSampler``: the largest single process's
high-water mark and the largest sum of RSS over the tree, pool workers included). Last it
checks the Parquet file with pyarrow (row count) and the JSON Lines file (line count)::

    nice .venv/bin/python benchmarks/export_speed.py --pages 5000 20000 --jobs 2

The crawl folders are kept under ``--work`` (default a temporary folder), so ``--reuse``
exports them again without crawling. ``--hooks`` measures instead what plugins cost the
crawl's loop per page: two ``[[extract]]`` rules (a CSS selector and a regex) and the example
plugin (examples/plugins/page_facts.py) over the first 1,000 HTML pages of the smallest
crawl, in CPU time, beside the crawl's own link parse of the same pages::

    nice .venv/bin/python benchmarks/export_speed.py --pages 5000 --work DIR --reuse --hooks
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from compare_scrapy import TreeSampler

from gossamer.config import ExtractRule
from gossamer.index.archive import WarcReader
from gossamer.parse import decode_html, parse_html
from gossamer.plugins.api import Page
from gossamer.plugins.hooks import CrawlHooks, ErrorLog, ItemSink
from gossamer.plugins.loading import load_plugin
from gossamer.plugins.rules import RulesPlugin
from gossamer.stats import CrawlStats
from gossamer.store.export_rows import ExportRows, RowFilter
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

BIN = Path(sys.executable).parent
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "page_facts.py"


def crawl(site: ThreadedTestWeb, folder: Path, pages: int) -> None:
    seeds = folder.with_suffix(".seeds")
    seeds.write_text("".join(f"{url}\n" for url in site.seeds()))
    argv = [
        str(BIN / "gossamer"), "crawl", str(seeds), "--out", str(folder),
        "--resolve", "*.web.test:127.0.0.1", "--delay", "0", "--no-progress",
        "--workers", "1", "--max-pages", str(pages),
    ]  # fmt: skip
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def export(folder: Path, format_name: str, jobs: int) -> dict[str, float | str]:
    out = folder.parent / f"{folder.name}.{format_name}"
    argv = [
        str(BIN / "gossamer"), "export", str(folder), "--format", format_name,
        "--out", str(out), "--jobs", str(jobs),
    ]  # fmt: skip
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = TreeSampler(child.pid)
    sampler.start()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    sampler.halt.set()
    sampler.join()
    assert child.stderr is not None
    said = child.stderr.read().decode()
    if status != 0:
        raise SystemExit(f"export failed ({status}): {said}")
    pages = int(json.loads((folder / "reports" / "stats.json").read_text())["pages"])
    if format_name == "parquet":
        records = pq.ParquetFile(out).metadata.num_rows
    else:
        with out.open("rb") as stream:
            records = sum(1 for _ in stream)
    tree = sampler.usage()
    return {
        "format": format_name,
        "stored_pages": pages,
        "records": records,
        "bytes": out.stat().st_size,
        "wall_s": round(wall, 2),
        "records_per_s": round(records / wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),  # the parent; workers add theirs
        "largest_process_mb": tree.largest_process_mb,
        "peak_rss_sum_mb": tree.peak_rss_mb,
        "processes": tree.processes,
    }


def hook_cost(folder: Path, count: int = 1_000) -> None:
    """CPU per page of the hooks, and of the crawl's own parse, over ``count`` HTML pages."""
    pages: list[Page] = []
    with ExportRows(folder / "crawl.db") as db, WarcReader(folder / "warc") as reader:
        for row in db.rows(RowFilter(statuses=((200, 299),))):
            if not (row.content_type or "").startswith("text/html") or row.warc_file is None:
                continue
            response = reader.read(row.warc_file, row.warc_offset or 0, row.warc_length or 0)
            body = response.content[: 4 * 1024 * 1024]
            links = tuple(link.url for link in parse_html(body, row.url, row.content_type).links)
            html, _ = decode_html(body, row.content_type)
            pages.append(Page(row.url, row.status, row.content_type, html, links, 0))
            if len(pages) == count:
                break
    rules = RulesPlugin(
        [ExtractRule("h", css="h1"), ExtractRule("t", regex="<title>(.*?)</title>")]
    )
    hooks = CrawlHooks(
        [rules, load_plugin(str(EXAMPLE))],
        items=ItemSink(folder.parent / "hook-items.jsonl"),
        errors=ErrorLog(folder.parent / "hook-errors.tsv"),
        stats=CrawlStats(),
    )
    started = time.process_time()
    for page in pages:
        hooks.page(page, "")
    hooked = time.process_time() - started
    started = time.process_time()
    for page in pages:
        parse_html(page.html.encode(), page.url, page.content_type)
    parsed = time.process_time() - started
    size = sum(len(page.html) for page in pages) / len(pages) / 1024
    print(
        f"{len(pages)} pages of {size:.1f} KB: hooks {1000 * hooked / len(pages):.3f} ms/page,"
        f" the crawl's own parse {1000 * parsed / len(pages):.3f} ms/page"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[5_000, 20_000])
    parser.add_argument("--formats", nargs="+", default=["jsonl", "parquet"])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="export the crawls of --work again")
    parser.add_argument("--hooks", action="store_true", help="measure the plugins' cost instead")
    args = parser.parse_args()
    if args.hooks:
        hook_cost((args.work or Path()) / f"crawl-{min(args.pages)}")
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="gossamer-export-"))
    work.mkdir(parents=True, exist_ok=True)
    largest = max(args.pages)
    spec = WebSpec(
        seed=1,
        hosts=100,
        pages_per_host=largest // 80,  # some pages are 404s, redirects or PDFs
        special_hosts=False,
        crawl_delay_hosts=False,
        page_bytes=(5_000, 40_000),
    )
    results = []
    with ThreadedTestWeb(build_web(spec)) as site:
        for pages in args.pages:
            folder = work / f"crawl-{pages}"
            if not args.reuse:
                started = time.perf_counter()
                crawl(site, folder, pages)
                print(f"crawled {pages} pages in {time.perf_counter() - started:.0f} s", flush=True)
            for format_name in args.formats:
                result = {"budget": pages, **export(folder, format_name, args.jobs)}
                print(json.dumps(result), flush=True)
                results.append(result)
    print("| pages | format | records | wall s | records/s | largest process MB |"
          " RSS sum MB | file MB |")  # fmt: skip
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(
            f"| {r['stored_pages']} | {r['format']} | {r['records']} | {r['wall_s']} |"
            f" {r['records_per_s']} | {r['largest_process_mb']} | {r['peak_rss_sum_mb']} |"
            f" {int(r['bytes']) / 1e6:.1f} |"
        )


if __name__ == "__main__":
    main()
