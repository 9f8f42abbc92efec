"""RESP helpers shared by the integration and differential tests (one copy
of each, issue 34): encode a command as a RESP multibulk; delimit, read
and parse replies.

tests/diff uses this module too (diffcore.integration_module loads it by
path)."""


def arg_bytes(a):
    """One command argument as bytes: bytes-like as is, str as UTF-8, any
    other value (int, float) as its str()."""
    if isinstance(a, (bytes, bytearray, memoryview)):
        return bytes(a)
    if isinstance(a, str):
        return a.encode()
    return str(a).encode()


def encode(*args):
    """The command args as one RESP multibulk (what a client sends)."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = arg_bytes(a)
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def bulk(a):
    """One bulk string reply (or argument) as RESP bytes: $len, the bytes."""
    a = arg_bytes(a)
    return b"$%d\r\n%s\r\n" % (len(a), a)


def encode_all(cmds):
    """Several commands (each a sequence of args) as one pipelined write."""
    return b"".join(encode(*c) for c in cmds)


# ---- replies ----------------------------------------------------------------
# One reader of RESP2/RESP3 replies.  value_end() delimits a reply without
# recursion (scripts return replies nested thousands deep); parse() turns
# one into a typed tree; tagged() and decode() give the two Python shapes
# the tests compare.

AGGREGATES = (b"*", b"~", b">", b"%", b"|")   # %, | hold 2 values per count
BLOBS = (b"$", b"=", b"!")                    # a length, then that many bytes
LINES = (b"+", b"-", b":", b"_", b",", b"#", b"(")


class ProtocolError(AssertionError):
    """Bytes that are not RESP (a test failure wherever it surfaces)."""


def value_end(buf, pos=0):
    """Index just past the complete RESP value starting at buf[pos], None if
    buf holds only part of it; raises ProtocolError for an unknown type.
    Iterative: counts the values still owed instead of descending."""
    owed = 1
    while owed:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        t, head = buf[pos:pos + 1], buf[pos + 1:eol]
        pos = eol + 2
        owed -= 1
        if t in BLOBS:
            n = int(head)
            if n >= 0:
                if len(buf) < pos + n + 2:
                    return None
                pos += n + 2
        elif t in AGGREGATES:
            n = int(head)
            if n > 0:
                owed += 2 * n if t in (b"%", b"|") else n
        elif t not in LINES:
            raise ProtocolError("not RESP at %d: %r" % (pos - len(head) - 3, buf[pos - len(head) - 3:][:40]))
    return pos


def split_values(data):
    """A byte string of whole RESP values, as a list of each value's bytes."""
    out, i = [], 0
    while i < len(data):
        j = value_end(data, i)
        assert j is not None, "truncated RESP: %r" % data[i:i + 60]
        out.append(data[i:j])
        i = j
    return out


def read_file_value(f):
    """The raw bytes of the next complete RESP value on f (a binary file,
    e.g. socket.makefile("rb")), read line by line so nothing past it is
    consumed; a closed stream is a ProtocolError."""
    out, pending = [], 1
    while pending:
        line = f.readline()
        if not line.endswith(b"\r\n"):
            raise ProtocolError("stream ended inside a reply: %r" % b"".join(out + [line])[:60])
        out.append(line)
        pending -= 1
        t = line[:1]
        if t in BLOBS and line[1:-2] != b"-1":
            out.append(f.read(int(line[1:-2]) + 2))
        elif t in AGGREGATES and line[1:-2] not in (b"-1", b"?"):
            pending += int(line[1:-2]) * (2 if t in (b"%", b"|") else 1)
    return b"".join(out)


def read_values(conn, n=1):
    """The raw bytes of the next n complete RESP values on conn (a
    conftest RawConn, or anything with .buf and ._fill())."""
    while True:
        j = 0
        for _ in range(n):
            j = value_end(conn.buf, j)
            if j is None:
                break
        if j is not None:
            out, conn.buf = conn.buf[:j], conn.buf[j:]
            return out
        conn._fill()


def parse(buf, pos=0):
    """Parse one RESP2/RESP3 reply at buf[pos:].  Returns (end, value) or
    None if buf holds only part of it.

    value is a tuple (type_char, payload): payload is bytes for + - $ ( , =
    # ! (None for a null bulk), None for _, int for ':', a list for * ~ > %
    | (None for a null array; a map's keys and values alternate)."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None
    t = buf[pos:pos + 1]
    line = buf[pos + 1:nl]
    p = nl + 2
    if t in (b"+", b"-", b"(", b",", b"#"):
        return p, (t, line)
    if t == b"_":
        return p, (t, None)
    if t == b":":
        return p, (t, int(line))
    if t in BLOBS:
        n = int(line)
        if n < 0:
            return p, (t, None)
        if len(buf) < p + n + 2:
            return None
        return p + n + 2, (t, buf[p:p + n])
    if t in AGGREGATES:
        n = int(line)
        if n < 0:
            return p, (t, None)
        if t in (b"%", b"|"):
            n *= 2
        items = []
        for _ in range(n):
            r = parse(buf, p)
            if r is None:
                return None
            p, v = r
            items.append(v)
        return p, (t, items)
    raise ProtocolError("bad reply type %r at %r" % (t, buf[pos:pos + 40]))


def parse_one(raw):
    """The typed value of raw, which must be exactly one whole reply."""
    r = parse(raw)
    assert r is not None, "truncated RESP: %r" % raw[:60]
    end, value = r
    assert end == len(raw), "trailing bytes after reply: %r" % raw[end:]
    return value


def tagged(value):
    """A parsed RESP2/RESP3 value in the wire-typed shape the command-table
    tests compare: ('status', b) / ('error', b), int, bytes, a list for an
    array, ('set', [...]), ('map', [(k, v), ...]), None for the nulls.  Any
    other type is a test failure."""
    t, x = value
    if t == b"+":
        return ("status", x)
    if t == b"-":
        return ("error", x)
    if t in (b":", b"$", b"_"):
        return x
    if t == b"*":
        return None if x is None else [tagged(v) for v in x]
    if t == b"~":
        return None if x is None else ("set", [tagged(v) for v in x])
    if t == b"%":
        return ("map", [(tagged(k), tagged(v)) for k, v in zip(x[0::2], x[1::2])])
    raise AssertionError("unexpected reply type %r" % t)
