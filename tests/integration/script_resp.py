"""Raw RESP connection for the scripting tests.

Scripts can return replies nested thousands of levels deep (a table that
contains itself), so replies are delimited without recursion: `Conn.reply`
counts the values still owed instead of descending.  `decode` turns a raw
reply into Python values for the few checks that must ignore order (a Lua
table converted to a RESP3 map or set comes out in Lua's hash order)."""
import socket

from conftest import IO_TIMEOUT
from txhelp import encode


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

    def _more(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def _line_end(self, pos):
        while True:
            i = self.buf.find(b"\r\n", pos)
            if i >= 0:
                return i
            self._more()

    def reply(self):
        """The next complete reply, raw (iterative: any nesting depth)."""
        pos, owed = 0, 1
        while owed:
            eol = self._line_end(pos)
            t, head = self.buf[pos:pos + 1], self.buf[pos + 1:eol]
            pos = eol + 2
            owed -= 1
            if t in (b"$", b"=", b"!"):
                n = int(head)
                if n >= 0:
                    while len(self.buf) < pos + n + 2:
                        self._more()
                    pos += n + 2
            elif t in (b"*", b"~", b">", b"%", b"|"):
                n = int(head)
                if n > 0:
                    owed += 2 * n if t in (b"%", b"|") else n
        out, self.buf = self.buf[:pos], self.buf[pos:]
        return out

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
    value, end = _decode(raw, 0)
    assert end == len(raw), "trailing bytes after reply: %r" % raw[end:]
    return value


def _decode(raw, pos):
    eol = raw.index(b"\r\n", pos)
    t, head = raw[pos:pos + 1], raw[pos + 1:eol]
    pos = eol + 2
    if t == b"+":
        return Status(head.decode("latin-1")), pos
    if t == b"-":
        return Err(head.decode("latin-1")), pos
    if t == b":":
        return int(head), pos
    if t == b"_":
        return None, pos
    if t == b",":
        return Double(head.decode()), pos
    if t == b"#":
        return head == b"t", pos
    if t == b"(":
        return ("big", head.decode()), pos
    if t in (b"$", b"="):
        n = int(head)
        if n < 0:
            return None, pos
        s = raw[pos:pos + n]
        if t == b"=":
            return ("verbatim", s[:3].decode(), s[4:]), pos + n + 2
        return s, pos + n + 2
    if t in (b"*", b"~", b"%"):
        n = int(head)
        if n < 0:
            return None, pos
        items = []
        for _ in range(2 * n if t == b"%" else n):
            v, pos = _decode(raw, pos)
            items.append(v)
        if t == b"~":
            return Set(items), pos
        if t == b"%":
            return Map(zip(items[0::2], items[1::2])), pos
        return items, pos
    raise ValueError("unknown reply type %r" % raw[pos - len(head) - 3:])
