"""The hostile cases: what each misbehaving host under ``hostile.test`` does, one host a case.

Role in the data flow: none in production. A case is the first label of the host name a
request is for (``slow-body.hostile.test``); :class:`Cases` answers it. The catalogue is in
``Cases.__init__``, one line a case, and ``_SITES`` holds the hosts whose robots.txt and
pages are plain data. Unless a case is about robots.txt, its robots.txt answers 404
(everything allowed). A request for any other host (an IP literal reached through a
redirect, say) is answered too, the way a victim would, so a test can prove it never came.
"""

from __future__ import annotations

import itertools
import random
import socket
import struct
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from gossamer.testweb.hostile.wire import (
    CHUNK,
    HTML,
    TEXT,
    Reader,
    Writer,
    chunks,
    hang,
    head,
    page,
    redirect,
    send,
    stream,
    trickle,
)

__all__ = [
    "BAD_SCHEMES",
    "BOMBS",
    "CALM_TARGETS",
    "HOSTILE_DOMAIN",
    "HOSTILE_RESOLVE",
    "HUGE_BYTES",
    "LOOPBACK_HOSTS",
    "MANY_LINKS",
    "ROBOTS_PADDING",
    "UNRESOLVABLE",
    "Cases",
    "Request",
]

HOSTILE_DOMAIN = "hostile.test"
HOSTILE_RESOLVE = f"*.{HOSTILE_DOMAIN}:127.0.0.1"
CALM_TARGETS = ("/", *(f"/p/{n}.html" for n in range(1, 8)))  # the well-behaved host's pages
MANY_LINKS = 100_000
HUGE_BYTES = 50_000_000  # the Content-Length huge-declared claims, far above any cap
ROBOTS_PADDING = 2 * 1024 * 1024  # robots-huge puts its second rule beyond this
LOOPBACK_HOSTS = ("127.0.0.1", "127.9.9.9", "[::1]", "localhost", "0x7f.1")
BAD_SCHEMES = (
    "ftp://ftp.hostile.test/file.txt",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/html,<h1>hi</h1>",
    "mailto:root@hostile.test",
    "gopher://hostile.test:70/1",
)
# A label over 63 octets: the system resolver refuses it without sending a query.
UNRESOLVABLE = f"http://{'x' * 64}.invalid/"
BOMBS = {"bomb-gzip": "gzip", "bomb-deflate": "deflate", "bomb-br": "br", "bomb-zstd": "zstd"}
_PRIVATE = b"User-agent: *\nDisallow: /private/\n"
# What servers really send (issue 26). The robots.txt the two "-cut" cases mean to send, and
# where the network cuts it: "Allow: /private/" would open the folder the file closes.
CUT_ROBOTS = b"User-agent: *\nDisallow: /private/\nAllow: /private/public/\n"
_ROBOTS_CUT_AT = CUT_ROBOTS.index(b"public/")
CUT_ROBOTS_LINKS = ("/private/secret.html", "/private/public/a.html", "/open.html")
CAFE = "/caf\u00e9"  # sent as raw UTF-8 in a Location header; asked for as /caf%C3%A9
RULES_MOVED = "/r\u00e8gles.txt"  # where location-utf8's robots.txt redirects, raw UTF-8 too
DEEP_DIVS = 150_000  # nesting depth of the deep-nesting page (~0.9 MB)
DEEP_LINKS = ("/after/1.html", "/after/2.html")  # at the very end of the deep page

