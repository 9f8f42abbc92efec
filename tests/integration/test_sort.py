"""SORT and SORT_RO on lists, sets and sorted sets.

Every deterministic reply is compared byte for byte with redis-server 7.0.15
(compare.same): ordering (numeric, ALPHA, DESC, ties), LIMIT clamping, BY
patterns over strings and hash fields (both hash encodings), BY nosort,
GET patterns, STORE, error texts and the quirks of Redis's pattern and
number parsing.  The only nondeterministic case, a set read in hash order
(BY nosort without STORE on a hashtable set), is compared as a multiset.
Run with CAIRN_BIN=redis-server to re-check the expectations.
"""
import time

import pytest

from compare import same
from requires import require_commands

NUMS = ["3", "1", "2", "10", "-5", "1.5", "2e1", "007", " 4", "0x10", "-0"]


def setup_list(key="l", items=NUMS):
    return [("DEL", key), ("RPUSH", key) + tuple(items)]


# ------------------------------------------------------------ basic ordering

def test_numeric_and_alpha_orders(server, oracle):
    words = ["banana", "apple", "Cherry", "apple2", "", "a b", "z", "10", "9", "\xff", "aa"]
    same(server, oracle, [
        ("SORT", "l"), ("SORT", "l", "ASC"), ("SORT", "l", "DESC"),
        ("SORT", "l", "ALPHA"), ("SORT", "l", "ALPHA", "DESC"), ("SORT", "l", "DESC", "ASC"),
        ("SORT", "w", "ALPHA"), ("SORT", "w", "ALPHA", "DESC"), ("SORT", "w", "alpha", "store", "d"),
        ("LRANGE", "d", 0, -1), ("SORT", "w"), ("SORT_RO", "l"), ("SORT_RO", "w", "ALPHA", "DESC"),
    ], setup=setup_list() + [("RPUSH", "w") + tuple(words)])


def test_numeric_ties_fall_back_to_element_bytes(server, oracle):
    same(server, oracle, [
        ("SORT", "t"), ("SORT", "t", "DESC"), ("SORT", "t", "BY", "w_*"), ("SORT", "t", "BY", "w_*", "DESC"),
        ("SORT", "t", "BY", "missing_*"), ("SORT", "t", "BY", "missing_*", "DESC"),
    ], setup=[("RPUSH", "t", "1.0", "1", "01", "1e0", "+1"),
              ("RPUSH", "u", "b", "a", "c"), ("MSET", "w_1", 5, "w_01", 5, "w_1e0", 5)])


def test_number_parsing_quirks(server, oracle):
    # strtod on the C string: leading spaces, hex, inf, "" (= 0) accepted;
    # trailing garbage and NaN refused; text after a NUL byte is ignored.
    same(server, oracle, [
        ("SORT", "ok"), ("SORT", "ok", "DESC"), ("SORT", "nan"), ("SORT", "junk"), ("SORT", "junk", "ALPHA"),
        ("SORT", "nul"), ("SORT", "ok", "BY", "w_*"),
    ], setup=[("RPUSH", "ok", " 12", "0x10", "inf", "-inf", "", "1e-300", "+7", "\t3", "1e308"),
              ("RPUSH", "nan", "nan"), ("RPUSH", "junk", "1", "2x", "3"),
              ("RPUSH", "nul", "12\x00abc", "3"), ("SET", "w_0x10", "-1e5"), ("SET", "w_inf", "0X1P3")])


@pytest.mark.parametrize("value", ["1e400", "-1e400", "1e-400", "4e-320"])
def test_number_out_of_range(server, oracle, value):
    # Overflow and underflow (ERANGE) are refused.  One SORT per fresh
    # server: Redis 7.0 never clears errno before strtod, so after an ERANGE
    # its later SORTs on the same connection may fail too (not emulated).
    same(server, oracle, [("SORT", "l")], setup=[("RPUSH", "l", "1", value)])


def test_error_scores_leave_store_untouched(server, oracle):
    same(server, oracle, [
        ("SORT", "l", "STORE", "d"), ("LRANGE", "d", 0, -1), ("SORT", "l", "BY", "w_*", "STORE", "d"),
        ("GET", "d"), ("SORT", "l", "BY", "w_*", "ALPHA", "STORE", "d"), ("LRANGE", "d", 0, -1),
    ], setup=[("RPUSH", "l", "a", "b"), ("SET", "d", "keep"), ("SET", "w_a", "x")])


