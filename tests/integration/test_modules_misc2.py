"""Loadable modules (issue 41): tests/modules/misc2.c -- the getkeys-api
family (COMMAND GETKEYS/GETKEYSANDFLAGS and ACL key checks of a command
whose keys come from calling it), GetCommandKeys(WithFlags), stream IDs
as strings, absolute expire and LRU/LFU of a key, clients by id, the
current command's name.  Loaded into Cairn and into redis-server 7.0.15;
the same commands must give the same bytes."""
import subprocess

import pytest

from test_modules import ROOT, built_modules, loaded, plain, raw, same  # noqa: F401 (built_modules: the autouse fixture)
from waithelp import wait_for


GETKEYS_CMDS = [
    ("gk.keys", "a", "b"),
    ("gk.keys", "key", "k1", "x", "ro", "k2"),
    ("COMMAND", "GETKEYS", "gk.keys", "key", "k1", "x", "ro", "k2"),
    ("COMMAND", "GETKEYSANDFLAGS", "gk.keys", "key", "k1", "x", "ro", "k2"),
    ("COMMAND", "GETKEYS", "gk.keys", "x", "y"),
    ("COMMAND", "GETKEYS", "gk.keys"),
    ("COMMAND", "GETKEYSANDFLAGS", "gk.sub", "get", "key", "s1", "ro", "s2"),
    ("COMMAND", "GETKEYSANDFLAGS", "gk.legacy", "a", "b"),
    ("COMMAND", "GETKEYS", "gk.legacy", "a"),
    ("COMMAND", "INFO", "gk.keys"),
    ("gk.introspect", "flags", "gk.keys", "key", "k1", "ro", "k2"),
    ("gk.introspect", "noflags", "gk.keys", "key", "k1", "ro", "k2"),
    ("gk.introspect", "flags", "gk.keys", "a"),
    ("gk.introspect", "flags", "gk.sub", "get", "ro", "z"),
    ("gk.introspect", "flags", "gk.legacy", "a", "b"),
    ("gk.introspect", "flags", "set", "k", "v"),
    ("gk.introspect", "flags", "mset", "a", "1", "b", "2"),
    ("gk.introspect", "flags", "zunionstore", "d", "2", "a", "b"),
    ("gk.introspect", "flags", "zunionstore", "d", "9", "a", "b"),
    ("gk.introspect", "flags", "eval", "return 1", "1", "k"),
    ("gk.introspect", "flags", "set", "k"),
    ("gk.introspect", "flags", "get", "k", "x"),
    ("gk.introspect", "flags", "nosuchcmd", "k"),
    ("gk.introspect", "flags", "config", "nosuchsub"),
    ("gk.introspect", "flags", "ping"),
    ("gk.introspect", "flags", "cmd.name"),
    ("gk.introspect", "flags", "xread", "streams", "s1", "s2", "0", "0"),
    ("gk.introspect", "noflags", "object", "freq", "k"),
    ("gk.introspect", "flags", "lmove", "a", "b", "left", "right"),
    ("gk.introspect", "flags", "sort", "a", "store", "b"),
    ("gk.introspect", "flags", "bitfield", "a", "get", "u8", "0"),
    ("gk.introspect", "flags", "georadius", "a", "1", "1", "1", "km", "store", "b"),
    ("gk.introspect", "flags", "migrate", "h", "p", "", "0", "5", "keys", "a", "b"),
    ("gk.introspect", "flags", "mget", "a", "b", "c"),
    ("gk.introspect", "flags", "lmpop", "2", "a", "b", "left"),
    ("gk.introspect", "flags", "zadd", "z", "1", "m"),
    ("gk.introspect", "flags", "del", "a", "b"),
    ("gk.introspect", "flags", "xreadgroup", "group", "g", "c", "streams", "s", ">"),
    ("gk.introspect", "flags", "fcall", "f", "2", "a", "b"),
    ("gk.introspect", "flags", "blmpop", "0", "1", "a", "left"),
    ("gk.introspect", "flags", "command", "getkeys", "get", "a"),
    ("gk.introspect", "flags", "sintercard", "2", "a", "b"),
    ("gk.introspect", "flags", "memory", "usage", "a"),
    ("COMMAND", "INFO", "gk.legacy"),
    ("cmd.name",), ("gk.sub", "name"), ("CMD.NAME",),
]


