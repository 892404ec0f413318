"""Issue 31, recrawl: a crawl asked again a generation later, on a test web where pages
changed, vanished and appeared (``testweb/changes.py``) and most hosts answer conditional
requests. Judged from the server's log, the crawl folder's WARC files and rows, and search.

In one process, with ``--workers 2`` and in a shared crawl of two workers (each hands its own
folder's pages to the shared queues; the merged folder is the recrawled crawl). And a recrawl
killed mid-way, then resumed, ends as an uninterrupted one does, searchable.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.store.revisits import NOT_MODIFIED_PROFILE
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.audit import RequestRecord
from gossamer.testweb.changes import marker
from tests.unit.distributed.redis_rig import MISSING, SERVER, RedisServer

from .conftest import RESOLVE, signal_after_fetches
from .modes import Mode, gossamer, mode_fixture

SPEC = WebSpec(
    seed=21, hosts=5, pages_per_host=14, seed_hosts=5, special_hosts=False,
    crawl_delay_hosts=False, validators=True, changed=0.10, vanished=0.02, appeared=0.01,
)  # fmt: skip
CONFIG = "[politeness]\ndelay = 0\n"
WARCIO = str(Path(sys.executable).with_name("warcio"))


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(gossamer(*args), capture_output=True, text=True, check=False, timeout=120)


def _answers(out: Path) -> dict[str, str]:
    conn = sqlite3.connect(out / "crawl.db")
    try:
        return dict(conn.execute("SELECT url, answer FROM schedule"))
    finally:
        conn.close()


def _pages(records: list[RequestRecord], site: ThreadedTestWeb) -> list[tuple[str, RequestRecord]]:
    """The page requests (not robots.txt, not sitemaps) of a run, with their URLs."""
    return [
        (site.audit.url(r), r)
        for r in records
        if not site.web.is_robots(r.host, r.target) and "sitemap" not in r.target
    ]


def _versions(out: Path, url: str) -> list[bytes]:
    """The payloads of ``url``'s 200 captures, oldest first, as index.cdxj places them."""
    found = []
    for line in (out / "index.cdxj").read_text().splitlines():
        fields = json.loads(line.split(" ", 2)[2])
        if fields["url"] == url and fields["status"] == "200":
            found.append((line.split(" ")[1], fields))
    bodies = []
    for _, fields in sorted(found, key=lambda item: item[0]):
        with (out / "warc" / fields["filename"]).open("rb") as stream:
            stream.seek(int(fields["offset"]))
            record = next(iter(ArchiveIterator(stream)))
            assert record.rec_type == "response"
            bodies.append(record.content_stream().read())
    return bodies


def _first_crawl(site: ThreadedTestWeb, tmp_path: Path, *flags: str) -> tuple[Path, int]:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    config = tmp_path / "c.toml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    first = _run("crawl", seeds, "--out", out, "--resolve", RESOLVE, "--config", config,
                 "--no-progress", *flags)  # fmt: skip
    assert first.returncode == 0, first.stderr
    return out, len(site.audit.records())


