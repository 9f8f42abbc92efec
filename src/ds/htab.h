/* htab.h -- intrusive chained hash table with incremental rehash.
 *
 * This is the keyspace table.  It owns only its bucket arrays (8 bytes per
 * slot); the entries belong to the caller.  Every entry is a caller struct
 * whose FIRST 8 bytes are its link word, the chain link the table threads
 * through: the next entry's address in the low 48 bits (user-space
 * addresses on 64-bit Linux fit; htabAdd checks), and 16 bits above that
 * belong to the entry -- the table never changes them, so an entry type may
 * keep data there (hash fields keep their lengths).  Read and write links
 * only with htabLinkGet / htabLinkSet.  The table never stores hashes: it asks HtabType for an entry's key
 * bytes and hashes them again when it moves the entry to a new table.
 *
 * Bucket arrays may have any size: an entry's bucket is its hash scaled to
 * the array (multiply-shift on all 64 bits, so hashKey must mix its high
 * bits well; siphash does).  Growing or shrinking allocates a
 * second array and moves the entries over a few buckets at a time: each
 * htabFind / htabFindLink / htabAdd / htabUnlink / htabRandom / htabSample
 * moves one bucket (htabAdd two), or owes them for htabPayOwed (a type
 * with maxOwed), and the server's timer calls htabRehashMicros.  While
 * both arrays are live, lookups try table[0] then table[1] and new entries go
 * to table[1].  Rehashing is paused (no entry changes table) while
 * `pauseRehash` > 0, which safe iterators and htabScan callbacks rely on.
 *
 * Keys are compared as bytes: equal length and equal memcmp.  Keys are
 * unique: htabAdd must only be given a key that is absent.
 *
 * Random numbers (htabRandom, htabSample) come from htabSetRandom's source,
 * or by default from an internal xorshift64* generator seeded from the clock
 * on first use.  The table is not thread-safe. */
#ifndef CAIRN_HTAB_H
#define CAIRN_HTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct Htab;

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || UINTPTR_MAX != 0xffffffffffffffffULL
#error "htab link words keep 48-bit addresses in their low 6 bytes: little-endian 64-bit targets only"
#endif

#define HTAB_LINK_MASK ((uint64_t)0xFFFFFFFFFFFFULL) /* the address bits of a link word */

/* The entry a link (a bucket slot or an entry's link word) points at. */
static inline void *htabLinkGet(void *const *link) {
    uint64_t v;
    memcpy(&v, link, sizeof(v));
    return (void *)(uintptr_t)(v & HTAB_LINK_MASK);
}

/* Points a link at p, keeping the 16 high bits of the word (an entry's
 * own; always 0 in a bucket slot): a store of the low 6 bytes only, no
 * read (little-endian).  p must have its top 16 bits clear. */
static inline void htabLinkSet(void **link, void *p) {
    uint64_t v = (uint64_t)(uintptr_t)p;
    memcpy(link, &v, 6);
}

/* Aborts: an entry address wider than 48 bits (never on 64-bit Linux). */
void htabEntryTooWide(const void *entry) __attribute__((noreturn));

typedef struct HtabType {
    /* Hash of a lookup key. */
    uint64_t (*hashKey)(const void *key, size_t len);
    /* Sets *key / *len to the key bytes of an entry (borrowed). */
    void (*entryKey)(const void *entry, const void **key, size_t *len);
    /* Optional: whether growing may allocate moreBytes of new slots now,
     * at load factor `load` (a cache under maxmemory defers growth rather
     * than evict keys to make room for slots).  NULL: always. */
    int (*growAllowed)(size_t moreBytes, double load);
    /* Optional: frees a bucket array of `slots` slots the table lets go
     * of, when a rehash finishes or htabClear empties it (the key table
     * hands a big one to the lazy-free thread: the allocator returns a
     * block of 8 MB or more to the system at once, a pause of milliseconds
     * on the thread that frees it).  NULL: xfree, or htabBigArrayFree. */
    void (*freeTable)(void **table, size_t slots);
    /* Optional: a zeroed array of `slots` slots for h to grow into, or NULL
     * to grow later (the key table has big arrays prepared on the lazy-free
     * thread: each first touch of a page costs a fault, ~25 us on this kind
     * of VM, and a rehash touches the new array's pages in random order).
     * The table keeps filling its current array meanwhile.  NULL: xcalloc,
     * or htabBigArrayAlloc. */
    void **(*allocTable)(const struct Htab *h, size_t slots);
    /* Optional: the rehash steps lookups and adds may leave owed (up to
     * this many buckets) for htabPayOwed to move later, outside the
     * command that made them due.  0: each access moves its own. */
    unsigned maxOwed;
} HtabType;

