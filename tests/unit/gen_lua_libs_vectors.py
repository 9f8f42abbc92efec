#!/usr/bin/python3
"""Record what redis-server 7.0 answers for struct / cmsgpack / bit.tohex
snippets, as C data for test_lua_libs.c.

Usage: gen_lua_libs_vectors.py PORT > tests/unit/lua_libs_vectors.h
(PORT: a redis-server 7.0.15 you started).  Each case is a Lua expression
list E, run as `return show(E)` after PRELUDE (cases starting with "return"
are run as they are).  show() renders the results deterministically: the
count, then each value (numbers with %.17g, strings escaped, tables with
sorted keys).  An error is recorded as its message (the text Redis puts
before " script: ...").  The C test runs the same chunks, named
"@user_script" like Redis's, and compares the texts.  Rerun only to
re-record.
"""
import json
import sys

import redis

# One line, so every error position is "user_script:1:".
PRELUDE = (
    "local function esc(s) return (string.gsub(s, '[^%w ]', function(c) "
    "return string.format('\\\\%03d', string.byte(c)) end)) end "
    "local dump "
    "dump = function(v) local t = type(v) "
    "if t == 'number' then return string.format('%.17g', v) "
    "elseif t == 'string' then return '\"' .. esc(v) .. '\"' "
    "elseif t == 'table' then local ks = {} for k in pairs(v) do ks[#ks + 1] = k end "
    "table.sort(ks, function(a, b) return dump(a) < dump(b) end) "
    "local p = {} for _, k in ipairs(ks) do p[#p + 1] = dump(k) .. '=' .. dump(v[k]) end "
    "return '{' .. table.concat(p, ',') .. '}' "
    "else return tostring(v) end end "
    "local function show(...) local p = {tostring(select('#', ...))} "
    "for i = 1, select('#', ...) do p[#p + 1] = dump((select(i, ...))) end "
    "return table.concat(p, ' ') end "
    "local function hex(s) return (string.gsub(s, '.', function(c) "
    "return string.format('%02x', string.byte(c)) end)) end "
    "local function nest(n, leaf) local t = leaf for i = 1, n do t = {t} end return t end "
    "local function depth(t) local d = 0 while type(t) == 'table' do t = t[1] d = d + 1 end return d, t end "
)

