"""Web UI, the weather box: current weather and the next days for a place a query names.

Data flow: results page (an ``<iframe>`` of ``/weather?q=``, only when ``places`` finds a
city in the query) -> **weather** -> a forecast API in Open-Meteo's format -> the box.

The box is a frame of its own, so the results never wait for it: the browser shows them and
fills the frame when its answer comes. The forecast is asked with a short timeout
(``TIMEOUT``) and kept for ``FRESH`` seconds per place; a failure (no answer, an error, an
answer not in the expected shape) is kept for ``RETRY`` seconds and shows an empty frame: no
box, no error. The API needs no key; ``gossamer serve --weather`` uses the public one unless
given another base URL (the tests serve recorded answers from loopback).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from gossamer.search.places import Gazetteer, Place
from gossamer.web.render import esc

__all__ = [
    "DEFAULT_API",
    "FRESH",
    "RETRY",
    "TIMEOUT",
    "Day",
    "Forecast",
    "Weather",
    "WeatherService",
    "forecast_from",
    "weather_box",
]

log = logging.getLogger(__name__)

DEFAULT_API = "https://api.open-meteo.com"
TIMEOUT = 2.0  # seconds for the whole answer
FRESH = 900.0  # seconds a forecast is kept
RETRY = 60.0  # seconds a failure is kept before the API is asked again
_DAYS = 6
_MAX_BYTES = 256 * 1024
# WMO weather interpretation codes, as Open-Meteo gives them.
_CODES = {
    0: "Clear sky", 1: "Mainly clear", 2: "Partly cloudy", 3: "Overcast",
    45: "Fog", 48: "Rime fog", 51: "Light drizzle", 53: "Drizzle", 55: "Dense drizzle",
    56: "Freezing drizzle", 57: "Freezing drizzle", 61: "Light rain", 63: "Rain",
    65: "Heavy rain", 66: "Freezing rain", 67: "Freezing rain", 71: "Light snow", 73: "Snow",
    75: "Heavy snow", 77: "Snow grains", 80: "Rain showers", 81: "Rain showers",
    82: "Violent rain showers", 85: "Snow showers", 86: "Snow showers", 95: "Thunderstorm",
    96: "Thunderstorm with hail", 99: "Thunderstorm with hail",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Day:
    date: str
    high: float
    low: float
    sky: str


@dataclass(frozen=True, slots=True)
class Forecast:
    place: Place
    temperature: float
    unit: str  # "°C" as the API names it
    sky: str
    wind: float
    wind_unit: str
    days: tuple[Day, ...]


def _sky(code: Any) -> str:
    return _CODES.get(int(code), "") if isinstance(code, int | float) else ""


def forecast_from(place: Place, data: Any) -> Forecast:
    """An Open-Meteo answer as a ``Forecast``; ``ValueError`` when it is not one."""
    try:
        now, units, daily = data["current"], data.get("current_units", {}), data["daily"]
        days = tuple(
            Day(str(date), float(high), float(low), _sky(code))
            for date, high, low, code in zip(
                daily["time"],
                daily["temperature_2m_max"],
                daily["temperature_2m_min"],
                daily["weather_code"],
                strict=False,
            )
        )[:_DAYS]
        return Forecast(
            place,
            float(now["temperature_2m"]),
            str(units.get("temperature_2m", "°C")),
            _sky(now.get("weather_code")),
            float(now.get("wind_speed_10m", 0.0)),
            str(units.get("wind_speed_10m", "km/h")),
            days,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a forecast: {exc!r}") from exc


class WeatherService:
    """Asks the forecast API, once per place per ``FRESH`` seconds; never raises."""

    def __init__(self, base_url: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.base_url = base_url.rstrip("/")
        self._clock = clock
        self._kept: dict[tuple[float, float], tuple[float, Forecast | None]] = {}
        self._asking: dict[tuple[float, float], asyncio.Future[Forecast | None]] = {}
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def forecast(self, place: Place) -> Forecast | None:
        """The place's forecast, or None when the API could not give one."""
        key = (round(place.latitude, 2), round(place.longitude, 2))
        kept = self._kept.get(key)
        if kept is not None and self._clock() < kept[0]:
            return kept[1]
        asking = self._asking.get(key)
        if asking is not None:  # one request per place at a time: the others wait for it
            return await asyncio.shield(asking)
        future: asyncio.Future[Forecast | None] = asyncio.get_running_loop().create_future()
        self._asking[key] = future
        try:
            found = await self._ask(place)
            self._kept[key] = (self._clock() + (FRESH if found else RETRY), found)
            future.set_result(found)
            return found
        finally:
            if not future.done():
                future.set_result(None)
            del self._asking[key]

    async def _ask(self, place: Place) -> Forecast | None:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=TIMEOUT),
                headers={"User-Agent": "gossamer-weather-box"},
            )
        params = {
            "latitude": f"{place.latitude:.4f}",
            "longitude": f"{place.longitude:.4f}",
            "current": "temperature_2m,weather_code,wind_speed_10m",
            "daily": "weather_code,temperature_2m_max,temperature_2m_min",
            "timezone": "auto",
            "forecast_days": str(_DAYS),
        }
        try:
            async with self._session.get(f"{self.base_url}/v1/forecast", params=params) as got:
                got.raise_for_status()
                body = await got.content.read(_MAX_BYTES)
            return forecast_from(place, json.loads(body))
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.info("no weather for %s: %s", place.name, exc)
            return None


@dataclass(frozen=True, slots=True)
class Weather:
    """The weather box's two parts: where a query points, and what the sky does there."""

    gazetteer: Gazetteer
    service: WeatherService

    @classmethod
    def packaged(cls, base_url: str) -> Weather:
        return cls(Gazetteer.packaged(), WeatherService(base_url))


def _degrees(value: float, unit: str) -> str:
    return f"{value:.0f}{esc(unit)}"


def weather_box(forecast: Forecast | None) -> str:
    """The frame's document: the box, or an empty page (no box) without a forecast."""
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<link rel="stylesheet" href="/style.css"><title>Weather</title></head><body>'
    )
    if forecast is None:
        return head + "</body></html>\n"
    f = forecast
    days = "".join(
        f"<tr><th>{esc(d.date)}</th><td>{_degrees(d.high, f.unit)}</td>"
        f"<td>{_degrees(d.low, f.unit)}</td><td>{esc(d.sky)}</td></tr>"
        for d in f.days
    )
    return (
        head + '<section class="weather-box" aria-label="Weather">'
        f"<h2>Weather for {esc(f.place.name)}, {esc(f.place.country)}</h2>"
        f'<p><b class="now">{_degrees(f.temperature, f.unit)}</b> {esc(f.sky)},'
        f" wind {f.wind:.0f} {esc(f.wind_unit)}</p>"
        f"<table><tr><th>day</th><th>high</th><th>low</th><th></th></tr>{days}</table>"
        "</section></body></html>\n"
    )
