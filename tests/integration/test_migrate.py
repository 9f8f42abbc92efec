"""MIGRATE between Cairn and Cairn, from Cairn to redis-server 7.0.15 and
back: every type and encoding moves with its TTL (and is deleted at the
source unless COPY), REPLACE, AUTH/AUTH2, KEYS, NOKEY, the errors of
Redis (syntax, KEYS with a key, target errors, IOERR on connect and on a
silent target), the cached connection (reused, and re-opened once when
the target closed it), and the key finder against COMMAND GETKEYS."""
import socket
import threading

import pytest
import redis

from rdbhelp import populate, snapshot

DBG = {"enable-debug-command": "yes"}


def norm(snap):
    """A snapshot with expire times rounded (a MIGRATE sends a TTL)."""
    out = {}
    for k, v in snap.items():
        if k == "functions":
            continue
        typ, enc, val, exp = v
        out[k] = (typ, enc, val, exp if exp < 0 else exp // 100000)
    return out


def keys_of(r):
    return sorted(r.keys("*"))


@pytest.mark.parametrize("src_kind,dst_kind", [("cairn", "cairn"), ("cairn", "redis"), ("redis", "cairn")])
def test_migrate_every_type(start_server, start_oracle, src_kind, dst_kind):
    start = {"cairn": start_server, "redis": start_oracle}
    src, dst = start[src_kind](**DBG), start[dst_kind](**DBG)
    rs, rd = src.client(), dst.client()
    populate(rs, seed=5, dbs=(0,), functions=False)
    want = norm(snapshot(rs, dbs=[0]))
    digests = {k: rs.execute_command("DEBUG", "DIGEST-VALUE", k) for k in keys_of(rs)}
    keys = keys_of(rs)
    # COPY keeps the source; then a move with REPLACE over the copies.
    assert rs.execute_command("MIGRATE", dst.host, dst.port, "", 3, 5000, "COPY", "KEYS", *keys) == b"OK"
    assert keys_of(rs) == keys
    assert rs.execute_command("MIGRATE", dst.host, dst.port, "", 3, 5000, "REPLACE", "KEYS", *keys) == b"OK"
    assert keys_of(rs) == []
    rd.execute_command("SELECT", 3)
    got = norm({(0, k[1]): v for k, v in snapshot(rd, dbs=[3]).items() if k != "functions"})
    assert got == want
    rd.execute_command("SELECT", 3)
    for k, d in digests.items():
        assert rd.execute_command("DEBUG", "DIGEST-VALUE", k) == d


def both(cmds, src_c, src_r, targets=None):
    """Runs each command on the Cairn and the Redis source (each with its
    own target when targets gives two (host, port): "H" and "P" in a
    command stand for them); the replies (or error texts) must match."""
    out = []
    for args in cmds:
        res = []
        for i, r in enumerate((src_c, src_r)):
            sent = args
            if targets:
                sent = tuple(targets[i][0] if a == "H" else targets[i][1] if a == "P" else a
                             for a in args)
            try:
                res.append(("ok", r.execute_command(*sent)))
            except redis.ResponseError as e:
                res.append(("err", str(e)))
        assert res[0] == res[1], args
        out.append(res[0])
    return out


def test_replies_and_errors_like_redis(start_server, start_oracle):
    tgts = [start_oracle(requirepass="pw"), start_oracle(requirepass="pw")]
    c, o = start_server().client(), start_oracle().client()
    h, p = "H", "P"
    for r in (c, o):
        r.set("a", "1")
        r.set("b", "2")
        r.set("e", "3")
        r.expire("e", 1000)
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()
    got = both([
        ("MIGRATE", h, p, "missing", 0, 1000),
        ("MIGRATE", h, p, "", 0, 1000, "KEYS", "nope1", "nope2"),
        ("MIGRATE", h, p, "a", 0, 1000, "KEYS", "b"),
        ("MIGRATE", h, p, "a", 0, 1000, "BOGUS"),
        ("MIGRATE", h, p, "a", 0, 1000, "AUTH"),
        ("MIGRATE", h, p, "a", 0, 1000, "AUTH2", "u"),
        ("MIGRATE", h, p, "a", 0, "x"),
        ("MIGRATE", h, p, "a", "x", 1000),
        ("MIGRATE", h, p, "a", 0, 1000),
        ("MIGRATE", h, p, "a", 0, 1000, "AUTH", "bad"),
        ("MIGRATE", h, p, "a", 0, 1000, "AUTH2", "default", "bad"),
        ("MIGRATE", h, p, "a", 0, 1000, "COPY", "AUTH", "pw"),
        ("MIGRATE", h, p, "a", 0, 1000, "COPY", "AUTH", "pw"),
        ("MIGRATE", h, p, "", 0, 1000, "REPLACE", "AUTH2", "default", "pw", "KEYS", "a", "b", "e"),
        ("EXISTS", "a", "b", "e"),
        ("MIGRATE", h, p, "b", 0, 1000, "AUTH", "pw"),
        ("SET", "z", "1"),
        ("MIGRATE", "127.0.0.1", dead_port, "z", 0, 200),
    ], c, o, [(t.host, t.port) for t in tgts])
    assert got[0] == ("ok", b"NOKEY")
    # As in Redis, a refused connection shows when writing.
    assert got[-1] == ("err", "IOERR error or timeout writing to target instance")
    assert got[-4] == ("ok", 0)
    for tgt in tgts:
        t = tgt.client(password="pw")
        assert t.get("a") == b"1" and 0 < t.ttl("e") <= 1000


def test_many_keys_with_target_errors_like_redis(start_server, start_oracle):
    """MIGRATE KEYS of 3000 keys whose replies span many reads of the
    source (the replies are read in blocks): the target already holds
    every 500th key (BUSYKEY without REPLACE), so error replies sit among
    the +OKs -- the first error is the reply, and, as in Redis, the keys
    the target accepted (before and after an error) go from the source
    and the refused ones stay; then a REPLACE moves the rest.  Cairn and
    redis-server as sources, each to its own Redis target, must agree."""
    tgts = [start_oracle(), start_oracle()]
    c, o = start_server().client(), start_oracle().client()
    keys = ["k:%05d" % i for i in range(3000)]
    busy = keys[::500]
    for r in (c, o):
        p = r.pipeline(transaction=False)
        for k in keys:
            p.set(k, k * 3)
        p.execute()
    for t in tgts:
        for k in busy:
            t.client().set(k, "old")
    got = both([
        ("MIGRATE", "H", "P", "", 0, 5000, "KEYS", *keys),
        ("DBSIZE",),
        ("EXISTS", *busy),
        ("MIGRATE", "H", "P", "", 0, 5000, "REPLACE", "KEYS", *keys),
        ("DBSIZE",),
    ], c, o, [(t.host, t.port) for t in tgts])
    assert got[0][0] == "err" and "BUSYKEY" in got[0][1], got[0]
    assert got[1] == ("ok", len(busy)) and got[2] == ("ok", len(busy))
    assert got[3] == ("ok", b"OK") and got[4] == ("ok", 0)
    for t in tgts:
        tc = t.client()
        assert tc.dbsize() == 3000
        assert tc.mget(keys) == [(k * 3).encode() for k in keys]


def test_silent_target_times_out(start_server, start_oracle):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    conns = []
    stop = threading.Event()

    def accept():
        lsock.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(lsock.accept()[0])
            except OSError:
                pass
    th = threading.Thread(target=accept, daemon=True)
    th.start()
    try:
        c, o = start_server().client(), start_oracle().client()
        for r in (c, o):
            r.set("k", "v")
        got = both([("MIGRATE", "127.0.0.1", lsock.getsockname()[1], "k", 0, 300)], c, o)
        assert got == [("err", "IOERR error or timeout reading to target instance")]
        assert c.get("k") == b"v"
    finally:
        stop.set()
        th.join()
        for s in conns:
            s.close()
        lsock.close()


def migrate_clients(t):
    return [x for x in t.client_list() if x.get("cmd") in ("restore", "select")]


def test_cached_connection_reused_and_reopened(start_server):
    src, dst = start_server(), start_server()
    s, t = src.client(), dst.client()
    for i in range(3):
        s.set("k%d" % i, i)
    assert s.execute_command("MIGRATE", dst.host, dst.port, "k0", 0, 1000) == b"OK"
    assert s.execute_command("MIGRATE", dst.host, dst.port, "k1", 0, 1000) == b"OK"
    conns = migrate_clients(t)
    assert len(conns) == 1
    # The target drops it: the next MIGRATE reconnects and succeeds.
    t.client_kill_filter(_id=conns[0]["id"])
    assert s.execute_command("MIGRATE", dst.host, dst.port, "k2", 0, 1000) == b"OK"
    assert sorted(t.keys("*")) == [b"k0", b"k1", b"k2"]
    assert len(migrate_clients(t)) == 1


@pytest.mark.parametrize("args", [
    ("h", "p", "k", "0", "5"),
    ("h", "p", "", "0", "5", "KEYS", "a", "b"),
    ("h", "p", "", "0", "5", "COPY", "REPLACE", "AUTH", "keys", "KEYS", "x"),
    ("h", "p", "", "0", "5", "AUTH2", "keys", "keys", "KEYS", "x", "y", "z"),
    ("h", "p", "k", "0", "5", "KEYS", "a"),
])
def test_key_finder_like_redis(server, oracle, args):
    res = []
    for r in (server.client(), oracle.client()):
        r.set_response_callback("COMMAND", lambda x, **kw: x)
        try:
            res.append(r.execute_command("COMMAND", "GETKEYSANDFLAGS", "MIGRATE", *args))
        except redis.ResponseError as e:
            res.append(str(e))
    assert res[0] == res[1]
