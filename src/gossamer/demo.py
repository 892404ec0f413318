"""``gossamer demo``: serve the bundled test web on loopback, crawl it, report, search it.

This is the main job end to end on a machine with no internet: the same crawler, with the test
web's host names mapped to 127.0.0.1 through ``--resolve``, then the test web's own audit of
what the crawler did to it (politeness, robots.txt, repeats, coverage).

The demo never deletes what it did not write: it marks its output folder with a
``.gossamer-demo`` file, clears only its own outputs there on the next run, and refuses a
non-empty folder without the mark.

The demo is test-web tooling: the CLI imports this module only when ``gossamer demo`` runs, so
the crawler's import graph never holds the test web. It runs every stage, so it needs the
search and rank extras; it checks for them before it crawls, and imports the search side
(tantivy) only then.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from gossamer import extras
from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig
from gossamer.engine.workers import crawl_here
from gossamer.errors import StoreError
from gossamer.search.output import format_text
from gossamer.seeds import parse_seeds
from gossamer.testweb import AuditReport, ThreadedTestWeb
from gossamer.testweb.command import checked_web, web_spec

DEMO_RESOLVE = "*.web.test:127.0.0.1"
# Written in the demo's output folder: a later demo may clear what this one wrote there.
MARKER = ".gossamer-demo"
_MARKER_TEXT = "Written by 'gossamer demo'; the next demo run clears its own files here.\n"
# Everything a demo writes in its folder (crawl, index, rank), and nothing else is removed.
_OUTPUTS = (
    "warc", "reports", "index", "rank", "index.cdxj", "crawl.db", "crawl.db-wal",
    "crawl.db-shm", "crawl.json", "seeds.txt", ".gossamer.lock",
)  # fmt: skip


def demo_config(seeds: Path, out: Path) -> CrawlConfig:
    """Politeness tuned to a local web: no base delay, but robots.txt and Crawl-delay obeyed."""
    return CrawlConfig(
        seeds=seeds,
        out=out,
        concurrency=32,
        resolve=(DEMO_RESOLVE,),
        progress=True,
        report_interval=5.0,
        politeness=PolitenessConfig(delay=0.0, robots_retry_delay=0.5, robots_retries=1),
        scope=ScopeConfig(max_depth=25),
    )


def _own_outputs(out: Path) -> list[Path]:
    """What an earlier demo wrote in ``out``, to clear before this one writes it again."""
    return [out / name for name in _OUTPUTS if (out / name).exists() or (out / name).is_symlink()]


def prepare_demo_folder(out: Path) -> None:
    """Make ``out`` ready for a demo without deleting anything the demo did not write.

    A missing or empty folder is used as it is; a folder an earlier demo wrote (it holds the
    marker file) has that demo's outputs removed; anything else is refused.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise StoreError(f"demo output {out} exists and is not a folder; choose another --out")
    try:
        if out.is_dir() and any(out.iterdir()):
            if not (out / MARKER).is_file():
                raise StoreError(
                    f"demo output folder {out} is not empty and was not written by 'gossamer"
                    " demo' (it has no .gossamer-demo file); choose another --out or empty it"
                )
            for path in _own_outputs(out):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        out.mkdir(parents=True, exist_ok=True)
        (out / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"cannot prepare demo output folder {out}: {exc.strerror or exc}") from exc


def run_demo(out: Path, *, hosts: int, pages: int) -> int:
    """Serve a test web of ``hosts`` x ``pages``, crawl, index, rank and search it into ``out``;
    the exit status is 1 when the server-side audit found a fault, else 0."""
    extras.require("gossamer demo", "search", "rank")
    # The search side (tantivy, scipy, pyarrow), imported once the check above has passed.
    from gossamer.index import build_index  # noqa: PLC0415
    from gossamer.rank import rank_crawl  # noqa: PLC0415
    from gossamer.search.docranks import save_doc_ranks  # noqa: PLC0415
    from gossamer.search.engine import SearchEngine  # noqa: PLC0415

    web = checked_web(web_spec(hosts=hosts, pages=pages))
    prepare_demo_folder(out)
    with ThreadedTestWeb(web) as server:
        seeds_file = out / "seeds.txt"
        seeds_file.write_text("\n".join(web.seeds(server.port)) + "\n", encoding="utf-8")
        print(f"test web: {hosts} hosts on 127.0.0.1:{server.port}; seeds in {seeds_file}")
        config = demo_config(seeds_file, out)
        seeds = parse_seeds(seeds_file.read_text(encoding="utf-8"))
        reason = crawl_here(config, seeds)  # one process per usable core, as `gossamer crawl`
        report = server.audit.report(web.expected(server.port))
    print((out / "reports" / "stats.txt").read_text(encoding="utf-8").rstrip())
    print(f"stopped: {reason}")
    _print_audit(report)
    print(build_index(out, workers=1).summary())
    print(rank_crawl(out).summary())
    save_doc_ranks(out)  # what `gossamer rank` does after ranking
    query = "forest river"
    with SearchEngine(out) as engine:
        found = engine.search(query)
    print(f"search {query!r} (top 5 of page 1):")
    print(format_text(dataclasses.replace(found, hits=found.hits[:5]), color=False))
    print(f"output: {out}/ (warc/, index.cdxj, crawl.db, reports/, index/, rank/)")
    print(f"browse it: .venv/bin/gossamer serve {out}, then open http://127.0.0.1:8000/")
    return 0 if report.ok() else 1


def _print_audit(report: AuditReport) -> None:
    print("server-side audit:")
    print(f"  requests seen by the server     {report.requests}")
    print(f"  two requests in flight to a host {report.concurrent_violations}")
    print(f"  robots.txt violations           {report.robots_violations}")
    print(f"  crawl-delay violations          {report.crawl_delay_violations}")
    print(f"  repeated fetches                {report.repeated_fetches}")
    print(f"  expected pages not fetched      {len(report.missing)}")
