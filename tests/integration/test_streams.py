"""Streams against redis-server 7.0.15: every command form and error text
(raw replies compared byte for byte in RESP2 and RESP3), blocking XREAD /
XREADGROUP with several clients (order, timeouts, disconnects, a group or
key deleted while blocked, CLIENT UNBLOCK, MULTI and scripts), keyspace
events, and RDB / DUMP interchange both ways.  Replies that hold times
(idle, delivery and seen times) are compared after masking them; nothing
else depends on timing: a blocked client is waited for in CLIENT LIST."""
import os
import re
import shutil

import pytest

from listhelp import Conn, diff, wait_blocked
from waithelp import wait_for

FORMS = [
    # XADD: IDs, options, errors
    "XADD s 1-1 a 1 b 2", "XADD s 1-2 a 3 b 4", "XADD s 2-* c 5", "XADD s 2-* c 6", "XADD s 3 x y",
    "XADD s 3-0 x y", "XADD s 0-0 x y", "XADD s2 0-0 x y", "XADD s 1-1 a", "XADD s 1-1", "XADD s bad a 1",
    "XADD s 18446744073709551615-18446744073709551615 a 1", "XADD s 18446744073709551615-* a 1",
    "XADD s NOMKSTREAM 18446744073709551615-18446744073709551615 a 1", "XADD nokey NOMKSTREAM 1-1 a 1",
    "XADD t MAXLEN 2 1-1 a 1", "XADD t MAXLEN = 2 2-1 a 1", "XADD t MAXLEN ~ 2 3-1 a 1",
    "XADD t MAXLEN ~ 2 LIMIT 5 4-1 a 1", "XADD t MAXLEN 2 LIMIT 5 5-1 a 1", "XADD t MINID 3 6-1 a 1",
    "XADD t MAXLEN -1 7-1 a 1", "XADD t MAXLEN x 7-1 a 1", "XADD t MAXLEN 1 MINID 1 7-1 a 1",
    "XADD t LIMIT 1 7-1 a 1", "XADD t LIMIT -1 7-1 a 1", "XADD t MINID bad 7-1 a 1", "XADD t 18446744073709551616-1 a 1",
    "XADD t (7-1 a 1", "XADD t 7-1 a 1 b",
    # XRANGE / XREVRANGE
    "XRANGE s - +", "XRANGE s - + COUNT 2", "XRANGE s (1-1 +", "XRANGE s - (2-1", "XRANGE s 2 2",
    "XRANGE s - + COUNT 0", "XRANGE s - + COUNT -1", "XRANGE s - + COUNT x", "XRANGE s - + FOO 1",
    "XRANGE s (18446744073709551615-18446744073709551615 +", "XRANGE s - (0-0", "XRANGE s (- +",
    "XRANGE nokey - + COUNT 0", "XREVRANGE s + -", "XREVRANGE s + - COUNT 1", "XREVRANGE s (3-0 (1-1",
    "XRANGE s x +", "XRANGE s 5 1",
    # XLEN, XDEL, XTRIM
    "XLEN s", "XLEN nokey", "XDEL s 1-2 9-9", "XDEL s bad", "XDEL nokey 1-1", "XLEN s",
    "XTRIM s MAXLEN 10", "XTRIM s MAXLEN ~ 1", "XTRIM s MINID = 2-1", "XTRIM s", "XTRIM s FOO 1",
    "XTRIM s MAXLEN 1 LIMIT 10", "XTRIM nokey MAXLEN 0", "XRANGE s - +",
    # XREAD (no blocking)
    "XREAD STREAMS s 0", "XREAD COUNT 1 STREAMS s t 0 0", "XREAD STREAMS s $", "XREAD STREAMS s",
    "XREAD STREAMS s t 0", "XREAD GROUP g c STREAMS s 0", "XREAD NOACK STREAMS s 0", "XREAD STREAMS s >",
    "XREAD COUNT x STREAMS s 0", "XREAD BLOCK -1 STREAMS s 0", "XREAD BLOCK x STREAMS s 0", "XREAD STREAMS nokey 0",
    "XREAD FOO STREAMS s 0",
    # groups
    "XGROUP CREATE s g 0", "XGROUP CREATE s g 0", "XGROUP CREATE nokey g 0", "XGROUP CREATE nokey g $ MKSTREAM",
    "XGROUP CREATE s g2 $ ENTRIESREAD 1", "XGROUP CREATE s g3 0 ENTRIESREAD -2", "XGROUP CREATE s g3 0 FOO",
    "XGROUP CREATE s g4 bad", "XGROUP SETID s nog 0", "XGROUP SETID s g2 0 ENTRIESREAD 0", "XGROUP SETID s g2 $",
    "XGROUP SETID s g2 0 1", "XGROUP CREATECONSUMER s g alice", "XGROUP CREATECONSUMER s g alice",
    "XGROUP CREATECONSUMER s nog x", "XGROUP DELCONSUMER s g nobody", "XGROUP HELP", "XGROUP FOO", "XGROUP CREATE s",
    "XREADGROUP GROUP g bob COUNT 1 STREAMS s >", "XREADGROUP GROUP g bob STREAMS s >",
    "XREADGROUP GROUP g bob STREAMS s 0", "XREADGROUP GROUP g bob STREAMS s $", "XREADGROUP GROUP nog bob STREAMS s >",
    "XREADGROUP GROUP g bob STREAMS nokey >", "XREADGROUP STREAMS s >", "XREADGROUP GROUP g bob NOACK STREAMS s 0",
    "XREADGROUP GROUP g2 carol NOACK STREAMS s >", "XREADGROUP GROUP g bob STREAMS s t > >",
    "XACK s g 1-1 9-9", "XACK s g bad", "XACK s nog 1-1", "XACK nokey g 1-1",
    "XPENDING s g", "XPENDING s g2", "XPENDING s nog", "XPENDING s g - + 0", "XPENDING s g - + 10 nobody",
    "XPENDING s g IDLE 1000000000 - + 10", "XPENDING s g - +", "XPENDING s g IDLE x - + 1", "XPENDING s g x + 1",
    "XPENDING s g - + x",
    "XCLAIM s g dave 1000000000 2-0 2-1", "XCLAIM s g dave 0 2-0 JUSTID", "XCLAIM s g dave 0 3-0 RETRYCOUNT 5",
    "XCLAIM s g dave 0 3-0 FORCE JUSTID", "XCLAIM s g dave 0 1-1 FORCE", "XCLAIM s g dave x 1-1", "XCLAIM s g dave 0 1-1 FOO",
    "XCLAIM s g dave 0 1-1 IDLE x", "XCLAIM s g dave 0 1-1 TIME x", "XCLAIM s g dave 0 1-1 RETRYCOUNT x",
    "XCLAIM s g dave 0 1-1 LASTID bad", "XCLAIM s nog dave 0 1-1", "XCLAIM s g dave 0 1-1 LASTID 9-9 JUSTID",
    "XAUTOCLAIM s g erin 0 0 COUNT 1", "XAUTOCLAIM s g erin 0 0 JUSTID", "XAUTOCLAIM s g erin 1000000000 0",
    "XAUTOCLAIM s g erin 0 0 COUNT 0", "XAUTOCLAIM s g erin x 0", "XAUTOCLAIM s g erin 0 bad", "XAUTOCLAIM s nog e 0 0",
    "XAUTOCLAIM s g erin 0 0 FOO", "XAUTOCLAIM s g erin 0 (18446744073709551615-18446744073709551615",
    "XDEL s 3-0", "XAUTOCLAIM s g erin 0 0",
    "XINFO STREAM s", "XINFO STREAM nokey", "XINFO STREAM s FOO", "XINFO STREAM s FULL COUNT", "XINFO GROUPS s",
    "XINFO HELP", "XINFO FOO s", "XINFO GROUPS nokey", "XINFO CONSUMERS s nog",
    "XGROUP DELCONSUMER s g dave", "XGROUP DESTROY s g2", "XGROUP DESTROY s g2", "XGROUP DESTROY nokey g",
    # XSETID
    "XSETID s 1-0", "XSETID s 99-0", "XSETID s 100-0 ENTRIESADDED 1", "XSETID s 100-0 ENTRIESADDED -1",
    "XSETID s 100-0 MAXDELETEDID 200-0", "XSETID s 100-0 ENTRIESADDED 50 MAXDELETEDID 10-0", "XSETID nokey 1-1",
    "XSETID s bad", "XSETID s 101-0 FOO", "XINFO STREAM s",
    # types and generic commands
    "TYPE s", "OBJECT ENCODING s", "SCAN 0 TYPE stream MATCH s", "SCAN 0 TYPE string MATCH s", "SORT s", "SORT_RO s", "SET str x", "XADD str 1-1 a 1",
    "XRANGE str - +", "XLEN str", "XREAD STREAMS str 0", "XINFO STREAM str", "XGROUP CREATE str g 0",
    "COPY s s3", "XRANGE s3 - +", "RENAME s3 s4", "XLEN s4", "DEL s4", "XADD e 1-1 a 1", "XDEL e 1-1",
    "XLEN e", "EXISTS e", "XINFO STREAM e",
]