@pytest.mark.parametrize("mode", ["one", "workers"], indirect=True)
def test_a_recrawl_asks_conditionally_and_records_what_changed(mode: Mode, tmp_path: Path) -> None:
    workers = "1" if mode.name == "one" else "2"
    with ThreadedTestWeb(build_web(SPEC)) as site:
        out, before = _first_crawl(site, tmp_path, "--workers", workers)
        full = _pages(site.audit.records(), site)
        site.set_generation(1)
        again = _run("crawl", "--resume", out, "--recrawl", "--no-progress", "--workers", workers)
        assert again.returncode == 0, again.stderr
        asked = _pages(site.audit.records()[before:], site)
        generation = site.web.at(1)
        changed, vanished = generation.changed(site.origins), generation.vanished(site.origins)
        appeared = generation.appeared(site.origins)
        ignoring = set(site.web.ignoring_hosts())
    stored = {url for url, r in full if r.status == 200}
    # Every page stored is asked again; conditionally where its host sent validators.
    assert {url for url, _ in asked} >= stored
    for url, record in asked:
        if url in stored:
            assert record.conditional == (record.host not in ignoring), url
    # 304 for every unchanged page of a host that answers conditions, 200 where it ignores them.
    answers = _answers(out)
    assert {u for u, a in answers.items() if a == "changed"} == changed
    assert {u for u, a in answers.items() if a == "gone"} == vanished
    assert {u for u, a in answers.items() if a == "new"} == appeared
    same = stored - changed - vanished
    assert {u for u in same if answers[u] == "not_modified"} == {
        u for u in same if not any(h in u for h in ignoring)
    }
    assert {u for u in same if answers[u] == "unchanged"} == {
        u for u in same if any(h in u for h in ignoring)
    }
    # Counted in the reports, with the bytes the recrawl did not fetch again.
    figures = json.loads((out / "reports" / "stats.json").read_text())["recrawl"]
    assert figures["due"] == len(stored)
    assert figures["not_modified"] > 0 and figures["bytes_saved"] > 0
    assert sum(r.body_bytes for _, r in asked) < sum(r.body_bytes for _, r in full)
    assert figures["bytes"] < figures["bytes_full"]
    assert "recrawl:" in again.stdout and "recrawl bytes:" in again.stdout
    # Both versions of a changed page are in the index and read by warcio at their place.
    bodies = _versions(out, sorted(changed)[0])
    assert len(bodies) == 2 and marker(1).encode() in bodies[-1]
    assert marker(1).encode() not in bodies[0]
    # Every WARC file is valid; a 304 is a server-not-modified revisit record.
    profiles: Counter[str] = Counter()
    for path in sorted((out / "warc").glob("*.warc.gz")):
        assert subprocess.run([WARCIO, "check", str(path)], check=False).returncode == 0
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "revisit":
                    profiles[record.rec_headers.get_header("WARC-Profile")] += 1
    assert profiles[NOT_MODIFIED_PROFILE] == figures["not_modified"]


