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
#     noisy on a shared machine, and at P1 the client is the bottleneck).
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
