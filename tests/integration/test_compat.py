"""Compatibility cases found by running Cairn as a Redis user would (issue
26): each test pins what redis-server 7.0.15 does, and every test passes
with CAIRN_BIN=redis-server too.

Expected bytes were taken from the oracle.  Where a test needs to know that
nothing more was queued for a connection it sends a sentinel command whose
reply must come next.
"""
import os
import signal
import subprocess
import time

import pytest
import redis

from conftest import cairn_bin, free_port

from pubsub_helpers import call, enc, inval, read_values


def resp3(srv):
    c = srv.connect()
    c.send(enc("HELLO", "3"))
    read_values(c, 1)
    return c


def client_id(conn):
    return int(call(conn, "CLIENT", "ID")[1:-2])


# --- 1. push messages are not replies ----------------------------------------

def sub(word, name, n, push=b">"):
    return push + b"3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:%d\r\n" % (
        len(word), word, len(name), name, n)


@pytest.mark.parametrize("proto", ["2", "3"])
def test_pubsub_pushes_pass_client_reply_off(server, proto):
    push = b">" if proto == "3" else b"*"
    a = server.connect()
    a.send(enc("HELLO", proto))
    read_values(a, 1)
    a.send(enc("CLIENT", "REPLY", "OFF") + enc("SUBSCRIBE", "channel") + enc("PSUBSCRIBE", "ch*"))
    assert read_values(a, 2) == sub(b"subscribe", b"channel", 1, push) + \
        sub(b"psubscribe", b"ch*", 2, push)
    b = server.connect()
    assert call(b, "PUBLISH", "channel", "hello") == b":2\r\n"
    assert read_values(a, 2) == (
        push + b"3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n" +
        push + b"4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$7\r\nchannel\r\n$5\r\nhello\r\n")
    a.send(enc("UNSUBSCRIBE") + enc("PUNSUBSCRIBE"))
    assert read_values(a, 2) == sub(b"unsubscribe", b"channel", 1, push) + \
        sub(b"punsubscribe", b"ch*", 0, push)
    # PING's reply is still dropped: the next bytes are CLIENT REPLY ON's.
    a.send(enc("PING") + enc("CLIENT", "REPLY", "ON"))
    assert read_values(a, 1) == b"+OK\r\n"


def test_pubsub_pushes_pass_client_reply_skip(server):
    a = resp3(server)
    a.send(enc("CLIENT", "REPLY", "SKIP") + enc("SUBSCRIBE", "c1") + enc("PING"))
    assert read_values(a, 2) == sub(b"subscribe", b"c1", 1) + b"+PONG\r\n"


def test_tracking_invalidation_passes_client_reply_off(server):
    a = resp3(server)
    a.send(enc("CLIENT", "TRACKING", "on") + enc("CLIENT", "REPLY", "OFF") + enc("GET", "k"))
    assert read_values(a, 1) == b"+OK\r\n"
    b = server.connect()
    assert call(b, "SET", "k", "1") == b"+OK\r\n"
    assert read_values(a, 1) == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
    a.send(enc("GET", "k") + enc("CLIENT", "REPLY", "ON"))
    assert read_values(a, 1) == b"+OK\r\n"


def test_tracking_redirect_to_resp2_subscriber_with_reply_off(server):
    r = server.connect()
    rid = client_id(r)
    r.send(enc("SUBSCRIBE", "__redis__:invalidate"))
    read_values(r, 1)
    # The redirect target turns replies off (after subscribing, as RESP2
    # allows only SUBSCRIBE-family commands, it cannot; so use a RESP3 one).
    r3 = resp3(server)
    r3id = client_id(r3)
    r3.send(enc("CLIENT", "REPLY", "OFF"))
    a = server.connect()
    assert call(a, "CLIENT", "TRACKING", "on", "REDIRECT", str(r3id)) == b"+OK\r\n"
    assert call(a, "GET", "k") == b"$-1\r\n"
    assert call(a, "SET", "k", "v") == b"+OK\r\n"
    assert read_values(r3, 1) == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
    assert call(a, "CLIENT", "TRACKING", "on", "REDIRECT", str(rid)) == b"+OK\r\n"
    assert call(a, "GET", "k") == b"$1\r\nv\r\n"
    assert call(a, "SET", "k", "w") == b"+OK\r\n"
    assert read_values(r, 1) == (b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
                                 b"*1\r\n$1\r\nk\r\n")


