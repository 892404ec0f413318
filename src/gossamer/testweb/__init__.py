"""The local multi-host test web: generator, loopback server and the audit that judges a crawl.

Role in the data flow: none in production; this is test tooling, and no production module
imports it (``gossamer testweb`` and ``gossamer demo`` import it when they run). Tests,
``make demo`` and the benchmarks crawl this web over loopback
(``--resolve '*.web.test:127.0.0.1'``) and ask the audit whether the crawl was polite and
complete::

    web = build_web(WebSpec(seed=7))
    with ThreadedTestWeb(web) as site:
        crawl(site.seeds())
        assert site.report().ok()

One host reached over several origins (``WebSpec(aliases=True)``, an extra http port and https
with a certificate from :func:`make_certificates`)::

    certs = make_certificates(tmp_path)
    web = build_web(WebSpec(seed=7, aliases=True))
    with ThreadedTestWeb(web, extra_ports=[0], ssl_context=certs.server_context) as site:
        crawl(site.seeds(), ca_file=certs.ca_file)
        assert site.report().ok()

Hosts whose sitemaps are the only way to some of their pages (``WebSpec(sitemap_hosts=1)``
announces a gzipped index in robots.txt, ``guessed_sitemap_hosts=1`` serves ``/sitemap.xml``;
see :mod:`gossamer.testweb.sitemaps`)::

    with ThreadedTestWeb(build_web(WebSpec(seed=7, sitemap_hosts=1))) as site:
        crawl(site.seeds())
        assert site.report().ok()  # the expected set includes site.orphans()

A web that changes between crawls, for recrawls (:mod:`gossamer.testweb.changes`): pages carry
ETag and Last-Modified and conditional requests get 304 (``validators=True``); at each next
generation 10% of the pages change, 2% vanish and 1% appear (``changed``, ``vanished``,
``appeared``)::

    with ThreadedTestWeb(build_web(WebSpec(seed=7, validators=True))) as site:
        crawl(site.seeds())
        site.set_generation(1)
        recrawl()
        assert site.report(generation=1).ok()  # a 304 counts as answered
        changed, gone, new = site.changed(), site.vanished(), site.appeared()
        word = site.web.at(1).marker  # in the text of every page changed at generation 1

A site whose pages only JavaScript builds, for ``--render`` (:mod:`gossamer.testweb.appsite`)::

    with ThreadedAppSite(AppSite()) as site:
        crawl(site.seeds(), resolve=site.resolve(), render="app*.web.test")
        assert site.report(rendered=True).ok()

Beside it, :mod:`gossamer.testweb.hostile` is a raw-socket server whose every host misbehaves
on purpose, for the tests of what the crawler survives.
"""

from gossamer.testweb.appsite import AppSite, ThreadedAppSite
from gossamer.testweb.appsite_audit import AppSiteReport
from gossamer.testweb.audit import Audit, AuditReport, RequestRecord
from gossamer.testweb.changes import Generation
from gossamer.testweb.command import serve_forever
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import Web, WebSpec
from gossamer.testweb.origins import Origins, Via
from gossamer.testweb.server import TestWebServer, ThreadedTestWeb
from gossamer.testweb.tls import WebCertificates, make_certificates

__all__ = [
    "AppSite",
    "AppSiteReport",
    "Audit",
    "AuditReport",
    "Generation",
    "Origins",
    "RequestRecord",
    "TestWebServer",
    "ThreadedAppSite",
    "ThreadedTestWeb",
    "Via",
    "Web",
    "WebCertificates",
    "WebSpec",
    "build_web",
    "make_certificates",
    "serve_forever",
]
