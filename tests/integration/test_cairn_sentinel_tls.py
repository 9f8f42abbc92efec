"""Cairn's built-in Sentinel over TLS (issue 40): the tls-* directives in
Sentinel mode (the data server's, core/conn_tls.c), a sentinel with a
tls-port only (port 0), its links to the monitored servers and to the
other sentinels over TLS (tls-replication yes), as redis-sentinel 7.0.

The group is TLS-only too: Cairn data servers with port 0, replicating
over TLS.  Clients are redis-cli --tls and redis-py's Sentinel over TLS;
the mixed test adds Debian's redis-sentinel 7.0.15 over TLS to the group
(it is built with TLS)."""
import os
import shutil
import signal
import subprocess
import tempfile

import pytest
import redis

import tlshelp
from conftest import free_port
from test_cairn_sentinel import CAIRN_SENTINEL, NAME, SENTINEL_BIN, pairs, wait_for

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl")


@pytest.fixture(scope="module")
def certs(tls_certs):
    """The session's certificates (conftest's tls_certs: made once per
    test process, not once more for this module)."""
    from conftest import cairn_bin
    if not tlshelp.binary_has_tls(cairn_bin()):
        pytest.skip("built with TLS=no")
    return tls_certs


def tls_kwargs(c):
    return dict(ssl=True, ssl_certfile=c.crt("client"), ssl_keyfile=c.key("client"), ssl_ca_certs=c.crt("ca"),
                ssl_check_hostname=False)


