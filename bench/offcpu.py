#!/usr/bin/python3
"""Who takes the CPU from a server's main thread, and for how long.

Usage: offcpu.py PID [--seconds S] [--over-ms MS]

Records the kernel's context switches on every CPU for S seconds (default
20; `perf record -e sched:sched_switch -a`, Debian's linux-perf, as root),
then reports for PID's main thread (thread id = PID): how many times it
was preempted (switched out while runnable), how many of those kept it off
the CPU longer than MS (default 0.8 ms), and which tasks ran on its CPU
meanwhile, by total time.  A slow-log entry over 1 ms whose thread CPU time
is a few tens of microseconds is one of these: read together with the
slow log of the same window.

Run it while a load runs against the server, e.g. bench/latency_inside.py's
SET/GET load, or by hand:
    redis-benchmark -p 6379 -c 4 -r 100000 -n 100000000 -t set -q &
    redis-benchmark -p 6379 -c 4 -r 100000 -n 100000000 -t get -q &
    python3 bench/offcpu.py $(pgrep -o cairn-server) --seconds 40
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

SWITCH = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<t>[\d.]+):\s+sched:sched_switch:\s+"
                    r"prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>\d+) prev_prio=\d+ prev_state=(?P<st>\S+) ==> "
                    r"next_comm=(?P<nc>.*?) next_pid=(?P<np>\d+) next_prio=\d+")


def switches(lines):
    """(time s, cpu, prev pid, prev state, next comm, next pid) per switch."""
    for ln in lines:
        m = SWITCH.match(ln)
        if m:
            yield (float(m["t"]), int(m["cpu"]), int(m["pp"]), m["st"], m["nc"], int(m["np"]))


def analyse(ev, main, over_ms):
    """Preemptions of `main`, those off the CPU over over_ms, and the time
    (ms) each task ran on the CPU main left during those."""
    preempted, long_ones, ran = 0, [], collections.Counter()
    for i, (t, cpu, pp, st, nc, np) in enumerate(ev):
        if pp != main or not st.startswith("R"):
            continue
        preempted += 1
        seq, last, cur, j = collections.Counter(), t, nc, i + 1
        while j < len(ev) and ev[j][5] != main:
            if ev[j][1] == cpu:
                seq[cur] += ev[j][0] - last
                last, cur = ev[j][0], ev[j][4]
            j += 1
        if j == len(ev):
            break
        off_ms = (ev[j][0] - t) * 1e3
        if off_ms > over_ms:
            if ev[j][1] == cpu:
                seq[cur] += ev[j][0] - last
            long_ones.append(off_ms)
            for k, v in seq.items():
                ran[k] += v * 1e3
    return preempted, long_ones, ran


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--over-ms", type=float, default=0.8)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "perf.data")
        subprocess.run(["perf", "record", "-q", "-e", "sched:sched_switch", "-a", "-o", data, "--",
                        "sleep", str(a.seconds)], check=True, stderr=subprocess.DEVNULL)
        out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,cpu,time,event,trace"],
                             capture_output=True, text=True, check=True).stdout
    ev = list(switches(out.splitlines()))
    if not ev:
        sys.exit("no sched_switch events recorded")
    preempted, long_ones, ran = analyse(ev, a.pid, a.over_ms)
    span = ev[-1][0] - ev[0][0]
    print("%.0f s: thread %d preempted %d times (%.0f/s); %d of them off the CPU over %.1f ms%s"
          % (span, a.pid, preempted, preempted / span if span else 0, len(long_ones), a.over_ms,
             " (longest %.2f ms)" % max(long_ones) if long_ones else ""))
    if ran:
        print("ran on its CPU meanwhile (ms): " + ", ".join("%s %.1f" % kv for kv in ran.most_common(8)))


if __name__ == "__main__":
    main()
