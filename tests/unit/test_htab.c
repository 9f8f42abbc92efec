/* test_htab.c -- unit tests for src/ds/htab.c: lookups through a rehash,
 * exact growth and shrink sizes (1.5x steps), the scan guarantee (exactly
 * once, in hash order) under resizing, the safe
 * iterator, in-place replacement through htabFindLink, and random access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ds/alloc.h"
#include "ds/htab.h"

typedef struct TestEntry {
    void *next;   /* chain link, owned by the table */
    uint32_t len; /* key length */
    char key[];   /* key bytes, NUL-terminated for printing */
} TestEntry;

static uint64_t fnvHash(const void *key, size_t len) {
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33; /* spread the high bits into the low ones the mask keeps */
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* Only 8 distinct hashes, spread over the high bits the bucket mapping
 * uses: long chains, so links are often `next` fields. */
static uint64_t poorHash(const void *key, size_t len) { return (fnvHash(key, len) & 7) << 61; }

static void testEntryKey(const void *entry, const void **key, size_t *len) {
    const TestEntry *e = entry;
    *key = e->key;
    *len = e->len;
}

static const HtabType goodType = {fnvHash, testEntryKey, NULL, NULL, NULL, 0};
static const HtabType poorType = {poorHash, testEntryKey, NULL, NULL, NULL, 0};

static TestEntry *newEntry(const char *fmt, long n) {
    char buf[64];
    int len = snprintf(buf, sizeof(buf), fmt, n);
    TestEntry *e = xmalloc(sizeof(*e) + (size_t)len + 1);
    e->next = NULL;
    e->len = (uint32_t)len;
    memcpy(e->key, buf, (size_t)len + 1);
    return e;
}

static void freeEntry(void *entry, void *priv) {
    if (priv) ++*(long *)priv;
    xfree(entry);
}

static void *findf(Htab *h, const char *fmt, long n) {
    char buf[64];
    int len = snprintf(buf, sizeof(buf), fmt, n);
    return htabFind(h, buf, (size_t)len);
}

static void *unlinkf(Htab *h, const char *fmt, long n) {
    char buf[64];
    int len = snprintf(buf, sizeof(buf), fmt, n);
    return htabUnlink(h, buf, (size_t)len);
}

static void addRange(Htab *h, const char *fmt, long from, long to) {
    for (long i = from; i < to; i++) htabAdd(h, newEntry(fmt, i));
}

static void removeRange(Htab *h, const char *fmt, long from, long to) {
    for (long i = from; i < to; i++) {
        void *e = unlinkf(h, fmt, i);
        assert_non_null(e);
        xfree(e);
    }
}

/* The size a full table of `size` slots grows to (htab.c's rule). */
static size_t grownSize(size_t size) { return size + size / 2; }

/* Slots of a table after n adds from empty with every rehash finished:
 * 4, 6, 9, 13, 19, 28, 42, 63, 94, ..., 711, 1066, ... */
static size_t sizeAfterAdds(size_t n) {
    size_t size = 4;
    while (n > size) size = grownSize(size);
    return size;
}

static void finishRehash(Htab *h) {
    while (htabRehashStep(h, 1000)) {
    }
    assert_false(htabIsRehashing(h));
}

/* Counts chain lengths of both arrays; must agree with the counters. */
static void checkCounts(const Htab *h) {
    size_t n[2] = {0, 0};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < h->size[t]; i++)
            for (void *e = h->table[t][i]; e; e = htabLinkGet((void *const *)e)) n[t]++;
    assert_int_equal(n[0], h->used[0]);
    assert_int_equal(n[1], h->used[1]);
}

/* Deterministic random source so failures reproduce. */
static uint64_t testRandState = 88172645463325252ULL;
static uint64_t testRand(void) {
    testRandState ^= testRandState << 13;
    testRandState ^= testRandState >> 7;
    testRandState ^= testRandState << 17;
    return testRandState;
}

static int setup(void **state) {
    htabSetResizeAllowed(1);
    htabSetRandom(testRand);
    testRandState = 88172645463325252ULL;
    return 0;
}

/* ---- basic operations --------------------------------------------------- */

static void test_add_find_unlink_100k(void **state) {
    const long n = 100000;
    Htab *h = htabCreate(&goodType);
    assert_null(findf(h, "k%ld", 1));
    assert_null(unlinkf(h, "k%ld", 1));
    addRange(h, "k%ld", 0, n);
    assert_int_equal(htabSize(h), n);
    checkCounts(h);
    for (long i = 0; i < n; i++) {
        TestEntry *e = findf(h, "k%ld", i);
        assert_non_null(e);
        char buf[32];
        snprintf(buf, sizeof(buf), "k%ld", i);
        assert_string_equal(e->key, buf);
    }
    assert_null(findf(h, "k%ld", n));
    assert_null(findf(h, "x%ld", 5));
    for (long i = 0; i < n; i += 2) {
        TestEntry *e = unlinkf(h, "k%ld", i);
        assert_non_null(e);
        assert_int_equal(e->len, strlen(e->key));
        xfree(e);
    }
    assert_int_equal(htabSize(h), n / 2);
    checkCounts(h);
    for (long i = 0; i < n; i++) {
        if (i % 2)
            assert_non_null(findf(h, "k%ld", i));
        else
            assert_null(findf(h, "k%ld", i));
    }
    assert_null(unlinkf(h, "k%ld", 0));
    long freed = 0;
    htabRelease(h, freeEntry, &freed);
    assert_int_equal(freed, n / 2);
}

static void test_empty_key_and_binary_keys(void **state) {
    Htab h;
    htabInit(&h, &goodType);
    TestEntry *empty = xmalloc(sizeof(TestEntry) + 1);
    empty->len = 0;
    empty->key[0] = 0;
    htabAdd(&h, empty);
    TestEntry *bin = xmalloc(sizeof(TestEntry) + 3);
    bin->len = 3;
    memcpy(bin->key, "a\0b", 3);
    htabAdd(&h, bin);
    assert_ptr_equal(htabFind(&h, "", 0), empty);
    assert_ptr_equal(htabFind(&h, "a\0b", 3), bin);
    assert_null(htabFind(&h, "a", 1));
    assert_null(htabFind(&h, "a\0c", 3));
    htabClear(&h, freeEntry, NULL);
    assert_int_equal(htabSize(&h), 0);
    assert_int_equal(htabBuckets(&h), 0);
    /* Still usable after a clear. */
    addRange(&h, "z%ld", 0, 10);
    assert_non_null(findf(&h, "z%ld", 9));
    htabClear(&h, freeEntry, NULL);
}

static void test_find_during_rehash(void **state) {
    Htab *h = htabCreate(&goodType);
    long n = 0;
    /* Add until an add starts a rehash (at 712 entries: 711 -> 1066). */
    while (!(n > 700 && htabIsRehashing(h))) htabAdd(h, newEntry("r%ld", n++));
    assert_int_equal(n, 712);
    assert_int_equal(h->size[0], 711);
    assert_int_equal(h->size[1], 1066);
    htabRehashStep(h, 50);
    assert_true(htabIsRehashing(h));
    assert_true(h->used[0] > 0 && h->used[1] > 0);

    /* Paused: every entry is found in whichever array holds it, and none
     * moves. */
    htabPauseRehash(h);
    size_t used0 = h->used[0];
    for (long i = 0; i < n; i++) assert_non_null(findf(h, "r%ld", i));
    assert_int_equal(h->used[0], used0);
    htabResumeRehash(h);

    /* Mixed adds, finds and unlinks while the rehash proceeds one bucket per
     * operation. */
    for (long i = 0; i < 200; i++) {
        htabAdd(h, newEntry("r%ld", n++));
        xfree(unlinkf(h, "r%ld", i * 3));
        checkCounts(h);
    }
    for (long i = 0; i < n; i++) {
        if (i < 600 && i % 3 == 0)
            assert_null(findf(h, "r%ld", i));
        else
            assert_non_null(findf(h, "r%ld", i));
    }
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 1066);
    assert_int_equal(htabSize(h), n - 200);
    checkCounts(h);
    htabRelease(h, freeEntry, NULL);
}

