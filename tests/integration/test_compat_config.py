"""Issue 33, configuration and ACL compatibility: binary string directives
(requirepass, masterauth), oom-score-adj, CONFIG SET's validation order,
CONFIG RESETSTAT, duplicate users at start-up, ACL CAT's arity,
redis.acl_check_cmd, READONLY/READWRITE/ASKING and CLUSTER without
cluster support, and the hidden directives of Redis 7.0.15.

Differential where the oracle applies: the same commands go to Cairn and
to redis-server 7.0.15 and the replies are compared."""
import os
import re
import shutil
import subprocess
import time

import pytest
import redis

from compare import same
from conftest import ORACLE_BIN, cairn_bin, free_port

BOTH = ["server", "oracle"]
NUL_VALUE = b"abc\x00def"


def target(request, which, **cfg):
    factory = "start_server" if which == "server" else "start_oracle"
    return request.getfixturevalue(factory)(**cfg)


def run(r, *args):
    """Reply of one command, or ('error', text) for an error reply (the
    client raises AuthenticationError for NOAUTH, also an error reply)."""
    try:
        return r.execute_command(*args)
    except (redis.ResponseError, redis.AuthenticationError) as e:
        return ("error", str(e))


def raw_client(s, **kw):
    c = s.client(**kw)
    c.response_callbacks.clear()
    return c


# --- item 1: string directives and NUL bytes ---------------------------------

# Every string-valued directive CONFIG SET accepts.  Redis keeps the bytes of
# its sds directives (requirepass, masterauth) and cuts the C-string ones at
# the first NUL; Cairn must do the same.
STRING_DIRECTIVES = [
    "requirepass", "masterauth", "masteruser", "proc-title-template", "replica-announce-ip",
    "cluster-announce-ip", "cluster-announce-hostname", "bind-source-addr", "ignore-warnings",
    "tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
    "tls-client-key-file", "tls-client-key-file-pass", "tls-ca-cert-file", "tls-ca-cert-dir",
    "tls-dh-params-file", "tls-ciphers", "tls-ciphersuites", "tls-protocols",
    "notify-keyspace-events", "dbfilename", "dir",
    "logfile", "pidfile", "unixsocket", "syslog-ident", "aclfile", "appendfilename",
    "appenddirname", "cluster-config-file",
]


def test_string_directives_with_nul_match_redis(server, oracle):
    a, b = raw_client(server), raw_client(oracle)
    for name in STRING_DIRECTIVES:
        got = [run(a, "CONFIG", "SET", name, NUL_VALUE), run(a, "CONFIG", "GET", name)]
        want = [run(b, "CONFIG", "SET", name, NUL_VALUE), run(b, "CONFIG", "GET", name)]
        if name in ("dir", "unixsocket", "logfile", "pidfile"):
            got, want = got[:1], want[:1]  # values differ per process
        assert got == want, name
    # the binary ones are kept whole
    assert run(a, "CONFIG", "GET", "requirepass") == [b"requirepass", NUL_VALUE]
    assert run(a, "CONFIG", "GET", "masterauth") == [b"masterauth", NUL_VALUE]


@pytest.mark.parametrize("which", BOTH)
def test_binary_requirepass_authenticates_only_whole(request, which):
    s = target(request, which)
    r = raw_client(s)
    assert run(r, "CONFIG", "SET", "requirepass", NUL_VALUE) == b"OK"
    fresh = raw_client(s)
    assert run(fresh, "AUTH", "abc") == ("error", "WRONGPASS invalid username-password pair or user is disabled.")
    assert run(fresh, "AUTH", "default", "abc") == (
        "error", "WRONGPASS invalid username-password pair or user is disabled.")
    assert run(fresh, "AUTH", NUL_VALUE) == b"OK"
    assert run(fresh, "PING") == b"PONG"
    # a change in the bytes after the NUL is a change of password
    assert run(fresh, "CONFIG", "SET", "requirepass", b"abc\x00xyz") == b"OK"
    other = raw_client(s)
    assert run(other, "AUTH", NUL_VALUE)[0] == "error"
    assert run(other, "AUTH", b"abc\x00xyz") == b"OK"
    assert run(other, "CONFIG", "SET", "requirepass", "") == b"OK"


@pytest.mark.parametrize("which", BOTH)
def test_binary_passwords_from_config_file_and_rewrite(request, which):
    conf = 'requirepass "abc\\x00def"\nmasterauth "x\\x00y"\nmasteruser "u\\x00v"\n'
    s = target(request, which, config_file=conf)
    r = raw_client(s)
    assert run(r, "PING")[0] == "error"
    assert run(r, "AUTH", "abc")[0] == "error"
    assert run(r, "AUTH", NUL_VALUE) == b"OK"
    assert run(r, "CONFIG", "GET", "master*") in ([b"masterauth", b"x\x00y", b"masteruser", b"u"],
                                                  [b"masteruser", b"u", b"masterauth", b"x\x00y"])
    assert run(r, "CONFIG", "SET", "requirepass", b"\x00q\x01") == b"OK"
    assert run(r, "CONFIG", "REWRITE") == b"OK"
    text = open(os.path.join(s.tmp, "server.conf")).read()
    lines = text.splitlines()
    assert 'requirepass "\\x00q\\x01"' in lines
    assert 'masterauth "x\\x00y"' in lines
    assert 'masteruser "u"' in lines
    # the rewritten file gives the same password back
    s2 = target(request, which, config_file=text)
    r2 = raw_client(s2)
    assert run(r2, "AUTH", "") [0] == "error"
    assert run(r2, "AUTH", b"\x00q\x01") == b"OK"
    assert run(r2, "CONFIG", "GET", "masterauth") == [b"masterauth", b"x\x00y"]


