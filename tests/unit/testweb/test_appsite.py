"""The script-built test site, spoken to over loopback with raw blocking connections."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator

import pytest

from gossamer.testweb.appsite import AppSite, ThreadedAppSite
from gossamer.testweb.appsite_audit import host_of

from . import ManualClock, RawConnection, robots_allows, robots_delay

APP1, APP2, PLAIN, THIN = "app1.web.test", "app2.web.test", "plain.web.test", "thin.web.test"


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedAppSite]:
    with ThreadedAppSite(AppSite()) as running:
        yield running


@pytest.fixture
def fresh() -> Iterator[tuple[ThreadedAppSite, ManualClock]]:
    """A site of its own, so its report holds only this test's requests."""
    clock = ManualClock()
    with ThreadedAppSite(AppSite(), clock=clock) as running:
        yield running, clock


def fetch(site: ThreadedAppSite, host: str, target: str) -> tuple[int, str, bytes]:
    """Status, Content-Type and body of one GET to ``host`` on the site's loopback port."""
    connection = http.client.HTTPConnection("127.0.0.1", site.port, timeout=30)
    try:
        connection.request("GET", target, headers={"Host": f"{host}:{site.port}"})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


def get(site: ThreadedAppSite, host: str, target: str) -> tuple[int, bytes]:
    """One GET, recorded whole in the site's log before it returns: the server notes a
    request's end just after handing over its bytes, so a test that moves its manual clock
    next must not outrun that note."""
    status, _, body = fetch(site, host, target)
    site.sync()
    return status, body


def test_a_shell_page_has_no_link_and_loads_the_script(site: ThreadedAppSite) -> None:
    for target in ("/", "/p/0.html"):
        status, body = get(site, APP1, target)
        text = body.decode()
        assert status == 200
        assert "<a " not in text and "href" not in text
        assert '<script src="/static/app.js"></script>' in text
        assert '<div id="app"></div>' in text and "<title>Loading</title>" in text


def test_the_script_is_javascript_and_probes_what_a_crawler_must_refuse(
    site: ThreadedAppSite,
) -> None:
    status, kind, body = fetch(site, APP2, "/static/app.js")
    assert kind.startswith("application/javascript")
    script = body.decode()
    assert status == 200
    assert "'/api/page?path=' + encodeURIComponent(location.pathname)" in script
    assert "fetch('/api/secret')" not in script  # probed through a catching helper instead
    assert "probe('/api/secret')" in script
    assert f"probe('http://127.0.0.1:{site.port}/private.json')" in script
    status, kind, logo = fetch(site, APP2, "/static/logo.png")
    assert status == 200 and kind == "image/png"
    assert logo.startswith(b"\x89PNG\r\n\x1a\n") and logo.endswith(b"IEND\xaeB`\x82")


def test_the_page_api_gives_title_text_with_marker_and_links(site: ThreadedAppSite) -> None:
    status, body = get(site, APP1, "/api/page?path=%2F")
    page = json.loads(body)
    assert status == 200
    assert page["links"] == ["/p/0.html", site.url(APP2), site.url(PLAIN)]
    assert site.marker(site.url(APP1)) in page["text"].split()
    status, body = get(site, APP1, "/api/page?path=/p/3.html")
    page = json.loads(body)
    assert 2 <= len(page["links"]) <= 3 and "/p/3.html" not in page["links"]
    assert site.marker(site.url(APP1, "/p/3.html")) in page["text"]
    assert get(site, APP1, "/api/page?path=/nowhere.html")[0] == 404


def test_robots_txt_of_each_kind_of_host(site: ThreadedAppSite) -> None:
    app1, app2, plain = (get(site, host, "/robots.txt")[1].decode() for host in (APP1, APP2, PLAIN))
    for text in (app1, app2):
        assert not robots_allows(text, "gossamer", "/api/secret")
        assert robots_allows(text, "gossamer", "/api/page?path=/")
    assert robots_delay(app1) == 0.0 and robots_delay(app2) == 0.3
    assert robots_allows(plain, "gossamer", "/api/secret") and robots_delay(plain) == 0.0


def test_server_built_pages_carry_text_links_and_only_plain_a_script(
    site: ThreadedAppSite,
) -> None:
    text = get(site, PLAIN, "/s/2.html")[1].decode()
    assert len(re.sub(r"<[^>]+>", " ", text).split()) >= 250
    assert '<a href="/s/3.html">' in text and "<script>" in text
    assert site.marker(site.url(PLAIN, "/s/2.html")) in text
    root = get(site, PLAIN, "/")[1].decode()
    assert f'<a href="{site.url(APP1)}">' in root
    thin = get(site, THIN, "/t/0.html")[1].decode()
    assert "<script" not in thin and "<a href=" in thin