/* A type with maxOwed: a lookup (one step) or an add (two) while
 * rehashing moves nothing and owes its steps instead, up to maxOwed; past
 * that, each access moves its own as without it.  htabPayOwed moves what
 * is owed and clears it, and neither owes nor moves while rehashing is
 * paused or resizing disallowed (a fork child shares the pages). */
static void test_owed_rehash_steps(void **state) {
    static const HtabType owingType = {fnvHash, testEntryKey, NULL, NULL, NULL, 10};
    Htab *h = htabCreate(&owingType);
    long n = 0;
    /* Paid after each add, the growths come where they do without debt. */
    while (!(n > 700 && htabIsRehashing(h))) {
        htabAdd(h, newEntry("o%ld", n++));
        if (!(n > 700 && htabIsRehashing(h))) htabPayOwed(h);
    }
    assert_int_equal(n, 712);
    size_t idx = h->rehashIdx, used0 = h->used[0];
    htabOwing = 0;
    /* The add that started the rehash owed nothing (none was due yet). */
    assert_int_equal(h->owed, 0);
    assert_non_null(findf(h, "o%ld", 5));
    htabAdd(h, newEntry("o%ld", n++));
    assert_int_equal(h->owed, 3);
    assert_true(htabOwing);
    assert_int_equal(h->rehashIdx, idx);
    assert_int_equal(h->used[0], used0);
    for (int i = 0; i < 7; i++) assert_non_null(findf(h, "o%ld", i));
    assert_int_equal(h->owed, 10);
    assert_int_equal(h->used[0], used0);
    /* Full: the next access moves its own bucket. */
    assert_non_null(findf(h, "o%ld", 9));
    assert_int_equal(h->owed, 10);
    assert_true(h->used[0] < used0);
    used0 = h->used[0];
    htabPayOwed(h);
    assert_int_equal(h->owed, 0);
    assert_true(h->used[0] < used0);
    checkCounts(h);

    /* Paused or resizing disallowed: nothing owed, nothing moved. */
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0) htabPauseRehash(h);
        else htabSetResizeAllowed(0);
        used0 = h->used[0];
        assert_non_null(findf(h, "o%ld", 1));
        htabAdd(h, newEntry("o%ld", n++));
        assert_int_equal(h->owed, 0);
        assert_int_equal(h->used[0], used0);
        if (mode == 0) htabResumeRehash(h);
        else htabSetResizeAllowed(1);
    }
    assert_non_null(findf(h, "o%ld", 1));
    assert_int_equal(h->owed, 1);
    htabPauseRehash(h);
    used0 = h->used[0];
    htabPayOwed(h); /* dropped: the paused table moves nothing */
    assert_int_equal(h->owed, 0);
    assert_int_equal(h->used[0], used0);
    htabResumeRehash(h);

    /* Paying as it goes, the rehash ends and every key is found. */
    while (htabIsRehashing(h)) {
        htabAdd(h, newEntry("o%ld", n++));
        htabPayOwed(h);
        checkCounts(h);
    }
    assert_int_equal(h->owed, 0);
    for (long i = 0; i < n; i++) assert_non_null(findf(h, "o%ld", i));
    /* Not rehashing: an access owes nothing. */
    assert_non_null(findf(h, "o%ld", 0));
    assert_int_equal(h->owed, 0);
    htabRelease(h, freeEntry, NULL);
}

/* htabFindLinkHash gives the key's hash whether or not it finds the key
 * (empty table included), and htabAddHash with that hash files the entry
 * where every lookup finds it: through growths and rehashes, on a table
 * with long chains too. */
static void test_find_then_add_with_the_hash(void **state) {
    const HtabType *types[2] = {&goodType, &poorType};
    for (int ti = 0; ti < 2; ti++) {
        Htab *h = htabCreate(types[ti]);
        long n = 3000;
        for (long i = 0; i < n; i++) {
            TestEntry *e = newEntry("h%ld", i);
            uint64_t hash = 0;
            assert_null(htabFindLinkHash(h, e->key, e->len, &hash));
            assert_int_equal(hash, types[ti]->hashKey(e->key, e->len));
            htabAddHash(h, e, hash);
            void **link = htabFindLinkHash(h, e->key, e->len, &hash);
            assert_non_null(link);
            assert_ptr_equal(htabLinkGet(link), e);
            assert_int_equal(hash, types[ti]->hashKey(e->key, e->len));
        }
        assert_int_equal(htabSize(h), (size_t)n);
        for (long i = 0; i < n; i++) {
            char buf[32];
            int len = snprintf(buf, sizeof(buf), "h%ld", i);
            TestEntry *e = htabFind(h, buf, (size_t)len);
            assert_non_null(e);
            assert_memory_equal(e->key, buf, (size_t)len);
        }
        htabRelease(h, freeEntry, NULL);
    }
}

/* htabPrefetchHash is a hint: stage 1 returns the head of the chain the
 * key's lookup starts from (the key's own entry is on it), and neither
 * stage takes a rehash step or changes a count, during a rehash too. */
static void test_prefetch_hash_changes_nothing(void **state) {
    Htab *h = htabCreate(&goodType);
    assert_null(htabPrefetchHash(h, fnvHash("x", 1), 1)); /* no array yet */
    long n = 0;
    while (n < 5000) htabAdd(h, newEntry("p%ld", n++));
    finishRehash(h);
    for (long i = 0; i < n; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "p%ld", i);
        uint64_t hash = fnvHash(buf, (size_t)len);
        assert_null(htabPrefetchHash(h, hash, 0));
        TestEntry *head = htabPrefetchHash(h, hash, 1);
        assert_non_null(head);
        TestEntry *want = findf(h, "p%ld", i);
        TestEntry *e = head;
        while (e && e != want) e = htabLinkGet(&e->next);
        assert_ptr_equal(e, want);
        /* Stage 2: the head itself when it is the key's, else the next
         * entry of the chain. */
        int mine;
        assert_ptr_equal(htabPrefetchNext(h, head, buf, (size_t)len, &mine), head == want ? head : htabLinkGet(&head->next));
        assert_int_equal(mine, head == want);
    }
    /* A key that is absent: its bucket is empty (NULL) or holds other
     * keys' entries, which are the table's own. */
    TestEntry *other = htabPrefetchHash(h, fnvHash("absent", 6), 1);
    if (other) assert_ptr_equal(htabFind(h, other->key, other->len), other);
    int own = -1;
    if (other) assert_ptr_equal(htabPrefetchNext(h, other, "absent", 6, &own), htabLinkGet(&other->next));
    if (other) assert_int_equal(own, 0);

    /* During a rehash (poor hashes: long chains in both arrays). */
    Htab *p = htabCreate(&poorType);
    long m = 0;
    while (!(m > 700 && htabIsRehashing(p))) htabAdd(p, newEntry("q%ld", m++));
    htabRehashStep(p, 3);
    assert_true(htabIsRehashing(p));
    size_t used0 = p->used[0], used1 = p->used[1], idx = p->rehashIdx;
    for (long i = 0; i < m; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "q%ld", i);
        uint64_t hash = poorHash(buf, (size_t)len);
        htabPrefetchHash(p, hash, 0);
        TestEntry *head = htabPrefetchHash(p, hash, 1);
        assert_non_null(head);
        int mine;
        const TestEntry *got = htabPrefetchNext(p, head, buf, (size_t)len, &mine);
        if (mine) assert_ptr_equal(got, head);
        if (mine) assert_memory_equal(got->key, buf, (size_t)len + 1); /* the key's own (findf would step) */
        else assert_ptr_equal(got, htabLinkGet(&head->next));
    }
    assert_int_equal(p->used[0], used0);
    assert_int_equal(p->used[1], used1);
    assert_int_equal(p->rehashIdx, idx);
    checkCounts(p);
    htabRelease(p, freeEntry, NULL);
    htabRelease(h, freeEntry, NULL);
}