typedef struct Htab {
    const HtabType *type;  /* callbacks, borrowed */
    void **table[2];       /* bucket arrays; table[1] is non-NULL only while rehashing */
    size_t size[2];        /* slots in each array: 0 or at least 4 */
    size_t used[2];        /* entries held in each array */
    size_t rehashIdx;      /* while rehashing, table[0] slots below this are empty */
    int pauseRehash;       /* > 0: no entry may move between tables */
    unsigned owed;         /* rehash steps owed (HtabType.maxOwed) */
} Htab;

/* Safe iterator: see htabIterInit.  Fields are private. */
typedef struct HtabIter {
    Htab *h;      /* table being walked */
    int table;    /* 0 or 1: array being walked; 2 when finished */
    size_t index; /* next slot to read in that array */
    void *next;   /* next entry of the current chain, read before returning its predecessor */
} HtabIter;

/* Allocates an empty table (no buckets yet).  The caller owns it and frees
 * it with htabRelease.  `type` is borrowed and must outlive the table. */
Htab *htabCreate(const HtabType *type);
/* Initialises an embedded table; empty it with htabClear, never htabRelease. */
void htabInit(Htab *h, const HtabType *type);
/* Removes every entry, calling freeEntry(entry, priv) on each if freeEntry
 * is not NULL, and frees the bucket arrays.  The table stays usable. */
void htabClear(Htab *h, void (*freeEntry)(void *entry, void *priv), void *priv);
/* htabClear, then frees a table made by htabCreate. */
void htabRelease(Htab *h, void (*freeEntry)(void *entry, void *priv), void *priv);

/* Number of entries. */
size_t htabSize(const Htab *h);
/* Total bucket slots of both arrays (8 bytes each), for INFO and MEMORY. */
size_t htabBuckets(const Htab *h);
/* 1 while a rehash is in progress (two arrays live). */
static inline int htabIsRehashing(const Htab *h) { return h->table[1] != NULL; }

/* The entry whose key is key[0..len), or NULL. */
void *htabFind(Htab *h, const void *key, size_t len);
/* The address of the pointer that points at the entry with this key -- a
 * bucket slot or the `next` field of the previous entry in its chain -- or
 * NULL if absent.  It stays valid only until the next call on this table
 * other than htabSize / htabBuckets.
 *
 * The entry is htabLinkGet(link).  To replace the entry by another block
 * holding the same key, store the new pointer through the link:
 * `htabLinkSet(link, newEntry)` (a plain `*link = newEntry` is right only
 * in a table whose entries keep nothing in their link word's high bits,
 * such as the key table).  The new entry must carry the old entry's next:
 *   - after `newEntry = xrealloc(old, n)` it already does (realloc copied
 *     it), so just store the link -- do not read `old` again;
 *   - for a freshly built entry, copy htabLinkGet(old) into its link word
 *     first (htabLinkSet), then store the link and free the old entry. */
void **htabFindLink(Htab *h, const void *key, size_t len);
/* htabFindLink that also gives the key's hash (*hash, found or not), for
 * an htabAddHash of the same key when it was absent: a write that adds
 * what it did not find hashes the key once. */
void **htabFindLinkHash(Htab *h, const void *key, size_t len, uint64_t *hash);
/* Where key is, or would be added now, as a walk unit: its bucket in
 * array 0, or size[0] + its bucket in array 1 (htabVisitBuckets' order).
 * Stable while rehashing is paused and no resize starts.  Moves nothing. */
size_t htabUnitOf(const Htab *h, const void *key, size_t len);
/* Inserts an entry whose key is absent (the caller checked).  The table
 * borrows the entry; it writes only its `next` field.  May start growing. */
void htabAdd(Htab *h, void *entry);
/* htabAdd given the entry key's hash (from htabFindLinkHash on a table of
 * the same HtabType; the hash does not depend on the table's state). */
