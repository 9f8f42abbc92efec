"""Cairn's built-in Sentinel mode (issue 40, first slice): `cairn-sentinel`
and `cairn-server --sentinel`, side by side with Debian's redis-sentinel
watching the same Cairn primary.  Replies are compared with
redis-sentinel's (field lists and formats; ids and times normalized); a
mixed group discovers itself through hello messages; subjective and
objective down are reached through SENTINEL is-master-down-by-addr; the
config file is rewritten keeping comments and read back on restart;
failover by three cairn-sentinels and by a mixed group (two
cairn-sentinels, one redis-sentinel) after SIGKILL of the primary happens
exactly once, and SENTINEL FAILOVER forces one."""
import os
import shutil
import signal
import subprocess
import tempfile

import pytest
import redis

from conftest import free_port, ROOT
import waithelp

SENTINEL_BIN = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
CAIRN_SENTINEL = os.path.join(os.environ.get("CAIRN_BUILD", os.path.join(ROOT, "build")), "cairn-sentinel")
NAME = "mymaster"


def wait_for(pred, timeout=40.0, what="condition"):
    return waithelp.wait_for(pred, timeout, what, step=0.05,
                             ignore=(redis.ConnectionError, redis.TimeoutError, redis.ResponseError))


class SentinelProc:
    """A sentinel (cairn's or redis's) with its own directory and config.
    down-after-milliseconds is 3 s, as in test_sentinel.py (a loaded CI
    machine missed 1 s PING deadlines)."""

    def __init__(self, binary, master_port, extra="", args=(), monitor=True, down_after=3000, password=None,
                 failover_timeout=60000):
        self.password = password
        self.dir = tempfile.mkdtemp(prefix="cairn-sent-")
        self.port = free_port()
        self.conf = os.path.join(self.dir, "sentinel.conf")
        self.binary = binary
        self.args = list(args)
        with open(self.conf, "w") as f:
            f.write("# a comment kept by the rewrite\nport %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
                    % (self.port, self.dir, self.dir))
            if monitor:
                f.write("sentinel monitor %s 127.0.0.1 %d 2\n"
                        "sentinel down-after-milliseconds %s %d\n"
                        "sentinel failover-timeout %s %d\n" % (NAME, master_port, NAME, down_after, NAME, failover_timeout))
            f.write(extra)
        self.start()

    def start(self):
        self.proc = subprocess.Popen([self.binary, self.conf] + self.args, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT, cwd=self.dir)
        self.client = redis.Redis(port=self.port, socket_timeout=5, decode_responses=True, password=self.password)
        wait_for(lambda: self.client.ping(), 20, "sentinel up")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def log(self):
        try:
            with open(os.path.join(self.dir, "sentinel.log")) as f:
                return f.read()
        except OSError as e:
            return str(e)

    def cmd(self, *args):
        return self.client.execute_command(*args)

    def err(self, *args):
        """The error text a command answers (raw connection: redis-py
        would map some errors to exceptions of its own)."""
        try:
            self.cmd(*args)
        except redis.ResponseError as e:
            return str(e)
        return None


