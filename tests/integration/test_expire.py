"""Key expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX/XX/GT/LT), TTL,
PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, lazy and active expiry.

Differential tests send the same commands to cairn (`server`) and to
Debian's redis-server 7.0.15 (`oracle`) and compare every reply; the
others are parametrized over both servers.  Time-dependent replies are
compared as ranges, never as durations of the test itself.
"""
import time

import pytest
import redis

from compare import BOTH, debug_target, run, same, try_debug_active_expire_off  # noqa: F401


def info_field(r, section, name):
    return r.info(section).get(name)


# ------------------------------------------------------------------ errors

def test_expire_argument_errors(server, oracle):
    same(server, oracle, [
        ("EXPIRE", "a", "abc"), ("EXPIRE", "a", "1.5"), ("EXPIRE", "a", ""),
        ("EXPIRE", "a", "1", "foo"), ("EXPIRE", "a", "abc", "foo"),
        ("EXPIRE", "a", "abc", "nx", "xx"), ("EXPIRE", "nokey", "1", "nx", "xx"),
        ("EXPIRE", "a", "1", "NX", "GT"), ("EXPIRE", "a", "1", "nx", "lt"),
        ("EXPIRE", "a", "1", "gt", "lt"), ("EXPIRE", "a", "1", "XX", "GT", "LT"),
        ("PEXPIRE", "a", "1", "bar"), ("EXPIREAT", "a", "1", "nx", "nx", "xx"),
        ("EXPIRE", "a", "99999999999999999"), ("EXPIRE", "a", "9223372036854775807"),
        ("EXPIRE", "a", "-9223372036854775808"), ("EXPIRE", "a", "9223372036854775"),
        ("PEXPIRE", "a", "9223372036854775807"), ("EXPIREAT", "a", "9223372036854775807"),
        ("expireat", "a", "-9223372036854775808"), ("TTL", "a"),
        ("PEXPIRE", "nokey", "9223372036854775807"), ("EXPIRE", "nokey", "abc"),
        ("EXPIRE", "a"), ("TTL",), ("PERSIST", "a", "b"),
    ], setup=[("SET", "a", "1")])


# ------------------------------------------------------------- set and read

@pytest.mark.parametrize("target", BOTH)
def test_ttl_family_replies(request, target):
    r = request.getfixturevalue(target).client()
    assert r.ttl("nokey") == -2
    assert r.pttl("nokey") == -2
    assert r.execute_command("EXPIRETIME", "nokey") == -2
    assert r.execute_command("PEXPIRETIME", "nokey") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.execute_command("EXPIRETIME", "k") == -1
    assert r.execute_command("PEXPIRETIME", "k") == -1
    before = int(time.time() * 1000)
    assert r.expire("k", 100) is True
    after = int(time.time() * 1000)
    assert r.ttl("k") in (99, 100)
    assert 98000 < r.pttl("k") <= 100000
    pat = r.execute_command("PEXPIRETIME", "k")
    assert before + 100000 - 50 <= pat <= after + 100000 + 50
    assert r.execute_command("EXPIRETIME", "k") == (pat + 500) // 1000
    assert r.execute_command("PEXPIREAT", "k", 4000000000123) == 1
    assert r.execute_command("PEXPIRETIME", "k") == 4000000000123
    assert r.execute_command("EXPIRETIME", "k") == 4000000000
    assert r.execute_command("EXPIREAT", "k", 4000000001) == 1
    assert r.execute_command("PEXPIRETIME", "k") == 4000000001000
    assert r.execute_command("PEXPIRE", "k", 5500) == 1
    assert r.ttl("k") in (5, 6)
    assert r.persist("k") is True
    assert r.persist("k") is False
    assert r.persist("nokey") is False
    assert r.ttl("k") == -1
    assert r.get("k") == b"v"


