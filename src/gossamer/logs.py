"""How log records reach the person at the terminal: one set-up for the CLI and its workers.

Data flow: any module's ``logging.getLogger(__name__)`` -> **logs** -> stderr. Only the CLI
(and each ``--workers`` process it spawns, which starts without the CLI's set-up) calls
:func:`configure`; library code never touches handlers.

At the default level a record is a notice for the user, so it reads like the CLI's own
lines: ``gossamer: resuming crawl in out: ...`` (``gossamer: error: ...`` for an error, and
``gossamer: worker 1: ...`` from a worker process). Nothing in the line is for a developer:
no timestamp, level or logger name. With ``-v`` or ``-vv`` the user asked to watch the
crawl's workings, and every line carries them (``... level=INFO logger=gossamer.engine...``).
"""

from __future__ import annotations

import logging
import sys

__all__ = ["configure", "level_of"]

_DETAILED = "%(asctime)s level=%(levelname)s logger=%(name)s{worker} %(message)s"


class _Notice(logging.Formatter):
    """``gossamer: message``: a record as one of the CLI's own lines."""

    def __init__(self, worker: int | None) -> None:
        super().__init__("%(message)s")
        self._who = "" if worker is None else f"worker {worker}: "

    def format(self, record: logging.LogRecord) -> str:
        kind = "error: " if record.levelno >= logging.ERROR else ""
        return f"gossamer: {self._who}{kind}{super().format(record)}"


def level_of(verbose: int) -> int:
    """The logging level ``-v`` given ``verbose`` times asks for: warnings, info, debug."""
    return logging.WARNING - 10 * min(verbose, 2)


def configure(level: int, worker: int | None = None) -> None:
    """Send the records of ``level`` and above to stderr, as notices at the default level
    and as detailed lines below it; ``worker``: the ``--workers`` process they come from."""
    handler = logging.StreamHandler(sys.stderr)
    if level >= logging.WARNING:
        handler.setFormatter(_Notice(worker))
    else:
        where = "" if worker is None else f" worker={worker} pid=%(process)d"
        handler.setFormatter(logging.Formatter(_DETAILED.format(worker=where)))
    logging.basicConfig(level=level, handlers=[handler])
