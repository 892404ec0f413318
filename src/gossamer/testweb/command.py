"""The ``gossamer testweb`` command: serve the generated web on one port until told to stop.

Role in the data flow: none in production; it is the hand-driven counterpart of ``make demo``.
It builds the web from a :class:`~gossamer.testweb.model.WebSpec` (:func:`web_spec` checks the
one a user asked for), serves it with a :class:`~gossamer.testweb.server.TestWebServer` on one
http port, optionally writes the seed URLs to a file, and prints the audit when SIGINT or
SIGTERM arrives. A fault that stops it (a spec no web satisfies, a port taken, a seeds file
that cannot be written) leaves as a :class:`~gossamer.errors.GossamerError`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import socket
from pathlib import Path

from gossamer.errors import ConfigError, GossamerError, StoreError
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import DOMAIN, Web, WebSpec
from gossamer.testweb.server import TestWebServer

__all__ = ["MAX_HOSTS", "MAX_PAGES", "checked_web", "serve_forever", "web_spec"]

# The test web is built in memory before it is served: about 2 KB per page.
MAX_HOSTS = 10_000
MAX_PAGES = 250_000  # hosts x pages per host


def web_spec(*, hosts: int, pages: int, seed: int = 1) -> WebSpec:
    """The spec of a test web of ``hosts`` x ``pages``; a ``ConfigError`` if it cannot be."""
    if hosts > MAX_HOSTS or hosts * pages > MAX_PAGES:
        raise ConfigError(
            f"a test web of {hosts} hosts x {pages} pages is too large: at most"
            f" {MAX_HOSTS} hosts and {MAX_PAGES} pages in all"
        )
    spec = WebSpec(seed=seed, hosts=hosts, pages_per_host=pages)
    try:
        spec.validate()
    except ValueError as exc:
        raise ConfigError(f"invalid test web: {exc}") from exc
    return spec


def checked_web(spec: WebSpec) -> Web:
    """The web ``spec`` describes; a ``ConfigError`` if the generator refuses it."""
    try:
        return build_web(spec)
    except ValueError as exc:
        # The generator's own checks of the spec (say, too few hosts for the special ones).
        raise ConfigError(f"invalid test web: {exc}") from exc


def serve_forever(spec: WebSpec, *, host: str, port: int, seeds_file: Path | None) -> int:
    """Run the test web until SIGINT or SIGTERM, then print the audit; the exit status is 0."""
    site = checked_web(spec)
    try:
        return asyncio.run(_serve(site, host, port, seeds_file))
    except OSError as exc:
        if exc.filename is not None:
            raise StoreError(f"cannot write {exc.filename}: {_os_reason(exc)}") from exc
        raise GossamerError(
            f"cannot serve the test web on {host}:{port}: {_os_reason(exc)}"
        ) from exc


def _os_reason(exc: OSError) -> str:
    # asyncio's bind errors carry a long strerror; the errno says it in a few words.
    code = exc.errno
    if code is not None and code in errno.errorcode and not isinstance(exc, socket.gaierror):
        return os.strerror(code)
    return exc.strerror or str(exc)


async def _serve(site: Web, host: str, port: int, seeds_file: Path | None) -> int:
    server = TestWebServer(site, host=host, port=port)
    bound = await server.start()
    try:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        where = ""
        if seeds_file is not None:
            _write_seeds(seeds_file, site.seeds(bound))
            where = f"; seeds in {seeds_file}"
        # A wildcard listening address is reached through loopback.
        address = "127.0.0.1" if host in ("", "0.0.0.0") else host
        print(
            f"testweb: {len(site.hosts)} hosts on port {bound};"
            f" crawl with --resolve '*.{DOMAIN}:{address}'{where}",
            flush=True,
        )
        await stop.wait()
    finally:
        await server.stop()
    print(server.audit.report(site.expected(bound)).summary(), flush=True)
    return 0


def _write_seeds(path: Path, seeds: list[str]) -> None:
    # A few hundred bytes once at startup: not worth a thread hop.
    path.write_text("".join(f"{url}\n" for url in seeds), encoding="utf-8")
