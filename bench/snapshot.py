"""Snapshot under overwrites: Cairn against Debian's redis-server, one run.

Issue 42 ("Snapshots without a second copy").  For each server:
  1. fill BENCH_SNAP_KEYS keys (default 2,000,000; the issue's figure is
     5,000,000), a quarter each of 100-byte strings, hashes of 5 fields,
     sorted sets of 5 members and lists of 5 items (redis-cli --pipe);
  2. the dataset's resident size: the server's PSS (/proc/PID/smaps_rollup)
     once the fill has settled;
  3. BGSAVE while 16 clients (four redis-benchmark processes of four, one per
     type: SET, HSET, ZADD, LSET on random existing keys) overwrite as fast
     as they can, until the save ends;
  4. every 20 ms: the PSS of the server and all its children, summed (the
     peak is reported relative to step 2's base), and whether the save is
     still running (INFO persistence);
  5. writes per second during the save: the servers' own commandstats
     (calls of set/hset/zadd/lset) across the save, over its wall time.
With BENCH_SNAP_SYNC=diskless or disk, step 3 is a full sync to a replica
instead of BGSAVE (a second server of the same binary and arguments, started
empty, REPLICAOF the first with repl-diskless-sync yes / no and no delay):
the primary's PSS and its children's, and its writes per second, from the
REPLICAOF until its save (for diskless: the transfer) ends.
Both servers run under the same conditions, one after the other, in the
same run; print the ratio Cairn / Redis.  Figures on a shared machine are
indicative: repeat with BENCH_SNAP_ROUNDS.

  sh bench/run.sh snapshot            (or: python3 bench/snapshot.py)
  BENCH_SNAP_KEYS=5000000 sh bench/run.sh snapshot
  BENCH_CAIRN_ARGS="--rdb-save-threads 2" sh bench/run.sh snapshot
  BASE_BIN=/path/to/older/cairn-server sh bench/run.sh snapshot   (three servers)
  BENCH_SNAP_SYNC=diskless sh bench/run.sh snapshot      (a full sync instead of BGSAVE)
  BENCH_CAIRN_ARGS="--cairn-snapshot inline" BASE_BIN=build/cairn-server \
    BENCH_BASE_ARGS="--cairn-snapshot fork" sh bench/run.sh snapshot  (no fork / fork / Redis)
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CAIRN = os.environ.get("CAIRN_BIN", "build/cairn-server")
REDIS = os.environ.get("ORACLE_BIN", "redis-server")
KEYS = int(os.environ.get("BENCH_SNAP_KEYS", "2000000"))
CLIENTS = int(os.environ.get("BENCH_SNAP_CLIENTS", "16"))
ROUNDS = int(os.environ.get("BENCH_SNAP_ROUNDS", "1"))
CAIRN_ARGS = os.environ.get("BENCH_CAIRN_ARGS", "").split()
# "base" is a second Cairn binary (BASE_BIN), e.g. the one before a change.
BASE = os.environ.get("BASE_BIN", "")
BASE_ARGS = os.environ.get("BENCH_BASE_ARGS", "").split()
SERVERS = os.environ.get("BENCH_SNAP_SERVERS", "cairn,base,redis" if BASE else "cairn,redis").split(",")
SYNC = os.environ.get("BENCH_SNAP_SYNC", "")  # "", "disk" or "diskless"
SAMPLE_S = 0.02
VALUE = "v" * 100
TYPES = ("s", "h", "z", "l")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Conn:
    """A minimal RESP client (inline commands, one reply) for INFO polling:
    cheaper than starting redis-cli every 20 ms."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        out = ["*%d\r\n" % len(args)]
        for a in args:
            a = str(a)
            out.append("$%d\r\n%s\r\n" % (len(a.encode()), a))
        self.s.sendall("".join(out).encode())
        return self.reply()

    def reply(self):
        line = self.f.readline()
        if not line:
            raise RuntimeError("connection closed")
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b":"):
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2].decode(errors="replace")
        if t == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply %r" % line)


def info(conn, section):
    out = {}
    for line in conn.cmd("INFO", section).splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def tree_pss_kb(pid):
    """PSS of pid and its descendants, summed (shared pages split among
    the processes that map them, so the sum counts each page once)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += pss_kb(p)
        todo += children(p)
    return total


def resp(*args):
    out = ["*%d\r\n" % len(args)]
    for a in args:
        a = str(a)
        out.append("$%d\r\n%s\r\n" % (len(a.encode()), a))
    return "".join(out)


def gen(path):
    """The fill: KEYS keys, a quarter of each type, named t:%012d as
    redis-benchmark's __rand_int__ spells them."""
    per = KEYS // 4
    with open(path, "w") as f:
        for i in range(per):
            k = "%012d" % i
            f.write(resp("SET", "s:" + k, VALUE))
            f.write(resp("HSET", "h:" + k, "f0", i, "f1", "a" * 20, "f2", "b", "f3", i * 3, "f4", "c" * 30))
            f.write(resp("ZADD", "z:" + k, 1, "m0", 2, "m1", 3, "m2" + k, 4, "m3", 5, "m4"))
            f.write(resp("RPUSH", "l:" + k, "i0", "i1" + k, "i2", "item3", "i4"))
    return per * 4


