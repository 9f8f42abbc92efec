/* t_member_ttl.c -- member TTLs of sets and sorted sets: EXPIREMEMBER,
 * EXPIREMEMBERAT, PEXPIREMEMBERAT (KeyDB's commands) and the two-argument
 * TTL / PTTL key member.
 *
 * The TTLs live beside the keyspace, not in the values (whose encodings
 * stay Redis's, so RDB, DUMP, DEBUG DIGEST and OBJECT ENCODING are
 * unchanged):
 *   per database (MtDb, found by its Db pointer, so SWAPDB and a replica's
 *   databases loaded aside swap with their keys): `keys`, key name ->
 *   MtKey, and `due`, be64(earliest TTL) . key name -> MtKey, the keys in
 *   the order their first member falls due;
 *   per key (MtKey): `byMember`, member -> absolute unix ms, and `byTime`,
 *   be64(ms) . member, the members in the order they fall due.
 *
 * Invariants:
 *  - an MtKey is in its MtDb's `keys` iff byTime is non-empty, and then it
 *    is in `due` exactly once, under `queued` = the first time of byTime;
 *  - byMember and byTime hold the same (member, ms) pairs;
 *  - dbMemberTtlKeys (db.h) is the number of MtKeys over all databases;
 *  - a pair may be stale (its member was removed since: SREM, SPOP, ZREM,
 *    ZPOP..., which do not come here); such a pair is never visible: TTL
 *    answers -2 for a missing member, expiry removes nothing, and a member
 *    added anew drops it first (memberTtlForget, called by SADD, SMOVE,
 *    ZADD and ZINCRBY).  It is reclaimed when its time comes;
 *  - a key leaving the table (DEL, overwrite, expiry, eviction) drops its
 *    MtKey through dbHooks.memberKeyGone; RENAME and MOVE detach it first
 *    and attach it to the new key, COPY copies it.
 *
 * Expiry (primary only; a replica and a loading server never delete): a
 * lookup that finds a key with a member due removes its due members first
 * (dbHooks.memberDue), and memberTtlActiveCycle, from the server's timer,
 * reclaims the rest with bounded work.  On a replica a read lookup of such
 * a key gets a view instead: a copy without the due members, freed before
 * the event loop sleeps, so expired members are hidden there too (as Redis
 * hides expired keys on a replica) until the primary's SREM/ZREM arrive.  Each removal is stated as `SREM key
 * m...` / `ZREM key m...` (effects: AOF and replicas, so a Redis 7.0
 * replica stays identical), with the keyspace event `srem` / `zrem` (and
 * `del` when the collection empties and is deleted).  Setting a TTL
 * propagates as `PEXPIREMEMBERAT key member <ms>`, with the event
 * `expiremember` (generic class).
 *
 * A hash key: EXPIREMEMBER and TTL/PTTL key field on it run the hash-field
 * TTL mechanism (HEXPIRE, HPTTL: types/t_hash.c), one mechanism for both;
 * the effect is then HPEXPIREAT key <ms> FIELDS 1 field. */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/omap.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "types/hash.h"
#include "types/member_ttl.h"
#include "types/set.h"
#include "types/zset.h"

typedef struct MtKey {
    sds key;
    Omap *byMember;   /* member -> (void *)(uintptr_t)ms, ms > 0 */
    Omap *byTime;     /* be64(ms) . member -> (void *)1 */
    long long queued; /* the time it is filed under in its MtDb's due */
} MtKey;

typedef struct MtDb {
    Db *db;
    Omap *keys; /* key name -> MtKey */
    Omap *due;  /* be64(queued) . key name -> MtKey */
} MtDb;

static MtDb *mtDbs;
static int mtCount, mtCap;

/* Members removed per call of the active cycle at most (and per key it
 * visits), whatever the time budget. */
#define MT_CYCLE_MEMBERS 1000

/* --- the index --- */

static void be64(unsigned char *out, long long v) {
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--, u >>= 8) out[i] = (unsigned char)(u & 255);
}

static long long unbe64(const unsigned char *p) {
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u = (u << 8) | p[i];
    return (long long)u;
}

/* be64(when) . bytes, in *buf (heap) -- the caller frees it. */
static unsigned char *timeKey(long long when, const char *s, size_t len, size_t *outLen) {
    unsigned char *k = xmalloc(8 + len);
    be64(k, when);
    memcpy(k + 8, s, len);
    *outLen = 8 + len;
    return k;
}