# --- 2. client tracking and scripts ------------------------------------------


def no_push_pending(conn):
    assert call(conn, "PING") == b"+PONG\r\n"


def test_tracking_noloop_script_write_sends_nothing(server):
    a = resp3(server)
    assert call(a, "CLIENT", "TRACKING", "on", "NOLOOP") == b"+OK\r\n"
    assert call(a, "SET", "key1", "1") == b"+OK\r\n"
    assert call(a, "GET", "key1") == b"$1\r\n1\r\n"
    assert call(a, "EVAL", "return redis.call('set','key1','2')", "1", "key1") == b"+OK\r\n"
    assert call(a, "GET", "key1") == b"$1\r\n2\r\n"
    no_push_pending(a)


def test_tracking_script_write_of_own_key_invalidates_after_reply(server):
    a = resp3(server)
    assert call(a, "CLIENT", "TRACKING", "on") == b"+OK\r\n"
    assert call(a, "GET", "key1") == b"_\r\n"
    a.send(enc("EVAL", "return redis.call('set','key1','2')", "1", "key1"))
    assert read_values(a, 2) == b"+OK\r\n" + inval(b"key1")
    no_push_pending(a)


def test_tracking_bcast_noloop_still_tells_the_script_caller(server):
    # Redis compares BCAST's NOLOOP with the script's own client, not its
    # caller: the caller hears of its script's writes.
    a = resp3(server)
    assert call(a, "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP") == b"+OK\r\n"
    assert call(a, "EVAL", "return redis.call('set','k1','2')", "1", "k1") == b"+OK\r\n"
    assert read_values(a, 1) == inval(b"k1")
    no_push_pending(a)
    b = server.connect()
    assert call(b, "SET", "k2", "1") == b"+OK\r\n"
    assert read_values(a, 1) == inval(b"k2")


@pytest.mark.parametrize("ev", ["EVAL", "EVAL_RO"])
def test_tracking_script_tracks_declared_keys_only_when_it_reads(server, ev):
    a = resp3(server)
    b = server.connect()
    assert call(a, "CLIENT", "TRACKING", "on") == b"+OK\r\n"
    nowrite = "redis.call('ping')" if ev == "EVAL_RO" else "redis.call('set','key3','bar')"
    assert call(a, ev, nowrite, "2", "key1", "key2") == b"_\r\n"
    assert call(b, "MSET", "key2", "2", "key1", "2") == b"+OK\r\n"
    no_push_pending(a)
    assert call(a, ev, "redis.call('get','key3')", "2", "key1", "key2") == b"_\r\n"
    # key3, read inside, is not tracked; the declared keys are.
    assert call(b, "SET", "key3", "x") == b"+OK\r\n"
    assert call(b, "MSET", "key2", "2", "key1", "2") == b"+OK\r\n"
    assert read_values(a, 2) == inval(b"key2") + inval(b"key1")
    no_push_pending(a)


def test_tracking_optin_caching_applies_to_script_reads(server):
    a = resp3(server)
    b = server.connect()
    assert call(a, "CLIENT", "TRACKING", "on", "OPTIN") == b"+OK\r\n"
    assert call(a, "EVAL", "return redis.call('get','k')", "1", "k") == b"_\r\n"
    assert call(b, "SET", "k", "1") == b"+OK\r\n"
    no_push_pending(a)
    assert call(a, "CLIENT", "CACHING", "yes") == b"+OK\r\n"
    assert call(a, "EVAL", "return redis.call('get','k')", "1", "k") == b"$1\r\n1\r\n"
    assert call(b, "SET", "k", "2") == b"+OK\r\n"
    assert read_values(a, 1) == inval(b"k")


@pytest.mark.parametrize("fc", ["FCALL", "FCALL_RO"])
def test_tracking_function_tracks_declared_keys_when_it_reads(server, fc):
    a = resp3(server)
    b = server.connect()
    lib = ("#!lua name=trk\n"
           "redis.register_function{function_name='rd', callback=function(k, a) "
           "return redis.call('get', 'key3') end, flags={'no-writes'}}\n"
           "redis.register_function{function_name='nop', callback=function(k, a) "
           "return redis.call('ping') end, flags={'no-writes'}}\n")
    assert call(a, "FUNCTION", "LOAD", lib) == b"$3\r\ntrk\r\n"
    assert call(a, "CLIENT", "TRACKING", "on") == b"+OK\r\n"
    assert call(a, fc, "nop", "2", "key1", "key2") == b"+PONG\r\n"
    assert call(b, "MSET", "key1", "2", "key2", "2") == b"+OK\r\n"
    no_push_pending(a)
    assert call(a, fc, "rd", "2", "key1", "key2") == b"_\r\n"
    assert call(b, "MSET", "key1", "2", "key2", "2") == b"+OK\r\n"
    assert read_values(a, 2) == inval(b"key1") + inval(b"key2")
    no_push_pending(a)


