"""Faults of this machine are told apart from outcomes of the host.

The classifier is checked on exceptions built the way aiohttp and the resolver build them; one
test starves a real fetcher of file descriptors, in a child process, against a loopback server.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import ssl
import sys

import aiohttp
import pytest
from aiohttp import web
from aiohttp.client_reqrep import ConnectionKey

from gossamer.errors import BlockedAddressError, FetchError
from gossamer.fetch import LOCAL_FAULTS
from gossamer.fetch.faults import error_kind, is_local_fault
from gossamer.fetch.resolver import GuardedResolver

from .loopback import serve

KEY = ConnectionKey("example.org", 443, True, True, None, None, None, None)


def connector_error(cause: OSError, kind: type[aiohttp.ClientConnectorError]) -> BaseException:
    """Raise ``cause`` the way aiohttp's connector wraps it, and return what comes out."""
    try:
        try:
            raise cause
        except OSError as exc:
            raise kind(KEY, exc) from exc
    except aiohttp.ClientConnectorError as wrapped:
        return wrapped


def raised_from(outer: BaseException, cause: BaseException) -> BaseException:
    try:
        raise outer from cause
    except BaseException as exc:
        return exc


def oserror(code: int) -> OSError:
    return OSError(code, f"[Errno {code}] {errno.errorcode[code]}")


LOCAL = [
    pytest.param(oserror(errno.EMFILE), id="EMFILE"),
    pytest.param(oserror(errno.ENFILE), id="ENFILE"),
    pytest.param(oserror(errno.ENOMEM), id="ENOMEM"),
    pytest.param(oserror(errno.ENOBUFS), id="ENOBUFS"),
    pytest.param(oserror(errno.EADDRNOTAVAIL), id="EADDRNOTAVAIL"),
    pytest.param(MemoryError(), id="MemoryError"),
    pytest.param(
        connector_error(oserror(errno.EMFILE), aiohttp.ClientConnectorError), id="connect-EMFILE"
    ),
    pytest.param(
        connector_error(oserror(errno.EADDRNOTAVAIL), aiohttp.ClientConnectorError),
        id="connect-no-local-port",
    ),
    pytest.param(
        connector_error(oserror(errno.EMFILE), aiohttp.ClientConnectorDNSError),
        id="getaddrinfo-EAI_SYSTEM-EMFILE",  # CPython turns EAI_SYSTEM into errno's OSError
    ),
    pytest.param(
        connector_error(
            socket.gaierror(socket.EAI_MEMORY, "Memory allocation failure"),
            aiohttp.ClientConnectorDNSError,
        ),
        id="getaddrinfo-EAI_MEMORY",
    ),
    pytest.param(
        aiohttp.ClientOSError(errno.ENOBUFS, "Can not write request body"), id="write-ENOBUFS"
    ),
    pytest.param(
        raised_from(aiohttp.ClientPayloadError("response payload"), MemoryError()),
        id="payload-MemoryError",
    ),
]

HOST = [
    pytest.param(ConnectionResetError(errno.ECONNRESET, "reset"), "connection_reset", id="reset"),
    pytest.param(
        connector_error(oserror(errno.ECONNREFUSED), aiohttp.ClientConnectorError),
        "connection_refused",
        id="refused",
    ),
    pytest.param(
        connector_error(oserror(errno.EHOSTUNREACH), aiohttp.ClientConnectorError),
        "connect",
        id="unreachable",
    ),
    pytest.param(
        connector_error(
            socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
            aiohttp.ClientConnectorDNSError,
        ),
        "dns",
        id="nxdomain",
    ),
    pytest.param(
        connector_error(
            ssl.SSLCertVerificationError(1, "certificate verify failed"),
            aiohttp.ClientConnectorCertificateError,
        ),
        "tls",
        id="bad-certificate",
    ),
    # An SSL error carries an SSL_ERROR_* code, or a library code, where an errno would be.
    pytest.param(ssl.SSLError(errno.EMFILE, "tls alert"), "other", id="ssl-code-not-errno"),
    pytest.param(aiohttp.ConnectionTimeoutError(), "connect_timeout", id="connect-timeout"),
    pytest.param(TimeoutError(), "timeout", id="read-timeout"),
    pytest.param(aiohttp.ServerDisconnectedError(), "disconnected", id="disconnected"),
    pytest.param(BlockedAddressError("private"), "blocked_address", id="blocked"),
    pytest.param(
        raised_from(FetchError("dns", "cannot resolve"), socket.gaierror(socket.EAI_AGAIN, "")),
        "dns",
        id="resolver-EAI_AGAIN",
    ),
]


