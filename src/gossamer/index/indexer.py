"""Index stage, driver: ``gossamer index DIR`` turns new crawl pages into searchable documents.

Data flow: crawl.db + WARC -> extract -> language + near-duplicate keys (simhash, MinHash)
-> duplicate group (``near``) -> document store -> tantivy; each page's links with their
words go to the anchor store, and a last step (``relink``) rewrites the documents whose
anchor text changed after they were written; at the end, an index holding many deleted
documents is written again from its live ones (``compact``). Only pages without a row in the
document store, or with an older one, are read (see ``docstore``), so after a resumed crawl
or a recrawl only the new and changed documents are indexed; a changed page's document, keys,
anchors and images replace the old version's. Before them, the pages gone since the last run
(``DocStore.gone``: now 404/410, a redirect, or no row) are deleted from tantivy, the
document store, the anchor and image stores; their vectors are zeroed by ``vectors``.

Reading and extraction are CPU-bound Python and run in a pool of worker processes when
there is enough to do; the parent keeps the two writers (tantivy and SQLite) to itself, as
both want a single writer. Chunks go to the pool with at most two per worker in flight, so
a slow writer holds back the readers instead of piling results up in memory.

Each batch is committed to tantivy first and then to the document store. A run killed in
between leaves documents that tantivy has and the store does not; an ``in_flight`` mark,
set before a batch starts and cleared in the store's commit of it, makes the next run
delete each document's URL from tantivy before adding it again. A deletion needs no mark:
the page's row leaves the document store only in the commit after tantivy's, so a run killed
in between finds it gone again and deletes it again. With ``embeddings`` (or
once a folder has page vectors), the pages new to tantivy are then embedded beside it
(``vectors``). An index written by an
older Gossamer, without a field this one writes, or a damaged one (``schema.unusable``) is
deleted and built again from the crawl.

With ``shards`` (``gossamer index DIR --shards N``) the tantivy index is split into N shards
by URL (``shards``); the stores stay crawl-wide, so duplicate groups, anchors and images are
the same as in a single index, and later runs keep the shards (incremental runs work: a
document's shard is a hash of its URL). A different number of shards than the index has is
refused. ``extracted`` lets another engine (Spark) do the reading and extraction: it gets
the pending pages and yields them as ``ExtractedPage`` batches, in any order.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import tantivy

from gossamer.index.access import LOCK_NAME, IndexLock
from gossamer.index.anchors import ANCHORS_FILE, AnchorStore
from gossamer.index.archive import WarcReader, text_source
from gossamer.index.compact import Compaction, compact, recover
from gossamer.index.document import PageFacts, page_document
from gossamer.index.embed import semantic_installed
from gossamer.index.errors import IndexingError
from gossamer.index.extract import PageText, extract, kind_of
from gossamer.index.imagestore import IMAGES_FILE, ImageStore
from gossamer.index.language import detect_language
from gossamer.index.near import NearKeys, choose_group, near_keys
from gossamer.index.redirects import redirect_targets
from gossamer.index.relink import relink
from gossamer.index.schema import (
    DOCSTORE_FILE,
    INDEX_DIR,
    Fields,
    IndexHandle,
    clear_index,
    drop_unusable,
    has_tantivy,
    open_index,
)
from gossamer.index.shards import (
    LAYOUT_FILE,
    ShardWriters,
    open_shards,
    read_layout,
    relink_shards,
    write_layout,
)
from gossamer.index.vectors import VectorReport, has_vectors, update_vectors
from gossamer.store.docstore import DocRow, DocStore, PendingPage
from gossamer.store.records import MAX_DECODED
from gossamer.urls import host_or_empty

__all__ = [
    "DOCSTORE_FILE",
    "ExtractedPage",
    "Extractor",
    "IndexReport",
    "build_index",
    "read_pages",
]

log = logging.getLogger(__name__)

_CHUNK = 250  # pages per task sent to a worker process
_WRITER_HEAP = 256 * 1024 * 1024
_POOL_MIN_PAGES = 2000  # below this, starting worker processes costs more than it saves
# The page's WARC record is missing or damaged: counted as skipped, but not marked as seen,
# so it is read again once a resumed crawl has fetched it anew.
UNREADABLE = "unreadable_record"


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    """What the reader made of one pending page; ``skip`` names why it is not indexed."""

    page: PendingPage
    host: str
    crawled: str  # WARC-Date of the response
    mime: str
    text: PageText | None
    lang: str
    keys: NearKeys
    words: int
    skip: str = ""  # "", "not_text", "noindex", "empty", "bad_encoding", UNREADABLE


@dataclass(frozen=True, slots=True)
class IndexReport:
    """The outcome of one ``gossamer index`` run."""

    pending: int
    indexed: int
    skipped: dict[str, int]
    exact_duplicates: int  # pages added this run whose content another page has exactly
    near_duplicates: int  # pages added this run grouped with a near-duplicate
    documents: int  # indexed documents in total, after this run
    seconds: float
    workers: int
    languages: dict[str, int] = field(default_factory=dict)
    relinked: int = 0  # documents written again with the words of links found later
    removed: int = 0  # pages gone since the last run (404/410, moved, no row), deleted
    vectors: VectorReport | None = None  # None: the folder keeps no page vectors
    compaction: Compaction = field(default_factory=Compaction)

    @property
    def pages_per_second(self) -> float:
        return self.pending / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())) or "none"
        langs = ", ".join(f"{k} {v}" for k, v in sorted(self.languages.items())) or "none"
        return "\n".join(
            [
                f"new pages read:      {self.pending}",
                f"indexed:             {self.indexed}",
                f"gone, removed:       {self.removed}",
                f"skipped:             {skipped}",
                f"exact duplicates:    {self.exact_duplicates}",
                f"near duplicates:     {self.near_duplicates}",
                f"languages:           {langs}",
                f"anchor text updated: {self.relinked}",
                f"documents in index:  {self.documents}",
                f"time:                {self.seconds:.2f} s"
                f" ({self.pages_per_second:.0f} pages/s, {self.workers} worker(s))",
                *([self.vectors.summary()] if self.vectors is not None else []),
                *([self.compaction.summary()] if self.compaction.reclaimed else []),
            ]
        )


_NO_KEYS = NearKeys()
# What another engine passes to ``build_index`` to read and extract the pending pages itself.
Extractor = Callable[[Sequence[PendingPage]], Iterable[list[ExtractedPage]]]


def _read_one(reader: WarcReader, page: PendingPage) -> ExtractedPage:
    host = host_or_empty(page.url)
    if kind_of(page.content_type) is None:
        return ExtractedPage(
            page, host, "", page.content_type or "", None, "", _NO_KEYS, 0, "not_text"
        )
    try:
        response = reader.read(page.warc_file, page.warc_offset, page.warc_length)
    except IndexingError as exc:
        log.warning("skipping %s: %s", page.url, exc)
        return ExtractedPage(
            page, host, "", page.content_type or "", None, "", _NO_KEYS, 0, UNREADABLE
        )
    mime = page.content_type or response.content_type or ""  # crawl.db holds the sniffed type
    if response.decode_error:
        return ExtractedPage(page, host, response.date, mime, None, "", _NO_KEYS, 0, "bad_encoding")
    place = (page.warc_file, page.warc_offset, page.warc_length)
    content, rendered_type = text_source(reader, response, place, page.render)
    text = extract(content, rendered_type or mime, page.url)
    if text is None:
        return ExtractedPage(page, host, response.date, mime, None, "", _NO_KEYS, 0, "not_text")
    if text.noindex:
        return ExtractedPage(page, host, response.date, mime, text, "", _NO_KEYS, 0, "noindex")
    words = len(text.body.split())
    if not words and not text.title:
        return ExtractedPage(page, host, response.date, mime, text, "", _NO_KEYS, 0, "empty")
    lang = detect_language(f"{text.title}\n{text.body}", text.lang_hint)
    return ExtractedPage(page, host, response.date, mime, text, lang, near_keys(text.body), words)


def read_pages(
    crawl_dir: Path, pages: Sequence[PendingPage], max_decoded: int = MAX_DECODED
) -> list[ExtractedPage]:
    """Read and extract ``pages`` from the crawl's WARC files (runs in worker processes).

    ``max_decoded`` caps a decoded body: the crawl's ``fetch.max_decoded``.
    """
    with WarcReader(crawl_dir / "warc", max_decoded=max_decoded) as reader:
        return [_read_one(reader, page) for page in pages]


def _chunks(pages: Sequence[PendingPage], size: int) -> Iterator[Sequence[PendingPage]]:
    for start in range(0, len(pages), size):
        yield pages[start : start + size]


def _extracted(
    crawl_dir: Path, pages: Sequence[PendingPage], workers: int, max_decoded: int
) -> Iterator[list[ExtractedPage]]:
    if workers <= 1 or len(pages) < _POOL_MIN_PAGES:
        for chunk in _chunks(pages, _CHUNK):
            yield read_pages(crawl_dir, chunk, max_decoded)
        return
    # spawn, not fork: the parent may already run tantivy's threads.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        in_flight: deque[Future[list[ExtractedPage]]] = deque()
        try:
            for chunk in _chunks(pages, _CHUNK):
                if len(in_flight) >= 2 * workers:
                    yield in_flight.popleft().result()
                in_flight.append(pool.submit(read_pages, crawl_dir, chunk, max_decoded))
            while in_flight:
                yield in_flight.popleft().result()
        finally:
            for future in in_flight:
                future.cancel()


@dataclass
class _Tally:
    indexed: int = 0
    exact: int = 0
    near: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    languages: Counter[str] = field(default_factory=Counter)
    relinked: int = 0
    removed: int = 0


@dataclass(frozen=True, slots=True)
class _Sinks:
    """Where one run writes: the document store, the anchor and image stores, tantivy."""

    store: DocStore
    anchors: AnchorStore
    writer: tantivy.IndexWriter | ShardWriters
    images: ImageStore

    def begin(self) -> None:
        # Marked before tantivy can get ahead of the store, cleared in the batch's own commit.
        self.store.set_in_flight(True)
        self.store.begin()
        self.anchors.begin()
        self.images.begin()

    def commit(self) -> None:
        try:
            self.writer.commit()
        except ValueError as exc:
            raise IndexingError(f"cannot write the search index: {exc}") from exc
        self.anchors.commit()
        self.images.commit()
        self.store.set_in_flight(False)
        self.store.commit()

    def rollback(self) -> None:
        self.store.rollback()
        self.anchors.rollback()
        self.images.rollback()
        self.writer.rollback()


def _store(item: ExtractedPage, sinks: _Sinks, recovering: bool, tally: _Tally) -> None:
    page = item.page
    if item.skip == UNREADABLE:
        tally.skipped[item.skip] += 1
        return
    store, writer = sinks.store, sinks.writer
    if page.old_num is not None:
        store.forget(page.old_num)
    if page.old_num is not None or recovering:
        writer.delete_documents_by_term(Fields.URL_ID, page.url_id)
    text = item.text
    if text is not None:
        sinks.anchors.replace(page.url_id, item.host, text.anchors)
        shown = text.images if not item.skip else ()  # a noindex page's images stay out too
        sinks.images.replace(page.url_id, page.url, text.title, shown)
    elif page.old_num is not None:
        # The new version has no text (now an image, or undecodable): the old version's
        # links and images go with its document.
        sinks.anchors.replace(page.url_id, item.host, ())
        sinks.images.drop(page.url_id)
    kind = text.kind if text is not None else (kind_of(item.mime) or "other")
    grouping = choose_group(store, page.doc_id, item.keys) if not item.skip else None
    row = store.add(
        url_id=page.url_id,
        url=page.url,
        host=item.host,
        doc_id=page.doc_id,
        fetched_at=page.fetched_at,
        kind=kind,
        lang=item.lang,
        title=text.title if text is not None else "",
        words=item.words,
        keys=item.keys,
        group=grouping.group if grouping is not None else None,
        indexed=not item.skip,
    )
    if item.skip or text is None:
        tally.skipped[item.skip] += 1
        return
    facts = PageFacts(
        page.url, page.url_id, item.host, item.lang, item.mime, page.fetched_at,
        page.doc_id, row.num, row.group_id,
    )  # fmt: skip
    anchor_text = sinks.anchors.values_for(page.url, item.host)
    writer.add_document(page_document(text, facts, anchor_text))
    tally.indexed += 1
    tally.languages[item.lang] += 1
    if grouping is not None:
        tally.exact += grouping.how == "exact"
        tally.near += grouping.how == "near"


def _remove(row: DocRow, sinks: _Sinks, tally: _Tally) -> None:
    """Delete a gone page everywhere it is kept; its vector row is zeroed by ``vectors``."""
    sinks.writer.delete_documents_by_term(Fields.URL_ID, row.url_id)
    sinks.anchors.replace(row.url_id, row.host, ())  # the pages it linked to lose its words
    sinks.images.drop(row.url_id)
    sinks.store.forget(row.num)
    tally.removed += 1


def build_index(
    crawl_dir: Path,
    *,
    workers: int = 1,
    batch_size: int = 5000,
    progress: Callable[[int, int], None] | None = None,
    max_decoded: int = MAX_DECODED,
    embeddings: bool = False,
    shards: int | None = None,
    extracted: Extractor | None = None,
) -> IndexReport:
    """Index the pages of ``crawl_dir`` that are not indexed yet; see the module docstring.

    ``max_decoded`` caps a decoded body, as the crawl's ``fetch.max_decoded`` did.
    ``embeddings`` starts page vectors (the ``semantic`` extra); a folder that has them
    keeps them up to date without it. ``shards`` (2 or more) splits a new index into that
    many shards; None keeps what the index has. ``extracted`` replaces the reading of the
    WARC files (see the module docstring).
    """
    started = time.perf_counter()
    crawl_db = crawl_dir / "crawl.db"
    if not crawl_db.is_file():
        raise IndexingError(f"{crawl_dir} has no crawl.db; is it a crawl folder?")
    tally = _Tally()
    index_dir = crawl_dir / INDEX_DIR
    # One run at a time: the lock is taken before anything under DIR/index is touched.
    vectors: VectorReport | None = None
    with IndexLock(crawl_dir, index_dir):
        recover(crawl_dir)  # first: a killed compaction may have moved the index aside
        # Asked before a damaged index (and its vectors) is dropped: rebuilt, it keeps them.
        keep_vectors = embeddings or has_vectors(index_dir)
        sharded = _layout(crawl_dir, shards)
        if sharded is not None and keep_vectors:
            log.warning("page vectors are not kept for a sharded index (%s)", crawl_dir)
            keep_vectors = False
        dropped = _drop_unusable_shards(crawl_dir, sharded) if sharded else drop_unusable(crawl_dir)
        if dropped:
            log.warning("the index of %s was %s; building it again", crawl_dir, dropped)
        images_before = (index_dir / IMAGES_FILE).exists()
        with (
            DocStore(index_dir / DOCSTORE_FILE) as store,
            AnchorStore(index_dir / ANCHORS_FILE) as anchors,
            ImageStore(index_dir / IMAGES_FILE) as images,
        ):
            if not images_before and store.count():
                # Pages are read once; those indexed before images were kept are not read
                # again, so their images are found only after a rebuild.
                log.warning(
                    "the images of the %d pages indexed before are not kept: 'rm -r %s' and"
                    " index again to search them",
                    store.count(),
                    index_dir,
                )
            pending, handle = _run(
                crawl_dir,
                store,
                anchors,
                images,
                tally=tally,
                progress=progress,
                max_decoded=max_decoded,
                workers=workers,
                batch_size=batch_size,
                shards=sharded,
                extracted=extracted,
            )
            documents = store.count()
            if keep_vectors and handle is not None and semantic_installed():
                vectors = update_vectors(crawl_dir, handle)
            elif keep_vectors:
                log.warning(
                    "the page vectors of %s are not updated: pip install 'gossamer[semantic]'",
                    crawl_dir,
                )
            # Last, with every writer closed (``_run`` waited for them): tantivy's lock.
            compaction = compact(crawl_dir, anchors)
    return IndexReport(
        vectors=vectors,
        compaction=compaction,
        pending=len(pending),
        relinked=tally.relinked,
        removed=tally.removed,
        indexed=tally.indexed,
        skipped=dict(tally.skipped),
        exact_duplicates=tally.exact,
        near_duplicates=tally.near,
        documents=documents,
        seconds=time.perf_counter() - started,
        workers=workers if len(pending) >= _POOL_MIN_PAGES else 1,
        languages=dict(tally.languages),
    )


def _run(
    crawl_dir: Path,
    store: DocStore,
    anchors: AnchorStore,
    images: ImageStore,
    *,
    tally: _Tally,
    progress: Callable[[int, int], None] | None,
    max_decoded: int,
    workers: int,
    batch_size: int,
    shards: int | None,
    extracted: Extractor | None,
) -> tuple[list[PendingPage], IndexHandle | None]:
    """Index the pending pages of an open store in batches; the pages it read, and the
    single index's handle (None for a sharded one)."""
    handle: IndexHandle | None = None
    writer: tantivy.IndexWriter | ShardWriters
    if shards is None:
        handle = open_index(crawl_dir, create=True)
        writer = _writer(crawl_dir, handle)
    else:
        writer = ShardWriters(open_shards(crawl_dir, shards, create=True))
    if store.upgraded:
        log.warning(
            "the index was written by an older Gossamer: pages indexed before are found as"
            " near-duplicates by simhash only; 'rm -r %s' and index again for MinHash",
            crawl_dir / INDEX_DIR,
        )
    gone = store.gone(crawl_dir / "crawl.db")
    pending = store.pending(crawl_dir / "crawl.db")
    recovering = store.in_flight
    if recovering:
        log.warning("the last index run was interrupted; re-adding its documents safely")
    sinks = _Sinks(store, anchors, writer, images)
    anchors.aliases = redirect_targets(crawl_dir / "crawl.db")
    done = 0
    sinks.begin()
    try:
        anchors.move_aliases()
        for row in gone:  # first: a gone page's group no longer draws the pages after it
            _remove(row, sinks, tally)
        batches = (
            extracted(pending)
            if extracted is not None
            else _extracted(crawl_dir, pending, workers, max_decoded)
        )
        for items in batches:
            for item in items:
                _store(item, sinks, recovering, tally)
            done += len(items)
            if progress is not None:
                progress(done, len(pending))
            if done % batch_size < len(items):
                sinks.commit()
                sinks.begin()
        sinks.commit()
    except BaseException:
        sinks.rollback()
        raise
    if isinstance(writer, ShardWriters):
        tally.relinked = relink_shards(writer.handles, writer, anchors)
    else:
        assert handle is not None
        tally.relinked = relink(handle, writer, anchors)
    writer.wait_merging_threads()
    return pending, handle


