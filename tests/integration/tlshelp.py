"""TLS test certificates, made at test time with `openssl` (issue 35).

certs(dir) writes into dir and returns a Certs with the paths of:
  ca          the CA every server and client below trusts
  server      a server certificate for localhost/127.0.0.1 from ca
  client      a client certificate from ca
  expired     a client certificate from ca whose validity ended yesterday
  other_ca    a second CA, and other: a client certificate from it
  server2     a second server certificate from ca (certificate reloads)
Each certificate `x` has x.crt and x.key (no passphrase), except
`enc`, the server key encrypted with the passphrase ENC_PASS.

Also: tls_args(certs, **more) gives a server's directives for a TLS port
with those files; ssl_context(certs, ...) a client context."""
import os
import socket
import ssl
import subprocess

ENC_PASS = "cairn-pass"


def _run(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class Certs:
    def __init__(self, d):
        self.dir = d

    def crt(self, name):
        return os.path.join(self.dir, name + ".crt")

    def key(self, name):
        return os.path.join(self.dir, name + ".key")


def _ca(d, name, cn):
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", os.path.join(d, name + ".key"),
         "-out", os.path.join(d, name + ".crt"), "-days", "30", "-subj", "/CN=" + cn)


def _leaf(d, name, ca, cn, days="30", server=False):
    key, csr, crt = (os.path.join(d, name + ext) for ext in (".key", ".csr", ".crt"))
    _run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + cn)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        if server:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        else:
            f.write("extendedKeyUsage=clientAuth\n")
    _run("x509", "-req", "-in", csr, "-CA", os.path.join(d, ca + ".crt"), "-CAkey", os.path.join(d, ca + ".key"),
         "-CAcreateserial", "-out", crt, "-days", days, "-extfile", ext)


def certs(d):
    os.makedirs(d, exist_ok=True)
    _ca(d, "ca", "Cairn Test CA")
    _ca(d, "other_ca", "Other Test CA")
    _leaf(d, "server", "ca", "localhost", server=True)
    _leaf(d, "server2", "ca", "localhost", server=True)
    _leaf(d, "client", "ca", "client")
    _leaf(d, "expired", "ca", "expired", days="-1")
    _leaf(d, "other", "other_ca", "other")
    _run("pkey", "-in", os.path.join(d, "server.key"), "-out", os.path.join(d, "enc.key"), "-aes256",
         "-passout", "pass:" + ENC_PASS)
    return Certs(d)


_HAS_TLS = {}


def binary_has_tls(binary):
    """Whether binary was built with TLS (`make TLS=no` refuses the
    directives with "TLS is not supported")."""
    if binary not in _HAS_TLS:
        p = subprocess.run([binary, "--port", "0", "--tls-cluster", "yes", "--save", ""], capture_output=True,
                           timeout=30, cwd="/")
        _HAS_TLS[binary] = b"TLS is not supported" not in p.stdout + p.stderr
    return _HAS_TLS[binary]


def tls_args(c, **more):
    """Directives for a server with a TLS port (the caller adds tls_port)."""
    cfg = {"tls_cert_file": c.crt("server"), "tls_key_file": c.key("server"),
           "tls_ca_cert_file": c.crt("ca")}
    cfg.update(more)
    return cfg


def ssl_context(c, cert="client", ca="ca", minv=None, maxv=None, ciphers=None):
    """A client context trusting ca, presenting cert (None: no certificate)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(c.crt(ca))
    if cert:
        ctx.load_cert_chain(c.crt(cert), c.key(cert))
    if minv:
        ctx.minimum_version = minv
    if maxv:
        ctx.maximum_version = maxv
    if ciphers:
        ctx.set_ciphers(ciphers)
    return ctx


def tls_ping(port, ctx, timeout=5.0):
    """'PONG' when a TLS connection to port answers PING, else the name of
    what failed ('handshake', 'closed', or the error reply)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s = ctx.wrap_socket(raw, server_hostname="localhost")
        except (ssl.SSLError, OSError):
            return "handshake"
        try:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            data = b""
            while not data.endswith(b"\r\n"):
                chunk = s.recv(4096)
                if not chunk:
                    return "closed"
                data += chunk
        except (ssl.SSLError, OSError):
            return "closed"
        finally:
            s.close()
        return data.decode().strip().lstrip("+")
    finally:
        raw.close()


def client_hello():
    """The bytes of a real TLS ClientHello (from Python's ssl, in memory)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()
