"""Cluster mode, first slice (issue 36): one node's state, nodes.conf, the
single-node CLUSTER subcommands and the key-slot check, differential
against redis-server 7.0.15 started with cluster-enabled yes (node ids and
ports normalized)."""
import os
import re
import socket
import subprocess

import pytest
import redis

from conftest import cairn_bin, free_port
from resphelp import read_values
from waithelp import wait_for

CLUSTER = {"cluster_enabled": "yes", "cluster_node_timeout": "500"}


def crc16(data):
    """CRC-16/XMODEM, bit by bit (independent of Cairn's table)."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def key_slot(key):
    s = key.find(b"{")
    if s != -1:
        e = key.find(b"}", s + 1)
        if e != -1 and e != s + 1:
            key = key[s + 1:e]
    return crc16(key) % 16384


def raw(srv, *args):
    """The reply bytes of one command on a fresh connection (the one
    complete RESP value it answers)."""
    c = srv.connect()
    try:
        out = b"*%d\r\n" % len(args) + b"".join(
            b"$%d\r\n%s\r\n" % (len(a), a) for a in (x if isinstance(x, bytes) else str(x).encode() for x in args))
        c.send(out)
        return read_values(c)
    finally:
        c.sock.close()


def norm(srv, data):
    myid = srv.client().execute_command("CLUSTER", "MYID")
    return data.replace(myid, b"MYID").replace(str(srv.port).encode(), b"PORT").replace(
        str(srv.port + 10000).encode(), b"CPORT")


def pair(start_server, start_oracle, **extra):
    cfg = dict(CLUSTER, **extra)
    return start_server(**cfg), start_oracle(**cfg)


def both(s, o, *args):
    a, b = norm(s, raw(s, *args)), norm(o, raw(o, *args))
    assert a == b, (args, a, b)
    return a


def restart(srv, **cfg):
    """Stops srv and starts it again in its directory on its port (the
    log starts afresh so that its readiness line is the new one's)."""
    port = srv.port
    srv.stop()
    open(srv.logpath, "w").close()
    srv.config = dict(cfg, port=port)
    srv._start()


def wait_ok(srv):
    r = srv.client()
    wait_for(lambda: b"cluster_state:ok" in r.execute_command("CLUSTER", "INFO"), timeout=20, what="cluster ok")


def test_keyslot_vectors(start_server, start_oracle):
    s, o = pair(start_server, start_oracle)
    keys = [b"123456789", b"foo", b"{user1000}.following", b"{user1000}.followers", b"foo{}{bar}",
            b"foo{{bar}}zap", b"foo{bar}{zap}", b"{}", b"", b"{a", b"a}", b"\xff\x00{\x01}"]
    r = s.client()
    assert r.execute_command("CLUSTER", "KEYSLOT", "123456789") == 0x31C3
    for k in keys:
        got = both(s, o, "CLUSTER", "KEYSLOT", k)
        assert got == b":%d\r\n" % key_slot(k)


def test_single_node_replies(start_server, start_oracle):
    s, o = pair(start_server, start_oracle)
    for cmd in [
        ("CLUSTER", "NODES"), ("CLUSTER", "INFO"), ("CLUSTER", "SLOTS"), ("CLUSTER", "SHARDS"),
        ("CLUSTER", "LINKS"), ("CLUSTER", "ADDSLOTSRANGE", "0", "100", "200", "300"),
        ("CLUSTER", "ADDSLOTS", "5000", "5001"), ("CLUSTER", "NODES"), ("CLUSTER", "SLOTS"),
        ("CLUSTER", "SHARDS"), ("CLUSTER", "COUNTKEYSINSLOT", "100"), ("CLUSTER", "COUNTKEYSINSLOT", "16384"),
        ("CLUSTER", "COUNTKEYSINSLOT", "-1"), ("CLUSTER", "COUNTKEYSINSLOT", "x"),
        ("CLUSTER", "GETKEYSINSLOT", "1", "1"), ("CLUSTER", "GETKEYSINSLOT", "1", "-1"),
        ("CLUSTER", "GETKEYSINSLOT", "16384", "1"), ("CLUSTER", "GETKEYSINSLOT", "x", "1"),
        ("CLUSTER", "ADDSLOTS", "0"), ("CLUSTER", "ADDSLOTS", "16384"), ("CLUSTER", "ADDSLOTS", "x"),
        ("CLUSTER", "ADDSLOTS", "7", "7"), ("CLUSTER", "ADDSLOTS", "900", "900"),
        ("CLUSTER", "ADDSLOTSRANGE", "10", "5"), ("CLUSTER", "ADDSLOTSRANGE", "1"),
        ("CLUSTER", "ADDSLOTSRANGE", "400", "500", "450", "460"), ("CLUSTER", "DELSLOTS", "9000"),
        ("CLUSTER", "DELSLOTSRANGE", "9000", "9001"), ("CLUSTER", "DELSLOTSRANGE", "0", "50"),
        ("CLUSTER", "DELSLOTS", "60", "61", "61"), ("CLUSTER", "NODES"),
        ("CLUSTER", "SET-CONFIG-EPOCH", "-1"), ("CLUSTER", "SET-CONFIG-EPOCH", "x"),
        ("CLUSTER", "BUMPEPOCH"), ("CLUSTER", "BUMPEPOCH"), ("CLUSTER", "SET-CONFIG-EPOCH", "5"),
        ("CLUSTER", "INFO"),
        ("CLUSTER", "MYID", "x"), ("CLUSTER", "KEYSLOT"), ("CLUSTER", "SAVECONFIG"),
        ("READONLY",), ("READWRITE",), ("ASKING",),
        ("CLUSTER", "SETSLOT", "1", "stable"), ("CLUSTER", "SETSLOT", "1", "foo"),
        ("CLUSTER", "SETSLOT", "99999", "stable"), ("CLUSTER", "SETSLOT", "1", "node", "abc"),
        ("CLUSTER", "SETSLOT", "1", "migrating", "abc"), ("CLUSTER", "SETSLOT", "70", "migrating", "abc"),
        ("CLUSTER", "SETSLOT", "70", "importing", "abc"), ("CLUSTER", "SETSLOT", "1", "importing", "abc"),
        ("CLUSTER", "REPLICAS", "abc"), ("CLUSTER", "SLAVES", "abc"),
        ("CLUSTER", "COUNT-FAILURE-REPORTS", "abc"), ("CLUSTER", "FORGET", "abc"),
        ("CLUSTER", "REPLICATE", "abc"), ("CLUSTER", "FAILOVER"), ("CLUSTER", "FAILOVER", "x"),
        ("CLUSTER", "MEET", "1.2.3.4", "x"), ("CLUSTER", "RESET", "x"),
        ("SELECT", "1"), ("SELECT", "0"), ("SET", "foo", "bar"), ("GET", "{x}"),
        ("CLUSTER", "FLUSHSLOTS"), ("CLUSTER", "INFO"), ("CLUSTER", "RESET", "soft"), ("CLUSTER", "NODES"),
        ("INFO", "cluster"),
    ]:
        both(s, o, *cmd)
    # commands naming myself
    for srv in (s, o):
        myid = srv.client().execute_command("CLUSTER", "MYID")
        assert raw(srv, "CLUSTER", "REPLICAS", myid) == b"*0\r\n"
        assert raw(srv, "CLUSTER", "COUNT-FAILURE-REPORTS", myid) == b":0\r\n"
        assert raw(srv, "CLUSTER", "FORGET", myid) == b"-ERR I tried hard but I can't forget myself...\r\n"
        assert raw(srv, "CLUSTER", "REPLICATE", myid) == b"-ERR Can't replicate myself\r\n"
        assert raw(srv, "CLUSTER", "SETSLOT", "3", "importing", myid) == b"+OK\r\n"
        assert raw(srv, "CLUSTER", "SETSLOT", "3", "node", myid) == b"+OK\r\n"
    both(s, o, "CLUSTER", "NODES")
    both(s, o, "CLUSTER", "INFO")
    both(s, o, "CLUSTER", "SETSLOT", "3", "importing", "0" * 40)
    both(s, o, "CLUSTER", "SETSLOT", "3", "migrating", "0" * 40)
    # RESET HARD gives a new id and zero epochs
    for srv in (s, o):
        r = srv.client()
        old = r.execute_command("CLUSTER", "MYID")
        assert r.execute_command("CLUSTER", "RESET", "HARD") == b"OK"
        assert r.execute_command("CLUSTER", "MYID") != old
    both(s, o, "CLUSTER", "INFO")
    both(s, o, "CLUSTER", "NODES")


def test_cluster_help_text(start_server, start_oracle):
    """CLUSTER HELP's lines are redis-server 7.0.15's, byte for byte."""
    s, o = pair(start_server, start_oracle)
    got = both(s, o, "CLUSTER", "HELP")
    assert got.startswith(b"*56\r\n+CLUSTER <subcommand>") and b"+SHARDS\r\n" in got
    both(s, o, "cluster", "help")
    both(s, o, "CLUSTER", "HELP", "x")
    both(s, o, "CLUSTER", "NOSUCH")


@pytest.mark.parametrize("tls_cluster", ["yes", "no"])
def test_shards_tls_port(start_server, start_oracle, tls_certs, tls_cluster):
    """With a TLS port, CLUSTER SHARDS shows "tls-port" (and "port" the
    plaintext one) when tls-cluster is on, and only "port" when it is
    off, to plaintext and TLS clients alike, as redis-server 7.0.15."""
    import tlshelp
    if not tlshelp.binary_has_tls(cairn_bin()):
        pytest.skip("Cairn built without TLS")
    replies = []
    for start in (start_server, start_oracle):
        tport = free_port()
        srv = start(**dict(CLUSTER, **tlshelp.tls_args(tls_certs, tls_port=str(tport), tls_cluster=tls_cluster)))
        assert raw(srv, "CLUSTER", "ADDSLOTSRANGE", "0", "99") == b"+OK\r\n"
        myid = srv.client().execute_command("CLUSTER", "MYID")
        got = raw(srv, "CLUSTER", "SHARDS")
        if tls_cluster == "yes":
            assert b"$8\r\ntls-port\r\n:%d\r\n" % tport in got, got
            assert b"$4\r\nport\r\n:%d\r\n" % srv.port in got, got
        else:
            assert b"tls-port" not in got
        tc = redis.Redis(host="127.0.0.1", port=tport, ssl=True, ssl_certfile=tls_certs.crt("client"),
                         ssl_keyfile=tls_certs.key("client"), ssl_ca_certs=tls_certs.crt("ca"),
                         ssl_check_hostname=False)
        shards = tc.execute_command("CLUSTER", "SHARDS")
        tc.close()
        fields = shards[0][3][0]
        names = fields[0::2]
        assert (b"tls-port" in names) == (tls_cluster == "yes")
        for port, name in ((tport + 10000, b"TCPORT"), (tport, b"TPORT"), (srv.port + 10000, b"CPORT"),
                           (srv.port, b"PORT")):
            got = got.replace(b":%d\r\n" % port, b":" + name + b"\r\n")
        replies.append((got.replace(myid, b"MYID"), names))
    assert replies[0] == replies[1]


def test_keys_and_slot_checks(start_server, start_oracle):
    s, o = pair(start_server, start_oracle)
    both(s, o, "SET", "foo", "bar")  # CLUSTERDOWN Hash slot not served
    both(s, o, "GET", "foo")
    both(s, o, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(s)
    wait_ok(o)
    both(s, o, "CLUSTER", "INFO")
    both(s, o, "SET", "foo", "bar")
    both(s, o, "MSET", "a", "1", "b", "2")  # CROSSSLOT
    both(s, o, "MSET", "{t}a", "1", "{t}b", "2")
    both(s, o, "MGET", "{t}a", "{t}b", "{t}c")
    both(s, o, "DEL", "foo", "{t}a")
    both(s, o, "EVAL", "return 1", "2", "a", "b")
    both(s, o, "EVAL", "return redis.call('get', KEYS[1])", "1", "{t}b")
    both(s, o, "MOVE", "{t}b", "1")
    both(s, o, "SWAPDB", "0", "1")
    both(s, o, "COPY", "{t}b", "{t}c", "DB", "1")
    both(s, o, "COPY", "{t}b", "{t}c", "DB", "0")
    both(s, o, "COPY", "{t}b", "{t}c")
    both(s, o, "CLUSTER", "FLUSHSLOTS")
    both(s, o, "CLUSTER", "RESET")
    both(s, o, "PING")
    # MULTI: a cross-slot command is refused when queued, EXEC aborts
    for srv in (s, o):
        c = srv.connect()
        c.sock.sendall(b"MULTI\r\nSET {t}x 1\r\nMSET a 1 b 2\r\nEXEC\r\n")
        c.sock.settimeout(2)
        data = b""
        while data.count(b"\r\n") < 4:
            data += c.sock.recv(4096)
        c.sock.close()
        srv.multi_reply = data
    assert s.multi_reply == o.multi_reply
    assert b"CROSSSLOT" in s.multi_reply and b"EXECABORT" in s.multi_reply
    # commands of different slots, each fine alone: EXEC answers CROSSSLOT
    # and the transaction is gone; one slot: EXEC runs
    for script in [b"MULTI\r\nSET {a}x 1\r\nSET {b}y 2\r\nEXEC\r\nEXEC\r\nGET {a}x\r\n",
                   b"MULTI\r\nSET {a}x 1\r\nGET {a}y\r\nPING\r\nEXEC\r\nGET {a}x\r\n",
                   b"MULTI\r\nPING\r\nEXEC\r\nEXEC\r\n"]:
        outs = []
        for srv in (s, o):
            c = srv.connect()
            c.sock.sendall(script)
            c.sock.settimeout(0.5)
            data = b""
            try:
                while True:
                    chunk = c.sock.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except socket.timeout:
                pass
            c.sock.close()
            outs.append(data)
        assert outs[0] == outs[1], (script, outs)


def test_countkeysinslot_getkeysinslot(start_server, start_oracle):
    s, o = pair(start_server, start_oracle)
    keys = [b"k%d" % i for i in range(3000)] + [b"{tag}%d" % i for i in range(500)]
    for srv in (s, o):
        r = srv.client()
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(s)
    wait_ok(o)
    for srv in (s, o):
        r = srv.client()
        p = r.pipeline(transaction=False)
        for k in keys:
            p.set(k, b"v")
        p.execute()
        for k in keys[::7]:
            r.delete(k)
    live = set(keys) - set(keys[::7])
    by_slot = {}
    for k in live:
        by_slot.setdefault(key_slot(k), set()).add(k)
    rs, ro = s.client(), o.client()
    tag = key_slot(b"tag")
    for slot in list(by_slot)[:50] + [tag, 0, 16383]:
        n = rs.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot)
        assert n == ro.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == len(by_slot.get(slot, ()))
        got = rs.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
        assert set(got) == by_slot.get(slot, set()) == set(ro.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000))
        assert len(got) == n
        few = rs.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 3)
        assert len(few) == min(3, n) and set(few) <= by_slot.get(slot, set())
    # a slot with keys cannot be given away or flushed
    both(s, o, "CLUSTER", "SETSLOT", str(tag), "node", "0" * 40)
    both(s, o, "CLUSTER", "FLUSHSLOTS")
    both(s, o, "CLUSTER", "RESET")


