"""Command line, ``gossamer crawl``: flags -> plan -> engine -> the summary.

Data flow: argv -> **cli.crawl** -> plan (config, seeds, the folder's crawl) -> engine (one
crawler, or ``--workers`` processes) -> ``reports/stats.txt``, printed at the end (its summary
line gives the concurrency reached beside the configured one), then why the crawl stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gossamer.cli.distributed import add_frontier_flags, print_result, shared_of
from gossamer.cli.ending import ending_quietly, exit_status
from gossamer.cli.flags import (
    hide_proxy_password,
    int_between,
    path,
    pipeline_spec,
    positive_int,
    seconds,
)
from gossamer.config import CrawlConfig, PolitenessConfig, Requested, requested, settle
from gossamer.crawling.fetching import proxies_of, wants_http2
from gossamer.crawling.folder import CrawlLock
from gossamer.crawling.revisits import begin_recrawl
from gossamer.crawling.scope import MODES, scope_of, seed_surts
from gossamer.engine.continuous import DUE, wait_for_due
from gossamer.engine.continuous import STOPPED as STOPPED_WAIT
from gossamer.engine.workers import crawl_here
from gossamer.errors import ConfigError, escaped
from gossamer.extras import require
from gossamer.fetch.proxy import PASSWORD_ENV
from gossamer.plan import CrawlPlan, begin_crawl, plan_crawl
from gossamer.render.choice import check_renderable
from gossamer.seeds import MAX_URL_LENGTH, SeedList, read_seeds
from gossamer.store import MetadataDB
from gossamer.store.reports import ending_line
from gossamer.threads import STRATEGIES
from gossamer.threads.engine import ThreadOptions, run_threaded

__all__ = ["FLAGS", "add_parser", "crawl_plan", "run_crawl"]

log = logging.getLogger("gossamer")

# Defaults shown in --help, from the typed config (a flag left out keeps them).
_CRAWL = CrawlConfig(seeds=Path("-"), out=Path("-"), workers=1)
_POLITE = PolitenessConfig()

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
    "fetch.proxy": "--proxy",
    "fetch.cookies": "--no-cookies",
    "fetch.cookies_file": "--cookies",
    "fetch.warc_cookies": "--warc-cookies",
    "fetch.http2": "--http2",
    "render.hosts": "--render",
    "render.auto": "--render-auto",
    "politeness.respect_nofollow": "--nofollow",
    "scope.sitemaps": "--no-sitemaps",
    "resolve": "--resolve",
    "progress": "--no-progress",
    "scope.mode": "--scope",
    "scope.seed_area": "--scope",
    "scope.allow_domains": "--allow-domain",
    "scope.include": "--include",
    "scope.exclude": "--exclude",
    "scope.languages": "--languages",
    "scope.plugins": "--plugin",
    "scope.skip_other_languages": "--skip-other-languages",
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "crawl",
        help="crawl politely from a seeds file",
        description="Crawl from the URLs of a seeds file into DIR (WARC files, crawl.db,"
        " reports/). Running the same command again, or 'gossamer crawl --resume DIR',"
        " continues the crawl where it stopped.",
        epilog="exit status: 0 when the crawl ended (no URL left, --max-pages or --time"
        " reached); 2 on an error, one 'gossamer: error:' line saying what (a crawl that"
        " stored no page is one); 3 when it was stopped before its end (Ctrl-C, SIGTERM,"
        " 'gossamer ctl stop', the web page's stop button): everything fetched is kept, and"
        " 'gossamer crawl --resume DIR' continues it. The TOML keys of --config are listed in"
        " docs/CONFIG.md.",
    )
    p.set_defaults(run=run_crawl)
    p.add_argument("seeds", type=path, nargs="?", help="file with one URL or bare domain per line")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--out", type=path, metavar="DIR", help="output folder (an existing crawl resumes)"
    )
    where.add_argument("--resume", type=path, metavar="DIR", help="continue the crawl in DIR")
    p.add_argument(
        "--recrawl",
        nargs="?",
        const="all",
        choices=("all", "due"),
        help="with an existing crawl: ask its fetched pages again, with conditional requests"
        " (all, the default; or only those due by the [recrawl] schedule), and crawl the new"
        " pages they lead to",
    )
    p.add_argument(
        "--continuous",
        action="store_true",
        help="when the crawl ends, wait for its next page due by the [recrawl] schedule, ask"
        " the due pages again (--recrawl due), and so on until stopped (Ctrl-C, SIGTERM)",
    )
    p.add_argument(
        "--max-pages",
        type=positive_int,
        metavar="N",
        help="stop after storing N pages (default: no limit)",
    )
    p.add_argument(
        "--time", type=seconds, dest="time_limit", help="time limit, e.g. 90s, 2h (default: none)"
    )
    p.add_argument(
        "--concurrency",
        type=positive_int,
        help=f"requests in flight per worker (default: {_CRAWL.concurrency})",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        help="crawler processes, hosts split by hash (default: one per usable core)",
    )
    p.add_argument(
        "--max-depth",
        type=int,
        help="ignore links more than D hops from a seed (default: no limit)",
    )
    p.add_argument(
        "--user-agent",
        metavar="TEXT",
        help="the User-Agent header sent; its first word is the name robots.txt rules"
        " are matched against (default: Gossamer's own, see docs/CONFIG.md)",
    )
    p.add_argument(
        "--delay",
        type=seconds,
        help=f"minimum gap between requests to one host (default: {_POLITE.delay:g}s)",
    )
    p.add_argument(
        "--max-per-host",
        type=positive_int,
        help=f"requests in flight per host (default: {_POLITE.max_per_host})",
    )
    p.add_argument(
        "--max-per-ip",
        type=positive_int,
        help="requests in flight per server address (default: no limit)",
    )
    p.add_argument(
        "--robots-wait",
        type=seconds,
        help="longest wait for hosts whose robots.txt is unavailable when nothing else is left"
        f" (default: {_POLITE.robots_wait:g}s)",
    )
    p.add_argument("--ca-file", help="PEM file of extra certificate authorities to trust")
    p.add_argument(
        "--http2",
        action="store_true",
        help="send https requests over HTTP/2 where the server offers it, HTTP/1.1 where not"
        " (proxied requests stay HTTP/1.1; needs the http2 extra)",
    )
    p.add_argument(
        "--render",
        action="append",
        default=[],
        metavar="HOSTGLOB",
        help="render the pages of these hosts in Chromium ('*' for all), their own requests"
        " fetched by the crawl; may repeat (needs the render extra and chromium)",
    )
    p.add_argument(
        "--render-auto",
        action="append",
        default=[],
        metavar="HOSTGLOB",
        help="render the pages of these hosts that look script-built (scripts, and no links"
        " or little text); may repeat",
    )
    p.add_argument(
        "--resolve",
        action="append",
        default=[],
        metavar="HOST:IP",
        help="map a host (or *.domain) to an address, like curl; may repeat",
    )
    p.add_argument(
        "--config", type=path, metavar="FILE", help="TOML settings file (keys: docs/CONFIG.md)"
    )
    p.add_argument("--nofollow", action="store_true", default=None, help="honour rel=nofollow")
    p.add_argument(
        "--no-sitemaps",
        action="store_true",
        help="do not read sitemaps for URLs (they are read by default)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress line on stderr (it is shown only on a terminal anyway)",
    )
    _add_scope_flags(p)
    _add_route_flags(p)
    _add_thread_flags(p)
    add_frontier_flags(p.add_argument_group("a crawl shared in Redis"), required=False)


def _add_scope_flags(p: Any) -> None:
    """Where links may lead, and which languages' links are followed (crawling/scope.py)."""
    group = p.add_argument_group("scope: which URLs the crawl fetches")
    group.add_argument(
        "--scope",
        choices=MODES,
        help="seeds: the seeds alone, no link followed; host: the seeds' hosts; domain: their"
        " registrable domains (public suffix list); prefix: the seeds' URLs up to the last"
        " '/'; any (default): wherever links lead",
    )
    group.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        metavar="D",
        help="also allow domain D and its subdomains (with --scope any: only those); may repeat",
    )
    group.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="REGEX",
        help="fetch only URLs (canonical form) this regular expression finds; may repeat",
    )
    group.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="REGEX",
        help="never fetch URLs (canonical form) this regular expression finds; may repeat",
    )
    group.add_argument(
        "--languages",
        type=_codes,
        metavar="en,de",
        help="follow the links of pages in these languages only (the others are stored and"
        " counted; needs the search extra)",
    )
    group.add_argument(
        "--skip-other-languages",
        action="store_true",
        help="with --languages: do not store pages in other languages either",
    )
    group.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="FILE.py|NAME",
        help="run this plugin on every page and link (a Python file, or an entry point of the"
        " gossamer.plugins group; see docs/DATA.md); may repeat",
    )


