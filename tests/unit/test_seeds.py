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
        ("http://a.com:0/", "port 0 cannot be connected to"),
        ("a.com:0/x", "port 0 cannot be connected to"),
        ("http://a\x00.com/", "contains control characters"),
        ("a.com/\x1b[2J", "contains control characters"),
        ("http://a.com/\u202eevil", "contains control characters"),
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


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("http://user:secret@a.com/", "http://***@a.com/"),
        ("https://tok3n@a.com/x", "https://***@a.com/x"),
        ("HTTP://u:p@a.com:8080/x?y=@z", "HTTP://***@a.com:8080/x?y=@z"),
        ("user:secret@a.com", "***@a.com"),
        ("ftp://user:secret@a.com/", "ftp://***@a.com/"),
    ],
)
def test_credentials_are_refused_and_never_shown(line: str, shown: str) -> None:
    result = parse_seeds(f"ufmg.br\n{line}\n")
    (problem,) = result.problems
    assert problem == SeedProblem(line=2, text=shown, reason="credentials in URL are not supported")
    assert "secret" not in repr(result)


def test_mailto_is_not_mistaken_for_credentials() -> None:
    (problem,) = parse_seeds("mailto:someone@example.com").problems
    assert problem.text == "mailto:someone@example.com"


def test_a_megabyte_line_is_a_problem_with_its_line_number() -> None:
    huge = "http://a.com/" + "x" * 1_000_000
    result = parse_seeds(f"ufmg.br\n{huge}\nusp.br\n")
    assert [seed.line for seed in result.seeds] == [1, 3]
    (problem,) = result.problems
    assert problem.line == 2
    assert problem.reason == "too long: 1000013 characters, a URL may have at most 2048"
    assert len(problem.text) < 300 and problem.text.endswith("(1000013 characters)")


def test_url_length_limit_follows_the_setting() -> None:
    url = "http://a.com/" + "x" * 100
    assert parse_seeds(url).seeds
    (problem,) = parse_seeds(url, max_url_length=50).problems
    assert problem.reason.startswith("too long")
    # Normalising can lengthen a URL (percent-encoding): the limit holds after it too.
    (problem,) = parse_seeds("http://a.com/" + "é" * 20, max_url_length=40).problems
    assert problem.reason.startswith("too long once normalised")


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


def test_a_line_that_is_not_utf8_is_a_problem_and_the_rest_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"ufmg.br\nhttp://caf\xe9.example/\nusp.br # caf\xe9 in a comment is fine\n")
    result = read_seeds(path)
    assert [seed.text for seed in result.seeds] == ["ufmg.br", "usp.br"]
    (problem,) = result.problems
    assert (problem.line, problem.reason) == (2, "not valid UTF-8")


def test_a_file_of_latin1_only_has_no_valid_seed(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("café.example\n".encode("latin-1"))
    with pytest.raises(SeedError, match=r"line 1: not valid UTF-8"):
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
        assert len(problem.text) < 300
    assert len({seed.urls for seed in result.seeds}) == len(result.seeds)


_PASSWORDS = st.text(
    alphabet=st.characters(blacklist_characters="/?#@\n\r", blacklist_categories=("Cs",)),
    min_size=3,
    max_size=20,
).filter(lambda p: p.strip() and p not in "https://***@a.test/page")


@settings(max_examples=100, deadline=None)
@given(_PASSWORDS, st.sampled_from(["http://", "https://", ""]))
def test_a_password_never_reaches_a_problem(password: str, scheme: str) -> None:
    result = parse_seeds(f"{scheme}user:{password}@a.test/page\n")
    assert result.seeds == ()
    assert all(password not in problem.text for problem in result.problems)
