"""Helpers shared by the differential integration tests: run the same
commands on cairn (`server`) and on redis-server (`oracle`) and compare the
raw replies, errors included."""
import pytest
import redis

BOTH = ["server", "oracle"]


def run(r, *args):
    """Reply of one command, or ('error', text) if it failed."""
    try:
        return r.execute_command(*args)
    except redis.ResponseError as e:
        return ("error", str(e))


def replies(r, cmds):
    """Every command's raw reply on r's connections (the client parses
    none: its parsers raise on some replies, OBJECT ENCODING's among them),
    an error reply as ('error', text)."""
    raw = redis.Redis(connection_pool=r.connection_pool)
    raw.response_callbacks.clear()
    return [run(raw, *c) for c in cmds]


def agree(a, b, *cmd):
    """One command on Cairn's client a and the oracle's b: the replies are
    equal (errors included); returns Cairn's."""
    ga, gb = run(a, *cmd), run(b, *cmd)
    assert ga == gb, "%r: cairn %r, redis %r" % (cmd, ga, gb)
    return ga


def same(server, oracle, script, setup=()):
    """Run setup then script on both; return the script's replies."""
    a, b = server.client(), oracle.client()
    a.response_callbacks.clear()  # compare raw replies
    b.response_callbacks.clear()
    for cmd in setup:
        run(a, *cmd)
        run(b, *cmd)
    got = [run(a, *cmd) for cmd in script]
    want = [run(b, *cmd) for cmd in script]
    for cmd, g, w in zip(script, got, want):
        assert g == w, "%r: cairn %r, redis %r" % (cmd, g, w)
    return got


def debug_target(request, target):
    """A fresh server (target 'server' or 'oracle') with DEBUG enabled."""
    factory = "start_server" if target == "server" else "start_oracle"
    return request.getfixturevalue(factory)(enable_debug_command="yes")


def try_debug_active_expire_off(r):
    """DEBUG SET-ACTIVE-EXPIRE 0, or skip when DEBUG is unavailable.

    Tests that count stale keys give them 20 ms rather than 1: redis-server's
    PEXPIRE reads the clock twice and deletes the key at once if the deadline
    passed in between, which a 1 ms stall (CPU steal) is enough for."""
    try:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    except redis.ResponseError as e:
        pytest.skip("DEBUG SET-ACTIVE-EXPIRE unavailable: %s" % e)
