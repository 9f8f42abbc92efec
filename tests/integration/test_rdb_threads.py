"""Snapshots serialized by several threads (rdb-save-threads, Cairn's own
directive): the file is byte for byte the single-threaded one, for a
dataset of every type and encoding, from every writer (SAVE, the BGSAVE
child, DEBUG RELOAD, the AOF rewrite's preamble), under LFU metadata and
with rdbcompression off; it loads in redis-server with the same digest;
and a failed write still fails the save cleanly."""
import os
import random

import pytest
import redis

from rdbhelp import populate
from test_rdb import raw_client, start_with_file, wait_for, wait_bgsave_done
from test_rdb_faults import shim, started_with_shim, status, no_temp_files  # noqa: F401 (fixture)

THREADS = (1, 2, 3, 7)  # 1: the single-threaded writer


def skip_string(b, i):
    """Offset after the RDB string at b[i]."""
    t = b[i] >> 6
    if t == 0:
        return i + 1 + (b[i] & 0x3F)
    if t == 1:
        return i + 2 + (((b[i] & 0x3F) << 8) | b[i + 1])
    if t == 2:
        n = 4 if b[i] == 0x80 else 8
        return i + 1 + n + int.from_bytes(b[i + 1:i + 1 + n], "big")
    enc = b[i] & 0x3F
    if enc in (0, 1, 2):
        return i + 1 + (1 << enc)
    assert enc == 3, "unexpected string encoding"
    j = i + 1
    lens = []
    for _ in range(2):
        t = b[j] >> 6
        if t == 0:
            lens.append(b[j] & 0x3F)
            j += 1
        elif t == 1:
            lens.append(((b[j] & 0x3F) << 8) | b[j + 1])
            j += 2
        else:
            n = 4 if b[j] == 0x80 else 8
            lens.append(int.from_bytes(b[j + 1:j + 1 + n], "big"))
            j += 1 + n
    return j + lens[0]


def body(data):
    """The snapshot after its AUX fields (which hold the time and memory
    used) and before its CRC."""
    assert data[:9] == b"REDIS0010"
    i = 9
    while data[i] == 0xFA:
        i = skip_string(data, skip_string(data, i + 1))
    return data[i:-8]


def fill(r, seed=7):
    """Every type and encoding, in two databases, each with enough keys
    that the threads share it; streams with compressed nodes and groups,
    compressed list nodes, big values."""
    populate(r, seed=seed)
    rnd = random.Random(seed)
    r.config_set("list-compress-depth", 1)
    for db in (0, 3):
        r.execute_command("SELECT", db)
        p = "t%d:" % db
        pipe = r.pipeline(transaction=False)
        for i in range(1500):
            k = p + str(i)
            kind = i % 9
            if kind == 0:
                pipe.set(k, "v%d" % i)
            elif kind == 1:
                pipe.set(k, ("compress me %d " % i) * rnd.randint(2, 40))
            elif kind == 2:
                pipe.set(k, bytes(rnd.getrandbits(8) for _ in range(rnd.randint(21, 200))))
            elif kind == 3:
                pipe.hset(k, mapping={"f%d" % j: "value %d" % (j * i) for j in range(rnd.randint(1, 12))})
            elif kind == 4:
                pipe.zadd(k, {"member:%d:%s" % (j, "x" * (j % 30)): j * 0.5 for j in range(rnd.randint(1, 40))})
            elif kind == 5:
                pipe.rpush(k, *["item:%d" % j for j in range(rnd.randint(1, 300))])
            elif kind == 6:
                pipe.sadd(k, *[rnd.randint(-1000, 1000) for _ in range(rnd.randint(1, 20))])
            elif kind == 7:
                pipe.sadd(k, *["s%d" % rnd.randint(0, 10 ** 6) for _ in range(rnd.randint(1, 20))])
            else:
                pipe.set(k, i)
            if i % 7 == 0:
                pipe.pexpireat(k, 4102444800000 + i)
        pipe.execute()
        # compressed list nodes (list-compress-depth 1), a big plain value
        r.rpush(p + "clist", *[("node data %d " % j) * 3 for j in range(4000)])
        r.set(p + "big", ("big value " * 50000) + "end")
        # incompressible values past a thread's hand-over size (1 MB): a
        # string, and a set whose members hand over in mid-value
        r.set(p + "rndbig", rnd.randbytes(1500000))
        r.sadd(p + "rndset", *[rnd.randbytes(400) for _ in range(4000)])
        # streams: many nodes (closed ones are kept compressed), groups,
        # consumers and pending entries
        for j in range(1200):
            r.xadd(p + "stream", {"field": "value %d" % j, "n": j})
        r.xgroup_create(p + "stream", "g1", id="0")
        r.xreadgroup("g1", "alice", {p + "stream": ">"}, count=30)
        r.xreadgroup("g1", "bob", {p + "stream": ">"}, count=5)
        r.xadd(p + "small-stream", {"a": "b"})
    r.execute_command("SELECT", 0)