def test_nodes_conf_persists_and_locks(start_server, tmp_path):
    s = start_server(**CLUSTER)
    r = s.client()
    myid = r.execute_command("CLUSTER", "MYID")
    assert r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "99", "200", "299") == b"OK"
    assert r.execute_command("CLUSTER", "SET-CONFIG-EPOCH", "7") == b"OK"
    assert r.execute_command("CLUSTER", "BUMPEPOCH") == b"STILL 7"
    path = os.path.join(s.tmp, "nodes.conf")
    text = open(path).read()
    assert text == ("%s :%d@%d myself,master - 0 0 7 connected 0-99 200-299\nvars currentEpoch 7 lastVoteEpoch 0\n"
                    % (myid.decode(), s.port, s.port + 10000))
    # a second process on the same file is refused
    p = subprocess.run([cairn_bin(), "--port", "0", "--cluster-enabled", "yes", "--dir", s.tmp, "--save", ""],
                       capture_output=True, timeout=30)
    assert p.returncode != 0
    assert b"is already used by a different Redis Cluster node" in p.stdout + p.stderr
    assert open(path).read() == text
    # restart: same identity, epochs and slots
    restart(s, **CLUSTER)
    r = s.client()
    assert r.execute_command("CLUSTER", "MYID") == myid
    info = r.execute_command("CLUSTER", "INFO")
    assert b"cluster_current_epoch:7" in info and b"cluster_my_epoch:7" in info
    assert b"cluster_slots_assigned:200" in info
    assert open(path).read() == text
    assert [f for f in os.listdir(s.tmp) if ".tmp-" in f] == []  # written via rename, nothing left
    # besides it, at most the previous version, kept to be rewritten next time
    assert {f for f in os.listdir(s.tmp) if f.startswith("nodes.conf")} <= {"nodes.conf", "nodes.conf.spare"}
    # a corrupted file stops start-up, as Redis's does
    s.stop()
    with open(path, "w") as f:
        f.write("garbage line\n")
    p = subprocess.run([cairn_bin(), "--port", "0", "--cluster-enabled", "yes", "--dir", s.tmp, "--save", ""],
                       capture_output=True, timeout=30)
    assert p.returncode != 0
    assert b"Unrecoverable error: corrupted cluster config file" in p.stdout + p.stderr


