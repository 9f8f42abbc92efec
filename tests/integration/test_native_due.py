"""Due-time queues (issue 39, part 3): ZPOPDUE and BZPOPDUE, Cairn's own.

Contract, as reply tables below (a member's score is the unix time in ms
at which it falls due, a fractional part to the microsecond; "now" is the
server's clock, in us, when the command runs, fixed for a whole MULTI or
script as Redis fixes it for expiry; sub-ms wake-ups and the order of a
burst are in test_native_due_wake.py):
- ZPOPDUE key: the lowest member if due, replied as ZPOPMIN key ([member,
  score], flat in RESP2 and RESP3); nothing due or no key: an empty array.
- ZPOPDUE key COUNT n: up to n due members, lowest first, replied as
  ZPOPMIN key n (RESP2 flat, RESP3 [member, score] pairs); COUNT 0 or
  nothing due: an empty array.  n is checked as ZPOPMIN's count, before
  the key: "ERR value is out of range, must be positive".  Anything else
  after the key: syntax error.  WRONGTYPE for a non-zset.
- BZPOPDUE key [key ...] timeout [COUNT n]: the first key with a due
  member answers, replied as BZPOPMIN ([key, member, score]) without COUNT
  and as BZMPOP ([key, [[member, score], ...]]) with it; else the client
  blocks until a member of one of its keys falls due (one added later with
  an earlier time too), woken by a timer at that moment, with the FIFO
  fairness of the other blocking pops; on timeout a null array.  COUNT is
  BZMPOP's ("ERR count should be greater than 0"), the timeout BZPOPMIN's;
  a COUNT tail is read when there are at least five arguments and the
  second to last is COUNT.  Inside MULTI or a script it never blocks.
- Both propagate as ZREM key member ... (never the command), notify "zrem"
  (and "del" when the key empties), and are not denyoom (they only free).
"""
import random
import time

import pytest

from listhelp import Conn, wait_blocked
from resphelp import bulk
from test_aof import wait_for
from test_native_patterns import E, call, raw, run_table
from test_repl import link_up, same_digest

ERR_WT = "WRONGTYPE Operation against a key holding the wrong kind of value"
ERR_SYNTAX = "ERR syntax error"
ERR_POS = "ERR value is out of range, must be positive"
ERR_COUNT = "ERR count should be greater than 0"
ERR_TIMEOUT = "ERR timeout is not a float or out of range"
ERR_TIMEOUT_NEG = "ERR timeout is negative"
HOUR = 3600 * 1000
YEAR = 365 * 24 * HOUR


def server_ms(c):
    s, us = c.time()
    return s * 1000 + us // 1000


def num(x):
    """A score as the server writes it (integral values without a dot)."""
    return repr(x).encode() if x != int(x) else str(int(x)).encode()


@pytest.fixture
def c(server):
    return server.client()


# --- reply tables ----------------------------------------------------------

