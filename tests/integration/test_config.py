"""Configuration: the config file and --name value arguments, the FATAL
config error report, CONFIG GET/SET/RESETSTAT/REWRITE/HELP.

Most checks are differential: the same thing is done to Cairn and to
Debian's redis-server 7.0.15 and the results compared.  Run against real
Redis with CAIRN_BIN=redis-server to check that the tests pin Redis's
behaviour."""
import os
import subprocess

import pytest
import redis

from conftest import ORACLE_BIN, cairn_bin

# Values that depend on the process, not on the configuration.
ENV_DEPENDENT = {b"port", b"dir", b"unixsocket", b"pidfile", b"logfile"}


def config_map(r, *patterns):
    return r.execute_command("CONFIG", "GET", *(patterns or ("*",)))


def as_dict(reply):
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[0::2], reply[1::2]))


def error_of(r, *args):
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    return None


def run_binary(binary, args, stdin=None, cwd=None):
    """Start a server binary expected to refuse its configuration."""
    p = subprocess.run([binary] + args, input=stdin, capture_output=True, timeout=20, cwd=cwd)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


# --- CONFIG GET ---------------------------------------------------------------


def test_config_get_star_matches_redis_names_and_defaults(server, oracle):
    ours = as_dict(config_map(server.client()))
    theirs = as_dict(config_map(oracle.client()))
    assert set(ours) == set(theirs)
    diffs = {k: (ours[k], theirs[k]) for k in theirs if k not in ENV_DEPENDENT and ours[k] != theirs[k]}
    assert diffs == {}


@pytest.mark.parametrize("patterns", [
    ("*max-*-entries",), ("slave*",), ("*ziplist*",), ("timeout", "hz"), ("TIMEOUT",), ("SlaveOf",),
    ("hash-max-ziplist-entries",), ("key-load-delay",), ("nosuch",), ("maxmemory", "maxmemory*"),
    ("bind",), ("save",), ("client-output-buffer-limit",), ("unixsocketperm",),
    ("notify-keyspace-events",), ("lua-time-limit", "busy-reply-threshold"), ("[bh]z",), ("h?",),
])
def test_config_get_patterns_like_redis(server, oracle, patterns):
    ours = as_dict(config_map(server.client(), *patterns))
    theirs = as_dict(config_map(oracle.client(), *patterns))
    for k in ENV_DEPENDENT:
        ours.pop(k, None), theirs.pop(k, None)
    assert ours == theirs


def test_config_get_resp3_is_a_map(server, oracle):
    for s in (server, oracle):
        c = s.connect()
        c.send(b"HELLO 3\r\n")
        c.recv_until(b"modules")
        c.read_all(0.3)
        c.send(b"CONFIG GET maxmemory\r\n")
        assert c.recv_until(b"0\r\n") == b"%1\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"


# --- CONFIG SET ---------------------------------------------------------------


SET_CASES = [
    ("port", "abc"), ("port", "99999"), ("hz", "1.5"), ("hz", "-5"), ("hz", " 5"), ("hz", "+5"),
    ("daemonize", "yes"), ("databases", "4"), ("maxmemory-policy", "nope"), ("maxmemory", "10q"),
    ("maxmemory", "-1"), ("maxmemory", "1.5gb"), ("proto-max-bulk-len", "10"), ("save", "10"),
    ("save", "0 1"), ("save", "100  1"), ("nosuch", "1"), ("appendonly", "maybe"),
    ("client-output-buffer-limit", "foo 1 2 3"), ("client-output-buffer-limit", "normal 1 2"),
    ("client-output-buffer-limit", "normal 1x 2 3"), ("notify-keyspace-events", "Q"),
    ("maxclients", "0"), ("unixsocket", "/tmp/x"), ("unixsocketperm", "700"), ("dir", "/tmp"),
    ("dbfilename", "x.rdb"), ("loglevel", "loud"), ("timeout", "-1"), ("slowlog-log-slower-than", "-2"),
    ("active-expire-effort", "11"), ("enable-debug-command", "yes"),
]


@pytest.mark.parametrize("name,value", SET_CASES)
def test_config_set_errors_like_redis(server, oracle, name, value):
    assert error_of(server.client(), "CONFIG", "SET", name, value) == \
        error_of(oracle.client(), "CONFIG", "SET", name, value)


