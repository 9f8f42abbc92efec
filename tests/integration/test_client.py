"""CLIENT subcommands, checked against redis-server 7.0.15.

Run with CAIRN_BIN=redis-server to re-check."""
import re
import time

import pytest
import redis

from resphelp import encode as cmd

FIELD_PATTERNS = [
    ("id", r"\d+"),
    ("addr", r"[\d.]+:\d+|.+:0"),
    ("laddr", r"[\d.]+:\d+|.+:0"),
    ("fd", r"-?\d+"),
    ("name", r"[!-~]*"),
    ("age", r"\d+"),
    ("idle", r"\d+"),
    ("flags", r"[A-Za-z]+"),
    ("db", r"\d+"),
    ("sub", r"\d+"),
    ("psub", r"\d+"),
    ("ssub", r"\d+"),
    ("multi", r"-?\d+"),
    ("qbuf", r"\d+"),
    ("qbuf-free", r"\d+"),
    ("argv-mem", r"\d+"),
    ("multi-mem", r"\d+"),
    ("rbs", r"\d+"),
    ("rbp", r"\d+"),
    ("obl", r"\d+"),
    ("oll", r"\d+"),
    ("omem", r"\d+"),
    ("tot-mem", r"\d+"),
    ("events", r"r?w?"),
    ("cmd", r"[a-z|\-]+|NULL"),
    ("user", r"\S+"),
    ("redir", r"-?\d+"),
    ("resp", r"[23]"),
]


def parse_line(line):
    if isinstance(line, bytes):
        line = line.decode()
    pairs = [p.split("=", 1) for p in line.strip("\n").split(" ")]
    return pairs


def check_line_shape(line):
    pairs = parse_line(line)
    assert [k for k, _ in pairs] == [k for k, _ in FIELD_PATTERNS], line
    for (k, v), (_, pat) in zip(pairs, FIELD_PATTERNS):
        assert re.fullmatch(pat, v), (k, v, line)
    return dict(pairs)


def error_of(r, *args):
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:  # a client-side failure must not pass as one
        return str(e)
    return None


def client_list(r, *args):
    text = r.execute_command("CLIENT", "LIST", *args)
    return [dict(parse_line(l)) for l in text.decode().split("\n") if l]


def test_client_list_fields_in_redis_order(server, oracle):
    for s in (server, oracle):
        r = s.client()
        text = r.execute_command("CLIENT", "LIST").decode()
        assert text.endswith("\n")
        lines = text.split("\n")[:-1]
        assert len(lines) == 1
        f = check_line_shape(lines[0])
        assert f["cmd"] == "client|list"
        assert f["flags"] == "N"
        assert f["user"] == "default"
        assert f["multi"] == "-1" and f["redir"] == "-1" and f["resp"] == "2"
        assert f["laddr"].endswith(":%d" % s.port)


def test_client_info_is_own_line(server, oracle):
    for s in (server, oracle):
        r = s.client()
        text = r.execute_command("CLIENT", "INFO").decode()
        assert text.endswith("\n") and text.count("\n") == 1
        f = check_line_shape(text)
        assert f["cmd"] == "client|info"
        assert int(f["id"]) == r.client_id()
        assert f["argv-mem"] == "10"  # "client" + "info"


def test_client_list_shows_name_db_and_last_command(server):
    r = server.client(db=5)
    r.client_setname("worker-1")
    r.set("k", "v")
    other = server.client()
    me = [c for c in client_list(other) if c["name"] == "worker-1"]
    assert len(me) == 1
    assert me[0]["db"] == "5" and me[0]["cmd"] == "set"


def test_client_id_is_unique_and_increasing(server):
    ids = [server.client().client_id() for _ in range(3)]
    assert ids == sorted(ids) and len(set(ids)) == 3


def test_client_setname_getname_and_clearing(server, oracle):
    for s in (server, oracle):
        r = s.client()
        assert r.execute_command("CLIENT", "GETNAME") is None
        assert r.execute_command("CLIENT", "SETNAME", "my-conn") == b"OK"
        assert r.execute_command("CLIENT", "GETNAME") == b"my-conn"
        assert r.execute_command("CLIENT", "SETNAME", "") == b"OK"
        assert r.execute_command("CLIENT", "GETNAME") is None


