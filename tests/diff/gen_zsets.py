"""Differential stream for the sorted-set commands (area "zsets").

Every sorted-set reply is deterministic except ZRANDMEMBER (random picks)
and ZSCAN on a skiplist-encoded set (hash order).  ZSCAN is sent with a COUNT
large enough to finish in one call and its pairs are compared sorted.
ZRANDMEMBER is checked against the set's contents: each ZRANDMEMBER is
preceded by `ZRANGE key 0 -1 WITHSCORES`, compared exactly, whose reply the
check records (the stream is compared in order); the ZRANDMEMBER reply must
then have the right type and count, distinct members for a positive count,
and only (member, score) pairs of that set, on both servers.

Scores are small integers and dyadic fractions (sums are exact whatever
the addition order), plus -0, +/-inf, 0.1 and 1e300.  Big ZADDs cross
zset-max-listpack-entries (128) and long members cross
zset-max-listpack-value (64), so both encodings and the conversion are
exercised; OBJECT ENCODING is compared.
"""
import diffcore
import generators

AREA = "zsets"
COMMANDS = 20000

ZKEYS = [b"z0", b"z1", b"z2", b"z3", b"big"]
SET_KEY = b"zs-set"
ISET_KEY = b"zs-iset"
STR_KEY = b"zs-str"
# Lex ranges are only specified when all scores are equal: these keys only
# ever get score 0 and are the only targets of the lex commands.
LEX_KEYS = [b"lx0", b"lx1"]
ALL = ZKEYS + [SET_KEY, ISET_KEY, STR_KEY, b"zs-missing"]
MEMBERS = [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"aa", b"ab", b"b\x00", b"1", b"2", b"10", b"-3",
           b"", b"x" * 65, b"y" * 64, b"\xff"]
SCORES = [b"0", b"1", b"2", b"3", b"-1", b"-2", b"5", b"0.5", b"1.25", b"-0", b"+inf", b"-inf", b"inf",
          b"1e300", b"0.1", b"100", b"2.5", b"-7.75", b"1e15"]
BAD_SCORES = [b"nan", b"abc", b"", b"(1", b"1x", b"--1"]
SCORE_BOUNDS = [b"-inf", b"+inf", b"0", b"1", b"(1", b"2", b"(2", b"-1", b"(0", b"5", b"(-inf", b"(+inf",
                b"0.5", b"(2.5", b"100", b"inf", b"-inf"]
BAD_BOUNDS = [b"nan", b"x", b"(x", b"((1", b"1 "]
LEX_BOUNDS = [b"-", b"+", b"[a", b"(a", b"[b", b"(b", b"[aa", b"(c", b"[g", b"[", b"(", b"[1", b"(10"]
BAD_LEX = [b"a", b"", b"--", b"++", b"x"]
RANKS = [b"0", b"1", b"2", b"-1", b"-2", b"5", b"-100", b"100", b"3", b"10"]


class Cmd(tuple):
    check = None


def _with_check(cmd, check):
    c = Cmd(cmd)
    c.check = check
    return c


def _pairs(v):
    """(member, score) pairs of a flat RESP2 WITHSCORES array."""
    if v[0] != b"*" or v[1] is None:
        return None
    items = v[1]
    if len(items) % 2:
        return None
    out = []
    for i in range(0, len(items), 2):
        (t1, m), (t2, s) = items[i], items[i + 1]
        if t1 != b"$" or t2 != b"$":
            return None
        out.append((m, s))
    return out


def _recorder(cell):
    def check(a, b):
        cell["v"] = _pairs(b) if a == b else None
        return a == b
    return check


