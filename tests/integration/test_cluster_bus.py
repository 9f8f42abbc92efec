"""The cluster bus (issue 36): Cairn nodes, and Cairn mixed with
redis-server 7.0.15 nodes, form one cluster over Redis 7.0's binary bus
protocol, as users build it: `redis-cli --cluster create/check/reshard/
rebalance`, redis-py's RedisCluster client, CLUSTER REPLICATE, automatic
failover after a SIGKILL (WAIT-acknowledged writes kept), manual failover,
PUBLISH/SPUBLISH across the bus, and hostile bytes on the bus port.

Every node gets an explicit cluster-port (a free port), and a short
cluster-node-timeout so failures are detected quickly.  Waits are bounded
(waithelp); processes are stopped by the fixtures."""
import os
import shutil
import signal
import socket
import struct
import subprocess
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import cairn_bin, free_port
from waithelp import poll, wait_for

CLI = shutil.which("redis-cli")
pytestmark = pytest.mark.skipif(not CLI, reason="redis-cli (Debian's redis-tools) is needed for --cluster")

TIMEOUT_MS = 1500


def node(start, **extra):
    cfg = {"cluster_enabled": "yes", "cluster_node_timeout": str(TIMEOUT_MS), "cluster_port": str(free_port())}
    cfg.update(extra)
    s = start(**cfg)
    s.cport = int(cfg["cluster_port"])
    s.cfg0 = cfg
    return s


def restart(n):
    """Stops n and starts it again on its ports, in its directory."""
    port = n.port
    n.stop()
    n.config = dict(n.cfg0, port=port)
    n._cc = None
    n._start()


def make(start_server, start_oracle, kinds, **extra):
    """Nodes in order of kinds: 'c' a Cairn node, 'r' a redis-server."""
    return [node(start_server if k == "c" else start_oracle, **extra) for k in kinds]


def cl(n):
    """One client per node for the whole test (polls reuse it)."""
    if getattr(n, "_cc", None) is None:
        n._cc = n.client()
    return n._cc


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    k = key.encode() if isinstance(key, str) else key
    s = k.find(b"{")
    if s != -1:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) % 16384


def cli(*args, timeout=120):
    p = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def addr(s):
    return "127.0.0.1:%d" % s.port


def create(nodes, replicas=0):
    rc, out = cli("--cluster", "create", *[addr(n) for n in nodes], "--cluster-replicas", replicas,
                  "--cluster-yes")
    assert rc == 0 and "[OK] All 16384 slots covered." in out, out
    wait_consistent(nodes)


def check(n):
    rc, out = cli("--cluster", "check", addr(n))
    assert rc == 0, out
    assert "[OK] All nodes agree about slots configuration." in out, out
    assert "[OK] All 16384 slots covered." in out, out
    assert "[WARNING]" not in out and "[ERR]" not in out, out
    return out


def nodes_of(n):
    """CLUSTER NODES of n parsed: {id: (flags set, master id, slots text)}."""
    out = {}
    for line in cl(n).execute_command("CLUSTER", "NODES").decode().splitlines():
        f = line.split()
        out[f[0]] = (set(f[2].split(",")) - {"myself"}, f[3], " ".join(f[8:]), f[1])
    return out


def signature(n):
    return sorted((k, v[1], v[2], "fail" in v[0], "master" in v[0]) for k, v in nodes_of(n).items())


def wait_consistent(nodes, timeout=40):
    """Every node knows every node, agrees on roles and slots, and says
    cluster_state:ok."""
    def ok():
        sigs = [signature(n) for n in nodes]
        if any(s != sigs[0] for s in sigs) or len(sigs[0]) != len(nodes):
            return False
        return all(b"cluster_state:ok" in cl(n).execute_command("CLUSTER", "INFO") for n in nodes)
    wait_for(ok, timeout=timeout, what="the nodes to agree", step=0.2, ignore=(redis.RedisError,))


def cluster_client(n):
    return RedisCluster(host="127.0.0.1", port=n.port, socket_timeout=10)


def myid(n):
    return cl(n).execute_command("CLUSTER", "MYID").decode()


def owner_port(n, slot):
    for start, end, master, *_ in cl(n).execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return master[1]
    return None


@pytest.mark.parametrize("kinds", ["ccc", "ccr", "crr"])
def test_create_check_and_client(start_server, start_oracle, kinds):
    """--cluster create of 3 primaries (Cairn only, or mixed with
    redis-server), --cluster check OK from every node, redis-py's cluster
    client follows MOVED and spreads keys over every node."""
    nodes = make(start_server, start_oracle, kinds)
    create(nodes)
    for n in nodes:
        check(n)
    rc = cluster_client(nodes[0])
    for i in range(600):
        rc.set("key:%d" % i, i)
    assert all(int(rc.get("key:%d" % i)) == i for i in range(600))
    sizes = [cl(n).dbsize() for n in nodes]
    assert sum(sizes) == 600 and all(s > 100 for s in sizes), sizes
    # the wrong node answers MOVED to the right one
    slot = cl(nodes[0]).execute_command("CLUSTER", "KEYSLOT", "key:1")
    assert slot == key_slot("key:1")
    owner = next(n for n in nodes if n.port == owner_port(nodes[0], slot))
    other = next(n for n in nodes if n is not owner)
    with pytest.raises(redis.ResponseError, match="MOVED %d 127.0.0.1:%d" % (slot, owner.port)):
        cl(other).get("key:1")
    for n in nodes:
        info = cl(n).execute_command("CLUSTER", "INFO").decode()
        assert "cluster_known_nodes:3" in info and "cluster_size:3" in info
        assert "cluster_stats_messages_ping_received:" in info and "cluster_stats_messages_pong_sent:" in info
        if n.binary.endswith("cairn-server"):
            # an outbound and an inbound link per other node (an inbound
            # one appears when the peer's cron connects: wait for it)
            wait_for(lambda: len(cl(n).execute_command("CLUSTER", "LINKS")) == 4, 30, "both links to each node")
            links = cl(n).execute_command("CLUSTER", "LINKS")
            assert len(links) == 4, links
            ids = {myid(x) for x in nodes if x is not n}
            assert {dict(zip(l[::2], l[1::2]))[b"node"].decode() for l in links} == ids
        # CLUSTER SHARDS: one shard per primary, each with its slots
        shards = cl(n).execute_command("CLUSTER", "SHARDS")
        assert len(shards) == 3


