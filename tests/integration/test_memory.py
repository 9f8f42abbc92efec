"""MEMORY (USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE, HELP), INFO memory,
maxmemory-clients with CLIENT NO-EVICT, and pub/sub output-buffer limits.
Reply shapes and errors are compared with redis-server; byte counts are
Cairn's own and checked for consistency."""
import os
import signal
import socket
import time

import pytest
import redis

from compare import agree as both
from resphelp import encode_all


def raw(srv):
    r = srv.client()
    r.response_callbacks.clear()
    return r


def test_memory_errors_and_help_match(server, oracle):
    a, b = raw(server), raw(oracle)
    both(a, b, "SET", "k", "v")
    for cmd in (("MEMORY",), ("MEMORY", "HELP"), ("MEMORY", "HELP", "x"), ("MEMORY", "FOO"),
                ("MEMORY", "USAGE"), ("MEMORY", "USAGE", "nokey"), ("MEMORY", "USAGE", "k", "SAMPLES"),
                ("MEMORY", "USAGE", "k", "SAMPLES", "-1"), ("MEMORY", "USAGE", "k", "SAMPLES", "x"),
                ("MEMORY", "USAGE", "k", "FOO", "1"), ("MEMORY", "USAGE", "k", "SAMPLES", "1", "2"),
                ("MEMORY", "USAGE", "nokey", "SAMPLES", "x"), ("MEMORY", "PURGE"), ("MEMORY", "PURGE", "x"),
                ("MEMORY", "DOCTOR"), ("MEMORY", "STATS", "x"), ("MEMORY", "MALLOC-STATS", "x")):
        both(a, b, *cmd)


def test_memory_usage_grows_with_the_value(server):
    r = server.client()
    r.set("s", "v")
    small = r.memory_usage("s")
    r.set("s", "v" * 1000)
    assert r.memory_usage("s") >= small + 1000
    r.hset("h", mapping={"f%d" % i: "v" * 50 for i in range(1000)})
    full = r.memory_usage("h", samples=0)
    sampled = r.memory_usage("h")
    assert full > 50 * 1000
    assert 0.5 * full < sampled < 2 * full
    for t, fill in (("z", lambda: r.zadd("z", {"m%d" % i: i for i in range(1000)})),
                    ("set", lambda: r.sadd("set", *["m%d" % i for i in range(1000)])),
                    ("l", lambda: r.rpush("l", *["e%d" % i for i in range(1000)]))):
        fill()
        assert r.memory_usage(t) > 1000 * 4
    assert r.memory_usage("nokey") is None


def test_memory_usage_does_not_touch_the_key(server):
    r = raw(server)
    r.set("k", "v")
    r.execute_command("OBJECT", "IDLETIME", "k")
    r.memory_usage("k")
    assert r.execute_command("OBJECT", "IDLETIME", "k") >= 0


STATS_FIELDS = ["peak.allocated", "total.allocated", "startup.allocated", "replication.backlog", "clients.slaves",
                "clients.normal", "cluster.links", "aof.buffer", "lua.caches", "functions.caches", "overhead.total",
                "keys.count", "keys.bytes-per-key", "dataset.bytes", "dataset.percentage", "peak.percentage",
                "allocator.allocated", "allocator.active", "allocator.resident", "allocator-fragmentation.ratio",
                "allocator-fragmentation.bytes", "allocator-rss.ratio", "allocator-rss.bytes", "rss-overhead.ratio",
                "rss-overhead.bytes", "fragmentation", "fragmentation.bytes"]


def test_memory_stats_fields_as_redis(server, oracle):
    names = []
    for srv in (server, oracle):
        r = raw(srv)
        r.set("a", "1")
        r.execute_command("SELECT", "3")
        r.set("b", "1")
        st = r.execute_command("MEMORY", "STATS")
        if isinstance(st, list):
            st = dict(zip(st[::2], st[1::2]))
        names.append([k.decode() if isinstance(k, bytes) else k for k in st])
        assert "db.0" in names[-1] and "db.3" in names[-1]
    assert names[0] == names[1]
    assert [n for n in names[0] if not n.startswith("db.")] == STATS_FIELDS