def test_redirections_from_nodes_conf(start_server):
    """Another node known from nodes.conf: MOVED for its slots, ASK for a
    migrating slot's missing keys, ASKING for an importing slot, TRYAGAIN."""
    other = "b" * 40
    me = "a" * 40
    s = start_server(**CLUSTER)
    port = s.port
    conf = ("%s 127.0.0.1:%d@%d myself,master - 0 0 1 connected 0-8191 [100->-%s] [9000-<-%s]\n"
            "%s 10.0.0.9:7001@17001,h1 master - 0 0 2 connected 8192-16383\n"
            "vars currentEpoch 2 lastVoteEpoch 0\n" % (me, port, port + 10000, other, other, other))
    s.stop()
    with open(os.path.join(s.tmp, "nodes.conf"), "w") as f:
        f.write(conf)
    # the other node does not exist: a long node timeout keeps the bus
    # from finding it failing (and the cluster down) during the test
    restart(s, **dict(CLUSTER, cluster_node_timeout="600000"))
    r = s.client()
    assert r.execute_command("CLUSTER", "MYID") == me.encode()
    wait_ok(s)
    slot_hi = key_slot(b"foo")  # 12182: the other node's
    assert raw(s, "GET", "foo") == b"-MOVED %d 10.0.0.9:7001\r\n" % slot_hi
    assert raw(s, "CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname") == b"+OK\r\n"
    assert raw(s, "GET", "foo") == b"-MOVED %d h1:7001\r\n" % slot_hi
    assert raw(s, "CONFIG", "SET", "cluster-preferred-endpoint-type", "ip") == b"+OK\r\n"
    # slot 100 migrating: present keys served, missing ones ASK
    k100 = next(b"m%d" % i for i in range(100000) if key_slot(b"m%d" % i) == 100)
    assert raw(s, "GET", k100) == b"-ASK 100 10.0.0.9:7001\r\n"
    assert raw(s, "SET", k100, "v") == b"-ASK 100 10.0.0.9:7001\r\n"
    # slot 9000 importing: MOVED unless ASKING
    k9000 = next(b"i%d" % i for i in range(100000) if key_slot(b"i%d" % i) == 9000)
    assert raw(s, "SET", k9000, "v") == b"-MOVED 9000 10.0.0.9:7001\r\n"
    c = s.connect()
    c.sock.sendall(b"ASKING\r\nSET " + k9000 + b" v\r\nGET " + k9000 + b"\r\n")
    c.sock.settimeout(2)
    data = b""
    while data.count(b"\r\n") < 3:
        data += c.sock.recv(4096)
    c.sock.close()
    assert data == b"+OK\r\n+OK\r\n-MOVED 9000 10.0.0.9:7001\r\n"  # ASKING lasts one command
    assert raw(s, "CLUSTER", "COUNTKEYSINSLOT", "9000") == b":1\r\n"
    other_k = b"{" + k9000 + b"}y"
    c = s.connect()
    c.sock.sendall(b"ASKING\r\nMGET {" + k9000 + b"}x " + other_k + b"\r\n")
    c.sock.settimeout(2)
    data = b""
    while data.count(b"\r\n") < 2:
        data += c.sock.recv(4096)
    c.sock.close()
    assert data == b"+OK\r\n-TRYAGAIN Multiple keys request during rehashing of slot\r\n"
    nodes = r.execute_command("CLUSTER", "NODES")
    assert b"[100->-" + other.encode() + b"]" in nodes and b"[9000-<-" + other.encode() + b"]" in nodes
    # ping sent (and nothing received): the bus is trying to reach it
    assert re.search(rb"10\.0\.0\.9:7001@17001,h1 master - \d+ 0 2 (dis)?connected 8192-16383", nodes)
    slots = r.execute_command("CLUSTER", "SLOTS")
    assert [x[:2] for x in slots] == [[0, 8191], [8192, 16383]]
    # forgetting the other node drops its slots and marks
    assert r.execute_command("CLUSTER", "FORGET", other) == b"OK"
    info = r.execute_command("CLUSTER", "INFO")
    assert b"cluster_known_nodes:1" in info and b"cluster_slots_assigned:8192" in info
    assert raw(s, "GET", "foo") == b"-CLUSTERDOWN Hash slot not served\r\n"


