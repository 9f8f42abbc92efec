"""Cairn's built-in Sentinel (issue 40), second part: the user scripts
(notification-script, client-reconfig-script, their queue, retries and
time limit, SENTINEL PENDING-SCRIPTS, deny-scripts-reconfig), TILT mode
entered by a stall (SIGSTOP/SIGCONT of the sentinel, as Redis's own tests
do), SENTINEL DEBUG / SIMULATE-FAILURE / INFO-CACHE, rename-command, and
hostile config files (cut at every line and inside lines).

Most tests run the same scenario against cairn-sentinel and Debian's
redis-sentinel 7.0.15 (parametrized by `binary`), or compare the raw reply
bytes of both: what is asserted is what redis-sentinel does."""
import os
import re
import signal
import socket
import stat
import subprocess
import time

import pytest
import redis

from conftest import free_port
from resphelp import encode, parse_one, value_end
from test_cairn_sentinel import (CAIRN_SENTINEL, NAME, SENTINEL_BIN, group, pairs, quicken,  # noqa: F401
                                 sentinels, wait_for)

BINARIES = [pytest.param(CAIRN_SENTINEL, id="cairn"), pytest.param(SENTINEL_BIN, id="redis")]


def raw(port, *cmds):
    """The raw reply bytes of each command, sent one at a time."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    out = []
    try:
        buf = b""
        for c in cmds:
            s.sendall(encode(*c))
            while value_end(buf) is None:
                chunk = s.recv(65536)
                assert chunk, "connection closed after %r" % (c,)
                buf += chunk
            j = value_end(buf)
            out.append(buf[:j])
            buf = buf[j:]
    finally:
        s.close()
    return out


def script(tmp_path, name, body):
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(p)


# --- replies compared byte for byte -----------------------------------------

DETERMINISTIC = [
    ("SENTINEL", "DEBUG"),
    ("SENTINEL", "DEBUG", "foo", "1"),
    ("SENTINEL", "DEBUG", "info-period", "0"),
    ("SENTINEL", "DEBUG", "info-period", "x"),
    ("SENTINEL", "DEBUG", "info-period"),
    ("SENTINEL", "DEBUG", "tilt-period", "5000", "ping-period", "1000"),
    ("SENTINEL", "DEBUG", "info-period", "20000", "foo"),  # applied up to the bad one
    ("SENTINEL", "DEBUG", "INFO-PERIOD", "99999999999999999999"),
    ("SENTINEL", "DEBUG"),
    ("SENTINEL", "SIMULATE-FAILURE"),
    ("SENTINEL", "SIMULATE-FAILURE", "help"),
    ("SENTINEL", "SIMULATE-FAILURE", "bad"),
    ("SENTINEL", "SIMULATE-FAILURE", "crash-after-election", "CRASH-AFTER-PROMOTION"),
    ("SENTINEL", "SIMULATE-FAILURE", "crash-after-election", "nope"),
    ("SENTINEL", "PENDING-SCRIPTS"),
    ("SENTINEL", "PENDING-SCRIPTS", "x"),
    ("SENTINEL", "INFO-CACHE"),
    ("SENTINEL", "INFO-CACHE", "nosuch"),
    ("SENTINEL", "INFO-CACHE", NAME, "nosuch", NAME),
    ("SENTINEL", "CONFIG", "GET", "*"),
    ("SENTINEL", "CONFIG", "GET", "deny-scripts-reconfig"),
    ("SENTINEL", "CONFIG", "SET", "deny-scripts-reconfig", "no"),
    ("SENTINEL", "CONFIG", "SET", "sentinel-user", "u1"),
    ("SENTINEL", "CONFIG", "SET", "sentinel-pass", "p1"),
    ("SENTINEL", "CONFIG", "GET", "sentinel-*"),
    ("SENTINEL", "CONFIG", "SET", "sentinel-user", ""),
    ("SENTINEL", "CONFIG", "SET", "sentinel-pass", ""),
    ("SENTINEL", "CONFIG", "SET", "resolve-hostnames", "maybe"),
    ("SENTINEL", "CONFIG", "SET", "resolve-hostnames", "no"),
    ("SENTINEL", "CONFIG", "SET", "announce-port", "99999"),
    ("SENTINEL", "CONFIG", "GET", "*"),
    ("SENTINEL", "SET", NAME),
    ("SENTINEL", "SET", NAME, "notification-script", "/bin/true"),
    ("SENTINEL", "SET", NAME, "client-reconfig-script", "/bin/true"),
    ("SENTINEL", "SET", NAME, "quorum", "3", "foo"),
    ("SENTINEL", "SET", NAME, "rename-command", "CONFIG"),
    ("SENTINEL", "SET", NAME, "rename-command", "CONFIG", "GUESS"),
    ("SENTINEL", "SET", NAME, "rename-command", "", "X"),
    ("SENTINEL", "SET", NAME, "rename-command", "X", ""),
    ("SENTINEL", "SET", NAME, "master-reboot-down-after-period", "-1"),
    ("SENTINEL", "SET", NAME, "master-reboot-down-after-period", "0"),
    ("SENTINEL", "SET", NAME, "parallel-syncs", "0"),
    ("SENTINEL", "SET", NAME, "auth-pass", "secret", "auth-user", "someone"),
    ("SENTINEL", "SET", "nosuch", "quorum", "2"),
    ("SENTINEL", "MONITOR", "a", "localhost", "6379", "2"),
    ("SENTINEL", "MONITOR", "a", "127.0.0.1", "x", "2"),
    ("SENTINEL", "MONITOR", "a", "127.0.0.1", "6379", "x"),
    ("SENTINEL", "MONITOR", "a", "127.0.0.1", "6379", "0"),
    ("SENTINEL", "MONITOR", "a", "127.0.0.1", "99999", "2"),
    ("SENTINEL", "MONITOR", "a", "127.0.0.1", "-1", "2"),
    ("SENTINEL", "MONITOR", "a", "::1", "0", "2"),
    ("SENTINEL", "MONITOR", NAME, "127.0.0.1", "6379", "2"),
    ("SENTINEL", "REMOVE", "a"),
    ("SENTINEL", "REMOVE", "a"),
]


def test_replies_match_redis_sentinel_byte_for_byte(sentinels):
    """SENTINEL DEBUG, SIMULATE-FAILURE, PENDING-SCRIPTS, INFO-CACHE,
    CONFIG GET/SET and SET's script, rename and reboot options: the same
    bytes from cairn-sentinel and redis-sentinel (a primary that is not
    there, so nothing depends on time)."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    a = raw(ours.port, *DETERMINISTIC)
    b = raw(theirs.port, *DETERMINISTIC)
    for cmd, x, y in zip(DETERMINISTIC, a, b):
        assert x == y, cmd
    # the flags are in INFO: the last SIMULATE-FAILURE reset them, set
    # crash-after-election (1), then failed on "nope" (as Redis: kept)
    assert ours.client.info("sentinel")["sentinel_simulate_failure_flags"] == 1
    assert theirs.client.info("sentinel")["sentinel_simulate_failure_flags"] == 1
    # SET's accepted options were written to the config, read back at restart
    for s in (ours, theirs):
        text = open(s.conf).read()
        assert "sentinel rename-command %s CONFIG GUESS\n" % NAME in text
        assert "sentinel auth-user %s someone\n" % NAME in text


