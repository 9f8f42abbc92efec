#!/usr/bin/env python3
"""Writes src/core/command_data.c, Cairn's command table, from redis-server.

The generated file is checked in and is the source of truth for every
command's metadata (arity, flags, ACL categories, legacy key range, key
specs, tips, and the COMMAND DOCS fields: summary, since, group,
complexity, doc flags, deprecation, history, argument tree).  Cairn does
not need redis-server at run time; this script only bootstraps and
refreshes the data from the reference server's COMMAND INFO / COMMAND DOCS.

Which commands appear is Cairn's choice: by default the full names already
in src/core/command_data.c; --from-cairn PORT takes them from a running
Cairn's COMMAND LIST instead; --add / --remove edit the set.  A command in
the set that redis-server lacks must have an entry in EXTENSIONS below.

Usage:
  python3 scripts/gen_commands.py [--redis-port P] [--from-cairn PORT]
                                  [--add NAME ...] [--remove NAME ...] [--output PATH]
Without --redis-port a private redis-server is started on a free port.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "core", "command_data.c")

# Orders in which redis-server 7.0.15 lists each kind of flag; the
# generator checks that every reply it reads follows them, since the C
# side prints flags in this order.
CMD_FLAGS = ["write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
             "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
             "may_replicate", "no_mandatory_keys", "protected", "no_async_loading", "no_multi", "movablekeys",
             "allow_busy"]
ACL_CATS = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
            "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
            "connection", "transaction", "scripting"]
KEY_FLAGS = ["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete",
             "variable_flags"]
DOC_FLAGS = ["deprecated", "syscmd"]
ARG_FLAGS = ["optional", "multiple", "multiple_token"]
ARG_TYPES = ["string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof", "block"]
DOC_FIELDS = ["summary", "since", "group", "complexity", "doc_flags", "deprecated_since", "replaced_by",
              "history", "arguments", "subcommands"]
ARG_FIELDS = ["name", "type", "key_spec_index", "token", "summary", "since", "flags", "deprecated_since",
              "arguments"]

# Flags Redis 7.0.15 keeps but COMMAND INFO hides (may_replicate: CLIENT
# PAUSE WRITE holds the command, MONITOR shows it; protected: refused unless
# enabled by configuration).  Found by probing redis-server (a command that
# neither writes nor is shown as such but waits under CLIENT PAUSE WRITE).
HIDDEN_FLAGS = {
    "eval": ["may_replicate"], "evalsha": ["may_replicate"], "fcall": ["may_replicate"],
    "publish": ["may_replicate"], "spublish": ["may_replicate"], "pfcount": ["may_replicate"],
    "debug": ["protected"], "module|load": ["protected"], "module|loadex": ["protected"],
    "module|unload": ["protected"],
}

def _spec1(flags):
    """A key spec for the key at argv[1] alone, in COMMAND INFO's RESP3 shape."""
    return ("map", [("flags", flags),
                    ("begin_search", ("map", [("type", "index"), ("spec", ("map", [("index", 1)]))])),
                    ("find_keys", ("map", [("type", "range"),
                                           ("spec", ("map", [("lastkey", 0), ("keystep", 1), ("limit", 0)]))]))])


