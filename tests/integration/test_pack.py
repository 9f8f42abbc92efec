"""Packed idle collections (`cairn-pack-idle-seconds`, Cairn's own
directive; docs/architecture.md "Packed idle collections"): small hashes,
sorted sets and integer sets idle that long are kept in a denser form in
their key entry and rebuilt on first access.  Packing changes no value, so
everything observable must be what redis-server 7.0.15 answers for the same
commands: replies, OBJECT ENCODING, DUMP payloads (byte for byte), DEBUG
DIGEST, an RDB (loaded back and by Redis), an AOF rewrite replayed into
Redis, a replica; and a packing pass must not fire keyspace events, abort a
WATCH, or change OBJECT IDLETIME.

Packing is seen through INFO memory's counters (cairn_packs,
cairn_unpacks, cairn_packed_keys, cairn_pack_passes): reading a key that
was packed counts one unpack, so a test can tell which keys were packed
without disturbing the others (INFO, DEBUG DIGEST and SAVE read packed
values through a rebuilt copy and unpack nothing)."""
import glob
import random
import os
import shutil
import subprocess
import time

import redis

import waithelp
from test_rdb import start_with_file

PACK = {"cairn-pack-idle-seconds": 1, "enable-debug-command": "yes"}
DBG = {"enable-debug-command": "yes"}
BIG = 9223372036854775807
SMALL = -9223372036854775808


def stats(r):
    i = r.info("memory")
    return {k: int(i[k]) for k in ("cairn_packs", "cairn_unpacks", "cairn_packed_keys", "cairn_pack_passes")}


def wait_packed(r, at_least):
    """Waits for a whole pass that found at least `at_least` packed keys."""
    assert waithelp.poll(lambda: stats(r)["cairn_packed_keys"] >= at_least, timeout=30.0), stats(r)
    return stats(r)


def wait_settled(r):
    """Waits for two whole passes in a row that packed nothing, so that
    every key idle long enough is packed: a pass counts the keys it finds
    packed, and the one that reaches wait_packed's count may have found a
    key just short of idle (written a second later), which only the next
    pass packs."""
    for _ in range(6):
        s0 = stats(r)
        assert waithelp.poll(lambda: stats(r)["cairn_pack_passes"] >= s0["cairn_pack_passes"] + 2, timeout=30.0)
        if stats(r)["cairn_packs"] == s0["cairn_packs"]:
            return
    raise AssertionError("packing did not settle: %r" % stats(r))


def wait_passes(r, more=2):
    """Waits until `more` further whole passes have run."""
    p = stats(r)["cairn_pack_passes"]
    assert waithelp.poll(lambda: stats(r)["cairn_pack_passes"] >= p + more, timeout=30.0)


