"""Seeded random command-stream generators, one per area.

Each generator is gen_<area>(rng, n, now) -> list of commands (tuples of
bytes).  `now` is the Unix time the stream is built at; absolute expiry
times are derived from it.

Timing-race rules for expiry: relative TTLs are multiples of 100000 s
(RELATIVE), absolute times are now + odd multiples of 50000 s (ABSOLUTE) or
in the past.  So no two expiry times ever land within 50000 s of each other
unless they are literally the same absolute timestamp, which keeps GT/LT
comparisons deterministic; GT/LT are only used with absolute times.
"""

KEYS = [b"k%d" % i for i in range(6)] + [b"str", b"num"]
BAD_INTS = [b"abc", b"1.5", b"", b"9223372036854775808", b"-9223372036854775809",
            b" 1", b"1e3", b"0x10", b"+1", b"12abc", b"-"]
EDGE_INTS = [b"0", b"1", b"-1", b"9223372036854775807", b"-9223372036854775808",
             b"100", b"-100", b"4611686018427387904"]


def key(rng):
    return rng.choice(KEYS)


def num(rng, lo=-1000, hi=1000):
    return str(rng.randint(lo, hi)).encode()


def sval(rng):
    r = rng.random()
    if r < 0.3:
        return num(rng, -50, 200)
    if r < 0.6:
        return bytes(rng.choice(b"abc") for _ in range(rng.randint(0, 12)))
    if r < 0.7:
        return b"x" * rng.randint(40, 60)     # around the embstr limit (44)
    if r < 0.8:
        return rng.choice(EDGE_INTS)
    if r < 0.85:
        return rng.choice([b"1.5", b"-0.0", b"3e2", b"inf", b"nan", b" 5", b"05"])
    return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 8)))


def maybe_bad_int(rng, good):
    return rng.choice(BAD_INTS) if rng.random() < 0.1 else good


# Commands that create non-string values.  The test probes the server under
# test and keeps only those it implements (see enable_other_types), so the
# stream adapts while types are being added.
ALL_OTHER_TYPES = [b"LPUSH", b"SADD", b"HSET", b"ZADD"]
OTHER_TYPES = list(ALL_OTHER_TYPES)
_OTHER_ARGS = {b"LPUSH": (b"a",), b"SADD": (b"m",), b"HSET": (b"f", b"v"),
               b"ZADD": (b"1", b"m")}


def enable_other_types(names):
    OTHER_TYPES[:] = [n for n in ALL_OTHER_TYPES if n in names]


def other_type_cmd(rng):
    """Create a non-string value at a key so WRONGTYPE paths get exercised."""
    k = key(rng)
    i = rng.randrange(len(ALL_OTHER_TYPES))
    name = ALL_OTHER_TYPES[i]
    if name not in OTHER_TYPES:
        return (b"EXISTS", k)
    return (name, k) + _OTHER_ARGS[name]


# TTL / PTTL key member are Cairn's member TTLs (KeyDB's form, issue 39),
# where Redis 7.0 answers an arity error: test_member_ttl covers them.
NO_EXTRA_ARG = {b"TTL", b"PTTL"}


def mutate_arity(rng, cmd):
    """Drop or add an argument to produce arity / syntax errors."""
    if len(cmd) > 1 and (rng.random() < 0.5 or cmd[0].upper() in NO_EXTRA_ARG):
        return cmd[:-1]
    return cmd + (rng.choice([b"junk", b"1", b"EX"]),)


def finish(rng, cmds, n):
    """Sprinkle in other-type, arity and junk commands."""
    out = []
    for c in cmds[:n]:
        r = rng.random()
        if r < 0.03:
            out.append(other_type_cmd(rng))
        elif r < 0.06:
            out.append(mutate_arity(rng, c))
            continue
        out.append(c)
    return out[:n]


def _expire_tokens(rng, now, allow_abs=True):
    r = rng.random()
    rel = rng.choice([100000, 200000, 300000])
    ab = now + rng.choice([50000, 150000, 250000])
    if r < 0.35:
        return [b"EX", str(rel).encode()]
    if r < 0.55:
        return [b"PX", str(rel * 1000).encode()]
    if r < 0.7 and allow_abs:
        return [b"EXAT", str(ab).encode()]
    if r < 0.8 and allow_abs:
        return [b"PXAT", str(ab * 1000).encode()]
    if r < 0.85:
        return [b"EXAT", rng.choice([b"1", str(now - 1000).encode()])]
    if r < 0.95:
        return [rng.choice([b"EX", b"PX", b"EXAT", b"PXAT"]),
                rng.choice([b"0", b"-5", b"abc", b"9223372036854775807", b"1.5"])]
    return [b"EX"]