# ------------------------------------------------------------ LIMIT

LIMITS = [(0, 0), (0, 1), (1, 3), (-1, 3), (-100, 2), (2, -1), (2, -100), (100, 2), (10, 1), (11, 1),
          (0, 9223372036854775807), (9223372036854775807, 9223372036854775807),
          (-9223372036854775808, -9223372036854775808), (3, 0), (1, 100)]


@pytest.mark.parametrize("by", [None, "nosort", "w_*"])
def test_limit_clamping(server, oracle, by):
    script = []
    for off, cnt in LIMITS:
        for order in ("ASC", "DESC"):
            cmd = ("SORT", "l", "LIMIT", off, cnt, order)
            if by:
                cmd += ("BY", by)
            script.append(cmd)
            script.append(cmd + ("GET", "#", "GET", "w_*"))
            script.append(cmd + ("STORE", "d"))
            script.append(("LRANGE", "d", 0, -1))
    script += [("SORT", "empty", "LIMIT", 0, 1), ("SORT", "empty", "LIMIT", 0, 1, "BY", "nosort", "DESC")]
    setup = setup_list(items=["5", "3", "9", "1", "7", "2", "8", "4", "6", "10"])
    setup += [("SET", "w_%d" % i, (i * 7) % 11) for i in range(1, 11)]
    same(server, oracle, script, setup=setup)


def test_limit_errors(server, oracle):
    same(server, oracle, [
        ("SORT", "l", "LIMIT", "x", 1), ("SORT", "l", "LIMIT", 1, "y"), ("SORT", "l", "LIMIT", 1),
        ("SORT", "l", "LIMIT"), ("SORT", "l", "LIMIT", "1.5", 2), ("SORT", "l", "LIMIT", "9223372036854775808", 1),
        ("SORT", "str", "LIMIT", "x", 1), ("SORT", "str", "LIMIT", 0, 1),
    ], setup=setup_list() + [("SET", "str", "v")])


# ------------------------------------------------------------ BY

def test_by_string_weights(server, oracle):
    same(server, oracle, [
        ("SORT", "l", "BY", "w_*"), ("SORT", "l", "BY", "w_*", "DESC"), ("SORT", "l", "BY", "w_*", "ALPHA"),
        ("SORT", "l", "BY", "w_*", "ALPHA", "DESC"), ("SORT", "l", "BY", "w_*", "LIMIT", 1, 2),
        ("SORT", "l", "BY", "w_*", "ALPHA", "STORE", "d"), ("LRANGE", "d", 0, -1),
        ("SORT", "l", "BY", "pre*post"), ("SORT", "l", "BY", "*"), ("SORT", "l", "BY", "w_*_*"),
        ("SORT", "l", "BY", "bad_*"), ("SORT", "l", "BY", "bad_*", "ALPHA"),
        ("SORT", "l", "BY", "list_*"), ("SORT", "l", "BY", "list_*", "ALPHA"),
    ], setup=[("RPUSH", "l", "a", "b", "c", "d", "e"), ("MSET", "w_a", 3, "w_b", 1, "w_c", "2.5", "w_e", "-1"),
              ("MSET", "preapost", 2, "prebpost", 1, "a", 9, "b", 8, "c", 7, "d", 6, "e", 5),
              ("MSET", "w_a_*", 1, "w_b_*", 0), ("MSET", "bad_a", "x"),
              ("RPUSH", "list_a", 1)])


