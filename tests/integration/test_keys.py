"""Generic key commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY,
RENAME(NX), MOVE, COPY, TOUCH, SELECT, SWAPDB, FLUSHDB, FLUSHALL, DBSIZE,
OBJECT.

Most tests are differential: the same commands go to cairn (`server`) and
to Debian's redis-server 7.0.15 (`oracle`) and the replies, errors
included, must be equal.  Tests parametrized over `target` assert fixed
properties on each of the two servers.  Run with CAIRN_BIN=redis-server to
check that every assertion describes Redis's behaviour.
"""
import time

import pytest
import redis

from compare import BOTH, debug_target, run, same, try_debug_active_expire_off  # noqa: F401


def scan_all(r, *opts, between=None):
    """Full SCAN iteration; returns (set of keys, list of keys with repeats)."""
    seen, order, cursor, calls = set(), [], 0, 0
    while True:
        reply = r.execute_command("SCAN", cursor, *opts)
        cursor = int(reply[0])
        order.extend(reply[1])
        seen.update(reply[1])
        calls += 1
        if between:
            between(calls)
        if cursor == 0:
            return seen, order
        assert calls < 100000


# ------------------------------------------------------------ DEL / EXISTS

def test_del_unlink_exists_touch_counts(server, oracle):
    same(server, oracle, [
        ("EXISTS", "a", "a", "b", "c"),
        ("TOUCH", "a", "b", "c", "a"),
        ("DEL", "a", "c", "a"),
        ("EXISTS", "a", "b"),
        ("UNLINK", "b", "nokey", "b"),
        ("EXISTS", "b"),
        ("DEL", "nokey"),
        ("DBSIZE",),
    ], setup=[("SET", "a", "1"), ("SET", "b", "2")])


def test_unlink_large_value_and_many_keys(server, oracle):
    big = "x" * 100000
    setup = [("SET", "k%d" % i, big if i % 2 else str(i)) for i in range(200)]
    same(server, oracle, [
        ("UNLINK",) + tuple("k%d" % i for i in range(0, 200, 3)),
        ("DBSIZE",),
        ("DEL",) + tuple("k%d" % i for i in range(1, 200, 3)),
        ("DBSIZE",),
        ("EXISTS", "k2", "k5", "k0", "k1"),
    ], setup=setup)


def test_type_of_string_and_missing_key(server, oracle):
    same(server, oracle, [
        ("TYPE", "s"), ("TYPE", "i"), ("TYPE", "long"), ("TYPE", "nokey"),
    ], setup=[("SET", "s", "hello"), ("SET", "i", "12"), ("SET", "long", "z" * 100)])


def test_dbsize_counts_per_database(server, oracle):
    same(server, oracle, [
        ("DBSIZE",), ("SELECT", "3"), ("DBSIZE",), ("SET", "x", "1"), ("DBSIZE",),
        ("SELECT", "0"), ("DBSIZE",),
    ], setup=[("SET", "a", "1"), ("SET", "b", "1")])


# ------------------------------------------------------------------- KEYS

KEY_NAMES = ["hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a?b", "ab",
             "foo:1", "foo:2", "foo:10", "bar", "[x]", "x", "\\y", "Hello"]
PATTERNS = ["*", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "a\\*b",
            "a?b", "foo:*", "foo:?", "*o*", "[", "[x]", "\\[x\\]", "nomatch*", "H*",
            "\\\\y", "h[b-a]llo", "*:1*", ""]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_keys_glob_patterns(server, oracle, pattern):
    a, b = server.client(), oracle.client()
    for k in KEY_NAMES:
        a.set(k, "v")
        b.set(k, "v")
    assert sorted(a.keys(pattern)) == sorted(b.keys(pattern))


@pytest.mark.parametrize("target", BOTH)
def test_keys_skips_expired_without_deleting(request, target):
    r = debug_target(request, target).client()
    try_debug_active_expire_off(r)
    r.set("live", "1")
    r.set("dead", "1")
    r.pexpire("dead", 20)
    time.sleep(0.1)
    assert r.keys("*") == [b"live"]
    assert r.dbsize() == 2  # skipped, not deleted
    assert r.exists("dead") == 0
    assert r.dbsize() == 1


# ------------------------------------------------------------------- SCAN

