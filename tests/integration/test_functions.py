"""Redis 7.0 functions: FUNCTION LOAD / DELETE / FLUSH / LIST / DUMP /
RESTORE / STATS / KILL / HELP, FCALL and FCALL_RO, redis.register_function.

Every expected reply and error text here was taken from redis-server 7.0.15
(run with CAIRN_BIN=redis-server to re-check), and this file runs on both
engines (make LUA=luajit).  Replies are read with the
typed RESP reader of test_command.py, so a status reply, a bulk string, a
RESP3 map and a RESP3 set are told apart.

FUNCTION DUMP's payload is checked by decoding it here: a sequence of
libraries, each the RDB opcode 245 followed by an RDB string holding the
library code (plain or LZF-compressed), then the 2-byte RDB version (10,
little endian) and the CRC-64 (Jones polynomial, reflected, initial value
0) of everything before it, little endian."""
import hashlib
import threading
import time

import pytest

from test_command import Resp

FN_F = "redis.register_function('f', function(keys, args) return 1 end)"


def lib(name, body=FN_F):
    return "#!lua name=%s\n%s" % (name, body)


@pytest.fixture
def r(server):
    conn = Resp(server)
    yield conn
    conn.close()


def err(text):
    return ("error", text.encode())


# -- DUMP payload helpers ------------------------------------------------------

def crc64(data):
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 bit-reversed
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def rdb_string(s):
    n = len(s)
    if n < 64:
        return bytes([n]) + s
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF]) + s
    return b"\x80" + n.to_bytes(4, "big") + s


def framed(body, version=10):
    """body followed by the RDB version and the CRC-64 of both."""
    body += version.to_bytes(2, "little")
    return body + crc64(body).to_bytes(8, "little")


def payload(codes, version=10, opcode=0xF5):
    return framed(b"".join(bytes([opcode]) + rdb_string(c.encode()) for c in codes), version)


def lzf_decompress(data, outlen):
    out = bytearray()
    i = 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:  # literal run of ctrl+1 bytes
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        n = ctrl >> 5
        if n == 7:
            n += data[i]
            i += 1
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        for _ in range(n + 2):
            out.append(out[ref])
            ref += 1
    assert len(out) == outlen
    return bytes(out)


def read_len(buf, i):
    """An RDB length at buf[i]: (value, is_encoded, next index)."""
    b = buf[i]
    kind = b >> 6
    if kind == 0:
        return b & 0x3F, False, i + 1
    if kind == 1:
        return ((b & 0x3F) << 8) | buf[i + 1], False, i + 2
    if kind == 3:
        return b & 0x3F, True, i + 1
    if b == 0x80:
        return int.from_bytes(buf[i + 1:i + 5], "big"), False, i + 5
    assert b == 0x81, b
    return int.from_bytes(buf[i + 1:i + 9], "big"), False, i + 9


def read_string(buf, i):
    n, encoded, i = read_len(buf, i)
    if not encoded:
        return buf[i:i + n], i + n
    if n in (0, 1, 2):  # int8 / int16 / int32
        size = 1 << n
        return str(int.from_bytes(buf[i:i + size], "little", signed=True)).encode(), i + size
    assert n == 3, n  # LZF
    clen, _, i = read_len(buf, i)
    ulen, _, i = read_len(buf, i)
    return lzf_decompress(buf[i:i + clen], ulen), i + clen


def decode_dump(blob):
    """The library codes in a DUMP payload, after checking version and CRC."""
    body, version, crc = blob[:-10], blob[-10:-8], blob[-8:]
    assert version == b"\x0a\x00"
    assert crc64(blob[:-8]).to_bytes(8, "little") == crc
    codes, i = [], 0
    while i < len(body):
        assert body[i] == 0xF5
        code, i = read_string(body, i + 1)
        codes.append(code)
    return codes


# -- FUNCTION LIST helpers -----------------------------------------------------

def libraries(reply):
    """RESP2 FUNCTION LIST reply as {name: {field: value}}, functions keyed
    by name (Redis lists both in hash-table order)."""
    out = {}
    for entry in reply:
        d = dict(zip(entry[0::2], entry[1::2]))
        d[b"functions"] = {dict(zip(f[0::2], f[1::2]))[b"name"]: dict(zip(f[0::2], f[1::2]))
                           for f in d[b"functions"]}
        out[d[b"library_name"]] = d
    return out


# -- FUNCTION LOAD -------------------------------------------------------------

def test_load_returns_library_name_and_fcall_runs_it(r):
    assert r("FUNCTION", "LOAD", lib("mylib")) == b"mylib"
    assert r("FCALL", "f", "0") == 1
    assert r("FUNCTION", "LOAD", "replace", lib("mylib", FN_F.replace("1", "'two'"))) == b"mylib"
    assert r("FCALL", "f", "0") == b"two"
    assert r("FUNCTION", "LOAD", "REPLACE", "REPLACE", lib("mylib")) == b"mylib"


@pytest.mark.parametrize("header", [
    "#!LUA NAME=a", '#!lua name="a"', '#!lua "name=a"', "#!lua name='a'",
    "#!lua  name=a ", "#!lua name=a\r", "#!lua\tname=a\t", '#!lua name=a""',
])
def test_load_accepts_header_variants(r, header):
    assert r("FUNCTION", "LOAD", header + "\n" + FN_F) == b"a"


