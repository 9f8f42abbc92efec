#!/usr/bin/python3
"""Cairn vs redis-server benchmarks: throughput, memory, instructions.

Usage: bench.py throughput|memory|latency|aof|instructions|all
All knobs are environment variables (see bench/README.md).
"""
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A_BIN = os.environ.get("CAIRN_BIN", os.path.join(ROOT, "build", "cairn-server"))
B_BIN = os.environ.get("ORACLE_BIN", "redis-server")
# Servers run in a temporary directory: a relative path means one from here.
A_BIN = os.path.abspath(A_BIN) if os.sep in A_BIN else A_BIN
B_BIN = os.path.abspath(B_BIN) if os.sep in B_BIN else B_BIN
A_NAME = os.environ.get("BENCH_A_NAME", "cairn")
B_NAME = os.environ.get("BENCH_B_NAME", "redis")
TICK = os.sysconf("SC_CLK_TCK")


def env_int(name, default):
    return int(os.environ.get(name, default))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Srv:
    def __init__(self, binary, name, prefix=(), extra=()):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix="cairn-bench-%s-" % name)
        self.port = free_port()
        self.log = os.path.join(self.tmp, "log")
        binary = shutil.which(binary) or binary
        args = list(prefix) + [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                               "--dir", self.tmp, "--save", "", "--appendonly", "no",
                               "--logfile", "", "--daemonize", "no"] + list(extra)
        with open(self.log, "wb") as f:
            self.proc = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.tmp)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited:\n%s" % (args, open(self.log).read()))
            if "Ready to accept connections" in open(self.log, errors="replace").read():
                break
            time.sleep(0.02)
        else:
            self.stop()
            raise RuntimeError("%s not ready" % args)
        self.pid = self.proc.pid

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    def cpu_ns(self):
        """CPU time of all the server's threads so far, in nanoseconds: the
        scheduler's own count (/proc/PID/task/*/schedstat) where the kernel
        keeps it, else utime + stime (10 ms ticks)."""
        total = 0
        try:
            for tid in os.listdir("/proc/%d/task" % self.pid):
                try:
                    with open("/proc/%d/task/%s/schedstat" % (self.pid, tid)) as f:
                        total += int(f.read().split()[0])
                except FileNotFoundError:  # the thread just ended
                    pass
        except OSError:
            return self.cpu_ticks() * 1e9 / TICK
        return total

    def io_calls(self):
        """Socket reads and writes so far, as the server counts them (INFO
        stats total_reads_processed + total_writes_processed; /proc/PID/io
        does not count recv/send-family calls).  0 if INFO fails."""
        with socket.create_connection(("127.0.0.1", self.port)) as sk:
            sk.sendall(resp(b"INFO", b"stats"))
            got = b""
            while True:
                chunk = sk.recv(1 << 16)
                if not chunk:
                    return 0
                got += chunk
                head, sep, body = got.partition(b"\r\n")
                if not sep:
                    continue
                if not head.startswith(b"$"):
                    return 0
                if len(body) >= int(head[1:]) + 2:
                    break
        total = 0
        for line in body.decode(errors="replace").splitlines():
            k, _, v = line.partition(":")
            if k in ("total_reads_processed", "total_writes_processed"):
                total += int(v)
        return total

    def rss(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def cli(self, *args, **kw):
        return subprocess.run(["redis-cli", "-p", str(self.port)] + list(args),
                              capture_output=True, **kw)

    def stop(self, timeout=120):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def pin_prefix(core):
    if os.environ.get("BENCH_PIN", "1") == "1" and shutil.which("taskset") and \
            os.cpu_count() and os.cpu_count() >= 2:
        return ["taskset", "-c", str(core)]
    return []


# Workloads that are not redis-benchmark -t tests: name -> (setup commands
# run once per server, subscribers to keep connected, the command).
SCENARIOS = {
    # redis-benchmark -t lrange_100 first runs an LPUSH test of N requests
    # into the same list and reports both; this runs the LRANGE alone on a
    # list of 1000 items of 3 bytes (LRANGE mylist 0 99 in redis-benchmark).
    "lrange_100": ("list1000", 0, ["LRANGE", "lrange100", "0", "99"]),
    "zrangebyscore_limit": ("zset", 0, ["ZRANGEBYSCORE", "zbench", "100", "+inf", "LIMIT", "0", "10"]),
    "zrank": ("zset", 0, ["ZRANK", "zbench", "member:500"]),
    # SISMEMBER of a member of a set of 1001 (redis-benchmark without -r
    # sends "__rand_int__" as it is: the setup adds that member).
    "sismember": ("set1000", 0, ["SISMEMBER", "sbench", "member:__rand_int__"]),
    "publish1": (None, 1, ["PUBLISH", "bench", "hello-subscribers"]),
    "publish50": (None, 50, ["PUBLISH", "bench", "hello-subscribers"]),
    # HyperLogLog: PFADD of one element to a sparse sketch of 100 elements
    # (redis-benchmark sends "__rand_int__" as it is, so after the first
    # request the register is already set: the cost is the hash and the
    # sparse walk); PFCOUNT of one sketch (cached cardinality) and the union
    # of three dense sketches of 5000 elements (merge and estimate).  The
    # dense ones are built only for pfcount3 (filling them costs far more
    # than a PFADD, and setup counts in the instructions of the first test
    # that needs it).
    "pfadd": ("hll", 0, ["PFADD", "hllsparse", "element:__rand_int__"]),
    "pfcount": ("hll", 0, ["PFCOUNT", "hllsparse"]),
    "pfcount3": ("hll3", 0, ["PFCOUNT", "hll1", "hll2", "hll3"]),
    # Geo: GEOADD of one member (an update to the same position after the
    # first) and GEOSEARCH BYRADIUS answering 100 members.
    "geoadd": ("geo", 0, ["GEOADD", "geobench", "13.361389", "38.115556", "member:__rand_int__"]),
    "geosearch": ("geo", 0, ["GEOSEARCH", "geo100", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"]),
    # SET with a TTL: each request replaces the key's entry and its slot in
    # the TTL index (redis-benchmark sends "__rand_int__" as it is: one key).
    "setex": (None, 0, ["SET", "key:__rand_int__", "xxx", "EX", "100000"]),
    # A key with a TTL whose entry is built again on every request: RESTORE
    # ... REPLACE with a relative TTL of a small hash (Redis 7.0's DUMP of
    # f1 v1 f2 v2 f3 v3, binary: sent from loadgen), and INCRBYFLOAT on a
    # key with a TTL (the result is a new string entry that keeps the TTL).
    # Each used to build the entry without its expire and then move it to
    # a bigger block for it.
    "restore_ttl": (None, 0, ["RESTORE", "rkey", "100000000",
                              b"\x10\x1f\x1f\x00\x00\x00\x06\x00\x82f1\x03\x82v1\x03\x82f2\x03\x82v2\x03"
                              b"\x82f3\x03\x82v3\x03\xff\n\x00%\x12b\x16\xd5\xab\x91\xed", "REPLACE"]),
    "incrbyfloat_ttl": ("floatttl", 0, ["INCRBYFLOAT", "fkey", "1.5"]),
    # SET and GET as an ACL user with 10 key patterns (the one that matches
    # last) and a category rule (issue 23): the permission check's cost.
    # redis-benchmark authenticates each connection once, before the run.
    "acl_set": ("acluser", 0, ["SET", "key:__rand_int__", "xxx"]),
    "acl_get": ("acluser", 0, ["GET", "key:__rand_int__"]),
    # SET of new keys (100-byte values, redis-benchmark -r) under maxmemory
    # 4 MB with allkeys-lru, preloaded past the limit: every request evicts
    # (issue 22: instructions per SET while evicting).  The limit leaves
    # room for the 50 connections (~1 MB on either server): under 1 MB
    # they alone passed it, every key went and SETs got -OOM.
    "set_evict": ("evict", 0, ["SET", "key:__rand_int__", "v" * 100]),
    # Streams (issue 21): XADD of 3 small fields with an auto ID; XRANGE of
    # 10 entries of a 1000-entry stream; XREADGROUP of one new entry (into
    # the PEL) from a stream of 20000 (the setup adds them: BENCH_CG_N
    # readers must each find one).
    "xadd": (None, 0, ["XADD", "xbench", "*", "f1", "v1", "f2", "v2", "f3", "v3"]),
    "xrange10": ("stream1000", 0, ["XRANGE", "xrange1000", "-", "+", "COUNT", "10"]),
    "xreadgroup": ("streamgroup", 0, ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "xgroup", ">"]),
    # XACK of one ID: the setup delivers 20000 entries into a PEL; each
    # request acks a random one (redis-benchmark -r 20000: about 63% are
    # still pending, the rest answer 0), from redis-benchmark only.
    "xack": ("streampel", 0, ["XACK", "xpel", "g", "__rand_int__-1"]),
    # Issue 41: a module command doing SET/GET through RedisModule_Call and
    # through the key API (tests/modules/call.c, keys.c; `make modules`),
    # with BENCH_CG_SERVER_ARGS="--loadmodule build/modules/call.so
    # --loadmodule build/modules/keys.so" so that both servers load them.
    "modcall_set": (None, 0, ["call.set", "key:__rand_int__", "xxx"]),
    "modcall_get": (None, 0, ["call.get", "key:__rand_int__"]),
    "modkey_set": (None, 0, ["key.set", "key:__rand_int__", "xxx"]),
    "modkey_get": (None, 0, ["key.get", "key:__rand_int__"]),
    # The seed scripts (issue 6), loaded once and run with EVALSHA.
    "evalsha_cleanup": ("cleanup", 0, None),
    "evalsha_ratelimit": ("ratelimit", 0, None),
    # Issue 39's native commands against the scripts they replace, on the
    # same workload (run them with BENCH_CG_TESTS=zpopdue,evalsha_popdue,
    # clthrottle,evalsha_gcra,rllog,evalsha_window and ORACLE_BIN set to
    # Cairn too: redis-server lacks the native commands).  Due queue: each
    # request pops one due member of a set the setup fills with N + 1000
    # (run fill39 first and neither side counts the fill; alone, each
    # test fills its own key and the fill counts in both alike).  GCRA: a limiter that always
    # allows (a TAT write per request).  Window log: one request logged
    # per call in a window that never empties.  Copy the binary first:
    # callgrind runs it again for each step.
    "zpopdue": ("duequeue", 0, ["ZPOPDUE", "zdue"]),
    "evalsha_popdue": ("duequeue_lua", 0, None),
    # Member TTLs against the Lua pattern (a sorted set of member -> expiry
    # next to the set, purged by every script): EXPIREMEMBER of a member,
    # and SISMEMBER of a key with member TTLs (none due), each against the
    # script doing the same.
    "expiremember": ("mttl", 0, ["EXPIREMEMBER", "mt:set", "member", "100000"]),
    "evalsha_expiremember": ("mttl_lua", 0, None),
    "sismember_mttl": ("mttl", 0, ["SISMEMBER", "mt:set", "member"]),
    "evalsha_sismember_mttl": ("mttl_lua", 0, None),
    # The fill alone, to take it out of both: the same fill of another key,
    # then ZCARD of it; zcard_empty is ZCARD without a fill.
    "duefill": ("duequeue_fill", 0, ["ZCARD", "zdue3"]),
    "zcard_empty": (None, 0, ["ZCARD", "nokey"]),
    "clthrottle": (None, 0, ["CL.THROTTLE", "cl:user", "1000000000", "1000000000", "1"]),
    "evalsha_gcra": ("gcra", 0, None),
    "rllog": (None, 0, ["RL.LOG", "rl:user", "60000", "1000000000"]),
    "evalsha_window": ("window", 0, None),
    # Bounded counters: a delta that always stays in range (the counter is
    # written on every request), against the seeds' GET-then-INCRBY script.
    "incrbybound": (None, 0, ["INCRBYBOUND", "ib:n", "1", "-1000000000000", "1000000000000"]),
    "evalsha_incrbound": ("bound_lua", 0, None),
    "incrbyfloatbound": (None, 0, ["INCRBYFLOATBOUND", "fb:n", "1.5", "-1000000000000", "1000000000000"]),
    "evalsha_floatbound": ("bound_lua", 0, None),
    # Capped sorted set: ZADD of a new member at a random score to a set
    # kept at 1000 (nearly every request evicts the lowest), against the
    # ZADD/ZCARD/ZREMRANGEBYRANK script; ZTRIM MINSCORE of a random score
    # (redis-benchmark -r N + 1000) on a set of N + 1000 members scored
    # 0 .. N + 999 (about one removal a request over the run, on both
    # sides), against the ZCARD/ZREMRANGEBYSCORE script.
    "zadd_maxlen": ("capped", 0, ["ZADD", "zcap:n", "MAXLEN", "1000", "__rand_int__", "m:__rand_int__"]),
    "evalsha_capped": ("capped_lua", 0, None),
    "ztrim": ("trim", 0, ["ZTRIM", "ztr:n", "MINSCORE", "__rand_int__"]),
    "evalsha_ztrim": ("trim_lua", 0, None),
    # Fills every key and loads every script the issue-39 pairs above use,
    # then ZCARD of a missing key: run it first (BENCH_CG_TESTS=fill39,...)
    # and the fills are counted in this step, not in the commands measured
    # after it (each pair's own setup then finds its key filled).
    "fill39": ("fill39", 0, ["ZCARD", "nokey"]),
    # HGET of the field redis-benchmark's hset test leaves in myhash (issue
    # 38: hashes without field TTLs must not pay for them).
    "hget": (None, 0, ["HGET", "myhash", "element:__rand_int__"]),
}

# The scripts the issue-39 commands replace, as test_native_due.py and
# test_native_limits.py compare them (the client's clock in the last
# argument).
MTTL_PURGE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
if #due > 0 then
  redis.call('SREM', KEYS[1], unpack(due))
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
end
"""
MTTL_EXPIRE_LUA = MTTL_PURGE + """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]) * 1000, ARGV[1])
return 1
"""
MTTL_ISMEMBER_LUA = MTTL_PURGE + """
return redis.call('SISMEMBER', KEYS[1], ARGV[1])
"""

POPDUE_LUA = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #due == 0 then return {} end
local m = {}
for i = 1, #due, 2 do m[#m + 1] = due[i] end
redis.call('ZREM', KEYS[1], unpack(m))
return due
"""
GCRA_LUA = """
local burst, count, period, qty, now_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]), tonumber(ARGV[5])
local function trunc(x) if x >= 0 then return math.floor(x) else return math.ceil(x) end end
local function secs(ns)
  local s = trunc(ns / 1e9)
  if trunc((ns - s * 1e9) / 1e6) > 0 then s = s + 1 end
  return s
end
local T = math.floor(period * 1e9 / count)
local tol, inc = T * (burst + 1), T * qty
local now_s, now_lo = math.floor(now_ms / 1000), (now_ms % 1000) * 1e6
local rel = 0
local v = redis.call('GET', KEYS[1])
if v then rel = (tonumber(string.sub(v, 1, -10)) - now_s) * 1e9 + (tonumber(string.sub(v, -9)) - now_lo) end
local new_rel = (rel > 0 and rel or 0) + inc
local limited, retry, ttl = 0, -1e9, 0
if new_rel - tol > 0 then
  limited = 1
  if inc <= tol then retry = new_rel - tol end
  ttl = rel
else
  ttl = new_rel
  if new_rel > 0 and new_rel ~= rel then
    local total = now_lo + new_rel
    local carry = math.floor(total / 1e9)
    redis.call('SET', KEYS[1], string.format('%d%09d', now_s + carry, total - carry * 1e9),
               'PXAT', now_ms + math.ceil(new_rel / 1e6))
  end
end
local remaining, nxt = 0, tol - ttl
if nxt > -T then remaining = trunc(trunc(nxt / 1000) / trunc(T / 1000)) end
return {limited, burst + 1, remaining, secs(retry), secs(ttl)}
"""
WINDOW_LUA = """
local window, limit, qty, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if qty > limit then return {0, count, -1} end
if count + qty > limit then
  local e = redis.call('ZRANGE', KEYS[1], count + qty - limit - 1, count + qty - limit - 1, 'WITHSCORES')
  return {0, count, tonumber(e[2]) + window - now}
end
if qty > 0 then
  local seq = redis.call('ZCOUNT', KEYS[1], now, now)
  local args = {}
  for i = 0, qty - 1 do
    args[#args + 1] = now
    args[#args + 1] = now .. '-' .. (seq + i)
  end
  redis.call('ZADD', KEYS[1], unpack(args))
  redis.call('PEXPIREAT', KEYS[1], now + window)
end
return {1, count + qty, 0}
"""
LUA_INCR_BOUND = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local r = v + tonumber(ARGV[1])
if r < tonumber(ARGV[2]) or r > tonumber(ARGV[3]) then return false end
return redis.call('INCRBY', KEYS[1], ARGV[1])
"""
LUA_FLOAT_BOUND = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local r = v + tonumber(ARGV[1])
if r < tonumber(ARGV[2]) or r > tonumber(ARGV[3]) then return false end
return redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])
"""
LUA_CAPPED_ZADD = """
local maxlen = tonumber(ARGV[1])
local added = redis.call('ZADD', KEYS[1], unpack(ARGV, 3))
local n = redis.call('ZCARD', KEYS[1])
if n > maxlen then
  if ARGV[2] == 'HIGHEST' then redis.call('ZREMRANGEBYRANK', KEYS[1], maxlen, -1)
  else redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - maxlen - 1) end
end
return added
"""
LUA_ZTRIM = """
local n = redis.call('ZCARD', KEYS[1])
if ARGV[1] == 'MAXLEN' then
  local maxlen = tonumber(ARGV[2])
  if n <= maxlen then return 0 end
  if ARGV[3] == 'HIGHEST' then return redis.call('ZREMRANGEBYRANK', KEYS[1], maxlen, -1) end
  return redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - maxlen - 1)
elseif ARGV[1] == 'MINSCORE' then
  return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
else
  return redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. ARGV[2], '+inf')
end
"""
BENCH_NOW_MS = str(int(time.time() * 1000) + 86400000)