def test_expire_options_nx_xx_gt_lt(server, oracle):
    same(server, oracle, [
        ("EXPIRE", "k", "100", "XX"), ("TTL", "k"),
        ("EXPIRE", "k", "100", "GT"), ("TTL", "k"),
        ("EXPIRE", "k", "100", "LT"), ("TTL", "k"),
        ("PERSIST", "k"),
        ("EXPIRE", "k", "100", "NX"), ("TTL", "k"),
        ("EXPIRE", "k", "200", "NX"), ("TTL", "k"),
        ("EXPIRE", "k", "200", "LT"), ("TTL", "k"),
        ("EXPIRE", "k", "50", "GT"), ("TTL", "k"),
        ("EXPIRE", "k", "300", "gt"), ("TTL", "k"),
        ("EXPIRE", "k", "200", "GT"), ("EXPIRE", "k", "400", "LT"),
        ("EXPIRE", "k", "50", "lt"), ("TTL", "k"),
        ("EXPIRE", "k", "60", "XX", "GT"), ("TTL", "k"),
        ("EXPIRE", "k", "40", "xx", "gt"), ("TTL", "k"),
        ("EXPIRE", "k", "40", "XX", "LT", "XX"), ("TTL", "k"),
        ("PEXPIRE", "k", "500000", "GT"), ("TTL", "k"),
        ("EXPIREAT", "k", "4000000000", "GT"), ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", "4000000000000", "GT"), ("PEXPIREAT", "k", "4000000000000", "LT"),
        ("PEXPIREAT", "k", "3999999999999", "LT"), ("PEXPIRETIME", "k"),
        ("EXPIRE", "nokey", "10", "XX"), ("EXPIRE", "nokey", "10"), ("EXPIRE", "nokey", "10", "NX"),
        ("EXPIRE", "k", "-1", "NX"), ("EXISTS", "k"), ("EXPIRE", "k", "-1", "GT"), ("EXISTS", "k"),
        ("EXPIRE", "k", "-1", "LT"), ("EXISTS", "k"),
    ], setup=[("SET", "k", "v")])


def test_lt_without_expire_sets_and_gt_without_expire_does_not(server, oracle):
    same(server, oracle, [
        ("EXPIRE", "a", "100", "GT"), ("TTL", "a"),
        ("EXPIRE", "a", "100", "LT"), ("TTL", "a"),
        ("PERSIST", "a"), ("EXPIRE", "a", "-5", "GT"), ("EXISTS", "a"),
        ("EXPIRE", "a", "-5", "LT"), ("EXISTS", "a"),
    ], setup=[("SET", "a", "1")])


# ------------------------------------------------------ times in the past

def test_time_in_the_past_deletes_the_key(server, oracle):
    same(server, oracle, [
        ("EXPIRE", "a", "-1"), ("EXISTS", "a"), ("TTL", "a"),
        ("PEXPIRE", "b", "0"), ("EXISTS", "b"),
        ("EXPIREAT", "c", "1"), ("EXISTS", "c"),
        ("PEXPIREAT", "d", "-9223372036854775808"), ("EXISTS", "d"),
        ("EXPIRE", "a", "-1"), ("DBSIZE",),
    ], setup=[("SET", "a", "1"), ("SET", "b", "1"), ("SET", "c", "1"), ("SET", "d", "1")])


def test_expire_events(server, oracle):
    def events(target):
        r = target.client()
        try:
            r.config_set("notify-keyspace-events", "KEA")
        except redis.ResponseError as e:
            pytest.skip("notifications unavailable: %s" % e)
        p = target.client().pubsub()
        try:
            p.psubscribe("__keyevent@*")
            assert p.get_message(timeout=5)["type"] == "psubscribe"
        except redis.ResponseError as e:
            pytest.skip("PSUBSCRIBE unavailable: %s" % e)
        for cmd in [("SET", "a", "1"), ("EXPIRE", "a", "100"), ("PEXPIRE", "a", "100", "GT"),
                    ("EXPIRE", "a", "50", "NX"), ("PERSIST", "a"), ("PERSIST", "a"),
                    ("EXPIRE", "a", "-1"), ("SET", "b", "1"), ("PEXPIREAT", "b", "0"),
                    ("SET", "c", "1"), ("PEXPIRE", "c", "1"), ("SLEEP",), ("GET", "c"),
                    ("SET", "__end__", "1")]:
            if cmd == ("SLEEP",):
                time.sleep(0.05)
                continue
            run(r, *cmd)
        out = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            m = p.get_message(timeout=1)
            if m and m["type"] == "pmessage":
                out.append((m["channel"], m["data"]))
                if m["data"] == b"__end__":
                    break
        p.close()
        return out

    got = events(server)
    assert got == events(oracle)
    assert (b"__keyevent@0__:del", b"a") in got
    assert (b"__keyevent@0__:expired", b"c") in got


