"""The order in which the features' steps run where core or the top layer
runs several of them for one event (docs/architecture.md, "Hook lists and
their order" and "Direct calls"), where a client or the log can see it.

- A shutdown (server/shutdown.c exitSteps) runs persistence's step first:
  kill the save child, fsync the AOF, the final save, in Redis 7.0.15's
  order (the oracle's log shows the same sequence), and ends the Lua
  debugger's forked sessions before the process exits.
- FLUSHALL runs its after-flush hooks (persistence's save of the empty
  dataset) after every database was emptied, and before it replies."""
import os
import socket

import pytest

from resphelp import encode as cmd
from waithelp import poll

SESSION_TIMEOUT = 20


def wait_for(pred, timeout=20):
    """waithelp.poll: pred's first true value, or its last false one."""
    return poll(pred, timeout)


def start_debug_session(srv):
    """A SCRIPT DEBUG YES session: the server forks a child that runs the
    script and keeps this socket.  Returns the socket once the child sent
    its first reply (the debugger waits for a command there)."""
    s = socket.create_connection((srv.host, srv.port), timeout=SESSION_TIMEOUT)
    s.sendall(cmd("SCRIPT", "DEBUG", "YES"))
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(cmd("EVAL", "return 1", 0))
    assert s.recv(4096)
    return s


def shutdown_log(srv):
    """Starts a background save that takes seconds (rdb-key-save-delay in the
    child only), a forked debugger session, then SHUTDOWN (save points and
    the AOF on).  Returns the server's log and whether the session's socket
    was closed."""
    r = srv.client()
    for i in range(5):
        r.set("k%d" % i, "v")
    r.config_set("rdb-key-save-delay", 1000000)  # 1 s per key: the child is slow
    r.bgsave()
    assert wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1)
    r.config_set("rdb-key-save-delay", 0)  # the final save (in the server) is not
    session = start_debug_session(srv)
    c = socket.create_connection((srv.host, srv.port), timeout=SESSION_TIMEOUT)
    c.sendall(cmd("SHUTDOWN"))
    assert c.recv(100) == b""  # the server exited
    c.close()
    session.settimeout(SESSION_TIMEOUT)
    try:
        ended = session.recv(100) == b""
    except ConnectionResetError:
        ended = True
    session.close()
    assert wait_for(lambda: srv.proc.poll() is not None)
    return srv.log, ended


STEPS = [
    "There is a child saving an .rdb. Killing it!",
    "Calling fsync() on the AOF file.",
    "Saving the final RDB snapshot before exiting.",
    "is now ready to exit, bye bye...",
]


def step_positions(log):
    return [log.find(s) for s in STEPS]


def test_shutdown_steps_run_in_order(start_server, start_oracle):
    conf = dict(save="3600 1", appendonly="yes", appendfsync="always")
    for start in (start_server, start_oracle):
        srv = start(**conf)
        if srv.client().info("server").get("cairn_lua_engine") == "luajit":
            pytest.skip("the LuaJIT build has no Lua debugger")
        log, ended = shutdown_log(srv)
        pos = step_positions(log)
        assert -1 not in pos, (srv.name, log)
        assert pos == sorted(pos), (srv.name, log)
        # The debugger's forked session ended with the server, before its exit.
        assert ended, srv.name
        killed = log.find("Killing debugging session")
        assert -1 < killed < pos[-1], (srv.name, log)


def test_flushall_saves_after_emptying(start_server, start_oracle):
    for start in (start_server, start_oracle):
        srv = start(save="3600 1", enable_debug_command="yes")
        r = srv.client()
        r.mset({"a": "1", "b": "2"})
        r.execute_command("SELECT", 1)
        r.set("c", "3")
        path = os.path.join(srv.tmp, "dump.rdb")
        assert not os.path.exists(path), srv.name
        assert r.flushall()
        # The save ran within FLUSHALL, after both databases were emptied:
        # loading that file back (no new save) gives no keys.
        assert os.path.exists(path), srv.name
        assert r.info("persistence")["rdb_changes_since_last_save"] == 0, srv.name
        assert r.execute_command("DEBUG", "RELOAD", "NOSAVE")
        assert r.dbsize() == 0, srv.name
        r.execute_command("SELECT", 0)
        assert r.dbsize() == 0, srv.name
