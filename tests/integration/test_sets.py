"""Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP,
SRANDMEMBER, SMOVE, SINTER/SINTERCARD/SINTERSTORE, SUNION/SUNIONSTORE,
SDIFF/SDIFFSTORE, SSCAN; the intset/hashtable encodings and conversions.

Deterministic replies are compared byte for byte with redis-server 7.0.15
(`diff`): error texts, counts, intset-encoded replies (ascending order) and
OBJECT ENCODING after each conversion.  Hashtable replies come in hash order,
so they are compared as sets (`diff_sets`).  Random replies (SPOP,
SRANDMEMBER) are checked for what Redis promises: the count, distinctness
and membership.  Run with CAIRN_BIN=redis-server to re-check expectations.
"""
import os
import socket

import pytest

from requires import require_commands
from resphelp import encode_all, parse_one, read_values

LLONG_MIN = -9223372036854775808


# ------------------------------------------------------------ raw helpers


class Conn:
    """One raw connection: run() pipelines commands and returns, per command,
    (raw bytes, parsed value)."""

    def __init__(self, srv, resp=2):
        self.sock = socket.create_connection((srv.host, srv.port), timeout=30)
        self.buf = b""
        if resp == 3:
            self.run([["HELLO", "3"]])

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def _read(self):
        raw = read_values(self)
        return raw, parse_one(raw)

    def run(self, cmds, batch=100):
        out = []
        for k in range(0, len(cmds), batch):
            part = cmds[k:k + batch]
            self.sock.sendall(encode_all(part))
            out += [self._read() for _ in part]
        return out

    def close(self):
        self.sock.close()


def as_cmd(c):
    return c.split() if isinstance(c, str) else list(c)


def run_both(server, oracle, cmds, resp=2):
    cmds = [as_cmd(c) for c in cmds]
    a, b = Conn(server, resp), Conn(oracle, resp)
    try:
        return cmds, a.run(cmds), b.run(cmds)
    finally:
        a.close()
        b.close()


def diff(server, oracle, cmds, resp=2):
    """Every raw reply must be identical.  Returns the oracle's raw replies."""
    cmds, got, exp = run_both(server, oracle, cmds, resp)
    bad = [(c, g[0], e[0]) for c, g, e in zip(cmds, got, exp) if g[0] != e[0]]
    assert not bad, "first mismatch: %r: cairn %r, redis %r" % bad[0]
    return [e[0] for e in exp]


def _as_unordered(v):
    t, x = v
    if isinstance(x, list):
        return (t, sorted(_as_unordered(i) for i in x))
    return v


def diff_sets(server, oracle, cmds, resp=2):
    """Like diff, but aggregate replies compare as multisets (hash order)."""
    cmds, got, exp = run_both(server, oracle, cmds, resp)
    bad = [(c, g[0], e[0]) for c, g, e in zip(cmds, got, exp)
           if _as_unordered(g[1]) != _as_unordered(e[1])]
    assert not bad, "first mismatch: %r: cairn %r, redis %r" % bad[0]


def members(r, key):
    return set(r.smembers(key))


# ------------------------------------------------------------------ basics

def test_intset_replies_exact(server, oracle):
    for resp in (2, 3):
        diff(server, oracle, [
            "FLUSHALL",
            "SADD s 3 1 2 -5 100000 9223372036854775807 -9223372036854775808",
            "SADD s 1 2 7", "SCARD s", "SMEMBERS s", "SISMEMBER s 7", "SISMEMBER s 8",
            "SISMEMBER s 07", "SMISMEMBER s 1 x 07 100000", "SMISMEMBER nokey a b",
            "SREM s 1 x 07", "SMEMBERS s", "SMEMBERS nokey", "SCARD nokey",
            "SISMEMBER nokey a", "SADD t 2 3 4 5", "SINTER s t", "SINTER t s", "SUNION s t",
            "SDIFF s t", "SDIFF t s", "SINTER s nokey", "SUNION s nokey", "SDIFF nokey s",
            "SDIFF s nokey", "SUNION nokey", "SSCAN s 0", "SSCAN s 17 COUNT 1",
            "SSCAN s 0 MATCH 1*", "SSCAN nokey 0", "SRANDMEMBER s 100", "SRANDMEMBER s 0",
            "SRANDMEMBER nokey", "SRANDMEMBER nokey 5", "SRANDMEMBER nokey -5", "SPOP nokey",
            "SPOP nokey 3", "SPOP s 0", "SINTERCARD 2 s t", "SINTERCARD 1 s LIMIT 2",
            "SINTERCARD 1 s LIMIT 0", "SINTERCARD 2 s nokey", "OBJECT ENCODING s",
            "SPOP t 10", "EXISTS t",
        ], resp=resp)


