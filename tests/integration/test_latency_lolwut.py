"""LATENCY HISTOGRAM, LATENCY GRAPH, LOLWUT, and COMMAND LIST against
redis-server 7.0.15.

Latencies depend on the machine, so the histogram tests compare what does
not: the commands reported, their call counts, the bucket values (always
one of the levels Redis reports: 1, 2, 4, 8, 16, 33, 66 ... us), the
cumulative counts, and the reply's shape in RESP2 and RESP3.  No test
asserts how long anything took."""
import re
import time

import pytest

from compare import run
from script_resp import Conn, decode as resp_decode

# The bucket values LATENCY HISTOGRAM can report (us): the highest value of
# the histogram bucket holding 1024 ns * 2^k, k = 0..19.
LEVELS = {1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633, 135266,
          270532, 541065}

VERSION_LINE = b"Redis ver. 7.0.15\n"

# COMMAND LIST of redis-server 7.0.15 that Cairn does not have, by name:
# none since CLUSTER, READONLY, READWRITE, ASKING and MODULE answer as
# Redis does without cluster or modules.
MISSING = set()
# Cairn's commands that redis-server 7.0.15 lacks (INCRBYBOUND,
# INCRBYFLOATBOUND, ZTRIM, ZPOPDUE, BZPOPDUE, CL.THROTTLE, RL.LOG are
# Cairn's own, issue 39; the others come from newer Redis and Valkey
# versions, issue 38).
EXTRA = {"client|setinfo", "incrbybound", "incrbyfloatbound", "ztrim", "zpopdue", "bzpopdue",
         "cl.throttle", "rl.log", "delex", "delifeq", "digest", "msetex", "waitaof", "client|no-touch"}
# Hash-field expiry (issue 38): Redis 7.4 / 8.0 commands.
EXTRA |= {"hexpire", "hpexpire", "hexpireat", "hpexpireat", "httl", "hpttl", "hexpiretime", "hpexpiretime",
          "hpersist", "hgetex", "hsetex", "hgetdel"}
# Member TTLs (issue 39): KeyDB's commands.
EXTRA |= {"expiremember", "expirememberat", "pexpirememberat"}


def client(srv, protocol=2):
    r = srv.client()
    r.response_callbacks.clear()
    if protocol == 3:
        r.execute_command("HELLO", 3)
    return r


