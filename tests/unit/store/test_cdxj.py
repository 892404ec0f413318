"""CdxjWriter: our live index equals what cdxj-indexer rebuilds from the WARC files."""

from __future__ import annotations

import json
import os
import random
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
import surt
from cdxj_indexer.main import write_cdx_index

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.cdxj import (
    CdxjWriter,
    _timestamp,
    cdxj_line,
    merge_worker_indexes,
    sort_cdxj,
    url_key,
)
from gossamer.store.warc import WarcLocation, WarcStore, warc_date

from .test_warc import fixed_store, sample_results

Entry = tuple[str, str, dict[str, str]]


def parse_cdxj(path: Path) -> list[Entry]:
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        key, timestamp, blob = line.split(" ", 2)
        entries.append((key, timestamp, json.loads(blob)))
    return entries


def index_while_crawling(
    folder: Path, results: list[FetchResult], store: WarcStore | None = None
) -> tuple[WarcStore, Path]:
    store = store or fixed_store(folder)
    with store, CdxjWriter(folder / "index.cdxj") as writer:
        for result in results:
            writer.add(result, store.write(result))
    return store, folder / "index.cdxj"


def test_lines_match_cdxj_indexer(tmp_path: Path) -> None:
    store, ours = index_while_crawling(tmp_path, sample_results())
    theirs = tmp_path / "rebuilt.cdxj"
    write_cdx_index(str(theirs), [str(path) for path in store.files], {"sort": True})
    expected = parse_cdxj(theirs)
    assert len(expected) == len(sample_results())
    assert parse_cdxj(ours) == expected
    # Same keys in the same order, so the JSON text itself is identical too.
    assert ours.read_text() == theirs.read_text()


def test_lines_match_across_rotated_files(tmp_path: Path) -> None:
    store = fixed_store(tmp_path, max_file_bytes=2_000)
    store, ours = index_while_crawling(tmp_path, sample_results() * 2, store)
    assert len(store.files) > 1
    theirs = tmp_path / "rebuilt.cdxj"
    write_cdx_index(str(theirs), [str(path) for path in store.files], {"sort": True})
    assert parse_cdxj(ours) == parse_cdxj(theirs)


def test_line_fields(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    with store:
        result = sample_results()[1]
        location = store.write(result)
    key, timestamp, blob = cdxj_line(result, location).rstrip("\n").split(" ", 2)
    assert key == "com,example)/"
    assert timestamp == "20231114221321"
    fields = json.loads(blob)
    assert list(fields) == ["url", "mime", "status", "digest", "length", "offset", "filename"]
    assert fields["mime"] == "text/html"
    assert fields["offset"] == str(location.offset)


def test_response_without_content_type_has_no_mime() -> None:
    line = cdxj_line(
        FetchResult(url="http://example.com/x", status=204, started_at=0.0),
        WarcLocation("a.warc.gz", 10, 20),
    )
    assert "mime" not in json.loads(line.split(" ", 2)[2])


def test_url_that_surt_rejects_is_its_own_key() -> None:
    assert url_key("http://example.com:bad/") == "http://example.com:bad/"
    assert url_key("http://Example.com/a") == "com,example)/a"


def test_index_is_sorted_at_close(tmp_path: Path) -> None:
    _, ours = index_while_crawling(tmp_path, list(reversed(sample_results())))
    lines = ours.read_text().splitlines()
    assert lines == sorted(lines)


@pytest.mark.parametrize("run_lines", [1, 7, 1_000])
def test_sort_merges_runs(tmp_path: Path, run_lines: int) -> None:
    rng = random.Random(run_lines)
    lines = [f"com,example{rng.randrange(50)})/p{i} 2024 {{}}\n" for i in range(200)]
    path = tmp_path / "index.cdxj"
    path.write_text("".join(lines))
    sort_cdxj(path, run_lines=run_lines)
    assert path.read_text().splitlines(keepends=True) == sorted(lines)
    assert [p.name for p in tmp_path.iterdir()] == ["index.cdxj"]  # no runs left behind


def test_sort_keeps_a_final_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "index.cdxj"
    path.write_text("b 1 {}\na 1 {}")
    sort_cdxj(path)
    assert path.read_text() == "a 1 {}\nb 1 {}\n"


def test_sort_of_empty_index_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "index.cdxj"
    path.write_text("")
    sort_cdxj(path)
    assert path.read_text() == ""


def test_unwritable_index_raises_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open CDXJ index"):
        CdxjWriter(tmp_path / "missing" / "index.cdxj")


def _surt_or_url(url: str) -> str:
    try:
        key: str = surt.surt(url)
    except (ValueError, AttributeError):
        return url
    return key


PLAIN_HOSTS = ("a.com", "www.a.com", "www5.a.com", "wwwx.a.com", "www.www.b.org", "h-1.web.test")
ODD_HOSTS = ("1.2.3.4", "x.1", "0x7f.0.0.1", "123", "017.1.1.1", "www", "a..b", "a.com.", "-a.com")
SEGMENTS = (
    "", "a", "A", "Page.HTML", "..", ".", ".hidden", "%41", "%2f", "~u", "a b", "é", "(x)",
    "a;jsessionid=0123456789abcdef0123456789abcdef", "!$&'*+,=:@", "UPPER", "//",
)  # fmt: skip


def test_the_key_of_every_url_is_what_surt_gives() -> None:
    # Plain URLs take a shortcut past surt's parser; it must spell exactly surt's key, and
    # every other URL (ports, escapes, queries, dot segments, IP forms) must still reach surt.
    rng = random.Random(17)
    urls = []
    for host in PLAIN_HOSTS + ODD_HOSTS:
        for scheme in ("http://", "https://"):
            urls += [scheme + host, scheme + host + "/"]
            for _ in range(60):
                path = "/".join(rng.choice(SEGMENTS) for _ in range(rng.randrange(1, 5)))
                tail = rng.choice(("", "/", "?", "?b=2&a=1", "#f"))
                port = rng.choice(("", ":80", ":8080"))
                urls.append(f"{scheme}{host}{port}/{path}{tail}")
    alphabet = "aAzZ09-._~!$&'*+,=:@/w"
    for _ in range(3000):
        host = "".join(rng.choice("abw019-.") for _ in range(rng.randrange(1, 10)))
        path = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16)))
        www = rng.choice(("", "www.", "www7."))
        port = rng.choice(("", ":80", ":443", ":18080", ":65535", ":65536", ":080", ":0"))
        urls.append(f"{rng.choice(('http', 'https'))}://{www}{host}{port}/{path}")
    assert [url_key(url) for url in urls] == [_surt_or_url(url) for url in urls]


