"""Issue 33's memory accounting and client limits, against redis-server
7.0.15 where both servers can be put in the same state: CONFIG SET
maxmemory evicting at once, what a client's memory counts (CLIENT LIST
tot-mem / qbuf / multi-mem), client eviction, the output-buffer soft limit
from cron, CLIENT LIST's order, the reply buffer's resizing (rbs/rbp, DEBUG
REPLYBUFFER) and DEBUG CLIENT-EVICTION."""
import re
import socket
import time

import pytest

from compare import BOTH
from waithelp import poll as wait_for

KB = 1024
MB = 1024 * 1024


def target(request, name, **cfg):
    factory = "start_server" if name == "server" else "start_oracle"
    cfg.setdefault("enable_debug_command", "yes")
    return request.getfixturevalue(factory)(**cfg)


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
    c = named_conn(srv, "slow")
    # Many replies the client never reads: the output passes the soft limit
    # once, then nothing more is written to it.
    c.send(b"GET big\r\n" * 16)
    assert wait_for(lambda: (field(r, "slow", "omem") or 0) > 256 * KB)
    # Closed after the soft seconds, though no more output comes.
    assert wait_for(lambda: client_fields(r, "slow") is None, timeout=8)
    c.close()


# --- the reply buffer's resizing (rbs / rbp), DEBUG REPLYBUFFER ---


def rbs(r, name):
    return field(r, name, "rbs")


@pytest.mark.parametrize("name", BOTH)
def test_reply_buffer_shrinks_when_idle_and_grows_with_big_replies(request, name):
    srv = target(request, name)
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    assert r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"OK"
    tc = named(srv, "tc")
    assert tc.ping()
    # A client with small replies gets a small buffer back.
    assert wait_for(lambda: 1024 <= rbs(r, "tc") < 2046)
    r.set("bigval", "x" * 32768)
    assert r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == b"OK"
    # Replies that fill it make it grow back (doubling each cron tick).
    assert wait_for(lambda: len(tc.get("bigval")) == 32768 and 16384 <= rbs(r, "tc") < 32768)
    assert r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"OK"
    assert wait_for(lambda: 1024 <= rbs(r, "tc") < 2046)
    st = r.info("stats")
    assert st["reply_buffer_shrinks"] >= 2 and st["reply_buffer_expands"] >= 1
    # Resizing off: the buffer keeps its size whatever the replies.
    assert r.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "0") == b"OK"
    size = rbs(r, "tc")
    for _ in range(5):
        tc.get("bigval")
        time.sleep(0.1)
    assert rbs(r, "tc") == size
    assert r.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "1") == b"OK"
    assert wait_for(lambda: len(tc.get("bigval")) == 32768 and rbs(r, "tc") >= 16384)
    assert r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset") == b"OK"
    r.config_resetstat()
    assert r.info("stats")["reply_buffer_shrinks"] == 0


def test_debug_replybuffer_and_client_eviction_replies_as_redis(request):
    a, b = (target(request, n).client() for n in BOTH)
    for r in (a, b):
        r.response_callbacks.clear()
    from compare import agree
    for cmd in (("REPLYBUFFER",), ("REPLYBUFFER", "PEAK-RESET-TIME"), ("REPLYBUFFER", "PEAK-RESET-TIME", "abc"),
                ("REPLYBUFFER", "PEAK-RESET-TIME", "99999999999999999999"),
                ("REPLYBUFFER", "PEAK-RESET-TIME", "-5"), ("REPLYBUFFER", "peak-reset-time", "NEVER"),
                ("REPLYBUFFER", "PEAK-RESET-TIME", "Reset"), ("REPLYBUFFER", "RESIZING", "x"),
                ("REPLYBUFFER", "RESIZING", "1"), ("REPLYBUFFER", "FOO", "1"),
                ("REPLYBUFFER", "RESIZING", "1", "2"), ("CLIENT-EVICTION",), ("CLIENT-EVICTION", "x")):
        agree(a, b, "DEBUG", *cmd)