def test_zpopdue_reply_table(c):
    now = server_ms(c)
    past, later = now - HOUR, now + YEAR
    c.zadd("q", {"a": past, "b": past + 1, "c": past + 2.5, "d": later, "e": later + 1})
    c.set("s", "x")
    run_table(c, [
        (("ZPOPDUE", "q"), [b"a", num(past)]),
        (("ZPOPDUE", "q", "COUNT", 5), [b"b", num(past + 1), b"c", num(past + 2.5)]),
        (("ZPOPDUE", "q"), []),                               # d and e are not due
        (("ZPOPDUE", "q", "count", 3), []),
        (("ZCARD", "q"), 2),
        (("ZPOPDUE", "missing"), []),
        (("ZPOPDUE", "missing", "COUNT", 2), []),
        (("ZPOPDUE", "q", "COUNT", 0), []),                   # as ZPOPMIN key 0
        (("ZADD", "q", "-inf", "x", past, "y"), 2),           # -inf is always due
        (("ZPOPDUE", "q", "COUNT", 1), [b"x", b"-inf"]),
        (("ZPOPDUE", "q", "COUNT", 9), [b"y", num(past)]),
        (("ZPOPDUE", "q", "COUNT", -1), E(ERR_POS)),
        (("ZPOPDUE", "q", "COUNT", "x"), E(ERR_POS)),
        (("ZPOPDUE", "q", "COUNT", "1.5"), E(ERR_POS)),
        (("ZPOPDUE", "q", "COUNT", "99999999999999999999"), E(ERR_POS)),
        (("ZPOPDUE", "q", "COUNT"), E(ERR_SYNTAX)),
        (("ZPOPDUE", "q", "LIMIT", 1), E(ERR_SYNTAX)),
        (("ZPOPDUE", "q", 1), E(ERR_SYNTAX)),
        (("ZPOPDUE", "q", "COUNT", 1, "x"), E(ERR_SYNTAX)),
        (("ZPOPDUE", "s"), E(ERR_WT)),
        (("ZPOPDUE", "s", "COUNT", -1), E(ERR_POS)),          # arguments before the key
        (("ZPOPDUE",), E("ERR wrong number of arguments for 'zpopdue' command")),
        (("ZRANGE", "q", 0, -1), [b"d", b"e"]),
    ])
    c.zadd("q", {"z": past})
    assert c.execute_command("ZPOPDUE", "q", "COUNT", 5) == [b"z", num(past)]
    c.zrem("q", "d")
    c.zadd("q", {"e": past})
    assert c.execute_command("ZPOPDUE", "q") == [b"e", num(past)]
    assert c.exists("q") == 0                                 # emptied: deleted


def test_zpopdue_resp3_shapes(server):
    c = server.client()
    now = server_ms(c)
    c.zadd("q", {"a": 1, "b": 2, "c": now - 5, "f": now + YEAR})
    r = Conn(server, resp=3)
    assert r.call("ZPOPDUE", "q") == b"*2\r\n$1\r\na\r\n,1\r\n"
    assert r.call("ZPOPDUE", "q", "COUNT", "1") == b"*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    assert r.call("ZPOPDUE", "q", "COUNT", "3") == b"*1\r\n*2\r\n$1\r\nc\r\n,%d\r\n" % (now - 5)
    assert r.call("ZPOPDUE", "q", "COUNT", "3") == b"*0\r\n"
    assert r.call("ZPOPDUE", "q") == b"*0\r\n"
    c.zadd("q", {"a": 1, "b": 2})
    assert r.call("BZPOPDUE", "q", "0") == b"*3\r\n$1\r\nq\r\n$1\r\na\r\n,1\r\n"
    assert r.call("BZPOPDUE", "q", "0", "COUNT", "5") == b"*2\r\n$1\r\nq\r\n*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    assert r.call("BZPOPDUE", "q", "0.01") == b"_\r\n"
    r.close()


