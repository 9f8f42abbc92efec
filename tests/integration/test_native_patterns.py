"""Cairn's native commands for common Lua patterns (issue 39), the parts
built so far: bounded counters (INCRBYBOUND, INCRBYFLOATBOUND) and capped
sorted sets (ZADD ... MAXLEN, ZTRIM).

Contract, as reply tables below:
- INCRBYBOUND key delta min max: INCRBY applied only if min <= result <=
  max; replies the new value, or nil with no change (a missing key counts
  as 0 and is created only when the result is in range).  Error order (as
  INCRBY: arguments before the key): delta/min/max not integers -> "ERR
  value is not an integer or out of range"; min > max -> "ERR min is
  greater than max"; WRONGTYPE; a non-integer stored value; "ERR increment
  or decrement would overflow" (even when the result would also be out of
  range); then the range (nil).
- INCRBYFLOATBOUND key delta min max: as INCRBYFLOAT (key first): WRONGTYPE,
  a stored value that is not a float, then delta, min, max ("ERR value is
  not a valid float"), min > max, a NaN/infinite result ("ERR increment
  would produce NaN or Infinity"), then the range (nil).  Bounds may be
  -inf/+inf.  The reply is formatted as INCRBYFLOAT's.
- Both keep the TTL, notify incrby / incrbyfloat, and propagate as SET key
  value KEEPTTL (nothing when refused).
- ZADD key [options] MAXLEN count [LOWEST|HIGHEST] score member ...: after
  the add at most count members stay; LOWEST (default) evicts the lowest
  scores, HIGHEST the highest.  The reply is ZADD's.  A negative count:
  "ERR The MAXLEN argument must be >= 0." (XADD's words); MAXLEN twice or
  without a count: syntax error.  Effects: the ZADD without MAXLEN, then
  ZREMRANGEBYRANK key first last; events zadd, zremrangebyrank (and del).
- ZTRIM key MAXLEN count [LOWEST|HIGHEST] | MINSCORE s | MAXSCORE s:
  MINSCORE removes score < s, MAXSCORE removes score > s; replies the number
  removed (0 for a missing key); effect ZREMRANGEBYRANK / ZREMRANGEBYSCORE.
"""
import os
import random
import shutil
import subprocess
import time

import pytest
import redis

from test_aof import AOFDIR, aof_start, wait_for, written_then_kill9
from test_repl import same_digest, link_up

ERR_INT = "value is not an integer or out of range"
ERR_FLOAT = "value is not a valid float"
ERR_MINMAX = "min is greater than max"
ERR_OVF = "increment or decrement would overflow"
ERR_NAN = "increment would produce NaN or Infinity"
ERR_WT = "WRONGTYPE Operation against a key holding the wrong kind of value"
ERR_SYNTAX = "syntax error"
ERR_MAXLEN = "The MAXLEN argument must be >= 0."
MAX64 = 2 ** 63 - 1
MIN64 = -2 ** 63


class E(str):
    """An expected error reply (text without the "-")."""


def call(c, *args):
    """The reply, or E(full error text): redis-py strips the "ERR " of an
    error (and the code of a few it maps to classes); this puts it back."""
    try:
        return c.execute_command(*args)
    except redis.exceptions.ReadOnlyError as e:
        return E("READONLY " + str(e))
    except redis.exceptions.NoPermissionError as e:
        return E("NOPERM " + str(e))
    except redis.ResponseError as e:
        msg = str(e)
        code = msg.split(" ", 1)[0]
        if code.isalpha() and code.isupper() and len(code) > 2:
            return E(msg)
        return E("ERR " + msg)


def raw(c, *args):
    """The reply without redis-py's per-command parsing (COMMAND ...)."""
    conn = c.connection_pool.get_connection("raw")
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        c.connection_pool.release(conn)


def run_table(c, table):
    for args, want in table:
        got = call(c, *args)
        if isinstance(want, E):
            assert isinstance(got, E) and got == want, (args, got, want)
        else:
            assert not isinstance(got, E) and got == want, (args, got, want)


@pytest.fixture
def c(server):
    return server.client()


# --- reply tables ----------------------------------------------------------

