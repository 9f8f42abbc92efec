"""Scripts under CLIENT PAUSE WRITE, read-only scripts and may-replicate
commands, and the error statistics (INFO errorstats / commandstats) and
slow log of failing, scripted, transactional, blocked (also WAIT ended by
CLIENT UNBLOCK) and AOF-replayed commands, secrets redacted in the slow
log, and scripts on a stale replica, compared with redis-server 7.0.15
(issue 33, items 3 and 24, and their sweep).

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


# --- item 24: INFO commandstats / errorstats and the slow log ---

def raw_client(srv):
    """A client whose replies are not parsed (INFO stays text)."""
    r = srv.client()
    r.response_callbacks.clear()
    return r


def stat_lines(r, section):
    """INFO section as {field: value}, commandstats without the timings."""
    out = {}
    for line in r.execute_command("INFO", section).decode().splitlines():
        if ":" not in line:
            continue
        k, v = line.split(":", 1)
        if section == "commandstats":
            v = ",".join(f for f in v.split(",") if not f.startswith("usec"))
        out[k] = v
    return out


def error_stats(r):
    """commandstats (but INFO's own, polled as often as needed), errorstats
    and total_error_replies of r."""
    total = stat_lines(r, "stats")["total_error_replies"]
    cmds = stat_lines(r, "commandstats")
    cmds.pop("cmdstat_info", None)
    return cmds, stat_lines(r, "errorstats"), total


def fresh(r):
    r.execute_command("CLIENT", "UNPAUSE")
    r.execute_command("FLUSHALL")
    r.execute_command("FUNCTION", "FLUSH")
    r.execute_command("SCRIPT", "FLUSH")
    r.execute_command("CONFIG", "SET", "maxmemory", "0")
    r.execute_command("CONFIG", "RESETSTAT")


FLIB = """#!lua name=l
redis.register_function('f', function(k, a) return redis.call('incr', 's') end)
redis.register_function('g', function(k, a) return redis.pcall('incr', 's') end)
redis.register_function('w', function(k, a) return redis.call('set', 'a', 'b') end)
redis.register_function{function_name='r', flags={'no-writes'},
    callback=function(k, a) return redis.pcall('set', 'a', 'b') end}
"""

ERROR_CASES = [
    # Refused before running (rejected_calls) or failing as they ran.
    [("GET",), ("SET", "a"), ("CLIENT", "NOSUCH"), ("NOSUCHCMD",), ("CONFIG", "GET")],
    [("LPUSH", "l", "a"), ("GET", "l"), ("INCR", "l"), ("SET", "s", "x"), ("INCR", "s")],
    [("SET", "a", "1", "EX", "-1"), ("GETEX", "a", "EX", "0"), ("SETRANGE", "a", "-1", "x"),
     ("INCRBYFLOAT", "a", "nan"), ("SORT", "a", "BY"), ("BITFIELD", "a", "GET", "u99", "0"),
     ("OBJECT", "ENCODING", "nokey"), ("XADD", "x", "0-0", "a", "b"), ("BLPOP", "a", "-1"),
     ("ZADD", "z", "xx", "nx", "1", "a"), ("SELECT", "99"), ("CONFIG", "SET", "nosuch", "1")],
    [("AUTH", "x"), ("AUTH", "a", "b"), ("HELLO", "4")],
    # Transactions: EXEC fails only by its own error (EXECABORT, no MULTI).
    [("SET", "s", "x"), ("MULTI",), ("GET", "s"), ("INCR", "s"), ("EXEC",)],
    [("SET", "s", "x"), ("MULTI",), ("INCR", "s"), ("GET", "s"), ("EXEC",)],
    [("MULTI",), ("GET",), ("EXEC",)],
    [("MULTI",), ("NOSUCH",), ("SET", "a", "b"), ("EXEC",)],
    [("EXEC",), ("DISCARD",), ("MULTI",), ("MULTI",), ("WATCH", "x"), ("EXEC",)],
    [("WATCH", "a"), ("SET", "a", "1"), ("MULTI",), ("GET", "a"), ("EXEC",)],
    [("MULTI",), ("EVALSHA", "0" * 40, 0), ("EXEC",)],
    [("MULTI",), ("BLPOP", "l", 0), ("BLMOVE", "l", "m", "LEFT", "RIGHT", 0), ("EXEC",)],
    [("SET", "s", "x"), ("MULTI",), ("EVAL", "return redis.pcall('incr','s')", 0),
     ("EVAL", "return redis.call('incr','s')", 0), ("EXEC",)],
    [("MULTI",), ("EVAL", "error('x')", 0), ("EXEC",)],
    # NOSCRIPT and script errors.
    [("EVALSHA", "0" * 40, 0), ("EVALSHA_RO", "0" * 40, 0), ("FCALL", "nf", 0)],
    [("EVAL", "error('boom')", 0), ("EVAL", "return redis.error_reply('MY err')", 0),
     ("EVAL", "return {err='X y'}", 0), ("EVAL", "retur 1", 0), ("EVAL", "return 1", "x"),
     ("EVAL", "return redis.status_reply('OK')", 0), ("EVAL_RO", "#!lua\nreturn 1", 0)],
    # Commands a script calls: failing as they run, or refused (counted at
    # once, even when the script swallows the error).
    [("SET", "s", "x"), ("EVAL", "return redis.call('incr','s')", 0),
     ("EVAL", "return redis.pcall('incr','s')", 0), ("EVAL", "redis.pcall('incr','s') return 1", 0)],
    [("EVAL", "return redis.call('get')", 0), ("EVAL", "return redis.pcall('get')", 0),
     ("EVAL", "redis.pcall('get') return 1", 0)],
    [("EVAL", "return redis.call('nosuch')", 0), ("EVAL", "return redis.pcall('nosuch')", 0),
     ("EVAL", "redis.pcall('nosuch') return 1", 0)],
    [("EVAL", "return redis.pcall('eval','return 1',0)", 0), ("EVAL", "return redis.call('multi')", 0),
     ("EVAL", "redis.pcall('multi') return 1", 0)],
    [("EVAL", "#!lua flags=no-writes\nreturn redis.pcall('set','a','b')", 0),
     ("EVAL_RO", "return redis.call('set','a','b')", 0),
     ("EVAL_RO", "redis.pcall('publish','a','b') return 1", 0)],
    [("EVAL", "local t = redis.pcall('get'); local u = redis.pcall('nosuch'); return redis.pcall('incr','x')", 0)],
    [("EVAL", "return redis.pcall()", 0), ("EVAL", "return redis.pcall({})", 0),
     ("EVAL", "return redis.call('get', {})", 0), ("EVAL", "redis.pcall('get', {}) return 1", 0)],
    [("EVAL", "return redis.pcall('select', 99)", 0), ("EVAL", "redis.pcall('select', 99) return 1", 0),
     ("EVAL", "return redis.pcall('blpop', 'l', 0)", 0)],
    [("FUNCTION", "LOAD", FLIB), ("SET", "s", "x"), ("FCALL", "f", 0), ("FCALL", "g", 0),
     ("FCALL_RO", "f", 0), ("FCALL_RO", "w", 0), ("FCALL", "r", 0), ("FCALL_RO", "r", 0)],
    # ACL denials, at top level and inside a script.
    [("ACL", "SETUSER", "u", "on", "nopass", "+eval", "+get", "+auth", "~k*"), ("AUTH", "u", "x"),
     ("GET", "a"), ("GET", "ka"), ("SET", "ka", "b"), ("EVAL", "return redis.pcall('set','ka','b')", 0),
     ("EVAL", "return redis.call('get','a')", 0), ("EVAL", "redis.pcall('set','ka','b') return 1", 0),
     ("AUTH", "default", "x")],
    # Out of memory, at top level, in MULTI and in scripts.
    [("CONFIG", "SET", "maxmemory", "1"), ("SET", "a", "b"), ("MULTI",), ("SET", "a", "b"), ("EXEC",),
     ("EVAL", "#!lua\nreturn 1", 0), ("EVAL", "return redis.call('set','a','b')", 0),
     ("EVAL", "return redis.pcall('set','a','b')", 0), ("EVAL", "redis.pcall('set','a','b') return 1", 0),
     ("CONFIG", "SET", "maxmemory", "0")],
    [("MULTI",), ("CONFIG", "SET", "maxmemory", "1"), ("SET", "a", "b"), ("EXEC",),
     ("CONFIG", "SET", "maxmemory", "0")],
    # Errors nobody reads are counted all the same.
    [("CLIENT", "REPLY", "OFF"), ("INCR", "nokey"), ("SET", "s", "x"), ("INCR", "s"), ("CLIENT", "REPLY", "ON")],
    [("SCRIPT", "KILL"), ("FUNCTION", "KILL")],
    # Errors nested in a script's reply: one failed call if any was counted
    # now, plus one per error a called command had already counted.
    [("SET", "s", "x"), ("EVAL", "return {1, redis.error_reply('X y')}", 0),
     ("EVAL", "return {1, redis.pcall('incr','s'), redis.pcall('incr','s')}", 0),
     ("EVAL", "return {redis.pcall('nosuch')}", 0), ("EVAL", "return {{err='Q a'}, {err='Q b'}}", 0),
     ("FUNCTION", "LOAD", "#!lua name=n\nredis.register_function('e', function() "
                          "return {redis.pcall('get'), redis.error_reply('Z z')} end)"),
     ("FCALL", "e", 0)],
    # The code counted: the text before a space within its first 31 bytes,
    # else ERR; and no cap on distinct codes (7.0 has none).
    [("EVAL", "return redis.error_reply('nocode')", 0), ("EVAL", "return redis.error_reply('')", 0),
     ("EVAL", "return {err=''}", 0), ("EVAL", "return {err='-NEG x'}", 0), ("EVAL", "return {err=' x'}", 0),
     ("EVAL", "return {err='lower case'}", 0), ("EVAL", "return redis.error_reply('A')", 0),
     ("EVAL", "return redis.error_reply('ABCDEFGHIJKLMNOPQRSTUVWXYZABCD x')", 0),
     ("EVAL", "return redis.error_reply('ABCDEFGHIJKLMNOPQRSTUVWXYZABCDE x')", 0)],
    [("EVAL", "return redis.error_reply('E%d x')" % i, 0) for i in range(140)],
    # Every refusal counts the command's rejected_calls (no-multi, READONLY,
    # NOREPLICAS, MASTERDOWN), an unknown subcommand none, a container's
    # arity error the container's.
    [("MULTI",), ("SAVE",), ("EXEC",), ("CLIENT",), ("CLIENT", "NOSUCH")],
    [("REPLICAOF", "127.0.0.1", "1"), ("SET", "a", "b"), ("EVAL", "return redis.pcall('set','a','b')", 0),
     ("EVAL", "#!lua\nreturn 1", 0), ("MULTI",), ("SET", "a", "b"), ("EXEC",), ("REPLICAOF", "NO", "ONE")],
    [("CONFIG", "SET", "min-replicas-to-write", "1"), ("SET", "a", "b"), ("MULTI",), ("SET", "a", "b"), ("EXEC",),
     ("EVAL", "#!lua\nreturn 1", 0), ("EVAL", "return redis.pcall('set','a','b')", 0),
     ("CONFIG", "SET", "min-replicas-to-write", "0")],
    # A stale replica: scripts without a shebang answer MASTERDOWN, others
    # need allow-stale and may call only commands flagged stale; an EXEC
    # of a queue with a command not flagged stale is refused.
    [("FUNCTION", "LOAD", "#!lua name=st\n"
      "redis.register_function('f', function() return 1 end)\n"
      "redis.register_function{function_name='s', flags={'allow-stale','no-writes'},"
      " callback=function() return redis.pcall('get','a') end}\n"
      "redis.register_function{function_name='i', flags={'allow-stale','no-writes'},"
      " callback=function() return type(redis.pcall('info','server')) end}"),
     ("CONFIG", "SET", "replica-serve-stale-data", "no"), ("REPLICAOF", "127.0.0.1", "1"),
     ("GET", "a"), ("PING",), ("EVAL", "return 1", 0), ("EVAL_RO", "return 1", 0),
     ("EVAL", "#!lua flags=no-writes\nreturn 1", 0), ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn 1", 0),
     ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn redis.pcall('get','a')", 0),
     ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn redis.call('ping')", 0),
     ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn type(redis.pcall('info','server'))", 0),
     ("FCALL", "f", 0), ("FCALL", "s", 0), ("FCALL_RO", "s", 0), ("FCALL", "i", 0),
     ("MULTI",), ("EVAL", "return 1", 0), ("EXEC",),
     ("REPLICAOF", "NO", "ONE"), ("CONFIG", "SET", "replica-serve-stale-data", "yes")],
]


def test_errorstats_and_commandstats_match_redis(server, oracle):
    for cmds in ERROR_CASES:
        got = []
        for srv in (server, oracle):
            admin = raw_client(srv)
            fresh(admin)
            if cmds[0] == ("CLIENT", "REPLY", "OFF"):  # no replies to wait for
                conn = srv.connect()
                replies = [conn.send(b"".join(enc(*c) for c in cmds)).recv_until(b"+OK\r\n")]
            else:
                r = raw_client(srv)
                replies = [run(r, *c) for c in cmds]
            got.append((replies, error_stats(admin)))
        (ra, sa), (rb, sb) = got
        assert [str(x) for x in ra] == [str(x) for x in rb], cmds
        assert sa == sb, "%r:\ncairn %r\nredis %r" % (cmds, sa, sb)


def blocked_clients(r):
    return int(stat_lines(r, "clients")["blocked_clients"])


def wait_blocked(r, n):
    for _ in range(500):
        if blocked_clients(r) == n:
            return
        time.sleep(0.01)
    raise AssertionError("blocked_clients never reached %d" % n)


def blocked_outcome(srv, setup, block, actions):
    """Block a client on `block`, run `actions` ("$ID" is its client id)
    from another client; return its reply, the error stats, the slow log
    (arguments and client name of each entry, its id masked) and the latency
    histogram's call count of the blocking command."""
    admin = raw_client(srv)
    fresh(admin)
    admin.execute_command("SLOWLOG", "RESET")
    admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    for cmd in setup:
        admin.execute_command(*cmd)
    admin.execute_command("CONFIG", "RESETSTAT")
    admin.execute_command("SLOWLOG", "RESET")
    conn = srv.connect()
    cid = conn.send(enc("CLIENT", "SETNAME", "blk") + enc("CLIENT", "ID")).recv_until(b"\r\n:")
    cid = conn.recv_until(b"\r\n")[:-2].decode()
    conn.send(enc(*block))
    wait_blocked(admin, 1)
    for cmd in actions:
        run(admin, *[cid if a == "$ID" else a for a in cmd])
    conn.sock.settimeout(10)
    conn._fill()
    reply = conn.buf
    wait_blocked(admin, 0)
    # (INFO polls, as many as it took, are left out.)
    log = [([b"<id>" if a == cid.encode() else a for a in e[3]], e[5])
           for e in admin.execute_command("SLOWLOG", "GET", -1) if e[3][:1] != [b"INFO"]]
    hist = admin.execute_command("LATENCY", "HISTOGRAM", block[0])
    calls = hist[1][1] if hist else 0
    return reply, error_stats(admin), log, calls


BLOCK_CASES = [
    # Served: the slow log gets the blocked command, newer than the write.
    ([], ("BLPOP", "l", 0), [("LPUSH", "l", "a")]),
    ([], ("BZPOPMIN", "z", 0), [("ZADD", "z", 1, "a")]),
    ([], ("BLMOVE", "l", "l", "LEFT", "RIGHT", 0), [("LPUSH", "l", "a")]),
    ([], ("BLPOP", "l", 0), [("SET", "l", "x"), ("DEL", "l"), ("LPUSH", "l", "a")]),
    # Served with an error: failed_calls and errorstats.
    ([("SET", "d", "x")], ("BLMOVE", "l", "d", "LEFT", "RIGHT", 0), [("LPUSH", "l", "a")]),
    ([("SET", "d", "x")], ("BRPOPLPUSH", "l", "d", 0), [("LPUSH", "l", "a")]),
    ([("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")], ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">"),
     [("DEL", "s")]),
    ([("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")], ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">"),
     [("XGROUP", "DESTROY", "s", "g")]),
    ([("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")], ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">"),
     [("MULTI",), ("DEL", "s"), ("SET", "s", "x"), ("EXEC",)]),
    # CLIENT UNBLOCK: failed either way, an entry without arguments.
    ([], ("BLPOP", "l", 0), [("CLIENT", "UNBLOCK", "$ID")]),
    ([], ("BLPOP", "l", 0), [("CLIENT", "UNBLOCK", "$ID", "ERROR")]),
    ([], ("BZPOPMAX", "z", 0), [("CLIENT", "UNBLOCK", "$ID", "ERROR")]),
    ([], ("XREAD", "BLOCK", 0, "STREAMS", "s", "$"), [("CLIENT", "UNBLOCK", "$ID", "ERROR")]),
    ([], ("WAIT", 1, 0), [("CLIENT", "UNBLOCK", "$ID")]),
    ([], ("WAIT", 1, 0), [("CLIENT", "UNBLOCK", "$ID", "ERROR")]),
]


