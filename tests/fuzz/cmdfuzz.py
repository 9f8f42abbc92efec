#!/usr/bin/env python3
"""cmdfuzz.py -- a command fuzzer for a running server binary.

Starts the server (normally the ASan/UBSan build, build/cairn-server-san),
asks it for its own command table (COMMAND: names, arities, flags, key
positions, subcommands) and sends it random commands built from that
table over several connections for a fixed time.  Arguments mix valid
values with hostile ones: boundary integers (LLONG_MIN/MAX, -1, 0, 2^32,
2^64-1), floats (inf, nan, 1e308), empty, long and huge strings, globs,
option keywords, Lua scripts, and existing keys of every type and
encoding.

It stops at the first sign of trouble -- the server died, a sanitizer
report in its log, or the server stopped answering -- and prints the seed,
the last commands sent and the end of the log.  A run with the same seed
sends the same commands (the server's timing can still differ).

Commands that legitimately stop the server, hang every client or change
what a connection is (SHUTDOWN, DEBUG, MONITOR, the SUBSCRIBE family,
CLIENT PAUSE/KILL/REPLY/TRACKING, replication, CONFIG SET/REWRITE, SAVE...)
are never sent.  Blocking commands are sent; a connection whose reply does
not come within a short time is replaced (disconnecting unblocks it).

Usage: cmdfuzz.py --server BIN [--seconds 60] [--seed N] [--conns 4]
Exit status: 0 clean, 1 trouble found, 2 could not start.
"""
import argparse
import collections
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "SUMMARY: UndefinedBehaviorSanitizer", "SUMMARY: AddressSanitizer")

# Never sent: they stop the server, freeze every client, or turn the
# connection into something that is not request/reply.
EXCLUDED = {
    "shutdown", "debug", "monitor", "subscribe", "psubscribe", "ssubscribe", "unsubscribe",
    "punsubscribe", "sunsubscribe", "sync", "psync", "replicaof", "slaveof", "failover",
    "replconf", "quit", "save", "bgsave", "bgrewriteaof", "acl", "module", "cluster",
    "readonly", "readwrite", "asking",
    "client|pause", "client|unpause", "client|kill", "client|reply", "client|tracking",
    "config|set", "config|rewrite",
}

LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808
INTS = ["0", "1", "-1", "2", "3", "10", "-10", "100", "-100", "1000", str(LLONG_MAX), str(LLONG_MIN),
        str(LLONG_MAX - 1), str(LLONG_MIN + 1), "9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "2147483647", "-2147483648", "2147483648",
        "4294967295", "4294967296", "65535", "65536", "536870912", "1000000", "-1000000", "007", "+1"]
FLOATS = ["inf", "-inf", "+inf", "nan", "-nan", "1e308", "-1e308", "1.7976931348623157e308", "1e309",
          "1.5", "0.0", "-0", "-0.0", "1e-320", "3.0e9", "0.1", "-2.5", "(1", "(-inf", "(+inf", "1e",
          "0x10", " 1", "1 "]
STRINGS = ["", "a", "abc", "hello world", "\x00", "\xff\xfe", "\r\n", "-", "+", "[", "(", "[a", "(a",
           "*", "?", "[a-", "\\", "h[^e]llo", "*a*b*c*d*e*f*g*", "[[[[[[[[", "\\\\\\", "x" * 64,
           "x" * 65, "x" * 300, "1" * 30, "é"]
KEYWORDS = ["NX", "XX", "GT", "LT", "CH", "INCR", "EX", "PX", "EXAT", "PXAT", "KEEPTTL", "GET",
            "PERSIST", "WITHSCORES", "WITHSCORE", "LIMIT", "BYSCORE", "BYLEX", "REV", "COUNT",
            "MATCH", "TYPE", "ANY", "ASC", "DESC", "ALPHA", "STORE", "BY", "WITHVALUES", "LEFT",
            "RIGHT", "BEFORE", "AFTER", "RANK", "MAXLEN", "LOWEST", "HIGHEST", "MINSCORE", "MAXSCORE", "IDLE", "MINMATCHLEN", "WITHMATCHLEN",
            "LEN", "IDX", "MIN", "MAX", "SUM", "AGGREGATE", "WEIGHTS", "OVERFLOW", "WRAP", "SAT",
            "FAIL", "u8", "i8", "i64", "u63", "u64", "i1", "#1", "#-1", "BIT", "BYTE", "REPLACE",
            "ABSTTL", "FREQ", "IDLETIME", "ENCODING", "REFCOUNT", "HELP", "FLUSH", "ASYNC", "SYNC",
            "NOSAVE", "LIBRARYNAME", "WITHCODE", "DB", "COPY", "KEYS", "AUTH", "SETNAME", "ID",
            "SCHEDULE", "MINID", "NOMKSTREAM", "STRLEN", "LOAD", "NO-WRITES", "ALLOW-OOM",
            "ALLOW-STALE", "NO-CLUSTER", "OBJECT", "GETNAME", "LIST", "INFO", "RESETSTAT", "FULL",
            "ON", "OFF", "YES", "NO", "0", "-"]