def test_incrbybound_reply_table(c):
    c.set("s", "abc")
    c.lpush("l", "x")
    c.set("big", MAX64 - 1)
    c.set("small", MIN64 + 1)
    run_table(c, [
        (("INCRBYBOUND", "k", 5, 0, 10), 5),
        (("INCRBYBOUND", "k", 5, 0, 10), 10),
        (("INCRBYBOUND", "k", 1, 0, 10), None),       # 11 > max: nil
        (("GET", "k"), b"10"),                        # unchanged
        (("INCRBYBOUND", "k", -10, 0, 10), 0),        # reaches min exactly
        (("INCRBYBOUND", "k", -1, 0, 10), None),      # never negative
        (("INCRBYBOUND", "k", 0, 0, 0), 0),           # min == max allowed
        (("INCRBYBOUND", "miss", 3, 5, 9), None),     # missing counts as 0: 3 < 5
        (("EXISTS", "miss"), 0),                      # and is not created
        (("INCRBYBOUND", "miss", 7, 5, 9), 7),
        (("INCRBYBOUND", "neg", -3, -5, 5), -3),
        # argument errors, in order, before the key is looked up
        (("INCRBYBOUND", "k", "x", 0, 10), E("ERR " + ERR_INT)),
        (("INCRBYBOUND", "k", "1.5", 0, 10), E("ERR " + ERR_INT)),
        (("INCRBYBOUND", "k", 1, "a", 10), E("ERR " + ERR_INT)),
        (("INCRBYBOUND", "k", 1, 0, "99999999999999999999"), E("ERR " + ERR_INT)),
        (("INCRBYBOUND", "k", 1, 10, 0), E("ERR " + ERR_MINMAX)),
        (("INCRBYBOUND", "l", "x", 0, 1), E("ERR " + ERR_INT)),   # bad delta wins over WRONGTYPE (as INCRBY)
        (("INCRBYBOUND", "l", 1, 2, 1), E("ERR " + ERR_MINMAX)),
        (("INCRBYBOUND", "l", 1, 0, 10), E(ERR_WT)),
        (("INCRBYBOUND", "s", 1, 0, 10), E("ERR " + ERR_INT)),     # stored value not an integer
        (("INCRBYBOUND", "big", 5, 0, MAX64), E("ERR " + ERR_OVF)),
        (("INCRBYBOUND", "big", 1, 0, MAX64), MAX64),
        (("INCRBYBOUND", "small", -5, MIN64, 0), E("ERR " + ERR_OVF)),
        (("INCRBYBOUND", "small", -1, MIN64, 0), MIN64),
        (("INCRBYBOUND", "k", 1, 0), E("ERR wrong number of arguments for 'incrbybound' command")),
        (("INCRBYBOUND", "k", 1, 0, 1, 2), E("ERR wrong number of arguments for 'incrbybound' command")),
    ])
    assert c.object("encoding", "k") == b"int"


def test_incrbyfloatbound_reply_table(c):
    c.set("s", "abc")
    c.lpush("l", "x")
    run_table(c, [
        (("INCRBYFLOATBOUND", "f", "1.5", 0, 3), b"1.5"),
        (("INCRBYFLOATBOUND", "f", "1.5", 0, 3), b"3"),           # formatted as INCRBYFLOAT
        (("INCRBYFLOATBOUND", "f", "0.1", 0, 3), None),
        (("GET", "f"), b"3"),
        (("INCRBYFLOATBOUND", "f", "-3", 0, 3), b"0"),
        (("INCRBYFLOATBOUND", "f", "-0.5", 0, 3), None),
        (("INCRBYFLOATBOUND", "f", "1e3", "-inf", "+inf"), b"1000"),
        (("INCRBYFLOATBOUND", "f", "0.25", "1000.25", "1000.25"), b"1000.25"),
        (("INCRBYFLOATBOUND", "m", "-1", "0", "5"), None),
        (("EXISTS", "m"), 0),
        (("INCRBYFLOATBOUND", "f", "inf", "-inf", "inf"), E("ERR " + ERR_NAN)),
        (("INCRBYFLOATBOUND", "f", "x", 0, 1), E("ERR " + ERR_FLOAT)),
        (("INCRBYFLOATBOUND", "f", 1, "nan", 1), E("ERR " + ERR_FLOAT)),
        (("INCRBYFLOATBOUND", "f", 1, 0, "y"), E("ERR " + ERR_FLOAT)),
        (("INCRBYFLOATBOUND", "f", 1, 2, 1), E("ERR " + ERR_MINMAX)),
        (("INCRBYFLOATBOUND", "l", "x", 0, 1), E(ERR_WT)),        # key first, as INCRBYFLOAT
        (("INCRBYFLOATBOUND", "s", "x", 0, 1), E("ERR " + ERR_FLOAT)),
        (("INCRBYFLOATBOUND", "s", 1, 0, 1), E("ERR " + ERR_FLOAT)),
        (("INCRBYFLOATBOUND", "f", 1, 0), E("ERR wrong number of arguments for 'incrbyfloatbound' command")),
    ])


