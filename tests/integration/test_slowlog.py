"""SLOWLOG GET / LEN / RESET / HELP: what is logged (threshold, max length,
skip-slowlog commands, commands run by EXEC), entry layout and argument
trimming, error texts.  Each test runs on cairn and on redis-server."""
import pytest
import redis

from compare import BOTH, debug_target, run

ENTRY_FIELDS = 6


def fresh(request, target, **cfg):
    srv = request.getfixturevalue("start_server" if target == "server" else "start_oracle")(**cfg)
    r = srv.client()
    r.response_callbacks.clear()  # raw replies, no redis-py parsing
    return srv, r


def get(r, *count):
    return r.execute_command("SLOWLOG", "GET", *count)


def argvs(entries):
    return [e[3] for e in entries]


@pytest.mark.parametrize("target", BOTH)
def test_logs_everything_at_zero_and_nothing_at_minus_one(request, target):
    _, r = fresh(request, target)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.execute_command("SLOWLOG", "RESET")
    r.set("a", "1")
    r.get("a")
    entries = get(r)
    # Newest first; SLOWLOG RESET itself is logged after it ran.
    assert argvs(entries) == [[b"GET", b"a"], [b"SET", b"a", b"1"], [b"SLOWLOG", b"RESET"]]
    ids = [e[0] for e in entries]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 3
    assert all(len(e) == ENTRY_FIELDS and e[2] >= 0 for e in entries)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    n = r.execute_command("SLOWLOG", "LEN")
    r.set("b", "2")
    assert r.execute_command("SLOWLOG", "LEN") == n


@pytest.mark.parametrize("target", BOTH)
def test_threshold_filters_fast_commands(request, target):
    r = debug_target(request, target).client()
    r.response_callbacks.clear()
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "100000")
    r.execute_command("SLOWLOG", "RESET")
    r.ping()
    assert r.execute_command("SLOWLOG", "LEN") == 0
    r.execute_command("DEBUG", "SLEEP", "0.2")
    assert r.execute_command("SLOWLOG", "LEN") == 1
    entry = get(r)[0]
    assert entry[3] == [b"DEBUG", b"SLEEP", b"0.2"] and entry[2] >= 100000


@pytest.mark.parametrize("target", BOTH)
def test_entry_has_client_address_and_name(request, target):
    _, r = fresh(request, target)
    r.execute_command("CLIENT", "SETNAME", "logger")
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.execute_command("SLOWLOG", "RESET")
    addr = [ln for ln in r.execute_command("CLIENT", "INFO").decode().split()
            if ln.startswith("addr=")][0][5:]
    r.execute_command("PING")
    e = get(r, 1)[0]
    assert e[3] == [b"PING"] and e[4] == addr.encode() and e[5] == b"logger"
    r.execute_command("CLIENT", "SETNAME", "")
    r.execute_command("PING")
    assert get(r, 1)[0][5] == b""


@pytest.mark.parametrize("target", BOTH)
def test_arguments_are_trimmed(request, target):
    _, r = fresh(request, target)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.execute_command("SLOWLOG", "RESET")
    r.execute_command("DEL", *[b"k%d" % i for i in range(100)])
    r.execute_command("SET", "big", b"x" * 200)
    r.execute_command("SET", "edge", b"y" * 128)
    edge, big, dele = argvs(get(r, 3))
    assert len(dele) == 32
    assert dele[:31] == [b"DEL"] + [b"k%d" % i for i in range(30)]
    assert dele[31] == b"... (70 more arguments)"
    assert big == [b"SET", b"big", b"x" * 128 + b"... (72 more bytes)"]
    assert edge == [b"SET", b"edge", b"y" * 128]


@pytest.mark.parametrize("target", BOTH)
def test_exec_is_not_logged_but_its_commands_are(request, target):
    _, r = fresh(request, target)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.execute_command("SLOWLOG", "RESET")
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.execute_command("INCR", "a")
    p.execute()
    names = [a[0].lower() for a in argvs(get(r, -1))]
    assert names == [b"incr", b"set", b"multi", b"slowlog"]


@pytest.mark.parametrize("target", BOTH)
def test_rejected_commands_are_not_logged(request, target):
    _, r = fresh(request, target)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.execute_command("SLOWLOG", "RESET")
    for cmd in (("NOSUCH",), ("GET",), ("CONFIG", "NOSUCH")):
        with pytest.raises(redis.ResponseError):
            r.execute_command(*cmd)
    assert argvs(get(r)) == [[b"SLOWLOG", b"RESET"]]


@pytest.mark.parametrize("target", BOTH)
def test_max_len_and_counts(request, target):
    _, r = fresh(request, target)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.execute_command("CONFIG", "SET", "slowlog-max-len", "5")
    for i in range(10):
        r.set("k", i)
    assert r.execute_command("SLOWLOG", "LEN") == 5
    assert len(get(r)) == 5
    assert len(get(r, 2)) == 2 and len(get(r, 0)) == 0 and len(get(r, -1)) == 5
    # A shorter max length applies from the next entry on.
    r.execute_command("CONFIG", "SET", "slowlog-max-len", "2")
    assert r.execute_command("SLOWLOG", "LEN") == 2
    r.execute_command("CONFIG", "SET", "slowlog-max-len", "0")
    r.ping()
    assert r.execute_command("SLOWLOG", "LEN") == 0
    # ids kept increasing while nothing was kept.
    r.execute_command("CONFIG", "SET", "slowlog-max-len", "10")
    last = get(r, 1)[0][0]
    r.ping()
    assert get(r, 1)[0][0] == last + 2  # the SLOWLOG GET in between counted


@pytest.mark.parametrize("target", BOTH)
def test_reset_keeps_ids_increasing(request, target):
    _, r = fresh(request, target)
    r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.ping()
    before = get(r, 1)[0][0]
    assert r.execute_command("SLOWLOG", "RESET") == b"OK"
    assert r.execute_command("SLOWLOG", "LEN") == 1  # the RESET itself
    assert get(r, 1)[0][0] > before


def test_errors_and_help_match_redis(server, oracle):
    script = [("SLOWLOG", "GET", "-2"), ("SLOWLOG", "GET", "x"), ("SLOWLOG", "GET", "1", "2"),
              ("SLOWLOG", "LEN", "2"), ("SLOWLOG", "RESET", "1"), ("SLOWLOG", "NOSUCH"), ("SLOWLOG",),
              ("SLOWLOG", "HELP"), ("SLOWLOG", "HELP", "x"), ("SLOWLOG", "GET", "9223372036854775808")]
    a, b = server.client(), oracle.client()
    for r in (a, b):
        r.response_callbacks.clear()
        r.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    for cmd in script:
        assert run(a, *cmd) == run(b, *cmd), cmd
