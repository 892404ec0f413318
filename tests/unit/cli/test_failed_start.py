"""A crawl whose names do not resolve: the error line names DNS and --resolve, and the
corrected command starts the crawl again in the same folder instead of being refused.

The real command runs in this process, with the system resolver replaced by one that fails
as it does for an unknown name: a test never asks a DNS server.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gossamer.crawling.verdict import why_nothing
from gossamer.stats import CrawlStats
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from ..cli_helpers import one_error, run

RESOLVE = "*.web.test:127.0.0.1"
LOCAL = ["--workers", "1", "--no-progress", "--delay", "0"]


class _NoSuchName:
    """The system resolver, as it answers for a name no DNS server knows."""

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async def close(self) -> None:
        return None


@pytest.fixture(autouse=True)
def _no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gossamer.fetch.resolver.ThreadedResolver", _NoSuchName)


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(
        build_web(WebSpec(seed=3, hosts=2, pages_per_host=5, special_hosts=False))
    ) as running:
        yield running


def test_names_that_do_not_resolve_are_named_with_the_fix(
    capsys: pytest.CaptureFixture[str], site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    error = one_error(*run(capsys, "crawl", seeds, "--out", tmp_path / "out", *LOCAL))
    assert error.startswith("bad seed: nothing was crawled: DNS: the host names did not resolve")
    assert "--resolve HOST:IP" in error
    for url in site.seeds():
        assert url.split("/")[2].split(":")[0] in error  # each host named
    # An origin given up as unreachable is not a robots.txt refusal.
    assert "robots.txt disallowed" not in error


def test_the_corrected_command_starts_again_in_the_same_folder(
    capsys: pytest.CaptureFixture[str], site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds, out = tmp_path / "seeds.txt", tmp_path / "out"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    one_error(*run(capsys, "crawl", seeds, "--out", out, *LOCAL))
    assert (out / "crawl.json").is_file()
    code, err = run(capsys, "crawl", seeds, "--out", out, *LOCAL, "--resolve", RESOLVE)
    assert code == 0, err
    assert "stored no page, so it starts again with --resolve" in err
    assert "started with other settings" not in err
    pages = (out / "reports" / "crawled.txt").read_text().splitlines()
    assert pages and all("error:dns" not in line for line in pages)
    # Now that it stored pages, other settings are refused again.
    again = one_error(*run(capsys, "crawl", seeds, "--out", out, *LOCAL, "--delay", "1"))
    assert "holds a crawl started with other settings" in again


def test_dns_is_named_from_figures_without_hosts() -> None:
    """A --workers crawl's merged figures may not say which host failed: the count does."""
    stats = CrawlStats(requests=3, skipped_robots=3)
    stats.errors["dns"] = 3
    said = why_nothing(stats)
    assert said.startswith("DNS: the host names did not resolve (check the spelling")
    assert "--resolve HOST:IP" in said and "robots.txt" not in said