@pytest.mark.parametrize("code,error", [
    ("return 1", "ERR Missing library metadata"),
    (" #!lua name=a\n" + FN_F, "ERR Missing library metadata"),
    ("#lua name=a\n" + FN_F, "ERR Missing library metadata"),
    ("#!lua", "ERR Invalid library metadata"),
    ("#!lua name=a", "ERR Invalid library metadata"),
    ('#!lua name="a\n' + FN_F, "ERR Invalid library metadata"),
    ("#!\n" + FN_F, "ERR Library name was not given"),
    ("#!lua\n" + FN_F, "ERR Library name was not given"),
    ("#!luax\n" + FN_F, "ERR Library name was not given"),
    ("#!luax name=a\n" + FN_F, "ERR Engine 'luax' not found"),
    ("#!lua name=a name=b\n" + FN_F,
     "ERR Invalid metadata value, name argument was given multiple times"),
    ("#!lua name=a foo=b\n" + FN_F, "ERR Invalid metadata value given: foo=b"),
    ("#!lua name\n" + FN_F, "ERR Invalid metadata value given: name"),
    ("#!lua =a\n" + FN_F, "ERR Invalid metadata value given: =a"),
    ("#! lua name=a\n" + FN_F, "ERR Invalid metadata value given: lua"),
    ("#!lua name=a-b\n" + FN_F, "ERR Library names can only contain letters, numbers, or "
     "underscores(_) and must be at least one character long"),
    ("#!lua name=a=b\n" + FN_F, "ERR Library names can only contain letters, numbers, or "
     "underscores(_) and must be at least one character long"),
    ("#!lua name=a\n", "ERR No functions registered"),
    ("#!lua name=a\nreturn 1", "ERR No functions registered"),
    ("#!lua name=a\nlocal x = 1\nx = x +\n",
     "ERR Error compiling function: user_function:4: unexpected symbol near '<eof>'"),
])
def test_load_header_and_body_errors(r, code, error):
    assert r("FUNCTION", "LOAD", code) == err(error)
    assert r("FUNCTION", "LIST") == []


REG = "ERR Error registering functions: ERR "


@pytest.mark.parametrize("body,error", [
    ("redis.register_function('f')", REG + "calling redis.register_function with a single "
     "argument is only applicable to Lua table (representing named arguments)."),
    ("redis.register_function('f', 1)",
     REG + "second argument to redis.register_function must be a function"),
    ("redis.register_function('f', function() end, 'x')",
     REG + "wrong number of arguments to redis.register_function"),
    ("redis.register_function('f', function() end, {'no-writes'})",
     REG + "wrong number of arguments to redis.register_function"),
    ("redis.register_function('', function() end)", REG + "Library names can only contain "
     "letters, numbers, or underscores(_) and must be at least one character long"),
    ("redis.register_function('a b', function() end)", REG + "Library names can only contain "
     "letters, numbers, or underscores(_) and must be at least one character long"),
    ("redis.register_function('f', function() end)\nredis.register_function('f', function() end)",
     REG + "Function already exists in the library"),
    ("redis.register_function{function_name='f'}",
     REG + "redis.register_function must get a callback argument"),
    ("redis.register_function{callback=function() end}",
     REG + "redis.register_function must get a function name argument"),
    ("redis.register_function{function_name='f', callback=function() end, foo=1}",
     REG + "unknown argument given to redis.register_function"),
    ("redis.register_function{'f', function() end}",
     REG + "unknown argument given to redis.register_function"),
    ("redis.register_function{function_name='f', callback=1}",
     REG + "callback argument given to redis.register_function must be a function"),
    ("redis.register_function{function_name='f', callback=function() end, flags='no-writes'}",
     REG + "flags argument to redis.register_function must be a table representing "
     "function flags"),
    ("redis.register_function{function_name='f', callback=function() end, flags={'bad'}}",
     REG + "unknown flag given"),
    ("redis.register_function{function_name='f', callback=function() end, flags={1}}",
     REG + "unknown flag given"),
    # At load time the library sees only `redis` with register_function, log,
    # the LOG_* levels and the version: everything else is a missing global.
    ("redis.call('ping')", REG + "user_function:2: Script attempted to access nonexistent "
     "global variable 'call'"),
    ("redis.pcall('ping')", REG + "user_function:2: Script attempted to access nonexistent "
     "global variable 'pcall'"),
    ("redis.setresp(3)", REG + "user_function:2: Script attempted to access nonexistent "
     "global variable 'setresp'"),
    ("local s = string.len('x')", REG + "user_function:2: Script attempted to access "
     "nonexistent global variable 'string'"),
    ("for k in pairs(redis) do end", REG + "user_function:2: Script attempted to access "
     "nonexistent global variable 'pairs'"),
    (FN_F + "\nerror('at load')", REG + "user_function:3: Script attempted to access "
     "nonexistent global variable 'error'"),
    ("foo = 1", REG + "user_function:2: Attempt to modify a readonly table"),
    ("redis.x = 1", REG + "user_function:2: Attempt to modify a readonly table"),
    ("local x = nil\nlocal y = x.z",
     REG + "user_function:3: attempt to index local 'x' (a nil value)"),
    ("redis.log(1)", REG + "redis.log() requires two arguments or more."),
    ("redis.register_function{function_name='f', callback=function() end, description={}}",
     REG + "description argument given to redis.register_function must be a string"),
    # Loading runs under its own 500 ms limit.
    ("while true do end", REG + "FUNCTION LOAD timeout"),
])
def test_load_register_function_errors(r, body, error):
    assert r("FUNCTION", "LOAD", lib("L", body)) == err(error)
    assert r("FUNCTION", "LIST") == []
    assert r("FCALL", "f", "0") == err("ERR Function not found")


