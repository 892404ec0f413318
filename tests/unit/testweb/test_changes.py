"""The changing test web: generations, validators, 304 answers and what the audit keeps of them."""

from __future__ import annotations

import hashlib
import http.client
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

import pytest

from gossamer.testweb.changes import Generation, appeared_marker, marker
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import Kind, Resource, Role, Web, WebSpec
from gossamer.testweb.origins import Origins
from gossamer.testweb.render import Rendered, Renderer
from gossamer.testweb.server import ThreadedTestWeb
from gossamer.testweb.validators import EPOCH, last_modified, not_modified

from . import SMALL_HOSTS, SMALL_PAGES

PORT = 8000
ORIGINS = Origins(PORT, (8001,), 8443)
SPEC = WebSpec(seed=3, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES, validators=True)

Answer = tuple[int, dict[str, str], bytes]
Item = tuple[tuple[str, str], Resource]


@pytest.fixture(scope="module")
def web() -> Web:
    return build_web(SPEC)


def digest(web: Web) -> str:
    """A hash of every answer the web renders at generation 0 and of its expected set."""
    renderer = Renderer(web, ORIGINS)
    total = hashlib.sha256()
    for (host, target), res in sorted(web.resources.items()):
        if res.kind is not Kind.LARGE:  # 12 MB of the same sentence
            found = renderer.get(host, target, res)
            items = sorted(found.headers.items())
            total.update(repr((host, target, found.status, items, found.body)).encode())
    total.update(repr(sorted(web.expected(ORIGINS))).encode())
    return total.hexdigest()[:16]


# Two webs' digests as the generator and renderer made them before generations existed.
# Generation 0 must stay this web; update only for a change to the web made on purpose.
BEFORE = {
    WebSpec(seed=3, hosts=12, pages_per_host=6): "51c2b3aa5c905314",
    WebSpec(
        seed=7,
        hosts=12,
        pages_per_host=6,
        aliases=True,
        sitemap_hosts=1,
        guessed_sitemap_hosts=1,
        page_bytes=(3000, 6000),
    ): "8bb4e658fca52c65",
}


@pytest.mark.parametrize("spec", list(BEFORE))
def test_generation_0_is_the_web_as_it_was_whatever_the_change_knobs(spec: WebSpec) -> None:
    assert digest(build_web(spec)) == BEFORE[spec]
    knobs = replace(spec, changed=0.5, vanished=0.3, appeared=0.2, ignore_conditional=1.0)
    changing = build_web(knobs)
    assert digest(changing) == BEFORE[spec]
    start = changing.at(0)
    assert start.expected(ORIGINS) == changing.expected(ORIGINS)
    assert all(start.lookup(*key) == (res, 0) for key, res in changing.resources.items())
    assert not (start.changed(PORT) or start.vanished(PORT) or start.appeared(PORT))


def test_generations_are_deterministic_and_differ_by_seed(web: Web) -> None:
    again = build_web(SPEC)
    other = build_web(replace(SPEC, seed=4))
    for number in (1, 2):
        assert web.at(number).steps == again.at(number).steps
        assert web.at(number).expected(PORT) == again.at(number).expected(PORT)
        assert web.at(number).steps[-1].changed != other.at(number).steps[-1].changed
    assert web.ignoring_hosts() == again.ignoring_hosts()


@pytest.mark.parametrize("seed", [3, 5, 11])
def test_each_step_changes_the_shares_asked_and_keeps_the_rest_reachable(seed: int) -> None:
    web = build_web(replace(SPEC, seed=seed, aliases=True, sitemap_hosts=1))
    pool = [
        key
        for key, res in web.resources.items()
        if res.kind is Kind.PAGE and key[1] != "/" and not res.disallowed
        if (info := web.info(key[0])) is not None and info.role is Role.NORMAL
    ]
    for number in (1, 2, 3):
        now, before = web.at(number), web.at(number - 1)
        step = now.steps[-1]
        assert len(step.changed) == round(0.10 * len(pool))  # here more changed than appeared
        assert len(step.vanished) == max(1, round(0.02 * len(pool)))
        assert len(step.appeared) == 1
        assert not step.changed & step.vanished
        assert now.changed_pages() == step.changed
        # A complete crawl at g finds the web at g-1, less what vanished, plus what appeared.
        expected = (before.expected(ORIGINS) - now.vanished(ORIGINS)) | now.appeared(ORIGINS)
        assert now.expected(ORIGINS) == expected
        for host, path in step.appeared:  # linked from a page that counts as changed
            linking = {k for k, res in resources(now, step.changed) if path in links_of(res)}
            assert linking and {key[0] for key in linking} == {host}
    relative = web.at(3)
    assert relative.vanished_pages(0) == {k for s in relative.steps for k in s.vanished}
    assert relative.changed_pages(0) >= relative.changed_pages() - relative.vanished_pages(0)
    with pytest.raises(ValueError, match="not at or before"):
        relative.changed(PORT, since=4)


