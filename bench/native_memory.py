#!/usr/bin/env python3
"""Memory of a capped sorted set against a plain one (issue 39).

A fresh Cairn gets ZADD capped MAXLEN N score member ... from N + N/5
adds (batches of 1000 pairs, scores a permutation of 0 .. 1.2N - 1, so
evictions hit members from all over the insertion order); another fresh
Cairn gets a plain ZADD of the N members that survived, with the same
scores.  Each figure is INFO used_memory after minus before, and
MEMORY USAGE of the key; both sets are checked equal (ZCARD, the lowest
and highest members) first.

Usage: python3 bench/native_memory.py [N]   (CAIRN_BIN as bench/run.sh;
N defaults to 1000000)
"""
import os
import sys

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Srv: a fresh server on a free port)


def used_memory(r):
    return int(r.info("memory")["used_memory"])


def load(n, capped):
    total = n + n // 5
    step = 7919  # prime, not dividing 1.2N for the N used here: a permutation
    assert total % step
    srv = bench.Srv(bench.A_BIN, "cairn")
    try:
        r = redis.Redis(port=srv.port)
        before = used_memory(r)
        survivors = total - n  # scores below this are evicted (MAXLEN keeps the highest)
        pipe = r.pipeline(transaction=False)
        batch = []
        for i in range(total):
            score = (i * step) % total
            if capped or score >= survivors:
                batch += [score, "member:%d" % i]
            if len(batch) == 2000 or (i == total - 1 and batch):
                if capped:
                    pipe.execute_command("ZADD", "z", "MAXLEN", n, *batch)
                else:
                    pipe.execute_command("ZADD", "z", *batch)
                batch = []
                if len(pipe) >= 50:
                    pipe.execute()
        pipe.execute()
        after = used_memory(r)
        card = r.zcard("z")
        ends = r.zrange("z", 0, 0, withscores=True) + r.zrange("z", -1, -1, withscores=True)
        usage = r.memory_usage("z", samples=0)
        return after - before, usage, card, ends
    finally:
        srv.stop()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    capped = load(n, True)
    plain = load(n, False)
    assert capped[2] == plain[2] == n and capped[3] == plain[3], (capped[2:], plain[2:])
    print("%d members: used_memory delta capped %d (%.1f B/member), plain %d (%.1f B/member), "
          "ratio %.3f; MEMORY USAGE capped %d, plain %d" % (
              n, capped[0], capped[0] / n, plain[0], plain[0] / n, capped[0] / plain[0],
              capped[1], plain[1]))


if __name__ == "__main__":
    main()
