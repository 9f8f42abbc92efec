"""What redis.call / redis.pcall return: every kind of reply a command can
give, seen from Lua, compared with redis-server 7.0.15.

A script calls one command with redis.pcall after redis.setresp(2 or 3)
and returns a text rendering of the Lua value it got: the type of every
value, strings in hex, numbers with 17 digits, table entries sorted by key
(so hash order does not matter), and `#t` of every table.  Each case runs
on both servers from the same small dataset, for RESP2 and RESP3 scripts,
and the renderings must be equal byte for byte.  The cases cover statuses,
errors, integers, bulks, nulls and null arrays, doubles, long doubles,
verbatim strings, maps and sets, nested arrays with nil holes, and replies
whose length is sent after their elements (deferred lengths)."""
import pytest

from script_resp import Conn

RENDER = r"""
local function hex(s)
  return (string.gsub(s, '.', function(ch) return string.format('%02x', string.byte(ch)) end))
end
local render
render = function(v)
  local t = type(v)
  if t == 'table' then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return render(a) < render(b) end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = render(k) .. '=' .. render(v[k]) end
    return '{' .. table.concat(parts, ',') .. '}#' .. #v
  elseif t == 'string' then
    return 's:' .. hex(v)
  elseif t == 'number' then
    return 'n:' .. string.format('%.17g', v)
  end
  return t .. ':' .. tostring(v)
end
redis.setresp(tonumber(ARGV[1]))
local args = {}
for i = 2, #ARGV do args[#args + 1] = ARGV[i] end
return render(redis.pcall(unpack(args)))
"""

SETUP = [
    ("SET", "str", "hello"),
    ("SET", "n", "10"),
    ("SET", "f", "1.5"),
    ("RPUSH", "l", "a", "b", "c", "b"),
    ("HSET", "h", "f1", "v1", "f2", "v2", "f3", "3"),
    ("SADD", "s", "x", "y", "z"),
    ("SADD", "si", "3", "1", "2"),
    ("ZADD", "z", "1", "a", "2.5", "b", "3", "c", "inf", "d"),
]

CASES = [
    # statuses and errors
    ("PING",), ("PING", "hi"), ("SET", "k", "v"), ("TYPE", "l"), ("TYPE", "nope"),
    ("OBJECT", "HELP"), ("GET", "l"), ("INCR", "str"), ("SET", "k", "v", "EX", "-1"),
    ("LPUSH", "str", "x"),
    # integers
    ("INCR", "n"), ("DECRBY", "n", "100"), ("EXISTS", "str", "nope", "l"), ("TTL", "str"),
    ("STRLEN", "str"), ("LLEN", "l"), ("SISMEMBER", "s", "x"), ("INCRBY", "n", "9223372036854775797"),
    ("INCRBY", "n", "-9223372036854775807"),
    # bulks and nulls
    ("GET", "str"), ("GET", "nope"), ("ECHO", "a\r\nb"), ("ECHO", ""), ("GETRANGE", "str", "1", "2"),
    ("HGET", "h", "f1"), ("HGET", "h", "nope"), ("LPOP", "nope"), ("LINDEX", "l", "9"),
    ("OBJECT", "ENCODING", "l"), ("GETDEL", "str"), ("GETEX", "nope"),
    # long doubles (bulks either way) and doubles
    ("INCRBYFLOAT", "f", "0.1"), ("INCRBYFLOAT", "n", "1e3"), ("HINCRBYFLOAT", "h", "f3", "-0.25"),
    ("ZSCORE", "z", "b"), ("ZSCORE", "z", "d"), ("ZSCORE", "z", "nope"), ("ZINCRBY", "z", "0.1", "a"),
    ("ZADD", "z", "INCR", "1", "c"), ("ZMSCORE", "z", "a", "d"),
    # arrays, with nil holes
    ("LRANGE", "l", "0", "-1"), ("LRANGE", "nope", "0", "-1"), ("MGET", "str", "nope", "n", "nope"),
    ("HMGET", "h", "nope", "f1", "nope"), ("SMISMEMBER", "s", "x", "q"), ("LPOS", "l", "b"),
    ("LPOS", "l", "b", "COUNT", "0"), ("LPOS", "l", "zz"), ("LPOP", "l", "0"), ("LPOP", "l", "2"),
    ("SORT", "l", "ALPHA"), ("SORT", "si"), ("SORT", "l", "ALPHA", "LIMIT", "0", "2", "GET", "#", "GET", "nope*"),
    ("HKEYS", "h"), ("HVALS", "h"), ("SMEMBERS", "si"),
    # null arrays
    ("LMPOP", "1", "nope", "LEFT"), ("ZMPOP", "1", "nope", "MAX"),
    # maps, sets and nested replies (some with deferred lengths)
    ("HGETALL", "h"), ("HGETALL", "nope"), ("SINTER", "si", "si"), ("SMEMBERS", "nope"),
    ("ZRANGE", "z", "0", "-1"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES", "LIMIT", "1", "2"),
    ("ZREVRANGEBYSCORE", "z", "+inf", "2", "LIMIT", "0", "10"),
    ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "2"), ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "2"),
    ("ZUNION", "2", "z", "z", "WITHSCORES"), ("ZMPOP", "1", "z", "MIN", "COUNT", "2"),
    ("LMPOP", "2", "nope", "l", "RIGHT", "COUNT", "2"),
    ("HSCAN", "h", "0"), ("SSCAN", "si", "0"), ("ZSCAN", "z", "0"), ("SCAN", "0", "MATCH", "str"),
    ("KEYS", "st*"), ("ZRANK", "z", "b"), ("ZRANK", "z", "nope"),
    ("SINTERCARD", "2", "s", "si"), ("SRANDMEMBER", "si", "0"), ("SDIFF", "s", "s"),
]


