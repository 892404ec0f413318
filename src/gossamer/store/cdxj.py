"""Store stage, index: one CDXJ line per archived response, so replay tools find records.

Data flow: fetch -> parse -> **store** (the WARC writer returns a ``WarcLocation``; this
module turns it into a line of ``DIR/index.cdxj``).

A line is ``SURT-key 14-digit-timestamp {json}`` with the fields cdxj-indexer writes by
default (url, mime, status, digest, length, offset, filename), in the same order and with
the same string values, so our index and one rebuilt from the WARC files agree.
Lines are appended in crawl order while the crawl runs and sorted once at the end.
"""

from __future__ import annotations

import heapq
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any, TextIO

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.stamps import iso_second, split_time
from gossamer.store.tempfiles import create_beside
from gossamer.store.warc import WarcLocation, payload_digest

__all__ = [
    "CdxjWriter",
    "Keep",
    "cdxj_line",
    "merge_worker_indexes",
    "parse_cdxj_line",
    "prune_cdxj",
    "sort_cdxj",
]

# Whether the line of the record at (WARC file name, offset, URL) stays in the index.
Keep = Callable[[str, int, str], bool]

_MIME_END = re.compile(r"[;\s]")  # a media type ends at its parameters or at a space
_TAIL_BYTES = 1 << 16  # far longer than any index line
_json_text = json.encoder.encode_basestring_ascii  # a JSON string, as json.dumps spells it
_SORT_RUN_LINES = 200_000  # lines sorted in memory before spilling a run to disk
# A URL whose SURT key can be spelt directly: http(s), a lower-case host name of letters,
# digits and hyphens (no credentials or trailing dot), a port without leading zeros, and a
# path of characters that surt's canonicalizers leave as they are (no escapes, no ';' or '('
# of session ids), with no query or fragment. Anything else goes through surt itself.
_PLAIN_URL = re.compile(
    r"(https?)://([a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::([1-9][0-9]{0,4}))?(/[A-Za-z0-9\-._~!$&'*+,=:@/]*)"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}  # surt leaves these out of a key
_HAS_LETTER = re.compile(r"[a-z]")  # a host with none could be an IP address in some form
_WWW = re.compile(r"www\d*\.")  # surt drops this prefix of a host


def cdxj_line(result: FetchResult, location: WarcLocation) -> str:
    """The index line for a response (or revisit) record written by ``WarcStore.write``."""
    content_type = result.header("Content-Type")
    if location.revisit:
        mime: str | None = "warc/revisit"  # as cdxj-indexer (and pywb) name a revisit record
    elif content_type is not None:
        mime = _MIME_END.split(content_type, maxsplit=1)[0].strip()
    else:
        mime = None
    # What json.dumps gives for the same dict of strings (", " and ": " between, ASCII
    # escapes), spelt directly: the numbers and the digest need no escaping.
    text = _json_text
    fields = '{"url": ' + text(result.url)
    if mime is not None:
        fields += ', "mime": ' + text(mime)
    digest = location.digest or payload_digest(result.body)
    fields += (
        f', "status": "{result.status}", "digest": {text(digest)},'
        f' "length": "{location.length}", "offset": "{location.offset}",'
        f' "filename": {text(location.filename)}}}'
    )
    return f"{url_key(result.url)} {_timestamp(result.started_at)} {fields}\n"


def _timestamp(epoch_seconds: float) -> str:
    """The 14-digit UTC timestamp of a line (what ``%Y%m%d%H%M%S`` gives, sooner)."""
    iso = iso_second(split_time(epoch_seconds)[0])  # YYYY-MM-DDTHH:MM:SS, as the WARC-Date
    return iso[0:4] + iso[5:7] + iso[8:10] + iso[11:13] + iso[14:16] + iso[17:19]


def url_key(url: str) -> str:
    """The SURT form used to sort and look up captures; the URL itself if SURT rejects it."""
    plain = _PLAIN_URL.fullmatch(url)
    if plain is not None:
        short = _plain_key(*plain.groups())
        if short is not None:
            return short
    import surt  # noqa: PLC0415 - a quarter second of imports (tldextract, requests), for odd URLs

    try:
        key: str = surt.surt(url)
    except (ValueError, AttributeError):
        # surt fails on some odd URLs (bad ports, some empty hosts); cdxj-indexer then
        # keys the line by the plain URL, and we must produce the same line.
        return url
    return key


