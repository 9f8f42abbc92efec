"""Differential stream for the stream commands (area "streams").

A few keys, IDs chosen explicitly (or `ms-*`, never `*`), so every reply is
deterministic: XADD with trims (MAXLEN/MINID, = and ~, LIMIT, NOMKSTREAM),
XRANGE/XREVRANGE with exclusive bounds and COUNT, XDEL, XTRIM, XLEN, XREAD
(without BLOCK), consumer groups (XGROUP every subcommand, XREADGROUP with
`>` and history, NOACK, XACK, XPENDING both forms, XCLAIM, XAUTOCLAIM),
XINFO STREAM [FULL]/GROUPS/CONSUMERS, XSETID, and small
stream-node-max-entries/bytes so entries spread over many nodes (XINFO's
radix-tree-keys/-nodes are compared exactly).

Times are the only nondeterminism: idle times (XPENDING's extended form,
XINFO CONSUMERS) and absolute delivery/seen times (XINFO STREAM FULL) are
normalized away; minimum-idle arguments are 0 or far beyond any real idle
time, and XCLAIM's IDLE/TIME put deliveries far in the past.
"""
import diffcore
from generators import finish

AREA = "streams"
COMMANDS = 20000

KEYS = [b"s0", b"s1", b"s2"]
GROUPS = [b"g1", b"g2", b"g3"]
CONSUMERS = [b"alice", b"bob", b"c", b"dave"]
FIELDS = [b"a", b"b", b"c", b"temperature", b"1", b"-7"]
BIG_IDLE = b"1000000000"


class Stream:
    """What the generator remembers of a key: the last ID it added."""

    def __init__(self):
        self.ms = 0
        self.seq = 0


def _val(rng):
    r = rng.random()
    if r < 0.3:
        return str(rng.randint(-200, 5000)).encode()
    if r < 0.9:
        return bytes(rng.choice(b"xyz") for _ in range(rng.randint(0, 10)))
    return b"v" * rng.randint(60, 300)


def _fields(rng):
    n = rng.choice([1, 1, 2, 2, 3])
    if rng.random() < 0.6:
        fs = FIELDS[:n]
    else:
        fs = [rng.choice(FIELDS) for _ in range(n)]
    out = []
    for f in fs:
        out += [f, _val(rng)]
    return out


def _id_near(rng, st):
    """An ID around the stream's top: mostly valid, sometimes not."""
    r = rng.random()
    if r < 0.5:
        return b"%d-%d" % (st.ms, st.seq + rng.randint(1, 3))
    if r < 0.8:
        return b"%d-%d" % (st.ms + rng.randint(1, 20), rng.randint(0, 3))
    if r < 0.88:
        return b"%d-*" % (st.ms + rng.randint(0, 2))
    if r < 0.92:
        return b"%d" % (st.ms + rng.randint(0, 5))
    if r < 0.96:
        return b"%d-%d" % (max(0, st.ms - 1), st.seq)
    return rng.choice([b"0-0", b"0", b"abc", b"1-x", b"-", b"+", b"18446744073709551615-18446744073709551615",
                       b"18446744073709551616", b" 5-1", b"+5-1"])


def _rand_id(rng, st):
    r = rng.random()
    if r < 0.1:
        return rng.choice([b"-", b"+", b"0", b"0-0", b"bad", b"(0-0", b"(+", b"(-",
                           b"18446744073709551615-18446744073709551615", b"(18446744073709551615-18446744073709551615"])
    ms = rng.randint(0, st.ms + 2)
    s = b"%d-%d" % (ms, rng.randint(0, 4)) if rng.random() < 0.8 else b"%d" % ms
    if rng.random() < 0.15:
        s = b"(" + s
    return s


def _trim(rng, st):
    r = rng.random()
    if r < 0.5:
        out = [b"MAXLEN"] + ([rng.choice([b"~", b"="])] if rng.random() < 0.6 else []) + \
            [str(rng.choice([0, 1, 3, 5, 10, 20, 50, -1])).encode()]
    else:
        out = [b"MINID"] + ([rng.choice([b"~", b"="])] if rng.random() < 0.6 else []) + [_rand_id(rng, st)]
    if rng.random() < 0.2:
        out += [b"LIMIT", str(rng.choice([0, 1, 5, 100, -1])).encode()]
    return out


def _count(rng):
    return [b"COUNT", str(rng.choice([0, 1, 2, 3, 5, 10, -1])).encode()] if rng.random() < 0.6 else []