def test_by_hash_fields_both_encodings(start_server, start_oracle):
    script = [
        ("SORT", "l", "BY", "h_*->w"), ("SORT", "l", "BY", "h_*->w", "DESC"),
        ("SORT", "l", "BY", "h_*->name", "ALPHA"), ("SORT", "l", "BY", "h_*->name", "ALPHA", "DESC"),
        ("SORT", "l", "BY", "h_*->nofield"), ("SORT", "l", "BY", "h_*->"), ("SORT", "l", "BY", "h_*->->w"),
        ("SORT", "l", "BY", "s_*->w"), ("SORT", "l", "GET", "h_*->w", "GET", "h_*->name", "GET", "#"),
        ("SORT", "l", "GET", "h_*->"), ("SORT", "l", "GET", "s_*->w"), ("SORT", "l", "GET", "h_*->name->x"),
        ("SORT", "l", "BY", "h_*->w", "GET", "h_*->long"), ("SORT", "l", "BY", "h->*"), ("SORT", "l", "GET", "h->*"),
    ]
    setup = [("RPUSH", "l", "1", "2", "3", "4")]
    for i, (w, name) in enumerate([("10", "delta"), ("-3", "alpha"), ("2.5", "charlie")], 1):
        setup.append(("HSET", "h_%d" % i, "w", w, "name", name, "long", "x" * (i * 40)))
    setup += [("HSET", "h_4", "name", "bravo"), ("SET", "s_1", "5"), ("HSET", "h", "-*", "f"),
              ("HSET", "h_1", "name->x", "nx")]
    for cfg in ({}, {"hash-max-listpack-value": "16"}):
        a, b = start_server(**cfg), start_oracle(**cfg)
        enc = same(a, b, script + [("OBJECT", "ENCODING", "h_1")], setup=setup)[-1]
        assert enc == (b"hashtable" if cfg else b"listpack")


def test_by_nosort_keeps_list_order(server, oracle):
    same(server, oracle, [
        ("SORT", "l", "BY", "nosort"), ("SORT", "l", "BY", "nosort", "DESC"),
        ("SORT", "l", "BY", "nosort", "LIMIT", 2, 3), ("SORT", "l", "BY", "nosort", "LIMIT", 2, 3, "DESC"),
        ("SORT", "l", "BY", "nosort", "ALPHA"), ("SORT", "l", "BY", "nosort", "GET", "#", "GET", "v_*"),
        ("SORT", "l", "BY", "nosort", "STORE", "d"), ("LRANGE", "d", 0, -1),
        # A BY without '*' disables sorting for good, whatever comes later.
        ("SORT", "l", "BY", "nosort", "BY", "v_*"), ("SORT", "l", "BY", "v_*", "BY", "nosort"),
        ("SORT", "bad", "BY", "nosort"), ("SORT", "bad", "BY", "constant"),
    ], setup=[("RPUSH", "l", "c", "a", "d", "b", "e", "f"), ("MSET", "v_a", 1, "v_b", 2),
              ("RPUSH", "bad", "x", "y")])


def test_long_list_across_nodes(start_server, start_oracle):
    items = [str((i * 7919) % 1000) for i in range(600)] + ["x" * 9000]
    script = [("SORT", "l", "BY", "nosort", "LIMIT", 100, 20), ("SORT", "l", "BY", "nosort", "LIMIT", 100, 20, "DESC"),
              ("SORT", "l", "ALPHA", "LIMIT", 500, 200), ("SORT", "l", "BY", "nosort", "DESC", "LIMIT", 0, 3),
              ("SORT", "l", "ALPHA", "STORE", "d"), ("LLEN", "d"), ("LRANGE", "d", 590, -1)]
    a = start_server(**{"list-max-listpack-size": "5", "list-compress-depth": "1"})
    b = start_oracle(**{"list-max-listpack-size": "5", "list-compress-depth": "1"})
    same(a, b, script, setup=[("RPUSH", "l") + tuple(items)])


# ------------------------------------------------------------ GET

def test_get_patterns(server, oracle):
    same(server, oracle, [
        ("SORT", "l", "GET", "#"), ("SORT", "l", "GET", "v_*"), ("SORT", "l", "GET", "v_*", "GET", "#", "GET", "v_*"),
        ("SORT", "l", "GET", "nostar"), ("SORT", "l", "GET", "##"), ("SORT", "l", "GET", "v_*", "DESC", "LIMIT", 1, 1),
        ("SORT", "l", "GET", "lst_*"), ("SORT", "l", "GET", "*"), ("SORT", "l", "GET", "v_**"),
        ("SORT", "l", "GET", "v_*", "STORE", "d"), ("LRANGE", "d", 0, -1),
        ("SORT", "l", "GET", "#", "GET", "nostar", "STORE", "d"), ("LRANGE", "d", 0, -1),
        ("SORT", "l", "GET"), ("SORT", "l", "BY"), ("SORT", "l", "STORE"),
    ], setup=[("RPUSH", "l", "3", "1", "2"), ("MSET", "v_1", "one", "v_3", "three", "1", "k1", "v_1*", "star"),
              ("RPUSH", "lst_2", "x")])


