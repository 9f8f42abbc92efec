"""Batched socket I/O (io_uring): many clients ready in one loop turn are
read in one system call, and their replies written in one.

Most tests talk to the server with one client at a time, so a batch of
two or more rarely forms there.  These tests make batches on purpose:
many connections send before any reply is read, and a DEBUG SLEEP holds
the server while commands pile up.  Every test runs twice, with batching
(the default where the kernel allows io_uring) and with CAIRN_IO_URING=no
(one system call per read or write), and compares what the clients see
with redis-server 7.0.15."""
import random
import time

import pytest

from script_resp import Conn
from txhelp import encode

BUSY = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
ON = "Socket reads and writes are batched with io_uring"
OFF = "io_uring is off (CAIRN_IO_URING=no)"


@pytest.fixture(params=["batched", "unbatched"])
def cairn(request, start_server, monkeypatch):
    if request.param == "unbatched":
        monkeypatch.setenv("CAIRN_IO_URING", "no")
    else:
        monkeypatch.delenv("CAIRN_IO_URING", raising=False)
    srv = start_server(enable_debug_command="yes")
    if request.param == "unbatched":
        assert OFF in srv.log
        assert ON not in srv.log
    else:
        # Either batching is on, or the log says why not (no io_uring here).
        assert ON in srv.log or "io_uring is not available" in srv.log, srv.log
    return srv


@pytest.fixture
def oracle(start_oracle):
    return start_oracle(enable_debug_command="yes")


def replies(conn, n):
    return [conn.reply() for _ in range(n)]


def plan(rng, i, big):
    """A pipeline for connection i that touches only its own keys (so its
    replies do not depend on the order the server serves connections in),
    with some replies far larger than a client's 16 KB reply buffer and
    some arguments larger than a read."""
    cmds = []
    for step in range(rng.randint(1, 12)):
        r = rng.random()
        k = "k:%d" % i
        if r < 0.2:
            cmds.append(("SET", k, "v%d" % step))
        elif r < 0.3:
            cmds.append(("APPEND", k, "x" * rng.randint(0, 3000)))
        elif r < 0.35:  # an argument of 32 KB or more is read straight into its string
            cmds.append(("SET", k, "y" * rng.randint(32768, 70000)))
        elif r < 0.5:
            cmds.append(("RPUSH", "l:%d" % i, *[str(j) for j in range(rng.randint(1, 20))]))
        elif r < 0.6:
            cmds.append(("LRANGE", "l:%d" % i, "0", "-1"))
        elif r < 0.7:
            cmds.append(("GET", big))
        elif r < 0.8:
            cmds.append(("INCRBY", "n:%d" % i, str(rng.randint(-5, 5))))
        elif r < 0.9:
            cmds.append(("GET", k))
        else:
            cmds.append(("NOSUCHCOMMAND", k))
    return cmds


def closed(conn):
    """True once the server has closed the connection."""
    try:
        return conn.sock.recv(1) == b""
    except ConnectionResetError:
        return True


