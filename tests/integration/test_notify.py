"""Keyspace notifications (notify-keyspace-events): channel names, event
names and their order, class filtering, expiry events from the active cycle
and from lazy expiry, RESP3 delivery.

A subscriber on PSUBSCRIBE '*' records everything the server publishes
while a script runs; a final PUBLISH of a sentinel ends the transcript.  The
transcripts of Cairn and redis-server 7.0.15 must be byte-identical.
"""
import time

from pubsub_helpers import call, enc, read_until_value, read_values, split_values

SENTINEL = b"$8\r\nsentinel\r\n$3\r\nend\r\n"

# Commands whose events exist in both servers today (strings, generic
# keyspace commands, expiry).
SCRIPT = [
    ("set", "k", "v"), ("set", "k", "v2"), ("set", "k", "v3", "nx"), ("setnx", "k", "x"),
    ("append", "a", "x"), ("append", "a", "y"), ("incr", "n"), ("incrby", "n", 5), ("decr", "n"),
    ("decrby", "n", 2), ("incrbyfloat", "f", "1.5"), ("setrange", "r", 3, "abc"), ("setrange", "r", 0, ""),
    ("mset", "m1", 1, "m2", 2), ("msetnx", "m1", 1, "m3", 3), ("msetnx", "m4", 4, "m5", 5),
    ("getset", "k", "new"), ("getdel", "m4"), ("getdel", "m4"), ("getex", "m5", "ex", 100),
    ("getex", "m5", "persist"), ("setex", "e", 100, "v"), ("psetex", "e", 100000, "v"),
    ("set", "k", "v", "ex", 100), ("set", "k", "v", "keepttl"), ("set", "k", "v", "get"),
    ("expire", "k", 1000), ("pexpire", "k", 100000), ("expireat", "k", 9999999999),
    ("persist", "k"), ("persist", "k"), ("expire", "nokey", 10), ("expire", "k", -1),
    ("del", "a", "n", "nokey"), ("unlink", "f"), ("rename", "r", "r2"), ("rename", "m1", "m2"),
    ("renamenx", "m2", "m3"), ("renamenx", "m2", "z"), ("copy", "z", "z2"), ("move", "z2", 3),
    ("setbit", "b", 7, 1), ("bitop", "or", "b2", "b"), ("bitop", "and", "b2", "nokey"),
    ("bitfield", "bf", "set", "u8", 0, 255), ("bitfield", "bf", "get", "u8", 0),
    ("get", "k"), ("select", 2), ("set", "k2", "v"),
    ("expire", "k2", 0), ("swapdb", 0, 2), ("flushdb",), ("flushall",),
]


def transcript(srv, config, script, resp3=False, pattern="*"):
    c = srv.connect()
    call(c, "config", "set", "notify-keyspace-events", config)
    sub = srv.connect()
    if resp3:
        call(sub, "hello", "3")
    sub.send(enc("psubscribe", pattern))
    read_values(sub, 1)
    if pattern != "*":
        sub.send(enc("subscribe", "sentinel"))
        read_values(sub, 1)
    for cmd in script:
        call(c, *cmd)
    call(c, "publish", "sentinel", "end")
    return read_until_value(sub, SENTINEL)


def compare(server, oracle, config, script=SCRIPT, **kw):
    got = transcript(server, config, script, **kw)
    want = transcript(oracle, config, script, **kw)
    assert got == want
    return got


def test_all_events_keyspace_and_keyevent(server, oracle):
    got = compare(server, oracle, "KEA")
    assert len(got) > 80
    assert got[0] == b"*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$16\r\n__keyspace@0__:k\r\n$3\r\nset\r\n"
    assert got[1] == b"*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyevent@0__:set\r\n$1\r\nk\r\n"


def test_event_classes_filter(server, oracle):
    for config in ("Kg", "E$", "Kx", "K", "E", "g$", "", "AK", "KEg$x"):
        got = compare(server, oracle, config)
        if config in ("K", "E", "g$", ""):
            assert len(got) == 1     # only the sentinel


def test_resp3_subscriber_gets_pushes(server, oracle):
    got = compare(server, oracle, "KEA", SCRIPT[:10], resp3=True)
    assert got[0].startswith(b">4\r\n$8\r\npmessage\r\n")


def test_keyevent_channel_subscription_and_db_number(server, oracle):
    script = [("select", 9), ("set", "x", "1"), ("del", "x"), ("select", 0), ("set", "y", "1"), ("del", "y")]
    got = compare(server, oracle, "E$g", script, pattern="__keyevent@9__:*")
    assert b"__keyevent@9__:del" in got[1]
    assert len(got) == 3


def test_expired_from_active_cycle(server, oracle):
    def run(srv):
        c = srv.connect()
        call(c, "config", "set", "notify-keyspace-events", "KEx")
        sub = srv.connect()
        sub.send(enc("psubscribe", "*"))
        read_values(sub, 1)
        call(c, "set", "gone", "v", "px", 20)
        # Nobody touches the key: only the active expire cycle can remove it.
        return read_values(sub, 2)

    got, want = run(server), run(oracle)
    assert got == want
    assert split_values(got)[1].endswith(b"$22\r\n__keyevent@0__:expired\r\n$4\r\ngone\r\n")


def test_expired_on_lazy_access_comes_before_the_commands_own_events(start_server, start_oracle):
    def run(srv):
        c = srv.connect()
        assert call(c, "debug", "set-active-expire", "0") == b"+OK\r\n"
        call(c, "config", "set", "notify-keyspace-events", "KEA")
        call(c, "set", "lazy", "v", "px", 1)
        call(c, "set", "lazy2", "v", "px", 1)
        # A plain SET finds its key once (no lookup before the write): over
        # an expired key of another type, with a TTL of its own, too.
        call(c, "hset", "lazy3", "f", "v")
        call(c, "pexpire", "lazy3", 1)
        call(c, "set", "lazy4", "v", "px", 1)
        sub = srv.connect()
        sub.send(enc("psubscribe", "*"))
        read_values(sub, 1)
        time.sleep(0.05)     # the keys are now past their expire time
        t = [call(c, "get", "lazy"), call(c, "set", "lazy2", "again"), call(c, "set", "lazy3", "s", "ex", 100),
             call(c, "set", "lazy4", "s", "px", 100000, "get"), call(c, "type", "lazy3"), call(c, "ttl", "lazy3")]
        call(c, "publish", "sentinel", "end")
        return t + read_until_value(sub, SENTINEL)

    got = run(start_server(enable_debug_command="yes"))
    want = run(start_oracle(enable_debug_command="yes"))
    assert got == want
    assert b"lazy\r\n$7\r\nexpired" in got[6]
    assert got[4:6] == [b"+string\r\n", b":100\r\n"]


def test_new_and_keymiss_events(server, oracle):
    script = [("set", "k", "v"), ("set", "k", "v2"), ("get", "nokey"), ("get", "k"), ("incr", "n"),
              ("append", "a", "x"), ("rename", "k", "k2"), ("copy", "k2", "k3"), ("exists", "zz"),
              ("mget", "k2", "nope")]
    got = compare(server, oracle, "KEnm", script)
    assert any(b"__keyevent@0__:new" in v for v in got)
    assert any(b"__keyevent@0__:keymiss" in v for v in got)
