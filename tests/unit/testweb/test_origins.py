"""One server on several origins: extra http ports and https, and the audit's per-host-name
in-flight intervals, which see overlaps without added latency and never invent one."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from itertools import cycle

import pytest
from aiohttp.web import BaseRequest, Response

from gossamer.testweb import server as server_module
from gossamer.testweb.audit import Audit, Ticket
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import Kind, Web, WebSpec
from gossamer.testweb.origins import Origins, Via
from gossamer.testweb.server import TestWebServer, ThreadedTestWeb
from gossamer.testweb.tls import WebCertificates, make_certificates

from . import SMALL_HOSTS, SMALL_PAGES, ManualClock, RawConnection, loopback_session

# No added latency anywhere in this module: overlaps must show without it.
PLAIN = WebSpec(hosts=3, pages_per_host=3, special_hosts=False, crawl_delay_hosts=False)
SPECIAL = WebSpec(seed=3, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> WebCertificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def plain() -> Web:
    return build_web(PLAIN)


@pytest.fixture
def site(plain: Web, certs: WebCertificates) -> Iterator[ThreadedTestWeb]:
    """A fresh server (so a fresh audit) on three origins: main, one extra port, https."""
    with ThreadedTestWeb(plain, extra_ports=[0], ssl_context=certs.server_context) as running:
        yield running


def connect(site: ThreadedTestWeb, host: str, via: Via, certs: WebCertificates) -> RawConnection:
    scheme, port = site.origins.resolve(via)
    return RawConnection(host, port, certs.client_context() if scheme == "https" else None)


def ready(*connections: RawConnection) -> None:
    """One finished request on each connection, so the server has accepted them all (and
    finished any TLS handshake) and each waits for its next request in the same state."""
    for connection in connections:
        assert connection.get("/robots.txt")[0] in (200, 404)
    time.sleep(0.05)


# The audit alone, on hand-made events.


def test_overlap_is_per_host_name_whatever_the_origin(plain: Web) -> None:
    audit = Audit(plain, ManualClock())  # the clock never moves: only event order counts
    audit.port = 8000
    one, other = plain.hosts[0], plain.hosts[1]
    first = audit.begin(one)
    second = audit.begin(one, scheme="https", port=8443)
    elsewhere = audit.begin(other, port=8001)
    for ticket in (second, first, elsewhere):
        audit.finish(ticket, target="/", method="GET", user_agent="t", status=200)
    after = audit.begin(one, port=8001)  # begins after both ended: fine
    audit.finish(after, target="/", method="GET", user_agent="t", status=200)
    assert audit.report(set()).concurrent_violations == 1
    records = audit.records()
    assert [r.overlapped for r in records] == [False, True, False, False]
    assert [(r.scheme, r.port) for r in records] == [
        ("http", 8000),
        ("https", 8443),
        ("http", 8001),
        ("http", 8001),
    ]
    assert all(r.end_seq > r.start_seq for r in records)


def test_overlaps_come_from_intervals_in_event_order(plain: Web) -> None:
    audit = Audit(plain, ManualClock())
    host = plain.hosts[0]

    def end(ticket: Ticket) -> None:
        audit.finish(ticket, target="/", method="GET", user_agent="t", status=200)

    a = audit.begin(host)
    b = audit.begin(host, port=2)  # overlaps a
    end(a)
    c = audit.begin(host, port=3)  # overlaps b, which is still going
    end(b)
    end(c)
    d = audit.begin(host)
    end(d)  # alone
    report = audit.report(set())
    assert report.concurrent_violations == 2
    assert sum(r.overlapped for r in audit.records()) == 2  # the begin-time flag agrees


def test_a_request_still_in_flight_counts_against_later_ones(plain: Web) -> None:
    audit = Audit(plain, ManualClock())
    host = plain.hosts[0]
    audit.begin(host)  # never finished: a slow page the client gave up on, say
    later = audit.begin(host, scheme="https", port=443)
    audit.finish(later, target="/", method="GET", user_agent="t", status=200)
    assert audit.report(set()).concurrent_violations == 1


def test_urls_keep_their_origin_and_repeats_are_per_url(plain: Web) -> None:
    audit = Audit(plain, ManualClock())
    audit.port = 8000
    host = plain.hosts[0]
    for scheme, port in (("http", 8000), ("http", 8001), ("https", 8443), ("https", 8443)):
        ticket = audit.begin(host, scheme=scheme, port=port)
        audit.finish(ticket, target="/", method="GET", user_agent="t", status=200)
    assert audit.fetched() == [
        f"http://{host}:8000/",
        f"http://{host}:8001/",
        f"https://{host}:8443/",
        f"https://{host}:8443/",
    ]
    # One path over three origins is three URLs; only the second https fetch repeats one.
    assert audit.report(set()).repeated_fetches == 1


def test_default_ports_are_left_out_of_urls_as_a_crawler_writes_them() -> None:
    assert Web.url("a.web.test", "/x", 80) == "http://a.web.test/x"
    assert Web.url("a.web.test", "/x", 443, "https") == "https://a.web.test/x"
    assert Web.url("a.web.test", "/x", 443) == "http://a.web.test:443/x"
    assert Web.url("a.web.test", "/x", 8443, "https") == "https://a.web.test:8443/x"


def test_origins_fall_back_to_the_main_port() -> None:
    full = Origins(1, (2, 3), 4)
    assert [full.resolve(via) for via in Via] == [("http", 1), ("http", 2), ("https", 4)]
    assert full.all() == [("http", 1), ("http", 2), ("http", 3), ("https", 4)]
    bare = Origins.of(1)
    assert {bare.resolve(via) for via in Via} == {("http", 1)}
    assert Origins.of(full) is full


# The server on three origins, with latency 0.


def test_every_origin_serves_every_host(site: ThreadedTestWeb, certs: WebCertificates) -> None:
    origins = site.origins
    assert origins.http == site.port > 0 and origins.https is not None
    assert len({origins.http, *origins.extra_http, origins.https}) == 3
    host = site.web.hosts[0]
    bodies = set()
    for via in Via:
        connection = connect(site, host, via, certs)
        status, body = connection.get("/")
        connection.close()
        assert status == 200
        bodies.add(body)
    assert len(bodies) == 1  # absolute links name the same origins whichever socket answered
    assert {(r.scheme, r.port) for r in site.audit.records()} == set(origins.all())
    assert site.audit.fetched() == [site.url(host, "/", via) for via in Via]


def test_overlap_over_two_http_ports_is_counted(
    site: ThreadedTestWeb, certs: WebCertificates
) -> None:
    host = site.web.hosts[0]
    first, second = (connect(site, host, via, certs) for via in (Via.MAIN, Via.SECOND))
    ready(first, second)
    with site.hold():  # both requests are waiting when the loop resumes
        first.send("/")
        second.send("/robots.txt")
        time.sleep(0.05)
    assert first.receive()[0] == 200 and second.receive()[0] in (200, 404)
    report = site.audit.report(set())
    assert report.requests == 4 and report.concurrent_violations == 1
    assert {r.port for r in site.audit.records()} == {site.port, *site.origins.extra_http}


def test_overlap_over_http_and_https_is_counted(
    site: ThreadedTestWeb, certs: WebCertificates
) -> None:
    host = site.web.hosts[1]
    plain_http, secure = (connect(site, host, via, certs) for via in (Via.MAIN, Via.TLS))
    ready(plain_http, secure)
    with site.hold():
        secure.send("/")
        plain_http.send("/")
        time.sleep(0.05)
    assert secure.receive()[0] == plain_http.receive()[0] == 200
    assert site.audit.report(set()).concurrent_violations == 1
    assert {r.scheme for r in site.audit.records()} == {"http", "https"}


def test_requests_to_different_host_names_never_count(
    site: ThreadedTestWeb, certs: WebCertificates
) -> None:
    hosts = site.web.hosts
    connections = [connect(site, host, via, certs) for host, via in zip(hosts, Via, strict=True)]
    ready(*connections)
    for _ in range(3):
        with site.hold():
            for connection in connections:
                connection.send("/")
            time.sleep(0.02)
        assert all(connection.receive()[0] == 200 for connection in connections)
    report = site.audit.report(set())
    assert report.requests == 12 and report.concurrent_violations == 0


def test_a_client_waiting_for_each_full_response_is_never_counted(
    certs: WebCertificates,
) -> None:
    web = build_web(SPECIAL)
    [(host, large)] = web.find(Kind.LARGE)
    targets = [
        target
        for (owner, target), resource in web.resources.items()
        if owner == host and resource.kind not in (Kind.SLOW, Kind.RETRY, Kind.LARGE)
    ]
    with ThreadedTestWeb(web, extra_ports=[0], ssl_context=certs.server_context) as site:
        rounds = _back_to_back(site, certs, host, targets, large=large, count=450)
        records = site.audit.records()
        report = site.audit.report(set())
    assert len(records) == rounds
    assert report.concurrent_violations == 0
    # Stronger: each request's begin and finish are neighbours in the server's event order.
    assert all(r.end_seq == r.start_seq + 1 for r in records)
    assert {(r.scheme, r.port) for r in records} == set(site.origins.all())
    assert sum(r.target == large for r in records) >= 3


def test_the_back_to_back_check_catches_a_server_that_records_the_end_late(
    certs: WebCertificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check above has teeth: wait a little after the last byte before finishing, as a
    # server that drained or yielded there would, and the same client shows up as overlapping.
    send_whole = server_module._send_whole

    async def late(request: BaseRequest, response: Response) -> None:
        await send_whole(request, response)
        await asyncio.sleep(0.01)

    monkeypatch.setattr(server_module, "_send_whole", late)
    web = build_web(PLAIN)
    host = web.hosts[0]
    with ThreadedTestWeb(web, extra_ports=[0], ssl_context=certs.server_context) as site:
        _back_to_back(site, certs, host, ["/"], large=None, count=60)
        report = site.audit.report(set())
    assert report.concurrent_violations > 0


def test_writing_a_response_never_suspends(
    certs: WebCertificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The invariant itself, checked on every response of every kind (the 12 MB one over TLS
    # included): handing a response over completes in one step, so nothing else can run
    # between its last byte and the audit's record of its end.
    send_whole = server_module._send_whole
    steps: list[bool] = []

    async def in_one_step(request: BaseRequest, response: Response) -> None:
        writing = send_whole(request, response)
        try:
            writing.send(None)
        except StopIteration:
            steps.append(True)
            return
        writing.close()
        steps.append(False)

    monkeypatch.setattr(server_module, "_send_whole", in_one_step)
    web = build_web(SPECIAL)
    [(host, large)] = web.find(Kind.LARGE)
    targets = [
        target
        for (owner, target), resource in web.resources.items()
        if owner == host and resource.kind is not Kind.RETRY  # its 429 would fail the check
    ]
    with ThreadedTestWeb(web, extra_ports=[0], ssl_context=certs.server_context) as site:
        _back_to_back(site, certs, host, [*targets, "/missing"], large=large, count=160)
        site.sync()
    assert len(steps) == 160 and all(steps)


def _back_to_back(
    site: ThreadedTestWeb,
    certs: WebCertificates,
    host: str,
    targets: list[str],
    *,
    large: str | None,
    count: int,
) -> int:
    """GET or HEAD ``count`` times, each sent the moment the previous response is complete,
    rotating over the three origins (so over three connections); ``large`` now and then."""
    connections = [connect(site, host, via, certs) for via in Via]
    paths = cycle(targets)
    try:
        for index in range(count):
            connection = connections[index % len(connections)]
            method = "HEAD" if index % 7 == 3 else "GET"
            target = large if large is not None and index % 150 == 149 else next(paths)
            status, body = connection.get(target, method)
            resource = site.web.resource(host, target)
            assert status == (resource.status if resource is not None else 404), target
            assert method == "GET" or body == b""
    finally:
        for connection in connections:
            connection.close()
    return count


def test_an_extra_port_already_taken_is_reported_and_nothing_stays_bound(
    plain: Web,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError), ThreadedTestWeb(plain, extra_ports=[0, port]):
            pass


def test_https_through_an_ordinary_client(site: ThreadedTestWeb, certs: WebCertificates) -> None:
    host = site.web.hosts[2]

    async def fetch() -> tuple[int, str]:
        async with (
            loopback_session(certs.client_context()) as session,
            session.get(site.url(host, "/", Via.TLS)) as response,
        ):
            return response.status, await response.text()

    status, text = asyncio.run(fetch())
    assert status == 200 and "<!DOCTYPE html>" in text
    [record] = site.audit.records()
    assert site.audit.url(record) == f"https://{host}:{site.origins.https}/"


def test_single_port_server_is_unchanged(plain: Web) -> None:
    async def one() -> tuple[Origins, list[str]]:
        async with TestWebServer(plain) as server:
            return server.origins, plain.seeds(server.origins)

    origins, seeds = asyncio.run(one())
    assert origins.extra_http == () and origins.https is None
    assert all(url.startswith("http://") and f":{origins.http}/" in url for url in seeds)
