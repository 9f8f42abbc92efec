"""Differential stream for the hash commands (area "hashes").

A small key and field space, values around the 64-byte listpack limit,
occasional DEL and CONFIG SET of the listpack thresholds, so hashes keep
crossing between the listpack and hashtable encodings (OBJECT ENCODING is
compared exactly).

Replies that are legitimately nondeterministic:
  - HKEYS / HVALS / HGETALL: hashtable order differs between servers, so
    they are compared as sorted lists (HGETALL as sorted field/value pairs);
  - HSCAN: the stream only uses `HSCAN key 0 COUNT 1000 ...`, which answers
    the whole (small) hash with cursor 0 on both servers, compared as sorted
    pairs; full iterations with small COUNTs run through the pseudo-command
    (b"@HSCANALL", key, *options), which loops on the cursor and yields the
    sorted set of pairs;
  - HRANDFIELD: compared by shape, count and distinctness (positive count).
    Membership: every HRANDFIELD is followed by an HGETALL of the same key
    whose check verifies that each field (and value) HRANDFIELD returned on
    either server is in the hash.
Commands carry their check as an attribute (Cmd, a tuple subclass, as in
gen_sets), which diffcore.same() honours; @HSCANALL is registered as a
diffcore pseudo-command.
"""
import diffcore
import generators
from generators import finish

AREA = "hashes"
COMMANDS = 20000

FIELDS = [b"f%d" % i for i in range(8)] + [b"1", b"-5", b"123", b""]
LONG_FIELD = b"F" * 65
FLOATS = [b"1.5", b"-0.25", b"3e2", b"0.1", b"-1e10", b"5", b"10.5e-3", b"2.5", b"-7", b"0.3",
          b"1e70", b"-1e60"]
BAD_FLOATS = [b"abc", b"", b"nan", b"inf", b"-inf", b" 1", b"1e5000", b"0x"]
KEYS = [b"h0", b"h1", b"h2", b"h3"]
PATTERNS = [b"f*", b"*1*", b"f[0-3]", b"?", b"*", b"nomatch", b"-*"]


class Cmd(tuple):
    """A command tuple that carries its own reply check (check(a, b))."""
    check = None


def _with_check(cmd, check):
    c = Cmd(cmd)
    c.check = check
    return c


# ------------------------------------------------------------ reply checks

def _bulks(items):
    out = []
    for t, x in items:
        if t != b"$" or x is None:
            return None
        out.append(x)
    return out


def _pairs_of(v):
    """Sorted (field, value) pairs of a flat array / map reply, or None."""
    if v[0] not in (b"*", b"%") or v[1] is None:
        return None
    flat = _bulks(v[1])
    if flat is None or len(flat) % 2:
        return None
    return sorted(zip(flat[0::2], flat[1::2]))


def _norm_sorted(v):
    if v[0] == b"*" and v[1] is not None:
        return (b"*", sorted(v[1]))
    return v


def _norm_pairs(v):
    p = _pairs_of(v)
    return (v[0], p) if p is not None else v


def _norm_scan(v):
    if v[0] == b"*" and v[1] and len(v[1]) == 2 and v[1][1][0] == b"*":
        return (b"*", [v[1][0], _norm_pairs(v[1][1])])
    return v


# HRANDFIELD replies waiting for the HGETALL that follows them:
# token -> list of (field, value-or-None) pairs seen on either server.
_PENDING = {}


def _rand_pairs(v, count, withvalues):
    """(field, value|None) list of an HRANDFIELD reply, or None if malformed."""
    if count is None:
        if v[0] != b"$":
            return None
        return [] if v[1] is None else [(v[1], None)]
    if v[0] != b"*" or v[1] is None:
        return None
    items = v[1]
    if withvalues:
        if items and items[0][0] == b"*":          # RESP3 nested pairs
            flat = []
            for it in items:
                if it[0] != b"*" or len(it[1]) != 2:
                    return None
                flat += it[1]
            items = flat
        flat = _bulks(items)
        if flat is None or len(flat) % 2:
            return None
        return list(zip(flat[0::2], flat[1::2]))
    flat = _bulks(items)
    return None if flat is None else [(f, None) for f in flat]


def _check_hrandfield(token, count, withvalues):
    def check(a, b):
        if a[0] == b"-" or b[0] == b"-":
            return a == b
        pa, pb = _rand_pairs(a, count, withvalues), _rand_pairs(b, count, withvalues)
        if pa is None or pb is None or len(pa) != len(pb):
            return False
        if count is not None and count > 0 and len({f for f, _ in pa}) != len(pa):
            return False
        _PENDING.clear()
        _PENDING[token] = pa + pb
        return True
    return check


