/* db.h -- the keyspace: databases of kvobj entries, expiry, the TTL index.
 *
 * Invariants:
 *  - a Db's key table (db->ks.keys) holds every key of that database
 *    exactly once; in cluster mode (dbUseSlots) each key is instead in
 *    the table of its hash slot (db->ks.slots, made at the first key),
 *    and db->ks.keys stays empty;
 *  - an entry carries KV_HAS_EXPIRE iff it sits in the TTL index
 *    (db->ks.ttl) at its stored position;
 *  - the key table and the TTL index are db.c's alone: everything else
 *    (src/db/evict.c and lazyfree.c too) uses the lookups, the changes and
 *    the keyspace API below (size, walks, scan, sampling, bulk drop), so
 *    the keyspace can be split by hash slot without touching its users
 *    (scripts/check-layers.sh enforces it);
 *  - only functions in this layer move or free entries.  A kvobj pointer
 *    obtained from a lookup stays valid until the next call that takes a
 *    `kvobj **` (which may reallocate it and updates the caller's pointer)
 *    or deletes the key.
 *
 * Lookups apply lazy expiry: an expired key is deleted (and the deletion
 * counted, notified and propagated through the hooks below) and reported
 * absent. */
#ifndef CAIRN_DB_H
#define CAIRN_DB_H

#include <stdint.h>

#include "db/object.h"
#include "ds/chunkvec.h"
#include "ds/htab.h"
#include "ds/sds.h"

/* maxmemory-policy values. */
enum {
    MAXMEMORY_VOLATILE_LRU = 0, MAXMEMORY_VOLATILE_LFU, MAXMEMORY_VOLATILE_RANDOM,
    MAXMEMORY_VOLATILE_TTL, MAXMEMORY_ALLKEYS_LRU, MAXMEMORY_ALLKEYS_LFU,
    MAXMEMORY_ALLKEYS_RANDOM, MAXMEMORY_NO_EVICTION
};

/* The settings the keyspace reads.  They belong to the server's
 * configuration (server.cfg.keyspace, changed in place by CONFIG SET); the
 * server points dbConfig at them at start-up.  Until then it points at the
 * defaults. */
typedef struct DbConfig {
    int maxmemoryPolicy;    /* maxmemory-policy: LRU clock or LFU counter */
    int lfuLogFactor;       /* lfu-log-factor */
    int lfuDecayTime;       /* lfu-decay-time, minutes */
    int packIdleSeconds;    /* cairn-pack-idle-seconds: 0 = never pack */
} DbConfig;
extern const DbConfig *dbConfig;

/* A database's key table and TTL index: PRIVATE to src/db/db.c.  Every
 * other file -- src/db/evict.c and lazyfree.c included -- goes through the
 * keyspace API below (size, walks, scan, sampling, bulk drop), so that the
 * table can later be split (by hash slot, for Cluster) without touching
 * them; scripts/check-layers.sh fails on a use of `ks` outside db.c/db.h. */
struct DbSlotTables;
typedef struct DbKeyspace {
    Htab keys;              /* kvobj entries keyed by their key bytes (no slots) */
    ChunkVec ttl;           /* TTL index: every entry with an expire (ttl.count) */
    long long avgTtl;       /* running estimate for INFO keyspace (ms) */
    /* Cluster mode (dbUseSlots): one key table per hash slot, made at the
     * database's first key (then `keys` stays empty); NULL otherwise. */
    struct DbSlotTables *slots;
    size_t slotKeys;        /* keys in the slot tables (dbSize) */
} DbKeyspace;

typedef struct Db {
    DbKeyspace ks;             /* private: see DbKeyspace */
    int id;                    /* database number */
    struct Htab *blockingKeys; /* key -> clients blocked on it (types/blocking.c) */
    struct Htab *watchedKeys;  /* key -> clients watching it (server/multi.c) */
} Db;

/* Database array lifecycle. */
Db *dbCreateAll(int count);
void dbFreeAll(Db *dbs, int count);
/* Frees every key of every database, leaving the databases empty (and
 * what other layers hang on them, watched and blocking keys, in place);
 * safe to call again. */
