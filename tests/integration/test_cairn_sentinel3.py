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