def test_replica_authenticates_with_binary_masterauth(start_server):
    primary = start_server()
    raw_client(primary).execute_command("CONFIG", "SET", "requirepass", NUL_VALUE)
    replica = start_server()
    r = raw_client(replica)
    assert run(r, "CONFIG", "SET", "masterauth", NUL_VALUE) == b"OK"
    assert run(r, "REPLICAOF", primary.host, str(primary.port)) == b"OK"
    up = False
    for _ in range(200):
        if b"master_link_status:up" in run(r, "INFO", "replication"):
            up = True
            break
        time.sleep(0.05)
    assert up


# --- item 23: oom-score-adj ---------------------------------------------------


def pid_of(r):
    info = r.execute_command("INFO", "server")
    if isinstance(info, bytes):
        info = info.decode()
        return int(info.split("process_id:")[1].split()[0])
    return int(info["process_id"])


def oom_of(pid):
    with open("/proc/%d/oom_score_adj" % pid) as f:
        return int(f.read())


def children_of(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return [int(x) for x in f.read().split()]


def oom_sequence(s):
    """Scores after each step of a CONFIG SET sequence (values only raised
    above the start: lowering below it needs CAP_SYS_RESOURCE)."""
    r = raw_client(s)
    pid = pid_of(s.client())
    seen = [oom_of(pid)]
    steps = [("oom-score-adj-values", "10 20 30"), ("oom-score-adj", "yes"), ("oom-score-adj", "absolute"),
             ("oom-score-adj-values", "40 50 60"), ("oom-score-adj", "no"), ("oom-score-adj", "relative"),
             ("oom-score-adj-values", "1500 20 30"), ("oom-score-adj-values", "+2000 01 -0"),
             ("oom-score-adj", "no")]
    for k, v in steps:
        seen.append((run(r, "CONFIG", "SET", k, v), run(r, "CONFIG", "GET", k), oom_of(pid)))
    return seen


def test_oom_score_adj_writes_proc_like_redis(server, oracle):
    a, b = oom_sequence(server), oom_sequence(oracle)
    assert a == b
    assert [x[2] for x in a[1:]] == [0, 10, 10, 40, 0, 40, 1000, 1000, 0]


def test_oom_score_adj_values_validation(server, oracle):
    bad = ["1 2", "1 2 3 4", "", " 1 2 3", "1  2 3", "2001 0 0", "0 -2001 0", "1.5 2 3", "x 1 2", "1x 2 3"]
    script = [("CONFIG", "SET", "oom-score-adj-values", v) for v in bad]
    script += [("CONFIG", "SET", "oom-score-adj", "bogus"), ("CONFIG", "SET", "oom-score-adj-values", "2000 -2000 0"),
               ("CONFIG", "GET", "oom-score-adj-values"), ("CONFIG", "SET", "oom-score-adj", "YES"),
               ("CONFIG", "GET", "oom-score-adj"), ("CONFIG", "SET", "oom-score-adj", "no")]
    same(server, oracle, script)


@pytest.mark.parametrize("which", BOTH)
def test_oom_score_adj_at_startup_role_and_children(request, which):
    s = target(request, which, oom_score_adj="absolute", oom_score_adj_values="100 200 300",
               rdb_key_save_delay="100000")
    r = raw_client(s)
    pid = pid_of(s.client())
    assert oom_of(pid) == 100
    # a background save child takes the bgchild value
    for i in range(20):
        r.execute_command("SET", "k%d" % i, "v")
    assert r.execute_command("BGSAVE")
    kids = children_of(pid)
    assert len(kids) == 1
    # the child sets its own score first thing after the fork
    for _ in range(200):
        if oom_of(kids[0]) == 300:
            break
        time.sleep(0.01)
    assert oom_of(kids[0]) == 300
    assert oom_of(pid) == 100
    r.execute_command("CONFIG", "SET", "rdb-key-save-delay", "0")
    # a replica takes the replica value, a primary again the master one
    assert run(r, "REPLICAOF", "127.0.0.1", "1") == b"OK"
    assert oom_of(pid) == 200
    assert run(r, "REPLICAOF", "NO", "ONE") == b"OK"
    assert oom_of(pid) == 100
    assert run(r, "CONFIG", "SET", "oom-score-adj", "no") == b"OK"
    assert oom_of(pid) == 0


# --- item 25: CONFIG SET's validation order, RESETSTAT, start-up users, ACL CAT


CONFIG_SET_CASES = [
    ("maxmemory", "bad", "nosuch", "1"), ("nosuch", "1", "maxmemory", "bad"), ("maxmemory", "bad", "port", "x"),
    ("maxmemory", "1", "maxmemory", "2"), ("maxmemory", "bad", "maxmemory", "2"),
    ("maxmemory", "bad", "daemonize", "yes"), ("daemonize", "yes", "maxmemory", "bad"),
    ("daemonize", "yes", "nosuch", "1"), ("nosuch", "1", "daemonize", "yes"), ("maxmemory", "1", "MAXMEMORY", "2"),
    ("hz", "1", "slaveof", "x"), ("hash-max-ziplist-entries", "1", "hash-max-listpack-entries", "2"),
    ("hz", "bad", "timeout", "bad"), ("timeout", "bad", "hz", "bad"), ("daemonize", "yes", "dir", "/tmp"),
    ("dir", "/tmp", "daemonize", "yes"), ("maxmemory", "1", "daemonize", "yes", "maxmemory", "2"),
    ("maxmemory", "1", "maxmemory", "2", "daemonize", "yes"), ("nosuch", "1", "maxmemory", "1", "maxmemory", "2"),
    ("maxmemory", "1", "maxmemory", "2", "nosuch", "1"), ("save", "bad", "hz", "bad"),
    ("hz", "5", "port", "99999"), ("port", "99999", "hz", "x"), ("MaxMemory", "bad"), ("lua-time-limit", "bad"),
    ("hz",), ("hz", "1", "timeout"), ("maxmemory", "1mb", "maxmemory-clients", "bad"),
    ("appendonly", "maybe", "hz", "3"), ("oom-score-adj-values", "1 2", "hz", "3"),
    ("maxmemory", "100", "hz", "1", "maxmemory-policy", "bogus"),
    ("notify-keyspace-events", "KEA", "notify-keyspace-events", "x"), ("bind", "1.2.3.4", "hz", "5"),
    ("hz", "5", "bind", "1.2.3.4"), ("slave-read-only", "yes", "replica-read-only", "no"),
    ("key-load-delay", "x", "hz", "1"), ("hz", "1", "enable-debug-command", "yes"),
]


def test_config_set_names_the_argument_redis_names(server, oracle):
    script = [("CONFIG", "SET") + c for c in CONFIG_SET_CASES]
    script += [("CONFIG", "GET", "maxmemory"), ("CONFIG", "GET", "hz"), ("CONFIG", "GET", "timeout")]
    same(server, oracle, script)


def lazyfreed(r):
    info = r.execute_command("INFO", "memory")
    info = info.decode() if isinstance(info, bytes) else info
    return int(info.split("lazyfreed_objects:")[1].split()[0])


@pytest.mark.parametrize("which", BOTH)
def test_config_resetstat_resets_lazyfreed_objects(request, which):
    s = target(request, which)
    r = raw_client(s)
    r.execute_command("SADD", "big", *range(1000))
    assert r.execute_command("UNLINK", "big") == 1
    for _ in range(200):
        if lazyfreed(r) == 1:
            break
        time.sleep(0.01)
    assert lazyfreed(r) == 1
    assert r.execute_command("CONFIG", "RESETSTAT") == b"OK"
    assert lazyfreed(r) == 0


def test_acl_cat_arity(server, oracle):
    same(server, oracle, [("ACL", "CAT", "a", "b"), ("ACL", "cat", "read", "x"), ("ACL", "CAT", "nosuch"),
                          ("ACL", "CAT", "a", "b", "c"), ("ACL", "GENPASS", "1", "2"), ("ACL", "LOG", "1", "2")])


# --- item 27: READONLY, READWRITE, ASKING, CLUSTER, MODULE without the feature


def test_cluster_commands_without_cluster_support(server, oracle):
    script = [("READONLY",), ("READONLY", "x"), ("READWRITE",), ("READWRITE", "x"), ("ASKING",), ("ASKING", "x"),
              ("CLUSTER",), ("CLUSTER", "INFO"), ("CLUSTER", "HELP"), ("CLUSTER", "nosuch"),
              ("CLUSTER", "KEYSLOT", "foo"), ("CLUSTER", "NODES"), ("CLUSTER", "SLOTS"), ("CLUSTER", "SHARDS"),
              ("CLUSTER", "ADDSLOTS", "1", "2"), ("CLUSTER", "MEET"), ("CLUSTER", "SETSLOT", "1", "NODE", "x"),
              ("COMMAND", "INFO", "readonly", "readwrite", "asking", "restore-asking"),
              ("COMMAND", "DOCS", "readonly"), ("COMMAND", "GETKEYS", "restore-asking", "k", "0", "x"),
              ("RESTORE-ASKING", "k", "0", "x"),
              ("EVAL", "return redis.call('cluster','info')", "0"),
              ("EVAL", "return redis.pcall('cluster','info')", "0"),
              ("EVAL", "return redis.call('readonly')", "0"),
              ("EVAL", "return redis.call('asking')", "0"),
              ("EVAL", "return redis.call('module','list')", "0"),
              ("EVAL", "return redis.call('module','help')", "0"),
              ("ACL", "SETUSER", "u1", "on", "nopass", "+readonly", "+get", "~*"),
              ("ACL", "SETUSER", "u2", "on", "nopass", "+cluster|info", "+readwrite", "+asking"),
              ("ACL", "DRYRUN", "u1", "readonly"), ("ACL", "DRYRUN", "u1", "readwrite"),
              ("ACL", "DRYRUN", "u2", "cluster", "info"), ("ACL", "DRYRUN", "u2", "cluster", "nodes")]
    same(server, oracle, script)
    a, b = raw_client(server), raw_client(oracle)
    la = sorted(a.execute_command("COMMAND", "LIST"))
    lb = sorted(b.execute_command("COMMAND", "LIST"))
    assert set(lb) - set(la) == set()
    # COMMAND COUNT: Redis's 240 plus Cairn's own commands (issue 39) and
    # those of newer Redis / Valkey versions (issue 38)
    own = {b"incrbybound", b"incrbyfloatbound", b"ztrim", b"zpopdue", b"bzpopdue",
           b"cl.throttle", b"rl.log", b"delex", b"delifeq", b"digest", b"msetex", b"waitaof"}
    # hash-field expiry (issue 38): Redis 7.4 / 8.0 commands
    own |= {b"hexpire", b"hpexpire", b"hexpireat", b"hpexpireat", b"httl", b"hpttl", b"hexpiretime",
            b"hpexpiretime", b"hpersist", b"hgetex", b"hsetex", b"hgetdel"}
    # member TTLs (issue 39): KeyDB's commands
    own |= {b"expiremember", b"expirememberat", b"pexpirememberat"}
    assert set(la) - set(lb) >= own
    assert a.execute_command("COMMAND", "COUNT") == b.execute_command("COMMAND", "COUNT") + len(own)


def test_acl_user_with_readonly_runs_it(server, oracle):
    for s in (server, oracle):
        s.client().execute_command("ACL", "SETUSER", "ro", "on", ">pw", "+readonly", "+readwrite", "+asking")
    script = [("AUTH", "ro", "pw"), ("READONLY",), ("READWRITE",), ("ASKING",), ("GET", "x")]
    same(server, oracle, script)


def test_module_command_without_modules(server, oracle):
    script = [("MODULE",), ("MODULE", "LIST"), ("MODULE", "LIST", "x"), ("MODULE", "HELP"), ("MODULE", "nosuch"),
              ("MODULE", "LOAD", "/nonexistent.so"), ("MODULE", "UNLOAD", "foo"), ("MODULE", "UNLOAD"),
              ("MULTI",), ("MODULE", "UNLOAD", "foo"), ("EXEC",)]
    same(server, oracle, script)


@pytest.mark.parametrize("which", BOTH)
def test_module_command_enabled_loads_nothing(request, which):
    s = target(request, which, enable_module_command="yes")
    r = raw_client(s)
    err = ("error", "Error loading the extension. Please check the server logs.")
    assert run(r, "MODULE", "LOAD", "/nonexistent.so") == err
    assert run(r, "MODULE", "LOAD", "/nonexistent.so", "a", "b") == err
    assert run(r, "MODULE", "LOADEX", "/nonexistent.so", "CONFIG", "a") == err
    assert run(r, "MODULE", "LOADEX", "/nonexistent.so", "foo") == err
    assert run(r, "MODULE", "LOADEX", "/nonexistent.so", "CONFIG", "a", "b", "ARGS", "x") == err
    assert run(r, "MODULE", "UNLOAD", "foo") == ("error", "Error unloading module: no such module with that name")
    assert run(r, "MODULE", "LIST") == []
    log = s.log
    assert "Module /nonexistent.so failed to load: " in log
    assert "CONFIG specified without name value pair" in log
    assert "Syntax Error from arguments to loadex around foo." in log


@pytest.mark.parametrize("which", BOTH)
def test_protected_commands_refused_before_auth_and_acl(request, which):
    s = target(request, which, requirepass="pw")
    debug_err = ("error", "DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
                          "you can run it from a local connection, otherwise you need to set this option in the "
                          "configuration file, and then restart the server.")
    r = raw_client(s)
    assert run(r, "DEBUG", "SLEEP", "0") == debug_err  # before NOAUTH
    assert run(r, "AUTH", "pw") == b"OK"
    assert run(r, "ACL", "SETUSER", "lim", "on", "nopass", "+@all", "-debug", "-module") == b"OK"
    assert run(r, "AUTH", "lim", "x") == b"OK"
    assert run(r, "DEBUG", "SLEEP", "0") == debug_err  # before NOPERM
    assert run(r, "MODULE", "UNLOAD", "x")[1].startswith("MODULE command not allowed.")
    assert run(r, "AUTH", "default", "pw") == b"OK"
    assert run(r, "MULTI") == b"OK"
    assert run(r, "DEBUG", "SLEEP", "0") == debug_err
    assert run(r, "EXEC") == ("error", "Transaction discarded because of previous errors.")
    stats = r.execute_command("INFO", "commandstats").decode()
    assert "cmdstat_debug:calls=0,usec=0,usec_per_call=0.00,rejected_calls=3,failed_calls=0" in stats


def start_fail(binary, args, tmp):
    """Run a server expected to refuse its configuration: (exit code, the
    FATAL report / last log lines without pids and times)."""
    p = subprocess.run([binary] + args, capture_output=True, timeout=20, cwd=str(tmp))
    out = (p.stdout + p.stderr).decode("utf-8", "replace").splitlines()
    keep = []
    for line in out:
        m = re.match(r"^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ [#*.-] (.*)$", line)
        if m:
            if "ACL" in m.group(1) or "user" in m.group(1):
                keep.append(m.group(1))
        else:
            keep.append(line)
    return p.returncode, [x for x in keep if x]


USER_LINES = [
    ["user default on nopass ~* +@all", "user default on nopass"],
    ["user alice on nopass", "user bob on", "user alice on nopass"],
    ["user bob bogus"], ["user bob on bogus2"], ["user bob on on on bogus3"], ["user bob on >x (~k"],
    ["user bob on (~k bogus)"], ["user bob on nopass nosuch"], ["user bob on +nosuchcmd bogus"],
    ["user bob on +@nosuchcat"], ["user bob on >p1 -@all +get|x|y"], ["user bob on #abc"], ["user bob on (+get"],
    ["user bob on (+nosuch) ~k"], ['user "b b" on'], ["user"],
]


@pytest.mark.parametrize("lines", USER_LINES, ids=[str(i) for i in range(len(USER_LINES))])
def test_config_user_lines_refused_as_redis(tmp_path, lines):
    conf = tmp_path / "r.conf"
    conf.write_text("port %d\nsave \"\"\n" % free_port() + "\n".join(lines) + "\n")
    ours = start_fail(cairn_bin(), [str(conf)], tmp_path)
    theirs = start_fail(ORACLE_BIN, [str(conf)], tmp_path)
    assert ours == theirs
    assert ours[0] == 1


def test_duplicate_user_on_command_line(tmp_path):
    args = ["--port", str(free_port()), "--save", "", "--user", "default", "on", "nopass", "~*", "+@all", "--user", "default", "on", "nopass"]
    ours = start_fail(cairn_bin(), args, tmp_path)
    theirs = start_fail(ORACLE_BIN, args, tmp_path)
    assert ours == theirs
    assert ours[0] == 1
    assert "Duplicate user found" in ours[1][-1]


def info_field(r, section, field):
    info = r.execute_command("INFO", section)
    info = info.decode() if isinstance(info, bytes) else info
    return info.split(field + ":")[1].split()[0]


@pytest.mark.parametrize("which", BOTH)
def test_migrate_cached_sockets_counts_cached_connections(request, which):
    src = target(request, which)
    t1, t2 = target(request, which), target(request, which)
    r = raw_client(src)
    assert info_field(r, "stats", "migrate_cached_sockets") == "0"
    r.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    assert r.execute_command("MIGRATE", t1.host, str(t1.port), "a", "0", "5000") == b"OK"
    assert info_field(r, "stats", "migrate_cached_sockets") == "1"
    assert r.execute_command("MIGRATE", t1.host, str(t1.port), "b", "0", "5000") == b"OK"
    assert info_field(r, "stats", "migrate_cached_sockets") == "1"
    assert r.execute_command("MIGRATE", t2.host, str(t2.port), "c", "0", "5000") == b"OK"
    assert info_field(r, "stats", "migrate_cached_sockets") == "2"
    assert raw_client(t1).execute_command("MGET", "a", "b") == [b"1", b"2"]


# --- item 26: redis.acl_check_cmd ----------------------------------------------

ACL_CHECK_CASES = [
    ("get", "x1"), ("get", "y"), ("set", "x", "1"), ("del", "x"), ("config", "get", "x"),
    ("config", "set", "x", "y"), ("config",), ("get",), ("get", "x1", "x2"), ("get", "y", "x1"),
    ("publish", "ch1", "m"), ("publish", "zz", "m"), ("mget", "x1", "y"), ("mget", "x1", "x2"), ("acl", "whoami"),
    ("GET", "x1"), ("object", "encoding", "x"), ("migrate", "h", "p", "k"), ("xread", "streams"),
    ("zunionstore", "d", "3", "a"), ("eval", "s", "2", "x", "y"), ("subscribe", "ch1", "zz"),
]

ACL_CHECK_CASES2 = [
    ("get", "r1"), ("set", "r1", "v"), ("set", "w1", "v"), ("get", "w1"), ("copy", "r1", "w1"), ("copy", "w1", "r1"),
    ("get", "s1"), ("set", "s1", "v"), ("lmove", "x1", "x2", "left", "right"), ("sort", "x1", "store", "w1"),
    ("sort", "r1", "store", "x1"), ("georadius", "x", "1", "2", "3", "m", "store", "r1"),
    ("bitfield", "r1", "get", "u8", "0"), ("bitfield", "r1", "set", "u8", "0", "1"),
]


def lua_call(args):
    return "return redis.acl_check_cmd(%s)" % ",".join("'%s'" % x for x in args)


@pytest.mark.parametrize("rules,cases", [
    (("+eval", "+get", "+config|get", "+acl", "~x*", "&ch*", "+publish", "+set", "+subscribe"), ACL_CHECK_CASES),
    (("+@all", "%R~r*", "%W~w*", "~x*", "(~s* +get)"), ACL_CHECK_CASES2),
])
def test_acl_check_cmd_checks_the_callers_permissions(server, oracle, rules, cases):
    setup = [("ACL", "SETUSER", "lim", "on", ">pw") + rules]
    script = [("AUTH", "lim", "pw")] + [("EVAL", lua_call(c), "0") for c in cases]
    script += [("EVAL", "return redis.acl_check_cmd('nosuch')", "0"), ("EVAL", "return redis.acl_check_cmd()", "0"),
               ("EVAL", "return redis.acl_check_cmd({})", "0"), ("EVAL", "return redis.acl_check_cmd('get', 1)", "0"),
               ("EVAL", "return redis.acl_check_cmd('config', 'nosuch')", "0"),
               ("EVAL", "return {pcall(redis.acl_check_cmd, 'nosuch')}", "0")]
    got = same(server, oracle, script, setup=setup)
    # not every answer is "allowed"
    assert None in got and 1 in got
    # nothing was logged
    assert raw_client(server).execute_command("ACL", "LOG") == []


def test_acl_check_cmd_in_functions_and_for_default(server, oracle):
    lib = "#!lua name=l\nredis.register_function('f', function() return redis.acl_check_cmd('get','y') end)"
    setup = [("FUNCTION", "LOAD", lib), ("ACL", "SETUSER", "lim", "on", ">pw", "+fcall", "+get", "~x*")]
    same(server, oracle, [("EVAL", "return redis.acl_check_cmd('flushall')", "0"), ("AUTH", "lim", "pw"),
                          ("FCALL", "f", "0"), ("EVAL", "return redis.acl_check_cmd('flushall')", "0")],
         setup=setup)


@pytest.mark.skipif(os.path.basename(cairn_bin()).startswith("redis-server"),
                    reason="redis-server 7.0.15 reads past argv here (it crashed in this test)")
def test_acl_check_cmd_short_argv_denies(server):
    """Fewer arguments than the command's arity: a key position a key
    finder names past argv is denied, and nothing is read past argv."""
    r = raw_client(server)
    r.execute_command("ACL", "SETUSER", "lim", "on", ">pw", "+@all", "~x*")
    r.execute_command("AUTH", "lim", "pw")
    for args in [("set",), ("sort",), ("sort_ro",), ("migrate", "h", "p", "k")]:
        assert r.execute_command("EVAL", lua_call(args), "0") is None, args
    assert r.execute_command("PING") == b"PONG"


# --- the directive sweep ------------------------------------------------------

# Left to other work of issue 33 (listed in its notes): the debug and
# shutdown directives, and repl-backlog-size's 16 kB floor.
SWEEP_SKIP = {b"port", b"bind", b"dir", b"requirepass", b"maxmemory", b"save", b"appendonly", b"replicaof",
              b"slaveof", b"maxclients", b"timeout", b"client-output-buffer-limit", b"maxmemory-clients",
              b"client-query-buffer-limit", b"logfile", b"pidfile", b"unixsocket", b"repl-backlog-size"}


def test_config_set_every_directive_like_redis(server, oracle):
    a, b = raw_client(server), raw_client(oracle)
    names = sorted(set(run(b, "CONFIG", "GET", "*")[0::2]))
    assert len(names) > 150
    diffs = []
    for n in names:
        if n in SWEEP_SKIP:
            continue
        for v in [b"bogus", b"-1", b"0", b"1", b"yes", b"", b"99999999999999999999", b"1.5", b"10%", b"1gb"]:
            old_a, old_b = run(a, "CONFIG", "GET", n), run(b, "CONFIG", "GET", n)
            got = (run(a, "CONFIG", "SET", n, v), run(a, "CONFIG", "GET", n))
            want = (run(b, "CONFIG", "SET", n, v), run(b, "CONFIG", "GET", n))
            if got != want:
                diffs.append((n, v, got, want))
            run(a, "CONFIG", "SET", n, old_a[1])
            run(b, "CONFIG", "SET", n, old_b[1])
    assert diffs == []


def test_hidden_directives_of_redis_are_known(server, oracle):
    # Redis 7.0.15's hidden directives answer an exact CONFIG GET only.
    # Those other items of issue 33 own are left out here: use-exit-on-panic
    # and watchdog-period (debug).
    others = {b"use-exit-on-panic", b"watchdog-period"}
    a, b = raw_client(server), raw_client(oracle)
    hidden = [b"key-load-delay", b"rdb-key-save-delay", b"loading-process-events-interval-bytes",
              b"lua-enable-deprecated-api"] + sorted(others)
    star_a, star_b = set(run(a, "CONFIG", "GET", "*")[0::2]), set(run(b, "CONFIG", "GET", "*")[0::2])
    for name in hidden:
        assert len(run(b, "CONFIG", "GET", name)) == 2 and name not in star_b
        if name not in others:
            assert run(a, "CONFIG", "GET", name) == run(b, "CONFIG", "GET", name)
            assert name not in star_a


@pytest.mark.parametrize("line,ok", [
    ("list-max-ziplist-entries abc", True), ("list-max-ziplist-value 1", True), ("lua-replicate-commands yes", True),
    ("LUA-REPLICATE-COMMANDS x", True), ("lua-replicate-commands", False), ("lua-replicate-commands a b", False),
    ("list-max-ziplist-entries", False), ("tls-port 0", True), ("tls-replication no", True),
])
def test_deprecated_directives_accepted_in_file(request, line, ok):
    for which in BOTH:
        if ok:
            s = target(request, which, config_file=line + "\n")
            assert raw_client(s).execute_command("PING") == b"PONG"
        else:
            binary = cairn_bin() if which == "server" else ORACLE_BIN
            tmp = request.getfixturevalue("tmp_path")
            conf = tmp / ("%s.conf" % which)
            conf.write_text("port %d\n%s\n" % (free_port(), line))
            rc, out = start_fail(binary, [str(conf)], tmp)
            assert rc == 1 and out[-1] == "Bad directive or wrong number of arguments"


@pytest.mark.parametrize("line", ["tls-replication yes", "tls-port 7", "tls-cluster yes"])
def test_tls_directives_refused_at_startup(tmp_path, line):
    res = []
    for binary in (cairn_bin(), ORACLE_BIN):
        conf = tmp_path / "t.conf"
        conf.write_text("port %d\nsave \"\"\n%s\n" % (free_port(), line))
        p = subprocess.run([binary, str(conf)], capture_output=True, timeout=20, cwd=str(tmp_path))
        out = (p.stdout + p.stderr).decode()
        res.append((p.returncode, "Failed to configure TLS. Check logs for more info." in out))
    assert res[0] == res[1] == (1, True)


def test_tls_directives_config_set(server, oracle):
    same(server, oracle, [("CONFIG", "SET", "tls-replication", "yes"), ("CONFIG", "GET", "tls-replication"),
                          ("CONFIG", "SET", "tls-port", "1"), ("CONFIG", "SET", "tls-port", "x"),
                          ("CONFIG", "SET", "tls-cluster", "maybe"), ("CONFIG", "SET", "tls-cluster", "no"),
                          ("CONFIG", "SET", "hz", "5", "tls-port", "7"), ("CONFIG", "GET", "hz"),
                          ("CONFIG", "GET", "tls-port")])


# --- *_cpulist: CPU affinity of the main thread, background threads, children


def cpus_of(pid, tid=None):
    with open("/proc/%d/task/%d/status" % (pid, tid or pid)) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split()[1]


needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or 1 not in os.sched_getaffinity(0)
                                    or 0 not in os.sched_getaffinity(0), reason="needs CPUs 0 and 1")


