"""Rules match what is fetched: a URL the site disallows is never allowed (issue 9).

The frontier asks :meth:`RobotsRules.is_allowed` about the path and query of a canonical
URL, so a rule must be spelt the way :func:`gossamer.urls.canonicalize` spells URLs or it
silently never matches. Every test here goes through the real parser and the real
canonicaliser, as a link the crawler found would.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gossamer.robots import parse_robots
from gossamer.robots.matcher import pattern_spellings
from gossamer.urls import canonicalize

from .counting import counting


def allowed(robots_txt: str, url: str) -> bool:
    """Whether the crawler may fetch the link ``url`` under the ``*`` group ``robots_txt``."""
    rules = parse_robots(("User-agent: *\n" + robots_txt).encode("utf-8"), "gossamer")
    canonical = canonicalize(url)
    assert canonical is not None
    # What the frontier asks: everything from the first '/' after "scheme://".
    return rules.is_allowed(canonical[canonical.index("/", canonical.index("//") + 2) :])


# --- characters the URL parser escapes --------------------------------------------------


def test_braces_in_a_rule_match_the_escaped_braces_of_a_canonical_path() -> None:
    assert canonicalize("http://h/{videoId}/x") == "http://h/%7BvideoId%7D/x"
    assert not allowed("Disallow: /{videoId}/\n", "http://h/{videoId}/x")
    assert not allowed("Disallow: /{videoId}/\n", "http://h/%7bvideoId%7d/x")
    assert allowed("Disallow: /{videoId}/\n", "http://h/videoId/x")


# Every ASCII character but the robots.txt operators ('*', '$'), the comment sign and the
# line ends, which cannot stand for themselves in a rule.
_LITERALS = [chr(code) for code in range(0x80) if chr(code) not in "*$#\n\r"]


@pytest.mark.parametrize("char", _LITERALS, ids=lambda char: f"{ord(char):02x}")
def test_any_character_in_a_path_rule_matches_the_canonical_path(char: str) -> None:
    assert not allowed(f"Disallow: /a{char}b\n", f"http://h/a{char}b")
    assert not allowed(f"Disallow: /a{char}b\n", f"http://h/a{char}b/more?q")


@pytest.mark.parametrize("char", _LITERALS, ids=lambda char: f"{ord(char):02x}")
def test_any_character_in_a_query_rule_matches_the_canonical_query(char: str) -> None:
    assert not allowed(f"Disallow: /p?a{char}b\n", f"http://h/p?a{char}b")
    assert not allowed(f"Disallow: /*?a{char}b\n", f"http://h/x/p?a{char}b&more")


@pytest.mark.parametrize(("char", "escaped"), [("`", "%60"), ("^", "%5E"), (" ", "%20")])
def test_backtick_caret_and_space_in_a_path_rule(char: str, escaped: str) -> None:
    robots_txt = f"Disallow: /x{char}y\n"
    assert not allowed(robots_txt, f"http://h/x{char}y")
    assert not allowed(robots_txt, f"http://h/x{escaped}y")
    assert allowed(robots_txt, "http://h/xy")


def test_double_quote_in_path_and_query_rules() -> None:
    assert not allowed('Disallow: /say/"hi"\n', 'http://h/say/"hi"')
    assert not allowed('Disallow: /say?q="hi"\n', 'http://h/say?q="hi"')


def test_single_quote_is_escaped_in_the_query_only() -> None:
    # WHATWG escapes "'" in the query of http(s) URLs, but not in the path.
    assert canonicalize("http://h/it's?q=it's") == "http://h/it's?q=it%27s"
    assert not allowed("Disallow: /it's\n", "http://h/it's")
    assert not allowed("Disallow: /search?q=it's\n", "http://h/search?q=it's")
    assert allowed("Disallow: /search?q=it's\n", "http://h/search?q=its")


def test_backslash_in_a_path_rule_is_a_slash_and_stays_in_the_query() -> None:
    assert canonicalize("http://h/a\\b?c\\d") == "http://h/a/b?c\\d"
    assert not allowed("Disallow: /a\\b\n", "http://h/a\\b")
    assert not allowed("Disallow: /a\\b\n", "http://h/a/b")
    assert not allowed("Disallow: /p?c\\d\n", "http://h/p?c\\d")
    assert allowed("Disallow: /p?c\\d\n", "http://h/p?c/d")


def test_wildcard_rules_match_in_the_query_as_well_as_in_the_path() -> None:
    # After a '*' the rest of a rule may fall in the query, where '{' and '^' stay bare
    # and "'" is escaped: the opposite of the path.
    for url in ["http://h/a/{{tpl}}", "http://h/search?q={{tpl}}"]:
        assert not allowed("Disallow: /*{{\n", url)
    for url in ["http://h/it's", "http://h/search?q=it's"]:
        assert not allowed("Disallow: /*'\n", url)
    for url in ["http://h/x^y", "http://h/x?y^z"]:
        assert not allowed("Disallow: /*^\n", url)
    assert allowed("Disallow: /*{{\n", "http://h/search?q=tpl")


def test_wildcard_rules_keep_their_specificity_in_the_query() -> None:
    robots_txt = "Disallow: /\nAllow: /*{id}\n"
    assert allowed(robots_txt, "http://h/item/{id}")
    assert allowed(robots_txt, "http://h/item?ref={id}")
    assert not allowed(robots_txt, "http://h/item?ref=id")


# --- escapes -------------------------------------------------------------------------------


def test_a_lone_percent_in_a_rule_matches_a_lone_percent_in_a_url() -> None:
    assert canonicalize("http://h/a%b") == "http://h/a%25b"
    assert not allowed("Disallow: /a%b\n", "http://h/a%b")
    assert not allowed("Disallow: /a%b\n", "http://h/a%25b")
    assert not allowed("Disallow: /100%\n", "http://h/100%")
    assert not allowed("Disallow: /%zz\n", "http://h/%zz/x")
    assert allowed("Disallow: /a%b\n", "http://h/ab")


def test_escaped_unreserved_characters_in_an_allow_are_decoded() -> None:
    robots_txt = "Disallow: /\nAllow: /%62%61%7A\n"
    assert allowed(robots_txt, "http://h/baz")
    assert allowed(robots_txt, "http://h/%62%61%7a")
    assert not allowed(robots_txt, "http://h/bar")


def test_escaped_unreserved_characters_in_a_disallow_are_decoded() -> None:
    assert not allowed("Disallow: /%7ejoe/\n", "http://h/~joe/x")
    assert not allowed("Disallow: /%7Ejoe/\n", "http://h/%7Ejoe/x")


def test_two_spellings_of_one_rule_tie_and_the_allow_wins() -> None:
    assert allowed("Disallow: /%7Ejoe/\nAllow: /~joe/\n", "http://h/~joe/x")
    assert allowed("Disallow: /{x}\nAllow: /%7bx%7d\n", "http://h/{x}")
    assert allowed("Disallow: /caf%C3%A9\nAllow: /café\n", "http://h/café")


def test_non_ascii_rules_match_the_utf8_escapes_of_canonical_urls() -> None:
    assert canonicalize("http://h/café") == "http://h/caf%C3%A9"
    assert not allowed("Disallow: /café\n", "http://h/café")
    assert not allowed("Disallow: /café\n", "http://h/caf%c3%a9/menu")
    assert not allowed("Disallow: /*?q=ツ\n", "http://h/s?q=ツ")
    assert allowed("Disallow: /café\n", "http://h/cafe")


def test_lower_case_escapes_in_rules_match() -> None:
    assert not allowed("Disallow: /a%2fb\n", "http://h/a%2Fb")
    assert not allowed("Disallow: /%e3%83%84\n", "http://h/ツ")
    assert not allowed("Disallow: /p?x=%3d\n", "http://h/p?x=%3D")
    assert allowed("Disallow: /a%2fb\n", "http://h/a/b")


def test_escaped_operators_match_the_literal_character() -> None:
    # RFC 9309 section 2.2.3: a rule names a literal '*' or '$' by escaping it.
    assert not allowed("Disallow: /file-with-a-%2A.html\n", "http://h/file-with-a-*.html")
    assert allowed("Disallow: /file-with-a-%2A.html\n", "http://h/file-with-a-b.html")
    assert not allowed("Disallow: /price%24$\n", "http://h/price$")
    assert allowed("Disallow: /price%24$\n", "http://h/price$x")
    assert not allowed("Disallow: /a$b\n", "http://h/a%24b")


# --- spellings -----------------------------------------------------------------------------


def test_a_rule_has_one_spelling_unless_a_star_can_reach_the_query() -> None:
    assert pattern_spellings(b"/a b/{c}?d'e") == ("/a%20b/%7Bc%7D?d%27e",)
    assert pattern_spellings(b"/*{c}") == ("/*%7Bc%7D", "/*{c}")
    assert pattern_spellings(b"/*a*{c}?'") == ("/*a*%7Bc%7D?%27", "/*a*{c}?%27")
    assert pattern_spellings(b"/*{*a*'") == ("/*%7B*a*'", "/*%7B*a*%27", "/*{*a*%27")


def test_a_pathological_rule_gets_few_spellings() -> None:
    robots_txt = "Disallow: /" + "*{" * 5000 + "\n"
    spellings = pattern_spellings(robots_txt[10:-1].encode())
    assert len(spellings) <= 8
    assert allowed(robots_txt, "http://h/" + "x" * 10_000)
    # The work is counted, not timed: each spelling costs one search, for its first brace.
    rules = parse_robots(("User-agent: *\n" + robots_txt).encode(), "gossamer")
    path = counting("/" + "x" * 10_000)
    assert rules.is_allowed(path)
    assert path.searches == [(1, -1)] * len(spellings)


# --- properties ----------------------------------------------------------------------------

_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_DOT_SEGMENT = re.compile(r"(?:\.|%2e){1,2}", re.IGNORECASE)


def _requests_what_it_spells(url_path: str) -> bool:
    """Whether fetching ``"http://h" + url_path`` requests the path the text spells.

    The URL parser also rewrites a link in ways a rule, being a prefix, cannot follow:
    it drops C0 controls and spaces at the end of the URL (the parser of robots.txt only
    drops blanks there), resolves "." and ".." segments and drops an empty query. Such
    a link is fetched under another path, which the rule never named.
    """
    text = url_path.replace("\t", "")
    if text.rstrip(_C0_OR_SPACE) != text.rstrip(" \t\x0b\x0c"):
        return False
    text = text.rstrip(_C0_OR_SPACE)
    path, question, _ = text.partition("?")
    if question and text.endswith("?") and text.count("?") == 1:
        return False
    return not any(_DOT_SEGMENT.fullmatch(segment) for segment in re.split(r"[/\\]", path))


_path_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="*$#\n\r"),
    max_size=40,
).map(lambda tail: "/" + tail)


@settings(max_examples=500, deadline=None)
@given(path=_path_text)
def test_a_disallowed_path_is_never_allowed(path: str) -> None:
    assume(_requests_what_it_spells(path))
    assert not allowed(f"Disallow: {path}\n", "http://h" + path)
    # Before a '$' the blanks the URL parser drops at the end of a link are not trailing.
    if path == path.rstrip(_C0_OR_SPACE):
        assert not allowed(f"Disallow: {path}$\n", "http://h" + path)


# Pieces without '%', so that the text a '*' stands for never completes an escape.
_piece = st.text(
    alphabet=st.characters(
        blacklist_categories=["Cs", "Cc"], blacklist_characters="*$#%", max_codepoint=0x3000
    ),
    max_size=6,
)


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_piece, min_size=1, max_size=4), fills=st.lists(_piece, max_size=4))
def test_a_wildcard_rule_matches_every_path_it_covers(pieces: list[str], fills: list[str]) -> None:
    pattern = "/" + "*".join(pieces)
    stretched = "/" + "".join(
        piece + (fills[index] if index < len(fills) else "x")
        for index, piece in enumerate(pieces[:-1])
    )
    path = stretched + pieces[-1]
    # Blanks the URL parser drops at the end of the link may be inside the rule.
    assume(_requests_what_it_spells(path) and path == path.rstrip(_C0_OR_SPACE))
    assert not allowed(f"Disallow: {pattern}\n", "http://h" + path)
    assert not allowed(f"Disallow: {pattern}$\n", "http://h" + path)
