"""Push items rendered per receiver: the same published message, invalidation
or MONITOR line reaching RESP2 and RESP3 clients in one fan-out, compared
byte for byte with redis-server 7.0.15.

Cairn renders each push item once per encoder in use and copies the bytes
to every receiver of that encoder; these cases mix the encoders inside one
fan-out (one pattern, one tracked key, one BCAST prefix, one MONITOR feed),
switch a subscriber's protocol while it is subscribed, and cover the items
that are not messages (flush nulls in the tracking client's version,
MONITOR lines under CLIENT REPLY OFF).  The other tests (test_pubsub,
test_tracking, test_monitor) cover each shape alone.

"No more values" is checked with a PING on the same connection: anything
queued for it comes before the PING's reply.
"""
from pubsub_helpers import call, enc, monitor_lines, read_values, split_values

PONG = b"+PONG\r\n"
SUB_PONG = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"


def both(server, oracle, script):
    got, want = script(server), script(oracle)
    assert got == want
    return got


def resp3(srv):
    c = srv.connect()
    call(c, "HELLO", "3")
    return c


def client_id(conn):
    return int(call(conn, "CLIENT", "ID")[1:-2])


def subscribed(srv, hello3, cmd, *names):
    c = resp3(srv) if hello3 else srv.connect()
    c.send(enc(cmd, *names))
    read_values(c, len(names))
    return c