# Hosts whose robots.txt and pages are plain: case -> (robots.txt body or status, links on "/").
_SITES: dict[str, tuple[bytes | int, tuple[str, ...]]] = {
    "robots-bom": (b"\xef\xbb\xbf" + _PRIVATE, ("/private/a.html", "/open.html")),
    "robots-latin1": (
        b"# R\xe8gles du caf\xe9\nUser-agent: *\nDisallow: /caf\xe9/\nDisallow: /private/\n",
        ("/caf%E9/a.html", "/private/a.html", "/open.html"),
    ),
    "robots-contradict": (
        b"User-agent: *\nDisallow: /both/\nAllow: /both/\nAllow: /x/\nDisallow: /x/y\n\n"
        b"User-agent: *\nDisallow: /merged/\n",
        ("/both/a.html", "/x/a.html", "/x/y.html", "/merged/a.html"),
    ),
    "robots-binary": (random.Random(9).randbytes(8192), ("/open.html",)),
    "robots-500": (500, ("/open.html",)),
    "robots-429": (429, ("/open.html",)),
    "redirect-target": (_PRIVATE, ()),
    "unresolvable": (404, (UNRESOLVABLE,)),
}
_OWN_ROBOTS = frozenset(
    {
        "calm",
        "many-links",
        "robots-huge",
        "robots-redirect",
        "robots-timeout",
        "robots-gzip-cut",
        "robots-plain-cut",
        "location-utf8",
    }
)


@dataclass(frozen=True, slots=True)
class Request:
    """One parsed request. ``case`` is the first label of a ``hostile.test`` host, else the host."""

    method: str
    target: str
    host: str
    case: str

    @classmethod
    def of(cls, method: str, target: str, host: str) -> Request:
        label, _, domain = host.partition(".")
        return cls(method, target, host, label if domain == HOSTILE_DOMAIN else host)


Handler = Callable[[Request, Reader, Writer], Awaitable[bool]]  # True: keep the connection


