"""Cairn's built-in Sentinel (issue 40), third part: behaviours compared
with Debian's redis-sentinel 7.0.15 one scenario at a time.

- UNSUBSCRIBE / PUNSUBSCRIBE with no arguments: the replies' order.
  redis-sentinel 7.0 keeps a client's patterns in a list (subscription
  order, which cairn-sentinel matches byte for byte) and its channels in a
  dict hashed with a seed drawn at start, so its channel order differs
  from one process to the next (seen: a..h came back as a d f g c b e h,
  then h d f e c a b g); no order can match it, cairn-sentinel answers in
  subscription order and the test compares the channels as a set and the
  counts as a sequence.
- master-reboot-down-after-period: a primary whose INFO shows a new run id
  is flagged rebooted; while flagged, it is subjectively down once the
  period has passed since the reboot was seen, even though its -LOADING
  replies to PING count as valid for down-after-milliseconds; the first
  +PONG clears the flag (redis-sentinel 7.0's sentinelRefreshInstanceInfo,
  sentinelPingReplyCallback and sentinelCheckSubjectivelyDown).  The same
  scenario runs against both sentinels."""
import os
import re
import signal
import socket
import subprocess

import pytest
import redis

from conftest import free_port
from resphelp import encode, value_end
from test_cairn_sentinel import CAIRN_SENTINEL, NAME, SENTINEL_BIN, sentinels, wait_for  # noqa: F401

BINARIES = [pytest.param(CAIRN_SENTINEL, id="cairn"), pytest.param(SENTINEL_BIN, id="redis")]


def replies_until_pong(port, *cmds):
    """Sends cmds then PING on one connection; every reply value before the
    PONG, as bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(b"".join(encode(*c) for c in cmds) + encode("PING"))
        buf, out = b"", []
        while True:
            j = value_end(buf)
            if j is None:
                chunk = s.recv(65536)
                assert chunk, "connection closed"
                buf += chunk
                continue
            v, buf = buf[:j], buf[j:]
            if v in (b"+PONG\r\n", b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"):
                return out
            out.append(v)
    finally:
        s.close()


def unsub_replies(values, kind):
    """(name, count) of each reply of that kind (b"unsubscribe" ...)."""
    got = []
    for v in values:
        m = re.match(rb"\*3\r\n\$\d+\r\n" + kind + rb"\r\n(?:\$\d+\r\n(.*?)|\$-1)\r\n:(\d+)\r\n$", v, re.S)
        if m:
            got.append((m.group(1), int(m.group(2))))
    return got


@pytest.mark.parametrize("chans,pats", [
    (["a", "b", "c", "d", "e", "f", "g", "h"], ["p*", "a*", "z?", "x[y]"]),
    (["__sentinel__:hello", "+sdown", "+odown", "+switch-master"], ["*"]),
    (["only"], ["k*", "j*", "i*", "h*", "g*", "f*", "e*", "d*", "c*", "b*", "a*"]),
    ([], ["one*"]),
])
def test_unsubscribe_all_order_matches_redis_sentinel(sentinels, chans, pats):
    """UNSUBSCRIBE and PUNSUBSCRIBE with no arguments, after SUBSCRIBE and
    PSUBSCRIBE of several names: PUNSUBSCRIBE's replies are the same bytes
    as redis-sentinel's (subscription order); UNSUBSCRIBE's name the same
    channels, each once, with the same falling counts."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    cmds = []
    if chans:
        cmds.append(("SUBSCRIBE",) + tuple(chans))
    cmds.append(("PSUBSCRIBE",) + tuple(pats))
    cmds += [("UNSUBSCRIBE",), ("PUNSUBSCRIBE",), ("UNSUBSCRIBE",), ("PUNSUBSCRIBE",)]
    a = replies_until_pong(ours.port, *cmds)
    b = replies_until_pong(theirs.port, *cmds)
    assert len(a) == len(b) == len(chans) + len(pats) + len(chans) + len(pats) + 2 + (0 if chans else 1)
    pa, pb = unsub_replies(a, b"punsubscribe"), unsub_replies(b, b"punsubscribe")
    assert pa == pb
    assert [n for n, _ in pa] == [p.encode() for p in pats] + [None]
    ua, ub = unsub_replies(a, b"unsubscribe"), unsub_replies(b, b"unsubscribe")
    assert [cnt for _, cnt in ua] == [cnt for _, cnt in ub]
    assert sorted(n for n, _ in ua if n) == sorted(n for n, _ in ub if n) == sorted(c.encode() for c in chans)
    # ours: subscription order
    assert [n for n, _ in ua if n] == [c.encode() for c in chans]
    # everything but the UNSUBSCRIBE-all replies: the same bytes
    assert [v for v in a if not v.startswith(b"*3\r\n$11\r\nunsubscribe")] == \
        [v for v in b if not v.startswith(b"*3\r\n$11\r\nunsubscribe")]


