"""10,000 HTTP connections churned through the gateway (issue 37): each one
gets an HTTP error, an answer or a close (malformed heads, half requests,
garbage, oversize bodies, WebSocket upgrades dropped mid-frame, pub/sub
streams cut, plain requests); meanwhile a keep-alive HTTP client and a RESP
client keep being served; afterwards the server is up, its client count is
back and INFO used_memory is back at its baseline (within a slack far below
one byte per churned connection)."""
import base64
import os
import socket
import threading

import pytest

from conftest import Server, cairn_bin, free_port
from waithelp import wait_for
from webdishelp import HttpConn, build

N = int(os.environ.get("HTTP_CHURN", "10000"))
SLACK = 8192  # bytes: 10,000 connections leaking even one byte each would exceed it


def ws_upgrade(path="/.json"):
    key = base64.b64encode(os.urandom(16)).decode()
    return build("GET", path, headers=[("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                       ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")])


KINDS = [
    # (bytes sent, read the reply until the server closes?)
    (build("GET", "/INCR/churn", headers=[("Connection", "close")]), True),      # answered, closed
    (b"GET /INCR/churn HTTP/1.1\r\nHost: x", False),                             # half a head, then gone
    (b"\x00\xff garbage \r\n\r\n", True),                                        # 400
    (b"", False),                                                                # connect, close
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", True),                        # 414
    (b"PUT /SET/k HTTP/1.1\r\nContent-Length: 99999999\r\n\r\nxx", True),        # 413
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", True),             # 501
    (ws_upgrade() + b"\x81\xfe\x00\x10\x01\x02", False),                         # WebSocket, half a frame
    (ws_upgrade() + b"\x81\x05hello", True),                                     # unmasked frame: close 1002
    (build("GET", "/SUBSCRIBE/churnchan"), False),                               # a stream, cut
    (build("GET", "/SET/churnkey/" + "v" * 2000), False),                        # answered, never read
    (build("GET", "/BLPOP/nolist/0"), False),                                    # blocked, then gone
]


@pytest.fixture
def srv():
    hp = free_port()
    s = Server(cairn_bin(), {"http_port": hp, "http_max_request_size": "64kb", "maxclients": 2000},
               name="churn")
    s.http = hp
    yield s
    rep = s.stop()
    assert not rep, rep[-8000:]
    s.cleanup()


def churn(port, count):
    served = 0
    for i in range(count):
        data, read = KINDS[i % len(KINDS)]
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            if data:
                s.sendall(data)
            if read:
                got = b""
                while True:
                    try:
                        d = s.recv(65536)
                    except ConnectionResetError:
                        break
                    if not d:
                        break
                    got += d
                assert got, (i, data[:40])
                assert got.startswith(b"HTTP/1.1 ") or got.startswith(b"HTTP/1.1 101"), got[:40]
                if got.startswith(b"HTTP/1.1 200"):
                    served += 1
        finally:
            s.close()
    return served


def test_churn_10000_connections(srv):
    r = srv.client()
    # Warm up: two rounds of every kind, and the other clients' commands, so
    # that lazily made structures (command statistics, latency histograms,
    # the pub/sub channel) exist before the baseline.
    churn(srv.http, len(KINDS) * 2)
    with HttpConn(srv.http) as w:
        w.send(build("GET", "/INCR/other"))
        assert w.read_response().status == 200
    r.ping()
    r.get("churn")  # each command's first call makes its latency histogram
    r.execute_command("PUBSUB", "NUMSUB", "churnchan")
    wait_for(lambda: r.info("clients")["connected_clients"] == 1, what="warm-up connections gone")
    base_mem = r.info("memory")["used_memory"]

    keep = HttpConn(srv.http)
    rc = srv.client()
    errors = []
    stop = threading.Event()
    counts = {"http": 0, "resp": 0}

    def others():
        """A keep-alive HTTP client and a RESP client, served all along."""
        try:
            while not stop.is_set():
                keep.send(build("GET", "/INCR/other"))
                assert keep.read_response().status == 200
                counts["http"] += 1
                assert rc.ping()
                counts["resp"] += 1
        except Exception as e:  # reported by the main thread
            errors.append(e)

    t = threading.Thread(target=others, daemon=True)
    t.start()
    served = churn(srv.http, N)
    stop.set()
    t.join(30)
    assert not t.is_alive()
    assert not errors, errors
    assert counts["http"] > 0 and counts["resp"] > 0
    assert srv.alive()
    assert int(r.get("churn")) >= served > 0
    assert int(r.get("other")) == counts["http"] + 1
    keep.close()
    rc.connection_pool.disconnect()
    wait_for(lambda: r.info("clients")["connected_clients"] == 1, timeout=30, what="churned connections closed")
    assert r.execute_command("PUBSUB", "NUMSUB", "churnchan")[1] == 0
    assert r.info("clients")["blocked_clients"] == 0
    # Memory back at its baseline.
    wait_for(lambda: r.info("memory")["used_memory"] <= base_mem + SLACK, timeout=30,
             what="used_memory back at its baseline %d" % base_mem)