def shapes():
    """Commands building collections of many shapes, and the keys the
    packer must pack (a smaller allocation results)."""
    cmds, packable = [], []
    fields = []
    for f in range(10):
        fields += ["field:%d" % f, "value:%d" % (54321 + f)]
    cmds.append(["HSET", "h:bench"] + fields)
    cmds.append(["HSET", "h:ints", "a", 1, "b", -1, "c", BIG, "d", SMALL, "e", 0, "f", 4096, "g", 123456789])
    cmds.append(["HSET", "h:bin", "", "", b"\x00\xff", b"bin\x00val", "k", "3.14", "m", "-0", "n", "007"])
    prefix = "a-very-long-shared-prefix-" * 2
    cmds.append(["HSET", "h:prefix"] + sum([[prefix + str(i), prefix + "v" + str(i)] for i in range(20)], []))
    cmds.append(["HSET", "h:one", "only", "value"])
    cmds.append(["HSET", "h:limit"] + sum([["f%03d" % i, "x" * 64] for i in range(128)], []))
    cmds.append(["HSET", "h:ttl"] + fields)
    cmds.append(["PEXPIRE", "h:ttl", 10 ** 9])
    packable += ["h:bench", "h:ints", "h:prefix", "h:limit", "h:ttl"]
    cmds.append(["ZADD", "z:bench"] + sum([[54321 + m, "member:%d" % m] for m in range(10)], []))
    cmds.append(["ZADD", "z:float", 1.5, "a", "-inf", "b", "inf", "c", 1e300, "d", -2.25, "e", 0, "f",
                 3.0000001, "g"])
    cmds.append(["ZADD", "z:bin", 1, "", 2, b"\x00\x01", 3, "12", 4, "-7"])
    cmds.append(["ZADD", "z:one", 42, "x"])
    cmds.append(["ZADD", "z:limit"] + sum([[i * 3, "member-%03d" % i] for i in range(128)], []))
    packable += ["z:bench", "z:float", "z:limit"]
    cmds.append(["SADD", "s:bench"] + [543210 + m for m in range(10)])
    cmds.append(["SADD", "s:neg", -5, -70000, 3, 100000, -1])
    cmds.append(["SADD", "s:int64", 1, 2, 3, BIG, SMALL])
    cmds.append(["SADD", "s:upgraded", 1, 2, 3, 5000000000])
    cmds.append(["SREM", "s:upgraded", 5000000000])
    cmds.append(["SADD", "s:one", 7])
    cmds.append(["SADD", "s:limit"] + list(range(0, 1024, 2)))
    cmds.append(["SADD", "s:strings", "abc", "abd", "x"])
    packable += ["s:bench", "s:neg", "s:upgraded", "s:limit"]
    cmds.append(["SET", "str", "value"])
    cmds.append(["RPUSH", "list", "a", "b", 1, 2])
    cmds.append(["HSET", "h:big"] + sum([["f%d" % i, "v"] for i in range(200)], []))
    return cmds, packable


def fill(*clients):
    cmds, packable = shapes()
    for r in clients:
        for db in (0, 3):
            r.execute_command("SELECT", db)
            for c in cmds:
                r.execute_command(*c)
        r.execute_command("SELECT", 0)
    return packable


def raw(c):
    """c without redis-py's reply parsing: replies compared as sent."""
    c.response_callbacks = {}
    return c


def keys_of(r):
    return sorted(r.keys("*"))


def read_all(r, key):
    """Every read of key, as a list of replies (errors as text)."""
    out = []
    t = r.execute_command("TYPE", key)
    enc = r.execute_command("OBJECT", "ENCODING", key)
    if enc not in (b"listpack", b"intset"):  # not packable; hash-table orders differ from Redis's anyway
        return [t, enc]
    ttl = r.execute_command("PTTL", key)
    out.append(ttl if ttl < 0 else "set")  # the two servers set it at different moments
    reads = [["TYPE", key], ["OBJECT", "ENCODING", key], ["DUMP", key], ["EXISTS", key]]
    if t == b"hash":
        reads += [["HGETALL", key], ["HLEN", key], ["HKEYS", key], ["HVALS", key], ["HGET", key, "field:3"],
                  ["HMGET", key, "a", "c", "", "only"], ["HEXISTS", key, "d"], ["HSTRLEN", key, "c"],
                  ["HSCAN", key, 0, "COUNT", 1000]]
    elif t == b"zset":
        reads += [["ZRANGE", key, 0, -1, "WITHSCORES"], ["ZCARD", key], ["ZSCORE", key, "a"],
                  ["ZRANK", key, "member:3"], ["ZREVRANGE", key, 0, 2, "WITHSCORES"],
                  ["ZRANGEBYSCORE", key, "-inf", "+inf", "LIMIT", 1, 3], ["ZCOUNT", key, 0, 100],
                  ["ZMSCORE", key, "b", "member:1", "zz"], ["ZLEXCOUNT", key, "-", "+"]]
    elif t == b"set":
        reads += [["SCARD", key], ["SISMEMBER", key, 3], ["SMISMEMBER", key, 2, 7, BIG],
                  ["SINTERCARD", 1, key]]
    for c in reads:
        try:
            out.append(r.execute_command(*c))
        except redis.ResponseError as e:
            out.append("ERR " + str(e))
    if t == b"set":
        out.append(sorted(r.execute_command("SMEMBERS", key)))
    return out


