"""TLS (issue 35): a TLS port beside the plain one, Redis 7.0's tls-*
directives, client certificates, hostile input on the TLS port,
certificate reloads, replication and MIGRATE over TLS.

Differential where it can be: Debian's redis-server 7.0.15 is built with
TLS, so handshake outcomes, CONFIG GET/SET of the directives and their
errors are compared with it.  Certificates come from tlshelp (openssl at
test time)."""
import os
import random
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest
import redis

import tlshelp
from conftest import free_port
from waithelp import poll, wait_for

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from conftest import cairn_bin
    if not tlshelp.binary_has_tls(cairn_bin()):
        pytest.skip("built with TLS=no")
    return tlshelp.certs(str(tmp_path_factory.mktemp("tls")))


def tls_server(start, c, **more):
    cfg = tlshelp.tls_args(c, **more)
    cfg.setdefault("tls_port", free_port())
    s = start(**cfg)
    s.tls_port = int(cfg["tls_port"])
    return s


def tls_client(s, c, cert="client", **kw):
    kw.setdefault("socket_timeout", 10)
    r = redis.Redis(host="127.0.0.1", port=s.tls_port, ssl=True, ssl_certfile=c.crt(cert) if cert else None,
                    ssl_keyfile=c.key(cert) if cert else None, ssl_ca_certs=c.crt("ca"),
                    ssl_check_hostname=False, **kw)
    s._clients.append(r)
    return r


def cli(s, c, *args, cert="client"):
    cmd = ["redis-cli", "--tls", "--cacert", c.crt("ca"), "-p", str(s.tls_port)]
    if cert:
        cmd += ["--cert", c.crt(cert), "--key", c.key(cert)]
    return subprocess.run(cmd + list(args), capture_output=True, timeout=30).stdout


# --- replies over TLS ---------------------------------------------------------


def test_plain_and_tls_ports_and_unix(start_server, certs):
    s = tls_server(start_server, certs)
    r = tls_client(s, certs)
    assert r.ping()
    r.set("k", "v")
    assert s.client().get("k") == b"v"
    assert s.unix_client().get("k") == b"v"
    assert r.get("k") == b"v"
    # CLIENT LIST of a TLS client: the same fields as a TCP one (7.0 has no tls field).
    line = [l for l in r.execute_command("CLIENT", "LIST").decode().splitlines() if "cmd=client|list" in l][0]
    assert "laddr=127.0.0.1:%d" % s.tls_port in line
    assert "tls" not in line


def test_tls_only_port_0(start_server, certs):
    s = tls_server(start_server, certs, unixsocket="", args=["--port", "0"])
    assert tls_client(s, certs).ping()
    assert tls_client(s, certs).config_get("port") == {"port": "0"}
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=2).close()


def test_redis_cli_tls(start_server, certs):
    s = tls_server(start_server, certs)
    assert cli(s, certs, "SET", "a", "1") == b"OK\n"
    assert cli(s, certs, "GET", "a") == b"1\n"
    assert cli(s, certs, "INCR", "a") == b"2\n"
    assert cli(s, certs, "--sni", "localhost", "GET", "a") == b"2\n"
    # Without a client certificate (tls-auth-clients yes) nothing is answered.
    assert cli(s, certs, "PING", cert=None) == b""


def test_large_replies_and_pipelines(start_server, certs):
    s = tls_server(start_server, certs)
    r = tls_client(s, certs)
    big = os.urandom(5 * 1024 * 1024)
    r.set("big", big)
    assert r.get("big") == big
    vals = {("k%d" % i).encode(): os.urandom(random.randint(1, 40000)) for i in range(200)}
    r.mset(vals)
    assert r.mget(list(vals)) == list(vals.values())
    p = r.pipeline(transaction=False)
    for i in range(5000):
        p.incr("ctr")
    assert p.execute()[-1] == 5000
    # A reader slower than the writer: partial writes over TLS.
    raw = socket.create_connection(("127.0.0.1", s.tls_port))
    t = tlshelp.ssl_context(certs).wrap_socket(raw, server_hostname="localhost")
    t.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 4)
    time.sleep(0.5)
    want = (b"$%d\r\n" % len(big) + big + b"\r\n") * 4
    got = bytearray()               # bytes += would copy 20 MB per record
    t.settimeout(20)
    while len(got) < len(want):
        chunk = t.recv(65536)
        assert chunk
        got += chunk
    assert got == want
    t.close()


