"""Big values (issue 25): a big argument's buffer grows with the bytes that
arrive and is kept as the stored value.

- A hostile declared bulk length ($536870912) followed by a trickle reserves
  nothing large: used_memory and RSS stay within a few MB, with no password,
  after AUTH, and before AUTH (where Redis refuses the length outright).
- A big SET value is the argument's own string afterwards: every string
  command, MULTI, SETEX, SLOWLOG and the replies still see the right bytes
  (the argument is readable until the command is over, then belongs to the
  value alone).
"""
import time

import pytest
import redis

HOSTILE = b"*3\r\n$3\r\nSET\r\n$4\r\nhkey\r\n$536870912\r\n"


def mem(admin):
    i = admin.info("memory")
    return int(i["used_memory"]), int(i["used_memory_rss"])


def trickle(srv, conn, admin, auth=None):
    """Declare 512 MB, send 2 MB of it in small pieces, check memory."""
    used0, rss0 = mem(admin)
    if auth:
        conn.send(b"AUTH %s\r\n" % auth)
        conn.expect(b"+OK\r\n")
    conn.send(HOSTILE)
    piece = b"x" * 16384
    for _ in range(128):  # 2 MB
        conn.send(piece)
    # Wait until the server has read most of it (its reservation grows).
    for _ in range(500):
        used, rss = mem(admin)
        if used - used0 >= 2 << 20:
            break
        time.sleep(0.01)
    used, rss = mem(admin)
    # At most the doubling reservation over what arrived, far from 512 MB.
    assert used - used0 < 16 << 20, (used0, used)
    assert rss - rss0 < 32 << 20, (rss0, rss)
    assert admin.ping()
    assert admin.exists("hkey") == 0
    conn.close()
    # The connection's memory goes with it.
    for _ in range(500):
        used, _ = mem(admin)
        if used - used0 < 1 << 20:
            break
        time.sleep(0.01)
    assert used - used0 < 1 << 20


def test_hostile_bulk_length_reserves_nothing_large(start_server):
    srv = start_server()
    admin = srv.client()
    trickle(srv, srv.connect(), admin)


def test_hostile_bulk_length_after_auth(start_server):
    srv = start_server(requirepass="pw")
    admin = srv.client(password="pw")
    trickle(srv, srv.connect(), admin, auth=b"pw")


def test_hostile_bulk_length_before_auth_is_refused(start_server, start_oracle):
    for srv in (start_server(requirepass="pw"), start_oracle(requirepass="pw")):
        admin = srv.client(password="pw")
        used0, _ = mem(admin)
        out = srv.raw(HOSTILE + b"x" * 65536, idle=1.0)
        assert out == b"-ERR Protocol error: unauthenticated bulk length\r\n", (srv, out)
        used, _ = mem(admin)
        assert used - used0 < 4 << 20


@pytest.mark.parametrize("size", [45, 61, 100, 40000, 1 << 20, 10 << 20])
def test_big_value_is_stored_and_usable(server, size):
    r = server.client()
    v = bytes((i * 7) % 251 for i in range(min(size, 4096))) * (size // 4096 + 1)
    v = v[:size]
    assert r.set("k", v)
    assert r.get("k") == v
    assert r.strlen("k") == size
    assert r.append("k", b"tail") == size + 4
    assert r.get("k") == v + b"tail"
    assert r.setrange("k", 0, b"AB") == size + 4
    assert r.getrange("k", 0, 3) == b"AB" + v[2:4]
    # SET EX (rewritten effect), GETSET, SETNX paths.
    assert r.set("e", v, ex=100)
    assert r.get("e") == v and 0 < r.ttl("e") <= 100
    assert r.set("e", v + b"!", get=True) == v
    assert r.get("e") == v + b"!"
    assert r.object("encoding", "k") == b"raw"


def test_big_value_in_multi_then_changed(server):
    r = server.client()
    v = b"v" * (1 << 20)
    p = r.pipeline(transaction=True)
    p.set("m", v)
    p.append("m", b"+")
    p.get("m")
    p.delete("m")
    p.set("m", v)
    res = p.execute()
    assert res[1] == len(v) + 1 and res[2] == v + b"+" and res[3] == 1
    assert r.get("m") == v


def test_big_value_in_slowlog_and_replaced(server):
    r = server.client()
    r.config_set("slowlog-log-slower-than", 0)
    v = b"s" * 200000
    r.set("k", v)
    entry = [e for e in r.slowlog_get(10) if e["command"].startswith(b"SET k")][0]
    assert b"... (199872 more bytes)" in entry["command"]
    r.set("k", b"small")  # frees the adopted string
    assert r.get("k") == b"small"
    for _ in range(3):
        r.set("k", v)
    assert r.get("k") == v
    r.delete("k")
    assert r.dbsize() == 0