def test_bzpopdue_reply_table(c):
    now = server_ms(c)
    past = now - HOUR
    c.set("s", "x")
    c.zadd("q2", {"a": past, "b": past + 1, "c": past + 2, "f": now + YEAR})
    run_table(c, [
        (("BZPOPDUE", "q1", "q2", 0), [b"q2", b"a", num(past)]),            # first key with a due member
        (("BZPOPDUE", "q1", "q2", 0, "COUNT", 5), [b"q2", [[b"b", num(past + 1)], [b"c", num(past + 2)]]]),
        (("BZPOPDUE", "q1", "q2", "0.01"), None),                           # only f, not due: times out
        (("BZPOPDUE", "q1", "q2", "0.01", "COUNT", 2), None),
        (("BZPOPDUE", "q2", -1), E(ERR_TIMEOUT_NEG)),
        (("BZPOPDUE", "q2", "x"), E(ERR_TIMEOUT)),
        (("BZPOPDUE", "q2", "x", "COUNT", 1), E(ERR_TIMEOUT)),
        (("BZPOPDUE", "q2", 0, "COUNT", 0), E(ERR_COUNT)),
        (("BZPOPDUE", "q2", 0, "COUNT", -2), E(ERR_COUNT)),
        (("BZPOPDUE", "q2", 0, "COUNT", "y"), E(ERR_COUNT)),
        (("BZPOPDUE", "q2", "x", "COUNT", 0), E(ERR_COUNT)),                 # count before the timeout
        (("BZPOPDUE", "s", 0), E(ERR_WT)),
        (("BZPOPDUE", "q1", "s", 0), E(ERR_WT)),
        (("BZPOPDUE", "s", -1), E(ERR_TIMEOUT_NEG)),                        # arguments before the keys
        (("BZPOPDUE", "q2"), E("ERR wrong number of arguments for 'bzpopdue' command")),
        (("ZRANGE", "q2", 0, -1), [b"f"]),
    ])
    # With four arguments COUNT is a key: BZPOPDUE k COUNT 1 waits on k and COUNT.
    c.zadd("COUNT", {"m": past})
    assert call(c, "BZPOPDUE", "q1", "COUNT", "0.01") == [b"COUNT", b"m", num(past)]


def test_command_table(server, oracle):
    c, o = server.client(), oracle.client()
    mine = raw(c, "COMMAND", "INFO", "zpopdue")[0]
    ref = raw(o, "COMMAND", "INFO", "zpopmin")[0]
    assert mine[0] == b"zpopdue" and mine[1] == -2 and mine[2:] == ref[2:]
    mine = raw(c, "COMMAND", "INFO", "bzpopdue")[0]
    ref = raw(o, "COMMAND", "INFO", "bzpopmin")[0]
    assert mine[0] == b"bzpopdue" and mine[1] == -3
    # BZPOPMIN's, without noscript (it runs in scripts without blocking),
    # with movablekeys (a COUNT tail); the key spec is flagged incomplete.
    assert set(mine[2]) == (set(ref[2]) - {b"noscript"}) | {b"movablekeys"}
    assert mine[3:7] == ref[3:7]
    for name in ("zpopdue", "bzpopdue"):
        docs = raw(c, "COMMAND", "DOCS", name)
        d = dict(zip(docs[1][::2], docs[1][1::2]))
        assert docs[0] == name.encode() and d[b"since"] == b"0.1.0" and d[b"group"] == b"sorted-set"
    assert raw(c, "COMMAND", "GETKEYS", "ZPOPDUE", "q", "COUNT", "2") == [b"q"]
    assert raw(c, "COMMAND", "GETKEYS", "BZPOPDUE", "a", "b", "0") == [b"a", b"b"]
    assert raw(c, "COMMAND", "GETKEYS", "BZPOPDUE", "a", "b", "0", "COUNT", "3") == [b"a", b"b"]
    assert raw(c, "COMMAND", "GETKEYS", "BZPOPDUE", "a", "COUNT", "0") == [b"a", b"COUNT"]


def test_events_and_propagation_words(server):
    c = server.client()
    c.config_set("notify-keyspace-events", "KEA")
    p = c.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_for(lambda: p.get_message(timeout=1.0) is not None, what="psubscribe")
    c.zadd("q", {"a": 1, "b": 2, "f": server_ms(c) + YEAR})
    c.execute_command("ZPOPDUE", "q", "COUNT", 5)
    c.execute_command("ZPOPDUE", "q")                     # nothing due: no event
    c.zadd("q", {"f": 1})
    c.execute_command("BZPOPDUE", "q", 0)
    names = []
    deadline = time.monotonic() + 5
    while len(names) < 5 and time.monotonic() < deadline:
        m = p.get_message(timeout=0.5)
        if m and m["type"] == "pmessage":
            names.append(m["channel"].split(b":", 1)[1])
    assert names == [b"zadd", b"zrem", b"zadd", b"zrem", b"del"]
    p.close()


# --- blocking ------------------------------------------------------------------

