"""Webdis as the HTTP gateway's oracle, and a small raw HTTP client.

Webdis (Debian's webdis 0.1.9, scripts/deps.sh test) is started in front of
an oracle redis-server with a generated webdis.json; the same requests go
to it and to Cairn's http-port and the answers are compared.  The client
speaks raw bytes over a socket so that tests can send what no library
would (malformed lines, pipelines, half requests) and read exactly what
came back; every read has a timeout, so nothing hangs."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from conftest import free_port

WEBDIS_BIN = os.environ.get("WEBDIS_BIN", "webdis")
IO_TIMEOUT = 10.0


def webdis_available():
    return shutil.which(WEBDIS_BIN) is not None


class Webdis:
    """A webdis process for redis at redis_port; acl: Webdis's "acl" list."""

    def __init__(self, redis_port, acl=None, database=0):
        self.tmp = tempfile.mkdtemp(prefix="webdis-")
        self.port = free_port()
        conf = {
            "redis_host": "127.0.0.1", "redis_port": redis_port, "redis_auth": None,
            "http_host": "127.0.0.1", "http_port": self.port, "threads": 1,
            "pool_size": 4, "daemonize": False, "database": database,
            "verbosity": 3, "logfile": os.path.join(self.tmp, "webdis.log"),
            "acl": acl if acl is not None else [],
        }
        path = os.path.join(self.tmp, "webdis.json")
        with open(path, "w") as f:
            json.dump(conf, f)
        self.proc = subprocess.Popen([WEBDIS_BIN, path], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     cwd=self.tmp)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("webdis did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


class Response:
    def __init__(self, version, status, reason, headers, body):
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value), in order
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return "<Response %d %r %r>" % (self.status, self.headers, self.body[:200])


class HttpConn:
    """One raw HTTP connection."""

    def __init__(self, port, host="127.0.0.1", timeout=IO_TIMEOUT):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        d = self.sock.recv(65536)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def read_head(self):
        status = self._line().decode("latin-1")
        version, code, reason = status.split(" ", 2)
        headers = []
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.decode("latin-1").split(":", 1)
            headers.append((k, v.strip()))
        return Response(version, int(code), reason, headers, b"")

    def read_chunk(self):
        """One chunk of a chunked body (b"" for the last)."""
        size = int(self._line().split(b";")[0], 16)
        d = self._exact(size)
        self._exact(2)
        return d

    def read_response(self):
        r = self.read_head()
        n = r.header("Content-Length")
        if n is not None:
            r.body = self._exact(int(n))
        return r

    def closed(self, timeout=5.0):
        """True when the server closes the connection (after any bytes)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                d = self.sock.recv(65536)
                if not d:
                    return True
                self.buf += d
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def request(port, method, path, body=None, headers=()):
    """One request on a new connection: its Response."""
    with HttpConn(port) as c:
        c.send(build(method, path, body, headers))
        return c.read_response()


def build(method, path, body=None, headers=(), version="HTTP/1.1"):
    h = "%s %s %s\r\nHost: localhost\r\n" % (method, path, version)
    for k, v in headers:
        h += "%s: %s\r\n" % (k, v)
    data = h.encode("latin-1")
    if body is not None:
        data += b"Content-Length: %d\r\n" % len(body)
    return data + b"\r\n" + (body or b"")
