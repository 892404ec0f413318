"""Whatever a server sends, the crawl goes on (issue 26): a property test over whole crawls.

One hypothesis example is one crawl, through the real command line in a child process, of
three hosts on :class:`~tests.integration.rawweb.RawWeb`, which answers each URL with the exact
bytes the example drew: status lines valid, unknown, 1xx or garbage; reason phrases in ASCII,
UTF-8, Latin-1 or control bytes; header names and values with odd bytes; Content-Length
missing, wrong, doubled or contradicting; chunked bodies with bad chunks; gzip, zlib, raw
deflate and brotli bodies, whole or cut short; Content-Type missing or odd; Location odd;
bodies with NUL bytes; HTTP/1.0 and 1.1; answers cut off anywhere. A seed page links to every
fuzzed URL, then to one well-formed ("calm") page per host, listed last so that a crawl that
gives up early misses them. After the crawl:

* the command exited 0, with "stopped: exhausted" and no traceback;
* every URL the crawl admitted (``urls.discovered_at`` set: the fuzzed URLs, the calm pages,
  robots.txt, the sitemap guess, redirect targets) has its outcome, a ``pages`` row with a
  status (100-999) or, with status 0, an error kind;
* each calm page is stored: status 200, no error;
* ``crawl.db`` agrees with the WARC files (``archive_checks``) and every WARC file passes
  ``warcio check``.

The same examples run in one process and with ``--workers 2`` (hosts split by hash, the
coordinator forwarding the seed page's links). The profile keeps the cost bounded and the
examples the same on every run; it does not shrink a failure (each shrink step is a crawl),
but the failure message names the URLs and bytes involved. Set ``GOSSAMER_SHRINK=1`` to let
hypothesis shrink, and ``GOSSAMER_EXAMPLES=N`` for more examples, when hunting a bug.
"""

from __future__ import annotations

import gzip
import itertools
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import brotli
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.unit.distributed.redis_rig import MISSING, SERVER, RedisServer

from .archive_checks import assert_pages_match_warc, rows
from .rawweb import RawWeb

# ``warcio check`` (warcio.cli), with one repair: warcio 1.8's "br" decoder sets an attribute on
# brotli.Decompressor, which Google's brotli module refuses (webrecorder/warcio#73), so the
# plain command dies with AttributeError on any WARC holding a response labelled "br",
# whoever wrote it. The adapter gives warcio the decoder shape it expects; digests are checked
# on the stored bytes either way.
WARCIO_CHECK = """
import sys, brotli
from warcio.bufferedreaders import BufferedReader
from warcio.cli import main

class Brotli:
    unused_data = None
    def __init__(self):
        self._decoder = brotli.Decompressor()
    def decompress(self, data):
        return self._decoder.process(data)

BufferedReader.DECOMPRESSORS["br"] = Brotli
main(["check", "-v", *sys.argv[1:]])
"""
DOMAIN = "fuzz.test"
HOSTS = 3
# Politeness for loopback, and every wait a fuzzed answer may ask for (Retry-After, backoff
# after faults) capped far below a second, so an example costs about one crawl's start-up.
CONFIG = """\
[politeness]
delay = 0.0
robots_retry_delay = 0.05
robots_retries = 1
max_retries = 1
max_backoff = 0.05
[fetch]
connect_timeout = 2.0
read_timeout = 2.0
total_timeout = 4.0
max_redirects = 3
"""

settings.register_profile(
    "any-response",
    max_examples=int(os.environ.get("GOSSAMER_EXAMPLES", "4")),
    deadline=None,  # an example is a whole crawl
    derandomize=True,  # the same examples on every run, so CI is stable
    database=None,
    phases=(
        Phase.explicit,
        Phase.generate,
        *((Phase.shrink,) if os.environ.get("GOSSAMER_SHRINK") else ()),
    ),
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # tmp_path: each example makes a folder of its own
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
PROFILE = settings.get_profile("any-response")


# -- what a server may send ---------------------------------------------------------------------
def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


_ascii = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=16).map(str.encode)
_odd = st.one_of(
    st.sampled_from(["Bien reçu", "Não encontrado", "Ошибка", "見つかりません", "✓ ok"]).map(_utf8),
    st.sampled_from(["Bien reçu", "Não encontrado", "Grüße"]).map(lambda s: s.encode("latin-1")),
    st.text(max_size=12).map(_utf8),  # any code point, lone surrogates too
    st.binary(max_size=12),  # control bytes, NUL, CR, LF, 0x80-0xff
)
_version = st.one_of(
    st.sampled_from([b"HTTP/1.1", b"HTTP/1.0"]),
    st.sampled_from([b"HTTP/1.2", b"HTTP/2", b"HTTP/0.9", b"http/1.1", b"HTTP/1.1\x00", b"ICY"]),
)
_status = st.one_of(
    st.sampled_from([200, 200, 203, 204, 206, 301, 302, 303, 307, 308, 304, 400, 404, 410, 451])
    .map(str)
    .map(str.encode),
    st.sampled_from([429, 503, 500]).map(str).map(str.encode),
    st.sampled_from([100, 101, 103, 199, 299, 399, 418, 599, 600, 999]).map(str).map(str.encode),
    st.sampled_from([b"000", b"2OO", b"20", b"2000", b"-1", b"+200", b"0x1", b"", b"200\x00"]),
)
_reason = st.one_of(st.just(b"OK"), st.just(b""), _ascii, _odd)
_eol = st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"\n"])