def test_set_events_and_rename_command_used(start_server, sentinels):
    """SENTINEL SET publishes +set per option (auth-pass hidden), as
    redis-sentinel; a renamed command is what the sentinel sends: with
    CONFIG renamed on the primary, SENTINEL FAILOVER's CONFIG REWRITE goes
    through under the new name (the transaction would fail otherwise)."""
    p, reps = group(start_server, 1)
    got = {}
    for binary in (CAIRN_SENTINEL, SENTINEL_BIN):
        s = sentinels(binary, p.port)
        ps = s.client.pubsub()
        ps.subscribe("+set")
        wait_for(lambda: ps.get_message(timeout=0.1) is not None, 10, "subscribed")
        s.cmd("SENTINEL", "SET", NAME, "quorum", "2", "auth-pass", "pw", "parallel-syncs", "2")
        s.cmd("SENTINEL", "SET", NAME, "auth-pass", "")
        msgs = []
        wait_for(lambda: msgs.extend(m["data"] for m in iter(lambda: ps.get_message(timeout=0.1), None)
                                     if m["type"] == "message") or len(msgs) >= 4, 10, "+set events")
        got[binary] = msgs
        ps.close()
        s.stop()
    assert got[CAIRN_SENTINEL] == got[SENTINEL_BIN]
    assert got[CAIRN_SENTINEL][1] == "master %s 127.0.0.1 %d auth-pass ******" % (NAME, p.port)


def test_rename_command_reaches_the_instances(start_oracle, sentinels):
    """redis-server 7.0.15 primary and replica whose CONFIG is renamed
    (rename-command in their config; Cairn's data server refuses
    rename-command): cairn-sentinel with `sentinel rename-command` sends
    its failover transaction (MULTI, SLAVEOF, CONFIG REWRITE, CLIENT KILL,
    EXEC) with the renamed CONFIG, so the promoted replica's config file
    is rewritten."""
    cfg = {"config_file": "rename-command CONFIG CFG-RENAMED\n", "repl-diskless-sync-delay": "0"}
    p = start_oracle(**cfg)
    r = start_oracle(**cfg)
    r.client().execute_command("REPLICAOF", "127.0.0.1", p.port)
    wait_for(lambda: r.client().info("replication")["master_link_status"] == "up", 30, "replica up")
    r.client().execute_command("CFG-RENAMED", "REWRITE")
    assert "replicaof 127.0.0.1 %d" % p.port in open(os.path.join(r.tmp, "server.conf")).read()
    s = sentinels(CAIRN_SENTINEL, p.port, extra="sentinel rename-command %s CONFIG CFG-RENAMED\n" % NAME,
                  failover_timeout=6000)
    wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 30, "replica seen")
    wait_for(lambda: s.cmd("SENTINEL", "FAILOVER", NAME) == "OK", 40, "failover accepted")
    wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(r.port), 60, "switched")
    assert r.client().execute_command("ROLE")[0] == b"master"
    # the sentinel's own config keeps the rename
    assert "sentinel rename-command %s CONFIG CFG-RENAMED\n" % NAME in open(s.conf).read()
    # the EXEC's CONFIG REWRITE ran under the new name: the promoted
    # replica's config file no longer names a primary
    conf = open(os.path.join(r.tmp, "server.conf")).read()
    assert "replicaof" not in conf.lower() and "slaveof" not in conf.lower()


# --- scripts -----------------------------------------------------------------

@pytest.mark.parametrize("binary", BINARIES)
def test_scripts_run_with_their_arguments(binary, start_server, sentinels, tmp_path):
    """A notification script runs for each WARNING event about the primary
    with (type, text); the client-reconfig script runs when the leader
    promotes the replica with (name, leader, start, old ip, old port, new
    ip, new port).  Same facts for redis-sentinel and cairn-sentinel."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    log = tmp_path / "calls"
    notify = script(tmp_path, "notify.sh", 'echo "notify $*" >> %s\n' % log)
    reconf = script(tmp_path, "reconf.sh", 'echo "reconf $*" >> %s\n' % log)
    p, reps = group(start_server, 1)
    s = sentinels(binary, p.port, failover_timeout=6000,
                  extra="sentinel notification-script %s %s\nsentinel client-reconfig-script %s %s\n"
                  % (NAME, notify, NAME, reconf))
    info = s.cmd("SENTINEL", "MASTER", NAME)
    fields = pairs(info)
    assert fields["notification-script"] == notify and fields["client-reconfig-script"] == reconf
    wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 30, "replica seen")
    wait_for(lambda: s.cmd("SENTINEL", "FAILOVER", NAME) == "OK", 40, "failover accepted")
    r = reps[0]
    want_reconf = "reconf %s leader start 127.0.0.1 %d 127.0.0.1 %d" % (NAME, p.port, r.port)
    want_switch = "notify +switch-master %s 127.0.0.1 %d 127.0.0.1 %d" % (NAME, p.port, r.port)

    def lines():
        return log.read_text().splitlines() if log.exists() else []
    want = [want_reconf, want_switch,
            "notify +try-failover master %s 127.0.0.1 %d" % (NAME, p.port),
            "notify +promoted-slave slave 127.0.0.1:%d 127.0.0.1 %d @ %s 127.0.0.1 %d" % (
                r.port, r.port, NAME, p.port),
            "notify +failover-end master %s 127.0.0.1 %d" % (NAME, p.port)]
    # scripts run concurrently: wait for all of them, in any order
    wait_for(lambda: all(w in lines() for w in want), 60, "scripts ran")
    # every job finished (a script that exits 0 leaves the queue)
    wait_for(lambda: s.cmd("SENTINEL", "PENDING-SCRIPTS") == [], 30, "queue drained")


@pytest.mark.parametrize("binary", BINARIES)
def test_script_retry_timeout_and_pending_scripts(binary, sentinels, tmp_path):
    """A script exiting 1 is scheduled again after script-retry-delay with
    retry-num counting; one running past script-max-runtime is killed
    (-script-timeout, then retried as killed by a signal); one exiting 2
    is an error (-script-error) and leaves the queue.  PENDING-SCRIPTS
    shows argv, flags, pid, run-time or run-delay and retry-num."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    fail1 = script(tmp_path, "fail1.sh", "exit 1\n")
    slow = script(tmp_path, "slow.sh", "exec sleep 30\n")
    fail2 = script(tmp_path, "fail2.sh", "exit 2\n")
    dead = free_port()
    s = sentinels(binary, dead, extra="sentinel deny-scripts-reconfig no\n")
    ps = s.client.pubsub()
    ps.psubscribe("-script-*")
    wait_for(lambda: ps.get_message(timeout=0.1) is not None, 10, "subscribed")
    assert s.cmd("SENTINEL", "DEBUG", "script-retry-delay", "600000", "script-max-runtime", "1500") == "OK"

    # exit 1: rescheduled (retry-num 1, a run-delay near script-retry-delay)
    assert s.cmd("SENTINEL", "SET", NAME, "notification-script", fail1) == "OK"

    def jobs():
        return [pairs(j) for j in s.cmd("SENTINEL", "PENDING-SCRIPTS")]
    wait_for(lambda: any(j["flags"] == "scheduled" and j["retry-num"] == "1" for j in jobs()), 20, "retry")
    j = jobs()[0]
    assert j["argv"] == [fail1, "+set", "master %s 127.0.0.1 %d notification-script %s" % (NAME, dead, fail1)]
    assert j["pid"] == "0" and 0 < int(j["run-delay"]) <= 600000 and set(j) == {
        "argv", "flags", "pid", "run-delay", "retry-num"}

    # a slow one: running (pid, run-time), then killed at the limit
    assert s.cmd("SENTINEL", "SET", NAME, "notification-script", slow) == "OK"
    wait_for(lambda: any(j["flags"] == "running" and j["argv"][0] == slow for j in jobs()), 20, "running")
    run = [j for j in jobs() if j["argv"][0] == slow][0]
    assert int(run["pid"]) > 0 and set(run) == {"argv", "flags", "pid", "run-time", "retry-num"}
    msgs = []

    def seen(prefix):
        msgs.extend((m["channel"], m["data"]) for m in iter(lambda: ps.get_message(timeout=0.1), None)
                    if m["type"] == "pmessage")
        return [m for m in msgs if m[0] == prefix]
    wait_for(lambda: seen("-script-timeout"), 30, "-script-timeout")
    assert seen("-script-timeout")[0][1] == "%s %s" % (slow, run["pid"])
    wait_for(lambda: any(j["argv"][0] == slow and j["flags"] == "scheduled" and j["retry-num"] == "1"
                         for j in jobs()), 20, "killed script rescheduled")

    # exit 2: an error, no retry
    assert s.cmd("SENTINEL", "SET", NAME, "notification-script", fail2) == "OK"
    wait_for(lambda: seen("-script-error"), 30, "-script-error")
    assert ("-script-error", "%s 0 2" % fail2) in seen("-script-error")
    wait_for(lambda: not any(j["argv"][0] == fail2 for j in jobs()), 20, "fail2 left the queue")
    assert s.client.info("sentinel")["sentinel_scripts_queue_length"] == len(jobs())
    ps.close()