def clients(srv, n, resp=2):
    out = []
    for _ in range(n):
        x = Conn(srv, resp)
        x.cid = x.client_id()
        out.append(x)
    return out


def block(ctl, conn, *cmd):
    conn.send([str(a) for a in cmd])
    wait_blocked(ctl, conn.cid, cmd[0].lower())


def bz_reply(key, member, score):
    return b"*3\r\n" + bulk(key) + bulk(member) + bulk(num(score))


def test_wakes_for_a_member_added_earlier_while_blocked(server):
    c = server.client()
    ctl, a = clients(server, 2)
    now = server_ms(c)
    c.zadd("q", {"late": now + YEAR})
    block(ctl, a, "BZPOPDUE", "q", 0)
    # Nothing but the timer can wake it: no write touches q after this one.
    due = server_ms(c) + 3000
    c.zadd("q", {"soon": due})
    assert not a.pending(0.3)          # not before it is due (it is 3 s away)
    assert a.read() == bz_reply(b"q", b"soon", due)
    assert server_ms(c) >= due
    assert c.zrange("q", 0, -1) == [b"late"]
    # A member already due when added wakes it at once (signalled by ZADD).
    block(ctl, a, "BZPOPDUE", "q", 0, "COUNT", 2)
    c.zadd("q", {"x": 5})
    assert a.read() == b"*2\r\n" + bulk(b"q") + b"*1\r\n*2\r\n" + bulk(b"x") + bulk(b"5")
    for x in (ctl, a):
        x.close()


def test_several_blocked_clients_in_order(server):
    c = server.client()
    ctl, a, b, d, e = clients(server, 5)
    block(ctl, a, "BZPOPDUE", "q", 0)
    block(ctl, b, "BZPOPDUE", "q", "other", 0)
    block(ctl, d, "BZPOPDUE", "q", 0, "COUNT", 2)
    block(ctl, e, "BZPOPDUE", "q", 0)
    t = server_ms(c) + 400
    # Three members fall due together at t: the clients are served in the
    # order they blocked, as the other blocking pops serve them.
    c.zadd("q", {"m1": t, "m2": t, "m3": t, "m4": t + YEAR})
    assert a.read() == bz_reply(b"q", b"m1", t)
    assert b.read() == bz_reply(b"q", b"m2", t)
    assert d.read() == b"*2\r\n" + bulk(b"q") + b"*1\r\n*2\r\n" + bulk(b"m3") + bulk(num(t))
    assert not e.pending(0.2)
    c.zadd("q", {"m0": 1})
    assert e.read() == bz_reply(b"q", b"m0", 1)
    assert c.zrange("q", 0, -1) == [b"m4"]
    # Timeouts still apply to a client waiting on a member not yet due.
    assert a.call("BZPOPDUE", "q", "0.05") == b"*-1\r\n"
    for x in (ctl, a, b, d, e):
        x.close()


def test_earliest_key_wins_and_unblock(server):
    c = server.client()
    ctl, a = clients(server, 2)
    now = server_ms(c)
    c.zadd("k1", {"x": now + 800})
    c.zadd("k2", {"y": now + 300})
    block(ctl, a, "BZPOPDUE", "k1", "k2", 0)
    assert a.read() == bz_reply(b"k2", b"y", now + 300)
    # CLIENT UNBLOCK ends a wait on a due time as any other.
    block(ctl, a, "BZPOPDUE", "k3", 0)
    c.zadd("k3", {"z": now + YEAR})
    assert c.client_unblock(a.cid) == 1
    assert a.read() == b"*-1\r\n"
    # A key deleted while waited on, then re-created, still wakes it.
    block(ctl, a, "BZPOPDUE", "k3", 0)
    c.delete("k3")
    t = server_ms(c) + 200
    c.zadd("k3", {"w": t})
    assert a.read() == bz_reply(b"k3", b"w", t)
    for x in (ctl, a):
        x.close()