def test_nodes_conf_keeps_the_cluster_across_restart(start_server):
    nodes = make(start_server, None, "ccc")
    create(nodes)
    before = signature(nodes[1])
    epoch = cl(nodes[1]).execute_command("CLUSTER", "INFO")
    restart(nodes[1])
    wait_consistent(nodes)
    assert signature(nodes[1]) == before
    assert b"cluster_current_epoch:3" in epoch
    after = cl(nodes[1]).execute_command("CLUSTER", "INFO")
    assert b"cluster_current_epoch:3" in after and b"cluster_my_epoch:2" in after


@pytest.mark.parametrize("kinds", ["cccccc", "rrrccc", "cccrrr"])
def test_replicas_and_readonly(start_server, start_oracle, kinds):
    """--cluster-replicas 1 with 6 nodes (Cairn, or 3 Redis primaries with
    3 Cairn replicas, or the reverse as far as redis-cli's placement goes);
    a replica serves reads after READONLY and redirects without it."""
    nodes = make(start_server, start_oracle, kinds)
    create(nodes, replicas=1)
    check(nodes[0])
    view = nodes_of(nodes[0])
    replicas = [k for k, v in view.items() if "slave" in v[0]]
    assert len(replicas) == 3
    rc = cluster_client(nodes[0])
    for i in range(200):
        rc.set("r:%d" % i, i)
    byid = {myid(n): n for n in nodes}
    for rid in replicas:
        rep = byid[rid]
        master = byid[view[rid][1]]
        key = next(k for k in ("r:%d" % i for i in range(200))
                   if owner_port(master, key_slot(k)) == master.port)
        wait_for(lambda: cl(rep).dbsize() == cl(master).dbsize(), timeout=30, what="replica synced",
                 ignore=(redis.RedisError,))
        c = cl(rep)
        with pytest.raises(redis.ResponseError, match="MOVED"):
            c.get(key)
        c2 = redis.Redis(host="127.0.0.1", port=rep.port, single_connection_client=True)
        assert c2.execute_command("READONLY") in (True, b"OK")
        assert c2.get(key) is not None
        with pytest.raises(redis.ResponseError, match="MOVED"):
            c2.set(key, "x")
        c2.close()


def add_replica(nodes, rep, master):
    add_replicas(nodes, [(rep, master)])


def add_replicas(nodes, pairs):
    """Each (rep, master) of pairs: rep meets the cluster, replicates
    master, its link is up; all of them at once (each step waits for every
    new node), then every node agrees."""
    for rep, _ in pairs:
        cl(rep).execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[0].port, nodes[0].cport)
    for rep, master in pairs:
        wait_for(lambda: "master" in nodes_of(rep).get(myid(master), ({""},))[0], timeout=20,
                 what="the new node to learn the master")
        assert cl(rep).execute_command("CLUSTER", "REPLICATE", myid(master)) == b"OK"
    for rep, _ in pairs:
        wait_for(lambda: (cl(rep).info("replication").get("master_link_status") == "up"), timeout=30,
                 what="replica link up")
    wait_consistent(nodes + [rep for rep, _ in pairs])


@pytest.mark.parametrize("kinds", ["cccc", "crrr", "rccc"])
def test_sigkill_primary_replica_takes_over(start_server, start_oracle, kinds):
    """3 primaries, a replica of the first (kinds[3]); SIGKILL of the first
    primary: its replica wins the election and serves its slots, and every
    write acknowledged by WAIT 1 before the kill is there."""
    nodes = make(start_server, start_oracle, kinds[:3])
    rep = make(start_server, start_oracle, kinds[3])[0]
    create(nodes)
    victim = nodes[0]
    add_replica(nodes, rep, victim)
    c = cl(victim)
    vid = myid(victim)
    written = []
    for i in range(3000):
        k = "w:%d" % i
        if key_slot(k) <= 5460:
            c.set(k, i)
            written.append(k)
    assert c.execute_command("WAIT", 1, 5000) == 1
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait(timeout=10)
    survivors = nodes[1:] + [rep]

    def promoted():
        v = nodes_of(rep)
        return "master" in v[myid(rep)][0] and v[myid(rep)][2].startswith("0-5460") and "fail" in v[vid][0]
    wait_for(promoted, timeout=40, what="the replica to take over", step=0.2, ignore=(redis.RedisError,))
    wait_for(lambda: all(b"cluster_state:ok" in cl(n).execute_command("CLUSTER", "INFO") for n in survivors),
             timeout=30, what="cluster ok again", step=0.2)
    r = cl(rep)
    p = r.pipeline(transaction=False)
    for k in written:
        p.get(k)
    assert [int(v) for v in p.execute()] == [int(k.split(":")[1]) for k in written]
    for n in nodes[1:]:
        assert "fail" in nodes_of(n)[vid][0]
    # and writes go on through the new primary
    rc = cluster_client(nodes[1])
    rc.set(written[0], "after")
    assert r.get(written[0]) == b"after"


@pytest.mark.parametrize("kinds,how", [("cccc", ""), ("rrrc", ""), ("cccr", ""), ("cccc", "FORCE"),
                                        ("cccc", "TAKEOVER")])
def test_manual_failover(start_server, start_oracle, kinds, how):
    nodes = make(start_server, start_oracle, kinds[:3])
    rep = make(start_server, start_oracle, kinds[3])[0]
    create(nodes)
    add_replica(nodes, rep, nodes[0])
    c = cl(nodes[0])
    key = next(k for k in ("x%d" % i for i in range(1000)) if key_slot(k) <= 5460)
    c.set(key, 1)
    args = ["CLUSTER", "FAILOVER"] + ([how] if how else [])
    with pytest.raises(redis.ResponseError, match="You should send CLUSTER FAILOVER to a replica"):
        c.execute_command(*args)
    assert cl(rep).execute_command(*args) == b"OK"

    def swapped():
        v = nodes_of(nodes[1])
        return "master" in v[myid(rep)][0] and "slave" in v[myid(nodes[0])][0]
    wait_for(swapped, timeout=30, what="the roles to swap", step=0.2, ignore=(redis.RedisError,))
    wait_consistent(nodes + [rep])
    assert cl(rep).get(key) == b"1"
    wait_for(lambda: cl(nodes[0]).info("replication").get("master_link_status") == "up", timeout=30,
             what="the old primary to replicate the new one")
    check(nodes[1])


