"""cairn-check-rdb (built beside the server): accepts what the server
loads and prints what redis-check-rdb prints (the AUX fields, the
databases, the checksum, the keys, the expires and the keys already
expired); on a truncated, flipped or foreign file it names the offset and
reason of the first error and exits 1 — agreeing with Debian's
redis-check-rdb on which files are sound, and byte for byte on a sound
file."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import cairn_bin
from rdbhelp import populate

CHECK = os.path.join(os.path.dirname(cairn_bin()), "cairn-check-rdb")
if not os.path.exists(CHECK):
    CHECK = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "build", "cairn-check-rdb")
REDIS_CHECK = shutil.which("redis-check-rdb")
pytestmark = pytest.mark.skipif(not os.path.exists(CHECK), reason="cairn-check-rdb not built")


def check(path):
    p = subprocess.run([CHECK, path], capture_output=True, text=True, errors="replace", timeout=60)
    return p.returncode, p.stdout


def redis_check(path):
    p = subprocess.run([REDIS_CHECK, path], capture_output=True, text=True, errors="replace", timeout=60)
    return p.returncode


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    """A Cairn dump of every type, with expires."""
    from conftest import Server
    s = Server(cairn_bin(), {"enable-debug-command": "yes"})
    try:
        r = s.client()
        populate(r, seed=3)
        r.save()
        counts = {}
        for db in range(16):
            r.execute_command("SELECT", db)
            for k in r.keys("*"):
                t = r.type(k).decode()
                counts[t] = counts.get(t, 0) + 1
        d = tmp_path_factory.mktemp("check")
        path = str(d / "dump.rdb")
        shutil.copy(os.path.join(s.tmp, "dump.rdb"), path)
    finally:
        s.stop()
        s.cleanup()
    return path, counts


def test_sound_file(dumps):
    path, counts = dumps
    rc, out = check(path)
    assert rc == 0, out
    assert "RDB looks OK" in out and "Checksum OK" in out
    assert "[offset 0] Checking RDB file %s\n" % path in out
    assert re.search(r"^\[offset \d+\] AUX FIELD redis-ver = '[^']*'$", out, re.M), out
    assert re.search(r"^\[offset \d+\] Selecting DB ID 0$", out, re.M), out
    total = int(re.search(r"\[info\] (\d+) keys read", out).group(1))
    assert total >= sum(counts.values())
    if REDIS_CHECK:
        p = subprocess.run([REDIS_CHECK, path], capture_output=True, text=True, errors="replace", timeout=60)
        assert p.returncode == 0 and out == p.stdout


def test_usage_and_missing(tmp_path):
    p = subprocess.run([CHECK], capture_output=True, text=True, errors="replace")
    assert p.returncode == 1 and "Usage:" in p.stderr
    # As redis-check-rdb: nothing after the first line.
    missing = str(tmp_path / "none.rdb")
    rc, out = check(missing)
    assert rc == 1 and out == "[offset 0] Checking RDB file %s\n" % missing
    empty = tmp_path / "empty.rdb"
    empty.write_bytes(b"")
    rc, out = check(str(empty))
    assert rc == 1 and "[offset 0] Unexpected EOF reading RDB file" in out


def damaged(path, tmp_path):
    data = open(path, "rb").read()
    out = {}
    for cut in (5, 9, 20, len(data) // 3, len(data) // 2, len(data) - 9, len(data) - 1):
        out["cut%d" % cut] = data[:cut]
    out["crc"] = data[:-1] + bytes([data[-1] ^ 0xff])
    out["signature"] = b"RUBIS0010" + data[9:]
    out["version"] = b"REDIS0099" + data[9:]
    mid = len(data) // 2
    out["type"] = data[:mid] + b"\x77" + data[mid + 1:]
    files = {}
    for name, blob in out.items():
        p = tmp_path / (name + ".rdb")
        p.write_bytes(blob)
        files[name] = str(p)
    return files


def test_damaged_files(dumps, tmp_path):
    path, _ = dumps
    size = os.path.getsize(path)
    for name, p in damaged(path, tmp_path).items():
        rc, out = check(p)
        if name == "type" and rc == 0:
            continue  # the byte happened to land inside a value that stays valid
        assert rc == 1, (name, out)
        m = re.search(r"--- RDB ERROR DETECTED ---\n\[offset (\d+)\] (.+)", out)
        assert m, (name, out)
        assert 0 <= int(m.group(1)) <= size
        if name == "crc":
            assert m.group(2) == "RDB CRC error"  # redis-check-rdb's words
        if name == "signature":
            assert "signature" in m.group(2)
        if REDIS_CHECK:
            assert redis_check(p) != 0, name


@pytest.mark.skipif(not REDIS_CHECK, reason="no redis-check-rdb")
def test_agrees_with_redis_check_rdb_on_redis_file(start_oracle, tmp_path):
    o = start_oracle()
    r = o.client()
    populate(r, seed=9)
    r.save()
    p = os.path.join(o.tmp, "dump.rdb")
    assert redis_check(p) == 0
    rc, out = check(p)
    assert rc == 0, out
    rp = subprocess.run([REDIS_CHECK, p], capture_output=True, text=True, errors="replace", timeout=60)
    assert out == rp.stdout  # byte for byte