@needs_two_cpus
@pytest.mark.parametrize("cpulist", ["1", "0-1:2", "1-1", "abc", "1-0", "0-1:0", "1,abc", "99999", "0,,1"])
def test_server_cpulist_binds_main_thread_like_redis(request, cpulist):
    got = []
    for which in BOTH:
        s = target(request, which, args=["--server_cpulist", cpulist])
        pid = pid_of(s.client())
        got.append((cpus_of(pid), run(raw_client(s), "CONFIG", "GET", "server_cpulist")))
    assert got[0] == got[1]


@needs_two_cpus
@pytest.mark.parametrize("which", BOTH)
def test_bgsave_and_bio_cpulist(request, which):
    s = target(request, which, rdb_key_save_delay="100000",
               args=["--server_cpulist", "1", "--bio_cpulist", "0", "--bgsave_cpulist", "0"])
    r = raw_client(s)
    pid = pid_of(s.client())
    assert cpus_of(pid) == "1"
    # a background thread (lazy free of a big set) runs on bio_cpulist
    r.execute_command("SADD", "big", *range(1000))
    r.execute_command("UNLINK", "big")
    for _ in range(200):
        if lazyfreed(r) == 1:
            break
        time.sleep(0.01)
    others = [int(t) for t in os.listdir("/proc/%d/task" % pid) if int(t) != pid]
    assert others and "0" in [cpus_of(pid, t) for t in others]
    for i in range(20):
        r.execute_command("SET", "k%d" % i, "v")
    assert r.execute_command("BGSAVE")
    kids = children_of(pid)
    assert len(kids) == 1
    for _ in range(200):
        if cpus_of(kids[0]) == "0":
            break
        time.sleep(0.01)
    assert cpus_of(kids[0]) == "0"
    r.execute_command("CONFIG", "SET", "rdb-key-save-delay", "0")


