#!/usr/bin/python3
"""Cluster benchmarks (issue 36's Performance section), Cairn (CAIRN_BIN)
beside redis-server (ORACLE_BIN) in one run:

  (a) instructions per request of GET/SET on a 3-primary cluster driven by
      `redis-benchmark --cluster`, the sum over the 3 nodes under callgrind
      divided by the requests, beside Cairn standalone (same load);
  (b) wall time of `redis-cli --cluster reshard` moving every slot, and so
      every key, of one primary holding N keys to a second one;
  (c) memory per key after DEBUG POPULATE N, standalone and cluster mode.

Usage: cluster.py [instructions|migrate|memory|all]; knobs in
bench/README.md ("Cluster").  Servers and load generators are those of
bench.py (Srv, callgrind_total); the cluster is created as users do, with
`redis-cli --cluster create`.
"""
import os
import subprocess
import sys
import tempfile
import time
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402


def cli(port, *args, timeout=600):
    """redis-cli against port; raises on an error reply."""
    r = subprocess.run(["redis-cli", "-p", str(port)] + [str(a) for a in args],
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if r.stdout.startswith(b"ERR") or r.stdout.startswith(b"(error)"):
        raise RuntimeError("redis-cli %s: %s" % (" ".join(map(str, args)), r.stdout.decode(errors="replace")))
    return r


def cluster_args():
    return ["--enable-debug-command", "yes", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-port", str(B.free_port()), "--cluster-node-timeout", "15000"]


def wait_cluster_ok(srvs, timeout=600):
    """Every node says cluster_state:ok and knows every node."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ok = True
        for s in srvs:
            out = cli(s.port, "CLUSTER", "INFO").stdout.decode(errors="replace")
            if "cluster_state:ok" not in out or "cluster_known_nodes:%d" % len(srvs) not in out:
                ok = False
                break
        if ok:
            return
        time.sleep(0.2)
    raise RuntimeError("cluster not ok after %ds" % timeout)


def start_cluster(binary, name, n, prefix=()):
    """n primaries of binary, created with redis-cli --cluster create."""
    srvs = []
    try:
        for i in range(n):
            srvs.append(B.Srv(binary, "%s-c%d" % (name, i), prefix, cluster_args()))
        r = subprocess.run(["redis-cli", "--cluster", "create"] +
                           ["127.0.0.1:%d" % s.port for s in srvs] + ["--cluster-yes"],
                           capture_output=True, timeout=900, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("cluster create failed: %s" % r.stdout.decode(errors="replace")[-2000:])
        wait_cluster_ok(srvs)
    except BaseException:
        for s in srvs:
            s.stop()
        raise
    return srvs


def cluster_load(port, test, n, pipeline):
    cmd = ["redis-benchmark", "--cluster", "-p", str(port), "-c", "50", "-n", str(n),
           "-P", str(pipeline), "-q", "--csv", "-t", test]
    return subprocess.run(cmd, capture_output=True, timeout=3600, stdin=subprocess.DEVNULL)


# ------------------------------------------------------------ (a) instructions

def cg_cluster_run(binary, name, workload, idle_seconds=0.0):
    """A 3-node cluster under callgrind: created, settled 1 s, then the
    workload (benchmark tests) or an idle sleep; all stopped.  Returns
    (instructions of the 3 nodes, wall seconds of the workload part)."""
    out = os.path.join(tempfile.mkdtemp(prefix="cairn-cgc-"), "cg.out")
    prefix = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p"]
    srvs = start_cluster(binary, name, 3, prefix)
    n = B.env_int("BENCH_CG_N", 20000)
    try:
        time.sleep(1.0)
        t0 = time.monotonic()
        for t in workload:
            r = cluster_load(srvs[0].port, t, n, B.env_int("BENCH_CG_PIPELINE", 16))
            if r.returncode != 0:
                print("redis-benchmark --cluster failed: %s" % r.stderr.decode(errors="replace"),
                      file=sys.stderr)
        if not workload:
            time.sleep(idle_seconds)
        wall = time.monotonic() - t0
    finally:
        for s in srvs:
            s.stop(timeout=600)
    total = B.callgrind_total(out)
    shutil.rmtree(os.path.dirname(out), ignore_errors=True)
    return total, wall


def per_request(runner, tests, n):
    """Instructions per request of each test: run k does tests[:k]; the
    idle cost per second (from a run that sleeps as long as the first
    workload took) is taken off each step's extra wall time."""
    i_0, _ = runner([], 0)
    runs = [runner(tests[:k + 1], 0) for k in range(len(tests))]
    i_idle, w_idle = runner([], runs[0][1])
    rate = max(0.0, (i_idle - i_0) / max(w_idle, 1e-3))
    prev_i, prev_w, per = i_0, 0.0, []
    for i_k, w_k in runs:
        per.append((i_k - prev_i - rate * (w_k - prev_w)) / n)
        prev_i, prev_w = i_k, w_k
    return per, rate


def instructions():
    if not shutil.which("valgrind"):
        print("\n== cluster instructions: skipped (no valgrind)")
        return
    n = B.env_int("BENCH_CG_N", 20000)
    tests = [t for t in os.environ.get("BENCH_CLUSTER_TESTS", "set,get").split(",") if t]
    rows = {}
    rows["cairn cluster"] = per_request(lambda w, idle: cg_cluster_run(B.A_BIN, B.A_NAME, w, idle), tests, n)
    rows["redis cluster"] = per_request(lambda w, idle: cg_cluster_run(B.B_BIN, B.B_NAME, w, idle), tests, n)
    rows["cairn standalone"] = per_request(lambda w, idle: B.callgrind_run(B.A_BIN, B.A_NAME, w, idle), tests, n)
    print("\n== cluster: instructions per request (callgrind, sum of the 3 primaries; "
          "redis-benchmark --cluster -c 50 -P %d, N=%d; workload run minus idle)" %
          (B.env_int("BENCH_CG_PIPELINE", 16), n))
    print("%-6s %14s %14s %16s %10s %10s" % ("test", "cairn cluster", "redis cluster", "cairn standalone",
                                             "vs stand.", "vs redis"))
    for i, t in enumerate(tests):
        c, r, s = rows["cairn cluster"][0][i], rows["redis cluster"][0][i], rows["cairn standalone"][0][i]
        print("%-6s %14.0f %14.0f %16.0f %10.3f %10.3f" % (t.upper(), c, r, s, c / s, c / r))
    print("(idle instructions per second: %s)" % ", ".join("%s %.0f" % (k, v[1]) for k, v in rows.items()))


# ------------------------------------------------------------ (b) migration

def migrate_run(binary, name, nkeys):
    """Two primaries; the first holds every slot and nkeys keys; the time
    `redis-cli --cluster reshard` takes to move all 16384 slots to the
    second.  Returns (seconds, keys on the second afterwards)."""
    srvs = [B.Srv(binary, "%s-m%d" % (name, i), (), cluster_args()) for i in range(2)]
    try:
        a, b = srvs
        cli(a.port, "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        cli(b.port, "CLUSTER", "MEET", "127.0.0.1", a.port, a.proc.args[a.proc.args.index("--cluster-port") + 1])
        wait_cluster_ok(srvs)
        cli(a.port, "DEBUG", "POPULATE", nkeys, timeout=3600)
        bid = cli(b.port, "CLUSTER", "MYID").stdout.decode().strip()
        aid = cli(a.port, "CLUSTER", "MYID").stdout.decode().strip()
        cmd = ["redis-cli", "--cluster", "reshard", "127.0.0.1:%d" % a.port, "--cluster-from", aid,
               "--cluster-to", bid, "--cluster-slots", "16384", "--cluster-yes",
               "--cluster-pipeline", str(B.env_int("BENCH_MIG_PIPELINE", 10))]
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=7200,
                           stdin=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        if r.returncode != 0:
            raise RuntimeError("reshard failed: %s" % r.stderr.decode(errors="replace")[-2000:])
        moved = int(cli(b.port, "DBSIZE").stdout.decode().strip() or 0)
        return wall, moved
    finally:
        for s in srvs:
            s.stop()


def migrate():
    nkeys = B.env_int("BENCH_MIG_KEYS", 1000000)
    rounds = B.env_int("BENCH_MIG_ROUNDS", 1)
    res = {B.A_NAME: [], B.B_NAME: []}
    for k in range(rounds):
        order = ((B.A_BIN, B.A_NAME), (B.B_BIN, B.B_NAME))
        for binary, name in (order if k % 2 == 0 else order[::-1]):
            wall, moved = migrate_run(binary, name, nkeys)
            if moved != nkeys:
                raise RuntimeError("%s: %d of %d keys moved" % (name, moved, nkeys))
            res[name].append(wall)
    a, b = sorted(res[B.A_NAME])[rounds // 2], sorted(res[B.B_NAME])[rounds // 2]
    print("\n== cluster: slot migration, redis-cli --cluster reshard of all 16384 slots holding "
          "%d keys (DEBUG POPULATE) between two primaries, --cluster-pipeline %d; median of %d" %
          (nkeys, B.env_int("BENCH_MIG_PIPELINE", 10), rounds))
    print("%-8s %10s %10s %8s" % ("", B.A_NAME, B.B_NAME, "ratio"))
    print("%-8s %9.2fs %9.2fs %8.3f" % ("wall", a, b, a / b))


# ------------------------------------------------------------ (c) memory

def used_memory(port):
    for line in cli(port, "INFO", "memory").stdout.decode(errors="replace").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return 0


def memory_run(binary, name, nkeys, cluster):
    s = B.Srv(binary, "%s-mem" % name, (), cluster_args() if cluster else ["--enable-debug-command", "yes"])
    try:
        if cluster:
            cli(s.port, "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        before = used_memory(s.port)
        cli(s.port, "DEBUG", "POPULATE", nkeys, timeout=3600)
        return (used_memory(s.port) - before) / nkeys
    finally:
        s.stop()


def memory():
    nkeys = B.env_int("BENCH_CLUSTER_MEM_KEYS", 1000000)
    print("\n== cluster: memory per key (used_memory delta / keys after DEBUG POPULATE %d)" % nkeys)
    print("%-8s %12s %12s %10s" % ("", "standalone", "cluster", "difference"))
    for binary, name in ((B.A_BIN, B.A_NAME), (B.B_BIN, B.B_NAME)):
        st, cl = memory_run(binary, name, nkeys, False), memory_run(binary, name, nkeys, True)
        print("%-8s %12.2f %12.2f %+10.2f" % (name, st, cl, cl - st))


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    print("A=%s (%s)  B=%s (%s)" % (B.A_NAME, B.A_BIN, B.B_NAME, shutil.which(B.B_BIN) or B.B_BIN))
    if what in ("memory", "all"):
        memory()
    if what in ("migrate", "all"):
        migrate()
    if what in ("instructions", "all"):
        instructions()


if __name__ == "__main__":
    main()