void htabAddHash(Htab *h, void *entry, uint64_t hash);
/* htabAdd of an entry whose key may be present: the key hashed once.
 * NULL when added, else the entry holding the key (nothing added). */
void *htabAddUnique(Htab *h, void *entry);
/* Removes the entry with this key and returns it (the caller owns it
 * again), or NULL if absent.  Never starts a shrink: see htabShrinkIfNeeded. */
void *htabUnlink(Htab *h, const void *key, size_t len);

/* Growth policy.  htabAdd grows when entries >= slots (load factor 1) to
 * 1.5 x slots (1.5 x (entries + 1) if growth waited past that), so the
 * array holds 8 to 12 bytes per entry at any count.  While resizing is not allowed (a fork child exists), growth waits
 * until entries > 5 x slots, shrinking does not happen, and a rehash under
 * way moves no buckets on access.  Global. */
void htabSetResizeAllowed(int allowed);
/* When set, a bucket array of at least HTAB_BIG_ARRAY_BYTES that a finished
 * rehash or htabClear lets go of, in a table whose type has no freeTable,
 * is handed to it rather than freed: the server frees it on its lazy-free
 * thread (jemalloc hands a block of 8 MB or more straight back to the
 * system, milliseconds on the thread that frees it).  NULL: xfree.  Set by
 * the server's timer, so tools and unit tests free in place. */
#define HTAB_BIG_ARRAY_BYTES (1u << 20)
extern void (*htabBigArrayFree)(void *block);
/* When set, a table whose type has no allocTable asks it for a bucket
 * array of HTAB_PREPARED_ARRAY_BYTES or more to grow into, as allocTable
 * (NULL: grow later, and keep filling the array meanwhile), until the
 * table holds 1.5 entries per slot; then it allocates the array itself.  The server
 * prepares the array on its lazy-free thread with its pages resident: a
 * rehash writes a new array in random order, a page fault at each first
 * touch (~25 us on this kind of VM: growing a sorted set to 3M members
 * by ZADDs of 100, 216 of the 30,000 calls took 1-10 ms; 17 with the
 * arrays prepared).  Set by the server's timer. */
#define HTAB_PREPARED_ARRAY_BYTES (128u << 10)
extern void **(*htabBigArrayAlloc)(size_t slots);
/* Starts a resize so the table holds at least `entries` without growing:
 * `entries` slots (>= 4).  For loaders that know the count.  Returns 1 if
 * a resize started, 0 if not needed or already rehashing. */
int htabExpand(Htab *h, size_t entries);
/* Starts shrinking when fill < 10%, to 1.5 x entries slots (at least
 * 4).  Called from the server timer.  Returns 1 if a shrink
 * started. */
int htabShrinkIfNeeded(Htab *h);
/* Moves up to `buckets` non-empty buckets (visiting at most 10x that many
 * empty ones).  Returns 1 if the rehash is still unfinished, 0 if done or
 * none was running.  Does nothing (returns 1) while paused. */
int htabRehashStep(Htab *h, int buckets);
/* Set when some table took on owed rehash steps (HtabType.maxOwed); the
 * owner clears it and calls htabPayOwed on its tables. */
extern int htabOwing;
/* Moves the buckets h owes, if rehashing may go on now; clears the debt. */
void htabPayOwed(Htab *h);
/* Rehashes in batches of 100 buckets until done or `us` microseconds have
 * passed.  Returns the number of non-empty buckets moved (0 while paused). */
int htabRehashMicros(Htab *h, long long us);
/* Nested pause / resume of rehashing: no entry moves while paused. */
void htabPauseRehash(Htab *h);
void htabResumeRehash(Htab *h);

/* Cursor scan in hash order.  Start with cursor 0; each call covers the
 * next range of hashes (about one bucket of the smaller array, and the
 * buckets of the larger array over the same range while rehashing), calls
 * fn(priv, entry) on each entry whose hash is in it, and returns the
 * cursor for the next call (below 2^48), 0 when the scan is complete; a
 * cursor of 2^48 or more ends the scan at once.  Every entry present from
 * the first call to the last is visited exactly once even if the table
 * grows, shrinks or rehashes between calls (the ranges are in hash space,
 * not slots); an entry added or removed meanwhile may or may not be.
 * fn may unlink the entry it is given (rehash is paused meanwhile) but must
 * not add entries or unlink others. */