/* Walking the buckets in ranges, array 0 then array 1, gives the entries in
 * the iterator's order, during a rehash too. */
typedef struct Seq {
    void **e;
    size_t n;
} Seq;

static void seqAdd(void *priv, void *entry) {
    Seq *s = priv;
    s->e[s->n++] = entry;
}

static void test_visit_buckets_in_ranges_is_iterator_order(void **state) {
    (void)state;
    Htab *h = htabCreate(&goodType);
    long n = 0;
    while (!(n > 1000 && htabIsRehashing(h))) htabAdd(h, newEntry("v%ld", n++));
    htabRehashStep(h, 50);
    assert_true(htabIsRehashing(h));
    htabPauseRehash(h);
    Seq it = {xmalloc(sizeof(void *) * (size_t)n), 0}, ranges = {xmalloc(sizeof(void *) * (size_t)n), 0};
    HtabIter hi;
    htabIterInit(&hi, h);
    void *e;
    while ((e = htabIterNext(&hi)) != NULL) seqAdd(&it, e);
    htabIterRelease(&hi);
    size_t visited = 0, step = 1;
    for (int t = 0; t < 2; t++) {
        size_t size = htabArrayBuckets(h, t);
        assert_true(size > 0);
        for (size_t from = 0; from < size; from += step, step = step * 3 % 97 + 1)
            visited += htabVisitBuckets(h, t, from, from + step, seqAdd, &ranges);
    }
    assert_int_equal(htabArrayBuckets(h, 0) + htabArrayBuckets(h, 1), htabBuckets(h));
    assert_int_equal(visited, (size_t)n);
    assert_int_equal(it.n, (size_t)n);
    assert_int_equal(ranges.n, (size_t)n);
    assert_memory_equal(it.e, ranges.e, sizeof(void *) * (size_t)n);
    htabResumeRehash(h);
    finishRehash(h);
    assert_int_equal(htabArrayBuckets(h, 1), 0);
    xfree(it.e);
    xfree(ranges.e);
    htabRelease(h, freeEntry, NULL);
}

/* ---- sizing ------------------------------------------------------------- */

static void test_growth_1m_exact(void **state) {
    const long n = 1000000;
    Htab *h = htabCreate(&goodType);
    const long full = 1049869; /* 699,913 x 1.5 */
    /* Each rehash finishes on the adds' own steps before the next growth
     * (the last, 699,913 -> 1,049,869 slots, starts at the 699,914th). */
    for (long i = 0; i < n; i++) {
        htabAdd(h, newEntry("key:%08ld", i));
        if (i == 699912) assert_false(htabIsRehashing(h));
    }
    assert_int_equal(sizeAfterAdds((size_t)n), full);
    finishRehash(h);
    assert_int_equal(htabBuckets(h), full);
    assert_int_equal(htabSize(h), n);
    /* Filling to exactly `full` entries stays; one more starts growing. */
    addRange(h, "key:%08ld", n, full);
    assert_int_equal(htabBuckets(h), full);
    htabAdd(h, newEntry("key:%08ld", full));
    assert_true(htabIsRehashing(h));
    assert_int_equal(h->size[1], grownSize(full));
    assert_true(htabRehashMicros(h, 10 * 1000 * 1000) > 0);
    assert_false(htabIsRehashing(h));
    for (long i = 0; i <= full; i += 997) assert_non_null(findf(h, "key:%08ld", i));
    htabRelease(h, freeEntry, NULL);
}

/* growAllowed: a refused growth waits (the table runs over load 1) and
 * happens once allowed again. */
static int growOk;
static double lastLoad;
static int growCheck(size_t moreBytes, double load) {
    assert_true(moreBytes >= 8);
    lastLoad = load;
    return growOk;
}

static void test_growth_deferred_while_not_allowed(void **state) {
    static const HtabType gatedType = {fnvHash, testEntryKey, growCheck, NULL, NULL, 0};
    Htab *h = htabCreate(&gatedType);
    growOk = 1;
    addRange(h, "g%ld", 0, 64);
    while (htabIsRehashing(h)) htabRehashStep(h, 100);
    size_t buckets = htabBuckets(h);
    growOk = 0;
    addRange(h, "g%ld", 64, 200);
    assert_int_equal(htabBuckets(h), buckets);
    assert_true(lastLoad > 1.0);
    for (long i = 0; i < 200; i++) assert_non_null(findf(h, "g%ld", i));
    growOk = 1;
    htabAdd(h, newEntry("g%ld", 200));
    assert_true(htabIsRehashing(h) || htabBuckets(h) > buckets);
    htabRelease(h, freeEntry, NULL);
}

/* freeTable: each finished rehash hands over the old array with its slot
 * count (growing and shrinking), and so does htabClear its live ones. */
static void *freedTables[32];
static size_t freedSlots[32];
static int freedCount;
static void recordFreeTable(void **table, size_t slots) {
    assert_true(freedCount < 32);
    freedTables[freedCount] = table;
    freedSlots[freedCount++] = slots;
    xfree(table);
}

static void test_free_table_hook(void **state) {
    static const HtabType hookType = {fnvHash, testEntryKey, NULL, recordFreeTable, NULL, 0};
    freedCount = 0;
    Htab *h = htabCreate(&hookType);
    addRange(h, "f%ld", 0, 4);
    assert_int_equal(freedCount, 0); /* the first array replaces nothing */
    void **first = h->table[0];
    htabAdd(h, newEntry("f%ld", 4)); /* 4 -> 6 slots */
    assert_true(htabIsRehashing(h));
    while (htabIsRehashing(h)) htabRehashStep(h, 1);
    assert_int_equal(freedCount, 1);
    assert_ptr_equal(freedTables[0], first);
    assert_int_equal(freedSlots[0], 4);
    addRange(h, "f%ld", 5, 1000);
    while (htabIsRehashing(h)) htabRehashStep(h, 100);
    /* 6, 9, 13, ... 711 slots replaced; 1066 live. */
    assert_int_equal(freedCount, 14);
    for (int i = 1; i < freedCount; i++) assert_int_equal(freedSlots[i], grownSize(freedSlots[i - 1]));
    assert_int_equal(htabBuckets(h), 1066);
    for (long i = 0; i < 990; i++) {
        void *e = unlinkf(h, "f%ld", i);
        assert_non_null(e);
        xfree(e);
    }
    assert_true(htabShrinkIfNeeded(h));
    while (htabIsRehashing(h)) htabRehashStep(h, 100);
    assert_int_equal(freedCount, 15);
    assert_int_equal(freedSlots[14], 1066);
    assert_int_equal(htabBuckets(h), 15); /* 1.5 x 10 */
    htabRelease(h, freeEntry, NULL);
    assert_int_equal(freedCount, 16);
    assert_int_equal(freedSlots[15], 15);
}

