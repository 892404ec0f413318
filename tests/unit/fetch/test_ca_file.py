"""Extra trusted certificate authorities (``ca_file``, like curl's ``--cacert``).

An https aiohttp server on 127.0.0.1 presents a certificate for ``secure.test`` issued by a
throwaway CA (trustme); a ``--resolve`` rule sends ``secure.test`` to it.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest
from aiohttp import web

from gossamer.errors import ConfigError
from gossamer.fetch.fetcher import Fetcher, FetchLimits, tls_context
from gossamer.fetch.resolver import parse_resolve
from gossamer.fetch.result import FetchResult

from .loopback import serve

trustme = pytest.importorskip("trustme")

LIMITS = FetchLimits(
    connect_timeout=5.0,
    read_timeout=5.0,
    total_timeout=10.0,
    max_body=10_000,
    max_decoded=10_000,
    keep_types=("text/html",),
)
PAGE = b"<html><p>over TLS</p></html>"


def fetcher(ca_file: str | None) -> Fetcher:
    return Fetcher(
        user_agent="gossamer-test/1.0",
        limits=LIMITS,
        resolve=(parse_resolve("secure.test:127.0.0.1"), parse_resolve("other.test:127.0.0.1")),
        allow_private=False,
        connections=4,
        ca_file=ca_file,
    )


def fetch_over_tls(cert_for: str, host: str, ca_file: str | None) -> FetchResult:
    """Serve one page with a certificate for ``cert_for`` and fetch it as ``host``."""
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(cert_for).configure_cert(server_context)
    if ca_file is not None:
        ca.cert_pem.write_to_path(ca_file)

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=PAGE, content_type="text/html")

    async def main() -> FetchResult:
        app = web.Application()
        app.router.add_get("/", page)
        async with serve(app, ssl_context=server_context) as port, fetcher(ca_file) as client:
            return await client.fetch(f"https://{host}:{port}/")

    return asyncio.run(main())


def test_a_server_signed_by_the_extra_ca_is_trusted(tmp_path: Path) -> None:
    result = fetch_over_tls("secure.test", "secure.test", str(tmp_path / "ca.pem"))
    assert (result.status, result.error, result.content) == (200, "", PAGE)


def test_without_the_extra_ca_the_server_is_not_trusted() -> None:
    result = fetch_over_tls("secure.test", "secure.test", None)
    assert (result.status, result.error) == (0, "tls"), result.error_detail


def test_the_extra_ca_does_not_switch_off_name_checks(tmp_path: Path) -> None:
    result = fetch_over_tls("secure.test", "other.test", str(tmp_path / "ca.pem"))
    assert (result.status, result.error) == (0, "tls"), result.error_detail


def test_the_context_still_verifies_and_keeps_the_system_authorities(tmp_path: Path) -> None:
    path = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    context = tls_context(str(path))
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    system = ssl.create_default_context().cert_store_stats()["x509_ca"]
    assert context.cert_store_stats()["x509_ca"] == system + 1
    assert tls_context(None) is True  # no file: aiohttp's default context


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "No such file or directory"),
        (b"", "no usable PEM certificate"),
        (b"not a certificate\n", "no usable PEM certificate"),
        (b"-----BEGIN CERTIFICATE-----\nbm90IGRlcg==\n-----END CERTIFICATE-----\n", "PEM"),
    ],
    ids=["missing", "empty", "text", "corrupt"],
)
def test_an_unusable_ca_file_stops_the_fetcher_at_start(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "ca.pem"
    if content is not None:
        path.write_bytes(content)

    async def main() -> None:
        async with fetcher(str(path)):
            pytest.fail("the fetcher started with an unusable CA file")

    with pytest.raises(ConfigError, match=message) as info:
        asyncio.run(main())
    assert str(path) in str(info.value)


def test_a_folder_is_not_a_ca_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Is a directory"):
        tls_context(str(tmp_path))