def run_rounds(srv, seed, nconn=40, rounds=6):
    """Send every connection's pipeline before reading any reply, round
    after round; some connections hang up without reading, some end their
    pipeline with QUIT.  Returns what each connection received, in order,
    and the final values of the keys of every connection that did not hang
    up (once the server has written to a closed connection, the peer's
    reset may cut short the rest of its pipeline, on any server)."""
    rng = random.Random(seed)
    setup = Conn(srv)
    big = "big"
    assert setup.call("SET", big, "b" * 200000) == b"+OK\r\n"
    conns = {i: Conn(srv) for i in range(nconn)}
    seen = {i: [] for i in range(nconn)}
    gone = set()  # hung up: how much of their last pipeline ran is a race
    for _ in range(rounds):
        owed, quitting = {}, []
        for i, c in list(conns.items()):
            cmds = plan(rng, i, big)
            fate = rng.random()
            if fate < 0.05:  # sends, then hangs up without reading
                c.sock.sendall(b"".join(encode(*cmd) for cmd in cmds))
                c.close()
                del conns[i]
                seen[i].append("hung up")
                gone.add(i)
                continue
            if fate < 0.1:  # ends with QUIT: the server closes after replying
                cmds.append(("QUIT",))
                quitting.append(i)
                owed[i] = len(cmds)
            else:
                owed[i] = len(cmds)
            c.sock.sendall(b"".join(encode(*cmd) for cmd in cmds))
        for i, n in owed.items():
            seen[i].append(replies(conns[i], n))
        for i in quitting:
            assert conns[i].buf == b"", "bytes after QUIT's reply: %r" % conns[i].buf
            assert closed(conns[i])
            conns.pop(i).close()
            seen[i].append("quit")
    state = [(setup.call("GET", "k:%d" % i), setup.call("LRANGE", "l:%d" % i, "0", "-1"),
              setup.call("GET", "n:%d" % i)) for i in range(nconn) if i not in gone]
    for c in conns.values():
        c.close()
    setup.close()
    return seen, state


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_many_clients_each_see_their_own_replies(cairn, oracle, seed):
    got = run_rounds(cairn, seed)
    want = run_rounds(oracle, seed)
    assert got[1] == want[1]
    for i in want[0]:
        assert got[0][i] == want[0][i], "connection %d" % i
    # Every connection that left is gone; the server is still whole.
    c = Conn(cairn)
    deadline = time.monotonic() + 10
    while c.call("INFO", "clients").split(b"connected_clients:")[1].split(b"\r\n")[0] != b"1":
        assert time.monotonic() < deadline, "connections left behind"
        time.sleep(0.01)
    c.close()


def pile_up(srv, hold, *sends):
    """Hold the server in DEBUG SLEEP while each (conn, command) is sent,
    so that all of them are ready in the same loop turn afterwards."""
    sleeper = Conn(srv)
    sleeper.send("DEBUG", "SLEEP", str(hold))
    time.sleep(hold / 4)  # the server is asleep now
    for conn, cmd in sends:
        conn.send(*cmd)
    assert sleeper.reply() == b"+OK\r\n"
    sleeper.close()


SLOW = ("local t0 = redis.call('TIME') "
        "while true do local t = redis.call('TIME') "
        "if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 400000 then return 1 end end")


def busy_turn(srv):
    """a's slow script and b's PING arrive in the same turn, a's first."""
    a, b = Conn(srv), Conn(srv)
    assert b.call("CONFIG", "SET", "busy-reply-threshold", "100") == b"+OK\r\n"
    pile_up(srv, 0.4, (a, ("EVAL", SLOW, "0")), (b, ("PING",)))
    out = (a.reply(), b.reply())
    a.close()
    b.close()
    return out


def test_client_read_with_a_busy_script_gets_busy(cairn, oracle):
    """b's command was read in the same batch as a's script, before the
    script ran; it must still get BUSY while the script runs, as on Redis
    (where b is read only once the script polls)."""
    want = busy_turn(oracle)
    assert want == (b":1\r\n", BUSY)
    assert busy_turn(cairn) == want


def kill_turn(srv):
    """a kills b by id in the same turn as b's pipeline arrives: whichever
    the server serves first, b's connection ends and a is told 1 killed."""
    a, b = Conn(srv), Conn(srv)
    bid = int(b.call("CLIENT", "ID")[1:-2])
    pile_up(srv, 0.3, (a, ("CLIENT", "KILL", "ID", str(bid))), (b, ("SET", "x", "1")))
    out = a.reply()
    try:
        while b.reply():
            pass
    except (EOFError, ConnectionResetError):
        pass
    alive = a.call("PING")
    a.close()
    b.close()
    return out, alive


def test_kill_of_a_client_read_in_the_same_batch(cairn, oracle):
    want = kill_turn(oracle)
    assert want == (b":1\r\n", b"+PONG\r\n")
    assert kill_turn(cairn) == want
