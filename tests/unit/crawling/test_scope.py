"""Scope rules (issue 30): SURT forms, the areas the seeds draw, the rule each refusal names,
and admission counting refusals by rule, redirect targets included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gossamer.config import ScopeConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.scope import (
    Scope,
    _covering,
    _within,
    registrable_domain,
    seed_surts,
    surt_of,
    surt_rule,
)
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB

from .test_admission import Queue

# Host labels start with a letter (an all-digit name would be an address); paths are plain.
labels = st.tuples(st.sampled_from("abcxyz"), st.text("ab1-", max_size=3)).map(
    lambda parts: (parts[0] + parts[1]).rstrip("-")
)
hosts = st.lists(labels, min_size=2, max_size=4).map(".".join)
paths = st.lists(st.text("aB1._~-", max_size=4), max_size=3).map(lambda p: "/" + "/".join(p))


def test_surt_forms_as_heritrix_writes_them() -> None:
    assert surt_of("http://www.example.org/a/b?x=1") == "http://(org,example,www,)/a/b?x=1"
    # https is compared as http; a port stays inside the host part.
    assert surt_of("https://site-1.web.test:8443/") == "http://(test,web,site-1,:8443)/"
    assert surt_of("http://127.0.0.1/x") == "http://(127.0.0.1,)/x"
    assert surt_rule("+http://(org,example,)/") == (True, "http://(org,example,)/")
    assert surt_rule("- HTTPS://(ORG,Example,www,)/Path") == (
        False,
        "http://(org,example,www,)/Path",
    )
    assert surt_rule("http://(org,") == (True, "http://(org,")
    with pytest.raises(ValueError, match="SURT prefix"):
        surt_rule("+example.org")


def test_registrable_domains_come_from_the_public_suffix_list() -> None:
    assert registrable_domain("www.example.co.uk") == "example.co.uk"
    assert registrable_domain("a.b.github.io") == "b.github.io"  # a private suffix counts
    assert registrable_domain("127.0.0.1") == "127.0.0.1"
    assert registrable_domain("localhost") == "localhost"
    # An unknown top-level domain is its own suffix; a configured one goes deeper.
    assert registrable_domain("site-1.web.test") == "web.test"
    assert registrable_domain("a.site-1.web.test", ("web.test",)) == "site-1.web.test"


def test_each_mode_draws_its_area_and_names_itself() -> None:
    seed = "http://www.example.org/docs/index.html"
    other = "http://example.com/"
    cases = {
        "host": ("http://www.example.org/elsewhere", "http://cdn.example.org/x"),
        "domain": ("http://cdn.example.org/x", "http://example.org.evil.test/"),
        "prefix": ("https://www.example.org/docs/a/b", "http://www.example.org/blog/"),
    }
    for mode, (inside, outside) in cases.items():
        scope = Scope(mode=mode, seed_area=seed_surts(mode, [seed]))
        assert scope.refusal(seed) is None
        assert scope.refusal(inside) is None, (mode, inside)
        assert scope.refusal(outside) == mode, (mode, outside)
        assert scope.refusal(other) == mode
    assert Scope(mode="any").refusal(other) is None
    assert not Scope().limited and Scope(mode="seeds").limited
    assert Scope(exclude=("x",)).limited and Scope(allow_domains=("a.test",)).limited
    assert not Scope(mode="seeds").follows_links


def test_the_rules_name_what_refused() -> None:
    scope = Scope(
        allow_domains=("example.org",),
        surts=("-http://(org,example,private,",),
        include=(r"\.html$|/$",),
        exclude=(r"\.pdf$",),
    )
    assert scope.refusal("http://a.example.org/x.html") is None
    assert scope.refusal("http://example.org/") is None
    assert scope.refusal("http://badexample.org/") == "allow"  # only the allowed domain
    assert scope.refusal("http://private.example.org/x.html") == "surt"
    assert scope.refusal("http://a.example.org/x.pdf") == "exclude"  # exclude comes first
    assert scope.refusal("http://a.example.org/x.txt") == "include"
    # A scope mode widened by --allow-domain.
    wide = Scope(
        mode="host",
        seed_area=seed_surts("host", ["http://a.test/"]),
        allow_domains=("cdn.test",),
    )
    assert wide.refusal("http://img.cdn.test/1") is None
    assert wide.refusal("http://b.test/") == "host"


@given(domain=hosts, sub=st.lists(labels, max_size=2), other=hosts, path=paths)
def test_a_domain_area_holds_its_subdomains_and_nothing_else(
    domain: str, sub: list[str], other: str, path: str
) -> None:
    area = seed_surts("domain", [f"https://{domain}/"], (domain.split(".", 1)[1],))
    scope = Scope(mode="domain", seed_area=area)
    inside = ".".join([*sub, domain])
    assert scope.refusal(f"http://{inside}{path}") is None
    assert scope.refusal(f"https://{inside}:8080{path}") is None
    outside = other != domain and not other.endswith("." + domain)
    assert (scope.refusal(f"http://{other}{path}") is None) is not outside


@given(st.lists(st.text("abc,()/", max_size=6), max_size=8), st.text("abc,()/", max_size=8))
def test_the_sorted_lookup_is_a_prefix_search(prefixes: list[str], text: str) -> None:
    assert _within(_covering(prefixes), text) == any(text.startswith(p) for p in prefixes)


@given(host=hosts, path=paths)
def test_a_written_rule_of_a_surt_matches_its_url(host: str, path: str) -> None:
    url = f"https://{host}{path}"
    allows, prefix = surt_rule("+" + surt_of(url).upper().replace("HTTP://", "https://"))
    assert allows
    # The host part is case-insensitive: the written upper case matches the URL's form.
    assert surt_of(url).startswith(prefix.split(")", 1)[0])


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MetadataDB]:
    with MetadataDB(tmp_path / "crawl.db") as opened:
        yield opened


def test_admission_counts_refusals_by_rule(db: MetadataDB) -> None:
    stats, queue = CrawlStats(), Queue()
    scope = ScopeConfig(
        mode="domain",
        seed_area=seed_surts("domain", ["http://www.a.test/"], ("a.test",)),
        exclude=(r"/private/",),
    )
    admitter = Admitter(scope, frontier=queue, stats=stats, db=db)
    assert admitter.admit("http://www.a.test/", 0, None)
    for _ in range(2):  # met again: refused and counted again, from memory
        assert not admitter.admit("http://b.test/", 1, "http://www.a.test/")
        assert not admitter.admit("http://www.a.test/private/x", 1, "http://www.a.test/")
    # A redirect target is judged like a link: out of scope, it is not queued.
    assert not admitter.admit("http://c.test/moved", 0, "http://www.a.test/old", hops=1)
    assert [job.url for job in queue.added] == ["http://www.a.test/"]
    assert stats.skipped_scope == {"domain": 3, "exclude": 2}
    assert stats.skipped_other == 5
    assert not stats.errors  # the user's line, not a fault of any host
    assert "skipped by scope: domain 3, exclude 2" in _stats_text(stats)


def test_seeds_scope_follows_no_link(db: MetadataDB) -> None:
    stats, queue = CrawlStats(), Queue()
    admitter = Admitter(ScopeConfig(mode="seeds"), frontier=queue, stats=stats, db=db)
    assert admitter.admit("http://a.test/", 0, None)
    assert admitter.admit("https://a.test/", 0, "http://a.test/", hops=1)  # the seed moved
    assert not admitter.admit("http://a.test/next", 1, "https://a.test/")
    assert stats.skipped_scope == {"seeds": 1}


def _stats_text(stats: CrawlStats) -> str:
    from gossamer.store.reports import _scope_line  # noqa: PLC0415

    snapshot = stats.snapshot()
    return _scope_line(stats.skipped_other, dict(snapshot["skipped_scope"]))  # type: ignore[call-overload]


def test_counts_by_rule_are_carried_over_runs_workers_and_merges() -> None:
    from gossamer.engine.resume import carry_runs  # noqa: PLC0415
    from gossamer.store.merge import combined_snapshot  # noqa: PLC0415

    earlier = {"skipped_scope": {"domain": 2}, "other_languages": {"de": 1}}
    runs = [{"skipped_scope": {"domain": 1, "exclude": 4}}, {"other_languages": {"fr": 2}}]
    carried = carry_runs(earlier, runs, 1.0)
    assert carried["skipped_scope"] == {"domain": 3, "exclude": 4}
    assert carried["other_languages"] == {"de": 1, "fr": 2}
    stats = CrawlStats()
    stats.carry_scope(carried)
    assert stats.skipped_scope == {"domain": 3, "exclude": 4}
    merged = combined_snapshot([earlier, *runs])
    assert merged["skipped_scope"] == {"domain": 3, "exclude": 4}