def test_config_directives(start_server, start_oracle):
    s, o = pair(start_server, start_oracle)
    # CONFIG GET's order is Redis's hash table order: compared as maps
    assert s.client().config_get("cluster-*") == o.client().config_get("cluster-*")
    for name, value in [("cluster-node-timeout", "-1"), ("cluster-node-timeout", "abc"),
                        ("cluster-announce-hostname", "bad_host"), ("cluster-announce-hostname", "good-host.x"),
                        ("cluster-port", "7000"), ("cluster-enabled", "no"), ("cluster-config-file", "x.conf"),
                        ("cluster-preferred-endpoint-type", "nope"), ("cluster-announce-port", "70000"),
                        ("cluster-link-sendbuf-limit", "1mb"), ("cluster-replica-validity-factor", "-1"),
                        ("cluster-slave-no-failover", "yes"), ("cluster-allow-reads-when-down", "maybe")]:
        both(s, o, "CONFIG", "SET", name, value)
    assert s.client().config_get("cluster-*") == o.client().config_get("cluster-*")
    assert s.client().config_get("cluster-slave-*") == o.client().config_get("cluster-slave-*")


def test_reads_when_down(start_server, start_oracle):
    s, o = pair(start_server, start_oracle, cluster_allow_reads_when_down="yes")
    for srv in (s, o):
        srv.client().execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "8000")
    for srv in (s, o):
        wait_for(lambda: b"cluster_size:1" in srv.client().execute_command("CLUSTER", "INFO"), timeout=20,
                 what="state computed")
    both(s, o, "GET", "foo{a}")  # slot 15495: not served
    both(s, o, "GET", "x")  # slot 16287 / served? compare anyway
    both(s, o, "GET", "a")
    both(s, o, "SET", "a", "1")


