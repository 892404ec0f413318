"""Command-line entry point: parses flags and wires packages together, one call per command.

Every fault Gossamer knows about ends here as one ``gossamer: error: ...`` line on stderr and a
non-zero exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import ipaddress
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any, NoReturn

from gossamer import __version__
from gossamer.config import CrawlConfig, parse_duration, parse_path
from gossamer.config_check import fit_open_files
from gossamer.demo import run_demo
from gossamer.engine import Crawler
from gossamer.engine.recover import recover, save_config
from gossamer.engine.resume import CrawlLock
from gossamer.engine.workers import run_workers
from gossamer.errors import ConfigError, GossamerError, StoreError, escaped
from gossamer.plan import CrawlPlan, plan_crawl
from gossamer.search.commands import add_commands, run_command
from gossamer.testweb import WebSpec, serve_forever

log = logging.getLogger("gossamer")

EXIT_ERROR = 2
# The test web is built in memory before it is served: about 2 KB per page.
MAX_TESTWEB_HOSTS = 10_000
MAX_TESTWEB_PAGES = 250_000  # hosts x pages per host


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``gossamer: error:`` line like every other error."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message} (see '{self.prog} --help')")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _path(text: str) -> Path:
    try:
        return parse_path(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    try:
        return parse_duration(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _port(text: str) -> int:
    value = int(text) if text.isdigit() else -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0-65535): {text!r}")
    return value


def _address(text: str) -> str:
    """A listening address: an IP address or a host name (looked up when binding)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        labels = text.removesuffix(".").split(".")
        if not text or not all(label and label.replace("-", "").isalnum() for label in labels):
            raise argparse.ArgumentTypeError(f"not an address to listen on: {text!r}") from None
    return text


def _crawl_parser(sub: Any) -> None:
    p = sub.add_parser("crawl", help="crawl politely from a seeds file")
    p.add_argument("seeds", type=_path, nargs="?", help="file with one URL or bare domain per line")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=_path, help="output folder (an existing crawl resumes)")
    where.add_argument("--resume", type=_path, metavar="DIR", help="continue the crawl in DIR")
    p.add_argument("--max-pages", type=_positive_int)
    p.add_argument("--time", type=_seconds, dest="time_limit", help="time limit, e.g. 90s, 2h")
    p.add_argument("--concurrency", type=_positive_int, help="requests in flight per worker")
    p.add_argument("--workers", type=_positive_int, help="crawler processes (hosts split by hash)")
    p.add_argument("--max-depth", type=int, help="ignore links more than D hops from a seed")
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
    p.add_argument("--config", type=_path, help="TOML configuration file")
    p.add_argument("--nofollow", action="store_true", default=None, help="honour rel=nofollow")
    p.add_argument("--no-progress", action="store_true")


def _testweb_parser(sub: Any) -> None:
    p = sub.add_parser("testweb", help="serve the bundled local multi-host test web")
    p.add_argument("--port", type=_port, default=8080, help="0: any free port (it is printed)")
    p.add_argument("--bind", type=_address, default="127.0.0.1", help="address to listen on")
    p.add_argument("--hosts", type=_positive_int, default=20)
    p.add_argument("--pages", type=_positive_int, default=50, help="pages per host")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seeds-file", type=_path, help="write the seed URLs here")


def _recover_parser(sub: Any) -> None:
    p = sub.add_parser("recover", help="rebuild crawl.db, index and reports from the WARC files")
    p.add_argument("folder", type=_path, help="the crawl folder")


def _demo_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="serve the test web and crawl it, then print the report")
    p.add_argument("--out", type=_path, default=Path("demo-out"))
    p.add_argument("--hosts", type=_positive_int, default=30)
    p.add_argument("--pages", type=_positive_int, default=40, help="pages per host")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gossamer", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gossamer {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    sub = parser.add_subparsers(dest="command", required=True)
    _crawl_parser(sub)
    _testweb_parser(sub)
    _recover_parser(sub)
    _demo_parser(sub)
    add_commands(sub)
    return parser


# Each flag that sets a crawl setting, by the setting's dotted name (for messages too).
FLAGS = {
    "max_pages": "--max-pages",
    "time_limit": "--time",
    "concurrency": "--concurrency",
    "workers": "--workers",
    "scope.max_depth": "--max-depth",
    "fetch.user_agent": "--user-agent",
    "politeness.delay": "--delay",
    "politeness.max_per_host": "--max-per-host",
    "politeness.max_per_ip": "--max-per-ip",
    "politeness.robots_wait": "--robots-wait",
    "fetch.ca_file": "--ca-file",
    "politeness.respect_nofollow": "--nofollow",
    "resolve": "--resolve",
    "progress": "--no-progress",
}


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


