"""Deferred checks of hash, sorted-set and list listpacks loaded from an RDB
file.

With sanitize-dump-payload no (the default) a file load checks only a hash
or zset listpack's (or a list node's) header (total bytes, terminator,
element count); its
entries, scores, order and duplicates are checked on first access.  These
files are crafted to pass the header check and be corrupt inside: the
server must start, keep every other key, and answer every command on a bad
key safely (a corrupt value's key is deleted with a warning, as a lazily
expired key; a repairable one -- duplicates, order -- is rebuilt, as the
load used to).  With sanitize-dump-payload yes the load is refused, with the
offset and reason logged.  Set CAIRN_BIN=build/cairn-server-san to run them
under ASan/UBSan."""
import os
import shutil
import signal
import subprocess
import time

import pytest
import redis

from conftest import cairn_bin, free_port
from test_dump import payload

# --- crafting -------------------------------------------------------------


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xff])
    return b"\x80" + n.to_bytes(4, "big")


def rdb_str(b):
    if isinstance(b, str):
        b = b.encode()
    return rdb_len(len(b)) + b


def listpack(entries, count=None):
    """A listpack of short string entries; count overrides the header's."""
    body = b""
    for e in entries:
        e = e.encode() if isinstance(e, str) else e
        assert len(e) < 64
        enc = bytes([0x80 | len(e)]) + e
        body += enc + bytes([len(enc)])
    total = 6 + len(body) + 1
    n = len(entries) if count is None else count
    return total.to_bytes(4, "little") + n.to_bytes(2, "little") + body + b"\xff"


def lp_past_end(entries):
    """The last entry's length runs past the terminator; header intact."""
    lp = bytearray(listpack(entries))
    last = entries[-1].encode()
    pos = len(lp) - 1 - 1 - len(last) - 1  # its encoding byte
    assert lp[pos] == 0x80 | len(last)
    lp[pos] = 0x80 | 40
    return bytes(lp)


def intset(values):
    return (2).to_bytes(4, "little") + len(values).to_bytes(4, "little") + b"".join(
        v.to_bytes(2, "little", signed=True) for v in values)


T_STRING, T_LIST, T_SET_INTSET, T_HASH_LP, T_ZSET_LP, T_LIST_QL2 = 0, 1, 11, 16, 17, 18


def quicklist(*nodes):
    """A list of listpack nodes (RDB_TYPE_LIST_QUICKLIST_2, packed)."""
    return rdb_len(len(nodes)) + b"".join(rdb_len(2) + rdb_str(n) for n in nodes)


def rdb_file(items):
    """items: (type byte, key, value bytes already encoded)."""
    out = b"REDIS0010" + b"\xfe\x00" + b"\xfb" + rdb_len(len(items)) + rdb_len(0)
    for t, k, v in items:
        out += bytes([t]) + rdb_str(k) + v
    return out + b"\xff" + b"\x00" * 8  # checksum 0: not checked


GOOD = [
    (T_STRING, "good:str", rdb_str("hello")),
    (T_HASH_LP, "good:hash", rdb_str(listpack(["f1", "v1", "f2", "v2"]))),
    (T_ZSET_LP, "good:zset", rdb_str(listpack(["a", "1", "b", "2.5"]))),
    (T_SET_INTSET, "good:set", rdb_str(intset([1, 2, 3]))),
    (T_LIST, "good:list", rdb_len(2) + rdb_str("x") + rdb_str("y")),
]


def check_good(r):
    assert r.get("good:str") == b"hello"
    assert r.hgetall("good:hash") == {b"f1": b"v1", b"f2": b"v2"}
    assert r.zrange("good:zset", 0, -1, withscores=True) == [(b"a", 1.0), (b"b", 2.5)]
    assert r.smembers("good:set") == {b"1", b"2", b"3"}
    assert r.lrange("good:list", 0, -1) == [b"x", b"y"]