def test_scripts_in_cluster_mode(start_server, start_oracle):
    """Redis 7.0's rules: declared keys checked like any command's; a call
    on a key served elsewhere or while down fails; no-cluster scripts are
    refused; undeclared keys of several served slots are allowed (7.0)."""
    s, o = pair(start_server, start_oracle, cluster_require_full_coverage="no")
    gone = key_slot(b"{c}1")
    for srv in (s, o):
        r = srv.client()
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", str(gone - 1), str(gone + 1), "16383")
    wait_ok(s)
    wait_ok(o)
    lib = "#!lua name=nc\nredis.register_function{function_name='f', callback=function() return 1 end, flags={'no-cluster'}}"
    for cmd in [
        ("EVAL", "return redis.call('get','{c}1')", "0"),
        ("EVAL", "return redis.pcall('get','{c}1')", "0"),
        ("EVAL", "redis.call('set','{a}1','x'); return redis.call('get','{b}1')", "1", "{a}2"),
        ("EVAL", "#!lua flags=no-cluster\nreturn 1", "0"),
        ("EVAL", "#!lua\nreturn redis.call('get','{c}1')", "0"),
        ("EVAL", "return 1", "2", "{a}1", "{b}1"),
        ("EVAL", "return 1", "1", "{c}1"),
        ("FUNCTION", "LOAD", lib), ("FCALL", "f", "0"),
    ]:
        both(s, o, *cmd)
    assert b"non local key" in raw(s, "EVAL", "return redis.call('get','{c}1')", "0")
    assert b"'no-cluster' flag is set" in raw(s, "FCALL", "f", "0")
    for srv in (s, o):
        srv.client().execute_command("CONFIG", "SET", "cluster-require-full-coverage", "yes")
        srv.client().execute_command("CLUSTER", "DELSLOTS", "0")
    for srv in (s, o):
        wait_for(lambda: b"cluster_state:fail" in srv.client().execute_command("CLUSTER", "INFO"), timeout=20,
                 what="cluster down")
    assert b"while the cluster is down" in both(s, o, "EVAL", "return redis.call('get','{a}1')", "0")
    both(s, o, "EVAL", "return redis.call('ping')", "0")
    for srv in (s, o):
        srv.client().execute_command("CONFIG", "SET", "cluster-allow-reads-when-down", "yes")
    both(s, o, "EVAL", "return redis.call('get','{a}1')", "0")
    assert b"down and readonly" in both(s, o, "EVAL", "return redis.call('set','{a}1','y')", "0")