def _load_seeds():
    """The seed notes' Lua scripts, verbatim, from the integration tests."""
    import importlib.util
    path = os.path.join(ROOT, "tests", "integration", "script_seeds.py")
    spec = importlib.util.spec_from_file_location("cairn_script_seeds", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_SEEDS = _load_seeds()
# The message-cache cleanup: members start with a little-endian unix time;
# KEYS[2] is the length to keep, KEYS[3] the oldest time kept.  Run with
# MaxLen 100 and time 0 it leaves the set unchanged.
CLEANUP_LUA = _SEEDS.CLEANUP
# The rate limiter: at most ARGV[1] calls per ARGV[2] seconds.
RATELIMIT_LUA = _SEEDS.RATE_LIMITER


ACL_BENCH_USER = "benchuser"
ACL_BENCH_RULES = ["on", ">benchpass", "+@all", "-@dangerous"] + [
    "~%s:*" % p for p in ("cache", "session", "user", "queue", "lock", "rate", "feed", "stats", "tmp", "key")]


def sha1hex(text):
    import hashlib
    return hashlib.sha1(text.encode()).hexdigest()


def scenario_command(test):
    if test == "evalsha_cleanup":
        return ["EVALSHA", sha1hex(CLEANUP_LUA), "3", "zclean", "100", "0"]
    if test == "evalsha_ratelimit":
        return ["EVALSHA", sha1hex(RATELIMIT_LUA), "1", "ratelimit:user1", "1000000000", "60"]
    if test == "evalsha_popdue":
        return ["EVALSHA", sha1hex(POPDUE_LUA), "1", "zdue2", BENCH_NOW_MS, "1"]
    if test == "evalsha_expiremember":
        return ["EVALSHA", sha1hex(MTTL_EXPIRE_LUA), "2", "mt:set2", "mt:set2:exp", "member", "100000"]
    if test == "evalsha_sismember_mttl":
        return ["EVALSHA", sha1hex(MTTL_ISMEMBER_LUA), "2", "mt:set2", "mt:set2:exp", "member"]
    if test == "evalsha_gcra":
        return ["EVALSHA", sha1hex(GCRA_LUA), "1", "gcra:user", "1000000000", "1000000000", "1", "1", BENCH_NOW_MS]
    if test == "evalsha_window":
        return ["EVALSHA", sha1hex(WINDOW_LUA), "1", "win:user", "60000", "1000000000", "1", BENCH_NOW_MS]
    if test == "evalsha_incrbound":
        return ["EVALSHA", sha1hex(LUA_INCR_BOUND), "1", "ib:s", "1", "-1000000000000", "1000000000000"]
    if test == "evalsha_floatbound":
        return ["EVALSHA", sha1hex(LUA_FLOAT_BOUND), "1", "fb:s", "1.5", "-1000000000000", "1000000000000"]
    if test == "evalsha_capped":
        return ["EVALSHA", sha1hex(LUA_CAPPED_ZADD), "1", "zcap:s", "1000", "LOWEST", "__rand_int__", "m:__rand_int__"]
    if test == "evalsha_ztrim":
        return ["EVALSHA", sha1hex(LUA_ZTRIM), "1", "ztr:s", "MINSCORE", "__rand_int__"]
    return SCENARIOS[test][2]


def rand_range(test):
    """redis-benchmark's -r for a test, or None."""
    if test == "set_evict":
        return 100000000
    if test == "xack":
        return 20000
    if test in ("zadd_maxlen", "evalsha_capped"):
        return 100000000
    if test in ("ztrim", "evalsha_ztrim"):
        return env_int("BENCH_CG_N", 20000) + 1000
    return None


def fill_zset(srv, key, n, member="job:%d", base=1000):
    """ZADD key base+i member%i for i < n, unless key already exists (a
    fill39 step before filled it)."""
    if srv.cli("EXISTS", key).stdout.strip() == b"1":
        return
    for start in range(0, n, 1000):
        args = ["ZADD", key]
        for i in range(start, min(n, start + 1000)):
            args += [str(base + i), member % i]
        send_raw(srv.port, args)


def send_raw(port, *commands):
    """Send whole RESP commands (binary-safe) and read their replies."""
    with socket.create_connection(("127.0.0.1", port)) as sk:
        data = b"".join(resp(*[a if isinstance(a, bytes) else a.encode() for a in c]) for c in commands)
        sk.sendall(data)
        got = b""
        while got.count(b"\r\n") < len(commands):
            chunk = sk.recv(1 << 16)
            if not chunk:
                break
            got += chunk
        return got


def scenario_setup(srv, kind):
    if kind == "cleanup":
        import struct
        members = []
        for i in range(10):
            members += [str(i).encode(), struct.pack("<i", 1700000000 + i) + b"message body %d" % i]
        send_raw(srv.port, ["SCRIPT", "LOAD", CLEANUP_LUA], [b"ZADD", b"zclean"] + members)
    elif kind == "acluser":
        srv.cli("ACL", "SETUSER", ACL_BENCH_USER, *ACL_BENCH_RULES)
    elif kind == "ratelimit":
        send_raw(srv.port, ["SCRIPT", "LOAD", RATELIMIT_LUA])
    elif kind in ("duequeue", "duequeue_lua", "duequeue_fill"):
        key = {"duequeue": "zdue", "duequeue_lua": "zdue2", "duequeue_fill": "zdue3"}[kind]
        if kind == "duequeue_lua":
            send_raw(srv.port, ["SCRIPT", "LOAD", POPDUE_LUA])
        fill_zset(srv, key, env_int("BENCH_CG_N", 20000) + 1000)
    elif kind == "bound_lua":
        send_raw(srv.port, ["SCRIPT", "LOAD", LUA_INCR_BOUND], ["SCRIPT", "LOAD", LUA_FLOAT_BOUND])
    elif kind in ("capped", "capped_lua"):
        if kind == "capped_lua":
            send_raw(srv.port, ["SCRIPT", "LOAD", LUA_CAPPED_ZADD])
        fill_zset(srv, "zcap:n" if kind == "capped" else "zcap:s", 1000, "c:%d", 0)
    elif kind in ("trim", "trim_lua"):
        if kind == "trim_lua":
            send_raw(srv.port, ["SCRIPT", "LOAD", LUA_ZTRIM])
        fill_zset(srv, "ztr:n" if kind == "trim" else "ztr:s", env_int("BENCH_CG_N", 20000) + 1000, "t:%d", 0)
    elif kind == "fill39":
        for k in ("duequeue", "duequeue_lua", "bound_lua", "capped", "capped_lua", "trim", "trim_lua",
                  "gcra", "window"):
            scenario_setup(srv, k)
    elif kind == "gcra":
        send_raw(srv.port, ["SCRIPT", "LOAD", GCRA_LUA])
    elif kind == "window":
        send_raw(srv.port, ["SCRIPT", "LOAD", WINDOW_LUA])
    elif kind == "floatttl":
        srv.cli("SET", "fkey", "0", "EX", "100000000")
    elif kind == "list1000":
        srv.cli("DEL", "lrange100")
        srv.cli("RPUSH", "lrange100", *(["xxx"] * 1000))
    elif kind == "hll":
        srv.cli("PFADD", "hllsparse", *["s%d" % i for i in range(100)])
    elif kind == "hll3":
        for k in ("hll1", "hll2", "hll3"):
            srv.cli("PFADD", k, *["%s-%d" % (k, i) for i in range(5000)])
    elif kind == "geo":
        import random
        rng = random.Random(1)
        args = ["GEOADD", "geo100"]
        for i in range(100):
            args += ["%.6f" % rng.uniform(14.5, 15.5), "%.6f" % rng.uniform(36.6, 37.4), "place:%d" % i]
        srv.cli(*args)
    elif kind == "evict":
        srv.cli("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
        srv.cli("CONFIG", "SET", "maxmemory", "4mb")
        for start in range(0, 40000, 1000):
            send_raw(srv.port, *[["SET", "pre:%d" % i, "v" * 100] for i in range(start, start + 1000)])
    elif kind in ("stream1000", "streamgroup", "streampel"):
        key, n = {"stream1000": ("xrange1000", 1000), "streamgroup": ("xgroup", 20000),
                  "streampel": ("xpel", 20000)}[kind]
        cmds = [["XADD", key, "%d-1" % i, "f1", "v1", "f2", "v2", "f3", "v3"] for i in range(1, n + 1)]
        if kind != "stream1000":
            cmds.append(["XGROUP", "CREATE", key, "g", "0"])
        for i in range(0, len(cmds), 1000):
            send_raw(srv.port, *cmds[i:i + 1000])
        if kind == "streampel":  # redis-cli reads the whole reply
            srv.cli("XREADGROUP", "GROUP", "g", "c", "COUNT", str(n), "STREAMS", key, ">")
    elif kind == "mttl":
        srv.cli("SADD", "mt:set", "member", *["m%d" % i for i in range(10)])
        srv.cli("EXPIREMEMBER", "mt:set", "m1", "100000")
    elif kind == "mttl_lua":
        send_raw(srv.port, ["SCRIPT", "LOAD", MTTL_EXPIRE_LUA], ["SCRIPT", "LOAD", MTTL_ISMEMBER_LUA])
        srv.cli("SADD", "mt:set2", "member", *["m%d" % i for i in range(10)])
        srv.cli("ZADD", "mt:set2:exp", "99999999999999", "m1")
    elif kind == "set1000":
        srv.cli("SADD", "sbench", "member:__rand_int__", *["member:%d" % i for i in range(1000)])
    elif kind == "zset":
        args = ["ZADD", "zbench"]
        for i in range(1000):
            args += [str(i), "member:%d" % i]
        srv.cli(*args)


class Subscribers:
    """n connections subscribed to 'bench' that read and discard messages."""

    def __init__(self, port, n):
        import threading
        self.socks = []
        for _ in range(n):
            sk = socket.create_connection(("127.0.0.1", port))
            sk.sendall(b"SUBSCRIBE bench\r\n")
            sk.recv(100)
            self.socks.append(sk)
        self.stop = False
        self.t = threading.Thread(target=self.drain, daemon=True)
        self.t.start()

    def drain(self):
        import selectors
        sel = selectors.DefaultSelector()
        for sk in self.socks:
            sel.register(sk, selectors.EVENT_READ)
        while not self.stop:
            for key, _ in sel.select(timeout=0.2):
                try:
                    key.fileobj.recv(1 << 20)
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.t.join()
        for sk in self.socks:
            sk.close()


LOADGEN_SRC = os.path.join(ROOT, "bench", "loadgen.c")
LOADGEN_BIN = os.path.join(ROOT, "build", "bench-loadgen")

# The commands redis-benchmark -t sends for its built-in tests (its 3 random
# value bytes are "xxx" here; without -r, "__rand_int__" is sent as it is).
RB_TESTS = {
    "ping": [["PING"]],
    "set": [["SET", "key:__rand_int__", "xxx"]],
    "get": [["GET", "key:__rand_int__"]],
    "incr": [["INCR", "counter:__rand_int__"]],
    "mset": [["MSET"] + ["key:__rand_int__", "xxx"] * 10],
    "lpush": [["LPUSH", "mylist", "xxx"]],
    "rpush": [["RPUSH", "mylist", "xxx"]],
    "lpop": [["LPOP", "mylist"]],
    "rpop": [["RPOP", "mylist"]],
    "sadd": [["SADD", "myset", "element:__rand_int__"]],
    "hset": [["HSET", "myhash", "element:__rand_int__", "xxx"]],
    "spop": [["SPOP", "myset"]],
    "zadd": [["ZADD", "myzset", "0", "element:__rand_int__"]],
    "zpopmin": [["ZPOPMIN", "myzset"]],
    # MULTI + 10 x INCR + EXEC: one unit is a transaction (12 replies).
    "multi10incr": [["MULTI"]] + [["INCR", "multibench"]] * 10 + [["EXEC"]],
}


def loadgen_bin():
    """bench/loadgen.c, built on first use."""
    if not os.path.exists(LOADGEN_BIN) or \
            os.path.getmtime(LOADGEN_BIN) < os.path.getmtime(LOADGEN_SRC):
        os.makedirs(os.path.dirname(LOADGEN_BIN), exist_ok=True)
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-Wall", "-o", LOADGEN_BIN, LOADGEN_SRC],
                       check=True)
    return LOADGEN_BIN


def loadgen_unit(test):
    """(request bytes of one unit, replies per unit) for bench/loadgen."""
    cmds = RB_TESTS[test] if test in RB_TESTS else [scenario_command(test)]
    return b"".join(resp(*[a if isinstance(a, bytes) else a.encode() for a in c]) for c in cmds), len(cmds)


def uses_loadgen(test, gen):
    """Whether `test` runs from loadgen when `gen` is asked for: redis-benchmark
    cannot send a transaction as one unit, so multi10incr always does."""
    if test in SCENARIOS and SCENARIOS[test][0] == "acluser":
        return False  # loadgen does not authenticate: redis-benchmark --user
    if test in ("xack", "zadd_maxlen", "evalsha_capped", "ztrim", "evalsha_ztrim"):
        return False  # the IDs, scores, members are redis-benchmark's random numbers
    return gen == "loadgen" or test in ("multi10incr", "restore_ttl")  # restore_ttl: a binary argument


def run_load(port, test, n, pipeline, gen="redis-benchmark", pin=True, timeout=1800):
    """Runs test's load against port: n requests (units for loadgen) over 50
    connections, `pipeline` per write, from gen (pinned to the client core
    unless pin is false).  stdout is a CSV line like
    redis-benchmark's; loadgen also prints "<units done> <error replies>" on
    stderr."""
    prefix = pin_prefix(os.cpu_count() - 1) if pin else []
    if uses_loadgen(test, gen):
        unit, per_unit = loadgen_unit(test)
        cmd = prefix + [loadgen_bin(), str(port), "50", str(n), str(pipeline), str(per_unit), test.upper()]
        return subprocess.run(cmd, input=unit, capture_output=True, timeout=timeout)
    cmd = prefix + ["redis-benchmark", "-p", str(port), "-c", "50", "-n", str(n),
                    "-P", str(pipeline), "-q", "--csv"]
    if test in SCENARIOS and SCENARIOS[test][0] == "acluser":
        cmd += ["--user", ACL_BENCH_USER, "-a", "benchpass"]
    if rand_range(test):
        cmd += ["-r", str(rand_range(test))]
    cmd += scenario_command(test) if test in SCENARIOS else ["-t", test]
    return subprocess.run(cmd, capture_output=True, timeout=timeout)


def parse_csv_rps(out):
    """Return (mean rps over the CSV rows, number of rows).  Some -t names run
    several tests (ping = PING_INLINE + PING_MBULK)."""
    rows = []
    for line in out.decode().splitlines():
        parts = [p.strip('"') for p in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            try:
                rows.append(float(parts[1]))
            except ValueError:
                pass
    if not rows:
        return float("nan"), 1
    return sum(rows) / len(rows), len(rows)


def steal_ticks():
    """All CPUs' steal time so far (/proc/stat), in clock ticks: the time the
    hypervisor ran something else while this VM wanted to run."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) if len(fields) > 8 else 0


def measure_run(s, t, nn, p, client="redis-benchmark"):
    """One load run of test t against server s, its load from `client`
    (redis-benchmark or loadgen).  Returns the generator's ops/s and the
    run's totals: requests, server CPU ns, socket reads and writes, wall
    seconds, the generator's CPU seconds and the machine's steal ticks."""
    subs = Subscribers(s.port, SCENARIOS[t][1]) if t in SCENARIOS and SCENARIOS[t][1] else None
    y0 = s.io_calls()  # before the CPU reading: INFO costs the server CPU
    c0, st0, w0 = s.cpu_ns(), steal_ticks(), time.monotonic()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the load generator's CPU
    lg = uses_loadgen(t, client)
    units = nn // 10 if t == "multi10incr" else nn  # N/10 transactions
    out = run_load(s.port, t, units, p, client)
    c1, st1, w1 = s.cpu_ns(), steal_ticks(), time.monotonic()
    y1 = s.io_calls()
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if subs:
        subs.close()
    if out.returncode != 0:
        print("load generator failed on %s: %s" % (s.name, out.stderr), file=sys.stderr)
    rps, nrows = parse_csv_rps(out.stdout)
    if lg:
        try:
            reqs, errors = (int(x) for x in out.stderr.split()[-2:])
        except ValueError:
            reqs, errors = units, 0
        if errors:
            print("%s on %s: %d error replies" % (t, s.name, errors), file=sys.stderr)
    else:
        reqs = nn * nrows
    return {"rps": rps, "reqs": reqs, "cpu_ns": c1 - c0, "io": y1 - y0, "wall": w1 - w0,
            "client_s": k1.ru_utime - k0.ru_utime + k1.ru_stime - k0.ru_stime,
            "steal_ticks": st1 - st0}


def measure_pair(order, t, nn, p, client, slices):
    """Both servers under the same load, interleaved: `slices` runs of
    nn/slices requests each, alternating the servers (ABBA...), so that
    a change of the machine's speed during the pair falls on both.  Returns
    {server name: ops/s, server CPU us and socket reads and writes per request,
    the generator's busy fraction, and the fraction of the machine's CPU
    time stolen by the hypervisor meanwhile}."""
    k = max(1, min(slices, nn // 1000))
    acc = {s.name: [] for s in order}
    for i in range(k):
        part = nn // k + (1 if i < nn % k else 0)
        for s in (order if i % 2 == 0 else order[::-1]):
            acc[s.name].append(measure_run(s, t, part, p, client))
    out = {}
    for name, runs in acc.items():
        reqs = sum(m["reqs"] for m in runs)
        wall = max(1e-3, sum(m["wall"] for m in runs))
        # ops/s: requests over the time the generator reported for them
        busy = sum(m["reqs"] / m["rps"] for m in runs if m["rps"])
        out[name] = {"rps": reqs / busy if busy else 0.0,
                     "cpu": sum(m["cpu_ns"] for m in runs) / 1e3 / reqs,
                     "io": sum(m["io"] for m in runs) / reqs,
                     "client": sum(m["client_s"] for m in runs) / wall,
                     "steal": sum(m["steal_ticks"] for m in runs) / TICK / (wall * (os.cpu_count() or 1))}
    return out


def ratio(a, b):
    return a / b if b else float("nan")


# ---------------------------------------------------------------- throughput

def throughput():
    tests = [t for t in os.environ.get("BENCH_TESTS", "ping,set,get,incr,mset").split(",") if t]
    pipelines = [int(p) for p in os.environ.get("BENCH_PIPELINES", "1 16").split()]
    n = env_int("BENCH_N", 100000)
    rounds = env_int("BENCH_ROUNDS", 3)
    steal_max = env_int("BENCH_STEAL_PCT", 2) / 100.0
    steal_retries = env_int("BENCH_STEAL_RETRIES", 5)
    slices = env_int("BENCH_SLICES", 4)
    gens = [g for g in os.environ.get("BENCH_CLIENTS", "redis-benchmark loadgen").split() if g]
    for g in gens:
        if g not in ("redis-benchmark", "loadgen"):
            raise SystemExit("BENCH_CLIENTS: %r is neither redis-benchmark nor loadgen" % g)
    # (test, load generator) runs; multi10incr only ever runs on loadgen.
    runs = []
    for g in gens:
        for t in tests:
            g2 = "loadgen" if uses_loadgen(t, g) else g
            if g2 == "loadgen" and t not in RB_TESTS and t not in SCENARIOS:
                print("  %s: loadgen does not know its requests (RB_TESTS), so only redis-benchmark runs it" % t,
                      file=sys.stderr)
                continue
            if (t, g2) not in runs:
                runs.append((t, g2))
    reruns = stolen = 0
    core = 0
    servers = [Srv(A_BIN, A_NAME, pin_prefix(core)), Srv(B_BIN, B_NAME, pin_prefix(core))]
    res = {}  # (test, pipeline, server) -> lists
    try:
        for r in range(rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            if r == 0:
                for t in tests:
                    if t in SCENARIOS and SCENARIOS[t][0]:
                        for s in servers:
                            scenario_setup(s, SCENARIOS[t][0])
            for p in pipelines:
                nn = n * (10 if p > 1 else 1)
                for t, g in runs:
                    # Both servers of a pair take turns (measure_pair); a pair during
                    # which the hypervisor took CPU time away (steal) is run
                    # again, as steal swings ops/s far more than the servers
                    # differ.
                    for attempt in range(steal_retries + 1):
                        pair = measure_pair(order, t, nn, p, g, slices)
                        worst = max(m["steal"] for m in pair.values())
                        if worst <= steal_max:
                            break
                        if attempt == steal_retries:
                            stolen += 1  # kept anyway
                        else:
                            reruns += 1
                    if os.environ.get("BENCH_VERBOSE"):
                        print("    %s P%d %s: %s" % (t, p, g, "  ".join(
                            "%s %.0f ops/s %.2f us/req" % (s.name, pair[s.name]["rps"], pair[s.name]["cpu"])
                            for s in servers)), file=sys.stderr)
                    for name, m in pair.items():
                        d = res.setdefault((t, p, g, name), {"rps": [], "cpu": [], "io": [], "client": []})
                        d["rps"].append(m["rps"])
                        d["cpu"].append(m["cpu"])
                        d["io"].append(m["io"])
                        d["client"].append(m["client"])
            print("  round %d/%d done" % (r + 1, rounds), file=sys.stderr)
    finally:
        for s in servers:
            s.stop()
    hdr = ("test", "P", "client", "ops/s " + A_NAME, "ops/s " + B_NAME, "ratio",
           "CPUus/req " + A_NAME, B_NAME, "ratio", "io/req " + A_NAME, B_NAME,
           "client% " + A_NAME, B_NAME)
    print("\n== throughput: -c 50, N=%d (x10 when pipelined), %d rounds, medians (ratios: median of the per-round ratios)%s"
          % (n, rounds, ", servers pinned to core 0, client to core %d" % (os.cpu_count() - 1)
             if pin_prefix(0) else ""))
    if reruns or stolen:
        print("   %d pair(s) rerun because the hypervisor stole > %d%% of the CPUs during them%s"
              % (reruns, steal_max * 100, "; %d kept after %d tries" % (stolen, steal_retries + 1)
                 if stolen else ""))
    print("%-19s %3s %-15s %14s %14s %6s %12s %8s %6s %13s %8s %14s %6s" % hdr)
    for p in pipelines:
        for t, g in runs:
            a, b = res[(t, p, g, A_NAME)], res[(t, p, g, B_NAME)]
            ra, rb = statistics.median(a["rps"]), statistics.median(b["rps"])
            ca, cb = statistics.median(a["cpu"]), statistics.median(b["cpu"])
            sa, sb = statistics.median(a["io"]), statistics.median(b["io"])
            ka, kb = statistics.median(a["client"]), statistics.median(b["client"])
            # Ratios are medians of the per-round ratios: both servers of a
            # round took turns, so drift of the machine between rounds
            # cancels out.
            rr = statistics.median(ratio(x, y) for x, y in zip(a["rps"], b["rps"]))
            cr = statistics.median(ratio(x, y) for x, y in zip(a["cpu"], b["cpu"]))
            print("%-19s %3d %-15s %14.0f %14.0f %6.2f %12.3f %8.3f %6.2f %13.3f %8.3f %14.0f %6.0f"
                  % (t, p, g, ra, rb, rr, ca, cb, cr, sa, sb, ka * 100, kb * 100))


# ------------------------------------------------------------------- memory

def resp(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def ds_strings(n, out):
    for i in range(n):
        out.write(resp(b"SET", b"key:%08d" % i, b"v%09d" % i))


def ds_strings_ttl(n, out):
    for i in range(n):
        out.write(resp(b"SET", b"key:%08d" % i, b"v%09d" % i, b"EX", b"100000"))


def ds_hashes(n, out):
    """n hashes of 10 short fields (listpack encoding in both servers)."""
    for i in range(n):
        args = [b"HSET", b"hash:%08d" % i]
        for f in range(10):
            args += [b"field:%d" % f, b"value:%d" % (i + f)]
        out.write(resp(*args))


def ds_sets(n, out):
    """n sets of 10 integers (intset)."""
    for i in range(n):
        out.write(resp(b"SADD", b"set:%08d" % i, *[b"%d" % (i * 10 + m) for m in range(10)]))


def ds_lists(n, out):
    """n lists of 10 short items (one quicklist node each)."""
    for i in range(n):
        out.write(resp(b"RPUSH", b"list:%08d" % i, *[b"item:%d" % m for m in range(10)]))


def ds_zsets(n, out):
    """n sorted sets of 10 members (listpack)."""
    for i in range(n):
        args = [b"ZADD", b"zset:%08d" % i]
        for m in range(10):
            args += [b"%d" % (i + m), b"member:%d" % m]
        out.write(resp(*args))


def ds_bighash(n, out):
    """One hash of n fields (hashtable encoding): bytes per field."""
    for i in range(0, n, 100):
        args = [b"HSET", b"bighash"]
        for f in range(i, min(n, i + 100)):
            args += [b"field:%08d" % f, b"v%09d" % f]
        out.write(resp(*args))


def ds_stream(n, out):
    """One stream of n entries of 3 small fields: bytes per entry."""
    for i in range(1, n + 1):
        out.write(resp(b"XADD", b"stream", b"%d-1" % i, b"name", b"n%d" % (i % 1000), b"qty", b"%d" % (i % 97),
                       b"state", b"ok"))


# name -> (writer(n, file), default n, unit, command the server must have).
# BENCH_MEM_KEYS overrides n for the string datasets.
DATASETS = {
    "strings": (ds_strings, 1000000, "key", b"set"),
    "strings_ttl": (ds_strings_ttl, 1000000, "key", b"set"),
    "hashes": (ds_hashes, 100000, "key", b"hset"),
    "sets": (ds_sets, 100000, "key", b"sadd"),
    "lists": (ds_lists, 100000, "key", b"rpush"),
    "zsets": (ds_zsets, 100000, "key", b"zadd"),
    "bighash": (ds_bighash, 1000000, "field", b"hset"),
    "stream": (ds_stream, 1000000, "entry", b"xadd"),
}


def has_command(srv, name):
    r = srv.cli("COMMAND", "INFO", name.decode())
    return r.returncode == 0 and r.stdout.strip() not in (b"", b"(nil)")


def memory():
    names = [d for d in os.environ.get("BENCH_MEM_DATASETS", ",".join(DATASETS)).split(",") if d]
    print("\n== memory: resident bytes per key (or per field) ((RSS after - RSS before) / N)")
    print("%-14s %9s %6s %12s %12s %6s %10s %10s" % ("dataset", "N", "unit", A_NAME, B_NAME, "ratio",
                                                  "keys " + A_NAME, B_NAME))
    tmp = tempfile.mkdtemp(prefix="cairn-bench-mem-")
    try:
        for name in names:
            writer, n, unit, needs = DATASETS[name]
            if name.startswith("strings"):
                n = env_int("BENCH_MEM_KEYS", n)
            path = os.path.join(tmp, name + ".resp")
            with open(path, "wb", buffering=1 << 20) as f:
                writer(n, f)
            per = {}
            keys = {}
            skipped = False
            for binary, sname in ((A_BIN, A_NAME), (B_BIN, B_NAME)):
                s = Srv(binary, sname)
                try:
                    if not has_command(s, needs):
                        skipped = True
                        break
                    time.sleep(0.2)
                    before = s.rss()
                    with open(path, "rb") as f:
                        r = s.cli("--pipe", stdin=f, timeout=1800)
                    if r.returncode != 0:
                        print("redis-cli --pipe failed on %s: %s" % (sname, r.stderr),
                              file=sys.stderr)
                    after = settled_rss(s)
                    per[sname] = (after - before) / n
                    keys[sname] = s.cli("DBSIZE").stdout.decode().strip()
                finally:
                    s.stop()
            if skipped:
                print("%-14s skipped: %s lacks %s" % (name, A_NAME, needs.decode()))
                continue
            print("%-14s %9d %6s %12.1f %12.1f %6.2f %10s %10s"
                  % (name, n, unit, per[A_NAME], per[B_NAME], ratio(per[A_NAME], per[B_NAME]),
                     keys[A_NAME], keys[B_NAME]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def settled_rss(s, quiet=12.0, limit=40.0):
    """Steady-state RSS: both allocators (jemalloc in both servers) return
    freed pages -- old bucket arrays, buffers outgrown during the load --
    on a 10 s decay timer, so a reading right after the load counts memory
    that is already free.  Polls each second until RSS has not moved by
    more than 0.2% for `quiet` seconds (longer than the decay period), for
    at most `limit` seconds.  Both servers are measured the same way."""
    start = time.time()
    ref = s.rss()
    ref_t = start
    while time.time() - start < limit:
        time.sleep(1.0)
        cur = s.rss()
        if abs(cur - ref) > ref * 0.002:
            ref, ref_t = cur, time.time()
        elif time.time() - ref_t >= quiet:
            return cur
    return s.rss()



# ------------------------------------------------------------------ latency

class Probe(threading.Thread):
    """A client sending GET every millisecond and timing each reply."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sk = socket.create_connection(("127.0.0.1", port))
        self.sk.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.times = []
        self.stop_flag = False

    def run(self):
        req = resp(b"GET", b"probe")
        nxt = time.monotonic()
        while not self.stop_flag:
            t0 = time.monotonic()
            self.sk.sendall(req)
            got = b""
            while not got.endswith(b"\r\n"):
                got += self.sk.recv(4096)
            self.times.append(time.monotonic() - t0)
            nxt += 0.001
            d = nxt - time.monotonic()
            if d > 0:
                time.sleep(d)
            else:
                nxt = time.monotonic()

    def finish(self):
        self.stop_flag = True
        self.join()
        self.sk.close()
        return sorted(self.times)


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p))]