@pytest.mark.parametrize("args", [
    ("CLIENT", "SETNAME", "a b"),
    ("CLIENT", "SETNAME", "a\nb"),
    ("CLIENT", "SETNAME", "caf\xe9"),
    ("CLIENT", "GETNAME", "x"),
    ("CLIENT", "ID", "x"),
    ("CLIENT", "LIST", "TYPE", "foo"),
    ("CLIENT", "LIST", "ID", "x"),
    ("CLIENT", "LIST", "ID"),
    ("CLIENT", "LIST", "foo"),
    ("CLIENT", "LIST", "TYPE", "normal", "ID", "1"),
    ("CLIENT", "KILL", "1.2.3.4:5"),
    ("CLIENT", "KILL", "ID", "abc"),
    ("CLIENT", "KILL", "ID", "0"),
    ("CLIENT", "KILL", "foo", "bar"),
    ("CLIENT", "KILL", "TYPE", "foo"),
    ("CLIENT", "KILL", "SKIPME", "maybe"),
    ("CLIENT", "KILL", "USER", "nouser"),
    ("CLIENT", "KILL", "ID", "1", "TYPE"),
    ("CLIENT", "REPLY", "foo"),
    ("CLIENT", "NO-EVICT", "maybe"),
    ("CLIENT", "NOSUCH"),
    ("CLIENT",),
])
def test_client_errors_equal_redis(server, oracle, args):
    a = error_of(server.client(), *args)
    b = error_of(oracle.client(), *args)
    assert a == b and a is not None


def test_client_list_type_and_id_filters(server, oracle):
    for s in (server, oracle):
        r = s.client()
        others = [s.client() for _ in range(2)]
        ids = [o.client_id() for o in others]
        assert len(client_list(r, "TYPE", "normal")) == 3
        assert client_list(r, "TYPE", "pubsub") == []
        assert client_list(r, "TYPE", "master") == []
        assert client_list(r, "TYPE", "replica") == []
        assert client_list(r, "TYPE", "slave") == []
        got = client_list(r, "ID", str(ids[1]), "999999", str(ids[0]))
        assert [int(c["id"]) for c in got] == [ids[1], ids[0]]
        assert client_list(r, "ID", "0") == []


def wait_closed(r):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            r.ping()
        except Exception:
            return True
        time.sleep(0.05)
    return False


def raw_clients(s, n):
    conns = []
    for _ in range(n):
        c = s.connect()
        c.send(cmd("CLIENT", "ID"))
        line = c.recv_until(b"\r\n")
        conns.append((c, int(line[1:-2])))
    return conns


def test_client_kill_old_form_by_address(server, oracle):
    for s in (server, oracle):
        r = s.client()
        (victim, vid), = raw_clients(s, 1)
        addr = [c["addr"] for c in client_list(r) if int(c["id"]) == vid][0]
        assert r.execute_command("CLIENT", "KILL", addr) == b"OK"
        assert victim.is_closed()
        assert error_of(r, "CLIENT", "KILL", addr) == "No such client"


def test_client_kill_filters_with_several_clients(server, oracle):
    for s in (server, oracle):
        r = s.client()
        conns = raw_clients(s, 4)
        listing = {int(c["id"]): c for c in client_list(r)}
        (c0, id0), (c1, id1), (c2, id2), (c3, id3) = conns
        assert r.execute_command("CLIENT", "KILL", "ID", str(id0)) == 1
        assert c0.is_closed()
        assert r.execute_command("CLIENT", "KILL", "ID", str(id0)) == 0
        assert r.execute_command("CLIENT", "KILL", "ADDR", listing[id1]["addr"]) == 1
        assert c1.is_closed()
        assert r.execute_command("CLIENT", "KILL", "LADDR", "10.255.255.1:1") == 0
        assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 0
        assert r.execute_command("CLIENT", "KILL", "ID", str(id2), "TYPE", "normal", "USER", "default") == 1
        assert c2.is_closed()
        # LADDR matches every client of this listener; SKIPME yes spares us.
        assert r.execute_command("CLIENT", "KILL", "LADDR", listing[id3]["laddr"]) == 1
        assert c3.is_closed()
        assert r.ping() is True