def test_multi_script_over_tls(start_server, certs):
    s = tls_server(start_server, certs)
    r = tls_client(s, certs)
    p = r.pipeline(transaction=True)
    p.set("x", 1).incr("x").get("x")
    assert p.execute() == [True, 2, b"2"]
    assert r.eval("return redis.call('incr', KEYS[1])", 1, "x") == 3


def test_pubsub_over_tls(start_server, certs):
    s = tls_server(start_server, certs)
    sub = tls_client(s, certs).pubsub()
    sub.subscribe("ch")
    wait_for(lambda: sub.get_message(timeout=0.1), what="subscribe confirmation")
    payload = b"x" * 100000
    for i in range(20):
        s.client().publish("ch", payload + b"%d" % i)
    got = []
    wait_for(lambda: (got.append(sub.get_message(timeout=0.1)) or len([g for g in got if g]) == 20),
             what="20 messages")
    assert [g["data"] for g in got if g] == [payload + b"%d" % i for i in range(20)]
    sub.close()


def test_blocking_over_tls(start_server, certs):
    s = tls_server(start_server, certs)
    r = tls_client(s, certs)
    res = []
    th = threading.Thread(target=lambda: res.append(r.blpop("q", timeout=10)))
    th.start()
    wait_for(lambda: s.client().info("clients")["blocked_clients"] == 1, what="blocked client")
    s.client().rpush("q", "item")
    th.join(15)
    assert res == [(b"q", b"item")]


# --- handshake outcomes, differential -------------------------------------------


CASES = [
    # (name, server directives, client context arguments)
    ("right-ca", {}, {}),
    ("no-client-cert", {}, {"cert": None}),
    ("no-client-cert-optional", {"tls_auth_clients": "optional"}, {"cert": None}),
    ("no-client-cert-no", {"tls_auth_clients": "no"}, {"cert": None}),
    ("other-ca-client", {}, {"cert": "other"}),
    ("other-ca-client-optional", {"tls_auth_clients": "optional"}, {"cert": "other"}),
    ("expired-client", {}, {"cert": "expired"}),
    ("client-trusts-other-ca", {}, {"ca": "other_ca"}),
    ("server-1.2-client-1.3", {"tls_protocols": "TLSv1.2"}, {"minv": ssl.TLSVersion.TLSv1_3}),
    ("server-1.3-client-1.2", {"tls_protocols": "TLSv1.3"}, {"maxv": ssl.TLSVersion.TLSv1_2}),
    ("server-1.2-only", {"tls_protocols": "TLSv1.2"}, {}),
    ("server-1.3-only", {"tls_protocols": "TLSv1.3"}, {}),
    # Debian's OpenSSL policy (security level 2) refuses TLS 1.0/1.1 on both.
    ("server-1.0-1.1-only", {"tls_protocols": "TLSv1 TLSv1.1"}, {"minv": ssl.TLSVersion.TLSv1}),
    ("cipher-no-overlap", {"tls_protocols": "TLSv1.2", "tls_ciphers": "ECDHE-RSA-AES128-GCM-SHA256"},
     {"ciphers": "ECDHE-RSA-AES256-GCM-SHA384", "maxv": ssl.TLSVersion.TLSv1_2}),
    ("cipher-overlap", {"tls_protocols": "TLSv1.2", "tls_ciphers": "ECDHE-RSA-AES256-GCM-SHA384"},
     {"ciphers": "ECDHE-RSA-AES256-GCM-SHA384", "maxv": ssl.TLSVersion.TLSv1_2}),
    ("ciphersuite-1.3", {"tls_ciphersuites": "TLS_CHACHA20_POLY1305_SHA256"}, {}),
    ("encrypted-key", {"tls_key_file": "ENC", "tls_key_file_pass": tlshelp.ENC_PASS}, {}),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ssl.TLSVersion.TLSv1
@pytest.mark.parametrize("name,server_cfg,client", CASES, ids=[c[0] for c in CASES])
def test_handshake_outcomes_match_redis(start_server, start_oracle, certs, name, server_cfg, client):
    cfg = dict(server_cfg)
    if cfg.get("tls_key_file") == "ENC":
        cfg["tls_key_file"] = certs.key("enc")
    outcomes = []
    for start in (start_server, start_oracle):
        s = tls_server(start, certs, **cfg)
        outcomes.append(tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs, **client)))
        # The server is still fine for a good client.
        assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) == "PONG" or name.startswith(
            ("server-1.2-client", "server-1.3-client", "server-1.0", "cipher", "client-trusts"))
    assert outcomes[0] == outcomes[1], outcomes
    if name in ("right-ca", "no-client-cert-optional", "no-client-cert-no", "server-1.2-only",
                "server-1.3-only", "cipher-overlap", "ciphersuite-1.3", "encrypted-key"):
        assert outcomes[0] == "PONG"
    else:
        assert outcomes[0] != "PONG"


