"""Module API, tests/modules/misc3.c and misc3user.c (issue 41): the event
loop (a pipe's read end watched while a thread writes; one-shots queued
from a thread), shared APIs between modules and MODULE UNLOAD's refusal
while one is used, random bytes, memory sizes and ratio, the monotonic
clock, LatencyAddSample, PublishMessage(Shard) and RedisModule_Assert.
Each module is loaded into Cairn and into redis-server 7.0.15; the same
commands must give the same bytes."""
import signal
import subprocess
import time

import redis

import pytest

from resphelp import encode, read_values
from waithelp import wait_for
from test_cluster import wait_ok
from test_modules import ROOT, built_modules, loaded, mod, plain, same  # noqa: F401 (built_modules: the autouse fixture)


def _both(start_server, start_oracle, *mods, **cfg):
    return loaded(start_server, *mods, **cfg), loaded(start_oracle, *mods, **cfg)


@pytest.mark.parametrize("resp", [2, 3])
def test_deterministic_replies_match_redis(start_server, start_oracle, resp):
    s, o = _both(start_server, start_oracle, "misc3")
    same(s, o, [("m3.errs",), ("m3.rand", "1"), ("m3.rand", "33"), ("m3.rand", "4096"), ("m3.rand", "0"),
                ("m3.ratio",), ("m3.sizes",), ("m3.mono",), ("m3.export", "misc3.add"),
                ("m3.export", "other"), ("m3.export", "other"), ("m3.publish", "ch", "m"),
                ("m3.spublish", "ch", "m"), ("m3.latency", "ev", "5")], resp)


def test_event_loop_pipe_and_oneshot(start_server, start_oracle):
    for srv in _both(start_server, start_oracle, "misc3"):
        r = plain(srv)
        for i in range(5):
            assert r.execute_command("m3.pipe", "p%d" % i, "via-pipe-%d" % i) == b"OK"
            assert r.execute_command("m3.oneshot", "o%d" % i, "via-oneshot-%d" % i) == b"OK"
        for i in range(5):
            wait_for(lambda: r.get("p%d" % i) == b"via-pipe-%d" % i, timeout=10, what="pipe callback %d" % i)
            wait_for(lambda: r.get("o%d" % i) == b"via-oneshot-%d" % i, timeout=10, what="one-shot %d" % i)
        assert r.execute_command("PING") == b"PONG"


def test_memory_ratio_with_maxmemory(start_server, start_oracle):
    for srv in _both(start_server, start_oracle, "misc3", maxmemory="100mb"):
        r = plain(srv)
        ratio = float(r.execute_command("m3.ratio"))
        used = int(srv.client().info("memory")["used_memory"])
        assert 0 < ratio <= used / (100 * 1024 * 1024) * 1.01
        r.config_set("maxmemory", "0")
        assert float(r.execute_command("m3.ratio")) == 0


def test_publish_reaches_subscribers(start_server, start_oracle):
    got = []
    for srv in _both(start_server, start_oracle, "misc3"):
        r = plain(srv)
        with srv.connect() as sub:
            sub.send(encode("SUBSCRIBE", "ch") + encode("SSUBSCRIBE", "sch"))
            acks = read_values(sub, 2)
            assert r.execute_command("m3.publish", "ch", "hello") == 1
            assert r.execute_command("m3.spublish", "sch", "shard") == 1
            assert r.execute_command("m3.publish", "nobody", "x") == 0
            got.append((acks, read_values(sub, 2)))
    assert got[0] == got[1]
    assert got[0][1] == encode("message", "ch", "hello") + encode("smessage", "sch", "shard")


def test_latency_sample_shows_in_latency_latest(start_server, start_oracle):
    out = []
    for srv in _both(start_server, start_oracle, "misc3", **{"latency-monitor-threshold": "100"}):
        r = plain(srv)
        r.execute_command("m3.latency", "mod-below", "99")
        r.execute_command("m3.latency", "mod-ev", "150")
        r.execute_command("m3.latency", "mod-ev", "120")
        latest = r.execute_command("LATENCY", "LATEST")
        out.append(sorted((e[0], e[2], e[3]) for e in latest if e[0].startswith(b"mod-")))
        hist = r.execute_command("LATENCY", "HISTORY", "mod-below")
        assert hist == []
    # two samples in one second: the larger is kept, as Redis
    assert out[0] == out[1] == [(b"mod-ev", 150, 150)]


