"""Real parts for the proxy and cookie tests: Debian's tinyproxy, and a site behind a login.

``Tinyproxy`` runs the real proxy on loopback in the foreground, its log on a pipe; a test
waits for the line that says it accepts connections (no sleeping), and reads the rest of the
log once the proxy has stopped, so no line is missed. ``LoginSite`` is a small threaded HTTP
server (optionally TLS) that answers for any host name and records every request: ``/login``
sets a session cookie and redirects to ``/members/``, whose pages need that cookie (403
without it), and other pages are open. It says which requests came through the proxy by the
``Via`` header tinyproxy adds to what it forwards.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TINYPROXY = shutil.which("tinyproxy")
STDBUF = shutil.which("stdbuf")  # coreutils: tinyproxy's log, line by line on a pipe
MISSING = "tinyproxy is not installed ('make proxy' installs Debian's package as root)"
AVAILABLE = TINYPROXY is not None and STDBUF is not None
SESSION = "session=opensesame"
READY = "Accepting connections"


def free_port() -> int:
    """A loopback port nothing listens on now (tinyproxy cannot be told to pick one)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Tinyproxy:
    """tinyproxy on 127.0.0.1, started and stopped by the test; ``auth``: Basic credentials
    it asks for (407 without them)."""

    def __init__(self, folder: Path, auth: tuple[str, str] | None = None) -> None:
        assert TINYPROXY is not None, MISSING
        self.port = free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self._conf = folder / "tinyproxy.conf"
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 20",
            "LogLevel Info",  # Info: the line saying it listens
            "MaxClients 64",
            "Allow 127.0.0.1",
        ]
        if auth is not None:
            lines.append(f"BasicAuth {auth[0]} {auth[1]}")
        self._conf.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self._proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []
        self._drain: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Tinyproxy:
        assert TINYPROXY is not None
        proc = self._proc = subprocess.Popen(
            [STDBUF or "stdbuf", "-oL", "-eL", TINYPROXY, "-d", "-c", str(self._conf)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:  # the proxy's own word that it listens
            self.log.append(line)
            if READY in line:
                break
        else:
            raise RuntimeError("tinyproxy ended before listening:\n" + "".join(self.log))
        self._drain = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._drain.start()
        return self

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.log.append(line)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> list[str]:
        """Stop the proxy and return its whole log (read to its end)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
        if self._drain is not None:
            self._drain.join(timeout=10)
        return self.log

    def requests(self) -> list[str]:
        """The request lines the proxy logged: ``GET http://...`` and ``CONNECT host:port``."""
        found = []
        for line in self.stop():
            _, marker, rest = line.partition("): ")
            if marker and "Request (file descriptor" in line:
                found.append(rest.strip())
        return found


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the site answered."""

    host: str  # the Host header, port left out
    path: str
    cookie: str
    via: str


class LoginSite:
    """The site behind a login, for any host name; ``seen`` lists what was asked."""

    def __init__(self, context: ssl.SSLContext | None = None, pages: int = 3) -> None:
        self.seen: list[Seen] = []
        # (host, path) of an open page -> the URLs it links to
        self.links: dict[tuple[str, str], list[str]] = {}
        self._lock = threading.Lock()
        self._pages = pages
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.answer(self)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if context is not None:
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LoginSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def url(self, host: str, path: str = "/", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def by_host(self, host: str) -> list[Seen]:
        with self._lock:
            return [seen for seen in self.seen if seen.host == host]

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        host = (handler.headers.get("Host") or "").rsplit(":", 1)[0]
        cookie = handler.headers.get("Cookie") or ""
        with self._lock:
            self.seen.append(Seen(host, handler.path, cookie, handler.headers.get("Via") or ""))
        path = handler.path
        if path == "/robots.txt":
            self._send(handler, 404, "text/plain", b"")
        elif path == "/login":
            handler.send_response(302)
            handler.send_header("Set-Cookie", f"{SESSION}; Path=/; HttpOnly")
            handler.send_header("Location", "/members/")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        elif path.startswith("/members/"):
            if SESSION not in cookie:
                self._send(handler, 403, "text/html", b"<html><body>log in first</body></html>")
                return
            links = "".join(f'<a href="/members/{n}">page {n}</a>' for n in range(self._pages))
            body = f"<html><body><h1>members {path}</h1>{links}</body></html>"
            self._send(handler, 200, "text/html", body.encode())
        else:
            targets = self.links.get((host, path), [])
            links = "".join(f'<a href="{url}">link</a>' for url in targets)
            body = f"<html><body><h1>open {path}</h1>{links}</body></html>"
            self._send(handler, 200, "text/html", body.encode())

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


def cookie_file(path: Path, host: str, value: str = SESSION) -> Path:
    """A Netscape cookie file, as curl -c writes it, holding a session for ``host``."""
    name, _, content = value.partition("=")
    line = "\t".join((host, "FALSE", "/", "FALSE", "0", name, content))
    path.write_text(f"# Netscape HTTP Cookie File\n{line}\n", encoding="utf-8")
    return path