_NAMES = b"Content-Type Location Retry-After Connection Set-Cookie X-Any Content-Disposition Link"
_header_names = st.one_of(
    st.sampled_from(
        [*_NAMES.split(), b"content-length", b"Content-Encoding", b"Transfer-Encoding"]
    ),
    st.sampled_from([b"X-\xff\xfe", b"X Space", b"", b"X-\x00", b":", b"\xc3\xa9t\xc3\xa9"]),
    st.binary(min_size=1, max_size=8),
)
_header_values = st.one_of(
    st.sampled_from([b"", b"0", b"-1", b"close", b"keep-alive", b"1", b"999999", b"gzip"]),
    _ascii,
    _odd,
    _ascii.map(lambda value: value + b"\r\n folded"),  # obsolete line folding
)
_TYPES = b"text/html text/plain TEXT/HTML application/pdf image/png text/\xffhtml text/html\x00"
_content_type = st.one_of(
    st.sampled_from(_TYPES.split()),
    st.sampled_from([b"utf-8", b"bogus", b"utf-16", b"\xe9", b""]).map(
        lambda charset: b"text/html; charset=" + charset
    ),
    _odd.map(lambda value: b"text/html; charset=" + value),
    _odd,
    st.just(b""),
    st.none(),
)


@dataclass(frozen=True, slots=True)
class Site:
    """The URLs of one example: where the fuzzed answers and the calm pages live."""

    port: int
    hosts: tuple[str, ...]
    fuzzed: tuple[tuple[str, str], ...]  # (host, path) of each fuzzed answer, in link order

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"


def _page(links: list[str], extra: bytes = b"") -> bytes:
    items = "".join(f'<li><a href="{href}">link</a></li>' for href in links)
    return f"<!DOCTYPE html><html><body><ul>{items}</ul>".encode() + extra + b"</body></html>\n"


