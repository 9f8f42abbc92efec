/* test_db_slots.c -- unit tests for the keyspace's hash slots (src/db/db.c,
 * cluster mode): dbKeySlot's CRC-16 and hash tags, and with dbUseSlots the
 * per-slot visit, count and drop, through growth, rehashing and deletes,
 * against a count kept here; keys of other slots are never touched. */
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

int main(void) {
    xmallocRegisterThread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc16_and_tags),
        cmocka_unit_test(test_slot_visit_count_drop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
