"""Host sizes: the even web stays byte for byte as before, the power-law web keeps its total,
is skewed as documented, is drawn from the seed alone, and every page stays reachable."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
import statistics
from collections import Counter, deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.testweb.generate import MIN_HOST_PAGES, SECTIONS, build_web, power_sizes
from gossamer.testweb.model import Kind, Role, Web, WebSpec
from gossamer.testweb.render import Renderer

PORT = 8080
# The generator's ordinary pages, as opposed to robots extras and special resources.
_ORDINARY = re.compile(rf"/(?:{'|'.join(SECTIONS)})/[a-z]+-\d+\.html")


def fingerprint(web: Web) -> str:
    """A digest of everything the generator decides and of a few rendered pages."""
    digest = hashlib.sha256()
    digest.update(repr(sorted(web.resources.items())).encode())
    digest.update(repr([web.info(name) for name in web.hosts]).encode())
    digest.update(repr((web.trap_year, sorted(web.expected(PORT)))).encode())
    renderer = Renderer(web, PORT)
    keys = sorted(web.resources)
    for host, path in keys[:: max(1, len(keys) // 5)]:
        digest.update(renderer.get(host, path, web.resources[(host, path)]).body)
    return digest.hexdigest()[:16]


# Taken before host_sizes existed: the even web must not move by a byte.
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (WebSpec(), "da463363bd60d928"),
        (
            WebSpec(seed=7, hosts=12, pages_per_host=10, aliases=True, sitemap_hosts=1,
                    guessed_sitemap_hosts=1),
            "5908ccdfc508d3e2",
        ),
        (
            WebSpec(hosts=60, pages_per_host=30, crawl_delay_hosts=False, special_hosts=False,
                    robots_error_host=True, page_bytes=(5_000, 40_000)),
            "d9d1d206912fdeaa",
        ),
    ],
)  # fmt: skip
def test_even_web_is_unchanged(spec: WebSpec, expected: str) -> None:
    assert spec.host_sizes == "even"
    assert fingerprint(build_web(spec)) == expected


def test_unknown_host_sizes_is_refused() -> None:
    with pytest.raises(ValueError, match="host_sizes"):
        WebSpec(host_sizes="zipf").validate()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 150), st.integers(0, 2**32))
def test_power_sizes_keep_the_total_and_the_floor(hosts: int, mean: int, seed: int) -> None:
    sizes = power_sizes(hosts, hosts * mean, random.Random(seed))
    assert len(sizes) == hosts
    assert sum(sizes) == hosts * mean
    assert min(sizes) >= min(MIN_HOST_PAGES, mean)


def test_power_sizes_have_the_documented_shape() -> None:
    sizes = sorted(power_sizes(200, 20_000, random.Random(1)), reverse=True)
    assert sizes[:2] == [1_906, 1_097]  # the biggest holds 9.5%: about a tenth
    assert statistics.median(sizes) == 52.5
    assert sizes[-1] == 32
    assert 0.44 < sum(sizes[:20]) / 20_000 < 0.46
    assert sizes == sorted(power_sizes(200, 20_000, random.Random(2)), reverse=True)


def ordinary_pages(web: Web) -> Counter[str]:
    return Counter(
        host
        for (host, path), res in web.resources.items()
        if res.kind is Kind.PAGE and (path == "/" or _ORDINARY.fullmatch(path))
    )


@pytest.fixture(scope="module")
def power_web() -> Web:
    return build_web(WebSpec(seed=3, hosts=40, pages_per_host=40, host_sizes="power"))


def test_power_web_sizes_come_from_the_seed(power_web: Web) -> None:
    normal = power_web.hosts_with(Role.NORMAL)
    counts = ordinary_pages(power_web)
    drawn = power_sizes(len(normal), len(normal) * 40, random.Random("gossamer-testweb-sizes:3"))
    assert [counts[host] for host in normal] == drawn
    assert max(drawn) > 4 * statistics.median(drawn)  # skewed, not even
    again = build_web(WebSpec(seed=3, hosts=40, pages_per_host=40, host_sizes="power"))
    assert again.resources == power_web.resources
    other = build_web(WebSpec(seed=4, hosts=40, pages_per_host=40, host_sizes="power"))
    assert ordinary_pages(other) != counts


def test_power_web_has_the_even_web_total() -> None:
    spec = WebSpec(seed=5, hosts=30, pages_per_host=20, sitemap_hosts=2)
    even = build_web(spec)
    power = build_web(dataclasses.replace(spec, host_sizes="power"))
    assert sum(ordinary_pages(power).values()) == sum(ordinary_pages(even).values())
    assert len(power.resources) == len(even.resources)


def test_every_page_of_a_power_web_is_reachable_from_its_root(power_web: Web) -> None:
    normal = power_web.hosts_with(Role.NORMAL)
    for host in normal:
        # Over links between the host's own ordinary pages only: the host alone reaches them all.
        seen, queue = {"/"}, deque(["/"])
        while queue:
            for link in power_web.resources[(host, queue.popleft())].links:
                if link.host == host and _ORDINARY.fullmatch(link.path) and link.path not in seen:
                    seen.add(link.path)
                    queue.append(link.path)
        assert len(seen) == ordinary_pages(power_web)[host]
    expected = power_web.expected(PORT)
    for (host, path), res in power_web.resources.items():
        if host in normal and res.kind is Kind.PAGE:
            assert res.disallowed or power_web.url(host, path, PORT) in expected, (host, path)
