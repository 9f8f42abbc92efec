"""Installing Cairn: `make install` / `make uninstall`, the systemd units,
the man page, and the command-line forms that answer without starting a
server (--version, --help, --check-system).

The install tests install the tree's build/cairn-server into temporary
DESTDIRs (PREFIX=/opt/cairn-test), so they never touch the machine's /etc
or create users.  systemd-analyze needs no running systemd.
"""
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import ROOT, START_TIMEOUT, cairn_bin, free_port

PREFIX = "/opt/cairn-test"
TOOLS = ("cairn-check-rdb", "cairn-check-aof", "cairn-sentinel")
VERSION_RE = re.compile(
    r"^Cairn server v=(\d+\.\d+\.\d+) \(Redis 7\.0\.15 compatible\) "
    r"sha=([0-9a-f]{8}):([01]) malloc=(\S+) bits=(\d+) build=([0-9a-f]{16})\n$")
CHECK_RE = re.compile(r"^\[([A-Za-z]+)\]\.\.\.(OK|WARNING:|skipped)$")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)


def make(*targets, **variables):
    """Run make in the tree, outside any make that started pytest."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    args = ["make", "-s", "-C", ROOT] + list(targets) + ["%s=%s" % kv for kv in variables.items()]
    r = subprocess.run(args, capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, "%s\n%s\n%s" % (args, r.stdout, r.stderr)
    return r


def tree(root):
    """{relative path: (kind, mode)} of everything under root."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            kind = "d" if stat.S_ISDIR(st.st_mode) else "f"
            out[os.path.relpath(p, root)] = (kind, stat.S_IMODE(st.st_mode))
    return out


def files_only(t):
    return {p: m for p, (k, m) in t.items() if k == "f"}


def expected_files():
    files = {
        "opt/cairn-test/bin/cairn-server": 0o755,
        "opt/cairn-test/share/man/man1/cairn-server.1": 0o644,
        "opt/cairn-test/lib/systemd/system/cairn.service": 0o644,
        "opt/cairn-test/lib/systemd/system/cairn@.service": 0o644,
        "opt/cairn-test/lib/systemd/system/cairn-sentinel.service": 0o644,
        "etc/cairn/cairn.conf": 0o640,
        "etc/cairn/sentinel/sentinel.conf": 0o640,
    }
    for t in TOOLS:  # installed once they are built
        if os.path.exists(os.path.join(ROOT, "build", t)):
            files["opt/cairn-test/bin/" + t] = 0o755
    return files


@pytest.fixture(scope="module")
def installed():
    d = tempfile.mkdtemp(prefix="cairn-destdir-")
    make("install", DESTDIR=d, PREFIX=PREFIX)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# --- the installed tree ----------------------------------------------------

def test_install_file_list_and_modes(installed):
    t = tree(installed)
    assert files_only(t) == expected_files()
    assert t["var/lib/cairn"] == ("d", 0o750)
    assert t["var/log/cairn"] == ("d", 0o750)
    assert t["etc/cairn"] == ("d", 0o755)
    assert t["etc/cairn/sentinel"] == ("d", 0o750)


def test_installed_binary_is_the_build(installed):
    with open(os.path.join(ROOT, "build", "cairn-server"), "rb") as a, \
            open(os.path.join(installed, PREFIX[1:], "bin", "cairn-server"), "rb") as b:
        assert a.read() == b.read()


def test_installed_config_is_cairn_conf_with_service_paths(installed):
    with open(os.path.join(ROOT, "cairn.conf")) as f:
        src = f.read().splitlines()
    with open(os.path.join(installed, "etc/cairn/cairn.conf")) as f:
        inst = f.read().splitlines()
    assert len(src) == len(inst)
    changed = {(a, b) for a, b in zip(src, inst) if a != b}
    assert changed == {("dir ./", "dir /var/lib/cairn"),
                       ('logfile ""', "logfile /var/log/cairn/cairn-server.log"),
                       ("# pidfile /var/run/cairn.pid", "pidfile /run/cairn/cairn-server.pid")}