# Commands Cairn has that redis-server 7.0.15 lacks, described as the
# Redis version that added them describes them.
EXTENSIONS = {
    "client|setinfo": {
        "info": ["client|setinfo", 4, ["noscript", "loading", "stale"], 0, 0, 0,
                 ["slow", "connection"], [], [], []],
        "docs": {"summary": "Set client or connection specific info", "since": "7.2.0", "group": "connection",
                 "complexity": "O(1)",
                 "arguments": [{"name": "attr", "type": "oneof", "arguments": [
                     {"name": "libname", "type": "string", "token": "LIB-NAME"},
                     {"name": "libver", "type": "string", "token": "LIB-VER"}]}]},
    },
    # Cairn's own commands (issue 39); "since" is Cairn's version.
    "incrbybound": {
        "info": ["incrbybound", 5, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["write", "string", "fast"], [], [_spec1(["RW", "access", "update"])], []],
        "docs": {"summary": "Increment the integer value of a key by the given amount, only if the result "
                            "stays within [min, max]", "since": "0.1.0", "group": "string",
                 "complexity": "O(1)",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "increment", "type": "integer"},
                               {"name": "min", "type": "integer"},
                               {"name": "max", "type": "integer"}]},
    },
    "incrbyfloatbound": {
        "info": ["incrbyfloatbound", 5, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["write", "string", "fast"], [], [_spec1(["RW", "access", "update"])], []],
        "docs": {"summary": "Increment the float value of a key by the given amount, only if the result "
                            "stays within [min, max]", "since": "0.1.0", "group": "string",
                 "complexity": "O(1)",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "increment", "type": "double"},
                               {"name": "min", "type": "double"},
                               {"name": "max", "type": "double"}]},
    },
    "ztrim": {
        "info": ["ztrim", -4, ["write"], 1, 1, 1,
                 ["write", "sortedset", "slow"], [], [_spec1(["RW", "delete"])], []],
        "docs": {"summary": "Remove the members of a sorted set beyond a count or a score bound",
                 "since": "0.1.0", "group": "sorted-set",
                 "complexity": "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                               "number of elements removed by the operation.",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "bound", "type": "oneof", "arguments": [
                                   {"name": "maxlen", "type": "block", "arguments": [
                                       {"name": "count", "type": "integer", "token": "MAXLEN"},
                                       {"name": "evict", "type": "oneof", "flags": ["optional"], "arguments": [
                                           {"name": "lowest", "type": "pure-token", "token": "LOWEST"},
                                           {"name": "highest", "type": "pure-token", "token": "HIGHEST"}]}]},
                                   {"name": "minscore", "type": "double", "token": "MINSCORE"},
                                   {"name": "maxscore", "type": "double", "token": "MAXSCORE"}]}]},
    },
    "zpopdue": {
        "info": ["zpopdue", -2, ["write", "fast"], 1, 1, 1,
                 ["write", "sortedset", "fast"], [], [_spec1(["RW", "access", "delete"])], []],
        "docs": {"summary": "Remove and return the members of a sorted set whose score, a unix time in "
                            "milliseconds, is at or before the server's time, lowest first",
                 "since": "0.1.0", "group": "sorted-set",
                 "complexity": "O(log(N)*M) with N being the number of elements in the sorted set, and M being "
                               "the number of elements popped.",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "count", "type": "integer", "token": "COUNT", "flags": ["optional"]}]},
    },
    # The key spec over-reaches with a COUNT tail (it is INCOMPLETE): the
    # keys come from bzpopdueFinder in src/core/command.c.
    "bzpopdue": {
        "info": ["bzpopdue", -3, ["write", "blocking", "fast", "movablekeys"], 1, -2, 1,
                 ["write", "sortedset", "fast", "blocking"], [],
                 [("map", [("flags", ["RW", "access", "delete", "incomplete"]),
                           ("begin_search", ("map", [("type", "index"), ("spec", ("map", [("index", 1)]))])),
                           ("find_keys", ("map", [("type", "range"),
                                                  ("spec", ("map", [("lastkey", -2), ("keystep", 1),
                                                                    ("limit", 0)]))]))])], []],
        "docs": {"summary": "Remove and return the due members of the first of one or more sorted sets that "
                            "has one, or block until one falls due",
                 "since": "0.1.0", "group": "sorted-set",
                 "complexity": "O(log(N)*M) with N being the number of elements in the sorted set, and M being "
                               "the number of elements popped.",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0, "flags": ["multiple"]},
                               {"name": "timeout", "type": "double"},
                               {"name": "count", "type": "integer", "token": "COUNT", "flags": ["optional"]}]},
    },
    # The redis-cell module's command (its arity is a module's, -1: the
    # command itself answers a wrong argument count, with the module's usage).
    "cl.throttle": {
        "info": ["cl.throttle", -1, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["write", "string", "fast"], [], [_spec1(["RW", "access", "update"])], []],
        "docs": {"summary": "Apply a quantity to a GCRA rate limiter (the redis-cell module's command)",
                 "since": "0.1.0", "group": "string", "complexity": "O(1)",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "max_burst", "type": "integer"},
                               {"name": "count_per_period", "type": "integer"},
                               {"name": "period", "type": "integer"},
                               {"name": "quantity", "type": "integer", "flags": ["optional"]}]},
    },
    "rl.log": {
        "info": ["rl.log", -4, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["write", "sortedset", "fast"], [], [_spec1(["RW", "access", "update"])], []],
        "docs": {"summary": "Log requests in a sliding-window rate limiter, if the window allows them",
                 "since": "0.1.0", "group": "sorted-set",
                 "complexity": "O(log(N)+M) with N being the number of requests in the window and M the "
                               "number of requests logged or leaving the window.",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "window_ms", "type": "integer"},
                               {"name": "limit", "type": "integer"},
                               {"name": "quantity", "type": "integer", "flags": ["optional"]}]},
    },
    # --- Issue 38: commands from newer Redis and Valkey versions, as those
    # versions describe them (one block, to ease merging). ---
    "delex": {
        "info": ["delex", -2, ["write", "fast"], 1, 1, 1,
                 ["write", "string", "fast"], [], [_spec1(["RW", "delete", "variable_flags"])], []],
        "docs": {"summary": "Conditionally removes the specified key based on value or digest comparison.",
                 "since": "8.4.0", "group": "string",
                 "complexity": "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "condition", "type": "oneof", "flags": ["optional"], "arguments": [
                                   {"name": "ifeq-value", "type": "string", "token": "IFEQ"},
                                   {"name": "ifne-value", "type": "string", "token": "IFNE"},
                                   {"name": "ifdeq-digest", "type": "string", "token": "IFDEQ"},
                                   {"name": "ifdne-digest", "type": "string", "token": "IFDNE"}]}]},
    },
    "delifeq": {
        "info": ["delifeq", 3, ["write", "fast"], 1, 1, 1,
                 ["write", "string", "fast"], [], [_spec1(["RM", "delete"])], []],
        "docs": {"summary": "Delete key if value matches string.", "since": "9.0.0", "group": "string",
                 "complexity": "O(1)",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "value", "type": "string"}]},
    },
    "digest": {
        "info": ["digest", 2, ["readonly", "fast"], 1, 1, 1,
                 ["read", "string", "fast"], [], [_spec1(["RO", "access"])], []],
        "docs": {"summary": "Returns the XXH3 hash of a string value.", "since": "8.4.0", "group": "string",
                 "complexity": "O(N) where N is the length of the string value.",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0}]},
    },
    "msetex": {
        "info": ["msetex", -4, ["write", "denyoom", "movablekeys"], 0, 0, 0,
                 ["write", "string", "slow"], ["request_policy:multi_shard", "response_policy:all_succeeded"],
                 [("map", [("flags", ["OW", "update"]),
                           ("begin_search", ("map", [("type", "index"), ("spec", ("map", [("index", 1)]))])),
                           ("find_keys", ("map", [("type", "keynum"),
                                                  ("spec", ("map", [("keynumidx", 0), ("firstkey", 1),
                                                                    ("keystep", 2)]))]))])], []],
        "docs": {"summary": "Atomically sets multiple string keys with a shared expiration in a single operation. "
                            "Supports flexible argument parsing where condition and expiration flags can appear "
                            "in any order.",
                 "since": "8.4.0", "group": "string", "complexity": "O(N) where N is the number of keys to set.",
                 "arguments": [{"name": "numkeys", "type": "integer"},
                               {"name": "data", "type": "block", "flags": ["multiple"], "arguments": [
                                   {"name": "key", "type": "key", "key_spec_index": 0},
                                   {"name": "value", "type": "string"}]},
                               {"name": "condition", "type": "oneof", "flags": ["optional"], "arguments": [
                                   {"name": "nx", "type": "pure-token", "token": "NX"},
                                   {"name": "xx", "type": "pure-token", "token": "XX"}]},
                               {"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": [
                                   {"name": "seconds", "type": "integer", "token": "EX"},
                                   {"name": "milliseconds", "type": "integer", "token": "PX"},
                                   {"name": "unix-time-seconds", "type": "unix-time", "token": "EXAT"},
                                   {"name": "unix-time-milliseconds", "type": "unix-time", "token": "PXAT"},
                                   {"name": "keepttl", "type": "pure-token", "token": "KEEPTTL"}]}]},
    },
    "waitaof": {
        "info": ["waitaof", 4, ["blocking"], 0, 0, 0,
                 ["slow", "blocking", "connection"], ["request_policy:all_shards", "response_policy:agg_min"],
                 [], []],
        "docs": {"summary": "Blocks until all of the preceding write commands sent by the connection are written "
                            "to the append-only file of the master and/or replicas.",
                 "since": "7.2.0", "group": "generic", "complexity": "O(1)",
                 "arguments": [{"name": "numlocal", "type": "integer"},
                               {"name": "numreplicas", "type": "integer"},
                               {"name": "timeout", "type": "integer"}]},
    },
    "client|no-touch": {
        "info": ["client|no-touch", 3, ["noscript", "loading", "stale"], 0, 0, 0,
                 ["slow", "connection"], [], [], []],
        "docs": {"summary": "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
                 "since": "7.2.0", "group": "connection", "complexity": "O(1)",
                 "arguments": [{"name": "enabled", "type": "oneof", "arguments": [
                     {"name": "on", "type": "pure-token", "token": "ON"},
                     {"name": "off", "type": "pure-token", "token": "OFF"}]}]},
    },
    # --- end of issue 38's block ---
    # Member TTLs of sets and sorted sets (KeyDB's commands).  TTL / PTTL
    # key member keep Redis's rows (arity 2); dispatch admits the member.
    "expiremember": {
        "info": ["expiremember", -4, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["keyspace", "write", "fast"], [], [_spec1(["RW", "update"])], []],
        "docs": {"summary": "Set a timeout on a member of a set or sorted set (KeyDB's command)",
                 "since": "0.1.0", "group": "generic", "complexity": "O(log(N))",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "member", "type": "string"},
                               {"name": "delay", "type": "integer"},
                               {"name": "unit", "type": "oneof", "flags": ["optional"], "arguments": [
                                   {"name": "s", "type": "pure-token", "token": "S"},
                                   {"name": "ms", "type": "pure-token", "token": "MS"}]}]},
    },
    "expirememberat": {
        "info": ["expirememberat", 4, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["keyspace", "write", "fast"], [], [_spec1(["RW", "update"])], []],
        "docs": {"summary": "Set the expiration of a member of a set or sorted set as a UNIX timestamp "
                            "(KeyDB's command)",
                 "since": "0.1.0", "group": "generic", "complexity": "O(log(N))",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "member", "type": "string"},
                               {"name": "unix-time-seconds", "type": "unix-time"}]},
    },
    "pexpirememberat": {
        "info": ["pexpirememberat", 4, ["write", "denyoom", "fast"], 1, 1, 1,
                 ["keyspace", "write", "fast"], [], [_spec1(["RW", "update"])], []],
        "docs": {"summary": "Set the expiration of a member of a set or sorted set as a UNIX timestamp in "
                            "milliseconds (KeyDB's command)",
                 "since": "0.1.0", "group": "generic", "complexity": "O(log(N))",
                 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0},
                               {"name": "member", "type": "string"},
                               {"name": "unix-time-milliseconds", "type": "unix-time"}]},
    },
}


