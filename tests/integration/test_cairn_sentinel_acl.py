"""Sentinel mode's own ACL (issue 40): `user` lines and `aclfile` in
sentinel.conf, requirepass, the ACL command, AUTH / HELLO AUTH as ACL
users, NOPERM for denied commands, subcommands and channels, ACL LOG, the
config rewrite keeping the users, and sentinels authenticating to each
other with sentinel-user/sentinel-pass as ACL users through a failover.

cairn-sentinel and Debian's redis-sentinel 7.0.15 start from the same
config; their reply bytes are compared (only times, client ids and
addresses normalized, and two orders that vary between runs of
redis-sentinel itself: ACL CAT <category>'s members and the single-command
rules of ACL LIST / GETUSER).  redis-sentinel 7.0.15 crashes (SIGSEGV) on
an aclfile line with an unclosed selector parenthesis; that case is not
compared."""
import os
import re
import signal
import socket
import subprocess

import pytest

from conftest import free_port
from resphelp import encode, parse_one
from test_cairn_sentinel import (CAIRN_SENTINEL, NAME, SENTINEL_BIN, group, sentinels,  # noqa: F401
                                 wait_for)
from test_cairn_sentinel2 import raw

USERS = ("user alice on >apass +@all -sentinel|masters\n"
         "user bob on nopass +ping +acl|whoami\n"
         "user sub on >s &news* -@all +@pubsub +ping\n"
         "user admin on >adm ~* &* +@all\n")


def need_oracle():
    if not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel (Debian's redis-sentinel package; scripts/deps.sh installs it)")


def pair(sentinels, extra=USERS, password=None):
    need_oracle()
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead, extra=extra, password=password)
    theirs = sentinels(SENTINEL_BIN, dead, extra=extra, password=password)
    return ours, theirs


RULE_RUN = re.compile(rb"(?:[+-][a-z][a-z|-]*(?: |(?=[\r)])))+")


def norm_rules(reply):
    """Single-command rules (after the categories) in a sorted order:
    redis-sentinel prints them in the order of its command ids, which
    differs from one run of it to the next (lengths are unchanged)."""
    return RULE_RUN.sub(lambda m: b" ".join(sorted(m.group(0).split())) + (b" " if m.group(0).endswith(b" ")
                                                                            else b""), reply)


def same(ours, theirs, *cmds):
    """Sends cmds to both on one connection each; asserts equal bytes
    (ACL LIST / GETUSER with the single-command rules sorted)."""
    a = raw(ours.port, *cmds)
    b = raw(theirs.port, *cmds)
    for cmd, x, y in zip(cmds, a, b):
        if cmd[:2] in (("ACL", "LIST"), ("ACL", "GETUSER")):
            x, y = norm_rules(x), norm_rules(y)
        assert x == y, (cmd, x, y)
    return a


def log_entries(port, *auth):
    """ACL LOG as a list of dicts, without the fields that differ by
    nature (age, client id/address/buffers)."""
    t, v = parse_one(raw(port, *(auth and [("AUTH",) + auth]), ("ACL", "LOG"))[-1])
    out = []
    for e in v:
        d = {}
        flat = e[1]
        for k, val in zip(flat[0::2], flat[1::2]):
            d[k[1].decode()] = val[1]
        d.pop("age-seconds")
        info = dict(f.split("=", 1) for f in d.pop("client-info").decode().split(" "))
        d["client-cmd"], d["client-user"] = info["cmd"], info["user"]
        out.append(d)
    return out


