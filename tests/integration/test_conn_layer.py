"""The connection layer (src/core/conn.c): what clients see of their
connection, against redis-server, and the layer check's socket rule.

- CLIENT INFO's addr, laddr and fd for TCP and unix clients: addr/laddr are
  the socket's two ends, fd is a socket the server holds (/proc).
- A command run inside EXEC keeps its caller's connection; one a script
  runs comes from the script's fake client (no connection: MONITOR's
  source "lua"), as on Redis.
- The refusal of a client over maxclients is written and the socket closed.
- A replica's link to its primary is a client with a socket too.
- scripts/check-layers.sh fails on a socket call outside the layer.
"""
import os
import shutil
import socket
import subprocess
import tempfile

import pytest

from conftest import ROOT
from test_monitor import monitor_transcript
from waithelp import wait_for


def info_fields(r):
    text = r.execute_command("CLIENT", "INFO")
    if isinstance(text, bytes):
        text = text.decode()
    return dict(p.split("=", 1) for p in text.strip("\n").split(" "))


def fd_is_socket(pid, fd):
    """True when the process's descriptor fd is a socket."""
    return os.readlink("/proc/%d/fd/%d" % (pid, fd)).startswith("socket:")


def test_tcp_client_addr_laddr_fd_as_redis(server, oracle):
    for s in (server, oracle):
        r = s.client()
        r.ping()
        f = info_fields(r)
        sock = r.connection_pool.get_connection("PING")._sock
        me, peer = sock.getsockname(), sock.getpeername()
        assert f["addr"] == "%s:%d" % me[:2], (s.name, f)
        assert f["laddr"] == "%s:%d" % peer[:2], (s.name, f)
        assert int(f["fd"]) > 2 and fd_is_socket(s.pid, int(f["fd"])), (s.name, f)


def test_unix_client_addr_laddr_fd_as_redis(server, oracle):
    for s in (server, oracle):
        r = s.unix_client()
        f = info_fields(r)
        assert f["addr"] == f["laddr"] == s.unixsocket + ":0", (s.name, f)
        assert "U" in f["flags"]
        assert int(f["fd"]) > 2 and fd_is_socket(s.pid, int(f["fd"])), (s.name, f)


def test_exec_and_script_run_on_the_callers_connection(server, oracle):
    """CLIENT INFO queued in MULTI answers for the caller's own connection
    (the same fd and address as outside the transaction)."""
    for s in (server, oracle):
        r = s.client()
        outside = info_fields(r)
        p = r.pipeline(transaction=True)
        p.execute_command("CLIENT", "INFO")
        inside = p.execute()[0]
        inside = dict(x.split("=", 1) for x in inside.decode().strip("\n").split(" "))
        for k in ("id", "addr", "laddr", "fd"):
            assert inside[k] == outside[k], (s.name, k, inside, outside)
        assert inside["flags"] == "x"


def test_fake_and_real_clients_as_monitor_shows_them(server, oracle):
    """The script's calls come from a client without a connection ("lua"),
    EVAL and a transaction's commands from the caller's; a script may not
    ask about its client."""
    script = [("eval", "redis.call('set','k','v') return redis.pcall('client','id')", "0"),
              ("multi",), ("set", "a", "1"), ("exec",)]
    for via_unix in (False, True):
        got, want = [[(db, src.replace(s.unixsocket.encode(), b"SOCK"), args)
                      for db, src, args in monitor_transcript(s, script, via_unix=via_unix)]
                     for s in (server, oracle)]
        assert got == want
        sources = [src for _, src, _ in got]
        assert sources[1] == b"lua" and sources.count(b"lua") == 1, got
        caller = b"unix:SOCK" if via_unix else b"127.0.0.1:PORT"
        assert sources[0] == sources[2] == sources[3] == caller, got


def test_maxclients_refusal_bytes_as_redis(start_server, start_oracle):
    got = []
    for start in (start_server, start_oracle):
        s = start(maxclients=1)
        first = s.connect()
        first.send(b"PING\r\n").expect(b"+PONG\r\n")
        second = s.connect()
        got.append(second.read_all(idle=2.0))
        assert second.is_closed()
        first.send(b"PING\r\n").expect(b"+PONG\r\n")
    assert got[0] == got[1] == b"-ERR max number of clients reached\r\n"


def test_replica_link_is_a_client_with_a_socket(start_server):
    primary = start_server()
    replica = start_server(replicaof="127.0.0.1 %d" % primary.port)
    r = replica.client()
    wait_for(lambda: r.info("replication")["master_link_status"] == "up", timeout=20,
               what="the replica's link up")
    text = r.execute_command("CLIENT", "LIST", "TYPE", "master").decode()
    lines = [l for l in text.split("\n") if l]
    assert len(lines) == 1, text
    f = dict(p.split("=", 1) for p in lines[0].split(" "))
    assert f["addr"] == "127.0.0.1:%d" % primary.port
    assert "M" in f["flags"]
    assert fd_is_socket(replica.pid, int(f["fd"]))


# --- the layer check ---

def run_check(src):
    return subprocess.run(["sh", os.path.join(ROOT, "scripts", "check-layers.sh"), src, "/nonexistent"],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def src_copy():
    d = tempfile.mkdtemp(prefix="cairn-layers-")
    dst = os.path.join(d, "src")
    shutil.copytree(os.path.join(ROOT, "src"), dst)
    yield dst
    shutil.rmtree(d, ignore_errors=True)


def test_layer_check_passes_on_the_tree():
    r = run_check(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("path,code,what", [
    ("types/zz_sock.c", "int f(void) { return socket(2, 1, 0); }\n", "socket()"),
    ("types/zz_sock.c", "int f(int s) { return connect (s, 0, 0); }\n", "connect()"),
    ("server/zz_sock.c", "long f(int s, void *b) { return recv(s, b, 1, 0); }\n", "recv()"),
    ("repl/zz_sock.c", "int f(int s) { int v = 1; return setsockopt(s, 6, 1, &v, 4); }\n", "setsockopt()"),
    ("core/zz_sock.c", "int f(void *r) { return io_uring_submit(r); }\n", "io_uring_submit()"),
    ("script/zz_sock.c", "long f(int s, void *b) { return read(s, b, 1); }\n", "read()"),
    ("types/zz_sock.c", "long f(int s) { return write(s, \"x\", 1); }\n", "write()"),
])
def test_layer_check_fails_on_a_socket_call_outside_the_layer(src_copy, path, code, what):
    with open(os.path.join(src_copy, path), "w") as f:
        f.write(code)
    r = run_check(src_copy)
    assert r.returncode == 1, r.stdout
    assert path + ":1: " in r.stdout and what in r.stdout, r.stdout


def test_layer_check_ignores_comments_strings_and_member_calls(src_copy):
    with open(os.path.join(src_copy, "types", "zz_sock.c"), "w") as f:
        f.write("/* socket(2, 1, 0) in a comment */\n"
                "const char *s = \"connect(\";\n"
                "struct T { long (*read)(int); };\n"
                "long f(struct T *t) { return t->read(1); } // write(1)\n")
    r = run_check(src_copy)
    assert r.returncode == 0, r.stdout
