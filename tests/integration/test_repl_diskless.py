"""A replica's diskless load (repl-diskless-load on-empty-db / swapdb)
parses the RDB as it comes from the socket, as redis-server 7.0.15 does:
clients get -LOADING while the primary is still sending, or, with swapdb
when the primary continues the replica's own history (same replication
id), keep reading the old data (async_loading:1; commands flagged
no-async-loading get -LOADING); the replica holds only the record in
flight, never the whole file; a record split anywhere, a truncated or
corrupt stream, or a link cut half-way leaves it as it was (swapdb: the old
data; on-empty-db: empty) and it retries.  Compared with redis-server
where the two can be set up alike."""
import functools
import os
import random
import socket
import threading
import time

import pytest
from waithelp import poll
import redis

from test_aof import wait_for
from test_repl import DBG, FAST, ORACLE_DBG, digest, in_sync, info, link_up
from test_repl_sync import await_psync, fill, loading_error, promote

wait_for = functools.partial(wait_for, timeout=30.0)

LOADING = "Redis is loading the dataset in memory"


def start(kind, start_server, start_oracle, **cfg):
    if kind == "cairn":
        return start_server(**{**FAST, **cfg})
    return start_oracle(**{**ORACLE_DBG, **cfg})


def reply(r, *cmd):
    try:
        return r.execute_command(*cmd)
    except (redis.ResponseError, redis.exceptions.BusyLoadingError) as e:
        return "error: %s" % e


def observe(s):
    """What a client of a replica that is loading sees (the INFO fields
    from one snapshot: the load may end between two INFO calls)."""
    per = s.info("all")
    return {
        "ping": reply(s, "PING"),
        "get": reply(s, "GET", "old"),
        "bgsave": reply(s, "BGSAVE"),
        "loading": (per["loading"], per["async_loading"]),
        "loading_fields": sorted(k for k in per if k.startswith("loading_")),
        "sync_in_progress": per["master_sync_in_progress"],
        # Parsed from the socket: an "$EOF:" stream's size 0, no byte counted.
        "sync_bytes": tuple(per.get(k) for k in ("master_sync_total_bytes", "master_sync_read_bytes",
                                                 "master_sync_left_bytes", "master_sync_perc")),
    }


def observe_while(s, field):
    """observe(s) taken wholly inside one load: INFO's `field` (loading or
    async_loading) is 1 again once the commands have run.  A load that
    ended meanwhile (a sync cut and restarted on a loaded machine: BGSAVE
    then ran between two loads) is observed again once the next one is
    under way."""
    deadline = time.monotonic() + 30
    while True:
        got = observe(s)
        if s.info("persistence")[field] == 1 or time.monotonic() > deadline:
            return got
        if not poll(lambda: s.info("persistence")[field] == 1, timeout=30):
            # redis-server's own replica (the redis-redis pair, which only
            # checks this test) sometimes ends its load before it can be
            # observed on a loaded machine, and starts no other
            if "cairn_version" not in s.info("server"):
                pytest.skip("redis-server's load ended before it was observed (loaded machine)")
            wait_for(lambda: s.info("persistence")[field] == 1, what=field + " again")


LOADING_FIELDS = ["loading_eta_seconds", "loading_loaded_bytes", "loading_loaded_perc",
                  "loading_rdb_used_mem", "loading_start_time", "loading_total_bytes"]
SYNC_SEEN = {
    "ping": "error: " + LOADING, "get": "error: " + LOADING, "bgsave": "error: " + LOADING,
    "loading": (1, 0), "loading_fields": LOADING_FIELDS, "sync_in_progress": 1, "sync_bytes": (0, 0, 0, 0.0),
}
ASYNC_SEEN = {
    "ping": True, "get": b"1", "bgsave": "error: " + LOADING,
    "loading": (0, 1), "loading_fields": LOADING_FIELDS, "sync_in_progress": 1, "sync_bytes": (0, 0, 0, 0.0),
}