def dump(s):
    with open(os.path.join(s.tmp, "dump.rdb"), "rb") as f:
        return f.read()


def saves_by_threads(r, s, how="save"):
    """{threads: file} of one save each.  DEBUG RELOAD reloads what it
    saved (another key order), so each is paired with a SAVE by one thread
    just before: {threads: (one thread's file, this one's)}."""
    out = {}
    for n in THREADS:
        if how == "reload":
            r.config_set("rdb-save-threads", 1)
            assert r.save()
            before = dump(s)
        r.config_set("rdb-save-threads", n)
        if how == "save":
            assert r.save()
        elif how == "bgsave":
            assert r.execute_command("BGSAVE") == b"Background saving started"
            wait_bgsave_done(r)
            assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
        else:
            assert r.execute_command("DEBUG", "RELOAD") == b"OK"
        out[n] = (before, dump(s)) if how == "reload" else dump(s)
    return out


# No active rehashing: the key order stays put between the saves compared.
STABLE = {"enable-debug-command": "yes", "activerehashing": "no"}


@pytest.mark.parametrize("how", ["save", "bgsave", "reload"])
def test_threaded_file_equals_single_threaded(start_server, how):
    s = start_server(**STABLE)
    r = raw_client(s)
    fill(r)
    files = saves_by_threads(r, s, how)
    if how == "reload":
        for n, (one, this) in files.items():
            assert len(one) > 4000000
            assert body(this) == body(one), n
    else:
        one = body(files[1])
        assert len(one) > 4000000
        for n, data in files.items():
            assert body(data) == one, n
        # The last file (7 threads) passes the loader's CRC check.
        want = r.execute_command("DEBUG", "DIGEST")
        assert r.execute_command("DEBUG", "RELOAD", "NOSAVE") == b"OK"
        assert r.execute_command("DEBUG", "DIGEST") == want
    assert r.config_get("rdb-save-threads") == {"rdb-save-threads": "7"}


def test_threaded_file_equals_under_lfu_and_without_compression(start_server):
    s = start_server(**{"maxmemory-policy": "allkeys-lfu", "lfu-decay-time": 0}, **STABLE)
    r = raw_client(s)
    fill(r, seed=11)
    for i in range(300):
        for _ in range(i % 7):
            r.touch("t0:%d" % i)
    files = saves_by_threads(r, s)
    assert len({body(d) for d in files.values()}) == 1
    r.config_set("rdbcompression", "no")
    files = saves_by_threads(r, s)
    assert len({body(d) for d in files.values()}) == 1


def test_threaded_file_loads_in_redis_with_same_digest(start_server, start_oracle):
    s = start_server(**{"rdb-save-threads": 3}, **STABLE)
    r = raw_client(s)
    fill(r, seed=3)
    assert r.save()
    o, _ = start_with_file(start_oracle, os.path.join(s.tmp, "dump.rdb"), **{"enable-debug-command": "yes"})
    assert o.client().execute_command("DEBUG", "DIGEST") == r.execute_command("DEBUG", "DIGEST")


def test_aof_rewrite_preamble_threaded(start_server):
    s = start_server(**{"appendonly": "yes", "aof-use-rdb-preamble": "yes", "rdb-save-threads": 4,
                        "enable-debug-command": "yes"})
    r = raw_client(s)
    fill(r, seed=5)
    want = r.execute_command("DEBUG", "DIGEST")
    assert r.execute_command("BGREWRITEAOF")
    assert wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                    and r.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=60)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.execute_command("DEBUG", "DIGEST") == want


@pytest.mark.parametrize("value", ["-1", "17", "two"])
def test_bad_thread_counts_refused(server, value):
    r = server.client()
    with pytest.raises(redis.ResponseError):
        r.config_set("rdb-save-threads", value)
    assert r.config_get("rdb-save-threads") == {"rdb-save-threads": "0"}
    assert r.config_get("*").get("rdb-save-threads") is None  # Redis's names only


def test_write_error_fails_threaded_save(start_server, monkeypatch, shim, tmp_path):  # noqa: F811
    s, r, flag, good = started_with_shim(start_server, monkeypatch, shim, tmp_path, CAIRN_FAULT_WRITE="ENOSPC")
    r.config_set("rdb-save-threads", 3)
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set("k%d" % i, ("value %d " % i) * 20)
    pipe.execute()
    open(flag, "w").close()
    with pytest.raises(redis.ResponseError):
        r.save()
    r.execute_command("BGSAVE")
    wait_bgsave_done(r)
    assert status(r) == "err"
    assert dump(s) == good
    assert no_temp_files(s.tmp)
    os.unlink(flag)
    assert r.save()
    assert r.dbsize() == 20002

