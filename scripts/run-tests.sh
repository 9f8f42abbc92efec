#!/bin/sh
# Run every test suite and print, as the very last line, "N passed, N failed,
# N skipped" (pytest prints each skip's reason: -rs).
# Called by `make test` after it has built build/cairn-server,
# build/cairn-server-san and build/tests/test_*.  Exit 1 if anything failed.
#
# Env: CAIRN_BIN (default build/cairn-server), CAIRN_SAN_BIN (default
#      build/cairn-server-san), SAN_DIFF_COMMANDS (default 4000),
#      PYTEST_ARGS (extra pytest args), PYTEST_JOBS (parallel pytest
#      workers, default 4, needs pytest-xdist), SKIP_SAN=1 to skip the sanitizer pass,
#      FUZZ_CMD_SECONDS (default 60) for the command fuzzer in that pass,
#      FUZZ_SEED to replay one of its runs.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
PASSED=0
FAILED=0
SKIPPED=0
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cairn-tests.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT INT TERM

add() { PASSED=$((PASSED + $1)); FAILED=$((FAILED + $2)); SKIPPED=$((SKIPPED + ${3:-0})); }

# --- layer order (scripts/check-layers.sh) ----------------------------------
# The tree must pass; a copy with one include pointing up must fail (so the
# check itself is known to work).
echo "== layers: scripts/check-layers.sh"
if sh scripts/check-layers.sh src build/obj/src; then add 1 0; else add 0 1; fi
mkdir -p "$TMPD/layers/src/db"
printf '#include "server/process.h"\n' >"$TMPD/layers/src/db/bad.c"
if sh scripts/check-layers.sh "$TMPD/layers/src" "$TMPD/layers/none" >/dev/null; then
  echo "   check-layers.sh accepted db including server"
  add 0 1
else
  add 1 0
fi

# --- unit tests (cmocka) ---------------------------------------------------
for t in build/tests/test_* build-san/tests/test_*; do
  [ -f "$t" ] && [ -x "$t" ] || continue
  echo "== unit: $t"
  CMOCKA_MESSAGE_OUTPUT=stdout "$t" >"$TMPD/unit.out" 2>&1
  rc=$?
  cat "$TMPD/unit.out"
  p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$TMPD/unit.out" | tail -n 1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$TMPD/unit.out" | tail -n 1)
  # cmocka's skips (a test prints "skipped: <why>" before its skip()).
  sk=$(sed -n 's/^ *\([0-9][0-9]*\) SKIPPED TEST(S).*/\1/p' "$TMPD/unit.out" | tail -n 1)
  p=${p:-0}; f=${f:-0}; sk=${sk:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "   $t exited with status $rc without a cmocka failure summary (crash?)"
    f=1
  fi
  add "$p" "$f" "$sk"
done

# --- pytest runs -----------------------------------------------------------
# run_pytest NAME ARGS...: runs pytest with a junit report and adds its counts.
# Test files are independent (each test starts its own servers on free
# ports), and most of their time is spent waiting on sockets, so with
# pytest-xdist they run PYTEST_JOBS at a time (default 4; 1 runs in order).
# Two at a time left the 2-core machine 55% idle over the main pass (19 min);
# four take 12 min.
JOBS_ARGS=""
if [ "${PYTEST_JOBS:-4}" -gt 1 ] && "$PY" -c "import xdist" 2>/dev/null; then
  JOBS_ARGS="-n ${PYTEST_JOBS:-4}"
fi
run_pytest() {
  name=$1; shift
  xml="$TMPD/$name.xml"
  echo "== pytest ($name): $*"
  # shellcheck disable=SC2086
  "$PY" -m pytest -p no:cacheprovider -q -rfEs --junitxml="$xml" $JOBS_ARGS ${PYTEST_ARGS:-} "$@"
  rc=$?
  counts=$("$PY" - "$xml" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 1"); sys.exit()
state = {}
for tc in root.iter("testcase"):
    k = (tc.get("classname"), tc.get("name"))
    tags = {c.tag for c in tc}
    st = "f" if tags & {"failure", "error"} else ("s" if "skipped" in tags else "p")
    if state.get(k) != "f":
        state[k] = st if state.get(k) in (None, "p", "s") or st == "f" else state[k]
vals = list(state.values())
print(vals.count("p"), vals.count("f"), vals.count("s"))
PYEOF
)
  set -- $counts
  p=$1; f=$2; s=${3:-0}
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ] && [ "$f" -eq 0 ]; then
    echo "   pytest ($name) exited with status $rc"
    f=1
  fi
  add "$p" "$f" "$s"
}