def test_shared_api_and_unload_refusal(start_server, start_oracle):
    texts = []
    for srv in _both(start_server, start_oracle, "misc3", "misc3user"):
        r = plain(srv)
        assert r.execute_command("m3u.get", "nosuch") == 0
        # looked up but not found: no dependency
        assert r.execute_command("MODULE", "UNLOAD", "misc3") == b"OK"
        assert r.execute_command("m3u.add", "2", "3") is None
        r.execute_command("MODULE", "LOAD", mod("misc3"))
        assert r.execute_command("m3u.add", "2", "40") == 42
        with pytest.raises(Exception) as e:
            r.execute_command("MODULE", "UNLOAD", "misc3")
        texts.append(str(e.value))
        assert r.execute_command("m3u.add", "1", "1") == 2
        assert r.execute_command("MODULE", "UNLOAD", "misc3user") == b"OK"
        assert r.execute_command("MODULE", "UNLOAD", "misc3") == b"OK"
        # the export left with its module: loading it again exports anew
        r.execute_command("MODULE", "LOAD", mod("misc3"))
        assert r.execute_command("m3.export", "misc3.add") == 0
    assert texts[0] == texts[1]
    assert "exports APIs used by other modules" in texts[0]


def test_assert_logs_and_aborts(start_server, start_oracle):
    for srv in _both(start_server, start_oracle, "misc3"):
        with srv.connect() as c:
            c.send(b"*1\r\n$9\r\nm3.assert\r\n")
            wait_for(lambda: not srv.alive(), timeout=20, what="server aborts")
        log = srv.log
        assert "=== ASSERTION FAILED ===" in log
        assert "'argc == 100' is not true" in log


def test_cluster_api_without_cluster(start_server, start_oracle):
    s, o = _both(start_server, start_oracle, "misc3")
    same(s, o, [("m3.nodes",), ("m3.clusterflags", "6"), ("GET", "k")])
    # (redis-server 7.0.15 dereferences its absent cluster state here: not asked)
    assert raw_err(s, "m3.nodeinfo", "a" * 40) == "no such node"


def raw_err(srv, *cmd):
    with pytest.raises(Exception) as e:
        plain(srv).execute_command(*cmd)
    return str(e.value)


def test_cluster_api_single_node(start_server, start_oracle):
    s, o = _both(start_server, start_oracle, "misc3", cluster_enabled="yes")
    out = []
    for srv in (s, o):
        r = plain(srv)
        me = r.execute_command("CLUSTER", "MYID")
        assert r.execute_command("m3.nodes") == [me]
        ip, master, port, flags = r.execute_command("m3.nodeinfo", me)
        assert master == b"\0" * 40 and port == srv.port and flags == 3  # MYSELF|MASTER
        out.append((ip, master, flags))
        assert raw_err(srv, "m3.nodeinfo", "b" * 40) == "no such node"
        assert raw_err(srv, "m3.nodeinfo", "short") == "no such node"
    assert out[0] == out[1]
    # no slot served: CLUSTERDOWN, until NO_REDIRECTION; then every key is served here
    got = same(s, o, [("SET", "foo", "1"), ("GET", "foo"), ("m3.clusterflags", "4"), ("SET", "foo", "1"),
                      ("GET", "foo"), ("MSET", "a", "1", "b", "2"), ("MGET", "a", "b", "foo")])
    assert got[0] == b"-CLUSTERDOWN Hash slot not served\r\n" and got[4] == b"$1\r\n1\r\n"