def test_getkeys_api_and_command_keys(start_server, start_oracle):
    srv = loaded(start_server, "misc2")
    orc = loaded(start_oracle, "misc2")
    same(srv, orc, GETKEYS_CMDS)
    same(srv, orc, GETKEYS_CMDS[:12], resp=3)


def test_getkeys_api_position_past_arguments_is_dropped(start_server):
    """Redis reads past argv for such a position (undefined, not compared);
    Cairn drops it and keeps the keys in range."""
    r = plain(loaded(start_server, "misc2"))
    assert r.execute_command("COMMAND", "GETKEYS", "gk.keys", "far", "key", "k") == [b"k"]
    assert r.execute_command("gk.introspect", "flags", "gk.keys", "far", "key", "k") == [[3, 50]]
    assert r.execute_command("ping") == b"PONG"


def test_getkeys_api_acl_key_checks(start_server, start_oracle):
    cmds = [
        ("ACL", "SETUSER", "u", "on", ">p", "~allowed*", "+@all"),
        ("AUTH", "u", "p"),
        ("gk.keys", "key", "allowed1"),
        ("gk.keys", "key", "denied1"),
        ("gk.keys", "key", "allowed1", "ro", "denied2"),
        ("gk.sub", "get", "key", "denied3"),
        ("gk.sub", "get", "key", "allowed3"),
        ("gk.keys", "x"),
        ("ACL", "LOG", "RESET"),
    ]
    srv = loaded(start_server, "misc2")
    orc = loaded(start_oracle, "misc2")
    same(srv, orc, cmds)


SID_CMDS = [
    ("sid.fmt", "0", "0"), ("sid.fmt", "1700000000000", "5"),
    ("sid.fmt", "18446744073709551615", "18446744073709551615"),
    ("sid.parse", "1-2"), ("sid.parse", "5"), ("sid.parse", "-"), ("sid.parse", "+"),
    ("sid.parse", "1-"), ("sid.parse", "-1"), ("sid.parse", "1-*"), ("sid.parse", "x"), ("sid.parse", ""),
    ("sid.parse", "18446744073709551615-18446744073709551615"), ("sid.parse", "18446744073709551616-0"),
    ("sid.parse", " 12-+3"), ("sid.parse", "1-2-3"), ("sid.parse", "1" * 128), ("sid.parse", "0" * 126 + "7"),
    ("sid.parse", "0x10"), ("sid.parse", "+-1"), ("sid.parse", "1--1"),
]


def test_stream_id_strings(start_server, start_oracle):
    same(loaded(start_server, "misc2"), loaded(start_oracle, "misc2"), SID_CMDS)


EXP_CMDS = [
    ("set", "k", "v"), ("exp.getabs", "k"), ("exp.getabs", "missing"),
    ("exp.setabs", "k", "4102444800000"), ("exp.getabs", "k"), ("pexpiretime", "k"),
    ("exp.setabs", "k", "-1"), ("exp.getabs", "k"), ("ttl", "k"),
    ("exp.setabs", "k", "-2"), ("exp.setabs", "missing", "4102444800000"),
    ("exp.setabsro", "k", "4102444800000"), ("ttl", "k"),
    ("exp.setabs", "k", "1000"), ("exists", "k"), ("exp.getabs", "k"),
]


def test_abs_expire(start_server, start_oracle):
    same(loaded(start_server, "misc2"), loaded(start_oracle, "misc2"), EXP_CMDS)


LRU_CMDS = [
    ("set", "k", "v"),
    ("lru.set", "k", "100000"), ("lru.set", "k", "1999"), ("lru.set", "k", "-1"),
    ("lru.set", "missing", "5"), ("lru.get", "missing"),
    ("lfu.set", "k", "5"), ("lfu.get", "k"),
]
LFU_CMDS = [
    ("set", "k", "v"),
    ("lfu.set", "k", "100"), ("object", "freq", "k"), ("lfu.set", "k", "0"), ("lfu.set", "k", "255"),
    ("lfu.set", "k", "-1"), ("lfu.get", "k"), ("lfu.get", "missing"), ("lfu.set", "missing", "3"),
    ("lru.set", "k", "1000"), ("lru.get", "k"), ("object", "freq", "k"),
]