def _codes(text: str) -> tuple[str, ...]:
    return tuple(code.strip().lower() for code in text.split(",") if code.strip())


def _seed_area(wanted: Requested, seeds_file: Path | None) -> tuple[str, ...] | None:
    """The SURT prefixes the seeds give ``--scope host|domain|prefix``, worked out once when
    the crawl starts and kept with its settings; None when there are none to work out."""
    mode = wanted.values.get("scope.mode")
    suffixes = wanted.values.get("scope.public_suffixes", ())
    if seeds_file is None or mode not in ("host", "domain", "prefix"):
        return None
    if not isinstance(suffixes, tuple) or not all(isinstance(s, str) for s in suffixes):
        return None  # refused with its own message when the settings are checked
    length = wanted.values.get("scope.max_url_length", MAX_URL_LENGTH)
    seeds = read_seeds(seeds_file, max_url_length=length if isinstance(length, int) else 2048)
    return seed_surts(mode, (url for seed in seeds.seeds for url in seed.urls), suffixes)


def _check_seeds(config: CrawlConfig, seeds: SeedList) -> None:
    """Refuse a seed the scope rules would refuse: seeds and rules come from one user, and a
    seed silently dropped would be a crawl that does not do what was asked."""
    rules = scope_of(config.scope)
    for seed in seeds.seeds:
        rule = rules.refusal(seed.urls[0])
        if rule is not None:
            where = f"seeds line {seed.line}" if seed.line else "a seed"
            raise ConfigError(
                f"{where} ({escaped(seed.urls[0])}) is out of the crawl's scope by its {rule}"
                f" rule; remove the seed or change {_RULE_FLAGS.get(rule, '--scope')}"
            )


