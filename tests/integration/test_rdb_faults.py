"""Faults while saving, injected: an LD_PRELOAD shim failing write or
fsync of the temporary RDB file with ENOSPC or EIO (fault_shim.c), a full
small tmpfs (when this container may mount one), a directory that went
away, and kill -9 of the save child.  Each time the previous dump.rdb
survives byte for byte, no temp file is left, the error is logged and
shows in INFO (rdb_last_bgsave_status:err), writes get MISCONF while
stop-writes-on-bgsave-error is on, and the next good save clears it."""
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest
import redis

from test_rdb import raw_client, wait_for
from faulthelp import build_fault_shim

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def shim():
    d = tempfile.mkdtemp(prefix="cairn-shim-")
    try:
        yield build_fault_shim(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def status(r):
    return r.info("persistence")["rdb_last_bgsave_status"]


def bgsave_and_wait(r):
    assert r.execute_command("BGSAVE") == b"Background saving started"
    assert wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=30)


def no_temp_files(d):
    return not [n for n in os.listdir(d) if n.startswith("temp-")]


def misconf_then_recovers(r, recover):
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        r.set("x", "1")
    recover()
    bgsave_and_wait(r)
    assert status(r) == "ok"
    assert r.set("x", "1")


def started_with_shim(start_server, monkeypatch, shim, tmp_path, **env):
    flag = str(tmp_path / "fault-on")
    monkeypatch.setenv("LD_PRELOAD", shim)
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    monkeypatch.setenv("CAIRN_FAULT_FLAG", flag)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    s = start_server(save="3600 1")
    for k in ("LD_PRELOAD", "CAIRN_FAULT_FLAG") + tuple(env):
        monkeypatch.delenv(k)
    r = raw_client(s)
    r.set("a", "1")
    assert r.save()
    good = open(os.path.join(s.tmp, "dump.rdb"), "rb").read()
    r.set("b", "2")
    return s, r, flag, good


@pytest.mark.parametrize("var,err,text", [
    ("CAIRN_FAULT_WRITE", "ENOSPC", "No space left on device"),
    ("CAIRN_FAULT_WRITE", "EIO", "Input/output error"),
    ("CAIRN_FAULT_FSYNC", "EIO", "Input/output error"),
    ("CAIRN_FAULT_FSYNC", "ENOSPC", "No space left on device"),
])
def test_shim_faults(start_server, monkeypatch, shim, tmp_path, var, err, text):
    s, r, flag, good = started_with_shim(start_server, monkeypatch, shim, tmp_path, **{var: err})
    open(flag, "w").close()
    # The foreground save fails and says so.
    with pytest.raises(redis.ResponseError):
        r.save()
    # The background one too; INFO and the log show it.
    bgsave_and_wait(r)
    assert status(r) == "err"
    assert "Write error saving DB on disk: " + text in s.log
    assert "Background saving error" in s.log
    path = os.path.join(s.tmp, "dump.rdb")
    assert open(path, "rb").read() == good
    assert no_temp_files(s.tmp)
    misconf_then_recovers(r, lambda: os.unlink(flag))
    assert open(path, "rb").read() != good


def test_directory_gone(start_server, tmp_path):
    s = start_server(save="3600 1", **{"enable-protected-configs": "yes"})
    r = raw_client(s)
    r.set("a", "1")
    d = tmp_path / "data"
    d.mkdir()
    r.config_set("dir", str(d))
    assert r.save()
    # The working directory is removed under the server (root may write
    # anywhere, so a read-only mode would not stop it).
    (d / "dump.rdb").rename(tmp_path / "kept.rdb")
    d.rmdir()
    r.set("b", "2")
    bgsave_and_wait(r)
    assert status(r) == "err"
    assert re.search(r"Failed opening the temp RDB file temp-\d+\.rdb", s.log)
    misconf_then_recovers(r, lambda: r.config_set("dir", str(tmp_path)))
    assert (tmp_path / "dump.rdb").exists()


def try_mount_tmpfs(path, size):
    try:
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path],
                           capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0


def test_full_tmpfs(start_server, tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not try_mount_tmpfs(str(mnt), "256k"):
        pytest.skip("tmpfs cannot be mounted here")
    try:
        s = start_server(save="3600 1", **{"enable-protected-configs": "yes", "rdbcompression": "no"})
        r = raw_client(s)
        r.set("a", "1")
        r.config_set("dir", str(mnt))
        assert r.save()
        good = (mnt / "dump.rdb").read_bytes()
        r.set("big", "x" * (400 * 1024))  # more than the filesystem holds
        bgsave_and_wait(r)
        assert status(r) == "err"
        assert "No space left on device" in s.log
        assert (mnt / "dump.rdb").read_bytes() == good
        assert no_temp_files(str(mnt))
        misconf_then_recovers(r, lambda: r.config_set("dir", str(tmp_path)))
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_kill9_of_save_child(start_server):
    s = start_server(save="3600 1", **{"enable-debug-command": "yes"})
    r = raw_client(s)
    r.execute_command("DEBUG", "POPULATE", 2000)
    assert r.save()
    path = os.path.join(s.tmp, "dump.rdb")
    good = open(path, "rb").read()
    r.set("new", "1")
    r.config_set("rdb-key-save-delay", 2000)
    assert r.execute_command("BGSAVE") == b"Background saving started"
    pid = int(re.findall(r"Background saving started by pid (\d+)", s.log)[-1])
    assert wait_for(lambda: any(n.startswith("temp-") for n in os.listdir(s.tmp)))
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)
    assert status(r) == "err"
    assert "Background saving terminated by signal 9" in s.log
    assert open(path, "rb").read() == good
    assert wait_for(lambda: no_temp_files(s.tmp))
    r.config_set("rdb-key-save-delay", 0)
    misconf_then_recovers(r, lambda: None)
