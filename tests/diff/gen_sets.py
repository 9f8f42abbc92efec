"""Differential stream for the set commands (area "sets").

The generator keeps a model of every key it touches (a Python set, or the
name of another type), so that it knows the exact contents of each set at
every point of the stream.  The model serves two purposes:

  - replies whose order or choice is random (SMEMBERS / SINTER / SUNION /
    SDIFF / SSCAN order is hash order; SPOP and SRANDMEMBER pick at random)
    are checked against it strictly: the expected set of members for the
    first group; for the random picks the reply type, the exact count,
    distinctness where Redis promises it, and that every member returned is
    a member of the set at that point;
  - SPOP changes the two servers differently, so after a partial SPOP the
    stream re-adds every member the set had (SADD; its reply, the number
    popped, is compared byte for byte) and both servers hold the same set
    again.  Encodings stay comparable: OBJECT ENCODING is compared exactly.

Commands carry their check as an attribute (Cmd, a tuple subclass), which
diffcore.same() uses; every other command is compared exactly.  Commands without a check
(e.g. when a shrunk reproducer drops the model's context) fall back to
order-insensitive normalizers registered here for the set-valued replies.
"""
import fnmatch

import diffcore
import generators

AREA = "sets"
COMMANDS = 20000

KEYS = [b"s0", b"s1", b"s2", b"s3", b"s4"]
STR_KEY = b"str"
LIST_KEY = b"lst"
ALL_KEYS = KEYS + [STR_KEY, LIST_KEY, b"missing"]
EDGE_INTS = [b"0", b"1", b"-1", b"42", b"9223372036854775807", b"-9223372036854775808",
             b"32767", b"32768", b"-32768", b"-32769", b"2147483647", b"2147483648",
             b"-2147483648", b"-2147483649", b"65535"]
NON_INTS = [b"a", b"b", b"c", b"abc", b"007", b"+1", b"-0", b" 1", b"1.5", b"",
            b"9223372036854775808", b"-9223372036854775809", b"x" * 50, b"\x00\xff",
            b"1e3", b"0x10"]


class Cmd(tuple):
    """A command tuple that carries its own reply check (check(a, b))."""
    check = None


def _with_check(cmd, check):
    c = Cmd(cmd)
    c.check = check
    return c


# ------------------------------------------------------------ reply checks

def _members(v, distinct):
    """The bulk items of an array/set reply, or None if it is not one (or,
    when distinct, if an item repeats)."""
    if v[0] not in (b"*", b"~") or v[1] is None:
        return None
    items = []
    for t, x in v[1]:
        if t != b"$" or x is None:
            return None
        items.append(x)
    if distinct and len(set(items)) != len(items):
        return None
    return items


def _check_exact_set(expected):
    """expected: a frozenset of members, or None for an error reply."""
    def check(a, b):
        if expected is None:
            return a == b and a[0] == b"-"
        if a[0] != b[0]:
            return False
        for v in (a, b):
            m = _members(v, True)
            if m is None or set(m) != expected:
                return False
        return True
    return check


def _check_scan(expected):
    def check(a, b):
        if expected is None:
            return a == b and a[0] == b"-"
        for v in (a, b):
            if v[0] != b"*" or len(v[1]) != 2 or v[1][0] != (b"$", b"0"):
                return False
            m = _members(v[1][1], True)
            if m is None or set(m) != expected:
                return False
        return True
    return check


def _check_random(members, count, distinct):
    """SPOP / SRANDMEMBER.  members: the set (frozenset, empty when the key
    is missing) or None when the command must fail (wrong type, bad count):
    then both replies must be the same error.  count None: single reply."""
    def check(a, b):
        if members is None:
            return a == b and a[0] == b"-"
        if a[0] != b[0]:
            return False
        for v in (a, b):
            if count is None:
                if not members:
                    if v[1] is not None:
                        return False
                elif v[0] != b"$" or v[1] not in members:
                    return False
                continue
            m = _members(v, distinct)
            if m is None:
                return False
            want = 0 if not members else (min(count, len(members)) if distinct else count)
            if len(m) != want or not set(m) <= members:
                return False
        return True
    return check


def _sorted_set_reply(v):
    if v[0] in (b"*", b"~") and v[1] is not None:
        return (v[0], sorted(v[1]))
    return v


def _sorted_scan_reply(v):
    if v[0] == b"*" and v[1] and len(v[1]) == 2 and v[1][1][0] == b"*":
        return (b"*", [v[1][0], (b"*", sorted(v[1][1][1]))])
    return v


def _install():
    for name in (b"SMEMBERS", b"SINTER", b"SUNION", b"SDIFF"):
        diffcore.NORMALIZERS.setdefault(name, _sorted_set_reply)
    diffcore.NORMALIZERS.setdefault(b"SSCAN", _sorted_scan_reply)


_install()


# ------------------------------------------------------------------- model