# ------------------------------------------------------------------ strings

def gen_strings(rng, n, now):
    cmds = []
    for _ in range(n):
        k = key(rng)
        r = rng.randrange(24)
        if r == 0:
            opts = []
            if rng.random() < 0.4:
                opts.append(rng.choice([b"NX", b"XX"]))
            if rng.random() < 0.4:
                opts += _expire_tokens(rng, now)
            elif rng.random() < 0.2:
                opts.append(b"KEEPTTL")
            if rng.random() < 0.3:
                opts.append(b"GET")
            rng.shuffle(opts) if rng.random() < 0.1 else None
            cmds.append((b"SET", k, sval(rng)) + tuple(opts))
        elif r == 1:
            cmds.append((b"SET", k, sval(rng)))
        elif r == 2:
            cmds.append((b"GET", k))
        elif r == 3:
            cmds.append((b"GETSET", k, sval(rng)))
        elif r == 4:
            cmds.append((b"GETDEL", k))
        elif r == 5:
            opt = rng.choice([[], [b"PERSIST"], _expire_tokens(rng, now)])
            cmds.append((b"GETEX", k) + tuple(opt))
        elif r == 6:
            cmds.append((b"MGET",) + tuple(key(rng) for _ in range(rng.randint(1, 4))))
        elif r == 7:
            args = []
            for _ in range(rng.randint(1, 3)):
                args += [key(rng), sval(rng)]
            cmds.append((b"MSET",) + tuple(args))
        elif r == 8:
            args = []
            for _ in range(rng.randint(1, 3)):
                args += [key(rng), sval(rng)]
            cmds.append((b"MSETNX",) + tuple(args))
        elif r == 9:
            cmds.append((b"SETNX", k, sval(rng)))
        elif r == 10:
            cmds.append((b"SETEX", k, maybe_bad_int(rng, rng.choice([b"100000", b"0", b"-1"])),
                         sval(rng)))
        elif r == 11:
            cmds.append((b"PSETEX", k, maybe_bad_int(rng, rng.choice([b"100000000", b"0"])),
                         sval(rng)))
        elif r in (12, 13):
            cmds.append((b"APPEND", k, sval(rng)))
        elif r == 14:
            cmds.append((b"STRLEN", k))
        elif r in (15, 16):
            a = rng.choice([num(rng, -20, 20), num(rng, -20, 20), b"9999999999",
                            b"-9999999999", b"x"])
            b = rng.choice([num(rng, -20, 20), num(rng, -20, 20), b"9223372036854775807",
                            b"-9223372036854775808"])
            cmds.append((rng.choice([b"GETRANGE", b"SUBSTR"]), k, a, b))
        elif r == 17:
            off = rng.choice([num(rng, 0, 30), num(rng, 0, 30), b"-1", b"536870912", b"x"])
            v = sval(rng)
            if off == b"536870912" and not v:
                v = b"z"
            cmds.append((b"SETRANGE", k, off, v))
        elif r in (18, 19):
            a, b = key(rng), key(rng)
            opts = []
            if rng.random() < 0.3:
                opts.append(b"LEN")
            elif rng.random() < 0.5:
                opts.append(b"IDX")
                if rng.random() < 0.5:
                    opts += [b"MINMATCHLEN", rng.choice([b"0", b"1", b"2", b"3", b"-1", b"x"])]
                if rng.random() < 0.5:
                    opts.append(b"WITHMATCHLEN")
            cmds.append((b"LCS", a, b) + tuple(opts))
        elif r == 20:
            cmds.append((b"DEL", k))
        elif r == 21:
            cmds.append((b"EXISTS", k))
        elif r == 22:
            cmds.append((b"OBJECT", b"ENCODING", k))
        else:
            cmds.append((b"TYPE", k))
    return finish(rng, cmds, n)


# ----------------------------------------------------------------- counters

