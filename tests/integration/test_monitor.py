"""MONITOR: the line format, which commands are shown (after they ran;
never refused, admin or skip-monitor ones), quoting of binary arguments,
redaction of AUTH / HELLO AUTH, unix-socket sources, the database after
SELECT, MULTI/EXEC ordering, and the monitoring client's own rules.

Lines are compared with redis-server 7.0.15's after dropping the timestamp
and the TCP port (pubsub_helpers.monitor_lines).
"""
import time

from pubsub_helpers import MONITOR_LINE, call, enc, monitor_lines, read_values, split_values
from requires import require_commands

BIN = b"a\x00\n\r\t\x07\x08\"\\ \x7f\xff\xc3\xa9"

SCRIPT = [
    ("set", "k", "v"), ("get", "nokey"), ("nosuchcmd", "x"), ("get",), ("set", "a"),
    ("set", BIN, BIN), ("echo", ""), ("select", "3"), ("set", "k3", "1"), ("select", "0"),
    ("ping",), ("PiNg", "Hello"),
    ("auth", "pw"), ("auth", "user", "pw"), ("auth", "a", "b", "c"),
    ("hello", "2", "auth", "user", "pw"), ("hello", "4", "auth", "u", "p"), ("hello", "x", "auth", "u", "p"),
    ("hello", "2", "setname", "n", "auth", "u", "p", "bad"), ("hello", "2", "auth", "u"),
    ("hello", "2", "foo", "auth", "u", "p"), ("hello",),
    ("config", "get", "maxmemory"), ("client", "list"), ("client", "id"), ("client", "setname", "x"),
    ("debug", "sleep", "0"), ("info", "server"), ("command", "count"), ("monitor",),
    ("publish", "ch", "m"), ("pubsub", "numpat"), ("incr", "k"), ("quit",),
]


def monitor_transcript(srv, script, via_unix=False):
    m = srv.connect()
    assert call(m, "monitor") == b"+OK\r\n"
    c = srv.connect_unix() if via_unix else srv.connect()
    for cmd in script:
        call(c, *cmd)
    # A last command from another client marks the end of the stream.
    call(srv.connect(), "echo", "end-of-test")
    out = []
    while True:
        v = read_values(m, 1)
        out.append(v)
        if b'"end-of-test"' in v:
            return monitor_lines(b"".join(out))


def test_monitor_lines_match_redis(server, oracle):
    got = monitor_transcript(server, SCRIPT)
    want = monitor_transcript(oracle, SCRIPT)
    assert got == want
    args = [a for _, _, a in got]
    assert b'"set" "k" "v"' in args
    assert b'"set" "a\\x00\\n\\r\\t\\a\\b\\"\\\\ \\x7f\\xff\\xc3\\xa9" "a\\x00\\n\\r\\t\\a\\b\\"\\\\ \\x7f\\xff\\xc3\\xa9"' in args
    assert b'"auth" "(redacted)" "(redacted)"' in args
    assert b'"auth" "a" "b" "c"' in args
    assert (3, b"127.0.0.1:PORT", b'"set" "k3" "1"') in got
    assert not any(a.startswith((b'"nosuchcmd"', b'"config"', b'"client" "list"', b'"debug"', b'"monitor"'))
                   for a in args)


def test_monitor_unix_socket_source(server, oracle):
    script = [("set", "u", "1"), ("get", "u")]
    got = monitor_transcript(server, script, via_unix=True)
    want = monitor_transcript(oracle, script, via_unix=True)
    assert [(d, a) for d, _, a in got] == [(d, a) for d, _, a in want]
    assert got[0][1] == b"unix:" + server.unixsocket.encode()
    assert want[0][1] == b"unix:" + oracle.unixsocket.encode()


def test_monitor_line_timestamp_and_shape(server):
    m = server.connect()
    call(m, "monitor")
    before = time.time()
    call(server.connect(), "set", "x", "1")
    line = read_values(m, 1)
    after = time.time()
    mo = MONITOR_LINE.match(line)
    assert mo and mo.group(5) == b'"set" "x" "1"'
    ts = int(mo.group(1)) + int(mo.group(2)) / 1e6
    assert before - 1 <= ts <= after + 1


def test_monitoring_client_rules(server, oracle):
    def script(srv):
        m = srv.connect()
        t = [call(m, "monitor")]
        m.send(enc("monitor"))                # already monitoring: no reply at all
        t.append(call(m, "echo", "x"))        # its own commands are shown to it
        t.append(read_values(m, 1))
        for cmd in (("get", "k"), ("set", "k", "v"), ("publish", "c", "m"), ("dbsize",)):
            t.append(call(m, *cmd))
        t.append(call(m, "pubsub", "numpat"))  # touches no key: allowed
        t.append(read_values(m, 1))
        other = srv.client()
        t.append([l["flags"] for l in other.client_list() if l["flags"] != "N"])
        t.append(call(m, "reset"))            # leaves monitor mode
        other.set("after", "reset")
        t.append(call(m, "get", "after"))     # nothing but the reply arrives
        return [MONITOR_LINE.sub(rb"LINE \5", v) if isinstance(v, bytes) else v for v in t]

    got, want = script(server), script(oracle)
    assert got == want
    assert got[4] == b"-ERR Replica can't interact with the keyspace\r\n"


def test_monitor_disconnect_stops_feeding(server):
    m = server.connect()
    call(m, "monitor")
    m.close()
    c = server.client()
    for _ in range(500):                      # the close is seen at a loop turn
        if not any("O" in l["flags"] for l in c.client_list()):
            break
        time.sleep(0.01)
    assert not any("O" in l["flags"] for l in c.client_list())
    for i in range(100):
        c.set("k%d" % i, i)
    assert c.dbsize() == 100


def test_monitor_many_monitors_same_lines(server):
    ms = [server.connect() for _ in range(5)]
    for m in ms:
        call(m, "monitor")
    call(server.connect(), "set", "shared", "1")
    lines = [monitor_lines(read_values(m, 1)) for m in ms]
    assert all(l == lines[0] for l in lines)
    assert lines[0][0][2] == b'"set" "shared" "1"'


def test_monitor_multi_exec_order(server, oracle):
    require_commands(server, "multi")
    script = [("multi",), ("set", "x", "1"), ("incr", "x"), ("exec",),
              ("multi",), ("set", "x"), ("exec",), ("multi",), ("get", "x"), ("discard",)]
    assert monitor_transcript(server, script) == monitor_transcript(oracle, script)


def test_subscribe_inside_multi_and_monitor_inside_multi(server, oracle):
    require_commands(server, "multi")

    def script(srv):
        c = srv.connect()
        call(c, "multi")
        for cmd in (("ssubscribe", "s"), ("subscribe", "y"), ("monitor",)):
            call(c, *cmd)
        return [call(c, "exec"), call(c, "get", "x"), call(c, "ping")]

    assert script(server) == script(oracle)


def test_lines_split_cleanly(server):
    """Every value a monitor receives is one whole status line."""
    m = server.connect()
    call(m, "monitor")
    c = server.connect()
    c.send(b"".join(enc("set", "key%d" % i, "v" * i) for i in range(200)))
    read_values(c, 200)
    vals = split_values(read_values(m, 200))
    assert len(vals) == 200 and all(MONITOR_LINE.match(v) for v in vals)
