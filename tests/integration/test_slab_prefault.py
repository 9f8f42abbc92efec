"""The key-entry slabs are made resident ahead of need on the lazy-free
thread (src/ds/slab.h, "Prefaulting"), so the main thread does not take a
page fault about every 100 new keys inside its SETs; and an idle server
gives that memory back.

Evidence from the server process itself, not from timing: the main
thread's minor page faults (/proc/PID/task/PID/stat, field 10) while keys
are added, against the pages the new keys' slabs cover (without the
prefaulting each of those pages is first touched, so faulted, by the main
thread: 3,484 faults for 300,000 keys, 2,940 pages of slabs, against 542
with it; the rest are the same with or without), and the slab line of
MEMORY MALLOC-STATS (bytes prefaulted, resident ahead, idle give-backs)."""
import os
import re
import time

import pytest

KEYS = 300000
PAGE = os.sysconf("SC_PAGE_SIZE")


def main_faults(pid):
    with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def slab_line(r):
    stats = r.execute_command("MEMORY", "MALLOC-STATS").decode()
    for line in stats.splitlines():
        if line.startswith("--- Cairn key-entry slabs: "):
            m = re.search(r": (\d+) bytes held .*prefaulted (\d+) bytes, (\d+) resident ahead, "
                          r"(\d+) slabs not prefaulted, (\d+) idle give-backs", line)
            assert m, line
            held, pf, ahead, miss, trims = (int(x) for x in m.groups())
            return {"held": held, "prefaulted": pf, "ahead": ahead, "misses": miss, "trims": trims}
    raise AssertionError("no slab line in MEMORY MALLOC-STATS: %r" % stats[-300:])


@pytest.fixture
def cairn(start_server):
    srv = start_server()
    r = srv.client()
    if "cairn_version" not in r.info("server"):
        pytest.skip("Cairn's slab allocator (the oracle has none)")
    return srv, r


def fill(r, start, n, batch=2000):
    """SETs of n new keys, pipelined in batches; a short pause between
    batches lets the lazy-free thread run on a busy machine (each batch
    queues nothing new unless a watermark is crossed)."""
    p = r.pipeline(transaction=False)
    for i in range(start, start + n):
        p.set("key:%09d" % i, "xxxxxxxxxx")
        if (i - start) % batch == batch - 1:
            assert all(p.execute())
            time.sleep(0.002)
    assert all(p.execute())


def test_new_keys_do_not_fault_on_the_main_thread(cairn):
    srv, r = cairn
    fill(r, 0, 2000)  # the timer has ticked (it sets the hook), tables exist
    time.sleep(0.3)
    before = slab_line(r)
    f0 = main_faults(srv.pid)
    fill(r, 2000, KEYS)
    faults = main_faults(srv.pid) - f0
    after = slab_line(r)
    grown = after["held"] - before["held"]
    slab_pages = grown // PAGE
    assert slab_pages >= KEYS * 40 // PAGE, (before, after)
    # The slabs' pages were made resident by the other thread (the bytes
    # prefaulted and since handed out as slabs) ...
    used = (after["prefaulted"] - after["ahead"]) - (before["prefaulted"] - before["ahead"])
    assert used >= grown * 3 // 4, (before, after)
    # ... so the main thread faulted on a small fraction of them (it would
    # fault on every one of them without prefaulting, plus the key table's
    # and buffers' own pages).
    assert faults < slab_pages // 3, (faults, slab_pages, before, after)
    assert after["ahead"] <= 4 << 20, after
    assert r.dbsize() == KEYS + 2000
    got = r.mget(["key:%09d" % i for i in range(0, KEYS + 2000, 997)])
    assert got == [b"xxxxxxxxxx"] * len(got)


def test_idle_server_gives_the_prefaulted_memory_back(cairn):
    srv, r = cairn
    fill(r, 0, 60000)
    first = slab_line(r)
    assert first["prefaulted"] > 0, first
    # Bounded wait: the give-back comes about 1 s after the last new slab
    # (checked on each timer tick, hz 10).
    end = time.monotonic() + 10
    cur = slab_line(r)
    while (cur["ahead"] or cur["trims"] == first["trims"]) and time.monotonic() < end:
        time.sleep(0.1)
        cur = slab_line(r)
    assert cur["ahead"] == 0, (first, cur)
    assert cur["trims"] > first["trims"] or first["ahead"] == 0, (first, cur)
    # The slots are untouched by the give-back, and new keys still work
    # (prefaulting starts again from the small size).
    got = r.mget(["key:%09d" % i for i in range(0, 60000, 499)])
    assert got == [b"xxxxxxxxxx"] * len(got)
    fill(r, 60000, 30000)
    assert r.dbsize() == 90000
    assert r.get("key:%09d" % 89999) == b"xxxxxxxxxx"
    assert slab_line(r)["ahead"] <= 4 << 20


def test_keys_with_a_ttl_do_not_fault_on_the_main_thread(cairn):
    """With a TTL each key also takes a slot in the TTL index, whose 32 KB
    chunks (ds/chunkvec) are made resident on the other thread past their
    first page (prefaultLater): the main thread faults on few of the slab
    and chunk pages (without either: 16,024 faults for 1M keys)."""
    srv, r = cairn
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.set("ttl:%09d" % i, "xxxxxxxxxx", ex=100000)
    assert all(p.execute())
    time.sleep(0.3)
    before = slab_line(r)
    f0 = main_faults(srv.pid)
    for start in range(2000, 2000 + KEYS, 2000):
        for i in range(start, start + 2000):
            p.set("ttl:%09d" % i, "xxxxxxxxxx", ex=100000)
        assert all(p.execute())
        time.sleep(0.002)
    faults = main_faults(srv.pid) - f0
    after = slab_line(r)
    pages = (after["held"] - before["held"] + KEYS * 8) // PAGE
    assert faults < pages // 3, (faults, pages, before, after)
    assert r.info("keyspace")["db0"]["expires"] == KEYS + 2000


def test_refill_after_flush_does_not_fault_on_the_main_thread(cairn):
    """FLUSHALL hands every slab back (its pages go to the system, its
    address range to the stack of reusable ones); the keys added next
    reuse those slabs, which are made resident again ahead of reuse."""
    srv, r = cairn
    fill(r, 0, KEYS)
    held = slab_line(r)["held"]
    assert r.flushall()
    assert slab_line(r)["held"] < held // 10
    fill(r, 0, 2000)
    time.sleep(0.3)
    before = slab_line(r)
    f0 = main_faults(srv.pid)
    fill(r, 2000, KEYS)
    faults = main_faults(srv.pid) - f0
    after = slab_line(r)
    slab_pages = (after["held"] - before["held"]) // PAGE
    assert slab_pages >= KEYS * 40 // PAGE, (before, after)
    assert after["misses"] - before["misses"] <= 8, (before, after)
    assert faults < slab_pages // 3, (faults, slab_pages, before, after)
    assert r.dbsize() == KEYS + 2000