def resources(now: Generation, keys: Iterable[tuple[str, str]]) -> Iterator[Item]:
    for key in keys:
        found = now.resource(*key)
        assert found is not None
        yield key, found


def links_of(res: Resource) -> set[str]:
    return {link.path for link in res.links}


def rendered_at(renderer: Renderer, now: Generation, host: str, target: str) -> Rendered:
    found, version = now.lookup(host, target)
    assert found is not None
    return renderer.get(host, target, found, version)


def test_changed_pages_carry_the_marker_and_the_rest_stay_byte_identical(web: Web) -> None:
    later = web.at(2)
    renderer = Renderer(web, PORT)
    changed, gone = later.changed_pages(0), later.vanished_pages(0)
    for (host, target), res in web.resources.items():
        if res.kind is Kind.LARGE:
            continue
        first = renderer.get(host, target, res)
        now = rendered_at(renderer, later, host, target)
        if (host, target) in gone:
            assert now.status in (404, 410) and now.etag is None
        elif (host, target) in changed:
            words = now.body.decode()
            assert now.body != first.body
            if web.sends_validators(host):
                assert now.etag != first.etag and now.modified > first.modified
            assert marker(later.version(host, target)) in words
            assert marker(1) not in words or later.version(host, target) == 1
        else:
            assert now == first
    for host, target in later.appeared_pages(0):
        page = rendered_at(renderer, later, host, target)
        assert (
            page.status == 200
            and appeared_marker(later.version(host, target)).encode() in page.body
        )


def test_marker_words_survive_the_index_analyzer() -> None:
    # The index's own analyzer: a marker must stay one whole, unstemmed token.
    from gossamer.index.schema import make_analyzer  # noqa: PLC0415 (tantivy only for this)

    analyzer = make_analyzer()
    for word in (marker(1), marker(12), appeared_marker(3)):
        assert analyzer.analyze(f"Revised: {word}.") == ["revis", word]


def test_the_304_decision() -> None:
    stamp, modified = last_modified(1)
    assert stamp == "Tue, 02 Jan 2024 00:00:00 GMT" and modified == EPOCH + 86_400

    def ask(none_match: str | None = None, since: str | None = None) -> bool:
        return not_modified(('"a"', '"b"'), modified, stamp, none_match, since)

    assert ask('"a"') and ask('W/"b"') and ask('"x", "b"') and ask("*")
    assert not ask('"x"') and not ask()
    assert ask(since=stamp) and ask(since="Wed, 03 Jan 2024 00:00:00 GMT")
    assert not ask(since="Mon, 01 Jan 2024 23:59:59 GMT") and not ask(since="yesterday")
    assert not ask('"x"', since=stamp)  # If-None-Match decides alone


@pytest.fixture
def site(web: Web) -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(web) as running:
        yield running


def get(site: ThreadedTestWeb, host: str, target: str, **headers: str) -> Answer:
    """One GET over a fresh connection; ``headers`` with '_' for '-' (If_None_Match)."""
    connection = http.client.HTTPConnection("127.0.0.1", site.port, timeout=10)
    try:
        sent = {"Host": host} | {name.replace("_", "-"): v for name, v in headers.items()}
        connection.request("GET", target, headers=sent)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def some_page(web: Web, *, validated: bool) -> tuple[str, str]:
    """An ordinary page that stays in generation 1 on a host that sends validators or not."""
    moving = web.at(1).changed_pages() | web.at(1).vanished_pages()
    return next(
        key
        for key in sorted(web.resources)
        if web.sends_validators(key[0]) is validated
        if web.resources[key].kind is Kind.PAGE and key[1] != "/" and key not in moving
    )