@pytest.mark.parametrize("target", BOTH)
def test_scan_full_iteration_returns_every_key(request, target):
    r = request.getfixturevalue(target).client()
    keys = {b"key:%d" % i for i in range(1000)}
    pipe = r.pipeline(transaction=False)
    for k in keys:
        pipe.set(k, "v")
    pipe.execute()
    for count in (1, 10, 100, 5000):
        seen, _ = scan_all(r, "COUNT", count)
        assert seen == keys


@pytest.mark.parametrize("target", BOTH)
def test_scan_sees_every_original_key_while_table_grows(request, target):
    r = request.getfixturevalue(target).client()
    original = {b"orig:%d" % i for i in range(300)}
    pipe = r.pipeline(transaction=False)
    for k in original:
        pipe.set(k, "v")
    pipe.execute()
    added = [0]

    def grow(calls):
        if calls > 40:  # 4,000 new keys: the table doubles several times
            return
        pipe = r.pipeline(transaction=False)
        for _ in range(100):
            pipe.set(b"new:%d" % added[0], "v")
            added[0] += 1
        pipe.execute()

    seen, _ = scan_all(r, "COUNT", 10, between=grow)
    assert original <= seen
    assert r.dbsize() == 300 + added[0]


@pytest.mark.parametrize("target", BOTH)
def test_scan_sees_every_original_key_while_table_shrinks(request, target):
    r = request.getfixturevalue(target).client()
    keep = {b"keep:%d" % i for i in range(100)}
    gone = [b"gone:%d" % i for i in range(3000)]
    pipe = r.pipeline(transaction=False)
    for k in list(keep) + gone:
        pipe.set(k, "v")
    pipe.execute()

    def shrink(_calls):
        if gone:
            batch = [gone.pop() for _ in range(min(300, len(gone)))]
            r.delete(*batch)

    seen, _ = scan_all(r, "COUNT", 20, between=shrink)
    assert keep <= seen


@pytest.mark.parametrize("target", BOTH)
def test_scan_match_and_type_filters(request, target):
    r = request.getfixturevalue(target).client()
    for i in range(200):
        r.set("user:%d" % i, i)
        r.set("item:%d" % i, i)
    seen, _ = scan_all(r, "MATCH", "user:1*")
    assert seen == {b"user:%d" % i for i in range(200) if str(i).startswith("1")}
    seen, _ = scan_all(r, "MATCH", "user:1*", "COUNT", 1000, "TYPE", "string")
    assert seen == {b"user:%d" % i for i in range(200) if str(i).startswith("1")}
    seen, _ = scan_all(r, "TYPE", "STRING")
    assert len(seen) == 400
    for t in ("hash", "list", "set", "zset", "stream", "nosuchtype"):
        seen, _ = scan_all(r, "TYPE", t)
        assert seen == set()


@pytest.mark.parametrize("target", BOTH)
def test_scan_count_bounds_each_call(request, target):
    r = request.getfixturevalue(target).client()
    for i in range(500):
        r.set("k%d" % i, "v")
    cursor, keys = r.execute_command("SCAN", 0, "COUNT", 5)
    assert int(cursor) != 0
    assert 1 <= len(keys) < 50
    cursor, keys = r.execute_command("SCAN", 0, "COUNT", 100000)
    assert int(cursor) == 0 and len(keys) == 500


def test_scan_argument_errors(server, oracle):
    same(server, oracle, [
        ("SCAN", "abc"), ("SCAN", "0x1"), ("SCAN", " 1"), ("SCAN", "1 "),
        ("SCAN", "18446744073709551616"), ("SCAN", "-18446744073709551616"),
        ("SCAN", "18446744073709551615"), ("SCAN", "-1"), ("SCAN", "+5"),
        ("SCAN", "-0"), ("SCAN", "00"), ("SCAN", ""),
        ("SCAN", "0", "COUNT", "0"), ("SCAN", "0", "COUNT", "-1"),
        ("SCAN", "0", "COUNT", "abc"), ("SCAN", "0", "COUNT"),
        ("SCAN", "0", "MATCH"), ("SCAN", "0", "TYPE"), ("SCAN", "0", "foo", "bar"),
        ("SCAN", "0", "COUNT", "1", "COUNT", "2"),
        ("SCAN", "0", "match", "*", "count", "10", "type", "string"),
    ])


@pytest.mark.parametrize("target", BOTH)
def test_scan_skips_and_deletes_expired_keys(request, target):
    r = debug_target(request, target).client()
    try_debug_active_expire_off(r)
    for i in range(50):
        r.set("live:%d" % i, "v")
        r.set("dead:%d" % i, "v")
        r.pexpire("dead:%d" % i, 20)
    time.sleep(0.1)
    assert r.dbsize() == 100
    seen, _ = scan_all(r, "COUNT", 1000)
    assert seen == {b"live:%d" % i for i in range(50)}
    assert r.dbsize() == 50


