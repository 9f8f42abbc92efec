#!/usr/bin/env python3
"""cluster_hot_slot.py -- a hot hash slot against a spread keyspace, in
cluster mode and not, for two server binaries (issue 36, the keyspace's
slot layout).

Each server (cluster-enabled yes with every slot assigned to itself, or
no) is loaded with 100,000 keys under one hash tag ("{q}:%012d", one slot,
as a BullMQ queue's) and 100,000 spread keys ("k:%012d"), then sent GETs
and SETs of existing keys (redis-benchmark's __rand_int__ over the same
100,000 numbers) of one family at a time:

  - instructions per request under callgrind (one connection, -P 16),
    counted inside processCommand only (the command's own work: lookup,
    change, reply; not the socket I/O nor the timers, whose share depends
    on wall time), each phase (GET hot, GET spread, SET hot, SET spread)
    between a zero and a dump of the counters (callgrind_control);
  - requests per second without callgrind (redis-benchmark -P 16, the
    median of BENCH_HS_ROUNDS rounds).

Usage: bench/cluster_hot_slot.py [NEW_BIN [BASE_BIN]]
  defaults build/cairn-server and /work/wt/cairn-base2 (main at 17bf6a2).
       bench/cluster_hot_slot.py memory [BIN...]
  bytes per key (used_memory after DEBUG POPULATE N minus before, once the
  rehash is done) standalone and in cluster mode, N = 1000000, 750000 and
  100000 (BENCH_HS_MEM_N: a comma-separated list).
Environment: BENCH_HS_N (requests per callgrind phase, 20000),
BENCH_HS_RPS_N (per throughput run, 200000), BENCH_HS_ROUNDS (3),
BENCH_HS_CG=0 to skip callgrind, BENCH_HS_CG_SKIP=name:mode,... to skip
it for some (e.g. base:cluster).  Nothing is asserted: it prints tables."""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

KEYS = 100000
PHASES = [("GET", "hot"), ("GET", "spread"), ("SET", "hot"), ("SET", "spread")]
PATTERN = {"hot": "{q}:", "spread": "k:"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, cluster, prefix=()):
        self.tmp = tempfile.mkdtemp(prefix="cairn-hotslot-")
        self.port = free_port()
        self.log = os.path.join(self.tmp, "log")
        args = list(prefix) + [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.tmp,
                               "--save", "", "--appendonly", "no", "--logfile", "", "--daemonize", "no",
                               "--enable-debug-command", "yes"]
        if cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", os.path.join(self.tmp, "nodes.conf"),
                     "--cluster-port", str(free_port())]
        with open(self.log, "wb") as f:
            self.proc = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=self.tmp)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited:\n%s" % (args, open(self.log).read()))
            try:
                if self.cmd("PING") == b"+PONG":
                    break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError("%s not ready" % args)
        if cluster:
            assert self.cmd("CLUSTER", "ADDSLOTSRANGE", "0", "16383") == b"+OK"
            deadline = time.monotonic() + 60  # the state turns ok on the node's next cron
            while self.cmd("GET", "x").startswith(b"-CLUSTERDOWN"):
                if time.monotonic() > deadline:
                    raise RuntimeError("cluster state never ok")
                time.sleep(0.05)

    def cmd(self, *args):
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sk:
            sk.sendall(resp(args))
            return read_line(sk)

    def load(self):
        """KEYS keys of each family, pipelined in batches."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=600) as sk:
            for fam in ("hot", "spread"):
                for lo in range(0, KEYS, 1000):
                    buf = b"".join(resp(("SET", "%s%012d" % (PATTERN[fam], i), "xxx"))
                                   for i in range(lo, lo + 1000))
                    sk.sendall(buf)
                    got = b""
                    while got.count(b"\r\n") < 1000:
                        chunk = sk.recv(1 << 16)
                        if not chunk:
                            raise RuntimeError("load: connection closed")
                        got += chunk
        n = self.cmd("DBSIZE")
        assert n == b":%d" % (2 * KEYS), n
        # Let the key tables finish growing: a rehash left over from the
        # load would otherwise land in whichever phase runs next (up to
        # 1,000 instructions per request here).
        deadline = time.monotonic() + 600
        while b"rehashing target" in self.full("DEBUG", "HTSTATS", "0"):
            if time.monotonic() > deadline:
                raise RuntimeError("key tables still rehashing")
            time.sleep(0.2)

    def full(self, *args):
        """A bulk or verbatim reply's bytes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=600) as sk:
            sk.sendall(resp(args))
            got = b""
            while True:
                chunk = sk.recv(1 << 16)
                if not chunk:
                    break
                got += chunk
                head, sep, body = got.partition(b"\r\n")
                if sep and head[:1] in (b"$", b"=") and len(body) >= int(head[1:]) + 2:
                    return body
                if sep and head[:1] not in (b"$", b"="):
                    raise RuntimeError("%s: %r" % (args, head))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def resp(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_line(sk):
    got = b""
    while not got.endswith(b"\r\n"):
        chunk = sk.recv(4096)
        if not chunk:
            break
        got += chunk
    return got.split(b"\r\n")[0]


def bench_args(port, n, op, fam, clients, pipeline=16):
    key = PATTERN[fam] + "__rand_int__"
    cmd = [op, key] if op == "GET" else [op, key, "xxx"]
    return ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(n), "-P", str(pipeline), "-r",
            str(KEYS), "-q", "--csv"] + cmd