def test_acl_replies_match_redis_sentinel(sentinels):
    """User lines loaded; ACL SETUSER / GETUSER / LIST / USERS / DELUSER /
    CAT / WHOAMI / DRYRUN and their errors answer redis-sentinel's bytes,
    for the commands and categories Sentinel mode has."""
    ours, theirs = pair(sentinels)
    same(ours, theirs,
         ("ACL", "LIST"), ("ACL", "USERS"), ("ACL", "GETUSER", "alice"), ("ACL", "GETUSER", "nosuch"),
         ("ACL", "WHOAMI"), ("ACL", "CAT"), ("ACL", "CAT", "nosuch"),
         ("ACL", "SETUSER", "carl", "+get"), ("ACL", "SETUSER", "carl", "+@read"),
         ("ACL", "SETUSER", "carl", "on", ">x", "+sentinel|masters", "+client|id", "&chan"),
         ("ACL", "SETUSER", "carl", "+sentinel|nosuch"), ("ACL", "SETUSER", "carl", "+ping|x"),
         ("ACL", "SETUSER", "carl", "(+ping"), ("ACL", "SETUSER", "carl", "(+ping ~k*)"),
         ("ACL", "SETUSER", "carl", "bogus"), ("ACL", "SETUSER", "c arl"), ("ACL", "SETUSER", "dave", "-@all",
                                                                             "+@connection", "-auth"),
         ("ACL", "SETUSER", "erin", "+@all", "-@dangerous", "+sentinel|reset", "-client|kill"),
         ("ACL", "GETUSER", "carl"), ("ACL", "GETUSER", "dave"), ("ACL", "GETUSER", "erin"),
         ("ACL", "LIST"), ("ACL", "USERS"),
         ("ACL", "DRYRUN", "carl", "sentinel", "masters"), ("ACL", "DRYRUN", "carl", "sentinel", "reset", "x"),
         ("ACL", "DRYRUN", "carl", "get", "x"), ("ACL", "DRYRUN", "nosuch", "ping"),
         ("ACL", "DRYRUN", "sub", "subscribe", "news1"), ("ACL", "DRYRUN", "sub", "subscribe", "other"),
         ("ACL", "DRYRUN", "sub", "publish", "other", "m"), ("ACL", "DRYRUN", "erin", "client", "kill", "x"),
         ("ACL", "DRYRUN", "erin", "sentinel", "reset", "x"), ("ACL", "DRYRUN", "erin", "shutdown"),
         ("ACL", "DELUSER", "carl", "nosuch", "dave"), ("ACL", "DELUSER", "default"), ("ACL", "LIST"),
         ("ACL", "GENPASS", "0"), ("ACL", "GENPASS", "x"), ("ACL", "NOSUCH"), ("ACL",), ("ACL", "SETUSER"),
         ("ACL", "LOG", "x"), ("ACL", "SAVE"), ("ACL", "LOAD"),
         ("COMMAND", "COUNT"), ("COMMAND", "INFO", "acl|whoami"), ("COMMAND", "DOCS", "acl|cat"))
    # the categories' members (redis-sentinel lists them in its hash order)
    for cat in ("admin", "dangerous", "connection", "pubsub", "slow", "fast", "read", "keyspace"):
        a = parse_one(raw(ours.port, ("ACL", "CAT", cat))[0])[1]
        b = parse_one(raw(theirs.port, ("ACL", "CAT", cat))[0])[1]
        assert sorted(x[1] for x in a) == sorted(x[1] for x in b), cat
    for bits in ("1", "5", "256", "1000"):
        a, b = raw(ours.port, ("ACL", "GENPASS", bits))[0], raw(theirs.port, ("ACL", "GENPASS", bits))[0]
        assert a.split(b"\r\n")[0] == b.split(b"\r\n")[0], bits


