"""The ``--frontier`` URL read into a client: one server or a cluster, bad URLs refused in one
line that names the accepted forms and never shows the password. No server is needed: both
clients connect at their first command."""

from __future__ import annotations

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import SSLConnection

from gossamer.distributed.connect import FORMS, connect, is_cluster, redacted
from gossamer.errors import ConfigError


def nodes(client: RedisCluster) -> list[tuple[str, int]]:
    return [(node.host, int(node.port)) for node in client.startup_nodes]


@pytest.mark.parametrize(
    "url", ["redis://127.0.0.1:6379/2", "rediss://h:6380/0", "unix:///run/redis.sock?db=1"]
)
def test_one_server_urls_give_a_plain_client(url: str) -> None:
    client = connect(url)
    assert isinstance(client, Redis)
    assert not is_cluster(client)


def test_a_cluster_url_lists_its_startup_nodes_and_credentials() -> None:
    client = connect("redis+cluster://me:pw@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002,h4")
    assert isinstance(client, RedisCluster)
    assert is_cluster(client)
    assert nodes(client) == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("::1", 7002), ("h4", 6379)]
    kwargs = client.startup_nodes[0].connection_kwargs
    assert (kwargs["username"], kwargs["password"]) == ("me", "pw")


def test_a_tls_cluster_url_keeps_its_options() -> None:
    url = "rediss+cluster://a:1,b:2/?ssl_ca_certs=/etc/ca.pem&socket_timeout=2.5"
    client = connect(url)
    assert isinstance(client, RedisCluster)
    assert client.startup_nodes[1].connection_class is SSLConnection
    kwargs = client.startup_nodes[1].connection_kwargs
    assert kwargs["ssl_ca_certs"] == "/etc/ca.pem"
    assert kwargs["socket_timeout"] == 2.5


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://me:S3cret@h:1", "not a Redis URL"),
        ("localhost:6379", "not a Redis URL"),
        ("redis+cluster://me:S3cret@", "host:port"),
        ("redis+cluster://me:S3cret@a:1,,b:2", "host:port"),
        ("redis+cluster://me:S3cret@a:port", "Port"),
        ("redis+cluster://me:S3cret@a:1/3", "database 0 only"),
        ("redis+cluster://me:S3cret@a:1/?db=2", "database 0 only"),
        ("redis+cluster://me:S3cret@a:1/?socket_timeout=soon", "socket_timeout"),
        ("redis+cluster://me:S3cret@a:1/?no_such_option=1", "no_such_option"),
        ("redis://me:S3cret@a:1,b:2/0", "Port"),
    ],
)
def test_a_bad_url_is_one_line_naming_the_forms_without_the_password(
    url: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        connect(url)
    message = str(caught.value)
    assert "\n" not in message
    assert problem in message
    assert FORMS in message
    assert "S3cret" not in message


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis+cluster://me:pw@a:1,b:2/?x=1", "redis+cluster://me:***@a:1,b:2/?x=1"),
        ("rediss://:pw@h:6380/0", "rediss://:***@h:6380/0"),
        ("redis://h:1/0?password=pw&db=1", "redis://h:1/0?password=***&db=1"),
        ("redis://me@h:1", "redis://me@h:1"),
        ("redis://h:1/0", "redis://h:1/0"),
        ("unix://:p@w@/run/r.sock", "unix://:***@/run/r.sock"),
        ("no url at all", "no url at all"),
    ],
)
def test_redacted_hides_the_password_only(url: str, shown: str) -> None:
    assert redacted(url) == shown


secret = st.text(st.characters(codec="ascii", exclude_characters="/?#@,"), min_size=1).map(
    lambda text: "Zq9" + text
)


@given(secret, st.sampled_from(["redis+cluster://u:{}@a:1,b:2/", "rediss://u:{}@h:1/0"]))
def test_no_password_survives_redaction(password: str, form: str) -> None:
    assert password not in redacted(form.format(password))