def test_load_time_redis_table_has_log_levels_and_version(r):
    body = ("local v = redis.REDIS_VERSION .. redis.REDIS_VERSION_NUM .. redis.LOG_DEBUG .. "
            "redis.LOG_VERBOSE .. redis.LOG_NOTICE .. redis.LOG_WARNING\n"
            "redis.log(redis.LOG_NOTICE, 'loading')\n"
            "redis.register_function('v', function() return v end)")
    assert r("FUNCTION", "LOAD", lib("L", body)) == b"L"
    version = r("FCALL", "v", "0")
    assert version.startswith(b"7.") and version.endswith(b"0123")


def test_functions_see_the_full_environment_at_run_time(r):
    body = ("local function helper() return string.len('xy') end\n"
            "local function ping() return redis.call('ping') end\n"
            "local saved = redis\n"
            "local squares = {}\n"
            "for i = 1, 3 do squares[i] = i * i end\n"
            "redis.register_function('helper', function() return helper() end)\n"
            "redis.register_function('ping', function() return ping() end)\n"
            "redis.register_function('late', function() return type(redis.register_function) end)\n"
            "redis.register_function('saved', function()\n"
            "  local r = saved.register_function('x', function() end)\n  return r\nend)\n"
            "redis.register_function('squares', function() return squares end)\n"
            "redis.register_function('setglobal', function() x = 1 end)")
    assert r("FUNCTION", "LOAD", lib("L", body)) == b"L"
    assert r("FCALL", "helper", "0") == 2
    assert r("FCALL", "ping", "0") == ("status", b"PONG")
    assert r("FCALL", "late", "0") == b"nil"
    assert r("FCALL", "saved", "0") == err(
        "ERR redis.register_function can only be called on FUNCTION LOAD command "
        "script: saved, on @user_function:11.")
    assert r("FCALL", "squares", "0") == [1, 4, 9]
    assert r("FCALL", "setglobal", "0") == err(
        "ERR user_function:15: Attempt to modify a readonly table script: setglobal, "
        "on @user_function:15.")


def test_library_and_function_collisions(r):
    assert r("FUNCTION", "LOAD", lib("a")) == b"a"
    assert r("FUNCTION", "LOAD", lib("a")) == err("ERR Library 'a' already exists")
    assert r("FUNCTION", "LOAD", lib("b")) == err("ERR Function f already exists")
    two = FN_F.replace("'f'", "'g'") + "\n" + FN_F
    assert r("FUNCTION", "LOAD", lib("b", two)) == err("ERR Function f already exists")
    assert r("FCALL", "g", "0") == err("ERR Function not found")
    # Function names are global and case-insensitive; library names are not.
    assert r("FUNCTION", "LOAD", lib("A", FN_F.replace("'f'", "'F'"))) == \
        err("ERR Function F already exists")
    assert r("FUNCTION", "LOAD", lib("A", FN_F.replace("'f'", "'G'"))) == b"A"
    assert r("FCALL", "g", "0") == 1
    assert r("FCALL", "F", "0") == 1
    # REPLACE may not steal a function from another library either.
    assert r("FUNCTION", "LOAD", lib("c", FN_F.replace("'f'", "'h'"))) == b"c"
    assert r("FUNCTION", "LOAD", "REPLACE", lib("c")) == err("ERR Function f already exists")
    assert r("FCALL", "h", "0") == 1


def test_failed_replace_keeps_the_old_library(r):
    assert r("FUNCTION", "LOAD", lib("a", FN_F.replace("1", "'old'"))) == b"a"
    bad = "redis.register_function('f2', function() return 1 end)\nfoo = 1"
    assert r("FUNCTION", "LOAD", "REPLACE", lib("a", bad)) == \
        err(REG + "user_function:3: Attempt to modify a readonly table")
    assert r("FCALL", "f", "0") == b"old"
    assert r("FCALL", "f2", "0") == err("ERR Function not found")
    new = "redis.register_function('f2', function() return 'new' end)"
    assert r("FUNCTION", "LOAD", "REPLACE", lib("a", new)) == b"a"
    assert r("FCALL", "f2", "0") == b"new"
    assert r("FCALL", "f", "0") == err("ERR Function not found")


@pytest.mark.parametrize("args,error", [
    (("FUNCTION", "LOAD"), "ERR wrong number of arguments for 'function|load' command"),
    (("FUNCTION", "LOAD", "REPLACE"), "ERR Missing library metadata"),
    (("FUNCTION", "LOAD", "foo", "bar"), "ERR Unknown option given: foo"),
    # Newlines in the echoed argument become spaces in the error.
    (("FUNCTION", "LOAD", lib("z"), "REPLACE"),
     "ERR Unknown option given: " + lib("z").replace("\n", " ")),
])
def test_load_argument_errors(r, args, error):
    assert r(*args) == err(error)


# -- FCALL / FCALL_RO ------------------------------------------------------------

def test_fcall_passes_keys_and_args_as_two_tables(r):
    body = ("redis.register_function('ka', function(keys, args) return {keys, args} end)\n"
            "redis.register_function('n', function(keys, args) return #keys .. ':' .. #args end)\n"
            "redis.register_function('g', function(keys, args) return KEYS end)")
    assert r("FUNCTION", "LOAD", lib("L", body)) == b"L"
    assert r("FCALL", "ka", "2", "k1", "k2", "a1", "a2", "a3") == \
        [[b"k1", b"k2"], [b"a1", b"a2", b"a3"]]
    assert r("FCALL", "ka", "0") == [[], []]
    assert r("FCALL", "n", "1", "k1", "a1", "a2") == b"1:2"
    assert r("FCALL", "g", "1", "k") == err(
        "ERR user_function:4: Script attempted to access nonexistent global variable 'KEYS' "
        "script: g, on @user_function:4.")


