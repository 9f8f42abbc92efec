"""Member TTLs of sets and sorted sets (issue 39, item 2): KeyDB's
EXPIREMEMBER key member delay [s|ms], EXPIREMEMBERAT key member
unix-seconds, PEXPIREMEMBERAT key member unix-ms, TTL / PTTL key member.

Contract, as the reply tables below:
- EXPIREMEMBER / EXPIREMEMBERAT / PEXPIREMEMBERAT reply 1 when the TTL was
  set, 0 when the key or the member is missing.  A time at or before now
  removes the member at once (reply 1; propagated as SREM/ZREM; the key is
  deleted when it empties).  Errors, arguments first: a unit other than
  s/ms or a sixth argument -> syntax error; a non-integer time -> "ERR
  value is not an integer or out of range"; a time overflowing ms -> "ERR
  invalid expire time in '<cmd>' command"; then WRONGTYPE for strings,
  lists, streams.  On a hash key they run hash-field expiry (HEXPIRE's
  mechanism, issue 38): the same replies, the field's TTL is the one HTTL
  reads, and the effect is HPEXPIREAT key <ms> FIELDS 1 field.
- TTL / PTTL key member: -2 when the key or member is missing, -1 when the
  member has no TTL, else the time left (TTL rounded to seconds); a fourth
  argument is an arity error; WRONGTYPE for strings, lists, streams.
  COMMAND INFO TTL keeps Redis 7.0's arity (2).
- A member past its TTL is invisible to every command at once on a
  primary (the lookup removes it first, stated as SREM/ZREM, events
  srem/zrem and del), and the active expiry reclaims the rest.  SADD / ZADD
  of a present member keep its TTL; a member removed and added again has
  none; RENAME/MOVE carry the TTLs, COPY copies them.  A replica's reads
  hide members past their TTL until the primary's SREM/ZREM arrive.
  Setting a TTL is propagated as PEXPIREMEMBERAT key member <ms> (never
  inside MULTI/EXEC), keyspace event "expiremember" (generic).
- RDB: one AUX field "cairn-member-ttl" after the keys; redis-server 7.0
  loads the file without the TTLs.  AOF rewrite: PEXPIREMEMBERAT.
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
from test_native_patterns import E, call, raw, run_table

ERR_INT = E("ERR value is not an integer or out of range")
ERR_SYNTAX = E("ERR syntax error")
ERR_WT = E("WRONGTYPE Operation against a key holding the wrong kind of value")
MAX64 = 2 ** 63 - 1


@pytest.fixture
def c(server):
    return server.client()


def now_ms():
    return int(time.time() * 1000)


# --- reply tables -----------------------------------------------------------

def test_reply_table(c):
    c.sadd("s", "a", "b", "c", "1", "2")
    c.zadd("z", {"a": 1, "b": 2})
    c.set("str", "x")
    c.rpush("l", "a")
    c.xadd("st", {"f": "v"})
    far = now_ms() + 10 ** 7
    run_table(c, [
        (("EXPIREMEMBER", "s", "a", 100), 1),
        (("EXPIREMEMBER", "s", "b", 100000, "ms"), 1),
        (("EXPIREMEMBER", "s", "1", 100, "S"), 1),
        (("EXPIREMEMBER", "s", "2", 100, "MS"), 1),
        (("EXPIREMEMBER", "s", "missing", 100), 0),
        (("EXPIREMEMBER", "nokey", "a", 100), 0),
        (("EXPIREMEMBERAT", "z", "a", far // 1000), 1),
        (("PEXPIREMEMBERAT", "z", "b", far), 1),
        (("PEXPIREMEMBERAT", "z", "c", far), 0),
        (("EXPIREMEMBER", "s", "a", 100, "h"), ERR_SYNTAX),
        (("EXPIREMEMBER", "s", "a", 100, "ms", "x"), ERR_SYNTAX),
        (("EXPIREMEMBER", "s", "a", "x"), ERR_INT),
        (("EXPIREMEMBER", "s", "a", "1.5"), ERR_INT),
        (("EXPIREMEMBER", "s", "a", "99999999999999999999"), ERR_INT),
        (("EXPIREMEMBER", "s", "a", MAX64), E("ERR invalid expire time in 'expiremember' command")),
        (("EXPIREMEMBER", "s", "a", MAX64 - 10, "ms"), E("ERR invalid expire time in 'expiremember' command")),
        (("EXPIREMEMBERAT", "s", "a", MAX64), E("ERR invalid expire time in 'expirememberat' command")),
        (("EXPIREMEMBERAT", "s", "a", 1, "s"), E("ERR wrong number of arguments for 'expirememberat' command")),
        (("PEXPIREMEMBERAT", "s", "a", "x"), ERR_INT),
        (("EXPIREMEMBER", "str", "a", 10), ERR_WT),
        (("EXPIREMEMBER", "l", "a", 10), ERR_WT),
        (("EXPIREMEMBER", "st", "a", 10), ERR_WT),
        (("EXPIREMEMBER", "s"), E("ERR wrong number of arguments for 'expiremember' command")),
        (("TTL", "s", "a"), 100),
        (("TTL", "s", "b"), 100),
        (("TTL", "s", "c"), -1),
        (("TTL", "s", "zz"), -2),
        (("TTL", "nokey", "a"), -2),
        (("TTL", "str", "a"), ERR_WT),
        (("PTTL", "l", "a"), ERR_WT),
        (("TTL", "s", "a", "b"), E("ERR wrong number of arguments for 'ttl' command")),
        (("PTTL", "s", "a", "b"), E("ERR wrong number of arguments for 'pttl' command")),
        (("TTL", "s"), -1),
        (("TTL",), E("ERR wrong number of arguments for 'ttl' command")),
    ])
    assert 99000 < c.execute_command("PTTL", "s", "a") <= 100000
    assert 0 < c.execute_command("PTTL", "s", "b") <= 100000
    assert 0 < c.execute_command("PTTL", "z", "b") <= 10 ** 7
    # A past time removes the member now; the last member takes the key.
    assert c.execute_command("EXPIREMEMBER", "s", "c", 0) == 1
    assert c.execute_command("EXPIREMEMBER", "s", "1", -5) == 1
    assert c.execute_command("PEXPIREMEMBERAT", "z", "a", 1) == 1
    assert sorted(c.smembers("s")) == [b"2", b"a", b"b"]
    assert c.zrange("z", 0, -1) == [b"b"]
    assert c.execute_command("EXPIREMEMBERAT", "z", "b", 0) == 1
    assert c.exists("z") == 0
    # SADD of a present member keeps its TTL; re-adding a removed one has none.
    assert c.sadd("s", "a") == 0 and c.execute_command("TTL", "s", "a") > 0
    assert c.srem("s", "a") == 1 and c.execute_command("TTL", "s", "a") == -2
    assert c.sadd("s", "a") == 1 and c.execute_command("TTL", "s", "a") == -1
    c.zadd("z2", {"m": 1})
    c.execute_command("EXPIREMEMBER", "z2", "m", 100)
    c.zadd("z2", {"m": 5})
    c.zincrby("z2", 1, "m")
    assert c.execute_command("TTL", "z2", "m") > 0 and c.zscore("z2", "m") == 6
    c.zrem("z2", "m")
    c.zadd("z2", {"m": 1})
    assert c.execute_command("TTL", "z2", "m") == -1
    # Overwriting or deleting the key drops its member TTLs.
    c.execute_command("EXPIREMEMBER", "s", "b", 1000)
    c.delete("s")
    c.sadd("s", "b")
    assert c.execute_command("TTL", "s", "b") == -1
    c.execute_command("EXPIREMEMBER", "s", "b", 1000)
    c.sunionstore("s", "s")
    assert c.execute_command("TTL", "s", "b") == -1


def test_hash_key_uses_hash_field_expiry(c):
    c.hset("h", "f", "v", mapping={"g": "w", "k": "x"})
    assert c.execute_command("EXPIREMEMBER", "h", "f", 100) == 1
    assert c.execute_command("EXPIREMEMBER", "h", "nosuch", 100) == 0
    assert 99 <= c.execute_command("TTL", "h", "f") <= 100
    assert 99000 <= c.execute_command("PTTL", "h", "f") <= 100000
    # One mechanism: HEXPIRE's commands see the member TTL, and the reverse.
    assert 99 <= c.execute_command("HTTL", "h", "FIELDS", 1, "f")[0] <= 100
    c.execute_command("HEXPIRE", "h", 50, "FIELDS", 1, "g")
    assert 49 <= c.execute_command("TTL", "h", "g") <= 50
    assert c.execute_command("TTL", "h", "k") == -1
    assert c.execute_command("TTL", "h", "nosuch") == -2
    assert c.execute_command("PEXPIREMEMBERAT", "h", "k", 4102444800000) == 1
    assert c.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "k") == [4102444800000]
    # A time already past deletes the field (reply 1), then the key with
    # its last field.
    assert c.execute_command("EXPIREMEMBERAT", "h", "k", 1) == 1
    assert c.hexists("h", "k") == 0
    assert c.execute_command("EXPIREMEMBER", "h", "f", 0) == 1
    assert c.execute_command("PEXPIREMEMBERAT", "h", "g", 1) == 1
    assert c.exists("h") == 0
    # A short TTL: the field is gone once due, and so is the key.
    c.hset("h2", "f", "v")
    assert c.execute_command("EXPIREMEMBER", "h2", "f", 20, "ms") == 1
    assert wait_for(lambda: c.exists("h2") == 0)
    # Past HEXPIRE's 2^46 ms ceiling: its error, with the command's name.
    c.hset("h3", "f", "v")
    got = call(c, "PEXPIREMEMBERAT", "h3", "f", 1 << 47)
    assert got == E("ERR invalid expire time in 'pexpirememberat' command")


def test_command_info_and_docs(server, oracle):
    c, o = server.client(), oracle.client()
    for name, arity in (("expiremember", -4), ("expirememberat", 4), ("pexpirememberat", 4)):
        info = raw(c, "COMMAND", "INFO", name)[0]
        assert info[0] == name.encode() and info[1] == arity
        assert set(info[2]) == {b"write", b"denyoom", b"fast"}
        assert set(info[6]) == {b"@keyspace", b"@write", b"@fast"}
        docs = raw(c, "COMMAND", "DOCS", name)
        d = dict(zip(docs[1][::2], docs[1][1::2]))
        assert d[b"since"] == b"0.1.0" and d[b"summary"]
        assert raw(c, "COMMAND", "GETKEYS", name.upper(), "kk", "m", "1") == [b"kk"]
    # TTL and PTTL keep Redis's rows.
    for name in ("ttl", "pttl"):
        assert raw(c, "COMMAND", "INFO", name) == raw(o, "COMMAND", "INFO", name)


def test_multi_scripts_acl_oom(start_server):
    s = start_server()
    c = s.client()
    c.sadd("s", "a", "b")
    p = c.pipeline(transaction=True)
    p.execute_command("EXPIREMEMBER", "s", "a", 100)
    p.execute_command("TTL", "s", "a")
    p.execute_command("PEXPIREMEMBERAT", "s", "b", 1)
    p.smembers("s")
    assert p.execute() == [1, 100, 1, {b"a"}]
    c.sadd("s", "b")
    lua = ("local r = {} r[1] = redis.call('EXPIREMEMBER', KEYS[1], 'b', 50) "
           "r[2] = redis.call('TTL', KEYS[1], 'b') "
           "r[3] = redis.pcall('EXPIREMEMBER', KEYS[1], 'b', 'x')['err'] return r")
    assert c.eval(lua, 1, "s") == [1, 50, b"ERR value is not an integer or out of range"]
    c.execute_command("ACL", "SETUSER", "ro", "on", "nopass", "~*", "+@read", "+ttl")
    u = s.client(username="ro", password="x")
    assert u.execute_command("TTL", "s", "b") == 50
    with pytest.raises(redis.exceptions.NoPermissionError):
        u.execute_command("EXPIREMEMBER", "s", "b", 10)
    c.execute_command("CONFIG", "SET", "maxmemory", "1")
    assert call(c, "EXPIREMEMBER", "s", "b", 10) == E("OOM command not allowed when used memory > 'maxmemory'.")


def test_readonly_replica_refuses(start_server):
    p_srv = start_server()
    r_srv = start_server(args=["--replicaof", p_srv.host, str(p_srv.port)])
    r = r_srv.client()
    wait_for(lambda: link_up(r), what="link up")
    for cmd in (("EXPIREMEMBER", "s", "a", 1), ("EXPIREMEMBERAT", "s", "a", 1), ("PEXPIREMEMBERAT", "s", "a", 1)):
        assert call(r, *cmd) == E("READONLY You can't write against a read only replica."), cmd


# --- every command hides an expired member ------------------------------------

# Each case: keys to build (name -> ("set"|"zset", members)), then the
# command.  Members named "gone" get a 1 ms TTL in db 0; db 1 holds the same
# keys without them.  With active expiry off, the command in db 0 must answer
# what it answers in db 1.
SET_CASES = [
    ["SMEMBERS", "k"], ["SISMEMBER", "k", "gone"], ["SMISMEMBER", "k", "gone", "x"], ["SCARD", "k"],
    ["SRANDMEMBER", "k", "10"], ["SPOP", "k", "10"], ["SSCAN", "k", "0", "COUNT", "100"],
    ["SINTER", "k", "k2"], ["SUNION", "k", "k2"], ["SDIFF", "k", "k2"], ["SDIFF", "k2", "k"],
    ["SINTERSTORE", "d", "k", "k2"], ["SUNIONSTORE", "d", "k", "k2"], ["SDIFFSTORE", "d", "k2", "k"],
    ["SMOVE", "k", "k2", "gone"], ["SMOVE", "k2", "k", "gone2"], ["SINTERCARD", "2", "k", "k2"],
    ["SORT", "k", "ALPHA"], ["EXISTS", "k"], ["SREM", "k", "gone"], ["SADD", "k", "gone"],
    ["EXPIREMEMBER", "k", "gone", "100"], ["TTL", "k", "gone"], ["ZUNION", "2", "k", "z"],
    ["ZINTERCARD", "2", "k", "z"],
]
ZSET_CASES = [
    ["ZRANGE", "z", "0", "-1", "WITHSCORES"], ["ZRANGE", "z", "(0", "+inf", "BYSCORE"],
    ["ZRANGEBYLEX", "z", "-", "+"], ["ZREVRANGE", "z", "0", "-1"], ["ZSCORE", "z", "gone"],
    ["ZMSCORE", "z", "gone", "x"], ["ZRANK", "z", "x"], ["ZRANK", "z", "gone"], ["ZREVRANK", "z", "x"],
    ["ZCARD", "z"], ["ZCOUNT", "z", "-inf", "+inf"], ["ZLEXCOUNT", "z", "-", "+"], ["ZSCAN", "z", "0"],
    ["ZRANDMEMBER", "z", "10"], ["ZPOPMIN", "z", "10"], ["ZPOPMAX", "z"], ["ZMPOP", "1", "z", "MIN", "COUNT", "9"],
    ["ZUNION", "2", "z", "z2", "WITHSCORES"], ["ZINTER", "2", "z", "z2"], ["ZDIFF", "2", "z", "z2"],
    ["ZUNIONSTORE", "d", "2", "z", "z2"], ["ZINTERSTORE", "d", "2", "z", "z2"], ["ZDIFFSTORE", "d", "2", "z2", "z"],
    ["ZRANGESTORE", "d", "z", "0", "-1"], ["ZINTERCARD", "2", "z", "z2"], ["ZINCRBY", "z", "1", "gone"],
    ["ZADD", "z", "NX", "5", "gone"], ["ZREM", "z", "gone"], ["SORT", "z", "ALPHA"], ["ZREMRANGEBYRANK", "z", "0", "0"],
    ["ZPOPDUE", "z"], ["ZRANGE", "z", "0", "0"], ["TTL", "z", "gone"], ["EXISTS", "z"], ["TYPE", "z"],
]


def build(c, ttl):
    c.sadd("k", "x", "y", "gone", "both")
    c.sadd("k2", "y", "both", "gone2")
    c.zadd("z", {"x": 1, "y": 2, "gone": 1.5, "both": 3})
    c.zadd("z2", {"y": 5, "both": 1, "gone2": 2})
    if ttl:
        for k, m in (("k", "gone"), ("k", "both"), ("k2", "gone2"), ("z", "gone"), ("z", "both"), ("z2", "gone2")):
            assert c.execute_command("PEXPIREMEMBERAT", k, m, now_ms() + 1) == 1
    else:
        c.srem("k", "gone", "both")
        c.srem("k2", "gone2")
        c.zrem("z", "gone", "both")
        c.zrem("z2", "gone2")


def rcall(c, *args):
    """The raw reply (no redis-py parsing), or E(error text)."""
    try:
        return raw(c, *args)
    except redis.ResponseError as e:
        return E(str(e))


def canon(v):
    """Replies whose order is the server's choice, sorted."""
    if isinstance(v, list) and all(isinstance(x, bytes) for x in v):
        return sorted(v)
    if isinstance(v, list) and len(v) == 2 and isinstance(v[1], list):   # SCAN, ZMPOP
        return [v[0], canon(v[1])]
    return v


