"""List commands, compared reply for reply (raw bytes) with redis-server
7.0.15: pushes, pops with COUNT, ranges, LINDEX/LSET, LINSERT, LREM, LTRIM,
LPOS, LMOVE/RPOPLPUSH, LMPOP, errors, RESP3 nulls, encodings, events."""

from listhelp import Conn, diff

LLONG_MAX = "9223372036854775807"
LLONG_MIN = "-9223372036854775808"


def test_push_pop_basic(server, oracle):
    r = diff(server, oracle, [
        "RPUSH l a b c 1 2", "LPUSH l z", "LLEN l", "LRANGE l 0 -1",
        "LPUSHX l y", "RPUSHX l w", "LPUSHX nokey a", "RPUSHX nokey a", "EXISTS nokey",
        "LPOP l", "RPOP l", "LPOP l 2", "RPOP l 0", "LPOP l 100", "EXISTS l",
        "LPOP l", "LPOP l 0", "LPOP l 1", "RPOP nokey 3",
        "LPOP l -1", "LPOP l abc", "LPOP l 1 2", "RPOP l " + LLONG_MIN,
        "OBJECT ENCODING l", "RPUSH l x", "OBJECT ENCODING l", "TYPE l",
    ])
    assert r[0] == b":5\r\n"
    assert r[20] == b"-ERR value is out of range, must be positive\r\n"
    assert r[25] == b"$9\r\nquicklist\r\n"


def test_pop_nulls_resp3(server, oracle):
    diff(server, oracle, [
        "LPOP nokey", "LPOP nokey 2", "LPOP nokey 0", "RPUSH q 1", "LPOP q 0",
        "LPOP q 5", "LMPOP 1 nokey LEFT", "LINDEX nokey 0", "LPOS nokey a",
        "LPOS nokey a COUNT 0", "LMOVE nokey d LEFT LEFT",
    ], resp=3)


def test_wrongtype_everywhere(server, oracle):
    diff(server, oracle, [
        "SET s x", "LPUSH s a", "RPUSHX s a", "LPOP s", "LPOP s 0", "LLEN s",
        "LRANGE s 0 1", "LINDEX s 0", "LSET s 0 a", "LINSERT s BEFORE a b",
        "LREM s 0 a", "LTRIM s 0 1", "LPOS s a", "RPUSH l a", "LMOVE l s LEFT LEFT",
        "LMOVE s l LEFT LEFT", "RPOPLPUSH l s", "LRANGE l 0 -1", "LMPOP 2 nokey s LEFT",
        "LMPOP 2 l s LEFT", "BLPOP s 0", "BLPOP nokey s 0", "BLMOVE s l LEFT LEFT 0",
    ])


def test_ranges_and_indexes(server, oracle):
    cmds = ["RPUSH l " + " ".join(str(i) for i in range(20))]
    idx = ["0", "1", "-1", "-2", "5", "19", "20", "25", "-20", "-21", "-100", "100",
           LLONG_MAX, LLONG_MIN]
    for a in idx:
        cmds.append("LINDEX l " + a)
        for b in idx:
            cmds.append("LRANGE l %s %s" % (a, b))
    cmds += ["LRANGE l a 1", "LRANGE l 0 b", "LINDEX l x", "LINDEX nokey x",
             "LRANGE nokey 0 -1", "LRANGE nokey x 1"]
    diff(server, oracle, cmds)


def test_lset(server, oracle):
    diff(server, oracle, [
        "LSET nokey 0 a", "LSET nokey x a", "RPUSH l a b c", "LSET l 0 A", "LSET l -1 C",
        "LSET l 3 x", "LSET l -4 x", "LSET l x y", "LSET l 1 " + "v" * 10000,
        "LRANGE l 0 -1", "LSET l " + LLONG_MAX + " x", "LSET l 1 12345",
        "LRANGE l 0 -1",
    ])


