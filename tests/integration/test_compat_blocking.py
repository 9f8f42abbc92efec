"""Issue 33, blocking/expiry/propagation: which blocked clients a key that
vanishes or changes type wakes (and with what reply), blocked clients of a
server that becomes a replica, the liveness of a key when it is served, the
order of a tracking invalidation after a served BLMOVE, and how lazy-expiry
DELs are propagated.

Each scenario runs the same steps on cairn and on redis-server 7.0.15 and
compares the raw replies.  A "still blocked" client is never detected by
waiting: after the step under test, a probe step that would serve it runs,
and the first reply the blocked client gets tells which step woke it.  The
replication stream is read by a raw SYNC client, up to a marker write."""
import time

import pytest

from listhelp import Conn, reply_end
from resphelp import parse_one
from test_blocking import block, clients as conns

# --- helpers ----------------------------------------------------------------


def both(server, oracle, scenario):
    got, exp = scenario(server), scenario(oracle)
    assert got == exp, "cairn %r\nredis %r" % (got, exp)
    return exp


def blocked(ctl):
    """INFO's blocked_clients: whether the step before woke the waiter (a
    served client is unblocked before the next command runs)."""
    info = ctl.call("INFO", "clients")
    return [ln for ln in info.split(b"\r\n") if ln.startswith(b"blocked_clients:")][0]


def parse(buf):
    """A complete raw reply as nested lists of bytes (bulk/simple values)."""
    def plain(v):
        t, x = v
        if t == b"*":
            return [plain(i) for i in x or ()]
        return b"%d" % x if t == b":" else x
    return plain(parse_one(buf))


class ReplStream:
    """A raw replica: SYNC, skip the RDB payload, then read the commands the
    primary propagates (PINGs and the keepalive newlines dropped)."""

    def __init__(self, srv):
        self.c = Conn(srv)
        self.c.sock.sendall(b"SYNC\r\n")
        c = self.c
        while True:
            while b"\n" not in c.buf:
                self._fill()
            line, c.buf = c.buf.split(b"\n", 1)
            if line.startswith(b"$"):
                break
        n = int(line[1:].strip())
        while len(c.buf) < n:
            self._fill()
        c.buf = c.buf[n:]

    def _fill(self):
        chunk = self.c.sock.recv(1 << 20)
        if not chunk:
            raise EOFError("primary closed the replication link")
        self.c.buf += chunk

    def until(self, marker):
        """Commands (lists of lowercase-named args) up to, without, the
        first one whose arguments equal `marker` (and the SELECT of the
        marker's database just before it)."""
        out = []
        while True:
            c = self.c
            c.buf = c.buf.lstrip(b"\n")
            end = reply_end(c.buf, 0) if c.buf else None
            if end is None:
                self._fill()
                continue
            cmd, c.buf = parse(c.buf[:end]), c.buf[end:]
            cmd[0] = cmd[0].lower()
            if cmd == [b"ping"]:
                continue
            if cmd == marker:
                if out and out[-1] == [b"select", MARK_DB.encode()]:
                    out.pop()
                return out
            out.append(cmd)


def repl_server(factory):
    return factory(enable_debug_command="yes", repl_diskless_sync="no")


# The marker lives in a database of its own, so that it is never one of the
# keys a step sees (RANDOMKEY).
MARK_DB = "15"
MARK = [b"set", b"__mark__", b"1"]


def mark(ctl, rs):
    """Write the marker and return what was propagated since the last one
    (ctl ends in database 0)."""
    ctl.run([["SELECT", MARK_DB], ["SET", "__mark__", "1"], ["SELECT", "0"]])
    return rs.until(MARK)


def attach(ctl, srv):
    rs = ReplStream(srv)
    mark(ctl, rs)
    return rs


def stream_of(srv, setup, steps):
    """Run setup, attach a raw replica, run steps; return the replies and
    what was propagated for the steps (up to the marker write)."""
    ctl = Conn(srv)
    ctl.run(setup)
    rs = attach(ctl, srv)
    replies = ctl.run(steps)
    return replies, mark(ctl, rs)