@pytest.mark.skipif(not shutil.which("ss"), reason="needs ss")
@pytest.mark.parametrize("which", BOTH)
def test_socket_mark_id_marks_listening_socket(request, which):
    s = target(request, which, socket_mark_id="7")
    out = subprocess.run(["ss", "-tlne", "sport = :%d" % s.port], capture_output=True, timeout=10).stdout.decode()
    assert "fwmark:0x7" in out
    assert run(raw_client(s), "CONFIG", "GET", "socket-mark-id") == [b"socket-mark-id", b"7"]
    s2 = target(request, which)
    out = subprocess.run(["ss", "-tlne", "sport = :%d" % s2.port], capture_output=True, timeout=10).stdout.decode()
    assert "LISTEN" in out and "fwmark" not in out


@pytest.mark.parametrize("which", BOTH)
def test_migrate_auth_sends_whole_binary_password(request, which):
    src, dst = target(request, which), target(request, which)
    raw_client(dst).execute_command("CONFIG", "SET", "requirepass", NUL_VALUE)
    r = raw_client(src)
    r.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    assert run(r, "MIGRATE", dst.host, str(dst.port), "a", "0", "5000", "AUTH", "abc")[0] == "error"
    assert run(r, "MIGRATE", dst.host, str(dst.port), "a", "0", "5000", "AUTH", NUL_VALUE) == b"OK"
    assert run(r, "MIGRATE", dst.host, str(dst.port), "b", "0", "5000", "AUTH2", "default", NUL_VALUE) == b"OK"
    d = raw_client(dst, password=NUL_VALUE)
    assert d.execute_command("MGET", "a", "b") == [b"1", b"2"]


