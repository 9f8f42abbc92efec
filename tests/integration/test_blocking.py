"""Blocking list commands: each scenario runs on cairn and on redis-server
7.0.15 with the same clients and steps, and the raw replies every client
received must be identical.  A blocking command is sent, then the test waits
until CLIENT LIST shows the client ran it (so it is blocked) before the next
step; nothing depends on timing otherwise."""
from listhelp import Conn, wait_blocked
from requires import require_commands


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


def test_fifo_same_key(server, oracle):
    def run(srv):
        ctl, a, b, c = clients(srv, 4)
        for x in (a, b, c):
            block(ctl, x, "BLPOP", "k", "0")
        r = [ctl.call("RPUSH", "k", "v1", "v2"), a.read(), b.read(), c.pending()]
        r += [ctl.call("LPUSH", "k", "v3"), c.read(), ctl.call("EXISTS", "k")]
        return r
    r = both(server, oracle, run)
    assert r[1] == b"*2\r\n$1\r\nk\r\n$2\r\nv1\r\n" and r[3] is False


def test_different_keys_and_key_order(server, oracle):
    require_commands(server, "multi")
    def run(srv):
        ctl, a, b, c = clients(srv, 4)
        block(ctl, a, "BLPOP", "k1", "k2", "0")
        block(ctl, b, "BRPOP", "k2", "k3", "0")
        r = [ctl.call("RPUSH", "k2", "x", "y"), a.read(), b.read()]
        # Already non-empty keys: the first in argument order wins.
        ctl.run(["RPUSH k5 5", "RPUSH k4 4"])
        r.append(c.call("BLPOP", "k3", "k4", "k5", "0"))
        # Several keys made ready by one transaction: served in push order.
        block(ctl, a, "BLPOP", "ka", "kb", "0")
        r += ctl.run(["MULTI", "RPUSH kb 1", "RPUSH ka 2", "EXEC"])
        r += [a.read(), ctl.call("LRANGE", "ka", "0", "-1")]
        return r
    both(server, oracle, run)


def test_timeouts(server, oracle):
    def run(srv):
        r = []
        for resp in (2, 3):
            (a,) = clients(srv, 1, resp)
            r += [a.call("BLPOP", "k", "0.05"), a.call("BRPOP", "k", "k2", "0.01"),
                  a.call("BLMOVE", "k", "d", "LEFT", "LEFT", "0.02"),
                  a.call("BRPOPLPUSH", "k", "d", "0.02"),
                  a.call("BLMPOP", "0.03", "2", "k", "k2", "LEFT", "COUNT", "2"),
                  a.call("BLPOP", "k", "0.0001"), a.call("PING")]
        return r
    r = both(server, oracle, run)
    assert r[0] == b"*-1\r\n" and r[7] == b"_\r\n"


def test_zero_waits_until_push_and_pipeline_runs_after(server, oracle):
    def run(srv):
        ctl, a = clients(srv, 2)
        a.send(["BLPOP", "k", "0"], ["PING"], ["LLEN", "k"], ["RPUSH", "k", "again"])
        wait_blocked(ctl, a.cid, "blpop")
        r = [a.pending(0.3), ctl.call("RPUSH", "k", "v")]
        r += [a.read(), a.read(), a.read(), a.read(), ctl.call("LRANGE", "k", "0", "-1")]
        return r
    both(server, oracle, run)


def test_disconnect_while_blocked(server, oracle):
    def run(srv):
        ctl, a, b = clients(srv, 3)
        block(ctl, a, "BLPOP", "k", "other", "0")
        a.close()
        block(ctl, b, "BLPOP", "k", "0")
        r = [ctl.call("RPUSH", "k", "v1", "v2"), b.read(), ctl.call("LRANGE", "k", "0", "-1"),
             ctl.call("RPUSH", "other", "o"), ctl.call("LLEN", "other")]
        return r
    both(server, oracle, run)