def test_blocked_command_stats_and_slowlog_match_redis(server, oracle):
    for setup, block, actions in BLOCK_CASES:
        got = blocked_outcome(server, setup, block, actions)
        want = blocked_outcome(oracle, setup, block, actions)
        assert got == want, "%r %r:\ncairn %r\nredis %r" % (block, actions, got, want)


def test_timed_out_blocked_command_is_not_logged(server, oracle):
    """A timeout counts the call (when it blocked) but adds no failure, no
    slow-log entry and no latency sample, as in Redis 7.0."""
    for srv in (server, oracle):
        admin = raw_client(srv)
        fresh(admin)
        admin.execute_command("SLOWLOG", "RESET")
        admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        r = raw_client(srv)
        assert r.execute_command("BLPOP", "l", "0.01") is None
        stats = stat_lines(admin, "commandstats")["cmdstat_blpop"]
        assert stats == "calls=1,rejected_calls=0,failed_calls=0", srv
        logged = [e[3][0] for e in admin.execute_command("SLOWLOG", "GET", -1)]
        assert b"BLPOP" not in logged and b"blpop" not in logged, srv
        assert admin.execute_command("LATENCY", "HISTOGRAM", "blpop") == [], srv


def test_stale_replica_refuses_a_queued_script_at_exec(server, oracle):
    """Queued before the link went down, EXEC is refused (a queued command
    is not flagged stale), as in Redis."""
    got = []
    for srv in (server, oracle):
        a, b = raw_client(srv), raw_client(srv)
        fresh(a)
        queued = [run(a, *c) for c in (("MULTI",), ("EVAL", "#!lua flags=no-writes\nreturn 1", 0),
                                       ("EVAL", "return 1", 0),
                                       ("EVAL", "#!lua flags=no-writes,allow-stale\nreturn 1", 0))]
        b.execute_command("CONFIG", "SET", "replica-serve-stale-data", "no")
        b.execute_command("REPLICAOF", "127.0.0.1", "1")
        try:
            got.append((queued, str(run(a, "EXEC")), error_stats(b)))
        finally:
            b.execute_command("REPLICAOF", "NO", "ONE")
            b.execute_command("CONFIG", "SET", "replica-serve-stale-data", "yes")
    assert got[0] == got[1]
    assert "MASTERDOWN" in got[0][1]


