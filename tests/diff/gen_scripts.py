"""Differential stream for Lua scripting (area "scripts").

EVAL / EVALSHA / EVAL_RO / EVALSHA_RO of a fixed set of script templates
over random keys and arguments, with SCRIPT LOAD / EXISTS / FLUSH and plain
data commands mixed in, so that script replies, the Lua <-> RESP
conversions and the error texts (with their SHA and line) are compared byte
for byte with redis-server.

The templates are the seed scripts of issue 6 (counter, rate limiter,
capped set, delayed tasks, message-cache cleanup) and small scripts for
hashes, lists, sets, sorted sets, struct / cjson / cmsgpack / bit round
trips, string and number formatting, nested tables, booleans, pcall and
error cases.

Every script is deterministic on both servers:
  - nothing returned depends on hash-table order: members of sets, hash
    fields and Lua tables iterated with pairs() are sorted in the script,
    and JSON / msgpack objects are built with a single key;
  - math.random is only used after math.randomseed in the same script;
  - no TTLs, clocks or addresses (tostring of a table) are returned.

DIFF_SCRIPTS_SKIP (comma list, e.g. "struct,cmsgpack") leaves out the
templates whose argument maker a_<name> matches, while a library is missing.
"""
import hashlib
import importlib.util
import os

from generators import finish

# The seed scripts that the integration tests run verbatim.
_spec = importlib.util.spec_from_file_location(
    "cairn_script_seeds", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                       "integration", "script_seeds.py"))
_seeds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_seeds)
COUNTER = _seeds.COUNTER
RATE_LIMITER = _seeds.RATE_LIMITER
CAPPED_SET = _seeds.CAPPED_SET
CLEANUP = _seeds.CLEANUP

AREA = "scripts"
COMMANDS = 8000

CKEYS = [b"sc:n0", b"sc:n1", b"sc:n2"]               # counters / strings
HKEYS = [b"sc:h0", b"sc:h1"]
LKEYS = [b"sc:l0", b"sc:l1"]
SKEYS = [b"sc:s0", b"sc:s1"]
ZKEYS = [b"sc:z0", b"sc:z1"]
MKEYS = [b"sc:m0", b"sc:m1"]                          # message caches (seed 000)
ALLKEYS = CKEYS + HKEYS + LKEYS + SKEYS + ZKEYS + MKEYS + [b"k0", b"str"]
FIELDS = [b"f0", b"f1", b"f2", b"RUNNING", b"PENDING"]
WORDS = [b"a", b"b", b"c", b"hello", b"", b"x y", b"\xff\x00", b"10", b"-3", b"1.5", b"task1",
         b"task2", b"task3", b"\"quoted\""]
NUMBERS = [b"0", b"1", b"-1", b"5", b"-5", b"100", b"2.5", b"-0.5", b"1e3", b"abc", b"",
           b"9223372036854775807", b"-9223372036854775808", b"3.14159", b"1e20", b"0x10", b"7"]
NOW = 1700000000

# -------------------------------------------------------------- templates
# name -> (script, argument maker).  The maker returns (keys, argv).
# (COUNTER, RATE_LIMITER, CAPPED_SET and CLEANUP come from script_seeds,
# above.)

DELAYED_TASKS = """local zSetKey = KEYS[1]
local hashKey = KEYS[2]
local maxScore = ARGV[1]
local limit = ARGV[2]
local zList = redis.call('zrangebyscore', zSetKey, '0', maxScore, 'limit', '0', limit)
if zList ~= false and #zList ~= 0 then
    redis.call('zrem', zSetKey, unpack(zList))
    local hashValues = redis.call('hmget', hashKey, unpack(zList))
    if hashValues ~= false and #hashValues ~= 0 then
        redis.call('hdel', hashKey, unpack(zList))
        return {hashValues, cjson.encode(hashValues)}
    else
        return nil
    end
else
    return nil
end
"""