static MtDb *mtDbFind(Db *db, int create) {
    for (int i = 0; i < mtCount; i++)
        if (mtDbs[i].db == db) return &mtDbs[i];
    if (!create) return NULL;
    for (int i = 0; i < mtCount; i++) /* reuse an empty slot of a gone database */
        if (omapSize(mtDbs[i].keys) == 0 && (mtDbs[i].db < server.db || mtDbs[i].db >= server.db + server.cfg.databases)) {
            mtDbs[i].db = db;
            return &mtDbs[i];
        }
    if (mtCount == mtCap) {
        mtCap = mtCap ? mtCap * 2 : 16;
        mtDbs = xrealloc(mtDbs, sizeof(*mtDbs) * (size_t)mtCap);
    }
    MtDb *d = &mtDbs[mtCount++];
    d->db = db;
    d->keys = omapCreate();
    d->due = omapCreate();
    return d;
}

static void mtKeyFree(MtKey *mk) {
    omapFree(mk->byMember, NULL);
    omapFree(mk->byTime, NULL);
    sdsFree(mk->key);
    xfree(mk);
}

static void dueRemove(MtDb *d, MtKey *mk) {
    size_t n;
    unsigned char *k = timeKey(mk->queued, mk->key, sdsLen(mk->key), &n);
    omapDelete(d->due, k, n);
    xfree(k);
}

static void dueInsert(MtDb *d, MtKey *mk) {
    size_t n;
    unsigned char *k = timeKey(mk->queued, mk->key, sdsLen(mk->key), &n);
    omapInsert(d->due, k, n, mk);
    xfree(k);
}

/* Removes mk from d and frees it. */
static void mtKeyDrop(MtDb *d, MtKey *mk) {
    dueRemove(d, mk);
    omapDelete(d->keys, mk->key, sdsLen(mk->key));
    mtKeyFree(mk);
    dbMemberTtlKeys--;
}

/* Restores the invariants after byTime changed: refiles mk under its first
 * time, or drops it when it has no TTL left (mk is then freed). */
static void mtRequeue(MtDb *d, MtKey *mk) {
    OmapNode *first = omapFirst(mk->byTime);
    if (!first) {
        mtKeyDrop(d, mk);
        return;
    }
    size_t len;
    long long when = unbe64(omapKey(first, &len));
    if (when == mk->queued) return;
    dueRemove(d, mk);
    mk->queued = when;
    dueInsert(d, mk);
}

static MtKey *mtKeyGet(MtDb *d, const char *key, size_t len, int create) {
    MtKey *mk = omapFind(d->keys, key, len);
    if (mk || !create) return mk;
    mk = xmalloc(sizeof(*mk));
    mk->key = sdsNewLen(key, len);
    mk->byMember = omapCreate();
    mk->byTime = omapCreate();
    mk->queued = 0;
    omapInsert(d->keys, key, len, mk);
    dbMemberTtlKeys++;
    return mk;
}

/* The member's TTL (ms), or -1. */
static long long mtGet(MtKey *mk, const char *m, size_t len) {
    void *v = omapFind(mk->byMember, m, len);
    return v ? (long long)(uintptr_t)v : -1;
}

/* Drops the member's pair, if any; does not requeue. */
static int mtUnsetRaw(MtKey *mk, const char *m, size_t len) {
    void *v = omapDelete(mk->byMember, m, len);
    if (!v) return 0;
    size_t n;
    unsigned char *k = timeKey((long long)(uintptr_t)v, m, len, &n);
    omapDelete(mk->byTime, k, n);
    xfree(k);
    return 1;
}

/* Sets member m of key (in d) to expire at `when` (> 0). */
static void mtSet(MtDb *d, const char *key, size_t klen, const char *m, size_t len, long long when) {
    MtKey *mk = mtKeyGet(d, key, klen, 1);
    int fresh = omapSize(mk->byTime) == 0;
    mtUnsetRaw(mk, m, len);
    omapInsert(mk->byMember, m, len, (void *)(uintptr_t)when);
    size_t n;
    unsigned char *k = timeKey(when, m, len, &n);
    omapInsert(mk->byTime, k, n, (void *)1);
    xfree(k);
    if (fresh) {
        mk->queued = when;
        dueInsert(d, mk);
    } else {
        mtRequeue(d, mk);
    }
}

