"""Result values: snippets with highlights, grouping per host, JSON."""

from __future__ import annotations

import json

from gossamer.search import HitScores, SearchHit, SearchPage, Snippet


def test_byte_ranges_become_character_ranges() -> None:
    fragment = "Zürich café — the running foxes"
    start = fragment.encode().index(b"running")
    snippet = Snippet.from_bytes_ranges(fragment, [(start, start + 7)])
    assert snippet.highlights == ((18, 25),)
    assert snippet.parts() == [("Zürich café — the ", False), ("running", True), (" foxes", False)]


def test_overlapping_ranges_keep_the_first() -> None:
    snippet = Snippet.from_bytes_ranges("abcdef", [(2, 4), (0, 3)])
    assert snippet.highlights == ((0, 3),)


def hit(position: int, host: str) -> SearchHit:
    scores = HitScores(1.0, 1.0, 0.1, 0.5, 0.2, 0.5, 1.2, 0)
    return SearchHit(
        position, f"http://{host}/{position}", "t", host, Snippet("s", ((0, 1),)), "html", "en",
        "2024-01-01T00:00:00+00:00", scores, 0, position,
    )  # fmt: skip


def test_page_groups_hits_per_host_and_serialises() -> None:
    page = SearchPage(
        "q", "q", 1, 30, 3, 61, (hit(1, "a"), hit(2, "b"), hit(3, "a")), "all", None, True, 0.01
    )
    assert [(host, [h.position for h in hits]) for host, hits in page.by_host()] == [
        ("a", [1, 3]),
        ("b", [2]),
    ]
    assert page.pages == 3
    data = json.loads(json.dumps(page.to_json()))
    assert data["pages"] == 3
    assert data["hits"][0]["snippet"]["highlights"] == [[0, 1]]
