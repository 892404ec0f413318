"""Robots, what an answer means (RFC 9309 section 2.3.1), before the frontier acts on it.

The fetcher brings a robots.txt answer; this module says what it implies:

* 2xx: the rules in the body (a *lasting* answer, kept until the rules expire);
* 4xx other than 429, or a redirect chain longer than RFC 9309 asks to follow: allow all
  (lasting too);
* 5xx, 429, an undecodable body (among them a compressed body the network cut short: the
  fetcher never hands over half a file as a whole one), or no answer at all: *unavailable*.
  Everything is assumed disallowed and the origin is asked again later; 429 is read as "slow
  down", not as "no file". An origin that cannot be connected to at all
  (:data:`UNCONNECTABLE`) is given up at once, so a seed can fall back from https to http.

A lasting answer also says how the per-domain report shows the host's robots.txt.
"""

from __future__ import annotations

from dataclasses import dataclass

from gossamer.robots.matcher import RobotsRules
from gossamer.robots.parser import parse_robots

__all__ = ["UNCONNECTABLE", "RobotsAnswer", "lasting", "lasting_answer"]

# Transport faults that mean "no server here", as opposed to a slow or failing one.
UNCONNECTABLE = frozenset(
    {"dns", "connection_refused", "connect_timeout", "blocked_address", "tls", "bad_url"}
)
# A 2xx body that cannot be decoded, or was cut short on the way, tells nothing about the rules.
_UNDECODABLE = ("bad_encoding", "decompression_bomb")


@dataclass(frozen=True, slots=True)
class RobotsAnswer:
    """The rules a lasting answer implies, and how the report shows them."""

    rules: RobotsRules
    status: str  # "rules", "rules, crawl-delay 2", "allow-all (404)"


def lasting(status: int, error: str) -> bool:
    """Whether an answer stands until its rules expire (2xx, 3xx left, 4xx but 429), as
    opposed to one that means "unavailable, ask again later"."""
    if status == 0 or status >= 500 or status == 429:
        return False
    return error not in _UNDECODABLE


def lasting_answer(status: int, content: bytes, product: str) -> RobotsAnswer:
    """The rules a lasting answer (2xx, or 4xx / too many redirects) implies."""
    if 200 <= status < 300:
        rules = parse_robots(content, product)
        if rules.crawl_delay is not None:
            return RobotsAnswer(rules, f"rules, crawl-delay {rules.crawl_delay:g}")
        return RobotsAnswer(rules, "rules")
    # 4xx, or a redirect chain longer than five hops: treat as unavailable, allow all.
    return RobotsAnswer(RobotsRules.allow_all(), f"allow-all ({status})")
