"""Replication: Cairn and redis-server 7.0.15 as primary and replica in
every combination (and a chain), full sync from a diskless stream and
from disk, the stream of random writes of every type (MULTI, scripts,
functions, expiries, several databases) leaving DEBUG DIGEST equal
everywhere, a cut link continuing with +CONTINUE, a full sync killed
half-way and retried, a promoted replica letting its sibling continue
(PSYNC2), and the replica-side rules (READONLY, MASTERDOWN, expired keys
kept until the primary's DEL), ROLE, WAIT, INFO replication and
min-replicas-to-write."""
import functools
import os
import random
import time

import pytest
import redis

from rdbhelp import populate
from test_aof import wait_for

DBG = {"enable-debug-command": "yes"}
FAST = {"repl-diskless-sync-delay": "0", **DBG}
ORACLE_DBG = {"enable-debug-command": "yes", "repl-diskless-sync-delay": "0"}


wait_for = functools.partial(wait_for, timeout=30.0)


def info(r, section="replication"):
    return r.info(section)


def link_up(r):
    i = info(r)
    return i.get("role") == "slave" and i.get("master_link_status") == "up"


def in_sync(primary, replica):
    """The replica applied everything the primary produced."""
    if not link_up(replica):
        return False
    return info(replica)["slave_repl_offset"] == info(primary)["master_repl_offset"]


def attach(replica_srv, primary_srv):
    r = replica_srv.client()
    r.execute_command("REPLICAOF", primary_srv.host, primary_srv.port)
    wait_for(lambda: link_up(r), what="link up")
    return r


def digest(r):
    return r.execute_command("DEBUG", "DIGEST")


def settle(primary, *replicas):
    """Let short TTLs pass, have the primary expire them (its DELs reach
    the replicas), and wait until every replica applied the stream."""
    time.sleep(0.12)
    # KEYS skips an expired key without deleting it, so the short-TTL keys
    # (random_writes' "e:k<n>", db 0) are touched by name: each EXISTS on
    # the primary deletes an expired one now, rather than its active expiry
    # doing it at a random moment between the sync check and the digests.
    primary.execute_command("SELECT", 0)
    for n in range(41):
        primary.exists("e:k%d" % n)
    for rep in replicas:
        wait_for(lambda: in_sync(primary, rep), what="replica offset")


def same_digest(primary, *replicas):
    """DEBUG DIGEST equal on all, once the primary's active expiry (which
    may delete a key between two reads) has nothing left to do."""
    for _ in range(20):
        settle(primary, *replicas)
        d = digest(primary)
        if all(digest(r) == d for r in replicas) and digest(primary) == d:
            return True
        time.sleep(0.2)
    return False


LUA_WRITE = "redis.call('incr', KEYS[1]); redis.call('rpush', KEYS[2], ARGV[1]); return 1"


def random_writes(r, seed, n=400):
    """Writes of every type, with MULTI, scripts, expiries and SELECT."""
    rnd = random.Random(seed)
    r.execute_command("FUNCTION", "LOAD", "REPLACE",
                      "#!lua name=repltest\nredis.register_function('bump', "
                      "function(keys, args) return redis.call('incrby', keys[1], args[1]) end)")
    for i in range(n):
        k = "k%d" % rnd.randint(0, 40)
        op = rnd.randint(0, 17)
        if op == 0:
            r.set("s:" + k, rnd.randint(0, 1000))
        elif op == 1:
            r.append("s:" + k, "x" * rnd.randint(1, 50))
        elif op == 2:
            r.incrbyfloat("f:" + k, 1.5)
        elif op == 3:
            r.rpush("l:" + k, *[str(rnd.random()) for _ in range(rnd.randint(1, 5))])
        elif op == 4:
            r.lpop("l:" + k)
        elif op == 5:
            r.hset("h:" + k, "f%d" % rnd.randint(0, 9), rnd.random())
        elif op == 6:
            r.hincrbyfloat("h:" + k, "n", 0.25)
        elif op == 7:
            r.sadd("t:" + k, *[rnd.randint(0, 30) for _ in range(3)])
        elif op == 8:
            r.spop("t:" + k)
        elif op == 9:
            r.zadd("z:" + k, {"m%d" % rnd.randint(0, 20): rnd.random()})
        elif op == 10:
            r.zincrby("z:" + k, 2, "m1")
        elif op == 11:
            r.set("e:" + k, "short", px=rnd.randint(1, 60))
        elif op == 12:
            r.set("x:" + k, "long", ex=1000)
            r.expire("s:" + k, 500)
        elif op == 13:
            p = r.pipeline(transaction=True)
            p.incr("m:" + k)
            p.lpush("ml:" + k, "a", "b")
            p.hset("mh:" + k, "a", "b")
            p.execute()
        elif op == 14:
            r.eval(LUA_WRITE, 2, "lua:" + k, "lual:" + k, str(i))
        elif op == 15:
            r.fcall("bump", 1, "fn:" + k, 3)
        elif op == 16:
            r.execute_command("SELECT", rnd.choice([1, 2, 3]))
            r.set("other:" + k, i)
            r.execute_command("SELECT", 0)
        else:
            r.delete("s:" + k, "l:" + k)


