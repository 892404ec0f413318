"""The ``gossamer testweb`` command: serve the generated web on one port until told to stop.

Role in the data flow: none in production; it is the hand-driven counterpart of ``make demo``.
It builds the web from a :class:`~gossamer.testweb.model.WebSpec`, serves it with a
:class:`~gossamer.testweb.server.TestWebServer` on one http port, optionally writes the seed URLs
to a file, and prints the audit when SIGINT or SIGTERM arrives.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from gossamer.testweb.generate import build_web
from gossamer.testweb.model import DOMAIN, Web, WebSpec
from gossamer.testweb.server import TestWebServer


def serve_forever(spec: WebSpec, *, host: str, port: int, seeds_file: Path | None) -> int:
    """Run the test web until SIGINT or SIGTERM, then print the audit; the exit status is 0."""
    return asyncio.run(_serve(build_web(spec), host, port, seeds_file))


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