@pytest.fixture
def sentinels():
    started = []

    def start(binary, *a, **kw):
        if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
            pytest.skip("no redis-sentinel")
        s = SentinelProc(binary, *a, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
        shutil.rmtree(s.dir, ignore_errors=True)


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def quicken(*sents):
    """SENTINEL DEBUG info-period and publish-period of 1 s (both
    sentinels have it): a replica's INFO every second instead of every 10
    (an old primary back as a primary is seen, and converted, sooner) and
    hellos every second instead of every 2; the behaviour tested is the
    same, in less time."""
    for s in sents:
        assert s.cmd("SENTINEL", "DEBUG", "info-period", "1000", "publish-period", "1000") == "OK"


def group(start_server, nreplicas=1):
    cfg = {"config_file": "", "repl-diskless-sync-delay": "0"}
    p = start_server(**cfg)
    reps = [start_server(**cfg) for _ in range(nreplicas)]
    for r in reps:
        r.client().execute_command("REPLICAOF", "127.0.0.1", p.port)
    for r in reps:
        wait_for(lambda: r.client().info("replication")["master_link_status"] == "up", 30, "replica up")
    return p, reps


def test_names_and_mode(sentinels, tmp_path):
    """cairn-sentinel (a link to the server binary) and --sentinel both run
    Sentinel mode; without a config file it exits as redis-sentinel does."""
    assert os.path.islink(CAIRN_SENTINEL)
    s = sentinels(CAIRN_SENTINEL, 1, monitor=False)
    assert s.cmd("PING") is True
    assert s.client.info("server")["redis_mode"] == "sentinel"
    assert s.cmd("ROLE") == ["sentinel", []]
    server_bin = os.path.join(os.path.dirname(CAIRN_SENTINEL), "cairn-server")
    s2 = sentinels(server_bin, 1, monitor=False, args=["--sentinel"])
    assert s2.client.info("server")["redis_mode"] == "sentinel"
    r = subprocess.run([CAIRN_SENTINEL], capture_output=True, timeout=20, text=True)
    assert r.returncode != 0
    assert "config file" in (r.stdout + r.stderr)


def test_replies_match_redis_sentinel(start_server, sentinels):
    """Both sentinels watch the same Cairn primary + replica and find each
    other: SENTINEL MASTER/REPLICAS/SENTINELS have the same fields in the
    same order, and the same values where they are not ids or times."""
    p, reps = group(start_server)
    rs = sentinels(SENTINEL_BIN, p.port)
    cs = sentinels(CAIRN_SENTINEL, p.port)
    for s in (rs, cs):
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 1 and
                 pairs(s.cmd("SENTINEL", "SENTINELS", NAME)[0])["flags"] == "sentinel" and
                 pairs(s.cmd("SENTINEL", "REPLICAS", NAME)[0])["flags"] == "slave", 40, "discovery")
    # Each knows the other by its run id (hello messages, both ways).
    assert pairs(rs.cmd("SENTINEL", "SENTINELS", NAME)[0])["runid"] == cs.cmd("SENTINEL", "MYID")
    assert pairs(cs.cmd("SENTINEL", "SENTINELS", NAME)[0])["runid"] == rs.cmd("SENTINEL", "MYID")
    timing = {"last-ping-sent", "last-ok-ping-reply", "last-ping-reply", "info-refresh", "role-reported-time",
              "last-hello-message", "slave-repl-offset", "runid", "name", "port", "master-link-down-time"}
    for what in (("SENTINEL", "MASTER", NAME), ("SENTINEL", "REPLICAS", NAME), ("SENTINEL", "SENTINELS", NAME)):
        a, b = rs.cmd(*what), cs.cmd(*what)
        if what[1] != "MASTER":
            a, b = a[0], b[0]
        assert a[0::2] == b[0::2], what
        da, db = pairs(a), pairs(b)
        for k in da:
            if k not in timing:
                assert da[k] == db[k], (what, k)
    assert rs.cmd("SENTINEL", "MASTER", NAME)[7] == cs.cmd("SENTINEL", "MASTER", NAME)[7]  # the primary's run id
    assert rs.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == cs.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
    assert rs.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "nope") == cs.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                                                          "nope") is None
    assert rs.cmd("ROLE") == cs.cmd("ROLE")
    assert rs.cmd("SENTINEL", "CKQUORUM", NAME) == cs.cmd("SENTINEL", "CKQUORUM", NAME)
    ri, ci = rs.client.info("sentinel"), cs.client.info("sentinel")
    assert list(ri) == list(ci)
    assert ri["master0"] == ci["master0"]
    assert rs.cmd("SENTINEL", "IS-MASTER-DOWN-BY-ADDR", "127.0.0.1", p.port, 0, "*") == \
        cs.cmd("SENTINEL", "IS-MASTER-DOWN-BY-ADDR", "127.0.0.1", p.port, 0, "*") == [0, "*", 0]
    # Errors, unknown commands and arities: redis-sentinel's texts.
    for args in (("GET", "x"), ("SET", "a", "b"), ("FOO",), ("SENTINEL",), ("SENTINEL", "FOO"),
                 ("SENTINEL", "MASTER", "nope"), ("SENTINEL", "REPLICAS", "nope"), ("SENTINEL", "REMOVE", "nope"),
                 ("SENTINEL", "MONITOR", NAME, "127.0.0.1", p.port, 2), ("SENTINEL", "MONITOR", "x", "127.0.0.1",
                                                                         p.port, 0),
                 ("SENTINEL", "SET", NAME, "foo", 1), ("SENTINEL", "SET", NAME, "down-after-milliseconds", "abc"),
                 ("SENTINEL", "IS-MASTER-DOWN-BY-ADDR", "127.0.0.1", p.port, 0),
                 ("SENTINEL", "CONFIG", "GET"), ("AUTH", "x"), ("PUBLISH", "foo", "bar"), ("PING", "a", "b")):
        assert rs.err(*args) == cs.err(*args), args
    assert rs.cmd("PING", "hi") == cs.cmd("PING", "hi")


