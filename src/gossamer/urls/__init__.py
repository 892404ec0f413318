"""URLs: the identity of everything the crawler touches.

Seeds and parsed links become canonical URLs here before they reach the frontier;
the frontier keys politeness on :func:`host_key` and the store names records by
:func:`url_id`.
"""

from gossamer.urls.canonical import canonical_link, canonicalize, host_key, resolve, url_id

__all__ = ["canonical_link", "canonicalize", "host_key", "resolve", "url_id"]
