/* evict.c -- the eviction pool and the eviction loop (see evict.h).
 *
 * Pool invariant: entries [0, used) hold candidates sorted by ascending
 * score (the best to evict last); a candidate is a copy of its key bytes
 * and its database, never an entry pointer, since entries move and go
 * between runs.  A candidate whose key is gone, or no longer fits the
 * policy (a volatile policy's key lost its TTL), is skipped when picked. */
#include "db/evict.h"

#include <string.h>

#include "db/lazyfree.h"
#include "ds/alloc.h"
#include "ds/util.h"

#define POOL_SIZE 16
#define POOL_KEY_CACHE 255 /* key bytes kept in a candidate's reusable buffer */
#define SAMPLES_MAX 64     /* per database and pass, whatever maxmemory-samples says */

typedef struct Candidate {
    unsigned long long score; /* higher: better to evict */
    int dbid;
    size_t keylen;
    char *key;    /* cache, or a heap copy for longer keys */
    char *cache;  /* POOL_KEY_CACHE bytes, allocated once */
} Candidate;

static Candidate *pool;
static int poolUsed;

static void poolInit(void) {
    if (pool) return;
    pool = xcalloc(sizeof(Candidate) * POOL_SIZE);
    for (int i = 0; i < POOL_SIZE; i++) {
        pool[i].cache = xmalloc(POOL_KEY_CACHE);
        pool[i].key = pool[i].cache;
    }
}

static void candidateClearKey(Candidate *c) {
    if (c->key != c->cache) xfree(c->key);
    c->key = c->cache;
    c->keylen = 0;
}

void evictPoolReset(void) {
    if (!pool) return;
    for (int i = 0; i < poolUsed; i++) candidateClearKey(&pool[i]);
    poolUsed = 0;
}

static int policyIsVolatile(int p) {
    return p == MAXMEMORY_VOLATILE_LRU || p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_VOLATILE_RANDOM ||
           p == MAXMEMORY_VOLATILE_TTL;
}

#define LRU_CLOCK_MAX ((1u << 24) - 1)

/* How good a candidate o is under policy p: idle ms for LRU, 255 minus the
 * decayed counter for LFU, the reverse of the expire time for TTL. */
static unsigned long long score(const kvobj *o, int p) {
    switch (p) {
    case MAXMEMORY_VOLATILE_LRU:
    case MAXMEMORY_ALLKEYS_LRU: {
        unsigned now = dbLruClock & LRU_CLOCK_MAX, lru = kvLru(o) & LRU_CLOCK_MAX;
        unsigned long long idle = now >= lru ? now - lru : now + (LRU_CLOCK_MAX - lru);
        return idle * 1000;
    }
    case MAXMEMORY_VOLATILE_LFU:
    case MAXMEMORY_ALLKEYS_LFU: return 255 - dbLfuDecayed(o);
    default: return ~0ULL - (unsigned long long)kvExpire(o);
    }
}

/* Inserts o into the pool if it beats the worst candidate (or there is
 * room), keeping the order. */
static void poolInsert(const kvobj *o, int dbid, unsigned long long s) {
    int k = 0;
    while (k < poolUsed && pool[k].score < s) k++;
    if (k == 0 && poolUsed == POOL_SIZE) return; /* worse than every candidate of a full pool */
    Candidate spare;
    if (poolUsed < POOL_SIZE) {
        spare = pool[poolUsed]; /* the free slot's buffer moves to position k */
        memmove(pool + k + 1, pool + k, sizeof(Candidate) * (size_t)(poolUsed - k));
        poolUsed++;
    } else {
        k--; /* drop the worst (position 0) and shift the lower ones down */
        spare = pool[0];
        memmove(pool, pool + 1, sizeof(Candidate) * (size_t)k);
    }
    candidateClearKey(&spare);
    size_t len = kvKeyLen(o);
    if (len > POOL_KEY_CACHE) spare.key = xmalloc(len);
    memcpy(spare.key, kvKey(o), len);
    spare.keylen = len;
    spare.dbid = dbid;
    spare.score = s;
    pool[k] = spare;
}

/* Samples up to n keys of db (its TTL index under a volatile policy) into
 * the pool. */
static void poolPopulate(Db *db, int p, int n) {
    void *sample[SAMPLES_MAX];
    unsigned got;
    if (policyIsVolatile(p)) {
        got = 0;
        for (int i = 0; i < n; i++) {
            kvobj *o = dbRandomVolatile(db);
            if (!o) break;
            sample[got++] = o;
        }
    } else {
        got = dbSampleKeys(db, sample, (unsigned)n);
    }
    for (unsigned i = 0; i < got; i++) poolInsert(sample[i], db->id, score(sample[i], p));
}

/* Takes the best candidate that still exists (and still has a TTL under
 * a volatile policy) out of the pool; NULL when the pool runs out. */
