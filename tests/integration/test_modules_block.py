"""Module blocked clients, thread-safe contexts and the GIL, Yield (issue
41): tests/modules/blocking.c ("blk") loaded into Cairn and into
redis-server 7.0.15; each scenario runs on both with several connections
and the raw reply bytes (and the module's own counters) must be the same.

Covered: BlockClientOnKeys woken by a push and by SignalKeyAsReady (a
string write alone does not wake it, as in Redis 7.0), timeouts through
the timeout callback, UnblockClient from the main thread and from another
thread, replies written by a thread through a thread-safe context under
the GIL (Lock, TryLock, a detached context), CLIENT UNBLOCK TIMEOUT/ERROR
(and 0 without a timeout callback), MULTI and Lua (an error, the handle
aborted), a client disconnected while blocked (disconnect callback,
private data freed, no leak under the sanitizer build), INFO
blocked_clients, commandstats, MODULE UNLOAD refused while a client is
blocked, Yield with and without REDISMODULE_YIELD_FLAG_CLIENTS (-BUSY with
the module's text), and -- Cairn only -- a module thread calling the API
without the GIL stops the server with a named message."""
import os
import subprocess
import time

import pytest

from resphelp import encode, read_values
from test_modules import built_modules  # noqa: F401 (the autouse fixture: make modules)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODDIR = os.path.join(ROOT, "build", "modules")
WAIT = 10.0  # bound of every wait for a state


def loaded(start, **cfg):
    conf = "enable-module-command yes\nloadmodule %s\n" % os.path.join(MODDIR, "blocking.so")
    return start(config_file=conf, **cfg)


def both(start_server, start_oracle, scenario, **cfg):
    """Runs scenario(srv) on Cairn and on redis-server; their results must
    be equal.  Returns Cairn's."""
    a = scenario(loaded(start_server, **cfg))
    b = scenario(loaded(start_oracle, **cfg))
    assert a == b, "cairn %r\nredis %r" % (a, b)
    return a


def cmd(conn, *args):
    conn.send(encode(*args))
    return read_values(conn, 1)


def info_field(srv, section, field):
    with srv.connect() as c:
        text = cmd(c, "INFO", section).decode()
    for line in text.split("\r\n"):
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def wait_blocked(srv, n):
    deadline = time.time() + WAIT
    while time.time() < deadline:
        if info_field(srv, "clients", "blocked_clients") == str(n):
            return
        time.sleep(0.01)
    raise AssertionError("blocked_clients never reached %d" % n)


def wait_stats(srv, pred):
    """blk.stats once pred(stats) holds (bounded)."""
    deadline = time.time() + WAIT
    with srv.connect() as c:
        while True:
            c.send(encode("blk.stats"))
            raw = read_values(c, 1)
            vals = [int(x[1:]) for x in raw.split(b"\r\n") if x.startswith(b":")]
            if pred(vals) or time.time() > deadline:
                return raw
            time.sleep(0.01)


