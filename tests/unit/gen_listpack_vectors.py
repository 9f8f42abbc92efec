#!/usr/bin/python3
"""Record listpack / intset blobs from a real redis-server for test_listpack.c
and test_intset.c.

Usage: gen_listpack_vectors.py PORT   (a redis-server 7.0 you started with
--hash-max-listpack-value 3000000 --hash-max-listpack-entries 100000
--rdbcompression no).  Prints C source fragments: full hex for small blobs,
total size plus FNV-1a 64 for the big ones (the test rebuilds those with the
same recipe and compares).  The output was pasted into the unit tests; rerun
only to re-record.
"""
import sys

import redis

r = redis.Redis(port=int(sys.argv[1]))
r.config_set("rdbcompression", "no")
r.config_set("hash-max-listpack-value", "3000000")
r.config_set("hash-max-listpack-entries", "100000")
r.config_set("zset-max-listpack-value", "3000000")


def rdb_len(buf, i):
    b = buf[i]
    t = b >> 6
    if t == 0:
        return b & 0x3F, i + 1
    if t == 1:
        return ((b & 0x3F) << 8) | buf[i + 1], i + 2
    if b == 0x80:
        return int.from_bytes(buf[i + 1:i + 5], "big"), i + 5
    if b == 0x81:
        return int.from_bytes(buf[i + 1:i + 9], "big"), i + 9
    raise ValueError("encoded (compressed/int) string %x" % b)


def rdb_str(buf, i):
    n, i = rdb_len(buf, i)
    return buf[i:i + n], i + n


def blob(key, rdbtype):
    d = r.dump(key)
    assert d[0] == rdbtype, (key, d[0])
    s, _ = rdb_str(d, 1)
    return s


def quicklist_nodes(key):
    d = r.dump(key)
    assert d[0] == 18, d[0]
    n, i = rdb_len(d, 1)
    out = []
    for _ in range(n):
        container, i = rdb_len(d, i)
        s, i = rdb_str(d, i)
        out.append((container, s))
    return out


def fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h ^= x
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def chex(b):
    return '"' + "".join("\\x%02x" % x for x in b) + '"'


r.flushall()
r.hset("h", mapping={"a": "1", "b": "hello"})
print("/* HSET h a 1 b hello */")
print("static const char vecHashSmall[] = %s;" % chex(blob("h", 16)))

INTS = [0, 1, 127, 128, -1, 4095, 4096, -4096, -4097, 32767, 32768, -32768, -32769,
        8388607, 8388608, -8388608, -8388609, 2147483647, 2147483648, -2147483648,
        -2147483649, 9223372036854775807, -9223372036854775808]
r.delete("h")
for k, v in enumerate(INTS):
    r.hset("h", "f%d" % k, str(v))
r.hset("h", mapping={"s1": "007", "s2": "-0", "s3": "+1", "s4": "", "s5": " 1",
                     "s6": "9223372036854775808", "s7": "-9223372036854775809", "s8": "1.5"})
print("/* HSET h f<i> <INTS[i]> ..., then s1 007 s2 -0 s3 +1 s4 '' s5 ' 1' s6 2^63 s7 -2^63-1 s8 1.5 */")
print("static const char vecHashInts[] = %s;" % chex(blob("h", 16)))

print("/* {string length, total bytes, FNV-1a 64} of HSET h f <'x' * length> */")
print("static const struct { size_t len; size_t bytes; uint64_t fnv; } vecHashStr[] = {")
for n in [0, 1, 63, 64, 125, 126, 4095, 4096, 16377, 16378, 16379, 2097145, 2097146, 2097147]:
    r.delete("h")
    r.hset("h", "f", "x" * n)
    b = blob("h", 16)
    print("    {%d, %d, 0x%016xULL}," % (n, len(b), fnv(b)))
print("};")

print("/* {pairs, total bytes, FNV-1a 64} of HSET h <i> <i*3> for i in 0..pairs-1 */")
print("static const struct { long pairs; size_t bytes; uint64_t fnv; } vecHashMany[] = {")
for pairs in [32767, 32768, 40000]:
    r.delete("h")
    pipe = r.pipeline(transaction=False)
    for i in range(pairs):
        pipe.hset("h", str(i), str(i * 3))
    pipe.execute()
    b = blob("h", 16)
    print("    {%d, %d, 0x%016xULL}, /* header count %d */" % (pairs, len(b), fnv(b), b[4] | b[5] << 8))
print("};")

r.zadd("z", {"a": 1.5, "b": 2, "c": -3})
print("/* ZADD z 1.5 a 2 b -3 c */")
print("static const char vecZset[] = %s;" % chex(blob("z", 17)))

r.rpush("l", "a", "b", "1", "-2", "hello world")
nodes = quicklist_nodes("l")
assert len(nodes) == 1 and nodes[0][0] == 2
print("/* RPUSH l a b 1 -2 'hello world' (the one packed quicklist node) */")
print("static const char vecList[] = %s;" % chex(nodes[0][1]))

print("/* intsets */")
for name, members in [("Is16", [1, 2, 3]), ("Is32", [1, 2, 300000]),
                      ("Is64", [5000000000, -1, 2]), ("IsNeg", [-70000, 5, -3])]:
    r.delete("s")
    r.sadd("s", *members)
    print("static const char vec%s[] = %s; /* SADD s %s */" % (
        name, chex(blob("s", 11)), " ".join(map(str, members))))