/* htabBigArrayFree: arrays of HTAB_BIG_ARRAY_BYTES or more that a table
 * without freeTable lets go of (a finished rehash, htabClear) go to it;
 * smaller ones are freed in place. */
static void *bigFreed[8];
static int bigFreedCount;
static void recordBigFree(void *block) {
    assert_true(bigFreedCount < 8);
    bigFreed[bigFreedCount++] = block;
    xfree(block);
}

static void test_big_array_free_hook(void **state) {
    const size_t bigSlots = HTAB_BIG_ARRAY_BYTES / sizeof(void *);
    bigFreedCount = 0;
    htabBigArrayFree = recordBigFree;
    Htab *h = htabCreate(&goodType);
    /* Grow until the live array is big and one big array has been
     * replaced: every smaller one was freed in place. */
    long n = 0;
    while (bigFreedCount == 0) {
        void **live = h->table[0];
        size_t liveSlots = h->size[0];
        addRange(h, "b%ld", n, n + 1000);
        n += 1000;
        finishRehash(h);
        if (h->table[0] != live && liveSlots < bigSlots) assert_int_equal(bigFreedCount, 0);
    }
    assert_int_equal(bigFreedCount, 1);
    assert_true(htabBuckets(h) >= bigSlots);
    /* Clearing hands over the live (big) array too. */
    void **live = h->table[0];
    htabClear(h, freeEntry, NULL);
    assert_int_equal(bigFreedCount, 2);
    assert_ptr_equal(bigFreed[1], live);
    /* A small table's array is freed in place. */
    addRange(h, "s%ld", 0, 100);
    htabRelease(h, freeEntry, NULL);
    assert_int_equal(bigFreedCount, 2);
    htabBigArrayFree = NULL;
}

/* allocTable: while it answers NULL the table keeps filling its array
 * past load 1; the array it then gives is the one the table grows into. */
static int allocRefusals;
static size_t allocAsked;
static void **lastGiven;
static void **deferringAlloc(const Htab *h, size_t slots) {
    allocAsked = slots;
    if (allocRefusals > 0) {
        allocRefusals--;
        return NULL;
    }
    lastGiven = xcalloc(slots * sizeof(void *));
    return lastGiven;
}

static void test_alloc_table_deferred(void **state) {
    static const HtabType deferType = {fnvHash, testEntryKey, NULL, NULL, deferringAlloc, 0};
    allocRefusals = 0;
    Htab *h = htabCreate(&deferType);
    addRange(h, "d%ld", 0, 63);
    while (htabIsRehashing(h)) htabRehashStep(h, 100);
    assert_int_equal(htabBuckets(h), 63);
    allocRefusals = 20;
    addRange(h, "d%ld", 63, 83); /* the 64th add asks first */
    assert_false(htabIsRehashing(h));
    assert_int_equal(htabBuckets(h), 63);
    assert_int_equal(allocAsked, 94); /* every ask for the same size */
    for (long i = 0; i < 83; i++) assert_non_null(findf(h, "d%ld", i));
    htabAdd(h, newEntry("d%ld", 83)); /* the 21st ask gets an array */
    assert_true(htabIsRehashing(h));
    assert_ptr_equal(h->table[1], lastGiven);
    assert_int_equal(h->size[1], 94);
    while (htabIsRehashing(h)) htabRehashStep(h, 100);
    for (long i = 0; i <= 83; i++) assert_non_null(findf(h, "d%ld", i));
    htabRelease(h, freeEntry, NULL);
}

/* htabBigArrayAlloc: a table without allocTable asks it for arrays of
 * HTAB_PREPARED_ARRAY_BYTES or more only; while it answers NULL the table
 * keeps filling, up to 1.5 entries per slot, and then allocates its own. */
static int bigAllocRefuse;
static size_t bigAllocAsks, bigAllocSmallest = (size_t)-1;
static void **bigAllocGiven;
static void **recordBigAlloc(size_t slots) {
    bigAllocAsks++;
    if (slots < bigAllocSmallest) bigAllocSmallest = slots;
    if (bigAllocRefuse) return NULL;
    bigAllocGiven = xcalloc(slots * sizeof(void *));
    return bigAllocGiven;
}

static void test_big_array_alloc_hook(void **state) {
    const size_t minSlots = HTAB_PREPARED_ARRAY_BYTES / sizeof(void *);
    htabBigArrayAlloc = recordBigAlloc;
    bigAllocAsks = 0;
    bigAllocSmallest = (size_t)-1;
    bigAllocRefuse = 0;
    Htab *h = htabCreate(&goodType);
    long n = 0;
    /* Grow through arrays the hook gives until the first given one is in
     * use: smaller arrays were never asked for. */
    while (bigAllocAsks == 0) {
        addRange(h, "a%ld", n, n + 1000);
        n += 1000;
        finishRehash(h);
    }
    assert_true(bigAllocSmallest >= minSlots);
    assert_ptr_equal(h->table[0], bigAllocGiven);
    /* Refused: the table fills past load 1 in its array, then allocates
     * its own at 1.5 entries per slot. */
    bigAllocRefuse = 1;
    size_t slots = h->size[0];
    while ((size_t)n < slots) htabAdd(h, newEntry("a%ld", n++));
    size_t asks = bigAllocAsks;
    while (!htabIsRehashing(h)) {
        assert_int_equal(h->size[0], slots);
        htabAdd(h, newEntry("a%ld", n++));
    }
    assert_true(bigAllocAsks > asks);
    assert_int_equal((size_t)n, slots + slots / 2 + 1);
    assert_true(h->table[1] != bigAllocGiven);
    finishRehash(h);
    for (long i = 0; i < n; i++) assert_non_null(findf(h, "a%ld", i));
    htabRelease(h, freeEntry, NULL);
    htabBigArrayAlloc = NULL;
}

static void test_shrink(void **state) {
    Htab *h = htabCreate(&goodType);
    addRange(h, "s%ld", 0, 10000);
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 12138);
    assert_false(htabShrinkIfNeeded(h)); /* 82% full */
    removeRange(h, "s%ld", 100, 10000);
    assert_true(htabShrinkIfNeeded(h));
    assert_int_equal(h->size[1], 150);
    assert_false(htabShrinkIfNeeded(h)); /* already rehashing */
    for (long i = 0; i < 100; i++) assert_non_null(findf(h, "s%ld", i));
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 150);
    checkCounts(h);

    /* 15 of 150 is not below 10%: no shrink.  Then down to none: 4 slots. */
    removeRange(h, "s%ld", 15, 100);
    assert_false(htabShrinkIfNeeded(h));
    removeRange(h, "s%ld", 0, 15);
    assert_true(htabShrinkIfNeeded(h));
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 4);
    assert_false(htabShrinkIfNeeded(h));
    assert_int_equal(htabSize(h), 0);
    htabRelease(h, freeEntry, NULL);
}