def unit_text(installed, name):
    with open(os.path.join(installed, PREFIX[1:], "lib/systemd/system", name)) as f:
        return f.read()


@pytest.mark.parametrize("name,conf", [("cairn.service", "/etc/cairn/cairn.conf"),
                                       ("cairn@.service", "/etc/cairn/cairn-%i.conf")])
def test_units(installed, name, conf):
    text = unit_text(installed, name)
    assert "@" + "BINDIR@" not in text and "@" + "SYSCONFDIR@" not in text
    lines = set(text.splitlines())
    assert "ExecStart=%s/bin/cairn-server %s --supervised systemd --daemonize no" % (PREFIX, conf) in lines
    for want in ("Type=notify", "User=cairn", "Group=cairn", "Restart=always", "LimitNOFILE=65535",
                 "ProtectSystem=strict", "ProtectHome=true", "PrivateTmp=true", "NoNewPrivileges=true",
                 "ReadWritePaths=-/var/lib/cairn", "ReadWritePaths=-/var/log/cairn",
                 "MemoryDenyWriteExecute=true", "ExecPaths=%s/bin/cairn-server /usr/lib /lib" % PREFIX):
        assert want in lines, want


def test_sentinel_unit(installed):
    """cairn-sentinel.service: cairn-sentinel on the installed sentinel.conf,
    hardened as cairn.service, with only the sentinel's own config
    directory (which it rewrites), log directory and run directory
    writable, and a run directory of its own (systemd removes a unit's
    RuntimeDirectory when it stops, so sharing cairn's would break it)."""
    text = unit_text(installed, "cairn-sentinel.service")
    assert "@" + "BINDIR@" not in text and "@" + "SYSCONFDIR@" not in text
    lines = set(text.splitlines())
    assert ("ExecStart=%s/bin/cairn-sentinel /etc/cairn/sentinel/sentinel.conf --supervised systemd "
            "--daemonize no" % PREFIX) in lines
    for want in ("Type=notify", "User=cairn", "Group=cairn", "Restart=always", "LimitNOFILE=65535",
                 "ProtectSystem=strict", "ProtectHome=true", "PrivateTmp=true", "NoNewPrivileges=true",
                 "RuntimeDirectory=cairn-sentinel", "ReadWritePaths=-/etc/cairn/sentinel",
                 "ReadWritePaths=-/var/log/cairn", "ReadWritePaths=-/run/cairn-sentinel",
                 "MemoryDenyWriteExecute=true", "ExecPaths=%s/bin/cairn-sentinel /usr/lib /lib" % PREFIX):
        assert want in lines, want
    rw = sorted(l for l in lines if l.startswith("ReadWritePaths="))
    assert rw == ["ReadWritePaths=-/etc/cairn/sentinel", "ReadWritePaths=-/run/cairn-sentinel",
                  "ReadWritePaths=-/var/log/cairn"]
    conf = open(os.path.join(installed, "etc/cairn/sentinel/sentinel.conf")).read().splitlines()
    assert "pidfile /run/cairn-sentinel/cairn-sentinel.pid" in conf
    assert "logfile /var/log/cairn/cairn-sentinel.log" in conf


