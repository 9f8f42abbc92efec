"""Hash-field expiry (issue 38): HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT,
HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME, HPERSIST (Redis 7.4) and HGETEX,
HSETEX, HGETDEL (Redis 8.0).

Redis 7.0.15 has none of these commands, so it cannot be the oracle: the
reply tables and error texts below are Redis 7.4 / 8.0's, taken from
Redis's command reference and its tests/unit/type/hash-field-expire.tcl.
Every table runs against both hash layouts (listpack -> "listpackex", and
hashtable).  The last test runs random hash commands with short field TTLs
against a Python model (a dict of value and expire time per field).
"""
import os
import random
import time

import pytest
import redis

from waithelp import wait_for

ENCODINGS = ["listpackex", "hashtable"]

NO_FIELD, NOT_MET, SET, DELETED = -2, 0, 1, 2


@pytest.fixture
def server(start_server):
    return start_server(enable_debug_command="yes")


def cli(srv, db=0):
    return redis.Redis(host=srv.host, port=srv.port, db=db, decode_responses=True, socket_timeout=10)


def setup_enc(r, enc):
    r.config_set("hash-max-listpack-entries", 0 if enc == "hashtable" else 128)


def ms():
    return int(time.time() * 1000)


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


@pytest.mark.parametrize("enc", ENCODINGS)
def test_hexpire_conditions_reply_table(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.hset("h", mapping={"f1": "v1", "f2": "v2", "f3": "v3"})
    # -2 absent field, 1 set
    assert r.execute_command("HPEXPIRE", "h", 100000, "FIELDS", 2, "f1", "nope") == [SET, NO_FIELD]
    assert r.object("encoding", "h") == enc
    # NX: only fields without an expire
    assert r.execute_command("HPEXPIRE", "h", 100000, "NX", "FIELDS", 2, "f1", "f2") == [NOT_MET, SET]
    # XX: only fields with an expire
    assert r.execute_command("HPEXPIRE", "h", 200000, "XX", "FIELDS", 2, "f1", "f3") == [SET, NOT_MET]
    # GT: no expire counts as infinite, so never greater
    assert r.execute_command("HPEXPIRE", "h", 300000, "GT", "FIELDS", 3, "f1", "f2", "f3") == [SET, SET, NOT_MET]
    assert r.execute_command("HPEXPIRE", "h", 1000, "GT", "FIELDS", 1, "f1") == [NOT_MET]
    # LT: a field without expire takes any time
    assert r.execute_command("HPEXPIRE", "h", 1000, "LT", "FIELDS", 3, "f1", "f3", "nope") == [SET, SET, NO_FIELD]
    assert r.execute_command("HPEXPIRE", "h", 5000, "LT", "FIELDS", 1, "f1") == [NOT_MET]
    # 2: a time in the past (or 0) deletes the field; the condition is checked first
    assert r.execute_command("HPEXPIREAT", "h", ms() - 1000, "NX", "FIELDS", 2, "f2", "f1") == [NOT_MET, NOT_MET]
    assert r.execute_command("HEXPIRE", "h", 0, "FIELDS", 2, "f1", "f3") == [DELETED, DELETED]
    assert r.hkeys("h") == ["f2"]
    assert r.execute_command("HEXPIREAT", "h", int(time.time()) - 1, "FIELDS", 1, "f2") == [DELETED]
    assert r.exists("h") == 0  # the last field went, and the key with it
    # missing key: -2 per field
    for cmd in ("HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"):
        assert r.execute_command(cmd, "nokey", 1000, "FIELDS", 2, "a", "b") == [NO_FIELD, NO_FIELD]


@pytest.mark.parametrize("enc", ENCODINGS)
def test_httl_family_and_hpersist(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.hset("h", mapping={"a": "1", "b": "2"})
    at = ms() + 100000
    assert r.execute_command("HPEXPIREAT", "h", at, "FIELDS", 1, "a") == [1]
    assert r.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "c") == [at, -1, -2]
    assert r.execute_command("HEXPIRETIME", "h", "FIELDS", 1, "a") == [(at + 999) // 1000]
    pttl = r.execute_command("HPTTL", "h", "FIELDS", 1, "a")[0]
    assert 90000 < pttl <= 100000
    assert 90 < r.execute_command("HTTL", "h", "FIELDS", 1, "a")[0] <= 100
    assert r.execute_command("HTTL", "nokey", "FIELDS", 2, "a", "b") == [-2, -2]
    # HPERSIST: 1 removed, -1 no expire, -2 no field
    assert r.execute_command("HPERSIST", "h", "FIELDS", 3, "a", "b", "zz") == [1, -1, -2]
    assert r.execute_command("HTTL", "h", "FIELDS", 2, "a", "b") == [-1, -1]
    assert r.execute_command("HPERSIST", "nokey", "FIELDS", 1, "a") == [-2]
    # a plain hash (no TTL ever set) answers the same
    r.hset("plain", "x", "1")
    assert r.execute_command("HTTL", "plain", "FIELDS", 2, "x", "y") == [-1, -2]
    assert r.execute_command("HPERSIST", "plain", "FIELDS", 2, "x", "y") == [-1, -2]
    assert r.object("encoding", "plain") == ("listpack" if enc == "listpackex" else "hashtable")


def test_argument_errors(server):
    r = cli(server)
    r.hset("h", "f", "v")
    r.set("s", "x")
    mismatch = "The `numfields` parameter must match the number of arguments"
    missing = "Mandatory argument FIELDS is missing or not at the right position"
    for cmd in ("HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"):
        lc = cmd.lower()
        assert err(r, cmd, "h", 10, "FIELDS", 0, "f") == "Parameter `numFields` should be greater than 0"
        assert err(r, cmd, "h", 10, "FIELDS", -1, "f") == "Parameter `numFields` should be greater than 0"
        assert err(r, cmd, "h", 10, "FIELDS", "x", "f") == "Parameter `numFields` should be greater than 0"
        assert err(r, cmd, "h", 10, "FIELDS", 2, "f") == mismatch
        assert err(r, cmd, "h", 10, "NX", "FIELDS", 1, "f", "g") == mismatch
        assert err(r, cmd, "h", 10, "NX", "XX", "FIELDS", 1) == missing
        assert err(r, cmd, "h", 10, "BAD", 1, "f") == missing
        assert err(r, cmd, "h", "abc", "FIELDS", 1, "f") == "value is not an integer or out of range"
        assert err(r, cmd, "h", -1, "FIELDS", 1, "f") == "invalid expire time, must be >= 0"
        assert err(r, cmd, "h", 1 << 48, "FIELDS", 1, "f") == "invalid expire time in '%s' command" % lc
        assert err(r, cmd, "h", 10, "FIELDS", 1) == "wrong number of arguments for '%s' command" % lc
        assert err(r, cmd, "s", 10, "FIELDS", 1, "f").startswith("WRONGTYPE")
    # the ceiling is 2^46 ms
    assert r.execute_command("HPEXPIREAT", "h", (1 << 46) - 1, "FIELDS", 1, "f") == [1]
    assert err(r, "HPEXPIREAT", "h", 1 << 46, "FIELDS", 1, "f") == "invalid expire time in 'hpexpireat' command"
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST", "HGETDEL"):
        assert err(r, cmd, "h", "FIELDS", 0, "f") == "Number of fields must be a positive integer"
        assert err(r, cmd, "h", "FIELDS", 2, "f") == mismatch
        assert err(r, cmd, "h", "FIELDS", 1, "f", "g") == mismatch
        assert err(r, cmd, "h", "NOPE", 1, "f") == missing
        assert err(r, cmd, "h", "FIELDS", 1) == "wrong number of arguments for '%s' command" % cmd.lower()
        assert err(r, cmd, "s", "FIELDS", 1, "f").startswith("WRONGTYPE")
    # HGETEX
    assert err(r, "HGETEX", "h", "FIELDS", 0, "a") == "Number of fields must be a positive integer"
    assert err(r, "HGETEX", "h", "FIELDS", 2, "a") == mismatch
    assert err(r, "HGETEX", "h", "XFIELDX", 1, "a") == missing
    assert err(r, "HGETEX", "h", "PERSIST", 1, "FIELDS", 1, "a") == missing
    assert err(r, "HGETEX", "h", "EX", "bla", "FIELDS", 1, "a") == "value is not an integer or out of range"
    assert err(r, "HGETEX", "h", "PX", -1, "FIELDS", 1, "a") == "invalid expire time, must be >= 0"
    assert err(r, "HGETEX", "h", "EXAT", 1 << 46, "FIELDS", 1, "a") == "invalid expire time in 'hgetex' command"
    assert err(r, "HGETEX", "h", "FIELDS", 1) == "wrong number of arguments for 'hgetex' command"
    assert err(r, "HGETEX", "s", "FIELDS", 1, "a").startswith("WRONGTYPE")
    # HSETEX
    arity = "wrong number of arguments for 'hsetex' command"
    for args in (["fields", 1, "a"], ["fields", 2, "a", "b"], ["fields", 2, "a", "b", "c"],
                 ["fields", 3, "a", "b", "c", "d"], ["fields", 1, "a", "b", "unknown"]):
        assert err(r, "HSETEX", "h", *args) == arity
    assert err(r, "HSETEX", "h", "nx", "fields", 1, "a", "b") == "unknown argument: nx"
    assert err(r, "HSETEX", "h", "fxx", "fnx", "fields", 1, "a", "b") == \
        "Only one of FXX or FNX arguments can be specified"
    assert err(r, "HSETEX", "h", "EX", 100, "PX", 1000, "fields", 1, "a", "b") == \
        "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    assert err(r, "HSETEX", "h", "KEEPTTL", "EX", 100, "fields", 1, "a", "b") == \
        "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    assert err(r, "HSETEX", "h", "ex", "fields", 1, "a", "b") == "value is not an integer or out of range"
    assert err(r, "HSETEX", "h", "fields", "x", "a", "b") == "invalid number of fields"
    assert err(r, "HSETEX", "h", "fields", 0, "a", "b") == "invalid number of fields"
    assert err(r, "HSETEX", "h", "EXAT", -1, "fields", 1, "a", "b") == "invalid expire time, must be >= 0"
    assert err(r, "HSETEX", "s", "fields", 1, "a", "b").startswith("WRONGTYPE")


@pytest.mark.parametrize("enc", ENCODINGS)
def test_lazy_expiry_semantics(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.hset("h", mapping={"f1": "v1", "f2": "v2", "f3": "v3", "keep": "k"})
    r.execute_command("HPEXPIRE", "h", 1, "FIELDS", 3, "f1", "f2", "f3")
    time.sleep(0.02)
    # HLEN counts fields expired but not yet deleted, as Redis defines it
    assert r.hlen("h") == 4
    # the readers that list fields skip them
    assert r.hgetall("h") == {"keep": "k"}
    assert r.hkeys("h") == ["keep"] and r.hvals("h") == ["k"]
    assert r.hscan("h", 0, count=100)[1] == {"keep": "k"}
    assert r.hlen("h") == 4
    # addressing an expired field deletes it
    assert r.hexists("h", "f1") is False
    assert r.hlen("h") == 3
    assert r.hget("h", "f2") is None
    assert r.hlen("h") == 2
    assert r.hstrlen("h", "f3") == 0
    assert r.hlen("h") == 1
    assert r.hmget("h", "keep", "f1") == ["k", None]
    # the last field expiring deletes the key
    r.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "keep")
    time.sleep(0.02)
    assert r.exists("h") == 1
    assert r.hget("h", "keep") is None
    assert r.exists("h") == 0
    # HRANDFIELD deletes every expired field first
    r.hset("r", mapping={"a": "1", "b": "2", "c": "3"})
    r.execute_command("HPEXPIRE", "r", 1, "FIELDS", 2, "a", "b")
    time.sleep(0.02)
    assert r.hrandfield("r", 5) == ["c"]
    assert r.hlen("r") == 1
    r.execute_command("HPEXPIRE", "r", 1, "FIELDS", 1, "c")
    time.sleep(0.02)
    assert r.hrandfield("r") is None and r.exists("r") == 0
    # HSET overwrites: the TTL is gone; HINCRBY keeps it; an expired field restarts at 0
    r.hset("i", mapping={"n": "10", "m": "5"})
    r.execute_command("HPEXPIRE", "i", 100000, "FIELDS", 2, "n", "m")
    assert r.hincrby("i", "n", 2) == 12
    assert r.execute_command("HTTL", "i", "FIELDS", 1, "n")[0] > 0
    r.hset("i", "m", "7")
    assert r.execute_command("HTTL", "i", "FIELDS", 1, "m") == [-1]
    assert r.hincrbyfloat("i", "n", "0.5") == 12.5
    assert r.execute_command("HTTL", "i", "FIELDS", 1, "n")[0] > 0
    r.execute_command("HPEXPIRE", "i", 1, "FIELDS", 1, "n")
    time.sleep(0.02)
    assert r.hincrby("i", "n", 1) == 1
    assert r.execute_command("HTTL", "i", "FIELDS", 1, "n") == [-1]
    r.execute_command("HPEXPIRE", "i", 1, "FIELDS", 1, "n")
    time.sleep(0.02)
    assert r.hsetnx("i", "n", "x") == 1
    assert r.hdel("i", "n", "m") == 2 and r.exists("i") == 0


@pytest.mark.parametrize("enc", ENCODINGS)
def test_hgetex_hsetex_hgetdel(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.hset("h", mapping={"a": "1", "b": "2", "c": "s"})
    assert r.execute_command("HGETEX", "h", "FIELDS", 3, "a", "b", "zz") == ["1", "2", None]
    assert r.execute_command("HTTL", "h", "FIELDS", 2, "a", "b") == [-1, -1]
    assert r.execute_command("HGETEX", "h", "EX", 1000, "FIELDS", 1, "a") == ["1"]
    assert 990 <= r.execute_command("HTTL", "h", "FIELDS", 1, "a")[0] <= 1000
    at = ms() + 50000
    assert r.execute_command("HGETEX", "h", "PXAT", at, "FIELDS", 1, "b") == ["2"]
    assert r.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "b") == [at]
    assert r.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 2, "a", "c") == ["1", "s"]
    assert r.execute_command("HTTL", "h", "FIELDS", 2, "a", "c") == [-1, -1]
    # a time in the past deletes (the key too when it was the last field)
    assert r.execute_command("HGETEX", "h", "PXAT", 1, "FIELDS", 3, "a", "b", "c") == ["1", "2", "s"]
    assert r.exists("h") == 0
    assert r.execute_command("HGETEX", "nokey", "FIELDS", 2, "a", "b") == [None, None]
    # HSETEX: 1 set, 0 refused by FNX / FXX
    assert r.execute_command("HSETEX", "k", "FXX", "FIELDS", 1, "a", "1") == 0
    assert r.exists("k") == 0
    assert r.execute_command("HSETEX", "k", "FNX", "EX", 100, "FIELDS", 2, "a", "1", "b", "2") == 1
    assert 90 <= r.execute_command("HTTL", "k", "FIELDS", 1, "a")[0] <= 100
    assert r.execute_command("HSETEX", "k", "FNX", "FIELDS", 2, "b", "x", "c", "3") == 0
    assert r.hgetall("k") == {"a": "1", "b": "2"}
    assert r.execute_command("HSETEX", "k", "FXX", "KEEPTTL", "FIELDS", 1, "a", "11") == 1
    assert r.execute_command("HTTL", "k", "FIELDS", 1, "a")[0] > 0
    assert r.execute_command("HSETEX", "k", "FIELDS", 1, "a", "111") == 1  # no option: TTL dropped
    assert r.execute_command("HTTL", "k", "FIELDS", 1, "a") == [-1]
    assert r.execute_command("HSETEX", "k", "PX", 100000, "FIELDS", 1, "c", "3") == 1
    assert r.execute_command("HSETEX", "k", "EXAT", int(time.time()) - 1, "FIELDS", 1, "c", "3") == 1
    assert r.hexists("k", "c") is False
    # HGETDEL
    assert r.execute_command("HGETDEL", "k", "FIELDS", 3, "a", "zz", "b") == ["111", None, "2"]
    assert r.exists("k") == 0
    assert r.execute_command("HGETDEL", "k", "FIELDS", 1, "a") == [None]


@pytest.mark.parametrize("enc", ENCODINGS)
def test_active_expiry_deletes_fields_and_key(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.hset("mix", mapping={"f%d" % i: i for i in range(40)})
    r.hset("mix", mapping={"keep%d" % i: i for i in range(10)})
    r.execute_command("HPEXPIRE", "mix", 30, "FIELDS", 40, *["f%d" % i for i in range(40)])
    r.hset("all", mapping={"f%d" % i: i for i in range(20)})
    r.execute_command("HPEXPIRE", "all", 30, "FIELDS", 20, *["f%d" % i for i in range(20)])
    wait_for(lambda: r.exists("all") == 0 and r.hlen("mix") == 10, what="active field expiry")
    assert sorted(r.hkeys("mix")) == sorted("keep%d" % i for i in range(10))
    # a renamed / moved hash keeps being expired actively
    r.hset("ren", mapping={"a": 1, "b": 2})
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.execute_command("HPEXPIRE", "ren", 30, "FIELDS", 2, "a", "b")
    r.rename("ren", "ren2")
    r.move("ren2", 3)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    r3 = cli(server, db=3)
    time.sleep(0.05)
    wait_for(lambda: r3.execute_command("DBSIZE") == 0, what="moved hash expired actively")


def test_active_expiry_big_hash(server):
    """One hash with many fields expiring at once is reclaimed by the timer,
    a bounded slice per tick, while other commands keep being served."""
    r = cli(server)
    n = 200000
    pipe = r.pipeline(transaction=False)
    for i in range(0, n, 1000):
        pipe.hset("big", mapping={"f%d" % j: "v" for j in range(i, i + 1000)})
    pipe.execute()
    r.hset("big", "keep", "1")
    at = ms() + 300
    for i in range(0, n, 5000):
        pipe.execute_command("HPEXPIREAT", "big", at, "FIELDS", 5000, *["f%d" % j for j in range(i, i + 5000)])
    pipe.execute()
    assert r.object("encoding", "big") == "hashtable"
    wait_for(lambda: r.hlen("big") == 1, timeout=60, what="big hash reclaimed")
    assert r.hgetall("big") == {"keep": "1"}


def test_no_ttl_hash_keeps_its_layout_and_size(server):
    r = cli(server)
    for k in ("a", "b"):
        r.hset(k, mapping={"f%d" % i: "v%d" % i for i in range(10)})
    assert r.object("encoding", "a") == "listpack"
    assert r.memory_usage("a") == r.memory_usage("b")
    # a TTL set costs at most 16 bytes per field in the compact layout
    before = r.memory_usage("b")
    r.execute_command("HPEXPIRE", "b", 1000000, "FIELDS", 10, *["f%d" % i for i in range(10)])
    assert r.object("encoding", "b") == "listpackex"
    assert r.memory_usage("b") - before <= 16 * 10 + 32


def test_command_info_and_docs(server):
    r = cli(server)
    raw = redis.Redis(host=server.host, port=server.port, decode_responses=True, socket_timeout=10)
    raw.set_response_callback("COMMAND", lambda x, **kw: x)
    info = raw.execute_command("COMMAND", "INFO", "hexpire", "httl", "hgetex", "hsetex", "hgetdel", "hpersist")
    by = {e[0]: e for e in info}
    # As Redis 8.0 reports them (test_newer_oracles.py compares with it).
    assert by["hexpire"][1] == -6 and by["hexpire"][2] == ["write", "fast"]
    assert by["hexpire"][6] == ["@write", "@hash", "@fast"]
    assert by["httl"][1] == -5 and by["httl"][2] == ["readonly", "fast"]
    assert by["httl"][6] == ["@read", "@hash", "@fast"]
    assert by["hgetex"][2] == ["write", "fast"] and by["hsetex"][1] == -6
    assert by["hgetdel"][1] == -5 and by["hpersist"][2] == ["write", "fast"]
    assert by["hgetdel"][8][0][1] == ["RW", "access", "delete"]
    assert raw.execute_command("COMMAND", "GETKEYS", "HEXPIRE", "k", 10, "FIELDS", 1, "f") == ["k"]
    docs = raw.execute_command("COMMAND", "DOCS", "hsetex")
    assert "8.0.0" in str(docs)


def test_propagation_to_replica_keeps_absolute_ttls(start_server):
    primary = start_server(enable_debug_command="yes")
    replica = start_server(enable_debug_command="yes")
    p = cli(primary)
    rr = cli(replica)
    rr.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_for(lambda: rr.info("replication")["master_link_status"] == "up", what="replica link")
    p.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    p.execute_command("HEXPIRE", "h", 1000, "FIELDS", 2, "a", "zz")
    p.execute_command("HPEXPIRE", "h", 5000000, "NX", "FIELDS", 2, "a", "b")
    p.execute_command("HSETEX", "h", "EX", 300, "FIELDS", 1, "c", "33")
    p.execute_command("HGETEX", "h", "PX", 400000, "FIELDS", 1, "d")
    p.execute_command("HPEXPIRE", "h", 0, "FIELDS", 1, "e")  # deleted: HDEL
    p.hincrbyfloat("h", "c", 1)
    p.execute_command("HPERSIST", "h", "FIELDS", 1, "b")
    p.hset("g", mapping={"x": 1, "y": 2})
    p.execute_command("HPEXPIRE", "g", 40, "FIELDS", 1, "x")  # expires actively: HDEL
    wait_for(lambda: p.hkeys("g") == ["y"], what="active expiry on the primary")
    p.execute_command("WAIT", 1, 5000)
    fields = ["a", "b", "c", "d", "e"]

    def state(c):
        return (c.hgetall("h"), c.execute_command("HPEXPIRETIME", "h", "FIELDS", 5, *fields), c.hgetall("g"))

    wait_for(lambda: state(rr) == state(p), what="replica state")
    assert state(p)[1][1] == -1 and state(p)[1][4] == -2 and state(p)[1][2] > 0


def test_random_ops_against_model(server):
    """Random hash commands with short field TTLs, compared with a model.
    Time is real (TTLs of a few ms); a command's reply may depend on whether
    an expiry instant passed between the model's clock read and the server's,
    so fields whose expire is within GRACE ms of now are left out of
    comparisons until they are surely expired.  Active expiry is toggled
    with DEBUG SET-ACTIVE-EXPIRE; HLEN is checked against its bounds (it
    counts expired fields not yet deleted)."""
    r = cli(server)
    rnd = random.Random(int(os.environ.get("HFE_MODEL_SEED", "38")))
    GRACE = 15
    OPS = 20000
    model = {}  # key -> {field: [value, expire_ms or 0]}
    keys = ["k%d" % i for i in range(4)]
    fields = ["f%d" % i for i in range(8)]
    r.config_set("hash-max-listpack-entries", 4)  # both layouts and conversions

    def now():
        return time.time() * 1000

    def live(key, t):
        h = model.get(key, {})
        return {f: (v, e) for f, (v, e) in h.items() if not e or e > t + GRACE}

    def uncertain(key, t):
        h = model.get(key, {})
        return {f for f, (v, e) in h.items() if e and t - GRACE <= e <= t + GRACE}

    def pexpiretime(key, field):
        # the model's expire for a field the server just set: -1 none (0),
        # -2 already gone (a time long past)
        v = r.execute_command("HPEXPIRETIME", key, "FIELDS", 1, field)[0]
        return v if v > 0 else (0 if v == -1 else 1)

    def purge(t):
        for k in list(model):
            for f in [f for f, (v, e) in model[k].items() if e and e < t - GRACE]:
                del model[k][f]
            if not model[k]:
                del model[k]

    state = {"t": 0.0, "late": False}

    def x(*args):
        # a reply that took GRACE or more leaves the server's clock unknown
        # within the window: that step's checks are skipped
        res = r.execute_command(*args)
        state["late"] = state["late"] or now() - state["t"] > GRACE - 2
        return res

    late_steps = 0
    for step in range(OPS):
        late_steps += state["late"]
        t = now()
        state["t"], state["late"] = t, False
        purge(t)
        k = rnd.choice(keys)
        f = rnd.choice(fields)
        unsure = uncertain(k, t)
        op = rnd.randrange(14)
        if op == 0:
            vals = {rnd.choice(fields): str(rnd.randrange(100)) for _ in range(rnd.randrange(1, 4))}
            x("HSET", k, *[a for p in vals.items() for a in p])
            h = model.setdefault(k, {})
            for ff, vv in vals.items():
                h[ff] = [vv, 0]
        elif op == 1:
            ttl = rnd.choice([1, 5, 30, 60, 100000])
            cond = rnd.choice([None, "NX", "XX", "GT", "LT"])
            args = [k, ttl] + ([cond] if cond else []) + ["FIELDS", 1, f]
            got = x("HPEXPIRE", *args)[0]
            if f in unsure:
                model.get(k, {}).pop(f, None)
                r.hdel(k, f)
                if not model.get(k):
                    model.pop(k, None)
                continue
            h = live(k, t)
            if f not in h:
                # As in Redis 8, a field expired but not yet deleted is still
                # there for HPEXPIRE (its stale expire is compared; a future
                # one revives it); one already deleted answers -2.
                assert state["late"] or got in (-2, 0, 1, 2), (step, args)
                if got == 1:
                    v = r.hget(k, f)
                    if v is None:
                        r.hdel(k, f)
                    else:
                        model.setdefault(k, {})[f] = [v, pexpiretime(k, f)]
                continue
            prev = model[k][f][1]
            when = t + ttl
            met = not ((cond == "NX" and prev) or (cond == "XX" and not prev) or
                       (cond == "GT" and (not prev or ttl and when <= prev)) or
                       (cond == "LT" and prev and when >= prev))
            if abs(when - prev) < GRACE and cond in ("GT", "LT"):
                model[k][f][1] = pexpiretime(k, f)
                continue
            assert state["late"] or got == (1 if met else 0), (step, args, prev, when)
            if met:
                model[k][f][1] = pexpiretime(k, f)
        elif op == 2:
            got = x("HGET", k, f)
            if f not in unsure:
                assert state["late"] or got == live(k, t).get(f, [None])[0], step
        elif op == 3:
            got = x("HGETALL", k)
            exp = {ff: v for ff, (v, e) in live(k, t).items() if ff not in unsure}
            assert state["late"] or {ff: v for ff, v in got.items() if ff not in unsure} == exp, step
        elif op == 4:
            got = x("HDEL", k, f)
            h = model.get(k, {})
            if f not in unsure and f in h and (not h[f][1] or h[f][1] > t + GRACE):
                assert state["late"] or got == 1, step
            h.pop(f, None)
            if not h:
                model.pop(k, None)
        elif op == 5:
            got = x("HPERSIST", k, "FIELDS", 1, f)[0]
            if f in unsure:
                model.get(k, {}).pop(f, None)
                r.hdel(k, f)
                continue
            h = live(k, t)
            exp = -2 if f not in h else (1 if h[f][1] else -1)
            assert state["late"] or got == exp, step
            if exp == 1:
                model[k][f][1] = 0
        elif op == 6:
            got = x("HPTTL", k, "FIELDS", 1, f)[0]
            if f not in unsure:
                h = live(k, t)
                if f not in h:
                    assert state["late"] or got == -2, step
                elif not h[f][1]:
                    assert state["late"] or got == -1, step
                else:
                    assert state["late"] or 0 < got <= h[f][1] - t + 2, step
        elif op == 7:
            n = x("HLEN", k)
            h = model.get(k, {})
            assert state["late"] or len([1 for ff in h if ff not in unsure and (not h[ff][1] or h[ff][1] > t + GRACE)]) <= n, step
        elif op == 8:
            got = x("HINCRBY", k, f, 1)
            if f in unsure:
                model.setdefault(k, {})[f] = [str(got), pexpiretime(k, f)]
                continue
            h = live(k, t)
            if f in h:
                try:
                    base = int(h[f][0])
                except ValueError:
                    base = None
            else:
                base = 0
                model.setdefault(k, {})[f] = ["0", 0]
            if base is not None:
                assert state["late"] or got == base + 1, step
                model[k][f][0] = str(got)
        elif op == 9:
            ttl = rnd.choice([2, 20, 100000])
            vals = [(rnd.choice(fields), str(rnd.randrange(100))) for _ in range(rnd.randrange(1, 3))]
            vals = list(dict(vals).items())
            flat = [x for p in vals for x in p]
            x("HSETEX", k, "PX", ttl, "FIELDS", len(vals), *flat)
            h = model.setdefault(k, {})
            for ff, vv in vals:
                h[ff] = [vv, pexpiretime(k, ff)]
        elif op == 10:
            got = x("HGETDEL", k, "FIELDS", 1, f)[0]
            if f not in unsure:
                assert state["late"] or got == live(k, t).get(f, [None])[0], step
            model.get(k, {}).pop(f, None)
            if k in model and not model[k]:
                model.pop(k)
        elif op == 11:
            got = x("HGETEX", k, "FIELDS", 2, f, "zz")
            if f not in unsure:
                assert state["late"] or got == [live(k, t).get(f, [None])[0], None], step
        elif op == 12:
            r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", rnd.randrange(2))
        else:
            # a key exists exactly while it has a field (expired ones count until deleted)
            ex = x("EXISTS", k)
            h = model.get(k, {})
            if any(not e or e > t + GRACE for v, e in h.values()):
                assert state["late"] or ex == 1, step
    assert late_steps < OPS // 4, late_steps  # the comparisons did run
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    # in the end active expiry leaves exactly the fields without a TTL or
    # with a long one
    t = now()
    persistent = {k: {f: v for f, (v, e) in h.items() if not e or e > t + 5000} for k, h in model.items()}
    wait_for(lambda: all(r.hlen(k) == len(persistent.get(k, {})) for k in keys), timeout=20,
             what="active expiry settles")
    for k in keys:
        assert r.hgetall(k) == persistent.get(k, {})


# --- persistence: DUMP / RESTORE, RDB, AOF rewrite -------------------------

def _rdb_len(n):
    assert n < 64
    return bytes([n])


def _rdb_str(s):
    b = s.encode()
    return _rdb_len(len(b)) + b


@pytest.mark.parametrize("enc", ENCODINGS)
def test_dump_restore_keeps_field_ttls(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    r.execute_command("HEXPIREAT", "h", 2524600800, "FIELDS", 1, "a")
    r.execute_command("HEXPIREAT", "h", 2524600801, "FIELDS", 1, "b")
    raw = redis.Redis(host=server.host, port=server.port, socket_timeout=10)
    payload = raw.dump("h")
    # RDB_TYPE_HASH_LISTPACK_EX for the listpack layout (as Redis 8 writes
    # it), RDB_TYPE_HASH_METADATA for the hashtable
    assert payload[0] == (25 if enc == "listpackex" else 24)
    assert payload[-10:-8] == b"\x0c\x00"  # RDB version 12
    r.delete("h")
    raw.restore("h", 0, payload)
    assert r.hgetall("h") == {"a": "1", "b": "2", "c": "3"}
    assert r.execute_command("HEXPIRETIME", "h", "FIELDS", 3, "a", "b", "c") == [2524600800, 2524600801, -1]
    assert r.object("encoding", "h") == enc
    # a hash without field TTLs still dumps as Redis 7.0 does (version 10)
    r.hset("plain", "x", "1")
    p2 = raw.dump("plain")
    assert p2[-10:-8] == b"\x0a\x00"
    # a restored TTL hash is expired actively
    r.hset("e", mapping={"a": "1"})
    r.execute_command("HPEXPIRE", "e", 50, "FIELDS", 1, "a")
    p3 = raw.dump("e")
    r.delete("e")
    raw.restore("e2", 0, p3)
    wait_for(lambda: r.exists("e2") == 0, what="restored hash expired actively")


def test_restore_redis74_payloads(server):
    """Payloads in Redis 7.4's layouts, written by hand from the format:
    RDB_TYPE_HASH_METADATA (min expire, then TTL - min + 1 per field) and
    RDB_TYPE_HASH_LISTPACK_EX (min expire, listpack of triples)."""
    from test_dump import crc64
    import struct
    r = cli(server)
    raw = redis.Redis(host=server.host, port=server.port, socket_timeout=10)
    at1, at2 = 2524600800000, 2524600801000
    body = bytes([24]) + struct.pack("<Q", at1) + _rdb_len(3)
    for ttl, f, v in ((1, "a", "1"), (at2 - at1 + 1, "b", "2"), (0, "c", "3")):
        body += bytes([0x80]) + struct.pack(">I", ttl) if ttl >= 64 else _rdb_len(ttl)
        body += _rdb_str(f) + _rdb_str(v)
    p = body + b"\x0c\x00"
    raw.restore("m", 0, p + struct.pack("<Q", crc64(p)))
    assert r.execute_command("HPEXPIRETIME", "m", "FIELDS", 3, "a", "b", "c") == [at1, at2, -1]
    # listpackex: fields with TTL first, ascending, then the ones without
    def lp_str(s):
        b = s.encode()
        return bytes([0x80 | len(b)]) + b + bytes([len(b) + 1])

    def lp_int64(v):
        return bytes([0xF4]) + struct.pack("<q", v) + bytes([9])

    def lp_small(v):
        return bytes([v]) + bytes([1])

    entries = lp_str("x") + lp_str("1") + lp_int64(at1) + lp_str("y") + lp_str("2") + lp_small(0)
    lp = struct.pack("<IH", 6 + len(entries) + 1, 6) + entries + b"\xff"
    body = bytes([25]) + struct.pack("<Q", at1) + _rdb_len(len(lp)) + lp
    p = body + b"\x0c\x00"
    raw.restore("l", 0, p + struct.pack("<Q", crc64(p)))
    assert r.hgetall("l") == {"x": "1", "y": "2"}
    assert r.execute_command("HPEXPIRETIME", "l", "FIELDS", 2, "x", "y") == [at1, -1]


def _rdb_version(path):
    with open(path, "rb") as f:
        return f.read(9)


def test_rdb_and_aof_rewrite_keep_field_ttls(start_server, tmp_path):
    srv = start_server(enable_debug_command="yes", dir=str(tmp_path), appendonly="yes",
                       aof_use_rdb_preamble="no")
    r = cli(srv)
    r.hset("plain", "x", "1")
    r.save()
    assert _rdb_version(tmp_path / "dump.rdb") == b"REDIS0010"
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hset("big", mapping={"f%d" % i: i for i in range(600)})
    at = ms() + 10000000
    r.execute_command("HPEXPIREAT", "h", at, "FIELDS", 1, "a")
    r.execute_command("HPEXPIREAT", "big", at, "FIELDS", 2, "f1", "f2")
    r.save()
    assert _rdb_version(tmp_path / "dump.rdb") == b"REDIS0012"
    import os
    import subprocess
    check = os.path.join(os.path.dirname(os.path.abspath(srv.binary)), "cairn-check-rdb")
    if os.path.exists(check):  # cairn-check-rdb reads the version 12 file and its types
        out = subprocess.run([check, str(tmp_path / "dump.rdb")], capture_output=True, text=True).stdout
        assert "RDB looks OK" in out and "3 keys read" in out, out
    expect = (r.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b"),
              r.execute_command("HPEXPIRETIME", "big", "FIELDS", 3, "f1", "f2", "f3"))
    r.execute_command("DEBUG", "RELOAD")
    got = (r.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b"),
           r.execute_command("HPEXPIRETIME", "big", "FIELDS", 3, "f1", "f2", "f3"))
    assert got == expect
    assert r.object("encoding", "h") == "listpackex" and r.object("encoding", "big") == "hashtable"
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0 and
             r.info("persistence")["aof_rewrite_scheduled"] == 0, what="rewrite")
    r.execute_command("DEBUG", "LOADAOF")
    got = (r.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b"),
           r.execute_command("HPEXPIRETIME", "big", "FIELDS", 3, "f1", "f2", "f3"))
    assert got == expect
    assert r.hlen("big") == 600


def test_keyspace_events(server):
    r = cli(server)
    r.config_set("notify-keyspace-events", "KEA")
    ps = r.pubsub()
    ps.psubscribe("__keyevent@0__:*")
    assert ps.get_message(timeout=5)["type"] == "psubscribe"

    def events(n):
        got = []
        while len(got) < n:
            m = ps.get_message(timeout=5)
            assert m is not None, got
            if m["type"] == "pmessage":
                got.append((m["channel"].split(":", 1)[1], m["data"]))
        return got

    r.hset("h", mapping={"a": "1", "b": "2"})
    assert events(1) == [("hset", "h")]
    r.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "a")
    assert events(1) == [("hexpire", "h")]
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
    assert events(1) == [("hpersist", "h")]
    r.execute_command("HEXPIRE", "h", 0, "FIELDS", 1, "a")
    assert events(1) == [("hdel", "h")]
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "b")
    assert events(1) == [("hexpire", "h")]
    # the last field expires (actively or on access): hexpired, then del
    assert events(2) == [("hexpired", "h"), ("del", "h")]
    ps.close()


