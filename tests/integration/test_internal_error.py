"""A fault of ours while handling one response is that URL's outcome, never the crawl's end.

The parser is wrapped so that it raises on a few chosen pages, as a bug would: the crawl
must go on, count ``internal_error``, give those URLs a ``pages`` row with the error (the
traceback in the log), and a resume must not ask them again. The same boundary is
exercised with real bytes, in one process and with ``--workers 2``, by the hostile cases
and the property test of ``test_any_response.py``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.crawling import recorder
from gossamer.parse import ParsedPage
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import crawl, query

SPEC = WebSpec(seed=11, hosts=4, pages_per_host=12)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def _doomed(site: ThreadedTestWeb) -> set[str]:
    """Two pages that are not seeds, whose parse will fail."""
    seeds = set(site.seeds())
    pages = sorted(url for url in site.expected() if url not in seeds and url.endswith(".html"))
    return set(pages[:2])


def test_a_failing_parse_is_one_urls_outcome(
    site: ThreadedTestWeb,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    doomed = _doomed(site)
    real = recorder.parse_html

    def parse(body: bytes, url: str, *args: object, **kwargs: object) -> ParsedPage:
        if url in doomed:
            raise RuntimeError(f"parser bug on {url}")
        return real(body, url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recorder, "parse_html", parse)
    with caplog.at_level(logging.ERROR, logger="gossamer.crawling.exchange"):
        run = crawl(site, tmp_path)
    assert run.outcome.reason == "exhausted"
    assert run.outcome.stats.errors["internal_error"] == 2
    rows = query(run.out / "crawl.db", "SELECT url, error FROM pages WHERE error IS NOT NULL")
    assert {url for url, error in rows if error == "internal_error"} == doomed
    logged = [r for r in caplog.records if r.getMessage().startswith("internal error handling")]
    assert {r.getMessage().rsplit(" ", 1)[1] for r in logged} == doomed
    assert all(r.exc_info for r in logged)  # the traceback goes to the log
    stats = json.loads((run.out / "reports" / "stats.json").read_text())
    assert stats["errors"]["internal_error"] == 2
    # The crawl went on past the faults: what it missed is only what cannot be reached
    # without the doomed pages' links (never read), judged on an unharmed crawl of the web.
    with ThreadedTestWeb(build_web(SPEC)) as twin:
        (tmp_path / "whole").mkdir()
        whole = crawl(twin, tmp_path / "whole")
        here = {str(twin.port): str(site.port)}
        baseline = {_moved(url, here) for url in twin.audit.fetched()}
    graph: dict[str, set[str]] = {}
    for src, dst in query(whole.out / "crawl.db", "SELECT from_url, to_url FROM link_urls"):
        graph.setdefault(_moved(str(src), here), set()).add(_moved(str(dst), here))
    reachable, todo = set(site.seeds()), list(site.seeds())
    while todo:
        url = todo.pop()
        for target in graph.get(url, set()) if url not in doomed else set():
            if target not in reachable:
                reachable.add(target)
                todo.append(target)
    missed = baseline - set(site.audit.fetched())
    assert not missed & reachable
    assert len(missed) < len(baseline) // 4

    asked = len(site.audit.fetched())
    again = crawl(site, tmp_path)  # resume the same folder: nothing left to ask
    assert again.outcome.reason == "exhausted"
    later = site.audit.fetched()[asked:]
    assert not doomed & set(later)


def _moved(url: str, ports: dict[str, str]) -> str:
    """``url`` as served by the other server of the same web (another port)."""
    for old, new in ports.items():
        url = url.replace(f":{old}/", f":{new}/")
    return url