def test_seed_notification_join(server, oracle):
    """The seed's notification system: message ids in a set, titles in hashes."""
    setup = [("SADD", "usr:123:msg", "1001", "1003", "1002", "999")]
    for mid, title in [("1001", "Hello"), ("1002", "Re: Hello"), ("1003", "Meeting"), ("999", "Welcome")]:
        setup.append(("HSET", "msg:" + mid, "title", title, "from", "usr:7"))
    got = same(server, oracle, [
        ("SORT", "usr:123:msg", "GET", "msg:*->title"),
        ("SORT", "usr:123:msg", "GET", "msg:*->title", "DESC"),
        ("SORT", "usr:123:msg", "GET", "#", "GET", "msg:*->title", "GET", "msg:*->from", "LIMIT", 0, 2),
        ("SORT_RO", "usr:123:msg", "GET", "msg:*->title"),
    ], setup=setup)
    assert got[0] == [b"Welcome", b"Hello", b"Re: Hello", b"Meeting"]


# ------------------------------------------------------------ sets

def test_sets_both_encodings(server, oracle):
    same(server, oracle, [
        ("SORT", "si"), ("SORT", "si", "DESC"), ("SORT", "si", "ALPHA"), ("SORT", "si", "BY", "nosort"),
        ("SORT", "si", "BY", "nosort", "DESC", "LIMIT", 1, 2), ("SORT", "sh", "ALPHA"), ("SORT", "sh", "ALPHA", "DESC"),
        ("SORT", "sh"), ("SORT", "sh", "BY", "w_*"), ("SORT", "sh", "BY", "w_*", "DESC", "GET", "#", "GET", "w_*"),
        # BY nosort + STORE sorts a set (ALPHA) so that replicas agree.
        ("SORT", "sh", "BY", "nosort", "STORE", "d"), ("LRANGE", "d", 0, -1),
        ("SORT", "si", "BY", "nosort", "STORE", "d", "DESC", "LIMIT", 1, 3), ("LRANGE", "d", 0, -1),
        ("SORT", "sh", "BY", "nosort", "GET", "w_*", "STORE", "d"), ("LRANGE", "d", 0, -1),
        ("SORT", "shn"), ("SORT", "shn", "DESC", "LIMIT", 0, 3),
    ], setup=[("SADD", "si", 5, 3, 9, -1, 100), ("SADD", "sh", "b", "c", "a", "dd", "e"),
              ("MSET", "w_a", 3, "w_b", 1, "w_c", 2, "w_dd", 5, "w_e", 4),
              ("SADD", "shn", "1.5", "2", "-3", "1e2")])


def test_set_unsorted_read_is_the_whole_set(server, oracle):
    a, b = server.client(), oracle.client()
    for r in (a, b):
        r.sadd("sh", *["m%d" % i for i in range(20)])
    for cmd in [("SORT", "sh", "BY", "nosort"), ("SORT", "sh", "BY", "nosort", "LIMIT", 0, 100)]:
        assert sorted(a.execute_command(*cmd)) == sorted(b.execute_command(*cmd))
    assert len(a.execute_command("SORT", "sh", "BY", "nosort", "LIMIT", 5, 10)) == 10


# ------------------------------------------------------------ sorted sets

def test_sorted_sets(server, oracle):
    require_commands(server, "zadd")
    same(server, oracle, [
        ("SORT", "z"), ("SORT", "z", "DESC"), ("SORT", "z", "ALPHA"), ("SORT", "z", "BY", "nosort"),
        ("SORT", "z", "BY", "nosort", "DESC"), ("SORT", "z", "BY", "nosort", "LIMIT", 1, 2),
        ("SORT", "z", "BY", "nosort", "LIMIT", 1, 2, "DESC"), ("SORT", "z", "BY", "nosort", "LIMIT", 10, 2),
        ("SORT", "z", "BY", "w_*"), ("SORT", "z", "BY", "nosort", "GET", "w_*", "GET", "#"),
        ("SORT", "z", "BY", "nosort", "STORE", "d"), ("LRANGE", "d", 0, -1), ("SORT_RO", "z", "BY", "nosort"),
        ("SORT", "zs", "ALPHA", "BY", "nosort", "LIMIT", 0, 2), ("SORT", "zs"),
    ], setup=[("ZADD", "z", 3, "10", 1, "30", 2, "20", 2, "5", -1, "7"), ("MSET", "w_10", 1, "w_30", 3, "w_7", 2),
              ("ZADD", "zs", 1, "b", 1, "a", 0, "c")])


