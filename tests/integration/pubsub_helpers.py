"""Raw RESP helpers for the pub/sub, notification and MONITOR tests.

These tests compare the exact bytes Cairn and redis-server send, so they
talk over plain sockets (conftest's RawConn) and cut the stream into whole
RESP values with resphelp's reader, which knows every RESP2/RESP3 type.
"""
import re

from resphelp import encode as enc, read_values, split_values  # noqa: F401 (re-exported)


def inval(*keys):
    """A RESP3 client-tracking invalidation push of keys, as sent."""
    return b">2\r\n$10\r\ninvalidate\r\n" + enc(*keys)


def pubsub_inval(*keys):
    """A RESP2 invalidation message (on __redis__:invalidate) of keys, as sent."""
    return b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n" + enc(*keys)


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
