"""Raw RESP connection for the scripting tests.

Scripts can return replies nested thousands of levels deep (a table that
contains itself), so replies are delimited without recursion
(resphelp.value_end counts the values still owed instead of descending).
`decode` turns a raw reply into Python values for the few checks that must
ignore order (a Lua table converted to a RESP3 map or set comes out in
Lua's hash order)."""
import socket

from conftest import IO_TIMEOUT
from resphelp import encode, parse_one, read_values


class Conn:
    """A plain socket that sends commands and returns each reply's raw bytes."""

    def __init__(self, srv, timeout=IO_TIMEOUT):
        self.sock = socket.create_connection((srv.host, srv.port), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def settimeout(self, t):
        self.sock.settimeout(t)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def reply(self):
        """The next complete reply, raw (resphelp.value_end: any nesting depth)."""
        return read_values(self)

    def send(self, *args):
        self.sock.sendall(encode(*args))

    def call(self, *args):
        """Send one command; return its raw reply."""
        self.send(*args)
        return self.reply()

    def eval(self, script, *keys_then_args, numkeys=None):
        """EVAL script with numkeys (default: len of keys_then_args = 0)."""
        n = 0 if numkeys is None else numkeys
        return self.call("EVAL", script, n, *keys_then_args)

    def closed(self):
        """True if the peer closed the connection (waits up to the timeout)."""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


class Map(dict):
    """A decoded RESP3 map (compares like a dict, order ignored)."""


class Set(frozenset):
    """A decoded RESP3 set (compares like a frozenset, order ignored)."""


class Err(str):
    """A decoded error reply."""


class Status(str):
    """A decoded status (+) reply."""


class Double(float):
    """A decoded RESP3 double."""


def decode(raw):
    """Decode one raw reply into Python values: bytes for bulk strings,
    int, None for nulls, list for arrays, Map / Set for RESP3 maps and sets,
    Err / Status for error and status lines, Double, bool, and ('big', s) /
    ('verbatim', fmt, s) for big numbers and verbatim strings."""
    return _py(parse_one(raw))


def _py(value):
    """A resphelp.parse value as the Python values decode() documents."""
    t, x = value
    if t == b"+":
        return Status(x.decode("latin-1"))
    if t == b"-":
        return Err(x.decode("latin-1"))
    if t in (b":", b"_"):
        return x
    if t == b",":
        return Double(x.decode())
    if t == b"#":
        return x == b"t"
    if t == b"(":
        return ("big", x.decode())
    if t == b"$":
        return x
    if t == b"=":
        return None if x is None else ("verbatim", x[:3].decode(), x[4:])
    if t in (b"*", b"~", b"%"):
        if x is None:
            return None
        items = [_py(v) for v in x]
        if t == b"~":
            return Set(items)
        if t == b"%":
            return Map(zip(items[0::2], items[1::2]))
        return items
    raise ValueError("unknown reply type %r" % t)