def state(c):
    out = {}
    for k in sorted(c.keys()):
        t = c.type(k)
        out[k] = sorted(c.smembers(k)) if t == b"set" else c.zrange(k, 0, -1, withscores=True)
    return out


@pytest.mark.parametrize("cmd", SET_CASES + ZSET_CASES, ids=lambda a: " ".join(a))
def test_expired_member_is_invisible(start_server, cmd):
    s = start_server(enable_debug_command="yes")
    c0, c1 = s.client(db=0), s.client(db=1)
    c0.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    build(c0, True)
    build(c1, False)
    time.sleep(0.01)
    got, want = rcall(c0, *cmd), rcall(c1, *cmd)
    assert canon(got) == canon(want), (got, want)
    assert state(c0) == state(c1)


def test_all_members_expired_deletes_key(start_server):
    s = start_server(enable_debug_command="yes", notify_keyspace_events="KEA")
    c = s.client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    c.sadd("s", "a", "b")
    ps = s.client().pubsub()
    ps.psubscribe("__keyspace@0__:s")
    wait_for(lambda: ps.get_message(timeout=0.1) is not None, what="subscribed")
    # 100 ms, not 1: on a loaded machine "a" must not be due yet when the
    # second EXPIREMEMBER looks the key up (it would be removed then, and
    # the events interleave differently).
    for m in ("a", "b"):
        c.execute_command("EXPIREMEMBER", "s", m, 100, "ms")
    time.sleep(0.3)
    assert c.exists("s") == 0 and c.type("s") == b"none" and c.dbsize() == 0
    events = []
    while True:
        msg = ps.get_message(timeout=1.5)
        if msg is None:
            break
        events.append(msg["data"])
    assert events == [b"expiremember", b"expiremember", b"srem", b"del"]


