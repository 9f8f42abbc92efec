"""Helpers for the RDB / DUMP tests: a random dataset of every type and
encoding, and a full snapshot of a server's contents for comparison."""
import random

LIB = ("#!lua name=rdblib\n"
       "redis.register_function('rdbfn', function(keys, args) return 42 end)\n")


def _members(rnd, n, kind):
    out = []
    for i in range(n):
        if kind == "int":
            out.append(str(rnd.randint(-10 ** 12, 10 ** 12)))
        elif kind == "long":
            out.append("m%d-" % i + "x" * rnd.randint(65, 300))
        else:
            out.append("m%d-%d" % (i, rnd.randint(0, 10 ** 6)))
    return out


def populate(r, seed=1, dbs=(0, 3), functions=True):
    """Fill the server behind client r with keys of every type and encoding
    (small and large, integers, long values, LZF-compressible strings, plain
    list nodes), some with TTLs, in several databases."""
    rnd = random.Random(seed)
    if functions:
        r.execute_command("FUNCTION", "LOAD", "REPLACE", LIB)
    for db in dbs:
        r.execute_command("SELECT", db)
        p = "d%d:" % db
        # strings: int, embstr, raw, LZF-compressible, incompressible, big
        r.set(p + "int", "12345")
        r.set(p + "neg", "-9223372036854775808")
        r.set(p + "i32", "2147483647")
        r.set(p + "emb", "hello world")
        r.set(p + "raw", "r" * 60)
        r.set(p + "lzf", "abcabcabc" * 500)
        r.set(p + "rnd", bytes(rnd.getrandbits(8) for _ in range(3000)))
        r.set(p + "empty", "")
        r.set(p + "bigstr", "z" * 200000)
        # lists: small, many nodes, plain nodes (elements > 8 KB)
        r.rpush(p + "list", *["a", "1", "-5", "x" * 30])
        r.rpush(p + "biglist", *[str(i) if i % 3 else "e%d" % i for i in range(5000)])
        r.rpush(p + "plainlist", "small", "P" * 20000, "tail", "Q" * 9000)
        # hashes: listpack, hashtable by count, hashtable by value length
        r.hset(p + "hash", mapping={"f1": "v1", "f2": "2", "f3": "-3"})
        r.hset(p + "bighash", mapping={"f%d" % i: "v%d" % i for i in range(600)})
        r.hset(p + "longhash", mapping={"a": "b", "long": "L" * 100})
        # sets: intset, big intset -> hashtable, strings
        r.sadd(p + "iset", *_members(rnd, 20, "int"))
        r.sadd(p + "bigiset", *[str(i) for i in range(1000)])
        r.sadd(p + "sset", *_members(rnd, 30, "str"))
        r.sadd(p + "bigsset", *_members(rnd, 700, "str"))
        # zsets: listpack, skiplist by count, skiplist by member length
        r.zadd(p + "zset", {"a": 1, "b": 2.5, "c": -3, "d": 1e300, "e": float("inf")})
        r.zadd(p + "bigzset", {m: rnd.random() * 1000 for m in _members(rnd, 300, "str")})
        r.zadd(p + "longzset", {m: i for i, m in enumerate(_members(rnd, 5, "long"))})
        # TTLs
        for k in ("int", "emb", "list", "hash", "iset", "zset", "bigzset"):
            r.pexpireat(p + k, 4102444800000 + rnd.randint(0, 10 ** 6))
        r.pexpireat(p + "raw", 4102444800000)
    r.execute_command("SELECT", 0)


def value_of(r, key, typ):
    if typ == "string":
        return r.get(key)
    if typ == "list":
        return r.lrange(key, 0, -1)
    if typ == "hash":
        return sorted(r.hgetall(key).items())
    if typ == "set":
        return sorted(r.smembers(key))
    if typ == "zset":
        return r.zrange(key, 0, -1, withscores=True)
    raise AssertionError("unexpected type %r" % typ)


def snapshot(r, dbs=range(16)):
    """{(db, key): (type, encoding, value, pexpiretime)} for every key, plus
    the function libraries."""
    out = {}
    for db in dbs:
        r.execute_command("SELECT", db)
        for key in r.keys("*"):
            typ = r.type(key)
            typ = typ.decode() if isinstance(typ, bytes) else typ
            enc = r.object("encoding", key)
            out[(db, key)] = (typ, enc, value_of(r, key, typ), r.execute_command("PEXPIRETIME", key))
    r.execute_command("SELECT", 0)
    libs = r.execute_command("FUNCTION", "LIST", "WITHCODE")
    out["functions"] = sorted(str(x) for x in libs)
    return out
