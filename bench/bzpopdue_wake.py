#!/usr/bin/env python3
"""How late BZPOPDUE wakes its blocked clients (issue 39).

N clients (default 1000) block with `BZPOPDUE` on a fresh Cairn, and
each reply's arrival is timed here against its member's due time (this
machine's clock is the server's; a figure includes this client's own
delay in reading the sockets).  Two shapes:

- spread: client i blocks on its own key q:i; members are then added
  (one pipelined batch of ZADDs) due 1 ms apart over the next N ms after
  a 300 ms lead, so the server's timer wakes one client a millisecond
  while the others stay blocked: the lateness of each wake-up.
- burst: all N block on one key; one ZADD adds N members due at the same
  moment: the timer's one wake-up serves all N in the order they
  blocked (the spread from the first reply to the last is that work).

Usage: python3 bench/bzpopdue_wake.py [N] [ROUNDS]   (CAIRN_BIN as
bench/run.sh; N 1000, ROUNDS 3).  Prints first / median / p99 / max
lateness per round and shape.
"""
import os
import selectors
import socket
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Srv: a fresh server on a free port)


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def one_round(port, n, r, spread):
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(s)
    for i, s in enumerate(conns):
        s.sendall(resp("BZPOPDUE", "q:%d" % i if spread else "q", 0))
    deadline = time.monotonic() + 10
    while int(r.info("clients")["blocked_clients"]) < n:
        if time.monotonic() > deadline:
            raise SystemExit("clients did not all block")
        time.sleep(0.01)
    sec, usec = r.time()
    due_ms = sec * 1000 + usec // 1000 + 300
    # The offset between this clock (wall, ms) and the server's is ~0: same host.
    due = {}
    if spread:
        p = r.pipeline(transaction=False)
        for i, s in enumerate(conns):
            due[s] = due_ms + i
            p.zadd("q:%d" % i, {"m": due[s]})
        p.execute()
    else:
        r.zadd("q", {"m%d" % i: due_ms for i in range(n)})
        due = {s: due_ms for s in conns}
    sel = selectors.DefaultSelector()
    for s in conns:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    got = {}
    end = time.monotonic() + 10
    while len(got) < n and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            now_ms = time.time() * 1000
            data = key.fileobj.recv(4096)
            if data and key.fileobj not in got:
                got[key.fileobj] = now_ms - due[key.fileobj]
                sel.unregister(key.fileobj)
    for s in conns:
        s.close()
    late = sorted(got.values())
    if len(late) < n:
        raise SystemExit("only %d of %d clients woke" % (len(late), n))
    return late


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    srv = bench.Srv(bench.A_BIN, "cairn")
    try:
        r = redis.Redis(port=srv.port)
        r.config_set("maxclients", n + 100)
        for spread in (True, False):
            print("BZPOPDUE wake lateness (ms after the due time), %d blocked clients, %s" % (
                n, "each due 1 ms after the last (spread)" if spread else "all due at once on one key (burst)"))
            for k in range(rounds):
                late = one_round(srv.port, n, r, spread)
                first, med, p99, last = late[0], late[len(late) // 2], late[int(len(late) * 0.99) - 1], late[-1]
                print("  round %d: min %.2f  median %.2f  p99 %.2f  max %.2f" % (k + 1, first, med, p99, last))
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