@pytest.mark.parametrize("args", [
    ("hz", "10", "hz", "11"), ("hz", "5", "HZ", "6"), ("requirepass",), ("requirepass", "a", "b"),
    ("hz", "5", "maxmemory-policy", "xx"), ("hz", "5", "nosuch", "1"),
])
def test_config_set_multi_errors_like_redis(server, oracle, args):
    assert error_of(server.client(), "CONFIG", "SET", *args) == error_of(oracle.client(), "CONFIG", "SET", *args)


def test_config_set_is_all_or_nothing(server, oracle):
    for s in (server, oracle):
        r = s.client()
        before = as_dict(config_map(r, "hz", "maxmemory", "save"))
        err = error_of(r, "CONFIG", "SET", "hz", "55", "maxmemory", "1mb", "save", "", "maxmemory-policy", "bad")
        assert err.startswith("CONFIG SET failed (possibly related to argument 'maxmemory-policy')")
        assert as_dict(config_map(r, "hz", "maxmemory", "save")) == before


@pytest.mark.parametrize("name,value", [
    ("maxmemory", "1GB"), ("maxmemory", "1kb"), ("maxmemory", "1k"), ("maxmemory", "1Mb"), ("maxmemory", "1m"),
    ("maxmemory", "1g"), ("maxmemory", "1b"), ("maxmemory", "007"), ("maxmemory", ""),
    ("maxmemory", "18446744073709551616"), ("hz", "1000"), ("hz", "0"), ("save", "100 1 200 2"), ("save", ""),
    ("save", "100 01"), ("client-output-buffer-limit", "normal 1mb 2mb 3 replica 1 2 3"),
    ("client-output-buffer-limit", "pubsub 0 0 0"), ("notify-keyspace-events", "KEA"),
    ("notify-keyspace-events", "Egx$lshzetdmn"), ("notify-keyspace-events", "AKEmn"),
    ("notify-keyspace-events", "zK"), ("maxmemory-policy", "ALLKEYS-LRU"), ("appendonly", "no"), ("hash-max-ziplist-entries", "100"), ("list-max-ziplist-size", "-3"),
    ("lua-time-limit", "100"), ("slave-read-only", "no"), ("requirepass", ""), ("proto-max-bulk-len", "1mb"),
    ("tls-port", "0"), ("latency-tracking", "yes"), ("slowlog-max-len", "1000"), ("loglevel", "warning"),
])
def test_config_set_then_get_like_redis(server, oracle, name, value):
    got = []
    for s in (server, oracle):
        r = s.client()
        assert r.execute_command("CONFIG", "SET", name, value) in (b"OK", True)
        got.append(as_dict(config_map(r, name)))
    assert got[0] == got[1]


def test_config_set_alias_and_name_together(server, oracle):
    for s in (server, oracle):
        r = s.client()
        assert r.execute_command("CONFIG", "SET", "hash-max-ziplist-entries", "5",
                                 "hash-max-listpack-entries", "6") in (b"OK", True)
        assert as_dict(config_map(r, "hash-max-listpack-entries")) == {b"hash-max-listpack-entries": b"6"}


def test_config_set_requirepass_then_auth(server):
    r = server.client()
    r.execute_command("CONFIG", "SET", "requirepass", "s3cret")
    r2 = server.client()
    with pytest.raises(redis.AuthenticationError):
        r2.ping()
    r3 = server.client(password="s3cret")
    assert r3.ping()
    r3.execute_command("CONFIG", "SET", "requirepass", "")


# --- CONFIG RESETSTAT / HELP / command metadata --------------------------------


def test_config_resetstat_ok(server, oracle):
    for s in (server, oracle):
        assert s.client().execute_command("CONFIG", "RESETSTAT") in (b"OK", True)


def test_config_help_like_redis(server, oracle):
    assert server.client().execute_command("CONFIG", "HELP") == oracle.client().execute_command("CONFIG", "HELP")


def raw_command_info(s):
    r = s.client()
    r.response_callbacks.pop("COMMAND INFO", None)
    r.response_callbacks.pop("COMMAND", None)
    info = r.execute_command("COMMAND", "INFO", "config")[0]
    # Redis lists subcommands in hash-table order; compare them sorted.
    return info[:9] + [sorted(info[9], key=lambda x: x[0])]


