"""Differential stream for the HyperLogLog commands (area "hll").

Sketches live under h0..h5.  Elements come from pools of different sizes,
so keys stay sparse for a while (a few distinct elements, repeated adds
that change nothing) and then cross hll-sparse-max-bytes into dense; the
limit itself is changed now and then (CONFIG SET, from 0 to 20000).
PFMERGE mixes sparse and dense sources into new or existing targets, and
PFCOUNT is sent for one key (the cached cardinality is read, refreshed and
invalidated) and for unions.  Every sketch is read back with GET, so the
bytes (the header's cache and its validity bit, the sparse opcodes and the
dense registers) are compared, not only the counts; the stream ends with a
GET of every key.

Broken values are mixed in: strings that are not sketches (short, wrong
magic, integers), headers with a bad encoding or a dense body of the wrong
length, and sparse bodies whose opcodes stop short of, or run past, the
16,384 registers (APPEND and SETRANGE on a live sketch, and hand-built
bodies, including a lone trailing XZERO byte).
"""
import struct

import generators

AREA = "hll"
COMMANDS = 20000

KEYS = [b"h%d" % i for i in range(6)]
ALL_KEYS = KEYS + [b"str", b"lst", b"missing"]


def _elements(rng):
    r = rng.random()
    if r < 0.4:
        pool = 50
    elif r < 0.7:
        pool = 2000
    else:
        pool = 10 ** 9
    n = rng.choice([1, 1, 2, 3, 5, 10, 30, 100, 300])
    return [b"e%d" % rng.randrange(pool) for _ in range(n)]


def _hdr(enc=1, card=0, valid=True):
    c = bytearray(struct.pack("<Q", card))
    if not valid:
        c[7] |= 0x80
    return b"HYLL" + bytes([enc, 0, 0, 0]) + bytes(c)


def _xzero(n):
    return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])


def _corrupt(rng):
    """A hand-built value that is not a valid sketch."""
    r = rng.randrange(12)
    if r == 0:
        return b"HYLL"
    if r == 1:
        return _hdr(2) + _xzero(16384)
    if r == 2:
        return _hdr(0) + b"\x00" * rng.choice([0, 100, 12287, 12289])
    if r == 3:                                # short of the registers
        return _hdr() + _xzero(16000)
    if r == 4:                                # past the registers
        return _hdr() + _xzero(16384) + bytes([0x80 | (4 << 2) | 3])
    if r == 5:                                # VAL overrunning the end
        return _hdr() + _xzero(16383) + bytes([0x80 | (7 << 2) | 3])
    if r == 6:                                # a lone trailing XZERO byte
        return _hdr() + _xzero(255) + bytes([0x40 | 0x3f])
    if r == 7:
        return _hdr() + _xzero(128) + _xzero(16256) + b"\x00"
    if r == 8:                                # many XZERO runs
        return _hdr() + _xzero(16384) * rng.choice([2, 50, 2000])
    if r == 9:                                # valid, with a stale cache
        return _hdr(card=12345, valid=rng.random() < 0.5) + _xzero(8000) + \
            bytes([0x80 | (3 << 2)]) + _xzero(8383)
    if r == 10:
        return b"HYLX" + _hdr()[4:] + _xzero(16384)
    return _hdr() + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))


def generate(rng, n, now):
    cmds = [(b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"3000")]
    while len(cmds) < n:
        k = rng.choice(KEYS)
        r = rng.random()
        if r < 0.40:
            cmds.append((b"PFADD", k, *_elements(rng)))
        elif r < 0.48:
            cmds.append((b"PFCOUNT", k))
        elif r < 0.53:
            cmds.append((b"PFCOUNT", *rng.sample(ALL_KEYS, rng.randint(2, 4))))
        elif r < 0.61:
            cmds.append((b"PFMERGE", k, *rng.sample(ALL_KEYS, rng.randint(0, 3))))
        elif r < 0.73:
            cmds.append((b"GET", k))
        elif r < 0.76:
            sub = rng.choice([b"ENCODING", b"DECODE", b"TODENSE", b"encoding", b"nosuch"])
            cmds.append((b"PFDEBUG", sub, rng.choice(ALL_KEYS)))
        elif r < 0.762:
            cmds.append((b"PFDEBUG", b"GETREG", rng.choice(ALL_KEYS)))
        elif r < 0.77:
            cmds.append((b"CONFIG", b"SET", b"hll-sparse-max-bytes",
                         rng.choice([b"0", b"30", b"300", b"3000", b"3000", b"20000"])))
        elif r < 0.80:
            cmds.append((b"DEL", k))
        elif r < 0.83:
            kk = rng.choice([k, b"str"])
            cmds.append((b"SET", kk, _corrupt(rng)))
        elif r < 0.85:
            cmds.append((b"APPEND", k, bytes([rng.randrange(256)])))
        elif r < 0.87:
            cmds.append((b"SETRANGE", k, str(rng.randrange(4, 40)).encode(),
                         bytes([rng.randrange(256)])))
        elif r < 0.88:
            cmds.append((b"SET", b"str", rng.choice([b"12", b"hello", b"x" * 20])))
        elif r < 0.89:
            cmds.append((b"LPUSH", b"lst", b"a"))
        elif r < 0.90:
            cmds.append((b"OBJECT", b"ENCODING", k))
        else:
            cmds.append((b"PFADD", k, *_elements(rng)))
            cmds.append((b"GET", k))
    cmds = generators.finish(rng, cmds, n)
    cmds += [(b"GET", k) for k in KEYS + [b"str"]]
    return cmds
