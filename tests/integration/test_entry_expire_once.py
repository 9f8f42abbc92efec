"""Every path that creates a key entry and gives it an expire at once builds
the entry with the expire in it from the start (no second block and move):
RDB load (file, threaded, diskless replica), RESTORE, a string value
rebuilt under a kept TTL (INCR, INCRBYFLOAT, APPEND, SETRANGE, SETBIT,
PFADD, SET KEEPTTL), RENAME, COPY, MOVE.  What users see must not change:
each key's type, OBJECT ENCODING, PEXPIRETIME and digest are compared with
redis-server 7.0.15's, and survive a reload.  No timing assertions: the
one test that needs a key to be past its expire polls the server clock."""
import os

from compare import replies as run
from test_aof import wait_for
from test_rdb import start_with_file

FAR_MS = 4102444800000          # 2100-01-01: absolute expires print the same on both
DBG = {"enable-debug-command": "yes"}
LONG = "L" * 300                # a key length stored in 4 bytes


def dataset():
    """Commands making one key of every type and encoding, each with an
    absolute expire (distinct per key), plus a few without, and long-named
    twins of the small ones."""
    cmds = []
    keys = []

    def add(key, *cmd):
        cmds.append(list(cmd))
        keys.append(key)

    for pre in ("", LONG):
        add(pre + "int", "SET", pre + "int", "12345")
        add(pre + "emb", "SET", pre + "emb", "hello world")
        add(pre + "raw", "SET", pre + "raw", "r" * 60)
        add(pre + "lzf", "SET", pre + "lzf", "abc" * 400)
        add(pre + "list", "RPUSH", pre + "list", "a", "1", "-5", "x" * 30)
        add(pre + "hash", "HSET", pre + "hash", "f1", "v1", "f2", "2")
        add(pre + "iset", "SADD", pre + "iset", "1", "2", "-3")
        add(pre + "sset", "SADD", pre + "sset", "a", "b", "c")
        add(pre + "zset", "ZADD", pre + "zset", "1", "a", "2.5", "b")
    add("biglist", "RPUSH", "biglist", *[str(i) if i % 3 else "e%d" % i for i in range(3000)])
    add("bighash", "HSET", "bighash", *[x for i in range(300) for x in ("f%d" % i, "v%d" % i)])
    add("longhash", "HSET", "longhash", "a", "b", "long", "L" * 100)
    add("bigiset", "SADD", "bigiset", *[str(i) for i in range(700)])
    add("bigsset", "SADD", "bigsset", *["m%d" % i for i in range(200)])
    add("bigzset", "ZADD", "bigzset", *[x for i in range(200) for x in (str(i / 7), "m%d" % i)])
    add("stream", "XADD", "stream", "1-1", "f", "v")
    cmds.append(["XADD", "stream", "2-1", "g", "w"])
    cmds.append(["XGROUP", "CREATE", "stream", "grp", "0"])
    cmds.append(["XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "stream", ">"])
    # Incompressible strings: the file passes the threaded loader's minimum.
    for i in range(80):
        add("blob%d" % i, "SET", "blob%d" % i, os.urandom(4000))
    for i, k in enumerate(keys):
        cmds.append(["PEXPIREAT", k, str(FAR_MS + 1000 * i)])
    cmds += [["SET", "plain", "no ttl"], ["RPUSH", "plainlist", "x"], ["HSET", "plainhash", "f", "v"]]
    return cmds


def snapshot(r, dbs=(0,)):
    """{(db, key): (type, encoding, pexpiretime, digest)} and each db's
    INFO keyspace expires count."""
    out = {}
    for db in dbs:
        r.execute_command("SELECT", db)
        for key in r.keys("*"):
            out[(db, key)] = (r.type(key), r.object("encoding", key), r.execute_command("PEXPIRETIME", key),
                              r.execute_command("DEBUG", "DIGEST-VALUE", key))
        ks = r.info("keyspace").get("db%d" % db)
        out[("expires", db)] = ks["expires"] if ks else 0
    r.execute_command("SELECT", 0)
    return out


def same(a, b):
    bad = sorted(set(k for k in set(a) | set(b) if a.get(k) != b.get(k)), key=repr)
    assert not bad, "%d differ, first: %r" % (len(bad), [(k, a.get(k), b.get(k)) for k in bad[:3]])


def reload_both(*clients):
    """A save and load of each (a loaded string may change encoding: raw
    to embstr, as in Redis)."""
    for c in clients:
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"


def test_rdb_load_keeps_ttls_of_every_type(start_server, start_oracle):
    cmds = dataset()
    s, o = start_server(**DBG), start_oracle(**DBG)
    r, ro = s.client(), o.client()
    assert run(r, cmds) == run(ro, cmds)
    want = snapshot(ro)
    assert want[("expires", 0)] > 100
    same(snapshot(r), want)
    reload_both(r, ro)
    want = snapshot(ro)
    same(snapshot(r), want)
    assert r.execute_command("DEBUG", "DIGEST") == ro.execute_command("DEBUG", "DIGEST")
    # Redis's file, loaded by one thread and by several; Cairn's by Redis.
    assert ro.save() and r.save()
    for threads in (0, 3):
        s2, _ = start_with_file(start_server, os.path.join(o.tmp, "dump.rdb"),
                                **{"rdb-load-threads": threads}, **DBG)
        same(snapshot(s2.client()), want)
    o2, _ = start_with_file(start_oracle, os.path.join(s.tmp, "dump.rdb"), **DBG)
    same(snapshot(o2.client()), want)


def test_diskless_replica_load_keeps_ttls(start_server, start_oracle):
    """A replica loading the primary's snapshot as it streams in
    (rdbStreamFeed), into an empty db and aside (swapdb)."""
    cmds = dataset()
    o = start_oracle(**{"repl-diskless-sync": "yes", "repl-diskless-sync-delay": 0}, **DBG)
    ro = o.client()
    run(ro, cmds)
    want = snapshot(ro)
    for mode in ("on-empty-db", "swapdb"):
        s = start_server(**{"repl-diskless-load": mode}, **DBG)
        r = s.client()
        r.execute_command("REPLICAOF", o.host, o.port)
        wait_for(lambda: r.info("replication").get("master_link_status") == "up"
                 and r.dbsize() == ro.dbsize(), what="sync")
        same(snapshot(r), want)


def test_restore_with_ttls_every_type(start_server, start_oracle):
    cmds = dataset()
    s, o = start_server(**DBG), start_oracle(**DBG)
    r, ro = s.client(), o.client()
    assert run(r, cmds) == run(ro, cmds)
    keys = sorted(ro.keys("*"))
    dumps = {k: ro.dump(k) for k in keys}
    restore = []
    for i, k in enumerate(keys):
        d = dumps[k]
        at = str(FAR_MS + 7 * i)
        restore += [["RESTORE", b"abs:" + k, at, d, "ABSTTL"],
                    ["RESTORE", b"none:" + k, "0", d],
                    ["RESTORE", b"idle:" + k, at, d, "ABSTTL", "IDLETIME", "1000"],
                    ["RESTORE", b"freq:" + k, at, d, "ABSTTL", "FREQ", "7"],
                    ["RESTORE", b"abs:" + k, at, d, "ABSTTL"],            # BUSYKEY
                    ["RESTORE", b"abs:" + k, str(FAR_MS + 3), d, "ABSTTL", "REPLACE"],  # TTL over TTL
                    ["RESTORE", b"none:" + k, at, d, "ABSTTL", "REPLACE"],  # TTL over none
                    ["RESTORE", b"idle:" + k, "0", d, "REPLACE"],           # none over TTL
                    ["RESTORE", b"past:" + k, "1000", d, "ABSTTL"],         # already expired: not created
                    ["RESTORE", b"freq:" + k, "1000", d, "ABSTTL", "REPLACE"],  # ... and deletes the old
                    ["EXISTS", b"past:" + k, b"freq:" + k]]
    restore += [["RESTORE", "rel", "100000000", dumps[b"hash"]], ["RESTORE", "rel2", "100000000", dumps[b"int"]]]
    assert run(r, restore) == run(ro, restore)
    for srv in (r, ro):  # relative TTLs differ by the ms between the servers
        for k in ("rel", "rel2"):
            assert 0 < srv.pttl(k) <= 100000000
            srv.persist(k)
    want = snapshot(ro)
    same(snapshot(r), want)
    reload_both(r, ro)
    same(snapshot(r), snapshot(ro))


def test_rebuilt_strings_keep_their_ttl(start_server, start_oracle):
    """INCR and friends, APPEND, SETRANGE, SETBIT, PFADD and SET KEEPTTL on
    keys with a TTL whose value must be rebuilt (embstr or int to raw, a
    numeric embstr or raw back to int, ...)."""
    cmds = []
    vals = ["5", "12345", "hello", "1.5", "r" * 50, "9" * 30]
    ops = [["INCR"], ["DECR"], ["INCRBY", "7"], ["DECRBY", "3"], ["INCRBYFLOAT", "1.25"],
           ["INCRBYFLOAT", "1e30"], ["APPEND", "1"], ["SETRANGE", "0", "7"], ["SETRANGE", "60", "z"],
           ["SETBIT", "3", "1"], ["SETBIT", "500", "1"], ["SET", "v2", "KEEPTTL"], ["SET", "42", "KEEPTTL"],
           ["SET", "k" * 60, "KEEPTTL"], ["SET", "v3", "XX", "KEEPTTL", "GET"], ["SET", "v4", "NX", "KEEPTTL"],
           ["SET", "v5", "KEEPTTL", "GET"], ["GETEX", "PERSIST"], ["GETEX", "PXAT", str(FAR_MS + 5)]]
    n = 0
    for pre in ("", LONG):
        for v in vals:
            for op in ops:
                k = "%s%d" % (pre, n)
                n += 1
                cmds += [["SET", k, v, "PXAT", str(FAR_MS + n)], [op[0], k] + op[1:],
                         ["PEXPIRETIME", k], ["OBJECT", "ENCODING", k], ["GET", k]]
                # A value rebuilt to int, then rebuilt again.
                cmds += [["APPEND", k, "0"], ["INCR", k], ["INCRBYFLOAT", k, "2"], ["INCR", k],
                         ["PEXPIRETIME", k], ["OBJECT", "ENCODING", k], ["GET", k]]
    cmds += [["SET", "hll", "x", "PXAT", str(FAR_MS)], ["DEL", "hll"], ["PFADD", "hll", "a"],
             ["PEXPIREAT", "hll", str(FAR_MS + 1)], ["PFADD", "hll", "b", "c"], ["PFCOUNT", "hll"],
             ["PEXPIRETIME", "hll"], ["SET", "nottl", "5"], ["INCRBYFLOAT", "nottl", "1"], ["INCR", "nottl"],
             ["PEXPIRETIME", "nottl"], ["INCR", "fresh"], ["PEXPIRETIME", "fresh"],
             ["SET", "kt", "1", "KEEPTTL"], ["SET", "kt", "2", "XX", "KEEPTTL"], ["SET", "kt2", "1", "NX", "KEEPTTL"],
             ["PEXPIRETIME", "kt"], ["PEXPIRETIME", "kt2"]]
    s, o = start_server(**DBG), start_oracle(**DBG)
    r, ro = s.client(), o.client()
    got, exp = run(r, cmds), run(ro, cmds)
    bad = [(c, a, b) for c, a, b in zip(cmds, got, exp) if a != b]
    assert not bad, "%d mismatches, first: %r" % (len(bad), bad[:5])
    want = snapshot(ro)
    same(snapshot(r), want)
    reload_both(r, ro)
    same(snapshot(r), snapshot(ro))


def test_rename_copy_move_keep_ttls(start_server, start_oracle):
    base = dataset()
    keys = [c[1] for c in base if c[0] == "PEXPIREAT"]
    cmds = list(base)
    for i, k in enumerate(keys):
        if i % 5 == 0:
            cmds += [["RENAME", k, "ren:" + k], ["PEXPIRETIME", "ren:" + k]]
        elif i % 5 == 1:
            cmds += [["RENAMENX", k, "rnx:" + k], ["COPY", "rnx:" + k, "cp:" + k], ["PEXPIRETIME", "cp:" + k]]
        elif i % 5 == 2:
            cmds += [["COPY", k, k, "DB", "1"], ["COPY", k, "plain", "REPLACE"], ["PEXPIRETIME", "plain"],
                     ["SET", "plain", "no ttl"]]
        elif i % 5 == 3:
            cmds += [["MOVE", k, "2"], ["EXISTS", k]]
        else:
            cmds += [["SET", "over", "x", "PXAT", str(FAR_MS + 1)], ["RENAME", k, "over"],
                     ["PEXPIRETIME", "over"], ["RENAME", "over", k]]
    s, o = start_server(**DBG), start_oracle(**DBG)
    r, ro = s.client(), o.client()
    got, exp = run(r, cmds), run(ro, cmds)
    bad = [(c, a, b) for c, a, b in zip(cmds, got, exp) if a != b]
    assert not bad, "%d mismatches, first: %r" % (len(bad), bad[:5])
    want = snapshot(ro, dbs=(0, 1, 2))
    same(snapshot(r, dbs=(0, 1, 2)), want)
    reload_both(r, ro)
    same(snapshot(r, dbs=(0, 1, 2)), snapshot(ro, dbs=(0, 1, 2)))


def test_expired_at_load_dropped_on_primary_kept_on_replica(start_server, start_oracle):
    o = start_oracle(**DBG)
    ro = o.client()
    ro.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    now_ms = lambda: (lambda t: int(t[0]) * 1000 + int(t[1]) // 1000)(ro.time())
    at = now_ms() + 200
    for k, cmd in (("s", ["SET", "s", "v"]), ("i", ["SET", "i", "7"]), ("l", ["RPUSH", "l", "a"]),
                   ("h", ["HSET", "h", "f", "v"]), ("z", ["ZADD", "z", "1", "m"])):
        ro.execute_command(*cmd)
        ro.execute_command("PEXPIREAT", k, at)
    ro.set("keep", "1")
    ro.execute_command("PEXPIREAT", "keep", FAR_MS)
    wait_for(lambda: now_ms() > at + 5, what="the expires to pass")
    assert ro.save()
    path = os.path.join(o.tmp, "dump.rdb")
    counts = []
    for start in (start_server, start_oracle):
        p, _ = start_with_file(start, path)
        counts.append(("primary", p.client().dbsize(), p.client().info("keyspace")["db0"]["expires"]))
        # A replica of a primary that is not there keeps every key.
        rp, _ = start_with_file(start, path, replicaof="127.0.0.1 1")
        ks = rp.client().info("keyspace")["db0"]
        counts.append(("replica", ks["keys"], ks["expires"]))
    assert counts[:2] == counts[2:]
    assert counts[0] == ("primary", 1, 1) and counts[1] == ("replica", 6, 6)
