"""BGSAVE without a fork (`cairn-snapshot inline`, Cairn's own directive,
issue 42): the main thread writes the snapshot between commands, and a
change to a key not written yet writes that key first.  The file is the
dataset of the save's first moment -- DEBUG DIGEST of the file loaded (by
Cairn and by redis-server 7.0.15) equals the digest taken when BGSAVE
started -- under writes of every type, MULTI/EXEC and scripts, keys created,
deleted, renamed, moved and copied to other databases, FLUSHDB and SWAPDB,
expiry; FLUSHALL cancels it as it kills Redis's child; a save cut short
(SHUTDOWN NOSAVE, kill -9) or failing (ENOSPC) leaves the old dump.rdb.

The saves are slowed by rdb-key-save-delay so that writes certainly land
while they run: each write round starts only after INFO said the save is
still in progress."""
import os
import random
import signal
import time

import pytest
import redis

from rdbhelp import populate
from test_rdb import raw_client, start_with_file, wait_for, wait_bgsave_done
from test_rdb_faults import shim, started_with_shim, status, no_temp_files  # noqa: F401 (fixture)

INLINE = {"cairn-snapshot": "inline", "enable-debug-command": "yes"}
DBG = {"enable-debug-command": "yes"}


def in_progress(r):
    return r.info("persistence")["rdb_bgsave_in_progress"] == 1


def dump_path(s):
    return os.path.join(s.tmp, "dump.rdb")


def fill(r, n=1500, dbs=(0, 1, 2)):
    """n keys of each type in each database of dbs."""
    for db in dbs:
        r.execute_command("SELECT", db)
        p = r.pipeline(transaction=False)
        for i in range(n):
            p.set("s:%d" % i, "value-%d-" % i * 3)
            p.hset("h:%d" % i, mapping={"a": i, "b": "x" * (i % 50)})
            p.rpush("l:%d" % i, "a", i, "c")
            p.sadd("t:%d" % i, i, i + 1, "m")
            p.zadd("z:%d" % i, {"a": i, "b": -i})
            if i % 10 == 0:
                p.xadd("x:%d" % i, {"f": i})
            if i % 7 == 0:
                p.pexpire("s:%d" % i, 10 ** 9)
        p.execute()
    r.execute_command("SELECT", 0)