def test_block_on_keys(start_server, start_oracle):
    def run(srv):
        out = []
        a, b = srv.connect(), srv.connect()
        out.append(cmd(b, "RPUSH", "l", "x"))
        out.append(cmd(a, "blk.pop", "l", "0"))          # served at once
        out.append(cmd(a, "blk.pop", "l", "30"))         # timeout callback
        a.send(encode("blk.pop", "l", "0"))
        wait_blocked(srv, 1)
        out.append(info_field(srv, "clients", "blocked_clients"))
        out.append(cmd(b, "LPUSH", "l", "y", "z"))
        out.append(read_values(a, 1))                    # woken by the push
        out.append(cmd(b, "LRANGE", "l", "0", "-1"))
        # a string key: a write alone does not wake a module waiter (Redis
        # 7.0 signals lists, sorted sets, streams, module values), the
        # module's SignalKeyAsReady does
        a.send(encode("blk.waitkey", "s", "0"))
        wait_blocked(srv, 1)
        out.append(cmd(b, "SET", "s", "v1"))
        out.append(cmd(b, "PING"))
        out.append(info_field(srv, "clients", "blocked_clients"))
        out.append(cmd(b, "blk.signal", "s"))
        out.append(read_values(a, 1))
        # the reply callback declines (not a string): still blocked; then
        # UnblockClient on a key waiter runs its timeout callback
        a.send(encode("blk.waitkey", "h", "0"))
        wait_blocked(srv, 1)
        out.append(cmd(b, "HSET", "h", "f", "v"))
        out.append(cmd(b, "blk.signal", "h"))
        out.append(cmd(b, "PING"))
        out.append(info_field(srv, "clients", "blocked_clients"))
        out.append(cmd(b, "blk.unblockkeys"))
        out.append(read_values(a, 1))
        # a key waiter's timeout, and a key deleted before it is served
        out.append(cmd(a, "blk.waitkey", "nokey", "20"))
        a.send(encode("blk.pop", "gone", "0"))
        wait_blocked(srv, 1)
        out.append(cmd(b, "MULTI"))
        out.append(cmd(b, "RPUSH", "gone", "1"))
        out.append(cmd(b, "DEL", "gone"))
        out.append(cmd(b, "EXEC"))
        out.append(cmd(b, "RPUSH", "gone", "2"))
        out.append(read_values(a, 1))
        out.append(wait_stats(srv, lambda v: True))
        a.close()
        b.close()
        return out
    both(start_server, start_oracle, run)


@pytest.mark.parametrize("resp", [2, 3])
def test_thread_replies(start_server, start_oracle, resp):
    def run(srv):
        out = []
        with srv.connect() as a:
            if resp == 3:
                out.append(cmd(a, "HELLO", "3")[:2])
            out.append(cmd(a, "blk.thread", "20", "hello"))
            out.append(cmd(a, "blk.thread", "0", "now", "10000"))
            out.append(cmd(a, "blk.thread", "400", "late", "20"))   # TIMEDOUT first
            out.append(cmd(a, "blk.threadreply", "10"))
            out.append(cmd(a, "blk.threadreply", "0"))
            out.append(cmd(a, "blk.trylock"))
            out.append(cmd(a, "blk.trylock"))
            out.append(cmd(a, "blk.detached"))
            out.append(cmd(a, "blk.measure", "5"))
            out.append(cmd(a, "MGET", "blk:n", "blk:try", "blk:detached"))
            # pipelined behind a blocked command: run once it is unblocked
            a.send(encode("blk.thread", "30", "first") + encode("PING") + encode("blk.threadreply", "0"))
            out.append(read_values(a, 3))
        # the late thread's private data is freed once it unblocks
        out.append(wait_stats(srv, lambda v: v[0] >= 5))
        return out
    both(start_server, start_oracle, run)


def test_unblock_from_main_and_other_thread(start_server, start_oracle):
    def run(srv):
        out = []
        a, b, c = srv.connect(), srv.connect(), srv.connect()
        for x in (a, b):
            x.send(encode("blk.park"))
        wait_blocked(srv, 2)
        out.append(cmd(c, "blk.release", "v1"))
        out.append(read_values(a, 1) + read_values(b, 1))
        for x in (a, b):
            x.send(encode("blk.park"))
        wait_blocked(srv, 2)
        out.append(cmd(c, "blk.releasethread", "v2"))
        out.append(read_values(a, 1) + read_values(b, 1))
        wait_blocked(srv, 0)
        out.append(cmd(c, "blk.stats"))
        for x in (a, b, c):
            x.close()
        return out
    both(start_server, start_oracle, run)


def cmdstats(srv, name):
    line = info_field(srv, "commandstats", "cmdstat_" + name) or ""
    return ",".join(p for p in line.split(",") if not p.startswith("usec"))


