"""The exception tree of Gossamer.

Expected outcomes (a 404, a robots.txt refusal, a non-HTML body) are values, not exceptions.
Exceptions are for faults, and every one raised by Gossamer descends from one root::

    GossamerError              a fault no layer owns: a port the UI or the test web cannot
    │                          listen on, a crawl worker process that died
    ├── ConfigError            bad configuration file, flag or environment value
    ├── SeedError              seeds file missing, unreadable, or without one valid seed
    ├── StoreError             the output folder cannot be written (permissions, full disk),
    │   │                      or another crawl holds its lock (engine/resume.py)
    │   ├── NothingToArchiveError   a result without an HTTP response handed to the WARC
    │   │                           writer: a caller's bug (also a ValueError)
    │   └── RecordError        archived bytes that hold no usable response record (also a
    │                          ValueError; store/records.py)
    ├── FetchError             a fault below HTTP: DNS, connect, TLS, protocol, limits
    │   ├── BlockedAddressError     the SSRF guard refused an address
    │   └── DecodeError             a Content-Encoding that cannot be undone, or a
    │                               compression bomb (fetch/decode.py)
    ├── IndexingError          a crawl folder, WARC record or search index that cannot be
    │                          used, or an index another process is writing: our lock or
    │                          tantivy's ``LockBusy`` (index/errors.py)
    ├── RankError              PageRank cannot be computed, saved or loaded (rank/errors.py)
    ├── SharedFrontierError    Redis unreachable, or crawl data in Redis unusable
    │                          (distributed/errors.py)
    └── SearchError            a query, page-info or cached-copy request that cannot be
                               answered as given (search/errors.py)

The fetch faults carry ``kind``, the statistics key: a fetch records them in its result
instead of letting them rise. The search side's errors live beside their packages, which
import this root. The CLI (``gossamer.cli.main``) is the one place that turns a
``GossamerError`` into ``gossamer: error: ...`` and exit status 2.

Outside errors are wrapped where they enter, with ``raise ... from exc``. A message may quote
what the user typed; :func:`escaped` makes it safe to show on a terminal.
"""

_SURROGATES = range(0xDC80, 0xDD00)  # bytes that were not UTF-8, kept by "surrogateescape"
_MAX_SHOWN = 200


class GossamerError(Exception):
    """Root of every fault Gossamer raises on purpose."""


class ConfigError(GossamerError):
    """A configuration file, flag or environment value is invalid."""


class SeedError(GossamerError):
    """The seeds file cannot be used."""


class StoreError(GossamerError):
    """The crawl output cannot be written."""


class NothingToArchiveError(StoreError, ValueError):
    """A fetch result without an HTTP response was handed to the WARC writer.

    A bug in the caller, not a fault of the disk. Also a ``ValueError``, which is what the
    writer raised before this class existed.
    """


class FetchError(GossamerError):
    """A fetch failed below the HTTP layer; ``kind`` names the error class for statistics."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class BlockedAddressError(FetchError):
    """The SSRF guard refused to connect to an address."""

    def __init__(self, message: str) -> None:
        super().__init__("blocked_address", message)


def escaped(text: str) -> str:
    """``text`` on one line, with control and other invisible characters escaped like repr.

    What a user supplied (a seed line, a path, a flag value) may hold NUL, CR/LF or terminal
    escape codes; echoed raw they would forge lines or repaint the terminal.
    """
    if text.isprintable():
        return text
    out: list[str] = []
    for char in text:
        if char.isprintable():
            out.append(char)
        elif ord(char) in _SURROGATES:
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        else:
            out.append(char.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def shortened(text: str, limit: int = _MAX_SHOWN) -> str:
    """``text`` cut to about ``limit`` characters for a message, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"
