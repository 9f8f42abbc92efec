"""The struct, cmsgpack and bit.tohex libraries that EVAL scripts see.

Expected values were observed on redis-server 7.0.15 (run with
CAIRN_BIN=redis-server to re-check).  tests/unit/test_lua_libs.c covers
the libraries case by case in a bare VM; this file checks them through
EVAL: bytes passed in and out as ARGV / bulk replies, the error replies a
script gets, and that hostile input leaves the server serving.
"""
import pytest

from requires import require_commands

SHORT_ERR = " script: "


@pytest.fixture
def c(server):
    require_commands(server, "EVAL")
    return server.client()


def ev(c, script, *args):
    return c.eval(script, 0, *args)


def err(c, script, *args):
    """The error text of a failing script, without Redis's ' script: ...'
    suffix."""
    with pytest.raises(Exception) as e:
        c.eval(script, 0, *args)
    msg = str(e.value)
    return msg[:msg.rfind(SHORT_ERR)] if SHORT_ERR in msg else msg


# ------------------------------------------------------------------ struct

def test_struct_pack_byte_order_and_sizes(c):
    assert ev(c, "return struct.pack('<i', 5)") == b"\x05\x00\x00\x00"
    assert ev(c, "return struct.pack('>i', 5)") == b"\x00\x00\x00\x05"
    assert ev(c, "return struct.pack('>bBhHlLT', -1, 2, -3, 4, -5, 6, 7)") == (
        b"\xff\x02\xff\xfd\x00\x04\xff\xff\xff\xff\xff\xff\xff\xfb"
        b"\x00\x00\x00\x00\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00\x07")
    assert ev(c, "return struct.pack('>i3', -5)") == b"\xff\xff\xfb"
    assert ev(c, "return struct.pack('>i17', -5)") == b"\x00" * 9 + b"\xff" * 7 + b"\xfb"
    assert ev(c, "return struct.pack('<f>d', 1.5, 1.5)") == b"\x00\x00\xc0?" + b"?\xf8" + b"\x00" * 6
    assert ev(c, "return struct.pack('c3s', 'abcdef', 'x')") == b"abcx\x00"
    assert ev(c, "return struct.pack('!4bi', 1, 2)") == b"\x01\x00\x00\x00\x02\x00\x00\x00"
    assert ev(c, "return struct.pack('<I8', -1)") == b"\xff" * 8
    assert ev(c, "return struct.pack('<i8', 2^63)") == b"\x00" * 7 + b"\x80"
    assert ev(c, "return struct.size('!bi3')") == 6
    assert ev(c, "return struct.size('c2147483647c2147483647')") == 4294967294


def test_struct_unpack(c):
    assert ev(c, "return {struct.unpack('<i', ARGV[1])}", b"\x05\x00\x00\x00") == [5, 5]
    assert ev(c, "return {struct.unpack('bc0b', ARGV[1])}", b"\x03abcd") == [b"abc", 100, 6]
    assert ev(c, "return {struct.unpack('s', ARGV[1], 4)}", b"abc\x00") == [b"", 5]
    assert ev(c, "return {struct.unpack('!4bi', ARGV[1], 2)}", b"x\x01\x00\x00\x00\x02\x00\x00\x00") == [1, 512, 9]
    assert ev(c, "return tostring(struct.unpack('<I8', ARGV[1]))", b"\xff" * 8) == b"1.844674407371e+19"
    assert ev(c, "return {struct.unpack('', 'ab', 40)}") == [40]
    # A packed number comes back exactly.
    assert ev(c, "local a, b = struct.unpack('>d', struct.pack('>d', 0.1)) return tostring(a == 0.1)") == b"true"


