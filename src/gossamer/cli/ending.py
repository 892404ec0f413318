"""Command line, the end of a crawl: its exit status, and the signals that come too late.

Data flow: an engine's stop reason -> **cli.ending** -> the exit status of ``gossamer crawl``
and ``gossamer worker``. A crawl stopped before its end (Ctrl-C, SIGTERM, ``gossamer ctl
stop``, the web page's stop button) exits with :data:`EXIT_STOPPED`, so a script can tell it
from a crawl that ended (0: no URL left, the page target or the time limit reached) and
continue it with ``--resume``.

While an engine crawls, it answers SIGINT and SIGTERM itself (it stops after the fetches in
flight and writes its reports). Before it starts, both interrupt the command, as Ctrl-C
always did (``gossamer: interrupted``, status 130). Once it has returned, the crawl is over
and its summary is still to be printed: a signal then is said and otherwise ignored, so the
summary is never lost to a SIGTERM in the crawl's last moment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["EXIT_STOPPED", "STOPPED", "ending_quietly", "exit_status"]

EXIT_STOPPED = 3
# The engines' reasons for a crawl stopped before its end: a signal, or a stop asked through
# the control channel (ctl, the web page).
STOPPED = frozenset({"signal", "stopped"})
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_status(reason: str) -> int:
    """0 for a crawl that ended, :data:`EXIT_STOPPED` for one stopped before its end."""
    return EXIT_STOPPED if reason in STOPPED else 0


@contextlib.contextmanager
def ending_quietly() -> Iterator[Callable[[], None]]:
    """SIGINT and SIGTERM for one crawl command; call what it yields once the engine has
    returned. The handlers found are put back at the end."""
    ended = False

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not ended:
            raise KeyboardInterrupt
        name = signal.Signals(signum).name
        # Straight to the descriptor: a handler runs between two steps of the main thread,
        # which may be in the middle of a write to sys.stderr (the summary), and a print
        # there fails with "reentrant call" inside the interrupted code.
        with contextlib.suppress(OSError, ValueError):
            os.write(
                sys.stderr.fileno(), f"gossamer: {name} received after the crawl ended\n".encode()
            )

    def install() -> None:
        for sig in _SIGNALS:
            signal.signal(sig, on_signal)

    def end() -> None:
        nonlocal ended
        ended = True
        # Closing an event loop resets the handlers it had taken to the system's defaults.
        install()

    try:
        previous = {sig: signal.getsignal(sig) for sig in _SIGNALS}
        install()
    except ValueError:  # not the main thread (a test's): signals are not this command's
        yield lambda: None
        return
    try:
        yield end
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