def _rand_check(cell, count, withscores):
    """count None: single-member form."""
    def check(a, b):
        contents = cell.get("v")
        cell["v"] = None
        if a[0] == b"-" or b[0] == b"-":
            return a == b
        if a[0] != b[0]:
            return False
        for v in (a, b):
            if count is None:
                if contents is not None:
                    if not contents:
                        if v[1] is not None:
                            return False
                    elif v[0] != b"$" or v[1] not in {m for m, _ in contents}:
                        return False
                continue
            if v[0] != b"*":
                return False
            if withscores:
                got = _pairs(v)
            else:
                got = [(x[1], None) for x in v[1]] if all(x[0] == b"$" for x in v[1]) else None
            if got is None:
                return False
            if count > 0 and len({m for m, _ in got}) != len(got):
                return False
            if contents is not None:
                want = len(contents) and (min(count, len(contents)) if count > 0 else -count)
                if len(got) != want:
                    return False
                allowed = dict(contents)
                for m, s in got:
                    if m not in allowed or (withscores and allowed[m] != s):
                        return False
        if count is not None and contents is None:
            return len(a[1]) == len(b[1])
        return True
    return check


def _structural(a, b):
    if a[0] == b"-" or b[0] == b"-" or a[0] != b"*":
        return a == b if a[0] == b"-" or b[0] == b"-" else a[0] == b[0] and (a[1] is None) == (b[1] is None)
    return a[0] == b[0] and len(a[1]) == len(b[1])


def _sorted_scan(v):
    if v[0] == b"*" and v[1] and len(v[1]) == 2 and v[1][1][0] == b"*":
        items = v[1][1][1]
        pairs = sorted((items[i], items[i + 1]) for i in range(0, len(items) - 1, 2))
        return (b"*", [v[1][0], pairs])
    return v


diffcore.NORMALIZERS.setdefault(b"ZSCAN", _sorted_scan)


def _key(rng):
    r = rng.random()
    if r < 0.85:
        return rng.choice(ZKEYS)
    return rng.choice(ALL)


def _member(rng):
    return rng.choice(MEMBERS) if rng.random() < 0.9 else ("m%d" % rng.randint(0, 300)).encode()


def _score(rng):
    r = rng.random()
    if r < 0.02:
        return rng.choice(BAD_SCORES)
    if r < 0.6:
        return str(rng.randint(-3, 6)).encode()
    return rng.choice(SCORES)


def _sbound(rng):
    return rng.choice(BAD_BOUNDS) if rng.random() < 0.02 else rng.choice(SCORE_BOUNDS)


def _lbound(rng):
    return rng.choice(BAD_LEX) if rng.random() < 0.02 else rng.choice(LEX_BOUNDS)


def _limit(rng):
    if rng.random() < 0.5:
        return ()
    return (b"LIMIT", rng.choice([b"0", b"1", b"2", b"-1", b"5", b"x"]), rng.choice([b"1", b"2", b"-1", b"0", b"3", b"10"]))


def _numkeys_args(rng, lo=1, hi=3):
    n = rng.randint(lo, hi)
    keys = [_key(rng) if rng.random() < 0.8 else rng.choice([SET_KEY, ISET_KEY]) for _ in range(n)]
    nk = str(n).encode()
    r = rng.random()
    if r < 0.02:
        nk = rng.choice([b"0", b"-1", b"x", str(n + 1).encode()])
    return n, (nk,) + tuple(keys)


def _setop_opts(rng, n, op, store):
    opts = []
    if op != "diff":
        if rng.random() < 0.4:
            opts += [b"WEIGHTS"] + [rng.choice([b"1", b"2", b"0", b"-1", b"0.5", b"inf", b"x"] if rng.random() < 0.05
                                                else [b"1", b"2", b"0", b"-1", b"0.5"]) for _ in range(n)]
        if rng.random() < 0.4:
            opts += [b"AGGREGATE", rng.choice([b"SUM", b"MIN", b"MAX", b"sum", b"max"] + ([b"avg"] if rng.random() < 0.05 else []))]
    if not store and rng.random() < 0.5:
        opts.append(b"WITHSCORES")
    rng.shuffle(opts) if rng.random() < 0.02 else None
    return tuple(opts)


