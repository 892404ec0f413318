"""Test web, rendering: resources turned into response bytes, derived from the seed and the URL.

Role in the data flow: the server asks :class:`Renderer` for the bytes of each resource it
answers. Page text, titles, PDFs and images are drawn from a random stream seeded with the web's
seed and the URL, so nothing but the link graph is stored; a rendered body is cached per
(host, path, version) after its first request, the version being the generation in which the
page's answer last changed (:mod:`gossamer.testweb.changes`): a page that did not change is one
cached answer in every generation, and a switch of generation never meets a stale one.
Answers of hosts that send validators carry an ETag and a Last-Modified, computed once per
rendered answer (:mod:`gossamer.testweb.validators`). Absolute links are written with the
ports and schemes of the running server's :class:`~gossamer.testweb.origins.Origins`;
root-relative links stay relative and so resolve against whichever origin the page was
fetched from.
"""

from __future__ import annotations

import gzip
import random
import struct
import zlib
from dataclasses import dataclass, field, replace

from gossamer.testweb.filler import NAV_LINKS, fill_page, page_size
from gossamer.testweb.model import (
    EXPECTED_KINDS,
    SITEMAP_KINDS,
    VOCABULARY,
    Kind,
    Link,
    Resource,
    Role,
    Web,
)
from gossamer.testweb.origins import Origins
from gossamer.testweb.pdf import make_pdf
from gossamer.testweb.sitemaps import render_sitemap
from gossamer.testweb.validators import etag_of, last_modified

LARGE_BYTES = 12 * 1024 * 1024  # above the crawler's 10 MB cap
_LATIN1_WORDS = ("café", "naïve", "façade", "crème", "déjà", "señor", "über", "smørrebrød")
_HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Rendered:
    """A response ready to be copied into a fresh ``Response`` for each request."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    gzipped: bytes | None = None  # the body gzip-encoded, for requests that accept it
    # Validators, when the host sends them: the ETag of the body and of ``gzipped``, and the
    # Last-Modified as a POSIX time (``headers`` carries both as sent).
    etag: str | None = None
    gzipped_etag: str | None = None
    modified: float = 0.0

    def etags(self) -> tuple[str, ...]:
        """Every tag a client may hold for the current answer."""
        return tuple(tag for tag in (self.etag, self.gzipped_etag) if tag is not None)


NOT_FOUND = Rendered(404, {"Content-Type": _HTML}, b"<!DOCTYPE html><title>Not found</title>")


def accepts_gzip(header: str) -> bool:
    """Does an Accept-Encoding value allow gzip (named, or by '*'), with a weight above 0?"""
    weights: dict[str, float] = {}
    for item in header.split(","):
        coding, _, params = item.partition(";")
        weight = params.strip().removeprefix("q=") if params.strip().startswith("q=") else "1"
        try:
            weights[coding.strip().lower()] = float(weight)
        except ValueError:
            weights[coding.strip().lower()] = 0.0
    return weights.get("gzip", weights.get("*", 0.0)) > 0


def _png() -> bytes:
    """A valid 1x1 RGB PNG: signature, IHDR, IDAT and IEND, each chunk with its CRC."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x2a\x6f\x97")  # filter byte, then one RGB pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