def crawl_plan(args: argparse.Namespace) -> CrawlPlan:
    """Config, seeds, and whether this continues the crawl in the folder; nothing written."""
    plan = plan_crawl(
        args.seeds,
        args.resume or args.out,
        resume=args.resume is not None,
        config_file=args.config,
        overrides=_overrides(args),
        flags=FLAGS,
    )
    for problem in plan.seeds.problems:
        log.warning(
            "seeds line %d ignored (%s): %s",
            problem.line,
            problem.reason,
            escaped(problem.text),
        )
    return plan


def prepare_out(out: Path) -> None:
    """Create the output folder and prove it is writable before any network traffic."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise StoreError(f"cannot write to output folder {out}: {exc.strerror or exc}") from exc


def _start(plan: CrawlPlan) -> CrawlConfig:
    """Write what must be written before the crawl, then the tree to run it with."""
    # Fitted first, as it can still refuse; crawl.json keeps the concurrency asked for.
    config, note = fit_open_files(plan.config)
    prepare_out(config.out)
    if plan.save:
        # Under the crawl's lock, so a crawl running in the folder keeps its crawl.json.
        with CrawlLock(config.out):
            save_config(config.out, plan.config, [seed.urls for seed in plan.seeds.seeds])
    if note is not None:
        print(f"gossamer: warning: {note}", file=sys.stderr, flush=True)
    if plan.resuming:
        print(f"resuming the crawl in {escaped(str(config.out))}", flush=True)
    return config


def run_crawl(args: argparse.Namespace) -> int:
    plan = crawl_plan(args)
    config = _start(plan)
    if config.workers > 1:
        reason = run_workers(config, plan.seeds, config.workers).reason
    else:
        reason = asyncio.run(Crawler(config, plan.seeds).run()).reason
    summary = (config.out / "reports" / "stats.txt").read_text(encoding="utf-8")
    print(summary.rstrip())
    print(f"stopped: {reason}; output in {escaped(str(config.out))}")
    return 0


def _check_web_size(hosts: int, pages: int) -> None:
    if hosts > MAX_TESTWEB_HOSTS or hosts * pages > MAX_TESTWEB_PAGES:
        raise ConfigError(
            f"a test web of {hosts} hosts x {pages} pages is too large: at most"
            f" {MAX_TESTWEB_HOSTS} hosts and {MAX_TESTWEB_PAGES} pages in all"
        )


def _test_web_spec(args: argparse.Namespace) -> WebSpec:
    _check_web_size(args.hosts, args.pages)
    spec = WebSpec(seed=args.seed, hosts=args.hosts, pages_per_host=args.pages)
    try:
        spec.validate()
    except ValueError as exc:
        raise ConfigError(f"invalid test web: {exc}") from exc
    return spec


def _os_reason(exc: OSError) -> str:
    # asyncio's bind errors carry a long strerror; the errno says it in a few words.
    code = exc.errno
    if code is not None and code in errno.errorcode and not isinstance(exc, socket.gaierror):
        return os.strerror(code)
    return exc.strerror or str(exc)


def run_testweb(args: argparse.Namespace) -> int:
    spec = _test_web_spec(args)
    try:
        return serve_forever(spec, host=args.bind, port=args.port, seeds_file=args.seeds_file)
    except ValueError as exc:
        # The generator's own checks of the spec (say, too few hosts for the special ones).
        raise ConfigError(f"invalid test web: {exc}") from exc
    except OSError as exc:
        if exc.filename is not None:
            raise StoreError(f"cannot write {exc.filename}: {_os_reason(exc)}") from exc
        raise GossamerError(
            f"cannot serve the test web on {args.bind}:{args.port}: {_os_reason(exc)}"
        ) from exc


def run_recover(folder: Path) -> int:
    for line in recover(folder).lines(folder):
        print(line)
    return 0


def _configure_logging(verbose: int) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
    )


def _dispatch(args: argparse.Namespace) -> int:
    if (code := run_command(args)) is not None:
        return code
    if args.command == "crawl":
        return run_crawl(args)
    if args.command == "recover":
        return run_recover(args.folder)
    if args.command == "testweb":
        return run_testweb(args)
    if args.command == "demo":
        _check_web_size(args.hosts, args.pages)
        return run_demo(args.out, hosts=args.hosts, pages=args.pages)
    return EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        _configure_logging(args.verbose)
        return _dispatch(args)
    except GossamerError as exc:
        print(f"gossamer: error: {escaped(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        print("gossamer: error: out of memory", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("gossamer: interrupted", file=sys.stderr)
        return 130