# --- directives -------------------------------------------------------------------


TLS_NAMES = ["tls-port", "tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
             "tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file",
             "tls-ca-cert-dir", "tls-auth-clients", "tls-replication", "tls-cluster", "tls-protocols",
             "tls-ciphers", "tls-ciphersuites", "tls-prefer-server-ciphers", "tls-session-caching",
             "tls-session-cache-size", "tls-session-cache-timeout"]


def _cfg(r):
    d = r.config_get("tls-*")
    return {k: v for k, v in d.items()}


def test_config_get_defaults_match_redis(start_server, start_oracle):
    a, b = _cfg(start_server().client()), _cfg(start_oracle().client())
    assert a == b
    assert sorted(a) == sorted(n.encode() if isinstance(next(iter(a)), bytes) else n for n in TLS_NAMES)


SETS = [
    ("tls-cert-file", "/nonexistent/cert.pem"),
    ("tls-key-file", "/nonexistent/key.pem"),
    ("tls-ca-cert-file", "/nonexistent/ca.pem"),
    ("tls-protocols", "TLSv9"),
    ("tls-protocols", "TLSv1.2 TLSv1.3"),
    ("tls-ciphers", "NOTHING-MATCHES"),
    ("tls-ciphersuites", "NOTHING_MATCHES"),
    ("tls-auth-clients", "maybe"),
    ("tls-auth-clients", "optional"),
    ("tls-session-cache-size", "-1"),
    ("tls-session-cache-timeout", "60"),
    ("tls-session-caching", "no"),
    ("tls-prefer-server-ciphers", "yes"),
    ("tls-replication", "maybe"),
    ("tls-dh-params-file", "/nonexistent/dh.pem"),
]


def _set(r, name, value):
    try:
        return r.config_set(name, value)
    except redis.ResponseError as e:
        return str(e)


def test_config_set_errors_match_redis(start_server, start_oracle, certs):
    servers = [tls_server(start_server, certs), tls_server(start_oracle, certs)]
    for name, value in SETS:
        res = [_set(s.client(), name, value) for s in servers]
        assert res[0] == res[1], (name, value, res)
        got = [s.client().config_get(name) for s in servers]
        assert got[0] == got[1], (name, got)
        # TLS keeps working whatever was refused.
        for s in servers:
            assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) == "PONG", (name, value)