void dbClearAll(Db *dbs, int count);

/* Lookup flags. */
#define LOOKUP_NONE 0
#define LOOKUP_NOTOUCH (1 << 0)   /* do not update LRU/LFU */
#define LOOKUP_NOSTATS (1 << 1)   /* do not count keyspace hits/misses */
#define LOOKUP_NOEXPIRE (1 << 2)  /* do not delete an expired key (still reported absent) */
#define LOOKUP_NONOTIFY (1 << 3)  /* no keymiss event on a miss */

/* Read lookup: counts a hit or miss, touches LRU.  NULL when absent. */
kvobj *dbLookupRead(Db *db, const char *key, size_t len, int flags);
/* Write lookup: no hit/miss stats.  NULL when absent. */
kvobj *dbLookupWrite(Db *db, const char *key, size_t len);
/* Raw lookup: no expiry handling at all (SCAN, DEBUG, internals).  Like
 * the lookups above it rebuilds a packed value first (below), so the entry
 * may move: never call it for a key other than the last one a DbIter
 * returned while the walk goes on. */
kvobj *dbFind(Db *db, const char *key, size_t len);

/* A coming lookup of key fetched ahead (ds/htab.h htabPrefetch), for a
 * batch of commands about to run: dbPrefetchStart for each key (its bucket
 * slot), then dbPrefetchEntry for each (the entry the slot points to),
 * then dbPrefetchChain for each (the next entry of the chain when the
 * first is another key's, or the value behind the key's own entry), so
 * the cache misses of the batch overlap.  Only a hint: nothing changes.
 * key must stay in place until dbPrefetchChain. */
typedef struct DbPrefetch {
    const struct Htab *tab; /* NULL: nothing to fetch (empty table) */
    uint64_t hash;
    const char *key;
    size_t len;
    const void *first; /* the chain's first entry (dbPrefetchEntry), or NULL */
} DbPrefetch;
void dbPrefetchStart(Db *db, const char *key, size_t len, DbPrefetch *p);
void dbPrefetchEntry(DbPrefetch *p);
void dbPrefetchChain(const DbPrefetch *p);

/* Packed idle collections (ds/pack.h; docs/architecture.md "Packed idle
 * collections").  A small hash, sorted set or set listpack, or an intset,
 * idle for cairn-pack-idle-seconds, is kept in its entry in the packed
 * form (object.h kvPacked: encodings 3-5, reported as listpack/intset).
 * Every lookup and dbFind rebuilds the exact listpack/intset bytes first
 * (dbUnpack: the entry moves; expire, TTL position and access bits kept;
 * no notification, no WATCH, no dirty), so commands never see the packed
 * form.  Walks (DbIter, dbWalkVisit, dbScan) return entries as they are:
 * a serializer of a packed entry (RDB, AOF rewrite, DEBUG DIGEST) works
 * on dbUnpackedCopy, which changes nothing and may run on a save thread.
 * dbUnpack: o (packed) rebuilt in place in the table; returns the entry.
 * dbUnpackedCopy: a new free-standing entry (kvFree) with o's key, access
 * bits, expire and the rebuilt value; o unchanged.
 * dbPackCron: the timer's step of the background pass (about `us`
 * microseconds), which packs the entries idle long enough; `allowed` 0
 * (a fork child exists, an inline snapshot runs) pauses it.  Sets
 * dbRehashPending while a pass is unfinished, so that the idle loop's
 * dbRehashIdle also advances it. */
kvobj *dbUnpack(Db *db, kvobj *o);
kvobj *dbUnpackedCopy(const kvobj *o);
void dbPackCron(Db *dbs, int count, int allowed, long long us);
typedef struct DbPackStats {
    long long packs, unpacks; /* entries packed / rebuilt since start */
    long long packedKeys;     /* entries found packed by the last whole pass */
    long long passes;         /* whole passes done */
} DbPackStats;
extern DbPackStats dbPackStats;
/* True when the entry's expire has passed (the key is logically gone). */
int kvIsExpired(const kvobj *o);

