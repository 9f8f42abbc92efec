"""BZPOPDUE's wake-ups at sub-millisecond due times, and their order under
many blocked clients (issue 39, part 3).

Contract: a member's score is the unix time in ms at which it falls due,
fractional part included (a score of t + 0.3 falls due 300 us after t),
and "now" is the server's clock to the microsecond.  A blocked BZPOPDUE is
woken by a timer armed for that microsecond, never before: the popped
member's due time is at or before the server's clock at the pop.  Clients
blocked on one key are served in the order they blocked (first blocked,
first served), each getting the lowest due member left.

"Not early" is checked with the server's own clock: each blocked client
pipelines TIME after its BZPOPDUE, so the TIME it gets is read right
after its pop (it runs as soon as the client is unblocked) and must not
be before the popped member's score.  No assertion is on how late a wake
is (bench/bzpopdue_wake.py measures that).
"""
from fractions import Fraction

from listhelp import Conn, wait_blocked
from resphelp import bulk
from test_aof import wait_for


def server_us(c):
    s, us = c.time()
    return s * 1000000 + us


def ms_text(us):
    """The unix-ms score text of a time in us (sub-ms digits kept)."""
    return "%d.%03d" % (us // 1000, us % 1000)


def time_reply_us(raw):
    """The microseconds of a raw TIME reply (*2 $sec $usec)."""
    parts = raw.split(b"\r\n")
    return int(parts[2]) * 1000000 + int(parts[4])


def score_us(text):
    """A score as the server replies it ("%.17g": it reads back as the
    same double), in exact microseconds."""
    return Fraction(float(text.decode())) * 1000


def read_pop_and_time(conn):
    """The [key, member, score] reply of BZPOPDUE and the TIME after it."""
    pop = conn.read()
    t = conn.read()
    parts = pop.split(b"\r\n")
    assert parts[0] == b"*3", pop
    return parts[2], parts[4], parts[6], time_reply_us(t)


def test_sub_ms_due_wakes_its_client_not_early(server):
    """Members due 300 us (and other sub-ms offsets) after the server's
    clock wake their client, by the timer, not before: the pop's server
    time (its pipelined TIME) is at or after the member's score, and the
    score comes back with its fractional digits."""
    c = server.client()
    conns = [Conn(server) for _ in range(2)]
    ctl = conns[0]
    a = conns[1]
    a.cid = a.client_id()
    for off_us in (300, 700, 1300, 2900, 10300, 40700):
        a.send(["BZPOPDUE", "q", "0"], ["TIME"])
        wait_blocked(ctl, a.cid, "bzpopdue")
        due = server_us(c) + off_us
        text = ms_text(due)
        c.zadd("q", {"m": text})
        key, member, score, at = read_pop_and_time(a)
        assert (key, member) == (b"q", b"m")
        assert float(score) == float(text), (score, text)
        assert at >= score_us(score), (off_us, at, score)
    assert c.exists("q") == 0
    for x in conns:
        x.close()


def test_zpopdue_compares_to_the_microsecond(server):
    """A member whose score is 0.4 ms before the server's clock is due,
    whatever the clock's ms digits: the comparison is in us, not with
    the clock truncated to whole ms (which would leave it for up to a
    millisecond).  One 0.4 ms ahead of the clock is not due."""
    c = server.client()
    for _ in range(30):
        now = server_us(c)
        c.zadd("q", {"past": ms_text(now - 400), "ahead": ms_text(now + 60 * 1000000 + 400)})
        got = c.execute_command("ZPOPDUE", "q", "COUNT", 5)
        assert len(got) == 2 and got[0] == b"past" and float(got[1]) == float(ms_text(now - 400)), got
        assert c.execute_command("ZPOPDUE", "q") == []
        c.delete("q")


def test_burst_of_1000_is_served_first_blocked_first(server):
    """1,000 clients block on one key, one after another; 1,000 members
    fall due at the same sub-ms moment (the timer's one wake-up serves
    them all): client i gets the i-th member in the set's order, and no
    pop is before the due time."""
    c = server.client()
    n = 1000
    conns = [Conn(server) for _ in range(n)]
    for i, x in enumerate(conns):
        x.send(["BZPOPDUE", "q", "0"], ["TIME"])
        # Block each before the next, so the blocking order is i's.
        wait_for(lambda: int(c.info("clients")["blocked_clients"]) == i + 1, what="client %d blocked" % i)
    due = server_us(c) + 300000 + 300
    text = ms_text(due)
    c.zadd("q", {"m%04d" % i: text for i in range(n)})
    for i, x in enumerate(conns):
        key, member, score, at = read_pop_and_time(x)
        assert (key, member) == (b"q", b"m%04d" % i), (i, member)
        assert at >= score_us(score), (i, at, score)
        x.close()
    assert c.exists("q") == 0
    assert int(c.info("clients")["blocked_clients"]) == 0


def test_staggered_sub_ms_due_times_lowest_first(server):
    """60 clients blocked on one key; members fall due 50 us apart (added
    in reverse): each wake-up serves the members due by then, lowest
    first, to the clients in the order they blocked."""
    c = server.client()
    n = 60
    conns = [Conn(server) for _ in range(n)]
    for i, x in enumerate(conns):
        x.send(["BZPOPDUE", "q", "0"], ["TIME"])
        wait_for(lambda: int(c.info("clients")["blocked_clients"]) == i + 1, what="client %d blocked" % i)
    base = server_us(c) + 200000
    texts = [ms_text(base + 50 * i) for i in range(n)]
    c.zadd("q", {"m%02d" % i: texts[i] for i in reversed(range(n))})
    for i, x in enumerate(conns):
        key, member, score, at = read_pop_and_time(x)
        assert (key, member) == (b"q", b"m%02d" % i), (i, member)
        assert float(score) == float(texts[i])
        assert at >= score_us(score), (i, at, score)
        x.close()


def test_earlier_member_added_while_a_later_timer_is_armed(server):
    """A timer armed for a member 2 s away does not hold up one added
    later that falls due in 1.5 ms (sub-ms digits): it is served first,
    not early, and the later one stays until its time."""
    c = server.client()
    ctl, a = Conn(server), Conn(server)
    a.cid = a.client_id()
    now = server_us(c)
    c.zadd("q", {"late": ms_text(now + 2000000)})
    a.send(["BZPOPDUE", "q", "0"], ["TIME"])
    wait_blocked(ctl, a.cid, "bzpopdue")
    soon = ms_text(server_us(c) + 1500)
    c.zadd("q", {"soon": soon})
    key, member, score, at = read_pop_and_time(a)
    assert member == b"soon"
    assert at >= score_us(score)
    assert c.zrange("q", 0, -1) == [b"late"]
    assert a.call("ZPOPDUE", "q") == b"*0\r\n"
    for x in (ctl, a):
        x.close()


def test_bulk_score_text(server):
    """The reply's score is the member's score as ZSCORE writes it (an
    integral unix-ms score without a dot, a sub-ms one with its digits)."""
    c = server.client()
    a = Conn(server)
    c.zadd("q", {"x": 1000, "y": "1000.25"})
    assert a.call("BZPOPDUE", "q", "0") == b"*3\r\n" + bulk(b"q") + bulk(b"x") + bulk(b"1000")
    assert a.call("BZPOPDUE", "q", "0") == b"*3\r\n" + bulk(b"q") + bulk(b"y") + bulk(b"1000.25")
    a.close()


def test_burst_under_appendfsync_always_is_in_the_aof(start_server):
    """Under appendfsync always a burst's replies leave in slices, each
    after the AOF is written and fsynced: 300 clients served at once all
    get their member, first blocked first, and a server killed right after
    the last reply (SIGKILL, no shutdown) comes back from its AOF with
    exactly the members nobody popped."""
    from test_aof import aof_start, kill9
    srv = aof_start(start_server, appendfsync="always")
    c = srv.client()
    n = 300
    conns = [Conn(srv) for _ in range(n)]
    for i, x in enumerate(conns):
        x.send(["BZPOPDUE", "q", "0"], ["TIME"])
        wait_for(lambda: int(c.info("clients")["blocked_clients"]) == i + 1, what="client %d blocked" % i)
    due = server_us(c) + 200000 + 500
    c.zadd("q", {"m%04d" % i: ms_text(due) for i in range(n + 50)})
    for i, x in enumerate(conns):
        key, member, score, at = read_pop_and_time(x)
        assert member == b"m%04d" % i, (i, member)
        assert at >= score_us(score)
    kill9(srv)
    for x in conns:
        x.close()
    srv2 = aof_start(start_server, dir=srv.tmp, appendfsync="always")
    assert srv2.client().zrange("q", 0, -1) == [b"m%04d" % i for i in range(n, n + 50)]
