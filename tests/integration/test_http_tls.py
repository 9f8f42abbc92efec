"""HTTPS: the HTTP gateway on the TLS connection type (http-tls-port, issue
37).  http-tls-port pairs with http-port as tls-port pairs with port: same
addresses (http-bind), tls-port's certificates and tls-auth-clients.
Requests, keep-alive, Server-Sent Events and WebSocket (wss) over TLS;
client certificates as tls-auth-clients says; a plain-text request, garbage
or a stalled handshake on the HTTPS port is closed while others are
served; http-tls-port without certificates is refused."""
import http.client
import os
import shutil
import socket
import ssl
import subprocess
import time

import pytest

import tlshelp
from conftest import Server, cairn_bin, free_port
from waithelp import wait_for


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    if not tlshelp.binary_has_tls(cairn_bin()):
        pytest.skip("built without TLS (make TLS=no)")
    return tlshelp.certs(str(tmp_path_factory.mktemp("http-tls")))


def https_server(certs, **cfg):
    hp, hs = free_port(), free_port()
    conf = tlshelp.tls_args(certs, http_port=hp, http_tls_port=hs)
    conf.update(cfg)
    s = Server(cairn_bin(), conf, name="https")
    s.http, s.https = hp, hs
    return s


@pytest.fixture
def srv(certs):
    s = https_server(certs, tls_auth_clients="no", tls_handshake_timeout=1000)
    yield s
    rep = s.stop()
    assert not rep, rep[-8000:]
    s.cleanup()


def conn(s, certs, cert=None):
    ctx = tlshelp.ssl_context(certs, cert=cert)
    return http.client.HTTPSConnection("127.0.0.1", s.https, context=ctx, timeout=10)


def get(c, path, headers=None):
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    return r.status, r.read(), r


def test_requests_over_https(srv, certs):
    c = conn(srv, certs)
    assert get(c, "/SET/k/hello%20tls")[:2] == (200, b'{"SET":[true,"OK"]}')
    # Keep-alive: the same TLS connection answers again.
    st, body, r = get(c, "/GET/k")
    assert (st, body) == (200, b'{"GET":"hello tls"}')
    assert r.getheader("Connection") == "Keep-Alive"
    assert get(c, "/GET/k.txt")[:2] == (200, b"hello tls")
    c.request("PUT", "/SET/big", body=b"x" * 300000)
    r = c.getresponse()
    assert (r.status, r.read()) == (200, b'{"SET":[true,"OK"]}')
    st, body, _ = get(c, "/STRLEN/big")
    assert body == b'{"STRLEN":300000}'
    assert get(c, "/GET/big.raw")[1] == b"$300000\r\n" + b"x" * 300000 + b"\r\n"
    c.close()
    # The same data on the plain port (one gateway, two listeners).
    p = http.client.HTTPConnection("127.0.0.1", srv.http, timeout=10)
    assert get(p, "/GET/k")[1] == b'{"GET":"hello tls"}'
    p.close()
    assert srv.client().get("k") == b"hello tls"


def test_curl_over_https(srv, certs):
    curl = shutil.which("curl")
    if not curl:
        pytest.skip("no curl")
    out = subprocess.run([curl, "-s", "--max-time", "10", "--cacert", certs.crt("ca"),
                          "--resolve", "localhost:%d:127.0.0.1" % srv.https,
                          "https://localhost:%d/INCR/n" % srv.https], capture_output=True, timeout=30)
    assert out.stdout == b'{"INCR":1}'
    # Without trusting the CA, curl refuses the certificate.
    out = subprocess.run([curl, "-s", "--max-time", "10", "https://127.0.0.1:%d/PING" % srv.https],
                         capture_output=True, timeout=30)
    assert out.returncode != 0 and out.stdout == b""


