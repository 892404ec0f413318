"""Search side, input: the user's query text as a value.

Data flow: user (CLI or web form) -> **query** -> engine. The syntax is the one people know
from web search engines::

    sqlite "write ahead" -journal site:sqlite.org -site:old.sqlite.org

Words are required (all of them, when possible); ``"..."`` is a phrase; a leading ``-``
excludes a word or phrase; ``site:host`` keeps results from that host and its subdomains,
and ``-site:host`` drops them. Everything else is a word, so no input is a syntax error:
an unclosed quote runs to the end, a stray ``-`` or ``site:`` alone is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gossamer.search.errors import SearchError
from gossamer.urls import canonicalize, host_of

__all__ = ["MAX_QUERY_CHARS", "MAX_TERMS", "ParsedQuery", "QueryTerm", "parse_query"]

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
_TOKEN_RE = re.compile(r'(?P<neg>-?)(?:"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+))')
_SITE = "site:"


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """A word, or a phrase when ``phrase`` is set (its words must appear in order)."""

    text: str
    phrase: bool = False


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    include: tuple[QueryTerm, ...] = ()
    exclude: tuple[QueryTerm, ...] = ()
    sites: tuple[str, ...] = ()
    exclude_sites: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.include or self.sites)

    def __str__(self) -> str:
        parts = [f'"{t.text}"' if t.phrase else t.text for t in self.include]
        parts += [f'-"{t.text}"' if t.phrase else f"-{t.text}" for t in self.exclude]
        parts += [f"site:{s}" for s in self.sites]
        parts += [f"-site:{s}" for s in self.exclude_sites]
        return " ".join(parts)


def _site(value: str) -> str:
    value = value.strip().lower()
    if "//" in value:
        # A whole URL: its host name as the index stores it (IDN in punycode).
        canonical = canonicalize(value)
        return host_of(canonical) if canonical else ""
    value = value.split("/", 1)[0].split(":", 1)[0]
    return value.removeprefix("*.").strip(".")


def parse_query(text: str) -> ParsedQuery:
    """Split ``text`` into required, excluded and site terms; ``SearchError`` if too long."""
    if len(text) > MAX_QUERY_CHARS:
        raise SearchError(f"query is longer than {MAX_QUERY_CHARS} characters")
    include: list[QueryTerm] = []
    exclude: list[QueryTerm] = []
    sites: list[str] = []
    exclude_sites: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        negative = bool(match["neg"])
        phrase = match["phrase"]
        if phrase is not None:
            words = " ".join(phrase.split())
            if words:
                (exclude if negative else include).append(QueryTerm(words, phrase=True))
            continue
        word = match["word"] or ""
        if word.lower().startswith(_SITE):
            host = _site(word[len(_SITE) :])
            if host:
                (exclude_sites if negative else sites).append(host)
        elif word.strip("-"):
            (exclude if negative else include).append(QueryTerm(word))
    if len(include) + len(exclude) > MAX_TERMS:
        raise SearchError(f"query has more than {MAX_TERMS} terms")
    return ParsedQuery(
        tuple(dict.fromkeys(include)),
        tuple(dict.fromkeys(exclude)),
        tuple(dict.fromkeys(sites)),
        tuple(dict.fromkeys(exclude_sites)),
    )