def _check_hgetall(token):
    def check(a, b):
        if _norm_pairs(a) != _norm_pairs(b):
            return False
        seen = _PENDING.pop(token, None)
        if seen is None:
            return True          # no HRANDFIELD just before (shrunk stream)
        content = dict(_pairs_of(b) or [])
        return all(f in content and (v is None or content[f] == v) for f, v in seen)
    return check


# --------------------------------------------------------- runner hooks

def _hscan_all(conn, args):
    if not args:
        return conn.call(b"HSCAN")
    k, opts = args[0], args[1:]
    cursor, seen = b"0", set()
    for _ in range(100000):
        r = conn.call(b"HSCAN", k, cursor, *opts)
        if r[0] != b"*":
            return r
        cursor = r[1][0][1]
        p = _pairs_of(r[1][1])
        if p is None:
            return (b"-", b"malformed HSCAN reply")
        seen.update(p)
        if cursor == b"0":
            return (b"*", [(b"$", x) for f, v in sorted(seen) for x in (f, v)])
    return (b"-", b"HSCAN did not terminate")


def _install():
    diffcore.PSEUDO[b"@HSCANALL"] = _hscan_all
    for name in (b"HKEYS", b"HVALS"):
        diffcore.NORMALIZERS.setdefault(name, _norm_sorted)
    diffcore.NORMALIZERS.setdefault(b"HGETALL", _norm_pairs)
    diffcore.NORMALIZERS.setdefault(b"HSCAN", _norm_scan)


_install()


# ---------------------------------------------------------------- stream

def field(rng):
    r = rng.random()
    if r < 0.01:
        return LONG_FIELD
    return rng.choice(FIELDS)


def hval(rng):
    r = rng.random()
    if r < 0.12:
        return b"v" * rng.randint(58, 66)      # around hash-max-listpack-value
    if r < 0.45:
        return generators.num(rng, -100, 100)
    if r < 0.55:
        return rng.choice(generators.EDGE_INTS)
    if r < 0.65:
        return rng.choice(FLOATS)
    return generators.sval(rng)


def _incr_arg(rng):
    r = rng.random()
    if r < 0.1:
        return rng.choice(generators.BAD_INTS)
    if r < 0.2:
        return rng.choice(generators.EDGE_INTS)
    return generators.num(rng, -50, 50)


def _float_arg(rng):
    r = rng.random()
    if r < 0.1:
        return rng.choice(BAD_FLOATS)
    if r < 0.5:
        return rng.choice(FLOATS)
    return generators.num(rng, -20, 20)


def _rand_count(rng):
    return rng.choice([b"0", b"1", b"2", b"3", b"5", b"10", b"100", b"-1", b"-3", b"-10", b"-50",
                       b"x", b"1.5", b"-9223372036854775808", b"9223372036854775807"])


def _pairs_args(rng, n):
    out = []
    for _ in range(n):
        out += [field(rng), hval(rng)]
    return out


