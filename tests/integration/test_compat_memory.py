"""Issue 33's memory accounting and client limits, against redis-server
7.0.15 where both servers can be put in the same state: CONFIG SET
maxmemory evicting at once, what a client's memory counts (CLIENT LIST
tot-mem / qbuf / multi-mem), client eviction, the output-buffer soft limit
from cron, CLIENT LIST's order, the reply buffer's resizing (rbs/rbp, DEBUG
REPLYBUFFER) and DEBUG CLIENT-EVICTION."""
import re
import time

import pytest
import redis

from compare import BOTH

KB = 1024
MB = 1024 * 1024


def target(request, name, **cfg):
    factory = "start_server" if name == "server" else "start_oracle"
    cfg.setdefault("enable_debug_command", "yes")
    return request.getfixturevalue(factory)(**cfg)


def wait_for(cond, timeout=10.0, step=0.02):
    """Polls cond() until it is true (bounded); returns its last value."""
    deadline = time.monotonic() + timeout
    v = cond()
    while not v and time.monotonic() < deadline:
        time.sleep(step)
        v = cond()
    return v


def client_fields(r, name):
    """CLIENT LIST's fields of the client named `name` (None: not listed)."""
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" "))
        if fields["name"] == name:
            return fields
    return None


def field(r, name, f):
    got = client_fields(r, name)
    return None if got is None else int(got[f])


def named(srv, name):
    c = srv.client()
    c.execute_command("CLIENT", "SETNAME", name)
    return c


# --- item 4: CONFIG SET maxmemory below used memory evicts at once ---


@pytest.mark.parametrize("name", BOTH)
def test_config_set_maxmemory_evicts_without_another_command(request, name):
    srv = target(request, name)
    r = srv.client()
    r.config_set("notify-keyspace-events", "Ee")
    ps = srv.client().pubsub()
    ps.psubscribe("__keyevent@*__:evicted")
    assert ps.get_message(timeout=5)["type"] == "psubscribe"
    for i in range(200):
        r.set("k%d" % i, "x" * 10000)
    used = int(r.info("memory")["used_memory"])
    r.config_set("maxmemory-policy", "allkeys-random")
    # Inside MULTI: the eviction starts right after the command (Redis
    # 7.0 starts its eviction timer), not inside it.
    p = r.pipeline(transaction=True)
    p.dbsize()
    p.config_set("maxmemory", used - 1 * MB)
    p.dbsize()
    assert p.execute() == [200, True, 200]
    # No other command is sent on any connection: the events come anyway.
    events = []
    deadline = time.monotonic() + 10
    while len(events) < 50 and time.monotonic() < deadline:
        m = ps.get_message(timeout=1)
        if m and m["type"] == "pmessage":
            events.append(m["data"])
    assert len(events) >= 50
    assert all(e.startswith(b"k") for e in events)
    assert "WARNING: the new maxmemory value set via CONFIG SET (%d) is smaller than the current memory usage" \
        % (used - 1 * MB) in srv.log
    assert r.dbsize() < 200
    assert r.info("stats")["evicted_keys"] == 200 - r.dbsize()


# --- item 22: CLIENT LIST order; the soft output limit from cron ---


@pytest.mark.parametrize("name", BOTH)
def test_client_list_oldest_first(request, name):
    srv = target(request, name)
    r = srv.client()
    r.ping()
    conns = [named(srv, "c%d" % i) for i in range(4)]
    del conns[1]  # the list stays ordered when one in the middle goes
    r.execute_command("CLIENT", "KILL", "SKIPME", "no", "ID", str(field(r, "c1", "id")))
    conns.append(named(srv, "c4"))
    ids = [int(line.split(" ")[0][3:]) for line in r.execute_command("CLIENT", "LIST").decode().splitlines()]
    assert ids == sorted(ids) and len(ids) == 5
    names = [line.split(" ")[4] for line in r.execute_command("CLIENT", "LIST").decode().splitlines()]
    assert names == ["name=", "name=c0", "name=c2", "name=c3", "name=c4"]


@pytest.mark.parametrize("name", BOTH)
def test_output_soft_limit_closes_an_idle_client_from_cron(request, name):
    srv = target(request, name)
    r = srv.client()
    r.config_set("client-output-buffer-limit", "normal 0 256kb 1")
    r.set("big", "v" * (1 * MB))
    c = srv.connect()
    c.send(b"CLIENT SETNAME slow\r\n")
    c.expect(b"+OK\r\n")
    # Many replies the client never reads: the output passes the soft limit
    # once, then nothing more is written to it.
    c.send(b"GET big\r\n" * 16)
    assert wait_for(lambda: (field(r, "slow", "omem") or 0) > 256 * KB)
    # Closed after the soft seconds, though no more output comes.
    assert wait_for(lambda: client_fields(r, "slow") is None, timeout=8)
    c.close()
