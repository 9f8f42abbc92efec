"""Rate limiters (issue 39, part 4): CL.THROTTLE and RL.LOG, Cairn's own.

The tests that depend on time run the server under clock_shim.c (an
LD_PRELOAD shim): the test sets the server's wall clock, so replies that
depend on the millisecond are exact, and time advances only when the
test says so.

CL.THROTTLE key max_burst count_per_period period [quantity] -- the
redis-cell module's command and algorithm (GCRA):
- reply [limited 0|1, max_burst + 1, remaining, retry_after s (-1 when
  allowed, and when the quantity can never fit), reset_after s]; seconds
  are rounded up when a millisecond or more is left over (the module's
  rounding); redis-cell's own test cases are reproduced below.
- the key is an ordinary string: the TAT in unix ns (the module's format)
  with a TTL ending at the TAT; propagated as SET key <tat> PXAT <ms>.
  Quantity 0 only looks (nothing written).
- errors: a wrong argument count "Cell error: Usage: ..." and a
  non-integer "Cell error: Couldn't parse as integer: <arg>" (the module's
  texts, without "ERR"); then Cairn's range checks: max_burst and quantity
  >= 0, count and period >= 1 ("ERR value is out of range, must be
  positive"), parameters whose nanoseconds overflow ("ERR value is not an
  integer or out of range"); then WRONGTYPE, a stored non-integer ("Cell
  error: invalid digit found in string"), a TAT overflow ("ERR increment or
  decrement would overflow").

RL.LOG key window_ms limit [quantity] -- a sliding-window log:
- the key is a sorted set of requests (score: unix ms, member "<ms>-<n>");
  entries at or before now - window_ms leave, then quantity requests
  (default 1) are logged at now when count + quantity <= limit.
- reply [allowed 0|1, count after logging, retry after ms: 0 when allowed,
  the wait until enough entries leave when denied, -1 when quantity >
  limit]; quantity 0 only looks.
- TTL: PEXPIREAT now + window_ms when something is logged; propagated as
  ZREMRANGEBYSCORE key -inf <now - window>, ZADD key <now> <member> ...,
  PEXPIREAT key <ms>.
- errors: non-integers "ERR value is not an integer or out of range";
  window_ms < 1, limit < 0 "ERR value is out of range, must be positive";
  quantity outside [0, 10000] (each request is a member) "ERR value is out
  of range, value must between 0 and 10000" (Redis's range error, typo
  included); now + window_ms overflowing "ERR invalid expire time in
  'rl.log' command"; more arguments: syntax error; then WRONGTYPE.
"""
import mmap
import os
import random
import shutil
import struct
import subprocess

import pytest

from conftest import cairn_bin
from test_aof import wait_for
from test_native_patterns import E, call, raw, run_table
from test_repl import link_up, same_digest

ERR_WT = "WRONGTYPE Operation against a key holding the wrong kind of value"
ERR_INT = "ERR value is not an integer or out of range"
ERR_POS = "ERR value is out of range, must be positive"
USAGE = "Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
T0 = 1767225600000          # 2026-01-01T00:00:00Z in ms


class CellError(E):
    pass


def ccall(c, *args):
    """call() for the module's errors, which have no code: redis-py gives
    their text as is, and call() would add "ERR "."""
    r = call(c, *args)
    if isinstance(r, E) and r.startswith("ERR Cell error: "):
        return E(r[4:])
    return r


SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clock_shim.c")


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the clock shim")
    so = str(tmp_path_factory.mktemp("clock") / "clock_shim.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", so, SOURCE, "-ldl"], check=True)
    return so


class Clock:
    """The server's wall clock, in unix ms (0: the real clock)."""

    def __init__(self, path):
        with open(path, "wb") as f:
            f.write(b"\0" * 8)
        self.f = open(path, "r+b")
        self.m = mmap.mmap(self.f.fileno(), 8)
        self.ms = 0

    def set(self, ms):
        self.ms = ms
        self.m[:8] = struct.pack("<q", ms * 1000)

    def advance(self, ms):
        self.set(self.ms + ms)