class Model:
    """Key -> set of members (bytes), or "string" / "list"."""

    def __init__(self):
        self.v = {}

    def kind(self, k):
        x = self.v.get(k)
        if x is None:
            return None
        return "set" if isinstance(x, set) else x

    def get(self, k):
        """The set at k (empty when missing), or None when another type."""
        x = self.v.get(k)
        if x is None:
            return set()
        return x if isinstance(x, set) else None

    def put(self, k, s):
        if s:
            self.v[k] = set(s)
        else:
            self.v.pop(k, None)

    def setop(self, op, keys):
        """Result of SINTER/SUNION/SDIFF over keys, or None (wrong type)."""
        sets = [self.get(k) for k in keys]
        if any(s is None for s in sets):
            return None
        if op == "inter":
            r = set(sets[0])
            for s in sets[1:]:
                r &= s
            return r
        if op == "union":
            return set().union(*sets)
        r = set(sets[0])
        for s in sets[1:]:
            r -= s
        return r


# --------------------------------------------------------------- generator

def _member(rng, ints_only=False):
    r = rng.random()
    if r < 0.6 or (ints_only and r < 0.8):
        return str(rng.randint(-10, 40)).encode()
    if r < 0.8 or ints_only:
        return rng.choice(EDGE_INTS)
    return rng.choice(NON_INTS)


def _members_arg(rng, lo=1, hi=5):
    ints_only = rng.random() < 0.6
    return [_member(rng, ints_only) for _ in range(rng.randint(lo, hi))]


def _set_key(rng):
    r = rng.random()
    if r < 0.85:
        return rng.choice(KEYS)
    if r < 0.93:
        return STR_KEY
    if r < 0.97:
        return LIST_KEY
    return b"missing"