def preemptions(pid):
    """Involuntary context switches of a process's main thread so far: the
    times the kernel took the CPU away from it (on a shared 2-core machine
    each costs a scheduler slice, 4 ms or more, to whatever it was doing)."""
    try:
        with open("/proc/%d/task/%d/status" % (pid, pid)) as f:
            for line in f:
                if line.startswith("nonvoluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def runqueue_wait_ns(pid):
    """Time a process's main thread has spent runnable but not running (the
    scheduler's own count, /proc/PID/schedstat field 2): on a shared machine
    the share of a stall that other tasks took."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def busy_cpu_s():
    """CPU seconds the whole machine has spent busy (user+nice+system+irq+
    softirq+steal) since boot, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def kdamond_cpu_ms():
    """CPU the kernel's DAMON threads (kdamond.*) have used so far, in ms;
    None without them.  On the VMs these figures come from, a kdamond
    samples page access bits across physical memory every 0.5 s, and while
    a pass runs the other vCPU makes no progress (perf samples of a server
    "running" then stop): the longest probe replies line up with those
    passes, which take longer the more memory the server holds."""
    total, found = 0, False
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                if not f.read().startswith("kdamond"):
                    continue
            with open("/proc/%s/schedstat" % pid) as f:
                total += int(f.read().split()[0])
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6 if found else None


def growth_run(binary, name, n, ttl):
    """Load n keys (SET, pipelined 100 per write, one connection), with or
    without a TTL, while a probe GETs every ms.  Returns a dict of figures
    and the running server (for the flush-release step)."""
    import redis
    s = Srv(binary, name)
    r = redis.Redis(port=s.port)
    r.config_set("slowlog-log-slower-than", 2000)
    r.config_set("slowlog-max-len", 1024)
    r.slowlog_reset()
    probe = Probe(s.port)
    probe.start()
    cmd = ["redis-benchmark", "-p", str(s.port), "-c", "1", "-P", "100", "-n", str(n),
           "-r", "1000000000", "-q"]
    cmd += ["SET", "key:__rand_int__", "xxxxxxxxxx"] + (["EX", "100000"] if ttl else [])
    t0 = time.monotonic()
    pre0, wait0, busy0, cpu0 = preemptions(s.pid), runqueue_wait_ns(s.pid), busy_cpu_s(), s.cpu_ns()
    damon0 = kdamond_cpu_ms()
    subprocess.run(cmd, capture_output=True, timeout=3600)
    damon1 = kdamond_cpu_ms()
    load = time.monotonic() - t0
    preempt = preemptions(s.pid) - pre0
    wait = (runqueue_wait_ns(s.pid) - wait0) / 1e9
    srv_cpu = (s.cpu_ns() - cpu0) / 1e9
    # Everything else the machine ran meanwhile (the benchmark and the probe
    # included): on a shared machine, what the stalls are made of.
    others = busy_cpu_s() - busy0 - srv_cpu
    times = probe.finish()
    slow = r.slowlog_get(1024)
    worst = sorted(slow, key=lambda e: -e["duration"])[:3]
    res = {"load_s": load, "keys": r.dbsize(), "probes": len(times),
           "p999_ms": pct(times, 0.999) * 1e3, "max_ms": (times[-1] if times else float("nan")) * 1e3,
           "kdamond_ms": (damon1 - damon0) if damon0 is not None and damon1 is not None else float("nan"),
           "slow": len(slow), "preempt": preempt, "wait_s": wait, "cpu_s": srv_cpu, "others_s": others,
           "expire_ms": int(r.info("stats").get("expire_cycle_cpu_milliseconds", 0)),
           "worst": ["%dus %s" % (e["duration"], e["command"][:30].decode(errors="replace")) for e in worst]}
    return res, s, r


def flush_release(s, r):
    """RSS before FLUSHALL SYNC, the flush's time, RSS 1 s and 3 s later."""
    before = s.rss()
    t0 = time.monotonic()
    r.flushall()
    took = time.monotonic() - t0
    time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
    at1 = s.rss()
    time.sleep(2.0)
    return before, took, at1, s.rss()


def bigvalue_rps(binary, name, size, n):
    """redis-benchmark -c 2 -d size: SET then GET, n requests each.  Returns
    {op: requests/s} and {op: server CPU ms per request}."""
    s = Srv(binary, name)
    try:
        rows, cpu = {}, {}
        for op in ("set", "get"):
            c0 = s.cpu_ns()
            out = subprocess.run(["redis-benchmark", "-p", str(s.port), "-c", "2", "-n", str(n), "-d", str(size),
                                  "-t", op, "--csv"], capture_output=True, timeout=3600).stdout
            cpu[op.upper()] = (s.cpu_ns() - c0) / max(1, n) / 1e6
            for line in out.decode().splitlines():
                parts = [x.strip('"') for x in line.split(",")]
                if len(parts) >= 2 and parts[0] in ("SET", "GET"):
                    rows[parts[0]] = float(parts[1])
        return rows, cpu
    finally:
        s.stop()


def latency():
    """Tail latency while the keyspace grows (with and without TTLs), big
    values, and memory released after FLUSHALL.  BENCH_LAT_KEYS keys are
    loaded (default 2,000,000: the issue's 10M takes over a GB per server
    and minutes per run on a shared 2-core machine; set it to 10000000 to
    reproduce that).  BENCH_LAT_PARTS picks the parts (default
    "growth,big": growth includes the flush release).  Figures on a loaded
    machine are indicative."""
    parts = os.environ.get("BENCH_LAT_PARTS", "growth,big").split(",")
    if "growth" in parts:
        latency_growth()
    if "big" in parts:
        latency_big()


def latency_growth():
    n = env_int("BENCH_LAT_KEYS", 2000000)
    print("\n== latency: growth to %d keys (SET pipelined 100 per write, probe GET every 1 ms)" % n)
    print("(cpu s: the server's CPU; wait s: its main thread runnable but not running; others s: CPU the\n"
          " rest of the machine used meanwhile, benchmark and probe included; expire ms: active expiry's CPU;\n"
          " kdamond ms: the kernel's DAMON threads' CPU meanwhile, nan without them (see kdamond_cpu_ms))")
    print("%-8s %-6s %8s %8s %9s %8s %6s %8s %6s %6s %8s %6s %8s  %s" % (
        "ttl", "server", "keys", "load s", "p99.9 ms", "max ms", "slow>2", "preempt", "cpu s", "wait s",
        "others s", "exp ms", "kdamond", "worst slowlog entries"))
    flush = {}
    for ttl in (False, True):
        for binary, sname in ((A_BIN, A_NAME), (B_BIN, B_NAME)):
            res, s, r = growth_run(binary, sname, n, ttl)
            print("%-8s %-6s %8d %8.1f %9.2f %8.2f %6d %8d %6.1f %6.1f %8.1f %6d %8.0f  %s" % (
                "EX" if ttl else "none", sname, res["keys"], res["load_s"], res["p999_ms"], res["max_ms"],
                res["slow"], res["preempt"], res["cpu_s"], res["wait_s"], res["others_s"], res["expire_ms"],
                res["kdamond_ms"], "; ".join(res["worst"])))
            sys.stdout.flush()
            if ttl:
                flush[sname] = flush_release(s, r)
            s.stop()
    print("\n== latency: memory after FLUSHALL SYNC of the %d keys with TTL (RSS MB)" % n)
    print("%-6s %9s %9s %9s %9s" % ("server", "before", "flush s", "after 1s", "after 3s"))
    for sname in (A_NAME, B_NAME):
        b, took, a1, a3 = flush[sname]
        print("%-6s %9.0f %9.2f %9.0f %9.0f" % (sname, b / 2**20, took, a1 / 2**20, a3 / 2**20))


def latency_big():
    print("\n== latency: big values (redis-benchmark -c 2 -d SIZE -t set, then -t get)")
    print("%-6s %-4s %10s %10s %6s   %s" % ("size", "op", A_NAME, B_NAME, "ratio",
                                           "server CPU ms per request"))
    for size, cnt in ((1 << 20, env_int("BENCH_BIG1_N", 400)), (10 << 20, env_int("BENCH_BIG10_N", 60))):
        a, acpu = bigvalue_rps(A_BIN, A_NAME, size, cnt)
        b, bcpu = bigvalue_rps(B_BIN, B_NAME, size, cnt)
        for op in ("SET", "GET"):
            print("%-6s %-4s %10.1f %10.1f %6.2f   %s %.2f / %s %.2f" % (
                "%dMB" % (size >> 20), op, a.get(op, float("nan")), b.get(op, float("nan")),
                ratio(a.get(op, float("nan")), b.get(op, float("nan"))),
                A_NAME, acpu.get(op, float("nan")), B_NAME, bcpu.get(op, float("nan"))))
        sys.stdout.flush()

# ------------------------------------------------------------- instructions

def callgrind_total(path):
    total = 0
    for fn in os.listdir(os.path.dirname(path)):
        if fn.startswith(os.path.basename(path)):
            with open(os.path.join(os.path.dirname(path), fn)) as f:
                for line in f:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        total += int(line.split()[1])
                        break
    return total


def callgrind_run(binary, name, workload, idle_seconds=0.0):
    """Start binary under callgrind, run workload (list of benchmark tests),
    stop it; return (instructions, wall seconds of the workload)."""
    out = os.path.join(tempfile.mkdtemp(prefix="cairn-cg-"), "cg.out")
    prefix = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p"]
    s = Srv(binary, name, prefix, os.environ.get("BENCH_CG_SERVER_ARGS", "").split())
    n = env_int("BENCH_CG_N", 20000)
    t0 = time.monotonic()
    try:
        if workload:
            for t in workload:
                if t in SCENARIOS and SCENARIOS[t][0]:
                    scenario_setup(s, SCENARIOS[t][0])
                subs = Subscribers(s.port, SCENARIOS[t][1]) if t in SCENARIOS and SCENARIOS[t][1] else None
                # multi10incr: n transactions, from loadgen
                r = run_load(s.port, t, n, env_int("BENCH_CG_PIPELINE", 16), pin=False, timeout=3600)
                if subs:
                    subs.close()
                if r.returncode != 0:
                    print("benchmark failed: %s" % r.stderr, file=sys.stderr)
        else:
            time.sleep(idle_seconds)
        wall = time.monotonic() - t0
    finally:
        s.stop(timeout=600)
    total = callgrind_total(out)
    shutil.rmtree(os.path.dirname(out), ignore_errors=True)
    return total, wall


def instructions():
    """Instructions per request for each test of BENCH_CG_TESTS (default
    set,get): run k measures the first k tests, so test k costs
    (run k - run k-1 - idle rate x extra wall) / N.  Later tests see the
    data earlier ones left (lpop after lpush pops real elements)."""
    if not shutil.which("valgrind"):
        print("\n== instructions: skipped (no valgrind)")
        return
    n = env_int("BENCH_CG_N", 20000)
    tests = [t for t in os.environ.get("BENCH_CG_TESTS", "set,get").split(",") if t]
    res = {}
    # BENCH_CG_SINGLE=1: measure CAIRN_BIN only (both columns show it), for
    # comparisons of tests against each other on one server.
    single = env_int("BENCH_CG_SINGLE", 0)
    for binary, sname in ((A_BIN, A_NAME),) + (() if single else ((B_BIN, B_NAME),)):
        # start+stop only, then the first 1..k tests, then idle (cron cost per second)
        i_0, _ = callgrind_run(binary, sname, [], idle_seconds=0)
        runs = [callgrind_run(binary, sname, tests[:k + 1]) for k in range(len(tests))]
        i_idle, w_idle = callgrind_run(binary, sname, [], idle_seconds=runs[0][1])
        rate = max(0.0, (i_idle - i_0) / max(w_idle, 1e-3))
        prev_i, prev_w, per = i_0, 0.0, []
        for t, (i_k, w_k) in zip(tests, runs):
            # -t ping runs two tests (PING_INLINE, PING_MBULK) of N each
            reqs = n * (2 if t == "ping" else 1)
            per.append((i_k - prev_i - rate * (w_k - prev_w)) / reqs)
            prev_i, prev_w = i_k, w_k
        res[sname] = per
        if single:
            res[B_NAME] = per
        print("  %s: start/stop %d, idle %.0f/s, %s instructions" % (
            sname, i_0, rate, ", ".join("+%s %d (%.1fs)" % (t, i, w)
                                        for t, (i, w) in zip(tests, runs))), file=sys.stderr)
    print("\n== instructions per request (callgrind, -c 50 -P %d, N=%d; workload run "
          "minus idle run)" % (env_int("BENCH_CG_PIPELINE", 16), n))
    print("%-10s %12s %12s %6s" % ("test", A_NAME, B_NAME, "ratio"))
    for i, t in enumerate(tests):
        a, b = res[A_NAME][i], res[B_NAME][i]
        print("%-10s %12.0f %12.0f %6.3f" % (t.upper(), a, b, ratio(a, b)))


# ------------------------------------------------------------------- AOF

def info_field(srv, section, field):
    out = srv.cli("INFO", section).stdout.decode(errors="replace")
    for line in out.splitlines():
        k, _, v = line.partition(":")
        if k == field:
            return v.strip()
    return None


def aof():
    """SET with the AOF on (appendfsync per BENCH_AOF_FSYNC), at each
    pipeline depth, both servers taking turns; then the time of a
    BGREWRITEAOF of BENCH_AOF_KEYS keys.  Figures on a shared machine are
    indicative."""
    modes = os.environ.get("BENCH_AOF_FSYNC", "everysec always").split()
    pipelines = [int(p) for p in os.environ.get("BENCH_PIPELINES", "1 16").split()]
    n = env_int("BENCH_AOF_N", 50000)
    rounds = env_int("BENCH_AOF_ROUNDS", 2)
    gen = os.environ.get("BENCH_AOF_CLIENT", "loadgen")
    print("\n== aof: SET, -c 50, N=%d (x10 when pipelined), %s, %d rounds, medians (indicative: shared machine)"
          % (n, gen, rounds))
    print("%-9s %3s %14s %14s %6s" % ("fsync", "P", "ops/s " + A_NAME, "ops/s " + B_NAME, "ratio"))
    for mode in modes:
        extra = ["--appendonly", "yes", "--appendfsync", mode]
        servers = [Srv(A_BIN, A_NAME, pin_prefix(0), extra), Srv(B_BIN, B_NAME, pin_prefix(0), extra)]
        try:
            for p in pipelines:
                nn = n * (10 if p > 1 else 1)
                rps = {s.name: [] for s in servers}
                for r in range(rounds):
                    for s in (servers if r % 2 == 0 else servers[::-1]):
                        out = run_load(s.port, "set", nn, p, gen)
                        rps[s.name].append(parse_csv_rps(out.stdout)[0])
                ra, rb = statistics.median(rps[A_NAME]), statistics.median(rps[B_NAME])
                print("%-9s %3d %14.0f %14.0f %6.2f" % (mode, p, ra, rb, ratio(ra, rb)))
                if rounds > 2:  # the rounds, for the swings of the disk's fsync latency
                    print("          rounds: %s %s; %s %s" % (
                        A_NAME, " ".join("%.0f" % v for v in rps[A_NAME]),
                        B_NAME, " ".join("%.0f" % v for v in rps[B_NAME])))
        finally:
            for s in servers:
                s.stop()
    if not env_int("BENCH_AOF_REWRITE", 1):
        return
    keys = env_int("BENCH_AOF_KEYS", 1000000)
    extra = ["--appendonly", "yes", "--enable-debug-command", "yes"]
    times = {}
    for binary, name in ((A_BIN, A_NAME), (B_BIN, B_NAME)):
        s = Srv(binary, name, pin_prefix(0), extra)
        try:
            s.cli("DEBUG", "POPULATE", str(keys), timeout=600)
            t0 = time.monotonic()
            s.cli("BGREWRITEAOF")
            while info_field(s, "persistence", "aof_rewrites") != "1" or \
                    info_field(s, "persistence", "aof_rewrite_in_progress") != "0":
                time.sleep(0.01)
            times[name] = time.monotonic() - t0
        finally:
            s.stop()
    print("BGREWRITEAOF of %d keys: %s %.2f s, %s %.2f s, ratio %.2f"
          % (keys, A_NAME, times[A_NAME], B_NAME, times[B_NAME], ratio(times[A_NAME], times[B_NAME])))


def repl_info(s):
    out = s.cli("INFO", "replication").stdout.decode(errors="replace")
    return dict(l.split(":", 1) for l in out.splitlines() if ":" in l)


def wait_repl(pred, timeout=1800):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return False


def vm_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def replication():
    """Full sync time of BENCH_REPL_KEYS keys to one replica (diskless and
    disk, and diskless with the replica on repl-diskless-load swapdb, with
    its peak and final RSS), and SET at pipeline 16 on a primary with one replica attached:
    ops/s, the replica's lag in bytes when the load ends and the time it
    takes to catch up.  Each server replicates to its own kind."""
    keys = env_int("BENCH_REPL_KEYS", 1000000)
    n = env_int("BENCH_REPL_N", 2000000)
    print("\n== replication: full sync of %d keys (DEBUG POPULATE), SET -P 16 with one replica" % keys)
    print("%-22s %12s %12s %6s" % ("scenario", A_NAME, B_NAME, "ratio"))
    rows = {}
    for binary, sname in ((A_BIN, A_NAME), (B_BIN, B_NAME)):
        # "swapdb": a diskless primary, the replica on repl-diskless-load
        # swapdb (it parses the RDB from the socket): time and its peak RSS.
        for diskless in os.environ.get("BENCH_REPL_MODES", "yes,no,swapdb").split(","):
            extra = ["--enable-debug-command", "yes", "--repl-diskless-sync", "no" if diskless == "no" else "yes",
                     "--repl-diskless-sync-delay", "0"]
            p = Srv(binary, sname, extra=extra)
            load = ["--repl-diskless-load", "swapdb"] if diskless == "swapdb" else []
            r = Srv(binary, sname, extra=["--enable-debug-command", "yes"] + load)
            try:
                p.cli("DEBUG", "POPULATE", str(keys))
                t0 = time.monotonic()
                r.cli("REPLICAOF", "127.0.0.1", str(p.port))
                ok = wait_repl(lambda: repl_info(r).get("master_link_status") == "up")
                label = {"yes": "diskless", "no": "disk", "swapdb": "swapdb"}[diskless]
                rows.setdefault("full sync %s (s)" % label, {})[sname] = \
                    time.monotonic() - t0 if ok else float("nan")
                if diskless == "swapdb":
                    rows.setdefault("swapdb replica VmHWM MB", {})[sname] = vm_kb(r.pid, "VmHWM") / 1024
                    rows.setdefault("swapdb replica RSS MB", {})[sname] = vm_kb(r.pid, "VmRSS") / 1024
                if diskless == "yes" and os.environ.get("BENCH_REPL_SET", "1") == "1":
                    p.cli("FLUSHALL")
                    res = run_load(p.port, "set", n, 16, pin=False)
                    rows.setdefault("SET -P 16 ops/s", {})[sname] = parse_csv_rps(res.stdout)[0]
                    mo = int(repl_info(p).get("master_repl_offset", 0))
                    ro = int(repl_info(r).get("slave_repl_offset", 0))
                    rows.setdefault("lag at end (bytes)", {})[sname] = mo - ro
                    t1 = time.monotonic()
                    wait_repl(lambda: int(repl_info(r).get("slave_repl_offset", 0)) >=
                              int(repl_info(p).get("master_repl_offset", 0)))
                    rows.setdefault("catch-up (s)", {})[sname] = time.monotonic() - t1
            finally:
                r.stop()
                p.stop()
    for name, v in rows.items():
        a, b = v.get(A_NAME, float("nan")), v.get(B_NAME, float("nan"))
        print("%-22s %12.3f %12.3f %6.2f" % (name, a, b, ratio(a, b)))


# ------------------------------------------------------------------ cache

def cache_run(binary, name, policy, keys, seq, maxmemory, value):
    """A read-through cache: GET each key of seq, SET it on a miss (in
    batches of 200: GETs pipelined, then the misses' SETs).  Returns (hit
    rate over the second half, keys held, evicted, used_memory)."""
    import redis
    s = Srv(binary, name, (), ["--maxmemory", str(maxmemory), "--maxmemory-policy", policy])
    try:
        r = redis.Redis(port=s.port)
        hits = counted = 0
        half = len(seq) // 2
        for start in range(0, len(seq), 200):
            batch = seq[start:start + 200]
            p = r.pipeline(transaction=False)
            for k in batch:
                p.get(k)
            got = p.execute()
            p = r.pipeline(transaction=False)
            for i, (k, v) in enumerate(zip(batch, got)):
                if start + i >= half:
                    counted += 1
                    hits += v is not None
                if v is None:
                    p.set(k, value)
            p.execute()
        info = r.info()
        return hits / max(counted, 1), r.dbsize(), info["evicted_keys"], info["used_memory"]
    finally:
        s.stop()


def cache():
    """Issue 22's read-through cache, scaled for this machine by default
    (BENCH_CACHE_KEYS possible keys, BENCH_CACHE_OPS operations,
    BENCH_CACHE_MAXMEMORY; the issue's full run is 10M keys, 5M operations,
    200 MB): Zipf(0.99) keys, 100-byte values, the same key stream and
    maxmemory on both servers, allkeys-lru and allkeys-lfu."""
    import bisect
    import random
    nkeys = env_int("BENCH_CACHE_KEYS", 200000)
    nops = env_int("BENCH_CACHE_OPS", 300000)
    maxmemory = env_int("BENCH_CACHE_MAXMEMORY", 8 * 1024 * 1024)
    # Server A's own limit (default: the same), to compare hit rates at
    # equal key counts rather than equal memory.
    maxmemory_a = env_int("BENCH_CACHE_A_MAXMEMORY", maxmemory)
    rng = random.Random(22)
    cdf, total = [], 0.0
    for i in range(nkeys):
        total += 1.0 / (i + 1) ** 0.99
        cdf.append(total)
    names = ["key:%d" % i for i in range(nkeys)]
    rng.shuffle(names)
    seq = [names[bisect.bisect_left(cdf, rng.random() * total)] for _ in range(nops)]
    value = b"v" * 100
    print("\n== read-through cache (Zipf 0.99 over %d keys, %d GET+SET-on-miss, 100-byte values, "
          "maxmemory %d; hit rate over the second half)" % (nkeys, nops, maxmemory))
    print("%-12s %-8s %9s %10s %10s %12s" % ("policy", "server", "hit rate", "keys held", "evicted", "used_memory"))
    for policy in ("allkeys-lru", "allkeys-lfu"):
        for binary, sname, mm in ((A_BIN, A_NAME, maxmemory_a), (B_BIN, B_NAME, maxmemory)):
            hit, held, ev, used = cache_run(binary, sname, policy, nkeys, seq, mm, value)
            print("%-12s %-8s %8.2f%% %10d %10d %12d" % (policy, sname, hit * 100, held, ev, used))


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    print("A=%s (%s)  B=%s (%s)" % (A_NAME, A_BIN, B_NAME, shutil.which(B_BIN) or B_BIN))
    if what in ("throughput", "all"):
        throughput()
    if what in ("memory", "all"):
        memory()
    if what in ("latency", "all"):
        latency()
    if what in ("aof", "all"):
        aof()
    if what in ("replication", "all"):
        replication()
    if what in ("cache", "all"):
        cache()
    if what in ("instructions", "all"):
        if os.environ.get("BENCH_SKIP_CALLGRIND") == "1":
            print("\n== instructions: skipped (BENCH_SKIP_CALLGRIND=1)")
        else:
            instructions()


if __name__ == "__main__":
    main()