@pytest.mark.parametrize("binary", BINARIES)
def test_deny_scripts_reconfig(binary, sentinels, tmp_path):
    """By default SENTINEL SET cannot change a script path (Redis's error);
    with `sentinel deny-scripts-reconfig no` it can, the path must be
    executable, and the rewritten config keeps both."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    ok = script(tmp_path, "ok.sh", "exit 0\n")
    s = sentinels(binary, free_port())
    assert s.err("SENTINEL", "SET", NAME, "notification-script", ok).startswith(
        "Reconfiguration of scripts path is denied")
    s.stop()
    with open(s.conf, "a") as f:
        f.write("sentinel deny-scripts-reconfig no\n")
    s.start()
    assert s.err("SENTINEL", "SET", NAME, "client-reconfig-script", str(tmp_path / "missing")) == \
        "Client reconfiguration script seems non existing or non executable"
    assert s.cmd("SENTINEL", "SET", NAME, "client-reconfig-script", ok) == "OK"
    text = open(s.conf).read()
    assert "sentinel client-reconfig-script %s %s\n" % (NAME, ok) in text
    assert "sentinel deny-scripts-reconfig no\n" in text
    assert s.cmd("SENTINEL", "SET", NAME, "client-reconfig-script", "") == "OK"
    assert "client-reconfig-script" not in open(s.conf).read()


# --- TILT ----------------------------------------------------------------------

@pytest.mark.parametrize("binary", BINARIES)
def test_tilt_after_a_stall(binary, start_server, sentinels):
    """A sentinel stopped (SIGSTOP) for longer than tilt-trigger enters
    TILT when it runs again (+tilt "#tilt mode entered", INFO
    sentinel_tilt:1): meanwhile it does not call the primary down even
    when it is, and answers IS-MASTER-DOWN-BY-ADDR with 0; after
    tilt-period (shortened with SENTINEL DEBUG) it leaves TILT (-tilt) and
    acts again (+sdown)."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    p, reps = group(start_server, 0)
    s = sentinels(binary, p.port, down_after=1000)
    wait_for(lambda: pairs(s.cmd("SENTINEL", "MASTER", NAME))["role-reported"] == "master" and
             pairs(s.cmd("SENTINEL", "MASTER", NAME))["info-refresh"] != "0", 30, "primary seen")
    assert s.cmd("SENTINEL", "DEBUG", "tilt-period", "4000") == "OK"
    watcher = redis.Redis(port=s.port, socket_timeout=30, decode_responses=True)
    ps = watcher.pubsub()
    ps.psubscribe("*tilt", "+sdown")
    wait_for(lambda: ps.get_message(timeout=0.1) is not None, 10, "subscribed")
    os.kill(s.proc.pid, signal.SIGSTOP)
    try:
        time.sleep(3.0)  # > tilt-trigger (2 s): a stall, not a timing assertion
        p.proc.send_signal(signal.SIGSTOP)  # the primary stops answering too
    finally:
        os.kill(s.proc.pid, signal.SIGCONT)
    events = []

    def got(ch):
        events.extend((m["channel"], m["data"]) for m in iter(lambda: ps.get_message(timeout=0.1), None)
                      if m["type"] == "pmessage")
        return [e for e in events if e[0] == ch]
    try:
        wait_for(lambda: got("+tilt"), 20, "+tilt")
        assert got("+tilt")[0][1] == "#tilt mode entered"
        info = s.client.info("sentinel")
        assert info["sentinel_tilt"] in (0, 1)
        if info["sentinel_tilt"] == 1:
            assert info["sentinel_tilt_since_seconds"] >= 0
            down = s.cmd("SENTINEL", "IS-MASTER-DOWN-BY-ADDR", "127.0.0.1", p.port, 0, "*")
            assert down[0] == 0
        # no +sdown before -tilt, although the primary is stopped
        wait_for(lambda: got("-tilt"), 30, "-tilt")
        order = [e[0] for e in events]
        assert "+sdown" not in order[:order.index("-tilt")]
        assert got("-tilt")[0][1] == "#tilt mode exited"
        wait_for(lambda: got("+sdown"), 30, "+sdown after TILT")
        assert s.client.info("sentinel")["sentinel_tilt"] == 0
    finally:
        p.proc.send_signal(signal.SIGCONT)
        ps.close()


# --- SIMULATE-FAILURE ----------------------------------------------------------

