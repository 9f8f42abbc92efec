"""The append-only file (issue 19): format, interchange with redis-server
7.0.15 in both directions, loading and its refusals, rewriting, turning it
on and off at run time, INFO, the check tool.

Interchange: the same commands go to Cairn and redis-server, each with
appendonly yes; each directory is then loaded by the other server and the
DEBUG DIGESTs must all be equal.
"""
import functools
import os
import shutil
import subprocess
import time

import pytest
import redis

from conftest import cairn_bin, free_port
from txhelp import encode as resp
import waithelp

AOFDIR = "appendonlydir"


def is_cairn(srv):
    return "cairn" in os.path.basename(srv.binary)


wait_for = functools.partial(waithelp.wait_for, timeout=60.0)


def aof_start(factory, dir=None, **cfg):
    cfg.setdefault("appendonly", "yes")
    cfg.setdefault("enable_debug_command", "yes")
    if dir:
        cfg["dir"] = dir
    return factory(**cfg)


def kill9(srv):
    srv.proc.kill()
    srv.proc.wait()


def written_then_kill9(srv):
    """SIGKILL once the AOF buffer is in the file.  Under everysec a write
    is postponed (up to 2 s) while the previous fsync still runs, and those
    acknowledged writes are lost to a kill: Redis's documented everysec
    window, not what these tests are about (test_aof_durability is)."""
    c = srv.client()
    if c.info("persistence").get("aof_enabled"):
        wait_for(lambda: c.info("persistence")["aof_buffer_length"] == 0, what="AOF buffer written")
    kill9(srv)


def populate(c, seed=0):
    """Every type, MULTI/EXEC, a script, relative expiries, deletions."""
    c.set("s%d" % seed, "v" * 100)
    c.set("n", 12345)
    c.incrby("n", 5)
    c.setex("ttl", 1000, "x")
    c.rpush("l", *["e%d" % i for i in range(200)])
    c.lpush("small", "a", "b")
    c.sadd("si", *range(50))
    c.sadd("ss", *["m%d" % i for i in range(600)])
    c.zadd("z", {"a": 1.5, "b": -2, "c": float("inf")})
    c.zadd("zbig", {"m%d" % i: i / 3 for i in range(300)})
    c.hset("h", mapping={"f%d" % i: i for i in range(10)})
    c.hset("hbig", mapping={"f%d" % i: "x" * 100 for i in range(600)})
    p = c.pipeline(transaction=True)
    p.incr("tx")
    p.lpush("txl", "q")
    p.execute()
    c.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('expire', KEYS[1], 500); return 1", 1, "lua", "val")
    c.select(3) if hasattr(c, "select") else c.execute_command("SELECT", 3)
    c.set("in3", "three")
    c.execute_command("SELECT", 0)
    c.set("gone", 1)
    c.delete("gone")
    c.expire("s%d" % seed, 2000)
    c.pexpireat("n", int(time.time() * 1000) + 500000)


def raw_reply(srv, *args):
    """The reply line as sent (redis-py turns some status replies into True)."""
    with srv.connect() as conn:
        conn.send(resp(*args))
        return conn.recv_until(b"\r\n").rstrip(b"\r\n")


def digest(srv):
    return srv.client().execute_command("DEBUG", "DIGEST")


# --- basic persistence -------------------------------------------------------

