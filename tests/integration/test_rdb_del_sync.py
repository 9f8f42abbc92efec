"""rdb-del-sync-files: a replica with persistence off (save "", no AOF)
removes the RDB file it received from its primary once loaded, as
redis-server 7.0.15 does; with the directive off, or with save points, the
file stays."""
import os

import pytest

from test_rdb import wait_for


def synced(r):
    i = r.info("replication")
    return i.get("master_link_status") == "up"


@pytest.mark.parametrize("kind,delete,save", [
    ("cairn", "yes", ""), ("cairn", "no", ""), ("cairn", "yes", "3600 1"), ("redis", "yes", "")])
def test_replica_removes_sync_file(start_server, start_oracle, kind, delete, save):
    primary = start_server()
    p = primary.client()
    p.set("k", "v")
    start = start_server if kind == "cairn" else start_oracle
    rep = start(**{"rdb-del-sync-files": delete, "save": save})
    r = rep.client()
    r.execute_command("REPLICAOF", primary.host, primary.port)
    assert wait_for(lambda: synced(r) and r.get("k") == b"v", timeout=30)
    path = os.path.join(rep.tmp, "dump.rdb")
    if delete == "yes" and save == "":
        assert wait_for(lambda: not os.path.exists(path))
        assert "Removing the RDB file obtained from the master" in rep.log
    else:
        assert os.path.exists(path)
