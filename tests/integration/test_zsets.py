"""Sorted sets: every scenario runs on cairn and on redis-server 7.0.15 and
the raw replies must be identical (listhelp.diff), in RESP2 and RESP3, for
both encodings (listpack and skiplist) and across the conversion."""
import pytest

from listhelp import Conn, diff, wait_blocked
from requires import require_commands

LONG = "x" * 65


def big(key, n=130, score=lambda i: i % 7):
    args = ["ZADD", key]
    for i in range(n):
        args += [str(score(i)), "m%03d" % i]
    return args


def setups():
    """(name, commands building z) for both encodings."""
    base = [["ZADD", "z", "1", "a", "1", "b", "2", "c", "-0", "d", "+inf", "e", "-inf", "f", "0.5", "g",
             "1e300", "h", "2", "bb", "1.25", "aa", "7", "1"]]
    return [("listpack", base), ("skiplist", base + [["ZADD", "z", "3", LONG], ["ZREM", "z", LONG]])]


@pytest.mark.parametrize("resp", [2, 3])
@pytest.mark.parametrize("enc", ["listpack", "skiplist"])
def test_reads_and_ranges(server, oracle, enc, resp):
    setup = dict(setups())[enc]
    cmds = setup + [["OBJECT", "ENCODING", "z"], ["ZCARD", "z"], ["ZSCORE", "z", "d"], ["ZSCORE", "z", "e"],
                    ["ZMSCORE", "z", "a", "nope", "h"], ["ZRANK", "z", "c"], ["ZREVRANK", "z", "c"],
                    ["ZRANK", "z", "nope"], ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
                    ["ZRANGE", "z", "-3", "-1"], ["ZRANGE", "z", "5", "1"], ["ZRANGE", "z", "0", "100", "REV"]]
    for lo, hi in [("-inf", "+inf"), ("(1", "2"), ("1", "(2"), ("(1", "(1"), ("1", "1"), ("2", "1"),
                   ("-inf", "(-inf"), ("(0", "+inf"), ("0", "0")]:
        cmds += [["ZCOUNT", "z", lo, hi], ["ZRANGEBYSCORE", "z", lo, hi, "WITHSCORES"],
                 ["ZREVRANGEBYSCORE", "z", hi, lo, "WITHSCORES", "LIMIT", "1", "2"],
                 ["ZRANGE", "z", lo, hi, "BYSCORE", "LIMIT", "1", "-1"],
                 ["ZRANGE", "z", hi, lo, "BYSCORE", "REV", "WITHSCORES"],
                 ["ZRANGEBYSCORE", "z", lo, hi, "LIMIT", "-1", "3"]]
    cmds += [["ZREVRANGE", "z", "0", "2", "WITHSCORES"], ["ZSCAN", "z", "0", "COUNT", "100", "MATCH", "a?"]]
    for bad in (["ZRANGEBYSCORE", "z", "x", "1"], ["ZRANGEBYSCORE", "z", "nan", "1"], ["ZCOUNT", "z", "((1", "2"],
                ["ZRANGE", "z", "0", "1", "LIMIT", "0", "1"], ["ZRANGE", "z", "a", "b", "BYLEX", "WITHSCORES"],
                ["ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX"], ["ZRANGE", "z", "0", "1", "REV", "REV"],
                ["ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "0"], ["ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"],
                ["ZRANGEBYLEX", "z", "a", "+"], ["ZLEXCOUNT", "z", "[a", "b"], ["ZRANGE", "z", "x", "1"],
                ["ZRANGESTORE", "d", "z", "0", "1", "WITHSCORES"], ["ZRANK", "z"], ["ZSCORE", "z", "a", "b"]):
        cmds.append(bad)
    cmds += [["SET", "s", "v"], ["ZRANGE", "s", "0", "1"], ["ZSCORE", "s", "a"], ["ZCARD", "s"]]
    diff(server, oracle, cmds, resp)


@pytest.mark.parametrize("resp", [2, 3])
def test_lex_ranges_on_equal_scores(server, oracle, resp):
    cmds = [["ZADD", "l", "0", w] for w in ["a", "ab", "abc", "b", "ba", "c", "", "\xff"]]
    for lo, hi in [("-", "+"), ("[a", "[b"), ("(a", "(b"), ("[ab", "+"), ("-", "(b"), ("[c", "[a"), ("+", "-"),
                   ("[", "+"), ("(", "[b"), ("[abc", "[abc"), ("(abc", "[abc")]:
        cmds += [["ZLEXCOUNT", "l", lo, hi], ["ZRANGEBYLEX", "l", lo, hi], ["ZREVRANGEBYLEX", "l", hi, lo],
                 ["ZRANGE", "l", lo, hi, "BYLEX", "LIMIT", "1", "2"], ["ZRANGE", "l", hi, lo, "BYLEX", "REV"]]
    cmds += [["ZREMRANGEBYLEX", "l", "[ab", "(c"], ["ZRANGE", "l", "0", "-1"]]
    diff(server, oracle, cmds, resp)
    # the same on a skiplist
    cmds = [big("L", 130, lambda i: 0)] + cmds[8:]
    diff(server, oracle, cmds, resp)


@pytest.mark.parametrize("resp", [2, 3])
def test_zadd_flags_and_errors(server, oracle, resp):
    cmds = [["ZADD", "z", "1", "a"], ["ZADD", "z", "NX", "5", "a", "2", "b"], ["ZADD", "z", "XX", "5", "a", "3", "c"],
            ["ZADD", "z", "XX", "CH", "5", "a", "6", "b"], ["ZADD", "z", "GT", "CH", "1", "a", "9", "b"],
            ["ZADD", "z", "LT", "CH", "1", "a", "10", "b"], ["ZADD", "z", "INCR", "2", "a"],
            ["ZADD", "z", "INCR", "NX", "2", "a"], ["ZADD", "z", "INCR", "XX", "2", "zz"],
            ["ZADD", "z", "INCR", "GT", "-1", "a"], ["ZADD", "z", "GT", "5", "new"],
            ["ZADD", "z", "NX", "XX", "1", "a"], ["ZADD", "z", "GT", "LT", "1", "a"], ["ZADD", "z", "NX", "GT", "1", "a"],
            ["ZADD", "z", "INCR", "1", "a", "2", "b"], ["ZADD", "z", "1", "a", "2"], ["ZADD", "z", "nan", "a"],
            ["ZADD", "z", "x", "a"], ["ZADD", "z", "NX"], ["ZADD", "z", "inf", "i"], ["ZADD", "z", "INCR", "-inf", "i"],
            ["ZINCRBY", "z", "-inf", "i"], ["ZINCRBY", "z", "nan", "i"], ["ZINCRBY", "z", "1.5", "fresh"],
            ["ZINCRBY", "z", "x", "a"], ["ZADD", "xx", "XX", "1", "a"], ["EXISTS", "xx"],
            ["ZADD", "xx", "XX", "INCR", "1", "a"], ["ZADD", "z", "0.1", "p"], ["ZSCORE", "z", "p"],
            ["ZRANGE", "z", "0", "-1", "WITHSCORES"], ["ZREM", "z", "a", "nope", "b"], ["ZREM", "nokey", "a"],
            ["SET", "s", "1"], ["ZADD", "s", "1", "a"], ["ZINCRBY", "s", "1", "a"], ["ZREM", "s", "a"]]
    diff(server, oracle, cmds, resp)


def test_encoding_conversion(server, oracle):
    cmds = [big("z", 128), ["OBJECT", "ENCODING", "z"], ["ZADD", "z", "1", "one-more"], ["OBJECT", "ENCODING", "z"],
            ["ZREMRANGEBYRANK", "z", "0", "-3"], ["OBJECT", "ENCODING", "z"], ["ZCARD", "z"],
            ["ZADD", "w", "1", "a"], ["ZADD", "w", "2", "y" * 64], ["OBJECT", "ENCODING", "w"],
            ["ZADD", "w", "3", "y" * 65], ["OBJECT", "ENCODING", "w"], ["ZADD", "v", "1", LONG], ["OBJECT", "ENCODING", "v"],
            ["ZRANGESTORE", "d1", "w", "0", "0"], ["OBJECT", "ENCODING", "d1"], ["ZRANGESTORE", "d2", "w", "0", "-1"],
            ["OBJECT", "ENCODING", "d2"], ["ZUNIONSTORE", "d3", "1", "z"], ["OBJECT", "ENCODING", "d3"],
            ["ZINTERSTORE", "d4", "2", "w", "v"], ["EXISTS", "d4"], ["ZDIFFSTORE", "d5", "1", "w"], ["OBJECT", "ENCODING", "d5"],
            ["CONFIG", "SET", "zset-max-listpack-entries", "0"], ["ZADD", "e", "1", "a"], ["OBJECT", "ENCODING", "e"],
            ["ZADD", "e", "-0", "m"], ["ZSCORE", "e", "m"], ["ZRANGESTORE", "e2", "e", "0", "-1"],
            ["OBJECT", "ENCODING", "e2"], ["CONFIG", "SET", "zset-max-listpack-entries", "128"],
            ["ZUNIONSTORE", "e3", "1", "e"], ["OBJECT", "ENCODING", "e3"], ["ZSCORE", "e3", "m"],
            ["ZADD", "f", "-0", "m"], ["ZSCORE", "f", "m"], ["ZSCAN", "f", "0"]]
    diff(server, oracle, cmds)


def test_zrangestore_signed_zero_across_conversion(server, oracle):
    """ZRANGESTORE by score or lex starts its destination as a listpack
    whatever the count, which drops the sign of -0 from the first 128
    members; by rank a count over 128 starts a skiplist, which keeps it."""
    src = big("src", 130, lambda i: -(i % 5) - 1)
    cmds = [src, ["ZUNIONSTORE", "z", "1", "src", "WEIGHTS", "0"], ["OBJECT", "ENCODING", "z"]]
    for q in (["-inf", "inf", "BYSCORE"], ["+inf", "-inf", "BYSCORE", "REV"], ["-", "+", "BYLEX"],
              ["+", "-", "BYLEX", "REV"], ["-inf", "inf", "BYSCORE", "LIMIT", "1", "129"],
              ["-inf", "inf", "BYSCORE", "LIMIT", "0", "128"], ["0", "-1"], ["0", "127"], ["0", "128"],
              ["0", "-1", "REV"]):
        cmds += [["ZRANGESTORE", "d", "z"] + q, ["OBJECT", "ENCODING", "d"],
                 ["ZRANGE", "d", "0", "-1", "WITHSCORES"]]
    diff(server, oracle, cmds)


@pytest.mark.parametrize("resp", [2, 3])
def test_remove_ranges_and_pops(server, oracle, resp):
    for setup in (["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"], big("z", 140, lambda i: i)):
        cmds = [setup, ["ZREMRANGEBYRANK", "z", "1", "1"], ["ZREMRANGEBYRANK", "z", "-1", "-1"],
                ["ZREMRANGEBYRANK", "z", "5", "1"], ["ZREMRANGEBYSCORE", "z", "(1", "2"],
                ["ZREMRANGEBYSCORE", "z", "x", "2"], ["ZREMRANGEBYRANK", "z", "x", "1"], ["ZPOPMIN", "z"],
                ["ZPOPMAX", "z"], ["ZPOPMIN", "z", "2"], ["ZPOPMAX", "z", "0"], ["ZPOPMAX", "z", "-1"],
                ["ZPOPMIN", "z", "x"], ["ZPOPMIN", "z", "1", "2"], ["ZPOPMIN", "nokey"], ["ZPOPMIN", "nokey", "3"],
                ["ZMPOP", "2", "nokey", "z", "MIN"], ["ZMPOP", "1", "z", "MAX", "COUNT", "3"],
                ["ZMPOP", "0", "z", "MIN"], ["ZMPOP", "1", "z", "foo"], ["ZMPOP", "2", "z", "MIN"],
                ["ZMPOP", "1", "z", "MIN", "COUNT", "0"], ["ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "2"],
                ["ZMPOP", "1", "nokey", "MIN"], ["ZPOPMAX", "z", "1000"], ["EXISTS", "z"],
                ["ZREMRANGEBYSCORE", "z", "-inf", "+inf"]]
        diff(server, oracle, cmds, resp)


@pytest.mark.parametrize("resp", [2, 3])
def test_set_operations(server, oracle, resp):
    setup = [["ZADD", "a", "1", "x", "2", "y", "3", "z"], ["ZADD", "b", "4", "y", "5", "z", "6", "w"],
             ["SADD", "si", "1", "2", "3"], ["SADD", "sh", "x", "w", "q"], ["ZADD", "c", "+inf", "x", "-inf", "y"],
             big("big", 140)]
    cmds = list(setup)
    for keys in (["a", "b"], ["a", "si"], ["a", "sh", "b"], ["a", "nokey"], ["c", "c"], ["big", "a"], ["sh"]):
        n = str(len(keys))
        for op in ("ZUNION", "ZINTER", "ZDIFF"):
            cmds.append([op, n] + keys + ["WITHSCORES"])
            cmds += [[op + "STORE", "dst", n] + keys, ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
                     ["OBJECT", "ENCODING", "dst"]]
            if op != "ZDIFF":
                for agg in ("SUM", "MIN", "MAX"):
                    cmds.append([op, n] + keys + ["WEIGHTS"] + ["2"] * (len(keys) - 1) + ["0"] +
                                ["AGGREGATE", agg, "WITHSCORES"])
        cmds += [["ZINTERCARD", n] + keys, ["ZINTERCARD", n] + keys + ["LIMIT", "1"]]
    cmds += [["ZUNION", "0", "a"], ["ZUNIONSTORE", "d", "0", "a"], ["ZUNION", "2", "a"], ["ZUNION", "x", "a"],
             ["ZUNION", "1", "a", "WEIGHTS", "1", "2"], ["ZUNION", "1", "a", "WEIGHTS", "x"],
             ["ZUNION", "1", "a", "AGGREGATE", "avg"], ["ZUNIONSTORE", "d", "1", "a", "WITHSCORES"],
             ["ZDIFF", "1", "a", "WEIGHTS", "1"], ["ZINTERCARD", "0", "a"], ["ZINTERCARD", "1", "a", "LIMIT", "-1"],
             ["ZINTERCARD", "1", "a", "foo"], ["SET", "str", "v"], ["ZUNION", "2", "a", "str"],
             ["ZINTERSTORE", "dst", "2", "a", "str", "junk"], ["ZUNIONSTORE", "dst", "1", "nokey"], ["EXISTS", "dst"]]
    diff(server, oracle, cmds, resp)


@pytest.mark.parametrize("resp", [2, 3])
def test_zrandmember_shapes(server, oracle, resp):
    # Deterministic shapes: whole set (count >= size), single-member sets, errors.
    cmds = [["ZADD", "one", "1.5", "only"], ["ZRANDMEMBER", "one"], ["ZRANDMEMBER", "one", "-3", "WITHSCORES"],
            ["ZRANDMEMBER", "one", "5", "WITHSCORES"], ["ZADD", "z", "1", "a", "2", "b"],
            ["ZRANDMEMBER", "z", "0"], ["ZRANDMEMBER", "nokey"],
            ["ZRANDMEMBER", "nokey", "3"], ["ZRANDMEMBER", "z", "-9223372036854775808"],
            ["ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"], ["ZRANDMEMBER", "z", "x"],
            ["ZRANDMEMBER", "z", "1", "foo"], ["ZRANDMEMBER", "z", "1", "WITHSCORES", "x"]]
    diff(server, oracle, cmds, resp)


def test_zrandmember_random(server):
    r = server.client()
    members = {"m%d" % i: i for i in range(200)}
    r.zadd("z", members)
    r.zadd("s", {"a": 1, "b": 2, "c": 3})
    for key, src in (("z", members), ("s", {"a": 1, "b": 2, "c": 3})):
        flat = r.zrandmember(key, 10, withscores=True)
        got = [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]
        assert len(got) == min(10, len(src)) and len({m for m, _ in got}) == len(got)
        assert all(src[m.decode()] == s for m, s in got)
        got = r.zrandmember(key, -50)
        assert len(got) == 50 and all(m.decode() in src for m in got)
        assert r.zrandmember(key).decode() in src


def test_zscan_full_iteration(server):
    r = server.client()
    r.zadd("z", {"m%d" % i: i for i in range(500)})
    seen = {}
    cursor = 0
    while True:
        cursor, items = r.zscan("z", cursor, count=20)
        seen.update(items)
        if cursor == 0:
            break
    assert seen == {b"m%d" % i: float(i) for i in range(500)}


def block(ctl, conn, *cmd):
    conn.send(list(cmd))
    wait_blocked(ctl, conn.cid, cmd[0].lower())


def clients(srv, n, resp=2):
    out = []
    for _ in range(n):
        c = Conn(srv, resp)
        c.cid = c.client_id()
        out.append(c)
    return out


def both(server, oracle, scenario):
    got, exp = scenario(server), scenario(oracle)
    assert got == exp
    return exp


@pytest.mark.parametrize("resp", [2, 3])
def test_blocking_pops(server, oracle, resp):
    def run(srv):
        ctl, a, b, c = clients(srv, 4, resp)
        block(ctl, a, "BZPOPMIN", "z1", "z2", "0")
        block(ctl, b, "BZPOPMAX", "z2", "0")
        block(ctl, c, "BZMPOP", "0", "2", "z3", "z2", "MAX", "COUNT", "5")
        r = [ctl.call("ZADD", "z2", "1", "a", "2", "b", "3", "c"), a.read(), b.read(), c.read(),
             ctl.call("EXISTS", "z2")]
        block(ctl, a, "BZPOPMIN", "z1", "0")
        r += [ctl.call("ZINCRBY", "z1", "5", "m"), a.read()]
        block(ctl, a, "BZMPOP", "0", "1", "dst", "MIN")
        r += [ctl.call("ZADD", "src", "1", "x", "2", "y"), ctl.call("ZUNIONSTORE", "dst", "1", "src"), a.read()]
        r += [a.call("BZPOPMIN", "nokey", "0.01"), a.call("BZMPOP", "0.01", "1", "nokey", "MIN")]
        r += [a.call("BZPOPMIN", "z", "x"), a.call("BZPOPMIN", "z", "-1"), a.call("BZMPOP", "0", "0", "z", "MIN")]
        r += [ctl.call("SET", "str", "v"), a.call("BZPOPMIN", "str", "0"), a.call("BZMPOP", "0", "1", "str", "MIN")]
        return r
    both(server, oracle, run)


def test_blocking_pops_inside_multi(server, oracle):
    require_commands(server, "multi")
    def run(srv):
        (a,) = clients(srv, 1)
        return a.run(["MULTI", "BZPOPMIN k 0", "BZMPOP 0 1 k MIN", "ZADD k 1 a", "BZPOPMAX k 0", "EXEC"])
    both(server, oracle, run)


def test_patterns(server, oracle):
    """The seed's usage patterns."""
    cmds = []
    # per-user message cache trimmed by rank
    for i in range(1, 30):
        cmds += [["ZADD", "usr:1:msg", str(i), "msg:%d" % i], ["ZREMRANGEBYRANK", "usr:1:msg", "0", "-21"]]
    cmds += [["ZREVRANGE", "usr:1:msg", "0", "9"], ["ZCARD", "usr:1:msg"]]
    # delayed tasks: fetch the first due task and claim it
    cmds += [["ZADD", "delayed", "100", "t1", "50", "t2", "300", "t3"],
             ["ZRANGEBYSCORE", "delayed", "0", "200", "LIMIT", "0", "1"], ["ZREM", "delayed", "t2"],
             ["ZRANGEBYSCORE", "delayed", "0", "200", "LIMIT", "0", "1"], ["ZREM", "delayed", "t1"],
             ["ZRANGEBYSCORE", "delayed", "0", "200", "LIMIT", "0", "1"]]
    # autocomplete by lex range
    cmds += [["ZADD", "ac", "0", w] for w in ["apple", "apricot", "banana", "app", "application"]]
    cmds += [["ZRANGEBYLEX", "ac", "[app", "[app\xff", "LIMIT", "0", "10"]]
    # fair semaphore: timeout owner set, counter, ZINTERSTORE WEIGHTS 1 0, ZRANK
    cmds += [["ZADD", "sem:owner", "1", "c1", "2", "c2"], ["ZADD", "sem", "1000", "c1", "1001", "c2", "1002", "c3"],
             ["ZREMRANGEBYSCORE", "sem", "-inf", "1000"],
             ["ZINTERSTORE", "sem:owner", "2", "sem:owner", "sem", "WEIGHTS", "1", "0"],
             ["ZADD", "sem:owner", "3", "c3"], ["ZRANK", "sem:owner", "c3"], ["ZRANGE", "sem:owner", "0", "-1", "WITHSCORES"]]
    # ad scoring with weighted union
    cmds += [["ZADD", "ads:ctr", "0.5", "ad1", "0.25", "ad2"], ["ZADD", "ads:bid", "2", "ad1", "8", "ad2"],
             ["ZUNIONSTORE", "ads:score", "2", "ads:ctr", "ads:bid", "WEIGHTS", "4", "0.5"],
             ["ZREVRANGE", "ads:score", "0", "-1", "WITHSCORES"]]
    diff(server, oracle, cmds)


def test_keyspace_events(server, oracle):
    require_commands(server, "psubscribe")
    def run(srv):
        ctl, sub = Conn(srv), Conn(srv)
        ctl.call("CONFIG", "SET", "notify-keyspace-events", "KEzg")
        sub.call("PSUBSCRIBE", "__keyevent@0__:*")
        ctl.run(["ZADD z 1 a 2 b 3 c 4 d 5 e 6 f", "ZINCRBY z 1 a", "ZREM z a", "ZREMRANGEBYRANK z 0 0",
                 "ZREMRANGEBYSCORE z 3 3", "ZREMRANGEBYLEX z [e [e", "ZPOPMIN z", "ZPOPMAX z",
                 "ZUNIONSTORE u 1 z", "ZINTERSTORE i 1 z", "ZDIFFSTORE d 1 z", "ZRANGESTORE r z 0 -1",
                 "ZREM z nope", "ZPOPMIN z", "ZUNIONSTORE u 1 nokey"])
        out = []
        while sub.pending(0.3):
            out.append(sub.read())
        ctl.call("CONFIG", "SET", "notify-keyspace-events", "")
        return out
    both(server, oracle, run)
