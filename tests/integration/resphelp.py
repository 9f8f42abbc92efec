"""RESP helpers shared by the integration and differential tests (one copy
of each, issue 34): encode a command as a RESP multibulk.

tests/diff imports this module too (diffcore.py puts tests/integration on
sys.path)."""


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


def encode_all(cmds):
    """Several commands (each a sequence of args) as one pipelined write."""
    return b"".join(encode(*c) for c in cmds)