def _one(rng, streams):
    k = rng.choice(KEYS)
    st = streams.setdefault(k, Stream())
    g = rng.choice(GROUPS)
    cn = rng.choice(CONSUMERS)
    r = rng.random()
    if r < 0.30:
        idarg = _id_near(rng, st)
        opts = []
        if rng.random() < 0.1:
            opts.append(b"NOMKSTREAM")
        if rng.random() < 0.25:
            opts += _trim(rng, st)
        parts = idarg.split(b"-")
        try:
            ms = int(parts[0])
            if ms >= st.ms and len(parts) == 2 and parts[1] != b"*":
                st.ms, st.seq = ms, int(parts[1])
            elif ms > st.ms:
                st.ms, st.seq = ms, 0
            elif ms == st.ms and parts[1:] == [b"*"]:
                st.seq += 1
        except ValueError:
            pass
        return [(b"XADD", k) + tuple(opts) + (idarg,) + tuple(_fields(rng))]
    if r < 0.38:
        cmd = rng.choice([b"XRANGE", b"XREVRANGE"])
        a, b = _rand_id(rng, st), _rand_id(rng, st)
        if rng.random() < 0.5:
            a, b = (b"-", b"+") if cmd == b"XRANGE" else (b"+", b"-")
        return [(cmd, k, a, b) + tuple(_count(rng))]
    if r < 0.41:
        return [(b"XLEN", k)]
    if r < 0.45:
        return [(b"XDEL", k) + tuple(_rand_id(rng, st).lstrip(b"(") for _ in range(rng.randint(1, 3)))]
    if r < 0.48:
        return [(b"XTRIM", k) + tuple(_trim(rng, st))]
    if r < 0.52:
        ks = rng.sample(KEYS, rng.randint(1, 2))
        # "+" (the last entry) is Redis 7.4's XREAD, which Cairn answers
        # (issue 38) where 7.0 errors: test_cond_writes covers it.
        ids = [rng.choice([b"$", b"0", _rand_id(rng, st).lstrip(b"(")]) for _ in ks]
        ids = [b"$" if i == b"+" else i for i in ids]
        return [(b"XREAD",) + tuple(_count(rng)) + (b"STREAMS",) + tuple(ks) + tuple(ids)]
    if r < 0.60:
        ks = rng.sample(KEYS, rng.randint(1, 2))
        ids = [rng.choice([b">", b">", b">", b"0", b"0-0", _rand_id(rng, st).lstrip(b"(")]) for _ in ks]
        opts = _count(rng) + ([b"NOACK"] if rng.random() < 0.2 else [])
        return [(b"XREADGROUP", b"GROUP", g, cn) + tuple(opts) + (b"STREAMS",) + tuple(ks) + tuple(ids)]
    if r < 0.66:
        sub = rng.random()
        if sub < 0.45:
            opts = []
            if rng.random() < 0.5:
                opts.append(b"MKSTREAM")
            if rng.random() < 0.2:
                opts += [b"ENTRIESREAD", rng.choice([b"0", b"3", b"-1", b"-2", b"x"])]
            return [(b"XGROUP", b"CREATE", k, g, rng.choice([b"$", b"0", _rand_id(rng, st).lstrip(b"(")])) +
                    tuple(opts)]
        if sub < 0.6:
            opts = [b"ENTRIESREAD", rng.choice([b"0", b"5", b"-1", b"-3"])] if rng.random() < 0.3 else []
            return [(b"XGROUP", b"SETID", k, g, rng.choice([b"$", b"0", _rand_id(rng, st).lstrip(b"(")])) +
                    tuple(opts)]
        if sub < 0.7:
            return [(b"XGROUP", b"DESTROY", k, g)]
        if sub < 0.85:
            return [(b"XGROUP", b"CREATECONSUMER", k, g, cn)]
        if sub < 0.97:
            return [(b"XGROUP", b"DELCONSUMER", k, g, cn)]
        return [(b"XGROUP", rng.choice([b"HELP", b"FOO", b"create"]))]
    if r < 0.71:
        return [(b"XACK", k, g) + tuple(_rand_id(rng, st).lstrip(b"(") for _ in range(rng.randint(1, 4)))]
    if r < 0.76:
        if rng.random() < 0.4:
            return [(b"XPENDING", k, g)]
        opts = [b"IDLE", rng.choice([b"0", BIG_IDLE])] if rng.random() < 0.3 else []
        a, b = (b"-", b"+") if rng.random() < 0.6 else (_rand_id(rng, st), _rand_id(rng, st))
        tail = [cn] if rng.random() < 0.4 else []
        return [(b"XPENDING", k, g) + tuple(opts) + (a, b, rng.choice([b"10", b"1", b"0", b"-1"])) + tuple(tail)]
    if r < 0.82:
        ids = [_rand_id(rng, st).lstrip(b"(") for _ in range(rng.randint(1, 3))]
        opts = []
        for _ in range(rng.randint(0, 3)):
            o = rng.random()
            if o < 0.2:
                opts += [b"IDLE", rng.choice([BIG_IDLE, b"0", b"x"])]
            elif o < 0.35:
                opts += [b"TIME", rng.choice([b"1000", b"5", b"-1"])]
            elif o < 0.5:
                opts += [b"RETRYCOUNT", rng.choice([b"0", b"7", b"x"])]
            elif o < 0.65:
                opts.append(b"FORCE")
            elif o < 0.8:
                opts.append(b"JUSTID")
            elif o < 0.95:
                opts += [b"LASTID", _rand_id(rng, st).lstrip(b"(")]
            else:
                opts.append(b"BOGUS")
        return [(b"XCLAIM", k, g, cn, rng.choice([b"0", BIG_IDLE, b"-5", b"x"])) + tuple(ids) + tuple(opts)]
    if r < 0.86:
        opts = []
        if rng.random() < 0.5:
            opts += [b"COUNT", rng.choice([b"1", b"2", b"5", b"0", b"x"])]
        if rng.random() < 0.3:
            opts.append(b"JUSTID")
        return [(b"XAUTOCLAIM", k, g, cn, rng.choice([b"0", BIG_IDLE]), _rand_id(rng, st)) + tuple(opts)]
    if r < 0.93:
        sub = rng.random()
        if sub < 0.4:
            return [(b"XINFO", b"STREAM", k)]
        if sub < 0.6:
            tail = [b"FULL"] + ([b"COUNT", rng.choice([b"0", b"2", b"5"])] if rng.random() < 0.5 else [])
            return [(b"XINFO", b"STREAM", k) + tuple(tail)]
        if sub < 0.8:
            return [(b"XINFO", b"GROUPS", k)]
        if sub < 0.97:
            return [(b"XINFO", b"CONSUMERS", k, g)]
        return [(b"XINFO", rng.choice([b"HELP", b"BAD"]))]
    if r < 0.95:
        opts = []
        if rng.random() < 0.3:
            opts += [b"ENTRIESADDED", rng.choice([b"0", b"100", b"-1"])]
        if rng.random() < 0.3:
            opts += [b"MAXDELETEDID", _rand_id(rng, st).lstrip(b"(")]
        newid = b"%d-%d" % (st.ms + rng.randint(0, 3), rng.randint(0, 5))
        return [(b"XSETID", k, rng.choice([newid, _rand_id(rng, st).lstrip(b"(")])) + tuple(opts)]
    if r < 0.96:
        streams.pop(k, None)
        return [(b"DEL", k)]
    if r < 0.97:
        return [(b"TYPE", k), (b"OBJECT", b"ENCODING", k), (b"EXISTS", k)]
    if r < 0.98:
        # Small byte limits are left out: redis-server 7.0.15 corrupts its
        # own nodes with some (an assertion in lpFirst under XINFO/XRANGE).
        return [(b"CONFIG", b"SET", b"stream-node-max-entries", rng.choice([b"3", b"5", b"10", b"100", b"0"]))]
    return [(b"XADD", k, b"%d-%d" % (st.ms + 1, 0)) + tuple(_fields(rng))]


