"""Terminal output of ``gossamer search``: what crawled text may not do to a terminal."""

from __future__ import annotations

import json

from gossamer.search.output import duplicates_label, format_json, format_text, printable
from gossamer.search.results import Copy, HitScores, SearchHit, SearchPage, Snippet


def test_terminal_output_removes_control_characters() -> None:
    assert printable("a\x1b]0;title\x07b\u202ec\td") == "a]0;titlebc d"


def _hit(same: int, near: int, copies: tuple[Copy, ...] = ()) -> SearchHit:
    scores = HitScores(1.0, 1.0, 0.1, 0.5, 0.2, 0.5, 1.2, 0)
    return SearchHit(
        1, "http://a.test/", "Title", "a.test", Snippet("text"), "html", "en",
        "2024-01-01T00:00:00+00:00", scores, same + near, 7, same, near, copies,
    )  # fmt: skip


def _page(hit: SearchHit) -> SearchPage:
    return SearchPage("q", "q", 1, 30, 1, 1, (hit,), "all", None, True, 0.01)


def test_duplicates_are_counted_and_named_as_what_they_are() -> None:
    assert duplicates_label(_hit(0, 0)) == ""
    assert duplicates_label(_hit(1, 0)) == "1 other page with the same content"
    assert duplicates_label(_hit(0, 1)) == "1 near-duplicate"
    assert duplicates_label(_hit(2, 3)) == (
        "2 other pages with the same content, 3 near-duplicates"
    )


def test_text_and_json_list_each_copy_with_its_kind() -> None:
    copies = (Copy("http://b.test/\x1b[2J", "B", True), Copy("http://c.test/", "C", False))
    hit = _hit(1, 2, copies)
    text = format_text(_page(hit))
    assert "1 other page with the same content, 2 near-duplicates:" in text
    assert "same content: http://b.test/[2J" in text  # no escape reaches the terminal
    assert "near-duplicate: http://c.test/" in text
    assert "... and 1 more" in text
    [data] = json.loads(format_json(_page(hit)))["hits"]
    assert (data["same_content"], data["near_duplicates"], data["duplicates"]) == (1, 2, 3)
    assert [(c["url"], c["exact"]) for c in data["copies"]] == [
        ("http://b.test/\x1b[2J", True),
        ("http://c.test/", False),
    ]
