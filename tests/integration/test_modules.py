"""Loadable modules (issue 41): the test modules of tests/modules, built
against Cairn's own src/module/redismodule.h by `make modules`, loaded
into Cairn and into redis-server 7.0.15 with the same directives; the same
commands must give the same bytes, in RESP2 and RESP3.

Also: MODULE LOAD/LOADEX/LIST/UNLOAD and their errors, the loadmodule
directive (a failing one stops the start-up, as Redis), module commands in
COMMAND INFO/DOCS/LIST and INFO modules, propagation of module writes to
the AOF (Replicate, ReplicateVerbatim, Call with "!")."""
import os
import shutil
import subprocess
import tempfile

import pytest

from resphelp import encode, read_values

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODDIR = os.path.join(ROOT, "build", "modules")


@pytest.fixture(scope="module", autouse=True)
def built_modules():
    subprocess.run(["make", "-s", "modules"], cwd=ROOT, check=True, timeout=300)


def mod(name):
    return os.path.join(MODDIR, name + ".so")


def loaded(start, *mods, **cfg):
    """A server with enable-module-command yes and the modules loaded by
    loadmodule lines (each mods item: name or (name, args...))."""
    lines = ["enable-module-command yes"]
    for m in mods:
        if isinstance(m, str):
            m = (m,)
        lines.append("loadmodule %s %s" % (mod(m[0]), " ".join(m[1:])))
    return start(config_file="\n".join(lines) + "\n", **cfg)


def raw(srv, cmds, resp=2):
    """The raw reply bytes of each command, on one connection."""
    with srv.connect() as c:
        if resp == 3:
            c.send(encode("HELLO", "3"))
            read_values(c, 1)
        out = []
        for cmd in cmds:
            c.send(encode(*cmd))
            out.append(read_values(c, 1))
        return out


def same(server, oracle, cmds, resp=2):
    a = raw(server, cmds, resp)
    b = raw(oracle, cmds, resp)
    for cmd, x, y in zip(cmds, a, b):
        assert x == y, "%r: cairn %r, redis %r" % (cmd, x, y)
    return a