@pytest.mark.parametrize("args,error", [
    (("FCALL", "nosuch", "0"), "ERR Function not found"),
    (("FCALL_RO", "nosuch", "0"), "ERR Function not found"),
    (("FCALL", "f", "x"), "ERR Bad number of keys provided"),
    (("FCALL", "f", "1.0", "a"), "ERR Bad number of keys provided"),
    (("FCALL", "f", "-1"), "ERR Number of keys can't be negative"),
    (("FCALL", "f", "2", "a"), "ERR Number of keys can't be greater than number of args"),
    (("FCALL", "f"), "ERR wrong number of arguments for 'fcall' command"),
    (("FCALL_RO",), "ERR wrong number of arguments for 'fcall_ro' command"),
])
def test_fcall_argument_errors(r, args, error):
    assert r("FUNCTION", "LOAD", lib("L")) == b"L"
    assert r(*args) == err(error)


def test_fcall_ro_needs_the_no_writes_flag(r):
    body = ("redis.register_function('w', function(keys, args) "
            "return redis.call('set', keys[1], args[1]) end)\n"
            "redis.register_function{function_name='ro', callback=function(keys) "
            "return redis.call('get', keys[1]) end, flags={'no-writes'}}\n"
            "redis.register_function{function_name='sneaky', callback=function(keys)\n"
            "  local r = redis.call('set', keys[1], 'x')\n  return r\nend, flags={'no-writes'}}")
    assert r("FUNCTION", "LOAD", lib("L", body)) == b"L"
    assert r("FCALL_RO", "w", "1", "k", "v") == \
        err("ERR Can not execute a script with write flag using *_ro command.")
    assert r("FCALL", "w", "1", "k", "v") == ("status", b"OK")
    assert r("FCALL_RO", "ro", "1", "k") == b"v"
    assert r("FCALL", "ro", "1", "k") == b"v"
    deny = ("ERR Write commands are not allowed from read-only scripts. "
            "script: sneaky, on @user_function:5.")
    assert r("FCALL_RO", "sneaky", "1", "k") == err(deny)
    assert r("FCALL", "sneaky", "1", "k") == err(deny)
    assert r("GET", "k") == b"v"


@pytest.mark.parametrize("body,reply", [
    ("  local x = nil\n  return x.y",
     err("ERR user_function:4: attempt to index local 'x' (a nil value) "
         "script: f, on @user_function:4.")),
    ("  error('boom')", err("ERR user_function:3: boom script: f, on @user_function:3.")),
    ("  local r = redis.call('nosuch')\n  return r",
     err("ERR Unknown Redis command called from script script: f, on @user_function:3.")),
    ("  local r = redis.call('get')\n  return r", err("ERR Wrong number of args calling Redis command from "
                                       "script script: f, on @user_function:3.")),
    ("  local r = redis.call('fcall', 'f', '0')\n  return r",
     err("ERR This Redis command is not allowed from script script: f, on @user_function:3.")),
    ("  return redis.pcall('fcall', 'f', '0')",
     err("ERR This Redis command is not allowed from script")),
    ("  return redis.register_function('x', function() end)",
     err("ERR user_function:3: attempt to call field 'register_function' (a nil value) "
         "script: f, on @user_function:3.")),
    ("  return redis.error_reply('MY err')", err("MY err")),
    ("  redis.call('set', 'k', 'v')\n  return redis.pcall('incr', 'k')",
     err("ERR value is not an integer or out of range")),
    ("  return {1, 'a', {ok='fine'}, {err='bad'}, false, true, 3.7, nil, 5}",
     [1, b"a", ("status", b"fine"), ("error", b"bad"), None, 1, 3]),
])
def test_fcall_runtime_results_and_errors(r, body, reply):
    code = lib("L", "redis.register_function('f', function(keys, args)\n%s\nend)" % body)
    assert r("FUNCTION", "LOAD", code) == b"L"
    assert r("FCALL", "f", "0") == reply


def test_function_commands_are_refused_inside_eval(r):
    assert r("FUNCTION", "LOAD", lib("L")) == b"L"
    script = "local r = redis.call('fcall', 'f', '0')\nreturn r"
    assert r("EVAL", script, "0") == err(
        "ERR This Redis command is not allowed from script script: %s, on @user_script:1."
        % hashlib.sha1(script.encode()).hexdigest())


def test_fcall_inside_multi(r):
    assert r("FUNCTION", "LOAD", lib("L")) == b"L"
    assert r("MULTI") == ("status", b"OK")
    assert r("FCALL", "f", "0") == ("status", b"QUEUED")
    assert r("FUNCTION", "LIST", "LIBRARYNAME", "nomatch") == ("status", b"QUEUED")
    assert r("EXEC") == [1, []]


def test_monitor_shows_fcall_before_the_commands_it_runs(server):
    r = Resp(server)
    body = "redis.register_function('m', function(keys, args) return redis.call('set', keys[1], args[1]) end)"
    assert r("FUNCTION", "LOAD", lib("m", body)) == b"m"
    mon = server.connect()
    mon.send(b"*1\r\n$7\r\nMONITOR\r\n")
    mon.expect(b"+OK\r\n")
    assert r("FCALL", "m", "1", "k", "v") == ("status", b"OK")
    assert r("FCALL_RO", "m", "1", "k", "v")[0] == "error"
    lines = [mon.recv_until(b"\r\n") for _ in range(3)]
    seen = [(b"lua" if b"[0 lua]" in line else b"client", line.split(b"] ", 1)[1]) for line in lines]
    assert seen == [(b"client", b'"FCALL" "m" "1" "k" "v"\r\n'), (b"lua", b'"set" "k" "v"\r\n'),
                    (b"client", b'"FCALL_RO" "m" "1" "k" "v"\r\n')]
    mon.close()
    r.close()


