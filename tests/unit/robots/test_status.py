"""What a robots.txt answer implies (RFC 9309 2.3.1): lasting rules, allow all, or ask again."""

from __future__ import annotations

import pytest

from gossamer.robots import UNCONNECTABLE, lasting, lasting_answer


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        (200, "", True),
        (301, "", True),  # a chain longer than five hops: allow all, kept
        (404, "", True),
        (410, "", True),
        (429, "", False),  # "slow down" is not "no file"
        (500, "", False),
        (503, "", False),
        (0, "dns", False),
        (200, "bad_encoding", False),  # a body that cannot be decoded says nothing
        (200, "decompression_bomb", False),
    ],
)
def test_which_answers_last(status: int, error: str, expected: bool) -> None:
    assert lasting(status, error) is expected


def test_a_2xx_answer_gives_its_rules_and_says_so() -> None:
    answer = lasting_answer(200, b"User-agent: *\nDisallow: /x\nCrawl-delay: 1.5\n", "gossamer")
    assert not answer.rules.is_allowed("/x")
    assert answer.status == "rules, crawl-delay 1.5"
    plain = lasting_answer(200, b"User-agent: *\nDisallow: /x\n", "gossamer")
    assert plain.status == "rules"


def test_a_4xx_or_a_long_redirect_chain_allows_all() -> None:
    for status in (404, 301):
        answer = lasting_answer(status, b"User-agent: *\nDisallow: /\n", "gossamer")
        assert answer.rules.is_allowed("/anything")
        assert answer.status == f"allow-all ({status})"


def test_no_server_at_all_is_given_up_but_a_slow_one_is_not() -> None:
    assert {"dns", "connection_refused", "tls"} <= UNCONNECTABLE
    assert "timeout" not in UNCONNECTABLE and "read_timeout" not in UNCONNECTABLE
