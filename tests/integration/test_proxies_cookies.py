"""Issue 30, proxies and cookies, with real parts: Debian's tinyproxy on loopback and a site
behind a login (``routes_rig.py``).

The site tells requests that came through the proxy by the ``Via`` header tinyproxy adds; the
proxy's own log shows the CONNECT of an https target. Judged: a crawl through the proxy with
a cookie file reaches the pages behind the login in every mode, while a host named in
``no_proxy`` is asked directly and never gets the cookie; an https target goes through
CONNECT; a proxy that refuses is counted as ``proxy_error`` and not held against the host; a
proxy's password reaches the proxy but no file of the crawl; the SSRF guard still judges the
target, before the proxy is asked; bad proxy or cookie settings are one error line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.cli import main
from gossamer.config import FetchConfig, PolitenessConfig, ScopeConfig, SiteConfig
from gossamer.engine import Crawler, CrawlOutcome
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.seeds import parse_seeds

from .conftest import local_config
from .modes import Mode, mode_fixture
from .routes_rig import AVAILABLE, SESSION, LoginSite, Tinyproxy, cookie_file, free_port
from .routes_rig import MISSING as NO_TINYPROXY

needs_proxy = pytest.mark.skipif(not AVAILABLE, reason=NO_TINYPROXY)

# The proxy resolves target names itself, so the proxied host is one it can resolve; the
# other host is reached directly through a --resolve entry, as no_proxy says.
PROXIED, DIRECT = "localhost", "other.test"
RESOLVE = (f"{PROXIED}:127.0.0.1", f"{DIRECT}:127.0.0.1")
CONFIG = "[politeness]\ndelay = 0.0\nrobots_wait = 0.3\n[scope]\nsitemaps = false\n"
_MEMBERS = {"/members/0", "/members/1", "/members/2"}
POLITE = PolitenessConfig(delay=0.0, robots_retry_delay=0.2, robots_retries=1, robots_wait=0.3)


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


@pytest.fixture
def site() -> Iterator[LoginSite]:
    with LoginSite() as running:
        running.links[PROXIED, "/"] = ["/members/0", running.url(DIRECT, "/")]
        yield running


def _seeds(tmp: Path, *urls: str) -> Path:
    seeds = tmp / "seeds.txt"
    seeds.write_text("".join(f"{url}\n" for url in urls), encoding="utf-8")
    return seeds


def _crawl(tmp: Path, urls: list[str], fetch: FetchConfig, **changes: object) -> CrawlOutcome:
    seeds = _seeds(tmp, *urls)
    config = local_config(
        seeds,
        tmp / "out",
        resolve=RESOLVE,
        politeness=POLITE,
        fetch=fetch,
        scope=ScopeConfig(max_depth=25, sitemaps=False),
    )
    config = dataclasses.replace(config, **changes)  # type: ignore[arg-type]
    return asyncio.run(Crawler(config, parse_seeds(seeds.read_text())).run())


@needs_proxy
@pytest.mark.parametrize("mode", ["one", "workers", "shared"], indirect=True)
def test_a_login_crawl_through_the_proxy_in_every_mode(
    mode: Mode, site: LoginSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Tinyproxy(tmp_path / "proxy") as proxy:
        # The environment, as a user behind a proxy has it; every process inherits it.
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", DIRECT)
        config = tmp_path / "c.toml"
        config.write_text(CONFIG, encoding="utf-8")
        cookies = cookie_file(tmp_path / "cookies.txt", PROXIED)
        flags = ["--config", config, "--cookies", cookies]
        for entry in RESOLVE:
            flags += ["--resolve", entry]
        finished = mode.run(_seeds(tmp_path, site.url(PROXIED)), tmp_path / "out", *flags)
    assert set(finished.codes) == {0}, finished.stderr
    proxied, direct = site.by_host(PROXIED), site.by_host(DIRECT)
    members = {seen.path for seen in proxied if seen.path.startswith("/members/")}
    assert members == _MEMBERS, proxied
    assert all("tinyproxy" in seen.via and seen.cookie == SESSION for seen in proxied)
    assert {seen.path for seen in direct} == {"/robots.txt", "/"}
    assert all(seen.via == "" and seen.cookie == "" for seen in direct), direct


@needs_proxy
def test_an_https_target_goes_through_connect(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    authority = trustme.CA()
    server = authority.issue_cert(PROXIED).configure_cert
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    import ssl  # noqa: PLC0415

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server(context)
    with LoginSite(context) as tls_site, Tinyproxy(tmp_path / "proxy") as proxy:
        tls_site.links[PROXIED, "/"] = ["/open"]
        fetch = FetchConfig(proxy=proxy.url, ca_file=str(ca_file))
        outcome = _crawl(tmp_path, [tls_site.url(PROXIED, scheme="https")], fetch)
        requests = proxy.requests()
    assert outcome.stats.pages == 2
    assert f"CONNECT {PROXIED}:{tls_site.port} HTTP/1.1" in requests
    assert {seen.path for seen in tls_site.seen} == {"/robots.txt", "/", "/open"}


@needs_proxy
def test_a_sites_proxy_and_cookie_file_hold_for_its_hosts_only(
    site: LoginSite, tmp_path: Path
) -> None:
    cookies = cookie_file(tmp_path / "cookies.txt", PROXIED)
    with Tinyproxy(tmp_path / "proxy") as proxy:
        table = SiteConfig(match=PROXIED, proxy=proxy.url, cookies=str(cookies))
        _crawl(tmp_path, [site.url(PROXIED)], FetchConfig(proxy="none"), sites=(table,))
    proxied, direct = site.by_host(PROXIED), site.by_host(DIRECT)
    assert {seen.path for seen in proxied} == {"/robots.txt", "/", *_MEMBERS}
    assert all("tinyproxy" in seen.via and seen.cookie == SESSION for seen in proxied)
    assert direct and all(seen.via == "" and seen.cookie == "" for seen in direct)


def test_a_refusing_proxy_is_the_routes_fault_and_the_crawl_goes_on(
    site: LoginSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("no_proxy", DIRECT)
    refusing = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    outcome = _crawl(tmp_path, [site.url(PROXIED), site.url(DIRECT)], FetchConfig(proxy=refusing))
    stats = outcome.stats
    assert stats.errors["proxy_error"] >= 1
    assert stats.host(PROXIED).errors == 0  # not the host's fault
    assert stats.host(PROXIED).robots_status == "deferred (proxy_error)"
    assert site.by_host(PROXIED) == []
    assert {seen.path for seen in site.by_host(DIRECT)} == {"/robots.txt", "/"}


@needs_proxy
def test_a_proxy_password_reaches_the_proxy_and_no_file(
    site: LoginSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Recorded, so the password the CLI puts there is gone after the test.
    monkeypatch.setenv("GOSSAMER_PROXY_PASSWORD", "")
    monkeypatch.delenv("GOSSAMER_PROXY_PASSWORD")
    secret = "pa55-w0rd"
    out = tmp_path / "out"
    with Tinyproxy(tmp_path / "proxy", auth=("alice", secret)) as proxy:
        address = proxy.url.removeprefix("http://")
        status = main([
            "crawl", str(_seeds(tmp_path, site.url(PROXIED))), "--out", str(out),
            "--proxy", f"http://alice:{secret}@{address}", "--workers", "1", "--no-progress",
            "--resolve", RESOLVE[0], "--config", str(_config(tmp_path)), "--warc-cookies",
        ])  # fmt: skip
    assert status == 0
    shown = capsys.readouterr()
    assert secret not in shown.out + shown.err
    assert site.by_host(PROXIED) and all("tinyproxy" in s.via for s in site.by_host(PROXIED))
    saved = json.loads((out / "crawl.json").read_text())
    assert saved["config"]["fetch"]["proxy"] == f"http://alice@{address}"
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            assert secret.encode() not in data, path
            assert b"Proxy-Authorization" not in data, path


@needs_proxy
def test_a_wrong_password_and_a_guarded_target_are_refused(site: LoginSite, tmp_path: Path) -> None:
    """407 is the route's fault; a target the guard refuses is never sent to the proxy."""
    limits = FetchLimits(5.0, 5.0, 10.0, 100_000, 200_000, ("text/html",))

    async def scenario(proxy: Tinyproxy) -> list[str]:
        wrong = proxy.url.replace("http://", "http://alice:wrong@")
        fetcher = Fetcher(
            user_agent="t/1",
            limits=limits,
            resolve=(parse_resolve(RESOLVE[0]),),
            allow_private=False,
            connections=2,
            proxy_for=lambda url: wrong,
        )
        async with fetcher:
            # tinyproxy refuses with 401 where RFC 9110 says 407; through CONNECT any refusal
            # is the route's fault.
            denied = await fetcher.fetch(site.url(PROXIED, scheme="https"))
            assert "wrong" not in denied.error_detail
            guarded = [
                await fetcher.fetch(url)
                for url in (site.url("127.0.0.1"), site.url("localhost.localdomain"))
            ]
        return [denied.error, *(result.error for result in guarded)]

    with Tinyproxy(tmp_path / "proxy", auth=("alice", "right")) as proxy:
        errors = asyncio.run(scenario(proxy))
        requests = proxy.requests()
    assert errors[0] == "proxy_error"
    assert errors[1] == "blocked_address"
    assert errors[2] in {"blocked_address", "dns"}  # refused either way, before the proxy
    assert requests == [f"CONNECT {PROXIED}:{site.port} HTTP/1.1"]