def generate(rng, n, now):
    cmds = []
    emit = cmds.append
    while len(cmds) < n:
        r = rng.random()
        k = _key(rng)
        lk = rng.choice(LEX_KEYS)
        if rng.random() < 0.1:
            if rng.random() < 0.1:
                args = []
                for i in range(rng.randint(100, 140)):
                    args += [b"0", rng.choice(MEMBERS + [b"w%d" % rng.randint(0, 200)])]
                emit((b"ZADD", lk) + tuple(args))
            else:
                emit((b"ZADD", lk) + sum(((b"0", _member(rng)) for _ in range(rng.randint(1, 4))), ()))
            continue
        if r < 0.18:
            flags = []
            if rng.random() < 0.3:
                flags = rng.sample([b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR"], rng.randint(1, 2))
            pairs = []
            for _ in range(1 if b"INCR" in flags and rng.random() < 0.9 else rng.randint(1, 4)):
                pairs += [_score(rng), _member(rng)]
            emit((b"ZADD", k) + tuple(flags) + tuple(pairs))
        elif r < 0.2:
            # big: crosses 128 entries
            base = rng.randint(0, 50)
            cnt = rng.randint(120, 140)
            args = []
            for i in range(cnt):
                args += [str(rng.randint(-20, 20) * (0.5 if rng.random() < 0.3 else 1)).encode(), b"m%d" % (base + i)]
            emit((b"ZADD", rng.choice([b"big", b"z3"])) + tuple(args))
        elif r < 0.25:
            emit((b"ZINCRBY", k, rng.choice([b"1", b"-1", b"2.5", b"inf", b"-inf", b"0", b"nan", b"x"]), _member(rng)))
        elif r < 0.31:
            emit((b"ZREM", k) + tuple(_member(rng) for _ in range(rng.randint(1, 3))))
        elif r < 0.33:
            emit((b"ZCARD", k))
        elif r < 0.36:
            emit((b"ZSCORE", k, _member(rng)))
        elif r < 0.37:
            emit((b"ZMSCORE", k) + tuple(_member(rng) for _ in range(rng.randint(1, 3))))
        elif r < 0.40:
            emit((rng.choice([b"ZRANK", b"ZREVRANK"]), k, _member(rng)))
        elif r < 0.42:
            emit((b"ZCOUNT", k, _sbound(rng), _sbound(rng)))
        elif r < 0.44:
            emit((b"ZLEXCOUNT", lk, _lbound(rng), _lbound(rng)))
        elif r < 0.52:
            kind = rng.choice(["rank", "score", "lex"])
            opts = []
            if kind == "rank":
                a, b = rng.choice(RANKS), rng.choice(RANKS)
                if rng.random() < 0.05:
                    opts += list(_limit(rng))
            elif kind == "score":
                a, b = _sbound(rng), _sbound(rng)
                opts.append(b"BYSCORE")
                opts += list(_limit(rng))
            else:
                k = lk
                a, b = _lbound(rng), _lbound(rng)
                opts.append(b"BYLEX")
                opts += list(_limit(rng))
            if rng.random() < 0.4:
                opts.append(b"REV")
            if rng.random() < 0.4 and (kind != "lex" or rng.random() < 0.1):
                opts.append(b"WITHSCORES")
            if rng.random() < 0.1:
                rng.shuffle(opts)
            if rng.random() < 0.2:
                emit((b"ZRANGESTORE", rng.choice(ZKEYS + [b"dst"]), k, a, b) + tuple(o for o in opts if o != b"WITHSCORES" or rng.random() < 0.05))
                if rng.random() < 0.5:
                    emit((b"OBJECT", b"ENCODING", b"dst"))
            else:
                emit((b"ZRANGE", k, a, b) + tuple(opts))
        elif r < 0.58:
            which = rng.randrange(6)
            ws = (b"WITHSCORES",) if rng.random() < 0.4 else ()
            if which == 0:
                emit((b"ZREVRANGE", k, rng.choice(RANKS), rng.choice(RANKS)) + ws)
            elif which == 1:
                emit((b"ZRANGEBYSCORE", k, _sbound(rng), _sbound(rng)) + ws + _limit(rng))
            elif which == 2:
                emit((b"ZREVRANGEBYSCORE", k, _sbound(rng), _sbound(rng)) + _limit(rng) + ws)
            elif which == 3:
                emit((b"ZRANGEBYLEX", lk, _lbound(rng), _lbound(rng)) + _limit(rng))
            elif which == 4:
                emit((b"ZREVRANGEBYLEX", lk, _lbound(rng), _lbound(rng)) + _limit(rng))
            else:
                emit((b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"))
        elif r < 0.61:
            which = rng.randrange(3)
            if which == 0:
                emit((b"ZREMRANGEBYRANK", k, rng.choice(RANKS), rng.choice(RANKS)))
            elif which == 1:
                emit((b"ZREMRANGEBYSCORE", k, _sbound(rng), _sbound(rng)))
            else:
                emit((b"ZREMRANGEBYLEX", lk, _lbound(rng), _lbound(rng)))
        elif r < 0.66:
            which = rng.randrange(4)
            if which < 2:
                cmd = (rng.choice([b"ZPOPMIN", b"ZPOPMAX"]), k)
                if rng.random() < 0.6:
                    cmd += (rng.choice([b"0", b"1", b"2", b"5", b"-1", b"x", b"200"]),)
                emit(cmd)
            elif which == 2:
                nk, args = _numkeys_args(rng)
                cmd = (b"ZMPOP",) + args + (rng.choice([b"MIN", b"MAX", b"min", b"foo"]),)
                if rng.random() < 0.5:
                    cmd += (b"COUNT", rng.choice([b"1", b"2", b"10", b"0", b"-1"]))
                emit(cmd)
            else:
                nk, args = _numkeys_args(rng)
                cmd = (rng.choice([b"BZPOPMIN", b"BZPOPMAX"]),) + args[1:] + (rng.choice([b"0.01", b"0.01", b"x", b"-1"]),)
                # when every key is empty both block 10 ms and reply nil
                emit(cmd)
        elif r < 0.78:
            op = rng.choice(["union", "inter", "diff"])
            store = rng.random() < 0.5
            nk, args = _numkeys_args(rng)
            name = {"union": b"ZUNION", "inter": b"ZINTER", "diff": b"ZDIFF"}[op] + (b"STORE" if store else b"")
            opts = _setop_opts(rng, nk, op, store)
            if store:
                dst = rng.choice(ZKEYS + [b"dst"])
                emit((name, dst) + args + opts)
                if rng.random() < 0.5:
                    emit((b"OBJECT", b"ENCODING", dst))
            else:
                emit((name,) + args + opts)
        elif r < 0.80:
            nk, args = _numkeys_args(rng)
            cmd = (b"ZINTERCARD",) + args
            if rng.random() < 0.5:
                cmd += (b"LIMIT", rng.choice([b"0", b"1", b"2", b"-1", b"x"]))
            emit(cmd)
        elif r < 0.86:
            cell = {}
            emit(_with_check((b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"), _recorder(cell)))
            x = rng.random()
            if x < 0.25:
                emit(_with_check((b"ZRANDMEMBER", k), _rand_check(cell, None, False)))
            else:
                cnt = rng.choice([1, 2, 3, 5, 10, 200, -1, -3, -10, 0, rng.randint(-20, 20)])
                ws = rng.random() < 0.5
                cmd = (b"ZRANDMEMBER", k, str(cnt).encode()) + ((b"WITHSCORES",) if ws else ())
                emit(_with_check(cmd, _rand_check(cell, cnt, ws)))
        elif r < 0.88:
            opts = ()
            if rng.random() < 0.3:
                opts = (b"MATCH", rng.choice([b"a*", b"m1*", b"*", b"?"]))
            emit((b"ZSCAN", k, b"0", b"COUNT", b"1000") + opts)
        elif r < 0.92:
            emit((b"OBJECT", b"ENCODING", k))
        elif r < 0.94:
            emit((b"SADD", rng.choice([SET_KEY, ISET_KEY]),) + tuple(
                (str(rng.randint(0, 9)).encode() if rng.random() < 0.7 else _member(rng)) for _ in range(rng.randint(1, 3))))
            if rng.random() < 0.3:
                emit((b"SADD", ISET_KEY, str(rng.randint(-5, 5)).encode()))
        elif r < 0.95:
            emit((b"SET", STR_KEY, b"v"))
        elif r < 0.96:
            emit((b"DEL", rng.choice(ALL)))
        elif r < 0.97:
            bad = rng.choice([
                (b"ZADD", k, b"NX", b"XX", b"1", b"a"), (b"ZADD", k, b"GT", b"LT", b"1", b"a"),
                (b"ZADD", k, b"GT", b"NX", b"1", b"a"), (b"ZADD", k, b"INCR", b"1", b"a", b"2", b"b"),
                (b"ZADD", k, b"1", b"a", b"2"), (b"ZADD", k, b"nan", b"a"), (b"ZADD", k, b"INCR", b"+inf", b"a"),
                (b"ZADD", k, b"INCR", b"-inf", b"a"), (b"ZRANGE", k, b"0", b"1", b"LIMIT", b"0", b"1"),
                (b"ZRANGE", k, b"-", b"+", b"BYLEX", b"WITHSCORES"), (b"ZRANGE", k, b"0", b"1", b"BYSCORE", b"BYLEX"),
                (b"ZRANGE", k, b"0", b"1", b"REV", b"REV"), (b"ZRANGEBYSCORE", k, b"0", b"1", b"LIMIT", b"0"),
                (b"ZRANGEBYLEX", k, b"-", b"+", b"WITHSCORES"), (b"ZRANGESTORE", b"dst", k, b"0", b"1", b"WITHSCORES"),
                (b"ZRANGE", k, b"x", b"1"), (b"ZREMRANGEBYRANK", k, b"x", b"1"), (b"ZPOPMIN", k, b"1", b"2"),
                (b"ZRANDMEMBER", k, b"-9223372036854775808"), (b"ZRANDMEMBER", k, b"9223372036854775807", b"WITHSCORES"),
                (b"ZRANDMEMBER", k, b"1", b"foo"), (b"ZRANDMEMBER", k, b"x"), (b"ZSCAN", k, b"0", b"COUNT", b"0"),
                # COUNT 1000 first: finish() may drop or append an argument,
                # and a valid ZSCAN with the default COUNT on a skiplist
                # stops at a cursor that depends on each server's hash seed.
                (b"ZSCAN", k, b"x"), (b"ZSCAN", k, b"0", b"COUNT", b"1000", b"MATCH"),
                (b"ZUNIONSTORE", b"dst", b"1", k, b"WITHSCORES"),
                (b"ZDIFF", b"1", k, b"WEIGHTS", b"1"), (b"ZINTER", b"1", k, b"AGGREGATE"),
                (b"ZMPOP", b"1", k, b"MIN", b"COUNT", b"1", b"COUNT", b"2"), (b"ZINCRBY", k, b"1", b"a", b"b"),
            ])
            emit(bad)
        else:
            # encoding edges via config
            emit((b"CONFIG", b"SET", b"zset-max-listpack-entries", rng.choice([b"128", b"128", b"4", b"0"])))
            if rng.random() < 0.5:
                emit((b"CONFIG", b"SET", b"zset-max-listpack-value", rng.choice([b"64", b"64", b"3"])))
    out = generators.finish(rng, cmds, n)
    # finish() may mutate a ZRANDMEMBER's arguments (dropping its check):
    # those get a structural check (same error, or same type and length).
    for i, c in enumerate(out):
        if c and c[0] == b"ZRANDMEMBER" and getattr(c, "check", None) is None:
            out[i] = _with_check(c, _structural)
    out.append((b"CONFIG", b"SET", b"zset-max-listpack-entries", b"128"))
    out.append((b"CONFIG", b"SET", b"zset-max-listpack-value", b"64"))
    return out