def test_packing_is_invisible(start_server, start_oracle):
    s, so = start_server(**PACK), start_oracle(**DBG)
    r, o = s.client(), so.client()
    packable = fill(r, o)
    rr, orr = raw(s.client()), raw(so.client())
    wait_packed(r, 2 * len(packable))
    wait_settled(r)
    assert stats(r)["cairn_unpacks"] == 0
    # DEBUG DIGEST reads the packed values through copies: equal, nothing unpacked.
    assert r.execute_command("DEBUG", "DIGEST") == o.execute_command("DEBUG", "DIGEST")
    assert stats(r)["cairn_unpacks"] == 0
    for db in (0, 3):
        rr.execute_command("SELECT", db)
        orr.execute_command("SELECT", db)
        assert keys_of(rr) == keys_of(orr)
        for k in keys_of(orr):
            before = stats(r)["cairn_unpacks"]
            assert read_all(rr, k) == read_all(orr, k), k
            if k.decode() in packable:
                assert stats(r)["cairn_unpacks"] == before + 1, k  # it was packed
            assert rr.execute_command("DEBUG", "DIGEST-VALUE", k) == orr.execute_command("DEBUG", "DIGEST-VALUE", k)
    rr.execute_command("SELECT", 0)
    orr.execute_command("SELECT", 0)
    # Packed again; then writes of every kind answer as Redis's do.
    wait_passes(r, 2)
    writes = [["HSET", "h:bench", "field:3", "new", "field:99", "x"], ["HDEL", "h:ints", "c", "zz"],
              ["HINCRBY", "h:ints", "a", 5], ["HSETNX", "h:prefix", "n", "v"], ["HINCRBYFLOAT", "h:bin", "k", 1],
              ["ZADD", "z:bench", 1, "member:0", 7, "new"], ["ZINCRBY", "z:float", 2, "a"], ["ZREM", "z:limit", "member-005"],
              ["ZPOPMIN", "z:float"], ["SADD", "s:bench", 1, 543211], ["SREM", "s:neg", 3], ["SPOP", "s:one"],
              ["SMOVE", "s:limit", "s:neg", 4], ["SINTERSTORE", "dst", "s:limit", "s:neg"],
              ["ZUNIONSTORE", "zdst", 2, "z:bench", "z:limit"], ["COPY", "h:bench", "h:copy"],
              ["RENAME", "z:one", "z:renamed"], ["EXPIRE", "s:neg", 1000], ["PERSIST", "h:ttl"],
              ["HRANDFIELD", "h:one"], ["DEL", "h:limit"]]
    for c in writes:
        assert rr.execute_command(*c) == orr.execute_command(*c), c
    assert r.execute_command("DEBUG", "DIGEST") == o.execute_command("DEBUG", "DIGEST")
    for k in keys_of(orr):
        assert read_all(rr, k) == read_all(orr, k), k


def test_memory_usage_and_idletime(start_server):
    r = start_server(**PACK).client()
    fill(r)
    usage = r.memory_usage("h:bench")
    time.sleep(2.2)  # idle > 2 s before the pass packs it (no timing asserted beyond a lower bound)
    wait_packed(r, 10)
    u0 = stats(r)["cairn_unpacks"]
    idle = r.object("idletime", "z:bench")  # rebuilt by this lookup, access bits kept
    assert stats(r)["cairn_unpacks"] == u0 + 1
    assert idle >= 2
    after = r.memory_usage("h:bench")
    assert 0 < after <= usage
    assert r.object("encoding", "h:bench") == b"listpack"
    assert r.object("encoding", "s:bench") == b"intset"