def test_search_follows_the_recrawl_and_a_kill_loses_nothing(tmp_path: Path) -> None:
    with ThreadedTestWeb(build_web(SPEC)) as site:
        out, _ = _first_crawl(site, tmp_path, "--workers", "1", "--concurrency", "2")
        site.set_generation(1)
        # Killed mid-recrawl, then resumed without --recrawl: the recrawl goes on.
        proc = subprocess.Popen(
            gossamer("-vv", "crawl", "--resume", out, "--recrawl", "--no-progress",
                     "--workers", "1"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        signal_after_fetches(proc, 20, signal.SIGKILL)
        proc.communicate(timeout=60)
        resumed = _run("crawl", "--resume", out, "--no-progress", "--workers", "1")
        assert resumed.returncode == 0, resumed.stderr
        generation = site.web.at(1)
        changed, vanished = generation.changed(site.origins), generation.vanished(site.origins)
        appeared = generation.appeared(site.origins)
    answers = _answers(out)
    assert {u for u, a in answers.items() if a == "changed"} == changed
    assert {u for u, a in answers.items() if a == "gone"} == vanished
    conn = sqlite3.connect(out / "crawl.db")
    try:
        wanted = conn.execute("SELECT count(*) FROM schedule WHERE wanted_at IS NOT NULL")
        assert wanted.fetchone() == (0,)
    finally:
        conn.close()
    indexed = _run("index", out)
    assert indexed.returncode == 0, indexed.stderr

    def hits(word: str) -> set[str]:
        urls: set[str] = set()
        page = pages = 1
        while page <= pages:
            found = _run("search", out, word, "--json", "--page", str(page))
            assert found.returncode == 0, found.stderr
            answer = json.loads(found.stdout)
            urls |= {hit["url"] for hit in answer["hits"]}
            page, pages = page + 1, answer["pages"]
        return urls

    assert hits(generation.marker) == changed
    assert hits(generation.appeared_marker) == appeared
    docs = sqlite3.connect(out / "index" / "docs.db")
    try:
        indexed_urls = {url for (url,) in docs.execute("SELECT url FROM docs")}
    finally:
        docs.close()
    assert indexed_urls >= changed | appeared
    assert not indexed_urls & vanished


def _lead_then_join(
    lead: subprocess.Popen[str], joiner: Callable[[], subprocess.Popen[str]]
) -> None:
    """Let ``lead`` queue its folder's pages (its log says so), then start the joiner; both
    must end well."""
    assert lead.stderr is not None
    lines = []
    for line in lead.stderr:
        lines.append(line)
        if "pages of this folder queued" in line:
            break
    late = joiner()
    _, err = late.communicate(timeout=120)
    assert late.returncode == 0, err
    rest = lead.communicate(timeout=120)
    assert lead.returncode == 0, "".join(lines) + rest[1]


def test_a_shared_crawl_recrawls_every_workers_folder(tmp_path: Path) -> None:
    if SERVER is None:
        pytest.skip(MISSING)
    server = RedisServer(tmp_path / "redis")
    server.start()
    first, second = tmp_path / "first", tmp_path / "second"

    def crawler(*flags: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            gossamer("crawl", seeds, "--out", first, "--frontier", server.url, "--resolve",
                     RESOLVE, "--config", config, "--no-progress", "--worker-name", "first",
                     *flags),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def joiner() -> subprocess.Popen[str]:
        return subprocess.Popen(
            gossamer("worker", "--out", second, "--frontier", server.url, "--resolve", RESOLVE,
                     "--no-progress", "--worker-name", "second"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    try:
        with ThreadedTestWeb(build_web(SPEC)) as site:
            seeds = tmp_path / "seeds.txt"
            seeds.write_text("\n".join(site.seeds()) + "\n")
            config = tmp_path / "c.toml"
            config.write_text(CONFIG)
            procs = [crawler(), joiner()]
            assert [p.communicate(timeout=120) and p.returncode for p in procs] == [0, 0]
            before = len(site.audit.records())
            full = _pages(site.audit.records(), site)
            site.set_generation(1)
            # The recrawl starts; the second worker joins once the first has queued its pages.
            _lead_then_join(crawler("--recrawl"), joiner)
            asked = _pages(site.audit.records()[before:], site)
            generation = site.web.at(1)
            changed, vanished = generation.changed(site.origins), generation.vanished(site.origins)
            appeared = generation.appeared(site.origins)
            ignoring = set(site.web.ignoring_hosts())
    finally:
        server.stop()
    merged = tmp_path / "merged"
    done = _run("merge", merged, first, second)
    assert done.returncode == 0, done.stderr
    stored = {url for url, r in full if r.status == 200}
    assert {url for url, _ in asked} >= stored
    assert Counter(url for url, r in asked if r.status in (200, 304)) == Counter(
        {url: 1 for url, r in asked if r.status in (200, 304)}
    )  # each page asked once, whichever worker asked it
    for url, record in asked:
        if url in stored:
            assert record.conditional == (record.host not in ignoring), url
    answers = _answers(merged)
    assert {u for u, a in answers.items() if a == "changed"} == changed
    assert {u for u, a in answers.items() if a == "gone"} == vanished
    assert {u for u, a in answers.items() if a == "new"} == appeared
    same = stored - changed - vanished
    assert {answers[u] for u in same} <= {"not_modified", "unchanged"}


def test_a_continuous_crawl_revisits_what_is_due_until_stopped(tmp_path: Path) -> None:
    spec = WebSpec(seed=4, hosts=2, pages_per_host=4, special_hosts=False,
                   crawl_delay_hosts=False, validators=True, ignore_conditional=0.0)  # fmt: skip
    with ThreadedTestWeb(build_web(spec)) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n")
        config = tmp_path / "c.toml"
        config.write_text(CONFIG + '[recrawl]\ninitial_interval = "1s"\nmin_interval = "1s"\n')
        proc = subprocess.Popen(
            gossamer("crawl", seeds, "--out", tmp_path / "out", "--resolve", RESOLVE,
                     "--config", config, "--no-progress", "--workers", "1", "--continuous"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stderr is not None
        stored: set[str] = set()
        for line in proc.stderr:
            if "continuous: next page due" not in line:
                continue
            pages = _pages(site.audit.records(), site)
            stored = stored or {url for url, r in pages if r.status == 200}
            again = {url for url, r in pages if r.conditional and r.status == 304}
            if again >= stored:  # every page asked again, by its schedule: stop it waiting
                proc.send_signal(signal.SIGTERM)
                break
        proc.communicate(timeout=60)
    assert proc.returncode == 3
    assert stored
