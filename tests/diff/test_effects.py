"""Differential test of write effects (what Cairn would put in its AOF and
send to replicas) against redis-server 7.0.15's append-only file.

Cairn runs with CAIRN_TEST_EFFECTS_FILE (the test-only sink of
core/effects.c: every unit of effects appended in RESP, as an AOF holds
it); redis-server runs with `--appendonly yes --aof-timestamp-enabled no
--appendfsync always`, so its appendonlydir/*.incr.aof holds every effect
before the reply goes out.  Both get the same streams; after each segment
the new commands in both files must be equal, except:
  - absolute times (integers of 13+ digits: PXAT / PEXPIREAT milliseconds)
    compare within TIME_TOLERANCE_MS, since the servers run a command at
    slightly different moments;
  - SREM key member with one member compares key only: SPOP picks at random
    (the sets generator re-adds what SPOP took, so both servers agree again);
  - in the active-expiry segment, deletions are compared as a set (the
    active cycle samples keys at random).

Segments: every area of tests/diff/generators.py (strings, counters,
bitmaps, expiry, keys and each gen_<area>.py: streams included, whose
XADD `ms-*` and approximate trims, XREADGROUP/XCLAIM/XAUTOCLAIM claims and
NOACK reads are rewritten as Redis rewrites them), run with active expiry off
so that keys set with a time already past go only when a command finds
them; an extras stream (databases, MOVE/COPY/SWAPDB, FLUSHDB/FLUSHALL,
MULTI/DISCARD, scripts with SELECT, redis.set_repl and PUBLISH, functions,
lazyfree settings, the blocking commands when they need not wait); then
blocking pops woken by another connection's pushes, keys expiring lazily
(active expiry off) with lazyfree-lazy-expire off and on, and keys expiring
actively.  No expiry time can pass while a stream runs except where a
segment waits for it.  Env: EFFECTS_COMMANDS (total commands over the
generator areas, default 24000), DIFF_SEED (default 1).
"""
import glob
import os
import random
import shutil
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest as fx  # noqa: E402
from diffcore import Conn, encode, fmt_cmd  # noqa: E402
from generators import AREAS, enable_other_types, ALL_OTHER_TYPES  # noqa: E402

TOTAL = int(os.environ.get("EFFECTS_COMMANDS", "24000"))
SEED = int(os.environ.get("DIFF_SEED", "1"))
TIME_TOLERANCE_MS = 10000


# ------------------------------------------------------------ AOF reading

def parse_aof(data):
    """Commands (lists of bytes) in a RESP command file; a trailing partial
    command is left out."""
    out = []
    i = 0
    n = len(data)
    while i < n:
        if data[i:i + 1] != b"*":
            raise AssertionError("bad AOF byte at %d: %r" % (i, data[i:i + 40]))
        nl = data.find(b"\r\n", i)
        if nl < 0:
            break
        argc = int(data[i + 1:nl])
        p = nl + 2
        args = []
        for _ in range(argc):
            nl = data.find(b"\r\n", p)
            if nl < 0:
                return out
            ln = int(data[p + 1:nl])
            p = nl + 2
            if p + ln + 2 > n:
                return out
            args.append(data[p:p + ln])
            p += ln + 2
        out.append(args)
        i = p
    return out


class EffectsLog:
    """The commands a server's effects file holds, read incrementally."""

    def __init__(self, path_fn):
        self.path_fn = path_fn
        self.cmds = []
        self.taken = 0

    def refresh(self):
        path = self.path_fn()
        if path and os.path.exists(path):
            with open(path, "rb") as f:
                self.cmds = parse_aof(f.read())

    def take(self):
        """The commands appended since the last take."""
        self.refresh()
        new = self.cmds[self.taken:]
        self.taken = len(self.cmds)
        return new


# ------------------------------------------------------------ comparison

def _is_time(a):
    return len(a) >= 13 and a.isdigit()