def test_client_kill_skipme_no_closes_the_caller_after_replying(server, oracle):
    for s in (server, oracle):
        (c, cid), = raw_clients(s, 1)
        c.send(cmd("CLIENT", "KILL", "ID", str(cid), "SKIPME", "no"))
        c.expect(b":1\r\n")
        assert c.is_closed()
        (d, did), = raw_clients(s, 1)
        d.send(cmd("CLIENT", "KILL", "ID", str(did)))
        d.expect(b":0\r\n")
        d.send(cmd("PING"))
        d.expect(b"+PONG\r\n")


@pytest.mark.parametrize("script,expected", [
    ([("CLIENT", "REPLY", "SKIP"), ("PING",), ("ECHO", "x")], b"$1\r\nx\r\n"),
    ([("CLIENT", "REPLY", "OFF"), ("PING",), ("ECHO", "x"), ("CLIENT", "REPLY", "ON"), ("ECHO", "y")],
     b"+OK\r\n$1\r\ny\r\n"),
    ([("CLIENT", "REPLY", "OFF"), ("CLIENT", "REPLY", "SKIP"), ("PING",), ("CLIENT", "REPLY", "ON")], b"+OK\r\n"),
    ([("CLIENT", "REPLY", "ON"), ("PING",)], b"+OK\r\n+PONG\r\n"),
])
def test_client_reply_modes_match_redis_bytes(server, oracle, script, expected):
    for s in (server, oracle):
        with s.connect() as c:
            c.send(b"".join(cmd(*a) for a in script))
            c.send(cmd("ECHO", "end"))
            got = c.recv_until(b"$3\r\nend\r\n")
            assert got == expected + b"$3\r\nend\r\n"


def test_client_no_evict_sets_flag_e(server, oracle):
    for s in (server, oracle):
        r = s.client()
        assert r.execute_command("CLIENT", "NO-EVICT", "on") == b"OK"
        assert dict(parse_line(r.execute_command("CLIENT", "INFO")))["flags"] == "e"
        assert r.execute_command("CLIENT", "NO-EVICT", "OFF") == b"OK"
        assert dict(parse_line(r.execute_command("CLIENT", "INFO")))["flags"] == "N"


def test_client_getredir_without_tracking_is_minus_one(server, oracle):
    for s in (server, oracle):
        assert s.client().execute_command("CLIENT", "GETREDIR") == -1


def test_client_help_header_as_redis(server, oracle):
    a = server.client().execute_command("CLIENT", "HELP")
    b = oracle.client().execute_command("CLIENT", "HELP")
    assert a[0] == b[0]
    assert a[-2:] == b[-2:]


def test_client_info_unix_socket_flag_and_address(server, oracle):
    for s in (server, oracle):
        r = s.unix_client()
        f = check_line_shape(r.execute_command("CLIENT", "INFO"))
        assert f["flags"] == "U"
        assert f["addr"] == s.unixsocket + ":0" and f["laddr"] == s.unixsocket + ":0"


def test_client_setinfo_validates_like_redis_7_2(server):
    r = server.client()
    err = error_of(r, "CLIENT", "SETINFO", "LIB-NAME", "redis-py")
    if err and "unknown subcommand" in err:
        pytest.skip("CLIENT SETINFO is a Redis 7.2 command")
    assert err is None
    assert r.execute_command("CLIENT", "SETINFO", "lib-ver", "4.3.4") == b"OK"
    assert error_of(r, "CLIENT", "SETINFO", "lib-name", "a b") == \
        "lib-name cannot contain spaces, newlines or special characters."
    assert error_of(r, "CLIENT", "SETINFO", "foo", "bar") == "Unrecognized option 'foo'"