def test_one_pattern_and_channel_with_both_encoders(server, oracle):
    """A channel and a pattern each with a RESP2 and a RESP3 subscriber:
    each receiver gets its own version of the same message and pmessage."""
    def script(srv):
        c2 = subscribed(srv, False, "subscribe", "news")
        c3 = subscribed(srv, True, "subscribe", "news")
        p2 = subscribed(srv, False, "psubscribe", "n*")
        p3 = subscribed(srv, True, "psubscribe", "n*")
        c2b = subscribed(srv, False, "subscribe", "news")
        pub = srv.connect()
        t = [call(pub, "publish", "news", "x" * 300), call(pub, "publish", "news", "")]
        for c in (c2, c3, p2, p3, c2b):
            t.append(read_values(c, 2))
        t += [call(c2, "ping"), call(c3, "ping"), call(p2, "ping"), call(p3, "ping")]
        return t

    t = both(server, oracle, script)
    assert t[:2] == [b":5\r\n", b":5\r\n"]
    assert t[2].startswith(b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$300\r\n")
    assert t[3].startswith(b">3\r\n$7\r\nmessage\r\n")
    assert t[5].startswith(b">4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n")
    assert t[6] == t[2]


def test_shard_messages_and_keyspace_events_both_encoders(server, oracle):
    def script(srv):
        s2 = subscribed(srv, False, "ssubscribe", "sh")
        s3 = subscribed(srv, True, "ssubscribe", "sh")
        k2 = subscribed(srv, False, "psubscribe", "__key*__:*")
        k3 = subscribed(srv, True, "subscribe", "__keyevent@0__:set")
        w = srv.connect()
        t = [call(w, "config", "set", "notify-keyspace-events", "KEA"),
             call(w, "spublish", "sh", "m"), call(w, "set", "k", "v")]
        t += [read_values(s2, 1), read_values(s3, 1), read_values(k2, 2), read_values(k3, 1)]
        t += [call(s2, "ping"), call(s3, "ping"), call(k2, "ping"), call(k3, "ping")]
        call(w, "config", "set", "notify-keyspace-events", "")
        return t

    t = both(server, oracle, script)
    assert t[4] == b">3\r\n$8\r\nsmessage\r\n$2\r\nsh\r\n$1\r\nm\r\n"


def test_protocol_switch_while_subscribed(server, oracle):
    """A RESP3 subscriber may switch to RESP2 (HELLO 2) and back is refused
    in RESP2 subscribed mode; messages follow the current version."""
    def script(srv):
        c = subscribed(srv, True, "subscribe", "ch")
        pub = srv.connect()
        t = [call(pub, "publish", "ch", "a"), read_values(c, 1)]
        c.send(enc("hello", "2"))
        hello = read_values(c, 1)
        t.append(hello.split(b"proto")[1][:8])
        t += [call(pub, "publish", "ch", "b"), read_values(c, 1)]
        t.append(call(c, "hello", "3"))       # refused in RESP2 subscribed mode
        t += [call(c, "unsubscribe", "ch"), call(c, "hello", "3")[:1]]
        t += [call(c, "subscribe", "ch"), call(pub, "publish", "ch", "c"), read_values(c, 1)]
        return t

    t = both(server, oracle, script)
    assert t[1] == b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\na\r\n"
    assert t[4] == b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nb\r\n"
    assert t[-1] == b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nc\r\n"


def test_one_key_invalidation_to_mixed_receivers(server, oracle):
    """One tracked key read by a RESP3 tracker, a RESP2 tracker redirecting
    to a RESP2 subscriber and a RESP3 tracker redirecting to the same
    subscriber; then a flush, whose null is in each tracker's version."""
    def script(srv):
        sub = srv.connect()
        sid = client_id(sub)
        sub.send(enc("subscribe", "__redis__:invalidate"))
        read_values(sub, 1)
        t3 = resp3(srv)
        t2r = srv.connect()
        t3r = resp3(srv)
        call(t3, "client", "tracking", "on")
        call(t2r, "client", "tracking", "on", "redirect", sid)
        call(t3r, "client", "tracking", "on", "redirect", sid)
        for c in (t3, t2r, t3r):
            call(c, "get", "k")
        w = srv.connect()
        t = [call(w, "set", "k", "1"), read_values(t3, 1), sorted(split_values(read_values(sub, 2)))]
        t += [call(w, "flushall"), read_values(t3, 1), sorted(split_values(read_values(sub, 2)))]
        t += [call(t3, "ping"), call(t3r, "ping"), call(t2r, "ping"), call(sub, "ping")]
        return t

    t = both(server, oracle, script)
    # The RESP3 tracker's flush null reaches the RESP2 subscriber as "_".
    assert b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n_\r\n" in t[5]
    assert b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n" in t[5]


def test_bcast_prefix_to_mixed_receivers(server, oracle):
    """Two BCAST trackers and a redirecting one on one prefix, one with
    NOLOOP: the batch is one item per receiver in its own version."""
    def script(srv):
        sub = srv.connect()
        sid = client_id(sub)
        sub.send(enc("subscribe", "__redis__:invalidate"))
        read_values(sub, 1)
        a = resp3(srv)
        b = resp3(srv)
        r = srv.connect()
        call(a, "client", "tracking", "on", "bcast", "prefix", "u:")
        call(b, "client", "tracking", "on", "bcast", "prefix", "u:", "noloop")
        call(r, "client", "tracking", "on", "bcast", "prefix", "u:", "redirect", sid)
        w = srv.connect()
        t = [call(w, "mset", "u:2", "x", "u:1", "y", "v:1", "z")]
        t += [read_values(a, 1), read_values(b, 1), read_values(sub, 1)]
        # b's own write reaches the others, not b (NOLOOP).
        t += [call(b, "set", "u:3", "q"), read_values(a, 1), read_values(sub, 1)]
        t += [call(a, "ping"), call(b, "ping"), call(sub, "ping")]
        return t

    t = both(server, oracle, script)
    assert t[1] == t[2] == b">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\nu:1\r\n$3\r\nu:2\r\n"
    assert t[3] == (b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
                    b"*2\r\n$3\r\nu:1\r\n$3\r\nu:2\r\n")
    assert t[4] == b"+OK\r\n" and t[8] == PONG


def test_monitor_lines_both_encoders_and_reply_off(server, oracle):
    """MONITOR lines are status lines in RESP2 and RESP3 alike; CLIENT REPLY
    OFF on a monitor drops them (they are replies, not pushes)."""
    def until(m, marker):
        out = []
        while True:
            v = read_values(m, 1)
            out.append(v)
            if marker in v:
                return b"".join(out)

    def script(srv):
        m2 = srv.connect()
        m3 = resp3(srv)
        off = srv.connect()
        for m in (m2, m3, off):
            assert call(m, "monitor") == b"+OK\r\n"
        off.send(enc("client", "reply", "off"))
        c = srv.connect()
        call(c, "set", "k", "v")
        call(c, "get", "k")
        call(srv.connect(), "echo", "end")
        t = [monitor_lines(until(m2, b'"end"')), monitor_lines(until(m3, b'"end"'))]
        # Replies back on: its +OK, then the lines from there on; nothing
        # of what ran while they were off.
        off.send(enc("client", "reply", "on"))
        t.append(read_values(off, 1))
        t.append(monitor_lines(until(off, b'"reply" "on"')))
        return t

    t = both(server, oracle, script)
    assert t[0] == t[1]
    assert [a for _, _, a in t[0]][-4:] == [b'"client" "reply" "off"', b'"set" "k" "v"', b'"get" "k"',
                                            b'"echo" "end"']
    assert t[2] == b"+OK\r\n"
    assert [a for _, _, a in t[3]] == [b'"client" "reply" "on"']
