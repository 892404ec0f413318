"""Web UI, server: the aiohttp application behind ``gossamer serve``.

Data flow: browser -> guard (Host check, error pages, security headers) -> **app** (routes,
parameter checks) -> search engine, page info, cached copies -> pages -> browser; and the
Crawl page (``dashboard``), which follows the crawl running in the folder, if any.

A folder being crawled has no index yet: the search side opens the index on the first search
once ``gossamer index`` has made a complete one, and until then answers 503 with what to run,
while the Crawl page works from the start.

Two policies keep crawled content inert. Our own pages carry no script at all, and their
Content-Security-Policy says so (``default-src 'none'``, see ``guard``): if escaping ever
failed, the browser would still refuse to run what slipped through. Cached copies are served
on ``/cached/raw`` under a stricter policy with the ``sandbox`` directive, which puts the
document in a unique opaque origin with scripts and forms disabled, even when opened directly
rather than through the sandboxed iframe of ``/cached``; ``default-src 'none'`` also stops it
loading anything from the network (no tracking pixels, no stylesheets from the live site),
allowing only inline styles and ``data:`` images. The sandbox allows two things only, both
on a click (see ``links``): a link to another cached copy replaces the whole tab, and a link
to the live web opens a new tab outside the sandbox.

``page`` is ASCII digits from 1 to ``MAX_PAGE``; a page past the last one shows the last one.
Queries take milliseconds, so handlers call the engine directly on the event loop. A cached
copy's link rewrite is the one step that can take longer (up to a few hundred milliseconds
for 2 MiB of HTML, within the parse's cost bound): it runs in a thread (Lexbor lets go of the
GIL while it parses), at most ``_PREPARED_AT_ONCE`` at a time, so the UI goes on answering.
A page's versions are looked up in ``index.cdxj`` in a thread too (about 80 ms in a 92 MB
index), for the page info and ``/cached?url=&at=``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from aiohttp import web

from gossamer.errors import GossamerError
from gossamer.index import IndexingError, WarcReader
from gossamer.index.access import is_writing
from gossamer.index.schema import INDEX_DIR
from gossamer.index.shards import commits
from gossamer.rank.errors import RankError
from gossamer.search.engine import MAX_PAGE, SearchEngine
from gossamer.search.errors import SearchError
from gossamer.search.info import page_info
from gossamer.search.query import MAX_QUERY_CHARS
from gossamer.search.ranking import RankingWeights
from gossamer.search.ready import require_complete_index
from gossamer.search.scatter import RemoteEngine
from gossamer.search.versions import is_timestamp, page_versions
from gossamer.store import CrawlRecords
from gossamer.web.cached import CachedCopy, load_cached, load_version
from gossamer.web.dashboard import Steering, add_dashboard
from gossamer.web.feed import Feed
from gossamer.web.guard import PAGE_POLICY, guard, is_loopback
from gossamer.web.imagepage import image_results_page
from gossamer.web.links import SANDBOX_ALLOWS, relinked
from gossamer.web.pages import cached_page, error_page, home_page, info_page, results_page
from gossamer.web.render import STYLE, local
from gossamer.web.shardapi import add_shard_api
from gossamer.web.weather import Weather, weather_box

__all__ = ["CACHED_POLICY", "PAGE_POLICY", "make_app", "serve"]

log = logging.getLogger(__name__)

CACHED_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    f"form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox {SANDBOX_ALLOWS}"
)
_MAX_URL_CHARS = 8192
_PAGE_DIGITS = len(str(MAX_PAGE))
# Copies being prepared at once: one per core of a small machine; each holds a parse tree of
# up to ~50 MB (24 times a 2 MiB copy), so three at once need not hold 150 MB.
_PREPARED_AT_ONCE = 2


class SearchSide:
    """The folder's search engine, opened once its index is complete (a folder still being
    crawled has none yet), and opened again once a later ``gossamer index`` has ended (after
    a recrawl: changed pages, pages gone), so the UI shows the index as it is."""

    def __init__(
        self, crawl_dir: Path, weights: RankingWeights | None, shards: Sequence[str] = ()
    ) -> None:
        self._dir = crawl_dir
        self._weights = weights
        self._shards = tuple(shards)  # shard servers' URLs: a front (``search.scatter``)
        self._engine: SearchEngine | None = None
        self._commit: tuple[object, ...] | None = None  # tantivy's commits it opened
        self.missing = ""  # why there is no engine yet
        self._open()

    def _open(self) -> None:
        commit = commits(self._dir)
        try:
            require_complete_index(self._dir, remote=bool(self._shards))
            engine = (
                RemoteEngine(self._dir, self._shards, self._weights)
                if self._shards
                else SearchEngine(self._dir, self._weights)
            )
            try:
                if engine.weights.hybrid:
                    # The model and the vectors load now (half a second), not on the event
                    # loop in the middle of someone's first query.
                    engine.ranked_urls("warm up", limit=1)
            except SearchError:
                engine.close()
                raise
        except (IndexingError, RankError, SearchError) as exc:  # the reason names the command
            self.missing = str(exc)
            return
        self._engine, self._commit = engine, commit
        self.missing = ""

    def _reopen_if_indexed(self) -> None:
        """Open the index again when a ``gossamer index`` run has committed to it and ended
        (while one runs, the snapshot opened stays); a failure keeps the engine open."""
        if commits(self._dir) == self._commit or is_writing(self._dir / INDEX_DIR):
            return
        opened, self._engine = self._engine, None
        try:
            self._open()
        finally:
            if self._engine is None:  # e.g. a run killed half-way: the snapshot is whole
                self._engine = opened
                self._commit = commits(self._dir)  # not tried again at every request
            elif opened is not None:
                opened.close()

    def engine(self) -> SearchEngine:
        """The engine; 503 with the reason while the folder has no complete index."""
        if self._engine is None:
            self._open()
        else:
            self._reopen_if_indexed()
        if self._engine is None:
            raise web.HTTPServiceUnavailable(text=f"Search is not ready: {self.missing}.")
        return self._engine

    @property
    def documents(self) -> int | None:
        return None if self._engine is None else self._engine.documents

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()


ENGINE = web.AppKey("engine", SearchSide)
RECORDS = web.AppKey("records", CrawlRecords)
READER = web.AppKey("reader", WarcReader)
ENGLISH = web.AppKey("english", bool)
PREPARING = web.AppKey("preparing", asyncio.Semaphore)
FOLDER = web.AppKey("folder", Path)
WEATHER = web.AppKey("weather", Weather)
# The weather box is the one page of ours shown in a frame, and only in our own pages.
WEATHER_POLICY = PAGE_POLICY.replace("frame-ancestors 'none'", "frame-ancestors 'self'")


class _AskedOnLoop:
    """``stored_pages`` for a copy prepared in a thread, asked on the event loop: the
    read-only ``crawl.db`` connection serves one thread at a time, and handlers use it."""

    def __init__(self, records: CrawlRecords, loop: asyncio.AbstractEventLoop) -> None:
        self._records = records
        self._loop = loop

    def stored_pages(self, urls: Collection[str]) -> set[str]:
        async def ask() -> set[str]:
            return self._records.stored_pages(urls)

        return asyncio.run_coroutine_threadsafe(ask(), self._loop).result()


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def _param(request: web.Request, name: str, limit: int) -> str:
    value = request.query.get(name, "")
    if len(value) > limit:
        raise SearchError(f"the {name} parameter is too long")
    return value


def _english(request: web.Request) -> bool:
    return request.query.get("lang") == "en" or request.app[ENGLISH]


async def _home(request: web.Request) -> web.StreamResponse:
    if request.query.get("q"):
        return await _search(request)
    side = request.app[ENGINE]
    try:
        side.engine()  # an index made since the start is opened now
    except web.HTTPServiceUnavailable:
        return _html(home_page(None, side.missing))
    return _html(home_page(side.documents))


def _page_number(request: web.Request) -> int:
    text = request.query.get("page", "1")
    # str.isdigit alone also accepts "²" and "①", which int() refuses, and any length.
    if text.isascii() and text.isdigit() and len(text) <= _PAGE_DIGITS:
        number = int(text)
        if 1 <= number <= MAX_PAGE:
            return number
    raise SearchError(f"page must be a number from 1 to {MAX_PAGE}")


async def _search(request: web.Request) -> web.StreamResponse:
    query = _param(request, "q", MAX_QUERY_CHARS)
    page = _page_number(request)
    english = _english(request)
    language = "en" if english else None
    engine = request.app[ENGINE].engine()
    # A page past the last one (an old link, a hand-typed URL) is clamped by the engine.
    if isinstance(engine, RemoteEngine):  # waits on shard servers: not on the event loop
        result = await asyncio.to_thread(engine.search, query, page=page, language=language)
    else:
        result = engine.search(query, page=page, language=language)
    weather = request.app.get(WEATHER)
    named = weather is not None and weather.gazetteer.place_in(query) is not None
    return _html(results_page(result, english, local("/weather", q=query) if named else ""))


async def _weather(request: web.Request) -> web.StreamResponse:
    """The weather box's frame: the forecast for the place the query names, or an empty
    page (no box) when there is none, the flag is off or the API fails."""
    query = _param(request, "q", MAX_QUERY_CHARS)
    weather = request.app.get(WEATHER)
    place = weather.gazetteer.place_in(query) if weather is not None else None
    found = await weather.service.forecast(place) if weather and place else None
    response = _html(weather_box(found))
    response.headers["Content-Security-Policy"] = WEATHER_POLICY
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


async def _images(request: web.Request) -> web.StreamResponse:
    """The Images tab: one SQLite look-up, opened per request (milliseconds), so an index
    made while serving is found."""
    from gossamer.search.images import ImageSearch  # noqa: PLC0415 - the tab's own

    query = _param(request, "q", MAX_QUERY_CHARS)
    page = _page_number(request)
    request.app[ENGINE].engine()  # 503 with what to run while there is no complete index
    try:
        with ImageSearch(request.app[FOLDER]) as images:
            result = images.search(query, page=page)
    except (SearchError, IndexingError) as exc:  # no image store yet, or a damaged one
        raise web.HTTPServiceUnavailable(text=f"Image search is not ready: {exc}.") from exc
    archived = request.app[RECORDS].stored_pages([image.url for image in result.images])
    return _html(image_results_page(result, archived))


async def _info(request: web.Request) -> web.StreamResponse:
    url = _param(request, "url", _MAX_URL_CHARS)
    query = _param(request, "q", MAX_QUERY_CHARS)
    versions = await asyncio.to_thread(page_versions, request.app[FOLDER], url)
    engine = request.app[ENGINE].engine()  # after the wait: it may have been opened again
    info = page_info(engine, request.app[RECORDS], url, query, versions)
    if info is None:
        return _html(error_page("Not found", "This URL is not in the crawl."), status=404)
    return _html(info_page(info, _english(request)))


async def _copy(request: web.Request) -> CachedCopy | None:
    """The copy ``/cached`` and ``/cached/raw`` show: the one crawl.db points at, or with
    ``at`` (a capture's 14-digit time, from the page info's versions) that version."""
    url = _param(request, "url", _MAX_URL_CHARS)
    at = request.query.get("at", "")
    if not at:
        return load_cached(request.app[RECORDS], request.app[READER], url)
    if not is_timestamp(at):
        raise SearchError("at must be a capture time of 14 digits, as the page info lists them")
    versions = await asyncio.to_thread(page_versions, request.app[FOLDER], url)
    return load_version(request.app[READER], url, at, versions)


async def _cached(request: web.Request) -> web.StreamResponse:
    copy = await _copy(request)
    if copy is None:
        return _html(error_page("Not found", "No archived copy of this URL."), status=404)
    raw = local("/cached/raw", url=copy.url, at=copy.at)
    return _html(cached_page(copy.url, copy.crawled, raw, copy.cut, note=copy.note))


async def _cached_raw(request: web.Request) -> web.StreamResponse:
    copy = await _copy(request)
    if copy is None:
        raise web.HTTPNotFound(text="No archived copy of this URL.")
    records = _AskedOnLoop(request.app[RECORDS], asyncio.get_running_loop())
    async with request.app[PREPARING]:
        copy = await asyncio.to_thread(relinked, copy, records)
    response = web.Response(body=copy.body, headers={"Content-Type": copy.content_type})
    response.headers["Content-Security-Policy"] = CACHED_POLICY
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


async def _style(request: web.Request) -> web.StreamResponse:
    return web.Response(text=STYLE, content_type="text/css", charset="utf-8")


async def _close(app: web.Application) -> None:
    weather = app.get(WEATHER)
    if weather is not None:
        await weather.service.close()
    app[ENGINE].close()
    app[RECORDS].close()
    app[READER].close()


def make_app(
    crawl_dir: Path,
    *,
    weights: RankingWeights | None = None,
    english: bool = False,
    bind: str = "127.0.0.1",
    control_token: str | None = None,
    feed: Feed | None = None,
    weather: Weather | None = None,
    shards: Sequence[str] = (),
) -> web.Application:
    """The web UI for one crawl folder, to listen on ``bind``; opens the index now if it is
    complete. On a loopback ``bind`` it answers only to loopback host names. Steering the
    crawl needs ``control_token`` when ``bind`` is not loopback (see ``dashboard``). The Crawl
    page follows ``feed``, by default the crawl running in ``crawl_dir``. With ``weather``,
    a query naming a city shows the weather box. With ``shards`` (shard servers' URLs) the
    search goes to them (``search.scatter``); every server answers as a shard server too
    (``shardapi``)."""
    side = SearchSide(crawl_dir, weights, shards)
    app = web.Application(middlewares=[guard(bind)])
    app[ENGINE] = side
    app[RECORDS] = CrawlRecords(crawl_dir / "crawl.db")
    app[READER] = WarcReader(crawl_dir / "warc")
    app[ENGLISH] = english
    app[PREPARING] = asyncio.Semaphore(_PREPARED_AT_ONCE)
    app[FOLDER] = crawl_dir
    if weather is not None:
        app[WEATHER] = weather
    app.on_cleanup.append(_close)
    app.router.add_get("/", _home)
    app.router.add_get("/search", _search)
    app.router.add_get("/images", _images)
    app.router.add_get("/weather", _weather)
    app.router.add_get("/info", _info)
    app.router.add_get("/cached", _cached)
    app.router.add_get("/cached/raw", _cached_raw)
    app.router.add_get("/style.css", _style)
    add_dashboard(app, crawl_dir, Steering.for_bind(bind, control_token), feed)
    add_shard_api(app, side.engine)
    return app


def serve(
    crawl_dir: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    weights: RankingWeights | None = None,
    english: bool = False,
    control_token: str | None = None,
    feed: Feed | None = None,
    listening: Callable[[], None] | None = None,
    weather_api: str | None = None,
    shards: Sequence[str] = (),
) -> int:
    """Run the web UI until interrupted (``gossamer serve``); ``listening`` is called once the
    socket is bound (a port in use is then the only line said). ``weather_api``: the base
    URL of the forecast API of the weather box, None for no box."""
    app = make_app(
        crawl_dir,
        weights=weights,
        english=english,
        bind=host,
        control_token=control_token,
        feed=feed,
        weather=None if weather_api is None else Weather.packaged(weather_api),
        shards=shards,
    )
    if not is_loopback(host):
        log.warning("serving on %s: anyone who can reach it can read the crawl", host)
        if control_token is None:
            log.warning("steering the crawl from the page is off: no --control-token given")
    try:
        said = None if listening is None else (lambda *_: listening())
        web.run_app(app, host=host, port=port, print=said, handle_signals=True)
    except OSError as exc:
        raise GossamerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return 0