ADD_TASK = """redis.call('zadd', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('hset', KEYS[2], ARGV[2], ARGV[3]) end
return redis.call('zcard', KEYS[1])
"""

ADD_MESSAGE = """return redis.call('zadd', KEYS[1], 0, '0', ARGV[1],
    struct.pack('<i', tonumber(ARGV[2])) .. ARGV[3])
"""

HASH_OPS = """local n = redis.call('hincrby', KEYS[1], ARGV[1], ARGV[2])
redis.call('hset', KEYS[1], 'last', ARGV[3])
local vals = redis.call('hmget', KEYS[1], ARGV[1], 'last', 'missing')
local all = redis.call('hgetall', KEYS[1])
local pairs_ = {}
for i = 1, #all, 2 do pairs_[#pairs_ + 1] = all[i] .. '=' .. all[i + 1] end
table.sort(pairs_)
return {n, vals, pairs_, redis.call('hlen', KEYS[1]), redis.call('hexists', KEYS[1], 'missing')}
"""

LIST_OPS = """redis.call('rpush', KEYS[1], unpack(ARGV))
local popped = redis.call('lpop', KEYS[1])
local len = redis.call('llen', KEYS[1])
if len > 6 then redis.call('ltrim', KEYS[1], -6, -1) end
return {popped, len, redis.call('lrange', KEYS[1], 0, -1), redis.call('lindex', KEYS[1], 100)}
"""

SET_OPS = """local added = redis.call('sadd', KEYS[1], unpack(ARGV))
local m = redis.call('smembers', KEYS[1])
table.sort(m)
local inter = redis.call('sinter', KEYS[1], KEYS[2])
table.sort(inter)
return {added, m, inter, redis.call('sismember', KEYS[1], ARGV[1]), redis.call('scard', KEYS[2])}
"""

ZSET_OPS = """redis.call('zadd', KEYS[1], ARGV[1], ARGV[2])
local r = redis.call('zrange', KEYS[1], 0, -1, 'withscores')
local s = redis.call('zscore', KEYS[1], ARGV[2])
local n = redis.call('zincrby', KEYS[1], ARGV[3], ARGV[2])
return {r, s, n, tonumber(n) * 2, redis.call('zrank', KEYS[1], ARGV[2])}
"""

STRUCT_ROUND_TRIP = """local packed = struct.pack(ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
local a, b, nxt = struct.unpack(ARGV[1], packed)
return {packed, a, b, nxt, struct.size(ARGV[1]), tostring(a)}
"""

STRUCT_UNPACK_RAW = """return {struct.unpack(ARGV[1], ARGV[2])}
"""

CJSON_ROUND_TRIP = """local t = {tonumber(ARGV[1]) or ARGV[1], ARGV[2], {ARGV[3]}, true, false, cjson.null}
local s = cjson.encode(t)
local back = cjson.decode(s)
return {s, #back, back[1], back[2], back[3][1], tostring(back[4]), tostring(back[5]),
        back[6] == cjson.null, cjson.encode({[ARGV[2]] = tonumber(ARGV[1]) or false})}
"""

CJSON_DECODE = """local ok, v = pcall(cjson.decode, ARGV[1])
if not ok then return {err = 'DECODE ' .. v} end
return {type(v), cjson.encode(v)}
"""

CMSGPACK_ROUND_TRIP = """local t = {tonumber(ARGV[1]) or ARGV[1], ARGV[2], {ARGV[3], {1, 2.5}}, true, false}
local s = cmsgpack.pack(t, tonumber(ARGV[1]), ARGV[2])
local a, b, c = cmsgpack.unpack(s)
return {s, #a, a[1], a[2], a[3][1], a[3][2][2], tostring(a[4]), tostring(a[5]), b, c,
        cmsgpack.pack({[ARGV[2]] = 1})}
"""