def test_config_set_without_tls_enabled_matches_redis(start_server, start_oracle, certs):
    servers = [start_server(), start_oracle()]
    for name, value in [("tls-cert-file", "/nonexistent"), ("tls-port", str(free_port())),
                        ("tls-replication", "yes")]:
        res = [_set(s.client(), name, value) for s in servers]
        assert res[0] == res[1], (name, res)


def test_startup_errors_match_redis(certs, tmp_path):
    from conftest import cairn_bin
    for args in (["--tls-port", "0", "--tls-replication", "yes"],
                 ["--tls-port", str(free_port())],
                 ["--tls-port", str(free_port()), "--tls-cert-file", certs.crt("server"),
                  "--tls-key-file", certs.key("server")],
                 ["--tls-port", str(free_port()), "--tls-cert-file", "/nonexistent",
                  "--tls-key-file", certs.key("server"), "--tls-ca-cert-file", certs.crt("ca")]):
        rcs = []
        for b in (cairn_bin(), "redis-server"):
            p = subprocess.run([b, "--port", "0", "--save", ""] + args, capture_output=True, timeout=10,
                               cwd=str(tmp_path))
            out = p.stdout.decode()
            rcs.append((p.returncode, "Failed to configure TLS. Check logs for more info." in out))
        assert rcs[0] == rcs[1] == (1, True), (args, rcs)


def test_config_set_port_and_rewrite(start_server, certs):
    s = tls_server(start_server, certs, config_file="")
    r = s.client()
    new = free_port()
    assert r.config_set("tls-port", new)
    s.tls_port = new
    assert tls_client(s, certs).ping()
    assert r.config_set("tls-auth-clients", "optional")
    assert tls_client(s, certs, cert=None).ping()
    assert r.execute_command("CONFIG", "REWRITE")
    text = open(os.path.join(s.tmp, "server.conf")).read()
    assert "tls-port %d" % new in text
    assert "tls-auth-clients optional" in text
    assert "tls-cert-file" in text


def _peer_serial(port, c):
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    t = tlshelp.ssl_context(c).wrap_socket(raw, server_hostname="localhost")
    der = t.getpeercert(binary_form=True)
    t.close()
    return der


def test_config_set_reloads_certificates_keeping_connections(start_server, certs):
    s = tls_server(start_server, certs)
    old = tls_client(s, certs)
    old.set("k", "v")
    first = _peer_serial(s.tls_port, certs)
    r = s.client()
    assert r.config_set("tls-cert-file", certs.crt("server2"), "tls-key-file", certs.key("server2"))
    second = _peer_serial(s.tls_port, certs)
    assert first != second
    assert old.get("k") == b"v"  # the old connection goes on
    # A mismatched pair is refused and the working context stays.
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        r.config_set("tls-key-file", certs.key("server"))
    assert _peer_serial(s.tls_port, certs) == second
    assert r.config_get("tls-key-file")["tls-key-file"] == certs.key("server2")


# --- hostile input ----------------------------------------------------------------


def _closed_soon(sock, timeout):
    sock.settimeout(timeout)
    try:
        while True:
            if not sock.recv(4096):
                return True
    except socket.timeout:
        return False
    except OSError:
        return True


def test_plain_resp_and_garbage_on_tls_port(start_server, certs):
    s = tls_server(start_server, certs)
    good = tls_client(s, certs)
    for data in (b"*1\r\n$4\r\nPING\r\n", b"PING\r\n", os.urandom(3000), b"\x16\x03\x01\xff\xff" + os.urandom(100)):
        c = socket.create_connection(("127.0.0.1", s.tls_port))
        c.sendall(data)
        assert _closed_soon(c, 10)
        c.close()
        assert good.ping()
    assert s.alive()


