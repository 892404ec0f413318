"""Robots rule matching: the compiled rule set the frontier asks before it hands out a URL.

The frontier asks about the path and query of a canonical URL (see
:mod:`gossamer.urls.canonical`), so the parser brings every pattern into that same
spelling with :func:`pattern_spellings`: characters the URL parser percent-encodes are
escaped (the path part by the WHATWG path rules, the part after the first ``?`` by the
query rules), ``\\`` in the path part becomes ``/``, tab and newlines are dropped, and
then escapes are normalised with the canonicaliser's own table (escaped unreserved
characters decoded, other escapes in upper-case hex, a lone ``%`` written ``%25``). A
pattern that differs from a URL only in spelling therefore matches it; otherwise it
would silently never match. :class:`PathMatcher` compiles the rules once so that the
per-URL question, asked for every link the crawler considers, costs a few dictionary
look-ups and ``str.find`` calls.

Matching follows RFC 9309 sections 2.2.2 and 2.2.3: the rule with the longest pattern
(in octets of its canonical spelling, so two spellings of one rule tie) wins, an
``Allow`` wins a tie, ``*`` matches any run of characters and a final ``$`` anchors the
pattern to the end of the path. A literal ``*`` or ``$`` is compared as ``%2A`` or
``%24`` on both sides, so a rule can name one by escaping it. A wildcard pattern is
matched piece by piece with a leftmost ``str.find``, which is exact when ``*`` is the
only operator and never goes back over the path, so no pattern can make matching blow up.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from gossamer.urls.canonical import normalise_escapes

__all__ = ["PathMatcher", "RobotsRules", "Rule", "normalise_path", "pattern_spellings"]


def _spelling_table(escaped: str) -> dict[int, str | None]:
    """A ``str.translate`` table: what the URL parser makes of each octet (read as latin-1).

    C0 controls, DEL and every non-ASCII octet are escaped everywhere (a UTF-8 character
    is escaped octet by octet, as ``ada_url`` does); so are the characters in ``escaped``.
    Tab, LF and CR are dropped: the URL parser removes them wherever they appear.
    """
    codes = [*range(0x20), *range(0x7F, 0x100), *map(ord, escaped)]
    table: dict[int, str | None] = {code: f"%{code:02X}" for code in codes}
    table.update(dict.fromkeys(map(ord, "\t\n\r")))
    return table


# WHATWG's path and special-query percent-encode sets, as ada_url applies them to http(s)
# URLs (checked character by character against canonicalize in test_canonical_rules.py).
_QUERY_SPELLING = _spelling_table(' "#<>' + "'")
_PATH_SPELLING = _spelling_table(' "#<>?`{}^') | {ord("\\"): "/"}
# Characters whose path and query spellings differ.
_SPELT_TWO_WAYS = frozenset(
    chr(code)
    for code in range(0x100)
    if _PATH_SPELLING.get(code, chr(code)) != _QUERY_SPELLING.get(code, chr(code))
)
# What normalisation of escapes changes: a '%' not followed by two upper-case hex digits
# (lower-case hex, or a lone '%') and the escapes of RFC 3986 unreserved characters.
_NOT_CANONICAL_ESCAPE = re.compile(
    r"%(?![0-9A-F]{2})|%(?:2[DE]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])"
)
# A pattern gets one spelling per place its '*'s let a URL's query begin; a pathological
# pattern ("/*{*{*{...") could ask for thousands, so only this many are kept.
_MAX_SPELLINGS = 8


def _spell(text: str, query_at: int) -> str:
    """Canonical spelling of a pattern whose query part starts at ``query_at``."""
    spelt = text[:query_at].translate(_PATH_SPELLING) + text[query_at:].translate(_QUERY_SPELLING)
    if "%" in spelt:
        spelt = normalise_escapes(spelt)
    # '*' is always the operator and only a final '$' is one; a literal '$' is compared
    # as "%24", like a '$' in a path (see normalise_path).
    anchored = spelt.endswith("$")
    body = spelt[:-1] if anchored else spelt
    if "$" in body:
        spelt = body.replace("$", "%24") + ("$" if anchored else "")
    return spelt


def pattern_spellings(raw: bytes) -> tuple[str, ...]:
    """The canonical spellings of a pattern as written in robots.txt; the first is the main one.

    The main spelling reads the pattern up to its first ``?`` as a path and the rest as a
    query. A ``*`` before that ``?`` may stretch over the ``?`` of a URL, and what follows
    it is then matched in the query, where ``{`` or ``'`` are spelt otherwise than in the
    path; each such ``*`` adds the spelling with its query part starting there. Almost
    every pattern has one spelling only.
    """
    text = raw.decode("latin-1")
    query_at = text.find("?")
    if query_at < 0:
        query_at = len(text)
    spellings = [_spell(text, query_at)]
    # Walking back from the query: a '*' gives a new spelling only if a character spelt
    # two ways lies between it and the last '*' that gave one.
    differs = False
    for index in range(query_at - 1, -1, -1):
        char = text[index]
        if char in _SPELT_TWO_WAYS:
            differs = True
        elif char == "*" and differs:
            if len(spellings) == _MAX_SPELLINGS:
                break
            spellings.append(_spell(text, index))
            differs = False
    return tuple(dict.fromkeys(spellings))


def normalise_path(path: str) -> str:
    """The form rules are matched against; a canonical path only gets ``*`` and ``$`` escaped.

    An empty path means ``/``. Escapes are normalised with the canonicaliser's table, so
    a serialised but not canonical path (``%7e`` for ``~``) gets the answer its canonical
    form gets; characters the caller left bare that a URL parser would escape (non-ASCII,
    space) stay as they are and never match a rule.
    """
    if not path:
        return "/"
    # Canonical escapes come back unchanged, and a search is much cheaper than a sub.
    if "%" in path and _NOT_CANONICAL_ESCAPE.search(path):
        path = normalise_escapes(path)
    # Patterns spell a literal '*' or '$' escaped (the bare ones are operators).
    if "*" in path:
        path = path.replace("*", "%2A")
    if "$" in path:
        path = path.replace("$", "%24")
    return path


@dataclass(frozen=True, slots=True)
class Rule:
    """One spelling of an ``Allow`` or ``Disallow`` line of the group that applies to us.

    ``pattern`` is in canonical spelling (see :func:`pattern_spellings`) and never empty;
    ``priority`` is its length, which decides between rules that match the same path.
    """

    allow: bool
    pattern: str
    priority: int


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
        """Whether we may fetch ``path``: the path plus ``?query`` of a canonical URL."""
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