# --- active expiry ------------------------------------------------------------

def test_active_expiry_reclaims_bounded(start_server):
    """Reclaimed by the active expiry alone (DEBUG DIGEST-VALUE reads the
    stored value without a lookup), over several cycles (1,000 members at
    most per cycle; 10,000 to reclaim)."""
    s = start_server(enable_debug_command="yes", hz="100")
    c, ref = s.client(db=0), s.client(db=1)
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p = c.pipeline(transaction=False)
    for k in range(20):
        p.sadd("s%d" % k, *["m%d" % i for i in range(300)])
        p.zadd("z%d" % k, {"m%d" % i: i for i in range(300)})
        for i in range(250):
            p.execute_command("EXPIREMEMBER", "s%d" % k, "m%d" % i, 20, "ms")
            p.execute_command("EXPIREMEMBER", "z%d" % k, "m%d" % i, 20, "ms")
        p.execute_command("EXPIREMEMBER", "s%d" % k, "m299", 100000)
    p.execute()
    ref.sadd("s", *["m%d" % i for i in range(250, 300)])
    ref.zadd("z", {"m%d" % i: i for i in range(250, 300)})
    ref.sadd("full", *["m%d" % i for i in range(300)])
    want = ref.execute_command("DEBUG", "DIGEST-VALUE", "s", "z")
    full = ref.execute_command("DEBUG", "DIGEST-VALUE", "full")[0]
    time.sleep(0.05)
    # Active expiry off: nothing reclaimed.
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "s3")[0] == full
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    wait_for(lambda: all(c.execute_command("DEBUG", "DIGEST-VALUE", "s%d" % k, "z%d" % k) == want
                         for k in range(20)), what="reclaimed")
    for k in range(20):
        assert c.scard("s%d" % k) == 50 and c.zcard("z%d" % k) == 50
    assert c.execute_command("TTL", "s0", "m299") > 0


