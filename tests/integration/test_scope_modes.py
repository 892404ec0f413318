"""Issue 30: the scope rules hold in every way of running a crawl, judged by the server's log.

One crawl per mode (``modes.py``: ``--workers 1``, ``--workers 2``, a shared crawl of two
processes on a real Redis) from one seed with ``--scope domain`` and an ``--exclude``: the
server is never asked for another registrable domain, nor for a URL the expression finds.
The test web's hosts are ``site-NNN.web.test``; the config names ``web.test`` a public suffix,
so each host is a registrable domain of its own (as ``example.org`` and ``example.com`` are).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .modes import DEADLINE, Mode, mode_fixture

CONFIG = '[politeness]\ndelay = 0.0\n[scope]\npublic_suffixes = ["web.test"]\n'
# Three small hosts that link to each other; no traps or robots.txt faults to wait for.
SPEC = WebSpec(seed=3, hosts=3, pages_per_host=10, special_hosts=False, crawl_delay_hosts=False)
EXCLUDE = "/news/"


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def _files(tmp: Path, seed: str) -> tuple[Path, Path]:
    seeds, config = tmp / "seeds.txt", tmp / "c.toml"
    seeds.write_text(seed + "\n", encoding="utf-8")
    config.write_text(CONFIG, encoding="utf-8")
    return seeds, config


@pytest.mark.parametrize("mode", ["one", "workers", "shared"], indirect=True)
def test_domain_scope_and_exclude_hold_server_side(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    host = site.web.hosts[0]
    seeds, config = _files(tmp_path, site.url(host))
    finished = mode.run(
        seeds, tmp_path / "out", "--config", config, "--scope", "domain", "--exclude", EXCLUDE
    )
    assert set(finished.codes) == {0}, finished.stderr
    asked = site.audit.records()
    assert {record.host for record in asked} == {host}  # no other registrable domain
    assert not [r.target for r in asked if re.search(EXCLUDE, r.target)]
    pages = {r.target for r in asked if r.target != "/robots.txt"}
    assert "/" in pages and len(pages) > 3  # the crawl did go on within the domain
    # Each process counted what it found: links to the other hosts by the domain rule,
    # news pages by the exclude rule (the shared crawl's two folders added up).
    skipped = sum(_stats(folder)["skipped_other"] for folder in finished.folders)
    assert skipped > 0
    rules: dict[str, int] = {}
    for folder in finished.folders:
        for rule, count in _stats(folder)["skipped_scope"].items():
            rules[rule] = rules.get(rule, 0) + count
    assert set(rules) == {"domain", "exclude"}, rules
    assert "skipped by scope: " in (finished.out / "reports" / "stats.txt").read_text()
    # The refused links are listed with their rule (each process lists those it found).
    listed = [
        line.split("\t")
        for folder in finished.folders
        for line in (folder / "reports" / "discovered-not-crawled.txt").read_text().splitlines()
    ]
    refused = {url: why for url, *why in listed if why}
    assert refused and set(map(tuple, refused.values())) <= {
        ("out of scope: domain",),
        ("out of scope: exclude",),
    }
    assert all(host not in url or EXCLUDE in url for url in refused)


def test_a_seed_out_of_scope_is_refused_before_any_request(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds, config = _files(tmp_path, site.url(site.web.hosts[0], "/news/"))
    command = Mode("one").command(
        seeds, tmp_path / "out", "--config", config, "--exclude", "/news/"
    )
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=DEADLINE)
    assert done.returncode == 2
    assert done.stderr.startswith("gossamer: error: seeds line 1 ("), done.stderr
    assert "out of the crawl's scope by its exclude rule" in done.stderr
    assert not site.audit.records()


def _stats(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "reports" / "stats.json").read_text())
    return data