@pytest.mark.parametrize("name", BOTH)
def test_debug_client_eviction_buckets(request, name):
    srv = target(request, name)
    r = srv.client()
    r.config_set("maxmemory-clients", "100mb")
    big = srv.connect()
    big.send(b"*2\r\n$3\r\nSET\r\n$300000\r\n" + b"v" * 1000)  # a partly received bulk: 300 KB declared
    # The partly received 300 KB argument puts its client in 262144-524287.
    assert wait_for(lambda: re.search(r"bucket +262144 - +524287: tot-mem: +(\d+), clients: 1",
                                      r.execute_command("DEBUG", "CLIENT-EVICTION").decode()))
    lines = r.execute_command("DEBUG", "CLIENT-EVICTION").decode().splitlines()
    assert len(lines) == 19
    assert lines[0].startswith("bucket          0 -      32767: tot-mem: ")
    assert lines[1].startswith("bucket      32768 -      65535: tot-mem: ")
    assert lines[18].startswith("bucket 4294967296+            : tot-mem: ")
    parsed = [re.match(r"bucket +(\d+)(?: - +(\d+)|\+ +): tot-mem: +(\d+), clients: (\d+)$", ln) for ln in lines]
    assert all(parsed)
    assert sum(int(m.group(4)) for m in parsed) == 2
    assert int(parsed[4].group(3)) >= 300000
    r.execute_command("CLIENT", "NO-EVICT", "on")
    text = r.execute_command("DEBUG", "CLIENT-EVICTION").decode()
    assert sum(int(n) for n in re.findall(r"clients: (\d+)", text)) == 1
    big.close()


# --- item 20: what a client's memory counts ---


def steady(srv):
    """A client on srv whose buffers keep their size (tot-mem comparable)."""
    r = srv.client()
    r.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "0")
    return r


def named_conn(srv, name):
    """A raw connection named by CLIENT SETNAME (found in CLIENT LIST)."""
    c = srv.connect()
    c.send(b"CLIENT SETNAME %s\r\n" % name.encode())
    c.expect(b"+OK\r\n")
    return c


def fields_of(r, name, *names):
    f = client_fields(r, name)
    return tuple(int(f[n]) for n in names)


@pytest.mark.parametrize("name", BOTH)
def test_partly_received_bulk_counts_by_declared_length(request, name):
    srv = target(request, name)
    r = steady(srv)
    c = named_conn(srv, "pbulk")
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"v" * 1000000)
    assert wait_for(lambda: field(r, "pbulk", "qbuf") == 1000000)
    qbuf, free, argv, tot = fields_of(r, "pbulk", "qbuf", "qbuf-free", "argv-mem", "tot-mem")
    assert argv == 4  # SET and k, received whole
    assert tot >= 3000000  # the declared length, not the bytes received
    assert wait_for(lambda: r.info("clients")["client_recent_max_input_buffer"] >= 3000000)
    c.send(b"v" * 2000000)
    assert wait_for(lambda: field(r, "pbulk", "qbuf") == 3000000)
    c.send(b"\r\n")
    c.expect(b"+OK\r\n")
    assert r.strlen("k") == 3000000
    assert fields_of(r, "pbulk", "qbuf", "argv-mem") == (0, 0)
    c.close()


@pytest.mark.parametrize("name", BOTH)
def test_partly_received_multibulk_counts_its_arguments(request, name):
    srv = target(request, name)
    r = steady(srv)
    c = named_conn(srv, "pmb")
    base = field(r, "pmb", "tot-mem")
    c.send(b"*100000\r\n" + b"$5\r\nhello\r\n" * 1000)
    assert wait_for(lambda: field(r, "pmb", "argv-mem") == 5000)
    # the lengths, and a pointer each (less what spare strings the parser used)
    assert field(r, "pmb", "tot-mem") >= base + 5000 + 1000 * 8 - 1024
    c.close()


@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("what", ["watch", "subscribe", "psubscribe", "ssubscribe", "prefixes"])
def test_client_memory_counts_watches_subscriptions_and_prefixes(request, name, what):
    srv = target(request, name)
    r = steady(srv)
    c = named_conn(srv, "x")
    n = 2000
    if what == "prefixes":
        c.send(b"HELLO 3\r\n")
        c.recv_until(b"modules\r\n*0\r\n")
    base = field(r, "x", "tot-mem")
    words = [b"k%06d" % i for i in range(n)]
    if what == "watch":
        c.send(b"WATCH " + b" ".join(words) + b"\r\n")
        c.expect(b"+OK\r\n")
    elif what == "prefixes":
        c.send(b"CLIENT TRACKING on BCAST " + b" ".join(b"PREFIX " + w for w in words) + b"\r\n")
        c.expect(b"+OK\r\n")
    else:
        cmd = what.upper().encode()
        c.send(cmd + b" " + b" ".join(words) + b"\r\n")
        assert wait_for(lambda: field(r, "x", {"subscribe": "sub", "psubscribe": "psub",
                                              "ssubscribe": "ssub"}[what]) == n)
    # Redis counts at least a list node (24 bytes) per item.
    assert wait_for(lambda: field(r, "x", "tot-mem") >= base + 24 * n)
    c.close()