# --- 4. MULTI and a busy script ----------------------------------------------

BUSY = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"


def start_busy_script(srv):
    """A connection running an endless script, once others get BUSY."""
    a, k = srv.connect(), srv.connect()
    assert call(k, "CONFIG", "SET", "busy-reply-threshold", "50") == b"+OK\r\n"
    a.send(enc("EVAL", "while true do end", "0"))
    for _ in range(3000):
        r = call(k, "PING")
        if r == BUSY:
            return a, k
        assert r == b"+PONG\r\n"
    raise AssertionError("never busy")


def kill_script(a, k):
    assert call(k, "SCRIPT", "KILL") == b"+OK\r\n"
    assert read_values(a, 1).startswith(b"-ERR Script killed by user with SCRIPT KILL...")


def test_multi_during_busy_script_then_kill(server):
    b = server.connect()
    assert call(b, "SET", "xx", "1") == b"+OK\r\n"
    a, k = start_busy_script(server)
    assert call(b, "MULTI") == b"+OK\r\n"
    assert call(b, "INCR", "xx") == BUSY
    kill_script(a, k)
    assert call(b, "INCR", "xx") == b"+QUEUED\r\n"
    assert call(b, "EXEC") == EXECABORT
    assert call(b, "GET", "xx") == b"$1\r\n1\r\n"
    assert call(b, "PING", "asdf") == b"$4\r\nasdf\r\n"


def test_exec_during_busy_script_runs_nothing(server):
    b = server.connect()
    assert call(b, "SET", "xx", "1") == b"+OK\r\n"
    assert call(b, "MULTI") == b"+OK\r\n"
    assert call(b, "INCR", "xx") == b"+QUEUED\r\n"
    a, k = start_busy_script(server)
    assert call(b, "EXEC") == b"-EXECABORT Transaction discarded because of: " + BUSY[1:]
    kill_script(a, k)
    assert call(b, "GET", "xx") == b"$1\r\n1\r\n"
    assert call(b, "PING", "asdf") == b"$4\r\nasdf\r\n"
    assert call(b, "EXEC") == b"-ERR EXEC without MULTI\r\n"


@pytest.mark.parametrize("bad,err", [
    (("NOSUCH", "a"), b"-ERR unknown command 'NOSUCH', with args beginning with: 'a' \r\n"),
    (("GET",), b"-ERR wrong number of arguments for 'get' command\r\n"),
    (("WATCH", "k"), b"-ERR WATCH inside MULTI is not allowed\r\n"),
    (("MULTI",), b"-ERR MULTI calls can not be nested\r\n"),
    (("SHUTDOWN", "NOSAVE", "x"), b"-ERR Command not allowed inside a transaction\r\n"),
    (("CONFIG", "NOSUCH"),
     b"-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.\r\n"),
])
def test_transaction_doomed_or_not_as_redis(server, bad, err):
    b = server.connect()
    assert call(b, "MULTI") == b"+OK\r\n"
    assert call(b, *bad) == err
    assert call(b, "SET", "k", "1") == b"+QUEUED\r\n"
    r = call(b, "EXEC")
    if bad[0] in ("WATCH", "MULTI"):
        assert r == b"*1\r\n+OK\r\n"   # an error these two answer does not doom
    else:
        assert r == EXECABORT


def test_monitor_in_multi_is_queued_and_fails_in_exec(server):
    b = server.connect()
    assert call(b, "MULTI") == b"+OK\r\n"
    assert call(b, "MONITOR") == b"+QUEUED\r\n"
    assert call(b, "EXEC") == b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n"
    assert call(b, "PING") == b"+PONG\r\n"


# --- 5. random sampling is uniform -------------------------------------------
# Ten members; a chi-square over the draws must stay below 40, which a
# uniform draw exceeds with probability 1e-5 (9 degrees of freedom), as
# Redis's own tests check.  Draws of distinct members (positive counts)
# vary less than independent ones, so the bound holds for them too.