@pytest.mark.parametrize("binary", BINARIES)
def test_simulate_failure_crash_after_election(binary, start_server, sentinels):
    """SENTINEL SIMULATE-FAILURE crash-after-election: the sentinel exits
    with status 99 right after it wins the election of a failover."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    p, reps = group(start_server, 1)
    s = sentinels(binary, p.port, down_after=1000)
    s.cmd("SENTINEL", "SET", NAME, "quorum", "1")
    wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 30, "replica seen")
    assert s.cmd("SENTINEL", "SIMULATE-FAILURE", "crash-after-election") == "OK"
    p.proc.kill()
    p.proc.wait()
    deadline = time.monotonic() + 60
    while s.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert s.proc.returncode == 99, s.log()[-3000:]
    assert "+elected-leader" in s.log() and "Sentinel CRASH because of SENTINEL simulate-failure" in s.log()
    # the replica was not promoted: the crash came before
    assert reps[0].client().execute_command("ROLE")[0] == b"slave"


# --- INFO-CACHE ------------------------------------------------------------------

def test_info_cache(start_server, sentinels):
    """SENTINEL INFO-CACHE: per named primary, its last INFO and each
    replica's, with their ages; the same shape as redis-sentinel's."""
    p, reps = group(start_server, 1)
    shapes = {}
    for binary in (CAIRN_SENTINEL, SENTINEL_BIN):
        s = sentinels(binary, p.port)
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1 and
                 all(e[1] for e in s.cmd("SENTINEL", "INFO-CACHE", NAME)[1]), 30, "INFO cached")
        reply = s.cmd("SENTINEL", "INFO-CACHE", NAME)
        assert reply[0] == NAME and len(reply) == 2
        entries = reply[1]
        assert len(entries) == 2
        for age, text in entries:
            assert isinstance(age, int) and age >= 0
            assert "# Replication" in text
        assert "role:master" in entries[0][1] and "role:slave" in entries[1][1]
        assert "run_id:%s" % p.client().info("server")["run_id"] in entries[0][1]
        shapes[binary] = [len(reply), [len(e) for e in entries]]
        s.stop()
    assert shapes[CAIRN_SENTINEL] == shapes[SENTINEL_BIN]


# --- hostile config files --------------------------------------------------------------

def start_outcome(binary, conf, port):
    """'up' when the sentinel answered PING, else ('exit', status, the
    FATAL message lines); the process is always gone after."""
    proc = subprocess.Popen([binary, conf, "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=os.path.dirname(conf))
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                out = proc.stdout.read().decode(errors="replace").splitlines()
                i = [k for k, l in enumerate(out) if "FATAL CONFIG FILE ERROR" in l]
                return ("exit", proc.returncode, out[i[0]:i[0] + 4] if i else out[-3:])
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        return "up"
            except OSError:
                pass
            time.sleep(0.005)
        return "hung"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def test_truncated_config_is_refused_as_redis_does(sentinels, tmp_path):
    """A sentinel config written by a running sentinel (monitor, settings,
    known replica and sentinel, epochs), cut at every line end and in the
    middle of every line: cairn-sentinel starts or refuses it exactly when
    redis-sentinel does, with the same FATAL CONFIG FILE ERROR lines
    (status 1), and never crashes."""
    dead = free_port()
    s = sentinels(CAIRN_SENTINEL, dead, extra="")
    s.cmd("SENTINEL", "SET", NAME, "parallel-syncs", "2", "auth-pass", "pw", "auth-user", "u")
    s.cmd("SENTINEL", "CONFIG", "SET", "announce-port", "26999")
    s.stop()
    text = open(s.conf).read()
    text += ("sentinel known-replica %s 127.0.0.1 %d\n"
             "sentinel known-sentinel %s 127.0.0.1 %d %s\n" % (NAME, free_port(), NAME, free_port(), "b" * 40))
    text += "sentinel rename-command %s CONFIG CFG\nsentinel master-reboot-down-after-period %s 5000\n" % (NAME, NAME)
    lines = text.splitlines(keepends=True)
    cuts = set()
    # cut from the first sentinel line on (the lines before are the data
    # server's directives: port, dir, logfile)
    first = next(k for k, l in enumerate(lines) if l.startswith("sentinel "))
    off = sum(len(l) for l in lines[:first])
    for l in lines[first:]:
        cuts.add(off + len(l) // 2)
        off += len(l)
        cuts.add(off - 1)  # the line without its newline
        cuts.add(off)
    mismatches = []

    def run_cuts(worker, some):
        """Both sentinels on each cut, one process at a time on this
        worker's port and files."""
        port = free_port()
        out = []
        for cut in some:
            body = text[:cut]
            results = []
            for binary in (CAIRN_SENTINEL, SENTINEL_BIN):
                conf = tmp_path / ("c%d-%s.conf" % (worker, os.path.basename(binary)))
                conf.write_text(body)
                results.append(start_outcome(binary, str(conf), port))
            out.append((cut, results))
        return out

    # the cuts spread over a few workers (test_config_cut_at_every_byte_never_crashes)
    from concurrent.futures import ThreadPoolExecutor
    cuts = sorted(cuts)
    workers = 4
    with ThreadPoolExecutor(workers) as pool:
        done = sorted(r for rs in pool.map(run_cuts, range(workers), [cuts[w::workers] for w in range(workers)])
                      for r in rs)
    assert [c for c, _ in done] == cuts
    for cut, results in done:
        for binary, r in zip((CAIRN_SENTINEL, SENTINEL_BIN), results):
            assert r != "hung", (binary, cut)
            if r != "up":
                assert r[1] in (1,), (binary, cut, r)  # an exit status, never a signal
        if results[0] != results[1]:
            mismatches.append((cut, repr(text[max(0, cut - 40):cut]), results))
    assert not mismatches, mismatches[:5]


# --- partition: no failover without a majority ---------------------------------------

