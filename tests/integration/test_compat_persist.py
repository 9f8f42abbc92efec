"""Persistence behaviours of issue 33, each against redis-server 7.0.15 on
the same files:

- a fatal AOF load (or a broken manifest, or a corrupt RDB) ends the log
  with Redis's own last line, nothing after it (item 16, item 28);
- an interrupted upgrade of Redis 6's single appendonly.aof (manifest
  written, file not moved yet) is resumed (item 17);
- DEBUG LOADAOF reads the manifest again from disk (item 18);
- cairn-check-aof prints what redis-check-aof prints, byte for byte, for
  old-style and multi-part AOFs, --fix and --truncate-to-timestamp
  (item 19);
- the RDB checksum error says "RDB CRC error" (item 28).

Differences kept on purpose and removed before comparing: the tool's name
(cairn-check-aof for redis-check-aof), the extra line naming the offset
where a refused AOF goes wrong (it comes before Redis's lines), the source
line of Redis's rdb.c that its messages about a corrupt value name.
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import time

import pytest

from conftest import cairn_bin, free_port, ORACLE_BIN, SANITIZER_MARKERS
from txhelp import encode as resp
import waithelp

AOFDIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"
B1, I1, I2 = "appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof", "appendonly.aof.2.incr.aof"
R1 = "appendonly.aof.1.base.rdb"
GOOD = resp("SELECT", "0") + resp("SET", "a", "1") + resp("RPUSH", "l", "x", "y")
CUT = b"*3\r\n$3\r\nSET\r\n$1\r\nb"
START_TIMEOUT = 60
PREFIX = re.compile(r"^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ ")


def oracle_bin():
    b = shutil.which(ORACLE_BIN) or ORACLE_BIN
    if not os.path.exists(b):
        pytest.skip("no %s" % ORACLE_BIN)
    return b


def oracle_check_aof():
    b = shutil.which("redis-check-aof")
    if not b:
        pytest.skip("no redis-check-aof")
    return b


def cairn_check_aof(tmp_path):
    """The binary under test run under the tool's name."""
    link = os.path.join(str(tmp_path), "cairn-check-aof")
    if not os.path.exists(link):
        os.symlink(cairn_bin(), link)
    return link


def write_tree(root, files=None, manifest=None, top=None):
    """files go into appendonlydir (with a manifest listing them in order
    unless given), top into the directory itself."""
    os.makedirs(root)
    if files is not None or manifest is not None:
        d = os.path.join(root, AOFDIR)
        os.makedirs(d)
        for name, data in (files or {}).items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        if manifest is None:
            seq, lines = {}, []
            for n in files:
                t = "b" if ".base." in n else "i"
                seq[t] = seq.get(t, 0) + 1
                lines.append("file %s seq %d type %s\n" % (n, seq[t], t))
            manifest = "".join(lines)
        with open(os.path.join(d, MANIFEST), "wb") as f:
            f.write(manifest.encode() if isinstance(manifest, str) else manifest)
    for name, data in (top or {}).items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    return root


_LOGS = []


@pytest.fixture(autouse=True)
def no_sanitizer_reports():
    """Every server this module starts itself: no sanitizer report in its
    log (an ASan build under CAIRN_BIN)."""
    del _LOGS[:]
    yield
    for path in _LOGS:
        if os.path.exists(path):
            log = read_log(path)
            for m in SANITIZER_MARKERS:
                assert m not in log, log


def start(binary, d, **cfg):
    """Starts binary on d until it is ready or has exited.  Returns (the
    process, still running or not, its port, the log)."""
    logpath = os.path.join(d, "log.txt")
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", d, "--save", "", "--logfile", "",
            "--daemonize", "no", "--enable-debug-command", "yes"]
    cfg.setdefault("appendonly", "yes")
    for k, v in cfg.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    with open(logpath, "wb") as logf:
        p = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=d)
    _LOGS.append(logpath)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        with open(logpath, "rb") as f:
            log = f.read().decode("utf-8", "replace")
        if "Ready to accept connections" in log or p.poll() is not None:
            break
        if time.monotonic() > deadline:
            p.kill()
            p.wait()
            raise AssertionError("%s neither ready nor gone:\n%s" % (binary, log))
        time.sleep(0.02)
    return p, port, logpath


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)


def read_log(logpath):
    with open(logpath, "rb") as f:
        return f.read().decode("utf-8", "replace")


def log_lines(log, keep_offset=False):
    """The log's lines without their prefix, from "Server initialized" on,
    without the WARNING lines about the host and (unless keep_offset)
    Cairn's offset line; the tool's name as Cairn's."""
    out, on = [], False
    for line in log.splitlines():
        line = PREFIX.sub("", line)
        if "Server initialized" in line:
            on = True
            continue
        if not on or line.startswith("# WARNING") or (" is invalid from offset " in line and not keep_offset):
            continue
        line = re.sub(r"\d+\.\d+ seconds", "N seconds", line)
        line = re.sub(r"RDB age \d+ seconds", "RDB age N seconds", line)
        out.append(line.replace("./redis-check-aof", "./cairn-check-aof"))
    return out


def run_both(tmp_path, files=None, manifest=None, top=None, keep_offset=False, **cfg):
    """Starts each server on its own copy of the same tree; returns
    {name: (exited, log lines)} after stopping those still running."""
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        d = write_tree(str(tmp_path / name), files, manifest, top)
        p, port, logpath = start(binary, d, **cfg)
        exited = p.poll() is not None
        stop(p)
        res[name] = (exited, log_lines(read_log(logpath), keep_offset), d)
    return res


# --- item 16: the log of a fatal load ends with Redis's last line -----------

FATAL = {
    "truncated-refused": (lambda: ({B1: GOOD, I1: GOOD + CUT}, None, None, {"aof_load_truncated": "no"})),
    "truncated-not-last": (lambda: ({B1: GOOD + CUT, I1: GOOD}, None, None, {})),
    "bad-format": (lambda: ({B1: GOOD, I1: GOOD + b"hello\r\n" + GOOD}, None, None, {})),
    "unknown-command": (lambda: ({B1: GOOD, I1: GOOD + resp("NOSUCHCMD", "x")}, None, None, {})),
    "missing-file": (lambda: ({B1: GOOD}, "file %s seq 1 type b\nfile %s seq 1 type i\n" % (B1, I1), None, {})),
    "bad-rdb-preamble": (lambda: (None, None, {"appendonly.aof": b"REDIS0010\xfa\x03abc"}, {})),
}

def test_aof_file_that_is_a_directory(tmp_path):
    """An incr file of the manifest that is a directory: Redis's read
    error, the log's last line."""
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        d = write_tree(str(tmp_path / name), {B1: GOOD}, "file %s seq 1 type b\nfile %s seq 1 type i\n" % (B1, I1))
        os.mkdir(os.path.join(d, AOFDIR, I1))
        p, port, logpath = start(binary, d)
        exited = p.poll() is not None
        stop(p)
        res[name] = (exited, log_lines(read_log(logpath), keep_offset=True)[-1])
    assert res["redis"][0]
    assert res["cairn"] == res["redis"]


