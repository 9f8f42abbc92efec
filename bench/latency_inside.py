#!/usr/bin/python3
"""Tail latency measured by the servers themselves, and big values by CPU.

Usage: latency_inside.py [stalls|big|all] [--keys N] [--expire N]
                         [--big N] [--only a,b] [--json PATH]

stalls: for each scenario, Cairn (CAIRN_BIN) and Redis (ORACLE_BIN), one
after the other in the same run, each on a fresh server (and a third,
BENCH_BASE_BIN named BENCH_BASE_NAME, when set: a build to compare with):

  steady      nothing but the SET/GET load, 10 s: the floor the platform
              sets (interrupts and the host's preemption of the VM
              inside a command), for the rows below
  load        N keys SET by 16 clients (redis-benchmark -c 16 -P 10)
  load_ttl    the same with EX 100000
  expire      M keys (--expire) all due at the same second, SET/GET load
              running across that second until they are gone
  del_hash    DEL of an M-field hash (--big) under SET/GET load
  unlink_hash UNLINK of the same (this and the other UNLINK and the
              FLUSHALL ASYNC rows: measured until the server's background
              free has ended, lazyfree_pending_objects 0, plus 1 s; their
              figures at 1 s after the command are printed too)
  del_zset    DEL of an M-member sorted set under load
  unlink_zset UNLINK of the same
  grow_hash   the M-field hash built under load: HSET of 10 random fields
              a call (redis-benchmark -c 4 -P 10), its table growing
  grow_zset   the M-member sorted set built the same way (ZADD)
  flushall    FLUSHALL (sync) of N keys under load
  flushall_async  FLUSHALL ASYNC of N keys under load
  bgsave      BGSAVE of N keys under load, until it ends

The SET/GET load is two redis-benchmark processes (4 clients SET, 4 GET,
keys key:0..99999, 3-byte values).  Measured by each server: INFO
latencystats (p50/p99/p99.9 of SET and GET), LATENCY HISTOGRAM (the
highest bucket holding a call), the slow log with slowlog-log-slower-than
1000 (entries over 1 ms, by command name).  CONFIG RESETSTAT and SLOWLOG
RESET come after the scenario's setup, so only the measured window counts.
Secondary: a probe client GETs every 1 ms and times each reply (p99.9, max).

big: 1 MB and 10 MB SET then GET (redis-benchmark -c 2 -d SIZE), both
servers running, in rounds alternating which goes first (BENCH_BIG_ROUNDS,
default 5): median ops/s of the rounds, and server CPU per request (all
threads, /proc/PID/task/*/schedstat; utime+stime where missing).
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Srv, Probe, pct, the binaries and names)

import redis  # noqa: E402

# BENCH_BASE_BIN: a third server (another Cairn build, say the one before a
# change) run after the two in each scenario, named BENCH_BASE_NAME.
BASE_BIN = os.environ.get("BENCH_BASE_BIN", "")
BASE_NAME = os.environ.get("BENCH_BASE_NAME", "base")
SCENARIOS = ["steady", "load", "load_ttl", "expire", "del_hash", "unlink_hash", "del_zset", "unlink_zset",
             "grow_hash", "grow_zset", "flushall", "flushall_async", "bgsave"]
LOAD_KEYS = 100000
# BENCH_LAT_CLIENT_CORE=N: the load generators and the probe on core N only,
# so that their wake-ups do not preempt a server inside a command (the
# servers are not pinned).  Unset: the scheduler places everything.
CLIENT_CORE = int(os.environ["BENCH_LAT_CLIENT_CORE"]) if os.environ.get("BENCH_LAT_CLIENT_CORE") else None
SERVER_PREFIX = []
# Scenarios whose event goes on in the background after the command
# returns: measured until the server's lazy free has ended, plus 1 s.
LAZY_FREE = ("unlink_hash", "unlink_zset", "flushall_async")


def rb(port, *args, **kw):
    return subprocess.run(["redis-benchmark", "-p", str(port), "-q"] + [str(a) for a in args],
                          capture_output=True, timeout=kw.get("timeout", 3600))


class Load:
    """Background SET and GET load: 4 clients each, looping until stopped."""

    def __init__(self, port):
        common = ["redis-benchmark", "-p", str(port), "-c", "4", "-n", "100000000", "-r", str(LOAD_KEYS), "-q"]
        self.procs = [subprocess.Popen(common + ["-t", t], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL) for t in ("set", "get")]

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def fill(port, n, ttl=False, clients=16, prefix="key"):
    cmd = ["-c", clients, "-P", 10, "-n", n, "-r", 1000000000, "SET", prefix + ":__rand_int__", "xxxxxxxxxx"]
    if ttl:
        cmd += ["EX", 100000]
    t0 = time.monotonic()
    rb(port, *cmd)
    return time.monotonic() - t0


def main_faults(pid):
    """Minor page faults of a process's main thread so far (field 10 of
    /proc/PID/task/PID/stat): each first touch of a fresh page inside a
    command costs it ~5-25 us on these VMs."""
    try:
        with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
            return int(f.read().rsplit(")", 1)[1].split()[7])
    except (OSError, IndexError, ValueError):
        return 0


def expires(r):
    """Keys with a TTL in db 0 (INFO keyspace)."""
    return r.info("keyspace").get("db0", {}).get("expires", 0)


def stats(r):
    """The server's own figures for SET and GET, and its slow log."""
    out = {}
    info = r.info("latencystats")  # redis-py parses "p50=1.0,p99=..." into dicts
    for name in ("set", "get"):
        vals = info.get("latency_percentiles_usec_" + name)
        if isinstance(vals, dict):
            out[name] = {k: float(v) for k, v in vals.items()}
    hist = r.execute_command("LATENCY", "HISTOGRAM", "SET", "GET")
    # [name, [calls, n, histogram_usec, [bucket, count, ...]], ...] (RESP2)
    for i in range(0, len(hist), 2):
        name = hist[i].decode().lower()
        body = hist[i + 1]
        d = dict(zip(body[0::2], body[1::2]))
        buckets = d.get(b"histogram_usec", [])
        top = max((buckets[j] for j in range(0, len(buckets), 2)), default=0)
        out.setdefault(name, {})["max_bucket"] = top
        out[name]["calls"] = d.get(b"calls", 0)
        # The buckets count calls up to each bound (cumulative): the share
        # of calls over 16 us, which p99.9 sits above once it passes 0.1%.
        cum = {buckets[j]: buckets[j + 1] for j in range(0, len(buckets), 2)}
        upto16 = max((v for k, v in cum.items() if k <= 16), default=0)
        out[name]["over16"] = (out[name]["calls"] - upto16) / out[name]["calls"] if out[name]["calls"] else 0.0
        upto8 = max((v for k, v in cum.items() if k <= 8), default=0)
        out[name]["over8_n"] = out[name]["calls"] - upto8
    # Calls over 8 us per second spent inside the command (INFO
    # commandstats' usec): how often something stops a command, per unit
    # of exposure.  Interruptions from outside the server (the host, the
    # kernel's interrupts) hit both servers at a similar rate per second
    # inside a command; a server's own stalls add to it.
    cs = r.info("commandstats")
    for name in ("set", "get"):
        usec = cs.get("cmdstat_" + name, {}).get("usec", 0)
        if name in out and usec:
            out[name]["over8_per_s"] = out[name].get("over8_n", 0) / (usec / 1e6)
    n = r.execute_command("SLOWLOG", "LEN")
    entries = r.execute_command("SLOWLOG", "GET", 10000)
    names = collections.Counter()
    worst = []
    for e in entries:
        argv = [a.decode(errors="replace") for a in e[3]]
        names[argv[0].upper() + ((" " + argv[1].upper()) if argv and argv[0].upper() in
                                 ("FLUSHALL", "DEBUG", "CONFIG") and len(argv) > 1 else "")] += 1
        worst.append((e[2], " ".join(argv)[:40]))
    worst.sort(reverse=True)
    out["slow"] = {"count": n, "names": dict(names), "worst": worst[:3]}
    return out