@pytest.fixture
def clocked(start_server, shim, tmp_path, monkeypatch):
    """start(**cfg) -> (server, clock): a server whose clock the test sets,
    starting at T0."""
    if "san" in os.path.basename(cairn_bin()):
        pytest.skip("LD_PRELOAD with the sanitizer build")

    def go(**cfg):
        clock = Clock(str(tmp_path / ("clock%d" % len(os.listdir(str(tmp_path))))))
        clock.set(T0)
        monkeypatch.setenv("LD_PRELOAD", shim)
        monkeypatch.setenv("CAIRN_CLOCK_FILE", clock.f.name)
        try:
            srv = start_server(**cfg)
        finally:
            monkeypatch.delenv("LD_PRELOAD")
            monkeypatch.delenv("CAIRN_CLOCK_FILE")
        return srv, clock
    return go


# --- CL.THROTTLE ----------------------------------------------------------------

def test_clthrottle_redis_cell_cases(clocked):
    """redis-cell's own rate-limit cases (limit 5, one per second), with
    the server's clock at each case's time."""
    srv, clock = clocked()
    c = srv.client()
    start = T0 + 123
    cases = [  # (ms after start, quantity, limited, remaining, retry_after, reset_after)
        (0, 6, 1, 5, -1, 0),        # never more than the maximum at once
        (0, 1, 0, 4, -1, 1),
        (0, 1, 0, 3, -1, 2),
        (0, 1, 0, 2, -1, 3),
        (0, 1, 0, 1, -1, 4),
        (0, 1, 0, 0, -1, 5),
        (0, 1, 1, 0, 1, 5),
        (3000, 1, 0, 2, -1, 3),
        (3100, 1, 0, 1, -1, 4),     # 3.9 s rounds up
        (4000, 1, 0, 1, -1, 4),
        (8000, 1, 0, 4, -1, 1),
        (9500, 1, 0, 4, -1, 1),
        (9500, 0, 0, 4, -1, 1),     # quantity 0 looks
        (9500, 2, 0, 2, -1, 3),
        (9500, 5, 1, 2, 3, 3),
    ]
    for i, (at, qty, limited, remaining, retry, reset) in enumerate(cases):
        clock.set(start + at)
        got = c.execute_command("CL.THROTTLE", "foo", 4, 1, 1, qty)
        assert got == [limited, 5, remaining, retry, reset], (i, got)
    # The key: the TAT in ns, expiring at the TAT.
    tat = int(c.get("foo"))
    assert tat == (start + 9500) * 1000000 + 3 * 10 ** 9
    assert c.execute_command("PEXPIRETIME", "foo") == (start + 9500) + 3000
    clock.set(start + 9500 + 3000 + 1)                 # past its time (a key lives through its ms)
    assert c.exists("foo") == 0
    assert c.execute_command("CL.THROTTLE", "foo", 4, 1, 1) == [0, 5, 4, -1, 1]