class Cases:
    """Answers every hostile case. ``samples`` is the folder of compression bombs and broken
    gzip streams (without it those cases answer 404); ``port`` is where the server listens,
    for the cases that redirect to another of its hosts."""

    def __init__(self, samples: Path | None = None) -> None:
        self.samples = samples
        self.port = 0
        self._serial = itertools.count()
        self._many_links = b""
        self._handlers: dict[str, Handler] = {
            "calm": self._calm,  # ordinary pages that link to each other
            "slow-headers": self._slow_headers,  # the head arrives a byte at a time, forever
            "slow-body": self._slow_body,  # a prompt head, then the body a byte at a time
            "endless-headers": self._endless_headers,  # header lines without end
            "long-header": self._long_header,  # one header line without end
            "silent": self._silent,  # reads the request, never answers
            "length-long": self._length_long,  # Content-Length promises more than comes
            "length-short": self._length_short,  # ... or less than comes, on a kept connection
            "bad-chunked": self._bad_chunked,  # a chunk size that is not hexadecimal
            "endless-chunked": self._endless_chunked,  # chunks without end
            "reset": self._reset,  # a TCP reset halfway through the body
            "garbage": self._garbage,  # bytes that are not HTTP at all
            "huge-declared": self._huge_declared,  # Content-Length far above any cap
            "huge-stream": self._huge_stream,  # no length, a body that never ends
            "binary-html": self._binary_html,  # random bytes labelled text/html
            "mislabelled": self._mislabelled,  # charsets that lie or do not exist
            "malformed": self._malformed,  # tag soup that still holds links
            "many-links": self._many,  # 100,000 links, all behind robots.txt
            **{name: self._bomb for name in BOMBS},  # 11.5 MB from a few KB
            "bad-gzip": self._bad_gzip,  # truncated and corrupt gzip
            "redirect-loop": self._redirect_loop,  # / -> /b -> /self -> /self
            "redirect-chain": self._redirect_chain,  # / -> /r/1 -> /r/2 -> ... without end
            "redirect-scheme": self._redirect_scheme,  # redirects to ftp:, file:, javascript:...
            "redirect-loopback": self._redirect_loopback,  # redirects to loopback IP literals
            "redirect-cross": self._redirect_cross,  # to a path redirect-target's robots forbid
            "robots-huge": self._robots_huge,  # a rule at the start and one beyond 2 MiB
            "robots-redirect": self._robots_redirect,  # robots.txt moved to robots-target
            "robots-target": self._robots_target,  # where robots-redirect's rules live
            "robots-timeout": self._robots_timeout,  # robots.txt never answers
            "storm": self._storm,  # 503 and 429 for every page
            "calendar": self._calendar,  # an endless calendar
            "deeper": self._deeper,  # /a/a/a/... and /d/1/2/3/... without end
            "session": self._session,  # a fresh session id in every link
            # -- what servers really send (issue 26) --
            "reason-utf8": self._reason_utf8,  # "200 Bien reçu", the phrase in UTF-8
            "reason-latin1": self._reason_latin1,  # "404 Não encontrado", in Latin-1
            "robots-gzip-cut": self._robots_cut,  # a gzip stream ending inside a rule
            "robots-plain-cut": self._robots_cut,  # the same cut: Content-Length unfulfilled
            "location-utf8": self._location_utf8,  # raw UTF-8 in Location (robots.txt too)
            "no-type": self._no_type,  # HTML, and binary, with no Content-Type at all
            "pdf-as-html": self._pdf_as_html,  # a PDF labelled text/html
            "deep-nesting": self._deep_nesting,  # 150,000 nested <div>s, links at the end
        }

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted([*self._handlers, *_SITES]))

    async def answer(self, req: Request, r: Reader, w: Writer) -> bool:
        """Answer ``req``; True when the connection may carry another request."""
        site = _SITES.get(req.case)
        if site is not None:
            robots, links = site
            if req.target != "/robots.txt":
                return await send(w, 200, page(req.case, links if req.target == "/" else ()))
            if isinstance(robots, int):
                return await send(w, robots, page(f"robots.txt {robots}"))
            return await send(w, 200, robots, TEXT)
        handler = self._handlers.get(req.case)
        if handler is None:  # a host never advertised: answer the way a victim would
            return await send(w, 200, page("internal admin page"))
        if req.target == "/robots.txt" and req.case not in _OWN_ROBOTS:
            return await send(w, 404, page("no robots.txt"))
        return await handler(req, r, w)

    def _sample(self, name: str) -> bytes | None:
        path = self.samples / name if self.samples is not None else None
        return path.read_bytes() if path is not None and path.is_file() else None

    # -- the cases --------------------------------------------------------------------------
    async def _calm(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/robots.txt":
            return await send(w, 200, _PRIVATE, TEXT)
        if req.target in CALM_TARGETS:
            return await send(w, 200, page("calm", [*CALM_TARGETS, "/private/no.html"]))
        return await send(w, 404, page("not found"))

    async def _slow_headers(self, req: Request, r: Reader, w: Writer) -> bool:
        start = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        return await trickle(w, itertools.chain(start, itertools.cycle(b"X-Slow: 1\r\n")))

    async def _slow_body(self, req: Request, r: Reader, w: Writer) -> bool:
        w.write(head(200, [("Content-Type", HTML), ("Content-Length", "100000")]))
        return await trickle(w, itertools.cycle(b"<p>slow</p>"))

    async def _endless_headers(self, req: Request, r: Reader, w: Writer) -> bool:
        lines = (f"X-Filler-{n}: {n}\r\n".encode() * 64 for n in itertools.count())
        return await stream(w, b"HTTP/1.1 200 OK\r\n", lines)

    async def _long_header(self, req: Request, r: Reader, w: Writer) -> bool:
        return await stream(w, b"HTTP/1.1 200 OK\r\nX-Long: ", itertools.repeat(b"a" * CHUNK))

    async def _silent(self, req: Request, r: Reader, w: Writer) -> bool:
        return await hang(r)

    async def _length_long(self, req: Request, r: Reader, w: Writer) -> bool:
        w.write(head(200, [("Content-Type", HTML), ("Content-Length", "100000")]))
        w.write(page("short of its promise"))
        return False

    async def _length_short(self, req: Request, r: Reader, w: Writer) -> bool:
        body = page("longer than promised", ["/next.html"])
        w.write(head(200, [("Content-Type", HTML), ("Content-Length", "20")]) + body)
        return True  # the rest of the body is waiting where the next response should be

    async def _bad_chunked(self, req: Request, r: Reader, w: Writer) -> bool:
        w.write(head(200, [("Content-Type", HTML), ("Transfer-Encoding", "chunked")]))
        w.write(b"6\r\n<html>\r\nzz\r\nnot a chunk size\r\n0\r\n\r\n")
        return False

    async def _endless_chunked(self, req: Request, r: Reader, w: Writer) -> bool:
        start = head(200, [("Content-Type", HTML), ("Transfer-Encoding", "chunked")])
        return await stream(w, start, chunks(CHUNK))

    async def _reset(self, req: Request, r: Reader, w: Writer) -> bool:
        w.write(head(200, [("Content-Type", HTML), ("Content-Length", "100000")]))
        w.write(b"<html><body>" + b"x" * 4000)
        await w.drain()
        sock = w.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        w.transport.abort()  # with a zero linger, close() sends RST instead of FIN
        return False

    async def _garbage(self, req: Request, r: Reader, w: Writer) -> bool:
        w.write(b"SSH-2.0-OpenSSH_9.6\r\n\x00\xff\xfe" + random.Random(3).randbytes(4096))
        return False

    async def _huge_declared(self, req: Request, r: Reader, w: Writer) -> bool:
        start = head(200, [("Content-Type", HTML), ("Content-Length", str(HUGE_BYTES))])
        return await stream(w, start, itertools.repeat(b"<p>" + b"x" * CHUNK))

    async def _huge_stream(self, req: Request, r: Reader, w: Writer) -> bool:
        start = head(200, [("Content-Type", HTML), ("Connection", "close")])
        return await stream(w, start, itertools.repeat(b"<p>" + b"y" * CHUNK))

    async def _binary_html(self, req: Request, r: Reader, w: Writer) -> bool:
        return await send(w, 200, random.Random(5).randbytes(CHUNK), "text/html")

    async def _mislabelled(self, req: Request, r: Reader, w: Writer) -> bool:
        links = ["/bogus.html", "/utf16.html", "/end.html"]
        if req.target == "/":  # latin-1 bytes that the header calls UTF-8
            body = page("caf\xe9 cr\xe8me", links).decode().encode("latin-1")
            return await send(w, 200, body)
        if req.target == "/bogus.html":
            return await send(w, 200, page("bogus", links), "text/html; charset=x-no-such-thing")
        if req.target == "/utf16.html":  # UTF-16 with a BOM, labelled as UTF-8
            return await send(w, 200, page("utf-16", links).decode().encode("utf-16"))
        return await send(w, 200 if req.target == "/end.html" else 404, page("end"))

    async def _malformed(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target != "/":
            return await send(w, 200 if req.target.startswith("/m/") else 404, page("fine"))
        soup = (
            b"<html><head><title>soup</title><body><table><tr><td><a href=/m/1.html>one<td>"
            b"<a href='/m/2.html'<b>two</a></table><p><p><div><a\thref=\"/m/3.html\"\x00>three"
            b"</span></i></html></html><!-- never closed <a href=/m/hidden.html>"
        )
        return await send(w, 200, soup)

    async def _many(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/robots.txt":
            return await send(w, 200, b"User-agent: *\nDisallow: /l/\n", TEXT)
        if req.target != "/":
            return await send(w, 404, page("not found"))
        if not self._many_links:
            self._many_links = page("many", (f"/l/{n}" for n in range(MANY_LINKS)))
        return await send(w, 200, self._many_links)

    async def _bomb(self, req: Request, r: Reader, w: Writer) -> bool:
        body = self._sample(f"{req.case}.bin")
        if req.target != "/" or body is None:
            return await send(w, 404, page("no bomb here"))
        return await send(w, 200, body, headers=[("Content-Encoding", BOMBS[req.case])])

    async def _bad_gzip(self, req: Request, r: Reader, w: Writer) -> bool:
        gzip = [("Content-Encoding", "gzip")]
        if req.target == "/":
            return await send(w, 200, page("gzip", ["/crc.html", "/eof.html", "/plain.html"]))
        if req.target == "/plain.html":  # says gzip, is not
            return await send(w, 200, page("not gzip at all"), headers=gzip)
        names = {"/crc.html": "truncated-crc-error.gz", "/eof.html": "unexpected-eof.gz"}
        body = self._sample(names.get(req.target, ""))
        if body is None:
            return await send(w, 404, page("no sample"))
        return await send(w, 200, body, headers=gzip)

    async def _redirect_loop(self, req: Request, r: Reader, w: Writer) -> bool:
        moves = {"/": "/b", "/b": "/self", "/self": "/self"}
        if req.target not in moves:
            return await send(w, 404, page("not found"))
        return await redirect(w, 302, moves[req.target])

    async def _redirect_chain(self, req: Request, r: Reader, w: Writer) -> bool:
        step = req.target.removeprefix("/r/")
        hop = int(step) + 1 if step.isdigit() else 1
        return await redirect(w, 301 if hop % 2 else 302, f"/r/{hop}")

    async def _redirect_scheme(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/":
            return await send(
                w, 200, page("schemes", (f"/to/{n}" for n in range(len(BAD_SCHEMES))))
            )
        step = req.target.removeprefix("/to/")
        if not step.isdigit() or int(step) >= len(BAD_SCHEMES):
            return await send(w, 404, page("not found"))
        return await redirect(w, 302, BAD_SCHEMES[int(step)])

    async def _redirect_loopback(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/":
            return await send(w, 200, page("inside", (f"/to/{h}" for h in LOOPBACK_HOSTS)))
        target = req.target.removeprefix("/to/")
        if target not in LOOPBACK_HOSTS:
            return await send(w, 404, page("not found"))
        return await redirect(w, 302, f"http://{target}:{self.port}/admin")

    async def _redirect_cross(self, req: Request, r: Reader, w: Writer) -> bool:
        where = f"http://redirect-target.{HOSTILE_DOMAIN}:{self.port}"
        return await redirect(w, 301, f"{where}/private/secret.html")

    async def _robots_huge(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target != "/robots.txt":
            return await send(w, 200, page("huge", ["/early/a.html", "/late/a.html"]))
        padding = b"# " + b"padding " * 127 + b"\n"
        count = ROBOTS_PADDING // len(padding) + 1
        body = b"User-agent: *\nDisallow: /early/\n" + padding * count + b"Disallow: /late/\n"
        return await send(w, 200, body, TEXT)

    async def _robots_redirect(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/robots.txt":
            where = f"http://robots-target.{HOSTILE_DOMAIN}:{self.port}/rules.txt"
            return await redirect(w, 301, where)
        return await send(w, 200, page("moved robots", ["/private/a.html", "/open.html"]))

    async def _robots_target(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/rules.txt":
            return await send(w, 200, _PRIVATE, TEXT)
        return await send(w, 404, page("not found"))

    async def _robots_timeout(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/robots.txt":
            return await hang(r)
        return await send(w, 200, page("never to be seen"))

    async def _storm(self, req: Request, r: Reader, w: Writer) -> bool:
        status = 503 if next(self._serial) % 2 else 429
        return await send(w, status, page("busy"), headers=[("Retry-After", "30")])

    async def _calendar(self, req: Request, r: Reader, w: Writer) -> bool:
        parts = req.target.strip("/").split("/")
        year, month = (int(parts[1]), int(parts[2])) if len(parts) == 3 else (2024, 1)
        after = (year + month // 12, month % 12 + 1)
        before = (year - (month == 1), (month - 2) % 12 + 1)
        links = [f"/cal/{y}/{m:02d}" for y, m in (after, before, (year + 1, month))]
        return await send(w, 200, page(f"{year}-{month:02d}", links))

    async def _deeper(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/":
            return await send(w, 200, page("down", ["/a/", "/d/1/"]))
        depth = req.target.count("/")
        nxt = "a/" if req.target.startswith("/a/") else f"{depth}/"
        return await send(w, 200, page(f"depth {depth}", [nxt]))

    async def _session(self, req: Request, r: Reader, w: Writer) -> bool:
        token = f"{next(self._serial):08x}"
        targets = ["/", *(f"/s/{n}.html" for n in range(1, 5))]
        links = [f"{t}?sid={token}&view=full" for t in targets]
        links += [f"{t};jsessionid={token}" for t in targets]
        return await send(w, 200, page("session", links))

    # -- what servers really send (issue 26) ----------------------------------------------------
    async def _reason_utf8(self, req: Request, r: Reader, w: Writer) -> bool:
        reason = "Bien re\u00e7u".encode()
        if req.target not in ("/", "/suite.html"):
            return await send(w, 404, page("not found"))
        return await send(w, 200, page("re\u00e7u", ["/suite.html"]), reason=reason)

    async def _reason_latin1(self, req: Request, r: Reader, w: Writer) -> bool:
        return await send(w, 404, page("absent"), reason="N\u00e3o encontrado".encode("latin-1"))

    async def _robots_cut(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/":
            return await send(w, 200, page("cut robots", CUT_ROBOTS_LINKS))
        if req.target != "/robots.txt":
            return await send(w, 200, page("behind robots.txt"))
        cut = CUT_ROBOTS[:_ROBOTS_CUT_AT]
        if req.case == "robots-plain-cut":  # promises the whole file, sends the cut, hangs up
            w.write(head(200, [("Content-Type", TEXT), ("Content-Length", str(len(CUT_ROBOTS)))]))
            w.write(cut)
            return False
        # A whole HTTP body holding a gzip stream flushed at the cut, without its end.
        packer = zlib.compressobj(wbits=31)
        stream = packer.compress(cut) + packer.flush(zlib.Z_SYNC_FLUSH)
        return await send(w, 200, stream, TEXT, headers=[("Content-Encoding", "gzip")])

    async def _location_utf8(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/robots.txt":
            return await redirect(w, 301, RULES_MOVED.encode())
        if req.target == "/r%C3%A8gles.txt":
            return await send(w, 200, _PRIVATE, TEXT)
        if req.target == "/":
            return await send(w, 200, page("utf-8", ["/move", "/private/a.html", "/open.html"]))
        if req.target == "/move":
            return await redirect(w, 302, CAFE.encode())
        found = req.target in ("/caf%C3%A9", "/open.html")
        return await send(w, 200 if found else 404, page("caf\u00e9" if found else "not found"))

    async def _no_type(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/":
            return await send(w, 200, page("untyped", ["/a.html", "/data.bin"]), None)
        if req.target == "/a.html":  # markup after blank lines, in capitals
            return await send(w, 200, b"\r\n\n  <HTML><BODY><P>untyped too</P></BODY></HTML>", None)
        if req.target == "/data.bin":
            return await send(w, 200, random.Random(7).randbytes(2048), None)
        return await send(w, 404, page("not found"))

    async def _pdf_as_html(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target != "/":
            return await send(w, 404, page("not found"))
        # Its text holds markup: read as HTML, the page would lead to /from-pdf.html.
        return await send(w, 200, tiny_pdf('<a href="/from-pdf.html">hidden</a> in a PDF'))

    async def _deep_nesting(self, req: Request, r: Reader, w: Writer) -> bool:
        if req.target == "/":
            links = "".join(f'<a href="{href}">after</a>' for href in DEEP_LINKS)
            body = b"<!DOCTYPE html><html><body>" + b"<div>\n" * DEEP_DIVS + links.encode()
            return await send(w, 200, body)
        found = req.target in DEEP_LINKS
        return await send(w, 200 if found else 404, page("after" if found else "not found"))


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` (ASCII, no parentheses or backslashes)."""
    content = f"BT /F1 12 Tf 10 50 Td ({text}) Tj ET".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 100] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
