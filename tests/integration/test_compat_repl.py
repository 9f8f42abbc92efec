"""Replication compatibility, round 2 (issue 33, items 9-15): Cairn and
redis-server 7.0.15 given the same commands, replies compared.

- CONFIG SET min-replicas-* counts the good replicas at once (writes
  refused or accepted by the very next command), INFO's
  min_slaves_good_slaves;
- CONFIG SET repl-backlog-size resizes the backlog at once, keeping its
  history, with Redis's 16 KB floor.

Every wait polls with a deadline; nothing asserts on timing."""
import os
import signal
import time

import pytest
import redis

# The replication helpers are test_repl's (its wait_for waits up to 30 s).
from test_repl import attach, in_sync, info, link_up, wait_for

DBG = {"enable-debug-command": "yes", "repl-diskless-sync-delay": "0"}


def keyspace_sizes(r):
    """{db: keys} from INFO keyspace (expired keys not yet deleted count)."""
    return {int(k[2:]): v["keys"] for k, v in r.info("keyspace").items()}


def err(fn, *a, **kw):
    """The reply of fn, or the text of its error reply."""
    try:
        return fn(*a, **kw)
    except redis.ResponseError as e:
        return "ERR:" + str(e)


def pairs(start_server, start_oracle):
    """(start, label) for a Cairn pair and a redis-server pair."""
    return ((start_server, "cairn"), (start_oracle, "redis"))


# --- item 13: min-replicas-* -------------------------------------------------

