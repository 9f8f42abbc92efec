"""Replication compatibility, round 2 (issue 33, items 9-15): Cairn and
redis-server 7.0.15 given the same commands, replies compared.

- CONFIG SET min-replicas-* counts the good replicas at once (writes
  refused or accepted by the very next command), INFO's
  min_slaves_good_slaves;
- CONFIG SET repl-backlog-size resizes the backlog at once, keeping its
  history, with Redis's 16 KB floor.

Every wait polls with a deadline; nothing asserts on timing."""
import functools
import os
import signal
import time

import pytest
import redis

from test_aof import wait_for

DBG = {"enable-debug-command": "yes", "repl-diskless-sync-delay": "0"}

wait_for = functools.partial(wait_for, timeout=30.0)


def info(r, section="replication"):
    return r.info(section)


def link_up(r):
    i = info(r)
    return i.get("role") == "slave" and i.get("master_link_status") == "up"


def in_sync(primary, replica):
    if not link_up(replica):
        return False
    return info(replica)["slave_repl_offset"] == info(primary)["master_repl_offset"]


def attach(replica_srv, primary_srv):
    r = replica_srv.client()
    r.execute_command("REPLICAOF", primary_srv.host, primary_srv.port)
    wait_for(lambda: link_up(r), what="link up")
    return r


def err(fn, *a, **kw):
    """The reply of fn, or the text of its error reply."""
    try:
        return fn(*a, **kw)
    except redis.ResponseError as e:
        return "ERR:" + str(e)


def pairs(start_server, start_oracle):
    """(start, label) for a Cairn pair and a redis-server pair."""
    return ((start_server, "cairn"), (start_oracle, "redis"))


# --- item 13: min-replicas-* -------------------------------------------------

def _min_replicas_run(start):
    p_srv = start(**DBG)
    s_srv = start(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    out = []
    p.config_set("min-replicas-to-write", 1)
    wait_for(lambda: info(p).get("min_slaves_good_slaves") == 1, what="good replica counted")
    out.append(err(p.set, "a", 1))
    out.append(sorted(k for k in info(p) if k.startswith("min_")))
    # The replica stops acknowledging: its lag grows past 2 seconds.
    os.kill(s_srv.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: info(p)["slave0"]["lag"] >= 3, what="lag")
        # Counted at once: the next write is refused, then accepted again.
        p.config_set("min-replicas-max-lag", 1)
        out.append(info(p)["min_slaves_good_slaves"])
        out.append(err(p.set, "b", 1))
        p.config_set("min-replicas-max-lag", 1000)
        out.append(info(p)["min_slaves_good_slaves"])
        out.append(err(p.set, "c", 1))
        p.config_set("min-replicas-max-lag", 1)
        out.append(err(p.set, "d", 1))
        p.config_set("min-replicas-to-write", 0)
        out.append(err(p.set, "e", 1))
        out.append("min_slaves_good_slaves" in info(p))
        p.config_set("min-replicas-to-write", 1)
        out.append(err(p.set, "f", 1))
        p.config_set("min-replicas-max-lag", 0)   # 0 turns the check off
        out.append(err(p.set, "g", 1))
        out.append("min_slaves_good_slaves" in info(p))
    finally:
        os.kill(s_srv.pid, signal.SIGCONT)
    return out


def test_min_replicas_config_set_counts_at_once(start_server, start_oracle):
    got = [_min_replicas_run(start) for start, _ in pairs(start_server, start_oracle)]
    assert got[0] == got[1]
    assert got[0][3] == "ERR:NOREPLICAS Not enough good replicas to write."


def test_min_replicas_info_without_replicas(start_server, start_oracle):
    got = []
    for start, _ in pairs(start_server, start_oracle):
        r = start().client()
        res = [sorted(info(r))]
        r.config_set("min-replicas-to-write", 2)
        res.append(sorted(info(r)))
        res.append(info(r)["min_slaves_good_slaves"])
        res.append(err(r.set, "a", 1))
        res.append(err(r.get, "a"))
        got.append(res)
    assert got[0] == got[1]


# --- item 9: repl-backlog-size ---------------------------------------------

def test_backlog_size_floor_matches_redis(start_server, start_oracle):
    got = []
    for start, _ in pairs(start_server, start_oracle):
        r = start().client()
        res = []
        for v in ("1", "16383", "16384", "100000", "1mb"):
            r.config_set("repl-backlog-size", v)
            res.append((r.config_get("repl-backlog-size"), info(r)["repl_backlog_size"]))
        got.append(res)
    assert got[0] == got[1]