/* Deferred value checks.  A hash or sorted-set listpack, or a list's
 * listpack nodes, loaded from an RDB file without deep sanitization have
 * only their headers checked at load (encoding OBJ_ENC_LISTPACK_UNVERIFIED
 * or OBJ_ENC_QUICKLIST_UNVERIFIED); entries, scores, order and duplicates
 * are checked on first access.  The read and write lookups do
 * it; so must every path that walks a value reached without them (dbFind,
 * a walk of the key table).  A value that fails is corrupt: its key is
 * deleted (dbHooks.valueCorrupt logs and propagates it) and reported
 * absent, as a lazily expired key is -- the server and every other key
 * stay.
 * dbVerify: 0 when o is fine now (verified in place, perhaps re-encoded,
 * the entry does not move), -1 when corrupt (nothing changed; *why set).
 * dbVerifyOrDrop: o, or NULL after deleting a corrupt key.
 * dbVerifyAll: verifies every unverified value of the databases (dropping
 * the corrupt), before a walk of the key tables (DEBUG DIGEST, an AOF
 * rewrite); nearly free once nothing is left unverified. */
int dbVerify(kvobj *o, const char **why);
kvobj *dbVerifyOrDrop(Db *db, kvobj *o);
void dbVerifyAll(Db *dbs, int count);
/* Values loaded unverified since the last dbVerifyAll (an upper bound). */
extern long long dbUnverified;

/* Add an entry whose key is absent.  Takes ownership. */
void dbAdd(Db *db, kvobj *o);
/* dbAdd unless the key is present (one lookup): NULL when added, else the
 * present entry (o is still the caller's). */
kvobj *dbAddUnique(Db *db, kvobj *o);
/* Replace an entry by a new one for the same key (new value, same or new
 * expire).  A fresh entry built with an expire (kvCreate...Expire) keeps
 * it; one without keeps the old expire when keepTtl, else has none.  Under
 * an LFU policy fresh takes old's counter (old was looked up: that was the
 * access).  Frees the old entry and its value.  Takes ownership of fresh. */
kvobj *dbReplace(Db *db, kvobj *old, kvobj *fresh, int keepTtl);
/* Set key to entry: add or overwrite (SET semantics).  The key's expire is
 * fresh's own when it was built with one, else the old one when flags has
 * DB_SET_KEEPTTL, else none.  An overwrite is an access of the old key, as
 * Redis's lookup before a set is (its LRU clock or LFU counter is touched),
 * unless flags has DB_SET_SEEN: the caller's own lookup of the key already
 * was that access.  Under an LFU policy fresh then takes the old key's
 * counter, as Redis's overwrite keeps the old value's.  Takes ownership of
 * fresh.  Returns the stored entry. */
#define DB_SET_KEEPTTL 1
#define DB_SET_SEEN 2
kvobj *dbSetKey(Db *db, kvobj *fresh, int flags);
/* dbSetKey of a string value (val copied; expire `when` if withExpire,
 * else none; flags 0): a plain SET or MSET.  A live string entry whose
 * block fits the new value as a fresh one would (kvRewriteString) is
 * overwritten in place: no allocation, no free, no relinking.  Returns
 * the stored entry. */
kvobj *dbSetString(Db *db, const char *key, size_t len, const char *val, size_t vlen, int withExpire,
                   long long when);
/* Delete a key; returns 1 if it existed.  Frees the entry. */
int dbDelete(Db *db, const char *key, size_t len);
/* Unlink without freeing; caller frees (used by UNLINK / lazy free). */
kvobj *dbUnlink(Db *db, const char *key, size_t len);
/* --- The keyspace API: what a user outside db.c may know of a database's
 * keys as a whole.  Each is defined over the keys, not over one table, so
 * it keeps its contract when the keyspace is split by hash slot. --- */

/* Number of keys (DBSIZE, INFO), counting logically expired ones not yet
 * deleted. */
