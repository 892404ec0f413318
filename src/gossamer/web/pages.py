"""Web UI, pages: search results, page info, the cached-copy frame, errors.

Data flow: handlers (``app``) -> **pages** -> HTML. Each function takes values from the
search side and returns a whole document; every crawled string goes through ``esc``. Titles
and snippets also lose control and format characters first (``printable``, shared with the
terminal output): a bidi override or isolate in a title would otherwise reorder the text
around it, and zero-width characters hide what a title really says. A result's title is cut
at ``TITLE_CHARS``; the page-info view shows it whole. The page info lists the page's
versions (every archived capture: full, not modified, gone, moved), newest first, each
linked to its own cached copy (``/cached?url=&at=``), the one crawl.db points at marked
"current".
"""

from __future__ import annotations

from datetime import UTC, datetime

from gossamer.search.info import PageInfo
from gossamer.search.output import printable
from gossamer.search.results import SearchHit, SearchPage
from gossamer.search.versions import PageVersion
from gossamer.store.docstore import DocRow
from gossamer.web.cached import MAX_SHOWN
from gossamer.web.links import SANDBOX_ALLOWS
from gossamer.web.render import esc, layout, local, outbound

__all__ = [
    "TITLE_CHARS",
    "cached_page",
    "error_page",
    "home_page",
    "info_page",
    "results_page",
    "shown_title",
]

_PAGE_LINKS = 5  # page numbers shown on each side of the current one
TITLE_CHARS = 120  # a longer title is cut in lists of pages, with an ellipsis


