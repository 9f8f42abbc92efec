"""Files loaded with their LZF strings expanded by several threads
(rdb-load-threads, Cairn's own directive): for the benchmark's four shapes
and a dataset of every type and encoding, written by Cairn or by
redis-server, loading with 1, 2, 3 or 7 threads gives the same keys,
DEBUG DIGEST and OBJECT ENCODINGs as one thread and as redis-server; a
corrupt file (a bad LZF blob in the middle of the file, a truncation, a bad
CRC) is refused with the same offset and reason whatever the thread count;
a replica's disk-based full sync loads with threads."""
import os
import re
import subprocess
import time
import shutil

import pytest
import redis

from conftest import cairn_bin, free_port
from test_rdb import raw_client, start_with_file
from test_rdb_loading import loading, wait_for  # noqa: F401 (fixture)
from test_rdb_threads import fill
from test_repl import FAST, attach, same_digest

THREADS = (1, 2, 3, 7)
DBG = {"enable-debug-command": "yes"}


def shapes(r, scale=1):
    """The benchmark's shapes (bench/persist.py), small: LZF-compressed
    hash and sorted-set listpacks and list nodes, strings short and long."""
    pipe = r.pipeline(transaction=False)
    for i in range(3000 * scale):
        pipe.set("str:%d" % i, "value-%d-%s" % (i, "x" * (i % 64)))
    for i in range(1500 * scale):
        pipe.hset("hash:%d" % i, mapping={"field:%d" % j: "value:%d:%d" % (i, j) for j in range(10)})
    for i in range(300 * scale):
        pipe.zadd("zset:%d" % i, {"member:%d:%d" % (i, j): j * 1.5 for j in range(100)})
    pipe.execute()
    for i in range(30 * scale):
        r.rpush("list:%d" % i, *["item:%d:%d" % (i, j) for j in range(1000)])


def keys_of(r):
    out = {}
    for db in range(16):
        r.execute_command("SELECT", db)
        ks = list(r.scan_iter(count=1000))
        pipe = r.pipeline(transaction=False)
        for k in ks:
            pipe.object("encoding", k)
            pipe.pttl(k)
        res = pipe.execute()
        for i, k in enumerate(ks):
            ttl = res[2 * i + 1]
            out[(db, k)] = (res[2 * i], ttl > 0 if ttl != -1 else -1)
    r.execute_command("SELECT", 0)
    return out


def state(r):
    return r.execute_command("DEBUG", "DIGEST"), keys_of(r)


def loads_by_threads(r):
    """{threads: state} after DEBUG RELOAD NOSAVE (the file on disk loaded
    again) with each thread count."""
    out = {}
    for n in THREADS:
        r.config_set("rdb-load-threads", n)
        assert r.execute_command("DEBUG", "RELOAD", "NOSAVE") == b"OK"
        out[n] = state(r)
    return out


def test_cairn_file_same_with_any_thread_count(start_server, start_oracle):
    s = start_server(**DBG)
    r = raw_client(s)
    fill(r, seed=9)
    shapes(r)
    assert r.save()
    assert os.path.getsize(os.path.join(s.tmp, "dump.rdb")) > 4000000
    want = state(r)
    got = loads_by_threads(r)
    for n, st in got.items():
        assert st[0] == want[0], n
        assert st[1] == want[1], n
    # the start-up load with threads, and redis-server's view of the file
    s2, _ = start_with_file(start_server, os.path.join(s.tmp, "dump.rdb"), **{"rdb-load-threads": 3}, **DBG)
    assert state(raw_client(s2)) == want
    o, _ = start_with_file(start_oracle, os.path.join(s.tmp, "dump.rdb"), **DBG)
    assert state(raw_client(o)) == want


def test_redis_file_same_with_any_thread_count(start_server, start_oracle):
    o = start_oracle(**DBG)
    ro = raw_client(o)
    fill(ro, seed=4)
    shapes(ro)
    ro.set("lzf-big", ("redis big value " * 100000) + "end")
    assert ro.save()
    want = state(ro)
    s, _ = start_with_file(start_server, os.path.join(o.tmp, "dump.rdb"), **{"rdb-load-threads": 7}, **DBG)
    r = raw_client(s)
    assert state(r) == want
    for n, st in loads_by_threads(r).items():
        assert st == want, n