def read_events(p, n):
    names = []
    deadline = time.monotonic() + 5
    while len(names) < n and time.monotonic() < deadline:
        m = p.get_message(timeout=0.5)
        if m and m["type"] == "pmessage":
            names.append((m["channel"].split(b":", 1)[1], m["data"]))
    return names


def test_counters_keep_ttl_and_notify(server):
    c = server.client()
    c.set("k", 1, ex=1000)
    c.set("f", 1, ex=1000)
    c.config_set("notify-keyspace-events", "KEA")
    p = c.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_for(lambda: p.get_message(timeout=1.0) is not None, what="psubscribe")
    assert c.execute_command("INCRBYBOUND", "k", 1, 0, 5) == 2
    assert c.execute_command("INCRBYBOUND", "k", 10, 0, 5) is None
    assert c.execute_command("INCRBYFLOATBOUND", "f", "0.5", 0, 5) == b"1.5"
    assert c.execute_command("INCRBYFLOATBOUND", "f", "10", 0, 5) is None
    assert 990 < c.ttl("k") <= 1000 and 990 < c.ttl("f") <= 1000
    # Only the applied calls notify.
    assert read_events(p, 2) == [(b"incrby", b"k"), (b"incrbyfloat", b"f")]
    assert p.get_message(timeout=0.3) is None
    p.close()


def zr(c, key):
    return c.zrange(key, 0, -1, withscores=True)


def test_zadd_maxlen_reply_table(c):
    c.set("s", "x")
    run_table(c, [
        (("ZADD", "z", "MAXLEN", 3, 1, "a", 2, "b", 3, "c", 4, "d", 5, "e"), 5),
        (("ZRANGE", "z", 0, -1), [b"c", b"d", b"e"]),               # lowest evicted
        (("ZADD", "z", "MAXLEN", 3, "LOWEST", 0, "x"), 1),           # added then evicted at once
        (("ZRANGE", "z", 0, -1), [b"c", b"d", b"e"]),
        (("ZADD", "z", "MAXLEN", 2, "HIGHEST", 0, "x"), 1),          # highest evicted
        (("ZRANGE", "z", 0, -1), [b"x", b"c"]),
        (("ZADD", "z", "CH", "maxlen", "2", "GT", 9, "x"), 1),      # options in any order, case-insensitive
        (("ZRANGE", "z", 0, -1), [b"c", b"x"]),
        (("ZADD", "z", "MAXLEN", 5, "INCR", 1, "c"), 4),
        (("ZADD", "z", "XX", "MAXLEN", 1, 1, "nope"), 0),            # nothing added, still trimmed to 1
        (("ZRANGE", "z", 0, -1), [b"x"]),
        (("ZADD", "z", "MAXLEN", 0, 1, "y"), 1),                     # MAXLEN 0 empties and deletes the key
        (("EXISTS", "z"), 0),
        (("ZADD", "z", "XX", "MAXLEN", 1, 1, "y"), 0),
        (("EXISTS", "z"), 0),
        (("ZADD", "z", "MAXLEN", -1, 1, "a"), E("ERR " + ERR_MAXLEN)),
        (("ZADD", "z", "MAXLEN", "x", 1, "a"), E("ERR " + ERR_INT)),
        (("ZADD", "z", "MAXLEN", "1.5", 1, "a"), E("ERR " + ERR_INT)),
        (("ZADD", "z", "MAXLEN", 1, "MAXLEN", 2, 1, "a"), E("ERR " + ERR_SYNTAX)),
        (("ZADD", "z", "MAXLEN"), E("ERR wrong number of arguments for 'zadd' command")),
        (("ZADD", "z", "MAXLEN", 1), E("ERR " + ERR_SYNTAX)),
        (("ZADD", "z", "MAXLEN", 1, 1), E("ERR " + ERR_SYNTAX)),
        (("ZADD", "z", "MAXLEN", 1, "x", "a"), E("ERR " + ERR_FLOAT)),
        (("ZADD", "z", "MAXLEN", 1, "NX", "XX", 1, "a"),
         E("ERR XX and NX options at the same time are not compatible")),
        (("ZADD", "s", "MAXLEN", 1, 1, "a"), E(ERR_WT)),
        (("EXISTS", "z"), 0),                                         # no error changed anything
    ])


