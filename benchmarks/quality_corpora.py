"""The documentation corpora of the search-quality benchmark: served, crawled, indexed, judged.

Each corpus is a Debian documentation package served by a small aiohttp static server on
127.0.0.1 under a made-up host name (mapped with ``gossamer crawl --resolve``), crawled by
``gossamer crawl``, then indexed and ranked (``build_index``, ``rank_crawl``: what the
``index`` and ``rank`` commands call). Its judged queries live in
``benchmarks/queries/<name>.tsv``: a query, a tab, the paths of the pages that answer it
(binary relevance, judged by reading the pages), separated by spaces.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from gossamer.index import build_index
from gossamer.rank import rank_crawl

BIN = Path(sys.executable).parent
QUERIES = Path(__file__).parent / "queries"


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str
    docs: Path  # the folder served
    package: str  # the Debian package that installs it
    host: str
    tunable: bool = True  # False: never a tuning corpus, only ever measured (held out)

    def judgments(self) -> dict[str, tuple[str, ...]]:
        """Query -> paths of the pages that answer it, from ``queries/<name>.tsv``."""
        judged: dict[str, tuple[str, ...]] = {}
        for line in (QUERIES / f"{self.name}.tsv").read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                query, answers = line.split("\t")
                judged[query] = tuple(answers.split())
        return judged


CORPORA = {
    "sqlite": Corpus("sqlite", Path("/usr/share/doc/sqlite3"), "sqlite3-doc", "sqlite.docs.test"),
    "python": Corpus(
        "python", Path("/usr/share/doc/python3.11/html"), "python3.11-doc", "python.docs.test"
    ),
    # Held out: nothing was tuned on it (its judgments were written before any ranking ran).
    "git": Corpus("git", Path("/usr/share/doc/git-doc"), "git-doc", "git.docs.test", tunable=False),
    # Held out and unseen: its judgments were written blind to any ranking, and no figure of
    # any ranking on it was seen before the protocol's postgres amendment was committed.
    "postgres": Corpus(
        "postgres",
        Path("/usr/share/doc/postgresql-doc-15/html"),
        "postgresql-doc-15",
        "postgres.docs.test",
        tunable=False,
    ),
}


class StaticSite:
    """Serves a folder on 127.0.0.1 from a thread of its own; ``with`` starts and stops it."""

    def __init__(self, folder: Path) -> None:
        self._app = web.Application()
        self._app.router.add_static("/", folder)
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self.port = 0

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        runner = web.AppRunner(self._app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self.port = runner.addresses[0][1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def __enter__(self) -> StaticSite:
        self._thread.start()
        if not self._ready.wait(30):
            raise SystemExit("the static server did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


def _crawl(corpus: Corpus, folder: Path) -> None:
    with StaticSite(corpus.docs) as site:
        seeds = folder.parent / f"{corpus.name}-seeds.txt"
        seeds.write_text(f"http://{corpus.host}:{site.port}/index.html\n", encoding="utf-8")
        started = time.perf_counter()
        subprocess.run(
            [BIN / "gossamer", "crawl", str(seeds), "--out", str(folder), "--no-progress",
             "--resolve", f"{corpus.host}:127.0.0.1", "--delay", "0", "--max-per-host", "4"],
            check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"{corpus.name} crawl: {time.perf_counter() - started:.1f} s")


def prepare(corpus: Corpus, out: Path, *, reuse: bool) -> Path:
    """The crawl folder of ``corpus`` under ``out``, crawled, indexed and ranked.

    With ``reuse``, a folder an earlier run finished is used as it is (a crawl takes a
    minute; the index and ranks are built again, which takes seconds).
    """
    if not (corpus.docs / "index.html").is_file():
        raise SystemExit(
            f"install Debian's {corpus.package} first: apt-get install {corpus.package}"
        )
    folder = out / corpus.name
    if not (reuse and (folder / "crawl.db").is_file()):
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        _crawl(corpus, folder)
    shutil.rmtree(folder / "index", ignore_errors=True)
    report = build_index(folder)
    print(
        f"{corpus.name} index: {report.indexed} documents in {report.seconds:.1f} s"
        f" ({report.relinked} rewritten with later anchors)"
    )
    ranks = rank_crawl(folder)
    print(f"{corpus.name} rank: {ranks.urls.nodes} URLs, {ranks.urls.iterations} iterations")
    return folder
