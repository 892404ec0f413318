"""Every answer carries the security headers, refused parameters and faults included, and a
UI on loopback answers only to loopback host names (DNS rebinding)."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from gossamer.web import make_app
from gossamer.web.app import RECORDS
from gossamer.web.guard import is_loopback

from .rough_crawl import FILLERS
from .served import Client, assert_secured, serve_and_check

# str.isdigit() accepts the first three, which int() refuses (a 500 once); int() accepts the
# Arabic-Indic one; 5,000 digits are a CPU bill. The rest are plainly not page numbers.
BAD_PAGES = ["\u00b2", "\u2460", "1" * 5000, "\u0661", "0", "1001", "00001", "-1", "", "1e3", " 1"]


@pytest.mark.parametrize("page", BAD_PAGES)
def test_a_bad_page_number_is_a_400_with_the_headers(rough: Path, page: str) -> None:
    async def check(client: Client) -> None:
        response = await client.get("/search", params={"q": "filler", "page": page})
        assert response.status == 400
        assert_secured(response.headers)
        assert "page must be a number from 1 to 1000" in await response.text()

    serve_and_check(rough, check)


def test_a_page_past_the_last_one_shows_the_last_one(rough: Path) -> None:
    def shown(page: str) -> list[str]:
        return re.findall(r'<div class="url">([^<]*)</div>', page)

    async def check(client: Client) -> None:
        last = await (await client.get("/search", params={"q": "filler", "page": "2"})).text()
        assert "page 2 of 2" in last
        assert len(shown(last)) == FILLERS - 30
        for page in ("3", "1000", "0002"):
            response = await client.get("/search", params={"q": "filler", "page": page})
            assert response.status == 200
            text = await response.text()
            assert "page 2 of 2" in text
            assert shown(text) == shown(last)
            assert 'rel="prev"' in text and 'rel="next"' not in text

    serve_and_check(rough, check)


def test_every_error_carries_the_headers(rough: Path) -> None:
    async def check(client: Client) -> None:
        answers = [
            await client.get("/nothing-here"),
            await client.get("/info", params={"url": "http://nowhere.test/"}),
            await client.get("/cached", params={"url": "http://nowhere.test/"}),
            await client.get("/cached/raw", params={"url": "http://nowhere.test/"}),
            await client.post("/search", data={"q": "filler"}),
            await client.get("/search", params={"q": "x" * 1001}),
        ]
        assert [answer.status for answer in answers] == [404, 404, 404, 404, 405, 400]
        for answer in answers:
            assert_secured(answer.headers)
            assert answer.content_type == "text/html"

    serve_and_check(rough, check)


def test_a_fault_is_a_500_page_with_the_headers_and_no_insides(
    rough: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(rough)
    app[RECORDS].close()  # crawl.db gone from under the UI: every read of it fails

    async def check(client: Client) -> None:
        response = await client.get("/info", params={"url": "http://r.test/about"})
        assert response.status == 500
        assert_secured(response.headers)
        page = await response.text()
        assert "the server log says why" in page
        assert "Traceback" not in page and "sqlite" not in page.lower()
        # The rest of the UI still answers.
        assert (await client.get("/search", params={"q": "filler"})).status == 200

    with caplog.at_level(logging.ERROR, logger="gossamer.web.guard"):
        serve_and_check(app, check)
    [record] = [r for r in caplog.records if r.name == "gossamer.web.guard"]
    assert record.exc_info is not None
    assert "GET /info" in record.getMessage()


ACCEPTED_HOSTS = [
    "localhost",
    "localhost:8000",
    "LOCALHOST:1",
    "127.0.0.1",
    "127.0.0.1:8000",
    "127.9.8.7:80",
    "127.1",
    "[::1]",
    "[::1]:8000",
    "[0:0:0:0:0:0:0:1]:8000",
]
REFUSED_HOSTS = [
    "evil.test",
    "evil.test:8000",
    "127.0.0.1.evil.test",
    "localhost.evil.test",
    "evil@127.0.0.1",
    "127.0.0.1/x",
    "[::2]",
    "0.0.0.0",
    "192.168.1.1:8000",
    "localhost:notaport",
]


def test_on_loopback_only_loopback_host_names_are_served(rough: Path) -> None:
    async def check(client: Client) -> None:
        for host in ACCEPTED_HOSTS:
            response = await client.get("/", headers={"Host": host})
            assert response.status == 200, host
        for host in REFUSED_HOSTS:
            response = await client.get("/search?q=filler", headers={"Host": host})
            assert response.status == 421, host
            assert_secured(response.headers)
            assert "answers only to localhost" in await response.text()
            assert "Filler" not in await response.text()
        # No Host header at all (HTTP/1.0 allows that): refused too.
        reader, writer = await asyncio.open_connection(client.host, client.port)
        writer.write(b"GET / HTTP/1.0\r\n\r\n")
        await writer.drain()
        answer = await reader.read()
        writer.close()
        assert answer.startswith(b"HTTP/1.0 421 ")
        assert b"\r\nX-Content-Type-Options: nosniff\r\n" in answer

    serve_and_check(make_app(rough, bind="127.0.0.1"), check)


def test_bound_elsewhere_any_host_name_is_served(rough: Path) -> None:
    async def check(client: Client) -> None:
        response = await client.get("/", headers={"Host": "search.example.org"})
        assert response.status == 200
        assert_secured(response.headers)

    serve_and_check(make_app(rough, bind="0.0.0.0"), check)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.200.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("example.org", False),
    ],
)
def test_which_bind_addresses_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