def test_permissions_nopem_texts_and_acl_log(sentinels):
    """Denied commands, subcommands and channels answer Redis's NOPERM
    texts; arity and unknown-subcommand errors come first; ACL LOG has the
    same entries (reason, context, object, user, the client's command)."""
    ours, theirs = pair(sentinels)
    as_alice = [("AUTH", "alice", "apass"), ("SENTINEL", "MASTERS"), ("SENTINEL", "MASTERS", "x"),
                ("SENTINEL", "NOSUCH"), ("SENTINEL", "MYID", "x"), ("PING",), ("ACL", "WHOAMI")]
    as_bob = [("AUTH", "bob", "whatever"), ("PING",), ("ACL", "WHOAMI"), ("INFO", "server"), ("ROLE",),
              ("ACL", "LIST"), ("CLIENT", "ID"), ("SENTINEL", "MASTERS"), ("NOSUCH",), ("ACL", "GETUSER", "bob"),
              ("COMMAND", "COUNT"), ("PUBLISH", "__sentinel__:hello", "x"), ("SHUTDOWN",)]
    as_sub = [("AUTH", "sub", "s"), ("SUBSCRIBE", "other"), ("PSUBSCRIBE", "news*x"), ("PSUBSCRIBE", "n*"),
              ("PUBLISH", "other", "m"), ("SUBSCRIBE", "news1", "news2")]
    for cmds in (as_alice, as_bob, as_sub):
        same(ours, theirs, *cmds)
    a, b = log_entries(ours.port), log_entries(theirs.port)
    assert a == b and len(a) >= 8, (a, b)
    assert {e["reason"] for e in a} == {b"command", b"channel"}
    # ACL LOG RESET, then an AUTH failure is logged as Redis logs it
    same(ours, theirs, ("ACL", "LOG", "RESET"), ("AUTH", "alice", "wrong"), ("AUTH", "nosuch", "x"),
         ("HELLO", "3", "AUTH", "alice", "wrong"), ("ACL", "LOG", "0"))
    a, b = log_entries(ours.port), log_entries(theirs.port)
    assert a == b and [e["reason"] for e in a] == [b"auth"] * 3, a
    assert [(e["object"], e["username"]) for e in a] == [(b"HELLO", b"alice"), (b"AUTH", b"nosuch"),
                                                         (b"AUTH", b"alice")]


def test_auth_hello_and_requirepass(sentinels):
    """requirepass sets the default user's password; AUTH and HELLO AUTH
    log in as any ACL user; WRONGPASS / NOAUTH texts are Redis's."""
    ours, theirs = pair(sentinels, extra=USERS + "requirepass pw\n", password="pw")
    same(ours, theirs, ("PING",), ("ACL", "WHOAMI"), ("AUTH", "wrong"), ("AUTH", "alice", "wrong"),
         ("AUTH", "a", "b", "c"), ("HELLO", "3", "AUTH", "alice", "wrong"), ("HELLO", "3"),
         ("AUTH", "pw"), ("ACL", "WHOAMI"), ("AUTH", "alice", "apass"), ("ACL", "WHOAMI"),
         ("SENTINEL", "MASTERS"), ("AUTH", "default", "pw"), ("ACL", "WHOAMI"))
    for s in (ours, theirs):
        r = raw(s.port, ("HELLO", "2", "AUTH", "alice", "apass"), ("ACL", "WHOAMI"), ("SENTINEL", "MASTERS"))
        assert r[0].startswith(b"*12\r\n$6\r\nserver\r\n") and r[1] == b"$5\r\nalice\r\n", r
        assert r[2] == b"-NOPERM this user has no permissions to run the 'sentinel|masters' command\r\n"
    same(ours, theirs, ("AUTH", "pw"), ("ACL", "GETUSER", "default"))
    # a user turned off cannot log in; DELUSER closes the user's connections
    for s in (ours, theirs):
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(encode("AUTH", "bob", "x"))
        assert c.recv(100) == b"+OK\r\n"
        assert raw(s.port, ("AUTH", "pw"), ("ACL", "DELUSER", "bob"))[1] == b":1\r\n"
        assert c.recv(100) == b""  # closed
        c.close()
        # CLIENT KILL USER
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(encode("AUTH", "admin", "adm"))
        assert c.recv(100) == b"+OK\r\n"
        assert raw(s.port, ("AUTH", "pw"), ("CLIENT", "KILL", "USER", "nosuch"), ("CLIENT", "KILL", "USER", "admin"),
                   ("CLIENT", "KILL", "USER", "admin"))[1:] == \
            [b"-ERR No such user 'nosuch'\r\n", b":1\r\n", b":0\r\n"]
        assert c.recv(100) == b""
        c.close()
        assert raw(s.port, ("AUTH", "pw"), ("ACL", "SETUSER", "alice", "off"), ("AUTH", "alice", "apass"))[2] == \
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


