"""The seeds file: where a crawl starts, and the first stage of the data flow.

A seeds file holds one URL or bare domain per line; blank lines and ``#`` comments are
allowed. Each usable line becomes a :class:`Seed` of canonical URLs for the frontier to
try in order; each unusable line becomes a :class:`SeedProblem` for the CLI to report,
so one typo (or one line that is not UTF-8, or far too long) does not stop a crawl. Only a
file that cannot be read, or that yields no seed at all, is a fault
(:class:`~gossamer.errors.SeedError`).

A line with credentials (``http://user:pass@host/``) is refused: they would end up in the
WARC files, the database and the reports. Its problem text shows them as ``***``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gossamer.errors import SeedError, shortened
from gossamer.urls import canonicalize, host_of, port_of

__all__ = ["MAX_URL_LENGTH", "Seed", "SeedList", "SeedProblem", "parse_seeds", "read_seeds"]


@dataclass(frozen=True, slots=True)
class Seed:
    """One usable line of the seeds file."""

    urls: tuple[str, ...]  # canonical URLs to try in order; the first that answers wins
    line: int  # 1-based
    text: str  # the line as written, comment and surrounding whitespace removed


@dataclass(frozen=True, slots=True)
class SeedProblem:
    """One line of the seeds file that cannot be used, and why."""

    line: int
    text: str  # the line as written; credentials shown as ***, a very long line cut short
    reason: str


@dataclass(frozen=True, slots=True)
class SeedList:
    seeds: tuple[Seed, ...]
    problems: tuple[SeedProblem, ...]


# A comment starts a line or follows whitespace; a '#' glued to a URL is its fragment.
_COMMENT_RE = re.compile(r"(?:^|\s)#")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# "example.com:8080" also starts like "scheme:"; digits up to the end of the authority
# make it a port instead.
_HOST_PORT_RE = re.compile(r"[A-Za-z0-9.-]+:\d+(?:[/?#]|$)")
_IPV4_RE = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
# DNS labels (RFC 1123) after IDNA; '_' is tolerated because real hosts do use it.
_LABEL_RE = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_MAX_HOSTNAME = 253
MAX_URL_LENGTH = 2_048  # as scope.max_url_length: a longer seed would be dropped as out of scope
# The authority of a URL, or of a bare "host/path" line: up to the first '/', '?' or '#'.
_AUTHORITY_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?([^/?#]*)")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes kept by the "surrogateescape" decoder


def _host_problem(url: str, bare: bool) -> str | None:
    """Why the host of a canonical URL cannot be crawled, or None if it looks fine."""
    hostname = host_of(url)
    if hostname.startswith("[") or _IPV4_RE.fullmatch(hostname):
        return None
    labels = hostname.removesuffix(".").split(".")
    if len(hostname) > _MAX_HOSTNAME or not all(_LABEL_RE.fullmatch(x) for x in labels):
        return f"bad host {hostname!r}"
    # A lone word without a scheme is far more often a stray note than an intranet host.
    if bare and len(labels) == 1 and hostname != "localhost":
        return f"bad host {hostname!r}: a bare name needs a dot or a scheme"
    return None


def _userinfo_span(text: str) -> tuple[int, int] | None:
    """Where the ``user:password`` of a line's authority is, if it has one."""
    if text.lower().startswith("mailto:"):
        return None
    match = _AUTHORITY_RE.match(text)
    if match is None or "@" not in match.group(1):
        return None
    start = match.start(1)
    return start, start + match.group(1).rindex("@")


def _shown(text: str) -> str:
    """A line as a problem report may show it: no credentials, not a megabyte long."""
    span = _userinfo_span(text)
    if span is not None:
        text = f"{text[: span[0]]}***{text[span[1] :]}"
    return shortened(text, 200)


def _port_problem(url: str) -> str | None:
    return "port 0 cannot be connected to" if port_of(url) == 0 else None


def _parse_line(text: str) -> tuple[str, ...] | str:
    """The seed URLs for one cleaned line, or the reason it cannot be used."""
    if any(char.isspace() for char in text):
        return "contains whitespace"
    if not text.isprintable():
        return "contains control characters"
    if _userinfo_span(text) is not None:
        return "credentials in URL are not supported"
    has_scheme = "://" in text or (
        _SCHEME_RE.match(text) is not None and _HOST_PORT_RE.match(text) is None
    )
    if has_scheme:
        scheme = text.partition(":")[0].lower()
        if scheme not in {"http", "https"}:
            return f"scheme {scheme!r} is not http or https"
        url = canonicalize(text)
        if url is None:
            return "not a valid URL"
        return _host_problem(url, bare=False) or _port_problem(url) or (url,)
    secure = canonicalize("https://" + text)
    plain = canonicalize("http://" + text)
    if secure is None or plain is None:
        return "not a valid URL or domain"
    return _host_problem(secure, bare=True) or _port_problem(secure) or (secure, plain)


def _check_line(text: str, max_length: int) -> tuple[str, ...] | str:
    """``_parse_line`` after the checks that must come first: encoding and length."""
    if _NOT_UTF8.search(text):
        return "not valid UTF-8"
    if len(text) > max_length:
        return f"too long: {len(text)} characters, a URL may have at most {max_length}"
    result = _parse_line(text)
    if isinstance(result, tuple) and max(len(url) for url in result) > max_length:
        return f"too long once normalised: a URL may have at most {max_length} characters"
    return result


def parse_seeds(text: str, *, max_url_length: int = MAX_URL_LENGTH) -> SeedList:
    """Read seeds from the text of a seeds file; never raises.

    Bytes that were not UTF-8 arrive as the "surrogateescape" decoder keeps them, and make
    their line a problem; the other lines still count.
    """
    seeds: list[Seed] = []
    problems: list[SeedProblem] = []
    seen: set[tuple[str, ...]] = set()
    # Split on '\n' only, so line numbers match what an editor shows.
    for number, raw in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        comment = _COMMENT_RE.search(raw)
        cleaned = (raw[: comment.start()] if comment else raw).strip()
        if not cleaned:
            continue
        result = _check_line(cleaned, max_url_length)
        if isinstance(result, str):
            problems.append(SeedProblem(line=number, text=_shown(cleaned), reason=result))
        elif result not in seen:
            seen.add(result)
            seeds.append(Seed(urls=result, line=number, text=cleaned))
    return SeedList(seeds=tuple(seeds), problems=tuple(problems))


def read_seeds(path: Path, *, max_url_length: int = MAX_URL_LENGTH) -> SeedList:
    """Read and parse a seeds file; raises SeedError if it is unusable as a whole."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise SeedError(f"seeds file not found: {path}") from exc
    except OSError as exc:
        raise SeedError(f"seeds file unreadable: {path} ({exc.strerror or exc})") from exc
    seed_list = parse_seeds(data.decode("utf-8", "surrogateescape"), max_url_length=max_url_length)
    if not seed_list.seeds:
        count = len(seed_list.problems)
        shown = "; ".join(f"line {p.line}: {p.reason}" for p in seed_list.problems[:3])
        more = f"; and {count - 3} more" if count > 3 else ""
        detail = f": {shown}{more}" if count else ""
        raise SeedError(f"bad seed: no valid seed in {path} ({count} problems{detail})")
    return seed_list
