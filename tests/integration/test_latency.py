"""LATENCY LATEST / HISTORY / RESET / DOCTOR / HELP with
latency-monitor-threshold.  Spikes are made with DEBUG SLEEP; only lower
bounds on durations are asserted.  Each test runs on cairn and on
redis-server."""
import time

import pytest

from compare import BOTH, debug_target, run

DISABLED = ("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
            "You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. "
            "If we weren't in a deep space mission I'd suggest to take a look at "
            "https://redis.io/topics/latency-monitor.\n")
NO_SPIKES = ("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
             "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think "
             "things over.\n")


def target_client(request, target):
    r = debug_target(request, target).client()
    r.response_callbacks.clear()
    return r


def events(r):
    return sorted(e[0] for e in r.execute_command("LATENCY", "LATEST"))


@pytest.mark.parametrize("target", BOTH)
def test_doctor_texts_without_spikes(request, target):
    r = target_client(request, target)
    assert r.execute_command("LATENCY", "DOCTOR").decode() == DISABLED
    r.execute_command("CONFIG", "SET", "latency-monitor-threshold", "1000")
    assert r.execute_command("LATENCY", "DOCTOR").decode() == NO_SPIKES


@pytest.mark.parametrize("target", BOTH)
def test_disabled_monitor_records_nothing(request, target):
    r = target_client(request, target)
    r.execute_command("DEBUG", "SLEEP", "0.05")
    assert r.execute_command("LATENCY", "LATEST") == []
    assert r.execute_command("LATENCY", "HISTORY", "command") == []


@pytest.mark.parametrize("target", BOTH)
def test_slow_command_is_recorded(request, target):
    r = target_client(request, target)
    r.execute_command("CONFIG", "SET", "latency-monitor-threshold", "20")
    r.execute_command("LATENCY", "RESET")
    before = int(time.time())
    r.execute_command("DEBUG", "SLEEP", "0.05")
    r.execute_command("DEBUG", "SLEEP", "0.1")
    latest = [e for e in r.execute_command("LATENCY", "LATEST") if e[0] == b"command"]
    assert len(latest) == 1
    name, when, last, worst = latest[0]
    assert before <= when <= time.time() + 1
    assert last >= 50 and worst >= 100 and worst >= last
    hist = r.execute_command("LATENCY", "HISTORY", "command")
    assert 1 <= len(hist) <= 2  # one sample per second: the worst of it
    assert all(len(s) == 2 and s[1] >= 50 for s in hist)
    assert max(s[1] for s in hist) == worst
    doctor = r.execute_command("LATENCY", "DOCTOR").decode()
    assert doctor.startswith("Dave, I have observed latency spikes in this Redis instance.")
    assert "1. command: " in doctor


@pytest.mark.parametrize("target", BOTH)
def test_fast_commands_below_threshold_are_not_recorded(request, target):
    r = target_client(request, target)
    r.execute_command("CONFIG", "SET", "latency-monitor-threshold", "1000")
    for i in range(100):
        r.execute_command("SET", "k%d" % i, "v")
    assert events(r) == []


@pytest.mark.parametrize("target", BOTH)
def test_reset_counts_and_removes_events(request, target):
    r = target_client(request, target)
    r.execute_command("CONFIG", "SET", "latency-monitor-threshold", "10")
    r.execute_command("DEBUG", "SLEEP", "0.02")
    assert b"command" in events(r)
    assert r.execute_command("LATENCY", "RESET", "nosuch") == 0
    assert r.execute_command("LATENCY", "RESET", "command", "nosuch") == 1
    assert b"command" not in events(r)
    r.execute_command("DEBUG", "SLEEP", "0.02")
    n = len(events(r))
    assert n >= 1
    assert r.execute_command("LATENCY", "RESET") == n
    assert r.execute_command("LATENCY", "LATEST") == []
    assert r.execute_command("LATENCY", "RESET") == 0


def test_replies_and_errors_match_redis(server, oracle):
    script = [("LATENCY", "LATEST"), ("LATENCY", "HISTORY", "command"), ("LATENCY", "HISTORY"),
              ("LATENCY", "RESET"), ("LATENCY", "RESET", "a", "b"), ("LATENCY", "HELP"),
              ("LATENCY", "HELP", "x"), ("LATENCY", "NOSUCH"), ("LATENCY",), ("LATENCY", "LATEST", "x"),
              ("LATENCY", "DOCTOR", "x")]
    a, b = server.client(), oracle.client()
    a.response_callbacks.clear()
    b.response_callbacks.clear()
    for cmd in script:
        assert run(a, *cmd) == run(b, *cmd), cmd
