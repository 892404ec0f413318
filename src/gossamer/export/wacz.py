"""Export stage, WACZ: the crawl's WARC files, its CDXJ index and its pages in one package.

Data flow: ``DIR/warc/*.warc.gz`` + ``DIR/index.cdxj`` + ``crawl.db`` (the page list) ->
**wacz** -> one ZIP file that ReplayWeb.page and pywb open, written to Webrecorder's WACZ
1.1.1 specification with the standard library alone:

- ``archive/``: the crawl's own WARC files, stored (not deflated: they are gzip already, and
  replay seeks into them by offset);
- ``indexes/index.cdx``: the crawl's CDXJ lines as they are (their ``filename`` names a file of
  ``archive/``), deflated;
- ``pages/pages.jsonl``: a ``json-pages-1.0`` header line, then ``{"id", "url", "ts"}`` for every
  HTML page that answered 2xx, in fetch order;
- ``datapackage.json``: every file above with its size and SHA-256, and
  ``datapackage-digest.json``: the SHA-256 of ``datapackage.json``.

Each member is hashed while it is copied, so every byte is read once and memory stays one
copy buffer. ``wacz validate`` (the ``wacz`` package) is the tests' judge of the result.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from gossamer import __version__
from gossamer.errors import StoreError
from gossamer.export.records import iso_time
from gossamer.store.export_rows import ExportRows, RowFilter
from gossamer.store.reads import recorded_files
from gossamer.store.tempfiles import replacing
from gossamer.store.warcscan import crawl_files

__all__ = ["WACZ_VERSION", "WaczReport", "write_wacz"]

WACZ_VERSION = "1.1.1"
_COPY = 1024 * 1024
_HTML = ("text/html", "application/xhtml+xml")

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class WaczReport:
    warc_files: int
    pages: int
    path: Path


class _Hashing:
    """A writable stream that passes bytes on and keeps their SHA-256 and count."""

    def __init__(self, target: IO[bytes]) -> None:
        self._target = target
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        return self._target.write(data)

    def resource(self, path: str) -> dict[str, object]:
        name = path.rsplit("/", 1)[-1].lower()
        return {
            "name": name,
            "path": path,
            "hash": f"sha256:{self.sha256.hexdigest()}",
            "bytes": self.size,
        }


def _member(package: zipfile.ZipFile, path: str, stored: bool, stamp: float) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=datetime.fromtimestamp(stamp, UTC).timetuple()[:6])
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    return info


def _copy_file(
    package: zipfile.ZipFile, source: Path, path: str, stored: bool
) -> dict[str, object]:
    info = _member(package, path, stored, source.stat().st_mtime)
    with source.open("rb") as reading, package.open(info, "w", force_zip64=True) as writing:
        hashing = _Hashing(writing)
        shutil.copyfileobj(reading, hashing, _COPY)
    return hashing.resource(path)


def _pages(crawl_db: Path) -> Iterator[bytes]:
    """The ``pages.jsonl`` lines: the header, then each HTML page that answered 2xx."""
    yield json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}).encode()
    with ExportRows(crawl_db) as db:
        db.check_crawl()
        for row in db.rows(RowFilter(statuses=((200, 299),))):
            mime = (row.content_type or "").split(";", 1)[0].strip().lower()
            if mime in _HTML and row.warc_file is not None:
                ts = iso_time(row.fetched_at)
                # An id per page, as ReplayWeb.page's lists have (and a page line then shares a
                # key with the header line, which the data-package check reads as a table).
                page_id = hashlib.sha1(f"{ts} {row.url}".encode()).hexdigest()[:20]
                yield json.dumps({"id": page_id, "url": row.url, "ts": ts}).encode()


def _write_text(
    package: zipfile.ZipFile, path: str, lines: Iterator[bytes], stamp: float
) -> tuple[dict[str, object], int]:
    count = -1  # the header line is not a page
    with package.open(_member(package, path, False, stamp), "w", force_zip64=True) as writing:
        hashing = _Hashing(writing)
        for line in lines:
            hashing.write(line + b"\n")
            count += 1
    return hashing.resource(path), count


def write_wacz(crawl_dir: Path, out: Path, progress: Progress | None = None) -> WaczReport:
    """Package ``crawl_dir`` as the WACZ file ``out`` (written beside it, renamed whole)."""
    warc_dir, cdxj = crawl_dir / "warc", crawl_dir / "index.cdxj"
    warcs = list(crawl_files(warc_dir, recorded_files(crawl_dir / "crawl.db")).ours)
    if not warcs:
        raise StoreError(f"{crawl_dir} has no WARC files to package")
    if not cdxj.is_file():
        raise StoreError(f"{crawl_dir} has no index.cdxj; run 'gossamer recover {crawl_dir}'")
    now = datetime.now(UTC)
    stamp = now.timestamp()
    with replacing() as files, zipfile.ZipFile(files.beside(out), "w", allowZip64=True) as package:
        resources = []
        for done, warc in enumerate(warcs, 1):
            resources.append(_copy_file(package, warc, f"archive/{warc.name}", stored=True))
            if progress is not None:
                progress(done, len(warcs))
        resources.append(_copy_file(package, cdxj, "indexes/index.cdx", stored=False))
        listed, pages = _write_text(
            package, "pages/pages.jsonl", _pages(crawl_dir / "crawl.db"), stamp
        )
        resources.append(listed)
        datapackage = {
            "profile": "data-package",
            "resources": resources,
            "title": crawl_dir.name,
            "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "wacz_version": WACZ_VERSION,
            "software": f"Gossamer {__version__}",
        }
        described = json.dumps(datapackage, indent=2).encode()
        package.writestr(_member(package, "datapackage.json", False, stamp), described)
        digest = {
            "path": "datapackage.json",
            "hash": f"sha256:{hashlib.sha256(described).hexdigest()}",
        }
        package.writestr(
            _member(package, "datapackage-digest.json", False, stamp),
            json.dumps(digest, indent=2).encode(),
        )
    return WaczReport(len(warcs), pages, out)
