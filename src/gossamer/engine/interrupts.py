"""Ctrl-C and SIGTERM for a lone crawl: the first stops it after its in-flight fetches, the
second stops waiting for them.

Data flow: the operating system's signals -> **interrupts** -> ``Crawler.stop("signal")``. A
``--workers`` worker ignores them: its coordinator decides what they mean.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable

__all__ = ["Interrupts"]

log = logging.getLogger(__name__)

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    """Handlers on ``loop`` from ``install`` to ``remove``; a loop without signal support (not
    the main thread, another platform) is left as it is."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        stop: Callable[[str], None],
        stopping: Callable[[], str],
    ) -> None:
        self._loop = loop
        self._stop = stop
        self._stopping = stopping  # the crawl's stop reason, "" while it runs

    def install(self) -> None:
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                self._loop.add_signal_handler(sig, self._on_signal, sig)

    def remove(self) -> None:
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                self._loop.remove_signal_handler(sig)

    def _on_signal(self, sig: signal.Signals) -> None:
        if self._stopping() == "signal":
            # A second Ctrl-C: stop waiting for in-flight fetches.
            raise KeyboardInterrupt
        log.warning("received %s, stopping after in-flight fetches", sig.name)
        self._stop("signal")
