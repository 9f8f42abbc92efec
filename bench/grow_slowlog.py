#!/usr/bin/python3
"""Commands over 1 ms while one big collection grows (issue 42).

Usage: grow_slowlog.py [zset|hash|set ...] [--members N] [--batch B]

For each type, each server (CAIRN_BIN, ORACLE_BIN, and BENCH_BASE_BIN
named BENCH_BASE_NAME when set) starts fresh and one client grows one key
to N members (default 3,000,000) with ZADD / HSET / SADD of B new members
a call (default 100), pipelined 100 calls at a time.  With
slowlog-log-slower-than 1000 the server logs every call over 1 ms; printed
are the count, the five longest (us), and the sizes at which they came
(the slow log is read after every 100 calls, so a size is rounded up to
B x 100 members).  A call of 100 members takes about 0.1-0.3 ms, so an
entry is a stall: the page faults of a new bucket array written in random
order (the reason big arrays are prepared on the lazy-free thread), a big
free, or the VM's own preemption (scattered over the sizes).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Srv and the binaries' names)

import redis  # noqa: E402

BASE_BIN = os.environ.get("BENCH_BASE_BIN", "")
BASE_NAME = os.environ.get("BENCH_BASE_NAME", "base")


def grow(binary, name, kind, members, batch):
    s = bench.Srv(binary, name)
    try:
        r = redis.Redis(port=s.port)
        r.config_set("slowlog-log-slower-than", 1000)
        r.config_set("slowlog-max-len", 100000)
        pipe = r.pipeline(transaction=False)
        where, last, calls = [], 0, 0
        for i in range(0, members, batch):
            ids = range(i, min(i + batch, members))
            if kind == "zset":
                pipe.zadd("k", {"m:%d" % j: j for j in ids})
            elif kind == "hash":
                pipe.hset("k", mapping={"f:%d" % j: j for j in ids})
            else:
                pipe.sadd("k", *["m:%d" % j for j in ids])
            calls += 1
            if calls % 100 == 0 or ids[-1] == members - 1:
                pipe.execute()
                n = r.slowlog_len()
                if n != last:
                    where.append((ids[-1] + 1, n - last))
                    last = n
        durations = sorted(e["duration"] for e in r.slowlog_get(100000))
        return calls, durations, where
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("types", nargs="*", default=["zset", "hash", "set"])
    ap.add_argument("--members", type=int, default=3000000)
    ap.add_argument("--batch", type=int, default=100)
    args = ap.parse_args()
    servers = [(bench.A_BIN, bench.A_NAME), (bench.B_BIN, bench.B_NAME)]
    if BASE_BIN:
        servers.append((BASE_BIN, BASE_NAME))
    print("== one key grown to %d members, %d a call; calls over 1 ms (SLOWLOG)" % (args.members, args.batch))
    for kind in args.types:
        for binary, name in servers:
            calls, d, where = grow(binary, name, kind, args.members, args.batch)
            print("%-5s %-8s calls %7d  over 1 ms %5d  longest us %s" % (kind, name, calls, len(d), d[-5:]))
            print("      at sizes: %s" % " ".join("%d%s" % (m, "x%d" % c if c > 1 else "") for m, c in where))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
