"""Revisit records: a repeated 2xx payload is archived once and pointed at, and read back whole."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from cdxj_indexer.main import write_cdx_index
from warcio.archiveiterator import ArchiveIterator

from gossamer.fetch.result import FetchResult
from gossamer.store.cdxj import CdxjWriter
from gossamer.store.records import MemberFiles, RecordError, read_response
from gossamer.store.revisits import (
    LOCATION_FIELD,
    REVISIT_PROFILE,
    Original,
    PayloadIndex,
    parse_location,
)
from gossamer.store.warc import WarcLocation, WarcStore

from .test_warc import START, UA, checks_clean, fixed_ids, warcio_check

BODY = b"<html><head><title>Same</title></head><body>" + b"<p>copy</p>" * 200 + b"</html>"


def page(url: str, body: bytes = BODY, status: int = 200, at: float = START) -> FetchResult:
    return FetchResult(
        url=url,
        status=status,
        reason="",
        request_headers=(("Host", "a.test"), UA),
        response_headers=(
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
        ),
        body=body,
        content=body,
        content_type="text/html; charset=utf-8",
        started_at=at,
        elapsed=0.01,
        remote_ip="127.0.0.1",
    )


def store_in(folder: Path, **kwargs: object) -> WarcStore:
    return WarcStore(folder, clock=lambda: START, make_id=fixed_ids(), **kwargs)  # type: ignore[arg-type]


def records_of(path: Path) -> list[tuple[str, dict[str, str], bytes, str | None]]:
    """(type, WARC headers, block after the HTTP headers, HTTP status line) of every record."""
    out = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            headers = dict(record.rec_headers.headers)
            http = record.http_headers.statusline if record.http_headers else None
            out.append((record.rec_type, headers, record.content_stream().read(), http))
    return out


def test_a_repeated_payload_becomes_a_revisit_pointing_at_the_first(tmp_path: Path) -> None:
    with store_in(tmp_path) as store:
        first = store.write(page("http://a.test/"))
        second = store.write(page("http://a.test/copy/1", at=START + 1), {"via": "x"})
    assert not first.revisit
    assert second.revisit
    assert second.digest == first.digest
    records = records_of(store.files[0])
    kinds = [kind for kind, *_ in records]
    assert kinds == ["warcinfo", "response", "request", "revisit", "request", "metadata"]
    original = records[1][1]
    _, revisit, block, status = records[3]
    assert revisit["WARC-Target-URI"] == "http://a.test/copy/1"
    assert revisit["WARC-Profile"] == REVISIT_PROFILE
    assert revisit["WARC-Refers-To"] == original["WARC-Record-ID"]
    assert revisit["WARC-Refers-To-Target-URI"] == "http://a.test/"
    assert revisit["WARC-Refers-To-Date"] == original["WARC-Date"]
    assert revisit["WARC-Payload-Digest"] == original["WARC-Payload-Digest"] == first.digest
    assert revisit["WARC-Date"] != original["WARC-Date"]
    assert revisit[LOCATION_FIELD] == f"{first.filename} {first.offset} {first.length}"
    # The block is the HTTP response headers, and no payload follows them.
    assert status == "200 OK"
    assert block == b""
    # The request and metadata records of the duplicate are concurrent to the revisit.
    assert records[4][1]["WARC-Concurrent-To"] == revisit["WARC-Record-ID"]
    assert records[5][1]["WARC-Concurrent-To"] == revisit["WARC-Record-ID"]
    assert warcio_check(store.files[0]).returncode == 0
    assert checks_clean(store.files[0])


@pytest.mark.parametrize(
    "other",
    [
        page("http://a.test/small", body=b"tiny but repeated"),
        page("http://a.test/gone", status=404),
        replace(page("http://a.test/cut"), truncated=True),
    ],
    ids=["small", "not-2xx", "truncated"],
)
def test_small_failed_or_cut_bodies_are_stored_whole(tmp_path: Path, other: FetchResult) -> None:
    with store_in(tmp_path) as store:
        locations = [store.write(replace(other, url=f"{other.url}/{n}")) for n in range(3)]
    assert not any(location.revisit for location in locations)
    kinds = [kind for kind, *_ in records_of(store.files[0])]
    assert "revisit" not in kinds


def test_the_index_keeps_only_the_most_recently_used_payloads() -> None:
    index = PayloadIndex(max_entries=2)

    def original(name: str) -> Original:
        return Original(f"<{name}>", f"http://a.test/{name}", "2023-01-01T00:00:00Z", "f", 0, 1)

    index.add(b"a" * 20, original("a"))
    index.add(b"b" * 20, original("b"))
    assert index.find(b"a" * 20) == original("a")  # a is now the most recent
    index.add(b"c" * 20, original("c"))
    assert len(index) == 2
    assert index.find(b"b" * 20) is None
    assert index.find(b"a" * 20) == original("a")
    assert index.find(b"c" * 20) == original("c")


def test_a_payload_evicted_from_the_index_is_stored_whole_again(tmp_path: Path) -> None:
    other = BODY.replace(b"copy", b"else")
    with store_in(tmp_path, originals=PayloadIndex(max_entries=1)) as store:
        store.write(page("http://a.test/1"))
        store.write(page("http://a.test/2", body=other))
        again = store.write(page("http://a.test/3"))
        repeat = store.write(page("http://a.test/4"))
    assert not again.revisit
    assert repeat.revisit


def test_deduplication_can_be_turned_off(tmp_path: Path) -> None:
    with store_in(tmp_path, originals=PayloadIndex(max_entries=0)) as store:
        locations = [store.write(page(f"http://a.test/{n}")) for n in range(2)]
    assert not any(location.revisit for location in locations)


def read_at(folder: Path, location: WarcLocation) -> bytes:
    with (folder / location.filename).open("rb") as stream:
        stream.seek(location.offset)
        return stream.read(location.length)


def test_a_revisit_reads_back_with_the_original_body_even_across_files(tmp_path: Path) -> None:
    with store_in(tmp_path, max_file_bytes=1_000) as store:
        first = store.write(page("http://a.test/"))
        second = store.write(page("http://a.test/copy/1", at=START + 1))
    assert first.filename != second.filename  # rotated in between
    files = MemberFiles(tmp_path)
    try:
        response = read_response(read_at(tmp_path, second), fetch=files.read)
    finally:
        files.close()
    assert response.url == "http://a.test/copy/1"
    assert response.status == 200
    assert response.body == response.content == BODY
    assert response.refers_to == "http://a.test/"
    assert response.crawled_at.timestamp() == pytest.approx(START + 1)
    with pytest.raises(RecordError, match="no response record"):
        read_response(read_at(tmp_path, second))  # no way to reach the original


def test_a_revisit_whose_original_is_gone_is_an_unreadable_record(tmp_path: Path) -> None:
    with store_in(tmp_path) as store:
        first = store.write(page("http://a.test/"))
        second = store.write(page("http://a.test/copy/1"))
    path = tmp_path / first.filename
    data = bytearray(path.read_bytes())
    data[first.offset + 20] ^= 0xFF  # damage the original's gzip member
    path.write_bytes(bytes(data))
    files = MemberFiles(tmp_path)
    try:
        with pytest.raises(RecordError, match="original of revisit record unreadable"):
            read_response(read_at(tmp_path, second), fetch=files.read)

        def elsewhere(name: str, offset: int, length: int) -> bytes:
            return read_at(tmp_path, second)  # some other record than the original

        with pytest.raises(RecordError, match="holds another record"):
            read_response(read_at(tmp_path, second), fetch=elsewhere)
    finally:
        files.close()


def test_location_field_round_trips_and_rejects_junk() -> None:
    original = Original("<x>", "http://a.test/", "d", "g-1.warc.gz", 12, 345)
    assert parse_location(original.location) == ("g-1.warc.gz", 12, 345)
    assert parse_location("g-1.warc.gz 12") is None
    assert parse_location("g-1.warc.gz -1 3") is None


def test_revisit_lines_match_cdxj_indexer(tmp_path: Path) -> None:
    results = [page("http://a.test/"), page("http://a.test/copy/1"), page("http://a.test/b")]
    with store_in(tmp_path) as store, CdxjWriter(tmp_path / "index.cdxj") as writer:
        for result in results:
            writer.add(result, store.write(result))
    theirs = tmp_path / "rebuilt.cdxj"
    write_cdx_index(str(theirs), [str(path) for path in store.files], {"sort": True})
    ours = (tmp_path / "index.cdxj").read_text()
    assert ours == theirs.read_text()
    mimes = [json.loads(line.split(" ", 2)[2])["mime"] for line in ours.splitlines()]
    assert mimes.count("warc/revisit") == 2