# -------------------------------------------------------------- RANDOMKEY

@pytest.mark.parametrize("target", BOTH)
def test_randomkey(request, target):
    r = request.getfixturevalue(target).client()
    assert r.randomkey() is None
    for i in range(10):
        r.set("k%d" % i, "v")
    for _ in range(20):
        assert r.randomkey() in {b"k%d" % i for i in range(10)}


@pytest.mark.parametrize("target", BOTH)
def test_randomkey_skips_and_deletes_expired(request, target):
    r = debug_target(request, target).client()
    try_debug_active_expire_off(r)
    for i in range(20):
        r.set("dead%d" % i, "v")
        r.pexpire("dead%d" % i, 1)
    time.sleep(0.05)
    assert r.randomkey() is None
    assert r.dbsize() == 0
    r.set("live", "v")
    r.set("dead", "v")
    r.pexpire("dead", 1)
    time.sleep(0.05)
    for _ in range(10):
        assert r.randomkey() == b"live"


# --------------------------------------------------------- RENAME / MOVE

def test_rename_and_renamenx(server, oracle):
    same(server, oracle, [
        ("RENAME", "a", "b"), ("GET", "b"), ("EXISTS", "a"), ("TTL", "b"),
        ("RENAME", "b", "b"), ("RENAMENX", "b", "b"),
        ("RENAME", "nokey", "x"), ("RENAMENX", "nokey", "x"),
        ("RENAMENX", "b", "c"), ("GET", "c"), ("TTL", "c"),
        ("RENAME", "b", "c"), ("GET", "c"), ("TTL", "c"), ("EXISTS", "b"),
        ("RENAMENX", "c", "d"), ("GET", "d"), ("TTL", "d"),
        ("RENAME", "d", "big"), ("OBJECT", "ENCODING", "big"),
        ("RENAME", "n", "n2"), ("OBJECT", "ENCODING", "n2"), ("GET", "n2"),
        ("RENAME", "r", "r2"), ("OBJECT", "ENCODING", "r2"), ("GET", "r2"),
    ], setup=[("SET", "a", "va"), ("EXPIRE", "a", "1000"), ("SET", "c", "vc"),
              ("SET", "big", "x"), ("SET", "n", "12345"), ("SET", "r", "y" * 60)])


def test_rename_to_long_key_name_and_back(server, oracle):
    long_name = "L" * 300
    same(server, oracle, [
        ("RENAME", "k", long_name), ("GET", long_name), ("TTL", long_name),
        ("RENAME", long_name, "k"), ("GET", "k"), ("TTL", "k"),
    ], setup=[("SET", "k", "value"), ("EXPIRE", "k", "500")])


def test_move(server, oracle):
    same(server, oracle, [
        ("MOVE", "a", "1"), ("EXISTS", "a"), ("SELECT", "1"), ("GET", "a"), ("TTL", "a"),
        ("SELECT", "0"), ("MOVE", "b", "1"), ("EXISTS", "b"),
        ("MOVE", "nokey", "1"),
        ("MOVE", "b", "0"), ("MOVE", "b", "16"), ("MOVE", "b", "-1"), ("MOVE", "b", "abc"),
        ("MOVE", "b", "4294967297"), ("MOVE", "nokey", "0"),
        ("SELECT", "1"), ("MOVE", "a", "0"), ("SELECT", "0"), ("TTL", "a"),
    ], setup=[("SET", "a", "1"), ("EXPIRE", "a", "300"), ("SET", "b", "2"),
              ("SELECT", "1"), ("SET", "b", "other"), ("SELECT", "0")])


