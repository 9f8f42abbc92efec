"""The LD_PRELOAD fault shim (fault_shim.c) shared by the tests that make
the server's file writes or fsyncs fail: test_aof_durability.py (FAULT_CTL)
and test_rdb_faults.py / test_rdb_threads.py (CAIRN_FAULT_FLAG)."""
import os
import shutil
import subprocess

import pytest

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_shim.c")


def build_fault_shim(out_dir):
    """Compiles fault_shim.c into out_dir/fault_shim.so and returns that
    path; skips the test when there is no C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the fault shim")
    so = os.path.join(str(out_dir), "fault_shim.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", so, SOURCE, "-ldl"], check=True)
    return so