def test_linsert(server, oracle):
    diff(server, oracle, [
        "LINSERT nokey BEFORE a b", "RPUSH l a b c b", "LINSERT l BEFORE b X",
        "LINSERT l after b Y", "LINSERT l AFTER c Z", "LINSERT l BEFORE a W",
        "LINSERT l BEFORE zz x", "LINSERT l MIDDLE a x", "LRANGE l 0 -1",
        "LINSERT l BEFORE 1 2", "RPUSH n 1 2 3", "LINSERT n AFTER 2 2.5", "LRANGE n 0 -1",
    ])


def test_lrem(server, oracle):
    base = "RPUSH l a b a c a b a 1 01 1"
    cmds = []
    for cnt in ["0", "1", "2", "-1", "-2", "10", "-10", LLONG_MIN]:
        cmds += ["DEL l", base, "LREM l %s a" % cnt, "LRANGE l 0 -1"]
    cmds += ["LREM l 0 1", "LRANGE l 0 -1", "LREM l x a", "LREM nokey 0 a",
             "DEL l", "RPUSH l a a", "LREM l 0 a", "EXISTS l"]
    diff(server, oracle, cmds)


def test_ltrim(server, oracle):
    cmds = []
    for a, b in [("0", "-1"), ("1", "-2"), ("2", "1"), ("5", "100"), ("-3", "-1"),
                 ("-100", "2"), ("100", "200"), ("0", "0"), ("-1", "-1"),
                 (LLONG_MIN, LLONG_MAX), ("x", "1"), ("0", "y")]:
        cmds += ["DEL l", "RPUSH l a b c d e f g", "LTRIM l %s %s" % (a, b),
                 "LRANGE l 0 -1", "EXISTS l"]
    cmds.append("LTRIM nokey 0 1")
    diff(server, oracle, cmds)


def test_lpos(server, oracle):
    cmds = ["RPUSH l a b c a b c a 1 1", "LPOS l a", "LPOS l c", "LPOS l zz", "LPOS l 1"]
    for opts in ["RANK 1", "RANK 2", "RANK 4", "RANK -1", "RANK -3", "RANK 0",
                 "COUNT 0", "COUNT 2", "COUNT 10", "COUNT -1", "MAXLEN 0", "MAXLEN 3",
                 "MAXLEN -1", "RANK -1 COUNT 2", "RANK 2 COUNT 0 MAXLEN 5",
                 "RANK -2 MAXLEN 2", "RANK x", "COUNT x", "MAXLEN x", "RANK", "FOO 1",
                 "RANK " + LLONG_MIN, "RANK " + LLONG_MIN + " COUNT 2",
                 "RANK " + LLONG_MAX, "COUNT 1 COUNT 2", "RANK 1 RANK -1"]:
        cmds.append("LPOS l a " + opts)
    cmds += ["LPOS nokey a", "LPOS nokey a COUNT 0", "LPOS nokey a RANK 0"]
    r = diff(server, oracle, cmds)
    assert r[10] == (b"-ERR RANK can't be zero: use 1 to start from the first match, 2 from the"
                     b" second ... or use negative to start from the end of the list\r\n")


def test_lmove_rpoplpush(server, oracle):
    cmds = ["RPUSH s a b c d"]
    for f in ["LEFT", "RIGHT"]:
        for t in ["LEFT", "RIGHT"]:
            cmds += ["LMOVE s d %s %s" % (f, t), "LRANGE s 0 -1", "LRANGE d 0 -1"]
    cmds += ["LMOVE s d middle left", "LMOVE s d left", "LMOVE nokey d LEFT LEFT",
             "RPUSH one x", "LMOVE one one LEFT RIGHT", "LRANGE one 0 -1",
             "RPOPLPUSH one one", "RPOPLPUSH one other", "EXISTS one", "LRANGE other 0 -1",
             "RPOPLPUSH nokey d", "RPUSH r 1 2 3", "RPOPLPUSH r r", "LRANGE r 0 -1"]
    diff(server, oracle, cmds)


