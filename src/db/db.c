/* db.c -- databases: the key table (ds/htab, intrusive, incremental
 * rehash), the TTL index and lazy expiry.
 *
 * The TTL index is an array of the entries that carry an expire, kept in
 * fixed chunks (ds/chunkvec: growing never moves or copies it, so a SET EX
 * never stalls on the index); each such entry stores its position, so
 * adding, removing and replacing are O(1) and the active cycle samples
 * uniformly with one random number.
 * Entries grow by 12 bytes (expire + position) when they get an expire:
 * that re-layout and every other move of an entry happens here.
 *
 * Both structures (Db.ks) are this file's alone: the rest of the server
 * reaches the keys as a whole through the keyspace API (db.h: dbSize,
 * DbIter, dbScan, the walk units, random keys, dbEmpty/dbEmptyAsync,
 * dbSwap), each a thin wrapper over the one key table, or in cluster mode
 * a walk or draw over the slot tables (below: hash slots). */
#include "db/db.h"
#include "db/lazyfree.h"

#include "ds/alloc.h"
#include "ds/intset.h"
#include "ds/listpack.h"
#include "ds/pack.h"
#include "ds/rand.h"
#include "ds/crc16.h"
#include "ds/siphash.h"
#include "ds/slab.h"
#include "ds/util.h"

#include <stdio.h>
#include <stdlib.h>

DbHooks dbHooks;
long long dbMemberTtlKeys;
int dbSnapshotActive;
unsigned dbLruClock;
long long dbNowMs;
long long dbNowUs;
int dbNoTouch;
int dbNoLazyExpire;
int dbIgnoreExpire;
DbStats dbStats;
uint8_t dbHashSeed[16];
int dbRehashPending;

static const DbConfig defaultConfig = {MAXMEMORY_NO_EVICTION, 10, 1, 5};
const DbConfig *dbConfig = &defaultConfig;

static uint64_t hashKey(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void entryKey(const void *entry, const void **key, size_t *len) {
    const kvobj *o = entry;
    *key = kvKey(o);
    *len = kvKeyLen(o);
}

/* A key table grows when the server allows it (maxmemory: not while the
 * new slots would pass the limit, up to load factor 1.618, as Redis). */
static int keyTableGrowAllowed(size_t moreBytes, double load) {
    return !dbHooks.tableGrowAllowed || dbHooks.tableGrowAllowed(moreBytes, load);
}

/* A key table's old bucket array, once its rehash is done, of at least
 * this many bytes is freed on the lazy-free thread: jemalloc hands blocks of
 * 8 MB or more straight back to the system (madvise), which took 2-8 ms on
 * the main thread for the 8-16 MB arrays of a table growing past 1-2M keys,
 * and grows with the table. */
#define KEY_TABLE_LAZY_BYTES (1u << 20)

static void keyTableFreeTable(void **table, size_t slots) {
    if (slots * sizeof(void *) >= KEY_TABLE_LAZY_BYTES) lazyfreeBlock(table);
    else xfree(table);
}

/* A new bucket array of at least KEY_TABLE_LAZY_BYTES is prepared on the
 * lazy-free thread: a rehash writes the new array's pages in random order,
 * and each first touch is a page fault (~25 us on this kind of VM), so the
 * first hundred SETs after a 16 MB array appeared took 2-3 ms of faults.
 * The table keeps filling its old array meanwhile; past load 1.5 (another
 * db's table took the thread's array) it allocates one here. */
static void **keyTableAllocTable(const Htab *h, size_t slots) {
    size_t bytes = slots * sizeof(void *);
    if (bytes < KEY_TABLE_LAZY_BYTES || htabSize(h) >= h->size[0] + h->size[0] / 2) return xcalloc(bytes);
    return lazyfreeTakeTable(slots);
}

/* The slot tables pay their rehash steps as they go; the single key table
 * leaves those its commands make due to dbPayRehash, after their replies
 * are written. */
#define KEY_TABLE_TYPE(maxOwed) {hashKey, entryKey, keyTableGrowAllowed, keyTableFreeTable, keyTableAllocTable, maxOwed}
static const HtabType keyTableType = KEY_TABLE_TYPE(0);
static const HtabType keyTableDeferType = KEY_TABLE_TYPE(4096);

/* --- hash slots (cluster mode) ---
 * With dbUseSlots, a database keeps one key table per hash slot
 * (DbSlotTables, made at its first key, freed when it is emptied by
 * dbEmpty / dbEmptyAsync), each an
 * ordinary Htab of the same type as the single table, so a slot's table
 * is sized for that slot's keys: a slot holding most keys (a BullMQ queue
 * under one hash tag) has chains as short as a spread keyspace's.  (The
 * earlier layout kept one table and put the slot in the hash's top bits:
 * a slot then had 1/16384 of the buckets whatever its share of the keys,
 * and a hot slot, or a node owning a third of the slots, had chains that
 * many times longer.)  Key counts per group of slots (two levels) draw a
 * slot in proportion to its keys (RANDOMKEY, eviction's sampling) and
 * find the next slot holding keys (SCAN, walks) in at most 80 reads; a
 * bitmap marks the slot tables that are rehashing, for the timer. */
typedef struct DbSlotTables {
    Htab tab[DB_SLOTS];                /* slot s's keys */
    uint64_t mid[DB_SLOTS >> 5];       /* keys of each group of 32 slots */
    uint64_t top[DB_SLOTS >> 10];      /* keys of each group of 1024 slots */
    uint64_t rehashing[DB_SLOTS / 64]; /* bit s: tab[s] may be rehashing */
    unsigned shrinkNext;               /* next slot the timer checks for a shrink */
    int frozen;                        /* dbWalkFreeze depth */
    size_t *walkFirst;                 /* while frozen: first walk unit of each slot, [DB_SLOTS] = total */
} DbSlotTables;

static int slotsOn;

/* The last key whose slot was computed, by content (a key's slot is a
 * function of its bytes alone, so the entry is never stale): a command's
 * key is hashed once, by the cluster's slot check, and each table lookup
 * of the same key (argv's copy, or the stored key's) finds it here for
 * one length test and a memcmp instead of the CRC.  Keys longer than
 * SLOT_CACHE_MAX are not kept.  Per thread, in case a thread other than
 * the main one ever computes a slot.  len SIZE_MAX: empty. */
#define SLOT_CACHE_MAX 64
static _Thread_local struct {
    size_t len;
    unsigned slot;
    char key[SLOT_CACHE_MAX];
} slotCache = {SIZE_MAX, 0, {0}};

static unsigned slotCompute(const char *key, size_t len) {
    const char *from = key, *open = memchr(key, '{', len);
    size_t n = len;
    if (open) {
        size_t at = (size_t)(open - key) + 1;
        const char *close = memchr(key + at, '}', len - at);
        if (close && close > key + at) {
            from = key + at;
            n = (size_t)(close - from);
        }
    }
    unsigned slot = crc16(from, n) & (DB_SLOTS - 1);
    if (len <= SLOT_CACHE_MAX) {
        memcpy(slotCache.key, key, len);
        slotCache.len = len;
        slotCache.slot = slot;
    }
    return slot;
}

/* a[0..len) == b[0..len), len <= SLOT_CACHE_MAX: 8-byte words (the last
 * one overlapping), without a call -- this runs on every table lookup of
 * cluster mode. */
static inline int shortKeyEq(const char *a, const char *b, size_t len) {
    uint64_t x, y;
    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y) return 0;
        }
        memcpy(&x, a + len - 8, 8);
        memcpy(&y, b + len - 8, 8);
        return x == y;
    }
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* dbKeySlot through the one-entry cache. */
static inline unsigned slotOf(const char *key, size_t len) {
    if (len == slotCache.len && shortKeyEq(key, slotCache.key, len)) return slotCache.slot;
    return slotCompute(key, len);
}

unsigned dbKeySlot(const char *key, size_t len) { return slotOf(key, len); }

void dbUseSlots(void) { slotsOn = 1; }

int dbSlotsOn(void) { return slotsOn; }

