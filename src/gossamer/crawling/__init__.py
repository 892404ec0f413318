"""Crawling: what every way of running a crawl shares, below the engines.

Data flow: fetch -> **crawling** (one exchange inside its URL's fault boundary: archive,
record, admit the links; the folder's lock and statistics snapshot; the reports; the progress
line; the end-of-crawl verdict) -> store and the frontier of whichever engine runs the crawl.
The local engine (``engine/``: one process or ``--workers``), a shared crawl's worker
(``distributed/``) and the study's threads (``threads/``) sit side by side on it; none of them
imports another.
"""
