"""Differential stream for the ACL (issue 23): random users with random
rules, then random commands run as those users (AUTH switches the one
connection between them), every reply compared, allowed or NOPERM.

Users u0..u3 get random key patterns (~, %R~, %W~, allkeys, selectors),
channel patterns, command and category rules, passwords and on/off; the
stream then mixes data commands with key arguments of every access kind
(read, write, insert, delete, movable keys, SORT BY/GET, EVAL), PUBLISH /
SPUBLISH, subcommands and first args (CONFIG GET, SELECT 0), MULTI/EXEC
with the rules changed inside the transaction, ACL SETUSER changes, AUTH
(right and wrong passwords, disabled users) and ACL GETUSER / LIST / DRYRUN
/ LOG / WHOAMI.

Normalised: ACL LIST / GETUSER compare single-command rules as a set
(redis-server prints them in its hash order) without the commands Cairn
does not have; ACL LOG masks times and connection fields.  The default
user is never changed, so the runner's fresh connections stay admin."""
from diffcore import PSEUDO

AREA = "acl"
COMMANDS = 20000

USERS = [b"u0", b"u1", b"u2", b"u3"]
PASSWORDS = [b"pw0", b"pw1", b"pw2", b"pw3"]
# Keys of 8 bytes or more and the patterns after them exercise the check's
# compiled shapes: literal prefixes of up to 8 bytes (one masked compare),
# longer ones, an exact key of 8 bytes, a suffix.
KEYS = [b"a:1", b"a:2", b"b:1", b"b:2", b"c:1", b"c:x", b"k1", b"kk", b"z", b"user:1000:profile", b"user:1000",
        b"session:abcdef", b"sessionx", b"cache:item:1:v", b"cache:it"]
CHANNELS = [b"ch1", b"ch2", b"news", b"news.x", b"other"]
KEY_RULES = [b"~a:*", b"%R~b:*", b"%W~c:*", b"~k?", b"%RW~z", b"allkeys", b"resetkeys", b"~*", b"%R~*",
             b"%W~a:1", b"~[ab]:1", b"~user:*", b"%R~user:1000*", b"%W~session:*", b"~*:profile",
             b"~cache:item:*", b"~cache:it", b"~session*", b"%RW~sessionx"]
CHANNEL_RULES = [b"&ch*", b"&news", b"&news.*", b"allchannels", b"resetchannels", b"&other"]
CATEGORIES = [b"string", b"list", b"hash", b"set", b"sortedset", b"bitmap", b"hyperloglog", b"geo",
              b"pubsub", b"transaction", b"keyspace", b"read", b"write", b"fast", b"connection"]
COMMAND_RULES = [b"+get", b"-get", b"+set", b"-set", b"+mget", b"+mset", b"+copy", b"+del", b"+publish",
                 b"+spublish", b"+eval", b"+sort", b"+sort_ro", b"+config|get", b"+select|0", b"-select",
                 b"+client|getname", b"+acl|whoami", b"+acl|getuser", b"+lpush", b"-lpush", b"+exists",
                 b"+zunionstore", b"+multi", b"+exec", b"+acl|setuser", b"+acl", b"-acl|deluser",
                 b"+lmove", b"+rename", b"+object|encoding", b"+incr", b"+append", b"+type", b"+ping"]


def key(rng):
    return rng.choice(KEYS)


def rule(rng):
    r = rng.random()
    if r < 0.3:
        return rng.choice(KEY_RULES)
    if r < 0.45:
        return rng.choice(CHANNEL_RULES)
    if r < 0.7:
        return rng.choice(COMMAND_RULES)
    if r < 0.85:
        return rng.choice([b"+@", b"-@"]) + rng.choice(CATEGORIES)
    if r < 0.9:
        return rng.choice([b"+@all", b"allcommands", b"nocommands", b"-@all"])
    if r < 0.95:
        inner = b" ".join(rng.choice(KEY_RULES[:6] + COMMAND_RULES[:12] + CHANNEL_RULES[:3])
                          for _ in range(rng.randint(1, 3)))
        return b"(" + inner + b")"
    return rng.choice([b"clearselectors", b"on", b"off", b"bogus", b"+nosuch", b"%X~q"])