def test_clthrottle_reply_table(clocked):
    srv, clock = clocked()
    c = srv.client()
    c.lpush("l", "x")
    c.set("s", "abc")
    run_table_cell(c, [
        (("CL.THROTTLE", "u", 15, 30, 60), [0, 16, 15, -1, 2]),        # the README's example
        (("CL.THROTTLE", "u", 15, 30, 60, 15), [0, 16, 0, -1, 32]),
        (("CL.THROTTLE", "u", 15, 30, 60), [1, 16, 0, 2, 32]),
        (("CL.THROTTLE", "u", 15, 30, 60, 0), [0, 16, 0, -1, 32]),
        (("CL.THROTTLE", "u", 15, 30, 60, 17), [1, 16, 0, -1, 32]),   # more than the tolerance: never
        (("cl.throttle", "v", 0, 1, 1), [0, 1, 0, -1, 1]),
        (("cl.throttle", "v", 0, 1, 1), [1, 1, 0, 1, 1]),
        (("CL.THROTTLE", "w", 9, 1000000, 1), [0, 10, 9, -1, 0]),     # 1 us interval: under a ms, 0 s
        (("CL.THROTTLE",), E(USAGE)),
        (("CL.THROTTLE", "u"), E(USAGE)),
        (("CL.THROTTLE", "u", 1, 1), E(USAGE)),
        (("CL.THROTTLE", "u", 1, 1, 1, 1, 1), E(USAGE)),
        (("CL.THROTTLE", "u", "x", 1, 1), E("Cell error: Couldn't parse as integer: x")),
        (("CL.THROTTLE", "u", 1, "1.5", 1), E("Cell error: Couldn't parse as integer: 1.5")),
        (("CL.THROTTLE", "u", 1, 1, "", 1), E("Cell error: Couldn't parse as integer: ")),
        (("CL.THROTTLE", "u", 1, 1, 1, "q"), E("Cell error: Couldn't parse as integer: q")),
        (("CL.THROTTLE", "u", 1, 1, 1, "99999999999999999999"),
         E("Cell error: Couldn't parse as integer: 99999999999999999999")),
        (("CL.THROTTLE", "u", -1, 1, 1), E(ERR_POS)),
        (("CL.THROTTLE", "u", 1, 0, 1), E(ERR_POS)),
        (("CL.THROTTLE", "u", 1, -5, 1), E(ERR_POS)),
        (("CL.THROTTLE", "u", 1, 1, 0), E(ERR_POS)),
        (("CL.THROTTLE", "u", 1, 1, 1, -1), E(ERR_POS)),
        (("CL.THROTTLE", "u", 1, 1, 10 ** 10), E(ERR_INT)),            # period in ns overflows
        (("CL.THROTTLE", "u", 2 ** 62, 1, 1000), E(ERR_INT)),          # the tolerance overflows
        (("CL.THROTTLE", "u", 2 ** 63 - 1, 1, 1), E(ERR_INT)),          # so does the limit
        (("CL.THROTTLE", "u", 1, 1, 1000, 2 ** 62), E(ERR_INT)),       # the increment overflows
        (("CL.THROTTLE", "l", 1, 1, 1), E(ERR_WT)),
        (("CL.THROTTLE", "l", "x", 1, 1), E("Cell error: Couldn't parse as integer: x")),  # arguments first
        (("CL.THROTTLE", "s", 1, 1, 1), E("Cell error: invalid digit found in string")),
        (("SET", "low", str(-2 ** 63)), True),                          # a TAT far in the past
        (("CL.THROTTLE", "low", 0, 1, 1), [0, 1, 0, -1, 1]),
        (("SET", "low", str(-2 ** 63)), True),
        (("CL.THROTTLE", "low", 0, 1, 1, 2), [1, 1, 9223372036, -1, -9223372036]),  # no overflow
        (("SET", "big", str(2 ** 63 - 10)), True),
        (("CL.THROTTLE", "big", 1, 1, 1), E("ERR increment or decrement would overflow")),
        (("GET", "s"), b"abc"),
    ])
    # Only allowed, non-zero requests wrote; the values are TATs in ns.
    assert sorted(c.keys()) == [b"big", b"l", b"low", b"s", b"u", b"v", b"w"]
    assert int(c.get("u")) == T0 * 1000000 + 16 * 2 * 10 ** 9
    assert c.execute_command("PEXPIRETIME", "u") == T0 + 32000
    assert int(c.get("w")) == T0 * 1000000 + 1000
    assert c.execute_command("PEXPIRETIME", "w") == T0 + 1   # rounded up to the ms


def run_table_cell(c, table):
    for args, want in table:
        got = ccall(c, *args)
        if isinstance(want, E):
            assert isinstance(got, E) and got == want, (args, got, want)
        else:
            assert not isinstance(got, E) and got == want, (args, got, want)