static inline size_t dbSize(const Db *db) {
    return __builtin_expect(db->ks.slots == NULL, 1) ? htabSize(&db->ks.keys) : db->ks.slotKeys;
}
/* Number of keys with an expire (INFO "expires", RDB RESIZEDB). */
static inline size_t dbExpiresCount(const Db *db) { return db->ks.ttl.count; }
/* The running estimate of the keys' mean TTL in ms (INFO "avg_ttl"). */
static inline long long dbAvgTtl(const Db *db) { return db->ks.avgTtl; }
/* Bytes of the indexes, beyond the entries (MEMORY STATS): *mainBytes of
 * the key table's bucket arrays, *expiresBytes of the TTL index. */
void dbIndexBytes(const Db *db, size_t *mainBytes, size_t *expiresBytes);
/* The key tables themselves, read only, for DEBUG HTSTATS's report of
 * their shape (sizes, chains) and nothing else: counts, walks and lookups
 * go through the functions of this API.  dbKeyTables is how many there
 * are (1, or DB_SLOTS in cluster mode once the database had a key);
 * dbKeyTable(db, i) is table i < dbKeyTables(db). */
size_t dbKeyTables(const Db *db);
const Htab *dbKeyTable(const Db *db, size_t i);
/* A hint that the database is about to hold `keys` keys (an RDB's
 * RESIZEDB): the table is sized for them at once instead of growing step
 * by step (no effect in cluster mode: the split by slot is not known). */
void dbExpand(Db *db, size_t keys);

/* Walks every key once (KEYS, DEBUG DIGEST, an RDB save, an AOF rewrite).
 * The walk is safe: a table does not rehash while it is walked (in
 * cluster mode the slot tables are walked one after the other, in slot
 * order), so each key
 * present throughout is returned exactly once; the caller may delete or
 * replace (dbReplace, dbVerifyOrDrop...) the key last returned and add
 * keys (which may or may not be returned), never delete another.  Keys
 * come as they are: no lazy expiry, no deferred value check, no LRU
 * touch.  Always call dbIterRelease, even after dbIterNext gave NULL.
 * The fields are private. */
typedef struct DbIter {
    HtabIter it;    /* over the table being walked */
    Db *db;
    unsigned slot;  /* cluster mode: the slot of that table */
    int state;      /* 0: one table; 1: slot tables; 2: slot tables, done */
} DbIter;
void dbIterInit(DbIter *it, Db *db);
/* The next key, or NULL when done. */
kvobj *dbIterNext(DbIter *it);
void dbIterRelease(DbIter *it);

/* SCAN's cursor walk.  Start with cursor 0; each call hands a few keys to
 * fn(priv, entry) (entry is a kvobj *) and returns the cursor for the next
 * call, 0 when the walk is done.  Guarantees, as SCAN's: every key present
 * from the first call to the last is returned at least once -- exactly
 * once today, whatever the table does between calls (grow, shrink,
 * rehash); a key added or deleted meanwhile may or may not be.  The
 * cursor is opaque: below 2^48 (one of 2^48 or more ends the walk at
 * once); in cluster mode below 2^62 (ends at once from 2^62), the low
 * DB_SLOT_BITS bits the slot whose table is being scanned, the bits above
 * that table's own cursor.  fn may delete the key it is given, nothing else; keys come as
 * they are (no lazy expiry, no check, no touch). */
uint64_t dbScan(Db *db, uint64_t cursor, void (*fn)(void *priv, void *entry), void *priv);

/* A walk cut into units for several threads at once (the RDB save
 * threads): the keys are spread over dbWalkUnits(db) units, and
 * dbWalkVisit calls fn(priv, entry) on each key of units [from, to) and
 * returns how many it visited.  Units in ascending order give the keys in
 * the order dbIterNext does (in cluster mode the units are the buckets of
 * every slot table, slot after slot).  Read only: between dbWalkFreeze and
 * dbWalkThaw (which nest) the table does not rehash, and the caller keeps
 * the database unchanged; visits of disjoint ranges may then run on
 * different threads at once. */
void dbWalkFreeze(Db *db);
void dbWalkThaw(Db *db);
size_t dbWalkUnits(const Db *db);
size_t dbWalkVisit(const Db *db, size_t from, size_t to, void (*fn)(void *priv, void *entry), void *priv);