STRUCT = [
    # pack: byte order, sizes, every letter
    "hex(struct.pack('<i', 5))", "hex(struct.pack('>i', 5))", "hex(struct.pack('i', 5))",
    "hex(struct.pack('bBhHlLT', 1, 2, 3, 4, 5, 6, 7))", "hex(struct.pack('>bBhHlLT', -1, 2, -3, 4, -5, 6, 7))",
    "hex(struct.pack('i3', 5))", "hex(struct.pack('>i3', -5))", "hex(struct.pack('i0', 5))",
    "hex(struct.pack('<i17', -5))", "hex(struct.pack('>i17', -5))", "hex(struct.pack('I32', 1))",
    "hex(struct.pack('xbxx', 7))", "hex(struct.pack('  i', 1))", "hex(struct.pack(' '))",
    "hex(struct.pack('<f>f<d>d', 1.5, 1.5, 1.5, 1.5))", "hex(struct.pack('>f', 0.1))",
    "hex(struct.pack('>f', 1e300))", "hex(struct.pack('>f', 1e-300))", "hex(struct.pack('>f', 1/0))",
    "hex(struct.pack('>d', -1/0))", "hex(struct.pack('>d', -(0/0)))",
    "hex(struct.pack('c3', 'abcdef'))", "hex(struct.pack('c0', 'abc'))", "hex(struct.pack('c', 'abc'))",
    "hex(struct.pack('s', 'a\\0b'))", "hex(struct.pack('c2', 12))", "hex(struct.pack('c2', 1.5))",
    "hex(struct.pack('s', 1.5))", "hex(struct.pack('b', 1, 2, 3))", "hex(struct.pack('b', '12'))",
    "hex(struct.pack('i', '0x10'))", "hex(struct.pack('i', ' 10 '))",
    "hex(struct.pack('<!4>b!4i', 1, 2))", "hex(struct.pack('b!', 1))",
    # pack: alignment
    "hex(struct.pack('!4bi', 1, 2))", "hex(struct.pack('!bi', 1, 2))", "hex(struct.pack('!2bi', 1, 2))",
    "hex(struct.pack('!bd', 1, 2))", "hex(struct.pack('!bxd', 1, 2))", "hex(struct.pack('!bs', 1, 'ab'))",
    "hex(struct.pack('!bsd', 1, 'ab', 1))", "hex(struct.pack('b!4i', 1, 2))",
    # pack: double -> integer conversions
    "hex(struct.pack('<b', 1.7))", "hex(struct.pack('<b', -1.7))", "hex(struct.pack('<b', 300))",
    "hex(struct.pack('<B', -1))", "hex(struct.pack('<i', 2^40))", "hex(struct.pack('<I8', 2^63))",
    "hex(struct.pack('<I8', 2^63 + 4096))", "hex(struct.pack('<i8', -2^63))", "hex(struct.pack('<I8', 2^64))",
    "hex(struct.pack('<i8', 1e300))", "hex(struct.pack('<i8', -1e300))", "hex(struct.pack('<i8', 0/0))",
    "hex(struct.pack('<i8', 1/0))", "hex(struct.pack('<i8', -1/0))", "hex(struct.pack('<I8', -1))",
    "hex(struct.pack('<I8', -2.5))", "hex(struct.pack('<I8', 2^63 - 1024))", "hex(struct.pack('<i8', 2^63))",
    "hex(struct.pack('<i8', 2^64 + 2^60))", "hex(struct.pack('<I8', -2^64))",
    # pack: errors
    "struct.pack('i33', 5)", "struct.pack('i33')", "struct.pack('i2147483648', 1)",
    "struct.pack('c2147483648', 'a')", "struct.pack('!17')", "struct.pack('!3bh', 1, 2)",
    "struct.pack('!0i', 1)", "struct.pack('b!3', 1)", "struct.pack('q', 1)", "struct.pack('z', 1)",
    "struct.pack('x9')", "struct.pack('9')", "struct.pack('b=', 1)", "struct.pack(12)",
    "struct.pack('bbb', 1)", "struct.pack('b', 'x')", "struct.pack('i', true)", "struct.pack()",
    "struct.pack(nil)", "struct.pack('c3', 'ab')", "struct.pack('bc3', 1, 'ab')", "struct.pack('c', '')",
    "struct.pack('s', {})", "struct.pack('c', nil)", "struct.pack('c99999999999', 'a')",
    "struct.pack('c2147483647', 'abc')",
    # size
    "struct.size('i17')", "struct.size('i32')", "struct.size('c99999999999')", "struct.size('!17')",
    "struct.size('!16i')", "struct.size('i2147483647')", "struct.size('i2147483648')",
    "struct.size('c2147483647')", "struct.size('c2147483648')", "struct.size('c2147483650')",
    "struct.size('c00000000002147483647')", "struct.size('x99999999')", "struct.size('x999999999x9999999999')",
    "struct.size('c2147483647c2147483647')", "struct.size('!0i')", "struct.size('!i')", "struct.size('!1bi')",
    "struct.size('!2bi')", "struct.size('!8bd')", "struct.size('!bd')", "struct.size('!32bi32')",
    "struct.size('!bi3')", "struct.size('!bbi3')", "struct.size('!bi5')", "struct.size('!bbbi5')",
    "struct.size('!bi6')", "struct.size('!bbbi6')", "struct.size('!bbbbbi7')", "struct.size('!bi16')",
    "struct.size('!16bi16')", "struct.size('!64bi64')", "struct.size('!4')", "struct.size('!2147483648')",
    "struct.size('!1024i')", "struct.size('!1024bd')", "struct.size('q')", "struct.size('9')",
    "struct.size('x9')", "struct.size('Z')", "struct.size('#')", "struct.size('_')", "struct.size('=')",
    "struct.size('<>=!')", "struct.size('s')", "struct.size('c')", "struct.size('c0')", "struct.size('f')",
    "struct.size('d')", "struct.size('')", "struct.size('!bi0')", "struct.size('!bc2')", "struct.size('!bx')",
    "struct.size('!2bd')", "struct.size('!bh')", "struct.size('!bl')", "struct.size('!bT')", "struct.size('!bf')",
    "struct.size('!bB')", "struct.size('!bH')", "struct.size('!bL')", "struct.size('!bI')",
    "struct.size('!bI3')", "struct.size('!bd!1d')", "struct.size('b!d')", "struct.size('!4bd!8bd')",
    "struct.size('bbb!4d')", "struct.size('bbb!4c3d')", "struct.size('x x')", "struct.size('xX')",
    "struct.size('i', 'x')", "struct.size(12)", "struct.size()",
    "struct.size('c2147483647c2147483647c2147483647c2147483647c2147483647c2147483647c2147483647')",
    # unpack
    "struct.unpack('<i', '\\5\\0\\0\\0')", "struct.unpack('>i', '\\0\\0\\0\\5')", "struct.unpack('<i', '\\5\\0\\0')",
    "struct.unpack('<i', '\\5\\0\\0\\0', 2)", "struct.unpack('<b', 'ab', 2)", "struct.unpack('<b', 'ab', 0)",
    "struct.unpack('<b', 'ab', -1)", "struct.unpack('<b', 'ab', 3)", "struct.unpack('<b', 'ab', 4)",
    "struct.unpack('', 'ab', 3)", "struct.unpack('', 'ab', 4)", "struct.unpack('', 'ab', 40)",
    "struct.unpack('', 'ab', -2^40)", "struct.unpack('', 'ab', 2^40)", "struct.unpack('', 'ab', 1.5)",
    "struct.unpack('', 'ab', 2.9)", "struct.unpack('', 'ab', 'x')", "struct.unpack('', 'ab', '2')",
    "struct.unpack('', 'ab', 0.5)", "struct.unpack('', 'ab', -0.5)", "struct.unpack('', 'ab', 2^53 + 1)",
    "struct.unpack('bc0', '\\3abcd')", "struct.unpack('bc0b', '\\3abcd')", "struct.unpack('c0', 'abcd')",
    "struct.unpack('sc0', '3\\0abcd')", "struct.unpack('sc0', 'x\\0abcd')", "struct.unpack('bc0', '\\255abcd')",
    "struct.unpack('bc0', '\\9abcd')", "struct.unpack('Bc0', '\\0abcd')",
    "struct.unpack('dc0', struct.pack('d', 2.7) .. 'abcd')", "struct.unpack('dc0', struct.pack('d', -0.5) .. 'abcd')",
    "struct.unpack('dc0', struct.pack('d', 2^64) .. 'abcd')", "struct.unpack('dc0', struct.pack('d', 0/0) .. 'abcd')",
    "struct.unpack('<i8', 'abcdefgh', -1)", "struct.unpack('x', '')", "struct.unpack('x', 'a', 5)",
    "struct.unpack('xb', 'a')", "struct.unpack('xb', 'ab')",
    "struct.unpack('<i9', '\\1\\0\\0\\0\\0\\0\\0\\0\\0')", "struct.unpack('<i9', '\\1\\0\\0\\0\\0\\0\\0\\0\\1')",
    "struct.unpack('<i9', '\\255\\255\\255\\255\\255\\255\\255\\255\\255')",
    "struct.unpack('<i9', '\\255\\255\\255\\255\\255\\255\\255\\255\\0')",
    "struct.unpack('<I9', '\\255\\255\\255\\255\\255\\255\\255\\255\\255')",
    "struct.unpack('>I9', '\\1\\255\\255\\255\\255\\255\\255\\255\\255')",
    "struct.unpack('<i16', '\\1\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0')",
    "struct.unpack('<i8', '\\255\\255\\255\\255\\255\\255\\255\\255')",
    "struct.unpack('<I8', '\\255\\255\\255\\255\\255\\255\\255\\255')",
    "struct.unpack('<i8', '\\0\\0\\0\\0\\0\\0\\0\\128')", "struct.unpack('<i7', '\\0\\0\\0\\0\\0\\0\\128')",
    "struct.unpack('<I7', '\\0\\0\\0\\0\\0\\0\\128')", "struct.unpack('<i3', '\\0\\0\\128')",
    "struct.unpack('>i3', '\\128\\0\\1')", "struct.unpack('bBhHlLT', struct.pack('bBhHlLT', -1, 255, -2, 65535, -3, 2^40, 7))",
    "struct.unpack('s', 'abc')", "struct.unpack('s', 'abc\\0')", "struct.unpack('s', 'abc\\0', 4)",
    "struct.unpack('s', 'abc\\0', 5)", "struct.unpack('s', 'abc\\0', 6)", "struct.unpack('ss', 'a\\0\\0')",
    "struct.unpack('i0', '')", "struct.unpack('i0', '', 5)", "struct.unpack('bi0', 'a')",
    "struct.unpack('c5', 'abcd')", "struct.unpack('c4', 'abcd')", "struct.unpack('c', 'abcd', 4)",
    "struct.unpack('!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0')", "struct.unpack('!4bi', 'x\\1\\0\\0\\0\\2\\0\\0\\0', 2)",
    "struct.unpack('!4bi', 'xxx\\1\\0\\0\\0\\2\\0\\0\\0', 4)", "struct.unpack('>!4bi', 'xxx\\1\\0\\0\\0\\0\\0\\0\\2', 4)",
    "struct.unpack('<', 'ab', 5)", "struct.unpack(' ', 'ab', 5)", "struct.unpack('!', 'ab', 5)",
    "struct.unpack(' ', 'abc')", "struct.unpack('!i', 'abcd', -1)", "struct.unpack('!i', 'abcd', -2)",
    "struct.unpack('!2h', 'abcd', -1)", "struct.unpack('q', 'ab', 5)", "struct.unpack('i33', 'ab', 5)",
    "struct.unpack('c0', 'ab', 5)", "struct.unpack('bi3', 'abcd')", "struct.unpack('!bi3', 'abcd')",
    "struct.unpack('!bi3', 'abcdef')", "struct.unpack('i33', '')", "struct.unpack('q', 'a')",
    "struct.unpack('=', 'a')", "struct.unpack('b=', 'a')", "struct.unpack('b')", "struct.unpack('b', nil)",
    "struct.unpack('b', 65)", "struct.unpack('b', 'a', nil)", "struct.unpack('b', 'a', {})",
    "struct.unpack('>f', struct.pack('>f', 0.1))", "struct.unpack('<d', struct.pack('<d', 0.1))",
    "struct.unpack('>d', struct.pack('>d', -1/0))", "struct.unpack('<d', struct.pack('>d', 1.5))",
    "struct.unpack('<f<d', struct.pack('<f<d', 1e300, 1e-300))",
    "struct.unpack('c2147483647', 'abc')", "struct.unpack('c99999999999', 'abc')",
    "tostring(struct.unpack('', 'ab', -1e300))", "tostring(struct.unpack('', 'ab', 1e300))",
    "tostring(struct.unpack('', 'ab', 0/0))", "tostring(struct.unpack('', 'ab', 2^63))",
    "struct.unpack('x', 'ab', 2^63)",
    # results limited by the Lua stack
    "select('#', struct.unpack(string.rep('b', 7997), string.rep('a', 7997)))",
    "select('#', struct.unpack(string.rep('b', 7998), string.rep('a', 7998)))",
    "select('#', struct.unpack(string.rep('b', 100000), string.rep('a', 100000)))",
    "select('#', struct.unpack(string.rep('b', 7997) .. 'x', string.rep('a', 7998)))",
    "select('#', struct.unpack(string.rep('b', 7997) .. '<', string.rep('a', 7998)))",
    "select('#', struct.unpack(string.rep('b', 7997), string.rep('a', 7998), 1))",
    "select('#', struct.unpack(string.rep('b', 7996), string.rep('a', 7998), 1))",
    # big data
    "#struct.pack('c0', string.rep('x', 10 * 1024 * 1024))",
    "#struct.pack('s', string.rep('x', 10 * 1024 * 1024))",
    "#struct.unpack('c10485760', string.rep('x', 10 * 1024 * 1024))",
    "struct.unpack('c10485761', string.rep('x', 10 * 1024 * 1024))",
    "#struct.unpack('s', string.rep('x', 10 * 1024 * 1024) .. '\\0')",
    "struct.unpack('s', string.rep('x', 10 * 1024 * 1024))",
    "struct.unpack('<I4', struct.pack('<I4', 4294967295))", "struct.unpack('>I2I2', struct.pack('>I4', 65539))",
]