def test_disabled_by_default(server):
    assert raw(server, "CLUSTER", "INFO") == b"-ERR This instance has cluster support disabled\r\n"
    assert raw(server, "READONLY") == b"-ERR This instance has cluster support disabled\r\n"
    assert raw(server, "SELECT", "1") == b"+OK\r\n"
    assert b"cluster_enabled:0" in raw(server, "INFO", "cluster")
    assert not os.path.exists(os.path.join(server.tmp, "nodes.conf"))


# --- the keyspace's slot layout: one key table per slot (db.c) ---

def slot_server(start_server, **extra):
    """A cluster node serving every slot, DEBUG enabled."""
    s = start_server(**dict(CLUSTER, enable_debug_command="yes", **extra))
    s.client().execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(s)
    return s


def load(r, keys, value=b"v", px=None):
    p = r.pipeline(transaction=False)
    for i, k in enumerate(keys):
        if px:
            p.set(k, value, px=px)
        else:
            p.set(k, value)
        if i % 2000 == 1999:
            p.execute()
    p.execute()


def htstats_max_chain(r):
    text = r.execute_command("DEBUG", "HTSTATS", "0")
    text = text.decode() if isinstance(text, bytes) else str(text)
    chains = [int(line.split(":")[1]) for line in text.splitlines() if "max chain length" in line]
    assert chains, text
    return max(chains)


def test_slots_hot_slot_count_and_chains(start_server, start_oracle):
    """100,000 keys under one hash tag: COUNTKEYSINSLOT / GETKEYSINSLOT as
    Redis's, and the chains of the key tables stay short (one table per
    slot, sized for its keys; the earlier single table gave the slot
    1/16384 of its buckets: chains of thousands)."""
    s = slot_server(start_server)
    o = start_oracle(**CLUSTER)
    o.client().execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(o)
    hot = [b"{bull:q}:%d" % i for i in range(100000)]
    spread = [b"k%d" % i for i in range(2000)]
    for srv in (s, o):
        load(srv.client(), hot + spread)
    rs, ro = s.client(), o.client()
    tag = key_slot(b"bull:q")
    want = 100000 + sum(1 for k in spread if key_slot(k) == tag)
    assert rs.execute_command("CLUSTER", "COUNTKEYSINSLOT", tag) == want
    assert ro.execute_command("CLUSTER", "COUNTKEYSINSLOT", tag) == want
    got = rs.execute_command("CLUSTER", "GETKEYSINSLOT", tag, 10)
    assert len(got) == 10 and all(key_slot(k) == tag for k in got)
    assert rs.dbsize() == ro.dbsize() == 102000
    assert htstats_max_chain(rs) <= 16
    assert rs.get(b"{bull:q}:99999") == b"v" and rs.get(b"{bull:q}:100000") is None


