"""The command table against redis-server 7.0.15: the whole COMMAND output,
COMMAND INFO and COMMAND DOCS of every command, COMMAND COUNT, COMMAND LIST
and its filters, and COMMAND GETKEYS / GETKEYSANDFLAGS on sample and
generated command lines (more than 256 keys, malformed key counts, and
Redis's errors included), in RESP2 and RESP3.

Redis's replies are filtered to the commands Cairn has (Cairn's COMMAND
LIST, minus the extensions below); the only order normalised is the one
Redis takes from its hash tables (top-level commands and subcommands).
Everything else -- wire types, field order, flag order -- is compared as
sent.  Run with CAIRN_BIN=redis-server to check the test itself."""
import os
import random
import subprocess
import sys

import pytest

from resphelp import encode, parse_one, read_values, tagged

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Commands Cairn has beyond Redis 7.0.15 (CLIENT SETINFO is Redis 7.2's;
# the others are Cairn's own, issue 39: test_native_patterns checks them).
EXTENSIONS = {b"client|setinfo", b"incrbybound", b"incrbyfloatbound", b"ztrim",
              b"zpopdue", b"bzpopdue", b"cl.throttle", b"rl.log",
              # issue 38: from newer Redis / Valkey versions
              b"delex", b"delifeq", b"digest", b"msetex", b"waitaof", b"client|no-touch",
              b"expiremember", b"expirememberat", b"pexpirememberat"}
# Redis commands whose COMMAND DOCS list Cairn's own options too (ZADD's
# MAXLEN): test_native_patterns compares them with Redis's without those.
DOCS_EXTENDED = {b"zadd"}
# Commands of Redis 7.0.15 whose COMMAND DOCS show a newer version's
# options (issue 38: SET's IF* conditions, CLIENT KILL's MAXAGE); their docs
# are compared with Redis's, additions taken out, in test_cond_writes.py.
EXTENDED_DOCS = {b"set", b"client|kill"}
# Hash-field expiry (issue 38): Redis 7.4 / 8.0 commands.
EXTENSIONS |= {b"hexpire", b"hpexpire", b"hexpireat", b"hpexpireat", b"httl", b"hpttl", b"hexpiretime",
               b"hpexpiretime", b"hpersist", b"hgetex", b"hsetex", b"hgetdel"}


class Resp:
    """One connection; each reply is read as (value, raw bytes).  Values
    keep the wire type: ('status', b), ('error', b), ('set', [...]),
    ('map', [(k, v), ...]); bulk strings are bytes, arrays lists."""

    def __init__(self, server, resp=2):
        self.conn = server.connect()
        if resp == 3:
            self.call("HELLO", "3")

    def both(self, *args):
        self.conn.send(encode(*args))
        raw = read_values(self.conn)
        return tagged(parse_one(raw)), raw

    def call(self, *args):
        return self.both(*args)[0]

    def close(self):
        self.conn.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def pair(request, server, oracle):
    a, b = Resp(server, request.param), Resp(oracle, request.param)
    yield a, b
    a.close()
    b.close()


def cairn_names(a):
    return set(a.call("COMMAND", "LIST"))


def top_names(names):
    return sorted(n for n in names if b"|" not in n)


# --- COMMAND INFO ---

def pairs_of(v):
    """Key/value pairs of a map, RESP2 (flat array) or RESP3."""
    if isinstance(v, tuple) and v[0] == "map":
        return v[1]
    return list(zip(v[0::2], v[1::2]))


def subs_of(entry):
    """The subcommand entries of an INFO entry (an empty set in RESP3 when
    there are none)."""
    return entry[9] if isinstance(entry[9], list) else []


def info_entry(entry, names):
    """An INFO entry with its subcommands restricted to `names` and sorted."""
    if entry is None:
        return None
    entry = list(entry)
    subs = entry[9]
    if isinstance(subs, list):
        entry[9] = sorted((info_entry(s, names) for s in subs if s[0] in names), key=lambda e: e[0])
    return entry


def test_command_list_is_redis_list_restricted_to_cairns_commands(pair):
    a, b = pair
    mine = cairn_names(a)
    theirs = set(b.call("COMMAND", "LIST"))
    assert mine - theirs <= EXTENSIONS
    assert len(mine) > 200
    # Every container lists exactly its subcommands Cairn has.
    for name in top_names(mine):
        subs = {n for n in mine if n.startswith(name + b"|")}
        entry = a.call("COMMAND", "INFO", name)[0]
        assert {s[0] for s in subs_of(entry)} == subs


def test_command_count_is_the_number_of_top_level_commands(pair):
    a, _ = pair
    names = top_names(cairn_names(a))
    assert a.call("COMMAND", "COUNT") == len(names)
    assert len(a.call("COMMAND")) == len(names)


def test_whole_command_output_equals_redis(pair):
    a, b = pair
    names = cairn_names(a) - EXTENSIONS
    mine = {e[0]: info_entry(e, names) for e in a.call("COMMAND") if e[0] not in EXTENSIONS}
    theirs = {e[0]: info_entry(e, names) for e in b.call("COMMAND") if e[0] in names}
    assert sorted(mine) == sorted(theirs) == top_names(names)
    bad = [n for n in mine if mine[n] != theirs[n]]
    assert not bad, "%d differ, first %s:\n cairn %r\n redis %r" % (len(bad), bad[0], mine[bad[0]], theirs[bad[0]])
    # COMMAND INFO with no name is the same list.
    assert sorted(e[0] for e in a.call("COMMAND", "INFO") if e[0] not in EXTENSIONS) == sorted(mine)


def test_command_info_of_each_command_is_byte_equal(pair):
    a, b = pair
    names = cairn_names(a) - EXTENSIONS
    bad = []
    for name in sorted(names):
        (va, ra), (vb, rb) = a.both("COMMAND", "INFO", name), b.both("COMMAND", "INFO", name)
        if b"|" in name or not isinstance(va[0][9], list):
            ok = ra == rb  # no subcommands: the bytes must match
        else:
            ok = info_entry(va[0], names) == info_entry(vb[0], names)
        if not ok:
            bad.append(name)
    assert not bad


def test_command_info_of_several_names_unknown_and_case(pair):
    a, b = pair
    args = ("COMMAND", "INFO", "GET", "nosuch", "Config|Get", "config|nosuch", "get|x", "zunionstore")
    assert a.both(*args)[1] == b.both(*args)[1]


# --- COMMAND DOCS ---

def docs_map(reply, names):
    """{name: doc pairs} with subcommand docs restricted to names, sorted."""
    out = {}
    for name, doc in pairs_of(reply):
        if name not in names:
            continue
        fields = []
        for k, v in pairs_of(doc):
            if k == b"subcommands":
                v = sorted((n, d) for n, d in pairs_of(v) if n in names)
            fields.append((k, v))
        out[name] = fields
    return out


def test_whole_command_docs_equals_redis(pair):
    a, b = pair
    names = cairn_names(a)
    mine = docs_map(a.call("COMMAND", "DOCS"), names)
    theirs = docs_map(b.call("COMMAND", "DOCS"), names - EXTENSIONS)
    assert sorted(mine) == top_names(names)
    del mine[b"client"]  # has the extension subcommand; compared below
    del theirs[b"client"]
    for n in EXTENSIONS | DOCS_EXTENDED | EXTENDED_DOCS:
        mine.pop(n, None)
        theirs.pop(n, None)
    bad = [n for n in mine if mine[n] != theirs[n]]
    assert not bad, "%d differ, first %s:\n cairn %r\n redis %r" % (len(bad), bad[0], mine[bad[0]], theirs[bad[0]])


def test_command_docs_of_each_command_is_byte_equal(pair):
    a, b = pair
    names = cairn_names(a)
    bad = []
    same = names - EXTENSIONS - DOCS_EXTENDED - EXTENDED_DOCS
    for name in sorted(same):
        (va, ra), (vb, rb) = a.both("COMMAND", "DOCS", name), b.both("COMMAND", "DOCS", name)
        if b"|" in name or not any(k == b"subcommands" for k, _ in pairs_of(pairs_of(va)[0][1])):
            ok = ra == rb
        else:
            ok = docs_map(va, same) == docs_map(vb, same)
        if not ok:
            bad.append(name)
    assert not bad


def test_command_docs_deprecated_and_history_fields(pair):
    """Commands with doc_flags, deprecated_since, replaced_by, history and
    nested arguments, byte for byte."""
    a, b = pair
    names = cairn_names(a)
    for name in (b"substr", b"zadd", b"set", b"sort", b"brpoplpush", b"hmset", b"client|kill", b"pfdebug"):
        if name in names and name not in DOCS_EXTENDED and name not in EXTENDED_DOCS:
            assert a.both("COMMAND", "DOCS", name)[1] == b.both("COMMAND", "DOCS", name)[1], name


# --- COMMAND LIST filters ---

ACL_CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
                  "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
                  "connection", "transaction", "scripting", "KEYSPACE", "nosuch"]


