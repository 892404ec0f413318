"""Making the crawler yours: ``[[extract]]`` rules and plugins, while crawling or afterwards.

Data flow: a fetched HTML page (the recorder, in every engine) -> **plugins** (``hooks``: the
rules of ``rules`` and the plugins ``loading`` found, on the API of ``api``) -> items in
``DIR/items.jsonl``, links dropped, more URLs admitted. Afterwards, ``gossamer extract DIR``
runs the same hooks over the archived pages (``afterwards``). Hooks run in the crawl process,
inline, and must not do I/O (``api``'s docstring says why and how).
"""

from __future__ import annotations

from gossamer.plugins.api import Link, Page, PageResult, Plugin

__all__ = ["Link", "Page", "PageResult", "Plugin"]
