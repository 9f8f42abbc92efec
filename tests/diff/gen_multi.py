"""Differential stream for transactions: MULTI / EXEC / DISCARD / WATCH /
UNWATCH mixed with string and key commands on one connection.  On a single
connection WATCH is deterministic: the connection's own writes (and its
FLUSHDB / FLUSHALL / SWAPDB / MOVE / RENAME) are what touch watched keys.

Inside MULTI the stream avoids commands whose replies need normalizing
(TTL, KEYS, RANDOMKEY), since a normalizer cannot see into EXEC's array;
expiry times are far in the future so that nothing expires mid-stream."""
from generators import finish, key, num, other_type_cmd, sval

AREA = "multi"
COMMANDS = 10000


def data_cmd(rng):
    k = key(rng)
    r = rng.randrange(22)
    if r == 0:
        return (b"SET", k, sval(rng))
    if r == 1:
        return (b"GET", k)
    if r == 2:
        return (b"INCR", k)
    if r == 3:
        return (b"INCRBY", k, num(rng))
    if r == 4:
        return (b"DEL",) + tuple(key(rng) for _ in range(rng.randint(1, 3)))
    if r == 5:
        return (b"APPEND", k, sval(rng))
    if r == 6:
        return (b"EXISTS", k, key(rng))
    if r == 7:
        return (b"MSET", k, sval(rng), key(rng), sval(rng))
    if r == 8:
        return (b"GETDEL", k)
    if r == 9:
        return (b"SETNX", k, sval(rng))
    if r == 10:
        return (b"STRLEN", k)
    if r == 11:
        return (b"RENAME", k, key(rng))
    if r == 12:
        return (b"MOVE", k, rng.choice([b"1", b"2"]))
    if r == 13:
        return (b"COPY", k, key(rng)) + ((b"REPLACE",) if rng.random() < 0.5 else ())
    if r == 14:
        return (b"EXPIRE", k, b"100000")
    if r == 15:
        return (b"PERSIST", k)
    if r == 16:
        return (b"TYPE", k)
    if r == 17:
        return (b"SETRANGE", k, str(rng.randint(0, 10)).encode(), sval(rng))
    if r == 18:
        return (b"SETBIT", k, str(rng.randint(0, 20)).encode(), rng.choice([b"0", b"1"]))
    if r == 19:
        return (b"DECR", k)
    if r == 20:
        return other_type_cmd(rng)
    return (b"MGET", k, key(rng))


def rare_cmd(rng):
    r = rng.randrange(8)
    if r == 0:
        return (b"FLUSHDB",)
    if r == 1:
        return (b"FLUSHALL",)
    if r == 2:
        return (b"SWAPDB", b"0", rng.choice([b"0", b"1", b"2"]))
    if r == 3:
        return (b"SELECT", rng.choice([b"0", b"0", b"1"]))
    if r == 4:
        return (b"NOSUCHCMD", key(rng))
    if r == 5:
        return (b"DBSIZE",)
    if r == 6:
        return (b"UNWATCH",)
    return (b"PING",)


def tx_cmd(rng):
    r = rng.random()
    if r < 0.35:
        return (b"WATCH",) + tuple(key(rng) for _ in range(rng.randint(1, 3)))
    if r < 0.45:
        return (b"UNWATCH",)
    if r < 0.55:
        return (b"MULTI",)
    if r < 0.75:
        return (b"EXEC",)
    if r < 0.85:
        return (b"DISCARD",)
    if r < 0.9:
        return (b"EXEC", b"junk")
    if r < 0.95:
        return (b"WATCH",)
    return (b"DISCARD", b"junk")


def block(rng):
    """A transaction, usually well formed, sometimes doomed or left open."""
    out = []
    if rng.random() < 0.6:
        out.append((b"WATCH",) + tuple(key(rng) for _ in range(rng.randint(1, 3))))
        out += [data_cmd(rng) for _ in range(rng.randint(0, 2))]
    out.append((b"MULTI",))
    body = [data_cmd(rng) if rng.random() < 0.85 else rare_cmd(rng) for _ in range(rng.randint(0, 8))]
    out += finish(rng, body, len(body))  # may add arity errors: EXECABORT
    if rng.random() < 0.08:
        out.append(tx_cmd(rng))  # nested MULTI, WATCH inside MULTI, ...
    r = rng.random()
    if r < 0.7:
        out.append((b"EXEC",))
    elif r < 0.9:
        out.append((b"DISCARD",))
    return out


def generate(rng, n, now):
    cmds = [(b"SELECT", b"0")]
    while len(cmds) < n:
        r = rng.random()
        if r < 0.45:
            cmds += block(rng)
        elif r < 0.8:
            cmds.append(data_cmd(rng))
        elif r < 0.9:
            cmds.append(tx_cmd(rng))
        else:
            cmds.append(rare_cmd(rng))
    return cmds[:n]
