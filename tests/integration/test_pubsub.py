"""Pub/sub: SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE and their UNSUBSCRIBE forms,
PUBLISH / SPUBLISH, PUBSUB introspection, RESP2 subscribed mode, RESP3 push
messages and the pubsub output-buffer limit.

Each differential test runs the same script against Cairn and redis-server
7.0.15 over raw sockets and compares the bytes.  Where Redis's order is a
hash order (channel lists, UNSUBSCRIBE of all channels, delivery order
across matching patterns) the test compares sorted values instead.
"""
import re

from pubsub_helpers import call, enc, read_values, split_values
from waithelp import wait_for as wait_until

CANT = (b"-ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
        b"QUIT / RESET are allowed in this context\r\n")


def both(server, oracle, script):
    got, want = script(server), script(oracle)
    assert got == want
    return got


def test_subscribe_confirmations_resp2(server, oracle):
    def script(srv):
        c = srv.connect()
        t = [call(c, "unsubscribe"), call(c, "punsubscribe"), call(c, "sunsubscribe")]
        c.send(enc("subscribe", "a", "b", "a"))
        t.append(read_values(c, 3))
        c.send(enc("psubscribe", "p*", "q?"))
        t.append(read_values(c, 2))
        c.send(enc("ssubscribe", "s1", "s2"))
        t.append(read_values(c, 2))          # shard counts are separate
        c.send(enc("unsubscribe", "b", "nope"))
        t.append(read_values(c, 2))
        c.send(enc("sunsubscribe", "s1"))
        t.append(read_values(c, 1))
        c.send(enc("punsubscribe"))          # all patterns, subscription order
        t.append(read_values(c, 2))
        c.send(enc("unsubscribe"))           # the last channel
        t.append(read_values(c, 1))
        t.append(call(c, "ping"))            # still subscribed to s2: pong array
        c.send(enc("sunsubscribe"))
        t.append(read_values(c, 1))
        t.append(call(c, "ping"))            # nothing left: +PONG
        t.append(call(c, "get", "x"))
        return t

    t = both(server, oracle, script)
    assert t[0] == b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
    assert t[-2] == b"+PONG\r\n"


def test_subscribe_confirmations_resp3(server, oracle):
    def script(srv):
        c = srv.connect()
        call(c, "hello", "3")
        t = [call(c, "unsubscribe"), call(c, "sunsubscribe")]
        c.send(enc("subscribe", "a", "a"))
        t.append(read_values(c, 2))
        c.send(enc("psubscribe", "x*"))
        t.append(read_values(c, 1))
        t.append(call(c, "set", "k", "v"))   # RESP3: any command while subscribed
        t.append(call(c, "get", "k"))
        t.append(call(c, "ping"))
        c.send(enc("unsubscribe", "a", "a"))
        t.append(read_values(c, 2))
        return t

    t = both(server, oracle, script)
    assert t[0] == b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"
    assert t[6] == b"+PONG\r\n"


def test_publish_receivers_and_message_shapes(server, oracle):
    def script(srv):
        s2 = srv.connect()
        s2.send(enc("subscribe", "news", "other"))
        read_values(s2, 2)
        p2 = srv.connect()
        p2.send(enc("psubscribe", "n*"))
        read_values(p2, 1)
        s3 = srv.connect()
        call(s3, "hello", "3")
        s3.send(enc("subscribe", "news"))
        read_values(s3, 1)
        p3 = srv.connect()
        call(p3, "hello", "3")
        p3.send(enc("psubscribe", "n[e]w?"))
        read_values(p3, 1)
        sh = srv.connect()
        sh.send(enc("ssubscribe", "news"))
        read_values(sh, 1)
        pub = srv.connect()
        t = [call(pub, "publish", "news", "hello\x00\r\nworld"),
             call(pub, "publish", "nothing", "x"),     # pattern n* only
             call(pub, "publish", "zzz", "x"),         # nobody
             call(pub, "spublish", "news", "shard!"),  # shard subscribers only
             call(pub, "spublish", "other", "x")]
        t.append(read_values(s2, 1))
        t.append(read_values(p2, 2))
        t.append(read_values(s3, 1))
        t.append(read_values(p3, 1))
        t.append(read_values(sh, 1))
        # Nothing else was delivered: the next value is a PING reply.
        for c in (s2, p2, sh):
            t.append(call(c, "ping"))
        t.append(call(s3, "ping"))
        return t

    t = both(server, oracle, script)
    assert t[:5] == [b":4\r\n", b":1\r\n", b":0\r\n", b":1\r\n", b":0\r\n"]