MEMBERS = ["m%d" % i for i in range(10)]
INTS = [str(i * 7) for i in range(10)]


def chi_square(draws, population):
    counts = {p: 0 for p in population}
    for d in draws:
        counts[d.decode()] += 1
    expect = len(draws) / len(population)
    return sum((v - expect) ** 2 / expect for v in counts.values())


def make_key(r, kind, enc):
    r.delete("k")
    if kind == "set":
        pop = INTS if enc == "intset" else MEMBERS
        r.sadd("k", *pop)
    elif kind == "hash":
        r.config_set("hash-max-listpack-entries", 512 if enc == "listpack" else 0)
        pop = MEMBERS
        r.hset("k", mapping={m: "v" for m in pop})
    else:
        r.config_set("zset-max-listpack-entries", 128 if enc == "listpack" else 0)
        pop = MEMBERS
        r.zadd("k", {m: i for i, m in enumerate(pop)})
    assert r.object("encoding", "k").decode() == enc
    return pop


SAMPLERS = {"set": "SRANDMEMBER", "hash": "HRANDFIELD", "zset": "ZRANDMEMBER"}


@pytest.mark.parametrize("kind,enc", [("set", "intset"), ("set", "hashtable"),
                                      ("hash", "listpack"), ("hash", "hashtable"),
                                      ("zset", "listpack"), ("zset", "skiplist")])
