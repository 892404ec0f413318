"""Spider-trap heuristics: is a canonical URL worth a place in the frontier at all?

Role in the data flow: parse -> urls (canonical form) -> **traps** -> frontier. A server can mint
URLs without end: calendars one month further on every page, relative links that nest a path one
level deeper each time, a fresh session id in every link. The frontier's seen-set cannot help,
since every URL is new. :func:`strip_session_ids` makes the session-id kind collapse into one
URL, so dedup works again; :func:`trap_reason` names what is wrong with a URL that repeats path
segments, nests too deep or grows too long, and the caller drops it and counts the reason.

Calendars look like ordinary URLs one at a time; as a *family* they give themselves away.
:func:`family_key` names the family of a URL (its numbers and month names masked), and
:class:`TrapFamilies` refuses a member that was found on a page of its own family, ever deeper
below the family's shallowest member (see there for the rule and its false positives). The
per-host page budget in the frontier stays the last stop for traps no rule catches. What a
crawl learns of its families outlives the process: :class:`TrapFamilies` tells its owner of
every change worth keeping, and is restored from what was kept (``gossamer.store.families``).

The functions are pure and work on the canonical string (see :mod:`gossamer.urls.canonical`),
so they cost a few string operations per discovered link; :class:`TrapFamilies` holds the one
piece of state, in bounded memory.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable

from gossamer.urls.parts import host_of, path_query_of

__all__ = [
    "MAX_FAMILY",
    "MAX_PATH_DEPTH",
    "MAX_REPEATS",
    "MAX_URL_LENGTH",
    "SESSION_PARAMETERS",
    "TRACKED_FAMILIES",
    "TrapFamilies",
    "family_host",
    "family_key",
    "strip_session_ids",
    "trap_reason",
]

MAX_URL_LENGTH = 2_048
MAX_PATH_DEPTH = 32  # path segments; real sites rarely pass 10
MAX_REPEATS = 3  # occurrences of one path segment, or of one query key
MAX_FAMILY = 100  # link hops a URL family may feed itself below its shallowest member
TRACKED_FAMILIES = 32_768  # self-feeding families remembered at once (about 4 MB)

# Names that application servers and shops use for session ids, compared in lower case.
SESSION_PARAMETERS = frozenset(
    {
        "jsessionid",
        "phpsessid",
        "sid",
        "sessid",
        "sessionid",
        "session_id",
        "session-id",
        "cfid",
        "cftoken",
        "oscsid",
        "zenid",
    }
)
# ASP.NET appends letters to the name: ASPSESSIONIDQSDRTABC.
_SESSION_PREFIXES = ("aspsessionid",)
# A ";name=value" path parameter (Java servlets put jsessionid there).
_PATH_PARAMETER = re.compile(r";([^/;?=]*)=[^/;?]*")


def _is_session_key(key: str) -> bool:
    lowered = key.lower()
    return lowered in SESSION_PARAMETERS or lowered.startswith(_SESSION_PREFIXES)


def _split(url: str) -> tuple[str, str, str]:
    """(``scheme://authority``, path, query) of an absolute canonical URL; query without '?'."""
    path_at = url.find("/", url.find("//") + 2)
    if path_at < 0:
        return url, "/", ""
    path, _, query = url[path_at:].partition("?")
    return url[:path_at], path, query


def strip_session_ids(url: str) -> str:
    """``url`` without session-id query parameters or ``;jsessionid=``-style path parameters.

    Everything else keeps its order and spelling, so a canonical URL stays canonical, and the
    function is idempotent. A query left empty is dropped along with its '?'.
    """
    origin, path, query = _split(url)
    if ";" in path:
        path = _PATH_PARAMETER.sub(
            lambda m: "" if _is_session_key(m.group(1)) else m.group(0), path
        )
    if query:
        kept = [p for p in query.split("&") if not _is_session_key(p.partition("=")[0])]
        query = "&".join(kept)
    return origin + path + ("?" + query if query else "")


def trap_reason(
    url: str,
    *,
    max_length: int = MAX_URL_LENGTH,
    max_depth: int = MAX_PATH_DEPTH,
    max_repeats: int = MAX_REPEATS,
) -> str | None:
    """The error kind under which ``url`` is refused as a likely trap, or None if it looks fine.

    Kinds: ``trap_too_long`` (more than ``max_length`` characters), ``trap_too_deep`` (more
    than ``max_depth`` path segments), ``trap_repeated_segment`` (one path segment more than
    ``max_repeats`` times, as in ``/a/b/a/b/a/b/a/``) and ``trap_repeated_parameter`` (one
    query key more than ``max_repeats`` times).
    """
    if len(url) > max_length:
        return "trap_too_long"
    _, path, query = _split(url)
    segments = [segment for segment in path.split("/") if segment]
    if len(segments) > max_depth:
        return "trap_too_deep"
    # max() of the counts, not most_common(1): the same number without a heap. Nothing can
    # repeat more than max_repeats times among max_repeats items or fewer: no count needed.
    if segments and len(segments) > max_repeats and max(Counter(segments).values()) > max_repeats:
        return "trap_repeated_segment"
    if query:
        pieces = [piece for piece in query.split("&") if piece]
        if pieces and len(pieces) > max_repeats:
            keys = Counter(piece.partition("=")[0] for piece in pieces)
            if max(keys.values()) > max_repeats:
                return "trap_repeated_parameter"
    return None


# What varies between members of one family: runs of digits (2026, 20261123, the 17 of page=17,
# both halves of 11/23 and all three of 2026-11-23) and month names (a calendar that spells its
# months). A percent-escape is matched first so that its hex digits are kept: %20 is no number.
_VARYING = re.compile(
    r"(%[0-9A-Fa-f]{2})|\d+|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?"
    r"|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b",
    re.IGNORECASE,
)
# '#' never occurs unescaped in a canonical URL (the fragment is gone), so it cannot be confused
# with a real character.
_PLACEHOLDER = "#"


def _placeholder(match: re.Match[str]) -> str:
    return match.group(1) or _PLACEHOLDER


def _mask(text: str) -> str:
    return _VARYING.sub(_placeholder, text)


def _mask_query(query: str) -> str:
    # Keys name what a parameter means and stay; values are what a calendar counts up.
    pieces = []
    for piece in query.split("&"):
        key, equals, value = piece.partition("=")
        pieces.append(key + equals + _mask(value) if equals else _mask(piece))
    return "&".join(pieces)


def family_key(url: str) -> str | None:
    """The family of a canonical URL: its host, then its path and query with every number,
    date part and month name replaced by ``#``; None for a URL with nothing to replace.

    ``http://a.test/cal/2026/11?view=23`` and ``https://a.test:8080/cal/1999/dec?view=1`` are
    one family (``a.test/cal/#/#?view=#``): scheme and port do not matter, as for politeness.
    """
    target = path_query_of(url)
    path, mark, query = target.partition("?")
    masked = _mask(path) + (mark + _mask_query(query) if mark else "")
    if masked == target:
        return None
    return host_of(url) + masked


def family_host(family: str) -> str:
    """The host name a :func:`family_key` starts with (its masked path begins with '/')."""
    return family.partition("/")[0]


class TrapFamilies:
    """Refuses URLs that a family of URLs feeds to itself, ever deeper: calendars and the like.

    The rule: a URL is refused when it was found on a page of its own family (its referrer has
    the same :func:`family_key`: "self-fed") and its crawl depth lies ``max_chain`` or more link
    hops below the shallowest member of that family seen so far. A "next month" calendar is one
    long self-fed chain, one hop deeper per page, so it is cut after ``max_chain`` pages.

    What it leaves alone, and why: a listing of thousands of ``/post/N`` linked from index pages
    is not self-fed (the referrer is an index page, another family), and posts that link to the
    next post are found at about the depth of the index that lists them. Related items
    (``/product/N`` linking to ten other products) are self-fed but shallow: the family fans out
    instead of going deeper. A paginated listing whose pages link to nearby page numbers as well
    as "next" is reached within a few dozen hops; only a listing of more than ``max_chain``
    pages that offers nothing but "next" is cut, and it is indistinguishable from a calendar.

    Memory: only families that have fed themselves at least once are remembered (a family of
    one, like a URL with a numeric id in its slug, costs nothing), each as a hash of its key
    and a depth, in a least-recently-used table of ``capacity`` entries. A chain touches its
    family on every step, so it stays in the table; a family pushed out starts over, which
    lets its chain run up to ``max_chain`` further pages (the per-host budget still holds).

    Across processes: ``keep`` hears ``(family, shallowest depth)`` whenever a self-fed family
    is met that the table does not hold (new, or pushed out since) or its shallowest depth
    decreases, and
    :meth:`restore` puts kept families back. A crawl keeps them in ``crawl.db``, so a resumed
    crawl goes on counting each chain where it stopped. Both are rare next to the links
    checked (once per family, plus once per family pushed out and met again), and the state
    is a minimum, so telling or restoring the same family twice changes nothing.
    """

    def __init__(
        self,
        max_chain: int = MAX_FAMILY,
        *,
        capacity: int = TRACKED_FAMILIES,
        keep: Callable[[str, int], None] | None = None,
    ) -> None:
        if max_chain < 1 or capacity < 1:
            raise ValueError("max_chain and capacity must be positive")
        self._max_chain = max_chain
        self._capacity = capacity
        self._keep = keep
        self._shallowest: OrderedDict[int, int] = OrderedDict()  # hash(family) -> depth
        # Links arrive page by page: the referrer's family is worked out once per page.
        self._referrer: str | None = None
        self._referrer_family: str | None = None

    def __len__(self) -> int:
        """Families remembered: never more than ``capacity``."""
        return len(self._shallowest)

    def restore(self, families: Iterable[tuple[str, int]]) -> None:
        """Remember these ``(family, shallowest depth)`` pairs, as kept by an earlier process,
        without telling ``keep``. Past ``capacity``, the last ones given stay."""
        shallowest = self._shallowest
        for family, depth in families:
            key = hash(family)
            known = shallowest.get(key)
            shallowest[key] = depth if known is None else min(known, depth)
            shallowest.move_to_end(key)
            if len(shallowest) > self._capacity:
                shallowest.popitem(last=False)

    def verdict(self, url: str, depth: int, referrer: str | None) -> str | None:
        """``"trap_family"`` if ``url``, found at ``depth`` on ``referrer``, continues a chain
        of its family too far; None if it may be crawled. Remembers what it is shown."""
        return self.verdict_of(family_key(url), depth, referrer)

    def verdict_of(self, family: str | None, depth: int, referrer: str | None) -> str | None:
        """:meth:`verdict` for a URL whose :func:`family_key` is ``family`` (worked out once
        by a caller that meets the same URL on many pages)."""
        if family is None:
            return None
        self_fed = referrer is not None and self._family_of(referrer) == family
        # A self-fed URL's referrer is a member one hop up: the family reaches that depth.
        reached = depth - 1 if self_fed else depth
        key = hash(family)
        known = self._shallowest.get(key)
        if known is None:
            if not self_fed:
                return None  # a family that has not fed itself is not worth a place yet
            shallowest = reached
            self._shallowest[key] = shallowest
            if len(self._shallowest) > self._capacity:
                self._shallowest.popitem(last=False)
            if self._keep is not None:
                self._keep(family, shallowest)
        else:
            shallowest = known
            if reached < known:
                shallowest = reached
                if self._keep is not None:
                    self._keep(family, shallowest)
            self._shallowest[key] = shallowest
            self._shallowest.move_to_end(key)
        if self_fed and depth - shallowest >= self._max_chain:
            return "trap_family"
        return None

    def _family_of(self, referrer: str) -> str | None:
        if referrer != self._referrer:
            self._referrer = referrer
            self._referrer_family = family_key(referrer)
        return self._referrer_family