@pytest.mark.parametrize("args", [("ACLCAT", c) for c in ACL_CATEGORIES] + [
    ("PATTERN", "*"), ("PATTERN", "z*"), ("PATTERN", "*|*"), ("PATTERN", "CONFIG*"), ("PATTERN", "[a-c]*"),
    ("MODULE", "x")])
def test_command_list_filterby_equals_redis(pair, args):
    a, b = pair
    names = cairn_names(a)
    mine = a.call("COMMAND", "LIST", "FILTERBY", *args)
    theirs = b.call("COMMAND", "LIST", "FILTERBY", *args)
    assert set(mine) - EXTENSIONS == set(theirs) & names
    assert len(mine) == len(set(mine))


# --- COMMAND GETKEYS / GETKEYSANDFLAGS ---

def keyed(n, prefix="k"):
    return ["%s%d" % (prefix, i) for i in range(n)]


SAMPLES = [
    # strings, bitmaps, keys
    ["get", "a"], ["set", "a", "b"], ["set", "a", "b", "GET"], ["set", "a", "b", "EX", "10", "get"],
    ["set", "a", "get", "nx"], ["set", "a", "b", "gets"],
    ["getex", "a", "persist"], ["getdel", "a"], ["setex", "a", "1", "v"], ["psetex", "a", "1", "v"],
    ["mget", "a", "b", "c"], ["mset", "a", "1", "b", "2"], ["mset", "a", "1", "b"], ["msetnx", "a", "1", "b", "2"],
    ["append", "a", "v"], ["lcs", "a", "b"], ["lcs", "a", "b", "LEN"], ["incrbyfloat", "a", "1"],
    ["bitop", "and", "d", "a", "b"], ["bitfield", "a", "get", "u8", "0"], ["bitfield", "a", "set", "u8", "0", "1"],
    ["bitfield", "a", "overflow", "wrap", "get", "u8", "0"], ["bitfield", "a", "get", "u8"], ["bitfield", "a"],
    ["bitfield", "a", "incrby", "u8", "0", "1", "get", "u8", "0"], ["bitfield_ro", "a", "get", "u8", "0"],
    ["del", "a", "b"], ["unlink", "a"], ["exists", "a", "a"], ["touch", "a"], ["rename", "a", "b"],
    ["renamenx", "a", "b"], ["copy", "a", "b", "replace"], ["move", "a", "1"], ["dump", "a"], ["type", "a"],
    ["restore", "a", "0", "x"], ["object", "encoding", "a"], ["object", "help"], ["object", "freq", "a"],
    ["expire", "a", "1"], ["pexpireat", "a", "1", "nx"], ["ttl", "a"], ["persist", "a"],
    ["memory", "usage", "a"], ["pfadd", "a", "x"], ["pfcount", "a", "b"], ["pfmerge", "d", "a", "b"],
    # lists
    ["lpush", "a", "x"], ["blpop", "a", "b", "0"], ["brpop", "a", "0"], ["lmove", "a", "b", "left", "right"],
    ["blmove", "a", "b", "left", "right", "0"], ["rpoplpush", "a", "b"], ["brpoplpush", "a", "b", "0"],
    ["lmpop", "2", "a", "b", "left"], ["lmpop", "1", "a", "b", "left", "count", "2"], ["lmpop", "3", "a", "b", "left"],
    ["lmpop", "0", "a", "left"], ["lmpop", "-1", "a", "left"], ["lmpop", "x", "a", "left"],
    ["lmpop", "2x", "a", "b", "left"], ["lmpop", " 2", "a", "b", "left"], ["lmpop", "+2", "a", "b", "left"],
    ["lmpop", "4294967297", "a", "left"], ["lmpop", "99999999999999999999", "a", "left"],
    ["blmpop", "0", "2", "a", "b", "left"], ["blmpop", "0", "3", "a", "b", "left"], ["blmpop", "0", "1x", "a", "left"],
    # hashes, sets
    ["hset", "a", "f", "v"], ["hgetall", "a"], ["sadd", "a", "x"], ["smove", "a", "b", "x"], ["sinter", "a", "b"],
    ["sinterstore", "d", "a", "b"], ["sdiffstore", "d", "a"], ["sunionstore", "d", "a", "b"],
    ["sintercard", "2", "a", "b"], ["sintercard", "2", "a", "b", "limit", "1"], ["sintercard", "3", "a", "b"],
    ["sintercard", "0", "a"], ["sintercard", "1x", "a", "b"],
    # sorted sets
    ["zadd", "a", "1", "x"], ["zunion", "2", "a", "b"], ["zunion", "2", "a", "b", "weights", "1", "2"],
    ["zunion", "3", "a", "b"], ["zunion", "0", "a"], ["zunion", "-1", "a"], ["zunion", "2y", "a", "b"],
    ["zinter", "1", "a"], ["zdiff", "2", "a", "b", "withscores"], ["zintercard", "2", "a", "b", "limit", "0"],
    ["zunionstore", "d", "2", "a", "b"], ["zunionstore", "d", "3", "a", "b"], ["zunionstore", "d", "0", "a"],
    ["zunionstore", "d", "2z", "a", "b"], ["zinterstore", "d", "1", "a"], ["zdiffstore", "d", "2", "a", "b"],
    ["zrangestore", "d", "a", "0", "-1"], ["zmpop", "2", "a", "b", "min"], ["zmpop", "5", "a", "min"],
    ["bzmpop", "0", "2", "a", "b", "max"], ["bzmpop", "0", "2", "a"], ["bzpopmin", "a", "b", "0"],
    ["bzpopmax", "a", "0"], ["zrandmember", "a"],
    # geo
    ["georadius", "k", "1", "2", "3", "m", "store", "a", "storedist", "b"], ["georadius", "k", "1", "2", "3", "m"],
    ["georadius", "k", "1", "2", "3", "store", "x"], ["georadius", "k", "1", "2", "3", "m", "count", "1", "store"],
    ["georadiusbymember", "k", "m", "3", "km", "storedist", "d"], ["georadius_ro", "k", "1", "2", "3", "m"],
    ["geosearchstore", "d", "s", "frommember", "m", "byradius", "1", "m"], ["geoadd", "k", "1", "2", "m"],
    ["geopos", "k", "m"], ["geosearch", "k", "frommember", "m", "bybox", "1", "1", "m"],
    # sort
    ["sort", "a"], ["sort", "a", "by", "b", "store", "c"], ["sort", "a", "store", "c", "store", "d"],
    ["sort", "a", "store"], ["sort", "a", "limit", "0", "1", "store", "x"], ["sort", "a", "store", "limit", "0", "1"],
    ["sort", "a", "get", "store", "store", "x"], ["sort", "a", "STORE", "b", "GET", "#"], ["sort", "a", "by", "store"],
    ["sort_ro", "a"], ["sort_ro", "a", "by", "b", "get", "c"],
    # scripts and functions
    ["eval", "return 1", "0"], ["eval", "return 1", "2", "a", "b"], ["eval", "return 1", "1", "a", "b"],
    ["eval", "return 1", "3", "a", "b"], ["eval", "return 1", "-1"], ["eval", "return 1", "x"],
    ["eval", "return 1", "2x", "a", "b"], ["eval", "return 1", "1.5", "a"], ["evalsha", "abc", "1", "a"],
    ["eval_ro", "return 1", "1", "a"], ["evalsha_ro", "abc", "2", "a", "b"], ["fcall", "f", "1", "a"],
    ["fcall", "f", "0"], ["fcall_ro", "f", "2", "a", "b", "c"],
    # transactions, pub/sub, no keys
    ["watch", "a", "b"], ["ping"], ["ping", "x"], ["publish", "c", "m"], ["spublish", "c", "m"],
    ["ssubscribe", "c"], ["sunsubscribe"], ["subscribe", "c"], ["config", "get", "x"], ["config"],
    ["client", "list"], ["keys", "*"], ["scan", "0"], ["info"], ["flushall"], ["multi"],
    # errors
    ["nosuchcmd", "a"], ["config", "nosuch"], ["get"], ["get", "a", "b"], ["mset", "a"], ["object"],
    ["object", "encoding"], ["GET", "a"], ["Set", "a", "b", "Get"],
]