def run_phase(port, n, op, fam, clients=50):
    r = subprocess.run(bench_args(port, n, op, fam, clients), capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError("redis-benchmark failed: %s" % r.stderr)
    for line in r.stdout.splitlines():
        parts = [p.strip('"') for p in line.split(",")]
        if len(parts) > 1 and parts[1].replace(".", "").isdigit():
            return float(parts[1])
    return float("nan")


def callgrind_totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return 0


def instructions(binary, cluster, n):
    """Instructions per request of each phase, counted only inside
    processCommand (--toggle-collect): the command's own work, without the
    I/O, the timers or the idle loop, whose share depends on wall time.
    One server: loaded, settled, then per phase the counters are zeroed
    (callgrind_control -z) and dumped (-d) around it."""
    d = tempfile.mkdtemp(prefix="cairn-hotslot-cg-")
    out = os.path.join(d, "cg.out")
    s = Server(binary, cluster, ["valgrind", "--tool=callgrind", "--toggle-collect=processCommand",
                                 "--callgrind-out-file=" + out + ".%p"])
    pid = s.proc.pid
    assert isinstance(pid, int) and pid > 0  # callgrind_control without a pid acts on every callgrind
    per = []
    try:
        s.load()
        for op, fam in PHASES:
            subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True, timeout=120)
            before = set(os.listdir(d))
            # one connection: the same batches whatever the server's speed
            run_phase(s.port, n, op, fam, clients=1)
            subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True, timeout=120)
            deadline = time.monotonic() + 120
            while not set(os.listdir(d)) - before and time.monotonic() < deadline:
                time.sleep(0.1)
            dump = sorted(set(os.listdir(d)) - before)
            assert len(dump) == 1, dump
            time.sleep(0.5)  # written whole
            per.append(callgrind_totals(os.path.join(d, dump[0])) / n)
    finally:
        s.stop()
        shutil.rmtree(d, ignore_errors=True)
    return per


def throughput(binary, cluster, n, rounds):
    s = Server(binary, cluster)
    try:
        s.load()
        res = []
        for op, fam in PHASES:
            res.append(statistics.median(run_phase(s.port, n, op, fam) for _ in range(rounds)))
        return res
    finally:
        s.stop()


def info_field(srv, section, field):
    with socket.create_connection(("127.0.0.1", srv.port), timeout=600) as sk:
        sk.sendall(resp(("INFO", section)))
        got = b""
        while True:
            chunk = sk.recv(1 << 16)
            if not chunk:
                break
            got += chunk
            head, sep, body = got.partition(b"\r\n")
            if sep and len(body) >= int(head[1:]) + 2:
                break
    for line in body.decode().splitlines():
        k, _, v = line.partition(":")
        if k == field:
            return v
    raise KeyError(field)


