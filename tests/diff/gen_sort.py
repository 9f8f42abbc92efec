"""Differential stream for SORT and SORT_RO (area "sort").

Sources live under fixed key names, so their types never need modelling:
lists L0 (numbers), L1 (numbers and words, NUL bytes included), L2 (words);
sets S0 (integers: intset), S1 (numbers: hashtable), S2 (words); sorted sets
Z0/Z1 when the server has ZADD.  STORE writes to D0/D1, the list keys or a
weight key, never to a set or sorted set.  Elements come from a small pool
so that BY/GET patterns find weights: strings w_<e> (numbers, words, some
missing, some of the wrong type) and hashes h_<e> with a numeric field "n"
and a word field "s" (listpack, or hashtable once a long value lands).
Patterns include the quirks: nosort and other star-less BY patterns, '#',
"->" with empty or starred fields, NUL bytes ending the pattern scan.
Weights hold no NUL byte: strcoll stops at one, so weights that differ only
after a NUL would tie and make the weight column of a checked reply
ambiguous (NUL weights are covered by tests/integration/test_sort.py).
No value overflows or underflows a double: Redis 7.0 never clears errno
before strtod, so one ERANGE would poison its later numeric SORTs.

Replies are compared byte for byte except where Redis itself is not
deterministic; those commands carry a check (Cmd.check, see diffcore.same):
  - a set read unsorted (BY nosort, no STORE) comes in hash order: the
    reply is compared as a multiset of (element + GETs) groups, or by length
    when LIMIT cuts it;
  - ALPHA with a BY pattern leaves equal weights (missing ones included) in
    the input order, which is hash order for sets and sorted sets, and
    Redis's partial quicksort order for a list cut by LIMIT.  Such commands
    always GET '#' and the BY pattern: the weight column must match exactly
    and, without a cutting LIMIT, the (element, weight) pairs as a multiset.
A mutated copy of such a command (finish()) is always a syntax error, so
losing the check there is harmless.
"""
from generators import OTHER_TYPES, finish

AREA = "sort"
COMMANDS = 20000

NUMS = [b"0", b"1", b"2", b"3", b"10", b"-5", b"1.5", b"2e1", b"007", b" 4", b"-0", b"0x10", b"inf",
        b"-inf", b"1e-300", b"99999999999999999999", b"-2.25", b"+8", b""]
WORDS = [b"a", b"b", b"B", b"apple", b"Apple", b"z", b"a b", b"\xc3\xa9", b"\xff", b"x_1", b"3x", b"nan"]
NUL_WORDS = [b"a\x00b", b"a\x00c", b"7\x00q"]
INTS = [b"0", b"1", b"2", b"3", b"10", b"-5", b"42", b"-9223372036854775808", b"9223372036854775807"]
POOL = NUMS + WORDS + NUL_WORDS + INTS

LISTS = [b"L0", b"L1", b"L2"]
SETS = [b"S0", b"S1", b"S2"]
ZSETS = [b"Z0", b"Z1"]
DESTS = [b"D0", b"D1"]

BY_PATTERNS = [b"w_*", b"w_*", b"h_*->n", b"h_*->n", b"h_*->s", b"h_*->", b"h_*->nofield", b"*", b"x*y",
               b"h_*->n*", b"w_\x00*"]
NOSORT = [b"nosort", b"constant", b"w_\x00*", b""]
GET_PATTERNS = [b"#", b"#", b"w_*", b"h_*->n", b"h_*->s", b"nostar", b"h_*", b"w_*->n", b"#\x00x", b"*",
                b"h_*->", b"L*"]


class Cmd(tuple):
    """A command tuple that carries its own reply check (check(a, b))."""
    check = None


def _with_check(cmd, check):
    c = Cmd(cmd)
    c.check = check
    return c


def _groups(v, width):
    items = v[1]
    return [tuple(items[i:i + width]) for i in range(0, len(items), width)]


def _check_unordered(width, full):
    def check(a, b):
        if a[0] != b[0] or a[0] != b"*" or a[1] is None or b[1] is None:
            return a == b
        if len(a[1]) != len(b[1]):
            return False
        return not full or sorted(_groups(a, width), key=repr) == sorted(_groups(b, width), key=repr)
    return check


def _check_weights(full):
    def check(a, b):
        if a[0] != b[0] or a[0] != b"*" or a[1] is None or b[1] is None:
            return a == b
        if len(a[1]) != len(b[1]) or a[1][1::2] != b[1][1::2]:
            return False
        return not full or sorted(_groups(a, 2), key=repr) == sorted(_groups(b, 2), key=repr)
    return check


# ------------------------------------------------------------ data

def _elem(rng, src):
    if src == b"L0" or src == b"S1" or src == b"Z0":
        return rng.choice(NUMS)
    if src == b"S0":
        return rng.choice(INTS)
    if src == b"L1":
        return rng.choice(POOL)
    if src in (b"L2", b"S2", b"Z1"):
        return rng.choice(WORDS)
    return rng.choice(POOL)


def _weight_value(rng):
    r = rng.random()
    if r < 0.6:
        return rng.choice(NUMS[:-1] + INTS)
    if r < 0.9:
        return rng.choice(WORDS)
    return rng.choice([b"", b"  ", b"-"])


