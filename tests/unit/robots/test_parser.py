"""Unit tests of robots.txt parsing and matching, one behaviour per test."""

from __future__ import annotations

import pytest

from gossamer.robots import RobotsRules, parse_robots, product_token
from gossamer.robots.parser import MAX_ROBOTS_BYTES, whole_lines

from .counting import counting


def rules(text: str | bytes, product: str = "gossamer") -> RobotsRules:
    content = text.encode("utf-8") if isinstance(text, str) else text
    return parse_robots(content, product)


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        ("Gossamer/0.1 (+https://example.org/bot)", "gossamer"),
        ("Mozilla/5.0 (compatible; Googlebot/2.1)", "mozilla"),
        ("my_crawler-x", "my_crawler-x"),
        ("  Foo Bar", "foo"),
        ("Bot2000", "bot"),
        ("", ""),
        ("/1.0", ""),
    ],
)
def test_product_token(user_agent: str, token: str) -> None:
    assert product_token(user_agent) == token


# --- groups -------------------------------------------------------------------------------


def test_consecutive_user_agents_share_one_group() -> None:
    text = "User-agent: a\nUser-agent: b\nDisallow: /x\n"
    assert not rules(text, "a").is_allowed("/x")
    assert not rules(text, "b").is_allowed("/x")
    assert rules(text, "c").is_allowed("/x")


def test_blank_unknown_and_sitemap_lines_do_not_end_the_user_agent_run() -> None:
    text = "User-agent: a\n\nSitemap: https://e.org/s.xml\nFoo: bar\nUser-agent: b\nDisallow: /\n"
    assert not rules(text, "a").is_allowed("/page")


def test_user_agent_after_rules_opens_a_new_group() -> None:
    text = "User-agent: a\nDisallow: /a\nUser-agent: b\nDisallow: /b\n"
    assert rules(text, "a").is_allowed("/b")
    assert not rules(text, "b").is_allowed("/b")


def test_empty_rule_still_ends_the_user_agent_run() -> None:
    text = "User-agent: a\nDisallow:\nUser-agent: b\nDisallow: /\n"
    assert rules(text, "a").is_allowed("/page")
    assert not rules(text, "b").is_allowed("/page")


def test_rules_before_any_user_agent_are_ignored() -> None:
    assert rules("Disallow: /\nUser-agent: other\nDisallow: /x\n").is_allowed("/page")


def test_groups_naming_us_are_merged() -> None:
    text = (
        "User-agent: gossamer\nDisallow: /a\n"
        "User-agent: other\nDisallow: /b\n"
        "User-agent: Gossamer\nDisallow: /c\n"
    )
    robots = rules(text)
    assert not robots.is_allowed("/a")
    assert robots.is_allowed("/b")
    assert not robots.is_allowed("/c")


def test_star_groups_apply_only_when_no_group_names_us() -> None:
    text = "User-agent: *\nDisallow: /star\nUser-agent: *\nDisallow: /also\n"
    robots = rules(text)
    assert not robots.is_allowed("/star")
    assert not robots.is_allowed("/also")
    specific = rules(text + "User-agent: gossamer\nDisallow: /mine\n")
    assert specific.is_allowed("/star")
    assert not specific.is_allowed("/mine")


def test_a_group_naming_us_without_rules_still_hides_the_star_group() -> None:
    assert rules("User-agent: gossamer\nAllow:\n\nUser-agent: *\nDisallow: /\n").is_allowed("/x")


def test_no_applicable_group_allows_everything() -> None:
    assert rules("User-agent: other\nDisallow: /\n").is_allowed("/anything")
    assert rules("").is_allowed("/anything")


def test_user_agent_value_is_read_as_a_product_token_without_regard_to_case() -> None:
    assert not rules("User-agent: GOSSAMER/2.0 extra words\nDisallow: /\n").is_allowed("/x")
    assert rules("User-agent: gossamerbot\nDisallow: /\n").is_allowed("/x")
    assert not rules("User-agent: *  # everyone\nDisallow: /\n").is_allowed("/x")


# --- line syntax ---------------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_every_line_ending_is_accepted(newline: str) -> None:
    text = newline.join(["User-agent: gossamer", "Disallow: /a", "Allow: /a/b", ""])
    robots = rules(text)
    assert not robots.is_allowed("/a/c")
    assert robots.is_allowed("/a/b")


def test_byte_order_mark_is_dropped() -> None:
    assert not rules(b"\xef\xbb\xbfUser-agent: gossamer\nDisallow: /\n").is_allowed("/x")


