/* debug.c -- DEBUG: SLEEP, SET-ACTIVE-EXPIRE, OBJECT, LOG, POPULATE, DIGEST,
 * DIGEST-VALUE, RELOAD, SET-DISABLE-DENY-SCRIPTS, CHANGE-REPL-ID, the list
 * layouts (QUICKLIST-PACKED-THRESHOLD, LISTPACK, QUICKLIST), HELP;
 * REPLYBUFFER (the reply buffer's resizing) and CLIENT-EVICTION.  Also the
 * crashes (SEGFAULT, PANIC, ASSERT, OOM: core/crash.c reports them),
 * SET-SKIP-CHECKSUM-VALIDATION, PAUSE-CRON, REPLICATE, AOF-FLUSH-SLEEP,
 * MALLCTL / MALLCTL-STR (jemalloc builds only; without jemalloc they are
 * unknown, as in a Redis built without it), HTSTATS / HTSTATS-KEY (the
 * layout of Redis's, from Cairn's own tables), CONFIG-REWRITE-FORCE-ALL
 * and STRINGMATCH-TEST.
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
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/client.h"
#include "core/command.h"
#include "core/crash.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/htab.h"
#include "ds/rand.h"
#include "ds/util.h"
#include "types/list.h"
#include "persist/aof.h"
#include "persist/digest.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "script/script.h"
#include "server/maxmemory.h"
#include "server/shutdown.h"
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
    digestDbId = c->db->id;
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
        "AOF-FLUSH-SLEEP <microsec>",
        "    Server will sleep before flushing the AOF, this is used for testing.",
        "ASSERT",
        "    Crash by assertion failed.",
        "CONFIG-REWRITE-FORCE-ALL",
        "    Like CONFIG REWRITE but writes all configuration options, including",
        "    keywords not listed in original configuration file or default values.",
        "HTSTATS <dbid>",
        "    Return hash table statistics of the specified database.",
        "HTSTATS-KEY <key>",
        "    Like HTSTATS but for the hash table stored at <key>'s value.",
        "REPLICATE <string>",
        "    Replicates the provided string to replicas, allowing data divergence.",
        "MALLCTL <key> [<val>]",
        "    Get or set a malloc tuning integer.",
        "MALLCTL-STR <key> [<val>]",
        "    Get or set a malloc tuning string.",
        "OOM",
        "    Crash the server simulating an out-of-memory error.",
        "PANIC",
        "    Crash the server simulating a panic.",
        "SEGFAULT",
        "    Crash the server with sigsegv.",
        "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
        "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
        "STRINGMATCH-TEST",
        "    Run a fuzz tester against the glob pattern matcher.",
        "PAUSE-CRON <0|1>",
        "    Stop periodic cron job processing.",
        "ERROR <string>",
        "    Return a Redis protocol error with <string> as message. Useful for clients",
        "    unit tests to simulate Redis errors.",
        "RESTART [<milliseconds>]",
        "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
        "CRASH-AND-RECOVER [<milliseconds>]",
        "    Hard crash and restart after a <milliseconds> delay (default 0).",
        "LEAK <string>",
        "    Create a memory leak of the input string.",
        "SDSLEN <key>",
        "    Show low level string info representing `key` and value.",
        "STRUCTSIZE",
        "    Return the size of Cairn's core C structures.",
        "DROP-CLUSTER-PACKET-FILTER <packet-type>",
        "    Accepted without effect: there is no cluster bus.",
        "CLUSTERLINK KILL <to|from|all> <node-id>",
        "    Refused: only in cluster mode.",
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

/* ---- issue 33: crashes, checksum skip, cron pause, REPLICATE, AOF flush
 * sleep, MALLCTL, HTSTATS, forced rewrite, STRINGMATCH-TEST ---- */

/* DEBUG SEGFAULT: a write to a read-only page (SIGSEGV, si_code
 * SEGV_ACCERR, as Redis's), reported by core/crash.c. */
static void debugSegfault(Client *c) {
    (void)c;
    long pg = sysconf(_SC_PAGESIZE);
    volatile char *p = mmap(NULL, pg > 0 ? (size_t)pg : 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) p = NULL; /* a NULL write faults as well */
    *p = 'x';
    raise(SIGSEGV); /* not reached */
}

static void debugPanic(Client *c) {
    (void)c;
    serverPanic("DEBUG PANIC called at Unix time %lld", (long long)time(NULL));
}

static void debugAssert(Client *c) {
    serverAssert(c->argc == -1); /* never true: argc counts DEBUG and ASSERT */
}

