"""Conditional writes and the compatibility commands of newer servers
(issue 38): SET ... IFEQ/IFNE/IFDEQ/IFDNE, DELEX, DIGEST, MSETEX (Redis
8.4), DELIFEQ (Valkey 9.0), CLIENT NO-TOUCH and WAITAOF (Redis 7.2),
XREAD ... + (Redis 7.4).

Redis 7.0.15 cannot be the oracle here: the reply tables and error texts
below are those of the newer servers' documentation and test suites
(Redis's tests/unit/type/string.tcl, the commands' JSON files).  Texts not
confirmed from a source would be marked UNCONFIRMED where asserted (none
is left).
The digest reference is python3-xxhash (XXH3-64), plus a fixed vector from
Redis's own test ("00006c38adf31777", leading zeros kept)."""
import socket
import threading
import time

import pytest
import redis

from test_repl import link_up, same_digest
from waithelp import wait_for

try:
    import xxhash
except ImportError:  # scripts/deps.sh test installs python3-xxhash
    xxhash = None

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
DIGEST_LEN_ERR = "must be exactly 16 hexadecimal characters"  # Redis 8.4 (ERR prefix)
# Redis 8.4's texts as its behaviour is recorded by clients' suites run
# against it (fakeredis's test_delex_* marked min_redis_ver 8.4, node and
# .NET clients asserting the full wire text).
INVALID_COND = "Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE"
# DELEX with a condition (even an invalid one) on a key of another type.
DELEX_WRONGTYPE_WIRE = b"-ERR Key should be of string type if conditions are specified\r\n"
REDIS_VECTOR = (b"v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd",
                b"00006c38adf31777")


def ref_digest(value):
    if xxhash is None:
        pytest.skip("python3-xxhash missing (sh scripts/deps.sh test)")
    return xxhash.xxh3_64_hexdigest(value).encode()