SCRIPTS = [
    "return 1", "return redis.call('get', KEYS[1])", "return {1, 2, {3, 'x'}, false, true}",
    "return redis.call(ARGV[1] or 'ping', KEYS[1])", "return redis.pcall('incr', KEYS[1])",
    "return redis.call('lrange', KEYS[1], 0, -1)", "return cjson.encode({a = {1, 2}})",
    "return cmsgpack.unpack(cmsgpack.pack({1, 2, 'x', {a = 1}}))", "return struct.pack('>i', 1)",
    "return tostring(bit.tohex(-1))", "error('boom')", "return redis.error_reply('E x')",
    "return redis.status_reply('S')", "return {err = 'x'}", "return 3.99", "return nil",
    "local t = {} for i = 1, 1000 do t[i] = i end return t", "return redis.setresp(3)",
    "redis.setresp(3) return redis.call('hgetall', KEYS[1])", "return #KEYS + #ARGV",
    "return string.rep('x', 100000)", "return redis.sha1hex(ARGV[1] or '')",
    "return cjson.decode(ARGV[1] or '[]')", "return cmsgpack.unpack(ARGV[1] or '')",
    "return struct.unpack(ARGV[1] or 'i', ARGV[2] or '')", "return tonumber(ARGV[1])",
    "#!lua flags=no-writes\nreturn 1", "return redis.call('set', KEYS[1], ARGV[1] or 'v')",
]
LIBRARIES = [
    "#!lua name=fz\nredis.register_function('fz', function(k, a) return redis.call('get', k[1]) end)",
    "#!lua name=fz2\nredis.register_function{function_name='fz2', callback=function(k, a) return #a end, "
    "flags={'no-writes'}}",
    "#!lua name=bad\nreturn", "#!lua name=fz\nerror('x')",
]
KEYS = ["str", "int", "bigstr", "list", "biglist", "hash", "bighash", "set", "intset", "bigset",
        "zset", "bigzset", "missing", "expiring", "k1", "k2", "{t}a", "{t}b"]


def seed_keys(cmds):
    """Commands that (re)create a key of every type and encoding."""
    out = [["FLUSHALL"], ["SET", "str", "hello"], ["SET", "int", "12345"],
           ["SET", "bigstr", "x" * 5000], ["RPUSH", "list", "a", "b", "1", "2"],
           ["HSET", "hash", "f", "v", "n", "1"], ["SADD", "set", "a", "b", "c"],
           ["SADD", "intset", "1", "2", "3"], ["ZADD", "zset", "1", "a", "2", "b", "inf", "c"],
           ["SET", "expiring", "v", "PX", "100000"]]
    out.append(["RPUSH", "biglist"] + [str(i) for i in range(300)])
    out.append(["HSET", "bighash"] + sum([["f%d" % i, "v" * (i % 100)] for i in range(600)], []))
    out.append(["SADD", "bigset"] + ["m%d" % i for i in range(600)])
    out.append(["ZADD", "bigzset"] + sum([[str(i * 0.5), "m%d" % i] for i in range(200)], []))
    if "function" in cmds:
        out.append(["FUNCTION", "LOAD", "REPLACE", LIBRARIES[0]])
    return out


# --- RESP ---------------------------------------------------------------------

class Timeout(Exception):
    pass


