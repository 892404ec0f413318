"""The figures a crawl reports agree with each other (issue 28), through the real command line.

One crawl of the local test web (robots.txt refusals, a page too large, a file of the wrong
type, hosts with no sitemap) with ``gossamer crawl --workers 1``, then what a user does next:
read the summary, run the same command again, lose ``crawl.db`` and ``gossamer recover``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import RESOLVE

SPEC = WebSpec(seed=5, hosts=5, pages_per_host=8, crawl_delay_hosts=False)


def gossamer(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gossamer", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


@pytest.fixture(scope="module")
def calm_site() -> Iterator[ThreadedTestWeb]:
    """A web whose every robots.txt answers: a crawl of it can be complete."""
    calm = WebSpec(seed=5, hosts=3, pages_per_host=8, crawl_delay_hosts=False, special_hosts=False)
    with ThreadedTestWeb(build_web(calm)) as running:
        yield running


@pytest.fixture(scope="module")
def crawled(site: ThreadedTestWeb, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished crawl's folder, and what the command printed (``printed.txt`` beside it)."""
    tmp = tmp_path_factory.mktemp("figures")
    seeds = tmp / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    out = tmp / "out"
    result = gossamer(
        "crawl", seeds, "--out", out, "--resolve", RESOLVE, "--delay", "0", "--no-progress",
        "--workers", "1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (tmp / "printed.txt").write_text(result.stdout)
    return out


def stats(folder: Path) -> dict[str, object]:
    saved: dict[str, object] = json.loads((folder / "reports" / "stats.json").read_text())
    return saved


def lines(folder: Path) -> list[str]:
    return (folder / "reports" / "stats.txt").read_text().splitlines()


def test_the_summary_says_the_concurrency_reached(crawled: Path) -> None:
    printed = (crawled.parent / "printed.txt").read_text().splitlines()
    reached, configured = stats(crawled)["max_in_flight"], stats(crawled)["concurrency"]
    assert isinstance(reached, int) and 1 <= reached < 64 == configured
    summary = [line for line in printed if line.startswith("Crawled ")]
    assert len(summary) == 1  # one spelling, not a second line beside it
    assert f"(at most {reached} simultaneous requests, {configured} configured)" in summary[0]
    assert printed[-1].startswith("stopped: exhausted (no URL left to fetch); output in ")


def test_statuses_say_which_were_robots_txt_and_sitemaps(crawled: Path) -> None:
    text = lines(crawled)
    at = next(i for i, line in enumerate(text) if line.startswith("statuses: "))
    robots = next(line for line in text if line.startswith("  of which robots.txt: "))
    sitemaps = next(line for line in text if line.startswith("  of which sitemaps: "))
    assert at < text.index(robots) < text.index(sitemaps) == at + 2
    # No host of this web has a sitemap: every guess is a 404, and none is an error.
    assert "404: " in sitemaps and sitemaps.endswith(
        "(a missing sitemap is not counted as an error)"
    )
    errors = stats(crawled)["errors"]
    assert isinstance(errors, dict)
    statuses = stats(crawled)["statuses"]
    assert isinstance(statuses, dict)
    missing = int(sitemaps.split("404: ")[1].split()[0].rstrip(","))
    robots_404 = int(robots.split("404: ")[1].split(",")[0]) if "404: " in robots else 0
    # The 404s the errors do not count are exactly the sitemaps'.
    assert statuses["404"] - missing == errors.get("http_404", 0)
    assert robots_404 <= errors.get("http_404", 0)
    assert any(line.startswith("session ids stripped: 0") for line in text)


def test_a_crawl_left_with_an_unavailable_robots_txt_is_not_complete(crawled: Path) -> None:
    # One host of this web answers robots.txt with 5xx: its URLs are retried on resume.
    again = crawled.parent / "deferred"
    shutil.copytree(crawled, again)
    result = gossamer("crawl", "--resume", again, "--no-progress", "--workers", "1")
    assert result.returncode == 0, result.stderr
    assert "is complete" not in result.stderr and "URLs queued" in result.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_running_a_finished_crawl_again_says_it_is_complete(
    tmp_path: Path, calm_site: ThreadedTestWeb, workers: str
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(calm_site.seeds()) + "\n")
    again = tmp_path / "out"
    first = gossamer(
        "crawl", seeds, "--out", again, "--resolve", RESOLVE, "--delay", "0", "--no-progress",
        "--workers", workers,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert stats(again)["skipped_robots"], "the calm web's robots.txt files refuse some URLs"
    before = sorted(path.name for path in (again / "warc").iterdir())
    figures = stats(again)
    result = gossamer("crawl", "--resume", again, "--no-progress", "--workers", workers)
    assert result.returncode == 0, result.stderr
    assert f"the crawl in {again} is complete" in result.stderr
    assert "URLs queued" not in result.stderr
    # Nothing fetched, so no new WARC file (not even one holding only its warcinfo record),
    # and the refusals are not counted a second time.
    assert sorted(path.name for path in (again / "warc").iterdir()) == before
    assert stats(again)["pages"] == figures["pages"]
    assert stats(again)["skipped_robots"] == figures["skipped_robots"]


@pytest.mark.parametrize("kept", ["stats.json", "nothing"])
def test_recover_keeps_what_no_warc_record_holds_and_writes_report_html(
    crawled: Path, kept: str
) -> None:
    lost = crawled.parent / f"lost-{kept}"
    shutil.copytree(crawled, lost)
    for path in [*lost.glob("crawl.db*"), lost / "reports" / "report.html"]:
        path.unlink()
    if kept == "nothing":
        (lost / "reports" / "stats.json").unlink()
    result = gossamer("recover", lost)
    assert result.returncode == 0, result.stderr
    assert (lost / "reports" / "report.html").is_file()
    before, after = stats(crawled), stats(lost)
    assert isinstance(before["skipped_robots"], int) and before["skipped_robots"] > 0
    # Robots.txt refusals: from stats.json, or recounted from the answers the WARC files keep.
    assert after["skipped_robots"] == before["skipped_robots"]
    if kept == "stats.json":
        errors_before, errors_after = before["errors"], after["errors"]
        assert isinstance(errors_before, dict) and isinstance(errors_after, dict)
        for kind in ("too_large", "skipped_type", "trap_repeated_segment"):
            assert errors_after.get(kind, 0) == errors_before.get(kind, 0), kind
        assert after["skipped_other"] == before["skipped_other"]
        assert after["max_in_flight"] == before["max_in_flight"]