@pytest.mark.parametrize("name", BOTH)
def test_idle_subscriber_evicted_as_a_client_not_by_evicting_keys(request, name):
    srv = target(request, name)
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    for i in range(100):
        r.set("key:%d" % i, "x" * 1000)
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", int(r.info("memory")["used_memory"]) + 12 * MB)
    r.config_set("maxmemory-clients", "3mb")
    sub = srv.connect()
    sub.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sub.send(b"CLIENT SETNAME sub\r\nSUBSCRIBE ch\r\n")
    sub.recv_until(b":1\r\n")
    pub = srv.connect()
    msg = b"m" * (200 * KB)
    payload = b"".join(b"*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$%d\r\n%s\r\n" % (len(msg), msg) for _ in range(100))
    pub.send(payload)
    got = b""
    while got.count(b"\r\n") < 100:
        got += pub.recv_until(b"\r\n")
    assert wait_for(lambda: client_fields(r, "sub") is None)
    st = r.info("stats")
    assert st["evicted_clients"] >= 1
    assert st["evicted_keys"] == 0
    assert r.dbsize() == 100
    sub.close()
    pub.close()


# --- item 21: replica output in mem_not_counted_for_evict ---


@pytest.mark.parametrize("name", BOTH)
def test_replica_output_counts_its_allocation_as_not_counted(request, name):
    import os
    import signal
    factory = "start_server" if name == "server" else "start_oracle"
    prim = request.getfixturevalue(factory)()
    rep = request.getfixturevalue(factory)(args=["--replicaof", prim.host, str(prim.port)])
    r, rr = prim.client(), rep.client()
    assert wait_for(lambda: rr.info("replication").get("master_link_status") == "up")
    assert wait_for(lambda: r.info("replication").get("slave0", {}).get("state") == "online")
    os.kill(rep.pid, signal.SIGSTOP)
    try:
        val = "x" * (100 * KB)
        p = r.pipeline(transaction=False)
        for i in range(200):
            p.set("k%d" % (i % 10), val)
        p.execute()

        def replica_omem():
            for line in r.execute_command("CLIENT", "LIST", "TYPE", "replica").decode().splitlines():
                return int(dict(f.split("=", 1) for f in line.split(" "))["omem"])
            return 0
        assert wait_for(lambda: replica_omem() > 4 * MB)
        omem = replica_omem()
        nc = r.info("memory")["mem_not_counted_for_evict"]
        # Both share the replica's stream with the backlog (Cairn's
        # replication buffer, Redis 7.0's): what passes the backlog's size
        # is left out, with the replica's own output window.
        assert nc >= omem - int(r.config_get("repl-backlog-size")["repl-backlog-size"]) - 64 * KB
        assert nc > 0
    finally:
        os.kill(rep.pid, signal.SIGCONT)


@pytest.mark.parametrize("name", BOTH)
def test_key_table_growth_does_not_push_into_evicting(request, name):
    """Redis's own test: at maxmemory, the table's next growth waits."""
    srv = target(request, name)
    r = srv.client()
    r.config_set("latency-tracking", "no")
    r.config_set("maxmemory-policy", "allkeys-random")
    p = r.pipeline(transaction=False)
    for i in range(4096):
        p.set("key:%d" % i, "x")
    p.execute()
    used = int(r.info("memory")["used_memory"])  # the first INFO: the Lua VM's figure too
    r.config_set("maxmemory", used + 10 * KB)
    for k in ("k0", "k1", "k2"):
        r.set(k, "v")
    assert r.dbsize() == 4099
    assert r.info("stats")["evicted_keys"] == 0


@pytest.mark.parametrize("name", BOTH)
def test_first_writes_after_flushall_do_not_push_into_evicting(request, name):
    srv = target(request, name)
    r = srv.client()
    r.config_set("latency-tracking", "no")
    r.config_set("maxmemory-policy", "allkeys-random")
    r.eval("return 1", 0)
    for i in range(100):
        r.set("a%d" % i, "x" * 100, ex=1000)
    r.flushall()
    used = int(r.info("memory")["used_memory"])
    r.config_set("maxmemory", used + 10 * KB)
    for k in ("k1", "k2", "k3", "k4"):
        assert r.set(k, "v", ex=1000)  # the TTL index's first slots cost bytes
        r.hset("h" + k, "f", "v")
    assert r.dbsize() == 8
    assert r.info("stats")["evicted_keys"] == 0