def test_client_hello_cut_at_every_offset(start_server, certs):
    # 2 s, not less: the good client below handshakes under the same bound,
    # and on a loaded machine its handshake alone can take hundreds of ms.
    s = tls_server(start_server, certs, tls_handshake_timeout=2000)
    good = tls_client(s, certs, socket_timeout=30)
    hello = tlshelp.client_hello()
    assert len(hello) > 100
    socks = []
    for cut in range(0, len(hello)):
        c = socket.create_connection(("127.0.0.1", s.tls_port))
        c.sendall(hello[:cut])
        socks.append(c)
    assert good.ping()
    # Every cut handshake is closed by the server once its time is up.
    for c in socks:
        assert _closed_soon(c, 30)
        c.close()
    assert good.ping()
    wait_for(lambda: good.info("clients")["connected_clients"] == 1, 30, "cut handshakes freed")


HALF_OPEN = 1000


@pytest.fixture
def many_fds():
    """Raises this process's open-file limit (the servers it starts inherit
    it) so HALF_OPEN sockets fit on both ends; restores it after."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = HALF_OPEN + 1000
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip("open-file hard limit %d < %d" % (hard, want))
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_many_half_open_handshakes(many_fds, start_server, certs):
    # maxclients well above HALF_OPEN: a handshaking connection is a client.
    s = tls_server(start_server, certs, tls_handshake_timeout=5000, maxclients=HALF_OPEN + 500)
    hello = tlshelp.client_hello()
    socks = []
    for i in range(HALF_OPEN):
        c = socket.create_connection(("127.0.0.1", s.tls_port))
        if i % 2:
            c.sendall(hello[: len(hello) // 2])
        socks.append(c)
    # Others keep being served meanwhile, over TLS and plain TCP.
    pc = s.client()
    for _ in range(5):
        assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) == "PONG"
        assert pc.ping()
    wait_for(lambda: pc.info("clients")["connected_clients"] <= 1, timeout=25,
             what="half-open handshakes closed")
    # The server closed every one of them (not only forgot them).
    for c in socks:
        assert _closed_soon(c, 5)
        c.close()
    assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) == "PONG"
    assert s.alive()


def _renegotiate(port, c):
    """openssl s_client over TLS 1.2: PING, a renegotiation request (R),
    PING; what it printed that tells the outcome."""
    p = subprocess.Popen(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-tls1_2", "-CAfile",
                          c.crt("ca"), "-cert", c.crt("client"), "-key", c.key("client")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for line in (b"PING\r\n", b"R\n", b"PING\r\n"):
            p.stdin.write(line)
            p.stdin.flush()
            time.sleep(0.5)
        p.stdin.close()
    except BrokenPipeError:  # s_client gave up on the refusal
        pass
    try:
        out = p.communicate(timeout=10)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0]
    return [w for w in (b"+PONG", b"RENEGOTIATING", b"no renegotiation") if w in out], out.count(b"+PONG")


def test_renegotiation_refused_as_redis(start_server, start_oracle, certs):
    got = []
    for start in (start_server, start_oracle):
        s = tls_server(start, certs)
        got.append(_renegotiate(s.tls_port, certs))
        assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) == "PONG"
    assert got[0] == got[1]
    assert got[0][0] == [b"+PONG", b"RENEGOTIATING", b"no renegotiation"]


# --- replication and MIGRATE over TLS ---------------------------------------------------


def _repl_cfg(c):
    return dict(tls_replication="yes")


@pytest.mark.parametrize("primary_kind,replica_kind", [("cairn", "oracle"), ("oracle", "cairn"), ("cairn", "cairn")])
def test_replication_over_tls(start_server, start_oracle, certs, primary_kind, replica_kind):
    starts = {"cairn": start_server, "oracle": start_oracle}
    p = tls_server(starts[primary_kind], certs, tls_replication="yes", repl_diskless_sync_delay=0)
    rp = tls_client(p, certs)
    for i in range(2000):
        rp.set("k%d" % i, "v" * (i % 300))
    rp.set("big", "x" * 300000)
    r = tls_server(starts[replica_kind], certs, tls_replication="yes")
    rr = tls_client(r, certs)
    rr.replicaof("127.0.0.1", p.tls_port)
    wait_for(lambda: rr.info("replication")["master_link_status"] == "up", timeout=30, what="link up")
    rp.set("after", "sync")
    wait_for(lambda: rr.get("after") == b"sync", what="streamed write")
    assert rr.dbsize() == rp.dbsize()
    assert rr.get("big") == b"x" * 300000
    # The primary lists the replica at its TLS port.
    assert rp.info("replication")["slave0"]["port"] == r.tls_port


def test_replica_refused_without_tls_replication(start_server, certs):
    p = tls_server(start_server, certs, unixsocket="", args=["--port", "0"])
    r = start_server()
    r.client().replicaof("127.0.0.1", p.tls_port)
    time.sleep(1)
    assert r.client().info("replication")["master_link_status"] == "down"
    assert p.alive()


@pytest.mark.parametrize("source_kind", ["cairn", "oracle"])
def test_migrate_to_tls_node(start_server, start_oracle, certs, source_kind):
    starts = {"cairn": start_server, "oracle": start_oracle}
    dst = tls_server(start_oracle, certs)
    src = tls_server(starts[source_kind], certs, tls_cluster="yes")
    c = src.client()
    c.set("m", "v")
    assert c.migrate("127.0.0.1", dst.tls_port, "m", 0, 5000) == b"OK"
    assert tls_client(dst, certs).get("m") == b"v"
    # Without tls-cluster the same target cannot be reached.
    src2 = tls_server(starts[source_kind], certs)
    src2.client().set("n", "w")
    with pytest.raises(redis.ResponseError, match="IOERR"):
        src2.client().migrate("127.0.0.1", dst.tls_port, "n", 0, 1000)


def test_session_resumption_matches_redis(start_server, start_oracle, certs):
    for caching in ("yes", "no"):
        got = []
        for start in (start_server, start_oracle):
            s = tls_server(start, certs, tls_session_caching=caching)
            row = []
            for v in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
                ctx = tlshelp.ssl_context(certs, maxv=v)
                t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", s.tls_port)), server_hostname="localhost")
                t.sendall(b"PING\r\n")
                assert t.recv(100) == b"+PONG\r\n"
                sess = t.session
                t.close()
                # With caching off both refuse a resumption (an internal
                # error alert, as redis-server 7.0.15 does).
                try:
                    t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", s.tls_port)),
                                        server_hostname="localhost", session=sess)
                except ssl.SSLError as e:
                    row.append(e.reason)
                    continue
                t.sendall(b"PING\r\n")
                assert t.recv(100) == b"+PONG\r\n"
                row.append(t.session_reused)
                t.close()
            got.append(row)
        assert got[0] == got[1], (caching, got)
        if caching == "yes":
            assert got[0] == [True, True]


def test_sentinel_manages_a_tls_group(start_server, certs, tmp_path):
    sentinel_bin = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
    if not os.path.exists(sentinel_bin):
        pytest.skip("no redis-sentinel")
    cfg = dict(tls_replication="yes", unixsocket="", args=["--port", "0"], config_file="",
               repl_diskless_sync_delay=0)
    p = tls_server(start_server, certs, **cfg)
    rep = tls_server(start_server, certs, **cfg)
    rr = tls_client(rep, certs)
    rr.replicaof("127.0.0.1", p.tls_port)
    wait_for(lambda: rr.info("replication")["master_link_status"] == "up", 30, "replica up")
    sport = free_port()
    conf = tmp_path / "sentinel.conf"
    conf.write_text("port 0\ntls-port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
                    "tls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-replication yes\n"
                    "sentinel monitor m 127.0.0.1 %d 1\nsentinel down-after-milliseconds m 3000\n"
                    "sentinel failover-timeout m 6000\n"
                    % (sport, tmp_path, tmp_path, certs.crt("server"), certs.key("server"), certs.crt("ca"),
                       p.tls_port))
    proc = subprocess.Popen([sentinel_bin, str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        sent = redis.Redis(port=sport, ssl=True, ssl_certfile=certs.crt("client"), ssl_keyfile=certs.key("client"),
                           ssl_ca_certs=certs.crt("ca"), ssl_check_hostname=False, decode_responses=True,
                           socket_timeout=5)
        ign = (redis.ConnectionError, redis.TimeoutError, redis.ResponseError)
        wait_for(lambda: len(sent.execute_command("SENTINEL", "REPLICAS", "m")) == 1, 40, "replica discovered",
                 ignore=ign)
        flags = sent.execute_command("SENTINEL", "MASTER", "m")
        flags = dict(zip(flags[::2], flags[1::2]))["flags"]
        assert flags == "master"
        # Until the sentinel has the replica's INFO it answers NOGOODSLAVE.
        wait_for(lambda: sent.execute_command("SENTINEL", "FAILOVER", "m"), 40, "failover accepted", ignore=ign)
        wait_for(lambda: tls_client(rep, certs).execute_command("ROLE")[0] == b"master", 60, "promoted",
                 ignore=ign)
        wait_for(lambda: tls_client(p, certs).info("replication").get("master_port") == rep.tls_port, 60,
                 "old primary follows", ignore=ign)
    finally:
        proc.kill()
        proc.wait()


IOREDIS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "build", "npm", "node_modules", "ioredis")
IOREDIS_JS = """
const Redis = require(process.argv[2]);
const fs = require('fs');
const d = process.argv[4];
const r = new Redis({port: parseInt(process.argv[3]), host: '127.0.0.1', maxRetriesPerRequest: 1,
  tls: {ca: fs.readFileSync(d + '/ca.crt'), cert: fs.readFileSync(d + '/client.crt'),
        key: fs.readFileSync(d + '/client.key'), checkServerIdentity: () => undefined}});
