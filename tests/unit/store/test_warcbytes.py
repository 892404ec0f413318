"""warcbytes: the records of an exchange, byte for byte what warcio's WARCWriter writes."""

from __future__ import annotations

import base64
import hashlib
import uuid
from io import BytesIO

from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gossamer.store import warcbytes

ID = "<urn:uuid:00000000-0000-0000-0000-00000000002a>"
OTHER = "<urn:uuid:00000000-0000-0000-0000-00000000002b>"
DATE = "2026-11-23T18:00:00.123456Z"

names = st.text(alphabet="ABCXYZabcxyz-", min_size=1, max_size=12)
values = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
headers = st.lists(st.tuples(names, values), max_size=8)
urls = st.sampled_from(
    ["http://a.test/", "https://b.test:8443/p?q=1", "http://c.test/%E2%82%AC/x;y=z"]
)


def by_warcio(
    uri: str,
    kind: str,
    first: dict[str, str],
    http: StatusAndHeaders | None,
    payload: bytes,
    *,
    content_type: str = "",
) -> bytes:
    """The record as Gossamer built it with warcio before warcbytes (WarcStore's old path)."""
    out = BytesIO()
    writer = WARCWriter(out, gzip=False, warc_version="1.1")
    record = writer.create_warc_record(
        uri,
        kind,
        payload=BytesIO(payload),
        length=len(payload),
        warc_content_type=content_type,
        warc_headers_dict=first,
        http_headers=http,
    )
    writer.write_record(record)
    return out.getvalue()


@settings(max_examples=150, deadline=None)
@given(
    url=urls,
    status=st.sampled_from(["200 OK", "404 Not Found", "299", "301 Moved Permanently"]),
    version=st.sampled_from(["1.1", "1.0", "2"]),
    response_headers=headers,
    body=st.binary(max_size=3000),
    ip=st.sampled_from(["", "192.0.2.7"]),
    truncated=st.booleans(),
)
def test_response_records_match_warcio(
    *,
    url: str,
    status: str,
    version: str,
    response_headers: list[tuple[str, str]],
    body: bytes,
    ip: str,
    truncated: bool,
) -> None:
    first = {"WARC-Type": "response", "WARC-Record-ID": ID, "WARC-Date": DATE}
    first["WARC-Target-URI"] = url
    if ip:
        first["WARC-IP-Address"] = ip
    digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
    old = dict(first, **{"WARC-Payload-Digest": digest})
    if truncated:
        old["WARC-Truncated"] = "length"
    http = StatusAndHeaders(status, list(response_headers), protocol=f"HTTP/{version}")
    expected = by_warcio(url, "response", old, http, body)
    head = warcbytes.http_block(f"HTTP/{version} {status}", response_headers)
    assert warcbytes.response_record(first, digest, truncated, head, body) == expected


@settings(max_examples=100, deadline=None)
@given(url=urls, request_headers=headers, target=st.sampled_from(["/", "/p?q=1", "/a%20b"]))
def test_request_records_match_warcio(
    url: str, request_headers: list[tuple[str, str]], target: str
) -> None:
    first = {"WARC-Type": "request", "WARC-Record-ID": ID, "WARC-Date": DATE}
    first |= {"WARC-Target-URI": url, "WARC-Concurrent-To": OTHER}
    http = StatusAndHeaders(f"{target} HTTP/1.1", list(request_headers), protocol="GET")
    expected = by_warcio(url, "request", dict(first), http, b"")
    head = warcbytes.http_block(f"GET {target} HTTP/1.1", request_headers)
    assert warcbytes.request_record(first, head) == expected


@settings(max_examples=100, deadline=None)
@given(url=urls, fields=st.lists(st.tuples(names, values), min_size=1, max_size=6))
def test_metadata_records_match_warcio(url: str, fields: list[tuple[str, str]]) -> None:
    body = "".join(f"{key}: {value}\r\n" for key, value in fields).encode()
    first = {"WARC-Type": "metadata", "WARC-Record-ID": ID, "WARC-Date": DATE}
    first |= {"WARC-Target-URI": url, "WARC-Concurrent-To": OTHER}
    expected = by_warcio(
        url, "metadata", dict(first), None, body, content_type="application/warc-fields"
    )
    assert warcbytes.metadata_record(first, body) == expected


@given(st.binary(max_size=64))
def test_digest_text_is_base32_of_the_sha1(data: bytes) -> None:
    raw = hashlib.sha1(data).digest()
    assert warcbytes.digest_text(raw) == "sha1:" + base64.b32encode(raw).decode()


def test_record_ids_are_fresh_version_4_uuids() -> None:
    source = warcbytes.RecordIds(batch=7)  # what WarcStore draws its ids from
    ids = warcbytes.record_ids(50) + [source() for _ in range(50)]
    assert len(set(ids)) == 100
    for record_id in ids:
        assert record_id.startswith("<urn:uuid:") and record_id.endswith(">")
        parsed = uuid.UUID(record_id[10:-1])
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == record_id[10:-1]


def test_only_plain_ascii_headers_are_built_here() -> None:
    assert warcbytes.can_build("HTTP/1.1 200 OK", [("X", "plain")])
    assert not warcbytes.can_build("HTTP/1.1 200 OK", [("X", "caf\xe9")])
    assert not warcbytes.can_build("GET /\u20ac HTTP/1.1", [])
