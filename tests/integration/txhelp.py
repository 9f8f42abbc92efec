"""A raw RESP connection for the transaction / introspection tests: send
commands, read back complete replies as the exact bytes the server sent, so
that RESP2 `*-1` and RESP3 `_` nulls, error texts and nesting compare
byte for byte with redis-server."""
import socket

from conftest import IO_TIMEOUT
from resphelp import encode  # noqa: F401 (re-exported)


class Conn:
    def __init__(self, srv, timeout=IO_TIMEOUT):
        self.sock = socket.create_connection((srv.host, srv.port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _line(self, pos):
        while True:
            i = self.buf.find(b"\r\n", pos)
            if i >= 0:
                return i
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def _skip(self, pos):
        """End offset of the reply that starts at pos."""
        eol = self._line(pos)
        t, head = self.buf[pos:pos + 1], self.buf[pos + 1:eol]
        end = eol + 2
        if t in b"$=!":
            n = int(head)
            if n < 0:
                return end
            self._need(end + n + 2)
            return end + n + 2
        if t in b"*~>%|":
            n = int(head)
            if t in b"%|":
                n *= 2
            for _ in range(max(n, 0)):
                end = self._skip(end)
            return end
        return end  # + - : _ , # (

    def reply(self):
        """The next complete reply, raw."""
        end = self._skip(0)
        out, self.buf = self.buf[:end], self.buf[end:]
        return out

    def send(self, *cmds):
        """Send commands (each a tuple of arguments or a space-separated
        string) in one write."""
        data = b"".join(encode(*(c.split() if isinstance(c, str) else c)) for c in cmds)
        self.sock.sendall(data)

    def call(self, *cmds):
        """Send the commands pipelined; return their raw replies."""
        self.send(*cmds)
        return [self.reply() for _ in cmds]

    def one(self, cmd):
        return self.call(cmd)[0]