def err(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return str(e.value)


def client(srv):
    """A client whose COMMAND and SET replies stay raw (redis-py 4 parses
    every COMMAND subcommand's reply as COMMAND's, and SET's as a bool)."""
    c = srv.client()
    c.response_callbacks.pop("COMMAND", None)
    c.response_callbacks.pop("SET", None)
    return c


@pytest.fixture
def r(server):
    return client(server)


# --- DIGEST ---

@pytest.mark.parametrize("value", [b"", b"hello", b"12345", b"-999", b"\x00\x01\xff\xfe", b"x" * 44, b"y" * 45,
                                   b"Lorem ipsum dolor sit amet. " * 1000, "Hello \u4e16\u754c".encode()])
def test_digest_is_xxh3_of_the_value(r, value):
    r.set("k", value)
    assert r.execute_command("DIGEST", "k") == ref_digest(value)


def test_digest_fixed_vector_and_int_encoding(r):
    r.set("foo", REDIS_VECTOR[0])
    assert r.execute_command("DIGEST", "foo") == REDIS_VECTOR[1]
    r.set("n", 12345)
    assert r.object("encoding", "n") == b"int"
    assert r.execute_command("DIGEST", "n") == ref_digest(b"12345")
    r.incr("n")
    assert r.execute_command("DIGEST", "n") == ref_digest(b"12346")


def test_digest_missing_wrongtype_arity(r):
    assert r.execute_command("DIGEST", "nokey") is None
    r.lpush("l", "a")
    assert err(r.execute_command, "DIGEST", "l") == WRONGTYPE
    assert err(r.execute_command, "DIGEST") == "wrong number of arguments for 'digest' command"
    assert err(r.execute_command, "DIGEST", "a", "b") == "wrong number of arguments for 'digest' command"


# --- SET IF* ---

OLD = b"hello"
# What each condition does, per state of the key: True = set, False = not.
TABLE = {
    "IFEQ": {"missing": False, "equal": True, "unequal": False},
    "IFNE": {"missing": True, "equal": False, "unequal": True},
    "IFDEQ": {"missing": False, "equal": True, "unequal": False},
    "IFDNE": {"missing": True, "equal": False, "unequal": True},
}


def arg_for(cond, state):
    value = OLD if state == "equal" else b"other"
    return ref_digest(value) if cond.startswith("IFD") else value


@pytest.mark.parametrize("get", [False, True])
@pytest.mark.parametrize("state", ["missing", "equal", "unequal"])
@pytest.mark.parametrize("cond", list(TABLE))
def test_set_condition_reply_table(r, cond, state, get):
    if state != "missing":
        r.set("k", OLD)
    args = ["SET", "k", "new", cond, arg_for(cond, state)] + (["GET"] if get else [])
    reply = r.execute_command(*args)
    sets = TABLE[cond][state]
    if get:  # the old value whatever the condition said
        assert reply == (None if state == "missing" else OLD)
    else:
        assert reply == (b"OK" if sets else None)
    expected = b"new" if sets else (None if state == "missing" else OLD)
    assert r.get("k") == expected


@pytest.mark.parametrize("get", [False, True])
@pytest.mark.parametrize("cond", list(TABLE))
def test_set_condition_wrong_type(r, cond, get):
    r.lpush("k", "a")
    args = ["SET", "k", "v", cond, "0123456789abcdef"] + (["GET"] if get else [])
    assert err(r.execute_command, *args) == WRONGTYPE
    assert r.type("k") == b"list"
    # A short digest: the type is checked first.
    assert err(r.execute_command, "SET", "k", "v", cond, "12") == WRONGTYPE


def test_set_digest_is_case_insensitive_and_checked_on_existing_keys(r):
    r.set("k", OLD)
    upper = ref_digest(OLD).upper()
    assert r.execute_command("SET", "k", "v", "IFDNE", upper) is None
    assert r.execute_command("SET", "k", "v", "IFDEQ", upper) == b"OK"
    d = ref_digest(b"v")
    for bad in (d[1:], b"0" + d, b""):
        for cond in ("IFDEQ", "IFDNE"):
            assert err(r.execute_command, "SET", "k", "w", cond, bad) == DIGEST_LEN_ERR
    assert r.get("k") == b"v"
    # 16 characters that are not hex: a digest that never matches.
    assert r.execute_command("SET", "k", "w", "IFDEQ", "zzzzzzzzzzzzzzzz") is None
    assert r.execute_command("SET", "k", "w", "IFDNE", "zzzzzzzzzzzzzzzz") == b"OK"
    # A missing key: the digest is not looked at.
    assert r.execute_command("SET", "m1", "v", "IFDEQ", "12") is None
    assert r.execute_command("SET", "m2", "v", "IFDNE", "12") == b"OK"
    assert r.exists("m1") == 0 and r.get("m2") == b"v"


def test_set_condition_compares_bytes(r):
    r.set("k", 12345)
    assert r.execute_command("SET", "k", "a", "IFEQ", "12345") == b"OK"
    r.set("k", "")
    assert r.execute_command("SET", "k", "b", "IFNE", "") is None
    assert r.execute_command("SET", "k", "b", "IFEQ", "") == b"OK"
    r.set("k", b"\x00\x01\xff")
    assert r.execute_command("SET", "k", "c", "IFEQ", b"\x00\x01\xfe") is None
    assert r.execute_command("SET", "k", "c", "ifeq", b"\x00\x01\xff") == b"OK"
    r.set("k", "Hello")
    assert r.execute_command("SET", "k", "d", "IfEq", "hello") is None


@pytest.mark.parametrize("args", [
    ["NX", "IFEQ", "a"], ["IFEQ", "a", "NX"], ["XX", "IFNE", "a"], ["IFNE", "a", "XX"],
    ["NX", "IFDEQ", "0123456789abcdef"], ["IFDNE", "0123456789abcdef", "XX"],
    ["IFEQ", "a", "IFNE", "b"], ["IFNE", "b", "IFEQ", "a"], ["IFEQ", "a", "IFDEQ", "0123456789abcdef"],
    ["IFDEQ", "0123456789abcdef", "IFDNE", "fedcba9876543210"], ["IFEQ"], ["GET", "IFNE"], ["IFDEQ"],
    ["IFEQ", "a", "PERSIST"], ["IFEQ", "a", "EX", "1", "KEEPTTL"]])
def test_set_condition_syntax_errors(r, args):
    r.set("k", "a")
    assert err(r.execute_command, "SET", "k", "v", *args) == "syntax error"
    assert r.get("k") == b"a"


def test_set_condition_repeated_and_with_expiry(r):
    r.set("k", "a")
    assert r.execute_command("SET", "k", "b", "IFEQ", "x", "IFEQ", "a") == b"OK"  # the last one counts
    assert r.execute_command("SET", "k", "c", "IFEQ", "b", "EX", 100) == b"OK"
    assert 90 < r.ttl("k") <= 100
    assert r.execute_command("SET", "k", "d", "IFEQ", "c", "KEEPTTL") == b"OK"
    assert 90 < r.ttl("k") <= 100
    assert r.execute_command("SET", "k", "e", "IFEQ", "d") == b"OK"
    assert r.ttl("k") == -1
    assert r.execute_command("SET", "k", "f", "IFEQ", "nope", "PX", 5000) is None
    assert r.ttl("k") == -1 and r.get("k") == b"e"
    assert err(r.execute_command, "SET", "k", "f", "IFEQ", "e", "EX", 0) == "invalid expire time in 'set' command"
    assert r.get("k") == b"e"


# --- DELEX ---

@pytest.mark.parametrize("state", ["missing", "equal", "unequal"])
@pytest.mark.parametrize("cond", list(TABLE))
def test_delex_reply_table(r, cond, state):
    if state != "missing":
        r.set("k", OLD)
    deletes = TABLE[cond][state] and state != "missing"
    assert r.execute_command("DELEX", "k", cond, arg_for(cond, state)) == (1 if deletes else 0)
    assert r.exists("k") == (0 if deletes or state == "missing" else 1)


def test_delex_without_condition_and_errors(r):
    r.set("s", "v")
    r.hset("h", "f", "v")
    r.zadd("z", {"m": 1})
    for k in ("s", "h", "z"):
        assert r.execute_command("DELEX", k) == 1
    assert r.execute_command("DELEX", "s") == 0
    r.lpush("l", "a")
    for cond in TABLE:
        assert err(r.execute_command, "DELEX", "l", cond, "0123456789abcdef") == DELEX_WRONGTYPE_WIRE[5:-2].decode()
    assert r.exists("l") == 1
    sock = socket.create_connection((r.connection_pool.connection_kwargs["host"],
                                     r.connection_pool.connection_kwargs["port"]))
    sock.settimeout(10)
    sock.sendall(b"*4\r\n$5\r\nDELEX\r\n$1\r\nl\r\n$4\r\nIFEQ\r\n$1\r\na\r\n")
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(4096)
        assert chunk
        data += chunk
    sock.close()
    assert data == DELEX_WRONGTYPE_WIRE
    arity = "wrong number of arguments for 'delex' command"
    for args in (["DELEX"], ["DELEX", "nokey", "IFEQ"], ["DELEX", "l", "IFEQ"], ["DELEX", "s", "IFEQ", "a", "b"]):
        assert err(r.execute_command, *args) == arity
    r.set("s", "hello")
    for bad in ("INVALID", "IF", "EQ", "NX"):
        assert err(r.execute_command, "DELEX", "s", bad, "hello") == INVALID_COND
        # the type is checked before the condition is read
        assert err(r.execute_command, "DELEX", "l", bad, "a") == DELEX_WRONGTYPE_WIRE[5:-2].decode()
    assert r.execute_command("DELEX", "nokey", "INVALID", "x") == 0  # missing: looked up first
    d = ref_digest(b"hello")
    for cond in ("IFDEQ", "IFDNE"):
        for bad in (d[1:], b"0" + d, b""):
            assert err(r.execute_command, "DELEX", "s", cond, bad) == DIGEST_LEN_ERR
        assert r.execute_command("DELEX", "nokey", cond, "12") == 0
    assert r.execute_command("DELEX", "s", "IFDNE", d.upper()) == 0
    assert r.execute_command("DELEX", "s", "IFDEQ", d.upper()) == 1


def test_delex_int_encoded_and_binary(r):
    r.set("k", -999)
    assert r.execute_command("DELEX", "k", "IFEQ", "-999") == 1
    r.set("k", b"\x00\x01\x02")
    assert r.execute_command("DELEX", "k", "IFNE", b"\x00\x01\x02") == 0
    assert r.execute_command("DELEX", "k", "IFEQ", b"\x00\x01\x02") == 1


# --- DELIFEQ (Valkey 9.0) ---

def test_delifeq(r):
    assert r.execute_command("DELIFEQ", "k", "v") == 0
    r.set("k", "v")
    assert r.execute_command("DELIFEQ", "k", "w") == 0
    assert r.execute_command("DELIFEQ", "k", "v") == 1
    assert r.exists("k") == 0
    r.set("n", 42)
    assert r.execute_command("DELIFEQ", "n", "42") == 1
    r.sadd("set", "v")
    assert err(r.execute_command, "DELIFEQ", "set", "v") == WRONGTYPE
    assert err(r.execute_command, "DELIFEQ", "k") == "wrong number of arguments for 'delifeq' command"


# --- MSETEX ---

def test_msetex_sets_all_with_one_expiry(r):
    r.lpush("b", "old-list")
    assert r.execute_command("MSETEX", 2, "a", "1", "b", "2", "EX", 100) == 1
    assert r.mget("a", "b") == [b"1", b"2"]
    assert 90 < r.ttl("a") <= 100 and 90 < r.ttl("b") <= 100
    assert r.execute_command("MSETEX", 1, "a", "3", "PX", 50000) == 1
    assert 40000 < r.pttl("a") <= 50000
    at = int(time.time()) + 1000
    assert r.execute_command("MSETEX", 1, "a", "4", "EXAT", at) == 1
    assert r.expiretime("a") == at
    assert r.execute_command("MSETEX", 1, "a", "5", "PXAT", at * 1000 + 7) == 1
    assert r.pexpiretime("a") == at * 1000 + 7
    assert r.execute_command("MSETEX", 2, "a", "6", "b", "7", "KEEPTTL") == 1
    assert r.pexpiretime("a") == at * 1000 + 7 and 0 < r.ttl("b") <= 100
    assert r.execute_command("MSETEX", 2, "a", "8", "b", "9") == 1  # no option: the TTLs go, as MSET
    assert r.ttl("a") == -1 and r.ttl("b") == -1 and r.mget("a", "b") == [b"8", b"9"]
    # Options in any order, repeated expiry: the last value.
    assert r.execute_command("MSETEX", 1, "c", "1", "EX", 5, "XX") == 0
    assert r.execute_command("MSETEX", 1, "c", "1", "EX", 5, "NX", "EX", 200) == 1
    assert 190 < r.ttl("c") <= 200


def test_msetex_nx_xx_all_or_nothing(r):
    r.set("a", "x")
    assert r.execute_command("MSETEX", 2, "a", "1", "b", "2", "NX") == 0
    assert r.get("a") == b"x" and r.exists("b") == 0
    assert r.execute_command("MSETEX", 2, "a", "1", "b", "2", "XX", "EX", 10) == 0
    assert r.get("a") == b"x" and r.ttl("a") == -1
    assert r.execute_command("MSETEX", 2, "b", "1", "c", "2", "NX") == 1
    assert r.execute_command("MSETEX", 2, "b", "3", "c", "4", "XX") == 1
    assert r.mget("b", "c") == [b"3", b"4"]


@pytest.mark.parametrize("args,error", [
    ([0, "a", "1"], "invalid numkeys value"),
    ([-1, "a", "1"], "invalid numkeys value"),
    (["x", "a", "1"], "invalid numkeys value"),
    ([2147483648, "a", "1"], "invalid numkeys value"),
    ([2, "a", "1"], "wrong number of key-value pairs"),
    ([3, "a", "1", "b", "2"], "wrong number of key-value pairs"),
    ([1, "a", "1", "NX", "XX"], "syntax error"),
    ([1, "a", "1", "XX", "NX"], "syntax error"),
    ([1, "a", "1", "GET"], "syntax error"),
    ([1, "a", "1", "IFEQ", "x"], "syntax error"),
    ([1, "a", "1", "PERSIST"], "syntax error"),
    ([1, "a", "1", "EX"], "syntax error"),
    ([1, "a", "1", "EX", 1, "KEEPTTL"], "syntax error"),
    ([1, "a", "1", "KEEPTTL", "PX", 1], "syntax error"),
    ([1, "a", "1", "EX", 1, "PX", 1], "syntax error"),
    ([1, "a", "1", "b"], "syntax error"),
    ([1, "a", "1", "EX", 0], "invalid expire time in 'msetex' command"),
    ([1, "a", "1", "PX", -5], "invalid expire time in 'msetex' command"),
    ([1, "a", "1", "EX", "x"], "value is not an integer or out of range"),
    ([1, "a", "1", "EX", 9223372036854775], "invalid expire time in 'msetex' command"),
])
def test_msetex_errors(r, args, error):
    assert err(r.execute_command, "MSETEX", *args) == error
    assert r.exists("a") == 0


def test_msetex_arity(r):
    assert err(r.execute_command, "MSETEX", 1, "a") == "wrong number of arguments for 'msetex' command"


# --- in transactions and scripts ---

def test_in_multi_and_scripts(r):
    r.set("k", "a")
    p = r.pipeline(transaction=True)
    p.execute_command("SET", "k", "b", "IFEQ", "a")
    p.execute_command("DIGEST", "k")
    p.execute_command("DELEX", "k", "IFEQ", "zz")
    p.execute_command("MSETEX", 1, "m", "1", "EX", 100)
    p.execute_command("DELIFEQ", "m", "1")
    assert p.execute() == [b"OK", ref_digest(b"b"), 0, 1, 1]
    lua = ("local d = redis.call('DIGEST', KEYS[1]) "
           "redis.call('SET', KEYS[1], ARGV[1], 'IFDEQ', d) "
           "return {d, redis.call('GET', KEYS[1]), redis.call('DELEX', KEYS[1], 'IFEQ', ARGV[1])}")
    assert r.eval(lua, 1, "k", "c") == [ref_digest(b"b"), b"c", 1]
    r.lpush("l", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.eval("return redis.call('SET', KEYS[1], 'v', 'IFEQ', 'x')", 1, "l")


# --- COMMAND INFO / DOCS / GETKEYS, ACL ---

def info_of(r, name):
    return r.execute_command("COMMAND", "INFO", name)[0]


def test_command_info_rows(r):
    # As the versions that added them report them.
    e = info_of(r, "delex")
    assert e[:6] == [b"delex", -2, [b"write", b"fast"], 1, 1, 1]
    assert e[6] == [b"@write", b"@string", b"@fast"]
    e = info_of(r, "digest")
    assert e[:7] == [b"digest", 2, [b"readonly", b"fast"], 1, 1, 1, [b"@read", b"@string", b"@fast"]]
    e = info_of(r, "msetex")
    assert e[:7] == [b"msetex", -4, [b"write", b"denyoom", b"movablekeys"], 0, 0, 0,
                     [b"@write", b"@string", b"@slow"]]
    assert e[7] == [b"request_policy:multi_shard", b"response_policy:all_succeeded"]
    e = info_of(r, "delifeq")
    # As Valkey 9.1 reports it (test_newer_oracles.py compares with it).
    assert e[:7] == [b"delifeq", 3, [b"write", b"fast"], 1, 1, 1, [b"@write", b"@string", b"@fast"]]
    e = info_of(r, "waitaof")
    assert e[:8] == [b"waitaof", 4, [b"blocking"], 0, 0, 0, [b"@slow", b"@blocking", b"@connection"],
                     [b"request_policy:all_shards", b"response_policy:agg_min"]]
    e = info_of(r, "client|no-touch")
    assert e[:7] == [b"client|no-touch", 3, [b"noscript", b"loading", b"stale"], 0, 0, 0,
                     [b"@slow", b"@connection"]]


def test_command_getkeys(r):
    assert r.execute_command("COMMAND", "GETKEYS", "MSETEX", 2, "a", "1", "b", "2", "EX", 5) == [b"a", b"b"]
    gf = lambda *a: r.execute_command("COMMAND", "GETKEYSANDFLAGS", *a)
    assert gf("DELEX", "k") == [[b"k", [b"RM", b"delete"]]]
    assert gf("DELEX", "k", "IFEQ", "v") == [[b"k", [b"RW", b"access", b"delete"]]]
    assert gf("SET", "k", "v") == [[b"k", [b"OW", b"update"]]]
    assert gf("SET", "k", "v", "IFNE", "x") == [[b"k", [b"RW", b"access", b"update"]]]
    assert gf("DIGEST", "k") == [[b"k", [b"RO", b"access"]]]
    assert gf("DELIFEQ", "k", "v") == [[b"k", [b"RM", b"delete"]]]


def strip_extension(doc, names):
    """COMMAND DOCS pairs with the arguments and history entries named
    removed (recursively)."""
    out = []
    for k, v in zip(doc[0::2], doc[1::2]):
        if k == b"history":
            v = [h for h in v if h[0] not in names]
        elif k == b"arguments":
            v = [strip_extension(a, names) for a in v
                 if dict(zip(a[0::2], a[1::2])).get(b"name") not in names]
        out += [k, v]
    return out


def test_extended_docs_are_redis_70s_plus_the_additions(server, start_oracle):
    o = client(start_oracle())
    r = client(server)
    set_docs = dict(zip(*[iter(r.execute_command("COMMAND", "DOCS", "set"))] * 2))[b"set"]
    args = dict(zip(set_docs[0::2], set_docs[1::2]))[b"arguments"]
    cond = [a for a in args if dict(zip(a[0::2], a[1::2]))[b"name"] == b"condition"][0]
    tokens = [dict(zip(a[0::2], a[1::2]))[b"token"] for a in dict(zip(cond[0::2], cond[1::2]))[b"arguments"]]
    assert tokens == [b"NX", b"XX", b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE"]
    for name, added in ((b"set", {b"8.4.0", b"ifeq-value", b"ifne-value", b"ifdeq-digest", b"ifdne-digest"}),
                        (b"client|kill", {b"7.4.0", b"maxage"})):
        mine = dict(zip(*[iter(r.execute_command("COMMAND", "DOCS", name))] * 2))[name]
        theirs = dict(zip(*[iter(o.execute_command("COMMAND", "DOCS", name))] * 2))[name]
        assert mine != theirs
        assert strip_extension(mine, added) == theirs


def test_acl_categories(server):
    r = client(server)
    for cat, cmds in (("string", {b"delex", b"digest", b"msetex", b"delifeq"}),
                      ("write", {b"delex", b"msetex", b"delifeq"}), ("read", {b"digest"}),
                      ("fast", {b"delex", b"digest", b"delifeq"}), ("slow", {b"msetex", b"waitaof"}),
                      ("blocking", {b"waitaof"}), ("connection", {b"waitaof"})):
        assert cmds <= set(r.execute_command("ACL", "CAT", cat)), cat
    assert b"digest" not in set(r.execute_command("ACL", "CAT", "write"))
    r.acl_setuser("reader", enabled=True, nopass=True, commands=["+@read"], keys=["*"])
    u = server.client(username="reader", password="x")
    r.set("k", "v")
    assert u.execute_command("DIGEST", "k") == ref_digest(b"v")
    for args in (["DELEX", "k"], ["SET", "k", "v", "IFEQ", "v"], ["MSETEX", 1, "k", "v"], ["DELIFEQ", "k", "v"]):
        with pytest.raises(redis.exceptions.NoPermissionError):
            u.execute_command(*args)


# --- replication and the AOF ---

def cond_workload(p):
    p.set("s1", "hello")
    p.execute_command("SET", "s1", "world", "IFEQ", "hello")
    p.execute_command("SET", "s1", "nope", "IFEQ", "hello")
    p.execute_command("SET", "s2", "x", "IFNE", "y", "GET")
    p.execute_command("SET", "s2", "y", "IFDEQ", ref_digest(b"x"), "EX", 1000)
    p.execute_command("SET", "s2", "z", "IFDNE", "0000000000000000", "KEEPTTL", "GET")
    p.execute_command("SET", "s3", "v", "IFNE", "w", "PXAT", int(time.time() * 1000) + 500000)
    p.set("d1", "a")
    p.set("d2", "b")
    p.set("d3", "c")
    p.execute_command("DELEX", "d1", "IFEQ", "a")
    p.execute_command("DELEX", "d2", "IFDNE", ref_digest(b"zz"))
    p.execute_command("DELEX", "d3", "IFNE", "c")
    p.execute_command("DELEX", "s3")
    p.set("d4", "q")
    p.execute_command("DELIFEQ", "d4", "q")
    p.execute_command("MSETEX", 3, "m1", "1", "m2", "2", "m3", "3", "EX", 500)
    p.execute_command("MSETEX", 2, "m1", "4", "m2", "5", "KEEPTTL")
    p.execute_command("MSETEX", 2, "m4", "6", "m5", "7")
    p.execute_command("MSETEX", 1, "m5", "8", "PXAT", int(time.time() * 1000) + 400000, "XX")
    p.eval("redis.call('SET', KEYS[1], 'e', 'IFNE', 'x') return redis.call('DELEX', KEYS[2], 'IFEQ', '3')",
           2, "ev", "m3")


def test_redis_70_replica_stays_equal(start_server, start_oracle):
    p_srv = start_server(enable_debug_command="yes")
    o_srv = start_oracle(enable_debug_command="yes", repl_diskless_sync_delay="0",
                         replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, o = client(p_srv), client(o_srv)
    wait_for(lambda: link_up(o), what="link up")
    cond_workload(p)
    assert same_digest(p, o)
    assert sorted(p.keys()) == sorted(o.keys())
    assert o.ttl("s2") > 900 and o.ttl("m1") > 400 and o.ttl("m4") == -1 and o.pttl("m5") > 390000
    assert o.exists("d1", "d2", "d4", "s3", "m3") == 0 and o.get("d3") == b"c"


def test_aof_reload_and_redis_70_reads_it(start_server, start_oracle):
    s = start_server(appendonly="yes", enable_debug_command="yes")
    r = client(s)
    cond_workload(r)
    before = r.execute_command("DEBUG", "DIGEST")
    r.execute_command("DEBUG", "LOADAOF")
    assert r.execute_command("DEBUG", "DIGEST") == before
    s.stop()
    o = start_oracle(appendonly="yes", enable_debug_command="yes", dir=s.tmp).client()
    assert o.execute_command("DEBUG", "DIGEST") == before


def test_read_only_replica_refuses(start_server):
    p_srv = start_server()
    r_srv = start_server(replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, rr = client(p_srv), client(r_srv)
    wait_for(lambda: link_up(rr), what="link up")
    p.set("k", "v")
    wait_for(lambda: rr.get("k") == b"v", what="k replicated")
    for args in (["SET", "k", "w", "IFEQ", "v"], ["DELEX", "k"], ["DELEX", "k", "IFEQ", "v"],
                 ["MSETEX", 1, "k", "w"], ["DELIFEQ", "k", "v"]):
        with pytest.raises(redis.exceptions.ReadOnlyError):
            rr.execute_command(*args)
    assert rr.execute_command("DIGEST", "k") == ref_digest(b"v")
    assert err(rr.execute_command, "WAITAOF", 0, 0, 0).startswith("WAITAOF cannot be used with replica instances.")


# --- CLIENT NO-TOUCH (Redis 7.2) ---

def test_client_no_touch(start_server):
    # Log factor 0 and no decay: every touch adds exactly 1 to the counter.
    s = start_server(maxmemory_policy="allkeys-lfu", lfu_log_factor=0, lfu_decay_time=0)
    r, nt = client(s), client(s)
    r.set("k", "v")
    base = r.object("freq", "k")  # LFU_INIT_VAL: a touch always counts below it
    assert nt.execute_command("CLIENT", "NO-TOUCH", "ON") == b"OK"
    assert b"T" in nt.client_info()["flags"].encode()
    for _ in range(3):
        nt.get("k")
        nt.execute_command("DIGEST", "k")
    nt.eval("return redis.call('GET', KEYS[1])", 1, "k")
    p = nt.pipeline(transaction=True)
    p.get("k")
    p.execute()
    assert r.object("freq", "k") == base
    r.get("k")
    assert r.object("freq", "k") == base + 1
    nt.touch("k")  # TOUCH touches, also for a no-touch client
    assert r.object("freq", "k") == base + 2
    assert nt.execute_command("CLIENT", "NO-TOUCH", "off") == b"OK"
    assert b"T" not in nt.client_info()["flags"].encode()
    nt.get("k")
    assert r.object("freq", "k") == base + 3
    assert err(nt.execute_command, "CLIENT", "NO-TOUCH", "maybe") == "syntax error"
    assert err(nt.execute_command, "CLIENT", "NO-TOUCH") == \
        "wrong number of arguments for 'client|no-touch' command"
    nt.execute_command("CLIENT", "NO-TOUCH", "ON")
    nt.execute_command("RESET")
    assert b"T" not in nt.client_info()["flags"].encode()


# --- WAITAOF (Redis 7.2) ---

def test_waitaof_local(start_server):
    s = start_server(appendonly="yes", appendfsync="always")
    r = client(s)
    r.set("k", "v")
    assert r.execute_command("WAITAOF", 1, 0, 0) == [1, 0]
    assert r.execute_command("WAITAOF", 0, 0, 0) == [1, 0]
    # No replica: times out, as counted then.
    assert r.execute_command("WAITAOF", 1, 1, 20) == [1, 0]
    p = r.pipeline(transaction=True)
    p.set("k", "w")
    p.execute_command("WAITAOF", 1, 1, 0)  # in MULTI: answers at once
    assert p.execute()[1][1] == 0
    assert r.eval("return redis.call('WAITAOF', 0, 1, 0)", 0)[1] == 0


def test_waitaof_local_everysec(start_server):
    # The background fsync ends within about a second: the local AOF
    # counts once it did (the timeout only bounds a broken run).
    s = start_server(appendonly="yes", appendfsync="everysec")
    r = client(s)
    r.set("k", "v")
    assert r.execute_command("WAITAOF", 1, 0, 20000) == [1, 0]
    # appendfsync no: nothing is fsynced on purpose, WAITAOF times out.
    r.config_set("appendfsync", "no")
    r.set("k", "w")
    assert r.execute_command("WAITAOF", 1, 0, 300) == [0, 0]


def test_waitaof_errors(server):
    r = client(server)
    assert err(r.execute_command, "WAITAOF", 1, 0, 0) == \
        "WAITAOF cannot be used when numlocal is set but appendonly is disabled."
    assert r.execute_command("WAITAOF", 0, 0, 0) == [0, 0]
    assert err(r.execute_command, "WAITAOF", 2, 0, 0) == "value is out of range, value must between 0 and 1"
    assert err(r.execute_command, "WAITAOF", -1, 0, 0) == "value is out of range, value must between 0 and 1"
    assert err(r.execute_command, "WAITAOF", "x", 0, 0) == "value is not an integer or out of range"
    assert err(r.execute_command, "WAITAOF", 0, -1, 0) == "value is out of range, must be positive"
    assert err(r.execute_command, "WAITAOF", 0, 0, -1) == "timeout is negative"
    assert err(r.execute_command, "WAITAOF", 0, 0, "x") == "timeout is not an integer or out of range"
    assert err(r.execute_command, "WAITAOF", 0, 0) == "wrong number of arguments for 'waitaof' command"


def test_waitaof_replica_fack(start_server):
    p_srv = start_server(appendonly="yes", appendfsync="always")
    r_aof = start_server(appendonly="yes", appendfsync="always", replicaof="%s %d" % (p_srv.host, p_srv.port))
    r_plain = start_server(replicaof="%s %d" % (p_srv.host, p_srv.port))
    p = client(p_srv)
    wait_for(lambda: link_up(r_aof.client()) and link_up(r_plain.client()), what="links up")
    p.set("k", "v")
    # The replica with an AOF acknowledges its fsynced offset (FACK); the
    # other one does not count.
    assert p.execute_command("WAITAOF", 0, 1, 10000) == [1, 1]
    assert p.execute_command("WAITAOF", 0, 2, 50) == [1, 1]
    assert p.wait(2, 10000) == 2


def test_waitaof_blocks_until_unblocked(start_server):
    s = start_server(appendonly="yes")
    r, other = client(s), client(s)
    sock = socket.create_connection((s.host, s.port))
    sock.sendall(b"CLIENT ID\r\nWAITAOF 0 1 0\r\n")
    wait_for(lambda: any(c["cmd"] == "waitaof" for c in other.client_list()), what="WAITAOF blocked")
    cid = [c["id"] for c in other.client_list() if c["cmd"] == "waitaof"][0]
    assert other.client_unblock(cid) is True
    sock.settimeout(10)
    data = b""
    while not data.endswith(b"*2\r\n:1\r\n:0\r\n"):
        chunk = sock.recv(4096)
        assert chunk
        data += chunk
    sock.close()


def test_redis_70_primary_tolerates_fack(start_server, start_oracle):
    o_srv = start_oracle(enable_debug_command="yes")
    c_srv = start_server(appendonly="yes", appendfsync="always", enable_debug_command="yes",
                         replicaof="%s %d" % (o_srv.host, o_srv.port))
    o, c = client(o_srv), client(c_srv)
    wait_for(lambda: link_up(c), what="link up")
    for i in range(50):
        o.set("k%d" % i, i)
    assert o.wait(1, 10000) == 1  # acks (with FACK) were understood
    assert same_digest(o, c)


# --- XREAD ... + (Redis 7.4) ---

def test_xread_plus_reads_the_last_entry(r):
    assert r.xread({"s": "+"}) == []
    r.xadd("s", {"a": "1"}, id="1-0")
    r.xadd("s", {"b": "2"}, id="2-0")
    r.xadd("t", {"c": "3"}, id="5-1")
    assert r.xread({"s": "+", "t": "+", "nokey": "+"}) == [
        [b"s", [(b"2-0", {b"b": b"2"})]], [b"t", [(b"5-1", {b"c": b"3"})]]]
    assert r.xread({"s": "+"}, count=10) == [[b"s", [(b"2-0", {b"b": b"2"})]]]
    r.xdel("s", "2-0")
    assert r.xread({"s": "+"}) == [[b"s", [(b"1-0", {b"a": b"1"})]]]
    r.xdel("s", "1-0")
    assert r.xread({"s": "+"}) == []
    # BLOCK on a non-empty stream does not wait.
    assert r.xread({"t": "+"}, block=0) == [[b"t", [(b"5-1", {b"c": b"3"})]]]
    r.xgroup_create("t", "g", id="0")
    assert err(r.xreadgroup, "g", "c", {"t": "+"}) == "Invalid stream ID specified as stream command argument"


def test_xread_plus_blocks_on_an_empty_stream(server):
    r, w = client(server), client(server)
    w.xadd("e", {"x": "0"}, id="1-0")
    w.xdel("e", "1-0")
    out = []
    t = threading.Thread(target=lambda: out.append(r.xread({"e": "+"}, block=10000)))
    t.start()
    wait_for(lambda: w.info("clients")["blocked_clients"] == 1, what="XREAD blocked")
    w.xadd("e", {"y": "1"}, id="2-0")
    t.join(15)
    assert out == [[[b"e", [(b"2-0", {b"y": b"1"})]]]]


# --- CLIENT KILL MAXAGE (Redis 7.4) ---

def test_client_kill_maxage(server):
    r, other = client(server), client(server)
    other.ping()
    # Nobody is a day old; a young connection survives.
    assert r.execute_command("CLIENT", "KILL", "MAXAGE", 86400) == 0
    assert other.ping() is True
    assert r.execute_command("CLIENT", "KILL", "MAXAGE", 86400, "SKIPME", "no") == 0


# --- keyspace events ---

def test_keyspace_events(server):
    r = client(server)
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_for(lambda: p.get_message(timeout=0.1) is not None, what="subscribed")
    r.set("k", "a")
    r.execute_command("SET", "k", "b", "IFEQ", "a", "EX", 100)
    r.execute_command("SET", "k", "c", "IFEQ", "nope")  # no event
    r.execute_command("DELEX", "k", "IFEQ", "b")
    r.execute_command("MSETEX", 1, "m", "1", "PX", 5000)
    r.execute_command("DELIFEQ", "m", "1")
    want = [(b"set", b"k"), (b"set", b"k"), (b"expire", b"k"), (b"del", b"k"),
            (b"expire", b"m"), (b"set", b"m"), (b"del", b"m")]
    events = []

    def drain():
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            events.append((m["channel"].split(b":", 1)[1], m["data"]))
        return len(events) >= len(want)
    wait_for(drain, what="events")
    assert events == want
    p.close()
