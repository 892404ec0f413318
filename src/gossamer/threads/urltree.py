"""The Indexed URL Tree of seed 000: one folder per URL component, one data file per URL.

Data flow: crawler threads -> ``buffers.BoundedBuffer`` -> ``builders.IndexBuilder`` ->
**urltree**. ``gossamer export-tree`` files a crawl's pages here directly (:func:`export_crawl`:
``crawl.db`` -> ``store.tree_rows`` -> **urltree**).

Layout under the root, one folder per component, each name prefixed by its kind::

    pr-<scheme>/do-<label>/.../do-<label>[/po-<port>]/dr-<segment>/.../url-<16 hex>.txt

``https://en.wikipedia.org/wiki/Concurrency_(computer_science)`` is filed in
``pr-https/do-en/do-wikipedia/do-org/dr-wiki/dr-Concurrency_(computer_science)/``. Host labels
are the dot-separated parts of the host name; an IPv6 literal is one label with its brackets
(``do-[::1]``). ``po-<port>`` appears only when the URL names a port (canonical URLs drop the
scheme's default). The query and a trailing ``/`` make no folder: the file inside is named
from the SHA-256 of the whole URL text, so ``/a``, ``/a/`` and ``/a?x=1`` share a folder and
never a file. The file holds one data line per filing: ``url TAB source TAB data``, with
backslash, tab, CR and LF escaped; a file with two lines is a duplicate write, the race.

Every name is safe whatever the URL: the prefix means no name is ever ``.``, ``..`` or
empty; ``%``, ``/``, ``\\``, control characters and lone surrogates are percent-encoded, and
so are leading dots (``dr-%2E%2E`` for a ``..`` segment). A name over 255 bytes keeps a head
and ends in ``%%`` and 32 hex of the component's SHA-256 (an escaped name never holds
``%%``, so it cannot meet a hashed one); the components past a 3,000-byte budget for the
whole path (host labels included) fold into one ``dr-%%<hex>`` folder. Components come from
``gossamer.urls``' helpers; the tree files the URL text it is given, unchanged (the crawler
hands it canonical URLs).

``add`` follows the seed's (and ``models/``'s) steps: check, lock, re-check, create, write,
unlock. The lock is per file path: a dict of locks with use counts, made on demand under a
small guard lock and removed once nobody uses it, so builders filing different URLs never
wait for each other. ``synchronised=False`` is the ``SHOW_DATARACE`` variant: no lock, no
re-check. ``hooks`` run at named points (:data:`HOOK_POINTS`) so a test can impose an
interleaving; the file is opened for appending on purpose, so that the exclusion is the
lock's work alone and a race shows as a second data line, as in the seed. A write that fails
under the lock removes the file it created, so that the URL can still be filed later.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.store.tree_rows import TreeRows
from gossamer.urls import host_key, host_of, origin_of, path_query_of, port_of

__all__ = [
    "HOOK_POINTS",
    "Hook",
    "IndexedUrlTree",
    "TreeAudit",
    "audit_tree",
    "data_line",
    "export_crawl",
    "export_lines",
    "folder_names",
    "url_file_name",
]

log = logging.getLogger(__name__)

# In the order ``add`` passes them, each right after its step of the model: "filing" as a
# URL taken from a buffer starts, then check, lock ("locking" is the request, "locked" the
# grant), re-check, create, write, unlock.
HOOK_POINTS = (
    "filing",
    "checked",
    "locking",
    "locked",
    "rechecked",
    "created",
    "written",
    "unlocked",
)
Hook = Callable[[str], None]  # called with the URL being filed

MAX_NAME_BYTES = 255  # NAME_MAX of Linux and most file systems
MAX_PATH_BYTES = 3000  # below PATH_MAX (4096), leaving room for the root
_DIGEST_HEX = 32
_UNSAFE = re.compile("[%/\\\\\x00-\x1f\x7f\ud800-\udfff]")
_LINE_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8", "surrogatepass"))


def _escape(text: str) -> str:
    escaped = _UNSAFE.sub(_percent, text)
    bare = escaped.lstrip(".")
    return "%2E" * (len(escaped) - len(bare)) + bare


def _head(name: str, budget: int) -> str:
    """The longest start of ``name`` within ``budget`` UTF-8 bytes, not cutting an escape."""
    head = name.encode("utf-8")[:budget].decode("utf-8", "ignore")
    cut = head.rfind("%", len(head) - 2)
    return head if cut < 0 else head[:cut]


def _name(prefix: str, text: str) -> str:
    name = prefix + _escape(text)
    if len(name.encode("utf-8")) <= MAX_NAME_BYTES:
        return name
    head = _head(name, MAX_NAME_BYTES - 2 - _DIGEST_HEX)
    return f"{head}%%{_digest(text)[:_DIGEST_HEX]}"


def _segments(url: str) -> list[str]:
    path = path_query_of(url).partition("?")[0].partition("#")[0]
    parts = path.split("/")
    if parts[0] == "":
        parts = parts[1:]  # the path's leading '/'
    if parts and parts[-1] == "":
        parts = parts[:-1]  # a trailing '/': told apart by the file name, not by a folder
    return parts


def folder_names(url: str) -> list[str]:
    """The folder names, root first, that file ``url``. Raises ValueError if not absolute."""
    origin = origin_of(url)
    scheme = origin[: len(origin) - len(host_key(url))].removesuffix("//").removesuffix(":")
    host = host_of(url)
    labels = [host] if host.startswith("[") else host.split(".")
    port = port_of(url)
    names = [_name("do-", label) for label in labels]
    names += [] if port is None else [_name("po-", str(port))]
    names += [_name("dr-", segment) for segment in _segments(url)]
    kept = [_name("pr-", scheme)]
    used = len(kept[0].encode("utf-8")) + 1
    for at, name in enumerate(names):
        used += len(name.encode("utf-8")) + 1
        if used > MAX_PATH_BYTES - MAX_NAME_BYTES:
            # The rest folds into one folder named from all it replaces.
            kept.append("dr-%%" + _digest("/".join(names[at:]))[:_DIGEST_HEX])
            break
        kept.append(name)
    return kept


def url_file_name(url: str) -> str:
    """The data file of ``url`` inside its folder."""
    return f"url-{_digest(url)[:16]}.txt"


def data_line(url: str, source: str, data: str) -> str:
    """One data line: the three fields with tab, newline and backslash escaped."""
    return "\t".join(text.translate(_LINE_ESCAPES) for text in (url, source, data)) + "\n"


@dataclass(slots=True)
class _PathLock:
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0


class IndexedUrlTree:
    """The tree under ``root``; ``add`` may be called from any number of threads."""

    def __init__(
        self, root: Path, *, synchronised: bool = True, hooks: Mapping[str, Hook] | None = None
    ) -> None:
        unknown = set(hooks or ()) - set(HOOK_POINTS)
        if unknown:
            raise ValueError(f"unknown hook points {sorted(unknown)}; known: {HOOK_POINTS}")
        self.root = root
        self.synchronised = synchronised
        self._hooks = dict(hooks or {})
        self._guard = threading.Lock()  # over _locks and _filed
        self._locks: dict[Path, _PathLock] = {}
        self._filed = 0
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the URL tree {root}: {exc.strerror or exc}") from exc

    @property
    def filed(self) -> int:
        """How many ``add`` calls have filed their URL (both racers count, unsynchronised)."""
        with self._guard:
            return self._filed

    def location(self, url: str) -> Path:
        """The data file of ``url``."""
        return self.root.joinpath(*folder_names(url), url_file_name(url))

    def open_locks(self) -> dict[Path, int]:
        """Per-path locks in use right now, and how many threads hold or wait for each."""
        with self._guard:
            return {path: entry.users for path, entry in self._locks.items()}

    def add(self, url: str, source: str, data: str = "") -> bool:
        """File ``url`` (found on ``source``) with ``data``; True when this call filed it."""
        file = self.location(url)
        self._hook("filing", url)
        if file.exists():
            return False
        self._hook("checked", url)
        if self.synchronised:
            with self._path_lock(file, url):
                if file.exists():
                    return False
                self._hook("rechecked", url)
                self._write(file, url, data_line(url, source, data))
        else:
            self._write(file, url, data_line(url, source, data))
        with self._guard:
            self._filed += 1
        return True

    def _hook(self, point: str, url: str) -> None:
        hook = self._hooks.get(point)
        if hook is not None:
            hook(url)

    def _write(self, file: Path, url: str, line: str) -> None:
        file.parent.mkdir(parents=True, exist_ok=True)
        try:
            with file.open("a", encoding="utf-8", errors="backslashreplace") as out:
                self._hook("created", url)
                out.write(line)
        except BaseException:
            # Under the lock the file is this call's own: without its line it would stop the
            # URL from ever being filed (the next check would find it), so it goes.
            if self.synchronised:
                with contextlib.suppress(OSError):
                    file.unlink(missing_ok=True)
            raise
        self._hook("written", url)

    @contextmanager
    def _path_lock(self, file: Path, url: str) -> Iterator[None]:
        with self._guard:
            entry = self._locks.setdefault(file, _PathLock())
            entry.users += 1
        try:
            self._hook("locking", url)
            with entry.lock:
                self._hook("locked", url)
                yield
        finally:
            with self._guard:
                entry.users -= 1
                if entry.users == 0:
                    del self._locks[file]
        self._hook("unlocked", url)


@dataclass(frozen=True, slots=True)
class TreeAudit:
    """What a tree holds: URL files, data lines, and the files written more than once."""

    url_files: int
    data_lines: int
    duplicates: tuple[tuple[Path, int], ...]  # (file, its number of data lines)

    @property
    def duplicate_files(self) -> int:
        return len(self.duplicates)


def _url_files(root: Path) -> Iterator[Path]:
    """Every data file under ``root``, in path order (symbolic links are not followed)."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.startswith("url-") and name.endswith(".txt"):
                yield Path(folder) / name