def test_config_command_info_like_redis(server, oracle):
    assert raw_command_info(server) == raw_command_info(oracle)


def test_config_arity_errors_like_redis(server, oracle):
    for args in (("CONFIG",), ("CONFIG", "GET"), ("CONFIG", "SET", "port"), ("CONFIG", "REWRITE", "x"),
                 ("CONFIG", "NOPE")):
        assert error_of(server.client(), *args) == error_of(oracle.client(), *args)


# --- config file and --arguments ------------------------------------------------


CONF_TEXT = """# a comment
   # an indented comment
HZ 20
maxmemory 100mb
maxmemory-policy allkeys-lru
save 100 1
save 200 2
client-output-buffer-limit normal 1mb 2mb 3
client-output-buffer-limit pubsub 64mb 16mb 90
notify-keyspace-events "Kx"
hash-max-ziplist-entries 64
list-max-ziplist-size -1
slave-read-only no
timeout 0
timeout 7
requirepass "with space"
tls-port 0
"""

COMPARED = ("hz", "maxmemory", "maxmemory-policy", "save", "client-output-buffer-limit",
            "notify-keyspace-events", "hash-max-listpack-entries", "list-max-listpack-size",
            "replica-read-only", "timeout", "requirepass", "tls-port")


def test_config_file_values_like_redis(start_server, start_oracle):
    got = []
    for start in (start_server, start_oracle):
        s = start(config_file=CONF_TEXT, args=["--save", "300 3"])
        got.append(as_dict(config_map(s.client(password="with space"), *COMPARED)))
    assert got[0] == got[1]
    assert got[0][b"hz"] == b"20"
    assert got[0][b"maxmemory"] == b"104857600"
    assert got[0][b"timeout"] == b"7"


def test_config_args_values_like_redis(start_server, start_oracle):
    args = ["--maxmemory", "1gb", "--client-output-buffer-limit", "normal", "1", "2", "3",
            "--notify-keyspace-events", "", "--hz", "30", "--save", "10", "1", "--save", "20", "2"]
    got = []
    for start in (start_server, start_oracle):
        s = start(args=args)
        got.append(as_dict(config_map(s.client(), "maxmemory", "client-output-buffer-limit",
                                      "notify-keyspace-events", "hz", "save")))
    assert got[0] == got[1]


def test_config_include(start_server, start_oracle, tmp_path):
    inc = tmp_path / "inc.conf"
    inc.write_text("hz 42\nmaxmemory 2mb\n")
    text = "hz 5\ninclude %s\nmaxmemory 3mb\n" % inc
    got = []
    for start in (start_server, start_oracle):
        s = start(config_file=text)
        got.append(as_dict(config_map(s.client(), "hz", "maxmemory")))
    assert got[0] == got[1] == {b"hz": b"42", b"maxmemory": b"3145728"}


FATAL_CASES = [
    ["--port", "abc"], ["--port", "99999"], ["--foo", "bar"], ["--maxmemory-policy", "nope"],
    ["--maxmemory", "1xb"], ["--save", "10"], ["--daemonize", "maybe"],
    ["--client-output-buffer-limit", "foo", "1", "2", "3"],
    ["--client-output-buffer-limit", "normal", "1", "2", "3", "pubsub", "4", "5"],
    ["--unixsocketperm", "999"], ["--notify-keyspace-events", "Q"], ["--requirepass"], ["--port", "1", "2"],
    ["--loglevel", "x"], ["--supervised", "x"], ["--enable-debug-command", "x"], ["--appendfsync", "x"],
    ["--databases", "0"], ["--maxclients", "0"], ["--timeout", "-1"], ["--hz", "1", "2"],
    ["--rename-command"], ["--include"], ["--replicaof", "a"], ["--oom-score-adj-values", "1", "2"],
    ["--port", "1", "--port", "x"], ["--port", "1", "extra"], ["--port", '"x'],
]


@pytest.mark.parametrize("args", FATAL_CASES)
def test_fatal_config_error_like_redis(args):
    ours = run_binary(cairn_bin(), args)
    theirs = run_binary(ORACLE_BIN, args)
    assert ours[0] == theirs[0] == 1
    assert ours[2] == theirs[2]
    assert "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***" in ours[2]


