"""URLs: the identity of everything the crawler touches.

Seeds and parsed links become canonical URLs here before they reach the frontier; the
frontier keys politeness on :func:`host_of` (the host name), robots.txt on :func:`origin_of`
(scheme, host, port), and the store names records by :func:`url_id`.
"""

from gossamer.urls.canonical import canonical_link, canonicalize, resolve, url_id
from gossamer.urls.parts import (
    as_host,
    host_key,
    host_of,
    host_or_empty,
    origin_of,
    path_query_of,
    port_of,
    robots_url,
)

__all__ = [
    "as_host",
    "canonical_link",
    "canonicalize",
    "host_key",
    "host_of",
    "host_or_empty",
    "origin_of",
    "path_query_of",
    "port_of",
    "resolve",
    "robots_url",
    "url_id",
]