def test_channel_and_matching_patterns_all_deliver(server, oracle):
    """One client on a channel and two matching patterns gets three copies:
    the message first, then one pmessage per pattern (their order is a hash
    order in Redis, so compared as a set)."""
    def script(srv):
        c = srv.connect()
        c.send(enc("subscribe", "chan"))
        c.send(enc("psubscribe", "c*", "*", "x*"))
        read_values(c, 4)
        pub = srv.connect()
        n = call(pub, "publish", "chan", "m")
        got = split_values(read_values(c, 3))
        return [n, got[0], sorted(got[1:])]

    t = both(server, oracle, script)
    assert t[0] == b":3\r\n"


def test_subscribed_mode_restrictions_resp2(server, oracle):
    def script(srv):
        c = srv.connect()
        c.send(enc("subscribe", "ch"))
        t = [read_values(c, 1)]
        for cmd in (("get", "x"), ("client", "id"), ("set", "a", "b"), ("publish", "ch", "m"),
                    ("pubsub", "numsub", "ch"), ("ping",), ("ping", "hi"), ("set", "a"),
                    ("nosuchcmd",), ("config", "get", "x")):
            t.append(call(c, *cmd))
        c.send(enc("psubscribe", "c*"))
        t.append(read_values(c, 1))
        t.append(call(c, "reset"))
        t.append(call(c, "get", "x"))     # RESET left subscribed mode
        t.append(call(srv.connect(), "pubsub", "numsub", "ch"))
        t.append(call(srv.connect(), "pubsub", "numpat"))
        c.send(enc("ssubscribe", "s"))
        t.append(read_values(c, 1))
        t.append(call(c, "echo", "x"))    # shard subscriptions count too
        t.append(call(c, "quit"))
        t.append(c.is_closed())
        return t

    t = both(server, oracle, script)
    assert t[1] == CANT % b"get"
    assert t[2] == CANT % b"client|id"


def test_errors_and_pubsub_subcommands(server, oracle):
    def script(srv):
        a = srv.connect()
        a.send(enc("subscribe", "ch1", "ch2", "other"))
        read_values(a, 3)
        b = srv.connect()
        b.send(enc("subscribe", "ch1"))
        b.send(enc("psubscribe", "ch*", "ch*", "x"))
        read_values(b, 4)
        a.send(enc("ssubscribe", "sh1", "sh2"))
        read_values(a, 2)
        c = srv.connect()
        t = [sorted(call(c, "pubsub", "channels").split(b"\r\n")),
             sorted(call(c, "pubsub", "channels", "ch*").split(b"\r\n")),
             call(c, "pubsub", "channels", "nomatch*"),
             call(c, "pubsub", "numsub"),
             call(c, "pubsub", "numsub", "ch1", "ch2", "none", "ch1"),
             call(c, "pubsub", "numpat"),
             sorted(call(c, "pubsub", "shardchannels").split(b"\r\n")),
             call(c, "pubsub", "shardchannels", "*2"),
             call(c, "pubsub", "shardnumsub", "sh1", "ch1"),
             call(c, "pubsub", "help"),
             call(c, "pubsub", "channels", "a", "b"),
             call(c, "pubsub", "numpat", "x"),
             call(c, "pubsub", "nosuch"),
             call(c, "pubsub"),
             call(c, "publish", "a"),
             call(c, "spublish", "a", "b", "c"),
             call(c, "subscribe"),
             call(c, "psubscribe"),
             call(c, "ssubscribe")]
        call(c, "hello", "3")
        t.append(call(c, "pubsub", "numsub", "ch1"))   # an array in RESP3 too
        a.close()                                       # a disconnect unsubscribes
        wait_until(lambda: call(c, "pubsub", "numsub", "other").endswith(b":0\r\n"))
        t.append(call(c, "pubsub", "numsub", "ch1", "ch2"))
        t.append(call(c, "pubsub", "shardnumsub", "sh1"))
        b.send(enc("punsubscribe", "ch*"))
        read_values(b, 1)
        t.append(call(c, "pubsub", "numpat"))
        return t

    both(server, oracle, script)