def test_dates_are_spelt_as_datetime_spells_them() -> None:
    # WARC-Date and the 14-digit timestamp share one spelling per second; microseconds are
    # rounded as datetime.fromtimestamp rounds them, carry to the next second included.
    rng = random.Random(3)
    times = [0.0, 0.9999995, 1.9999995, 1764000000.9999996, 1764000000.0000025, -0.5, -1.9999996]
    for _ in range(20_000):
        whole = rng.randrange(0, 4_000_000_000)
        times.append(whole + rng.random())
        times.append(whole + rng.choice((0.9999995, 0.0000005, 0.4999995, 0.0000015)))
    for moment in times:
        spelt = datetime.fromtimestamp(moment, tz=UTC).replace(tzinfo=None)
        assert warc_date(moment) == spelt.isoformat(timespec="microseconds") + "Z"
        assert _timestamp(moment) == spelt.strftime("%Y%m%d%H%M%S")


def test_the_sorted_index_is_as_readable_as_an_ordinary_file(tmp_path: Path) -> None:
    # A private temp file renamed into place would leave index.cdxj mode 0600.
    path = tmp_path / "index.cdxj"
    path.write_text("b 2 {}\na 1 {}\n")
    before = os.umask(0o022)
    try:
        sort_cdxj(path)
    finally:
        os.umask(before)
    assert path.read_text() == "a 1 {}\nb 2 {}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.cdxj"]


def test_worker_indexes_merge_into_the_crawl_index_torn_lines_cut(tmp_path: Path) -> None:
    (tmp_path / "index.cdxj").write_text('b,x)/ 2 {"n": 2}\nc,x)/ 3 {"n"')  # torn by a crash
    (tmp_path / "index-w0.cdxj").write_text('d,x)/ 4 {"n": 4}\na,x)/ 1 {"n": 1}\n')
    (tmp_path / "index-w1.cdxj").write_text('e,x)/ 5 {"n": 5}\nf,x)/ 6 {"n')  # killed mid-line
    merge_worker_indexes(tmp_path)
    assert (tmp_path / "index.cdxj").read_text().splitlines() == [
        'a,x)/ 1 {"n": 1}',
        'b,x)/ 2 {"n": 2}',
        'd,x)/ 4 {"n": 4}',
        'e,x)/ 5 {"n": 5}',
    ]
    assert not list(tmp_path.glob("index-w*.cdxj"))


def test_merging_without_sorting_leaves_the_order_to_the_writer(tmp_path: Path) -> None:
    (tmp_path / "index-w1.cdxj").write_text("z,x)/ 1 {}\n")
    (tmp_path / "index-w0.cdxj").write_text("y,x)/ 1 {}\n")
    merge_worker_indexes(tmp_path, sort=False)
    assert (tmp_path / "index.cdxj").read_text() == "y,x)/ 1 {}\nz,x)/ 1 {}\n"  # file order
    merge_worker_indexes(tmp_path)  # nothing left to merge: the index stays whole
    assert (tmp_path / "index.cdxj").read_text() == "y,x)/ 1 {}\nz,x)/ 1 {}\n"
