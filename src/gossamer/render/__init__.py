"""Rendering: pages whose links and text exist only after JavaScript runs (issue 36).

Data flow: fetch (the page's own HTML, as for any page) -> **render** (Chromium loads that
HTML; every request it makes comes back through the crawl's fetcher, same origin only, under
robots.txt and the host's delay, and is archived) -> store (the response as fetched, the
rendered DOM beside it as a ``urn:dom:`` resource record) -> parse (links from the DOM).

``choice`` (which hosts, which pages) is light and imported by the crawl's set-up;
``browser``, ``session`` and ``subfetch`` import Playwright, only in a crawl that renders.
"""
