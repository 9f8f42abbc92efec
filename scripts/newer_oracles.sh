#!/bin/sh
# Provide the newer oracles in build/oracles/ (redis8: Redis 8.0 from Debian
# sid's redis-tools; valkey9: Valkey 9.1 from sid's valkey-tools) for
# tests/integration/test_newer_oracles.py, without installing anything:
# the .debs (the server and exactly the shared libraries its DT_NEEDED
# closure names, libc6 and its loader included) are verified against sid's
# Packages index (itself checked against the signed InRelease), extracted
# with dpkg-deb -x and run through wrappers using sid's own loader.
# Idempotent (cached in build/oracles).  Usage: sh scripts/newer_oracles.sh [redis8] [valkey9]
# Exit 0 when all requested oracles are ready; otherwise 1 and the tests
# that need them skip, naming this script.
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for t in dpkg-deb readelf; do
  command -v "$t" >/dev/null 2>&1 || { echo "newer_oracles.sh: $t missing (dpkg, binutils)" >&2; exit 1; }
done
exec "$PY" scripts/newer_oracles.py "$@"