def test_the_truth_about_pages_markers_and_reach() -> None:
    app = AppSite()
    port = 8080
    scripted, served = app.pages_of("script_built", port), app.pages_of("server_built", port)
    assert len(scripted) == 2 * 7 and len(served) == 7 + 2 and not scripted & served
    assert all(app.looks_script_built_truth(url) for url in scripted)
    assert not any(app.looks_script_built_truth(url) for url in served)
    assert not app.looks_script_built_truth(app.url(APP1, "/static/app.js", port))
    markers = [app.marker(url) for url in scripted | served]
    assert len(set(markers)) == len(markers)
    assert all(re.fullmatch(r"zq[a-z]{8}", marker) for marker in markers)
    seeds = app.seeds(port)
    assert seeds == [f"http://app1.web.test:{port}/"]
    assert app.reachable(seeds, port, rendered=True) == scripted | served
    assert app.reachable(seeds, port, rendered=False) == set(seeds)
    with_plain = app.reachable([*seeds, app.url(PLAIN, "/", port)], port, rendered=False)
    assert with_plain == served | {app.url(APP1, "/", port), app.url(APP2, "/", port)}
    assert app.resolve() == "*.web.test:127.0.0.1"


def test_host_header_names_and_ip_literals() -> None:
    assert host_of("App1.Web.Test:8080") == ("app1.web.test", False)
    assert host_of("127.0.0.1:8080") == ("127.0.0.1", True)
    assert host_of("[::1]:8080") == ("::1", True)
    assert host_of("plain.web.test") == ("plain.web.test", False)


def test_a_polite_render_crawl_is_ok(fresh: tuple[ThreadedAppSite, ManualClock]) -> None:
    site, clock = fresh
    for url in sorted(site.pages("script_built") | site.pages("server_built")):
        host, target = url.removeprefix("http://").split("/", 1)
        get(site, host.split(":")[0], "/" + target)
        clock.advance(1.0)
    get(site, APP1, "/static/app.js")
    get(site, APP1, "/static/app.js")  # a repeat, but of a subresource
    report = site.report(rendered=True)
    assert report.ok(), report.summary()
    assert report.subresource_repeats == 1 and report.requests == 25


def test_what_a_crawl_without_rendering_is_expected_to_find(
    fresh: tuple[ThreadedAppSite, ManualClock],
) -> None:
    site, _ = fresh
    assert get(site, APP1, "/")[0] == 200
    assert site.report(rendered=False).ok()
    assert len(site.report(rendered=True).missing) == 22


def test_two_requests_in_flight_on_one_host_overlap(
    fresh: tuple[ThreadedAppSite, ManualClock],
) -> None:
    site, _ = fresh
    held, other = RawConnection(APP1, site.port), RawConnection(APP1, site.port)
    try:
        with site.gate("/p/0.html") as gate:
            held.send("/p/0.html")
            assert gate.arrived.wait(10)
            assert site.report(rendered=True).overlaps == 0
            assert other.get("/p/1.html")[0] == 200  # begun while /p/0.html is held
            gate.open()
            assert held.receive()[0] == 200
        assert other.get("/p/2.html")[0] == 200  # after both ended: no overlap
    finally:
        held.close()
        other.close()
    report = site.report(rendered=True)
    assert report.overlaps == 1 and not report.ok()


def test_robots_delay_private_and_repeat_violations(
    fresh: tuple[ThreadedAppSite, ManualClock],
) -> None:
    site, clock = fresh
    assert get(site, APP1, "/api/secret")[0] == 200
    get(site, APP2, "/robots.txt")  # exempt from the Crawl-delay
    get(site, APP2, "/")
    get(site, APP2, "/p/0.html")  # no time has passed since the root ended
    clock.advance(0.3)
    get(site, APP2, "/p/1.html")
    status, body = get(site, "127.0.0.1", "/private.json")
    assert status == 200 and b"private" in body
    get(site, APP2, "/")
    report = site.report(rendered=False)
    assert report.robots_violations == 1
    assert report.crawl_delay_violations == 2  # /p/0.html, then / again at once after /p/1
    assert report.private_requests == 1
    assert report.page_repeats == 1 and report.overlaps == 0
    assert not report.ok()
