"""The web UI over the shared search corpus and a crawl of rough edges, driven through
aiohttp's test client over a loopback socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..index.fake_crawl import searchable_crawl
from .rough_crawl import rough_crawl


@pytest.fixture(scope="package")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return searchable_crawl(tmp_path_factory.mktemp("web-corpus"))


@pytest.fixture(scope="package")
def rough(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rough_crawl(tmp_path_factory.mktemp("web-rough"))
