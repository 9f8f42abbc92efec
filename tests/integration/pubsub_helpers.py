"""Raw RESP helpers for the pub/sub, notification and MONITOR tests.

These tests compare the exact bytes Cairn and redis-server send, so they
talk over plain sockets (conftest's RawConn) and cut the stream into whole
RESP values with a small parser that knows every RESP2/RESP3 type.
"""
import re

from resphelp import encode as enc  # noqa: F401 (re-exported)


def _value_end(buf, i):
    """Index just past the RESP value starting at buf[i], or -1 if the buffer
    does not hold all of it yet."""
    nl = buf.find(b"\r\n", i)
    if nl < 0:
        return -1
    t = buf[i:i + 1]
    head = buf[i + 1:nl]
    j = nl + 2
    if t in (b"+", b"-", b":", b"_", b",", b"#", b"("):
        return j
    if t in (b"$", b"=", b"!"):
        n = int(head)
        if n < 0:
            return j
        return j + n + 2 if len(buf) >= j + n + 2 else -1
    if t in (b"*", b">", b"~", b"%", b"|"):
        n = int(head)
        if n < 0:
            return j
        if t in (b"%", b"|"):
            n *= 2
        for _ in range(n):
            j = _value_end(buf, j)
            if j < 0:
                return -1
        return j
    raise AssertionError("not RESP at %d: %r" % (i, buf[i:i + 40]))


def read_values(conn, n):
    """The raw bytes of the next n complete RESP values on a RawConn."""
    while True:
        j = 0
        for _ in range(n):
            j = _value_end(conn.buf, j) if j >= 0 else -1
            if j < 0:
                break
        if j >= 0:
            out, conn.buf = conn.buf[:j], conn.buf[j:]
            return out
        conn._fill()


def split_values(data):
    """A byte string of whole RESP values, as a list of each value's bytes."""
    out, i = [], 0
    while i < len(data):
        j = _value_end(data, i)
        assert j > 0, "truncated RESP: %r" % data[i:i + 60]
        out.append(data[i:j])
        i = j
    return out


def call(conn, *args):
    """Send one command and return its raw reply."""
    conn.send(enc(*args))
    return read_values(conn, 1)


def read_until_value(conn, marker):
    """Whole values up to and including the first one that contains marker."""
    out = []
    while True:
        v = read_values(conn, 1)
        out.append(v)
        if marker in v:
            return out


MONITOR_LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]*)\] (.*)\r\n$", re.S)


def monitor_lines(data):
    """Normalize MONITOR output for comparison: timestamps dropped, TCP
    ports replaced by PORT.  Returns a list of (db, source, args) tuples."""
    out = []
    for v in split_values(data):
        m = MONITOR_LINE.match(v)
        assert m, "not a MONITOR line: %r" % v
        src = re.sub(rb":\d+$", b":PORT", m.group(4)) if not m.group(4).startswith(b"unix:") else m.group(4)
        out.append((int(m.group(3)), src, m.group(5)))
    return out