@pytest.mark.parametrize("name", BOTH)
def test_subscriber_grown_by_one_command_is_evicted_before_any_key(request, name):
    """A script fills an idle subscriber's output; the next command (in the
    same read) finds it over maxmemory-clients and evicts it, and no key is
    evicted for the memory it held."""
    srv = target(request, name)
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    for i in range(100):
        r.set("key:%d" % i, "x" * 1000)
    r.config_set("maxmemory-policy", "allkeys-random")
    sub = srv.connect()
    sub.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sub.send(b"CLIENT SETNAME sub\r\nSUBSCRIBE ch\r\n")
    sub.recv_until(b":1\r\n")
    r.config_set("maxmemory", int(r.info("memory")["used_memory"]) + 2 * MB)
    r.config_set("maxmemory-clients", "3mb")
    pub = srv.connect()
    script = b"for i=1,100 do redis.call('publish','ch',ARGV[1]) end return 1"
    msg = b"m" * (100 * KB)
    pub.send(b"*4\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n$%d\r\n%s\r\n" % (len(script), script, len(msg), msg)
             + b"*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n")
    pub.expect(b":1\r\n+OK\r\n")
    assert wait_for(lambda: client_fields(r, "sub") is None)
    st = r.info("stats")
    assert st["evicted_clients"] == 1
    assert st["evicted_keys"] == 0
    assert r.dbsize() == 101
    sub.close()
    pub.close()


def test_partly_received_small_bulk_fields_as_redis(request):
    got = []
    jemalloc = True
    for name in BOTH:
        srv = target(request, name)
        r = steady(srv)
        c = named_conn(srv, "q")
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\n" + b"v" * 50)
        assert wait_for(lambda: field(r, "q", "qbuf") == 50)
        got.append(fields_of(r, "q", "qbuf", "qbuf-free", "argv-mem"))
        jemalloc = jemalloc and r.info("memory")["mem_allocator"].startswith("jemalloc")
        c.close()
    if not jemalloc:
        # The sanitizer build uses libc malloc: the query buffer's usable
        # size (qbuf-free) is the allocator's, so only the others compare
        got = [(q, a) for q, _, a in got]
        assert got[0] == got[1] == (50, 4)
    else:
        assert got[0] == got[1] == (50, 20424, 4)


# --- the Lua VMs exist from the start, and after a flush, as in Redis ---


@pytest.mark.parametrize("name", BOTH)
def test_lua_vms_exist_from_startup_and_after_flush(request, name):
    """Redis creates the EVAL and the functions VMs at startup, and SCRIPT
    FLUSH and FUNCTION FLUSH put fresh ones in their place: their memory is
    in INFO from the first call (and in used_memory_startup).  Cairn made
    them on first use, so a fresh server reported used_memory_vm_functions
    0 and its first INFO memory paid for building the EVAL VM (0.8-1.8 ms,
    in the slow log)."""
    srv = target(request, name)
    r = srv.client()

    def vms():
        m = r.info("memory")
        return m["used_memory_vm_eval"], m["used_memory_vm_functions"], m["used_memory_vm_total"]

    ev, fn, total = vms()
    assert ev > 16 * KB and fn > 16 * KB and total == ev + fn, (ev, fn, total)
    assert r.info("memory")["used_memory_startup"] > ev + fn
    assert r.execute_command("SCRIPT", "FLUSH")
    assert r.execute_command("FUNCTION", "FLUSH")
    ev2, fn2, total2 = vms()
    assert ev2 > 16 * KB and fn2 > 16 * KB and total2 == ev2 + fn2, (ev2, fn2, total2)
    # A script and a library still run on the fresh VMs.
    assert r.eval("return 1 + 1", 0) == 2
    r.execute_command("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 7 end)")
    assert r.execute_command("FCALL", "f", 0) == 7


def test_first_client_ids_as_redis(request):
    """The EVAL and functions pseudo-clients take client ids 1 and 2 at
    startup in Redis, so the first connection is id 3; Cairn's are made with
    the VMs, at startup too.  Both servers are started the same way, so the
    test's connections get the same ids on both."""
    ids = []
    for name in BOTH:
        r = target(request, name).client()
        ids.append(r.client_id())
    assert ids[0] == ids[1], ids
    assert ids[0] >= 3
