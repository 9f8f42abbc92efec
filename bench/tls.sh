#!/bin/sh
# bench/tls.sh: Cairn (CAIRN_BIN, default build/cairn-server) and Debian's
# redis-server side by side over TLS (issue 35), in one run:
#   - instructions per request under callgrind for GET and SET at P1 and
#     P16 (50 redis-benchmark --tls clients, TLS_N requests, default 20000),
#     each run minus a run of 50 requests, which has the same 50 full
#     handshakes and start-up;
#   - instructions per full handshake (the 50-request run minus an idle one,
#     over 50);
#   - requests per second (redis-benchmark --tls -q, not under callgrind;
#     noisy on a shared machine, and at P1 the client is the bottleneck);
#   - server CPU per new connection with session resumption (TLS 1.2 and
#     1.3): bench/tls_resume.py opens TLS_RESUME_N connections (default
#     3000) at TLS_RESUME_RATE per second (default 1000), each resuming a
#     session and doing one PING, and reads the server's utime+stime from
#     /proc; TLS_RESUME_ROUNDS rounds (default 3) alternate the servers.
#     then the same under callgrind: instructions per resumed connection
#     (a run of 400 connections minus one of 100, over 300), which the
#     machine's load does not change.  `sh bench/tls.sh resume` runs only
#     this part.
# Certificates are made with openssl in a temporary directory.
set -u
cd "$(dirname "$0")/.." || exit 1
CAIRN=${CAIRN_BIN:-build/cairn-server}
REDIS=${ORACLE_BIN:-redis-server}
N=${TLS_N:-20000}
for t in valgrind openssl redis-benchmark redis-cli "$REDIS"; do
  command -v "$t" >/dev/null 2>&1 || [ -x "$t" ] || { echo "bench/tls: $t not found"; exit 1; }
done
D=$(mktemp -d /tmp/cairn-tls-bench.XXXXXX)
trap 'rm -rf "$D"' EXIT INT TERM
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$D/ca.key" -out "$D/ca.crt" -days 2 -subj /CN=BenchCA 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$D/s.key" -out "$D/s.csr" -subj /CN=localhost 2>/dev/null
openssl x509 -req -in "$D/s.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial -out "$D/s.crt" -days 2 2>/dev/null
TLSARGS="--tls-cert-file $D/s.crt --tls-key-file $D/s.key --tls-ca-cert-file $D/ca.crt --tls-auth-clients no"
CLI="--tls --cacert $D/ca.crt"

free_port() { /usr/bin/python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])"; }

# run BIN N P TEST [callgrind]: prints the instructions (callgrind) or the
# requests per second.
run() {
  port=$(free_port)
  out="$D/cg.$$.out"
  if [ "${5:-}" = cg ]; then
    valgrind --tool=callgrind --callgrind-out-file="$out" "$1" --port 0 --tls-port "$port" $TLSARGS \
      --save "" --appendonly no --logfile "$D/log" >/dev/null 2>&1 &
  else
    "$1" --port 0 --tls-port "$port" $TLSARGS --save "" --appendonly no --logfile "$D/log" >/dev/null 2>&1 &
  fi
  pid=$!
  i=0
  until redis-cli $CLI -p "$port" ping >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "bench/tls: $1 did not start" >&2; kill $pid; return 1; }
    sleep 0.2
  done
  rps=""
  if [ "$2" != 0 ]; then
    rps=$(redis-benchmark $CLI -p "$port" -t "$4" -n "$2" -c 50 -P "$3" -q 2>/dev/null | tr '\r' '\n' |
          grep "requests per second" | tail -1 | awk '{print $2}')
  fi
  redis-cli $CLI -p "$port" shutdown nosave >/dev/null 2>&1
  wait $pid
  if [ "${5:-}" = cg ]; then
    grep -E "^(summary|totals):" "$out" | head -1 | awk '{print $2}'
    rm -f "$out"
  else
    echo "$rps"
  fi
}