def test_lru(start_server, start_oracle):
    srv = loaded(start_server, "misc2", **{"maxmemory-policy": "allkeys-lru"})
    orc = loaded(start_oracle, "misc2", **{"maxmemory-policy": "allkeys-lru"})
    same(srv, orc, LRU_CMDS)
    # OBJECT IDLETIME agrees with SetLRU (the clock may tick in between).
    for s in (srv, orc):
        r = plain(s)
        assert r.execute_command("lru.set", "k", "100000")[0] == 0
        assert 100 <= r.execute_command("object", "idletime", "k") <= 102


def test_lfu(start_server, start_oracle):
    srv = loaded(start_server, "misc2", **{"maxmemory-policy": "allkeys-lfu"})
    orc = loaded(start_oracle, "misc2", **{"maxmemory-policy": "allkeys-lfu"})
    same(srv, orc, LFU_CMDS)


def test_clients_by_id(start_server, start_oracle):
    srv = loaded(start_server, "misc2")
    orc = loaded(start_oracle, "misc2")
    cmds = [
        ("cli.info", "self"), ("cli.info", "self", "2"), ("cli.info", "self", "0"),
        ("cli.info", "999999"), ("cli.info", "999999", "0"),
        ("select", "3"), ("cli.info", "self"),
        ("multi",), ("cli.info", "self"), ("exec",),
        ("cli.getname", "self"), ("cli.setname", "self", "bad name"), ("cli.setname", "self", "a\nb"),
        ("cli.setname", "self", "good"), ("cli.getname", "self"), ("client", "getname"),
        ("cli.setname", "self", ""), ("cli.getname", "self"), ("client", "getname"),
        ("cli.getname", "999999"), ("cli.setname", "999999", "x"),
        ("subscribe", "ch"),
    ]
    same(srv, orc, cmds)
    # another connection's info and name, by its id
    for s in (srv, orc):
        r1, r2 = plain(s), plain(s)
        id2 = r2.execute_command("client", "id")
        r2.execute_command("client", "setname", "second")
        assert r1.execute_command("cli.getname", str(id2)) == b"second"
        assert r1.execute_command("cli.setname", str(id2), "renamed") == b"OK"
        assert r2.execute_command("client", "getname") == b"renamed"
        info = r1.execute_command("cli.info", str(id2))
        assert info[:4] == [0, 1, 0, 1] and info[4] == b"127.0.0.1" and info[5] == 1


def test_digest_key_name_and_db(start_server, start_oracle):
    cmds = [
        ("dig.set", "dk", "5"), ("select", "4"), ("dig.set", "other", "7"),
        ("debug", "digest-value", "other"), ("dig.last",),
        ("select", "0"), ("debug", "digest-value", "dk"), ("dig.last",),
        ("debug", "digest"), ("flushall",), ("debug", "digest"),
    ]
    dbg = {"enable-debug-command": "yes"}
    a = same(loaded(start_server, "misc2", **dbg), loaded(start_oracle, "misc2", **dbg), cmds)
    assert a[4] == b"*2\r\n$5\r\nother\r\n:4\r\n" and a[7] == b"*2\r\n$2\r\ndk\r\n:0\r\n"


@pytest.mark.parametrize("async_", ["0", "1"])
def test_reset_dataset(start_server, start_oracle, async_):
    cmds = [
        ("set", "a", "1"), ("select", "3"), ("set", "b", "2"), ("dbsize",),
        ("reset.data", "0", async_), ("dbsize",), ("select", "0"), ("dbsize",),
        ("set", "c", "3"), ("keys", "*"),
    ]
    a = same(loaded(start_server, "misc2"), loaded(start_oracle, "misc2"), cmds)
    assert a[5] == b":0\r\n" and a[9] == b"*1\r\n$1\r\nc\r\n"


