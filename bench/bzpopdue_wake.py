#!/usr/bin/env python3
"""How late BZPOPDUE wakes its blocked clients (issue 39: within 2 ms of
the due time under 1,000 blocked clients).  An absolute target: Redis has
no BZPOPDUE, so there is nothing to compare with.

N clients (default 1000) block with `BZPOPDUE` on a fresh Cairn, and each
reply is timed against its member's due time (a score in unix ms; this
host's wall clock is the server's).  Two shapes:

- spread: client i blocks on its own key q:i; members are then added (one
  pipelined batch of ZADDs) due 1 ms apart over the next N ms after a
  300 ms lead, with a sub-ms part (due_ms + i + 0.25): the server's timer
  wakes one client each millisecond while the others stay blocked, and
  must wake at the microsecond, not the next whole ms.
- burst: all N block on one key; one ZADD adds N members due at the same
  moment: one wake-up serves all N in the order they blocked.

How a reply is timed, and the client's own scheduling: every socket has
SO_TIMESTAMPNS on, so each reply carries the kernel's receive time (on
loopback: when the server's send reached the socket, stamped in the
server's own system call).  "arrival" figures are that time minus the due
time: they do not depend on when this Python process got a CPU or how
long it took to read the 1000 sockets (a burst's last reply is read here
~10 ms after it arrived).  "read" figures are when this process read the
reply (time.time() at recv): arrival plus this process's own delay.  The
server's CPU is its threads' scheduler count (/proc/PID/task/*/schedstat)
from 20 ms before the (first) due time to the last reply.  The machine's
wake-up noise floor is measured during each round by another process (a
Python sleeper waking at absolute times 2 ms apart in spread, 1 ms in
burst, from 10 ms before the due time, offset by 0.5 ms from the whole
ms): how late it woke (median / p99 / max) -- a loaded shared machine
makes any sleeper late, the server included.  Run the bench and anything it is
compared with at the same nice level (e.g. both under `nice -n 10`).

Usage: python3 bench/bzpopdue_wake.py [N] [ROUNDS]   (CAIRN_BIN as
bench/run.sh; N 1000, ROUNDS 3).
"""
import os
import selectors
import socket
import struct
import subprocess
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Srv: a fresh server on a free port)

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # 35 on Linux x86-64/arm64
CMSG_SPACE = socket.CMSG_SPACE(16)


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def pct(xs, p):
    """The p-th percentile (nearest rank) of the sorted list xs."""
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs))) - 1))]


# A sleeper in a process of its own: how late (ms) it wakes for n
# absolute times `step` s apart from t0 (unix s), printed one a line.
NOISE = """
import sys, time
t0, n, step = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
late = []
for i in range(n):
    target = t0 + i * step
    d = target - time.time()
    if d > 0:
        time.sleep(d)
    late.append((time.time() - target) * 1000)
print(" ".join("%.4f" % x for x in late))
"""


def noise_start(t0, n, step):
    return subprocess.Popen([sys.executable, "-c", NOISE, repr(t0), str(n), repr(step)], stdout=subprocess.PIPE)


def noise_result(p):
    """median, p99, max of the sleeper's lateness."""
    out, _ = p.communicate(timeout=60)
    late = sorted(float(x) for x in out.split())
    return late[len(late) // 2], pct(late, 99), late[-1]


def one_round(srv, n, r, spread):
    port = srv.port
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
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
    due = {}
    if spread:
        p = r.pipeline(transaction=False)
        for i, s in enumerate(conns):
            due[s] = due_ms + i + 0.25
            p.zadd("q:%d" % i, {"m": due[s]})
        p.execute()
    else:
        r.zadd("q", {"m%d" % i: due_ms for i in range(n)})
        due = {s: due_ms for s in conns}
    sel = selectors.DefaultSelector()
    for s in conns:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    # The noise floor, measured meanwhile: from 10 ms before the due time
    # to the end of the round, every 2 ms (spread) or 1 ms (burst), at
    # +0.5 ms from the whole ms the server's wake-ups fall near.
    noise = noise_start(due_ms / 1000.0 - 0.0095, (n + 20) // 2 if spread else 60, 0.002 if spread else 0.001)
    wait = due_ms / 1000.0 - 0.02 - time.time()
    if wait > 0:
        time.sleep(wait)
    cpu0 = srv.cpu_ns()
    arrival, read = {}, {}
    end = time.monotonic() + 10 + (n / 1000.0 if spread else 0)
    while len(read) < n and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            now_ms = time.time() * 1000
            data, anc, _, _ = s.recvmsg(4096, CMSG_SPACE)
            if not data or s in read:
                continue
            kern = None
            for level, typ, blob in anc:
                if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                    tv_sec, tv_nsec = struct.unpack("qq", blob[:16])
                    kern = tv_sec * 1000 + tv_nsec / 1e6
            if kern is None:
                raise SystemExit("no SO_TIMESTAMPNS on a reply")
            read[s] = now_ms - due[s]
            arrival[s] = kern - due[s]
            sel.unregister(s)
    cpu = (srv.cpu_ns() - cpu0) / 1e6
    floor = noise_result(noise)
    for s in conns:
        s.close()
    if len(read) < n:
        raise SystemExit("only %d of %d clients woke" % (len(read), n))
    early = [x for x in arrival.values() if x < 0]
    if early:
        raise SystemExit("%d replies arrived before their due time (by up to %.3f ms)" % (len(early), -min(early)))
    return sorted(arrival.values()), sorted(read.values()), cpu, floor


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    srv = bench.Srv(bench.A_BIN, "cairn")
    try:
        r = redis.Redis(port=srv.port)
        r.config_set("maxclients", n + 100)
        print("BZPOPDUE wake lateness in ms after the due time, %d blocked clients, %s (nice %d)" % (
            n, bench.A_BIN, os.nice(0)))
        for spread in (True, False):
            print("%s:" % ("spread: one client due every 1 ms (due times x.25 ms)" if spread
                           else "burst: all %d due at once on one key" % n))
            for k in range(rounds):
                arr, rd, cpu, floor = one_round(srv, n, r, spread)
                if spread:
                    print("  round %d: arrival median %.3f  p99 %.3f  max %.3f | read median %.3f  p99 %.3f  "
                          "max %.3f | server CPU %.1f ms | noise floor median %.3f  p99 %.3f  max %.3f" % (
                              k + 1, arr[len(arr) // 2], pct(arr, 99), arr[-1], rd[len(rd) // 2], pct(rd, 99),
                              rd[-1], cpu, *floor))
                else:
                    print("  round %d: arrival first %.3f  median %.3f  last %.3f | read first %.3f  last %.3f | "
                          "server CPU %.2f ms | noise floor median %.3f  p99 %.3f  max %.3f" % (
                              k + 1, arr[0], arr[len(arr) // 2], arr[-1], rd[0], rd[-1], cpu, *floor))
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