# --------------------------------------------------------- lazy / active

@pytest.mark.parametrize("target", BOTH)
def test_lazy_expiry_on_access(request, target):
    r = debug_target(request, target).client()
    try_debug_active_expire_off(r)
    r.set("k", "v")
    r.pexpire("k", 20)
    r.set("keep", "v")
    time.sleep(0.1)
    assert r.dbsize() == 2  # nothing removed it yet
    expired_before = info_field(r, "stats", "expired_keys")
    assert r.get("k") is None
    assert r.dbsize() == 1
    assert info_field(r, "stats", "expired_keys") == expired_before + 1
    assert r.ttl("k") == -2
    assert r.get("keep") == b"v"


@pytest.mark.parametrize("target", BOTH)
def test_lazy_expiry_by_each_kind_of_lookup(request, target):
    r = debug_target(request, target).client()
    try_debug_active_expire_off(r)
    lookups = [("EXISTS",), ("TTL",), ("TYPE",), ("PERSIST",), ("EXPIRE", "100"),
               ("TOUCH",), ("DEL",), ("OBJECT-ENCODING",)]
    for i, _ in enumerate(lookups):
        r.set("k%d" % i, "v")
        r.pexpire("k%d" % i, 20)
    time.sleep(0.1)
    assert r.dbsize() == len(lookups)
    replies = []
    for i, lk in enumerate(lookups):
        key = "k%d" % i
        if lk[0] == "OBJECT-ENCODING":
            replies.append(r.object("encoding", key))
        else:
            replies.append(r.execute_command(lk[0], key, *lk[1:]))
    assert replies == [0, -2, b"none", 0, 0, 0, 0, None]
    assert r.dbsize() == 0


@pytest.mark.parametrize("target", BOTH)
def test_active_expiry_removes_keys_without_access(request, target):
    r = request.getfixturevalue(target).client()
    pipe = r.pipeline(transaction=False)
    for i in range(500):
        pipe.set("t%d" % i, "v")
        pipe.pexpire("t%d" % i, 50)
    for i in range(20):
        pipe.set("p%d" % i, "v")
    pipe.execute()
    deadline = time.monotonic() + 15
    while r.dbsize() > 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 20
    assert info_field(r, "stats", "expired_keys") >= 500


@pytest.mark.parametrize("target", BOTH)
def test_expire_survives_rename_move_copy_and_swapdb(request, target):
    r = request.getfixturevalue(target).client()
    r.set("a", "v")
    r.expire("a", 1000)
    r.rename("a", "b")
    assert 990 <= r.ttl("b") <= 1000
    r.execute_command("COPY", "b", "c")
    assert 990 <= r.ttl("c") <= 1000
    r.move("c", 2)
    r.execute_command("SWAPDB", "0", "2")
    assert 990 <= r.ttl("c") <= 1000
    assert r.ttl("b") == -2


@pytest.mark.parametrize("target", BOTH)
def test_many_keys_with_expires_then_persist_and_delete(request, target):
    r = request.getfixturevalue(target).client()
    pipe = r.pipeline(transaction=False)
    for i in range(2000):
        pipe.set("k%d" % i, "v%d" % i)
        pipe.expire("k%d" % i, 1000 + i)
    pipe.execute()
    pipe = r.pipeline(transaction=False)
    for i in range(0, 2000, 2):
        pipe.persist("k%d" % i)
    for i in range(1, 2000, 4):
        pipe.delete("k%d" % i)
    pipe.execute()
    assert r.dbsize() == 1500
    for i in range(0, 2000, 97):
        t = r.ttl("k%d" % i)
        if i % 2 == 0:
            assert t == -1
        elif i % 4 == 1:
            assert t == -2
        else:
            assert 1000 + i - 10 <= t <= 1000 + i
        if i % 4 != 1:
            assert r.get("k%d" % i) == b"v%d" % i