/* Random keys, for RANDOMKEY, eviction and expiry; each NULL / 0 when
 * there is none:
 *  dbRandomKey       a key, nearly uniformly (ds/htab.h htabRandom; in
 *                    cluster mode a slot is drawn with a chance
 *                    proportional to its keys, then a key of its table);
 *  dbSampleKeys      up to count distinct keys near a random spot into
 *                    out[] (eviction's sampling; htabSample; in cluster
 *                    mode from a slot drawn as above, then the next slots
 *                    holding keys while fewer than count were found);
 *  dbRandomVolatile  a key with an expire, uniformly. */
kvobj *dbRandomKey(Db *db);
unsigned dbSampleKeys(Db *db, void **out, unsigned count);
kvobj *dbRandomVolatile(Db *db);

/* Bulk drop.  dbEmpty removes every key now; dbEmptyAsync detaches them
 * and has the lazy-free thread free them, the database being empty and
 * usable at once (FLUSHALL ASYNC, replica-lazy-flush, a diskless load's
 * databases filled aside).  Both return the number of keys removed. */
long long dbEmpty(Db *db);
long long dbEmptyAsync(Db *db);
/* Swap the contents of two databases (SWAPDB, a diskless load's swap):
 * keys, expires and the TTL estimate; not the ids, waiters or watchers. */
void dbSwap(Db *a, Db *b);

/* Hash slots, for Cluster.  A key's slot is the CRC-16 (ds/crc16.h) of
 * its hash tag -- the bytes between its first '{' and the first '}' after
 * it, when not empty -- or else of the whole key, modulo DB_SLOTS.
 * dbUseSlots, called once before dbCreateAll (cluster-enabled), has every
 * database keep one key table per slot (made at its first key): then
 * dbSlotVisit hands fn(priv, entry) each key of one slot (fn may delete
 * the key it is given, nothing else; keys come as they are, as
 * dbIterNext's) in time proportional to that slot's keys, dbSlotCount
 * counts them in O(1) (expired ones not yet deleted included) and
 * dbSlotDrop deletes them (no hooks run: the caller notifies and
 * propagates) and returns how many.  A slot >= DB_SLOTS holds no key.
 * Without dbUseSlots nothing changes (one table per database) and the
 * three must not be called. */
#define DB_SLOT_BITS 14
#define DB_SLOTS (1u << DB_SLOT_BITS)
unsigned dbKeySlot(const char *key, size_t len);
void dbUseSlots(void);
int dbSlotsOn(void);
void dbSlotVisit(Db *db, unsigned slot, void (*fn)(void *priv, void *entry), void *priv);
size_t dbSlotCount(Db *db, unsigned slot);
long long dbSlotDrop(Db *db, unsigned slot);

/* Expire handling.  `when` is absolute unix ms.  May move *po. */
void dbSetExpire(Db *db, kvobj **po, long long when);
/* Returns 1 if an expire was removed.  May move *po. */
int dbRemoveExpire(Db *db, kvobj **po);

/* Entries whose value is an inline listpack (object.h).  Each moves the
 * entry (the old pointer is invalid) and keeps the table and the TTL index
 * pointing at it:
 *  dbResizeEntry    the entry's block becomes `size` bytes (its bytes up to
 *                   that size are kept) -- an inline listpack grows or is
 *                   trimmed;
 *  dbSetValueInline the value becomes an inline copy of lp[0..len) with room
 *                   for cap bytes; the old value is NOT freed (the caller
 *                   frees a heap listpack after the copy);
 *  dbSetValuePtr    the value becomes the pointer ptr with `encoding`
 *                   (an inline listpack moved out or converted); the old
 *                   inline bytes go with the old block. */
kvobj *dbResizeEntry(Db *db, kvobj *o, size_t size);
kvobj *dbSetValueInline(Db *db, kvobj *o, const void *lp, size_t len, size_t cap);
kvobj *dbSetValuePtr(Db *db, kvobj *o, int encoding, void *ptr);

