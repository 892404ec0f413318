"""Test web, page filler: navigation and prose that bring a page up to a real page's size.

Role in the data flow: none in production. With ``WebSpec(page_bytes=(low, high))`` the
renderer (:mod:`gossamer.testweb.render`) wraps each HTML page's own text in what real pages
carry around it: a header and a footer navigation bar, and article sections of prose with
inline links, until the page reaches a size drawn for it between ``low`` and ``high`` bytes.
Crawl cost grows with page size (parsing, digests, compression), so benchmarks of CPU per
page need pages the size of the real web's, not the few hundred bytes of the default pages.

The size is drawn from a triangular distribution whose mode is ``high``, so for 5-40 KB the
median page is about 30 KB, as on the real web. Everything is drawn from the page's own random
stream after the default text, so a page's links and opening paragraphs are the same with or
without filler, and pages that share a body (duplicates) stay byte-identical.

The filler adds no URL the crawler would not find anyway: navigation points at the host's root
and at the pages the root links to on its own host, every one reachable from the root already,
and inline links repeat the page's own. So the expected set and the audit are unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache

from gossamer.testweb.model import VOCABULARY

__all__ = ["NAV_LINKS", "fill_page", "page_size"]

NAV_LINKS = 12  # links in the navigation bar, at most
_POOL_SENTENCES = 2_048  # sentences drawn once per web; pages pick from them
_TAGS = ("em", "strong", "code", "span")


def page_size(rng: random.Random, low: int, high: int) -> int:
    """The size in bytes a page is filled to; median about 0.7 of the way from low to high."""
    return int(rng.triangular(low, high, high))


@lru_cache(maxsize=4)
def _sentences(seed: int) -> tuple[str, ...]:
    # A pool drawn once per web keeps filling 20,000 pages of 30 KB fast; a page picks a few
    # hundred of them, so within one page (all that a gzip member sees) text rarely repeats.
    rng = random.Random(f"gossamer-testweb-prose:{seed}")
    pool = []
    for _ in range(_POOL_SENTENCES):
        words = rng.choices(VOCABULARY, k=rng.randint(6, 22))
        if rng.random() < 0.3:  # some inline markup, as prose in a CMS has
            at = rng.randrange(len(words))
            tag = rng.choice(_TAGS)
            words[at] = f"<{tag}>{words[at]}</{tag}>"
        pool.append(" ".join(words).capitalize() + ".")
    return tuple(pool)


def _nav(hrefs: Sequence[tuple[str, str]], css: str) -> str:
    items = "".join(f'<li><a href="{href}">{label}</a></li>' for href, label in hrefs)
    return f'<nav class="{css}"><ul>{items}</ul></nav>'


def fill_page(
    rng: random.Random,
    seed: int,
    head: str,
    body: str,
    *,
    size: int,
    nav: Sequence[tuple[str, str]],
    inline: Sequence[str],
) -> str:
    """The page ``<html>...`` whose ``<head>`` inner part is ``head`` and whose article is
    ``body``, wrapped in navigation (``nav``: href and label) and padded with prose sections
    (inline links drawn from ``inline``) to about ``size`` characters; never more unless the
    unpadded page is already larger."""
    sentences = _sentences(seed)
    top = f"<header>{_nav(nav, 'site')}</header>"
    bottom = f"<footer>{_nav(nav[::-1], 'footer')}<p>{rng.choice(sentences)}</p></footer>"
    opening = f'<html lang="en"><head>{head}</head><body>{top}<main><article>{body}'
    closing = f"</article></main>{bottom}</body></html>\n"
    room = size - len(opening) - len(closing)
    sections: list[str] = []
    while True:
        heading = f"<h2>{rng.choice(sentences)[:-1]}</h2>"
        parts = rng.choices(sentences, k=rng.randint(3, 9))
        if inline and rng.random() < 0.6:
            where = rng.randrange(len(parts))
            word = rng.choice(VOCABULARY)
            parts[where] += f' See <a href="{rng.choice(inline)}">{word}</a>.'
        section = f"<section>{heading}<p>{' '.join(parts)}</p></section>\n"
        if len(section) > room:
            break
        sections.append(section)
        room -= len(section)
    # Top up with single sentences, so the page ends within a sentence of its size.
    last: list[str] = []
    room -= len("<p></p>")
    while len(sentence := rng.choice(sentences)) + 1 <= room:
        last.append(sentence)
        room -= len(sentence) + 1
    tail = f"<p>{' '.join(last)}</p>" if last else ""
    return opening + "".join(sections) + tail + closing
