"""Lists split into quicklist nodes where redis-server 7.0.15 splits them
(its estimate of an element's size: length + 8), so DUMP payloads and RDB
files of the same list are the same bytes on both servers."""
import random


def test_list_dumps_match_redis(server, oracle):
    a, b = server.client(), oracle.client()
    rnd = random.Random(18)
    for _ in range(25):
        n = rnd.randint(1, 2500)
        maxl = rnd.choice([5, 20, 70, 300, 5000])
        items = ["".join(rnd.choice("abcdefgh") for _ in range(rnd.randint(0, maxl)))
                 if rnd.random() < 0.8 else str(rnd.randint(-10 ** 9, 10 ** 9)) for _ in range(n)]
        ops = [rnd.random() < 0.5 for _ in range(0, n, 50)]
        for r in (a, b):
            r.delete("L")
            for k, i in enumerate(range(0, n, 50)):
                (r.rpush if ops[k] else r.lpush)("L", *items[i:i + 50])
        assert a.dump("L") == b.dump("L"), (n, maxl)
