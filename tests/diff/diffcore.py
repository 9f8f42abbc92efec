"""Differential testing core: send one command stream to two servers,
compare every reply, shrink a mismatch to a short reproducer.

A command is a tuple of bytes.  Two pseudo-commands are expanded by the
runner instead of being sent verbatim:
  (b"@SCANALL", *args)  runs SCAN 0 *args until the cursor returns to 0 and
                        yields the sorted, de-duplicated key list.
Replies are compared byte for byte, except for commands with a normalizer
(see NORMALIZERS) whose replies are legitimately nondeterministic.
"""
import importlib.util
import os
import socket


def integration_module(name):
    """tests/integration/<name>.py, loaded by path (as gen_scripts.py loads
    script_seeds.py: tests/diff is not on sys.path there)."""
    spec = importlib.util.spec_from_file_location(
        "cairn_" + name, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                      "integration", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The helpers shared with tests/integration.
resphelp = integration_module("resphelp")
waithelp = integration_module("waithelp")
encode, encode_all = resphelp.encode, resphelp.encode_all
# parse(buf, pos) -> (end, (type, payload)) or None; raises ProtocolError.
parse, ProtocolError = resphelp.parse, resphelp.ProtocolError

BATCH = 64


def show(v):
    """Human readable form of a parsed reply."""
    t, x = v
    if x is None:
        return "(nil)"
    if t == b"-":
        return "(error) " + x.decode("utf-8", "replace")
    if t == b":":
        return "(integer) %d" % x
    if t == b"+":
        return x.decode("utf-8", "replace")
    if isinstance(x, list):
        return "[" + ", ".join(show(i) for i in x) + "]"
    return repr(x)


def fmt_cmd(cmd):
    out = []
    for a in cmd:
        s = a.decode("latin-1")
        if not s or any(c in s for c in " \"'\\") or \
                not all(" " <= c <= "~" for c in s):
            s = '"' + "".join(c if " " <= c <= "~" and c not in '"\\' else
                              "\\x%02x" % ord(c) for c in s) + '"'
        out.append(s)
    return " ".join(out)


class Conn:
    def __init__(self, host, port, timeout=30):
        self.addr = (host, port)
        self.timeout = timeout
        self.open()

    def open(self):
        self.sock = socket.create_connection(self.addr, timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def reopen(self):
        self.close()
        self.open()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def read_replies(self, n):
        out = []
        while len(out) < n:
            r = parse(self.buf, self.pos)
            if r is None:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("server closed the connection")
                self.buf = self.buf[self.pos:] + chunk
                self.pos = 0
                continue
            self.pos, v = r
            out.append(v)
        if self.pos == len(self.buf):
            self.buf, self.pos = b"", 0
        return out

    def call(self, *cmd):
        self.sock.sendall(encode(*cmd))
        return self.read_replies(1)[0]

    def run_batch(self, cmds):
        """Run a list of commands (pipelined; pseudo-commands synchronous)."""
        out = []
        pending = []

        def flush():
            if pending:
                self.sock.sendall(encode_all(pending))
                out.extend(self.read_replies(len(pending)))
                pending.clear()

        for c in cmds:
            pseudo = PSEUDO.get(c[0])
            if pseudo is not None:
                flush()
                out.append(pseudo(self, c[1:]))
            else:
                pending.append(c)
        flush()
        return out

    def scan_all(self, args):
        cursor = b"0"
        keys = set()
        for _ in range(100000):
            r = self.call(b"SCAN", cursor, *args)
            if r[0] != b"*":
                return r
            cursor = r[1][0][1]
            keys.update(k[1] for k in r[1][1][1])
            if cursor == b"0":
                return (b"*", [(b"$", k) for k in sorted(keys)])
        return (b"-", b"SCAN did not terminate")


# ------------------------------------------------------------ normalizers

def _sorted_array(v):
    if v[0] == b"*" and v[1] is not None:
        return (b"*", sorted(v[1]))
    return v


def _nil_or_not(v):
    if v[0] == b"$":
        return (b"$", None if v[1] is None else b"<some key>")
    return v


def _tolerant_int(tol):
    def norm(a, b):
        if a[0] == b[0] == b":" and a[1] >= 0 and b[1] >= 0 and abs(a[1] - b[1]) <= tol:
            return True
        return a == b
    return norm


# name -> function(reply) -> normalized reply
NORMALIZERS = {
    b"KEYS": _sorted_array,
    b"RANDOMKEY": _nil_or_not,
}
# name -> function(reply_a, reply_b) -> equal?
COMPARATORS = {
    b"TTL": _tolerant_int(10),
    b"PTTL": _tolerant_int(10000),
    b"EXPIRETIME": _tolerant_int(10),
    b"PEXPIRETIME": _tolerant_int(10000),
}


def same(cmd, a, b):
    """Whether replies a (server under test) and b (oracle) agree.  A command
    may carry its own check (an attribute `check(a, b)` on a tuple
    subclass, used by model-based generators for random replies); else a
    comparator or normalizer registered for the command name; else bytes."""
    check = getattr(cmd, "check", None)
    if check is not None:
        return check(a, b)
    name = cmd[0].upper()
    if name in COMPARATORS:
        return COMPARATORS[name](a, b)
    f = NORMALIZERS.get(name)
    if f:
        return f(a) == f(b)
    return a == b


# ------------------------------------------------------------------ runner

class Pair:
    """Connections to the server under test (a) and the oracle (b)."""

    def __init__(self, addr_a, addr_b):
        self.a = Conn(*addr_a)
        self.b = Conn(*addr_b)

    def reset(self):
        for c in (self.a, self.b):
            c.reopen()
            r = c.call(b"FLUSHALL")
            assert r == (b"+", b"OK"), r

    def close(self):
        self.a.close()
        self.b.close()

    def run(self, cmds, stop_at_first=True):
        """Run cmds on both; return list of (index, cmd, reply_a, reply_b)."""
        bad = []
        for i in range(0, len(cmds), BATCH):
            chunk = cmds[i:i + BATCH]
            ra = self.a.run_batch(chunk)
            rb = self.b.run_batch(chunk)
            for j, (c, x, y) in enumerate(zip(chunk, ra, rb)):
                if not same(c, x, y):
                    bad.append((i + j, c, x, y))
                    if stop_at_first:
                        return bad
        return bad

    def fails(self, cmds):
        self.reset()
        try:
            return bool(self.run(cmds))
        except (ConnectionError, OSError, ProtocolError):
            return True


def ddmin(pair, cmds, max_tests=300):
    """Delta debugging: shrink cmds while pair.fails(cmds) stays true."""
    tests = 0
    n = 2
    while len(cmds) >= 2 and tests < max_tests:
        size = max(1, len(cmds) // n)
        chunks = [cmds[i:i + size] for i in range(0, len(cmds), size)]
        reduced = False
        for k in range(len(chunks)):
            if tests >= max_tests:
                break
            complement = [c for j, ch in enumerate(chunks) if j != k for c in ch]
            tests += 1
            if complement and pair.fails(complement):
                cmds = complement
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if n >= len(cmds):
                break
            n = min(len(cmds), n * 2)
    return cmds, tests


def check_stream(addr_a, addr_b, cmds, label, names=("cairn", "redis")):
    """Run the stream; on mismatch return a report string (else None)."""
    pair = Pair(addr_a, addr_b)
    try:
        pair.reset()
        try:
            bad = pair.run(cmds)
        except (ConnectionError, OSError, ProtocolError) as e:
            bad = [(-1, (b"?",), (b"-", str(e).encode()), (b"-", b""))]
        if not bad:
            return None
        idx, cmd, ra, rb = bad[0]
        lines = ["%s: MISMATCH at command #%d" % (label, idx),
                 "  command: %s" % fmt_cmd(cmd),
                 "  %-6s: %s" % (names[0], show(ra)),
                 "  %-6s: %s" % (names[1], show(rb))]
        if idx >= 0 and os.environ.get("DIFF_NO_SHRINK") != "1":
            prefix = cmds[:idx + 1]
            small, tests = ddmin(pair, prefix)
            pair.reset()
            again = pair.run(small)
            lines.append("  shrunk %d -> %d commands (%d replays); reproduce with "
                         "redis-cli on a FLUSHALL'd server:" % (len(prefix), len(small), tests))
            for c in small:
                lines.append("    " + fmt_cmd(c))
            if again:
                _, c2, a2, b2 = again[0]
                lines.append("  last: %s -> %s: %s / %s: %s"
                             % (fmt_cmd(c2), names[0], show(a2), names[1], show(b2)))
        return "\n".join(lines)
    finally:
        pair.close()


# Pseudo-commands: a command whose name is a key here is not sent as is;
# the function runs it synchronously on the connection (fn(conn, args)) and
# returns a reply to compare.  Generators register their own (@HSCANALL...).
PSEUDO = {b"@SCANALL": Conn.scan_all}
