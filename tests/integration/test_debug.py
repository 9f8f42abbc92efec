"""DEBUG: the enable-debug-command gate and the subcommands Cairn has,
checked against redis-server 7.0.15.  Run with CAIRN_BIN=redis-server to
re-check."""
import re

import pytest
import redis

NOT_ALLOWED = ("DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
               "you can run it from a local connection, otherwise you need to set this option in the "
               "configuration file, and then restart the server.")


def error_of(r, *args):
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:  # a client-side failure must not pass as one
        return str(e)
    return None


@pytest.fixture
def debug_pair(start_server, start_oracle):
    return start_server(enable_debug_command="yes"), start_oracle(enable_debug_command="yes")


@pytest.mark.parametrize("args", [("DEBUG", "HELP"), ("DEBUG", "OBJECT", "k"), ("DEBUG", "SLEEP", "0"),
                                  ("DEBUG", "NOSUCH")])
def test_debug_refused_by_default_with_redis_text(server, oracle, args):
    assert error_of(server.client(), *args) == error_of(oracle.client(), *args) == NOT_ALLOWED


def test_debug_arity_checked_before_the_gate(server, oracle):
    assert error_of(server.client(), "DEBUG") == error_of(oracle.client(), "DEBUG")


def test_debug_local_allows_loopback_and_unix_socket(start_server, start_oracle):
    for s in (start_server(enable_debug_command="local"), start_oracle(enable_debug_command="local")):
        assert s.client().execute_command("DEBUG", "SLEEP", "0") == b"OK"
        assert s.unix_client().execute_command("DEBUG", "SLEEP", "0") == b"OK"


def test_debug_object_format_and_encoding_match_redis(debug_pair):
    values = {"emb": "bar", "int": "123", "bigint": "123456789", "neg": "-5", "raw": "x" * 60}
    replies = []
    for s in debug_pair:
        r = s.client()
        for k, v in values.items():
            r.set(k, v)
        replies.append({k: r.execute_command("DEBUG", "OBJECT", k) for k in values})
    for k in values:
        for rep in replies:
            assert re.fullmatch(rb"Value at:0x[0-9a-f]+ refcount:\d+ encoding:[a-z]+ serializedlength:\d+ "
                                rb"lru:\d+ lru_seconds_idle:\d+", rep[k]), rep[k]
        fa = dict(p.split(b":", 1) for p in replies[0][k].split(b" ")[1:])
        fb = dict(p.split(b":", 1) for p in replies[1][k].split(b" ")[1:])
        assert fa[b"encoding"] == fb[b"encoding"]
        assert fa[b"refcount"] == fb[b"refcount"]
        if k != "raw":  # Redis LZF-compresses long strings in serializedlength
            assert fa[b"serializedlength"] == fb[b"serializedlength"], k


@pytest.mark.parametrize("args", [
    ("DEBUG", "OBJECT", "missing"),
    ("DEBUG", "OBJECT"),
    ("DEBUG", "NOSUCH"),
    ("DEBUG", "SLEEP"),
    ("DEBUG", "sleep", "1", "2"),
])
def test_debug_errors_equal_redis(debug_pair, args):
    a, b = (error_of(s.client(), *args) for s in debug_pair)
    assert a == b and a is not None


def test_debug_sleep_and_set_active_expire_reply_ok(debug_pair):
    for s in debug_pair:
        r = s.client()
        assert r.execute_command("DEBUG", "SLEEP", "0.01") == b"OK"
        assert r.execute_command("DEBUG", "SLEEP", "abc") == b"OK"
        assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"OK"
        r.set("k", "v", px=1)
        assert r.execute_command("DEBUG", "set-active-expire", "1") == b"OK"


def test_debug_populate_creates_keys_like_redis(debug_pair):
    out = []
    for s in debug_pair:
        r = s.client()
        r.set("key:1", "keep")
        assert r.execute_command("DEBUG", "POPULATE", "5") == b"OK"
        assert r.execute_command("DEBUG", "POPULATE", "2", "p", "12") == b"OK"
        out.append((r.dbsize(), r.get("key:0"), r.get("key:1"), r.get("key:4"), r.get("p:1")))
    assert out[0] == out[1]
    assert out[0][:4] == (7, b"value:0", b"keep", b"value:4")


def test_debug_help_is_a_help_reply(debug_pair):
    server, oracle = debug_pair
    a = server.client().execute_command("DEBUG", "HELP")
    b = oracle.client().execute_command("DEBUG", "HELP")
    assert a[0] == b[0]
    assert b"SLEEP <seconds>" in a and b"OBJECT <key>" in a