def decode(x):
    if isinstance(x, tuple) and x and x[0] == "verbatim":
        return x[2].decode()
    if isinstance(x, bytes):
        return x.decode()
    if isinstance(x, dict):
        return {decode(k): decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [decode(v) for v in x]
    return x


def as_map(x):
    """A RESP2 flat array of pairs, or a RESP3 map, as a dict."""
    if isinstance(x, dict):
        return x
    assert isinstance(x, list) and len(x) % 2 == 0, x
    return dict(zip(x[0::2], x[1::2]))


def histograms(r, *names):
    """{command: (calls, [(us, cumulative), ...])}, checking each entry."""
    out = {}
    reply = decode(resp_decode(r.call("LATENCY", "HISTOGRAM", *names)))
    for name, entry in as_map(reply).items():
        entry = as_map(entry)
        assert list(entry) == ["calls", "histogram_usec"], entry
        calls = entry["calls"]
        pairs = list(as_map(entry["histogram_usec"]).items())
        prev_us = prev_cum = 0
        for us, cum in pairs:
            assert us in LEVELS, (name, us)
            assert us > prev_us and cum > prev_cum, (name, pairs)
            prev_us, prev_cum = us, cum
        assert pairs and pairs[-1][1] <= calls, (name, pairs, calls)
        out[name] = (calls, pairs)
    return out


def conn(srv, protocol=2):
    c = Conn(srv)
    if protocol == 3:
        c.call("HELLO", 3)
    return c


def workload(r):
    for i in range(5):
        r.call("SET", "k%d" % i, "v")
    r.call("GET", "k1")
    r.call("CONFIG", "GET", "maxmemory")
    r.call("CONFIG", "GET", "hz")
    r.call("CLIENT", "ID")


@pytest.mark.parametrize("protocol", [2, 3])
def test_latency_histogram_matches_redis(server, oracle, protocol):
    result = []
    for srv in (server, oracle):
        r = conn(srv, protocol)
        r.call("CONFIG", "RESETSTAT")
        workload(r)
        h = {
            "named": histograms(r, "set", "get", "nosuch", "config", "client|id", "set"),
            "sub": histograms(r, "config|get"),
            "none": histograms(r, "nosuch", "config|nosuch", "a|b|c"),
            "all": histograms(r),
        }
        # Only the names and call counts are the same on both servers.
        result.append({k: {n: v[0] for n, v in d.items()} for k, d in h.items()})
        # Every sample below 541 ms is in the distribution.
        for calls, pairs in h["all"].values():
            assert pairs[-1][1] == calls
    assert result[0] == result[1]
    assert result[0]["named"]["set"] == 5
    assert result[0]["named"]["config|get"] == 2


def test_latency_histogram_shape_and_reset(server, oracle):
    for srv in (server, oracle):
        c = Conn(srv)
        assert c.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
        assert c.call("LATENCY", "HISTOGRAM", "get") == b"*0\r\n"
        c.call("GET", "x")
        raw = c.call("LATENCY", "HISTOGRAM", "get")
        assert re.match(rb"^\*2\r\n\$3\r\nget\r\n\*4\r\n\$5\r\ncalls\r\n:1\r\n\$14\r\nhistogram_usec\r\n"
                        rb"\*2\r\n:\d+\r\n:1\r\n$", raw), raw
        c.call("HELLO", 3)
        raw = c.call("LATENCY", "HISTOGRAM", "get")
        assert re.match(rb"^%1\r\n\$3\r\nget\r\n%2\r\n\$5\r\ncalls\r\n:1\r\n\$14\r\nhistogram_usec\r\n"
                        rb"%1\r\n:\d+\r\n:1\r\n$", raw), raw
        assert c.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
        assert c.call("LATENCY", "HISTOGRAM", "get") == b"%0\r\n"
        c.close()


def test_latency_histogram_slow_command_bucket(start_server, start_oracle):
    for start in (start_server, start_oracle):
        r = conn(start(enable_debug_command="yes"))
        r.call("DEBUG", "SLEEP", "0.003")
        calls, pairs = histograms(r, "debug")["debug"]
        assert calls == 1 and len(pairs) == 1
        assert pairs[0][0] >= 4227  # 3 ms or more: the 4 ms level or above


def graph_lines(r, event):
    text = r.execute_command("LATENCY", "GRAPH", event).decode()
    return text.split("\n")


def test_latency_graph_matches_redis(start_server, start_oracle):
    rs = [client(start(enable_debug_command="yes")) for start in (start_server, start_oracle)]
    for r in rs:
        assert run(r, "LATENCY", "GRAPH", "command") == ("error", "No samples available for event 'command'")
        assert run(r, "LATENCY", "GRAPH") == (
            "error", "wrong number of arguments for 'latency|graph' command")
        r.execute_command("CONFIG", "SET", "latency-monitor-threshold", 1)
    # One sample: a flat graph, whatever its latency.
    for r in rs:
        r.execute_command("DEBUG", "SLEEP", "0.005")
    graphs = [graph_lines(r, "command") for r in rs]
    for g in graphs:
        assert re.match(r"^command - high (\d+) ms, low \1 ms \(all time high \1 ms\)$", g[0]), g[0]
        assert g[1] == "-" * 80
    # The body: bars, a blank line, the age label ("0s" or "1s") downwards.
    norm = [[re.sub(r"^\d$", "N", ln) for ln in g[2:]] for g in graphs]
    assert norm[0] == norm[1]
    assert norm[0] == [" ", " ", " ", "_", " ", "N", "s", ""]


def model_bars(samples):
    """Redis's four bar rows for latencies (oldest first): each scaled
    between the low and the high into 12 steps, 3 glyphs per row."""
    lo, hi = min(samples), max(samples)
    span = (hi - lo) or 1
    rows = []
    for row in range(4):
        line = ""
        for v in samples:
            step = min(max(int((v - lo) * 12 / span), 0), 11)
            g = step - (3 - row) * 3
            line += "_o#"[g] if 0 <= g < 3 else "|" if g >= 3 else " "
        rows.append(line)
    return rows


def test_latency_graph_several_samples(start_server, start_oracle):
    """Samples of different heights in three seconds: on both servers the
    bars are what Redis's scaling gives for the samples LATENCY HISTORY
    reports, and the labels are ages."""
    rs = [client(start(enable_debug_command="yes")) for start in (start_server, start_oracle)]
    for r in rs:
        r.execute_command("CONFIG", "SET", "latency-monitor-threshold", 1)
    for secs in ("0.01", "0.2", "0.1"):
        second = int(time.time())
        for r in rs:
            r.execute_command("DEBUG", "SLEEP", secs)
        while int(time.time()) == second:
            time.sleep(0.02)
    for r in rs:
        samples = [v for _, v in r.execute_command("LATENCY", "HISTORY", "command")]
        g = graph_lines(r, "command")
        assert len(samples) == 3
        assert g[0] == "command - high %d ms, low %d ms (all time high %d ms)" % (
            max(samples), min(samples), max(samples))
        assert g[2:6] == model_bars(samples), (g, samples)
        assert g[6] == "   "
        labels = ["".join(col) for col in zip(*[ln.ljust(3) for ln in g[7:-1]])]
        assert all(re.match(r"^\d+s *$", lab) for lab in labels), g


def test_lolwut(server, oracle):
    a, b = Conn(server), Conn(oracle)
    for args in [(), ("VERSION", 1), ("VERSION", 7), ("VERSION", -3), ("foo",), ("VERSION",),
                 ("VERSION", "x"), ("VERSION", "5", "x"), ("VERSION", "6", "10", "y"), ("VERSION", "1.5")]:
        assert a.call("LOLWUT", *args) == b.call("LOLWUT", *args), args
    # Cairn's own art: deterministic, bounded by its arguments, ending with
    # Redis's version line; verbatim text in RESP3.
    for args in [("VERSION", 5), ("VERSION", 5, 20, 3, 7), ("VERSION", 5, 0, 0, 0), ("VERSION", 5, 5000, 1000),
                 ("VERSION", 6), ("VERSION", 6, 30, 8), ("VERSION", 6, 1, 1), ("VERSION", 6, 99999, 3)]:
        raw = a.call("LOLWUT", *args)
        assert raw == a.call("LOLWUT", *args)
        body = raw[raw.index(b"\r\n") + 2:-2]
        assert body.endswith(b". " + VERSION_LINE), body[-80:]
        width = max(len(ln) for ln in body.split(b"\n")[:-3])
        assert width <= min(1000, max(1, int(args[2])) if len(args) > 2 else 80), args
    a.call("HELLO", 3)
    raw = a.call("LOLWUT", "VERSION", 6)
    assert raw.startswith(b"=") and raw[raw.index(b"\r\n") + 2:].startswith(b"txt:")
    assert a.call("LOLWUT") == b"=22\r\ntxt:Redis ver. 7.0.15\n\r\n"


def test_command_list_matches_redis_but_named_exceptions(server, oracle):
    ours = {x.decode() for x in client(server).execute_command("COMMAND", "LIST")}
    theirs = {x.decode() for x in client(oracle).execute_command("COMMAND", "LIST")}
    assert sorted(theirs - ours) == sorted(MISSING)
    assert sorted(ours - theirs) == sorted(EXTRA)
