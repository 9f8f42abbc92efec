/* t_keys.c -- generic keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS,
 * SCAN, RANDOMKEY, RENAME(NX), MOVE, COPY, TOUCH, SELECT, SWAPDB, FLUSHDB,
 * FLUSHALL, DBSIZE and OBJECT.
 *
 * Replies and error texts are redis-server 7.0.15's.  Entries carry their
 * key bytes, so a key that changes name (RENAME, COPY) gets a new entry;
 * the value moves over (RENAME) or is deep-copied (COPY).  MOVE relinks
 * the same entry into the other database.  Keys that are logically expired
 * are deleted when a command looks them up (db.c), except where Redis only
 * skips them (KEYS). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/lazyfree.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/util.h"
#include "types/keys.h"
#include "types/member_ttl.h"
#include "types/scan.h"

#define ERR_INT_RANGE "ERR value is out of range, value must between -2147483648 and 2147483647"

/* --- helpers --- */

/* Parse an int argument as Redis's getIntFromObjectOrReply does. */
static int getIntOrReply(Client *c, const sds s, int *out) {
    long long v;
    if (getLongLongOrReply(c, s, &v, NULL) == -1) return -1;
    if (v < INT_MIN || v > INT_MAX) {
        replyError(c, ERR_INT_RANGE);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Parse a database number; reply the error and return NULL if it is not
 * an int or not an existing database. */
static Db *getDbOrReply(Client *c, const sds s) {
    int id;
    if (getIntOrReply(c, s, &id) == -1) return NULL;
    if (id < 0 || id >= server.cfg.databases) {
        replyError(c, ERR_DB_INDEX);
        return NULL;
    }
    return &server.db[id];
}

static int sameKey(const sds a, const sds b) {
    return sdsLen(a) == sdsLen(b) && memcmp(a, b, sdsLen(a)) == 0;
}

/* Delete an expired entry through the normal lookup path, so that it is
 * counted and notified as Redis's expireIfNeeded does.  `o` is invalid
 * afterwards. */
static void expireEntry(Db *db, kvobj *o) {
    sds key = sdsNewLen(kvKey(o), kvKeyLen(o));
    dbLookupWrite(db, key, sdsLen(key));
    sdsFree(key);
    /* SCAN and RANDOMKEY (its only callers) touch arbitrary keys: at top
     * level each DEL is propagated alone, not wrapped with the others. */
    effectsEndUnitAtTop();
}

/* A new entry named key[0..len) holding o's value and o's expire (built
 * in from the start: adding it afterwards would move the entry): the value
 * pointer is moved (o must then be freed with kvFreeShell) unless dup, in
 * which case it is deep-copied.  NULL if the value's type has no copy
 * function yet. */
static kvobj *entryWithKey(const kvobj *o, const char *key, size_t len, int dup) {
    int exp = kvHasExpire(o);
    long long when = kvExpire(o);
    if (kvType(o) == OBJ_STRING && kvEncoding(o) != OBJ_ENC_RAW) {
        char buf[UTIL_LONG_STR_SIZE];
        size_t vlen;
        const char *v;
        if (kvEncoding(o) == OBJ_ENC_INT)
            return exp ? kvCreateIntExpire(key, len, kvInt(o), when) : kvCreateInt(key, len, kvInt(o));
        v = kvStringBytes(o, buf, &vlen);
        return exp ? kvCreateEmbstrExpire(key, len, v, vlen, when) : kvCreateEmbstr(key, len, v, vlen);
    }
    if (kvHasInlineValue(o)) { /* copied either way: it lives in o's block */
        size_t n = kvInlineSize(o);
        return exp ? kvCreateInlineExpire(key, len, kvType(o), kvPtr(o), n, n, when)
                   : kvCreateInline(key, len, kvType(o), kvPtr(o), n, n);
    }
    void *ptr = dup ? objectDupValue(o) : kvPtr(o);
    if (!ptr) return NULL;
    return exp ? kvCreatePtrExpire(key, len, kvType(o), kvEncoding(o), ptr, when)
               : kvCreatePtr(key, len, kvType(o), kvEncoding(o), ptr);
}

/* Free an entry a command removed to make room (RENAME/COPY overwrite). */
static void freeServerDel(kvobj *o) {
    if (server.cfg.lazyfreeLazyServerDel) lazyfreeEntry(o);
    else kvFree(o);
}

/* --- DEL / UNLINK / EXISTS / TOUCH / TYPE / DBSIZE --- */

static void delGeneric(Client *c, int lazy) {
    long long deleted = 0;
    for (int j = 1; j < c->argc; j++) {
        sds key = c->argv[j];
        size_t len = sdsLen(key);
        if (!dbLookupWrite(c->db, key, len)) continue; /* expires it first */
        kvobj *o = dbUnlink(c->db, key, len);
        if (lazy) lazyfreeEntry(o);
        else lazyfreeFreeNow(o);
        signalModifiedKey(c, c->db, key, len);
        notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, len, c->db->id);
        serverIncrDirty(1);
        deleted++;
    }
    replyLongLong(c, deleted);
}

static void delCommand(Client *c) { delGeneric(c, server.cfg.lazyfreeLazyUserDel); }

static void unlinkCommand(Client *c) { delGeneric(c, 1); }

static void existsCommand(Client *c) {
    long long count = 0;
    for (int j = 1; j < c->argc; j++)
        if (dbLookupRead(c->db, c->argv[j], sdsLen(c->argv[j]), LOOKUP_NOTOUCH)) count++;
    replyLongLong(c, count);
}

/* TOUCH touches also for a CLIENT NO-TOUCH client (Redis 7.2). */
static void touchCommand(Client *c) {
    long long count = 0;
    int noTouch = dbNoTouch;
    dbNoTouch = 0;
    for (int j = 1; j < c->argc; j++)
        if (dbLookupRead(c->db, c->argv[j], sdsLen(c->argv[j]), LOOKUP_NONE)) count++;
    dbNoTouch = noTouch;
    replyLongLong(c, count);
}

static void typeCommand(Client *c) {
    kvobj *o = dbLookupRead(c->db, c->argv[1], sdsLen(c->argv[1]), LOOKUP_NOTOUCH);
    replyStatus(c, o ? kvTypeName(o) : "none");
}

static void dbsizeCommand(Client *c) { replyLongLong(c, (long long)dbSize(c->db)); }

/* --- KEYS / SCAN / RANDOMKEY --- */

/* Every key matching the pattern; logically expired keys are skipped but
 * not deleted, as in Redis. */
static void keysCommand(Client *c) {
    sds pat = c->argv[1];
    int all = sdsLen(pat) == 1 && pat[0] == '*';
    long n = 0;
    void *len = replyDeferredLen(c);
    DbIter it;
    kvobj *o;
    dbIterInit(&it, c->db);
    while ((o = dbIterNext(&it)) != NULL) {
        if (kvIsExpired(o)) continue;
        if (!all && !globMatch(pat, sdsLen(pat), kvKey(o), kvKeyLen(o), 0)) continue;
        replyBulk(c, kvKey(o), kvKeyLen(o));
        n++;
    }
    dbIterRelease(&it);
    replySetDeferredArrayLen(c, len, n);
}

/* SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].  Like Redis, COUNT
 * bounds the keys gathered before the MATCH / TYPE / expiry filters run,
 * and at most 10 x COUNT buckets are visited per call. */
static void scanCommand(Client *c) {
    uint64_t cursor;
    long count = 10;
    sds pat = NULL, type = NULL;
    if (scanParseCursorOrReply(c, c->argv[1], &cursor) == -1) return;
    for (int j = 2; j < c->argc; j += 2) {
        sds opt = c->argv[j];
        if (j + 1 >= c->argc) {
            replyErrorSyntax(c);
            return;
        }
        if (argIs(opt, "count")) {
            if (getLongOrReply(c, c->argv[j + 1], &count, NULL) == -1) return;
            if (count < 1) {
                replyErrorSyntax(c);
                return;
            }
        } else if (argIs(opt, "match")) {
            pat = c->argv[j + 1];
        } else if (argIs(opt, "type")) {
            type = c->argv[j + 1];
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    if (pat && sdsLen(pat) == 1 && pat[0] == '*') pat = NULL;

    Db *db = c->db;
    ScanBatch b = {0};
    long maxIter = count > LONG_MAX / 10 ? LONG_MAX : count * 10;
    do {
        cursor = dbScan(db, cursor, scanBatchCollect, &b);
    } while (cursor && maxIter-- && b.count < (size_t)count);

    replyArrayLen(c, 2);
    scanReplyCursor(c, cursor);
    void *len = replyDeferredLen(c);
    long n = 0;
    for (size_t i = 0; i < b.count; i++) {
        kvobj *o = b.items[i];
        if (pat && !globMatch(pat, sdsLen(pat), kvKey(o), kvKeyLen(o), 0)) continue;
        int expired = kvIsExpired(o);
        if (type) {
            /* Redis looks the key up to learn its type: a counted read. */
            if (expired) dbStats.keyspaceMisses++;
            else dbStats.keyspaceHits++;
            if (!expired && strcasecmp(type, kvTypeName(o)) != 0) continue;
        }
        if (expired) {
            expireEntry(db, o);
            continue;
        }
        replyBulk(c, kvKey(o), kvKeyLen(o));
        n++;
    }
    replySetDeferredArrayLen(c, len, n);
    scanBatchFree(&b);
}

static void randomkeyCommand(Client *c) {
    Db *db = c->db;
    /* When every key has a TTL and expired keys cannot be deleted here (a
     * replica), give up after a while and return an expired one. */
    int allVolatile = dbSize(db) == dbExpiresCount(db);
    int tries = 100;
    for (;;) {
        kvobj *o = dbRandomKey(db);
        if (!o) {
            replyNull(c);
            return;
        }
        if (kvIsExpired(o)) {
            if (!dbNoLazyExpire) {
                expireEntry(db, o);
                continue;
            }
            if (!allVolatile || --tries > 0) continue;
        }
        replyBulk(c, kvKey(o), kvKeyLen(o));
        return;
    }
}

/* --- RENAME / RENAMENX / MOVE / COPY --- */

static void renameGeneric(Client *c, int nx) {
    Db *db = c->db;
    sds src = c->argv[1], dst = c->argv[2];
    kvobj *o = dbLookupWrite(db, src, sdsLen(src));
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return;
    }
    if (sameKey(src, dst)) {
        if (nx) replyLongLong(c, 0);
        else replyOk(c);
        return;
    }
    if (dbLookupWrite(db, dst, sdsLen(dst))) {
        if (nx) {
            replyLongLong(c, 0);
            return;
        }
        freeServerDel(dbUnlink(db, dst, sdsLen(dst)));
    }
    kvobj *n = entryWithKey(o, dst, sdsLen(dst), 0); /* with o's expire */
    kvSetLru(n, kvLru(o));
    struct MtKey *mt = dbMemberTtlKeys ? memberTtlDetach(db, src) : NULL;
    kvFreeShell(dbUnlink(db, src, sdsLen(src)));
    dbAdd(db, n);
    if (mt) memberTtlAttach(db, dst, mt);

    signalModifiedKey(c, db, src, sdsLen(src));
    signalModifiedKey(c, db, dst, sdsLen(dst));
    notifyKeyspaceEvent(NOTIFY_GENERIC, "rename_from", src, sdsLen(src), db->id);
    notifyKeyspaceEvent(NOTIFY_GENERIC, "rename_to", dst, sdsLen(dst), db->id);
    serverIncrDirty(1);
    if (nx) replyLongLong(c, 1);
    else replyOk(c);
}

static void renameCommand(Client *c) { renameGeneric(c, 0); }

static void renamenxCommand(Client *c) { renameGeneric(c, 1); }

static void moveCommand(Client *c) {
    sds key = c->argv[1];
    size_t len = sdsLen(key);
    if (dbSlotsOn()) { /* cluster mode: database 0 only */
        replyError(c, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    Db *src = c->db;
    Db *dst = getDbOrReply(c, c->argv[2]);
    if (!dst) return;
    if (dst == src) {
        replyError(c, ERR_SAME_OBJECT);
        return;
    }
    if (!dbLookupWrite(src, key, len) || dbLookupWrite(dst, key, len)) {
        replyLongLong(c, 0);
        return;
    }
    struct MtKey *mt = dbMemberTtlKeys ? memberTtlDetach(src, key) : NULL;
    dbAdd(dst, dbUnlink(src, key, len)); /* the entry keeps its expire */
    if (mt) memberTtlAttach(dst, key, mt);

    signalModifiedKey(c, src, key, len);
    signalModifiedKey(c, dst, key, len);
    notifyKeyspaceEvent(NOTIFY_GENERIC, "move_from", key, len, src->id);
    notifyKeyspaceEvent(NOTIFY_GENERIC, "move_to", key, len, dst->id);
    serverIncrDirty(1);
    replyLongLong(c, 1);
}

kvobj *(*keysModuleCopy)(Client *c, const kvobj *o, Db *src, Db *dst, const char *newkey, size_t len);

/* COPY source destination [DB destination-db] [REPLACE] */
static void copyCommand(Client *c) {
    sds key = c->argv[1], newkey = c->argv[2];
    Db *src = c->db, *dst = c->db;
    int replace = 0;
    for (int j = 3; j < c->argc; j++) {
        if (argIs(c->argv[j], "replace")) {
            replace = 1;
        } else if (argIs(c->argv[j], "db") && j + 1 < c->argc) {
            if (!(dst = getDbOrReply(c, c->argv[++j]))) return;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    if (dbSlotsOn() && dst != src) { /* cluster mode: database 0 only */
        replyError(c, "ERR Copying to another database is not allowed in cluster mode");
        return;
    }
    if (src == dst && sameKey(key, newkey)) {
        replyError(c, ERR_SAME_OBJECT);
        return;
    }
    kvobj *o = dbLookupRead(src, key, sdsLen(key), LOOKUP_NONE);
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    int had = dbLookupWrite(dst, newkey, sdsLen(newkey)) != NULL;
    if (had && !replace) {
        replyLongLong(c, 0);
        return;
    }
    /* The copy first, then the destination goes (Redis's order: a module
     * value that fails to copy leaves it). */
    kvobj *n;
    if (kvType(o) == OBJ_MODULE && keysModuleCopy) {
        if (!(n = keysModuleCopy(c, o, src, dst, newkey, sdsLen(newkey)))) return;
    } else if (!(n = entryWithKey(o, newkey, sdsLen(newkey), 1))) {
        replyError(c, "ERR copying this type of value is not supported yet");
        return;
    }
    if (had) freeServerDel(dbUnlink(dst, newkey, sdsLen(newkey)));
    dbAdd(dst, n); /* n has o's expire */
    if (dbMemberTtlKeys) memberTtlCopy(src, key, dst, newkey);

    signalModifiedKey(c, dst, newkey, sdsLen(newkey));
    notifyKeyspaceEvent(NOTIFY_GENERIC, "copy_to", newkey, sdsLen(newkey), dst->id);
    serverIncrDirty(1);
    replyLongLong(c, 1);
}

/* --- SELECT / SWAPDB / FLUSHDB / FLUSHALL --- */

static void selectCommand(Client *c) {
    int id;
    if (getIntOrReply(c, c->argv[1], &id) == -1) return;
    if (dbSlotsOn() && id != 0) { /* cluster mode: database 0 only */
        replyError(c, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (clientSelectDb(c, id) == -1) {
        replyError(c, ERR_DB_INDEX);
        return;
    }
    replyOk(c);
}

static void swapdbCommand(Client *c) {
    long long a, b;
    if (dbSlotsOn()) { /* cluster mode: database 0 only */
        replyError(c, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    if (!stringToLongLong(c->argv[1], sdsLen(c->argv[1]), &a) || a < INT_MIN || a > INT_MAX) {
        replyError(c, "ERR invalid first DB index");
        return;
    }
    if (!stringToLongLong(c->argv[2], sdsLen(c->argv[2]), &b) || b < INT_MIN || b > INT_MAX) {
        replyError(c, "ERR invalid second DB index");
        return;
    }
    if (a < 0 || a >= server.cfg.databases || b < 0 || b >= server.cfg.databases) {
        replyError(c, ERR_DB_INDEX);
        return;
    }
    if (a != b) {
        dbSwap(&server.db[a], &server.db[b]);
        signalSwappedDb((int)a, (int)b);
    }
    serverFireEvent(SERVER_EVENT_SWAPDB, 0, NULL, a, b);
    serverIncrDirty(1);
    replyOk(c);
}

/* [ASYNC|SYNC]: 1 async, 0 sync, -1 after replying a syntax error.  With
 * no argument lazyfree-lazy-user-flush decides. */
static int getFlushModeOrReply(Client *c) {
    if (c->argc == 1) return server.cfg.lazyfreeLazyUserFlush ? 1 : 0;
    if (c->argc == 2 && argIs(c->argv[1], "async")) return 1;
    if (c->argc == 2 && argIs(c->argv[1], "sync")) return 0;
    replyErrorSyntax(c);
    return -1;
}

/* An emptied database's memory goes back to the system at once: after a
 * SYNC flush the allocator's dirty pages are purged here, as Redis 7.0 does
 * (the flush itself took longer); after an ASYNC one the lazy-free thread
 * purges once it has freed the contents. */
static long long emptyDb(Db *db, int async) {
    if (async) return dbEmptyAsync(db);
    long long n = dbEmpty(db);
    if (n) xmallocPurge();
    return n;
}

static void flushdbCommand(Client *c) {
    int async = getFlushModeOrReply(c);
    if (async == -1) return;
    serverFireEvent(SERVER_EVENT_FLUSHDB, 0, NULL, c->db->id, !async);
    signalFlushedDb(c->db->id);
    serverIncrDirty(emptyDb(c->db, async));
    serverFireEvent(SERVER_EVENT_FLUSHDB, 1, NULL, c->db->id, !async);
    effectsForce(EFFECT_ALL); /* propagated even when the database was empty */
    replyOk(c);
}

static void flushallCommand(Client *c) {
    int async = getFlushModeOrReply(c);
    if (async == -1) return;
    long long removed = 0;
    serverFireEvent(SERVER_EVENT_FLUSHDB, 0, NULL, -1, !async);
    signalFlushedDb(-1);
    for (int i = 0; i < server.cfg.databases; i++) removed += emptyDb(&server.db[i], async);
    serverFireEvent(SERVER_EVENT_FLUSHDB, 1, NULL, -1, !async);
    /* Redis 7.0.15 counts the keys removed only (rdb_changes_since_last_save)
     * and propagates FLUSHALL even when that is 0 or the save point hook's
     * save zeroed the counter. */
    serverIncrDirty(removed);
    signalFlushAllDone();
    effectsForce(EFFECT_ALL);
    replyOk(c);
}

/* --- OBJECT --- */

static int policyIsLfu(void) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_ALLKEYS_LFU;
}

static int policyIsLru(void) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LRU || p == MAXMEMORY_ALLKEYS_LRU;
}

/* The key for OBJECT subcommands, or NULL after replying null. */
static kvobj *objectLookupOrReply(Client *c) {
    kvobj *o = dbLookupRead(c->db, c->argv[2], sdsLen(c->argv[2]), LOOKUP_NOTOUCH);
    if (!o) replyNull(c);
    return o;
}

static void objectEncodingCommand(Client *c) {
    kvobj *o = objectLookupOrReply(c);
    if (o) replyBulkCString(c, encodingName(kvReportedEncoding(o)));
}

/* Redis shares the integer objects 0..9999 (refcount INT_MAX) unless an
 * LRU/LFU policy with maxmemory needs per-key access bits.  Entries here
 * are never shared; the reply mirrors what Redis would report. */
static void objectRefcountCommand(Client *c) {
    kvobj *o = objectLookupOrReply(c);
    if (!o) return;
    int shared = kvEncoding(o) == OBJ_ENC_INT && kvInt(o) >= 0 && kvInt(o) < OBJ_SHARED_INTEGERS &&
                 (server.cfg.maxmemory == 0 || !(policyIsLru() || policyIsLfu()));
    replyLongLong(c, shared ? INT_MAX : 1);
}

#define LRU_CLOCK_MAX ((1u << 24) - 1)

static void objectIdletimeCommand(Client *c) {
    kvobj *o = objectLookupOrReply(c);
    if (!o) return;
    if (policyIsLfu()) {
        replyError(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
                      "when switching between policies at runtime LRU and LFU data will take some time "
                      "to adjust.");
        return;
    }
    unsigned now = dbLruClock & LRU_CLOCK_MAX, lru = kvLru(o) & LRU_CLOCK_MAX;
    long long idle = now >= lru ? (long long)(now - lru) : (long long)now + (LRU_CLOCK_MAX - lru);
    replyLongLong(c, idle);
}

/* The LFU counter after decay: one step per lfu-decay-time minutes since
 * the access time kept in the high 16 bits. */
static void objectFreqCommand(Client *c) {
    kvobj *o = objectLookupOrReply(c);
    if (!o) return;
    if (!policyIsLfu()) {
        replyError(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
                      "note that when switching between policies at runtime LRU and LFU data will take "
                      "some time to adjust.");
        return;
    }
    replyLongLong(c, dbLfuDecayed(o));
}

static const char *objectHelpLines[] = {
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    NULL,
};

static void objectHelpCommand(Client *c) { replyHelp(c, objectHelpLines); }

/* --- command handlers (metadata: src/core/command_data.c) --- */

static Command objectSubcommands[] = {
    {.name = "encoding", .proc = objectEncodingCommand},
    {.name = "freq", .proc = objectFreqCommand},
    {.name = "idletime", .proc = objectIdletimeCommand},
    {.name = "refcount", .proc = objectRefcountCommand},
    {.name = "help", .proc = objectHelpCommand},
    {0},
};

Command keyCommands[] = {
    {.name = "del", .proc = delCommand},
    {.name = "unlink", .proc = unlinkCommand},
    {.name = "exists", .proc = existsCommand},
    {.name = "type", .proc = typeCommand},
    {.name = "keys", .proc = keysCommand},
    {.name = "scan", .proc = scanCommand},
    {.name = "randomkey", .proc = randomkeyCommand},
    {.name = "rename", .proc = renameCommand},
    {.name = "renamenx", .proc = renamenxCommand},
    {.name = "move", .proc = moveCommand},
    {.name = "copy", .proc = copyCommand},
    {.name = "touch", .proc = touchCommand},
    {.name = "select", .proc = selectCommand},
    {.name = "swapdb", .proc = swapdbCommand},
    {.name = "flushdb", .proc = flushdbCommand},
    {.name = "flushall", .proc = flushallCommand},
    {.name = "dbsize", .proc = dbsizeCommand},
    {.name = "object", .subcommands = objectSubcommands},
    {0},
};
