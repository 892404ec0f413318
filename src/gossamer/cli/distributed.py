"""Command line of a crawl shared in Redis: ``gossamer worker`` and ``gossamer ctl``.

Data flow: argv -> **cli.distributed** -> ``distributed.run`` (a worker: its own folder, the
crawl's shared frontier) or ``distributed.control`` (status, pause, resume, stop, seeds).
``gossamer crawl SEEDS --out DIR --frontier URL`` (cli/crawl.py) starts the crawl.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gossamer.cli.ending import ending_quietly, exit_status
from gossamer.cli.flags import hide_proxy_password, path, positive_int, seconds
from gossamer.config import CrawlConfig, requested, settle
from gossamer.errors import ConfigError, escaped
from gossamer.extras import require
from gossamer.store.reports import ending_line

__all__ = ["add_frontier_flags", "add_parsers", "print_result", "shared_of"]

log = logging.getLogger(__name__)

_WORKER_FLAGS = {
    "concurrency": "--concurrency",
    "time_limit": "--time",
    "resolve": "--resolve",
    "fetch.ca_file": "--ca-file",
    "fetch.proxy": "--proxy",
    "fetch.cookies_file": "--cookies",
    "progress": "--no-progress",
}


def add_frontier_flags(p: Any, *, required: bool, worker: bool = True) -> None:
    """--frontier, --name and --lease-ttl, shared by crawl, worker and ctl; and, unless
    ``worker`` is False (ctl, which fetches nothing), the options of a working process."""
    p.add_argument(
        "--frontier",
        required=required,
        metavar="URL",
        help="share the crawl through Redis: redis://[:PASSWORD@]HOST:PORT/DB, rediss:// (TLS), "
        "or a Redis Cluster: redis+cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT...]",
    )
    p.add_argument("--name", default="crawl", help="the shared crawl's name in Redis")
    p.add_argument(
        "--lease-ttl",
        type=seconds,
        default=30.0,
        help="seconds a silent worker's hosts stay leased before others take them"
        if worker
        else "the workers' --lease-ttl: a worker silent for longer is shown as gone",
    )
    if not worker:
        return
    p.add_argument(
        "--redis-patience",
        type=seconds,
        default=60.0,
        help="seconds a worker retries an unreachable Redis before it stops",
    )
    p.add_argument("--worker-name", help="this worker's name in ctl status (default: HOSTNAME-PID)")


def add_parsers(sub: Any) -> None:
    _add_worker_parser(sub)
    _add_ctl_parser(sub)


def _add_worker_parser(sub: Any) -> None:
    p = sub.add_parser("worker", help="join a crawl shared in Redis (gossamer crawl --frontier)")
    p.set_defaults(run=run_worker)
    add_frontier_flags(p, required=True)
    p.add_argument(
        "--out", type=path, required=True, metavar="DIR", help="this worker's own output folder"
    )
    p.add_argument("--concurrency", type=positive_int, help="requests in flight in this worker")
    p.add_argument(
        "--time", type=seconds, dest="time_limit", help="this worker's time limit, e.g. 90s, 2h"
    )
    p.add_argument(
        "--ca-file", metavar="FILE", help="PEM file of extra certificate authorities to trust"
    )
    p.add_argument(
        "--resolve",
        action="append",
        default=[],
        metavar="HOST:IP",
        help="map a host (or *.domain) to an address, like curl; may repeat",
    )
    p.add_argument(
        "--proxy",
        metavar="URL",
        help="this worker's http:// proxy, as for crawl ('none': no proxy; default: the"
        " environment's http_proxy, https_proxy and no_proxy)",
    )
    p.add_argument(
        "--cookies", metavar="FILE", help="this worker's Netscape cookie file, as for crawl"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress line on a terminal")


def _add_ctl_parser(sub: Any) -> None:
    p = sub.add_parser("ctl", help="status, pause, resume, stop or add seeds to a shared crawl")
    p.set_defaults(run=run_ctl)
    add_frontier_flags(p, required=True, worker=False)
    p.add_argument(
        "action",
        choices=("status", "pause", "resume", "stop", "add-seeds"),
        help="status: the crawl and its workers; pause and resume the workers; stop: end the"
        " crawl (start it again with the same crawl --frontier command); add-seeds: queue the"
        " URLs of a seeds file",
    )
    p.add_argument("seeds", type=path, nargs="?", help="the seeds file of add-seeds")
    p.add_argument("--json", action="store_true", help="status as JSON")


def _lease_ttl(args: argparse.Namespace) -> float:
    if not 1.0 <= args.lease_ttl <= 3600.0:
        raise ConfigError("--lease-ttl must be between 1s and 1h")
    return float(args.lease_ttl)


def shared_of(args: argparse.Namespace, command: str) -> Any:
    """The shared crawl the flags name; ``command`` needs the redis extra (said first)."""
    require(command, "redis")
    from gossamer.distributed.run import Shared  # noqa: PLC0415 - redis only when used

    return Shared(
        url=args.frontier,
        name=args.name,
        worker=args.worker_name or "",
        patience=args.redis_patience,
        lease_ttl=_lease_ttl(args),
    )


def print_result(result: Any, out: Path) -> None:
    summary = (out / "reports" / "stats.txt").read_text(encoding="utf-8")
    print(summary.rstrip())
    print(f"{ending_line(result.reason)}; output in {escaped(str(out))}")


def run_worker(args: argparse.Namespace) -> int:
    require("gossamer worker", "redis")
    from gossamer.distributed.run import join_crawl  # noqa: PLC0415

    hide_proxy_password(args)
    overrides = {
        "fetch.proxy": args.proxy,
        "fetch.cookies_file": args.cookies,
        "concurrency": args.concurrency,
        "time_limit": args.time_limit,
        "resolve": tuple(args.resolve) or None,
        "fetch.ca_file": args.ca_file,
        "progress": False if args.no_progress else None,
    }
    wanted = requested(None, overrides, _WORKER_FLAGS)
    local = settle(CrawlConfig(seeds=Path("-"), out=args.out), wanted)
    with ending_quietly() as ended:
        result = join_crawl(shared_of(args, "gossamer worker"), local, wanted)
        ended()
        print_result(result, args.out)
        return exit_status(result.reason)


def run_ctl(args: argparse.Namespace) -> int:
    require("gossamer ctl", "redis")
    if (args.action == "add-seeds") != (args.seeds is not None):
        raise ConfigError("a seeds file goes with add-seeds, and only with it")
    _lease_ttl(args)
    return asyncio.run(_ctl(args))


async def _ctl(args: argparse.Namespace) -> int:
    from gossamer.distributed import control  # noqa: PLC0415
    from gossamer.distributed.connect import connect, redacted  # noqa: PLC0415

    redis = connect(args.frontier)
    try:
        with _unreachable(redacted(args.frontier)):
            if args.action == "status":
                found = await control.status(redis, args.name, ttl=args.lease_ttl)
                print(json.dumps(_as_json(found)) if args.json else _as_text(found))
            elif args.action == "add-seeds":
                await _add_seeds(redis, args)
            else:
                state = {"pause": "paused", "resume": "running", "stop": "stopped"}[args.action]
                await control.set_state(redis, args.name, state)
                said = f"{args.name!r} is {state}"
                if state == "running":
                    found = await control.status(redis, args.name, ttl=args.lease_ttl)
                    if not found.alive:
                        said += ", " + _nobody_works(args, redacted(args.frontier))
                print(said)
    finally:
        await redis.aclose()
    return 0


def _nobody_works(args: argparse.Namespace, where: str) -> str:
    """What to say when a crawl is resumed that no live worker will carry on."""
    return (
        "but no worker is alive to crawl it: start one with "
        f"gossamer worker --frontier {escaped(where)} --name {escaped(args.name)} --out DIR"
    )


async def _add_seeds(redis: Any, args: argparse.Namespace) -> None:
    """Queue a seeds file's seeds; its bad lines said as ``gossamer crawl`` says them (a
    warning each, with its line number: the good lines still count, so the exit status is 0;
    no good line at all is a ``SeedError``, exit 2, again as for ``crawl``)."""
    from gossamer.distributed.seeding import add_seeds  # noqa: PLC0415

    added = await add_seeds(redis, args.name, args.seeds)
    for problem in added.problems:
        log.warning(
            "seeds line %d ignored (%s): %s", problem.line, problem.reason, escaped(problem.text)
        )
    ignored = f"; {len(added.problems)} lines ignored" if added.problems else ""
    print(f"{added.queued} new seed URLs queued in {args.name!r}{ignored}")


@contextlib.contextmanager
def _unreachable(where: str) -> Iterator[None]:
    """Redis's own connection errors as one of ours, so the CLI says them in one line."""
    from gossamer.distributed.errors import REDIS_FAULTS, SharedFrontierError  # noqa: PLC0415

    try:
        yield
    except REDIS_FAULTS as exc:
        raise SharedFrontierError(f"Redis at {where}: {exc}") from exc