TIMES = re.compile(rb"(idle\r\n:|\r\n:)(\d{10,})")


def mask(replies):
    """Absolute times (13-digit ms) and the idle values after 'idle'."""
    out = []
    for r in replies:
        if not isinstance(r, bytes):
            out.append(r)
            continue
        r = re.sub(rb":1\d{12}\r\n", b":<time>\r\n", r)
        r = re.sub(rb"(\$4\r\nidle\r\n):\d+", rb"\1:<idle>", r)
        r = re.sub(rb"(\$\d+\r\n[^\r]*\r\n\$\d+\r\n[^\r]*\r\n):\d+(\r\n:\d+\r\n)", rb"\1:<idle>\2", r)
        out.append(r)
    return out


def both_masked(server, oracle, cmds, resp=2):
    a, b = Conn(server, resp), Conn(oracle, resp)
    try:
        got, exp = mask(a.run(cmds)), mask(b.run(cmds))
    finally:
        a.close()
        b.close()
    bad = [(c, g, e) for c, g, e in zip(cmds, got, exp) if g != e]
    assert not bad, "%d mismatches:\n%s" % (
        len(bad), "\n".join("%r: cairn %r, redis %r" % m for m in bad[:10]))


@pytest.mark.parametrize("resp", [2, 3])
def test_every_form_matches_oracle(server, oracle, resp):
    both_masked(server, oracle, FORMS, resp)