def test_directive_takes_effect(start_server):
    assert start_server().client().config_get("cairn-pack-idle-seconds") == {"cairn-pack-idle-seconds": "5"}
    s = start_server(**DBG, **{"cairn-pack-idle-seconds": 0})
    r = s.client()
    assert r.config_get("cairn-pack-idle-seconds") == {"cairn-pack-idle-seconds": "0"}
    assert r.config_get("*").get("cairn-pack-idle-seconds") is None  # Redis's names only
    fill(r)
    time.sleep(2.5)  # a second of idleness would do with 1
    assert stats(r)["cairn_packs"] == 0 and stats(r)["cairn_pack_passes"] == 0
    r.config_set("cairn-pack-idle-seconds", 1)
    wait_packed(r, 10)
    r.config_set("cairn-pack-idle-seconds", 0)
    packs = stats(r)["cairn_packs"]
    r.hgetall("h:bench")  # unpacked; never packed again with 0
    time.sleep(2.5)
    assert stats(r)["cairn_packs"] == packs
    for bad in ("-1", "x"):
        try:
            r.config_set("cairn-pack-idle-seconds", bad)
            raise AssertionError("accepted " + bad)
        except redis.ResponseError:
            pass


def test_rdb_both_ways(start_server, start_oracle):
    s = start_server(**PACK)
    r, o = s.client(), start_oracle(**DBG).client()
    fill(r, o)
    for c in (r, o):  # enough keys for the save threads (a small database is written on one)
        p = c.pipeline(transaction=False)
        for i in range(400):
            p.hset("more:h:%d" % i, mapping={"field:%d" % f: "value:%d" % (i * 7 + f) for f in range(8)})
            p.sadd("more:s:%d" % i, *range(i, i + 12))
        p.execute()
    wait_packed(r, 820)
    want = o.execute_command("DEBUG", "DIGEST")
    assert r.execute_command("DEBUG", "DIGEST") == want
    assert r.save()
    assert stats(r)["cairn_unpacks"] == 0  # saved from copies
    path = os.path.join(s.tmp, "dump.rdb")
    s2, _ = start_with_file(start_server, path, **DBG)
    assert s2.client().execute_command("DEBUG", "DIGEST") == want
    o2, _ = start_with_file(start_oracle, path, **DBG)
    assert o2.client().execute_command("DEBUG", "DIGEST") == want
    # BGSAVE (a forked child writes the packed values from copies too).
    r.bgsave()
    assert waithelp.poll(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=30.0)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
    s3, _ = start_with_file(start_server, path, **DBG)
    assert s3.client().execute_command("DEBUG", "DIGEST") == want
    # The save threads and the inline snapshot serialize from copies as well.
    for cfg in ({"rdb-save-threads": 2}, {"cairn-snapshot": "inline"}):
        for k, v in cfg.items():
            r.config_set(k, v)
        wait_passes(r, 2)
        os.unlink(path)
        r.bgsave()
        assert waithelp.poll(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=30.0)
        assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
        assert stats(r)["cairn_unpacks"] == 0
        s4, _ = start_with_file(start_server, path, **DBG)
        assert s4.client().execute_command("DEBUG", "DIGEST") == want, cfg


