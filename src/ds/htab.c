/* htab.c -- intrusive chained hash table with incremental rehash.
 *
 * Invariants (see htab.h for the contract):
 *   - size[i] is 0 (table[i] == NULL) or at least HTAB_MIN_SIZE, any
 *     integer; table[1] != NULL exactly while rehashing, and then
 *     table[0] != NULL too.
 *   - While rehashing, table[0] slots below rehashIdx are NULL; the rehash
 *     ends when used[0] reaches 0, and table[1] becomes table[0].
 *   - An entry's bucket in table i is bucketOf(hash, size[i]): the hash's
 *     position in [0, 2^64) scaled to [0, size[i]) (multiply-shift).  The
 *     mapping is monotone, so each bucket of any size holds the hashes of
 *     one contiguous range, and a bucket of one size overlaps the buckets
 *     of another that cover the same range.  Chains are NULL-terminated
 *     through the low 48 bits of each entry's first word; the 16 bits
 *     above are the entry's and are never written here.  A bucket slot
 *     holds a plain pointer (high 16 bits 0), so it may be read directly.
 *   - No entry changes array while pauseRehash > 0.
 *
 * Sizes grow by 1.5x rather than 2x: the bucket array costs 8 to 12 bytes
 * per entry at any count instead of 8 to 16 (the key table at 10M keys sat
 * in 2^24 slots, 13.4 bytes per key, against 8.4 at 1M).  A rehash moves
 * every entry a little more often (3 moves per entry over a table's growth
 * instead of 2), and an add moves two buckets while rehashing (a lookup
 * one) so that each rehash finishes before the next growth is due; a type
 * with maxOwed lets them be owed and moved later (htabPayOwed).
 *
 * htabScan's cursor is a position in hash space, in units of 2^16 hashes:
 * every hash below cursor << 16 has been visited.  A call visits, in each
 * live array, the buckets that overlap the next range of hashes (the rest
 * of the smaller array's bucket at the cursor, rounded up to a unit) and
 * returns only the entries whose hash lies in that range, so ranges never
 * overlap and never leave a gap whatever the sizes between calls. */
#include "ds/htab.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ds/alloc.h"

#define HTAB_MIN_SIZE 4
#define HTAB_SCAN_SHIFT 16      /* a cursor unit is 2^16 hash positions: cursors stay below 2^48 */
#define HTAB_FORCE_GROW_RATIO 5 /* grow anyway past this load while resizing is disallowed */
#define HTAB_SHRINK_PERCENT 10  /* shrink below this fill */
#define HTAB_EMPTY_VISITS 10    /* empty slots a rehash step may visit per bucket it moves */
#define HTAB_MICROS_BATCH 100   /* buckets per batch in htabRehashMicros */

static int resizeAllowed = 1;
static uint64_t (*randomSource)(void);
static uint64_t xorshiftState;

void (*htabBigArrayFree)(void *block);
void **(*htabBigArrayAlloc)(size_t slots);

/* ---- small helpers ------------------------------------------------------ */

#define HTAB_ITER_PREFETCH 8 /* buckets */

/* An entry's link word (htab.h): the next entry in its low 48 bits, the
 * entry's own bits above, which no write here changes. */
static inline void *nextOf(const void *entry) { return htabLinkGet((void *const *)entry); }
static inline void setNextOf(void *entry, void *next) { htabLinkSet((void **)entry, next); }

/* A bucket array let go of: the type's freeTable, else htabBigArrayFree
 * for a big one, else xfree. */
static void freeArray(const Htab *h, void **table, size_t slots) {
    if (!table) return;
    if (h->type && h->type->freeTable) h->type->freeTable(table, slots);
    else if (htabBigArrayFree && slots * sizeof(void *) >= HTAB_BIG_ARRAY_BYTES) htabBigArrayFree(table);
    else xfree(table);
}

static uint64_t entryHash(const Htab *h, const void *entry) {
    const void *key;
    size_t len;
    h->type->entryKey(entry, &key, &len);
    return h->type->hashKey(key, len);
}

