"""Plain quicklist nodes (issue 22, list part): an element of at least
DEBUG QUICKLIST-PACKED-THRESHOLD bytes (1 GB by default) lives in a node of
its own, as Redis 7.0 does, and every list command works across packed and
plain nodes.  Each scenario runs on Cairn and redis-server with the same
small threshold and the replies are compared, DUMP payloads included (so
the node layout is Redis's), then each server's DUMP is restored on the
other.  DEBUG LISTPACK / QUICKLIST answer as Redis 7.0 does."""
import random

import pytest

from compare import agree

TH = 100  # bytes


@pytest.fixture
def pair(start_server, start_oracle):
    a = start_server(enable_debug_command="yes").client()
    b = start_oracle(enable_debug_command="yes").client()
    for r in (a, b):
        r.response_callbacks.clear()
        assert r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", TH) == b"OK"
    return a, b


def both(pair, *cmd):
    return agree(*pair, *cmd)


def val(rng, i):
    n = rng.choice([1, 5, TH - 1, TH, TH + 1, 3 * TH, 20])
    return (b"%d-" % i + b"x" * n)[:n] if n > 2 else b"%d" % (i % 10)


def check(pair, key, same_dump=True):
    """The list is the same on both; with same_dump its DUMP bytes (the node
    layout) are too, else each DUMP restores on the other server to the
    same elements (node merges after random edits may differ)."""
    a, b = pair
    items = both(pair, "LRANGE", key, 0, -1)
    both(pair, "LLEN", key)
    if same_dump:
        both(pair, "DUMP", key)
        return
    da, db = a.execute_command("DUMP", key), b.execute_command("DUMP", key)
    if da is None:
        assert db is None
        return
    b.execute_command("RESTORE", "x:" + key, 0, da, "REPLACE")
    a.execute_command("RESTORE", "x:" + key, 0, db, "REPLACE")
    assert b.execute_command("LRANGE", "x:" + key, 0, -1) == items
    assert a.execute_command("LRANGE", "x:" + key, 0, -1) == items


def test_commands_across_plain_and_packed(pair):
    rng = random.Random(25)
    big, small = b"B" * (TH * 2), b"s"
    both(pair, "RPUSH", "l", small, big, small, b"m" * (TH - 1), big, b"t" * TH)
    check(pair, "l")
    both(pair, "LPUSH", "l", big, small)
    both(pair, "LINDEX", "l", 0)
    both(pair, "LINDEX", "l", 2)
    both(pair, "LINDEX", "l", -1)
    both(pair, "LSET", "l", 1, b"z" * (TH + 5))  # small -> plain
    both(pair, "LSET", "l", 0, b"y")  # plain -> small
    both(pair, "LSET", "l", 3, b"w" * (TH * 3))  # plain -> plain
    check(pair, "l")
    both(pair, "LINSERT", "l", "BEFORE", big, b"i" * TH)
    both(pair, "LINSERT", "l", "AFTER", small, b"j" * (TH + 1))
    both(pair, "LINSERT", "l", "AFTER", b"y", b"k")
    check(pair, "l")
    both(pair, "LPOS", "l", big)
    both(pair, "LPOS", "l", big, "RANK", -1)
    both(pair, "LPOS", "l", big, "COUNT", 0)
    both(pair, "LREM", "l", 1, big)
    both(pair, "LREM", "l", -1, small)
    check(pair, "l")
    both(pair, "LTRIM", "l", 1, -2)
    check(pair, "l")
    both(pair, "RPOP", "l")
    both(pair, "LPOP", "l", 2)
    both(pair, "RPUSH", "d", big, small, big)
    both(pair, "LMOVE", "l", "d", "LEFT", "RIGHT")
    both(pair, "RPOPLPUSH", "d", "l")
    both(pair, "LMPOP", 2, "zz", "d", "RIGHT", "COUNT", 2)
    check(pair, "l")
    check(pair, "d")
    both(pair, "SORT", "l", "ALPHA", "LIMIT", 0, 5)
    both(pair, "SORT", "l", "ALPHA", "STORE", "sorted")
    check(pair, "sorted")
    # A random stream of pushes, inserts, sets and removals.
    for i in range(400):
        op = rng.randrange(8)
        if op < 3:
            both(pair, rng.choice(["LPUSH", "RPUSH"]), "r", val(rng, i), val(rng, i + 1))
        elif op == 3:
            both(pair, "LINSERT", "r", rng.choice(["BEFORE", "AFTER"]), val(rng, rng.randrange(i + 1)), val(rng, i))
        elif op == 4:
            both(pair, "LSET", "r", rng.randrange(-5, 5), val(rng, i))
        elif op == 5:
            both(pair, "LREM", "r", rng.randrange(-2, 3), val(rng, rng.randrange(i + 1)))
        elif op == 6:
            both(pair, rng.choice(["LPOP", "RPOP"]), "r")
        else:
            both(pair, "LRANGE", "r", rng.randrange(-10, 10), rng.randrange(-10, 10))
        if i % 50 == 0:
            check(pair, "r", same_dump=False)
    check(pair, "r", same_dump=False)


def test_dump_restores_across_servers(pair):
    a, b = pair
    items = [b"p" * (TH * 2), b"small", b"q" * TH, b"1", b"r" * (TH - 1)]
    for r in (a, b):
        r.execute_command("RPUSH", "l", *items)
    da, db = a.execute_command("DUMP", "l"), b.execute_command("DUMP", "l")
    assert da == db
    a.execute_command("RESTORE", "fromredis", 0, db)
    b.execute_command("RESTORE", "fromcairn", 0, da)
    assert a.execute_command("LRANGE", "fromredis", 0, -1) == items
    assert b.execute_command("LRANGE", "fromcairn", 0, -1) == items


def test_default_threshold_has_no_plain_nodes(pair):
    a, b = pair
    for r in (a, b):
        assert r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", 0) == b"OK"
        r.execute_command("RPUSH", "l", b"x" * 20000, b"y", b"z" * 9000)
    assert a.execute_command("DUMP", "l") == b.execute_command("DUMP", "l")


@pytest.mark.parametrize("arg", ["0", "1", "1k", "1Kb", "1gb", "k", "00012", "4293918720", "4293918721",
                                 "4294967295", "4gb", "1t", "+5", "-1", "1.5", "abc", "",
                                 "18446744073709551616"])
def test_threshold_argument_like_redis(pair, arg):
    both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", arg)


def test_debug_listpack_and_quicklist_replies(pair):
    both(pair, "RPUSH", "l", "a", "b")
    both(pair, "HSET", "h", "a", "b")
    both(pair, "SET", "s", "x")
    for cmd in (["DEBUG", "LISTPACK", "l"], ["DEBUG", "LISTPACK", "h"], ["DEBUG", "LISTPACK", "s"],
                ["DEBUG", "LISTPACK", "nokey"], ["DEBUG", "QUICKLIST", "l"], ["DEBUG", "QUICKLIST", "l", "1"],
                ["DEBUG", "QUICKLIST", "l", "x"], ["DEBUG", "QUICKLIST", "h"], ["DEBUG", "QUICKLIST", "nokey"],
                ["DEBUG", "LISTPACK", "l", "extra"], ["DEBUG", "QUICKLIST-PACKED-THRESHOLD"],
                ["DEBUG", "QUICKLIST", "l", "1", "2"]):
        both(pair, *cmd)