/* DEBUG OOM: the allocator's out-of-memory path, for a request of half
 * the address space (Redis's number of bytes). */
static void debugOom(Client *c) {
    (void)c;
    xmallocOom(SIZE_MAX / 2);
}

static void debugSetSkipChecksumValidation(Client *c) {
    rdbSkipChecksumValidation = atoi(c->argv[2]);
    replyOk(c);
}

static void debugPauseCron(Client *c) {
    server.pauseCron = atoi(c->argv[2]);
    replyOk(c);
}

/* DEBUG REPLICATE <command> [<arg> ...]: the words go to the replicas as
 * a command, with no SELECT and not to the AOF (the data may diverge). */
static void debugReplicate(Client *c) {
    int n = c->argc - 2;
    EffectArg *args = xmalloc(sizeof(*args) * (size_t)n);
    for (int j = 0; j < n; j++) args[j] = EA_SDS(c->argv[j + 2]);
    effectsAlsoTo(-1, EFFECT_REPL, n, args);
    xfree(args);
    replyOk(c);
}

static void debugAofFlushSleep(Client *c) {
    aofFlushSleepUs = atoi(c->argv[2]);
    replyOk(c);
}

#ifdef CAIRN_JEMALLOC
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

static void replyErrno(Client *c, int err) { replyErrorFormat(c, "ERR %s", strerror(err)); }

/* DEBUG MALLCTL <key> [<int>]: read (and write) a jemalloc integer,
 * trying 8, 4, 2 then 1 byte wide until jemalloc takes the size; a
 * write-only key is written alone (OK).  Replies the old value. */
static void debugMallctl(Client *c) {
    int wr = c->argc > 3;
    int64_t val = 0;
    if (wr) {
        long long ll;
        if (getLongLongOrReply(c, c->argv[3], &ll, NULL) == -1) return;
        val = ll;
    }
    for (size_t sz = sizeof(int64_t); sz > 0; sz /= 2) {
        int64_t old = 0;
        size_t osz = sz;
        int rc = mallctl(c->argv[2], &old, &osz, wr ? &val : NULL, wr ? sz : 0);
        if (rc == 0) {
            replyLongLong(c, (long long)old); /* little endian: the low bytes were written */
            return;
        }
        if (rc == EPERM && wr) {
            rc = mallctl(c->argv[2], NULL, NULL, &val, sz);
            if (rc == 0) {
                replyOk(c);
                return;
            }
        }
        if (rc != EINVAL) {
            replyErrno(c, rc);
            return;
        }
    }
    replyErrno(c, EINVAL);
}

/* Copies the NUL-terminated string at p (at most cap-1 bytes) into buf
 * without trusting p: a key that is not a string gives a number, which
 * process_vm_readv refuses instead of faulting.  0, or -1. */
static int copyForeignString(const char *p, char *buf, size_t cap) {
    size_t got = 0;
    while (got + 1 < cap) {
        /* page by page, so a string ending before an unmapped page reads */
        uintptr_t a = (uintptr_t)(p + got);
        size_t chunk = 4096 - (a & 4095);
        if (chunk > cap - 1 - got) chunk = cap - 1 - got;
        struct iovec local = {buf + got, chunk}, remote = {(void *)a, chunk};
        ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (r <= 0) return -1;
        void *nul = memchr(buf + got, '\0', (size_t)r);
        got += (size_t)r;
        if (nul) return 0;
    }
    buf[got] = '\0';
    return 0;
}

/* DEBUG MALLCTL-STR <key> [<string>|VOID]: read (and write) a jemalloc
 * string; replies the old value, or OK for a write-only key. */
static void debugMallctlStr(Client *c) {
    int wr = c->argc > 3;
    char *old = NULL;
    size_t sz = sizeof(old);
    int rret = mallctl(c->argv[2], &old, &sz, NULL, 0), wret = 0;
    if (rret && !(rret == EPERM && wr)) {
        replyErrno(c, rret);
        return;
    }
    char text[1024];
    if (!rret && (!old || copyForeignString(old, text, sizeof(text)) == -1)) {
        replyErrno(c, EINVAL); /* not a string */
        return;
    }
    if (wr) {
        char *v = c->argv[3];
        int isVoid = !strcmp(v, "VOID");
        wret = mallctl(c->argv[2], NULL, NULL, isVoid ? NULL : &v, isVoid ? 0 : sizeof(v));
    }
    if (!rret) replyBulkCString(c, text);
    else if (wret) replyErrno(c, wret);
    else replyOk(c);
}
#endif

