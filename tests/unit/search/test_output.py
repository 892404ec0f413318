"""Terminal output of ``gossamer search``: what crawled text may not do to a terminal."""

from __future__ import annotations

from gossamer.search.output import printable


def test_terminal_output_removes_control_characters() -> None:
    assert printable("a\x1b]0;title\x07b\u202ec\td") == "a]0;titlebc d"
