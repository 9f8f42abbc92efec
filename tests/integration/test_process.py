"""Process management: daemonize, pidfile, supervised systemd (sd_notify),
SIGTERM/SIGINT shutdown, the log line format, loglevel and logfile.

These run the binary directly (not through the fixtures) because they
exercise how the process starts and stops.  Every test also runs against
redis-server with CAIRN_BIN=redis-server.
"""
import os
import re
import signal
import socket
import subprocess
import time


from conftest import cairn_bin, free_port
from waithelp import poll as wait_for

# "pid:M 21 Nov 2026 13:38:26.418 * message"
LOG_LINE = re.compile(r"^\d+:[MCSX] \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2}\.\d{3} [.\-*#] .+$")


def ping(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64) == b"+PONG\r\n"
    except OSError:
        return False


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def start(args, **kw):
    return subprocess.Popen([cairn_bin()] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def test_log_lines_use_redis_format_and_ready_line(tmp_path):
    port = free_port()
    logfile = tmp_path / "server.log"
    p = start(["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--logfile", str(logfile)])
    try:
        assert wait_for(lambda: "Ready to accept connections" in read(logfile))
        lines = [ln for ln in read(logfile).splitlines() if ln.strip()]
        assert lines
        for ln in lines:
            assert LOG_LINE.match(ln), ln
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)


def test_sigterm_and_sigint_shut_down_cleanly(tmp_path):
    for sig in (signal.SIGTERM, signal.SIGINT):
        port = free_port()
        logfile = tmp_path / ("server-%d.log" % sig)
        p = start(["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--logfile", str(logfile)])
        assert wait_for(lambda: ping(port))
        p.send_signal(sig)
        assert p.wait(timeout=10) == 0
        text = read(logfile)
        name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
        assert "Received %s scheduling shutdown" % name in text
        assert "ready to exit, bye bye" in text
        assert not ping(port)


def test_daemonize_writes_pidfile_and_detaches(tmp_path):
    port = free_port()
    pidfile = tmp_path / "server.pid"
    logfile = tmp_path / "server.log"
    p = start(["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--daemonize", "yes",
               "--pidfile", str(pidfile), "--logfile", str(logfile)])
    # The parent returns at once; the daemon keeps serving.
    assert p.wait(timeout=10) == 0
    try:
        assert wait_for(lambda: ping(port))
        assert wait_for(lambda: read(pidfile).strip().isdigit())
        pid = int(read(pidfile))
        assert pid != p.pid
        os.kill(pid, 0)  # alive
    finally:
        pid = int(read(pidfile) or 0)
        if pid:
            os.kill(pid, signal.SIGTERM)
            assert wait_for(lambda: not os.path.exists(pidfile))  # removed at shutdown


def test_supervised_systemd_sends_ready(tmp_path):
    sock_path = str(tmp_path / "notify.sock")
    rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    rx.bind(sock_path)
    rx.settimeout(10)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=sock_path)
    p = start(["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--supervised", "systemd"], env=env)
    try:
        got = b""
        deadline = time.time() + 10
        while b"READY=1" not in got and time.time() < deadline:
            got += rx.recv(4096) + b"\n"
        assert b"READY=1" in got
        assert ping(port)
    finally:
        rx.close()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)


def test_loglevel_warning_hides_notice_lines(tmp_path):
    port = free_port()
    logfile = tmp_path / "server.log"
    p = start(["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--loglevel", "warning",
               "--logfile", str(logfile)])
    try:
        assert wait_for(lambda: ping(port))
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        text = read(logfile)
        assert "Ready to accept connections" not in text  # a notice line
        assert "scheduling shutdown" in text              # a warning line
    finally:
        if p.poll() is None:
            p.kill()


def test_include_directive_and_args_override_file(tmp_path):
    port = free_port()
    inc = tmp_path / "inc.conf"
    inc.write_text("maxclients 123\ntimeout 7\n")
    conf = tmp_path / "main.conf"
    conf.write_text("include %s\nport %d\nbind 127.0.0.1\nsave \"\"\ntimeout 9\n" % (inc, port + 1))
    p = start([str(conf), "--port", str(port)])
    try:
        assert wait_for(lambda: ping(port))
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"CONFIG GET maxclients\r\nCONFIG GET timeout\r\n")
            time.sleep(0.2)
            data = s.recv(4096)
        assert b"$10\r\nmaxclients\r\n$3\r\n123\r\n" in data
        assert b"$7\r\ntimeout\r\n$1\r\n9\r\n" in data
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