@pytest.mark.parametrize("kinds", ["ccc", "crc", "rcr"])
def test_reshard_and_rebalance_with_keys(start_server, start_oracle, kinds):
    """--cluster reshard moves 1000 slots with their keys (SETSLOT
    IMPORTING/MIGRATING/NODE, MIGRATE) between Cairn and Redis nodes;
    --cluster rebalance evens them out again; nothing is lost."""
    nodes = make(start_server, start_oracle, kinds)
    create(nodes)
    rc = cluster_client(nodes[0])
    for i in range(3000):
        rc.set("m:%d" % i, i)
    src, dst = nodes[1], nodes[0]
    # a writer runs throughout the reshard; every write it saw acknowledged
    # must be readable afterwards
    import threading
    acked, failed, stop = {}, [], threading.Event()

    def writer():
        w = cluster_client(nodes[2])
        i = 0
        while not stop.is_set():
            k = "load:%d" % i
            try:
                w.set(k, i)
                acked[k] = i
            except Exception:  # a redirection the client gave up on: not acknowledged
                failed.append(k)
            i += 1
    th = threading.Thread(target=writer, daemon=True)
    th.start()
    try:
        out = cli("--cluster", "reshard", addr(nodes[0]), "--cluster-from", myid(src), "--cluster-to", myid(dst),
                  "--cluster-slots", 1000, "--cluster-yes", timeout=300)[1]
    finally:
        stop.set()
        th.join(timeout=30)
    assert "ERR" not in out, out[-2000:]
    assert len(acked) > 100
    rc = cluster_client(nodes[2])
    for k, v in acked.items():
        assert int(rc.get(k)) == v, k
    wait_consistent(nodes)
    check(nodes[2])
    owned = {myid(n): 0 for n in nodes}
    for start, end, master, *_ in cl(nodes[2]).execute_command("CLUSTER", "SLOTS"):
        owned[master[2].decode()] += end - start + 1
    assert owned[myid(dst)] == 5461 + 1000 and owned[myid(src)] == 5462 - 1000, owned
    rc = cluster_client(nodes[2])
    assert [int(rc.get("m:%d" % i)) for i in range(3000)] == list(range(3000))
    rcode, out = cli("--cluster", "rebalance", addr(nodes[0]), "--cluster-yes", timeout=300)
    assert rcode == 0, out[-2000:]
    wait_consistent(nodes)
    check(nodes[1])
    rc = cluster_client(nodes[1])
    assert [int(rc.get("m:%d" % i)) for i in range(3000)] == list(range(3000))
    total = sum(cl(n).dbsize() for n in nodes)
    assert 3000 + len(acked) <= total <= 3000 + len(acked) + len(failed), (total, len(acked), len(failed))


def test_ask_during_migration(start_server, start_oracle):
    """A slot half migrated from a Cairn node to a Redis node: the source
    answers ASK for keys already moved, the target serves them after
    ASKING; redis-py follows it."""
    nodes = make(start_server, start_oracle, "crc")
    create(nodes)
    src, dst = nodes[0], nodes[1]
    slot = 100
    keys = [k for k in ("s%d" % i for i in range(100000)) if key_slot(k) == slot][:2]
    s = cl(src)
    s.set(keys[0], "one")
    s.set(keys[1], "two")
    assert cl(dst).execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", myid(src)) == b"OK"
    assert s.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", myid(dst)) == b"OK"
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, keys[0], 0, 5000) == b"OK"
    with pytest.raises(redis.ResponseError, match="ASK %d 127.0.0.1:%d" % (slot, dst.port)):
        s.get(keys[0])
    assert s.get(keys[1]) == b"two"
    rc = cluster_client(nodes[2])
    assert rc.get(keys[0]) == b"one"
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, keys[1], 0, 5000) == b"OK"
    for n in nodes:
        assert cl(n).execute_command("CLUSTER", "SETSLOT", slot, "NODE", myid(dst)) == b"OK"
    wait_consistent(nodes)
    assert cluster_client(nodes[2]).get(keys[1]) == b"two"


def read_messages(ps, want, timeout=10):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        m = ps.get_message(timeout=0.2)
        if m and m["type"] in ("message", "smessage"):
            got.append(m["data"])
    return got


@pytest.mark.parametrize("kinds", ["ccc", "rcr"])
def test_publish_across_the_bus(start_server, start_oracle, kinds):
    nodes = make(start_server, start_oracle, kinds)
    rep = make(start_server, start_oracle, "c")[0]
    create(nodes)
    add_replica(nodes, rep, nodes[1])
    subs = []
    for n in nodes + [rep]:
        ps = cl(n).pubsub()
        ps.subscribe("news")
        wait_for(lambda: ps.get_message(timeout=0.2) is not None, what="subscribed")
        subs.append(ps)
    # PUBLISH on one node reaches subscribers on every node
    assert cl(nodes[0]).publish("news", "hello") == 1
    for ps in subs:
        assert read_messages(ps, 1) == [b"hello"]
    # SPUBLISH reaches the shard's nodes (the owner and its replica)
    chan = next(c for c in ("ch%d" % i for i in range(10000)) if 5461 <= key_slot(c) <= 10922)
    socks = []
    for n in (nodes[1], rep):
        sk = socket.create_connection(("127.0.0.1", n.port), timeout=10)
        sk.sendall(b"SSUBSCRIBE %s\r\n" % chan.encode())
        assert read_until(sk, b"ssubscribe")
        socks.append(sk)
    assert cl(nodes[1]).execute_command("SPUBLISH", chan, "sharded") == 1
    for sk in socks:
        assert read_until(sk, b"sharded")
        sk.close()
    for p in subs:
        p.close()