def test_busy_script_rejections_are_counted(server, oracle):
    """Commands refused with BUSY count as rejected; the killed function as
    failed.  FUNCTION STATS (allowed while busy, left out of the
    comparison) shows when the function runs."""
    got = []
    for srv in (server, oracle):
        admin = raw_client(srv)
        fresh(admin)
        admin.execute_command("FUNCTION", "LOAD",
                              "#!lua name=busy\nredis.register_function('spin', function() while true do end end)")
        admin.execute_command("CONFIG", "SET", "busy-reply-threshold", "50")
        runner = srv.connect()
        runner.send(enc("FCALL", "spin", 0))
        probe = raw_client(srv)
        for _ in range(500):
            stats = probe.execute_command("FUNCTION", "STATS")
            if stats[1] is not None:  # running_script
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the function never ran")
        other = srv.connect()
        other.send(enc("GET", "a") + enc("PING") + enc("FUNCTION", "KILL"))
        replies = [other.recv_until(b"\r\n") for _ in range(3)]
        killed = runner.recv_until(b"\r\n")
        admin.execute_command("CONFIG", "SET", "busy-reply-threshold", "5000")
        cmds, errs, total = error_stats(admin)
        for k in ("cmdstat_config|set", "cmdstat_function|stats", "cmdstat_function|load"):
            cmds.pop(k, None)
        got.append((replies, killed.split(b" script:")[0], cmds, errs, total))
    assert got[0] == got[1], got
    assert got[0][0][0].startswith(b"-BUSY")


