"""The web UI over the shared search corpus, driven through aiohttp's test client."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..index.fake_crawl import searchable_crawl


@pytest.fixture(scope="package")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return searchable_crawl(tmp_path_factory.mktemp("web-corpus"))