def test_cluster_api_moved_until_no_redirection(start_server, start_oracle):
    """Slots 0-8000 served: 'b' (3300) is, 'a' (15495) answers CLUSTERDOWN
    Hash slot not served, and so does an MGET of both; with
    NO_REDIRECTION both are served here."""
    s, o = _both(start_server, start_oracle, "misc3", cluster_enabled="yes", cluster_require_full_coverage="no")
    for srv in (s, o):
        plain(srv).execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "8000")
        wait_ok(srv)
    got = same(s, o, [("SET", "a", "1"), ("SET", "b", "2"), ("MGET", "a", "b"), ("m3.clusterflags", "4"),
                      ("SET", "a", "1"), ("MGET", "a", "b")])
    assert got[0].startswith(b"-CLUSTERDOWN") and got[1] == b"+OK\r\n" and got[2] == got[0]
    assert got[5] == b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"


@pytest.mark.parametrize("kind", ["c", "r"])
def test_no_failover_flag_stops_automatic_failover(start_server, start_oracle, kind):
    """3 primaries and a replica of the first, misc3 loaded on each (all
    Cairn, or all redis-server): the module API sees the four nodes and the
    replica's master.  With SetClusterFlags(NO_FAILOVER) on the replica a
    CLUSTER FAILOVER still swaps the roles (as redis-server 7.0.15); with it
    on the old primary, now the replica, killing the new primary leaves it
    a replica: no election starts while the others see the primary failed
    (waited for: four times the longest election delay of a rank-0
    replica)."""
    from test_cluster_bus import add_replica, cl, create, make, myid, nodes_of
    cfg = {"config_file": "enable-module-command yes\nloadmodule %s\n" % mod("misc3")}
    nodes = make(start_server, start_oracle, kind * 3, **cfg)
    rep = make(start_server, start_oracle, kind, **cfg)[0]
    create(nodes)
    add_replica(nodes, rep, nodes[0])
    r = plain(rep)
    ids = sorted(r.execute_command("m3.nodes"))
    assert ids == sorted(myid(n).encode() for n in nodes + [rep])
    ip, master, port, flags = r.execute_command("m3.nodeinfo", myid(rep))
    assert master == myid(nodes[0]).encode() and port == rep.port and flags == 1 | 4  # MYSELF|SLAVE
    assert r.execute_command("m3.nodeinfo", myid(nodes[1]))[3] == 2  # MASTER
    assert r.execute_command("m3.clusterflags", "2") == b"OK"
    assert cl(rep).execute_command("CLUSTER", "FAILOVER") == b"OK"

    def swapped():
        v = nodes_of(nodes[1])
        return "master" in v[myid(rep)][0] and "slave" in v[myid(nodes[0])][0]
    wait_for(swapped, timeout=30, what="the roles to swap", step=0.2, ignore=(redis.RedisError,))
    old = nodes[0]
    wait_for(lambda: cl(old).info("replication").get("master_link_status") == "up", timeout=30,
             what="the old primary to replicate the new one")
    assert plain(old).execute_command("m3.clusterflags", "2") == b"OK"
    rid = myid(rep)
    rep.proc.send_signal(signal.SIGKILL)
    rep.proc.wait(timeout=10)
    try:
        wait_for(lambda: "fail" in nodes_of(old)[rid][0] and "fail" in nodes_of(nodes[1])[rid][0],
                 timeout=30, what="the primary seen failed", step=0.2, ignore=(redis.RedisError,))
    except AssertionError:
        print(nodes_of(old), nodes_of(nodes[1]))
        raise
    time.sleep(4.0)
    assert "slave" in nodes_of(old)[myid(old)][0]
    assert "slave" in nodes_of(nodes[1])[myid(old)][0]


def test_load_use_unload_100_times(start_server):
    """misc3 and misc3user loaded, used (shared API, a watched pipe, a
    one-shot) and unloaded 100 times: the server stays up, its command
    table and MODULE LIST come back (the sanitizer build's exit report:
    no leak)."""
    srv = start_server(enable_module_command="yes")
    r = plain(srv)
    count = r.execute_command("COMMAND", "COUNT")
    for i in range(100):
        assert r.execute_command("MODULE", "LOAD", mod("misc3")) == b"OK"
        assert r.execute_command("MODULE", "LOAD", mod("misc3user")) == b"OK"
        assert r.execute_command("m3u.add", str(i), "1") == i + 1
        assert r.execute_command("m3.pipe", "p", "v%d" % i) == b"OK"
        assert r.execute_command("m3.oneshot", "o", "v%d" % i) == b"OK"
        wait_for(lambda: r.get("p") == r.get("o") == b"v%d" % i, timeout=10, what="callbacks %d" % i)
        assert r.execute_command("m3.sizes") == [1, 1, 1]
        for name in ("misc3user", "misc3"):
            assert r.execute_command("MODULE", "UNLOAD", name) == b"OK"
        assert r.execute_command("COMMAND", "COUNT") == count
    assert r.execute_command("MODULE", "LIST") == []