def test_many_blocked_clients_all_served(server):
    """200 clients each wait on their own key; the members fall due in
    reverse order of blocking, each woken by the timer."""
    c = server.client()
    conns = [Conn(server) for _ in range(200)]
    for i, x in enumerate(conns):
        x.send(["BZPOPDUE", "k%d" % i, "0"])
    wait_for(lambda: int(c.info("clients")["blocked_clients"]) == 200, what="200 blocked")
    t = server_ms(c) + 500
    for i in range(200):
        c.zadd("k%d" % i, {"m": t + 199 - i})
    for i, x in enumerate(conns):
        assert x.read() == bz_reply(b"k%d" % i, b"m", t + 199 - i)
        x.close()
    assert c.dbsize() == 0


def test_multi_and_scripts_do_not_block(c):
    now = server_ms(c)
    c.zadd("q", {"late": now + YEAR})
    p = c.pipeline(transaction=True)
    p.execute_command("BZPOPDUE", "q", 0)
    p.execute_command("ZADD", "q", 1, "a")
    p.execute_command("BZPOPDUE", "q", 0, "COUNT", 3)
    p.execute_command("ZPOPDUE", "q")
    assert p.execute() == [None, 1, [b"q", [[b"a", b"1"]]], []]
    lua = ("local r = {} "
           "r[1] = redis.call('BZPOPDUE', KEYS[1], 0) "
           "redis.call('ZADD', KEYS[1], 1, 'a', 2, 'b') "
           "r[2] = redis.call('BZPOPDUE', KEYS[1], 0) "
           "r[3] = redis.call('ZPOPDUE', KEYS[1], 'COUNT', 5) "
           "r[4] = redis.pcall('ZPOPDUE', KEYS[1], 'COUNT', -1)['err'] "
           "return r")
    assert c.eval(lua, 1, "q") == [None, [b"q", b"a", b"1"], [b"b", b"2"], ERR_POS.encode()]
    assert c.zrange("q", 0, -1) == [b"late"]


def test_acl_readonly_replica_and_oom(server, start_server):
    c = server.client()
    c.execute_command("ACL", "SETUSER", "zs", "on", "nopass", "~*", "+@sortedset", "-bzpopdue")
    c.execute_command("ACL", "SETUSER", "nb", "on", "nopass", "~q*", "+@all", "-@blocking")
    c.zadd("q", {"a": 1})
    z = server.client(username="zs", password="x")
    assert z.execute_command("ZPOPDUE", "q") == [b"a", b"1"]
    assert isinstance(call(z, "BZPOPDUE", "q", 0), E)
    nb = server.client(username="nb", password="x")
    assert call(nb, "ZPOPDUE", "q") == []
    assert call(nb, "BZPOPDUE", "q", 0).startswith("NOPERM")
    assert call(nb, "ZPOPDUE", "other").startswith("NOPERM")          # key pattern
    c.execute_command("ACL", "SETUSER", "nb", "+@blocking")
    # The key check sees the keys only: the COUNT tail is not a key.
    assert call(nb, "BZPOPDUE", "q", "0.01", "COUNT", 2) is None
    assert call(nb, "BZPOPDUE", "q", "x", "0.01").startswith("NOPERM")
    p_srv = start_server()
    r_srv = start_server(args=["--replicaof", p_srv.host, str(p_srv.port)])
    r = r_srv.client()
    wait_for(lambda: link_up(r), what="link up")
    for cmd in (("ZPOPDUE", "q"), ("BZPOPDUE", "q", 0)):
        assert call(r, *cmd) == E("READONLY You can't write against a read only replica."), cmd
    s = start_server(maxmemory="1", maxmemory_policy="noeviction")
    o = s.client()
    # They only free memory: not refused under OOM, as ZPOPMIN.
    assert call(o, "ZPOPDUE", "q") == []
    assert call(o, "BZPOPDUE", "q", "0.01") is None


# --- replication ---------------------------------------------------------------