def gen_counters(rng, n, now):
    cmds = []
    for _ in range(n):
        k = key(rng)
        r = rng.randrange(12)
        if r == 0:
            cmds.append((b"INCR", k))
        elif r == 1:
            cmds.append((b"DECR", k))
        elif r in (2, 3):
            v = rng.choice([num(rng), num(rng), rng.choice(EDGE_INTS), rng.choice(BAD_INTS)])
            cmds.append((rng.choice([b"INCRBY", b"DECRBY"]), k, v))
        elif r in (4, 5):
            v = rng.choice([b"1.5", b"-0.25", b"10", b"1e3", b"-1e-3", b"3.0e2", b"0",
                            b"1e308", b"-1e308", b"inf", b"-inf", b"nan", b"abc", b"",
                            b"0x10", b" 1", b"1.", b".5", b"5e-400",
                            str(rng.uniform(-1e6, 1e6)).encode()])
            cmds.append((b"INCRBYFLOAT", k, v))
        elif r in (6, 7):
            cmds.append((b"SET", k, rng.choice(
                [num(rng), rng.choice(EDGE_INTS), b"1.5", b"abc", b"10.50", b"1e5",
                 b"-0", b"00", b"  3", b"3.0", b"1e308", b"-1.7976931348623157e308",
                 b"9223372036854775806", b"-9223372036854775807"])))
        elif r == 8:
            cmds.append((b"GET", k))
        elif r == 9:
            cmds.append((b"OBJECT", b"ENCODING", k))
        elif r == 10:
            cmds.append((b"APPEND", k, rng.choice([b"1", b"0", b"x"])))
        else:
            cmds.append((b"DEL", k))
    return finish(rng, cmds, n)


# ----------------------------------------------------------------- bitmaps

def _bf_type(rng):
    if rng.random() < 0.03:
        return rng.choice([b"i0", b"u64", b"i65", b"x8", b"u", b"i"])
    if rng.random() < 0.5:
        return b"i%d" % rng.randint(1, 64)
    return b"u%d" % rng.randint(1, 63)


def _bf_off(rng):
    r = rng.random()
    if r < 0.03:
        return rng.choice([b"-1", b"x", b"#-1", b"4294967296"])
    if r < 0.3:
        return b"#%d" % rng.randint(0, 10)
    return str(rng.randint(0, 200)).encode()


def _bf_val(rng):
    if rng.random() < 0.03:
        return b"x"
    return rng.choice([num(rng, -300, 300), rng.choice(EDGE_INTS), b"127", b"-128",
                       b"255", b"256"])


def gen_bitmaps(rng, n, now):
    cmds = []
    for _ in range(n):
        k = key(rng)
        r = rng.randrange(16)
        if r in (0, 1, 2):
            off = num(rng, 0, 300) if rng.random() < 0.5 else num(rng, 0, 64)
            if rng.random() < 0.05:
                off = rng.choice([b"-1", b"4294967296", b"x"])
            bit = rng.choice([b"0", b"1", b"1"]) if rng.random() < 0.95 else \
                rng.choice([b"2", b"x"])
            cmds.append((b"SETBIT", k, off, bit))
        elif r == 3:
            cmds.append((b"GETBIT", k, rng.choice([num(rng, 0, 300), b"-1", b"x",
                                                   b"4294967295"])))
        elif r in (4, 5):
            args = []
            if rng.random() < 0.8:
                args = [num(rng, -40, 40), num(rng, -40, 40)]
                if rng.random() < 0.5:
                    args.append(rng.choice([b"BYTE", b"BIT", b"bit", b"byte", b"WORD"]))
            elif rng.random() < 0.5:
                args = [num(rng, -5, 5)]
            cmds.append((b"BITCOUNT", k) + tuple(args))
        elif r in (6, 7):
            args = [rng.choice([b"0", b"1", b"2"])]
            if rng.random() < 0.7:
                args.append(num(rng, -40, 40))
                if rng.random() < 0.6:
                    args.append(num(rng, -40, 40))
                    if rng.random() < 0.5:
                        args.append(rng.choice([b"BYTE", b"BIT", b"bits"]))
            cmds.append((b"BITPOS", k) + tuple(args))
        elif r == 8:
            op = rng.choice([b"AND", b"OR", b"XOR", b"NOT", b"and", b"NAND"])
            srcs = [key(rng) for _ in range(1 if op == b"NOT" and rng.random() < 0.8
                                            else rng.randint(1, 3))]
            cmds.append((b"BITOP", op, key(rng)) + tuple(srcs))
        elif r in (9, 10, 11):
            args = []
            for _ in range(rng.randint(1, 4)):
                s = rng.random()
                if s < 0.25:
                    args += [b"GET", _bf_type(rng), _bf_off(rng)]
                elif s < 0.5:
                    args += [b"SET", _bf_type(rng), _bf_off(rng), _bf_val(rng)]
                elif s < 0.85:
                    args += [b"INCRBY", _bf_type(rng), _bf_off(rng), _bf_val(rng)]
                else:
                    args += [b"OVERFLOW", rng.choice([b"WRAP", b"SAT", b"FAIL", b"fail",
                                                      b"BAD"] if rng.random() < 0.1
                                                     else [b"WRAP", b"SAT", b"FAIL"])]
            cmds.append((b"BITFIELD", k) + tuple(args))
        elif r == 12:
            args = []
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.9:
                    args += [b"GET", _bf_type(rng), _bf_off(rng)]
                else:
                    args += [b"SET", b"u8", b"0", b"1"]
            cmds.append((b"BITFIELD_RO", k) + tuple(args))
        elif r == 13:
            cmds.append((b"SET", k, sval(rng)))
        elif r == 14:
            cmds.append((b"GET", k))
        else:
            cmds.append((rng.choice([b"DEL", b"STRLEN"]), k))
    return finish(rng, cmds, n)