def read_until(sk, needle, timeout=10):
    data = b""
    deadline = time.monotonic() + timeout
    while needle not in data and time.monotonic() < deadline:
        try:
            b = sk.recv(4096)
        except socket.timeout:
            break
        if not b:
            break
        data += b
    return needle in data


# ---- hostile input on the bus port ------------------------------------------

def bus_send(n, data, read=False):
    s = socket.create_connection(("127.0.0.1", n.cport), timeout=5)
    try:
        s.sendall(data)
        if read:
            s.settimeout(2)
            out = b""
            try:
                while True:
                    b = s.recv(65536)
                    if not b:
                        break
                    out += b
            except socket.timeout:
                pass
            return out
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()


def header(mtype, totlen, count=0, sender=b"f" * 40, ver=1, mflags=0, exts=0):
    h = bytearray(2256)
    h[0:4] = b"RCmb"
    struct.pack_into(">IHHHH", h, 4, totlen, ver, 7000, mtype, count)
    h[40:80] = sender
    struct.pack_into(">H", h, 2214, exts)
    struct.pack_into(">HHH", h, 2246, 0, 17000, 1)
    h[2253] = mflags
    return bytes(h)


def forged_ping(n, sender, gossip):
    """A PING to n in the name of sender (a node n knows, with no slots),
    with sender's own address and epochs, carrying the gossip entries
    [(name, port, flags)]."""
    f = next(ln.split() for ln in cl(sender).execute_command("CLUSTER", "NODES").decode().splitlines()
             if "myself" in ln.split()[2])
    port, cport = (int(x) for x in f[1].split(",")[0].split(":")[1].split("@"))
    info = cl(sender).execute_command("CLUSTER", "INFO").decode()
    cur = int(dict(ln.split(":", 1) for ln in info.split("\r\n") if ":" in ln)["cluster_current_epoch"])
    h = bytearray(2256)
    h[0:4] = b"RCmb"
    struct.pack_into(">IHHHH", h, 4, 2256 + 104 * len(gossip), 1, port, 0, len(gossip))
    struct.pack_into(">QQ", h, 16, cur, int(f[6]))
    h[40:80] = f[0].encode()
    struct.pack_into(">HHH", h, 2246, 0, cport, 1)
    body = b""
    for name, gport, flags in gossip:
        g = bytearray(104)
        g[0:40] = name
        g[48:57] = b"127.0.0.1"
        struct.pack_into(">HHHH", g, 94, gport, gport + 10000, flags, 0)
        body += bytes(g)
    bus_send(n, bytes(h) + body)


@pytest.mark.parametrize("kind", ["c", "r"])
def test_gossiped_node_keeps_its_role(start_server, start_oracle, kind):
    """A node first heard of in gossip is known with the role the gossip
    gives it until it answers itself, as Redis does.  Known with none, a
    replica was gossiped on with none, and a Redis node that learns of a
    node so never flags it a replica (test_shards_and_replicas_views then
    saw Redis call the replica a master)."""
    a, b = make(start_server, start_oracle, kind * 2)
    cl(a).execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    wait_for(lambda: all(len(nodes_of(x)) == 2 and not any("handshake" in v[0] for v in nodes_of(x).values())
                         for x in (a, b)), timeout=20, what="the two nodes to meet", step=0.1)
    rep, prim = b"ab" * 20, b"cd" * 20
    forged_ping(a, b, [(rep, free_port(), 2), (prim, free_port(), 1)])
    wait_for(lambda: len(nodes_of(a)) == 4, timeout=10, what="the gossiped nodes", step=0.05)
    v = nodes_of(a)
    assert v[rep.decode()][:2] == ({"slave"}, "-"), v
    assert v[prim.decode()][:2] == ({"master"}, "-"), v


def test_hostile_bus_input(start_server, start_oracle):
    """Garbage, a wrong signature, truncated headers, lengths that lie,
    huge counts, wrong versions and broken extensions: refused without
    allocating what they claim; the node stays up and in its cluster."""
    nodes = make(start_server, start_oracle, "ccr")
    create(nodes)
    n = nodes[0]
    before = cl(n).info("memory")["used_memory"]
    bus_send(n, os.urandom(5000))
    bus_send(n, b"GET / HTTP/1.1\r\n\r\n")
    bus_send(n, b"RCmb")                                     # truncated before the length
    bus_send(n, b"RCmb" + struct.pack(">I", 0xFFFFFFFF))       # 4 GB claimed
    bus_send(n, b"RCmb" + struct.pack(">I", 100))              # shorter than a header
    bus_send(n, header(0, 2256 + 104 * 10)[:3000])             # the body never comes
    bus_send(n, header(0, 2256, count=65535))                  # count says 6.8 MB of gossip
    bus_send(n, header(0, 2256 + 104, count=1))                # one all-zero gossip entry
    bus_send(n, header(0, 2256, ver=2))                        # a later version
    bus_send(n, header(3, 2256))                               # FAIL without its name
    bus_send(n, header(4, 2256 + 8) + struct.pack(">II", 0xFFFFFFF0, 0xFFFFFFF0))  # PUBLISH lengths lie
    bus_send(n, header(0, 2256 + 8, mflags=4, exts=1) + struct.pack(">IHH", 0xFFFFFFF8, 0, 0))  # ext too long
    bus_send(n, header(0, 2256 + 8, mflags=4, exts=3) + struct.pack(">IHH", 8, 0, 0))  # more exts than bytes
    bus_send(n, header(7, 2256 + 2096))                        # UPDATE about an unknown node, unknown sender
    bus_send(n, header(99, 2256))                              # unknown type
    bus_send(n, header(2, 2256, sender=b"z" * 40) + b"x" * 10) # MEET with trailing bytes
    # messages in the node's own name change nothing (no node, no epoch)
    me = myid(n).encode()
    forged = bytearray(header(2, 2256, sender=me))
    struct.pack_into(">QQ", forged, 16, 10 ** 12, 10 ** 12)
    bus_send(n, bytes(forged))
    forged[12:14] = b"\x00\x00"  # as a PING
    bus_send(n, bytes(forged))
    info = cl(n).execute_command("CLUSTER", "INFO")
    assert b"cluster_current_epoch:3" in info and b"cluster_my_epoch:1" in info, info
    # a PING from an unknown sender is answered with a PONG, and nothing else changes
    pong = bus_send(n, header(0, 2256), read=True)
    assert pong[:4] == b"RCmb" and struct.unpack(">H", pong[12:14])[0] == 1
    assert n.alive()
    assert cl(n).ping()
    # counted (a Cairn line of INFO cluster, shown once not 0)
    assert cl(n).info("cluster")["cluster_bus_messages_rejected"] >= 10
    assert cl(n).info("memory")["used_memory"] < before + 4 * 1024 * 1024
    assert len(nodes_of(n)) == 3
    wait_consistent(nodes)
    check(nodes[2])