def test_clthrottle_migrates_module_keys(clocked):
    """A key the module wrote (the TAT in ns, any TTL) is read as its own."""
    srv, clock = clocked()
    c = srv.client()
    c.set("k", str(T0 * 1000000 + 2 * 10 ** 9), px=2000)
    assert c.execute_command("CL.THROTTLE", "k", 2, 1, 1) == [0, 3, 0, -1, 3]
    assert c.execute_command("CL.THROTTLE", "k", 2, 1, 1) == [1, 3, 0, 1, 3]


# --- RL.LOG ----------------------------------------------------------------------

def test_rllog_reply_table(clocked):
    srv, clock = clocked()
    c = srv.client()
    c.set("s", "x")
    run_table(c, [
        (("RL.LOG", "r", 1000, 3), [1, 1, 0]),
        (("RL.LOG", "r", 1000, 3), [1, 2, 0]),
        (("RL.LOG", "r", 1000, 3, 2), [0, 2, 1000]),   # 2 more do not fit until the oldest leaves
        (("RL.LOG", "r", 1000, 3), [1, 3, 0]),
        (("RL.LOG", "r", 1000, 3), [0, 3, 1000]),
        (("RL.LOG", "r", 1000, 3, 0), [1, 3, 0]),      # quantity 0 only looks
        (("RL.LOG", "r", 1000, 2, 0), [0, 3, 1000]),   # (over a lower limit: denied until one leaves)
        (("RL.LOG", "r", 1000, 3, 4), [0, 3, -1]),     # never fits
        (("RL.LOG", "r", 1000, 5, 2), [1, 5, 0]),      # a higher limit now
        (("ZRANGE", "r", 0, -1), [b"%d-%d" % (T0, i) for i in range(5)]),
        (("PEXPIRETIME", "r"), T0 + 1000),
        (("RL.LOG", "q", 1000, 0), [0, 0, -1]),
        (("RL.LOG", "q", 1000, 0, 0), [1, 0, 0]),
        (("EXISTS", "q"), 0),
        (("RL.LOG", "r", "x", 3), E(ERR_INT)),
        (("RL.LOG", "r", 1000, "1.5"), E(ERR_INT)),
        (("RL.LOG", "r", 1000, 3, "q"), E(ERR_INT)),
        (("RL.LOG", "r", 0, 3), E(ERR_POS)),
        (("RL.LOG", "r", -1, 3), E(ERR_POS)),
        (("RL.LOG", "r", 1000, -1), E(ERR_POS)),
        (("RL.LOG", "r", 1000, 3, -1), E("ERR value is out of range, value must between 0 and 10000")),
        (("RL.LOG", "r", 1000, 2 ** 62, 10001), E("ERR value is out of range, value must between 0 and 10000")),
        (("RL.LOG", "r", 2 ** 63 - 1, 3), E("ERR invalid expire time in 'rl.log' command")),
        (("RL.LOG", "r", 1000, 3, 1, 1), E("ERR syntax error")),
        (("RL.LOG", "r", 1000), E("ERR wrong number of arguments for 'rl.log' command")),
        (("RL.LOG", "s", 1000, 3), E(ERR_WT)),
        (("RL.LOG", "s", 0, 3), E(ERR_POS)),           # arguments first
        (("ZCARD", "r"), 5),
    ])
    clock.advance(400)
    assert c.execute_command("RL.LOG", "r", 1000, 6) == [1, 6, 0]
    assert c.execute_command("RL.LOG", "r", 1000, 6, 2) == [0, 6, 600]
    clock.advance(600)                                 # the first five leave (at exactly the window)
    assert c.execute_command("RL.LOG", "r", 1000, 6, 2) == [1, 3, 0]
    assert c.zrange("r", 0, -1) == [b"%d-0" % (T0 + 400), b"%d-0" % (T0 + 1000), b"%d-1" % (T0 + 1000)]
    assert c.execute_command("PEXPIRETIME", "r") == T0 + 2000
    assert c.execute_command("RL.LOG", "r", 100, 6, 0) == [1, 2, 0]   # a shorter window: 400 left
    clock.advance(1001)
    assert c.exists("r") == 0                          # idle: its TTL ended