def test_random_members_are_uniform(server, kind, enc):
    r = server.client()
    pop = make_key(r, kind, enc)
    cmd = SAMPLERS[kind]
    assert chi_square(r.execute_command(cmd, "k", -1000), pop) < 40
    for size in (8, 2):
        draws = []
        for _ in range(1000 // size):
            got = r.execute_command(cmd, "k", size)
            assert len(set(got)) == size
            draws += got
        assert chi_square(draws, pop) < 40
    draws = [r.execute_command(cmd, "k") for _ in range(1000)]
    assert chi_square(draws, pop) < 40


@pytest.mark.parametrize("enc", ["intset", "hashtable"])
@pytest.mark.parametrize("size", [1, 2, 8])
def test_spop_is_uniform(server, enc, size):
    r = server.client()
    pop = make_key(r, "set", enc)
    draws = []
    for _ in range(1000 // size):
        got = r.spop("k", size) if size > 1 else [r.spop("k")]
        draws += got
        r.sadd("k", *got)
    assert r.object("encoding", "k").decode() == enc
    assert chi_square(draws, pop) < 40


def test_randomkey_is_uniform(server):
    r = server.client()
    for m in MEMBERS:
        r.set(m, "v")
    draws = [r.randomkey() for _ in range(1000)]
    assert chi_square(draws, MEMBERS) < 40


# --- 6. a script's result is converted without running Lua code -------------

META = ("setmetatable(a,{__index=function(t,k) redis.call('incr','x') "
        "if k=='double' then return 1.5 end if k=='map' then return {a=1} end end, "
        "__len=function() redis.call('incr','x') return 2 end})")


@pytest.mark.parametrize("proto", ["2", "3"])
@pytest.mark.parametrize("body,reply2,reply3", [
    ("local a = {}; %s return a", b"*0\r\n", b"*0\r\n"),
    ("redis.setresp(3); local a = {}; %s return a", b"*0\r\n", b"*0\r\n"),
    ("local a = {1,2}; %s return a", b"*2\r\n:1\r\n:2\r\n", b"*2\r\n:1\r\n:2\r\n"),
    ("local a = {err={}}; %s return a", b"*0\r\n", b"*0\r\n"),
    ("local a = {ok='x'}; %s return a", b"+x\r\n", b"+x\r\n"),
    ("redis.setresp(3); local a = {map={}}; setmetatable(a.map,{__index=function() "
     "redis.call('incr','x') end}) return a", b"*0\r\n", b"%0\r\n"),
])
def test_script_result_metatable_runs_no_redis_call(server, proto, body, reply2, reply3):
    c = server.connect()
    c.send(enc("HELLO", proto))
    read_values(c, 1)
    assert call(c, "EVAL", body.replace("%s", META), "0") == (reply3 if proto == "3" else reply2)
    assert call(c, "EXISTS", "x") == b":0\r\n"


# --- 7. thousands of arguments through unpack --------------------------------

UNPACK = "local a = {} for i=1,7999 do a[i] = 1 end "


def test_unpack_7999_arguments_into_redis_call(server):
    c = server.connect()
    assert call(c, "EVAL", UNPACK + "return redis.call('lpush','l',unpack(a))", "0") == b":7999\r\n"
    assert call(c, "EVAL", UNPACK + "return redis.pcall('lpush','l',unpack(a))", "0") == b":15998\r\n"
    assert call(c, "EVAL", UNPACK + "return #{unpack(a)}", "0") == b":7999\r\n"
    r = call(c, "EVAL", "local a = {} for i=1,8000 do a[i] = 1 end return redis.call('lpush','l',unpack(a))", "0")
    assert r.startswith(b"-ERR user_script:1: too many results to unpack script: ")


def test_cmsgpack_pack_refuses_as_many_arguments_as_redis(server):
    c = server.connect()
    r = call(c, "EVAL", UNPACK + "return cmsgpack.pack(unpack(a)):len()", "0")
    assert r.startswith(b"-ERR user_script:1: bad argument #0 to 'pack' "
                        b"(Too many arguments for MessagePack pack.) script: ")
    assert call(c, "EVAL", "local a = {} for i=1,3990 do a[i] = 1 end "
                "return cmsgpack.pack(unpack(a)):len()", "0") == b":3990\r\n"


# --- 8. command statistics of the commands scripts run -----------------------

def stats_lines(r):
    """INFO commandstats and errorstats without timings, sorted."""
    out = []
    for section in ("commandstats", "errorstats"):
        for name, v in r.info(section).items():
            if isinstance(v, dict):
                v = {k: x for k, x in v.items() if not k.startswith("usec")}
            out.append("%s:%s" % (name, sorted(v.items()) if isinstance(v, dict) else v))
    return sorted(out)


def test_commandstats_after_eval_calling_set_and_expire(server):
    r = server.client()
    r.config_resetstat()
    r.set("mykey", "myval")
    r.eval("redis.call('set', KEYS[1], 'foo') redis.call('expire', KEYS[1], 100)", 1, "mykey")
    stats = r.info("commandstats")
    assert stats["cmdstat_eval"]["calls"] == 1
    assert stats["cmdstat_set"]["calls"] == 2
    assert stats["cmdstat_expire"]["calls"] == 1


SCRIPT_ERRORS = [
    "return redis.pcall('incr','mykey')", "return redis.call('incr','mykey')",
    "return pcall(redis.call,'incr','mykey')", "return redis.pcall('nosuch')",
    "return redis.pcall('get')", "return redis.pcall('get','a','b')",
    "return redis.pcall('config','set','maxmemory','x')", "return redis.pcall('hset','mykey','a')",
    "return redis.pcall('eval','return 1','0')", "return redis.pcall('lpush','mykey','a')",
    "return redis.pcall('select','99')", "return redis.pcall('object','nosuch')",
    "return redis.error_reply('MY err')", "return {err='X bad'}", "return redis.call('nosuch')",
    "return redis.call('get')", "error('boom')", "return redis.pcall('set','a','b','px','-1')",
    "#!lua flags=no-writes\nreturn redis.pcall('set','a','b')",
    "#!lua flags=no-writes\nreturn redis.call('set','a','b')",
]


def test_commandstats_and_errorstats_of_failing_script_calls(start_server, start_oracle):
    got = []
    for srv in (start_server(), start_oracle()):
        r = srv.client()
        r.set("mykey", "notanumber")
        r.config_resetstat()
        for s in SCRIPT_ERRORS:
            try:
                r.eval(s, 0)
            except Exception:
                pass
        for s in ("return redis.pcall('set','a','b')", "return redis.pcall('incr','mykey')"):
            try:
                r.execute_command("EVAL_RO", s, 0)
            except Exception:
                pass
        got.append(stats_lines(r))
    assert got[0] == got[1]


# --- 9. CONFIG SET --------------------------------------------------------------

def test_config_set_every_parameter_to_its_own_value(server):
    r = server.client()
    refused = {}
    for name, value in sorted(r.config_get("*").items()):
        try:
            r.execute_command("CONFIG", "SET", name, value)
        except redis.ResponseError as e:
            refused[name] = str(e)
    for name, err in refused.items():
        assert err.endswith("can't set immutable config") or (
            name in ("dir", "dbfilename") and err.endswith("can't set protected config")), (name, err)
    assert "port" not in refused and "bind" not in refused
    assert r.ping()


def test_config_set_bind_on_the_same_port(server):
    r = server.client()
    assert r.execute_command("CONFIG", "SET", "bind", "127.0.0.1 -::1") == b"OK"
    assert server.client().ping()
    assert r.execute_command("CONFIG", "SET", "bind", "127.0.0.1") == b"OK"
    assert server.client().ping()


@pytest.mark.parametrize("args,err", [
    (("MAXMEMORY-samples", "abc"),
     "CONFIG SET failed (possibly related to argument 'maxmemory-samples') - "
     "argument couldn't be parsed into an integer"),
    (("maxmemory-samples", "7", "hz", "abc", "maxclients", "xyz"),
     "CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"),
    (("hz", "11", "port", "abc"),
     "CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer"),
    (("hz", "11", "HZ", "12"), "CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"),
    (("hz", "11", "nosuch", "12", "daemonize", "no"),
     "Unknown option or number of arguments for CONFIG SET - 'nosuch'"),
    (("DAEMONIZE", "no", "nosuch", "12"),
     "CONFIG SET failed (possibly related to argument 'DAEMONIZE') - can't set immutable config"),
    (("hz", "11", "bind", "999.1.1.1"),
     "CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses."),
    (("maxmemory-policy", "bad", "maxmemory", "1x"),
     "CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the "
     "following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, "
     "allkeys-random, noeviction"),
])
def test_config_set_bad_values_name_the_argument_and_roll_back(server, args, err):
    r = server.client()
    before = r.config_get("*")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CONFIG", "SET", *args)
    assert str(e.value) == err
    assert r.config_get("*") == before
    assert server.client().ping()


# --- 11. relative paths ----------------------------------------------------------

class Started:
    """A server started by hand in `cwd` (the fixtures pass --dir and
    --logfile themselves), waited for through the log file it names."""

    def __init__(self, cwd, args, log):
        self.cwd, self.log = cwd, log
        self.proc = subprocess.Popen([cairn_bin()] + args, cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(log) and "Ready to accept connections" in open(log).read():
                return
            assert self.proc.poll() is None, open(log).read() if os.path.exists(log) else "exited"
            time.sleep(0.02)
        raise AssertionError("not ready")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=15)


def test_relative_dir_and_paths_in_config_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "inc").mkdir()
    port = free_port()
    (tmp_path / "inc" / "a.conf").write_text("port %d\n" % port)
    (tmp_path / "inc" / "b.conf").write_text("hz 12\n")
    (tmp_path / "main.conf").write_text(
        'dir ./sub\nlogfile log.txt\npidfile p.pid\nunixsocket s.sock\ndbfilename d.rdb\n'
        'include ../inc/*.conf\ninclude ../inc/none-*.conf\nsave ""\nbind 127.0.0.1\n')
    sub = tmp_path / "sub"
    s = Started(str(tmp_path), ["main.conf"], str(sub / "log.txt"))
    try:
        r = redis.Redis(port=port, socket_timeout=10)
        assert r.config_get("dir") == {"dir": str(sub)}
        assert r.config_get("hz") == {"hz": "12"}
        assert int((sub / "p.pid").read_text()) == s.proc.pid
        u = redis.Redis(unix_socket_path=str(sub / "s.sock"), socket_timeout=10)
        assert u.ping()
    finally:
        s.stop()
    assert not (sub / "p.pid").exists() and not (sub / "s.sock").exists()


def test_relative_dir_on_command_line_and_config_set(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deeper").mkdir()
    port = free_port()
    s = Started(str(tmp_path), ["--port", str(port), "--bind", "127.0.0.1", "--dir", "./sub",
                                "--logfile", "log.txt", "--save", "", "--enable-protected-configs", "yes"],
                str(tmp_path / "sub" / "log.txt"))
    try:
        r = redis.Redis(port=port, socket_timeout=10)
        assert r.config_get("dir") == {"dir": str(tmp_path / "sub")}
        assert r.config_set("dir", "deeper")
        assert r.config_get("dir") == {"dir": str(tmp_path / "sub" / "deeper")}
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("dir", "./nosuch")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'dir') - "
                                "No such file or directory")
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("dbfilename", "a/b.rdb")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'dbfilename') - "
                                "dbfilename can't be a path, just a filename")
    finally:
        s.stop()