class TlsSentinel:
    """A sentinel (cairn's or redis's) listening on a tls-port only."""

    def __init__(self, binary, c, master_port, down_after=3000, failover_timeout=60000):
        self.dir = tempfile.mkdtemp(prefix="cairn-sent-tls-")
        self.tls_port = free_port()
        self.conf = os.path.join(self.dir, "sentinel.conf")
        with open(self.conf, "w") as f:
            f.write("port 0\ntls-port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
                    "tls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-replication yes\n"
                    "sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\n"
                    "sentinel failover-timeout %s %d\n"
                    % (self.tls_port, self.dir, self.dir, c.crt("server"), c.key("server"), c.crt("ca"),
                       NAME, master_port, NAME, down_after, NAME, failover_timeout))
        self.proc = subprocess.Popen([binary, self.conf], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                     cwd=self.dir)
        self.client = redis.Redis(host="127.0.0.1", port=self.tls_port, socket_timeout=5, decode_responses=True,
                                  **tls_kwargs(c))
        wait_for(lambda: self.client.ping(), 20, "sentinel up over TLS")

    def cmd(self, *args):
        return self.client.execute_command(*args)

    def log(self):
        try:
            with open(os.path.join(self.dir, "sentinel.log")) as f:
                return f.read()
        except OSError as e:
            return str(e)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def tls_sentinels():
    started = []

    def start(binary, *a, **kw):
        s = TlsSentinel(binary, *a, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def tls_group(start_server, c, nreplicas):
    """A TLS-only Cairn primary and replicas (port 0, tls-replication yes)."""
    nodes = []
    for _ in range(nreplicas + 1):
        cfg = tlshelp.tls_args(c, tls_replication="yes", repl_diskless_sync_delay="0")
        cfg["tls_port"] = free_port()
        s = start_server(unixsocket="", args=["--port", "0"], **cfg)
        s.tls_port = int(cfg["tls_port"])
        s.tls = redis.Redis(host="127.0.0.1", port=s.tls_port, socket_timeout=10, **tls_kwargs(c))
        nodes.append(s)
    p, reps = nodes[0], nodes[1:]
    for r in reps:
        r.tls.execute_command("REPLICAOF", "127.0.0.1", p.tls_port)
    for r in reps:
        wait_for(lambda: r.tls.info("replication")["master_link_status"] == "up", 30, "replica up over TLS")
    return p, reps


def cli(c, port, *args):
    cmd = ["redis-cli", "--tls", "--cacert", c.crt("ca"), "--cert", c.crt("client"), "--key", c.key("client"),
           "-p", str(port)]
    return subprocess.run(cmd + list(args), capture_output=True, timeout=30).stdout


def test_tls_only_sentinel_monitors_a_tls_group(start_server, tls_sentinels, certs):
    """A cairn-sentinel with port 0 and a tls-port: no plain port, it
    reaches the TLS-only primary and its replica over TLS (INFO discovery)
    and answers redis-cli --tls and redis-py over TLS."""
    p, reps = tls_group(start_server, certs, 1)
    s = tls_sentinels(CAIRN_SENTINEL, certs, p.tls_port)
    wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 1 and
             pairs(s.cmd("SENTINEL", "REPLICAS", NAME)[0])["flags"] == "slave", 40, "replica discovered")
    m = pairs(s.cmd("SENTINEL", "MASTER", NAME))
    assert m["flags"] == "master" and m["port"] == str(p.tls_port)
    assert pairs(s.cmd("SENTINEL", "REPLICAS", NAME)[0])["port"] == str(reps[0].tls_port)
    assert cli(certs, s.tls_port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == \
        ("127.0.0.1\n%d\n" % p.tls_port).encode()
    assert s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == ["127.0.0.1", str(p.tls_port)]
    assert s.client.info("server")["redis_mode"] == "sentinel"
    # Without a client certificate (tls-auth-clients yes) nothing is answered.
    plain = subprocess.run(["redis-cli", "--tls", "--cacert", certs.crt("ca"), "-p", str(s.tls_port), "PING"],
                           capture_output=True, timeout=30).stdout
    assert plain == b""


# The cairn case once failed under load: a sentinel relayed a newer config
# epoch beside the old address before switching, and one that heard that
# first ignored the right hellos (test_cairn_sentinel3.py tests it directly).
@pytest.mark.parametrize("mixed", [
    pytest.param(False, id="cairn"),
    pytest.param(True, id="mixed")])
def test_failover_over_tls(start_server, tls_sentinels, certs, mixed):
    """Three sentinels over TLS (three cairn-sentinels, or two and Debian's
    redis-sentinel) find each other through hello messages sent over
    their TLS links (each announcing its tls-port), and when the TLS-only
    primary is SIGKILLed exactly one failover happens: redis-py's Sentinel
    over TLS then finds a former replica as the primary, which takes
    writes, and the other replica follows it."""
    if mixed and not os.path.exists(SENTINEL_BIN):
        pytest.skip("no redis-sentinel")
    p, reps = tls_group(start_server, certs, 2)
    bins = [CAIRN_SENTINEL, CAIRN_SENTINEL, SENTINEL_BIN if mixed else CAIRN_SENTINEL]
    sents = [tls_sentinels(b, certs, p.tls_port, failover_timeout=6000) for b in bins]
    ports = {s.tls_port for s in sents}
    for s in sents:
        wait_for(lambda: len(s.cmd("SENTINEL", "REPLICAS", NAME)) == 2 and
                 {int(pairs(x)["port"]) for x in s.cmd("SENTINEL", "SENTINELS", NAME)} == ports - {s.tls_port},
                 60, "discovery over TLS")
    client = redis.sentinel.Sentinel([("127.0.0.1", s.tls_port) for s in sents], socket_timeout=5,
                                     sentinel_kwargs=dict(socket_timeout=5, **tls_kwargs(certs)),
                                     **tls_kwargs(certs))
    assert client.discover_master(NAME) == ("127.0.0.1", p.tls_port)
    master = client.master_for(NAME, socket_timeout=5)
    master.set("before", "1")
    assert master.execute_command("WAIT", 2, 5000) == 2
    os.kill(p.pid, signal.SIGKILL)
    p.proc.wait()
    wait_for(lambda: client.discover_master(NAME)[1] != p.tls_port, 90, "failover over TLS")
    host, port = client.discover_master(NAME)
    assert port in [r.tls_port for r in reps]
    new = next(r for r in reps if r.tls_port == port)
    other = next(r for r in reps if r is not new)
    wait_for(lambda: new.tls.info("replication")["role"] == "master", 30, "promoted")
    assert new.tls.get("before") == b"1"
    wait_for(lambda: master.set("after", "2"), 30, "writes on the new primary")
    wait_for(lambda: other.tls.info("replication").get("master_port") == new.tls_port and
             other.tls.info("replication")["master_link_status"] == "up", 60, "the other replica follows")
    # Every sentinel agrees, and exactly one failover: one epoch.
    try:
        for s in sents:
            wait_for(lambda: s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME) == ["127.0.0.1", str(port)], 60,
                     "sentinels agree")
        epochs = {pairs(s.cmd("SENTINEL", "MASTER", NAME))["config-epoch"] for s in sents}
        assert epochs == {"1"}
    except AssertionError as e:
        raise AssertionError("%s (new primary %d)\n%s" % (e, port, "\n".join(
            "--- %d: %s\n%s" % (s.tls_port, s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME), s.log()[-3000:])
            for s in sents)))