def same_cmd(a, b):
    if len(a) != len(b):
        return False
    if len(a) == 3 and a[0] == b[0] == b"SREM":
        return a[1] == b[1]
    for x, y in zip(a, b):
        if x == y:
            continue
        if _is_time(x) and _is_time(y) and abs(int(x) - int(y)) <= TIME_TOLERANCE_MS:
            continue
        return False
    return True


def first_mismatch(mine, theirs):
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if not same_cmd(a, b):
            return i
    if len(mine) != len(theirs):
        return min(len(mine), len(theirs))
    return None


def report(label, mine, theirs, idx, sent=None):
    lo = max(0, idx - 8)
    lines = ["%s: effects differ at #%d (cairn %d commands, redis %d)" % (label, idx, len(mine), len(theirs))]
    for name, cmds in (("cairn", mine), ("redis", theirs)):
        lines.append("  %s:" % name)
        for j in range(lo, min(len(cmds), idx + 8)):
            lines.append("   %s%5d %s" % ("*" if j == idx else " ", j, fmt_cmd(cmds[j])[:200]))
    return "\n".join(lines)


# ------------------------------------------------------------ servers

@pytest.fixture(scope="module")
def servers(request):
    tmp = tempfile.mkdtemp(prefix="cairn-effects-")
    path = os.path.join(tmp, "effects.aof")
    old = os.environ.get("CAIRN_TEST_EFFECTS_FILE")
    os.environ["CAIRN_TEST_EFFECTS_FILE"] = path
    gens = []
    try:
        g = fx._factory(request, fx.cairn_bin(), "cairn")
        gens.append(g)
        cairn = next(g)(enable_debug_command="yes")
    finally:
        if old is None:
            del os.environ["CAIRN_TEST_EFFECTS_FILE"]
        else:
            os.environ["CAIRN_TEST_EFFECTS_FILE"] = old
    oracle_bin = shutil.which(fx.ORACLE_BIN) or fx.ORACLE_BIN
    g = fx._factory(request, oracle_bin, "oracle")
    gens.append(g)
    oracle = next(g)(appendonly="yes", aof_timestamp_enabled="no", appendfsync="always",
                     enable_debug_command="yes")

    def oracle_file():
        files = sorted(glob.glob(os.path.join(oracle.tmp, "appendonlydir", "*.incr.aof")))
        return files[-1] if files else None

    yield cairn, oracle, EffectsLog(lambda: path), EffectsLog(oracle_file)
    errors = []
    for g in gens:
        try:
            for _ in g:
                pass
        except BaseException as e:  # pytest.fail raises Failed
            errors.append(e)
    shutil.rmtree(tmp, ignore_errors=True)
    if errors:
        raise errors[0]


class Pair:
    def __init__(self, cairn, oracle):
        self.a = Conn(cairn.host, cairn.port)
        self.b = Conn(oracle.host, oracle.port)

    def fresh(self):
        """New connections: a stream may end inside MULTI, in another
        database or with other connection state."""
        self.a.reopen()
        self.b.reopen()

    def both(self, *cmd):
        return self.a.call(*cmd), self.b.call(*cmd)

    def run(self, cmds, batch=64):
        for i in range(0, len(cmds), batch):
            chunk = cmds[i:i + batch]
            self.a.run_batch(chunk)
            self.b.run_batch(chunk)

    def close(self):
        self.a.close()
        self.b.close()


def settle(logs, pause=0.05):
    """Let both files catch up (the oracle writes before replying with
    appendfsync always; this only covers work done outside commands)."""
    time.sleep(pause)


def check_segment(logs, label, sort_dels=False):
    mine, theirs = logs[0].take(), logs[1].take()
    if sort_dels:
        mine, theirs = sorted(mine), sorted(theirs)
    idx = first_mismatch(mine, theirs)
    assert idx is None, "\n" + report(label, mine, theirs, idx)
    return len(mine)


# ------------------------------------------------------------ segments

GEN_AREAS = [a for a in AREAS]