class Renderer:
    """Turns resources into bytes; text comes from the seed and the URL, never stored."""

    def __init__(self, web: Web, origins: int | Origins) -> None:
        self._web = web
        self._origins = Origins.of(origins)  # a bare port: a single-port server
        self._cache: dict[tuple[str, str], Rendered] = {}  # answers unchanged since generation 0
        self._revisions: dict[tuple[str, str, int], Rendered] = {}  # by (host, path, version)
        self._navs: dict[str, list[tuple[str, str]]] = {}  # host -> its filled pages' nav bar

    def get(self, host: str, target: str, resource: Resource, version: int = 0) -> Rendered:
        """The answer of ``resource``, which has answered ``target`` since generation
        ``version``."""
        if version:
            return self._revised(host, target, resource, version)
        key = (host, target)
        found = self._cache.get(key)
        if found is None:
            found = self._validated(host, resource, self._render(host, target, resource), 0)
            info = self._web.info(host)
            if info is None or info.role is not Role.TRAP:  # trap pages are endless
                self._cache[key] = found
        return found

    def _revised(self, host: str, target: str, resource: Resource, version: int) -> Rendered:
        key = (host, target, version)
        found = self._revisions.get(key)
        if found is None:
            found = self._validated(host, resource, self._render(host, target, resource), version)
            self._revisions[key] = found
        return found

    def _validated(self, host: str, res: Resource, rendered: Rendered, version: int) -> Rendered:
        """``rendered`` with an ETag and a Last-Modified if its host sends them and a crawl is
        expected to fetch it: HTML pages and PDFs, not robots.txt, sitemaps or errors."""
        if rendered.status != 200 or res.kind not in EXPECTED_KINDS:
            return rendered
        if not self._web.sends_validators(host):
            return rendered
        etag = etag_of(rendered.body)
        stamp, modified = last_modified(version)
        headers = {**rendered.headers, "ETag": etag, "Last-Modified": stamp}
        zipped = None if rendered.gzipped is None else etag_of(rendered.gzipped)
        return replace(rendered, headers=headers, etag=etag, gzipped_etag=zipped, modified=modified)

    def _href(self, link: Link) -> str:
        return link.path if link.relative else self._web.link_url(link, self._origins)

    def _nav(self, host: str) -> list[tuple[str, str]]:
        """The navigation bar of a host's filled pages: its root and the pages the root links
        to on the host, as absolute URLs over the main port. The alias host (linked over
        several origins) and hosts without a stored root get none: there an absolute link
        could name a URL the crawler would not otherwise find."""
        found = self._navs.get(host)
        if found is not None:
            return found
        info = self._web.info(host)
        root = self._web.resources.get((host, "/"))
        found = []
        if info is not None and not info.aliased and root is not None:
            paths = ["/"] + [link.path for link in root.links if link.host == host]
            for path in dict.fromkeys(paths):
                label = path.rstrip("/").rsplit("/", 1)[-1].split(".")[0] or "home"
                found.append((self._web.link_url(Link(host, path), self._origins), label))
                if len(found) == NAV_LINKS:
                    break
        self._navs[host] = found
        return found

    def _render(self, host: str, target: str, res: Resource) -> Rendered:
        kind = res.kind
        if kind is Kind.REDIRECT and res.target is not None:
            location = self._href(res.target)
            note = f'<!DOCTYPE html><title>Moved</title><a href="{location}">moved</a>'
            headers = {"Location": location, "Content-Type": _HTML}
            return Rendered(res.status, headers, note.encode())
        if kind is Kind.ERROR:
            note = f"<!DOCTYPE html><title>Error {res.status}</title><p>Status {res.status}.</p>"
            return Rendered(res.status, {"Content-Type": _HTML}, note.encode())
        if kind is Kind.ROBOTS:  # its links are the sitemaps it announces
            sitemaps = "".join(f"\nSitemap: {self._href(link)}\n" for link in res.links)
            body = (res.text + sitemaps).encode()
            return Rendered(200, {"Content-Type": "text/plain; charset=utf-8"}, body)
        if kind in SITEMAP_KINDS:
            ctype, body = render_sitemap(self._web.spec.seed, target, res, self._href)
            return Rendered(200, {"Content-Type": ctype}, body)
        rng = random.Random(f"{self._web.spec.seed}|{res.body_key or host + target}")
        title = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(2, 5))).capitalize()
        if kind is Kind.PDF:
            lines = [_sentence(rng, rng.randint(8, 14)) for _ in range(rng.randint(4, 10))]
            return Rendered(200, {"Content-Type": "application/pdf"}, make_pdf(title, lines))
        if kind is Kind.PNG:
            return Rendered(200, {"Content-Type": "image/png"}, _png())
        if kind is Kind.LARGE:
            head = f"<!DOCTYPE html><html><head><title>{title}</title></head><body><p>".encode()
            tail = b"</p></body></html>\n"
            filler = (_sentence(rng, 12) + " ").encode()
            middle = filler * (LARGE_BYTES // len(filler) + 1)
            body = head + middle[: LARGE_BYTES - len(head) - len(tail)] + tail
            return Rendered(200, {"Content-Type": _HTML}, body)
        return self._page(host, target, res, rng, title)

    def _page(
        self, host: str, target: str, res: Resource, rng: random.Random, title: str
    ) -> Rendered:
        kind = res.kind
        paragraphs = [_sentence(rng, rng.randint(20, 50)) for _ in range(rng.randint(2, 4))]
        charset = "utf-8"
        if kind is Kind.LATIN1:
            paragraphs.append(" ".join(rng.choice(_LATIN1_WORDS) for _ in range(12)) + ".")
            charset = "latin-1"  # while the header below still claims utf-8
        elif kind is Kind.CP1252:
            quoted = " ".join(f"\u201c{rng.choice(VOCABULARY)}\u201d" for _ in range(6))
            paragraphs.append(f"{quoted} \u2013 only \u20ac{rng.randint(2, 99)}.")
            charset = "cp1252"
        meta = "windows-1252" if kind is Kind.CP1252 else "utf-8"
        items = [
            f'<li><a href="{self._href(link)}">{_sentence(rng, 2)[:-1]}</a></li>'
            for link in res.links
        ]
        if target == "/":  # links a crawler must not try to fetch
            items.append(f'<li><a href="mailto:webmaster@{host}">Mail</a> <a href="#top">Top</a>')
        head = f'<meta charset="{meta}"><title>{title}</title>'
        # A later generation's words (see gossamer.testweb.changes); none at generation 0.
        news = [f"<p>{res.text}</p>"] if res.text else []
        article = "\n".join(
            [
                f'<h1 id="top">{title}</h1>',
                *news,
                *(f"<p>{p}</p>" for p in paragraphs),
                "<ul>",
                *items,
                "</ul>",
            ]
        )
        sizes = self._web.spec.page_bytes
        if sizes is None:
            text = f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>\n<body>{article}'
            text += "\n</body></html>\n"
        else:
            inline = [self._href(link) for link in res.links]
            size = page_size(rng, *sizes) - len("<!DOCTYPE html>\n")
            nav = self._nav(host)
            text = "<!DOCTYPE html>\n" + fill_page(
                rng, self._web.spec.seed, head, article, size=size, nav=nav, inline=inline
            )
        body = text.encode(charset)
        if kind is Kind.CP1252:
            return Rendered(200, {"Content-Type": "text/html"}, body)
        if kind is Kind.GZIP:
            headers = {"Content-Type": _HTML, "Vary": "Accept-Encoding"}
            return Rendered(200, headers, body, gzip.compress(body, mtime=0))
        return Rendered(200, {"Content-Type": _HTML}, body)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(words)).capitalize() + "."
