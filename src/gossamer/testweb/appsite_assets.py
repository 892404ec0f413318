"""The bytes the script-built test site serves: page shells, the script, prose and a logo.

Role in the data flow: none in production; :mod:`gossamer.testweb.appsite` routes requests and
asks this module for bodies. Everything here is a pure function of its arguments, so a page
reads the same on every request and in every run.

An app host's HTML is a shell with no links and next to no text: only ``/static/app.js``,
run by a browser, asks ``/api/page`` for the page's title, text and links and writes them into
the document. On its way it also probes two things a rendering crawler must refuse: a path
robots.txt disallows and an IP-literal private address.
"""

from __future__ import annotations

import hashlib
import html
import random
import struct
import zlib
from collections.abc import Sequence

__all__ = [
    "APP_JS_TEMPLATE",
    "LOGO_PNG",
    "marker_word",
    "prose",
    "server_page",
    "shell_page",
]

# Consonants only, without 's' and 'y': a word of these has no vowel, so no stemmer's suffix
# rule (which need a vowel in the stem, or strip a trailing 's') can change it.
_MARKER_LETTERS = "bcdfghjklmnpqrtvwxz"
_MARKER_LENGTH = 8

_WORDS = (
    "river harbour lantern meadow orchard granite copper willow signal engine gather quiet "
    "timber valley morning station archive letter window garden bridge winter summer thread "
    "market pattern island canvas mirror shelter compass ladder beacon pebble feather journey "
    "painter village forest weather circle harvest anchor tunnel silver marble castle ribbon "
    "kettle blanket candle measure narrow gentle careful distant hollow steady simple golden "
    "travel wander follow borrow settle listen answer remember discover carry open build"
)
_VOCABULARY = tuple(_WORDS.split())


def marker_word(host: str, path: str) -> str:
    """A word found only in the text of ``host``'s page ``path``: 'zq' and eight letters."""
    digest = hashlib.sha256(f"{host}{path}".encode()).digest()
    letters = "".join(_MARKER_LETTERS[byte % len(_MARKER_LETTERS)] for byte in digest)
    return "zq" + letters[:_MARKER_LENGTH]


def prose(host: str, path: str, words: int) -> str:
    """``words`` ordinary words drawn from the page's name, sentence-cased, marker included."""
    draw = random.Random(f"{host}{path}")  # a string seed: the same words in every run
    chosen = [draw.choice(_VOCABULARY) for _ in range(max(words - 1, 1))]
    chosen.insert(draw.randrange(len(chosen) + 1), marker_word(host, path))
    sentences = [chosen[start : start + 12] for start in range(0, len(chosen), 12)]
    return " ".join(" ".join(part).capitalize() + "." for part in sentences)


def shell_page() -> bytes:
    """An app host's page before the script runs: a title that says so and an empty div."""
    return (
        b"<!doctype html>\n<html><head><meta charset='utf-8'><title>Loading</title>\n"
        b'<script src="/static/app.js"></script></head>\n'
        b'<body><div id="app"></div></body></html>\n'
    )


# A few lines of first-party analytics, as many server-rendered sites carry: a page that has
# a script is not therefore built by one.
_ANALYTICS = (
    "<script>window.dataLayer = window.dataLayer || [];"
    "window.dataLayer.push({event: 'page_view', path: location.pathname});</script>"
)


def server_page(
    title: str, text: str, links: Sequence[tuple[str, str]], *, analytics: bool
) -> bytes:
    """A server-rendered page: ``text`` in paragraphs and a list of ``(href, label)`` links."""
    paragraphs = [text[start : start + 600] for start in range(0, len(text), 600)]
    body = "\n".join(f"<p>{html.escape(part)}</p>" for part in paragraphs)
    items = "\n".join(
        f'<li><a href="{html.escape(href)}">{html.escape(label)}</a></li>' for href, label in links
    )
    script = _ANALYTICS if analytics else ""
    return (
        f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"{script}</head>\n<body><h1>{html.escape(title)}</h1>\n{body}\n<ul>\n{items}\n</ul>"
        "</body></html>\n"
    ).encode()


# The script of every app host; __PORT__ becomes the server's own port. It writes with
# createElement and textContent only, and marks #app with data-ready when the page is written,
# so a renderer (or its test) has a selector to wait on.
APP_JS_TEMPLATE = """\
(function () {
  'use strict';
  function probe(url) {
    // A crawler must refuse these; a refusal must not stop the page from being written.
    return fetch(url).then(function (r) { return r.text(); }).catch(function () { return null; });
  }
  function write(app, page) {
    document.title = page.title;
    var heading = document.createElement('h1');
    heading.textContent = page.title;
    app.appendChild(heading);
    var text = document.createElement('p');
    text.textContent = page.text;
    app.appendChild(text);
    var list = document.createElement('ul');
    page.links.forEach(function (href) {
      var item = document.createElement('li');
      var link = document.createElement('a');
      link.href = href;
      link.textContent = href;
      item.appendChild(link);
      list.appendChild(item);
    });
    app.appendChild(list);
  }
  async function main() {
    var app = document.getElementById('app');
    var probes = Promise.all([
      probe('/api/secret'),
      probe('http://127.0.0.1:__PORT__/private.json'),
    ]);
    var logo = document.createElement('img');
    logo.src = '/static/logo.png';
    logo.alt = 'logo';
    app.appendChild(logo);
    try {
      var answer = await fetch('/api/page?path=' + encodeURIComponent(location.pathname));
      write(app, await answer.json());
    } catch (error) {
      app.appendChild(document.createTextNode('could not load the page: ' + error));
    }
    await probes;
    app.setAttribute('data-ready', 'yes');
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', main);
  } else {
    main();
  }
})();
"""


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour: signature, IHDR, one IDAT, IEND."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    row = b"\x00" + bytes(rgb) * width  # filter byte 0, then the pixels
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


LOGO_PNG = _png(2, 2, (200, 60, 20))