# resume BIN VERSION: prints tls_resume.py's line for a server started
# with session caching on (the default).
# resume BIN VERSION N cg: the server under callgrind; prints its
# instructions instead.
resume() {
  port=$(free_port)
  out="$D/cg.$$.out"
  if [ "${4:-}" = cg ]; then
    valgrind --tool=callgrind --callgrind-out-file="$out" "$1" --port 0 --tls-port "$port" $TLSARGS \
      --save "" --appendonly no --logfile "$D/log" >/dev/null 2>&1 &
  else
    "$1" --port 0 --tls-port "$port" $TLSARGS --save "" --appendonly no --logfile "$D/log" >/dev/null 2>&1 &
  fi
  pid=$!
  i=0
  until redis-cli $CLI -p "$port" ping >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "bench/tls: $1 did not start" >&2; kill $pid; return 1; }
    sleep 0.2
  done
  line=$(/usr/bin/python3 bench/tls_resume.py "$port" "$pid" "$D/ca.crt" "${3:-${TLS_RESUME_N:-3000}}" \
    "${TLS_RESUME_RATE:-1000}" "$2")
  redis-cli $CLI -p "$port" shutdown nosave >/dev/null 2>&1
  wait $pid
  if [ "${4:-}" = cg ]; then
    grep -E "^(summary|totals):" "$out" | head -1 | awk '{print $2}'
    rm -f "$out"
  else
    echo "$line"
  fi
}

resume_section() {
  echo "== TLS: server CPU per new connection with session resumption (N=${TLS_RESUME_N:-3000}," \
    "${TLS_RESUME_RATE:-1000}/s; us, resumed, conn/s)"
  printf "%-8s %-6s %24s %24s %6s\n" version round cairn redis ratio
  for v in 1.2 1.3; do
    ct=0; rt=0
    for round in $(seq "${TLS_RESUME_ROUNDS:-3}"); do
      c=$(resume "$CAIRN" $v); r=$(resume "$REDIS" $v)
      printf "%-8s %-6s %24s %24s\n" "TLS$v" "$round" "$c" "$r"
      ct=$(awk -v a="$ct" -v b="${c%% *}" 'BEGIN { print a + b }')
      rt=$(awk -v a="$rt" -v b="${r%% *}" 'BEGIN { print a + b }')
    done
    awk -v v="TLS$v" -v c="$ct" -v r="$rt" -v n="${TLS_RESUME_ROUNDS:-3}" 'BEGIN {
      printf "%-8s %-6s %24.1f %24.1f %6.2f\n", v, "mean", c / n, r / n, (r > 0 ? c / r : 0) }'
  done
  echo "== TLS: instructions per new connection with session resumption (callgrind, a run of 400" \
    "connections minus one of 100, over 300)"
  printf "%-8s %10s %10s %6s\n" version cairn redis ratio
  for v in 1.2 1.3; do
    c1=$(resume "$CAIRN" $v 100 cg); c4=$(resume "$CAIRN" $v 400 cg)
    r1=$(resume "$REDIS" $v 100 cg); r4=$(resume "$REDIS" $v 400 cg)
    awk -v v="TLS$v" -v c1="$c1" -v c4="$c4" -v r1="$r1" -v r4="$r4" 'BEGIN {
      a = (c4 - c1) / 300; b = (r4 - r1) / 300; printf "%-8s %10d %10d %6.2f\n", v, a, b, a / b }'
  done
}
[ "${1:-}" = resume ] && { resume_section; exit 0; }

echo "== TLS: instructions per request (callgrind, 50 clients, N=$N, handshakes subtracted)"
printf "%-10s %10s %10s %6s\n" test cairn redis ratio
for b in cairn redis; do
  bin=$CAIRN; [ $b = redis ] && bin=$REDIS
  eval "${b}_idle=\$(run $bin 0 1 get cg)"
  eval "${b}_hs=\$(run $bin 50 1 get cg)"
done
for t in get set; do
  for P in 1 16; do
    c=$(run "$CAIRN" "$N" $P $t cg)
    r=$(run "$REDIS" "$N" $P $t cg)
    awk -v t="$t P$P" -v c="$c" -v r="$r" -v ch="$cairn_hs" -v rh="$redis_hs" -v n="$N" 'BEGIN {
      a = (c - ch) / (n - 50); b = (r - rh) / (n - 50);
      printf "%-10s %10d %10d %6.2f\n", t, a, b, a / b }'
  done
done
awk -v ci="$cairn_idle" -v ch="$cairn_hs" -v ri="$redis_idle" -v rh="$redis_hs" 'BEGIN {
  printf "%-10s %10d %10d %6.2f\n", "handshake", (ch - ci) / 50, (rh - ri) / 50, (ch - ci) / (rh - ri) }'

echo "== TLS: requests per second (redis-benchmark --tls, 50 clients, N=$N)"
printf "%-10s %10s %10s\n" test cairn redis
for t in get set; do
  for P in 1 16; do
    printf "%-10s %10s %10s\n" "$t P$P" "$(run "$CAIRN" "$N" $P $t)" "$(run "$REDIS" "$N" $P $t)"
  done
done

resume_section