# --- corrupt files ---------------------------------------------------------

def rdb_len(b, i):
    t = b[i] >> 6
    if t == 0:
        return b[i] & 0x3F, i + 1
    if t == 1:
        return ((b[i] & 0x3F) << 8) | b[i + 1], i + 2
    n = 4 if b[i] == 0x80 else 8
    return int.from_bytes(b[i + 1:i + 1 + n], "big"), i + 1 + n


def lzf_values(data):
    """Offsets of the compressed bytes of each hash's LZF listpack, in a
    file of hashes only (SELECTDB, RESIZEDB, AUX before them)."""
    i, out = 9, []
    while data[i] != 0xFF:
        t = data[i]
        i += 1
        if t == 0xFA:
            for _ in range(2):
                i = skip_str(data, i)
        elif t == 0xFE:
            i = rdb_len(data, i)[1]
        elif t == 0xFB:
            i = rdb_len(data, rdb_len(data, i)[1])[1]
        else:
            assert t == 16, t  # hash listpack
            i = skip_str(data, i)
            if data[i] == 0xC3:
                clen, j = rdb_len(data, i + 1)
                _, j = rdb_len(data, j)
                out.append(j)
            i = skip_str(data, i)
    return out


def skip_str(b, i):
    if b[i] >> 6 == 3:
        enc = b[i] & 0x3F
        if enc < 3:
            return i + 1 + (1 << enc)
        clen, j = rdb_len(b, i + 1)
        _, j = rdb_len(b, j)
        return j + clen
    n, j = rdb_len(b, i)
    return j + n