def test_copy(server, oracle):
    same(server, oracle, [
        ("COPY", "a", "b"), ("GET", "b"), ("TTL", "b"), ("OBJECT", "ENCODING", "b"),
        ("COPY", "a", "b"), ("COPY", "a", "b", "REPLACE"),
        ("COPY", "a", "a"), ("COPY", "a", "a", "DB", "0"), ("COPY", "a", "a", "DB", "1"),
        ("SELECT", "1"), ("GET", "a"), ("TTL", "a"), ("SELECT", "0"),
        ("COPY", "nokey", "x"), ("COPY", "a", "b", "foo"), ("COPY", "a", "b", "DB"),
        ("COPY", "a", "b", "DB", "abc"), ("COPY", "a", "b", "DB", "16"),
        ("COPY", "a", "b", "DB", "-1"), ("COPY", "a", "b", "DB", "4294967296"),
        ("COPY", "nokey", "b", "DB", "99"),
        ("COPY", "raw", "raw2"), ("OBJECT", "ENCODING", "raw2"), ("GET", "raw2"),
        ("COPY", "int", "int2"), ("OBJECT", "ENCODING", "int2"), ("GET", "int2"),
        ("COPY", "a", "c", "replace", "db", "2", "REPLACE"), ("SELECT", "2"), ("GET", "c"),
        ("SELECT", "0"), ("APPEND", "raw2", "!"), ("GET", "raw"), ("GET", "raw2"),
    ], setup=[("SET", "a", "va"), ("EXPIRE", "a", "1000"), ("SET", "raw", "r" * 50),
              ("SET", "int", "42")])


# ----------------------------------------------------- SELECT / SWAPDB

def test_select_errors(server, oracle):
    same(server, oracle, [
        ("SELECT", "15"), ("SELECT", "16"), ("SELECT", "-1"), ("SELECT", "abc"),
        ("SELECT", "4294967296"), ("SELECT", "9999999999999999999"), ("SELECT", "0"),
    ])


def test_swapdb(server, oracle):
    same(server, oracle, [
        ("SWAPDB", "0", "1"), ("GET", "a"), ("TTL", "b"), ("SELECT", "1"), ("GET", "a"),
        ("TTL", "a"), ("SELECT", "0"), ("DBSIZE",),
        ("SWAPDB", "0", "0"), ("GET", "a"),
        ("SWAPDB", "abc", "1"), ("SWAPDB", "1", "abc"), ("SWAPDB", "16", "1"),
        ("SWAPDB", "1", "16"), ("SWAPDB", "-1", "1"), ("SWAPDB", "4294967296", "1"),
        ("SWAPDB", "1", "4294967296"), ("SWAPDB", "abc", "99"),
    ], setup=[("SET", "a", "in0"), ("EXPIRE", "a", "100"), ("SELECT", "1"),
              ("SET", "a", "in1"), ("SET", "b", "x"), ("EXPIRE", "b", "200"), ("SELECT", "0")])


# ------------------------------------------------------ FLUSHDB / FLUSHALL

def test_flush_argument_errors(server, oracle):
    same(server, oracle, [
        ("FLUSHDB", "foo"), ("FLUSHDB", "async", "sync"), ("FLUSHALL", "foo"),
        ("FLUSHALL", "ASYNC", "ASYNC"), ("DBSIZE",),
    ], setup=[("SET", "a", "1")])


@pytest.mark.parametrize("mode", [(), ("SYNC",), ("ASYNC",), ("async",)])
def test_flushdb_only_current_db(server, oracle, mode):
    same(server, oracle, [
        ("FLUSHDB",) + mode, ("DBSIZE",), ("GET", "a"), ("SELECT", "1"), ("DBSIZE",),
        ("SELECT", "0"), ("SET", "a", "new"), ("GET", "a"), ("TTL", "a"), ("DBSIZE",),
    ], setup=[("SET", "a", "1"), ("EXPIRE", "a", "100"), ("SET", "b", "2"),
              ("SELECT", "1"), ("SET", "c", "3"), ("SELECT", "0")])


@pytest.mark.parametrize("target", BOTH)
@pytest.mark.parametrize("mode", [(), ("SYNC",), ("ASYNC",)])
def test_flushall_then_immediate_writes(request, target, mode):
    r = request.getfixturevalue(target).client()
    for db in (0, 1, 5):
        c = request.getfixturevalue(target).client(db=db)
        pipe = c.pipeline(transaction=False)
        for i in range(20000):
            pipe.set("k%d" % i, "v" * (i % 100))
            if i % 3 == 0:
                pipe.pexpire("k%d" % i, 100000)
        pipe.execute()
    pipe = r.pipeline(transaction=False)
    pipe.execute_command("FLUSHALL", *mode)
    for i in range(1000):
        pipe.set("k%d" % i, "after")
    pipe.dbsize()
    res = pipe.execute()
    assert res[0] is True
    assert res[-1] == 1000
    assert r.get("k5") == b"after"
    assert r.ttl("k3") == -1
    for db in (1, 5):
        assert request.getfixturevalue(target).client(db=db).dbsize() == 0
    # Flush twice more while the first may still be freeing.
    r.execute_command("FLUSHALL", *mode)
    r.execute_command("FLUSHDB", *mode)
    assert r.dbsize() == 0