def due_workload(c, srv, seed, n=800):
    """ZPOPDUE / BZPOPDUE (served at once, after blocking and by the timer),
    in MULTI and scripts, over members past, near and far in the future."""
    rnd = random.Random(seed)
    base = server_ms(c)
    waiters = []
    for i in range(n):
        k = "q%d" % rnd.randint(0, 4)
        op = rnd.randint(0, 7)
        if op <= 2:
            members = {"m%d" % rnd.randint(0, 300): rnd.choice([base - rnd.randint(0, HOUR),
                                                                  server_ms(c) + rnd.randint(1, 60),
                                                                  base + YEAR + rnd.randint(0, 99)])
                       for _ in range(rnd.randint(1, 4))}
            c.zadd(k, members)
        elif op == 3:
            call(c, "ZPOPDUE", k, "COUNT", rnd.randint(0, 4))
        elif op == 4:
            call(c, "BZPOPDUE", k, "q%d" % rnd.randint(0, 4), "0.01", *(["COUNT", 2] if rnd.random() < .5 else []))
        elif op == 5:
            w = Conn(srv)
            w.send(["BZPOPDUE", k, "1"])
            waiters.append(w)
        elif op == 6:
            p = c.pipeline(transaction=True)
            p.execute_command("ZPOPDUE", k)
            p.execute_command("ZADD", k, base - i, "t%d" % i)
            p.execute_command("BZPOPDUE", k, 0, "COUNT", 2)
            p.execute(raise_on_error=False)
        else:
            c.eval("redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) "
                   "return redis.call('ZPOPDUE', KEYS[1], 'COUNT', 3)", 1, k, base - i, "l%d" % i)
    for w in waiters:
        w.read()                      # served or timed out (1 s)
        w.close()


