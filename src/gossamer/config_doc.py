"""The settings reference a user reads, ``docs/CONFIG.md``, written from the typed config.

Data flow: ``config`` (the dataclasses: names, types, defaults, and the comment beside each
field) -> **config_doc** -> ``docs/CONFIG.md``. Run ``python -m gossamer.config_doc`` to
write the file again after changing a setting; a test fails while the file and the
dataclasses disagree, and while a setting has no meaning to show.

A field's meaning is its comment in ``config.py`` (on its line, or the lines just above
it); :data:`_MEANINGS` says it for the fields whose name says enough to a developer but not
to a user, and wins over the comment.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from gossamer import __version__
from gossamer.config import (
    CrawlConfig,
    ExtractRule,
    FetchConfig,
    PolitenessConfig,
    RecrawlConfig,
    RenderConfig,
    ScopeConfig,
    SiteConfig,
)
from gossamer.config_check import settings_by_name

__all__ = ["DOC_PATH", "render"]

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "CONFIG.md"

_SECTIONS: tuple[tuple[str, type[Any], str], ...] = (
    ("", CrawlConfig, "The crawl (top level, or the `[crawl]` table)"),
    ("politeness", PolitenessConfig, "`[politeness]`: how hard a host is pressed"),
    ("fetch", FetchConfig, "`[fetch]`: one request and its answer"),
    ("scope", ScopeConfig, "`[scope]`: which URLs are crawled at all"),
    ("recrawl", RecrawlConfig, "`[recrawl]`: when a page is due again (`--recrawl due`)"),
    ("render", RenderConfig, "`[render]`: pages rendered in Chromium (the render extra)"),
)

_MEANINGS = {
    "max_pages": "stop after storing this many pages (`--max-pages`); none: no limit",
    "time_limit": 'stop after this long, e.g. `"2h"` (`--time`); none: no limit',
    "concurrency": "requests in flight at once, per worker process (`--concurrency`)",
    "workers": "crawler processes, hosts split between them by a hash (`--workers`);"
    " default: one per usable core",
    "resolve": 'map host names to addresses, like curl: `["HOST:IP", "*.example:IP"]`'
    " (`--resolve`)",
    "warc_max_bytes": "size at which a WARC file is closed and the next one started",
    "report_interval": "seconds between the interim reports written during a crawl",
    "progress": "show a progress line on stderr when it is a terminal (`--no-progress`)",
    "politeness.delay": "minimum seconds between two requests to one host (`--delay`)",
    "politeness.respect_nofollow": "skip links marked rel=nofollow (`--nofollow`)",
    "fetch.user_agent": "the User-Agent header sent; its first word is the name robots.txt"
    " rules are matched against (`--user-agent`)",
    "fetch.connect_timeout": "seconds to wait for a connection",
    "fetch.read_timeout": "seconds to wait for the next bytes of an answer",
    "fetch.keep_types": "media types that are stored as pages; others are counted and dropped",
    "fetch.ca_file": "PEM file of extra certificate authorities to trust (`--ca-file`)",
    "fetch.http2": "send https requests over HTTP/2 where the server offers it (ALPN), HTTP/1.1"
    " where not; recorded in HTTP/1.1 form (`--http2`, the http2 extra)",
    "scope.max_depth": "ignore links more than this many hops from a seed (`--max-depth`);"
    " none: no limit",
    "scope.max_url_length": "longer URLs are refused",
    "scope.max_pages_per_host": "URLs admitted per origin: the last stop for traps no rule"
    " catches (endless calendars); none: no limit",
    "scope.max_family": "link hops a URL family (numbers and dates masked) may feed itself"
    " before its members are refused as a trap; none turns the rule off",
    "scope.sitemaps": "read robots.txt Sitemap lines (or /sitemap.xml) for URLs"
    " (`--no-sitemaps` turns it off)",
    "politeness.robots_wait": "when only hosts whose robots.txt is unavailable are left, wait"
    " at most this long for them, then stop and leave them to `--resume` (`--robots-wait`)",
    "politeness.max_per_host": "requests in flight per host (`--max-per-host`)",
    "politeness.max_per_ip": "requests in flight per server address, for shared hosting"
    " (`--max-per-ip`); none: no limit",
    "scope.extract": "fields pulled from every HTML page while crawling, into DIR/items.jsonl;"
    " written as top-level `[[extract]]` tables (see below; `gossamer extract DIR` applies"
    " them afterwards)",
    "sites": "per-site settings, written as top-level `[[site]]` tables (see below)",
    "scope.plugins": "plugin files (`.py`) or names of `gossamer.plugins` entry points, run on"
    " every HTML page and link (docs/DATA.md); may be written at the top level",
}

_FIELD_LINE = re.compile(r"^\s*(\w+):[^=]*(?:=.*?)?(?:#\s*(?P<comment>.*))?$")


def _comments(kind: type[Any]) -> dict[str, str]:
    """Each field's comment in the class's source: the one on its line, else those above."""
    found: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(kind).splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("# "))
            continue
        match = _FIELD_LINE.match(line)
        if match and not stripped.startswith(("def ", "@", '"""')):
            text = match["comment"] or " ".join(above)
            if text:
                found[match[1]] = text
        above = []
    return found