/* The table holding (or that would hold) key: the database's one table, or
 * its slot's. */
static inline Htab *tableOf(Db *db, const char *key, size_t len) {
    if (__builtin_expect(db->ks.slots == NULL, 1)) return &db->ks.keys;
    return &db->ks.slots->tab[slotOf(key, len)];
}

void dbPrefetchStart(Db *db, const char *key, size_t len, DbPrefetch *p) {
    Htab *t = tableOf(db, key, len);
    p->tab = htabSize(t) ? t : NULL;
    if (!p->tab) return;
    p->key = key;
    p->len = len;
    p->hash = hashKey(key, len);
    htabPrefetchHash(t, p->hash, 0);
}

void dbPrefetchEntry(DbPrefetch *p) {
    p->first = NULL;
    if (!p->tab) return;
    /* Also its slab's header: a write (SET, DEL) frees the entry it finds
     * (replaced or deleted), and the free reads and writes that header, a
     * line no other access brings in. */
    const void *e = p->first = htabPrefetchHash(p->tab, p->hash, 1);
    if (e) slabPrefetchHeader(e);
}

void dbPrefetchChain(const DbPrefetch *p) {
    if (!p->first) return;
    int own;
    const kvobj *o = htabPrefetchNext(p->tab, p->first, p->key, p->len, &own);
    if (!o) return;
    /* The key's own entry: its value too, when it lives behind a pointer
     * (a string over the inline size, a collection's header).  The next
     * entry of the chain: its slab's header, as for the first. */
    if (!own) slabPrefetchHeader(o);
    else if (kvSlotSizeFor(kvRawEncoding(o)) == 6) __builtin_prefetch(kvPtr(o));
}

/* The table to add key to: in cluster mode the slot tables are made at
 * the database's first key. */
static DbSlotTables *slotTablesMake(Db *db);
static inline Htab *tableForAdd(Db *db, const char *key, size_t len) {
    if (__builtin_expect(!slotsOn, 1)) return &db->ks.keys;
    if (!db->ks.slots) slotTablesMake(db);
    return &db->ks.slots->tab[slotOf(key, len)];
}

/* Key counts by groups of slots: mid[g] of slots [32 g, 32 g + 32),
 * top[t] of slots [1024 t, 1024 t + 1024); a slot's own count is its
 * table's size.  An update is two adds; a draw or a search reads at most
 * 16 + 32 + 32 counts. */
#define MID_SHIFT 5
#define TOP_SHIFT 10

static inline void countAdd(DbSlotTables *st, unsigned slot, int64_t d) {
    st->mid[slot >> MID_SHIFT] += (uint64_t)d;
    st->top[slot >> TOP_SHIFT] += (uint64_t)d;
}

/* The slot holding key number r (r < the keys of all slots) in slot
 * order. */
static unsigned slotOfKeyNumber(const DbSlotTables *st, uint64_t r) {
    unsigned t = 0, g, s;
    while (t + 1 < DB_SLOTS >> TOP_SHIFT && r >= st->top[t]) r -= st->top[t++];
    g = t << (TOP_SHIFT - MID_SHIFT);
    while (g + 1 < (DB_SLOTS >> MID_SHIFT) && r >= st->mid[g]) r -= st->mid[g++];
    s = g << MID_SHIFT;
    while (s + 1 < DB_SLOTS && r >= htabSize(&st->tab[s])) r -= htabSize(&st->tab[s++]);
    return s;
}

/* The first slot >= slot holding keys, or DB_SLOTS. */
static unsigned slotNextFull(const DbSlotTables *st, size_t total, unsigned slot) {
    (void)total;
    while (slot < DB_SLOTS) {
        if (htabSize(&st->tab[slot])) return slot;
        slot++;
        if (slot & ((1u << MID_SHIFT) - 1)) continue;
        /* At a group's start: skip empty groups, then empty top groups. */
        while (slot < DB_SLOTS && st->mid[slot >> MID_SHIFT] == 0) {
            slot += 1u << MID_SHIFT;
            if (!(slot & ((1u << TOP_SHIFT) - 1)))
                while (slot < DB_SLOTS && st->top[slot >> TOP_SHIFT] == 0) slot += 1u << TOP_SHIFT;
        }
    }
    return DB_SLOTS;
}

static void markRehashing(DbSlotTables *st, unsigned slot) {
    st->rehashing[slot / 64] |= 1ull << (slot % 64);
    dbRehashPending = 1; /* the idle loop finishes it */
}

/* A slot table whose old array has at most this many buckets finishes a
 * rehash as soon as it starts (at most a few thousand instructions, once):
 * thousands of small tables otherwise sit with both arrays until the
 * timer reaches them -- after 1M keys spread over 16384 slots, 3 bytes a
 * key more than once they settle. */
#define SLOT_REHASH_AT_ONCE 512

/* A key was added to (d = 1) or removed from (d = -1) table h. */
static inline void slotCounted(Db *db, Htab *h, int d) {
    DbSlotTables *st = db->ks.slots;
    if (__builtin_expect(st == NULL, 1) || h == &db->ks.keys) return;
    unsigned slot = (unsigned)(h - st->tab);
    db->ks.slotKeys += (size_t)(int64_t)d;
    countAdd(st, slot, d);
    if (d > 0 && htabIsRehashing(h)) {
        if (h->size[0] <= SLOT_REHASH_AT_ONCE && h->pauseRehash == 0 && !st->frozen)
            while (htabRehashStep(h, SLOT_REHASH_AT_ONCE)) {
            }
        if (htabIsRehashing(h)) markRehashing(st, slot);
    }
}

void dbSlotVisit(Db *db, unsigned slot, void (*fn)(void *priv, void *entry), void *priv) {
    if (!db->ks.slots || slot >= DB_SLOTS) return;
    htabVisitHashRange(&db->ks.slots->tab[slot], 0, UINT64_MAX, fn, priv);
}

size_t dbSlotCount(Db *db, unsigned slot) {
    if (!db->ks.slots || slot >= DB_SLOTS) return 0;
    return htabSize(&db->ks.slots->tab[slot]);
}

typedef struct SlotDrop {
    Db *db;
    long long n;
} SlotDrop;

static void dropCb(void *priv, void *entry) {
    SlotDrop *d = priv;
    kvobj *o = entry;
    d->n += dbDelete(d->db, kvKey(o), kvKeyLen(o));
}

long long dbSlotDrop(Db *db, unsigned slot) {
    SlotDrop d = {db, 0};
    dbSlotVisit(db, slot, dropCb, &d);
    return d.n;
}

Db *dbCreateAll(int count) {
    Db *dbs = xcalloc(sizeof(Db) * (size_t)count);
    for (int i = 0; i < count; i++) {
        htabInit(&dbs[i].ks.keys, &keyTableDeferType);
        dbs[i].id = i;
    }
    return dbs;
}

static DbSlotTables *slotTablesMake(Db *db) {
    DbSlotTables *st = xcalloc(sizeof(*st));
    for (unsigned s = 0; s < DB_SLOTS; s++) htabInit(&st->tab[s], &keyTableType);
    db->ks.slots = st;
    db->ks.slotKeys = 0;
    return st;
}

/* Frees the slot tables, and their entries into `batch` (NULL: not the
 * entries). */
static void slotTablesFree(DbSlotTables *st, KvFreeBatch *batch) {
    if (!st) return;
    for (unsigned s = 0; s < DB_SLOTS; s++) htabClear(&st->tab[s], batch ? kvFreeBatchCb : NULL, batch);
    xfree(st->walkFirst);
    xfree(st);
}

/* Frees db's keys, its slot tables and TTL index, leaving it empty (the
 * caller brackets it with slabReleaseBatch). */
static void dropKeys(Db *db) {
    KvFreeBatch batch = {.n = 0};
    htabClear(&db->ks.keys, kvFreeBatchCb, &batch);
    slotTablesFree(db->ks.slots, &batch);
    kvFreeBatchEnd(&batch);
    db->ks.slots = NULL;
    db->ks.slotKeys = 0;
    cvFree(&db->ks.ttl);
    db->ks.avgTtl = 0;
}