REPLY_CMDS = [
    ("rep.ll", "5"), ("rep.ll", "-9223372036854775808"), ("rep.ll", "x"),
    ("rep.simple", "hello"), ("rep.error", "nope"), ("rep.error", "ERR x y"), ("rep.error", "MYCODE z"),
    ("rep.null",), ("rep.nullarray",), ("rep.emptyarray",),
    ("rep.double", "1.5"), ("rep.double", "inf"), ("rep.double", "-0.1"), ("rep.double", "1e300"),
    ("rep.longdouble", "1.5"), ("rep.longdouble", "3.0"), ("rep.longdouble", "0.1"),
    ("rep.bool", "1"), ("rep.bool", "0"), ("rep.bignum", "123456789012345678901234567890"),
    ("rep.verbatim", "some text"), ("rep.string", "a\x00b"), ("rep.cstring", "c"), ("rep.emptystring",),
    ("rep.array", "0"), ("rep.array", "5"), ("rep.array", "2000"), ("rep.map",), ("rep.set",), ("rep.attr",),
    ("rep.nested",), ("rep.arity",), ("rep.arity", "1", "2"), ("rep.arity", "x"), ("rep.args",),
    ("rep.strings",), ("rep.mem",), ("rep.ctx",), ("rep.retained",), ("rep.retain", "kept"), ("rep.retained",),
    ("REP.LL", "7"),
    # from scripts: the reply reaches Lua through the script's reply sink
    ("eval", "return redis.call('rep.array','3')", "0"), ("eval", "return redis.call('rep.nested')", "0"),
    # (a map's field order through a Lua table differs under LuaJIT: read one field)
    ("eval", "redis.setresp(3); return redis.call('rep.map')['map']['inner']['map']['k']", "0"),
    ("eval", "redis.setresp(3); return redis.call('rep.double', '2.5')", "0"),
    ("eval", "return redis.pcall('rep.error','ERR boom')", "0"), ("eval", "return redis.call('rep.arity','x')", "0"),
    ("eval", "return redis.call('rep.longdouble','0.5')", "0"),
    ("multi",), ("rep.ll", "1"), ("rep.map",), ("exec",),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_replies_match_redis(start_server, start_oracle, resp):
    s = loaded(start_server, ("replies", "a", "b"))
    o = loaded(start_oracle, ("replies", "a", "b"))
    got = same(s, o, REPLY_CMDS, resp)
    # and they are what the module says (not two identical wrong answers)
    assert got[0] == b":5\r\n"
    assert got[5] == b"-ERR x y\r\n"
    assert got[4] == b"-nope\r\n"


CALL_CMDS = [
    ("call.run", "-", "ping"), ("call.run", "-", "set", "k", "v"), ("call.run", "-", "get", "k"),
    ("call.run", "-", "nosuch"), ("call.run", "E", "nosuch", "a", "b"), ("call.run", "-", "set", "x"),
    ("call.run", "E", "set", "x"), ("call.run", "E", "config", "nosub"), ("call.run", "E", "config"),
    ("call.run", "WE", "set", "x", "1"), ("call.run", "W", "set", "x", "1"), ("call.run", "WE", "get", "k"),
    ("call.run", "SE", "shutdown"), ("call.run", "S", "shutdown"),
    ("call.run", "-", "lpush", "k", "x"), ("call.run", "E", "lpush", "k", "x"),
    ("call.run", "-", "rpush", "l", "a", "b", "c"), ("call.run", "-", "lrange", "l", "0", "-1"),
    ("call.run", "-", "hset", "h", "f1", "v1", "f2", "v2"), ("call.run", "-", "hgetall", "h"),
    ("call.run", "3", "hgetall", "h"), ("call.run", "0", "hgetall", "h"),
    ("call.run", "-", "zadd", "z", "1.5", "m"), ("call.run", "-", "zscore", "z", "m"),
    ("call.run", "3", "zscore", "z", "m"), ("call.run", "0", "zscore", "z", "m"),
    ("call.run", "-", "sadd", "s", "a"), ("call.run", "3", "smembers", "s"),
    ("call.run", "-", "get", "nosuchkey"), ("call.run", "3", "get", "nosuchkey"),
    ("call.walk", "-", "hgetall", "h"), ("call.walk", "3", "hgetall", "h"), ("call.walk", "3", "zscore", "z", "m"),
    ("call.walk", "-", "lrange", "l", "0", "-1"), ("call.walk", "3", "smembers", "s"),
    ("call.walk", "-", "get", "nosuchkey"), ("call.walk", "-", "incr", "k"),
    ("call.proto", "-", "lrange", "l", "0", "-1"), ("call.proto", "3", "hgetall", "h"),
    ("call.proto", "-", "get", "nosuchkey"), ("call.proto", "3", "get", "nosuchkey"),
    ("call.proto", "3", "zscore", "z", "m"), ("call.proto", "-", "incr", "k"), ("call.proto", "-", "ping"),
    ("call.setget", "a", "b"), ("call.get", "a"), ("call.set", "a", "c"), ("call.get", "a"),
    ("call.repl", "r", "v"), ("call.run", "-", "get", "r"), ("call.run", "-", "get", "counter"),
    ("call.verbatim", "w", "z"), ("call.run", "-", "get", "w"),
    # a blocking command does not block inside a call
    ("call.run", "-", "blpop", "nolist", "0"), ("call.run", "3", "blpop", "nolist", "0"),
    ("call.run", "-", "rpush", "bl", "x"), ("call.run", "-", "blpop", "bl", "0"),
    ("call.run", "-", "multi"), ("call.run", "-", "exec"), ("call.run", "-", "eval", "return redis.call('get','w')", "0"),
    ("call.run", "E", "eval", "return redis.call('nosuch')", "0"), ("call.run", "-", "call.get", "w"),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_call_matches_redis(start_server, start_oracle, resp):
    s = loaded(start_server, "call")
    o = loaded(start_oracle, "call")
    got = same(s, o, CALL_CMDS, resp)
    assert got[0] == b"+PONG\r\n"
    assert b"errno=ENOENT" in got[3]


KEY_CMDS = [
    ("key.get", "k"), ("key.len", "k"), ("key.type", "k"), ("key.exists", "k"), ("key.ttl", "k"),
    ("key.set", "k", "hello"), ("key.get", "k"), ("key.len", "k"), ("key.type", "k"), ("key.exists", "k"),
    ("key.append", "k", " world"), ("key.get", "k"), ("key.dmaupper", "k"), ("key.get", "k"), ("get", "k"),
    ("key.truncate", "k", "3"), ("key.get", "k"), ("key.truncate", "k", "6"), ("key.get", "k"),
    ("key.truncate", "k", "600000000"),
    ("set", "n", "12345"), ("key.append", "n", "6"), ("get", "n"), ("key.dmaupper", "n"), ("key.len", "n"),
    ("key.append", "new", "abc"), ("get", "new"), ("key.truncate", "new2", "0"), ("exists", "new2"),
    ("key.truncate", "new3", "2"), ("strlen", "new3"),
    ("rpush", "l", "a", "b"), ("key.type", "l"), ("key.len", "l"), ("key.get", "l"), ("key.append", "l", "x"),
    ("key.dmaupper", "l"), ("hset", "h", "f", "v"), ("key.type", "h"), ("key.len", "h"),
    ("sadd", "s", "a", "b", "c"), ("key.type", "s"), ("key.len", "s"), ("zadd", "z", "1", "a"), ("key.type", "z"),
    ("key.len", "z"), ("xadd", "st", "1-1", "f", "v"), ("key.type", "st"),
    ("key.expire", "k", "100000"), ("key.ttl", "k"), ("key.set", "k", "x"), ("ttl", "k"),
    ("key.expire", "k", "100000"), ("key.expire", "k", "-1"), ("ttl", "k"), ("key.expire", "nokey", "100"),
    ("key.del", "k"), ("key.del", "k"), ("exists", "k"), ("key.unlink", "n"), ("exists", "n"),
    ("key.set", "l", "over"), ("type", "l"), ("get", "l"),
    ("set", "big", "x" * 100), ("key.dmaupper", "big"), ("get", "big"),
    # lists
    ("key.lpush", "L", "tail", "a", "b", "c"), ("key.lpush", "L", "head", "z", "12345"), ("lrange", "L", "0", "-1"),
    ("key.lpush", "L", "sideways", "x"), ("key.lpush", "big", "tail", "x"), ("key.lpush", "nolist", "ro", "x"),
    ("key.lpush", "L", "ro", "x"), ("key.lget", "L", "0"), ("key.lget", "L", "-1"), ("key.lget", "L", "1"),
    ("key.lget", "L", "99"), ("key.lget", "L", "-99"), ("key.lget", "nolist", "0"), ("key.lget", "big", "0"),
    ("key.lset", "L", "2", "B"), ("key.lset", "L", "-1", "C"), ("key.lset", "L", "5", "x"), ("lrange", "L", "0", "-1"),
    ("key.linsert", "L", "0", "first"), ("key.linsert", "L", "-1", "last"), ("key.linsert", "L", "2", "mid"),
    ("key.linsert", "L", "-2", "m2"), ("key.linsert", "L", "100", "x"), ("key.linsert", "L", "-100", "x"),
    ("lrange", "L", "0", "-1"), ("key.linsert", "new", "0", "x"), ("key.linsert", "new2", "-1", "y"),
    ("key.linsert", "new3", "1", "y"), ("lrange", "new", "0", "-1"), ("lrange", "new2", "0", "-1"),
    ("exists", "new3"), ("key.ldel", "L", "1"), ("key.ldel", "L", "-1"), ("key.ldel", "L", "50"),
    ("lrange", "L", "0", "-1"), ("key.lpop", "L", "head"), ("key.lpop", "L", "tail"), ("key.lpop", "nolist", "head"),
    ("key.lpop", "big", "head"), ("key.lpop", "new", "head"), ("exists", "new"), ("key.ldel", "new2", "0"),
    ("exists", "new2"), ("key.lpush", "N", "tail", *[str(i) for i in range(300)]), ("key.lget", "N", "150"),
    ("key.ldel", "N", "150"), ("llen", "N"), ("key.lget", "N", "150"), ("object", "encoding", "N"),
    # hashes
    ("key.hset", "H", "-", "f1", "v1"), ("key.hset", "H", "a", "f2", "v2"), ("key.hset", "H", "-", "f1", "w1", "f3", "v3"),
    ("key.hset", "H", "a", "f1", "x1", "f4", "v4"), ("hgetall", "H"), ("key.hset", "H", "n", "f1", "no"),
    ("key.hset", "H", "na", "f5", "v5"), ("key.hset", "H", "x", "f6", "no"), ("key.hset", "H", "xa", "f2", "X2"),
    ("key.hset", "H", "c", "f2", "c2"), ("key.hset", "H", "-", "f3", "__DEL__"), ("key.hset", "H", "-", "zz", "__DEL__"),
    ("hgetall", "H"), ("key.hget", "H", "-", "f1", "nope"), ("key.hget", "H", "c", "f2"), ("key.hget", "H", "e", "f1", "nope"),
    ("key.hget", "H", "ce", "f4", "f5"), ("key.hget", "nohash", "-", "f"), ("key.hget", "L", "-", "f"),
    ("key.hset", "L", "-", "f", "v"), ("key.hset", "H", "ro", "f", "v"), ("key.hset", "H2", "-", "f", "__DEL__"),
    ("exists", "H2"), ("key.hset", "H3", "-", "only", "v"), ("key.hset", "H3", "-", "only", "__DEL__"), ("exists", "H3"),
    ("key.hset", "H4", "-", "big", "x" * 100), ("object", "encoding", "H4"), ("key.hget", "H4", "-", "big"),
    # sorted sets
    ("key.zadd", "Z", "-", "1.5", "a"), ("key.zadd", "Z", "-", "2", "b"), ("key.zadd", "Z", "-", "1.5", "a"),
    ("key.zadd", "Z", "-", "3", "a"), ("key.zadd", "Z", "n", "9", "a"), ("key.zadd", "Z", "x", "9", "c"),
    ("key.zadd", "Z", "g", "1", "a"), ("key.zadd", "Z", "g", "5", "a"), ("key.zadd", "Z", "l", "4", "a"),
    ("key.zadd", "Z", "-", "nan", "a"), ("zrange", "Z", "0", "-1", "withscores"), ("key.zincr", "Z", "-", "2.5", "b"),
    ("key.zincr", "Z", "-", "1", "new"), ("key.zincr", "Z", "x", "1", "nope"), ("key.zadd", "Z", "-", "inf", "i"),
    ("key.zincr", "Z", "-", "-inf", "i"), ("zrange", "Z", "0", "-1", "withscores"), ("key.zscore", "Z", "b"),
    ("key.zscore", "Z", "zz"), ("key.zscore", "noz", "a"), ("key.zscore", "L", "a"), ("key.zrem", "Z", "b"),
    ("key.zrem", "Z", "b"), ("key.zrem", "noz", "a"), ("key.zrem", "L", "a"), ("key.zadd", "L", "-", "1", "a"),
    ("key.zadd", "Z2", "x", "1", "a"), ("key.zadd", "Z3", "-", "1", "only"), ("key.zrem", "Z3", "only"),
    ("exists", "Z3"), ("key.zadd", "Z4", "-", "1", "m" * 100), ("object", "encoding", "Z4"),
    ("key.zincr", "Z4", "-", "1", "m" * 100), ("zscore", "Z4", "m" * 100),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_key_api_matches_redis(start_server, start_oracle, resp):
    s = loaded(start_server, "keys")
    o = loaded(start_oracle, "keys")
    got = same(s, o, KEY_CMDS, resp)
    assert got[6] in (b"$5\r\nhello\r\n",)
    # ZsetAdd with XX on a missing key: Redis 7.0.15 leaves an empty sorted
    # set behind (EXISTS 1, a key no command can make); Cairn does not.
    assert plain(s).execute_command("EXISTS", "Z2") == 0


def test_module_commands_metadata(start_server, start_oracle):
    s = loaded(start_server, "replies", "keys")
    o = loaded(start_oracle, "replies", "keys")
    same(s, o, [
        ("command", "info", "rep.ll", "key.set", "key.get", "rep.arity", "rep.retain"),
        ("command", "docs", "rep.ll"), ("command", "docs", "key.get"),
        ("command", "getkeys", "key.set", "a", "b"), ("command", "getkeys", "rep.ll", "1"),
        ("command", "list", "filterby", "module", "nosuch"),
    ])
    # Redis 7.0 gives module commands no ACL category
    for srv in (s, o):
        assert b"key.get" not in srv.client().execute_command("ACL", "CAT", "read")
    # the list of a module's commands, in any order
    for name, n in (("keys", 24), ("replies", 26)):
        a = sorted(plain(s).execute_command("COMMAND", "LIST", "FILTERBY", "MODULE", name))
        b = sorted(plain(o).execute_command("COMMAND", "LIST", "FILTERBY", "MODULE", name))
        assert a == b and len(a) == n
    # COMMAND COUNT: the modules' commands on top of the server's own
    for srv in (s, o):
        r = plain(srv)
        before = r.execute_command("COMMAND", "COUNT")
        assert r.execute_command("MODULE", "UNLOAD", "keys") == b"OK"
        assert r.execute_command("COMMAND", "COUNT") == before - 24


def plain(srv):
    """A client that returns replies unparsed (no redis-py callbacks)."""
    r = srv.client()
    r.response_callbacks.clear()
    return r


def _modules_sorted(r):
    return sorted((m[b"name"], m[b"ver"], m[b"path"], tuple(m[b"args"])) for m in
                  (dict(zip(x[::2], x[1::2])) for x in r.execute_command("MODULE", "LIST")))


def test_module_list_info_and_unload(start_server, start_oracle):
    for start in (start_server, start_oracle):
        srv = loaded(start, ("replies", "x", "y"), "keys")
        r = plain(srv)
        assert _modules_sorted(r) == [(b"keys", 1, mod("keys").encode(), ()),
                                      (b"replies", 3, mod("replies").encode(), (b"x", b"y"))]
        info = raw(srv, [("INFO", "modules")])[0].decode()
        assert "module:name=replies,ver=3,api=1,filters=0,usedby=[],using=[],options=[]" in info
        hello = r.execute_command("HELLO", "2")
        hello = dict(zip(hello[::2], hello[1::2]))
        assert len(hello[b"modules"]) == 2
        assert r.execute_command("MODULE", "UNLOAD", "replies") == b"OK"
        with pytest.raises(Exception, match="no such module with that name"):
            r.execute_command("MODULE", "UNLOAD", "replies")
        with pytest.raises(Exception, match="unknown command"):
            r.execute_command("rep.ll", "1")
        assert r.execute_command("COMMAND", "INFO", "rep.ll") == [None]
        assert _modules_sorted(r) == [(b"keys", 1, mod("keys").encode(), ())]
        # load it again, by MODULE LOAD, with arguments
        assert r.execute_command("MODULE", "LOAD", mod("replies"), "p", "q") == b"OK"
        assert r.execute_command("rep.args") == [b"p", b"q"]
        # a second load of the same module: its Init refuses the busy name
        with pytest.raises(Exception, match="Error loading the extension"):
            r.execute_command("MODULE", "LOAD", mod("replies"))
        assert r.execute_command("MODULE", "UNLOAD", "replies") == b"OK"
        assert r.execute_command("MODULE", "LOADEX", mod("replies"), "ARGS", "1", "2") == b"OK"
        assert r.execute_command("rep.args") == [b"1", b"2"]
        assert r.execute_command("PING") == b"PONG"


def test_module_load_errors_leave_server_unchanged(start_server, start_oracle, tmp_path):
    notmod = tmp_path / "not_a_module.so"
    notmod.write_bytes(b"this is not an ELF file")
    nosym = str(tmp_path / "nosym.so")
    src = tmp_path / "nosym.c"
    src.write_text("int not_onload(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", nosym, str(src)], check=True, timeout=60)
    results = []
    for start in (start_server, start_oracle):
        srv = start(enable_module_command="yes")
        r = plain(srv)
        before = r.execute_command("COMMAND", "COUNT")
        out = []
        for args in (("LOAD", "/nonexistent/x.so"), ("LOAD", str(notmod)), ("LOAD", nosym),
                     ("LOAD", mod("replies"), "fail"), ("LOADEX", mod("replies"), "BOGUS"),
                     ("LOADEX", mod("replies"), "CONFIG", "a"), ("LOADEX", mod("replies"), "CONFIG", "a", "b")):
            with pytest.raises(Exception) as e:
                r.execute_command("MODULE", *args)
            out.append(str(e.value))
        assert r.execute_command("COMMAND", "COUNT") == before
        assert r.execute_command("MODULE", "LIST") == []
        with pytest.raises(Exception, match="unknown command"):
            r.execute_command("rep.ll", "1")
        results.append(out)
    assert results[0] == results[1]
    assert all(x == "Error loading the extension. Please check the server logs." for x in results[0])


def test_module_command_refused_by_default(start_server):
    srv = start_server()
    r = plain(srv)
    with pytest.raises(Exception, match="MODULE command not allowed"):
        r.execute_command("MODULE", "LOAD", mod("replies"))
    assert r.execute_command("MODULE", "LIST") == []


def test_loadmodule_failure_stops_startup(start_server, tmp_path):
    with pytest.raises(RuntimeError):
        start_server(config_file="loadmodule /nonexistent/mod.so\n")


@pytest.mark.parametrize("which", ["cairn", "redis"])
def test_loadmodule_lines_of_config_rewrite(start_server, start_oracle, which):
    """CONFIG REWRITE writes a loadmodule line per module loaded at that
    moment (start-up or MODULE LOAD), with its arguments; an unloaded one
    has none."""
    srv = loaded(start_server if which == "cairn" else start_oracle, ("replies", "a1"), "misc")
    r = plain(srv)
    assert r.execute_command("MODULE", "UNLOAD", "misc") == b"OK"
    assert r.execute_command("MODULE", "LOAD", mod("keys"), "k1", "k2") == b"OK"
    assert r.execute_command("CONFIG", "REWRITE") == b"OK"
    lines = [l for l in open(os.path.join(srv.tmp, "server.conf")).read().splitlines() if l.startswith("loadmodule")]
    assert sorted(lines) == sorted(["loadmodule %s a1" % mod("replies"), "loadmodule %s k1 k2" % mod("keys")])


def _aof_text(srv):
    d = os.path.join(srv.tmp, "appendonlydir")
    incr = [f for f in os.listdir(d) if ".incr." in f]
    assert len(incr) == 1
    with open(os.path.join(d, incr[0]), "rb") as f:
        return f.read()


def test_module_writes_propagate_as_redis(start_server, start_oracle):
    """What reaches the AOF: Call with "!", Replicate (two: MULTI/EXEC),
    ReplicateVerbatim; a module command itself never propagates as sent."""
    cmds = [("call.set", "a", "1"), ("call.run", "-", "set", "quiet", "1"), ("call.repl", "r", "v"),
            ("call.verbatim", "w", "z"), ("key.set", "ks", "v")]
    texts = []
    for start in (start_server, start_oracle):
        srv = loaded(start, "call", "keys", appendonly="yes", appendfsync="always")
        raw(srv, cmds)
        texts.append(_aof_text(srv))
    assert texts[0] == texts[1]
    assert b"quiet" not in texts[0]
    assert b"MULTI" in texts[0]


DT_CMDS = [
    ("dt.get", "a"), ("dt.set", "a", "alpha", "42", "1.25"), ("dt.get", "a"), ("type", "a"), ("dt.type", "a"),
    ("dt.push", "a", "1", "-2", "9223372036854775807"), ("dt.get", "a"), ("dt.push", "b", "7"), ("dt.get", "b"),
    ("get", "a"), ("lpush", "a", "x"), ("set", "s", "str"), ("dt.get", "s"), ("dt.push", "s", "1"), ("dt.type", "s"),
    ("object", "encoding", "a"), ("exists", "a"), ("dt.replace", "a", "beta"), ("dt.get", "a"),
    ("dt.replace", "s", "x"), ("copy", "b", "c"), ("dt.get", "c"), ("dt.push", "c", "8"), ("dt.get", "b"),
    ("debug", "digest-value", "a", "b", "c"), ("debug", "digest"),
    ("del", "c"), ("dt.get", "c"), ("expire", "b", "1000"), ("dt.set", "b", "again", "1", "2"), ("ttl", "b"),
    ("module", "unload", "datatype"),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_datatype_matches_redis(start_server, start_oracle, resp):
    s = loaded(start_server, "datatype", enable_debug_command="yes")
    o = loaded(start_oracle, "datatype", enable_debug_command="yes")
    got = same(s, o, DT_CMDS, resp)
    assert got[3] == b"+testdtype\r\n"
    assert b"exports one or more module-side data types" in got[-1]
    keys = [sorted(plain(x).execute_command("SCAN", "0", "TYPE", "testdtype")[1]) for x in (s, o)]
    assert keys[0] == keys[1] == [b"a", b"b"]


def _fill_dt(srv):
    r = plain(srv)
    r.execute_command("dt.set", "k1", "one", "1", "0.5")
    r.execute_command("dt.push", "k1", *range(100))
    r.execute_command("dt.set", "k2", "x" * 500, "-7", "1e300")
    r.execute_command("dt.push", "k3", "5")
    r.execute_command("pexpire", "k3", "100000000")
    r.execute_command("set", "plain", "v")
    r.execute_command("select", "3")
    r.execute_command("dt.set", "k4", "db3", "3", "3")
    return r


def _dump_dt(srv):
    r = plain(srv)
    out = []
    for db in (0, 3):
        r.execute_command("select", db)
        for k in ("k1", "k2", "k3", "k4", "plain"):
            t = r.execute_command("type", k)
            out.append((db, k, t, r.execute_command("dt.get", k) if t == b"testdtype" else r.execute_command("get", k)
                        if t == b"string" else None))
    r.execute_command("select", 0)
    out.append(r.execute_command("debug", "digest"))
    return out


@pytest.mark.parametrize("direction", ["cairn-to-redis", "redis-to-cairn"])
def test_datatype_rdb_interchange(start_server, start_oracle, direction):
    first, second = (start_server, start_oracle) if direction == "cairn-to-redis" else (start_oracle, start_server)
    a = loaded(first, "datatype", enable_debug_command="yes")
    _fill_dt(a)
    expected = _dump_dt(a)
    assert plain(a).execute_command("SAVE") == b"OK"
    rdb = os.path.join(a.tmp, "dump.rdb")
    with open(rdb, "rb") as f:
        data = f.read()
    assert b"testdtype" not in data  # the type is stored by its 64-bit id, not its name
    # the second server starts on a copy of the file
    d = tempfile.mkdtemp(prefix="cairn-dt-")
    shutil.copy(rdb, os.path.join(d, "dump.rdb"))
    b = loaded(second, "datatype", enable_debug_command="yes", args=["--dir", d])
    assert _dump_dt(b) == expected
    assert expected[0][2] == b"testdtype"


def test_datatype_rdb_without_module_fails(start_server, start_oracle):
    a = loaded(start_server, "datatype")
    _fill_dt(a)
    assert plain(a).execute_command("SAVE") == b"OK"
    d = tempfile.mkdtemp(prefix="cairn-dt-")
    shutil.copy(os.path.join(a.tmp, "dump.rdb"), os.path.join(d, "dump.rdb"))
    with pytest.raises(RuntimeError):
        start_server(args=["--dir", d])


def test_datatype_debug_reload_and_restore(start_server):
    s = loaded(start_server, "datatype", enable_debug_command="yes")
    r = _fill_dt(s)
    r.execute_command("select", 0)
    before = _dump_dt(s)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert _dump_dt(s) == before
    payload = r.execute_command("DUMP", "k1")
    assert r.execute_command("RESTORE", "k9", "0", payload) == b"OK"
    assert r.execute_command("dt.get", "k9") == r.execute_command("dt.get", "k1")
    assert r.execute_command("MEMORY", "USAGE", "k1") > 800


@pytest.mark.parametrize("which", ["cairn", "redis"])
def test_datatype_aof_rewrite_without_preamble(start_server, start_oracle, which):
    """BGREWRITEAOF without the RDB preamble writes a module value as the
    commands its aof_rewrite callback emits (EmitAOF); a restart from the
    AOF gives the same values, on Cairn as on Redis."""
    from waithelp import wait_for
    start = start_server if which == "cairn" else start_oracle
    d = tempfile.mkdtemp(prefix="cairn-dtaof-")
    cfg = dict(appendonly="yes", aof_use_rdb_preamble="no", enable_debug_command="yes", args=["--dir", d])
    a = loaded(start, "datatype", **cfg)
    _fill_dt(a)
    expected = _dump_dt(a)
    r = plain(a)
    r.execute_command("BGREWRITEAOF")
    wait_for(lambda: b"aof_rewrite_in_progress:0" in r.execute_command("INFO", "persistence")
             and b"aof_rewrite_scheduled:0" in r.execute_command("INFO", "persistence"), what="rewrite done")
    assert b"aof_last_bgrewrite_status:ok" in r.execute_command("INFO", "persistence")
    base = [f for f in os.listdir(os.path.join(d, "appendonlydir")) if ".base." in f]
    with open(os.path.join(d, "appendonlydir", base[0]), "rb") as f:
        text = f.read()
    assert b"dt.set" in text and b"dt.push" in text
    # GetDbIdFromIO in the aof_rewrite callback names each key's database
    import re
    seen = sorted(set(re.findall(r"dt rewrite (k\d) db=(-?\d+)", a.log)))
    assert seen == [("k1", "0"), ("k2", "0"), ("k3", "0"), ("k4", "3")], seen
    a.stop()
    b = loaded(start, "datatype", **dict(cfg, args=["--dir", d]))
    assert _dump_dt(b) == expected


def test_load_use_unload_100_times(start_server):
    """Each module loaded, used and unloaded 100 times: the server stays
    up, its command table and MODULE LIST come back to what they were
    (under the sanitizer build, CAIRN_BIN=build/cairn-server-san, the exit
    report also shows no leak)."""
    srv = start_server(enable_module_command="yes")
    r = plain(srv)
    count = r.execute_command("COMMAND", "COUNT")
    for i in range(100):
        assert r.execute_command("MODULE", "LOAD", mod("replies"), "arg%d" % i) == b"OK"
        assert r.execute_command("MODULE", "LOAD", mod("call")) == b"OK"
        assert r.execute_command("MODULE", "LOAD", mod("keys")) == b"OK"
        assert r.execute_command("rep.args") == [b"arg%d" % i]
        assert r.execute_command("rep.strings")[-1] == 1
        r.execute_command("rep.retain", "x%d" % i)
        assert r.execute_command("call.setget", "k", "v%d" % i) == b"v%d" % i
        assert r.execute_command("call.proto", "3", "hgetall", "nohash") == b"%0\r\n"
        assert r.execute_command("key.append", "s", "ab") == 2 * (i + 1)
        for name in ("replies", "calls", "keys"):
            assert r.execute_command("MODULE", "UNLOAD", name) == b"OK"
        assert r.execute_command("COMMAND", "COUNT") == count
    assert r.execute_command("MODULE", "LIST") == []
    assert r.execute_command("STRLEN", "s") == 200


CMDINFO_CMDS = [
    ("command", "info", "ci.plain", "ci.keyword", "ci.container|get", "ci.container|set"),
    ("command", "docs", "ci.plain"), ("command", "docs", "ci.keyword"), ("command", "docs", "ci.container|set"),
    ("command", "getkeys", "ci.plain", "k", "v"), ("command", "getkeys", "ci.keyword", "KEYS", "2", "a", "b"),
    ("command", "getkeys", "ci.container", "get", "k"), ("command", "getkeysandflags", "ci.keyword", "x", "KEYS", "1", "a"),
    ("ci.plain", "k"), ("ci.plain", "k", "v", "w"), ("ci.keyword", "x", "KEYS", "1", "a"),
    ("ci.container",), ("ci.container", "get", "k"), ("ci.container", "get"), ("ci.container", "nosuch"),
    ("ci.container", "set", "k", "v"), ("ci.container", "set", "k"), ("CI.CONTAINER", "GET", "k"),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_command_info_matches_redis(start_server, start_oracle, resp):
    s = loaded(start_server, "cmdinfo")
    o = loaded(start_oracle, "cmdinfo")
    got = same(s, o, CMDINFO_CMDS, resp)
    assert got[12] == b":3\r\n"
    # a container's subcommands come in the order of Redis's dict (by hash):
    # compared as sets
    for sub in ("info", "docs"):
        a, b = (plain(x).execute_command("COMMAND", sub, "ci.container") for x in (s, o))
        if sub == "info":
            a, b = a[0], b[0]
            assert a[:9] == b[:9] and sorted(map(repr, a[9])) == sorted(map(repr, b[9]))
        else:
            da, db = dict(zip(a[1][::2], a[1][1::2])), dict(zip(b[1][::2], b[1][1::2]))
            sa, sb = da.pop(b"subcommands"), db.pop(b"subcommands")
            assert da == db
            assert dict(zip(sa[::2], map(repr, sa[1::2]))) == dict(zip(sb[::2], map(repr, sb[1::2])))
    for srv in (s, o):
        r = plain(srv)
        assert sorted(r.execute_command("COMMAND", "LIST", "FILTERBY", "MODULE", "cmdinfo")) == \
            [b"ci.container", b"ci.container|get", b"ci.container|set", b"ci.keyword", b"ci.plain"]
        assert r.execute_command("MODULE", "UNLOAD", "cmdinfo") == b"OK"
        assert r.execute_command("COMMAND", "INFO", "ci.container") == [None]


def test_unload_forgets_clients_last_command_and_queued(start_server, start_oracle):
    """After MODULE UNLOAD, CLIENT LIST of a client whose last command was
    the module's, and EXEC of a transaction that queued one, are safe:
    CLIENT LIST shows no freed name; EXEC fails (Cairn: EXECABORT, since
    the command is gone)."""
    srv = loaded(start_server, "replies")
    a, b = plain(srv), plain(srv)
    assert a.execute_command("rep.ll", "1") == 1
    conn = srv.connect()
    conn.send(encode("MULTI"))
    assert read_values(conn, 1) == b"+OK\r\n"
    conn.send(encode("rep.ll", "2"))
    assert read_values(conn, 1) == b"+QUEUED\r\n"
    assert b.execute_command("MODULE", "UNLOAD", "replies") == b"OK"
    assert b"rep.ll" not in b.execute_command("CLIENT", "LIST")
    conn.send(encode("EXEC"))
    assert read_values(conn, 1).startswith(b"-EXECABORT")
    assert a.execute_command("PING") == b"PONG"
    conn.close()


def test_call_as_user_acl(start_server, start_oracle):
    """Call with "C" checks the calling user's permissions (Redis's "acl
    verification failed" with "E", errno EACCES without; logged in ACL LOG
    with context module); without "C" the call runs unchecked."""
    outs = []
    for start in (start_server, start_oracle):
        srv = loaded(start, "call")
        r = plain(srv)
        assert r.execute_command("ACL", "SETUSER", "lim", "on", "nopass", "+call.run", "+get", "~k*") == b"OK"
        outs.append(raw(srv, [("AUTH", "lim", "x"), ("call.run", "CE", "set", "k1", "v"),
                              ("call.run", "C", "set", "k1", "v"), ("call.run", "CE", "get", "other"),
                              ("call.run", "CE", "get", "k1"), ("call.run", "E", "set", "other", "v"),
                              ("call.run", "-", "get", "other")]))
        log = r.execute_command("ACL", "LOG")
        outs[-1].append([(e[1], e[3], e[5], e[7]) for e in log])
    assert outs[0] == outs[1]
    assert outs[0][-1] == [(1, b"key", b"module", b"other"), (2, b"command", b"module", b"set")]
    assert outs[0][1].startswith(b"-ERR acl verification failed")
    assert outs[0][2] == b"-ERR errno=EACCES\r\n"


def test_misc_matches_redis(start_server, start_oracle):
    cmds = [("misc.info",), ("misc.dbsize",), ("misc.randomkey",), ("set", "only", "1"), ("misc.randomkey",),
            ("misc.dbsize",), ("misc.keyname", "only"), ("select", "5"), ("misc.keyname", "x"), ("misc.dbsize",),
            ("select", "0"), ("config", "set", "notify-keyspace-events", "KEA"), ("misc.info",)]
    s = loaded(start_server, "misc")
    o = loaded(start_oracle, "misc")
    got = same(s, o, cmds)
    assert got[0].startswith(b"*7\r\n:458767\r\n:4\r\n")
    for srv in (s, o):
        # the module's notification reaches subscribers
        sub = srv.connect()
        sub.send(encode("SUBSCRIBE", "__keyspace@0__:only"))
        read_values(sub, 1)
        assert raw(srv, [("misc.notify", "only")]) == [b":0\r\n"]
        assert read_values(sub, 1) == encode("message", "__keyspace@0__:only", "misc").replace(b"*3", b"*3", 1)
        sub.close()
        # SignalModifiedKey fails a WATCH; with NO_IMPLICIT_SIGNAL_MODIFIED
        # closing a key opened for writing does not
        with srv.connect() as c:
            for step, watch_breaker in (("signal", "misc.signal"), ("touch", "misc.touch")):
                c.send(encode("WATCH", "only"))
                assert read_values(c, 1) == b"+OK\r\n"
                assert raw(srv, [(watch_breaker, "only")])[0] in (b":0\r\n", b"+OK\r\n")
                c.send(encode("MULTI") + encode("GET", "only") + encode("EXEC"))
                out = read_values(c, 3)
                if step == "signal":
                    assert out.endswith(b"*-1\r\n")
                else:
                    assert out.endswith(b"*1\r\n$1\r\n1\r\n")


@pytest.mark.parametrize("which", ["cairn", "redis"])
def test_timers(start_server, start_oracle, which):
    """A timer fires its callback (a SET through Call with "!", propagated
    to the AOF); a stopped timer never fires; GetTimerInfo / StopTimer of
    a timer gone answer ERR."""
    from waithelp import wait_for
    srv = loaded(start_server if which == "cairn" else start_oracle, "timer", appendonly="yes")
    r = plain(srv)
    assert r.execute_command("tm.set", "fired", "yes", "20") == 1
    assert r.execute_command("tm.setid", "never", "x", "100000") == 0
    assert r.execute_command("tm.info", "0") == [0, 1]
    assert r.execute_command("tm.stop", "0") == 0
    assert r.execute_command("tm.info", "0") == [1, -1]
    assert r.execute_command("tm.stop", "0") == 1
    assert r.execute_command("tm.setid", "soon", "s", "10") == 1
    wait_for(lambda: r.execute_command("GET", "fired") == b"yes" and r.execute_command("GET", "soon") == b"s",
             what="the timers fired")
    assert r.execute_command("tm.info", "1") == [1, -1]
    assert r.execute_command("GET", "never") is None
    assert r.execute_command("tm.setid", "later", "x", "100000") == 2
    with pytest.raises(Exception, match="the module holds timer that is not fired"):
        r.execute_command("MODULE", "UNLOAD", "timer")
    assert r.execute_command("tm.stop", "2") == 0
    assert r.execute_command("MODULE", "UNLOAD", "timer") == b"OK"
    d = os.path.join(srv.tmp, "appendonlydir")
    incr = [f for f in os.listdir(d) if ".incr." in f]

    def aof():
        with open(os.path.join(d, incr[0]), "rb") as f:
            return f.read()
    # appendfsync everysec may postpone a write while a background fsync
    # runs (both servers): wait for it rather than read once.
    wait_for(lambda: b"fired" in aof(), what="the timer's SET in the AOF")


def test_every_declared_function_is_exported(start_server, start_oracle):
    """Every function src/module/redismodule.h declares (and its inline
    RedisModule_Init fetches) is exported by Cairn, and by redis-server
    7.0.15 (the header declares nothing 7.0 lacks); an unknown name is
    not.  The header declares all 332 functions redis-server 7.0.15
    exports (its API table's names, read from the binary)."""
    import re
    with open(os.path.join(ROOT, "src", "module", "redismodule.h")) as f:
        names = sorted(set(re.findall(r"REDISMODULE_GET_API\((\w+)\);", f.read())))
    assert len(names) >= 148
    redis_bin = shutil.which("redis-server") or "/usr/bin/redis-server"
    with open(redis_bin, "rb") as f:
        exported = set(m.decode() for m in re.findall(rb"(?<=\0)RedisModule_(\w+)(?=\0)", f.read()))
    # names in the binary that are no API function: the event listener
    # list, and the module's own entry points it looks up
    exported -= {"EventListeners", "OnLoad", "OnUnload"}
    assert sorted(exported - set(names)) == []
    assert len(names) == 332
    for start in (start_server, start_oracle):
        r = plain(loaded(start, "apiprobe"))
        assert r.execute_command("probe.missing", *names) == []
        assert r.execute_command("probe.missing", "NoSuchFunction", "Call") == [b"NoSuchFunction"]
