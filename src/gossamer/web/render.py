"""Web UI, markup basics: escaping, links, the page layout and the style sheet.

Data flow: web handlers -> pages -> **render** -> HTML. Everything a crawled page supplied
(titles, URLs, snippets, headers) passes through :func:`esc` on its way into markup; a URL
becomes a link only through :func:`outbound` (http and https only) or :func:`local` (our own
routes, with the query string built by ``urlencode``; :func:`route` is the same link before
escaping, for markup that a parser serialises). There are no templates, and no script but the
Crawl page's own (``layout(script=...)``, a file of ours, never inline): every other page is
plain HTML, which lets its policy forbid scripts altogether.
"""

from __future__ import annotations

import html
from urllib.parse import urlencode

__all__ = ["STYLE", "esc", "layout", "local", "outbound", "route"]


def esc(text: object) -> str:
    """Text as HTML character data or a double-quoted attribute value."""
    return html.escape(str(text), quote=True)


def route(path: str, **params: object) -> str:
    """A link to one of our routes, not yet escaped; empty parameters are left out."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "", False)})
    return f"{path}?{query}" if query else path


def local(path: str, **params: object) -> str:
    """A link to one of our routes, escaped for an attribute."""
    return esc(route(path, **params))


def outbound(url: str, text: str, css: str = "") -> str:
    """A link to a crawled URL, or plain text when it is not http(s)."""
    if not url.lower().startswith(("http://", "https://")):
        return f'<span class="{esc(css)}">{esc(text)}</span>' if css else esc(text)
    cls = f' class="{esc(css)}"' if css else ""
    # noreferrer: the crawled site learns nothing about our UI or the query.
    return f'<a{cls} href="{esc(url)}" rel="noopener noreferrer nofollow">{esc(text)}</a>'


_TABS = (("web", "Web", "/search"), ("images", "Images", "/images"))


def _tabs(query: str, tab: str) -> str:
    """Seed 002's result tabs: the same query as pages or as images."""
    current = ' aria-current="page"'
    links = "".join(
        f'<a href="{local(path, q=query)}"{current if name == tab else ""}>{label}</a>'
        for name, label, path in _TABS
    )
    return f'<nav class="tabs" aria-label="Result types">{links}</nav>'


def layout(
    title: str,
    body: str,
    *,
    query: str = "",
    english: bool = False,
    script: str = "",
    tab: str = "",
) -> str:
    """A whole page; ``script`` is the path of one of our scripts (the Crawl page only);
    ``tab`` ("web", "images") shows the result tabs and which one this is."""
    checked = " checked" if english else ""
    loads = f'<script src="{esc(script)}" defer></script>' if script else ""
    action = "/images" if tab == "images" else "/search"
    tabs = _tabs(query, tab) if tab else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} - Gossamer</title>"
        # An empty icon: the browser asks for no /favicon.ico (which would be a 404).
        '<link rel="icon" href="data:,">'
        f'<link rel="stylesheet" href="/style.css">{loads}</head><body>'
        '<header class="top"><a class="brand" href="/">Gossamer</a>'
        f'<form action="{action}" method="get" role="search">'
        f'<input type="search" name="q" value="{esc(query)}" aria-label="Search" size="50">'
        f'<label><input type="checkbox" name="lang" value="en"{checked}> English only</label>'
        '<button type="submit">Search</button></form>'
        '<nav class="sections"><a href="/">Search</a> <a href="/crawl">Crawl</a></nav></header>'
        f"<main>{tabs}{body}</main></body></html>\n"
    )


STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #202124; }
header.top { display: flex; gap: 1.5em; align-items: center; padding: .8em 1.5em;
             border-bottom: 1px solid #ddd; background: #fafafa; }
header.top form { display: flex; gap: .6em; align-items: center; }
.brand { font-weight: 700; font-size: 1.3em; text-decoration: none; color: #3c4ba0; }
main { max-width: 52em; padding: 0 1.5em 3em; }
.stats, .note { color: #5f6368; font-size: .9em; }
section.host { border-left: 3px solid #e3e6f3; padding-left: .9em; margin: 1.4em 0; }
section.host > h2 { font-size: .85em; color: #3c4ba0; margin: 0 0 .3em; font-weight: 600; }
.result { margin: 0 0 1.1em; }
.result h3 { font-size: 1.1em; margin: 0; font-weight: 500; }
.url { color: #188038; font-size: .85em; word-break: break-all; }
.snippet { margin: .2em 0; }
mark { background: #fff3b0; color: inherit; font-weight: 600; }
.actions { font-size: .85em; }
.actions a { margin-right: 1em; }
nav.pages { margin-top: 2em; display: flex; gap: .7em; flex-wrap: wrap; }
nav.pages .current { font-weight: 700; }
table.meta { border-collapse: collapse; font-size: .9em; }
table.meta th { text-align: left; padding: .2em 1em .2em 0; color: #5f6368; font-weight: 500;
                vertical-align: top; }
table.meta td { word-break: break-all; }
.cached-bar { background: #fff8e1; border: 1px solid #f0d98c; padding: .6em 1em; margin: 1em 0; }
iframe.cached { width: 100%; height: 75vh; border: 1px solid #ccc; }
ul.links { font-size: .85em; }
nav.sections { margin-left: auto; display: flex; gap: 1em; }
.state { font-weight: 600; }
body[data-state="running"] .state { color: #188038; }
body[data-state="paused"] .state, body[data-state="pausing"] .state { color: #b06000; }
table.grid { border-collapse: collapse; font-size: .9em; margin-bottom: 1em; }
table.grid th, table.grid td { padding: .2em .9em .2em 0; text-align: left; }
table.grid td.n, table.grid th.n { text-align: right; font-variant-numeric: tabular-nums; }
img.chart { max-width: 100%; border: 1px solid #eee; }
form.control { display: inline-block; margin: 0 .6em .6em 0; }
form.control.seeds { display: block; max-width: 40em; }
form.seeds textarea { width: 100%; font-family: monospace; }
main:has(.dashboard) { max-width: 72em; }
nav.tabs { display: flex; gap: 1.2em; margin: .8em 0; border-bottom: 1px solid #ddd; }
nav.tabs a { padding: .3em 0; text-decoration: none; color: #5f6368; }
nav.tabs a[aria-current] { color: #3c4ba0; border-bottom: 3px solid #3c4ba0; font-weight: 600; }
main:has(ul.images) { max-width: 72em; }
ul.images { list-style: none; padding: 0; display: grid; gap: 1em;
            grid-template-columns: repeat(auto-fill, minmax(13em, 1fr)); }
ul.images li { border: 1px solid #e3e6f3; padding: .6em; font-size: .85em; overflow: hidden; }
ul.images img { max-width: 100%; max-height: 10em; display: block; margin-bottom: .4em; }
ul.images .file { font-weight: 600; word-break: break-all; }
iframe.weather { width: 100%; height: 9em; border: 0; }
.weather-box { font-size: .9em; }
.weather-box table { border-collapse: collapse; }
.weather-box td, .weather-box th { padding: .1em .7em .1em 0; text-align: left; }
"""
