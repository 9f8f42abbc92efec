"""BullMQ's own flow end to end against Cairn: a Queue adds a normal, a
delayed, a prioritised job and one that fails once then succeeds through
`attempts`/`backoff`; a Worker processes them; QueueEvents sees every
`completed`; getJobCounts agrees.  BullMQ drives Lua scripts, streams (its
event stream, XREAD BLOCK) and sorted sets.  The npm packages are installed
into build/npm by `scripts/deps.sh test` (make test's dependency step); the
test skips when node or the packages are missing."""
import json
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NPM_DIR = os.path.join(ROOT, "build", "npm")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bullmq", "e2e.js")


def test_bullmq_queue_worker_events(server):
    node = shutil.which("node") or shutil.which("nodejs")
    if not node or not os.path.isdir(os.path.join(NPM_DIR, "node_modules", "bullmq")):
        pytest.skip("node or bullmq missing (run: sh scripts/deps.sh test)")
    env = dict(os.environ, PORT=str(server.port), NODE_PATH=os.path.join(NPM_DIR, "node_modules"))
    r = subprocess.run([node, SCRIPT], env=env, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["completed"] == 4
    assert summary["counts"]["completed"] == 4 and summary["counts"]["failed"] == 0
    assert summary["results"]["retry"]["attemptsMade"] == 2
    assert summary["attempts"] == {"normal": 1, "delayed": 1, "prio": 1, "retry": 2}
    assert not server.sanitizer_report()