# ------------------------------------------------------------- normalizing

def _norm_times(v, parent_key=None):
    """Replaces idle times and absolute times (>= 1e12 ms) with 0."""
    t, x = v
    if t in (b":",) and (parent_key in (b"idle",) or (x is not None and abs(int(x)) >= 10 ** 12)):
        return (t, 0)
    if t in (b"*", b"%", b"~") and x is not None:
        out = []
        prev = None
        for item in x:
            out.append(_norm_times(item, prev))
            prev = item[1] if item[0] in (b"$", b"+") else None
        return (t, out)
    return v


def _norm_xpending(v):
    """The extended form's idle times (3rd of each 4-element entry)."""
    t, x = v
    if t == b"*" and x is not None and all(i[0] == b"*" and i[1] is not None and len(i[1]) == 4 and
                                           i[1][2][0] == b":" for i in x):
        return (t, [(b"*", [e[1][0], e[1][1], (b":", 0), e[1][3]]) for e in x])
    return v


diffcore.NORMALIZERS.setdefault(b"XINFO", _norm_times)
diffcore.NORMALIZERS.setdefault(b"XPENDING", _norm_xpending)


def generate(rng, n, now):
    cmds = [(b"CONFIG", b"SET", b"stream-node-max-entries", b"5"),
            (b"CONFIG", b"SET", b"stream-node-max-bytes", b"4096")]
    streams = {}
    while len(cmds) < n:
        cmds.extend(_one(rng, streams))
    out = finish(rng, cmds, n)
    out += [(b"CONFIG", b"SET", b"stream-node-max-entries", b"100"),
            (b"CONFIG", b"SET", b"stream-node-max-bytes", b"4096")]
    return out