def test_keys_ignore_case_and_blanks_around_the_colon() -> None:
    assert not rules("uSeR-AgEnT :  gossamer \n  DISALLOW\t:\t/x  \n").is_allowed("/x/1")


def test_comments_are_removed() -> None:
    robots = rules("# intro\nUser-agent: gossamer # us\nDisallow: /a#not-part\n# Disallow: /b\n")
    assert not robots.is_allowed("/a")
    assert robots.is_allowed("/b")
    assert robots.is_allowed("/x#not-part")


def test_missing_colon_is_accepted_only_between_two_words() -> None:
    assert not rules("User-agent gossamer\nDisallow /x\n").is_allowed("/x")
    assert rules("User-agent: gossamer\nDisallow /x y\n").is_allowed("/x")


def test_frequent_misspellings_of_disallow_are_accepted() -> None:
    assert not rules("Useragent: gossamer\nDisalow: /x\n").is_allowed("/x")


def test_non_utf8_octets_do_not_break_parsing() -> None:
    robots = rules(b"User-agent: gossamer\nDisallow: /caf\xe9\nDisallow: /\xff\xfe/x\n")
    assert not robots.is_allowed("/caf%E9")
    assert not robots.is_allowed("/%FF%FE/x")
    assert robots.is_allowed("/cafe")


# --- matching ------------------------------------------------------------------------------


def test_longest_pattern_wins() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n")
    assert not robots.is_allowed("/a/x")
    assert robots.is_allowed("/a/b/x")
    assert not robots.is_allowed("/a/b/c")


def test_allow_wins_a_tie() -> None:
    assert rules("User-agent: gossamer\nDisallow: /page\nAllow: /page\n").is_allowed("/page")
    assert rules("User-agent: gossamer\nDisallow: /*.x\nAllow: /a.x\n").is_allowed("/a.x")


def test_length_counts_wildcards_and_anchor_as_written() -> None:
    # "/*.html" (7 octets) outranks "/page" (5) where both match.
    robots = rules("User-agent: gossamer\nAllow: /page\nDisallow: /*.html\n")
    assert not robots.is_allowed("/page.html")
    assert robots.is_allowed("/page")
    # "/$" (2) outranks "/" (1).
    anchored = rules("User-agent: gossamer\nAllow: /$\nDisallow: /\n")
    assert anchored.is_allowed("/")
    assert not anchored.is_allowed("/index.html")


