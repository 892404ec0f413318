"""Cookies, against a real loopback server: a jar per host, a Netscape file to start from, no
cookie ever sent to a host that did not set it, and none in the recorded request headers
unless asked for."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp import web

from gossamer.errors import ConfigError
from gossamer.fetch.cookies import CookieJars, cookie_file_problem, matching, read_cookie_file
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.fetch.result import FetchResult

from .loopback import serve

LIMITS = FetchLimits(5.0, 5.0, 10.0, 1_000_000, 2_000_000, ("text/html",))
RULES = (parse_resolve("*.cookie.test:127.0.0.1"), parse_resolve("*.co.test:127.0.0.1"))


def _app(seen: list[tuple[str, str, str]]) -> web.Application:
    """Records (host, path, Cookie); /set sets a host cookie and one claiming the parent
    domain, /login sets a session on its redirect."""

    async def handle(request: web.Request) -> web.Response:
        host = request.host.rsplit(":", 1)[0]
        seen.append((host, request.path, request.headers.get("Cookie", "")))
        if request.path == "/set":
            response = web.Response(text="<p>set</p>", content_type="text/html")
            response.headers.add("Set-Cookie", "own=1; Path=/")
            parent = host.split(".", 1)[1]
            response.headers.add("Set-Cookie", f"wide=2; Domain={parent}; Path=/")
            return response
        if request.path == "/login":
            raise web.HTTPFound("/in", headers={"Set-Cookie": "session=ok; Path=/; HttpOnly"})
        return web.Response(text="<p>page</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


async def _fetch_all(
    jars: CookieJars | None, urls: list[str], *, record: bool = False
) -> tuple[list[tuple[str, str, str]], list[FetchResult]]:
    seen: list[tuple[str, str, str]] = []
    async with serve(_app(seen)) as port:
        fetcher = Fetcher(
            user_agent="cookietest/1",
            limits=LIMITS,
            resolve=RULES,
            allow_private=False,
            connections=4,
            cookies=jars,
            record_cookies=record,
        )
        async with fetcher:
            results = [await fetcher.fetch(url.format(port=port)) for url in urls]
    return seen, results


def test_a_cookie_goes_back_only_to_the_host_that_set_it() -> None:
    """Even one set for the parent domain (as a site under a public suffix could) stays with
    the host that set it."""
    jars = CookieJars()
    urls = [
        "http://a.co.test:{port}/set",
        "http://a.co.test:{port}/again",
        "http://b.co.test:{port}/page",
        "http://co.test:{port}/page",
    ]
    seen, results = asyncio.run(_fetch_all(jars, urls))
    assert [result.status for result in results] == [200] * 4
    cookies = {(host, path): cookie for host, path, cookie in seen}
    assert sorted(cookies[("a.co.test", "/again")].split("; ")) == ["own=1", "wide=2"]
    assert cookies[("b.co.test", "/page")] == ""
    assert cookies[("co.test", "/page")] == ""
    assert jars.hosts() == ["a.co.test"]


def test_a_session_set_on_a_redirect_is_sent_next_and_not_recorded() -> None:
    seen, results = asyncio.run(
        _fetch_all(
            CookieJars(),
            ["http://www.cookie.test:{port}/login", "http://www.cookie.test:{port}/in"],
        )
    )
    assert results[0].status == 302
    assert seen[1][2] == "session=ok"
    assert all(name.lower() != "cookie" for name, _ in results[1].request_headers)


def test_recorded_request_headers_keep_the_cookie_when_asked() -> None:
    _, results = asyncio.run(
        _fetch_all(
            CookieJars(),
            ["http://www.cookie.test:{port}/login", "http://www.cookie.test:{port}/in"],
            record=True,
        )
    )
    assert ("Cookie", "session=ok") in results[1].request_headers


def test_without_jars_no_cookie_is_sent_or_kept() -> None:
    seen, _ = asyncio.run(
        _fetch_all(
            None, ["http://www.cookie.test:{port}/login", "http://www.cookie.test:{port}/in"]
        )
    )
    assert [cookie for _, _, cookie in seen] == ["", ""]


def _netscape(path: Path, *lines: str) -> Path:
    path.write_text("# Netscape HTTP Cookie File\n" + "".join(f"{line}\n" for line in lines))
    return path


def test_a_cookie_file_seeds_the_hosts_it_names(tmp_path: Path) -> None:
    cookies = read_cookie_file(
        str(
            _netscape(
                tmp_path / "cookies.txt",
                "www.cookie.test\tFALSE\t/\tFALSE\t0\thost_only\t1",
                ".cookie.test\tTRUE\t/\tFALSE\t0\tdomain_wide\t2",
                "#HttpOnly_www.cookie.test\tFALSE\t/private\tFALSE\t0\tpathed\t3",
                "www.cookie.test\tFALSE\t/\tFALSE\t1\texpired\t4",
            )
        )
    )
    urls = [
        "http://www.cookie.test:{port}/",
        "http://www.cookie.test:{port}/private/x",
        "http://shop.cookie.test:{port}/",
        "http://a.co.test:{port}/",
    ]
    seen, _ = asyncio.run(_fetch_all(CookieJars(given=matching(cookies)), urls))
    sent = [sorted(filter(None, cookie.split("; "))) for _, _, cookie in seen]
    assert sent == [
        ["domain_wide=2", "host_only=1"],
        ["domain_wide=2", "host_only=1", "pathed=3"],
        ["domain_wide=2"],
        [],
    ]


def test_a_host_can_be_left_without_cookies() -> None:
    jars = CookieJars(keep=lambda host: host != "www.cookie.test")
    seen, _ = asyncio.run(
        _fetch_all(
            jars, ["http://www.cookie.test:{port}/login", "http://www.cookie.test:{port}/in"]
        )
    )
    assert seen[1][2] == ""
    assert jars.hosts() == []


def test_jars_beyond_the_limit_drop_the_least_recent_host() -> None:
    async def scenario() -> list[str]:
        from yarl import URL  # noqa: PLC0415

        jars = CookieJars(max_hosts=2)
        for host in ("a.test", "b.test", "a.test", "c.test"):
            jars.update(URL(f"http://{host}/"), ["k=v"])
        return jars.hosts()

    assert asyncio.run(scenario()) == ["a.test", "c.test"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not a cookie file\n", "Netscape cookie format"),
        (None, "No such file"),
    ],
)
def test_an_unusable_cookie_file_is_one_config_error(
    tmp_path: Path, text: str | None, problem: str
) -> None:
    path = tmp_path / "cookies.txt"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        read_cookie_file(str(path))
    found = cookie_file_problem(str(path))
    assert found is not None and problem in found
