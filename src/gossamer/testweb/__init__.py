"""The local multi-host test web: generator, loopback server and the audit that judges a crawl.

Role in the data flow: none in production. Tests, ``make demo`` and the benchmarks crawl this
web over loopback (``--resolve '*.web.test:127.0.0.1'``) and ask the audit whether the crawl was
polite and complete::

    web = build_web(WebSpec(seed=7))
    with ThreadedTestWeb(web) as site:
        crawl(site.seeds())
        assert site.report().ok()
"""

from gossamer.testweb.audit import Audit, AuditReport
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import Web, WebSpec
from gossamer.testweb.server import TestWebServer, ThreadedTestWeb, serve_forever

__all__ = [
    "Audit",
    "AuditReport",
    "TestWebServer",
    "ThreadedTestWeb",
    "Web",
    "WebSpec",
    "build_web",
    "serve_forever",
]
