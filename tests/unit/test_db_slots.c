/* test_db_slots.c -- unit tests for the keyspace's hash slots (src/db/db.c,
 * cluster mode): dbKeySlot's CRC-16 and hash tags (through its one-key
 * cache: never a stale answer), and with dbUseSlots the
 * per-slot visit, count and drop, through growth, rehashing and deletes,
 * against a count kept here; keys of other slots are never touched.  Then
 * the keyspace API over the slot tables: a hot slot's chains as short as a
 * spread keyspace's, DbIter, SCAN through growth and shrinks, the walk
 * units, random keys and samples fair across slots, the rehash timer,
 * dbEmptyAsync and dbSwap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "db/lazyfree.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/crc16.h"

#define NKEYS 60000

static void test_crc16_and_tags(void **state) {
    (void)state;
    assert_int_equal(crc16("123456789", 9), 0x31C3);
    assert_int_equal(dbKeySlot("123456789", 9), 0x31C3);
    assert_int_equal(dbKeySlot("foo", 3), 12182);
    assert_int_equal(dbKeySlot("{user1000}.following", 20), dbKeySlot("user1000", 8));
    assert_int_equal(dbKeySlot("{user1000}.followers", 20), dbKeySlot("user1000", 8));
    assert_int_equal(dbKeySlot("foo{}{bar}", 10), crc16("foo{}{bar}", 10) & 16383); /* empty tag: whole key */
    assert_int_equal(dbKeySlot("foo{{bar}}zap", 13), dbKeySlot("{bar", 4));
    assert_int_equal(dbKeySlot("foo{bar}{zap}", 13), dbKeySlot("bar", 3));
    assert_int_equal(dbKeySlot("{a", 2), crc16("{a", 2) & 16383);
    assert_int_equal(dbKeySlot("", 0), 0);
}

/* The reference: the slot of key[0..len) computed here, hash tag and
 * all, with no cache. */
static unsigned refSlot(const char *key, size_t len) {
    const char *open = memchr(key, '{', len);
    if (open) {
        const char *close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
        if (close && close > open + 1) return crc16(open + 1, (size_t)(close - open - 1)) & 16383;
    }
    return crc16(key, len) & 16383;
}

/* dbKeySlot remembers the last key it hashed (by content): the answer
 * must be the key's own whatever came before -- the same key again from
 * another buffer, a key of the same length differing in one byte (first,
 * middle, last), its hash-tagged variants, the empty key, keys at and
 * past the cache's 64 bytes, and a buffer rewritten in place between
 * calls (a freed argv reused for another key). */
static void test_slot_cache_never_stale(void **state) {
    (void)state;
    char a[200] = {0}, b[200] = {0};
    for (size_t len = 0; len < sizeof(a); len += (len < 70 ? 1 : 37)) {
        for (size_t i = 0; i < len; i++) a[i] = (char)('a' + (i * 7 + len) % 26);
        memcpy(b, a, len);
        assert_int_equal(dbKeySlot(a, len), refSlot(a, len));
        assert_int_equal(dbKeySlot(b, len), refSlot(a, len)); /* same bytes, other buffer */
        size_t at[3] = {0, len / 2, len ? len - 1 : 0};
        for (int k = 0; k < 3 && len; k++) {
            b[at[k]] ^= 1;
            assert_int_equal(dbKeySlot(b, len), refSlot(b, len));
            assert_int_equal(dbKeySlot(a, len), refSlot(a, len));
            b[at[k]] ^= 1;
        }
        /* rewritten in place: same pointer, same length, other key */
        for (size_t i = 0; i < len; i++) a[i] = (char)(a[i] == 'z' ? 'a' : a[i] + 1);
        assert_int_equal(dbKeySlot(a, len), refSlot(a, len));
        assert_int_equal(dbKeySlot("", 0), 0);
    }
    const char *keys[] = {"{user1000}.following", "{user1000}.followers", "user1000", "foo{}{bar}", "foo{bar}{zap}",
                          "{bar", "bar", "{a", "a{b}c", "a{c}b"};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
            assert_int_equal(dbKeySlot(keys[i], strlen(keys[i])), refSlot(keys[i], strlen(keys[i])));
}

static void countCb(void *priv, void *entry) {
    unsigned *want = priv;
    const kvobj *o = entry;
    assert_int_equal(dbKeySlot(kvKey(o), kvKeyLen(o)), want[0]);
    want[1]++;
}