CMSGPACK_UNPACK_RAW = """local ok, a, b = pcall(cmsgpack.unpack, ARGV[1])
if not ok then return {err = 'UNPACK ' .. a} end
return {type(a), type(b)}
"""

BIT_OPS = """local x, y = tonumber(ARGV[1]) or 0, tonumber(ARGV[2]) or 0
return {bit.band(x, y), bit.bor(x, y), bit.bxor(x, y), bit.bnot(x), bit.lshift(x, y % 32),
        bit.rshift(x, y % 32), bit.arshift(x, y % 32), bit.tohex(x), bit.tohex(x, -4),
        bit.tobit(x), bit.rol(x, 3), bit.bswap(x)}
"""

STRINGS = """local s = ARGV[1]
local n = tonumber(ARGV[2])
local i = math.floor(math.max(math.min(n or 0, 1e9), -1e9))
return {string.upper(s), string.len(s), string.rep(s, 3), string.sub(s, 2, -2),
        string.format('%s|%q|%5.2f|%d|%x', s, s, n or 0, i, math.abs(i)),
        tostring(n), tostring((n or 0) / 3), s:byte(1) or -1, string.find(s, 'l', 1, true) or 0,
        (string.gsub(s, '%a', '*'))}
"""

NUMBERS_TO_REPLY = """local n = tonumber(ARGV[1])
if not n then return redis.error_reply('not a number: ' .. ARGV[1]) end
return {n, n * 1.5, -n, math.floor(n / 7), math.fmod(n, 3), n ^ 2, tostring(n * 1.5),
        {double = n}, math.max(n, 0), math.sqrt(math.abs(n))}
"""

NUMBERS_TO_ARGS = """local n = tonumber(ARGV[1]) or 0
redis.call('set', KEYS[1], n * 1.5)
local a = redis.call('get', KEYS[1])
redis.call('set', KEYS[1], n)
return {a, redis.call('get', KEYS[1]), redis.call('echo', n / 3), redis.call('echo', n * 1e20)}
"""

NESTED = """return {1, 2.9, -2.9, 'x', true, false, {ARGV[1], {ARGV[2], {}}, nil, 'hidden'},
        {ok = 'STATUS'}, {err = 'MYERR ' .. ARGV[1]}, 3}
"""

BOOLEANS = """local t = {}
for i = 1, #ARGV do t[i] = (ARGV[i] == '1') end
t[#t + 1] = redis.call('exists', KEYS[1]) == 1
return t
"""

PCALL_ERRORS = """local out = {}
out[1] = redis.pcall('incr', KEYS[1])
out[2] = redis.pcall('lpush', KEYS[1], 'x')
out[3] = redis.pcall('hget', KEYS[1], 'f')
out[4] = redis.pcall('nosuchcommand', KEYS[1])
out[5] = redis.pcall('get')
out[6] = redis.pcall('set', KEYS[1], ARGV[1], 'junk')
local ok, e = pcall(redis.call, 'incrby', KEYS[1], ARGV[1])
out[7] = tostring(ok)
out[8] = e
return out
"""

CALL_ERROR = """local v = redis.call(ARGV[1], KEYS[1], ARGV[2])
return {v}
"""

RAISE = """local kind = ARGV[1]
if kind == '1' then error('plain message') end
if kind == '2' then error({err = 'CUSTOM with code'}) end
if kind == '3' then return redis.error_reply('MYERR ' .. ARGV[2]) end
if kind == '4' then return redis.status_reply(ARGV[2]) end
if kind == '5' then return 1 < ARGV[2] end
if kind == '6' then return undefined_global end
if kind == '7' then newglobal = 1 end
if kind == '8' then return nil .. ARGV[2] end
if kind == '9' then error(redis.error_reply(ARGV[2])) end
return {err = ARGV[2]}
"""

SELECT_DB = """redis.call('select', ARGV[1])
redis.call('incr', KEYS[1])
return {redis.call('get', KEYS[1]), redis.call('dbsize')}
"""

