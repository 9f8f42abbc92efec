"""Scripts under CLIENT PAUSE WRITE, read-only scripts and may-replicate
commands, and the error statistics (INFO errorstats / commandstats) and
slow log of failing, scripted, transactional and blocked commands, compared
with redis-server 7.0.15 (issue 33, items 3 and 24).

Pause cases: each server gets the same setup, then CLIENT PAUSE WRITE, then
a client sends the case's commands and an ECHO marker.  The outcome is
whether the client is held (CLIENT LIST flag b, and the held command) or
its marker arrives while the pause is on, and the whole reply stream after
UNPAUSE.  Waits are bounded polls; nothing asserts on timing.
"""
import hashlib
import socket
import time

import pytest
import redis

from compare import run
from pubsub_helpers import enc

MARK = b"$11\r\nmarker-done\r\n"


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


def held_command(srv, cid):
    """The command client cid is held on (CLIENT LIST flag b), or None."""
    for line in srv.client().execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" ") if "=" in f)
        if fields.get("id") == str(cid) and "b" in fields.get("flags", ""):
            return fields.get("cmd")
    return None


def pause_outcome(srv, setup, cmds, settle=0):
    """(held command or None, all replies) of cmds sent during a WRITE pause
    (which starts `settle` seconds after the setup)."""
    admin = srv.client()
    admin.execute_command("CLIENT", "UNPAUSE")
    admin.execute_command("FLUSHALL")
    admin.execute_command("FUNCTION", "FLUSH")
    admin.execute_command("SCRIPT", "FLUSH")
    for cmd in setup:
        admin.execute_command(*cmd)
    time.sleep(settle)
    conn = srv.connect()
    cid = int(conn.send(enc("CLIENT", "ID")).recv_until(b"\r\n")[1:-2])
    admin.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    conn.send(b"".join(enc(*c) for c in cmds) + enc("ECHO", "marker-done"))
    held = None
    conn.sock.settimeout(0.02)
    for _ in range(500):
        try:
            conn._fill()
        except socket.timeout:
            pass
        if MARK in conn.buf:
            break
        held = held_command(srv, cid)
        if held:
            break
    else:
        raise AssertionError("neither held nor answered: %r" % conn.buf)
    admin.execute_command("CLIENT", "UNPAUSE")
    conn.sock.settimeout(10)
    out = conn.recv_until(MARK)
    conn.close()
    return held, out


NW = "#!lua flags=no-writes\nreturn redis.call('get','x')"
SHEBANG = "#!lua\nreturn redis.call('get','x')"
PLAIN = "return redis.call('get','x')"
LIB = """#!lua name=lib
redis.register_function{function_name='ro', flags={'no-writes'},
    callback=function(k, a) return redis.call('get', 'x') end}
redis.register_function('rw', function(k, a) return redis.call('get', 'x') end)
redis.register_function{function_name='pub', flags={'no-writes'},
    callback=function(k, a) return redis.call('publish', 'c', 'm') end}
redis.register_function{function_name='ppub', flags={'no-writes'},
    callback=function(k, a) return redis.pcall('spublish', 'c', 'm') end}
redis.register_function('rpub', function(k, a) return redis.pcall('publish', 'c', 'm') end)
redis.register_function{function_name='pf', flags={'no-writes'},
    callback=function(k, a) return redis.pcall('pfcount', 'h') end}
redis.register_function{function_name='get', flags={'no-writes'},
    callback=function(k, a) return redis.call('get', k[1]) end}
"""
SETUP = [("SET", "x", "1"), ("PFADD", "h", "a"), ("SCRIPT", "LOAD", NW), ("SCRIPT", "LOAD", SHEBANG),
         ("SCRIPT", "LOAD", PLAIN), ("FUNCTION", "LOAD", LIB)]