/* Make a string value raw (an sds the caller may grow) for in-place edits
 * (APPEND, SETRANGE, SETBIT, ...): the one way to get a string value to
 * change in place.  A value a pending reply still sends (pinned, sds.h) is
 * copied first, the reply keeping the old bytes.  May move *po.  After editing, store the
 * possibly-moved sds back with kvSetPtr(*po, s). */
sds dbUnshareString(Db *db, kvobj **po);

/* Active expiry: run for at most `budgetUs` microseconds over all dbs,
 * sampling keys with a TTL.  fast=1 is the short beforeSleep cycle, as in
 * Redis: it runs only when the last cycle stopped on its time limit or the
 * running share of sampled keys found expired is above 10%, and starts at
 * most once per 2 budgets.  (Run before every sleep, 20 random samples of
 * a 10M-key TTL index cost ~40 cache and TLB misses per pipelined batch
 * while nothing expired.) */
void dbActiveExpireCycle(Db *dbs, int count, long long budgetUs, int fast);

/* Incremental rehash of the key tables from the timer (1 ms per db that is
 * rehashing) and shrinking of tables that emptied.  Sets dbRehashPending
 * while a key table is still rehashing. */
void dbTimerMaintenance(Db *dbs, int count);
/* Non-zero while a key table may have rehash work for dbRehashIdle: set by
 * dbAdd and dbTimerMaintenance, cleared by dbRehashIdle when none is left
 * (or by the caller when it may not rehash now). */
extern int dbRehashPending;
/* One bounded step of rehashing for an idle server: about `us`
 * microseconds over the key tables that are rehashing (and not paused),
 * so a table that grew finishes in a second or two once the load stops
 * instead of at the timer's 1 ms per tick (minutes at 10M keys), and its
 * old array is freed.  Updates dbRehashPending. */
void dbRehashIdle(Db *dbs, int count, long long us);
/* Moves the key tables' owed rehash steps (serverBeforeSleep, after the
 * replies are written). */
void dbPayRehash(Db *dbs, int count);

/* Hooks the server layer installs (each may be NULL):
 *  keyExpired: after a key was deleted by expiry (lazy or active), so that
 *              notifications, WATCH and propagation see it;
 *  keyAdded:   after dbAdd created a key ("new" keyspace event);
 *  keyMiss:    when a read lookup finds nothing ("keymiss" event);
 *  keyEvicted: see below. */
typedef struct DbHooks {
    void (*keyExpired)(Db *db, const char *key, size_t len);
    void (*keyAdded)(Db *db, const char *key, size_t len);
    void (*keyMiss)(Db *db, const char *key, size_t len);
    /* After maxmemory evicted a key (db/evict.c): stats, the "evicted"
     * event, propagation as DEL/UNLINK, WATCH. */
    void (*keyEvicted)(Db *db, const char *key, size_t len);
    /* Whether a key table at load factor `load` may grow by moreBytes of
     * slots now (NULL: always). */
    int (*tableGrowAllowed)(size_t moreBytes, double load);
    /* A latency-monitor event (expire-del, expire-cycle) that took ms. */
    void (*latency)(const char *event, long long ms);
    /* The deferred check of an unverified value (the persistence layer's):
     * 1 when o's listpack is fine as it is; 0 when it is fine once rebuilt
     * as *enc and *ptr (a pointer encoding; the caller frees the old one); -1
     * when corrupt, with the reason in *why. */
    int (*verifyValue)(const kvobj *o, int *enc, void **ptr, const char **why);
    /* After a key whose value failed its deferred check was deleted: the
     * warning, stats, propagation as DEL, WATCH. */
    void (*valueCorrupt)(Db *db, const char *key, size_t len, const char *why);
    /* Member TTLs of sets and sorted sets (types/t_member_ttl.c), called
     * only while dbMemberTtlKeys is nonzero:
     *  memberDue:     a lookup found o (not expired); returns o, or NULL
     *                 after deleting the key, once the members of o that
     *                 fell due were removed (mode DB_MEMBER_DELETE: not on
     *                 a replica nor while loading); with DB_MEMBER_VIEW (a
     *                 read lookup that may not delete) it may return a
     *                 copy without them, valid until the event loop
     *                 sleeps (a replica's view); with 0, o;
     *  memberKeyGone: a key left the table (deleted, overwritten, moved);
     *  memberEmptied: every key of db went (FLUSHDB, a replica's flush);
     *  memberSwapped: the contents of a and b were swapped (dbSwap). */
    kvobj *(*memberDue)(Db *db, kvobj *o, int mode);
    void (*memberKeyGone)(Db *db, const char *key, size_t len);
    void (*memberEmptied)(Db *db);
    void (*memberSwapped)(Db *a, Db *b);
    /* An in-process snapshot (persist/snapshot.c), called only while
     * dbSnapshotActive is nonzero, BEFORE the change, so the snapshot can
     * first write what it has not written yet:
     *  snapshotKeyGone: the key is about to leave the table (deleted,
     *                   expired, evicted, unlinked, moved);
     *  snapshotDbGone:  every key of db is about to go, or db's contents
     *                   are about to be swapped with another's. */
    void (*snapshotKeyGone)(Db *db, const char *key, size_t len);
    void (*snapshotDbGone)(Db *db);
} DbHooks;
#define DB_MEMBER_DELETE 1
#define DB_MEMBER_VIEW 2
/* Keys holding members with a TTL, over every database (maintained by
 * types/t_member_ttl.c): while 0 the lookups pay one load and a branch. */