void dbClearAll(Db *dbs, int count) {
    slabReleaseBatch(1); /* the emptied slabs go back in runs (ds/slab.h) */
    for (int i = 0; i < count; i++) dropKeys(&dbs[i]);
    slabReleaseBatch(0);
}

void dbFreeAll(Db *dbs, int count) {
    dbClearAll(dbs, count);
    xfree(dbs);
}

/* --- TTL index --- */

static uint32_t ttlPos(const kvobj *o) {
    uint32_t pos;
    memcpy(&pos, o->data + 8, 4);
    return pos;
}

static void setTtlPos(kvobj *o, uint32_t pos) { memcpy(o->data + 8, &pos, 4); }

static void ttlAdd(Db *db, kvobj *o) { setTtlPos(o, cvPush(&db->ks.ttl, o)); }

static void ttlRemove(Db *db, kvobj *o) {
    uint32_t pos = ttlPos(o);
    kvobj *last = cvPop(&db->ks.ttl);
    if (last == o) return;
    cvSet(&db->ks.ttl, pos, last);
    setTtlPos(last, pos);
}

/* Free the TTL index's unused chunks (from the timer). */
static void ttlShrinkIfNeeded(Db *db) { cvShrink(&db->ks.ttl); }

/* --- entry moves --- */

/* fresh takes old's place in its chain: old's chain link into fresh's link
 * word, keeping fresh's own type and key-length bytes (object.h). */
static void copyLink(kvobj *fresh, const kvobj *old) { memcpy(fresh->link, old->link, sizeof(fresh->link)); }

/* A copy of o with or without the expire area; the value is moved, not
 * copied (the old shell must be freed with kvFreeShell). */
static kvobj *relayout(const kvobj *o, int withExpire) {
    size_t oldHead = sizeof(kvobj) + kvExpireSize(o);
    size_t body; /* bytes after the expire area */
    size_t keylen = kvKeyLen(o);
    if (kvEncoding(o) == OBJ_ENC_EMBSTR) {
        const unsigned char *v = (const unsigned char *)kvKey(o) + keylen;
        body = kvKeyLenSize(o) + keylen + 1 + v[0];
    } else {
        body = kvKeyLenSize(o) + kvSlotSizeFor(kvRawEncoding(o)) + keylen;
        if (kvHasInlineValue(o)) body += kvInlineSize(o);
        else if (kvPacked(o)) body += packLength(kvPackedBytes(o), SIZE_MAX);
    }
    size_t newHead = sizeof(kvobj) + (withExpire ? 12 : 0);
    kvobj *n = kvAllocBlock(newHead + body);
    memcpy(n, o, sizeof(kvobj));
    if (withExpire) {
        n->typeenc |= KV_EXPIRE_FLAG;
        memset(n->data, 0, 12);
    } else {
        n->typeenc &= (uint8_t)~KV_EXPIRE_FLAG;
    }
    memcpy((char *)n + newHead, (const char *)o + oldHead, body);
    return n;
}

/* Point the table slot that holds `old` at `fresh` (same key). */
static void swapInTable(Db *db, kvobj *old, kvobj *fresh) {
    void **link = htabFindLink(tableOf(db, kvKey(old), kvKeyLen(old)), kvKey(old), kvKeyLen(old));
    copyLink(fresh, old);
    htabLinkSet(link, fresh);
}

/* fresh (built by kvCloneShell from old) takes old's place in the table
 * and the TTL index; old's block is freed, not its value pointer. */
static kvobj *moveEntry(Db *db, kvobj *old, kvobj *fresh) {
    swapInTable(db, old, fresh);
    if (kvHasExpire(fresh)) cvSet(&db->ks.ttl, ttlPos(fresh), fresh);
    kvFreeShell(old);
    return fresh;
}

kvobj *dbResizeEntry(Db *db, kvobj *o, size_t size) {
    void **link = htabFindLink(tableOf(db, kvKey(o), kvKeyLen(o)), kvKey(o), kvKeyLen(o));
    kvobj *n = kvRealloc(o, size); /* keeps the link */
    htabLinkSet(link, n);
    if (kvHasExpire(n)) cvSet(&db->ks.ttl, ttlPos(n), n);
    return n;
}

kvobj *dbSetValueInline(Db *db, kvobj *o, const void *lp, size_t len, size_t cap) {
    kvobj *n = kvCloneShell(o, OBJ_ENC_LISTPACK_INLINE, cap > len ? cap : len);
    memcpy(kvPtr(n), lp, len);
    return moveEntry(db, o, n);
}

kvobj *dbSetValuePtr(Db *db, kvobj *o, int encoding, void *ptr) {
    kvobj *n = kvCloneShell(o, encoding, 0);
    kvSetPtr(n, ptr);
    return moveEntry(db, o, n);
}

/* --- packed idle collections (db.h, ds/pack.h) --- */

DbPackStats dbPackStats;

static int packAllowedHere = 1; /* dbPackCron's `allowed`, for the idle steps */

/* Listpack elements per role: field/value and member/score pairs. */
static unsigned packStride(const kvobj *o) { return kvType(o) == OBJ_SET ? 1 : 2; }

static void packCorrupt(const kvobj *o) __attribute__((noreturn));
static void packCorrupt(const kvobj *o) {
    /* The bytes were checked by decoding them when they were written: only
     * memory corruption gets here. */
    fprintf(stderr, "cairn: packed value of key '%.*s' does not decode\n", (int)kvKeyLen(o), kvKey(o));
    abort();
}

/* The pass: a cursor over each database's keys (buckets, or dbScan with slot tables). */
static struct {
    int active, db;
    uint64_t cursor;
    long long endMs;       /* when the last pass ended */
    long long seenPacked;  /* packed entries met by this pass */
    size_t freed;          /* bytes freed by this pass */
    long long pending;     /* candidates not idle yet, or packed, this pass */
    long long cpuUs;       /* time this pass has taken so far */
    long long floorMs;     /* the next pass starts no sooner (10x the last's time) */
    int backoff;           /* passes in a row that found nothing to do */
} pass;

/* Between passes: the idle time, doubled after each pass that found
 * nothing to pack nor about to become packable (a keyspace of strings
 * only), up to a minute, back to the idle time when a value is unpacked;
 * and at least 10 times the last pass's own time, so that scanning a big
 * keyspace takes at most a tenth of a CPU whatever the setting. */
#define PACK_BACKOFF_MAX 7
#define PACK_BACKOFF_CAP_MS 60000

kvobj *dbUnpackedCopy(const kvobj *o) {
    const unsigned char *p = kvPackedBytes(o);
    size_t len = packLength(p, SIZE_MAX);
    kvobj *n;
    if (kvRawEncoding(o) == OBJ_ENC_PACKED_IS) {
        size_t bytes;
        unsigned char *is = unpackIntset(p, len, &bytes);
        if (!is) packCorrupt(o);
        n = kvCloneShell(o, OBJ_ENC_INTSET, 0);
        kvSetPtr(n, is);
        return n;
    }
    unsigned char *lp = unpackListpack(p, len, packStride(o));
    if (!lp) packCorrupt(o);
    if (kvRawEncoding(o) == OBJ_ENC_PACKED_LPI) {
        size_t b = lpBytes(lp);
        n = kvCloneShell(o, OBJ_ENC_LISTPACK_INLINE, b);
        memcpy(kvPtr(n), lp, b);
        lpFree(lp);
    } else {
        n = kvCloneShell(o, OBJ_ENC_LISTPACK, 0);
        kvSetPtr(n, lp);
    }
    return n;
}

kvobj *dbUnpack(Db *db, kvobj *o) {
    dbPackStats.unpacks++;
    pass.backoff = 0; /* something to pack again once idle */
    return moveEntry(db, o, dbUnpackedCopy(o));
}

/* Largest packed form built (a stack buffer). */
#define PACK_BUF 4096

/* Packs o if it is a small collection whose packed form takes a smaller
 * allocation than its entry and value do now; returns the bytes freed. */
