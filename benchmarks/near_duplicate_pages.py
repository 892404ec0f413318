"""The labelled pages of ``near_duplicates.py``: real text in made-up sites, near-duplicate
pairs made by small edits, and pairs of different pages that look alike.

Articles are the docstrings of standard-library modules (a module's, a class's with its
methods', a function's), 80 to 1,200 words each. A site's template has a tagline, a sidebar
and a footer, in HTML5 elements (``header``, ``aside``, ``footer``: the extractor drops them)
on half the sites, in plain ``div`` elements (they leak into the main text) on the others. A
page also has a date line and an advertisement. ``build_corpus(seed)`` always makes the same
pages and pairs on one Python version.
"""

from __future__ import annotations

import html
import importlib
import inspect
import random
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

from gossamer.index.shingles import shingle_hashes

_MODULE_LINES = (
    "argparse asyncio.events collections configparser contextlib csv dataclasses datetime",
    "decimal difflib doctest email.message enum fractions functools gzip heapq http.client",
    "http.cookiejar http.server imaplib inspect ipaddress json logging mailbox",
    "multiprocessing.pool os pathlib pickle pprint random re shutil smtplib socket sqlite3",
    "ssl statistics string subprocess tarfile tempfile textwrap threading typing",
    "unittest.case unittest.mock urllib.parse urllib.request uuid warnings xml.dom.minidom",
    "zipfile ftplib calendar codecs pdb pydoc selectors shelve sched queue optparse locale",
    "gettext hashlib hmac struct weakref copy abc numbers cmd shlex trace traceback tokenize",
    "ast dis pkgutil sysconfig base64 html.parser mimetypes socketserver xmlrpc.client",
    "xmlrpc.server wsgiref.handlers bz2 lzma filecmp io signal contextvars graphlib operator",
    "reprlib",
)
MODULES = [name for line in _MODULE_LINES for name in line.split()]
MIN_WORDS, MAX_WORDS = 80, 1200
SITES = 12
POSITIVE_EDITS = ("date", "advert", "template", "add", "remove", "words", "combined")
NEGATIVE_KINDS = ("same-site", "same-module", "random")


@dataclass(frozen=True, slots=True)
class Article:
    module: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Site:
    name: str
    semantic: bool  # boilerplate in nav/aside/footer (dropped) or in plain divs (kept)
    tagline: str
    sidebar: str
    footer: str


@dataclass(frozen=True, slots=True)
class Page:
    article: int
    site: Site
    date: str
    advert: str
    paragraphs: tuple[str, ...]


def _doc(obj: object) -> str:
    # The object's own docstring: inspect.getdoc would copy a base class's onto overrides.
    raw = getattr(obj, "__doc__", None)
    return inspect.cleandoc(raw) if isinstance(raw, str) else ""


def _articles() -> list[Article]:
    found: list[Article] = []
    seen: set[str] = set()
    for name in MODULES:
        with warnings.catch_warnings():  # typing.io and typing.re warn when touched
            warnings.simplefilter("ignore", DeprecationWarning)
            found += _module_articles(name, seen)
    return found


def _module_articles(name: str, seen: set[str]) -> list[Article]:
    found: list[Article] = []
    module = importlib.import_module(name)
    texts = [_doc(module)]
    for attr, obj in sorted(vars(module).items()):
        if attr.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        parts = [_doc(obj)]
        if inspect.isclass(obj):
            parts += [_doc(m) for n, m in sorted(vars(obj).items()) if not n.startswith("_")]
        texts.append("\n\n".join(p for p in parts if p))
    for text in texts:
        words = text.split()
        if MIN_WORDS <= len(words) <= MAX_WORDS and text not in seen:
            seen.add(text)
            paragraphs = tuple(" ".join(p.split()) for p in text.split("\n\n") if p.strip())
            found.append(Article(name, paragraphs))
    return found


def _sentences(articles: list[Article], rng: random.Random, words: int) -> str:
    """Filler text (taglines, sidebars, adverts) cut from articles: real words, not theirs."""
    source = rng.choice(articles).paragraphs
    flat = " ".join(source).split()
    start = rng.randrange(max(1, len(flat) - words))
    return " ".join(flat[start : start + words])


def _sites(filler: list[Article], rng: random.Random) -> list[Site]:
    return [
        Site(
            name=f"site{i}.example",
            semantic=i % 2 == 0,
            tagline=_sentences(filler, rng, rng.randint(8, 16)),
            sidebar=_sentences(filler, rng, rng.randint(30, 60)),
            footer=_sentences(filler, rng, rng.randint(20, 40)),
        )
        for i in range(SITES)
    ]