def test_installed_sentinel_runs_as_the_unit_runs_it(installed, tmp_path):
    """The installed cairn-sentinel on (a copy of) the installed sentinel.conf,
    with the unit's arguments: it tells systemd READY=1 once it listens,
    answers as a sentinel, and rewrites its config in place keeping the
    comments."""
    binary = os.path.join(installed, PREFIX[1:], "bin/cairn-sentinel")
    with open(os.path.join(installed, "etc/cairn/sentinel/sentinel.conf")) as f:
        text = f.read()
    conf = tmp_path / "sentinel.conf"
    log = tmp_path / "sentinel.log"
    pidfile = tmp_path / "sentinel.pid"
    conf.write_text(text.replace("/run/cairn-sentinel/cairn-sentinel.pid", str(pidfile))
                    .replace("/var/log/cairn/cairn-sentinel.log", str(log)))
    sock_path = str(tmp_path / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(sock_path)
    port = free_port()
    proc = subprocess.Popen([binary, str(conf), "--port", str(port), "--supervised", "systemd",
                             "--daemonize", "no"], env=dict(os.environ, NOTIFY_SOCKET=sock_path),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        msgs = wait_ready(notify, proc)
        assert "READY=1" in msgs
        r = redis.Redis(port=port, socket_timeout=10)
        assert r.ping()
        assert r.execute_command("ROLE") == [b"sentinel", []]
        assert pidfile.read_text() == "%d\n" % proc.pid
        after = conf.read_text()
        # comments kept, state appended
        assert "# sentinel monitor mymaster 127.0.0.1 6379 2" in after
        assert re.search(r"^sentinel myid [0-9a-f]{40}$", after, re.M)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "Sentinel ID is" in log.read_text()
    finally:
        notify.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def verify_copy(installed, name, tmp):
    """The installed unit, with its binary path moved into DESTDIR (the only
    path systemd-analyze verify requires to exist)."""
    text = unit_text(installed, name).replace(PREFIX + "/bin/", os.path.join(installed, PREFIX[1:], "bin") + "/")
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        f.write(text)
    return p


@pytest.mark.parametrize("name", ["cairn.service", "cairn@.service", "cairn-sentinel.service"])
def test_systemd_analyze_verify(installed, name, tmp_path):
    tool = shutil.which("systemd-analyze")
    if not tool:
        pytest.skip("systemd-analyze missing (scripts/deps.sh test installs Debian's systemd)")
    unit = verify_copy(installed, name, str(tmp_path))
    # MANPATH lets the Documentation=man:cairn-server(1) check find the page.
    env = dict(os.environ, MANPATH=os.path.join(installed, PREFIX[1:], "share/man"))
    r = run([tool, "verify", unit], env=env, cwd=str(tmp_path))
    # verify exits 0 on unknown keys and bad values too: any output is a finding.
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def exposure(tool, unit, cwd):
    r = run([tool, "security", "--offline=true", unit], cwd=cwd)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", r.stdout)
    assert m, r.stdout + r.stderr
    return float(m.group(1))


@pytest.mark.parametrize("name,theirs", [("cairn.service", "redis-server.service"),
                                         ("cairn@.service", "redis-server@.service"),
                                         ("cairn-sentinel.service", "redis-sentinel.service")])
def test_units_sandboxed_as_debians_redis(installed, name, theirs, tmp_path):
    """systemd's own exposure score of each unit is no worse than that of
    Debian's redis-server unit (when that is installed)."""
    tool = shutil.which("systemd-analyze")
    redis_unit = os.path.join("/lib/systemd/system", theirs)
    if not tool or not os.path.exists(redis_unit):
        pytest.skip("systemd-analyze or Debian's %s missing" % theirs)
    shutil.copy(redis_unit, str(tmp_path / theirs))
    ours = exposure(tool, verify_copy(installed, name, str(tmp_path)), str(tmp_path))
    assert ours <= exposure(tool, str(tmp_path / theirs), str(tmp_path))


def test_systemd_analyze_verify_reports_a_bad_unit(installed, tmp_path):
    tool = shutil.which("systemd-analyze")
    if not tool:
        pytest.skip("systemd-analyze missing")
    unit = verify_copy(installed, "cairn.service", str(tmp_path))
    with open(unit) as f:
        text = f.read().replace("Type=notify", "Type=notifyy")
    with open(unit, "w") as f:
        f.write(text)
    r = run([tool, "verify", "--man=no", unit], cwd=str(tmp_path))
    assert "notifyy" in r.stdout + r.stderr


def test_man_page(installed):
    page = os.path.join(installed, PREFIX[1:], "share/man/man1/cairn-server.1")
    with open(page) as f:
        text = f.read()
    assert text.startswith('.\\" Generated by scripts/mkman.sh')
    assert re.search(r'^\.TH CAIRN-SERVER 1 "" "Cairn \d+\.\d+\.\d+" "User Commands"$', text, re.M)
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "CONFIGURATION", "OPTIONS", "EXAMPLES", "FILES"):
        assert re.search(r"^\.SH %s$" % section, text, re.M), section
    help_text = run([cairn_bin(), "--help"]).stderr
    # Every term of the help is an entry of the page.
    for term in re.findall(r"^  (\S.*)$", help_text, re.M):
        assert "\\fB%s\\fR" % term.replace("\\", "\\e").replace("-", "\\-") in text, term
    groff = shutil.which("groff")
    if groff:
        r = run([groff, "-man", "-Tutf8", "-ww", "-z", page])
        assert (r.returncode, r.stderr) == (0, "")


# --- running what was installed ---------------------------------------------

def wait_ready(notify, proc):
    """The datagrams the server sent to $NOTIFY_SOCKET up to READY=1."""
    notify.settimeout(0.1)
    deadline = time.monotonic() + START_TIMEOUT
    msgs = []
    while "READY=1" not in msgs:
        assert proc.poll() is None, "exited with %s" % proc.returncode
        assert time.monotonic() < deadline, "no READY=1: %s" % msgs
        try:
            msgs += notify.recv(4096).decode().splitlines()
        except socket.timeout:
            pass
    return msgs


def test_installed_server_runs_with_installed_config(installed, tmp_path):
    binary = os.path.join(installed, PREFIX[1:], "bin/cairn-server")
    data = tmp_path / "data"
    data.mkdir()
    # `dir` takes effect (chdir) while the file is read, as in Redis, so the
    # file's /var/lib/cairn must exist even when --dir overrides it later:
    # run a copy of the installed file with only that line changed.
    with open(os.path.join(installed, "etc/cairn/cairn.conf")) as f:
        text = f.read()
    assert text.count("\ndir /var/lib/cairn\n") == 1
    conf = str(tmp_path / "cairn.conf")
    with open(conf, "w") as f:
        f.write(text.replace("\ndir /var/lib/cairn\n", "\ndir %s\n" % data))
    log = tmp_path / "cairn.log"
    pidfile = tmp_path / "cairn.pid"
    sock_path = str(tmp_path / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(sock_path)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=sock_path)
    proc = subprocess.Popen([binary, conf, "--port", str(port), "--dir", str(data), "--logfile", str(log),
                             "--pidfile", str(pidfile), "--supervised", "systemd", "--daemonize", "no"],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        # The unit is Type=notify: systemd waits for this datagram.
        msgs = wait_ready(notify, proc)
        assert "STATUS=Ready to accept connections" in msgs
        r = redis.Redis(port=port, socket_timeout=10)
        assert r.ping()
        r.set("k", "v")
        assert r.get("k") == b"v"
        info = r.info("server")
        assert info["config_file"] == conf
        assert info["executable"] == binary
        assert info["process_supervised"] == "systemd"
        assert r.config_get("dir")["dir"] == str(data)
        assert r.config_get("maxclients")["maxclients"] == "10000"
        assert pidfile.read_text() == "%d\n" % proc.pid
        # SIGHUP and SIGPIPE are ignored, as by Redis.
        os.kill(proc.pid, signal.SIGHUP)
        os.kill(proc.pid, signal.SIGPIPE)
        assert r.ping()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "Ready to accept connections" in log.read_text()
    finally:
        notify.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- install over an existing config, uninstall -----------------------------

def test_uninstall_leaves_nothing_but_data():
    d = tempfile.mkdtemp(prefix="cairn-destdir-")
    try:
        make("install", DESTDIR=d, PREFIX=PREFIX)
        make("uninstall", DESTDIR=d, PREFIX=PREFIX)
        t = tree(d)
        assert files_only(t) == {}
        assert "etc/cairn" not in t  # the unchanged config and its directory went
        assert t["var/lib/cairn"] == ("d", 0o750) and t["var/log/cairn"] == ("d", 0o750)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_changed_config_survives_install_and_uninstall():
    d = tempfile.mkdtemp(prefix="cairn-destdir-")
    try:
        make("install", DESTDIR=d, PREFIX=PREFIX)
        conf = os.path.join(d, "etc/cairn/cairn.conf")
        with open(conf, "a") as f:
            f.write("maxmemory 100mb\n")
        with open(conf) as f:
            mine = f.read()
        dump = os.path.join(d, "var/lib/cairn/dump.rdb")
        with open(dump, "wb") as f:
            f.write(b"REDIS0010")
        logf = os.path.join(d, "var/log/cairn/cairn-server.log")
        with open(logf, "w") as f:
            f.write("log\n")
        # as the sentinel rewrites its file when it starts
        sconf = os.path.join(d, "etc/cairn/sentinel/sentinel.conf")
        with open(sconf, "a") as f:
            f.write("sentinel myid %s\n" % ("a" * 40))
        with open(sconf) as f:
            smine = f.read()
        r = make("install", DESTDIR=d, PREFIX=PREFIX)
        assert "keeping the existing %s/etc/cairn/cairn.conf" % d in r.stdout
        assert "keeping the existing %s/etc/cairn/sentinel/sentinel.conf" % d in r.stdout
        with open(conf) as f:
            assert f.read() == mine
        make("uninstall", DESTDIR=d, PREFIX=PREFIX)
        assert set(files_only(tree(d))) == {"etc/cairn/cairn.conf", "etc/cairn/sentinel/sentinel.conf",
                                            "var/lib/cairn/dump.rdb", "var/log/cairn/cairn-server.log"}
        with open(conf) as f:
            assert f.read() == mine
        with open(sconf) as f:
            assert f.read() == smine
    finally:
        shutil.rmtree(d, ignore_errors=True)


# --- --version, --help, --check-system --------------------------------------

@pytest.mark.parametrize("flag", ["-v", "--version"])
def test_version_line(flag, server):
    r = run([cairn_bin(), flag])
    assert (r.returncode, r.stderr) == (0, "")
    m = VERSION_RE.match(r.stdout)
    assert m, r.stdout
    version, sha, dirty, malloc, bits, build = m.groups()
    client = server.client()
    client.response_callbacks.pop("INFO", None)
    raw = client.execute_command("INFO", "server", "memory")
    raw = raw.decode() if isinstance(raw, bytes) else raw
    info = dict(line.split(":", 1) for line in raw.split("\r\n") if ":" in line)
    assert info["cairn_version"] == version
    assert info["redis_git_sha1"] == sha
    assert info["redis_git_dirty"] == dirty
    assert info["redis_build_id"] == build
    assert info["mem_allocator"] == malloc
    assert re.match(r"^(jemalloc-\d+\.\d+\.\d+|libc)$", malloc)
    assert bits == info["arch_bits"] == "64"


def test_version_line_has_redis_shape():
    ours = run([cairn_bin(), "--version"]).stdout
    theirs = run(["redis-server", "--version"]).stdout
    fields = lambda s: [f.split("=")[0] for f in s.split() if "=" in f]
    assert fields(ours) == fields(theirs) == ["v", "sha", "malloc", "bits", "build"]


def test_buildinfo_outside_git(tmp_path):
    """A tree without git (a tarball) reports commit 00000000."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(os.path.join(ROOT, "scripts/buildinfo.sh"), str(tmp_path / "scripts"))
    out = tmp_path / "gen.h"
    r = run(["sh", str(tmp_path / "scripts/buildinfo.sh"), str(out)],
            env=dict(os.environ, GIT_CEILING_DIRECTORIES=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert '#define CAIRN_GIT_SHA1 "00000000"' in text
    assert "#define CAIRN_GIT_DIRTY 0" in text
    assert re.search(r'#define CAIRN_BUILD_ID "[0-9a-f]{16}"', text)


def test_buildinfo_in_git(tmp_path):
    if not shutil.which("git") or run(["git", "-C", ROOT, "rev-parse", "HEAD"]).returncode:
        pytest.skip("not a git checkout")
    head = run(["git", "-C", ROOT, "rev-parse", "HEAD"]).stdout.strip()
    out = tmp_path / "gen.h"
    assert run(["sh", os.path.join(ROOT, "scripts/buildinfo.sh"), str(out)]).returncode == 0
    first = out.read_text()
    assert '#define CAIRN_GIT_SHA1 "%s"' % head[:8] in first
    # Unchanged commit and dirty state: the header is left alone.
    os.utime(str(out), (1, 1))
    assert run(["sh", os.path.join(ROOT, "scripts/buildinfo.sh"), str(out)]).returncode == 0
    assert out.stat().st_mtime == 1 and out.read_text() == first


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(flag):
    r = run([cairn_bin(), flag])
    oracle = run(["redis-server", flag])
    # As redis-server: the usage on standard error, exit status 1.
    assert (r.returncode, r.stdout) == (oracle.returncode, oracle.stdout) == (1, "")
    lines = r.stderr.splitlines()
    assert lines[0] == "Usage: cairn-server [/path/to/cairn.conf] [--name value ...] [-]"
    assert lines[1:4] == ["       cairn-server -v | --version", "       cairn-server -h | --help",
                          "       cairn-server --check-system"]
    for section in ("Configuration:", "Options:", "Examples:", "Files:", "Signals:"):
        assert section in lines
    assert "  -" in lines  # standard input
    assert "  echo 'maxmemory 128mb' | cairn-server -" in lines


def kernel_expectations():
    def read(p):
        try:
            with open(p) as f:
                return f.read().strip()
        except OSError:
            return None
    exp = {}
    v = read("/proc/sys/vm/overcommit_memory")
    exp["overcommit"] = "skipped" if v is None else ("OK" if v == "1" else "WARNING:")
    v = read("/sys/kernel/mm/transparent_hugepage/enabled")
    exp["THP"] = "skipped" if v is None else ("WARNING:" if "[always]" in v else "OK")
    v = read("/proc/sys/net/core/somaxconn")
    exp["somaxconn"] = "skipped" if v is None else ("OK" if int(v) >= 511 else "WARNING:")
    return exp


def parse_check(out):
    verdicts, advice, name = {}, {}, None
    for line in out.splitlines():
        m = CHECK_RE.match(line)
        if m:
            name = m.group(1)
            verdicts[name] = m.group(2)
        else:
            assert name and verdicts[name] == "WARNING:", line
            advice[name] = advice.get(name, "") + line
    return verdicts, advice


def test_check_system():
    r = run([cairn_bin(), "--check-system"])
    assert r.stderr == ""
    verdicts, advice = parse_check(r.stdout)
    exp = kernel_expectations()
    assert verdicts == exp
    assert list(verdicts) == ["overcommit", "THP", "somaxconn"]
    assert r.returncode == (1 if "WARNING:" in exp.values() else 0)
    fixes = {"overcommit": "sysctl vm.overcommit_memory=1",
             "THP": "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
             "somaxconn": "sysctl net.core.somaxconn="}
    for name, text in advice.items():
        assert fixes[name] in text


def test_check_system_agrees_with_redis():
    ours, _ = parse_check(run([cairn_bin(), "--check-system"]).stdout)
    r = run(["redis-server", "--check-system"])
    theirs = {m.group(1): m.group(2) for m in map(CHECK_RE.match, r.stdout.splitlines()) if m}
    for name in ("overcommit", "THP"):
        if name in theirs:
            assert ours[name] == theirs[name], name


def test_sighup_and_sigpipe_ignored(server):
    with open("/proc/%d/status" % server.proc.pid) as f:
        ign = int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", f.read(), re.M).group(1), 16)
    assert ign & (1 << (signal.SIGHUP - 1)) and ign & (1 << (signal.SIGPIPE - 1))
    os.kill(server.proc.pid, signal.SIGHUP)
    assert server.client().ping()
