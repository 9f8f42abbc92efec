"""Exact wire behaviour of the RESP/inline protocol layer.

Every expected byte string here was first recorded against Debian's
redis-server 7.0.15 (run with CAIRN_BIN=redis-server to re-check).
"""
import os
import re
import socket
import stat
import time

import pytest

from requires import require_commands
from resphelp import encode as cmd, read_values

PONG = b"+PONG\r\n"


def proto_err(msg):
    return b"-ERR Protocol error: " + msg + b"\r\n"


def assert_error_then_close(server, payload, msg):
    with server.connect() as c:
        c.send(payload)
        c.expect(proto_err(msg))
        assert c.is_closed(), "connection must be closed after a protocol error"


# ---------------------------------------------------------------- pipelining

def test_pipeline_many_commands_in_one_write_reply_in_order(server):
    n = 1000
    payload = b"".join(cmd("SET", "k%d" % i, "v%d" % i) for i in range(n))
    payload += b"".join(cmd("GET", "k%d" % i) for i in range(n))
    payload += cmd("INCR", "ctr") * 5
    expected = b"+OK\r\n" * n
    expected += b"".join(b"$%d\r\nv%d\r\n" % (len(b"v%d" % i), i) for i in range(n))
    expected += b"".join(b":%d\r\n" % i for i in range(1, 6))
    with server.connect() as c:
        c.send(payload)
        c.expect(expected)


def test_pipeline_mixed_inline_and_multibulk(server):
    with server.connect() as c:
        c.send(b"PING\r\n" + cmd("ECHO", "abc") + b"PING\r\n" + cmd("PING"))
        c.expect(PONG + b"$3\r\nabc\r\n" + PONG + PONG)


def test_pipeline_command_split_across_writes(server):
    data = cmd("SET", "key", "x" * 1000) + cmd("GET", "key")
    with server.connect() as c:
        for i in range(0, len(data), 7):
            c.send(data[i:i + 7])
        c.expect(b"+OK\r\n$1000\r\n" + b"x" * 1000 + b"\r\n")


def test_pipeline_large_value_roundtrip(server):
    big = os.urandom(300000)
    with server.connect() as c:
        c.send(cmd(b"SET", b"big", big) + cmd(b"GET", b"big") + cmd(b"STRLEN", b"big"))
        c.expect(b"+OK\r\n$300000\r\n" + big + b"\r\n:300000\r\n")


def test_empty_multibulk_and_negative_count_are_ignored(server):
    with server.connect() as c:
        c.send(b"*0\r\n*-1\r\nPING\r\n")
        c.expect(PONG)


def test_unknown_command_error_text(server):
    with server.connect() as c:
        c.send(b"FOO\r\n" + cmd("foo", "a", "b") + b"PING\r\n")
        c.expect(b"-ERR unknown command 'FOO', with args beginning with: \r\n"
                 b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"
                 + PONG)


def test_wrong_arity_error_text(server):
    with server.connect() as c:
        c.send(b"ECHO\r\nping a b\r\n")
        c.expect(b"-ERR wrong number of arguments for 'echo' command\r\n"
                 b"-ERR wrong number of arguments for 'ping' command\r\n")


# ------------------------------------------------------------------- inline

def test_inline_plain_and_blank_lines(server):
    with server.connect() as c:
        c.send(b"\r\n\r\n  \r\nPING\r\n\nPING\nECHO hello\n")
        c.expect(PONG + PONG + b"$5\r\nhello\r\n")


def test_inline_double_quotes_with_escapes(server):
    with server.connect() as c:
        c.send(b'ECHO "a b\\x41\\n"\r\nECHO "\\x4g"\r\nECHO ""\r\n')
        c.expect(b"$5\r\na bA\n\r\n$3\r\nx4g\r\n$0\r\n\r\n")


def test_inline_single_quotes(server):
    with server.connect() as c:
        c.send(b"ECHO 'it\\'s'\r\nSET 'my key' \"my value\"\r\nGET \"my key\"\r\n")
        c.expect(b"$4\r\nit's\r\n+OK\r\n$8\r\nmy value\r\n")


