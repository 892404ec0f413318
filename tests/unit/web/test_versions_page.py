"""Page versions in the UI (issue 31): the page info lists each capture, newest first, and
``/cached?url=&at=`` shows any of them, a not-modified one as the copy it refers to; a
server left running across a recrawl's ``gossamer index`` answers from the new index."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.index import build_index
from gossamer.web.render import local

from ..index.fake_crawl import FakePage, html, make_crawl
from ..index.recrawl_folder import CHANGE, GONE, KEEP, MOVED, recrawl, recrawled_site
from ..index.recrawl_folder import FIRST_AT as FIRST
from ..index.recrawl_folder import SECOND_AT as SECOND
from .served import Client, serve_and_check


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recrawled_site(tmp_path_factory.mktemp("web-versions"))


async def _text(client: Client, path: str, status: int = 200) -> str:
    response = await client.get(path)
    assert response.status == status, path
    return await response.text()


def test_page_info_lists_the_versions_newest_first(site: Path) -> None:
    async def check(client: Client) -> None:
        keep = await _text(client, f"/info?url={KEEP}")
        table = keep[keep.index('id="versions"') :]
        assert "Versions (2)" in keep
        newest, oldest = table.index("2023-11-15 22:13:20 UTC"), table.index("2023-11-14")
        assert newest < oldest
        assert "<td>304</td><td>not modified</td>" in table
        assert '<td>200</td><td>full response <span class="note">(current)</span>' in table
        assert local("/cached", url=KEEP, at=SECOND) in table
        gone = await _text(client, f"/info?url={GONE}")
        assert '<td>404</td><td>gone <span class="note">(current)</span>' in gone
        moved = await _text(client, f"/info?url={MOVED}")
        assert "<td>301</td><td>moved" in moved

    serve_and_check(site, check)


def test_each_version_has_its_cached_copy(site: Path) -> None:
    async def check(client: Client) -> None:
        frame = await _text(client, f"/cached?url={KEEP}&at={SECOND}")
        assert "the server said the page was not modified" in frame
        assert "archived on 2023-11-14T22:13:20" in frame
        assert local("/cached/raw", url=KEEP, at=SECOND) in frame
        assert "otters" in await _text(client, f"/cached/raw?url={KEEP}&at={SECOND}")
        assert "walrus" in await _text(client, f"/cached/raw?url={CHANGE}&at={FIRST}")
        assert "narwhal" in await _text(client, f"/cached/raw?url={CHANGE}")  # the current one
        assert "answered 404: the page was gone" in await _text(
            client, f"/cached?url={GONE}&at={SECOND}"
        )
        moved = await _text(client, f"/cached?url={MOVED}&at={SECOND}")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in moved and "<script>" not in moved
        await _text(client, f"/cached?url={KEEP}&at=2023", status=400)
        await _text(client, f"/cached?url={KEEP}&at=20990101000000", status=404)
        await _text(client, f"/cached/raw?url={KEEP}&at=20990101000000", status=404)

    serve_and_check(site, check)


def test_a_server_running_across_an_index_run_shows_the_new_index(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path, [FakePage(CHANGE, html("Walrus", "the walrus version"))])
    build_index(folder)

    async def check(client: Client) -> None:
        assert CHANGE in await _text(client, "/search?q=walrus")
        recrawl(folder, changed=[FakePage(CHANGE, html("Narwhal", "the narwhal version"))])
        build_index(folder)
        assert "No results" in await _text(client, "/search?q=walrus")
        assert CHANGE in await _text(client, "/search?q=narwhal")

    serve_and_check(folder, check)
