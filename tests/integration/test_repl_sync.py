"""Replication, the full sync's second half and the client-facing rules
around it: a replica answers -LOADING (with INFO's loading_* fields) while
it loads the primary's RDB, from disk or (repl-diskless-load on-empty-db /
swapdb) from the socket, swapdb keeping the old data when the load fails;
WAIT counting the calling client's own last write; CLIENT PAUSE holding
the primary's stream on a replica; a replica arriving during a disk save
attaching to it; and a full sync cut at random points.  Each is compared
with redis-server 7.0.15 where the two can be set up alike."""
import functools
import os
import random
import socket
import threading
import time

import pytest
import redis

from test_aof import wait_for
from test_repl import DBG, FAST, attach, digest, in_sync, info, link_up

wait_for = functools.partial(wait_for, timeout=30.0)

# A load slow enough to watch: per key, in microseconds (set back to 0 to
# let it finish; Redis reads the same directive per key).
SLOW_LOAD = {"key-load-delay": "10000", "loading-process-events-interval-bytes": "1024"}


def fill(r, n, prefix="key:"):
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set("%s%d" % (prefix, i), "v%d" % i)
    pipe.execute()


def loading_error(r):
    try:
        r.ping()
    except redis.exceptions.BusyLoadingError as e:
        return str(e)
    except redis.ResponseError as e:
        return str(e)
    return None


def watch_load(s):
    """While the replica loads: the error a command gets, INFO's loading
    fields, what a loading-ok command sees; then let the load finish."""
    wait_for(lambda: loading_error(s) is not None, what="LOADING")
    err = loading_error(s)
    per = s.info("persistence")
    seen = (err, per["loading"], per.get("async_loading"),
            sorted(k for k in per if k.startswith("loading_")),
            info(s)["master_sync_in_progress"])
    s.config_set("key-load-delay", 0)
    return seen


@pytest.mark.parametrize("disk", ["disk", "diskless", "on-empty-db"])
def test_replica_answers_loading_while_it_loads(start_server, start_oracle, disk):
    """The primary sends its RDB from disk or a diskless stream; the replica
    stages it in a file or (repl-diskless-load on-empty-db) in memory."""
    out = []
    load = {"repl-diskless-load": "on-empty-db" if disk == "on-empty-db" else "disabled"}
    for start in (start_server, start_oracle):
        p_srv = start_server(**{"repl-diskless-sync": "no" if disk == "disk" else "yes", **FAST})
        s_srv = start(**SLOW_LOAD, **load, **DBG)
        p = p_srv.client()
        fill(p, 2000)
        s = s_srv.client()
        s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        seen = watch_load(s)
        wait_for(lambda: link_up(s), what="link up")
        p.set("after", 1)
        wait_for(lambda: in_sync(p, s), what="sync")
        assert digest(s) == digest(p)
        assert s.info("persistence")["loading"] == 0
        assert s.info("persistence")["rdb_last_load_keys_loaded"] == 2000
        out.append(seen)
        if disk == "on-empty-db":
            assert "to parser" in s_srv.log
            assert not [f for f in os.listdir(s_srv.tmp) if f.endswith(".rdb")]
    assert out[0] == out[1]
    assert out[0][0].startswith("Redis is loading the dataset in memory")


def test_wait_counts_from_the_callers_last_command(start_server, start_oracle):
    """WAIT waits for the replication offset as of the end of the calling
    client's previous command (Redis 7.0 records it after every command,
    reads included), not the server's offset now: with the replica stopped,
    a client whose last command came before the unacknowledged write, or a
    new client's first command, gets the replica at once."""
    out = []
    for start in (start_server, start_oracle):
        p_srv = start(**FAST)
        s_srv = start(**DBG)
        a, b, fresh, first = p_srv.client(), p_srv.client(), p_srv.client(), p_srv.client()
        s = attach(s_srv, p_srv)
        res = [b.set("x", 1), b.execute_command("WAIT", 1, 0)]
        os.kill(s_srv.pid, 19)  # SIGSTOP: online, but acknowledges nothing
        try:
            a.set("y", 1)
            res += [b.execute_command("WAIT", 1, 100),      # its last command came before y
                    fresh.execute_command("WAIT", 1, 100),  # a first command: offset 0
                    fresh.execute_command("WAIT", 1, 100),  # its first WAIT ended after y
                    a.execute_command("WAIT", 1, 100),
                    b.get("x"), b.execute_command("WAIT", 1, 100),  # a read moves it too
                    first.execute_command("WAIT", 2, 100)]  # times out, counting from 0
        finally:
            os.kill(s_srv.pid, 18)  # SIGCONT
        res.append(a.execute_command("WAIT", 1, 0))
        wait_for(lambda: in_sync(p_srv.client(), s), what="sync")
        out.append(res)
    assert out[0] == out[1]
    assert out[0] == [True, 1, 1, 1, 0, 0, b"1", 0, 1, 1]