@pytest.mark.parametrize("line", [b'ECHO "a b\r\n', b"SET k 'a\r\n", b'ECHO "a"b\r\n',
                                  b"ECHO 'c''\r\n"])
def test_inline_unbalanced_quotes_closes(server, line):
    with server.connect() as c:
        c.send(b"PING\r\n" + line + b"PING\r\n")
        c.expect(PONG + proto_err(b"unbalanced quotes in request"))
        assert c.is_closed()


def test_too_big_inline_request(server):
    assert_error_then_close(server, b"x" * 70000, b"too big inline request")


# ---------------------------------------------------------- protocol errors

@pytest.mark.parametrize("payload", [b"*abc\r\n", b"*3000000000\r\n", b"*1x\r\n"])
def test_invalid_multibulk_length(server, payload):
    assert_error_then_close(server, payload, b"invalid multibulk length")


@pytest.mark.parametrize("payload", [b"*1\r\n$abc\r\n", b"*1\r\n$-1\r\n",
                                     b"*1\r\n$600000000\r\n"])
def test_invalid_bulk_length(server, payload):
    assert_error_then_close(server, payload, b"invalid bulk length")


def test_expected_dollar(server):
    assert_error_then_close(server, b"*1\r\nx4\r\n", b"expected '$', got 'x'")


def test_too_big_mbulk_count_string(server):
    assert_error_then_close(server, b"*" + b"1" * 70000, b"too big mbulk count string")


def test_too_big_bulk_count_string(server):
    assert_error_then_close(server, b"*1\r\n" + b"x" * 70000, b"too big bulk count string")


def test_replies_before_protocol_error_are_delivered(server):
    with server.connect() as c:
        c.send(cmd("SET", "a", "1") + cmd("GET", "a") + b"*1\r\n$x\r\n" + cmd("PING"))
        c.expect(b"+OK\r\n$1\r\n1\r\n" + proto_err(b"invalid bulk length"))
        assert c.is_closed()


def test_proto_max_bulk_len(start_server):
    s = start_server(proto_max_bulk_len="1mb")
    limit = 1024 * 1024
    with s.connect() as c:
        c.send(cmd(b"SET", b"k", b"y" * limit) + cmd("STRLEN", "k"))
        c.expect(b"+OK\r\n:%d\r\n" % limit)
    assert_error_then_close(s, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (limit + 1),
                            b"invalid bulk length")


# --------------------------------------------------------------------- auth

def test_requirepass_noauth_text(start_server):
    s = start_server(requirepass="secret")
    with s.connect() as c:
        c.send(b"PING\r\nGET x\r\n")
        c.expect(b"-NOAUTH Authentication required.\r\n" * 2)


def test_requirepass_wrong_password(start_server):
    s = start_server(requirepass="secret")
    with s.connect() as c:
        c.send(b"AUTH nope\r\nAUTH default nope\r\nAUTH a b c\r\n")
        c.expect(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n" * 2
                 + b"-ERR syntax error\r\n")


def test_requirepass_auth_then_commands(start_server):
    s = start_server(requirepass="secret")
    with s.connect() as c:
        c.send(b"AUTH secret\r\nPING\r\n")
        c.expect(b"+OK\r\n" + PONG)
    with s.connect() as c:
        c.send(cmd("AUTH", "default", "secret") + b"PING\r\n")
        c.expect(b"+OK\r\n" + PONG)
    r = s.client(password="secret")
    assert r.ping() is True


