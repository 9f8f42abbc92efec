"""String commands: SET family, GET family, counters, APPEND/SETRANGE/GETRANGE,
LCS.

Most tests are differential: the same command list goes to cairn and to
Debian's redis-server 7.0.15 on one connection each, and every raw reply must
match byte for byte (`diff`).  A few replies are also pinned literally, so a
test documents the behaviour it checks.  Run against real Redis with
CAIRN_BIN=redis-server to re-check the expectations.
"""
import itertools
import random
import socket
import time

import pytest

from requires import require_commands
from resphelp import encode_all, read_values

LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808
FAR_SEC = 4102444800            # 2100-01-01, a fixed absolute expire
FAR_MS = FAR_SEC * 1000


# ------------------------------------------------------------ raw helpers


class Conn:
    """One raw connection; run() sends commands pipelined and returns each
    raw reply as bytes."""

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

    def read_reply(self):
        return read_values(self)

    def run(self, cmds, batch=200):
        out = []
        for k in range(0, len(cmds), batch):
            part = cmds[k:k + batch]
            self.sock.sendall(encode_all(part))
            out += [self.read_reply() for _ in part]
        return out

    def close(self):
        self.sock.close()


def as_cmd(c):
    return c.split() if isinstance(c, str) else list(c)


def diff(server, oracle, cmds, resp=2):
    """Run cmds on both servers (one connection each, in order) and assert
    every raw reply is identical.  Returns the replies."""
    cmds = [as_cmd(c) for c in cmds]
    a, b = Conn(server, resp), Conn(oracle, resp)
    try:
        got, exp = a.run(cmds), b.run(cmds)
    finally:
        a.close()
        b.close()
    bad = [(c, g, e) for c, g, e in zip(cmds, got, exp) if g != e]
    assert not bad, "%d mismatches, first ones:\n%s" % (
        len(bad), "\n".join("%r: cairn %r, redis %r" % m for m in bad[:10]))
    return exp


# ------------------------------------------------------------ SET family

def test_set_get_basic_and_encodings(server, oracle):
    r = diff(server, oracle, [
        "SET k hello", "GET k", "OBJECT ENCODING k",
        "SET n 12345", "GET n", "OBJECT ENCODING n",
        "SET neg -9223372036854775808", "OBJECT ENCODING neg",
        "SET big 9223372036854775808", "OBJECT ENCODING big",
        "SET lead 007", "OBJECT ENCODING lead",
        "SET plus +1", "OBJECT ENCODING plus",
        ["SET", "e44", "x" * 44], ["OBJECT", "ENCODING", "e44"],
        ["SET", "e45", "x" * 45], ["OBJECT", "ENCODING", "e45"],
        ["SET", "i20", "1" * 19], ["OBJECT", "ENCODING", "i20"],
        ["SET", "empty", ""], "GET empty", "STRLEN empty", "OBJECT ENCODING empty",
        ["SET", "bin", b"a\x00b\r\n\xff"], "GET bin", "STRLEN bin",
        "GET missing", "SET k other", "GET k",
        "MGET k n missing bin",
    ])
    assert r[2] == b"$6\r\nembstr\r\n" and r[5] == b"$3\r\nint\r\n"
    assert r[15] == b"$6\r\nembstr\r\n" and r[17] == b"$3\r\nraw\r\n"


def test_set_option_combinations_match_redis(server, oracle):
    opts = ["NX", "XX", "GET", "KEEPTTL", "EX 100", "PX 100000",
            "EXAT %d" % FAR_SEC, "PXAT %d" % FAR_MS]
    cmds = ["SET pre v PXAT %d" % FAR_MS]
    for n in (1, 2, 3):
        for combo in itertools.permutations(opts, n):
            for key in ("pre", "fresh"):
                cmds.append("SET %s val %s" % (key, " ".join(combo)))
                cmds.append("GET %s" % key)
                cmds.append("DEL fresh")
    diff(server, oracle, cmds)