def test_xinfo_full_and_consumers_match_oracle(server, oracle):
    cmds = ["CONFIG SET stream-node-max-entries 3"]
    cmds += ["XADD s %d-%d f %d g v%d" % (i, i % 3, i, i) for i in range(1, 30)]
    cmds += ["XDEL s 4-1 5-2 20-2", "XGROUP CREATE s g 0", "XGROUP CREATE s h 10-0",
             "XREADGROUP GROUP g a COUNT 5 STREAMS s >", "XREADGROUP GROUP g b COUNT 3 STREAMS s >",
             "XREADGROUP GROUP h a STREAMS s >", "XACK s g 1-1 2-2", "XINFO STREAM s", "XINFO STREAM s FULL",
             "XINFO STREAM s FULL COUNT 2", "XINFO STREAM s FULL COUNT 0", "XINFO GROUPS s", "XINFO CONSUMERS s g",
             "XPENDING s g", "XPENDING s g - + 10", "XPENDING s g - + 10 b", "XTRIM s MINID ~ 12",
             "XINFO STREAM s", "XTRIM s MAXLEN 3", "XINFO STREAM s", "XINFO GROUPS s",
             "CONFIG SET stream-node-max-entries 100"]
    for resp in (2, 3):
        both_masked(server, oracle, ["FLUSHALL"] + cmds, resp)


