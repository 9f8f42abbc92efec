"""Small lists as bare listpacks (issue 25): a list that fits one node of
list-max-listpack-size is kept without the quicklist header and node, goes
to a quicklist past that and back below half of it (Redis 7.2's rule) --
while everything a client sees is Redis 7.0.15's: OBJECT ENCODING and
DEBUG OBJECT say quicklist, DUMP writes a one-node quicklist (the same
bytes as redis-server), RESTORE and DEBUG RELOAD bring lists back."""
import pytest

from compare import agree


@pytest.fixture
def pair(start_server, start_oracle):
    a = start_server(enable_debug_command="yes").client()
    b = start_oracle(enable_debug_command="yes").client()
    for r in (a, b):
        r.response_callbacks.clear()
    return a, b


def both(pair, *cmd):
    return agree(*pair, *cmd)


def debug_encoding(r, key):
    return [f for f in r.execute_command("DEBUG", "OBJECT", key).split() if f.startswith(b"encoding:")][0]


@pytest.mark.parametrize("fill", ["-2", "-1", "5", "1"])
def test_small_lists_look_like_redis(pair, fill):
    both(pair, "CONFIG", "SET", "list-max-listpack-size", fill)
    for n in range(1, 8):
        key = "l%d" % n
        both(pair, "RPUSH", key, *[("v%d" % i) * (1 + i % 3) for i in range(n)])
        both(pair, "OBJECT", "ENCODING", key)
        both(pair, "LRANGE", key, 0, -1)
        if fill != "1" or n == 1:
            both(pair, "DUMP", key)  # one node: Redis's bytes
        a, b = pair
        assert debug_encoding(a, key) == debug_encoding(b, key) == b"encoding:quicklist"
        both(pair, "DEBUG", "QUICKLIST", key)
        both(pair, "DEBUG", "LISTPACK", key)


def test_across_the_boundary_and_back(pair):
    both(pair, "CONFIG", "SET", "list-max-listpack-size", 4)
    for i in range(10):  # grows past one node of 4 ...
        both(pair, "RPUSH", "l", "e%d" % i)
        both(pair, "LRANGE", "l", 0, -1)
        both(pair, "OBJECT", "ENCODING", "l")
    for i in range(10):  # ... and shrinks back to nothing
        both(pair, "LPOP", "l")
        both(pair, "LRANGE", "l", 0, -1)
        both(pair, "LINDEX", "l", -1)
    both(pair, "EXISTS", "l")
    # LMOVE within one small list, LSET growing an element past the limit.
    both(pair, "RPUSH", "m", "a")
    both(pair, "LMOVE", "m", "m", "LEFT", "RIGHT")
    both(pair, "LSET", "m", 0, "x" * 9000)
    both(pair, "RPUSH", "m", "b")
    both(pair, "LSET", "m", 0, "y")
    both(pair, "LRANGE", "m", 0, -1)
    both(pair, "DUMP", "m")


def test_restore_reload_sort_store(pair):
    a, b = pair
    for r in (a, b):
        r.execute_command("RPUSH", "small", "3", "1", "2")
        r.execute_command("RPUSH", "big", *["x%d" % i for i in range(2000)])
    for key in ("small", "big"):
        payload = b.execute_command("DUMP", key)
        a.execute_command("RESTORE", "r" + key, 0, payload)
        assert a.execute_command("LRANGE", "r" + key, 0, -1) == b.execute_command("LRANGE", key, 0, -1)
    assert a.execute_command("DUMP", "rsmall") == b.execute_command("DUMP", "small")
    both(pair, "SORT", "small", "STORE", "sorted")
    both(pair, "LRANGE", "sorted", 0, -1)
    both(pair, "DUMP", "sorted")
    for r in (a, b):
        assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    both(pair, "LRANGE", "small", 0, -1)
    both(pair, "LRANGE", "big", 0, 5)
    both(pair, "LLEN", "big")
    both(pair, "DUMP", "small")
    # The reloaded small list is a listpack again: pushes keep working.
    both(pair, "LPUSH", "small", "0")
    both(pair, "LRANGE", "small", 0, -1)
    both(pair, "DEBUG", "DIGEST-VALUE", "small", "big", "sorted")
