"""The order of the checks a command passes before it runs (processCommand).

When a command meets several refusals at once, the error it gets depends
on which rule is checked first.  Each test sets up the same conflicting
conditions on Cairn and on redis-server 7.0.15 and compares every reply
byte for byte: a no-multi command inside MULTI, a failed background save
(MISCONF), a RESP2 client in subscribed mode, a MONITOR client, all while
a script is past busy-reply-threshold (BUSY).

The only waits are "until the server answers BUSY" and "until the failed
save is reported"; nothing asserts how long anything took."""
import functools
import os
import re
import select

import pytest

from script_resp import Conn
import waithelp

LOOP = "while true do end"


wait_until = functools.partial(waithelp.wait_for, timeout=30.0)


def start_busy(a, b):
    """a runs an endless script; returns once b is answered BUSY (ECHO is
    neither a write nor allowed while busy, so no other rule answers it)."""
    a.send("EVAL", LOOP, 0)

    def busy():
        r = b.call("ECHO", "x")
        if r.startswith(b"-BUSY"):
            return True
        assert r == b"$1\r\nx\r\n", r
        assert not select.select([a.sock], [], [], 0)[0], "the script answered: %r" % a.reply()
        return False

    wait_until(busy)


def stop_busy(a, b):
    assert b.call("SCRIPT", "KILL") == b"+OK\r\n"
    assert a.reply().startswith(b"-ERR Script killed")


def fail_bgsave(srv, b):
    """A directory where the dump file goes: the save fails, MISCONF is on."""
    os.mkdir(os.path.join(srv.tmp, "blocked"))
    assert b.call("CONFIG", "SET", "dbfilename", "blocked") == b"+OK\r\n"
    assert b.call("BGSAVE") == b"+Background saving started\r\n"
    wait_until(lambda: b"rdb_last_bgsave_status:err" in b.call("INFO", "persistence"))


FEED = re.compile(rb"^\+\d+\.\d+ \[")


def monitor_call(mon, *args):
    """A MONITOR client's reply to its own command, past the feed lines."""
    mon.send(*args)
    while True:
        r = mon.reply()
        if not FEED.match(r):
            return r


def conflicts(srv, misconf):
    """Runs the conflicting conditions on srv; returns (label, reply) pairs."""
    a, b, sub, mon, tx = (Conn(srv) for _ in range(5))
    out = []
    try:
        assert b.call("CONFIG", "SET", "busy-reply-threshold", 50) == b"+OK\r\n"
        assert b.call("SET", "k", "v") == b"+OK\r\n"
        if misconf:
            fail_bgsave(srv, b)
        sub.call("SUBSCRIBE", "ch")
        assert mon.call("MONITOR") == b"+OK\r\n"
        assert tx.call("MULTI") == b"+OK\r\n"
        # Before the script: the rules without BUSY.
        out.append(("sub GET", sub.call("GET", "k")))
        out.append(("sub SET", sub.call("SET", "k", "w")))
        out.append(("sub PING", sub.call("PING")))
        out.append(("monitor GET", monitor_call(mon, "GET", "k")))
        out.append(("monitor SET", monitor_call(mon, "SET", "k", "w")))
        out.append(("multi SAVE", tx.call("SAVE")))
        out.append(("multi SET", tx.call("SET", "k", "w")))
        out.append(("SET", b.call("SET", "k2", "w")))
        out.append(("PING", b.call("PING")))
        start_busy(a, b)
        # Each of these meets BUSY and at least one other rule.
        out.append(("busy sub GET", sub.call("GET", "k")))
        out.append(("busy sub SET", sub.call("SET", "k", "w")))
        out.append(("busy sub PING", sub.call("PING")))
        out.append(("busy sub SUBSCRIBE", sub.call("SUBSCRIBE", "ch2")))
        out.append(("busy monitor GET", monitor_call(mon, "GET", "k")))
        out.append(("busy monitor SET", monitor_call(mon, "SET", "k", "w")))
        out.append(("busy multi SAVE", tx.call("SAVE")))
        out.append(("busy multi GET", tx.call("GET", "k")))
        out.append(("busy SET", b.call("SET", "k2", "w")))
        out.append(("busy PING", b.call("PING")))
        out.append(("busy GET", b.call("GET", "k")))
        stop_busy(a, b)
        out.append(("multi EXEC", tx.call("EXEC")))
        out.append(("after GET", b.call("GET", "k")))
    finally:
        for c in (a, b, sub, mon, tx):
            c.close()
    return out


@pytest.mark.parametrize("misconf", [False, True], ids=["plain", "misconf"])
def test_check_order_matches_redis(start_server, start_oracle, misconf):
    cfg = {"save": "3600 1", "enable-protected-configs": "yes"}
    ours = conflicts(start_server(**cfg), misconf)
    theirs = conflicts(start_oracle(**cfg), misconf)
    for (label, got), (_, want) in zip(ours, theirs):
        assert got == want, "%s: cairn %r, redis %r" % (label, got, want)
    assert len(ours) == len(theirs)