# Broken manifests: Redis's four lines (a blank one after each).
MANIFESTS = {
    "empty": "",
    "too-long-line": "file " + "a" * 1100 + " seq 1 type b\n",
    "no-newline-at-end": "file %s seq 1 type b" % B1,
    "empty-line": "file %s seq 1 type b\n\n" % B1,
    "blank-line": "file %s seq 1 type b\n \t \n" % B1,
    "odd-pairs": "file %s seq 1\n" % B1,
    "seq-zero": "file %s seq 0 type b\n" % B1,
    "seq-not-a-number": "file %s seq x type b\n" % B1,
    "two-bases": "file %s seq 1 type b\nfile %s seq 2 type b\n" % (B1, B1),
    "non-monotonic": "file a seq 2 type i\nfile b seq 1 type i\n",
    "path": "file ../x seq 1 type b\n",
    "unbalanced-quote": "file \"abc seq 1 type b\n",
    "unknown-type": "file %s seq 1 type q\n" % B1,
}


@pytest.mark.parametrize("case", sorted(FATAL))
def test_fatal_aof_load_ends_with_redis_line(tmp_path, case):
    files, manifest, top, cfg = FATAL[case]()
    res = run_both(tmp_path, files, manifest, top, keep_offset=True, **cfg)
    assert res["redis"][0] and res["cairn"][0], res
    want, got = res["redis"][1], res["cairn"][1]
    # Redis then prints redis-check-rdb's report for a corrupt RDB: the
    # log's last line is the one before it.
    want = [w for w in want if not w.startswith(("[", "---"))]
    got = [g for g in got if not g.startswith(("[", "---"))]
    while want and not want[-1].strip():
        want.pop()
    while got and not got[-1].strip():
        got.pop()
    assert got and want
    if case == "bad-rdb-preamble":
        # Both end with the loader's "Internal error in RDB reading" line.
        assert want[-1].startswith("# Internal error in RDB reading offset"), want
        assert got[-1].startswith("# Internal error in RDB reading offset"), got
    else:
        assert got[-1] == want[-1], "\n".join(["redis:"] + want + ["cairn:"] + got)


def test_errors_sent_to_the_loading_client_logged_as_redis(tmp_path):
    """A command of the AOF that fails does not stop the load; Redis logs
    each error with its "== CRITICAL ==" line (EXEC named for one inside
    a transaction, an EXEC without MULTI and a nested MULTI included)."""
    R = resp
    tail = (R("LPUSH", "a", "x") + R("SET", "a", "1", "NX", "XX") + R("MULTI") + R("LPUSH", "a", "x") +
            R("SET", "m", "1") + R("EXEC") + R("EXPIRE", "a", "10", "BOGUS") + R("SELECT", "99") +
            R("ZADD", "z", "nan", "m") + R("EVAL", "return redis.error_reply('boom')", "0") + R("EXEC") +
            R("MULTI") + R("MULTI") + R("SET", "n", "1") + R("EXEC") + R("SET", "last", "1"))
    res = run_both(tmp_path, {B1: GOOD, I1: tail})
    assert not res["redis"][0] and not res["cairn"][0]
    want = [x for x in res["redis"][1] if "CRITICAL" in x]
    assert len(want) == 9, res["redis"][1]
    assert [x for x in res["cairn"][1] if "CRITICAL" in x] == want
    assert res["cairn"][1] == res["redis"][1]


@pytest.mark.parametrize("case", sorted(MANIFESTS))
@pytest.mark.parametrize("appendonly", ["yes", "no"])
def test_broken_manifest_logged_as_redis(tmp_path, case, appendonly):
    """The manifest is read at start-up with the AOF off too (as Redis
    does); its error is Redis's lines, the reason the last."""
    res = run_both(tmp_path, {B1: GOOD}, MANIFESTS[case], appendonly=appendonly)
    assert res["redis"][0] and res["cairn"][0], res
    assert res["cairn"][1] == res["redis"][1], "\n".join(["redis:"] + res["redis"][1] + ["cairn:"] + res["cairn"][1])
    assert "*** FATAL AOF MANIFEST FILE ERROR ***" in res["cairn"][1]


def test_manifest_of_comments_only_is_no_aof(tmp_path):
    res = run_both(tmp_path, {B1: GOOD}, "# a comment\n")
    assert not res["redis"][0] and not res["cairn"][0]
    assert res["cairn"][1] == res["redis"][1]


def test_manifest_type_longer_than_a_byte(tmp_path):
    """Redis reads the type's first byte: "bx" is a base."""
    res = run_both(tmp_path, {B1: GOOD}, "file %s seq 1 type bx\n" % B1)
    assert not res["redis"][0] and not res["cairn"][0]
    assert res["cairn"][1] == res["redis"][1]


def test_corrupt_rdb_checksum_logged_as_redis(tmp_path, rdb_bytes):
    """A dump.rdb whose checksum does not match: Redis's "Wrong RDB
    checksum" line, then the reason "RDB CRC error" as the log's last
    line."""
    data = bytearray(rdb_bytes)
    data[-3] ^= 0xff  # in the stored checksum
    res = run_both(tmp_path, top={"dump.rdb": bytes(data)}, appendonly="no")
    for name in ("redis", "cairn"):
        exited, lines, _ = res[name]
        lines = [x for x in lines if not x.startswith(("[", "---"))]
        assert exited, (name, lines)
        crc = [x for x in lines if x.startswith("# Wrong RDB checksum expected: (")]
        assert len(crc) == 1 and crc[0].endswith("). Aborting now."), (name, lines)
        assert lines[-1].startswith("# Internal error in RDB reading offset"), (name, lines)
        assert lines[-1].endswith("RDB CRC error"), (name, lines)
    want = [x for x in res["redis"][1] if x.startswith("# Wrong RDB checksum")]
    got = [x for x in res["cairn"][1] if x.startswith("# Wrong RDB checksum")]
    assert got == want


# --- item 17: an interrupted upgrade of the single appendonly.aof -----------

UPGRADES = {
    # Manifest written, file not moved yet.
    "interrupted": (None, "file appendonly.aof seq 1 type b\n"),
    # The directory exists, the manifest does not.
    "dir-without-manifest": ({}, None),
    # The manifest lists nothing.
    "manifest-of-comments": ({}, "# nothing\n"),
}


@pytest.mark.parametrize("case", sorted(UPGRADES))
def test_interrupted_upgrade_resumed(tmp_path, case):
    files, manifest = UPGRADES[case]
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        root = str(tmp_path / name)
        os.makedirs(os.path.join(root, AOFDIR))
        with open(os.path.join(root, "appendonly.aof"), "wb") as f:
            f.write(GOOD + resp("SET", "b", "2"))
        if manifest is not None:
            with open(os.path.join(root, AOFDIR, MANIFEST), "w") as f:
                f.write(manifest)
        p, port, logpath = start(binary, root)
        try:
            assert p.poll() is None, read_log(logpath)
            import redis
            c = redis.Redis(port=port, socket_timeout=10)
            data = (c.mget("a", "b"), c.lrange("l", 0, -1))
        finally:
            stop(p)
        with open(os.path.join(root, AOFDIR, MANIFEST)) as f:
            man = f.read()
        res[name] = (data, man, sorted(os.listdir(root)), sorted(os.listdir(os.path.join(root, AOFDIR))),
                     [x for x in log_lines(read_log(logpath)) if "Ready" not in x])
    assert res["redis"][0] == ([b"1", b"2"], [b"x", b"y"])
    assert res["cairn"] == res["redis"]


