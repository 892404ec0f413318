"""Command line, ``gossamer testweb`` and ``gossamer demo``: the bundled local test web.

Data flow: argv -> **cli.testweb** -> ``testweb.command`` (serve it until stopped) or
``demo`` (serve it, crawl it, index, rank and search it). The test web is test tooling, not
part of the crawler: it is imported here only when one of these two commands runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gossamer.cli.flags import address, int_between, listen_port, path, positive_int

__all__ = ["add_demo_parser", "add_testweb_parser", "run_demo", "run_testweb"]


def add_testweb_parser(sub: Any) -> None:
    p = sub.add_parser("testweb", help="serve the bundled local multi-host test web")
    p.set_defaults(run=run_testweb)
    p.add_argument(
        "--port",
        type=listen_port,
        default=8080,
        help="port to listen on; 0: any free port (it is printed)",
    )
    p.add_argument("--bind", type=address, default="127.0.0.1", help="address to listen on")
    p.add_argument("--hosts", type=positive_int, default=20, help="host names the web serves")
    p.add_argument("--pages", type=positive_int, default=50, help="pages per host")
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="number the random web is built from: the same number gives the same pages",
    )
    p.add_argument("--seeds-file", type=path, help="write the seed URLs here")
    p.add_argument(
        "--generation",
        type=int_between(0, 1000),
        default=0,
        metavar="N",
        help="serve the web as it is N generations later: at each, 10%% of pages change, 2%%"
        " vanish and 1%% appear (crawl at 0, restart at 1, recrawl; default: 0)",
    )


def add_demo_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="serve the test web and crawl it, then print the report")
    p.set_defaults(run=run_demo)
    p.add_argument(
        "--out",
        type=path,
        default=Path("demo-out"),
        metavar="DIR",
        help="the crawl folder the demo writes (index and ranks too)",
    )
    p.add_argument("--hosts", type=positive_int, default=30, help="host names the web serves")
    p.add_argument("--pages", type=positive_int, default=40, help="pages per host")


def run_testweb(args: argparse.Namespace) -> int:
    from gossamer.testweb.command import serve_forever, web_spec  # noqa: PLC0415 (see module)

    # Its pages carry ETag and Last-Modified, as a real web's do, so a recrawl gets 304s.
    spec = web_spec(hosts=args.hosts, pages=args.pages, seed=args.seed, validators=True)
    return serve_forever(
        spec,
        host=args.bind,
        port=args.port,
        seeds_file=args.seeds_file,
        generation=args.generation,
    )


def run_demo(args: argparse.Namespace) -> int:
    from gossamer import demo  # noqa: PLC0415 (see module)

    return demo.run_demo(args.out, hosts=args.hosts, pages=args.pages)