def test_lmpop(server, oracle):
    diff(server, oracle, [
        "RPUSH a 1 2 3", "RPUSH b x y", "LMPOP 2 a b LEFT", "LMPOP 2 nokey b RIGHT COUNT 5",
        "EXISTS b", "LMPOP 1 a LEFT COUNT 1", "LMPOP 2 a b LEFT COUNT 9", "LMPOP 1 a left",
        "LMPOP 0 a LEFT", "LMPOP -1 a LEFT", "LMPOP x a LEFT", "LMPOP 3 a LEFT",
        "LMPOP 1 a MIDDLE", "LMPOP 1 a LEFT COUNT 0", "LMPOP 1 a LEFT COUNT -1",
        "LMPOP 1 a LEFT COUNT", "LMPOP 1 a LEFT COUNT 1 COUNT 1", "LMPOP 1 a LEFT FOO",
        "LMPOP 1 a LEFT COUNT " + LLONG_MAX, "LMPOP 2 a", "RPUSH c 1",
        "LMPOP 1 c RIGHT COUNT " + LLONG_MAX, "COMMAND GETKEYS LMPOP 2 a b LEFT",
        "COMMAND GETKEYS BLMPOP 0 2 a b LEFT",
    ])


def test_blocking_commands_when_data_is_there(server, oracle):
    diff(server, oracle, [
        "RPUSH a 1 2 3", "BLPOP nokey a 0", "BRPOP a 0", "BLMOVE a d LEFT RIGHT 0",
        "BRPOPLPUSH d e 0", "RPUSH a 5 6", "BLMPOP 0 2 nokey a RIGHT COUNT 5",
        "EXISTS a", "BLPOP a x", "BLPOP a -1", "BLPOP a nan", "BLPOP a inf",
        "BLPOP a 1e300", "BLMPOP x 1 a LEFT", "BLMPOP -1 1 a LEFT", "BLMPOP x 0 a LEFT",
        "BLMPOP 0 1 a MIDDLE", "BLMOVE a d LEFT MIDDLE 0", "BLMOVE a d LEFT LEFT -1",
        "BRPOPLPUSH a d x",
    ])


def test_big_lists_and_small_nodes(start_server, start_oracle):
    cfg = {"list-max-listpack-size": 3, "list-compress-depth": 1}
    s, o = start_server(**cfg), start_oracle(**cfg)
    cmds = ["RPUSH l " + " ".join("e%d" % i for i in range(300)),
            "LPUSH l " + " ".join(str(i) for i in range(200)),
            "RPUSH l " + "x" * 9000, "LINDEX l -1", "LLEN l",
            "LRANGE l 100 120", "LRANGE l -130 -100", "LREM l 0 e7", "LINSERT l AFTER e100 new",
            "LPOS l new", "LTRIM l 50 -50", "LLEN l", "LRANGE l 0 -1", "LSET l 200 changed",
            "LRANGE l 190 210", "OBJECT ENCODING l", "LMPOP 1 l RIGHT COUNT 50", "LLEN l"]
    diff(s, o, cmds)


def test_config_list_aliases(server, oracle):
    diff(server, oracle, [
        "CONFIG SET list-max-ziplist-size 5", "CONFIG GET list-max-listpack-size",
        "CONFIG SET list-compress-depth 2", "RPUSH l " + " ".join("v%d" % i for i in range(50)),
        "LRANGE l 0 -1",
    ])


def test_keyspace_events(server, oracle):
    from requires import require_commands
    require_commands(server, "PSUBSCRIBE")
    out = []
    for srv in (server, oracle):
        ctl, sub = Conn(srv), Conn(srv)
        ctl.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub.call("PSUBSCRIBE", "__keyevent@0__:*")
        ctl.run(["RPUSH l a b c d", "LPUSH l z", "LPOP l", "RPOP l", "LSET l 0 x",
                 "LINSERT l BEFORE x w", "LREM l 1 w", "LTRIM l 0 0", "LMOVE l m LEFT RIGHT",
                 "RPUSH n 1 2", "LMPOP 1 n LEFT COUNT 2", "RPUSH p 1", "RPOPLPUSH p p",
                 "SET done 1"])
        events = []
        while True:
            msg = sub.read()
            events.append(msg)
            if msg.endswith(b"done\r\n"):
                break
        out.append(events)
        ctl.close()
        sub.close()
    assert out[0] == out[1]
