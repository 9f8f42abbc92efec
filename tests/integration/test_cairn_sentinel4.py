"""Cairn's built-in Sentinel (issue 40): three Redis 7.0 behaviours, each
run against cairn-sentinel and Debian's redis-sentinel 7.0.15 in the same
scenario over redis-server 7.0.15 data nodes (the sentinel is what is
compared):

- a known replica turned primary by hand (REPLICAOF NO ONE) is made a
  replica again (+convert-to-slave), and one pointed at another server is
  moved back (+fix-slave-config), both logged at NOTICE level;
- a pub/sub link on which nothing arrives for three publish periods (the
  monitored server refuses the sentinel's PUBLISH, so its own hellos never
  come back) is closed and reconnected: a new pub/sub client shows up in
  the server's CLIENT LIST;
- "Next failover delay: I will not start a failover before <date>" is
  logged as a WARNING when a failover is needed within twice the failover
  timeout of the previous attempt (see also
  test_cairn_sentinel2.test_isolated_sentinel_does_not_fail_over)."""
import re

import pytest

from test_cairn_sentinel import CAIRN_SENTINEL, NAME, SENTINEL_BIN, sentinels, wait_for  # noqa: F401

BINARIES = [pytest.param(CAIRN_SENTINEL, id="cairn"), pytest.param(SENTINEL_BIN, id="redis")]

CFG = {"config_file": "", "repl-diskless-sync-delay": "0"}


def log_level(log, text):
    """The level mark ('.', '-', '*' NOTICE, '#' WARNING) of the first log
    line holding text, or None."""
    m = re.search(r" ([.\-*#]) %s" % re.escape(text), log)
    return m.group(1) if m else None


def replica_of(server):
    info = server.client().info("replication")
    return info.get("role"), info.get("master_port")


@pytest.mark.parametrize("binary", BINARIES)
def test_replica_config_is_fixed(binary, start_oracle, sentinels):
    """A replica made a primary by hand is converted back after four
    publish periods (+convert-to-slave); a replica pointed at another
    server is moved back to the group's primary once its reported primary
    has been stable for the failover timeout (+fix-slave-config).  Both
    events are NOTICEs."""
    p = start_oracle(**CFG)
    r = start_oracle(**CFG)
    other = start_oracle(**CFG)
    r.client().execute_command("REPLICAOF", "127.0.0.1", p.port)
    wait_for(lambda: r.client().info("replication")["master_link_status"] == "up", 30, "replica up")
    s = sentinels(binary, p.port, failover_timeout=2000)
    assert s.cmd("SENTINEL", "DEBUG", "info-period", "500", "publish-period", "500") == "OK"
    wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 30, "replica seen")
    about = "slave 127.0.0.1:%d 127.0.0.1 %d @ %s 127.0.0.1 %d" % (r.port, r.port, NAME, p.port)

    r.client().execute_command("REPLICAOF", "NO", "ONE")
    wait_for(lambda: "+convert-to-slave " + about in s.log(), 40, "+convert-to-slave")
    wait_for(lambda: replica_of(r) == ("slave", p.port), 30, "replica of the primary again")
    assert log_level(s.log(), "+convert-to-slave") == "*"

    r.client().execute_command("REPLICAOF", "127.0.0.1", other.port)
    wait_for(lambda: "+fix-slave-config " + about in s.log(), 40, "+fix-slave-config")
    wait_for(lambda: replica_of(r) == ("slave", p.port), 30, "moved back to the primary")
    log = s.log()
    assert log_level(log, "+fix-slave-config") == "*"
    # never a failover, and the primary is where it was
    assert "+sdown master" not in log and "+try-failover" not in log
    assert s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(p.port)


def pubsub_ids(server):
    """The ids of the sentinel pub/sub links (client names
    sentinel-<id>-pubsub) connected to server."""
    text = server.client().execute_command("CLIENT", "LIST")
    if isinstance(text, bytes):
        text = text.decode()
    ids = set()
    for line in text.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        if f.get("name", "").startswith("sentinel-") and f["name"].endswith("-pubsub"):
            ids.add(f["id"])
    return ids


@pytest.mark.parametrize("binary", BINARIES)
def test_silent_pubsub_link_is_reconnected(binary, start_oracle, sentinels):
    """The primary refuses PUBLISH from the sentinel's user (ACL): the
    sentinel's hellos never come back on its pub/sub link, which stays
    connected but silent.  After three publish periods (and
    min-link-reconnect-period since it connected) the sentinel closes it
    and connects a new one: a pub/sub client with a new id appears."""
    p = start_oracle(**CFG)
    s = sentinels(binary, p.port)
    assert s.cmd("SENTINEL", "DEBUG", "publish-period", "300", "min-link-reconnect-period", "500") == "OK"
    wait_for(lambda: len(pubsub_ids(p)) == 1, 30, "pub/sub link up")
    first = pubsub_ids(p)
    assert p.client().execute_command("ACL", "SETUSER", "default", "-publish") in (True, b"OK", "OK")
    wait_for(lambda: pubsub_ids(p) - first, 30, "a new pub/sub link")
    assert len(pubsub_ids(p)) <= 1  # the silent one was closed, not kept
    # the primary is still monitored normally over the command link
    flags = dict(zip(*[iter(s.cmd("SENTINEL", "MASTER", NAME))] * 2))["flags"]
    assert flags == "master"