SHA_AND_KEYS = """return {redis.sha1hex(ARGV[1] or ''), #KEYS, #ARGV, KEYS[1] or false, ARGV[#ARGV] or false}
"""

SEEDED_RANDOM = """math.randomseed(tonumber(ARGV[1]) or 0)
return {math.random(1000000), math.random(10), math.floor(math.random() * 1000)}
"""

SORTED_PAIRS = """local t = {}
for i = 1, #ARGV do t[ARGV[i]] = i end
local keys = {}
for k in pairs(t) do keys[#keys + 1] = k end
table.sort(keys)
local out = {}
for _, k in ipairs(keys) do out[#out + 1] = k .. ':' .. t[k] end
return out
"""

RESP3_IN_RESP2 = """redis.setresp(3)
local h = redis.call('hgetall', KEYS[1])
local z = redis.call('zscore', KEYS[2], ARGV[1])
local n = redis.call('get', 'sc:none')
local fields = {}
if type(h) == 'table' and h.map then
    for k, v in pairs(h.map) do fields[#fields + 1] = k .. '=' .. v end
end
table.sort(fields)
return {fields, type(z) == 'table' and z.double or 'no score', n == nil}
"""

NO_WRITES = """#!lua flags=no-writes
local v = redis.call('get', KEYS[1])
if ARGV[1] == 'write' then redis.call('set', KEYS[1], 'x') end
return v
"""

WRITE_SCRIPT = """return redis.call('set', KEYS[1], ARGV[1])
"""

READ_SCRIPT = """return redis.call('type', KEYS[1])
"""


def _k(rng, pool):
    return rng.choice(pool) if rng.random() < 0.92 else rng.choice(ALLKEYS)


def _num(rng):
    return rng.choice(NUMBERS) if rng.random() < 0.6 else str(rng.randint(-300, 300)).encode()


def _word(rng):
    return rng.choice(WORDS)


def a_counter(rng):
    return [_k(rng, HKEYS)], [rng.choice(FIELDS), rng.choice([b"-1", b"1", b"-3", b"5", b"-10", b"x"])]


def a_rate(rng):
    args = [] if rng.random() < 0.2 else [rng.choice([b"1", b"3", b"5", b"x"]), b"100000"]
    return [_k(rng, CKEYS)], args


def a_capped(rng):
    args = [_word(rng)] + ([] if rng.random() < 0.3 else [rng.choice([b"2", b"4", b"8"])])
    return [_k(rng, SKEYS)], args


def a_delayed(rng):
    return [_k(rng, ZKEYS), _k(rng, HKEYS)], [rng.choice([b"100", b"300", b"1000", b"+inf", b"x"]),
                                              rng.choice([b"1", b"2", b"10", b"-1"])]


def a_add_task(rng):
    task = b"task%d" % rng.randint(1, 6)
    body = b"" if rng.random() < 0.2 else b'{"id":"%s","n":%d}' % (task, rng.randint(0, 9))
    return [_k(rng, ZKEYS), _k(rng, HKEYS)], [str(rng.randint(1, 10) * 100).encode(), task, body]


def a_cleanup(rng):
    return [_k(rng, MKEYS), rng.choice([b"2", b"5", b"10", b"x"]),
            str(NOW - rng.choice([1, 5, 8, 30]) * 86400).encode()], []


def a_add_message(rng):
    ts = NOW - rng.randint(0, 40) * 86400 + rng.randint(0, 1000)
    return [_k(rng, MKEYS)], [str(rng.randint(1, 10 ** 6)).encode(), str(ts).encode(),
                              rng.choice([b"hi", b"\x00\xff", b"msg body", b""])]


def a_hash(rng):
    return [_k(rng, HKEYS)], [rng.choice(FIELDS), rng.choice([b"1", b"-2", b"10", b"x"]), _word(rng)]