/* One bucket array's statistics in Redis's layout ("table size", chain
 * length distribution...); t 1 is the rehash target. */
/* Array t's statistics of table `one`, or (one NULL) summed over the
 * database's key tables (one, or one per hash slot in cluster mode: sizes,
 * elements and chains added up). */
static size_t statsTables(const Db *db, const Htab *one) { return one ? 1 : dbKeyTables(db); }
static const Htab *statsTable(const Db *db, const Htab *one, size_t k) { return one ? one : dbKeyTable(db, k); }

static sds htabStatsText(sds s, const Db *db, const Htab *one, int t) {
    enum { MAXLEN = 50 };
    unsigned long clvector[MAXLEN] = {0};
    size_t size = 0, used = 0, slots = 0, maxchain = 0, totchain = 0;
    s = sdsCatPrintf(s, "Hash table %d stats (%s):\n", t, t == 0 ? "main hash table" : "rehashing target");
    for (size_t k = 0; k < statsTables(db, one); k++) {
        const Htab *h = statsTable(db, one, k);
        if (!h->table[t]) continue;
        size += h->size[t];
        used += h->used[t];
        for (size_t i = 0; i < h->size[t]; i++) {
            size_t len = 0;
            for (void *e = h->table[t][i]; e; e = htabLinkGet((void *const *)e)) len++; /* each entry's first word links */
            clvector[len < MAXLEN ? len : MAXLEN - 1]++;
            if (!len) continue;
            slots++;
            totchain += len;
            if (len > maxchain) maxchain = len;
        }
    }
    if (used == 0) return sdsCat(s, "No stats available for empty dictionaries\n");
    s = sdsCatPrintf(s,
                     " table size: %zu\n number of elements: %zu\n different slots: %zu\n max chain length: %zu\n"
                     " avg chain length (counted): %.02f\n avg chain length (computed): %.02f\n"
                     " Chain length distribution:\n",
                     size, used, slots, maxchain, (double)totchain / (double)slots, (double)used / (double)slots);
    for (int i = 0; i < MAXLEN; i++)
        if (clvector[i])
            s = sdsCatPrintf(s, "   %d: %lu (%.02f%%)\n", i, clvector[i], ((double)clvector[i] / (double)size) * 100);
    return s;
}

static sds htabStats(sds s, const Db *db, const Htab *one) {
    s = htabStatsText(s, db, one, 0);
    int rehashing = 0;
    for (size_t k = 0; k < statsTables(db, one) && !rehashing; k++) rehashing = statsTable(db, one, k)->table[1] != NULL;
    if (rehashing) s = htabStatsText(s, db, one, 1);
    return s;
}

/* DEBUG HTSTATS <dbid>: the key table's statistics ([Dictionary HT]);
 * the TTL index ([Expires HT]) is an array, not a hash table: its count
 * only. */
static void debugHtstats(Client *c) {
    long long dbid;
    if (getLongLongOrReply(c, c->argv[2], &dbid, NULL) == -1) return;
    if (dbid < 0 || dbid >= server.cfg.databases) {
        replyError(c, "ERR Out of range database");
        return;
    }
    Db *db = &server.db[dbid];
    sds s = sdsCat(sdsEmpty(), "[Dictionary HT]\n");
    s = htabStats(s, db, NULL);
    s = sdsCat(s, "[Expires HT]\n");
    if (dbExpiresCount(db) == 0)
        s = sdsCat(s, "Hash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n");
    else
        s = sdsCatPrintf(s, "TTL index (not a hash table):\n number of elements: %zu\n", dbExpiresCount(db));
    replyVerbatim(c, s, sdsLen(s), "txt");
    sdsFree(s);
}

/* DEBUG HTSTATS-KEY <key>: the statistics of a hash, set or sorted set
 * held in a hash table (a sorted set's Htab is the first member of its
 * value, t_zset.c's Zset). */
static void debugHtstatsKey(Client *c) {
    kvobj *o = dbLookupRead(c->db, c->argv[2], sdsLen(c->argv[2]), LOOKUP_NOTOUCH | LOOKUP_NONOTIFY);
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return;
    }
    int type = kvType(o), enc = kvEncoding(o);
    const Htab *h = NULL;
    if ((type == OBJ_HASH || type == OBJ_SET) && enc == OBJ_ENC_HT) h = kvPtr(o);
    else if (type == OBJ_ZSET && enc == OBJ_ENC_SKIPLIST) h = kvPtr(o);
    if (!h) {
        replyError(c, "ERR The value stored at the specified key is not represented using an hash table");
        return;
    }
    sds s = htabStats(sdsEmpty(), NULL, h);
    replyVerbatim(c, s, sdsLen(s), "txt");
    sdsFree(s);
}