@pytest.mark.parametrize("args,keys", [
    (("FCALL", "f", "2", "a", "b", "c"), [b"a", b"b"]),
    (("FCALL_RO", "f", "1", "a"), [b"a"]),
])
def test_command_getkeys_of_fcall(r, args, keys):
    assert r("COMMAND", "GETKEYS", *args) == keys


# -- FUNCTION LIST -------------------------------------------------------------

FLAGGED = ("redis.register_function{function_name='h', callback=function() return 1 end, "
           "flags={'allow-cross-slot-keys', 'no-cluster', 'allow-stale', 'allow-oom', "
           "'no-writes', 'no-writes'}, description='my desc'}")
ALL_FLAGS = [("status", f) for f in (b"no-writes", b"allow-oom", b"allow-stale", b"no-cluster",
                                     b"allow-cross-slot-keys")]


def test_list_resp2_shape(r):
    assert r("FUNCTION", "LIST") == []
    assert r("FUNCTION", "LOAD", lib("plain")) == b"plain"
    assert r("FUNCTION", "LIST") == [[
        b"library_name", b"plain", b"engine", b"LUA",
        b"functions", [[b"name", b"f", b"description", None, b"flags", []]]]]
    assert r("FUNCTION", "LIST", "WITHCODE") == [[
        b"library_name", b"plain", b"engine", b"LUA",
        b"functions", [[b"name", b"f", b"description", None, b"flags", []]],
        b"library_code", lib("plain").encode()]]
    assert r("FUNCTION", "LOAD", lib("flagged", FLAGGED)) == b"flagged"
    assert r("FUNCTION", "LIST", "LIBRARYNAME", "flagged") == [[
        b"library_name", b"flagged", b"engine", b"LUA",
        b"functions", [[b"name", b"h", b"description", b"my desc", b"flags", ALL_FLAGS]]]]


def test_list_resp3_shape(r):
    r("HELLO", "3")
    assert r("FUNCTION", "LOAD", lib("flagged", FLAGGED)) == b"flagged"
    assert r("FUNCTION", "LIST", "WITHCODE") == [("map", [
        (b"library_name", b"flagged"), (b"engine", b"LUA"),
        (b"functions", [("map", [(b"name", b"h"), (b"description", b"my desc"),
                                 (b"flags", ("set", ALL_FLAGS))])]),
        (b"library_code", lib("flagged", FLAGGED).encode())])]
    assert r("FUNCTION", "DELETE", "flagged") == ("status", b"OK")
    assert r("FUNCTION", "LOAD", lib("plain")) == b"plain"
    assert r("FUNCTION", "LIST") == [("map", [
        (b"library_name", b"plain"), (b"engine", b"LUA"),
        (b"functions", [("map", [(b"name", b"f"), (b"description", None),
                                 (b"flags", ("set", []))])])])]


def test_list_several_libraries_and_functions(r):
    two = FN_F.replace("'f'", "'f1'") + "\n" + FN_F.replace("'f'", "'f2'")
    assert r("FUNCTION", "LOAD", lib("lib_a", two)) == b"lib_a"
    assert r("FUNCTION", "LOAD", lib("lib_b", FN_F.replace("'f'", "'g'"))) == b"lib_b"
    assert r("FUNCTION", "LOAD", lib("other", FN_F)) == b"other"
    got = libraries(r("FUNCTION", "LIST"))
    assert sorted(got) == [b"lib_a", b"lib_b", b"other"]
    assert sorted(got[b"lib_a"][b"functions"]) == [b"f1", b"f2"]
    assert got[b"lib_b"][b"functions"][b"g"] == \
        {b"name": b"g", b"description": None, b"flags": []}
    # LIBRARYNAME is a glob, matched without regard to case.
    assert sorted(libraries(r("FUNCTION", "LIST", "LIBRARYNAME", "lib*"))) == [b"lib_a", b"lib_b"]
    assert sorted(libraries(r("FUNCTION", "LIST", "libraryname", "LIB_?"))) == \
        [b"lib_a", b"lib_b"]
    assert sorted(libraries(r("FUNCTION", "LIST", "LIBRARYNAME", "*er"))) == [b"other"]
    assert r("FUNCTION", "LIST", "LIBRARYNAME", "ib") == []
    withcode = libraries(r("FUNCTION", "LIST", "withcode", "LIBRARYNAME", "oth*"))
    assert withcode[b"other"][b"library_code"] == lib("other", FN_F).encode()


@pytest.mark.parametrize("args,error", [
    (("FUNCTION", "LIST", "foo"), "ERR Unknown argument foo"),
    (("FUNCTION", "LIST", "LIBRARYNAME"), "ERR library name argument was not given"),
    (("FUNCTION", "LIST", "WITHCODE", "WITHCODE"), "ERR Unknown argument WITHCODE"),
    (("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"),
     "ERR Unknown argument LIBRARYNAME"),
])
def test_list_argument_errors(r, args, error):
    assert r(*args) == err(error)


# -- FUNCTION DELETE / FLUSH -----------------------------------------------------

def test_delete_removes_the_library_and_its_functions(r):
    assert r("FUNCTION", "LOAD", lib("a")) == b"a"
    assert r("FUNCTION", "DELETE", "nosuch") == err("ERR Library not found")
    assert r("FUNCTION", "DELETE", "A") == err("ERR Library not found")
    assert r("FUNCTION", "DELETE", "a") == ("status", b"OK")
    assert r("FCALL", "f", "0") == err("ERR Function not found")
    assert r("FUNCTION", "LIST") == []
    assert r("FUNCTION", "LOAD", lib("b")) == b"b"  # the name f is free again
    assert r("FUNCTION", "DELETE") == \
        err("ERR wrong number of arguments for 'function|delete' command")
    assert r("FUNCTION", "DELETE", "b", "c") == \
        err("ERR wrong number of arguments for 'function|delete' command")