def test_memory_stats_values_consistent(server):
    r = server.client()
    for i in range(1000):
        r.set("k%d" % i, "v" * 100)
    st = r.memory_stats()
    assert st["keys.count"] == 1000
    assert st["total.allocated"] <= st["peak.allocated"]
    assert st["dataset.bytes"] + st["overhead.total"] == st["total.allocated"]
    assert st["dataset.bytes"] >= 1000 * 100
    assert st["clients.normal"] > 16384
    assert st["db.0"]["overhead.hashtable.main"] >= 1000 * 8


def key_table_bytes(r):
    return r.memory_stats()["db.0"]["overhead.hashtable.main"]


def test_key_table_rehash_finishes_while_idle(start_server):
    """A key table that grew finishes its rehash between polls once the
    load stops, not at the timer's 1 ms per tick (hz 1 here: 1 ms a second,
    most of a minute for this table), and then holds one bucket array of 1
    to 1.5 slots per key."""
    r = start_server(**{"enable-debug-command": "yes", "hz": "1"}).client()
    r.execute_command("DEBUG", "POPULATE", 480000)
    # Once as many keys as its slots, the table asks the lazy-free thread
    # for its next array and keeps filling the old one until it is ready;
    # the add after that starts the rehash.  The size POPULATE leaves
    # depends on when its own rehashes ended (their steps are owed inside
    # one command), up to 120,000 keys short of the next growth: the keys
    # go in a thousand a call.
    first = key_table_bytes(r)
    deadline = time.monotonic() + 30
    i = 0
    while key_table_bytes(r) == first and time.monotonic() < deadline:
        r.mset({"extra:%d" % j: "x" for j in range(i, i + 1000)})
        i += 1000
    while key_table_bytes(r) > 12 * r.dbsize() and time.monotonic() < deadline:
        time.sleep(0.05)
    keys = r.dbsize()
    assert 8 * keys <= key_table_bytes(r) <= 12 * keys
    assert r.get("key:479999") == b"value:479999"


def test_doctor_texts(server):
    r = raw(server)
    assert r.execute_command("MEMORY", "DOCTOR").startswith(b"Hi Sam, this instance is empty")
    p = r.pipeline(transaction=False)
    for i in range(60000):
        p.set("k%d" % i, "v" * 100)
    p.execute()
    text = r.execute_command("MEMORY", "DOCTOR")
    assert text.startswith(b"Hi Sam, I can't find any memory issue") or b"Sam, I found" in text


def test_malloc_stats_and_purge(server):
    r = raw(server)
    stats = r.execute_command("MEMORY", "MALLOC-STATS")
    # jemalloc's report; the sanitizer (libc) build has none, as Redis with libc
    # (Cairn's slab line follows either)
    assert b"jemalloc" in stats or stats.startswith(b"Stats not supported for the current allocator")
    assert b"--- Cairn key-entry slabs: " in stats
    assert r.execute_command("MEMORY", "PURGE") == b"OK"


def test_info_memory_fields_as_redis(server, oracle):
    def fields(srv):
        text = raw(srv).execute_command("INFO", "memory")
        if isinstance(text, bytes):
            text = text.decode()
        return [ln.split(":")[0] for ln in text.split("\r\n") if ln and not ln.startswith("#")]
    # Cairn's own fields (packed idle collections, docs/architecture.md) end the section.
    own = ["cairn_packed_keys", "cairn_packs", "cairn_unpacks", "cairn_pack_passes"]
    got = fields(server)
    assert [f for f in got if f not in own] == fields(oracle)
    assert got[len(got) - len([f for f in got if f in own]):] == [f for f in own if f in got]  # at the end
    info = server.client().info("memory")
    assert info["allocator_allocated"] > 0
    assert info["allocator_active"] >= info["allocator_allocated"]
    assert info["allocator_resident"] >= info["allocator_active"]