def strip_times(cmds):
    """PEXPIREAT's absolute time differs from run to run."""
    return [c[:2] if c[0] == b"pexpireat" else c for c in cmds]


# --- item 2: a stream key that goes wakes XREADGROUP waiters -----------------

GROUP_SETUP = [["XADD", "k", "1-1", "a", "1"], ["XGROUP", "CREATE", "k", "g", "$"]]
# The probe serves a waiter that is still blocked, whatever it waits for.
STREAM_PROBE = [["DEL", "k"], ["XADD", "k", "5-1", "f", "v"],
                ["XGROUP", "CREATE", "k", "g", "0"], ["XADD", "k", "6-1", "f", "v"]]

KEY_GOES = {
    "del": [["DEL", "k"]],
    "unlink": [["UNLINK", "k"]],
    "flushall": [["FLUSHALL"]],
    "flushall-async": [["FLUSHALL", "ASYNC"]],
    "flushdb": [["FLUSHDB"]],
    "flushdb-in-multi": [["MULTI"], ["FLUSHDB"], ["EXEC"]],
    "flushall-in-lua": [["EVAL", "redis.call('flushall')", "0"]],
    "swapdb-empty": [["SWAPDB", "0", "1"]],
    "swapdb-string": [["SELECT", "1"], ["SET", "k", "x"], ["SWAPDB", "0", "1"], ["SELECT", "0"]],
    "swapdb-stream-nogroup": [["SELECT", "1"], ["XADD", "k", "2-1", "a", "1"],
                              ["SWAPDB", "0", "1"], ["SELECT", "0"]],
    "swapdb-stream-group": [["SELECT", "1"], ["XADD", "k", "2-1", "a", "1"],
                            ["XGROUP", "CREATE", "k", "g", "0"], ["SWAPDB", "0", "1"],
                            ["SELECT", "0"]],
    "move": [["MOVE", "k", "1"]],
    "rename-away": [["RENAME", "k", "k2"]],
    "rename-onto-nogroup": [["XADD", "o", "3-1", "a", "1"], ["RENAME", "o", "k"]],
    "rename-onto-string": [["SET", "o", "x"], ["RENAME", "o", "k"]],
    "set-over": [["SET", "k", "x"]],
    "lazy-expiry": [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["PEXPIRE", "k", "1"],
                    ["DEBUG", "SLEEP", "0.01"], ["EXISTS", "k"]],
    # (active expiry off: it would delete the key at a moment of its own)
    "expiry-in-multi": [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["MULTI"], ["PEXPIRE", "k", "1"],
                        ["DEBUG", "SLEEP", "0.01"], ["EXEC"]],
    "eviction": [["CONFIG", "SET", "maxmemory-policy", "allkeys-random"],
                 ["CONFIG", "SET", "maxmemory", "1"], ["SET", "x", "y"],
                 ["CONFIG", "SET", "maxmemory", "0"]],
    "multi-del-xadd": [["MULTI"], ["DEL", "k"], ["XADD", "k", "4-1", "a", "1"], ["EXEC"]],
    "lua-del": [["EVAL", "redis.call('del','k')", "0"]],
    "xgroup-destroy": [["XGROUP", "DESTROY", "k", "g"]],
    "restore-replace-nogroup": [["XADD", "o", "3-1", "a", "1"], ["DUMP", "o"]],
    # Not a key that goes, but writes Redis does not signal (XSETID would
    # otherwise serve an empty read) or does (an XADD undone in the same
    # transaction serves one).
    "xsetid": [["XSETID", "k", "7-1"]],
    "xgroup-setid-back": [["XGROUP", "SETID", "k", "g", "0"]],
    "multi-xadd-xdel": [["MULTI"], ["XADD", "k", "6-1", "f", "v"], ["XDEL", "k", "6-1"], ["EXEC"]],
}


