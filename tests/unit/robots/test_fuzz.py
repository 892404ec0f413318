"""Property tests: robots.txt parsing survives any input, and matching agrees with a slow oracle."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.robots import parse_robots

_FEW = settings(max_examples=150, deadline=None)

_KEYS = ["User-agent", "user-agent", "Allow", "Disallow", "Crawl-delay", "Sitemap", "Foo"]
_line = st.builds(
    "{}{}{}".format,
    st.sampled_from(_KEYS),
    st.sampled_from([":", ": ", " :", " ", ""]),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30),
)
_robots_text = st.lists(_line, max_size=25).map("\n".join)


@_FEW
@given(content=st.binary(max_size=2000), path=st.text(max_size=60))
def test_parse_never_raises_on_any_bytes(content: bytes, path: str) -> None:
    rules = parse_robots(content, "gossamer")
    assert isinstance(rules.is_allowed(path), bool)


@_FEW
@given(text=_robots_text, product=st.sampled_from(["gossamer", "foo", "", "*"]))
def test_is_allowed_never_raises_on_any_path(text: str, product: str) -> None:
    rules = parse_robots(text.encode("utf-8"), product)
    for path in ["", "/", "/%", "/%zz", "/\u30c4", "/a?b=%e3", "/" + "a*" * 50, "\x00"]:
        assert isinstance(rules.is_allowed(path), bool)
    assert rules.crawl_delay is None or rules.crawl_delay >= 0


_comment_line = st.one_of(
    st.just(""),
    st.builds("{}#{}".format, st.sampled_from(["", " ", "\t"]), st.text(max_size=40)).map(
        lambda line: re.sub(r"[\r\n]", " ", line)
    ),
)


@_FEW
@given(
    lines=st.lists(_comment_line, max_size=20),
    newline=st.sampled_from(["\n", "\r", "\r\n"]),
    path=st.text(max_size=40).map(lambda tail: "/" + tail),
)
def test_a_file_of_comments_allows_everything(lines: list[str], newline: str, path: str) -> None:
    rules = parse_robots(newline.join(lines).encode("utf-8"), "gossamer")
    assert rules.is_allowed(path)
    assert rules.crawl_delay is None
    assert rules.sitemaps == ()


# Patterns and paths over a small alphabet without '%' or non-ASCII, so normalisation leaves
# them alone and the oracle below can read the patterns directly.
_pattern = st.text(alphabet="/ab*$", min_size=1, max_size=8)
_path = st.text(alphabet="/ab?", max_size=12).map(lambda tail: "/" + tail)


def _oracle(rules: list[tuple[bool, str]], path: str) -> bool:
    best: tuple[int, bool] | None = None
    for allow, pattern in rules:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        regex = ".*".join(re.escape(piece) for piece in body.split("*"))
        if re.match(regex + (r"\Z" if anchored else ""), path, flags=re.DOTALL):
            candidate = (len(pattern), allow)
            best = candidate if best is None else max(best, candidate)
    return True if best is None else best[1]


@settings(max_examples=300, deadline=None)
@given(rules=st.lists(st.tuples(st.booleans(), _pattern), max_size=8), path=_path)
def test_matching_agrees_with_a_regex_oracle(rules: list[tuple[bool, str]], path: str) -> None:
    lines = ["User-agent: gossamer"]
    lines += [f"{'Allow' if allow else 'Disallow'}: {pattern}" for allow, pattern in rules]
    parsed = parse_robots("\n".join(lines).encode("ascii"), "gossamer")
    assert parsed.is_allowed(path) is _oracle(rules, path)