@pytest.mark.parametrize("enc", ENCODINGS)
def test_hsetex_over_an_expired_field(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "a")
    time.sleep(0.02)
    assert r.execute_command("HSETEX", "h", "PX", 100000, "FIELDS", 1, "a", "new") == 1
    assert r.hget("h", "a") == "new"
    assert r.execute_command("HPTTL", "h", "FIELDS", 1, "a")[0] > 90000
    r.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "b")
    time.sleep(0.02)
    assert r.hset("h", "b", "3") == 0  # an expired field is overwritten: an update, as in Redis
    assert r.execute_command("HTTL", "h", "FIELDS", 1, "b") == [-1]
    assert r.hget("h", "b") == "3"


@pytest.mark.parametrize("enc", ENCODINGS)
def test_load_drops_expired_fields(server, enc):
    r = cli(server)
    setup_enc(r, enc)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hset("gone", mapping={"a": "1"})
    r.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "a")
    r.execute_command("HPEXPIRE", "gone", 1, "FIELDS", 1, "a")
    time.sleep(0.02)
    assert r.hlen("h") == 2  # counted until deleted
    r.execute_command("DEBUG", "RELOAD")
    assert r.hlen("h") == 1 and r.hgetall("h") == {"b": "2"}
    assert r.exists("gone") == 0