def _type(annotation: str) -> str:
    words = {"int": "integer", "float": "seconds", "bool": "true/false", "str": "string"}
    text = annotation.replace(" ", "")
    optional = text.endswith("|None")
    base = text.removesuffix("|None")
    shown = "list of strings" if base.startswith("tuple[str") else words.get(base, base)
    if base.startswith("tuple[ExtractRule"):
        shown = "list of `[[extract]]` tables"
    if base.startswith("tuple[SiteConfig"):
        shown = "list of `[[site]]` tables"
    if base.startswith("tuple[tuple[str,str]"):
        shown = 'table of header names and values: `{Accept-Language = "de"}`'
    if shown == "seconds":
        shown = 'seconds (a number, or "90s", "15m", "2h")'
    return f"{shown}, or absent" if optional else shown


def _default(value: Any, name: str) -> str:
    if name == "workers":
        return "one per usable core"
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(f'"{item}"' for item in value) + "]"
    if isinstance(value, str):
        # The version changes with every release; the file should not.
        return '"' + value.replace(__version__, "VERSION") + '"'
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:_}" if isinstance(value, int) else str(value)  # TOML reads 1_000 too


def _rows() -> list[tuple[str, str, str, str, str]]:
    """(section, key, type, default, meaning) of every setting, in the classes' order."""
    defaults = settings_by_name(CrawlConfig(seeds=Path("-"), out=Path("-")))
    rows = []
    for section, kind, _ in _SECTIONS:
        comments = _comments(kind)
        for item in dataclasses.fields(kind):
            dotted = f"{section}.{item.name}" if section else item.name
            if dotted not in defaults:
                continue  # a section, or seeds and out (the command line names those)
            meaning = _MEANINGS.get(dotted) or comments.get(item.name, "")
            rows.append(
                (section, item.name, _type(str(item.type)), _default(defaults[dotted], dotted),
                 meaning)
            )  # fmt: skip
    return rows


def missing_meanings() -> list[str]:
    """The settings this reference cannot explain: each needs a comment or a meaning."""
    return [f"{s}.{k}" if s else k for s, k, _, _, meaning in _rows() if not meaning]


