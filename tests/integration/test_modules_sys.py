"""Loadable modules (issue 41): command filters, RedisModule_Fork, the ACL
and authentication API and the server events of persistence, loading,
replication and fork children (tests/modules/filter.c, fork.c, acl.c,
sysevents.c), loaded into Cairn and into redis-server 7.0.15; the same
commands must give the same bytes."""
import os
import subprocess

import pytest

from test_modules import ROOT, built_modules, loaded, mod, raw, same  # noqa: F401 (built_modules: the autouse fixture)
from waithelp import wait_for


def test_command_filters(start_server, start_oracle):
    """Arguments deleted, inserted, replaced and retained by a filter, on
    client commands, inside MULTI, in a script's redis.call and in a
    module's Call; the NOSELF filter skips the module's own Call; a filter
    deleting every argument leaves nothing to run; out-of-range positions;
    unregistering."""
    srv = loaded(start_server, "filter")
    ora = loaded(start_oracle, "filter")
    cmds = [("RPUSH", "l", "a", "@delme", "b"), ("LRANGE", "l", "0", "-1"),
            ("RPUSH", "l2", "x", "@insertbefore", "y", "@insertafter", "z"), ("LRANGE", "l2", "0", "-1"),
            ("SET", "k", "@replaceme"), ("GET", "k"), ("RPUSH", "l3", "@count", "a", "b"),
            ("LRANGE", "l3", "0", "-1"), ("RPUSH", "l4", "@retain", "kept-value", "v"),
            ("LRANGE", "l4", "0", "-1"), ("filter.retained",),
            ("MULTI",), ("RPUSH", "m", "@delme", "1", "@insertafter"), ("EXEC",), ("LRANGE", "m", "0", "-1"),
            ("EVAL", "return redis.call('rpush', KEYS[1], '@delme', 'a', '@replaceme')", "1", "s"),
            ("LRANGE", "s", "0", "-1"),
            ("EVAL", "return redis.pcall('set', KEYS[1], '@noself')", "1", "ns"), ("GET", "ns"),
            ("SET", "n1", "@noself"), ("GET", "n1"),
            ("filter.call", "SET", "n2", "%noself"), ("GET", "n2"),
            ("filter.call", "RPUSH", "c", "@delme", "q", "@insertbefore"), ("LRANGE", "c", "0", "-1"),
            ("filter.call", "EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "n3", "%noself"),
            ("GET", "n3"),
            ("filter.badpos",), ("PING",), ("filter.badpos", "show"),
            ("filter.unregister",), ("filter.unregister",), ("RPUSH", "u", "@delme"), ("LRANGE", "u", "0", "-1"),
            ("SET", "n4", "@noself"), ("GET", "n4")]
    out = same(srv, ora, cmds)
    assert out[1] == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert out[10] == b"$10\r\nkept-value\r\n"
    assert out[20] == b"$10\r\n--noself--\r\n" and out[22] == b"$7\r\n@noself\r\n"


def test_filters_go_with_module(start_server, start_oracle):
    for start in (start_server, start_oracle):
        srv = loaded(start)
        cmds = [("MODULE", "LOAD", mod("filter")), ("SET", "a", "@replaceme"), ("GET", "a"),
                ("MODULE", "UNLOAD", "filter"), ("SET", "a", "@replaceme"), ("GET", "a")]
        out = raw(srv, cmds)
        assert out[2] == b"$12\r\n--replaced--\r\n" and out[5] == b"$10\r\n@replaceme\r\n"


def test_filter_deleting_every_argument(start_server):
    """Nothing is left to run: an unknown-command error (Redis reads the
    freed first argument there, so its text is not compared), and the
    server goes on."""
    srv = loaded(start_server, "filter")
    out = raw(srv, [("GET", "@dropall"), ("EVAL", "return redis.pcall('get', '@dropall')", "0"),
                    ("filter.call", "GET", "%dropall"), ("PING",)])
    assert out[0].startswith(b"-ERR unknown command")
    assert out[1].startswith(b"-ERR Please specify at least one argument")
    assert out[2] == b"-ERR call failed\r\n" and out[3] == b"+PONG\r\n"


def info_field(srv, section, name):
    with srv.connect() as c:
        from resphelp import encode, read_values
        c.send(encode("INFO", section))
        text = read_values(c, 1).decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise AssertionError("no %s in INFO %s" % (name, section))


def test_module_fork(start_server, start_oracle, tmp_path):
    """A module's child writes a file and exits with a code: the done
    handler gets the code (and signal 0) from the timer that reaps it;
    while a child runs, another Fork fails with EEXIST and BGSAVE answers
    Redis's "Another child" error; KillForkChild kills it without calling
    the handler; a BGSAVE's child makes Fork fail too; INFO persistence's
    module_fork_in_progress."""
    for name, start in (("cairn", start_server), ("redis", start_oracle)):
        srv = loaded(start, "fork")
        path = str(tmp_path / (name + ".out"))
        r = raw(srv, [("fork.start", path, "3", "0")])
        assert r == [b"+OK\r\n"]
        wait_for(lambda: raw(srv, [("fork.running",)]) == [b":0\r\n"], what="the done handler")
        assert raw(srv, [("fork.done",)]) == [b"*3\r\n:1\r\n:3\r\n:0\r\n"]
        assert open(path).read() == "child 3"
        assert info_field(srv, "persistence", "module_fork_in_progress") == "0"
        out = raw(srv, [("fork.start", path + "2", "0", "20000"), ("fork.start", path + "3", "0", "0"),
                        ("BGSAVE",), ("SAVE",), ("BGREWRITEAOF",)])
        assert out[0] == b"+OK\r\n" and out[1] == b"-ERR fork: EEXIST\r\n"
        assert out[2] == (b"-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
                          b"SCHEDULE in order to schedule a BGSAVE whenever possible.\r\n")
        assert out[3] == b"+OK\r\n"
        assert out[4] == b"+Background append only file rewriting scheduled\r\n", (name, out[4])
        assert info_field(srv, "persistence", "module_fork_in_progress") == "1"
        assert raw(srv, [("fork.kill", "1"), ("fork.kill",), ("fork.kill",)]) == [b"+ERR\r\n", b"+OK\r\n",
                                                                               b"+ERR\r\n"]
        assert info_field(srv, "persistence", "module_fork_in_progress") == "0"
        assert raw(srv, [("fork.done",)]) == [b"*3\r\n:1\r\n:3\r\n:0\r\n"]
        # the scheduled rewrite runs once the child slot is free
        wait_for(lambda: info_field(srv, "persistence", "aof_rewrite_scheduled") == "0" and
                 info_field(srv, "persistence", "aof_rewrite_in_progress") == "0", what="the rewrite")
        # a BGSAVE's child: Fork fails
        raw(srv, [("CONFIG", "SET", "rdb-key-save-delay", "1000000"), ("SET", "a", "1"), ("SET", "b", "2")])
        assert raw(srv, [("BGSAVE",), ("fork.start", path + "4", "0", "0")]) == [
            b"+Background saving started\r\n", b"-ERR fork: EEXIST\r\n"]
        raw(srv, [("CONFIG", "SET", "rdb-key-save-delay", "0")])
        # a child killed by a signal: the handler gets -1 and the signal
        # (exit code 255 counts as SIGUSR1, Redis's no-error exit)
        wait_for(lambda: info_field(srv, "persistence", "rdb_bgsave_in_progress") == "0", timeout=30,
                 what="the BGSAVE")
        assert raw(srv, [("fork.start", path + "5", "255", "0")]) == [b"+OK\r\n"]
        wait_for(lambda: raw(srv, [("fork.running",)]) == [b":0\r\n"], what="the done handler")
        assert raw(srv, [("fork.done",)]) == [b"*3\r\n:2\r\n:1\r\n:10\r\n"]


def _acl_run(srv):
    """The module ACL API exercised on one server; what each step answered
    (no client ids or addresses), for comparison."""
    import redis
    from test_modules import plain
    out = []

    ids = {}

    def q(c, *args):
        try:
            v = c.execute_command(*args)
        except redis.ResponseError as e:
            v = ("error", str(e))
        out.append((tuple(ids.get(a, a) for a in args), v))
        return v

    c1 = plain(srv)
    q(c1, "ACL", "SETUSER", "limited", "on", "nopass", "+get", "+set", "~a*", "%R~r*", "resetchannels", "&ch*")
    for args in [("default", "GET", "k"), ("limited", "GET", "a1"), ("limited", "GET", "b1"),
                 ("limited", "SET", "a1", "x"), ("limited", "SET", "r1", "x"), ("limited", "NOSUCH"),
                 ("limited", "CONFIG", "GET", "x"), ("nouser", "GET", "k")]:
        q(c1, "macl.checkcmd", *args)
    for args in [("R", "a1"), ("R", "b1"), ("I", "a1"), ("RU", "r1"), ("R", "r1"), ("-", "b1"), ("-", "r1"),
                 ("D", "r1"), ("X", "a1")]:
        q(c1, "macl.checkkey", "limited", *args)
    for args in [("P", "ch1"), ("S", "other"), ("U", "other"), ("pS", "ch*"), ("pS", "c*"), ("", "other"),
                 ("X", "ch1")]:
        q(c1, "macl.checkchan", "limited", *args)
    q(c1, "macl.create", "modu")
    q(c1, "macl.getstr")
    q(c1, "macl.set", "on", "nopass", "+@all", "~*", "bogusrule", "&*")
    q(c1, "macl.getstr")
    q(c1, "macl.setstr", "on -@all +get ~k* (+set ~s*)")
    q(c1, "macl.setstr", "+nosuchcmd")
    q(c1, "macl.setstr", "'unbalanced")
    q(c1, "macl.getstr")
    q(c1, "ACL", "USERS")  # module users are not listed
    for args in [("GET", "k1"), ("SET", "k1", "v"), ("SET", "s1", "v"), ("GET", "s1")]:
        q(c1, "macl.checkcmd", "module", *args)
    q(c1, "ACL", "LOG", "RESET")
    # SetContextUser: Call with "C" checked with that user's permissions
    q(c1, "macl.set", "-set")
    for args in [("module", "GET", "k1"), ("module", "SET", "k1", "v"), ("module", "GET", "zz"),
                 ("limited", "GET", "a1"), ("limited", "GET", "b1"), ("default", "SET", "k9", "v")]:
        q(c1, "macl.callas", *args)
    for reason, obj in [("0", "who"), ("1", "somecmd"), ("2", "somekey"), ("3", "somechan"), ("2", "somekey")]:
        q(c1, "macl.log", "module", reason, obj)
    q(c1, "macl.log", "limited", "2", "k")
    log = c1.execute_command("ACL", "LOG")
    for e in log:
        d = dict(zip(e[::2], e[1::2]))
        out.append(("log", [d[k] for k in (b"count", b"reason", b"context", b"object", b"username")]))
    # authentication and its callback
    c2 = plain(srv)
    id2 = c2.execute_command("CLIENT", "ID")
    ids[id2] = "<id of c2>"
    q(c2, "macl.auth", "cb")
    q(c2, "macl.whoami")
    q(c2, "ACL", "WHOAMI")
    q(c2, "GET", "k1")
    q(c2, "SET", "k1", "v")
    q(c1, "macl.nameof", id2)
    q(c1, "macl.nameof", 999999)
    q(c1, "macl.events")
    q(c2, "AUTH", "default", "whatever")
    q(c1, "macl.events")
    q(c2, "macl.auth", "cb")
    q(c2, "macl.auth", "cb")
    q(c1, "macl.events")
    q(c1, "macl.deauth", id2)
    q(c1, "macl.deauth", 999999)
    q(c1, "macl.events")
    try:
        c2.execute_command("PING")
        out.append("c2 still open")
    except redis.ConnectionError:
        out.append("c2 closed")
    c3 = plain(srv)
    q(c3, "macl.authacl", "limited", "cb")
    q(c3, "macl.authacl", "nosuch", "cb")
    q(c3, "ACL", "WHOAMI")
    q(c1, "ACL", "DELUSER", "limited")
    wait_for(lambda: out.append(("ev", c1.execute_command("macl.events"))) or out[-1][1], what="the callback")
    c4 = plain(srv)
    q(c4, "macl.auth", "cb")
    q(c1, "macl.free")
    wait_for(lambda: out.append(("ev", c1.execute_command("macl.events"))) or out[-1][1], what="the callback")
    try:
        c4.execute_command("PING")
        out.append("c4 still open")
    except redis.ConnectionError:
        out.append("c4 closed")
    q(c1, "macl.create", "offuser")
    q(c1, "macl.auth")
    q(c1, "macl.authacl", "default")
    q(c1, "macl.whoami")
    q(c1, "macl.cert")
    q(c1, "CONFIG", "SET", "slowlog-log-slower-than", "0")
    q(c1, "macl.redact", "1", "0", "5", "2")
    out.append(("slowlog", c1.execute_command("SLOWLOG", "GET", "1")[0][3]))
    return out


def test_module_acl_api(start_server, start_oracle):
    """Module users (created, given rules one by one or as a string, their
    ACL string, freed with their clients closed), authentication as a
    module user or an ACL user with the change callback (AUTH, another
    authentication, Deauthenticate, ACL DELUSER, FreeModuleUser), the
    three permission checks with their errno, ACL LOG entries a module
    adds, GetClientUserNameById, argument redaction in SLOWLOG: the same
    answers as redis-server 7.0.15."""
    a = _acl_run(loaded(start_server, "acl"))
    b = _acl_run(loaded(start_oracle, "acl"))
    for x, y in zip(a, b):
        assert x == y, "cairn %r, redis %r" % (x, y)
    assert len(a) == len(b)


def _sev_log(srv):
    import redis  # noqa: F401
    from test_modules import plain
    return [x.decode() for x in plain(srv).execute_command("sev.log")]


def _events_run(srv):
    from test_modules import plain
    r = plain(srv)
    out = []
    _sev_log(srv)
    r.execute_command("SET", "a", "1")
    r.execute_command("SAVE")
    out.append(("SAVE", _sev_log(srv)))
    r.execute_command("BGSAVE")
    wait_for(lambda: info_field(srv, "persistence", "rdb_bgsave_in_progress") == "0", what="the BGSAVE")
    wait_for(lambda: out.append(("BGSAVE", _sev_log(srv))) or out[-1][1], what="the BGSAVE events")
    r.execute_command("DEBUG", "RELOAD")
    out.append(("DEBUG RELOAD", _sev_log(srv)))
    r.execute_command("SELECT", "5")
    r.execute_command("SET", "outer", "1")
    out.append(("nested", _sev_log(srv)))
    out.append(("supported", r.execute_command("sev.supported")))
    out.append(("eventloop", r.execute_command("sev.loop")))
    return out


def test_persistence_loading_fork_events(start_server, start_oracle):
    """SAVE's sync-RDB start and end, BGSAVE's child born and died (its
    own start and end fire in the child), DEBUG RELOAD's save, flush and
    load; a firing nested in another's callback has its own client; what
    IsSubEventSupported answers for every event and subevent."""
    a = _events_run(loaded(start_server, "sysevents", enable_debug_command="yes"))
    b = _events_run(loaded(start_oracle, "sysevents", enable_debug_command="yes"))
    assert a == b
    assert a[0] == ("SAVE", ["persist:2", "persist:3"])
    assert a[3] == ("nested", ["outer:db5"])
    assert a[5] == ("eventloop", [1, 1])


def test_replication_events(start_server, start_oracle):
    """REPLICAOF on a second server: the replica's role change (with the
    primary's host and port), its full sync's flush and load, its link up;
    the primary's sync child and its replica online; REPLICAOF NO ONE: the
    link down and the role change; the primary sees its replica offline."""
    def run(start):
        cfg = dict(enable_debug_command="yes", repl_diskless_sync_delay="0")
        p = loaded(start, "sysevents", **cfg)
        r = loaded(start, "sysevents", **cfg)
        for s in (p, r):
            _sev_log(s)
        port = str(p.port)
        norm = lambda log: [x.replace(":" + port + ":", ":PORT:") for x in log]  # noqa: E731
        out = []
        from test_modules import plain
        plain(r).execute_command("REPLICAOF", "127.0.0.1", p.port)
        wait_for(lambda: info_field(r, "replication", "master_link_status") == "up", timeout=30, what="the sync")
        wait_for(lambda: info_field(p, "persistence", "rdb_bgsave_in_progress") == "0", what="the sync child")
        out.append(("replica after sync", norm(_sev_log(r))))
        wait_for(lambda: out.append(("primary after sync", _sev_log(p))) or "fork:1" in out[-1][1] or
                 "fork:1" in sum((x[1] for x in out if x[0] == "primary after sync"), []), what="the child's end")
        prim = sum((x[1] for x in out if x[0] == "primary after sync"), [])
        out = [x for x in out if x[0] != "primary after sync"] + [("primary after sync", prim)]
        plain(r).execute_command("REPLICAOF", "NO", "ONE")
        out.append(("replica after NO ONE", norm(_sev_log(r))))
        got = []
        wait_for(lambda: got.extend(_sev_log(p)) or "replica:1" in got, what="the replica offline")
        out.append(("primary after NO ONE", got))
        return out
    a = run(start_server)
    b = run(start_oracle)
    assert a == b
    assert a[0][1][0].startswith("role:1:0:127.0.0.1:PORT")


@pytest.fixture
def start_tls_pair(request, tls_certs):
    """Cairn and redis-server started with the tls-* directives (clients
    reach their tls-port with the client certificate)."""
    import shutil
    import tlshelp
    from conftest import ORACLE_BIN, _factory, cairn_bin
    if not tlshelp.binary_has_tls(cairn_bin()):
        pytest.skip("this Cairn build has no TLS (make TLS=no)")
    gens = [_factory(request, cairn_bin(), "cairn", tls_certs),
            _factory(request, shutil.which(ORACLE_BIN) or ORACLE_BIN, "oracle", tls_certs)]
    starts = [next(g) for g in gens]
    yield starts
    for g in gens:
        for _ in g:
            pass


def test_client_certificate(start_tls_pair, tls_certs):
    """GetClientCertificate: the PEM of the certificate the TLS client
    presented, the same bytes on both servers (the client's certificate
    file); null on a plain TCP connection."""
    outs = []
    for start in start_tls_pair:
        srv = loaded(start, "acl")
        with srv.connect() as c:
            from resphelp import encode, read_values
            c.send(encode("macl.cert"))
            tls_reply = read_values(c, 1)
        import socket
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        s.sendall(encode("macl.cert"))
        plain_reply = s.recv(100)
        s.close()
        outs.append((tls_reply, plain_reply))
    assert outs[0] == outs[1]
    pem = open(tls_certs.crt("client"), "rb").read()
    assert outs[0][0].split(b"\r\n", 1)[1].startswith(b"-----BEGIN CERTIFICATE-----")
    assert b"BEGIN CERTIFICATE" in pem and outs[0][1] == b"$-1\r\n"


def test_loading_progress_event(start_server, start_oracle):
    """A start-up load of a few megabytes, slowed down (key-load-delay):
    Loading start, LoadingProgress (RDB, progress within 0..1024, hz) a
    few times (how many depends on the clock, so not compared), Loading
    ended; the same on Redis."""
    logs = []
    for start in (start_server, start_oracle):
        srv = loaded(start, "sysevents", enable_debug_command="yes", loading_process_events_interval_bytes="1024",
                     key_load_delay="30")
        from test_modules import plain
        r = plain(srv)
        r.execute_command("DEBUG", "POPULATE", "20000", "key", "100")
        r.execute_command("SAVE")
        srv.stop()
        # the same config file (its loadmodule line) and port again
        srv.config.update(config_file=open(os.path.join(srv.tmp, "server.conf")).read(), port=srv.port)
        srv._start()
        wait_for(lambda: info_field(srv, "persistence", "loading") == "0", timeout=60, what="the load",
                 ignore=(ConnectionError, OSError))
        logs.append(_sev_log(srv))
    for log in logs:
        progress = [x for x in log if x.startswith("progress:")]
        assert progress and all(x == "progress:0:ok" for x in progress), log
        assert [x for x in log if not x.startswith("progress:")] == ["loading:0", "loading:3"], log


def _child_persist(srv):
    """The Persistence events the module wrote to the server's log (those
    of fork children included), in order."""
    import re
    return re.findall(r"sev-event (persist:\d)", srv.log)


def _restart(srv):
    srv.stop()
    # the same config file (its loadmodule line) and port again
    srv.config.update(config_file=open(os.path.join(srv.tmp, "server.conf")).read(), port=srv.port)
    srv._start()
    wait_for(lambda: info_field(srv, "persistence", "loading") == "0", timeout=60, what="the load",
             ignore=(ConnectionError, OSError))


def _aof_events_run(start):
    from test_modules import plain
    srv = loaded(start, "sysevents", enable_debug_command="yes", appendonly="yes")
    r = plain(srv)
    out = [("start-up", _sev_log(srv), _child_persist(srv))]
    r.execute_command("SET", "a", "1")
    r.execute_command("BGREWRITEAOF")
    wait_for(lambda: info_field(srv, "persistence", "aof_rewrite_in_progress") == "0" and
             info_field(srv, "persistence", "aof_rewrite_scheduled") == "0", what="the rewrite")
    got = []
    wait_for(lambda: got.extend(_sev_log(srv)) or "fork:1" in got, what="the rewrite child's end")
    wait_for(lambda: len(_child_persist(srv)) >= 4, what="the child's log lines")
    out.append(("BGREWRITEAOF", got, _child_persist(srv)))
    r.execute_command("SET", "b", "2")
    r.execute_command("DEBUG", "LOADAOF")
    out.append(("DEBUG LOADAOF", _sev_log(srv)))
    _restart(srv)
    out.append(("restart", _sev_log(srv)))
    assert plain(srv).execute_command("MGET", "a", "b") == [b"1", b"2"]
    return out


def test_aof_persistence_loading_events(start_server, start_oracle):
    """The AOF's events: start-up with no AOF writes the base in the
    foreground (Persistence SYNC_AOF_START, ENDED); BGREWRITEAOF's child
    fires AOF_START and ENDED in the child (seen in the server's log) while
    the parent sees the child born and died; DEBUG LOADAOF flushes (FlushDB
    start and end) and loads (Loading AOF_START, LoadingProgress AOF before
    the first command, ENDED); a restart loads the AOF the same way.  Cairn
    and redis-server give the same sequences."""
    a = _aof_events_run(start_server)
    b = _aof_events_run(start_oracle)
    assert a == b
    assert a[0] == ("start-up", ["persist:5", "persist:3"], ["persist:5", "persist:3"])
    assert a[1] == ("BGREWRITEAOF", ["fork:0", "fork:1"],
                    ["persist:5", "persist:3", "persist:1", "persist:3"])
    assert a[2] == ("DEBUG LOADAOF", ["flush:0:-1:1", "flush:1:-1:1", "loading:1", "progress:1:ok", "loading:3"])
    assert a[3] == ("restart", ["loading:1", "progress:1:ok", "loading:3"])


def test_aof_loading_progress_throttled(start_server, start_oracle):
    """A start-up load of an AOF of commands (no RDB base), slowed down
    (key-load-delay does not apply to commands, so many of them): Loading
    AOF_START, LoadingProgress AOF events within 0..1024 (how many depends
    on the clock, so not compared; at least the one before the first
    command), ENDED; the same on Redis."""
    logs = []
    for start in (start_server, start_oracle):
        srv = loaded(start, "sysevents", enable_debug_command="yes", appendonly="yes",
                     aof_use_rdb_preamble="no")
        from test_modules import plain
        r = plain(srv)
        p = r.pipeline(transaction=False)
        for i in range(5000):
            p.execute_command("SET", "k%d" % i, "v")
        p.execute()
        _sev_log(srv)
        _restart(srv)
        assert plain(srv).execute_command("DBSIZE") == 5000
        logs.append(_sev_log(srv))
    for log in logs:
        progress = [x for x in log if x.startswith("progress:")]
        assert progress and all(x == "progress:1:ok" for x in progress), log
        assert log[1] == "progress:1:ok", log
        assert [x for x in log if not x.startswith("progress:")] == ["loading:1", "loading:3"], log


def test_debug_reload_loading_progress(start_server, start_oracle):
    """DEBUG RELOAD of a few megabytes with a small
    loading-process-events-interval-bytes: LoadingProgress RDB events
    between Loading RDB_START and ENDED, as Redis's rdbLoad fires them
    (their number depends on the clock: at least one, not compared)."""
    logs = []
    for start in (start_server, start_oracle):
        srv = loaded(start, "sysevents", enable_debug_command="yes", loading_process_events_interval_bytes="1024")
        from test_modules import plain
        r = plain(srv)
        r.execute_command("DEBUG", "POPULATE", "20000", "key", "100")
        _sev_log(srv)
        r.execute_command("DEBUG", "RELOAD")
        logs.append(_sev_log(srv))
    for log in logs:
        progress = [x for x in log if x.startswith("progress:")]
        assert progress and all(x == "progress:0:ok" for x in progress), log
        rest = [x for x in log if not x.startswith("progress:")]
        assert rest == ["persist:2", "persist:3", "flush:0:-1:1", "flush:1:-1:1", "loading:0", "loading:3"], log
        assert log.index(progress[0]) > log.index("loading:0")


def _swapdb_sync(start, modargs):
    from test_modules import plain
    p = loaded(start, "sysevents", repl_diskless_sync_delay="0")
    r = loaded(start, ("sysevents",) + modargs, repl_diskless_load="swapdb")
    plain(p).execute_command("SET", "k", "v")
    _sev_log(r)
    plain(r).execute_command("REPLICAOF", "127.0.0.1", p.port)
    wait_for(lambda: info_field(r, "replication", "master_link_status") == "up", timeout=30, what="the sync")
    assert plain(r).execute_command("GET", "k") == b"v"
    log = [x for x in _sev_log(r) if not x.startswith("role:")]
    skipped = "Skipping diskless-load because there are modules that are not aware of async replication." in r.log
    return log, skipped


def test_repl_async_load_events(start_server, start_oracle):
    """A replica with repl-diskless-load swapdb: with every module
    declaring REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD the sync loads
    from the socket into databases aside: ReplAsyncLoad STARTED, Loading
    REPL_START, ReplAsyncLoad COMPLETED (after the swap), Loading ENDED,
    the link up; with a module not declaring it, the load goes through a
    file (Redis's log line) and only Loading fires.  Cairn and redis-server
    give the same sequences."""
    a = [_swapdb_sync(start_server, ("async",)), _swapdb_sync(start_server, ())]
    b = [_swapdb_sync(start_oracle, ("async",)), _swapdb_sync(start_oracle, ())]
    assert a == b
    assert a[0] == (["async:0", "loading:2", "async:2", "loading:3", "link:0"], False)
    assert a[1][1] is True and not any(x.startswith("async:") for x in a[1][0])


def _swapdb_abort(start):
    from test_modules import plain
    p = loaded(start, "sysevents", repl_diskless_sync_delay="0", rdb_key_save_delay="20000",
               enable_debug_command="yes")
    r = loaded(start, ("sysevents", "async"), repl_diskless_load="swapdb")
    plain(p).execute_command("DEBUG", "POPULATE", "100", "key", "65536")
    _sev_log(r)
    plain(r).execute_command("REPLICAOF", "127.0.0.1", p.port)
    # the replica is parsing the stream (20 ms a key on the primary's side;
    # values larger than what Redis's child buffers)
    wait_for(lambda: "MASTER <-> REPLICA sync: Loading DB in memory" in r.log, timeout=30, what="the load")
    p.proc.kill()  # the stream cut off
    p.proc.wait()
    got = []
    wait_for(lambda: got.extend(_sev_log(r)) or "async:1" in got, timeout=30, what="the aborted load")
    assert plain(r).execute_command("DBSIZE") == 0
    return [x for x in got if not x.startswith("role:")]


def test_repl_async_load_aborted(start_server, start_oracle):
    """A swapdb diskless load cut off (the primary killed while the RDB
    still streams): Loading FAILED, then ReplAsyncLoad ABORTED (the
    temporary databases dropped, the replica's data as it was).  The same
    on Redis."""
    a = _swapdb_abort(start_server)
    b = _swapdb_abort(start_oracle)
    assert a == b
    assert a == ["async:0", "loading:2", "loading:4", "async:1"]
