"""Index stage, driver: ``gossamer index DIR`` turns new crawl pages into searchable documents.

Data flow: crawl.db + WARC -> extract -> language + near-duplicate keys (simhash, MinHash)
-> duplicate group (``near``) -> document store -> tantivy. Only pages without a row in the
document store are read (see ``docstore``), so after a resumed crawl only the new documents
are indexed.

Reading and extraction are CPU-bound Python and run in a pool of worker processes when
there is enough to do; the parent keeps the two writers (tantivy and SQLite) to itself, as
both want a single writer. Chunks go to the pool with at most two per worker in flight, so
a slow writer holds back the readers instead of piling results up in memory.

Each batch is committed to tantivy first and then to the document store. A run killed in
between leaves documents that tantivy has and the store does not; an ``in_flight`` mark,
set before a batch starts and cleared in the store's commit of it, makes the next run
delete each document's URL from tantivy before adding it again.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import tantivy

from gossamer.index.access import IndexLock
from gossamer.index.archive import WarcReader
from gossamer.index.errors import IndexingError
from gossamer.index.extract import PageText, extract, kind_of
from gossamer.index.language import detect_language
from gossamer.index.near import NearKeys, choose_group, near_keys
from gossamer.index.schema import INDEX_DIR, Fields, IndexHandle, open_index
from gossamer.store.docstore import DocRow, DocStore, PendingPage
from gossamer.store.records import MAX_DECODED
from gossamer.urls import host_or_empty

__all__ = ["DOCSTORE_FILE", "ExtractedPage", "IndexReport", "build_index", "read_pages"]

log = logging.getLogger(__name__)

DOCSTORE_FILE = "docs.db"
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
                f"skipped:             {skipped}",
                f"exact duplicates:    {self.exact_duplicates}",
                f"near duplicates:     {self.near_duplicates}",
                f"languages:           {langs}",
                f"documents in index:  {self.documents}",
                f"time:                {self.seconds:.2f} s"
                f" ({self.pages_per_second:.0f} pages/s, {self.workers} worker(s))",
            ]
        )


_NO_KEYS = NearKeys()


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
    mime = response.content_type or page.content_type or ""
    if response.decode_error:
        return ExtractedPage(page, host, response.date, mime, None, "", _NO_KEYS, 0, "bad_encoding")
    text = extract(response.content, mime)
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


def _document(item: ExtractedPage, row: DocRow) -> tantivy.Document:
    text = item.text
    assert text is not None  # only indexable pages become documents
    page = item.page
    doc = tantivy.Document()
    doc.add_text(Fields.URL, page.url)
    doc.add_text(Fields.URL_ID, page.url_id)
    doc.add_text(Fields.URL_WORDS, page.url)
    doc.add_text(Fields.TITLE, text.title)
    for heading in text.headings:
        doc.add_text(Fields.HEADINGS, heading)
    doc.add_text(Fields.DESCRIPTION, text.description)
    doc.add_text(Fields.BODY, text.body)
    doc.add_text(Fields.HOST, item.host)
    labels = item.host.split(".")
    for i in range(len(labels)):
        doc.add_text(Fields.SITE, ".".join(labels[i:]))
    doc.add_text(Fields.LANG, item.lang)
    doc.add_text(Fields.CONTENT_TYPE, text.kind)
    doc.add_text(Fields.MIME, item.mime)
    doc.add_date(Fields.CRAWLED, datetime.fromtimestamp(page.fetched_at, tz=UTC))
    if page.doc_id:
        doc.add_text(Fields.DOC_ID, page.doc_id)
    doc.add_unsigned(Fields.NUM, row.num)
    doc.add_unsigned(Fields.GROUP, row.group_id)
    return doc


@dataclass
class _Tally:
    indexed: int = 0
    exact: int = 0
    near: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    languages: Counter[str] = field(default_factory=Counter)


def _store(
    item: ExtractedPage,
    store: DocStore,
    writer: tantivy.IndexWriter,
    recovering: bool,
    tally: _Tally,
) -> None:
    page = item.page
    if item.skip == UNREADABLE:
        tally.skipped[item.skip] += 1
        return
    if page.old_num is not None:
        store.forget(page.old_num)
    if page.old_num is not None or recovering:
        writer.delete_documents_by_term(Fields.URL_ID, page.url_id)
    text = item.text
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
    if item.skip:
        tally.skipped[item.skip] += 1
        return
    writer.add_document(_document(item, row))
    tally.indexed += 1
    tally.languages[item.lang] += 1
    if grouping is not None:
        tally.exact += grouping.how == "exact"
        tally.near += grouping.how == "near"


def build_index(
    crawl_dir: Path,
    *,
    workers: int = 1,
    batch_size: int = 5000,
    progress: Callable[[int, int], None] | None = None,
    max_decoded: int = MAX_DECODED,
) -> IndexReport:
    """Index the pages of ``crawl_dir`` that are not indexed yet; see the module docstring.

    ``max_decoded`` caps a decoded body, as the crawl's ``fetch.max_decoded`` did.
    """
    started = time.perf_counter()
    crawl_db = crawl_dir / "crawl.db"
    if not crawl_db.is_file():
        raise IndexingError(f"{crawl_dir} has no crawl.db; is it a crawl folder?")
    tally = _Tally()
    index_dir = crawl_dir / INDEX_DIR
    # One run at a time: the lock is taken before anything under DIR/index is touched.
    with IndexLock(crawl_dir, index_dir), DocStore(index_dir / DOCSTORE_FILE) as store:
        handle: IndexHandle = open_index(crawl_dir, create=True)
        if store.upgraded:
            log.warning(
                "the index was written by an older Gossamer: pages indexed before are found as"
                " near-duplicates by simhash only; 'rm -r %s' and index again for MinHash",
                index_dir,
            )
        pending = store.pending(crawl_db)
        recovering = store.in_flight
        if recovering:
            log.warning("the last index run was interrupted; re-adding its documents safely")
        writer = _writer(crawl_dir, handle)
        done = 0
        _begin(store)
        try:
            for items in _extracted(crawl_dir, pending, workers, max_decoded):
                for item in items:
                    _store(item, store, writer, recovering, tally)
                done += len(items)
                if progress is not None:
                    progress(done, len(pending))
                if done % batch_size < len(items):
                    _commit(store, writer)
                    _begin(store)
            _commit(store, writer)
        except BaseException:
            store.rollback()
            writer.rollback()
            raise
        writer.wait_merging_threads()
        documents = store.count()
    return IndexReport(
        pending=len(pending),
        indexed=tally.indexed,
        skipped=dict(tally.skipped),
        exact_duplicates=tally.exact,
        near_duplicates=tally.near,
        documents=documents,
        seconds=time.perf_counter() - started,
        workers=workers if len(pending) >= _POOL_MIN_PAGES else 1,
        languages=dict(tally.languages),
    )


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


def _begin(store: DocStore) -> None:
    # Marked before tantivy can get ahead of the store, cleared in the batch's own commit.
    store.set_in_flight(True)
    store.begin()


def _commit(store: DocStore, writer: tantivy.IndexWriter) -> None:
    try:
        writer.commit()
    except ValueError as exc:
        raise IndexingError(f"cannot write the search index: {exc}") from exc
    store.set_in_flight(False)
    store.commit()