def test_set_option_errors(server, oracle):
    r = diff(server, oracle, [
        "SET k v EX", "SET k v PX", "SET k v EXAT", "SET k v PXAT",
        "SET k v EX 0", "SET k v EX -1", "SET k v PX 0", "SET k v PXAT 0",
        "SET k v EX abc", "SET k v EX 1.5", "SET k v EX 10 PX 10",
        "SET k v EX 10 EX 20", "SET k v NX NX", "SET k v NX XX",
        "SET k v XX NX", "SET k v KEEPTTL EX 10", "SET k v EX 10 KEEPTTL",
        "SET k v PERSIST", "SET k v FOO", "SET k v GET GET",
        "SET k v EX %d" % (LLONG_MAX // 1000), "SET k v EX %d" % (LLONG_MAX // 1000 + 1),
        "SET k v PX %d" % LLONG_MAX, "SET k v PX %d" % (LLONG_MAX - 1000),
        "SET k v EXAT %d" % (LLONG_MAX // 1000), "SET k v EXAT %d" % (LLONG_MAX // 1000 + 1),
        "SET k v PXAT %d" % LLONG_MAX, "SET k v EX 99999999999999999999",
        "GET k",
        "SET k v ex 10 nx", "SET k v Px 10 xx get",
    ])
    assert r[0] == b"-ERR syntax error\r\n"
    assert r[4] == b"-ERR invalid expire time in 'set' command\r\n"
    assert r[8] == b"-ERR value is not an integer or out of range\r\n"


def test_set_expire_is_absolute_and_keepttl_keeps_it(server, oracle):
    diff(server, oracle, [
        "SET k v EXAT %d" % FAR_SEC, "EXPIRETIME k", "PEXPIRETIME k",
        "SET k v2 KEEPTTL", "PEXPIRETIME k",
        "SET k v3", "PEXPIRETIME k",
        "SET k v PXAT %d" % (FAR_MS + 123), "PEXPIRETIME k",
        "SET k v EXAT 1", "GET k", "EXISTS k",
        "SET k v PXAT 1 GET", "GET k",
    ])
    c = server.client()
    c.execute_command("SET", "r", "v", "EX", "100")
    assert 99000 < c.pttl("r") <= 100000
    c.execute_command("SET", "r", "v", "PX", "5000")
    assert 4000 < c.pttl("r") <= 5000


def test_set_get_option_replies_old_value(server, oracle):
    r = diff(server, oracle, [
        "SET k v1 GET", "SET k v2 GET", "SET k v3 NX GET", "GET k",
        "SET k v4 XX GET", "SET nokey v XX GET", "EXISTS nokey",
        "SET k v5 NX", "SET nokey v XX",
    ])
    assert r[0] == b"$-1\r\n" and r[1] == b"$2\r\nv1\r\n"
    diff(server, oracle, ["SET k v NX", "SET k v NX", "SET k v GET NX"], resp=3)


def test_setnx_setex_psetex_getset(server, oracle):
    r = diff(server, oracle, [
        "SETNX k a", "SETNX k b", "GET k",
        "SETEX k 100 c", "GET k", "SETEX k 0 c", "SETEX k -5 c", "SETEX k x c",
        "PSETEX k 100000 d", "GET k", "PSETEX k 0 d", "PSETEX k 1.5 d",
        "SETEX k %d c" % (LLONG_MAX // 1000 + 1), "PSETEX k %d d" % LLONG_MAX,
        "SET t v PXAT %d" % FAR_MS, "GETSET t w", "PEXPIRETIME t", "GET t",
        "GETSET missing 10", "OBJECT ENCODING missing",
        "GETSET missing abc", "OBJECT ENCODING missing",
    ])
    assert r[5] == b"-ERR invalid expire time in 'setex' command\r\n"
    assert r[10] == b"-ERR invalid expire time in 'psetex' command\r\n"


def test_mset_msetnx(server, oracle):
    r = diff(server, oracle, [
        "MSET a 1 b 2 c 3", "MGET a b c d", "MSET a 1 b", "MSETNX a 1 b",
        "MSETNX x 1 y 2", "MGET x y", "MSETNX y 9 z 9", "EXISTS z",
        "MSET a 1 a 2 a 3", "GET a", "OBJECT ENCODING a",
        "SET t v PXAT %d" % FAR_MS, "MSET t w", "PEXPIRETIME t",
        "MSET", "MGET",
    ])
    assert r[2] == b"-ERR wrong number of arguments for 'mset' command\r\n"
    assert r[3] == b"-ERR wrong number of arguments for 'msetnx' command\r\n"


def test_overwrite_matrix_matches_redis(server, oracle):
    """SET and MSET over a string of every encoding and length class, with
    and without an expire: Cairn rewrites a short value in place when a
    fresh entry would take the same block, and builds a new one otherwise;
    neither may show in a reply."""
    vals = ["", "a", "abc", "0", "7", "12345", "-1", "9223372036854775807", "9223372036854775808",
            "1" * 20, "1" * 21, "007", "x" * 10, "x" * 11, "x" * 17, "x" * 18, "x" * 43, "x" * 44,
            "x" * 45, "y" * 60]
    rnd = random.Random(42)
    cmds = []
    for _ in range(600):
        k = rnd.choice(["k1", "k2", "k" * 30, "k" * 300])
        v = rnd.choice(vals)
        op = rnd.randrange(6)
        if op == 0:
            cmds.append(["SET", k, v])
        elif op == 1:
            cmds.append(["SET", k, v, "PXAT", FAR_MS + rnd.randrange(1000)])
        elif op == 2:
            cmds.append(["MSET", k, v, "other", v])
        elif op == 3:
            cmds.append(["SET", k, v, "EXAT", FAR_SEC])
        elif op == 4:
            cmds.append(["PERSIST", k])
        else:
            cmds.append(["GETSET", k, v])
        cmds += [["GET", k], ["OBJECT", "ENCODING", k], ["STRLEN", k], ["PEXPIRETIME", k]]
    cmds.append(["DBSIZE"])
    diff(server, oracle, cmds)


def test_overwrite_in_place_takes_a_fresh_entrys_block(server):
    """An overwrite kept in place must use what a fresh entry for the same
    key and value would: MEMORY USAGE equal to a key set once."""
    a = Conn(server)
    try:
        for old, new in [("abc", "xyz"), ("12345", "99"), ("x" * 10, "x" * 11), ("x" * 17, "x" * 18),
                         ("x" * 40, "x" * 44), ("abc", "x" * 44), ("x" * 44, "a")]:
            for ttl in ([], ["PXAT", str(FAR_MS)]):
                got = a.run([["DEL", "ka", "kb"], ["SET", "ka", old] + ttl, ["SET", "ka", new] + ttl,
                             ["SET", "kb", new] + ttl, ["MEMORY", "USAGE", "ka"], ["MEMORY", "USAGE", "kb"],
                             ["GET", "ka"], ["PEXPIRETIME", "ka"]])
                assert got[4] == got[5], (old, new, ttl, got)
                assert got[6] == b"$%d\r\n%s\r\n" % (len(new), new.encode())
                assert got[7] == (b":%d\r\n" % FAR_MS if ttl else b":-1\r\n")
    finally:
        a.close()


def test_overwrite_keeps_lfu_counter_as_redis(server, oracle):
    """Under an LFU policy Redis counts an overwrite as an access of the key
    and the new value keeps the old one's counter (lfu-log-factor 0: every
    access adds one).  maxmemory is set so that Redis does not share small
    integers."""
    setup = ["CONFIG SET maxmemory-policy allkeys-lfu", "CONFIG SET lfu-log-factor 0",
             "CONFIG SET maxmemory 1gb"]
    steps = [
        "SET k v", "GET k", "GET k", "SET k w", "SET k 12345", "SET k 13345", "MSET k 14345",
        "SET k 15 EX 100", "SET k 16 EX 100", ["SET", "k", "x" * 60], "GETSET k a", "SETEX k 100 b",
        "PSETEX k 100000 b", "SET k c KEEPTTL", "SET k d XX", "SET k d NX", "SET k e GET", "APPEND k f",
        "SET k 50000", "INCR k", "INCRBYFLOAT k 1.5", "SETRANGE k 0 9", "SETBIT k 1 1",
        "SADD s1 a b", "SADD s2 b c", "SUNIONSTORE k s1 s2", "SUNIONSTORE k s1 s2", "ZADD z1 1 a",
        "ZUNIONSTORE k 1 z1", "RPUSH l 3 1 2", "SORT l STORE k", "SET b1 ab", "BITOP AND k b1 b1",
        "SET src s", "GET src", "RENAME src k", "SET src s", "COPY src k REPLACE", "MSETNX k2 1000000",
        "SET k2 2000000",
    ]
    cmds = list(setup)
    for s in steps:
        cmds += [s, "OBJECT FREQ k"]
    diff(server, oracle, cmds)


def test_overwrite_resets_idle_time_as_redis(server, oracle):
    """Without an LFU policy an overwritten key is a new value: idle 0."""
    prep = ["SET a abc", "SET b 12345", "SET c abc", ["SET", "d", "x" * 60]]
    diff(server, oracle, prep)
    time.sleep(2.2)
    for srv in (server, oracle):  # idle now (1-3 s: each server's clock ticks on its own)
        c = Conn(srv)
        try:
            assert b":0\r\n" not in c.run([["OBJECT", "IDLETIME", k] for k in "abcd"])
        finally:
            c.close()
    r = diff(server, oracle, ["SET a xyz", "OBJECT IDLETIME a", "SET b 54321", "OBJECT IDLETIME b",
                              "MSET c def", "OBJECT IDLETIME c", ["SET", "d", "y" * 60], "OBJECT IDLETIME d"])
    assert r[1] == r[3] == r[5] == r[7] == b":0\r\n"


def test_getex_options(server, oracle):
    r = diff(server, oracle, [
        "SET k v", "GETEX k", "PEXPIRETIME k",
        "GETEX k EXAT %d" % FAR_SEC, "EXPIRETIME k",
        "GETEX k PXAT %d" % (FAR_MS + 5), "PEXPIRETIME k",
        "GETEX k PERSIST", "PEXPIRETIME k", "GETEX k PERSIST",
        "GETEX k EX 0", "GETEX k EX -1", "GETEX k PX abc", "GETEX k EX",
        "GETEX k NX", "GETEX k KEEPTTL", "GETEX k GET", "GETEX k EX 10 PX 10",
        "GETEX k PERSIST EX 10", "GETEX k EX 10 PERSIST", "GETEX k EX 10 EX 20",
        "GETEX k EXAT %d" % (LLONG_MAX // 1000 + 1),
        "GETEX missing EX 10", "GETEX missing EX 0", "GETEX missing FOO",
        "GETEX k PXAT 1", "EXISTS k", "GET k",
        "SET k v", "GETEX k EXAT 1", "EXISTS k",
    ])
    assert r[10] == b"-ERR invalid expire time in 'getex' command\r\n"
    assert r[14] == b"-ERR syntax error\r\n"
    c = server.client()
    c.set("r", "v")
    assert c.execute_command("GETEX", "r", "EX", "100") == b"v"
    assert 99000 < c.pttl("r") <= 100000


def test_getdel(server, oracle):
    diff(server, oracle, [
        "SET k v", "GETDEL k", "EXISTS k", "GETDEL k",
        "SET n 42", "GETDEL n", "GETDEL n",
    ])


def test_wrong_type_errors(server, oracle):
    require_commands(server, "lpush")
    r = diff(server, oracle, [
        "LPUSH l x",
        "GET l", "GETSET l v", "GETDEL l", "GETEX l", "GETEX l PERSIST", "GETEX l EX 0", "STRLEN l",
        "APPEND l x", "SETRANGE l 0 x", ["SETRANGE", "l", "0", ""],
        "GETRANGE l 0 -1", "SUBSTR l 0 -1", "INCR l", "DECR l", "INCRBY l 1",
        "DECRBY l 1", "INCRBYFLOAT l 1", "INCRBYFLOAT l notafloat",
        "SET l v GET", "SET l v NX GET", "MGET l missing",
        "LCS l missing", "LCS missing l", "LCS l missing BADOPT",
        "SET l v", "GET l",
    ])
    assert r[1] == b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert r[24] == b"-ERR The specified keys must contain string values\r\n"


# ------------------------------------------------------------ APPEND / STRLEN / ranges

def test_append_strlen_and_encodings(server, oracle):
    diff(server, oracle, [
        "APPEND k 123", "OBJECT ENCODING k", "APPEND k 456", "GET k",
        "OBJECT ENCODING k", "STRLEN k",
        "APPEND s hello", "OBJECT ENCODING s", ["APPEND", "s", ""], "OBJECT ENCODING s",
        "SET n 77", ["APPEND", "n", ""], "OBJECT ENCODING n", "INCR n", "OBJECT ENCODING n",
        "SET t v PXAT %d" % FAR_MS, "APPEND t w", "PEXPIRETIME t",
        "STRLEN missing", "SET i -123", "STRLEN i",
        ["APPEND", "e", ""], "EXISTS e", "OBJECT ENCODING e",
    ])


def test_getrange_substr_index_matrix(server, oracle):
    idx = [LLONG_MIN, -100, -12, -11, -6, -1, 0, 1, 4, 10, 11, 100, LLONG_MAX]
    cmds = ["SET s Hello_World", ["SET", "e", ""], "SET n -12345"]
    for key in ("s", "e", "n", "missing"):
        for a in idx:
            for b in idx:
                cmds.append(["GETRANGE", key, a, b])
    cmds += ["SUBSTR s 0 4", "SUBSTR s -5 -1", "GETRANGE s a 1", "GETRANGE s 1 b",
             "GETRANGE missing x 1", "GETRANGE s 0 99999999999999999999"]
    diff(server, oracle, cmds)


def test_setrange_behaviour(server, oracle):
    r = diff(server, oracle, [
        "SETRANGE k 0 hello", "GET k", "OBJECT ENCODING k",
        "SETRANGE k 10 world", ["GET", "k"], "STRLEN k",
        "SETRANGE k 2 XY", "GET k",
        ["SETRANGE", "missing", "5", ""], "EXISTS missing",
        ["SETRANGE", "missing", "-1", ""],
        "SETRANGE k -1 x", "SETRANGE k abc x",
        "SET n 12", ["SETRANGE", "n", "0", ""], "OBJECT ENCODING n",
        "SETRANGE n 0 3", "OBJECT ENCODING n", "GET n", "INCR n", "OBJECT ENCODING n",
        "SET t v PXAT %d" % FAR_MS, "SETRANGE t 3 x", "PEXPIRETIME t", "GET t",
        ["SETRANGE", "z", "3", "a"], "GET z",
    ])
    assert r[11] == b"-ERR offset is out of range\r\n"


def test_setrange_respects_proto_max_bulk_len_setting(server, oracle):
    r = diff(server, oracle, [
        "CONFIG SET proto-max-bulk-len 1048576",
        "SETRANGE k 1048575 x", "STRLEN k", "SETRANGE k 1048576 x",
        "SETRANGE k 1048575 xy", "SETRANGE k 0 x", "STRLEN k",
        "APPEND k y", "DEL k", "APPEND k y", "SETRANGE k 1048574 a",
        "SETRANGE other 1048576 x", "EXISTS other",
        "SETRANGE other %d x" % LLONG_MAX,
    ])
    assert r[3] == b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"


def test_setrange_default_limit_536870911_ok_536870912_refused(server, oracle):
    # The accepted case allocates 512 MB on each server; it is freed at once.
    r = diff(server, oracle, [
        "SETRANGE big 536870912 x", "EXISTS big",
        "SETRANGE big 536870911 x", "STRLEN big", "GETRANGE big -1 -1",
        "DEL big",
    ])
    assert r[0] == b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
    assert r[2] == b":536870912\r\n"


# ------------------------------------------------------------ counters

def test_incr_decr_boundaries_and_errors(server, oracle):
    r = diff(server, oracle, [
        "INCR c", "INCR c", "DECR c", "DECR c", "DECR c", "OBJECT ENCODING c",
        "INCRBY c 10", "DECRBY c 20", "INCRBY c -5",
        "SET m %d" % LLONG_MAX, "INCR m", "INCRBY m 0", "DECR m", "INCR m",
        "SET m %d" % LLONG_MIN, "DECR m", "INCRBY m -1", "INCR m", "DECRBY m 1",
        "DECRBY m %d" % LLONG_MIN, "INCRBY m %d" % LLONG_MIN, "INCRBY x %d" % LLONG_MIN,
        "INCRBY m %d" % LLONG_MAX, "DECRBY m %d" % LLONG_MAX,
        "DECRBY y %d" % LLONG_MIN, "EXISTS y",
        "SET b abc", "INCR b", ["SET", "b", " 1"], "INCR b", ["SET", "b", "1 "], "INCR b", "SET b 01", "INCR b",
        "SET b -0", "INCR b", "SET b 1.0", "INCR b", "SET b +1", "INCR b",
        "SET b 9223372036854775808", "INCR b", ["SET", "b", ""], "INCR b",
        "INCRBY c abc", "INCRBY c 1.5", "INCRBY c 99999999999999999999", ["DECRBY", "c", ""],
        "APPEND r 5", "APPEND r 5", "OBJECT ENCODING r", "INCR r", "OBJECT ENCODING r",
        "SET e 10000", "INCR e", "OBJECT ENCODING e", "SET e 9998", "INCR e",
        "SET t 5 PXAT %d" % FAR_MS, "INCR t", "PEXPIRETIME t", "SET t2 99999999999999999 PXAT %d" % FAR_MS,
        "APPEND t2 9", "INCRBY t2 1", "PEXPIRETIME t2", "OBJECT ENCODING t2",
    ])
    assert r[10] == b"-ERR increment or decrement would overflow\r\n"
    assert r[19] == b"-ERR decrement would overflow\r\n"
    assert r[27] == b"-ERR value is not an integer or out of range\r\n"


INCRBYFLOAT_VALUES = [
    "0", "1", "-1", "1.5", "0.1", "0.2", "-0.0", "10.5", "3.0e3", "5.0e3",
    "1e-5", "1.23456789012345678", "17179869184", "-17179869184.25",
    "1e308", "1e4000", "-1e4000", "0x10", "1e20", "123456789012345678901234567890",
    "9223372036854775807", "2.5e-7", ".5", "5.", "1e+2",
]


def test_incrbyfloat_formatting_matrix(server, oracle):
    cmds = []
    for base in ["0", "10", "1.1", "-5", "3.0e3", "1e20", "abc", None]:
        for inc in INCRBYFLOAT_VALUES:
            if base is None:
                cmds.append("DEL f")
            else:
                cmds.append(["SET", "f", base])
            cmds += [["INCRBYFLOAT", "f", inc], "GET f", "OBJECT ENCODING f"]
    diff(server, oracle, cmds)


def test_incrbyfloat_errors_and_specials(server, oracle):
    r = diff(server, oracle, [
        "INCRBYFLOAT f abc", ["INCRBYFLOAT", "f", ""],
        ["INCRBYFLOAT", "f", " 1"],
        ["INCRBYFLOAT", "f", "1 "], "INCRBYFLOAT f nan", "INCRBYFLOAT f inf",
        "INCRBYFLOAT f -inf", "INCRBYFLOAT f +inf", "EXISTS f",
        "SET f 1e4932", "INCRBYFLOAT f 0", "INCRBYFLOAT f 1e4932",
        "SET f inf", "INCRBYFLOAT f 1", "SET f nan", "INCRBYFLOAT f 1",
        "SET f 1", "INCRBYFLOAT f 1.5", "OBJECT ENCODING f",
        "SET f 1 PXAT %d" % FAR_MS, "INCRBYFLOAT f 0.5", "PEXPIRETIME f",
        ["INCRBYFLOAT", "f", "1" * 5001], ["INCRBYFLOAT", "f", "1" * 4000],
        ["SET", "h", "1e4900"], "INCRBYFLOAT h 1", "STRLEN h", "OBJECT ENCODING h",
        "SET z 0", "INCRBYFLOAT z -0.0", "INCRBYFLOAT z -0", "SET z -0.5", "INCRBYFLOAT z 0.5",
    ])
    assert r[0] == b"-ERR value is not a valid float\r\n"
    assert r[5] == b"-ERR increment would produce NaN or Infinity\r\n"


# ------------------------------------------------------------ LCS

LCS_PAIRS = [
    ("ohmytext", "mynewtext"), ("", "abc"), ("abc", ""), ("abc", "abc"),
    ("abcdef", "xyz"), ("aaaa", "aa"), ("abcabcabc", "cbacbacba"),
    ("12345", "345"), ("rosettacode", "raisethysword"),
    ("a" * 50 + "b" * 50, "b" * 30 + "a" * 30),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_lcs_all_reply_shapes(server, oracle, resp):
    cmds = []
    for a, b in LCS_PAIRS:
        cmds += [["SET", "a", a], ["SET", "b", b]]
        for opts in ([], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"],
                     ["IDX", "MINMATCHLEN", "2"], ["IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"],
                     ["MINMATCHLEN", "-3", "IDX"], ["WITHMATCHLEN"], ["len"], ["idx", "len"]):
            cmds.append(["LCS", "a", "b"] + opts)
            cmds.append(["LCS", "b", "a"] + opts)
    cmds += [["LCS", "a", "missing"], ["LCS", "missing", "b", "IDX"],
             ["SET", "n", "12345"], ["SET", "m", "2345"], ["LCS", "n", "m", "IDX"],
             ["LCS", "a", "b", "MINMATCHLEN"], ["LCS", "a", "b", "MINMATCHLEN", "x"],
             ["LCS", "a", "b", "FOO"], ["LCS", "a", "b", "LEN", "IDX"]]
    diff(server, oracle, cmds, resp=resp)


def test_lcs_random_strings(server, oracle):
    rnd = random.Random(7)
    cmds = []
    for _ in range(60):
        a = "".join(rnd.choice("ab c") for _ in range(rnd.randint(0, 40)))
        b = "".join(rnd.choice("abc ") for _ in range(rnd.randint(0, 40)))
        cmds += [["SET", "a", a], ["SET", "b", b], ["LCS", "a", "b"], ["LCS", "a", "b", "LEN"],
                 ["LCS", "a", "b", "IDX", "WITHMATCHLEN"],
                 ["LCS", "a", "b", "IDX", "MINMATCHLEN", str(rnd.randint(0, 4))]]
    diff(server, oracle, cmds)


def test_lcs_error_texts(oracle, server):
    r = diff(server, oracle, ["SET a x", "SET b y", "LCS a b LEN IDX", "LCS a b BAD"])
    assert r[2] == b"-ERR If you want both the length and indexes, please just use IDX.\r\n"
    assert r[3] == b"-ERR syntax error\r\n"


# ------------------------------------------------------------ randomized mix

def test_random_string_command_mix(server, oracle):
    rnd = random.Random(1234)
    keys = ["k1", "k2", "k3"]
    vals = ["", "0", "1", "-1", "42", "abc", "9223372036854775806", "3.5", "x" * 44, "y" * 60]
    cmds = []
    for _ in range(1500):
        k = rnd.choice(keys)
        op = rnd.randrange(12)
        if op == 0:
            cmds.append(["SET", k, rnd.choice(vals)])
        elif op == 1:
            cmds.append(["APPEND", k, rnd.choice(vals)])
        elif op == 2:
            cmds.append(["SETRANGE", k, rnd.randint(-1, 70), rnd.choice(vals)])
        elif op == 3:
            cmds.append(["GETRANGE", k, rnd.randint(-80, 80), rnd.randint(-80, 80)])
        elif op == 4:
            cmds.append(["INCRBY", k, rnd.choice([1, -1, 1000, LLONG_MAX, LLONG_MIN + 1])])
        elif op == 5:
            cmds.append(["INCRBYFLOAT", k, rnd.choice(["0.5", "-2", "1e3", "0.1"])])
        elif op == 6:
            cmds.append(["GETSET", k, rnd.choice(vals)])
        elif op == 7:
            cmds.append(["MSETNX", k, "1", rnd.choice(keys), "2"])
        elif op == 8:
            cmds.append(["GETDEL", k])
        elif op == 9:
            cmds.append(["STRLEN", k])
        elif op == 10:
            cmds.append(["LCS", k, rnd.choice(keys), "IDX"])
        else:
            cmds.append(["DECR", k])
        cmds.append(["GET", k])
        cmds.append(["OBJECT", "ENCODING", k])
    diff(server, oracle, cmds)


# ------------------------------------------------------------ keyspace events

def collect_events(srv, cmds):
    require_commands(srv, "psubscribe")
    c = srv.client()
    c.config_set("notify-keyspace-events", "KEA")
    p = c.pubsub()
    p.psubscribe("__keyevent@0__:*")
    p.get_message(timeout=2)
    w = srv.client()
    out = []
    for cmd in cmds:
        try:
            w.execute_command(*as_cmd(cmd))
        except Exception:
            pass
        # cmd's events reach the subscriber before this message does.
        w.execute_command("PUBLISH", "__keyevent@0__:__mark__", "__mark__")
        evs = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            m = p.get_message(timeout=1)
            if m is None:
                continue
            if m["data"] == b"__mark__":
                break
            evs.append((m["channel"].split(b":")[-1], m["data"]))
        else:
            raise AssertionError("the mark after %r never arrived" % (cmd,))
        out.append((cmd, evs))
    p.close()
    return out


def test_keyspace_event_names(server, oracle):
    cmds = [
        "SET k v", "SET k v EX 100", "SET k v NX", "GETEX k PERSIST", "GETEX k PERSIST",
        "GETEX k PX 100000", "GETEX k EXAT 1", "SET k 1", "INCR k", "DECRBY k 2",
        "INCRBYFLOAT k 1.5", "APPEND k x", "SETRANGE k 0 y", ["SETRANGE", "k", "0", ""],
        "GETDEL k", "GETDEL k", "MSET a 1 b 2", "MSETNX a 1 c 2", "MSETNX c 1 d 2",
        "GETSET a 3", "SETEX a 100 v", "PSETEX a 100000 v", "SETNX a v", "SETNX e v",
    ]
    assert collect_events(server, cmds) == collect_events(oracle, cmds)
