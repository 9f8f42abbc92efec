#!/bin/sh
# Install the Debian packages Cairn needs, only those that are missing.
# Usage: sh scripts/deps.sh build|test
set -u
BUILD_PKGS="gcc make libc6-dev libjemalloc-dev pkg-config liblzf-dev liburing-dev libssl-dev openssl liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libluajit-5.1-dev libxxhash-dev"
TEST_PKGS="$BUILD_PKGS python3 python3-pytest python3-pytest-xdist python3-redis python3-xxhash redis-server redis-sentinel redis-tools libcmocka-dev valgrind systemd man-db nodejs webdis python3-websocket wrk chromium chromium-driver python3-selenium python3-msgpack"

case "${1:-}" in
  build) PKGS=$BUILD_PKGS ;;
  test)  PKGS=$TEST_PKGS ;;
  *) echo "usage: sh scripts/deps.sh build|test" >&2; exit 2 ;;
esac

# BullMQ and ioredis (npm; the nodejs package brings npm, Debian's own npm
# package conflicts with it) for tests/integration/test_bullmq.py, and
# node-redis v4 (as `redis4`: bullmq 6 names redis >= 5 as an optional
# peer) for test_tls.py, into build/npm: run
# after the Debian packages; a failure (no network) only skips that test.
npm_deps() {
  [ "$1" = test ] || return 0
  command -v npm >/dev/null 2>&1 || return 0
  [ -d build/npm/node_modules/bullmq ] && [ -d build/npm/node_modules/ioredis ] &&
    [ -d build/npm/node_modules/redis4 ] && return 0
  mkdir -p build/npm && cp tests/integration/bullmq/package.json build/npm/ &&
    (cd build/npm && npm install --no-audit --no-fund --loglevel=error >/dev/null 2>&1) ||
    echo "deps.sh: npm install failed; test_bullmq.py and the node clients in test_tls.py will skip" >&2
  return 0
}

# Redis 8 and Valkey 9 from Debian sid (verified .debs extracted into
# build/oracles, run with sid's own loader; nothing installed) for
# tests/integration/test_newer_oracles.py; a failure only skips those tests.
newer_oracles() {
  [ "$1" = test ] || return 0
  sh scripts/newer_oracles.sh --quiet ||
    echo "deps.sh: scripts/newer_oracles.sh failed; test_newer_oracles.py will skip" >&2
  return 0
}

missing=""
for p in $PKGS; do
  if ! dpkg -s "$p" >/dev/null 2>&1 || \
     ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  npm_deps "$1"
  newer_oracles "$1"
  exit 0
fi

echo "deps.sh: missing packages:$missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps.sh: apt-get not found (not Debian/Ubuntu); install these yourself:$missing" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "deps.sh: not root; run: sudo apt-get install -y$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q || exit 1
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing || exit 1
npm_deps "$1"
newer_oracles "$1"