BIG = [
    ["del"] + keyed(300), ["mget"] + keyed(1000), ["mset"] + keyed(600), ["exists"] + keyed(257),
    ["zunion", "300"] + keyed(300), ["zunionstore", "d", "300"] + keyed(300) + ["aggregate", "max"],
    ["eval", "return 1", "400"] + keyed(400) + ["arg"], ["fcall", "f", "300"] + keyed(300),
    ["lmpop", "300"] + keyed(300) + ["left"], ["sintercard", "257"] + keyed(257), ["watch"] + keyed(500),
    ["blpop"] + keyed(300) + ["0"], ["sunionstore", "d"] + keyed(300), ["pfcount"] + keyed(300),
    ["eval", "return 1", "2x"] + keyed(300),
]


def getkeys_pair(a, b, argv):
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        (va, ra), (vb, rb) = a.both("COMMAND", sub, *argv), b.both("COMMAND", sub, *argv)
        assert ra == rb, "%s %r:\n cairn %r\n redis %r" % (sub, argv[:8], va, vb)


def test_getkeys_on_samples_equals_redis(pair):
    a, b = pair
    names = cairn_names(a)
    ran = 0
    for argv in SAMPLES:
        full = argv[0].lower().encode() + (b"|" + argv[1].lower().encode() if len(argv) > 1 else b"")
        if argv[0].lower().encode() not in names and argv[0] != "nosuchcmd":
            continue
        if full in EXTENSIONS:
            continue
        getkeys_pair(a, b, argv)
        ran += 1
    assert ran > 140