def test_zadd_maxlen_skiplist_encoding(c):
    """Both encodings trim the same (the set goes past the listpack limit)."""
    members = []
    for i in range(300):
        members += [i, "m%03d" % i]
    assert c.execute_command("ZADD", "z", "MAXLEN", 200, *members) == 300
    assert c.object("encoding", "z") == b"skiplist"
    assert c.zcard("z") == 200
    assert c.zrange("z", 0, 0) == [b"m100"]
    assert c.execute_command("ZADD", "z", "MAXLEN", 150, "HIGHEST", -1, "low") == 1
    assert c.zrange("z", 0, -1)[:2] == [b"low", b"m100"] and c.zcard("z") == 150
    assert c.zrange("z", -1, -1) == [b"m248"]


def test_ztrim_reply_table(c):
    c.set("s", "x")
    c.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6})
    run_table(c, [
        (("ZTRIM", "z", "MAXLEN", 10), 0),
        (("ZTRIM", "z", "MAXLEN", 5), 1),                 # evicts a (lowest)
        (("ZTRIM", "z", "MAXLEN", 4, "HIGHEST"), 1),      # evicts f
        (("ZTRIM", "z", "maxlen", 4, "lowest"), 0),
        (("ZRANGE", "z", 0, -1), [b"b", b"c", b"d", b"e"]),
        (("ZTRIM", "z", "MINSCORE", 3), 1),               # score < 3: b
        (("ZTRIM", "z", "MINSCORE", 3), 0),               # 3 itself stays
        (("ZTRIM", "z", "MAXSCORE", 4), 1),               # score > 4: e
        (("ZTRIM", "z", "MAXSCORE", 4), 0),
        (("ZRANGE", "z", 0, -1), [b"c", b"d"]),
        (("ZTRIM", "z", "MINSCORE", "-inf"), 0),
        (("ZTRIM", "z", "MAXSCORE", "+inf"), 0),
        (("ZTRIM", "miss", "MAXLEN", 0), 0),
        (("ZTRIM", "z", "MAXSCORE", "x"), E("ERR " + ERR_FLOAT)),
        (("ZTRIM", "z", "MINSCORE", "nan"), E("ERR " + ERR_FLOAT)),
        (("ZTRIM", "z", "MAXLEN", -1), E("ERR " + ERR_MAXLEN)),
        (("ZTRIM", "z", "MAXLEN", "x"), E("ERR " + ERR_INT)),
        (("ZTRIM", "z", "MAXLEN", 1, "SIDEWAYS"), E("ERR " + ERR_SYNTAX)),
        (("ZTRIM", "z", "MINSCORE", 1, "LOWEST"), E("ERR " + ERR_SYNTAX)),
        (("ZTRIM", "z", "COUNT", 1), E("ERR " + ERR_SYNTAX)),
        (("ZTRIM", "s", "MAXLEN", 1), E(ERR_WT)),
        (("ZTRIM", "s", "MAXLEN", -1), E("ERR " + ERR_MAXLEN)),    # arguments before the key
        (("ZTRIM", "z"), E("ERR wrong number of arguments for 'ztrim' command")),
        (("ZRANGE", "z", 0, -1), [b"c", b"d"]),
        (("ZTRIM", "z", "MAXSCORE", "-inf"), 2),          # everything: key deleted
        (("EXISTS", "z"), 0),
    ])