# --- replication, AOF, RDB ------------------------------------------------------

def ttl_workload(c, seed, n=400):
    rnd = random.Random(seed)
    for i in range(n):
        k = "k%d" % rnd.randint(0, 5)
        op = rnd.randint(0, 6)
        m = "m%d" % rnd.randint(0, 30)
        if op == 0:
            c.sadd("s:" + k, *["m%d" % rnd.randint(0, 30) for _ in range(4)])
        elif op == 1:
            c.zadd("z:" + k, {"m%d" % rnd.randint(0, 30): rnd.randint(0, 9) for _ in range(4)})
        elif op == 2:
            call(c, "EXPIREMEMBER", rnd.choice(["s:", "z:"]) + k, m, rnd.choice([1, 20, 100, 1000000]), "ms")
        elif op == 3:
            call(c, "PEXPIREMEMBERAT", rnd.choice(["s:", "z:"]) + k, m, now_ms() + rnd.choice([-5, 50, 10 ** 7]))
        elif op == 4:
            c.srem("s:" + k, m)
        elif op == 5:
            p = c.pipeline(transaction=True)
            p.execute_command("EXPIREMEMBER", "s:" + k, m, 10, "ms")
            p.smembers("s:" + k)
            p.execute()
        else:
            c.eval("redis.call('EXPIREMEMBER', KEYS[1], ARGV[1], 30, 'ms') return redis.call('ZCARD', KEYS[1])",
                   1, "z:" + k, m)