def test_client_unblock(start_server, start_oracle):
    def run(srv):
        out = []
        a, c = srv.connect(), srv.connect()
        aid = cmd(a, "CLIENT", "ID").decode()[1:-2]
        a.send(encode("blk.park"))
        wait_blocked(srv, 1)
        out.append(cmd(c, "CLIENT", "UNBLOCK", aid))             # the timeout callback
        out.append(read_values(a, 1))
        a.send(encode("blk.park"))
        wait_blocked(srv, 1)
        out.append(cmd(c, "CLIENT", "UNBLOCK", aid, "ERROR"))
        out.append(read_values(a, 1))
        a.send(encode("blk.park", "nt"))                         # no timeout callback
        wait_blocked(srv, 1)
        out.append(cmd(c, "CLIENT", "UNBLOCK", aid))
        out.append(cmd(c, "CLIENT", "UNBLOCK", aid, "ERROR"))
        out.append(cmd(c, "blk.stats"))
        out.append(cmd(c, "blk.release", "after"))
        out.append(read_values(a, 1))
        a.send(encode("blk.pop", "nolist", "0"))
        wait_blocked(srv, 1)
        out.append(cmd(c, "CLIENT", "UNBLOCK", aid))
        out.append(read_values(a, 1))
        out.append(wait_stats(srv, lambda v: True))
        out.append(cmdstats(srv, "blk.park"))
        out.append(cmdstats(srv, "blk.pop"))
        a.close()
        c.close()
        return out
    both(start_server, start_oracle, run)


def test_multi_and_lua(start_server, start_oracle):
    def run(srv):
        out = []
        with srv.connect() as a:
            out.append(cmd(a, "blk.flags"))
            out.append(cmd(a, "MULTI"))
            out.append(cmd(a, "blk.park"))
            out.append(cmd(a, "blk.flags"))
            out.append(cmd(a, "blk.pop", "l", "0"))
            out.append(cmd(a, "EXEC"))
            out.append(cmd(a, "EVAL", "return redis.call('blk.flags')", "0"))
            out.append(cmd(a, "EVAL", "return redis.call('blk.park')", "0"))
            out.append(cmd(a, "EVAL", "return redis.pcall('blk.pop', KEYS[1], '0')", "1", "l"))
            out.append(info_field(srv, "clients", "blocked_clients"))
            out.append(cmd(a, "blk.release", "x"))                  # the aborted handles
            out.append(wait_stats(srv, lambda v: v[0] >= 2))
        return out
    both(start_server, start_oracle, run)


def test_disconnect_while_blocked(start_server, start_oracle):
    def run(srv):
        out = []
        c = srv.connect()
        for args in (("blk.park",), ("blk.pop", "k", "0"), ("blk.waitkey", "k2", "0"), ("blk.thread", "100", "v"),
                     ("blk.threadreply", "100")):
            a = srv.connect()
            a.send(encode(*args))
            wait_blocked(srv, 1)
            a.close()
            wait_blocked(srv, 0)
        out.append(wait_stats(srv, lambda v: v[0] >= 2 and v[1] >= 2))
        deadline = time.time() + WAIT   # the replying thread is done (its INCR)
        while cmd(c, "GET", "blk:n") != b"$1\r\n1\r\n" and time.time() < deadline:
            time.sleep(0.01)
        out.append(cmd(c, "GET", "blk:n"))
        out.append(cmd(c, "RPUSH", "k", "1"))                    # nobody waits any more
        out.append(cmd(c, "blk.unblockkeys"))                     # the waitkey handle is gone
        out.append(info_field(srv, "clients", "blocked_clients"))
        c.close()
        return out
    both(start_server, start_oracle, run)


def test_unload_refused_while_blocked(start_server, start_oracle):
    def run(srv):
        out = []
        a, c = srv.connect(), srv.connect()
        a.send(encode("blk.park"))
        wait_blocked(srv, 1)
        out.append(cmd(c, "MODULE", "UNLOAD", "blk"))
        out.append(cmd(c, "blk.release", "r"))
        out.append(read_values(a, 1))
        wait_blocked(srv, 0)
        out.append(cmd(c, "PING"))
        out.append(cmd(c, "MODULE", "UNLOAD", "blk"))
        a.close()
        c.close()
        return out
    both(start_server, start_oracle, run)


