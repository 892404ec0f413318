"""``gossamer search`` as a user types it: queries starting with '-', JSON errors, bad bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gossamer.cli import main
from gossamer.index import build_index
from gossamer.search.query import MAX_QUERY_CHARS

from ..cli_helpers import one_error
from ..index.fake_crawl import make_crawl, search_corpus


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = make_crawl(tmp_path_factory.mktemp("cli-search") / "crawl", search_corpus())
    build_index(folder)
    return folder


def search_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["search", *argv, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def urls(data: dict[str, object]) -> set[str]:
    hits = data["hits"]
    assert isinstance(hits, list)
    return {hit["url"] for hit in hits}


def test_a_query_word_may_start_with_a_dash(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    everything = urls(search_json(capsys, str(indexed), "write"))
    assert "http://b.test/journal" in everything
    excluded = search_json(capsys, str(indexed), "write", "-journal")
    assert excluded["understood"] == "write -journal"
    assert "http://b.test/journal" not in urls(excluded)
    assert "http://a.test/wal" in urls(excluded)
    # The word right after DIR, and words that begin like the -h option, are query words too.
    first = search_json(capsys, str(indexed), "-journal", "write", "-hidden")
    assert first["query"] == "-journal write -hidden"
    assert urls(first) == urls(excluded)


def test_words_after_the_folder_make_one_query(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert search_json(capsys, str(indexed), "write", "ahead")["query"] == "write ahead"
    assert search_json(capsys, "--english", str(indexed), "write ahead")["language"] == "en"


def test_after_a_double_dash_every_word_is_the_query(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", str(indexed), "--", "zebra", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "No results for 'zebra --json'."
    # Alone, the word is the query too: one that only excludes (a leading '-').
    error = one_error(main(["search", str(indexed), "--", "--json"]), capsys.readouterr().err)
    assert "(--json only excludes)" in error


def test_options_are_still_options(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = one_error(main(["search", str(indexed), "write", "--jsn"]), capsys.readouterr().err)
    assert "unrecognized arguments: --jsn" in message
    with pytest.raises(SystemExit) as help_exit:
        main(["search", str(indexed), "-h"])
    assert help_exit.value.code == 0
    assert "A query word may start with '-'" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["{missing}", "write"], "does not exist: crawl into it first"),
        (["{dir}", "write", "--page", "0"], "argument --page: must be between 1 and 1000"),
        (["{dir}", "x" * (MAX_QUERY_CHARS + 1)], f"longer than {MAX_QUERY_CHARS} characters"),
        (["{dir}", "caf\udce9"], "the query is not UTF-8 text"),
        (["{dir}"], "the following arguments are required: query"),
    ],
)
def test_with_json_an_error_is_one_json_object_too(
    indexed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    words = [w.format(dir=indexed, missing=tmp_path / "none") for w in argv]
    code = main(["search", *words, "--json"])
    out, err = capsys.readouterr()
    message = one_error(code, err)
    assert said in message
    lines = out.splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {"error": message}
    # Without --json nothing goes to stdout.
    assert main(["search", *words]) == 2
    assert capsys.readouterr().out == ""


def test_a_query_that_is_not_utf8_is_one_clear_error(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "caf\xe9" typed in a Latin-1 terminal: Python keeps the stray byte as a lone surrogate.
    message = one_error(main(["search", str(indexed), "caf\udce9"]), capsys.readouterr().err)
    assert message == "the query is not UTF-8 text; check the terminal's encoding (LANG, LC_ALL)"
