"""WarcStore: records that warcio accepts, seekable offsets, rotation, fixed bytes, faults."""

from __future__ import annotations

import errno
import gzip
import itertools
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from isal import isal_zlib
from warcio.archiveiterator import ArchiveIterator

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.warc import WarcLocation, WarcStore, payload_digest
from gossamer.store.warcscan import Member, scan

START = 1_700_000_000.25
UA = ("User-Agent", "Gossamer/0.1 (+https://example.invalid/bot)")


def sample_results() -> list[FetchResult]:
    """A 200 gzip page sent chunked, a 404, a redirect and a robots.txt."""
    html = b"<html><head><title>Home</title></head><body>" + b"<p>hello</p>" * 200 + b"</html>"
    page = gzip.compress(html, mtime=0)
    return [
        FetchResult(
            url="http://example.com/robots.txt",
            status=200,
            reason="OK",
            request_headers=(("Host", "example.com"), UA),
            response_headers=(("Content-Type", "text/plain"), ("Content-Length", "27")),
            body=b"User-agent: *\nDisallow: /x\n",
            content=b"User-agent: *\nDisallow: /x\n",
            content_type="text/plain",
            started_at=START,
            elapsed=0.01,
            remote_ip="192.0.2.1",
        ),
        FetchResult(
            url="http://example.com/",
            status=200,
            reason="OK",
            request_headers=(("Host", "example.com"), UA, ("Accept-Encoding", "gzip")),
            response_headers=(
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Encoding", "gzip"),
                ("Transfer-Encoding", "chunked"),
            ),
            body=page,
            content=html,
            content_type="text/html",
            started_at=START + 1.5,
            elapsed=0.2,
            remote_ip="192.0.2.1",
        ),
        FetchResult(
            url="http://example.com/missing?q=1",
            status=404,
            reason="Not Found",
            request_headers=(("Host", "example.com"), UA),
            response_headers=(("Content-Type", "text/html"), ("Content-Length", "9")),
            body=b"not found",
            content=b"not found",
            content_type="text/html",
            started_at=START + 2.000001,
            elapsed=0.05,
        ),
        FetchResult(
            url="http://example.com/old",
            status=301,
            reason="",  # as over HTTP/2: the store fills in the standard phrase
            request_headers=(("Host", "example.com"), UA),
            response_headers=(("Location", "http://example.com/new"), ("Content-Length", "0")),
            started_at=START + 3,
            elapsed=0.03,
            remote_ip="192.0.2.1",
        ),
    ]


def fixed_ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"<urn:uuid:{uuid.UUID(int=next(counter))}>"


def fixed_store(directory: Path, max_file_bytes: int = 1_000_000_000) -> WarcStore:
    return WarcStore(
        directory, max_file_bytes=max_file_bytes, clock=lambda: START, make_id=fixed_ids()
    )


def write_all(store: WarcStore, results: list[FetchResult]) -> list[WarcLocation]:
    with store:
        return [store.write(result) for result in results]


def warcio_check(path: Path) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).parent / "warcio"
    return subprocess.run(
        [str(command), "check", "-v", str(path)], capture_output=True, text=True, check=False
    )


def digest_verdicts(path: Path) -> list[bool | None]:
    """What ``warcio check`` verifies, in process: every record of the file parses, and the
    digests each one states match its block and payload (True), or it states none (None).

    Raises ``ArchiveLoadFailed`` where the file stops being a WARC.
    """
    verdicts: list[bool | None] = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream, check_digests=True):
            content = record.content_stream()
            while content.read(1 << 16):
                pass
            verdicts.append(record.digest_checker.passed)
    return verdicts


def checks_clean(path: Path) -> bool:
    """In-process ``warcio check``: at least one record, and no digest that fails."""
    verdicts = digest_verdicts(path)
    return bool(verdicts) and False not in verdicts