def stream_scenario(blocker, steps):
    def run(srv):
        ctl, b = conns(srv, 2)
        ctl.run([["CONFIG", "SET", "maxmemory", "0"]] + GROUP_SETUP)
        block(ctl, b, *blocker)
        out = []
        for s in steps:
            r = ctl.call(*s)
            if s == ["DUMP", "o"]:  # restore the dump over k
                r = ctl.call("RESTORE", "k", "0", parse(r), "REPLACE")
            out.append(r)
        out.append(blocked(ctl))
        out += ctl.run(STREAM_PROBE)
        return out, b.read(), ctl.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    return run


@pytest.mark.parametrize("how", sorted(KEY_GOES))
@pytest.mark.parametrize("blocker", [
    ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "k", ">"),
    ("XREAD", "BLOCK", "0", "STREAMS", "k", "$"),
], ids=["xreadgroup", "xread"])
def test_stream_waiters_when_the_key_goes(start_server, start_oracle, how, blocker):
    server = start_server(enable_debug_command="yes")
    oracle = start_oracle(enable_debug_command="yes")
    r = both(server, oracle, stream_scenario(blocker, KEY_GOES[how]))
    if blocker[0] == "XREADGROUP" and how in ("flushall", "flushdb", "swapdb-empty",
                                              "lazy-expiry", "eviction"):
        assert r[1] == b"-UNBLOCKED the stream key no longer exists\r\n"
    if blocker[0] == "XREADGROUP" and how == "xgroup-destroy":
        assert r[1].startswith(b"-NOGROUP ")


def test_flush_wakes_group_waiters_in_every_db(start_server, start_oracle):
    """FLUSHALL reaches waiters of every database, FLUSHDB only its own."""
    def run(srv):
        ctl, b0, b3 = conns(srv, 3)
        for db, b in ((0, b0), (3, b3)):
            ctl.run([["SELECT", str(db)]] + GROUP_SETUP)
            b.call("SELECT", str(db))
            block(ctl, b, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "k", ">")
        r = [ctl.call("FLUSHDB"), b3.read()]   # ctl is in db 3
        r += [ctl.call("SELECT", "0"), ctl.call("XADD", "k", "7-1", "f", "v"), b0.read()]
        return r
    r = both(start_server(), start_oracle(), run)
    assert r[1] == b"-UNBLOCKED the stream key no longer exists\r\n"

    def run_all(srv):
        ctl, b0, b3 = conns(srv, 3)
        for db, b in ((0, b0), (3, b3)):
            ctl.run([["SELECT", str(db)]] + GROUP_SETUP)
            b.call("SELECT", str(db))
            block(ctl, b, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "k", ">")
        return [ctl.call("FLUSHALL"), b0.read(), b3.read()]
    r = both(start_server(), start_oracle(), run_all)
    assert r[1] == r[2] == b"-UNBLOCKED the stream key no longer exists\r\n"


# --- lists and sorted sets: a key that comes dead or of another type --------

LIST_BLOCKERS = [("BLPOP", "k", "0"), ("BRPOP", "k", "0"),
                 ("BLMOVE", "k", "d", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "k", "d", "0"),
                 ("BLMPOP", "0", "1", "k", "LEFT")]
ZSET_BLOCKERS = [("BZPOPMIN", "k", "0"), ("BZPOPMAX", "k", "0"), ("BZMPOP", "0", "1", "k", "MIN")]