static size_t packEntry(Db *db, kvobj *o) {
    int type = kvType(o), enc = kvRawEncoding(o), penc;
    if (type != OBJ_HASH && type != OBJ_ZSET && type != OBJ_SET) return 0;
    const unsigned char *v = kvPtr(o);
    size_t vbytes, own = 0;
    if (enc == OBJ_ENC_LISTPACK_INLINE) {
        penc = OBJ_ENC_PACKED_LPI;
        vbytes = lpBytes(v);
    } else if (enc == OBJ_ENC_LISTPACK) {
        penc = OBJ_ENC_PACKED_LP;
        vbytes = lpBytes(v);
        own = xmallocSize((void *)v);
    } else if (enc == OBJ_ENC_INTSET && type == OBJ_SET) {
        penc = OBJ_ENC_PACKED_IS;
        vbytes = intsetBlobLen((const intset *)v);
        own = xmallocSize((void *)v);
    } else {
        return 0;
    }
    unsigned char buf[PACK_BUF];
    size_t cap = vbytes < sizeof(buf) ? vbytes : sizeof(buf);
    size_t n = penc == OBJ_ENC_PACKED_IS ? packIntset(v, vbytes, buf, cap) : packListpack(v, packStride(o), buf, cap);
    if (!n) return 0;
    size_t now = xmallocSize(o) + own, after = kvGoodSize(kvInlineShellSize(o) + n);
    if (after >= now) return 0;
    kvobj *fresh = kvCloneShell(o, penc, n);
    memcpy((unsigned char *)kvPackedBytes(fresh), buf, n);
    if (own) objectTypeOps(type)->free((void *)v, kvEncoding(o));
    moveEntry(db, o, fresh);
    dbPackStats.packs++;
    return now - after;
}

/* Seconds o has surely been idle: from its LRU clock as OBJECT IDLETIME
 * reads it or, under an LFU policy, from its LFU minutes (whole minutes
 * only).  Compared with ">": the clocks count whole units. */
static long long idleSeconds(const kvobj *o);

#define PACK_BATCH 64

typedef struct PackBatch {
    kvobj *e[PACK_BATCH];
    int n;
    long long idle;
} PackBatch;

static void packCollect(void *priv, void *entry) {
    PackBatch *b = priv;
    kvobj *o = entry;
    if (kvPacked(o)) {
        pass.seenPacked++;
        return;
    }
    int t = kvType(o), enc = kvRawEncoding(o);
    if (t != OBJ_HASH && t != OBJ_ZSET && t != OBJ_SET) return;
    if (enc != OBJ_ENC_LISTPACK && enc != OBJ_ENC_LISTPACK_INLINE && enc != OBJ_ENC_INTSET) return;
    /* The LRU clock counts whole seconds: more than `idle` of them means
     * at least `idle` seconds really passed. */
    if (idleSeconds(o) <= b->idle) pass.pending++;
    else if (b->n < PACK_BATCH) b->e[b->n++] = o;
}

static size_t tableUnits(const Htab *h);
static size_t tableVisit(const Htab *h, size_t from, size_t to, void (*fn)(void *priv, void *entry), void *priv);

/* Buckets a step of the pass reads (one table): the batch holds their
 * candidates unless chains are very long (the rest wait for a later pass). */
#define PACK_STEP_BUCKETS 16

/* Advances the pass for about `us` microseconds; 1 while it is not done.
 * One key table is walked by bucket (walk units: no key hashed, as dbScan
 * would; a resize between steps may make the pass skip or see again a few
 * keys, which only delays or repeats a check); slot tables by dbScan. */
static int packSteps(Db *dbs, int count, long long us) {
    int idle = dbConfig->packIdleSeconds;
    if (idle <= 0 || dbMemberTtlKeys != 0) {
        pass.active = 0;
        return 0;
    }
    if (!pass.active) {
        long long wait = (long long)idle * 1000 << pass.backoff, cap = (long long)idle * 1000;
        if (cap < PACK_BACKOFF_CAP_MS) cap = PACK_BACKOFF_CAP_MS;
        if (wait > cap) wait = cap;
        if (wait < pass.floorMs) wait = pass.floorMs;
        if (dbNowMs - pass.endMs < wait) return 0;
        pass.active = 1;
        pass.db = 0;
        pass.cursor = 0;
        pass.seenPacked = 0;
        pass.freed = 0;
        pass.pending = 0;
        pass.cpuUs = 0;
    }
    long long start = ustime();
    for (int steps = 0;; steps++) {
        if (pass.db >= count) {
            pass.active = 0;
            pass.endMs = dbNowMs;
            pass.cpuUs += ustime() - start;
            pass.floorMs = pass.cpuUs / 100; /* 10x, in ms */
            if (pass.pending) pass.backoff = 0;
            else if (pass.backoff < PACK_BACKOFF_MAX) pass.backoff++;
            dbPackStats.packedKeys = pass.seenPacked;
            dbPackStats.passes++;
            if (pass.freed >= (8u << 20)) lazyfreePurge(); /* the freed pages back, from the thread */
            return 0;
        }
        Db *db = &dbs[pass.db];
        if (dbSize(db) == 0 || (db->ks.slots && db->ks.slots->frozen)) {
            pass.db++;
            pass.cursor = 0;
            continue;
        }
        PackBatch b = {.n = 0, .idle = idle};
        if (!db->ks.slots) {
            size_t units = tableUnits(&db->ks.keys), to = (size_t)pass.cursor + PACK_STEP_BUCKETS;
            if (pass.cursor < units) tableVisit(&db->ks.keys, (size_t)pass.cursor, to < units ? to : units, packCollect, &b);
            pass.cursor = to >= units ? 0 : to;
        } else {
            pass.cursor = dbScan(db, pass.cursor, packCollect, &b);
        }
        for (int i = 0; i < b.n; i++) {
            size_t freed = packEntry(db, b.e[i]);
            pass.freed += freed;
            if (freed) pass.seenPacked++, pass.pending++;
        }
        if (pass.cursor == 0) {
            pass.db++;
            continue;
        }
        if ((steps & 7) == 7) {
            long long spent = ustime() - start;
            if (spent >= us) {
                pass.cpuUs += spent;
                return 1;
            }
        }
    }
}

void dbPackCron(Db *dbs, int count, int allowed, long long us) {
    packAllowedHere = allowed;
    if (!allowed) return;
    if (packSteps(dbs, count, us)) dbRehashPending = 1;
}

int kvIsExpired(const kvobj *o) {
    if (!kvHasExpire(o)) return 0;
    return kvExpire(o) < dbNowMs;
}

/* --- access bits: LRU clock or LFU counter --- */

#define LFU_INIT_VAL 5

static int lfuActive(void) {
    int p = dbConfig->maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_ALLKEYS_LFU;
}

static unsigned lfuMinutes(void) { return (unsigned)((dbNowMs / 60000) & 65535); }

unsigned dbInitialLru(void) { return lfuActive() ? (lfuMinutes() << 8) | LFU_INIT_VAL : dbLruClock; }

/* The counter after one step of decay per lfu-decay-time minutes idle. */
unsigned dbLfuDecayed(const kvobj *o) {
    unsigned lru = kvLru(o), ldt = lru >> 8, counter = lru & 255, now = lfuMinutes();
    unsigned elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
    unsigned periods = dbConfig->lfuDecayTime ? elapsed / (unsigned)dbConfig->lfuDecayTime : 0;
    return periods > counter ? 0 : counter - periods;
}

static long long idleSeconds(const kvobj *o) {
    if (lfuActive()) {
        unsigned ldt = kvLru(o) >> 8, now = lfuMinutes();
        unsigned elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
        return elapsed ? (long long)(elapsed - 1) * 60 : 0; /* whole minutes surely passed */
    }
    unsigned max = (1u << 24) - 1, now = dbLruClock & max, lru = kvLru(o) & max;
    return now >= lru ? (long long)(now - lru) : (long long)now + (max - lru);
}

/* Logarithmic increment: the higher the counter, the less likely a hit
 * bumps it (lfu-log-factor). */