def test_errors_exact(server, oracle):
    for resp in (2, 3):
        diff(server, oracle, [
            "FLUSHALL", "SET str v", "SADD s 1 2 3",
            "SADD str a", "SREM str a", "SMEMBERS str", "SISMEMBER str a", "SMISMEMBER str a",
            "SCARD str", "SPOP str", "SPOP str 1", "SRANDMEMBER str", "SRANDMEMBER str 1",
            "SINTER s str", "SINTER nokey str", "SUNION s str", "SDIFF nokey str",
            "SINTERSTORE d s str", "SUNIONSTORE d str", "SDIFFSTORE d s str", "SSCAN str 0",
            "SINTERCARD 2 s str", "SMOVE str s a", "SMOVE s str 1", "SMOVE nokey str 1",
            # count arguments
            "SPOP s -1", "SPOP s x", "SPOP nokey -1", "SPOP s 1.5", ["SPOP", "s", ""],
            "SPOP s -9223372036854775808", "SPOP s 1 2", "SPOP str 1 2",
            "SRANDMEMBER s x", "SRANDMEMBER s -0", "SRANDMEMBER s 1 2",
            "SRANDMEMBER s -9223372036854775808", "SRANDMEMBER nokey -9223372036854775808",
            "SRANDMEMBER s 9223372036854775808",
            # SINTERCARD
            "SINTERCARD 0 s", "SINTERCARD -1 s", "SINTERCARD x s", "SINTERCARD 2 s",
            "SINTERCARD 99999999999999999999 s", "SINTERCARD 1 s LIMIT -1",
            "SINTERCARD 1 s LIMIT x", "SINTERCARD 1 s LIMIT", "SINTERCARD 1 s foo 1",
            "SINTERCARD 1 s LIMIT 1 LIMIT 2", "SINTERCARD 1 str LIMIT x",
            # SSCAN
            "SSCAN s x", "SSCAN s -", "SSCAN s 1x", "SSCAN s 99999999999999999999",
            "SSCAN s 0 COUNT 0", "SSCAN s 0 COUNT -1", "SSCAN s 0 COUNT x", "SSCAN s 0 MATCH",
            "SSCAN s 0 TYPE string", "SSCAN s 0 BAD 1", "SSCAN nokey 0 BAD 1", "SSCAN s -1",
            "SSCAN str x",
            # arity
            "SADD s", "SREM s", "SMEMBERS", "SMEMBERS a b", "SISMEMBER s", "SMISMEMBER s",
            "SCARD", "SPOP", "SRANDMEMBER", "SMOVE a b", "SINTER", "SINTERCARD 1",
            "SINTERSTORE d", "SUNION", "SUNIONSTORE d", "SDIFF", "SDIFFSTORE d", "SSCAN s",
        ], resp=resp)
    r = server.client()
    with pytest.raises(Exception, match="numkeys should be greater than 0"):
        r.execute_command("SINTERCARD", "0", "s")
    with pytest.raises(Exception, match="value is out of range, must be positive"):
        r.execute_command("SPOP", "s", "-1")