def setuser(rng, i, fresh=False):
    args = [b"ACL", b"SETUSER", USERS[i]]
    if fresh:
        args += [b"reset", b"on", b">" + PASSWORDS[i]]
    args += [rule(rng) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.05:
        args.append(b"<" + PASSWORDS[i])
    return tuple(args)


def data_cmd(rng):
    k, k2 = key(rng), key(rng)
    r = rng.randrange(34)
    return [
        (b"GET", k), (b"SET", k, b"v"), (b"APPEND", k, b"x"), (b"INCR", k), (b"DEL", k, k2),
        (b"EXISTS", k, k2), (b"MGET", k, k2), (b"MSET", k, b"1", k2, b"2"), (b"COPY", k, k2, b"REPLACE"),
        (b"RENAME", k, k2), (b"LPUSH", k, b"e"), (b"LRANGE", k, b"0", b"-1"),
        (b"LMOVE", k, k2, b"LEFT", b"RIGHT"), (b"SADD", k, b"m"), (b"SINTERSTORE", k, k2),
        (b"ZADD", k, b"1", b"m"), (b"ZUNIONSTORE", k, b"2", k2, key(rng)), (b"HSET", k, b"f", b"v"),
        (b"TYPE", k), (b"OBJECT", b"FREQ", k), (b"PUBLISH", rng.choice(CHANNELS), b"m"),
        (b"SPUBLISH", rng.choice(CHANNELS), b"m"), (b"EVAL", b"return redis.pcall('get', KEYS[1])", b"1", k),
        (b"EVAL", b"return redis.pcall('set', ARGV[1], 'v')", b"0", k),
        (b"EVAL", b"return redis.pcall('publish', ARGV[1], 'm')", b"0", rng.choice(CHANNELS)),
        (b"SORT", k, b"BY", b"nosort"), (b"SORT", k, b"BY", b"w_*"), (b"SORT_RO", k, b"GET", b"#"),
        (b"SORT", k, b"STORE", k2), (b"CONFIG", b"GET", b"maxmemory"), (b"SELECT", rng.choice([b"0", b"1"])),
        (b"CLIENT", b"GETNAME"), (b"ACL", b"WHOAMI"), (b"PING",),
    ][r]


def auth_cmd(rng):
    r = rng.random()
    if r < 0.25:
        return (b"AUTH", b"default", b"any")
    i = rng.randrange(len(USERS))
    if r < 0.85:
        return (b"AUTH", USERS[i], PASSWORDS[i])
    if r < 0.95:
        return (b"AUTH", USERS[i], b"wrong")
    return (b"AUTH", b"nobody", b"x")


def inspect_cmd(rng):
    i = rng.randrange(len(USERS))
    r = rng.randrange(6)
    if r == 0:
        return AclCmd((b"ACL", b"GETUSER", USERS[i]))
    if r == 1:
        return AclCmd((b"ACL", b"LIST"))
    if r == 2:
        return (b"ACL", b"DRYRUN", USERS[i]) + data_cmd(rng)
    if r == 3:
        return AclCmd((b"ACL", b"LOG", b"5"))
    if r == 4:
        return (b"ACL", b"LOG", b"RESET")
    return (b"ACL", b"USERS")


def generate(rng, n, now):
    cmds = [(b"@ACLNAMES",), (b"AUTH", b"default", b"x"), (b"ACL", b"LOG", b"RESET"), (b"ACL", b"DELUSER") + tuple(USERS)]
    for i in range(len(USERS)):
        cmds.append(setuser(rng, i, fresh=True))
    while len(cmds) < n:
        r = rng.random()
        if r < 0.6:
            cmds.append(data_cmd(rng))
        elif r < 0.72:
            cmds.append(auth_cmd(rng))
        elif r < 0.8:
            # Admin change: back to default (or as whoever is current).
            if rng.random() < 0.7:
                cmds.append((b"AUTH", b"default", b"x"))
            cmds.append(setuser(rng, rng.randrange(len(USERS)), fresh=rng.random() < 0.2))
        elif r < 0.9:
            cmds.append(inspect_cmd(rng))
        else:
            cmds.append((b"MULTI",))
            for _ in range(rng.randint(1, 4)):
                if rng.random() < 0.2:
                    cmds.append(setuser(rng, rng.randrange(len(USERS))))
                else:
                    cmds.append(data_cmd(rng))
            cmds.append(rng.choice([(b"EXEC",), (b"EXEC",), (b"DISCARD",)]))
    return cmds[:n]


# ----------------------------------------------------------- comparison

# ACL LIST / GETUSER print rules that redis-server chooses from its own
# command table (the categories that fit best, then single commands in hash
# order), so with different command tables the texts differ for the same
# permissions.  They are compared by meaning: the stream starts with
# @ACLNAMES, which reads COMMAND INFO on each connection; a rule text is
# then expanded into the set of commands it allows, among the commands both
# servers have, plus its first-arg rules and whether it starts from +@all.
_TABLES = []
_CATS = {}      # fullname -> set of categories (common commands only)
_SUBS = {}      # parent -> [sub fullnames]


def _info_entries(conn):
    r = conn.call(b"COMMAND", b"INFO")
    out = {}

    def walk(e):
        f = e[1]
        name = f[0][1].lower()
        cats = {c[1][1:].lower() for c in (f[6][1] or [])}
        subs = [walk(x) for x in (f[9][1] or [])] if len(f) > 9 else []
        out[name] = (cats, subs)
        return name

    for e in r[1]:
        walk(e)
    return out


def _names(conn, args):
    _TABLES.append(_info_entries(conn))
    if len(_TABLES) >= 2:
        a, b = _TABLES[-2], _TABLES[-1]
        _CATS.clear()
        _SUBS.clear()
        for name in set(a) & set(b):
            _CATS[name] = a[name][0]
            subs = [x for x in a[name][1] if x in b]
            if subs:
                _SUBS[name] = subs
    return (b"+", b"OK")


PSEUDO[b"@ACLNAMES"] = _names


def _set(on, name, value, firsts=None):
    if name not in _CATS:
        return
    if firsts is not None:
        firsts.difference_update([f for f in firsts if f.startswith(name + "|")])
    (on.add if value else on.discard)(name)
    for sub in _SUBS.get(name, []):
        (on.add if value else on.discard)(sub)


def _norm_rules(text):
    """(starts with +@all, allowed commands, first-arg rules)."""
    toks = text.decode("latin-1").split(" ")
    on, firsts, future = set(), set(), False
    for t in toks:
        low = t.lower()
        if low in ("+@all", "-@all"):
            future = low == "+@all"
            on = set(_CATS) if future else set()
            firsts = set()
        elif low.startswith(("+@", "-@")):
            cat = low[2:]
            for name, cats in _CATS.items():
                if cat in cats:
                    _set(on, name, low[0] == "+", firsts)
        elif low[:1] in ("+", "-"):
            name = low[1:]
            if name in _CATS:
                _set(on, name, low[0] == "+", firsts)
            elif "|" in name and name.split("|")[0] in _CATS and name.split("|")[0] not in _SUBS:
                firsts.add(name)
    return (future, sorted(on), sorted(firsts))


def _norm_line(text):
    groups, depth = [[]], 0
    for tok in text.split(b" "):
        if tok.startswith(b"(") and not depth:
            depth = 1
            tok = tok[1:]
            groups.append([])
        closing = depth and tok.endswith(b")")
        if closing:
            tok = tok[:-1]
            depth = 0
        groups[-1].append(tok)
    return [_norm_rules(b" ".join(g)) for g in groups]


def _plain(v):
    """diffcore's (type, value) reply as Python values."""
    t, x = v
    if t in (b"*", b"~", b">"):
        return None if x is None else [_plain(e) for e in x]
    if t == b"%":
        return [(_plain(a), _plain(b)) for a, b in x]
    return (t, x) if t in (b"-",) else x


def _pairs(lst):
    return list(zip(lst[0::2], lst[1::2]))


VOLATILE = {b"id", b"addr", b"laddr", b"fd", b"age", b"idle", b"qbuf", b"qbuf-free", b"argv-mem",
            b"multi-mem", b"rbs", b"rbp", b"obl", b"oll", b"omem", b"tot-mem", b"events"}


def _norm_acl(cmd, reply):
    v = _plain(reply)
    if not isinstance(v, list):
        return v
    sub = cmd[1].upper()
    if sub == b"LIST":
        return [_norm_line(x) for x in v]
    if sub == b"GETUSER":
        out = []
        for k, x in _pairs(v):
            if k == b"commands":
                x = _norm_rules(x)
            elif k == b"selectors":
                x = [[(a, _norm_rules(b) if a == b"commands" else b) for a, b in _pairs(s)] for s in x]
            out.append((k, x))
        return out
    if sub == b"LOG":
        out = []
        for e in v:
            d = []
            for k, x in _pairs(e):
                if k == b"age-seconds":
                    x = b"*"
                elif k == b"client-info":
                    x = b" ".join(f.split(b"=")[0] + b"=*" if f.split(b"=")[0] in VOLATILE else f
                                  for f in x.split(b" "))
                d.append((k, x))
            out.append(d)
        return out
    return v


class AclCmd(tuple):
    """A command whose replies compare after ACL normalisation."""

    def check(self, a, b):
        return _norm_acl(self, a) == _norm_acl(self, b)