def test_star_matches_any_run_of_characters() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /*/private/*.pdf\nDisallow: *secret\n")
    assert not robots.is_allowed("/a/b/private/x/y.pdf")
    assert not robots.is_allowed("/x/private/.pdf?download=1")
    assert robots.is_allowed("/private/x.pdf")
    assert not robots.is_allowed("/top-secret")


def test_dollar_anchors_only_at_the_end() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /*.php$\nDisallow: /a$b\nDisallow: /exact$\n")
    assert not robots.is_allowed("/index.php")
    assert robots.is_allowed("/index.php?x=1")
    assert robots.is_allowed("/index.php5")
    assert not robots.is_allowed("/a$b/c")
    assert not robots.is_allowed("/exact")
    assert robots.is_allowed("/exact/")


def test_anchored_wildcard_needs_room_for_head_and_tail() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /ab*b$\n")
    assert robots.is_allowed("/ab")
    assert not robots.is_allowed("/abb")
    assert not robots.is_allowed("/ab/xb")


def test_empty_disallow_allows() -> None:
    assert rules("User-agent: gossamer\nDisallow:\n").is_allowed("/x")


def test_matching_is_case_sensitive_on_paths() -> None:
    assert rules("User-agent: gossamer\nDisallow: /Private\n").is_allowed("/private")


def test_query_is_part_of_the_path() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /*?sessionid=\n")
    assert not robots.is_allowed("/page?sessionid=1")
    assert robots.is_allowed("/page")


def test_empty_path_means_root() -> None:
    assert not rules("User-agent: gossamer\nDisallow: /$\n").is_allowed("")


def test_robots_txt_itself_is_always_allowed() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /\n")
    assert robots.is_allowed("/robots.txt")
    assert robots.is_allowed("/robots.txt?refresh=1")
    assert not robots.is_allowed("/robots.txt.bak")
    assert RobotsRules.disallow_all().is_allowed("/robots.txt")


# --- percent-encoding ----------------------------------------------------------------------


def test_non_ascii_patterns_match_their_utf8_escapes() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /ツ\n")
    assert not robots.is_allowed("/%E3%83%84")
    assert not robots.is_allowed("/%e3%83%84")


def test_hex_case_of_escapes_does_not_matter() -> None:
    robots = rules("User-agent: gossamer\nDisallow: /a%2fb\n")
    assert not robots.is_allowed("/a%2Fb")
    assert not robots.is_allowed("/a%2fb")
    assert robots.is_allowed("/a/b")


def test_disallow_with_escaped_unreserved_also_matches_the_decoded_path() -> None:
    # Canonical URLs decode %7E to '~', so the disallow must reach that spelling too.
    robots = rules("User-agent: gossamer\nDisallow: /%7Ejoe/\n")
    assert not robots.is_allowed("/~joe/index.html")
    assert not robots.is_allowed("/%7Ejoe/index.html")
    assert robots.is_allowed("/~ann/")


def test_allow_with_escaped_unreserved_also_matches_the_decoded_path() -> None:
    # RFC 9309 section 2.2.2 reads "/%62%61%7A" as "/baz", and so do canonical URLs.
    robots = rules("User-agent: gossamer\nDisallow: /\nAllow: /%62%61%7A\n")
    assert robots.is_allowed("/baz")
    assert robots.is_allowed("/%62%61%7A")
    assert not robots.is_allowed("/bar")


def test_priority_is_the_length_of_the_decoded_pattern() -> None:
    # "/%7Ejoe/" is "/~joe/" (6 octets), so the 7-octet "/~joe/p" is the longer match...
    robots = rules("User-agent: gossamer\nAllow: /~joe/p\nDisallow: /%7Ejoe/\n")
    assert robots.is_allowed("/~joe/public")
    assert not robots.is_allowed("/~joe/other")
    # ...and two spellings of one pattern tie, which the Allow wins.
    tie = rules("User-agent: gossamer\nDisallow: /%7Ejoe/\nAllow: /~joe/\n")
    assert tie.is_allowed("/~joe/x")


def test_characters_a_serialiser_escapes_are_escaped_in_patterns() -> None:
    robots = rules('User-agent: gossamer\nDisallow: /a b/"q"\n')
    assert not robots.is_allowed("/a%20b/%22q%22")


# --- crawl-delay and sitemaps --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "delay"),
    [("10", 10.0), ("0.5", 0.5), (".25", 0.25), ("0", 0.0), ("2.", 2.0)],
)
def test_crawl_delay_accepts_non_negative_numbers(value: str, delay: float) -> None:
    assert rules(f"User-agent: gossamer\nCrawl-delay: {value}\n").crawl_delay == delay


@pytest.mark.parametrize("value", ["", "-1", "soon", "1e3", "inf", "nan", "1,5", "9" * 400])
def test_crawl_delay_ignores_invalid_values(value: str) -> None:
    assert rules(f"User-agent: gossamer\nCrawl-delay: {value}\n").crawl_delay is None


def test_crawl_delay_comes_from_the_applicable_group() -> None:
    text = (
        "User-agent: *\nDisallow:\nCrawl-delay: 30\n"
        "User-agent: gossamer\nCrawl-delay: 2\nDisallow: /x\n"
    )
    assert rules(text).crawl_delay == 2.0
    assert rules(text, "other").crawl_delay == 30.0
    assert rules("User-agent: other\nCrawl-delay: 5\n").crawl_delay is None


def test_crawl_delay_does_not_end_the_user_agent_run() -> None:
    # Like the reference matcher, only rules close a run of user-agent lines.
    text = "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n"
    robots = rules(text, "a")
    assert not robots.is_allowed("/x")
    assert robots.crawl_delay == 5.0


def test_longest_crawl_delay_of_merged_groups_is_kept() -> None:
    text = "User-agent: gossamer\nCrawl-delay: 3\nDisallow:\nUser-agent: gossamer\nCrawl-delay: 7\n"
    assert rules(text).crawl_delay == 7.0


def test_sitemaps_are_global_and_kept_in_order() -> None:
    text = (
        "Sitemap: https://e.org/a.xml\n"
        "User-agent: other\nDisallow: /\n"
        "sitemap: https://e.org/b.xml\n"
        "Site-map: https://e.org/c.xml\n"
    )
    assert rules(text).sitemaps == (
        "https://e.org/a.xml",
        "https://e.org/b.xml",
        "https://e.org/c.xml",
    )


# --- limits --------------------------------------------------------------------------------


def test_content_beyond_the_limit_is_ignored() -> None:
    head = b"User-agent: gossamer\nDisallow: /early\n"
    padding = b"# filler\n" * ((MAX_ROBOTS_BYTES - len(head)) // 9 + 1)
    robots = rules(head + padding + b"Disallow: /late\n")
    assert not robots.is_allowed("/early")
    assert robots.is_allowed("/late")


def test_line_cut_by_the_limit_is_dropped() -> None:
    head = b"User-agent: gossamer\nDisallow: /early\n"
    padding = b"#" * (MAX_ROBOTS_BYTES - len(head) - 1) + b"\n"
    cut = head + padding + b"Disallow: /a-long-path-the-limit-cuts\n"
    assert len(head + padding) == MAX_ROBOTS_BYTES
    robots = rules(cut[: MAX_ROBOTS_BYTES + 12])
    assert robots.is_allowed("/a")
    assert not robots.is_allowed("/early")


def test_line_ending_exactly_at_the_limit_is_kept() -> None:
    head = b"User-agent: gossamer\n"
    rule = b"Disallow: /last\n"
    padding = b"#" * (MAX_ROBOTS_BYTES - len(head) - len(rule) - 1) + b"\n"
    content = head + padding + rule
    assert len(content) == MAX_ROBOTS_BYTES
    assert not rules(content + b"Disallow: /more\n").is_allowed("/last")


def test_pathological_patterns_are_matched_in_one_pass() -> None:
    # The work is counted, not timed (benchmarks/robots_matching.py times it): one search per
    # piece of a wildcard pattern, each starting where the one before it ended, so matching
    # is linear in the path however the pieces repeat.
    lines = ["User-agent: gossamer"]
    lines += [f"Disallow: /section-{n}/*item*{n}$" for n in range(3000)]
    lines += [f"Allow: /page-{n}" for n in range(3000)]
    lines.append("Disallow: /*a*a*a*a*a*a*a*a*b")
    robots = rules("\n".join(lines))
    path = counting("/" + "a" * 100_000)
    assert robots.is_allowed(path)
    # Eight 'a' pieces found one after another, then one search for 'b' that fails.
    assert [found for _, found in path.searches] == [*range(1, 9), -1]
    starts = [start for start, _ in path.searches]
    assert starts == [*range(1, 10)]  # never back over the path
    blocked = counting(path + "b")
    assert not robots.is_allowed(blocked)
    assert len(blocked.searches) == 9


# --- constructors and values ---------------------------------------------------------------


def test_allow_all_and_disallow_all() -> None:
    assert RobotsRules.allow_all().is_allowed("/anything")
    assert not RobotsRules.disallow_all().is_allowed("/anything")
    assert not RobotsRules.disallow_all().is_allowed("")
    assert RobotsRules.allow_all().crawl_delay is None
    assert RobotsRules.allow_all().sitemaps == ()


def test_rules_are_comparable_and_hashable_values() -> None:
    text = "User-agent: gossamer\nDisallow: /x\nCrawl-delay: 1\n"
    assert rules(text) == rules(text)
    assert hash(rules(text)) == hash(rules(text))
    assert rules(text) != rules("User-agent: gossamer\nDisallow: /y\nCrawl-delay: 1\n")
    assert rules("") == RobotsRules.allow_all()


# --- whole lines: a cap cuts at a line end (the fetcher's robots.txt reads use it too) -----


@pytest.mark.parametrize(
    ("content", "limit", "cut", "kept"),
    [
        (b"a\nbb\nccc\n", 20, False, b"a\nbb\nccc\n"),  # within the limit: all of it
        (b"a\nbb\nccc", 20, False, b"a\nbb\nccc"),  # a whole file need not end its line
        (b"a\nbb\nccc", 20, True, b"a\nbb\n"),  # ... a cut one must
        (b"a\nbb\nccc\n", 20, True, b"a\nbb\nccc\n"),
        (b"a\nbb\nccc\n", 5, False, b"a\nbb\n"),  # the cut falls right before a line end
        (b"a\nbb\nccc\n", 4, False, b"a\nbb"),  # ... here too
        (b"a\nbb\nccc\n", 3, False, b"a\n"),  # ... or inside a line: dropped
        (b"a\rbb\r\nccc", 6, False, b"a\rbb\r\n"),
        (b"abcdef", 3, False, b""),  # no line end at all: nothing whole
    ],
)
def test_whole_lines(content: bytes, limit: int, cut: bool, kept: bytes) -> None:
    assert whole_lines(content, limit, cut=cut) == kept


def test_a_rule_cut_by_the_cap_is_not_read_as_a_shorter_one() -> None:
    full = b"User-agent: *\nDisallow: /private/\nAllow: /private/public/\n"
    cut = full[: full.index(b"public/")]
    robots = rules(whole_lines(cut, len(cut) + 10, cut=True))
    assert not robots.is_allowed("/private/secret.html")  # "Allow: /private/" is not read