static kvobj *poolPick(Db *dbs, int p, Db **where) {
    while (poolUsed > 0) {
        Candidate *c = &pool[--poolUsed];
        Db *db = &dbs[c->dbid];
        kvobj *o = dbFind(db, c->key, c->keylen);
        candidateClearKey(c);
        if (o && (!policyIsVolatile(p) || kvHasExpire(o))) {
            *where = db;
            return o;
        }
    }
    return NULL;
}

/* The key the policy evicts next, or NULL when there is none. */
static kvobj *chooseKey(Db *dbs, int count, int p, int samples, Db **where) {
    static int nextDb;
    if (p == MAXMEMORY_ALLKEYS_RANDOM || p == MAXMEMORY_VOLATILE_RANDOM) {
        for (int i = 0; i < count; i++) {
            Db *db = &dbs[(nextDb = (nextDb + 1) % count)];
            kvobj *o = p == MAXMEMORY_VOLATILE_RANDOM ? dbRandomVolatile(db) : dbRandomKey(db);
            if (o) {
                *where = db;
                return o;
            }
        }
        return NULL;
    }
    poolInit();
    for (;;) {
        size_t total = 0;
        for (int i = 0; i < count; i++) {
            Db *db = &dbs[i];
            size_t keys = policyIsVolatile(p) ? dbExpiresCount(db) : dbSize(db);
            if (!keys) continue;
            poolPopulate(db, p, samples);
            total += keys;
        }
        if (!total) {
            evictPoolReset();
            return NULL;
        }
        kvobj *o = poolPick(dbs, p, where);
        if (o) return o;
    }
}

int evictOverLimit(const EvictParams *p, size_t *used, size_t *toFree) {
    size_t u = xmallocUsed();
    u = u > p->notCounted ? u - p->notCounted : 0;
    if (used) *used = u;
    if (!p->maxmemory || u <= p->maxmemory) {
        if (toFree) *toFree = 0;
        return 0;
    }
    if (toFree) *toFree = u - (size_t)p->maxmemory;
    return 1;
}

unsigned long long evictTimeLimitUs(int tenacity) {
    if (tenacity <= 10) return 50ULL * (unsigned long long)(tenacity < 0 ? 0 : tenacity);
    if (tenacity < 100) {
        double us = 500.0;
        for (int i = 10; i < tenacity; i++) us *= 1.15;
        return (unsigned long long)us;
    }
    return ~0ULL;
}

/* Deletes o (of db): the hooks see its key after it is gone. */
static void evictKey(Db *db, kvobj *o, int lazy) {
    size_t len = kvKeyLen(o);
    char small[64];
    char *key = len <= sizeof(small) ? small : xmalloc(len);
    memcpy(key, kvKey(o), len);
    long long start = ustime();
    if (lazy) lazyfreeEntry(dbUnlink(db, key, len));
    else dbDelete(db, key, len);
    if (dbHooks.latency) dbHooks.latency("eviction-del", (ustime() - start) / 1000);
    if (dbHooks.keyEvicted) dbHooks.keyEvicted(db, key, len);
    if (key != small) xfree(key);
}

int evictRun(Db *dbs, int count, const EvictParams *p) {
    size_t toFree;
    if (!evictOverLimit(p, NULL, &toFree)) return EVICT_OK;
    int policy = dbConfig->maxmemoryPolicy;
    if (policy == MAXMEMORY_NO_EVICTION) return EVICT_FAIL;
    int samples = p->samples < 1 ? 1 : p->samples > SAMPLES_MAX ? SAMPLES_MAX : p->samples;
    unsigned long long limitUs = evictTimeLimitUs(p->tenacity);
    long long start = ustime();
    size_t freed = 0;
    long long evicted = 0;
    int result = EVICT_OK;
    while (freed < toFree) {
        Db *db = NULL;
        kvobj *o = chooseKey(dbs, count, policy, samples, &db);
        if (!o) {
            result = EVICT_FAIL;
            break;
        }
        size_t before = xmallocUsed();
        evictKey(db, o, p->lazy);
        size_t after = xmallocUsed();
        if (before > after) freed += before - after;
        evicted++;
        if ((evicted & 15) == 0) {
            /* Lazily freed values leave memory on the other thread, not
             * during the call: look at the real state now and then. */
            if (p->lazy && !evictOverLimit(p, NULL, NULL)) break;
            if ((unsigned long long)(ustime() - start) > limitUs) {
                result = EVICT_RUNNING;
                break;
            }
        }
    }
    if (result == EVICT_FAIL && p->lazy && lazyfreePendingObjects()) {
        /* Nothing left to choose, but the thread may still be freeing. */
        lazyfreeWaitIdle();
        if (!evictOverLimit(p, NULL, NULL)) result = EVICT_OK;
    }
    if (dbHooks.latency) dbHooks.latency("eviction-cycle", (ustime() - start) / 1000);
    return result;
}
