"""The Images tab and the weather box in a real headless Chromium (issue 35).

A query naming a city shows the weather box, filled in its own frame from a recorded
Open-Meteo answer served on loopback; an image search shows the grid, each image with its
page, and alt text written to run script stays text. Skipped, with the reason, where the
browser test of the UI is (no Debian chromium, no playwright).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gossamer.index import build_index
from gossamer.search.places import Gazetteer
from gossamer.web import make_app
from gossamer.web.weather import Weather, WeatherService

from ..unit.index.fake_crawl import make_crawl
from ..unit.web.test_images_weather import CITIES, HOSTILE_ALT, PAGES, RecordedForecasts
from .test_web_ui_browser import ServedApp, assert_not_pwned, launch_chromium, sync_api


@pytest.fixture(scope="module")
def forecasts() -> RecordedForecasts:
    return RecordedForecasts()


@pytest.fixture(scope="module")
def base_url(
    tmp_path_factory: pytest.TempPathFactory, forecasts: RecordedForecasts
) -> Iterator[str]:
    folder = make_crawl(tmp_path_factory.mktemp("browser-zoo"), PAGES)
    build_index(folder)
    with ServedApp(forecasts.app()) as api:
        weather = Weather(Gazetteer(CITIES), WeatherService(f"http://127.0.0.1:{api.port}"))
        with ServedApp(make_app(folder, weather=weather)) as served:
            yield f"http://127.0.0.1:{served.port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    yield from launch_chromium()


@pytest.fixture
def page(browser: sync_api.Browser) -> Iterator[sync_api.Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    assert dialogs == [], f"a crawled string opened a dialog: {dialogs}"
    context.close()


def test_a_query_naming_a_city_shows_the_weather_box(
    page: sync_api.Page, base_url: str, forecasts: RecordedForecasts
) -> None:
    page.goto(base_url + "/")
    page.get_by_role("searchbox", name="Search").fill("foxes Paris")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/search?**")
    assert page.locator("article.result h3").first.inner_text() == "Foxes of Paris"
    box = page.frame_locator("iframe.weather")
    box.get_by_role("heading", name="Weather for Paris, FR").wait_for()
    assert box.locator("b.now").inner_text() == "7°C"
    assert box.locator("tr").count() == 7
    assert forecasts.asked and forecasts.asked[-1]["latitude"] == "48.8500"
    page.goto(base_url + "/search?q=foxes")
    assert page.locator("iframe.weather").count() == 0
    assert_not_pwned(page.main_frame)


def test_an_image_search_shows_the_grid_and_hostile_alt_text_stays_text(
    page: sync_api.Page, base_url: str
) -> None:
    page.goto(base_url + "/search?q=fox")
    page.get_by_role("link", name="Images").click()
    page.wait_for_url("**/images?**")
    cards = page.locator("ul.images li.image")
    assert cards.count() == 2
    assert "on Foxes of Paris" in cards.first.inner_text()
    assert cards.filter(has_text="A fox in the snow").locator("img").count() == 1  # archived
    hostile = cards.filter(has_text="evil")
    assert HOSTILE_ALT in hostile.inner_text()
    assert hostile.locator("img").count() == 0  # not archived: described, never fetched
    assert_not_pwned(page.main_frame)
    assert page.evaluate("document.querySelectorAll('script').length") == 0
    # The tab's own search box searches images again.
    page.get_by_role("searchbox", name="Search").fill("snow")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/images?q=snow**")
    assert page.locator("ul.images li.image").count() == 1