def test_no_upgrade_when_the_file_is_already_moved(tmp_path):
    """appendonly.aof in both places with the manifest naming it: the one
    in the directory is loaded, the stray one left alone."""
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        root = write_tree(str(tmp_path / name), {"appendonly.aof": GOOD}, "file appendonly.aof seq 1 type b\n",
                          {"appendonly.aof": resp("SET", "stray", "1")})
        p, port, logpath = start(binary, root)
        try:
            import redis
            c = redis.Redis(port=port, socket_timeout=10)
            res[name] = (c.get("a"), c.get("stray"), sorted(os.listdir(root)))
        finally:
            stop(p)
    assert res["redis"][:2] == (b"1", None)
    assert res["cairn"] == res["redis"]


# --- item 18: DEBUG LOADAOF reads the manifest from disk --------------------

@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_debug_loadaof_rereads_manifest(tmp_path, impl):
    """An incr file added to the manifest on disk while the server runs is
    loaded by DEBUG LOADAOF (Redis reads the manifest again)."""
    import redis
    binary = oracle_bin() if impl == "redis" else cairn_bin()
    root = write_tree(str(tmp_path / impl), {B1: GOOD})
    p, port, logpath = start(binary, root, aof_use_rdb_preamble="no")
    try:
        c = redis.Redis(port=port, socket_timeout=10)
        assert c.get("a") == b"1"
        c.set("live", "1")
        with open(os.path.join(root, AOFDIR, MANIFEST)) as f:
            man = f.read()
        incr = [ln.split()[1] for ln in man.splitlines() if ln.endswith("type i")]
        assert len(incr) == 1, man
        extra = "appendonly.aof.9.incr.aof"
        with open(os.path.join(root, AOFDIR, extra), "wb") as f:
            f.write(resp("SET", "added", "yes"))
        with open(os.path.join(root, AOFDIR, MANIFEST), "a") as f:
            f.write("file %s seq 9 type i\n" % extra)
        assert c.execute_command("DEBUG", "LOADAOF") in (b"OK", True, "OK")
        assert c.mget("a", "live", "added") == [b"1", b"1", b"yes"]
        # Writes still go to the file the server had open, which the
        # manifest it read lists: a second load has them all.
        c.set("after", "1")
        c.execute_command("DEBUG", "LOADAOF")
        assert c.mget("a", "live", "added", "after") == [b"1", b"1", b"yes", b"1"]
    finally:
        stop(p)


@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_debug_loadaof_removes_history_with_aof_off(tmp_path, impl):
    """With appendonly no, DEBUG LOADAOF still loads the manifest read from
    disk and removes its history files (rewriting the manifest)."""
    import redis
    binary = oracle_bin() if impl == "redis" else cairn_bin()
    root = write_tree(str(tmp_path / impl))
    p, port, logpath = start(binary, root, appendonly="no")
    try:
        c = redis.Redis(port=port, socket_timeout=10)
        d = os.path.join(root, AOFDIR)
        os.makedirs(d)
        for name, data in (("old.aof", resp("SET", "old", "1")), (B1, GOOD), (I1, resp("SET", "b", "2"))):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        with open(os.path.join(d, MANIFEST), "w") as f:
            f.write("file %s seq 1 type b\nfile old.aof seq 1 type h\nfile %s seq 1 type i\n" % (B1, I1))
        c.execute_command("DEBUG", "LOADAOF")
        assert c.mget("a", "b", "old") == [b"1", b"2", None]
        deadline = time.monotonic() + 30
        while os.path.exists(os.path.join(d, "old.aof")) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sorted(os.listdir(d)) == sorted([B1, I1, MANIFEST])
        with open(os.path.join(d, MANIFEST)) as f:
            assert f.read() == "file %s seq 1 type b\nfile %s seq 1 type i\n" % (B1, I1)
    finally:
        stop(p)


@pytest.mark.parametrize("gc", ["yes", "no"])
def test_history_removed_at_startup_with_aof_off(tmp_path, gc):
    """The manifest is read at start-up with appendonly no too, and its
    history files removed (unless aof-disable-auto-gc), as Redis does."""
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        root = write_tree(str(tmp_path / name), {B1: GOOD, "old.aof": GOOD, I1: GOOD},
                          "file %s seq 1 type b\nfile old.aof seq 1 type h\nfile %s seq 1 type i\n" % (B1, I1))
        p, port, logpath = start(binary, root, appendonly="no", aof_disable_auto_gc="no" if gc == "yes" else "yes")
        try:
            d = os.path.join(root, AOFDIR)
            if gc == "yes":
                wait_for(lambda: not os.path.exists(os.path.join(d, "old.aof")), "history file kept")
            with open(os.path.join(d, MANIFEST)) as f:
                res[name] = (sorted(os.listdir(d)), f.read(),
                             [x for x in log_lines(read_log(logpath)) if "history" in x])
        finally:
            stop(p)
    assert ("old.aof" in res["redis"][0]) == (gc == "no")
    assert res["cairn"] == res["redis"]


@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_debug_loadaof_without_any_aof_exits(tmp_path, impl):
    import redis
    binary = oracle_bin() if impl == "redis" else cairn_bin()
    root = write_tree(str(tmp_path / impl))
    p, port, logpath = start(binary, root, appendonly="no")
    try:
        c = redis.Redis(port=port, socket_timeout=10)
        c.set("k", "v")
        with pytest.raises(redis.ConnectionError):
            c.execute_command("DEBUG", "LOADAOF")
        assert p.wait(timeout=30) == 1
    finally:
        stop(p)


def test_debug_loadaof_writes_nothing_and_sizes_as_redis(tmp_path):
    """DEBUG LOADAOF appends nothing to the AOF (the commands it replays
    are not written again), and INFO's aof_current_size / aof_base_size
    after a restart and after DEBUG LOADAOF are Redis's (the base size is
    the base file's)."""
    import redis
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        root = write_tree(str(tmp_path / name), {B1: GOOD, I1: GOOD + resp("SET", "zz", "1")})
        p, port, logpath = start(binary, root, aof_use_rdb_preamble="no")
        try:
            c = redis.Redis(port=port, socket_timeout=10)
            fields = ("aof_current_size", "aof_base_size")
            i = c.info("persistence")
            at_start = [i[f] for f in fields]
            c.set("q", "1")
            c.execute_command("DEBUG", "LOADAOF")
            c.execute_command("DEBUG", "LOADAOF")
            i = c.info("persistence")
            after = [i[f] for f in fields]
            with open(os.path.join(root, AOFDIR, I1), "rb") as f:
                incr = f.read()
            res[name] = (at_start, after, incr, c.mget("a", "zz", "q"))
        finally:
            stop(p)
    assert res["redis"][0] == [len(GOOD) * 2 + len(resp("SET", "zz", "1")), len(GOOD)]
    assert res["cairn"] == res["redis"]