def test_slots_scan_complete_across_resizes(start_server):
    """SCAN over the slot tables: every key present for the whole scan is
    returned, while tables grow (keys added between calls) and shrink
    (most of the hot slot deleted, the timer shrinking its table)."""
    s = slot_server(start_server, hz="100")
    r = s.client()
    base = [b"{h}%d" % i for i in range(20000)] + [b"s%d" % i for i in range(20000)]
    load(r, base)
    seen, cursor, calls, extra = set(), 0, 0, 0
    while True:
        cursor, keys = r.scan(cursor, count=50)
        seen.update(keys)
        calls += 1
        if calls % 3 == 0 and extra < 30000:  # grow the tables under the scan
            load(r, [b"{h}x%d" % i for i in range(extra, extra + 500)] + [b"sx%d" % i for i in range(extra, extra + 500)])
            extra += 500
        if cursor == 0:
            break
        assert calls < 100000
    assert set(base) <= seen
    # shrink: most of the hot slot goes; the timer shrinks its table
    doomed = [b"{h}%d" % i for i in range(20000) if i % 10] + [b"{h}x%d" % i for i in range(extra)]
    for i in range(0, len(doomed), 1000):
        r.delete(*doomed[i:i + 1000])
    kept = set(base) - set(doomed) | {b"sx%d" % i for i in range(extra)}
    seen, cursor = set(), 0
    while True:
        cursor, keys = r.scan(cursor, count=20)
        seen.update(keys)
        if cursor == 0:
            break
    assert seen == kept
    assert r.dbsize() == len(kept)


def test_slots_randomkey_fair_across_slots(start_server):
    """Half the keys in one slot, half spread over the slots: RANDOMKEY
    picks the hot slot about half the time and reaches many slots."""
    s = slot_server(start_server)
    r = s.client()
    load(r, [b"{h}%d" % i for i in range(5000)] + [b"s%d" % i for i in range(5000)])
    p = r.pipeline(transaction=False)
    for _ in range(3000):
        p.randomkey()
    got = p.execute()
    hot = sum(1 for k in got if k.startswith(b"{h}"))
    assert 3000 * 0.35 < hot < 3000 * 0.65, hot
    assert len({key_slot(k) for k in got if not k.startswith(b"{h}")}) > 1000


def test_slots_flushall_async_and_swapdb(start_server, start_oracle):
    s = slot_server(start_server)
    r = s.client()
    load(r, [b"{h}%d" % i for i in range(30000)] + [b"s%d" % i for i in range(30000)])
    tag = key_slot(b"h")
    assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", tag) >= 30000
    assert r.execute_command("FLUSHALL", "ASYNC") in (True, b"OK")
    assert r.dbsize() == 0
    assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", tag) == 0
    assert r.scan(0) == (0, []) and r.randomkey() is None
    r.set(b"{h}1", b"x")
    assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", tag) == 1 and r.dbsize() == 1
    assert r.get(b"{h}1") == b"x"
    wait_for(lambda: s.client().info("memory")["lazyfree_pending_objects"] == 0, timeout=20, what="lazy free")
    # SWAPDB is refused in cluster mode, as by Redis
    o = start_oracle(**CLUSTER)
    both(s, o, "SWAPDB", "0", "1")
    both(s, o, "SWAPDB", "0", "0")


def test_slots_rdb_reload_equal(start_server):
    """DEBUG RELOAD (the save threads walking the slot tables) and a
    restart from the RDB give back the same keyspace: digest, per-slot
    counts, TTLs."""
    s = slot_server(start_server, rdb_save_threads="4")
    r = s.client()
    load(r, [b"{h}%d" % i for i in range(20000)] + [b"s%d" % i for i in range(20000)])
    load(r, [b"{t}%d" % i for i in range(3000)] + [b"e%d" % i for i in range(3000)], px=3600000)
    r.rpush(b"{h}list", *[b"x%d" % i for i in range(200)])
    digest = r.execute_command("DEBUG", "DIGEST")
    slots = [key_slot(b"h"), key_slot(b"t"), key_slot(b"s1"), key_slot(b"e5"), 0, 16383]
    counts = [r.execute_command("CLUSTER", "COUNTKEYSINSLOT", x) for x in slots]
    expires = r.info("keyspace")["db0"]["expires"]
    assert expires == 6000
    assert r.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    assert r.execute_command("DEBUG", "DIGEST") == digest
    assert [r.execute_command("CLUSTER", "COUNTKEYSINSLOT", x) for x in slots] == counts
    assert r.info("keyspace")["db0"]["expires"] == expires
    assert r.save()
    restart(s, **dict(CLUSTER, enable_debug_command="yes", rdb_save_threads="1"))
    r = s.client()
    wait_ok(s)
    assert r.execute_command("DEBUG", "DIGEST") == digest
    assert [r.execute_command("CLUSTER", "COUNTKEYSINSLOT", x) for x in slots] == counts
    assert 0 < r.pttl(b"{t}7") <= 3600000 and r.lrange(b"{h}list", 0, 1) == [b"x0", b"x1"]


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-ttl"])
def test_slots_eviction_many_slots(start_server, policy):
    """maxmemory in cluster mode: eviction picks keys from the hot slot and
    from many other slots (the sampling is fair across slot tables)."""
    s = slot_server(start_server)
    r = s.client()
    hot = [b"{h}%d" % i for i in range(10000)]
    spread = [b"s%d" % i for i in range(10000)]
    # interleaved, so that neither family holds all the nearest TTLs
    load(r, [k for pair_ in zip(hot, spread) for k in pair_], value=b"x" * 100,
         px=3600000 if policy == "volatile-ttl" else None)
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory-policy", policy)
    r.config_set("maxmemory", str(used - 1000000))  # about 1 MB over: several thousand keys go
    r.set(b"trigger", b"1")  # a write evicts
    wait_for(lambda: s.client().info("memory")["used_memory"] <= used - 1000000, timeout=20, what="eviction")
    left = set()
    cursor = 0
    while True:
        cursor, keys = r.scan(cursor, count=1000)
        left.update(keys)
        if cursor == 0:
            break
    gone_hot = [k for k in hot if k not in left]
    gone_spread = [k for k in spread if k not in left]
    # (evicted_keys may count a few more: SCAN's replies used memory too)
    assert r.info("stats")["evicted_keys"] >= len(gone_hot) + len(gone_spread) > 1000
    assert gone_hot and gone_spread
    assert len({key_slot(k) for k in gone_spread}) > 200