def acked_all(p):
    i = p.info("replication")
    return i["slave0"]["offset"] == i["master_repl_offset"]


def test_wait_after_a_served_blocking_command(start_server, start_oracle):
    """A client whose blocking command another client's push served later
    keeps, for WAIT, the offset recorded when its command blocked: in Redis
    7.0 the served pop does not move it (7.2 re-runs the command and does),
    so with the replica stopped its WAIT counts the replica at once while
    the pusher's WAIT, whose offset covers push and pop, times out.  The
    same for a client blocked in WAIT itself."""
    cases = [("BLMOVE", ["src", "dst", "LEFT", "RIGHT", 0], lambda b: b.rpush("src", "v")),
             ("BLPOP", ["l", 0], lambda b: b.rpush("l", "v")),
             ("BZPOPMIN", ["z", 0], lambda b: b.zadd("z", {"m": 1})),
             ("XREADGROUP", ["GROUP", "g", "c", "BLOCK", 0, "STREAMS", "st", ">"],
              lambda b: b.xadd("st", {"f": "v"}))]
    out = []
    for start in (start_server, start_oracle):
        p_srv = start(**FAST)
        s_srv = start(**DBG)
        p, a, b = p_srv.client(), p_srv.client(), p_srv.client()
        attach(s_srv, p_srv)
        p.xgroup_create("st", "g", mkstream=True)
        res = []
        for name, args, push in cases:
            a.set("mark", name)
            # The replica's periodic ACK covers everything so far.
            wait_for(lambda: acked_all(p), what="replica ack")
            got = []
            t = threading.Thread(target=lambda: got.append(a.execute_command(name, *args)))
            t.start()
            wait_for(lambda: p.info("clients")["blocked_clients"] == 1, what="blocked")
            os.kill(s_srv.pid, 19)  # SIGSTOP
            try:
                push(b)
                t.join(30)
                res += [bool(got), a.execute_command("WAIT", 1, 100), b.execute_command("WAIT", 1, 100)]
            finally:
                os.kill(s_srv.pid, 18)  # SIGCONT
            res.append(b.execute_command("WAIT", 1, 0))
        # WAIT itself: released (here by its timeout) after another
        # client's write, it keeps the offset of its own call.
        wait_for(lambda: acked_all(p), what="replica ack")
        os.kill(s_srv.pid, 19)
        try:
            got = []
            t = threading.Thread(target=lambda: got.append(a.execute_command("WAIT", 2, 2000)))
            t.start()
            wait_for(lambda: p.info("clients")["blocked_clients"] == 1, what="blocked")
            b.set("w", 1)
            t.join(30)
            res += [got, a.execute_command("WAIT", 1, 100), b.execute_command("WAIT", 1, 100)]
        finally:
            os.kill(s_srv.pid, 18)
        out.append(res)
    assert out[0] == out[1]
    assert out[0] == [True, 1, 0, 1] * len(cases) + [[1], 1, 0]


