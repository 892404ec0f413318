"""Store stage, exact duplicates: payloads this crawl process has archived, for revisit records.

Data flow: fetch -> **store**: before ``WarcStore.write`` writes a 2xx response it asks the
:class:`PayloadIndex` whether the same payload (by SHA-1) is already in a WARC file written by
this process; if so it writes a ``revisit`` record (profile identical-payload-digest) that
points at the first copy, as Heritrix and wget do. Every reader follows the pointer back
(``gossamer.store.records``).

The pointer is the standard ``WARC-Refers-To`` (record id), ``WARC-Refers-To-Target-URI`` and
``WARC-Refers-To-Date``, plus one extension field, ``Gossamer-Refers-To-Location``
(``file offset length`` of the original's gzip member), so a reader seeks straight to the
original without an index of record ids. The reader checks the record it finds there against
the id and the payload digest, so a stale pointer is an unreadable record, never a wrong body.

Memory stays flat: only bodies of at least ``min_bytes`` (512) are worth a revisit, since a
revisit record, with its HTTP headers and two URLs, dates and record ids, costs some 450 bytes
compressed, about what a smaller body costs stored whole; and the index keeps the
``max_entries`` payloads used most recently (LRU). An entry costs about 530 bytes (the
20-byte digest, the record id, the URL, the date and the location), measured with 80-byte
URLs, so the default 100,000 entries hold about 55 MB; a million would cost half a GB per
crawl process, more than everything else the crawler keeps in memory together. The
index starts empty in every process and on every resume: a duplicate of a page archived
before the resume is written as a full response, which is correct, only larger.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gossamer.fetch.result import FetchResult

__all__ = [
    "CATALOGUE_MARK",
    "LOCATION_FIELD",
    "NOT_MODIFIED_PROFILE",
    "REVISIT_PROFILE",
    "Original",
    "PayloadIndex",
    "beside",
    "exchange_headers",
    "parse_location",
    "revisit_record",
]

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
# A 304 to a recrawl's conditional request (issue 31): the stored copy still holds.
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
LOCATION_FIELD = "Gossamer-Refers-To-Location"
# In a catalogue's ``warc/`` (``store/catalogue.py``): ``K~NAME`` links the K-th folder's NAME.
CATALOGUE_MARK = "~"
MAX_ENTRIES = 100_000
MIN_BYTES = 512


@dataclass(frozen=True, slots=True)
class Original:
    """The first archived copy of a payload: what a revisit record names and where it is."""

    record_id: str  # WARC-Record-ID of the response record
    url: str  # its WARC-Target-URI
    date: str  # its WARC-Date
    filename: str
    offset: int  # of its gzip member
    length: int  # compressed length of that member

    @property
    def location(self) -> str:
        """The value of ``Gossamer-Refers-To-Location``."""
        return f"{self.filename} {self.offset} {self.length}"


def beside(holder: str, name: str) -> str:
    """The file that a revisit record in the file ``holder`` means by ``name``. A revisit's
    original is written by the same writer, so it is in the same folder; in a catalogue,
    where the K-th folder's files are linked as ``K~NAME``, that is ``K~name``."""
    source, mark, _ = holder.partition(CATALOGUE_MARK)
    return f"{source}{mark}{name}" if mark else name


def parse_location(value: str) -> tuple[str, int, int] | None:
    """(file, offset, length) of a ``Gossamer-Refers-To-Location`` value; None if malformed."""
    parts = value.split()
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


class PayloadIndex:
    """Raw SHA-1 digest of a payload -> its :class:`Original`, the most recent ``max_entries``.

    ``max_entries = 0`` turns deduplication off.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES, min_bytes: int = MIN_BYTES) -> None:
        self._max = max_entries
        self._min_bytes = min_bytes
        self._entries: OrderedDict[bytes, Original] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def eligible(self, result: FetchResult) -> bool:
        """Whether this response may be deduplicated: a whole 2xx body of a useful size."""
        return (
            self._max > 0
            and 200 <= result.status < 300
            and not result.truncated
            and len(result.body) >= self._min_bytes
        )

    def find(self, sha1: bytes) -> Original | None:
        original = self._entries.get(sha1)
        if original is not None:
            self._entries.move_to_end(sha1)
        return original

    def add(self, sha1: bytes, original: Original) -> None:
        self._entries[sha1] = original
        self._entries.move_to_end(sha1)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)


def exchange_headers(kind: str, result: FetchResult, record_id: str, date: str) -> dict[str, str]:
    """The first WARC headers of a record of one exchange (response or revisit), in the
    order both are written."""
    headers = {
        "WARC-Type": kind,
        "WARC-Record-ID": record_id,
        "WARC-Date": date,
        "WARC-Target-URI": result.url,
    }
    if result.remote_ip:
        headers["WARC-IP-Address"] = result.remote_ip
    if result.extra.get("protocol") == "h2":  # the block is written in HTTP/1.1 form
        headers["WARC-Protocol"] = "h2"  # a field proposed for the next WARC version
    return headers


def revisit_record(
    builder: WARCWriter,
    result: FetchResult,
    ids: tuple[str, str, str],
    original: Original,
    http_headers: StatusAndHeaders,
    *,
    profile: str = REVISIT_PROFILE,
) -> Any:
    """The revisit record for ``result``: its HTTP headers as the block, no payload.

    ``ids`` is (WARC-Record-ID, WARC-Date, WARC-Payload-Digest) of the new record; a
    server-not-modified revisit carries the digest of the original's payload, which is the
    payload it stands for.
    """
    record_id, date, digest = ids
    warc_headers = exchange_headers("revisit", result, record_id, date)
    if original.record_id:
        warc_headers["WARC-Refers-To"] = original.record_id
    if original.filename:  # (a shared crawl's 304 may name a copy in another folder)
        warc_headers[LOCATION_FIELD] = original.location
    # warcio adds WARC-Profile (the 1.1 identical-payload-digest one, as the builder writes
    # WARC/1.1), WARC-Refers-To-Target-URI, WARC-Refers-To-Date and WARC-Payload-Digest.
    record = builder.create_revisit_record(
        result.url,
        digest,
        original.url,
        original.date,
        http_headers=http_headers,
        warc_headers_dict=warc_headers,
    )
    if profile != REVISIT_PROFILE:
        record.rec_headers.replace_header("WARC-Profile", profile)
    return record
