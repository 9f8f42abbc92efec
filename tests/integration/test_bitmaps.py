"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
BITFIELD_RO.

Differential like test_strings.py: each command list runs on cairn and on
redis-server 7.0.15 and every raw reply must match byte for byte.  Run with
CAIRN_BIN=redis-server to re-check against real Redis.
"""
import random

from requires import require_commands
from test_strings import LLONG_MAX, LLONG_MIN, collect_events, diff

BIT_VALUES = [b"", b"foobar", b"\xff\x00\xaa", b"\xff\xff\xff", b"\x00\x00\x00",
              b"\xff\xf0\x00", b"\x00\x0f\xff", b"\x80", b"\x01"]


def load(values):
    cmds = []
    for i, v in enumerate(values):
        cmds.append(["SET", "v%d" % i, v])
    cmds.append(["SET", "int", "12345"])
    return cmds, ["v%d" % i for i in range(len(values))] + ["int", "missing"]


# ------------------------------------------------------------ SETBIT / GETBIT

def test_setbit_getbit_basics_and_encodings(server, oracle):
    r = diff(server, oracle, [
        "SETBIT k 7 1", "GET k", "OBJECT ENCODING k", "SETBIT k 7 1", "SETBIT k 7 0",
        "SETBIT k 100 1", "STRLEN k", "GETBIT k 100", "GETBIT k 99", "GETBIT k 100000",
        "GETBIT missing 5", "SET n 1", "GETBIT n 2", "GETBIT n 7", "OBJECT ENCODING n",
        "SETBIT n 6 1", "GET n", "OBJECT ENCODING n",
        "SET e abc", "SETBIT e 1 1", "OBJECT ENCODING e",
        "SET t a PXAT 4102444800000", "SETBIT t 100 1", "PEXPIRETIME t",
    ])
    assert r[0] == b":0\r\n" and r[1] == b"$1\r\n\x01\r\n"


def test_setbit_getbit_errors(server, oracle):
    r = diff(server, oracle, [
        "SETBIT k -1 1", "SETBIT k abc 1", "SETBIT k 1.5 1", "SETBIT k 4294967296 1",
        "SETBIT k 1 2", "SETBIT k 1 -1", "SETBIT k 1 abc", "SETBIT k 1 01",
        "GETBIT k -1", "GETBIT k 4294967296", "GETBIT k x", "GETBIT k 4294967295",
        "SETBIT k %d 1" % LLONG_MAX, "EXISTS k",
    ])
    assert r[0] == b"-ERR bit offset is not an integer or out of range\r\n"
    assert r[4] == b"-ERR bit is not an integer or out of range\r\n"


def test_setbit_offset_limit_follows_proto_max_bulk_len(server, oracle):
    diff(server, oracle, [
        "CONFIG SET proto-max-bulk-len 1048576",
        "SETBIT k 8388608 1", "SETBIT k 8388607 1", "STRLEN k", "GETBIT k 8388607",
        "GETBIT k 8388608", "BITFIELD k GET u8 8388608", "BITFIELD k SET u8 8388600 255",
        "BITFIELD k SET u8 8388601 255", "STRLEN k", "BITFIELD k GET u8 #1048575",
        "BITFIELD k GET u8 #1048576",
    ])


def test_wrong_type_errors(server, oracle):
    require_commands(server, "lpush")
    r = diff(server, oracle, [
        "LPUSH l x", "SET s abc",
        "SETBIT l 1 1", "GETBIT l 1", "BITCOUNT l", "BITCOUNT l 0 1", "BITPOS l 1",
        "BITPOS l 1 x", "BITOP AND d s l", "BITOP NOT d l", "BITOP OR l s", "TYPE l",
        "BITFIELD l GET u8 0", "BITFIELD l SET u8 0 1", "BITFIELD_RO l GET u8 0",
        "BITFIELD l", "BITFIELD_RO l SET u8 0 1",
    ])
    assert r[2] == b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


# ------------------------------------------------------------ BITCOUNT

def test_bitcount_range_matrix(server, oracle):
    cmds, keys = load(BIT_VALUES)
    idx = [-100, -25, -24, -9, -8, -7, -3, -1, 0, 1, 2, 3, 7, 8, 9, 23, 24, 100]
    for k in keys:
        cmds.append(["BITCOUNT", k])
        for a in idx:
            for b in idx:
                cmds.append(["BITCOUNT", k, a, b])
                cmds.append(["BITCOUNT", k, a, b, "BIT"])
                cmds.append(["BITCOUNT", k, a, b, "byte"])
    cmds += [["BITCOUNT", "v1", LLONG_MIN, LLONG_MAX, "BIT"], ["BITCOUNT", "v1", LLONG_MAX, LLONG_MIN]]
    diff(server, oracle, cmds)


def test_bitcount_errors(server, oracle):
    r = diff(server, oracle, [
        "SET k foobar", "BITCOUNT k 0", "BITCOUNT k 0 1 BITS", "BITCOUNT k 0 1 BIT x",
        "BITCOUNT k a 1", "BITCOUNT k 0 b", "BITCOUNT missing 0", "BITCOUNT missing 0 1 BAD",
        "BITCOUNT missing x 1",
    ])
    assert r[1] == b"-ERR syntax error\r\n"


# ------------------------------------------------------------ BITPOS

def test_bitpos_matrix(server, oracle):
    cmds, keys = load(BIT_VALUES)
    idx = [-100, -9, -8, -3, -1, 0, 1, 2, 3, 7, 8, 9, 16, 23, 100]
    for k in keys:
        for bit in (0, 1):
            cmds.append(["BITPOS", k, bit])
            for a in idx:
                cmds.append(["BITPOS", k, bit, a])
                for b in idx:
                    cmds.append(["BITPOS", k, bit, a, b])
                    cmds.append(["BITPOS", k, bit, a, b, "BIT"])
                    cmds.append(["BITPOS", k, bit, a, b, "BYTE"])
    diff(server, oracle, cmds)


def test_bitpos_errors_and_missing_key(server, oracle):
    r = diff(server, oracle, [
        "BITPOS missing 0", "BITPOS missing 1", "BITPOS missing 0 x y z",
        "BITPOS missing 2", "BITPOS missing x",
        "SET k \xff", "BITPOS k 2", "BITPOS k -1", "BITPOS k 0 a", "BITPOS k 0 0 b",
        "BITPOS k 0 0 1 BITS", "BITPOS k 0 0 1 BIT x", "BITPOS k 0 0 BIT",
        "BITPOS k 0", "BITPOS k 0 0", "BITPOS k 0 0 -1",
    ])
    assert r[3] == b"-ERR The bit argument must be 1 or 0.\r\n"


def test_bitpos_long_strings(server, oracle):
    cmds = [["SET", "ones", b"\xff" * 1000], ["SET", "zeros", b"\x00" * 1000],
            ["SETRANGE", "ones", 777, b"\xfe"], ["SETRANGE", "zeros", 555, b"\x10"]]
    for k in ("ones", "zeros"):
        for bit in (0, 1):
            cmds += [["BITPOS", k, bit], ["BITPOS", k, bit, 100], ["BITPOS", k, bit, 100, 600],
                     ["BITPOS", k, bit, 4000, 5000, "BIT"], ["BITPOS", k, bit, 4443, 6300, "BIT"],
                     ["BITPOS", k, bit, -10], ["BITPOS", k, bit, 600, -1]]
    diff(server, oracle, cmds)


# ------------------------------------------------------------ BITOP

def test_bitop_operations(server, oracle):
    r = diff(server, oracle, [
        ["SET", "a", b"\xff\x0f\xaa"], ["SET", "b", b"\x0f"], ["SET", "c", b"\x00\xff\x55\x01"],
        "BITOP AND d a b c", "GET d", "OBJECT ENCODING d",
        "BITOP OR d a b c", "GET d", "BITOP XOR d a b c", "GET d",
        "BITOP NOT d a", "GET d", "BITOP not d c", "GET d",
        "BITOP AND d a missing", "GET d", "BITOP OR d missing a", "GET d",
        "BITOP AND d missing missing2", "EXISTS d", "BITOP AND d missing", "EXISTS d",
        "BITOP OR a a b", "GET a", "BITOP NOT a a", "GET a",
        "SET n 12", "BITOP OR d n", "GET d", "OBJECT ENCODING d",
        "SET d x PXAT 4102444800000", "BITOP OR d a", "PEXPIRETIME d",
        ["SET", "e", ""], "BITOP OR d e", "EXISTS d",
        "BITOP NOT d a b", "BITOP NOT d", "BITOP FOO d a", "BITOP ANDX d a", "BITOP AND d",
        "BITOP FOO d a b",
    ])
    assert r[-6] == b"-ERR BITOP NOT must be called with a single source key.\r\n"
    assert r[-4] == b"-ERR syntax error\r\n"


# ------------------------------------------------------------ BITFIELD

def test_bitfield_examples_and_errors(server, oracle):
    r = diff(server, oracle, [
        "BITFIELD k INCRBY i5 100 1 GET u4 0", "BITFIELD k SET i8 #0 100 SET i8 #1 200",
        "BITFIELD k GET i8 #0 GET i8 #1 GET u16 0", "OBJECT ENCODING k",
        "BITFIELD k OVERFLOW SAT INCRBY u2 102 1 OVERFLOW WRAP INCRBY u2 102 1",
        "BITFIELD k OVERFLOW FAIL INCRBY u2 102 5 GET u2 102",
        "BITFIELD k", "BITFIELD missing", "BITFIELD missing GET u8 0", "EXISTS missing",
        "BITFIELD k GET u64 0", "BITFIELD k GET i65 0", "BITFIELD k GET i0 0",
        "BITFIELD k GET x8 0", "BITFIELD k GET u 0", "BITFIELD k GET i08 0",
        "BITFIELD k GET u8 -1", "BITFIELD k GET u8 #-1", "BITFIELD k GET u8 x",
        "BITFIELD k GET u8 ##1", "BITFIELD k GET u8 4294967296",
        "BITFIELD k SET u8 0", "BITFIELD k SET u8 0 x", "BITFIELD k INCRBY u8 0 1.5",
        "BITFIELD k OVERFLOW", "BITFIELD k OVERFLOW FOO GET u8 0", "BITFIELD k FOO",
        "BITFIELD k GET u8", "BITFIELD k GET u8 0 SET", "BITFIELD k get U8 0 set I8 0 -1",
        "BITFIELD k GET i64 0 GET u63 0 GET i64 #%d" % (LLONG_MAX // 64),
        "BITFIELD k GET u8 #%d" % (LLONG_MAX // 4),
        "SET n 123", "BITFIELD n GET u8 0", "OBJECT ENCODING n", "BITFIELD n SET u8 0 49",
        "OBJECT ENCODING n", "GET n",
        "BITFIELD f OVERFLOW FAIL SET u8 0 256", "EXISTS f", "STRLEN f",
    ])
    assert r[10] == (b"-ERR Invalid bitfield type. Use something like i16 u8. "
                     b"Note that u64 is not supported but i64 is.\r\n")
    assert r[16] == b"-ERR bit offset is not an integer or out of range\r\n"
    assert r[25] == b"-ERR Invalid OVERFLOW type specified\r\n"


def test_bitfield_ro(server, oracle):
    r = diff(server, oracle, [
        "SET k abc", "BITFIELD_RO k GET u8 0 GET i4 #3", "BITFIELD_RO k",
        "BITFIELD_RO missing GET u8 0", "BITFIELD_RO k SET u8 0 1",
        "BITFIELD_RO k GET u8 0 INCRBY u8 0 1", "BITFIELD_RO k OVERFLOW SAT GET u8 0",
        "BITFIELD_RO k SET u99 0 1", "BITFIELD_RO k FOO", "GET k", "OBJECT ENCODING k",
    ])
    assert r[4] == b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"


def test_bitfield_random_ops(server, oracle):
    rnd = random.Random(99)
    edge = [0, 1, -1, 2, -2, 127, 128, -128, 255, 256, 32767, -32768, 65535,
            2 ** 31 - 1, -2 ** 31, 2 ** 32, 2 ** 62, LLONG_MAX, LLONG_MIN, LLONG_MAX - 1, LLONG_MIN + 1]
    cmds = [["SET", "k", bytes(rnd.randrange(256) for _ in range(20))]]
    for _ in range(1500):
        args = ["BITFIELD", "k"]
        for _ in range(rnd.randint(1, 4)):
            if rnd.random() < 0.3:
                args += ["OVERFLOW", rnd.choice(["WRAP", "SAT", "FAIL"])]
            signed = rnd.random() < 0.5
            bits = rnd.randint(1, 64 if signed else 63)
            typ = ("i" if signed else "u") + str(bits)
            off = ("#%d" % rnd.randint(0, 8)) if rnd.random() < 0.2 else str(rnd.randint(0, 200))
            op = rnd.randrange(3)
            if op == 0:
                args += ["GET", typ, off]
            else:
                v = rnd.choice(edge) if rnd.random() < 0.6 else rnd.randint(-2 ** bits, 2 ** bits)
                v = max(LLONG_MIN, min(LLONG_MAX, v))
                args += ["SET" if op == 1 else "INCRBY", typ, off, str(v)]
        cmds.append(args)
        if rnd.random() < 0.1:
            cmds.append(["GET", "k"])
    cmds.append(["GET", "k"])
    diff(server, oracle, cmds)


def test_bitmap_keyspace_events(server, oracle):
    cmds = ["SETBIT b 1 1", "SETBIT b 1 1", "SETBIT b 20 0", "SETBIT b 20 0",
            "BITFIELD c SET u8 0 0", "BITFIELD c SET u8 0 0",
            "BITFIELD c OVERFLOW FAIL SET u8 100 300", "BITFIELD c INCRBY u8 0 0",
            "BITFIELD c INCRBY u8 0 1 INCRBY u8 8 1", "BITOP AND d nokey", "BITOP OR d b",
            "BITOP AND d nokey"]
    assert collect_events(server, cmds) == collect_events(oracle, cmds)
