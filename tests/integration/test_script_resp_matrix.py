"""Script replies against redis-server 7.0.15, raw bytes: RESP2 and RESP3
clients x no redis.setresp / setresp(2) / setresp(3) x scripts returning
nils, booleans, nested arrays, maps, sets, doubles (NaN included), big
numbers, verbatim strings, and redis.call replies with nil holes (HMGET,
MGET, ZMSCORE under RESP3), including `#` and `pairs` of those tables.
Also string.format with NUL bytes and the other Lua 5.1 corner cases,
which the LuaJIT build reproduces (lua_compat.c).

The `#` of a table with holes is the one case LuaJIT cannot match (its
tables grow differently): those checks run on the Lua 5.1 build only."""
import shutil

import pytest

from script_resp import Conn

SETUP = [
    ("HSET", "h", "a", "1", "b", "2"), ("HSET", "h1", "f", "v"),
    ("SET", "k1", "v1"), ("SET", "k3", "v3"), ("SADD", "s1", "x"),
    ("ZADD", "z", "1.5", "m1", "2", "m2"), ("ZADD", "z1", "2.5", "only"),
    ("RPUSH", "l", "a", "b"),
]

# (script, works the same on LuaJIT)
SCRIPTS = [
    ("return redis.call('HMGET','h','a','nx','b')", True),
    ("return redis.call('HMGET','h','nx','a')", True),
    ("return redis.call('HMGET','h','nx','nx')", True),
    ("return #redis.call('HMGET','h','a','nx','b')", True),
    ("return #redis.call('HMGET','h','a','nx','nx','b')", False),
    ("return #redis.call('HMGET','h','a','b','nx')", True),
    ("return redis.call('MGET','k1','k2','k3','k4')", True),
    ("local t=redis.call('MGET','k2','k2'); return {#t, tostring(t[1]), type(t[1])}", True),
    ("local t=redis.call('HMGET','h','a','nx','b'); local o={} for i=1,3 do o[i]=type(t[i]) end return o", True),
    ("local t=redis.call('HMGET','h','a','nx','b'); local n=0 for k in pairs(t) do n=n+k end return n", True),
    ("local t=redis.call('HMGET','h','a','nx','b'); t[4]='x'; return t", True),
    ("local t=redis.call('HMGET','h','nx','nx','nx','nx','a'); return #t", False),
    ("local t=redis.call('HMGET','h','a','nx','nx','nx','nx'); return #t", True),
    ("return {1,nil,3}", True),
    ("return {true,false,nil,1}", True),
    ("return {false,true}", True),
    ("return true", True), ("return false", True), ("return nil", True),
    ("return redis.call('HGETALL','h1')", True),
    ("return redis.call('SMEMBERS','s1')", True),
    ("return redis.call('ZSCORE','z','m1')", True),
    ("return {redis.call('ZSCORE','z','nx'), 1}", True),
    ("return redis.call('ZRANGE','z',0,-1,'WITHSCORES')", True),
    ("return redis.call('ZMSCORE','z','m1','nx','m2')", True),
    ("return #redis.call('ZMSCORE','z','m1','nx','m2')", True),
    ("return redis.call('HRANDFIELD','h1',-1,'WITHVALUES')", True),
    ("return {redis.call('GET','nokey'), 1}", True),
    ("return {double=3.5}", True), ("return {double=0/0}", True),
    ("return {double=-(0/0)}", True), ("return {double=-1/0}", True),
    ("return {big_number='123456789012345678901234567890'}", True),
    ("return {verbatim_string={format='txt',string='hi'}}", True),
    ("return {map={a=1}}", True), ("return {set={a=true}}", True),
    ("return {map={a={1,nil,2}}}", True), ("return {map={a=false}}", True),
    ("return {{1,nil,2},{nil},{false,true}}", True),
    ("return {1,{double=1.5},nil,3}", True),
    ("return {redis.pcall('INCR','h'), 2}", True),
    ("return cjson.encode(redis.call('HMGET','h','a','nx','b'))", True),
    ("return cjson.encode(redis.call('MGET','k2'))", True),
    ("return redis.call('LPOS','l','b','COUNT',0)", True),
    ("return redis.call('ZADD','z','INCR',1,'m9')", True),
    ("return redis.call('ZRANDMEMBER','z1',1,'WITHSCORES')", True),
    ("return redis.call('SMISMEMBER','s1','x','nx')", True),
    ("return redis.call('LMPOP',1,'nolist','LEFT')", True),
    ("return redis.call('ZMPOP',1,'z1','MIN')", True),
    ("return redis.call('ZSCAN','z1',0)", True),
]

# `#` and pairs order of every HMGET / MGET / ZMSCORE hole pattern of 1..8 items.
HOLES = """redis.setresp(3)
local out = {}
for n = 1, 8 do
  for m = 0, 2^n - 1 do
    local args = {'h'}
    for i = 1, n do
      if math.floor(m / 2^(i-1)) % 2 == 1 then args[#args+1] = 'a' else args[#args+1] = 'nx' end
    end
    local t = redis.call(ARGV[1], unpack(args))
    local ks = ''
    for k in pairs(t) do ks = ks .. k .. ',' end
    local before = #t
    t[n+2] = 1
    out[#out+1] = before .. ':' .. ks .. ':' .. #t
  end
end
return table.concat(out, ' ')
"""