# The flag that sets each scope rule, for the message of a seed it refuses.
_RULE_FLAGS = {
    "exclude": "--exclude",
    "include": "--include",
    "allow": "--allow-domain (or the SURT rules of the config)",
    "surt": "the SURT rules of the config",
}


def _add_route_flags(p: Any) -> None:
    """Proxies and cookies (fetch/proxy.py, fetch/cookies.py)."""
    group = p.add_argument_group("proxies and cookies")
    group.add_argument(
        "--proxy",
        metavar="URL",
        help="send every request through this http:// proxy; 'none': no proxy (default: the"
        " environment's http_proxy, https_proxy and no_proxy, as curl reads them). A password"
        f" in URL is kept in {PASSWORD_ENV} for this crawl's processes, never stored",
    )
    group.add_argument(
        "--cookies",
        metavar="FILE",
        help="start each host's cookie jar from this Netscape cookie file (curl -c, wget"
        " --save-cookies), e.g. to crawl behind a login",
    )
    group.add_argument(
        "--no-cookies",
        action="store_true",
        help="send and keep no cookies (by default each host's are kept in a jar of its own)",
    )
    group.add_argument(
        "--warc-cookies",
        action="store_true",
        help="write the Cookie header into the WARC request records (left out by default:"
        " it may be a login)",
    )


