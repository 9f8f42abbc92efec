/* debug.c -- DEBUG: SLEEP, SET-ACTIVE-EXPIRE, OBJECT, LOG, POPULATE, DIGEST,
 * DIGEST-VALUE, RELOAD, SET-DISABLE-DENY-SCRIPTS, CHANGE-REPL-ID, the list
 * layouts (QUICKLIST-PACKED-THRESHOLD, LISTPACK, QUICKLIST), HELP;
 * REPLYBUFFER (the reply buffer's resizing) and CLIENT-EVICTION.
 *
 * DEBUG is refused unless `enable-debug-command` is "yes", or "local" and
 * the client is on the unix socket or a loopback address -- with Redis's
 * error text.  Like Redis, DEBUG is one command whose first argument picks
 * the action; an unknown action or a wrong argument count gets Redis's
 * "unknown subcommand or wrong number of arguments" error.
 *
 * DEBUG OBJECT's serializedlength is the value's RDB size as the writer
 * produces it (rdbcompression applies), as Redis reports.  DIGEST and
 * DIGEST-VALUE compute Redis's digest (persist/digest.c); RELOAD saves and
 * loads the dataset back through the persistence layer. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/client.h"
#include "core/command.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "ds/util.h"
#include "types/list.h"
#include "persist/aof.h"
#include "persist/digest.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "script/script.h"
#include "server/maxmemory.h"
#include "repl/repl.h"

#define LRU_CLOCK_MAX ((1u << 24) - 1)

static int isLocalClient(const Client *c) {
    if (c->flags & (CLIENT_UNIX_SOCKET | CLIENT_FAKE)) return 1;
    return strncmp(c->addr, "127.", 4) == 0 || strncmp(c->addr, "::1:", 4) == 0 ||
           strncmp(c->addr, "[::1]:", 6) == 0;
}

static int debugAllowed(const Client *c) {
    switch (server.cfg.enableDebugCommand) {
    case DEBUGCMD_YES: return 1;
    case DEBUGCMD_LOCAL: return isLocalClient(c);
    default: return 0;
    }
}

static void debugObject(Client *c) {
    /* A raw find, as Redis does: no expiry, no stats, no LRU touch. */
    kvobj *o = dbFind(c->db, c->argv[2], sdsLen(c->argv[2]));
    if (o) o = dbVerifyOrDrop(c->db, o); /* a value loaded unverified */
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return;
    }
    int enc = kvReportedEncoding(o);
    size_t serialized = rdbSerializedLength(o);
    /* Small integers are shared objects in Redis, shown with its shared
     * refcount. */
    int refcount = (enc == OBJ_ENC_INT && kvInt(o) >= 0 && kvInt(o) < OBJ_SHARED_INTEGERS) ? INT_MAX : 1;
    unsigned lru = kvLru(o);
    unsigned long long idle = dbLruClock >= lru ? dbLruClock - lru : dbLruClock + (LRU_CLOCK_MAX - lru);
    sds s = sdsCatPrintf(sdsEmpty(),
                         "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%llu",
                         (void *)o, refcount, encodingName(enc), serialized, lru, idle);
    replyStatusLen(c, s, sdsLen(s));
    sdsFree(s);
}

static void debugSleep(Client *c) {
    double seconds = strtod(c->argv[2], NULL);
    /* Redis converts seconds * 1e6 to a long long: past its range (inf,
     * 1e300) that comes out negative on x86, nanosleep refuses it, and the
     * command returns at once.  Do the same without the undefined
     * conversion; only EINTR resumes a sleep. */
    if (seconds > 0 && seconds * 1000000 < 9223372036854775807.0) {
        long long us = (long long)(seconds * 1000000);
        struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
    }
    replyOk(c);
}

/* DEBUG REPLYBUFFER PEAK-RESET-TIME <ms|never|reset> | RESIZING <0|1>:
 * the reply buffer's resizing knobs (core/net.c).  As Redis: a negative
 * time is "never", RESIZING takes any text (not 0 when it reads as a
 * non-zero integer); other actions get the unknown-subcommand error. */