def _plain_key(scheme: str, host: str, port: str | None, path: str) -> str | None:
    """The key surt gives a plain URL (see ``_PLAIN_URL``), spelt without parsing it again;
    None where surt would change the path (empty or dot segments), read the host as an
    address, or refuse or drop the port (out of range, or the scheme's default). surt
    lower-cases the path, drops one trailing slash and the "www" prefix, and writes the
    host's labels in reverse order, joined by commas, then any other port."""
    if "//" in path or "/." in path or _HAS_LETTER.search(host) is None:
        return None
    if port is not None and (int(port) > 65535 or port == _DEFAULT_PORTS[scheme]):
        return None  # surt refuses the one and drops the other: leave both to it
    www = _WWW.match(host)
    if www is not None:
        host = host[www.end() :]
    path = path.lower()
    if len(path) > 1 and path[-1] == "/":
        path = path[:-1]
    surt_host = ",".join(reversed(host.split(".")))
    return f"{surt_host}:{port}){path}" if port else f"{surt_host}){path}"


class CdxjWriter:
    """Appends index lines to one file; ``close`` sorts it so lookups can bisect."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._out: TextIO | None = self._open()

    def _open(self) -> TextIO:
        try:
            # Line-buffered: a line reaches the OS before its page's database row is even
            # queued, so after a crash every row in crawl.db has its index line.
            return self._path.open("a", encoding="utf-8", newline="\n", buffering=1)
        except OSError as exc:
            raise StoreError(f"cannot open CDXJ index {self._path}: {exc.strerror}") from exc

    @property
    def path(self) -> Path:
        return self._path

    def add(self, result: FetchResult, location: WarcLocation) -> None:
        """Index one response record. Buffered: lines reach the OS in large batches."""
        if self._out is None:
            raise StoreError(f"CDXJ index {self._path} is already closed")
        try:
            self._out.write(cdxj_line(result, location))
        except OSError as exc:
            raise StoreError(f"cannot write CDXJ index {self._path}: {exc.strerror}") from exc

    def flush(self) -> None:
        if self._out is None:
            return
        try:
            self._out.flush()
        except OSError as exc:
            raise StoreError(f"cannot write CDXJ index {self._path}: {exc.strerror}") from exc

    def prune(self, keep: Keep) -> int:
        """Drop the lines of records that are gone (see ``prune_cdxj``) and carry on."""
        if self._out is None:
            raise StoreError(f"CDXJ index {self._path} is already closed")
        self.flush()
        dropped = prune_cdxj(self._path, keep)
        if dropped:
            # The open handle still points at the file that was replaced.
            out, self._out = self._out, None
            out.close()
            self._out = self._open()
        return dropped

    def close(self, *, sort: bool = True) -> None:
        """Flush and close; sort the whole file unless told not to (e.g. on a crash path)."""
        if self._out is None:
            return
        out, self._out = self._out, None
        try:
            out.close()
        except OSError as exc:
            raise StoreError(f"cannot write CDXJ index {self._path}: {exc.strerror}") from exc
        if sort:
            sort_cdxj(self._path)

    def __enter__(self) -> CdxjWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def sort_cdxj(path: Path, *, run_lines: int = _SORT_RUN_LINES) -> None:
    """Sort a CDXJ file in place by code point (the byte order ``LC_ALL=C sort`` gives).

    Large files are sorted in runs of ``run_lines`` spilled to temporary files and merged,
    so memory stays bounded. The sorted file replaces the original atomically.
    """
    runs: list[Path] = []
    try:
        with path.open(encoding="utf-8", newline="\n") as source:
            while chunk := _read_lines(source, run_lines):
                # Replaying WARC records after a crash may add a line twice: keep one.
                runs.append(_write_temp(path.parent, sorted(set(chunk))))
        if len(runs) == 1:
            runs[0].replace(path)
        elif runs:
            with ExitStack() as stack:
                inputs = [
                    stack.enter_context(run.open(encoding="utf-8", newline="\n")) for run in runs
                ]
                merged = _write_temp(path.parent, _unique(heapq.merge(*inputs)))
            merged.replace(path)
    except OSError as exc:
        raise StoreError(f"cannot sort CDXJ index {path}: {exc.strerror}") from exc
    finally:
        with suppress(OSError):
            for run in runs:
                run.unlink(missing_ok=True)


def _unique(lines: Iterable[str]) -> Iterator[str]:
    previous = None
    for line in lines:
        if line != previous:
            yield line
        previous = line


def merge_worker_indexes(out: Path, *, sort: bool = True) -> None:
    """Append the indexes that ``--workers`` worker processes left in ``out``
    (``index-wK.cdxj``, a torn last line cut first) to ``out/index.cdxj``, remove them, and
    sort the result (``sort`` False: the caller's writer sorts when it closes).

    The coordinator does this at the end of a crawl; a crawl resumed in one process does it
    at its start, for the indexes a killed ``--workers`` run left behind. Copied in blocks,
    so memory stays flat whatever their size.
    """
    target = out / "index.cdxj"
    try:
        repair_cdxj(target)  # a crash while it was written may have left half a line
        with target.open("ab") as merged:
            for part in sorted(out.glob("index-w*.cdxj")):
                repair_cdxj(part)
                with part.open("rb") as source:
                    shutil.copyfileobj(source, merged)
                part.unlink()
    except OSError as exc:  # a full disk, most likely: what was merged so far stays
        raise StoreError(f"cannot write CDXJ index {target}: {exc.strerror or exc}") from exc
    if sort and target.exists():
        sort_cdxj(target)


def repair_cdxj(path: Path) -> None:
    """Drop a torn last line (a crash mid-write) so appending starts on a fresh line."""
    if not path.exists():
        return
    with path.open("r+b") as stream:
        size = stream.seek(0, os.SEEK_END)
        start = max(0, size - _TAIL_BYTES)
        stream.seek(start)
        tail = stream.read()
        if not tail or tail.endswith(b"\n"):
            return
        cut = tail.rfind(b"\n")
        stream.truncate(start + cut + 1 if cut >= 0 else start)


def prune_cdxj(path: Path, keep: Keep) -> int:
    """Drop the lines whose record ``keep`` rejects; return how many. The file is replaced
    atomically, and only if a line goes; lines that cannot be parsed are kept."""
    if not path.exists():
        return 0
    dropped = 0

    def kept(source: TextIO) -> Iterator[str]:
        nonlocal dropped
        for line in source:
            where = _record_of(line)
            if where is not None and not keep(*where):
                dropped += 1
                continue
            yield line if line.endswith("\n") else line + "\n"

    try:
        with path.open(encoding="utf-8", newline="\n") as source:
            temp = _write_temp(path.parent, kept(source))
        if dropped:
            temp.replace(path)
        else:
            temp.unlink()
    except OSError as exc:
        raise StoreError(f"cannot rewrite CDXJ index {path}: {exc.strerror}") from exc
    return dropped


def parse_cdxj_line(line: str) -> tuple[str, dict[str, Any]] | None:
    """(SURT key and timestamp, JSON fields) of a CDXJ line; None if it is not one."""
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) < 3:
        return None
    try:
        fields = json.loads(parts[2])
    except ValueError:
        return None
    return (f"{parts[0]} {parts[1]}", fields) if isinstance(fields, dict) else None


def _record_of(line: str) -> tuple[str, int, str] | None:
    """(filename, offset, url) of an index line, or None if it is not one of ours."""
    parsed = parse_cdxj_line(line)
    if parsed is None:
        return None
    fields = parsed[1]
    filename, offset, url = fields.get("filename"), fields.get("offset"), fields.get("url")
    if not isinstance(filename, str) or not isinstance(url, str) or not str(offset).isdigit():
        return None
    return filename, int(str(offset)), url


def _read_lines(source: TextIO, limit: int) -> list[str]:
    lines: list[str] = []
    for line in source:
        # A crash can leave a final line without its newline; keep it sortable.
        lines.append(line if line.endswith("\n") else line + "\n")
        if len(lines) >= limit:
            break
    return lines


def _write_temp(folder: Path, lines: Iterable[str]) -> Path:
    # Not mkstemp: the merged run becomes index.cdxj, which must be as readable as the rest.
    handle, name = create_beside(folder / "index.cdxj", "-sort")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.writelines(lines)
    except OSError:
        name.unlink(missing_ok=True)
        raise
    return name