void memberTtlForget(Db *db, const sds key, const sds m) {
    MtDb *d = mtDbFind(db, 0);
    MtKey *mk = d ? omapFind(d->keys, key, sdsLen(key)) : NULL;
    if (mk && mtUnsetRaw(mk, m, sdsLen(m))) mtRequeue(d, mk);
}

struct MtKey *memberTtlDetach(Db *db, const sds key) {
    MtDb *d = mtDbFind(db, 0);
    MtKey *mk = d ? omapFind(d->keys, key, sdsLen(key)) : NULL;
    if (!mk) return NULL;
    dueRemove(d, mk);
    omapDelete(d->keys, key, sdsLen(key));
    dbMemberTtlKeys--;
    return mk;
}

void memberTtlAttach(Db *ddb, const sds dkey, struct MtKey *mk) {
    if (!mk) return;
    MtDb *d = mtDbFind(ddb, 1);
    MtKey *old = omapFind(d->keys, dkey, sdsLen(dkey));
    if (old) mtKeyDrop(d, old); /* cannot happen: dkey was just added */
    sdsFree(mk->key);
    mk->key = sdsDup(dkey);
    omapInsert(d->keys, dkey, sdsLen(dkey), mk);
    dbMemberTtlKeys++;
    dueInsert(d, mk);
}

void memberTtlCopy(Db *db, const sds key, Db *ddb, const sds dkey) {
    MtDb *d = mtDbFind(db, 0);
    MtKey *mk = d ? omapFind(d->keys, key, sdsLen(key)) : NULL;
    if (!mk) return;
    MtDb *dd = mtDbFind(ddb, 1);
    for (OmapNode *e = omapFirst(mk->byMember); e; e = omapNext(e)) {
        size_t len;
        const char *m = (const char *)omapKey(e, &len);
        mtSet(dd, dkey, sdsLen(dkey), m, len, (long long)(uintptr_t)omapValue(e));
    }
}

/* --- the values --- */

static int hasMembers(const kvobj *o) { return kvType(o) == OBJ_SET || kvType(o) == OBJ_ZSET; }

static int valueContains(const kvobj *o, const char *m, size_t len) {
    if (kvType(o) == OBJ_SET) return setValueContains(o, m, len);
    double score;
    return zsetGetScore(o, (const unsigned char *)m, len, &score);
}

static int valueRemove(kvobj *o, const char *m, size_t len) {
    if (kvType(o) == OBJ_SET) return setValueRemove(o, m, len);
    return zsetValueRemove(o, (const unsigned char *)m, len);
}

static unsigned long valueLength(const kvobj *o) {
    return kvType(o) == OBJ_SET ? setValueLength(o) : zsetLength(o);
}

/* After members were removed from o (key `key`): the SREM/ZREM effect of
 * the removed members[0..n), the events, WATCH; deletes the key when it
 * emptied.  Returns 1 when the key was deleted. */
static int announceRemoved(Db *db, kvobj *o, const sds key, sds *members, size_t n) {
    int set = kvType(o) == OBJ_SET;
    if (effectsOn) {
        EffectArg *args = xmalloc(sizeof(*args) * (n + 2));
        args[0] = set ? EA_STR("SREM") : EA_STR("ZREM");
        args[1] = EA_SDS(key);
        for (size_t i = 0; i < n; i++) args[i + 2] = EA_SDS(members[i]);
        effectsAlso(db->id, (int)n + 2, args);
        xfree(args);
    }
    notifyKeyspaceEvent(set ? NOTIFY_SET : NOTIFY_ZSET, set ? "srem" : "zrem", key, sdsLen(key), db->id);
    int gone = valueLength(o) == 0;
    if (gone) {
        dbDelete(db, key, sdsLen(key));
        notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, sdsLen(key), db->id);
    }
    signalModifiedKey(NULL, db, key, sdsLen(key));
    return gone;
}

/* Removes the members of o (its MtKey mk in d) whose TTL is before now, at
 * most max of them (*done counts the pairs handled).  Returns o, or NULL
 * when the key emptied and was deleted.  mk may be freed. */