def test_redis_replica_stays_equal(start_server, start_oracle):
    p_srv = start_server(enable_debug_command="yes")
    o_srv = start_oracle(enable_debug_command="yes", repl_diskless_sync_delay="0",
                         replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, o = p_srv.client(), o_srv.client()
    wait_for(lambda: link_up(o), what="link up")
    due_workload(p, p_srv, 7)
    assert p.dbsize() > 0
    assert same_digest(p, o)
    assert sorted(p.keys()) == sorted(o.keys())


# --- differential against the Lua script it replaces ---------------------------

# The common form of the pattern (seed 001's delayed tasks, with -inf):
# the client passes its time in ARGV[1] and a batch size in ARGV[2].
LUA_POP_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #due == 0 then return {} end
local m = {}
for i = 1, #due, 2 do m[#m + 1] = due[i] end
redis.call('ZREM', KEYS[1], unpack(m))
return due
"""

OPS = 20000


def test_zpopdue_matches_lua(start_server):
    """The same 20,000 random operations on two keys, one driven by the
    native command and one by the script: equal replies and equal sets.
    Members are either long due (up to an hour back) or far from due (a
    day ahead): the script's `now` (read from the server) and the native
    command's clock agree on each.  Short TTLs and lazy expiry (active
    expiry off) take keys away on both sides alike."""
    c = start_server(enable_debug_command="yes").client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    sha = c.script_load(LUA_POP_DUE)
    rnd = random.Random(3939)
    base = server_ms(c)
    p = c.pipeline(transaction=False)
    batch = []
    expired = False
    popped = 0
    for i in range(OPS):
        k = rnd.choice(["a", "b", "c"])
        op = rnd.random()
        if op < 0.45:
            members = {}
            for _ in range(rnd.randint(1, 5)):
                due = rnd.random() < 0.6
                score = base - rnd.randint(0, HOUR) if due else base + 24 * HOUR + rnd.randint(0, HOUR)
                if rnd.random() < 0.3:
                    score += 0.5
                members["m%d" % rnd.randint(0, 500)] = score
            args = [x for m, s in members.items() for x in (repr(s), m)]
            p.execute_command("ZADD", "n:" + k, *args)
            p.execute_command("ZADD", "s:" + k, *args)
        elif op < 0.9:
            n = rnd.randint(1, 6)
            if rnd.random() < 0.2:
                p.execute_command("ZPOPDUE", "n:" + k)
                n = 1
            else:
                p.execute_command("ZPOPDUE", "n:" + k, "COUNT", n)
            p.execute_command("EVALSHA", sha, 1, "s:" + k, base + i, n)
        elif op < 0.97:
            m = "m%d" % rnd.randint(0, 500)
            p.execute_command("ZREM", "n:" + k, m)
            p.execute_command("ZREM", "s:" + k, m)
        elif op < 0.99:
            p.execute_command("ZCARD", "n:" + k)
            p.execute_command("ZCARD", "s:" + k)
        else:
            # Time advances: both keys get a TTL of 1 ms and are gone
            # (lazily) by the next batch, which starts after it.
            p.execute_command("PEXPIRE", "n:" + k, 1)
            p.execute_command("PEXPIRE", "s:" + k, 1)
            expired = True
        batch.append(i)
        if len(batch) == 500 or i == OPS - 1 or expired:
            expired = False
            replies = p.execute(raise_on_error=False)
            for j in range(0, len(replies), 2):
                assert replies[j] == replies[j + 1], (batch[j // 2], replies[j], replies[j + 1])
                if isinstance(replies[j], list) and replies[j]:
                    popped += len(replies[j]) // 2
            batch = []
            time.sleep(0.003)
    for k in "abc":
        assert c.zrange("n:" + k, 0, -1, withscores=True) == c.zrange("s:" + k, 0, -1, withscores=True)
        assert c.execute_command("PEXPIRETIME", "n:" + k) == c.execute_command("PEXPIRETIME", "s:" + k)
    assert sum(c.zcard("n:" + k) for k in "abc") > 0
    assert popped > 5000, popped


def in_multi(c, *args):
    """args run inside MULTI (where nothing blocks): the reply, or E(text)."""
    p = c.pipeline(transaction=True)
    p.execute_command(*args)
    r = p.execute(raise_on_error=False)[0]
    if isinstance(r, Exception):
        msg = str(r)
        code = msg.split(" ", 1)[0]
        return E(msg if code.isalpha() and code.isupper() and len(code) > 2 else "ERR " + msg)
    return r


def test_errors_are_redis_words(server, oracle):
    """Each argument error is the one the Redis command whose argument it
    mirrors gives for the same text: ZPOPDUE's COUNT as ZPOPMIN's count,
    BZPOPDUE's COUNT as BZMPOP's, its timeout as BZPOPMIN's (run inside
    MULTI, where nothing blocks)."""
    c, o = server.client(), oracle.client()
    for v in ("-1", "x", "1.5", "", "99999999999999999999", "-99999999999999999999", "0x10", "0", "3"):
        want = call(o, "ZPOPMIN", "q", v)
        got = call(c, "ZPOPDUE", "q", "COUNT", v)
        assert got == want, (v, got, want)
        want = in_multi(o, "BZMPOP", 0, 1, "q", "MIN", "COUNT", v)
        assert in_multi(c, "BZPOPDUE", "q", 0, "COUNT", v) == want, v
    for t in ("x", "-1", "-0.0001", "1e300", "-1e300", "inf", "-inf", "nan", "9223372036854775807", "0x10", "",
              "0", "0.5"):
        want = in_multi(o, "BZPOPMIN", "q", t)
        assert in_multi(c, "BZPOPDUE", "q", t) == want, t
        assert in_multi(c, "BZPOPDUE", "q", t, "COUNT", 1) == want, t
    c.set("s", "x")
    o.set("s", "x")
    assert call(c, "ZPOPDUE", "s") == call(o, "ZPOPMIN", "s") == E(ERR_WT)
    assert call(c, "BZPOPDUE", "s", 0) == call(o, "BZPOPMIN", "s", 0) == E(ERR_WT)
