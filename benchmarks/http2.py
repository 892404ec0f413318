"""Pages/s and client CPU per page: the aiohttp transport against the HTTP/2 one (``--http2``).

One HTTPS server (hypercorn, in a process of its own so its CPU is not the client's) serves a
20 KB page under many paths, once offering ``h2`` and ``http/1.1`` by ALPN and once
``http/1.1`` only. Gossamer's ``Fetcher`` fetches them with ``--resolve`` and the test CA, as a
crawl would, ``--in-flight`` at a time; CPU is this process's (``time.process_time``), so it
is the transport's cost per page, the readers and guard included.

    .venv/bin/python benchmarks/http2.py [--pages 3000] [--in-flight 50] [--rounds 3]

Rows: aiohttp (HTTP/1.1 always), http2 transport over h2, http2 transport over HTTP/1.1 (the
server offering no h2): the last two against the first say which transport is faster where
HTTP/1.1 is all a server speaks, and what h2 changes.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gossamer.config import FetchConfig
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve

HOST = "bench.web.test"
PAGE = b"<html><body>" + b"<p>gossamer benchmark page</p>" * 700 + b"</body></html>"  # ~20 KB


async def _app(scope: dict[str, object], receive: object, send: object) -> None:
    if scope["type"] != "http":
        return
    headers = [(b"content-type", b"text/html"), (b"content-length", str(len(PAGE)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
    await send({"type": "http.response.body", "body": PAGE})  # type: ignore[operator]


def serve(pem: str, alpn: str, fd: int) -> None:
    """The server process: hypercorn on the listening socket ``fd``."""
    from hypercorn.asyncio import serve as hyper  # noqa: PLC0415
    from hypercorn.config import Config  # noqa: PLC0415

    config = Config()
    config.bind = [f"fd://{fd}"]
    config.certfile = config.keyfile = pem
    config.alpn_protocols = alpn.split(",")
    config.accesslog = config.errorlog = None
    config.keep_alive_max_requests = 10**9
    config.h2_max_concurrent_streams = 1000
    asyncio.run(hyper(_app, config))  # type: ignore[arg-type]


def _limits() -> FetchLimits:
    fetch = FetchConfig()
    return FetchLimits(
        fetch.connect_timeout,
        fetch.read_timeout,
        fetch.total_timeout,
        fetch.max_body,
        fetch.max_decoded,
        fetch.keep_types,
    )


async def _run(
    port: int, ca: str, http2: bool, pages: int, in_flight: int
) -> tuple[float, float, set[str]]:
    seen: set[str] = set()
    async with Fetcher(
        user_agent="gossamer-bench",
        limits=_limits(),
        resolve=(parse_resolve(f"{HOST}:127.0.0.1"),),
        allow_private=False,
        connections=in_flight,
        ca_file=ca,
        http2=http2,
    ) as fetcher:
        gate = asyncio.Semaphore(in_flight)

        async def one(n: int) -> None:
            async with gate:
                result = await fetcher.fetch(f"https://{HOST}:{port}/p/{n}")
            assert result.status == 200 and len(result.body) == len(PAGE), result.error
            seen.add(result.extra.get("protocol", "http/1.1"))

        await asyncio.gather(*(one(n) for n in range(50)))  # warm: connections, TLS
        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(n) for n in range(pages)))
        return time.perf_counter() - wall, time.process_time() - cpu, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--in-flight", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], args.serve[1], int(args.serve[2]))
        return
    import trustme  # noqa: PLC0415

    folder = Path(tempfile.mkdtemp(prefix="h2bench"))
    authority = trustme.CA()
    pem, ca = folder / "server.pem", folder / "ca.pem"
    authority.issue_cert(HOST).private_key_and_cert_chain_pem.write_to_path(str(pem))
    authority.cert_pem.write_to_path(str(ca))
    rows = [("aiohttp", "h2,http/1.1", False), ("http2 transport", "h2,http/1.1", True),
            ("http2 transport", "http/1.1", True)]  # fmt: skip
    print(f"{args.pages} pages of {len(PAGE)} bytes, {args.in_flight} in flight, best of"
          f" {args.rounds}; client CPU per page")  # fmt: skip
    for name, alpn, http2 in rows:
        listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        listener.set_inheritable(True)
        port = listener.getsockname()[1]
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(pem), alpn, str(listener.fileno())],
            pass_fds=(listener.fileno(),),
        )
        try:
            best: tuple[float, float, set[str]] | None = None
            for _ in range(args.rounds):
                run = asyncio.run(_run(port, str(ca), http2, args.pages, args.in_flight))
                best = run if best is None or run[0] < best[0] else best
            assert best is not None
            wall, cpu, seen = best
            rate, per_page = args.pages / wall, cpu / args.pages * 1e6
            print(f"{name:16} server offers {alpn:12} spoke {','.join(sorted(seen)):9}"
                  f" {rate:7.0f} pages/s  {per_page:6.0f} us CPU/page")  # fmt: skip
        finally:
            server.terminate()
            server.wait()
            listener.close()


if __name__ == "__main__":
    main()
