"""Every fork child reports to its parent as Redis 7.0.15's do: a BGSAVE,
an AOF rewrite (RDB preamble or commands) and a replication full sync's
save (to disk or to the replicas' sockets).  While it runs INFO
persistence shows its progress (current_save_keys_processed,
current_fork_perc) and copy-on-write (current_cow_*); once it is done the
current_* fields go back to 0 and rdb_last_cow_size / aof_last_cow_size
keep its copy-on-write.  The log shows the same lines as Redis's, among
them the child's "DB saved on disk" (a disk save) and its last "Fork CoW
for RDB|AOF rewrite: ..." line.  Each kind runs on Cairn and redis-server
at the same time, slowed by rdb-key-save-delay (the child keeps its own
copy of it) so that it can be watched."""
import re

import pytest

from test_aof import wait_for

# Fewer keys than the 1024 between two progress checks: the first report
# comes right after the first key (Redis's) or batch of keys (Cairn's
# save threads), not only once 1024 are written.
KEYS = 600
SLOW = {"rdb-key-save-delay": "4000", "repl-diskless-sync-delay": "0"}
KINDS = ["bgsave", "aof-rdb", "aof-commands", "sync-disk", "sync-diskless"]
LAST = {"bgsave": "Background saving terminated with success",
        "aof-rdb": "Background AOF rewrite finished successfully",
        "aof-commands": "Background AOF rewrite finished successfully",
        "sync-disk": "Synchronization with replica", "sync-diskless": "Synchronization with replica"}
CURRENT = ("current_cow_peak", "current_cow_size", "current_cow_size_age", "current_fork_perc",
           "current_save_keys_processed", "current_save_keys_total")


def config(kind):
    cfg = dict(SLOW)
    if kind.startswith("aof"):
        cfg["aof-use-rdb-preamble"] = "yes" if kind == "aof-rdb" else "no"
    if kind.startswith("sync"):
        cfg["repl-diskless-sync"] = "yes" if kind == "sync-diskless" else "no"
    return cfg


class Run:
    """One server (and for a sync its replica) with a child of `kind`."""

    def __init__(self, start, kind):
        self.kind = kind
        self.srv = start(**config(kind))
        self.r = self.srv.client()
        pipe = self.r.pipeline(transaction=False)
        for i in range(KEYS):
            pipe.set("key:%d" % i, "v" * 100)
        pipe.execute()
        self.replica = start() if kind.startswith("sync") else None
        self.progress = None

    def start_child(self):
        if self.kind == "bgsave":
            self.r.bgsave()
        elif self.kind.startswith("aof"):
            self.r.bgrewriteaof()
        else:
            self.replica.client().replicaof(self.srv.host, self.srv.port)

    def poll(self):
        """Records INFO persistence once the child reported progress."""
        if self.progress is None:
            i = self.r.info("persistence")
            if i["current_save_keys_processed"] > 0:
                self.progress = i
        return self.progress is not None

    def done(self):
        """The child is reaped and the parent logged its last line."""
        i = self.r.info("persistence")
        if i["rdb_bgsave_in_progress"] or i["aof_rewrite_in_progress"]:
            return False
        return LAST[self.kind] in self.srv.log

    def log(self):
        return normalize(self.srv.log)


PREFIX = re.compile(r"^\d+:([A-Z]) \d+ \w+ \d+ [\d:.]+ (.) ")
FIRST = ("Background saving started", "Background append only file rewriting started",
         "Starting BGSAVE for SYNC")


def normalize(log):
    """The lines from the fork on, at notice level and above, with role
    (M parent, C child) and level kept, numbers and addresses blanked."""
    out = []
    for line in log.splitlines():
        m = PREFIX.match(line)
        if not m:
            continue
        text = line[m.end():]
        if not out and not any(text.startswith(f) for f in FIRST):
            continue
        text = re.sub(r"\d+\.\d+\.\d+\.\d+:\d+", "ADDR", text)
        text = re.sub(r"\d+", "N", text)
        out.append("%s %s %s" % (m.group(1), m.group(2), text))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_child_progress_cow_and_log_like_redis(start_server, start_oracle, kind):
    runs = [Run(start_server, kind), Run(start_oracle, kind)]
    for run in runs:
        run.start_child()
    # The first report comes after the first key; the child runs for
    # 2.4 s at least.
    wait_for(lambda: all([run.poll() for run in runs]), timeout=30, what="progress")
    for run in runs:
        i = run.progress
        assert i["current_save_keys_total"] == KEYS
        assert 0 < i["current_save_keys_processed"] <= KEYS
        assert 0 < i["current_fork_perc"] <= 100
        assert i["current_cow_peak"] >= i["current_cow_size"] > 0
        assert i["current_cow_size_age"] >= 0
        assert i["rdb_bgsave_in_progress" if kind in ("bgsave", "sync-disk", "sync-diskless")
                 else "aof_rewrite_in_progress"] == 1
    for run in runs:
        wait_for(run.done, timeout=60, what="child done")
    last = "aof_last_cow_size" if kind.startswith("aof") else "rdb_last_cow_size"
    other = "rdb_last_cow_size" if kind.startswith("aof") else "aof_last_cow_size"
    for run in runs:
        i = run.r.info("persistence")
        assert [i[k] for k in CURRENT] == [0] * len(CURRENT)
        assert i[last] > 0 and i[other] == 0
    logs = [run.log() for run in runs]
    assert logs[0] == logs[1]
    what = "AOF rewrite" if kind.startswith("aof") else "RDB"
    assert "C * Fork CoW for %s: current N MB, peak N MB, average N MB" % what in logs[0]
    assert ("C * DB saved on disk" in logs[0]) == (kind in ("bgsave", "sync-disk"))
