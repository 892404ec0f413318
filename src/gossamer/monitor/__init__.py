"""Monitor: how a crawl is watched while it runs and judged when it ends.

Data flow: ``CrawlStats`` and the frontier (crawl loop) -> **monitor** -> the control
channel's live status (``status``, ``channel``), the web dashboard and ``/metrics``
(``metrics``), and ``reports/report.html`` (``report``, ``charts``).

Only the light modules are imported with the package. ``metrics`` pulls in
``prometheus_client`` and ``charts`` matplotlib (inside its functions), so the crawler, which
imports ``series``, ``status`` and ``channel`` at start-up, never loads either.
"""