def _add_thread_flags(p: Any) -> None:
    """The threaded engine of the concurrency study (``gossamer study``)."""
    group = p.add_argument_group("threaded engine (the concurrency study)")
    group.add_argument(
        "--engine",
        choices=("async", "threads"),
        default="async",
        help="async (default): one event loop; threads: crawler threads sharing a frontier",
    )
    group.add_argument(
        "--threads",
        type=int_between(1, 1024),
        help="crawler threads (default: 16; with --pipeline, two per buffer)",
    )
    group.add_argument(
        "--frontier-sync",
        choices=tuple(STRATEGIES),
        default="monitor",
        help="how the threads share the frontier",
    )
    group.add_argument(
        "--switch-interval",
        type=seconds,
        metavar="SECONDS",
        help="CPython's thread switch interval during the crawl (default: Python's 5 ms)",
    )
    group.add_argument(
        "--pipeline",
        type=pipeline_spec,
        metavar="buffers=K,size=N",
        help="crawler threads feed K bounded buffers of N URLs, drained into a URL tree"
        " (default: buffers=3,size=1000)",
    )
    group.add_argument("--url-tree", type=path, metavar="DIR", help="the pipeline's URL tree")
    group.add_argument(
        "--stats-period", type=seconds, default=3600.0, help="the pipeline's statistics period"
    )


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
        "fetch.proxy": args.proxy,
        "fetch.cookies": False if args.no_cookies else None,
        "fetch.cookies_file": args.cookies,
        "fetch.warc_cookies": True if args.warc_cookies else None,
        "fetch.http2": True if args.http2 else None,
        "render.hosts": tuple(h.strip().lower() for h in args.render) or None,
        "render.auto": tuple(h.strip().lower() for h in args.render_auto) or None,
        "politeness.respect_nofollow": args.nofollow,
        "scope.sitemaps": False if args.no_sitemaps else None,
        "resolve": tuple(args.resolve) or None,
        "progress": False if args.no_progress else None,
        "scope.mode": args.scope,
        "scope.allow_domains": tuple(d.strip().lower() for d in args.allow_domain) or None,
        "scope.include": tuple(args.include) or None,
        "scope.exclude": tuple(args.exclude) or None,
        "scope.languages": args.languages,
        "scope.plugins": tuple(args.plugin) or None,
        "scope.skip_other_languages": True if args.skip_other_languages else None,
    }


