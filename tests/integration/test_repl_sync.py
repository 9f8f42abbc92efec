"""Replication, the full sync's second half and the client-facing rules
around it: a replica answers -LOADING (with INFO's loading_* fields) while
it loads the primary's RDB, from disk or (repl-diskless-load on-empty-db /
swapdb) from the socket, swapdb keeping the old data when the load fails;
WAIT counting the calling client's own last write; CLIENT PAUSE holding
the primary's stream on a replica; a replica arriving during a disk save
attaching to it; and a full sync cut at random points.  Each is compared
with redis-server 7.0.15 where the two can be set up alike."""
import functools
import os
import random
import socket
import time

import pytest
import redis

from test_aof import wait_for
from test_repl import DBG, FAST, ORACLE_DBG, attach, digest, in_sync, info, link_up, same_digest

wait_for = functools.partial(wait_for, timeout=30.0)

# A load slow enough to watch: per key, in microseconds (set back to 0 to
# let it finish; Redis reads the same directive per key).
SLOW_LOAD = {"key-load-delay": "10000", "loading-process-events-interval-bytes": "1024"}


def fill(r, n, prefix="key:"):
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set("%s%d" % (prefix, i), "v%d" % i)
    pipe.execute()


def loading_error(r):
    try:
        r.ping()
    except redis.exceptions.BusyLoadingError as e:
        return str(e)
    except redis.ResponseError as e:
        return str(e)
    return None


def watch_load(s):
    """While the replica loads: the error a command gets, INFO's loading
    fields, what a loading-ok command sees; then let the load finish."""
    wait_for(lambda: loading_error(s) is not None, what="LOADING")
    err = loading_error(s)
    per = s.info("persistence")
    seen = (err, per["loading"], per.get("async_loading"),
            sorted(k for k in per if k.startswith("loading_")),
            info(s)["master_sync_in_progress"])
    s.config_set("key-load-delay", 0)
    return seen


@pytest.mark.parametrize("disk", ["disk", "diskless"])
def test_replica_answers_loading_while_it_loads(start_server, start_oracle, disk):
    out = []
    for start in (start_server, start_oracle):
        p_srv = start_server(**{"repl-diskless-sync": "no" if disk == "disk" else "yes", **FAST})
        s_srv = start(**SLOW_LOAD, **DBG)
        p = p_srv.client()
        fill(p, 2000)
        s = s_srv.client()
        s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        seen = watch_load(s)
        wait_for(lambda: link_up(s), what="link up")
        p.set("after", 1)
        wait_for(lambda: in_sync(p, s), what="sync")
        assert digest(s) == digest(p)
        assert s.info("persistence")["loading"] == 0
        assert s.info("persistence")["rdb_last_load_keys_loaded"] == 2000
        out.append(seen)
    assert out[0] == out[1]
    assert out[0][0].startswith("Redis is loading the dataset in memory")


def test_wait_counts_from_the_callers_last_command(start_server, start_oracle):
    """WAIT waits for the replication offset as of the end of the calling
    client's previous command (Redis 7.0 records it after every command,
    reads included), not the server's offset now: with the replica stopped,
    a client whose last command came before the unacknowledged write, or a
    new client's first command, gets the replica at once."""
    out = []
    for start in (start_server, start_oracle):
        p_srv = start(**FAST)
        s_srv = start(**DBG)
        a, b, fresh, first = p_srv.client(), p_srv.client(), p_srv.client(), p_srv.client()
        s = attach(s_srv, p_srv)
        res = [b.set("x", 1), b.execute_command("WAIT", 1, 0)]
        os.kill(s_srv.pid, 19)  # SIGSTOP: online, but acknowledges nothing
        try:
            a.set("y", 1)
            res += [b.execute_command("WAIT", 1, 100),      # its last command came before y
                    fresh.execute_command("WAIT", 1, 100),  # a first command: offset 0
                    fresh.execute_command("WAIT", 1, 100),  # its first WAIT ended after y
                    a.execute_command("WAIT", 1, 100),
                    b.get("x"), b.execute_command("WAIT", 1, 100),  # a read moves it too
                    first.execute_command("WAIT", 2, 100)]  # times out, counting from 0
        finally:
            os.kill(s_srv.pid, 18)  # SIGCONT
        res.append(a.execute_command("WAIT", 1, 0))
        wait_for(lambda: in_sync(p_srv.client(), s), what="sync")
        out.append(res)
    assert out[0] == out[1]
    assert out[0] == [True, 1, 1, 1, 0, 0, b"1", 0, 1, 1]


