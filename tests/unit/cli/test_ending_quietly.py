"""``cli/ending.ending_quietly``: SIGINT and SIGTERM for one crawl command."""

from __future__ import annotations

import signal

import pytest

from gossamer.cli.ending import ending_quietly


def test_a_signal_during_the_crawl_interrupts_it_and_the_handlers_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), ending_quietly():
        signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_signal_after_the_crawl_ended_is_only_said(capfd: pytest.CaptureFixture[str]) -> None:
    with ending_quietly() as end:
        end()
        signal.raise_signal(signal.SIGTERM)  # the summary is being written: it goes on
        print("summary", flush=True)
    captured = capfd.readouterr()
    assert captured.err == "gossamer: SIGTERM received after the crawl ended\n"
    assert captured.out == "summary\n"
