"""The background save child: it reports copy-on-write bytes and keys
written to the parent through a pipe (INFO persistence current_cow_*,
current_fork_perc, current_save_keys_*, rdb_last_cow_size), the parent
records latest_fork_usec and the `fork` latency event, and the child closes
its copies of the listening sockets.  The save is slowed with
rdb-key-save-delay so that it can be watched."""
import os
import re
import time

from test_rdb import raw_client, wait_for

KEYS = 4000


def info(r):
    return r.info("persistence")


def child_pid(s):
    m = re.findall(r"Background saving started by pid (\d+)", s.log)
    return int(m[-1])


def listening_inodes(port):
    out = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and int(cols[1].split(":")[1], 16) == port:
                out.add(cols[9])
    return out


def socket_inodes(pid):
    out = set()
    d = "/proc/%d/fd" % pid
    for fd in os.listdir(d):
        try:
            link = os.readlink(os.path.join(d, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(link[8:-1])
    return out


def test_child_reports_cow_and_progress(start_server):
    s = start_server(**{"enable-debug-command": "yes", "latency-monitor-threshold": "1"})
    r = raw_client(s)
    r.execute_command("DEBUG", "POPULATE", KEYS, "key", 200)
    r.config_set("rdb-key-save-delay", 800)
    assert r.execute_command("BGSAVE") == b"Background saving started"
    pid = child_pid(s)
    # The child no longer holds the listening socket; the parent does.
    listen = listening_inodes(s.port)
    assert listen and listen <= socket_inodes(s.pid)
    # The child closes them first thing, but it may not have run yet.
    assert wait_for(lambda: not (listen & socket_inodes(pid)), timeout=10)
    i = info(r)
    assert i["rdb_bgsave_in_progress"] == 1
    assert i["current_save_keys_total"] == KEYS
    # Dirty pages while the child runs; its reports arrive about once a second.
    n = 0
    while info(r)["current_save_keys_processed"] == 0:
        r.set("key:%d" % (n % KEYS), "x" * 200)
        n += 1
        time.sleep(0.001)
    i = info(r)
    assert 0 < i["current_save_keys_processed"] <= KEYS
    assert 0 < i["current_fork_perc"] <= 100
    assert i["current_cow_size"] > 0
    assert i["current_cow_peak"] >= i["current_cow_size"]
    assert i["current_cow_size_age"] >= 0
    r.config_set("rdb-key-save-delay", 0)  # the child keeps its own copy
    assert wait_for(lambda: info(r)["rdb_bgsave_in_progress"] == 0, timeout=60)
    i = info(r)
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["rdb_last_cow_size"] > 0
    for k in ("current_cow_peak", "current_cow_size", "current_cow_size_age",
              "current_save_keys_processed", "current_save_keys_total"):
        assert i[k] == 0, k
    assert i["current_fork_perc"] == 0
    assert "Fork CoW for RDB: current" in s.log
    assert re.search(r"\d+:C .* DB saved on disk", s.log)
    stats = r.info("stats")
    assert stats["latest_fork_usec"] > 0 and stats["total_forks"] == 1
    events = {e[0] for e in r.execute_command("LATENCY", "LATEST")}
    if stats["latest_fork_usec"] >= 1000:
        assert b"fork" in events