def writers(port):
    """Four redis-benchmark processes, CLIENTS/4 connections each, one per
    type, overwriting random existing keys (in place: same type, same
    size) until killed."""
    per = KEYS // 4
    c = max(1, CLIENTS // 4)
    cmds = [
        ["SET", "s:__rand_int__", VALUE],
        ["HSET", "h:__rand_int__", "f0", "__rand_int__"],
        ["ZADD", "z:__rand_int__", "7", "m0"],
        ["LSET", "l:__rand_int__", "0", "x0"],
    ]
    procs = []
    for cmd in cmds:
        procs.append(subprocess.Popen(
            ["redis-benchmark", "-p", str(port), "-c", str(c), "-n", "1000000000", "-r", str(per), "-q"] + cmd,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    return procs


def write_calls(conn):
    st = info(conn, "commandstats")
    n = 0
    for name in ("set", "hset", "zadd", "lset"):
        v = st.get("cmdstat_" + name)
        if v:
            n += int(re.search(r"calls=(\d+)", v).group(1))
    return n


def start_server(binary, port, d, extra):
    """A server on port in directory d, and a connection once it answers
    PING (60 s at most)."""
    proc = subprocess.Popen([binary, "--port", str(port), "--dir", d, "--save", "", "--appendonly", "no",
                             "--logfile", os.path.join(d, "log")] + extra,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            conn = Conn(port)
            conn.cmd("PING")
            return proc, conn
        except OSError:
            if time.time() > deadline:
                proc.kill()
                proc.wait()
                raise
            time.sleep(0.05)


def run_one(name, binary, extra, fill_path):
    d = tempfile.mkdtemp(prefix="cairn-bench-snap-")
    port = free_port()
    proc = replica = None
    try:
        proc, conn = start_server(binary, port, d, extra)
        with open(fill_path, "rb") as f:
            subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=f, stdout=subprocess.DEVNULL,
                           check=True, timeout=3600)
        nkeys = int(conn.cmd("DBSIZE"))
        time.sleep(1)
        base = tree_pss_kb(proc.pid)
        ws = writers(port)
        time.sleep(1.0)  # the writers connected and at full rate
        calls0 = write_calls(conn)
        t0 = time.time()
        if SYNC:
            conn.cmd("CONFIG", "SET", "repl-diskless-sync", "yes" if SYNC == "diskless" else "no")
            conn.cmd("CONFIG", "SET", "repl-diskless-sync-delay", "0")
            rport = free_port()
            rdir = os.path.join(d, "replica")
            os.mkdir(rdir)
            replica, rconn = start_server(binary, rport, rdir, extra)
            t0 = time.time()
            rconn.cmd("REPLICAOF", "127.0.0.1", port)
            while (info(conn, "persistence").get("rdb_bgsave_in_progress") != "1" and
                   info(rconn, "replication").get("master_link_status") != "up"):
                if time.time() - t0 > 60:
                    raise RuntimeError("sync did not start")
                time.sleep(0.005)
        else:
            conn.cmd("BGSAVE")
        peak = base
        while True:
            peak = max(peak, tree_pss_kb(proc.pid))
            if info(conn, "persistence").get("rdb_bgsave_in_progress") == "0":
                break
            time.sleep(SAMPLE_S)
            if time.time() - t0 > 3600:
                raise RuntimeError("save did not end")
        dt = time.time() - t0
        calls1 = write_calls(conn)
        for p in ws:
            os.killpg(p.pid, signal.SIGTERM)
        for p in ws:
            p.wait(timeout=30)
        ok = info(conn, "persistence").get("rdb_last_bgsave_status")
        if SYNC:
            rdeadline = time.time() + 600
            while info(rconn, "replication").get("master_link_status") != "up":
                if time.time() > rdeadline:
                    raise RuntimeError("replica did not come up")
                time.sleep(0.1)
            ok = "%s,up" % ok
            replica.terminate()
            replica.wait(timeout=60)
        return {"server": name, "keys": nkeys, "base_mb": base / 1024.0, "peak_mb": peak / 1024.0,
                "ratio": peak / float(base), "save_s": dt, "writes_s": (calls1 - calls0) / dt, "status": ok}
    finally:
        if replica and replica.poll() is None:
            replica.kill()
            replica.wait()
        if proc:
            try:
                subprocess.run(["redis-cli", "-p", str(port), "SHUTDOWN", "NOSAVE"], capture_output=True, timeout=30)
            except Exception:
                pass
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def main():
    tmp = tempfile.mkdtemp(prefix="cairn-bench-snapfill-")
    try:
        fill = os.path.join(tmp, "fill.resp")
        gen(fill)
        print("%s under overwrites: %d keys (strings, hashes, zsets, lists), %d writers" % (
            "full sync (%s)" % SYNC if SYNC else "snapshot", KEYS, CLIENTS))
        print("%-8s %5s %9s %9s %11s %8s %11s %6s" % ("server", "round", "base_MB", "peak_MB", "peak/base",
                                                      "save_s", "writes/s", "status"))
        res = {}
        for r in range(ROUNDS):
            for name in SERVERS:
                binary, extra = {"cairn": (CAIRN, CAIRN_ARGS), "base": (BASE, BASE_ARGS)}.get(name, (REDIS, []))
                x = run_one(name, binary, extra, fill)
                res.setdefault(name, []).append(x)
                print("%-8s %5d %9.1f %9.1f %10.2fx %8.2f %11.0f %6s" % (name, r + 1, x["base_mb"], x["peak_mb"],
                                                                         x["ratio"], x["save_s"], x["writes_s"],
                                                                         x["status"]))
                sys.stdout.flush()
        if "cairn" in res and "redis" in res:
            def med(name, k):
                v = sorted(x[k] for x in res[name])
                return v[len(v) // 2]
            print("cairn/redis (medians): peak/base %.2f vs %.2f; writes/s during the save %.2fx; save time %.2fx" % (
                med("cairn", "ratio"), med("redis", "ratio"), med("cairn", "writes_s") / max(1, med("redis", "writes_s")),
                med("cairn", "save_s") / max(1e-9, med("redis", "save_s"))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