def test_requirepass_hello_requires_auth(start_server):
    s = start_server(requirepass="secret")
    with s.connect() as c:
        c.send(b"HELLO 3\r\nHELLO 3 AUTH default nope\r\n")
        c.expect(b"-NOAUTH HELLO must be called with the client already authenticated, "
                 b"otherwise the HELLO AUTH <user> <pass> option can be used to "
                 b"authenticate the client and select the RESP protocol version at the "
                 b"same time\r\n"
                 b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    with s.connect() as c:
        c.send(b"HELLO 3 AUTH default secret\r\nPING\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.expect(PONG)


def test_auth_without_password_configured(server):
    with server.connect() as c:
        c.send(b"AUTH x\r\n")
        c.expect(b"-ERR AUTH <password> called without any password configured for the "
                 b"default user. Are you sure your configuration is correct?\r\n")


def test_unauthenticated_multibulk_limit(start_server):
    s = start_server(requirepass="secret")
    assert_error_then_close(s, b"*11\r\n", b"unauthenticated multibulk length")
    with s.connect() as c:  # 10 is still allowed
        c.send(cmd(*(["AUTH"] + ["x"] * 9)))
        c.expect(b"-ERR syntax error\r\n")


def test_unauthenticated_bulk_limit(start_server):
    s = start_server(requirepass="secret")
    assert_error_then_close(s, b"*2\r\n$16385\r\n", b"unauthenticated bulk length")
    with s.connect() as c:  # 16384 is still allowed
        c.send(cmd(b"ECHO", b"z" * 16384))
        c.expect(b"-NOAUTH Authentication required.\r\n")


def test_authenticated_client_has_no_small_limits(start_server):
    s = start_server(requirepass="secret")
    with s.connect() as c:
        c.send(b"AUTH secret\r\n" + cmd(*(["MSET"] + ["a", "b"] * 10)) +
               cmd(b"ECHO", b"z" * 20000))
        c.expect(b"+OK\r\n+OK\r\n$20000\r\n" + b"z" * 20000 + b"\r\n")


# ----------------------------------------------------------------- clients

def test_maxclients_reached(start_server):
    s = start_server(maxclients=3)
    conns = [s.connect() for _ in range(3)]
    try:
        for c in conns:
            c.send(b"PING\r\n")
            c.expect(PONG)
        with s.connect() as extra:
            extra.expect(b"-ERR max number of clients reached\r\n")
            assert extra.is_closed()
    finally:
        for c in conns:
            c.close()


def test_timeout_closes_idle_client(start_server):
    s = start_server(timeout=1)
    with s.connect(timeout=15) as c:
        c.send(b"PING\r\n")
        c.expect(PONG)
        assert c.is_closed(), "idle client should be closed by `timeout`"


def test_quit_replies_ok_and_closes(server):
    with server.connect() as c:
        c.send(b"QUIT\r\nPING\r\n")
        c.expect(b"+OK\r\n")
        assert c.is_closed()


def test_reset_restores_connection_state(server):
    with server.connect() as c:
        c.send(b"SELECT 3\r\nSET k v\r\nCLIENT SETNAME x\r\nHELLO 3\r\n")
        got = c.recv_until(b"modules\r\n*0\r\n")
        assert got.startswith(b"+OK\r\n+OK\r\n+OK\r\n%7\r\n"), got
        c.send(b"RESET\r\nCLIENT GETNAME\r\nGET k\r\nDBSIZE\r\n")
        c.expect(b"+RESET\r\n$-1\r\n$-1\r\n:0\r\n")


def test_reset_deauthenticates(start_server):
    s = start_server(requirepass="secret")
    with s.connect() as c:
        c.send(b"AUTH secret\r\nPING\r\nRESET\r\nPING\r\n")
        c.expect(b"+OK\r\n" + PONG + b"+RESET\r\n-NOAUTH Authentication required.\r\n")


# ------------------------------------------------------------------ sockets

def test_unixsocket_and_perm(start_server):
    s = start_server(unixsocketperm="700")
    mode = stat.S_IMODE(os.stat(s.unixsocket).st_mode)
    assert stat.S_ISSOCK(os.stat(s.unixsocket).st_mode)
    assert mode == 0o700
    with s.connect_unix() as c:
        c.send(b"PING\r\n" + cmd("SET", "u", "1"))
        c.expect(PONG + b"+OK\r\n")
    assert s.client().get("u") == b"1"
    assert s.unix_client().get("u") == b"1"


def test_unixsocketperm_other_mode(start_server):
    s = start_server(unixsocketperm="755")
    assert stat.S_IMODE(os.stat(s.unixsocket).st_mode) == 0o755


def _ipv6_loopback_ok():
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as t:
            t.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback_ok(), reason="no IPv6 loopback")
def test_bind_ipv6_loopback(start_server):
    s = start_server(bind="127.0.0.1 ::1")
    with s.connect(host="::1") as c:
        c.send(b"PING\r\n")
        c.expect(PONG)
    with s.connect(host="127.0.0.1") as c:
        c.send(b"PING\r\n")
        c.expect(PONG)


def _second_loopback_source_ok():
    try:
        with socket.socket() as t:
            t.bind(("127.0.0.2", 0))
        return True
    except OSError:
        return False


DENIED = (b"-DENIED Redis is running in protected mode because protected mode is enabled "
          b"and no password is set for the default user. In this mode connections are only "
          b"accepted from the loopback interface. If you want to connect from external "
          b"computers to Redis you may adopt one of the following solutions: 1) Just "
          b"disable protected mode sending the command 'CONFIG SET protected-mode no' from "
          b"the loopback interface by connecting to Redis from the same host the server is "
          b"running, however MAKE SURE Redis is not publicly accessible from internet if "
          b"you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
          b"you can just disable the protected mode by editing the Redis configuration "
          b"file, and setting the protected mode option to 'no', and then restarting the "
          b"server. 3) If you started the server manually just for testing, restart it "
          b"with the '--protected-mode no' option. 4) Setup a an authentication password "
          b"for the default user. NOTE: You only need to do one of the above things in "
          b"order for the server to start accepting connections from the outside.\r\n")


# Redis treats only the addresses "127.0.0.1" and "::1" as local, so a
# connection from source 127.0.0.2 counts as external while staying on lo.
@pytest.mark.skipif(not _second_loopback_source_ok(), reason="cannot bind 127.0.0.2")
def test_protected_mode_denies_non_local(start_server):
    s = start_server(protected_mode="yes")
    with s.connect(source="127.0.0.2") as c:
        c.send(b"PING\r\n")
        c.expect(DENIED)
        assert c.is_closed()
    with s.connect() as c:  # 127.0.0.1 is fine
        c.send(b"PING\r\n")
        c.expect(PONG)


@pytest.mark.skipif(not _second_loopback_source_ok(), reason="cannot bind 127.0.0.2")
def test_protected_mode_off_or_password_allows(start_server):
    for cfg in ({"protected_mode": "no"}, {"protected_mode": "yes", "requirepass": "p"}):
        s = start_server(**cfg)
        with s.connect(source="127.0.0.2") as c:
            c.send(b"PING\r\n")
            c.expect(PONG if "requirepass" not in cfg
                     else b"-NOAUTH Authentication required.\r\n")


# -------------------------------------------------------------------- RESP3

HELLO3_RE = re.compile(
    rb"^%7\r\n\$6\r\nserver\r\n\$5\r\nredis\r\n\$7\r\nversion\r\n\$6\r\n7\.0\.15\r\n"
    rb"\$5\r\nproto\r\n:3\r\n\$2\r\nid\r\n:(\d+)\r\n\$4\r\nmode\r\n\$10\r\nstandalone\r\n"
    rb"\$4\r\nrole\r\n\$6\r\nmaster\r\n\$7\r\nmodules\r\n\*0\r\n$")


def test_hello3_map_exact_bytes(server):
    with server.connect() as c:
        c.send(b"CLIENT ID\r\n")
        cid = int(c.recv_until(b"\r\n")[1:-2])
        c.send(b"HELLO 3\r\n")
        got = c.recv_until(b"modules\r\n*0\r\n")
        m = HELLO3_RE.match(got)
        assert m, got
        assert int(m.group(1)) == cid


def test_hello2_array_and_noproto(server):
    with server.connect() as c:
        c.send(b"HELLO 2\r\n")
        got = c.recv_until(b"modules\r\n*0\r\n")
        assert got.startswith(b"*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
                              b"$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:")
        c.send(b"HELLO 4\r\nHELLO 1\r\n")
        c.expect(b"-NOPROTO unsupported protocol version\r\n" * 2)


def test_hello3_setname(server):
    with server.connect() as c:
        c.send(b"HELLO 3 SETNAME foo\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.send(b"CLIENT GETNAME\r\n")
        c.expect(b"$3\r\nfoo\r\n")


def test_resp3_core_reply_types(server):
    with server.connect() as c:
        c.send(b"HELLO 3\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.send(b"CONFIG GET port\r\nGET nokey\r\nSET k v\r\nEXISTS k\r\nPING\r\n")
        port = str(server.port).encode()
        c.expect(b"%%1\r\n$4\r\nport\r\n$%d\r\n%s\r\n" % (len(port), port) +
                 b"_\r\n+OK\r\n:1\r\n" + PONG)


def test_resp3_reply_types(server):
    require_commands(server, "zadd", "sadd", "hset")
    with server.connect() as c:
        c.send(b"HELLO 3\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.send(b"CONFIG GET port\r\nGET nokey\r\nZADD z 1.5 a\r\nZSCORE z a\r\n"
               b"HGETALL nohash\r\nSADD s x\r\nSMEMBERS s\r\nHSET h f v\r\nHGETALL h\r\n"
               b"ZRANGE z 0 -1 WITHSCORES\r\nEXISTS z\r\nPING\r\n")
        port = str(server.port).encode()
        c.expect(b"%%1\r\n$4\r\nport\r\n$%d\r\n%s\r\n" % (len(port), port) +
                 b"_\r\n:1\r\n,1.5\r\n%0\r\n:1\r\n~1\r\n$1\r\nx\r\n:1\r\n"
                 b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n:1\r\n" + PONG)
        c.send(b"HELLO 2\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.send(b"GET nokey\r\nZSCORE z a\r\nHGETALL h\r\nSMEMBERS s\r\n")
        c.expect(b"$-1\r\n$3\r\n1.5\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n$1\r\nx\r\n")


def test_resp3_debug_protocol_types(start_server):
    s = start_server(enable_debug_command="local")
    with s.connect() as c:
        c.send(b"HELLO 3\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.send(b"DEBUG PROTOCOL map\r\nDEBUG PROTOCOL set\r\nDEBUG PROTOCOL double\r\n"
               b"DEBUG PROTOCOL null\r\nDEBUG PROTOCOL true\r\nDEBUG PROTOCOL false\r\n"
               b"DEBUG PROTOCOL bignum\r\nDEBUG PROTOCOL verbatim\r\n")
        c.expect(b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n~3\r\n:0\r\n:1\r\n:2\r\n"
                 b",3.141\r\n_\r\n#t\r\n#f\r\n(1234567999999999999999999999999999999\r\n"
                 b"=29\r\ntxt:This is a verbatim\nstring\r\n")
        c.send(b"HELLO 2\r\nDEBUG PROTOCOL map\r\nDEBUG PROTOCOL null\r\n"
               b"DEBUG PROTOCOL true\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
        c.expect(b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n$-1\r\n:1\r\n")


# ------------------------------------------------------- oracle comparison

@pytest.mark.parametrize("payload", [
    b"ECHO a\\x41 \"b\\tc\" 'd\\\"e'\r\n",
    b"SET \"\" \"\"\r\nGET \"\"\r\nEXISTS \"\"\r\n",
    b"  ECHO   spaced    out  \r\n",
    b"ECHO \"\\xzz\\q\\a\\b\\r\"\r\n",
    b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
    b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n",
    b"ping\r\nPiNg\r\nDBSIZE\r\n",
])
def test_wire_bytes_match_oracle(server, oracle, payload):
    # sockets left open: read exactly as much as the oracle produced
    expected = oracle.raw(payload)
    assert expected, "oracle produced no reply"
    assert server.raw(payload, expect=expected) == expected


# Cairn reads the RESP headers of a batch's commands ahead of parsing them,
# to fetch their keys into the cache (core/net.c, "key prefetch").  These
# inputs mislead that look-ahead: keys that look like commands, headers and
# lengths cut across writes, lengths past what has arrived or past what a
# count may hold, pipelines longer than the look-ahead takes.  The replies
# (and whether the connection is closed) must be Redis's, byte for byte.
_K = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"


@pytest.mark.parametrize("pieces", [
    [cmd("SET", "pf:" + _K, "v") + cmd("GET", "pf:" + _K) + cmd("DEL", "pf:" + _K)],
    [b"*3\r\n$3\r\nSET\r\n$1", b"0\r\npf:keykeyk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$10\r\npf:k",
     b"eykeyk\r\n" + cmd("DEL", "pf:keykeyk")],
    [b"*2\r\n$3\r\nGET\r\n$70000\r\n" + b"a" * 100, b"a" * 69900 + b"\r\n" + cmd("PING")],
    [b"*2\r\n$6\r\nEXISTS\r\n$", b"3\r\n", b"abc\r", b"\n"],
    [b"*2\r\n$3\r\nGET\r\n$4294967297\r\nab\r\n"],
    [b"*2\r\n$3\r\nGET\r\n$99999999999999999999\r\nab\r\n"],
    [b"*9999999999\r\n$3\r\nGET\r\n"],
    [b"*2\r\n$3\r\nGET\r\n$-1\r\n"],
    [b"*2\r\n$3\r\nGET\r\n$1x\r\nab\r\n"],
    [b"*2\r\n$3\r\nGET\r\n:1\r\n"],
    [b"*3\r\n$3\r\nGET\r\n$1\r\na\r\n"],
    [cmd("PING") + b"PING\r\n" + cmd("GET") + cmd("EXISTS", "pf:a", "pf:b") + b"*0\r\n*-1\r\n" + cmd("ECHO", "x")],
    [b"".join(cmd("INCR", "pf:c%d" % (i % 3)) for i in range(100)) + cmd("DEL", "pf:c0", "pf:c1", "pf:c2")],
    [b"".join(cmd("MSET", *["pf:m%d" % j if k == 0 else "v" for j in range(40) for k in (0, 1)]) for _ in range(3))
     + cmd("MGET", "pf:m0", "pf:m39") + cmd("DEL", *["pf:m%d" % j for j in range(40)])],
])
def test_key_prefetch_look_ahead_changes_no_reply(server, oracle, pieces):
    # A PING after the pieces: answered, taken as part of an unfinished
    # command, or never read (the connection closed on a protocol error).
    expected = oracle.raw(b"".join(pieces) + cmd("PING"), idle=1.0)
    assert expected, "oracle produced no reply"
    with server.connect() as c:
        for p in pieces:
            c.send(p)
            time.sleep(0.05)
        c.send(cmd("PING"))
        assert c.read_all(1.0) == expected


def _many_clients_pipelines(srv):
    """40 connections each send a 12-command pipeline at once (one read
    batch holds far more keys than one client's look-ahead); returns each
    connection's replies."""
    r = srv.client()
    for i in range(0, 20000, 1000):
        r.mset({"pfp:%d" % j: "value:%d" % j for j in range(i, i + 1000)})
    conns = [srv.connect() for _ in range(40)]
    try:
        payloads = []
        for i in range(40):
            p = b""
            for j in range(3):
                mine = "pfm:%d:%d" % (i, j)
                p += cmd("SET", mine, "v%d" % j) + cmd("GET", "pfp:%d" % (i * 300 + j)) + cmd("INCR", mine + ":n")
                p += cmd("GET", mine) if j != 1 else cmd("DEL", mine, "pfp:%d" % (i * 300 + 7))
            payloads.append(p)
        for c, p in zip(conns, payloads):
            c.send(p)
        return [read_values(c, 12) for c in conns]
    finally:
        for c in conns:
            c.close()


# A read batch of many clients fetches many keys ahead (core/net.c,
# PREFETCH_KEYS): each client's replies are Redis's, byte for byte.
def test_key_prefetch_many_clients_changes_no_reply(server, oracle):
    got, expected = _many_clients_pipelines(server), _many_clients_pipelines(oracle)
    assert all(expected), "oracle produced no reply"
    assert got == expected
