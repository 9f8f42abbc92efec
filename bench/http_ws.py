#!/usr/bin/env python3
"""WebSocket round trips through the HTTP gateway against Webdis (issue 37):
`python3 bench/http_ws.py` (after `make`; Debian's webdis and redis-server).

Starts Cairn (CAIRN_BIN, default build/cairn-server) with http-port, and
webdis (WEBDIS_BIN) with websockets on in front of redis-server
(ORACLE_BIN), then drives /.json WebSockets with CONNS (16) concurrent
clients for SECS (5) seconds per test, alternating which server goes first
each round (ROUNDS, 2):

  fresh   each round trip on a new connection: TCP connect, the opening
          handshake, one masked ["SET","key","value"] (or GET) message,
          its reply, close.  Webdis 0.1.9 answers only the first message
          of a WebSocket (the next one resets the connection), so this is
          the test both can run.  It also leaves some handshakes
          unanswered (every third sequential connection here): a round
          trip with no answer in 2 s is counted apart, not as one.
  kept    round trips on one WebSocket per client (Cairn only, for the
          figure; Webdis cannot).

Prints round trips per second and server CPU per round trip (user + system
time from /proc: Cairn alone; webdis and redis-server together).  The
client is this script (asyncio), so at high rates it is the limit: the
CPU figures are the fairer comparison."""
import asyncio
import base64
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

CONNS = int(os.environ.get("BENCH_WS_CONNS", "16"))
SECS = float(os.environ.get("BENCH_WS_SECS", "5"))
ROUNDS = int(os.environ.get("BENCH_WS_ROUNDS", "2"))
HZ = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def ticks(pids):
    t = 0
    for p in pids:
        with open("/proc/%d/stat" % p) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        t += int(fields[11]) + int(fields[12])
    return t


def frame(text):
    """A masked text frame."""
    data = text.encode()
    mask = os.urandom(4)
    n = len(data)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def handshake(port):
    """The opening handshake (Webdis answers none without an Origin)."""
    key = base64.b64encode(os.urandom(16)).decode()
    return ("GET /.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Origin: http://127.0.0.1\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (port, key)).encode()


async def read_frame(reader):
    h = await reader.readexactly(2)
    n = h[1] & 0x7F
    if n == 126:
        n = struct.unpack(">H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", await reader.readexactly(8))[0]
    return h[0] & 0x0F, await reader.readexactly(n)


async def open_ws(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(handshake(port))
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError("handshake refused: %r" % head[:40])
    return reader, writer


async def fresh_once(port, msg):
    reader, writer = await open_ws(port)
    try:
        writer.write(msg)
        op, payload = await read_frame(reader)
        if op != 1 or not payload.startswith(b"{"):
            raise RuntimeError("unexpected reply %r" % payload[:40])
    finally:
        writer.close()


async def client_fresh(port, msg, deadline, count):
    while time.monotonic() < deadline:
        try:
            await asyncio.wait_for(fresh_once(port, msg), 2)
            count[0] += 1
        except (asyncio.TimeoutError, OSError, asyncio.IncompleteReadError):
            count[1] += 1  # no answer within 2 s (or reset): counted apart


async def client_kept(port, msg, deadline, count):
    reader, writer = await open_ws(port)
    while time.monotonic() < deadline:
        writer.write(msg)
        op, payload = await read_frame(reader)
        if op != 1:
            raise RuntimeError("unexpected opcode %d" % op)
        count[0] += 1
    writer.close()


async def drive(kind, port, msg):
    count = [0, 0]
    deadline = time.monotonic() + SECS
    fn = client_fresh if kind == "fresh" else client_kept
    await asyncio.gather(*(fn(port, msg, deadline, count) for _ in range(CONNS)))
    return count


def run(name, kind, port, cmd, pids):
    msg = frame(cmd)
    before = ticks(pids)
    t0 = time.monotonic()
    n, failed = asyncio.run(drive(kind, port, msg))
    dt = time.monotonic() - t0
    after = ticks(pids)
    us = (after - before) / HZ * 1e6 / max(n, 1)
    print("%-7s %-6s %-22s %10.0f round trips/s %8.1f us CPU/round trip%s"
          % (name, kind, cmd, n / dt, us, "  (%d unanswered in 2 s)" % failed if failed else ""))
    sys.stdout.flush()
    return n / dt, us


def main():
    cairn_bin = os.environ.get("CAIRN_BIN", "build/cairn-server")
    webdis_bin = shutil.which(os.environ.get("WEBDIS_BIN", "webdis"))
    oracle_bin = shutil.which(os.environ.get("ORACLE_BIN", "redis-server"))
    if not webdis_bin or not oracle_bin:
        sys.exit("bench/http_ws.py: webdis and redis-server needed (sh scripts/deps.sh test)")
    tmp = tempfile.mkdtemp()
    rp, cp, ch, wp = free_port(), free_port(), free_port(), free_port()
    procs = []
    try:
        redis = subprocess.Popen([oracle_bin, "--port", str(rp), "--save", "", "--appendonly", "no",
                                  "--logfile", os.path.join(tmp, "redis.log")])
        cairn = subprocess.Popen([cairn_bin, "--port", str(cp), "--http-port", str(ch), "--save", "",
                                  "--appendonly", "no", "--logfile", os.path.join(tmp, "cairn.log")])
        procs += [redis, cairn]
        conf = os.path.join(tmp, "webdis.json")
        with open(conf, "w") as f:
            f.write('{"redis_host":"127.0.0.1","redis_port":%d,"http_host":"127.0.0.1","http_port":%d,'
                    '"threads":2,"pool_size":20,"daemonize":false,"database":0,"verbosity":0,'
                    '"websockets":true,"logfile":"%s"}' % (rp, wp, os.path.join(tmp, "webdis.log")))
        time.sleep(0.5)
        webdis = subprocess.Popen([webdis_bin, conf])
        procs.append(webdis)
        time.sleep(0.5)
        results = {}
        for r in range(ROUNDS):
            for cmd in ('["SET","key","value"]', '["GET","key"]'):
                order = [("cairn", ch, [cairn.pid]), ("webdis", wp, [webdis.pid, redis.pid])]
                if r % 2:
                    order.reverse()
                for name, port, pids in order:
                    results.setdefault((name, "fresh", cmd), []).append(run(name, "fresh", port, cmd, pids))
                results.setdefault(("cairn", "kept", cmd), []).append(run("cairn", "kept", ch, cmd, [cairn.pid]))
        print()
        print("means over %d rounds, %d connections:" % (ROUNDS, CONNS))
        for cmd in ('["SET","key","value"]', '["GET","key"]'):
            c = results[("cairn", "fresh", cmd)]
            w = results[("webdis", "fresh", cmd)]
            k = results[("cairn", "kept", cmd)]
            if not all(x[0] for x in w):
                print("  %-22s webdis answered no round trip in a run" % cmd)
                continue
            cr, cu = sum(x[0] for x in c) / len(c), sum(x[1] for x in c) / len(c)
            wr, wu = sum(x[0] for x in w) / len(w), sum(x[1] for x in w) / len(w)
            kr, ku = sum(x[0] for x in k) / len(k), sum(x[1] for x in k) / len(k)
            print("  %-22s fresh: cairn %.0f/s %.1f us, webdis+redis %.0f/s %.1f us: %.2fx rate, %.2fx CPU;"
                  " kept: cairn %.0f/s %.1f us CPU (%.2fx webdis's fresh rate)"
                  % (cmd, cr, cu, wr, wu, cr / wr, cu / wu, kr, ku, kr / wr))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