static void test_slot_visit_count_drop(void **state) {
    (void)state;
    dbUseSlots();
    assert_true(dbSlotsOn());
    Db *db = dbCreateAll(1);
    static unsigned perSlot[DB_SLOTS];
    char key[32];
    for (int i = 0; i < NKEYS; i++) {
        int n = snprintf(key, sizeof(key), i % 10 == 0 ? "{tag}%d" : "key:%d", i);
        dbAdd(db, kvCreateInt(key, (size_t)n, i));
        perSlot[dbKeySlot(key, (size_t)n)]++;
        if (i % 997 == 0) { /* visits while the table grows and rehashes */
            unsigned s = dbKeySlot(key, (size_t)n);
            assert_int_equal(dbSlotCount(db, s), perSlot[s]);
        }
    }
    for (int i = 1; i < NKEYS; i += 7) {
        int n = snprintf(key, sizeof(key), i % 10 == 0 ? "{tag}%d" : "key:%d", i);
        assert_int_equal(dbDelete(db, key, (size_t)n), 1);
        perSlot[dbKeySlot(key, (size_t)n)]--;
    }
    size_t total = 0;
    for (unsigned s = 0; s < DB_SLOTS; s++) {
        unsigned seen[2] = {s, 0};
        dbSlotVisit(db, s, countCb, seen);
        assert_int_equal(seen[1], perSlot[s]);
        total += seen[1];
    }
    assert_int_equal(total, dbSize(db));
    unsigned tag = dbKeySlot("tag", 3);
    size_t before = dbSize(db);
    assert_int_equal(dbSlotDrop(db, tag), (long long)perSlot[tag]);
    assert_int_equal(dbSlotCount(db, tag), 0);
    assert_int_equal(dbSize(db), before - perSlot[tag]);
    perSlot[tag] = 0;
    for (unsigned s = 0; s < DB_SLOTS; s += 97) assert_int_equal(dbSlotCount(db, s), perSlot[s]);
    int n = snprintf(key, sizeof(key), "key:%d", 2);
    assert_non_null(dbFind(db, key, (size_t)n)); /* lookups still find keys */
    assert_null(dbFind(db, "{tag}0", 6));
    dbEmpty(db);
    lazyfreeWaitIdle();
    dbFreeAll(db, 1);
}


/* Keys "{hot}N" (one slot) for N < hot and "kN" (spread) for N < hot + spread;
 * each entry's integer value is N. */
static Db *makeDb(int hot, int spread) {
    Db *db = dbCreateAll(1);
    char key[32];
    for (int i = 0; i < hot + spread; i++) {
        int n = snprintf(key, sizeof(key), i < hot ? "{hot}%d" : "k%d", i);
        dbAdd(db, kvCreateInt(key, (size_t)n, i));
    }
    return db;
}

static void freeDb(Db *db) {
    dbEmpty(db);
    lazyfreeWaitIdle();
    dbFreeAll(db, 1);
}

/* The longest chain over the key tables (what a lookup may walk). */
static size_t maxChain(const Db *db) {
    size_t longest = 0;
    for (size_t k = 0; k < dbKeyTables(db); k++) {
        const Htab *h = dbKeyTable(db, k);
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; h->table[t] && i < h->size[t]; i++) {
                size_t len = 0;
                for (void *e = h->table[t][i]; e; e = htabLinkGet((void *const *)e)) len++;
                if (len > longest) longest = len;
            }
    }
    return longest;
}

static void test_hot_slot_short_chains(void **state) {
    (void)state;
    dbUseSlots();
    Db *db = makeDb(100000, 1000);
    assert_int_equal(dbKeyTables(db), DB_SLOTS);
    assert_int_equal(dbSize(db), 101000);
    unsigned hot = dbKeySlot("hot", 3);
    assert_int_equal(dbSlotCount(db, hot), 100000); /* O(1): the slot table's size */
    /* 100,000 keys of one slot: chains of a table sized for them (the old
     * single table gave the slot 1/16384 of its buckets: chains of
     * thousands). */
    size_t longest = maxChain(db);
    assert_true(longest <= 16);
    assert_non_null(dbFind(db, "{hot}99999", 10));
    assert_non_null(dbFind(db, "k100999", 7));
    assert_null(dbFind(db, "{hot}100000", 11));
    freeDb(db);
}