def key_comes(push):
    """Ways a key can come into being, dead or alive, for a waiter."""
    p = push
    return {
        "set": [["SET", "k", "x"]],
        "multi-push-del": [["MULTI"], p, ["DEL", "k"], ["EXEC"]],
        "multi-push-set": [["MULTI"], p, ["SET", "k", "x"], ["EXEC"]],
        "lua-push-del": [["EVAL", "redis.call('%s')" % "','".join(p), "0"],
                         ["EVAL", "redis.call('del','k')", "0"]],
        "multi-push-expired": [["MULTI"], p, ["PEXPIRE", "k", "1"], ["DEBUG", "SLEEP", "0.01"],
                               ["EXEC"]],
        "swapdb-expired": [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SELECT", "1"], p,
                           ["PEXPIRE", "k", "1"], ["DEBUG", "SLEEP", "0.01"],
                           ["SWAPDB", "0", "1"], ["SELECT", "0"]],
        "swapdb-string": [["SELECT", "1"], ["SET", "k", "x"], ["SWAPDB", "0", "1"], ["SELECT", "0"]],
        "swapdb-alive": [["SELECT", "1"], p, ["SWAPDB", "0", "1"], ["SELECT", "0"]],
        "move-in": [["SELECT", "1"], p, ["MOVE", "k", "0"], ["SELECT", "0"]],
        "flushall-in-multi": [["MULTI"], p, ["FLUSHALL"], ["EXEC"]],
    }


def keyed_scenario(blocker, steps, probe):
    def run(srv):
        ctl, b = conns(srv, 2)
        block(ctl, b, *blocker)
        out = [ctl.call(*s) for s in steps]
        out.append(blocked(ctl))
        out += ctl.run(probe)
        return out, b.read()
    return run


@pytest.mark.parametrize("how", sorted(key_comes(["RPUSH", "k", "a"])))
@pytest.mark.parametrize("blocker", LIST_BLOCKERS, ids=[b[0] for b in LIST_BLOCKERS])
def test_list_waiters_served_only_by_a_live_list(start_server, start_oracle, how, blocker):
    steps = key_comes(["RPUSH", "k", "a"])[how]
    run = keyed_scenario(blocker, steps, [["DEL", "k"], ["RPUSH", "k", "p"]])
    r = both(start_server(enable_debug_command="yes"),
             start_oracle(enable_debug_command="yes"), run)
    if how in ("multi-push-expired", "swapdb-expired"):
        assert b"p" in r[1] and b"$1\r\na\r\n" not in r[1]


@pytest.mark.parametrize("how", sorted(key_comes(["ZADD", "k", "1", "a"])))
@pytest.mark.parametrize("blocker", ZSET_BLOCKERS, ids=[b[0] for b in ZSET_BLOCKERS])
def test_zset_waiters_served_only_by_a_live_zset(start_server, start_oracle, how, blocker):
    steps = key_comes(["ZADD", "k", "1", "a"])[how]
    run = keyed_scenario(blocker, steps, [["DEL", "k"], ["ZADD", "k", "5", "p"]])
    r = both(start_server(enable_debug_command="yes"),
             start_oracle(enable_debug_command="yes"), run)
    if how in ("multi-push-expired", "swapdb-expired"):
        assert b"$1\r\np\r\n" in r[1]


# --- item 6: the DEL of a key found dead at serving time is propagated -------

def test_expired_in_multi_is_deleted_and_propagated_not_served(start_server, start_oracle):
    def run(srv):
        ctl, b = conns(srv, 2)
        rs = attach(ctl, srv)
        block(ctl, b, "BLPOP", "k", "0")
        r = ctl.run([["MULTI"], ["LPUSH", "k", "x"], ["PEXPIRE", "k", "1"],
                     ["DEBUG", "SLEEP", "0.01"], ["EXEC"], ["EXISTS", "k"],
                     ["LPUSH", "k", "y"]])
        r.append(b.read())
        return r, strip_times(mark(ctl, rs))
    r = both(repl_server(start_server), repl_server(start_oracle), run)
    assert r[0][-1] == b"*2\r\n$1\r\nk\r\n$1\r\ny\r\n"
    assert r[1] == [[b"select", b"0"], [b"multi"], [b"lpush", b"k", b"x"], [b"pexpireat", b"k"],
                    [b"exec"], [b"del", b"k"], [b"lpush", b"k", b"y"], [b"lpop", b"k"]]