def test_used_memory_tracks_the_dataset(server):
    r = server.client()
    before = r.info("memory")["used_memory"]
    p = r.pipeline(transaction=False)
    for i in range(20000):
        p.set("key:%d" % i, "x" * 200)
    p.execute()
    info = r.info("memory")
    assert info["used_memory"] - before >= 20000 * 200
    # used_memory is what the allocator reports as allocated, and resident memory covers it
    assert info["used_memory_rss"] >= info["used_memory"] * 0.9
    r.flushall()
    time.sleep(0.2)
    assert r.info("memory")["used_memory"] < before + 256 * 1024


def test_client_list_memory_fields(server):
    r = server.client()
    line = r.execute_command("CLIENT", "LIST")
    if isinstance(line, bytes):
        line = line.decode()
    for f in ("qbuf=", "qbuf-free=", "argv-mem=", "obl=", "oll=", "omem=", "tot-mem="):
        assert f in line
    tot = int(line.split("tot-mem=")[1].split()[0])
    assert tot > 16384


# --- client eviction ---


def open_clients(srv, n):
    socks = []
    for _ in range(n):
        s = socket.create_connection((srv.host, srv.port))
        socks.append(s)
    return socks


def test_maxmemory_clients_evicts_the_biggest_client(server):
    r = server.client()
    r.client_setname("control")
    r.execute_command("CLIENT", "NO-EVICT", "on")
    small = open_clients(server, 5)
    big = socket.create_connection((server.host, server.port))
    # a half-sent bulk argument keeps growing the big client's query buffer
    big.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4000000\r\n" + b"x" * 2000000)
    time.sleep(0.3)
    r.config_set("maxmemory-clients", 1024 * 1024)
    time.sleep(0.3)
    r.ping()
    assert r.info("stats")["evicted_clients"] >= 1
    big.settimeout(2)
    try:
        got = big.recv(100)
    except (ConnectionResetError, socket.timeout):
        got = b""
    assert got == b""
    for s in small:
        s.sendall(b"PING\r\n")
        s.settimeout(2)
        assert s.recv(100) == b"+PONG\r\n"
    assert r.ping()
    for s in small:
        s.close()


def test_no_evict_client_survives(server):
    r = server.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.config_set("maxmemory-clients", 1)  # every client is over
    time.sleep(0.2)
    assert r.ping()
    other = socket.create_connection((server.host, server.port))
    other.settimeout(2)
    other.sendall(b"PING\r\n")
    try:
        got = other.recv(100)
    except (ConnectionResetError, socket.timeout):
        got = b""
    assert got == b""
    assert r.info("stats")["evicted_clients"] >= 1
    r.config_set("maxmemory-clients", 0)


def test_maxmemory_clients_percent(server):
    r = server.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.config_set("maxmemory-clients", "50%")  # of maxmemory 0: no limit
    other = socket.create_connection((server.host, server.port))
    other.sendall(b"PING\r\n")
    other.settimeout(2)
    assert other.recv(100) == b"+PONG\r\n"
    assert r.info("stats")["evicted_clients"] == 0


