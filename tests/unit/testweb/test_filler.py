"""Pages of real size (``WebSpec(page_bytes=...)``): sizes, determinism, and an unchanged graph."""

from __future__ import annotations

import re
import statistics

import pytest

from gossamer.parse import parse_html
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import HTML_KINDS, Kind, Web, WebSpec
from gossamer.testweb.render import Renderer

from . import SMALL_HOSTS, SMALL_PAGES

PORT = 8080
LOW, HIGH = 5_000, 40_000
_HREF = re.compile(rb'href="([^"]*)"')


def small(page_bytes: tuple[int, int] | None = None, sitemap_hosts: int = 0) -> WebSpec:
    return WebSpec(
        seed=5,
        hosts=SMALL_HOSTS,
        pages_per_host=SMALL_PAGES,
        page_bytes=page_bytes,
        sitemap_hosts=sitemap_hosts,
    )


@pytest.fixture(scope="module")
def filled() -> Web:
    return build_web(small(page_bytes=(LOW, HIGH), sitemap_hosts=1))


def html_bodies(web: Web) -> dict[tuple[str, str], bytes]:
    renderer = Renderer(web, PORT)
    return {
        key: renderer.get(*key, res).body
        for key, res in web.resources.items()
        if res.kind in HTML_KINDS and res.kind is not Kind.RETRY
    }


def test_pages_are_filled_to_sizes_between_the_bounds(filled: Web) -> None:
    sizes = [len(body) for body in html_bodies(filled).values()]
    # A page ends within one sentence (at most a few hundred bytes) below its drawn size.
    assert all(LOW - 400 <= size <= HIGH for size in sizes), (min(sizes), max(sizes))
    # The sizes are drawn with their mode at the top: the median is near 30 KB, not 22.5 KB.
    assert 25_000 < statistics.median(sizes) < 35_000


def test_filled_pages_are_deterministic_and_duplicates_stay_identical(filled: Web) -> None:
    again = build_web(small(page_bytes=(LOW, HIGH), sitemap_hosts=1))
    assert html_bodies(filled) == html_bodies(again)
    copies = {html_bodies(filled)[key] for key in filled.find(Kind.DUPLICATE)}
    assert len(copies) == 1


def test_no_page_gains_a_link_the_web_did_not_have(filled: Web) -> None:
    plain = build_web(small(sitemap_hosts=1))
    assert plain.expected(PORT) == filled.expected(PORT)
    assert plain.orphans(PORT) == filled.orphans(PORT)

    def targets(web: Web) -> set[str]:
        found: set[str] = set()
        for (host, path), body in html_bodies(web).items():
            page = parse_html(body, web.url(host, path, PORT))
            found.update(link.url for link in page.links)
        return found

    # Navigation repeats what each host's root links to; nothing new is reachable.
    assert targets(filled) == targets(plain)
    bodies = html_bodies(filled)
    host, path = next(k for k in bodies if k[1] != "/" and filled.resources[k].kind is Kind.PAGE)
    own = parse_html(html_bodies(plain)[(host, path)], plain.url(host, path, PORT)).links
    more = parse_html(bodies[(host, path)], filled.url(host, path, PORT)).links
    assert {link.url for link in own} < {link.url for link in more}  # the nav bar adds some
    assert len(_HREF.findall(bodies[(host, path)])) > len(more)  # and repeats links, as sites do


def test_default_pages_are_short_and_unfilled() -> None:
    sizes = [len(body) for body in html_bodies(build_web(small())).values()]
    assert max(sizes) < LOW


@pytest.mark.parametrize("bounds", [(0, 10), (10, 5)])
def test_page_bytes_must_be_a_positive_range(bounds: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="page_bytes"):
        build_web(small(page_bytes=bounds))