@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_script_from_aof_writes_on_read_only_replica(tmp_path, impl):
    """An EVAL replayed from the AOF writes although the server is a
    read-only replica (the AOF's client is obeyed, as the primary's)."""
    import redis
    binary = oracle_bin() if impl == "redis" else cairn_bin()
    aof = resp("SELECT", "0") + resp("EVAL", "redis.call('set','k','v') return 1", "0") + resp("SET", "after", "1")
    root = write_tree(str(tmp_path / impl), {B1: aof})
    p, port, logpath = start(binary, root, replicaof="127.0.0.1 %d" % free_port())
    try:
        assert p.poll() is None, read_log(logpath)
        c = redis.Redis(port=port, socket_timeout=10)
        assert c.mget("k", "after") == [b"v", b"1"]
        # A client's script is still refused.
        with pytest.raises(redis.ResponseError) as e:
            c.eval("redis.call('set','k2','v') return 1", 0)
        assert str(e.value).startswith("You can't write against a read only replica.")
    finally:
        stop(p)


@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_slow_script_in_debug_loadaof_answers_loading(tmp_path, impl):
    """While DEBUG LOADAOF replays a script past lua-time-limit, other
    clients get -LOADING (the server is loading), not -BUSY."""
    import threading
    import redis
    binary = oracle_bin() if impl == "redis" else cairn_bin()
    script = "redis.call('set',KEYS[1],'y'); for i=1,1500000 do redis.call('ping') end return 'ok'"
    root = write_tree(str(tmp_path / impl), {B1: resp("SELECT", "9") + resp("EVAL", script, "1", "x")})
    p, port, logpath = start(binary, root, lua_time_limit=1, aof_use_rdb_preamble="no")
    try:
        c = redis.Redis(port=port, socket_timeout=30)
        loader = redis.Redis(port=port, socket_timeout=60)
        done = []
        th = threading.Thread(target=lambda: done.append(loader.execute_command("DEBUG", "LOADAOF")))
        th.start()
        errors = set()
        deadline = time.monotonic() + 60
        while th.is_alive() and time.monotonic() < deadline:
            try:
                c.ping()
            except redis.BusyLoadingError:  # -LOADING, its prefix taken off
                errors.add("LOADING")
            except redis.ResponseError as e:
                errors.add(str(e).split()[0])
            time.sleep(0.005)
        th.join(timeout=60)
        assert done, "DEBUG LOADAOF did not return"
        assert "BUSY" not in errors
        assert "Slow script detected" in read_log(logpath)
        # Observed LOADING unless the load ended before the first PING
        # (then the errors are empty, which proves nothing either way).
        assert errors <= {"LOADING"}
        c.select(9)
        assert c.get("x") == b"y"
    finally:
        stop(p)


# --- item 19: cairn-check-aof prints what redis-check-aof prints ------------

def tool_output(tool, root, args, stdin=None):
    """Runs tool in root; returns (exit code, output lines normalized)."""
    r = subprocess.run([tool] + args, cwd=root, capture_output=True, input=stdin, timeout=60)
    for m in SANITIZER_MARKERS:
        assert m.encode() not in r.stderr, r.stderr
    out = []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        line = PREFIX.sub("", line)
        line = line.replace("redis-check-aof", "cairn-check-aof")
        line = re.sub(r"^Usage: \S*cairn-check-aof", "Usage: cairn-check-aof", line)
        # The report of an RDB preamble: Redis names a line of its rdb.c.
        line = re.sub(r"function at rdb\.c:\d+ -> ", "function at rdb.c: ", line)
        out.append(line)
    return r.returncode, out


def compare_tools(tmp_path, files=None, manifest=None, top=None, args=(), stdin=None):
    res = {}
    for name, tool in (("redis", oracle_check_aof()), ("cairn", cairn_check_aof(tmp_path))):
        root = write_tree(str(tmp_path / ("t-" + name)), files, manifest, top)
        rc, out = tool_output(tool, root, list(args), stdin)
        snap = {}
        for base, _, names in os.walk(root):
            for n in names:
                with open(os.path.join(base, n), "rb") as f:
                    snap[os.path.relpath(os.path.join(base, n), root)] = f.read()
        res[name] = (rc, out, snap)
    assert res["cairn"][:2] == res["redis"][:2], "\n".join(
        ["redis: %d" % res["redis"][0]] + res["redis"][1] + ["cairn: %d" % res["cairn"][0]] + res["cairn"][1])
    assert res["cairn"][2] == res["redis"][2], "the files differ after the tool ran"
    return res["cairn"]


MAN = os.path.join(AOFDIR, MANIFEST)
TS1, TS2 = b"#TS:1000\r\n", b"#TS:2000\r\n"
OPEN_MULTI = resp("MULTI") + resp("SET", "m", "1")

