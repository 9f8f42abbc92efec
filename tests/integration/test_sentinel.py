"""Debian's redis-sentinel managing a Cairn group: three sentinels watch a
Cairn primary with two Cairn replicas; the primary is SIGKILLed while a
redis-py Sentinel client writes; a replica is promoted, the other follows
it, every write acknowledged by WAIT 1 before the kill is on the new
primary, and the old primary comes back as a replica.  Then SENTINEL
FAILOVER (MULTI, SLAVEOF, CONFIG REWRITE, CLIENT KILL, EXEC sent to the
servers) moves the primary again."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import free_port
import waithelp

SENTINEL_BIN = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
NAME = "mymaster"


def wait_for(pred, timeout=60.0, what="condition"):
    """waithelp.wait_for; a sentinel or server that is (re)starting is not up yet."""
    return waithelp.wait_for(pred, timeout, what, step=0.05,
                             ignore=(redis.ConnectionError, redis.TimeoutError, redis.ResponseError))


# down-after-milliseconds is 3 s: with 1 s, a sentinel on a loaded CI
# machine declared a just-promoted primary down 1 s after switching to it
# (no PING reply seen in time) and failed over again, so the topology the
# test checks moved under it.
class SentinelProc:
    def __init__(self, master_port):
        self.dir = tempfile.mkdtemp(prefix="cairn-sentinel-")
        self.port = free_port()
        conf = os.path.join(self.dir, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
                    "sentinel monitor %s 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds %s 3000\n"
                    "sentinel failover-timeout %s 6000\n"
                    "sentinel parallel-syncs %s 1\n"
                    % (self.port, self.dir, self.dir, NAME, master_port, NAME, NAME, NAME))
        self.proc = subprocess.Popen([SENTINEL_BIN, conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT, cwd=self.dir)
        self.client = redis.Redis(port=self.port, socket_timeout=5, decode_responses=True)
        wait_for(lambda: self.client.ping(), 20, "sentinel up")
        # A replica's INFO every second instead of every 10, hellos every
        # second instead of every 2: the old primary, back as a primary, is
        # converted after 4 publish periods and its next INFO (about 5 s,
        # not 20); what is tested is the same.
        assert self.client.execute_command("SENTINEL", "DEBUG", "info-period", "1000",
                                           "publish-period", "1000") == "OK"

    def log_tail(self, n=3000):
        try:
            with open(os.path.join(self.dir, "sentinel.log")) as f:
                return f.read()[-n:]
        except OSError as e:
            return str(e)

    def master_addr(self):
        return tuple(self.client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME))

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def sentinels():
    if not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    started = []

    def start(master_port):
        s = SentinelProc(master_port)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def with_logs(e, servers, sents):
    """The assertion e with the servers' and the sentinels' log tails."""
    return AssertionError("%s\n%s\n%s" % (
        e, "\n".join("--- %s %d's log:\n%s" % (what, srv.port, srv.log[-3000:]) for what, srv in servers),
        "\n".join("--- sentinel %d:\n%s" % (s.port, s.log_tail()) for s in sents)))


def role(srv):
    return srv.client().execute_command("ROLE")[0]


def test_sentinel_fails_over_a_cairn_group(start_server, sentinels):
    cfg = {"config_file": "", "repl-diskless-sync-delay": "0"}
    p_srv = start_server(**cfg)
    replicas = [start_server(**cfg), start_server(**cfg)]
    for r in replicas:
        r.client().execute_command("REPLICAOF", "127.0.0.1", p_srv.port)
    for r in replicas:
        wait_for(lambda: r.client().info("replication")["master_link_status"] == "up", 30, "replica up")
    sents = [sentinels(p_srv.port) for _ in range(3)]
    for s in sents:
        wait_for(lambda: len(s.client.execute_command("SENTINEL", "REPLICAS", NAME)) == 2 and
                 len(s.client.execute_command("SENTINEL", "SENTINELS", NAME)) == 2, 40, "discovery")

    sentinel = Sentinel([("127.0.0.1", s.port) for s in sents], socket_timeout=2)
    master = sentinel.master_for(NAME, socket_timeout=2)
    acked = []
    for i in range(200):
        master.set("k%d" % i, i)
        if master.execute_command("WAIT", 1, 2000) >= 1:
            acked.append(i)
    assert acked, "no write acknowledged by a replica"

    os.kill(p_srv.pid, signal.SIGKILL)
    p_srv.proc.wait()
    old = ("127.0.0.1", p_srv.port)
    # The client keeps writing; it reaches the new primary after the failover.
    wait_for(lambda: sents[0].master_addr() != ("127.0.0.1", str(p_srv.port)), 60, "failover")
    written = 0
    deadline = time.monotonic() + 30
    while written < 20 and time.monotonic() < deadline:
        try:
            master.set("after%d" % written, written)
            written += 1
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            time.sleep(0.1)
    assert written == 20
    host, port = sents[0].master_addr()
    new = next(r for r in replicas if r.port == int(port))
    other = next(r for r in replicas if r is not new)
    nc = new.client()
    assert role(new) == b"master"
    for i in acked:
        assert nc.get("k%d" % i) == str(i).encode()
    wait_for(lambda: other.client().info("replication").get("master_port") == new.port and
             other.client().info("replication")["master_link_status"] == "up", 40, "sibling follows")
    # The new primary's config file says it is a primary now (CONFIG REWRITE).
    with open(os.path.join(other.tmp, "server.conf")) as f:
        assert "replicaof 127.0.0.1 %d" % new.port in f.read()

    # The old primary comes back and is turned into a replica.
    back = start_server(port=old[1], **cfg)
    # Sentinel converts it only after INFO shows it a primary for 4
    # publish periods and its next INFO arrives (SentinelProc: both 1 s).
    try:
        wait_for(lambda: back.client().info("replication").get("master_port") == new.port and
                 back.client().info("replication")["master_link_status"] == "up", 120, "old primary rejoins")
    except AssertionError as e:
        raise with_logs(e, [("old primary", back), ("new primary", new)], sents)

    # A manual failover.  Only once every sentinel has seen the old primary
    # report itself a replica: a sentinel that still holds it as a primary
    # converts it back the moment the failover promotes it, and the failover
    # then aborts (seen on a loaded machine).
    def settled(s):
        reps = {int(r["port"]): r for r in (dict(zip(x[::2], x[1::2])) for x in
                s.client.execute_command("SENTINEL", "REPLICAS", NAME))}
        return all(p in reps and reps[p]["role-reported"] == "slave" and
                   reps[p]["master-port"] == str(new.port) and reps[p]["master-link-status"] == "ok"
                   for p in (back.port, other.port))
    try:
        for s in sents:
            wait_for(lambda: settled(s), 60, "sentinel %d sees both replicas" % s.port)
        sents[0].client.execute_command("SENTINEL", "FAILOVER", NAME)
        wait_for(lambda: sents[0].master_addr() != ("127.0.0.1", str(new.port)), 60, "manual failover")
    except AssertionError as e:
        raise with_logs(e, [("primary", new), ("replica", other), ("replica", back)], sents)
    _, port2 = sents[0].master_addr()
    promoted = next(s for s in (other, back) if s.port == int(port2))
    wait_for(lambda: role(promoted) == b"master", 30, "promoted")
    wait_for(lambda: new.client().info("replication").get("master_port") == promoted.port, 60,
             "old primary follows")
    master.set("final", 1)
    assert promoted.client().get("final") == b"1"