# ------------------------------------------------------------------ OBJECT

def test_object_subcommands(server, oracle):
    same(server, oracle, [
        ("OBJECT", "ENCODING", "int"), ("OBJECT", "ENCODING", "emb"),
        ("OBJECT", "ENCODING", "raw"), ("OBJECT", "ENCODING", "nokey"),
        ("OBJECT", "REFCOUNT", "int"), ("OBJECT", "REFCOUNT", "bigint"),
        ("OBJECT", "REFCOUNT", "neg"), ("OBJECT", "REFCOUNT", "emb"),
        ("OBJECT", "REFCOUNT", "nokey"),
        ("OBJECT", "IDLETIME", "nokey"),
        ("OBJECT", "FREQ", "emb"), ("OBJECT", "FREQ", "nokey"),
        ("OBJECT", "HELP"), ("object", "help"),
        ("OBJECT", "foo"), ("OBJECT", "foo", "bar"),
        ("OBJECT", "ENCODING"), ("OBJECT", "ENCODING", "a", "b"), ("OBJECT", "HELP", "x"),
        ("OBJECT",),
    ], setup=[("SET", "int", "9999"), ("SET", "bigint", "10000"), ("SET", "neg", "-1"),
              ("SET", "emb", "hello"), ("SET", "raw", "r" * 45)])
    # Idle seconds of a key just written: 0, or a little more when the
    # machine stalls between the SET and the check (so not compared exactly).
    c = server.client()
    c.set("emb", "hello")
    assert 0 <= c.object("idletime", "emb") <= 2


def test_object_freq_and_idletime_under_lfu(server, oracle):
    same(server, oracle, [
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"),
        ("SET", "k", "v"), ("OBJECT", "FREQ", "k"), ("OBJECT", "IDLETIME", "k"),
        ("OBJECT", "FREQ", "nokey"),
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
        ("OBJECT", "FREQ", "k"),
        ("OBJECT", "REFCOUNT", "int"),
    ], setup=[("SET", "int", "5")])


@pytest.mark.parametrize("target", BOTH)
def test_object_idletime_grows_and_touch_resets_it(request, target):
    r = request.getfixturevalue(target).client()
    r.set("k", "v")
    assert r.object("idletime", "k") in (0, 1)
    time.sleep(2.2)
    idle = r.object("idletime", "k")
    assert 1 <= idle <= 4
    r.exists("k")  # EXISTS does not touch
    assert r.object("idletime", "k") >= 1
    r.touch("k")
    assert r.object("idletime", "k") <= 1


# -------------------------------------------------- keyspace notifications

def collect_events(target, commands):
    """Run commands with notify-keyspace-events KEA; return keyevents."""
    r = target.client()
    try:
        r.config_set("notify-keyspace-events", "KEA")
    except redis.ResponseError as e:
        pytest.skip("notifications unavailable: %s" % e)
    p = target.client().pubsub()
    try:
        p.psubscribe("__keyevent@*")
        msg = p.get_message(timeout=5)
    except redis.ResponseError as e:
        pytest.skip("PSUBSCRIBE unavailable: %s" % e)
    assert msg and msg["type"] == "psubscribe"
    for cmd in commands:
        run(r, *cmd)
    r.execute_command("SELECT", "0")
    run(r, "SET", "__end__", "1")
    events = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m = p.get_message(timeout=1)
        if m is None:
            continue
        if m["type"] != "pmessage":
            continue
        events.append((m["channel"], m["data"]))
        if m["data"] == b"__end__":
            break
    p.close()
    return events


def test_keyspace_events_of_key_commands(server, oracle):
    script = [
        ("SET", "a", "1"), ("RENAME", "a", "b"), ("RENAME", "b", "b"),
        ("SET", "c", "1"), ("RENAME", "b", "c"), ("RENAMENX", "c", "d"),
        ("RENAMENX", "d", "d"), ("MOVE", "d", "1"), ("SET", "f", "1"),
        ("COPY", "f", "g", "DB", "1"), ("COPY", "f", "f2"), ("COPY", "f", "f2", "REPLACE"),
        ("DEL", "f", "f2", "nokey"), ("SET", "h", "1"), ("UNLINK", "h"),
        ("SWAPDB", "0", "1"), ("FLUSHDB",), ("FLUSHALL",),
    ]
    assert collect_events(server, script) == collect_events(oracle, script)