def shown_title(title: str, limit: int | None = TITLE_CHARS) -> str:
    """A crawled title as shown: without control or format characters, spaces collapsed,
    cut at ``limit`` characters with an ellipsis (``None``: whole)."""
    text = " ".join(printable(title).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "\u2026"
    return text


def home_page(documents: int | None, missing: str = "") -> str:
    """The search home; ``documents`` is None while the folder has no complete index
    (``missing`` says why), as when it is still being crawled."""
    if documents is None:
        body = (
            f'<p class="note">Search is not ready: {esc(missing)}.</p>'
            '<p>Watch the crawl on the <a href="/crawl">Crawl</a> page.</p>'
        )
        return layout("Search", body)
    body = (
        f'<p class="note">Search {documents} pages. Operators: <code>"exact phrase"</code>, '
        "<code>-word</code>, <code>site:example.org</code>.</p>"
    )
    return layout("Search", body)


def error_page(title: str, message: str, *, query: str = "") -> str:
    return layout(title, f"<h1>{esc(title)}</h1><p>{esc(message)}</p>", query=query)


def _snippet(hit: SearchHit) -> str:
    return "".join(
        f"<mark>{esc(printable(piece))}</mark>" if marked else esc(printable(piece))
        for piece, marked in hit.snippet.parts()
    )


def _duplicate_links(hit: SearchHit, query: str, lang: str | None) -> str:
    """A link to each list of the hit's duplicates in its page info: exact, then near."""
    target = local("/info", url=hit.url, q=query, lang=lang)
    links = []
    if hit.same_content:
        noun = "page" if hit.same_content == 1 else "pages"
        text = f"{hit.same_content} other {noun} with the same content"
        links.append(f'<a href="{target}#same">{text}</a>')
    if hit.near_duplicates:
        noun = "near-duplicate" if hit.near_duplicates == 1 else "near-duplicates"
        links.append(f'<a href="{target}#near">{hit.near_duplicates} {noun}</a>')
    return "".join(links)


def _result(hit: SearchHit, query: str, english: bool) -> str:
    title = shown_title(hit.title) or hit.url
    lang = "en" if english else None
    more = _duplicate_links(hit, query, lang)
    kind = ' <span class="note">[PDF]</span>' if hit.kind == "pdf" else ""
    return (
        '<article class="result">'
        f"<h3>{outbound(hit.url, title)}{kind}</h3>"
        f'<div class="url">{esc(hit.url)}</div>'
        f'<p class="snippet">{_snippet(hit)}</p>'
        '<div class="actions">'
        f'<a href="{local("/cached", url=hit.url)}">cached</a>'
        f'<a href="{local("/info", url=hit.url, q=query, lang=lang)}">page info</a>'
        f"{more}</div></article>"
    )


def _pagination(result: SearchPage, english: bool) -> str:
    if result.pages <= 1:
        return ""
    lang = "en" if english else None
    links = []
    current = result.page
    if current > 1:
        links.append(f'<a href="{local("/search", q=result.query, page=current - 1, lang=lang)}"'
                     ' rel="prev">Previous</a>')  # fmt: skip
    low, high = max(1, current - _PAGE_LINKS), min(result.pages, current + _PAGE_LINKS)
    for number in range(low, high + 1):
        if number == current:
            links.append(f'<span class="current" aria-current="page">{number}</span>')
        else:
            target = local("/search", q=result.query, page=number, lang=lang)
            links.append(f'<a href="{target}">{number}</a>')
    if current < result.pages:
        links.append(f'<a href="{local("/search", q=result.query, page=current + 1, lang=lang)}"'
                     ' rel="next">Next</a>')  # fmt: skip
    return f'<nav class="pages" aria-label="Result pages">{"".join(links)}</nav>'


def results_page(result: SearchPage, english: bool, weather: str = "") -> str:
    """A page of results; ``weather`` is the address of the weather box's frame, which
    loads on its own (the results never wait for it), or "" for none."""
    query = result.query
    box = (
        f'<iframe class="weather" src="{esc(weather)}" title="Weather" loading="eager"></iframe>'
        if weather
        else ""
    )
    if result.matched == "none":
        body = f'{box}<p class="stats">No results for <b>{esc(query)}</b>.</p>'
        return layout(query or "Search", body, query=query, english=english, tab="web")
    parts = [box] if box else []
    if result.matched == "any":
        parts.append('<p class="note">No page has every term; these have some of them.</p>')
    if result.matched == "meaning":
        parts.append('<p class="note">No page has these words; these are close in meaning.</p>')
    parts.append(
        f'<p class="stats">{result.matches} matches, {result.results} results'
        f" ({result.seconds * 1000:.0f} ms) - page {result.page} of {result.pages}</p>"
    )
    for host, hits in result.by_host():
        rendered = "".join(_result(hit, query, english) for hit in hits)
        parts.append(f'<section class="host"><h2>{esc(host)}</h2>{rendered}</section>')
    parts.append(_pagination(result, english))
    return layout(query, "".join(parts), query=query, english=english, tab="web")


def _when(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def cached_page(url: str, crawled: str, raw_link: str, cut: int = 0, note: str = "") -> str:
    """The frame around a cached copy; the copy itself loads sandboxed from ``raw_link``.
    ``cut``: bytes of the archived page the copy leaves out; ``note``: what the version
    shown is, when it is not the page as crawl.db has it now (``load_version``)."""
    shown = f"It shows the page's first {MAX_SHOWN:,} bytes of {MAX_SHOWN + cut:,}. " if cut else ""
    said = f'<p class="note">{esc(note)}</p>' if note else ""
    info = local("/info", url=url)
    body = (
        '<div class="cached-bar">This is Gossamer\'s copy of '
        f"{outbound(url, url)} as it was crawled on <time>{esc(crawled)}</time>. {shown}"
        f'Scripts are disabled. <a href="{info}">Page info</a>'
        f' <a href="{info}#versions">Versions</a>{said}</div>'
        # No scripts, no forms, a unique origin; links may only do what ``links`` makes of them.
        f'<iframe class="cached" sandbox="{SANDBOX_ALLOWS}" referrerpolicy="no-referrer"'
        f' src="{raw_link}"'
        f' title="cached copy"></iframe>'
    )
    return layout(f"Cached: {url}", body)


def _rows(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def _url_list(urls: tuple[str, ...], total: int) -> str:
    items = "".join(f'<li><a href="{local("/info", url=u)}">{esc(u)}</a></li>' for u in urls)
    shown = f" (first {len(urls)})" if total > len(urls) else ""
    return f"<p>{total} in total{shown}</p><ul class='links'>{items}</ul>"


def _doc_list(docs: tuple[DocRow, ...], label: str) -> str:
    if not docs:
        return "<p>None.</p>"
    items = "".join(
        f'<li><span class="note">{label}</span> '
        f'<a href="{local("/info", url=d.url)}">{esc(shown_title(d.title) or d.url)}</a> '
        f'<span class="url">{esc(d.url)}</span></li>'
        for d in docs
    )
    return f"<ul class='links'>{items}</ul>"


def _version_label(version: PageVersion) -> str:
    """What a capture was, in words: full, not modified, gone or moved."""
    kind = version.kind
    if kind == "revisit":
        return "not modified" if version.status == 304 else "same content again"
    if kind == "gone":
        return "gone"
    return "moved" if kind == "moved" else "full response"


def _versions(info: PageInfo) -> str:
    """The page's captures, newest first, each linked to its own cached copy."""
    if not info.versions:
        return "<p>None archived.</p>"
    current = info.current
    rows = []
    for version in info.versions:
        copy = local("/cached", url=info.url, at=version.timestamp)
        now = ' <span class="note">(current)</span>' if version == current else ""
        rows.append(
            f'<tr><td><a href="{copy}"><time>{esc(version.when)}</time></a></td>'
            f"<td>{esc(version.status)}</td><td>{esc(_version_label(version))}{now}</td></tr>"
        )
    head = "<tr><th>archived</th><th>status</th><th>version</th></tr>"
    return f"<table class='meta'>{head}{''.join(rows)}</table>"


# pages.render, as the page info says it (gossamer.render)
_RENDERED = {
    "rendered": "in a browser: its links and text are those its scripts made",
    "unsettled": "in a browser, still busy at the time limit: kept as it stood then",
    "failed": "no: the browser could not load it, so its own HTML was read",
    "hint": "no, though it looked built by scripts (see --render)",
}


def info_page(info: PageInfo, english: bool) -> str:
    whole = shown_title(info.doc.title, None) if info.doc is not None else ""
    title = whole or info.url
    parts = [f"<h1>{esc(title)}</h1>", f'<p class="url">{outbound(info.url, info.url)}</p>']
    parts.append(f'<p class="actions"><a href="{local("/cached", url=info.url)}">cached</a></p>')
    if info.scores is not None:
        s = info.scores
        parts.append(f"<h2>Scores for {esc(info.query)}</h2>")
        parts.append("<table class='meta'>" + _rows([
            ("blended", f"{s.blended:.4f}"),
            ("title tier", f"{s.tier} (0: every term in the title)"),
            ("BM25", f"{s.bm25:.4f} ({s.text:.3f} of the best match)"),
            ("PageRank, scaled", f"{s.pagerank_scaled:.4f}"),
            ("host rank, scaled", f"{s.host_rank_scaled:.4f}"),
        ]) + "</table>")  # fmt: skip
    elif info.query:
        parts.append(f"<p class='note'>This page does not match {esc(info.query)}.</p>")
    parts.append("<h2>PageRank</h2><table class='meta'>" + _rows([
        ("URL", f"{info.pagerank:.3e} ({info.pagerank_relative:.2f} x average)"),
        ("host " + info.host, f"{info.host_rank:.3e} ({info.host_rank_relative:.2f} x average)"),
    ]) + "</table>")  # fmt: skip
    fetch = info.fetch
    doc = info.doc
    meta: list[tuple[str, str]] = []
    if fetch is not None:
        location = f"{fetch.warc_file} @ {fetch.warc_offset} (+{fetch.warc_length})"
        meta += [
            ("status", esc(fetch.status)),
            ("content type", esc(fetch.content_type or "")),
            ("bytes", esc(fetch.length if fetch.length is not None else "")),
            ("fetched", esc(_when(fetch.fetched_at))),
            ("fetch time", esc(f"{(fetch.elapsed or 0.0) * 1000:.0f} ms")),
            ("depth", esc(fetch.depth)),
            ("found on", outbound(fetch.referrer or "", fetch.referrer or "(seed)")),
            ("WARC record", esc(location if fetch.warc_file else "none")),
            ("content id", esc(fetch.doc_id or "")),
            ("error", esc(fetch.error or "")),
            ("rendered", esc(_RENDERED.get(fetch.render or "", "no"))),
        ]
    if doc is not None:
        meta += [
            ("language", esc(doc.lang)),
            ("kind", esc(doc.kind)),
            ("words", esc(doc.words)),
            ("indexed", "yes" if doc.indexed else "no"),
            ("simhash", esc(f"{doc.simhash:016x}" if doc.simhash is not None else "")),
        ]
    parts.append("<h2>Fetch</h2>")
    parts.append(f"<table class='meta'>{_rows(meta)}</table>" if meta else "<p>Not fetched.</p>")
    parts.append(f'<h2 id="versions">Versions ({len(info.versions)})</h2>')
    parts.append(_versions(info))
    parts.append(f'<h2 id="same">Pages with the same content ({len(info.same_content)})</h2>')
    parts.append(_doc_list(info.same_content, "same content"))
    parts.append(f'<h2 id="near">Near-duplicates ({len(info.near_duplicates)})</h2>')
    parts.append(_doc_list(info.near_duplicates, "near-duplicate"))
    parts.append("<h2>Links in</h2>" + _url_list(info.links_in, info.links_in_count))
    parts.append("<h2>Links out</h2>" + _url_list(info.links_out, info.links_out_count))
    return layout(f"Info: {title}", "".join(parts), query=info.query, english=english)