def test_command_info_matches(server, oracle):
    names = ["sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop",
             "srandmember", "smove", "sinter", "sintercard", "sinterstore", "sunion",
             "sunionstore", "sdiff", "sdiffstore", "sscan"]
    diff(server, oracle, [["COMMAND", "INFO", n] for n in names] + [
        "COMMAND GETKEYS SINTERCARD 2 a b", "COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1",
        "COMMAND GETKEYS SINTERCARD 0 a", "COMMAND GETKEYS SINTERCARD 3 a b",
        "COMMAND GETKEYS SINTERCARD x a", "COMMAND GETKEYS SMOVE a b m",
        "COMMAND GETKEYS SINTERSTORE d a b"])


# --------------------------------------------------------------- encodings

def test_conversions_exact(server, oracle):
    ints = [str(i) for i in range(512)]
    diff(server, oracle, [
        "FLUSHALL",
        # a non-integer member converts; removing it does not convert back
        "SADD a 1 2 3", "OBJECT ENCODING a", "SADD a x", "OBJECT ENCODING a", "SREM a x",
        "OBJECT ENCODING a",
        # the first member decides the new set's encoding
        "SADD b x 1", "OBJECT ENCODING b", "SADD c 1 x", "OBJECT ENCODING c",
        # non-canonical integers are strings
        "SADD d 007", "OBJECT ENCODING d", "SADD e -0", "OBJECT ENCODING e",
        "SADD f +1", "OBJECT ENCODING f", ["SADD", "g", " 1"], "OBJECT ENCODING g",
        "SADD h 9223372036854775808", "OBJECT ENCODING h",
        "SADD i -9223372036854775808 9223372036854775807", "OBJECT ENCODING i", "SMEMBERS i",
        # the count limit: 512 stays intset, 513 converts; a re-add does not
        ["SADD", "big"] + ints, "OBJECT ENCODING big", "SADD big 0", "OBJECT ENCODING big",
        "SADD big 512", "OBJECT ENCODING big", "SCARD big",
        # the limit is read at each successful add
        "CONFIG SET set-max-intset-entries 3", "SADD small 1 2 3", "OBJECT ENCODING small",
        "SADD small 3", "OBJECT ENCODING small", "SADD small 4", "OBJECT ENCODING small",
        "SADD j 1 2", "CONFIG SET set-max-intset-entries 1", "SADD j 2", "OBJECT ENCODING j",
        "SADD j 3", "OBJECT ENCODING j",
        "CONFIG SET set-max-intset-entries 0", "SADD z 1", "OBJECT ENCODING z",
        "CONFIG SET set-max-intset-entries 512",
        # SMOVE creates the destination from the moved member
        "SADD src 1 x", "SMOVE src n1 1", "OBJECT ENCODING n1", "SMOVE src n2 x",
        "OBJECT ENCODING n2", "EXISTS src", "SADD n1 2", "SMOVE n1 n3 9", "EXISTS n3",
        "SADD q 5", "SADD r y", "SMOVE r q y", "OBJECT ENCODING q", "EXISTS r",
    ])


def test_store_encodings_exact(server, oracle):
    diff(server, oracle, [
        "FLUSHALL",
        "SADD mix 1 2 3 x", "SADD other x 9", "SADD ints 1 2 3 4",
        # the result is built member by member in a fresh intset
        "SINTERSTORE d mix ints", "OBJECT ENCODING d", "SMEMBERS d",
        "SINTERSTORE d mix other", "OBJECT ENCODING d",
        "SUNIONSTORE d ints mix", "OBJECT ENCODING d",
        "SUNIONSTORE d ints", "OBJECT ENCODING d", "SMEMBERS d",
        "SDIFFSTORE d mix other", "OBJECT ENCODING d", "SMEMBERS d",
        # SDIFF's second algorithm adds the whole first set, then removes
        "SADD big2 1 2 3 4 5 6 7 8 9 10 11 12 x", "SADD one x", "SADD o1 1",
        "SDIFFSTORE d big2 one o1", "OBJECT ENCODING d", "SCARD d",
        "SDIFFSTORE d big2 one", "OBJECT ENCODING d",
        # same key twice: empty result, destination deleted
        "SDIFFSTORE d big2 big2", "EXISTS d", "SDIFF big2 one big2",
        # store over another type and over a TTL
        "SET d str", "EXPIRE d 1000", "SUNIONSTORE d ints", "TYPE d", "TTL d",
        "SET str v", "SINTERSTORE str nokey", "EXISTS str",
        # the destination may be one of the sources
        "SINTERSTORE ints ints o1", "SMEMBERS ints", "SUNIONSTORE ints ints one",
        "OBJECT ENCODING ints",
        # empty results delete the destination
        "SINTERSTORE o1 one o1", "EXISTS o1", "SUNIONSTORE x nokey", "SDIFFSTORE x nokey",
    ])


