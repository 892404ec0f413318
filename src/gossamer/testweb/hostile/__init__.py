"""A web server that misbehaves on purpose: the hostile far end of the fetch stage, for tests.

Role in the data flow: none in production. Tests crawl it, alone or beside the ordinary test web,
to prove that the crawler survives what real servers do, stays polite and stays safe. It is
written on raw asyncio streams because a framework server will not send half a header, a wrong
Content-Length or a broken chunk. Each case is one host name under ``hostile.test``
(``slow-body.hostile.test``), routed on the Host header as the ordinary test web does, so one
port serves every case and a crawl reaches them with ``--resolve '*.hostile.test:127.0.0.1'``.
A request for any other host (an IP literal reached through a redirect, say) is answered too,
and logged, so a test can prove that it never arrived.

Three modules: ``server`` (the socket, request reading, the log of hits), ``cases`` (the
catalogue: what each case does, listed one line each in ``Cases.__init__``) and ``wire`` (the
raw response pieces the cases are made of)::

    async with HostileServer(samples=folder) as server:
        crawl([server.url("slow-body")], resolve=HOSTILE_RESOLVE)
        assert len(server.hits("slow-body")) == 1
"""

from gossamer.testweb.hostile.cases import (
    BAD_SCHEMES,
    CALM_TARGETS,
    HOSTILE_DOMAIN,
    HOSTILE_RESOLVE,
    LOOPBACK_HOSTS,
    MANY_LINKS,
    UNRESOLVABLE,
)
from gossamer.testweb.hostile.server import Hit, HostileServer
from gossamer.testweb.hostile.wire import head

__all__ = [
    "BAD_SCHEMES",
    "CALM_TARGETS",
    "HOSTILE_DOMAIN",
    "HOSTILE_RESOLVE",
    "LOOPBACK_HOSTS",
    "MANY_LINKS",
    "UNRESOLVABLE",
    "Hit",
    "HostileServer",
    "head",
]
