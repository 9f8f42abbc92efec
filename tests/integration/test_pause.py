"""CLIENT PAUSE / CLIENT UNPAUSE as Redis 7.0.15 does them.

A held client is observed from outside: CLIENT LIST shows it with flag `b`
and the held command; its reply arrives only after UNPAUSE or the timeout.
Waits are bounded (IO timeouts, polling loops); nothing asserts on timing
beyond "eventually".  Every test also passes with CAIRN_BIN=redis-server.
An ALL pause also holds CLIENT UNPAUSE, so ALL pauses here are short.
"""
import time

from pubsub_helpers import call, enc, read_values


def held_count(srv):
    """Clients currently held (flag b) according to CLIENT LIST."""
    lines = srv.client().execute_command("CLIENT", "LIST").decode().splitlines()
    return sum(1 for ln in lines if " flags=b " in ln or " flags=xb " in ln)


def wait_held(srv, n):
    for _ in range(500):
        if held_count(srv) == n:
            return
        time.sleep(0.01)
    raise AssertionError("expected %d held clients, CLIENT LIST says %d" % (n, held_count(srv)))


def unpause(srv):
    assert call(srv.connect(), "CLIENT", "UNPAUSE") == b"+OK\r\n"


def test_write_pause_lets_reads_through_and_holds_writes(server):
    c, w = server.connect(), server.connect()
    assert call(c, "CLIENT", "PAUSE", "100000", "WRITE") == b"+OK\r\n"
    w.send(enc("GET", "k") + enc("SET", "k", "1") + enc("GET", "k"))
    assert read_values(w, 1) == b"$-1\r\n"
    wait_held(server, 1)
    line = [ln for ln in server.client().execute_command("CLIENT", "LIST").decode().splitlines()
            if " flags=b " in ln][0]
    assert " cmd=set " in line
    # Reads from other clients still run, and do not see the held write.
    assert call(server.connect(), "GET", "k") == b"$-1\r\n"
    unpause(server)
    assert read_values(w, 2) == b"+OK\r\n$1\r\n1\r\n"


def test_pausing_client_is_not_exempt(server):
    c = server.connect()
    c.send(enc("CLIENT", "PAUSE", "100000", "WRITE") + enc("GET", "k") + enc("SET", "k", "2") + enc("GET", "k"))
    assert read_values(c, 2) == b"+OK\r\n$-1\r\n"
    wait_held(server, 1)
    unpause(server)
    assert read_values(c, 2) == b"+OK\r\n$1\r\n2\r\n"


def test_write_pause_holds_may_replicate_commands_and_queued_writes(server):
    call(server.connect(), "CLIENT", "PAUSE", "100000", "WRITE")
    p, m, r = server.connect(), server.connect(), server.connect()
    p.send(enc("PUBLISH", "ch", "x"))
    # Queuing a write inside MULTI is held too; queuing a read is not.
    m.send(enc("MULTI") + enc("GET", "k") + enc("SET", "k", "3") + enc("EXEC"))
    assert read_values(m, 2) == b"+OK\r\n+QUEUED\r\n"
    # An EXEC of reads only runs.
    r.send(enc("MULTI") + enc("GET", "k") + enc("EXEC"))
    assert read_values(r, 3) == b"+OK\r\n+QUEUED\r\n*1\r\n$-1\r\n"
    wait_held(server, 2)
    unpause(server)
    assert read_values(p, 1) == b":0\r\n"
    assert read_values(m, 2) == b"+QUEUED\r\n*2\r\n$-1\r\n+OK\r\n"


def test_unpause_releases_in_order(server):
    call(server.connect(), "CLIENT", "PAUSE", "100000", "WRITE")
    conns = []
    for part in ("a", "b", "c", "d"):
        c = server.connect()
        c.send(enc("APPEND", "k", part))
        conns.append(c)
        wait_held(server, len(conns))
    unpause(server)
    assert [read_values(c, 1) for c in conns] == [b":1\r\n", b":2\r\n", b":3\r\n", b":4\r\n"]
    assert call(server.connect(), "GET", "k") == b"$4\r\nabcd\r\n"


def test_all_pause_holds_everything_until_timeout(server):
    c = server.connect()
    assert call(c, "CLIENT", "PAUSE", "300", "ALL") == b"+OK\r\n"
    # Everything waits, even PING, and is answered once the pause ends.
    d = server.connect()
    d.send(enc("PING") + enc("GET", "k"))
    assert read_values(d, 2) == b"+PONG\r\n$-1\r\n"