static kvobj *expireDue(MtDb *d, MtKey *mk, kvobj *o, long long now, long max, long *done) {
    sds key = sdsDup(mk->key);
    size_t cap = 16, n = 0;
    sds *removed = xmalloc(sizeof(sds) * cap);
    long handled = 0;
    OmapNode *first;
    while (handled < max && (first = omapFirst(mk->byTime)) != NULL) {
        size_t klen;
        const unsigned char *k = omapKey(first, &klen);
        if (unbe64(k) >= now) break;
        sds m = sdsNewLen((const char *)k + 8, klen - 8);
        mtUnsetRaw(mk, m, sdsLen(m));
        handled++;
        if (!valueRemove(o, m, sdsLen(m))) {
            sdsFree(m);
            continue;
        }
        if (n == cap) {
            cap *= 2;
            removed = xrealloc(removed, sizeof(sds) * cap);
        }
        removed[n++] = m;
    }
    mtRequeue(d, mk); /* may free mk */
    if (done) *done = handled;
    if (n && announceRemoved(d->db, o, key, removed, n)) o = NULL;
    for (size_t i = 0; i < n; i++) sdsFree(removed[i]);
    xfree(removed);
    sdsFree(key);
    return o;
}

/* --- keyspace hooks (db.h) --- */

/* Replicas' views (copies without the due members) handed out by read
 * lookups since the loop last slept; freed before it sleeps again (a reply
 * copies what it sends from a collection, so nothing refers to them). */
static kvobj **views;
static size_t viewCount, viewCap;

static void freeViews(void) {
    if (!viewCount) return;
    for (size_t i = 0; i < viewCount; i++) kvFree(views[i]);
    viewCount = 0;
}

/* A copy of o (same key, expire, type and encoding) without the members
 * due before now; NULL when none is left (the key reads as missing). */
static kvobj *replicaView(kvobj *o, MtKey *mk, long long now) {
    const ObjectType *t = kvType(o) == OBJ_SET ? &setObjectType : &zsetObjectType;
    int enc = kvEncoding(o);
    void *copy = t->dup(kvPtr(o), enc);
    kvobj *v = kvHasExpire(o) ? kvCreatePtrExpire(kvKey(o), kvKeyLen(o), kvType(o), enc, copy, kvExpire(o))
                              : kvCreatePtr(kvKey(o), kvKeyLen(o), kvType(o), enc, copy);
    for (OmapNode *n = omapFirst(mk->byTime); n; n = omapNext(n)) {
        size_t len;
        const unsigned char *k = omapKey(n, &len);
        if (unbe64(k) >= now) break;
        valueRemove(v, (const char *)k + 8, len - 8);
    }
    if (viewCount == viewCap) {
        viewCap = viewCap ? viewCap * 2 : 8;
        views = xrealloc(views, sizeof(*views) * viewCap);
    }
    views[viewCount++] = v;
    return valueLength(v) ? v : NULL;
}

static kvobj *dueHook(Db *db, kvobj *o, int mode) {
    if (!hasMembers(o)) return o;
    MtDb *d = mtDbFind(db, 0);
    MtKey *mk = d ? omapFind(d->keys, kvKey(o), kvKeyLen(o)) : NULL;
    if (!mk || mk->queued >= dbNowMs) return o;
    if (mode == DB_MEMBER_DELETE) return expireDue(d, mk, o, dbNowMs, LONG_MAX, NULL);
    if (mode == DB_MEMBER_VIEW) return replicaView(o, mk, dbNowMs);
    return o;
}

static void keyGoneHook(Db *db, const char *key, size_t len) {
    MtDb *d = mtDbFind(db, 0);
    MtKey *mk = d ? omapFind(d->keys, key, len) : NULL;
    if (mk) mtKeyDrop(d, mk);
}

static void emptiedHook(Db *db) {
    MtDb *d = mtDbFind(db, 0);
    if (!d) return;
    OmapNode *n;
    while ((n = omapFirst(d->keys)) != NULL) mtKeyDrop(d, omapValue(n));
}

static void swappedHook(Db *a, Db *b) {
    MtDb *da = mtDbFind(a, 0), *db = mtDbFind(b, 0);
    if (da) da->db = b;
    if (db) db->db = a;
}

/* --- active expiry --- */