static void test_resize_disallowed(void **state) {
    Htab *h = htabCreate(&goodType);
    addRange(h, "d%ld", 0, 64);
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 94);
    htabSetResizeAllowed(0);
    /* Growth waits until the load factor passes 5. */
    addRange(h, "d%ld", 64, 471);
    assert_false(htabIsRehashing(h));
    assert_int_equal(htabBuckets(h), 94);
    htabAdd(h, newEntry("d%ld", 471)); /* 471 > 5 x 94: sized for the entries */
    assert_true(htabIsRehashing(h));
    assert_int_equal(h->size[1], 708); /* 1.5 x 472 */
    finishRehash(h);
    /* No shrink either. */
    removeRange(h, "d%ld", 0, 471);
    assert_false(htabShrinkIfNeeded(h));
    htabSetResizeAllowed(1);
    assert_true(htabShrinkIfNeeded(h));
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 4);
    assert_non_null(findf(h, "d%ld", 471));
    htabRelease(h, freeEntry, NULL);
}

static void test_expand_presize(void **state) {
    Htab *h = htabCreate(&goodType);
    assert_true(htabExpand(h, 1000));
    assert_int_equal(htabBuckets(h), 1000);
    assert_false(htabIsRehashing(h));
    assert_false(htabExpand(h, 1000));
    addRange(h, "e%ld", 0, 1000); /* exactly full: no growth */
    assert_int_equal(htabBuckets(h), 1000);
    assert_true(htabExpand(h, 5000));
    assert_true(htabIsRehashing(h));
    assert_false(htabExpand(h, 100000)); /* refused while rehashing */
    finishRehash(h);
    assert_int_equal(htabBuckets(h), 5000);
    htabRelease(h, freeEntry, NULL);
}

/* ---- scan --------------------------------------------------------------- */

typedef struct ScanState {
    unsigned char *seen; /* visits per base entry, saturating */
    long visits;         /* callbacks received */
} ScanState;

static void scanRecord(void *priv, void *entry) {
    ScanState *st = priv;
    TestEntry *e = entry;
    st->visits++;
    if (e->key[0] == 'b') {
        long i = strtol(e->key + 1, NULL, 10);
        if (st->seen[i] < 255) st->seen[i]++;
    }
}

static void test_scan_stable_exactly_once(void **state) {
    const long n = 5000;
    Htab *h = htabCreate(&goodType);
    addRange(h, "b%ld", 0, n);
    finishRehash(h);
    ScanState st = {xcalloc((size_t)n), 0};
    uint64_t cursor = 0;
    long calls = 0;
    do {
        cursor = htabScan(h, cursor, scanRecord, &st);
        calls++;
    } while (cursor != 0);
    assert_int_equal(calls, htabBuckets(h));
    assert_int_equal(st.visits, n);
    for (long i = 0; i < n; i++) assert_int_equal(st.seen[i], 1);
    xfree(st.seen);
    htabRelease(h, freeEntry, NULL);
    /* An empty table scans in one call. */
    Htab *empty = htabCreate(&goodType);
    assert_int_equal(htabScan(empty, 0, scanRecord, &st), 0);
    htabRelease(empty, NULL, NULL);
}

/* Cursors are hash positions in units of 2^16: every one returned is below
 * 2^48 and increasing, and a cursor past that range ends the scan. */
static void test_scan_cursor_range(void **state) {
    Htab *h = htabCreate(&goodType);
    addRange(h, "b%ld", 0, 3000);
    ScanState st = {xcalloc(3000), 0};
    assert_int_equal(htabScan(h, (uint64_t)1 << 48, scanRecord, &st), 0);
    assert_int_equal(htabScan(h, UINT64_MAX, scanRecord, &st), 0);
    assert_int_equal(st.visits, 0);
    uint64_t cursor = 0, prev = 0;
    do {
        cursor = htabScan(h, cursor, scanRecord, &st);
        assert_true(cursor == 0 || (cursor > prev && cursor < ((uint64_t)1 << 48)));
        prev = cursor;
    } while (cursor != 0);
    assert_int_equal(st.visits, 3000);
    /* Starting mid-way visits exactly the entries hashed at or past it. */
    uint64_t mid = (uint64_t)1 << 47;
    long expect = 0;
    for (long i = 0; i < 3000; i++) {
        char key[16];
        int len = snprintf(key, sizeof(key), "b%ld", i);
        if (fnvHash(key, (size_t)len) >= mid << 16) expect++;
    }
    st.visits = 0;
    cursor = mid;
    do cursor = htabScan(h, cursor, scanRecord, &st);
    while (cursor != 0);
    assert_int_equal(st.visits, expect);
    xfree(st.seen);
    htabRelease(h, freeEntry, NULL);
}

/* Tables of every size class up to a few thousand entries, stable or
 * mid-rehash (growing 1.5x: bucket boundaries of the two arrays never line
 * up, nor with the cursor's 2^16 units): a full scan returns each entry
 * exactly once. */
static void test_scan_exactly_once_any_size(void **state) {
    for (long n = 1; n < 3000; n += 13) {
        Htab *h = htabCreate(&goodType);
        addRange(h, "b%ld", 0, n);
        for (int pass = 0; pass < 2; pass++) {
            ScanState st = {xcalloc((size_t)n), 0};
            uint64_t cursor = 0;
            do cursor = htabScan(h, cursor, scanRecord, &st);
            while (cursor != 0);
            for (long i = 0; i < n; i++)
                if (st.seen[i] != 1) fail_msg("n %ld pass %d: b%ld visited %d times", n, pass, i, st.seen[i]);
            assert_int_equal(st.visits, n);
            xfree(st.seen);
            finishRehash(h);
        }
        htabRelease(h, freeEntry, NULL);
    }
}

/* What the churn in scanUnderChurn achieved, summed over seeds. */
typedef struct ChurnStats {
    int grows;       /* growths started between scan calls */
    int shrinks;     /* shrinks started between scan calls */
    int rehashCalls; /* scan calls made while two arrays were live */
} ChurnStats;

/* Scans a table of n base entries while, between calls, extra entries come
 * and go in waves that force growth, shrink and partial rehashes.  Every
 * base entry (present throughout) must be visited exactly once. */
static void scanUnderChurn(long n, long wave, int seed, ChurnStats *cs) {
    testRandState = 0x9E3779B97F4A7C15ULL * (uint64_t)(seed + 1);
    Htab *h = htabCreate(&goodType);
    addRange(h, "b%ld", 0, n);
    ScanState st = {xcalloc((size_t)n), 0};
    long extra = 0, extraFrom = 0; /* live extras are x[extraFrom, extra) */
    uint64_t cursor = 0;
    do {
        if (htabIsRehashing(h)) cs->rehashCalls++;
        cursor = htabScan(h, cursor, scanRecord, &st);
        int wasRehashing = htabIsRehashing(h);
        unsigned r = (unsigned)(testRand() % 40);
        if (r < 2 && extra - extraFrom < 4 * wave) { /* a wave in */
            addRange(h, "x%ld", extra, extra + wave);
            extra += wave;
            if (!wasRehashing && htabIsRehashing(h)) cs->grows++;
        } else if (r < 4) { /* a wave out, then shrink if sparse enough */
            removeRange(h, "x%ld", extraFrom, extra);
            extraFrom = extra;
            if (htabShrinkIfNeeded(h)) cs->shrinks++;
        } else if (r < 12) { /* a few rehash steps */
            htabRehashStep(h, (int)(testRand() % 8) + 1);
        } else if (r < 20) { /* a few extras in and out */
            addRange(h, "x%ld", extra, extra + 3);
            extra += 3;
            removeRange(h, "x%ld", extraFrom, extraFrom + 2);
            extraFrom += 2;
        }
    } while (cursor != 0);
    for (long i = 0; i < n; i++) {
        if (st.seen[i] != 1) fail_msg("seed %d: base entry b%ld visited %d times", seed, i, st.seen[i]);
    }
    xfree(st.seen);
    htabRelease(h, freeEntry, NULL);
}