def test_zset_trim_events(server):
    c = server.client()
    c.config_set("notify-keyspace-events", "KEA")
    p = c.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_for(lambda: p.get_message(timeout=1.0) is not None, what="psubscribe")
    c.execute_command("ZADD", "z", "MAXLEN", 1, 1, "a", 2, "b")
    c.execute_command("ZTRIM", "z", "MAXLEN", 5)        # nothing removed: no event
    c.execute_command("ZTRIM", "z", "MINSCORE", 5)
    c.execute_command("ZADD", "z", "MAXLEN", 0, 1, "a")
    names = [n for n, _ in read_events(p, 7)]
    assert names == [b"zadd", b"zremrangebyrank", b"zremrangebyscore", b"del",
                     b"zadd", b"zremrangebyrank", b"del"]
    p.close()


# --- the command table ------------------------------------------------------

def test_command_info_and_docs(server, oracle):
    c, o = server.client(), oracle.client()
    for new, like, arity in (("incrbybound", "incrby", 5), ("incrbyfloatbound", "incrbyfloat", 5),
                             ("ztrim", "zremrangebyrank", -4)):
        mine = raw(c, "COMMAND", "INFO", new)[0]
        ref = raw(o, "COMMAND", "INFO", like)[0]
        assert mine[0] == new.encode() and mine[1] == arity
        assert mine[2:] == ref[2:], new      # flags, key range, ACL categories, key specs
        docs = raw(c, "COMMAND", "DOCS", new)
        assert docs[0] == new.encode()
        d = dict(zip(docs[1][::2], docs[1][1::2]))
        assert d[b"since"] == b"0.1.0" and d[b"summary"]
    assert raw(c, "COMMAND", "GETKEYS", "ZTRIM", "zk", "MAXLEN", "1") == [b"zk"]
    assert raw(c, "COMMAND", "GETKEYS", "INCRBYBOUND", "ck", "1", "0", "2") == [b"ck"]
    names = raw(c, "COMMAND", "LIST")
    assert {b"incrbybound", b"incrbyfloatbound", b"ztrim"} <= set(names)


def test_zadd_docs_list_maxlen(server, oracle):
    """COMMAND DOCS ZADD is redis-server's plus the MAXLEN block, before the
    score/member pairs."""
    mine = raw(server.client(), "COMMAND", "DOCS", "zadd")
    ref = raw(oracle.client(), "COMMAND", "DOCS", "zadd")
    d, r = dict(zip(mine[1][::2], mine[1][1::2])), dict(zip(ref[1][::2], ref[1][1::2]))
    names = [dict(zip(a[::2], a[1::2]))[b"name"] for a in d[b"arguments"]]
    assert names == [b"key", b"condition", b"comparison", b"change", b"increment", b"maxlen", b"score_member"]
    maxlen = d[b"arguments"][5]
    assert maxlen == [b"name", b"maxlen", b"type", b"block", b"since", b"0.1.0", b"flags", [b"optional"],
                      b"arguments",
                      [[b"name", b"count", b"type", b"integer", b"token", b"MAXLEN"],
                       [b"name", b"evict", b"type", b"oneof", b"flags", [b"optional"], b"arguments",
                        [[b"name", b"lowest", b"type", b"pure-token", b"token", b"LOWEST"],
                         [b"name", b"highest", b"type", b"pure-token", b"token", b"HIGHEST"]]]]]
    d[b"arguments"] = d[b"arguments"][:5] + d[b"arguments"][6:]
    assert d == r


# --- MULTI, scripts, ACL, replica, OOM ----------------------------------------

def test_multi_and_scripts(c):
    p = c.pipeline(transaction=True)
    p.execute_command("INCRBYBOUND", "k", 2, 0, 2)
    p.execute_command("INCRBYBOUND", "k", 2, 0, 2)
    p.execute_command("INCRBYFLOATBOUND", "f", "0.5", 0, 1)
    p.execute_command("ZADD", "z", "MAXLEN", 1, 1, "a", 2, "b")
    p.execute_command("ZTRIM", "z", "MAXLEN", 0)
    assert p.execute() == [2, None, b"0.5", 2, 1]
    lua = ("local r = {} "
           "r[1] = redis.call('INCRBYBOUND', KEYS[1], 1, 0, 3) "
           "r[2] = redis.call('INCRBYBOUND', KEYS[1], 5, 0, 3) == false and 'nil' or 'x' "
           "r[3] = redis.call('INCRBYFLOATBOUND', KEYS[2], '0.5', 0, 1) "
           "r[4] = redis.call('ZADD', KEYS[3], 'MAXLEN', 2, 1, 'a', 2, 'b', 3, 'c') "
           "r[5] = redis.call('ZTRIM', KEYS[3], 'MINSCORE', 3) "
           "r[6] = redis.pcall('ZTRIM', KEYS[3], 'MAXLEN', -1)['err'] "
           "return r")
    assert c.eval(lua, 3, "k", "f", "z") == [3, b"nil", b"1", 3, 1, b"ERR " + ERR_MAXLEN.encode()]
    assert c.zrange("z", 0, -1) == [b"c"]