def master_flags(s):
    return [c["flags"] for c in s.client_list() if "M" in c["flags"]]


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_client_pause_holds_the_primarys_stream(start_server, start_oracle, kind):
    """CLIENT PAUSE WRITE on a replica postpones the primary's writes too
    (the link shows flags=Mb, the offset stays, reads see the old data);
    after CLIENT UNPAUSE the stream is applied in order.  Likewise ALL."""
    p_srv = start_server(**FAST)
    s_srv = (start_server if kind == "cairn" else start_oracle)(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    p.set("a", 1)
    wait_for(lambda: in_sync(p, s), what="sync")
    before = info(s)["slave_repl_offset"]
    assert s.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    p.set("a", 2)
    tx = p.pipeline(transaction=True)
    tx.incr("n")
    tx.rpush("l", "x")
    tx.execute()
    wait_for(lambda: master_flags(s) == ["Mb"], what="the primary's SET postponed")
    assert s.get("a") == b"1"
    assert info(s)["slave_repl_offset"] == before
    assert s.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: in_sync(p, s), what="stream applied")
    assert (s.get("a"), s.get("n"), s.lrange("l", 0, -1)) == (b"2", b"1", [b"x"])
    assert master_flags(s) == ["M"]
    # ALL: the replica can't be asked anything meanwhile (its INFO waits
    # for the pause's end too); the primary's write is applied after it.
    assert s.execute_command("CLIENT", "PAUSE", 1000, "ALL")
    p.set("a", 3)
    wait_for(lambda: in_sync(p, s), what="stream applied after ALL")
    assert s.get("a") == b"3"
    assert digest(s) == digest(p)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_replica_attaches_to_a_disk_save_in_progress(start_server, start_oracle, kind):
    """repl-diskless-sync no: a second replica arriving while the save for
    the first runs shares it (same +FULLRESYNC offset, one fork) instead of
    waiting for the next one.  The save child is held (SIGSTOP) until the
    second replica attached, so nothing depends on how long it takes."""
    p_srv = (start_server if kind == "cairn" else start_oracle)(
        **{"repl-diskless-sync": "no", "rdb-key-save-delay": "1000", **DBG})
    a_srv, b_srv = start_server(**DBG), start_server(**DBG)
    p = p_srv.client()
    fill(p, 2000)
    forks = p.info("stats")["total_forks"]
    a, b = a_srv.client(), b_srv.client()
    a.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    pid = p.info("server")["process_id"]
    wait_for(lambda: children(pid), what="the save child")
    child = children(pid)[0]
    os.kill(child, 19)
    try:
        p.set("during", 1)  # the stream after the fork: both must get it
        b.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        wait_for(lambda: "Waiting for end of BGSAVE for SYNC" in p_srv.log, what="attached")
        assert info(b)["master_sync_in_progress"] == 1 or link_up(b)
    finally:
        os.kill(child, 18)
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: link_up(a) and link_up(b), what="both synced")
    p.set("after", 1)
    for s in (a, b):
        wait_for(lambda: in_sync(p, s), what="in sync")
        assert digest(s) == digest(p)
    assert p.info("stats")["total_forks"] == forks + 1
    assert p.info("stats")["sync_full"] == 2
    assert "Waiting for next BGSAVE" not in p_srv.log


def await_psync(conn, stop=None):
    """Answers a replica's handshake on conn (PING, AUTH, REPLCONF) until
    its PSYNC or SYNC: True then, False when the replica went away first
    (or the Event stop was set)."""
    buf = b""
    while stop is None or not stop.is_set():
        data = conn.recv(4096)
        if not data:
            return False
        buf += data
        while True:
            try:
                argv, buf = parse_resp(buf)
            except ValueError:
                break
            if not argv:
                continue
            name = argv[0].lower()
            if name == b"ping":
                conn.sendall(b"+PONG\r\n")
            elif name in (b"replconf", b"auth"):
                if len(argv) < 2 or argv[1].lower() != b"ack":
                    conn.sendall(b"+OK\r\n")
            elif name in (b"psync", b"sync"):
                return True
    return False


def fake_primary(payload):
    """A listening socket that answers a replica's handshake and, to each
    PSYNC, sends +FULLRESYNC and `payload` (the "$<len>" line included),
    then closes the connection.  Returns (port, psyncs served, stop)."""
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    lsock.settimeout(0.2)
    done = threading.Event()
    served = []

    def serve(conn):
        conn.settimeout(30)
        try:
            if await_psync(conn, done):
                conn.sendall(b"+FULLRESYNC " + b"f" * 40 + b" 0\r\n" + payload)
                served.append(1)
        except OSError:
            return
        finally:
            conn.close()

    def accept():
        while not done.is_set():
            try:
                conn, _ = lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        lsock.close()

    threading.Thread(target=accept, daemon=True).start()
    return lsock.getsockname()[1], served, done.set


def parse_resp(buf):
    if b"\n" in buf and not buf.startswith(b"*"):  # an inline command
        line, rest = buf.split(b"\n", 1)
        argv = line.strip().split()
        return argv, rest  # empty: a keep-alive newline
    if not buf.startswith(b"*"):
        raise ValueError
    pos = buf.index(b"\r\n")
    n = int(buf[1:pos])
    pos += 2
    argv = []
    for _ in range(n):
        end = buf.index(b"\r\n", pos)
        ln = int(buf[pos + 1:end])
        if len(buf) < end + 2 + ln + 2:
            raise ValueError
        argv.append(buf[end + 2:end + 2 + ln])
        pos = end + 2 + ln + 2
    return argv, buf[pos:]


def promote(s):
    """REPLICAOF NO ONE, once no load is running (a retry may be)."""
    def done():
        try:
            return s.execute_command("REPLICAOF", "NO", "ONE")
        except redis.exceptions.BusyLoadingError:
            return False
    wait_for(done, what="REPLICAOF NO ONE")


def rdb_of(start_server, n):
    """A real RDB (a Cairn primary's dump of n keys)."""
    srv = start_server(**DBG)
    r = srv.client()
    fill(r, n, "new:")
    r.save()
    with open(os.path.join(srv.tmp, "dump.rdb"), "rb") as f:
        return f.read()