# Arguments Cairn adds to a Redis command (its own options), inserted into
# redis-server's COMMAND DOCS before the argument named "before".
DOC_ADDITIONS = {
    "zadd": {"before": "score_member", "argument": {
        "name": "maxlen", "type": "block", "since": "0.1.0", "flags": ["optional"], "arguments": [
            {"name": "count", "type": "integer", "token": "MAXLEN"},
            {"name": "evict", "type": "oneof", "flags": ["optional"], "arguments": [
                {"name": "lowest", "type": "pure-token", "token": "LOWEST"},
                {"name": "highest", "type": "pure-token", "token": "HIGHEST"}]}]}},
}


def add_arguments(name, docs):
    """docs (normalized) with Cairn's own arguments of name added."""
    extra = DOC_ADDITIONS.get(name)
    if not extra:
        return docs
    args = docs["arguments"]
    at = [a["name"] for a in args].index(extra["before"])
    docs["arguments"] = args[:at] + normalize_args([extra["argument"]], name) + args[at:]
    return docs


def _patch_set_docs(d):
    """SET gains Redis 8.4's IF* conditions in its condition oneof."""
    d["history"] = list(d["history"]) + [["8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."]]
    for a in d["arguments"]:
        if a["name"] == "condition":
            a["arguments"] = list(a["arguments"]) + [
                {"name": "ifeq-value", "type": "string", "token": "IFEQ", "since": "8.4.0"},
                {"name": "ifne-value", "type": "string", "token": "IFNE", "since": "8.4.0"},
                {"name": "ifdeq-digest", "type": "string", "token": "IFDEQ", "since": "8.4.0"},
                {"name": "ifdne-digest", "type": "string", "token": "IFDNE", "since": "8.4.0"}]
    return d