def test_hashtable_sets_unordered(server, oracle):
    words = ["w%d" % i for i in range(300)]
    cmds = ["FLUSHALL", ["SADD", "h"] + words, ["SADD", "g"] + words[::3] + ["1", "2"],
            ["SADD", "n"] + [str(i) for i in range(100)],
            "SMEMBERS h", "SINTER h g", "SINTER g h n", "SUNION h g n", "SDIFF h g",
            "SDIFF g h", "SDIFF n g", "SCARD h", "SINTERCARD 2 h g", "SINTERCARD 2 h g LIMIT 7",
            "SINTERSTORE d h g", "SCARD d", "SMEMBERS d", "OBJECT ENCODING d",
            "SUNIONSTORE d h n", "SCARD d", "SDIFFSTORE d g h", "SMEMBERS d",
            "OBJECT ENCODING d", "SREM h w1 w2 nope", "SCARD h", "SMISMEMBER h w1 w3 nope"]
    diff_sets(server, oracle, cmds)
    diff_sets(server, oracle, cmds, resp=3)


def test_large_sets_vs_oracle(server, oracle):
    a = [str(i) for i in range(0, 3000, 2)]
    b = [str(i) for i in range(0, 3000, 3)]
    c = ["m%d" % i for i in range(0, 2000, 5)] + [str(i) for i in range(0, 3000, 7)]
    diff_sets(server, oracle, [
        "FLUSHALL", ["SADD", "a"] + a, ["SADD", "b"] + b, ["SADD", "c"] + c,
        "OBJECT ENCODING a", "SINTER a b", "SINTER a b c", "SUNION a b c", "SDIFF a b c",
        "SDIFF c a", "SINTERCARD 3 a b c", "SINTERSTORE d a b c", "OBJECT ENCODING d",
        "SMEMBERS d", "SDIFFSTORE e c a b", "OBJECT ENCODING e", "SCARD e",
        "SUNIONSTORE f a b", "OBJECT ENCODING f", "SCARD f"])


# ----------------------------------------------------------- random picks

def _make_sets(r):
    r.flushall()
    r.sadd("iset", *range(1, 101))
    r.sadd("hset", *["m%d" % i for i in range(100)])
    r.sadd("small", "a", "b", "c")
    return {"iset": {str(i).encode() for i in range(1, 101)},
            "hset": {("m%d" % i).encode() for i in range(100)},
            "small": {b"a", b"b", b"c"}}


def test_srandmember_semantics(server):
    r = server.client()
    model = _make_sets(r)
    for key, full in model.items():
        assert r.srandmember(key) in full
        for count in (1, 2, 5, 30, 40, 99, 100, 101, 1000):
            got = r.srandmember(key, count)
            assert len(got) == min(count, len(full))
            assert len(set(got)) == len(got) and set(got) <= full
        for count in (-1, -5, -100, -1000):
            got = r.srandmember(key, count)
            assert len(got) == -count and set(got) <= full
        assert members(r, key) == full   # nothing changed
    # with repetition, a 3-member set gives repeats over 300 picks
    assert len(set(r.srandmember("small", -300))) == 3