def test_acl_categories(server):
    c = server.client()
    c.execute_command("ACL", "SETUSER", "str", "on", "nopass", "~*", "+@string")
    c.execute_command("ACL", "SETUSER", "zs", "on", "nopass", "~*", "+@sortedset", "-ztrim")
    u = server.client(username="str", password="x")
    assert u.execute_command("INCRBYBOUND", "k", 1, 0, 5) == 1
    assert u.execute_command("INCRBYFLOATBOUND", "f", 1, 0, 5) == b"1"
    with pytest.raises(redis.exceptions.NoPermissionError):
        u.execute_command("ZTRIM", "z", "MAXLEN", 1)
    z = server.client(username="zs", password="x")
    assert z.execute_command("ZADD", "z", "MAXLEN", 1, 1, "a") == 1
    with pytest.raises(redis.exceptions.NoPermissionError):
        z.execute_command("ZTRIM", "z", "MAXLEN", 1)
    with pytest.raises(redis.exceptions.NoPermissionError):
        z.execute_command("INCRBYBOUND", "k", 1, 0, 5)


def test_readonly_replica_refuses(start_server):
    p_srv = start_server()
    r_srv = start_server(args=["--replicaof", p_srv.host, str(p_srv.port)])
    r = r_srv.client()
    wait_for(lambda: link_up(r), what="link up")
    for cmd in (("INCRBYBOUND", "k", 1, 0, 5), ("INCRBYFLOATBOUND", "k", 1, 0, 5),
                ("ZADD", "z", "MAXLEN", 1, 1, "a"), ("ZTRIM", "z", "MAXLEN", 1)):
        assert call(r, *cmd) == E("READONLY You can't write against a read only replica."), cmd


def test_oom_refuses_growing_commands(start_server):
    s = start_server(maxmemory="1", maxmemory_policy="noeviction")
    c = s.client()
    oom = E("OOM command not allowed when used memory > 'maxmemory'.")
    for cmd in (("INCRBYBOUND", "k", 1, 0, 5), ("INCRBYFLOATBOUND", "k", 1, 0, 5),
                ("ZADD", "z", "MAXLEN", 1, 1, "a")):
        assert call(c, *cmd) == oom, cmd
    # ZTRIM only frees memory (not denyoom, like ZREMRANGEBYRANK).
    assert call(c, "ZTRIM", "z", "MAXLEN", 1) == 0


# --- differential against the Lua scripts they replace ------------------------

LUA_INCR_BOUND = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local r = v + tonumber(ARGV[1])
if r < tonumber(ARGV[2]) or r > tonumber(ARGV[3]) then return false end
return redis.call('INCRBY', KEYS[1], ARGV[1])
"""

LUA_FLOAT_BOUND = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local r = v + tonumber(ARGV[1])
if r < tonumber(ARGV[2]) or r > tonumber(ARGV[3]) then return false end
return redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])
"""

LUA_CAPPED_ZADD = """
local maxlen = tonumber(ARGV[1])
local added = redis.call('ZADD', KEYS[1], unpack(ARGV, 3))
local n = redis.call('ZCARD', KEYS[1])
if n > maxlen then
  if ARGV[2] == 'HIGHEST' then redis.call('ZREMRANGEBYRANK', KEYS[1], maxlen, -1)
  else redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - maxlen - 1) end
end
return added
"""

LUA_ZTRIM = """
local n = redis.call('ZCARD', KEYS[1])
if ARGV[1] == 'MAXLEN' then
  local maxlen = tonumber(ARGV[2])
  if n <= maxlen then return 0 end
  if ARGV[3] == 'HIGHEST' then return redis.call('ZREMRANGEBYRANK', KEYS[1], maxlen, -1) end
  return redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - maxlen - 1)
elseif ARGV[1] == 'MINSCORE' then
  return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
else
  return redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. ARGV[2], '+inf')
end
"""