def test_cluster_messages_without_cluster(start_server, start_oracle):
    s, o = _both(start_server, start_oracle, "misc3")
    same(s, o, [("m3.msgrecv", "5"), ("m3.msgsend", "*", "5", "x"), ("m3.msgsend", "a" * 40, "5", "x")])


@pytest.mark.parametrize("kinds", ["cc", "cr", "rc"])
def test_cluster_messages_between_two_nodes(start_server, start_oracle, kinds):
    """Two nodes (Cairn and/or redis-server) met on the bus, misc3 on each:
    a message to one node by id and one to every node arrive at the other
    node's receiver of that type, with the sender's id and the payload
    (binary, and empty); an unknown target or one without a link is ERR;
    a type with no receiver is dropped."""
    from test_cluster_bus import cl, make, myid, nodes_of
    cfg = {"config_file": "enable-module-command yes\nloadmodule %s\nloadmodule %s\n" % (mod("misc3"), mod("misc3user"))}
    a, b = make(start_server, start_oracle, kinds, **cfg)
    cl(a).execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)

    def linked():
        return all(len(nodes_of(n)) == 2 and not any("handshake" in v[0] or "noaddr" in v[0]
                                                     for v in nodes_of(n).values())
                   for n in (a, b))
    wait_for(linked, timeout=30, what="the nodes to meet", step=0.2, ignore=(redis.RedisError,))
    ida, idb = myid(a), myid(b)
    for n in (a, b):
        assert plain(n).execute_command("m3.msgrecv", "7") == b"OK"
        assert plain(n).execute_command("m3.msgrecv", "0") == b"OK"
        # no slot is served: NO_REDIRECTION lets the test read the keys
        assert plain(n).execute_command("m3.clusterflags", "4") == b"OK"
    ra, rb = plain(a), plain(b)
    # the link from a to b may come up a moment after the meeting
    wait_for(lambda: ra.execute_command("m3.msgsend", idb, "7", b"bin\x00\xffary") == 1, timeout=10,
             what="a link to b")
    wait_for(lambda: rb.get("msg:7") == ida.encode() + b":bin\x00\xffary", timeout=10, what="a's message at b")
    wait_for(lambda: rb.execute_command("m3.msgsend", "*", "0", "") == 1, timeout=10, what="a link to a")
    wait_for(lambda: ra.get("msg:0") == idb.encode() + b":", timeout=10, what="b's broadcast at a")
    assert ra.execute_command("m3.msgsend", "f" * 40, "7", "x") == 0
    assert ra.execute_command("m3.msgsend", "short", "7", "x") == 0
    assert ra.execute_command("m3.msgsend", idb, "9", "nobody") == 1
    assert ra.execute_command("m3.msgsend", idb, "7", "last") == 1
    wait_for(lambda: rb.get("msg:7") == ida.encode() + b":last", timeout=10, what="the last message")
    assert rb.get("msg:9") is None
    # misc3user's 9-character name gives a non-zero module id: its messages
    # reach only its own receiver (misc3's of the same type hears nothing)
    assert rb.execute_command("m3u.msgrecv", "7") == b"OK"
    assert ra.execute_command("m3u.msgsend", idb, "7", "from-user") == 1
    wait_for(lambda: rb.get("umsg:7") == ida.encode() + b":from-user", timeout=10, what="misc3user's message")
    assert ra.execute_command("m3.msgsend", idb, "7", "after") == 1
    wait_for(lambda: rb.get("msg:7") == ida.encode() + b":after", timeout=10, what="misc3's next message")
    assert rb.get("umsg:7") == ida.encode() + b":from-user"