def run_one(binary, sname, scen, args):
    extra = ["--enable-debug-command", "local"]
    if binary == bench.A_BIN:  # BENCH_A_ARGS: directives for CAIRN_BIN only (an experiment's knob)
        extra += os.environ.get("BENCH_A_ARGS", "").split()
    s = bench.Srv(binary, sname, prefix=SERVER_PREFIX, extra=extra)
    r = redis.Redis(port=s.port)
    res = {"server": sname, "scenario": scen}
    try:
        r.config_set("slowlog-log-slower-than", 1000)
        r.config_set("slowlog-max-len", 10000)
        # the load's keys (redis-benchmark's key:%012d, ~95% of 0..LOAD_KEYS-1) exist
        rb(s.port, "-c", 4, "-P", 10, "-n", 3 * LOAD_KEYS, "-r", LOAD_KEYS, "-t", "set")
        base = r.dbsize()
        big = args.big
        # --- setup (not measured)
        if scen in ("del_hash", "unlink_hash"):
            rb(s.port, "-c", 4, "-P", 100, "-n", big, "-r", 1000000000, "HSET", "bigh", "f:__rand_int__", "v")
            res["size"] = r.hlen("bigh")
        elif scen in ("del_zset", "unlink_zset"):
            rb(s.port, "-c", 4, "-P", 100, "-n", big, "-r", 1000000000, "ZADD", "bigz", "__rand_int__",
               "m:__rand_int__")
            res["size"] = r.zcard("bigz")
        elif scen in ("flushall", "flushall_async", "bgsave"):
            r.execute_command("DEBUG", "POPULATE", args.keys, "pop", 10)
            res["size"] = r.dbsize()
        elif scen == "expire":
            # All due at one second, far enough ahead that the fill ends first.
            rate = args.rate or 100000.0
            due = int(time.time()) + int(args.expire / rate * 2) + 3
            t0 = time.monotonic()
            rb(s.port, "-c", 16, "-P", 10, "-n", args.expire, "-r", 1000000000, "SET", "exp:__rand_int__", "x",
               "EXAT", due)
            res["fill_s"] = time.monotonic() - t0
            res["size"] = expires(r)
            wait = due - time.time() - 1.0
            res["late"] = wait < 0
            if wait > 0:
                time.sleep(wait)
        r.config_resetstat()
        r.slowlog_reset()
        probe = bench.Probe(s.port)
        probe.start()
        load = Load(s.port)
        pre0, wait0 = bench.preemptions(s.pid), bench.runqueue_wait_ns(s.pid)
        flt0 = main_faults(s.pid)
        time.sleep(0.5)
        t0 = time.monotonic()
        # --- the measured event
        if scen == "steady":
            time.sleep(10)
            res["event_s"] = time.monotonic() - t0
        elif scen in ("load", "load_ttl"):
            res["event_s"] = fill(s.port, args.keys, ttl=(scen == "load_ttl"))
            res["size"] = r.dbsize() - base
            args.rate = args.rate or res["size"] / max(res["event_s"], 1e-3)
        elif scen == "expire":
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and expires(r):
                time.sleep(0.05)
            res["event_s"] = time.monotonic() - t0
            res["left"] = expires(r)
        elif scen in ("del_hash", "del_zset", "unlink_hash", "unlink_zset"):
            r.execute_command("DEL" if scen.startswith("del") else "UNLINK", "bigh" if "hash" in scen else "bigz")
            res["event_s"] = time.monotonic() - t0
        elif scen in ("grow_hash", "grow_zset"):
            if scen == "grow_hash":
                cmd = ["HSET", "bigh"] + ["f:__rand_int__", "v"] * 10
            else:
                cmd = ["ZADD", "bigz"] + ["__rand_int__", "m:__rand_int__"] * 10
            rb(s.port, "-c", 4, "-P", 10, "-n", big // 10, "-r", 1000000000, *cmd)
            res["event_s"] = time.monotonic() - t0
            res["size"] = r.hlen("bigh") if scen == "grow_hash" else r.zcard("bigz")
        elif scen == "flushall":
            r.execute_command("FLUSHALL")
            res["event_s"] = time.monotonic() - t0
        elif scen == "flushall_async":
            r.execute_command("FLUSHALL", "ASYNC")
            res["event_s"] = time.monotonic() - t0
        elif scen == "bgsave":
            r.execute_command("BGSAVE")
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                if not r.info("persistence").get("rdb_bgsave_in_progress"):
                    break
                time.sleep(0.05)
            res["event_s"] = time.monotonic() - t0
        if scen in LAZY_FREE:
            # The event lasts until the server has freed in the background
            # what it let go of (INFO lazyfree_pending_objects back to 0):
            # Redis's free of 2M keys takes seconds, Cairn's well under
            # one, so a fixed window after the command would measure one
            # server's whole free and part of the other's.  The figures at
            # 1 s after the command are kept as well (res["at1s"]).
            time.sleep(1.0)
            snap = stats(r)
            res["at1s"] = {k: snap[k] for k in ("set", "get") if k in snap}
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and r.info("memory").get("lazyfree_pending_objects", 0):
                time.sleep(0.01)
            res["lazy_s"] = time.monotonic() - t0
        time.sleep(1.0)  # what the event left behind (lazy frees, rehash)
        load.stop()
        res["preempt"] = bench.preemptions(s.pid) - pre0
        res["minflt"] = main_faults(s.pid) - flt0
        res["wait_ms"] = (bench.runqueue_wait_ns(s.pid) - wait0) / 1e6
        times = probe.finish()
        res.update(stats(r))
        res["probe_p999_ms"] = bench.pct(times, 0.999) * 1e3
        res["probe_max_ms"] = (times[-1] if times else float("nan")) * 1e3
        return res
    finally:
        s.stop()


def fmt_row(res):
    st, gt, sl = res.get("set", {}), res.get("get", {}), res["slow"]
    return "%-15s %-6s %9s %7.2f | %6.1f %7.1f %8d | %6.1f %7.1f %8d | %6.3f %6.3f | %7.0f %7.0f | %5d %-30s | %7.2f %7.2f | %6d %7.0f %7d" % (
        res["scenario"], res["server"], str(res.get("size", "")) + ("!" if res.get("late") else ""), res.get("event_s", float("nan")),
        st.get("p99", float("nan")), st.get("p99.9", float("nan")), st.get("max_bucket", 0),
        gt.get("p99", float("nan")), gt.get("p99.9", float("nan")), gt.get("max_bucket", 0),
        st.get("over16", float("nan")) * 100, gt.get("over16", float("nan")) * 100,
        st.get("over8_per_s", float("nan")), gt.get("over8_per_s", float("nan")), sl["count"], ",".join("%s:%d" % kv for kv in sorted(sl["names"].items()))[:30],
        res["probe_p999_ms"], res["probe_max_ms"], res["preempt"], res["wait_ms"], res.get("minflt", 0))


def stalls(args, results):
    print("\n== latency inside the servers (INFO latencystats, LATENCY HISTOGRAM, SLOWLOG > 1 ms)")
    print("keys %d, expiring keys %d, big hash/zset %d; load average at start: %s" % (
        args.keys, args.expire, args.big, " ".join(open("/proc/loadavg").read().split()[:3])))
    print("(us: p99, p99.9 from INFO latencystats; max: LATENCY HISTOGRAM's highest bucket; slow: SLOWLOG\n"
          " entries over 1 ms; probe: a client GET every 1 ms, its p99.9 and max in ms; preempt: times the\n"
          " kernel took the CPU from the server's main thread; wait ms: its time runnable but not running;\n"
          " minflt: the main thread's minor page faults in the measured window; >16us: % of the calls\n"
          " over 16 us, from the histogram -- p99.9 is in that tail once it passes 0.1%; >8/s: calls over\n"
          " 8 us per second spent inside the command (INFO commandstats usec) -- interruptions from outside\n"
          " the server come at a similar rate per second inside a command for both servers, so a server's\n"
          " share of slow calls is that rate times its time per call)")
    print("%-15s %-6s %9s %7s | %6s %7s %8s | %6s %7s %8s | %6s %6s | %7s %7s | %5s %-30s | %7s %7s | %6s %7s %7s" % (
        "scenario", "server", "size", "event s", "SET99", "SET99.9", "SETmax", "GET99", "GET99.9", "GETmax",
        "SET>16", "GET>16", "SET>8/s", "GET>8/s", "slow", "slow commands", "probe99", "probemx", "preempt", "wait ms", "minflt"))
    only = args.only.split(",") if args.only else SCENARIOS
    for scen in SCENARIOS:
        if scen not in only:
            continue
        pair = []
        servers = [(bench.A_BIN, bench.A_NAME), (bench.B_BIN, bench.B_NAME)]
        if BASE_BIN:  # a third server, after the two (not in the ratio line)
            servers.append((BASE_BIN, BASE_NAME))
        for binary, sname in servers:
            res = run_one(binary, sname, scen, args)
            pair.append(res)
            results.append(res)
            print(fmt_row(res))
            sys.stdout.flush()
        a, b = pair[:2]
        rs = bench.ratio(a["set"]["p99.9"], b["set"]["p99.9"]) if "set" in a and "set" in b else float("nan")
        rg = bench.ratio(a["get"]["p99.9"], b["get"]["p99.9"]) if "get" in a and "get" in b else float("nan")
        wa = "; ".join("%dus %s" % w for w in a["slow"]["worst"][:2])
        wb = "; ".join("%dus %s" % w for w in b["slow"]["worst"][:2])
        print("%-15s ratio %s/%s p99.9 SET %.2f GET %.2f   worst %s: %s | %s: %s" % (
            "", bench.A_NAME, bench.B_NAME, rs, rg, bench.A_NAME, wa or "-", bench.B_NAME, wb or "-"))
        if "at1s" in a and "at1s" in b:
            s1a, s1b = a["at1s"], b["at1s"]
            print("%-15s background free ended %.2f s / %.2f s after the command; at 1 s after it: p99.9 SET %.1f / %.1f"
                  " (%.2f) GET %.1f / %.1f (%.2f)" % (
                      "", a.get("lazy_s", float("nan")), b.get("lazy_s", float("nan")),
                      s1a["set"]["p99.9"], s1b["set"]["p99.9"], bench.ratio(s1a["set"]["p99.9"], s1b["set"]["p99.9"]),
                      s1a["get"]["p99.9"], s1b["get"]["p99.9"], bench.ratio(s1a["get"]["p99.9"], s1b["get"]["p99.9"])))
        if len(pair) > 2:
            c = pair[2]
            print("%-15s ratio %s/%s p99.9 SET %.2f GET %.2f" % (
                "", BASE_NAME, bench.B_NAME, bench.ratio(c["set"]["p99.9"], b["set"]["p99.9"]) if "set" in c and "set" in b else float("nan"),
                bench.ratio(c["get"]["p99.9"], b["get"]["p99.9"]) if "get" in c and "get" in b else float("nan")))
        sys.stdout.flush()


def big(args, results):
    rounds = bench.env_int("BENCH_BIG_ROUNDS", 5)
    sizes = ((1 << 20, bench.env_int("BENCH_BIG1_N", 200)), (10 << 20, bench.env_int("BENCH_BIG10_N", 30)))
    print("\n== big values: redis-benchmark -c 2 -d SIZE -t set, then -t get; %d rounds, servers alternating;"
          " load average at start: %s" % (rounds, " ".join(open("/proc/loadavg").read().split()[:3])))
    print("(ops/s: median of the rounds; cpu: server CPU ms per request, median of the rounds, all threads)")
    print("%-5s %-4s %5s %10s %10s %6s %9s %9s %6s" % ("size", "op", "n", bench.A_NAME + " op/s",
                                                       bench.B_NAME + " op/s", "ratio", bench.A_NAME + " cpu",
                                                       bench.B_NAME + " cpu", "ratio"))
    srv = [bench.Srv(bench.A_BIN, bench.A_NAME), bench.Srv(bench.B_BIN, bench.B_NAME)]
    try:
        for size, n in sizes:
            got = {(i, op): ([], []) for i in range(2) for op in ("SET", "GET")}
            for k in range(rounds):
                order = (0, 1) if k % 2 == 0 else (1, 0)
                for i in order:
                    s = srv[i]
                    for op in ("SET", "GET"):
                        c0 = s.cpu_ns()
                        out = rb(s.port, "-c", 2, "-n", n, "-d", size, "-t", op.lower(), "--csv").stdout
                        cpu = (s.cpu_ns() - c0) / n / 1e6
                        ops = float("nan")
                        for line in out.decode().splitlines():
                            parts = [x.strip('"') for x in line.split(",")]
                            if len(parts) >= 2 and parts[0] == op:
                                ops = float(parts[1])
                        got[(i, op)][0].append(ops)
                        got[(i, op)][1].append(cpu)
            for op in ("SET", "GET"):
                a_ops, a_cpu = (statistics.median(v) for v in got[(0, op)])
                b_ops, b_cpu = (statistics.median(v) for v in got[(1, op)])
                results.append({"size": size, "op": op, "n": n, "rounds": rounds, "a_ops": got[(0, op)][0],
                                "b_ops": got[(1, op)][0], "a_cpu": got[(0, op)][1], "b_cpu": got[(1, op)][1]})
                print("%-5s %-4s %5d %10.1f %10.1f %6.2f %9.3f %9.3f %6.2f" % (
                    "%dMB" % (size >> 20), op, n, a_ops, b_ops, bench.ratio(a_ops, b_ops), a_cpu, b_cpu,
                    bench.ratio(a_cpu, b_cpu)))
                sys.stdout.flush()
    finally:
        for s in srv:
            s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="?", default="all", choices=["stalls", "big", "all"])
    ap.add_argument("--keys", type=int, default=bench.env_int("BENCH_LAT_KEYS", 1000000),
                    help="keys of the load, flush and bgsave scenarios (the issue's figure: 10000000)")
    ap.add_argument("--expire", type=int, default=1000000, help="keys expiring in the same second")
    ap.add_argument("--big", type=int, default=1000000, help="fields of the hash / members of the sorted set"
                    " (the issue's figure: 5000000)")
    ap.add_argument("--only", default="", help="comma list of scenarios")
    ap.add_argument("--json", default="", help="write the figures there too")
    ap.add_argument("--rate", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    global SERVER_PREFIX
    if CLIENT_CORE is not None:
        # The clients (this process, its probe thread, every redis-benchmark
        # it starts) on one core; the servers, all their threads, anywhere.
        everywhere = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
        SERVER_PREFIX = ["taskset", "-c", everywhere]
        os.sched_setaffinity(0, {CLIENT_CORE})
        print("clients pinned to core %d (BENCH_LAT_CLIENT_CORE), servers on cores %s" % (CLIENT_CORE, everywhere))
    print("A=%s (%s)  B=%s (%s)" % (bench.A_NAME, bench.A_BIN, bench.B_NAME, bench.B_BIN))
    results = []
    if args.what in ("stalls", "all"):
        stalls(args, results)
    if args.what in ("big", "all"):
        big(args, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