def test_blmove_wakes_client_blocked_on_destination(server, oracle):
    def run(srv):
        ctl, a, b, c = clients(srv, 4)
        block(ctl, a, "BLPOP", "dst", "0")
        block(ctl, b, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
        block(ctl, c, "BRPOPLPUSH", "src2", "src", "0")
        r = [ctl.call("RPUSH", "src2", "x"), c.read(), b.read(), a.read()]
        r += [ctl.call("EXISTS", "src", "src2", "dst")]
        return r
    r = both(server, oracle, run)
    assert r[3] == b"*2\r\n$3\r\ndst\r\n$1\r\nx\r\n"


def test_blmove_to_wrong_type_destination(server, oracle):
    def run(srv):
        ctl, a = clients(srv, 2)
        ctl.call("SET", "dst", "str")
        block(ctl, a, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
        r = [ctl.call("RPUSH", "src", "x"), a.read(), ctl.call("LRANGE", "src", "0", "-1")]
        return r
    both(server, oracle, run)


def test_multi_exec_wakes_once_after_exec(server, oracle):
    require_commands(server, "multi")
    def run(srv):
        ctl, a, b = clients(srv, 3)
        block(ctl, a, "BLPOP", "k", "0")
        block(ctl, b, "BLPOP", "k", "0")
        r = ctl.run(["MULTI", "LPUSH k a b", "LLEN k", "EXEC"])
        r += [a.read(), b.read(), ctl.call("EXISTS", "k")]
        # A transaction that pushes and pops again leaves the waiter blocked.
        block(ctl, a, "BLPOP", "k", "0")
        r += ctl.run(["MULTI", "RPUSH k x", "LPOP k", "EXEC"])
        r += [a.pending(0.2), ctl.call("RPUSH", "k", "y"), a.read()]
        return r
    both(server, oracle, run)


def test_blocking_commands_inside_multi_do_not_block(server, oracle):
    require_commands(server, "multi")
    def run(srv):
        (a,) = clients(srv, 1)
        r = a.run(["MULTI", "BLPOP k 0", "BRPOP k 1", "BLMOVE k d LEFT LEFT 0",
                   "BRPOPLPUSH k d 0", "BLMPOP 0 1 k LEFT", "RPUSH k v", "BLPOP k 0", "EXEC"])
        (b,) = clients(srv, 1, 3)
        r += b.run(["MULTI", "BLPOP k 0", "BLMOVE k d LEFT LEFT 0", "EXEC"])
        return r
    both(server, oracle, run)


def test_client_unblock(server, oracle):
    def run(srv):
        ctl, a, b = clients(srv, 3)
        block(ctl, a, "BLPOP", "k", "0")
        r = [ctl.call("CLIENT", "UNBLOCK", str(a.cid)), a.read(), a.call("PING")]
        block(ctl, a, "BLMOVE", "k", "d", "LEFT", "LEFT", "0")
        r += [ctl.call("CLIENT", "UNBLOCK", str(a.cid), "ERROR"), a.read()]
        block(ctl, b, "BLMPOP", "0", "1", "k", "LEFT")
        r += [ctl.call("CLIENT", "UNBLOCK", str(b.cid), "TIMEOUT"), b.read()]
        r += [ctl.call("CLIENT", "UNBLOCK", str(b.cid)), ctl.call("CLIENT", "UNBLOCK", "999999"),
              ctl.call("CLIENT", "UNBLOCK", "x"), ctl.call("CLIENT", "UNBLOCK", str(b.cid), "FOO"),
              ctl.call("RPUSH", "k", "v"), ctl.call("LLEN", "k")]
        return r
    r = both(server, oracle, run)
    assert r[3] == b":1\r\n" and r[4] == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"


def test_blmpop_served_with_count(server, oracle):
    def run(srv):
        ctl, a, b = clients(srv, 3, 3)
        block(ctl, a, "BLMPOP", "0", "2", "x", "y", "RIGHT", "COUNT", "2")
        block(ctl, b, "BLMPOP", "0", "1", "y", "LEFT", "COUNT", "10")
        r = [ctl.call("RPUSH", "y", "1", "2", "3"), a.read(), b.read(), ctl.call("EXISTS", "y")]
        return r
    both(server, oracle, run)


def test_swapdb_serves_blocked_clients(server, oracle):
    def run(srv):
        ctl, a = clients(srv, 2)
        block(ctl, a, "BLPOP", "k", "0")
        r = ctl.run(["SELECT 1", "RPUSH k from1", "SWAPDB 0 1", "LLEN k"])
        r += [a.read()]
        return r
    both(server, oracle, run)


def test_rename_into_waited_key_serves(server, oracle):
    def run(srv):
        ctl, a = clients(srv, 2)
        block(ctl, a, "BRPOP", "k", "0")
        r = ctl.run(["RPUSH tmp a b", "RENAME tmp k"])
        r += [a.read(), ctl.call("LRANGE", "k", "0", "-1")]
        return r
    both(server, oracle, run)