# ------------------------------------------------------------------ expiry

def gen_expiry(rng, n, now):
    cmds = []
    for _ in range(n):
        k = key(rng)
        r = rng.randrange(18)
        rel = rng.choice([100000, 200000, 300000])
        ab = now + rng.choice([50000, 150000, 250000])
        if r in (0, 1):
            cmds.append((b"SET", k, sval(rng)) + tuple(_expire_tokens(rng, now)))
        elif r == 2:
            cmds.append((b"SET", k, sval(rng)))
        elif r in (3, 4):
            flag = rng.choice([(), (b"NX",), (b"XX",), (b"nx",)])
            v = rng.choice([str(rel).encode(), b"-1", b"0", b"abc", b"9223372036854775807"])
            cmds.append((b"EXPIRE", k, v) + flag)
        elif r == 5:
            flag = rng.choice([(), (b"NX",), (b"XX",)])
            cmds.append((b"PEXPIRE", k, rng.choice([str(rel * 1000).encode(), b"-1"])) + flag)
        elif r in (6, 7, 8):
            flag = rng.choice([(), (b"NX",), (b"XX",), (b"GT",), (b"LT",), (b"GT", b"LT"),
                               (b"NX", b"XX"), (b"NX", b"GT"), (b"BAD",)])
            v = rng.choice([str(ab).encode(), str(ab).encode(), b"1", str(now - 10).encode(),
                            b"x"])
            cmds.append((b"EXPIREAT", k, v) + flag)
        elif r == 9:
            flag = rng.choice([(), (b"NX",), (b"XX",), (b"GT",), (b"LT",)])
            v = rng.choice([str(ab * 1000).encode(), b"1000"])
            cmds.append((b"PEXPIREAT", k, v) + flag)
        elif r == 10:
            cmds.append((b"TTL", k))
        elif r == 11:
            cmds.append((b"PTTL", k))
        elif r == 12:
            cmds.append((b"EXPIRETIME", k))
        elif r == 13:
            cmds.append((b"PEXPIRETIME", k))
        elif r == 14:
            cmds.append((b"PERSIST", k))
        elif r == 15:
            cmds.append((b"GETEX", k) + tuple(rng.choice([[b"PERSIST"], [],
                                                           _expire_tokens(rng, now)])))
        elif r == 16:
            cmds.append((rng.choice([b"EXISTS", b"GET", b"DEL"]), k))
        else:
            cmds.append((b"SET", k, sval(rng), b"KEEPTTL") +
                        rng.choice([(), (b"XX",), (b"GET",)]))
    return finish(rng, cmds, n)


# -------------------------------------------------------------------- keys

