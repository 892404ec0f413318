"""One indexed and ranked crawl folder shared by the search tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.search import SearchEngine

from ..index.fake_crawl import searchable_crawl


@pytest.fixture(scope="package")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return searchable_crawl(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="package")
def engine(corpus: Path) -> Iterator[SearchEngine]:
    with SearchEngine(corpus) as opened:
        yield opened