def _patch_client_kill_docs(d):
    """CLIENT KILL's new-format filters gain Redis 7.4's MAXAGE."""
    d["history"] = list(d["history"]) + [["7.4.0", "`MAXAGE` option."]]
    for a in d["arguments"]:
        for b in a.get("arguments", []):
            if b["name"] == "new-format":
                b["arguments"] = list(b["arguments"]) + [
                    {"name": "maxage", "type": "integer", "token": "MAXAGE", "since": "7.4.0",
                     "flags": ["optional"]}]
    return d


# COMMAND DOCS of commands redis-server 7.0.15 has, as the newer version
# that extended them describes them (applied to its normalized docs).
DOC_PATCHES = {"set": _patch_set_docs, "client|kill": _patch_client_kill_docs}


# Hash-field expiry (issue 38): the commands as Redis 7.4 (HEXPIRE family,
# HTTL family, HPERSIST) and Redis 8.0 (HGETEX, HSETEX, HGETDEL) describe
# them.
def _hfe_fields_arg():
    return {"name": "fields", "type": "block", "token": "FIELDS", "arguments": [
        {"name": "numfields", "type": "integer"},
        {"name": "field", "type": "string", "flags": ["multiple"]}]}


def _hfe_entry(name, arity, flags, acl, keyflags, summary, since, complexity, args):
    return {"info": [name, arity, flags, 1, 1, 1, acl, [], [_spec1(keyflags)], []],
            "docs": {"summary": summary, "since": since, "group": "hash", "complexity": complexity,
                     "arguments": [{"name": "key", "type": "key", "key_spec_index": 0}] + args}}