def test_events(clocked):
    srv, clock = clocked()
    c = srv.client()
    c.config_set("notify-keyspace-events", "KEA")
    p = c.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_for(lambda: p.get_message(timeout=1.0) is not None, what="psubscribe")
    c.execute_command("CL.THROTTLE", "t", 0, 1, 1)
    c.execute_command("CL.THROTTLE", "t", 0, 1, 1)      # limited: nothing
    c.execute_command("RL.LOG", "r", 100, 2)
    clock.advance(50)
    c.execute_command("RL.LOG", "r", 100, 2)
    c.execute_command("RL.LOG", "r", 100, 2)            # denied: nothing
    clock.advance(50)
    c.execute_command("RL.LOG", "r", 100, 2, 0)         # the first entry leaves
    clock.advance(51)
    c.execute_command("RL.LOG", "r", 100, 2, 0)         # the key's TTL ended with its last entry
    names = []
    for _ in range(50):
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            names.append(m["channel"].split(b":", 1)[1])
        if len(names) == 8:
            break
    assert names == [b"set", b"expire", b"zadd", b"expire", b"zadd", b"expire", b"zremrangebyscore",
                     b"expired"]
    p.close()


# --- the command table, MULTI, scripts, ACL, replica, OOM -----------------------

def test_command_table(server, oracle):
    c, o = server.client(), oracle.client()
    for new, like, arity in (("cl.throttle", "incrby", -1), ("rl.log", "incrby", -4)):
        mine = raw(c, "COMMAND", "INFO", new)[0]
        ref = raw(o, "COMMAND", "INFO", like)[0]
        assert mine[0] == new.encode() and mine[1] == arity
        assert mine[2:6] == ref[2:6] and mine[7:] == ref[7:]     # flags, key range, key specs
        assert mine[6] == ref[6] if new == "cl.throttle" else \
            mine[6] == [b"@write", b"@sortedset", b"@fast"]
        docs = raw(c, "COMMAND", "DOCS", new)
        d = dict(zip(docs[1][::2], docs[1][1::2]))
        assert docs[0] == new.encode() and d[b"since"] == b"0.1.0"
    assert raw(c, "COMMAND", "GETKEYS", "CL.THROTTLE", "k", "1", "1", "1") == [b"k"]
    assert raw(c, "COMMAND", "GETKEYS", "RL.LOG", "k", "1", "1") == [b"k"]


def test_multi_and_scripts(clocked):
    srv, clock = clocked()
    c = srv.client()
    p = c.pipeline(transaction=True)
    p.execute_command("CL.THROTTLE", "t", 1, 1, 1)
    p.execute_command("CL.THROTTLE", "t", 1, 1, 1)
    p.execute_command("CL.THROTTLE", "t", 1, 1, 1)
    p.execute_command("RL.LOG", "r", 1000, 2, 2)
    p.execute_command("RL.LOG", "r", 1000, 2)
    p.execute_command("CL.THROTTLE", "t", "x", 1, 1)
    got = p.execute(raise_on_error=False)
    assert got[:5] == [[0, 2, 1, -1, 1], [0, 2, 0, -1, 2], [1, 2, 0, 1, 2], [1, 2, 0], [0, 2, 1000]]
    assert "Couldn't parse as integer: x" in str(got[5])
    lua = ("local r = {} "
           "r[1] = redis.call('CL.THROTTLE', KEYS[1], 0, 1, 1) "
           "r[2] = redis.call('RL.LOG', KEYS[2], 50, 1) "
           "r[3] = redis.pcall('RL.LOG', KEYS[2], 0, 1)['err'] "
           "r[4] = redis.pcall('CL.THROTTLE', KEYS[1])['err'] "
           "return r")
    assert c.eval(lua, 2, "t2", "r2") == [[0, 1, 0, -1, 1], [1, 1, 0], ERR_POS.encode(), USAGE.encode()]