MSGPACK_PACK = [
    "nil", "true", "false", "0", "1", "127", "128", "255", "256", "65535", "65536", "2^32-1", "2^32", "2^53",
    "2^63", "2^64", "-1", "-32", "-33", "-128", "-129", "-32768", "-32769", "-2^31", "-2^31-1", "-2^63",
    "-2^64", "1.5", "0.1", "-1.5", "1e300", "-0.0", "3.4028234663852886e+38", "1e-45", "2^31+0.5",
    "0/0", "-(0/0)", "1/0", "-1/0", "2^53+2", "-2^53-2", "4294967296.5", "2^63-1024",
    "''", "'a'", "string.rep('a', 31)", "string.rep('a', 32)", "'a\\0b'",
    "{}", "{1, 2, 3}", "{a = 1}", "{1, nil, 3}", "{[2] = 1}", "{[1] = 1, [2] = 2, [4] = 4}", "{[1.5] = 1}",
    "{[0] = 1}", "{1, 2, x = 3}", "tostring", "1, 2, 3", "nil, nil", "{{{}}}",
    "setmetatable({}, {__index = function() return 1 end})", "{n = 1, [1] = 2}", "{1, 2, 3, nil}",
    "{[1] = true, [3] = false, [2] = 'x'}", "{[-1] = 1}", "{[2^53] = 1}", "{[true] = 1}", "{[{}] = 1}",
    "{[1] = 'a', [2^32+2] = 'b'}", "{[1] = 'a', [2^32+1] = 'b'}", "{[1] = 'a', [1e300] = 'b'}",
    "{[1] = 'a', [-2^32+2] = 'b'}", "{[1] = 'a', [2^31+2] = 'b'}", "{[1] = 'a', [2^63+2048] = 'b'}",
    "coroutine.create(tostring)", "nest(15, 1)", "nest(16, 1)", "nest(17, 1)", "nest(20, 'x')",
    "1, nest(20), 2",
]