def test_config_rewrite_and_restart(start_server, sentinels):
    """State changes rewrite the file (comments kept); a restarted sentinel
    keeps its id, epoch, known replicas and settings."""
    p, reps = group(start_server)
    cs = sentinels(CAIRN_SENTINEL, p.port)
    wait_for(lambda: len(cs.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 40, "replica found")
    myid = cs.cmd("SENTINEL", "MYID")
    assert cs.cmd("SENTINEL", "SET", NAME, "down-after-milliseconds", 4000, "parallel-syncs", 3) == "OK"
    assert cs.cmd("SENTINEL", "MONITOR", "other", "127.0.0.1", reps[0].port, 1) == "OK"
    with open(cs.conf) as f:
        text = f.read()
    assert text.startswith("# a comment kept by the rewrite\n")
    assert "sentinel myid %s\n" % myid in text
    assert "sentinel known-replica %s 127.0.0.1 %d\n" % (NAME, reps[0].port) in text
    assert "sentinel down-after-milliseconds %s 4000\n" % NAME in text
    assert "sentinel monitor other 127.0.0.1 %d 1\n" % reps[0].port in text
    assert not [n for n in os.listdir(cs.dir) if ".tmp-" in n]
    cs.stop()
    cs.start()
    assert cs.cmd("SENTINEL", "MYID") == myid
    m = pairs(cs.cmd("SENTINEL", "MASTER", NAME))
    assert (m["down-after-milliseconds"], m["parallel-syncs"], m["num-slaves"]) == ("4000", "3", "1")
    assert cs.cmd("SENTINEL", "REMOVE", "other") == "OK"
    assert cs.cmd("SENTINEL", "MASTERS")[0][1] == NAME and len(cs.cmd("SENTINEL", "MASTERS")) == 1
    with open(cs.conf) as f:
        assert "sentinel monitor other" not in f.read()
    assert cs.cmd("SENTINEL", "RESET", "*") == 1
    assert cs.cmd("SENTINEL", "FLUSHCONFIG") == "OK"


def test_config_errors(sentinels, tmp_path):
    """A bad `sentinel` line stops the start with Redis's message."""
    conf = tmp_path / "s.conf"
    for line, msg in (("sentinel monitor m 127.0.0.1 6379 0", "Quorum must be 1 or greater."),
                      ("sentinel down-after-milliseconds nope 10", "No such master with specified name."),
                      ("sentinel frobnicate 1", "Unrecognized sentinel configuration statement."),
                      ("sentinel myid 123", "Malformed Sentinel id in myid option.")):
        conf.write_text("port %d\n%s\n" % (free_port(), line))
        r = subprocess.run([CAIRN_SENTINEL, str(conf)], capture_output=True, timeout=20, text=True)
        assert r.returncode != 0
        assert "FATAL CONFIG FILE ERROR" in r.stderr and msg in r.stderr, r.stderr


def test_requirepass(sentinels):
    cs = sentinels(CAIRN_SENTINEL, 1, monitor=False, extra="requirepass s3cret\n", password="s3cret")
    bare = redis.Redis(port=cs.port, socket_timeout=5)
    with pytest.raises((redis.ResponseError, redis.AuthenticationError), match="Authentication required"):
        bare.ping()
    with pytest.raises((redis.ResponseError, redis.AuthenticationError), match="WRONGPASS invalid username-password"):
        bare.execute_command("AUTH", "wrong")
    assert bare.execute_command("AUTH", "s3cret") is True
    assert bare.ping() is True


def test_sdown_odown_and_events(start_server, sentinels):
    """Two cairn-sentinels (quorum 2) over a Cairn primary: SIGSTOP of the
    primary gives +sdown on both, then +odown through is-master-down-by-
    addr; SIGCONT brings -sdown and -odown.  Events arrive on their
    channels in Redis's format."""
    p, reps = group(start_server, 0)
    a = sentinels(CAIRN_SENTINEL, p.port)
    b = sentinels(CAIRN_SENTINEL, p.port)
    for s in (a, b):
        wait_for(lambda: len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 1, 40, "sentinels meet")
    ps = redis.Redis(port=a.port, socket_timeout=5, decode_responses=True).pubsub()
    ps.psubscribe("*down")
    ps.get_message(timeout=5)  # the psubscribe confirmation
    os.kill(p.pid, signal.SIGSTOP)
    try:
        for s in (a, b):
            wait_for(lambda: "o_down" in pairs(s.cmd("SENTINEL", "MASTER", NAME))["flags"], 40, "odown")
        got = []
        wait_for(lambda: got.append(ps.get_message(timeout=0.2)) or
                 any(m and m["channel"] == "+odown" for m in got), 20, "+odown event")
        ev = {m["channel"]: m["data"] for m in got if m and m["type"] == "pmessage"}
        assert ev["+sdown"] == "master %s 127.0.0.1 %d" % (NAME, p.port)
        assert ev["+odown"] == "master %s 127.0.0.1 %d #quorum 2/2" % (NAME, p.port)
        assert a.cmd("SENTINEL", "IS-MASTER-DOWN-BY-ADDR", "127.0.0.1", p.port, 0, "*")[0] == 1
        assert a.client.info("sentinel")["master0"]["status"] == "odown"
    finally:
        os.kill(p.pid, signal.SIGCONT)
    for s in (a, b):
        wait_for(lambda: pairs(s.cmd("SENTINEL", "MASTER", NAME))["flags"] == "master", 40, "back up")
    assert "+odown master %s" % NAME in a.log() and "-sdown master %s" % NAME in a.log()


def test_three_cairn_sentinels_fail_over_once(start_server, sentinels):
    """Three cairn-sentinels over a Cairn primary + 2 replicas: SIGKILL of
    the primary gives exactly one failover (one +failover-end in all the
    logs), every sentinel switches to the promoted replica, the other
    replica follows it, writes acknowledged by WAIT 1 before the kill are
    there."""
    p, reps = group(start_server, 2)
    sents = [sentinels(CAIRN_SENTINEL, p.port, failover_timeout=6000) for _ in range(3)]
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 2 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2, 60, "discovery")
    pc = p.client()
    acked = []
    for i in range(50):
        pc.set("k%d" % i, i)
        if pc.execute_command("WAIT", 1, 2000) >= 1:
            acked.append(i)
    assert acked
    os.kill(p.pid, signal.SIGKILL)
    p.proc.wait()
    try:
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] != str(p.port), 90,
                     "switch-master")
        addrs = {tuple(s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)) for s in sents}
        assert len(addrs) == 1
        port = int(addrs.pop()[1])
        new = next(r for r in reps if r.port == port)
        other = next(r for r in reps if r is not new)
        assert new.client().execute_command("ROLE")[0] == b"master"
        for i in acked:
            assert new.client().get("k%d" % i) == str(i).encode()
        wait_for(lambda: other.client().info("replication").get("master_port") == new.port and
                 other.client().info("replication")["master_link_status"] == "up", 60, "sibling follows")
        switch = "+switch-master %s 127.0.0.1 %d 127.0.0.1 %d" % (NAME, p.port, port)
        wait_for(lambda: all(switch in s.log() for s in sents), 30, "every sentinel logs the switch")
        logs = [s.log() for s in sents]
        assert sum(l.count("+failover-end ") for l in logs) == 1
        for s in sents:
            m = pairs(s.cmd("SENTINEL", "MASTER", NAME))
            assert int(m["config-epoch"]) >= 1
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-4000:]) for s in sents)))