def old_data(s):
    fill(s, 200, "old:")
    s.execute_command("FUNCTION", "LOAD", "#!lua name=keep\nredis.register_function('f', function() return 1 end)")
    return digest(s), s.execute_command("FUNCTION", "LIST")


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_swapdb_keeps_the_old_data_when_the_sync_fails(start_server, start_oracle, kind):
    """repl-diskless-load swapdb: the primary's connection drops half-way
    through the RDB; the replica keeps its old keys and libraries (Redis
    restores its backup; Cairn loads into databases aside and drops them)
    and retries.  A real sync then replaces them."""
    rdb = rdb_of(start_server, 300)
    s_srv = (start_server if kind == "cairn" else start_oracle)(**{"repl-diskless-load": "swapdb", **DBG})
    s = s_srv.client()
    before = old_data(s)
    port, served, stop = fake_primary(b"$%d\r\n" % len(rdb) + rdb[:len(rdb) // 2])
    try:
        s.execute_command("REPLICAOF", "127.0.0.1", port)
        wait_for(lambda: len(served) >= 2, what="a retry after the failed sync")
        promote(s)
    finally:
        stop()
    assert (digest(s), s.execute_command("FUNCTION", "LIST")) == before
    p_srv = start_server(**FAST)
    p = p_srv.client()
    fill(p, 50, "new:")
    attach(s_srv, p_srv)
    wait_for(lambda: in_sync(p, s), what="sync")
    assert digest(s) == digest(p)
    assert s.execute_command("FUNCTION", "LIST") == []


# A string key "hello" whose value has an unknown special encoding.
CORRUPT_RDB = b"REDIS0010\x00\x05hello\xc5abc"


@pytest.mark.parametrize("mode", ["swapdb", "on-empty-db", "disabled"])
def test_corrupt_rdb_from_the_primary(start_server, mode):
    """A corrupt RDB from the primary: Cairn logs it and retries (redis-server
    7.0 exits).  swapdb gives the old data back; the other modes (on-empty-db
    here loads from memory, the replica being empty) leave the replica
    empty, as a failed load does."""
    s_srv = start_server(**{"repl-diskless-load": mode, **DBG})
    s = s_srv.client()
    before = old_data(s) if mode != "on-empty-db" else (digest(s), [])
    port, served, stop = fake_primary(b"$%d\r\n" % len(CORRUPT_RDB) + CORRUPT_RDB)
    try:
        s.execute_command("REPLICAOF", "127.0.0.1", port)
        wait_for(lambda: len(served) >= 2, what="a retry after the failed load")
        promote(s)
    finally:
        stop()
    assert "Failed trying to load the MASTER synchronization DB from %s" % (
        "disk" if mode == "disabled" else "socket") in s_srv.log
    after = (digest(s), s.execute_command("FUNCTION", "LIST"))
    if mode == "disabled":
        assert s.dbsize() == 0 and after[1] == []
    else:
        assert after == before
    assert s_srv.alive()


KILL_ROUNDS = int(os.environ.get("CAIRN_REPL_KILL_ROUNDS", "3"))


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_full_sync_cut_at_random_points(start_server, diskless):
    """The link cut at a random moment of a full sync (handshake, save,
    transfer, the replica's load), by the primary (CLIENT KILL TYPE replica)
    or by the replica dying (SIGKILL, then restarted): the sync is retried
    and ends with equal data, neither side crashing.  CAIRN_REPL_KILL_ROUNDS
    rounds per mode (3 by default)."""
    rnd = random.Random(int(os.environ.get("CAIRN_REPL_KILL_SEED", "20")))
    p_srv = start_server(**{"repl-diskless-sync": diskless, "rdb-key-save-delay": "200", **FAST})
    p = p_srv.client()
    fill(p, 3000)
    slow = {"key-load-delay": "100", "loading-process-events-interval-bytes": "4096"}
    for _ in range(KILL_ROUNDS):
        s_srv = start_server(**slow, **DBG)
        s = s_srv.client()
        s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
        time.sleep(rnd.uniform(0, 1.5))  # where the cut falls; any point is valid
        if rnd.random() < 0.5:
            p.execute_command("CLIENT", "KILL", "TYPE", "replica")
        else:
            os.kill(s_srv.pid, 9)
            s_srv.proc.wait()
            s_srv = start_server(dir=s_srv.tmp, args=["--replicaof", p_srv.host, str(p_srv.port)], **DBG)
            s = s_srv.client()
        p.incr("round")
        wait_for(lambda: in_sync(p, s), what="the retried sync")
        assert digest(s) == digest(p)
        assert p_srv.alive() and s_srv.alive()
        s_srv.stop()
