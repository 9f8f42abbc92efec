#!/bin/sh
# Issue 39's native commands against the Lua scripts they replace:
# instructions per operation under callgrind, each pair on its own run of
# bench.py (fill39 first: it fills every key and loads every script, so
# neither side of a pair counts a fill), Cairn only (a copy of the binary:
# callgrind starts it again for every step).  Usage:
#   sh bench/native39.sh [pair ...]     (default: all pairs below)
# Environment: CAIRN_BIN (default build/cairn-server), BENCH_CG_N (5000),
# BENCH_CG_PIPELINE (16).
set -u
cd "$(dirname "$0")/.." || exit 1
bin=$(mktemp /tmp/cairn-native39.XXXXXX)
cp "${CAIRN_BIN:-build/cairn-server}" "$bin" && chmod 755 "$bin"
pairs=${*:-"incrbybound,evalsha_incrbound incrbyfloatbound,evalsha_floatbound zadd_maxlen,evalsha_capped ztrim,evalsha_ztrim zpopdue,evalsha_popdue clthrottle,evalsha_gcra rllog,evalsha_window expiremember,evalsha_expiremember sismember_mttl,evalsha_sismember_mttl"}
for p in $pairs; do
  CAIRN_BIN=$bin ORACLE_BIN=$bin BENCH_CG_SINGLE=1 BENCH_CG_N=${BENCH_CG_N:-5000} \
    BENCH_CG_TESTS=fill39,$p sh bench/run.sh instructions 2>/dev/null | grep -v '^$'
done
rm -f "$bin"