@pytest.mark.parametrize("script,msg", [
    ("return struct.pack('i33', 5)", "user_script:1: integral size 33 is larger than limit of 32"),
    ("return struct.size('c99999999999')", "user_script:1: integral size overflow"),
    ("return struct.size('!17')", "user_script:1: alignment 17 is not a power of 2"),
    ("return struct.pack('q', 1)", "user_script:1: bad argument #1 to 'pack' (invalid format option 'q')"),
    ("return struct.pack('bbb', 1)", "user_script:1: bad argument #3 to 'pack' (number expected, got nil)"),
    ("return struct.pack('c3', 'ab')", "user_script:1: bad argument #3 to 'pack' (string too short)"),
    ("return struct.size('s')", "user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)"),
    ("return struct.unpack('<i', 'abc')", "user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.unpack('<i8', 'abcdefgh', -1)",
     "user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.unpack('c2147483647', 'abc')",
     "user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.unpack('b', 'a', 0)", "user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)"),
    ("return struct.unpack('s', 'abc')", "user_script:1: unfinished string in data"),
    ("return struct.unpack('c0', 'abc')", "user_script:1: format 'c0' needs a previous size"),
    ("return struct.unpack(string.rep('b', 9000), string.rep('a', 9000))",
     "user_script:1: stack overflow (too many results)"),
])
def test_struct_errors(c, script, msg):
    assert err(c, script) == msg
    assert c.ping()


def test_struct_big_strings(c):
    big = b"x" * (10 * 1024 * 1024)
    assert ev(c, "return #struct.pack('s', ARGV[1])", big) == len(big) + 1
    assert ev(c, "local s, n = struct.unpack('>I4c0', struct.pack('>I4', #ARGV[1]) .. ARGV[1]) "
                 "return {#s, n}", big) == [len(big), len(big) + 5]


# ------------------------------------------------------------------ cmsgpack

def test_cmsgpack_pack_encodings(c):
    cases = {
        "nil": b"\xc0", "true": b"\xc3", "127": b"\x7f", "128": b"\xcc\x80", "65536": b"\xce\x00\x01\x00\x00",
        "2^32": b"\xcf\x00\x00\x00\x01\x00\x00\x00\x00", "-33": b"\xd0\xdf", "-2^31-1": b"\xd3\xff\xff\xff\xff\x7f\xff\xff\xff",
        "1.5": b"\xca?\xc0\x00\x00", "0.1": b"\xcb?\xb9\x99\x99\x99\x99\x99\x9a", "2^63": b"\xca\x5f\x00\x00\x00",
        "1/0": b"\xca\x7f\x80\x00\x00", "-0.0": b"\x00", "string.rep('a', 32)": b"\xd9\x20" + b"a" * 32,
        "{}": b"\x90", "{1, 2, 3}": b"\x93\x01\x02\x03", "{a = 1}": b"\x81\xa1a\x01",
        "{1, nil, 3}": b"\x82\x01\x01\x03\x03", "1, 'x', false": b"\x01\xa1x\xc2",
    }
    for expr, want in cases.items():
        assert ev(c, "return cmsgpack.pack(%s)" % expr) == want, expr
    # 16 nested tables are packed, the 17th becomes nil.
    assert ev(c, "local t = {} t[1] = t return cmsgpack.pack(t)") == b"\x91" * 16 + b"\xc0"
    assert ev(c, "return cmsgpack._VERSION") == b"lua-cmsgpack 0.4.0"


