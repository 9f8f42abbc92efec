"""SET with an expire builds its entry with the expire in it from the start
(no second block): every value encoding, every way a key gets or loses a
TTL around such an entry, the TTL index behind active expiry, and RDB/AOF
round trips.  Differential against redis-server 7.0.15 (replies and DEBUG
DIGEST); no timing assertions (expiry is waited for by polling)."""
import time

import pytest

import compare

FAR_SEC = 4102444800            # 2100-01-01: absolute expires print the same on both
FAR_MS = FAR_SEC * 1000
DBG = {"enable-debug-command": "yes"}

LONGKEY = "L" * 300             # a key length stored in 4 bytes
VALUES = ["12345", "-7", "x" * 10, "y" * 44, "z" * 45, "w" * 1000]


def build_cmds():
    """Keys made by every expire form of SET/SETEX/PSETEX over every value
    encoding, then overwritten, kept, persisted and changed in place."""
    cmds = []
    forms = [["EX", "100000"], ["PX", "100000000"], ["EXAT", str(FAR_SEC)], ["PXAT", str(FAR_MS + 7)]]
    for i, v in enumerate(VALUES):
        for j, f in enumerate(forms):
            for key in ("k%d_%d" % (i, j), LONGKEY + "%d_%d" % (i, j)):
                cmds.append(["SET", key, v] + f)
                cmds.append(["OBJECT", "ENCODING", key])
        cmds.append(["SETEX", "sx%d" % i, "100000", v])
        cmds.append(["PSETEX", "psx%d" % i, "100000000", v])
        cmds.append(["SET", "g%d" % i, "old", "GET", "PXAT", str(FAR_MS + i)])
        cmds.append(["SET", "g%d" % i, v, "GET", "EXAT", str(FAR_SEC + i)])
    for i, v in enumerate(VALUES):
        k = "k%d_2" % i
        # TTL over TTL (the index slot is reused), then KEEPTTL, then none.
        cmds += [["SET", k, v + "a", "PXAT", str(FAR_MS + 100 + i)], ["PEXPIRETIME", k],
                 ["SET", k, v, "KEEPTTL"], ["PEXPIRETIME", k], ["OBJECT", "ENCODING", k],
                 ["SET", k, v], ["PEXPIRETIME", k],
                 ["SET", k, v, "EXAT", str(FAR_SEC + 5)], ["PEXPIRETIME", k]]
        k = "k%d_3" % i
        cmds += [["SET", k, v, "NX", "EX", "5"], ["SET", k, v + "b", "XX", "PXAT", str(FAR_MS + 9)],
                 ["PEXPIRETIME", k], ["APPEND", k, "!"], ["PEXPIRETIME", k], ["GETEX", k, "PERSIST"],
                 ["PEXPIRETIME", k], ["SET", k, "41", "PXAT", str(FAR_MS + 11)], ["INCR", k], ["INCRBYFLOAT", k, "1.5"],
                 ["PEXPIRETIME", k], ["GET", k], ["OBJECT", "ENCODING", k]]
    cmds += [["SET", "nx_new", "v", "NX", "PXAT", str(FAR_MS)], ["SET", "xx_missing", "v", "XX", "EX", "10"],
             ["EXISTS", "xx_missing"], ["PERSIST", "nx_new"], ["EXPIREAT", "nx_new", str(FAR_SEC + 1)],
             ["RENAME", "nx_new", "renamed"], ["PEXPIRETIME", "renamed"], ["COPY", "renamed", "copied"],
             ["PEXPIRETIME", "copied"], ["DEL", "k0_0"], ["DBSIZE"]]
    return cmds


def test_set_option_spellings_match_redis(start_server, start_oracle):
    """Options in every case, and with a NUL byte (strcasecmp stops there,
    in Redis as in Cairn: "ex\\0junk" is EX)."""
    cmds = []
    for opt in ("ex", "EX", "eX", "Ex", "px", "PX", "exat", "ExAt", "pxat", "PXAT", "nx", "NX", "xx", "Xx",
                "get", "GET", "gEt", "keepttl", "KEEPTTL", "persist", "e", "exa", "exatt", "pxa", "gett", "n",
                "e\x00x", "ex\x00junk", "get\x00", "nx\x00x", "exat\x00", "keepttl\x00z", "\x00ex", "ez", "eY",
                "Ex\x01", "\xc5x", "e\xd8"):
        o = opt.encode("latin-1")
        for key in ("k", "fresh"):
            cmds.append(["SET", key, "v", o, str(FAR_SEC) if b"at" in o.lower() else "100"])
            cmds.append(["SET", key, "v", o])
            cmds.append(["GETEX", key, o, "100"])
            cmds.append(["GETEX", key, o])
            cmds.append(["EXISTS", key])
        cmds.append(["DEL", "fresh"])
    out = [compare.replies(r, cmds) for r in (start_server().client(), start_oracle().client())]
    bad = [(c, a, b) for c, a, b in zip(cmds, *out) if a != b]
    assert not bad, "%d mismatches, first: %r" % (len(bad), bad[:5])