@pytest.mark.parametrize("mode", [(), ("ASYNC",), ("sync",)])
def test_flush_removes_everything(r, mode):
    assert r("FUNCTION", "LOAD", lib("a")) == b"a"
    assert r("FUNCTION", "LOAD", lib("b", FN_F.replace("'f'", "'g'"))) == b"b"
    assert r("FUNCTION", "FLUSH", *mode) == ("status", b"OK")
    assert r("FUNCTION", "LIST") == []
    assert r("FCALL", "g", "0") == err("ERR Function not found")
    assert r("FUNCTION", "LOAD", lib("a")) == b"a"


def test_flush_argument_errors(r):
    assert r("FUNCTION", "FLUSH", "foo") == err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    assert r("FUNCTION", "flush", "sync", "async") == err(
        "ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.")


# -- FUNCTION DUMP / RESTORE -----------------------------------------------------

BIG = lib("big", "-- " + "abcdefgh" * 40 + "\n" + FN_F.replace("'f'", "'big'"))


def test_dump_of_nothing_is_version_and_checksum(r):
    blob = r("FUNCTION", "DUMP")
    assert blob == b"\x0a\x00" + crc64(b"\x0a\x00").to_bytes(8, "little")
    assert decode_dump(blob) == []


def test_dump_payload_decodes_to_the_library_codes(r):
    assert r("FUNCTION", "LOAD", lib("small")) == b"small"
    assert r("FUNCTION", "LOAD", BIG) == b"big"
    blob = r("FUNCTION", "DUMP")
    assert sorted(decode_dump(blob)) == sorted([BIG.encode(), lib("small").encode()])
    # A long repetitive library is stored LZF-compressed (encoded string 0xC3).
    assert b"\xf5\xc3" in blob and b"abcdefgh" * 40 not in blob


def test_dump_restore_round_trip(r):
    assert r("FUNCTION", "LOAD", lib("small")) == b"small"
    assert r("FUNCTION", "LOAD", lib("flagged", FLAGGED)) == b"flagged"
    assert r("FUNCTION", "LOAD", BIG) == b"big"
    before = libraries(r("FUNCTION", "LIST", "WITHCODE"))
    blob = r("FUNCTION", "DUMP")
    assert r("FUNCTION", "FLUSH") == ("status", b"OK")
    assert r("FUNCTION", "RESTORE", blob) == ("status", b"OK")
    assert libraries(r("FUNCTION", "LIST", "WITHCODE")) == before
    assert r("FCALL", "big", "0") == 1
    assert r("FCALL_RO", "h", "0") == 1


def test_restore_accepts_a_hand_built_payload(r):
    assert r("FUNCTION", "RESTORE", payload([lib("x"), lib("y", FN_F.replace("'f'", "'g'"))])) \
        == ("status", b"OK")
    assert sorted(libraries(r("FUNCTION", "LIST"))) == [b"x", b"y"]
    assert r("FCALL", "g", "0") == 1
    # Older RDB versions are accepted, newer ones are not.
    assert r("FUNCTION", "RESTORE", payload([lib("z", "")]), "FLUSH") == \
        err("ERR No functions registered")
    assert r("FUNCTION", "RESTORE", payload([lib("v9")], version=9), "FLUSH") == ("status", b"OK")
    assert sorted(libraries(r("FUNCTION", "LIST"))) == [b"v9"]


def test_dump_restore_between_servers(server, oracle):
    a, b = Resp(server), Resp(oracle)
    try:
        assert a("FUNCTION", "LOAD", BIG) == b"big"
        assert b("FUNCTION", "LOAD", lib("flagged", FLAGGED)) == b"flagged"
        blob_a, blob_b = a("FUNCTION", "DUMP"), b("FUNCTION", "DUMP")
        assert a("FUNCTION", "RESTORE", blob_b) == ("status", b"OK")
        assert b("FUNCTION", "RESTORE", blob_a) == ("status", b"OK")
        for conn in (a, b):
            assert sorted(libraries(conn("FUNCTION", "LIST"))) == [b"big", b"flagged"]
            assert conn("FCALL", "big", "0") == 1
    finally:
        a.close()
        b.close()


def test_restore_policies(r):
    assert r("FUNCTION", "LOAD", lib("x", FN_F.replace("1", "'old'"))) == b"x"
    new_x = payload([lib("x", FN_F.replace("1", "'new'"))])
    assert r("FUNCTION", "RESTORE", new_x) == err("ERR Library x already exists")
    assert r("FUNCTION", "RESTORE", new_x, "APPEND") == err("ERR Library x already exists")
    assert r("FCALL", "f", "0") == b"old"
    assert r("FUNCTION", "RESTORE", new_x, "replace") == ("status", b"OK")
    assert r("FCALL", "f", "0") == b"new"
    y_steals_f = payload([lib("y")])
    assert r("FUNCTION", "RESTORE", y_steals_f, "REPLACE") == err("ERR Function f already exists")
    assert r("FUNCTION", "RESTORE", y_steals_f, "APPEND") == err("ERR Function f already exists")
    assert r("FUNCTION", "RESTORE", y_steals_f, "FLUSH") == ("status", b"OK")
    assert sorted(libraries(r("FUNCTION", "LIST"))) == [b"y"]
    assert r("FUNCTION", "RESTORE", payload([]), "FLUSH") == ("status", b"OK")
    assert r("FUNCTION", "LIST") == []


