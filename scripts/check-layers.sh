#!/bin/sh
# check-layers.sh [SRC_DIR [OBJ_DIR]] -- fail on an include (or a link)
# that points the wrong way.
#
# Cairn's layers, lowest first (docs/architecture.md draws them):
#
#   ds  <-  proto  <-  db  <-  core  <-  types  <-  script  <-  persist  <-  repl  <-  server  <-  module
#
# A file in one folder may include headers of its own folder and of the
# folders before it, never of a folder after it.  Where a lower layer must
# reach up (an expired key to notify, a modified key for WATCH, a command to
# check before it runs), it calls a hook the upper layer installs at
# start-up.  One exception: src/core/main.c, the composition root, includes
# every layer to wire them.  Also checked: only src/script includes Lua
# headers, no file declares a constructor (start-up order is main.c's), and
# no file but src/db/db.c (and db.h's inline helpers) touches a database's
# key table or TTL index (Db.ks) directly.
# A new folder (repl, http) must be added to LAYERS in its place.
#
# When the objects are built (OBJ_DIR, default build/obj/src), the same
# rule is checked on symbols, which catches a link that no include shows (a
# hand-written extern declaration): no object may use a symbol defined in a
# higher layer's object.  Exceptions: main.o, and the family arrays
# (xxxCommands) that core/command.c assembles into the command table.
#
# Socket calls belong to the connection layer (core/conn.h): outside its
# files (CONN_FILES) a call to socket, connect, accept/accept4, recv*,
# send*, setsockopt/getsockopt, getsockname/getpeername, bind, listen,
# shutdown, io_uring_* or iobatch.h's ioRecv/ioSend/ioBatch* I/O fails the
# check, wherever it is.  read/write/readv/writev/poll work on any fd, so
# they are allowed only in the files listed in FD_IO_FILES, each of which
# reads or writes files or pipes (never a socket; a socket there goes
# through its Connection): a new file that needs them is added to the list
# with its reason.  Comments and string literals are not checked.
#
# Prints each violation as "file:line: message" and exits 1 if there is any.
set -u
SRC=${1:-$(dirname "$0")/../src}
OBJ=${2:-$(dirname "$0")/../build/obj/src}
LAYERS="ds proto db core types script persist repl server module"
COMPOSITION_ROOT=core/main.c
# The connection layer: the only files that make socket calls.
CONN_FILES="core/conn.c core/conn.h core/conn_tls.c core/iobatch.c core/iobatch.h"
# Files that read/write/poll files or pipes (not sockets), and why:
#   ds/alloc.c          a stats callback parameter named write
#   core/config.c       /proc/self/oom_score_adj
#   core/crash.c        the crash report (log fd), /proc/self/maps
#   core/effects.c      the test-only effects file
#   persist/aof.c persist/aof_rewrite.c   AOF files
#   persist/persist.c   the child-info pipe
#   persist/rdb.c       RDB files, and the pipe of a diskless sync's child
#   repl/primary.c      the diskless sync's pipe, the child's log line
#   repl/replica.c      the temporary RDB file of a full sync
#   server/acl.c        the ACL file, /dev/urandom
#   server/cluster.c    the cluster config file (nodes.conf)
#   server/sentinel_conf.c  Sentinel mode's config file
#   module/module_block.c   the modules' wake-up pipe (UnblockClient from threads)
#   module/module_misc3.c   the modules' one-shot pipe (EventLoopAddOneShot from threads)
FD_IO_FILES="module/module_block.c module/module_misc3.c ds/alloc.c core/config.c core/crash.c core/effects.c persist/aof.c persist/aof_rewrite.c persist/persist.c persist/rdb.c repl/primary.c repl/replica.c server/acl.c server/cluster.c server/sentinel_conf.c"
OUT="${TMPDIR:-/tmp}/check-layers.$$"
trap 'rm -f "$OUT"' EXIT INT TERM

