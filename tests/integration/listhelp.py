"""Raw RESP helpers for the list and blocking tests: pipelined raw
connections (replies compared as bytes) and a wait for a client to block."""
import socket
import time

from resphelp import encode, encode_all  # noqa: F401 (encode re-exported)
from resphelp import read_values, value_end as reply_end  # noqa: F401 (reply_end re-exported)


class Conn:
    def __init__(self, srv, resp=2, timeout=10):
        self.sock = socket.create_connection((srv.host, srv.port), timeout=timeout)
        self.buf = b""
        if resp == 3:
            self.run([["HELLO", "3"]])

    def send(self, *cmds):
        self.sock.sendall(encode_all(cmds))

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def read(self):
        return read_values(self)

    def run(self, cmds):
        cmds = [c.split() if isinstance(c, str) else list(c) for c in cmds]
        self.send(*cmds)
        return [self.read() for _ in cmds]

    def call(self, *args):
        self.send(list(args))
        return self.read()

    def pending(self, wait=0.2):
        """True when a reply arrives within `wait` seconds (at once when
        bytes of one are here already)."""
        if self.buf:
            return True
        self.sock.settimeout(wait)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            return bool(self.buf)
        finally:
            self.sock.settimeout(10)
        if chunk:
            self.buf += chunk
            return True
        return bool(self.buf)

    def client_id(self):
        return int(self.call("CLIENT", "ID")[1:-2])

    def close(self):
        self.sock.close()


def diff(server, oracle, cmds, resp=2):
    """Run cmds on both (one connection each) and assert the raw replies
    are identical.  Returns the oracle's replies."""
    a, b = Conn(server, resp), Conn(oracle, resp)
    try:
        got, exp = a.run(cmds), b.run(cmds)
    finally:
        a.close()
        b.close()
    bad = [(c, g, e) for c, g, e in zip(cmds, got, exp) if g != e]
    assert not bad, "%d mismatches:\n%s" % (
        len(bad), "\n".join("%r: cairn %r, redis %r" % m for m in bad[:10]))
    return exp


def wait_blocked(ctl, cid, cmd, timeout=5):
    """Wait until client `cid` has run `cmd` (and so is blocked in it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = ctl.call("CLIENT", "LIST", "ID", str(cid))
        if b" cmd=%s " % cmd.encode() in line:
            return
        time.sleep(0.005)
    raise AssertionError("client %d never blocked in %s" % (cid, cmd))