def test_acl_readonly_replica_and_oom(server, start_server):
    c = server.client()
    c.execute_command("ACL", "SETUSER", "str", "on", "nopass", "~*", "+@string")
    c.execute_command("ACL", "SETUSER", "zs", "on", "nopass", "~r*", "+@sortedset")
    u = server.client(username="str", password="x")
    assert u.execute_command("CL.THROTTLE", "t", 1, 1, 1)[0] == 0
    assert call(u, "RL.LOG", "r", 100, 1).startswith("NOPERM")
    z = server.client(username="zs", password="x")
    assert z.execute_command("RL.LOG", "r", 100, 1)[0] == 1
    assert call(z, "RL.LOG", "other", 100, 1).startswith("NOPERM")
    assert call(z, "CL.THROTTLE", "r1", 1, 1, 1).startswith("NOPERM")
    p_srv = start_server()
    r_srv = start_server(args=["--replicaof", p_srv.host, str(p_srv.port)])
    r = r_srv.client()
    wait_for(lambda: link_up(r), what="link up")
    ro = E("READONLY You can't write against a read only replica.")
    assert call(r, "CL.THROTTLE", "t", 1, 1, 1) == ro
    assert call(r, "RL.LOG", "r", 100, 1) == ro
    s = start_server(maxmemory="1", maxmemory_policy="noeviction")
    o = s.client()
    oom = E("OOM command not allowed when used memory > 'maxmemory'.")
    assert call(o, "CL.THROTTLE", "t", 1, 1, 1) == oom
    assert call(o, "RL.LOG", "r", 100, 1) == oom


# --- replication ---------------------------------------------------------------

def limits_workload(c, seed, n=1500):
    rnd = random.Random(seed)
    for i in range(n):
        k = "k%d" % rnd.randint(0, 4)
        op = rnd.randint(0, 5)
        if op <= 1:
            call(c, "CL.THROTTLE", "t:" + k, rnd.randint(0, 5), rnd.randint(1, 50), rnd.randint(1, 3),
                 rnd.randint(0, 3))
        elif op <= 3:
            call(c, "RL.LOG", "r:" + k, rnd.randint(1, 30), rnd.randint(0, 6), rnd.randint(0, 3))
        elif op == 4:
            p = c.pipeline(transaction=True)
            p.execute_command("CL.THROTTLE", "t:" + k, 2, 10, 1)
            p.execute_command("RL.LOG", "r:" + k, 20, 4, 2)
            p.execute(raise_on_error=False)
        else:
            c.eval("redis.call('CL.THROTTLE', KEYS[1], 3, 100, 1) "
                   "return redis.call('RL.LOG', KEYS[2], 10, 3)", 2, "t:" + k, "r:" + k)


def test_redis_replica_stays_equal(start_server, start_oracle):
    p_srv = start_server(enable_debug_command="yes")
    o_srv = start_oracle(enable_debug_command="yes", repl_diskless_sync_delay="0",
                         replicaof="%s %d" % (p_srv.host, p_srv.port))
    p, o = p_srv.client(), o_srv.client()
    wait_for(lambda: link_up(o), what="link up")
    limits_workload(p, 11)
    assert p.dbsize() > 0
    assert same_digest(p, o)
    assert sorted(p.keys()) == sorted(o.keys())


# --- differential against the Lua scripts they replace -------------------------

