"""INFO, TIME and LASTSAVE, checked against redis-server 7.0.15.

INFO values differ between two servers; the tests compare section names,
field names and their order, the wire format, and counters whose values a
test fully controls.  Run with CAIRN_BIN=redis-server to re-check."""
import re
import time

import pytest
import redis

from resphelp import encode as cmd

# Fields whose presence depends on what ran (per-command or per-error lines)
# or that only Cairn prints.
VARIABLE = re.compile(r"^(cmdstat_|latency_percentiles_usec_|errorstat_|db\d+$|cairn_version$|cairn_lua_engine$"
                      r"|cairn_packed_keys$|cairn_packs$|cairn_unpacks$|cairn_pack_passes$)")


def info_raw(server, *sections):
    """The INFO text exactly as sent (a RESP2 bulk string)."""
    with server.connect() as c:
        c.send(cmd("INFO", *sections))
        head = c.recv_until(b"\r\n")
        assert head.startswith(b"$"), head
        n = int(head[1:-2])
        body = c.recv_exact(n + 2)
        assert body.endswith(b"\r\n")
        return body[:-2]


def layout(text):
    """[(section title, [field names...]), ...] in order."""
    out = []
    for line in text.decode().split("\r\n"):
        if line.startswith("# "):
            out.append((line[2:], []))
        elif line:
            name = line.split(":", 1)[0]
            if not VARIABLE.match(name):
                out[-1][1].append(name)
    return out


def fields(text):
    d = {}
    for line in text.decode().split("\r\n"):
        if line and not line.startswith("#"):
            k, v = line.split(":", 1)
            d[k] = v
    return d


def is_cairn(server):
    return b"cairn_version:" in info_raw(server, "server")


@pytest.mark.parametrize("args", [(), ("default",), ("all",), ("everything",), ("server", "clients"),
                                  ("CPU", "keyspace", "Memory"), ("commandstats",), ("latencystats",),
                                  ("errorstats",), ("modules",), ("cluster",), ("nosuchsection",),
                                  ("replication", "default")])
def test_info_sections_and_field_order_match_redis(server, oracle, args):
    assert layout(info_raw(server, *args)) == layout(info_raw(oracle, *args))


def test_info_wire_format_crlf_and_blank_line_between_sections(server):
    text = info_raw(server, "server", "clients")
    assert text.startswith(b"# Server\r\n")
    assert b"\r\n\r\n# Clients\r\n" in text
    assert text.endswith(b"\r\n") and not text.endswith(b"\r\n\r\n")
    assert b"\n" not in text.replace(b"\r\n", b"")


def test_info_unknown_section_is_empty_string(server, oracle):
    assert info_raw(server, "nosuchsection") == info_raw(oracle, "nosuchsection") == b""


def test_info_server_fields(server):
    f = fields(info_raw(server, "server"))
    assert f["redis_version"] == "7.0.15"
    assert f["redis_mode"] == "standalone"
    assert f["multiplexing_api"] == "epoll"
    assert f["tcp_port"] == str(server.port)
    assert f["process_id"] == str(server.pid)
    assert re.fullmatch(r"[0-9a-f]{40}", f["run_id"])
    assert f["io_threads_active"] == "0"
    assert int(f["hz"]) > 0 and f["configured_hz"] == "10"
    assert abs(int(f["server_time_usec"]) / 1e6 - time.time()) < 60


def test_info_cairn_version_follows_redis_version(server):
    if not is_cairn(server):
        pytest.skip("Cairn-only field")
    lines = info_raw(server, "server").split(b"\r\n")
    assert lines[1].startswith(b"redis_version:7.0.15")
    assert re.fullmatch(rb"cairn_version:\d+\.\d+\.\d+", lines[2])


def test_info_replication_is_a_master_without_replicas(server):
    f = fields(info_raw(server, "replication"))
    assert f["role"] == "master"
    assert f["connected_slaves"] == "0"
    assert f["master_failover_state"] == "no-failover"
    assert re.fullmatch(r"[0-9a-f]{40}", f["master_replid"])
    assert f["master_replid2"] == "0" * 40
    assert f["second_repl_offset"] == "-1"


def test_info_persistence_reports_never_saved(server):
    f = fields(info_raw(server, "persistence"))
    assert f["loading"] == "0"
    assert f["aof_enabled"] == "0"
    assert f["rdb_bgsave_in_progress"] == "0"
    assert f["rdb_last_bgsave_status"] == "ok"
    assert abs(int(f["rdb_last_save_time"]) - time.time()) < 120