# --- a switch heard in a hello --------------------------------------------------------

def test_hello_never_pairs_a_new_config_epoch_with_the_old_address(start_server, sentinels):
    """A hello naming a newer config (another address, a higher config
    epoch) switches the sentinel; until that switch the sentinel's own
    hellos must go on naming the old address with the old epoch.  A hello
    pairing the new epoch with the old address makes every sentinel that
    hears it first take the epoch without the switch, and then ignore
    every correct hello of that epoch: it never follows the failover (the
    bug seen as 'one of three sentinels over TLS never hears the hello
    about the new primary').  The sentinel's publish period is set to 1 ms
    (SENTINEL DEBUG) so that it publishes at every timer run, the first one
    after the forged hello included."""
    from test_cairn_sentinel import group, pairs
    p, reps = group(start_server, 1)
    r = reps[0]
    s = sentinels(CAIRN_SENTINEL, p.port)
    myid = s.cmd("SENTINEL", "MYID")
    wait_for(lambda: [pairs(x)["flags"] for x in s.cmd("SENTINEL", "REPLICAS", NAME)] == ["slave"], 30,
             "replica discovered")
    subs = []
    for node in (p, r):
        ps = node.client(socket_timeout=5).pubsub(ignore_subscribe_messages=True)
        ps.subscribe("__sentinel__:hello")
        subs.append(ps)

    def hellos():
        out = []
        for ps in subs:
            while True:
                m = ps.get_message(timeout=0.05)
                if not m:
                    break
                f = m["data"].decode().split(",")
                if f[2] == myid:
                    out.append((int(f[6]), int(f[7])))
        return out

    assert s.cmd("SENTINEL", "DEBUG", "publish-period", "1") == "OK"
    wait_for(lambda: (p.port, 0) in hellos(), 20, "the sentinel's hellos")
    forged = "127.0.0.1,%d,%s,1,%s,127.0.0.1,%d,1" % (free_port(), "f" * 40, NAME, r.port)
    s.cmd("PUBLISH", "__sentinel__:hello", forged)
    seen = []

    def switched():
        seen.extend(hellos())
        return (r.port, 1) in seen

    wait_for(switched, 30, "hellos naming the new address")
    assert (p.port, 1) not in seen, seen
    assert s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == ["127.0.0.1", str(r.port)]
    m = pairs(s.cmd("SENTINEL", "MASTER", NAME))
    assert m["config-epoch"] == "1" and m["port"] == str(r.port)
    for ps in subs:
        ps.close()


# --- master-reboot-down-after-period --------------------------------------------------

class Events:
    """The sentinel's +reboot/+sdown/-sdown events about the primary, in
    the order they were published."""

    def __init__(self, s):
        self.ps = s.client.pubsub(ignore_subscribe_messages=True)
        self.ps.subscribe("+reboot", "+sdown", "-sdown")
        self.got = []

    def poll(self):
        while True:
            m = self.ps.get_message(timeout=0.05)
            if not m:
                return self.got
            if m["data"].startswith("master "):
                self.got.append(m["channel"])

    def close(self):
        self.ps.close()


