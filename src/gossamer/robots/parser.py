"""Robots.txt parsing: from the fetched bytes to the RobotsRules the frontier keeps per host.

The fetcher hands over the body of ``/robots.txt``; :func:`parse_robots` reads it the way
RFC 9309 and its reference matcher (Google's ``robotstxt``) do, and keeps only what
concerns us: the rules of the groups naming our product token (or of the ``*`` groups
when none does), their crawl-delay, and every sitemap. It never raises: robots.txt is
written by hand and served with any bytes at all.

Reading, line by line:

* LF, CR and CRLF end lines; a UTF-8 byte order mark is dropped; ``#`` starts a comment.
* ``key: value``, keys without regard to case and with blanks around the colon. As in the
  reference matcher, a line without a colon that holds exactly two words is read as
  ``key value``, and a few frequent misspellings of the keys are accepted.
* A group is a run of ``user-agent`` lines followed by rules. Lines that are not rules
  (blank, unknown, ``sitemap``, ``crawl-delay``) do not end the run of user-agents;
  a rule before any user-agent belongs to no group and is ignored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import Enum

from gossamer.robots.matcher import PathMatcher, RobotsRules, Rule, pattern_spellings

__all__ = ["MAX_ROBOTS_BYTES", "parse_robots", "product_token", "whole_lines"]

# RFC 9309 section 2.5: crawlers must read at least 500 KiB; we read no more than that.
MAX_ROBOTS_BYTES = 500 * 1024
# The reference matcher keeps at most this many octets of a line (eight times the 2083
# characters of the classic URL limit, minus one) and drops the rest. Doing the same
# bounds the size of a pattern and gives the same answers on absurd lines.
_MAX_LINE_OCTETS = 2083 * 8 - 1
_BOM = b"\xef\xbb\xbf"
_PRODUCT = re.compile(r"[A-Za-z_-]*")
_PRODUCT_OCTETS = re.compile(rb"[A-Za-z_-]*")
_DELAY = re.compile(rb"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


class _Key(Enum):
    AGENT = "user-agent"
    ALLOW = "allow"
    DISALLOW = "disallow"
    SITEMAP = "sitemap"
    CRAWL_DELAY = "crawl-delay"


# Keys in lower case, with the misspellings the reference matcher also accepts.
_KEYS: dict[bytes, _Key] = {
    b"user-agent": _Key.AGENT,
    b"useragent": _Key.AGENT,
    b"user agent": _Key.AGENT,
    b"allow": _Key.ALLOW,
    b"disallow": _Key.DISALLOW,
    b"dissallow": _Key.DISALLOW,
    b"dissalow": _Key.DISALLOW,
    b"disalow": _Key.DISALLOW,
    b"diasllow": _Key.DISALLOW,
    b"disallaw": _Key.DISALLOW,
    b"sitemap": _Key.SITEMAP,
    b"site-map": _Key.SITEMAP,
    b"crawl-delay": _Key.CRAWL_DELAY,
}


def product_token(user_agent: str) -> str:
    """The RFC 9309 product token of a User-Agent header, lower-cased.

    ``"Gossamer/0.1 (+https://example.org/bot)"`` gives ``"gossamer"``: the leading run of
    letters, ``_`` and ``-``, which is what robots.txt groups name.
    """
    match = _PRODUCT.match(user_agent.strip())
    return match.group().lower() if match else ""


@dataclass(slots=True)
class _Group:
    """A group while it is being read: the agents it names and what it says."""

    agents: set[str] = field(default_factory=set)
    rules: list[Rule] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)


def whole_lines(content: bytes, limit: int = MAX_ROBOTS_BYTES, *, cut: bool = False) -> bytes:
    """The first ``limit`` bytes of ``content``, less the line the cut falls in, if any.

    A line cut short is a different rule (``Allow: /private/`` of ``Allow: /private/public/``)
    than the site wrote, so it is dropped whole. To tell whether a cut at ``limit`` falls
    exactly at a line end, give one byte more than ``limit`` when there is one. ``cut``:
    ``content`` itself ends where a cap stopped reading, so its last line is whole only if
    a line end closes it.
    """
    if len(content) > limit:
        complete = content[limit : limit + 1] in (b"\n", b"\r")
        content = content[:limit]
    elif cut:
        complete = content.endswith((b"\n", b"\r"))
    else:
        return content
    if not complete:
        end = max(content.rfind(b"\n"), content.rfind(b"\r"))
        content = content[: end + 1]
    return content


def _lines(content: bytes) -> list[bytes]:
    content = whole_lines(content).removeprefix(_BOM)
    return content.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")


def _record(line: bytes) -> tuple[_Key, bytes] | None:
    """The key and value of one line, or None for blank, comment and unknown lines."""
    line = line[:_MAX_LINE_OCTETS]
    comment = line.find(b"#")
    if comment >= 0:
        line = line[:comment]
    key, colon, value = line.partition(b":")
    if not colon:
        words = line.split()
        if len(words) != 2:
            return None
        key, value = words
    kind = _KEYS.get(key.strip().lower())
    return None if kind is None else (kind, value.strip())


def _agent(value: bytes) -> str:
    """The product token a user-agent line names, ``"*"``, or ``""`` for none."""
    if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
        return "*"
    match = _PRODUCT_OCTETS.match(value)
    return match.group().decode("ascii").lower() if match else ""


def _delay(value: bytes) -> float | None:
    if _DELAY.fullmatch(value) is None:
        return None
    seconds = float(value)
    return seconds if math.isfinite(seconds) else None


def _groups(content: bytes) -> tuple[list[_Group], list[str]]:
    groups: list[_Group] = []
    sitemaps: list[str] = []
    current: _Group | None = None
    reading_agents = False  # True until a rule follows the latest user-agent line
    for line in _lines(content):
        record = _record(line)
        if record is None:
            continue
        kind, value = record
        if kind is _Key.SITEMAP:
            if value:
                sitemaps.append(value.decode("utf-8", "replace"))
        elif kind is _Key.AGENT:
            if current is None or not reading_agents:
                current = _Group()
                groups.append(current)
                reading_agents = True
            agent = _agent(value)
            if agent:
                current.agents.add(agent)
        elif current is None:
            continue
        elif kind is _Key.CRAWL_DELAY:
            delay = _delay(value)
            if delay is not None:
                current.delays.append(delay)
        else:
            # Even an empty rule ends the run: a user-agent after it opens a new group.
            reading_agents = False
            # A rule is kept in the spelling of canonical URLs, which it is matched against.
            allow = kind is _Key.ALLOW
            for pattern in pattern_spellings(value) if value else ():
                current.rules.append(Rule(allow, pattern, len(pattern)))
    return groups, sitemaps


def parse_robots(content: bytes, product: str) -> RobotsRules:
    """The rules ``content`` (a robots.txt body) sets for the crawler named ``product``.

    ``product`` is a product token as :func:`product_token` gives it. Only the first
    :data:`MAX_ROBOTS_BYTES` of ``content`` are read. All groups naming ``product`` are
    merged; if none does, all ``*`` groups are; if there are none either, everything is
    allowed. When the chosen groups give several crawl-delays, the longest is kept.
    """
    product = product.lower()
    groups, sitemaps = _groups(content)
    chosen = [group for group in groups if product and product in group.agents]
    if not chosen:
        chosen = [group for group in groups if "*" in group.agents]
    rules = tuple(rule for group in chosen for rule in group.rules)
    delays = [delay for group in chosen for delay in group.delays]
    return RobotsRules(
        crawl_delay=max(delays) if delays else None,
        sitemaps=tuple(sitemaps),
        matcher=PathMatcher.compile(rules),
    )