CHECKS = {
    # Old-style single files.
    "old-valid": ({"top": {"x.aof": GOOD}}, ["x.aof"]),
    "old-empty": ({"top": {"x.aof": b""}}, ["x.aof"]),
    "old-truncated": ({"top": {"x.aof": GOOD + CUT}}, ["x.aof"]),
    "old-format-error": ({"top": {"x.aof": GOOD + b"hello\r\n"}}, ["x.aof"]),
    "old-bad-prefix": ({"top": {"x.aof": b"*1\r\nxyz\r\n"}}, ["x.aof"]),
    "old-bad-crlf": ({"top": {"x.aof": b"*1\r\n$3\r\nsetXY"}}, ["x.aof"]),
    "old-negative-len": ({"top": {"x.aof": b"*1\r\n$-3\r\nfoo\r\n"}}, ["x.aof"]),
    "old-huge-len": ({"top": {"x.aof": b"*1\r\n$999999999999\r\nfoo\r\n"}}, ["x.aof"]),
    "old-unexpected-exec": ({"top": {"x.aof": resp("EXEC")}}, ["x.aof"]),
    "old-nested-multi": ({"top": {"x.aof": resp("MULTI") + resp("MULTI")}}, ["x.aof"]),
    "old-open-multi": ({"top": {"x.aof": GOOD + OPEN_MULTI}}, ["x.aof"]),
    "old-open-multi-fix": ({"top": {"x.aof": GOOD + OPEN_MULTI}}, ["--fix", "x.aof"], b"y\n"),
    "old-fix-declined": ({"top": {"x.aof": GOOD + CUT}}, ["--fix", "x.aof"], b"n\n"),
    "old-missing": ({"top": {}}, ["nosuch.aof"]),
    "old-preamble": ({"top": {"x.aof": None}}, ["x.aof"]),
    # Arguments.
    "usage": ({"top": {}}, []),
    "bad-option": ({"top": {"x.aof": GOOD}}, ["--fixx", "x.aof"]),
    "bad-timestamp": ({"top": {"x.aof": GOOD}}, ["--truncate-to-timestamp", "12a", "x.aof"]),
    # Timestamps.
    "ts-nothing-before": ({"top": {"x.aof": TS2 + GOOD}}, ["--truncate-to-timestamp", "1500", "x.aof"]),
    "ts-cut": ({"top": {"x.aof": TS1 + GOOD + TS2 + GOOD}}, ["--truncate-to-timestamp", "1500", "x.aof"]),
    "ts-nothing-to-cut": ({"top": {"x.aof": TS1 + GOOD}}, ["--truncate-to-timestamp", "1500", "x.aof"]),
    "ts-bad-annotation": ({"top": {"x.aof": GOOD + b"#TS:12x\r\n"}}, ["--truncate-to-timestamp", "5", "x.aof"]),
    # Multi part.
    "mp-valid": ({"files": {B1: GOOD, I1: GOOD, I2: TS1 + GOOD}}, [MAN]),
    "mp-rdb-base": ({"files": {R1: None, I1: GOOD}}, [MAN]),
    "mp-empty-files": ({"files": {B1: b"", I1: b""}}, [MAN]),
    "mp-open-multi-not-last": ({"files": {B1: GOOD, I1: GOOD + OPEN_MULTI, I2: GOOD}}, [MAN]),
    "mp-open-multi-not-last-fix": ({"files": {B1: GOOD, I1: GOOD + OPEN_MULTI, I2: GOOD}}, ["--fix", MAN],
                                   b"y\n"),
    "mp-truncated-last-fix": ({"files": {B1: GOOD, I1: GOOD + CUT}}, ["--fix", MAN], b"y\n"),
    "mp-truncated-not-last-fix": ({"files": {B1: GOOD + CUT, I1: GOOD}}, ["--fix", MAN], b"y\n"),
    "mp-ts-not-last": ({"files": {B1: GOOD, I1: GOOD + TS2 + GOOD, I2: GOOD}},
                       ["--truncate-to-timestamp", "1500", MAN]),
    "mp-ts-last": ({"files": {B1: GOOD, I1: TS1 + GOOD + TS2 + GOOD}}, ["--truncate-to-timestamp", "1500", MAN]),
    "mp-ts-nothing-before": ({"files": {B1: TS2 + GOOD, I1: GOOD}}, ["--truncate-to-timestamp", "1500", MAN]),
    "mp-missing-incr": ({"files": {B1: GOOD}, "manifest": "file %s seq 1 type b\nfile %s seq 1 type i\n" % (B1, I1)},
                        [MAN]),
    "mp-missing-base": ({"files": {I1: GOOD}, "manifest": "file %s seq 1 type b\nfile %s seq 1 type i\n" % (B1, I1)},
                        [MAN]),
    "mp-bad-manifest": ({"files": {B1: GOOD}, "manifest": "file %s seq 1 type z\n" % B1}, [MAN]),
    "mp-empty-manifest-line": ({"files": {B1: GOOD}, "manifest": "file %s seq 1 type b\n\n" % B1}, [MAN]),
    # RDB bases and preambles that are not sane (the RDB's report is
    # redis-check-rdb's).
    "mp-rdb-base-bad-crc": ({"files": {R1: "BADCRC", I1: GOOD}}, [MAN]),
    "mp-rdb-base-cut": ({"files": {R1: "CUTRDB", I1: GOOD}}, [MAN]),
    "old-preamble-bad-crc": ({"top": {"x.aof": "BADCRC"}}, ["x.aof"]),
    "old-too-short-for-rdb": ({"top": {"x.aof": b"REDIS0"}}, ["x.aof"]),
    "mp-history-ignored": ({"files": {B1: GOOD, I1: GOOD},
                            "manifest": "file %s seq 1 type b\nfile old seq 1 type h\nfile %s seq 1 type i\n" % (B1, I1)},
                           [MAN]),
    "mp-base-format-error-fix": ({"files": {B1: GOOD + b"xx", I1: GOOD}}, ["--fix", MAN], b"y\n"),
    "mp-only-incr-open-multi": ({"files": {I1: GOOD + OPEN_MULTI}}, [MAN]),
    "old-preamble-corrupt-value": ({"top": {"x.aof": "BADVALUE"}}, ["x.aof"]),
}


@pytest.fixture(scope="module")
def rdb_bytes(tmp_path_factory):
    """An RDB saved by redis-server."""
    import redis
    root = str(tmp_path_factory.mktemp("rdbsrc") / "d")
    p, port, logpath = start(oracle_bin(), write_tree(root), appendonly="no")
    try:
        c = redis.Redis(port=port, socket_timeout=10)
        c.set("k", "v")
        c.rpush("l", "a", "b")
        c.save()
    finally:
        stop(p)
    with open(os.path.join(root, "dump.rdb"), "rb") as f:
        return f.read()


@pytest.mark.parametrize("case", sorted(CHECKS))
def test_check_aof_output_as_redis(tmp_path, rdb_bytes, case):
    spec = CHECKS[case]
    tree, args = spec[0], spec[1]
    stdin = spec[2] if len(spec) > 2 else None

    bad = bytearray(rdb_bytes)
    bad[-3] ^= 0xff  # in the stored checksum

    def one(k, v):
        if v is None:
            return rdb_bytes + GOOD if k.endswith(".aof") else rdb_bytes
        if v == "BADCRC":
            return bytes(bad) + (GOOD if k.endswith(".aof") else b"")
        if v == "CUTRDB":
            return rdb_bytes[:30]
        if v == "BADVALUE":
            return _rdb_file(LEGACY["hash-zl-dup-field"][:-10]) + GOOD
        return v

    def fill(d):
        return None if d is None else {k: one(k, v) for k, v in d.items()}
    compare_tools(tmp_path, fill(tree.get("files")), tree.get("manifest"), fill(tree.get("top")), args, stdin)


# --- item 28: a second SIGINT during a save leaves no temp-<pid>.rdb --------

def temp_rdbs(d):
    return sorted(n for n in os.listdir(d) if re.fullmatch(r"temp-\d+\.rdb", n))


def wait_for(pred, what, timeout=30):
    """waithelp.wait_for with this file's argument order."""
    return waithelp.wait_for(pred, timeout, what, step=0.01)


@pytest.mark.parametrize("mode", ["save", "bgsave-child", "shutdown-save"])
@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_second_sigint_during_save_removes_temp_file(tmp_path, impl, mode):
    import threading
    import redis
    binary = oracle_bin() if impl == "redis" else cairn_bin()
    root = write_tree(str(tmp_path / impl))
    p, port, logpath = start(binary, root, appendonly="no", rdb_key_save_delay=100000)
    try:
        c = redis.Redis(port=port, socket_timeout=60)
        for i in range(100):  # 10 s to save at 100 ms a key
            c.set("k%d" % i, "v")
        if mode == "save":
            saver = redis.Redis(port=port, socket_timeout=60)
            threading.Thread(target=lambda: _swallow(saver.save), daemon=True).start()
            target = p.pid
        elif mode == "bgsave-child":
            c.bgsave()
            target = None
        else:
            c.config_set("save", "3600 1")
            p.send_signal(signal.SIGINT)  # the shutdown saves first
            target = p.pid
        first = wait_for(lambda: temp_rdbs(root), "no temp file")
        assert len(first) == 1
        if target is None:
            target = int(first[0][5:-4])  # the child's pid
        if mode != "shutdown-save":
            os.kill(target, signal.SIGINT)
        time.sleep(0.3)
        assert temp_rdbs(root) == first
        os.kill(target, signal.SIGINT)
        insist = re.compile(r"^\d+:signal-handler \(\d+\) You insist\.\.\. exiting now\.$", re.M)
        if mode == "bgsave-child":
            # The child is gone and its file with it; the server lives on.
            wait_for(lambda: not temp_rdbs(root), "the temp file stayed")
            wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, "child not reaped")
            assert c.info("persistence")["rdb_last_bgsave_status"] == "err"
            assert p.poll() is None
        else:
            assert p.wait(timeout=30) == 1
            assert temp_rdbs(root) == []
            assert not os.path.exists(os.path.join(root, "dump.rdb"))
        # Logged from the handler, in Redis's form for such lines.
        wait_for(lambda: insist.search(read_log(logpath)), "no 'You insist' line")
    finally:
        stop(p)