def _date(rng: random.Random) -> str:
    return f"Published 20{rng.randint(10, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def render(page: Page) -> bytes:
    site, esc = page.site, html.escape
    body = "".join(f"<p>{esc(p)}</p>" for p in page.paragraphs)
    article = (
        f"<p class='date'>{esc(page.date)}</p>{body}<div class='ad'><p>{esc(page.advert)}</p></div>"
    )
    if site.semantic:
        chrome_top = f"<header><h1>{site.name}</h1><p>{esc(site.tagline)}</p></header>"
        middle = f"<main>{article}</main><aside><p>{esc(site.sidebar)}</p></aside>"
        bottom = f"<footer><p>{esc(site.footer)}</p></footer>"
    else:
        chrome_top = f"<div class='top'><h1>{site.name}</h1><p>{esc(site.tagline)}</p></div>"
        middle = f"<div class='post'>{article}</div><div class='side'>{esc(site.sidebar)}</div>"
        bottom = f"<div class='foot'><p>{esc(site.footer)}</p></div>"
    doc = f"<!DOCTYPE html><html lang='en'><head><title>{site.name}</title></head><body>"
    return (doc + chrome_top + middle + bottom + "</body></html>").encode()


def _edit_words(paragraphs: tuple[str, ...], rng: random.Random, share: float) -> tuple[str, ...]:
    edited = []
    for paragraph in paragraphs:
        words = paragraph.split()
        for _ in range(max(0, round(len(words) * share))):
            i = rng.randrange(len(words))
            if rng.random() < 0.5:
                words[i] = words[i][::-1]  # a changed word
            else:
                del words[i]
                if not words:
                    break
        edited.append(" ".join(words))
    return tuple(p for p in edited if p)


def _variant(
    page: Page, edit: str, sites: list[Site], filler: list[Article], rng: random.Random
) -> Page:
    paragraphs = page.paragraphs
    if edit == "date":
        return Page(page.article, page.site, _date(rng), page.advert, paragraphs)
    if edit == "advert":
        return Page(page.article, page.site, page.date, _sentences(filler, rng, 25), paragraphs)
    if edit == "template":
        other = rng.choice([s for s in sites if s is not page.site])
        return Page(page.article, other, page.date, page.advert, paragraphs)
    if edit == "add":
        at = rng.randrange(len(paragraphs) + 1)
        extra = _sentences(filler, rng, rng.randint(30, 60))
        return Page(page.article, page.site, page.date, page.advert,
                    (*paragraphs[:at], extra, *paragraphs[at:]))  # fmt: skip
    if edit == "remove" and len(paragraphs) >= 3:
        total = sum(len(p.split()) for p in paragraphs)
        small = [i for i, p in enumerate(paragraphs) if len(p.split()) <= total // 4]
        if small:
            at = rng.choice(small)
            rest = paragraphs[:at] + paragraphs[at + 1 :]
            return Page(page.article, page.site, page.date, page.advert, rest)
    if edit in ("remove", "words"):  # an article with no small paragraph: edit words instead
        return Page(page.article, page.site, page.date, page.advert,
                    _edit_words(paragraphs, rng, 0.02))  # fmt: skip
    dated = _variant(page, "date", sites, filler, rng)
    advert = _variant(dated, "advert", sites, filler, rng)
    return _variant(advert, "words", sites, filler, rng)


@dataclass
class Corpus:
    pages: list[Page]
    positives: list[tuple[int, int, str]]  # page indexes and the edit
    negatives: list[tuple[int, int, str]]


def _jaccard(a: Iterable[int], b: Iterable[int]) -> float:
    x, y = set(a), set(b)
    return len(x & y) / len(x | y) if x | y else 1.0


def _shingle_set(text: str) -> set[int]:
    shingles = shingle_hashes(text)
    return set() if shingles is None else set(shingles.tolist())


def build_corpus(seed: int) -> Corpus:
    rng = random.Random(seed)
    articles = _articles()
    rng.shuffle(articles)
    filler, articles = articles[:40], articles[40:]
    sites = _sites(filler, rng)
    pages = [
        Page(i, rng.choice(sites), _date(rng), _sentences(filler, rng, 25), a.paragraphs)
        for i, a in enumerate(articles)
    ]
    originals = len(pages)
    positives = []
    for i in range(originals):
        for edit in rng.sample(POSITIVE_EDITS, 2):
            pages.append(_variant(pages[i], edit, sites, filler, rng))
            positives.append((i, len(pages) - 1, edit))
    article_shingles = [_shingle_set(" ".join(a.paragraphs)) for a in articles]
    negatives: list[tuple[int, int, str]] = []
    for kind in NEGATIVE_KINDS:
        for i in range(originals):
            j = _negative_partner(i, kind, pages[:originals], articles, rng)
            if j is not None and _jaccard(article_shingles[i], article_shingles[j]) <= 0.2:
                negatives.append((i, j, kind))
    return Corpus(pages, positives, negatives)


def _negative_partner(
    i: int, kind: str, originals: list[Page], articles: list[Article], rng: random.Random
) -> int | None:
    page = originals[i]
    if kind == "same-site":
        options = [j for j, p in enumerate(originals) if p.site is page.site and j != i]
    elif kind == "same-module":
        module = articles[i].module
        options = [j for j, a in enumerate(articles) if a.module == module and j != i]
    else:
        options = [j for j in range(len(originals)) if j != i]
    return rng.choice(options) if options else None
