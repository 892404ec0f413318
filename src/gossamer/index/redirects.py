"""Index stage, redirects: which URL a link really leads to, for anchor text.

Data flow: ``crawl.db`` (a 3xx page and the URL it sent the crawl to, admitted with the
redirecting URL as referrer) -> **redirects** -> anchors (``AnchorStore.aliases``). A link
to ``http://a.test/old`` that answers 301 to ``/new`` names the page at ``/new``: its words
belong to that page's anchor text, not to a URL with no document. Chains are followed to
their end (at most ``MAX_HOPS``); a loop leads nowhere and is dropped.

Only redirects the crawl followed are known: a redirect to a URL already queued from
elsewhere was not recorded with its source, so its links keep their first target.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gossamer.index.errors import IndexingError

__all__ = ["MAX_HOPS", "redirect_targets"]

MAX_HOPS = 10

_FOLLOWED = """
SELECT u.referrer, u.url FROM urls AS u JOIN pages AS p ON p.url = u.referrer
WHERE p.status BETWEEN 300 AND 399 AND p.purpose = 'page' AND u.url != u.referrer
"""


def redirect_targets(crawl_db: Path) -> dict[str, str]:
    """Each redirecting URL of the crawl and the URL its chain of redirects ends at."""
    try:
        conn = sqlite3.connect(f"file:{crawl_db}?mode=ro", uri=True)
        try:
            step = dict(conn.execute(_FOLLOWED).fetchall())
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise IndexingError(f"cannot read the redirects in {crawl_db}: {exc}") from exc
    final: dict[str, str] = {}
    for source, first in step.items():
        target, hops = first, 1
        while target in step and hops < MAX_HOPS and target != source:
            target, hops = step[target], hops + 1
        if target != source and target not in step:
            final[source] = target
    return final