DEPRECATED_LUA = ["return type(getfenv)", "return type(setfenv)", "return type(newproxy)",
                  "return getfenv(1).KEYS[1]", "return getfenv(0).ARGV[1]", "local e = getfenv(1); return e == _G",
                  "setfenv(1, {}); return 1", "return type(newproxy(true))",
                  "local t = getfenv(1); t.x = 1; return 1", "return type(gcinfo)"]


@pytest.mark.parametrize("enabled", ["no", "yes"])
def test_lua_enable_deprecated_api(request, enabled):
    s = request.getfixturevalue("start_server")(lua_enable_deprecated_api=enabled)
    o = request.getfixturevalue("start_oracle")(lua_enable_deprecated_api=enabled)
    lib = "#!lua name=x\nredis.register_function('f', function() return type(getfenv) end)"
    got = same(s, o, [("EVAL", src, "1", "kk", "aa") for src in DEPRECATED_LUA] +
               [("CONFIG", "GET", "lua-enable-deprecated-api"),
                ("CONFIG", "SET", "lua-enable-deprecated-api", "yes"),
                ("FUNCTION", "LOAD", lib), ("FCALL", "f", "0")])
    assert (got[0] == b"function") == (enabled == "yes")


def thread_names(pid):
    names = []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                names.append(f.read().strip())
        except FileNotFoundError:
            pass
    return names


