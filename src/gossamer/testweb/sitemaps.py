"""Test web, sitemaps: which hosts list their pages in sitemaps, and the bytes of those sitemaps.

Role in the data flow: test tooling only. The generator asks :func:`choose_sitemap_hosts` which
hosts get sitemaps and :func:`sitemap_files` for their resources; the renderer asks
:func:`render_sitemap` for the bytes, written with the running server's ports.

Two shapes, chosen per host by :class:`~gossamer.testweb.model.WebSpec`:

* announced (``sitemap_hosts``): robots.txt carries ``Sitemap: <origin>/sitemap_index.xml.gz``;
  that index is a gzipped ``<sitemapindex>`` naming two gzipped ``<urlset>`` files,
  :data:`PART_PATHS`, served as ``application/gzip`` (gzip is the file's content, not a
  Content-Encoding);
* guessed (``guessed_sitemap_hosts``): a plain ``<urlset>`` at ``/sitemap.xml``, named nowhere.

The urlsets list, with a ``<lastmod>`` each, every page of the host a crawler could fetch, the
ones robots.txt forbids included (as real sites do, so a crawler must still ask robots.txt),
and :data:`ORPHANS_PER_HOST` pages that no page links to.
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from xml.sax.saxutils import escape

from gossamer.testweb.model import (
    GUESSED_SITEMAP,
    HostInfo,
    Kind,
    Link,
    Resource,
    RobotsVariant,
    Role,
)

INDEX_PATH = "/sitemap_index.xml.gz"
PART_PATHS = ("/sitemaps/part-1.xml.gz", "/sitemaps/part-2.xml.gz")
PLAIN_PATH = GUESSED_SITEMAP
ORPHANS_PER_HOST = 3
ORPHAN_PREFIX = "orphans"  # their paths start /orphans/, which no robots.txt variant forbids
_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"


def choose_sitemap_hosts(
    infos: Sequence[HostInfo], announced: int, guessed: int
) -> tuple[list[str], list[str]]:
    """Names of the announced and the guessed sitemap hosts, drawing nothing at random.

    Both come from the normal hosts (the alias host excepted), taken from the end of the name
    order so they are not seed hosts when the web has enough hosts. Announced hosts need a
    robots.txt to announce in; guessed ones prefer hosts whose robots.txt is missing.
    """
    normal = sorted(
        (info for info in infos if info.role is Role.NORMAL and not info.aliased),
        key=lambda info: info.name,
        reverse=True,
    )
    served = [info.name for info in normal if info.robots is not RobotsVariant.MISSING]
    if announced > len(served):
        raise ValueError(f"sitemap_hosts={announced}, but only {len(served)} hosts can have one")
    first = served[:announced]
    rest = sorted(
        (info for info in normal if info.name not in first),
        key=lambda info: info.robots is not RobotsVariant.MISSING,  # stable: name order kept
    )
    if guessed > len(rest):
        raise ValueError(f"guessed_sitemap_hosts={guessed}, but only {len(rest)} hosts remain")
    return first, [info.name for info in rest[:guessed]]


def sitemap_files(host: str, listed: Sequence[str], *, announced: bool) -> dict[str, Resource]:
    """The sitemap resources of ``host`` by path, listing the paths ``listed`` in that order:
    the index and its two parts (split in half) for an announced host, else one plain file."""
    pages = [Link(host, path) for path in listed]
    if not announced:
        return {PLAIN_PATH: Resource(Kind.SITEMAP, links=tuple(pages))}
    half = (len(pages) + 1) // 2
    parts = tuple(Link(host, path) for path in PART_PATHS)
    return {
        INDEX_PATH: Resource(Kind.SITEMAP_INDEX, links=parts),
        PART_PATHS[0]: Resource(Kind.SITEMAP, links=tuple(pages[:half])),
        PART_PATHS[1]: Resource(Kind.SITEMAP, links=tuple(pages[half:])),
    }


def lastmod(seed: int, host: str, path: str) -> str:
    """The ``<lastmod>`` written for a URL: a date drawn from the seed and the URL, half of
    them with a time of day too (both are W3C datetime forms the protocol allows)."""
    rng = random.Random(f"{seed}|lastmod|{host}{path}")
    day = (date(2020, 1, 1) + timedelta(days=rng.randrange(1800))).isoformat()
    if rng.random() < 0.5:
        return day
    return f"{day}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00+00:00"


def render_sitemap(
    seed: int, target: str, resource: Resource, href: Callable[[Link], str]
) -> tuple[str, bytes]:
    """Content-Type and body of a sitemap resource; ``href`` writes a link as a URL."""
    index = resource.kind is Kind.SITEMAP_INDEX
    root, item = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f'<{root} xmlns="{_NAMESPACE}">']
    for link in resource.links:
        modified = lastmod(seed, link.host, link.path)
        lines.append(
            f"  <{item}><loc>{escape(href(link))}</loc><lastmod>{modified}</lastmod></{item}>"
        )
    lines += [f"</{root}>", ""]
    body = "\n".join(lines).encode()
    if target.endswith(".gz"):
        return "application/gzip", gzip.compress(body, mtime=0)
    return "application/xml; charset=utf-8", body