def memory(binaries):
    counts = [int(x) for x in os.environ.get("BENCH_HS_MEM_N", "1000000,750000,100000").split(",")]
    print("== bytes per key after DEBUG POPULATE N (used_memory after minus before)")
    print("%-28s %9s %10s %10s %7s" % ("binary", "N", "standalone", "cluster", "diff"))
    for binary in binaries:
        for n in counts:
            per = []
            for cluster in (False, True):
                s = Server(binary, cluster)
                try:
                    before = int(info_field(s, "memory", "used_memory"))
                    assert s.cmd("DEBUG", "POPULATE", str(n), "key") == b"+OK"
                    deadline = time.monotonic() + 60  # until no key table is rehashing
                    while time.monotonic() < deadline:
                        a = int(info_field(s, "memory", "used_memory"))
                        time.sleep(0.5)
                        if int(info_field(s, "memory", "used_memory")) == a:
                            break
                    per.append((int(info_field(s, "memory", "used_memory")) - before) / n)
                finally:
                    s.stop()
            print("%-28s %9d %10.2f %10.2f %+7.2f" % (binary[-28:], n, per[0], per[1], per[1] - per[0]))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "memory":
        memory(sys.argv[2:] or ["build/cairn-server", "/work/wt/cairn-base2"])
        return
    new = sys.argv[1] if len(sys.argv) > 1 else "build/cairn-server"
    base = sys.argv[2] if len(sys.argv) > 2 else "/work/wt/cairn-base2"
    n = int(os.environ.get("BENCH_HS_N", 20000))
    rps_n = int(os.environ.get("BENCH_HS_RPS_N", 200000))
    rounds = int(os.environ.get("BENCH_HS_ROUNDS", 3))
    cg = os.environ.get("BENCH_HS_CG", "1") != "0" and shutil.which("valgrind")
    # e.g. BENCH_HS_CG_SKIP=base:cluster: loading 100,000 keys of one slot
    # into the old single table (chains of thousands) takes over 20 minutes
    # under callgrind
    skip = os.environ.get("BENCH_HS_CG_SKIP", "").split(",")
    rows = []
    for name, binary in (("new", new), ("base", base)):
        for cluster in (False, True):
            mode = "cluster" if cluster else "standalone"
            ins = [float("nan")] * len(PHASES)
            if cg and "%s:%s" % (name, mode) not in skip:
                ins = instructions(binary, cluster, n)
            rps = throughput(binary, cluster, rps_n, rounds)
            for (op, fam), i, r in zip(PHASES, ins, rps):
                rows.append((name, "cluster" if cluster else "standalone", op, fam, i, r))
                print("%-5s %-10s %-4s %-6s %8.0f instr/req %10.0f req/s" % rows[-1], file=sys.stderr)
    print("\n== hot slot vs spread: %d keys under {q} + %d spread; GET/SET of existing keys, "
          "-P 16 (instructions inside processCommand: callgrind, -c 1, N=%d; req/s: -c 50, median of %d runs of %d)" %
          (KEYS, KEYS, n, rounds, rps_n))
    print("%-5s %-10s %-4s %8s %8s %7s %10s %10s %7s" %
          ("bin", "mode", "op", "ins hot", "ins spr", "hot/spr", "rps hot", "rps spr", "hot/spr"))
    table = {(r[0], r[1], r[2], r[3]): r for r in rows}
    for name in ("new", "base"):
        for mode in ("standalone", "cluster"):
            for op in ("GET", "SET"):
                h, sp = table[(name, mode, op, "hot")], table[(name, mode, op, "spread")]
                print("%-5s %-10s %-4s %8.0f %8.0f %7.2f %10.0f %10.0f %7.2f" %
                      (name, mode, op, h[4], sp[4], h[4] / sp[4], h[5], sp[5], h[5] / sp[5]))


if __name__ == "__main__":
    main()