@pytest.mark.parametrize("exc", LOCAL)
def test_shortages_of_this_machine_are_local_faults(exc: BaseException) -> None:
    assert is_local_fault(exc)
    assert error_kind(exc) == "local_fault"
    assert error_kind(exc) in LOCAL_FAULTS


@pytest.mark.parametrize(("exc", "kind"), HOST)
def test_failures_of_the_host_keep_their_kinds(exc: BaseException, kind: str) -> None:
    assert not is_local_fault(exc)
    assert error_kind(exc) == kind
    assert kind not in LOCAL_FAULTS


def test_a_cause_chain_that_loops_is_not_followed_forever() -> None:
    exc = RuntimeError("loop")
    exc.__cause__ = exc
    assert not is_local_fault(exc)


class ExhaustedResolver(aiohttp.abc.AbstractResolver):
    """The system's resolver of a process without a free file descriptor."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[aiohttp.abc.ResolveResult]:
        raise oserror(errno.EMFILE)

    async def close(self) -> None:
        return None


def test_a_resolver_out_of_descriptors_is_a_local_fault_not_dns() -> None:
    async def scenario() -> BaseException:
        resolver = GuardedResolver((), allow_private=False, system=ExhaustedResolver())
        with pytest.raises(FetchError) as info:
            await resolver.resolve("example.org", 80)
        return info.value

    exc = asyncio.run(scenario())
    assert error_kind(exc) == "local_fault"


# Runs in a fresh interpreter: it lowers its own descriptor limit, takes every descriptor left,
# fetches, then gives them back and fetches again. Prints both outcomes as JSON.
CHILD = """
import asyncio, errno, json, os, resource, sys
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve

LIMITS = FetchLimits(connect_timeout=5.0, read_timeout=5.0, total_timeout=10.0,
                     max_body=10_000, max_decoded=10_000, keep_types=("text/html",))

async def main(url):
    async with Fetcher(user_agent="gossamer-test/1.0", limits=LIMITS,
                       resolve=(parse_resolve("local.test:127.0.0.1"),),
                       allow_private=False, connections=4) as fetcher:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))
        taken = []
        try:
            while True:
                taken.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                raise
        starved = await fetcher.fetch(url)
        for fd in taken:
            os.close(fd)
        healthy = await fetcher.fetch(url)
    print(json.dumps({
        "taken": len(taken),
        "starved": [starved.status, starved.error, starved.error_detail],
        "healthy": [healthy.status, healthy.error, healthy.error_detail],
    }))

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs resource.setrlimit")
def test_a_fetcher_out_of_file_descriptors_reports_a_local_fault() -> None:
    hits: list[str] = []

    async def page(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="<html></html>", content_type="text/html")

    async def main() -> tuple[dict[str, list[object]], bytes]:
        app = web.Application()
        app.router.add_get("/", page)
        async with serve(app) as port:
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                CHILD,
                f"http://local.test:{port}/",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            async with asyncio.timeout(120):  # a guard against a hung child, not a wait
                out, err = await child.communicate()
        assert child.returncode == 0, err.decode(errors="replace")
        return json.loads(out), err

    report, _ = asyncio.run(main())
    assert report["taken"] > 0
    status, kind, detail = report["starved"]
    assert (status, kind) == (0, "local_fault"), detail
    assert report["healthy"][:2] == [200, ""]  # the host was fine all along
    assert hits == ["/"]  # the starved request never left the machine