def pexpiretimes(r):
    """Each key's absolute expire; a relative one (EX 100000) only as 'has
    one': the two servers computed it a few ms apart."""
    out = []
    for k in r.keys("*"):
        t = r.pexpiretime(k)
        out.append((k, t if t < 0 or t >= FAR_MS else "relative"))
    return sorted(out)


def test_set_expire_entries_match_redis(start_server, start_oracle):
    cmds = build_cmds()
    srv = [start_server(**DBG).client(), start_oracle(**DBG).client()]
    replies = [compare.replies(r, cmds) for r in srv]
    bad = [(c, a, b) for c, a, b in zip(cmds, *replies) if a != b]
    assert not bad, "%d mismatches, first: %r" % (len(bad), bad[:5])
    digests = [r.execute_command("DEBUG", "DIGEST") for r in srv]
    assert digests[0] == digests[1]
    times = [pexpiretimes(r) for r in srv]
    assert times[0] == times[1]
    cairn = srv[0]
    assert cairn.execute_command("DEBUG", "RELOAD") == b"OK"
    assert cairn.execute_command("DEBUG", "DIGEST") == digests[1]
    assert pexpiretimes(cairn) == times[1]
    info = cairn.info("keyspace")["db0"]
    assert info["expires"] == sum(1 for _, t in times[1] if t != -1)


def test_set_expire_entries_survive_aof_rewrite_and_load(start_server):
    r = start_server(appendonly="yes", **DBG).client()
    for i, v in enumerate(VALUES):
        r.execute_command("SET", "a%d" % i, v, "PXAT", FAR_MS + i)
        r.execute_command("SETEX", "b%d" % i, 100000, v)
        r.execute_command("SET", "c%d" % i, v, "EX", 100000)
        r.execute_command("SET", "c%d" % i, v, "KEEPTTL")
    before, digest = pexpiretimes(r), r.execute_command("DEBUG", "DIGEST")
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.execute_command("DEBUG", "DIGEST") == digest
    assert pexpiretimes(r) == before
    r.bgrewriteaof()
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")["aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline, "AOF rewrite did not finish"
        time.sleep(0.05)
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert pexpiretimes(r) == before


@pytest.mark.parametrize("lazy", [False, True])
def test_ttl_index_of_set_expire_entries_expires_the_right_keys(start_server, lazy):
    """Short-TTL keys made by SET PX among long-TTL and TTL-less ones,
    overwritten both ways: active expiry (or lookups) removes exactly the
    short ones and the TTL index stays consistent (the sanitizer build
    catches a stale pointer in it)."""
    r = start_server(**DBG).client()
    if lazy:
        assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0) == b"OK"
    p = r.pipeline(transaction=False)
    for i in range(600):
        p.execute_command("SET", "long%d" % i, "v" * (i % 50), "EX", 100000)
        p.execute_command("SET", "short%d" % i, i, "PX", 1)
        p.execute_command("SET", "plain%d" % i, "v")
    for i in range(0, 600, 3):
        p.execute_command("SET", "long%d" % i, "w", "PX", 1)      # long -> short (slot reused)
        p.execute_command("SET", "short%d" % i, "w", "EX", 100000)  # short -> long
        p.execute_command("SET", "plain%d" % i, "w", "PX", 1)     # none -> short
    for i in range(1, 600, 3):
        p.execute_command("SET", "short%d" % i, "w")               # short -> none
    p.execute_command("TTL", "short0")
    p.execute_command("TTL", "short1")
    p.execute_command("TTL", "long1")
    out = p.execute()
    assert out[-3] > 99000 and out[-2] == -1 and out[-1] > 99000
    # Survivors: every long%d not turned short (400), short%d turned long
    # (200) or plain (200), plain%d not turned short (400).
    expect = 400 + 400 + 400
    if lazy:
        assert r.dbsize() >= expect  # nothing expires until looked up
    deadline = time.monotonic() + 30
    while r.dbsize() != expect:
        assert time.monotonic() < deadline, "dbsize stays %d, expected %d" % (r.dbsize(), expect)
        if lazy:  # lookups delete the expired ones
            p = r.pipeline(transaction=False)
            for i in range(600):
                p.exists("long%d" % i, "short%d" % i, "plain%d" % i)
            p.execute()
        time.sleep(0.05)
    assert r.info("keyspace")["db0"]["expires"] == 400 + 200
    assert all(r.exists("long%d" % i) == (i % 3 != 0) for i in range(600))
    assert all(r.exists("short%d" % i) == (i % 3 != 2) for i in range(600))
    assert all(r.exists("plain%d" % i) == (i % 3 != 0) for i in range(600))