static void touch(kvobj *o) {
    if (!lfuActive()) {
        kvSetLru(o, dbLruClock);
        return;
    }
    unsigned counter = dbLfuDecayed(o);
    if (counter < 255) {
        double base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
        if (randDouble() < 1.0 / (base * dbConfig->lfuLogFactor + 1)) counter++;
    }
    kvSetLru(o, (lfuMinutes() << 8) | counter);
}

/* --- lookups --- */

static void deleteExpired(Db *db, kvobj *o) {
    size_t len = kvKeyLen(o);
    sds key = sdsNewLen(kvKey(o), len);
    long long start = ustime();
    dbDelete(db, key, len);
    if (dbHooks.latency) dbHooks.latency("expire-del", (ustime() - start) / 1000);
    dbStats.expiredKeys++;
    if (dbHooks.keyExpired) dbHooks.keyExpired(db, key, len);
    sdsFree(key);
}

/* --- deferred value checks (db.h) --- */

long long dbUnverified;

int dbVerify(kvobj *o, const char **why) {
    if (!kvUnverified(o)) return 0;
    int enc = OBJ_ENC_LISTPACK;
    void *ptr = NULL;
    *why = NULL;
    int rc = dbHooks.verifyValue ? dbHooks.verifyValue(o, &enc, &ptr, why) : 1;
    if (rc < 0) {
        if (!*why) *why = "corrupt value";
        return -1;
    }
    if (rc == 0) { /* rebuilt: every pointer encoding has the same slot */
        const ObjectType *ops = objectTypeOps(kvType(o));
        if (ops) ops->free(kvPtr(o), OBJ_ENC_LISTPACK);
        kvSetEncoding(o, enc);
        kvSetPtr(o, ptr);
    } else {
        kvSetEncoding(o, kvEncoding(o)); /* listpack or quicklist */
    }
    return 0;
}

kvobj *dbVerifyOrDrop(Db *db, kvobj *o) {
    const char *why;
    if (dbVerify(o, &why) == 0) return o;
    size_t len = kvKeyLen(o);
    sds key = sdsNewLen(kvKey(o), len);
    dbDelete(db, key, len);
    if (dbHooks.valueCorrupt) dbHooks.valueCorrupt(db, key, len, why);
    sdsFree(key);
    return NULL;
}

void dbVerifyAll(Db *dbs, int count) {
    if (!dbUnverified) return;
    for (int i = 0; i < count; i++) {
        Db *db = &dbs[i];
        sds *bad = NULL;
        size_t nbad = 0;
        DbIter it;
        kvobj *o;
        const char *why;
        dbIterInit(&it, db);
        while ((o = dbIterNext(&it)) != NULL) { /* in place: nothing moves */
            if (dbVerify(o, &why) == 0) continue;
            bad = xrealloc(bad, sizeof(*bad) * (nbad + 1));
            bad[nbad++] = sdsNewLen(kvKey(o), kvKeyLen(o));
        }
        dbIterRelease(&it);
        for (size_t j = 0; j < nbad; j++) {
            kvobj *e = dbFind(db, bad[j], sdsLen(bad[j]));
            if (e) dbVerifyOrDrop(db, e);
            sdsFree(bad[j]);
        }
        xfree(bad);
    }
    dbUnverified = 0;
}

/* Common path: find, expire lazily, verify a value loaded unverified,
 * maybe touch. */
#define LOOKUP_WRITE_ (1 << 8) /* private: a write lookup */

/* Whether a lookup may delete the expired key it found: normally yes; on
 * a replica (only dbNoLazyExpire's replica bit set) a write lookup still
 * does, as Redis 7.0 forces it on a writable replica (a local write over
 * an expired key must not find it present, nor add it twice). */
static int lazyDeleteAllowed(int flags) {
    if (!dbNoLazyExpire) return !(flags & LOOKUP_NOEXPIRE);
    return (flags & LOOKUP_WRITE_) && dbNoLazyExpire == DB_NOLAZY_REPLICA;
}

static kvobj *lookup(Db *db, const char *key, size_t len, int flags) {
    kvobj *o = htabFind(tableOf(db, key, len), key, len);
    if (o && kvIsExpired(o) && !dbIgnoreExpire) {
        if (lazyDeleteAllowed(flags)) deleteExpired(db, o);
        o = NULL;
    }
    if (__builtin_expect(o && kvSpecial(o), 0)) o = kvPacked(o) ? dbUnpack(db, o) : dbVerifyOrDrop(db, o);
    if (__builtin_expect(dbMemberTtlKeys != 0, 0) && o && !dbIgnoreExpire)
        o = dbHooks.memberDue(db, o, lazyDeleteAllowed(flags) ? DB_MEMBER_DELETE
                                     : (flags & LOOKUP_WRITE_) ? 0 : DB_MEMBER_VIEW);
    if (o && !(flags & LOOKUP_NOTOUCH) && !dbNoTouch) touch(o);
    return o;
}

kvobj *dbLookupRead(Db *db, const char *key, size_t len, int flags) {
    kvobj *o = lookup(db, key, len, flags);
    if (!o && !(flags & LOOKUP_NONOTIFY) && dbHooks.keyMiss) dbHooks.keyMiss(db, key, len);
    if (!(flags & LOOKUP_NOSTATS)) {
        if (o) dbStats.keyspaceHits++;
        else dbStats.keyspaceMisses++;
    }
    return o;
}

kvobj *dbLookupWrite(Db *db, const char *key, size_t len) { return lookup(db, key, len, LOOKUP_WRITE_); }

kvobj *dbFind(Db *db, const char *key, size_t len) {
    kvobj *o = htabFind(tableOf(db, key, len), key, len);
    if (__builtin_expect(o && kvPacked(o), 0)) o = dbUnpack(db, o);
    return o;
}

/* --- changes --- */

/* dbAdd given the key's hash (hashKey; every key table hashes with it). */
static void addHashed(Db *db, kvobj *o, uint64_t hash) {
    Htab *h = tableForAdd(db, kvKey(o), kvKeyLen(o));
    htabAddHash(h, o, hash);
    slotCounted(db, h, 1);
    if (htabIsRehashing(h)) dbRehashPending = 1; /* the idle loop finishes it */
    if (kvHasExpire(o)) ttlAdd(db, o);
    if (dbHooks.keyAdded) dbHooks.keyAdded(db, kvKey(o), kvKeyLen(o));
}

void dbAdd(Db *db, kvobj *o) { addHashed(db, o, hashKey(kvKey(o), kvKeyLen(o))); }

kvobj *dbAddUnique(Db *db, kvobj *o) {
    Htab *h = tableForAdd(db, kvKey(o), kvKeyLen(o));
    kvobj *had = htabAddUnique(h, o);
    if (had) return had;
    slotCounted(db, h, 1);
    if (htabIsRehashing(h)) dbRehashPending = 1;
    if (kvHasExpire(o)) ttlAdd(db, o);
    if (dbHooks.keyAdded) dbHooks.keyAdded(db, kvKey(o), kvKeyLen(o));
    return NULL;
}

/* Replace old by fresh where `link` points at old (a bucket slot or the
 * previous entry's link word, from htabFindLink). */
static kvobj *replaceAt(Db *db, void **link, kvobj *old, kvobj *fresh, int keepTtl) {
    int oldExp = kvHasExpire(old);
    if (lfuActive()) kvSetLru(fresh, kvLru(old)); /* an LRU clock is fresh's own: now */
    /* Callers that keep a TTL build fresh with old's expire (object.h
     * kvCreate...Expire); this move is the fallback for one that did not
     * (SET KEEPTTL over an expired key on a replica). */
    if (keepTtl && oldExp && !kvHasExpire(fresh)) {
        kvobj *t = relayout(fresh, 1);
        kvFreeShell(fresh);
        fresh = t;
        long long when = kvExpire(old);
        memcpy(fresh->data, &when, 8);
    }
    if (kvHasExpire(fresh)) { /* its own expire (SET EX), or old's kept */
        if (oldExp) {
            uint32_t pos = ttlPos(old);
            setTtlPos(fresh, pos);
            cvSet(&db->ks.ttl, pos, fresh);
        } else {
            ttlAdd(db, fresh);
        }
    } else if (oldExp) {
        ttlRemove(db, old);
    }
    copyLink(fresh, old);
    htabLinkSet(link, fresh);
    if (dbMemberTtlKeys) dbHooks.memberKeyGone(db, kvKey(old), kvKeyLen(old));
    if (dbModuleUnlinkHook && kvType(old) == OBJ_MODULE) dbModuleUnlinkHook(db, old);
    kvFree(old);
    return fresh;
}