def _with_seed_area(args: argparse.Namespace, overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` with the seeds' area for ``--scope host|domain|prefix`` (from the seeds
    file this command names; a resume without one keeps the stored area)."""
    area = _seed_area(requested(args.config, overrides, FLAGS), args.seeds)
    return overrides if area is None else overrides | {"scope.seed_area": area}


def crawl_plan(args: argparse.Namespace) -> CrawlPlan:
    """Config, seeds, and whether this continues the crawl in the folder; nothing written."""
    plan = plan_crawl(
        args.seeds,
        args.resume or args.out,
        resume=args.resume is not None,
        config_file=args.config,
        overrides=_with_seed_area(args, _overrides(args)),
        flags=FLAGS,
    )
    _check_seeds(plan.config, plan.seeds)
    for problem in plan.seeds.problems:
        log.warning(
            "seeds line %d ignored (%s): %s",
            problem.line,
            problem.reason,
            escaped(problem.text),
        )
    return plan


def check_thread_flags(args: argparse.Namespace) -> None:
    """Refuse threaded-engine flags that do not fit the rest of the command line."""
    threaded = args.engine == "threads"
    if not threaded:
        for flag, value in (
            ("--frontier-sync", args.frontier_sync != "monitor"),
            ("--threads", args.threads is not None),
            ("--pipeline", args.pipeline is not None),
            ("--url-tree", args.url_tree is not None),
            ("--switch-interval", args.switch_interval is not None),
        ):
            if value:
                raise ConfigError(f"{flag} needs --engine threads")
        return
    if args.resume is not None:
        raise ConfigError("--engine threads starts new crawls; resume with the default engine")
    if args.workers is not None and args.workers > 1:
        raise ConfigError("--engine threads runs in one process: leave out --workers")
    if args.switch_interval is not None and not 1e-6 <= args.switch_interval <= 1.0:
        raise ConfigError("--switch-interval must be between 1us and 1s")
    if args.url_tree is not None and args.pipeline is None:
        raise ConfigError("--url-tree needs --pipeline")
    if args.continuous:
        raise ConfigError("--engine threads runs one crawl: leave out --continuous")


def _begin_recrawl(plan: CrawlPlan, mode: str, engine: str = "async") -> None:
    """``--recrawl``: start a new generation of the crawl in its folder (crawling/revisits)."""
    if not plan.resuming or engine == "threads":
        raise ConfigError(
            "--recrawl asks the pages of an existing crawl again: give its folder with --resume"
            " (the study's --engine threads does not recrawl)"
        )
    out = plan.config.out
    with CrawlLock(out), contextlib.closing(MetadataDB(out / "crawl.db")) as db:
        begin_recrawl(db, mode, time.time())


def _recrawl_config(config: CrawlConfig, args: argparse.Namespace) -> CrawlConfig:
    """A recrawl revisits the pages the crawl has and follows what changed pages lead to: the
    crawl's saved page target does not hold it back, a --max-pages on its command line does."""
    return config if args.max_pages is not None else dataclasses.replace(config, max_pages=None)


def _crawl(config: CrawlConfig, seeds: SeedList, args: argparse.Namespace) -> str:
    """Run the crawl in this process or in ``config.workers``; why it stopped. The workers
    started before the command line was parsed (``cli.main``) serve its first crawl only."""
    early = getattr(args, "early_workers", [])
    args.early_workers = []
    if args.engine == "threads":
        return run_study_crawl(config, seeds, args)
    return crawl_here(config, seeds, early)


def run_shared_crawl(args: argparse.Namespace, ended: Callable[[], None]) -> int:
    """``--frontier``: start (or go on with) a crawl shared in Redis, and work in it."""
    require("gossamer crawl --frontier", "redis")
    from gossamer.distributed.run import start_crawl  # noqa: PLC0415 - redis only when used

    if args.engine != "async" or args.resume is not None or (args.workers or 1) > 1:
        raise ConfigError(
            "--frontier runs one worker per command: leave out --resume, --workers and"
            " --engine threads (start more with gossamer worker)"
        )
    if args.continuous:
        raise ConfigError(
            "--continuous keeps a crawl folder fresh in one process or with --workers; a shared"
            " crawl is recrawled with --recrawl"
        )
    if args.seeds is None:
        raise ConfigError("--frontier needs a seeds file (gossamer worker joins without one)")
    wanted = requested(args.config, _with_seed_area(args, _overrides(args)), FLAGS)
    config = settle(CrawlConfig(seeds=args.seeds, out=args.out), wanted)
    proxies_of(config)  # the environment's proxies too: refused here, in one line
    check_renderable(config)
    seeds = read_seeds(config.seeds, max_url_length=config.scope.max_url_length)
    _check_seeds(config, seeds)
    shared = shared_of(args, "gossamer crawl --frontier")
    result = start_crawl(shared, config, wanted, seeds, args.recrawl)
    ended()
    print_result(result, config.out)
    return exit_status(result.reason)


def run_crawl(args: argparse.Namespace) -> int:
    hide_proxy_password(args)
    with ending_quietly() as ended:
        if args.frontier is not None:
            return run_shared_crawl(args, ended)
        check_thread_flags(args)
        plan = crawl_plan(args)
        proxies_of(plan.config)  # the environment's proxies too: refused here, in one line
        if wants_http2(plan.config):
            require("gossamer crawl --http2", "http2")
        check_renderable(plan.config, engine=args.engine)
        config, note = begin_crawl(plan)
        if note is not None:
            print(f"gossamer: warning: {note}", file=sys.stderr, flush=True)
        if plan.restart:
            print(f"gossamer: {escaped(plan.restart)}", file=sys.stderr, flush=True)
        if args.recrawl is not None:
            _begin_recrawl(plan, args.recrawl, args.engine)
            config = _recrawl_config(config, args)
        if plan.resuming:
            print(f"resuming the crawl in {escaped(str(config.out))}", flush=True)
        reason = _crawl(config, plan.seeds, args)
        while args.continuous and reason == "exhausted":
            waited = wait_for_due(config.out)
            if waited != DUE:
                reason = "signal" if waited == STOPPED_WAIT else reason
                break
            _begin_recrawl(dataclasses.replace(plan, resuming=True), "due")
            reason = _crawl(_recrawl_config(config, args), plan.seeds, args)
        ended()
        summary = (config.out / "reports" / "stats.txt").read_text(encoding="utf-8")
        print(summary.rstrip())  # its last line is the summary, with the concurrency reached
        print(f"{ending_line(reason)}; output in {escaped(str(config.out))}")
        return exit_status(reason)


def run_study_crawl(config: CrawlConfig, seeds: SeedList, args: argparse.Namespace) -> str:
    """``--engine threads``, with seed 000's buffers and URL tree when ``--pipeline`` asks."""
    threads = args.threads or (2 * args.pipeline[0] if args.pipeline else 16)
    options = ThreadOptions(
        threads=threads, sync=args.frontier_sync, switch_interval=args.switch_interval
    )
    if args.pipeline is None:
        return run_threaded(config, seeds, options).reason
    from gossamer.threads.study_pipeline import run_pipeline  # noqa: PLC0415 (builders)

    buffers, size = args.pipeline
    tree = args.url_tree or config.out / "url-tree"
    return run_pipeline(
        config, seeds, options, buffers=buffers, size=size, tree=tree, period=args.stats_period
    ).reason