def _swallow(fn):
    try:
        fn()
    except Exception:
        pass


# --- item 29: RESTORE of corrupt legacy encodings ----------------------------

def _zl_prevlen(n):
    return bytes([n]) if n < 254 else b"\xfe" + struct.pack("<I", n)


def _zl_entry(e, prev):
    if isinstance(e, int):
        if 0 <= e <= 12:
            return _zl_prevlen(prev) + bytes([0xf1 + e])
        if -128 <= e <= 127:
            return _zl_prevlen(prev) + b"\xfe" + struct.pack("<b", e)
        return _zl_prevlen(prev) + b"\xe0" + struct.pack("<q", e)
    assert len(e) < 64
    return _zl_prevlen(prev) + bytes([len(e)]) + e


def ziplist(entries, prevlens=None, zllen=None, zltail=None, zlbytes=None, end=True):
    """A ziplist of entries (bytes or small ints); the keyword arguments
    override what a valid one would hold."""
    body, prev, offs = b"", 0, []
    for i, e in enumerate(entries):
        ent = _zl_entry(e, prevlens[i] if prevlens else prev)
        offs.append(10 + len(body))
        body += ent
        prev = len(ent)
    tail = b"\xff" if end else b""
    total = 10 + len(body) + len(tail)
    return struct.pack("<IIH", total if zlbytes is None else zlbytes,
                       (offs[-1] if offs else 10) if zltail is None else zltail,
                       len(entries) if zllen is None else zllen) + body + tail


def zipmap(pairs, zmlen=None, free=0):
    out = bytes([len(pairs) if zmlen is None else zmlen])
    for k, v in pairs:
        out += bytes([len(k)]) + k + bytes([len(v), free]) + v + b"\x00" * free
    return out + b"\xff"


def _rdbstr(b):
    return (bytes([len(b)]) if len(b) < 64 else struct.pack(">H", 0x4000 | len(b))) + b


def _dump(rdbtype, *blobs, raw=None):
    from test_dump import payload
    if raw is not None:
        return payload(bytes([rdbtype]) + raw)
    return payload(bytes([rdbtype]) + b"".join(_rdbstr(b) for b in blobs))


def _quicklist(*zls):
    return _dump(14, raw=bytes([len(zls)]) + b"".join(_rdbstr(z) for z in zls))


ZIPMAP, LIST_ZL, INTSET, ZSET_ZL, HASH_ZL = 9, 10, 11, 12, 13
HZ = [b"f", b"1", b"g", b"2"]
LEGACY = {
    "hash-zl-ok": _dump(HASH_ZL, ziplist(HZ)),
    "hash-zl-dup-field": _dump(HASH_ZL, ziplist([b"f", b"1", b"f", b"2"])),
    "hash-zl-dup-int-field": _dump(HASH_ZL, ziplist([5, b"1", 5, b"2"])),
    "hash-zl-odd": _dump(HASH_ZL, ziplist(HZ[:3])),
    "hash-zl-empty": _dump(HASH_ZL, ziplist([])),
    "hash-zl-wrong-prevlen": _dump(HASH_ZL, ziplist(HZ, prevlens=[0, 3, 9, 3])),
    "hash-zl-first-prevlen": _dump(HASH_ZL, ziplist(HZ[:2], prevlens=[1, 3])),
    "hash-zl-big-prevlen-form": _dump(HASH_ZL, ziplist(HZ[:2], prevlens=[0, 300])),
    "hash-zl-count-high": _dump(HASH_ZL, ziplist(HZ, zllen=6)),
    "hash-zl-count-zero": _dump(HASH_ZL, ziplist(HZ, zllen=0)),
    "hash-zl-count-unknown": _dump(HASH_ZL, ziplist(HZ, zllen=65535)),
    "hash-zl-tail-first": _dump(HASH_ZL, ziplist(HZ, zltail=10)),
    "hash-zl-tail-outside": _dump(HASH_ZL, ziplist(HZ, zltail=500)),
    "hash-zl-bytes": _dump(HASH_ZL, ziplist(HZ, zlbytes=100)),
    "hash-zl-no-end": _dump(HASH_ZL, ziplist(HZ, end=False)),
    "hash-zl-end-inside": _dump(HASH_ZL, ziplist(HZ)[:-5] + b"\xff" + ziplist(HZ)[-4:]),
    "zset-zl-ok": _dump(ZSET_ZL, ziplist([b"m", b"1", b"n", b"2"])),
    "zset-zl-dup-member": _dump(ZSET_ZL, ziplist([b"m", b"1", b"m", b"2"])),
    "zset-zl-odd": _dump(ZSET_ZL, ziplist([b"m", b"1", b"n"])),
    "zset-zl-unsorted": _dump(ZSET_ZL, ziplist([b"m", b"5", b"n", b"2"])),
    "zset-zl-wrong-prevlen": _dump(ZSET_ZL, ziplist([b"m", b"1", b"n", b"2"], prevlens=[0, 3, 3, 7])),
    "zset-zl-count": _dump(ZSET_ZL, ziplist([b"m", b"1"], zllen=4)),
    "list-zl-ok": _dump(LIST_ZL, ziplist([b"a", 7, b"c", -100000])),
    "list-zl-empty": _dump(LIST_ZL, ziplist([])),
    "list-zl-wrong-prevlen": _dump(LIST_ZL, ziplist([b"a", b"b", b"c"], prevlens=[0, 3, 2])),
    "list-zl-count": _dump(LIST_ZL, ziplist([b"a", b"b"], zllen=3)),
    "list-zl-tail": _dump(LIST_ZL, ziplist([b"a", b"b"], zltail=11)),
    "list-zl-bad-encoding": _dump(LIST_ZL, ziplist([b"a"])[:11] + b"\xc1" + ziplist([b"a"])[12:]),
    "quicklist-ok": _quicklist(ziplist([b"a", b"b"]), ziplist([b"c"])),
    "quicklist-empty-node": _quicklist(ziplist([b"a"]), ziplist([])),
    "quicklist-wrong-prevlen": _quicklist(ziplist([b"a", b"b"]), ziplist([b"a", b"b"], prevlens=[0, 5])),
    "quicklist-count": _quicklist(ziplist([b"a", b"b"], zllen=1)),
    "quicklist-tail": _quicklist(ziplist([b"a", b"b", b"c"], zltail=13)),
    "quicklist-no-nodes": _dump(14, raw=b"\x00"),
    "quicklist-not-a-ziplist": _quicklist(b"garbage!!!!!"),
    "zipmap-ok": _dump(ZIPMAP, zipmap([(b"a", b"1"), (b"b", b"2")])),
    "zipmap-free-bytes": _dump(ZIPMAP, zipmap([(b"a", b"1")], free=2)),
    "zipmap-dup": _dump(ZIPMAP, zipmap([(b"a", b"1"), (b"a", b"2")])),
    "zipmap-count": _dump(ZIPMAP, zipmap([(b"a", b"1")], zmlen=5)),
    "zipmap-count-unknown": _dump(ZIPMAP, zipmap([(b"a", b"1")], zmlen=254)),
    "zipmap-empty": _dump(ZIPMAP, zipmap([])),
    "zipmap-no-end": _dump(ZIPMAP, zipmap([(b"a", b"1")])[:-1]),
    "intset-ok": _dump(INTSET, struct.pack("<IIhh", 2, 2, 1, 3)),
    "intset-encoding": _dump(INTSET, struct.pack("<IIhh", 3, 2, 1, 3)),
    "intset-length": _dump(INTSET, struct.pack("<IIhh", 2, 5, 1, 3)),
    "intset-empty": _dump(INTSET, struct.pack("<II", 2, 0)),
}