def test_spop_semantics(server):
    r = server.client()
    model = _make_sets(r)
    for key, full in model.items():
        left = set(full)
        one = r.spop(key)
        assert one in left
        left.discard(one)
        # a few, then most (Redis rebuilds the set when few remain)
        for step in range(2 if len(left) > 10 else 0):
            count = 3 if step == 0 else len(left) - 2
            got = r.spop(key, count)
            assert len(got) == count and len(set(got)) == count and set(got) <= left
            left -= set(got)
            assert members(r, key) == left
            assert r.scard(key) == len(left)
        got = r.spop(key, 10)
        assert set(got) == left and len(got) == len(left)
        assert r.exists(key) == 0
    assert r.spop("nokey") is None
    assert r.spop("nokey", 3) == []


def test_spop_rebuild_encoding(server, oracle):
    """SPOP leaving few members rebuilds the set with a fresh encoding; a few
    popped keep the old one.  Members are integers, so the outcome does not
    depend on which ones are picked."""
    out = []
    for srv in (server, oracle):
        r = srv.client()
        r.flushall()
        res = []
        for pop in (8, 9):
            r.sadd("h", *range(1, 11), "x")
            r.srem("h", "x")
            r.expire("h", 1000)
            assert len(r.spop("h", pop)) == pop
            res.append((pop, r.object("encoding", "h"), r.scard("h"), r.ttl("h") > 0))
            r.delete("h")
        # many integers over the limit: rebuilt as intset when few remain
        r.sadd("big", *range(600))
        r.spop("big", 550)
        res.append(("big", r.object("encoding", "big"), r.scard("big")))
        out.append(res)
    assert out[0] == out[1]
    assert out[1][0][1] == b"hashtable" and out[1][1][1] == b"intset"


def test_srandmember_huge_negative(server, oracle):
    diff(server, oracle, ["FLUSHALL", "SADD s a b", "SRANDMEMBER s -9223372036854775808",
                          "SRANDMEMBER nokey -9223372036854775807", "SADD i 1 2",
                          "SRANDMEMBER i -9223372036854775808"])


@pytest.mark.skipif(os.path.basename(os.environ.get("CAIRN_BIN", "")) == "redis-server",
                    reason="Redis 7.0 builds this reply until it runs out of memory")
def test_srandmember_reply_size_guard(server):
    r = server.client()
    r.sadd("s", "a", "b")
    with pytest.raises(Exception, match="value is out of range"):
        r.srandmember("s", -9223372036854775807)
    with pytest.raises(Exception, match="value is out of range"):
        r.srandmember("s", -(1 << 40))
    assert len(r.srandmember("s", -100000)) == 100000
    assert r.ping()


# --------------------------------------------------------------------- SSCAN

def _full_scan(r, key, **kw):
    cursor, seen, calls = 0, [], 0
    while True:
        cursor, items = r.sscan(key, cursor, **kw)
        seen += items
        calls += 1
        assert calls < 100000
        if cursor == 0:
            return seen, calls


def test_sscan_hashtable_full_iteration(server, oracle):
    for srv in (server, oracle):
        r = srv.client()
        r.flushall()
        full = {("m%d" % i).encode() for i in range(1000)}
        r.sadd("h", *full)
        for count in (1, 7, 100, 5000):
            seen, calls = _full_scan(r, "h", count=count)
            assert set(seen) == full
            if count == 5000:
                assert calls == 1
        seen, _ = _full_scan(r, "h", match="m1*", count=50)
        assert set(seen) == {m for m in full if m.startswith(b"m1")}
        # members removed during the scan are never returned twice wrongly;
        # members present throughout are returned
        cursor, items = r.sscan("h", 0, count=50)
        r.srem("h", *[("m%d" % i).encode() for i in range(500)])
        rest = set(items)
        while cursor:
            cursor, items = r.sscan("h", cursor, count=50)
            rest |= set(items)
        assert {("m%d" % i).encode() for i in range(500, 1000)} <= rest