# Folders, then every project include, Lua include and constructor, checked
# in one awk pass (per-line shell loops are too slow here).
(
  for dir in "$SRC"/*/; do
    [ -d "$dir" ] && echo "DIR $(basename "$dir")"
  done
  cd "$SRC" 2>/dev/null && grep -Hn -e '^[[:space:]]*#[[:space:]]*include' \
    -e '__attribute__[[:space:]]*((constructor' -- */*.c */*.h 2>/dev/null
) | awk -v layers="$LAYERS" -v root="$COMPOSITION_ROOT" '
  BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
  /^DIR / {
    if (!($2 in rank)) printf "%s/: folder not in the layer list (scripts/check-layers.sh LAYERS)\n", $2
    next
  }
  {
    # file:line:text
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
    text = substr(rest, length(line) + 2)
    layer = file; sub(/\/.*/, "", layer)
    if (!(layer in rank)) next
    if (text ~ /constructor/) { printf "%s:%s: constructor (initialise it from main.c instead)\n", file, line; next }
    if (layer != "script" && text ~ /include[[:space:]]*[<"](lua|lualib|lauxlib|luajit|lj_)/) {
      printf "%s:%s: Lua header outside src/script\n", file, line; next
    }
    if (text !~ /include[[:space:]]*"[^"\/]*\//) next
    target = text; sub(/^[^"]*"/, "", target); sub(/\/.*/, "", target)
    if (!(target in rank)) { printf "%s:%s: includes from unknown folder %s\n", file, line, target; next }
    if (rank[target] > rank[layer] && file != root)
      printf "%s:%s: %s includes %s (a higher layer)\n", file, line, layer, target
  }' >"$OUT"

# The keyspace's own fields (Db.ks: the key table, the TTL index) are
# private to src/db/db.c: every other file uses db.h's keyspace API, so the
# keyspace can be split (by hash slot) without touching its users.
(cd "$SRC" 2>/dev/null && grep -HnE -e '(\.|->)ks\.' -- */*.c */*.h 2>/dev/null) | awk '
  {
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
    if (file == "db/db.c" || file == "db/db.h") next
    printf "%s:%s: uses a Db'"'"'s private key table (Db.ks) outside db/db.c: use the keyspace API of db/db.h\n", file, line
  }' >>"$OUT"

# Socket calls outside the connection layer (see the header).
(cd "$SRC" 2>/dev/null && grep -Hn -E '[A-Za-z0-9_]+[[:space:]]*\(' -- */*.c */*.h 2>/dev/null) |
  awk -v conn="$CONN_FILES" -v fdio="$FD_IO_FILES" '
  BEGIN {
    n = split(conn, a, " "); for (i = 1; i <= n; i++) isConn[a[i]] = 1
    n = split(fdio, a, " "); for (i = 1; i <= n; i++) isFdIo[a[i]] = 1
    pre = "(^|[^A-Za-z0-9_.>])"
    sock = pre "(socket|socketpair|connect|accept|accept4|recv|recvfrom|recvmsg|send|sendto|sendmsg|setsockopt|getsockopt|getsockname|getpeername|bind|listen|shutdown|io_uring_[A-Za-z0-9_]+|ioRecv|ioSend|ioSendv|ioBatchRecv|ioBatchSend|ioBatchRun)[[:space:]]*[(]"
    fdio = pre "(read|write|readv|writev|poll)[[:space:]]*[(]"
  }
  {
    file = $0; sub(/:.*/, "", file)
    if (file in isConn) next
    rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
    text = substr(rest, length(line) + 2)
    if (text ~ /^[[:space:]]*\*/) next          # inside a block comment
    gsub(/"([^"\\]|\\.)*"/, "\"\"", text)      # string literals
    gsub(/\/\*.*\*\//, "", text); sub(/\/\*.*$/, "", text); sub(/\/\/.*$/, "", text)
    if (match(text, sock)) {
      call = substr(text, RSTART, RLENGTH); sub(/^[^A-Za-z_]/, "", call); sub(/[[:space:]]*[(]$/, "", call)
      printf "%s:%s: socket call %s() outside the connection layer (use core/conn.h)\n", file, line, call
    } else if (!(file in isFdIo) && match(text, fdio)) {
      call = substr(text, RSTART, RLENGTH); sub(/^[^A-Za-z_]/, "", call); sub(/[[:space:]]*[(]$/, "", call)
      printf "%s:%s: %s() outside the connection layer and the file-I/O list (sockets: core/conn.h; files or pipes: add the file to FD_IO_FILES with its reason)\n", file, line, call
    }
  }' >>"$OUT"

# Symbols: "layer/file.o symbol" for definitions (D) and uses (U).
if [ -d "$OBJ" ] && command -v nm >/dev/null 2>&1; then
  (cd "$OBJ" && nm -A -- */*.o 2>/dev/null) | awk '
    { sub(/:/, " ") }  # "file.o:addr T sym" or "file.o: U sym"
    NF == 3 && $2 == "U" { print "U", $1, $3; next }
    NF == 4 && $3 ~ /^[TDBRVWC]$/ { print "D", $1, $4 }' | awk -v layers="$LAYERS" '
    BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
    function layerOf(f) { sub(/\/.*/, "", f); return f }
    $1 == "D" { def[$3] = $2; next }
    { use[++u] = $2 " " $3 }
    END {
      for (i = 1; i <= u; i++) {
        split(use[i], p, " "); f = p[1]; sym = p[2]
        if (!(sym in def)) continue
        d = def[sym]
        if (rank[layerOf(d)] <= rank[layerOf(f)]) continue
        if (f == "core/main.o") continue
        if (f == "core/command.o" && sym ~ /Commands$/) continue
        printf "%s: uses %s from %s (a higher layer)\n", f, sym, d
      }
    }' >>"$OUT"
fi
if [ -s "$OUT" ]; then
  cat "$OUT"
  echo "check-layers: FAILED (layers: $LAYERS)"
  exit 1
fi
echo "check-layers: ok (layers: $LAYERS)"