void memberTtlActiveCycle(long long budgetUs) {
    if (!dbMemberTtlKeys) return;
    long long start = ustime(), now = mstime();
    long work = 0;
    int visits = 0;
    for (int i = 0; i < mtCount && work < MT_CYCLE_MEMBERS; i++) {
        MtDb *d = &mtDbs[i];
        if (d->db < server.db || d->db >= server.db + server.cfg.databases) continue; /* loaded aside */
        OmapNode *first;
        while (work < MT_CYCLE_MEMBERS && (first = omapFirst(d->due)) != NULL) {
            size_t klen;
            if (unbe64(omapKey(first, &klen)) >= now) break;
            MtKey *mk = omapValue(first);
            kvobj *o = dbFind(d->db, mk->key, sdsLen(mk->key));
            work++;
            if (!o) { /* cannot happen (memberKeyGone), but never loop on it */
                mtKeyDrop(d, mk);
                continue;
            }
            if (kvUnverified(o) && !(o = dbVerifyOrDrop(d->db, o))) continue; /* dropped, and mk with it */
            if (!hasMembers(o) || kvIsExpired(o)) {
                /* the key's own expiry removes it; its member TTLs go now */
                mtKeyDrop(d, mk);
                continue;
            }
            long done = 0;
            expireDue(d, mk, o, now, MT_CYCLE_MEMBERS - work, &done);
            work += done;
            if ((++visits & 15) == 0 && ustime() - start > budgetUs) return;
        }
    }
}

/* --- commands --- */

/* EXPIREMEMBER on a hash key: the hash-field TTL mechanism (HEXPIRE's,
 * types/t_hash.c) answers it, with the same reply as on a set. */
static void hashMemberExpire(Client *c, kvobj *o, const sds field, long long when) {
    hashExpireMember(c, o, field, when);
}

/* TTL / PTTL key field on a hash key: likewise (HTTL / HPTTL). */
static void hashMemberTtl(Client *c, kvobj *o, const sds field, int ms) {
    hashMemberTtlReply(c, o, field, ms);
}

/* EXPIREMEMBER key member delay [s|ms] (basetime = now, unit as given,
 * seconds by default), EXPIREMEMBERAT key member unix-seconds (basetime 0,
 * seconds), PEXPIREMEMBERAT key member unix-ms (basetime 0, ms).  Replies
 * 1 when the TTL was set (or the member removed, its time being past), 0
 * when the key or the member is missing. */
static void expireMemberGeneric(Client *c, long long basetime, int seconds) {
    sds key = c->argv[1], m = c->argv[2];
    if (c->argc > 5 || (c->argc == 5 && basetime == 0)) {
        replyErrorSyntax(c);
        return;
    }
    if (c->argc == 5) {
        if (!strcasecmp(c->argv[4], "ms")) seconds = 0;
        else if (!strcasecmp(c->argv[4], "s")) seconds = 1;
        else {
            replyErrorSyntax(c);
            return;
        }
    }
    long long when;
    if (getLongLongOrReply(c, c->argv[3], &when, NULL) == -1) return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) goto invalid;
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) goto invalid;
    when += basetime;

    kvobj *o = dbLookupWrite(c->db, key, sdsLen(key));
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    if (kvType(o) == OBJ_HASH) {
        hashMemberExpire(c, o, m, when);
        return;
    }
    if (!hasMembers(o)) {
        replyErrorWrongType(c);
        return;
    }
    if (!valueContains(o, m, sdsLen(m))) {
        replyLongLong(c, 0);
        return;
    }
    int set = kvType(o) == OBJ_SET;
    if (when <= serverNowMs() && !dbNoLazyExpire) {
        /* Already past: the member goes now, as EXPIRE with a past time
         * deletes the key. */
        MtDb *d = mtDbFind(c->db, 0);
        MtKey *mk = d ? omapFind(d->keys, key, sdsLen(key)) : NULL;
        if (mk && mtUnsetRaw(mk, m, sdsLen(m))) mtRequeue(d, mk);
        valueRemove(o, m, sdsLen(m));
        notifyKeyspaceEvent(set ? NOTIFY_SET : NOTIFY_ZSET, set ? "srem" : "zrem", key, sdsLen(key), c->db->id);
        if (valueLength(o) == 0) {
            dbDelete(c->db, key, sdsLen(key));
            notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, sdsLen(key), c->db->id);
        }
        EffectArg args[3] = {set ? EA_STR("SREM") : EA_STR("ZREM"), EA_SDS(key), EA_SDS(m)};
        effectsRewrite(3, args);
    } else {
        if (when <= 0) when = 1; /* a past time on a replica or while loading: kept, never 0 */
        mtSet(mtDbFind(c->db, 1), key, sdsLen(key), m, sdsLen(m), when);
        notifyKeyspaceEvent(NOTIFY_GENERIC, "expiremember", key, sdsLen(key), c->db->id);
        /* Cairn's own command: never inside a MULTI/EXEC a Redis replica
         * would discard (effects.h EFFECT_UNWRAPPED). */
        effectsPrevent();
        if (effectsOn) {
            EffectArg args[4] = {EA_STR("PEXPIREMEMBERAT"), EA_SDS(key), EA_SDS(m), EA_NUM(when)};
            effectsAlsoTo(c->db->id, EFFECT_ALL | EFFECT_UNWRAPPED, 4, args);
        }
    }
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(1);
    replyLongLong(c, 1);
    return;

