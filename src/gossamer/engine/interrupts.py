"""Ctrl-C and SIGTERM for a lone crawl: the first stops it after its in-flight fetches, the
second stops waiting for them; and for the loops that wait on file descriptors instead of an
event loop (the ``--workers`` coordinator, ``--continuous`` between rounds), the signals as a
pipe to wait on (:func:`woken_by_signals`).

Data flow: the operating system's signals -> **interrupts** -> ``Crawler.stop("signal")``. A
``--workers`` worker ignores them: its coordinator decides what they mean. While a crawl
that has stopped writes its last records and reports (:func:`finishing`), a signal is said
and ignored: the crawl is already ending, and cutting it short would lose its summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["Interrupts", "drain", "finishing", "woken_by_signals"]

log = logging.getLogger(__name__)

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_WAKE_BYTES = 64  # read at once from the signal pipe: any number of signals is one stop


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


@contextlib.contextmanager
def woken_by_signals() -> Iterator[int]:
    """SIGINT and SIGTERM for a loop that waits on file descriptors (the ``--workers``
    coordinator, ``--continuous`` between rounds): each signal only writes a byte to a pipe
    whose reading end is yielded, for the loop to wait on and then act. A handler does
    nothing else: it runs between two steps of the loop's own code, and one that put to a
    queue, or set an event, while the loop held that object's lock waited for it for ever
    (a ``--workers`` crawl hung after SIGTERM). The handlers found are put back at the end."""
    reading, writing = os.pipe()
    os.set_blocking(writing, False)

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):  # the pipe full: a wake-up is waiting already
            os.write(writing, b"s")

    previous = {sig: signal.signal(sig, on_signal) for sig in _SIGNALS}
    try:
        yield reading
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(reading)
        os.close(writing)


def drain(woken: int) -> None:
    """Empty the signal pipe of :func:`woken_by_signals` once its wake-up is handled."""
    os.set_blocking(woken, False)
    with contextlib.suppress(BlockingIOError):
        while os.read(woken, _WAKE_BYTES):
            pass