def test_maxmemory_clients_evicts_from_the_biggest_size_class(server):
    """Six clients whose query buffers hold 100-900 KB of a half-sent
    argument: under a 1 MB limit the three of 512 KB and more (the top
    power-of-two class) go, the three smaller ones stay, and memory
    returns to where it was plus what the survivors hold."""
    from test_aof import wait_for
    r = server.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    base = r.info("memory")["used_memory"]
    sizes = [100, 200, 300, 700, 800, 900]
    socks = []
    for kb in sizes:
        s = socket.create_connection((server.host, server.port))
        n = kb * 1000
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (n + 1) + b"x" * n)
        socks.append(s)
    me = r.client_id()

    def filled():
        # Every argument read to its end: a buffer still filling may sit in
        # a smaller size class than its final one when eviction looks.
        held = sorted(int(c["tot-mem"]) for c in r.client_list() if int(c["id"]) != me)
        return len(held) == len(sizes) and all(h >= kb * 1000 for h, kb in zip(held, sizes))
    wait_for(filled, timeout=30, what="buffers filled")
    assert r.info("memory")["used_memory"] > base + 2900 * 1000
    r.config_set("maxmemory-clients", 1000 * 1000)
    wait_for(lambda: r.info("stats")["evicted_clients"] == 3, timeout=30, what="3 evicted")
    for kb, s in zip(sizes, socks):
        s.settimeout(5)
        if kb < 512:
            s.sendall(b"x\r\n")
            assert s.recv(100) == b"+OK\r\n"
        else:
            try:
                got = s.recv(100)
            except (ConnectionResetError, socket.timeout):
                got = b""
            assert got == b""
    assert r.info("stats")["evicted_clients"] == 3
    r.config_set("maxmemory-clients", 0)
    wait_for(lambda: r.info("memory")["used_memory"] < base + 1500 * 1000, timeout=30, what="memory back")
    for s in socks:
        s.close()


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_maxmemory_clients_evicts_a_subscriber_whose_output_grows(request, kind):
    """Many idle clients and one subscriber that stops reading: as its
    output buffer grows past maxmemory-clients it alone is disconnected
    (output limits are off: this is client eviction), and memory returns
    near where it was."""
    from test_aof import wait_for
    srv = request.getfixturevalue("start_server" if kind == "cairn" else "start_oracle")()
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.config_set("client-output-buffer-limit", "pubsub 0 0 0")
    idle = open_clients(srv, 20)
    for s in idle:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
    slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect((srv.host, srv.port))
    slow.sendall(b"SUBSCRIBE ch\r\n")
    wait_for(lambda: r.pubsub_numsub("ch")[0][1] == 1, timeout=30, what="subscribed")
    base = r.info("memory")["used_memory"]
    r.config_set("maxmemory-clients", 4 * 1024 * 1024)
    payload = "x" * 20000
    for _ in range(600):  # 12 MB: more than the limit plus what the kernel holds
        r.publish("ch", payload)
        if r.pubsub_numsub("ch")[0][1] == 0:
            break
    wait_for(lambda: r.pubsub_numsub("ch")[0][1] == 0, timeout=30, what="subscriber evicted")
    assert r.info("stats")["evicted_clients"] == 1
    for s in idle:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
    wait_for(lambda: r.info("memory")["used_memory"] < base + 1024 * 1024, timeout=30, what="memory back")
    r.config_set("maxmemory-clients", 0)
    for s in idle + [slow]:
        s.close()


def test_maxmemory_clients_tracking_restarts(server):
    """Unset, the limit stops the tracking at the next cron tick; set
    again, the clients are counted afresh: a limit below one client's size
    evicts every evictable client, a generous one none."""
    from test_aof import wait_for
    r = server.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.config_set("maxmemory-clients", 64 * 1024 * 1024)
    others = open_clients(server, 3)
    for s in others:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
    r.config_set("maxmemory-clients", 0)
    time.sleep(0.3)  # a few cron ticks (hz 10) pass; nothing is asserted about them
    r.config_set("maxmemory-clients", 64 * 1024 * 1024)
    assert r.info("stats")["evicted_clients"] == 0
    r.config_set("maxmemory-clients", 1)
    wait_for(lambda: r.info("stats")["evicted_clients"] == 3, timeout=30, what="3 evicted")
    assert r.info("clients")["connected_clients"] == 1
    r.config_set("maxmemory-clients", 0)
    for s in others:
        s.close()


def test_pubsub_output_buffer_limit_disconnects_only_slow_subscriber(server):
    r = server.client()
    r.config_set("client-output-buffer-limit", "pubsub 256kb 128kb 60")
    slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect((server.host, server.port))
    slow.sendall(b"SUBSCRIBE ch\r\n")
    fast = r.pubsub()
    fast.subscribe("ch")
    fast.get_message(timeout=1)
    time.sleep(0.1)
    base = r.info("memory")["used_memory"]
    payload = "x" * 20000
    for _ in range(1000):
        r.publish("ch", payload)
        fast.get_message(timeout=1)
    time.sleep(0.2)
    assert r.pubsub_numsub("ch")[0][1] == 1  # the slow one was closed
    assert r.info("memory")["used_memory"] < base + 512 * 1024
    slow.close()


# --- DEBUG subcommands that reach memory-related states ---


