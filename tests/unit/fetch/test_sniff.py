"""Content sniffing: the WHATWG rules for a body without a usable type, and the PDF lie."""

from __future__ import annotations

import random

import pytest

from gossamer.fetch.sniff import PDF, RESOURCE_HEADER, computed_type, needs_sniffing, unknown_type
from gossamer.testweb.hostile.cases import tiny_pdf


@pytest.mark.parametrize(
    "head",
    [
        b"<!DOCTYPE html><html>",
        b"<!doctype HTML>",
        b"\r\n\t \x0c<html lang=en>",
        b"<HEAD>",
        b"<script>x()</script>",
        b"<iframe src=x>",
        b"<h1>Title</h1>",
        b"<div>",
        b"<font face=x>",
        b"<table>",
        b"<a href=x>",
        b"<style>",
        b"<title>",
        b"<b>bold</b>",
        b"<body>",
        b"<br>",
        b"<p>",
        b"<!-- a comment -->",
    ],
)
def test_markup_openings_are_html(head: bytes) -> None:
    assert unknown_type(head) == "text/html"
    assert computed_type("", head) == "text/html"


@pytest.mark.parametrize(
    "head",
    [b"<htmlx>", b"<a", b"<p\n>", b"<bold>", b"<!--x", b"text <html>", b"\x00<html>"],
)
def test_other_openings_are_not_html(head: bytes) -> None:
    # A tag name must end with a space or ">"; markup must come first, after whitespace only.
    assert unknown_type(head) != "text/html"


def test_nosniff_never_gives_html() -> None:
    assert unknown_type(b"<html>", scriptable=False) == "text/plain"
    assert computed_type("", b"<html>", no_sniff=True) == "text/plain"


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b" <?xml version='1.0'?>", "text/xml"),
        (b"%PDF-1.7\n", PDF),
        (b"%!PS-Adobe-3.0", "application/postscript"),
        (b"\xfe\xff\x00<", "text/plain"),
        (b"\xff\xfe<\x00", "text/plain"),
        (b"\xef\xbb\xbf<html>", "text/plain"),  # the byte order mark comes before the markup
        (b"GIF89a\x01\x00", "image/gif"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
        (b"\xff\xd8\xff\xe0", "image/jpeg"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", "audio/wave"),
        (b"OggS\x00\x02", "application/ogg"),
        (b"\x1f\x8b\x08\x00", "application/x-gzip"),
        (b"PK\x03\x04\x14\x00", "application/zip"),
        (b"plain words\n", "text/plain"),
        (b"", "text/plain"),
        (b"\x00\x01\x02binary", "application/octet-stream"),
    ],
)
def test_signatures_name_the_type(head: bytes, kind: str) -> None:
    assert unknown_type(head) == kind


def test_only_the_resource_header_is_read() -> None:
    late_binary = b"a" * RESOURCE_HEADER + b"\x00"
    assert unknown_type(late_binary) == "text/plain"
    assert unknown_type(random.Random(1).randbytes(4096)) == "application/octet-stream"


@pytest.mark.parametrize(
    "declared",
    ["", "  ", "garbage", "text/", "/html", "unknown/unknown", "application/unknown", "*/*"],
)
def test_missing_and_meaningless_types_are_sniffed(declared: str) -> None:
    assert needs_sniffing(declared)
    assert computed_type(declared, b"<html>") == "text/html"


@pytest.mark.parametrize(
    "declared", ["text/html", "TEXT/HTML; charset=utf-8", "application/xhtml+xml", "text/plain"]
)
def test_a_usable_type_is_kept_whatever_the_body(declared: str) -> None:
    assert not needs_sniffing(declared)
    for body in (b"\x00\x01binary", b"GIF89a", b"plain", b"<?xml ?>"):
        assert computed_type(declared, body) == declared


@pytest.mark.parametrize("declared", ["text/html; charset=utf-8", "text/plain", "", "*/*"])
def test_a_pdf_is_a_pdf_whatever_its_label(declared: str) -> None:
    body = tiny_pdf("hello")
    assert computed_type(declared, body) == PDF
    assert computed_type(declared, body, no_sniff=True) == PDF
    assert computed_type("application/pdf; x=y", body) == "application/pdf; x=y"
    assert computed_type("text/html", b" %PDF-1.4") == "text/html"  # the signature comes first
