"""Loadable modules (issue 41): dictionaries, the stream key API, and a
module data type's aux data and key-option callbacks (tests/modules/
moddata.c), loaded into Cairn and into redis-server 7.0.15; the same
commands must give the same bytes.  Also: aux data in RDB files moving
both ways between the two servers, the lazy-free decision taken from the
type's free_effort (INFO's lazyfreed_objects), unlink on every way a value
leaves its key, MEMORY USAGE through mem_usage."""
import os
import shutil
import subprocess
import tempfile

import pytest

from resphelp import encode, read_values
from waithelp import wait_for
from test_modules import ROOT, built_modules, loaded, mod, plain, raw, same  # noqa: F401 (built_modules: the autouse fixture)


KEYS = ["b", "a", "ab", "abc", "", "\x00", "\x00\x01", "b\xff", "\xff", "c", "ca", "ba"]

DICT_CMDS = (
    [("dict.size",), ("dict.walk", "^", "x", "nnp"), ("dict.walk", "$", "", "pn"), ("dict.walk", "==", "", "n")]
    + [("dict.setc", k, "v-" + k) for k in KEYS]
    + [("dict.setc", "a", "again"), ("dict.replace", "a", "new-a"), ("dict.replace", "zz", "new-zz"),
       ("dict.size",), ("dict.get", "a"), ("dict.get", ""), ("dict.get", "nokey"), ("dict.get", "\x00")]
    + [("dict.walk", op, k, "nnnnpppp") for op in ("^", "$", ">", ">=", "<", "<=", "==", "=")
       for k in ("", "a", "ab", "abd", "b", "\x00", "\xff", "zzz", "ba")]
    + [("dict.walk", "^", "", "n" * 16), ("dict.walk", "$", "", "p" * 16), ("dict.walk", "^", "", "NNNPPP"),
       ("dict.walk", ">=", "ab", "pppnnn"), ("dict.walk", ">", "zz", "npn"), ("dict.walk", "<", "", "pnp"),
      ]
    + [("dict.cmp", op, k, cop, ck) for op, k in (("^", ""), (">=", "ab"), ("$", ""), ("==", "nokey"))
       for cop in (">", ">=", "<", "<=", "==", "=", "^", "x")
       for ck in ("", "a", "ab", "abc", "abd", "\xff")]
    + [("dict.cmp", "^", "", ">", "", "nnnnnnnnnnnnnnnnnn"), ("dict.cmp", "^", "", "<=", "zzz", "nnp")]
    + [("dict.reseek", "^", "", op, k) for op in (">", "<=", "$", "==") for k in ("abc", "c")]
    + [("dict.del", "ab"), ("dict.del", "ab"), ("dict.del", ""), ("dict.size",), ("dict.walk", "^", "", "nnnn"),
       ("dict.nullval", "k"), ("dict.nullval", ""), ("dict.auto", "100"), ("dict.auto", "0"),
       ("dict.clear",), ("dict.size",), ("dict.walk", "^", "", "np")]
)


def test_dict_matches_redis(start_server, start_oracle):
    s = loaded(start_server, "moddata")
    o = loaded(start_oracle, "moddata")
    got = same(s, o, DICT_CMDS)
    r = plain(s)
    assert r.execute_command("dict.size") == 0
    for k in KEYS:
        r.execute_command("dict.setc", k, "v")
    # binary keys in memcmp order, a prefix first
    walk = r.execute_command("dict.walk", "^", "", "n" * len(KEYS))
    assert [w[0] for w in walk] == sorted(k.encode("utf-8") for k in KEYS)
    assert got[0] == b":0\r\n"
    # an unknown operator: ERR and the end (Redis 7.0 leaves its iterator
    # half set up, and the next step crashes it: not compared)
    assert r.execute_command("dict.reseek", "^", "", "?", "a") == [0, None]
    assert r.execute_command("dict.reseek", "^", "", ">", "a")[0] == 1
    assert r.execute_command("dict.walk", "!", "a", "np") == [None, None]


def _ids(srv, key):
    return [e[0] for e in plain(srv).execute_command("xrange", key, "-", "+")]