@pytest.mark.parametrize("line,err", [
    ("dbfilename a/b.rdb", "dbfilename can't be a path, just a filename"),
    ("appendfilename a\\\\b.aof", "appendfilename can't be a path, just a filename"),
    ("appenddirname a/b", "appenddirname can't be a path, just a dirname"),
])
def test_file_names_that_are_paths_are_refused(tmp_path, line, err):
    (tmp_path / "x.conf").write_text("port 0\n%s\n" % line)
    p = subprocess.run([cairn_bin(), "x.conf"], cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert p.returncode == 1
    assert err in (p.stdout + p.stderr).decode()


# --- 12. the start-up logo ---------------------------------------------------------

def log_until_ready(proc, read, timeout=30):
    out = b""
    deadline = time.monotonic() + timeout
    while b"Ready to accept connections" not in out and time.monotonic() < deadline:
        chunk = read()
        if not chunk:
            break
        out += chunk
    return out.decode("utf-8", "replace")


def check_logo(log, port, pid):
    lines = log.splitlines()
    port_line = [l for l in lines if l.endswith(" Port: %d" % port)]
    pid_line = [l for l in lines if l.endswith(" PID: %d" % pid)]
    assert len(port_line) == 1 and len(pid_line) == 1, log
    # Redis's harness waits for " PID: <pid>" followed by "Server initialized".
    assert log.index(" PID: %d" % pid) < log.index("Server initialized")
    assert "Running mode=" not in log
    assert "always-show-logo" not in log   # no "not supported" line


def test_always_show_logo_to_a_file(tmp_path):
    port = free_port()
    s = Started(str(tmp_path), ["--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--logfile", "log.txt", "--always-show-logo", "yes"],
                str(tmp_path / "log.txt"))
    try:
        check_logo((tmp_path / "log.txt").read_text(), port, s.proc.pid)
    finally:
        s.stop()


def test_running_mode_line_without_logo(tmp_path):
    port = free_port()
    s = Started(str(tmp_path), ["--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--logfile", "log.txt"], str(tmp_path / "log.txt"))
    try:
        log = (tmp_path / "log.txt").read_text()
        assert ("Running mode=standalone, port=%d." % port) in log
        assert log.index("Running mode=") < log.index("Server initialized")
        assert " PID: " not in log
    finally:
        s.stop()


def test_logo_on_a_terminal(tmp_path):
    import pty
    port = free_port()
    master, slave = pty.openpty()
    proc = subprocess.Popen([cairn_bin(), "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
                            cwd=str(tmp_path), stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        log = log_until_ready(proc, lambda: os.read(master, 65536))
        check_logo(log.replace("\r\n", "\n"), port, proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
        os.close(master)


# --- 10. latency events ---------------------------------------------------------

def test_latency_expire_cycle_and_expire_del(server):
    r = server.client()
    r.config_set("latency-monitor-threshold", 1)
    r.config_set("lazyfree-lazy-expire", "no")
    # Freeing a set of 300k members takes well over 1 ms: the active expire
    # cycle that deletes it is a spike, and so is the deletion itself.
    for base in range(0, 300000, 10000):
        r.sadd("big", *range(base, base + 10000))
    r.pexpire("big", 1)
    for _ in range(3000):
        if r.dbsize() == 0:
            break
        time.sleep(0.01)
    assert r.dbsize() == 0
    events = {e[0] for e in r.execute_command("LATENCY", "LATEST")}
    assert {b"expire-cycle", b"expire-del"} <= events
    assert int(r.info("stats")["expire_cycle_cpu_milliseconds"]) >= 1


# --- 12. directives Cairn used to ignore ----------------------------------------

def is_redis():
    return "redis-server" in os.path.basename(cairn_bin())


def test_latency_tracking_and_its_percentiles(server):
    r = server.client()
    r.config_resetstat()
    r.config_set("latency-tracking-info-percentiles", "50 99.9 100")
    assert r.config_get("latency-tracking-info-percentiles") == {
        "latency-tracking-info-percentiles": "50 99.9 100"}
    r.get("a")
    c = server.connect()

    def latencystats():
        return call(c, "INFO", "latencystats").split(b"\r\n", 1)[1].decode()
    line = [l for l in latencystats().splitlines() if l.startswith("latency_percentiles_usec_get:")][0]
    assert [kv.split("=")[0] for kv in line.split(":")[1].split(",")] == ["p50", "p99.9", "p100"]
    r.config_set("latency-tracking-info-percentiles", "")
    assert "latency_percentiles_usec_get:\r\n" in latencystats()
    for bad, err in (("101", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
                     ("abc", "Invalid latency-tracking-info-percentiles parameters"),
                     ("50  99", "Invalid latency-tracking-info-percentiles parameters")):
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("latency-tracking-info-percentiles", bad)
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument "
                                "'latency-tracking-info-percentiles') - " + err)
    r.config_set("latency-tracking", "no")
    r.config_resetstat()
    r.get("a")
    assert latencystats().strip() == "# Latencystats"


def test_tracking_table_max_keys_evicts_with_invalidation(server):
    a = resp3(server)
    assert call(a, "CLIENT", "TRACKING", "on") == b"+OK\r\n"
    a.send(enc("MGET", "key1", "key2"))
    read_values(a, 1)
    b = server.connect()
    assert call(b, "CONFIG", "SET", "tracking-table-max-keys", "1") == b"+OK\r\n"
    push = read_values(a, 1)
    assert push in (inval(b"key1"), inval(b"key2"))
    assert server.client().info("stats")["tracking_total_keys"] == 1
    assert call(b, "CONFIG", "SET", "tracking-table-max-keys", "0") == b"+OK\r\n"


REFUSED_LINES = [
    ("rename-command FLUSHALL ''", "rename-command is not supported by Cairn"),
    ("sentinel monitor m 127.0.0.1 6379 2", "sentinel directive while not in sentinel mode"),
]


@pytest.mark.parametrize("line,err", REFUSED_LINES)
def test_directives_for_missing_features_are_refused(tmp_path, line, err):
    if is_redis():
        pytest.skip("Redis has these features")
    (tmp_path / "x.conf").write_text("port 0\n%s\n" % line)
    p = subprocess.run([cairn_bin(), "x.conf"], cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert p.returncode == 1
    out = (p.stdout + p.stderr).decode()
    assert "FATAL CONFIG FILE ERROR" in out and err in out


def test_tls_port_refused_as_redis_refuses_tls_it_cannot_set_up(tmp_path):
    """A tls-port that cannot be set up (built with TLS=no, or with TLS but
    no certificate, as Redis) ends start-up as Redis ends it: the reason,
    then Redis's line, exit status 1."""
    import tlshelp
    (tmp_path / "x.conf").write_text("port 0\ntls-port 6380\n")
    p = subprocess.run([cairn_bin(), "x.conf"], cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert p.returncode == 1
    out = (p.stdout + p.stderr).decode()
    if is_redis() or tlshelp.binary_has_tls(cairn_bin()):
        assert "No tls-cert-file configured!" in out
    else:
        assert "TLS is not supported by Cairn" in out
    assert out.rstrip().endswith("Failed to configure TLS. Check logs for more info."), out


def test_missing_features_keep_their_off_values(server):
    r = server.client()
    assert r.config_set("tls-port", "0")
    if not is_redis():
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("tls-port", "6380")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-port') - "
                                "Unable to update TLS configuration. Check server logs.")
        assert r.config_get("tls-port") == {"tls-port": "0"}


RISKY = {"requirepass", "port", "bind", "maxmemory", "appendonly", "save", "dir", "dbfilename",
         "unixsocket", "unixsocketperm", "logfile", "enable-protected-configs", "enable-debug-command"}
# Redis's own refusals for features it was built without (TLS reconfigure,
# hostname checks) that Cairn, lacking the feature, does not reproduce.
KNOWN = {("tls-cluster", "YES"), ("tls-replication", "YES"), ("oom-score-adj-values", "")}


def config_set_result(r, name, value):
    try:
        r.execute_command("CONFIG", "SET", name, value)
    except redis.ResponseError as e:
        return "ERR " + str(e)
    return "OK " + str(r.config_get(name)[name])


def test_config_set_validates_every_parameter_as_redis(start_server, start_oracle):
    ours, theirs = start_server().client(), start_oracle().client()
    names = sorted(n for n in theirs.config_get("*") if n not in RISKY)
    diffs = []
    for name in names:
        for value in ("abc", "-5", "1.5", "YES", "2mb", "nosave now", ""):
            if (name, value) in KNOWN:
                continue
            got = []
            for r in (ours, theirs):
                before = r.config_get(name)[name]
                got.append(config_set_result(r, name, value))
                try:
                    r.execute_command("CONFIG", "SET", name, before)
                except redis.ResponseError:
                    pass
            if got[0] != got[1] and "is not supported by Cairn" not in got[0]:
                diffs.append((name, value, got[0], got[1]))
    assert diffs == [], "\n".join(map(repr, diffs))