static void test_scan_guarantee_under_resize(void **state) {
    ChurnStats cs = {0, 0, 0};
    for (int seed = 0; seed < 30; seed++) scanUnderChurn(200 + seed * 20, 1000 + seed * 50, seed, &cs);
    print_message("scan churn: %d grows, %d shrinks, %d calls mid-rehash\n", cs.grows, cs.shrinks,
                  cs.rehashCalls);
    assert_true(cs.grows > 10);
    assert_true(cs.shrinks > 10);
    assert_true(cs.rehashCalls > 100);
}

/* A deterministic schedule that is sure to hit each case: scan starts on a
 * small table, grows twice, then shrinks twice, with the cursor carried over
 * tables mid-rehash in both directions. */
static void test_scan_guarantee_scripted(void **state) {
    const long n = 500;
    Htab *h = htabCreate(&goodType);
    addRange(h, "b%ld", 0, n);
    finishRehash(h); /* 711 slots */
    ScanState st = {xcalloc((size_t)n), 0};
    int sawGrowRehash = 0, sawShrinkRehash = 0;
    uint64_t cursor = 0;
    long calls = 0;
    do {
        cursor = htabScan(h, cursor, scanRecord, &st);
        calls++;
        if (calls == 20) addRange(h, "x%ld", 0, 330); /* 711 -> 1066 at 712, rehash in progress */
        if (calls == 21) htabRehashStep(h, 10);
        if (calls == 40) addRange(h, "x%ld", 330, 5000); /* grows on */
        if (htabIsRehashing(h) && h->size[1] > h->size[0]) sawGrowRehash = 1;
        if (calls == 300) {
            removeRange(h, "x%ld", 0, 5000);
            finishRehash(h);
            assert_true(htabShrinkIfNeeded(h)); /* -> 750 */
            htabRehashStep(h, 20);
        }
        if (htabIsRehashing(h) && h->size[1] < h->size[0]) sawShrinkRehash = 1;
        if (calls == 320) finishRehash(h);
    } while (cursor != 0);
    assert_true(sawGrowRehash);
    assert_true(sawShrinkRehash);
    for (long i = 0; i < n; i++) assert_int_equal(st.seen[i], 1); /* ranges never overlap */
    xfree(st.seen);
    htabRelease(h, freeEntry, NULL);
}

static void scanUnlink(void *priv, void *entry) {
    Htab *h = priv;
    TestEntry *e = entry;
    TestEntry *got = htabUnlink(h, e->key, e->len);
    assert_ptr_equal(got, e);
    xfree(got);
}

static void test_scan_callback_unlinks(void **state) {
    Htab *h = htabCreate(&poorType);
    addRange(h, "u%ld", 0, 3000);
    uint64_t cursor = 0;
    do cursor = htabScan(h, cursor, scanUnlink, h);
    while (cursor != 0);
    assert_int_equal(htabSize(h), 0);
    checkCounts(h);
    htabRelease(h, freeEntry, NULL);
}

/* ---- safe iterator ------------------------------------------------------ */

static void iterateDeletingEvens(Htab *h, long n) {
    unsigned char *seen = xcalloc((size_t)n);
    HtabIter it;
    htabIterInit(&it, h);
    TestEntry *e;
    long count = 0;
    while ((e = htabIterNext(&it)) != NULL) {
        long i = strtol(e->key + 1, NULL, 10);
        assert_int_equal(seen[i], 0);
        seen[i] = 1;
        count++;
        if (i % 2 == 0) {
            assert_ptr_equal(htabUnlink(h, e->key, e->len), e);
            xfree(e);
        }
    }
    assert_null(htabIterNext(&it));
    htabIterRelease(&it);
    assert_int_equal(count, n);
    assert_int_equal(htabSize(h), n / 2);
    assert_int_equal(h->pauseRehash, 0);
    for (long i = 0; i < n; i++) {
        if (i % 2)
            assert_non_null(findf(h, "i%ld", i));
        else
            assert_null(findf(h, "i%ld", i));
    }
    checkCounts(h);
    xfree(seen);
}

static void test_safe_iterator_delete_current(void **state) {
    /* Stable table, long chains. */
    Htab *h = htabCreate(&poorType);
    addRange(h, "i%ld", 0, 1000);
    finishRehash(h);
    iterateDeletingEvens(h, 1000);
    htabRelease(h, freeEntry, NULL);

    /* Rehash in progress when the iterator starts: both arrays are walked
     * and nothing moves between them meanwhile. */
    h = htabCreate(&goodType);
    addRange(h, "i%ld", 0, 712); /* 711 -> 1066 starts at the last */
    htabRehashStep(h, 100);
    assert_true(htabIsRehashing(h));
    iterateDeletingEvens(h, 712);
    htabRelease(h, freeEntry, NULL);

    /* Empty table. */
    h = htabCreate(&goodType);
    HtabIter it;
    htabIterInit(&it, h);
    assert_null(htabIterNext(&it));
    htabIterRelease(&it);
    htabRelease(h, NULL, NULL);
}

static void test_safe_iterator_adds_trigger_growth(void **state) {
    Htab *h = htabCreate(&goodType);
    addRange(h, "a%ld", 0, 64);
    finishRehash(h);
    HtabIter it;
    htabIterInit(&it, h);
    long count = 0, added = 0;
    TestEntry *e;
    while ((e = htabIterNext(&it)) != NULL) {
        if (e->key[0] == 'a') count++;
        if (added < 200) { /* forces a (paused) growth */
            htabAdd(h, newEntry("n%ld", added));
            added++;
        }
    }
    htabIterRelease(&it);
    assert_int_equal(count, 64);
    assert_true(htabIsRehashing(h));
    checkCounts(h);
    finishRehash(h);
    for (long i = 0; i < 64; i++) assert_non_null(findf(h, "a%ld", i));
    for (long i = 0; i < added; i++) assert_non_null(findf(h, "n%ld", i));
    htabRelease(h, freeEntry, NULL);
}

/* ---- replacement through htabFindLink ----------------------------------- */

static void test_findlink_replace(void **state) {
    const long n = 400;
    Htab *h = htabCreate(&poorType); /* 8 hashes: most links are next fields */
    addRange(h, "f%ld", 0, n);
    htabRehashStep(h, 1);
    assert_null(htabFindLink(h, "nope", 4));

    /* realloc path: the copy already carries next. */
    for (long i = 0; i < n; i += 2) {
        char key[32];
        int len = snprintf(key, sizeof(key), "f%ld", i);
        void **link = htabFindLink(h, key, (size_t)len);
        assert_non_null(link);
        TestEntry *old = *link;
        assert_string_equal(old->key, key);
        TestEntry *grown = xrealloc(old, sizeof(TestEntry) + 200); /* likely moves */
        *link = grown;
        assert_ptr_equal(htabFind(h, key, (size_t)len), grown);
    }
    /* Fresh-copy path: copy next, swap, free the old one. */
    for (long i = 1; i < n; i += 2) {
        char key[32];
        int len = snprintf(key, sizeof(key), "f%ld", i);
        void **link = htabFindLink(h, key, (size_t)len);
        assert_non_null(link);
        TestEntry *old = *link;
        TestEntry *copy = newEntry("f%ld", i);
        copy->next = old->next;
        *link = copy;
        xfree(old);
        assert_ptr_equal(htabFind(h, key, (size_t)len), copy);
    }
    assert_int_equal(htabSize(h), n);
    checkCounts(h);
    finishRehash(h);
    for (long i = 0; i < n; i++) assert_non_null(findf(h, "f%ld", i));
    htabRelease(h, freeEntry, NULL);
}