def test_timeouts_extend_never_shorten_and_type_upgrades(server):
    c = server.connect()
    # WRITE for a while, then "ALL for 10 ms": ALL, until the longer end.
    c.send(enc("CLIENT", "PAUSE", "2000", "WRITE") + enc("CLIENT", "PAUSE", "10", "ALL"))
    assert read_values(c, 2) == b"+OK\r\n+OK\r\n"
    d = server.connect()
    d.send(enc("PING"))
    time.sleep(0.2)  # well past 10 ms, well before 2000 ms
    d.sock.settimeout(0.05)
    try:
        got = d.sock.recv(100)
    except OSError:
        got = b""
    assert got == b"", "PING answered during the ALL pause"
    d.sock.settimeout(10)
    assert read_values(d, 1) == b"+PONG\r\n"  # released at the 2000 ms end
    # A shorter WRITE pause after a longer one does not shorten it.
    c.send(enc("CLIENT", "PAUSE", "100000", "WRITE") + enc("CLIENT", "PAUSE", "1", "WRITE"))
    assert read_values(c, 2) == b"+OK\r\n+OK\r\n"
    w = server.connect()
    w.send(enc("SET", "k", "1"))
    time.sleep(0.05)
    wait_held(server, 1)
    unpause(server)
    assert read_values(w, 1) == b"+OK\r\n"


def test_pipelined_commands_after_held_one_run_after_release(server):
    call(server.connect(), "CLIENT", "PAUSE", "100000", "WRITE")
    w = server.connect()
    w.send(enc("INCR", "n") + enc("INCR", "n") + enc("GET", "n"))
    wait_held(server, 1)
    unpause(server)
    assert read_values(w, 3) == b":1\r\n:2\r\n$1\r\n2\r\n"


def test_killed_held_client_is_dropped(server):
    call(server.connect(), "CLIENT", "PAUSE", "100000", "WRITE")
    w = server.connect()
    wid = int(call(w, "CLIENT", "ID")[1:-2])
    w.send(enc("SET", "k", "1"))
    wait_held(server, 1)
    assert call(server.connect(), "CLIENT", "KILL", "ID", wid) == b":1\r\n"
    unpause(server)
    assert call(server.connect(), "GET", "k") == b"$-1\r\n"


def test_errors(server):
    c = server.connect()
    cases = [
        (("CLIENT", "PAUSE"), b"-ERR wrong number of arguments for 'client|pause' command\r\n"),
        (("CLIENT", "PAUSE", "abc"), b"-ERR timeout is not an integer or out of range\r\n"),
        (("CLIENT", "PAUSE", "-1"), b"-ERR timeout is negative\r\n"),
        (("CLIENT", "PAUSE", "10", "foo"), b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n"),
        (("CLIENT", "PAUSE", "10", "write", "extra"),
         b"-ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.\r\n"),
        # Redis 7.0 accepts any timeout; one that overflows does not extend the pause.
        (("CLIENT", "PAUSE", "9223372036854775807", "WRITE"), b"+OK\r\n"),
        (("CLIENT", "UNPAUSE", "x"), b"-ERR wrong number of arguments for 'client|unpause' command\r\n"),
        (("CLIENT", "UNPAUSE"), b"+OK\r\n"),
    ]
    for args, want in cases:
        assert call(c, *args) == want, args


def test_pause_freezes_expiry(server, oracle):
    """While clients are paused, an expired key reads as absent but is not
    deleted (DBSIZE keeps counting it); UNPAUSE lets expiry delete it."""
    def run(srv):
        r = srv.client()
        r.set("k", "v", px=50)
        r.set("other", "v")
        r.execute_command("CLIENT", "PAUSE", "10000", "WRITE")
        time.sleep(0.5)  # well past the TTL: active expiry would have run
        during = (r.get("k"), r.dbsize())
        r.execute_command("CLIENT", "UNPAUSE")
        deadline = time.time() + 5
        while r.dbsize() != 1 and time.time() < deadline:
            time.sleep(0.05)
        return during, r.dbsize(), r.get("k")
    got, want = run(server), run(oracle)
    assert got == want
    assert want == ((None, 2), 1, None)