def test_a_login_by_redirect_keeps_its_session_for_that_host_only(
    site: LoginSite, tmp_path: Path
) -> None:
    site.links[PROXIED, "/"] = ["/login", site.url(DIRECT, "/")]
    site.links[DIRECT, "/"] = ["/login"]  # its own session, never the other host's
    outcome = _crawl(tmp_path, [site.url(PROXIED)], FetchConfig(proxy="none"))
    members = [seen for seen in site.by_host(PROXIED) if seen.path.startswith("/members/")]
    assert {seen.path for seen in members} == {
        "/members/",
        "/members/0",
        "/members/1",
        "/members/2",
    }
    assert all(seen.cookie == SESSION for seen in members)
    direct = {seen.path: seen.cookie for seen in site.by_host(DIRECT)}
    assert direct["/"] == direct["/login"] == ""
    assert direct["/members/"] == SESSION  # set by this host's own login
    assert len(site.by_host(DIRECT)) == 7  # robots.txt, /, /login, /members/ and its 3 pages
    assert outcome.stats.pages >= 5
    for warc in (tmp_path / "out").glob("*.warc.gz"):
        assert b"Cookie: " not in gzip.decompress(warc.read_bytes())


def _config(tmp: Path) -> Path:
    path = tmp / "c.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("flags", "env", "said"),
    [
        (["--proxy", "socks5://user:hidden@proxy:1080"], {}, "only to http:// proxies"),
        (["--cookies", "no-such-cookies.txt"], {}, "--cookies names no file"),
        (["--cookies", "cookies.txt", "--no-cookies"], {}, "turns off"),
        ([], {"HTTPS_PROXY": "socks5://proxy:1080"}, "https_proxy"),
        (["--proxy", "http://alice@proxy:3128"], {}, "GOSSAMER_PROXY_PASSWORD"),
        (["--config", "secret.toml"], {}, "fetch.proxy must not hold a password"),
        (["--config", "site.toml", "--no-cookies"], {}, "cookies file needs cookies"),
    ],
)
def test_bad_proxy_and_cookie_settings_are_one_error_line(  # noqa: PLR0917 - fixtures
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    env: dict[str, str],
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOSSAMER_PROXY_PASSWORD", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    _config(tmp_path)
    (tmp_path / "secret.toml").write_text('[fetch]\nproxy = "http://alice:hidden@proxy:3128"\n')
    (tmp_path / "site.toml").write_text('[[site]]\nmatch = "x.test"\ncookies = "cookies.txt"\n')
    cookie_file(tmp_path / "cookies.txt", PROXIED)
    seeds = _seeds(tmp_path, "http://localhost:1/")
    status = main(["crawl", str(seeds), "--out", str(tmp_path / "out"), *flags])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert status == 2
    assert len(errors) == 1 and errors[0].startswith("gossamer: error:"), errors
    assert said in errors[0] and "hidden" not in errors[0]
    assert not (tmp_path / "out").exists()