def test_unsubscribe_all_reports_each_channel(server, oracle):
    def script(srv):
        c = srv.connect()
        chans = ["c%d" % i for i in range(20)]
        c.send(enc("subscribe", *chans))
        read_values(c, 20)
        c.send(enc("psubscribe", *["p%d*" % i for i in range(12)]))
        read_values(c, 12)
        c.send(enc("punsubscribe"))
        pats = split_values(read_values(c, 12))    # subscription order
        c.send(enc("unsubscribe"))
        vals = split_values(read_values(c, 20))
        names = sorted(re.findall(rb"\r\n\$\d+\r\n(c\d+)\r\n", b"".join(vals)))
        counts = [v.rsplit(b":", 1)[1] for v in vals]   # 19 .. 0 in reply order
        return [pats, names, counts, call(c, "ping")]

    both(server, oracle, script)


def test_info_and_client_list_fields(server, oracle):
    def script(srv):
        a = srv.connect()
        a.send(enc("subscribe", "x", "y"))
        a.send(enc("psubscribe", "z*"))
        a.send(enc("ssubscribe", "s"))
        read_values(a, 4)
        b = srv.connect()
        b.send(enc("psubscribe", "z*", "w*"))
        read_values(b, 2)
        c = srv.client()
        info = c.info("stats")
        fields = [info["pubsub_channels"], info["pubsub_patterns"], info["pubsubshard_channels"]]
        lines = c.client_list(_type="pubsub")
        flags = sorted((l["flags"], l["sub"], l["psub"], l["ssub"]) for l in lines)
        normal = [(l["flags"], l["sub"]) for l in c.client_list(_type="normal")]
        return fields, flags, normal

    fields, flags, normal = both(server, oracle, script)
    assert fields == [2, 2, 1]
    assert flags == [("P", "0", "2", "0"), ("P", "2", "1", "1")]


def test_slow_subscriber_hits_pubsub_limit_alone(start_server, start_oracle):
    """A subscriber that never reads is disconnected at the pubsub
    client-output-buffer-limit; a reading subscriber and a normal client
    carry on and receive everything."""
    msg = "m" * 16384
    for start in (start_server, start_oracle):
        srv = start(client_output_buffer_limit="pubsub 1mb 0 0")
        slow = srv.connect()
        slow.send(enc("client", "setname", "slow"))
        read_values(slow, 1)
        slow.send(enc("subscribe", "feed"))
        read_values(slow, 1)
        fast = srv.connect()
        fast.send(enc("subscribe", "feed"))
        read_values(fast, 1)
        pub = srv.client()
        sent, dropped = 0, False
        for _ in range(400):                 # at most 400 x 10 x 16 KB
            p = pub.pipeline(transaction=False)
            for _ in range(10):
                p.publish("feed", msg)
            receivers = p.execute()
            sent += 10
            for _ in range(10):
                v = read_values(fast, 1)
                assert v.endswith(b"$16384\r\n" + msg.encode() + b"\r\n")
            if receivers[-1] == 1:
                dropped = True
                break
        assert dropped, "the slow subscriber was never disconnected"
        names = [l["name"] for l in pub.client_list()]
        assert "slow" not in names
        assert pub.ping()
        assert pub.publish("feed", "after") == 1
        assert read_values(fast, 1).endswith(b"$5\r\nafter\r\n")
        assert slow.is_closed()


def test_many_subscribers_leave_in_any_order(server, oracle):
    """Subscribers leave by UNSUBSCRIBE, RESET and disconnect in an
    interleaved order; every remaining one still gets each message once."""
    def script(srv):
        subs = []
        for i in range(30):
            s = srv.connect()
            s.send(enc("subscribe", "room", "side%d" % (i % 3)))
            read_values(s, 2)
            subs.append(s)
        pub = srv.connect()
        t = [call(pub, "publish", "room", "first")]
        for i, s in enumerate(subs):
            t.append(read_values(s, 1))
        gone = set()
        for i in (3, 17, 0, 29, 8, 22, 11):
            if i % 3 == 0:
                s = subs[i]
                s.send(enc("unsubscribe", "room"))
                t.append(read_values(s, 1))
            elif i % 3 == 1:
                t.append(call(subs[i], "reset"))
            else:
                subs[i].close()
            gone.add(i)
        wait_until(lambda: call(pub, "pubsub", "numsub", "room") == b"*2\r\n$4\r\nroom\r\n:23\r\n")
        t.append(call(pub, "publish", "room", "second"))
        t.append(call(pub, "pubsub", "numsub", "side0", "side1", "side2"))
        for i, s in enumerate(subs):
            if i not in gone:
                t.append(read_values(s, 1))
                t.append(call(s, "ping"))
        return t

    t = both(server, oracle, script)
    assert t[0] == b":30\r\n"