def _aof_commands(path):
    data = open(path, "rb").read()
    out, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*", data[i:i + 20]
        j = data.index(b"\r\n", i)
        n = int(data[i + 1:j])
        i = j + 2
        cmd = []
        for _ in range(n):
            j = data.index(b"\r\n", i)
            ln = int(data[i + 1:j])
            cmd.append(data[j + 2:j + 2 + ln].decode())
            i = j + 2 + ln + 2
        out.append(cmd)
    return out


def test_effects_in_the_aof(start_server, tmp_path):
    """The commands the AOF (and replicas) get, as Redis 8 propagates them:
    HPEXPIREAT with an absolute time and only the fields set, an HDEL per
    field deleted, HSETEX with PXAT, HGETEX as HPEXPIREAT / HPERSIST, HGETDEL
    as HDEL, HINCRBYFLOAT on a TTL hash as HSETEX KEEPTTL."""
    srv = start_server(enable_debug_command="yes", dir=str(tmp_path), appendonly="yes", appendfsync="always")
    r = cli(srv)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.hset("h0", mapping={"x1": "y1", "x2": "y2"})
    r.execute_command("HEXPIREAT", "h0", 1, "FIELDS", 3, "x1", "x2", "nope")
    r.hset("h1", mapping={"f1": "v1", "f2": "v2"})
    r.execute_command("HEXPIRE", "h1", 10, "XX", "FIELDS", 3, "f1", "f2", "nope")  # nothing set: no effect
    r.execute_command("HPEXPIRE", "h1", 20000, "FIELDS", 1, "f1")
    r.execute_command("HPEXPIRE", "h1", 30000, "NX", "FIELDS", 2, "f1", "f2")
    r.execute_command("HPERSIST", "h1", "FIELDS", 1, "f2")
    r.execute_command("HSETEX", "h3", "EX", 100, "FIELDS", 1, "f", "v")
    r.execute_command("HSETEX", "h3", "FNX", "FIELDS", 1, "f", "v")  # refused: no effect
    r.execute_command("HSETEX", "h3", "KEEPTTL", "FIELDS", 1, "f", "w")
    r.execute_command("HSETEX", "h3", "PX", 0, "FIELDS", 1, "f", "z")
    r.execute_command("HSETEX", "h4", "FIELDS", 2, "a", "1", "b", "2")
    r.execute_command("HGETEX", "h4", "FIELDS", 1, "a")  # no change: no effect
    r.execute_command("HGETEX", "h4", "EX", 1000, "FIELDS", 1, "a")
    r.execute_command("HGETEX", "h4", "PERSIST", "FIELDS", 1, "a")
    r.hincrbyfloat("h4", "b", "1.5")
    r.execute_command("HGETDEL", "h4", "FIELDS", 2, "b", "zz")
    r.hset("lazy", mapping={"a": "1", "b": "2"})
    r.execute_command("HPEXPIRE", "lazy", 1, "FIELDS", 1, "a")
    time.sleep(0.02)
    assert r.hget("lazy", "a") is None  # deleted on access: HDEL
    cmds = [c for c in _aof_commands(tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof")
            if c[0].upper() != "SELECT"]

    def shape(c):
        c = [c[0].upper()] + list(c[1:])
        if c[0].upper() in ("HPEXPIREAT", "HSETEX") and len(c) > 3 and c[2].isdigit():
            c[2] = "*"
        if c[0].upper() == "HSETEX" and "PXAT" in c:
            c[c.index("PXAT") + 1] = "*"
        return c

    got = [shape(c) for c in cmds]
    assert got == [
        ["HSET", "h0", "x1", "y1", "x2", "y2"],
        ["MULTI"], ["HDEL", "h0", "x1"], ["HDEL", "h0", "x2"], ["EXEC"],
        ["HSET", "h1", "f1", "v1", "f2", "v2"],
        ["HPEXPIREAT", "h1", "*", "FIELDS", "1", "f1"],
        ["HPEXPIREAT", "h1", "*", "NX", "FIELDS", "1", "f2"],
        ["HPERSIST", "h1", "FIELDS", "1", "f2"],
        ["HSETEX", "h3", "PXAT", "*", "FIELDS", "1", "f", "v"],
        ["HSETEX", "h3", "KEEPTTL", "FIELDS", "1", "f", "w"],
        ["HDEL", "h3", "f"],
        ["HSETEX", "h4", "FIELDS", "2", "a", "1", "b", "2"],
        ["HPEXPIREAT", "h4", "*", "FIELDS", "1", "a"],
        ["HPERSIST", "h4", "FIELDS", "1", "a"],
        ["HSETEX", "h4", "KEEPTTL", "FIELDS", "1", "b", "3.5"],
        ["HDEL", "h4", "b", "zz"],
        ["HSET", "lazy", "a", "1", "b", "2"],
        ["HPEXPIREAT", "lazy", "*", "FIELDS", "1", "a"],
        ["HDEL", "lazy", "a"],
    ], got


def test_ttl_layout_without_ttls_dumps_as_redis70(server):
    r = cli(server)
    raw = redis.Redis(host=server.host, port=server.port, socket_timeout=10)
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.execute_command("HEXPIRE", "h", 1000, "FIELDS", 1, "a")
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
    assert r.object("encoding", "h") == "listpackex"
    p = raw.dump("h")
    assert p[0] == 4 and p[-10:-8] == b"\x0a\x00"  # RDB_TYPE_HASH, version 10
    r.delete("h")
    raw.restore("h", 0, p)
    assert r.hgetall("h") == {"a": "1", "b": "2"}
    assert r.execute_command("HTTL", "h", "FIELDS", 2, "a", "b") == [-1, -1]


def test_full_sync_carries_field_ttls(start_server):
    primary = start_server()
    replica = start_server()
    p, rr = cli(primary), cli(replica)
    at = ms() + 1000000
    p.hset("h", mapping={"a": "1", "b": "2"})
    p.hset("big", mapping={"f%d" % i: i for i in range(600)})
    p.execute_command("HPEXPIREAT", "h", at, "FIELDS", 1, "a")
    p.execute_command("HPEXPIREAT", "big", at, "FIELDS", 2, "f1", "f599")
    rr.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_for(lambda: rr.info("replication")["master_link_status"] == "up", what="replica link")
    wait_for(lambda: rr.exists("big") == 1, what="synced")
    assert rr.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b") == [at, -1]
    assert rr.execute_command("HPEXPIRETIME", "big", "FIELDS", 3, "f1", "f599", "f2") == [at, at, -1]
    assert rr.object("encoding", "h") == "listpackex"