def test_info_memory_fields(server):
    f = fields(info_raw(server, "memory"))
    assert int(f["used_memory"]) > 0
    assert int(f["used_memory_rss"]) > 0
    assert int(f["used_memory_peak"]) >= int(f["used_memory"])
    assert re.fullmatch(r"\d+(\.\d\d[KMGTPE])?B?", f["used_memory_human"])
    assert f["maxmemory"] == "0" and f["maxmemory_human"] == "0B"
    assert f["maxmemory_policy"] == "noeviction"
    assert f["mem_allocator"]


def test_info_cpu_fields_are_seconds_with_microseconds(server):
    for k, v in fields(info_raw(server, "cpu")).items():
        assert re.fullmatch(r"\d+\.\d{6}", v), (k, v)


def test_info_keyspace_counts_keys_and_expires(server, oracle):
    for s in (server, oracle):
        r = s.client()
        r.set("a", "1")
        r.set("b", "2", ex=1000)
        r3 = s.client(db=3)
        r3.set("c", "3")
    for s in (server, oracle):
        text = info_raw(s, "keyspace").decode()
        assert re.fullmatch(r"# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=\d+\r\ndb3:keys=1,expires=0,avg_ttl=0\r\n",
                            text), text


def test_info_stats_counters_move_as_in_redis(server, oracle):
    deltas = []
    for s in (server, oracle):
        r = s.client()
        r.set("k", "v")
        before = fields(info_raw(s, "stats"))
        r.get("k")
        r.get("missing")
        r.get("missing2")
        after = fields(info_raw(s, "stats"))
        deltas.append({k: int(after[k]) - int(before[k])
                       for k in ("keyspace_hits", "keyspace_misses", "total_commands_processed",
                                 "total_error_replies")})
    assert deltas[0] == deltas[1]


def test_info_commandstats_counts_calls_rejects_and_failures(server, oracle):
    out = []
    for s in (server, oracle):
        r = s.client()
        r.execute_command("CONFIG", "RESETSTAT")
        r.set("s", "x")
        r.set("s", "y")
        for bad in (("GET",), ("INCR", "s")):
            try:
                r.execute_command(*bad)
            except Exception:
                pass
        text = info_raw(s, "commandstats").decode()
        lines = {l.split(":")[0]: l for l in text.split("\r\n") if l.startswith("cmdstat_")}
        norm = {k: re.sub(r"usec=\d+,usec_per_call=[\d.]+", "usec=U", v) for k, v in lines.items()
                if k in ("cmdstat_set", "cmdstat_get", "cmdstat_incr")}
        out.append(norm)
    assert out[0] == out[1]
    assert out[0]["cmdstat_get"] == "cmdstat_get:calls=0,usec=U,rejected_calls=1,failed_calls=0"


def test_info_commandstats_names_subcommands_with_a_bar(server):
    r = server.client()
    r.execute_command("CONFIG", "GET", "maxmemory")
    text = info_raw(server, "commandstats").decode().replace("\r\n", "\n")
    assert re.search(r"^cmdstat_config\|get:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0$",
                     text, re.M), text


def test_info_errorstats_equal_redis(server, oracle):
    out = []
    for s in (server, oracle):
        r = s.client()
        r.execute_command("CONFIG", "RESETSTAT")
        r.set("str", "abc")
        for bad in (("INCR", "str"), ("INCR", "str"), ("NOSUCHCOMMAND",), ("GET",)):
            try:
                r.execute_command(*bad)
            except Exception:
                pass
        out.append((info_raw(s, "errorstats"), fields(info_raw(s, "stats"))["total_error_replies"]))
    assert out[0] == out[1]
    assert out[0][0] == b"# Errorstats\r\nerrorstat_ERR:count=4\r\n"


def test_info_latencystats_lines_for_commands_run(server):
    r = server.client()
    r.set("a", "b")
    text = info_raw(server, "latencystats").decode().replace("\r\n", "\n")
    assert re.search(r"^latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$", text, re.M), text


def test_info_connected_clients_counts_connections(server, oracle):
    for s in (server, oracle):
        extra = [s.client() for _ in range(3)]
        for c in extra:
            c.ping()
        assert fields(info_raw(s, "clients"))["connected_clients"] == "4"


def test_time_returns_seconds_and_microseconds(server):
    sec, usec = server.client().execute_command("TIME")
    assert abs(int(sec) - time.time()) < 60
    assert 0 <= int(usec) < 1000000


def test_lastsave_is_start_time_before_any_save(server):
    r = server.client()
    f = fields(info_raw(server, "persistence"))
    assert int(r.lastsave().timestamp()) == int(f["rdb_last_save_time"])


def test_time_and_lastsave_arity_errors_equal_redis(server, oracle):
    for args in (("TIME", "x"), ("LASTSAVE", "x")):
        errs = []
        for s in (server, oracle):
            try:
                s.client().execute_command(*args)
                errs.append(None)
            except redis.ResponseError as e:
                errs.append(str(e))
        assert errs[0] == errs[1] and errs[0]