_HFE_N = "O(N) where N is the number of specified fields"
_HFE_COND = {"name": "condition", "type": "oneof", "flags": ["optional"], "arguments": [
    {"name": t.lower(), "type": "pure-token", "token": t} for t in ("NX", "XX", "GT", "LT")]}
for _name, _arg, _type, _what in (("hexpire", "seconds", "integer", "relative time to expire (seconds)"),
                                  ("hpexpire", "milliseconds", "integer", "relative time to expire (milliseconds)"),
                                  ("hexpireat", "unix-time-seconds", "unix-time",
                                   "an absolute Unix timestamp (seconds)"),
                                  ("hpexpireat", "unix-time-milliseconds", "unix-time",
                                   "an absolute Unix timestamp (milliseconds)")):
    EXTENSIONS[_name] = _hfe_entry(_name, -6, ["write", "fast"], ["write", "hash", "fast"],
                                   ["RW", "update"], "Set expiry for hash field using " + _what, "7.4.0", _HFE_N,
                                   [{"name": _arg, "type": _type}, _HFE_COND, _hfe_fields_arg()])
for _name, _summary in (("httl", "Returns the TTL in seconds of a hash field."),
                        ("hpttl", "Returns the TTL in milliseconds of a hash field."),
                        ("hexpiretime", "Returns the expiration time of a hash field as a Unix timestamp, in seconds."),
                        ("hpexpiretime", "Returns the expiration time of a hash field as a Unix timestamp, in msec.")):
    EXTENSIONS[_name] = _hfe_entry(_name, -5, ["readonly", "fast"], ["read", "hash", "fast"], ["RO", "access"],
                                   _summary, "7.4.0", _HFE_N, [_hfe_fields_arg()])
    if _name in ("httl", "hpttl"):  # Redis 8.0 marks the relative ones (checked against it)
        EXTENSIONS[_name]["info"][7] = ["nondeterministic_output"]
EXTENSIONS["hpersist"] = _hfe_entry("hpersist", -5, ["write", "fast"], ["write", "hash", "fast"], ["RW", "update"],
                                    "Removes the expiration time for each specified field", "7.4.0", _HFE_N,
                                    [_hfe_fields_arg()])
_HFE_TIMES = [{"name": "seconds", "type": "integer", "token": "EX"},
              {"name": "milliseconds", "type": "integer", "token": "PX"},
              {"name": "unix-time-seconds", "type": "unix-time", "token": "EXAT"},
              {"name": "unix-time-milliseconds", "type": "unix-time", "token": "PXAT"}]
EXTENSIONS["hgetex"] = _hfe_entry(
    "hgetex", -5, ["write", "fast"], ["write", "hash", "fast"], ["RW", "access", "update"],
    "Get the value of one or more fields of a given hash key, and optionally set their expiration.", "8.0.0",
    _HFE_N, [{"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": _HFE_TIMES + [
        {"name": "persist", "type": "pure-token", "token": "PERSIST"}]}, _hfe_fields_arg()])
_hgetex_spec = EXTENSIONS["hgetex"]["info"][8][0]
EXTENSIONS["hgetex"]["info"][8][0] = ("map", [("notes", "RW and UPDATE because it changes the TTL")] + _hgetex_spec[1])
EXTENSIONS["hsetex"] = _hfe_entry(
    "hsetex", -6, ["write", "denyoom", "fast"], ["write", "hash", "fast"], ["RW", "update"],
    "Set the value of one or more fields of a given hash key, and optionally set their expiration.", "8.0.0",
    "O(N) where N is the number of fields being set.",
    [{"name": "condition", "type": "oneof", "flags": ["optional"], "arguments": [
        {"name": "fnx", "type": "pure-token", "token": "FNX"}, {"name": "fxx", "type": "pure-token", "token": "FXX"}]},
     {"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": _HFE_TIMES + [
         {"name": "keepttl", "type": "pure-token", "token": "KEEPTTL"}]},
     {"name": "fields", "type": "block", "token": "FIELDS", "arguments": [
         {"name": "numfields", "type": "integer"},
         {"name": "data", "type": "block", "flags": ["multiple"], "arguments": [
             {"name": "field", "type": "string"}, {"name": "value", "type": "string"}]}]}])
