"""FetchResult's header reading: URL-bearing headers decoded as browsers do."""

from __future__ import annotations

import pytest

from gossamer.fetch.result import FetchResult, url_header_text


def received(value: bytes) -> str:
    """A header value as the fetcher keeps it: one character per byte received."""
    return value.decode("latin-1")


@pytest.mark.parametrize("name", ["Location", "content-location", "LINK", "Refresh"])
def test_url_headers_in_utf8_are_read_as_utf8(name: str) -> None:
    result = FetchResult(
        url="http://a.test/",
        status=302,
        response_headers=((name, received("/caf\u00e9?q=\u65e5".encode())),),
    )
    assert result.header(name) == "/caf\u00e9?q=\u65e5"


def test_url_headers_that_are_not_utf8_are_read_as_latin1() -> None:
    value = received(b"/caf\xe9")  # Latin-1 bytes: not valid UTF-8
    result = FetchResult(url="http://a.test/", status=302, response_headers=(("Location", value),))
    assert result.header("location") == "/caf\u00e9"


def test_other_headers_keep_their_bytes() -> None:
    value = received("Bien re\u00e7u".encode())
    result = FetchResult(url="http://a.test/", status=200, response_headers=(("X-Note", value),))
    assert result.header("X-Note") == value
    assert result.response_headers == (("X-Note", value),)  # what the WARC writer reads


def test_a_value_decoded_already_is_left_alone() -> None:
    assert url_header_text("/\u65e5\u672c") == "/\u65e5\u672c"  # not one character per byte
    assert url_header_text("/caf\u00e9") == "/caf\u00e9"
    assert url_header_text("/plain") == "/plain"