class Conn:
    def __init__(self, port, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, cmds):
        out = []
        for argv in cmds:
            out.append(b"*%d\r\n" % len(argv))
            for a in argv:
                a = a if isinstance(a, bytes) else a.encode("utf-8", "surrogateescape")
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout()
        r, _, _ = select.select([self.sock], [], [], left)
        if not r:
            raise Timeout()
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed")
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += chunk

    def _line(self, deadline):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i]
                self.pos = i + 2
                return line
            self._fill(deadline)

    def _bytes(self, n, deadline):
        while len(self.buf) - self.pos < n + 2:
            self._fill(deadline)
        out = self.buf[self.pos:self.pos + n]
        self.pos += n + 2
        return out

    def reply(self, deadline):
        """One RESP2/RESP3 reply (errors are returned, not raised)."""
        line = self._line(deadline)
        t, rest = line[:1], line[1:]
        if t == b":":
            return int(rest)
        if t in (b"+", b"-", b",", b"(", b"#", b"_"):
            return line
        if t in (b"$", b"=", b"!"):
            n = int(rest)
            return None if n < 0 else self._bytes(n, deadline)
        if t in (b"*", b"~", b">", b"%", b"|"):
            n = int(rest)
            if n < 0:
                return None
            if t in (b"%", b"|"):
                n *= 2
            items = [self.reply(deadline) for _ in range(n)]
            if t == b"|":
                return self.reply(deadline)  # attributes precede the reply
            return items
        raise ConnectionError("bad reply %r" % line[:80])


# --- the command table ----------------------------------------------------------

def command_table(conn):
    """[(fullname, argv prefix, arity, flags, first, last, step)] from COMMAND."""
    conn.send([["COMMAND"]])
    rows = conn.reply(time.monotonic() + 30)
    out = []

    def add(row, prefix):
        name = row[0].decode().lower()
        flags = {f.decode().lstrip("+").lower() for f in row[2]}
        arity, first, last, step = row[1], row[3], row[4], row[5]
        subs = row[9] if len(row) > 9 and row[9] else []
        if subs:
            for s in subs:
                sub = s[0].decode().lower()
                if sub in EXCLUDED:
                    continue
                add(s, prefix + [sub.split("|", 1)[1]])
            return
        out.append((name, prefix, arity, flags, first, last, step))

    for row in rows:
        name = row[0].decode().lower()
        if name in EXCLUDED:
            continue
        add(row, [name])
    return out


class Generator:
    def __init__(self, rng, table):
        self.rng = rng
        self.table = table
        self.huge = "h" * (1 << 20)

    def value(self):
        r = self.rng
        k = r.random()
        if k < 0.25:
            return r.choice(INTS)
        if k < 0.35:
            return r.choice(FLOATS)
        if k < 0.55:
            return r.choice(KEYWORDS)
        if k < 0.70:
            return r.choice(STRINGS)
        if k < 0.78:
            return r.choice(KEYS)
        if k < 0.83:
            return str(r.randint(-20, 600))
        if k < 0.86:
            return r.choice(SCRIPTS)
        if k < 0.88:
            return r.choice(LIBRARIES)
        if k < 0.885:
            return self.huge
        if k < 0.90:
            return "".join(chr(r.randint(0, 255)) for _ in range(r.randint(0, 40)))
        return "%s%d" % (r.choice(["m", "f", "a", "k", "v"]), r.randint(0, 700))

    def command(self):
        r = self.rng
        name, prefix, arity, flags, first, last, step = r.choice(self.table)
        n = arity if arity > 0 else -arity + r.choice([0, 0, 1, 1, 2, 3, 4, 6, 9])
        if r.random() < 0.03:  # wrong arity now and then
            n = max(len(prefix), n + r.choice([-1, 1]))
        argv = list(prefix)
        if name == "eval" or name == "eval_ro":
            argv = [name, r.choice(SCRIPTS)]
        elif name == "function|load" and r.random() < 0.7:
            argv = ["function", "load"] + (["REPLACE"] if r.random() < 0.5 else []) + [r.choice(LIBRARIES)]
        keypos = set()
        if first > 0:
            lastk = last if last >= 0 else n + last
            keypos = set(range(first, lastk + 1, step or 1))
        while len(argv) < n:
            i = len(argv)
            argv.append(r.choice(KEYS) if i in keypos and r.random() < 0.9 else self.value())
        return name, flags, argv


# --- the run --------------------------------------------------------------------