def calm(body: bytes) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _chunked(body: bytes, pieces: int, end: bytes) -> bytes:
    step = max(1, len(body) // max(1, pieces))
    parts = [body[i : i + step] for i in range(0, len(body), step)]
    return b"".join(f"{len(p):x}".encode() + b"\r\n" + p + b"\r\n" for p in parts) + end


@st.composite
def _body(draw: st.DrawFn, links: list[str]) -> tuple[bytes, list[bytes]]:
    """A body as sent (maybe compressed, maybe cut short) and its Content-Encoding headers."""
    plain = draw(
        st.one_of(
            st.builds(_page, st.just(links), st.binary(max_size=40)),  # NULs, bytes not UTF-8
            st.binary(max_size=200),
            st.just(b""),
            st.just(_page(links, b"<p>again</p>" * 60)),  # compresses well: a cut leaves a stream
        )
    )
    codings: dict[str, Callable[[bytes], bytes]] = {
        "gzip": lambda data: gzip.compress(data, mtime=0),
        "deflate": zlib.compress,
        "raw-deflate": lambda data: zlib.compress(data, wbits=-15),
        "br": brotli.compress,
    }
    coding = draw(st.sampled_from([None, *codings]))
    if coding is None:
        sent = plain
    else:
        sent = codings[coding](plain)
        if draw(st.booleans()):
            sent = sent[: draw(st.integers(0, max(0, len(sent) - 1)))]  # cut short
    said = {None: b"", "raw-deflate": b"deflate"}.get(coding, (coding or "").encode())
    header = draw(
        st.one_of(
            st.just(said),  # the truth
            st.sampled_from([b"gzip", b"br", b"deflate", b"gzip, gzip", b"identity", b"x-nope"]),
        )
    )
    return sent, ([b"Content-Encoding: " + header] if header else [])


def _framing(body: bytes) -> st.SearchStrategy[tuple[list[bytes], bytes]]:
    """Length headers and the body as framed: honest, lying, doubled, chunked, broken."""
    n = len(body)
    cl = b"Content-Length: "
    te = b"Transfer-Encoding: "
    return st.one_of(
        st.just(([cl + str(n).encode()], body)),
        st.just(([], body)),  # read to the end of the connection
        st.integers(1, 500).map(lambda k: ([cl + str(n + k).encode()], body)),  # closed early
        st.integers(1, 50).map(lambda k: ([cl + str(max(0, n - k)).encode()], body)),
        st.just(([cl + str(n).encode(), cl + str(n).encode()], body)),
        st.integers(1, 50).map(lambda k: ([cl + str(n).encode(), cl + str(n + k).encode()], body)),
        st.sampled_from([b"abc", b"-1", b"1e3", b" 5 ", b"99999999999999999999", b"0x10", b""]).map(
            lambda v: ([cl + v], body)
        ),
        st.integers(1, 4).map(lambda k: ([te + b"chunked"], _chunked(body, k, b"0\r\n\r\n"))),
        st.sampled_from([b"zz\r\n", b"", b"0\r\n", b"-1\r\nx\r\n", b"ffffffffffffffff\r\n"]).map(
            lambda end: ([te + b"chunked"], _chunked(body, 2, end))
        ),  # bad or missing end
        st.just(([te + b"chunked", cl + str(n).encode()], _chunked(body, 2, b"0\r\n\r\n"))),
        st.sampled_from([b"gzip, chunked", b"chunked, gzip", b"identity", b"Chunked", b"x"]).map(
            lambda value: ([te + value], _chunked(body, 2, b"0\r\n\r\n"))
        ),
    )


@st.composite
def answer(draw: st.DrawFn, site: Site, host: str) -> bytes:
    """Every byte of one response, then the server hangs up."""
    others = [path for h, path in site.fuzzed if h == host]
    links = ["/calm", draw(st.sampled_from(others))]
    status = draw(_status)
    line = draw(_version) + b" " + status
    reason = draw(st.one_of(_reason, st.none()))  # None: no reason, not even the space
    if reason is not None:
        line += b" " + reason
    eol = draw(_eol)
    headers: list[bytes] = []
    content_type = draw(_content_type)
    if content_type is not None:
        headers.append(b"Content-Type: " + content_type)
    if status.startswith(b"3") or draw(st.integers(0, 9)) == 9:
        target = draw(
            st.one_of(
                st.sampled_from(others).map(str.encode),
                st.sampled_from(["/calm", "p1", "?q=1", "#top", "/caf\u00e9", "/\u65e5\u672c"]).map(
                    _utf8
                ),
                st.sampled_from([b"/caf\xe9", b"", b" ", b"javascript:x()", b"mailto:a@b.c"]),
                # Odd bytes only after "/loc-": however they decode, the target stays on this
                # host (a tab or backslash right after the slash could make "//elsewhere").
                st.binary(max_size=10).map(lambda raw: b"/loc-" + raw),
                st.sampled_from(site.hosts).map(lambda h: site.url(h, "/calm").encode()),
            )
        )
        headers.append(b"Location: " + target)
    if status in (b"429", b"503") or draw(st.integers(0, 9)) == 9:
        wait = [b"0", b"1", b"-1", b"999999", b"Wed, 21 Oct 2099 07:28:00 GMT", b"soon", b""]
        headers.append(b"Retry-After: " + draw(st.sampled_from(wait)))
    body, coding = draw(_body(links))
    lengths, framed = draw(_framing(body))
    extra = draw(st.lists(st.tuples(_header_names, _header_values), max_size=4))
    headers += coding + lengths + [name + b": " + value for name, value in extra]
    headers = draw(st.permutations(headers))
    wire = line + eol + b"".join(h + eol for h in headers) + eol + framed
    if draw(st.integers(0, 5)) == 5:  # the connection drops anywhere, even inside the head
        wire = wire[: draw(st.integers(0, len(wire)))]
    return wire


@st.composite
def examples(draw: st.DrawFn, port: int, names: Iterator[int]) -> tuple[Site, dict[str, bytes]]:
    """One crawl's worth: 16-32 fuzzed answers spread over the hosts, keyed by URL (the crawl
    itself is cheap next to the start of a process, so each example carries many answers)."""
    n = next(names)  # fresh host names each example, so --workers splits them afresh
    hosts = tuple(f"h{k}-e{n}.{DOMAIN}" for k in range(HOSTS))
    count = draw(st.integers(16, 32))
    fuzzed = tuple((hosts[i % HOSTS], f"/r{i}") for i in range(count))
    site = Site(port, hosts, fuzzed)
    return site, {site.url(h, p): draw(answer(site, h)) for h, p in fuzzed}


# -- the crawl ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def web() -> Iterator[RawWeb]:
    with RawWeb() as running:
        yield running


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server for the shared mode; each example's crawl has a name of its own."""
    if SERVER is None:
        pytest.skip(MISSING)
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@dataclass(frozen=True, slots=True)
class Crawl:
    result: subprocess.CompletedProcess[str]
    out: Path


def crawl(web: RawWeb, site: Site, answers: dict[str, bytes], tmp: Path, mode: list[str]) -> Crawl:
    seed = site.url(site.hosts[0], "/")
    calm_urls = [site.url(h, "/calm") for h in site.hosts]
    served = {(h, p): answers[site.url(h, p)] for h, p in site.fuzzed}
    served[(site.hosts[0], "/")] = calm(_page([*answers, *calm_urls]))
    served.update({(h, "/calm"): calm(_page(["/"])) for h in site.hosts})
    web.serve(served)
    tmp.mkdir()
    (tmp / "seeds.txt").write_text(seed + "\n")
    (tmp / "c.toml").write_text(CONFIG)
    out = tmp / "out"
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", "crawl", tmp / "seeds.txt", "--out", out,
         "--resolve", f"*.{DOMAIN}:127.0.0.1", "--config", tmp / "c.toml",
         *mode, "--concurrency", "8", "--no-progress"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    return Crawl(result, out)


def _explain(urls: list[str], answers: dict[str, bytes]) -> str:
    return "\n".join(f"  {url}: {answers.get(url, b'(not fuzzed)')!r}" for url in urls)


_names = itertools.count()
_folders = itertools.count()


@pytest.fixture(params=["one-process", "workers-2", "shared"])
def mode(request: pytest.FixtureRequest) -> list[str]:
    """The crawl's flags for each way of running it (a shared crawl: a worker on Redis)."""
    if request.param == "shared":
        url = request.getfixturevalue("redis_url")
        return ["--frontier", url, "--name", f"any-{next(_names)}"]
    return ["--workers", "1" if request.param == "one-process" else "2"]


@PROFILE
@given(data=st.data())
def test_any_response_leaves_the_crawl_going(
    web: RawWeb, tmp_path: Path, mode: list[str], data: st.DataObject
) -> None:
    site, answers = data.draw(examples(web.port, _names), label="example")
    run = crawl(web, site, answers, tmp_path / f"crawl-{next(_folders)}", mode)
    stderr = run.result.stderr
    assert run.result.returncode == 0, stderr[-4000:]
    assert "Traceback" not in stderr, stderr[-4000:]
    ended = "stopped: finished" if "--frontier" in mode else "stopped: exhausted"
    assert ended in run.result.stdout

    found = rows(run.out, "SELECT url, status, error FROM pages")
    outcome = {str(url): (int(str(status)), error) for url, status, error in found}
    admitted = [
        str(url) for (url,) in rows(run.out, "SELECT url FROM urls WHERE discovered_at IS NOT NULL")
    ]
    missing = sorted(url for url in [*answers, *admitted] if url not in outcome)
    assert not missing, "admitted, never recorded:\n" + _explain(missing, answers)
    # An outcome is an HTTP status (three digits, 100-999: RFC 9110 15) or an error kind; a
    # row with neither (status 0 or 42, no error) says nothing about what the server sent.
    vague = sorted(
        url for url, (status, error) in outcome.items() if not (error or 100 <= status <= 999)
    )
    assert not vague, "no status and no error kind:\n" + _explain(vague, answers)
    for host in site.hosts:
        assert outcome[site.url(host, "/calm")] == (200, None)
    assert outcome[site.url(site.hosts[0], "/")] == (200, None)

    assert_pages_match_warc(run.out)
    warcs = sorted((run.out / "warc").glob("*.warc*"))
    assert warcs
    for path in warcs:
        check = subprocess.run(
            [sys.executable, "-c", WARCIO_CHECK, path], capture_output=True, text=True, check=False
        )
        assert check.returncode == 0, f"{path.name}: {check.stdout[-2000:]}{check.stderr[-2000:]}"