MSGPACK = [
    "cmsgpack._NAME", "cmsgpack._VERSION", "cmsgpack._DESCRIPTION",
    "cmsgpack.pack()",
    "return show(hex((function() local t = {} t[1] = t return cmsgpack.pack(t) end)()))",
    "return show(hex((function() local t = {} t.a = t return cmsgpack.pack(t) end)()))",
    "return show(hex((function() local t = {} t[t] = 1 return cmsgpack.pack(t) end)()))",
    "return show(hex((function() local t = {} for i = 1, 16 do t[i] = i end return cmsgpack.pack(t) end)()))",
    "return show(hex((function() local t = {} for i = 1, 15 do t[i] = i end return cmsgpack.pack(t) end)()))",
    "return show(hex((function() local t = {} for i = 1, 65536 do t[i] = 0 end return cmsgpack.pack(t):sub(1, 6) end)()))",
    "return show(hex((function() local t = {} for i = 1, 65535 do t[i] = 0 end return cmsgpack.pack(t):sub(1, 6) end)()))",
    "return show(hex((function() local t = {} for i = 1, 16 do t['k' .. i] = i end return cmsgpack.pack(t):sub(1, 4) end)()))",
    "return show(hex((function() local t = {} for i = 1, 65536 do t['k' .. i] = i end return cmsgpack.pack(t):sub(1, 6) end)()))",
    "hex(cmsgpack.pack(string.rep('x', 255)):sub(1, 4))", "hex(cmsgpack.pack(string.rep('x', 256)):sub(1, 4))",
    "hex(cmsgpack.pack(string.rep('x', 65535)):sub(1, 4))", "hex(cmsgpack.pack(string.rep('x', 65536)):sub(1, 6))",
    "#cmsgpack.pack(string.rep('x', 10 * 1024 * 1024))",
    "hex(cmsgpack.pack(string.rep('x', 10 * 1024 * 1024)):sub(1, 6))",
    "#cmsgpack.unpack(cmsgpack.pack(string.rep('x', 10 * 1024 * 1024)))",
    "cmsgpack.unpack(cmsgpack.pack(string.rep('x', 10 * 1024 * 1024)):sub(1, -2))",
    # round trips
    "cmsgpack.unpack(cmsgpack.pack(1, -1, 0.5, 'x', true, false, nil, {1, 2, {a = 'b'}}, 2^40, -2^40))",
    "cmsgpack.unpack(cmsgpack.pack({[1] = 'a', [3] = 'c'}, {a = {b = {c = {}}}}))",
    "cmsgpack.unpack(cmsgpack.pack(0/0, 1/0, -1/0, 1e300, 1e-300, 0.1))",
    "cmsgpack.unpack(cmsgpack.pack(2^63, 2^64, -2^63, 2^63-1024))",
    # unpack_one / unpack_limit
    "cmsgpack.unpack_one('\\1\\2\\3')", "cmsgpack.unpack_one('\\1\\2\\3', 1)", "cmsgpack.unpack_one('\\1\\2\\3', 2)",
    "cmsgpack.unpack_one('\\1\\2\\3', 3)", "cmsgpack.unpack_one('\\1\\2\\3', 4)", "cmsgpack.unpack_one('\\1\\2\\3', -1)",
    "cmsgpack.unpack_one('\\1\\2\\3', -3)", "cmsgpack.unpack_limit('\\1\\2\\3', 2)", "cmsgpack.unpack_limit('\\1\\2\\3', 3)",
    "cmsgpack.unpack_limit('\\1\\2\\3', 4)", "cmsgpack.unpack_limit('\\1\\2\\3', 0)", "cmsgpack.unpack_limit('\\1\\2\\3', -1)",
    "cmsgpack.unpack_limit('\\1\\2\\3', 2, 2)", "cmsgpack.unpack_limit('\\1\\2\\3', 1, 2)", "cmsgpack.unpack_limit('\\1\\2\\3')",
    "cmsgpack.unpack_limit('\\1\\2\\3', 'x')", "cmsgpack.unpack_one('\\1\\2\\3', 'x')", "cmsgpack.unpack_one('\\1\\2\\3', 1.7)",
    "cmsgpack.unpack_one('\\1\\2\\3', '1')", "cmsgpack.unpack('\\1\\2\\3', 1)", "cmsgpack.unpack()", "cmsgpack.unpack(12)",
    "cmsgpack.unpack({})", "cmsgpack.unpack_one()", "cmsgpack.unpack_limit()",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', -2, 1)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', -2, -3)",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 2, -3)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 0, 2)",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 0, 5)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 0, 6)",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 1, 5)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 2^40)",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 2^31)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 2^32 + 1)",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 1, 2^32 + 1)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 1, 2^31)",
    "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', 1, 2^32)", "cmsgpack.unpack_limit('\\1\\2\\3\\4\\5', -2^32 + 1, 2^32)",
    "cmsgpack.unpack_one('\\1\\2\\3\\4\\5', 2^32 + 2)", "cmsgpack.unpack_one('')", "cmsgpack.unpack_limit('', 1)",
    "cmsgpack.unpack('')", "cmsgpack.unpack_one('', 1)", "cmsgpack.unpack_one(nil, 'x')",
    "cmsgpack.unpack_limit(nil, 'x')", "cmsgpack.unpack_limit(nil, 1, 'x')", "cmsgpack.unpack_limit('', 1, nil)",
    "cmsgpack.unpack_one('', nil)", "cmsgpack.unpack_one(nil)",
    "cmsgpack.unpack_one('\\1\\193')", "cmsgpack.unpack_limit('\\1\\193', 1)", "cmsgpack.unpack('\\1\\193')",
    "cmsgpack.unpack_one('\\145\\1\\165')", "cmsgpack.unpack('\\145\\1\\165')",
    # stack limits (values, nesting)
    "select('#', cmsgpack.unpack(string.rep('\\1', 7999)))", "select('#', cmsgpack.unpack(string.rep('\\1', 8000)))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 7999), 0))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 8000), 0))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 8000), 0, 1))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 7998), 7998))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 7999), 7999))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 9000), 8005))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 9000), 7999, 1))",
    "select('#', cmsgpack.unpack_limit(string.rep('\\1', 9000), 7998, 1))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7999), 1, 2, 3, 4, 5))",
    "select('#', cmsgpack.unpack_one(string.rep('\\1', 7999), 1, 2, 3, 4, 5))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7998) .. '\\145\\1'))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7998) .. '\\129\\1\\1'))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7997) .. '\\145\\1'))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7996) .. '\\145\\1'))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7997) .. '\\129\\1\\1'))",
    "select('#', cmsgpack.unpack(string.rep('\\1', 7996) .. '\\129\\1\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\145', 3999) .. '\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\145', 4000) .. '\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\129\\1', 2000) .. '\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\129\\1', 3999) .. '\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\129\\1', 4000) .. '\\1'))",
    "depth(cmsgpack.unpack(string.rep('\\129\\1', 100000) .. '\\1'))",
]