@pytest.mark.parametrize("binary", BINARIES)
def test_isolated_sentinel_does_not_fail_over(binary, start_server, sentinels):
    """Three sentinels, quorum 1.  The two others are cut off (SIGSTOP: the
    isolated one's links stay open and get no reply, as across a
    partition), then the primary is killed: the isolated sentinel reaches
    +odown alone (quorum 1) and tries, but gets no majority of votes
    (-failover-abort-not-elected): the replica is never promoted.  When
    the others come back, exactly one failover happens.  The isolated
    sentinel is cairn-sentinel or redis-sentinel (same facts), the others
    cairn-sentinels."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    p, reps = group(start_server, 1)
    alone = sentinels(binary, p.port, down_after=1000, failover_timeout=3000)
    others = [sentinels(CAIRN_SENTINEL, p.port, down_after=1000, failover_timeout=3000) for _ in range(2)]
    sents = [alone] + others
    for s in sents:
        s.cmd("SENTINEL", "SET", NAME, "quorum", "1")
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2, 60, "discovery")
    for s in others:
        os.kill(s.proc.pid, signal.SIGSTOP)
    try:
        os.kill(p.pid, signal.SIGKILL)
        p.proc.wait()
        wait_for(lambda: "-failover-abort-not-elected" in alone.log(), 60, "election lost")
        log = alone.log()
        assert "+odown" in log and "+try-failover" in log
        assert "+elected-leader" not in log and "+selected-slave" not in log
        # still +odown within twice the failover timeout of the attempt:
        # said once, as a WARNING, with the date of the next attempt
        delay = "Next failover delay: I will not start a failover before "
        wait_for(lambda: delay in alone.log(), 30, "next failover delay logged")
        assert re.search(r" # %s\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\n" % delay, alone.log())
        assert reps[0].client().execute_command("ROLE")[0] == b"slave"
        assert alone.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(p.port)
    finally:
        for s in others:
            os.kill(s.proc.pid, signal.SIGCONT)
    try:
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(reps[0].port), 90,
                     "failover once the majority is back")
        switch = "+switch-master %s 127.0.0.1 %d 127.0.0.1 %d" % (NAME, p.port, reps[0].port)
        wait_for(lambda: all(switch in s.log() for s in sents), 30, "every sentinel logs the switch")
        assert sum(s.log().count("+failover-end ") for s in sents) == 1
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-3000:]) for s in sents)))


# --- redis-py's Sentinel client under write load -----------------------------------------

def test_redis_py_sentinel_client_across_a_failover(start_server, sentinels):
    """redis-py's Sentinel (master_for/slave_for) over three cairn-sentinels
    and a Cairn primary with two replicas: a writer keeps writing through
    master_for (SET then WAIT 1) while the primary is SIGKILLed; the
    client finds the new primary by itself, writing resumes, and every
    write WAIT acknowledged before, during and after the failover is on
    the new primary; slave_for reads from a replica of the new primary."""
    import threading
    from redis.sentinel import Sentinel

    p, reps = group(start_server, 2)
    sents = [sentinels(CAIRN_SENTINEL, p.port, failover_timeout=6000) for _ in range(3)]
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 2 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2, 60, "discovery")
    client = Sentinel([("127.0.0.1", s.port) for s in sents], socket_timeout=2)
    master = client.master_for(NAME, socket_timeout=2)
    assert master.ping()
    acked, errors = [], []
    stop = threading.Event()
    state = {"i": 0, "after_kill": 0}
    killed = threading.Event()

    def writer():
        while not stop.is_set():
            i = state["i"]
            try:
                master.set("w%d" % i, i)
                if master.execute_command("WAIT", 1, 1000) >= 1:
                    acked.append(i)
                    if killed.is_set():
                        state["after_kill"] += 1
                state["i"] = i + 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError) as e:
                errors.append(type(e).__name__)
                time.sleep(0.05)
            except redis.ResponseError as e:  # e.g. a replica's READONLY under another name
                errors.append(str(e)[:40])
                time.sleep(0.05)
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        wait_for(lambda: len(acked) >= 200, 60, "writes before the kill")
        os.kill(p.pid, signal.SIGKILL)
        p.proc.wait()
        killed.set()
        wait_for(lambda: state["after_kill"] >= 200, 120, "writes on the new primary")
    finally:
        stop.set()
        t.join(30)
    assert not t.is_alive()
    host, port = client.discover_master(NAME)
    assert port != p.port and port in [r.port for r in reps]
    new = next(r for r in reps if r.port == port)
    nc = new.client()
    values = nc.mget(["w%d" % i for i in acked])
    missing = [i for i, v in zip(acked, values) if v != str(i).encode()]
    assert not missing, "%d of %d acknowledged writes lost: %s" % (len(missing), len(acked), missing[:10])
    assert errors, "the writer never saw the primary go away"
    # slave_for: a replica of the new primary, reads the last write
    other = next(r for r in reps if r is not new)
    wait_for(lambda: other.client().info("replication").get("master_port") == new.port and
             other.client().info("replication")["master_link_status"] == "up", 60, "sibling follows")
    wait_for(lambda: ("127.0.0.1", other.port) in client.discover_slaves(NAME), 60, "replica listed")
    last = acked[-1]
    replica = client.slave_for(NAME, socket_timeout=2)
    wait_for(lambda: replica.get("w%d" % last) == str(last).encode(), 30, "replica read")
    assert replica.execute_command("ROLE")[0] == b"slave"


# --- HELLO, RESP3, CLIENT -------------------------------------------------------------

PROTOCOL = [
    ("HELLO",),
    ("HELLO", "x"),
    ("HELLO", "4"),
    ("HELLO", "3", "SETNAME", "a b"),
    ("HELLO", "2", "AUTH", "default", "nopass-here"),
    ("HELLO", "2", "FOO"),
    ("CLIENT", "GETNAME"),
    ("CLIENT", "SETNAME", "x y"),
    ("CLIENT", "SETNAME", "foo"),
    ("CLIENT", "GETNAME"),
    ("CLIENT", "ID", "x"),
    ("CLIENT", "FOO"),
    ("CLIENT",),
    ("CLIENT", "LIST", "TYPE", "x"),
    ("CLIENT", "LIST", "ID", "x"),
    ("CLIENT", "KILL", "1.2.3.4:5"),
    ("CLIENT", "KILL", "ID", "0"),
    ("CLIENT", "KILL", "ID", "999999", "SKIPME", "no"),
    ("CLIENT", "KILL", "USER", "bob"),
    ("CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "maybe"),
    ("CLIENT", "KILL", "ADDR"),
    ("CLIENT", "KILL", "TYPE", "pubsub"),
    ("HELLO", "3", "SETNAME", "bar"),
    ("CLIENT", "GETNAME"),
    ("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "nosuch"),
    ("SENTINEL", "DEBUG"),
    ("SENTINEL", "CONFIG", "GET", "announce-*"),
    ("SENTINEL", "PENDING-SCRIPTS"),
    ("SENTINEL", "INFO-CACHE", NAME),
    ("SENTINEL", "MYID"),
    ("SUBSCRIBE", "a"),  # one channel: UNSUBSCRIBE's order over several is Redis's hash order
    ("PING",),
    ("ROLE",),
    ("UNSUBSCRIBE",),
    ("PSUBSCRIBE", "x*"),
    ("PUNSUBSCRIBE", "x*"),
    ("HELLO", "2"),
    ("SUBSCRIBE", "a"),
    ("PING", "hi"),
    ("ROLE",),
]


def normalized(b):
    import re
    b = re.sub(rb"\$40\r\n[0-9a-f]{40}\r\n", b"$40\r\n<id>\r\n", b)
    return re.sub(rb"(\$2\r\nid\r\n):\d+\r\n", rb"\1:<n>\r\n", b)


def test_hello_resp3_and_client_match_redis_sentinel(sentinels):
    """HELLO (its 6 fields, RESP3 switch, SETNAME, AUTH, errors), RESP3
    replies (maps, nulls, pushes; a subscribed RESP3 client runs ROLE) and
    CLIENT GETNAME/SETNAME/ID/LIST/KILL errors and counts: the same bytes
    as redis-sentinel (ids and the run id normalized)."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    a = raw(ours.port, *PROTOCOL)
    b = raw(theirs.port, *PROTOCOL)
    for cmd, x, y in zip(PROTOCOL, a, b):
        assert normalized(x) == normalized(y), cmd
    # CLIENT INFO / LIST: the same fields in the same order
    la = ours.cmd("CLIENT", "INFO").split()
    lb = theirs.cmd("CLIENT", "INFO").split()
    assert [f.split("=")[0] for f in la] == [f.split("=")[0] for f in lb]
    assert "cmd=client|info" in la and "resp=2" in la
    ours.cmd("CLIENT", "SETNAME", "me")
    me = [l for l in ours.cmd("CLIENT", "LIST").splitlines() if "name=me " in l]
    assert len(me) == 1 and "id=%d " % ours.cmd("CLIENT", "ID") in me[0]
    # CLIENT KILL of another client: that connection is closed
    other = socket.create_connection(("127.0.0.1", ours.port), timeout=10)
    other.sendall(encode("CLIENT", "ID"))
    got = b""
    while not got.endswith(b"\r\n"):
        got += other.recv(100)
    vid = int(got[1:-2])
    assert ours.cmd("CLIENT", "KILL", "ID", vid) == 1
    assert other.recv(100) == b""  # closed by the sentinel
    other.close()