def test_swapdb_with_expired_key_propagates_swapdb_select_del(start_server, start_oracle):
    def run(srv):
        setup = [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SELECT", "9"], ["LPUSH", "k", "x"],
                 ["PEXPIRE", "k", "1"], ["DEBUG", "SLEEP", "0.01"], ["SELECT", "0"]]
        ctl, b = conns(srv, 2)
        ctl.run(setup)
        rs = attach(ctl, srv)
        b.call("SELECT", "1")
        block(ctl, b, "BLPOP", "k", "0")
        r = [ctl.call("SWAPDB", "1", "9"), ctl.call("SELECT", "1"), ctl.call("LPUSH", "k", "y"),
             b.read()]
        return r, mark(ctl, rs)
    r = both(repl_server(start_server), repl_server(start_oracle), run)
    assert r[0][3] == b"*2\r\n$1\r\nk\r\n$1\r\ny\r\n"
    assert r[1] == [[b"select", b"0"], [b"swapdb", b"1", b"9"], [b"select", b"1"], [b"del", b"k"],
                    [b"lpush", b"k", b"y"], [b"lpop", b"k"]]


def test_set_over_expired_key_propagates_del_then_set(start_server, start_oracle):
    # A plain SET finds its key once, in the write itself; the expired key's
    # DEL still goes out before the SET, as from Redis's lookup.
    def run(srv):
        ctl, = conns(srv, 1)
        ctl.run([["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SET", "s", "1", "PX", "1"], ["HSET", "h", "f", "v"],
                 ["PEXPIRE", "h", "1"], ["SET", "x", "1", "PX", "1"], ["DEBUG", "SLEEP", "0.01"]])
        rs = attach(ctl, srv)
        r = ctl.run([["SET", "s", "2"], ["SET", "h", "3", "EX", "100"], ["SET", "x", "4", "NX"], ["TYPE", "h"],
                     ["INFO", "stats"]])
        r[-1] = [ln for ln in r[-1].split(b"\r\n") if ln.startswith(b"expired_keys:")]
        return r, [c[:4] if c[0] == b"set" else c for c in mark(ctl, rs)]  # PXAT's time varies
    r = both(repl_server(start_server), repl_server(start_oracle), run)
    assert r[0][:4] == [b"+OK\r\n", b"+OK\r\n", b"+OK\r\n", b"+string\r\n"]
    assert r[0][4] == [b"expired_keys:3"]
    assert r[1] == [[b"select", b"0"]] + [[b"multi"], [b"del", b"s"], [b"set", b"s", b"2"], [b"exec"],
                                          [b"multi"], [b"del", b"h"], [b"set", b"h", b"3", b"PXAT"], [b"exec"],
                                          [b"multi"], [b"del", b"x"], [b"set", b"x", b"4", b"NX"], [b"exec"]]


# --- item 8: lazy-expiry DELs of SCAN / RANDOMKEY are plain DELs ------------

EXPIRED_KEYS = [["DEBUG", "SET-ACTIVE-EXPIRE", "0"]] + \
    [["SET", "e%d" % i, "1", "PX", "1"] for i in range(20)] + [["DEBUG", "SLEEP", "0.01"]]


@pytest.mark.parametrize("steps,wrapped", [
    ([["SCAN", "0", "COUNT", "1000"]], False),
    ([["SCAN", "0", "COUNT", "1000", "MATCH", "e*"]], False),
    ([["SCAN", "0", "COUNT", "1000", "TYPE", "string"]], False),
    ([["RANDOMKEY"]], False),
    ([["MULTI"], ["SCAN", "0", "COUNT", "1000"], ["EXEC"]], True),
    ([["EVAL", "redis.call('randomkey')", "0"]], True),
], ids=["scan", "scan-match", "scan-type", "randomkey", "scan-in-multi", "randomkey-in-lua"])
def test_lazy_expiry_dels_of_scan_and_randomkey(start_server, start_oracle, steps, wrapped):
    def run(srv):
        replies, cmds = stream_of(srv, EXPIRED_KEYS, steps)
        dels = sorted(c for c in cmds if c[0] == b"del")
        rest = [c for c in cmds if c[0] != b"del"]
        return replies, dels, rest
    r = both(repl_server(start_server), repl_server(start_oracle), run)
    assert len(r[1]) == 20
    assert r[2] == ([[b"select", b"0"], [b"multi"], [b"exec"]] if wrapped else [[b"select", b"0"]])