STREAM_CMDS = (
    [("stream.add", "s", "1-1", "f1", "v1", "f2", "v2"), ("stream.add", "s", "1-1", "f", "v"),
     ("stream.add", "s", "0-5", "f", "v"), ("stream.add", "s", "1-2", "f1", "x", "f2", "y"),
     ("stream.add", "s", "2-0", "other", "z"), ("stream.addempty", "s", "3-0"),
     ("stream.add", "s", "3-1", "", "\x00bin\xff")]
    + [("stream.add", "s", "10-%d" % i, "n", str(i)) for i in range(250)]
    + [("xrange", "s", "-", "+", "COUNT", "12"), ("xlen", "s"), ("xinfo", "stream", "s"),
       ("stream.range", "s", "-", "-"), ("stream.range", "s", "1-2", "10-3"), ("stream.range", "s", "1-2", "10-3", "excl"),
       ("stream.range", "s", "1-2", "10-3", "rev"), ("stream.range", "s", "1-2", "10-3", "rev", "excl"),
       ("stream.range", "s", "10-200", "-", "rev"), ("stream.range", "s", "5-0", "4-0"),
       ("stream.range", "nokey", "-", "-"), ("stream.del", "s", "1-2"), ("stream.del", "s", "1-2"),
       ("stream.del", "s", "9-9"), ("stream.range", "s", "-", "3-1"), ("xinfo", "stream", "s"),
       ("stream.iterdel", "s", "10-0", "10-100", "1"), ("xlen", "s"), ("xrange", "s", "10-0", "10-12"),
       ("xinfo", "stream", "s"), ("stream.trimlen", "s", "200", "approx"), ("xlen", "s"),
       ("stream.trimlen", "s", "150"), ("xlen", "s"), ("xrange", "s", "-", "+", "COUNT", "3"),
       ("stream.trimid", "s", "10-120", "approx"), ("xlen", "s"), ("stream.trimid", "s", "10-130"),
       ("xrange", "s", "-", "+", "COUNT", "3"), ("xinfo", "stream", "s"), ("stream.errors", "s"),
       ("stream.trimlen", "s", "0"), ("xlen", "s"), ("exists", "s"), ("xinfo", "stream", "s"),
       ("set", "str", "x"), ("stream.add", "str", "1-1", "a", "b"), ("stream.range", "str", "-", "-"),
       ("stream.del", "str", "1-1"), ("stream.trimlen", "str", "1"), ("stream.addempty", "e", "5-5"),
       ("xrange", "e", "-", "+"), ("stream.add", "e", "*", "f", "v"), ("xlen", "e"),
       ("stream.add", "m", "18446744073709551615-18446744073709551615", "a", "b"),
       ("stream.add", "m", "*", "a", "b"), ("stream.errors", "m"), ("type", "m")]
)


def test_stream_api_matches_redis(start_server, start_oracle):
    s = loaded(start_server, "moddata")
    o = loaded(start_oracle, "moddata")
    got = same(s, o, STREAM_CMDS)
    assert got[0] == b"$3\r\n1-1\r\n"
    # what the module iterates is what XRANGE lists, on both
    for srv in (s, o):
        r = plain(srv)
        mod_ids = [e[0] for e in r.execute_command("stream.range", "e", "-", "-")]
        assert mod_ids == _ids(srv, "e")


def test_stream_add_wakes_blocked_xread(start_server):
    s = loaded(start_server, "moddata")
    r = plain(s)
    r.execute_command("stream.add", "bs", "1-1", "a", "b")
    with s.connect() as conn:
        conn.send(encode("XREAD", "BLOCK", "5000", "STREAMS", "bs", "$"))
        wait_for(lambda: b"blocked_clients:1" in r.execute_command("INFO", "clients"), what="blocked")
        assert r.execute_command("stream.add", "bs", "2-2", "c", "d") == b"2-2"
        reply = read_values(conn, 1)
    assert b"2-2" in reply and b"$1\r\nc\r\n" in reply


