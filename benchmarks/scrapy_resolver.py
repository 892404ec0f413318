"""A Scrapy DNS resolver that sends the test web's host names to loopback.

Role: benchmark support only; it runs inside the Scrapy virtualenv (``benchmarks/.venv-scrapy``),
never in Gossamer. It plays the part of Gossamer's ``--resolve '*.web.test:127.0.0.1'`` so that
Scrapy can crawl ``site-NNN.web.test`` without an ``/etc/hosts`` entry. Any other name goes to
Scrapy's own caching resolver unchanged. Selected with::

    scrapy runspider ... -s TWISTED_DNS_RESOLVER=scrapy_resolver.TestWebResolver

(Older Scrapy releases call the setting ``DNS_RESOLVER``; it takes the same dotted path.)
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer

# The suffix and address can be changed from the environment for other local webs.
SUFFIX = os.environ.get("TESTWEB_SUFFIX", ".web.test")
ADDRESS = os.environ.get("TESTWEB_ADDRESS", "127.0.0.1")


def maps_to_loopback(name: str) -> bool:
    """True for the test web's own names: the bare domain and anything below it."""
    name = name.lower().rstrip(".")
    return name.endswith(SUFFIX) or name == SUFFIX.lstrip(".")


class TestWebResolver(CachingThreadedResolver):
    """Answers test web names at once; delegates every other name to Scrapy's resolver."""

    def getHostByName(  # noqa: N802 - the name is fixed by Twisted's IResolverSimple
        self, name: str, timeout: Sequence[int] = ()
    ) -> defer.Deferred[str]:
        if maps_to_loopback(name):
            return defer.succeed(ADDRESS)
        return super().getHostByName(name, timeout)