@pytest.fixture(scope="module")
def pair(servers):
    cairn, oracle, *_ = servers
    p = Pair(cairn, oracle)
    enable_other_types(ALL_OTHER_TYPES)
    # Keys set with a time already past (SET ... PXAT 1) would otherwise go
    # whenever each server's active cycle samples them: only the expiry
    # segments below turn active expiry on.
    p.both(b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0")
    p.both(b"FLUSHALL")
    yield p
    p.close()


def test_effects_prologue(servers, pair):
    logs = servers[2:]
    settle(logs)
    check_segment(logs, "prologue")


@pytest.mark.parametrize("area", GEN_AREAS)
def test_effects_area(servers, pair, area):
    logs = servers[2:]
    per_area = max(1, TOTAL // len(GEN_AREAS))
    seed = SEED + GEN_AREAS.index(area)
    rng = random.Random(seed)
    cmds = AREAS[area](rng, per_area, int(time.time()))
    pair.fresh()
    pair.run([(b"FLUSHALL",)])
    pair.run(cmds)
    pair.fresh()
    n = check_segment(logs, "area=%s seed=%d n=%d" % (area, seed, len(cmds)))
    assert n > 0


LIB = (b"#!lua name=efx\n"
       b"redis.register_function('fset', function(k, a) redis.call('SET', k[1], a[1]) "
       b"return redis.call('INCR', k[2]) end)\n"
       b"redis.register_function('fpop', function(k, a) return redis.call('SPOP', k[1], a[1]) end)\n"
       b"redis.register_function{function_name='fro', callback=function(k, a) "
       b"return redis.call('GET', k[1]) end, flags={'no-writes'}}")

SCRIPTS = [
    b"redis.call('SET', KEYS[1], ARGV[1]) return redis.call('INCR', KEYS[2])",
    b"return redis.call('SET', KEYS[1], ARGV[1], 'EX', 100000)",
    b"redis.call('SELECT', 2) redis.call('SET', KEYS[1], ARGV[1]) redis.call('SELECT', 0) "
    b"return redis.call('RPUSH', KEYS[2], ARGV[1])",
    b"redis.set_repl(redis.REPL_NONE) redis.call('SET', KEYS[1], ARGV[1]) "
    b"redis.set_repl(redis.REPL_ALL) return redis.call('INCR', KEYS[2])",
    b"redis.set_repl(redis.REPL_AOF) redis.call('DEL', KEYS[1]) "
    b"redis.set_repl(redis.REPL_REPLICA) return redis.call('INCR', KEYS[2])",
    b"redis.call('PUBLISH', 'ch', ARGV[1]) return redis.call('INCRBYFLOAT', KEYS[1], '1.5')",
    b"local ok = redis.pcall('INCR', KEYS[1]) redis.call('SADD', KEYS[2], ARGV[1]) return 1",
    b"return redis.call('GET', KEYS[1])",
    b"redis.call('EXPIRE', KEYS[1], 100000) return redis.call('GETEX', KEYS[2], 'PERSIST')",
    b"return redis.call('SPOP', KEYS[1], 3)",
]


def gen_extras(rng, n):
    """Databases, transactions, scripts, functions, PUBLISH, lazyfree
    settings and the blocking commands when they need not wait."""
    keys = [b"x%d" % i for i in range(6)]
    out = []

    def k():
        return rng.choice(keys)

    def simple():
        r = rng.random()
        v = str(rng.randint(0, 20)).encode()
        if r < 0.15:
            return (b"SET", k(), v)
        if r < 0.25:
            return (b"INCR", k())
        if r < 0.35:
            return (b"RPUSH", k(), v, b"w")
        if r < 0.45:
            return (b"SADD", k(), v, b"m", b"n")
        if r < 0.55:
            return (b"ZADD", k(), v, b"m")
        if r < 0.6:
            return (b"HSET", k(), b"f", v)
        if r < 0.65:
            return (b"GETDEL", k())
        if r < 0.7:
            return (b"SPOP", k(), b"10")
        if r < 0.75:
            return (b"DEL", k(), k())
        if r < 0.8:
            return (b"UNLINK", k())
        if r < 0.85:
            return (b"GET", k())
        if r < 0.9:
            return (b"SET", k(), v, b"GET", b"get")
        if r < 0.95:
            # Never a time that could pass while the stream runs: relative
            # times are long, absolute ones far off or long past.
            if rng.random() < 0.5:
                return (b"GETEX", k(), rng.choice([b"EX", b"PX"]), b"100000000")
            return (b"GETEX", k(), rng.choice([b"EXAT", b"PXAT"]), rng.choice([b"1", b"200000000000"]))
        if r < 0.97:
            return (rng.choice([b"ZINTERSTORE", b"ZDIFFSTORE", b"ZUNIONSTORE"]), k(), b"2", k(), k())
        return (b"SELECT", str(rng.randint(0, 3)).encode())

    while len(out) < n:
        r = rng.random()
        if r < 0.45:
            out.append(simple())
        elif r < 0.5:
            out.append((b"SELECT", str(rng.randint(0, 3)).encode()))
        elif r < 0.55:
            out.append((b"MOVE", k(), str(rng.randint(0, 3)).encode()))
        elif r < 0.58:
            out.append((b"COPY", k(), k(), b"DB", str(rng.randint(0, 3)).encode(),
                        *([b"REPLACE"] if rng.random() < 0.5 else [])))
        elif r < 0.6:
            out.append((b"SWAPDB", str(rng.randint(0, 3)).encode(), str(rng.randint(0, 3)).encode()))
        elif r < 0.62:
            out.append((b"FLUSHDB", *rng.choice([[], [b"ASYNC"], [b"SYNC"]])))
        elif r < 0.63:
            out.append((b"FLUSHALL",))
        elif r < 0.7:
            body = [simple() for _ in range(rng.randint(0, 4))]
            out += [(b"MULTI",), *body, (b"EXEC",)]
        elif r < 0.72:
            out += [(b"MULTI",), simple(), (b"DISCARD",)]
        elif r < 0.8:
            sc = rng.choice(SCRIPTS)
            out.append((b"EVAL", sc, b"2", k(), k(), str(rng.randint(0, 9)).encode()))
        elif r < 0.81:
            out.append((b"FUNCTION", b"LOAD", b"REPLACE", LIB))
        elif r < 0.85:
            fn = rng.choice([b"fset", b"fpop", b"fro"])
            out.append((b"FCALL" if fn != b"fro" else b"FCALL_RO", fn, b"2", k(), k(), b"3"))
        elif r < 0.86:
            out.append((b"FUNCTION", rng.choice([b"DELETE", b"FLUSH"]), *([b"efx"] if rng.random() < 0.5 else [])))
        elif r < 0.88:
            out.append((b"PUBLISH", b"ch", b"m"))
        elif r < 0.9:
            name = rng.choice([b"lazyfree-lazy-user-del", b"lazyfree-lazy-server-del",
                               b"lazyfree-lazy-user-flush", b"lazyfree-lazy-expire"])
            out.append((b"CONFIG", b"SET", name, rng.choice([b"yes", b"no"])))
        else:
            a, b_ = k(), k()
            kind = rng.randint(0, 7)
            if kind < 5:
                out.append((b"RPUSH", a, b"p", b"q", b"r"))
            else:
                out.append((b"ZADD", a, b"1", b"p", b"2", b"q"))
            out.append([
                (b"BLPOP", a, b_, b"0"), (b"BRPOP", b_, a, b"0"),
                (b"BLMOVE", a, b_, rng.choice([b"LEFT", b"right"]), rng.choice([b"left", b"RIGHT"]), b"0"),
                (b"BRPOPLPUSH", a, b_, b"0"),
                (b"BLMPOP", b"0", b"2", b_, a, rng.choice([b"LEFT", b"RIGHT"]), b"COUNT", b"2"),
                (b"BZPOPMIN", a, b"0"), (b"BZPOPMAX", b_, a, b"0"),
                (b"BZMPOP", b"0", b"1", a, rng.choice([b"MIN", b"MAX"]), b"COUNT", b"5"),
            ][kind])
    out.append((b"SELECT", b"0"))
    for name in (b"lazyfree-lazy-user-del", b"lazyfree-lazy-server-del",
                 b"lazyfree-lazy-user-flush", b"lazyfree-lazy-expire"):
        out.append((b"CONFIG", b"SET", name, b"no"))
    return out


def test_effects_extras(servers, pair):
    logs = servers[2:]
    seed = SEED + 400
    rng = random.Random(seed)
    cmds = gen_extras(rng, max(1000, TOTAL // 12))
    pair.fresh()
    pair.run([(b"FLUSHALL",), (b"FUNCTION", b"FLUSH")])
    pair.run(cmds)
    n = check_segment(logs, "extras seed=%d n=%d" % (seed, len(cmds)))
    print("extras: %d commands, %d effects" % (len(cmds), n))
    assert n > len(cmds) // 4


def _blocking_round(rng, pair, cairn, oracle):
    """One client blocks, another pushes; returns the commands for log."""
    lists = [b"bl0", b"bl1"]
    zsets = [b"bz0", b"bz1"]
    kind = rng.choice(["blpop", "brpop", "blmove", "brpoplpush", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"])
    if kind in ("blpop", "brpop"):
        block = (kind.upper().encode(), *rng.sample(lists, 2), b"0")
    elif kind == "blmove":
        block = (b"BLMOVE", lists[0], rng.choice([b"dst", lists[1]]), rng.choice([b"LEFT", b"right"]),
                 rng.choice([b"left", b"RIGHT"]), b"0")
    elif kind == "brpoplpush":
        block = (b"BRPOPLPUSH", lists[0], b"dst", b"0")
    elif kind == "blmpop":
        block = (b"BLMPOP", b"0", b"2", *lists, rng.choice([b"LEFT", b"RIGHT"]), b"COUNT",
                 str(rng.randint(1, 5)).encode())
    elif kind in ("bzpopmin", "bzpopmax"):
        block = (kind.upper().encode(), *zsets, b"0")
    else:
        block = (b"BZMPOP", b"0", b"2", *zsets, rng.choice([b"MIN", b"MAX"]), b"COUNT",
                 str(rng.randint(1, 5)).encode())
    waiters = []
    for srv in (cairn, oracle):
        w = Conn(srv.host, srv.port)
        w.sock.sendall(encode(*block))
        waiters.append(w)
    # Wait until both servers have the client blocked (a BLMOVE served at
    # once states its directions as sent, served later in lower case).
    for conn in (pair.a, pair.b):
        for _ in range(2000):
            info = conn.call(b"INFO", b"clients")[1]
            if b"blocked_clients:1" in info:
                break
            time.sleep(0.005)
    zset = kind.startswith("bz")
    keys = zsets if zset else lists
    k = lists[0] if kind in ("blmove", "brpoplpush") else rng.choice(keys)
    n = rng.randint(1, 4)
    if zset:
        members = []
        for i in range(n):
            members += [str(rng.randint(0, 9)).encode(), b"m%d" % rng.randint(0, 5)]
        push = (b"ZADD", k, *members)
    else:
        push = (rng.choice([b"RPUSH", b"LPUSH"]), k, *[b"v%d" % rng.randint(0, 9) for _ in range(n)])
    how = rng.random()
    if how < 0.6:
        cmds = [push]
    elif how < 0.8:
        cmds = [(b"MULTI",), push, (b"SET", b"side", b"1"), (b"EXEC",)]
    else:
        script = b"redis.call(ARGV[1], KEYS[1], unpack(ARGV, 2)) return redis.call('INCR', 'cnt')"
        cmds = [(b"EVAL", script, b"1", k, push[0], *push[2:])]
    pair.run(cmds)
    for w in waiters:
        w.read_replies(1)
        w.close()
    # Clean up for the next round.
    pair.run([(b"DEL", *lists, *zsets, b"dst")])


def test_effects_blocking(servers, pair):
    cairn, oracle, *logs = servers
    rng = random.Random(SEED + 100)
    pair.fresh()
    pair.run([(b"FLUSHALL",)])
    for _ in range(60):
        _blocking_round(rng, pair, cairn, oracle)
    check_segment(logs, "blocking seed=%d" % (SEED + 100))


def _expiring_setup(rng, keys, ttl_ms):
    cmds = []
    for k in keys:
        t = rng.choice(["string", "list", "hash", "set", "zset"])
        if t == "string":
            cmds.append((b"SET", k, b"v", b"PX", str(ttl_ms).encode()))
            continue
        if t == "list":
            cmds.append((b"RPUSH", k, b"a", b"b"))
        elif t == "hash":
            cmds.append((b"HSET", k, b"f", b"1"))
        elif t == "set":
            cmds.append((b"SADD", k, b"a", b"b"))
        else:
            cmds.append((b"ZADD", k, b"1", b"a"))
        cmds.append((b"PEXPIRE", k, str(ttl_ms).encode()))
    return cmds


def _touching(rng, keys):
    """Commands that look keys up: reads and writes, alone, in MULTI and in
    scripts, so that expired keys are deleted lazily in every context."""
    cmds = []
    for _ in range(40):
        k = rng.choice(keys)
        r = rng.random()
        if r < 0.2:
            cmds.append((b"GET", k))
        elif r < 0.35:
            cmds.append((b"SET", k, b"new"))
        elif r < 0.45:
            cmds.append((b"MGET", *rng.sample(keys, 3)))
        elif r < 0.55:
            cmds.append((b"LPUSH", k, b"x"))
        elif r < 0.65:
            cmds += [(b"MULTI",), (b"EXISTS", k), (b"INCR", rng.choice(keys)), (b"EXEC",)]
        elif r < 0.75:
            cmds.append((b"EVAL", b"redis.call('EXISTS', KEYS[1]) return redis.call('SET', KEYS[2], '1')",
                         b"2", k, rng.choice(keys)))
        elif r < 0.85:
            cmds.append((b"MSET", k, b"1", rng.choice(keys), b"2"))
        elif r < 0.9:
            cmds.append((b"RENAME", k, rng.choice(keys)))
        else:
            cmds.append((b"TYPE", k))
    return cmds


@pytest.mark.parametrize("lazyfree", [b"no", b"yes"])
def test_effects_lazy_expiry(servers, pair, lazyfree):
    logs = servers[2:]
    rng = random.Random(SEED + 200 + (lazyfree == b"yes"))
    pair.fresh()
    pair.run([(b"FLUSHALL",), (b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"),
              (b"CONFIG", b"SET", b"lazyfree-lazy-expire", lazyfree)])
    keys = [b"e%d" % i for i in range(12)]
    try:
        for _ in range(8):
            pair.run(_expiring_setup(rng, keys, rng.randint(1, 30)))
            time.sleep(0.06)
            pair.run(_touching(rng, keys))
            pair.run([(b"DEL", *keys)])
    finally:
        pair.run([(b"CONFIG", b"SET", b"lazyfree-lazy-expire", b"no")])
    check_segment(logs, "lazy expiry lazyfree=%s seed=%d" % (lazyfree.decode(), SEED + 200))


def test_effects_active_expiry(servers, pair):
    logs = servers[2:]
    rng = random.Random(SEED + 300)
    pair.fresh()
    pair.run([(b"FLUSHALL",), (b"DEBUG", b"SET-ACTIVE-EXPIRE", b"1")])
    check_segment(logs, "before active expiry")
    for db in (b"0", b"3"):
        pair.run([(b"SELECT", db)])
        keys = [b"a%s_%d" % (db, i) for i in range(30)]
        pair.run(_expiring_setup(rng, keys, rng.randint(1, 20)))
    pair.run([(b"SELECT", b"0")])
    # Setup effects are ordered; compare them first.
    time.sleep(0.02)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        sizes = []
        for conn in (pair.a, pair.b):
            tot = 0
            for db in (b"0", b"3"):
                conn.call(b"SELECT", db)
                tot += conn.call(b"DBSIZE")[1]
            conn.call(b"SELECT", b"0")
            sizes.append(tot)
        if sizes == [0, 0]:
            break
        time.sleep(0.1)
    assert sizes == [0, 0], "keys not expired actively: %r" % sizes
    settle(logs, 0.2)
    mine, theirs = logs[0].take(), logs[1].take()

    def split(cmds):
        # Everything that is not a SELECT or an expiry deletion is setup.
        setup = [c for c in cmds if c[0] not in (b"DEL", b"SELECT")]
        dels = sorted(c for c in cmds if c[0] == b"DEL")
        return setup, dels

    ms, md = split(mine)
    ts, td = split(theirs)
    idx = first_mismatch(ms, ts)
    assert idx is None, "\n" + report("active expiry setup", ms, ts, idx)
    idx = first_mismatch(md, td)
    assert idx is None, "\n" + report("active expiry deletions", md, td, idx)
    assert len(md) == 60
    # The order of deletions across databases is timing, so the two streams
    # may end in different databases; one write in db 0 brings both back to
    # it before the next segment (the SELECT it may need is dropped here).
    pair.run([(b"SET", b"effects:resync", b"1"), (b"DEL", b"effects:resync")])
    settle(logs, 0.2)
    for log in logs:
        rest = [c for c in log.take() if c[0] != b"SELECT"]
        assert rest == [[b"SET", b"effects:resync", b"1"], [b"DEL", b"effects:resync"]], rest


def _dump_payload(body):
    """A DUMP payload (RDB version 10 + CRC-64) around an RDB value body."""
    import struct
    poly, crc = 0x95AC9329AC4BC9B5, 0
    data = body + struct.pack("<H", 10)
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return data + struct.pack("<Q", crc)


def test_effects_restore(servers, pair):
    """RESTORE as Redis 7.0.15 propagates it: as sent, a relative TTL made
    absolute with ABSTTL appended, an already-expired TTL as DEL of the
    replaced key (even with lazyfree-lazy-server-del yes) or nothing."""
    logs = servers[2:]
    p = _dump_payload(b"\x00\x05hello")
    cmds = [(b"FLUSHALL",),
            (b"RESTORE", b"r1", b"0", p),
            (b"RESTORE", b"r1", b"0", p, b"REPLACE"),
            (b"RESTORE", b"r2", b"100000", p),
            (b"RESTORE", b"r3", b"1", p, b"ABSTTL"),
            (b"RESTORE", b"r1", b"1", p, b"ABSTTL", b"REPLACE"),
            (b"RESTORE", b"r4", b"4102444800000", p, b"absttl"),
            (b"RESTORE", b"r5", b"0", p, b"IDLETIME", b"10"),
            (b"RESTORE", b"r5", b"0", p, b"replace", b"FREQ", b"5"),
            (b"RESTORE", b"r5", b"0", p),  # BUSYKEY: nothing
            (b"CONFIG", b"SET", b"lazyfree-lazy-server-del", b"yes"),
            (b"RESTORE", b"r4", b"1", p, b"ABSTTL", b"REPLACE"),
            (b"CONFIG", b"SET", b"lazyfree-lazy-server-del", b"no"),
            (b"MULTI",), (b"RESTORE", b"r6", b"5000", p), (b"SET", b"x", b"1"), (b"EXEC",)]
    pair.run(cmds)
    n = check_segment(logs, "restore")
    assert n >= 8