def _min_replicas_run(start):
    p_srv = start(**DBG)
    s_srv = start(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    out = []
    p.config_set("min-replicas-to-write", 1)
    wait_for(lambda: info(p).get("min_slaves_good_slaves") == 1, what="good replica counted")
    out.append(err(p.set, "a", 1))
    out.append(sorted(k for k in info(p) if k.startswith("min_")))
    # The replica stops acknowledging: its lag grows past 2 seconds.
    os.kill(s_srv.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: info(p)["slave0"]["lag"] >= 3, what="lag")
        # Counted at once: the next write is refused, then accepted again.
        p.config_set("min-replicas-max-lag", 1)
        out.append(info(p)["min_slaves_good_slaves"])
        out.append(err(p.set, "b", 1))
        p.config_set("min-replicas-max-lag", 1000)
        out.append(info(p)["min_slaves_good_slaves"])
        out.append(err(p.set, "c", 1))
        p.config_set("min-replicas-max-lag", 1)
        out.append(err(p.set, "d", 1))
        p.config_set("min-replicas-to-write", 0)
        out.append(err(p.set, "e", 1))
        out.append("min_slaves_good_slaves" in info(p))
        p.config_set("min-replicas-to-write", 1)
        out.append(err(p.set, "f", 1))
        p.config_set("min-replicas-max-lag", 0)   # 0 turns the check off
        out.append(err(p.set, "g", 1))
        out.append("min_slaves_good_slaves" in info(p))
    finally:
        os.kill(s_srv.pid, signal.SIGCONT)
    return out


def test_min_replicas_config_set_counts_at_once(start_server, start_oracle):
    got = [_min_replicas_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][3] == "ERR:NOREPLICAS Not enough good replicas to write."


def test_min_replicas_info_without_replicas(start_server, start_oracle):
    got = []
    for start, _ in pairs(start_server, start_oracle):
        r = start().client()
        res = [sorted(info(r))]
        r.config_set("min-replicas-to-write", 2)
        res.append(sorted(info(r)))
        res.append(info(r)["min_slaves_good_slaves"])
        res.append(err(r.set, "a", 1))
        res.append(err(r.get, "a"))
        got.append(res)
    assert got[0] == got[1]


# --- item 9: repl-backlog-size ---------------------------------------------

def test_backlog_size_floor_matches_redis(start_server, start_oracle):
    got = []
    for start, _ in pairs(start_server, start_oracle):
        r = start().client()
        res = []
        for v in ("1", "16383", "16384", "100000", "1mb"):
            r.config_set("repl-backlog-size", v)
            res.append((r.config_get("repl-backlog-size"), info(r)["repl_backlog_size"]))
        got.append(res)
    assert got[0] == got[1]


# --- item 14: a writable replica expires its own keys -------------------------

def _writable_replica_run(start):
    p_srv = start(**DBG)
    s_srv = start(**{"replica-read-only": "no", **DBG})
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p.set("from-primary", "v", px=100)          # the primary's: only its DEL removes it
    p.set("plain", "v")
    wait_for(lambda: in_sync(p, s), what="sync")
    s.set("own-set", "v", px=100)
    s.set("own-exp", "v")
    s.pexpire("own-exp", 100)
    s.set("own-getex", "v")
    s.getex("own-getex", px=100)
    s.set("own-ren-src", "v", px=100)
    s.rename("own-ren-src", "own-ren")
    s.set("own-move", "v", px=100)
    s.move("own-move", 3)
    s.eval("redis.call('set', KEYS[1], 'v', 'px', 100)", 1, "own-lua")
    s.set("own-keep", "v", ex=1000)              # not due yet
    s.set("own-persist", "v", px=100)
    s.persist("own-persist")                     # no expire any more
    s.pexpire("plain", 100)                      # a primary's key, TTL set here
    wait_for(lambda: keyspace_sizes(s) == {0: 3}, what="own keys expired")
    time.sleep(0.3)                               # a few more replica cron ticks
    res = [sorted(s.keys("*")), s.dbsize(), s.info("stats")["expired_keys"],
           s.exists("from-primary"), s.get("from-primary")]
    s.execute_command("SELECT", 3)
    res.append(s.dbsize())
    res.append(keyspace_sizes(s))
    return res


def test_writable_replica_expires_its_own_keys(start_server, start_oracle):
    got = [_writable_replica_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][1] == 3


def _writable_unlinked_run(start):
    """A replica whose primary never answered: its own keys expire too."""
    srv = start(**{"replica-read-only": "no"})
    r = srv.client()
    r.execute_command("REPLICAOF", "127.0.0.1", "1")
    r.set("k", "v", px=100)
    r.set("j", "v")
    wait_for(lambda: r.dbsize() == 1, what="own key expired")
    return [r.keys("*"), r.info("stats")["expired_keys"]]


def test_writable_replica_without_link_expires_its_own_keys(start_server, start_oracle):
    got = [_writable_unlinked_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [[b"j"], 1]


def _writable_write_over_expired_run(start):
    """A local write on a writable replica over a key the primary gave a
    TTL that passed deletes it first (Redis 7.0 forces the deletion), so the
    write sees no key and the table holds it once."""
    p_srv = start(**DBG)
    s_srv = start(**{"replica-read-only": "no", **DBG})
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p.set("pk", "v", px=50)
    p.rpush("pl", "a", "b")
    p.pexpire("pl", 50)
    p.set("ps", "x", px=50)
    p.set("pr", "x", px=50)
    wait_for(lambda: in_sync(p, s), what="sync")
    time.sleep(0.2)
    out = [err(s.get, "pr"), err(s.incr, "pk"), err(s.rpush, "pl", "c"), err(s.lrange, "pl", 0, -1),
           err(s.set, "ps", "y", nx=True), err(s.get, "ps"), s.dbsize(), s.info("stats")["expired_keys"],
           s.pttl("pk"), sorted(s.keys("*"))]
    return out


def test_writable_replica_write_over_expired_key(start_server, start_oracle):
    got = [_writable_write_over_expired_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][6] == 4   # pr still there (a read does not delete it), once each


# --- item 10: a primary restarted from its RDB continues its replicas -------

def _primary_restart_run(start_primary, start_replica):
    p_srv = start_primary(**DBG)
    s_srv = start_replica(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    for i in range(50):
        p.set("k%d" % i, i)
        p.rpush("l", i)
    p.execute_command("SELECT", 2)
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")   # saved, then found expired by the load
    p.set("short", "v", px=300)        # expired by the restart: its DEL follows
    p.set("long", "v", ex=1000)
    wait_for(lambda: in_sync(p, s), what="sync")
    before = info(p)
    try:
        p.execute_command("SHUTDOWN", "SAVE")
    except redis.ConnectionError:
        pass
    p_srv.proc.wait(timeout=30)
    wait_for(lambda: not link_up(s), what="link down")
    # Where the replica stopped: the saved position (redis-server may add
    # a REPLCONF GETACK while SHUTDOWN waits for its replicas).
    base = info(s)["slave_repl_offset"]
    time.sleep(0.4)
    p2_srv = start_primary(port=p_srv.port, dir=p_srv.tmp, **DBG)
    p2 = p2_srv.client()
    after = info(p2)
    wait_for(lambda: in_sync(p2, s), what="replica continued")
    st = p2.info("stats")
    res = [after["master_replid2"] == before["master_replid"],
           after["second_repl_offset"] - base,
           after["master_repl_offset"] - base,
           after["repl_backlog_active"], after["repl_backlog_first_byte_offset"] - base,
           after["repl_backlog_histlen"],
           st["sync_full"], st["sync_partial_ok"]]
    s.execute_command("SELECT", 2)
    res.append(sorted(s.keys("*")))
    res.append(s.execute_command("DEBUG", "DIGEST") == p2.execute_command("DEBUG", "DIGEST"))
    res.append("Successful partial resynchronization with master" in s_srv.log
               or "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization" in s_srv.log)
    return res


def test_primary_restarted_from_rdb_continues_partially(start_server, start_oracle):
    got = [_primary_restart_run(start_oracle, start_oracle),
           _primary_restart_run(start_server, start_server),
           _primary_restart_run(start_server, start_oracle)]
    assert got[0] == got[1] == got[2]
    assert got[0][:2] == [True, 1] and got[0][6:8] == [0, 1]


def test_primary_restart_offsets_match_redis(start_server, start_oracle):
    """Without replicas (no backlog when saved) the expired keys' DELs
    still count in the offset; with no RDB position, no backlog."""
    got = []
    for start in (start_server, start_oracle):
        srv = start(**DBG)
        r = srv.client()
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")   # saved, then found expired by the load
        r.set("a", 1)
        r.set("b", 2, px=200)
        r.execute_command("SELECT", 12)
        r.set("c", 2, px=200)
        try:
            r.execute_command("SHUTDOWN", "SAVE")
        except redis.ConnectionError:
            pass
        srv.proc.wait(timeout=30)
        time.sleep(0.3)
        r2 = start(port=srv.port, dir=srv.tmp, **DBG).client()
        i = info(r2)
        got.append([i["master_repl_offset"], i["second_repl_offset"], i["repl_backlog_active"],
                    i["master_replid2"], r2.dbsize()])
    assert got[0] == got[1]


# --- item 9: the backlog and the shared replication buffer ------------------

def _resize_keeps_history_run(start):
    p_srv = start(**DBG)
    s_srv = start(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    for i in range(200):
        p.set("k%d" % i, "x" * 100)
    wait_for(lambda: in_sync(p, s), what="sync")
    before = info(p)
    p.config_set("repl-backlog-size", "2mb")
    after = info(p)
    res = [after["repl_backlog_histlen"] == before["repl_backlog_histlen"],
           after["repl_backlog_first_byte_offset"] == before["repl_backlog_first_byte_offset"],
           after["repl_backlog_size"]]
    # The link drops: the history is still there for a partial resync.
    p.execute_command("CLIENT", "KILL", "TYPE", "replica")
    for i in range(20):
        p.set("after%d" % i, i)
    wait_for(lambda: p.info("stats")["sync_partial_ok"] == 1, what="partial resync")
    wait_for(lambda: in_sync(p, s), what="sync again")
    res.append(p.info("stats")["sync_full"])
    res.append(s.get("after19"))
    return res


def test_backlog_resize_keeps_history(start_server, start_oracle):
    got = [_resize_keeps_history_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [True, True, 2097152, 1, b"19"]


MB = 1024 * 1024


def _shared_buffer_run(start):
    """Two stopped replicas: the stream they have not taken is held once."""
    p_srv = start(**{"repl-backlog-size": "16kb", **DBG})
    s1_srv = start(**DBG)
    s2_srv = start(**DBG)
    p = p_srv.client()
    s1 = attach(s1_srv, p_srv)
    s2 = attach(s2_srv, p_srv)
    wait_for(lambda: in_sync(p, s1) and in_sync(p, s2), what="sync")
    os.kill(s1_srv.pid, signal.SIGSTOP)
    os.kill(s2_srv.pid, signal.SIGSTOP)
    try:
        val = "v" * (200 * 1024)
        for i in range(200):                 # 40 MB of stream
            p.set("big%d" % (i % 10), val)
        m = p.info("memory")
        held = m["mem_total_replication_buffers"]
        res = [info(p)["connected_slaves"], 10 * MB < held < 52 * MB,
               m["mem_replication_backlog"] <= 17 * 1024 + 4096,
               # counted once for both replicas, not twice
               held // 2 < m["mem_clients_slaves"] < held * 13 // 10]
        omem = [int(l.split(" omem=")[1].split()[0])
                for l in p.execute_command("CLIENT", "LIST", "TYPE", "replica").decode().splitlines()]
        res.append([o > 5 * MB for o in omem])
    finally:
        os.kill(s1_srv.pid, signal.SIGCONT)
        os.kill(s2_srv.pid, signal.SIGCONT)
    wait_for(lambda: in_sync(p, s1) and in_sync(p, s2), what="caught up")
    # Taken by both: the buffer is back to about the backlog.
    wait_for(lambda: p.info("memory")["mem_total_replication_buffers"] < MB, what="buffer trimmed")
    res.append(s1.get("big9") == val.encode() and s2.get("big9") == val.encode())
    return res


def test_replicas_share_one_buffer(start_server, start_oracle):
    got = [_shared_buffer_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [2, True, True, True, [True, True], True]


def _replica_limit_run(start):
    """A replica's hard output limit is at least repl-backlog-size."""
    p_srv = start(**{"repl-backlog-size": "30mb", "client-output-buffer-limit": "replica 1mb 0 0", **DBG})
    s_srv = start(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    wait_for(lambda: in_sync(p, s), what="sync")
    os.kill(s_srv.pid, signal.SIGSTOP)
    try:
        val = "v" * (100 * 1024)
        for i in range(150):                 # 15 MB: under the backlog size
            p.set("k%d" % (i % 10), val)
        res = [info(p)["connected_slaves"], "for overcoming of output buffer limits" in p_srv.log]
        for i in range(400):                 # 40 MB more: over it
            p.set("k%d" % (i % 10), val)
        wait_for(lambda: info(p)["connected_slaves"] == 0, what="replica dropped")
        res.append("for overcoming of output buffer limits" in p_srv.log)
    finally:
        os.kill(s_srv.pid, signal.SIGCONT)
    return res


def test_replica_output_limit_at_least_backlog(start_server, start_oracle):
    got = [_replica_limit_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [1, False, True]


# --- item 11: REPLICAOF keeps sub-replicas while the history goes on --------

def _switch_primary_run(start):
    a_srv = start(**DBG)
    b_srv = start(**DBG)
    c_srv = start(**DBG)
    d_srv = start(**DBG)
    e_srv = start(**DBG)
    a = a_srv.client()
    for i in range(20):
        a.set("a%d" % i, i)
    b = attach(b_srv, a_srv)
    d = attach(d_srv, a_srv)
    c = attach(c_srv, b_srv)
    a.set("more", 1)
    wait_for(lambda: in_sync(a, b) and in_sync(a, d) and in_sync(b, c), what="chain in sync")
    st = lambda: (b.info("stats")["sync_full"], b.info("stats")["sync_partial_ok"])
    res = [st()]
    # D continues the same history (a sibling): B continues, C stays.
    b.execute_command("REPLICAOF", d_srv.host, d_srv.port)
    wait_for(lambda: in_sync(d, b), what="B follows D")
    a.set("after-switch", 1)
    wait_for(lambda: in_sync(a, d) and in_sync(d, b) and in_sync(b, c), what="chain in sync again")
    res.append(st())
    res.append(c.get("after-switch"))
    res.append("Connection with replica" in b_srv.log)
    # E is another history: B's full sync drops C, which syncs again.
    e = e_srv.client()
    e.set("e-only", 1)
    b.execute_command("REPLICAOF", e_srv.host, e_srv.port)
    wait_for(lambda: in_sync(e, b), what="B follows E")
    wait_for(lambda: in_sync(b, c) and c.get("e-only") == b"1", what="C resynced")
    res.append(st())
    res.append(c.dbsize())
    return res


def test_replicaof_keeps_subreplicas_until_history_changes(start_server, start_oracle):
    got = [_switch_primary_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][1] == (1, 0)


# --- item 12: the sync child --------------------------------------------------

def log_has(srv, text, timeout=30.0):
    wait_for(lambda: text in srv.log, timeout=timeout, what="log line %r" % text)
    return True


def fake_replica(srv, port=None):
    """A replica that asks for a full sync and then reads nothing."""
    c = srv.connect()
    if port:
        c.send(b"REPLCONF listening-port %d\r\n" % port)
        c.expect(b"+OK\r\n")
    c.send(b"REPLCONF capa eof capa psync2\r\n")
    c.expect(b"+OK\r\n")
    c.send(b"PSYNC ? -1\r\n")
    line = c.recv_until(b"\r\n")
    assert line.startswith(b"+FULLRESYNC"), line
    return c


def _diskless_dropped_run(start):
    srv = start(**{"rdb-key-save-delay": "20000", **DBG})
    r = srv.client()
    r.execute_command("DEBUG", "POPULATE", 100)
    c = fake_replica(srv)
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, what="sync child")
    time.sleep(0.5)   # let the child install its handler (redis-server's races the fork too)
    c.close()
    lines = ["# Connection with replica 127.0.0.1:<unknown-replica-port> lost.",
             "# Diskless rdb transfer, last replica dropped, killing fork child.",
             ":signal-handler (", ") Received SIGUSR1 in child, exiting now.",
             "# Background transfer terminated by signal 10"]
    res = [log_has(srv, t) for t in lines]
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, what="child reaped")
    res.append(r.info("persistence")["rdb_last_bgsave_status"])
    res.append(info(r)["connected_slaves"])
    return res


def test_diskless_child_killed_when_last_replica_drops(start_server, start_oracle):
    got = [_diskless_dropped_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [True] * 5 + ["ok", 0]


def _disk_unneeded_run(start):
    srv = start(**{"repl-diskless-sync": "no", "rdb-key-save-delay": "100000", **DBG})
    r = srv.client()
    r.execute_command("DEBUG", "POPULATE", 300)      # 30 s if it ran to the end
    c = fake_replica(srv)
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, what="sync child")
    time.sleep(0.5)   # let the child install its handler (redis-server's races the fork too)
    c.close()
    res = [log_has(srv, "# Background saving terminated by signal 10"),
           log_has(srv, "Received SIGUSR1 in child, exiting now.")]
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, what="child reaped")
    res.append("Background saving terminated with success" in srv.log)
    res.append(r.info("persistence")["rdb_last_bgsave_status"])
    res.append([f for f in os.listdir(srv.tmp) if f.startswith("temp-")])
    return res


def test_disk_sync_child_killed_when_no_one_needs_it(start_server, start_oracle):
    got = [_disk_unneeded_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [True, True, False, "ok", []]


def _stalled_run(start):
    srv = start(**{"repl-timeout": "2", **DBG})
    r = srv.client()
    blob = os.urandom(1024 * 1024)                              # incompressible
    for i in range(40):                                         # 40 MB of RDB
        r.set("big%d" % i, blob[i:] + blob[:i])
    c = fake_replica(srv, port=5555)
    try:
        res = [log_has(srv, "# Disconnecting timedout replica (full sync): 127.0.0.1:5555"),
               log_has(srv, "# Diskless rdb transfer, last replica dropped, killing fork child."),
               log_has(srv, "# Background transfer terminated by signal 10")]
        wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, what="child reaped")
        res.append(info(r)["connected_slaves"])
    finally:
        c.close()
    return res


def test_full_sync_timeout_drops_stalled_replica(start_server, start_oracle):
    got = [_stalled_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [True, True, True, 0]


def _children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("diskless", ["no", "yes"])
def test_sync_child_dies_with_its_parent(start_server, diskless):
    srv = start_server(**{"repl-diskless-sync": diskless, "rdb-key-save-delay": "100000", **DBG})
    r = srv.client()
    r.execute_command("DEBUG", "POPULATE", 1000)      # 100 s if it ran to the end
    c = fake_replica(srv)
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, what="sync child")
    kids = wait_for(lambda: _children(srv.pid), what="child pid")
    os.kill(srv.pid, signal.SIGKILL)
    srv.proc.wait(timeout=30)
    c.close()
    wait_for(lambda: all(_gone(k) for k in kids), timeout=20, what="child gone with its parent")


# --- item 15: the smaller ones -----------------------------------------------

import shutil
import subprocess

FN_LIB = "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)"


def _cli_rdb(srv, path, functions):
    cli = shutil.which("redis-cli")
    args = [cli, "-h", srv.host, "-p", str(srv.port), "--functions-rdb" if functions else "--rdb", path]
    out = subprocess.run(args, capture_output=True, timeout=60)
    return out.returncode, out.stdout + out.stderr


def _load_into_oracle(start_oracle, path):
    """What a redis-server started from the file holds."""
    d = os.path.dirname(path)
    srv = start_oracle(dir=d, dbfilename=os.path.basename(path))
    r = srv.client()
    return [r.dbsize(), r.execute_command("FUNCTION", "LIST")]


@pytest.mark.skipif(not shutil.which("redis-cli"), reason="no redis-cli")
def test_redis_cli_functions_rdb(start_server, start_oracle, tmp_path):
    got = []
    for start, label in pairs(start_server, start_oracle):
        srv = start(**DBG)
        r = srv.client()
        r.execute_command("FUNCTION", "LOAD", FN_LIB)
        r.set("a", "b")
        r.execute_command("SELECT", 3)
        r.set("c", "d")
        res = []
        for functions in (True, False):
            path = str(tmp_path / ("%s-%d" % (label, functions)) / "out.rdb")
            os.makedirs(os.path.dirname(path))
            rc, out = _cli_rdb(srv, path, functions)
            res.append((rc, b"Transfer finished with success" in out))
            res.append(_load_into_oracle(start_oracle, path))
        # Asked for the RDB alone: the connection is closed, no replica stays.
        wait_for(lambda: info(r)["connected_slaves"] == 0, what="rdb-only replica gone")
        got.append(res)
    assert got[0] == got[1]
    assert got[0][1][0] == 0 and got[0][3][0] == 1 and got[0][1][1] == got[0][3][1] != []


def test_replconf_rdb_filter_errors(start_server, start_oracle):
    got = []
    for start, _ in pairs(start_server, start_oracle):
        srv = start()
        res = []
        for cmd in (b"REPLCONF rdb-filter-only functions\r\n", b"REPLCONF rdb-filter-only foo\r\n",
                    b"REPLCONF rdb-filter-only \"functions foo\"\r\n",
                    b"*3\r\n$8\r\nREPLCONF\r\n$15\r\nrdb-filter-only\r\n$1\r\n\"\r\n",
                    b"*3\r\n$8\r\nREPLCONF\r\n$15\r\nrdb-filter-only\r\n$0\r\n\r\n",
                    b"REPLCONF rdb-only 2\r\n", b"REPLCONF rdb-only 1\r\n"):
            res.append(srv.raw(cmd, expect=None, idle=0.3))
        with srv.connect() as c:
            c.send(b"REPLCONF rdb-filter-only functions\r\n")
            c.expect(b"+OK\r\n")
            c.send(b"SYNC\r\n")
            res.append(c.recv_until(b"\r\n"))
        got.append(res)
    assert got[0] == got[1]
    assert got[0][-1] == b"-ERR Filtered replica requires EOF capability\r\n"


def _propagation_error_run(start):
    p_srv = start(**DBG)
    s_srv = start(**{"replica-read-only": "no", **DBG})
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    s.lpush("k", "x")                 # the replica diverges
    p.incr("k")                       # INCRBY: fine on the primary, WRONGTYPE on the replica
    wait_for(lambda: in_sync(p, s), what="sync")
    res = [log_has(s_srv, "# == CRITICAL == This replica is sending an error to its master: "
                          "'-WRONGTYPE Operation against a key holding the wrong kind of value' "
                          "after processing the command 'incrby'"),
           log_has(s_srv, "# Latest backlog is: '"),
           s.info("stats")["unexpected_error_replies"], s.lrange("k", 0, -1)]
    # Writable: ignored whatever the behaviour; read-only: panic.
    s.config_set("propagation-error-behavior", "panic-on-replicas")
    p.incr("k")
    wait_for(lambda: in_sync(p, s), what="sync")
    res.append(s.info("stats")["unexpected_error_replies"])
    s.config_set("replica-read-only", "yes")
    p.incr("k")
    s_srv.proc.wait(timeout=30)
    res.append(log_has(s_srv, "Guru Meditation: This replica panicked sending an error to its master "
                              "after processing the command 'incrby'"))
    res.append(s_srv.proc.returncode != 0)
    return res


def test_propagation_error_behavior(start_server, start_oracle):
    got = [_propagation_error_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [True, True, 1, [b"x"], 2, True, True]


def test_propagation_error_behavior_config(start_server, start_oracle):
    got = []
    for start, _ in pairs(start_server, start_oracle):
        r = start().client()
        res = [r.config_get("propagation-error-behavior")]
        for v in ("panic", "PANIC-on-replicas", "ignore", "bogus"):
            res.append(err(r.config_set, "propagation-error-behavior", v))
            res.append(r.config_get("propagation-error-behavior"))
        got.append(res)
    assert got[0] == got[1]


import socket
import threading


class FakeTarget:
    """A replica of `srv` (disk sync) that acknowledges exactly what it got,
    and listens as a would-be primary that refuses every PSYNC."""

    def __init__(self, srv, refusal=b"-ERR nope\r\n"):
        self.refusal = refusal
        self.stop = False
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.lsock.settimeout(0.2)
        self.port = self.lsock.getsockname()[1]
        self.link = srv.connect()
        c = self.link
        c.send(b"REPLCONF listening-port %d\r\n" % self.port)
        c.expect(b"+OK\r\n")
        c.send(b"REPLCONF capa psync2\r\n")
        c.expect(b"+OK\r\n")
        c.send(b"PSYNC ? -1\r\n")
        line = c.recv_until(b"\r\n")
        assert line.startswith(b"+FULLRESYNC"), line
        self.offset = int(line.split()[2])
        while True:                              # newlines, then $<len>
            head = c.recv_until(b"\n")
            if head.strip():
                break
        c.recv_exact(int(head.strip()[1:]))
        self.threads = [threading.Thread(target=self._ack, daemon=True),
                        threading.Thread(target=self._serve, daemon=True)]
        for t in self.threads:
            t.start()

    def _ack(self):
        s = self.link.sock
        s.settimeout(0.1)
        got = len(self.link.buf)
        while not self.stop:
            try:
                data = s.recv(65536)
                if not data:
                    return
                got += len(data)
            except socket.timeout:
                pass
            except OSError:
                return
            off = str(self.offset + got).encode()
            try:
                s.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n" % (len(off), off))
            except OSError:
                return

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.settimeout(0.5)
            buf = b""
            try:
                while not self.stop:
                    try:
                        data = conn.recv(65536)
                    except socket.timeout:
                        continue
                    if not data:
                        break
                    buf += data
                    # Answer each complete command: PING, REPLCONF..., PSYNC.
                    while b"\r\n" in buf:
                        if buf.startswith(b"*"):
                            n = int(buf[1:buf.index(b"\r\n")])
                            parts, rest = [], buf[buf.index(b"\r\n") + 2:]
                            ok = True
                            for _ in range(n):
                                if b"\r\n" not in rest:
                                    ok = False
                                    break
                                ln = int(rest[1:rest.index(b"\r\n")])
                                rest = rest[rest.index(b"\r\n") + 2:]
                                if len(rest) < ln + 2:
                                    ok = False
                                    break
                                parts.append(rest[:ln])
                                rest = rest[ln + 2:]
                            if not ok:
                                break
                            buf = rest
                        else:
                            parts = buf[:buf.index(b"\r\n")].split()
                            buf = buf[buf.index(b"\r\n") + 2:]
                        name = parts[0].upper() if parts else b""
                        conn.sendall(b"+PONG\r\n" if name == b"PING" else
                                     self.refusal if name == b"PSYNC" else b"+OK\r\n")
            except OSError:
                pass
            conn.close()

    def close(self):
        self.stop = True
        self.link.close()
        self.lsock.close()
        for t in self.threads:
            t.join(timeout=5)


def _failover_rejected_run(start):
    srv = start(**{"repl-diskless-sync": "no", **DBG})
    r = srv.client()
    r.set("a", 1)
    fake = FakeTarget(srv)
    try:
        wait_for(lambda: info(r).get("slave0", {}).get("state") == "online", what="fake replica online")
        res = [r.execute_command("FAILOVER", "TO", "127.0.0.1", fake.port)]
        res.append(log_has(srv, "* Master does not support PSYNC or is in error state (reply: -ERR nope)"))
        res.append(log_has(srv, "* FAILOVER to 127.0.0.1:%d aborted: Failover target rejected psync request"
                           % fake.port))
        wait_for(lambda: info(r)["master_failover_state"] == "no-failover", what="failover over")
        res.append(info(r)["role"])
        res.append(r.set("b", 1))                # writes resume
    finally:
        fake.close()
    return res


def test_failover_target_rejects_psync(start_server, start_oracle):
    got = [_failover_rejected_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [b"OK", True, True, "master", True]


def _bind_source_run(start):
    p_srv = start(**{"protected-mode": "no", **DBG})
    s_srv = start(**{"bind-source-addr": "127.0.0.2", **DBG})
    p = p_srv.client()
    s = s_srv.client()
    res = [s.config_get("bind-source-addr")]
    attach(s_srv, p_srv)
    lines = [l for l in p.execute_command("CLIENT", "LIST", "TYPE", "replica").decode().splitlines()]
    res.append([l.split(" addr=")[1].split(":")[0] for l in lines])
    s.config_set("bind-source-addr", "")
    res.append(s.config_get("bind-source-addr"))
    s.execute_command("REPLICAOF", "NO", "ONE")
    attach(s_srv, p_srv)
    lines = [l for l in p.execute_command("CLIENT", "LIST", "TYPE", "replica").decode().splitlines()]
    res.append([l.split(" addr=")[1].split(":")[0] for l in lines])
    return res


def test_bind_source_addr_for_the_replica_link(start_server, start_oracle):
    got = [_bind_source_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][1] == ["127.0.0.2"] and got[0][3] == ["127.0.0.1"]


def _disk_error_run(start, ignore):
    p_srv = start(**DBG)
    s_srv = start(**{"replica-ignore-disk-write-errors": ignore, "enable-protected-configs": "yes", **DBG})
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    res = [s.config_get("replica-ignore-disk-write-errors")]
    # The replica's saves fail: a directory that is gone.
    gone = os.path.join(s_srv.tmp, "gone")
    os.mkdir(gone)
    s.config_set("save", "900 1")
    s.config_set("dir", gone)
    os.rmdir(gone)
    s.execute_command("BGSAVE")
    wait_for(lambda: s.info("persistence")["rdb_last_bgsave_status"] == "err", what="failed save")
    res.append(err(s.set, "x", 1) if ignore == "yes" else None)   # a client's write: MISCONF (read-only: READONLY)
    p.set("after", 1)
    if ignore == "yes":
        wait_for(lambda: in_sync(p, s), what="applied")
        res.append(log_has(s_srv, "# Replica is applying a command even though it is unable to write to disk."))
        res.append(s.get("after"))
    else:
        s_srv.proc.wait(timeout=30)
        res.append(log_has(s_srv, "Guru Meditation: Replica was unable to write command to disk."))
    return res


@pytest.mark.parametrize("ignore", ["yes", "no"])
def test_replica_ignore_disk_write_errors(start_server, start_oracle, ignore):
    got = [_disk_error_run(start, ignore) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]


def _replica_maxmemory_run(start, ignore):
    p_srv = start(**DBG)
    s_srv = start(**{"replica-ignore-maxmemory": ignore, "maxmemory-policy": "allkeys-random", **DBG})
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    used = s.info("memory")["used_memory"]
    s.config_set("maxmemory", used + 2 * MB)
    val = "v" * 1000
    for i in range(0, 6000, 100):                 # about 6 MB
        p.mset({"k%d" % j: val for j in range(i, i + 100)})
    wait_for(lambda: in_sync(p, s), what="sync")
    return [s.config_get("replica-ignore-maxmemory"), p.dbsize(),
            s.dbsize() == p.dbsize(), s.info("stats")["evicted_keys"] > 0]


@pytest.mark.parametrize("ignore", ["yes", "no"])
def test_replica_ignore_maxmemory(start_server, start_oracle, ignore):
    got = [_replica_maxmemory_run(start, ignore) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][2] == (ignore == "yes")


def _small_limit_run(start):
    """A replica limit below the backlog size: a replica that keeps up is
    not dropped (the limit counts at least the backlog size)."""
    p_srv = start(**{"client-output-buffer-limit": "replica 16kb 0 0", **DBG})
    s_srv = start(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    val = "v" * 5000
    for i in range(100):                 # 500 KB: under the backlog size even if it stalled
        p.set("k%d" % (i % 20), val)
    wait_for(lambda: in_sync(p, s), what="sync")
    return [info(p)["connected_slaves"], "overcoming of output buffer limits" in p_srv.log, s.get("k19") == val.encode()]


def test_small_replica_limit_keeps_a_replica_that_keeps_up(start_server, start_oracle):
    got = [_small_limit_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1] == [1, False, True]