def test_restart_after_kill_keeps_everything(start_server):
    s = aof_start(start_server)
    c = s.client()
    populate(c)
    d = digest(s)
    files = sorted(os.listdir(os.path.join(s.tmp, AOFDIR)))
    assert files == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", "appendonly.aof.manifest"]
    with open(os.path.join(s.tmp, AOFDIR, "appendonly.aof.manifest")) as f:
        assert f.read() == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                            "file appendonly.aof.1.incr.aof seq 1 type i\n")
    written_then_kill9(s)
    s2 = aof_start(start_server, dir=s.tmp)
    assert digest(s2) == d
    assert "DB loaded from incr file appendonly.aof.1.incr.aof" in s2.log


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_rewrite_then_restart(start_server, preamble):
    s = aof_start(start_server, aof_use_rdb_preamble=preamble)
    c = s.client()
    populate(c)
    c.function_load("#!lua name=lib\nredis.register_function('f', function() return 1 end)")
    assert c.bgrewriteaof()
    wait_for(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0
             and c.info("persistence")["aof_rewrites"] == 1, what="rewrite")
    c.set("after", "rewrite")
    d = digest(s)
    ext = "rdb" if preamble == "yes" else "aof"
    names = sorted(os.listdir(os.path.join(s.tmp, AOFDIR)))
    assert names == ["appendonly.aof.2.base." + ext, "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"]
    written_then_kill9(s)
    s2 = aof_start(start_server, dir=s.tmp, aof_use_rdb_preamble=preamble)
    assert digest(s2) == d
    assert s2.client().fcall("f", 0) == 1


def test_debug_loadaof(start_server):
    s = aof_start(start_server)
    c = s.client()
    populate(c)
    d = digest(s)
    assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert digest(s) == d
    assert "Append Only File loaded by DEBUG LOADAOF" in s.log


# --- interchange with redis-server -------------------------------------------