def a_list(rng):
    return [_k(rng, LKEYS)], [_word(rng) for _ in range(rng.randint(1, 4))]


def a_set(rng):
    return [_k(rng, SKEYS), _k(rng, SKEYS)], [_word(rng) for _ in range(rng.randint(1, 4))]


def a_zset(rng):
    return [_k(rng, ZKEYS)], [rng.choice([b"1", b"2.5", b"-1", b"1e3", b"x", b"inf"]), _word(rng),
                              rng.choice([b"1", b"0.5", b"-2", b"y"])]


STRUCT_FORMATS = [b"<i", b">i", b"<h", b"<I2", b">I4", b"<l", b"<d", b"<f", b"bB", b"<i8", b"<I3",
                  b"!4<ih", b"<i17", b"<i33", b"c2", b"Q", b"<b"]


def a_struct(rng):
    fmt = rng.choice(STRUCT_FORMATS)
    if fmt in (b"bB", b"!4<ih"):
        pass
    elif rng.random() < 0.7:
        fmt = fmt + fmt[-1:] if fmt[-1:].isalpha() else fmt + fmt
    return [], [fmt, _num(rng), _num(rng)]


def a_struct_raw(rng):
    fmt = rng.choice([b"<i", b">I2", b"bbb", b"<d", b"s", b"<ic2", b"B", b"c0", b"bc0", b"<i", b"xi"])
    data = rng.choice([b"\x01\x02\x03\x04", b"ab", b"\x00\xf1Se hello", b"\x03abcd", b"abc\x00def",
                       b"", b"\xff\xff\xff\xff\xff\xff\xff\xff"])
    return [], [fmt, data]


def a_cjson(rng):
    return [], [_num(rng), _word(rng), _word(rng)]


JSON_TEXTS = [b"[1,2,3]", b'{"a":[1,{"b":null}]}', b'"str\\u00e9"', b"1e400", b"NaN", b"[1,2",
              b"", b"-0", b"0.1", b"[true,false,null]", b'{"k":"v"}', b"[" * 1200 + b"]" * 1200,
              b"[[[[[[[[[[1]]]]]]]]]]", b"123456789012345678", b'"\\ud800"', b"{", b"tru",
              b'[1.5e300, -2.5e-300]', b'["\\n\\t\\/"]']


def a_cjson_decode(rng):
    return [], [rng.choice(JSON_TEXTS)]


def a_cmsgpack(rng):
    return [], [_num(rng), _word(rng), _word(rng)]


MSGPACK_TEXTS = [b"\x93\x01\x02\x03", b"\x81\xa1a\x01", b"\xc3", b"\xc0", b"\xca?\xc0\x00\x00",
                 b"\xdd\xff\xff\xff\xff", b"\xc1", b"\x92\x01", b"", b"\x91" * 5000, b"\xa3abc",
                 b"\xcf\x00\x00\x01\x00\x00\x00\x00\x00", b"\xd3\xff\xff\xff\xff\xff\xff\xff\xff"]


def a_cmsgpack_raw(rng):
    return [], [rng.choice(MSGPACK_TEXTS)]


def a_bits(rng):
    nums = [b"65535", b"-1", b"0", b"2147483648", b"-2147483648", b"4294967296", b"255", b"x",
            b"1.9", b"123456789"]
    return [], [rng.choice(nums), rng.choice(nums + [b"3", b"31", b"-2"])]


def a_strings(rng):
    return [], [rng.choice([b"hello", b"", b"a", b"l\x00l", b"\xff\xfe", b"Hello World"]), _num(rng)]


def a_number(rng):
    return [], [_num(rng)]


def a_number_args(rng):
    return [_k(rng, CKEYS)], [_num(rng)]


def a_words(rng):
    return [], [_word(rng), _word(rng)]


def a_booleans(rng):
    return [_k(rng, ALLKEYS)], [rng.choice([b"0", b"1"]) for _ in range(rng.randint(0, 4))]