@pytest.mark.parametrize("pair", ["redis-redis", "redis-cairn", "cairn-cairn"])
@pytest.mark.parametrize("history", ["other", "same", "empty"])
def test_replica_serves_while_the_primary_sends(start_server, start_oracle, pair, history):
    """swapdb: with another history the replica (slowed by key-load-delay,
    set back to 0 once seen) answers -LOADING while it loads; with its own
    history (restarted from its RDB after the primary's backlog moved past
    it; the primary slowed by rdb-key-save-delay) it serves the old data
    while the RDB arrives (async_loading).  Then the new data replaces the
    old, DEBUG DIGEST equal to the primary's.
    "empty": repl-diskless-load on-empty-db on an empty replica, -LOADING
    too."""
    pkind, skind = pair.split("-")
    p_srv = start(pkind, start_server, start_oracle, **{"repl-backlog-size": "16kb"})
    p = p_srv.client()
    p.set("old", "1")
    # Values of 1 KB: the primary's buffered writes reach the socket often.
    p.execute_command("DEBUG", "POPULATE", 1000, "key", 1000)
    # Redis turns its loop every loading-process-events-interval-bytes.
    scfg = {"repl-diskless-load": "on-empty-db" if history == "empty" else "swapdb",
            "loading-process-events-interval-bytes": "1024"}
    s_srv = start(skind, start_server, start_oracle, **scfg)
    s = s_srv.client()
    if history == "same":
        s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        wait_for(lambda: in_sync(p, s), what="first sync")
        tmp = s_srv.tmp
        try:
            s.execute_command("SHUTDOWN", "SAVE")
        except redis.ConnectionError:
            pass
        s_srv.proc.wait()
        p.set("old", "2")
        fill(p, 2000, "more:")  # past the 16 KB backlog: a full sync again
        # 3001 keys: an 18 s save, so that on a loaded machine the load is
        # still under way once the replica has started and been observed
        # (with 9 s, redis-server's own pair once finished it first)
        p.config_set("rdb-key-save-delay", 6000)
        s_srv = start(skind, start_server, start_oracle, dir=tmp,
                      args=["--replicaof", p_srv.host, str(p_srv.port)], **scfg)
        s = s_srv.client()
        wait_for(lambda: s.info("persistence")["async_loading"] == 1, what="async loading")
        assert observe_while(s, "async_loading") == ASYNC_SEEN
    else:
        if history == "other":
            s.set("old", "1")
        s.config_set("key-load-delay", 10000)  # a 10 s load, ended below
        s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        wait_for(lambda: loading_error(s) is not None, what="loading")
        assert observe_while(s, "loading") == SYNC_SEEN
    p.config_set("rdb-key-save-delay", 0)
    s.config_set("key-load-delay", 0)
    wait_for(lambda: in_sync(p, s), timeout=60, what="sync")
    assert digest(s) == digest(p)
    assert s.get("old") == p.get("old")
    log = s_srv.log
    lines = ["MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to parser",
             "MASTER <-> REPLICA sync: Loading DB in memory", "MASTER <-> REPLICA sync: Finished with success"]
    if history == "empty":
        lines.append("MASTER <-> REPLICA sync: Flushing old data")
    else:
        lines += ["MASTER <-> REPLICA sync: Swapping active DB with loaded DB",
                  "MASTER <-> REPLICA sync: Discarding old DB in background"]
    for line in lines:
        assert line in log


