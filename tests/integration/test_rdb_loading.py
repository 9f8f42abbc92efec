"""Loading dump.rdb at start-up with the event loop turning, side by side
with redis-server 7.0.15 on the same file: clients get -LOADING (commands
flagged loading-ok still run, MULTI is doomed), INFO persistence shows
loading:1 and every loading_* field, the log reports progress and
"DB loaded from disk", and a SIGTERM or SHUTDOWN during the load exits
without overwriting the file.  The load is slowed with Redis's test
directives key-load-delay and loading-process-events-interval-bytes."""
import functools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import ORACLE_BIN, cairn_bin, free_port
from test_rdb import wait_for
from txhelp import encode as resp

KEYS = int(os.environ.get("RDB_LOADING_KEYS", "40000"))
LOADING_ERR = "Redis is loading the dataset in memory"
LOADING_FIELDS = ("loading_start_time", "loading_total_bytes", "loading_rdb_used_mem",
                  "loading_loaded_bytes", "loading_loaded_perc", "loading_eta_seconds")


wait_for = functools.partial(wait_for, timeout=30.0)


@pytest.fixture(scope="module")
def dumpfile():
    """A dump.rdb of KEYS string keys written by redis-server."""
    if not shutil.which(ORACLE_BIN):
        pytest.skip("no oracle")
    d = tempfile.mkdtemp(prefix="cairn-loading-")
    port = free_port()
    p = subprocess.Popen([ORACLE_BIN, "--port", str(port), "--dir", d, "--save", "",
                          "--enable-debug-command", "yes"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        r = redis.Redis(port=port)
        assert wait_for(lambda: _pings(r))
        r.execute_command("DEBUG", "POPULATE", KEYS, "key", 20)
        r.save()
    finally:
        p.terminate()
        p.wait()
    yield os.path.join(d, "dump.rdb")
    shutil.rmtree(d, ignore_errors=True)


def _pings(r):
    try:
        return r.ping()
    except redis.ConnectionError:
        return False


class Loading:
    """A server started on a copy of the dump, its load slowed down; the
    test talks to it while it loads."""

    def __init__(self, binary, dump, **cfg):
        self.dir = tempfile.mkdtemp(prefix="cairn-loading-run-")
        shutil.copy(dump, os.path.join(self.dir, "dump.rdb"))
        self.port = free_port()
        self.logpath = os.path.join(self.dir, "log")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--logfile", "", "--key-load-delay", "50",
                "--loading-process-events-interval-bytes", "1024"]
        for k, v in cfg.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        with open(self.logpath, "wb") as f:
            self.proc = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.dir)
        self.r = redis.Redis(port=self.port, socket_timeout=10)

    @property
    def log(self):
        with open(self.logpath, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def info(self):
        return self.r.info("persistence")

    def wait_loading(self):
        def up():
            try:
                return self.info()["loading"] == 1
            except redis.ConnectionError:
                return False
        assert wait_for(up), self.log

    def finish(self):
        """Lets the load run at full speed and waits for its end."""
        self.r.config_set("key-load-delay", 0)
        self.r.config_set("loading-process-events-interval-bytes", 2097152)
        assert wait_for(lambda: self.info()["loading"] == 0), self.log

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def loading():
    started = []

    def start(binary, dump, **cfg):
        s = Loading(binary, dump, **cfg)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def binaries():
    return [("cairn", cairn_bin()), ("redis", ORACLE_BIN)]


def observe(s):
    """What a client sees while s loads (the same for both servers): the
    raw replies to a few commands, MULTI/GET/EXEC among them."""
    seen = []
    with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:
        f = c.makefile("rb")
        for cmd in (("GET", "key:1"), ("PING",), ("DBSIZE",), ("SET", "a", "b"), ("ECHO", "hi"),
                    ("CONFIG", "GET", "key-load-delay"), ("MULTI",), ("GET", "key:1"), ("EXEC",)):
            c.sendall(resp(*cmd))
            line = f.readline()
            if line.startswith(b"*"):
                line += f.readline() + f.readline() + f.readline() + f.readline()
            elif line.startswith(b"$"):
                line += f.readline()
            seen.append(line)
    info = s.info()
    seen.append(sorted(k for k in info if k.startswith("loading")))
    return seen, info


def test_loading_refuses_and_reports_like_redis(loading, dumpfile):
    got = {}
    for name, binary in binaries():
        if name == "redis" and not shutil.which(binary):
            continue
        s = loading(binary, dumpfile)
        s.wait_loading()
        seen, info = observe(s)
        total = os.path.getsize(dumpfile)
        assert info["loading_total_bytes"] == total
        assert 0 < info["loading_loaded_bytes"] <= total
        assert 0 <= info["loading_loaded_perc"] <= 100
        assert info["loading_eta_seconds"] >= 0
        assert info["loading_rdb_used_mem"] > 0
        assert abs(info["loading_start_time"] - time.time()) < 60
        # Progress moves while the client watches.
        before = info["loading_loaded_bytes"]
        assert wait_for(lambda: s.info()["loading_loaded_bytes"] > before)
        s.finish()
        assert s.r.dbsize() == KEYS
        assert not any(k.startswith("loading_") for k in s.info())
        assert "DB loaded from disk" in s.log
        got[name] = seen
    c = got["cairn"]
    err = b"-LOADING " + LOADING_ERR.encode() + b"\r\n"
    assert c[:4] == [err] * 4
    assert c[4] == b"$2\r\nhi\r\n"
    assert c[6:9] == [b"+OK\r\n", err,
                      b"-EXECABORT Transaction discarded because of previous errors.\r\n"]
    assert c[9] == ["loading"] + sorted(LOADING_FIELDS)
    if "redis" in got:
        assert got["redis"] == c


def test_progress_is_logged(loading, dumpfile):
    s = loading(cairn_bin(), dumpfile)
    s.wait_loading()
    assert wait_for(lambda: "Loading RDB: " in s.log), s.log
    s.finish()
    assert "Done loading RDB, keys loaded: %d" % KEYS in s.log


@pytest.mark.parametrize("how", ["sigterm", "shutdown"])
def test_stop_during_loading_keeps_file(loading, dumpfile, how):
    s = loading(cairn_bin(), dumpfile, save="3600 1")
    s.wait_loading()
    path = os.path.join(s.dir, "dump.rdb")
    before = os.stat(path)
    if how == "sigterm":
        s.proc.send_signal(signal.SIGTERM)
    else:
        try:
            s.r.shutdown()
        except redis.ConnectionError:
            pass
    assert s.proc.wait(timeout=20) == 0
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == \
        (before.st_ino, before.st_mtime_ns, before.st_size)
    assert "Done loading RDB" not in s.log