def refusal(tmp, data, threads):
    """(exit code, the loader's error line) of a server started on data."""
    d = os.path.join(tmp, "c%d" % time.monotonic_ns())
    os.mkdir(d)
    with open(os.path.join(d, "dump.rdb"), "wb") as f:
        f.write(data)
    logp = os.path.join(d, "log")
    errp = os.path.join(d, "stderr")  # sanitizer reports
    with open(errp, "wb") as err:
        p = subprocess.Popen([cairn_bin(), "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", d,
                              "--save", "", "--logfile", logp, "--rdb-load-threads", str(threads)],
                             stdout=err, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise AssertionError("a corrupt file did not stop the server")
    with open(logp, errors="replace") as f:
        log = f.read()
    with open(errp, errors="replace") as f:
        log += f.read()
    shutil.rmtree(d, ignore_errors=True)
    # Memory errors and races only: the keys loaded before the refusal are
    # not freed when the server exits (one thread or several), which
    # LeakSanitizer may report.
    for m in ("ERROR: AddressSanitizer", "runtime error:", "ThreadSanitizer", "Segmentation", "crashed"):
        assert m not in log, log
    lines = re.findall(r"Internal error in RDB reading offset.*", log)
    return rc, lines


@pytest.fixture(scope="module")
def hashes_file(tmp_path_factory):
    """A file of 20000 hashes, each an LZF listpack (about 2 MB)."""
    from conftest import Server
    s = Server(cairn_bin(), {})
    try:
        r = s.client()
        pipe = r.pipeline(transaction=False)
        for i in range(20000):
            pipe.hset("h:%d" % i, mapping={"field:%d" % j: "value:%d:%d" % (i, j) for j in range(10)})
        pipe.execute()
        assert r.save()
        with open(os.path.join(s.tmp, "dump.rdb"), "rb") as f:
            data = f.read()
    finally:
        s.stop()
        s.cleanup()
    assert len(data) > 1000000
    return data


def corruptions(data):
    offs = lzf_values(data)
    assert len(offs) > 15000
    mid = offs[len(offs) // 2]
    bad_lzf = bytearray(data)
    bad_lzf[mid] = 0xFF  # a back-reference before the start of the output
    bad_two = bytearray(bad_lzf)
    bad_two[offs[len(offs) // 2 + 3]] = 0xFF  # a second one in the same batch
    bad_crc = bytearray(data)
    bad_crc[-1] ^= 0x01  # the trailer
    nocrc = bytearray(bad_lzf)
    nocrc[-8:] = b"\0" * 8  # no checksum: only the LZF check can stop it
    return {"bad-lzf": bytes(bad_lzf), "two-bad-lzf": bytes(bad_two), "bad-crc": bytes(bad_crc),
            "bad-lzf-nocrc": bytes(nocrc), "truncated": data[:len(data) * 3 // 5],
            "truncated-in-lzf": data[:mid + 5]}


def test_corrupt_files_refused_alike(hashes_file, tmp_path):
    for name, data in corruptions(hashes_file).items():
        rc1, want = refusal(str(tmp_path), data, 1)
        assert rc1 == 1 and len(want) == 1, (name, want)
        for n in THREADS[1:]:
            rc, got = refusal(str(tmp_path), data, n)
            assert (rc, got) == (rc1, want), (name, n)


def test_bad_crc_found_after_loading_with_threads(hashes_file, tmp_path):
    rc, lines = refusal(str(tmp_path), corruptions(hashes_file)["bad-crc"], 3)
    assert rc == 1 and "RDB CRC error" in lines[0], lines


# --- replication and configuration -------------------------------------------

def test_replica_disk_sync_loads_with_threads(start_server):
    p = start_server(**FAST)
    rp = raw_client(p)
    fill(rp, seed=2)
    shapes(rp)
    rs = start_server(**{"repl-diskless-load": "disabled", "rdb-load-threads": 3}, **DBG)
    attach(rs, p)
    assert same_digest(rp, raw_client(rs))
    assert keys_of(raw_client(rs)) == keys_of(rp)


@pytest.mark.parametrize("value", ["-1", "17", "two"])
def test_bad_thread_counts_refused(server, value):
    r = server.client()
    with pytest.raises(redis.ResponseError):
        r.config_set("rdb-load-threads", value)
    assert r.config_get("rdb-load-threads") == {"rdb-load-threads": "0"}
    assert r.config_get("*").get("rdb-load-threads") is None  # Redis's names only
    r.config_set("rdb-load-threads", 5)
    assert r.config_get("rdb-load-threads") == {"rdb-load-threads": "5"}


def test_duplicated_key_refused_alike(tmp_path):
    """A key twice in the file (found by the one lookup that adds it), the
    same refusal with any thread count; keys and values read in place."""
    from test_rdb_deferred import rdb_len, rdb_str
    recs = [b"\x00" + rdb_str("k%d" % i) + (rdb_str("v%d" % i if i % 3 else "%d" % i) if i % 5 else rdb_str("x" * 60))
            for i in range(40000)]
    recs.insert(30000, b"\x00" + rdb_str("k123") + rdb_str("again"))
    data = b"REDIS0010\xfe\x00\xfb" + rdb_len(len(recs)) + rdb_len(0) + b"".join(recs) + b"\xff" + b"\0" * 8
    assert len(data) > 300000
    seen = set()
    for n in THREADS:
        rc, lines = refusal(str(tmp_path), data, n)
        assert rc == 1 and len(lines) == 1 and "duplicated key" in lines[0], lines
        seen.add(lines[0])
    assert len(seen) == 1


def test_loading_with_threads_turns_the_loop_and_stops(hashes_file, tmp_path, loading):
    """A slowed load with 3 threads: -LOADING, progress in INFO, then the
    whole file; a SHUTDOWN in the middle of another (workers busy) exits
    cleanly, the file untouched."""
    path = str(tmp_path / "dump.rdb")
    with open(path, "wb") as f:
        f.write(hashes_file)
    # 20000 keys at 300 us each: a 6 s window to watch (finish() lifts it)
    s = loading(cairn_bin(), path, rdb_load_threads=3, key_load_delay=300)
    s.wait_loading()
    with pytest.raises(redis.exceptions.BusyLoadingError):
        s.r.get("h:1")
    before = s.info()["loading_loaded_bytes"]
    assert wait_for(lambda: s.info()["loading_loaded_bytes"] > before)
    s.finish()
    assert s.r.dbsize() == 20000
    assert s.r.hget("h:19999", "field:9") == b"value:19999:9"
    s2 = loading(cairn_bin(), path, rdb_load_threads=3, key_load_delay=300)
    s2.wait_loading()
    try:
        s2.r.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    assert s2.proc.wait(timeout=30) == 0
    with open(os.path.join(s2.dir, "dump.rdb"), "rb") as f:
        assert f.read() == hashes_file
    for m in ("AddressSanitizer", "runtime error:", "ThreadSanitizer"):
        assert m not in s.log + s2.log
