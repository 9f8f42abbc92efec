#!/bin/sh
# The HTTP gateway against Webdis (issue 37): `sh bench/http.sh`.
#
# Starts Cairn with http-port (CAIRN_BIN, default build/cairn-server), and
# Debian's webdis (WEBDIS_BIN) in front of redis-server (ORACLE_BIN), then
# runs wrk (Debian's wrk) with keep-alive at BENCH_HTTP_CONNS connections
# (16) for BENCH_HTTP_SECS seconds (5) per test and server, alternating
# which goes first each round (BENCH_HTTP_ROUNDS, 2).  Prints requests per
# second and server CPU per request (user + system time of the server's
# processes from /proc: Cairn alone; webdis and redis-server together).
set -eu
CAIRN_BIN=${CAIRN_BIN:-build/cairn-server}
WEBDIS_BIN=${WEBDIS_BIN:-webdis}
ORACLE_BIN=${ORACLE_BIN:-redis-server}
CONNS=${BENCH_HTTP_CONNS:-16}
SECS=${BENCH_HTTP_SECS:-5}
ROUNDS=${BENCH_HTTP_ROUNDS:-2}
for t in wrk "$WEBDIS_BIN" "$ORACLE_BIN"; do
  command -v "$t" >/dev/null 2>&1 || { echo "bench/http.sh: $t not found (scripts/deps.sh test, apt-get install wrk)" >&2; exit 1; }
done
TMP=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RP=$(port); CP=$(port); CH=$(port); WP=$(port)
"$ORACLE_BIN" --port "$RP" --save '' --appendonly no --daemonize no --logfile "$TMP/redis.log" &
REDIS=$!
"$CAIRN_BIN" --port "$CP" --http-port "$CH" --save '' --appendonly no --logfile "$TMP/cairn.log" &
CAIRN=$!
cat > "$TMP/webdis.json" <<EOF
{"redis_host":"127.0.0.1","redis_port":$RP,"http_host":"127.0.0.1","http_port":$WP,"threads":2,
 "pool_size":20,"daemonize":false,"database":0,"verbosity":0,"logfile":"$TMP/webdis.log"}
EOF
sleep 0.5
"$WEBDIS_BIN" "$TMP/webdis.json" &
WEBDIS=$!
trap 'kill $WEBDIS $CAIRN $REDIS 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
sleep 0.5
curl -s "http://127.0.0.1:$CH/SET/key/value" >/dev/null
curl -s "http://127.0.0.1:$WP/SET/key/value" >/dev/null

# CPU ticks (user + system) of the given pids.
ticks() { t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done; echo $t; }
HZ=$(getconf CLK_TCK)

run() { # name url pids...
  name=$1; url=$2; shift 2
  before=$(ticks "$@")
  out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" "$url")
  after=$(ticks "$@")
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  us=$(awk -v t=$((after - before)) -v hz="$HZ" -v n="$reqs" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
  printf '%-8s %-22s %12s req/s %8s us CPU/req\n' "$name" "$url_path" "$rps" "$us"
}

for r in $(seq 1 "$ROUNDS"); do
  for url_path in /GET/key /SET/key/value; do
    if [ $((r % 2)) = 1 ]; then
      run cairn "http://127.0.0.1:$CH$url_path" $CAIRN
      run webdis "http://127.0.0.1:$WP$url_path" $WEBDIS $REDIS
    else
      run webdis "http://127.0.0.1:$WP$url_path" $WEBDIS $REDIS
      run cairn "http://127.0.0.1:$CH$url_path" $CAIRN
    fi
  done
done