kvobj *dbReplace(Db *db, kvobj *old, kvobj *fresh, int keepTtl) {
    return replaceAt(db, htabFindLink(tableOf(db, kvKey(old), kvKeyLen(old)), kvKey(old), kvKeyLen(old)), old, fresh,
                     keepTtl);
}

/* The access an overwrite of o is (dbSetKey), where it matters: under an
 * LFU policy the counter passes to the new value (replaceAt); an LRU clock
 * is the new value's own. */
static void touchOverwritten(kvobj *o) {
    if (lfuActive() && !dbNoTouch) touch(o);
}

/* The link to key's entry for a set, or NULL when it is absent; *hash gets
 * its hash (every key table hashes with hashKey, so it serves the add too,
 * in whichever table tableForAdd picks).  An expired key is deleted as
 * expired first (its DEL propagates before the write), as Redis's lookup
 * before a set does. */
static void **findForSet(Db *db, const char *key, size_t len, uint64_t *hash) {
    void **link = htabFindLinkHash(tableOf(db, key, len), key, len, hash);
    kvobj *old = link ? htabLinkGet(link) : NULL;
    if (old && kvIsExpired(old) && !dbIgnoreExpire && lazyDeleteAllowed(LOOKUP_WRITE_)) {
        deleteExpired(db, old);
        return NULL;
    }
    return link;
}

/* dbSetKey after findForSet. */
static kvobj *setAt(Db *db, void **link, uint64_t hash, kvobj *fresh, int flags) {
    if (!link) {
        addHashed(db, fresh, hash);
        return fresh;
    }
    kvobj *old = htabLinkGet(link);
    if (!(flags & DB_SET_SEEN)) touchOverwritten(old);
    return replaceAt(db, link, old, fresh, flags & DB_SET_KEEPTTL);
}

kvobj *dbSetKey(Db *db, kvobj *fresh, int flags) {
    uint64_t hash;
    void **link = findForSet(db, kvKey(fresh), kvKeyLen(fresh), &hash);
    return setAt(db, link, hash, fresh, flags);
}

kvobj *dbSetString(Db *db, const char *key, size_t len, const char *val, size_t vlen, int withExpire,
                   long long when) {
    uint64_t hash;
    void **link = findForSet(db, key, len, &hash);
    kvobj *old = link ? htabLinkGet(link) : NULL;
    /* (An expired one left by findForSet -- a replica's -- is replaced.) */
    if (old && !kvIsExpired(old) && !dbMemberTtlKeys && kvRewriteString(old, val, vlen, withExpire, when)) {
        if (lfuActive()) touchOverwritten(old);
        else kvSetLru(old, dbLruClock); /* a fresh entry's */
        return old;
    }
    kvobj *fresh = withExpire ? kvCreateStringExpire(key, len, val, vlen, when) : kvCreateString(key, len, val, vlen);
    return setAt(db, link, hash, fresh, 0);
}

void (*dbModuleUnlinkHook)(Db *db, const kvobj *o);

kvobj *dbUnlink(Db *db, const char *key, size_t len) {
    if (__builtin_expect(dbSnapshotActive != 0, 0)) dbHooks.snapshotKeyGone(db, key, len);
    Htab *h = tableOf(db, key, len);
    kvobj *o = htabUnlink(h, key, len);
    if (o) slotCounted(db, h, -1);
    if (o && kvHasExpire(o)) ttlRemove(db, o);
    if (o && dbMemberTtlKeys) dbHooks.memberKeyGone(db, kvKey(o), kvKeyLen(o));
    if (o && dbModuleUnlinkHook && kvType(o) == OBJ_MODULE) dbModuleUnlinkHook(db, o);
    return o;
}

int dbDelete(Db *db, const char *key, size_t len) {
    kvobj *o = dbUnlink(db, key, len);
    if (!o) return 0;
    kvFree(o);
    return 1;
}

long long dbEmpty(Db *db) {
    if (dbSnapshotActive) dbHooks.snapshotDbGone(db);
    if (dbMemberTtlKeys) dbHooks.memberEmptied(db);
    lazyfreeDropTable(1, 0);
    long long n = (long long)dbSize(db);
    slabReleaseBatch(1); /* the emptied slabs go back in runs (ds/slab.h) */
    dropKeys(db);
    slabReleaseBatch(0);
    return n;
}

long long dbEmptyAsync(Db *db) {
    if (dbSnapshotActive) dbHooks.snapshotDbGone(db);
    if (dbMemberTtlKeys) dbHooks.memberEmptied(db);
    lazyfreeDropTable(0, 0);
    long long n = (long long)dbSize(db);
    if (n == 0) {
        /* Nothing worth a hand-off: drop the (possibly large) bucket arrays
         * and TTL array here. */
        htabClear(&db->ks.keys, NULL, NULL);
        slotTablesFree(db->ks.slots, NULL);
        cvFree(&db->ks.ttl);
    } else if (db->ks.slots) {
        DbSlotTables *st = db->ks.slots;
        xfree(st->walkFirst);
        st->walkFirst = NULL;
        for (unsigned s = 0; s < DB_SLOTS; s++) st->tab[s].pauseRehash = 0;
        lazyfreeTables(st->tab, DB_SLOTS, (size_t)n, st, db->ks.ttl);
    } else {
        Htab *old = xmalloc(sizeof(*old));
        *old = db->ks.keys;
        old->pauseRehash = 0;
        htabInit(&db->ks.keys, &keyTableDeferType);
        lazyfreeTable(old, db->ks.ttl);
    }
    db->ks.slots = NULL;
    db->ks.slotKeys = 0;
    memset(&db->ks.ttl, 0, sizeof(db->ks.ttl));
    db->ks.avgTtl = 0;
    return n;
}

void dbSwap(Db *a, Db *b) {
    if (dbSnapshotActive) dbHooks.snapshotDbGone(a), dbHooks.snapshotDbGone(b);
    if (dbMemberTtlKeys) dbHooks.memberSwapped(a, b);
    DbKeyspace t = a->ks;
    a->ks = b->ks;
    b->ks = t;
}

/* --- the keyspace API: sizes, walks, scan, sampling (db.h) --- */

void dbIndexBytes(const Db *db, size_t *mainBytes, size_t *expiresBytes) {
    size_t buckets = htabBuckets(&db->ks.keys), extra = 0;
    if (db->ks.slots) {
        for (unsigned s = 0; s < DB_SLOTS; s++) buckets += htabBuckets(&db->ks.slots->tab[s]);
        extra = sizeof(DbSlotTables);
    }
    *mainBytes = buckets * sizeof(void *) + extra;
    *expiresBytes = cvBytes(&db->ks.ttl);
}

size_t dbKeyTables(const Db *db) { return db->ks.slots ? DB_SLOTS : 1; }

const Htab *dbKeyTable(const Db *db, size_t i) {
    return db->ks.slots ? &db->ks.slots->tab[i < DB_SLOTS ? i : 0] : &db->ks.keys;
}

void dbExpand(Db *db, size_t keys) {
    if (!slotsOn) htabExpand(&db->ks.keys, keys);
}

void dbIterInit(DbIter *it, Db *db) {
    it->db = db;
    it->slot = 0;
    if (!db->ks.slots) {
        it->state = 0;
        htabIterInit(&it->it, &db->ks.keys);
        return;
    }
    it->state = 1;
    it->slot = slotNextFull(db->ks.slots, db->ks.slotKeys, 0);
    if (it->slot == DB_SLOTS) it->slot = 0;
    htabIterInit(&it->it, &db->ks.slots->tab[it->slot]);
}