def test_debug_subcommands_as_redis(request):
    a = raw(request.getfixturevalue("start_server")(enable_debug_command="yes"))
    b = raw(request.getfixturevalue("start_oracle")(enable_debug_command="yes"))
    for cmd in (("DEBUG", "JMAP"), ("DEBUG", "STRINGMATCH-LEN"), ("DEBUG", "REPLYBUFFER"),
                ("DEBUG", "REPLYBUFFER", "RESIZING"), ("DEBUG", "REPLYBUFFER", "FOO", "1"),
                ("EVAL", "return redis.call('watch','x')", "0"), ("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"),
                ("EVAL", "return redis.call('watch','x')", "0"), ("EVAL", "return redis.call('unwatch')", "0"),
                ("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"), ("EVAL", "return redis.call('watch','x')", "0"),
                ("DEBUG", "CHANGE-REPL-ID", "x"), ("DEBUG", "SLEEP", "0")):
        both(a, b, *cmd)
    ids = []
    for _ in range(2):
        info = a.execute_command("INFO", "replication").decode()
        ids.append([ln for ln in info.split("\r\n") if ln.startswith("master_replid:")][0])
        assert a.execute_command("DEBUG", "CHANGE-REPL-ID") == b"OK"
    info = a.execute_command("INFO", "replication").decode()
    assert ids[0] != ids[1]
    assert "master_replid2:" + "0" * 40 in info


def client_field(r, name):
    line = r.execute_command("CLIENT", "INFO")
    line = line.decode() if isinstance(line, bytes) else line
    return int(line.split(" %s=" % name)[1].split()[0])


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_client_list_rbp_is_the_reply_buffer_peak(request, kind):
    """CLIENT LIST rbp: the most of the reply buffer a client used lately
    (reset every 5 s to what it holds), at most rbs."""
    from test_aof import wait_for
    srv = request.getfixturevalue("start_server" if kind == "cairn" else "start_oracle")()
    r = srv.client()
    r.set("v", "x" * 10000)

    def peak_seen():
        r.get("v")
        return client_field(r, "rbp") >= 10000
    wait_for(peak_seen, timeout=30, what="rbp after a 10 KB reply")
    assert client_field(r, "rbp") <= client_field(r, "rbs")


