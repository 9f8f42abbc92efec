#!/usr/bin/env python3
"""Hash-field expiry at scale (issue 38): one hash of 1M fields.

  1. HSET 1M fields, then HPEXPIREAT all of them to the same millisecond
     (FIELDS batches of 10,000): the server's CPU time per field, from
     /proc (first on the plain hashtable, which converts to the TTL layout
     once, then again on the converted one);
  2. the active expiry of the 1M fields: wall time and server CPU per
     field, while redis-benchmark sends PINGs one at a time
     (-c 1 -P 1) and reports their latency; the same PING run before the
     expiry is the baseline (this machine's own noise);
  3. measured inside the server, over the commands a second client runs
     during the expiry (GET, SET, HSET, HGET, HLEN, LPUSH, ZADD, PING on
     other keys and on the expiring hash): SLOWLOG with
     slowlog-log-slower-than 1000 (every command that ran 1 ms or more),
     LATENCY HISTOGRAM's slowest bucket per command and INFO
     latencystats' p99.9, and the latency monitor's events
     (latency-monitor-threshold 1: every expire-cycle of 1 ms or more).
     The target: no entry in SLOWLOG, no expire-cycle event.

Usage: python3 bench/hash_field_expiry.py [N]   (CAIRN_BIN as bench/run.sh)
"""
import csv
import io
import os
import socket
import subprocess
import sys
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CAIRN_BIN", os.path.join(ROOT, "build", "cairn-server"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ping_latency(port, n):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "ping_mbulk", "-c", "1", "-P", "1", "-n",
                          str(n), "--csv"], capture_output=True, text=True).stdout
    row = list(csv.DictReader(io.StringIO(out)))[0]
    return float(row["p99_latency_ms"]), float(row["max_latency_ms"])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    port = free_port()
    srv = subprocess.Popen([BIN, "--port", str(port), "--save", "", "--appendonly", "no"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                r = redis.Redis(port=port)
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)

        def cpu():
            with open("/proc/%d/stat" % srv.pid) as f:
                parts = f.read().split()
            return (int(parts[13]) + int(parts[14])) / os.sysconf("SC_CLK_TCK")

        pipe = r.pipeline(transaction=False)
        for i in range(0, n, 1000):
            pipe.hset("big", mapping={"f%d" % j: "v" for j in range(i, i + 1000)})
            if i % 100000 == 0:
                pipe.execute()
        pipe.execute()
        r.hset("big", "keep", "1")
        at = int(time.time() * 1000) + 60000
        for rnd in ("first (converts the hash to the TTL layout)", "again"):
            c0 = cpu()
            for i in range(0, n, 10000):
                r.execute_command("HPEXPIREAT", "big", at, "FIELDS", 10000, *["f%d" % j for j in range(i, i + 10000)])
            print("HPEXPIREAT of %d fields, %s: server CPU %.3f us per field" % (n, rnd, (cpu() - c0) / n * 1e6))
        print("baseline PING latency (no expiry): p99 %.3f ms, max %.3f ms" % ping_latency(port, 50000))
        # move the expire close: all fields expire at the same millisecond
        at = int(time.time() * 1000) + 15000
        for i in range(0, n, 10000):
            r.execute_command("HPEXPIREAT", "big", at, "FIELDS", 10000, *["f%d" % j for j in range(i, i + 10000)])
        assert r.hlen("big") == n + 1 and time.time() * 1000 < at - 1000, "set the expires too late"
        for k, v in (("slowlog-log-slower-than", 1000), ("latency-monitor-threshold", 1),
                     ("latency-tracking", "yes")):
            r.config_set(k, v)
        while time.time() * 1000 < at - 200:
            time.sleep(0.01)
        r.slowlog_reset()
        r.execute_command("LATENCY", "RESET")
        r.config_resetstat()
        c0, t0 = cpu(), time.time()
        lat = subprocess.Popen(["redis-benchmark", "-p", str(port), "-t", "ping_mbulk", "-c", "1", "-P", "1", "-n",
                                "30000", "--csv"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        probe = redis.Redis(port=port)
        ops = 0
        while True:
            # the second client's mix, one command at a time
            probe.set("s%d" % (ops % 1000), "x")
            probe.get("s%d" % (ops % 1000))
            probe.hset("small", "f%d" % (ops % 100), ops)
            probe.hget("small", "f%d" % (ops % 100))
            probe.lpush("l", ops)
            probe.zadd("z", {"m%d" % (ops % 1000): ops})
            probe.ping()
            ops += 7
            if probe.hlen("big") <= 1:
                break
        done = time.time()
        c1 = cpu()
        out = lat.communicate()[0]
        print("active expiry of %d fields: %.2f s wall after the expire time, server CPU %.3f us per field "
              "(PINGs included)" % (n, done - at / 1000, (c1 - c0) / n * 1e6))
        rows = list(csv.DictReader(io.StringIO(out)))
        if rows:
            print("PING latency meanwhile: p99 %.3f ms, max %.3f ms" % (float(rows[0]["p99_latency_ms"]),
                                                                     float(rows[0]["max_latency_ms"])))
        # Inside the server: what ran 1 ms or more during the expiry.
        slow = r.slowlog_get(128)
        events = r.execute_command("LATENCY", "LATEST")
        history = r.execute_command("LATENCY", "HISTORY", "expire-cycle")
        print("commands run by the second client during the expiry: %d" % (ops + 1))
        print("SLOWLOG entries (>= 1 ms): %d%s" % (len(slow), "" if not slow else ", slowest %d us (%s)" % max(
            (e["duration"], e["command"]) for e in slow)))
        print("latency monitor events (>= 1 ms): %s" % (
            ", ".join("%s max %d ms" % (e[0].decode(), e[3]) for e in events) or "none"))
        if history:
            print("expire-cycle events (ms): %s" % [h[1] for h in history])
        hist = r.execute_command("LATENCY", "HISTOGRAM", "get", "set", "hset", "hget", "hlen", "lpush", "zadd",
                                 "ping")
        tops = []
        for name, body in zip(hist[0::2], hist[1::2]):
            fields = dict(zip(body[0::2], body[1::2]))
            buckets = fields.get(b"histogram_usec", [])
            top = max(buckets[0::2]) if buckets else 0
            tops.append("%s %d calls, slowest bucket <= %d us" % (name.decode(), fields.get(b"calls", 0), top))
        print("LATENCY HISTOGRAM: " + "; ".join(tops))
        stats = r.info("latencystats")
        print("INFO latencystats p99.9: " + ", ".join(
            "%s %.3f us" % (k[len("latency_percentiles_usec_"):], v["p99.9"]) for k, v in sorted(stats.items())
            if k[len("latency_percentiles_usec_"):] in ("get", "set", "hset", "hget", "hlen", "lpush", "zadd",
                                                        "ping")))
        print("fields left:", r.hgetall("big"))
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