def test_meet_errors_as_redis(start_server, start_oracle):
    s = node(start_server)
    o = node(start_oracle)
    for args in [("nosuchhost", 7000), ("127.0.0.1", "x"), ("127.0.0.1", 70000), ("127.0.0.1", 7000, "y"),
                 ("300.1.1.1", 7000)]:
        outs = []
        for n in (s, o):
            try:
                outs.append(cl(n).execute_command("CLUSTER", "MEET", *args))
            except redis.ResponseError as e:
                outs.append(str(e))
        assert outs[0] == outs[1], (args, outs)


def config_epochs(n):
    out = {}
    for line in cl(n).execute_command("CLUSTER", "NODES").decode().splitlines():
        f = line.split()
        if "master" in f[2]:
            out[f[0]] = int(f[6])
    return out


def test_epoch_collisions_resolve_and_announced_names(start_server, start_oracle):
    """Masters meeting with one configEpoch (0, no SET-CONFIG-EPOCH) end
    with distinct epochs, Cairn and Redis nodes alike; an announced
    hostname and client port travel in the bus messages."""
    nodes = make(start_server, start_oracle, "crcc")
    cl(nodes[0]).config_set("cluster-announce-hostname", "cairn-a")
    cl(nodes[2]).config_set("cluster-announce-port", "1234")
    for i, n in enumerate(nodes):
        lo, hi = i * 4096, i * 4096 + 4095
        assert cl(n).execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi) == b"OK"
    for n in nodes[1:]:
        assert cl(n).execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[0].port, nodes[0].cport) == b"OK"
    wait_consistent(nodes)
    wait_for(lambda: all(len(set(config_epochs(n).values())) == 4 for n in nodes), timeout=30,
             what="distinct config epochs", step=0.2)
    assert len({tuple(sorted(config_epochs(n).items())) for n in nodes}) == 1
    for n in nodes[1:]:
        line = nodes_of(n)[myid(nodes[0])]
        assert line[3].endswith(",cairn-a"), line
        assert nodes_of(n)[myid(nodes[2])][3].startswith("127.0.0.1:1234@%d" % nodes[2].cport)
    # CLUSTER SLOTS names the hostname as Redis does
    slots = cl(nodes[1]).execute_command("CLUSTER", "SLOTS")
    first = next(s for s in slots if s[0] == 0)
    assert first[2][3] == [b"hostname", b"cairn-a"]


def test_add_node_del_node_and_reset(start_server, start_oracle):
    """--cluster add-node (a master, then a replica with
    --cluster-master-id), --cluster del-node, and CLUSTER RESET of a
    replica."""
    nodes = make(start_server, start_oracle, "ccr")
    create(nodes)
    extra = make(start_server, start_oracle, "cr")
    rc, out = cli("--cluster", "add-node", addr(extra[0]), addr(nodes[0]))
    assert rc == 0, out
    rc, out = cli("--cluster", "add-node", addr(extra[1]), addr(nodes[2]), "--cluster-slave",
                  "--cluster-master-id", myid(nodes[0]))
    assert rc == 0, out
    everyone = nodes + extra
    wait_consistent(everyone)
    check(nodes[1])
    assert nodes_of(nodes[1])[myid(extra[1])][1] == myid(nodes[0])
    assert "master" in nodes_of(nodes[2])[myid(extra[0])][0]
    # del-node of the empty master: forgotten by every node, and it shuts down
    gone = myid(extra[0])
    rc, out = cli("--cluster", "del-node", addr(nodes[0]), gone)
    assert rc == 0, out
    rest = nodes + [extra[1]]
    wait_for(lambda: all(gone not in nodes_of(n) for n in rest), timeout=20, what="the node forgotten")
    time.sleep(2 * TIMEOUT_MS / 1000)  # gossip does not bring it back
    assert all(gone not in nodes_of(n) for n in rest)
    wait_consistent(rest)
    check(nodes[0])
    # CLUSTER RESET on the Redis replica, then the same on a Cairn replica
    rep = extra[1]
    assert cl(rep).execute_command("CLUSTER", "RESET") == b"OK"
    assert len(nodes_of(rep)) == 1
    for n in nodes:
        assert cl(n).execute_command("CLUSTER", "FORGET", myid(rep)) == b"OK"
    cairn_rep = make(start_server, start_oracle, "c")[0]
    add_replica(nodes, cairn_rep, nodes[1])
    wait_for(lambda: cl(cairn_rep).dbsize() == cl(nodes[1]).dbsize(), timeout=20, what="synced")
    assert cl(cairn_rep).execute_command("CLUSTER", "RESET", "SOFT") == b"OK"
    info = cl(cairn_rep).info("replication")
    assert info["role"] == "master" and cl(cairn_rep).dbsize() == 0
    assert len(nodes_of(cairn_rep)) == 1 and "master" in nodes_of(cairn_rep)[myid(cairn_rep)][0]