def gen_keys(rng, n, now):
    cmds = []
    db = lambda: rng.choice([b"0", b"1", b"2", b"3", b"3", b"16", b"-1", b"x"])  # noqa
    for _ in range(n):
        k = key(rng)
        r = rng.randrange(30)
        if r in (0, 1, 2, 3):
            cmds.append((b"SET", k, sval(rng)))
        elif r == 4:
            cmds.append(other_type_cmd(rng))
        elif r == 5:
            cmds.append((rng.choice([b"DEL", b"UNLINK"]),) +
                        tuple(key(rng) for _ in range(rng.randint(1, 3))))
        elif r == 6:
            cmds.append((b"EXISTS",) + tuple(key(rng) for _ in range(rng.randint(1, 3))))
        elif r == 7:
            cmds.append((b"TYPE", k))
        elif r == 8:
            cmds.append((b"RENAME", k, key(rng)))
        elif r == 9:
            cmds.append((b"RENAMENX", k, key(rng)))
        elif r == 10:
            cmds.append((b"MOVE", k, db()))
        elif r in (11, 12):
            opts = []
            if rng.random() < 0.5:
                opts += [b"DB", db()]
            if rng.random() < 0.5:
                opts.append(b"REPLACE")
            cmds.append((b"COPY", k, key(rng)) + tuple(opts))
        elif r == 13:
            cmds.append((b"TOUCH",) + tuple(key(rng) for _ in range(rng.randint(1, 3))))
        elif r in (14, 15):
            cmds.append((b"SELECT", db()))
        elif r == 16:
            cmds.append((b"SWAPDB", db(), db()))
        elif r == 17:
            if rng.random() < 0.3:
                cmds.append((b"FLUSHDB",) + rng.choice([(), (b"SYNC",), (b"ASYNC",)]))
            else:
                cmds.append((b"DBSIZE",))
        elif r == 18:
            cmds.append((b"DBSIZE",))
        elif r == 19:
            cmds.append((b"KEYS", rng.choice([b"*", b"k*", b"k[0-2]", b"?um", b"s*r",
                                              b"k\\1", b"[a-z]*", b"*[^0]"])))
        elif r == 20:
            args = ()
            if rng.random() < 0.4:
                args += (b"MATCH", rng.choice([b"k*", b"*", b"n?m"]))
            if rng.random() < 0.3:
                args += (b"COUNT", rng.choice([b"1", b"2", b"100"]))
            if rng.random() < 0.3:
                args += (b"TYPE", rng.choice([b"string", b"list", b"set", b"hash", b"zset"]))
            cmds.append((b"@SCANALL",) + args)
        elif r == 21:
            cmds.append((b"RANDOMKEY",))
        elif r in (22, 23):
            cmds.append((b"OBJECT", b"ENCODING", k))
        elif r == 24:
            cmds.append((b"GET", k))
        elif r == 25:
            cmds.append((b"SET", k, sval(rng), b"EX", b"100000"))
        elif r == 26:
            cmds.append((b"TTL", k))
        elif r == 27:
            cmds.append((b"SCAN", rng.choice([b"x", b"1x", b"99999999999999999999"])))
        elif r == 28:
            cmds.append((b"EXPIREAT", k, b"1"))
        else:
            cmds.append((b"APPEND", k, sval(rng)))
    return finish(rng, cmds, n)


AREAS = {
    "strings": gen_strings,
    "counters": gen_counters,
    "bitmaps": gen_bitmaps,
    "expiry": gen_expiry,
    "keys": gen_keys,
}

# Commands per area when DIFF_COMMANDS is not set; the five areas above
# share the default 20,000.  A data type's own module may ask for more.
AREA_COMMANDS = {}


def _load_type_modules():
    """Each tests/diff/gen_<area>.py adds an area: it defines AREA (name),
    generate(rng, n, now) returning a command list (use finish() from here
    for arity/junk/other-type sprinkling) and optionally COMMANDS, its
    default stream length."""
    import importlib
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for fname in sorted(os.listdir(here)):
        if fname.startswith("gen_") and fname.endswith(".py"):
            mod = importlib.import_module(fname[:-3])
            AREAS[mod.AREA] = mod.generate
            if hasattr(mod, "COMMANDS"):
                AREA_COMMANDS[mod.AREA] = mod.COMMANDS


_load_type_modules()