def a_pcall(rng):
    return [_k(rng, CKEYS + HKEYS + LKEYS)], [_num(rng)]


def a_call_error(rng):
    cmd = rng.choice([b"incr", b"get", b"lpush", b"hget", b"sadd", b"zadd", b"nosuch", b"set",
                      b"multi", b"subscribe", b"blpop", b"incrby", b"config", b"ping"])
    return [_k(rng, ALLKEYS)], [cmd, _word(rng)]


def a_raise(rng):
    return [], [str(rng.randint(0, 9)).encode(), _word(rng)]


def a_select(rng):
    return [_k(rng, CKEYS)], [rng.choice([b"0", b"1", b"2", b"15", b"16", b"x"])]


def a_sha(rng):
    return [_k(rng, ALLKEYS) for _ in range(rng.randint(0, 2))], [_word(rng) for _ in range(rng.randint(0, 3))]


def a_seeded(rng):
    return [], [rng.choice([b"0", b"1", b"42", b"1234567", b"x"])]


def a_pairs(rng):
    return [], [_word(rng) for _ in range(rng.randint(0, 6))]


def a_resp3(rng):
    return [_k(rng, HKEYS), _k(rng, ZKEYS)], [_word(rng)]


def a_no_writes(rng):
    return [_k(rng, CKEYS)], [rng.choice([b"read", b"write"])]


def a_write(rng):
    return [_k(rng, CKEYS + [b"k0", b"str"])], [_num(rng)]


def a_read(rng):
    return [_k(rng, ALLKEYS)], []


TEMPLATES = [
    (COUNTER, a_counter, 6), (RATE_LIMITER, a_rate, 4), (CAPPED_SET, a_capped, 4),
    (DELAYED_TASKS, a_delayed, 3), (ADD_TASK, a_add_task, 5), (CLEANUP, a_cleanup, 3),
    (ADD_MESSAGE, a_add_message, 5), (HASH_OPS, a_hash, 3), (LIST_OPS, a_list, 3),
    (SET_OPS, a_set, 3), (ZSET_OPS, a_zset, 3), (STRUCT_ROUND_TRIP, a_struct, 4),
    (STRUCT_UNPACK_RAW, a_struct_raw, 3), (CJSON_ROUND_TRIP, a_cjson, 3),
    (CJSON_DECODE, a_cjson_decode, 3), (CMSGPACK_ROUND_TRIP, a_cmsgpack, 3),
    (CMSGPACK_UNPACK_RAW, a_cmsgpack_raw, 2), (BIT_OPS, a_bits, 3), (STRINGS, a_strings, 3),
    (NUMBERS_TO_REPLY, a_number, 3), (NUMBERS_TO_ARGS, a_number_args, 3), (NESTED, a_words, 2),
    (BOOLEANS, a_booleans, 2), (PCALL_ERRORS, a_pcall, 3), (CALL_ERROR, a_call_error, 4),
    (RAISE, a_raise, 4), (SELECT_DB, a_select, 2), (SHA_AND_KEYS, a_sha, 2),
    (SEEDED_RANDOM, a_seeded, 1), (SORTED_PAIRS, a_pairs, 2), (RESP3_IN_RESP2, a_resp3, 2),
    (NO_WRITES, a_no_writes, 2), (WRITE_SCRIPT, a_write, 2), (READ_SCRIPT, a_read, 1),
]
# DIFF_SCRIPTS_SKIP=struct,cmsgpack drops the templates whose argument
# maker's name (a_<name>) contains one of the words, so that a missing
# library does not stop the stream at its first use.
_SKIP = [w for w in os.environ.get("DIFF_SCRIPTS_SKIP", "").split(",") if w]
_WEIGHTED = [t for t in TEMPLATES if not any(w in t[1].__name__ for w in _SKIP)
             for _ in range(t[2])]


