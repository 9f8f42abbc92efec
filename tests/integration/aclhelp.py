"""Helpers for comparing ACL state between Cairn and redis-server.

Redis 7.0.15 prints a user's command rules as "+@all"/"-@all", the
categories that fit best, then single commands in the order of its command
dictionary, which is a random hash order per process: the single commands
are compared as a set.  Commands Cairn does not have (streams, cluster,
MIGRATE...) are left out of the comparison.  ACL LOG entries are compared
with their times and the connection-specific client-info fields masked."""
import re

import redis

VOLATILE_CINFO = {"id", "addr", "laddr", "fd", "age", "idle", "qbuf", "qbuf-free", "argv-mem",
                  "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem", "events"}


def decode(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list):
        return [decode(x) for x in v]
    if isinstance(v, set):
        return sorted(decode(x) for x in v)
    if isinstance(v, Exception):
        return ("error", str(v))
    if isinstance(v, dict):
        return {decode(k): decode(x) for k, x in v.items()}
    return v


def run(r, *args):
    try:
        return decode(r.execute_command(*args))
    except redis.ResponseError as e:
        return ("error", str(e))
    except redis.ConnectionError as e:
        return ("closed", type(e).__name__)


def command_names(r):
    r.response_callbacks.clear()
    return set(decode(r.execute_command("COMMAND", "LIST")))


def norm_rule_tokens(tokens, missing):
    """Categories keep their order; single commands become a sorted set."""
    head, singles = [], []
    for t in tokens:
        if t[:1] in "+-" and not t.startswith(("+@", "-@")):
            name = t[1:].lower()
            base = name.split("|")[0]
            if name in missing or base in missing:
                continue
            singles.append(t)
        else:
            head.append(t)
    return head + sorted(singles)


def split_selectors(text):
    """'a b (c d) (e)' -> [['a','b'], ['c','d'], ['e']]."""
    depth = 0
    out = [[]]
    for tok in text.split(" "):
        if tok.startswith("(") and depth == 0:
            depth = 1
            tok = tok[1:]
            out.append([])
        closing = depth and tok.endswith(")")
        if closing:
            tok = tok[:-1]
        if tok:
            out[-1].append(tok)
        if closing:
            depth = 0
    return out


def norm_acl_line(line, missing):
    groups = split_selectors(line)
    return [norm_rule_tokens(g, missing) for g in groups]


def norm_getuser(reply, missing):
    if not isinstance(reply, list):
        return reply
    d = dict(zip(reply[0::2], reply[1::2]))
    if "commands" in d:
        d["commands"] = norm_rule_tokens(d["commands"].split(" "), missing)
    if "selectors" in d:
        sels = []
        for s in d["selectors"]:
            sd = dict(zip(s[0::2], s[1::2]))
            sd["commands"] = norm_rule_tokens(sd["commands"].split(" "), missing)
            sels.append(sd)
        d["selectors"] = sels
    return d


def mask_cinfo(text):
    out = []
    for field in text.split(" "):
        k, _, v = field.partition("=")
        out.append("%s=*" % k if k in VOLATILE_CINFO else field)
    return " ".join(out)


def mask_log(reply):
    if not isinstance(reply, list):
        return reply
    out = []
    for e in reply:
        d = dict(zip(e[0::2], e[1::2]))
        for k in ("age-seconds", "timestamp-created", "timestamp-last-updated"):
            if k in d:
                d[k] = "*"
        if "client-info" in d:
            d["client-info"] = mask_cinfo(d["client-info"])
        out.append(d)
    return out


def norm_reply(cmd, reply, missing):
    """The comparable form of a reply to an ACL command."""
    if not cmd:
        return reply
    name = cmd[0].upper() if isinstance(cmd[0], str) else cmd[0]
    sub = str(cmd[1]).upper() if len(cmd) > 1 else ""
    if name != "ACL":
        return reply
    if sub == "LIST" and isinstance(reply, list):
        return [norm_acl_line(x, missing) for x in reply]
    if sub == "GETUSER":
        return norm_getuser(reply, missing)
    if sub == "LOG":
        return mask_log(reply)
    if sub == "CAT" and len(cmd) > 2 and isinstance(reply, list):
        return sorted(x for x in reply if x not in missing and x.split("|")[0] not in missing)
    if sub == "GENPASS" and isinstance(reply, str):
        return (len(reply), bool(re.fullmatch(r"[0-9a-f]*", reply)))
    return reply
