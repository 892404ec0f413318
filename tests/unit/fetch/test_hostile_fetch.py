"""The fetcher against a server that misbehaves on purpose.

Every fault must come back as a FetchResult with its error kind (a kind that says which limit
ended it) and within a bounded amount of memory, while fetches from a well-behaved host on the
same Fetcher go on undisturbed. The server runs on the test's own event loop, on 127.0.0.1.
Nothing here is timed: the order of events shows what waited for what.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import random
import socket
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.abc import AbstractResolver

from gossamer.fetch.fetcher import ROBOTS_MAX_BYTES, Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.robots import lasting, parse_robots
from gossamer.testweb.hostile import (
    BAD_SCHEMES,
    CALM_TARGETS,
    HOSTILE_RESOLVE,
    LOOPBACK_HOSTS,
    HostileServer,
    head,
)
from gossamer.testweb.hostile.cases import CAFE
from gossamer.urls import canonical_link

from .loopback import StubResolver

SAMPLES = Path(__file__).resolve().parents[2] / "conformance" / "compression"
# A read timeout well above the 0.05 s between slowloris bytes, so that a stall of a loaded
# machine cannot pass for one; the total limit is what must end those cases.
LIMITS = FetchLimits(
    connect_timeout=1.0,
    read_timeout=0.8,
    total_timeout=1.5,
    max_body=1_000_000,
    max_decoded=2_000_000,
    keep_types=("text/html",),
)
# Peak of traced Python allocations while one case runs, server included. The caps above allow
# 1 MB read and 2 MB decoded (measured peaks: 0.3 to 4.2 MB, the bombs highest); an uncapped
# read of the endless cases would pass 50 MB within the time limit.
MEMORY_BOUND = 8_000_000
# Cases the server never finishes: only the fetcher's read or total time limit ends them.
HELD_OPEN = {"slow-headers", "slow-body", "silent"}

Scenario = Callable[[HostileServer, Fetcher], Awaitable[None]]


def run(
    scenario: Scenario,
    *,
    rules: tuple[str, ...] = (HOSTILE_RESOLVE,),
    allow_private: bool = False,
    system_resolver: AbstractResolver | None = None,
    limits: FetchLimits = LIMITS,
) -> None:
    async def main() -> None:
        async with (
            HostileServer(samples=SAMPLES) as server,
            Fetcher(
                user_agent="gossamer-test/1.0",
                limits=limits,
                resolve=tuple(parse_resolve(rule) for rule in rules),
                allow_private=allow_private,
                connections=16,
                system_resolver=system_resolver,
            ) as fetcher,
        ):
            await scenario(server, fetcher)

    asyncio.run(main())


TRANSPORT_CASES = [
    ("slow-headers", {"total_timeout"}),  # bytes keep coming, so only the total limit ends it
    ("slow-body", {"total_timeout"}),
    ("silent", {"timeout"}),
    ("endless-headers", {"bad_response"}),
    ("long-header", {"bad_response"}),
    ("length-long", {"bad_body"}),
    ("length-short", {"bad_response"}),  # the surplus is read as the start of a response
    ("bad-chunked", {"bad_response"}),
    ("endless-chunked", {"too_large"}),
    ("reset", {"bad_body", "connection_reset"}),  # which one depends on when the RST lands
    ("garbage", {"bad_response"}),
    ("huge-declared", {"too_large"}),
    ("huge-stream", {"too_large"}),
    ("bomb-gzip", {"decompression_bomb"}),
    ("bomb-deflate", {"decompression_bomb"}),
    ("bomb-br", {"decompression_bomb"}),
    ("bomb-zstd", {"decompression_bomb"}),
]


@pytest.mark.parametrize(("case", "kinds"), TRANSPORT_CASES)
def test_a_misbehaving_server_becomes_a_bounded_result(case: str, kinds: set[str]) -> None:
    if case.startswith("bomb") and not SAMPLES.is_dir():
        pytest.skip(f"compression samples not found at {SAMPLES} (vendored in tests/conformance)")

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        tracemalloc.start()
        try:
            hostile = asyncio.create_task(fetcher.fetch(server.url(case)))
            for target in CALM_TARGETS[:4]:
                calm = await fetcher.fetch(server.url("calm", target))
                assert (calm.status, calm.error) == (200, "")
            # The calm host's four fetches did not wait for the hostile one to end.
            calm_first = not hostile.done()
            result = await hostile
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert result.error in kinds, result.error_detail
        assert result.url == server.url(case)
        assert len(result.body) <= LIMITS.max_body
        assert len(result.content) <= LIMITS.max_decoded
        assert peak < MEMORY_BOUND, f"peak {peak} bytes"
        if case in HELD_OPEN:
            assert calm_first, f"the calm host waited for {case}"
        assert len(server.hits(case)) == 1  # no retries inside the fetcher

    run(scenario)


def test_bodies_that_fail_to_decode_are_recorded() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(f"compression samples not found at {SAMPLES} (vendored in tests/conformance)")

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        for target in ("/crc.html", "/eof.html", "/plain.html"):
            result = await fetcher.fetch(server.url("bad-gzip", target))
            assert (result.status, result.error, result.content) == (200, "bad_encoding", b"")
            assert result.body  # the bytes as received stay available for the archive

    run(scenario)


def test_redirect_to_a_loopback_literal_is_refused_before_connecting() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        for host in LOOPBACK_HOSTS:
            result = await fetcher.fetch(f"http://{host}:{server.port}/admin")
            assert (result.status, result.error) == (0, "blocked_address"), host
        # A robots.txt redirect chain is checked at every hop, too.
        hops = await fetcher.fetch_robots(server.url("redirect-loopback", "/to/127.0.0.1"))
        assert [(hop.status, hop.error) for hop in hops] == [(302, ""), (0, "blocked_address")]
        assert [hit.host for hit in server.hits()] == ["redirect-loopback.hostile.test"]

    run(scenario)


def test_a_name_that_resolves_to_loopback_is_refused_after_dns() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        result = await fetcher.fetch(f"http://rebound.example:{server.port}/admin")
        assert (result.status, result.error) == (0, "blocked_address")
        assert server.hits() == []

    run(scenario, system_resolver=StubResolver({"rebound.example": "127.0.0.1"}))


def test_private_addresses_need_an_explicit_opt_in() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        result = await fetcher.fetch(f"http://127.0.0.1:{server.port}/admin")
        assert (result.status, result.error) == (200, "")

    run(scenario, allow_private=True)
    run(scenario, rules=(HOSTILE_RESOLVE, "127.0.0.1:127.0.0.1"))


@pytest.mark.parametrize("url", BAD_SCHEMES)
def test_non_http_schemes_are_never_fetched(url: str) -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        result = await fetcher.fetch(url)
        assert (result.status, result.error) == (0, "bad_scheme")
        assert server.hits() == []

    run(scenario)


def test_dns_failures_are_recorded() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        result = await fetcher.fetch(f"http://nowhere.example:{server.port}/")
        assert (result.status, result.error) == (0, "dns")
        # A label over 63 octets fails inside the system resolver, before any query is sent.
        overlong = await fetcher.fetch(f"http://{'a' * 64}.example:{server.port}/")
        assert (overlong.status, overlong.error) == (0, "dns")

    run(scenario, system_resolver=StubResolver({}))
    run(scenario)


def test_refused_connections_and_tls_failures_are_recorded() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        refused = await fetcher.fetch(f"http://refused.hostile.test:{closed}/")
        assert (refused.status, refused.error) == (0, "connection_refused")
        # The hostile port speaks plain HTTP: a TLS handshake with it fails.
        tls = await fetcher.fetch(server.url("calm", scheme="https"))
        assert (tls.status, tls.error) == (0, "tls")

    run(scenario)


def test_huge_robots_txt_is_cut_at_500_kib_and_still_used() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        tracemalloc.start()
        try:
            (hop,) = await fetcher.fetch_robots(server.url("robots-huge", "/robots.txt"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (hop.status, hop.error, hop.truncated) == (200, "too_large", True)
        # Cut at the last line end within 500 KiB: the padding line the cap falls in is gone.
        assert ROBOTS_MAX_BYTES - 1030 < len(hop.content) <= ROBOTS_MAX_BYTES
        assert hop.content.endswith(b"padding \n")
        rules = parse_robots(hop.content, "gossamer")
        assert not rules.is_allowed("/early/a.html")
        assert rules.is_allowed("/late/a.html")  # beyond 500 KiB: never read
        assert peak < MEMORY_BOUND

    run(scenario)


def test_compressed_robots_txt_bomb_keeps_its_first_500_kib() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(f"compression samples not found at {SAMPLES} (vendored in tests/conformance)")
    bomb = (SAMPLES / "bomb-gzip.bin").read_bytes()
    fields = [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")]
    reply = head(200, [*fields, ("Content-Length", str(len(bomb)))]) + bomb

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        server.raw["robots-gz"] = reply
        (hop,) = await fetcher.fetch_robots(server.url("robots-gz", "/robots.txt"))
        # The body came whole; its decoded form was cut at the cap, and at a line end.
        assert (hop.status, hop.error, hop.truncated) == (200, "too_large", False)
        assert ROBOTS_MAX_BYTES - 100 < len(hop.content) <= ROBOTS_MAX_BYTES
        assert hop.content.endswith(b"\n")

    run(scenario)


def test_robots_txt_redirected_to_another_host_is_followed() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        hops = await fetcher.fetch_robots(server.url("robots-redirect", "/robots.txt"))
        assert [hop.status for hop in hops] == [301, 200]
        assert hops[-1].url == server.url("robots-target", "/rules.txt")
        assert not parse_robots(hops[-1].content, "gossamer").is_allowed("/private/a.html")

    run(scenario)


def test_a_compressed_page_cut_at_the_cap_is_too_large_not_corrupt() -> None:
    # Incompressible bytes, so the gzip stream itself is larger than max_body.
    body = gzip.compress(random.Random(1).randbytes(2 * LIMITS.max_body), mtime=0)
    # No Content-Length (the body ends when the connection does), so the fetcher must read it.
    fields = [("Content-Type", "text/html"), ("Content-Encoding", "gzip"), ("Connection", "close")]
    reply = head(200, fields) + body

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        server.raw["cut-gzip"] = reply
        result = await fetcher.fetch(server.url("cut-gzip"))
        assert (result.status, result.error, result.truncated) == (200, "too_large", True)
        assert len(result.body) == LIMITS.max_body

    run(scenario)


# -- what servers really send (issue 26) ----------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "outcome"),
    [("robots-gzip-cut", (200, "bad_encoding")), ("robots-plain-cut", (0, "bad_body"))],
)
def test_a_robots_txt_cut_by_the_network_is_unavailable(
    case: str, outcome: tuple[int, str]
) -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        (hop,) = await fetcher.fetch_robots(server.url(case, "/robots.txt"))
        assert (hop.status, hop.error) == outcome
        assert hop.content == b""  # never "Allow: /private/", the half of a rule
        assert not lasting(hop.status, hop.error)  # unavailable: disallow all, ask again

    run(scenario)


def test_a_compressed_robots_txt_cut_by_our_cap_keeps_whole_lines() -> None:
    # Incompressible lines: the gzip stream is larger than the cap, so the fetcher cuts it.
    rng = random.Random(2)
    lines = [b"User-agent: *", b"Disallow: /early/"]
    lines += [b"Disallow: /" + rng.randbytes(40).hex().encode() for _ in range(12_000)]
    body = gzip.compress(b"\n".join(lines) + b"\n", mtime=0)
    assert len(body) > ROBOTS_MAX_BYTES
    fields = [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")]
    reply = head(200, [*fields, ("Content-Length", str(len(body)))]) + body

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        server.raw["robots-big-gz"] = reply
        (hop,) = await fetcher.fetch_robots(server.url("robots-big-gz", "/robots.txt"))
        assert (hop.status, hop.error, hop.truncated) == (200, "too_large", True)
        assert hop.content.endswith(b"\n")
        assert all(len(line) == 91 for line in hop.content.splitlines()[2:])  # none cut
        assert lasting(hop.status, hop.error)
        assert not parse_robots(hop.content, "gossamer").is_allowed("/early/a.html")

    run(scenario)


def test_raw_utf8_in_location_is_read_as_utf8() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        moved = await fetcher.fetch(server.url("location-utf8", "/move"))
        assert moved.header("Location") == CAFE
        assert canonical_link(CAFE, moved.url) == server.url("location-utf8", "/caf%C3%A9")
        # The bytes stay as sent, one character per byte, for the archive.
        assert ("Location", CAFE.encode().decode("latin-1")) in moved.response_headers
        # robots.txt redirects are followed by the fetcher itself: the same reading.
        hops = await fetcher.fetch_robots(server.url("location-utf8", "/robots.txt"))
        assert [(hop.status, hop.url) for hop in hops] == [
            (301, server.url("location-utf8", "/robots.txt")),
            (200, server.url("location-utf8", "/r%C3%A8gles.txt")),
        ]
        assert not parse_robots(hops[-1].content, "gossamer").is_allowed("/private/a.html")

    run(scenario)


def test_a_body_without_a_type_is_read_and_sniffed() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        for target in ("/", "/a.html"):
            page = await fetcher.fetch(server.url("no-type", target))
            assert (page.status, page.error, page.content_type) == (200, "", "text/html")
            assert page.content and page.header("Content-Type") is None
        binary = await fetcher.fetch(server.url("no-type", "/data.bin"))
        assert (binary.error, binary.content_type) == ("skipped_type", "application/octet-stream")
        assert (binary.skipped_body, binary.body) == (True, b"")  # as if it had said so

    run(scenario)


def test_sniffing_reads_the_decoded_body_and_obeys_nosniff() -> None:
    markup = b"<html><body><a href=/x>x</a></body></html>"
    packed = gzip.compress(markup, mtime=0)
    gzipped = head(200, [("Content-Encoding", "gzip"), ("Content-Length", str(len(packed)))])
    nosniff = [("X-Content-Type-Options", "nosniff"), ("Content-Length", str(len(markup)))]

    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        server.raw["untyped-gz"] = gzipped + packed
        server.raw["nosniff"] = head(200, nosniff) + markup
        page = await fetcher.fetch(server.url("untyped-gz"))
        assert (page.error, page.content_type, page.content) == ("", "text/html", markup)
        kept_out = await fetcher.fetch(server.url("nosniff"))
        assert (kept_out.error, kept_out.content_type) == ("skipped_type", "text/plain")

    run(scenario)


def test_a_pdf_labelled_html_is_a_pdf() -> None:
    async def scenario(server: HostileServer, fetcher: Fetcher) -> None:
        result = await fetcher.fetch(server.url("pdf-as-html"))
        assert result.header("Content-Type") == "text/html; charset=utf-8"  # as sent
        if "application/pdf" in fetcher_types:
            assert (result.error, result.content_type) == ("", "application/pdf")
            assert result.content.startswith(b"%PDF-")
        else:  # PDFs not kept: the page is skipped, as one labelled a PDF would be
            assert (result.error, result.content_type) == ("skipped_type", "application/pdf")

    fetcher_types: tuple[str, ...] = LIMITS.keep_types
    run(scenario)
    fetcher_types = ("text/html", "application/pdf")
    run(scenario, limits=dataclasses.replace(LIMITS, keep_types=fetcher_types))