def sha1hex(script):
    return hashlib.sha1(script.encode()).hexdigest().encode()


def eval_cmd(rng):
    script, make, _ = rng.choice(_WEIGHTED)
    keys, argv = make(rng)
    numkeys = str(len(keys)).encode()
    r = rng.random()
    if r < 0.55:
        head = (b"EVAL", script.encode())
    elif r < 0.85:
        head = (b"EVALSHA", sha1hex(script) if rng.random() < 0.9 else sha1hex(script).upper())
    elif r < 0.93:
        head = (b"EVAL_RO", script.encode())
    else:
        head = (b"EVALSHA_RO", sha1hex(script))
    if rng.random() < 0.02:
        numkeys = rng.choice([b"-1", b"x", b"99", b"1.5"])
    return head + (numkeys,) + tuple(keys) + tuple(argv)


def admin_cmd(rng):
    r = rng.randrange(10)
    script = rng.choice(TEMPLATES)[0]
    if r < 5:
        return (b"SCRIPT", b"LOAD", script.encode())
    if r < 7:
        return (b"SCRIPT", b"EXISTS", sha1hex(script), sha1hex(rng.choice(TEMPLATES)[0]), b"f" * 40)
    if r == 7:
        return (b"SCRIPT", b"FLUSH") + rng.choice([(), (b"SYNC",), (b"ASYNC",)])
    if r == 8:
        return (b"EVAL", rng.choice([b"return (", b"#!lua flags=bogus\nreturn 1", b"#!nope\nreturn 1",
                                     b"return 1 +", b"#!lua\nreturn 7"]), b"0")
    return (b"SCRIPT", b"KILL")


def data_cmd(rng):
    r = rng.randrange(14)
    if r == 0:
        return (b"SET", _k(rng, CKEYS + [b"k0"]), _num(rng))
    if r == 1:
        return (b"DEL", rng.choice(ALLKEYS), rng.choice(ALLKEYS))
    if r == 2:
        return (b"HSET", _k(rng, HKEYS), rng.choice(FIELDS), _num(rng))
    if r == 3:
        return (b"RPUSH", _k(rng, LKEYS), _word(rng))
    if r == 4:
        return (b"SADD", _k(rng, SKEYS), _word(rng))
    if r == 5:
        return (b"ZADD", _k(rng, ZKEYS), str(rng.randint(1, 10) * 100).encode(), b"task%d" % rng.randint(1, 6))
    if r == 6:
        return (b"TYPE", rng.choice(ALLKEYS))
    if r == 7:
        return (b"ZRANGE", _k(rng, ZKEYS + MKEYS), b"0", b"-1", b"WITHSCORES")
    if r == 8:
        return (b"LRANGE", _k(rng, LKEYS), b"0", b"-1")
    if r == 9:
        return (b"HLEN", _k(rng, HKEYS))
    if r == 10:
        return (b"SCARD", _k(rng, SKEYS))
    if r == 11:
        return (b"SELECT", rng.choice([b"0", b"0", b"0", b"1"]))
    if r == 12:
        return (b"DBSIZE",)
    return (b"GET", _k(rng, CKEYS))


def transaction(rng):
    body = [eval_cmd(rng) if rng.random() < 0.7 else data_cmd(rng) for _ in range(rng.randint(1, 4))]
    return [(b"MULTI",)] + body + [rng.choice([(b"EXEC",), (b"EXEC",), (b"DISCARD",)])]


def generate(rng, n, now):
    cmds = [(b"SELECT", b"0")]
    while len(cmds) < n:
        r = rng.random()
        if r < 0.72:
            cmds.append(eval_cmd(rng))
        elif r < 0.8:
            cmds.append(admin_cmd(rng))
        elif r < 0.96:
            cmds.append(data_cmd(rng))
        else:
            cmds += transaction(rng)
    return finish(rng, cmds, n)