/* Entries may keep data in their link word's 16 high bits (hash fields keep
 * their lengths there): no table operation -- adds, a rehash, unlinks,
 * replacement through a link, htabReplaceEach, iteration -- changes them,
 * and lookups still follow the chains. */
static uint16_t tagOf(const TestEntry *e) {
    uint64_t v;
    memcpy(&v, e, sizeof(v));
    return (uint16_t)(v >> 48);
}

static void setTag(TestEntry *e, uint16_t tag) {
    uint64_t v;
    memcpy(&v, e, sizeof(v));
    v = (v & HTAB_LINK_MASK) | (uint64_t)tag << 48;
    memcpy(e, &v, sizeof(v));
}

static uint16_t tagFor(long i) { return (uint16_t)(0x8001 + i * 7919); } /* never 0 */

static void *regrowTagged(void *priv, void *entry) {
    (void)priv;
    return xrealloc(entry, sizeof(TestEntry) + 100); /* realloc keeps the word */
}

static void test_link_high_bits_kept(void **state) {
    (void)state;
    for (int poor = 0; poor < 2; poor++) {
        const long n = 6000;
        Htab *h = htabCreate(poor ? &poorType : &goodType);
        for (long i = 0; i < n; i++) {
            TestEntry *e = newEntry("t%ld", i);
            setTag(e, tagFor(i));
            htabAdd(h, e);
        }
        assert_true(htabIsRehashing(h) || htabSize(h) == (size_t)n);
        for (long i = 0; i < n; i += 3) { /* unlink a third */
            char k[32];
            int kl = snprintf(k, sizeof(k), "t%ld", i);
            TestEntry *e = htabUnlink(h, k, (size_t)kl);
            assert_non_null(e);
            assert_int_equal(tagOf(e), tagFor(i));
            assert_null(htabLinkGet((void *const *)e));
            xfree(e);
        }
        for (long i = 1; i < n; i += 3) { /* replace a third by fresh copies */
            char k[32];
            int kl = snprintf(k, sizeof(k), "t%ld", i);
            void **link = htabFindLink(h, k, (size_t)kl);
            assert_non_null(link);
            TestEntry *old = htabLinkGet(link), *copy = newEntry("t%ld", i);
            setTag(copy, tagFor(i));
            htabLinkSet((void **)copy, htabLinkGet((void *const *)old));
            htabLinkSet(link, copy);
            xfree(old);
        }
        htabReplaceEach(h, regrowTagged, NULL);
        finishRehash(h);
        long seen = 0;
        HtabIter it;
        htabIterInit(&it, h);
        for (TestEntry *e; (e = htabIterNext(&it)) != NULL; seen++) {
            long i = strtol(e->key + 1, NULL, 10);
            assert_int_equal(tagOf(e), tagFor(i));
        }
        htabIterRelease(&it);
        assert_int_equal(seen, n - n / 3);
        for (long i = 0; i < n; i++) {
            TestEntry *e = findf(h, "t%ld", i);
            if (i % 3 == 0) {
                assert_null(e);
            } else {
                assert_non_null(e);
                assert_int_equal(tagOf(e), tagFor(i));
            }
        }
        htabRelease(h, freeEntry, NULL);
    }
}

/* ---- random access ------------------------------------------------------ */

static int isMember(Htab *h, TestEntry *e) { return e && htabFind(h, e->key, e->len) == e; }

static void test_random_covers_small_table(void **state) {
    Htab *h = htabCreate(&poorType);
    assert_null(htabRandom(h));
    addRange(h, "q%ld", 0, 10);
    int hits[10] = {0};
    for (int d = 0; d < 20000; d++) {
        TestEntry *e = htabRandom(h);
        assert_true(isMember(h, e));
        hits[strtol(e->key + 1, NULL, 10)]++;
    }
    for (int i = 0; i < 10; i++) assert_true(hits[i] > 0);
    htabRelease(h, freeEntry, NULL);
}

/* Entries that share a bucket are drawn as often as one alone: a chi-square
 * over 20000 draws from 10 entries in at most 8 buckets stays below 40
 * (probability 1e-5 at 9 degrees of freedom; the chain-blind draw this
 * replaced scored hundreds). */
static void test_random_uniform_despite_chains(void **state) {
    htabSetRandom(NULL);
    Htab *h = htabCreate(&poorType);
    addRange(h, "u%ld", 0, 10);
    int hits[10] = {0};
    const int draws = 20000;
    for (int d = 0; d < draws; d++) hits[strtol(((TestEntry *)htabRandom(h))->key + 1, NULL, 10)]++;
    double chi = 0, expect = draws / 10.0;
    for (int i = 0; i < 10; i++) chi += (hits[i] - expect) * (hits[i] - expect) / expect;
    assert_true(chi < 40);
    htabRelease(h, freeEntry, NULL);
}

static void test_random_during_rehash_and_default_source(void **state) {
    htabSetRandom(NULL); /* internal xorshift */
    Htab *h = htabCreate(&goodType);
    addRange(h, "w%ld", 0, 14); /* 13 -> 19 starts at the 14th */
    assert_true(htabIsRehashing(h));
    htabPauseRehash(h);
    int hits[14] = {0};
    for (int d = 0; d < 20000; d++) {
        TestEntry *e = htabRandom(h);
        assert_true(isMember(h, e));
        hits[strtol(e->key + 1, NULL, 10)]++;
    }
    for (int i = 0; i < 14; i++) assert_true(hits[i] > 0);
    htabResumeRehash(h);
    htabRelease(h, freeEntry, NULL);
}

static void test_sample(void **state) {
    Htab *h = htabCreate(&goodType);
    void *out[64];
    assert_int_equal(htabSample(h, out, 5), 0);
    addRange(h, "p%ld", 0, 10);
    finishRehash(h);
    /* Fewer entries than asked: the whole table, each once. */
    unsigned got = htabSample(h, out, 20);
    assert_int_equal(got, 10);
    for (unsigned a = 0; a < got; a++) {
        assert_true(isMember(h, out[a]));
        for (unsigned b = a + 1; b < got; b++) assert_ptr_not_equal(out[a], out[b]);
    }
    /* Large table, rehashing: exactly count distinct members. */
    addRange(h, "p%ld", 10, 5396); /* 5395 -> 8092 starts at the last */
    assert_true(htabIsRehashing(h));
    for (int round = 0; round < 200; round++) {
        got = htabSample(h, out, 16);
        assert_int_equal(got, 16);
        for (unsigned a = 0; a < got; a++) {
            assert_true(isMember(h, out[a]));
            for (unsigned b = a + 1; b < got; b++) assert_ptr_not_equal(out[a], out[b]);
        }
    }
    /* Shrinking: table[0] is the larger array, and sparse (100 in 8092),
     * so 160 slots read may hold fewer than 16 entries. */
    finishRehash(h);
    removeRange(h, "p%ld", 100, 5396);
    assert_true(htabShrinkIfNeeded(h));
    htabRehashStep(h, 10);
    assert_true(htabIsRehashing(h) && h->size[0] > h->size[1]);
    for (int round = 0; round < 200; round++) {
        got = htabSample(h, out, 16);
        assert_true(got >= 1 && got <= 16);
        for (unsigned a = 0; a < got; a++) {
            assert_true(isMember(h, out[a]));
            for (unsigned b = a + 1; b < got; b++) assert_ptr_not_equal(out[a], out[b]);
        }
    }
    /* Very sparse: still at least one. */
    finishRehash(h);
    addRange(h, "p%ld", 100, 5396);
    removeRange(h, "p%ld", 1, 5396);
    finishRehash(h);
    for (int round = 0; round < 50; round++) {
        assert_int_equal(htabSample(h, out, 5), 1);
        assert_true(isMember(h, out[0]));
    }
    htabRelease(h, freeEntry, NULL);
}

