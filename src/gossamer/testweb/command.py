"""The ``gossamer testweb`` command: serve the generated web on one port until told to stop.

Role in the data flow: none in production; it is the hand-driven counterpart of ``make demo``. It
builds the web from a :class:`~gossamer.testweb.model.WebSpec` (:func:`web_spec` checks the one a
user asked for), serves it with a :class:`~gossamer.testweb.server.TestWebServer` on one http port,
optionally writes the seed URLs to a file, and prints the audit when SIGINT or SIGTERM arrives. A
generation above 0 serves the web as it has changed by then (:mod:`gossamer.testweb.changes`), so a
recrawl can be tried by hand: serve generation 0 of a web with validators, crawl, restart at
generation 1, recrawl. A fault that stops it (a spec no web satisfies, a port taken, a seeds file
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


def web_spec(*, hosts: int, pages: int, seed: int = 1, validators: bool = False) -> WebSpec:
    """The spec of a test web of ``hosts`` x ``pages``; a ``ConfigError`` if it cannot be.
    ``validators``: pages carry ETag and Last-Modified and conditional requests get 304."""
    if hosts > MAX_HOSTS or hosts * pages > MAX_PAGES:
        raise ConfigError(
            f"a test web of {hosts} hosts x {pages} pages is too large: at most"
            f" {MAX_HOSTS} hosts and {MAX_PAGES} pages in all"
        )
    spec = WebSpec(seed=seed, hosts=hosts, pages_per_host=pages, validators=validators)
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


def serve_forever(
    spec: WebSpec, *, host: str, port: int, seeds_file: Path | None, generation: int = 0
) -> int:
    """Run generation ``generation`` of the test web until SIGINT or SIGTERM, then print the
    audit; the exit status is 0."""
    if generation < 0:
        raise ConfigError(f"invalid test web: generation {generation} is negative")
    site = checked_web(spec)
    try:
        return asyncio.run(_serve(site, host, port, seeds_file, generation))
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


async def _serve(site: Web, host: str, port: int, seeds_file: Path | None, generation: int) -> int:
    server = TestWebServer(site, host=host, port=port, generation=generation)
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
            f" crawl with --resolve '*.{DOMAIN}:{address}'{where}{_changes(site, generation)}",
            flush=True,
        )
        await stop.wait()
    finally:
        await server.stop()
    print(server.audit.report(server.expected()).summary(), flush=True)
    return 0


def _changes(site: Web, generation: int) -> str:
    """What the banner says about the generation served: nothing for a plain web."""
    validators = "ETag and Last-Modified" if site.spec.validators else "no validators"
    if generation == 0:
        return f"; generation 0, {validators}" if site.spec.validators else ""
    now = site.at(generation)
    return (
        f"; generation {generation}, {validators}: since generation 0,"
        f" {len(now.changed_pages(0))} pages changed, {len(now.vanished_pages(0))} vanished,"
        f" {len(now.appeared_pages(0))} appeared (words of this generation: {now.marker},"
        f" {now.appeared_marker})"
    )


def _write_seeds(path: Path, seeds: list[str]) -> None:
    # A few hundred bytes once at startup: not worth a thread hop.
    path.write_text("".join(f"{url}\n" for url in seeds), encoding="utf-8")
