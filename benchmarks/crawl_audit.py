"""Crawl the local test web with the real CLI and judge the result from the server side.

The test web runs in this process (its own thread and event loop); the crawler runs as a
separate ``gossamer crawl`` process, as a user would run it. Afterwards the script checks:
the server-side audit (robots.txt, one request in flight per host, Crawl-delay, repeats,
coverage), that the reports, the metadata database and the WARC files agree, and that every
WARC file passes ``warcio check``. Exit status 0 only if every check holds.

    python benchmarks/crawl_audit.py --hosts 210 --pages 100 --out /tmp/audit

A little server latency (default 3 ms) keeps each request in flight long enough for the audit
to see two overlapping requests to one host, if the crawler ever sent them.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

BIN = Path(sys.executable).parent


def warc_responses(folder: Path) -> set[str]:
    urls: set[str] = set()
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type in ("response", "revisit"):  # a revisit stands for one
                    urls.add(record.rec_headers.get_header("WARC-Target-URI"))
    return urls


def consistency(out: Path) -> dict[str, object]:
    db = sqlite3.connect(out / "crawl.db")
    archived = {url for (url,) in db.execute("SELECT url FROM pages WHERE warc_file IS NOT NULL")}
    rows = db.execute("SELECT count(*) FROM pages").fetchone()[0]
    ok_pages = db.execute(
        "SELECT count(*) FROM pages WHERE status BETWEEN 200 AND 299 AND error IS NULL"
        " AND (content_type LIKE 'text/html%' OR content_type LIKE 'application/pdf%')"
    ).fetchone()[0]
    db.close()
    in_warc = warc_responses(out / "warc")
    crawled = (out / "reports" / "crawled.txt").read_text(encoding="utf-8").splitlines()
    stats = json.loads((out / "reports" / "stats.json").read_text(encoding="utf-8"))
    checks = [
        subprocess.run([BIN / "warcio", "check", str(p)], capture_output=True, check=False)
        for p in sorted((out / "warc").glob("*.warc.gz"))
    ]
    return {
        "db_rows": rows,
        "db_pages_2xx": ok_pages,
        "stats_pages": stats["pages"],
        "report_crawled_lines": len(crawled),
        "warc_responses": len(in_warc),
        "db_archived_equals_warc": archived == in_warc,
        "warc_files": len(checks),
        "warc_check_failures": sum(1 for c in checks if c.returncode != 0),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=210)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.003, help="server delay per response")
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-audit"))
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    web = build_web(
        WebSpec(seed=args.seed, hosts=args.hosts, pages_per_host=args.pages, latency=args.latency)
    )
    with ThreadedTestWeb(web) as site:
        seeds = args.out / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
        config = args.out / "audit.toml"
        config.write_text(
            "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.5\nrobots_retries = 1\n"
            "[scope]\nmax_depth = 25\n",
            encoding="utf-8",
        )
        started = time.perf_counter()
        crawl = subprocess.run(
            [
                str(BIN / "gossamer"),
                "crawl",
                str(seeds),
                "--out",
                str(args.out / "crawl"),
                "--resolve",
                "*.web.test:127.0.0.1",
                "--config",
                str(config),
                "--concurrency",
                str(args.concurrency),
                "--workers",
                str(args.workers),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        report = site.report()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "hosts": args.hosts,
        "expected_pages": len(site.expected()),
        "crawl_exit": crawl.returncode,
        "wall_seconds": round(wall, 2),
        "crawler_cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "crawler_peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "server_requests": report.requests,
        "concurrent_violations": report.concurrent_violations,
        "robots_violations": report.robots_violations,
        "crawl_delay_violations": report.crawl_delay_violations,
        "repeated_fetches": report.repeated_fetches,
        "missing": len(report.missing),
        **consistency(args.out / "crawl"),
    }
    print(crawl.stdout.strip().splitlines()[-2] if crawl.stdout.strip() else crawl.stderr[-2000:])
    print(json.dumps(result, indent=2))
    agree = (
        result["db_pages_2xx"] == result["stats_pages"]
        and result["report_crawled_lines"] == result["db_rows"]
        and result["db_archived_equals_warc"]
        and result["warc_check_failures"] == 0
    )
    return 0 if crawl.returncode == 0 and report.ok() and agree else 1


if __name__ == "__main__":
    sys.exit(main())