def loading(node):
    """1 while the data node answers -LOADING (its RDB load is running)."""
    try:
        node.client(socket_timeout=5).ping()
        return False
    except redis.BusyLoadingError:
        return True


def restart_into_load(node, delay):
    """SIGKILLs the data node and starts it again on its port and dir, which
    loads its dump.rdb (key-load-delay: `delay` microseconds a key)."""
    os.kill(node.pid, signal.SIGKILL)
    node.proc.wait()
    args = list(node.args)
    i = args.index("--key-load-delay")
    args[i + 1] = str(delay)
    with open(node.logpath, "ab") as logf:
        node.proc = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=node.tmp)


@pytest.mark.parametrize("binary", BINARIES)
def test_master_reboot_down_after_period(start_server, sentinels, binary):
    """The same scenario against both sentinels, over a Cairn primary whose
    RDB load is slowed (key-load-delay; events served every 1 KB, each key
    being 2 KB) so that it answers -LOADING to PING for as long as the test
    needs; down-after-milliseconds is 60 s, so only the reboot rule can
    make it subjectively down, and quorum 2 with one sentinel keeps it from
    objective down.
    1. period 0: a restart is seen (+reboot) and the primary stays up
       while loading; setting the period then changes nothing (the flag is
       only raised at the reboot).
    2. period 1000 ms: the next restart is seen (+reboot), then +sdown
       while the primary still loads.
    3. a restart without the delay: its first +PONG clears the flag, -sdown.
    """
    p = start_server(port=free_port(), **{"key-load-delay": "0", "loading-process-events-interval-bytes": "1024"})
    c = p.client()
    pipe = c.pipeline(transaction=False)
    for i in range(1500):
        pipe.set("k%d" % i, b"v" * 2000)
    pipe.execute()
    c.save()
    s = sentinels(binary, p.port, down_after=60000)
    assert s.cmd("SENTINEL", "DEBUG", "info-period", "200") == "OK"
    from test_cairn_sentinel import pairs
    wait_for(lambda: pairs(s.cmd("SENTINEL", "MASTER", NAME))["runid"] != "", 20, "run id known")
    ev = Events(s)
    try:
        # 1. period 0 (the default)
        restart_into_load(p, 20000)
        wait_for(lambda: loading(p), 20, "loading")
        wait_for(lambda: "+reboot" in ev.poll(), 40, "+reboot")
        assert s.cmd("SENTINEL", "SET", NAME, "master-reboot-down-after-period", "1000") == "OK"
        # two seconds of -LOADING replies: up for down-after, no reboot flag
        for _ in range(40):
            ev.poll()
        assert loading(p)
        assert ev.poll() == ["+reboot"]
        assert pairs(s.cmd("SENTINEL", "MASTER", NAME))["flags"] == "master"
        # 2. period 1000 ms: the next reboot is flagged
        restart_into_load(p, 20000)
        wait_for(lambda: loading(p), 20, "loading")
        wait_for(lambda: ev.poll()[-1] == "+sdown", 40, "+sdown")
        assert ev.got == ["+reboot", "+reboot", "+sdown"]
        assert loading(p)
        m = pairs(s.cmd("SENTINEL", "MASTER", NAME))
        assert m["flags"] == "s_down,master"
        # 3. a restart that loads at once: PONG clears the flag
        restart_into_load(p, 0)
        # The restart is seen too (+reboot), before or after the PONG that
        # clears the flag, by whichever of INFO and PING comes first.
        wait_for(lambda: "-sdown" in ev.poll()[3:], 40, "-sdown")
        assert ev.got[:3] == ["+reboot", "+reboot", "+sdown"]
        wait_for(lambda: pairs(s.cmd("SENTINEL", "MASTER", NAME))["flags"] == "master", 20, "flags master")
        assert "+sdown" not in ev.poll()[3:]
    except AssertionError as e:
        raise AssertionError("%s\nevents %s\n%s" % (e, ev.got, s.log()[-3000:]))
    finally:
        ev.close()