def test_getkeys_with_more_than_256_keys_equals_redis(pair):
    a, b = pair
    names = cairn_names(a)
    for argv in BIG:
        if argv[0].encode() in names:
            getkeys_pair(a, b, argv)
    keys = a.call("COMMAND", "GETKEYS", "mget", *keyed(1000))
    assert keys == [k.encode() for k in keyed(1000)]


@pytest.mark.parametrize("args", [
    ("COMMAND", "GETKEYS"), ("COMMAND", "GETKEYSANDFLAGS"), ("COMMAND", "GETKEYS", "nosuch"),
    ("COMMAND", "GETKEYS", "get"), ("COMMAND", "GETKEYSANDFLAGS", "ping"), ("COMMAND", "GETKEYS", "config"),
    ("COMMAND", "GETKEYS", "config", "nosuch"), ("COMMAND", "GETKEYS", "object", "encoding"),
    ("COMMAND", "GETKEYS", "zunionstore", "d", "1"), ("COMMAND", "GETKEYS", "eval"),
])
def test_getkeys_errors_equal_redis(pair, args):
    a, b = pair
    assert a.both(*args)[1] == b.both(*args)[1]


ARG_POOL = ["a", "b", "c", "d", "0", "1", "2", "3", "-1", "2x", " 1", "+1", "4294967298", "1.5",
            "get", "GET", "set", "incrby", "overflow", "wrap", "u8", "store", "STORE", "by", "limit", "left",
            "weights", "count", "streams", "keys", "storedist", "#", "nx", "ex"]