@pytest.mark.parametrize("busy_reply", [None, "my module is busy"])
def test_yield_clients_get_busy(start_server, start_oracle, busy_reply):
    def run(srv):
        a, b = srv.connect(), srv.connect()
        args = ["blk.busy", "3000", "1"] + ([busy_reply] if busy_reply else [])
        a.send(encode(*args))
        time.sleep(0.05)
        seen = []
        deadline = time.time() + WAIT
        while time.time() < deadline:
            r = cmd(b, "GET", "x")
            seen.append(r)
            if r.startswith(b"-BUSY"):
                break
        done = read_values(a, 1)
        after = cmd(b, "GET", "x")
        a.close()
        b.close()
        return [seen[-1], done, after]
    out = both(start_server, start_oracle, run, busy_reply_threshold="100")
    assert out[0].startswith(b"-BUSY")


def test_yield_without_clients_flag_postpones(start_server, start_oracle):
    def run(srv):
        a, b = srv.connect(), srv.connect()
        b.send(encode("SET", "x", "1"))
        read_values(b, 1)
        a.send(encode("blk.busy", "400", "0"))
        time.sleep(0.05)
        b.send(encode("GET", "x"))
        done = read_values(a, 1)
        got = read_values(b, 1)
        a.close()
        b.close()
        return [done, got]
    assert both(start_server, start_oracle, run, busy_reply_threshold="50") == [b"+OK\r\n", b"$1\r\n1\r\n"]


def test_avoid_replica_traffic(start_server, start_oracle):
    def run(srv):
        with srv.connect() as c:
            out = [cmd(c, "blk.avoid"), cmd(c, "CLIENT", "PAUSE", "100000", "WRITE"), cmd(c, "blk.avoid"),
                   cmd(c, "CLIENT", "UNPAUSE"), cmd(c, "blk.avoid")]
        return out
    both(start_server, start_oracle, run)


def test_api_without_gil_is_caught(start_server):
    """A module thread calling RedisModule_Call without the GIL: the server
    stops with the reason in its log (Cairn's check; Redis has none)."""
    srv = loaded(start_server)
    with srv.connect() as c:
        try:  # the thread may stop the server before the reply leaves
            assert cmd(c, "blk.nogil") == b"+started\r\n"
        except (EOFError, ConnectionError):
            pass
    deadline = time.time() + WAIT
    while srv.proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    assert srv.proc.poll() is not None, "the server survived an API call without the GIL"
    assert "Module API RedisModule_Call called from a thread that does not hold the GIL" in srv.log


def test_measured_background_time_counts(start_server, start_oracle):
    """BlockedClientMeasureTimeStart/End: the thread's measured time (it
    sleeps 20 ms between them) goes to the command's commandstats usec, as
    in Redis; the slow log gets the command."""
    for srv in (loaded(start_server, slowlog_log_slower_than="10000"),
                loaded(start_oracle, slowlog_log_slower_than="10000")):
        with srv.connect() as c:
            assert cmd(c, "blk.measure", "20") == b"$8\r\nmeasured\r\n"
            line = info_field(srv, "commandstats", "cmdstat_blk.measure")
            fields = dict(p.split("=") for p in line.split(","))
            assert fields["calls"] == "1" and int(fields["usec"]) >= 20000, line
            assert b"blk.measure" in cmd(c, "SLOWLOG", "GET")


def test_thread_errors_counted(start_server, start_oracle):
    """Errors a thread-safe context replies count in INFO errorstats and
    fail the command, once the blocked client gets them (as in Redis)."""
    def run(srv):
        with srv.connect() as c:
            out = [cmd(c, "CONFIG", "RESETSTAT"), cmd(c, "blk.threaderr"), cmd(c, "blk.threaderr")]
        out.append(info_field(srv, "errorstats", "errorstat_THREADERR"))
        out.append(info_field(srv, "errorstats", "errorstat_plain"))
        out.append(info_field(srv, "stats", "total_error_replies"))
        out.append(cmdstats(srv, "blk.threaderr"))
        return out
    both(start_server, start_oracle, run)