@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_interchange_both_ways(start_server, start_oracle, preamble):
    o = aof_start(start_oracle, aof_use_rdb_preamble=preamble)
    s = aof_start(start_server, aof_use_rdb_preamble=preamble)
    for srv in (o, s):
        populate(srv.client())
    # One rewrite each, then more writes into the new incr files.
    for srv in (o, s):
        c = srv.client()
        c.bgrewriteaof()
        wait_for(lambda: c.info("persistence")["aof_rewrites"] == 1
                 and c.info("persistence")["aof_rewrite_in_progress"] == 0, what="rewrite")
        c.rpush("l", "after")
        c.set("k2", "v2")
    do, ds = digest(o), digest(s)
    assert do == ds
    o.stop()
    s.stop()
    # Each loads the other's directory.
    od, sd = os.path.join(o.tmp, "x"), os.path.join(s.tmp, "x")
    shutil.copytree(os.path.join(o.tmp, AOFDIR), os.path.join(od, AOFDIR))
    shutil.copytree(os.path.join(s.tmp, AOFDIR), os.path.join(sd, AOFDIR))
    c_from_r = aof_start(start_server, dir=od)
    r_from_c = aof_start(start_oracle, dir=sd)
    assert digest(c_from_r) == do
    assert digest(r_from_c) == do
    # Debian's redis-check-aof accepts Cairn's files.
    if shutil.which("redis-check-aof"):
        r = subprocess.run(["redis-check-aof", os.path.join(s.tmp, AOFDIR, "appendonly.aof.manifest")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "valid" in r.stdout


def test_timestamps_and_check_tool(start_server, tmp_path):
    s = aof_start(start_server, aof_timestamp_enabled="yes")
    c = s.client()
    c.set("a", 1)
    time.sleep(1.1)
    c.set("b", 2)
    incr = os.path.join(s.tmp, AOFDIR, "appendonly.aof.1.incr.aof")
    data = open(incr, "rb").read()
    ts = [int(l[4:]) for l in data.split(b"\r\n") if l.startswith(b"#TS:")]
    assert len(ts) >= 2 and ts == sorted(ts)
    written_then_kill9(s)
    s2 = aof_start(start_server, dir=s.tmp)
    assert s2.client().mget("a", "b") == [b"1", b"2"]
    s2.stop()
    tool = check_tool(tmp_path)
    man = os.path.join(s.tmp, AOFDIR, "appendonly.aof.manifest")
    r = subprocess.run([tool, man], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "All AOF files and manifest are valid" in r.stdout, r.stdout
    r = subprocess.run([tool, "--truncate-to-timestamp", str(ts[0]), man], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "Successfully truncated AOF" in r.stdout, r.stdout
    s3 = aof_start(start_server, dir=s.tmp)
    assert s3.client().mget("a", "b") == [b"1", None]


def check_tool(tmp_path):
    """cairn-check-aof is the server binary under that name (make links
    build/cairn-check-aof; here the binary under test is linked, so the
    sanitizer build checks the tool too)."""
    link = os.path.join(str(tmp_path), "cairn-check-aof")
    if os.path.exists(link):
        return link
    os.symlink(cairn_bin(), link)
    return link


# --- loading: truncation, MULTI, refusals -------------------------------------

def make_dir(path, files, manifest=None):
    d = os.path.join(path, AOFDIR)
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    if manifest is None:
        manifest = "".join("file %s seq 1 type %s\n" % (n, "b" if ".base." in n else "i") for n in files)
    with open(os.path.join(d, "appendonly.aof.manifest"), "w") as f:
        f.write(manifest)
    return path


GOOD = resp("SELECT", 0) + resp("SET", "a", "1") + resp("RPUSH", "l", "x", "y")


def start_fails(binary, dir, **cfg):
    args = [binary, "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes",
            "--save", ""]
    for k, v in cfg.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def test_truncated_last_file_loaded_and_trimmed(start_server, tmp_path):
    d = make_dir(str(tmp_path), {"appendonly.aof.1.incr.aof": GOOD + resp("SET", "b", "2")[:-5]})
    s = aof_start(start_server, dir=d)
    c = s.client()
    assert c.get("a") == b"1" and c.get("b") is None and c.lrange("l", 0, -1) == [b"x", b"y"]
    assert "aof-load-truncated is enabled" in s.log
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) == len(GOOD)
    c.set("c", 3)
    written_then_kill9(s)
    s2 = aof_start(start_server, dir=d)
    assert s2.client().mget("a", "b", "c") == [b"1", None, b"3"]


def test_multi_without_exec_dropped(start_server, tmp_path):
    tail = resp("MULTI") + resp("SET", "m1", "1") + resp("SET", "m2", "2")
    d = make_dir(str(tmp_path), {"appendonly.aof.1.incr.aof": GOOD + resp("MULTI") + resp("INCR", "t") +
                                 resp("EXEC") + tail})
    s = aof_start(start_server, dir=d)
    c = s.client()
    assert c.get("t") == b"1" and c.get("m1") is None and c.get("m2") is None
    assert "Revert incomplete MULTI/EXEC transaction" in s.log


@pytest.mark.parametrize("case", ["truncated-no", "garbage", "unknown-cmd", "truncated-not-last", "missing-file",
                                  "two-bases", "non-increasing", "unknown-type", "empty-manifest",
                                  "bad-rdb-base"])
def test_loading_refused(tmp_path, case):
    d = str(tmp_path)
    cfg = {}
    i1, i2 = "appendonly.aof.1.incr.aof", "appendonly.aof.2.incr.aof"
    if case == "truncated-no":
        make_dir(d, {i1: GOOD + b"*2\r\n$3\r\nDEL"})
        cfg["aof_load_truncated"] = "no"
        want = [i1, "offset %d" % len(GOOD)]
    elif case == "garbage":
        make_dir(d, {i1: GOOD + b"hello world\r\n" + GOOD})
        want = [i1, "offset %d" % len(GOOD), "Bad file format"]
    elif case == "unknown-cmd":
        make_dir(d, {i1: GOOD + resp("NOSUCHCMD", "x") + GOOD})
        want = [i1, "Unknown command 'NOSUCHCMD'", "offset %d" % len(GOOD)]
    elif case == "truncated-not-last":
        make_dir(d, {i1: GOOD + b"*3\r\n$3\r\nSET", i2: GOOD},
                 "file %s seq 1 type i\nfile %s seq 2 type i\n" % (i1, i2))
        want = [i1, "not the last", "offset %d" % len(GOOD)]
    elif case == "missing-file":
        make_dir(d, {i1: GOOD}, "file %s seq 1 type i\nfile %s seq 2 type i\n" % (i1, i2))
        want = ["Unable to obtain the AOF file %s length. stat: No such file or directory" % i2]
    elif case == "two-bases":
        make_dir(d, {i1: GOOD}, "file a.base.aof seq 1 type b\nfile b.base.aof seq 2 type b\n")
        want = ["duplicate base", "line 2"]
    elif case == "non-increasing":
        make_dir(d, {i1: GOOD, i2: GOOD}, "file %s seq 2 type i\nfile %s seq 1 type i\n" % (i1, i2))
        want = ["non-monotonic", "line 2"]
    elif case == "unknown-type":
        make_dir(d, {i1: GOOD}, "file %s seq 1 type x\n" % i1)
        want = ["Unknown AOF file type", "line 1"]
    elif case == "empty-manifest":
        make_dir(d, {i1: GOOD}, "")
        want = ["empty AOF manifest"]
    else:
        make_dir(d, {"appendonly.aof.1.base.rdb": b"REDIS0010\xfa\x03abc", i1: GOOD})
        want = ["appendonly.aof.1.base.rdb", "offset"]
    rc, out = start_fails(cairn_bin(), d, **cfg)
    assert rc != 0, out
    for w in want:
        assert w in out, (w, out)


def test_old_single_file_upgraded(start_server, tmp_path):
    # Redis 6 style: appendonly.aof in dir, commands only.
    d = str(tmp_path / "plain")
    os.makedirs(d)
    with open(os.path.join(d, "appendonly.aof"), "wb") as f:
        f.write(GOOD)
    s = aof_start(start_server, dir=d)
    c = s.client()
    assert c.get("a") == b"1"
    with open(os.path.join(d, AOFDIR, "appendonly.aof.manifest")) as f:
        assert f.read() == ("file appendonly.aof seq 1 type b\n"
                            "file appendonly.aof.1.incr.aof seq 1 type i\n")
    assert not os.path.exists(os.path.join(d, "appendonly.aof"))
    c.set("z", "after")
    written_then_kill9(s)
    s2 = aof_start(start_server, dir=d)
    assert s2.client().mget("a", "z") == [b"1", b"after"]
    # With an RDB preamble: an RDB saved by SAVE, then commands.
    s3 = start_server()
    c3 = s3.client()
    c3.set("fromrdb", "yes")
    c3.save()
    d2 = str(tmp_path / "preamble")
    os.makedirs(d2)
    with open(os.path.join(s3.tmp, "dump.rdb"), "rb") as f:
        rdb = f.read()
    with open(os.path.join(d2, "appendonly.aof"), "wb") as f:
        f.write(rdb + resp("SET", "tail", "1"))
    s4 = aof_start(start_server, dir=d2)
    assert s4.client().mget("fromrdb", "tail") == [b"yes", b"1"]


def test_check_tool_fix(tmp_path):
    d = make_dir(str(tmp_path), {"appendonly.aof.1.incr.aof": GOOD + b"*2\r\n$3\r\nDE"})
    tool = check_tool(tmp_path)
    man = os.path.join(d, AOFDIR, "appendonly.aof.manifest")
    r = subprocess.run([tool, man], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "ok_up_to=%d" % len(GOOD) in r.stdout, r.stdout
    r = subprocess.run([tool, "--fix", man], input="y\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Successfully truncated AOF" in r.stdout, r.stdout
    assert os.path.getsize(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")) == len(GOOD)
    if shutil.which("redis-check-aof"):
        r = subprocess.run(["redis-check-aof", man], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout


# --- run time: CONFIG SET, scheduling, INFO ----------------------------------

def test_config_set_appendonly_at_runtime(start_server):
    s = start_server(enable_debug_command="yes")
    c = s.client()
    populate(c)
    assert c.config_set("appendonly", "yes")
    wait_for(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0
             and os.path.exists(os.path.join(s.tmp, AOFDIR, "appendonly.aof.manifest")), what="first rewrite")
    c.set("later", "x")
    wait_for(lambda: c.info("persistence")["aof_current_size"] > 0, what="size")
    d = digest(s)
    names = sorted(os.listdir(os.path.join(s.tmp, AOFDIR)))
    assert names == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", "appendonly.aof.manifest"]
    written_then_kill9(s)
    s2 = aof_start(start_server, dir=s.tmp)
    assert digest(s2) == d
    c2 = s2.client()
    assert c2.config_set("appendonly", "no")
    assert c2.info("persistence")["aof_enabled"] == 0
    c2.set("notlogged", 1)
    written_then_kill9(s2)
    s3 = aof_start(start_server, dir=s.tmp)
    assert s3.client().get("notlogged") is None


@pytest.mark.parametrize("impl", ["cairn", "redis"])
def test_bgsave_bgrewriteaof_scheduling(start_server, start_oracle, impl):
    s = aof_start(start_server if impl == "cairn" else start_oracle)
    c = s.client()
    c.set("k", "v")
    c.config_set("rdb-key-save-delay", 1000000)
    assert c.bgsave() in (True, b"Background saving started")
    assert raw_reply(s, "BGREWRITEAOF") == b"+Background append only file rewriting scheduled"
    assert c.info("persistence")["aof_rewrite_scheduled"] == 1
    with pytest.raises(redis.ResponseError, match="Background save already in progress"):
        c.bgsave()
    c.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, what="bgsave end")
    wait_for(lambda: c.info("persistence")["aof_rewrites"] == 1, what="scheduled rewrite")
    c.config_set("rdb-key-save-delay", 1000000)
    wait_for(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0, what="rewrite end")
    assert raw_reply(s, "BGREWRITEAOF") == b"+Background append only file rewriting started"
    assert raw_reply(s, "BGREWRITEAOF") == b"-ERR Background append only file rewriting already in progress"
    assert raw_reply(s, "BGSAVE") == (b"-ERR Another child process is active (AOF?): can't BGSAVE right now. "
                                      b"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
    assert raw_reply(s, "BGSAVE", "SCHEDULE") == b"+Background saving scheduled"
    c.config_set("rdb-key-save-delay", 0)


def test_info_fields_match_redis(start_server, start_oracle):
    s = aof_start(start_server)
    o = aof_start(start_oracle)
    for srv in (s, o):
        srv.client().set("x", "y")
    ks = [k for k in s.client().info("persistence") if k.startswith("aof_")]
    ko = [k for k in o.client().info("persistence") if k.startswith("aof_")]
    assert ks == ko
    for srv in (s, o):
        i = srv.client().info("persistence")
        assert i["aof_enabled"] == 1 and i["aof_last_write_status"] == "ok"
        assert i["aof_current_size"] > 0
    off = start_server()
    ko_off = [k for k in start_oracle().client().info("persistence") if k.startswith("aof_")]
    assert [k for k in off.client().info("persistence") if k.startswith("aof_")] == ko_off


def test_auto_rewrite_on_growth(start_server):
    s = aof_start(start_server, auto_aof_rewrite_min_size=1, auto_aof_rewrite_percentage=100)
    c = s.client()
    for i in range(200):
        c.set("k%d" % i, "x" * 100)
    wait_for(lambda: c.info("persistence")["aof_rewrites"] >= 1, what="automatic rewrite")
    assert "Starting automatic rewriting of AOF on" in s.log


def test_replica_aof_restarted_after_sync(start_server):
    primary = start_server(enable_debug_command="yes")
    pc = primary.client()
    populate(pc)
    replica = aof_start(start_server)
    rc = replica.client()
    rc.set("replica-only", 1)
    rc.replicaof(primary.host, primary.port)
    wait_for(lambda: rc.info("replication").get("master_link_status") == "up", what="sync")
    pc.set("streamed", "after-sync")
    wait_for(lambda: rc.get("streamed") == b"after-sync", what="stream")
    wait_for(lambda: rc.info("persistence")["aof_rewrite_in_progress"] == 0
             and rc.info("persistence")["aof_enabled"] == 1
             and rc.info("persistence")["aof_rewrites"] >= 1, what="AOF restart")
    d = digest(primary)
    assert digest(replica) == d
    written_then_kill9(replica)
    again = aof_start(start_server, dir=replica.tmp)
    assert digest(again) == d


@pytest.mark.parametrize("impl", ["cairn", "redis"])
def test_shutdown_refused_while_initial_aof_is_written(start_server, start_oracle, impl):
    s = (start_server if impl == "cairn" else start_oracle)()
    c = s.client()
    c.set("k", "v")
    c.config_set("rdb-key-save-delay", 1000000)
    assert c.config_set("appendonly", "yes")
    with pytest.raises(redis.ResponseError, match="Errors trying to SHUTDOWN"):
        c.shutdown()
    assert "Writing initial AOF, can't exit." in s.log
    c.config_set("rdb-key-save-delay", 0)
    c.shutdown(nosave=True, force=True)  # redis-py swallows the closed connection
    assert s.proc.wait(20) == 0


def test_check_tool_survives_corrupt_files(tmp_path):
    """Hostile input: random byte flips, cuts and insertions of a valid AOF
    (with an RDB preamble and without) never crash the parser the loader
    uses; the tool answers valid (0) or not (1)."""
    import random
    tool = check_tool(tmp_path)
    rng = random.Random(7)
    body = GOOD + resp("MULTI") + resp("INCR", "x") + resp("EXEC") + b"#TS:1700000000\r\n" + \
        resp("HSET", "h", "f", "v" * 40)
    for i in range(60):
        data = bytearray(body)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(data))
            if op < 0.4:
                data[pos] = rng.choice(b"*$\r\n0123456789-x")
            elif op < 0.7:
                del data[pos:pos + rng.randint(1, 8)]
            else:
                data[pos:pos] = rng.choice([b"*99999999999\r\n", b"$-1\r\n", b"*0\r\n", b"\x00", b"$1\r\n"])
        p = tmp_path / ("f%d.aof" % i)
        p.write_bytes(bytes(data))
        r = subprocess.run([tool, str(p)], capture_output=True, text=True, timeout=60)
        assert r.returncode in (0, 1), (bytes(data), r.stdout, r.stderr)


def test_history_in_the_manifest_as_redis(start_server, start_oracle, tmp_path):
    """With aof-disable-auto-gc yes the retired files stay listed as history:
    each rewrite's incr files, then the base it replaced, ahead of older
    history, byte for byte as redis-server writes the manifest; turning
    the option off removes them at once (as Redis)."""
    out = {}
    for name, factory in (("cairn", start_server), ("redis", start_oracle)):
        d = make_dir(str(tmp_path / name), {"appendonly.aof.1.base.aof": GOOD,
                                            "appendonly.aof.1.incr.aof": resp("SET", "k2", "v2"),
                                            "appendonly.aof.2.incr.aof": resp("SET", "k3", "v3")},
                     "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
                     "file appendonly.aof.2.incr.aof seq 2 type i\n")
        s = aof_start(factory, dir=d, aof_disable_auto_gc="yes")
        c = s.client()
        manifest = os.path.join(d, AOFDIR, "appendonly.aof.manifest")
        for n in (1, 2):
            c.set("x%d" % n, n)
            assert raw_reply(s, "BGREWRITEAOF") == b"+Background append only file rewriting started"
            wait_for(lambda: c.info("persistence")["aof_rewrites"] == n and
                     not c.info("persistence")["aof_rewrite_in_progress"], what="rewrite %d" % n)
        with open(manifest) as f:
            kept = f.read()
        c.config_set("aof-disable-auto-gc", "no")
        with open(manifest) as f:
            cleaned = f.read()
        out[name] = (kept, cleaned, sorted(os.listdir(os.path.join(d, AOFDIR))))
    assert out["cairn"] == out["redis"]
    assert "type h" in out["redis"][0] and "type h" not in out["redis"][1]
