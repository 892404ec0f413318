"""Robots rule matching: the compiled rule set the frontier asks before it hands out a URL.

The parser turns the group of a robots.txt file that applies to us into :class:`Rule`
values; :class:`PathMatcher` compiles them once so that the per-URL question, asked for
every link the crawler considers, costs a few dictionary look-ups and ``str.find`` calls.

Matching follows RFC 9309 sections 2.2.2 and 2.2.3: the rule with the longest pattern
(in octets) wins, an ``Allow`` wins a tie, ``*`` matches any run of characters and a
final ``$`` anchors the pattern to the end of the path. A wildcard pattern is matched
piece by piece with a leftmost ``str.find``, which is exact when ``*`` is the only
operator and never goes back over the path, so no pattern can make matching blow up.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from urllib.parse import quote

__all__ = ["PathMatcher", "RobotsRules", "Rule", "normalise_path", "normalise_pattern"]

# A serialised URL never holds these bare (WHATWG escapes them in both path and query),
# so a pattern spelling them bare could never match; escaping them lets it match. Non-ASCII
# octets, controls and space are escaped by quote() because they are not listed here.
_PATTERN_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"<>')
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED_ESCAPE = re.compile(
    r"%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DdEe]|5[Ff]|7[Ee])",
)


def _upper(match: re.Match[str]) -> str:
    return match.group().upper()


def _unescape(match: re.Match[str]) -> str:
    return chr(int(match.group()[1:], 16))


def normalise_pattern(raw: bytes) -> str:
    """Bring a pattern into the form a URL serialiser gives paths: escaped, hex upper-case.

    Escapes already present are kept as written (only their hex digits are upper-cased):
    the reference matcher treats ``%62`` and ``b`` as different octets.
    """
    return _ESCAPE.sub(_upper, quote(raw, safe=_PATTERN_SAFE))


def normalise_path(path: str) -> str:
    """Upper-case the hex digits of escapes; an empty path means ``/``.

    Characters the caller left unescaped stay as they are, as in the reference matcher:
    a path must arrive serialised, and a bare non-ASCII character never matches a rule.
    """
    if not path:
        return "/"
    return _ESCAPE.sub(_upper, path) if "%" in path else path


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``Allow`` or ``Disallow`` line of the group that applies to us.

    ``pattern`` is normalised and never empty; ``priority`` is the length of the pattern
    as written, which decides between rules that match the same path.
    """

    allow: bool
    pattern: str
    priority: int


def _with_unreserved_decoded(rule: Rule) -> Rule | None:
    """The same rule with escaped unreserved characters (``%7E`` for ``~``) decoded, or None.

    Gossamer's canonical URLs decode such escapes, so a ``Disallow`` written with them
    would otherwise never match. Only disallows get this second spelling: adding a
    disallow can only refuse more, so this never lets through what the site refused.
    """
    if rule.allow or "%" not in rule.pattern:
        return None
    decoded = _UNRESERVED_ESCAPE.sub(_unescape, rule.pattern)
    if decoded == rule.pattern:
        return None
    return Rule(allow=False, pattern=decoded, priority=rule.priority)


@dataclass(frozen=True, slots=True)
class _Pattern:
    """A rule outside the fast tables: a literal head, pieces in order, maybe an anchored tail.

    Holds every pattern with ``*`` and the rare rule whose priority is not its own length.
    """

    allow: bool
    priority: int
    head: str
    pieces: tuple[str, ...]
    tail: str
    anchored: bool
    exact: bool  # anchored without '*': the path must equal the head

    def matches(self, path: str) -> bool:
        if self.exact:
            return path == self.head
        if not path.startswith(self.head):
            return False
        start = len(self.head)
        end = len(path)
        if self.anchored:
            end -= len(self.tail)
            if end < start or not path.endswith(self.tail):
                return False
        # Placing each piece at its leftmost position leaves the most room for the
        # pieces after it, so a failed find means no placement exists at all.
        for piece in self.pieces:
            found = path.find(piece, start, end)
            if found < 0:
                return False
            start = found + len(piece)
        return True


def _general(rule: Rule) -> _Pattern:
    anchored = rule.pattern.endswith("$")
    body = rule.pattern[:-1] if anchored else rule.pattern
    head, *rest = body.split("*")
    exact = anchored and not rest
    tail = rest.pop() if anchored and rest else ""
    pieces = tuple(piece for piece in rest if piece)
    return _Pattern(rule.allow, rule.priority, head, pieces, tail, anchored, exact)


