"""Store stage, a catalogue's mark: whether a folder is a catalogue of crawl folders
(``store/catalogue_build.py``, made by ``gossamer index DIR... --out OUT``) rather than a
crawl, and the refusal of what only a crawl can do (crawl, resume, recover: every writer
of a crawl folder takes ``crawling.folder.CrawlLock``, which asks here).

Data flow: ``OUT/catalogue.json`` -> **catalogue** -> the crawl folder lock and ``merge``. It
imports nothing but ``json``, so that a crawl's start pays nothing for it.
"""

from __future__ import annotations

import json
from pathlib import Path

from gossamer.errors import StoreError

__all__ = ["CATALOGUE_FILE", "catalogue_of", "refuse_catalogue"]

CATALOGUE_FILE = "catalogue.json"  # in OUT: the crawl folders it reads, a JSON list


def catalogue_of(folder: Path) -> list[str] | None:
    """The folders ``folder`` is a catalogue of; None for a crawl folder (or none at all).
    A file, not a row of ``crawl.db``: a crawl's lock asks before any database is opened,
    and a killed crawl's write-ahead log must be left exactly as it is."""
    try:
        folders = json.loads((folder / CATALOGUE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StoreError(f"{folder / CATALOGUE_FILE} cannot be read: {exc}") from exc
    if not isinstance(folders, list):
        raise StoreError(f"{folder / CATALOGUE_FILE} is not a list of folders")
    return [str(name) for name in folders]


def refuse_catalogue(folder: Path, doing: str) -> None:
    """A ``StoreError`` when ``folder`` is a catalogue: it holds no crawl to ``doing``."""
    sources = catalogue_of(folder)
    if sources is not None:
        raise StoreError(
            f"{folder} is a catalogue of {len(sources)} crawl folders made by 'gossamer index"
            f" --out', not a crawl: {doing} ({', '.join(sources)})"
        )