(async () => {
  await r.set('io', 'x'.repeat(200000));
  const v = await r.get('io');
  console.log(await r.ping(), v.length);
  r.disconnect();
})().catch(e => { console.log('ERR', e.message); process.exit(1); });
"""


def test_ioredis_over_tls(start_server, certs, tmp_path):
    if not (shutil.which("node") and os.path.isdir(IOREDIS)):
        pytest.skip("no node or ioredis (scripts/deps.sh test installs them)")
    s = tls_server(start_server, certs)
    js = tmp_path / "io.js"
    js.write_text(IOREDIS_JS)
    out = subprocess.run(["node", str(js), IOREDIS, str(s.tls_port), certs.dir], capture_output=True, timeout=60)
    assert out.stdout == b"PONG 200000\n", out


NODE_REDIS = os.path.join(os.path.dirname(IOREDIS), "redis4")
# node-redis v4: SET/GET of a value larger than a TLS record, INCRBY,
# pub/sub on a duplicate() connection, then a client without a certificate
# (refused with tls-auth-clients yes).
NODE_REDIS_JS = """
const { createClient } = require(process.argv[2]);
const fs = require('fs');
const d = process.argv[4];
const port = parseInt(process.argv[3]);
const tls = (cert) => Object.assign({host: '127.0.0.1', port, tls: true, servername: 'localhost',
  ca: fs.readFileSync(d + '/ca.crt'), reconnectStrategy: false},
  cert ? {cert: fs.readFileSync(d + '/client.crt'), key: fs.readFileSync(d + '/client.key')} : {});