def master_flags(s):
    return [c["flags"] for c in s.client_list() if "M" in c["flags"]]


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_client_pause_holds_the_primarys_stream(start_server, start_oracle, kind):
    """CLIENT PAUSE WRITE on a replica postpones the primary's writes too
    (the link shows flags=Mb, the offset stays, reads see the old data);
    after CLIENT UNPAUSE the stream is applied in order.  Likewise ALL."""
    p_srv = start_server(**FAST)
    s_srv = (start_server if kind == "cairn" else start_oracle)(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    p.set("a", 1)
    wait_for(lambda: in_sync(p, s), what="sync")
    before = info(s)["slave_repl_offset"]
    assert s.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    p.set("a", 2)
    tx = p.pipeline(transaction=True)
    tx.incr("n")
    tx.rpush("l", "x")
    tx.execute()
    wait_for(lambda: master_flags(s) == ["Mb"], what="the primary's SET postponed")
    assert s.get("a") == b"1"
    assert info(s)["slave_repl_offset"] == before
    assert s.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: in_sync(p, s), what="stream applied")
    assert (s.get("a"), s.get("n"), s.lrange("l", 0, -1)) == (b"2", b"1", [b"x"])
    assert master_flags(s) == ["M"]
    # ALL: the replica can't be asked anything meanwhile (its INFO waits
    # for the pause's end too); the primary's write is applied after it.
    assert s.execute_command("CLIENT", "PAUSE", 1000, "ALL")
    p.set("a", 3)
    wait_for(lambda: in_sync(p, s), what="stream applied after ALL")
    assert s.get("a") == b"3"
    assert digest(s) == digest(p)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_replica_attaches_to_a_disk_save_in_progress(start_server, start_oracle, kind):
    """repl-diskless-sync no: a second replica arriving while the save for
    the first runs shares it (same +FULLRESYNC offset, one fork) instead of
    waiting for the next one.  The save child is held (SIGSTOP) until the
    second replica attached, so nothing depends on how long it takes."""
    p_srv = (start_server if kind == "cairn" else start_oracle)(
        **{"repl-diskless-sync": "no", "rdb-key-save-delay": "1000", **DBG})
    a_srv, b_srv = start_server(**DBG), start_server(**DBG)
    p = p_srv.client()
    fill(p, 2000)
    forks = p.info("stats")["total_forks"]
    a, b = a_srv.client(), b_srv.client()
    a.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    pid = p.info("server")["process_id"]
    wait_for(lambda: children(pid), what="the save child")
    child = children(pid)[0]
    os.kill(child, 19)
    try:
        p.set("during", 1)  # the stream after the fork: both must get it
        b.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        wait_for(lambda: "Waiting for end of BGSAVE for SYNC" in p_srv.log, what="attached")
        assert info(b)["master_sync_in_progress"] == 1 or link_up(b)
    finally:
        os.kill(child, 18)
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: link_up(a) and link_up(b), what="both synced")
    p.set("after", 1)
    for s in (a, b):
        wait_for(lambda: in_sync(p, s), what="in sync")
        assert digest(s) == digest(p)
    assert p.info("stats")["total_forks"] == forks + 1
    assert p.info("stats")["sync_full"] == 2
    assert "Waiting for next BGSAVE" not in p_srv.log