def test_failed_restore_changes_nothing(r):
    assert r("FUNCTION", "LOAD", lib("keep")) == b"keep"
    fine = lib("q1", FN_F.replace("'f'", "'g1'"))
    dup_lib = payload([fine, lib("q2", "-- x\n" + FN_F.replace("'f'", "'g2'")),
                       lib("q2", FN_F.replace("'f'", "'g3'"))])
    assert r("FUNCTION", "RESTORE", dup_lib, "FLUSH") == err("ERR Library 'q2' already exists")
    dup_fn = payload([fine, lib("q2", FN_F.replace("'f'", "'g1'"))])
    assert r("FUNCTION", "RESTORE", dup_fn, "FLUSH") == err("ERR Function g1 already exists")
    bad_code = payload([fine, lib("q3", "foo = 1")])
    assert r("FUNCTION", "RESTORE", bad_code, "FLUSH") == \
        err(REG + "user_function:2: Attempt to modify a readonly table")
    assert sorted(libraries(r("FUNCTION", "LIST"))) == [b"keep"]
    assert r("FCALL", "g1", "0") == err("ERR Function not found")


CHECKSUM = "ERR DUMP payload version or checksum are wrong"


def flip_last_bit(blob):
    return blob[:-1] + bytes([blob[-1] ^ 1])


@pytest.mark.parametrize("blob,error", [
    (b"", CHECKSUM),
    (b"x", CHECKSUM),
    (b"\x0a\x00" + b"\x00" * 8, CHECKSUM),
    (flip_last_bit(payload([lib("x")])), CHECKSUM),
    (payload([lib("x")])[:5], CHECKSUM),
    (payload([lib("x")], version=11), CHECKSUM),
    (payload([lib("x")], opcode=0xF7), "ERR given type is not a function"),
    (payload([lib("x")], opcode=0x00), "ERR given type is not a function"),
    (framed(b"\xf5"), "ERR Failed loading library payload"),
    (framed(b"\xf5\xc4"), "ERR Failed loading library payload"),
    (framed(b"\xf5\x82"), "ERR Failed loading library payload"),
    (payload(["garbage"]), "ERR Missing library metadata"),
])
def test_restore_payload_errors(r, blob, error):
    assert r("FUNCTION", "RESTORE", blob) == err(error)
    assert r("FUNCTION", "LIST") == []


def test_restore_reads_the_release_candidate_format(r):
    """Opcode 246: name, engine, a has-description length (then the
    description), code; the library gets a shebang made from them."""
    code = FN_F.encode()
    assert r("FUNCTION", "RESTORE", framed(b"\xf6" + rdb_string(b"pg") + rdb_string(b"LUA") + b"\x00" +
                                           rdb_string(code))) == ("status", b"OK")
    with_desc = b"\xf6" + rdb_string(b"pg2") + rdb_string(b"lua") + b"\x01" + rdb_string(b"a desc") + \
        rdb_string(code.replace(b"'f'", b"'g'"))
    assert r("FUNCTION", "RESTORE", framed(with_desc)) == ("status", b"OK")
    got = libraries(r("FUNCTION", "LIST", "WITHCODE"))
    assert got[b"pg"][b"library_code"] == b"#!LUA name=pg\n" + code
    assert got[b"pg2"][b"library_code"] == b"#!lua name=pg2\n" + code.replace(b"'f'", b"'g'")
    assert got[b"pg2"][b"functions"][b"g"][b"description"] is None


@pytest.mark.parametrize("body,error", [
    (b"\xf6", "ERR Failed loading library name"),
    (b"\xf6\x03LUA", "ERR Failed loading engine name"),
    (b"\xf6\x03LUA\x01x\x00" + rdb_string(lib("x").encode()), "ERR Engine 'x' not found"),
    (b"\xf6\x01x\x03LUA\x04desc\x04code", "ERR Failed loading library description"),
    (b"\xf6\x01x\x03LUA\x00\x04code",
     "ERR Error compiling function: user_function:2: '=' expected near '<eof>'"),
])
def test_restore_release_candidate_format_errors(r, body, error):
    assert r("FUNCTION", "RESTORE", framed(body)) == err(error)
    assert r("FUNCTION", "LIST") == []


@pytest.mark.parametrize("args,error", [
    (("FUNCTION", "RESTORE"), "ERR wrong number of arguments for 'function|restore' command"),
    (("FUNCTION", "RESTORE", "x", "foo"),
     "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."),
    (("FUNCTION", "restore", "x", "FLUSH", "APPEND"),
     "ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP."),
    (("FUNCTION", "DUMP", "x"), "ERR wrong number of arguments for 'function|dump' command"),
])
def test_restore_and_dump_argument_errors(r, args, error):
    assert r(*args) == err(error)


# -- FUNCTION STATS / KILL / HELP ---------------------------------------------------

