/* htab.c -- intrusive chained hash table with incremental rehash.
 *
 * Invariants (see htab.h for the contract):
 *   - size[i] is 0 (table[i] == NULL) or a power of two; table[1] != NULL
 *     exactly while rehashing, and then table[0] != NULL too.
 *   - While rehashing, table[0] slots below rehashIdx are NULL; the rehash
 *     ends when used[0] reaches 0, and table[1] becomes table[0].
 *   - An entry's bucket in table i is hash & (size[i] - 1); chains are
 *     NULL-terminated through each entry's first word.
 *   - No entry changes array while pauseRehash > 0.
 *
 * htabScan's cursor counts in bit-reversed order: the high bits of the slot
 * index change fastest.  Slot s of a 2^k array splits into slots s and
 * s + 2^k of a 2^(k+1) array, so with this order, once a cursor has been
 * visited all of the slots it (and every earlier cursor) maps to in an array
 * of any other size have been visited too. */
#include "ds/htab.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include "ds/alloc.h"

#define HTAB_MIN_SIZE 4
#define HTAB_FORCE_GROW_RATIO 5 /* grow anyway past this load while resizing is disallowed */
#define HTAB_SHRINK_PERCENT 10  /* shrink below this fill */
#define HTAB_EMPTY_VISITS 10    /* empty slots a rehash step may visit per bucket it moves */
#define HTAB_MICROS_BATCH 100   /* buckets per batch in htabRehashMicros */

static int resizeAllowed = 1;
static uint64_t (*randomSource)(void);
static uint64_t xorshiftState;

/* ---- small helpers ------------------------------------------------------ */

#define HTAB_ITER_PREFETCH 8 /* buckets */

static inline void *nextOf(const void *entry) { return *(void *const *)entry; }
static inline void **linkOf(void *entry) { return (void **)entry; }

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

/* Smallest power of two >= n, at least HTAB_MIN_SIZE. */
static size_t sizeFor(size_t n) {
    size_t s = HTAB_MIN_SIZE;
    size_t cap = (size_t)1 << (sizeof(size_t) * 8 - 1);
    while (s < n && s < cap) s <<= 1;
    return s;
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

static uint64_t reverseBits(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    v = ((v >> 8) & 0x00FF00FF00FF00FFULL) | ((v & 0x00FF00FF00FF00FFULL) << 8);
    v = ((v >> 16) & 0x0000FFFF0000FFFFULL) | ((v & 0x0000FFFF0000FFFFULL) << 16);
    return (v >> 32) | (v << 32);
}

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
                void *e = h->table[t][i];
                while (e) {
                    void *next = nextOf(e);
                    freeEntry(e, priv);
                    e = next;
                }
            }
        }
        xfree(h->table[t]);
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

/* Starts moving to `fresh`, a zeroed array of `size` slots (a power of
 * two).  An empty table just gets it as its first array. */
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
    if (h->type->freeTable) h->type->freeTable(h->table[0], h->size[0]);
    else xfree(h->table[0]);
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
    size_t size = sizeFor(used + 1);
    if (h->type->growAllowed && !h->type->growAllowed(size * sizeof(void *), (double)used / (double)h->size[0]))
        return;
    if (h->type->allocTable) {
        void **fresh = h->type->allocTable(h, size);
        if (fresh) startResizeWith(h, fresh, size);
        return;
    }
    startResize(h, size);
}