def test_slots_active_expiry_reaches_every_slot(start_server):
    """Keys with a TTL in the hot slot and spread over thousands of slots,
    never touched again: the active expiry cycle deletes them all."""
    s = slot_server(start_server, hz="100")
    r = s.client()
    keys = [b"{h}%d" % i for i in range(5000)] + [b"s%d" % i for i in range(15000)]
    load(r, keys, px=50)
    r.set(b"stay", b"1")
    wait_for(lambda: s.client().dbsize() == 1, timeout=30, what="active expiry of 20,000 keys")
    assert r.info("stats")["expired_keys"] == 20000
    assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", key_slot(b"h")) == 0
    assert r.get(b"stay") == b"1"


def test_slot_computed_once_keys_in_their_slots(start_server):
    """The slot check hashes a one-key command's key once and the keyspace
    reuses it (db.c's slot cache, by content): every key must still land
    in, and be found in, its own slot's table whatever path hashed a key
    before it -- plain commands on keys of one length in different slots,
    MULTI/EXEC, scripts (declared and undeclared keys of several slots),
    hash-tagged multi-key commands, RENAME/COPY to a key of the same
    length, and a CROSSSLOT refusal that leaves nothing behind."""
    s = slot_server(start_server)
    r = s.client()
    keys = [b"key:%06d" % i for i in range(400)]  # one length, ~400 slots
    for k in keys:
        assert r.set(k, k) is True
    for k in keys:
        assert r.get(k) == k
        assert r.append(k, b"+") == len(k) + 1
    p = r.pipeline(transaction=True)
    for k in (b"{tx}:aaaa", b"{tx}:bbbb", b"{tx}:cccc"):
        p.set(k, k).get(k).incr(k + b":n")
    out = p.execute()
    assert out[1::3] == [b"{tx}:aaaa", b"{tx}:bbbb", b"{tx}:cccc"] and out[2::3] == [1, 1, 1]
    # a script touching keys of many slots (undeclared: 7.0 allows it)
    assert r.eval("for i=1,#ARGV do redis.call('set', ARGV[i], 'lua') end return redis.call('get', ARGV[1])",
                  0, *[b"lua:%06d" % i for i in range(200)]) == b"lua"
    assert r.eval("return redis.call('get', KEYS[1])", 1, b"key:000007") == b"key:000007+"
    assert r.mset({b"{mt}:1": b"a", b"{mt}:2": b"b"}) is True
    assert r.mget(b"{mt}:1", b"{mt}:2", b"{mt}:3") == [b"a", b"b", None]
    assert r.set(b"{rn}:aaaa", b"rn") is True
    assert r.rename(b"{rn}:aaaa", b"{rn}:bbbb") is True
    assert r.copy(b"{rn}:bbbb", b"{rn}:cccc") is True
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        r.rename(b"key:000001", b"key:999999")
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        r.execute_command("MSET", b"key:000003", b"x", b"key:000004", b"y")
    assert r.get(b"key:000003") == b"key:000003+" and r.get(b"key:000004") == b"key:000004+"
    # every key is in its own slot's table: counted there, listed there
    present = set(r.keys(b"*"))
    assert len(present) == 400 + 2 + 6 + 200 + 2  # keys, {rn}, {tx} keys and counters, lua:*, {mt}
    slots = {}
    for k in present:
        slots.setdefault(key_slot(k), set()).add(k)
    for slot, ks in slots.items():
        assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == len(ks)
        assert set(r.execute_command("CLUSTER", "GETKEYSINSLOT", slot, len(ks) + 1)) == ks
    for k in present:
        assert r.exists(k) == 1
    assert r.get(b"{rn}:cccc") == b"rn" and r.get(b"{rn}:aaaa") is None and r.get(b"key:000001") == b"key:000001+"