def test_aclfile_save_load(sentinels, tmp_path):
    """An aclfile is loaded at start; ACL SAVE writes it and ACL LOAD reads
    it back, as redis-sentinel does."""
    need_oracle()
    files = []
    for who in ("ours", "theirs"):
        p = tmp_path / ("%s.acl" % who)
        p.write_text("user alice on >apass +@all -sentinel|masters\nuser default on nopass ~* &* +@all\n")
        files.append(str(p))
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead, extra="aclfile %s\n" % files[0])
    theirs = sentinels(SENTINEL_BIN, dead, extra="aclfile %s\n" % files[1])
    same(ours, theirs, ("ACL", "LIST"), ("ACL", "SETUSER", "zed", "on", ">z", "+ping"), ("ACL", "SAVE"),
         ("ACL", "DELUSER", "zed"), ("ACL", "LIST"), ("ACL", "LOAD"), ("ACL", "LIST"))
    assert open(files[0]).read() == open(files[1]).read()
    # a bad file: ACL LOAD refuses it, nothing changes
    for f in files:
        with open(f, "a") as fh:
            fh.write("user bob on +nosuch\n")
    a = raw(ours.port, ("ACL", "LOAD"), ("ACL", "LIST"))
    b = raw(theirs.port, ("ACL", "LOAD"), ("ACL", "LIST"))
    assert a[0].replace(files[0].encode(), b"F") == b[0].replace(files[1].encode(), b"F"), (a, b)
    assert b"Unknown command or category name in ACL" in a[0] and a[1] == b[1]
    # the rewrite writes no user lines with an aclfile
    for s in (ours, theirs):
        s.cmd("SENTINEL", "FLUSHCONFIG")
        assert "\nuser " not in open(s.conf).read()


def test_config_rewrite_keeps_users(sentinels):
    """After ACL SETUSER/DELUSER, a rewrite writes the users of the moment
    (passwords as hashes); both sentinels restarted from their rewritten
    files list the same users as before."""
    # (without `sub`: redis-sentinel's ACL LIST of a user read back from
    # its own rewrite may order single-command rules differently)
    users = "".join(l + "\n" for l in USERS.splitlines() if not l.startswith("user sub "))
    ours, theirs = pair(sentinels, extra=users + "requirepass pw\n", password="pw")
    before = same(ours, theirs, ("AUTH", "pw"), ("ACL", "SETUSER", "zed", "on", ">zz", "+ping", "&x"),
                  ("ACL", "DELUSER", "bob"), ("ACL", "SETUSER", "alice", "+sentinel|masters"),
                  ("SENTINEL", "FLUSHCONFIG"), ("ACL", "LIST"))[-1]
    for s in (ours, theirs):
        text = open(s.conf).read()
        assert "user zed on #" in text and "user bob" not in text and "apass" not in text
        s.stop()
        s.start()
    after = same(ours, theirs, ("AUTH", "zed", "zz"), ("PING",), ("SENTINEL", "MASTERS"), ("AUTH", "pw"),
                 ("ACL", "LIST"))
    # the same users; the default user, read back from its `user default`
    # line (which starts with `reset`), now shows sanitize-payload, as on
    # redis-sentinel (compared above)
    def users(reply):
        return [e[1].replace(b"user default on sanitize-payload ", b"user default on ")
                for e in parse_one(reply)[1]]
    assert users(after[-1]) == users(before) and len(users(before)) == 4
    assert b"sanitize-payload" in after[-1]
    assert after[2].startswith(b"-NOPERM")


BAD_CONFIGS = [
    "user alice on >p +nosuchcmd\n",
    "user alice on (+ping\n",
    "user\n",
    "user alice badrule\n",
    "user a on\nuser a off\n",
    'user "al ice" on\n',
    "user alice on #abc\n",
    "user alice on >p +sentinel|nosuch\n",
    "aclfile {dir}/users.acl\nuser a on\n",
    "aclfile {dir}/nonexistent.acl\n",
    "aclfile {dir}/bad1.acl\n",
    "aclfile {dir}/bad2.acl\n",
    "aclfile {dir}/bad3.acl\n",
]