@dataclass(frozen=True, slots=True)
class PathMatcher:
    """The compiled rules of one robots.txt group; equal when built from equal rules."""

    rules: tuple[Rule, ...]
    # Plain prefixes, looked up by slicing the path at each length a prefix rule has.
    _prefixes: dict[str, bool] = field(compare=False, repr=False)
    _prefix_lengths: tuple[int, ...] = field(compare=False, repr=False)
    # Patterns like "/a$" without '*': the whole path is looked up at once.
    _exact: dict[str, bool] = field(compare=False, repr=False)
    # Everything else, best candidates first so the scan can stop early.
    _general: tuple[_Pattern, ...] = field(compare=False, repr=False)

    @classmethod
    def compile(cls, rules: tuple[Rule, ...]) -> PathMatcher:
        prefixes: dict[str, bool] = {}
        exact: dict[str, bool] = {}
        general: list[_Pattern] = []
        for rule in rules:
            # The tables rank a match by its length, so they only take rules whose
            # priority is the length of the pattern they hold.
            if "*" in rule.pattern or rule.priority != len(rule.pattern):
                general.append(_general(rule))
            elif rule.pattern.endswith("$"):
                literal = rule.pattern[:-1]
                exact[literal] = exact.get(literal, False) or rule.allow
            else:
                prefixes[rule.pattern] = prefixes.get(rule.pattern, False) or rule.allow
            decoded = _with_unreserved_decoded(rule)
            if decoded is not None:
                general.append(_general(decoded))
        general.sort(key=lambda pattern: (-pattern.priority, not pattern.allow))
        lengths = tuple(sorted({len(prefix) for prefix in prefixes}))
        return cls(rules, prefixes, lengths, exact, tuple(general))

    def allows(self, path: str) -> bool:
        """Whether the rules let us fetch ``path``, already passed through normalise_path."""
        best = -1
        allowed = True
        lengths = self._prefix_lengths
        # Longest prefix first; lengths beyond the path cannot match.
        for index in range(bisect.bisect_right(lengths, len(path)) - 1, -1, -1):
            length = lengths[index]
            verdict = self._prefixes.get(path[:length])
            if verdict is not None:
                best, allowed = length, verdict
                break
        if self._exact:
            verdict = self._exact.get(path)
            # A "$" rule's priority counts the '$': one more than the path it equals.
            if verdict is not None and (
                len(path) + 1 > best or (len(path) + 1 == best and verdict)
            ):
                best, allowed = len(path) + 1, verdict
        for pattern in self._general:
            if pattern.priority < best or (
                pattern.priority == best and (allowed or not pattern.allow)
            ):
                break
            if pattern.matches(path):
                best, allowed = pattern.priority, pattern.allow
                break
        return allowed


_ALLOW_EVERYTHING = PathMatcher.compile(())
_DISALLOW_EVERYTHING = PathMatcher.compile((Rule(allow=False, pattern="/", priority=1),))


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """What one host's robots.txt tells Gossamer: which paths it may fetch, and how often.

    Built by :func:`gossamer.robots.parse_robots`, or by :meth:`allow_all` and
    :meth:`disallow_all` when the file is missing or unreachable. ``crawl_delay`` comes
    from the group that applies to us; ``sitemaps`` lists every ``Sitemap`` line, since
    those belong to no group.
    """

    crawl_delay: float | None
    sitemaps: tuple[str, ...]
    matcher: PathMatcher = field(default=_ALLOW_EVERYTHING, repr=False)

    def is_allowed(self, path: str) -> bool:
        """Whether we may fetch ``path``: a serialised URL path plus ``?query`` if any."""
        # RFC 9309 leaves "/robots.txt" implicitly allowed: fetching the rules is never refused.
        if path.startswith("/robots.txt") and (len(path) == 11 or path[11] == "?"):
            return True
        return self.matcher.allows(normalise_path(path))

    @staticmethod
    def allow_all() -> RobotsRules:
        """Rules for a host without usable robots.txt (e.g. a 4xx): everything is allowed."""
        return RobotsRules(crawl_delay=None, sitemaps=())

    @staticmethod
    def disallow_all() -> RobotsRules:
        """Rules for a host whose robots.txt is unreachable (e.g. a 5xx): nothing is allowed."""
        return RobotsRules(crawl_delay=None, sitemaps=(), matcher=_DISALLOW_EVERYTHING)