def test_aof_rewrite_replayed_by_redis(start_server, start_oracle):
    s = start_server(**PACK, appendonly="yes", **{"aof-use-rdb-preamble": "no"})
    r, o = s.client(), start_oracle(**DBG).client()
    fill(r, o)
    wait_packed(r, 20)
    want = o.execute_command("DEBUG", "DIGEST")
    r.bgrewriteaof()
    assert waithelp.poll(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                         and r.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=30.0)
    assert stats(r)["cairn_unpacks"] == 0
    base = glob.glob(os.path.join(s.tmp, "appendonlydir", "*.base.aof"))
    assert len(base) == 1
    o2 = start_oracle(**DBG)
    cli = shutil.which("redis-cli")
    assert cli, "redis-cli is installed with redis-server (scripts/deps.sh)"
    with open(base[0], "rb") as f:
        p = subprocess.run([cli, "-p", str(o2.port), "--pipe"], stdin=f, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert o2.client().execute_command("DEBUG", "DIGEST") == want


def test_replica_of_packed_primary(start_server):
    s = start_server(**PACK)
    r = s.client()
    fill(r)
    wait_packed(r, 20)
    want = r.execute_command("DEBUG", "DIGEST")
    rep = start_server(**DBG)
    rr = rep.client()
    rr.replicaof("127.0.0.1", s.port)
    assert waithelp.poll(lambda: rr.info("replication").get("master_link_status") == "up"
                         and rr.dbsize() == r.dbsize(), timeout=30.0)
    assert waithelp.poll(lambda: rr.execute_command("DEBUG", "DIGEST") == want, timeout=10.0)
    assert stats(r)["cairn_unpacks"] == 0
    # Packing on the primary sends nothing: the offset moves only by PINGs
    # then; a write on a packed key reaches the replica as itself.
    r.hset("h:bench", "field:0", "changed")
    want = r.execute_command("DEBUG", "DIGEST")
    assert waithelp.poll(lambda: rr.execute_command("DEBUG", "DIGEST") == want, timeout=10.0)


def test_watch_and_events_untouched(start_server):
    s = start_server(**PACK, **{"notify-keyspace-events": "KEA"})
    r = s.client()
    fill(r)
    wait_packed(r, 20)
    ps = s.client().pubsub()
    ps.psubscribe("__key*__:*")
    assert waithelp.poll(lambda: ps.get_message(timeout=0.1) is not None, timeout=5.0)  # the subscribe reply
    w = s.client()
    w.execute_command("WATCH", "h:bench", "z:bench")  # unpacks both (dbFind)
    packs = stats(r)["cairn_packs"]
    assert waithelp.poll(lambda: stats(r)["cairn_packs"] >= packs + 2, timeout=30.0)  # packed again
    r.smembers("s:bench")  # an unpack by a read
    w.execute_command("MULTI")
    w.execute_command("PING")
    assert w.execute_command("EXEC") == [b"PONG"]  # not aborted
    got = []
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        m = ps.get_message(timeout=0.1)
        if m:
            got.append(m)
    assert got == []  # neither packing nor unpacking notifies


def random_command(rnd, key):
    kind = key.split(":")[0]
    f = "f%d" % rnd.randrange(12)
    m = rnd.choice([rnd.randrange(-50, 50), rnd.randrange(1 << 40), "m%d" % rnd.randrange(12)])
    n = rnd.randrange(-3, 15)
    if kind == "h":
        return rnd.choice([["HSET", key, f, rnd.choice([n, "v%d" % n, "", "x" * n if n > 0 else "y"])],
                           ["HGET", key, f], ["HDEL", key, f], ["HLEN", key], ["HGETALL", key],
                           ["HINCRBY", key, "cnt", n], ["HEXISTS", key, f], ["HMGET", key, f, "f1"],
                           ["HSETNX", key, f, "nx"], ["HKEYS", key], ["HSTRLEN", key, f]])
    if kind == "z":
        return rnd.choice([["ZADD", key, rnd.choice([n, n / 4, "inf"]), str(m)], ["ZREM", key, str(m)],
                           ["ZSCORE", key, str(m)], ["ZRANGE", key, 0, -1, "WITHSCORES"], ["ZCARD", key],
                           ["ZINCRBY", key, n, str(m)], ["ZRANK", key, str(m)], ["ZPOPMAX", key],
                           ["ZRANGEBYSCORE", key, n, "+inf"], ["ZCOUNT", key, "-inf", n]])
    return rnd.choice([["SADD", key, m], ["SREM", key, m], ["SISMEMBER", key, m], ["SCARD", key],
                       ["SADD", key, n, n + 1, n + 2], ["SMISMEMBER", key, n, m], ["SINTERCARD", 1, key]])


def test_random_commands_on_packed_keys(start_server, start_oracle):
    """Random reads and writes on keys that are packed between rounds: every
    reply as Redis's, then the digests."""
    s, so = start_server(**PACK), start_oracle(**DBG)
    r, rr, orr = s.client(), raw(s.client()), raw(so.client())
    rnd = random.Random(4242)
    keys = ["%s:%d" % (k, i) for k in ("h", "z", "s") for i in range(20)]
    for k in keys:  # a start: one element each
        c = {"h": ["HSET", k, "f0", "v"], "z": ["ZADD", k, 1, "m1"], "s": ["SADD", k, 1]}[k[0]]
        assert rr.execute_command(*c) == orr.execute_command(*c)
    for rnd_no in range(4):
        packs = stats(r)["cairn_packs"]
        assert waithelp.poll(lambda: stats(r)["cairn_packs"] >= packs + 10, timeout=30.0)
        for _ in range(300):
            c = random_command(rnd, rnd.choice(keys))
            try:
                want = orr.execute_command(*c)
            except redis.ResponseError as e:
                want = "ERR %s" % e
            try:
                got = rr.execute_command(*c)
            except redis.ResponseError as e:
                got = "ERR %s" % e
            assert got == want, (rnd_no, c)
        assert r.execute_command("DEBUG", "DIGEST") == orr.execute_command("DEBUG", "DIGEST")


def test_packed_keys_deleted_moved_expired_evicted(start_server, start_oracle):
    """Packed keys leave or move by every path -- DEL, UNLINK, expiry,
    SWAPDB, MOVE, RENAME, DEBUG RELOAD, FLUSHALL ASYNC, eviction -- as
    Redis's keys do (digest after each step)."""
    s, so = start_server(**PACK), start_oracle(**DBG)
    r, o = s.client(), so.client()
    packable = fill(r, o)
    for c in (r, o):
        c.pexpire("h:bench", 2500)
        c.pexpire("z:bench", 2500)
    wait_packed(r, len(packable))
    u0 = stats(r)["cairn_unpacks"]
    # Expiry removes them (active cycle), packed or not.
    assert waithelp.poll(lambda: r.exists("h:bench", "z:bench") == 0 and o.exists("h:bench", "z:bench") == 0,
                         timeout=20.0)
    steps = [["DEL", "h:ints"], ["UNLINK", "s:neg"], ["SWAPDB", 0, 3], ["MOVE", "h:prefix", 5],
             ["RENAME", "s:limit", "s:renamed"], ["SELECT", 3], ["UNLINK", "z:limit"], ["SELECT", 0]]
    for c in steps:
        wait_passes(r, 1)
        assert r.execute_command(*c) == o.execute_command(*c), c
        assert r.execute_command("DEBUG", "DIGEST") == o.execute_command("DEBUG", "DIGEST"), c
    assert stats(r)["cairn_unpacks"] > u0
    wait_passes(r, 2)
    want = o.execute_command("DEBUG", "DIGEST")
    r.execute_command("DEBUG", "RELOAD")
    assert r.execute_command("DEBUG", "DIGEST") == want
    wait_packed(r, 5)
    assert r.execute_command("FLUSHALL", "ASYNC")
    assert r.dbsize() == 0
    # Eviction picks packed keys too.
    p = r.pipeline(transaction=False)
    for i in range(3000):
        p.hset("ev:%d" % i, mapping={"field:%d" % f: "value:%d" % (i + f) for f in range(10)})
    p.execute()
    wait_packed(r, 2000)
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory-policy", "allkeys-lru")
    r.config_set("maxmemory", used - 100000)
    for i in range(200):
        r.set("big:%d" % i, "x" * 1000)
    assert r.info("stats")["evicted_keys"] > 0
    r.config_set("maxmemory", 0)
    assert r.ping()


def test_cluster_mode_slot_tables(start_server, start_oracle):
    """With cluster-enabled (a key table per hash slot, walked by dbScan):
    packed keys read and save as Redis's."""
    from test_cluster import CLUSTER, wait_ok
    s, so = start_server(**CLUSTER, **PACK), start_oracle(**CLUSTER, **DBG)
    for srv in (s, so):
        srv.client().execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(s)
    wait_ok(so)
    r, o, rr, orr = s.client(), so.client(), raw(s.client()), raw(so.client())
    cmds, packable = shapes()
    for c in cmds:
        assert rr.execute_command(*c) == orr.execute_command(*c)
    wait_packed(r, len(packable))
    wait_settled(r)
    assert r.execute_command("DEBUG", "DIGEST") == o.execute_command("DEBUG", "DIGEST")
    for k in packable:
        assert read_all(rr, k) == read_all(orr, k), k
    assert stats(r)["cairn_unpacks"] >= len(packable)