CAIRN_BIN=${CAIRN_BIN:-$ROOT/build/cairn-server}
export CAIRN_BIN
if [ ! -x "$CAIRN_BIN" ] && ! command -v "$CAIRN_BIN" >/dev/null 2>&1; then
  echo "note: $CAIRN_BIN not found; integration and diff tests will fail"
fi
run_pytest main tests/integration tests/diff

# --- the LuaJIT engine (make LUA=luajit) -----------------------------------
# The whole scripting suite runs on the LuaJIT build too.
LJ_BIN=${CAIRN_LUAJIT_BIN:-$ROOT/build-luajit/cairn-server}
if [ -x "$LJ_BIN" ]; then
  CAIRN_BIN=$LJ_BIN run_pytest luajit tests/integration/test_scripting.py \
    tests/integration/test_script_libs.py tests/integration/test_script_busy.py \
    tests/integration/test_functions.py tests/integration/test_script_resp_matrix.py
else
  echo "note: $LJ_BIN not built; LuaJIT pass skipped"
fi

# --- sanitizer pass --------------------------------------------------------
SAN_BIN=${CAIRN_SAN_BIN:-$ROOT/build/cairn-server-san}
if [ "${SKIP_SAN:-0}" = 1 ]; then
  echo "note: SKIP_SAN=1, sanitizer pass skipped"
elif [ -x "$SAN_BIN" ]; then
  ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0:detect_leaks=1:print_summary=1}
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export ASAN_OPTIONS UBSAN_OPTIONS
  CAIRN_BIN=$SAN_BIN DIFF_COMMANDS=${SAN_DIFF_COMMANDS:-4000} \
    run_pytest sanitizer tests/integration/test_protocol.py tests/integration/test_multi.py \
      tests/integration/test_blocking.py tests/integration/test_pubsub.py \
      tests/integration/test_scripting.py tests/integration/test_script_libs.py \
      tests/integration/test_functions.py tests/integration/test_script_resp_matrix.py tests/integration/test_keys.py \
      tests/integration/test_client.py tests/integration/test_hll.py \
      tests/integration/test_geo.py tests/integration/test_security.py tests/integration/test_aof.py \
      tests/integration/test_dump.py tests/integration/test_dump_sanitize.py tests/integration/test_pack.py \
      tests/integration/test_rdb_faults.py tests/integration/test_rdb_threads.py tests/integration/test_streams.py \
      tests/integration/test_hashes.py tests/integration/test_sets.py tests/integration/test_zsets.py \
      tests/integration/test_hash_field_ttl.py \
      tests/integration/test_entry_expire_once.py tests/integration/test_compat_blocking.py \
      tests/integration/test_compat_scripts.py tests/integration/test_compat_persist.py \
      tests/integration/test_compat_memory.py tests/integration/test_compat_config.py \
      tests/integration/test_compat_debug.py tests/integration/test_compat_repl.py tests/integration/test_modules.py \
      tests/integration/test_modules_block.py tests/integration/test_modules_sys.py \
      tests/diff
  # The command fuzzer: random commands from the server's own COMMAND table
  # for a bounded time; one pass or one failure (it prints the seed).
  echo "== command fuzzer: $SAN_BIN, ${FUZZ_CMD_SECONDS:-60}s"
  if "$PY" tests/fuzz/cmdfuzz.py --server "$SAN_BIN" --seconds "${FUZZ_CMD_SECONDS:-60}"; then
    add 1 0
  else
    add 0 1
  fi
else
  echo "note: $SAN_BIN not built; sanitizer pass skipped"
fi

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
