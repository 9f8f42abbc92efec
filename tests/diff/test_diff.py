"""Differential tests: identical seeded command streams go to Cairn
(CAIRN_BIN, default build/cairn-server) and to Debian's redis-server; every
reply must match.  Env:
  DIFF_COMMANDS  total commands across all areas (default 20000)
  DIFF_SEED      base seed (default 1); each area uses seed + area index
  DIFF_AREAS     comma list to restrict areas
  DIFF_NO_SHRINK=1 to skip shrinking
  DIFF_OTHER_TYPES=all  always mix in LPUSH/SADD/HSET/ZADD (default: only
                 those the server under test lists in COMMAND INFO)
On mismatch the report shows the seed, the command, both replies and a
shrunk reproducer.  Run a single area: pytest tests/diff -k strings
"""
import os
import random
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diffcore import Conn, check_stream  # noqa: E402
from generators import ALL_OTHER_TYPES, AREA_COMMANDS, AREAS, enable_other_types  # noqa: E402

TOTAL = int(os.environ.get("DIFF_COMMANDS", "20000"))
SEED = int(os.environ.get("DIFF_SEED", "1"))
SELECTED = [a for a in os.environ.get("DIFF_AREAS", ",".join(AREAS)).split(",") if a]
BASE_AREAS = [a for a in SELECTED if a not in AREA_COMMANDS]
PER_AREA = max(1, TOTAL // max(1, len(BASE_AREAS)))


def area_length(area):
    """Stream length: a type module's own COMMANDS unless DIFF_COMMANDS is
    set, in which case every area gets its even share."""
    if area in AREA_COMMANDS and "DIFF_COMMANDS" not in os.environ:
        return AREA_COMMANDS[area]
    return PER_AREA


def probe_other_types(srv):
    """Keep only the non-string type commands the server under test knows
    (DIFF_OTHER_TYPES=all forces all of them)."""
    if os.environ.get("DIFF_OTHER_TYPES") == "all":
        enable_other_types(ALL_OTHER_TYPES)
        return
    c = Conn(srv.host, srv.port)
    try:
        have = []
        for name in ALL_OTHER_TYPES:
            r = c.call(b"COMMAND", b"INFO", name)
            if r[0] == b"*" and r[1] and r[1][0][1] is not None:
                have.append(name)
        enable_other_types(have)
        missing = set(ALL_OTHER_TYPES) - set(have)
        if missing:
            print("note: server lacks %s; not mixed into the streams"
                  % b",".join(sorted(missing)).decode())
    finally:
        c.close()


@pytest.mark.parametrize("area", list(AREAS))
def test_diff_area(pair, area):
    if area not in SELECTED:
        pytest.skip("not in DIFF_AREAS")
    a, b = pair
    probe_other_types(a)
    seed = SEED + list(AREAS).index(area)
    rng = random.Random(seed)
    cmds = AREAS[area](rng, area_length(area), int(time.time()))
    label = "area=%s seed=%d (DIFF_SEED=%d) n=%d" % (area, seed, SEED, len(cmds))
    report = check_stream((a.host, a.port), (b.host, b.port), cmds, label)
    assert report is None, "\n" + report
