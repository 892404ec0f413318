"""Ctrl-C and SIGTERM for a lone crawl: the first stops it after its in-flight fetches, the
second stops waiting for them.

Data flow: the operating system's signals -> **interrupts** -> ``Crawler.stop("signal")``. A
``--workers`` worker ignores them: its coordinator decides what they mean. While a crawl
that has stopped writes its last records and reports (:func:`finishing`), a signal is said
and ignored: the crawl is already ending, and cutting it short would lose its summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["Interrupts", "finishing"]

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
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def install(self) -> None:
        self._previous = {sig: signal.getsignal(sig) for sig in _SIGNALS}
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                self._loop.add_signal_handler(sig, self._on_signal, sig)

    def remove(self) -> None:
        """Take the handlers off the loop and put back those found at ``install`` (the loop
        alone would leave the system's defaults, and a SIGTERM would then kill the process)."""
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                self._loop.remove_signal_handler(sig)
        for number, handler in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):  # not the main thread
                signal.signal(number, handler)

    def _on_signal(self, sig: signal.Signals) -> None:
        if self._stopping() == "signal":
            # A second Ctrl-C: stop waiting for in-flight fetches.
            raise KeyboardInterrupt
        log.warning("received %s, stopping after in-flight fetches", sig.name)
        self._stop("signal")


def _ignored(signum: int, _frame: FrameType | None) -> None:
    log.warning("received %s while the crawl writes its reports: finishing first",
                signal.Signals(signum).name)  # fmt: skip


@contextlib.contextmanager
def finishing() -> Iterator[None]:
    """SIGINT and SIGTERM said and ignored for the block: a stopped crawl's last writes.
    Outside the main thread (where signals are not delivered) nothing changes."""
    try:
        previous = {sig: signal.signal(sig, _ignored) for sig in _SIGNALS}
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