def test_cairn_to_cairn_full_sync_then_stream(start_server):
    p_srv = start_server(**FAST)
    s_srv = start_server(**DBG)
    p = p_srv.client()
    populate(p, seed=3)
    random_writes(p, 1, 100)
    s = attach(s_srv, p_srv)
    random_writes(p, 2)
    assert same_digest(p, s)
    assert s.dbsize() == p.dbsize()
    assert s.execute_command("FUNCTION", "LIST") == p.execute_command("FUNCTION", "LIST")


def test_cairn_primary_redis_replica(start_server, start_oracle):
    p_srv = start_server(**FAST)
    o_srv = start_oracle(**DBG)
    p = p_srv.client()
    populate(p, seed=4)
    o = attach(o_srv, p_srv)
    random_writes(p, 5)
    assert same_digest(p, o)
    assert p.info("stats")["sync_full"] == 1


def test_redis_primary_cairn_replica(start_server, start_oracle):
    o_srv = start_oracle(**ORACLE_DBG)
    s_srv = start_server(**DBG)
    o = o_srv.client()
    populate(o, seed=6)
    s = attach(s_srv, o_srv)
    random_writes(o, 7)
    assert same_digest(o, s)


@pytest.mark.parametrize("primary_kind", ["cairn", "redis"])
def test_disk_sync(start_server, start_oracle, primary_kind):
    """repl-diskless-sync no: the RDB goes through dbfilename, "$<len>"."""
    start = start_server if primary_kind == "cairn" else start_oracle
    p_srv = start(**{"repl-diskless-sync": "no", **DBG})
    s_srv = start_server(**DBG) if primary_kind == "redis" else start_oracle(**DBG)
    p = p_srv.client()
    populate(p, seed=8)
    s = attach(s_srv, p_srv)
    random_writes(p, 9, 150)
    assert same_digest(p, s)
    assert os.path.exists(os.path.join(p_srv.tmp, "dump.rdb"))


def test_chain_forwards_the_stream_unchanged(start_server, start_oracle):
    """redis -> cairn -> cairn -> redis: offsets and digests equal."""
    top = start_oracle(**ORACLE_DBG)
    mid = start_server(**FAST)
    low = start_server(**FAST)
    bottom = start_oracle(**DBG)
    t = top.client()
    populate(t, seed=10)
    m = attach(mid, top)
    lo = attach(low, mid)
    b = attach(bottom, low)
    random_writes(t, 11)
    for _ in range(20):
        settle(t, m)
        wait_for(lambda: in_sync(m, lo) and in_sync(lo, b), what="chain in sync")
        d = digest(t)
        if digest(m) == d and digest(lo) == d and digest(b) == d and digest(t) == d:
            break
        time.sleep(0.2)
    assert digest(m) == d and digest(lo) == d and digest(b) == d
    assert info(lo)["master_repl_offset"] == info(t)["master_repl_offset"]
    assert info(lo)["master_replid"] == info(t)["master_replid"]


@pytest.mark.parametrize("pair", ["cairn-cairn", "cairn-redis", "redis-cairn"])
def test_cut_link_continues_partially(start_server, start_oracle, pair):
    kinds = pair.split("-")
    p_srv = (start_server if kinds[0] == "cairn" else start_oracle)(**FAST)
    s_srv = (start_server if kinds[1] == "cairn" else start_oracle)(**DBG)
    p = p_srv.client()
    populate(p, seed=12, functions=False)
    s = attach(s_srv, p_srv)
    random_writes(p, 13, 100)
    settle(p, s)
    assert p.info("stats")["sync_partial_ok"] == 0
    s.execute_command("CLIENT", "KILL", "TYPE", "master")
    random_writes(p, 14, 100)  # while the link is down (or coming back)
    wait_for(lambda: p.info("stats")["sync_partial_ok"] == 1, what="+CONTINUE")
    assert p.info("stats")["sync_full"] == 1
    assert same_digest(p, s)


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_full_sync_killed_midway_is_retried(start_server, diskless):
    p_srv = start_server(**{"repl-diskless-sync": diskless, "rdb-key-save-delay": "200", **FAST})
    s_srv = start_server(**DBG)
    p = p_srv.client()
    pipe = p.pipeline(transaction=False)
    for i in range(3000):
        pipe.set("key:%d" % i, "v" * 20)
    pipe.execute()
    s = s_srv.client()
    s.execute_command("REPLICAOF", p_srv.host, p_srv.port)
    wait_for(lambda: info(s)["master_sync_in_progress"] == 1 or
             any(c.get("flags") == "S" for c in p.client_list()), what="sync started")
    time.sleep(0.2)
    killed = p.execute_command("CLIENT", "KILL", "TYPE", "replica")
    assert killed >= 1
    p.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: link_up(s), what="retried sync")
    assert same_digest(p, s)
    assert p.info("stats")["sync_full"] >= 2
    assert p_srv.alive() and s_srv.alive()


