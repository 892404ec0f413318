"""A shared crawl's recrawl (issue 31): each worker hands its own folder's pages to Redis.

Data flow: ``gossamer crawl --frontier ... --recrawl`` starts a recrawl in Redis (its start
and mode) -> every worker that works in the crawl, that one and each ``gossamer worker``,
**on joining**: its folder takes the same recrawl (``crawling/revisits``: the pages due are
marked wanted, once), and the wanted pages go to the shared queues as revisit jobs, the
seen-set aside, in one Redis step that also marks the folder done for this recrawl -> the
folder stops wanting them (Redis holds them now). A crash between the two steps is safe:
the next join finds the marker, queues nothing twice and clears the folder's marks.

Any worker may fetch a page another's folder holds, so a revisit job carries what judging
the answer takes (``frontier.hosts.Revisit``): the validators, the stored content's digest
and length, the schedule's interval, and the stored record a 304's revisit record names.
The folder that fetched records the answer (``schedule``; ``pages`` for a changed or gone
page); ``gossamer merge`` keeps the newest of each, so the merged folder is the recrawled crawl.
"""

from __future__ import annotations

import logging
from typing import Any

from gossamer.crawling.recrawl import conditions
from gossamer.crawling.revisits import RECRAWL_SINCE, begin_recrawl, want_recrawl
from gossamer.distributed.frontier import RedisFrontier
from gossamer.frontier.hosts import Job, Revisit
from gossamer.store import MetadataDB
from gossamer.store.records import MemberFiles, RecordError, stored_original

__all__ = ["join_recrawl"]

log = logging.getLogger(__name__)


async def join_recrawl(front: RedisFrontier, db: MetadataDB) -> int | None:
    """Take part in the shared crawl's recrawl, if it is in one: queue this folder's pages
    it wants; how many were queued (None: no recrawl, or this folder's were queued before)."""
    state = await front.recrawl()
    if state is None:
        return None
    since, mode = state
    if db.get_meta(RECRAWL_SINCE) != repr(since):
        begin_recrawl(db, mode, since)
    want_recrawl(db)
    files = MemberFiles(db.path.parent / "warc")
    try:
        jobs = [_job(row, files) for row in db.wanted_revisits()]
    finally:
        files.close()
    queued = await front.requeue(f"{since!r} {db.folder_id()}", jobs)
    db.clear_wanted()
    if queued is not None:
        log.warning("recrawl: %d pages of this folder queued in the shared crawl", queued)
    return queued


def _job(row: tuple[Any, ...], files: MemberFiles) -> Job:
    (url, host, depth, referrer, etag, modified, interval, changed_at, doc_id, length,
     warc_file, offset, size) = row  # fmt: skip
    refers = None
    if warc_file is not None and offset is not None:
        try:
            original, digest = stored_original(files, warc_file, offset, size or 0)
            refers = (original.record_id, original.url, original.date, digest)
        except (RecordError, OSError) as exc:
            log.warning("recrawl of %s: its stored record is unreadable (%s)", url, exc)
    revisit = Revisit(
        conditions=conditions(etag, modified),
        doc_id=doc_id,
        length=length or 0,
        interval=interval,
        changed_at=changed_at,
        refers=refers,
    )
    return Job(url=url, host=host, depth=depth or 0, referrer=referrer, revisit=revisit)