static void debugReplybuffer(Client *c) {
    if (!strcasecmp(c->argv[2], "peak-reset-time")) {
        long long ms;
        if (!strcasecmp(c->argv[3], "never")) {
            ms = -1;
        } else if (!strcasecmp(c->argv[3], "reset")) {
            ms = NET_REPLY_PEAK_RESET_DEFAULT_MS;
        } else if (getLongLongOrReply(c, c->argv[3], &ms, NULL) == -1) {
            return;
        }
        netReplyBufferPeakResetMs = ms;
    } else if (!strcasecmp(c->argv[2], "resizing")) {
        netReplyBufferResizing = atoi(c->argv[3]) != 0;
    } else {
        replySubcommandSyntaxError(c);
        return;
    }
    replyOk(c);
}

/* DEBUG CLIENT-EVICTION: client eviction's memory buckets (maxmemory.c). */
static void debugClientEviction(Client *c) {
    sds report = maxmemoryClientEvictionReport();
    if (!report) {
        replyError(c, "maxmemory-clients is disabled.");
        return;
    }
    replyVerbatim(c, report, sdsLen(report), "txt");
    sdsFree(report);
}

static void debugSetDisableDenyScripts(Client *c) {
    scriptAllowNoscriptCommands = atoi(c->argv[2]);
    replyOk(c);
}

static void debugChangeReplId(Client *c) {
    replChangeId();
    serverLog(LL_NOTICE, "Changed replication IDs after receiving DEBUG change-repl-id");
    replyOk(c);
}

static void debugSetActiveExpire(Client *c) {
    server.activeExpireEnabled = atoi(c->argv[2]);
    replyOk(c);
}

/* DEBUG DEFER-LOAD-CHECKS 0|1 (Cairn's, for tests; not in HELP, which
 * is Redis's text): 0 makes file and full-sync loads check hash and zset
 * listpacks fully at load again (persist/rdb.h rdbDeferLoadChecks). */
static void debugDeferLoadChecks(Client *c) {
    rdbDeferLoadChecks = atoi(c->argv[2]) != 0;
    replyOk(c);
}

static void debugLog(Client *c) {
    serverLog(LL_WARNING, "DEBUG LOG: %s", c->argv[2]);
    replyOk(c);
}

/* DEBUG POPULATE <count> [<prefix>] [<size>]: keys <prefix>:<n> (default
 * "key") holding "value:<n>", or that text cut or zero-padded to <size>
 * bytes.  Existing keys are left alone. */
static void debugPopulate(Client *c) {
    long count, size = 0;
    if (getPositiveLongOrReply(c, c->argv[2], &count, NULL) == -1) return;
    if (c->argc == 5 && getPositiveLongOrReply(c, c->argv[4], &size, NULL) == -1) return;
    if (size > server.cfg.protoMaxBulkLen) {
        replyError(c, ERR_STRING_TOO_LONG);
        return;
    }
    const char *prefix = c->argc >= 4 ? c->argv[3] : "key";
    sds key = sdsEmpty(), val = sdsEmpty();
    for (long j = 0; j < count; j++) {
        sdsClear(key);
        key = sdsCatPrintf(key, "%s:%ld", prefix, j);
        if (dbLookupWrite(c->db, key, sdsLen(key))) continue;
        sdsClear(val);
        val = sdsCatPrintf(val, "value:%ld", j);
        if (size) {
            size_t have = sdsLen(val);
            if ((size_t)size > have) val = sdsGrowZero(val, (size_t)size);
            else sdsSetLen(val, (size_t)size);
        }
        dbAdd(c->db, kvCreateString(key, sdsLen(key), val, sdsLen(val)));
    }
    sdsFree(key);
    sdsFree(val);
    replyOk(c);
}

/* DEBUG PROTOCOL <type>: one sample reply of each RESP3 type, as Redis
 * answers it (used by client libraries to test their parsers). */
