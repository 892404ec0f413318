"""The test web's server, spoken to over loopback with a real aiohttp client."""

from __future__ import annotations

import asyncio
import gzip
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from gossamer.testweb.generate import build_web
from gossamer.testweb.model import Kind, RobotsVariant, Role, Web, WebSpec
from gossamer.testweb.server import LARGE_BYTES, TestWebServer, ThreadedTestWeb

from . import SMALL_HOSTS, SMALL_PAGES, ManualClock, loopback_session


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="module")
def site(clock: ManualClock) -> Iterator[ThreadedTestWeb]:
    web = build_web(WebSpec(seed=3, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES))
    with ThreadedTestWeb(web, clock=clock) as running:
        yield running


def url_of(site: ThreadedTestWeb, key: tuple[str, str]) -> str:
    return site.web.url(key[0], key[1], site.port)


async def fetch(
    url: str, *, follow: bool = False, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    async with (
        loopback_session(auto_decompress=False) as session,
        session.get(url, allow_redirects=follow, headers=headers) as response,
    ):
        return response.status, dict(response.headers), await response.read()


def get(
    url: str, *, follow: bool = False, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    return asyncio.run(fetch(url, follow=follow, headers=headers))


def test_every_expected_url_answers_200(site: ThreadedTestWeb, clock: ManualClock) -> None:
    async def check_all() -> list[tuple[str, int, str]]:
        async with loopback_session() as session:

            async def one(url: str) -> tuple[str, int, str]:
                async with session.get(url, allow_redirects=False) as response:
                    await response.read()
                    return url, response.status, response.content_type

            return list(await asyncio.gather(*(one(url) for url in sorted(site.expected()))))

    results = asyncio.run(check_all())
    refused = [url for url, status, _ in results if status == 429]
    assert len(refused) == 1  # the Retry-After page, which recovers once its time has passed
    clock.advance(1.0)
    results += asyncio.run(check_all())
    answered = {(url, ctype) for url, status, ctype in results if status == 200}
    assert {url for url, _ in answered} == site.expected()
    assert {ctype for _, ctype in answered} == {"text/html", "application/pdf"}


def test_robots_txt_variants(site: ThreadedTestWeb) -> None:
    def robots(variant: RobotsVariant) -> tuple[int, dict[str, str], bytes]:
        host = site.web.host_with_robots(variant)
        assert host is not None
        return get(site.web.url(host, "/robots.txt", site.port))

    status, headers, body = robots(RobotsVariant.STANDARD)
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert b"Disallow: /private/" in body
    assert b"User-agent: Gossamer" in robots(RobotsVariant.AGENT_GROUP)[2]
    assert b"Allow: /archive/public/" in robots(RobotsVariant.WILDCARD)[2]
    assert robots(RobotsVariant.MISSING)[0] == 404
    assert robots(RobotsVariant.SERVER_ERROR)[0] == 500
    assert b"Crawl-delay: " in robots(RobotsVariant.CRAWL_DELAY)[2]
    status, headers, _ = robots(RobotsVariant.REDIRECT)
    assert status == 301 and headers["Location"].endswith(f":{site.port}/robots-real.txt")
    status, _, body = get(headers["Location"])
    assert status == 200 and body.startswith(b"User-agent: *")


def test_error_pages_and_unknown_urls(site: ThreadedTestWeb) -> None:
    statuses = sorted(
        site.web.resources[key].status
        for key in site.web.find(Kind.ERROR)
        if key[1] != "/robots.txt"
    )
    assert statuses == [404, 404, 500]
    for key in site.web.find(Kind.ERROR):
        assert get(url_of(site, key))[0] == site.web.resources[key].status
    assert get(site.web.url(site.web.hosts[0], "/no/such/page.html", site.port))[0] == 404
    assert get(f"http://unknown.web.test:{site.port}/")[0] == 404


def test_too_many_requests_until_retry_after_passes(site: ThreadedTestWeb) -> None:
    own_clock = ManualClock()
    server = TestWebServer(site.web, clock=own_clock)
    [key] = site.web.find(Kind.RETRY)

    async def scenario() -> list[tuple[int, str | None]]:
        seen = []
        async with server, loopback_session() as session:
            url = site.web.url(key[0], key[1], server.port)
            for step in (0.0, 0.5, 0.6):
                own_clock.advance(step)
                async with session.get(url) as response:
                    seen.append((response.status, response.headers.get("Retry-After")))
        return seen

    assert asyncio.run(scenario()) == [(429, "1"), (429, "1"), (200, None)]


def test_redirects_within_and_across_hosts(site: ThreadedTestWeb) -> None:
    web = site.web
    for key in web.find(Kind.REDIRECT):
        resource = web.resources[key]
        assert resource.target is not None
        status, headers, _ = get(url_of(site, key))
        assert status == resource.status and status in (301, 302)
        if resource.target.relative:
            assert headers["Location"] == resource.target.path
        else:
            assert headers["Location"] == web.url(
                resource.target.host, resource.target.path, site.port
            )
    targets = [(key[0], web.resources[key].target) for key in web.find(Kind.REDIRECT)]
    assert any(target is not None and target.host != source for source, target in targets)


def test_redirect_loop_never_lands(site: ThreadedTestWeb) -> None:
    [first, *_] = [k for k in site.web.find(Kind.REDIRECT) if k[1].startswith("/loop/")]
    with pytest.raises(aiohttp.TooManyRedirects):
        get(url_of(site, first), follow=True)


def test_gzip_only_when_accepted(site: ThreadedTestWeb) -> None:
    [key] = site.web.find(Kind.GZIP)
    status, headers, packed = get(url_of(site, key), headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    _, plain_headers, plain = get(url_of(site, key), headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain_headers
    _, refused_headers, _ = get(url_of(site, key), headers={"Accept-Encoding": "*, gzip;q=0"})
    assert "Content-Encoding" not in refused_headers
    assert gzip.decompress(packed) == plain and plain.startswith(b"<!DOCTYPE html>")


def test_large_file_announces_its_size_in_headers(site: ThreadedTestWeb) -> None:
    [key] = site.web.find(Kind.LARGE)

    async def headers_only() -> tuple[int, str, int | None]:
        async with loopback_session() as session, session.get(url_of(site, key)) as response:
            status, ctype, length = response.status, response.content_type, response.content_length
            response.close()  # like a crawler enforcing its cap: never read the body
            return status, ctype, length

    assert asyncio.run(headers_only()) == (200, "text/html", LARGE_BYTES)
    assert LARGE_BYTES > 10_000_000


def test_binary_documents(site: ThreadedTestWeb) -> None:
    [png] = site.web.find(Kind.PNG)
    status, headers, body = get(url_of(site, png))
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert body.startswith(b"\x89PNG\r\n\x1a\n")
    for key in site.web.find(Kind.PDF):
        status, headers, body = get(url_of(site, key))
        assert headers["Content-Type"] == "application/pdf"
        assert body.startswith(b"%PDF-1.4") and body.endswith(b"%%EOF\n")
        xref_at = int(re.findall(rb"startxref\n(\d+)", body)[-1])
        assert body[xref_at:].startswith(b"xref\n0 6\n")
        offsets = re.findall(rb"(\d{10}) 00000 n ", body)
        for number, offset in enumerate(offsets, start=1):
            assert body[int(offset) :].startswith(b"%d 0 obj" % number)
        assert b"Tj" in body


def test_mislabelled_charsets(site: ThreadedTestWeb) -> None:
    [latin1] = site.web.find(Kind.LATIN1)
    _, headers, body = get(url_of(site, latin1))
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    assert any(word in body.decode("latin-1") for word in ("café", "naïve", "façade", "über"))
    [cp1252] = site.web.find(Kind.CP1252)
    _, headers, body = get(url_of(site, cp1252))
    assert headers["Content-Type"] == "text/html"
    assert b'<meta charset="windows-1252">' in body and "\u201c" in body.decode("cp1252")


def test_duplicate_urls_serve_identical_bytes(site: ThreadedTestWeb) -> None:
    bodies = {get(url_of(site, key))[2] for key in site.web.find(Kind.DUPLICATE)}
    assert len(bodies) == 1


def test_slow_page_takes_its_time(site: ThreadedTestWeb) -> None:
    key = site.web.find(Kind.SLOW)[0]
    began = time.monotonic()
    assert get(url_of(site, key))[0] == 200
    assert time.monotonic() - began >= 0.3


def test_trap_host_serves_an_endless_calendar(site: ThreadedTestWeb) -> None:
    [trap] = site.web.hosts_with(Role.TRAP)
    _, _, body = get(site.web.url(trap, "/cal/2099/12", site.port))
    assert b"/cal/2100/01" in body
    _, _, body = get(site.web.url(trap, "/a/a/a/", site.port))
    assert b'href="/a/a/a/a/"' in body


def test_host_header_is_case_insensitive_and_its_port_ignored(site: ThreadedTestWeb) -> None:
    host = site.web.seed_hosts()[0]
    wanted = get(site.web.url(host, "/", site.port))[2]
    headers = {"Host": f"{host.upper()}:9"}
    assert get(f"http://127.0.0.1:{site.port}/", headers=headers)[2] == wanted


def test_pages_link_with_the_servers_port(site: ThreadedTestWeb) -> None:
    body = get(site.seeds()[0])[2].decode()
    absolute = re.findall(r'href="(http://[^"]+)"', body)
    assert absolute and all(f".web.test:{site.port}/" in url for url in absolute)


def test_latency_delays_every_response() -> None:
    web = build_web(
        WebSpec(
            hosts=2, pages_per_host=2, special_hosts=False, latency=0.05, crawl_delay_hosts=False
        )
    )

    async def timed() -> float:
        async with TestWebServer(web) as server:
            began = time.monotonic()
            await fetch(web.seeds(server.port)[0])
            return time.monotonic() - began

    assert asyncio.run(timed()) >= 0.05


def test_threaded_server_reports_a_port_already_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        web = build_web(
            WebSpec(hosts=2, pages_per_host=1, special_hosts=False, crawl_delay_hosts=False)
        )
        with pytest.raises(OSError), ThreadedTestWeb(web, port=taken.getsockname()[1]):
            pass


def test_web_fixture_is_the_one_served(site: ThreadedTestWeb) -> None:
    assert isinstance(site.web, Web)
    assert site.port == site.audit.port > 0


def test_serve_forever_prints_its_port_and_the_audit_on_sigterm(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    script = (
        "import sys; from pathlib import Path;"
        "from gossamer.testweb import WebSpec, serve_forever;"
        "sys.exit(serve_forever(WebSpec(hosts=6, pages_per_host=3), host='127.0.0.1', port=0,"
        f" seeds_file=Path({str(seeds)!r})))"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()  # blocks until the server is listening
        found = re.search(r"port (\d+); crawl with --resolve '\*\.web\.test:127\.0\.0\.1'", banner)
        assert found is not None, banner
        urls = seeds.read_text().split()
        assert len(urls) == 3 and all(f":{found[1]}/" in url for url in urls)
        assert get(urls[0])[0] == 200
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:  # a failed assertion must not leave the server running
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert "audit: FAILED after 1 requests" in rest  # one page is not a complete crawl