PAUSE_CASES = [
    # EVAL* with no-writes run; a shebang without it, or no shebang, is held.
    [("EVAL", NW, 0)], [("EVAL", SHEBANG, 0)], [("EVAL", PLAIN, 0)],
    [("EVAL_RO", NW, 0)], [("EVAL_RO", SHEBANG, 0)], [("EVAL_RO", PLAIN, 0)],
    [("EVALSHA", sha1(NW), 0)], [("EVALSHA", sha1(SHEBANG), 0)], [("EVALSHA", sha1(PLAIN), 0)],
    [("EVALSHA_RO", sha1(NW), 0)], [("EVALSHA_RO", sha1(PLAIN), 0)],
    [("EVALSHA", "0" * 40, 0)], [("EVALSHA_RO", "0" * 40, 0)], [("EVALSHA", "abc", 0)],
    [("EVAL", "#!lua flags=no-writes,allow-stale\nreturn 1", 0)],
    [("EVAL", "#!lua flags=bogus\nreturn 1", 0)],
    [("SELECT", 1), ("EVAL", NW, 0)],
    # FCALL* follow the function's flags.
    [("FCALL", "ro", 0)], [("FCALL", "rw", 0)], [("FCALL_RO", "ro", 0)], [("FCALL_RO", "rw", 0)],
    [("FCALL", "nosuch", 0)], [("FCALL_RO", "nosuch", 0)],
    # Queued in MULTI: EXEC runs at once when every queued script is no-writes.
    [("MULTI",), ("EVAL", NW, 0), ("EXEC",)],
    [("MULTI",), ("EVAL", SHEBANG, 0), ("EXEC",)],
    [("MULTI",), ("EVAL", PLAIN, 0), ("EXEC",)],
    [("MULTI",), ("EVAL_RO", PLAIN, 0), ("EXEC",)],
    [("MULTI",), ("EVALSHA", sha1(NW), 0), ("EXEC",)],
    [("MULTI",), ("FCALL", "ro", 0), ("EXEC",)],
    [("MULTI",), ("FCALL", "rw", 0), ("EXEC",)],
    [("MULTI",), ("FCALL_RO", "ro", 0), ("EXEC",)],
    [("MULTI",), ("FCALL", "get", 1, "x"), ("GET", "x"), ("EXEC",)],
    [("MULTI",), ("FCALL", "ro", 0), ("SET", "x", "2"), ("EXEC",)],
    [("MULTI",), ("EVAL", NW, 0), ("PUBLISH", "c", "m"), ("EXEC",)],
    [("MULTI",), ("EVAL", NW, 0), ("EVAL", "return 1", 0), ("EXEC",)],
    [("MULTI",), ("EVALSHA", "0" * 40, 0), ("EXEC",)],
    # Read-only scripts refuse may-replicate commands (and so run).
    [("FCALL", "pub", 0)], [("FCALL_RO", "pub", 0)], [("FCALL", "ppub", 0)], [("FCALL", "pf", 0)],
    [("FCALL", "rpub", 0)], [("FCALL_RO", "rpub", 0)],
    [("MULTI",), ("FCALL", "pub", 0), ("EXEC",)],
    [("EVAL_RO", "return redis.call('publish','c','m')", 0)],
    [("EVAL", "return redis.call('publish','c','m')", 0)],
    [("EVAL", "#!lua flags=no-writes\nreturn redis.pcall('publish','c','m')", 0)],
    [("EVAL", "#!lua flags=no-writes\nreturn redis.call('set','y','1')", 0)],
    # The rest of the class: may-replicate and write commands, reads, WAIT.
    [("PUBLISH", "c", "m")], [("SPUBLISH", "c", "m")], [("PFCOUNT", "h")],
    [("MULTI",), ("PUBLISH", "c", "m"), ("EXEC",)],
    [("GET", "x")], [("WAIT", 0, 0)], [("MULTI",), ("WAIT", 0, 0), ("EXEC",)],
    [("EXPIRE", "x", 10)], [("SCRIPT", "LOAD", "return 2")], [("SCRIPT", "FLUSH")],
    [("FUNCTION", "DELETE", "lib")], [("FUNCTION", "FLUSH")],
]


def test_write_pause_and_scripts_match_redis(server, oracle):
    for cmds in PAUSE_CASES:
        got = pause_outcome(server, SETUP, cmds)
        want = pause_outcome(oracle, SETUP, cmds)
        assert got == want, "%r: cairn %r, redis %r" % (cmds, got, want)


def test_no_writes_script_runs_during_pause_and_expires_nothing(start_server, start_oracle):
    """A no-writes script reading a key past its TTL during a WRITE pause
    sees it absent, but the key is not deleted (DBSIZE still counts it):
    the dataset is frozen, as in Redis."""
    server = start_server(enable_debug_command="yes")
    oracle = start_oracle(enable_debug_command="yes")
    setup = [("DEBUG", "SET-ACTIVE-EXPIRE", 0), ("SET", "x", "1"), ("FUNCTION", "LOAD", LIB),
             ("SET", "e", "v", "PX", 1)]
    for cmds in ([("EVAL", "#!lua flags=no-writes\nreturn {redis.call('get','e'), redis.call('exists','e')}", 0),
                  ("DBSIZE",)],
                 [("FCALL", "get", 1, "e"), ("DBSIZE",)],
                 [("MULTI",), ("FCALL_RO", "get", 1, "e"), ("EXEC",), ("DBSIZE",)]):
        got = pause_outcome(server, setup, cmds, settle=0.02)
        want = pause_outcome(oracle, setup, cmds, settle=0.02)
        assert got == want, "%r: cairn %r, redis %r" % (cmds, got, want)
        assert got[1].endswith(b":2\r\n" + MARK)

