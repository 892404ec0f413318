"""Unit and property tests for the seeds file reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.errors import SeedError
from gossamer.seeds import Seed, SeedList, SeedProblem, parse_seeds, read_seeds
from gossamer.urls import canonicalize


def _only_seed(text: str) -> Seed:
    result = parse_seeds(text)
    assert result.problems == ()
    assert len(result.seeds) == 1
    return result.seeds[0]


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("ufmg.br", ("https://ufmg.br/", "http://ufmg.br/")),
        ("WWW.UFMG.BR/Dept", ("https://www.ufmg.br/Dept", "http://www.ufmg.br/Dept")),
        ("localhost:8080", ("https://localhost:8080/", "http://localhost:8080/")),
        (
            "example.com:8080/x?y=1",
            ("https://example.com:8080/x?y=1", "http://example.com:8080/x?y=1"),
        ),
        ("127.0.0.1:8001/p", ("https://127.0.0.1:8001/p", "http://127.0.0.1:8001/p")),
        ("[::1]:9000", ("https://[::1]:9000/", "http://[::1]:9000/")),
        ("bücher.de", ("https://xn--bcher-kva.de/", "http://xn--bcher-kva.de/")),
        ("https://ufmg.br", ("https://ufmg.br/",)),
        ("http://ufmg.br:80/a/../b", ("http://ufmg.br/b",)),
        ("HTTPS://Example.com/page#section", ("https://example.com/page",)),
        ("http://intranet/", ("http://intranet/",)),
    ],
)
def test_valid_lines(text: str, urls: tuple[str, ...]) -> None:
    seed = _only_seed(text)
    assert seed.urls == urls
    assert seed.line == 1
    assert seed.text == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("ftp://files.example.com/", "scheme 'ftp' is not http or https"),
        ("mailto:someone@example.com", "scheme 'mailto' is not http or https"),
        ("javascript:alert(1)", "scheme 'javascript' is not http or https"),
        ("exa mple.com", "contains whitespace"),
        ("http://a.com/x\ty", "contains whitespace"),
        ("exa$mple.com", "bad host 'exa$mple.com'"),
        ("-leading.com", "bad host '-leading.com'"),
        ("http://" + "a" * 64 + ".com/", "bad host"),
        ("notes", "bad host 'notes': a bare name needs a dot or a scheme"),
        ("http://", "not a valid URL"),
        ("http://[::1/", "not a valid URL"),
        ("a.com:99999", "not a valid URL or domain"),
        ("<>.com", "not a valid URL or domain"),
    ],
)
def test_problem_lines(text: str, reason: str) -> None:
    result = parse_seeds(text)
    assert result.seeds == ()
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert problem.line == 1
    assert problem.text == text
    assert problem.reason.startswith(reason)


def test_comments_blank_lines_and_line_numbers() -> None:
    text = (
        "\ufeff# crawl of Brazilian universities\n"
        "\n"
        "   ufmg.br   \n"
        "usp.br # trailing comment\n"
        "\t# indented comment\n"
        "http://a.com/x#fragment-not-comment\n"
        "ftp://bad.example/\r\n"
        "unicamp.br\r\n"
    )
    result = parse_seeds(text)
    assert [(seed.line, seed.text) for seed in result.seeds] == [
        (3, "ufmg.br"),
        (4, "usp.br"),
        (6, "http://a.com/x#fragment-not-comment"),
        (8, "unicamp.br"),
    ]
    assert result.seeds[2].urls == ("http://a.com/x",)
    assert result.problems == (
        SeedProblem(line=7, text="ftp://bad.example/", reason="scheme 'ftp' is not http or https"),
    )


def test_duplicates_are_ignored_silently() -> None:
    result = parse_seeds("ufmg.br\nUFMG.br\nhttps://ufmg.br/\nhttps://UFMG.BR:443\nufmg.br/\n")
    assert result == SeedList(
        seeds=(
            Seed(urls=("https://ufmg.br/", "http://ufmg.br/"), line=1, text="ufmg.br"),
            Seed(urls=("https://ufmg.br/",), line=3, text="https://ufmg.br/"),
        ),
        problems=(),
    )


def test_empty_text() -> None:
    assert parse_seeds("") == SeedList(seeds=(), problems=())
    assert parse_seeds("# nothing\n\n   \n") == SeedList(seeds=(), problems=())


# --- read_seeds ----------------------------------------------------------------------


def test_read_seeds(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("ufmg.br\nbad host.com\n", encoding="utf-8")
    result = read_seeds(path)
    assert [seed.text for seed in result.seeds] == ["ufmg.br"]
    assert [problem.line for problem in result.problems] == [2]


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.txt"
    with pytest.raises(SeedError, match=r"^seeds file not found: .*absent\.txt$"):
        read_seeds(path)


def test_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match=r"^seeds file unreadable: "):
        read_seeds(tmp_path)


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("ufmg.br # café\n".encode("latin-1"))
    with pytest.raises(SeedError, match=r"^seeds file is not UTF-8: .*latin1\.txt"):
        read_seeds(path)


def test_no_valid_seed(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("# only junk\nftp://x.org/\nnot a url\n", encoding="utf-8")
    with pytest.raises(SeedError) as info:
        read_seeds(path)
    assert str(info.value).startswith(f"bad seed: no valid seed in {path} (2 problems: line 2:")
    assert "line 3:" in str(info.value)
    assert "\n" not in str(info.value)


def test_empty_file_has_no_valid_seed(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("", encoding="utf-8")
    with pytest.raises(SeedError, match=r"\(0 problems\)$"):
        read_seeds(path)


# --- properties ----------------------------------------------------------------------

_LINE_PARTS = st.sampled_from(
    ["http://", "https://", "ftp://", "#", " #", " ", "\t", "\n", "\r\n", ":", ":8080", "/", ".",
     "a", "ufmg", ".br", "é", "[::1]", "%", "@", "-", "localhost", "\ufeff"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(_LINE_PARTS, max_size=30).map("".join)))
def test_parse_seeds_never_raises(text: str) -> None:
    result = parse_seeds(text)
    line_count = text.count("\n") + 1
    for seed in result.seeds:
        assert 1 <= seed.line <= line_count
        assert 1 <= len(seed.urls) <= 2
        for url in seed.urls:
            assert canonicalize(url) == url
    for problem in result.problems:
        assert 1 <= problem.line <= line_count
        assert problem.reason
    assert len({seed.urls for seed in result.seeds}) == len(result.seeds)