def test_sse_and_websocket_over_tls(srv, certs):
    c = conn(srv, certs)
    c.request("GET", "/SUBSCRIBE/tchan", headers={"Accept": "text/event-stream"})
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream"
    rc = srv.client()
    wait_for(lambda: rc.pubsub_numsub("tchan")[0][1] == 1, what="subscriber")
    rc.publish("tchan", "over tls")
    data = b""
    while b"over tls" not in data:
        chunk = r.fp.read1(4096) if hasattr(r.fp, "read1") else r.read(1)
        assert chunk
        data += chunk
    assert b'data: {"SUBSCRIBE":["message","tchan","over tls"]}' in data
    c.close()
    import websocket
    ws = websocket.create_connection("wss://127.0.0.1:%d/.json" % srv.https, timeout=10,
                                     sslopt={"ca_certs": certs.crt("ca"), "check_hostname": False})
    ws.send('["SET","wk","wv"]')
    assert ws.recv() == '{"SET":[true,"OK"]}'
    ws.send('["GET","wk"]')
    assert ws.recv() == '{"GET":"wv"}'
    ws.close()


def test_hostile_handshakes(srv, certs):
    # A plain HTTP request on the HTTPS port: no HTTP answer, closed.
    s = socket.create_connection(("127.0.0.1", srv.https), timeout=10)
    s.sendall(b"GET /SET/plain/1 HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    s.close()
    assert b"HTTP/1.1" not in data
    assert srv.client().exists("plain") == 0
    # Garbage, and a handshake that stops after a few bytes: closed (the
    # latter after tls-handshake-timeout), while a good client is served.
    g = socket.create_connection(("127.0.0.1", srv.https), timeout=10)
    g.sendall(os.urandom(64))
    stall = socket.create_connection(("127.0.0.1", srv.https), timeout=10)
    stall.sendall(b"\x16\x03\x01")
    c = conn(srv, certs)
    assert get(c, "/PING")[1] == b'{"PING":[true,"PONG"]}'
    c.close()
    for sock in (g, stall):
        sock.settimeout(10)
        try:
            while sock.recv(4096):
                pass
        except ConnectionResetError:
            pass
        sock.close()
    assert srv.alive()
    assert srv.client().ping()


def test_client_certificates(certs):
    s = https_server(certs)  # tls-auth-clients yes (the default)
    try:
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            c = conn(s, certs)
            get(c, "/PING")
        c = conn(s, certs, cert="client")
        assert get(c, "/PING")[1] == b'{"PING":[true,"PONG"]}'
        c.close()
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            c = conn(s, certs, cert="other")  # signed by a CA the server does not trust
            get(c, "/PING")
    finally:
        assert not s.stop()
        s.cleanup()


def test_refused_without_certificates(start_server):
    # At start-up: the server exits.
    p = subprocess.run([cairn_bin(), "--port", str(free_port()), "--http-tls-port", str(free_port()),
                        "--save", "", "--logfile", ""], capture_output=True, timeout=30, cwd="/")
    assert p.returncode != 0
    assert b"http-tls-port" in p.stdout + p.stderr
    # At run time: CONFIG SET fails, and the plain gateway keeps working.
    hp = free_port()
    s = start_server(http_port=hp)
    c = s.client()
    with pytest.raises(Exception):
        c.config_set("http-tls-port", free_port())
    assert c.config_get("http-tls-port") == {"http-tls-port": "0"}
    h = http.client.HTTPConnection("127.0.0.1", hp, timeout=10)
    assert get(h, "/PING")[1] == b'{"PING":[true,"PONG"]}'


def test_config_set_turns_https_on(certs):
    hp = free_port()
    s = Server(cairn_bin(), tlshelp.tls_args(certs, http_port=hp, tls_auth_clients="no"), name="https2")
    try:
        hs = free_port()
        s.client().config_set("http-tls-port", hs)
        s.https = hs
        c = conn(s, certs)
        assert get(c, "/PING")[1] == b'{"PING":[true,"PONG"]}'
        c.close()
        s.client().config_set("http-tls-port", 0)
        deadline = time.monotonic() + 10
        refused = False
        while time.monotonic() < deadline and not refused:
            try:
                socket.create_connection(("127.0.0.1", hs), timeout=1).close()
                time.sleep(0.05)
            except OSError:
                refused = True
        assert refused
        h = http.client.HTTPConnection("127.0.0.1", hp, timeout=10)
        assert get(h, "/PING")[1] == b'{"PING":[true,"PONG"]}'
    finally:
        assert not s.stop()
        s.cleanup()
