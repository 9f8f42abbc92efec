"""Persistence benchmark: Cairn against Debian's redis-server, side by side.

For each dataset shape (issue 18; scaled by BENCH_PERSIST_SCALE, default
0.1 on this shared 2-core machine):
  strings  5M small string keys
  hashes   1M hashes of 10 fields
  zsets    100k sorted sets of 100 members
  lists    10k lists of 1,000 items
it fills each server (redis-cli --pipe), times SAVE (wall clock of the
command), records the file size, then restarts the server on that file and
takes the load time from the server's own "DB loaded from disk: N seconds"
log line.  CPU time of the SAVE and of the load (utime + stime of
/proc/PID/stat: every thread, exited ones included, such as a threaded
save's workers; the load's minus an empty start's) is printed
too: on a loaded shared machine it moves far less than wall time.  Then a BGSAVE of BENCH_FORK_KEYS keys (default 1M, issue: 10M)
while redis-benchmark writes random keys with 50 clients: latest_fork_usec
and rdb_last_cow_size (the child's peak private dirty memory, which both
servers measure the same way from /proc).  Throughput figures on a shared
machine are indicative only.

  sh bench/run.sh persist        (or: python3 bench/persist.py)
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

CAIRN = os.environ.get("CAIRN_BIN", "build/cairn-server")
REDIS = os.environ.get("ORACLE_BIN", "redis-server")
SCALE = float(os.environ.get("BENCH_PERSIST_SCALE", "0.1"))
FORK_KEYS = int(os.environ.get("BENCH_FORK_KEYS", "1000000"))
# Extra arguments for Cairn only, e.g. "--rdb-save-threads 1" to time the
# single-threaded writer.
CAIRN_ARGS = os.environ.get("BENCH_CAIRN_ARGS", "").split()
BENCH_SHAPES = os.environ.get("BENCH_PERSIST_SHAPES", "strings,hashes,zsets,lists").split(",")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=3600).stdout.strip()


class Srv:
    def __init__(self, binary, d, extra=()):
        self.binary, self.dir, self.extra = binary, d, list(extra)
        self.port = free_port()
        self.log = os.path.join(d, "log")
        self.proc = None

    def start(self):
        args = [self.binary, "--port", str(self.port), "--dir", self.dir, "--save", "",
                "--appendonly", "no", "--logfile", self.log] + self.extra
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 600
        while time.time() < deadline:
            if cli(self.port, "PING") == "PONG":
                return
            time.sleep(0.05)
        raise RuntimeError("server did not start")

    def stop(self):
        cli(self.port, "SHUTDOWN", "NOSAVE")
        self.proc.wait(timeout=60)

    def cpu_seconds(self):
        """CPU time of the server so far, all its threads, those that have
        exited too (a threaded save's workers): utime + stime of
        /proc/PID/stat, in clock ticks.  Steadier than wall time on a
        loaded machine."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def main_thread_cpu_seconds(self):
        """The same for the main thread alone: a threaded load's critical
        path (its workers expand LZF strings beside it)."""
        with open("/proc/%d/task/%d/stat" % (self.proc.pid, self.proc.pid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def load_seconds(self):
        with open(self.log) as f:
            m = re.findall(r"DB loaded from disk: ([0-9.]+) seconds", f.read())
        return float(m[-1])


def resp(*args):
    out = ["*%d\r\n" % len(args)]
    for a in args:
        a = str(a)
        out.append("$%d\r\n%s\r\n" % (len(a.encode()), a))
    return "".join(out)


def gen(shape, path):
    """Writes the RESP commands of a dataset shape; returns the key count."""
    n = {"strings": 5000000, "hashes": 1000000, "zsets": 100000, "lists": 10000}[shape]
    n = max(1, int(n * SCALE))
    with open(path, "w") as f:
        for i in range(n):
            if shape == "strings":
                f.write(resp("SET", "key:%d" % i, "value:%d" % i))
            elif shape == "hashes":
                args = []
                for j in range(10):
                    args += ["field%d" % j, "v%d" % (i * 10 + j)]
                f.write(resp("HSET", "hash:%d" % i, *args))
            elif shape == "zsets":
                args = []
                for j in range(100):
                    args += [j * 1.5, "member:%d" % j]
                f.write(resp("ZADD", "zset:%d" % i, *args))
            else:
                for k in range(0, 1000, 250):
                    f.write(resp("RPUSH", "list:%d" % i, *["item:%d" % j for j in range(k, k + 250)]))
    return n


def fill(port, path):
    with open(path, "rb") as f:
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=f, capture_output=True, check=True,
                       timeout=3600)


def save_load(shape):
    tmp = tempfile.mkdtemp(prefix="cairn-bench-persist-")
    try:
        cmds = os.path.join(tmp, "cmds.resp")
        n = gen(shape, cmds)
        row = {"shape": shape, "keys": n}
        for name, binary in (("cairn", CAIRN), ("redis", REDIS)):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            s = Srv(binary, d, CAIRN_ARGS if name == "cairn" else ())
            s.start()
            fill(s.port, cmds)
            c0 = s.cpu_seconds()
            t0 = time.perf_counter()
            cli(s.port, "SAVE")
            save = time.perf_counter() - t0
            save_cpu = s.cpu_seconds() - c0
            s.stop()
            size = os.path.getsize(os.path.join(d, "dump.rdb"))
            # An empty start first: its CPU time is the start-up's share of
            # the loading start's.
            os.rename(os.path.join(d, "dump.rdb"), os.path.join(d, "keep.rdb"))
            s.start()
            idle_cpu = s.cpu_seconds()
            idle_main = s.main_thread_cpu_seconds()
            s.stop()
            os.rename(os.path.join(d, "keep.rdb"), os.path.join(d, "dump.rdb"))
            s.start()
            load = s.load_seconds()
            load_cpu = max(s.cpu_seconds() - idle_cpu, 1e-6)
            load_main = max(s.main_thread_cpu_seconds() - idle_main, 1e-6)
            s.stop()
            row[name] = (save, load, size, save_cpu, load_cpu, load_main)
        return row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def info_field(port, field):
    for line in cli(port, "INFO", "persistence").splitlines() + cli(port, "INFO", "stats").splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def fork_cow():
    tmp = tempfile.mkdtemp(prefix="cairn-bench-fork-")
    out = {}
    try:
        for name, binary in (("cairn", CAIRN), ("redis", REDIS)):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            s = Srv(binary, d, ["--enable-debug-command", "yes"])
            s.start()
            # Exactly FORK_KEYS keys (key:0 ...); the writers then add and
            # overwrite keys of their own (key:<12 digits>) during the save.
            cli(s.port, "DEBUG", "POPULATE", FORK_KEYS)
            writer = subprocess.Popen(["redis-benchmark", "-p", str(s.port), "-t", "set", "-n", "100000000",
                                       "-r", str(FORK_KEYS), "-c", "50", "-q"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
            cli(s.port, "BGSAVE")
            while info_field(s.port, "rdb_bgsave_in_progress") != "0":
                time.sleep(0.1)
            writer.kill()
            writer.wait()
            out[name] = (int(info_field(s.port, "latest_fork_usec")), int(info_field(s.port, "rdb_last_cow_size")),
                         int(cli(s.port, "DBSIZE")))  # keys after the save (the writers add some)
            s.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("all", "persist", "saveload"):
        print("== persistence: SAVE and load (scale %.3g of the issue's sizes; keys/s, file bytes)" % SCALE)
        print("%-8s %9s | %12s %12s %5s | %12s %12s %5s | %11s %11s | %9s %9s %5s | %9s %9s %5s | %9s %5s" % (
            "shape", "keys", "save c k/s", "save r k/s", "x", "load c k/s", "load r k/s", "x",
            "file cairn", "file redis", "saveCPU c", "saveCPU r", "x", "loadCPU c", "loadCPU r", "x",
            "loadMain c", "x"))
        for shape in BENCH_SHAPES:
            row = save_load(shape)
            (cs, cl, cz, csc, clc, clm), (rs, rl, rz, rsc, rlc, rlm) = row["cairn"], row["redis"]
            n = row["keys"]
            print("%-8s %9d | %12.0f %12.0f %5.2f | %12.0f %12.0f %5.2f | %11d %11d | %8.0fms %8.0fms %5.2f | "
                  "%8.0fms %8.0fms %5.2f | %8.0fms %5.2f" % (
                      shape, n, n / cs, n / rs, rs / cs, n / max(cl, 1e-6), n / max(rl, 1e-6),
                      max(rl, 1e-6) / max(cl, 1e-6), cz, rz, csc * 1e3, rsc * 1e3, rsc / max(csc, 1e-6),
                      clc * 1e3, rlc * 1e3, rlc / clc, clm * 1e3, rlm / clm))
            sys.stdout.flush()
    if what in ("all", "persist", "fork"):
        print("== BGSAVE of %d keys under 50 writing clients" % FORK_KEYS)
        res = fork_cow()
        print("%-6s %16s %18s %10s" % ("server", "latest_fork_usec", "rdb_last_cow_size", "keys"))
        for name in ("cairn", "redis"):
            f, c, k = res[name]
            print("%-6s %16d %18d %10d" % (name, f, c, k))


if __name__ == "__main__":
    main()
