"""The compiled matcher at its edges: ties between its three tables, rules whose priority is
not their length, literal '$', the cap on spellings, and the tables the spellings come from.

Most of these cases were found by mutation testing (TESTING.md): each pins one decision of
:mod:`gossamer.robots.matcher` that the conformance vectors leave open.
"""

from __future__ import annotations

import pytest

from gossamer.robots import RobotsRules, parse_robots
from gossamer.robots.matcher import PathMatcher, Rule, _spelling_table, pattern_spellings


def allowed(robots_txt: str, path: str) -> bool:
    return parse_robots(f"User-agent: *\n{robots_txt}".encode(), "gossamer").is_allowed(path)


# --- spellings -----------------------------------------------------------------------------


def test_the_spelling_table_escapes_controls_non_ascii_and_the_given_characters() -> None:
    table = _spelling_table(' "#<>')
    expected: dict[int, str | None] = {
        code: f"%{code:02X}"
        for code in range(0x100)
        if code < 0x20 or code >= 0x7F or chr(code) in ' "#<>'
    }
    expected.update({ord("\t"): None, ord("\n"): None, ord("\r"): None})
    assert table == expected
    assert "a\tb c\x7f\xe9".translate(table) == "ab%20c%7F%E9"
    assert ord(" ") not in _spelling_table("")  # a space only when asked for


def test_a_literal_dollar_is_escaped_and_only_a_final_one_anchors() -> None:
    assert pattern_spellings(b"/a$b$") == ("/a%24b$",)
    assert pattern_spellings(b"/a$b") == ("/a%24b",)
    assert not allowed("Disallow: /a$b$\n", "/a$b")
    assert allowed("Disallow: /a$b$\n", "/a$bc")
    assert not allowed("Disallow: /a$b\n", "/a$bc")


def test_a_pattern_read_from_its_query() -> None:
    # Everything from the first '?' is spelt as a query, even when the pattern starts there.
    assert pattern_spellings(b"?'") == ("?%27",)
    # A '*' after the '?' is inside the query already: it adds no spelling.
    assert pattern_spellings(b"/{?*") == ("/%7B?*",)


def test_the_spelling_cap_counts_new_spellings_only() -> None:
    # Each '*' with a '{' after it lets the query start there: eight distinct spellings, the
    # cap. A '*' with nothing spelt two ways before the next one must not use up the cap.
    spellings = pattern_spellings(b"/" + b"{*a*" * 8)
    assert spellings == tuple("/" + "%7B*a*" * (8 - k) + "{*a*" * k for k in range(8))


# --- ties and priorities ---------------------------------------------------------------------


def test_allow_wins_a_tie_between_two_exact_rules_in_either_order() -> None:
    assert allowed("Allow: /a$\nDisallow: /a$\n", "/a")
    assert allowed("Disallow: /a$\nAllow: /a$\n", "/a")


def test_an_exact_rule_against_a_wildcard_rule() -> None:
    # "/a$" counts three octets: it beats "/*" (two) and ties with "/*a" (three).
    assert not allowed("Disallow: /a$\nAllow: /*\n", "/a")
    assert allowed("Disallow: /a$\nAllow: /*\n", "/b")
    assert allowed("Disallow: /a$\nAllow: /*a\n", "/a")


def test_a_wildcard_allow_ties_with_a_prefix_disallow_and_wins() -> None:
    assert allowed("Disallow: /ab\nAllow: /*b\n", "/ab")
    assert allowed("Allow: /ab\nDisallow: /*b\n", "/ab")
    assert not allowed("Disallow: /ab\nAllow: /*c\n", "/ab")


@pytest.mark.parametrize(
    ("path", "verdict"), [("/a", False), ("/ab", True), ("/", True), ("/b", True)]
)
def test_an_exact_rule_with_a_priority_of_its_own(path: str, verdict: bool) -> None:
    # A second spelling carries the priority of its rule's main spelling, not its own length:
    # such rules are matched outside the tables, exact ones included.
    matcher = PathMatcher.compile((Rule(allow=False, pattern="/a$", priority=10),))
    assert matcher.allows(path) is verdict


def test_a_rule_is_ranked_by_its_priority_not_by_its_length() -> None:
    rules = (
        Rule(allow=True, pattern="/ab", priority=10),
        Rule(allow=False, pattern="/abc", priority=4),
    )
    matcher = PathMatcher.compile(rules)
    assert matcher.allows("/abcd")  # "/ab" counts 10, "/abc" only 4
    assert not PathMatcher.compile(rules[1:]).allows("/abcd")


# --- wildcards ---------------------------------------------------------------------------------


def test_pieces_are_found_before_the_anchored_tail() -> None:
    # "/*x*x$" needs two x's: the piece may not be the tail's own 'x'.
    assert allowed("Disallow: /*x*x$\n", "/x")
    assert not allowed("Disallow: /*x*x$\n", "/xx")
    assert not allowed("Disallow: /*x*x$\n", "/axbx")
    assert allowed("Disallow: /*x*x$\n", "/xxa")


def test_a_pattern_may_begin_with_a_star() -> None:
    # The piece after the leading '*' can be found at the very start of the path.
    assert not allowed("Disallow: */private\n", "/private/x")
    assert not allowed("Disallow: */private\n", "/a/private")
    assert allowed("Disallow: */private\n", "/public")


# --- the rules for missing or unreachable files ------------------------------------------------


def test_allow_all_and_disallow_all() -> None:
    everything, nothing = RobotsRules.allow_all(), RobotsRules.disallow_all()
    assert (everything.crawl_delay, everything.sitemaps) == (None, ())
    assert (nothing.crawl_delay, nothing.sitemaps) == (None, ())
    assert everything.is_allowed("/any/path?q")
    assert not nothing.is_allowed("/any/path?q")
    assert nothing.is_allowed("/robots.txt")  # the rules themselves are never refused