def test_promoted_replica_lets_sibling_continue(start_server):
    """PSYNC2: after a failover the other replica continues partially."""
    p_srv = start_server(**FAST)
    a_srv = start_server(**FAST)
    b_srv = start_server(**FAST)
    p = p_srv.client()
    populate(p, seed=15, functions=False)
    a = attach(a_srv, p_srv)
    b = attach(b_srv, p_srv)
    random_writes(p, 16, 100)
    settle(p, a, b)
    old_id = info(p)["master_replid"]
    a.execute_command("REPLICAOF", "NO", "ONE")
    ia = info(a)
    assert ia["role"] == "master" and ia["master_replid2"] == old_id
    assert ia["second_repl_offset"] == ia["master_repl_offset"] + 1
    b.execute_command("REPLICAOF", a_srv.host, a_srv.port)
    wait_for(lambda: link_up(b), what="sibling link")
    assert a.info("stats")["sync_partial_ok"] == 1 and a.info("stats")["sync_full"] == 0
    random_writes(a, 17, 50)
    assert same_digest(a, b)
    assert info(b)["master_replid"] == info(a)["master_replid"]


def test_replica_restarted_from_its_rdb_continues_partially(start_server):
    """The replica's dump.rdb records repl-id and repl-offset: restarted
    with replicaof, it asks PSYNC from there and gets +CONTINUE."""
    p_srv = start_server(**FAST)
    s_srv = start_server(**DBG)
    p = p_srv.client()
    populate(p, seed=18, functions=False)
    s = attach(s_srv, p_srv)
    random_writes(p, 19, 100)
    settle(p, s)
    s.execute_command("SAVE")
    random_writes(p, 20, 50)
    s_srv.stop()
    s2_srv = start_server(dir=s_srv.tmp, args=["--replicaof", p_srv.host, str(p_srv.port)], **DBG)
    s2 = s2_srv.client()
    wait_for(lambda: link_up(s2), what="link up after restart")
    assert p.info("stats")["sync_partial_ok"] == 1
    assert p.info("stats")["sync_full"] == 1
    assert same_digest(p, s2)


def test_replica_rules_match_redis(start_server, start_oracle):
    """READONLY, MASTERDOWN, ROLE and REPLICAOF replies, as redis-server."""
    out = []
    for start in (start_server, start_oracle):
        srv = start()
        r = srv.client()
        res = [r.execute_command("REPLICAOF", "127.0.0.1", "1")]
        res.append(r.execute_command("REPLICAOF", "127.0.0.1", "1"))
        for args in (("REPLICAOF", "127.0.0.1", "x"), ("REPLICAOF", "127.0.0.1", "70000"),
                     ("SET", "a", "b")):
            with pytest.raises(redis.ResponseError) as e:
                r.execute_command(*args)
            res.append(str(e.value))
        res.append(r.get("a"))
        for script in ("return redis.call('set', 'a', 'b')", "#!lua\nreturn redis.call('set', 'a', 'b')",
                       "#!lua flags=no-writes\nreturn redis.call('get', 'a')"):
            try:
                res.append(r.eval(script, 0))
            except redis.ResponseError as e:
                res.append(str(e).split(" script:")[0])
        r.config_set("replica-serve-stale-data", "no")
        with pytest.raises(redis.ResponseError) as e:
            r.get("a")
        res.append(str(e.value))
        try:
            res.append(r.execute_command("PING"))
        except redis.ResponseError as e:
            res.append(str(e))
        res.append(r.config_get("replicaof"))
        role = r.execute_command("ROLE")
        res.append(role[:3])
        i = info(r)
        res.append(sorted(i))
        res.append(r.execute_command("REPLICAOF", "NO", "ONE"))
        i = info(r)
        res.append((i["role"], i["second_repl_offset"], i["master_replid2"] != "0" * 40))
        res.append(r.execute_command("ROLE"))
        res.append(r.execute_command("WAIT", 0, 0))
        out.append(res)
    assert out[0] == out[1]