def audit_tree(root: Path) -> TreeAudit:
    files = lines = 0
    duplicates: list[tuple[Path, int]] = []
    for file in _url_files(root):
        count = file.read_bytes().count(b"\n")
        files += 1
        lines += count
        if count > 1:
            duplicates.append((file, count))
    return TreeAudit(files, lines, tuple(duplicates))


def export_lines(root: Path, out: Path) -> int:
    """Write every data line of the tree to ``out`` (the seed's res.txt); how many."""
    count = 0
    with out.open("wb") as sink:
        for file in _url_files(root):
            data = file.read_bytes()
            sink.write(data)
            count += data.count(b"\n")
    return count


def export_crawl(crawl_db: Path, root: Path) -> TreeAudit:
    """File every page fetch of ``crawl_db`` under ``root``, with its referrer as the source
    and ``status type warcfile:offset`` as the data, then write ``root/res.txt``."""
    try:
        tree = IndexedUrlTree(root)
        with TreeRows(crawl_db) as rows:
            rows.check_crawl()
            for page in rows.fetched_pages():
                try:
                    tree.add(page.url, page.referrer or "", page.data())
                except ValueError:
                    log.warning("not filed, not an absolute URL: %r", page.url)
        export_lines(root, root / "res.txt")
        return audit_tree(root)
    except OSError as exc:
        raise StoreError(f"cannot write the URL tree {root}: {exc}") from exc