static void debugConfigRewriteForceAll(Client *c) {
    if (configRewriteFile(1) == -1) replyErrorFormat(c, "ERR CONFIG-REWRITE-FORCE-ALL failed: %s", strerror(errno));
    else replyOk(c);
}

/* DEBUG STRINGMATCH-TEST: a million random patterns (glob metacharacters
 * mixed with bytes) matched against random strings of up to 31 bytes: a
 * fuzz test of the glob matcher that passes when it returns at all. */
static void debugStringmatchTest(Client *c) {
    static const char meta[] = "*?[]^-\\ab";
    char buf[2][32];
    for (int j = 0; j < 1000000; j++) {
        size_t len[2];
        for (int k = 0; k < 2; k++) {
            len[k] = (size_t)randBounded(sizeof(buf[k]));
            for (size_t i = 0; i < len[k]; i++) {
                uint64_t r = randNext();
                buf[k][i] = (r & 1) ? meta[(r >> 8) % (sizeof(meta) - 1)] : (char)(r >> 16);
            }
        }
        (void)globMatch(buf[0], len[0], buf[1], len[1], (int)(randNext() & 1));
    }
    replyStatus(c, "Apparently Redis did not crash: test passed");
}
/* DEBUG ERROR <string>: the string as an error reply, as is (a "-" in
 * front; line breaks become spaces). */
static void debugError(Client *c) {
    sds e = sdsCatSds(sdsNew("-"), c->argv[2]);
    replyErrorLen(c, e, sdsLen(e));
    sdsFree(e);
}

/* DEBUG RESTART [<ms>] (the config file rewritten, the shutdown's save)
 * and DEBUG CRASH-AND-RECOVER [<ms>] (neither): the server executes
 * itself again with its command line, after the delay, keeping its pid.
 * Replies only when that cannot start. */
static void restartServer(Client *c, int graceful) {
    long long delay = 0;
    if (c->argc > 2 && getLongLongOrReply(c, c->argv[2], &delay, NULL) == -1) return;
    int failed = 1;
    if (access(server.executable, X_OK) == -1) {
        serverLog(LL_WARNING, "Can't restart: this process has no permissions to execute %s", server.executable);
    } else if (graceful && configFilePath() && configRewriteFile(0) == -1) {
        serverLog(LL_WARNING, "Can't restart: configuration rewrite process failed: %s", strerror(errno));
    } else if (graceful && shutdownForRestart() == -1) {
        serverLog(LL_WARNING, "Can't restart: error preparing for shutdown");
    } else {
        failed = 0;
    }
    if (failed) {
        replyError(c, "ERR failed to restart the server. Check server logs.");
        return;
    }
    long maxfd = (long)server.cfg.maxclients + 1024;
    for (long fd = 3; fd < maxfd; fd++)
        if (fcntl((int)fd, F_GETFD) != -1) close((int)fd);
    if (delay > 0) usleep((useconds_t)(delay > 3600000 ? 3600000 : delay) * 1000);
    xfree(server.execArgv[0]);
    server.execArgv[0] = xstrdup(server.executable);
    execve(server.executable, server.execArgv, environ);
    _exit(1); /* nothing left to go back to */
}

/* DEBUG LEAK <string>: a copy of the string, never freed (a test of leak
 * detectors, as Redis's). */
static void debugLeak(Client *c) {
    char *volatile leaked = xmalloc(sdsLen(c->argv[2]) + 1);
    memcpy(leaked, c->argv[2], sdsLen(c->argv[2]) + 1);
    leaked = NULL;
    replyOk(c);
}

/* DEBUG SDSLEN <key>: a string value's lengths and allocations, in
 * Redis's line; the key lives inside the entry (no room to spare), an
 * inline value shares the entry's block, a bigger one has its own sds. */
