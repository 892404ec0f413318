"""A ``--workers`` worker's inbox, handled on its crawl's event loop.

Data flow: coordinator -> the worker's inbox queue -> its reader thread (``Part.listen``) ->
**these handlers**, on the event loop -> admission (URLs other workers found for hosts this
worker owns, seeds added live with their other forms) and the page target (grants). Every
batch handled counts as processed: that is how the coordinator knows the whole crawl has run
dry (every worker idle, every batch it forwarded processed).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from gossamer.engine.partition import Discovery, Part
from gossamer.engine.pipeline import Pipeline

__all__ = ["Inbox"]


class Inbox:
    """What the coordinator sends one worker, turned into admissions and grants."""

    def __init__(
        self, part: Part, pipeline: Pipeline, wake: asyncio.Event, stop: Callable[[str], None]
    ) -> None:
        self._part = part
        self._pipeline = pipeline
        self._wake = wake  # the dispatcher's: new work or pages to store
        self._stop = stop

    def listen(self, loop: asyncio.AbstractEventLoop) -> threading.Thread:
        """Start the reader thread; its messages are handled on ``loop``."""
        return self._part.listen(loop, self._urls, self._granted, self._stop, self._seeds)

    def _urls(self, batch: list[Discovery]) -> None:
        for url, depth, referrer in batch:
            self._pipeline.admit(url, depth, referrer)
        self._processed()

    def _seeds(self, seeds: list[tuple[str, ...]]) -> None:
        for forms in seeds:  # a bare domain's https first, then http, as in one process
            self._pipeline.admit(forms[0], 0, None, fallbacks=tuple(forms[1:]))
        self._processed()

    def _processed(self) -> None:
        self._part.processed += 1
        self._part.busy()
        self._wake.set()

    def _granted(self, pages: int) -> None:
        self._part.granted(pages)
        self._wake.set()