def reclaim(c):
    """Touches every key, so that members past their TTL go now (DEBUG
    DIGEST reads values raw, expired members included)."""
    for k in c.keys("*"):
        c.exists(k)


def test_replicas_stay_equal(start_server, start_oracle):
    p_srv = start_server(enable_debug_command="yes")
    o_srv = start_oracle(enable_debug_command="yes", repl_diskless_sync_delay="0",
                         replicaof="%s %d" % (p_srv.host, p_srv.port))
    r_srv = start_server(enable_debug_command="yes", replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, o, r = p_srv.client(), o_srv.client(), r_srv.client()
    wait_for(lambda: link_up(o) and link_up(r), what="links up")
    ttl_workload(p, 7)
    p.sadd("keep", "a", "b")
    p.execute_command("EXPIREMEMBER", "keep", "a", 1000000)
    # The Cairn replica holds the TTL (PEXPIREMEMBERAT replicated).
    wait_for(lambda: r.execute_command("TTL", "keep", "a") > 0, what="ttl replicated")
    # After the short TTLs passed, the primary's SREM/ZREM reach both.
    time.sleep(0.2)
    reclaim(p)
    assert same_digest(p, o, r)
    assert sorted(p.keys()) == sorted(o.keys()) == sorted(r.keys())
    # A replica attached now gets the TTLs by full sync (the RDB's AUX field).
    r2_srv = start_server(replicaof="%s %d" % (p_srv.host, p_srv.port))
    r2 = r2_srv.client()
    wait_for(lambda: link_up(r2), what="link up")
    assert 999000 < r2.execute_command("TTL", "keep", "a") <= 1000000
    assert r2.execute_command("TTL", "keep", "b") == -1


def test_aof_reload_and_rewrite(start_server, start_oracle):
    s = aof_start(start_server, aof_use_rdb_preamble="no")
    c = s.client()
    ttl_workload(c, 3)
    c.sadd("keep", "a", "b")
    c.zadd("zkeep", {"a": 1})
    c.execute_command("EXPIREMEMBER", "keep", "a", 1000000)
    c.execute_command("EXPIREMEMBER", "zkeep", "a", 1000000)
    time.sleep(0.1)
    reclaim(c)
    d = c.execute_command("DEBUG", "DIGEST")
    incr = os.path.join(s.tmp, AOFDIR, "appendonly.aof.1.incr.aof")
    written_then_kill9(s)
    with open(incr, "rb") as f:
        text = f.read().upper()
    assert b"PEXPIREMEMBERAT" in text and b"EXPIREMEMBER\r\n" not in text
    # cairn-check-aof accepts it.
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "build", "cairn-check-aof")
    r = subprocess.run([tool, os.path.join(s.tmp, AOFDIR, "appendonly.aof.manifest")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    s2 = aof_start(start_server, dir=s.tmp, aof_use_rdb_preamble="no")
    c2 = s2.client()
    assert c2.execute_command("DEBUG", "DIGEST") == d
    assert c2.execute_command("TTL", "keep", "a") > 990000 and c2.execute_command("TTL", "zkeep", "a") > 990000
    # The rewrite writes PEXPIREMEMBERAT for each member TTL.
    c2.execute_command("BGREWRITEAOF")
    wait_for(lambda: c2.info("persistence")["aof_rewrite_in_progress"] == 0 and
             c2.info("persistence")["aof_rewrite_scheduled"] == 0, what="rewrite")
    base = [f for f in os.listdir(os.path.join(s.tmp, AOFDIR)) if ".base." in f]
    with open(os.path.join(s.tmp, AOFDIR, base[0]), "rb") as f:
        assert b"PEXPIREMEMBERAT" in f.read()
    s2.stop()
    s3 = aof_start(start_server, dir=s.tmp, aof_use_rdb_preamble="no")
    c3 = s3.client()
    assert c3.execute_command("DEBUG", "DIGEST") == d
    assert c3.execute_command("TTL", "keep", "a") > 990000 and c3.execute_command("TTL", "keep", "b") == -1


def test_rdb_round_trip_and_redis_loads_it(start_server, start_oracle):
    s = start_server(enable_debug_command="yes")
    c = s.client()
    c.sadd("s", *["m%d" % i for i in range(10)])
    c.sadd("ints", 1, 2, 3)
    c.zadd("z", {"a": 1, "b": 2, "c": 3})
    c.zadd("big", {"m%d" % i: i for i in range(200)})
    for k, m in (("s", "m1"), ("s", "m2"), ("ints", "2"), ("z", "b"), ("big", "m7")):
        c.execute_command("EXPIREMEMBER", k, m, 100000)
    c.execute_command("EXPIREMEMBER", "s", "m3", 1, "ms")
    time.sleep(0.01)
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    for k, m in (("s", "m1"), ("s", "m2"), ("ints", "2"), ("z", "b"), ("big", "m7")):
        assert 99900 <= c.execute_command("TTL", k, m) <= 100000, (k, m)
    assert c.execute_command("TTL", "s", "m4") == -1 and not c.sismember("s", "m3")
    d = c.execute_command("DEBUG", "DIGEST")
    c.save()
    path = os.path.join(s.tmp, "dump.rdb")
    with open(path, "rb") as f:
        assert b"cairn-member-ttl" in f.read()
    # redis-server 7.0.15 loads the file, without the member TTLs.
    odir = s.tmp + "-oracle"
    os.makedirs(odir)
    shutil.copy(path, os.path.join(odir, "dump.rdb"))
    o = start_oracle(enable_debug_command="yes", dir=odir).client()
    assert o.execute_command("DEBUG", "DIGEST") == d
    assert o.sismember("s", "m1") and o.zscore("z", "b") == 2
    # Cairn restarted from the file restores them.
    s.stop()
    s2 = start_server(enable_debug_command="yes", dir=s.tmp)
    c2 = s2.client()
    assert c2.execute_command("TTL", "z", "b") > 90 and c2.execute_command("TTL", "big", "m7") > 90


# --- differential against the Lua pattern it replaces ---------------------------

# The common form: the collection KEYS[1] next to a sorted set KEYS[2] of
# member -> expiry (ms), purged by every script before it runs the operation.
LUA_MEMBER_TTL = """
local k, kx, op, m = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local isz = string.sub(k, 3, 3) == 'z'
local due = redis.call('ZRANGEBYSCORE', kx, '-inf', '(' .. now)
if #due > 0 then
  if isz then redis.call('ZREM', k, unpack(due)) else redis.call('SREM', k, unpack(due)) end
  redis.call('ZREMRANGEBYSCORE', kx, '-inf', '(' .. now)
end
local function present()
  if isz then return redis.call('ZSCORE', k, m) ~= false end
  return redis.call('SISMEMBER', k, m) == 1
end
if op == 'ADD' then
  local r
  if isz then r = redis.call('ZADD', k, ARGV[3], m) else r = redis.call('SADD', k, m) end
  if r == 1 then redis.call('ZREM', kx, m) end
  return r
elseif op == 'REM' then
  if isz then return redis.call('ZREM', k, m) end
  return redis.call('SREM', k, m)
elseif op == 'AT' then
  if not present() then return 0 end
  local at = tonumber(ARGV[3])
  if at <= now then
    if isz then redis.call('ZREM', k, m) else redis.call('SREM', k, m) end
    redis.call('ZREM', kx, m)
  else
    redis.call('ZADD', kx, at, m)
  end
  return 1
elseif op == 'TTL' then
  if not present() then return -2 end
  local at = redis.call('ZSCORE', kx, m)
  if not at then return -1 end
  return 1
elseif op == 'READ' then
  if isz then return redis.call('ZRANGE', k, 0, -1, 'WITHSCORES') end
  local r = redis.call('SMEMBERS', k)
  table.sort(r)
  return r
elseif op == 'CARD' then
  if isz then return redis.call('ZCARD', k) end
  return redis.call('SCARD', k)
elseif op == 'POP' then
  if isz then return redis.call('ZPOPMIN', k) end
  local r = redis.call('SMEMBERS', k)
  table.sort(r)
  if #r == 0 then return false end
  redis.call('SREM', k, r[1])
  return r[1]
end
"""

WORKLOAD_OPS = 20000


def native(c, kind, k, op, m, arg):
    if op == "ADD":
        return c.execute_command("ZADD", k, arg, m) if kind == "z" else c.execute_command("SADD", k, m)
    if op == "REM":
        return c.execute_command("ZREM" if kind == "z" else "SREM", k, m)
    if op == "AT":
        return call(c, "PEXPIREMEMBERAT", k, m, arg)
    if op == "TTL":
        t = c.execute_command("PTTL", k, m)
        return t if t < 0 else 1
    if op == "READ":
        return raw(c, "ZRANGE", k, 0, -1, "WITHSCORES") if kind == "z" else sorted(c.smembers(k))
    if op == "CARD":
        return c.execute_command("ZCARD" if kind == "z" else "SCARD", k)
    if kind == "z":
        return raw(c, "ZPOPMIN", k)
    r = sorted(c.smembers(k))
    if not r:
        return None
    c.srem(k, r[0])
    return r[0]


def test_matches_lua_pattern(start_server):
    """20,000 operations on sets and sorted sets with member TTLs, native
    against the Lua pattern, on one server: every reply and the keys left
    behind equal.  Time advances through short TTLs (2 ms, then a pause so
    that both sides see them past before the next operation), with active
    expiry switched on and off between phases."""
    s = start_server(enable_debug_command="yes", hz="100")
    c = s.client()
    sha = c.script_load(LUA_MEMBER_TTL)
    rnd = random.Random(3900)
    expired = 0                 # short TTLs set on present members
    for i in range(WORKLOAD_OPS):
        short = False
        if i % 2000 == 0:
            c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", (i // 2000) % 2)
        kind = rnd.choice("sz")
        name = "%s%d" % (kind, rnd.randint(0, 3))
        m = "m%d" % rnd.randint(0, 40)
        r = rnd.random()
        arg = None
        if r < 0.3:
            op, arg = "ADD", rnd.randint(0, 20)
        elif r < 0.4:
            op = "REM"
        elif r < 0.6:
            op = "AT"
            w = rnd.random()
            if w < 0.2:
                arg = now_ms() - 1000
            elif w < 0.6:
                arg = now_ms() + 2
                short = True
            else:
                arg = now_ms() + 10 ** 7
        elif r < 0.7:
            op = "TTL"
        elif r < 0.85:
            op = "READ"
        elif r < 0.95:
            op = "CARD"
        else:
            op = "POP"
        n = native(c, kind, "n:" + name, op, m, arg)
        lua_args = [op, m] + ([arg] if arg is not None else [])
        l = call(c, "EVALSHA", sha, 2, "l:" + name, "x:" + name, *lua_args)
        if isinstance(l, list) and op == "READ" and kind == "s":
            l = sorted(l)
        assert n == l, (i, kind, name, op, m, arg, n, l)
        if short:               # let the short TTL pass for both sides
            expired += n == 1
            time.sleep(0.004)
    for kind in "sz":
        for j in range(4):
            name = "%s%d" % (kind, j)
            assert native(c, kind, "n:" + name, "READ", None, None) == \
                call(c, "EVALSHA", sha, 2, "l:" + name, "x:" + name, "READ", "x")
            assert c.exists("n:" + name) == c.exists("l:" + name)
    assert expired > 300
    # Native leaves no side keys behind.
    assert not [k for k in c.keys("*") if not (k.startswith(b"n:") or k.startswith(b"l:") or k.startswith(b"x:"))]


def test_swapdb_flush_rename_move_copy(c):
    """SWAPDB, RENAME and MOVE carry the TTLs with the key, COPY copies
    them; FLUSHDB / FLUSHALL drop them."""
    c.sadd("s", "a", "b")
    c.execute_command("EXPIREMEMBER", "s", "a", 1000)
    c.swapdb(0, 1)
    kw = c.connection_pool.connection_kwargs
    other = redis.Redis(host=kw["host"], port=kw["port"], db=1)
    assert other.execute_command("TTL", "s", "a") == 1000
    assert c.execute_command("TTL", "s", "a") == -2
    other.rename("s", "t")
    assert other.execute_command("TTL", "t", "a") == 1000 and other.execute_command("TTL", "t", "b") == -1
    other.zadd("z", {"x": 1})
    other.execute_command("EXPIREMEMBER", "z", "x", 500)
    other.sadd("t2", "q")
    other.execute_command("EXPIREMEMBER", "t2", "q", 700)
    other.rename("t2", "t")          # the overwritten key's TTLs go with it
    assert other.execute_command("TTL", "t", "q") == 700 and other.execute_command("TTL", "t", "a") == -2
    assert other.move("z", 0) and c.execute_command("TTL", "z", "x") == 500
    assert other.execute_command("TTL", "z", "x") == -2
    assert c.copy("z", "z2") and c.execute_command("TTL", "z2", "x") == 500
    c.zrem("z2", "x")
    assert c.execute_command("TTL", "z", "x") == 500
    other.flushdb()
    other.sadd("t", "q")
    assert other.execute_command("TTL", "t", "q") == -1
    c.flushall()
    c.zadd("z", {"x": 1})
    assert c.execute_command("TTL", "z", "x") == -1


def test_replica_hides_expired_members(start_server):
    """A replica removes nothing itself, but its reads hide a member past
    its TTL (a view without it) until the primary's SREM/ZREM arrive."""
    p_srv = start_server(enable_debug_command="yes")
    r_srv = start_server(enable_debug_command="yes", replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, r = p_srv.client(), r_srv.client()
    wait_for(lambda: link_up(r), what="link up")
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p.sadd("s", "a", "b")
    p.zadd("z", {"a": 1, "b": 2})
    p.sadd("only", "x")
    p.expire("s", 1000)
    for k, m in (("s", "a"), ("z", "a"), ("only", "x")):
        p.execute_command("EXPIREMEMBER", k, m, 300, "ms")
    wait_for(lambda: r.execute_command("PTTL", "only", "x") > 0, what="ttl replicated")
    raw_before = r.execute_command("DEBUG", "DIGEST-VALUE", "s", "z", "only")
    time.sleep(0.35)
    assert r.smembers("s") == {b"b"} and r.sismember("s", "a") == 0 and r.scard("s") == 1
    assert r.zrange("z", 0, -1) == [b"b"] and r.zscore("z", "a") is None and r.zcard("z") == 1
    assert r.exists("only") == 0 and r.smembers("only") == set()
    assert r.execute_command("TTL", "s", "a") == -2 and 990 <= r.ttl("s") <= 1000
    assert r.eval("return redis.call('SCARD', KEYS[1])", 1, "s") == 1
    # Nothing removed on the replica: its stored values are unchanged.
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "s", "z", "only") == raw_before
    # The primary's removals arrive.
    reclaim(p)
    assert same_digest(p, r)
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "s", "z", "only") != raw_before
    assert r.dbsize() == 2