# Hostile or odd input for cmsgpack.unpack, as hex.
MSGPACK_UNPACK_HEX = [
    "c0", "c2", "c3", "00", "7f", "ff", "e0", "cc80", "ccff", "cd0100", "ceffffffff", "cf0000000100000000",
    "cfffffffffffffffff", "cf8000000000000000", "cf7fffffffffffffff", "d080", "d1ff7f", "d280000000",
    "d38000000000000000", "d3ffffffffffffffff", "ca3fc00000", "cb3fb999999999999a", "cbfff8000000000000",
    "ca7f800000", "a0", "a161", "d90161", "da000161", "db0000000161", "c40161", "c5000161", "c600000001",
    "c6000000016162", "c4", "d4", "d40101", "c70101", "c1", "90", "9101", "80", "810101", "", "0102",
    "c0c0c0", "9201", "92", "a2", "a2aa", "d9", "da00", "cd01", "cf00", "ca", "cb3f", "8101", "81",
    "ddffffffff", "dfffffffff", "dbffffffff61", "dd0000000201", "dc0002", "dc00", "dc0000", "de00",
    "df00000000", "dd00000000", "81c001", "81cbfff800000000000001", "92c001", "9201c0", "8201c00301",
    "81a161c0", "82a16101a16102", "9301a16102", "81c0", "81c0c1", "81cbfff8000000000000", "8201c1",
    "92c101", "9201c1", "81c101", "9101a5", "81c0a5", "c1c0", "a5", "9181c001", "0102c1", "01",
    "92c181c001", "82c10181c001", "81c181c001", "9281c0c1", "dbffffffff", "dd7fffffff", "df7fffffff",
    "dc" + "ffff" + "01" * 10,
]


