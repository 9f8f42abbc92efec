#!/bin/sh
# make bench: throughput, memory and instruction-count comparison of Cairn
# (CAIRN_BIN, default build/cairn-server) against Debian's redis-server.
# See bench/README.md for the environment knobs.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for t in redis-benchmark redis-cli; do
  command -v "$t" >/dev/null 2>&1 || { echo "bench: $t not found (sh scripts/deps.sh test)"; exit 1; }
done
# The persistence figures (SAVE/load per dataset shape, BGSAVE fork and
# copy-on-write) are bench/persist.py: `sh bench/run.sh persist`, and after
# the others in `all`.  A BGSAVE under 16 overwriting clients (peak PSS of
# the server and its children over the dataset's, writes/s during the save)
# is bench/snapshot.py: `sh bench/run.sh snapshot` (issue 42); not in `all`.
# Tail latency measured by the servers themselves (INFO latencystats,
# LATENCY HISTOGRAM, SLOWLOG) and big values by CPU per request are
# bench/latency_inside.py: `sh bench/run.sh inside [stalls|big] [--keys N ...]`.
# The cluster figures (3-primary GET/SET instructions under callgrind,
# reshard wall time, memory per key) are bench/cluster.py:
# `sh bench/run.sh cluster [instructions|migrate|memory|all]`; not in `all`.
case "${1:-all}" in
  cluster) shift; exec "$PY" bench/cluster.py "$@" ;;
  persist|saveload|fork) exec "$PY" bench/persist.py "$1" ;;
  snapshot) exec "$PY" bench/snapshot.py ;;
  inside) shift; exec "$PY" bench/latency_inside.py "$@" ;;
  all) "$PY" bench/bench.py all; exec "$PY" bench/persist.py persist ;;
  *) exec "$PY" bench/bench.py "${1:-all}" ;;
esac