# --- INFO ----------------------------------------------------------------------------

def info_shape(text):
    """Section headers and field names, in order (values vary)."""
    return [l if l.startswith("#") else l.split(":")[0] for l in text.split("\r\n") if l]


@pytest.mark.parametrize("args", [(), ("default",), ("all",), ("everything",), ("server",), ("clients",),
                                  ("stats",), ("cpu",), ("sentinel",), ("cpu", "server"), ("nosuch",),
                                  ("SENTINEL", "clients")])
def test_info_sections_match_redis_sentinel(args, sentinels):
    """INFO in Sentinel mode: the same sections, fields and order as
    redis-sentinel's for each request; counters that mean something here
    move (commands, connections, bytes, errors)."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    a = raw(ours.port, ("INFO",) + args)[0]
    b = raw(theirs.port, ("INFO",) + args)[0]
    ta = a.split(b"\r\n", 1)[1].decode()
    tb = b.split(b"\r\n", 1)[1].decode()
    assert info_shape(ta) == info_shape(tb)
    if args == ("stats",):
        before = ours.client.info("stats")
        with pytest.raises(redis.ResponseError):
            ours.cmd("NOSUCHCOMMAND")
        after = ours.client.info("stats")
        assert after["total_error_replies"] == before["total_error_replies"] + 1
        assert after["total_commands_processed"] > before["total_commands_processed"]
        assert after["total_net_input_bytes"] > before["total_net_input_bytes"]
        assert after["total_net_output_bytes"] > before["total_net_output_bytes"]


# --- the reverse mixed group: redis-sentinels in the majority, redis-server nodes ---------

def test_redis_majority_group_over_redis_servers(start_oracle, sentinels):
    """Two redis-sentinels and one cairn-sentinel over redis-server 7.0.15
    (a primary, two replicas), under SET + WAIT 1 writes: they find each
    other, SIGKILL of the primary gives exactly one failover (whoever
    leads it), the three agree, every acknowledged write is on the new
    primary, the other replica follows, and the old primary, restarted,
    becomes a replica of the new one."""
    if not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    cfg = {"config_file": "", "repl-diskless-sync-delay": "0"}
    p = start_oracle(**cfg)
    reps = [start_oracle(**cfg) for _ in range(2)]
    for r in reps:
        r.client().execute_command("REPLICAOF", "127.0.0.1", p.port)
    for r in reps:
        wait_for(lambda: r.client().info("replication")["master_link_status"] == "up", 30, "replica up")
    sents = [sentinels(SENTINEL_BIN, p.port, failover_timeout=6000),
             sentinels(CAIRN_SENTINEL, p.port, failover_timeout=6000),
             sentinels(SENTINEL_BIN, p.port, failover_timeout=6000)]
    quicken(*sents)
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 2 and
                 len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2, 60, "discovery")
    pc = p.client()
    acked = []
    for i in range(200):
        pc.set("k%d" % i, i)
        if pc.execute_command("WAIT", 1, 2000) >= 1:
            acked.append(i)
    assert acked
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
        vals = new.client().mget(["k%d" % i for i in acked])
        assert all(v == str(i).encode() for i, v in zip(acked, vals))
        wait_for(lambda: other.client().info("replication").get("master_port") == new.port and
                 other.client().info("replication")["master_link_status"] == "up", 60, "sibling follows")
        switch = "+switch-master %s 127.0.0.1 %d 127.0.0.1 %d" % (NAME, old_port, port)
        wait_for(lambda: all(switch in s.log() for s in sents), 30, "every sentinel logs the switch")
        assert sum(s.log().count("+failover-end ") for s in sents) == 1
        back = start_oracle(port=old_port, **cfg)
        wait_for(lambda: back.client().info("replication").get("master_port") == new.port and
                 back.client().info("replication")["master_link_status"] == "up", 120, "old primary rejoins")
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-4000:]) for s in sents)))


def test_flags_order_of_a_down_primary(sentinels):
    """A primary that is not there: the flags field reads the same as
    redis-sentinel's, in Redis's order (s_down,master,disconnected)."""
    dead = free_port()
    both = [sentinels(CAIRN_SENTINEL, dead, down_after=500), sentinels(SENTINEL_BIN, dead, down_after=500)]
    for s in both:
        wait_for(lambda: "s_down" in pairs(s.cmd("SENTINEL", "MASTER", NAME))["flags"], 30, "s_down")
    flags = [pairs(s.cmd("SENTINEL", "MASTER", NAME))["flags"] for s in both]
    assert flags[0] == flags[1] == "s_down,master,disconnected"


def test_config_cut_at_every_byte_never_crashes(sentinels, tmp_path):
    """The same written config cut at every byte of its sentinel lines:
    cairn-sentinel either starts or exits with status 1 after a FATAL
    CONFIG FILE ERROR; never a signal, never a hang."""
    dead = free_port()
    s = sentinels(CAIRN_SENTINEL, dead)
    s.cmd("SENTINEL", "SET", NAME, "auth-pass", "pw", "auth-user", "u", "rename-command", "CONFIG", "CFG")
    s.stop()
    text = open(s.conf).read()
    text += "sentinel known-replica %s 127.0.0.1 %d\nsentinel known-sentinel %s 127.0.0.1 %d %s\n" % (
        NAME, free_port(), NAME, free_port(), "c" * 40)
    first = text.index("\nsentinel ") + 1
    outcomes = {"up": 0, "refused": 0}

    def run_cuts(worker, cuts):
        """Each cut in its own sentinel process, one after the other on
        this worker's port and file."""
        port = free_port()
        conf = tmp_path / ("cut-%d.conf" % worker)
        out = []
        for cut in cuts:
            conf.write_text(text[:cut])
            out.append((cut, start_outcome(CAIRN_SENTINEL, str(conf), port)))
        return out

    # Every byte, as before, the cuts spread over a few workers (each a
    # sentinel process at a time): the processes mostly wait to start or
    # exit, so this takes a fraction of the time of one after another.
    from concurrent.futures import ThreadPoolExecutor
    cuts = list(range(first, len(text) + 1))
    workers = 6
    with ThreadPoolExecutor(workers) as pool:
        results = [r for rs in pool.map(run_cuts, range(workers), [cuts[w::workers] for w in range(workers)])
                   for r in rs]
    assert sorted(c for c, _ in results) == cuts
    for cut, r in results:
        assert r != "hung", cut
        if r == "up":
            outcomes["up"] += 1
        else:
            assert r[1] == 1 and any("FATAL CONFIG FILE ERROR" in l for l in r[2]), (cut, r)
            outcomes["refused"] += 1
    assert outcomes["up"] and outcomes["refused"]