def status_kb(pid, field):
    """A /proc/PID/status figure in KB: VmRSS, or VmHWM (the peak)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


@pytest.mark.parametrize("mode", ["on-empty-db", "swapdb"])
def test_large_transfer_holds_only_the_record_in_flight(start_server, mode):
    """20k keys of 4 KB (an ~80 MB RDB) from a primary slowed per key: the
    replica answers -LOADING while the primary still sends, and its peak
    RSS stays well below data + file (it never holds the file)."""
    keys = int(os.environ.get("CAIRN_DISKLESS_KEYS", "20000"))
    p_srv = start_server(**FAST)
    p = p_srv.client()
    p.execute_command("DEBUG", "POPULATE", keys, "key", 4096)
    s_srv = start_server(**{"repl-diskless-load": mode, **DBG})
    s = s_srv.client()
    base = status_kb(s_srv.pid, "VmRSS")
    p.config_set("rdb-key-save-delay", 20)
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    assert wait_for(lambda: loading_error(s), what="loading") == LOADING
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: in_sync(p, s), timeout=120, what="sync")
    assert s.dbsize() == keys
    file_kb = keys * 4096 // 1024
    held = status_kb(s_srv.pid, "VmRSS") - base  # the data
    peak = status_kb(s_srv.pid, "VmHWM") - base
    assert held > file_kb // 2
    assert peak < held + file_kb // 3, (peak, held, file_kb)
    assert digest(s) == digest(p)


class ControlledPrimary:
    """A fake primary for one replica: it answers the handshake and, to
    PSYNC, +FULLRESYNC <replid> 0 and "$EOF:<mark>"; the test then sends
    the RDB in pieces (send) and the mark, or cuts the link (close)."""

    def __init__(self, replid=b"e" * 40):
        self.replid = replid
        self.mark = bytes(random.choice(b"0123456789abcdef") for _ in range(40))
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(8)
        self.port = self.lsock.getsockname()[1]
        self.conn = None
        self.synced = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        self.lsock.settimeout(60)
        try:
            conn, _ = self.lsock.accept()
        except OSError:
            return
        conn.settimeout(60)
        try:
            if not await_psync(conn):
                return
            conn.sendall(b"+FULLRESYNC " + self.replid + b" 0\r\n$EOF:" + self.mark + b"\r\n")
        except OSError:
            return
        self.conn = conn
        self.synced.set()

    def send(self, data, pieces=1):
        assert self.synced.wait(30)
        step = max(1, len(data) // pieces)
        for i in range(0, len(data), step):
            self.conn.sendall(data[i:i + step])

    def finish(self):
        self.send(self.mark)

    def close(self):
        if self.conn:
            self.conn.close()
        self.lsock.close()


def typed_rdb(start_server):
    """An RDB of every type, big and small values, expires, two dbs, and a
    function library."""
    srv = start_server(**DBG)
    r = srv.client()
    rnd = random.Random(7)
    pipe = r.pipeline(transaction=False)
    for i in range(300):
        pipe.set("s:%d" % i, "x" * rnd.choice([1, 10, 100, 5000]))
        pipe.rpush("l:%d" % (i % 20), *["e%d" % j for j in range(rnd.choice([1, 5, 300]))])
        pipe.hset("h:%d" % (i % 20), mapping={"f%d" % j: "v" * rnd.choice([1, 100]) for j in range(5)})
        pipe.sadd("set:%d" % (i % 20), *[rnd.randint(0, 10 ** rnd.choice([2, 12])) for _ in range(5)])
        pipe.zadd("z:%d" % (i % 20), {"m%d" % j: rnd.random() for j in range(rnd.choice([2, 200]))})
        pipe.xadd("x:%d" % (i % 5), {"a": i})
        pipe.set("t:%d" % i, i, ex=10000)
    pipe.execute()
    # Records far larger than a read: retried as their bytes double.
    r.set("big:s", "y" * 3000000)
    r.zadd("big:z", {"m%d" % j: j for j in range(50000)})
    r.execute_command("SELECT", 3)
    fill(r, 50, "db3:")
    r.execute_command("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
    r.save()
    with open(os.path.join(srv.tmp, "dump.rdb"), "rb") as f:
        rdb = f.read()
    return rdb, digest(r)


@pytest.mark.parametrize("mode", ["on-empty-db", "swapdb"])
def test_rdb_split_anywhere(start_server, mode):
    """The RDB arrives in pieces of 1 byte to 64 KB, cut at random points
    inside records (some of them megabytes long): the load is the same as
    from the whole file."""
    rdb, want = typed_rdb(start_server)
    rnd = random.Random(11)
    s_srv = start_server(**{"repl-diskless-load": mode, **DBG})
    s = s_srv.client()
    fp = ControlledPrimary()
    try:
        s.execute_command("REPLICAOF", "127.0.0.1", fp.port)
        pos = 0
        while pos < len(rdb):
            n = rnd.choice([1, 2, 7, 100, 4096, 65536])
            fp.send(rdb[pos:pos + n])
            pos += n
        fp.finish()
        wait_for(lambda: link_up(s), what="link up")
        assert digest(s) == want
        assert s.execute_command("FUNCTION", "LIST")[0][1] == b"lib"
    finally:
        fp.close()


@pytest.mark.parametrize("mode", ["on-empty-db", "swapdb"])
@pytest.mark.parametrize("how", ["cut", "truncated", "corrupt", "bad-mark", "bad-crc"])
def test_broken_stream_leaves_the_replica_as_it_was(start_server, mode, how):
    """The stream cut half-way, ended early (the mark after a truncated
    RDB), corrupt in its middle, with a wrong EOF mark or a wrong checksum:
    the replica logs it, stays up and retries; swapdb keeps the old data
    and libraries, on-empty-db is left empty."""
    rdb, _ = typed_rdb(start_server)
    s_srv = start_server(**{"repl-diskless-load": mode, **DBG})
    s = s_srv.client()
    if mode == "swapdb":
        fill(s, 100, "old:")
        s.execute_command("FUNCTION", "LOAD", "#!lua name=keep\nredis.register_function('g', function() return 1 end)")
    before = (digest(s), s.execute_command("FUNCTION", "LIST"))
    fp = ControlledPrimary()
    half = len(rdb) // 2
    try:
        s.execute_command("REPLICAOF", "127.0.0.1", fp.port)
        if how == "cut":
            fp.send(rdb[:half], pieces=5)
            fp.conn.close()
        elif how == "truncated":
            fp.send(rdb[:half])
            fp.finish()
        elif how == "corrupt":
            bad = bytearray(rdb)
            for i in range(half, half + 64):
                bad[i] = 0xC7
            fp.send(bytes(bad))
            fp.finish()
        elif how == "bad-mark":
            fp.send(rdb)
            fp.send(b"x" * 40)
        else:
            fp.send(rdb[:-1] + bytes([rdb[-1] ^ 1]))
            fp.finish()
        wait_for(lambda: "Failed trying to load the MASTER synchronization DB from socket" in s_srv.log,
                 what="the failed load")
    finally:
        fp.close()
    promote(s)
    assert s_srv.alive()
    after = (digest(s), s.execute_command("FUNCTION", "LIST"))
    if mode == "swapdb":
        assert after == before
        assert "MASTER <-> REPLICA sync: Discarding temporary DB in background" in s_srv.log
    else:
        assert s.dbsize() == 0 and after[1] == []


@pytest.mark.parametrize("sync", ["diskless", "disk"])
def test_link_killed_at_random_points_during_streamed_loads(start_server, sync):
    """A Cairn primary sending "$EOF:" streams or (disk) "$<len>" files,
    its replica on swapdb: the primary cuts the link at random moments of
    slow full syncs; each retry ends equal."""
    rnd = random.Random(int(os.environ.get("CAIRN_REPL_KILL_SEED", "21")))
    rounds = int(os.environ.get("CAIRN_REPL_KILL_ROUNDS", "3"))
    p_srv = start_server(**{"rdb-key-save-delay": "300", "repl-backlog-size": "16kb",
                            "repl-diskless-sync": "yes" if sync == "diskless" else "no", **FAST})
    p = p_srv.client()
    fill(p, 3000)
    s_srv = start_server(**{"repl-diskless-load": "swapdb", **DBG})
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    for _ in range(rounds):
        time.sleep(rnd.uniform(0, 1.0))  # where the cut falls; any point is valid
        p.execute_command("CLIENT", "KILL", "TYPE", "replica")
        fill(p, 300, "r%d:" % rnd.randint(0, 10 ** 6))  # past the backlog: a full sync
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: in_sync(p, s), timeout=60, what="the retried sync")
    assert digest(s) == digest(p)
    assert p_srv.alive() and s_srv.alive()


@pytest.mark.parametrize("mode", ["on-empty-db", "swapdb"])
@pytest.mark.parametrize("sync", ["diskless", "disk"])
def test_redis_primary_to_streamed_replica(start_server, start_oracle, mode, sync):
    """A redis-server primary sending "$EOF:" streams or (disk) "$<len>"
    files of every type, a Cairn replica parsing them from the socket:
    DEBUG DIGEST equal, then the stream that follows applies."""
    p_srv = start_oracle(**{**ORACLE_DBG, "repl-diskless-sync": "yes" if sync == "diskless" else "no"})
    p = p_srv.client()
    rnd = random.Random(5)
    pipe = p.pipeline(transaction=False)
    for i in range(500):
        pipe.set("s:%d" % i, "x" * rnd.choice([1, 100, 20000]))
        pipe.rpush("l:%d" % (i % 10), *range(rnd.choice([1, 200])))
        pipe.hset("h:%d" % (i % 10), "f%d" % i, i)
        pipe.zadd("z:%d" % (i % 10), {"m%d" % i: i / 7})
        pipe.sadd("set:%d" % (i % 10), i, "m%d" % i)
        pipe.xadd("x", {"i": i})
        pipe.set("t:%d" % i, i, px=10 ** 7)
    pipe.execute()
    s_srv = start_server(**{"repl-diskless-load": mode, **DBG})
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    wait_for(lambda: in_sync(p, s), what="sync")
    assert digest(s) == digest(p)
    p.set("after", "1")
    p.incr("counter")
    wait_for(lambda: in_sync(p, s), what="the stream")
    assert digest(s) == digest(p)


@pytest.mark.parametrize("kind", ["redis", "cairn"])
@pytest.mark.parametrize("sync", ["disk", "diskless"])
def test_sync_bytes_of_a_disk_staged_transfer(start_server, start_oracle, kind, sync):
    """A replica that stages the RDB on disk (repl-diskless-load disabled),
    its primary slowed by rdb-key-save-delay: with a disk sync the "$<len>"
    line comes only after the save, and INFO shows total -1, read 0, left -1
    until then; with a diskless sync ("$EOF:" stream) total is 0 and read
    counts the bytes staged, left going negative -- as redis-server 7.0.15."""
    p_srv = start(kind, start_server, start_oracle, **{"repl-diskless-sync": "yes" if sync == "diskless" else "no",
                                                        "repl-diskless-sync-delay": "0"})
    p = p_srv.client()
    p.execute_command("DEBUG", "POPULATE", 600, "key", 1000)
    # 600 keys: a 12 s save (the child keeps the delay it was forked with).
    p.config_set("rdb-key-save-delay", 20000)
    s_srv = start(kind, start_server, start_oracle)
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    fields = ("master_sync_total_bytes", "master_sync_read_bytes", "master_sync_left_bytes", "master_sync_perc")
    if sync == "disk":
        wait_for(lambda: info(s)["master_sync_in_progress"] == 1, what="transfer state")
        assert tuple(info(s)[k] for k in fields) == (-1, 0, -1, 0.0)
    else:
        got = {}

        def staged():
            i = info(s)  # one INFO: the transfer may end between two
            if i["master_sync_in_progress"] == 1 and i.get("master_sync_read_bytes", 0) > 0:
                got.update(i)
            return bool(got)

        wait_for(staged, what="bytes staged")
        assert got["master_sync_total_bytes"] == 0
        assert got["master_sync_left_bytes"] == -got["master_sync_read_bytes"]
        assert got["master_sync_perc"] == 0.0
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: in_sync(p, s), timeout=60, what="sync")
    assert digest(s) == digest(p)
