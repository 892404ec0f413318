"""The parse's cost bound (issue 26): Lexbor's time against nesting, and what the bound leaves.

Role: measurement only. Prints, in order:

1. Lexbor's own parse time (``LexborHTMLParser``, no bound) for pages of N nested elements of
   a few kinds: ``<div>`` (every one looks down the stack for a ``<p>``), ``<span>``, ``<b>``
   (formatting elements), table cells, unclosed ``<p>`` and ``<li>`` (which close each
   other: not deep at all), and N copies of ``<div><font id=N></div>`` (shallow, but each
   font stays pending and is re-opened at every later tag). A kind stops growing once one
   size takes more than ``--give-up`` seconds.
2. Whether Lexbor lets go of the GIL while it parses: the longest gap seen by a thread that
   counts while another parses a 30,000-deep page.
3. The bound's cost on ordinary pages: ``bound_html`` (one ``str.count``) per page of the test
   web filled to 5-40 KB (as ``cpu_per_page.py`` exports it), beside ``parse_html``.
4. Hostile pages through the bound: ``parse_html`` (the crawl), ``extract_html`` (``index``)
   and ``relink`` (the cached copy), each timed.
5. End to end, with ``--end-to-end``: a crawl (``--workers 1``) of a host serving the issue's
   page (150,000 nested ``<div>``, 0.9 MB) beside a host of 30 ordinary pages, the slowest
   request to the ordinary host (crawl.db's ``elapsed``: a held event loop shows there),
   ``gossamer index`` on the crawl folder, and the cached copy of the deep page fetched from
   the web UI.

    .venv/bin/python benchmarks/parse_depth.py --end-to-end
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from aiohttp import ClientSession, web
from selectolax.lexbor import LexborHTMLParser

from gossamer.index.extract import extract_html
from gossamer.parse import parse_html
from gossamer.parse.bounded import bound_html
from gossamer.testweb.filler import fill_page
from gossamer.web import make_app
from gossamer.web.links import relink

T = TypeVar("T")
KINDS: dict[str, Callable[[int], str]] = {
    "div": lambda n: "<div>" * n + "x",
    "span": lambda n: "<span>" * n + "x",
    "b": lambda n: "<b>" * n + "x",
    "td": lambda n: "<table><tr><td>" * (n // 3) + "x",
    "p (unclosed)": lambda n: "<p>x" * n,
    "li (unclosed)": lambda n: "<ul>" + "<li>x" * n,
    "div+font pending": lambda n: "".join(f"<div><font id={i}></div>" for i in range(n // 3)),
}
SIZES = (1_000, 3_000, 10_000, 30_000, 100_000, 150_000)
ISSUE_PAGE = "<!DOCTYPE html><title>Deep</title><a href='/shallow'>before</a>" + (
    "<div>\n" * 150_000 + "words at the bottom <a href='/inside'>inside</a>"
)


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def lexbor_by_depth(give_up: float) -> None:
    print("## Lexbor alone: seconds to parse N tags\n")
    print("| kind | " + " | ".join(f"{n:,}" for n in SIZES) + " |")
    print("| --- |" + " ---: |" * len(SIZES))
    for kind, page in KINDS.items():
        cells: list[str] = []
        for n in SIZES:
            if cells and (cells[-1] == "-" or float(cells[-1]) > give_up):
                cells.append("-")
                continue
            cells.append(f"{timed(partial(LexborHTMLParser, '<body>' + page(n))):.3f}")
        print(f"| {kind} | " + " | ".join(cells) + " |")


def gil_released() -> None:
    html = "<body>" + "<div>" * 30_000
    gaps: list[float] = []
    parser = threading.Thread(target=LexborHTMLParser, args=(html,))
    parser.start()
    last = time.perf_counter()
    while parser.is_alive():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        time.sleep(0.001)
    print(
        f"\nGIL: while a 30,000-deep page parsed in a thread, the main thread ran {len(gaps)}"
        f" times, longest gap {max(gaps) * 1000:.1f} ms (switch interval"
        f" {sys.getswitchinterval() * 1000:.0f} ms)\n"
    )


def _repeat(times: int, call: Callable[[T], object], value: T) -> None:
    for _ in range(times):
        call(value)


def _parse(page: bytes) -> object:
    return parse_html(page, "http://a.test/")


def ordinary_pages() -> None:
    rng = random.Random(26)
    nav = [(f"/section/{n}", f"Section {n}") for n in range(12)]
    inline = [f"/page/{n}" for n in range(40)]
    pages = [
        fill_page(
            rng, seed, "<title>Page</title>", "<h1>Page</h1><p>Article text.</p>",
            size=5_000 + seed * 1_000, nav=nav, inline=inline,
        ).encode()
        for seed in range(36)
    ]  # fmt: skip
    texts = [page.decode() for page in pages]
    runs = 200
    bound = [timed(partial(_repeat, runs, bound_html, text)) / runs for text in texts]
    parse = [timed(partial(_repeat, 20, _parse, page)) / 20 for page in pages]
    tags = [t.count("<") for t in texts]
    print(
        f"Ordinary pages ({len(pages)}, {min(map(len, pages)):,}-{max(map(len, pages)):,} bytes,"
        f" {min(tags)}-{max(tags)} tags): bound_html median {statistics.median(bound) * 1e6:.1f} us"
        f" (max {max(bound) * 1e6:.1f}),"
        f" parse_html median {statistics.median(parse) * 1e3:.3f} ms\n"
    )


class _NoneStored:
    def stored_pages(self, urls: object) -> set[str]:
        return set()


def hostile_pages() -> None:
    cases = {
        "issue page, 150k <div>, 0.9 MB": ISSUE_PAGE,
        "150k <div> closed, 1.65 MB": "<body>" + "<div>" * 150_000 + "x" + "</div>" * 150_000,
        "40k <div> (scanned)": "<body>" + "<div>" * 40_000 + "x",
        "3k <div><font></div> + 100k <div>x</div>": "<body>"
        + "".join(f"<div><font id={i}></div>" for i in range(3000))
        + "<div>x</div>" * 100_000,
        "1M links (30 MB)": "".join(f"<a href='/p{i}'>link {i}</a> " for i in range(1_000_000)),
    }
    print("## Through the bound: seconds per call\n")
    print("| page | bound_html | parse_html | extract_html | relink |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, html in cases.items():
        body = html.encode()
        times = (
            timed(partial(bound_html, html)),
            timed(partial(parse_html, body, "http://d.test/")),
            timed(partial(extract_html, body, "text/html", "http://d.test/")),
            timed(partial(relink, html[: 2 * 1024 * 1024], "http://d.test/", _NoneStored())),
        )
        print(f"| {name} | " + " | ".join(f"{t:.3f}" for t in times) + " |")


async def _answer(request: web.Request) -> web.Response:
    host, path = request.host.split(":", 1)[0], request.path
    if path in ("/robots.txt", "/sitemap.xml"):
        raise web.HTTPNotFound()
    if host.startswith("deep.") and path == "/":
        page = ISSUE_PAGE if _DEEP[0] else "<title>shallow</title><a href='/leaf'>leaf</a>"
        return web.Response(text=page, content_type="text/html")
    if host.startswith("deep."):
        return web.Response(text="<title>leaf</title>", content_type="text/html")
    number = 0 if path == "/" else int(path.removeprefix("/p"))
    links = "".join(f"<a href='/p{n}'>{n}</a> " for n in range(number + 1, 30))
    return web.Response(text=f"<title>{number}</title><p>{links}", content_type="text/html")


_DEEP = [True]  # the deep host serves the issue's page (False: an ordinary one, the baseline)


async def end_to_end(work: Path) -> None:
    """The crawl in each mode, `index` and the cached copy, with the deep page and without."""
    for deep in (True, False):
        for workers in ("1", "2"):
            _DEEP[0] = deep
            print(f"\n### {'with' if deep else 'without'} the deep page, --workers {workers}")
            await _end_to_end(work / f"{'deep' if deep else 'flat'}-{workers}", workers)


async def _end_to_end(work: Path, workers: str) -> None:
    runner = web.AppRunner(web.Application(), access_log=None)
    runner.app.router.add_get("/{tail:.*}", _answer)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    seeds = work / "seeds.txt"
    seeds.write_text(f"http://deep.web.test:{port}/\nhttp://normal.web.test:{port}/\n")
    out = work / "out"
    gossamer = [sys.executable, "-m", "gossamer"]
    crawl = [*gossamer, "crawl", str(seeds), "--out", str(out), "--delay", "0"]
    crawl += ["--resolve", "*.web.test:127.0.0.1", "--no-progress", "--workers", workers]
    took = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *crawl, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    await proc.wait()
    took = time.perf_counter() - took
    conn = sqlite3.connect(out / "crawl.db")
    slowest, pages = conn.execute(
        "SELECT max(elapsed), count(*) FROM pages WHERE host LIKE 'normal.%' AND purpose='page'"
    ).fetchone()
    conn.close()
    print(f"\nCrawl: {took:.1f} s; other host's {pages} pages, slowest request {slowest:.3f} s")
    index = await asyncio.create_subprocess_exec(
        *gossamer, "index", str(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    took = time.perf_counter()
    await index.wait()
    print(f"gossamer index: {time.perf_counter() - took:.2f} s (whole command)")
    await runner.cleanup()
    ui = web.AppRunner(make_app(out), access_log=None)
    await ui.setup()
    await web.TCPSite(ui, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{ui.addresses[0][1]}/cached/raw"
    async with ClientSession() as session:
        took = time.perf_counter()
        async with session.get(url, params={"url": f"http://deep.web.test:{port}/"}) as answer:
            size = len(await answer.read())
        print(f"cached copy: {time.perf_counter() - took:.2f} s, {size:,} bytes")
    await ui.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--give-up", type=float, default=5.0)
    parser.add_argument("--end-to-end", action="store_true")
    parser.add_argument("--only-end-to-end", action="store_true", help="skip the parse tables")
    args = parser.parse_args()
    if not args.only_end_to_end:
        lexbor_by_depth(args.give_up)
        gil_released()
        ordinary_pages()
        hostile_pages()
    if args.end_to_end or args.only_end_to_end:
        with tempfile.TemporaryDirectory() as work:
            for name in ("deep-1", "deep-2", "flat-1", "flat-2"):
                (Path(work) / name).mkdir()
            asyncio.run(end_to_end(Path(work)))


if __name__ == "__main__":
    main()