(async () => {
  const c = createClient({socket: tls(true)});
  c.on('error', () => {});
  await c.connect();
  const out = [];
  out.push(await c.set('nr', 'x'.repeat(300000)));
  out.push((await c.get('nr')).length);
  out.push(await c.incrBy('nr:n', 7), await c.ping());
  const sub = c.duplicate();
  sub.on('error', () => {});
  await sub.connect();
  const got = new Promise(res => sub.subscribe('ch', (m, ch) => res(ch + ':' + m)));
  await new Promise(r => setTimeout(r, 200));
  out.push(await c.publish('ch', 'hello'));
  out.push(await got);
  await sub.quit();
  await c.quit();
  // No client certificate: refused (tls-auth-clients yes).
  const n = createClient({socket: tls(false)});
  n.on('error', () => {});
  let refused = false;
  try { await n.connect(); await n.ping(); } catch (e) { refused = true; }
  try { await n.disconnect(); } catch (e) {}
  out.push('refused=' + refused);
  console.log(out.join(' '));
})().catch(e => { console.log('ERR', e.message); process.exit(1); });
"""


def test_node_redis_over_tls_as_redis(start_server, start_oracle, certs, tmp_path):
    if not (shutil.which("node") and os.path.isdir(NODE_REDIS)):
        pytest.skip("no node or node-redis (scripts/deps.sh test installs them)")
    js = tmp_path / "nr.js"
    js.write_text(NODE_REDIS_JS)
    got = []
    for start in (start_server, start_oracle):
        s = tls_server(start, certs)
        got.append(subprocess.run(["node", str(js), NODE_REDIS, str(s.tls_port), certs.dir], capture_output=True,
                                  timeout=60))
    assert got[0].stdout == got[1].stdout == b"OK 300000 7 PONG 1 ch:hello refused=true\n", got


def test_protected_mode_refusal_over_tls_as_redis(start_server, start_oracle, certs):
    # Not from 127.0.0.1 and no password: refused, over TLS after the handshake.
    got = []
    for start in (start_server, start_oracle):
        s = tls_server(start, certs)
        raw = socket.socket()
        raw.bind(("127.0.0.2", 0))
        raw.settimeout(10)
        raw.connect(("127.0.0.1", s.tls_port))
        t = tlshelp.ssl_context(certs).wrap_socket(raw, server_hostname="localhost")
        t.sendall(b"PING\r\n")
        data = b""
        try:
            while True:
                chunk = t.recv(4096)
                if not chunk:
                    break
                data += chunk
        except (ssl.SSLError, OSError):
            pass
        t.close()
        got.append(data)
        assert s.client().info("stats")["rejected_connections"] == 1
    assert got[0] == got[1]
    assert got[0].startswith(b"-DENIED Redis is running in protected mode")


def test_config_set_tls_port_in_use_as_redis(start_server, start_oracle, certs):
    res = []
    for start in (start_server, start_oracle):
        s = tls_server(start, certs)
        r = s.client()
        res.append(_set(r, "tls-port", str(s.port)))  # the plain port: taken
        assert r.config_get("tls-port") == {"tls-port": str(s.tls_port)}
        assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) == "PONG"
        assert r.config_set("tls-port", 0)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", s.tls_port), timeout=2).close()
    assert res[0] == res[1], res


def test_config_set_ca_changes_who_gets_in(start_server, certs):
    s = tls_server(start_server, certs)
    old = tls_client(s, certs)
    assert old.ping()
    assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs, cert="other")) != "PONG"
    assert s.client().config_set("tls-ca-cert-file", certs.crt("other_ca"))
    assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs, cert="other")) == "PONG"
    assert tlshelp.tls_ping(s.tls_port, tlshelp.ssl_context(certs)) != "PONG"
    assert old.ping()  # accepted before the change: goes on


@pytest.mark.parametrize("client_cert,up", [("client", True), ("other", False)])
def test_replica_presents_tls_client_cert_file(start_server, certs, client_cert, up):
    p = tls_server(start_server, certs, tls_replication="yes")
    r = tls_server(start_server, certs, tls_replication="yes", tls_client_cert_file=certs.crt(client_cert),
                   tls_client_key_file=certs.key(client_cert))
    p.client().set("k", "v")
    r.client().replicaof("127.0.0.1", p.tls_port)
    if up:
        wait_for(lambda: r.client().info("replication")["master_link_status"] == "up", 30, "link up")
        assert r.client().get("k") == b"v"
    else:
        time.sleep(2)
        assert r.client().info("replication")["master_link_status"] == "down"
        assert p.client().info("replication")["connected_slaves"] == 0
