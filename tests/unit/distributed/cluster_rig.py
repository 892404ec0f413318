"""A real three-master Redis Cluster on loopback, for the tests of the frontier spread by hash tags.

Each node is a ``redis-server`` of its own (own port, own cluster bus port, own folder holding
its ``nodes-P.conf`` and AOF); ``redis-cli --cluster create`` splits the 16,384 slots between
them, no replicas. ``restart(i)`` SIGKILLs one master and starts it again on the same port with
the same files, so it rejoins holding its slots. Start and restart wait on the cluster's own
state (every node's CLUSTER INFO), polled under a deadline. Tests skip, saying why, where
Debian's ``redis-server`` or ``redis-cli`` is missing (``make redis`` installs them).

What this costs (2 shared cores, Redis 7.0.15): ``start`` about 2.0 s and ``restart`` about
2.1 s. Neither can be made much shorter: a master answers CLUSTERDOWN for its first 2 s
(Redis's fixed CLUSTER_WRITABLE_DELAY, counted from its first cluster tick), so that a
rebooted master does not take writes before the cluster has had a chance to reconfigure it.

Facts about redis-py 8.1's ``redis.asyncio.cluster.RedisCluster`` on Redis 7.0.15, measured
with this rig (``test_cluster_rig.py`` holds the cheap ones); the frontier's design rests on them:

- Scripts: ``register_script(src)`` then ``script(keys=[k], args=...)`` sends EVALSHA to the
  master of ``k``'s slot. A node without the script (never saw it, or restarted: scripts are not
  in the AOF) answers NOSCRIPT; the Script object then sends SCRIPT LOAD (to every master) and
  EVALSHA again, so the caller sees only the answer. With ``keys=[]`` the call goes to a random
  node; keys of two slots are refused by the client (``RedisClusterException``).
- A script may touch keys it did not declare when they share the slot of its declared keys
  (``gossamer:{c:3}:q:host`` under ``KEYS[1] = gossamer:{c:3}:ready``), with or without a
  ``#!lua`` shebang. A key on another node: ``ResponseError`` "Script attempted to access a non
  local key". Another slot of the same node: refused to a ``#!lua`` script ("...do not hash to
  the same slot"), let through to an old-style one by Redis 7.0, an accident of placement.
- ``pipeline(transaction=False)`` takes commands of any slots, groups them by master and sends
  each group in one write (one round trip per node, the nodes at once); answers come back in
  the order queued. In a cluster pipeline redis-py refuses ``pipe.evalsha`` and
  ``pipe.publish`` (``RedisClusterException``); ``pipe.eval`` and
  ``pipe.execute_command("EVALSHA", ...)`` pass, but nothing reloads a script on NOSCRIPT
  (``NoScriptError`` in the answers), and the first pipeline after a node's restart gets
  ``ConnectionError`` for that node's commands (no retry inside the pipeline).
- A master SIGKILLed and started again at once (``restart``): calls for its keys block about
  1.6 s (the client retries), then raise ``ConnectionError``, then ``ClusterDownError`` while it
  waits out its writable delay; about 2.1 s after the kill they succeed, on the same client.
  Down longer than the node timeout, the other masters mark it failed and refuse every key
  (CLUSTERDOWN, since ``cluster-require-full-coverage`` is yes) until twice the node timeout
  after it is back: the client retries those internally, so calls for the other masters' keys
  stall (2.2 s here) rather than fail. Meanwhile redis-py's recovery can close connections other
  tasks are using: a concurrent call may raise ``AttributeError: 'NoneType' object has no
  attribute 'writelines'``, which is not a ``RedisError`` (seen 1-3 times per outage here).
- Pub/sub: ``client.pubsub()`` is a ``ClusterPubSub`` on one node (an async context manager,
  ``subscribe`` and ``get_message(timeout=...)`` as with one server). A classic PUBLISH, from a
  client or from a script on any master, reaches subscribers on every node (the cluster bus
  carries it); its answer counts only the receiving node's subscribers. When the subscriber's
  node restarts, ``get_message`` raises ``ConnectionError``.
- Per-node figures: ``client.info("commandstats", target_nodes=RedisCluster.ALL_NODES)`` (or
  ``"cpu"``) answers a dict keyed by ``"host:port"``, one parsed INFO dict per node.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.unit.distributed.redis_rig import MISSING, SERVER, free_ports, wait_answers

CLI = shutil.which("redis-cli")
CLI_MISSING = "redis-cli is not installed (apt-get install redis-tools, or make redis)"
SLOTS = 16384
_DEADLINE = 30.0  # seconds for the cluster to say ok; it takes about 2 s
_POLL = 0.01  # seconds between looks at CLUSTER INFO, bounded by the deadline


class RedisClusterRig:
    """Three cluster-enabled ``redis-server`` masters on ``127.0.0.1``, each in ``folder/P``."""

    def __init__(self, folder: Path, nodes: int = 3) -> None:
        assert SERVER is not None, MISSING
        assert CLI is not None, CLI_MISSING
        self.folder = folder
        # All distinct, the bus ports too: two nodes given one port never both start.
        ports = free_ports(2 * nodes)
        self.ports = ports[:nodes]
        # The bus port is normally the port + 10,000, past 65,535 for a high ephemeral port:
        # each node gets a free one of its own instead (cluster-port, Redis 7.0+).
        self.bus_ports = ports[nodes:]
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * nodes

    @property
    def url(self) -> str:
        """``redis+cluster://127.0.0.1:P1,127.0.0.1:P2,...`` (``gossamer.distributed.connect``)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def start(self) -> None:
        """Start the nodes, give them the slots, and wait until every node says ok."""
        for index in range(len(self.ports)):
            self._spawn(index)
        for index in range(len(self.ports)):
            self._wait_answers(index)
        assert CLI is not None, CLI_MISSING
        addresses = [f"127.0.0.1:{port}" for port in self.ports]
        command = [CLI, "--cluster", "create", *addresses, "--cluster-replicas", "0"]
        created = subprocess.run(
            [*command, "--cluster-yes"], capture_output=True, check=False, timeout=_DEADLINE
        )
        if created.returncode != 0:
            self.stop()
            raise RuntimeError(f"redis-cli --cluster create failed:\n{created.stdout[-2000:]!r}")
        self.wait_ok()

    def stop(self) -> None:
        """SIGTERM every node (each flushes its AOF) and wait for it."""
        for index, process in enumerate(self.processes):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
                self.processes[index] = None

    def restart(self, node_index: int) -> None:
        """SIGKILL one master, start it again with its port and files, wait until all say ok."""
        process = self.processes[node_index]
        assert process is not None, f"node {node_index} is not running"
        process.kill()
        process.wait(timeout=30)
        self._spawn(node_index)
        self._wait_answers(node_index)
        self.wait_ok()

    def flush(self) -> None:
        """Every master emptied (FLUSHALL), for a test that wants a cluster of its own."""
        for port in self.ports:
            client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5.0)
            try:
                if client.info("replication").get("role") == "master":
                    client.flushall()
            finally:
                client.close()

    def kill(self, node_index: int) -> None:
        """SIGKILL one master and leave it down (``revive`` starts it again)."""
        process = self.processes[node_index]
        assert process is not None, f"node {node_index} is not running"
        process.kill()
        process.wait(timeout=30)
        self.processes[node_index] = None

    def revive(self, node_index: int) -> None:
        """Start a killed master again with its port and files; wait until all say ok."""
        self._spawn(node_index)
        self._wait_answers(node_index)
        self.wait_ok()

    def wait_ok(self) -> None:
        """Poll every node's CLUSTER INFO until all say ok, with every slot assigned and ok."""
        deadline = time.monotonic() + _DEADLINE
        for port in self.ports:
            client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1.0)
            try:
                while not _cluster_ok(client, len(self.ports)):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"cluster node {port} not ok: {self._info(client)}")
                    time.sleep(_POLL)  # a short poll of the cluster's state, under a deadline
            finally:
                client.close()

    def _spawn(self, index: int) -> None:
        assert SERVER is not None, MISSING
        port = self.ports[index]
        folder = self.folder / str(port)
        folder.mkdir(parents=True, exist_ok=True)
        command = [SERVER, "--port", str(port), "--bind", "127.0.0.1"]
        command += ["--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf"]
        command += ["--cluster-port", str(self.bus_ports[index])]
        command += ["--cluster-node-timeout", "1000", "--appendonly", "yes"]
        # Every write on disk before it is answered: a SIGKILLed node comes back with all of it.
        command += ["--appendfsync", "always", "--dir", str(folder), "--save", ""]
        command += ["--daemonize", "no", "--logfile", str(folder / "redis.log")]
        # The log file says everything; an inherited stdout would keep a reader's pipe open.
        quiet = subprocess.DEVNULL
        self.processes[index] = subprocess.Popen(command, stdin=quiet, stdout=quiet, stderr=quiet)

    def _wait_answers(self, index: int) -> None:
        """Poll PING until the node answers (its AOF loaded), with a deadline."""
        process = self.processes[index]
        assert process is not None
        port = self.ports[index]
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1.0)
        wait_answers(process, client, self.folder / str(port) / "redis.log", _DEADLINE)

    @staticmethod
    def _info(client: redis.Redis) -> str:
        try:
            return str(client.cluster("INFO"))
        except redis.RedisError as exc:
            return repr(exc)


def _cluster_ok(client: redis.Redis, nodes: int) -> bool:
    try:
        info = client.cluster("INFO")
    except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
        return False
    return (
        info.get("cluster_state") == "ok"
        and int(info.get("cluster_slots_assigned", 0)) == SLOTS
        and int(info.get("cluster_slots_ok", 0)) == SLOTS
        and int(info.get("cluster_known_nodes", 0)) == nodes
    )


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterRig]:
    """One three-master cluster per test module (about 2 s to start)."""
    if SERVER is None:
        pytest.skip(MISSING)
    if CLI is None:
        pytest.skip(CLI_MISSING)
    rig = RedisClusterRig(tmp_path_factory.mktemp("cluster"))
    rig.start()
    try:
        yield rig
    finally:
        rig.stop()