EXTENSIONS["hgetdel"] = _hfe_entry(
    "hgetdel", -5, ["write", "fast"], ["write", "hash", "fast"], ["RW", "access", "delete"],
    "Returns the value of a field and deletes it from the hash.", "8.0.0", _HFE_N, [_hfe_fields_arg()])


class Conn:
    """A minimal RESP3 client: maps come back as lists of pairs tagged
    ('map', ...), sets as ('set', ...), statuses as str, bulks as str."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")
        self.call("HELLO", "3")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t in (b"+", b"$"):
            if t == b"+":
                return rest.decode()
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2].decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"_":
            return None
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        if t == b"~":
            return ("set", [self.read() for _ in range(int(rest))])
        if t == b"%":
            return ("map", [(self.read(), self.read()) for _ in range(int(rest))])
        raise RuntimeError("unexpected reply %r" % line)


def items(v):
    assert isinstance(v, tuple), v
    return v[1]


def check_order(seen, order, what):
    idx = [order.index(x) for x in seen]
    if idx != sorted(idx):
        sys.exit("%s not in the expected order: %r" % (what, seen))


def c_str(s):
    if s is None:
        return "NULL"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def ident(fullname):
    return re.sub(r"[^a-z0-9]", "_", fullname.lower())


def mask(names, order, prefix):
    for n in names:
        if n not in order:
            sys.exit("unknown %s flag %r" % (prefix, n))
    check_order(names, order, prefix)
    if not names:
        return "0"
    rename = {"CMD_MOVABLEKEYS": "CMD_MOVABLE_KEYS"}
    out = [prefix + n.upper().replace("-", "_") for n in names]
    return " | ".join(rename.get(n, n) for n in out)


def normalize_info(info):
    """COMMAND INFO entry -> dict (RESP3 types stripped)."""
    name, arity, flags, first, last, step, acl, tips, specs, subs = info
    flags = items(flags) if isinstance(flags, tuple) else flags
    acl = [a.lstrip("@") for a in (items(acl) if isinstance(acl, tuple) else acl)]
    tips = items(tips) if isinstance(tips, tuple) else tips
    specs = items(specs) if isinstance(specs, tuple) else specs
    out_specs = []
    for spec in specs:
        d = dict(items(spec)) if isinstance(spec, tuple) else spec
        fl = items(d["flags"]) if isinstance(d["flags"], tuple) else d["flags"]
        check_order(fl, KEY_FLAGS, "key spec flags of " + name)
        bs, fk = dict(items(d["begin_search"])), dict(items(d["find_keys"]))
        out_specs.append({"notes": d.get("notes"), "flags": fl,
                          "bs": (bs["type"], dict(items(bs["spec"]))),
                          "fk": (fk["type"], dict(items(fk["spec"])))})
        keys = [k for k, _ in items(spec)]
        want = (["notes"] if "notes" in d else []) + ["flags", "begin_search", "find_keys"]
        if keys != want:
            sys.exit("key spec fields of %s in unexpected order: %r" % (name, keys))
    hidden = HIDDEN_FLAGS.get(name, [])
    flags = [f for f in CMD_FLAGS if f in flags or f in hidden]
    return {"name": name, "arity": arity, "flags": flags, "first": first, "last": last, "step": step,
            "acl": acl, "tips": tips, "specs": out_specs}


def normalize_args(args, where):
    out = []
    for a in args:
        d = dict(items(a)) if isinstance(a, tuple) else dict(a)
        keys = [k for k, _ in items(a)] if isinstance(a, tuple) else list(a.keys())
        for k in keys:
            if k not in ARG_FIELDS:
                sys.exit("unknown argument field %r in %s" % (k, where))
        check_order(keys, ARG_FIELDS, "argument fields of " + where)
        if "flags" in d:
            d["flags"] = items(d["flags"]) if isinstance(d["flags"], tuple) else d["flags"]
            check_order(d["flags"], ARG_FLAGS, "argument flags of " + where)
        if d["type"] not in ARG_TYPES:
            sys.exit("unknown argument type %r in %s" % (d["type"], where))
        if "arguments" in d:
            d["arguments"] = normalize_args(d["arguments"], where)
        out.append(d)
    return out


def normalize_docs(name, doc):
    d = dict(items(doc)) if isinstance(doc, tuple) else dict(doc)
    keys = [k for k, _ in items(doc)] if isinstance(doc, tuple) else list(doc.keys())
    for k in keys:
        if k not in DOC_FIELDS:
            sys.exit("unknown doc field %r in %s" % (k, name))
    check_order(keys, DOC_FIELDS, "doc fields of " + name)
    if "doc_flags" in d:
        d["doc_flags"] = items(d["doc_flags"]) if isinstance(d["doc_flags"], tuple) else d["doc_flags"]
        check_order(d["doc_flags"], DOC_FLAGS, "doc flags of " + name)
    if isinstance(d.get("history"), tuple):
        d["history"] = items(d["history"])
    if isinstance(d.get("history"), tuple):
        d["history"] = items(d["history"])
    d["arguments"] = normalize_args(d.get("arguments", []), name)
    d.pop("subcommands", None)
    return d


class Emitter:
    def __init__(self):
        self.lines = []

    def args(self, fullname, path, args):
        """Emits the arrays for an argument list (children first); returns
        the C name of the array."""
        names = []
        for i, a in enumerate(args):
            if a.get("arguments"):
                names.append(self.args(fullname, path + "_%d" % i, a["arguments"]))
            else:
                names.append(None)
        cname = "A_%s%s" % (ident(fullname), path)
        self.lines.append("static const CommandArg %s[] = {" % cname)
        for a, sub in zip(args, names):
            fields = [".name = %s" % c_str(a["name"]),
                      ".type = ARG_%s" % a["type"].upper().replace("-", "_")]
            if "key_spec_index" in a:
                fields.append(".keySpecIndex = %d" % a["key_spec_index"])
            else:
                fields.append(".keySpecIndex = -1")
            for key, field in (("token", "token"), ("summary", "summary"), ("since", "since"),
                               ("deprecated_since", "deprecatedSince")):
                if key in a:
                    fields.append(".%s = %s" % (field, c_str(a[key])))
            if a.get("flags"):
                fields.append(".flags = %s" % mask(a["flags"], ARG_FLAGS, "ARGF_"))
            if sub:
                fields.append(".subargs = %s, .subargCount = %d" % (sub, len(a["arguments"])))
            self.lines.append("    {%s}," % ", ".join(fields))
        self.lines.append("};")
        return cname

    def specs(self, fullname, specs):
        cname = "K_%s" % ident(fullname)
        self.lines.append("static const KeySpec %s[] = {" % cname)
        for s in specs:
            fields = []
            if s["notes"] is not None:
                fields.append(".notes = %s" % c_str(s["notes"]))
            fields.append(".flags = %s" % mask(s["flags"], KEY_FLAGS, "KS_"))
            bt, bs = s["bs"]
            if bt == "index":
                fields.append(".bsType = KSB_INDEX, .bsIndex = %d" % bs["index"])
            elif bt == "keyword":
                fields.append(".bsType = KSB_KEYWORD, .bsKeyword = %s, .bsIndex = %d"
                              % (c_str(bs["keyword"]), bs["startfrom"]))
            else:
                assert bt == "unknown" and not bs, s
                fields.append(".bsType = KSB_UNKNOWN")
            ft, fk = s["fk"]
            if ft == "range":
                assert list(fk) == ["lastkey", "keystep", "limit"], fk
                fields.append(".fkType = KSF_RANGE, .fk = {%d, %d, %d}" % (fk["lastkey"], fk["keystep"], fk["limit"]))
            elif ft == "keynum":
                assert list(fk) == ["keynumidx", "firstkey", "keystep"], fk
                fields.append(".fkType = KSF_KEYNUM, .fk = {%d, %d, %d}"
                              % (fk["keynumidx"], fk["firstkey"], fk["keystep"]))
            else:
                assert ft == "unknown" and not fk, s
                fields.append(".fkType = KSF_UNKNOWN")
            self.lines.append("    {%s}," % ", ".join(fields))
        self.lines.append("};")
        return cname

    def command(self, info, docs):
        fullname = info["name"]
        check_order(info["flags"], CMD_FLAGS, "flags of " + fullname)
        check_order(info["acl"], ACL_CATS, "ACL categories of " + fullname)
        out = {"specs": None, "args": None, "hist": None, "tips": None}
        if info["specs"]:
            out["specs"] = self.specs(fullname, info["specs"])
        if docs["arguments"]:
            out["args"] = self.args(fullname, "", docs["arguments"])
        if docs.get("history"):
            cname = "H_%s" % ident(fullname)
            self.lines.append("static const CommandHistory %s[] = {" % cname)
            for version, text in docs["history"]:
                self.lines.append("    {%s, %s}," % (c_str(version), c_str(text)))
            self.lines.append("};")
            out["hist"] = cname
        if info["tips"]:
            cname = "T_%s" % ident(fullname)
            self.lines.append("static const char *const %s[] = {%s, NULL};"
                              % (cname, ", ".join(c_str(t) for t in info["tips"])))
            out["tips"] = cname
        return out

    def row(self, info, docs, refs):
        f = [".fullname = %s" % c_str(info["name"]), ".arity = %d" % info["arity"],
             ".flags = %s" % mask(info["flags"], CMD_FLAGS, "CMD_"),
             ".acl = %s" % mask(info["acl"], ACL_CATS, "ACL_"),
             ".firstKey = %d, .lastKey = %d, .keyStep = %d" % (info["first"], info["last"], info["step"])]
        if refs["tips"]:
            f.append(".tips = %s" % refs["tips"])
        if refs["specs"]:
            f.append(".keySpecs = %s, .keySpecCount = %d" % (refs["specs"], len(info["specs"])))
        for key, field in (("summary", "summary"), ("since", "since"), ("group", "group"),
                           ("complexity", "complexity"), ("deprecated_since", "deprecatedSince"),
                           ("replaced_by", "replacedBy")):
            if key in docs:
                f.append(".%s = %s" % (field, c_str(docs[key])))
        if docs.get("doc_flags"):
            f.append(".docFlags = %s" % mask(docs["doc_flags"], DOC_FLAGS, "DOC_"))
        if refs["hist"]:
            f.append(".history = %s, .historyCount = %d" % (refs["hist"], len(docs["history"])))
        if refs["args"]:
            f.append(".args = %s, .argCount = %d" % (refs["args"], len(docs["arguments"])))
        return "    {" + ",\n     ".join(f) + "},"


HEADER = """\
/* command_data.c -- Cairn's command table: one row per command and
 * subcommand, sorted by full name ("config|get" for a subcommand).
 *
 * GENERATED by scripts/gen_commands.py from redis-server 7.0.15's COMMAND
 * INFO and COMMAND DOCS for exactly the commands Cairn implements, then
 * checked in: this file is the source of truth (Cairn never asks a
 * redis-server at run time).  Edit it by re-running the script (see its
 * usage) rather than by hand.
 *
 * Each row holds what COMMAND, COMMAND INFO and COMMAND DOCS show (flags
 * and ACL categories exactly as Redis lists them, `movablekeys` included)
 * and the key specs that COMMAND GETKEYS, ACL key checks and cluster
 * routing walk (see commandKeys in command.c).  The handlers are bound by
 * name from the family files; command.c refuses to start when a handler
 * has no row or a row has no handler. */
