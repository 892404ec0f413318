"""The Crawl page and the crawl report in a real headless Chromium.

One crawl of the test web is watched and steered from the page alone: its page count rises
without a reload, a pause stops every request (judged by the test web's own log), a seed added
from the page is crawled after the resume, and Stop ends the crawl. The report written at the
end opens with no console error and no request beyond its own file.

Needs Debian's ``chromium`` and the ``playwright`` package, as the search UI's browser test
(whose skip rule, launch flags and threaded server this shares); skipped with the reason if
either is missing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.web import make_app

from .conftest import CrawlRun, crawl
from .dashboard_rig import (
    ADDED_HOST,
    ELSEWHERE,
    LIMIT,
    SLOW,
    ThreadedCrawl,
    control_ready,
    requests_to,
)
from .test_web_ui_browser import ServedApp, launch_chromium, sync_api

PAGES = "() => Number(document.getElementById('t-pages').textContent.replace(/,/g, ''))"


@pytest.fixture
def ready(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    return control_ready(monkeypatch)


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    yield from launch_chromium()


@pytest.fixture
def page(browser: sync_api.Browser) -> Iterator[sync_api.Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(LIMIT * 1000)
    yield opened
    context.close()


def problems_of(page: sync_api.Page) -> list[str]:
    """Console errors and uncaught exceptions of ``page`` from now on (CSP refusals too)."""
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: found.append(str(error)))
    return found


def state_is(page: sync_api.Page, state: str) -> None:
    page.wait_for_function("s => document.body.dataset.state === s", arg=state)


def test_watch_and_steer_a_crawl_from_the_page(
    page: sync_api.Page, tmp_path: Path, ready: threading.Event
) -> None:
    problems = problems_of(page)
    loads: list[str] = []
    page.on("load", lambda loaded: loads.append(loaded.url))
    with ThreadedTestWeb(build_web(SLOW)) as site, ThreadedTestWeb(build_web(ELSEWHERE)) as other:
        running = ThreadedCrawl(site, tmp_path).start()
        assert ready.wait(LIMIT)
        seed = f"http://{ADDED_HOST}:{other.origins.http}/"
        with ServedApp(make_app(running.out)) as served:
            page.goto(f"http://127.0.0.1:{served.port}/crawl")
            state_is(page, "running")
            first = page.evaluate(PAGES)
            page.wait_for_function(f"n => ({PAGES})() > n", arg=first)  # live, no reload

            page.get_by_role("button", name="Pause").click()
            state_is(page, "paused")
            seen, pages = requests_to(site), page.evaluate(PAGES)
            page.get_by_role("textbox", name="Seeds to add").fill(seed)
            page.get_by_role("button", name="Add seeds").click()
            result = page.locator("#control-result")
            sync_api.expect(result).to_have_text("1 seed(s) queued, 0 already known.")
            updates = int(page.evaluate("document.body.dataset.updates"))
            page.wait_for_function(
                "n => Number(document.body.dataset.updates) >= n + 2", arg=updates
            )
            assert requests_to(site) == seen  # the server log: no request while paused
            assert requests_to(other) == 0
            assert page.evaluate(PAGES) == pages

            page.get_by_role("button", name="Resume").click()
            page.locator("#busiest-body").get_by_text(ADDED_HOST).wait_for()
            assert seed in other.audit.fetched()

            page.get_by_role("button", name="Stop").click()
            state_is(page, "ended")
            assert page.locator("#state").inner_text() == "ended (stopped)"
            assert page.locator("#workers-body tr").count() == 1
            outcome = running.join()
    assert outcome.reason == "stopped"
    assert len(loads) == 1, f"the page was loaded again: {loads}"
    assert problems == []


def test_the_report_opens_offline_without_errors(page: sync_api.Page, tmp_path: Path) -> None:
    spec = WebSpec(seed=3, hosts=8, pages_per_host=10, latency=0.002)
    finished: list[CrawlRun] = []
    with ThreadedTestWeb(build_web(spec)) as site:
        # On a thread: Playwright's synchronous API holds this thread's event loop.
        crawling = threading.Thread(target=lambda: finished.append(crawl(site, tmp_path)))
        crawling.start()
        crawling.join(LIMIT)
    [done] = finished
    report = done.out / "reports" / "report.html"
    problems = problems_of(page)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(report.as_uri())
    assert page.locator("h1").inner_text() == "Crawl report"
    assert page.locator("figure svg").count() == 4
    summary = page.locator(".summary").inner_text()
    assert summary.startswith(f"Crawled {done.outcome.stats.pages} in ")
    assert requests == [report.as_uri()]
    assert problems == []