@pytest.mark.parametrize("kinds", ["ccc", "ccr"])
def test_tls_cluster_bus(start_server, start_oracle, tls_certs, kinds):
    """tls-cluster yes: the bus runs over TLS (the connection layer's TLS
    type), with a redis-server node too; the announced client port is the
    TLS port, a plaintext client is sent to the plaintext one (pport)."""
    import tlshelp
    if not tlshelp.binary_has_tls(cairn_bin()):
        pytest.skip("Cairn built without TLS")
    nodes = []
    for k in kinds:
        tport = free_port()
        n = node(start_server if k == "c" else start_oracle,
                 **tlshelp.tls_args(tls_certs, tls_port=str(tport), tls_cluster="yes"))
        n.tport = tport
        nodes.append(n)
    for i, n in enumerate(nodes):
        lo, hi = i * 5462, min(i * 5462 + 5461, 16383)
        assert cl(n).execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi) == b"OK"
        assert cl(n).execute_command("CLUSTER", "SET-CONFIG-EPOCH", i + 1) == b"OK"
    for n in nodes[1:]:
        assert cl(n).execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[0].tport, nodes[0].cport) == b"OK"
    wait_consistent(nodes)
    for n in nodes:
        view = nodes_of(n)
        for m in nodes:
            # plaintext clients see the plaintext port
            assert view[myid(m)][3].startswith("127.0.0.1:%d@%d" % (m.port, m.cport)), view[myid(m)]
        # every link is TLS: a plaintext bus message is not understood
        assert b"RCmb" not in (bus_send(n, header(0, 2256), read=True) or b"")
    for m in nodes[1:]:
        slot = 5462 * nodes.index(m)
        key = next(k for k in ("t%d" % i for i in range(100000)) if key_slot(k) == slot)
        with pytest.raises(redis.ResponseError, match="MOVED %d 127.0.0.1:%d$" % (slot, m.port)):
            cl(nodes[0]).get(key)
    cnode = nodes[0]
    tc = redis.Redis(host="127.0.0.1", port=cnode.tport, ssl=True, ssl_certfile=tls_certs.crt("client"),
                     ssl_keyfile=tls_certs.key("client"), ssl_ca_certs=tls_certs.crt("ca"), ssl_check_hostname=False)
    key = next(k for k in ("t%d" % i for i in range(100000)) if key_slot(k) == 5462)
    with pytest.raises(redis.ResponseError, match="MOVED 5462 127.0.0.1:%d$" % nodes[1].tport):
        tc.get(key)
    tc.close()


def test_replica_migration_to_an_orphaned_master(start_server, start_oracle):
    """A master whose only replica dies gets one of the replicas of the
    master that has two (cluster-migration-barrier 1)."""
    nodes = make(start_server, start_oracle, "ccc")
    create(nodes)
    a, b = nodes[0], nodes[1]
    r1, r2, r3 = make(start_server, start_oracle, "ccr")
    add_replicas(nodes, [(r1, a), (r2, a), (r3, b)])
    r3id = myid(r3)
    r3.proc.send_signal(signal.SIGKILL)
    r3.proc.wait(timeout=10)
    ids = {myid(r1), myid(r2)}


    def migrated():
        v = nodes_of(nodes[2])
        return "fail" in v[r3id][0] and any(v[i][1] == myid(b) for i in ids)
    wait_for(migrated, timeout=40, what="a replica to migrate", step=0.2, ignore=(redis.RedisError,))
    v = nodes_of(nodes[2])
    moved = next(i for i in ids if v[i][1] == myid(b))
    assert moved == min(ids)  # the smallest name moves
    mover = r1 if myid(r1) == moved else r2
    wait_for(lambda: cl(mover).info("replication").get("master_port") == b.port, timeout=20,
             what="the migrated replica to replicate its new master")


def test_partition_minority_goes_down_and_heals(start_server, start_oracle):
    """Two of three masters stopped (SIGSTOP): the third, alone, declares
    the cluster down after the node timeout (-CLUSTERDOWN for its own
    slots); when they resume, the cluster is ok again."""
    nodes = make(start_server, start_oracle, "ccr")
    create(nodes)
    alone = nodes[0]
    key = next(k for k in ("p%d" % i for i in range(1000)) if key_slot(k) <= 5460)
    cl(alone).set(key, "v")
    for n in nodes[1:]:
        n.proc.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: b"cluster_state:fail" in cl(alone).execute_command("CLUSTER", "INFO"), timeout=30,
                 what="the minority to go down", step=0.2)
        with pytest.raises(redis.ResponseError, match="CLUSTERDOWN The cluster is down"):
            cl(alone).set(key, "w")
    finally:
        for n in nodes[1:]:
            n.proc.send_signal(signal.SIGCONT)
    wait_consistent(nodes)
    assert cl(alone).get(key) == b"v"
    cl(alone).set(key, "w")
    check(nodes[2])


IOREDIS_JS = r"""
const Redis = require('ioredis');
const c = new Redis.Cluster([{host: '127.0.0.1', port: +process.argv[1]}]);
(async () => {
  for (let i = 0; i < 500; i++) await c.set('io:' + i, String(i));
  let ok = 0;
  for (let i = 0; i < 500; i++) if (await c.get('io:' + i) === String(i)) ok++;
  const nodes = c.nodes('master').length;
  console.log(JSON.stringify({ok, nodes}));
  c.disconnect();
})().catch(e => { console.error(e); process.exit(1); });
"""


@pytest.mark.parametrize("kinds", ["ccc", "crc"])
def test_ioredis_cluster_client(start_server, start_oracle, kinds):
    """ioredis's Cluster client (npm, installed by scripts/deps.sh test)
    discovers the topology and follows MOVED."""
    import json
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mods = os.path.join(root, "build", "npm", "node_modules")
    node_bin = shutil.which("node") or shutil.which("nodejs")
    if not node_bin or not os.path.isdir(os.path.join(mods, "ioredis")):
        pytest.skip("node or ioredis missing (run: sh scripts/deps.sh test)")
    nodes = make(start_server, start_oracle, kinds)
    create(nodes)
    p = subprocess.run([node_bin, "-e", IOREDIS_JS, str(nodes[1].port)], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, NODE_PATH=mods))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == {"ok": 500, "nodes": 3}
    assert sum(cl(n).dbsize() for n in nodes) == 500 and all(cl(n).dbsize() > 100 for n in nodes)


