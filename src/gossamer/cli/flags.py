"""Command line, flag values: the argparse types the subcommands share.

Data flow: argv -> **flags** -> the subcommand modules of ``cli``. Each type turns a flag's
text into a checked value or raises ``argparse.ArgumentTypeError``, which the parser turns
into one ``gossamer: error: argument --flag: ...`` line.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
from collections.abc import Callable
from pathlib import Path

from gossamer.errors import ConfigError, shortened

__all__ = [
    "address",
    "fraction",
    "hide_proxy_password",
    "int_between",
    "listen_port",
    "path",
    "positive_int",
    "seconds",
    "serve_port",
    "weight",
]

_HIGHEST_PORT = 65535


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def positive_int(text: str) -> int:
    value = _integer(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def int_between(low: int, high: int) -> Callable[[str], int]:
    """A type for integers from ``low`` to ``high``, both included."""

    def checked(text: str) -> int:
        value = _integer(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}")
        return value

    return checked


def weight(text: str) -> float:
    """A finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of at least 0: {text!r}")
    return value


def fraction(text: str) -> float:
    """A number strictly between 0 and 1."""
    value = weight(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {text!r}")
    return value


def path(text: str) -> Path:
    """A path as given on the command line; the system cannot open one holding NUL."""
    if "\x00" in text:
        raise argparse.ArgumentTypeError(
            f"not a usable path (it contains NUL): {shortened(text, 60)!r}"
        )
    return Path(text)


# The config module (its checks, the robots.txt matcher) is imported when a duration is
# parsed, not by every command that only reads numbers and folders.


def seconds(text: str) -> float:
    from gossamer.config import parse_duration  # noqa: PLC0415

    try:
        return parse_duration(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _port_number(text: str) -> int:
    return int(text) if text.isdigit() else -1


def listen_port(text: str) -> int:
    """A port to listen on; 0 asks for any free one (the command then prints which)."""
    value = _port_number(text)
    if not 0 <= value <= _HIGHEST_PORT:
        raise argparse.ArgumentTypeError(f"not a port number (0-{_HIGHEST_PORT}): {text!r}")
    return value


def serve_port(text: str) -> int:
    """A port to listen on, named in advance (1-65535: the web UI's address is printed at start)."""
    value = _port_number(text)
    if not 1 <= value <= _HIGHEST_PORT:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return value


def address(text: str) -> str:
    """A listening address: an IP address or a host name (looked up when binding)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        labels = text.removesuffix(".").split(".")
        if not text or not all(label and label.replace("-", "").isalnum() for label in labels):
            raise argparse.ArgumentTypeError(f"not an address to listen on: {text!r}") from None
    return text


def pipeline_spec(text: str) -> tuple[int, int]:
    """``buffers=K,size=N`` (either may be left out: 3 buffers of 1,000) -> (K, N)."""
    values = {"buffers": 3, "size": 1000}
    for part in filter(None, text.split(",")):
        name, sep, value = part.partition("=")
        if not sep or name.strip() not in values:
            raise argparse.ArgumentTypeError(f"expected buffers=K,size=N, got {text!r}")
        number = _integer(value.strip())
        if not 1 <= number <= 10_000:
            raise argparse.ArgumentTypeError(f"{name.strip()} must be 1 to 10000: {text!r}")
        values[name.strip()] = number
    return values["buffers"], values["size"]


def hide_proxy_password(args: argparse.Namespace) -> None:
    """A password in ``--proxy`` moves to the environment, where this crawl's processes find
    it, so the settings (stored in crawl.json and Redis) never hold it."""
    if args.proxy is None:
        return
    # Here, not at the top: the fetch package brings aiohttp, which a search never needs.
    from gossamer.fetch.proxy import PASSWORD_ENV, redacted, split_password  # noqa: PLC0415

    try:
        args.proxy, password = split_password(args.proxy)
    except ConfigError:
        args.proxy = redacted(args.proxy)  # refused when checked, without echoing a secret
        return
    if password is not None:
        os.environ[PASSWORD_ENV] = password
