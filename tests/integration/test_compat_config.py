"""Issue 33, configuration and ACL compatibility: binary string directives
(requirepass, masterauth), oom-score-adj, CONFIG SET's validation order,
CONFIG RESETSTAT, duplicate users at start-up, ACL CAT's arity,
redis.acl_check_cmd, READONLY/READWRITE/ASKING and CLUSTER without
cluster support, and the hidden directives of Redis 7.0.15.

Differential where the oracle applies: the same commands go to Cairn and
to redis-server 7.0.15 and the replies are compared."""
import os
import subprocess
import time

import pytest
import redis

from compare import same
from conftest import ORACLE_BIN, cairn_bin

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
