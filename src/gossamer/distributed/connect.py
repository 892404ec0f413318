"""The Redis client of a shared crawl, from the ``--frontier`` URL: one server or a cluster.

Data flow: ``--frontier URL`` (cli) -> **connect** -> the client every step of the shared
frontier goes through (``distributed/run.py``, ``gossamer ctl``, ``serve --frontier``).

Accepted forms::

    redis://[user:password@]host:port[/db][?options]        one server
    rediss://...                                            one server over TLS
    unix://[user:password@]/path/to/socket[?db=N]           one server on a local socket
    redis+cluster://[user:password@]host:port[,host:port...][/][?options]
    rediss+cluster://...                                    a Redis Cluster (over TLS)

A cluster URL lists startup nodes: any one that answers tells the client the rest. Its options
are those of a single-server URL (``ssl_ca_certs``, ``socket_timeout``, ...) applied to every
node; a cluster has database 0 only. Both kinds of client connect lazily, at the first command.
A URL's password never appears in a message: :func:`redacted` is how a URL is shown.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.exceptions import RedisError

from gossamer.errors import ConfigError, escaped

__all__ = ["FORMS", "connect", "is_cluster", "redacted"]

FORMS = (
    "redis://[user:password@]host:port[/db], rediss:// (TLS), unix:///path/to/socket, "
    "or redis+cluster://[user:password@]host:port[,host:port...] (rediss+cluster:// for TLS)"
)
_SINGLE = ("redis", "rediss", "unix")
_CLUSTER = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
_DEFAULT_PORT = 6379
_HIDDEN = "***"


def connect(url: str) -> Redis:
    """A client for ``url`` (one of :data:`FORMS`); a bad URL is a :class:`ConfigError`.

    Typed as the one-server client: a cluster client takes the same commands, and where the
    two differ (a pipeline's script calls, a script's keys) the frontier uses the forms both
    take (``EVALSHA`` as a plain command, one declared key per script call)."""
    scheme, separator, _ = url.partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in (*_SINGLE, *_CLUSTER):
        raise _bad(url, "not a Redis URL")
    try:
        if scheme in _SINGLE:
            return Redis.from_url(url)
        return cast(Redis, _cluster(url, _CLUSTER[scheme]))
    except (ValueError, TypeError, RedisError) as exc:
        # redis-py's messages name the option or port at fault; none quotes the user part.
        said = str(exc).splitlines()[0].rstrip(".") if str(exc) else type(exc).__name__
        raise _bad(url, said) from exc


def is_cluster(client: object) -> bool:
    """Whether ``client`` spreads keys over a Redis Cluster (one slot per script call)."""
    return isinstance(client, RedisCluster)


def redacted(url: str) -> str:
    """``url`` with its password (in the user part, or a ``password=`` option) as ``***``.

    Works on any URL text, a cluster's comma list of nodes included, and on text that is no
    URL at all: it is what a message shows of what the user typed.
    """
    scheme, separator, rest = url.partition("://")
    if not separator:
        return _hide_option(url)
    end = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=-1)
    netloc, tail = (rest, "") if end < 0 else (rest[:end], rest[end:])
    userinfo, at, hosts = netloc.rpartition("@")
    if at and ":" in userinfo:
        user = userinfo.partition(":")[0]
        netloc = f"{user}:{_HIDDEN}@{hosts}"
    return f"{scheme}{separator}{netloc}{_hide_option(tail)}"


def _hide_option(text: str) -> str:
    """A ``password=`` query option's value hidden (redis-py accepts the password there too)."""
    base, mark, query = text.partition("?")
    if not mark:
        return text
    options = [
        f"{name}={_HIDDEN}" if name.lower() == "password" and value else f"{name}{equals}{value}"
        for name, equals, value in (item.partition("=") for item in query.split("&"))
    ]
    return f"{base}?{'&'.join(options)}"


def _cluster(url: str, single: str) -> RedisCluster:
    """A cluster client: each node of the comma list a startup node, the options for all."""
    rest = url.partition("://")[2]
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    if "#" in tail:
        raise ValueError("a fragment (#...) has no meaning in a Redis URL")
    path, _, query = tail.partition("?")
    if path not in ("", "/", "/0"):
        raise ValueError("a Redis Cluster has database 0 only (no /db in the URL)")
    userinfo, at, hosts = netloc.rpartition("@")
    nodes = [_node(address) for address in hosts.split(",")]
    # The options and credentials read as redis-py reads a one-server URL, then given to
    # every node: one reading of a URL's options, not a second parser of our own.
    first = f"{single}://{userinfo}{at}{nodes[0].host}:{nodes[0].port}/?{query}"
    options: dict[str, Any] = dict(parse_url(first))
    if options.pop("db", 0):  # the path gives none: "/" is no number
        raise ValueError("a Redis Cluster has database 0 only (no db= option)")
    for name in ("host", "port"):
        options.pop(name)
    if options.pop("connection_class", None) is SSLConnection:
        options["ssl"] = True
    return RedisCluster(startup_nodes=nodes, **options)


def _node(address: str) -> ClusterNode:
    """``host:port`` (``[v6]:port``; the port defaults to 6379) as a startup node."""
    if not address or "/" in address or "?" in address:
        raise ValueError("each cluster node must be host:port, separated by commas")
    parts = urlsplit(f"//{address}")
    port = parts.port  # ValueError for a port that is no number or out of range
    if not parts.hostname:
        raise ValueError(f"a cluster node without a host: {address!r}")
    return ClusterNode(parts.hostname, port or _DEFAULT_PORT)


def _bad(url: str, problem: str) -> ConfigError:
    return ConfigError(f"--frontier {escaped(redacted(url))}: {escaped(problem)}; use {FORMS}")