def _layout(crawl_dir: Path, shards: int | None) -> int | None:
    """The number of shards this run writes (None: a single index), written down for a new
    index; a change of it on an index that has documents is refused."""
    existing = read_layout(crawl_dir)
    wanted = shards if shards is None or shards > 1 else None
    if shards is None:
        return existing
    if wanted == existing:
        return existing
    has_documents = existing is not None or has_tantivy(crawl_dir)
    if has_documents:
        now = f"{existing} shards" if existing else "one unsharded index"
        raise IndexingError(
            f"the index of {crawl_dir} has {now}; to index it as {shards}, delete it"
            f" ('rm -r {crawl_dir / INDEX_DIR}') and index again"
        )
    if wanted is not None:
        write_layout(crawl_dir, wanted)
    return wanted


def _drop_unusable_shards(crawl_dir: Path, shards: int) -> str:
    """``drop_unusable`` for a sharded index: a shard that cannot be opened (or written by
    an older Gossamer) has everything but the lock and the layout deleted; why, or ""."""
    try:
        open_shards(crawl_dir, shards, create=True)
    except IndexingError as exc:
        reason = str(exc)
    else:
        return ""
    index_dir = crawl_dir / INDEX_DIR
    try:
        clear_index(index_dir, keep=(LOCK_NAME, LAYOUT_FILE))
    except OSError as exc:
        raise IndexingError(f"cannot replace the search index {index_dir}: {exc}") from exc
    return reason


def _writer(crawl_dir: Path, handle: IndexHandle) -> tantivy.IndexWriter:
    try:
        return handle.index.writer(heap_size=_WRITER_HEAP)
    except ValueError as exc:
        # Tantivy's own lock: held by a writer that does not take ours (an older version).
        busy = "LockBusy" in str(exc)
        raise IndexingError(
            f"index of {crawl_dir} is being written by another process"
            if busy
            else f"cannot write the search index of {crawl_dir}: {exc}"
        ) from exc