def mutate(r, rnd, n=1500):
    """One round of writes of every kind over random keys of databases 0-2."""
    p = r.pipeline(transaction=False)
    for _ in range(40):
        i = rnd.randrange(n)
        p.set("s:%d" % i, "new")
        p.append("s:%d" % rnd.randrange(n), "tail")
        p.hset("h:%d" % rnd.randrange(n), "a", "changed")
        p.hdel("h:%d" % rnd.randrange(n), "b")
        p.lpush("l:%d" % rnd.randrange(n), "pushed")
        p.rpop("l:%d" % rnd.randrange(n))
        p.sadd("t:%d" % rnd.randrange(n), "added")
        p.srem("t:%d" % rnd.randrange(n), "m")
        p.zadd("z:%d" % rnd.randrange(n), {"a": 1e6})
        p.zrem("z:%d" % rnd.randrange(n), "b")
        p.xadd("x:%d" % (rnd.randrange(n // 10) * 10), {"g": 1})
        p.delete("h:%d" % rnd.randrange(n))
        p.unlink("z:%d" % rnd.randrange(n))
        p.expire("t:%d" % rnd.randrange(n), 10 ** 6)
        p.persist("s:%d" % (rnd.randrange(n // 7) * 7))
        p.set("created:%d" % rnd.randrange(10 ** 6), "new key")
        p.rename("l:%d" % rnd.randrange(n), "renamed:%d" % rnd.randrange(10 ** 6))
        p.execute_command("MOVE", "s:%d" % rnd.randrange(n), 1)
        p.execute_command("COPY", "h:%d" % rnd.randrange(n), "h:%d" % rnd.randrange(n), "DB", 2, "REPLACE")
        p.lmove("l:%d" % rnd.randrange(n), "l:%d" % rnd.randrange(n), "LEFT", "RIGHT")
        p.execute_command("SELECT", 1)
        p.set("s:%d" % rnd.randrange(n), "db1")
        p.delete("z:%d" % rnd.randrange(n))
        p.execute_command("SELECT", 0)
    # Transactions and scripts, a script writing a key it did not declare.
    p.execute(raise_on_error=False)  # RENAME of a key gone, LMOVE of a wrong type, ...
    t = r.pipeline(transaction=True)
    t.set("s:%d" % rnd.randrange(n), "multi")
    t.incr("counter")
    t.delete("t:%d" % rnd.randrange(n))
    t.execute()
    r.eval("redis.call('set', ARGV[1], 'lua'); redis.call('del', ARGV[2]); return 1", 0,
           "s:%d" % rnd.randrange(n), "h:%d" % rnd.randrange(n))


def slow_bgsave(r, delay=100):
    r.config_set("rdb-key-save-delay", delay)
    assert r.execute_command("BGSAVE") == b"Background saving started"
    assert in_progress(r)


def finish(r):
    wait_bgsave_done(r)
    r.config_set("rdb-key-save-delay", 0)


def test_point_in_time_under_writes_of_every_type(start_server, start_oracle):
    s = start_server(**INLINE)
    r = raw_client(s)
    populate(r, seed=5, dbs=(0, 3))
    fill(r)
    want = r.execute_command("DEBUG", "DIGEST")
    slow_bgsave(r)
    rnd, rounds = random.Random(42), 0
    while in_progress(r):
        mutate(r, rnd)
        rounds += 1
    finish(r)
    assert rounds >= 1
    assert status(r) == "ok"
    assert "Background saving started (in process, no fork)" in s.log
    assert r.execute_command("DEBUG", "DIGEST") != want  # the writes changed the dataset
    for start in (start_server, start_oracle):
        o, _ = start_with_file(start, dump_path(s), **DBG)
        assert o.client().execute_command("DEBUG", "DIGEST") == want


def test_flushdb_and_swapdb_during_the_save(start_server):
    s = start_server(**INLINE)
    r = raw_client(s)
    fill(r, n=800, dbs=(0, 1, 2, 5))
    want = r.execute_command("DEBUG", "DIGEST")
    slow_bgsave(r)
    r.execute_command("SWAPDB", 1, 5)
    r.execute_command("SELECT", 2)
    r.execute_command("FLUSHDB")
    r.execute_command("SELECT", 0)
    r.set("s:1", "after")
    assert in_progress(r)
    finish(r)
    assert status(r) == "ok"
    o, _ = start_with_file(start_server, dump_path(s), **DBG)
    assert o.client().execute_command("DEBUG", "DIGEST") == want


def test_keys_expired_or_deleted_during_the_save_are_in_the_file(start_server):
    # Keys already expired at the start (active expiry off) are in the
    # snapshot, as in a fork's; deleted during the save by lazy expiry or by
    # the active cycle, they are written first.  rdbcompression off: their
    # values are found in the file as they are.
    s = start_server(rdbcompression="no", **INLINE)
    r = raw_client(s)
    fill(r, n=1500, dbs=(0,))
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    for i in range(40):
        r.set("exp:%06d" % i, "expired-value-%06d" % i, px=1)
    time.sleep(0.05)  # past their 1 ms (not looked at: that would delete them)
    slow_bgsave(r)
    for i in range(20):
        assert r.get("exp:%06d" % i) is None  # lazy expiry deletes it
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    wait_for(lambda: r.exists(*["exp:%06d" % i for i in range(40)]) == 0 or not in_progress(r))
    assert in_progress(r)
    finish(r)
    assert status(r) == "ok"
    data = open(dump_path(s), "rb").read()
    for i in range(40):
        assert b"expired-value-%06d" % i in data, i


def test_flushall_cancels_the_save(start_server):
    s = start_server(**INLINE)
    r = raw_client(s)
    r.set("old", "1")
    assert r.save() == b"OK"
    good = open(dump_path(s), "rb").read()
    fill(r, n=500, dbs=(0,))
    slow_bgsave(r)
    r.flushall()
    assert not in_progress(r)
    assert status(r) == "ok"  # cancelled, not failed
    assert open(dump_path(s), "rb").read() == good
    assert no_temp_files(s.tmp)
    r.set("new", "2")
    assert r.execute_command("BGSAVE") == b"Background saving started"
    finish(r)
    o, _ = start_with_file(start_server, dump_path(s), **DBG)
    assert o.client().keys("*") == [b"new"]


@pytest.mark.parametrize("how", ["shutdown", "kill9"])
def test_save_cut_short_leaves_the_old_file(start_server, how):
    s = start_server(**INLINE)
    r = raw_client(s)
    r.set("old", "1")
    assert r.save() == b"OK"
    good = open(dump_path(s), "rb").read()
    fill(r, n=500, dbs=(0,))
    slow_bgsave(r, delay=1000)
    if how == "shutdown":
        try:
            r.shutdown(nosave=True)  # redis-py swallows the closed connection
        except redis.ConnectionError:
            pass
        s.proc.wait(timeout=30)
        assert "There is a child saving an .rdb. Killing it!" in s.log
        assert no_temp_files(s.tmp)
    else:
        os.kill(s.pid, signal.SIGKILL)
        s.proc.wait(timeout=30)
    assert open(dump_path(s), "rb").read() == good


def test_write_error_fails_the_save(start_server, monkeypatch, shim, tmp_path):  # noqa: F811
    s, r, flag, good = started_with_shim(start_server, monkeypatch, shim, tmp_path, CAIRN_FAULT_WRITE="ENOSPC")
    r.config_set("cairn-snapshot", "inline")
    p = r.pipeline(transaction=False)
    for i in range(20000):
        p.set("k%d" % i, ("value %d " % i) * 20)
    p.execute()
    open(flag, "w").close()
    assert r.execute_command("BGSAVE") == b"Background saving started"
    wait_bgsave_done(r)
    assert status(r) == "err"
    assert "Write error saving DB on disk" in s.log and "Background saving error" in s.log
    assert open(dump_path(s), "rb").read() == good
    assert no_temp_files(s.tmp)
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        r.set("x", "1")
    os.unlink(flag)
    assert r.execute_command("BGSAVE") == b"Background saving started"
    wait_bgsave_done(r)
    assert status(r) == "ok"
    assert r.set("x", "1")


def test_directive(start_server):
    s = start_server(**DBG)
    r = raw_client(s)
    assert r.config_get("cairn-snapshot") == {"cairn-snapshot": "fork"}
    assert r.config_get("*").get("cairn-snapshot") is None  # Redis's names only
    with pytest.raises(redis.ResponseError):
        r.config_set("cairn-snapshot", "both")
    r.set("a", "1")
    assert r.execute_command("BGSAVE") == b"Background saving started"
    wait_bgsave_done(r)
    assert "Background saving started by pid" in s.log
    assert "in process, no fork" not in s.log
    r.config_set("cairn-snapshot", "inline")
    assert r.execute_command("BGSAVE") == b"Background saving started"
    wait_bgsave_done(r)
    assert "Background saving started (in process, no fork)" in s.log
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert r.lastsave()


def rewriting(r):
    i = r.info("persistence")
    return i["aof_rewrite_in_progress"] == 1 or i["aof_rewrite_scheduled"] == 1


def base_file(s):
    d = os.path.join(s.tmp, "appendonlydir")
    names = [n for n in os.listdir(d) if ".base." in n]
    assert len(names) == 1, names
    return open(os.path.join(d, names[0]), "rb").read()


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_aof_rewrite_base_in_process(start_server, preamble):
    # The rewrite's base -- RDB preamble or command form -- written without
    # a fork: the base is the dataset of the rewrite's start and the new
    # INCR file has every write since, so loading both gives today's
    # dataset exactly (a base holding later writes would apply them twice).
    # FLUSHALL does not cancel it.
    s = start_server(appendonly="yes", **{"aof-use-rdb-preamble": preamble}, **INLINE)
    r = raw_client(s)
    fill(r, n=1000, dbs=(0, 1, 2))
    r.config_set("rdb-key-save-delay", 100)
    assert r.execute_command("BGREWRITEAOF")
    rnd, rounds = random.Random(7), 0
    while rewriting(r):
        mutate(r, rnd, n=1000)
        rounds += 1
    assert rounds >= 1
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    assert "Background append only file rewriting started (in process, no fork)" in s.log
    assert "Background append only file rewriting started by pid" not in s.log
    assert base_file(s).startswith(b"REDIS" if preamble == "yes" else b"*")
    want = r.execute_command("DEBUG", "DIGEST")
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.execute_command("DEBUG", "DIGEST") == want

    assert r.execute_command("BGREWRITEAOF")
    assert rewriting(r)
    r.flushall()
    r.set("after", "flush")
    wait_for(lambda: not rewriting(r), timeout=60)
    r.config_set("rdb-key-save-delay", 0)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    want = r.execute_command("DEBUG", "DIGEST")
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.execute_command("DEBUG", "DIGEST") == want
    assert r.keys("*") == [b"after"]


def sync_under_writes(start_server, start_oracle, replica_kind, directives, seed):
    """A primary whose full sync is written in process (directives) while
    it takes writes of every kind; returns (primary server, its client,
    the replica's client) once the sync has ended and the replica is up
    to the primary's offset."""
    p_srv = start_server(**directives, **INLINE)
    p = raw_client(p_srv)
    fill(p, n=1000, dbs=(0, 1, 2))
    p.config_set("rdb-key-save-delay", 100)
    s_srv = (start_server if replica_kind == "cairn" else start_oracle)(**DBG)
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    wait_for(lambda: in_progress(p), timeout=30)
    rnd, rounds = random.Random(seed), 0
    while in_progress(p):
        mutate(p, rnd, n=1000)
        rounds += 1
    assert rounds >= 1
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: s.info("replication").get("master_link_status") == "up", timeout=60)
    wait_for(lambda: s.info("replication")["slave_repl_offset"] == p.info("replication")["master_repl_offset"],
             timeout=60)
    return p_srv, p, s


@pytest.mark.parametrize("replica_kind", ["cairn", "redis"])
def test_disk_full_sync_in_process(start_server, start_oracle, replica_kind):
    # repl-diskless-sync no: the sync's file is written without a fork
    # while the primary takes writes; the replica (Cairn, or
    # redis-server 7.0.15) loads it and applies the stream from the
    # snapshot's offset, so it ends with the primary's digest.
    p_srv, p, s = sync_under_writes(start_server, start_oracle, replica_kind, {"repl-diskless-sync": "no"}, 11)
    assert "Background saving started (in process, no fork)" in p_srv.log
    assert s.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")


# --- diskless full sync written in process ----------------------------------

DISKLESS = {"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "0"}


def transferring(p):
    """A diskless sync's save runs (INFO shows it as an RDB child)."""
    return in_progress(p)


@pytest.mark.parametrize("replica_kind", ["cairn", "redis"])
def test_diskless_full_sync_in_process(start_server, start_oracle, replica_kind):
    # repl-diskless-sync yes: the RDB goes from the main thread straight
    # into the replica's socket after the $EOF line while the primary takes
    # writes of every kind; the replica (Cairn, or redis-server 7.0.15)
    # loads it and applies the stream from the snapshot's offset, so it
    # ends with the primary's digest.  Writes that are not idempotent
    # (APPEND, LPUSH, RPOP, INCR, ...) applied by both the RDB and the
    # stream would leave a different digest.
    p_srv, p, s = sync_under_writes(start_server, start_oracle, replica_kind, DISKLESS, 13)
    assert "Background RDB transfer started (in process, no fork)" in p_srv.log
    assert "Background RDB transfer started by pid" not in p_srv.log
    assert s.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")
    assert p.info("persistence")["rdb_last_bgsave_status"] == "ok"


class StreamReader:
    """A fake replica asking for a full sync and reading the diskless RDB
    ("$EOF:<mark>\\r\\n" ... <mark>) in a thread; read=False reads nothing."""

    def __init__(self, srv, read=True):
        import threading
        self.c = srv.connect()
        self.c.send(b"REPLCONF capa eof capa psync2\r\n")
        self.c.expect(b"+OK\r\n")
        self.c.send(b"PSYNC ? -1\r\n")
        self.rdb, self.error = None, None
        self.t = threading.Thread(target=self._run, daemon=True) if read else None
        if self.t:
            self.t.start()

    def _run(self):
        try:
            c = self.c
            c.sock.settimeout(60)
            line = c.recv_until(b"\r\n").lstrip(b"\n")  # newlines while the sync waits to start
            assert line.startswith(b"+FULLRESYNC"), line
            head = c.recv_until(b"\r\n").lstrip(b"\n")
            assert head.startswith(b"$EOF:") and len(head) == 47, head
            mark = head[5:45]
            parts, tail = [c.buf], c.buf[-40:]
            c.buf = b""
            while not tail.endswith(mark):
                chunk = c.sock.recv(1 << 20)
                if not chunk:
                    raise EOFError("closed before the mark")
                parts.append(chunk)
                tail = (tail + chunk)[-40:]
            self.rdb = b"".join(parts)[:-40]
        except Exception as e:  # reported by join()
            self.error = e

    def join(self):
        self.t.join(timeout=120)
        assert not self.t.is_alive(), "the RDB did not end"
        assert self.error is None, self.error
        return self.rdb


def test_diskless_stream_is_the_dataset_of_its_start(start_server, start_oracle, tmp_path):
    # The bytes a replica gets are the dataset of the sync's first moment:
    # loaded by Cairn and by redis-server 7.0.15 they give the digest taken
    # just before, whatever was written while they were being sent.
    p_srv = start_server(**DISKLESS, **INLINE)
    p = raw_client(p_srv)
    populate(p, seed=9, dbs=(0, 4))
    fill(p, n=1000, dbs=(0, 1, 2))
    want = p.execute_command("DEBUG", "DIGEST")
    p.config_set("rdb-key-save-delay", 100)
    rd = StreamReader(p_srv)
    wait_for(lambda: transferring(p), timeout=30)
    rnd, rounds = random.Random(17), 0
    while transferring(p):
        mutate(p, rnd, n=1000)
        rounds += 1
    assert rounds >= 1
    rdb = rd.join()
    p.config_set("rdb-key-save-delay", 0)
    assert p.execute_command("DEBUG", "DIGEST") != want
    path = str(tmp_path / "stream.rdb")
    with open(path, "wb") as f:
        f.write(rdb)
    for start in (start_server, start_oracle):
        o, _ = start_with_file(start, path, **DBG)
        assert o.client().execute_command("DEBUG", "DIGEST") == want
    rd.c.close()


def test_diskless_replica_dropping_midway(start_server):
    # Two replicas in one sync; one goes midway: the other still gets the
    # whole RDB and ends in sync.  Then the last one of a sync goes: the
    # save stops (not a failed save), and the next replica syncs anew.
    p_srv = start_server(**{**DISKLESS, "repl-diskless-sync-delay": "5",
                            "repl-diskless-sync-max-replicas": "2"}, **INLINE)
    p = raw_client(p_srv)
    fill(p, n=1000, dbs=(0, 1))
    p.config_set("rdb-key-save-delay", 200)
    gone = StreamReader(p_srv, read=False)
    s_srv = start_server(**DBG)
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    wait_for(lambda: transferring(p), timeout=30)
    assert p.info("replication")["connected_slaves"] == 2
    assert p_srv.log.count("Background RDB transfer started (in process, no fork)") == 1
    gone.c.close()
    wait_for(lambda: p.info("replication")["connected_slaves"] == 1, timeout=30)
    assert transferring(p)
    rnd = random.Random(19)
    while transferring(p):
        mutate(p, rnd, n=1000)
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: s.info("replication").get("master_link_status") == "up", timeout=60)
    wait_for(lambda: s.info("replication")["slave_repl_offset"] == p.info("replication")["master_repl_offset"],
             timeout=60)
    assert s.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")

    # The last replica of a sync goes.
    s.execute_command("REPLICAOF", "NO", "ONE")
    wait_for(lambda: p.info("replication")["connected_slaves"] == 0, timeout=30)
    p.config_set("repl-diskless-sync-delay", 0)
    p.config_set("rdb-key-save-delay", 1000)
    last = StreamReader(p_srv, read=False)
    wait_for(lambda: transferring(p), timeout=30)
    last.c.close()
    wait_for(lambda: "last replica dropped, stopping the in-process save" in p_srv.log, timeout=30)
    wait_for(lambda: not transferring(p), timeout=30)
    assert p.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert p.info("replication")["connected_slaves"] == 0
    assert no_temp_files(p_srv.tmp)
    p.config_set("rdb-key-save-delay", 0)
    p.set("after", "drop")
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    wait_for(lambda: s.info("replication").get("master_link_status") == "up", timeout=60)
    wait_for(lambda: s.info("replication")["slave_repl_offset"] == p.info("replication")["master_repl_offset"],
             timeout=60)
    assert s.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")


def replica_omem(p):
    for c in p.client_list():
        if "S" in c["flags"]:
            return int(c["omem"])
    return None


def test_diskless_back_pressure_and_stalled_replica(start_server):
    # A replica that reads nothing: the walk waits while it holds 8 MB
    # unsent, so the primary's output to it stays bounded (a fork's pipe
    # is read at the same rule) -- writes keep being served meanwhile --
    # and after repl-timeout it is dropped, which stops the save.
    p_srv = start_server(**DISKLESS, **{"repl-timeout": "3"}, **INLINE)
    p = raw_client(p_srv)
    blob = os.urandom(1024 * 1024)  # incompressible: 40 MB of RDB, values of 1 MB
    for i in range(40):
        p.set("big%d" % i, blob[i:] + blob[:i])
    stalled = StreamReader(p_srv, read=False)
    wait_for(lambda: transferring(p), timeout=30)
    peak = 0
    while transferring(p):
        p.set("big%d" % random.randrange(40), "changed")  # served while the walk waits
        om = replica_omem(p)
        if om is not None:
            peak = max(peak, om)
        time.sleep(0.05)
    assert 0 < peak < 12 * 1024 * 1024, peak  # 8 MB and a piece, never the whole RDB
    assert "Disconnecting timedout replica (full sync)" in p_srv.log
    assert "last replica dropped, stopping the in-process save" in p_srv.log
    assert p.info("persistence")["rdb_last_bgsave_status"] == "ok"
    stalled.c.close()


def test_info_progress_and_cost_of_an_inline_save(start_server):
    # current_save_keys_processed counts the keys written so far (ahead of
    # the walk included), current_save_keys_total the keys at the start;
    # the "copy" fields report what the save holds beyond the dataset (the
    # names of keys written ahead, its buffer), rdb_last_cow_size its peak.
    s = start_server(**INLINE)
    r = raw_client(s)
    fill(r, n=1000, dbs=(0,))
    total = r.dbsize()
    slow_bgsave(r, delay=500)
    seen = []
    rnd = random.Random(23)
    while in_progress(r):
        i = r.info("persistence")
        if i["rdb_bgsave_in_progress"] == 1:
            seen.append((i["current_save_keys_processed"], i["current_save_keys_total"], i["current_cow_size"]))
        p = r.pipeline(transaction=False)
        for _ in range(10):
            p.set("s:%d" % rnd.randrange(1000), "ahead")
        p.execute()
        time.sleep(0.02)
    finish(r)
    assert len(seen) >= 2
    assert all(t == total for _, t, _ in seen)
    keys = [k for k, _, _ in seen]
    assert keys == sorted(keys) and keys[-1] > keys[0] and keys[-1] <= total
    assert max(c for _, _, c in seen) > 0
    i = r.info("persistence")
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["rdb_last_cow_size"] > 0
    assert i["current_save_keys_processed"] == 0


def test_unopenable_file_fails_the_save_not_its_start(start_server, tmp_path):
    # As a child's save: BGSAVE answers "started", then the save fails
    # (Redis's lines, rdb_last_bgsave_status:err, MISCONF) and a later one
    # succeeds once the directory is back.
    s = start_server(save="3600 1", **{"enable-protected-configs": "yes"}, **INLINE)
    r = raw_client(s)
    r.set("a", "1")
    d = tmp_path / "data"
    d.mkdir()
    r.config_set("dir", str(d))
    d.rmdir()
    assert r.execute_command("BGSAVE") == b"Background saving started"
    wait_bgsave_done(r)
    assert status(r) == "err"
    assert "Failed opening the temp RDB file" in s.log and "Background saving error" in s.log
    assert "Write error saving DB on disk" not in s.log
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        r.set("x", "1")
    r.config_set("dir", str(tmp_path))
    assert r.execute_command("BGSAVE") == b"Background saving started"
    wait_bgsave_done(r)
    assert status(r) == "ok"
    assert (tmp_path / "dump.rdb").exists()


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_flushall_stops_a_sync_in_process(start_server, diskless):
    # FLUSHALL stops the sync's save as it kills Redis's child: the
    # replica is dropped (not a failed save, no temporary file left), syncs
    # again and ends with the primary's dataset.
    p_srv = start_server(**{"repl-diskless-sync": diskless, "repl-diskless-sync-delay": "0"}, **INLINE)
    p = raw_client(p_srv)
    fill(p, n=1000, dbs=(0,))
    p.config_set("rdb-key-save-delay", 1000)
    s_srv = start_server(**DBG)
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    wait_for(lambda: transferring(p), timeout=30)
    p.flushall()
    p.config_set("rdb-key-save-delay", 0)
    p.set("after", "flush")
    wait_for(lambda: s.info("replication").get("master_link_status") == "up", timeout=60)
    wait_for(lambda: s.info("replication")["slave_repl_offset"] == p.info("replication")["master_repl_offset"],
             timeout=60)
    assert s.keys("*") == [b"after"]
    assert s.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")
    assert p.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert no_temp_files(p_srv.tmp)
    assert p_srv.log.count("(in process, no fork)") >= 2  # the stopped sync and the next one


def key_table(r, db=0):
    """(entries, slots) of database db's key table, once it is not rehashing."""
    wait_for(lambda: b"Hash table 1" not in r.execute_command("DEBUG", "HTSTATS", db).split(b"[Expires HT]")[0])
    text = r.execute_command("DEBUG", "HTSTATS", db).decode()
    size = int(text.split("table size: ")[1].split("\n")[0])
    used = int(text.split("number of elements: ")[1].split("\n")[0])
    return used, size


def test_key_recreated_as_its_table_grows_is_written_once(start_server, start_oracle):
    # A key the walk wrote, deleted and created again by the add that makes
    # the key table grow: the new key goes into the new bucket array, which
    # the walk has not reached -- it must not be written a second time
    # (the file would hold the key twice: "RDB has duplicated key"), and a
    # key created after the start is never in the file.
    s = start_server(rdbcompression="no", **INLINE)
    r = raw_client(s)
    i = 0
    while True:  # a full table: the next add starts its growth
        r.set("key-%04d-" % i, "v%d" % i)
        i += 1
        used, size = key_table(r)
        if i >= 9 and used == size:
            break
    want = r.execute_command("DEBUG", "DIGEST")
    slow_bgsave(r, delay=150000)
    tmp = os.path.join(s.tmp, "temp-%d.rdb" % s.proc.pid)

    def first_written():
        data = open(tmp, "rb").read() if os.path.exists(tmp) else b""
        k = data.find(b"key-")
        return data[k:k + 9].decode() if k >= 0 else None

    wait_for(first_written)
    k = first_written()
    t = r.pipeline(transaction=True)
    t.delete(k)
    t.set("fresh", "after the start")  # the table full again
    t.set(k, "created again")          # this add grows it
    t.execute()
    assert in_progress(r)
    stats = r.execute_command("DEBUG", "HTSTATS", 0).split(b"[Expires HT]")[0]
    assert b"Hash table 1" in stats  # grown, its rehash paused by the walk
    finish(r)
    assert status(r) == "ok"
    for start in (start_server, start_oracle):
        o, _ = start_with_file(start, dump_path(s), **DBG)
        assert o.client().execute_command("DEBUG", "DIGEST") == want