@pytest.mark.parametrize("body", BAD_CONFIGS)
def test_malformed_users_refused_as_redis_does(body, tmp_path):
    """Malformed user lines and aclfile contents stop the start with
    redis-sentinel's message (the lines after the log prefix)."""
    need_oracle()
    d = tmp_path
    (d / "users.acl").write_text("")
    (d / "bad1.acl").write_text("user bob on +nosuch\n")
    (d / "bad2.acl").write_text("bob on\n")
    (d / "bad3.acl").write_text("user alice on >p\nuser alice on\n")
    outs = []
    for binary in (CAIRN_SENTINEL, SENTINEL_BIN):
        conf = d / ("s-%d.conf" % len(outs))
        for _ in range(3):  # a free port taken meanwhile by another test: another one
            conf.write_text("port %d\n%s" % (free_port(), body.format(dir=d)))
            r = subprocess.run([binary, str(conf)], capture_output=True, timeout=20, cwd=str(d))
            if b"Address already in use" not in r.stdout + r.stderr:
                break
        assert r.returncode != 0
        lines = []
        for l in (r.stdout + r.stderr).decode().splitlines():
            if ":X " in l or ":M " in l:  # a log line: its message only
                l = l.split(" ", 5)[-1][2:] if l.count(" ") >= 5 else l
            if l.strip():
                lines.append(l)
        outs.append([l for l in lines if "oO0OoO0OoO0Oo" not in l and "Redis version" not in l and
                     "Configuration loaded" not in l and "monotonic clock" not in l and
                     not l.startswith("Running mode=")])
    assert outs[0] == outs[1], outs


def test_protected_mode_with_acl_users(sentinels):
    """protected-mode yes without bind: a default user without password
    refuses non-loopback clients; a password on the default user (here
    by a `user default` line) lets them in, as on redis-sentinel."""
    need_oracle()
    ip = None
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, timeout=5).stdout.decode().split()
        ip = next((a for a in out if "." in a and not a.startswith("127.")), None)
    except (OSError, subprocess.SubprocessError):
        pass
    if not ip:
        pytest.skip("no non-loopback IPv4 address to connect from")
    for extra, denied in (("", True), ("user default on >pw ~* &* +@all\n", False)):
        replies = []
        for binary in (CAIRN_SENTINEL, SENTINEL_BIN):
            s = sentinels(binary, free_port(), extra="protected-mode yes\n" + extra, password=extra and "pw")
            # the fixture's config binds 127.0.0.1: rewrite without bind
            text = "".join(l for l in open(s.conf).read().splitlines(True) if not l.startswith("bind "))
            s.stop()
            with open(s.conf, "w") as f:
                f.write(text)
            s.start()
            c = socket.create_connection((ip, s.port), timeout=10)
            c.sendall(encode("PING"))
            data = b""
            while not data.endswith(b"\r\n"):
                chunk = c.recv(4096)
                if not chunk:
                    break
                data += chunk
            c.close()
            replies.append(data)
        assert replies[0] == replies[1], replies
        assert replies[0].startswith(b"-DENIED") == denied, replies