def test_mixed_group_fails_over_once(start_server, sentinels):
    """Two cairn-sentinels and one redis-sentinel over a Cairn primary + 2
    replicas: they find each other, SIGKILL of the primary gives exactly
    one failover whoever leads it, all three agree on the new primary, and
    the old primary, restarted, is turned into its replica."""
    if not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    cfg = {"config_file": "", "repl-diskless-sync-delay": "0"}
    p, reps = group(start_server, 2)
    sents = [sentinels(CAIRN_SENTINEL, p.port, failover_timeout=6000),
             sentinels(SENTINEL_BIN, p.port, failover_timeout=6000),
             sentinels(CAIRN_SENTINEL, p.port, failover_timeout=6000)]
    quicken(*sents)
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 2 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2, 60, "discovery")
    old_port = p.port
    os.kill(p.pid, signal.SIGKILL)
    p.proc.wait()
    try:
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] != str(old_port), 90,
                     "switch-master")
        addrs = {tuple(s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)) for s in sents}
        assert len(addrs) == 1
        port = int(addrs.pop()[1])
        new = next(r for r in reps if r.port == port)
        other = next(r for r in reps if r is not new)
        assert new.client().execute_command("ROLE")[0] == b"master"
        wait_for(lambda: other.client().info("replication").get("master_port") == new.port and
                 other.client().info("replication")["master_link_status"] == "up", 60, "sibling follows")
        switch = "+switch-master %s 127.0.0.1 %d 127.0.0.1 %d" % (NAME, old_port, port)
        wait_for(lambda: all(switch in s.log() for s in sents), 30, "every sentinel logs the switch")
        assert sum(s.log().count("+failover-end ") for s in sents) == 1
        back = start_server(port=old_port, **cfg)
        wait_for(lambda: back.client().info("replication").get("master_port") == new.port and
                 back.client().info("replication")["master_link_status"] == "up", 120, "old primary rejoins")
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-4000:]) for s in sents)))


