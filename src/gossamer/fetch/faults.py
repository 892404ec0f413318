"""Error kinds of failed fetches: what went wrong below HTTP, named for the statistics.

A failed exchange becomes a :class:`~gossamer.fetch.result.FetchResult` whose ``error`` is one
of these kinds. Most describe the host (``dns``, ``connection_refused``, ``tls``, timeouts...);
``local_fault`` describes this machine: it ran out of file handles, memory, socket buffers or
local ports. Such a failure says nothing about the host, so the pipeline must not count it
against one (no backoff, no giving up, no falling back to another URL form): it checks
``result.error in LOCAL_FAULTS``.

``proxy_error`` is the other fault of the route rather than of the host: the proxy the request
was sent through refused the connection, could not be resolved, answered CONNECT with
anything but 200, or asked for credentials (407). It is one of ``LOCAL_FAULTS``, so it is
counted under its own name and the URL is retried as after a shortage of this machine.
"""

from __future__ import annotations

import errno
import socket
import ssl

import aiohttp

from gossamer.errors import FetchError

LOCAL_FAULT = "local_fault"
PROXY_ERROR = "proxy_error"
LOCAL_FAULTS = frozenset({LOCAL_FAULT, PROXY_ERROR})

# Errors of the local kernel when it creates, binds or writes to a socket.
LOCAL_ERRNOS = frozenset(
    {
        errno.EMFILE,  # this process is out of file descriptors
        errno.ENFILE,  # the whole system is out of file descriptors
        errno.ENOMEM,
        errno.ENOBUFS,  # no socket buffer space
        errno.EADDRNOTAVAIL,  # no free local port (or no source address for the family)
    }
)
_CAUSE_DEPTH = 8  # how far down a chain of ``raise ... from`` to look


def _is_local(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, aiohttp.ClientConnectorError):
        # Judge the wrapped error: the wrapper copies its errno, and a DNS failure copies an
        # EAI_* code, which is not an errno (on BSDs the numbers overlap).
        exc = exc.os_error
    if isinstance(exc, socket.gaierror):
        return exc.errno == socket.EAI_MEMORY  # EAI_SYSTEM arrives as a plain OSError
    if isinstance(exc, ssl.SSLError):
        return False  # its errno is an SSL_ERROR_* code
    return isinstance(exc, OSError) and exc.errno in LOCAL_ERRNOS


def is_local_fault(exc: BaseException) -> bool:
    """True when ``exc``, or an error it was raised from, is a shortage of this machine."""
    current: BaseException | None = exc
    for _ in range(_CAUSE_DEPTH):
        if current is None:
            return False
        if _is_local(current):
            return True
        current = current.__cause__
    return False


def error_kind(exc: BaseException) -> str:
    """Map an exception raised during an exchange to the error kind counted in the statistics."""
    if is_local_fault(exc):
        return LOCAL_FAULT
    if isinstance(exc, FetchError):
        return exc.kind
    if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
        return PROXY_ERROR
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "connect_timeout"
    if isinstance(exc, TimeoutError):
        return "timeout"  # no byte for read_timeout seconds
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return "tls"
    if isinstance(exc, aiohttp.ClientConnectorError):
        if exc.os_error.errno == errno.ECONNREFUSED:
            return "connection_refused"
        return "connect"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "disconnected"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "bad_body"
    if isinstance(exc, aiohttp.ClientResponseError):
        return "bad_response"
    if isinstance(exc, aiohttp.InvalidURL):
        return "bad_url"
    if isinstance(exc, ConnectionResetError | aiohttp.ClientOSError):
        return "connection_reset"
    if isinstance(exc, aiohttp.ClientError):
        return "http_error"
    return "other"
