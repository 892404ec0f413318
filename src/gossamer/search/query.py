"""Search side, input: the user's query text as a value.

Data flow: user (CLI or web form) -> **query** -> engine. The syntax is the one people know
from web search engines::

    sqlite "write ahead" -journal site:sqlite.org -site:old.sqlite.org

Words are required (all of them, when possible); ``"..."`` is a phrase; a leading ``-``
excludes a word or phrase; ``site:host`` keeps results from that host and its subdomains,
and ``-site:host`` drops them; ``OR`` (in capitals) between two words or phrases requires
either (``sqlite OR postgres wal``: either name, and "wal"). Everything else is a word, so
:func:`parse_query` finds no syntax error: an unclosed quote runs to the end, a stray ``-``,
``site:`` or ``OR`` alone is ignored. That suits a search box; a command line asks
:func:`checked_query`, which refuses an unclosed quote and a query with nothing to look for,
each with one line saying what to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gossamer.errors import shortened
from gossamer.search.errors import SearchError
from gossamer.urls import canonicalize, host_of

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "ParsedQuery",
    "QueryTerm",
    "checked_query",
    "parse_query",
]

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
_TOKEN_RE = re.compile(r'(?P<neg>-?)(?:"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+))')
_SITE = "site:"
_OR = "OR"


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """A word, or a phrase when ``phrase`` is set (its words must appear in order), or, with
    ``alternatives``, any one of them (``a OR b``; ``text`` then shows them all)."""

    text: str
    phrase: bool = False
    alternatives: tuple[QueryTerm, ...] = ()

    def shown(self) -> str:
        if self.alternatives:
            return f" {_OR} ".join(term.shown() for term in self.alternatives)
        return f'"{self.text}"' if self.phrase else self.text


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
        parts = [t.shown() for t in self.include]
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


def _either(first: QueryTerm, second: QueryTerm) -> QueryTerm:
    """``first OR second``, flattened: ``a OR b OR c`` is one term of three alternatives."""
    alternatives = (*(first.alternatives or (first,)), second)
    return QueryTerm(
        " ".join(t.text for t in alternatives), alternatives=tuple(dict.fromkeys(alternatives))
    )


def checked_query(text: str) -> ParsedQuery:
    """The query of a command line, where a mistake is better said than searched: an
    unclosed quote, or nothing to look for (only spaces, or only exclusions), is a
    ``SearchError`` saying what to write instead."""
    if text.count('"') % 2:
        raise SearchError(
            'the query has an unclosed quote: end the phrase with a second ", or leave out'
            " the quote to search for the words anywhere"
        )
    parsed = parse_query(text)
    if parsed.is_empty:
        said = f" ({shortened(str(parsed), 60)} only excludes)" if str(parsed) else ""
        raise SearchError(
            f"the query has nothing to look for{said}: give at least one word, phrase or"
            " site:host, e.g. gossamer search DIR wal -journal"
        )
    return parsed


def parse_query(text: str) -> ParsedQuery:
    """Split ``text`` into required, excluded and site terms; ``SearchError`` if too long."""
    if len(text) > MAX_QUERY_CHARS:
        raise SearchError(f"query is longer than {MAX_QUERY_CHARS} characters")
    include: list[QueryTerm] = []
    exclude: list[QueryTerm] = []
    sites: list[str] = []
    exclude_sites: list[str] = []
    either = False  # the last word was OR, right after a required term
    for match in _TOKEN_RE.finditer(text):
        negative = bool(match["neg"])
        phrase, word = match["phrase"], match["word"] or ""
        if phrase is None and word == _OR and not negative:
            either = bool(include)
            continue
        term = None
        if phrase is not None:
            words = " ".join(phrase.split())
            term = QueryTerm(words, phrase=True) if words else None
        elif word.lower().startswith(_SITE):
            host = _site(word[len(_SITE) :])
            if host:
                (exclude_sites if negative else sites).append(host)
        elif word.strip("-"):
            term = QueryTerm(word)
        if term is not None and negative:
            exclude.append(term)
        elif term is not None and either:
            include.append(_either(include.pop(), term))
        elif term is not None:
            include.append(term)
        either = False
    if len(include) + len(exclude) > MAX_TERMS:
        raise SearchError(f"query has more than {MAX_TERMS} terms")
    return ParsedQuery(
        tuple(dict.fromkeys(include)),
        tuple(dict.fromkeys(exclude)),
        tuple(dict.fromkeys(sites)),
        tuple(dict.fromkeys(exclude_sites)),
    )
