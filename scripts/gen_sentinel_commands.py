#!/usr/bin/env python3
"""Writes src/server/sentinel_command_data.c: Sentinel mode's COMMAND
table (COMMAND, COMMAND INFO/COUNT/LIST/DOCS/GETKEYS), taken from Debian's
redis-sentinel 7.0.15 as scripts/gen_commands.py takes the data server's
from redis-server.  Only the commands and subcommands Cairn's Sentinel
runs are kept (all of ACL's; the CLIENT subcommands it has), in redis-sentinel's order.  For each (sub)command the file holds
its full name, arity, ACL categories and the RESP2 and RESP3 bytes of its
COMMAND INFO entry and COMMAND DOCS value, subcommands filtered.

Usage: python3 scripts/gen_sentinel_commands.py [--sentinel-bin PATH]"""
import argparse
import os
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "server", "sentinel_command_data.c")
KEEP = {
    "ping": None, "info": None, "role": None, "subscribe": None, "psubscribe": None, "unsubscribe": None,
    "punsubscribe": None, "publish": None, "auth": None, "hello": None, "shutdown": None,
    "acl": lambda sub: True,
    "sentinel": lambda sub: True,
    "client": lambda sub: sub in ("client|id", "client|getname", "client|setname", "client|info", "client|list",
                                  "client|kill", "client|help", "client|reply", "client|no-evict",
                                  "client|getredir", "client|trackinginfo", "client|unblock", "client|pause",
                                  "client|unpause", "client|tracking", "client|caching"),
    "command": lambda sub: sub in ("command|count", "command|list", "command|info", "command|docs",
                                   "command|getkeys", "command|getkeysandflags", "command|help"),
}


class Reader:
    def __init__(self, sock):
        self.s, self.buf = sock, b""

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(65536)
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l

    def exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.s.recv(65536)
        d, self.buf = self.buf[:n], self.buf[n + 2:]
        return d

    def value(self):
        l = self.line()
        t, rest = l[:1], l[1:]
        if t in (b"+", b"-"):
            return (t, rest)
        if t in (b":", b"#", b","):
            return (t, rest)
        if t == b"_":
            return (t, None)
        if t in (b"$", b"="):
            n = int(rest)
            return (t, None if n < 0 else self.exact(n))
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return (t, None if n < 0 else [self.value() for _ in range(n)])
        if t == b"%":
            n = int(rest)
            return (t, [(self.value(), self.value()) for _ in range(n)])
        raise ValueError(l)


def enc(v, resp):
    """RESP bytes of a parsed value for protocol resp (2 or 3)."""
    t, x = v
    if t in (b"+", b"-", b":"):
        return t + x + b"\r\n"
    if t == b"$":
        return b"$-1\r\n" if x is None else b"$%d\r\n%s\r\n" % (len(x), x)
    if t == b"_":
        return b"_\r\n" if resp == 3 else b"$-1\r\n"
    if t in (b"*", b"~"):
        head = (t if resp == 3 else b"*") + b"%d\r\n" % len(x)
        return head + b"".join(enc(e, resp) for e in x)
    if t == b"%":
        head = b"%%%d\r\n" % len(x) if resp == 3 else b"*%d\r\n" % (2 * len(x))
        return head + b"".join(enc(k, resp) + enc(val, resp) for k, val in x)
    raise ValueError(t)


def cmd(sock, reader, *args):
    sock.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in
                                                      (x.encode() for x in args)))
    return reader.value()


def c_string(b):
    out = []
    for ch in b:
        if ch in (0x22, 0x5c):
            out.append("\\" + chr(ch))
        elif ch == 13:
            out.append("\\r")
        elif ch == 10:
            out.append("\\n")
        elif 0x20 <= ch < 0x7f:
            out.append(chr(ch))
        else:
            out.append("\\%03o" % ch)
    if not out:
        return '""'
    chunks, cur = [], ""
    for tok in out:  # never split an escape sequence
        if len(cur) + len(tok) > 100:
            chunks.append(cur)
            cur = ""
        cur += tok
    chunks.append(cur)
    return "\n        ".join('"%s"' % c for c in chunks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentinel-bin", default="/usr/bin/redis-sentinel")
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    s0 = socket.socket()
    s0.bind(("127.0.0.1", 0))
    port = s0.getsockname()[1]
    s0.close()
    conf = os.path.join(d, "s.conf")
    with open(conf, "w") as f:
        f.write("port %d\nbind 127.0.0.1\n" % port)
    p = subprocess.Popen([a.sentinel_bin, conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.05)
        r = Reader(sock)
        cmd(sock, r, "HELLO", "3")
        info = cmd(sock, r, "COMMAND")[1]
        docs = dict((k[1].decode(), v) for k, v in cmd(sock, r, "COMMAND", "DOCS")[1])
    finally:
        p.kill()
        p.wait()
    entries = []
    for e in info:
        name = e[1][0][1].decode()
        if name not in KEEP:
            continue
        keep = KEEP[name]
        fields = list(e[1])
        subs = [s for s in fields[9][1] if keep and keep(s[1][0][1].decode())]
        fields[9] = (fields[9][0], subs)
        entry = (e[0], fields)
        doc = docs[name]
        if subs and doc[0] == b"%":
            items = []
            for k, v in doc[1]:
                if k[1] == b"subcommands":
                    v = (v[0], [(sk, sv) for sk, sv in v[1] if keep(sk[1].decode())])
                items.append((k, v))
            doc = (doc[0], items)
        entries.append((name, fields, entry, doc))
        for s in subs:
            sname = s[1][0][1].decode()
            sdoc = [v for k, v in docs[name][1] if k[1] == b"subcommands"][0]
            sdoc = [v for k, v in sdoc[1] if k[1].decode() == sname][0]
            entries.append((sname, list(s[1]), s, sdoc))
    lines = ["/* sentinel_command_data.c -- generated by scripts/gen_sentinel_commands.py from",
             " * redis-sentinel 7.0.15's COMMAND and COMMAND DOCS; do not edit.  One row per",
             " * command or subcommand Sentinel mode runs, in redis-sentinel's order, a",
             " * subcommand right after its command. */",
             '#include "server/sentinel_int.h"', "",
             "const SentinelCommandInfo sentinelCommandTable[] = {"]
    for name, fields, entry, doc in entries:
        cats = " ".join(c[1].decode()[1:] for c in fields[6][1])
        lines.append("    {%s, %s, %s, %s," % (c_string(name.encode()), fields[1][1].decode(),
                                                 c_string(cats.encode()), "1" if "|" in name else "0"))
        lines.append("     %s," % c_string(enc(entry, 2)))
        lines.append("     %s," % c_string(enc(entry, 3)))
        lines.append("     %s," % c_string(enc(doc, 2)))
        lines.append("     %s}," % c_string(enc(doc, 3)))
    lines += ["};", "", "const int sentinelCommandCount = sizeof(sentinelCommandTable) / sizeof(sentinelCommandTable[0]);", ""]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("wrote %s: %d rows" % (OUT, len(entries)))


if __name__ == "__main__":
    main()