def _fill(srv, aux=True):
    r = plain(srv)
    r.execute_command("mdt.set", "k1", "one")
    r.execute_command("select", "2")
    r.execute_command("mdt.set", "k2", "two" * 50)
    r.execute_command("select", "0")
    if aux:
        r.execute_command("mdt.aux.set", "before-data", "after\x00data")
    return r


@pytest.mark.parametrize("direction", ["cairn-to-redis", "redis-to-cairn"])
@pytest.mark.parametrize("aux", ["1", "2"])
def test_aux_rdb_interchange(start_server, start_oracle, direction, aux):
    first, second = (start_server, start_oracle) if direction == "cairn-to-redis" else (start_oracle, start_server)
    a = loaded(first, ("moddata", "aux", aux), enable_debug_command="yes")
    r = _fill(a)
    assert r.execute_command("SAVE") == b"OK"
    saved = r.execute_command("mdt.aux.get")
    assert saved[2] == int(aux)  # aux_save called once per trigger
    with open(os.path.join(a.tmp, "dump.rdb"), "rb") as f:
        data = f.read()
    assert data.count(b"\xf7") >= int(aux)  # RDB_OPCODE_MODULE_AUX records
    d = tempfile.mkdtemp(prefix="cairn-aux-")
    shutil.copy(os.path.join(a.tmp, "dump.rdb"), os.path.join(d, "dump.rdb"))
    b = loaded(second, ("moddata", "aux", aux), enable_debug_command="yes", args=["--dir", d])
    rb = plain(b)
    got = rb.execute_command("mdt.aux.get")
    expect_before = b"before-data" if aux == "2" else None
    assert got[0] == expect_before and got[1] == b"after\x00data"
    assert got[3] == int(aux) and got[4] == (12 if aux == "2" else 2)  # BEFORE (1) then AFTER (2)
    assert rb.execute_command("mdt.get", "k1") == b"one"
    rb.execute_command("select", "2")
    assert rb.execute_command("mdt.get", "k2") == b"two" * 50
    # GetDbIdFromIO: saved and loaded in database 2 last (db 0's k1 before)
    cnt = rb.execute_command("mdt.counters")
    assert cnt[cnt.index(b"iodb") + 1] % 100 == 2


def test_aux_without_module_fails_as_redis(start_server, start_oracle):
    """A file with aux data of a module that is not loaded: the load fails
    and the server does not start, on both, with Redis's log line."""
    for start in (start_server, start_oracle):
        a = loaded(start, ("moddata", "aux", "1"))
        r = plain(a)
        r.execute_command("mdt.aux.set", "x", "y")
        assert r.execute_command("SAVE") == b"OK"
        d = tempfile.mkdtemp(prefix="cairn-aux-")
        shutil.copy(os.path.join(a.tmp, "dump.rdb"), os.path.join(d, "dump.rdb"))
        with pytest.raises(RuntimeError):
            start(args=["--dir", d])
    # aux data for a module loaded without aux_load: refused as well
    a = loaded(start_server, ("moddata", "aux", "1"))
    plain(a).execute_command("SAVE")
    d = tempfile.mkdtemp(prefix="cairn-aux-")
    shutil.copy(os.path.join(a.tmp, "dump.rdb"), os.path.join(d, "dump.rdb"))
    with pytest.raises(RuntimeError):
        loaded(start_server, "moddata", args=["--dir", d])


def test_aux_debug_reload(start_server, start_oracle):
    for start in (start_server, start_oracle):
        a = loaded(start, ("moddata", "aux", "2"), enable_debug_command="yes")
        r = _fill(a)
        assert r.execute_command("DEBUG", "RELOAD") == b"OK"
        got = r.execute_command("mdt.aux.get")
        assert got[:2] == [b"before-data", b"after\x00data"]
        assert got[2:] == [2, 2, 12]


def _counter(r, name):
    c = r.execute_command("mdt.counters")
    return c[c.index(name) + 1]