def test_getkeys_on_generated_command_lines_equals_redis(pair):
    """Random command lines for every command Cairn has, built from its
    arity and a pool of keys, counts and keywords."""
    a, b = pair
    rng = random.Random(16)
    names = cairn_names(a) - EXTENSIONS
    infos = {e[0]: e for e in a.call("COMMAND")}
    checked = 0
    for name in sorted(names):
        parts = name.split(b"|")
        entry = infos[parts[0]]
        if len(parts) == 2:
            entry = next(s for s in subs_of(entry) if s[0] == name)
        arity = entry[1]
        for _ in range(12):
            n = abs(arity) - len(parts) + rng.randint(-1, 0 if arity > 0 else 6)
            argv = [p.decode() for p in parts] + [rng.choice(ARG_POOL) for _ in range(max(n, 0))]
            getkeys_pair(a, b, argv)
            checked += 1
    assert checked > 2000


def test_checked_in_table_is_what_the_generator_writes(oracle, tmp_path):
    """src/core/command_data.c is reproducible from redis-server 7.0.15 by
    scripts/gen_commands.py (nobody edited the rows by hand)."""
    if oracle.client().info("server").get("redis_version") != "7.0.15":
        pytest.skip("the oracle is not redis-server 7.0.15")
    out = tmp_path / "command_data.c"
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_commands.py"), "--redis-port",
                    str(oracle.port), "--output", str(out)], check=True, capture_output=True)
    with open(os.path.join(ROOT, "src", "core", "command_data.c")) as f:
        assert out.read_text() == f.read()