kvobj *dbIterNext(DbIter *it) {
    for (;;) {
        kvobj *o = htabIterNext(&it->it);
        if (o || it->state != 1) return o;
        /* This slot's table is done: on to the next one holding keys (a
         * key added meanwhile to a slot passed over may be missed). */
        DbSlotTables *st = it->db->ks.slots;
        unsigned next = slotNextFull(st, it->db->ks.slotKeys, it->slot + 1);
        if (next == DB_SLOTS) {
            it->state = 2;
            return NULL;
        }
        htabIterRelease(&it->it);
        it->slot = next;
        htabIterInit(&it->it, &st->tab[next]);
    }
}

void dbIterRelease(DbIter *it) { htabIterRelease(&it->it); }

#define SCAN_INNER_LIMIT (1ull << 48) /* htabScan's cursors are below it */

uint64_t dbScan(Db *db, uint64_t cursor, void (*fn)(void *priv, void *entry), void *priv) {
    DbSlotTables *st = db->ks.slots;
    if (!st) return slotsOn && cursor ? 0 : htabScan(&db->ks.keys, cursor, fn, priv);
    unsigned slot = (unsigned)(cursor & (DB_SLOTS - 1));
    uint64_t inner = cursor >> DB_SLOT_BITS;
    if (inner >= SCAN_INNER_LIMIT) return 0;
    unsigned at = slotNextFull(st, db->ks.slotKeys, slot);
    if (at != slot) inner = 0; /* the slot emptied: its next one from the start */
    if (at == DB_SLOTS) return 0;
    inner = htabScan(&st->tab[at], inner, fn, priv);
    if (inner) return (inner << DB_SLOT_BITS) | at;
    at = slotNextFull(st, db->ks.slotKeys, at + 1);
    return at == DB_SLOTS ? 0 : at; /* at >= 1 here: never 0 */
}

/* Slot walk units of one table: the buckets of array 0, then those of
 * array 1 (while rehashing): the order of a safe iterator. */
static size_t tableUnits(const Htab *h) { return htabArrayBuckets(h, 0) + htabArrayBuckets(h, 1); }

static size_t tableVisit(const Htab *h, size_t from, size_t to, void (*fn)(void *priv, void *entry), void *priv) {
    size_t first = htabArrayBuckets(h, 0), n = 0;
    if (from < first) n += htabVisitBuckets(h, 0, from, to < first ? to : first, fn, priv);
    if (to > first) n += htabVisitBuckets(h, 1, (from > first ? from : first) - first, to - first, fn, priv);
    return n;
}

void dbWalkFreeze(Db *db) {
    DbSlotTables *st = db->ks.slots;
    if (!st) {
        htabPauseRehash(&db->ks.keys);
        return;
    }
    for (unsigned s = 0; s < DB_SLOTS; s++) htabPauseRehash(&st->tab[s]);
    if (st->frozen++) return;
    /* The units of every slot, fixed while frozen: where each slot's start. */
    st->walkFirst = xmalloc(sizeof(size_t) * (DB_SLOTS + 1));
    size_t at = 0;
    for (unsigned s = 0; s < DB_SLOTS; s++) {
        st->walkFirst[s] = at;
        at += tableUnits(&st->tab[s]);
    }
    st->walkFirst[DB_SLOTS] = at;
}

void dbWalkThaw(Db *db) {
    DbSlotTables *st = db->ks.slots;
    if (!st) {
        htabResumeRehash(&db->ks.keys);
        return;
    }
    for (unsigned s = 0; s < DB_SLOTS; s++) htabResumeRehash(&st->tab[s]);
    if (--st->frozen) return;
    xfree(st->walkFirst);
    st->walkFirst = NULL;
}

size_t dbWalkUnitOf(const Db *db, const char *key, size_t len) {
    if (db->ks.slots || slotsOn) return SIZE_MAX;
    return htabUnitOf(&db->ks.keys, key, len);
}

size_t dbWalkUnits(const Db *db) {
    const DbSlotTables *st = db->ks.slots;
    if (!st) return tableUnits(&db->ks.keys);
    if (st->walkFirst) return st->walkFirst[DB_SLOTS];
    size_t n = 0;
    for (unsigned s = 0; s < DB_SLOTS; s++) n += tableUnits(&st->tab[s]);
    return n;
}

size_t dbWalkVisit(const Db *db, size_t from, size_t to, void (*fn)(void *priv, void *entry), void *priv) {
    const DbSlotTables *st = db->ks.slots;
    if (!st) return tableVisit(&db->ks.keys, from, to, fn, priv);
    if (!st->walkFirst || from >= to) return 0; /* units exist only while frozen */
    const size_t *first = st->walkFirst;
    /* The last slot starting at or before `from`, by bisection. */
    unsigned lo = 0, hi = DB_SLOTS; /* first[lo] <= from < first[hi] unless from >= total */
    if (from >= first[DB_SLOTS]) return 0;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (first[mid] <= from) lo = mid;
        else hi = mid;
    }
    size_t n = 0;
    for (unsigned s = lo; s < DB_SLOTS && first[s] < to; s++) {
        size_t a = from > first[s] ? from - first[s] : 0, b = to - first[s];
        size_t units = first[s + 1] - first[s];
        if (b > units) b = units;
        if (a < b) n += tableVisit(&st->tab[s], a, b, fn, priv);
    }
    return n;
}

kvobj *dbRandomKey(Db *db) {
    DbSlotTables *st = db->ks.slots;
    if (!st) return htabRandom(&db->ks.keys);
    if (!db->ks.slotKeys) return NULL;
    return htabRandom(&st->tab[slotOfKeyNumber(st, randBounded(db->ks.slotKeys))]);
}

unsigned dbSampleKeys(Db *db, void **out, unsigned count) {
    DbSlotTables *st = db->ks.slots;
    if (!st) return htabSample(&db->ks.keys, out, count);
    if (!db->ks.slotKeys || count == 0) return 0;
    /* A slot drawn in proportion to its keys, then the slots after it
     * (wrapping) while fewer than count keys were found. */
    unsigned start = slotOfKeyNumber(st, randBounded(db->ks.slotKeys)), slot = start, n = 0;
    for (;;) {
        n += htabSample(&st->tab[slot], out + n, count - n);
        if (n >= count) break;
        slot = slotNextFull(st, db->ks.slotKeys, slot + 1);
        if (slot == DB_SLOTS) slot = slotNextFull(st, db->ks.slotKeys, 0);
        if (slot == start) break;
    }
    return n;
}

kvobj *dbRandomVolatile(Db *db) {
    uint32_t n = db->ks.ttl.count;
    return n ? cvGet(&db->ks.ttl, randBounded(n)) : NULL;
}

void dbSetExpire(Db *db, kvobj **po, long long when) {
    kvobj *o = *po;
    if (!kvHasExpire(o)) {
        kvobj *n = relayout(o, 1);
        swapInTable(db, o, n);
        kvFreeShell(o);
        ttlAdd(db, n);
        o = n;
        *po = n;
    }
    memcpy(o->data, &when, 8);
}

int dbRemoveExpire(Db *db, kvobj **po) {
    kvobj *o = *po;
    if (!kvHasExpire(o)) return 0;
    ttlRemove(db, o);
    kvobj *n = relayout(o, 0);
    swapInTable(db, o, n);
    kvFreeShell(o);
    *po = n;
    return 1;
}

sds dbUnshareString(Db *db, kvobj **po) {
    kvobj *o = *po;
    if (kvEncoding(o) == OBJ_ENC_RAW) {
        sds s = kvPtr(o);
        if (!sdsIsPinned(s)) return s;
        /* A reply is still sending these bytes: the value gets a copy. */
        sds copy = sdsDup(s);
        kvSetPtr(o, copy);
        sdsDisown(s);
        return copy;
    }
    sds s = kvStringDup(o);
    /* Built with o's expire, if any: dbReplace then has nothing to move. */
    kvobj *n = kvHasExpire(o) ? kvCreateRawStringExpire(kvKey(o), kvKeyLen(o), s, kvExpire(o))
                              : kvCreateRawString(kvKey(o), kvKeyLen(o), s);
    *po = dbReplace(db, o, n, 1);
    return s;
}