static void debugSdslen(Client *c) {
    kvobj *o = dbLookupRead(c->db, c->argv[2], sdsLen(c->argv[2]), LOOKUP_NOTOUCH | LOOKUP_NONOTIFY);
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return;
    }
    if (kvType(o) != OBJ_STRING || kvEncoding(o) == OBJ_ENC_INT) {
        replyError(c, "ERR Not an sds encoded string.");
        return;
    }
    size_t entry = xmallocSize(o);
    size_t vlen = kvStringLen(o), vavail = 0, valloc = entry;
    if (kvEncoding(o) == OBJ_ENC_RAW) {
        sds v = kvPtr(o);
        vavail = sdsAvail(v);
        valloc = sdsAllocSize(v);
    }
    sds s = sdsCatPrintf(sdsEmpty(),
                         "key_sds_len:%zu, key_sds_avail:0, key_zmalloc: %zu, val_sds_len:%zu, val_sds_avail:%zu, "
                         "val_zmalloc: %zu",
                         kvKeyLen(o), entry, vlen, vavail, valloc);
    replyStatusLen(c, s, sdsLen(s));
    sdsFree(s);
}

/* DEBUG STRUCTSIZE: the sizes of Cairn's core structures, in the shape
 * of Redis's line. */
static void debugStructsize(Client *c) {
    sds s = sdsCatPrintf(sdsEmpty(), "bits:%d kvobj:%zu htab:%zu client:%zu db:%zu ", (int)(sizeof(void *) * 8),
                         sizeof(kvobj), sizeof(Htab), sizeof(Client), sizeof(Db));
    replyStatusLen(c, s, sdsLen(s));
    sdsFree(s);
}

/* DEBUG DROP-CLUSTER-PACKET-FILTER <type>: Cairn has no cluster bus, so
 * no packet to drop: the type is checked (an integer) and OK, as a Redis
 * without cluster mode answers.  DEBUG CLUSTERLINK KILL ...: Redis's
 * refusal outside cluster mode. */
static void debugDropClusterPacketFilter(Client *c) {
    long long type;
    if (getLongLongOrReply(c, c->argv[2], &type, NULL) == -1) return;
    replyOk(c);
}

static void debugClusterlink(Client *c) {
    if (!argIs(c->argv[2], "kill")) {
        replySubcommandSyntaxError(c);
        return;
    }
    replyError(c, "ERR Debug option only available for cluster mode enabled setup!");
}

static void debugRestart(Client *c) { restartServer(c, 1); }
static void debugCrashAndRecover(Client *c) { restartServer(c, 0); }
/* ---- end of issue 33's block ---- */

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
    /* the crashes, then the rest of what 7.0.15 answers without cluster */
    {"segfault", 2, INT_MAX, debugSegfault}, /* extra arguments ignored, as Redis */
    {"panic", 2, INT_MAX, debugPanic}, /* extra arguments ignored, as Redis */
    {"assert", 2, INT_MAX, debugAssert}, /* extra arguments ignored, as Redis */
    {"oom", 2, INT_MAX, debugOom}, /* extra arguments ignored, as Redis */
    {"set-skip-checksum-validation", 3, 3, debugSetSkipChecksumValidation},
    {"pause-cron", 3, 3, debugPauseCron},
    {"replicate", 3, INT_MAX, debugReplicate},
    {"aof-flush-sleep", 3, 3, debugAofFlushSleep},
#ifdef CAIRN_JEMALLOC
    {"mallctl", 3, INT_MAX, debugMallctl},
    {"mallctl-str", 3, INT_MAX, debugMallctlStr},
#endif
    {"htstats", 3, 3, debugHtstats},
    {"htstats-key", 3, 3, debugHtstatsKey},
    {"config-rewrite-force-all", 2, 2, debugConfigRewriteForceAll},
    {"stringmatch-test", 2, 2, debugStringmatchTest},
    {"error", 3, 3, debugError},
    {"restart", 2, INT_MAX, debugRestart},
    {"crash-and-recover", 2, INT_MAX, debugCrashAndRecover},
    {"leak", 3, 3, debugLeak},
    {"sdslen", 3, 3, debugSdslen},
    {"structsize", 2, 2, debugStructsize},
    {"drop-cluster-packet-filter", 3, 3, debugDropClusterPacketFilter},
    {"clusterlink", 5, 5, debugClusterlink},
};

/* Not static, and the action is not a tail call: crash reports and the
 * watchdog's stack traces name this frame (Redis's tests look for
 * "debugCommand" there). */
void debugCommand(Client *c);
void debugCommand(Client *c) {
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
            __asm__ volatile("" ::: "memory"); /* keeps this frame on the stack during proc */
            return;
        }
    }
    replySubcommandSyntaxError(c);
}

Command debugCommands[] = {
    {.name = "debug", .proc = debugCommand},
    {0},
};
