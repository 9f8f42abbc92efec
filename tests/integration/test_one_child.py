"""One background child at a time, whatever forked it (issues 19/20): a
replication full sync's save counts like a BGSAVE (Redis's CHILD_TYPE_RDB),
an AOF rewrite like an AOF rewrite.  Each case runs against Cairn and
redis-server 7.0.15 as the primary, with the child held by SIGSTOP while
the commands and INFO are checked; rdb-key-save-delay makes each save last
about 2 s so that the child is still there to be stopped when looked for.
The replica is a Cairn server.
"""
import os
import signal

import pytest

from test_aof import wait_for, raw_reply
from test_repl import link_up
from test_repl_sync import children

DBG = {"enable-debug-command": "yes", "rdb-key-save-delay": "7000"}  # 300 keys: ~2 s a save


def fill(r, n):
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.set("key:%d" % i, i)
    p.execute()


def persistence(r):
    i = r.info("persistence")
    return {k: i[k] for k in ("rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled",
                              "current_save_keys_total")}


def gone(pid):
    """The process exited (a zombie or reaped already)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] == "Z"
    except OSError:  # FileNotFoundError, or ProcessLookupError while it goes
        return True


def held_child(srv):
    """The primary's one child, stopped (SIGSTOP)."""
    pid = srv.client().info("server")["process_id"]
    kids = wait_for(lambda: children(pid), what="the child")
    assert len(kids) == 1, kids
    os.kill(kids[0], signal.SIGSTOP)
    return kids[0]


@pytest.mark.parametrize("disk", [False, True], ids=["socket", "disk"])
@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_sync_save_is_the_one_child(start_server, start_oracle, kind, disk):
    p_srv = (start_server if kind == "cairn" else start_oracle)(
        **{"repl-diskless-sync": "no" if disk else "yes", "repl-diskless-sync-delay": "0", **DBG})
    r_srv = start_server(**DBG)
    p = p_srv.client()
    fill(p, 300)
    r_srv.client().execute_command("REPLICAOF", p_srv.host, p_srv.port)
    child = held_child(p_srv)
    try:
        got = [raw_reply(p_srv, "BGSAVE"), raw_reply(p_srv, "BGSAVE", "SCHEDULE"), raw_reply(p_srv, "SAVE")]
        during = persistence(p)
        got.append(raw_reply(p_srv, "BGREWRITEAOF"))
        scheduled = persistence(p)
        saves = p.info("persistence")["rdb_saves"]
        cur = p.info("persistence")["rdb_current_bgsave_time_sec"]
    finally:
        os.kill(child, signal.SIGCONT)
    assert got == [b"-ERR Background save already in progress"] * 3 + \
        [b"+Background append only file rewriting scheduled"]
    assert during == {"rdb_bgsave_in_progress": 1, "aof_rewrite_in_progress": 0, "aof_rewrite_scheduled": 0,
                      "current_save_keys_total": 300}
    assert scheduled["aof_rewrite_scheduled"] == 1
    assert saves == (1 if disk else 0)  # a disk sync is a save, a socket one is not
    assert cur >= 0
    wait_for(lambda: link_up(r_srv.client()), what="replica synced")
    # The scheduled rewrite runs once the sync's child is gone.
    wait_for(lambda: p.info("persistence")["aof_rewrites"] == 1 and not p.info("persistence")["aof_rewrite_in_progress"],
             what="the scheduled rewrite")
    info = p.info("persistence")
    assert info["rdb_bgsave_in_progress"] == 0 and info["rdb_current_bgsave_time_sec"] == -1
    assert info["rdb_last_bgsave_status"] == "ok"
    # Socket syncs are not saves: the save count did not move.
    assert info["rdb_saves"] == (1 if disk else 0)


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_sync_waits_for_a_rewrite(start_server, start_oracle, kind):
    """A replica arriving while an AOF rewrite runs waits for it: no second
    child; its sync starts when the rewrite ends.  BGSAVE meanwhile is
    refused (or scheduled with SCHEDULE)."""
    p_srv = (start_server if kind == "cairn" else start_oracle)(**{"repl-diskless-sync-delay": "0", **DBG})
    r_srv = start_server(**DBG)
    p = p_srv.client()
    fill(p, 300)
    assert raw_reply(p_srv, "BGREWRITEAOF") == b"+Background append only file rewriting started"
    child = held_child(p_srv)
    try:
        r_srv.client().execute_command("REPLICAOF", p_srv.host, p_srv.port)
        wait_for(lambda: "BGSAVE for replication delayed" in p_srv.log, what="the delayed sync")
        pid = p.info("server")["process_id"]
        kids = children(pid)
        got = [raw_reply(p_srv, "BGSAVE"), raw_reply(p_srv, "BGREWRITEAOF")]
        info = persistence(p)
    finally:
        os.kill(child, signal.SIGCONT)
    assert kids == [child]
    assert got == [b"-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
                   b"in order to schedule a BGSAVE whenever possible.",
                   b"-ERR Background append only file rewriting already in progress"]
    assert info["rdb_bgsave_in_progress"] == 0 and info["aof_rewrite_in_progress"] == 1
    assert info["current_save_keys_total"] == 300  # counted for any child
    wait_for(lambda: link_up(r_srv.client()), what="replica synced after the rewrite")