# The GCRA as a script (the common form: the client passes its clock,
# ARGV[5], in ms), with redis-cell's arithmetic and rounding, in nanoseconds
# relative to now so that Lua's doubles stay exact; the key keeps the TAT
# in unix ns as the module does.
LUA_GCRA = """
local burst, count, period, qty, now_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]), tonumber(ARGV[5])
local function trunc(x) if x >= 0 then return math.floor(x) else return math.ceil(x) end end
local function secs(ns)
  local s = trunc(ns / 1e9)
  if trunc((ns - s * 1e9) / 1e6) > 0 then s = s + 1 end
  return s
end
local T = math.floor(period * 1e9 / count)
local tol, inc = T * (burst + 1), T * qty
local now_s, now_lo = math.floor(now_ms / 1000), (now_ms % 1000) * 1e6
local rel = 0
local v = redis.call('GET', KEYS[1])
if v then rel = (tonumber(string.sub(v, 1, -10)) - now_s) * 1e9 + (tonumber(string.sub(v, -9)) - now_lo) end
local new_rel = (rel > 0 and rel or 0) + inc
local limited, retry, ttl = 0, -1e9, 0
if new_rel - tol > 0 then
  limited = 1
  if inc <= tol then retry = new_rel - tol end
  ttl = rel
else
  ttl = new_rel
  if new_rel > 0 and new_rel ~= rel then
    local total = now_lo + new_rel
    local carry = math.floor(total / 1e9)
    redis.call('SET', KEYS[1], string.format('%d%09d', now_s + carry, total - carry * 1e9),
               'PXAT', now_ms + math.ceil(new_rel / 1e6))
  end
end
local remaining, nxt = 0, tol - ttl
if nxt > -T then remaining = trunc(trunc(nxt / 1000) / trunc(T / 1000)) end
return {limited, burst + 1, remaining, secs(retry), secs(ttl)}
"""

# The sliding-window log script (ZREMRANGEBYSCORE / ZCARD / ZADD, the
# client's clock in ARGV[4]), with RL.LOG's member names and reply.
LUA_WINDOW = """
local window, limit, qty, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if qty > limit then return {0, count, -1} end
if count + qty > limit then
  local e = redis.call('ZRANGE', KEYS[1], count + qty - limit - 1, count + qty - limit - 1, 'WITHSCORES')
  return {0, count, tonumber(e[2]) + window - now}
end
if qty > 0 then
  local seq = redis.call('ZCOUNT', KEYS[1], now, now)
  local args = {}
  for i = 0, qty - 1 do
    args[#args + 1] = now
    args[#args + 1] = now .. '-' .. (seq + i)
  end
  redis.call('ZADD', KEYS[1], unpack(args))
  redis.call('PEXPIREAT', KEYS[1], now + window)
end
return {1, count + qty, 0}
"""

OPS = 20000


def compare_keys(c, pairs):
    for n, s in pairs:
        assert c.type(n) == c.type(s), (n, s)
        if c.type(n) == b"string":
            assert c.get(n) == c.get(s), (n, s)
        elif c.type(n) == b"zset":
            assert c.zrange(n, 0, -1, withscores=True) == c.zrange(s, 0, -1, withscores=True), (n, s)
        assert c.execute_command("PEXPIRETIME", n) == c.execute_command("PEXPIRETIME", s), (n, s)