def test_node_limits_and_radix_tree_counts(server, oracle):
    cmds = []
    for limit, size in (("1", "4096"), ("7", "4096"), ("100", "40"), ("0", "200")):
        cmds += ["DEL s", "CONFIG SET stream-node-max-entries " + limit, "CONFIG SET stream-node-max-bytes " + size]
        cmds += ["XADD s %d-0 field%d %s" % (i * 37, i % 3, "x" * (i % 50)) for i in range(1, 300)]
        cmds += ["XINFO STREAM s", "XDEL s 37-0 74-0 370-0", "XTRIM s MAXLEN ~ 250", "XINFO STREAM s",
                 "XTRIM s MINID 5000", "XINFO STREAM s", "XREVRANGE s + - COUNT 7", "XRANGE s (5550-0 + COUNT 3"]
    cmds += ["CONFIG SET stream-node-max-entries 100", "CONFIG SET stream-node-max-bytes 4096"]
    diff(server, oracle, cmds)


def test_pipelined_replies_across_the_output_buffer(server, oracle):
    """Deferred-length replies (XRANGE, XREVRANGE, XINFO FULL, XREADGROUP)
    pipelined so that they start anywhere in the client's 16 KB output
    buffer and run past it, nested ones included, in RESP2 and RESP3."""
    setup = ["XADD s %d-1 f%d %s g %d" % (i, i % 4, "v" * (i * 7 % 300), i) for i in range(1, 400)]
    setup += ["XGROUP CREATE s g 0"]
    cmds = []
    for n in range(1, 120, 7):
        cmds += ["XRANGE s - + COUNT %d" % n, "XREVRANGE s + - COUNT %d" % (n + 3), "PING"]
    cmds += ["XRANGE s - +", "XINFO STREAM s FULL COUNT 50", "XREADGROUP GROUP g c COUNT 150 STREAMS s >",
             "XRANGE s (10-1 + COUNT 90", "XINFO STREAM s FULL", "XREVRANGE s + -"]
    for resp in (2, 3):
        both_masked(server, oracle, ["FLUSHALL"] + setup + cmds + cmds[::-1], resp)


def test_multi_stream_reads_across_the_output_buffer(server, oracle):
    """XREAD and XREADGROUP over several streams: the array of streams and
    each stream's entries are both deferred lengths, the second nested in
    the first; pipelined so that they start anywhere in the 16 KB output
    buffer and run past it, in RESP2 and RESP3."""
    setup = []
    for k in range(4):
        setup += ["XADD s%d %d-1 f %s" % (k, i, "v" * (1 + (i * 37 + k * 11) % 900)) for i in range(1, 70)]
        setup += ["XGROUP CREATE s%d g 0" % k]
    cmds = []
    for count in (1, 2, 5, 30, 70):
        for nst in (1, 2, 4):
            keys = " ".join("s%d" % k for k in range(nst))
            cmds += ["XREAD COUNT %d STREAMS %s %s" % (count, keys, " ".join(["0"] * nst)),
                     "XREADGROUP GROUP g c%d COUNT %d STREAMS %s %s" % (count, count, keys, " ".join([">"] * nst)),
                     "XREADGROUP GROUP g c%d COUNT %d STREAMS %s %s" % (count, count, keys, " ".join(["0"] * nst)),
                     "PING"]
    for resp in (2, 3):
        both_masked(server, oracle, ["FLUSHALL"] + setup + cmds, resp)


