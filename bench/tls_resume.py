"""bench/tls_resume.py: server CPU per resumed TLS handshake (issue 35),
called by bench/tls.sh for Cairn and redis-server in turn.

Usage: tls_resume.py PORT PID CA_FILE N RATE TLSVERSION(1.2|1.3)

Opens one full TLS connection to 127.0.0.1:PORT to get a session, then N
new connections at up to RATE per second, each resuming the latest
session (a TLS 1.2 session ID / ticket, or a TLS 1.3 ticket), sending
PING, reading +PONG and closing.  The server's CPU (utime + stime of
/proc/PID/stat) is read before and after the N connections.  Prints one
line: "<microseconds of server CPU per connection> <resumed> <conn/s>",
where resumed counts the connections whose session was reused (N when
resumption works) and conn/s is the rate reached."""
import os
import socket
import ssl
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of pid (seconds), from /proc/pid/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def connect(port, ctx, session):
    raw = socket.create_connection(("127.0.0.1", port))
    # Without it a TLS 1.2 resumption's last flight and the PING wait out
    # the server's delayed ACK (about 40 ms) on both servers.
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
    s.sendall(b"PING\r\n")
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = s.recv(100)
        if not chunk:
            raise SystemExit("tls_resume: connection closed before +PONG")
        data += chunk
    # TLS 1.3 tickets arrive after the handshake: the session is read after
    # the reply, which follows them.
    reused, sess = s.session_reused, s.session
    s.close()
    return reused, sess


def main():
    port, pid, ca, n, rate, ver = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                   float(sys.argv[5]), sys.argv[6])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(ca)
    v = ssl.TLSVersion.TLSv1_3 if ver == "1.3" else ssl.TLSVersion.TLSv1_2
    ctx.minimum_version = ctx.maximum_version = v
    _, sess = connect(port, ctx, None)
    reused = 0
    c0 = cpu_seconds(pid)
    t0 = time.monotonic()
    for i in range(n):
        due = t0 + i / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        r, new = connect(port, ctx, sess)
        reused += r
        if new is not None:
            sess = new
    t1 = time.monotonic()
    c1 = cpu_seconds(pid)
    print("%.1f %d %.0f" % ((c1 - c0) * 1e6 / n, reused, n / (t1 - t0)))


if __name__ == "__main__":
    main()