static int entryHasKey(const Htab *h, const void *entry, const void *key, size_t len) {
    const void *ekey;
    size_t elen;
    h->type->entryKey(entry, &ekey, &elen);
    return elen == len && (len == 0 || memcmp(ekey, key, len) == 0);
}

/* The size for n entries after a growth or shrink: 1.5 n, at least
 * HTAB_MIN_SIZE (load 2/3, so the table takes n / 2 more adds before it
 * grows again). */
static size_t sizeFor(size_t n) {
    size_t s = n > SIZE_MAX / 3 * 2 ? n : n + n / 2;
    return s < HTAB_MIN_SIZE ? HTAB_MIN_SIZE : s;
}

/* The bucket of `hash` in an array of `size` slots. */
static inline size_t bucketOf(uint64_t hash, size_t size) {
    return (size_t)(((unsigned __int128)hash * size) >> 64);
}

/* The first hash of bucket b (b < size): the smallest h with
 * bucketOf(h, size) == b. */
static uint64_t bucketStart(size_t b, size_t size) {
    return (uint64_t)((((unsigned __int128)b << 64) + size - 1) / size);
}

static long long nowMicros(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t xorshiftNext(void) {
    if (xorshiftState == 0) {
        xorshiftState = (uint64_t)nowMicros() ^ (uint64_t)(uintptr_t)&xorshiftState;
        xorshiftState = xorshiftState * 0x9E3779B97F4A7C15ULL | 1;
    }
    xorshiftState ^= xorshiftState >> 12;
    xorshiftState ^= xorshiftState << 25;
    xorshiftState ^= xorshiftState >> 27;
    return xorshiftState * 0x2545F4914F6CDD1DULL;
}

static uint64_t randomNext(void) { return randomSource ? randomSource() : xorshiftNext(); }

/* ---- lifetime ----------------------------------------------------------- */

void htabInit(Htab *h, const HtabType *type) {
    memset(h, 0, sizeof(*h));
    h->type = type;
}

Htab *htabCreate(const HtabType *type) {
    Htab *h = xmalloc(sizeof(*h));
    htabInit(h, type);
    return h;
}

void htabClear(Htab *h, void (*freeEntry)(void *entry, void *priv), void *priv) {
    for (int t = 0; t < 2; t++) {
        if (freeEntry) {
            for (size_t i = 0; i < h->size[t]; i++) {
                /* The entries are scattered: the one a few buckets ahead is
                 * fetched while this one is freed. */
                if (i + HTAB_ITER_PREFETCH < h->size[t] && h->table[t][i + HTAB_ITER_PREFETCH])
                    __builtin_prefetch(h->table[t][i + HTAB_ITER_PREFETCH]);
                void *e = h->table[t][i];
                while (e) {
                    void *next = nextOf(e);
                    freeEntry(e, priv);
                    e = next;
                }
            }
        }
        freeArray(h, h->table[t], h->size[t]);
        h->table[t] = NULL;
        h->size[t] = 0;
        h->used[t] = 0;
    }
    h->rehashIdx = 0;
}

void htabRelease(Htab *h, void (*freeEntry)(void *entry, void *priv), void *priv) {
    htabClear(h, freeEntry, priv);
    xfree(h);
}

size_t htabSize(const Htab *h) { return h->used[0] + h->used[1]; }

size_t htabBuckets(const Htab *h) { return h->size[0] + h->size[1]; }

/* ---- resizing ----------------------------------------------------------- */

void htabSetResizeAllowed(int allowed) { resizeAllowed = allowed; }

/* Starts moving to `fresh`, a zeroed array of `size` slots.  An empty
 * table just gets it as its first array. */
static void startResizeWith(Htab *h, void **fresh, size_t size) {
    if (h->table[0] == NULL) {
        h->table[0] = fresh;
        h->size[0] = size;
        return;
    }
    h->table[1] = fresh;
    h->size[1] = size;
    h->used[1] = 0;
    h->rehashIdx = 0;
}

static void startResize(Htab *h, size_t size) { startResizeWith(h, xcalloc(size * sizeof(void *)), size); }

static void finishRehash(Htab *h) {
    freeArray(h, h->table[0], h->size[0]);
    h->table[0] = h->table[1];
    h->size[0] = h->size[1];
    h->used[0] = h->used[1];
    h->table[1] = NULL;
    h->size[1] = 0;
    h->used[1] = 0;
    h->rehashIdx = 0;
}

static void growIfNeeded(Htab *h) {
    if (htabIsRehashing(h)) return;
    if (h->size[0] == 0) {
        startResize(h, HTAB_MIN_SIZE);
        return;
    }
    size_t used = h->used[0];
    if (used < h->size[0]) return;
    if (!resizeAllowed && used <= h->size[0] * HTAB_FORCE_GROW_RATIO) return;
    /* 1.5 x the current size: the same size on every ask while allocTable
     * keeps the table filling its array (a prepared array must match);
     * more when growth waited past that. */
    size_t size = sizeFor(h->size[0]);
    if (size <= used) size = sizeFor(used + 1);
    if (h->type->growAllowed && !h->type->growAllowed(size * sizeof(void *), (double)used / (double)h->size[0]))
        return;
    if (h->type->allocTable) {
        void **fresh = h->type->allocTable(h, size);
        if (fresh) startResizeWith(h, fresh, size);
        return;
    }
    if (htabBigArrayAlloc && size * sizeof(void *) >= HTAB_PREPARED_ARRAY_BYTES && used < h->size[0] + h->size[0] / 2) {
        void **fresh = htabBigArrayAlloc(size);
        if (fresh) startResizeWith(h, fresh, size);
        return;
    }
    startResize(h, size);
}

int htabExpand(Htab *h, size_t entries) {
    if (htabIsRehashing(h)) return 0;
    size_t size = entries < HTAB_MIN_SIZE ? HTAB_MIN_SIZE : entries;
    if (size <= h->size[0]) return 0;
    startResize(h, size);
    return 1;
}

int htabShrinkIfNeeded(Htab *h) {
    if (htabIsRehashing(h) || !resizeAllowed || h->size[0] <= HTAB_MIN_SIZE) return 0;
    size_t used = h->used[0];
    if (used * 100 >= h->size[0] * HTAB_SHRINK_PERCENT) return 0;
    startResize(h, sizeFor(used));
    return 1;
}

/* How far ahead of the bucket it moves a rehash step fetches the next
 * entries (slots of table[0]). */
#define HTAB_REHASH_AHEAD 8

/* Moves up to n non-empty buckets of table[0] into table[1], visiting at
 * most HTAB_EMPTY_VISITS * n empty slots.  Returns the buckets moved. */
static size_t rehashSome(Htab *h, size_t n) {
    size_t emptyLeft = n * HTAB_EMPTY_VISITS;
    size_t moved = 0;
    size_t size1 = h->size[1];
    while (moved < n && h->used[0] != 0) {
        /* used[0] > 0 guarantees a non-empty slot at or after rehashIdx. */
        while (h->table[0][h->rehashIdx] == NULL) {
            h->rehashIdx++;
            if (--emptyLeft == 0) return moved;
        }
        /* The entries are scattered: fetch the first entry of a bucket a
         * few slots ahead, so that a later step (this access's, or the
         * next access's) finds it in cache rather than taking a miss for
         * each entry it moves.  Stays inside table[0]. */
        if (h->rehashIdx + HTAB_REHASH_AHEAD < h->size[0]) {
            void *ahead = h->table[0][h->rehashIdx + HTAB_REHASH_AHEAD];
            if (ahead) __builtin_prefetch(ahead);
            /* Halfway there that entry is in cache: fetch the second
             * entry of its chain and the slot it will move to. */
            void *mid = h->table[0][h->rehashIdx + HTAB_REHASH_AHEAD / 2];
            if (mid) {
                void *second = nextOf(mid);
                if (second) __builtin_prefetch(second);
                __builtin_prefetch(&h->table[1][bucketOf(entryHash(h, mid), size1)], 1);
            }
        }
        void *e = h->table[0][h->rehashIdx];
        while (e) {
            void *next = nextOf(e);
            size_t slot = bucketOf(entryHash(h, e), size1);
            setNextOf(e, h->table[1][slot]);
            h->table[1][slot] = e;
            h->used[0]--;
            h->used[1]++;
            e = next;
        }
        h->table[0][h->rehashIdx++] = NULL;
        moved++;
    }
    if (h->used[0] == 0) finishRehash(h);
    return moved;
}

/* The bucket moves that table operations pay for while rehashing: one
 * per lookup, HTAB_ADD_STEPS per add, so that adds alone finish a rehash
 * before the next growth is due (a growth leaves size / 2 adds to move
 * size buckets); none while resizing is disallowed (a fork child shares
 * the pages a move would write: the entries' links).  Lookups see both
 * arrays meanwhile. */
#define HTAB_ADD_STEPS 2

int htabOwing;

/* Whether an access's (or an owed) rehash step may move buckets now. */
static inline int mayStep(const Htab *h) { return htabIsRehashing(h) && h->pauseRehash == 0 && resizeAllowed; }

/* A type with maxOwed owes the steps instead, until the table owes that
 * many; its owner pays them with htabPayOwed outside the command. */
static void rehashOnAccessSteps(Htab *h, size_t steps) {
    if (!mayStep(h)) return;
    if (h->owed + steps <= h->type->maxOwed) {
        h->owed += (unsigned)steps;
        htabOwing = 1;
        return;
    }
    rehashSome(h, steps);
}

void htabPayOwed(Htab *h) {
    size_t owed = h->owed;
    h->owed = 0;
    if (owed && mayStep(h)) rehashSome(h, owed);
}

static void rehashOnAccess(Htab *h) { rehashOnAccessSteps(h, 1); }

int htabRehashStep(Htab *h, int buckets) {
    if (!htabIsRehashing(h)) return 0;
    if (h->pauseRehash > 0 || buckets <= 0) return 1;
    rehashSome(h, (size_t)buckets);
    return htabIsRehashing(h);
}

int htabRehashMicros(Htab *h, long long us) {
    if (h->pauseRehash > 0) return 0;
    long long start = nowMicros();
    size_t moved = 0;
    while (htabIsRehashing(h)) {
        moved += rehashSome(h, HTAB_MICROS_BATCH);
        if (nowMicros() - start >= us) break;
    }
    return moved > (size_t)INT_MAX ? INT_MAX : (int)moved;
}

void htabPauseRehash(Htab *h) { h->pauseRehash++; }

void htabResumeRehash(Htab *h) { h->pauseRehash--; }

/* ---- lookup and update -------------------------------------------------- */

/* Link to the entry with this key in table t, or NULL.  Always inlined: it
 * is the lookup's inner loop (GET, SET, LPUSH), and a third caller
 * (htabAddUnique) made GCC stop inlining it, +23 instructions per GET. */
static inline __attribute__((always_inline)) void **findLinkIn(Htab *h, int t, uint64_t hash, const void *key, size_t len) {
    if (h->size[t] == 0) return NULL;
    size_t slot = bucketOf(hash, h->size[t]);
    void **link = &h->table[t][slot];
    void *e = *link; /* a bucket slot holds a plain pointer */
    while (e) {
        if (entryHasKey(h, e, key, len)) return link;
        link = (void **)e;
        e = htabLinkGet(link);
    }
    return NULL;
}

/* Link to the entry with this key (hash: its hash) and the array holding
 * it, without a rehash step. */
static inline __attribute__((always_inline)) void **findLinkHashed(Htab *h, const void *key, size_t len, uint64_t hash,
                                                                    int *table) {
    for (int t = 0; t < 2; t++) {
        void **link = findLinkIn(h, t, hash, key, len);
        if (link) {
            *table = t;
            return link;
        }
    }
    return NULL;
}

static void **findLink(Htab *h, const void *key, size_t len, int *table) {
    if (htabSize(h) == 0) return NULL;
    return findLinkHashed(h, key, len, h->type->hashKey(key, len), table);
}

void **htabFindLink(Htab *h, const void *key, size_t len) {
    int t;
    rehashOnAccess(h);
    return findLink(h, key, len, &t);
}

void **htabFindLinkHash(Htab *h, const void *key, size_t len, uint64_t *hash) {
    int t;
    rehashOnAccess(h);
    *hash = h->type->hashKey(key, len);
    return htabSize(h) ? findLinkHashed(h, key, len, *hash, &t) : NULL;
}

void *htabFind(Htab *h, const void *key, size_t len) {
    void **link = htabFindLink(h, key, len);
    return link ? htabLinkGet(link) : NULL;
}

size_t htabUnitOf(const Htab *h, const void *key, size_t len) {
    uint64_t hash = h->type->hashKey(key, len);
    if (h->size[0] && findLinkIn((Htab *)h, 0, hash, key, len)) return bucketOf(hash, h->size[0]);
    if (htabIsRehashing(h)) return h->size[0] + bucketOf(hash, h->size[1]);
    return h->size[0] ? bucketOf(hash, h->size[0]) : 0;
}

void htabAdd(Htab *h, void *entry) { htabAddHash(h, entry, entryHash(h, entry)); }

void htabAddHash(Htab *h, void *entry, uint64_t hash) {
    rehashOnAccessSteps(h, HTAB_ADD_STEPS);
    growIfNeeded(h);
    int t = htabIsRehashing(h) ? 1 : 0;
    size_t slot = bucketOf(hash, h->size[t]);
    if ((uintptr_t)entry >> 48) htabEntryTooWide(entry);
    setNextOf(entry, h->table[t][slot]);
    h->table[t][slot] = entry;
    h->used[t]++;
}

void *htabAddUnique(Htab *h, void *entry) {
    rehashOnAccessSteps(h, HTAB_ADD_STEPS);
    const void *key;
    size_t len;
    h->type->entryKey(entry, &key, &len);
    uint64_t hash = h->type->hashKey(key, len);
    if (htabSize(h)) {
        for (int t = 0; t < 2; t++) {
            void **link = findLinkIn(h, t, hash, key, len);
            if (link) return htabLinkGet(link);
        }
    }
    growIfNeeded(h);
    int t = htabIsRehashing(h) ? 1 : 0;
    size_t slot = bucketOf(hash, h->size[t]);
    if ((uintptr_t)entry >> 48) htabEntryTooWide(entry);
    setNextOf(entry, h->table[t][slot]);
    h->table[t][slot] = entry;
    h->used[t]++;
    return NULL;
}

void *htabUnlink(Htab *h, const void *key, size_t len) {
    int t;
    rehashOnAccess(h);
    void **link = findLink(h, key, len, &t);
    if (!link) return NULL;
    void *e = htabLinkGet(link);
    htabLinkSet(link, nextOf(e));
    setNextOf(e, NULL);
    h->used[t]--;
    return e;
}

/* ---- scan and iteration ------------------------------------------------- */

/* Calls fn on the entries of array t whose hash is in [from, last]: the
 * chains of the buckets that overlap that range, checking the hashes only
 * in a bucket that reaches past either end.  fn may unlink the entry it
 * gets. */
static void scanRange(Htab *h, int t, uint64_t from, uint64_t last, void (*fn)(void *priv, void *entry),
                      void *priv) {
    size_t size = h->size[t];
    size_t lastBucket = bucketOf(last, size);
    for (size_t b = bucketOf(from, size); b <= lastBucket; b++) {
        uint64_t end = b + 1 == size ? UINT64_MAX : bucketStart(b + 1, size) - 1; /* its last hash */
        int whole = bucketStart(b, size) >= from && end <= last;
        void *e = h->table[t][b];
        while (e) {
            void *next = nextOf(e);
            if (whole) {
                fn(priv, e);
            } else {
                uint64_t hash = entryHash(h, e);
                if (hash >= from && hash <= last) fn(priv, e);
            }
            e = next;
        }
    }
}

void htabVisitHashRange(Htab *h, uint64_t from, uint64_t last, void (*fn)(void *priv, void *entry), void *priv) {
    if (htabSize(h) == 0 || from > last) return;
    htabPauseRehash(h);
    scanRange(h, 0, from, last, fn, priv);
    if (htabIsRehashing(h)) scanRange(h, 1, from, last, fn, priv);
    htabResumeRehash(h);
}

uint64_t htabScan(Htab *h, uint64_t cursor, void (*fn)(void *priv, void *entry), void *priv) {
    if (htabSize(h) == 0 || cursor >> (64 - HTAB_SCAN_SHIFT)) return 0;
    htabPauseRehash(h);
    int small = 0;
    if (htabIsRehashing(h) && h->size[1] < h->size[0]) small = 1;
    /* This call's range: from the cursor to the end of the smaller array's
     * bucket there, rounded up to a whole cursor unit. */
    uint64_t from = cursor << HTAB_SCAN_SHIFT;
    size_t b = bucketOf(from, h->size[small]);
    uint64_t next = 0; /* 0: the range reaches the end of hash space */
    if (b + 1 < h->size[small]) {
        uint64_t end = bucketStart(b + 1, h->size[small]);
        next = (end >> HTAB_SCAN_SHIFT) + ((end & ((1u << HTAB_SCAN_SHIFT) - 1)) != 0);
        if (next >> (64 - HTAB_SCAN_SHIFT)) next = 0;
    }
    uint64_t last = next ? (next << HTAB_SCAN_SHIFT) - 1 : UINT64_MAX;
    scanRange(h, 0, from, last, fn, priv);
    if (htabIsRehashing(h)) scanRange(h, 1, from, last, fn, priv);
    htabResumeRehash(h);
    return next;
}

void htabIterInit(HtabIter *it, Htab *h) {
    it->h = h;
    it->table = 0;
    it->index = 0;
    it->next = NULL;
    htabPauseRehash(h);
}

void *htabIterNext(HtabIter *it) {
    Htab *h = it->h;
    while (it->next == NULL) {
        if (it->table > 1) return NULL;
        /* Sizes are read live: an add may create the first array or start
         * a (paused) resize while iterating. */
        if (it->index >= h->size[it->table]) {
            it->table = (it->table == 0 && htabIsRehashing(h)) ? 1 : 2;
            it->index = 0;
            continue;
        }
        it->next = h->table[it->table][it->index++];
        /* The entries are scattered: ask for one a few buckets ahead now,
         * so that walking a large table does not wait on every entry. */
        if (it->index + HTAB_ITER_PREFETCH < h->size[it->table]) {
            void *ahead = h->table[it->table][it->index + HTAB_ITER_PREFETCH];
            if (ahead) __builtin_prefetch(ahead);
        }
    }
    void *e = it->next;
    it->next = nextOf(e);
    return e;
}

size_t htabArrayBuckets(const Htab *h, int t) { return (t == 0 || htabIsRehashing(h)) ? h->size[t] : 0; }

size_t htabVisitBuckets(const Htab *h, int t, size_t from, size_t to, void (*fn)(void *priv, void *entry),
                        void *priv) {
    size_t n = 0, size = htabArrayBuckets(h, t);
    if (to > size) to = size;
    for (size_t i = from; i < to; i++) {
        if (i + HTAB_ITER_PREFETCH < to && h->table[t][i + HTAB_ITER_PREFETCH])
            __builtin_prefetch(h->table[t][i + HTAB_ITER_PREFETCH]);
        for (void *e = h->table[t][i]; e; e = nextOf(e), n++) fn(priv, e);
    }
    return n;
}

void htabIterRelease(HtabIter *it) {
    htabResumeRehash(it->h);
    it->h = NULL;
}

/* ---- random access ------------------------------------------------------ */

void htabSetRandom(uint64_t (*rnd)(void)) { randomSource = rnd; }

void *htabRandom(Htab *h) {
    void *sample[HTAB_FAIR_SAMPLE];
    unsigned n = htabSample(h, sample, HTAB_FAIR_SAMPLE);
    return n ? sample[randomNext() % n] : NULL;
}

/* Appends chain entries to out[] until it holds count; returns the new n. */
static unsigned takeChain(void *e, void **out, unsigned n, unsigned count) {
    for (; e && n < count; e = nextOf(e)) out[n++] = e;
    return n;
}

unsigned htabSample(Htab *h, void **out, unsigned count) {
    if (count == 0 || htabSize(h) == 0) return 0;
    rehashOnAccess(h);
    /* Walk consecutive slots of the smaller array from a random one, each
     * with the slots of the larger array that start before its end while
     * rehashing (buckets map monotonically, so the larger array is walked
     * in step, from the slot overlapping the first).  No slot is read
     * twice, so no entry is taken twice, and wherever the walk starts it
     * sees both the moved and the unmoved part of the table. */
    int small = 0, large = 1;
    if (htabIsRehashing(h) && h->size[1] < h->size[0]) {
        small = 1;
        large = 0;
    }
    size_t smallSize = h->size[small];
    size_t largeSize = htabIsRehashing(h) ? h->size[large] : 0;
    size_t start = bucketOf(randomNext(), smallSize);
    size_t j = largeSize ? bucketOf(bucketStart(start, smallSize), largeSize) : 0; /* next larger slot */
    size_t largeRead = 0;
    size_t budget = (size_t)count * 10, visited = 0;
    unsigned n = 0;
    for (size_t step = 0; step < smallSize && n < count; step++) {
        if (visited >= budget && n > 0) break;
        size_t i = start + step < smallSize ? start + step : start + step - smallSize;
        n = takeChain(h->table[small][i], out, n, count);
        visited++;
        /* Larger slot j starts before small slot i ends: j / largeSize < (i + 1) / smallSize. */
        while (largeRead < largeSize && n < count &&
               (i + 1 == smallSize || (unsigned __int128)j * smallSize < (unsigned __int128)(i + 1) * largeSize)) {
            n = takeChain(h->table[large][j], out, n, count);
            visited++;
            largeRead++;
            if (++j == largeSize) {
                j = 0;
                break;
            }
        }
    }
    return n;
}

void htabReplaceEach(Htab *h, void *(*fn)(void *priv, void *entry), void *priv) {
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < h->size[t]; i++) {
            /* The entries are scattered: fetch a later bucket's first entry
             * while this one is handled (one cache miss each otherwise). */
            if (i + 16 < h->size[t] && h->table[t][i + 16]) __builtin_prefetch(h->table[t][i + 16]);
            void **link = &h->table[t][i];
            for (void *old; (old = htabLinkGet(link)) != NULL;) {
                void *e = fn(priv, old);
                htabLinkSet(link, e);
                link = (void **)e; /* the entry's first word is its chain link */
            }
        }
    }
}

void htabPrefetch(const Htab *h, const void *key, size_t len, int entryToo) {
    if (htabSize(h) == 0) return;
    htabPrefetchHash(h, h->type->hashKey(key, len), entryToo);
}

void *htabPrefetchHash(const Htab *h, uint64_t hash, int stage) {
    void *first = NULL;
    for (int t = 0; t < 2; t++) {
        if (h->size[t] == 0) continue;
        void *const *slot = &h->table[t][bucketOf(hash, h->size[t])];
        if (stage && *slot) __builtin_prefetch(first = *slot);
        else __builtin_prefetch(slot);
    }
    return first;
}

const void *htabPrefetchNext(const Htab *h, const void *entry, const void *key, size_t len, int *own) {
    if ((*own = entryHasKey(h, entry, key, len))) return entry;
    const void *next = htabLinkGet((void *const *)entry);
    if (next) __builtin_prefetch(next);
    return next;
}

void htabEntryTooWide(const void *entry) {
    fprintf(stderr, "htab: entry address %p does not fit a 48-bit link\n", entry);
    abort();
}