uint64_t htabScan(Htab *h, uint64_t cursor, void (*fn)(void *priv, void *entry), void *priv);

/* Calls fn(priv, entry) once on every entry whose hash is in [from, last]
 * (both arrays while rehashing), touching only the buckets that range maps
 * to: with a hash whose high bits are a key's group (the key table's hash
 * slot in cluster mode), a group's entries without a walk of the rest.
 * fn may unlink the entry it is given (rehash is paused meanwhile), nothing
 * else. */
void htabVisitHashRange(Htab *h, uint64_t from, uint64_t last, void (*fn)(void *priv, void *entry), void *priv);
/* Safe iterator: pauses rehash until htabIterRelease, so each entry present
 * throughout is returned exactly once.  While iterating, the caller may
 * unlink or replace (via htabFindLink) the entry last returned, and may add
 * entries (which may or may not be returned); it must not unlink other
 * entries.  Always call htabIterRelease, even after htabIterNext gave NULL. */
void htabIterInit(HtabIter *it, Htab *h);
/* The next entry, or NULL when done. */
void *htabIterNext(HtabIter *it);
void htabIterRelease(HtabIter *it);
/* Calls fn for every entry, in bucket order; fn returns the entry to keep
 * in its place: the same one, or one with the same key and chain link that
 * replaces it (e.g. grown with realloc).  No rehash step runs; fn must not
 * add or remove entries.  O(buckets + entries). */
void htabReplaceEach(Htab *h, void *(*fn)(void *priv, void *entry), void *priv);
/* A hint before a lookup of key: fetches its bucket slot (entryToo: the
 * first entry the slot holds, once the slot itself is in cache) into the
 * cache.  Changes nothing; a lookup loop over many keys of a big table
 * calls it a few keys ahead to overlap the cache misses. */
void htabPrefetch(const Htab *h, const void *key, size_t len, int entryToo);
/* The same for a key whose hash (h->type->hashKey) is known, in two
 * stages: stage 0 the slot, stage 1 the entry.  A batch of lookups issues
 * every key's stage 0, then every key's stage 1, so that all their misses
 * overlap.  Stage 1 returns the entry it fetched (the first of the chain,
 * maybe not the key's), NULL if none. */
void *htabPrefetchHash(const Htab *h, uint64_t hash, int stage);
/* Stage 2, given what stage 1 returned (entry, now in cache or on its
 * way): entry itself, *own set, when it holds key; otherwise fetches the
 * next entry of its chain, where the lookup goes next, and returns it
 * (NULL at the chain's end), *own 0. */
const void *htabPrefetchNext(const Htab *h, const void *entry, const void *key, size_t len, int *own);

/* A table walked in pieces, several threads at once, each its own range
 * of buckets: htabArrayBuckets(h, t) is the size of bucket array t (array 1
 * exists while rehashing, else 0), and htabVisitBuckets calls fn(priv,
 * entry) on each entry of buckets [from, to) of array t.  Array 0 then
 * array 1, bucket by bucket, is the order htabIterNext gives.  Only reads
 * the table: the caller keeps it unchanged meanwhile (no writes, rehash
 * paused).  Returns the entries visited. */
size_t htabArrayBuckets(const Htab *h, int t);
size_t htabVisitBuckets(const Htab *h, int t, size_t from, size_t to, void (*fn)(void *priv, void *entry),
                        void *priv);

/* Sets the random source for htabRandom / htabSample (NULL restores the
 * internal xorshift64*).  Global. */
void htabSetRandom(uint64_t (*rnd)(void));
/* A random entry, or NULL if empty: one picked uniformly from up to
 * HTAB_FAIR_SAMPLE entries htabSample took.  Every entry is equally likely
 * in a table of at most that many entries, nearly so in a bigger one (the
 * chance of an entry does not depend on how many share its bucket). */
#define HTAB_FAIR_SAMPLE 20
void *htabRandom(Htab *h);
/* Stores up to `count` distinct entries into out[] and returns how many:
 * the chains of consecutive slots starting at a random one (of the smaller
 * array, each with the slots it expands to in the larger while rehashing).
 * Reads about 10 x count slots, more only while none was found; returns at
 * least one entry unless the table is empty.  For eviction and expiry. */
unsigned htabSample(Htab *h, void **out, unsigned count);

#endif