static void seenCb(void *priv, void *entry) {
    unsigned char *seen = priv;
    seen[kvInt(entry)]++;
}

static void test_iter_scan_walk(void **state) {
    (void)state;
    dbUseSlots();
    enum { HOT = 20000, SPREAD = 30000, ALL = HOT + SPREAD };
    Db *db = makeDb(HOT, SPREAD);
    static unsigned char seen[ALL + 20000];
    /* DbIter: every key once, slot after slot */
    memset(seen, 0, sizeof(seen));
    DbIter it;
    kvobj *o;
    unsigned last = 0;
    dbIterInit(&it, db);
    while ((o = dbIterNext(&it)) != NULL) {
        unsigned s = dbKeySlot(kvKey(o), kvKeyLen(o));
        assert_true(s >= last);
        last = s;
        seen[kvInt(o)]++;
    }
    dbIterRelease(&it);
    for (int i = 0; i < ALL; i++) assert_int_equal(seen[i], 1);

    /* SCAN while keys are added (the tables grow) and deleted (they
     * shrink, from the timer): every key present throughout comes back,
     * once (no table rehashes back and forth here). */
    memset(seen, 0, sizeof(seen));
    uint64_t cursor = 0;
    int calls = 0, added = 0;
    char key[32];
    do {
        cursor = dbScan(db, cursor, seenCb, seen);
        calls++;
        if (calls % 5 == 0 && added < 20000) { /* grow some tables */
            for (int j = 0; j < 400; j++, added++) {
                int n = snprintf(key, sizeof(key), added % 2 ? "{hot}%d" : "k%d", ALL + added);
                dbAdd(db, kvCreateInt(key, (size_t)n, ALL + added));
            }
        }
        if (calls % 7 == 0) dbTimerMaintenance(db, 1);
    } while (cursor != 0 && calls < 10000000);
    assert_int_equal(cursor, 0);
    for (int i = 0; i < ALL; i++) assert_int_equal(seen[i], 1);
    assert_true(calls > (int)(DB_SLOTS / 4)); /* one slot per call, or a range of a big one */
    /* a cursor of 2^62 or more ends the walk at once */
    assert_int_equal(dbScan(db, 1ull << 62, seenCb, seen), 0);

    /* SCAN while the hot slot shrinks: delete most of it, let the timer
     * start the shrink, then scan with rehash steps between calls. */
    for (int i = 0; i < HOT; i++) {
        if (i % 20 == 0) continue;
        int n = snprintf(key, sizeof(key), "{hot}%d", i);
        assert_int_equal(dbDelete(db, key, (size_t)n), 1);
    }
    for (unsigned i = 0; i < DB_SLOTS / 1024 + 1; i++) dbTimerMaintenance(db, 1); /* every slot checked once */
    memset(seen, 0, sizeof(seen));
    cursor = 0;
    do {
        cursor = dbScan(db, cursor, seenCb, seen);
        dbRehashIdle(db, 1, 2);
    } while (cursor != 0);
    for (int i = 0; i < ALL; i++) assert_int_equal(seen[i], i < HOT && i % 20 ? 0 : 1);

    /* The walk units, cut in pieces, visit every key once, in the
     * iterator's order. */
    dbWalkFreeze(db);
    size_t units = dbWalkUnits(db), visited = 0;
    memset(seen, 0, sizeof(seen));
    for (size_t from = 0; from < units; from += 777)
        visited += dbWalkVisit(db, from, from + 777 < units ? from + 777 : units, seenCb, seen);
    dbWalkThaw(db);
    assert_int_equal(visited, dbSize(db));
    size_t distinct = 0;
    for (size_t i = 0; i < sizeof(seen); i++) {
        assert_true(seen[i] <= 1);
        distinct += seen[i];
    }
    assert_int_equal(distinct, dbSize(db));
    freeDb(db);
}