static void debugProtocol(Client *c) {
    const char *t = c->argv[2];
    if (!strcasecmp(t, "string")) {
        replyBulkCString(c, "Hello World");
    } else if (!strcasecmp(t, "integer")) {
        replyLongLong(c, 12345);
    } else if (!strcasecmp(t, "double")) {
        replyDouble(c, 3.141);
    } else if (!strcasecmp(t, "bignum")) {
        replyBigNumber(c, "1234567999999999999999999999999999999", 37);
    } else if (!strcasecmp(t, "null")) {
        replyNull(c);
    } else if (!strcasecmp(t, "array") || !strcasecmp(t, "set")) {
        if (!strcasecmp(t, "array")) replyArrayLen(c, 3);
        else replySetLen(c, 3);
        for (int j = 0; j < 3; j++) replyLongLong(c, j);
    } else if (!strcasecmp(t, "map")) {
        replyMapLen(c, 3);
        for (int j = 0; j < 3; j++) {
            replyLongLong(c, j);
            replyBool(c, j == 1);
        }
    } else if (!strcasecmp(t, "attrib")) {
        if (c->resp >= 3) {
            replyAttributeLen(c, 1);
            replyBulkCString(c, "key-popularity");
            replyArrayLen(c, 2);
            replyBulkCString(c, "key:123");
            replyLongLong(c, 90);
        }
        replyBulkCString(c, "Some real reply following the attribute");
    } else if (!strcasecmp(t, "push")) {
        if (c->resp < 3) {
            replyError(c, "ERR RESP2 is not supported by this command");
            return;
        }
        replyPushLen(c, 2);
        replyBulkCString(c, "server-cpu-usage");
        replyLongLong(c, 42);
        replyBulkCString(c, "Some real reply following the push reply");
    } else if (!strcasecmp(t, "true") || !strcasecmp(t, "false")) {
        replyBool(c, !strcasecmp(t, "true"));
    } else if (!strcasecmp(t, "verbatim")) {
        const char *v = "This is a verbatim\nstring";
        replyVerbatim(c, v, strlen(v), "txt");
    } else {
        replyError(c, "ERR Wrong protocol type name. Please use one of the following: "
                      "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

static void replyDigest(Client *c, const unsigned char d[20]) {
    char hex[41];
    for (int i = 0; i < 20; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    replyStatusLen(c, hex, 40);
}

/* DEBUG DIGEST: the digest of the whole dataset, as Redis computes it. */
static void debugDigest(Client *c) {
    unsigned char d[20];
    digestDataset(d);
    replyDigest(c, d);
}

/* DEBUG DIGEST-VALUE key ...: each value's digest (zeros for a missing
 * key), without its key name; no expiry applies. */
static void debugDigestValue(Client *c) {
    replyArrayLen(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        unsigned char d[20] = {0};
        kvobj *o = dbFind(c->db, c->argv[j], sdsLen(c->argv[j]));
        if (o) o = dbVerifyOrDrop(c->db, o); /* a value loaded unverified */
        if (o) digestValue(o, d);
        replyDigest(c, d);
    }
}

/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty, load back. */
static void debugReload(Client *c) {
    int flags = 0;
    for (int j = 2; j < c->argc; j++) {
        if (argIs(c->argv[j], "merge")) {
            flags |= PERSIST_RELOAD_MERGE;
        } else if (argIs(c->argv[j], "noflush")) {
            flags |= PERSIST_RELOAD_NOFLUSH;
        } else if (argIs(c->argv[j], "nosave")) {
            flags |= PERSIST_RELOAD_NOSAVE;
        } else {
            replyError(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    int rc = persistDebugReload(flags);
    if (rc == -1) replyError(c, "ERR");
    else if (rc == -2) replyError(c, "ERR Error trying to load the RDB dump");
    else replyOk(c);
}

/* DEBUG LOADAOF: write out what is buffered, empty the data, load the AOF
 * back (the process exits when it cannot, as Redis does). */
static void debugLoadaof(Client *c) {
    aofDebugLoad();
    replyOk(c);
}

static void debugHelp(Client *c) {
    static const char *help[] = {
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "LISTPACK <key>",
        "    Show low level info about the listpack encoding of <key>.",
        "LOADAOF",
        "    Flush the AOF buffers on disk and reload the AOF in memory.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "OBJECT <key>",
        "    Low level details of the value stored at <key>.",
        "POPULATE <count> [<prefix>] [<size>]",
        "    Create <count> string keys named <prefix>:<n> (prefix defaults to 'key')",
        "    holding 'value:<n>', or <size> bytes of it. Existing keys are kept.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "QUICKLIST <key> [<0|1>]",
        "    Show low level info about the quicklist encoding of <key>.",
        "    The optional argument (0 by default) sets the level of detail",
        "QUICKLIST-PACKED-THRESHOLD <size>",
        "    Sets the threshold for elements to be inserted as plain vs packed nodes",
        "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
        "RELOAD [option ...]",
        "    Save the RDB on disk and reload it back to memory. Options:",
        "    * MERGE: Merge the content of the RDB instead of flushing first.",
        "    * NOFLUSH: Do not empty the current dataset before loading.",
        "    * NOSAVE: Do not save the RDB before loading.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    0 stops expiring keys in the background (they still expire on access);",
        "    1 turns background expiry back on.",
        "REPLYBUFFER PEAK-RESET-TIME <ms|never|reset>",
        "    How often (ms) each client's reply buffer peak is reset; NEVER keeps the",
        "    peak seen, RESET brings back the default (5000).",
        "REPLYBUFFER RESIZING <0|1>",
        "    0 stops resizing reply buffers (and resetting their peaks) from cron; 1 resumes.",
        "CLIENT-EVICTION",
        "    Show the client eviction buckets: their size range, memory and clients.",
        "SET-DISABLE-DENY-SCRIPTS <0|1>",
        "    1 lets scripts call commands flagged noscript (tests only).",
        "CHANGE-REPL-ID",
        "    Give the instance a new replication ID and forget the previous one.",
        "SLEEP <seconds>",
        "    Block the server for <seconds> (decimals allowed).",
        NULL,
    };
    replyHelp(c, help);
}

/* Redis's memtoull: decimal digits then an optional unit (b, k, kb, m, mb,
 * g, gb; any case).  No digits reads as 0; the multiplication wraps as
 * Redis's does.  Returns 0 on a bad value. */
static int memToULL(const char *p, size_t len, unsigned long long *out) {
    size_t d = 0;
    while (d < len && p[d] >= '0' && p[d] <= '9') d++;
    static const struct { const char *unit; unsigned long long mul; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000ULL * 1000}, {"mb", 1024ULL * 1024},
        {"g", 1000ULL * 1000 * 1000}, {"gb", 1024ULL * 1024 * 1024}};
    unsigned long long mul = 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].unit) == len - d && strncasecmp(p + d, units[i].unit, len - d) == 0) mul = units[i].mul;
    if (!mul) return 0;
    unsigned long long v = 0;
    for (size_t i = 0; i < d; i++) {
        if (v > (ULLONG_MAX - (unsigned long long)(p[i] - '0')) / 10) return 0; /* strtoull's ERANGE */
        v = v * 10 + (unsigned long long)(p[i] - '0');
    }
    *out = v * mul;
    return 1;
}

/* DEBUG QUICKLIST-PACKED-THRESHOLD <size> */
static void debugPackedThreshold(Client *c) {
    unsigned long long sz;
    if (!memToULL(c->argv[2], sdsLen(c->argv[2]), &sz) || !quicklistSetPackedThreshold(sz)) {
        replyError(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    replyOk(c);
}

/* The key for DEBUG LISTPACK / QUICKLIST (Redis's OBJECT lookup), or NULL
 * after replying "no such key". */
static kvobj *debugLookup(Client *c) {
    kvobj *o = dbLookupRead(c->db, c->argv[2], sdsLen(c->argv[2]), LOOKUP_NOTOUCH | LOOKUP_NONOTIFY);
    if (!o) replyError(c, ERR_NO_SUCH_KEY);
    return o;
}

static void printListpack(unsigned char *lp) {
    printf("{total bytes %zu} {num entries %lu}\n", lpBytes(lp), lpLength(lp));
    unsigned char buf[LP_INTBUF_SIZE];
    long i = 0;
    for (unsigned char *p = lpFirst(lp); p; p = lpNext(lp, p), i++) {
        unsigned int len;
        unsigned char *v = lpGetValue(p, &len, buf, NULL, NULL);
        printf("{index %ld} {value %.*s}\n", i, (int)(len > 40 ? 40 : len), (const char *)v);
    }
    fflush(stdout);
}

/* DEBUG LISTPACK <key>: the listpack printed on the server's stdout.  Lists
 * are quicklists as far as Redis 7.0 tells. */
static void debugListpack(Client *c) {
    kvobj *o = debugLookup(c);
    if (!o) return;
    if (kvType(o) == OBJ_LIST || kvEncoding(o) != OBJ_ENC_LISTPACK) {
        replyError(c, "ERR Not a listpack encoded object.");
        return;
    }
    printListpack(kvPtr(o));
    replyStatus(c, "Listpack structure printed on stdout");
}

static int printNode(void *ctx, int plain, const unsigned char *data, size_t len) {
    long *i = ctx;
    printf("{node %ld} {container %s} {bytes %zu}\n", (*i)++, plain ? "PLAIN" : "PACKED", len);
    if (!plain) printListpack((unsigned char *)data);
    return 0;
}

/* DEBUG QUICKLIST <key> [<full>]: the quicklist printed on stdout (node by
 * node; with a nonzero full, each node's elements too). */
static void debugQuicklist(Client *c) {
    kvobj *o = debugLookup(c);
    if (!o) return;
    if (kvType(o) != OBJ_LIST) {
        replyError(c, "ERR Not a quicklist encoded object.");
        return;
    }
    ListRef lr; /* a bare listpack shows as the one node it would be */
    Quicklist *ql = listOpen(&lr, o);
    QuicklistStats st;
    quicklistGetStats(ql, &st);
    printf("{count : %lu}\n{len : %lu}\n{plain : %lu}\n{compressed : %lu}\n", quicklistCount(ql), st.nodes,
           st.plain, st.compressed);
    if (c->argc == 4 && atoi(c->argv[3])) {
        long i = 0;
        quicklistForEachNode(ql, printNode, &i);
    }
    listClose(&lr, 0);
    fflush(stdout);
    replyStatus(c, "Quicklist structure printed on stdout");
}

typedef struct DebugAction {
    const char *name;
    int minArgc, maxArgc; /* including DEBUG and the action */
    void (*proc)(Client *c);
} DebugAction;

static const DebugAction actions[] = {
    {"help", 2, 2, debugHelp},
    {"object", 3, 3, debugObject},
    {"sleep", 3, 3, debugSleep},
    {"set-active-expire", 3, 3, debugSetActiveExpire},
    {"defer-load-checks", 3, 3, debugDeferLoadChecks},
    {"log", 3, 3, debugLog},
    {"populate", 3, 5, debugPopulate},
    {"protocol", 3, 3, debugProtocol},
    {"digest", 2, 2, debugDigest},
    {"digest-value", 2, INT_MAX, debugDigestValue},
    {"reload", 2, 5, debugReload},
    {"replybuffer", 4, 4, debugReplybuffer},
    {"client-eviction", 2, 2, debugClientEviction},
    {"set-disable-deny-scripts", 3, 3, debugSetDisableDenyScripts},
    {"change-repl-id", 2, 2, debugChangeReplId},
    {"loadaof", 2, 2, debugLoadaof},
    {"quicklist-packed-threshold", 3, 3, debugPackedThreshold},
    {"listpack", 3, 3, debugListpack},
    {"quicklist", 3, 4, debugQuicklist},
};

static void debugCommand(Client *c) {
    if (!debugAllowed(c)) {
        replyError(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
                      "you can run it from a local connection, otherwise you need to set this option in the "
                      "configuration file, and then restart the server.");
        return;
    }
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
        const DebugAction *a = &actions[i];
        if (argIs(c->argv[1], a->name) && c->argc >= a->minArgc && c->argc <= a->maxArgc) {
            a->proc(c);
            return;
        }
    }
    replySubcommandSyntaxError(c);
}

Command debugCommands[] = {
    {.name = "debug", .proc = debugCommand},
    {0},
};