@pytest.mark.parametrize("garbage", [
    b"*-5\r\n", b"*99999999999\r\n", b"*2\r\n$-7\r\n", b"$5\r\nhello\r\n", b"*1\r\n:5\r\n",
    b"*1\r\n$99999999999\r\n", b"\x00\xff\r\n", b"\"unbalanced\r\n", b"*3\r\n$8\r\nSENTINEL\r\n$3\r\nSET\r\n",
    b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n$1\r\na\r\n"])
def test_protocol_garbage_leaves_the_sentinel_up(garbage, sentinels):
    """Malformed requests on the sentinel's port: an error or a closed
    connection for that client, the sentinel keeps serving others."""
    s = sentinels(CAIRN_SENTINEL, free_port())
    c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    try:
        c.sendall(garbage)
        c.settimeout(1)
        try:
            c.recv(4096)
        except (socket.timeout, ConnectionError):
            pass
    finally:
        c.close()
    assert s.client.ping() is True
    assert s.proc.poll() is None


# --- hostnames ---------------------------------------------------------------------

@pytest.mark.parametrize("binary", BINARIES)
def test_resolve_and_announce_hostnames(binary, start_server, sentinels):
    """`sentinel resolve-hostnames yes` (written after the monitor line:
    applied first, as Redis applies it) lets a primary be named
    "localhost"; with announce-hostnames yes the sentinel shows and writes
    that name (SENTINEL MASTER, GET-MASTER-ADDR-BY-NAME, events, the
    rewritten config), with no it shows the IP; without resolve-hostnames
    a hostname is refused with Redis's errors.  Same facts for both."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    p, reps = group(start_server, 1)
    s = sentinels(binary, p.port, monitor=False,
                  extra="sentinel monitor %s localhost %d 2\nsentinel resolve-hostnames yes\n"
                        "sentinel announce-hostnames yes\n" % (NAME, p.port))
    wait_for(lambda: pairs(s.cmd("SENTINEL", "MASTER", NAME))["role-reported"] == "master" and
             len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 30, "primary and replica seen")
    m = pairs(s.cmd("SENTINEL", "MASTER", NAME))
    assert m["ip"] == "localhost" and "disconnected" not in m["flags"]
    assert s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == ["localhost", str(p.port)]
    assert "sentinel monitor %s localhost %d 2" % (NAME, p.port) in open(s.conf).read()
    assert s.cmd("SENTINEL", "CONFIG", "GET", "resolve-hostnames") == ["resolve-hostnames", "yes"]
    # announce-hostnames no: the resolved IP is shown and written
    assert s.cmd("SENTINEL", "CONFIG", "SET", "announce-hostnames", "no") == "OK"
    assert pairs(s.cmd("SENTINEL", "MASTER", NAME))["ip"] == "127.0.0.1"
    assert s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == ["127.0.0.1", str(p.port)]
    # without resolve-hostnames: refused
    assert s.cmd("SENTINEL", "CONFIG", "SET", "resolve-hostnames", "no") == "OK"
    assert s.err("SENTINEL", "MONITOR", "other", "localhost", p.port, 2) == \
        "Invalid IP address or hostname specified"
    assert s.cmd("SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes") == "OK"
    assert s.err("SENTINEL", "MONITOR", "other", "no-such-host.invalid", p.port, 2) == \
        "Invalid IP address or hostname specified"
    assert s.cmd("SENTINEL", "MONITOR", "other", "localhost", p.port, 2) == "OK"
    assert pairs(s.cmd("SENTINEL", "MASTER", "other"))["ip"] == "127.0.0.1"


# --- COMMAND -------------------------------------------------------------------------

PLAIN = ["ping", "info", "role", "subscribe", "psubscribe", "unsubscribe", "punsubscribe", "publish", "auth",
         "hello", "shutdown", "sentinel|myid", "sentinel|masters", "client|kill", "command|docs"]


def test_command_matches_redis_sentinel(sentinels):
    """COMMAND in Sentinel mode, from redis-sentinel's own table limited to
    what this Sentinel runs (ACL's; CLIENT's id/getname/setname/info/
    list/kill/help): per command the same INFO and DOCS bytes (RESP2 and
    RESP3), the same errors; LIST is a subset of redis-sentinel's and
    COUNT counts it.  SENTINEL/CLIENT/COMMAND HELP have Redis's shape (a
    usage line, pairs of lines, HELP last) and list every subcommand that
    COMMAND lists."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    cmds = []
    for name in PLAIN:
        cmds += [("COMMAND", "INFO", name), ("COMMAND", "DOCS", name)]
    cmds += [("COMMAND", "GETKEYS", "ping", "a"), ("COMMAND", "GETKEYS", "foo", "a"),
             ("COMMAND", "GETKEYS", "sentinel", "masters", "x"), ("COMMAND", "GETKEYS", "sentinel", "x"),
             ("COMMAND", "GETKEYSANDFLAGS", "role", "x"), ("COMMAND", "GETKEYS", "ping"),
             ("COMMAND", "INFO", "nosuch", "ping"), ("COMMAND", "LIST", "FILTERBY", "MODULE", "x"),
             ("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"), ("COMMAND", "LIST", "FILTERBY", "foo", "x"),
             ("COMMAND", "LIST", "x"), ("COMMAND", "DOCS", "nosuch"), ("COMMAND", "COUNT", "x"),
             ("COMMAND", "FOO")]
    for proto in ("2", "3"):
        a = raw(ours.port, ("HELLO", proto), *cmds)[1:]
        b = raw(theirs.port, ("HELLO", proto), *cmds)[1:]
        for cmd, x, y in zip(cmds, a, b):
            assert x == y, (proto, cmd)
    def q(s, *args):
        t, v = parse_one(raw(s.port, args)[0])
        return [e[1] for e in v] if t == b"*" else v
    mine = q(ours, "COMMAND", "LIST")
    full = q(theirs, "COMMAND", "LIST")
    assert set(mine) <= set(full) and b"acl|setuser" in mine and b"sentinel|help" in mine
    assert q(ours, "COMMAND", "COUNT") == len([n for n in mine if b"|" not in n]) == len(q(ours, "COMMAND"))
    for cat in ("admin", "pubsub", "connection"):
        got = set(q(ours, "COMMAND", "LIST", "FILTERBY", "ACLCAT", cat))
        assert got == set(q(theirs, "COMMAND", "LIST", "FILTERBY", "ACLCAT", cat)) & set(mine)
    assert set(q(ours, "COMMAND", "LIST", "FILTERBY", "PATTERN", "p*")) == \
        set(q(theirs, "COMMAND", "LIST", "FILTERBY", "PATTERN", "p*"))
    for container in ("SENTINEL", "CLIENT", "COMMAND"):
        help_ = [e.decode() for e in q(ours, container, "HELP")]
        assert help_[0] == "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" % container
        assert help_[-2:] == ["HELP", "    Prints this help."] and len(help_) % 2 == 1
        named = {l.split()[0].lower() for l in help_[1:] if not l.startswith(" ") and not l.startswith("(")}
        subs = {n.split(b"|")[1].decode() for n in mine if n.startswith(container.lower().encode() + b"|")}
        assert named == subs, container
        assert raw(ours.port, (container, "HELP", "x")) == raw(theirs.port, (container, "HELP", "x"))


def pipelined(port, cmds, settle=0.5):
    """All the reply bytes to cmds sent at once (some send none)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(b"".join(encode(*c) for c in cmds) + encode("PING", "end"))
        buf = b""
        deadline = time.monotonic() + 10
        while not buf.endswith(b"$3\r\nend\r\n") and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return buf
    finally:
        s.close()


def test_client_reply_no_evict_and_tracking_info_match_redis_sentinel(sentinels):
    """CLIENT REPLY ON/OFF/SKIP (replies dropped, pub/sub pushes too),
    NO-EVICT, GETREDIR, TRACKINGINFO, UNBLOCK: the same bytes as
    redis-sentinel, in RESP2 and RESP3."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    cmds = [("CLIENT", "GETREDIR"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "NO-EVICT", "on"),
            ("CLIENT", "NO-EVICT", "maybe"), ("CLIENT", "NO-EVICT", "off"), ("CLIENT", "UNBLOCK", "5"),
            ("CLIENT", "UNBLOCK", "x"), ("CLIENT", "UNBLOCK", "5", "TIMEOUT"), ("CLIENT", "UNBLOCK", "5", "foo"),
            ("CLIENT", "UNBLOCK", "5", "error", "x"), ("CLIENT", "REPLY", "maybe"), ("CLIENT", "REPLY", "SKIP"),
            ("PING",), ("PING", "a"), ("CLIENT", "REPLY", "OFF"), ("PING",), ("SENTINEL", "MYID"),
            ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"), ("PING", "b"), ("CLIENT", "REPLY"),
            ("CLIENT", "GETREDIR", "x")]
    for proto in ("2", "3"):
        seq = [("HELLO", proto)] + cmds
        a = normalized(pipelined(ours.port, seq))
        b = normalized(pipelined(theirs.port, seq))
        assert a == b, proto
    assert ours.cmd("CLIENT", "NO-EVICT", "on") == "OK"
    assert " flags=e " in ours.cmd("CLIENT", "INFO")


