"""Command-line entry point: parses flags and wires packages together, one call per command.

Every fault Gossamer knows about ends here as one ``gossamer: error: ...`` line on stderr and a
non-zero exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from gossamer import __version__
from gossamer.config import CrawlConfig, apply_overrides, load_config, parse_duration
from gossamer.demo import run_demo
from gossamer.engine import Crawler
from gossamer.engine.recover import SAVED_CONFIG, load_saved, recover, save_config
from gossamer.engine.workers import run_workers
from gossamer.errors import ConfigError, GossamerError, StoreError
from gossamer.search.commands import add_commands, run_command
from gossamer.seeds import Seed, SeedList, read_seeds
from gossamer.testweb import WebSpec, serve_forever

log = logging.getLogger("gossamer")

EXIT_ERROR = 2


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        return parse_duration(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _crawl_parser(sub: Any) -> None:
    p = sub.add_parser("crawl", help="crawl politely from a seeds file")
    p.add_argument("seeds", type=Path, nargs="?", help="file with one URL or bare domain per line")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="output folder (an existing crawl resumes)")
    where.add_argument("--resume", type=Path, metavar="DIR", help="continue the crawl in DIR")
    p.add_argument("--max-pages", type=_positive_int)
    p.add_argument("--time", type=_seconds, dest="time_limit", help="time limit, e.g. 90s, 2h")
    p.add_argument("--concurrency", type=_positive_int, help="requests in flight per worker")
    p.add_argument("--workers", type=_positive_int, help="crawler processes (hosts split by hash)")
    p.add_argument("--max-depth", type=int)
    p.add_argument("--user-agent")
    p.add_argument("--delay", type=_seconds, help="minimum gap between requests to one host")
    p.add_argument("--max-per-host", type=_positive_int, help="requests in flight per host")
    p.add_argument(
        "--max-per-ip", type=_positive_int, help="requests in flight per server address (off)"
    )
    p.add_argument(
        "--robots-wait",
        type=_seconds,
        help="longest wait for hosts whose robots.txt is unavailable when nothing else is left",
    )
    p.add_argument("--ca-file", help="PEM file of extra certificate authorities to trust")
    p.add_argument(
        "--resolve",
        action="append",
        default=[],
        metavar="HOST:IP",
        help="map a host (or *.domain) to an address, like curl; may repeat",
    )
    p.add_argument("--config", type=Path, help="TOML configuration file")
    p.add_argument("--nofollow", action="store_true", default=None, help="honour rel=nofollow")
    p.add_argument("--no-progress", action="store_true")


def _testweb_parser(sub: Any) -> None:
    p = sub.add_parser("testweb", help="serve the bundled local multi-host test web")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--hosts", type=_positive_int, default=20)
    p.add_argument("--pages", type=_positive_int, default=50, help="pages per host")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seeds-file", type=Path, help="write the seed URLs here")


def _recover_parser(sub: Any) -> None:
    p = sub.add_parser("recover", help="rebuild crawl.db, index and reports from the WARC files")
    p.add_argument("folder", type=Path, help="the crawl folder")


def _demo_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="serve the test web and crawl it, then print the report")
    p.add_argument("--out", type=Path, default=Path("demo-out"))
    p.add_argument("--hosts", type=_positive_int, default=30)
    p.add_argument("--pages", type=_positive_int, default=40, help="pages per host")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gossamer", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gossamer {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    sub = parser.add_subparsers(dest="command", required=True)
    _crawl_parser(sub)
    _testweb_parser(sub)
    _recover_parser(sub)
    _demo_parser(sub)
    add_commands(sub)
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "max_pages": args.max_pages,
        "time_limit": args.time_limit,
        "concurrency": args.concurrency,
        "workers": args.workers,
        "scope.max_depth": args.max_depth,
        "fetch.user_agent": args.user_agent,
        "politeness.delay": args.delay,
        "politeness.max_per_host": args.max_per_host,
        "politeness.max_per_ip": args.max_per_ip,
        "politeness.robots_wait": args.robots_wait,
        "fetch.ca_file": args.ca_file,
        "politeness.respect_nofollow": args.nofollow,
        "resolve": tuple(args.resolve) or None,
        "progress": False if args.no_progress else None,
    }


def crawl_plan(args: argparse.Namespace) -> tuple[CrawlConfig, SeedList, bool]:
    """Config, seeds, and whether this continues an existing crawl folder."""
    folder: Path = args.resume or args.out
    saved = load_saved(folder) if (folder / SAVED_CONFIG).exists() else None
    if args.resume is not None and saved is None:
        raise ConfigError(f"nothing to resume: {folder} holds no Gossamer crawl")
    if saved is not None and args.seeds is None and args.config is None:
        config = apply_overrides(saved[0], _overrides(args))
        seeds = SeedList(
            seeds=tuple(Seed(urls=urls, line=0, text=urls[0]) for urls in saved[1]),
            problems=(),
        )
        return config, seeds, True
    if args.seeds is None:
        raise ConfigError("a seeds file is needed to start a new crawl")
    config = load_config(args.seeds, folder, args.config, _overrides(args))
    seeds = read_seeds(config.seeds)
    for problem in seeds.problems:
        log.warning("seeds line %d ignored (%s): %s", problem.line, problem.reason, problem.text)
    return config, seeds, saved is not None


def prepare_out(out: Path) -> None:
    """Create the output folder and prove it is writable before any network traffic."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise StoreError(f"cannot write to output folder {out}: {exc.strerror or exc}") from exc


def run_crawl(args: argparse.Namespace) -> int:
    config, seeds, resuming = crawl_plan(args)
    prepare_out(config.out)
    if resuming:
        print(f"resuming the crawl in {config.out}", flush=True)
    else:
        save_config(config.out, config, [seed.urls for seed in seeds.seeds])
    if config.workers > 1:
        reason = run_workers(config, seeds, config.workers).reason
    else:
        reason = asyncio.run(Crawler(config, seeds).run()).reason
    summary = (config.out / "reports" / "stats.txt").read_text(encoding="utf-8")
    print(summary.rstrip())
    print(f"stopped: {reason}; output in {config.out}")
    return 0


def run_recover(folder: Path) -> int:
    result = recover(folder)
    if result.moved_aside is not None:
        print(f"old database moved to {result.moved_aside}")
    print(f"recovered {result.records} records, {result.pages} pages, into {folder / 'crawl.db'}")
    return 0


def _configure_logging(verbose: int) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    try:
        if (code := run_command(args)) is not None:
            return code
        if args.command == "crawl":
            return run_crawl(args)
        if args.command == "recover":
            return run_recover(args.folder)
        if args.command == "testweb":
            spec = WebSpec(seed=args.seed, hosts=args.hosts, pages_per_host=args.pages)
            return serve_forever(spec, host=args.bind, port=args.port, seeds_file=args.seeds_file)
        if args.command == "demo":
            return run_demo(args.out, hosts=args.hosts, pages=args.pages)
    except GossamerError as exc:
        print(f"gossamer: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("gossamer: interrupted", file=sys.stderr)
        return 130
    return EXIT_ERROR