def test_sorted_set_listpack_and_skiplist(start_server, start_oracle):
    srv = start_server(**{"zset-max-listpack-entries": "4"})
    require_commands(srv, "zadd")
    ora = start_oracle(**{"zset-max-listpack-entries": "4"})
    setup = [("ZADD", "z") + tuple(x for i in range(10) for x in (i % 3, "m%d" % i))]
    same(srv, ora, [("SORT", "z", "BY", "nosort", "LIMIT", 2, 5), ("SORT", "z", "BY", "nosort", "DESC"),
                    ("SORT", "z", "ALPHA", "DESC"), ("OBJECT", "ENCODING", "z")], setup=setup)


def test_sort_leaves_sorted_sets_as_skiplists(server, oracle):
    """SORT and SORT_RO convert a listpack sorted set to a skiplist once
    the arguments parsed (a syntax error leaves it), as Redis 7.0 does."""
    require_commands(server, "zadd")
    enc = [("OBJECT", "ENCODING", k) for k in ("a", "b", "c", "d", "e")]
    same(server, oracle, [
        ("SORT", "a", "LIMIT"), ("SORT", "b", "BY", "nosort", "GET"), ("SORT", "c", "BY", "nosort", "LIMIT", 5, 1),
        ("SORT_RO", "d"), ("SORT", "e", "BY", "nosort", "ALPHA", "STORE", "dst"), ("LRANGE", "dst", 0, -1),
    ] + enc, setup=[("ZADD", k, 1, "x", 2, "y") for k in ("a", "b", "c", "d", "e")])


# ------------------------------------------------------------ STORE

def test_store_semantics(server, oracle):
    same(server, oracle, [
        ("SORT", "l", "STORE", "d"), ("TYPE", "d"), ("OBJECT", "ENCODING", "d"), ("TTL", "d"), ("LRANGE", "d", 0, -1),
        ("SORT", "l", "STORE", "str"), ("TYPE", "str"),
        ("SORT", "missing", "STORE", "d"), ("EXISTS", "d"),
        ("SORT", "l", "LIMIT", 5, 5, "STORE", "l2"), ("SORT", "l", "LIMIT", 0, 0, "STORE", "l2"), ("EXISTS", "l2"),
        ("SORT", "l", "STORE", "a", "STORE", "b"), ("EXISTS", "a"), ("LRANGE", "b", 0, -1),
        ("SORT", "l", "STORE", "l", "DESC"), ("LRANGE", "l", 0, -1),
        ("SORT_RO", "l", "STORE", "x"), ("SORT", "l", "store", "z", "get", "nope_*"), ("LRANGE", "z", 0, -1),
    ], setup=[("RPUSH", "l", 2, 1, 3), ("SET", "d", "x", "EX", 100), ("SET", "str", "v"), ("SET", "l2", "v")])


def test_store_keyspace_events(server, oracle):
    for srv in (server, oracle):
        r = srv.client()
        r.config_set("notify-keyspace-events", "KEA")
        r.rpush("l", 2, 1)
        p = srv.client().pubsub()
        p.psubscribe("__key*__:*")
        p.get_message(timeout=2)
        r.execute_command("SORT", "l", "STORE", "d")
        r.execute_command("SORT", "nokey", "STORE", "d")
        r.execute_command("SORT", "nokey", "STORE", "d")
        r.execute_command("SORT", "l")
        r.set("end", 1)
        events = []
        while True:
            m = p.get_message(timeout=2)
            if m is None:
                break
            if m["type"] == "pmessage":
                events.append((m["channel"], m["data"]))
                if m["channel"].endswith(b":set"):
                    break
        srv.events = events
        p.close()
    assert server.events == oracle.events
    assert (b"__keyevent@0__:sortstore", b"d") in server.events