@pytest.mark.parametrize("binary", BINARIES)
def test_client_pause_holds_commands_until_unpause(binary, sentinels):
    """CLIENT PAUSE WRITE holds PUBLISH (not SENTINEL MYID) of every client
    until CLIENT UNPAUSE, then runs it; the errors are redis-sentinel's.
    Same facts for both sentinels."""
    if binary == SENTINEL_BIN and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    s = sentinels(binary, free_port())
    a = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    b = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    try:
        a.sendall(encode("CLIENT", "PAUSE", "60000", "WRITE"))
        assert a.recv(100) == b"+OK\r\n"
        b.sendall(encode("PUBLISH", "__sentinel__:hello", "x"))
        time.sleep(0.2)
        a.sendall(encode("SENTINEL", "MYID"))  # not held
        assert a.recv(100).startswith(b"$40\r\n")
        b.setblocking(False)
        with pytest.raises(BlockingIOError):
            b.recv(100)  # PUBLISH still held
        b.setblocking(True)
        a.sendall(encode("CLIENT", "UNPAUSE"))
        assert a.recv(100) == b"+OK\r\n"
        assert b.recv(100) == b":1\r\n"  # run after the pause
    finally:
        a.close()
        b.close()


def test_client_tracking_state_matches_redis_sentinel(sentinels):
    """CLIENT TRACKING/CACHING/TRACKINGINFO/GETREDIR in Sentinel mode: the
    options' checks, errors and the state shown are redis-sentinel's (a
    sentinel has no keys, so nothing is ever invalidated)."""
    dead = free_port()
    ours = sentinels(CAIRN_SENTINEL, dead)
    theirs = sentinels(SENTINEL_BIN, dead)
    cmds = [("CLIENT", "TRACKING", "on"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR"),
            ("CLIENT", "TRACKING", "on", "BCAST"), ("CLIENT", "TRACKING", "off"),
            ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a"), ("CLIENT", "TRACKINGINFO"),
            ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab"),
            ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c", "PREFIX", "d", "PREFIX", "dd"),
            ("CLIENT", "TRACKINGINFO"), ("CLIENT", "TRACKING", "on", "OPTIN"), ("CLIENT", "TRACKING", "off"),
            ("CLIENT", "TRACKING", "on", "OPTIN"), ("CLIENT", "CACHING", "yes"), ("CLIENT", "CACHING", "no"),
            ("CLIENT", "TRACKINGINFO"), ("PING",), ("CLIENT", "TRACKINGINFO"),
            ("CLIENT", "TRACKING", "on", "OPTOUT"), ("CLIENT", "TRACKING", "off"), ("CLIENT", "CACHING", "yes"),
            ("CLIENT", "CACHING", "maybe"), ("CLIENT", "TRACKING", "on", "REDIRECT", "99999"),
            ("CLIENT", "TRACKING", "on", "REDIRECT", "x"), ("CLIENT", "TRACKING", "maybe"),
            ("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"), ("CLIENT", "TRACKING", "on", "PREFIX", "a"),
            ("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"), ("CLIENT", "TRACKING", "on", "foo"),
            ("CLIENT", "TRACKING", "on", "NOLOOP"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "TRACKING"),
            ("CLIENT", "CACHING")]
    for proto in ("2", "3"):
        seq = [("HELLO", proto)] + cmds
        a = raw(ours.port, *seq)[1:]
        b = raw(theirs.port, *seq)[1:]
        for cmd, x, y in zip(cmds, a, b):
            assert x == y, (proto, cmd)


# --- sentinels that require a password ------------------------------------------------

def test_sentinels_with_requirepass_authenticate_to_each_other(start_server, sentinels):
    """Three sentinels that all require a password (requirepass pw): a
    cairn-sentinel and a redis-sentinel with `sentinel sentinel-pass pw`,
    and a cairn-sentinel with none (it falls back to its own requirepass,
    as Redis does).  Objective down needs the others' answers to
    IS-MASTER-DOWN-BY-ADDR, which only authenticated links get: with
    quorum 3, all three reach +odown after the primary is killed, and one
    failover happens."""
    if not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    p, reps = group(start_server, 1)
    auth = "requirepass pw\nsentinel sentinel-pass pw\n"
    sents = [sentinels(CAIRN_SENTINEL, p.port, extra=auth, password="pw", down_after=1000, failover_timeout=6000),
             sentinels(SENTINEL_BIN, p.port, extra=auth, password="pw", down_after=1000, failover_timeout=6000),
             sentinels(CAIRN_SENTINEL, p.port, extra="requirepass pw\n", password="pw", down_after=1000,
                       failover_timeout=6000)]
    for s in sents:
        s.cmd("SENTINEL", "SET", NAME, "quorum", "3")
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "SENTINELS", NAME)) == 2 and
                 len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1, 60, "discovery")
    assert "sentinel sentinel-pass pw" in open(sents[0].conf).read()
    os.kill(p.pid, signal.SIGKILL)
    p.proc.wait()
    try:
        for s in sents:
            wait_for(lambda: "+odown master %s 127.0.0.1 %d #quorum 3/3" % (NAME, p.port) in s.log(), 60,
                     "odown with every sentinel's answer")
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)[1] == str(reps[0].port), 90,
                     "switch")
        assert sum(s.log().count("+failover-end ") for s in sents) == 1
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, "\n".join("--- %d:\n%s" % (s.port, s.log()[-3000:]) for s in sents)))
