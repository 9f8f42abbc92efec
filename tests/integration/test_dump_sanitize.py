"""sanitize-dump-payload no|yes|clients, side by side with redis-server
7.0.15.  With deep sanitization (yes; clients for RESTORE from a client)
a blob's duplicate members or fields, an unsorted intset and a small hash
with a repeated field are refused with Bad data format, as Redis refuses
them.  Without it Redis stores such values as they come (and may misbehave
on them); Cairn accepts the payload too but drops the duplicates, since it
rebuilds every value element by element.  What keeps memory safe (entries
against the buffer, lengths, counts, NaN scores) is checked in every mode:
see test_dump.py's crafted payloads."""
import struct

import pytest

from test_dump import both, corrupt_cases, payload


def listpack(entries):
    body = b""
    for e in entries:
        assert len(e) < 64
        ent = bytes([0x80 | len(e)]) + e
        body += ent + bytes([len(ent)])
    total = 6 + len(body) + 1
    return struct.pack("<IH", total, len(entries)) + body + b"\xff"


def rdbstr(b):
    assert len(b) < 64
    return bytes([len(b)]) + b


SEMANTIC = {
    "hash listpack dup field": (payload(b"\x10" + rdbstr(listpack([b"f", b"1", b"f", b"2"]))),
                                ("HLEN", "k")),
    "zset listpack dup member": (payload(b"\x11" + rdbstr(listpack([b"m", b"1", b"m", b"2"]))),
                                 ("ZCARD", "k")),
    "intset unsorted": (payload(b"\x0b" + rdbstr(struct.pack("<IIhhh", 2, 3, 5, 1, 3))),
                        ("SCARD", "k")),
    "intset dup": (payload(b"\x0b" + rdbstr(struct.pack("<IIhh", 2, 2, 1, 1))), ("SCARD", "k")),
    "hash dup field": (payload(b"\x04\x02\x01a\x01b\x01a\x01c"), ("HLEN", "k")),
}


@pytest.mark.parametrize("name", sorted(SEMANTIC))
@pytest.mark.parametrize("mode", ["yes", "clients", "no"])
def test_semantic_checks_follow_the_setting(start_server, start_oracle, name, mode):
    p, probe = SEMANTIC[name]
    r = start_server(**{"sanitize-dump-payload": mode}).client()
    o = start_oracle(**{"sanitize-dump-payload": mode}).client()
    got, want = both(r, o, "RESTORE", "k", "0", p)
    if mode == "no":
        assert want[0] == "ok" and got[0] == "ok"
        assert r.execute_command(*probe) >= 1
    else:
        assert got == want == ("err", "Bad data format")
    assert r.ping()


@pytest.mark.parametrize("mode", ["yes", "no"])
def test_memory_safety_checks_stay_on(start_server, mode):
    r = start_server(**{"sanitize-dump-payload": mode}).client()
    for name, p in sorted(corrupt_cases().items()):
        if name in ("dup hash fields", "intset bad") and mode == "no":
            continue  # semantic checks, above
        try:
            r.restore("k", 0, p)
            ok = True
        except Exception as e:
            ok = False
            assert "Bad data format" in str(e) or "Invalid" in str(e) or "checksum" in str(e), name
        assert not ok, name
        assert r.ping()


def test_config_round_trip(server, oracle):
    for mode in ("yes", "clients", "no"):
        for c in (server.client(), oracle.client()):
            c.config_set("sanitize-dump-payload", mode)
            v = list(c.config_get("sanitize-dump-payload").values())
            assert v in ([mode], [mode.encode()])


def test_listpack_adopted_or_rebuilt(server, oracle):
    """Hash and sorted-set listpacks already in their encoding's form are
    kept as they are (DUMP gives back the same bytes, as Redis); an
    unsorted sorted-set listpack is rebuilt in order rather than kept."""
    r, o = server.client(), oracle.client()
    o.hset("h", mapping={"f": "v", "12": "34"})
    o.zadd("z", {"a": 1, "b": 2.5, "c": 2.5, "7": -3})
    for k in ("h", "z"):
        p = o.dump(k)
        r.restore(k, 0, p)
        assert r.object("encoding", k) == b"listpack"
        assert r.dump(k) == p
    assert r.zrange("z", 0, -1, withscores=True) == o.zrange("z", 0, -1, withscores=True)
    unsorted = payload(b"\x11" + rdbstr(listpack([b"b", b"2", b"a", b"1"])))
    r.restore("u", 0, unsorted)
    assert r.zrange("u", 0, -1, withscores=True) == [(b"a", 1.0), (b"b", 2.0)]
    assert r.zscore("u", "b") == 2.0
    r.zadd("u", {"c": 0})
    assert r.zrange("u", 0, -1) == [b"c", b"a", b"b"]