# Corrupt inside, header valid.  "bad": the value cannot be used (the key
# goes); "fix": the load used to rebuild it (duplicates dropped, sorted).
CASES = {
    "hash-past-end": (T_HASH_LP, "bad", lambda: lp_past_end(["f1", "v1", "f2", "v2"])),
    "hash-count-mismatch": (T_HASH_LP, "bad", lambda: listpack(["f1", "v1", "f2"], count=4)),
    "hash-dup-field": (T_HASH_LP, "fix", lambda: listpack(["f", "1", "f", "2", "g", "3"])),
    "zset-past-end": (T_ZSET_LP, "bad", lambda: lp_past_end(["a", "1", "b", "2"])),
    "zset-nan-score": (T_ZSET_LP, "bad", lambda: listpack(["a", "1", "b", "nan"])),
    "zset-text-score": (T_ZSET_LP, "bad", lambda: listpack(["a", "1", "b", "xyz"])),
    "zset-unsorted": (T_ZSET_LP, "fix", lambda: listpack(["a", "3", "b", "1", "c", "2"])),
    "zset-dup-member": (T_ZSET_LP, "fix", lambda: listpack(["a", "1", "a", "2"])),
    "set-unsorted-dup": (T_SET_INTSET, "fix", lambda: intset([3, 1, 1])),
    # Two nodes: the list stays a quicklist (a one-node small list becomes
    # a bare listpack and is checked at load).
    "list-past-end": (T_LIST_QL2, "bad", lambda: quicklist(listpack(["a", "b"]), lp_past_end(["c", "d"]))),
    "list-count-mismatch": (T_LIST_QL2, "bad",
                            lambda: quicklist(listpack(["a", "b", "c"], count=4), listpack(["d"]))),
}

# Every command family on a bad key; {k} is the key.  Each runs on its own
# untouched copy of the key.
HASH_CMDS = [
    ["HGET", "{k}", "f1"], ["HGETALL", "{k}"], ["HLEN", "{k}"], ["HSCAN", "{k}", "0"],
    ["HRANDFIELD", "{k}", "-5", "WITHVALUES"], ["HSET", "{k}", "n", "1"], ["HDEL", "{k}", "f1"],
    ["HEXISTS", "{k}", "f2"], ["HSTRLEN", "{k}", "f1"], ["HINCRBY", "{k}", "f9", "1"],
    ["HKEYS", "{k}"], ["HVALS", "{k}"], ["HMGET", "{k}", "f1", "f2"],
]
ZSET_CMDS = [
    ["ZRANGE", "{k}", "0", "-1", "WITHSCORES"], ["ZSCORE", "{k}", "a"], ["ZRANK", "{k}", "b"],
    ["ZCARD", "{k}"], ["ZSCAN", "{k}", "0"], ["ZADD", "{k}", "5", "q"], ["ZREM", "{k}", "a"],
    ["ZINCRBY", "{k}", "1", "a"], ["ZRANGEBYSCORE", "{k}", "-inf", "+inf"], ["ZPOPMIN", "{k}"],
    ["ZRANDMEMBER", "{k}", "-3"], ["ZUNIONSTORE", "zdst", "2", "{k}", "good:zset"],
    ["BZPOPMAX", "{k}", "0.01"], ["ZCOUNT", "{k}", "-inf", "+inf"], ["ZLEXCOUNT", "{k}", "-", "+"],
]
LIST_CMDS = [
    ["LRANGE", "{k}", "0", "-1"], ["LLEN", "{k}"], ["LINDEX", "{k}", "2"], ["LPUSH", "{k}", "x"],
    ["RPOP", "{k}"], ["LPOS", "{k}", "c"], ["LSET", "{k}", "0", "v"], ["LINSERT", "{k}", "BEFORE", "b", "n"],
    ["LREM", "{k}", "0", "a"], ["LMOVE", "{k}", "ldst", "LEFT", "RIGHT"], ["BLPOP", "{k}", "0.01"],
    ["LTRIM", "{k}", "1", "-1"], ["SORT", "{k}", "ALPHA"], ["LPOP", "{k}", "3"],
]
SET_CMDS = [["SMEMBERS", "{k}"], ["SCARD", "{k}"], ["SISMEMBER", "{k}", "1"], ["SADD", "{k}", "7"]]
GENERIC_CMDS = [
    ["TYPE", "{k}"], ["EXISTS", "{k}"], ["OBJECT", "ENCODING", "{k}"], ["MEMORY", "USAGE", "{k}"],
    ["DUMP", "{k}"], ["COPY", "{k}", "{k}:copy"], ["RENAME", "{k}", "{k}:renamed"], ["EXPIRE", "{k}", "100"],
    ["MOVE", "{k}", "1"], ["DEBUG", "OBJECT", "{k}"], ["DEBUG", "DIGEST-VALUE", "{k}"],
    ["SORT", "good:list", "BY", "{k}->f1", "GET", "{k}->f2", "ALPHA"],
    ["EVAL", "return redis.call('TYPE', KEYS[1])", "1", "{k}"], ["DEL", "{k}"], ["UNLINK", "{k}"],
    ["GET", "{k}"], ["TOUCH", "{k}"], ["OBJECT", "FREQ", "{k}"],
]


def cmds_for(t):
    own = {T_HASH_LP: HASH_CMDS, T_ZSET_LP: ZSET_CMDS, T_SET_INTSET: SET_CMDS, T_LIST_QL2: LIST_CMDS}[t]
    return own + GENERIC_CMDS


