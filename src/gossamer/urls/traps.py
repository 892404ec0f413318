"""Spider-trap heuristics: is a canonical URL worth a place in the frontier at all?

Role in the data flow: parse -> urls (canonical form) -> **traps** -> frontier. A server can mint
URLs without end: calendars one month further on every page, relative links that nest a path one
level deeper each time, a fresh session id in every link. The frontier's seen-set cannot help,
since every URL is new. :func:`strip_session_ids` makes the session-id kind collapse into one
URL, so dedup works again; :func:`trap_reason` names what is wrong with a URL that repeats path
segments, nests too deep or grows too long, and the caller drops it and counts the reason.
Calendars look like ordinary URLs; only a per-host page budget stops them, and that lives with
the other scope rules in the pipeline.

Both functions are pure and work on the canonical string (see :mod:`gossamer.urls.canonical`),
so they cost a few string operations per discovered link.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = [
    "MAX_PATH_DEPTH",
    "MAX_REPEATS",
    "MAX_URL_LENGTH",
    "SESSION_PARAMETERS",
    "strip_session_ids",
    "trap_reason",
]

MAX_URL_LENGTH = 2_048
MAX_PATH_DEPTH = 32  # path segments; real sites rarely pass 10
MAX_REPEATS = 3  # occurrences of one path segment, or of one query key

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
    if segments and Counter(segments).most_common(1)[0][1] > max_repeats:
        return "trap_repeated_segment"
    if query:
        keys = Counter(piece.partition("=")[0] for piece in query.split("&") if piece)
        if keys and keys.most_common(1)[0][1] > max_repeats:
            return "trap_repeated_parameter"
    return None