@pytest.fixture(scope="module")
def pair(request):
    from conftest import ORACLE_BIN, Server, cairn_bin
    import shutil
    if not shutil.which(ORACLE_BIN) and not __import__("os").path.exists(ORACLE_BIN):
        pytest.skip("no %s" % ORACLE_BIN)
    servers = [Server(cairn_bin(), {}, name="cairn"),
               Server(shutil.which(ORACLE_BIN) or ORACLE_BIN, {}, name="oracle")]
    conns = [Conn(s) for s in servers]
    yield conns
    for c in conns:
        c.close()
    for s in servers:
        s.stop()
        s.cleanup()


def rendered(conn, resp, case):
    assert conn.call("FLUSHALL") == b"+OK\r\n"
    for cmd in SETUP:
        assert not conn.call(*cmd).startswith(b"-")
    return conn.call("EVAL", RENDER, 0, resp, *case)


@pytest.mark.parametrize("resp", [2, 3])
def test_call_values_match_redis(pair, resp):
    cairn, redis = pair
    diffs = []
    for case in CASES:
        got, want = rendered(cairn, resp, case), rendered(redis, resp, case)
        assert want.startswith(b"$"), (case, want)
        if got != want:
            diffs.append("%r:\n  cairn %r\n  redis %r" % (case, got, want))
    assert not diffs, "\n".join(diffs)


def test_the_rendering_tells_values_apart(pair):
    """The comparison can fail: values that differ only in type, in a nil
    hole or in RESP version render differently."""
    cairn = pair[0]
    seen = {rendered(cairn, 2, ("GET", "nope")), rendered(cairn, 3, ("GET", "nope")),
            rendered(cairn, 2, ("ZSCORE", "z", "b")), rendered(cairn, 3, ("ZSCORE", "z", "b")),
            rendered(cairn, 2, ("HGETALL", "h")), rendered(cairn, 3, ("HGETALL", "h")),
            rendered(cairn, 2, ("MGET", "str", "nope")), rendered(cairn, 3, ("MGET", "str", "nope")),
            rendered(cairn, 2, ("TYPE", "l")), rendered(cairn, 2, ("ECHO", "list"))}
    assert len(seen) == 10