def test_store_counts_as_dirty_and_wakes_blocked_list_clients(server, oracle):
    for srv in (server, oracle):
        r = srv.client()
        r.rpush("l", 1, 2)
        before = r.info("persistence")["rdb_changes_since_last_save"]
        r.execute_command("SORT", "l", "GET", "#", "GET", "x_*", "STORE", "d")
        srv.dirty = r.info("persistence")["rdb_changes_since_last_save"] - before
        waiter = srv.client()
        waiter_conn = waiter.connection_pool.get_connection("BLPOP")
        waiter_conn.send_command("BLPOP", "fresh", 5)
        for _ in range(100):
            if r.info("clients")["blocked_clients"] == 1:
                break
            time.sleep(0.02)
        r.execute_command("SORT", "l", "STORE", "fresh")
        srv.popped = waiter_conn.read_response()
    assert server.dirty == oracle.dirty == 4
    assert server.popped == oracle.popped == [b"fresh", b"1"]


# ------------------------------------------------------------ errors, types

def test_errors_and_wrongtype(server, oracle):
    same(server, oracle, [
        ("SORT",), ("SORT_RO",), ("SORT", "l", "foo"), ("SORT", "str"), ("SORT", "h"), ("SORT", "str", "foo"),
        ("SORT", "l", "ALPHA", "nosuch"), ("SORT_RO", "l", "STORE", "d"), ("SORT_RO", "str"),
        ("SORT", "l", "BY", "h_*"), ("SORT", "l", "GET", "h_*"), ("SORT", "l", "BY", "str_*->f"),
        ("SORT", "missing"), ("SORT", "missing", "GET", "#"), ("SORT_RO", "missing", "LIMIT", 0, 10),
    ], setup=[("RPUSH", "l", "a", "b"), ("SET", "str", "v"), ("HSET", "h", "f", "v"), ("HSET", "h_a", "f", 1),
              ("SET", "str_a", "1")])


def test_command_metadata(server, oracle):
    same(server, oracle, [
        ("COMMAND", "INFO", "sort", "sort_ro"),
        ("COMMAND", "GETKEYS", "SORT", "l"), ("COMMAND", "GETKEYS", "SORT", "l", "STORE", "d"),
        ("COMMAND", "GETKEYS", "SORT", "l", "BY", "w_*", "GET", "g_*", "LIMIT", 0, 1, "STORE", "d"),
        ("COMMAND", "GETKEYS", "SORT", "l", "STORE", "store", "x"), ("COMMAND", "GETKEYS", "SORT", "l", "STORE"),
        ("COMMAND", "GETKEYS", "SORT", "l", "GET", "store", "d"), ("COMMAND", "GETKEYS", "SORT", "l", "LIMIT", "store", "x", "y"),
        ("COMMAND", "GETKEYS", "SORT", "l", "store", "a", "STORE", "b"),
        ("COMMAND", "GETKEYS", "SORT_RO", "l", "BY", "x", "GET", "y"), ("COMMAND", "GETKEYS", "SORT_RO", "l", "STORE", "d"),
    ])


def test_resp3_replies(server, oracle):
    a, b = server.raw, oracle.raw
    payload = (b"HELLO 3\r\nRPUSH l 2 1\r\nSORT l GET # GET nope_*\r\nSORT l STORE d\r\n")
    ra, rb = a(payload), b(payload)
    # Skip the HELLO map (server identity differs; its last field is
    # modules, an empty array here); compare what follows.
    end = b"modules\r\n*0\r\n"
    assert ra[ra.index(end) + len(end):] == rb[rb.index(end) + len(end):]


def test_hashtable_set_with_store_uses_bytes_not_locale(server, oracle):
    same(server, oracle, [
        ("SORT", "s", "ALPHA", "STORE", "d"), ("LRANGE", "d", 0, -1), ("SORT", "s", "ALPHA"),
        ("SORT", "s", "BY", "w_*", "ALPHA", "STORE", "d"), ("LRANGE", "d", 0, -1),
    ], setup=[("SADD", "s", "B", "a", "\xc3\xa9", "b", "A", "_", "1"),
              ("MSET", "w_a", "x\x00b", "w_b", "x\x00a", "w_B", "x", "w_A", "", "w__", "y", "w_1", "x\x00"),
              ("SET", "w_\xc3\xa9", "\xff")])
