"""Shared fixtures for Cairn integration tests.

Fixtures
--------
server        a fresh server (CAIRN_BIN, default build/cairn-server) per test
start_server  factory: start_server(**config) -> Server with extra directives
oracle        a fresh Debian redis-server per test (for differential checks)
start_oracle  factory like start_server, but for redis-server

Setting CAIRN_BIN=redis-server runs the whole suite against real Redis.
At teardown every server is stopped and its log is checked for
AddressSanitizer / LeakSanitizer / UBSan reports; any report fails the test.
"""
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORACLE_BIN = os.environ.get("ORACLE_BIN", "redis-server")
START_TIMEOUT = float(os.environ.get("CAIRN_START_TIMEOUT", "30"))
IO_TIMEOUT = float(os.environ.get("CAIRN_IO_TIMEOUT", "10"))
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:", "SUMMARY: UndefinedBehaviorSanitizer")


def cairn_bin():
    b = os.environ.get("CAIRN_BIN", os.path.join(ROOT, "build", "cairn-server"))
    if os.sep not in b:
        found = shutil.which(b)
        if found:
            return found
    return b


def free_port(host="127.0.0.1"):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, 0))
        return s.getsockname()[1]


class RawConn:
    """A plain socket speaking raw bytes to the server."""

    def __init__(self, sock, timeout=IO_TIMEOUT):
        self.sock = sock
        self.sock.settimeout(timeout)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)
        return self

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def recv_exact(self, n):
        """Read exactly n bytes (fails on EOF/timeout)."""
        try:
            while len(self.buf) < n:
                self._fill()
        except EOFError:
            pass
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_until(self, marker):
        while marker not in self.buf:
            try:
                self._fill()
            except (EOFError, socket.timeout):
                break
        i = self.buf.find(marker)
        if i < 0:
            out, self.buf = self.buf, b""
            return out
        out, self.buf = self.buf[:i + len(marker)], self.buf[i + len(marker):]
        return out

    def expect(self, expected):
        got = self.recv_exact(len(expected))
        assert got == expected, "expected %r, got %r" % (expected, got)
        return got

    def read_all(self, idle=1.0):
        """Read until the peer closes or nothing arrives for `idle` seconds."""
        self.sock.settimeout(idle)
        try:
            while True:
                self._fill()
        except (EOFError, socket.timeout, ConnectionResetError):
            pass
        out, self.buf = self.buf, b""
        return out

    def is_closed(self):
        """True once the peer has closed (waits up to IO_TIMEOUT)."""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


class TlsRawConn(RawConn):
    """A RawConn over TLS: an abrupt close reads as end of stream."""

    def _fill(self):
        try:
            RawConn._fill(self)
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
            raise EOFError("connection closed")

    def is_closed(self):
        try:
            return RawConn.is_closed(self)
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
            return True


