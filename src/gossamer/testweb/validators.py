"""Test web, validators: the ETag and Last-Modified of a page, and when a request gets a 304.

Role in the data flow: test tooling only. With ``WebSpec(validators=True)`` the renderer
(:mod:`gossamer.testweb.render`) stamps each HTML or PDF answer of a host that
:meth:`~gossamer.testweb.model.Web.sends_validators` with a strong ETag made from a hash of
its body and a Last-Modified that is the fixed date of the generation in which the page last
changed (:func:`last_modified`); the server asks :func:`not_modified` on every request for
such a page whether a ``304 Not Modified`` answers it.

The decision follows RFC 9110 section 13.2.2: If-None-Match, when present, decides alone (weak
comparison: ``W/"x"`` matches ``"x"``; ``*`` matches any page that exists); otherwise
If-Modified-Since gets a 304 when the page has not been modified after that date. A date that
does not parse is ignored, as the RFC asks.

Generation dates lie in the past (generation 0 is :data:`EPOCH`, each next one a day later),
so a client's If-Modified-Since copied from a stored Last-Modified is always an honest date.
"""

from __future__ import annotations

import hashlib
from datetime import UTC
from email.utils import formatdate, parsedate_to_datetime

__all__ = ["EPOCH", "GENERATION_SECONDS", "etag_of", "last_modified", "not_modified"]

EPOCH = 1_704_067_200  # 2024-01-01 00:00:00 GMT: the Last-Modified of generation 0
GENERATION_SECONDS = 86_400  # each generation's date a day after the one before


def etag_of(body: bytes) -> str:
    """A strong ETag for ``body``: the same bytes always give the same tag."""
    return f'"{hashlib.blake2b(body, digest_size=10).hexdigest()}"'


def last_modified(version: int) -> tuple[str, float]:
    """The Last-Modified of a page last changed in generation ``version``: the HTTP-date and
    the POSIX time it stands for."""
    moment = EPOCH + version * GENERATION_SECONDS
    return formatdate(moment, usegmt=True), float(moment)


def not_modified(
    etags: tuple[str, ...],
    modified: float,
    stamp: str,
    if_none_match: str | None,
    if_modified_since: str | None,
) -> bool:
    """Does a GET with these conditional header values get a 304? ``etags`` are the tags
    any representation of the page carries now (identity and gzip), ``modified`` and ``stamp``
    its Last-Modified as a time and as sent."""
    if if_none_match is not None:
        if if_none_match.strip() == "*":
            return True
        offered = (tag.strip().removeprefix("W/") for tag in if_none_match.split(","))
        return any(tag in etags for tag in offered)
    if if_modified_since is None:
        return False
    if if_modified_since == stamp:  # the usual case: the client echoes what it was sent
        return True
    try:
        since = parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError, IndexError):
        return False
    if since.tzinfo is None:  # '-0000' says UTC without vouching for it; HTTP dates are UTC
        since = since.replace(tzinfo=UTC)
    return modified <= since.timestamp()