def _as_json(found: Any) -> dict[str, Any]:
    return {
        "state": found.state,
        "queued_hosts": found.queued_hosts,
        "leased_hosts": found.leased_hosts,
        "takeover_hosts": found.takeover_hosts,
        "queued_urls": found.queued_urls,
        "domains": found.domains,
        "workers_alive": len(found.alive),
        "workers": [
            {
                "worker": w.worker,
                "state": w.state,
                "pages": w.pages,
                "pages_per_second": round(w.pages_per_second, 2),
                "errors": w.errors,
                "hosts_leased": w.hosts,
                "hosts_takeover": w.takeover,
                "heartbeat_age": None if w.beat is None else round(w.age(found.now), 3),
            }
            for w in found.workers
        ],
    }


def _as_text(found: Any) -> str:
    takeover = (
        f", {found.takeover_hosts} waiting for takeover from gone workers"
        if found.takeover_hosts
        else ""
    )
    lines = [
        f"state: {found.state}; {found.queued_urls} URLs queued on {found.queued_hosts} "
        f"waiting hosts, {found.leased_hosts} hosts leased{takeover}; "
        f"{len(found.alive)} of {len(found.workers)} workers alive",
        f"{'worker':<28} {'state':<8} {'pages':>8} {'pages/s':>8} {'errors':>7} {'hosts':>6} "
        f"{'takeover':>8} {'beat age':>9}",
    ]
    for w in found.workers:
        age = w.age(found.now)
        shown = "-" if age is None else f"{age:.1f}s"
        lines.append(
            f"{escaped(w.worker)[:28]:<28} {w.state:<8} {w.pages:>8} {w.pages_per_second:>8.1f} "
            f"{w.errors:>7} {w.hosts:>6} {w.takeover:>8} {shown:>9}"
        )
    if not found.workers:
        lines.append("(no worker has reported yet)")
    return "\n".join(lines)