def _one(rng, k):
    """One generated command (or a short list of them) on key k."""
    r = rng.randrange(100)
    if r < 22:
        return [(b"HSET", k, *_pairs_args(rng, rng.randint(1, 4)))]
    if r < 25:
        return [(b"HMSET", k, *_pairs_args(rng, rng.randint(1, 3)))]
    if r < 29:
        return [(b"HSETNX", k, field(rng), hval(rng))]
    if r < 36:
        return [(b"HGET", k, field(rng))]
    if r < 39:
        return [(b"HMGET", k, *[field(rng) for _ in range(rng.randint(1, 4))])]
    if r < 47:
        return [(b"HDEL", k, *[field(rng) for _ in range(rng.randint(1, 3))])]
    if r < 50:
        return [(b"HLEN", k)]
    if r < 53:
        return [(b"HSTRLEN", k, field(rng))]
    if r < 56:
        return [(b"HEXISTS", k, field(rng))]
    if r < 61:
        return [(b"HINCRBY", k, field(rng), _incr_arg(rng))]
    if r < 66:
        return [(b"HINCRBYFLOAT", k, field(rng), _float_arg(rng))]
    if r < 69:
        return [(rng.choice([b"HKEYS", b"HVALS", b"HGETALL"]), k)]
    if r < 73:
        opts = [b"COUNT", b"1000"]
        if rng.random() < 0.5:
            opts = [b"MATCH", rng.choice(PATTERNS)] + opts
        return [(b"HSCAN", k, b"0", *opts)]
    if r < 76:
        opts = []
        if rng.random() < 0.5:
            opts += [b"COUNT", rng.choice([b"1", b"2", b"5", b"20"])]
        if rng.random() < 0.4:
            opts += [b"MATCH", rng.choice(PATTERNS)]
        return [(b"@HSCANALL", k, *opts)]
    if r < 78:
        bad = rng.choice([[b"x"], [b"0", b"COUNT", b"0"], [b"0", b"COUNT", b"-1"], [b"0", b"MATCH"],
                          [b"0", b"TYPE", b"hash"], [b" 1", b"COUNT", b"1000"], [b"0", b"foo", b"bar"]])
        return [(b"HSCAN", k, *bad)]
    if r < 86:
        if rng.random() < 0.2:
            return [(b"HRANDFIELD", k), (b"HGETALL", k)]
        if rng.random() < 0.05:
            # Out of range only WITHVALUES (without it Redis would build a
            # reply of 4.6e18 elements).
            return [(b"HRANDFIELD", k, b"-4611686018427387904", b"WITHVALUES")]
        cmd = (b"HRANDFIELD", k, _rand_count(rng)) + ((b"WITHVALUES",) if rng.random() < 0.4 else ())
        return [cmd, (b"HGETALL", k)]
    if r < 90:
        return [(b"OBJECT", b"ENCODING", k)]
    if r < 95:
        return [(b"DEL", k)]
    if r < 96:
        return [(b"CONFIG", b"SET", rng.choice([b"hash-max-listpack-entries", b"hash-max-ziplist-entries"]),
                 rng.choice([b"0", b"4", b"8", b"16", b"16", b"128", b"512", b"512"]))]
    if r < 97:
        return [(b"CONFIG", b"SET", b"hash-max-listpack-value", rng.choice([b"0", b"10", b"64", b"64", b"64"]))]
    if r < 99 or rng.random() < 0.5:
        return [(rng.choice([b"TYPE", b"EXISTS"]), k)]
    return [(b"SET", k, b"str")]


def key(rng):
    """Mostly hash keys of this area; sometimes the shared keys that other
    areas and finish() fill with strings, lists and sets (WRONGTYPE)."""
    return rng.choice(KEYS) if rng.random() < 0.85 else generators.key(rng)


def _small_count_hscan(c):
    """True for an HSCAN that parses and would stop before the end of a
    hashtable (its cursor is then hash-seed dependent)."""
    if c[0] != b"HSCAN" or len(c) < 3 or (len(c) - 3) % 2:
        return False
    count = 10
    for j in range(3, len(c), 2):
        opt = c[j].lower()
        if opt == b"count":
            try:
                count = int(c[j + 1])
            except ValueError:
                return False
        elif opt != b"match":
            return False
    return 1 <= count < 1000


def _attach_checks(cmds):
    """Give every HRANDFIELD (as it stands after finish(), which may have
    mutated it) its shape check, and the HGETALL right after it the matching
    membership check."""
    out = list(cmds)
    for i, c in enumerate(out):
        if _small_count_hscan(c):         # finish() made a partial scan
            out[i] = tuple(c) + (b"COUNT", b"1000")
            continue
        if c[0] != b"HRANDFIELD" or len(c) < 2 or len(c) > 4:
            continue
        if len(c) == 3 and c[2] == b"-4611686018427387904":
            # finish() dropped WITHVALUES: Redis would build a reply of
            # 4.6e18 elements.  Keep an out-of-range count instead.
            c = out[i] = (c[0], c[1], b"-9223372036854775808")
        if len(c) == 4 and c[3].upper() != b"WITHVALUES":
            continue                      # a syntax error: compared exactly
        count = None
        if len(c) >= 3:
            try:
                count = int(c[2])
            except ValueError:
                continue                  # an error reply: compared exactly
        out[i] = _with_check(c, _check_hrandfield(i, count, len(c) == 4))
        nxt = out[i + 1] if i + 1 < len(out) else None
        if nxt is not None and tuple(nxt) == (b"HGETALL", c[1]):
            out[i + 1] = _with_check(nxt, _check_hgetall(i))
    return out


def generate(rng, n, now):
    cmds = [(b"CONFIG", b"SET", b"hash-max-listpack-entries", b"16"),
            (b"CONFIG", b"SET", b"hash-max-listpack-value", b"64")]
    while len(cmds) < n:
        cmds.extend(_one(rng, key(rng)))
    out = _attach_checks(finish(rng, cmds, n))
    out += [(b"CONFIG", b"SET", b"hash-max-listpack-entries", b"512"),
            (b"CONFIG", b"SET", b"hash-max-listpack-value", b"64")]
    return out