def test_cmsgpack_unpack_variants(c):
    s = b"\x01\x02\x03"
    assert ev(c, "return {cmsgpack.unpack(ARGV[1])}", s) == [1, 2, 3]
    assert ev(c, "return {cmsgpack.unpack_one(ARGV[1])}", s) == [1, 1]
    assert ev(c, "return {cmsgpack.unpack_one(ARGV[1], 2)}", s) == [-1, 3]
    assert ev(c, "return {cmsgpack.unpack_limit(ARGV[1], 2)}", s) == [2, 1, 2]
    assert ev(c, "return {cmsgpack.unpack_limit(ARGV[1], 0)}", s) == [1, 2, 3]
    assert ev(c, "return {cmsgpack.unpack_limit(ARGV[1], 0, 2)}", s) == [2]
    assert ev(c, "return select('#', cmsgpack.unpack(ARGV[1]))", b"\xc0\xc0\xc0") == 3
    assert ev(c, "local t = cmsgpack.unpack(ARGV[1]) return {t.a, t[1]}", b"\x82\xa1a\x02\x01\xa1b") == [2, b"b"]
    # uint64 comes back signed, as on Redis.
    assert ev(c, "return tostring(cmsgpack.unpack(ARGV[1]))", b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff") == b"-1"


def test_cmsgpack_round_trip_through_argv(c):
    packed = ev(c, "return cmsgpack.pack({1, {a = 'b'}, 'x', 2^40, -7, 0.25, true})")
    assert ev(c, "local t = cmsgpack.unpack(ARGV[1]) return cmsgpack.pack(t) == ARGV[1] and t[4] == 2^40",
              packed) == 1


@pytest.mark.parametrize("data,msg", [
    (b"\x92\x01", "user_script:1: Missing bytes in input."),
    (b"\xdb\xff\xff\xff\xffa", "user_script:1: Missing bytes in input."),
    (b"\xdd\xff\xff\xff\xff", "user_script:1: Missing bytes in input."),
    (b"\xdf\xff\xff\xff\xff", "user_script:1: Missing bytes in input."),
    (b"\xc1", "user_script:1: Bad data format in input."),
    (b"\xc4\x01a", "user_script:1: Bad data format in input."),
    (b"\xd4\x01\x01", "user_script:1: Bad data format in input."),
    (b"\x81\xc0\x01", "table index is nil"),
    (b"\x81\xcb\xff\xf8\x00\x00\x00\x00\x00\x00\x01", "table index is NaN"),
    (b"\x91" * 4000 + b"\x01", "user_script:1: stack overflow (in function mp_decode_to_lua_array)"),
    (b"\x81\x01" * 4000 + b"\x01",
     "user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"),
    (b"\x01" * 8000,
     "user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"),
])
def test_cmsgpack_hostile_input(c, data, msg):
    assert err(c, "return cmsgpack.unpack(ARGV[1])", data) == msg
    assert c.ping()


@pytest.mark.parametrize("script,msg", [
    ("return cmsgpack.pack()", "user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)"),
    ("return cmsgpack.unpack_one('\\1\\2\\3', 4)", "user_script:1: Start offset 4 greater than input length 3."),
    ("return cmsgpack.unpack_one('\\1\\2\\3', -1)",
     "user_script:1: Invalid request to unpack with offset of -1 and limit of 3."),
    ("return cmsgpack.unpack_limit('\\1\\2\\3', -1)",
     "user_script:1: Invalid request to unpack with offset of 0 and limit of 3."),
    ("return cmsgpack.unpack_limit(string.rep('\\1', 7999), 7999)",
     "user_script:1: stack overflow (in function mp_unpack_full)"),
])
def test_cmsgpack_errors(c, script, msg):
    assert err(c, script) == msg


def test_cmsgpack_big_string(c):
    big = b"y" * (10 * 1024 * 1024)
    packed = ev(c, "return cmsgpack.pack(ARGV[1])", big)
    assert packed[:5] == b"\xdb\x00\xa0\x00\x00" and packed[5:] == big
    assert ev(c, "return #cmsgpack.unpack(ARGV[1])", packed) == len(big)
    assert err(c, "return cmsgpack.unpack(ARGV[1])", packed[:-1]) == "user_script:1: Missing bytes in input."


# ------------------------------------------------------------------ bit.tohex

def test_bit_tohex(c):
    # Debian's lua-bitop crashes on n = -2^31; Redis (and Cairn) answer.
    assert ev(c, "return bit.tohex(65535, -2147483648)") == b"0000FFFF"
    assert ev(c, "return bit.tohex(255, -9)") == b"000000FF"
    assert ev(c, "return bit.tohex(255, 9)") == b"000000ff"
    assert ev(c, "return bit.tohex(0x12345678, -3)") == b"678"
    assert ev(c, "return bit.tohex(1.5)") == b"00000002"
    assert ev(c, "return bit.tohex(1e300)") == b"8800759c"
    assert err(c, "return bit.tohex(255, nil)") == \
        "user_script:1: bad argument #2 to 'tohex' (number expected, got nil)"
    assert c.ping()