int htabExpand(Htab *h, size_t entries) {
    if (htabIsRehashing(h)) return 0;
    size_t size = sizeFor(entries);
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

/* Moves up to n non-empty buckets of table[0] into table[1], visiting at
 * most HTAB_EMPTY_VISITS * n empty slots.  Returns the buckets moved. */
static size_t rehashSome(Htab *h, size_t n) {
    size_t emptyLeft = n * HTAB_EMPTY_VISITS;
    size_t moved = 0;
    size_t mask1 = h->size[1] - 1;
    while (moved < n && h->used[0] != 0) {
        /* used[0] > 0 guarantees a non-empty slot at or after rehashIdx. */
        while (h->table[0][h->rehashIdx] == NULL) {
            h->rehashIdx++;
            if (--emptyLeft == 0) return moved;
        }
        void *e = h->table[0][h->rehashIdx];
        while (e) {
            void *next = nextOf(e);
            size_t slot = entryHash(h, e) & mask1;
            *linkOf(e) = h->table[1][slot];
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

/* The one bucket move that table operations pay for while rehashing;
 * none while resizing is disallowed (a fork child shares the pages a move
 * would write: the entries' links).  Lookups see both arrays meanwhile. */
static void rehashOnAccess(Htab *h) {
    if (htabIsRehashing(h) && h->pauseRehash == 0 && resizeAllowed) rehashSome(h, 1);
}

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

/* Link to the entry with this key in table t, or NULL. */
static void **findLinkIn(Htab *h, int t, uint64_t hash, const void *key, size_t len) {
    if (h->size[t] == 0) return NULL;
    size_t slot = hash & (h->size[t] - 1);
    void **link = &h->table[t][slot];
    while (*link) {
        if (entryHasKey(h, *link, key, len)) return link;
        link = linkOf(*link);
    }
    return NULL;
}

/* Link to the entry with this key and the array holding it, without a
 * rehash step. */
static void **findLink(Htab *h, const void *key, size_t len, int *table) {
    if (htabSize(h) == 0) return NULL;
    uint64_t hash = h->type->hashKey(key, len);
    for (int t = 0; t < 2; t++) {
        void **link = findLinkIn(h, t, hash, key, len);
        if (link) {
            *table = t;
            return link;
        }
    }
    return NULL;
}

void **htabFindLink(Htab *h, const void *key, size_t len) {
    int t;
    rehashOnAccess(h);
    return findLink(h, key, len, &t);
}

void *htabFind(Htab *h, const void *key, size_t len) {
    void **link = htabFindLink(h, key, len);
    return link ? *link : NULL;
}

void htabAdd(Htab *h, void *entry) {
    rehashOnAccess(h);
    growIfNeeded(h);
    int t = htabIsRehashing(h) ? 1 : 0;
    size_t slot = entryHash(h, entry) & (h->size[t] - 1);
    *linkOf(entry) = h->table[t][slot];
    h->table[t][slot] = entry;
    h->used[t]++;
}

void *htabUnlink(Htab *h, const void *key, size_t len) {
    int t;
    rehashOnAccess(h);
    void **link = findLink(h, key, len, &t);
    if (!link) return NULL;
    void *e = *link;
    *link = nextOf(e);
    *linkOf(e) = NULL;
    h->used[t]--;
    return e;
}

/* ---- scan and iteration ------------------------------------------------- */

/* Calls fn on every entry of one chain; fn may unlink the entry it gets. */
static void scanChain(void *e, void (*fn)(void *priv, void *entry), void *priv) {
    while (e) {
        void *next = nextOf(e);
        fn(priv, e);
        e = next;
    }
}

uint64_t htabScan(Htab *h, uint64_t cursor, void (*fn)(void *priv, void *entry), void *priv) {
    if (htabSize(h) == 0) return 0;
    htabPauseRehash(h);
    int small = 0, large = 1;
    if (htabIsRehashing(h) && h->size[1] < h->size[0]) {
        small = 1;
        large = 0;
    }
    uint64_t smallMask = h->size[small] - 1;
    scanChain(h->table[small][cursor & smallMask], fn, priv);
    if (htabIsRehashing(h)) {
        /* Visit every slot of the larger array whose low bits equal the
         * cursor's: count through the extra high bits, keeping the low. */
        uint64_t largeMask = h->size[large] - 1;
        uint64_t extra = largeMask & ~smallMask;
        uint64_t v = cursor & smallMask;
        do {
            scanChain(h->table[large][v], fn, priv);
            v = (((v | smallMask) + 1) & extra) | (v & smallMask);
        } while (v & extra);
    }
    htabResumeRehash(h);
    /* Increment the cursor's bits within smallMask in reversed order. */
    cursor |= ~smallMask;
    cursor = reverseBits(cursor);
    cursor++;
    return reverseBits(cursor);
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
    /* Walk consecutive slots of the smaller array, each with the slots it
     * expands to in the larger one while rehashing.  No slot is read twice,
     * so no entry is taken twice, and wherever the walk starts it sees both
     * the moved and the unmoved part of the table. */
    int small = 0, large = 1;
    if (htabIsRehashing(h) && h->size[1] < h->size[0]) {
        small = 1;
        large = 0;
    }
    size_t smallSize = h->size[small];
    size_t largeSize = htabIsRehashing(h) ? h->size[large] : 0;
    size_t start = randomNext() & (smallSize - 1);
    size_t budget = (size_t)count * 10, visited = 0;
    unsigned n = 0;
    for (size_t step = 0; step < smallSize && n < count; step++) {
        if (visited >= budget && n > 0) break;
        size_t i = (start + step) & (smallSize - 1);
        n = takeChain(h->table[small][i], out, n, count);
        visited++;
        for (size_t k = i; k < largeSize && n < count; k += smallSize, visited++)
            n = takeChain(h->table[large][k], out, n, count);
    }
    return n;
}
