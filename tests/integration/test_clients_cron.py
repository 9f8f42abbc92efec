"""The clients cron visits a share of the clients per tick (issue 42): with
more clients than one tick visits (16, or clients / hz), every per-client
check still reaches every client: the idle timeout closes all the idle
ones and none of the busy ones, a query buffer grown by one big request
shrinks back, and a client freed while the walk's cursor points at it
does not break the walk.  Run against Cairn and Redis 7.0 alike."""
import time

import pytest

from waithelp import wait_for

NCLIENTS = 60  # more than the 16 a tick visits at least, 6 per tick at hz 10


def target(request, name):
    if name == "cairn":
        return request.getfixturevalue("start_server")()
    return request.getfixturevalue("start_oracle")()


def names(r):
    return [f.split("=", 1)[1] for line in r.execute_command("CLIENT", "LIST").decode().splitlines()
            for f in line.split(" ") if f.startswith("name=")]


@pytest.mark.parametrize("name", ["cairn", "redis"])
def test_idle_timeout_reaches_every_client_of_many(request, name):
    srv = target(request, name)
    admin = srv.client()
    idle = []
    for i in range(NCLIENTS):
        c = srv.client()
        c.execute_command("CLIENT", "SETNAME", "idle%d" % i)
        idle.append(c)
    assert sum(1 for n in names(admin) if n.startswith("idle")) == NCLIENTS
    admin.config_set("timeout", 1)
    # The admin connection keeps talking, so it is never idle for a second;
    # every idle one is closed within a few seconds (bounded wait).
    deadline = time.monotonic() + 20
    left = NCLIENTS
    while time.monotonic() < deadline:
        left = sum(1 for n in names(admin) if n.startswith("idle"))
        if left == 0:
            break
        time.sleep(0.2)
    assert left == 0
    assert admin.ping()


@pytest.mark.parametrize("name", ["cairn", "redis"])
def test_query_buffer_shrinks_with_many_clients(request, name):
    srv = target(request, name)
    admin = srv.client()
    others = [srv.client() for _ in range(NCLIENTS)]
    for c in others:
        c.ping()
    big = srv.client()
    big.execute_command("CLIENT", "SETNAME", "big")
    # One request of 1 MB grows the query buffer; idle afterwards, it is
    # given back by the cron whatever position the client has in the list.
    big.set("k", b"x" * (1 << 20))

    def qbuf_total():
        for line in admin.execute_command("CLIENT", "LIST").decode().splitlines():
            fields = dict(f.split("=", 1) for f in line.split(" "))
            if fields["name"] == "big":
                return int(fields["qbuf"]) + int(fields["qbuf-free"])
        return None

    wait_for(lambda: (qbuf_total() or 0) < 64 * 1024, timeout=15, what="the query buffer's shrink")
    assert big.get("k") == b"x" * (1 << 20)


def test_clients_closing_while_the_walk_runs(start_server):
    srv = start_server()
    admin = srv.client()
    admin.config_set("timeout", 1)
    # Clients come and go while the cron walks: closed ones (by the peer, by
    # CLIENT KILL, by the timeout) are unlinked under the walk's cursor.
    for rnd in range(5):
        cs = [srv.client() for _ in range(30)]
        for i, c in enumerate(cs):
            c.execute_command("CLIENT", "SETNAME", "r%d_%d" % (rnd, i))
        for c in cs[::2]:
            c.close()
        if rnd == 4:
            admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        time.sleep(0.15)
        assert admin.ping()
    wait_for(lambda: not [n for n in names(admin) if n.startswith("r")], timeout=20,
             what="every client closed")
    assert admin.ping()
