/* evict.h -- maxmemory: choosing keys to evict and evicting them.
 *
 * The server calls evictRun before a command that may grow memory and from
 * a timer while a previous run had to stop at its time limit.  A run frees
 * keys, one at a time, until the memory used (minus what the caller says
 * is not counted: replica and AOF buffers) is back under maxmemory, the
 * policy finds nothing to evict, or the run's time limit (from
 * maxmemory-eviction-tenacity) is spent.
 *
 * Keys are chosen as Redis 7.0 does: the random policies pick one key at
 * random (from the TTL index for volatile-random), going round the
 * databases; the LRU, LFU and TTL policies sample `samples` keys per
 * database into a pool of the best 16 candidates seen so far (longest
 * idle, lowest decayed LFU counter, nearest expire) and evict the best
 * one that still exists.  The pool outlives a run, so candidates sampled
 * earlier compete with new ones.
 *
 * Each eviction calls dbHooks.keyEvicted (statistics, keyspace event,
 * propagation, WATCH) and records an "eviction-del" latency; a run records
 * "eviction-cycle". */
#ifndef CAIRN_EVICT_H
#define CAIRN_EVICT_H

#include <stddef.h>

#include "db/db.h"

/* What a run needs to know, read from the configuration at each call. */
typedef struct EvictParams {
    unsigned long long maxmemory; /* 0: no limit */
    size_t notCounted;            /* bytes of used memory not counted (replica/AOF buffers) */
    int samples;                  /* maxmemory-samples */
    int tenacity;                 /* maxmemory-eviction-tenacity, 0..100 */
    int lazy;                     /* lazyfree-lazy-eviction */
} EvictParams;

/* evictRun results. */
enum {
    EVICT_OK = 0,   /* under the limit (or nothing to do) */
    EVICT_RUNNING,  /* time limit reached with memory still over: call again soon */
    EVICT_FAIL      /* over the limit and nothing (more) can be evicted */
};

/* Evicts keys of dbs[0..count) per dbConfig->maxmemoryPolicy until memory
 * is under p->maxmemory. */
int evictRun(Db *dbs, int count, const EvictParams *p);

/* Memory counted against maxmemory, and how much is over it (0 if not);
 * 1 when over the limit. */
int evictOverLimit(const EvictParams *p, size_t *used, size_t *toFree);

/* Microseconds a run may take for a tenacity (Redis's curve: 50 us per
 * step up to 10, then +15% per step; unlimited at 100). */
unsigned long long evictTimeLimitUs(int tenacity);

/* Drops the pool's candidates (FLUSHALL, SWAPDB, a policy change): they
 * would be looked up and skipped anyway, this only frees their memory. */
void evictPoolReset(void);

#endif
