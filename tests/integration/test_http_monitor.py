"""MONITOR through the HTTP gateway (issue 37: "MONITOR behaves as on a
RESP connection"): on HTTP its +OK starts a chunked stream (or Server-Sent
Events) whose chunks are the monitor lines, {"MONITOR":"<line>"}; on a
WebSocket each line is one message (JSON, or "+<line>" RESP on /.raw).
Lines are the same as a RESP monitor's (compared with one)."""
import json
import socket

import pytest

from conftest import free_port
from waithelp import wait_for
from webdishelp import HttpConn, build


@pytest.fixture
def gw(start_server):
    hp = free_port()
    s = start_server(http_port=hp)
    s.http = hp
    return s


def resp_monitor_line(s, command):
    """The line a RESP monitor gets for command (run by another client)."""
    m = s.connect()
    m.send(b"MONITOR\r\n")
    m.expect(b"+OK\r\n")
    s.client().execute_command(*command)
    got = m.recv_until(b"\r\n")
    m.close()
    return got[1:-2].decode() if got.endswith(b"\r\n") else got[1:].decode()


def strip_stamp(line):
    """The line without its timestamp and client address ("<ts> [0 addr] ...")."""
    return line.split("] ", 1)[1]


def test_monitor_stream_over_http(gw):
    with HttpConn(gw.http) as h:
        h.send(build("GET", "/MONITOR"))
        head = h.read_head()
        assert head.status == 200 and head.header("Transfer-Encoding") == "chunked"
        assert head.header("Content-Type") == "application/json"
        assert h.read_chunk() == b'{"MONITOR":[true,"OK"]}'
        c = gw.client()
        c.set("mk", 'v "quoted"')
        line = json.loads(h.read_chunk())["MONITOR"]
        assert strip_stamp(line) == '"SET" "mk" "v \\"quoted\\""'
        c.get("mk")
        assert strip_stamp(json.loads(h.read_chunk())["MONITOR"]) == '"GET" "mk"'
    assert strip_stamp(resp_monitor_line(gw, ["SET", "mk", 'v "quoted"'])) == '"SET" "mk" "v \\"quoted\\""'


def test_monitor_raw_and_sse(gw):
    with HttpConn(gw.http) as h:
        h.send(build("GET", "/MONITOR.raw"))
        assert h.read_head().status == 200
        assert h.read_chunk() == b"+OK\r\n"
        gw.client().execute_command("ECHO", "x")
        chunk = h.read_chunk()
        assert chunk.startswith(b"+") and chunk.endswith(b'] "ECHO" "x"\r\n'), chunk
    with HttpConn(gw.http) as h:
        h.send(build("GET", "/MONITOR", headers=[("Accept", "text/event-stream")]))
        head = h.read_head()
        assert head.header("Content-Type") == "text/event-stream"
        assert h.read_chunk() == b'data: {"MONITOR":[true,"OK"]}\n\n'
        gw.client().execute_command("PING")
        chunk = h.read_chunk()
        assert chunk.startswith(b'data: {"MONITOR":"') and chunk.endswith(b'] \\"PING\\""}\n\n'), chunk
    # A closed stream leaves no monitor behind.
    r = gw.client()
    wait_for(lambda: all("monitor" not in (cl.get("flags", "") + cl.get("cmd", ""))
                         for cl in r.client_list()), what="monitors gone")


def test_monitor_over_websocket(gw):
    import websocket
    ws = websocket.create_connection("ws://127.0.0.1:%d/.json" % gw.http, timeout=10)
    raw = websocket.create_connection("ws://127.0.0.1:%d/.raw" % gw.http, timeout=10)
    try:
        ws.send('["MONITOR"]')
        assert ws.recv() == '{"MONITOR":[true,"OK"]}'
        raw.send_binary(b"*1\r\n$7\r\nMONITOR\r\n")
        assert raw.recv() == b"+OK\r\n"
        gw.client().incr("wsmon")
        line = json.loads(ws.recv())["MONITOR"]
        assert strip_stamp(line) == '"INCRBY" "wsmon" "1"'
        rl = raw.recv()
        assert rl.startswith(b"+") and rl.endswith(b'] "INCRBY" "wsmon" "1"\r\n'), rl
    finally:
        ws.close()
        raw.close()