KEYOPT_CMDS = [
    ("mdt.set", "a", "alpha"), ("mdt.set", "b", "beta"), ("mdt.counters",),
    ("del", "a"), ("mdt.counters",), ("mdt.set", "a", "alpha"), ("rename", "a", "a2"), ("mdt.counters",),
    ("mdt.set", "c", "gamma"), ("rename", "c", "a2"), ("mdt.counters",), ("move", "a2", "3"), ("mdt.counters",),
    ("copy", "b", "b2"), ("mdt.counters",), ("copy", "b", "b3", "db", "4"), ("mdt.counters",),
    ("mdt.get", "b2"), ("mdt.set", "f", "fail"), ("set", "dst", "keep"), ("copy", "f", "dst", "replace"),
    ("get", "dst"), ("mdt.counters",), ("set", "b2", "overwritten"), ("mdt.counters",),
    ("mdt.set", "e", "exp"), ("pexpire", "e", "1"), ("debug", "sleep", "0.01"), ("get", "e"), ("mdt.counters",),
    ("mdt.effort", "1"), ("mdt.set", "u", "x"), ("unlink", "u"), ("mdt.counters",),
    ("memory", "usage", "b", "samples", "7"), ("mdt.counters",), ("memory", "usage", "b", "samples", "0"),
    ("mdt.counters",), ("mdt.tostring", "b"), ("mdt.defrag",), ("select", "5"), ("mdt.set", "d5", "x"),
    ("dump", "d5"), ("mdt.counters",), ("select", "0"), ("flushall",), ("mdt.counters",),
]


@pytest.mark.parametrize("v1", [False, True])
def test_key_option_callbacks_match_redis(start_server, start_oracle, v1):
    m = ("moddata", "v1") if v1 else "moddata"
    s = loaded(start_server, m, enable_debug_command="yes")
    o = loaded(start_oracle, m, enable_debug_command="yes")
    # MEMORY USAGE's total differs (each server's own overhead): only the
    # module's part is compared, through its counters
    cmds = [c for c in KEYOPT_CMDS]
    a = raw(s, cmds)
    b = raw(o, cmds)
    for cmd, x, y in zip(cmds, a, b):
        if cmd[0] == "memory":
            continue
        if cmd[0] == "mdt.counters" and cmd is cmds[-1]:
            # FLUSHALL frees values; the count of frees is the same
            pass
        assert x == y, "%r: cairn %r, redis %r" % (cmd, x, y)


def test_memory_usage_follows_mem_usage(start_server):
    s = loaded(start_server, "moddata")
    r = plain(s)
    r.execute_command("mdt.set", "x1", "a")
    r.execute_command("mdt.set", "x2", "a" * 101)
    assert r.execute_command("memory", "usage", "x2") - r.execute_command("memory", "usage", "x1") == 1000


@pytest.mark.parametrize("effort,lazy", [(1, 0), (64, 0), (65, 1), (0, 1)])
def test_free_effort_decides_lazy_free(start_server, start_oracle, effort, lazy):
    """UNLINK frees on the lazy-free thread when free_effort is above 64 or
    0 (Redis's rule); DEL never asks."""
    for start in (start_server, start_oracle):
        r = plain(loaded(start, "moddata"))
        r.execute_command("mdt.effort", str(effort))

        def lazyfreed():
            info = r.execute_command("INFO", "memory").decode()
            return int(info.split("lazyfreed_objects:")[1].split()[0])

        before = lazyfreed()
        r.execute_command("mdt.set", "k", "v")
        assert r.execute_command("unlink", "k") == 1
        if lazy:  # the thread frees the value, then counts it
            wait_for(lambda: lazyfreed() - before == 1, what="freed on the lazy-free thread")
            wait_for(lambda: _counter(r, b"free") == 1, what="value freed")
        else:  # freed before UNLINK answered
            assert _counter(r, b"free") == 1
            assert lazyfreed() == before
        assert _counter(r, b"effort") == 1
        r.execute_command("mdt.set", "k", "v")
        assert r.execute_command("del", "k") == 1
        assert _counter(r, b"effort") == 1
        assert _counter(r, b"unlink") == 2


def test_unload_refused_and_exports(start_server, start_oracle):
    """The module has a data type: unload is refused; every function this
    slice declares is exported by both servers (the probe)."""
    for start in (start_server, start_oracle):
        srv = loaded(start, "moddata")
        assert b"exports one or more module-side data types" in raw(srv, [("module", "unload", "moddata")])[0]