def test_stats_when_idle(r):
    assert r("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                      [b"LUA", [b"libraries_count", 0, b"functions_count", 0]]]
    two = FN_F + "\n" + FN_F.replace("'f'", "'g'")
    assert r("FUNCTION", "LOAD", lib("a", two)) == b"a"
    assert r("FUNCTION", "LOAD", lib("b", FN_F.replace("'f'", "'h'"))) == b"b"
    assert r("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                      [b"LUA", [b"libraries_count", 2, b"functions_count", 3]]]
    r("HELLO", "3")
    assert r("FUNCTION", "STATS") == ("map", [
        (b"running_script", None),
        (b"engines", ("map", [(b"LUA", ("map", [(b"libraries_count", 2),
                                                (b"functions_count", 3)]))]))])
    assert r("FUNCTION", "STATS", "x") == \
        err("ERR wrong number of arguments for 'function|stats' command")


def test_kill_when_nothing_runs(r):
    assert r("FUNCTION", "KILL") == err("NOTBUSY No scripts in execution right now.")
    assert r("FUNCTION", "KILL", "x") == \
        err("ERR wrong number of arguments for 'function|kill' command")


BUSY_FN = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
SPIN = ("redis.register_function('spin', function(keys, args) local i = 0 "
        "while true do i = i + 1 end end)\n"
        "redis.register_function('spinw', function(keys, args) redis.call('set', 'x', '1') "
        "while true do end end)\n"
        "redis.register_function{function_name='spinro', callback=function() "
        "while true do end end, flags={'no-writes'}}")


class Running:
    """Runs one command on its own connection in a thread."""

    def __init__(self, server, *args):
        self.conn = Resp(server)
        self.reply = None
        self.thread = threading.Thread(target=self._run, args=args)
        self.thread.start()

    def _run(self, *args):
        try:
            self.reply = self.conn(*args)
        except (AssertionError, OSError, EOFError) as e:  # the server went away
            self.reply = ("closed", str(e))

    def join(self):
        self.thread.join(30)
        assert not self.thread.is_alive()
        self.conn.close()
        return self.reply


def wait_busy(other):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        reply = other("PING")
        if reply != ("status", b"PONG"):
            return reply
        time.sleep(0.02)
    raise AssertionError("the server never became busy")


@pytest.fixture
def busy_server(start_server):
    return start_server(busy_reply_threshold=50)


def test_function_kill_stops_a_busy_function(busy_server):
    r = Resp(busy_server)
    assert r("FUNCTION", "LOAD", lib("busy", SPIN)) == b"busy"
    run = Running(busy_server, "FCALL", "spin", "1", "key1", "arg1")
    assert wait_busy(r) == err(BUSY_FN)
    assert r("GET", "x") == err(BUSY_FN)
    assert r("SCRIPT", "KILL") == err(BUSY_FN)
    assert r("FUNCTION", "FLUSH") == err(BUSY_FN)
    stats = r("FUNCTION", "STATS")
    assert stats[:1] == [b"running_script"] and stats[2:] == \
        [b"engines", [b"LUA", [b"libraries_count", 1, b"functions_count", 3]]]
    running = stats[1]
    assert running[:5] == [b"name", b"spin", b"command",
                           [b"FCALL", b"spin", b"1", b"key1", b"arg1"], b"duration_ms"]
    assert isinstance(running[5], int) and running[5] >= 0 and len(running) == 6
    assert r("FUNCTION", "KILL") == ("status", b"OK")
    assert run.join() == err("ERR Script killed by user with SCRIPT KILL... "
                             "script: spin, on @user_function:2.")
    assert r("PING") == ("status", b"PONG")
    assert r("FUNCTION", "KILL") == err("NOTBUSY No scripts in execution right now.")
    r.close()


def test_function_stats_resp3_while_fcall_ro_runs(busy_server):
    r = Resp(busy_server)
    assert r("FUNCTION", "LOAD", lib("busy", SPIN)) == b"busy"
    run = Running(busy_server, "FCALL_RO", "spinro", "0")
    assert wait_busy(r) == err(BUSY_FN)
    r("HELLO", "3")
    stats = r("FUNCTION", "STATS")
    assert stats[0] == "map" and stats[1][1] == \
        (b"engines", ("map", [(b"LUA", ("map", [(b"libraries_count", 1),
                                                (b"functions_count", 3)]))]))
    key, running = stats[1][0]
    assert key == b"running_script" and running[0] == "map"
    assert running[1][:2] == [(b"name", b"spinro"), (b"command", [b"FCALL_RO", b"spinro", b"0"])]
    assert running[1][2][0] == b"duration_ms" and len(running[1]) == 3
    assert r("FUNCTION", "KILL") == ("status", b"OK")
    assert run.join() == err("ERR Script killed by user with SCRIPT KILL... "
                             "script: spinro, on @user_function:4.")
    r.close()


def test_function_that_wrote_is_unkillable(busy_server):
    r = Resp(busy_server)
    assert r("FUNCTION", "LOAD", lib("busy", SPIN)) == b"busy"
    run = Running(busy_server, "FCALL", "spinw", "0")
    assert wait_busy(r) == err(BUSY_FN)
    assert r("FUNCTION", "KILL") == err(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. "
        "You can either wait the script termination or kill the server in a hard way using "
        "the SHUTDOWN NOSAVE command.")
    r.c.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n")
    assert r.c.is_closed()
    run.join()
    r.close()
    busy_server.proc.wait(20)


def test_function_kill_does_not_stop_eval(busy_server):
    r = Resp(busy_server)
    run = Running(busy_server, "EVAL", "while true do end", "0")
    busy_eval = ("BUSY Redis is busy running a script. "
                 "You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
    assert wait_busy(r) == err(busy_eval)
    assert r("FUNCTION", "KILL") == err(busy_eval)
    assert r("FUNCTION", "STATS") == err(busy_eval)
    assert r("SCRIPT", "KILL") == ("status", b"OK")
    assert run.join()[0] == "error"
    r.close()


HELP = [
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using "
    "FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a "
    "restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace the old",
    "      libraries with the new libraries (notice that even on this option there is a "
    "chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
]


def test_function_help_and_unknown_subcommand(r):
    assert r("FUNCTION", "HELP") == [("status", line.encode()) for line in HELP]
    assert r("FUNCTION", "HELP", "x") == \
        err("ERR wrong number of arguments for 'function|help' command")
    assert r("FUNCTION", "NOSUCH") == err("ERR unknown subcommand 'NOSUCH'. Try FUNCTION HELP.")
    assert r("FUNCTION") == err("ERR wrong number of arguments for 'function' command")
