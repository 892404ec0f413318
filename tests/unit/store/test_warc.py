"""WarcStore: records that warcio accepts, seekable offsets, rotation, fixed bytes, faults."""

from __future__ import annotations

import gzip
import itertools
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.warc import WarcLocation, WarcStore

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
        assert warcio_check(path).returncode == 0
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
    big = replace(sample_results()[0], body=os.urandom(40_000), response_headers=())
    written = 0
    with pytest.raises(StoreError, match="No space left on device"):
        for _ in range(100):
            store.write(big)
            written += 1
    store.close()
    assert written > 0
    # The torn record was cut off: what is on disk is complete and checks clean.
    assert warcio_check(store.files[0]).returncode == 0
    with store.files[0].open("rb") as stream:
        responses = [r for r in ArchiveIterator(stream) if r.rec_type == "response"]
    assert len(responses) == written


def test_metadata_record_carries_crawl_fields(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    store.write(sample_results()[0], {"via": "http://a.test/", "hopsFromSeed": "3"})
    store.close()
    assert warcio_check(store.files[0]).returncode == 0
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