class Server:
    def __init__(self, binary, config, name="server", tls_certs=None):
        self.binary = binary
        self.name = name
        # With certificates (the "tls" transport) the server also listens on
        # tls_port, and client() and connect() speak TLS to it.
        self.tls = tls_certs
        self.tmp = tempfile.mkdtemp(prefix="cairn-%s-" % name)
        self.host = "127.0.0.1"
        self.config = dict(config)
        self.proc = None
        self.logpath = os.path.join(self.tmp, "server.log")
        self._clients = []
        self._start()

    # -- process management -------------------------------------------------
    def _args(self):
        cfg = self.config
        conf_text = cfg.pop("config_file", None)
        extra = cfg.pop("args", [])
        self.port = cfg.pop("port", None) or free_port()
        self.unixsocket = cfg.pop("unixsocket", os.path.join(self.tmp, "s.sock"))
        bind = cfg.pop("bind", "127.0.0.1")
        self.host = bind.split()[0] if bind.split()[0] not in ("0.0.0.0", "*", "-::*", "::") \
            else "127.0.0.1"
        if self.host.startswith("-"):
            self.host = self.host[1:]
        args = [self.binary]
        if conf_text is not None:
            p = os.path.join(self.tmp, "server.conf")
            with open(p, "w") as f:
                f.write(conf_text)
            args.append(p)
        args += ["--port", str(self.port), "--bind", bind, "--dir", self.tmp,
                 "--save", "", "--appendonly", "no", "--logfile", "",
                 "--daemonize", "no"]
        if self.unixsocket:
            args += ["--unixsocket", self.unixsocket]
        if self.tls:
            self.tls_port = free_port()
            c = self.tls
            args += ["--tls-port", str(self.tls_port), "--tls-cert-file", c.crt("server"),
                     "--tls-key-file", c.key("server"), "--tls-ca-cert-file", c.crt("ca")]
        for k, v in cfg.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        args += list(extra)
        return args

    def _start(self):
        cfg0 = dict(self.config)
        last = None
        for _attempt in range(3):
            self.config = dict(cfg0)
            args = self._args()
            self.args = args
            logf = open(self.logpath, "ab")
            self.proc = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.tmp)
            logf.close()
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline:
                if "Ready to accept connections" in self.log:
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.01)
            last = self.log
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("%s did not become ready:\n%s" % (args, last))
            if "Address already in use" not in last:
                break
        raise RuntimeError("%s exited at startup (rc=%s):\n%s"
                           % (self.args, self.proc.returncode, last))

    @property
    def log(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        for c in self._clients:
            try:
                c.close()
            except Exception:
                pass
        self._clients = []
        if self.proc and self.proc.poll() is None:
            seen = len(self.log)
            self.proc.send_signal(signal.SIGTERM)
            # A server whose final save fails refuses to exit ("Errors trying
            # to shut down the server", Redis's and Cairn's text) and would
            # only be killed after the whole wait: kill it once it says so.
            deadline = time.monotonic() + 15
            while self.proc.poll() is None and time.monotonic() < deadline:
                if "Errors trying to shut down the server" in self.log[seen:]:
                    break
                time.sleep(0.02)
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        return self.sanitizer_report()

    def sanitizer_report(self):
        log = self.log
        for m in SANITIZER_MARKERS:
            if m in log:
                return log
        return None

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- clients ------------------------------------------------------------
    def client(self, **kw):
        kw.setdefault("socket_timeout", IO_TIMEOUT)
        if self.tls:
            c = self.tls
            kw.update(port=self.tls_port, ssl=True, ssl_certfile=c.crt("client"), ssl_keyfile=c.key("client"),
                      ssl_ca_certs=c.crt("ca"), ssl_check_hostname=False)
        else:
            kw["port"] = self.port
        c = redis.Redis(host=self.host, decode_responses=False, **kw)
        self._clients.append(c)
        return c

    def unix_client(self, **kw):
        kw.setdefault("socket_timeout", IO_TIMEOUT)
        c = redis.Redis(unix_socket_path=self.unixsocket, decode_responses=False, **kw)
        self._clients.append(c)
        return c

    def connect(self, host=None, source=None, timeout=IO_TIMEOUT):
        """A RawConn over TCP (optionally from a given source address)."""
        host = host or self.host
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        if source:
            s.bind((source, 0))
        s.settimeout(timeout)
        if self.tls:
            import tlshelp
            s.connect((host, self.tls_port))
            s = tlshelp.ssl_context(self.tls).wrap_socket(s, server_hostname="localhost")
            return TlsRawConn(s, timeout)
        s.connect((host, self.port))
        return RawConn(s, timeout)

    def connect_unix(self, timeout=IO_TIMEOUT):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.unixsocket)
        return RawConn(s, timeout)

    def raw(self, data, idle=1.0, expect=None):
        """Send raw bytes on a fresh connection; return what comes back.

        Reads until the server closes the connection, until len(expect)
        bytes arrived (if expect is given), or until `idle` seconds pass
        with no data."""
        with self.connect() as c:
            c.send(data)
            if expect is not None:
                return c.recv_exact(len(expect))
            return c.read_all(idle)

    def __repr__(self):
        return "<Server %s port=%s>" % (self.binary, getattr(self, "port", None))