extern long long dbMemberTtlKeys;
/* Nonzero while an in-process snapshot runs (set by persist/snapshot.c):
 * the deletions pay one load and a branch otherwise. */
extern int dbSnapshotActive;
/* The walk unit (dbWalkUnits' numbering) holding key, or where it would be
 * added now; stable while the table's rehashing is paused (dbWalkFreeze)
 * and no resize starts.  Without hash-slot tables only (SIZE_MAX with
 * them). */
size_t dbWalkUnitOf(const Db *db, const char *key, size_t len);
extern DbHooks dbHooks;
/* A module data type's value leaves its key (deleted, unlinked, renamed or
 * moved away, overwritten): src/module installs it once a type has an
 * unlink or free-effort callback; o is still whole when it is called. */
extern void (*dbModuleUnlinkHook)(Db *db, const kvobj *o);

/* Access bits for a new entry: the LRU clock, or the initial LFU counter
 * with the current time when an LFU maxmemory-policy is set. */
unsigned dbInitialLru(void);
/* An entry's LFU counter after decay (OBJECT FREQ, eviction). */
unsigned dbLfuDecayed(const kvobj *o);

/* The LRU clock in seconds (24 bits) — set by the server each tick. */
extern unsigned dbLruClock;
/* The current time in ms used for expiry decisions (cached per command so
 * that a command sees one consistent time, as in Redis). */
extern long long dbNowMs;
/* The same moment in us, set with it (due-time queues compare sub-ms
 * scores with it).  Whoever sets dbNowMs without it leaves it from an
 * earlier moment: a reader takes dbNowMs * 1000 then (never later than
 * the real time). */
extern long long dbNowUs;
/* Nonzero for the command of a CLIENT NO-TOUCH client (Redis 7.2): its
 * lookups leave the LRU/LFU alone (TOUCH clears it for its own). */
extern int dbNoTouch;
/* Set while loading or on a replica: lookups do not delete expired keys
 * (a replica sets only DB_NOLAZY_REPLICA: its write lookups -- a writable
 * replica's own writes -- still delete them). */
extern int dbNoLazyExpire;
#define DB_NOLAZY_REPLICA 2
/* Set while a replica runs its primary's commands: an expired key is still
 * there for them (only the primary decides when a key expires; its DEL
 * follows). */
extern int dbIgnoreExpire;
/* SipHash key of the key tables, random per process (set at start-up). */
extern uint8_t dbHashSeed[16];
/* Counters for INFO stats. */
typedef struct DbStats {
    long long keyspaceHits, keyspaceMisses, expiredKeys;
    double expiredStalePerc; /* running share of sampled keys found expired (0..1) */
    long long expiredTimeCapReached;
    long long expireCycleCpuUs; /* time spent in active expire cycles */
} DbStats;
extern DbStats dbStats;

#endif