OPS = 3000


def final_state(c, keys):
    out = []
    for k in keys:
        t = c.type(k)
        if t == b"zset":
            v = zr(c, k)
        elif t == b"string":
            v = c.get(k)
        else:
            v = None
        out.append((t, v, c.ttl(k) > 0))
    return out


def test_counters_match_lua(c):
    rnd = random.Random(39)
    sha_i, sha_f = c.script_load(LUA_INCR_BOUND), c.script_load(LUA_FLOAT_BOUND)
    for i in range(OPS):
        k = rnd.choice(["a", "b"])
        op = rnd.random()
        lo = rnd.randint(-30, 10)
        hi = lo + rnd.randint(0, 40)
        if op < 0.45:
            d = rnd.randint(-12, 12)
            n = call(c, "INCRBYBOUND", "n:i:" + k, d, lo, hi)
            s = call(c, "EVALSHA", sha_i, 1, "s:i:" + k, d, lo, hi)
        elif op < 0.9:
            d = rnd.randint(-24, 24) / 4.0      # exact in binary: long double and Lua agree
            n = call(c, "INCRBYFLOATBOUND", "n:f:" + k, repr(d), lo, hi)
            s = call(c, "EVALSHA", sha_f, 1, "s:f:" + k, repr(d), lo, hi)
        elif op < 0.95:
            n = c.expire("n:i:" + k, 1000), c.expire("n:f:" + k, 1000)
            s = c.expire("s:i:" + k, 1000), c.expire("s:f:" + k, 1000)
        else:
            n = c.delete("n:i:" + k, "n:f:" + k)
            s = c.delete("s:i:" + k, "s:f:" + k)
        assert n == s, (i, op, n, s)
    for kind in ("i", "f"):
        keys = ["%s:%s" % (kind, k) for k in "ab"]
        assert final_state(c, ["n:" + k for k in keys]) == final_state(c, ["s:" + k for k in keys])
    assert c.get("n:i:a") is not None or c.get("n:i:b") is not None


def test_capped_zsets_match_lua(c):
    rnd = random.Random(3939)
    sha_z, sha_t = c.script_load(LUA_CAPPED_ZADD), c.script_load(LUA_ZTRIM)
    for i in range(OPS):
        k = rnd.choice(["a", "b"])
        op = rnd.random()
        if op < 0.7:
            maxlen = rnd.randint(0, 160)     # crosses the listpack limit (128)
            side = rnd.choice(["LOWEST", "HIGHEST", ""])
            pairs = []
            for _ in range(rnd.randint(1, 6)):
                pairs += [rnd.randint(-500, 500) / 2.0, "m%d" % rnd.randint(0, 400)]
            opts = ["MAXLEN", maxlen] + ([side] if side else [])
            n = call(c, "ZADD", "n:" + k, *opts, *pairs)
            s = call(c, "EVALSHA", sha_z, 1, "s:" + k, maxlen, side or "LOWEST", *pairs)
        elif op < 0.9:
            what = rnd.choice(["MAXLEN", "MINSCORE", "MAXSCORE"])
            if what == "MAXLEN":
                side = rnd.choice(["LOWEST", "HIGHEST"])
                arg = [rnd.randint(0, 160), side]
            else:
                arg = [repr(rnd.randint(-500, 500) / 2.0)]
            n = call(c, "ZTRIM", "n:" + k, what, *arg)
            s = call(c, "EVALSHA", sha_t, 1, "s:" + k, what, *arg)
        else:
            pairs = {"m%d" % rnd.randint(0, 400): rnd.randint(-500, 500) / 2.0 for _ in range(20)}
            n = c.zadd("n:" + k, pairs)
            s = c.zadd("s:" + k, pairs)
        assert n == s, (i, op, n, s)
    assert final_state(c, ["n:a", "n:b"]) == final_state(c, ["s:a", "s:b"])
    assert c.zcard("n:a") + c.zcard("n:b") > 0


# --- replication and AOF ------------------------------------------------------