def _factory(request, binary, name, tls_certs=None):
    started = []

    def start(**config):
        s = Server(binary, config, name=name, tls_certs=tls_certs)
        started.append(s)
        return s

    yield start
    reports = []
    for s in started:
        rep = s.stop()
        if rep:
            reports.append((s, rep))
        else:
            s.cleanup()
    if reports:
        s, rep = reports[0]
        pytest.fail("sanitizer report from %s (log kept in %s):\n%s"
                    % (s.binary, s.tmp, rep[-8000:]), pytrace=False)


# Suites that run twice, over TCP and over TLS (the "transport" parameter):
# their clients (client(), connect()) reach the server's tls-port, so
# replies split across TLS records, partial writes, pub/sub, blocking
# commands, MULTI and scripts are covered on TLS connections too.
# CAIRN_TLS_RERUN=0 runs them over TCP only.
TLS_RERUN_MODULES = ("test_blocking", "test_multi", "test_pubsub", "test_bigvalues", "test_scripting")


def pytest_generate_tests(metafunc):
    if ("transport" in metafunc.fixturenames and metafunc.module.__name__ in TLS_RERUN_MODULES
            and os.environ.get("CAIRN_TLS_RERUN", "1") != "0" and shutil.which("openssl")
            and __import__("tlshelp").binary_has_tls(cairn_bin())):
        metafunc.parametrize("transport", ["tcp", "tls"], indirect=True)


@pytest.fixture
def transport(request):
    return getattr(request, "param", "tcp")


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory):
    import tlshelp
    return tlshelp.certs(str(tmp_path_factory.mktemp("tls-certs")))


@pytest.fixture
def start_server(request, transport):
    certs = request.getfixturevalue("tls_certs") if transport == "tls" else None
    yield from _factory(request, cairn_bin(), "cairn", certs)


@pytest.fixture
def server(start_server):
    return start_server()


@pytest.fixture
def start_oracle(request):
    if not shutil.which(ORACLE_BIN) and not os.path.exists(ORACLE_BIN):
        pytest.skip("no %s" % ORACLE_BIN)
    yield from _factory(request, shutil.which(ORACLE_BIN) or ORACLE_BIN, "oracle")


@pytest.fixture
def oracle(start_oracle):
    return start_oracle()


# -- newer oracles: Redis 8 and Valkey 9 from Debian sid ---------------------
# scripts/newer_oracles.sh (run by `make test` through scripts/deps.sh test)
# extracts them into build/oracles/<kind>/ with wrappers that use sid's own
# loader; nothing is installed on the machine.
NEWER_ORACLES = {"redis8": "redis-server", "valkey9": "valkey-server"}


def newer_oracle_bin(kind):
    """Path of the wrapper for `kind` ('redis8' or 'valkey9'), fetching it
    (scripts/newer_oracles.sh, idempotent) if it is not there yet; None when
    it cannot be had (no network, no dpkg-deb)."""
    w = os.path.join(ROOT, "build", "oracles", kind, NEWER_ORACLES[kind])
    if not os.access(w, os.X_OK):
        subprocess.run(["sh", os.path.join(ROOT, "scripts", "newer_oracles.sh"), "--quiet", kind],
                       stdin=subprocess.DEVNULL, timeout=900)
    return w if os.access(w, os.X_OK) else None


@pytest.fixture
def start_newer_oracle(request):
    """Factory: start_newer_oracle(kind='redis8'|'valkey9', **directives)
    -> Server running Redis 8.0 / Valkey 9.1 from Debian sid."""
    started = {}

    def start(kind="redis8", **config):
        if kind not in NEWER_ORACLES:
            raise ValueError("unknown newer oracle %r" % kind)
        if kind not in started:
            b = newer_oracle_bin(kind)
            if b is None:
                pytest.skip("%s unavailable: scripts/newer_oracles.sh could not fetch it" % kind)
            gen = _factory(request, b, kind)
            started[kind] = (gen, next(gen))
        return started[kind][1](**config)

    yield start
    for gen, _ in started.values():
        for _ in gen:
            pass