def test_replica_keeps_expired_keys_until_primary_deletes(start_server):
    p_srv = start_server(**FAST)
    s_srv = start_server(**DBG)
    p = p_srv.client()
    s = attach(s_srv, p_srv)
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p.set("gone", "v", px=50)
    wait_for(lambda: in_sync(p, s), what="sync")
    time.sleep(0.1)
    assert s.get("gone") is None              # logically expired: absent to clients
    assert s.execute_command("DBSIZE") == 1   # ... but not deleted by the replica
    assert p.get("gone") is None              # the primary expires it: DEL follows
    wait_for(lambda: s.execute_command("DBSIZE") == 0, what="DEL applied")


def test_wait_and_min_replicas(start_server):
    p_srv = start_server(**FAST)
    s_srv = start_server(**DBG)
    p = p_srv.client()
    assert p.execute_command("WAIT", 1, 50) == 0
    s = attach(s_srv, p_srv)
    p.set("a", 1)
    assert p.execute_command("WAIT", 1, 5000) == 1
    with pytest.raises(redis.ResponseError, match="WAIT cannot be used with replica"):
        s.execute_command("WAIT", 1, 10)
    p.config_set("min-replicas-to-write", 2)
    with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
        p.set("b", 1)
    assert p.get("a") == b"1"
    p.config_set("min-replicas-to-write", 1)
    wait_for(lambda: p.set("b", 1), what="good replica")
    s.execute_command("REPLICAOF", "NO", "ONE")
    wait_for(lambda: info(p)["connected_slaves"] == 0, what="replica gone")
    with pytest.raises(redis.ResponseError, match="Not enough good replicas"):
        p.set("c", 1)


def test_info_replication_fields_match_redis(start_server, start_oracle):
    """The field names of INFO replication on a primary with one replica and
    on that replica, as redis-server prints them."""
    names = []
    for start in (start_server, start_oracle):
        p_srv = start(**FAST)
        s_srv = start(**DBG)
        p = p_srv.client()
        s = attach(s_srv, p_srv)
        p.set("x", 1)
        wait_for(lambda: in_sync(p, s), what="sync")
        names.append((list(info(p)), list(info(s)), s.execute_command("ROLE")[3],
                      [x[:2] for x in p.execute_command("ROLE")[2]] and p.execute_command("ROLE")[0]))
        s0 = info(p)["slave0"]
        assert (s0["ip"], s0["port"], s0["state"]) == ("127.0.0.1", s_srv.port, "online")
        kinds = {c["flags"] for c in s.client_list()}
        assert "M" in kinds
        assert "S" in {c["flags"] for c in p.client_list()}
    assert names[0] == names[1]


def test_failover_errors_match_redis(start_server, start_oracle):
    out = []
    for start in (start_server, start_oracle):
        srv = start()
        r = srv.client()
        res = []
        for args in (("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "FORCE"),
                     ("FAILOVER", "TIMEOUT", "0"), ("FAILOVER", "TO", "127.0.0.1", "x"),
                     ("FAILOVER", "BOGUS"), ("FAILOVER", "TO", "127.0.0.1", "1", "FORCE"),
                     ("FAILOVER", "TO", "127.0.0.1", "1"), ("FAILOVER", "TO", "127.0.0.1", "1", "ABORT")):
            try:
                res.append(r.execute_command(*args))
            except redis.ResponseError as e:
                res.append(str(e))
        r.execute_command("REPLICAOF", "127.0.0.1", "1")
        for args in (("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "FORCE")):
            try:
                res.append(r.execute_command(*args))
            except redis.ResponseError as e:
                res.append(str(e))
        out.append(res)
    assert out[0] == out[1]


@pytest.mark.parametrize("pair", ["cairn-cairn", "cairn-redis", "redis-cairn"])
def test_failover_hands_the_role_to_a_replica(start_server, start_oracle, pair):
    kinds = pair.split("-")
    p_srv = (start_server if kinds[0] == "cairn" else start_oracle)(**FAST)
    s_srv = (start_server if kinds[1] == "cairn" else start_oracle)(**FAST)
    p = p_srv.client()
    populate(p, seed=21, functions=False)
    s = attach(s_srv, p_srv)
    random_writes(p, 22, 100)
    settle(p, s)
    assert p.execute_command("FAILOVER", "TO", s_srv.host, s_srv.port, "TIMEOUT", 10000) == b"OK"
    wait_for(lambda: info(s)["role"] == "master" and link_up(p), what="roles swapped")
    wait_for(lambda: info(p)["master_failover_state"] == "no-failover", what="failover state cleared")
    assert info(p)["master_port"] == s_srv.port
    assert s.info("stats")["sync_partial_ok"] == 1
    with pytest.raises(redis.ReadOnlyError):
        p.set("after", 1)
    s.set("after", 1)
    assert same_digest(s, p)