/* --- active expiry --- */

#define EXPIRE_KEYS_PER_LOOP 20

/* An active expire cycle that began at start (us) ends: its time counts in
 * INFO's expire_cycle_cpu_milliseconds and as an "expire-cycle" latency. */
static void cycleDone(long long start) {
    long long us = ustime() - start;
    dbStats.expireCycleCpuUs += us;
    if (dbHooks.latency) dbHooks.latency("expire-cycle", us / 1000);
}

/* Fold the mean of the n sampled TTLs (each in 1..LLONG_MAX) into the
 * database's running average as Redis does (2% weight).  The mean is the
 * sum of the quotients plus the mean of the remainders: summing the TTLs
 * themselves overflows for keys that expire near LLONG_MAX, where Redis's
 * avg_ttl turns negative. */
static void updateAvgTtl(Db *db, const long long *ttls, uint32_t n) {
    long long avg = 0, rem = 0;
    for (uint32_t i = 0; i < n; i++) {
        avg += ttls[i] / n;
        rem += ttls[i] % n;
    }
    avg += rem / n;
    if (db->ks.avgTtl == 0) db->ks.avgTtl = avg;
    db->ks.avgTtl = (db->ks.avgTtl / 50) * 49 + avg / 50;
}

/* The fast cycle's gate (db.h): the share of expired keys it tolerates. */
#define EXPIRE_ACCEPTABLE_STALE 0.10

void dbActiveExpireCycle(Db *dbs, int count, long long budgetUs, int fast) {
    static int nextDb = 0;
    static int lastHitLimit = 0;       /* the last cycle stopped on its time limit */
    static long long lastFastStart = 0; /* us */
    int any = 0;
    for (int d = 0; d < count && !any; d++) any = dbs[d].ks.ttl.count > 0;
    if (!any) return; /* runs before every sleep: no clock read when no key has a TTL */
    if (fast && !lastHitLimit && dbStats.expiredStalePerc < EXPIRE_ACCEPTABLE_STALE) return;
    long long start = ustime();
    if (fast) {
        if (start < lastFastStart + budgetUs * 2) return;
        lastFastStart = start;
    }
    long long iterations = 0, totalSampled = 0, totalExpired = 0;
    lastHitLimit = 0;
    slabReleaseBatch(1); /* the slabs the deletions empty go back in runs, at the end */
    for (int d = 0; d < count && !lastHitLimit; d++) {
        Db *db = &dbs[(nextDb + d) % count];
        int more;
        do {
            if (db->ks.ttl.count == 0) break;
            uint32_t sampled = 0, expired = 0, ttlSamples = 0;
            long long ttls[EXPIRE_KEYS_PER_LOOP];
            uint32_t n = db->ks.ttl.count < EXPIRE_KEYS_PER_LOOP ? db->ks.ttl.count : EXPIRE_KEYS_PER_LOOP;
            while (sampled < n && db->ks.ttl.count > 0) {
                kvobj *o = cvGet(&db->ks.ttl, randBounded(db->ks.ttl.count));
                sampled++;
                long long ttl = kvExpire(o) - dbNowMs;
                if (ttl < 0) {
                    deleteExpired(db, o);
                    expired++;
                } else if (ttl > 0) {
                    ttls[ttlSamples++] = ttl;
                }
            }
            if (ttlSamples) updateAvgTtl(db, ttls, ttlSamples);
            totalSampled += sampled;
            totalExpired += expired;
            iterations++;
            if ((iterations & 15) == 0 && ustime() - start > budgetUs) {
                dbStats.expiredTimeCapReached++;
                nextDb = (nextDb + d) % count;
                lastHitLimit = 1;
                break;
            }
            more = sampled && expired * 100 / sampled > 10; /* over 10% were expired, as Redis */
        } while (more);
    }
    if (!lastHitLimit) nextDb = (nextDb + 1) % count;
    double perc = totalSampled ? (double)totalExpired / (double)totalSampled : 0;
    dbStats.expiredStalePerc = perc * 0.05 + dbStats.expiredStalePerc * 0.95;
    slabReleaseBatch(0);
    cycleDone(start);
}

/* Rehashes the slot tables marked rehashing for about `us` microseconds
 * in all (each bounded by htabRehashMicros), unmarking those done.
 * Returns 1 if some table still has rehash work. */
static int slotTablesRehash(DbSlotTables *st, long long us) {
    long long start = ustime(), left = us;
    int more = 0;
    for (unsigned w = 0; w < DB_SLOTS / 64; w++) {
        uint64_t bits = st->rehashing[w];
        while (bits) {
            unsigned slot = w * 64 + (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            Htab *h = &st->tab[slot];
            if (htabIsRehashing(h) && h->pauseRehash == 0 && left > 0) {
                htabRehashMicros(h, left);
                left = us - (ustime() - start);
            }
            if (htabIsRehashing(h)) more = 1;
            else st->rehashing[w] &= ~(1ull << (slot % 64));
        }
    }
    return more;
}

/* Slot tables the timer checks per call for a shrink (all of them every
 * DB_SLOTS / SHRINK_CHECKS calls: 1.6 s at hz 10). */
#define SHRINK_CHECKS 1024

static int slotTablesMaintain(DbSlotTables *st) {
    for (unsigned i = 0; i < SHRINK_CHECKS; i++) {
        unsigned slot = st->shrinkNext++ % DB_SLOTS;
        Htab *h = &st->tab[slot];
        if (htabIsRehashing(h) || h->pauseRehash > 0) continue;
        if (htabSize(h) == 0 && htabBuckets(h) > 0) htabClear(h, NULL, NULL); /* an emptied slot: no array */
        else if (htabShrinkIfNeeded(h)) markRehashing(st, slot);
    }
    st->shrinkNext %= DB_SLOTS;
    return slotTablesRehash(st, 1000);
}

void dbTimerMaintenance(Db *dbs, int count) {
    int rehashing = 0;
    for (int i = 0; i < count; i++) {
        Db *db = &dbs[i];
        if (db->ks.slots && !db->ks.slots->frozen) rehashing |= slotTablesMaintain(db->ks.slots);
        if (htabIsRehashing(&db->ks.keys)) htabRehashMicros(&db->ks.keys, 1000);
        else htabShrinkIfNeeded(&db->ks.keys);
        rehashing |= htabIsRehashing(&db->ks.keys);
        ttlShrinkIfNeeded(db);
    }
    if (rehashing) dbRehashPending = 1;
    lazyfreeDropTable(0, 5000); /* an array prepared for a table that stopped growing */
}

void dbPayRehash(Db *dbs, int count) {
    if (!htabOwing) return;
    htabOwing = 0;
    for (int i = 0; i < count; i++)
        if (dbs[i].ks.keys.owed) htabPayOwed(&dbs[i].ks.keys);
}

void dbRehashIdle(Db *dbs, int count, long long us) {
    long long start = ustime(), left = us;
    int more = 0;
    for (int i = 0; i < count; i++) {
        DbSlotTables *st = dbs[i].ks.slots;
        if (st && !st->frozen) {
            if (left > 0) {
                more |= slotTablesRehash(st, left);
                left = us - (ustime() - start);
            } else {
                for (unsigned w = 0; w < DB_SLOTS / 64 && !more; w++) more = st->rehashing[w] != 0;
            }
        }
        Htab *h = &dbs[i].ks.keys;
        if (!htabIsRehashing(h) || h->pauseRehash > 0) continue;
        if (left > 0) {
            htabRehashMicros(h, left);
            left = us - (ustime() - start);
        }
        more |= htabIsRehashing(h);
    }
    /* The packing pass shares the idle steps (dbPackCron). */
    if (packAllowedHere && !dbSnapshotActive && pass.active) {
        left = us - (ustime() - start);
        more |= packSteps(dbs, count, left > 50 ? left : 50);
    }
    dbRehashPending = more;
}