@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_sync_waits_for_a_bgsave(start_server, start_oracle, kind):
    """A diskless replica arriving during a user's BGSAVE cannot attach to
    it (it writes a file, not the replica's socket) and waits for it."""
    p_srv = (start_server if kind == "cairn" else start_oracle)(**{"repl-diskless-sync-delay": "0", **DBG})
    r_srv = start_server(**DBG)
    p = p_srv.client()
    fill(p, 300)
    assert raw_reply(p_srv, "BGSAVE") == b"+Background saving started"
    child = held_child(p_srv)
    try:
        r_srv.client().execute_command("REPLICAOF", p_srv.host, p_srv.port)
        wait_for(lambda: "Waiting for next BGSAVE for SYNC" in p_srv.log, what="the replica waiting")
        kids = children(p.info("server")["process_id"])
        got = raw_reply(p_srv, "BGREWRITEAOF")
    finally:
        os.kill(child, signal.SIGCONT)
    assert kids == [child]
    assert got == b"+Background append only file rewriting scheduled"
    wait_for(lambda: link_up(r_srv.client()), what="replica synced after the BGSAVE")
    wait_for(lambda: p.info("persistence")["aof_rewrites"] == 1, what="the scheduled rewrite")


@pytest.mark.parametrize("disk", [False, True], ids=["socket", "disk"])
@pytest.mark.parametrize("kind", ["cairn", "redis"])
def test_flushall_kills_a_sync_save(start_server, start_oracle, kind, disk):
    """FLUSHALL kills the RDB child, a sync's too (Redis's killRDBChild):
    not a failed save, no temporary file left, and the replica syncs again
    (the empty dataset)."""
    p_srv = (start_server if kind == "cairn" else start_oracle)(
        **{"repl-diskless-sync": "no" if disk else "yes", "repl-diskless-sync-delay": "0", **DBG})
    r_srv = start_server(**DBG)
    p, r = p_srv.client(), r_srv.client()
    fill(p, 300)
    r.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    child = held_child(p_srv)
    try:
        assert p.flushall()
    finally:
        try:
            os.kill(child, signal.SIGCONT)
        except ProcessLookupError:  # killed and reaped already (SIGKILL reaches a stopped child)
            pass
    wait_for(lambda: gone(child), what="the child gone")
    wait_for(lambda: p.info("persistence")["rdb_bgsave_in_progress"] == 0, what="the child reaped")
    p.set("after", 1)
    wait_for(lambda: link_up(r) and r.get("after") == b"1", what="replica synced again")
    assert r.dbsize() == 1
    assert p.info("stats")["sync_full"] == 2  # the killed sync, then a new one
    info = p.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok"
    assert not [f for f in os.listdir(p_srv.tmp) if f.startswith("temp-")]