def test_compressed_nodes_change_and_dump_as_redis(server, oracle):
    """Closed nodes are compressed in Cairn's memory: deletes and exact
    trims inside them, an append into a compressed tail (its newer nodes
    deleted, then a larger entry limit), reads across them, COPY, and DUMP
    payloads (taken without a group: its PEL holds delivery times), all as
    Redis answers."""
    cmds = ["CONFIG SET stream-node-max-entries 10"]
    cmds += ["XADD s %d-0 f v%d g %s" % (i, i % 7, "x" * (i % 30)) for i in range(1, 201)]
    cmds += ["DUMP s", "XDEL s 15-0 16-0", "XRANGE s 10 30", "XREVRANGE s 40 1 COUNT 20", "XLEN s",
             "XGROUP CREATE s g 0", "XREADGROUP GROUP g c COUNT 25 STREAMS s >",
             "XDEL s " + " ".join("%d-0" % i for i in range(191, 201)), "XINFO STREAM s",
             "CONFIG SET stream-node-max-entries 20", "XADD s 201-0 f v g y", "XADD s 202-0 h z",
             "XRANGE s 185 +", "XREVRANGE s + 180", "XTRIM s MAXLEN 150", "XRANGE s - + COUNT 3",
             "XTRIM s MINID ~ 100-0", "XRANGE s - + COUNT 2", "XINFO STREAM s",
             "XGROUP DESTROY s g", "DUMP s", "COPY s s2",
             "XRANGE s2 95 130", "DUMP s2", "XDEL s2 99-0", "XRANGE s2 95 105", "XRANGE s 95 105",
             "XINFO STREAM s FULL COUNT 5", "CONFIG SET stream-node-max-entries 100"]
    both_masked(server, oracle, ["FLUSHALL"] + cmds)


# --- blocking ---

def clients(srv, n, resp=2):
    out = []
    for _ in range(n):
        c = Conn(srv, resp)
        c.cid = c.client_id()
        out.append(c)
    return out


def block(ctl, conn, *cmd):
    conn.send(list(cmd))
    wait_blocked(ctl, conn.cid, cmd[0].lower())


def both(server, oracle, scenario):
    got, exp = scenario(server), scenario(oracle)
    assert mask(got) == mask(exp)
    return exp