# --- item 5: a server that becomes a replica drops its blocked clients ------

ROLE_CHANGE = b"-UNBLOCKED force unblock from blocking operation, instance state changed " \
              b"(master -> replica?)\r\n"


def closed(conn):
    """True when the server closed the connection (after its replies)."""
    try:
        while True:
            chunk = conn.sock.recv(1 << 16)
            if not chunk:
                return True
    except ConnectionResetError:
        return True


def test_replicaof_unblocks_blocked_clients_with_an_error(start_server, start_oracle):
    blockers = [("BLPOP", "l", "0"), ("BRPOP", "l", "0"), ("BLMOVE", "l", "d", "LEFT", "LEFT", "0"),
                ("BLMPOP", "0", "1", "l", "LEFT"), ("BZPOPMIN", "z", "0"), ("BZMPOP", "0", "1", "z", "MAX"),
                ("XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
                ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"),
                ("WAIT", "1", "0")]

    def run(srv, primary):
        ctl = conns(srv, 1)[0]
        ctl.run([["XADD", "s", "1-1", "a", "1"], ["XGROUP", "CREATE", "s", "g", "$"]])
        bs = conns(srv, len(blockers))
        for b, cmd in zip(bs, blockers):
            block(ctl, b, *cmd)
        r = [ctl.call("REPLICAOF", primary.host, str(primary.port))]
        r += [(b.read(), closed(b)) for b in bs]
        r.append(blocked(ctl))
        # The replica's data now follows the primary's; a read-only blocked
        # command issued on the replica is dropped again when its primary
        # changes, not when it is promoted.
        x = conns(srv, 1)[0]
        block(ctl, x, "XREAD", "BLOCK", "0", "STREAMS", "s2", "$")
        r += [ctl.call("REPLICAOF", "NO", "ONE")]
        r.append(blocked(ctl))
        r += [ctl.call("REPLICAOF", primary.host, str(primary.port))]
        r += [x.read(), closed(x)]
        return r
    p1, p2 = start_server(), start_oracle()
    got = run(start_server(), p1)
    exp = run(start_oracle(), p2)
    assert got == exp
    assert all(x == (ROLE_CHANGE, True) for x in exp[1:1 + len(blockers)])
    assert exp[-5:] == [b"+OK\r\n", b"blocked_clients:1", b"+OK\r\n", ROLE_CHANGE, True]


def test_new_replica_does_not_serve_the_primarys_writes_to_old_waiters(start_server):
    """The waiters are gone before the primary's data arrives: the replica
    holds exactly what the primary holds."""
    primary, rep = start_server(repl_diskless_sync_delay="0"), start_server()
    ctl, b = conns(rep, 2)
    block(ctl, b, "BLPOP", "l", "0")
    Conn(primary).run([["RPUSH", "l", "a", "b"]])
    assert ctl.call("REPLICAOF", primary.host, str(primary.port)) == b"+OK\r\n"
    assert b.read() == ROLE_CHANGE
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if b"master_link_status:up" in ctl.call("INFO", "replication"):
            break
        time.sleep(0.05)
    Conn(primary).call("RPUSH", "l", "c")
    ctl.call("WAIT", "0", "0")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and ctl.call("LLEN", "l") != b":3\r\n":
        time.sleep(0.05)
    assert ctl.call("LRANGE", "l", "0", "-1") == b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"


# --- item 7: a served BLMOVE's own invalidation follows its reply -----------

@pytest.mark.parametrize("opts", [(), ("NOLOOP",)], ids=["default", "noloop"])
@pytest.mark.parametrize("blocker", [("BLMOVE", "l", "d", "LEFT", "RIGHT", "0"),
                                     ("BRPOPLPUSH", "l", "d", "0")], ids=["blmove", "brpoplpush"])
def test_invalidation_after_served_move_reply(start_server, start_oracle, blocker, opts):
    def run(srv):
        ctl = conns(srv, 1)[0]
        a = Conn(srv, 3)
        a.cid = a.client_id()
        a.call("CLIENT", "TRACKING", "ON", *opts)
        ctl.call("RPUSH", "d", "x")
        a.call("LRANGE", "d", "0", "-1")
        block(ctl, a, *blocker)
        r = [ctl.call("RPUSH", "l", "v")]
        a.send(["PING"])  # whatever else a gets comes before its PONG
        r += [a.read(), a.read()]
        if r[-1] != b"+PONG\r\n":
            r.append(a.read())
        return r
    r = both(start_server(), start_oracle(), run)
    assert r[1] == b"$1\r\nv\r\n"


def test_invalidation_redirected_for_served_blmove(start_server, start_oracle):
    def run(srv):
        ctl, sub, a = conns(srv, 3)
        sub.call("SUBSCRIBE", "__redis__:invalidate")
        a.call("CLIENT", "TRACKING", "ON", "REDIRECT", str(sub.cid))
        ctl.call("RPUSH", "d", "x")
        a.call("LRANGE", "d", "0", "-1")
        block(ctl, a, "BLMOVE", "l", "d", "LEFT", "LEFT", "0")
        return [ctl.call("RPUSH", "l", "v"), a.read(), sub.read()]
    r = both(start_server(), start_oracle(), run)
    assert r[2] == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nd\r\n"


@pytest.mark.parametrize("target", ["server", "oracle"])
def test_active_expiry_wakes_group_waiter(start_server, start_oracle, target):
    """A stream deleted by the active expiry cycle (no command involved)
    wakes its XREADGROUP waiter with the error; XREAD waiters stay."""
    srv = (start_server if target == "server" else start_oracle)(hz="100")
    ctl, g, x = conns(srv, 3)
    ctl.run(GROUP_SETUP)
    block(ctl, g, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "k", ">")
    block(ctl, x, "XREAD", "BLOCK", "0", "STREAMS", "k", "$")
    ctl.call("PEXPIRE", "k", "1")
    deadline = time.monotonic() + 20
    while blocked(ctl) != b"blocked_clients:1" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert g.read() == b"-UNBLOCKED the stream key no longer exists\r\n"
    assert blocked(ctl) == b"blocked_clients:1"
    ctl.call("XADD", "k", "9-1", "f", "v")
    assert x.read() == b"*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$3\r\n9-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


def test_failover_unblocks_the_old_primarys_waiters(start_server, start_oracle):
    """FAILOVER turns the primary into a replica: its waiters go as with
    REPLICAOF."""
    def run(factory):
        p, r = factory(repl_diskless_sync_delay="0"), factory(repl_diskless_sync_delay="0")
        pc, rc = Conn(p), Conn(r)
        rc.call("REPLICAOF", p.host, str(p.port))
        deadline = time.monotonic() + 20
        while b"master_link_status:up" not in rc.call("INFO", "replication"):
            assert time.monotonic() < deadline, "replica never linked"
            time.sleep(0.02)
        bl, xr = conns(p, 2)
        block(pc, bl, "BLPOP", "l", "0")
        block(pc, xr, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        out = [pc.call("FAILOVER")]
        out += [bl.read(), closed(bl), xr.read(), closed(xr)]
        return out
    got, exp = run(start_server), run(start_oracle)
    assert got == exp
    assert exp[1:] == [ROLE_CHANGE, True, ROLE_CHANGE, True]