static void test_random_fair_across_slots(void **state) {
    (void)state;
    dbUseSlots();
    /* Half the keys in one slot, half spread: a fair draw picks the hot
     * slot about half the time (a draw by slot would nearly never). */
    enum { HOT = 20000, SPREAD = 20000 };
    Db *db = makeDb(HOT, SPREAD);
    int hotHits = 0, draws = 20000;
    static unsigned char seen[HOT + SPREAD];
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < draws; i++) {
        kvobj *o = dbRandomKey(db);
        assert_non_null(o);
        hotHits += kvInt(o) < HOT;
        seen[kvInt(o)] = 1;
    }
    assert_true(hotHits > draws * 4 / 10 && hotHits < draws * 6 / 10);
    size_t slotsSeen = 0;
    static unsigned char slotSeen[DB_SLOTS];
    memset(slotSeen, 0, sizeof(slotSeen));
    for (int i = HOT; i < HOT + SPREAD; i++)
        if (seen[i]) {
            char key[32];
            int n = snprintf(key, sizeof(key), "k%d", i);
            unsigned s = dbKeySlot(key, (size_t)n);
            slotsSeen += !slotSeen[s];
            slotSeen[s] = 1;
        }
    assert_true(slotsSeen > 3000); /* ~10,000 spread draws reach thousands of slots */
    /* samples: distinct keys, count of them while enough exist, from the
     * hot slot about half the time */
    int hotSamples = 0;
    for (int i = 0; i < 4000; i++) {
        void *out[16];
        unsigned n = dbSampleKeys(db, out, 16);
        assert_int_equal(n, 16);
        for (unsigned a = 0; a < n; a++)
            for (unsigned b = a + 1; b < n; b++) assert_ptr_not_equal(out[a], out[b]);
        hotSamples += kvInt(out[0]) < HOT;
    }
    assert_true(hotSamples > 4000 * 4 / 10 && hotSamples < 4000 * 6 / 10);
    freeDb(db);
    /* a few keys in few slots: samples still gather them all */
    db = makeDb(3, 2);
    void *out[16];
    assert_int_equal(dbSampleKeys(db, out, 16), 5);
    freeDb(db);
    db = dbCreateAll(1);
    assert_null(dbRandomKey(db));
    assert_int_equal(dbSampleKeys(db, out, 16), 0);
    assert_int_equal(dbScan(db, 0, seenCb, NULL), 0);
    dbFreeAll(db, 1);
}

static void test_rehash_empty_swap(void **state) {
    (void)state;
    dbUseSlots();
    Db *db = makeDb(50000, 50000);
    /* the timer and the idle loop finish every slot table's rehash */
    for (int i = 0; i < 1000 && dbRehashPending; i++) dbRehashIdle(db, 1, 1000);
    assert_int_equal(dbRehashPending, 0);
    for (size_t k = 0; k < dbKeyTables(db); k++) assert_false(htabIsRehashing(dbKeyTable(db, k)));
    /* dbSwap moves the slot tables with the keys */
    Db *other = dbCreateAll(1);
    size_t inHot = dbSlotCount(db, dbKeySlot("hot", 3)); /* 50,000 and a few spread keys */
    assert_true(inHot >= 50000 && inHot < 50100);
    dbSwap(db, other);
    assert_int_equal(dbSize(db), 0);
    assert_int_equal(dbSize(other), 100000);
    assert_int_equal(dbSlotCount(other, dbKeySlot("hot", 3)), inHot);
    assert_int_equal(dbSlotCount(db, dbKeySlot("hot", 3)), 0);
    assert_non_null(dbFind(other, "{hot}7", 6));
    assert_null(dbFind(db, "{hot}7", 6));
    /* dbEmptyAsync: empty at once, usable, the old keys freed aside */
    assert_int_equal(dbEmptyAsync(other), 100000);
    assert_int_equal(dbSize(other), 0);
    assert_null(dbFind(other, "{hot}7", 6));
    dbAdd(other, kvCreateInt("{hot}7", 6, 7));
    assert_int_equal(dbSize(other), 1);
    assert_int_equal(dbSlotCount(other, dbKeySlot("hot", 3)), 1);
    lazyfreeWaitIdle();
    size_t main, expires;
    dbIndexBytes(other, &main, &expires);
    assert_true(main > 0);
    freeDb(other);
    dbFreeAll(db, 1);
}

int main(void) {
    xmallocRegisterThread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc16_and_tags),
        cmocka_unit_test(test_slot_cache_never_stale),
        cmocka_unit_test(test_slot_visit_count_drop),
        cmocka_unit_test(test_hot_slot_short_chains),
        cmocka_unit_test(test_iter_scan_walk),
        cmocka_unit_test(test_random_fair_across_slots),
        cmocka_unit_test(test_rehash_empty_swap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
