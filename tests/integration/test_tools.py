"""The stock redis tools (redis-cli, redis-benchmark) work against the server."""
import os
import shutil
import subprocess

import pytest
from resphelp import encode as resp

pytestmark = pytest.mark.skipif(not shutil.which("redis-cli"), reason="no redis-cli")

N_PIPE = int(os.environ.get("TOOLS_PIPE_KEYS", "1000000"))


def write_set_file(path, n):
    with open(path, "wb") as f:
        chunk = []
        for i in range(n):
            k = b"key:%d" % i
            v = b"val:%d" % i
            chunk.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
            if len(chunk) >= 10000:
                f.write(b"".join(chunk))
                chunk = []
        f.write(b"".join(chunk))


def cli(server, *args, **kw):
    return subprocess.run(["redis-cli", "-h", server.host, "-p", str(server.port)] + list(args),
                          capture_output=True, timeout=600, **kw)


@pytest.fixture
def loaded(server):
    path = os.path.join(server.tmp, "sets.resp")
    write_set_file(path, N_PIPE)
    with open(path, "rb") as f:
        r = cli(server, "--pipe", stdin=f)
    os.unlink(path)
    assert r.returncode == 0, r.stderr
    assert b"errors: 0, replies: %d" % N_PIPE in r.stdout, r.stdout
    return server


def expected_prefix_count(n, prefix_digit="1"):
    return sum(1 for i in range(n) if str(i).startswith(prefix_digit))


def test_cli_pipe_loads_all_keys(loaded):
    r = loaded.client()
    assert r.dbsize() == N_PIPE
    assert r.get(b"key:0") == b"val:0"
    assert r.get(b"key:%d" % (N_PIPE - 1)) == b"val:%d" % (N_PIPE - 1)


def test_cli_scan_pattern_count(loaded):
    r = cli(loaded, "--scan", "--pattern", "key:1*")
    assert r.returncode == 0, r.stderr
    keys = r.stdout.split()
    assert len(keys) == len(set(keys))
    assert len(keys) == expected_prefix_count(N_PIPE)
    assert all(k.startswith(b"key:1") for k in keys)


def test_cli_basic_commands(server):
    assert cli(server, "PING").stdout == b"PONG\n"
    assert cli(server, "SET", "a", "hello world").stdout == b"OK\n"
    assert cli(server, "GET", "a").stdout == b"hello world\n"
    assert cli(server, "INCR", "n").stdout == b"1\n"
    assert cli(server, "GET", "missing").stdout == b"\n"


def test_cli_over_unix_socket(server):
    r = subprocess.run(["redis-cli", "-s", server.unixsocket, "PING"],
                       capture_output=True, timeout=60)
    assert r.stdout == b"PONG\n"


@pytest.mark.skipif(not shutil.which("redis-benchmark"), reason="no redis-benchmark")
def test_benchmark_set_get_runs(server):
    r = subprocess.run(["redis-benchmark", "-h", server.host, "-p", str(server.port),
                        "-t", "set,get", "-n", "10000", "-q"],
                       capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "SET:" in out and "GET:" in out, out
    assert server.client().dbsize() >= 1


@pytest.mark.skipif(not shutil.which("redis-benchmark"), reason="no redis-benchmark")
def test_benchmark_pipelined_csv(server):
    r = subprocess.run(["redis-benchmark", "-h", server.host, "-p", str(server.port),
                        "-t", "ping,incr,mset", "-n", "5000", "-P", "16", "-q", "--csv"],
                       capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(b"\n") >= 4, r.stdout
