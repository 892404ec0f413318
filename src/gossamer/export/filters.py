"""Export stage, choosing: which pages and which fields an export keeps.

Data flow: the command line (``--site``, ``--status``, ``--language``, ``--since``,
``--fields``) -> **filters** -> ``store.export_rows`` (what SQL can decide: host, status,
time, so unwanted rows cost no WARC read) and the records (language, known only once the
text is read). Every value is checked here, at the edge, with one ``ConfigError`` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gossamer.errors import ConfigError, shortened
from gossamer.export.records import FIELD_NAMES, PageRecord
from gossamer.store.export_rows import RowFilter

__all__ = ["Selection", "parse_fields", "parse_since", "parse_sites", "parse_statuses"]

_CLASS = re.compile(r"^([1-5])xx$", re.IGNORECASE)
_RANGE = re.compile(r"^(\d{1,3})(?:-(\d{1,3}))?$")
_TEXT_FIELDS = frozenset({"language", "title", "text", "payload_digest"})


@dataclass(frozen=True, slots=True)
class Selection:
    """The rows, languages and fields one export keeps."""

    rows: RowFilter = field(default_factory=RowFilter)
    languages: frozenset[str] = frozenset()  # () = any; pages without text never match
    fields: tuple[str, ...] = FIELD_NAMES

    @property
    def reads_warc(self) -> bool:
        """Whether any chosen field or filter needs the WARC record (text, digest, language)."""
        return bool(self.languages) or any(name in _TEXT_FIELDS for name in self.fields)

    def keeps(self, record: PageRecord) -> bool:
        return not self.languages or record.language in self.languages


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_statuses(text: str) -> tuple[tuple[int, int], ...]:
    """``"200"``, ``"2xx"``, ``"300-399"``, or several of them, comma-separated."""
    ranges: list[tuple[int, int]] = []
    for item in _items(text):
        if match := _CLASS.match(item):
            low = int(match.group(1)) * 100
            ranges.append((low, low + 99))
        elif match := _RANGE.match(item):
            low = int(match.group(1))
            high = int(match.group(2) or low)
            if high < low:
                raise ConfigError(f"--status {item!r}: the range runs backwards")
            ranges.append((low, high))
        else:
            raise ConfigError(
                f"--status {shortened(item, 30)!r} is not a status, a class such as 2xx, "
                "or a range such as 300-399"
            )
    if not ranges:
        raise ConfigError("--status names no status")
    return tuple(ranges)


def parse_sites(values: list[str]) -> tuple[str, ...]:
    """Host names (a site keeps its subdomains), lower-cased; commas separate several."""
    from gossamer.urls import host_of  # noqa: PLC0415 (ada-url, only when a site is named)

    hosts: list[str] = []
    for item in (i for value in values for i in _items(value)):
        host = host_of(f"http://{item.strip('.')}/")
        if not host or "/" in item:
            raise ConfigError(f"--site {shortened(item, 60)!r} is not a host name")
        hosts.append(host)
    return tuple(hosts)


def parse_since(text: str) -> float:
    """A date or time in ISO 8601 (``2026-11-01``, ``2026-11-01T12:00``; UTC unless it says
    otherwise) -> seconds since the epoch."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(
            f"--since {shortened(text, 40)!r} is not a date such as 2026-11-01 or 2026-11-01T12:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def parse_fields(text: str) -> tuple[str, ...]:
    """The fields named, in the order named; each must be one of the record's."""
    names = _items(text)
    unknown = [name for name in names if name not in FIELD_NAMES]
    if unknown:
        raise ConfigError(
            f"--fields: no field {shortened(unknown[0], 40)!r}; the fields are "
            + ", ".join(FIELD_NAMES)
        )
    if not names:
        raise ConfigError("--fields names no field")
    return tuple(dict.fromkeys(names))