def lua_hex_string(h):
    return "'" + "".join("\\%d" % b for b in bytes.fromhex(h)) + "'"


def cases():
    for e in STRUCT:
        yield e
    for e in MSGPACK_PACK:
        yield "hex(cmsgpack.pack(%s))" % e
    for e in MSGPACK:
        yield e
    for h in MSGPACK_UNPACK_HEX:
        yield "cmsgpack.unpack(%s)" % lua_hex_string(h)
        if h:
            yield "cmsgpack.unpack_one(%s)" % lua_hex_string(h)
    for e in [
        "bit.tohex(65535, -2147483648)", "bit.tohex(65535)", "bit.tohex(-1)", "bit.tohex(255, 2)",
        "bit.tohex(255, -2)", "bit.tohex(255, 0)", "bit.tohex(255, 9)", "bit.tohex(255, -9)",
        "bit.tohex(255, 2147483647)", "bit.tohex(255, -2147483647)", "bit.tohex(0x12345678, 3)",
        "bit.tohex(0x12345678, -3)", "bit.tohex(2^32 + 5)", "bit.tohex(2^31)", "bit.tohex(-2^31)",
        "bit.tohex(1.5)", "bit.tohex(2.5)", "bit.tohex(3.5)", "bit.tohex(-1.5)", "bit.tohex(0/0)",
        "bit.tohex(1/0)", "bit.tohex(1e300)", "bit.tohex(255, 2.7)", "bit.tohex(255, -2.7)",
        "bit.tohex(255, 2^32 + 2)", "bit.tohex(255, 2^31)", "bit.tohex('255')", "bit.tohex('x')",
        "bit.tohex()", "bit.tohex(255, 'x')", "bit.tohex(255, nil)", "bit.tohex(2^52 + 7)",
        "bit.tohex(2^53 + 2^32 + 7)", "bit.tohex(-2^63)", "bit.tohex(0xdeadbeef, -8)",
    ]:
        yield e


def body(e):
    return e if e.startswith("return ") else "return show(%s)" % e


def main():
    r = redis.Redis(port=int(sys.argv[1]))
    print("/* Generated by tests/unit/gen_lua_libs_vectors.py from redis-server 7.0.15. */")
    print("static const char LUA_LIBS_PRELUDE[] = %s;" % json.dumps(PRELUDE))
    print("static const LuaCase LUA_LIBS_CASES[] = {")
    for e in cases():
        b = body(e)
        try:
            out = r.eval(PRELUDE + b, 0)
            if isinstance(out, bytes):
                out = out.decode()
            err = 0
        except redis.ResponseError as ex:
            out = str(ex)
            cut = out.rfind(" script: ")
            out = out[:cut] if cut >= 0 else out
            err = 1
        assert isinstance(out, str), (e, out)
        print("    {%s, %s, %d}," % (json.dumps(b), json.dumps(out), err))
    print("};")


if __name__ == "__main__":
    main()