def test_sscan_intset_one_call(server, oracle):
    diff(server, oracle, ["FLUSHALL", ["SADD", "s"] + [str(i) for i in range(300)],
                          "SSCAN s 0", "SSCAN s 0 COUNT 1", "SSCAN s 123 MATCH 1?",
                          "SSCAN s 0 MATCH *9 COUNT 2"])


# ---------------------------------------------------------------- keyspace

def test_keyspace_events(server, oracle):
    require_commands(server, "psubscribe")
    script = [
        ("sadd", "s", 1, 2, 3), ("sadd", "s", 1), ("srem", "s", 9), ("srem", "s", 1, 9),
        ("spop", "s"), ("spop", "s", 5), ("sadd", "s", 1, 2, 3), ("spop", "s", 1),
        ("spop", "s", 0), ("sadd", "a", 1), ("smove", "a", "b", 1), ("smove", "b", "b", 1),
        ("smove", "b", "c", 9), ("sadd", "c", 1), ("smove", "b", "c", 1),
        ("sadd", "a", 1, 2), ("sadd", "b", 2, 3), ("sinterstore", "d", "a", "b"),
        ("sinterstore", "d", "a", "nokey"), ("sinterstore", "e", "a", "nokey"),
        ("sunionstore", "d", "a", "b"), ("sdiffstore", "d", "a", "a"),
        ("sdiffstore", "d", "a", "b"), ("sunionstore", "d", "nokey"), ("srem", "a", 1, 2),
        ("sadd", "x", *range(10)), ("spop", "x", 9), ("spop", "x")]
    logs = []
    for srv in (server, oracle):
        r = srv.client()
        r.flushall()
        r.config_set("notify-keyspace-events", "KEA")
        p = r.pubsub()
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=5)["type"] == "psubscribe"
        for cmd in script:
            r.execute_command(*cmd)
        r.execute_command("PING")
        r.publish("__keyevent@0__:end", "x")
        log = []
        while True:
            m = p.get_message(timeout=5)
            assert m is not None
            ch = m["channel"].decode().split(":", 1)[1]
            if ch == "end":
                break
            log.append((ch, m["data"]))
        p.close()
        logs.append(log)
    assert logs[0] == logs[1]
    assert ("spop", b"s") in logs[1] and ("del", b"s") in logs[1]


# ---------------------------------------------------------- value hooks

def test_copy_and_rename_keep_sets(server, oracle):
    require_commands(server, "copy")
    diff_sets(server, oracle, [
        "FLUSHALL", "SADD i 1 2 3", "SADD h a b c", "COPY i i2", "COPY h h2",
        "SADD i2 4", "SREM h2 a", "SMEMBERS i", "SMEMBERS i2", "SMEMBERS h", "SMEMBERS h2",
        "OBJECT ENCODING i2", "OBJECT ENCODING h2", "RENAME h2 h3", "SMEMBERS h3",
        "DEL i h", "UNLINK i2 h3", "DBSIZE"])


def test_keyspace_hit_miss_counting(server, oracle):
    """Reads (including the sources of the STORE forms) count hits and
    misses; the write commands look keys up without counting."""
    cmds = ["SINTERSTORE d a nokey", "SUNIONSTORE d a nokey", "SDIFFSTORE d a nokey",
            "SINTER a nokey", "SMEMBERS a", "SISMEMBER a 1", "SMISMEMBER nokey 1", "SCARD a",
            "SADD a 2", "SREM a 9", "SPOP a 0", "SRANDMEMBER a 1", "SRANDMEMBER nokey",
            "SINTERCARD 2 a nokey", "SSCAN a 0", "SSCAN nokey 0", "SMOVE a b 1"]
    seen = []
    for srv in (server, oracle):
        r = srv.client()
        r.flushall()
        r.sadd("a", 1)
        r.config_resetstat()
        row = []
        for c in cmds:
            r.execute_command(*c.split())
            st = r.info("stats")
            row.append((c, st["keyspace_hits"], st["keyspace_misses"]))
        seen.append(row)
    assert seen[0] == seen[1]