def _fill(rng, zsets):
    cmds = []
    src = rng.choice(LISTS + SETS + (ZSETS if zsets else []))
    k = rng.randint(1, 6)
    if src in LISTS:
        cmds.append((rng.choice([b"RPUSH", b"LPUSH"]), src) + tuple(_elem(rng, src) for _ in range(k)))
        if rng.random() < 0.3:
            cmds.append((b"LTRIM", src, b"0", str(rng.randint(5, 30)).encode()))
    elif src in SETS:
        elems = [_elem(rng, src) for _ in range(k)]
        if src != b"S0":
            elems = [e for e in elems if b"\x00" not in e] or [b"a"]
        cmds.append((b"SADD", src) + tuple(elems))
    else:
        args = []
        for _ in range(k):
            args += [str(rng.randint(-3, 3)).encode(), _elem(rng, src)]
        cmds.append((b"ZADD", src) + tuple(args))
    return cmds


def _weights(rng):
    e = rng.choice(POOL)
    r = rng.random()
    if r < 0.45:
        return [(b"SET", b"w_" + e, _weight_value(rng))]
    if r < 0.8:
        fields = [b"n", _weight_value(rng)] if rng.random() < 0.7 else []
        if rng.random() < 0.6:
            fields += [b"s", rng.choice(WORDS)]
        if rng.random() < 0.05:
            fields += [b"long", b"v" * 80]    # hashtable encoding
        if not fields:
            fields = [b"other", b"1"]
        return [(b"HSET", b"h_" + e) + tuple(fields)]
    if r < 0.9:
        return [(b"DEL", rng.choice([b"w_", b"h_"]) + e)]
    if r < 0.95:
        return [(b"RPUSH", rng.choice([b"w_", b"h_"]) + e, b"1")]   # wrong type: reads as missing
    return [(b"HSET", b"w_" + e, b"n", b"1")]


def _limit(rng):
    r = rng.random()
    if r < 0.5:
        off = rng.randint(0, 8)
        cnt = rng.randint(0, 8)
    elif r < 0.8:
        off = rng.randint(-3, 12)
        cnt = rng.randint(-3, 12)
    else:
        off = rng.choice([-9223372036854775808, 9223372036854775807, 0, -1])
        cnt = rng.choice([-9223372036854775808, 9223372036854775807, 0, -1])
    cutting = not (off <= 0 and (cnt < 0 or cnt >= 10 ** 6))
    return [b"LIMIT", str(off).encode(), str(cnt).encode()], cutting


def _sort(rng, zsets):
    src = rng.choice(LISTS * 2 + SETS + (ZSETS if zsets else []) + [b"missing", b"w_a"])
    is_set = src in SETS
    ro = rng.random() < 0.2
    opts = []
    alpha = rng.random() < 0.45
    desc = rng.random() < 0.4
    by = None
    dontsort = False
    r = rng.random()
    if r < 0.45:
        by = rng.choice(BY_PATTERNS)
        dontsort = b"*" not in by.split(b"\x00")[0]
    elif r < 0.65:
        by = rng.choice(NOSORT)
        dontsort = True
    cutting = False
    if rng.random() < 0.45:
        lim, cutting = _limit(rng)
        opts.append(lim)
    store = not ro and rng.random() < 0.25
    gets = [rng.choice(GET_PATTERNS) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]

    unsorted_set = is_set and dontsort and not store
    alpha_by = alpha and by is not None and not dontsort and (src in SETS or src in ZSETS or cutting)
    check = None
    if alpha_by:
        gets, store = [b"#", by], False
        check = _check_weights(not cutting)
    elif unsorted_set:
        gets = gets or [b"#"]
        check = _check_unordered(max(1, len(gets)), not cutting)

    if alpha:
        opts.append([b"ALPHA"])
    if desc:
        opts.append([b"DESC"] if rng.random() < 0.9 else [b"DESC", b"ASC"])
    elif rng.random() < 0.1:
        opts.append([b"ASC"])
    if by is not None:
        opts.append([b"BY", by])
    if store:
        opts.append([b"STORE", rng.choice(DESTS * 3 + LISTS + [b"w_a"])])
    rng.shuffle(opts)
    # GETs go last so that a mutated copy (one argument dropped) is a syntax error.
    for g in gets:
        opts.append([b"GET", g])
    cmd = (b"SORT_RO" if ro else b"SORT", src) + tuple(x for o in opts for x in o)
    return [_with_check(cmd, check) if check else cmd]


def _misc(rng):
    r = rng.random()
    if r < 0.3:
        return [(b"LRANGE", rng.choice(DESTS + LISTS), b"0", b"-1")]
    if r < 0.45:
        return [(b"TYPE", rng.choice(DESTS + [b"w_a"]))]
    if r < 0.55:
        return [(b"DEL", rng.choice(LISTS + SETS + DESTS))]
    if r < 0.65:
        return [(b"SREM", rng.choice(SETS), rng.choice(POOL))]
    if r < 0.75:
        return [(b"LPOP", rng.choice(LISTS), b"2")]
    if r < 0.85:
        return [(b"OBJECT", b"ENCODING", rng.choice(DESTS + [b"h_a", b"h_1"]))]
    return [(rng.choice([b"SORT", b"SORT_RO"]),) + tuple(
        rng.choice([b"L0", b"LIMIT", b"BY", b"GET", b"STORE", b"1", b"x", b"ALPHA"]) for _ in range(rng.randint(0, 4)))]


def generate(rng, n, now):
    zsets = b"ZADD" in OTHER_TYPES
    cmds = []
    while len(cmds) < n + n // 10:
        r = rng.random()
        if r < 0.2:
            cmds += _fill(rng, zsets)
        elif r < 0.4:
            cmds += _weights(rng)
        elif r < 0.9:
            cmds += _sort(rng, zsets)
        else:
            cmds += _misc(rng)
    return finish(rng, cmds, n)
