"""Crawled titles and snippets in the web UI: no bidi controls or zero-width characters, and
long titles cut in the results but whole in the page-info view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gossamer.search.output import printable
from gossamer.web.pages import TITLE_CHARS, shown_title

from .rough_crawl import BIDI_CLEAN, BIDI_TITLE, LONG_TITLE
from .served import Client, serve_and_check

# Bidi embeddings, overrides and isolates, marks, and zero-width characters.
INVISIBLE = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F]]
INVISIBLE += ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def pages_for(folder: Path, *paths: tuple[str, dict[str, str]]) -> list[str]:
    texts: list[str] = []

    async def check(client: Client) -> None:
        for path, params in paths:
            response = await client.get(path, params=params)
            assert response.status == 200
            texts.append(await response.text())

    serve_and_check(folder, check)
    return texts


def test_bidi_and_zero_width_characters_never_reach_the_page(rough: Path) -> None:
    assert any(char in BIDI_TITLE for char in INVISIBLE)
    results, info = pages_for(
        rough,
        ("/search", {"q": "bidiword"}),
        ("/info", {"url": "http://r.test/bidi", "q": "bidiword"}),
    )
    for page in (results, info):
        assert not set(page) & set(INVISIBLE)
    assert f">{BIDI_CLEAN}</a></h3>" in results
    snippet = re.search(r'<p class="snippet">(.*?)</p>', results)
    assert snippet is not None
    assert "isolated zerowidth" in re.sub("</?mark>", "", snippet.group(1))
    assert f"<h1>{BIDI_CLEAN}</h1>" in info


def test_a_long_title_is_cut_in_results_and_whole_in_page_info(rough: Path) -> None:
    results, info = pages_for(
        rough, ("/search", {"q": "longtitle"}), ("/info", {"url": "http://r.test/long"})
    )
    heading = re.search(r"<h3><a [^>]*>([^<]*)</a></h3>", results)
    assert heading is not None
    shown = heading.group(1)
    assert len(shown) <= TITLE_CHARS
    assert shown.endswith("\u2026")
    assert LONG_TITLE.startswith(shown[:-1])
    assert f"<h1>{LONG_TITLE}</h1>" in info


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("", ""),
        ("Plain title", "Plain title"),
        ("  spaced \t out\n title ", "spaced out title"),
        ("a\u202eb\u200bc\x1b[31md", "abc[31md"),
        ("x" * TITLE_CHARS, "x" * TITLE_CHARS),
        ("x" * (TITLE_CHARS + 1), "x" * (TITLE_CHARS - 1) + "\u2026"),
        ("word " * 40, ("word " * 24).strip() + "\u2026"),
    ],
)
def test_shown_title(title: str, shown: str) -> None:
    assert shown_title(title) == shown


def test_shown_title_whole() -> None:
    assert shown_title("y" * 500, None) == "y" * 500


def test_the_web_and_the_terminal_share_one_sanitiser() -> None:
    text = "".join(f"w{char}" for char in INVISIBLE)
    assert printable(text) == "w" * len(INVISIBLE)
    assert shown_title(text, None) == printable(text)
