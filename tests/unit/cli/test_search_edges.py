"""``gossamer search`` at its edges: words only the links use, exclusions that reach them,
OR, and the queries and folders that are mistakes (one error line, exit status 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gossamer.cli import main
from gossamer.index import build_index

from ..cli_helpers import one_error, run
from ..index.fake_crawl import FakePage, html, make_crawl

TARGET = "http://c.test/trail"  # "forest" in its text; "river" only in the links to it
BOTH = "http://c.test/both"  # both words in its own text
LINKS = "http://d.test/links"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = [
        FakePage(TARGET, html("Trail notes", "The forest path climbs past old oaks.")),
        FakePage(BOTH, html("Valley walk", "The forest river runs clear and cold.")),
        FakePage(
            LINKS,
            html("Walks", "Walks we liked.", extra=f'<a href="{TARGET}">forest river</a>'),
            links=(TARGET,),
        ),
    ]
    folder = make_crawl(tmp_path_factory.mktemp("edges") / "crawl", pages)
    build_index(folder)
    return folder


def _json(capsys: pytest.CaptureFixture[str], folder: Path, *query: str) -> dict[str, Any]:
    assert main(["search", str(folder), "--json", "--", *query]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _hits(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {hit["url"]: hit for hit in data["hits"]}


def test_a_page_found_through_its_links_says_so(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hits = _hits(_json(capsys, indexed, '"forest river"'))
    assert hits[TARGET]["via_links"] is True
    assert hits[BOTH]["via_links"] is False and hits[LINKS]["via_links"] is False
    assert main(["search", str(indexed), '"forest river"']) == 0
    text = capsys.readouterr().out
    block = text[text.index(TARGET) :].split("\n\n")[0]
    assert "matched via links" in block
    assert text.count("matched via links") == 1


def test_an_exclusion_covers_the_words_of_links(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The trail page's own text has "forest" and no "river"; its links say "forest river".
    assert TARGET not in _hits(_json(capsys, indexed, "forest", "-river"))
    assert TARGET in _hits(_json(capsys, indexed, "forest", "-clear"))


def test_or_requires_either_word(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, indexed, "oaks", "OR", "clear")
    assert data["matched"] == "all"
    assert set(_hits(data)) == {TARGET, BOTH}
    assert data["understood"] == "oaks OR clear"
    # Beside another required word, OR binds the two words around it.
    assert set(_hits(_json(capsys, indexed, "forest", "oaks", "OR", "clear"))) == {TARGET, BOTH}
    assert set(_hits(_json(capsys, indexed, "walks", "OR", '"forest river"', "-oaks"))) == {
        BOTH,
        LINKS,
    }


@pytest.mark.parametrize(
    ("query", "said"),
    [
        (['"forest river'], "the query has an unclosed quote"),
        ([""], "the query has nothing to look for: give at least one word"),
        (["  "], "the query has nothing to look for"),
        (["-river"], "the query has nothing to look for (-river only excludes)"),
    ],
)
def test_a_query_that_is_a_mistake_is_one_error(
    indexed: Path, capsys: pytest.CaptureFixture[str], query: list[str], said: str
) -> None:
    error = one_error(*run(capsys, "search", indexed, "--", *query))
    assert error.startswith(said)


def test_a_folder_without_a_crawl_says_to_crawl_first(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", "search", str(missing), "wal"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"gossamer: error: {missing} does not exist: crawl into it first with"
        f" 'gossamer crawl SEEDS --out {missing}', then 'gossamer index {missing}'\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", "search", str(empty), "wal"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2 and "holds no crawl (no crawl.db)" in result.stderr