def wait_for_thread(pid, name, present):
    for _ in range(200):
        if (name in thread_names(pid)) == present:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("which", BOTH)
def test_jemalloc_bg_thread(request, which):
    s = target(request, which, jemalloc_bg_thread="no")
    r = raw_client(s)
    pid = pid_of(s.client())
    if "jemalloc" not in info_field(r, "memory", "mem_allocator"):
        pytest.skip("not built with jemalloc")
    r.execute_command("SET", "a", "b")
    assert wait_for_thread(pid, "jemalloc_bg_thd", False)
    assert r.execute_command("CONFIG", "SET", "jemalloc-bg-thread", "yes") == b"OK"
    r.execute_command("SET", "a", "c")
    assert wait_for_thread(pid, "jemalloc_bg_thd", True)
    s2 = target(request, which)
    r2 = raw_client(s2)
    r2.execute_command("SET", "a", "b")
    assert wait_for_thread(pid_of(s2.client()), "jemalloc_bg_thd", True)


def test_config_rewrite_of_these_directives(request):
    names = ("oom-score-adj", "oom-score-adj-values", "rdb-save-incremental-fsync", "jemalloc-bg-thread",
             "server_cpulist", "bio_cpulist", "bgsave_cpulist", "aof_rewrite_cpulist", "socket-mark-id",
             "disable-thp", "requirepass", "masterauth", "masteruser", "lua-enable-deprecated-api", "tls-port")
    conf = ("server_cpulist 0-1\nbio_cpulist 0\nbgsave_cpulist 0-1:2\naof_rewrite_cpulist 1\nsocket-mark-id 3\n"
            "disable-thp no\nlua-enable-deprecated-api yes\nlist-max-ziplist-entries 5\n")
    lines = []
    for which in BOTH:
        s = target(request, which, config_file=conf)
        r = raw_client(s)
        for k, v in [("oom-score-adj", "relative"), ("oom-score-adj-values", "1 2 3"),
                     ("rdb-save-incremental-fsync", "no"), ("jemalloc-bg-thread", "no"), ("masteruser", "u"),
                     ("masterauth", b"p\x00q")]:
            assert r.execute_command("CONFIG", "SET", k, v) == b"OK"
        assert r.execute_command("CONFIG", "REWRITE") == b"OK"
        text = open(os.path.join(s.tmp, "server.conf")).read().splitlines()
        lines.append(sorted(l for l in text if l.split(" ")[0] in names or "ziplist" in l))
    assert lines[0] == lines[1]
    assert 'masterauth "p\\x00q"' in lines[0]
    assert "# ??? list-max-ziplist-entries 5" in lines[0]