def test_blocked_readers_served_in_order(server, oracle):
    def run(srv):
        ctl, a, b, c = clients(srv, 4)
        ctl.call("XADD", "s", "1-0", "a", "1")
        block(ctl, a, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        block(ctl, b, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "other", "s", "0", "1-0")
        block(ctl, c, "XREAD", "BLOCK", "0", "STREAMS", "s", "5-0")
        r = [ctl.call("XADD", "s", "2-0", "b", "2"), a.read(), b.read(), c.pending()]
        r += [ctl.call("XADD", "s", "6-0", "c", "3"), c.read()]
        # one XADD in a transaction wakes each reader once, after EXEC
        block(ctl, a, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r += ctl.run(["MULTI", "XADD s 7-0 d 4", "XADD s 8-0 e 5", "EXEC"])
        r += [a.read()]
        return r
    both(server, oracle, run)


def test_timeouts_and_unblock(server, oracle):
    def run(srv):
        r = []
        for resp in (2, 3):
            ctl, a = clients(srv, 2, resp)
            r += [a.call("XREAD", "BLOCK", "10", "STREAMS", "s", "$"),
                  a.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "nokey", ">")]
            ctl.call("XGROUP", "CREATE", "q%d" % resp, "g", "$", "MKSTREAM")
            r.append(a.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "q%d" % resp, ">"))
            block(ctl, a, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
            r += [ctl.call("CLIENT", "UNBLOCK", str(a.cid)), a.read()]
            block(ctl, a, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
            r += [ctl.call("CLIENT", "UNBLOCK", str(a.cid), "ERROR"), a.read(), a.call("PING")]
        return r
    both(server, oracle, run)


def test_group_readers_and_deleted_group_or_key(server, oracle):
    def run(srv):
        ctl, a, b, c = clients(srv, 4)
        ctl.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        block(ctl, a, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        block(ctl, b, "XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">")
        r = [ctl.call("XINFO", "GROUPS", "s"), ctl.call("XADD", "s", "1-0", "a", "1"), a.read(), b.pending()]
        r += [ctl.call("XADD", "s", "2-0", "b", "2"), b.read(), ctl.call("XPENDING", "s", "g")]
        block(ctl, a, "XREADGROUP", "GROUP", "g", "alice", "NOACK", "BLOCK", "0", "STREAMS", "s", ">")
        r += [ctl.call("XADD", "s", "3-0", "c", "3"), a.read(), ctl.call("XPENDING", "s", "g")]
        # the group goes: NOGROUP; the key goes: UNBLOCKED
        block(ctl, a, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        r += [ctl.call("XGROUP", "DESTROY", "s", "g"), a.read()]
        ctl.call("XGROUP", "CREATE", "s", "g", "$")
        block(ctl, a, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        block(ctl, c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r += [ctl.call("DEL", "s"), a.read(), c.pending(), ctl.call("XADD", "s", "1-0", "x", "y"),
              c.pending(), ctl.call("XADD", "s", "9-0", "x", "y"), c.read()]
        ctl.call("XGROUP", "CREATE", "s", "g", "$")
        block(ctl, a, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        r += [ctl.call("SET", "s", "string"), a.read()]
        return r
    both(server, oracle, run)


def test_disconnect_while_blocked(server, oracle):
    def run(srv):
        ctl, a, b = clients(srv, 3)
        ctl.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        block(ctl, a, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        a.close()
        block(ctl, b, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
        r = [ctl.call("XADD", "s", "1-0", "a", "1"), b.read(), ctl.call("XPENDING", "s", "g"),
             ctl.call("INFO", "clients").count(b"blocked_clients:0")]
        return r
    both(server, oracle, run)


def test_no_blocking_inside_multi_or_scripts(server, oracle):
    def run(srv):
        (a,) = clients(srv, 1)
        r = a.run(["MULTI", "XREAD BLOCK 0 STREAMS s $", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", "EXEC"])
        r.append(a.call("EVAL", "return redis.pcall('XREAD','BLOCK','0','STREAMS','s','$')", "0"))
        r.append(a.call("EVAL", "return redis.pcall('xread','STREAMS','s','0')", "0"))
        r.append(a.call("EVAL", "return redis.pcall('XADD','s','MAXLEN','5','LIMIT','5','1-1','a','b')", "0"))
        r.append(a.call("EVAL", "return redis.pcall('XADD','s','MAXLEN','~','5','LIMIT','5','1-1','a','b')", "0"))
        return r
    both(server, oracle, run)


def test_keyspace_events(server, oracle):
    cmds = ["XADD s 1-0 a 1", "XADD s MAXLEN 1 2-0 a 1", "XDEL s 2-0", "XADD s 3-0 a 1", "XTRIM s MAXLEN 0",
            "XGROUP CREATE s g 0", "XGROUP CREATECONSUMER s g c", "XGROUP SETID s g 0", "XGROUP DELCONSUMER s g c",
            "XADD s 4-0 a 1", "XREADGROUP GROUP g new STREAMS s >", "XGROUP DESTROY s g", "XSETID s 9-0", "DEL s"]

    def run(srv):
        ctl, sub = clients(srv, 2)
        ctl.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub.call("PSUBSCRIBE", "__keyevent@0__:*")
        for c in cmds:
            ctl.run([c])
        ctl.call("PING")
        out = []
        while sub.pending(0.3):
            try:
                out.append(sub.read())
            except EOFError:
                break
            if len(out) > 50:
                break
        ctl.call("CONFIG", "SET", "notify-keyspace-events", "")
        return out
    both(server, oracle, run)


# --- persistence ---

@pytest.fixture
def dbg_pair(start_server, start_oracle):
    return start_server(enable_debug_command="yes"), start_oracle(enable_debug_command="yes")


def test_dump_restore_both_ways(dbg_pair):
    server, oracle = dbg_pair
    setup = ["CONFIG SET stream-node-max-entries 4"]
    setup += ["XADD s %d-%d f %d g %s" % (i, i % 5, i, "v" * i) if i % 4 else "XADD s %d-%d other %d" % (i, i % 5, i)
              for i in range(1, 40)]
    setup += ["XDEL s 7-2 8-3", "XGROUP CREATE s g1 0", "XGROUP CREATE s g2 $ ENTRIESREAD 5",
              "XREADGROUP GROUP g1 alice COUNT 6 STREAMS s >", "XREADGROUP GROUP g1 bob COUNT 3 STREAMS s >",
              "XACK s g1 1-1", "XGROUP CREATECONSUMER s g1 carol", "XADD empty 1-1 a 1", "XDEL empty 1-1",
              "CONFIG SET stream-node-max-entries 100"]
    for src, dst in ((server, oracle), (oracle, server)):
        a, b = src.client(), dst.client()
        a.flushall()
        b.flushall()
        for c in setup:
            a.execute_command(*c.split())
        for k in ("s", "empty"):
            payload = a.dump(k)
            b.restore(k, 0, payload)
            assert b.dump(k) == payload
            assert a.execute_command("DEBUG", "DIGEST-VALUE", k) == b.execute_command("DEBUG", "DIGEST-VALUE", k)
            assert a.xinfo_stream(k, full=True) == b.xinfo_stream(k, full=True)
        assert a.execute_command("DEBUG", "DIGEST") == b.execute_command("DEBUG", "DIGEST")


def test_rdb_file_both_ways(dbg_pair, start_server, start_oracle):
    server, oracle = dbg_pair
    for src, start_dst in ((server, start_oracle), (oracle, start_server)):
        a = src.client()
        a.flushall()
        for i in range(1, 500):
            a.xadd("s", {"k": i, "v": "x" * (i % 20)}, id="%d-1" % i)
        a.xgroup_create("s", "g", "0")
        a.xreadgroup("g", "c1", {"s": ">"}, count=10)
        a.xdel("s", "3-1")
        digest = a.execute_command("DEBUG", "DIGEST")
        info = a.xinfo_stream("s", full=True)
        a.save()
        path = os.path.join(a.config_get("dir")["dir"], a.config_get("dbfilename")["dbfilename"])
        dst = start_dst(enable_debug_command="yes")
        b = dst.client()
        ddir = b.config_get("dir")["dir"]
        shutil.copy(path, os.path.join(ddir, b.config_get("dbfilename")["dbfilename"]))
        b.execute_command("DEBUG", "RELOAD", "NOSAVE")
        assert b.execute_command("DEBUG", "DIGEST") == digest
        assert b.xinfo_stream("s", full=True) == info


def test_corrupt_payloads_never_crash(server):
    """Every single-byte change of a stream payload (CRC fixed up) is either
    refused with Redis's error or loads into a stream every read command
    can walk."""
    import random
    import redis
    from test_dump import crc64
    c = server.client()
    c.flushall()
    c.config_set("stream-node-max-entries", 2)
    for i in range(1, 6):
        c.xadd("s", {"a": i, "b": "x" * i} if i % 2 else {"z": i}, id="%d-%d" % (i, i))
    c.xdel("s", "3-3")
    c.xgroup_create("s", "g", "0")
    c.xreadgroup("g", "x", {"s": ">"}, count=2)
    c.xreadgroup("g", "y", {"s": ">"}, count=1)
    c.config_set("stream-node-max-entries", 100)
    body = c.dump("s")[:-10]
    rnd = random.Random(7)
    accepted = 0
    for pos in range(len(body)):
        for v in (rnd.randrange(256), body[pos] ^ 1, 0xff):
            bad = bytearray(body)
            bad[pos] = v
            data = bytes(bad) + b"\x0a\x00"
            payload = data + crc64(data).to_bytes(8, "little")
            c.delete("t")
            try:
                c.restore("t", 0, payload)
            except redis.ResponseError as e:
                assert "Bad data format" in str(e) or "payload version or checksum" in str(e)
                continue
            accepted += 1
            c.xinfo_stream("t", full=True)
            c.xrange("t")
            c.xrevrange("t")
            for g in c.xinfo_groups("t"):
                c.xpending("t", g["name"])
                c.xpending_range("t", g["name"], "-", "+", 10)
            c.dump("t")
    assert c.ping() and accepted > 0


# --- AOF ---

def _stream_writes(c):
    c.config_set("stream-node-max-entries", 4)
    for i in range(1, 30):
        c.xadd("s", {"f": i, "g": "v" * (i % 7)}, id="%d-%d" % (i, i % 3))
    c.xadd("s", {"x": 1}, id="40-*", maxlen=25, approximate=True)
    c.xdel("s", "3-0", "10-1")
    c.xgroup_create("s", "g1", "0")
    c.xgroup_create("s", "g2", "$")
    c.xreadgroup("g1", "alice", {"s": ">"}, count=5)
    c.xreadgroup("g1", "bob", {"s": ">"}, count=2, noack=True)
    c.xreadgroup("g1", "carol", {"s": ">"}, count=3)
    c.xack("s", "g1", "4-1")
    c.xclaim("s", "g1", "dave", 0, ["5-2"], idle=5000000000)
    c.xautoclaim("s", "g1", "erin", 0, "0", count=2)
    c.execute_command("XGROUP", "CREATECONSUMER", "s", "g2", "frank")
    c.execute_command("XGROUP", "SETID", "s", "g2", "7-1")
    c.xtrim("s", maxlen=20)
    c.xadd("empty", {"a": 1}, id="1-1")
    c.xdel("empty", "1-1")
    c.execute_command("XSETID", "empty", "5-5", "ENTRIESADDED", "3", "MAXDELETEDID", "2-2")


def _untimed(v):
    """Absolute times (a consumer's seen-time is the time it was loaded)
    replaced by 0."""
    if isinstance(v, list):
        return [_untimed(x) for x in v]
    if isinstance(v, int) and v > 10 ** 12:
        return 0
    return v


def _full(srv):
    c = srv.client()
    return [_untimed(c.execute_command("XINFO", "STREAM", k, "FULL")) for k in ("s", "empty")]


def _wait_rewrite(c):
    def done():
        p = c.info("persistence")
        return p["aof_rewrites"] >= 1 and p["aof_rewrite_in_progress"] == 0
    wait_for(done, timeout=20, what="the rewrite to finish")


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_aof_interchange_both_ways(start_server, start_oracle, preamble):
    cfg = dict(appendonly="yes", enable_debug_command="yes", aof_use_rdb_preamble=preamble)
    srvs = [start_server(**cfg), start_oracle(**cfg)]
    digests = []
    for srv in srvs:
        c = srv.client()
        _stream_writes(c)
        digests.append(c.execute_command("DEBUG", "DIGEST"))
        c.bgrewriteaof()
        _wait_rewrite(c)
        c.xadd("s", {"after": "rewrite"}, id="100-0")
        c.xreadgroup("g2", "frank", {"s": ">"})
    assert digests[0] == digests[1]
    digests = [srv.client().execute_command("DEBUG", "DIGEST") for srv in srvs]
    assert digests[0] == digests[1]
    for srv in srvs:
        srv.stop()
    # The files hold the same commands (times aside).
    files = []
    for srv in srvs:
        d = os.path.join(srv.tmp, "appendonlydir")
        names = sorted(n for n in os.listdir(d) if n.endswith(".aof") and (preamble == "no" or "incr" in n))
        # keys come in hash-table order: compare each file's commands sorted
        files.append([sorted(re.sub(rb"\$13\r\n1\d{12}\r\n", b"<time>", open(os.path.join(d, n), "rb").read())
                             .rstrip(b"\r\n").split(b"\r\n*")) for n in names])
    for a, b in zip(*files):
        if a != b:
            import difflib
            la, lb = [x.decode("latin-1") for x in a], [x.decode("latin-1") for x in b]
            d = "\n".join(repr(x) for x in difflib.unified_diff(la, lb, lineterm=""))[:3000]
            raise AssertionError("AOF files differ (cairn -, redis +):\n" + d)
    assert len(files[0]) == len(files[1])
    # Each loads the other's directory.
    for src, factory, digest in ((srvs[0], start_oracle, digests[0]), (srvs[1], start_server, digests[1])):
        d = os.path.join(src.tmp, "x")
        shutil.copytree(os.path.join(src.tmp, "appendonlydir"), os.path.join(d, "appendonlydir"))
        other = factory(dir=d, **cfg)
        assert other.client().execute_command("DEBUG", "DIGEST") == digest