def native_workload(c, seed, n=600):
    """Every new command, with TTLs, MULTI and a script, over a few keys."""
    rnd = random.Random(seed)
    for i in range(n):
        k = "k%d" % rnd.randint(0, 5)
        op = rnd.randint(0, 7)
        if op == 0:
            call(c, "INCRBYBOUND", "i:" + k, rnd.randint(-5, 5), 0, 20)
        elif op == 1:
            call(c, "INCRBYFLOATBOUND", "f:" + k, repr(rnd.randint(-30, 30) / 7.0), -3, 10)
        elif op == 2:
            pairs = []
            for _ in range(rnd.randint(1, 5)):
                pairs += [repr(rnd.random() * 100), "m%d" % rnd.randint(0, 200)]
            call(c, "ZADD", "z:" + k, "MAXLEN", rnd.randint(0, 140), rnd.choice(["LOWEST", "HIGHEST"]), *pairs)
        elif op == 3:
            what = rnd.choice(["MAXLEN", "MINSCORE", "MAXSCORE"])
            arg = rnd.randint(0, 140) if what == "MAXLEN" else repr(rnd.random() * 100)
            call(c, "ZTRIM", "z:" + k, what, arg)
        elif op == 4:
            c.expire(rnd.choice(["i:", "f:", "z:"]) + k, 10000)
        elif op == 5:
            p = c.pipeline(transaction=True)
            p.execute_command("INCRBYBOUND", "i:" + k, 1, 0, 3)
            p.execute_command("ZADD", "z:" + k, "MAXLEN", 3, rnd.random(), "x%d" % i)
            p.execute_command("ZTRIM", "z:" + k, "MINSCORE", repr(rnd.random() * 10))
            p.execute(raise_on_error=False)
        elif op == 6:
            c.eval("redis.call('INCRBYFLOATBOUND', KEYS[1], '0.25', 0, 2) "
                   "redis.call('ZADD', KEYS[2], 'MAXLEN', 2, 'HIGHEST', ARGV[1], ARGV[2]) "
                   "return redis.call('ZTRIM', KEYS[2], 'MAXSCORE', ARGV[1])",
                   2, "f:" + k, "z:" + k, repr(rnd.random() * 50), "y%d" % i)
        else:
            c.zadd("z:" + k, {"p%d" % rnd.randint(0, 300): rnd.random() * 100 for _ in range(30)})


def test_redis_replica_stays_equal(start_server, start_oracle):
    p_srv = start_server(enable_debug_command="yes")
    o_srv = start_oracle(enable_debug_command="yes", repl_diskless_sync_delay="0",
                         replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, o = p_srv.client(), o_srv.client()
    wait_for(lambda: link_up(o), what="link up")
    native_workload(p, 1)
    assert p.dbsize() > 0
    assert same_digest(p, o)
    # A second replica attaching now gets the data by full sync too.
    assert sorted(p.keys()) == sorted(o.keys())


def test_aof_reload_and_redis_reads_it(start_server, start_oracle):
    s = aof_start(start_server)
    c = s.client()
    native_workload(c, 2)
    d = c.execute_command("DEBUG", "DIGEST")
    incr = os.path.join(s.tmp, AOFDIR, "appendonly.aof.1.incr.aof")
    written_then_kill9(s)
    with open(incr, "rb") as f:
        text = f.read().upper()
    # The new commands never reach the AOF: only what Redis 7.0 replays.
    for word in (b"INCRBYBOUND", b"INCRBYFLOATBOUND", b"ZTRIM", b"MAXLEN", b"LOWEST", b"HIGHEST"):
        assert word not in text, word
    for word in (b"KEEPTTL", b"ZREMRANGEBYRANK", b"ZREMRANGEBYSCORE"):
        assert word in text, word
    s2 = aof_start(start_server, dir=s.tmp)
    assert s2.client().execute_command("DEBUG", "DIGEST") == d
    s2.stop()
    o = aof_start(start_oracle, dir=s.tmp)
    assert o.client().execute_command("DEBUG", "DIGEST") == d
    o.stop()
    for tool in ("build/cairn-check-aof", "redis-check-aof"):
        path = shutil.which(tool) or os.path.join(os.path.dirname(__file__), "..", "..", tool)
        if not os.path.exists(path):
            continue
        r = subprocess.run([path, os.path.join(s.tmp, AOFDIR, "appendonly.aof.manifest")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (tool, r.stdout + r.stderr)