def test_warcio_check_accepts_every_file(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    write_all(store, sample_results())
    (path,) = store.files
    checked = warcio_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("digest pass") == 1 + 2 * len(sample_results())


def test_records_read_back_with_same_urls_statuses_and_payloads(tmp_path: Path) -> None:
    results = sample_results()
    store = fixed_store(tmp_path)
    write_all(store, results)
    with store.files[0].open("rb") as stream:
        records = list(_parsed(stream))
    assert [kind for kind, *_ in records] == ["warcinfo"] + ["response", "request"] * len(results)
    responses = [r for r in records if r[0] == "response"]
    assert [(url, status, body) for _, url, status, body, _ in responses] == [
        (r.url, str(r.status), r.body) for r in results
    ]
    first_warcinfo = records[0][4]
    assert first_warcinfo.get_header("WARC-Filename") == store.files[0].name


def _parsed(stream: object) -> list[tuple[str, str, str | None, bytes, Any]]:
    out: list[tuple[str, str, str | None, bytes, Any]] = []
    for record in ArchiveIterator(stream):
        status = record.http_headers.get_statuscode() if record.http_headers else None
        url = record.rec_headers.get_header("WARC-Target-URI") or ""
        out.append((record.rec_type, url, status, record.raw_stream.read(), record.rec_headers))
    return out


def test_request_and_response_are_linked_and_dated(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    write_all(store, sample_results()[1:2])
    with store.files[0].open("rb") as stream:
        _, response, request = list(ArchiveIterator(stream))
    rec = response.rec_headers
    assert rec.get_header("WARC-Date") == "2023-11-14T22:13:21.750000Z"
    assert rec.get_header("WARC-IP-Address") == "192.0.2.1"
    assert rec.get_header("WARC-Payload-Digest").startswith("sha1:")
    assert rec.get_header("WARC-Block-Digest").startswith("sha1:")
    assert request.rec_headers.get_header("WARC-Concurrent-To") == rec.get_header("WARC-Record-ID")
    assert request.http_headers.protocol == "GET"
    assert request.http_headers.statusline == "/ HTTP/1.1"
    # The body is stored de-chunked, so the archived framing must say so.
    headers = response.http_headers
    assert headers.get_header("Transfer-Encoding") is None
    assert headers.get_header("Content-Length") == str(len(sample_results()[1].body))
    assert headers.get_header("Content-Encoding") == "gzip"


def test_each_offset_seeks_to_its_response(tmp_path: Path) -> None:
    results = sample_results()
    store = fixed_store(tmp_path)
    locations = write_all(store, results)
    with store.files[0].open("rb") as stream:
        for result, location in zip(results, locations, strict=True):
            assert location.filename == store.files[0].name
            stream.seek(location.offset)
            record = next(iter(ArchiveIterator(stream)))
            assert record.rec_type == "response"
            assert record.rec_headers.get_header("WARC-Target-URI") == result.url
            assert record.raw_stream.read() == result.body
            # The stated length covers exactly one whole gzip member.
            stream.seek(location.offset)
            record_bytes = gzip.decompress(stream.read(location.length))
            assert record_bytes.startswith(b"WARC/1.1\r\nWARC-Type: response\r\n")
            assert record_bytes.count(b"WARC/1.1\r\n") == 1


def test_rotation_makes_several_valid_files(tmp_path: Path) -> None:
    results = sample_results() * 3
    store = fixed_store(tmp_path, max_file_bytes=2_000)
    locations = write_all(store, results)
    files = store.files
    assert len(files) > 2
    assert len({path.name for path in files}) == len(files)
    for serial, path in enumerate(files):
        assert path.name == f"gossamer-20231114221320-{serial:05d}.warc.gz"
        assert checks_clean(path)
        with path.open("rb") as stream:
            assert next(iter(ArchiveIterator(stream))).rec_type == "warcinfo"
    by_name = {path.name: path.read_bytes() for path in files}
    for result, location in zip(results, locations, strict=True):
        member = by_name[location.filename][location.offset : location.offset + location.length]
        (record,) = list(ArchiveIterator(BytesIO(member)))
        assert record.rec_headers.get_header("WARC-Target-URI") == result.url


def test_fixed_clock_and_ids_give_identical_bytes(tmp_path: Path) -> None:
    first, second = fixed_store(tmp_path / "a"), fixed_store(tmp_path / "b")
    write_all(first, sample_results())
    write_all(second, sample_results())
    assert first.files[0].read_bytes() == second.files[0].read_bytes()


def test_resumed_store_starts_a_new_file(tmp_path: Path) -> None:
    first = fixed_store(tmp_path)
    write_all(first, sample_results()[:1])
    before = first.files[0].read_bytes()
    second = fixed_store(tmp_path)
    write_all(second, sample_results()[1:2])
    assert second.files[0].name.endswith("-00001.warc.gz")
    assert first.files[0].read_bytes() == before


def test_failed_fetch_has_nothing_to_archive(tmp_path: Path) -> None:
    with fixed_store(tmp_path) as store, pytest.raises(ValueError, match="no HTTP response"):
        store.write(FetchResult(url="http://example.com/", status=0, error="dns"))


def test_folder_that_cannot_exist_raises_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create WARC folder"):
        WarcStore(blocker / "warc")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder_raises_store_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="cannot create WARC file"):
            WarcStore(folder)
    finally:
        folder.chmod(0o700)


def test_full_disk_raises_store_error_and_leaves_a_valid_file(small_disk: Path) -> None:
    store = WarcStore(small_disk, compress_level=0)
    big = replace(sample_results()[0], response_headers=())
    written = 0
    with pytest.raises(StoreError, match="No space left on device"):
        for _ in range(100):
            # A fresh body each time: a repeated one would shrink to a revisit record.
            store.write(replace(big, body=os.urandom(40_000)))
            written += 1
    store.close()
    assert written > 0
    # The torn record was cut off: what is on disk is complete and checks clean.
    assert checks_clean(store.files[0])
    with store.files[0].open("rb") as stream:
        responses = [r for r in ArchiveIterator(stream) if r.rec_type == "response"]
    assert len(responses) == written


def test_metadata_record_carries_crawl_fields(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    store.write(sample_results()[0], {"via": "http://a.test/", "hopsFromSeed": "3"})
    store.close()
    assert digest_verdicts(store.files[0]) == [True] * 4
    with store.files[0].open("rb") as stream:
        records = list(ArchiveIterator(stream))
        kinds = [r.rec_type for r in records]
    assert kinds == ["warcinfo", "response", "request", "metadata"]
    meta = records[-1]
    assert meta.rec_headers.get_header("Content-Type") == "application/warc-fields"
    assert meta.rec_headers.get_header("WARC-Concurrent-To") == records[1].rec_headers.get_header(
        "WARC-Record-ID"
    )


def test_every_record_is_written_byte_for_byte_as_specified(tmp_path: Path) -> None:
    """Found by mutation testing: names, values and order of each header, status line,
    request line and fields bodies, for the paths a plain sample does not take."""
    odd = FetchResult(
        url="http://a.test/p?q=1",
        status=299,  # no standard reason phrase
        http_version="2",
        request_headers=(("Host", "a.test"),),
        response_headers=(("Content-Length", "1"), ("content-length", "9"), ("X", "y")),
        body=b"abc",
        started_at=1_700_000_000.5,
        remote_ip="10.0.0.1",
        truncated=True,
    )
    chunked = FetchResult(
        url="http://a.test",
        status=201,
        response_headers=(("Transfer-Encoding", "chunked"),),
        body=b"xy",
    )
    store = fixed_store(tmp_path)
    with store:
        store.write(odd, {"via": "http://a.test/", "hops": "L"})
        store.write(chunked)
    data = gzip.decompress(store.files[0].read_bytes())
    assert data == b"".join(
        [
            b"WARC/1.1\r\nWARC-Type: warcinfo\r\n"
            b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n"
            b"WARC-Date: 2023-11-14T22:13:20.250000Z\r\n"
            b"WARC-Filename: gossamer-20231114221320-00000.warc.gz\r\n"
            b"WARC-Block-Digest: sha1:ZRWOFLUE7S5VAJPAECNBKHRMIZPZ5K3B\r\n"
            b"Content-Type: application/warc-fields\r\nContent-Length: 146\r\n\r\n"
            b"software: Gossamer/0.1\r\nformat: WARC File Format 1.1\r\n"
            b"conformsTo: http://iipc.github.io/warc-specifications/specifications/"
            b"warc-format/warc-1.1/\r\n\r\n\r\n",
            b"WARC/1.1\r\nWARC-Type: response\r\n"
            b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n"
            b"WARC-Date: 2023-11-14T22:13:20.500000Z\r\nWARC-Target-URI: http://a.test/p?q=1\r\n"
            b"WARC-IP-Address: 10.0.0.1\r\n"
            b"WARC-Payload-Digest: sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\r\n"
            b"WARC-Truncated: length\r\n"
            b"WARC-Block-Digest: sha1:46NBPAUMHYEIM4ERR26LT7N7QSI6HZGG\r\n"
            b"Content-Type: application/http; msgtype=response\r\nContent-Length: 42\r\n\r\n"
            b"HTTP/2 299\r\nContent-Length: 3\r\nX: y\r\n\r\nabc\r\n\r\n",
            b"WARC/1.1\r\nWARC-Type: request\r\n"
            b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000003>\r\n"
            b"WARC-Date: 2023-11-14T22:13:20.500000Z\r\nWARC-Target-URI: http://a.test/p?q=1\r\n"
            b"WARC-Concurrent-To: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n"
            b"WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n"
            b"WARC-Block-Digest: sha1:NSPVHO7TQJH5MC2BQ5STRX7Y3RCYZRQI\r\n"
            b"Content-Type: application/http; msgtype=request\r\nContent-Length: 37\r\n\r\n"
            b"GET /p?q=1 HTTP/1.1\r\nHost: a.test\r\n\r\n\r\n\r\n",
            b"WARC/1.1\r\nWARC-Type: metadata\r\n"
            b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000004>\r\n"
            b"WARC-Date: 2023-11-14T22:13:20.500000Z\r\nWARC-Target-URI: http://a.test/p?q=1\r\n"
            b"WARC-Concurrent-To: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n"
            b"WARC-Payload-Digest: sha1:VI7MO644VKWGLHPZ4KKT5TIVTCXA4ZZQ\r\n"
            b"WARC-Block-Digest: sha1:VI7MO644VKWGLHPZ4KKT5TIVTCXA4ZZQ\r\n"
            b"Content-Type: application/warc-fields\r\nContent-Length: 30\r\n\r\n"
            b"via: http://a.test/\r\nhops: L\r\n\r\n\r\n",
            b"WARC/1.1\r\nWARC-Type: response\r\n"
            b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000005>\r\n"
            b"WARC-Date: 1970-01-01T00:00:00.000000Z\r\nWARC-Target-URI: http://a.test\r\n"
            b"WARC-Payload-Digest: sha1:L6CFTGBPT5QZ6SYNTLZFIKRAQ3SWUS7P\r\n"
            b"WARC-Block-Digest: sha1:KIHNC3AQRY4KE2HR6ZQPHVMWLU6RAFAM\r\n"
            b"Content-Type: application/http; msgtype=response\r\nContent-Length: 45\r\n\r\n"
            b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nxy\r\n\r\n",
            b"WARC/1.1\r\nWARC-Type: request\r\n"
            b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000006>\r\n"
            b"WARC-Date: 1970-01-01T00:00:00.000000Z\r\nWARC-Target-URI: http://a.test\r\n"
            b"WARC-Concurrent-To: <urn:uuid:00000000-0000-0000-0000-000000000005>\r\n"
            b"WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n"
            b"WARC-Block-Digest: sha1:HZXZT4LLCPHWK5TQRRYZ7H7BIVEI4ETY\r\n"
            b"Content-Type: application/http; msgtype=request\r\nContent-Length: 18\r\n\r\n"
            b"GET / HTTP/1.1\r\n\r\n\r\n\r\n",
        ]
    )


# -- found by mutation testing (second round) ----------------------------------------------


@pytest.fixture
def far_east_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time 14 hours ahead of UTC (a POSIX zone string: no tz database needed)."""
    monkeypatch.setenv("TZ", "KIRI-14")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("far_east_zone")
def test_dates_and_file_names_are_utc_whatever_the_local_zone(tmp_path: Path) -> None:
    assert time.localtime(START).tm_mday != time.gmtime(START).tm_mday  # the zone took
    store = fixed_store(tmp_path)
    write_all(store, sample_results()[:1])
    assert store.files[0].name == "gossamer-20231114221320-00000.warc.gz"
    with store.files[0].open("rb") as stream:
        dates = [r.rec_headers.get_header("WARC-Date") for r in ArchiveIterator(stream)]
    assert dates == ["2023-11-14T22:13:20.250000Z"] * 3


def members_of(path: Path) -> list[Member]:
    items = list(scan(path))
    assert all(isinstance(item, Member) for item in items)
    return [item for item in items if isinstance(item, Member)]


def test_default_store_compresses_at_isal_level_1_into_a_nested_new_folder(
    tmp_path: Path,
) -> None:
    # Big enough that isa-l's levels 1 and 2 give different bytes (small records do not).
    page = b"".join(b"<p>line %d of the page</p>\n" % line for line in range(5000))
    big = FetchResult(url="http://a.test/", status=200, body=page)
    folder = tmp_path / "not" / "yet" / "there"
    store = WarcStore(folder, clock=lambda: START, make_id=fixed_ids())
    write_all(store, [big])
    assert store.files[0].parent == folder
    whole = store.files[0].read_bytes()
    members = members_of(store.files[0])
    assert [member.headers["warc-type"] for member in members] == [
        "warcinfo",
        "response",
        "request",
    ]
    for member in members:
        stored = whole[member.offset : member.offset + member.length]
        assert stored == isal_zlib.compress(member.data, 1, 31)
    response = members[1]
    stored = whole[response.offset : response.offset + response.length]
    assert stored != isal_zlib.compress(response.data, 2, 31)


def test_location_carries_the_payload_digest_of_the_body(tmp_path: Path) -> None:
    results = sample_results()
    store = fixed_store(tmp_path)
    locations = write_all(store, results)
    assert [location.digest for location in locations] == [
        payload_digest(result.body) for result in results
    ]
    with store.files[0].open("rb") as stream:
        stated = [
            r.rec_headers.get_header("WARC-Payload-Digest")
            for r in ArchiveIterator(stream)
            if r.rec_type == "response"
        ]
    assert stated == [location.digest for location in locations]


def test_rotation_happens_only_when_the_limit_would_be_passed(tmp_path: Path) -> None:
    pair = sample_results()[:2]
    exact = fixed_store(tmp_path / "probe")
    write_all(exact, pair)
    size = exact.files[0].stat().st_size
    # A file may grow to exactly the limit ...
    fits = fixed_store(tmp_path / "fits", max_file_bytes=size)
    write_all(fits, pair)
    assert [path.stat().st_size for path in fits.files] == [size]
    # ... but not one byte past it.
    over = fixed_store(tmp_path / "over", max_file_bytes=size - 1)
    locations = write_all(over, pair)
    assert len(over.files) == 2
    assert [location.filename for location in locations] == [path.name for path in over.files]
    assert all(path.stat().st_size <= size - 1 for path in over.files)


def test_a_pair_larger_than_the_limit_still_goes_into_the_fresh_file(tmp_path: Path) -> None:
    results = sample_results()
    store = fixed_store(tmp_path, max_file_bytes=1)
    locations = write_all(store, results)
    assert len(store.files) == len(results)
    for path, location in zip(store.files, locations, strict=True):
        assert location.filename == path.name
        with path.open("rb") as stream:
            kinds = [record.rec_type for record in ArchiveIterator(stream)]
        assert kinds == ["warcinfo", "response", "request"]


def test_prefix_names_of_other_writers_do_not_move_the_numbering(tmp_path: Path) -> None:
    (tmp_path / "gossamer-notes.warc.gz").write_bytes(b"not ours")
    (tmp_path / "gossamer-w1-20231114221320-00007.warc.gz").write_bytes(b"another writer")
    (tmp_path / "gossamer-20231114221320-00002.warc.gz").write_bytes(b"an earlier run")
    store = fixed_store(tmp_path)
    store.write(sample_results()[0])
    store.close()
    assert store.files[0].name == "gossamer-20231114221320-00003.warc.gz"


def test_a_store_that_archives_nothing_leaves_no_file(tmp_path: Path) -> None:
    # A resume with nothing left to fetch: no file holding only its warcinfo record.
    (tmp_path / "gossamer-20231114221320-00000.warc.gz").write_bytes(b"an earlier run")
    with fixed_store(tmp_path) as store:
        pass
    assert store.files == []
    assert [path.name for path in tmp_path.iterdir()] == ["gossamer-20231114221320-00000.warc.gz"]
    # Closed and written to again: the next file in the numbering, opened by its first record.
    store.write(sample_results()[0])
    store.close()
    assert [path.name for path in store.files] == ["gossamer-20231114221320-00001.warc.gz"]
    assert checks_clean(store.files[0])


def test_a_file_name_the_system_refuses_raises_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"^cannot create WARC file .*: File name too long$"):
        WarcStore(tmp_path, prefix="p" * 300)


def test_a_failed_close_raises_store_error(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    store.write(sample_results()[0])
    out = store._out
    assert out is not None
    os.close(out.fileno())  # the descriptor goes away under the store
    with pytest.raises(StoreError, match=r"^cannot close WARC file: Bad file descriptor$"):
        store.close()


def test_a_failed_write_raises_store_error_and_the_next_write_starts_a_new_file(
    tmp_path: Path,
) -> None:
    results = sample_results()
    store = fixed_store(tmp_path)
    store.write(results[0])
    before = store.files[0].read_bytes()
    out = store._out
    assert out is not None
    # With the descriptor gone, the write, the cut back and the close all fail; the write's
    # error is the one reported.
    os.close(out.fileno())
    with pytest.raises(StoreError, match=r"^cannot write WARC file .*: Bad file descriptor$"):
        store.write(results[1])
    location = store.write(results[2])
    store.close()
    assert location.filename == store.files[1].name
    assert store.files[0].read_bytes() == before
    assert checks_clean(store.files[1])


class Trickle:
    """A file whose write() takes at most ``step`` bytes, and nothing at all once ``room``
    bytes have gone in: the short writes an unbuffered file may do, down to a full disk."""

    def __init__(self, raw: Any, step: int, room: int | None = None) -> None:
        self._raw = raw
        self._step = step
        self._room = room
        self.calls = 0

    def write(self, data: bytes | memoryview) -> int:
        self.calls += 1
        take = self._step if self._room is None else min(self._step, self._room)
        count: int = self._raw.write(bytes(data[:take]))
        if self._room is not None:
            self._room -= count
        return count

    def truncate(self, size: int) -> int:
        done: int = self._raw.truncate(size)
        return done

    def close(self) -> None:
        self._raw.close()


def test_short_writes_are_continued_until_the_record_is_whole(tmp_path: Path) -> None:
    reference = fixed_store(tmp_path / "reference")
    write_all(reference, sample_results())
    store = fixed_store(tmp_path / "trickle")
    store._open_next()  # its warcinfo record, as the first write would
    trickle = Trickle(store._out, step=100)
    store._out = trickle  # type: ignore[assignment]
    write_all(store, sample_results())
    assert trickle.calls > len(sample_results())  # the writes really were short
    assert store.files[0].read_bytes() == reference.files[0].read_bytes()


def test_a_write_that_takes_nothing_is_a_full_disk(tmp_path: Path) -> None:
    results = sample_results()
    store = fixed_store(tmp_path)
    store.write(results[0])
    before = store.files[0].read_bytes()
    store._out = Trickle(store._out, step=100, room=250)  # type: ignore[assignment]
    with pytest.raises(StoreError, match=r"^cannot write WARC file .*: No space left") as caught:
        store.write(results[1])
    cause = caught.value.__cause__
    assert isinstance(cause, OSError)
    assert (cause.errno, cause.strerror) == (errno.ENOSPC, os.strerror(errno.ENOSPC))
    # The part that went in was cut off again.
    assert store.files[0].read_bytes() == before


def test_a_response_without_framing_headers_is_archived_without_any(tmp_path: Path) -> None:
    # Read to the end of the connection (HTTP/1.0 style): no length to state or fix.
    plain = FetchResult(
        url="http://a.test/",
        status=200,
        response_headers=(("Content-Type", "text/plain"),),
        body=b"to the end",
    )
    store = fixed_store(tmp_path)
    write_all(store, [plain])
    with store.files[0].open("rb") as stream:
        responses = [
            (r.http_headers.headers, r.content_stream().read())
            for r in ArchiveIterator(stream)
            if r.rec_type == "response"
        ]
    assert responses == [([("Content-Type", "text/plain")], b"to the end")]


# A reason phrase as the HTTP client hands it over: the server's bytes decoded as UTF-8 with
# surrogate escapes (RFC 9112 allows bytes 0x80-0xFF there; clients are to ignore it).
REASONS = {
    "utf-8": ("Bien reçu", "Bien reçu".encode()),
    "latin-1": (
        "Não encontrado".encode("latin-1").decode("utf-8", "surrogateescape"),
        "Não encontrado".encode("latin-1"),
    ),
    "control": ("A\x01B\x7f", b"A%01B%7F"),
}


@pytest.mark.parametrize("kind", sorted(REASONS))
@pytest.mark.parametrize("header_value", ["plain", "café"])  # non-ASCII: warcio builds it
def test_reason_phrase_keeps_the_servers_bytes(
    tmp_path: Path, kind: str, header_value: str
) -> None:
    reason, archived = REASONS[kind]
    page = replace(
        sample_results()[1],
        reason=reason,
        response_headers=(("Content-Type", "text/html"), ("X-Note", header_value)),
        body=bytes(range(256)) * 40,  # big enough to be deduplicated
    )
    twin = replace(page, url="http://example.com/twin")  # same payload: a revisit record
    store = fixed_store(tmp_path)
    write_all(store, [page, twin])
    (path,) = store.files
    checked = warcio_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with path.open("rb") as stream:
        kinds = [
            (record.rec_type, record.http_headers.statusline)
            for record in ArchiveIterator(stream)
            if record.rec_type in ("response", "revisit")
        ]
    # Readers decode the line as UTF-8, falling back to Latin-1 as warcio does.
    expected = "200 " + archived.decode("iso-8859-1" if kind == "latin-1" else "utf-8")
    assert kinds == [("response", expected), ("revisit", expected)]
    raw = gzip.decompress(path.read_bytes())
    assert raw.count(b"HTTP/1.1 200 " + archived + b"\r\n") == 2
    if header_value != "plain":  # the value's bytes (one character each), percent-encoded
        assert raw.count(b"X-Note: caf%E9\r\n") == 2