#include "core/command.h"
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis-port", type=int)
    ap.add_argument("--from-cairn", type=int, metavar="PORT")
    ap.add_argument("--add", nargs="*", default=[])
    ap.add_argument("--remove", nargs="*", default=[])
    ap.add_argument("--output", default=OUT, help="where to write (default: the checked-in file)")
    opts = ap.parse_args()

    if opts.from_cairn:
        names = set(n.lower() for n in Conn(opts.from_cairn).call("COMMAND", "LIST"))
    else:
        with open(OUT) as f:
            names = set(re.findall(r'\.fullname = "([^"]+)"', f.read()))
    names |= set(n.lower() for n in opts.add)
    names -= set(n.lower() for n in opts.remove)
    for n in list(names):
        if "|" in n:
            names.add(n.split("|")[0])

    proc = None
    port = opts.redis_port
    if not port:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                                stdout=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.05)
    try:
        conn = Conn(port)
        version = dict(items(conn.call("HELLO", "3")))["version"]
        if version != "7.0.15":
            sys.exit("redis-server is %s, expected 7.0.15" % version)
        rows = {}
        for name in sorted(names):
            if name in EXTENSIONS:
                rows[name] = (normalize_info(EXTENSIONS[name]["info"]),
                              normalize_docs(name, EXTENSIONS[name]["docs"]))
                continue
            info = conn.call("COMMAND", "INFO", name)[0]
            if info is None:
                sys.exit("redis-server has no command %r: add it to EXTENSIONS" % name)
            docs = dict(items(conn.call("COMMAND", "DOCS", name)))
            rows[name] = (normalize_info(info), add_arguments(name, normalize_docs(name, docs[name])))
            if name in DOC_PATCHES:
                rows[name] = (rows[name][0], DOC_PATCHES[name](rows[name][1]))
    finally:
        if proc:
            proc.terminate()
            proc.wait()

    em = Emitter()
    refs = {n: em.command(*rows[n]) for n in sorted(rows)}
    table = [em.row(rows[n][0], rows[n][1], refs[n]) for n in sorted(rows)]
    with open(opts.output, "w") as f:
        f.write(HEADER)
        f.write("\n/* clang-format off */\n")
        f.write("\n".join(em.lines) + "\n\n")
        f.write("const CommandSpec commandSpecs[] = {\n")
        f.write("\n".join(table) + "\n};\n")
        f.write("const size_t commandSpecCount = sizeof(commandSpecs) / sizeof(commandSpecs[0]);\n")
    print("wrote %s: %d rows" % (opts.output, len(rows)))


if __name__ == "__main__":
    main()