def test_conditional_gets_answered_with_304_and_the_audit_keeps_them(
    site: ThreadedTestWeb, web: Web
) -> None:
    host, path = some_page(web, validated=True)
    status, headers, body = get(site, host, path)
    etag, stamp = headers["ETag"], headers["Last-Modified"]
    assert status == 200 and re.fullmatch(r'"[0-9a-f]{20}"', etag) and stamp == last_modified(0)[0]
    status, headers, body_304 = get(site, host, path, If_None_Match=etag)
    assert (status, headers["ETag"], body_304) == (304, etag, b"")
    assert get(site, host, path, If_Modified_Since=stamp)[0] == 304
    assert get(site, host, path, If_None_Match='"other"', If_Modified_Since=stamp)[0] == 200
    records = site.audit.records()
    assert [r.status for r in records] == [200, 304, 304, 200]
    assert [r.body_bytes for r in records] == [len(body), 0, 0, len(body)]
    assert [r.if_none_match for r in records] == [None, etag, None, '"other"']
    assert [r.if_modified_since for r in records] == [None, None, stamp, stamp]
    assert [r.conditional for r in records] == [False, True, True, True]
    report = site.report()
    assert (report.conditional, report.not_modified, report.body_bytes) == (3, 2, 2 * len(body))
    assert report.repeated_fetches == 3 and "304 not modified:                2" in report.summary()


def test_hosts_that_ignore_conditional_requests_always_answer_in_full(
    site: ThreadedTestWeb, web: Web
) -> None:
    assert web.ignoring_hosts() and all(not web.sends_validators(h) for h in web.ignoring_hosts())
    host, path = some_page(web, validated=False)
    first = get(site, host, path)
    assert first[0] == 200 and "ETag" not in first[1] and "Last-Modified" not in first[1]
    site.set_generation(1)
    again = get(site, host, path, If_None_Match="*", If_Modified_Since=last_modified(9)[0])
    assert again[0] == 200 and again[2] == first[2]
    assert "ETag" not in again[1] and "Last-Modified" not in again[1]


def test_switching_generation_changes_what_the_server_answers(
    site: ThreadedTestWeb, web: Web
) -> None:
    validated = [k for k in sorted(web.at(1).changed_pages()) if web.sends_validators(k[0])]
    changed, kept = validated[0], some_page(web, validated=True)
    vanished = sorted(web.at(1).vanished_pages())[0]
    (appeared,) = web.at(1).appeared_pages()
    before = {key: get(site, *key) for key in (changed, kept, vanished)}
    assert get(site, *appeared)[0] == 404
    site.set_generation(1)
    assert site.generation == 1 and site.expected() == web.at(1).expected(site.origins)
    url = site.url(*changed)
    assert url in site.changed() and site.url(*vanished) in site.vanished()
    assert site.appeared() == {site.url(*appeared)}
    old = before[changed][1]
    status, headers, body = get(site, *changed, If_None_Match=old["ETag"])
    assert status == 200 and headers["ETag"] != old["ETag"] and marker(1).encode() in body
    assert headers["Last-Modified"] == last_modified(1)[0]
    assert get(site, *changed, If_Modified_Since=old["Last-Modified"])[0] == 200
    assert get(site, *kept, If_None_Match=before[kept][1]["ETag"])[0] == 304
    assert get(site, *kept)[2] == before[kept][2]
    assert get(site, *vanished)[0] in (404, 410)
    status, _, body = get(site, *appeared)
    assert status == 200 and appeared_marker(1).encode() in body
    report = site.report(generation=1)
    assert report.requests == 6 and report.not_modified == 1  # judged on generation 1 alone
    assert {r.generation for r in site.audit.records()} == {0, 1}
    site.set_generation(0)
    assert get(site, *changed)[2] == before[changed][2] and get(site, *appeared)[0] == 404


def test_gzip_answers_have_their_own_etag_and_a_server_can_start_at_any_generation() -> None:
    web = build_web(replace(SPEC, ignore_conditional=0.0))
    assert not web.ignoring_hosts()
    ((host, path),) = web.find(Kind.GZIP)
    ((pdf_host, pdf_path), *_) = web.find(Kind.PDF)
    with ThreadedTestWeb(web, generation=1) as site:
        assert site.generation == 1 and site.expected() == web.at(1).expected(site.origins)
        plain = get(site, host, path)
        zipped = get(site, host, path, Accept_Encoding="gzip")
        assert zipped[1]["Content-Encoding"] == "gzip" and zipped[1]["ETag"] != plain[1]["ETag"]
        again = get(site, host, path, Accept_Encoding="gzip", If_None_Match=zipped[1]["ETag"])
        assert (again[0], again[1]["ETag"], again[1]["Vary"]) == (
            304,
            zipped[1]["ETag"],
            "Accept-Encoding",
        )
        pdf = get(site, pdf_host, pdf_path)
        assert pdf[1]["Content-Type"] == "application/pdf" and "ETag" in pdf[1]
        assert "ETag" not in get(site, host, "/robots.txt")[1]
        assert [r.body_bytes for r in site.audit.records()][:2] == [len(plain[2]), len(zipped[2])]