@pytest.mark.parametrize("text", [
    "# c\nport 7000\nfoo bar\n", "hz 10\n\nmaxmemory 1tb\n", 'requirepass "unbalanced\n', "save 1\n",
    "  HZ   abc  \n",
])
def test_fatal_config_file_error_like_redis(tmp_path, text):
    p = tmp_path / "bad.conf"
    p.write_text(text)
    ours = run_binary(cairn_bin(), [str(p), "--port", "0"])
    theirs = run_binary(ORACLE_BIN, [str(p), "--port", "0"])
    assert ours[0] == theirs[0] == 1
    assert ours[2] == theirs[2]


def test_fatal_error_line_numbers_with_stdin(tmp_path):
    p = tmp_path / "ok.conf"
    p.write_text("# c\nport 7000\n")
    for args, stdin in (([str(p), "--port", "x"], None), (["-"], b"port x\n"), (["-", "--port", "y"], b"port 1\n")):
        ours = run_binary(cairn_bin(), args, stdin=stdin)
        theirs = run_binary(ORACLE_BIN, args, stdin=stdin)
        assert ours[0] == theirs[0] == 1
        assert ours[2] == theirs[2]


def test_missing_config_file_exits_1(tmp_path):
    for b in (cairn_bin(), ORACLE_BIN):
        rc, out, err = run_binary(b, [str(tmp_path / "nope.conf")])
        assert rc == 1
        assert "Fatal error, can't open config file '%s': No such file or directory" % (tmp_path / "nope.conf") \
            in out + err


def test_unsupported_directive_is_accepted(start_server):
    s = start_server(config_file="tls-session-cache-size 100\nrepl-backlog-size 2mb\n")
    assert as_dict(config_map(s.client(), "tls-session-cache-size")) == {b"tls-session-cache-size": b"100"}


# --- CONFIG REWRITE -------------------------------------------------------------


def test_config_rewrite_without_file(server, oracle):
    assert error_of(server.client(), "CONFIG", "REWRITE") == error_of(oracle.client(), "CONFIG", "REWRITE") == \
        "The server is running without a config file"


REWRITE_CONF = """# my comment
maxmemory 100mb
hz 20
save 100 1
save 200 2
bind 127.0.0.1
hash-max-ziplist-entries 100
# trailing comment
"""


def rewrite_and_read(s):
    r = s.client()
    assert r.execute_command("CONFIG", "SET", "hz", "10", "maxmemory", "2gb", "timeout", "30",
                             "notify-keyspace-events", "KEA", "save", "",
                             "client-output-buffer-limit", "normal 1mb 2mb 3") in (b"OK", True)
    assert r.execute_command("CONFIG", "REWRITE") in (b"OK", True)
    with open(os.path.join(s.tmp, "server.conf")) as f:
        return f.read().splitlines()


def test_config_rewrite_updates_in_place_like_redis(start_server, start_oracle):
    ours = rewrite_and_read(start_server(config_file=REWRITE_CONF))
    theirs = rewrite_and_read(start_oracle(config_file=REWRITE_CONF))
    sig = "# Generated by CONFIG REWRITE"
    # Lines before the signature: the old file, updated in place.
    assert ours[:ours.index(sig)] == theirs[:theirs.index(sig)]
    # Lines after it: the appended directives (order may differ; Redis also
    # appends its ACL `user` line and a few of its own).
    ours_tail, theirs_tail = set(ours[ours.index(sig) + 1:]), set(theirs[theirs.index(sig) + 1:])
    for line in ('client-output-buffer-limit normal 1mb 2mb 3', 'timeout 30', 'notify-keyspace-events "AKE"'):
        assert line in ours_tail and line in theirs_tail
    assert not [l for l in ours_tail if l.startswith(("hz", "maxmemory ", "save", "bind"))]


def test_config_rewrite_round_trip(start_server):
    s = start_server(config_file=REWRITE_CONF)
    r = s.client()
    r.execute_command("CONFIG", "SET", "maxmemory", "12345", "hz", "33", "maxmemory-policy", "volatile-ttl",
                      "save", "50 5 60 6", "requirepass", "p w", "slave-read-only", "no")
    r.execute_command("CONFIG", "REWRITE")
    before = as_dict(config_map(r))
    path = os.path.join(s.tmp, "server.conf")
    with open(path) as f:
        text = f.read()
    s2 = start_server(config_file=text)
    after = as_dict(config_map(s2.client(password="p w")))
    for k in ENV_DEPENDENT | {b"bind", b"save"}:
        before.pop(k, None), after.pop(k, None)
    assert before == after