invalid:
    replyErrorFormat(c, "ERR invalid expire time in '%s' command", c->cmd ? c->cmd->name : "expiremember");
}

static void expirememberCommand(Client *c) { expireMemberGeneric(c, serverNowMs(), 1); }
static void expirememberatCommand(Client *c) { expireMemberGeneric(c, 0, 1); }
static void pexpirememberatCommand(Client *c) { expireMemberGeneric(c, 0, 0); }

void memberTtlReply(Client *c, int ms) {
    if (c->argc != 3) {
        replyErrorArity(c);
        return;
    }
    sds key = c->argv[1], m = c->argv[2];
    kvobj *o = dbLookupRead(c->db, key, sdsLen(key), LOOKUP_NOTOUCH);
    if (!o) {
        replyLongLong(c, -2);
        return;
    }
    if (kvType(o) == OBJ_HASH) {
        hashMemberTtl(c, o, m, ms);
        return;
    }
    if (!hasMembers(o)) {
        replyErrorWrongType(c);
        return;
    }
    if (!valueContains(o, m, sdsLen(m))) {
        replyLongLong(c, -2);
        return;
    }
    MtDb *d = mtDbFind(c->db, 0);
    MtKey *mk = d ? omapFind(d->keys, key, sdsLen(key)) : NULL;
    long long when = mk ? mtGet(mk, m, sdsLen(m)) : -1;
    if (when == -1) {
        replyLongLong(c, -1);
        return;
    }
    long long t = when - serverNowMs();
    if (t < 0) { /* past (a replica waiting for its primary's SREM/ZREM) */
        replyLongLong(c, -2);
        return;
    }
    replyLongLong(c, ms ? t : t / 1000 + (t % 1000 >= 500));
}

/* --- persistence --- */

static void putU32(sds *b, uint32_t v) {
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    *b = sdsCatLen(*b, x, 4);
}

static void putI64(sds *b, long long v) {
    unsigned char x[8];
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++, u >>= 8) x[i] = (unsigned char)(u & 255);
    *b = sdsCatLen(*b, x, 8);
}

/* Blob: records of u32 db, u32 keylen, key, u32 count, then count times
 * (u32 len, member, i64 ms); little-endian.  Only pairs whose member is
 * present are written. */
sds memberTtlRdbBlob(Db *dbs, int count) {
    if (!dbMemberTtlKeys) return NULL;
    sds b = sdsEmpty();
    for (int j = 0; j < count; j++) {
        MtDb *d = mtDbFind(&dbs[j], 0);
        if (!d) continue;
        for (OmapNode *n = omapFirst(d->keys); n; n = omapNext(n)) {
            MtKey *mk = omapValue(n);
            kvobj *o = dbFind(&dbs[j], mk->key, sdsLen(mk->key));
            if (!o || !hasMembers(o) || kvUnverified(o)) continue;
            sds rec = sdsEmpty();
            uint32_t k = 0;
            for (OmapNode *e = omapFirst(mk->byMember); e; e = omapNext(e)) {
                size_t len;
                const char *m = (const char *)omapKey(e, &len);
                if (!valueContains(o, m, len)) continue;
                putU32(&rec, (uint32_t)len);
                rec = sdsCatLen(rec, m, len);
                putI64(&rec, (long long)(uintptr_t)omapValue(e));
                k++;
            }
            if (k) {
                putU32(&b, (uint32_t)j);
                putU32(&b, (uint32_t)sdsLen(mk->key));
                b = sdsCatLen(b, mk->key, sdsLen(mk->key));
                putU32(&b, k);
                b = sdsCatLen(b, rec, sdsLen(rec));
            }
            sdsFree(rec);
        }
    }
    if (sdsLen(b) == 0) {
        sdsFree(b);
        return NULL;
    }
    return b;
}