@pytest.mark.parametrize("pair", ["cairn-cairn", "redis-cairn", "cairn-redis"])
@pytest.mark.parametrize("diskless", ["no", "yes"])
def test_aux_data_reaches_replica(start_server, start_oracle, pair, diskless):
    """A full sync carries the aux records (the snapshot the primary sends,
    on disk or streamed), between Cairn and redis-server either way."""
    starts = {"cairn": start_server, "redis": start_oracle}
    p_name, r_name = pair.split("-")
    p = loaded(starts[p_name], ("moddata", "aux", "2"), repl_diskless_sync=diskless)
    _fill(p)
    rep = loaded(starts[r_name], ("moddata", "aux", "2"), repl_diskless_load="swapdb" if diskless == "yes" else "disabled")
    rr = plain(rep)
    rr.execute_command("replicaof", "127.0.0.1", str(p.port))
    wait_for(lambda: b"master_link_status:up" in rr.execute_command("INFO", "replication"), what="replica synced")
    got = rr.execute_command("mdt.aux.get")
    assert got[:2] == [b"before-data", b"after\x00data"]
    assert rr.execute_command("mdt.get", "k1") == b"one"


def test_stream_iterator_delete_goes_on(start_server):
    """Deleting through the iterator and going on visits every entry once
    (Cairn only: Redis 7.0.15 stops or asserts in some node layouts)."""
    r = plain(loaded(start_server, "moddata", stream_node_max_entries="4"))
    for i in range(21):
        r.execute_command("stream.add", "s", "10-%d" % i, "n", str(i))
    assert r.execute_command("stream.iterdel", "s", "-", "-", "3") == [7, 1]
    ids = [e[0] for e in r.execute_command("xrange", "s", "-", "+")]
    assert ids == [b"10-%d" % i for i in range(21) if i % 3]
    assert r.execute_command("xlen", "s") == 14
    assert [e[0] for e in r.execute_command("stream.range", "s", "-", "-", "rev")] == ids[::-1]


@pytest.mark.parametrize("which", ["cairn", "redis"])
def test_check_rdb_reads_past_module_data(start_server, start_oracle, which):
    """cairn-check-rdb, which loads no module, reads past module values and
    aux records by their opcodes and prints what redis-check-rdb prints."""
    from test_check_rdb import REDIS_CHECK, check
    if not REDIS_CHECK:
        pytest.skip("no redis-check-rdb (scripts/deps.sh installs redis-tools)")
    a = loaded(start_server if which == "cairn" else start_oracle, ("moddata", "aux", "2"))
    r = _fill(a)
    r.execute_command("set", "plain", "v")
    r.execute_command("pexpire", "k1", "100000000")
    assert r.execute_command("SAVE") == b"OK"
    p = os.path.join(a.tmp, "dump.rdb")
    rc, out = check(p)
    assert rc == 0, out
    rp = subprocess.run([REDIS_CHECK, p], capture_output=True, text=True, errors="replace", timeout=60)
    assert rp.returncode == 0
    assert out == rp.stdout  # the same file: byte for byte
    assert "3 keys read" in out and "1 expires" in out


def test_digest_of_a_type_without_digest_callback(start_server, start_oracle):
    """moddatat1 has no digest callback: its value adds nothing to the key's
    digest (Redis xors the module's sequences only when the callback exists),
    so DEBUG DIGEST and DIGEST-VALUE are the same bytes on both servers."""
    got = []
    for start in (start_server, start_oracle):
        srv = loaded(start, "moddata", enable_debug_command="yes")
        r = _fill(srv, aux=False)
        r.execute_command("SET", "plain", "v")
        r.execute_command("mdt.set", "k3", "three")
        r.execute_command("PEXPIRE", "k3", "100000000")
        got.append([r.execute_command("DEBUG", "DIGEST"),
                    r.execute_command("DEBUG", "DIGEST-VALUE", "k1", "k3", "plain", "missing")])
    assert got[0] == got[1]