def run_differential(clocked, native, script, make_args, seed):
    """OPS random requests on three keys, native and script at the same
    server time (the test's clock, advanced by 0-400 ms each step, with
    active expiry off and on), with equal replies and equal keys left."""
    srv, clock = clocked(enable_debug_command="yes")
    c = srv.client()
    sha = c.script_load(script)
    rnd = random.Random(seed)
    p = c.pipeline(transaction=False)
    pending = []
    seen = set()
    for i in range(OPS):
        k = rnd.choice("abc")
        op = rnd.random()
        if op < 0.9:
            args = make_args(rnd)
            p.execute_command(native, "n:" + k, *args)
            p.execute_command("EVALSHA", sha, 1, "s:" + k, *args, clock.ms)
        elif op < 0.95:
            p.execute_command("DEL", "n:" + k)
            p.execute_command("DEL", "s:" + k)
        else:
            p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", rnd.randint(0, 1))
            p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", rnd.randint(0, 1))
        pending.append(i)
        if rnd.random() < 0.3 or i == OPS - 1:
            # The clock moves only between batches: each pair sees one time.
            replies = p.execute(raise_on_error=False)
            for j in range(0, len(replies), 2):
                a, b = replies[j], replies[j + 1]
                if isinstance(a, Exception) or isinstance(b, Exception):
                    assert str(a) == str(b), (pending[j // 2], a, b)
                else:
                    assert a == b, (pending[j // 2], a, b)
                    if isinstance(a, list):
                        seen.add(a[0])
            pending = []
            clock.advance(rnd.choice([0, 0, 1, 7, 50, 100, 400, 999, 1000, 1001]))
    compare_keys(c, [("n:" + k, "s:" + k) for k in "abc"])
    return seen


def test_clthrottle_matches_lua(clocked):
    def args(rnd):
        return [rnd.randint(0, 8), rnd.choice([1, 2, 3, 7, 10, 60, 1000]), rnd.choice([1, 2, 5, 60]),
                rnd.choice([0, 1, 1, 1, 1, 2, 3, 9])]
    seen = run_differential(clocked, "CL.THROTTLE", LUA_GCRA, args, 4)
    assert seen == {0, 1}                   # both allowed and limited requests


def test_rllog_matches_lua(clocked):
    def args(rnd):
        return [rnd.choice([1, 10, 100, 500, 1000, 3000]), rnd.randint(0, 8), rnd.choice([0, 1, 1, 1, 2, 3, 9])]
    seen = run_differential(clocked, "RL.LOG", LUA_WINDOW, args, 5)
    assert seen == {0, 1}


# --- the AOF ---------------------------------------------------------------------

def test_aof_holds_only_redis_commands(start_server, start_oracle):
    """ZPOPDUE, BZPOPDUE (at once and after blocking), CL.THROTTLE and
    RL.LOG with long periods: the AOF holds only what Redis 7.0 replays,
    Cairn and redis-server reload it to the same digest, and both check
    tools accept it."""
    from listhelp import Conn
    from test_aof import AOFDIR, aof_start, written_then_kill9
    s = aof_start(start_server)
    c = s.client()
    rnd = random.Random(21)
    base = int(c.time()[0]) * 1000
    for i in range(400):
        k = "k%d" % rnd.randint(0, 3)
        op = rnd.randint(0, 4)
        if op == 0:
            c.zadd("q:" + k, {"m%d" % rnd.randint(0, 50): base - rnd.randint(0, 10 ** 6)
                              if rnd.random() < .7 else base + 10 ** 9})
        elif op == 1:
            call(c, "ZPOPDUE", "q:" + k, "COUNT", rnd.randint(1, 3))
        elif op == 2:
            call(c, "BZPOPDUE", "q:" + k, "0.01", *(["COUNT", 2] if rnd.random() < .5 else []))
        elif op == 3:
            call(c, "CL.THROTTLE", "t:" + k, rnd.randint(0, 3), 1, 100000, rnd.randint(0, 2))
        else:
            call(c, "RL.LOG", "r:" + k, 10 ** 8, rnd.randint(0, 5), rnd.randint(0, 2))
    w = Conn(s)
    w.send(["BZPOPDUE", "fresh", "0"])
    wait_for(lambda: c.info("clients")["blocked_clients"] == 1, what="blocked")
    c.zadd("fresh", {"a": 1, "b": base + 10 ** 9})
    assert w.read() == b"*3\r\n$5\r\nfresh\r\n$1\r\na\r\n$1\r\n1\r\n"
    d = c.execute_command("DEBUG", "DIGEST")
    incr = os.path.join(s.tmp, AOFDIR, "appendonly.aof.1.incr.aof")
    written_then_kill9(s)
    with open(incr, "rb") as f:
        text = f.read().upper()
    for word in (b"ZPOPDUE", b"CL.THROTTLE", b"RL.LOG"):
        assert word not in text, word
    for word in (b"ZREM", b"PXAT", b"ZADD", b"PEXPIREAT"):
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