FORMATS = [
    r'string.format("%s", "a\0b")', r'string.format("%5s|", "a\0b")',
    r'string.format("%-5s|", "\0")', r'string.format("%5.1s|", "ab\0")',
    r'string.format("%s", string.rep("a",99).."\0b")',
    r'string.format("%s", string.rep("a",100).."\0b")',
    r'string.format("%.20s", string.rep("a",100).."\0b")',
    r'string.format("%c", 0)', r'string.format("%5c|", 0)', r'string.format("%c%c|%c", 65, 0, 2^40)', r'string.format("%5c|", 1e300)',
    r'string.format("%q", "a\0b")', r'string.format("%q", "\r\n\26\\\"")',
    r'string.format("%q", 0/0)', r'string.format("%s", 0/0)', r'string.format("%q", 1/0)',
    r'string.format("a\0%s", "x")', r'string.format("%d", 3.7)', r'string.format("%x", -1)',
    r'string.format("%i|%5.2f|%-+ #05d|%o|%X|%e|%G", 3, 1/0, 1, 8, 255, 1e300, 1e-5)',
    r'string.format("%10q", 1)', r'string.format("%s %s", 1.5, 10)', r'string.format("%d", "12")',
    r'string.format("%s", 1e15)', r'#string.format("%99.99f", 1e308)',
    r'string.format("%s", nil)', r'string.format("%s", {})', r'string.format("%s", true)',
    r'string.format("%s")', r'string.format("%y", 1)', r'string.format("%100d", 1)',
    r'string.format("%.200s", "x")', r'string.format("%-+ #0-5d", 1)', r'string.format("%", 1)',
    r'string.format("%d", "x")', r'string.format("%d %s", 1)', r'string.format(12)',
]


@pytest.fixture(scope="module")
def servers():
    from conftest import ORACLE_BIN, Server, cairn_bin
    if not shutil.which(ORACLE_BIN) and not __import__("os").path.exists(ORACLE_BIN):
        pytest.skip("no %s" % ORACLE_BIN)
    srvs = [Server(cairn_bin(), {}, name="cairn"),
            Server(shutil.which(ORACLE_BIN) or ORACLE_BIN, {}, name="oracle")]
    yield srvs
    for s in srvs:
        s.stop()
        s.cleanup()


def is_luajit(srv):
    c = Conn(srv)
    try:
        return b"cairn_lua_engine:luajit" in c.call("INFO", "server")
    finally:
        c.close()


def fresh(srv, proto):
    c = Conn(srv)
    assert c.call("FLUSHALL") == b"+OK\r\n"
    for cmd in SETUP:
        assert not c.call(*cmd).startswith(b"-")
    if proto == 3:
        assert c.call("HELLO", "3").startswith(b"%")
    return c


@pytest.mark.parametrize("proto", [2, 3])
@pytest.mark.parametrize("pre", ["", "redis.setresp(2);", "redis.setresp(3);"])
def test_script_replies_match_redis(servers, proto, pre):
    cairn, redis = servers
    jit = is_luajit(cairn)
    diffs = []
    conns = [fresh(cairn, proto), fresh(redis, proto)]
    try:
        for script, on_jit in SCRIPTS:
            if jit and not on_jit:
                continue
            for c in conns:  # the same data for every script
                c.call("FLUSHALL")
                for cmd in SETUP:
                    c.call(*cmd)
            got, want = (c.call("EVAL", pre + script, 0) for c in conns)
            if got != want:
                diffs.append("%s%s:\n  cairn %r\n  redis %r" % (pre, script, got, want))
    finally:
        for c in conns:
            c.close()
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("cmd,setup", [("HMGET", ("HSET", "h", "a", "1")),
                                       ("MGET", ("SET", "a", "1")),
                                       ("ZMSCORE", ("ZADD", "h", "1", "a"))])
def test_nil_hole_tables_match_redis(servers, cmd, setup):
    cairn, redis = servers
    if is_luajit(cairn):
        pytest.skip("LuaJIT's `#` of a table with holes differs from Lua 5.1's (README)")
    out = []
    for srv in servers:
        c = Conn(srv)
        c.call("FLUSHALL")
        c.call(*setup)
        out.append(c.call("EVAL", HOLES, 0, cmd))
        c.close()
    assert out[0].startswith(b"$") and out[0] == out[1]


def test_string_format_matches_lua51(servers):
    diffs = []
    conns = [Conn(s) for s in servers]
    try:
        for expr in FORMATS:
            got, want = (c.call("EVAL", "return " + expr, 0) for c in conns)
            if got != want:
                diffs.append("%s:\n  cairn %r\n  redis %r" % (expr, got, want))
    finally:
        for c in conns:
            c.close()
    assert not diffs, "\n".join(diffs)