def _rewrite_done(srv):
    r = plain(srv)
    wait_for(lambda: b"aof_rewrite_in_progress:0" in r.execute_command("info", "persistence")
             and b"aof_rewrite_scheduled:0" in r.execute_command("info", "persistence"),
             what="the AOF rewrite to end")


def test_reset_dataset_restarts_aof(start_server, start_oracle):
    """With restart_aof the AOF is rewritten from the empty dataset: after a
    reload only what was written after the reset is there; without it the
    AOF still holds the old writes."""
    cfg = {"appendonly": "yes", "enable-debug-command": "yes"}
    srv = loaded(start_server, "misc2", **cfg)
    orc = loaded(start_oracle, "misc2", **cfg)
    out = []
    for cmds in ([("set", "old", "1"), ("reset.data", "1", "0"), ("set", "new", "2")],
                 [("debug", "loadaof"), ("keys", "*"),
                  ("set", "old2", "1"), ("reset.data", "0", "0"), ("set", "new2", "2"), ("dbsize",)],
                 [("debug", "loadaof"), ("dbsize",), ("exists", "old2", "new", "new2")]):
        for s in (srv, orc):
            _rewrite_done(s)
        out += same(srv, orc, cmds)
    assert out[4] == b"*1\r\n$3\r\nnew\r\n"
    assert out[8] == b":1\r\n" and out[10] == b":3\r\n" and out[11] == b":3\r\n"


def test_getchannels_api_acl(start_server, start_oracle):
    cmds = [
        ("ch.pub", "any"),
        ("ACL", "SETUSER", "u", "on", ">p", "~*", "&news*", "&lit?", "+@all"),
        ("AUTH", "u", "p"),
        ("ch.pub", "news1"), ("ch.pub", "sports"), ("ch.pub", "news1", "sports"),
        ("ch.sub", "news2"), ("ch.sub", "other"),
        ("ch.psub", "news*"), ("ch.psub", "news1*"), ("ch.psub", "lit?"), ("ch.psub", "lit1"),
        ("ch.unsub", "other"), ("ch.pub",),
        ("ACL", "DRYRUN", "u", "ch.pub", "x"), ("ACL", "DRYRUN", "u", "ch.pub", "news"),
        ("gk.keys", "key", "k"),
    ]
    srv = loaded(start_server, "misc2")
    orc = loaded(start_oracle, "misc2")
    a = same(srv, orc, cmds)
    assert a[4].startswith(b"-NOPERM") and a[3] == b"*2\r\n:0\r\n:0\r\n"
    # the denials logged: reason and object (the channel) agree
    logs = []
    for s in (srv, orc):
        entries = [dict(zip(e[::2], e[1::2])) for e in plain(s).execute_command("ACL", "LOG")]
        logs.append([(e[b"reason"], e[b"object"]) for e in entries])
    assert logs[0] == logs[1] and (b"channel", b"sports") in logs[0]


def test_getkeys_api_cluster_slots(start_server, start_oracle):
    """Cluster routing asks a getkeys-api command for its keys: keys of two
    slots give CROSSSLOT, as Redis."""
    cfg = {"cluster-enabled": "yes", "cluster-node-timeout": "500"}
    srv = loaded(start_server, "misc2", **cfg)
    orc = loaded(start_oracle, "misc2", **cfg)
    for s in (srv, orc):
        r = plain(s)
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        wait_for(lambda: b"cluster_state:ok" in r.execute_command("CLUSTER", "INFO"), what="cluster_state:ok")
    cmds = [
        ("gk.keys", "key", "a", "key", "b"), ("gk.keys", "key", "a", "ro", "a"),
        ("gk.keys", "key", "{t}1", "ro", "{t}2"), ("gk.keys", "x"),
        ("gk.sub", "get", "key", "a", "key", "b"), ("gk.legacy", "a", "b"),
    ]
    a = same(srv, orc, cmds)
    assert a[0].startswith(b"-CROSSSLOT") and a[1] == b":0\r\n"