def _value(c, typ):
    if typ == b"hash":
        return sorted(c.hgetall("k").items())
    if typ == b"list":
        return c.lrange("k", 0, -1)
    if typ == b"zset":
        # Sorted by member: Redis keeps an unsorted ziplist as it came
        # (ZRANGE then answers out of order), Cairn sorts it.
        return sorted(c.zrange("k", 0, -1, withscores=True))
    if typ == b"set":
        return sorted(c.smembers("k"))
    return typ


@pytest.mark.parametrize("mode", ["no", "yes"])
def test_restore_corrupt_legacy_encodings_as_redis(start_server, start_oracle, mode):
    """Every legacy encoding (ziplist hash, zset and list, quicklist of
    ziplists, zipmap, intset), valid and corrupt: Cairn refuses what Redis
    refuses, with either sanitize-dump-payload, and what both accept holds
    the same value."""
    import redis
    r = start_server(**{"sanitize-dump-payload": mode}).client()
    o = start_oracle(**{"sanitize-dump-payload": mode}).client()
    for name, p in sorted(LEGACY.items()):
        out = {}
        for impl, c in (("cairn", r), ("redis", o)):
            c.delete("k")
            try:
                c.restore("k", 0, p)
                typ = c.type("k")
                out[impl] = ("ok", typ, _value(c, typ))
            except redis.ResponseError as e:
                out[impl] = ("err", str(e))
        assert out["cairn"] == out["redis"], (name, out)
        assert r.ping()


@pytest.mark.parametrize("impl", ["redis", "cairn"])
def test_restore_integrity_failure_logged(start_server, start_oracle, impl):
    """A refused legacy payload is logged (verbose) with Redis's reason."""
    import redis
    srv = (start_oracle if impl == "redis" else start_server)(loglevel="verbose")
    c = srv.client()
    want = {
        "hash-zl-dup-field": "Hash ziplist integrity check failed.",
        "hash-zl-wrong-prevlen": "Hash ziplist integrity check failed.",
        "zset-zl-dup-member": "Zset ziplist integrity check failed.",
        "list-zl-wrong-prevlen": "List ziplist integrity check failed.",
        "quicklist-wrong-prevlen": "Ziplist integrity check failed.",
        "zipmap-count": "Zipmap integrity check failed.",
        "intset-encoding": "Intset integrity check failed.",
    }
    for name, why in sorted(want.items()):
        before = len(srv.log.splitlines())
        with pytest.raises(redis.ResponseError):
            c.restore("k", 0, LEGACY[name])
        deadline = time.monotonic() + 10
        while True:
            new = srv.log.splitlines()[before:]
            hit = [x for x in new if "Internal error in RDB reading offset 0, function at rdb.c" in x]
            if hit or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert hit and hit[-1].endswith(why), (name, new)


def _rdb_file(value, cut=0):
    """A dump.rdb with key k holding value (type byte and value)."""
    from test_dump import crc64
    body = b"REDIS0010" + b"\xfe\x00" + value[:1] + _rdbstr(b"k") + value[1:] + b"\xff"
    data = body + struct.pack("<Q", crc64(body))
    return data[:-cut] if cut else data


def _reason(line):
    """The reason of an "Internal error in RDB reading" line (Redis names
    a source line and offset 0, Cairn the offset)."""
    m = re.match(r"# Internal error in RDB reading offset \d+, function at rdb\.c:(?:\d+ ->|) (.*)$", line)
    return ("reason", m.group(1)) if m else line


RDB_FILES = {
    "hash-zl-dup-field": lambda: _rdb_file(LEGACY["hash-zl-dup-field"][:-10]),
    "list-zl-wrong-prevlen": lambda: _rdb_file(LEGACY["list-zl-wrong-prevlen"][:-10]),
    "zipmap-count": lambda: _rdb_file(LEGACY["zipmap-count"][:-10]),
    "quicklist-wrong-prevlen": lambda: _rdb_file(LEGACY["quicklist-wrong-prevlen"][:-10]),
    "intset-encoding": lambda: _rdb_file(LEGACY["intset-encoding"][:-10]),
    "hash-zl-ok": lambda: _rdb_file(LEGACY["hash-zl-ok"][:-10]),
    "unknown-type": lambda: _rdb_file(b"\x77\x01a"),
    "cut-in-a-string": lambda: _rdb_file(b"\x00\x05hello", cut=15),
    "string-longer-than-file": lambda: _rdb_file(b"\x00\x80\xff\xff\xff\xf0"),
    "wrong-signature": lambda: b"RUBIS0010" + _rdb_file(b"\x00\x01v")[9:],
    "future-version": lambda: b"REDIS0099" + _rdb_file(b"\x00\x01v")[9:],
    "short-header": lambda: b"REDIS00",
    "db-beyond-databases": lambda: _rdb_file(b"\x00\x01v").replace(b"\xfe\x00", b"\xfe\x40", 1),
}


@pytest.mark.parametrize("case", sorted(RDB_FILES))
def test_rdb_file_refused_logged_as_redis(tmp_path, case):
    """The same checks at start-up: a dump.rdb holding a corrupt value is
    refused by both servers with Redis's lines (a short read announced
    first; the reason in Redis's words; a failed integrity check followed
    by the termination line, the log's last); a valid one loads alike."""
    import redis
    data = RDB_FILES[case]()
    res = {}
    for name, binary in (("redis", oracle_bin()), ("cairn", cairn_bin())):
        root = write_tree(str(tmp_path / name), top={"dump.rdb": data})
        p, port, logpath = start(binary, root, appendonly="no")
        try:
            lines = [x for x in log_lines(read_log(logpath)) if not x.startswith(("[", "---"))]
            while lines and not lines[-1].strip():
                lines.pop()
            if p.poll() is None:
                c = redis.Redis(port=port, socket_timeout=10)
                res[name] = ("up", sorted(c.hgetall("k").items()))
            else:
                res[name] = ("refused", [_reason(x) for x in lines if not x.startswith(("* ", "# WARNING"))])
        finally:
            stop(p)
    assert res["cairn"] == res["redis"], res
    assert res["redis"][0] == ("up" if case.endswith("-ok") else "refused")
    if res["redis"][0] == "refused":
        assert res["redis"][1], res