def case_items(name):
    t, _, make = CASES[name]
    enc = (lambda v: v) if t == T_LIST_QL2 else rdb_str
    return [(t, "%s:%d" % (name, i), enc(make())) for i in range(len(cmds_for(t)))]


# --- servers ----------------------------------------------------------------


def write_dir(tmp, data):
    d = os.path.join(str(tmp), "d%d" % time.monotonic_ns())
    os.mkdir(d)
    with open(os.path.join(d, "dump.rdb"), "wb") as f:
        f.write(data)
    return d


def refused(tmp, data, *args):
    """Starts the binary on data with args: (exit code or None, log)."""
    d = write_dir(tmp, data)
    log = os.path.join(d, "log")
    p = subprocess.Popen([cairn_bin(), "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", d,
                          "--save", "", "--logfile", log] + list(args),
                         stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def text():
        try:
            with open(log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if p.poll() is not None:
                return p.returncode, text()
            if "Ready to accept connections" in text():
                return None, text()
            time.sleep(0.01)
        raise AssertionError("server neither started nor exited: " + text())
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait()
        shutil.rmtree(d, ignore_errors=True)


DBG = {"enable-debug-command": "yes"}


def run_all(r, t, name):
    """Runs each command on its own copy of the bad key; any reply or error
    reply is fine, the connection must stay usable."""
    r = r.client()  # same pool, replies unparsed
    r.response_callbacks = {}
    replies = []
    for i, cmd in enumerate(cmds_for(t)):
        k = "%s:%d" % (name, i)
        args = [a.replace("{k}", k) for a in cmd]
        try:
            replies.append(r.execute_command(*args))
        except redis.ResponseError as e:
            replies.append(e)
        assert r.ping()
    return replies


@pytest.mark.parametrize("name", sorted(CASES))
def test_deferred_default_starts_and_stays_safe(start_server, tmp_path, name):
    t, kind, _ = CASES[name]
    d = write_dir(tmp_path, rdb_file(GOOD + case_items(name)))
    s = start_server(dir=d, **DBG)
    r = s.client()
    check_good(r)
    n = len(cmds_for(t))
    assert r.dbsize() == len(GOOD) + n  # nothing checked yet, nothing lost
    run_all(r, t, name)
    check_good(r)
    if kind == "bad":  # copy 0 had a read command: gone
        assert r.type("%s:0" % name) == b"none"
    for k in r.keys(name + ":*"):
        # Repaired as the load used to, or written anew after the corrupt
        # value went: consistent either way.
        typ = r.type(k)
        if typ != b"none":
            if typ == b"hash":
                assert r.hlen(k) == len(r.hgetall(k)) == len(r.hkeys(k))
            elif typ == b"zset":
                z = r.zrange(k, 0, -1, withscores=True)
                assert len(z) == r.zcard(k) == len({m for m, _ in z})
                assert [sc for _, sc in z] == sorted(sc for _, sc in z)
            elif typ == b"set":
                assert r.scard(k) == len(r.smembers(k))
            elif typ == b"list":
                assert r.llen(k) == len(r.lrange(k, 0, -1))
    if kind == "bad":
        assert "Corrupt value of key '%s:0'" % name in s.log
    # Whole-keyspace walks after the per-key checks, and a save that loads back.
    r.execute_command("DEBUG", "DIGEST")
    assert r.save()
    r.execute_command("DEBUG", "RELOAD")
    check_good(r)


def test_repairs_match_the_eager_load(start_server, tmp_path):
    """The repairable cases end as the eager load built them."""
    fix = [n for n in sorted(CASES) if CASES[n][1] == "fix"]
    data = rdb_file(GOOD + [it for n in fix for it in case_items(n)])
    views = []
    for defer in ("1", "0"):
        d = write_dir(tmp_path, b"")
        s = start_server(dir=d, **DBG)
        r = s.client()
        r.execute_command("DEBUG", "DEFER-LOAD-CHECKS", defer)
        with open(os.path.join(d, "dump.rdb"), "wb") as f:
            f.write(data)
        r.execute_command("DEBUG", "RELOAD", "NOSAVE")
        check_good(r)
        views.append(r.execute_command("DEBUG", "DIGEST"))
        views.append(sorted((k, r.object("encoding", k)) for k in r.keys("*")))
    assert views[0] == views[2] and views[1] == views[3]


def test_whole_keyspace_walks_first(start_server, tmp_path):
    """DEBUG DIGEST, an AOF rewrite in command form, SAVE and KEYS/SCAN
    before any key was touched."""
    items = GOOD + [it for n in sorted(CASES) for it in case_items(n)[:2]]
    d = write_dir(tmp_path, rdb_file(items))
    s = start_server(dir=d, **DBG)
    r = s.client()
    assert len(r.keys("*")) == len(items)
    cursor, seen = 0, 0
    while True:
        cursor, ks = r.scan(cursor, count=100, _type="hash")
        seen += len(ks)
        if cursor == 0:
            break
    assert seen == sum(1 for t, _, _ in items if t == T_HASH_LP)
    assert r.randomkey() is not None
    assert r.save()  # the blobs as they are
    r.config_set("aof-use-rdb-preamble", "no")
    r.config_set("appendonly", "yes")
    deadline = time.monotonic() + 60
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")["aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    d1 = r.execute_command("DEBUG", "DIGEST")  # drops the corrupt keys
    for n, (t, kind, _) in CASES.items():
        if kind == "bad":
            assert r.exists("%s:0" % n) == 0
    assert r.execute_command("DEBUG", "DIGEST") == d1
    check_good(r)
    r.execute_command("DEBUG", "LOADAOF")
    assert r.execute_command("DEBUG", "DIGEST") == d1
    check_good(r)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sanitize_yes_refuses_the_file(tmp_path, name):
    data = rdb_file(GOOD + case_items(name)[:1])
    rc, log = refused(tmp_path, data, "--sanitize-dump-payload", "yes")
    if name == "zset-unsorted":  # not a check of Redis's either: rebuilt sorted
        assert rc is None, log
        return
    assert rc == 1, log
    assert "Internal error in RDB reading offset" in log, log
    for m in ("AddressSanitizer", "runtime error:", "Segmentation"):
        assert m not in log, log


def test_header_errors_refused_in_both_settings(tmp_path):
    """What the header shows (odd element count, size, terminator) is still
    refused at load with sanitize-dump-payload no."""
    odd = listpack(["f1", "v1", "f2"])
    short = bytearray(listpack(["f1", "v1"]))
    short[0] += 1  # total bytes wrong
    noend = bytearray(listpack(["f1", "v1"]))
    noend[-1] = 0x00
    small_list = quicklist(lp_past_end(["a", "b"]))  # one small node: checked at load
    for item in [(T_HASH_LP, "h", rdb_str(lp)) for lp in (odd, bytes(short), bytes(noend))] + \
            [(T_LIST_QL2, "l", small_list)]:
        for setting in ("no", "yes"):
            rc, log = refused(tmp_path, rdb_file(GOOD + [item]), "--sanitize-dump-payload", setting)
            assert rc == 1, log
            assert "Internal error in RDB reading offset" in log, log


def test_restore_keeps_its_checks(start_server, tmp_path):
    """RESTORE of the same corrupt listpacks still answers Bad data format."""
    s = start_server(**DBG)
    r = s.client()
    for name in sorted(CASES):
        t, kind, make = CASES[name]
        if kind != "bad":
            continue
        body = make() if t == T_LIST_QL2 else rdb_str(make())
        with pytest.raises(redis.ResponseError, match="Bad data format"):
            r.restore("rk", 0, payload(bytes([t]) + body))
    assert r.ping()


def test_full_sync_defers_and_replica_stays_safe(start_server, tmp_path):
    """A primary saves values it has not checked as they are; its replica's
    full-sync load defers them too and drops a corrupt one on its own first
    access, without propagating; the primary's own access drops it there
    and its DEL reaches the replica."""
    items = GOOD + [it for n in ("hash-past-end", "zset-text-score", "list-past-end")
                    for it in case_items(n)[:1]]
    d = write_dir(tmp_path, rdb_file(items))
    p = start_server(dir=d, **DBG)
    rp = p.client()
    s = start_server(**DBG)
    rs = s.client()
    rs.replicaof("127.0.0.1", p.port)
    deadline = time.monotonic() + 60
    while rs.info("replication").get("master_link_status") != "up" or rs.dbsize() != len(items):
        assert time.monotonic() < deadline, rs.info("replication")
        time.sleep(0.05)
    check_good(rs)
    assert rs.type("hash-past-end:0") == b"none"  # dropped on the replica only
    assert rp.keys("hash-past-end:*") == [b"hash-past-end:0"]  # KEYS: names only
    assert "Corrupt value of key 'hash-past-end:0'" in s.log
    assert rp.type("zset-text-score:0") == b"none"  # the primary drops it: DEL
    while rs.exists("zset-text-score:0"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert rs.execute_command("DEBUG", "DIGEST") is not None
    check_good(rp)
    check_good(rs)
