/* replica_keys.c -- a writable replica (replica-read-only no) expires the
 * keys whose TTL its own clients set, as Redis 7.0 does ("slave keys with
 * expire"); keys from the primary still expire only by the primary's DEL.
 *
 * The replication effects sink hands us, on a replica, each unit of
 * effects that did not come from the primary's link; the effects of the
 * commands that set a TTL (SET ... PXAT, PEXPIREAT, RESTORE, RENAME, MOVE,
 * COPY...) name keys that we remember as (database, key) when they hold an
 * expire after the write.  Every timer tick each remembered key is looked
 * at again: gone or without an expire, it is forgotten; past its expire,
 * it is deleted as a lazily expired key is (expired_keys, the "expired"
 * event, DEL to the AOF) and forgotten.
 *
 * Invariants: entries are owned here; the table is empty while we are a
 * primary or read-only (replicaKeysForget empties it). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/command.h"
#include "core/effects.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/htab.h"
#include "ds/siphash.h"
#include "ds/util.h"
#include "repl/repl_int.h"

/* A remembered key: k holds the database id (4 bytes, host order) then
 * the key's bytes; the table hashes and compares all of k, so the same
 * name in two databases is two entries. */
typedef struct TrackedKey {
    void *next;
    size_t klen;
    char k[];
} TrackedKey;

#define TK_DB 4

static uint64_t tkHash(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void tkEntryKey(const void *entry, const void **key, size_t *len) {
    const TrackedKey *t = entry;
    *key = t->k;
    *len = t->klen;
}

static const HtabType trackedType = {.hashKey = tkHash, .entryKey = tkEntryKey};
static Htab *tracked;

static int tkDb(const TrackedKey *t) {
    int32_t id;
    memcpy(&id, t->k, TK_DB);
    return id;
}

static void remember(int dbid, const char *key, size_t len) {
    if (!tracked) tracked = htabCreate(&trackedType);
    TrackedKey *t = xmalloc(sizeof(TrackedKey) + TK_DB + len);
    t->next = NULL;
    t->klen = TK_DB + len;
    int32_t id = dbid;
    memcpy(t->k, &id, TK_DB);
    memcpy(t->k + TK_DB, key, len);
    if (htabFind(tracked, t->k, t->klen)) {
        xfree(t);
        return;
    }
    htabAdd(tracked, t);
}

/* The commands whose effect may give a key an expire. */
static int setsTtl(const sds name) {
    static const char *names[] = {"set",    "setex",    "psetex",    "getex", "expire",   "pexpire", "expireat",
                                  "pexpireat", "restore", "rename", "renamenx", "move", "copy", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcasecmp(name, names[i])) return 1;
    return 0;
}

/* The database a key argument lands in: MOVE's and COPY ... DB's target
 * for their destination key, else the effect's. */
static int targetDb(const Effect *e, int pos) {
    long long v;
    if (!strcasecmp(e->argv[0], "move") && e->argc >= 3 && stringToLongLong(e->argv[2], sdsLen(e->argv[2]), &v))
        return (int)v;
    if (!strcasecmp(e->argv[0], "copy") && pos == 2) {
        for (int j = 3; j + 1 < e->argc; j++)
            if (!strcasecmp(e->argv[j], "db") && stringToLongLong(e->argv[j + 1], sdsLen(e->argv[j + 1]), &v))
                return (int)v;
    }
    return e->dbid;
}

void replicaKeysNoteEffects(const Effect *ops, int count) {
    for (int i = 0; i < count; i++) {
        const Effect *e = &ops[i];
        if (e->argc < 2 || !setsTtl(e->argv[0])) continue;
        Command *cmd = commandLookupArgv(e->argc, e->argv);
        if (!cmd) continue;
        KeyResult kr;
        keyResultInit(&kr);
        int n = commandKeys(cmd, e->argc, e->argv, &kr);
        for (int k = 0; k < n; k++) {
            int pos = kr.keys[k].pos;
            int dbid = targetDb(e, pos);
            if (dbid < 0 || dbid >= server.cfg.databases) continue;
            sds key = e->argv[pos];
            kvobj *o = dbFind(&server.db[dbid], key, sdsLen(key));
            if (o && kvHasExpire(o)) remember(dbid, key, sdsLen(key));
        }
        keyResultFree(&kr);
    }
}

static void freeEntry(void *entry, void *priv) {
    (void)priv;
    xfree(entry);
}

void replicaKeysForget(void) {
    if (tracked) htabClear(tracked, freeEntry, NULL);
}

size_t replicaKeysCount(void) { return tracked ? htabSize(tracked) : 0; }

void replicaKeysCron(void) {
    if (!tracked || !htabSize(tracked)) return;
    if (!server.isReplica || server.cfg.replicaReadOnly) {
        replicaKeysForget();
        return;
    }
    TrackedKey **drop = NULL;
    size_t ndrop = 0, cap = 0;
    HtabIter it;
    TrackedKey *t;
    htabIterInit(&it, tracked);
    while ((t = htabIterNext(&it)) != NULL) {
        int dbid = tkDb(t);
        kvobj *o = dbid < server.cfg.databases ? dbFind(&server.db[dbid], t->k + TK_DB, t->klen - TK_DB) : NULL;
        if (o && kvHasExpire(o) && !kvIsExpired(o)) continue;
        if (ndrop == cap) {
            cap = cap ? cap * 2 : 16;
            drop = xrealloc(drop, cap * sizeof(*drop));
        }
        drop[ndrop++] = t;
    }
    htabIterRelease(&it);
    for (size_t i = 0; i < ndrop; i++) {
        t = drop[i];
        htabUnlink(tracked, t->k, t->klen);
        int dbid = tkDb(t);
        const char *key = t->k + TK_DB;
        size_t len = t->klen - TK_DB;
        if (dbid < server.cfg.databases) {
            Db *db = &server.db[dbid];
            kvobj *o = dbFind(db, key, len);
            if (o && kvIsExpired(o)) {
                /* Deleted as a lazy expiry deletes it: a lookup with lazy
                 * deletion allowed for this one call. */
                int saved = dbNoLazyExpire;
                dbNoLazyExpire = 0;
                dbLookupWrite(db, key, len);
                dbNoLazyExpire = saved;
            }
        }
        xfree(t);
    }
    xfree(drop);
}