def test_config_rewrite_raw_memory_directives_like_redis(start_server, start_oracle):
    """Directives of features Cairn lacks are kept as text; the two that are
    memory values are written back with units, as Redis writes them (they
    once came out as the value of another directive)."""
    names = ("active-defrag-ignore-bytes", "cluster-link-sendbuf-limit")

    def lines(s):
        r = s.client()
        r.execute_command("CONFIG", "SET", names[0], "200mb", names[1], "3kb")
        r.execute_command("CONFIG", "REWRITE")
        with open(os.path.join(s.tmp, "server.conf")) as f:
            return sorted(l for l in f.read().splitlines() if l.startswith(names))

    ours = lines(start_server(config_file=REWRITE_CONF))
    assert ours == lines(start_oracle(config_file=REWRITE_CONF))
    assert ours == ["active-defrag-ignore-bytes 200mb", "cluster-link-sendbuf-limit 3kb"]


# CONFIG GET * lists Cairn's directives in one fixed order, whichever
# feature registers them first: these sections, then the others by name.
CONFIG_GET_STAR_SECTIONS = """
port bind tcp-backlog tcp-keepalive unixsocket unixsocketperm protected-mode maxclients timeout
proto-max-bulk-len client-query-buffer-limit client-output-buffer-limit requirepass
aclfile acl-pubsub-default acllog-max-len
hz dynamic-hz databases loglevel logfile syslog-enabled syslog-ident syslog-facility always-show-logo daemonize
pidfile supervised dir enable-debug-command enable-protected-configs enable-module-command crash-log-enabled
proc-title-template set-proc-title
maxmemory maxmemory-policy maxmemory-samples maxmemory-eviction-tenacity lfu-log-factor lfu-decay-time
active-expire-effort lazyfree-lazy-eviction lazyfree-lazy-expire lazyfree-lazy-server-del lazyfree-lazy-user-del
lazyfree-lazy-user-flush activerehashing
hash-max-listpack-entries hash-max-ziplist-entries hash-max-listpack-value hash-max-ziplist-value
list-max-listpack-size list-max-ziplist-size list-compress-depth set-max-intset-entries
zset-max-listpack-entries zset-max-ziplist-entries zset-max-listpack-value zset-max-ziplist-value
stream-node-max-bytes stream-node-max-entries hll-sparse-max-bytes
slowlog-log-slower-than slowlog-max-len latency-monitor-threshold latency-tracking tracking-table-max-keys
latency-tracking-info-percentiles notify-keyspace-events busy-reply-threshold lua-time-limit
dbfilename save appendonly appendfilename appenddirname appendfsync rdbcompression rdbchecksum
stop-writes-on-bgsave-error
""".split()


# Redis's older names, listed right after the directive they alias.
ALIASES_AFTER_NAME = {"cluster-slave-no-failover", "cluster-slave-validity-factor", "min-slaves-max-lag",
                      "min-slaves-to-write", "repl-ping-slave-period", "slave-announce-ip", "slave-announce-port",
                      "slave-ignore-maxmemory", "slave-lazy-flush", "slave-priority", "slave-read-only",
                      "slave-serve-stale-data", "slaveof"}


def test_config_get_star_order(server):
    reply = server.client().execute_command("CONFIG", "GET", "*")
    names = [n.decode() for n in (reply[0::2] if isinstance(reply, list) else reply.keys())]
    head = len(CONFIG_GET_STAR_SECTIONS)
    assert names[:head] == CONFIG_GET_STAR_SECTIONS
    # The rest by name, each directive followed by its alias if it has one.
    rest = [n for n in names[head:] if n not in ALIASES_AFTER_NAME]
    assert rest == sorted(rest) and len(rest) > 90


def test_shipped_cairn_conf_loads_like_redis(start_server, start_oracle):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "cairn.conf")) as f:
        text = f.read()
    got = []
    for start in (start_server, start_oracle):
        s = start(config_file=text)
        d = as_dict(config_map(s.client()))
        for k in ENV_DEPENDENT:
            d.pop(k, None)
        got.append(d)
    assert got[0] == got[1]