/* ---- htabReplaceEach, htabPrefetch ------------------------------------------ */

/* Replaces every entry by a grown copy (a new allocation: the pointer
 * changes), counting the calls. */
static void *growCopy(void *priv, void *entry) {
    TestEntry *e = entry, *n = xmalloc(sizeof(*n) + e->len + 1 + 12);
    memcpy(n, e, sizeof(*e) + e->len + 1);
    xfree(e);
    ++*(long *)priv;
    return n;
}

static void test_replace_each_keeps_every_key(void **state) {
    (void)state;
    for (int poor = 0; poor < 2; poor++) {
        Htab *h = htabCreate(poor ? &poorType : &goodType);
        addRange(h, "r%ld", 0, 20000);
        /* mid-growth too: entries in both arrays are replaced */
        while (!htabIsRehashing(h)) htabAdd(h, newEntry("x%ld", (long)htabSize(h)));
        size_t n = htabSize(h);
        long calls = 0;
        htabReplaceEach(h, growCopy, &calls);
        assert_int_equal(calls, (long)n);
        assert_int_equal(htabSize(h), n);
        Htab *empty = htabCreate(&goodType);
        htabPrefetch(empty, "r1", 2, 1); /* no buckets: nothing to fetch */
        htabRelease(empty, freeEntry, NULL);
        for (long i = 0; i < 20000; i++) {
            char k[32];
            int kl = snprintf(k, sizeof(k), "r%ld", i);
            htabPrefetch(h, k, (size_t)kl, i & 1); /* a hint only: lookups unchanged */
            htabPrefetch(h, "missing", 7, 1);
            TestEntry *e = findf(h, "r%ld", i);
            assert_non_null(e);
            assert_int_equal(e->len, (uint32_t)snprintf(NULL, 0, "r%ld", i));
        }
        long freed = 0;
        htabRelease(h, freeEntry, &freed);
        assert_int_equal(freed, (long)n);
    }
}

/* ---- memory ------------------------------------------------------------- */

static void test_release_frees_buckets(void **state) {
    size_t before = xmallocUsed();
    Htab *h = htabCreate(&goodType);
    addRange(h, "m%ld", 0, 5000);
    assert_true(xmallocUsed() > before + htabBuckets(h) * sizeof(void *));
    htabRelease(h, freeEntry, NULL);
    assert_int_equal(xmallocUsed(), before);
}

/* htabUnitOf: every entry is visited in the unit it names, before,
 * during (paused) and after a rehash; an absent key's unit is where
 * htabAdd puts it (array 1 while rehashing). */
typedef struct UnitCheck {
    size_t unit;
    long seen;
    const Htab *h;
} UnitCheck;

static void unitVisit(void *priv, void *entry) {
    UnitCheck *u = priv;
    const TestEntry *e = entry;
    assert_int_equal(htabUnitOf(u->h, e->key, e->len), u->unit);
    u->seen++;
}

static void checkUnits(Htab *h) {
    UnitCheck u = {.h = h};
    size_t units = htabArrayBuckets(h, 0) + htabArrayBuckets(h, 1);
    for (u.unit = 0; u.unit < units; u.unit++) {
        int t = u.unit < htabArrayBuckets(h, 0) ? 0 : 1;
        size_t b = t ? u.unit - htabArrayBuckets(h, 0) : u.unit;
        htabVisitBuckets(h, t, b, b + 1, unitVisit, &u);
    }
    assert_int_equal(u.seen, (long)htabSize(h));
}

static void test_unit_of(void **state) {
    (void)state;
    Htab *h = htabCreate(&goodType);
    for (long i = 0; i < 1000; i++) htabAdd(h, newEntry("k%ld", i));
    checkUnits(h);
    /* Grow until a rehash is under way, then pause it. */
    long n = 1000;
    while (!htabIsRehashing(h)) htabAdd(h, newEntry("k%ld", n++));
    htabPauseRehash(h);
    checkUnits(h);
    for (long i = 0; i < 50; i++) {
        TestEntry *e = newEntry("new%ld", i);
        size_t want = htabUnitOf(h, e->key, e->len);
        assert_true(want >= htabArrayBuckets(h, 0)); /* absent: array 1 */
        htabAdd(h, e);
        assert_int_equal(htabUnitOf(h, e->key, e->len), want);
    }
    checkUnits(h);
    htabResumeRehash(h);
    while (htabRehashStep(h, 100)) {
    }
    checkUnits(h);
    htabRelease(h, freeEntry, NULL);
}

int main(void) {
    xmallocRegisterThread(); /* as the server's main() does first */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_add_find_unlink_100k, setup),
        cmocka_unit_test_setup(test_empty_key_and_binary_keys, setup),
        cmocka_unit_test_setup(test_find_during_rehash, setup),
        cmocka_unit_test_setup(test_prefetch_hash_changes_nothing, setup),
        cmocka_unit_test_setup(test_visit_buckets_in_ranges_is_iterator_order, setup),
        cmocka_unit_test_setup(test_growth_deferred_while_not_allowed, setup),
        cmocka_unit_test_setup(test_growth_1m_exact, setup),
        cmocka_unit_test_setup(test_free_table_hook, setup),
        cmocka_unit_test_setup(test_big_array_free_hook, setup),
        cmocka_unit_test_setup(test_big_array_alloc_hook, setup),
        cmocka_unit_test_setup(test_alloc_table_deferred, setup),
        cmocka_unit_test_setup(test_shrink, setup),
        cmocka_unit_test_setup(test_resize_disallowed, setup),
        cmocka_unit_test_setup(test_expand_presize, setup),
        cmocka_unit_test_setup(test_scan_stable_exactly_once, setup),
        cmocka_unit_test_setup(test_scan_cursor_range, setup),
        cmocka_unit_test_setup(test_scan_exactly_once_any_size, setup),
        cmocka_unit_test_setup(test_scan_guarantee_under_resize, setup),
        cmocka_unit_test_setup(test_scan_guarantee_scripted, setup),
        cmocka_unit_test_setup(test_scan_callback_unlinks, setup),
        cmocka_unit_test_setup(test_safe_iterator_delete_current, setup),
        cmocka_unit_test_setup(test_safe_iterator_adds_trigger_growth, setup),
        cmocka_unit_test_setup(test_findlink_replace, setup),
        cmocka_unit_test_setup(test_link_high_bits_kept, setup),
        cmocka_unit_test_setup(test_random_covers_small_table, setup),
        cmocka_unit_test_setup(test_random_uniform_despite_chains, setup),
        cmocka_unit_test_setup(test_random_during_rehash_and_default_source, setup),
        cmocka_unit_test_setup(test_sample, setup),
        cmocka_unit_test_setup(test_replace_each_keeps_every_key, setup),
        cmocka_unit_test_setup(test_release_frees_buckets, setup),
        cmocka_unit_test_setup(test_unit_of, setup),
        cmocka_unit_test_setup(test_find_then_add_with_the_hash, setup),
        cmocka_unit_test_setup(test_owed_rehash_steps, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