def test_shards_and_replicas_views(start_server, start_oracle):
    """CLUSTER SHARDS, SLOTS and REPLICAS of a cluster with a replica agree
    between a Cairn and a Redis node (ids, roles, offsets moving)."""
    nodes = make(start_server, start_oracle, "crc")
    rep = make(start_server, start_oracle, "c")[0]
    create(nodes)
    add_replica(nodes, rep, nodes[1])
    for k in [k for k in ("sh%d" % i for i in range(300)) if 5461 <= key_slot(k) <= 10922]:
        cl(nodes[1]).set(k, 1)
    assert cl(nodes[1]).execute_command("WAIT", 1, 5000) == 1

    def shard_view(n):
        out = []
        for sh in cl(n).execute_command("CLUSTER", "SHARDS"):
            d = dict(zip(sh[::2], sh[1::2]))
            members = sorted((dict(zip(m[::2], m[1::2]))[b"id"], dict(zip(m[::2], m[1::2]))[b"role"],
                              dict(zip(m[::2], m[1::2]))[b"health"]) for m in d[b"nodes"])
            out.append((d[b"slots"], members))
        return sorted(out)
    if not poll(lambda: shard_view(nodes[0]) == shard_view(nodes[1]) == shard_view(rep), 60, 0.2):
        # What each node says, for the failure's report.  It missed its wait
        # three times when a Cairn node gossiped the replica before knowing
        # its role (test_gossiped_node_keeps_its_role).
        raise AssertionError("CLUSTER SHARDS still differ after 60 s:\n" + "\n".join(
            "%s %s: %r\n%s" % (n.binary, n.port, shard_view(n), cl(n).execute_command("CLUSTER", "NODES"))
            for n in (nodes[0], nodes[1], rep)))
    view = shard_view(nodes[0])
    assert sum(len(m) for _, m in view) == 4
    assert all(h == b"online" for _, m in view for _, _, h in m)
    rid = myid(rep).encode()
    for n in (nodes[0], nodes[1], nodes[2]):
        reps = cl(n).execute_command("CLUSTER", "REPLICAS", myid(nodes[1]))
        assert len(reps) == 1 and reps[0].split()[0] == rid
        slots = cl(n).execute_command("CLUSTER", "SLOTS")
        rng = next(s for s in slots if s[2][2] == myid(nodes[1]).encode())
        assert [x[2] for x in rng[3:]] == [rid]


def build_partition_shim(out_dir):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the partition shim")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "partition_shim.c")
    so = os.path.join(str(out_dir), "partition_shim.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", so, src, "-ldl"], check=True)
    return so


@pytest.mark.parametrize("kinds", ["ccc", "crr"])
def test_bus_partition_minority_down_majority_fails_over_heals(start_server, start_oracle, tmp_path,
                                                               monkeypatch, kinds):
    """A Cairn primary cut off the bus (partition_shim.c; clients still
    reach it): after the node timeout it answers -CLUSTERDOWN, the
    majority side elects its replica, and when the partition ends the old
    primary rejoins as a replica of the new one; acknowledged writes are
    kept."""
    if "san" in os.path.basename(cairn_bin()):
        pytest.skip("LD_PRELOAD with the sanitizer build")
    shim = build_partition_shim(tmp_path)
    ctl = str(tmp_path / "cut")
    cports = [free_port() for _ in range(4)]
    b = node(start_server if kinds[1] == "c" else start_oracle, cluster_port=str(cports[1]))
    c = node(start_server if kinds[2] == "c" else start_oracle, cluster_port=str(cports[2]))
    ra = node(start_server, cluster_port=str(cports[3]))
    monkeypatch.setenv("LD_PRELOAD", shim)
    monkeypatch.setenv("CAIRN_PARTITION_CTL", ctl)
    monkeypatch.setenv("CAIRN_PARTITION_PORTS", ",".join(map(str, cports)))
    try:
        a = node(start_server, cluster_port=str(cports[0]))
    finally:
        for v in ("LD_PRELOAD", "CAIRN_PARTITION_CTL", "CAIRN_PARTITION_PORTS"):
            monkeypatch.delenv(v)
    nodes = [a, b, c]
    create(nodes)
    add_replica(nodes, ra, a)
    keys = [k for k in ("pt%d" % i for i in range(2000)) if key_slot(k) <= 5460]
    for k in keys:
        cl(a).set(k, k)
    assert cl(a).execute_command("WAIT", 1, 5000) == 1
    aid, raid = myid(a), myid(ra)
    open(ctl, "w").close()  # the partition starts
    try:
        wait_for(lambda: b"cluster_state:fail" in cl(a).execute_command("CLUSTER", "INFO"), timeout=30,
                 what="the isolated primary to go down", step=0.2)
        with pytest.raises(redis.ResponseError, match="CLUSTERDOWN"):
            cl(a).set(keys[0], "lost")

        def elected():
            v = nodes_of(b)
            return "master" in v[raid][0] and v[raid][2].startswith("0-5460") and "fail" in v[aid][0]
        wait_for(elected, timeout=40, what="the majority to fail over", step=0.2, ignore=(redis.RedisError,))
        cl(ra).set(keys[1], "new")
    finally:
        os.unlink(ctl)  # the partition ends
    wait_for(lambda: nodes_of(a)[aid][1] == raid and nodes_of(b)[aid][1] == raid, timeout=40,
             what="the old primary to follow the new one", step=0.2, ignore=(redis.RedisError, KeyError))
    wait_consistent(nodes + [ra])
    rc = cluster_client(b)
    assert rc.get(keys[1]) == b"new"
    assert all(rc.get(k) == k.encode() for k in keys[2:])
    assert rc.get(keys[0]) == keys[0].encode()  # the refused write did not happen
    wait_for(lambda: cl(a).info("replication").get("master_link_status") == "up", timeout=30,
             what="the old primary to replicate")