def _frozen(s):
    return None if s is None else frozenset(s)


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.m = Model()
        self.out = []

    def emit(self, cmd, check=None):
        self.out.append(_with_check(cmd, check) if check else tuple(cmd))

    # --- writes (model updated) ---

    def sadd(self, k, ms):
        self.emit((b"SADD", k) + tuple(ms))
        s = self.m.get(k)
        if s is not None:
            self.m.put(k, s | set(ms))

    def srem(self, k, ms):
        self.emit((b"SREM", k) + tuple(ms))
        s = self.m.get(k)
        if s is not None:
            self.m.put(k, s - set(ms))

    def smove(self, src, dst, mem):
        self.emit((b"SMOVE", src, dst, mem))
        if self.m.kind(src) is None:
            return
        s, d = self.m.get(src), self.m.get(dst)
        if s is None or d is None or src == dst or mem not in s:
            return
        self.m.put(src, s - {mem})
        self.m.put(dst, (self.m.get(dst) or set()) | {mem})

    def store(self, op, dst, keys):
        name = {"inter": b"SINTERSTORE", "union": b"SUNIONSTORE", "diff": b"SDIFFSTORE"}[op]
        self.emit((name, dst) + tuple(keys))
        r = self.m.setop(op, keys)
        if r is not None:
            self.m.v.pop(dst, None)
            self.m.put(dst, r)

    def big_sadd(self, k):
        n = self.rng.randint(500, 530)
        base = self.rng.choice([0, 1000, -300])
        ms = [str(base + i).encode() for i in self.rng.sample(range(600), n)]
        self.sadd(k, ms)

    def spop(self, k):
        rng = self.rng
        s = self.m.get(k)
        r = rng.random()
        if r < 0.3:
            self.emit((b"SPOP", k), _check_random(_frozen(s), None, True))
        elif r < 0.9:
            n = rng.choice([0, 1, 2, 3, 5, 10, 50, 1000, rng.randint(1, 12)])
            self.emit((b"SPOP", k, str(n).encode()), _check_random(_frozen(s), n, True))
        else:
            bad = rng.choice([b"-1", b"x", b"-9223372036854775808", b"1.5", b""])
            self.emit((b"SPOP", k, bad), _check_random(None, 0, True))
            return
        if not s:
            return
        # Both servers hold the same set again once every member is re-added;
        # skipping the re-add is only safe when SPOP took everything.
        takes_all = r < 0.9 and (r < 0.3 and len(s) == 1 or r >= 0.3 and n >= len(s))
        if takes_all and rng.random() < 0.3:
            self.m.put(k, set())
            return
        orig = list(s)
        rng.shuffle(orig)
        self.emit((b"SADD", k) + tuple(orig))

    # --- reads (checked against the model) ---

    def srandmember(self, k):
        rng = self.rng
        s = _frozen(self.m.get(k))
        r = rng.random()
        if r < 0.2:
            self.emit((b"SRANDMEMBER", k), _check_random(s, None, True))
        elif r < 0.9:
            n = rng.choice([0, 1, 2, 3, 5, 10, 1000, -1, -3, -10, -50, rng.randint(-20, 20)])
            self.emit((b"SRANDMEMBER", k, str(n).encode()),
                      _check_random(s, abs(n), n >= 0))
        else:
            bad = rng.choice([b"x", b"-9223372036854775808", b"1.5", b"-0", b""])
            self.emit((b"SRANDMEMBER", k, bad), _check_random(None, 0, True))

    def setop_read(self, op, keys):
        name = {"inter": b"SINTER", "union": b"SUNION", "diff": b"SDIFF"}[op]
        self.emit((name,) + tuple(keys), _check_exact_set(_frozen(self.m.setop(op, keys))))

    def smembers(self, k):
        self.emit((b"SMEMBERS", k), _check_exact_set(_frozen(self.m.get(k))))

    def sscan(self, k):
        rng = self.rng
        pat = rng.choice([None, None, b"*", b"1*", b"*a*", b"?", b"-*"])
        args = (b"SSCAN", k, b"0")
        if pat is not None:
            args += (b"MATCH", pat)
        args += (b"COUNT", b"100000")
        s = self.m.get(k)
        exp = None
        if s is not None:
            exp = frozenset(x for x in s if pat is None or fnmatch.fnmatchcase(
                x.decode("latin-1"), pat.decode("latin-1")))
        self.emit(args, _check_scan(exp))

    def step(self):
        rng = self.rng
        k = _set_key(rng)
        keys = lambda lo, hi: [_set_key(rng) for _ in range(rng.randint(lo, hi))]  # noqa: E731
        r = rng.randrange(100)
        if r < 18:
            self.sadd(k, _members_arg(rng))
        elif r < 19:
            self.big_sadd(rng.choice(KEYS))
        elif r < 26:
            s = self.m.get(k)
            ms = _members_arg(rng, 1, 3)
            if s and rng.random() < 0.7:
                ms += rng.sample(sorted(s), min(len(s), rng.randint(1, 4)))
            self.srem(k, ms)
        elif r < 31:
            s = self.m.get(k)
            mem = rng.choice(sorted(s)) if s and rng.random() < 0.7 else _member(rng)
            self.smove(k, _set_key(rng), mem)
        elif r < 36:
            self.store(rng.choice(["inter", "union", "diff"]), _set_key(rng), keys(1, 4))
        elif r < 42:
            self.spop(k)
        elif r < 48:
            self.srandmember(k)
        elif r < 55:
            self.smembers(k)
        elif r < 61:
            self.setop_read(rng.choice(["inter", "union", "diff"]), keys(1, 4))
        elif r < 64:
            self.sscan(k)
        elif r < 71:
            self.emit((b"OBJECT", b"ENCODING", k))
        elif r < 74:
            self.emit((b"SCARD", k))
        elif r < 77:
            self.emit((b"SISMEMBER", k, _member(rng)))
        elif r < 80:
            self.emit((b"SMISMEMBER", k) + tuple(_members_arg(rng)))
        elif r < 84:
            ks = keys(1, 4)
            args = [str(len(ks)).encode()] + ks
            if rng.random() < 0.4:
                args += [b"LIMIT", rng.choice([b"0", b"1", b"2", b"5", b"-1", b"x"])]
            if rng.random() < 0.1:
                args[0] = rng.choice([b"0", b"-1", b"x", b"9", b"99999999999999999999"])
            self.emit((b"SINTERCARD",) + tuple(args))
        elif r < 86:
            self.emit((b"DEL", k))
            self.m.v.pop(k, None)
        elif r < 88:
            self.emit((b"SET", STR_KEY, b"v"))
            self.m.v[STR_KEY] = "string"
        elif r < 89:
            if b"LPUSH" in generators.OTHER_TYPES and self.m.kind(LIST_KEY) in (None, "list"):
                self.emit((b"LPUSH", LIST_KEY, b"a"))
                self.m.v[LIST_KEY] = "list"
            else:
                self.emit((b"TYPE", LIST_KEY))
        elif r < 90:
            self.emit((b"CONFIG", b"SET", b"set-max-intset-entries",
                       rng.choice([b"0", b"3", b"8", b"16", b"512", b"512"])))
        elif r < 92:
            self.emit((b"TYPE", k))
        elif r < 95:
            self.emit((b"SSCAN", k, rng.choice([b"x", b"-", b"0"]),
                       rng.choice([b"COUNT", b"TYPE", b"BAD"]),
                       rng.choice([b"0", b"x", b"-1"])))
        else:
            self.emit(rng.choice([
                (b"SADD", k), (b"SREM", k), (b"SPOP",), (b"SPOP", k, b"1", b"2"),
                (b"SRANDMEMBER", k, b"1", b"2"), (b"SMOVE", k, k), (b"SINTERSTORE", k),
                (b"SUNIONSTORE", k), (b"SDIFFSTORE", k), (b"SCARD", k, k), (b"SISMEMBER", k),
                (b"SMEMBERS",), (b"SINTERCARD", b"1"), (b"SSCAN", k), (b"SMISMEMBER", k),
                (b"SINTER",), (b"SUNION",), (b"SDIFF",)]))


def generate(rng, n, now):
    g = Gen(rng)
    g.emit((b"CONFIG", b"SET", b"set-max-intset-entries", b"512"))
    while len(g.out) < n - 1:
        g.step()
    g.out = g.out[:n - 1]
    g.out.append((b"CONFIG", b"SET", b"set-max-intset-entries", b"512"))
    return g.out