class Server:
    def __init__(self, binary, tmp):
        self.tmp = tmp
        self.port = self._free_port()
        self.log = os.path.join(tmp, "server.log")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "halt_on_error=1:abort_on_error=0:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", tmp, "--logfile", "", "--daemonize", "no", "--appendonly", "no",
                "--lua-time-limit", "500"]
        self.proc = subprocess.Popen(args, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=tmp, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if "Ready to accept connections" in self.text():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("server did not start:\n" + self.text()[-3000:])

    @staticmethod
    def _free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def text(self):
        with open(self.log, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def sanitizer_report(self):
        t = self.text()
        return any(m in t for m in SANITIZER_MARKERS)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def shown(argv):
    parts = []
    for a in argv:
        if len(a) > 60:
            a = a[:40] + "...(%d bytes)" % len(a)
        parts.append(repr(a) if (not a or any(c in a for c in " \r\n\"'") or not a.isprintable()) else a)
    return " ".join(parts)


def run(args):
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="cmdfuzz-")
    try:
        srv = Server(os.path.abspath(args.server) if os.sep in args.server else args.server, tmp)
    except Exception as e:
        print("cmdfuzz: %s" % e)
        return 2
    last = collections.deque(maxlen=args.history)
    problem = None
    sent = errors = 0
    try:
        control = Conn(srv.port, 30)
        table = command_table(control)
        names = {t[0] for t in table}
        gen = Generator(rng, table)
        conns = [None] * args.conns

        def reseed():
            control.send(seed_keys(names))
            for _ in seed_keys(names):
                control.reply(time.monotonic() + 60)

        reseed()
        end = time.monotonic() + args.seconds
        print("cmdfuzz: seed %d, %d commands in the table, %d connections, %ds, port %d"
              % (args.seed, len(table), args.conns, args.seconds, srv.port), flush=True)
        while time.monotonic() < end:
            i = rng.randrange(args.conns)
            if conns[i] is None:
                conns[i] = Conn(srv.port, 10)
            batch = [gen.command() for _ in range(rng.choice([1, 1, 1, 2, 3, 5]))]
            for _, _, argv in batch:
                last.append((i, argv))
            sent += len(batch)
            blocking = any("blocking" in flags for _, flags, _ in batch)
            try:
                conns[i].send([argv for _, _, argv in batch])
                deadline = time.monotonic() + (1.0 if blocking else 20.0)
                for _ in batch:
                    rep = conns[i].reply(deadline)
                    errors += isinstance(rep, bytes) and rep[:1] in (b"-", b"!")
            except (Timeout, ConnectionError, OSError):
                # Blocked, closed by the server (protocol errors, QUIT-like
                # commands), or slow: a fresh connection, if the server is
                # fine.
                conns[i].close()
                conns[i] = None
            if srv.proc.poll() is not None:
                problem = "the server exited (status %s)" % srv.proc.returncode
                break
            if sent % 200 < len(batch) or blocking:
                if srv.sanitizer_report():
                    problem = "sanitizer report"
                    break
                try:
                    control.send([["PING"]])
                    control.reply(time.monotonic() + 30)
                except (Timeout, ConnectionError, OSError):
                    problem = "the server stopped answering PING"
                    break
            if sent % 3000 < len(batch):
                try:
                    control.send([["INFO", "memory"]])
                    mem = control.reply(time.monotonic() + 30)
                    used = int(mem.split(b"used_memory:")[1].split(b"\r\n")[0])
                    if used > args.max_memory or rng.random() < 0.3:
                        reseed()
                except (Timeout, ConnectionError, OSError, IndexError, ValueError):
                    pass
        for c in conns:
            if c:
                c.close()
        control.close()
    except Exception as e:  # noqa: BLE001 -- any failure to talk is a finding
        if problem is None and srv.proc.poll() is not None:
            problem = "the server exited (status %s)" % srv.proc.returncode
        elif problem is None:
            problem = "fuzzer error: %r" % e
    if problem is None:
        srv.stop()  # leaks show at exit
        if srv.proc.returncode not in (0, None):
            problem = "the server exited with status %s at shutdown" % srv.proc.returncode
        elif srv.sanitizer_report():
            problem = "sanitizer report at shutdown"
    else:
        time.sleep(0.5)
        srv.stop()
    if problem:
        print("cmdfuzz: FAILED: %s (seed %d, after %d commands)" % (problem, args.seed, sent))
        print("cmdfuzz: last commands (connection: command):")
        for i, argv in last:
            print("  %d: %s" % (i, shown(argv)))
        print("cmdfuzz: end of the server log (%s):" % srv.log)
        print(srv.text()[-args.log_tail:])
        print("cmdfuzz: to replay: %s --server %s --seed %d --seconds %d --conns %d"
              % (sys.argv[0], args.server, args.seed, args.seconds, args.conns))
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("cmdfuzz: clean: %d commands (%d answered an error), seed %d" % (sent, errors, args.seed))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True, help="server binary (the ASan/UBSan build)")
    p.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 60)))
    p.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)) or None)
    p.add_argument("--conns", type=int, default=4)
    p.add_argument("--history", type=int, default=30)
    p.add_argument("--log-tail", type=int, default=6000)
    p.add_argument("--max-memory", type=int, default=1 << 30)
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 1 << 31)
    sys.exit(run(args))


if __name__ == "__main__":
    main()