def test_shard_channels_route_by_slot(start_server, start_oracle):
    """SPUBLISH / SSUBSCRIBE of a shard channel served elsewhere answer
    MOVED on a Cairn node as on a Redis node; a replica serves SSUBSCRIBE
    for its master's slots; cluster-allow-pubsubshard-when-down."""
    nodes = make(start_server, start_oracle, "crc")
    rep = make(start_server, start_oracle, "c")[0]
    create(nodes)
    add_replica(nodes, rep, nodes[1])
    chan = next(c for c in ("sc%d" % i for i in range(10000)) if 5461 <= key_slot(c) <= 10922)
    errs = []
    for n in (nodes[0], nodes[2]):
        try:
            cl(n).execute_command("SPUBLISH", chan, "x")
        except redis.ResponseError as e:
            errs.append(str(e))
    assert errs == ["MOVED %d 127.0.0.1:%d" % (key_slot(chan), nodes[1].port)] * 2
    sk = socket.create_connection(("127.0.0.1", nodes[0].port), timeout=10)
    sk.sendall(b"SSUBSCRIBE %s\r\n" % chan.encode())
    assert read_until(sk, b"-MOVED %d" % key_slot(chan))
    sk.close()
    sk = socket.create_connection(("127.0.0.1", rep.port), timeout=10)
    sk.sendall(b"SSUBSCRIBE %s\r\n" % chan.encode())
    assert read_until(sk, b"ssubscribe")
    sk.close()
    # a slot that leaves a node's shard unsubscribes its shard channels'
    # subscribers there (Redis 7.0), on a Cairn owner, its Cairn replica and
    # a Redis owner alike
    subs = []
    for owner, watcher in ((nodes[1], rep), (nodes[1], nodes[1]), (nodes[0], nodes[0])):
        lo, hi = {nodes[0].port: (0, 5460), nodes[1].port: (5461, 10922)}[owner.port]
        used = {key_slot(x[1]) for x in subs} | {key_slot(chan)}
        ch = next(c for c in ("mv%d" % i for i in range(10000)) if lo <= key_slot(c) <= hi and key_slot(c) not in used)
        sk = socket.create_connection(("127.0.0.1", watcher.port), timeout=10)
        sk.sendall(b"SSUBSCRIBE %s\r\n" % ch.encode())
        assert read_until(sk, b"ssubscribe")
        subs.append((sk, ch, owner))
    for sk, ch, owner in subs:
        for n in nodes:
            assert cl(n).execute_command("CLUSTER", "SETSLOT", key_slot(ch), "NODE", myid(nodes[2])) == b"OK"
    for sk, ch, owner in subs:
        assert read_until(sk, b"sunsubscribe"), ch
        sk.close()
    wait_consistent(nodes + [rep])


def test_shard_channels_single_node_as_redis(start_server, start_oracle):
    """Differential: SPUBLISH on an unserved slot, then with the cluster
    down, with cluster-allow-pubsubshard-when-down yes and no."""
    pair = [node(start_server), node(start_oracle)]

    def both(*args):
        outs = []
        for n in pair:
            try:
                outs.append(cl(n).execute_command(*args))
            except redis.ResponseError as e:
                outs.append("ERR:" + str(e))
        assert outs[0] == outs[1], (args, outs)
        return outs[0]
    assert both("SPUBLISH", "x", "y") == "ERR:CLUSTERDOWN Hash slot not served"
    assert both("PUBLISH", "x", "y") == 0
    both("CLUSTER", "ADDSLOTS", key_slot("x"))
    # the state is fail (slots uncovered)
    assert b"cluster_state:fail" in cl(pair[0]).execute_command("CLUSTER", "INFO")
    assert both("SPUBLISH", "x", "y") == 0
    both("CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "no")
    assert both("SPUBLISH", "x", "y") == "ERR:CLUSTERDOWN The cluster is down"
    assert both("SPUBLISH", "other", "y").startswith("ERR:CLUSTERDOWN")


def links_to(n, node_id):
    """n's CLUSTER LINKS entries for node_id, as dicts."""
    out = []
    for l in cl(n).execute_command("CLUSTER", "LINKS"):
        d = dict(zip(l[0::2], l[1::2])) if isinstance(l, list) else l
        d = {(k.decode() if isinstance(k, bytes) else k): v for k, v in d.items()}
        if (d["node"].decode() if isinstance(d["node"], bytes) else d["node"]) == node_id:
            out.append(d)
    return out


def limit_exceeded(n):
    info = cl(n).execute_command("CLUSTER", "INFO").decode()
    return int(info.split("total_cluster_links_buffer_limit_exceeded:")[1].split()[0])


@pytest.mark.parametrize("kinds", ["ccc", "rcc"])
def test_link_sendbuf_limit_frees_the_link(start_server, start_oracle, kinds):
    """cluster-link-sendbuf-limit: a link whose send buffer grew past it
    (its peer stopped, PUBLISH filling the buffer) is freed by the cron
    and counted in CLUSTER INFO's total_cluster_links_buffer_limit_exceeded,
    on a Cairn node as on a redis-server one (nodes[0]); with no limit
    the buffer grows and nothing is counted."""
    nodes = make(start_server, start_oracle, kinds, cluster_node_timeout="60000")
    create(nodes)
    a, b = nodes[0], nodes[1]
    bid = myid(b)
    assert cl(a).config_get("cluster-link-sendbuf-limit") == {"cluster-link-sendbuf-limit": "0"}
    assert limit_exceeded(a) == 0
    payload = b"x" * 100000
    b.proc.send_signal(signal.SIGSTOP)
    try:
        def grown():
            for _ in range(20):
                cl(a).publish("fill", payload)
            return max([int(l["send-buffer-used"]) for l in links_to(a, bid)] + [0]) > 4000000
        wait_for(grown, timeout=60, what="the send buffer to the stopped node to grow", step=0.05)
        time.sleep(0.3)  # cron runs (every 100 ms) with no limit: nothing freed
        assert limit_exceeded(a) == 0
        big = max(int(l["send-buffer-used"]) for l in links_to(a, bid))
        assert cl(a).config_set("cluster-link-sendbuf-limit", "1mb")
        assert cl(a).config_get("cluster-link-sendbuf-limit") == {"cluster-link-sendbuf-limit": "1048576"}
        wait_for(lambda: limit_exceeded(a) >= 1, timeout=10, what="the link over the limit to be freed")
        assert all(int(l["send-buffer-used"]) < big for l in links_to(a, bid))
        assert cl(a).config_set("cluster-link-sendbuf-limit", "0")
    finally:
        b.proc.send_signal(signal.SIGCONT)
    wait_consistent(nodes)
    assert cl(a).publish("fill", "small") == 0