def test_sentinels_authenticate_with_sentinel_user(start_server, sentinels):
    """Three sentinels (two cairn, one redis) whose default user has a
    password the others do not know:
    they reach each other only as the ACL user `sent` (sentinel-user /
    sentinel-pass).  With quorum 3, objective down needs every sentinel's
    IS-MASTER-DOWN-BY-ADDR answer (without sentinel-user it never comes:
    checked by hand); one failover happens, and no sentinel logged a
    failed AUTH."""
    need_oracle()
    p, reps = group(start_server, 1)
    conf = ("user default on >other ~* &* +@all\nuser sent on >sp allchannels +@all\n"
            "sentinel sentinel-user sent\nsentinel sentinel-pass sp\n")
    sents = [sentinels(binary, p.port, extra=conf, password="other", down_after=1000, failover_timeout=6000)
             for binary in (CAIRN_SENTINEL, SENTINEL_BIN, CAIRN_SENTINEL)]
    for s in sents:
        s.cmd("SENTINEL", "SET", NAME, "quorum", "3")
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2 and
                 len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 60, "discovery")
    # the default user has another password: an unauthenticated client
    # gets NOAUTH
    for s in sents:
        assert raw(s.port, ("PING",))[0] == b"-NOAUTH Authentication required.\r\n"
    os.kill(p.pid, signal.SIGKILL)
    p.proc.wait()
    try:
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(reps[0].port), 90,
                     "switch")
        # the leader counted every sentinel's answer (a sentinel that gets
        # the new config first may never reach objective down itself)
        odown = "+odown master %s 127.0.0.1 %d #quorum 3/3" % (NAME, p.port)
        assert any(odown in s.log() for s in sents)
        assert sum(s.log().count("+failover-end ") for s in sents) == 1
        for s in sents:
            log = log_entries(s.port, "other")
            assert [e for e in log if e["reason"] == b"auth"] == [], log
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-3000:]) for s in sents)))


def test_setuser_taking_channels_closes_subscribers(sentinels):
    """ACL SETUSER that takes from a user a channel one of its clients is
    subscribed to closes that client; one that only adds channels does
    not (as redis-sentinel)."""
    ours, theirs = pair(sentinels)
    for s in (ours, theirs):
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(encode("AUTH", "sub", "s") + encode("SUBSCRIBE", "news1"))
        got = b""
        while got.count(b"\r\n") < 5:
            chunk = c.recv(4096)
            assert chunk
            got += chunk
        assert got.startswith(b"+OK\r\n*3\r\n$9\r\nsubscribe\r\n$5\r\nnews1\r\n:1\r\n"), got
        assert raw(s.port, ("ACL", "SETUSER", "sub", "&more*"))[0] == b"+OK\r\n"
        c.sendall(encode("PING"))
        assert c.recv(100) == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"  # still there
        assert raw(s.port, ("ACL", "SETUSER", "sub", "resetchannels", "&more*"))[0] == b"+OK\r\n"
        assert c.recv(100) == b""  # closed
        c.close()


def test_acl_load_of_an_aclfile_cut_at_every_byte(sentinels, tmp_path):
    """Hostile aclfile contents: the file cut at every byte and loaded with
    ACL LOAD gives redis-sentinel's reply (OK, or its error naming the
    line) and then its users; the sentinel stays up."""
    need_oracle()
    text = ("user alice on >apass ~k* &ch* +@all -sentinel|masters -client|kill\n"
            "user bob on nopass resetchannels -@all +ping +acl|whoami +sentinel|get-master-addr-by-name\n"
            "user default on nopass ~* &* +@all\n")
    files = [str(tmp_path / "ours.acl"), str(tmp_path / "theirs.acl")]
    for f in files:
        with open(f, "w") as fh:
            fh.write(text)
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead, extra="aclfile %s\n" % files[0])
    theirs = sentinels(SENTINEL_BIN, dead, extra="aclfile %s\n" % files[1])
    data = text.encode()
    for cut in range(len(data) + 1):
        replies = []
        for s, f in ((ours, files[0]), (theirs, files[1])):
            with open(f, "wb") as fh:
                fh.write(data[:cut])
            r = raw(s.port, ("ACL", "LOAD"), ("ACL", "LIST"))
            replies.append([norm_rules(x.replace(f.encode(), b"F")) for x in r])
        assert replies[0] == replies[1], (cut, data[:cut])
    # (a cut `user default on` left the default user without password nor
    # nopass: from then on both answer NOAUTH, as compared above)
    assert ours.proc.poll() is None and raw(ours.port, ("PING",)) == raw(theirs.port, ("PING",))