def render() -> str:
    """The whole of ``docs/CONFIG.md``."""
    lines = [
        "# Settings of `gossamer crawl --config FILE`",
        "",
        "<!-- Written by `python -m gossamer.config_doc` from src/gossamer/config.py;"
        " do not edit by hand. -->",
        "",
        "A TOML file of crawl settings. Keys of the crawl itself go at the top level (or in a"
        " `[crawl]` table); the others in their table. A key may be written with `-` for `_`;"
        " `seeds` and `out` are ignored (the command line names them); an unknown key is an"
        " error. A flag given on the command line wins over the file. Durations are seconds,"
        ' or a string such as `"90s"`, `"15m"`, `"2h"`.',
        "",
        "```toml",
        "max_pages = 5000",
        'time_limit = "2h"',
        "",
        "[politeness]",
        "delay = 2.0",
        "",
        "[scope]",
        "max_depth = 8",
        "```",
    ]
    rows = _rows()
    for section, _, title in _SECTIONS:
        lines += ["", f"## {title}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        # "absent": the key left out of the file (TOML has no null), which is the default.
        for where, key, kind, default, meaning in rows:
            if where == section:
                cell = meaning.replace("|", "\\|")
                lines.append(f"| `{key}` | {kind} | `{default}` | {cell} |")
    lines += _extract_section()
    lines += _site_section()
    return "\n".join(lines) + "\n"


def _extract_section() -> list[str]:
    """The keys of one ``[[extract]]`` table, from ``ExtractRule``'s fields and comments."""
    comments = _comments(ExtractRule)
    lines = [
        "",
        "## `[[extract]]`: fields pulled from pages",
        "",
        "Each table is one field of the item written for every HTML page (2xx) whose URL the"
        " rule's `url` finds, as one line of `DIR/items.jsonl`:"
        ' `{"url": ..., "source": "extract", "price": ...}`.',
        "",
        "```toml",
        "[[extract]]",
        'field = "price"',
        'css = ".price"',
        'url = "/product/"',
        "",
        "[[extract]]",
        'field = "sku"',
        'regex = \'data-sku="([^"]+)"\'',
        "```",
        "",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for item in dataclasses.fields(ExtractRule):
        default = (
            "(required)"
            if item.default is dataclasses.MISSING
            else _default(item.default, item.name)
        )
        cell = comments.get(item.name, "").replace("|", "\\|")
        lines.append(f"| `{item.name}` | {_type(str(item.type))} | `{default}` | {cell} |")
    return lines


def _site_section() -> list[str]:
    """The keys of one ``[[site]]`` table, from ``SiteConfig``'s fields and comments."""
    comments = _comments(SiteConfig)
    lines = [
        "",
        "## `[[site]]`: settings per site",
        "",
        "Each table gives the hosts its `match` glob names their own values for some of the"
        " crawl's settings; a key left out keeps the crawl's. `*` stands for any run of"
        " characters, dots included: `*.example.org` names every subdomain of example.org but"
        " not example.org itself, `*` names every host. Host names are compared in lower case,"
        " international ones as punycode (`xn--...`), without a port.",
        "",
        "When several tables match a host, the most specific comes first: an exact host name"
        " before any glob, then the glob with more characters besides `*`"
        " (`*.shop.example.org` before `*.example.org` before `*`), then the table written"
        " first. Each key comes from the first table in that order that sets it.",
        "",
        "A site may be given a shorter delay than the crawl's, never a shorter one than its"
        " robots.txt asks: a larger Crawl-delay still wins, and a host whose robots.txt names"
        " a Crawl-delay is asked one request at a time. A shared crawl (`--frontier`) asks"
        " every host one request at a time whatever `max_per_host` says. A site's `proxy` and"
        " `cookies` are checked as `--proxy` and `--cookies` are and stand for them for the"
        " site's requests; a cookie file must be at the same path on every machine of a"
        " shared crawl.",
        "",
        "```toml",
        "[[site]]",
        'match = "*.example.org"',
        'delay = "0.5s"',
        "max_per_host = 2",
        "",
        "[[site]]",
        'match = "shop.example.org"',
        'user_agent = "examplebot/1.0 (+https://example.net/bot)"',
        'headers = { Accept-Language = "de" }',
        'cookies = "cookies.txt"',
        "```",
        "",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for item in dataclasses.fields(SiteConfig):
        default = "(required)" if item.default is dataclasses.MISSING else "the crawl's"
        cell = comments.get(item.name, "").replace("|", "\\|")
        lines.append(f"| `{item.name}` | {_type(str(item.type))} | {default} | {cell} |")
    return lines


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DOC_PATH
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