def test_client_unblock_ends_wait_and_its_pipeline_runs(server, oracle):
    """CLIENT UNBLOCK takes a client out of WAIT (the acked count, or the
    UNBLOCKED error), and what it pipelined then runs."""
    got = []
    for srv in (server, oracle):
        admin = raw_client(srv)
        fresh(admin)
        conn = srv.connect()
        cid = conn.send(enc("CLIENT", "ID")).recv_until(b"\r\n")[1:-2]
        out = []
        for how in ((), ("ERROR",), ("TIMEOUT",)):
            conn.send(enc("WAIT", 1, 0) + enc("ECHO", "after"))
            wait_blocked(admin, 1)
            out.append(admin.execute_command("CLIENT", "UNBLOCK", cid, *how))
            out.append(conn.recv_until(b"after\r\n"))
        out.append(admin.execute_command("CLIENT", "UNBLOCK", cid))
        got.append(out)
    assert got[0] == got[1]
    assert got[0][3].startswith(b"-UNBLOCKED")


SLOWLOG_SEQUENCE = [
    ("SET", "a", "1"), ("GET",), ("NOSUCH",), ("MULTI",), ("SET", "a", "2"), ("INCR", "a"), ("EXEC",),
    ("EVAL", "redis.call('set','b','1') return redis.pcall('incr','x')", 0),
    ("EVAL", "return redis.call('get')", 0),
    ("FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function() return redis.call('ping') end)"),
    ("FCALL", "f", 0), ("CLIENT", "NOSUCH"), ("BLPOP", "nolist", "0.001"),
    # Secrets are redacted as in Redis.
    ("AUTH", "x"), ("AUTH", "a", "b", "c"), ("HELLO", "2", "AUTH", "default", "pw"), ("HELLO", "2", "SETNAME", "n", "AUTH", "default", "pw"),
    ("CONFIG", "SET", "masteruser", "u", "masterauth", "p"), ("CONFIG", "SET", "requirepass", ""),
    ("CONFIG", "SET", "nosuch", "x", "masterauth", "y"), ("CONFIG", "SET", "masterauth", "z", "maxmemory"),
    ("CONFIG", "SET", "masteruser", "", "masterauth", ""),
    ("ACL", "SETUSER", "uu", "on", ">pw", "+get"), ("ACL", "DELUSER", "uu"),
    ("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH2", "u", "p"),
    ("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "COPY", "AUTH", "p", "KEYS"),
    ("MIGRATE", "127.0.0.1", "1", "", "0", "10", "REPLACE", "AUTH", "p", "KEYS", "k"),
]


def test_slowlog_entries_match_redis(server, oracle):
    """The slow log at threshold 0 after the same commands: the commands a
    script calls are logged (peer ?:0), EXEC and refused commands are not,
    secrets are "(redacted)"."""
    got = []
    for srv in (server, oracle):
        admin = raw_client(srv)
        fresh(admin)
        admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 0)
        admin.execute_command("SLOWLOG", "RESET")
        r = raw_client(srv)
        for cmd in SLOWLOG_SEQUENCE:
            run(r, *cmd)
        entries = admin.execute_command("SLOWLOG", "GET", -1)
        got.append([(e[3], e[4] if e[4] == b"?:0" else b"peer", e[5]) for e in entries])
    assert got[0] == got[1]
    assert ([b"AUTH", b"(redacted)"], b"peer", b"") in got[0]
    assert ([b"ping"], b"?:0", b"") in got[0]


def test_aof_load_is_not_counted(start_server, start_oracle):
    """Commands DEBUG LOADAOF replays count in neither commandstats,
    total_commands_processed, the latency histogram nor the slow log."""
    got = []
    for factory in (start_server, start_oracle):
        srv = factory(appendonly="yes", enable_debug_command="yes")
        r = raw_client(srv)
        for cmd in (("SET", "a", "1"), ("INCR", "a"), ("EVAL", "redis.call('set','b','2')", 0),
                    ("MULTI",), ("INCR", "a"), ("EXEC",)):
            r.execute_command(*cmd)
        r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 0)
        r.execute_command("CONFIG", "RESETSTAT")
        r.execute_command("SLOWLOG", "RESET")
        assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
        total = stat_lines(r, "stats")["total_commands_processed"]
        cmds, errs, _ = error_stats(r)
        log = [e[3] for e in r.execute_command("SLOWLOG", "GET", -1)]
        got.append((total, cmds, errs, log, r.execute_command("LATENCY", "HISTOGRAM", "set", "incr"),
                    r.execute_command("MGET", "a", "b")))
    assert got[0] == got[1]
    assert got[0][-1] == [b"3", b"2"]