@pytest.mark.parametrize("shape", ["hash", "set", "zset", "list", "small_hashes"])
def test_used_memory_counts_each_dataset_shape(server, shape):
    """used_memory grows by at least the payload each shape stores, and
    never claims more than the process has resident."""
    r = server.client()
    before = r.info("memory")["used_memory"]
    p = r.pipeline(transaction=False)
    n = 20000
    for i in range(n):
        member = "m%06d-%s" % (i, "x" * 40)
        if shape == "hash":
            p.hset("h%d" % (i % 4), member, "v" * 40)
        elif shape == "set":
            p.sadd("s%d" % (i % 4), member)
        elif shape == "zset":
            p.zadd("z%d" % (i % 4), {member: i})
        elif shape == "list":
            p.rpush("l%d" % (i % 4), member)
        else:
            p.hset("sh%d" % (i // 10), member, "v" * 40)
        if i % 1000 == 999:
            p.execute()
    p.execute()
    info = r.info("memory")
    payload = n * 48
    assert info["used_memory"] - before >= payload
    assert info["used_memory"] <= info["used_memory_rss"] * 1.1


# --- replica output and the AOF buffer: counted apart, not for eviction ---

KINDS = ["cairn", "redis"]


def start_kind(request, kind, **cfg):
    return request.getfixturevalue("start_server" if kind == "cairn" else "start_oracle")(**cfg)


def mem(r):
    return r.info("memory")


@pytest.mark.parametrize("kind", KINDS)
def test_stalled_replica_output_is_not_counted_for_eviction(request, kind):
    """A replica that stops reading: its output buffer shows in
    mem_clients_slaves and mem_not_counted_for_evict, and takes used_memory
    past maxmemory without evicting a key, as Redis does."""
    from test_repl import attach, in_sync, wait_for
    p_srv = start_kind(request, kind, repl_diskless_sync_delay=0)
    s_srv = start_kind(request, kind)
    p = p_srv.client()
    p.config_set("client-output-buffer-limit", "replica 0 0 0")
    attach(s_srv, p_srv)
    s = s_srv.client()
    wait_for(lambda: in_sync(p, s), what="in sync")
    os.kill(s_srv.pid, signal.SIGSTOP)
    try:
        # Write until the primary holds 8 MB of output for the replica (the
        # kernel takes what the sockets hold first; at most 100 MB).
        value = b"x" * 100000
        written = 0
        while mem(p)["mem_not_counted_for_evict"] < 8 * 1024 * 1024 and written < 1000:
            pipe = p.pipeline(transaction=False)
            for i in range(written, written + 20):
                pipe.set("k%d" % i, value)
            pipe.execute()
            written += 20
        m = mem(p)
        assert m["mem_not_counted_for_evict"] >= 8 * 1024 * 1024, m
        assert m["mem_clients_slaves"] >= m["mem_not_counted_for_evict"] - m["mem_aof_buffer"] - 65536
        assert m["mem_total_replication_buffers"] >= m["mem_replication_backlog"] + 4 * 1024 * 1024
        # A limit between what maxmemory counts and used_memory: a write
        # evicts nothing.
        p.config_set("maxmemory-policy", "allkeys-random")
        p.config_set("maxmemory", m["used_memory"] - m["mem_not_counted_for_evict"] // 2)
        assert p.set("after", "v")
        m = mem(p)
        assert m["used_memory"] > m["maxmemory"], m
        assert p.info("stats")["evicted_keys"] == 0
        assert p.dbsize() == written + 1
    finally:
        os.kill(s_srv.pid, signal.SIGCONT)
    wait_for(lambda: in_sync(p, s), what="caught up")
    wait_for(lambda: mem(p)["mem_not_counted_for_evict"] < 1024 * 1024, what="replica output drained")
    assert p.info("stats")["evicted_keys"] == 0


# 3 MB appended in 1 KB steps: the AOF gets 3,000 APPENDs, the Lua heap
# (not maxmemory's business) stays small.
GROW = "local s = string.rep('x', 1000) for i = 1, 3000 do redis.call('append', KEYS[1], s) end return 1"


def pipelined(srv, *cmds):
    """Sends cmds in one write (one turn of the server's loop: the AOF
    buffer is written only before the loop sleeps) and returns the last
    reply's text."""
    wire = encode_all(cmds)
    with srv.connect() as conn:
        conn.send(wire)
        for _ in cmds[:-1]:
            conn.recv_until(b"\r\n")
        head = conn.recv_until(b"\r\n")
        n = int(head[1:-2])
        return conn.recv_exact(n + 2)[:-2].decode()


def fields(text):
    return dict(ln.split(":", 1) for ln in text.split("\r\n") if ":" in ln)


@pytest.mark.parametrize("kind", KINDS)
def test_aof_buffer_is_counted_apart(request, kind):
    """With appendonly, effects wait in the AOF buffer until the loop
    sleeps: INFO memory shows them in mem_aof_buffer, and maxmemory does
    not count them -- a write right after a script that filled the buffer
    is not refused -OOM though used_memory is over the limit, as in
    Redis."""
    srv = start_kind(request, kind, appendonly="yes")
    r = srv.client()
    probe = fields(pipelined(srv, ("EVAL", GROW, "1", "probe"), ("INFO", "memory")))
    aof = int(probe["mem_aof_buffer"])
    assert aof >= 3000000
    assert int(probe["mem_not_counted_for_evict"]) >= aof
    assert mem(r)["mem_aof_buffer"] < 1000000  # written before the loop slept
    r.delete("probe")
    r.config_set("maxmemory", int(probe["used_memory"]) - aof // 2)  # noeviction
    info = fields(pipelined(srv, ("EVAL", GROW, "1", "a"), ("SET", "x", "y"), ("INFO", "memory")))
    assert int(info["used_memory"]) > int(info["maxmemory"])
    assert int(info["used_memory"]) - int(info["mem_not_counted_for_evict"]) <= int(info["maxmemory"])
    assert r.get("x") == b"y"
