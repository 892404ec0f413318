"""The identity parts of a canonical URL: its origin, its host name and its path.

Role in the data flow: every canonical URL that reaches the frontier is keyed by these parts,
and nowhere else splits a URL string by hand. They answer three different questions:

* :func:`host_of` -- *which server?* The politeness key: every scheme and port of one host name
  share one slot (in-flight limit, delay, Crawl-delay, backoff), and worker processes split the
  crawl by it. ``http://a.org/``, ``https://a.org/`` and ``http://a.org:8080/`` are one host.
* :func:`origin_of` -- *whose robots.txt?* RFC 9309 scopes a robots.txt to its origin
  (scheme, host and port), so each origin of a host has rules of its own.
* :func:`path_query_of` -- *which rule applies?* The path and query robots.txt rules match.

Two more answer narrower questions: :func:`host_key` is the whole authority (``host[:port]``,
one server process) and :func:`port_of` the explicit port, if any; :func:`as_host` turns a
value that may be a URL, an origin or already a host name (older crawl folders stored origins
where host names now go) into a host name.

They take the canonical form (see :mod:`gossamer.urls.canonical`): scheme and host lower-case,
IDN hosts in punycode, default ports dropped, and a path that always starts with ``/``. So the
work is a couple of ``str.find`` calls per URL, which matters because these run for every link.
"""

from __future__ import annotations

__all__ = [
    "as_host",
    "host_key",
    "host_of",
    "host_or_empty",
    "origin_of",
    "path_query_of",
    "port_of",
    "robots_url",
]


def _authority_span(url: str) -> tuple[int, int]:
    """Start and end of the authority (``[userinfo@]host[:port]``) of an absolute URL."""
    start = url.find("//")
    if start < 0:
        raise ValueError(f"not an absolute URL: {url!r}")
    start += 2
    end = url.find("/", start)
    return start, len(url) if end < 0 else end


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a canonical URL (or of an origin): the robots.txt key."""
    start, end = _authority_span(url)
    at = url.rfind("@", start, end)
    if at < 0:
        return url[:end]
    # Credentials are not part of an origin (and never belong in a key that gets stored).
    return url[:start] + url[at + 1 : end]


def host_of(url: str) -> str:
    """The host name of a canonical URL or origin, without port: the politeness key.

    IPv6 literals keep their brackets (``[::1]``), so a key never looks like ``host:port``.
    """
    start, end = _authority_span(url)
    at = url.rfind("@", start, end)
    if at >= 0:
        start = at + 1
    if url.startswith("[", start):
        return url[start : url.index("]", start) + 1]
    colon = url.find(":", start, end)
    return url[start : end if colon < 0 else colon]


def path_query_of(url: str) -> str:
    """Path plus ``?query`` of a canonical URL, as robots.txt rules are matched against it."""
    _, end = _authority_span(url)
    return url[end:] or "/"


def robots_url(url: str) -> str:
    """The robots.txt URL that governs ``url`` (or an origin)."""
    return origin_of(url) + "/robots.txt"


def host_key(url: str) -> str:
    """``host[:port]`` of a canonical URL: the authority without credentials.

    Canonical URLs carry a port only when it is not the scheme's default, so two URLs on one
    server process always give the same key. Raises ValueError for a non-absolute URL.
    """
    start, end = _authority_span(url)
    at = url.rfind("@", start, end)
    return url[start if at < 0 else at + 1 : end]


def port_of(url: str) -> int | None:
    """The port a canonical URL names (the canonical form drops the scheme's default)."""
    key = host_key(url)
    colon = key.rfind(":")
    if colon < 0 or key.endswith("]"):
        return None
    digits = key[colon + 1 :]
    return int(digits) if digits.isdigit() else None


def host_or_empty(url: str) -> str:
    """``host_of(url)``, or ``""`` for a stored value that is not an absolute URL (the index
    and the ranks then file it under no host instead of failing)."""
    try:
        return host_of(url)
    except ValueError:
        return ""


def as_host(value: str) -> str:
    """The host name of a URL or an origin; a value that is already a host name is kept."""
    return host_of(value) if "://" in value else value