static int getU32(const unsigned char *p, size_t len, size_t *pos, uint32_t *v) {
    if (len - *pos < 4) return -1;
    p += *pos;
    *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    *pos += 4;
    return 0;
}

long long memberTtlRdbLoad(Db *dbs, int count, const char *blob, size_t len) {
    const unsigned char *p = (const unsigned char *)blob;
    size_t pos = 0;
    long long restored = 0;
    while (pos < len) {
        uint32_t dbid, klen, n;
        if (getU32(p, len, &pos, &dbid) < 0 || getU32(p, len, &pos, &klen) < 0 || len - pos < klen) break;
        const char *key = (const char *)p + pos;
        pos += klen;
        if (getU32(p, len, &pos, &n) < 0) break;
        kvobj *o = dbid < (uint32_t)count ? dbFind(&dbs[dbid], key, klen) : NULL;
        if (o && !hasMembers(o)) o = NULL;
        int bad = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t mlen;
            if (getU32(p, len, &pos, &mlen) < 0 || len - pos < (size_t)mlen + 8) {
                bad = 1;
                break;
            }
            const char *m = (const char *)p + pos;
            pos += mlen;
            uint64_t u = 0;
            for (int b = 7; b >= 0; b--) u = (u << 8) | p[pos + (size_t)b];
            pos += 8;
            long long when = (long long)u;
            /* an unverified listpack is checked on first access: keep the
             * pair, stale pairs being harmless */
            if (o && when > 0 && (kvUnverified(o) || valueContains(o, m, mlen))) {
                mtSet(mtDbFind(&dbs[dbid], 1), key, klen, m, mlen, when);
                restored++;
            }
        }
        if (bad) break;
    }
    return restored;
}

void memberTtlForEach(Db *db, const kvobj *o, MemberTtlVisit *fn, void *priv) {
    if (!dbMemberTtlKeys || !hasMembers(o)) return;
    MtDb *d = mtDbFind(db, 0);
    MtKey *mk = d ? omapFind(d->keys, kvKey(o), kvKeyLen(o)) : NULL;
    if (!mk) return;
    for (OmapNode *e = omapFirst(mk->byMember); e; e = omapNext(e)) {
        size_t len;
        const char *m = (const char *)omapKey(e, &len);
        if (valueContains(o, m, len)) fn(priv, o, m, len, (long long)(uintptr_t)omapValue(e));
    }
}

/* --- start-up --- */

/* The server's timer: the active cycle under the rules of the key expiry
 * cycle (a primary, active expiry on, not paused). */
static void memberTtlCron(void) {
    if (!dbMemberTtlKeys || !server.activeExpireEnabled || server.expiryPaused || server.isReplica || dbNoLazyExpire)
        return; /* dbNoLazyExpire: loading (or a replica) */
    memberTtlActiveCycle(25000 / (server.cfg.hz ? server.cfg.hz : 10));
}

void memberTtlInit(void) {
    serverAddCronHook(memberTtlCron);
    serverAddBeforeSleepHook(freeViews);
    dbHooks.memberDue = dueHook;
    dbHooks.memberKeyGone = keyGoneHook;
    dbHooks.memberEmptied = emptiedHook;
    dbHooks.memberSwapped = swappedHook;
    /* TTL / PTTL key member: the table row keeps Redis's arity (COMMAND
     * INFO answers as Redis 7.0 does); dispatch admits the third argument,
     * and the handler refuses a fourth. */
    Command *ttl = commandLookup("ttl", 3), *pttl = commandLookup("pttl", 4);
    if (ttl) ttl->arity = -2;
    if (pttl) pttl->arity = -2;
}

Command memberTtlCommands[] = {
    {.name = "expiremember", .proc = expirememberCommand},
    {.name = "expirememberat", .proc = expirememberatCommand},
    {.name = "pexpirememberat", .proc = pexpirememberatCommand},
    {0},
};