@pytest.mark.parametrize("mode", ["no", "yes"])
def test_restore_mutated_legacy_payloads_never_crash(start_server, mode):
    """Hostile input: random byte flips, cuts and insertions inside valid
    legacy values (checksum recomputed, so the value itself is parsed);
    the server answers OK or an error, and lives on."""
    import random
    import redis
    from test_dump import payload
    r = start_server(**{"sanitize-dump-payload": mode}).client()
    rng = random.Random(33)
    sources = [v[:-10] for k, v in sorted(LEGACY.items()) if k.endswith("-ok")]
    for i in range(400):
        data = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(1, len(data))
            op = rng.random()
            if op < 0.5:
                data[pos] = rng.randrange(256)
            elif op < 0.75:
                del data[pos:pos + rng.randint(1, 4)]
            else:
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        try:
            r.restore("k%d" % i, 0, payload(bytes(data)))
        except redis.ResponseError:
            pass
    assert r.ping()


def test_check_aof_mutated_files_never_crash(tmp_path):
    """cairn-check-aof on random mutations of a valid AOF with MULTI,
    annotations and a preamble: a verdict (0 or 1), never a crash or a
    sanitizer report."""
    import random
    tool = cairn_check_aof(tmp_path)
    rng = random.Random(19)
    body = GOOD + OPEN_MULTI + resp("EXEC") + TS1 + resp("HSET", "h", "f", "v" * 40) + TS2 + GOOD
    for i in range(120):
        data = bytearray(body)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(data))
            op = rng.random()
            if op < 0.4:
                data[pos] = rng.choice(b"*$#\r\n0123456789-x")
            elif op < 0.7:
                del data[pos:pos + rng.randint(1, 8)]
            else:
                data[pos:pos] = rng.choice([b"*99999999999\r\n", b"$-1\r\n", b"*0\r\n", b"\x00", b"$1\r\n",
                                            b"#TS:12\r\n", b"$9223372036854775807\r\n"])
        p = tmp_path / ("f%d.aof" % i)
        p.write_bytes(bytes(data))
        args = [tool, str(p)] if i % 3 else [tool, "--truncate-to-timestamp", "1500", str(p)]
        r = subprocess.run(args, capture_output=True, timeout=60)
        assert r.returncode in (0, 1), (bytes(data), r.stdout, r.stderr)
        for m in SANITIZER_MARKERS:
            assert m.encode() not in r.stderr, r.stderr


def _lp(entries, count=None):
    body = b""
    for e in entries:
        ent = bytes([0x80 | len(e)]) + e
        body += ent + bytes([len(ent)])
    return struct.pack("<IH", 6 + len(body) + 1, len(entries) if count is None else count) + body + b"\xff"


CHECK_RDB = dict(RDB_FILES)
CHECK_RDB.update({
    "hash-listpack-dup": lambda: _rdb_file(b"\x10" + _rdbstr(_lp([b"f", b"1", b"f", b"2"]))),
    "zset-listpack-dup": lambda: _rdb_file(b"\x11" + _rdbstr(_lp([b"f", b"1", b"f", b"2"]))),
    "quicklist2-count": lambda: _rdb_file(b"\x12\x01\x02" + _rdbstr(_lp([b"f", b"1"], count=5))),
    "stream-garbage": lambda: _rdb_file(b"\x13\x01" + _rdbstr(b"x" * 16) + _rdbstr(b"garbage")),
    "invalid-type": lambda: _rdb_file(b"\x14\x01a"),
    "empty": lambda: b"",
    "checksum-disabled": lambda: b"REDIS0010\xfe\x00\x00\x01k\x01v\xff" + b"\0" * 8,
    "checksum-cut": lambda: b"REDIS0010\xfe\x00\x00\x01k\x01v\xff\x01\x02",
    "bad-checksum": lambda: _rdb_file(b"\x00\x01v")[:-1] + b"\x00",
    "expires": lambda: b"REDIS0010\xfe\x00\xfc" + struct.pack("<Q", 1000) + b"\x00\x01k\x01v\xfd" +
                       struct.pack("<I", 4000000000) + b"\x00\x01j\x01v\xfb\x02\x01\xfa\x01a\x01b\xff" + b"\0" * 8,
})


@pytest.mark.parametrize("case", sorted(CHECK_RDB))
def test_check_rdb_output_as_redis(tmp_path, case):
    """cairn-check-rdb prints what redis-check-rdb prints (but the line of
    Redis's rdb.c that its reason for a corrupt value names), and exits
    alike (cairn-check-aof prints this report for an RDB preamble: see
    test_check_aof_output_as_redis)."""
    rcheck = shutil.which("redis-check-rdb")
    if not rcheck:
        pytest.skip("no redis-check-rdb")
    link = os.path.join(str(tmp_path), "cairn-check-rdb")
    os.symlink(cairn_bin(), link)
    path = str(tmp_path / "dump.rdb")
    with open(path, "wb") as f:
        f.write(CHECK_RDB[case]())
    out = {}
    for name, tool in (("redis", rcheck), ("cairn", link)):
        r = subprocess.run([tool, "dump.rdb"], cwd=str(tmp_path), capture_output=True, timeout=60)
        for m in SANITIZER_MARKERS:
            assert m.encode() not in r.stderr, r.stderr
        text = r.stdout.decode("utf-8", "replace")
        text = re.sub(r"function at rdb\.c:\d+ -> ", "function at rdb.c: ", text)
        text = "\n".join(PREFIX.sub("", x) for x in text.split("\n"))
        out[name] = (r.returncode, text)
    assert out["cairn"] == out["redis"], "\n".join(["redis:", out["redis"][1], "cairn:", out["cairn"][1]])


def test_dump_payload_sanitizations_counted_as_redis(start_server, start_oracle):
    """INFO dump_payload_sanitizations counts the deep checks as Redis
    does: one per listpack/intset value, per listpack node of a list, per
    stream node; for RESTORE with sanitize-dump-payload yes (clients: from
    a client) and for a load with yes; CONFIG RESETSTAT clears it."""
    cfg = {"sanitize-dump-payload": "yes", "list-max-listpack-size": "2", "enable-debug-command": "yes"}
    out = {}
    for name, c in (("cairn", start_server(**cfg).client()), ("redis", start_oracle(**cfg).client())):
        def stat():
            return c.info("stats")["dump_payload_sanitizations"]
        c.hset("h", "a", "1")
        c.rpush("l", *"abcdefg")
        c.sadd("s", 1, 2)
        c.sadd("s2", "x")
        c.zadd("z", {"a": 1})
        c.set("str", "v")
        c.xadd("st", {"a": "1"})
        c.rpush("big", "x" * 100)
        seen = []
        for k in ("h", "l", "s", "s2", "z", "str", "st", "big"):
            before = stat()
            c.restore(k + "x", 0, c.dump(k))
            seen.append((k, stat() - before))
        before = stat()
        c.execute_command("DEBUG", "RELOAD")
        seen.append(("reload-yes", stat() - before))
        for mode in ("no", "clients"):
            c.config_set("sanitize-dump-payload", mode)
            before = stat()
            c.restore("h-" + mode, 0, c.dump("h"))
            seen.append((mode, stat() - before))
        before = stat()
        c.execute_command("DEBUG", "RELOAD")
        seen.append(("reload-clients", stat() - before))
        c.config_resetstat()
        seen.append(("reset", stat()))
        out[name] = seen
    assert out["redis"][0] == ("h", 1)
    assert out["cairn"] == out["redis"]