def test_sentinel_failover_command(start_server, sentinels):
    """SENTINEL FAILOVER on a healthy group: the replica is promoted
    without an election, every sentinel follows, the old primary is made
    its replica; the errors are redis-sentinel's.  failover-timeout is the
    default (3 minutes): the old primary, reporting itself a primary, is
    converted after Redis's 4 publish periods, not after that timeout."""
    p, reps = group(start_server, 1)
    sents = [sentinels(CAIRN_SENTINEL, p.port, failover_timeout=180000) for _ in range(2)]
    quicken(*sents)
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 1, 60, "discovery")
    assert sents[0].err("SENTINEL", "FAILOVER", "nope") == "No such master with that name"
    # the replica's INFO must have been seen: wait for a valid refresh
    wait_for(lambda: sents[0].cmd("SENTINEL", "FAILOVER", NAME) == "OK", 40, "failover accepted")
    assert sents[0].err("SENTINEL", "FAILOVER", NAME) in (None, "INPROG Failover already in progress")
    r = reps[0]
    try:
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(r.port), 60, "switch")
        assert r.client().execute_command("ROLE")[0] == b"master"
        wait_for(lambda: p.client().info("replication").get("master_port") == r.port and
                 p.client().info("replication")["master_link_status"] == "up", 90, "old primary follows")
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-4000:]) for s in sents)))


def test_malformed_hellos_are_ignored(start_server, sentinels):
    """Hello messages with a wrong field count, bad ports, overflowing or
    signed epochs, or a short run id change nothing; a good one adds the
    sender."""
    p, reps = group(start_server, 0)
    cs = sentinels(CAIRN_SENTINEL, p.port)
    rid = "0123456789abcdef0123456789abcdef01234567"
    bad = ["", "a,b,c", ",,,,,,,", "127.0.0.1,0,%s,1,%s,127.0.0.1,%d,0" % (rid, NAME, p.port),
           "127.0.0.1,70000,%s,1,%s,127.0.0.1,%d,0" % (rid, NAME, p.port),
           "127.0.0.1,5000,%s,99999999999999999999999,%s,127.0.0.1,%d,0" % (rid, NAME, p.port),
           "127.0.0.1,5000,%s,-1,%s,127.0.0.1,%d,0" % (rid, NAME, p.port),
           "127.0.0.1,5000,abc,1,%s,127.0.0.1,%d,0" % (NAME, p.port),
           "127.0.0.1,5000,%s,1,%s,127.0.0.1,x,0" % (rid, NAME),
           "127.0.0.1,5000,%s,1,%s,127.0.0.1,%d,1,extra" % (rid, NAME, p.port),
           "x" * 5000]
    for b in bad:
        assert cs.cmd("PUBLISH", "__sentinel__:hello", b) == 1
    assert cs.cmd("SENTINEL", "SENTINELS", NAME) == []
    assert pairs(cs.cmd("SENTINEL", "MASTER", NAME))["config-epoch"] == "0"
    assert cs.cmd("PUBLISH", "__sentinel__:hello", "127.0.0.1,5000,%s,3,%s,127.0.0.1,%d,0" % (rid, NAME, p.port)) == 1
    s = cs.cmd("SENTINEL", "SENTINELS", NAME)
    assert len(s) == 1 and pairs(s[0])["runid"] == rid
    assert "sentinel current-epoch 3" in open(cs.conf).read()
