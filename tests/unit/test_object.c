/* test_object.c -- unit tests for src/db/object.c, the packed per-key
 * record (kvobj), and for the paths in src/db/db.c that reallocate one.
 *
 * Sizes are checked as the allocator sees them: xmallocSize(entry) must be
 * slabGoodSize(expected bytes): entries come from the slab allocator
 * (ds/slab.h), whose 8-byte-step classes are exact in both builds, or else
 * xmalloc's class, which under jemalloc is the size class and under the
 * sanitizer build (glibc + ASan) the exact request, so both builds check
 * the layout.  Each reallocation path (gaining or losing an
 * expire, replacing a value with or without KEEPTTL, unsharing a string,
 * moving an inline listpack in or out, resizing one) is checked for the
 * key, the value, the expire, the access bits, the table and the TTL index
 * (every indexed entry stores its own position).  The db layer links
 * without the server: the keyspace is a library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/lazyfree.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/sds.h"
#include "ds/slab.h"

#define HEADER 11 /* link 6 | typeenc 1 | keylen8 1 | lru 3 */

static void assertEntrySize(kvobj *o, size_t expected) {
    assert_int_equal(xmallocSize(o), slabGoodSize(expected));
}

/* o's string value is `want`, through every reader. */
static void assertString(const kvobj *o, const char *want) {
    char buf[24];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(p, want, len);
    assert_int_equal(kvStringLen(o), strlen(want));
    sds d = kvStringDup(o);
    assert_string_equal(d, want);
    sdsFree(d);
}

static void assertKey(const kvobj *o, const char *key, size_t len) {
    assert_int_equal(kvKeyLen(o), len);
    assert_memory_equal(kvKey(o), key, len);
}

/* The TTL index of db holds exactly `count` entries, each at the position
 * it stores, each with an expire. */
static void assertTtlIndex(Db *db, uint32_t count) {
    assert_int_equal(db->ks.ttl.count, count);
    for (uint32_t i = 0; i < db->ks.ttl.count; i++) {
        kvobj *o = cvGet(&db->ks.ttl, i);
        assert_true(kvHasExpire(o));
        uint32_t pos;
        memcpy(&pos, o->data + 8, 4);
        assert_int_equal(pos, i);
        assert_ptr_equal(dbFind(db, kvKey(o), kvKeyLen(o)), o);
    }
}

static int setup(void **state) {
    dbNowMs = 100; /* the expires the tests set (111 and up) are in the future */
    dbLruClock = 0x123456;
    *state = dbCreateAll(1);
    return 0;
}

static int teardown(void **state) {
    dbFreeAll(*state, 1);
    return 0;
}

/* --- layout and sizes --- */

static void test_header_layout(void **state) {
    (void)state;
    assert_int_equal(sizeof(kvobj), HEADER);
    assert_int_equal(offsetof(kvobj, typeenc), 6); /* the link word's high bytes (htab.h) */
    assert_int_equal(offsetof(kvobj, keylen8), 7);
    assert_int_equal(offsetof(kvobj, lru), 8);
}

/* The key table keeps an entry's type and key-length bytes, which share the
 * 8-byte link word with its chain link, through adds, replacements, moves
 * and deletes of the entries chained with it. */
static void test_link_word_keeps_header(void **state) {
    Db *db = *state;
    char key[32];
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(key, sizeof(key), "k%d", i);
        kvobj *o = i % 3 == 0 ? kvCreateInt(key, (size_t)n, i) : kvCreateString(key, (size_t)n, "some value", 10);
        dbAdd(db, o);
    }
    for (int i = 0; i < 3000; i += 2) { /* replace half (relinks next to the others) */
        int n = snprintf(key, sizeof(key), "k%d", i);
        kvobj *o = kvCreateRawString(key, (size_t)n, sdsNew("a raw string value that is long enough to be raw"));
        dbSetKey(db, o, 0);
        if (i % 4 == 0) {
            kvobj *e = dbLookupRead(db, key, (size_t)n, 0);
            assert_non_null(e);
            dbSetExpire(db, &e, 1LL << 50); /* moves the entry */
        }
    }
    for (int i = 1; i < 3000; i += 6) { /* delete some */
        int n = snprintf(key, sizeof(key), "k%d", i);
        assert_true(dbDelete(db, key, (size_t)n));
    }
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(key, sizeof(key), "k%d", i);
        kvobj *o = dbLookupRead(db, key, (size_t)n, 0);
        if (i % 6 == 1) {
            assert_null(o);
            continue;
        }
        assert_non_null(o);
        assertKey(o, key, (size_t)n);
        assert_int_equal(kvType(o), OBJ_STRING);
        if (i % 2 == 0) {
            assert_int_equal(kvEncoding(o), OBJ_ENC_RAW);
            assert_int_equal(kvHasExpire(o), i % 4 == 0);
            assertString(o, "a raw string value that is long enough to be raw");
        } else if (i % 3 == 0) {
            assert_int_equal(kvEncoding(o), OBJ_ENC_INT);
            assert_int_equal(kvInt(o), i);
        } else {
            assertString(o, "some value");
        }
    }
}

/* DESIGN's target: a 12-byte key with a 10-byte value is 34 bytes (the
 * slab allocator's 40-byte class), and 46 (48) with an expire. */
static void test_embstr_sizes(void **state) {
    Db *db = *state;
    kvobj *o = kvCreateString("key:00000001", 12, "value:0001", 10);
    assert_int_equal(kvType(o), OBJ_STRING);
    assert_int_equal(kvEncoding(o), OBJ_ENC_EMBSTR);
    assert_int_equal(kvKey(o) - (const char *)o, HEADER);
    assertEntrySize(o, HEADER + 12 + 1 + 10);
    dbAdd(db, o);
    dbSetExpire(db, &o, 5000000);
    assert_int_equal(kvKey(o) - (const char *)o, HEADER + 12);
    assertEntrySize(o, HEADER + 12 + 12 + 1 + 10);
    if (xmallocGoodSize(36) == 48) assert_int_equal(xmallocSize(o), 48); /* jemalloc */
    assertString(o, "value:0001");
}

static void test_int_and_pointer_sizes(void **state) {
    (void)state;
    kvobj *i = kvCreateInt("k", 1, -42);
    assert_int_equal(kvEncoding(i), OBJ_ENC_INT);
    assert_int_equal(kvKey(i) - (const char *)i, HEADER + 8);
    assertEntrySize(i, HEADER + 8 + 1);
    assert_int_equal(kvInt(i), -42);
    kvSetInt(i, LLONG_MIN);
    assert_int_equal(kvInt(i), LLONG_MIN);
    assertString(i, "-9223372036854775808");
    kvFree(i);

    kvobj *r = kvCreateRawString("key", 3, sdsNew("raw value"));
    assert_int_equal(kvEncoding(r), OBJ_ENC_RAW);
    assert_int_equal(kvKey(r) - (const char *)r, HEADER + 6);
    assertEntrySize(r, HEADER + 6 + 3);
    assert_int_equal(kvPointerShellSize(r), HEADER + 6 + 3);
    assert_int_equal(kvInlineShellSize(r), HEADER + 3);
    assertString(r, "raw value");
    kvFree(r);
}

static void test_key_lengths(void **state) {
    (void)state;
    char key[300];
    for (size_t i = 0; i < sizeof(key); i++) key[i] = (char)('a' + i % 26);
    static const size_t lens[] = {0, 1, 254, 255, 256, 300};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t n = lens[i];
        int longKey = n >= 255;
        kvobj *o = kvCreateEmbstr(key, n, "v", 1);
        assert_int_equal(o->keylen8, longKey ? 255 : n);
        assert_int_equal(kvKeyLenSize(o), longKey ? 4 : 0);
        assertKey(o, key, n);
        assertEntrySize(o, HEADER + (longKey ? 4 : 0) + n + 2);
        assertString(o, "v");
        kvFree(o);
        kvobj *p = kvCreatePtr(key, n, OBJ_STRING, OBJ_ENC_RAW, sdsNew("x"));
        assertKey(p, key, n);
        assert_int_equal(kvKey(p) - (const char *)p, HEADER + (longKey ? 4 : 0) + 6);
        kvFree(p);
    }
}

/* --- flags --- */

static void test_type_encoding_flags(void **state) {
    (void)state;
    kvobj *o = kvCreatePtr("h", 1, OBJ_HASH, OBJ_ENC_LISTPACK, lpNew(0));
    assert_int_equal(kvType(o), OBJ_HASH);
    assert_int_equal(kvEncoding(o), OBJ_ENC_LISTPACK);
    assert_false(kvHasExpire(o));
    assert_false(kvHasInlineValue(o));
    unsigned char *lp = kvPtr(o);
    kvSetEncoding(o, OBJ_ENC_HT); /* same slot size: in place */
    assert_int_equal(kvType(o), OBJ_HASH);
    assert_int_equal(kvEncoding(o), OBJ_ENC_HT);
    assert_int_equal(kvRawEncoding(o), OBJ_ENC_HT);
    assert_ptr_equal(kvPtr(o), lp);
    lpFree(lp); /* no hash operations registered here */
    kvFreeShell(o);

    static const int types[] = {OBJ_STRING, OBJ_LIST, OBJ_SET, OBJ_ZSET, OBJ_HASH, OBJ_STREAM};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        kvobj *t = kvCreatePtr("t", 1, types[i], OBJ_ENC_QUICKLIST, NULL);
        assert_int_equal(kvType(t), types[i]);
        assert_int_equal(kvEncoding(t), OBJ_ENC_QUICKLIST);
        kvFreeShell(t);
    }
    assert_string_equal(typeName(OBJ_ZSET), "zset");
    assert_string_equal(encodingName(OBJ_ENC_EMBSTR), "embstr");
    assert_string_equal(encodingName(OBJ_ENC_LISTPACK), "listpack");
}

static void test_access_bits(void **state) {
    (void)state;
    kvobj *o = kvCreateInt("k", 1, 1);
    assert_int_equal(kvLru(o), 0x123456); /* dbLruClock at creation */
    kvSetLru(o, 0xabcdef);
    assert_int_equal(kvLru(o), 0xabcdef);
    kvSetLru(o, 0x1ffffff); /* 24 bits kept */
    assert_int_equal(kvLru(o), 0xffffff);
    assert_int_equal(kvType(o), OBJ_STRING); /* neighbours untouched */
    assert_int_equal(o->keylen8, 1);
    kvFree(o);

    /* Under an LFU policy a new entry starts at counter 5 with the minutes. */
    DbConfig lfu = {.maxmemoryPolicy = MAXMEMORY_ALLKEYS_LFU, .lfuLogFactor = 10, .lfuDecayTime = 1};
    const DbConfig *saved = dbConfig;
    dbConfig = &lfu;
    kvobj *f = kvCreateInt("k", 1, 1);
    assert_int_equal(kvLru(f) & 255, 5);
    assert_int_equal(kvLru(f) >> 8, (dbNowMs / 60000) & 65535);
    assert_int_equal(dbLfuDecayed(f), 5);
    dbConfig = saved;
    kvFree(f);
}

/* --- embedded values --- */

static void test_string_encoding_choice(void **state) {
    (void)state;
    static const struct {
        const char *val;
        int enc;
    } cases[] = {
        {"0", OBJ_ENC_INT},
        {"12345", OBJ_ENC_INT},
        {"-1", OBJ_ENC_INT},
        {"9223372036854775807", OBJ_ENC_INT},
        {"-9223372036854775808", OBJ_ENC_INT},
        {"9223372036854775808", OBJ_ENC_EMBSTR},
        {"012", OBJ_ENC_EMBSTR},
        {"+1", OBJ_ENC_EMBSTR},
        {" 1", OBJ_ENC_EMBSTR},
        {"-0", OBJ_ENC_EMBSTR},
        {"", OBJ_ENC_EMBSTR},
        {"12345678901234567890123456789012345678901234", OBJ_ENC_EMBSTR},  /* 44 */
        {"123456789012345678901234567890123456789012345", OBJ_ENC_RAW},    /* 45 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kvobj *o = kvCreateString("key", 3, cases[i].val, strlen(cases[i].val));
        assert_int_equal(kvEncoding(o), cases[i].enc);
        assertString(o, cases[i].val);
        assertKey(o, "key", 3);
        kvFree(o);
    }
    /* Binary bytes stay embedded as they are. */
    kvobj *b = kvCreateEmbstr("k", 1, "a\0b\xff", 4);
    char buf[24];
    size_t len;
    const char *p = kvStringBytes(b, buf, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(p, "a\0b\xff", 4);
    kvFree(b);
}

static unsigned char *listpackOf(int n) {
    unsigned char *lp = lpNew(0);
    for (int i = 0; i < n; i++) {
        char s[16];
        int l = snprintf(s, sizeof(s), "f%d", i);
        lp = lpAppend(lp, (const unsigned char *)s, (size_t)l);
    }
    return lp;
}

static void test_inline_listpack(void **state) {
    (void)state;
    unsigned char *lp = listpackOf(3);
    size_t n = lpBytes(lp);
    kvobj *o = kvCreateInline("hash", 4, OBJ_HASH, lp, n, n + 10);
    assert_true(kvHasInlineValue(o));
    assert_int_equal(kvRawEncoding(o), OBJ_ENC_LISTPACK_INLINE);
    assert_int_equal(kvEncoding(o), OBJ_ENC_LISTPACK); /* as Redis reports it */
    assert_int_equal(kvKey(o) - (const char *)o, HEADER);
    assert_ptr_equal(kvPtr(o), kvKey(o) + 4);
    assert_int_equal(kvInlineOffset(o), HEADER + 4);
    assert_int_equal(kvInlineSize(o), n);
    assert_memory_equal(kvPtr(o), lp, n);
    assertEntrySize(o, HEADER + 4 + n + 10);
    assert_int_equal(lpLength(kvPtr(o)), 3);
    kvFree(o); /* the inline bytes go with the entry */
    lpFree(lp);
}

/* --- per-type operations --- */

static int freed, freedEncoding;
static void fakeFree(void *ptr, int encoding) {
    freed++;
    freedEncoding = encoding;
    xfree(ptr);
}
static void *fakeDup(const void *ptr, int encoding) {
    (void)encoding;
    void *p = xmalloc(8);
    memcpy(p, ptr, 8);
    return p;
}
static size_t fakeSize(const void *ptr, int encoding) {
    (void)ptr;
    return 1000 + (size_t)encoding;
}
static void fakeDigest(const kvobj *o, unsigned char d[20]) {
    (void)o;
    d[0] ^= 1;
}
static const ObjectType fakeType = {.free = fakeFree, .dup = fakeDup, .size = fakeSize};

static void test_type_operations(void **state) {
    (void)state;
    assert_null(objectTypeOps(OBJ_SET));
    kvobj *u = kvCreatePtr("s", 1, OBJ_SET, OBJ_ENC_INTSET, (void *)0x1000);
    assert_null(objectDupValue(u)); /* no operations: nothing to call */
    assert_int_equal(objectValueSize(u), 0);
    kvFree(u);                      /* and nothing freed */

    objectRegisterType(OBJ_SET, &fakeType);
    const ObjectType *t = objectTypeOps(OBJ_SET);
    assert_non_null(t);
    assert_ptr_equal(t->free, fakeFree);
    assert_null(t->digest); /* the persistence layer's, registered apart */
    assert_null(t->rdbSave);
    assert_null(t->rdbLoad);
    objectRegisterPersistence(OBJ_SET, fakeDigest, NULL, NULL, NULL);
    assert_ptr_equal(objectTypeOps(OBJ_SET)->digest, fakeDigest);
    assert_ptr_equal(objectTypeOps(OBJ_SET)->size, fakeSize); /* kept */
    void *v = xmalloc(8);
    memcpy(v, "12345678", 8);
    kvobj *o = kvCreatePtr("s", 1, OBJ_SET, OBJ_ENC_INTSET, v);
    void *d = objectDupValue(o);
    assert_ptr_not_equal(d, v);
    assert_memory_equal(d, "12345678", 8);
    xfree(d);
    assert_int_equal(objectValueSize(o), 1000 + OBJ_ENC_INTSET);
    freed = 0;
    kvFree(o);
    assert_int_equal(freed, 1);
    assert_int_equal(freedEncoding, OBJ_ENC_INTSET);
    objectRegisterType(OBJ_SET, NULL);

    /* Strings are object.c's own: a raw value is an sds; int and embstr
     * values have no pointer. */
    const ObjectType *s = objectTypeOps(OBJ_STRING);
    assert_non_null(s);
    kvobj *r = kvCreateRawString("k", 1, sdsNew("raw"));
    sds copy = objectDupValue(r);
    assert_string_equal(copy, "raw");
    assert_ptr_not_equal(copy, kvPtr(r));
    sdsFree(copy);
    assert_int_equal(objectValueSize(r), sdsAllocSize(kvPtr(r)));
    kvFree(r);
    kvobj *e = kvCreateString("k", 1, "embedded", 8);
    assert_null(objectDupValue(e));
    assert_int_equal(objectValueSize(e), 0);
    kvFree(e);
}

/* --- reallocation paths (db.c) --- */

static void test_expire_gain_and_loss(void **state) {
    Db *db = *state;
    kvobj *a = kvCreateString("a", 1, "embedded value", 14);
    kvobj *b = kvCreateInt("b", 1, 7);
    kvobj *c = kvCreateRawString("c", 1, sdsNew("a raw string value that is long enough to be raw"));
    sds craw = kvPtr(c);
    dbAdd(db, a);
    dbAdd(db, b);
    dbAdd(db, c);
    kvSetLru(a, 0x0a0b0c);
    assertTtlIndex(db, 0);

    dbSetExpire(db, &a, 111);
    dbSetExpire(db, &b, 222);
    dbSetExpire(db, &c, 333);
    assertTtlIndex(db, 3);
    assert_int_equal(kvExpire(a), 111);
    assert_int_equal(kvExpire(b), 222);
    assert_int_equal(kvExpire(c), 333);
    assertString(a, "embedded value");
    assert_int_equal(kvInt(b), 7);
    assert_ptr_equal(kvPtr(c), craw); /* moved, not copied */
    assert_int_equal(kvLru(a), 0x0a0b0c);
    assertEntrySize(a, HEADER + 12 + 1 + 1 + 14);
    assertEntrySize(b, HEADER + 12 + 8 + 1);
    assertEntrySize(c, HEADER + 12 + 6 + 1);

    /* A second expire changes the time in place. */
    kvobj *before = b;
    dbSetExpire(db, &b, 999);
    assert_ptr_equal(b, before);
    assert_int_equal(kvExpire(b), 999);

    /* Removing the first indexed entry moves the last into its place. */
    assert_int_equal(dbRemoveExpire(db, &a), 1);
    assert_false(kvHasExpire(a));
    assert_int_equal(kvExpire(a), -1);
    assertTtlIndex(db, 2);
    assertString(a, "embedded value");
    assertEntrySize(a, HEADER + 1 + 1 + 14);
    assert_int_equal(dbRemoveExpire(db, &a), 0);

    /* Deleting and unlinking keys with expires keeps the index whole. */
    assert_int_equal(dbDelete(db, "b", 1), 1);
    assertTtlIndex(db, 1);
    kvobj *u = dbUnlink(db, "c", 1);
    assert_ptr_equal(u, c);
    assertTtlIndex(db, 0);
    kvFree(u);
    assert_int_equal(dbSize(db), 1);
}

static void test_expired_lookup(void **state) {
    Db *db = *state;
    kvobj *o = kvCreateInt("gone", 4, 1);
    dbAdd(db, o);
    dbSetExpire(db, &o, dbNowMs - 1);
    assert_true(kvIsExpired(o));
    assert_non_null(dbFind(db, "gone", 4));
    assert_null(dbLookupRead(db, "gone", 4, LOOKUP_NOEXPIRE)); /* absent, kept */
    assert_non_null(dbFind(db, "gone", 4));
    long long expired = dbStats.expiredKeys;
    assert_null(dbLookupWrite(db, "gone", 4));
    assert_null(dbFind(db, "gone", 4));
    assert_int_equal(dbStats.expiredKeys, expired + 1);
    assertTtlIndex(db, 0);
}

static void test_replace_keepttl(void **state) {
    Db *db = *state;
    kvobj *x = kvCreateInt("x", 1, 1), *y = kvCreateInt("y", 1, 2);
    dbAdd(db, x);
    dbAdd(db, y);
    dbSetExpire(db, &x, 500);
    dbSetExpire(db, &y, 600);

    /* KEEPTTL: the new entry takes the expire and the TTL position. */
    kvobj *x2 = dbReplace(db, x, kvCreateString("x", 1, "new value", 9), 1);
    assert_true(kvHasExpire(x2));
    assert_int_equal(kvExpire(x2), 500);
    assertString(x2, "new value");
    assertTtlIndex(db, 2);

    /* Without: the expire goes. */
    kvobj *y2 = dbReplace(db, y, kvCreateInt("y", 1, 3), 0);
    assert_false(kvHasExpire(y2));
    assertTtlIndex(db, 1);

    /* A fresh entry that carries an expire keeps it (SET EX builds its
     * entry with one), in the TTL slot of the entry it replaces. */
    kvobj *fresh = kvCreateInt("x", 1, 4);
    Db *scratch = dbCreateAll(1);
    dbAdd(scratch, fresh);
    dbSetExpire(scratch, &fresh, 700);
    dbUnlink(scratch, "x", 1);
    dbFreeAll(scratch, 1);
    kvobj *x3 = dbSetKey(db, fresh, 0);
    assert_int_equal(kvExpire(x3), 700);
    assert_int_equal(kvInt(x3), 4);
    assertTtlIndex(db, 1);

    /* dbSetKey adds an absent key. */
    kvobj *z = dbSetKey(db, kvCreateInt("z", 1, 5), 1);
    assert_ptr_equal(dbFind(db, "z", 1), z);
}

static void test_unshare_string(void **state) {
    Db *db = *state;
    kvobj *o = kvCreateString("s", 1, "12", 2);
    dbAdd(db, o);
    dbSetExpire(db, &o, 800);
    sds s = dbUnshareString(db, &o);
    assert_int_equal(kvEncoding(o), OBJ_ENC_RAW);
    assert_ptr_equal(kvPtr(o), s);
    assert_string_equal(s, "12");
    assert_int_equal(kvExpire(o), 800);
    assertTtlIndex(db, 1);
    kvobj *same = o;
    assert_ptr_equal(dbUnshareString(db, &o), s); /* already raw: as is */
    assert_ptr_equal(o, same);
    s = sdsCat(s, "34");
    kvSetPtr(o, s);
    assertString(dbFind(db, "s", 1), "1234");
}

static void test_inline_moves(void **state) {
    Db *db = *state;
    char key[260];
    memset(key, 'k', sizeof(key));
    unsigned char *lp = listpackOf(2);
    size_t n = lpBytes(lp);
    /* A long key exercises the stored key length through every move. */
    kvobj *o = kvCreatePtr(key, sizeof(key), OBJ_HASH, OBJ_ENC_LISTPACK, lp);
    dbAdd(db, o);
    dbSetExpire(db, &o, 900);
    kvSetLru(o, 0x010203);

    /* Pointer -> inline: the value is copied in, the heap listpack stays
     * the caller's. */
    o = dbSetValueInline(db, o, lp, n, n + 16);
    lpFree(lp);
    assert_true(kvHasInlineValue(o));
    assertKey(o, key, sizeof(key));
    assert_int_equal(kvExpire(o), 900);
    assert_int_equal(kvLru(o), 0x010203);
    assert_int_equal(lpLength(kvPtr(o)), 2);
    assertEntrySize(o, HEADER + 12 + 4 + sizeof(key) + n + 16);
    assertTtlIndex(db, 1);

    /* Gaining and losing an expire relayouts the inline bytes too. */
    assert_int_equal(dbRemoveExpire(db, &o), 1);
    assert_int_equal(lpLength(kvPtr(o)), 2);
    assertKey(o, key, sizeof(key));
    dbSetExpire(db, &o, 901);
    assert_int_equal(lpLength(kvPtr(o)), 2);
    assertTtlIndex(db, 1);

    /* Resize (an inline listpack growing). */
    size_t grown = kvInlineOffset(o) + n + 200;
    o = dbResizeEntry(db, o, grown);
    assertEntrySize(o, grown);
    assert_int_equal(lpLength(kvPtr(o)), 2);
    assertTtlIndex(db, 1);
    assert_ptr_equal(dbFind(db, key, sizeof(key)), o);

    /* Inline -> pointer: the old inline bytes go with the old block. */
    unsigned char *heap = listpackOf(5);
    o = dbSetValuePtr(db, o, OBJ_ENC_LISTPACK, heap);
    assert_false(kvHasInlineValue(o));
    assert_ptr_equal(kvPtr(o), heap);
    assert_int_equal(kvExpire(o), 901);
    assertKey(o, key, sizeof(key));
    assertEntrySize(o, HEADER + 12 + 4 + 6 + sizeof(key));
    assertTtlIndex(db, 1);
    dbUnlink(db, key, sizeof(key));
    lpFree(heap);
    kvFreeShell(o);
    assertTtlIndex(db, 0);
}

static void test_clone_shell(void **state) {
    Db *db = *state;
    kvobj *o = kvCreatePtr("clone", 5, OBJ_ZSET, OBJ_ENC_LISTPACK, NULL);
    dbAdd(db, o);
    dbSetExpire(db, &o, 1234);
    kvSetLru(o, 77);
    kvobj *c = kvCloneShell(o, OBJ_ENC_SKIPLIST, 0);
    assert_int_equal(kvType(c), OBJ_ZSET);
    assert_int_equal(kvEncoding(c), OBJ_ENC_SKIPLIST);
    assert_int_equal(kvExpire(c), 1234);
    assert_int_equal(kvLru(c), 77);
    assertKey(c, "clone", 5);
    assertEntrySize(c, HEADER + 12 + 6 + 5);
    kvFreeShell(c);
}

static void test_swap_and_empty(void **state) {
    (void)state;
    Db *dbs = dbCreateAll(2);
    kvobj *o = kvCreateInt("a", 1, 1);
    dbAdd(&dbs[0], o);
    dbSetExpire(&dbs[0], &o, 5);
    dbAdd(&dbs[1], kvCreateInt("b", 1, 2));
    dbSwap(&dbs[0], &dbs[1]);
    assert_non_null(dbFind(&dbs[1], "a", 1));
    assert_non_null(dbFind(&dbs[0], "b", 1));
    assertTtlIndex(&dbs[1], 1);
    assertTtlIndex(&dbs[0], 0);
    assert_int_equal(dbEmpty(&dbs[1]), 1);
    assertTtlIndex(&dbs[1], 0);
    dbFreeAll(dbs, 2);
}

/* Entries built with their expire (SET EX): the same layout and size as an
 * entry that gained one through dbSetExpire, for every string encoding and
 * key length; dbSetKey indexes them, a replacement with an expire takes the
 * old entry's TTL slot, one without leaves the index, and one built with an
 * expire keeps its own even with keepTtl. */
static void test_create_with_expire(void **state) {
    Db *db = *state;
    static const size_t lens[] = {1, 12, 254, 255, 300};
    static const char *vals[] = {"-42", "value:0001", "a value of forty-five bytes, past embstr's 44"};
    char key[300];
    memset(key, 'k', sizeof(key));
    uint32_t indexed = 0;
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        for (size_t v = 0; v < 3; v++) {
            key[0] = (char)('a' + v);
            size_t vlen = strlen(vals[v]);
            kvobj *plain = kvCreateString(key, lens[i], vals[v], vlen);
            dbAdd(db, plain);
            dbSetExpire(db, &plain, 1000 + (long long)i);
            kvobj *o = kvCreateStringExpire(key, lens[i], vals[v], vlen, 2000 + (long long)i);
            assert_true(kvHasExpire(o));
            assert_int_equal(kvEncoding(o), kvEncoding(plain));
            assert_int_equal(xmallocSize(o), xmallocSize(plain));
            assert_int_equal(kvKey(o) - (const char *)o, kvKey(plain) - (const char *)plain);
            assertKey(o, key, lens[i]);
            assertString(o, vals[v]);
            assert_int_equal(kvExpire(o), 2000 + (long long)i);
            uint32_t pos;
            memcpy(&pos, plain->data + 8, 4);
            kvobj *stored = dbSetKey(db, o, 0); /* TTL over TTL: the slot is reused */
            assert_ptr_equal(stored, o);
            assert_ptr_equal(cvGet(&db->ks.ttl, pos), o);
            assert_int_equal(kvExpire(dbFind(db, key, lens[i])), 2000 + (long long)i);
            indexed++;
            assertTtlIndex(db, indexed);
        }
    }
    /* None over TTL leaves the index; TTL over none joins it; keepTtl does
     * not override an expire the fresh entry was built with. */
    key[0] = 'a';
    dbSetKey(db, kvCreateString(key, 12, "x", 1), 1);
    assert_int_equal(kvExpire(dbFind(db, key, 12)), 2001);
    dbSetKey(db, kvCreateString(key, 12, "x", 1), 0);
    assert_int_equal(kvExpire(dbFind(db, key, 12)), -1);
    assertTtlIndex(db, indexed - 1);
    dbSetKey(db, kvCreateStringExpire(key, 12, "y", 1, 7777), 1);
    assert_int_equal(kvExpire(dbFind(db, key, 12)), 7777);
    assertTtlIndex(db, indexed);
    kvobj *raw = kvCreateRawStringExpire("raw", 3, sdsNew("raw value"), 8888);
    assert_int_equal(kvEncoding(raw), OBJ_ENC_RAW);
    dbAdd(db, raw);
    assertTtlIndex(db, indexed + 1);
    assertString(dbFind(db, "raw", 3), "raw value");
    assert_int_equal(kvExpire(dbFind(db, "raw", 3)), 8888);
}

/* Each kind of entry built with its expire (kvCreate{Ptr,Int,Embstr,
 * Inline}Expire: RDB load, RESTORE, RENAME/COPY, a value rebuilt under a
 * kept TTL) has the layout, size and contents of the same entry given the
 * expire afterwards by dbSetExpire; dbAdd indexes it; a keepTtl replacement
 * built with the old expire is stored as is (no second block) in the old
 * entry's TTL slot. */
static void test_create_kinds_with_expire(void **state) {
    Db *db = *state;
    static const size_t lens[] = {1, 13, 255, 300};
    char key[300];
    memset(key, 'k', sizeof(key));
    unsigned char *lp = listpackOf(3);
    size_t n = lpBytes(lp);
    uint32_t indexed = 0;
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        for (int kind = 0; kind < 4; kind++) {
            key[0] = (char)('a' + kind);
            long long when = 5000 + (long long)(i * 4 + (size_t)kind);
            kvobj *plain, *o;
            switch (kind) {
            case 0:
                plain = kvCreatePtr(key, lens[i], OBJ_STRING, OBJ_ENC_RAW, sdsNew("a raw value"));
                o = kvCreatePtrExpire(key, lens[i], OBJ_STRING, OBJ_ENC_RAW, sdsNew("a raw value"), when);
                break;
            case 1:
                plain = kvCreateInt(key, lens[i], -77);
                o = kvCreateIntExpire(key, lens[i], -77, when);
                break;
            case 2:
                plain = kvCreateEmbstr(key, lens[i], "1.5", 3);
                o = kvCreateEmbstrExpire(key, lens[i], "1.5", 3, when);
                break;
            default:
                plain = kvCreateInline(key, lens[i], OBJ_HASH, lp, n, n);
                o = kvCreateInlineExpire(key, lens[i], OBJ_HASH, lp, n, n, when);
                break;
            }
            dbAdd(db, plain);
            dbSetExpire(db, &plain, when);
            assert_true(kvHasExpire(o));
            assert_int_equal(o->typeenc, plain->typeenc);
            assert_int_equal(xmallocSize(o), xmallocSize(plain));
            assert_int_equal(kvKey(o) - (const char *)o, kvKey(plain) - (const char *)plain);
            assertKey(o, key, lens[i]);
            assert_int_equal(kvExpire(o), when);
            if (kind == 3) {
                assert_int_equal(kvInlineSize(o), n);
                assert_memory_equal(kvPtr(o), lp, n);
            } else {
                assertString(o, kind == 0 ? "a raw value" : kind == 1 ? "-77" : "1.5");
            }
            /* The same key again, built with the kept expire: stored as
             * is, in the TTL slot of the entry it replaces. */
            uint32_t pos;
            memcpy(&pos, plain->data + 8, 4);
            kvobj *stored = dbReplace(db, plain, o, 1);
            assert_ptr_equal(stored, o);
            assert_ptr_equal(cvGet(&db->ks.ttl, pos), o);
            assert_ptr_equal(dbFind(db, key, lens[i]), o);
            indexed++;
            assertTtlIndex(db, indexed);
        }
    }
    /* dbAdd indexes an entry built with its expire. */
    dbAdd(db, kvCreateIntExpire("fresh", 5, 1, 6000));
    assertTtlIndex(db, indexed + 1);
    assert_int_equal(kvExpire(dbFind(db, "fresh", 5)), 6000);
    /* dbUnshareString on an int with a TTL: raw, the TTL kept, indexed once. */
    kvobj *u = dbFind(db, "fresh", 5);
    sds s = dbUnshareString(db, &u);
    assert_int_equal(kvEncoding(u), OBJ_ENC_RAW);
    assert_ptr_equal(kvPtr(u), s);
    assert_int_equal(kvExpire(u), 6000);
    assertTtlIndex(db, indexed + 1);
    lpFree(lp);
}

/* --- the keyspace API (db.h) --- */

typedef struct Seen {
    kvobj *items[4096];
    size_t n;
} Seen;

static void collect(void *priv, void *entry) {
    Seen *s = priv;
    assert_true(s->n < 4096);
    s->items[s->n++] = entry;
}

static int ptrCmp(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* The keys (sorted) are exactly the n distinct entries of db. */
static void assertAllOnce(Db *db, Seen *s) {
    assert_int_equal(s->n, dbSize(db));
    qsort(s->items, s->n, sizeof(s->items[0]), ptrCmp);
    for (size_t i = 0; i < s->n; i++) {
        assert_ptr_equal(dbFind(db, kvKey(s->items[i]), kvKeyLen(s->items[i])), s->items[i]);
        if (i) assert_ptr_not_equal(s->items[i - 1], s->items[i]);
    }
}

/* Counts, the iterator, the walk units (their order is the iterator's,
 * also while the table rehashes), the scan cursor, random keys and the
 * bulk drops, on a table caught in the middle of a rehash. */
static void test_keyspace_api(void **state) {
    Db *db = *state;
    static Seen a, b, c;
    char key[32];
    size_t n = 0, volatileKeys = 0;
    /* Add keys until past 1000 and a rehash is under way, paying the
     * owed rehash steps before each add as the server's loop does. */
    while (n < 1000 || !htabIsRehashing(dbKeyTable(db, 0))) {
        dbPayRehash(db, 1);
        int len = snprintf(key, sizeof(key), "key:%zu", n);
        if (n % 3 == 0) {
            dbAdd(db, kvCreateIntExpire(key, (size_t)len, (long long)n, 1000 + (long long)n));
            volatileKeys++;
        } else {
            dbAdd(db, kvCreateInt(key, (size_t)len, (long long)n));
        }
        n++;
        assert_true(n < 4000);
    }
    assert_int_equal(dbSize(db), n);
    assert_int_equal(dbExpiresCount(db), volatileKeys);
    size_t mainBytes, expiresBytes;
    dbIndexBytes(db, &mainBytes, &expiresBytes);
    assert_true(mainBytes >= n * sizeof(void *) / 2 && expiresBytes >= volatileKeys * sizeof(void *));

    a.n = b.n = c.n = 0;
    DbIter it;
    dbIterInit(&it, db);
    kvobj *o;
    while ((o = dbIterNext(&it)) != NULL) collect(&a, o);
    dbIterRelease(&it);

    dbWalkFreeze(db);
    size_t units = dbWalkUnits(db), visited = 0;
    assert_true(units > htabArrayBuckets(dbKeyTable(db, 0), 0)); /* both arrays */
    for (size_t from = 0; from < units; from += 7)
        visited += dbWalkVisit(db, from, from + 7 < units ? from + 7 : units, collect, &b);
    dbWalkThaw(db);
    assert_int_equal(visited, n);
    assert_int_equal(b.n, a.n);
    assert_memory_equal(a.items, b.items, sizeof(a.items[0]) * a.n); /* the same order */
    assertAllOnce(db, &a);

    uint64_t cursor = 0;
    do {
        cursor = dbScan(db, cursor, collect, &c);
    } while (cursor);
    assertAllOnce(db, &c);

    for (int i = 0; i < 100; i++) {
        kvobj *v = dbRandomVolatile(db), *r = dbRandomKey(db);
        assert_true(v && kvHasExpire(v));
        assert_ptr_equal(dbFind(db, kvKey(r), kvKeyLen(r)), r);
    }
    void *sample[16];
    unsigned got = dbSampleKeys(db, sample, 16);
    assert_true(got >= 1 && got <= 16);

    Db *other = dbCreateAll(1);
    dbSwap(db, other);
    assert_int_equal(dbSize(db), 0);
    assert_int_equal(dbSize(other), n);
    assert_null(dbRandomKey(db));
    assert_null(dbRandomVolatile(db));
    assert_int_equal(dbEmptyAsync(other), (long long)n);
    assert_int_equal(dbSize(other), 0);
    assert_int_equal(dbExpiresCount(other), 0);
    dbAdd(other, kvCreateIntExpire("again", 5, 1, 5000)); /* usable at once */
    assert_int_equal(dbExpiresCount(other), 1);
    assert_int_equal(dbEmptyAsync(other), 1);
    lazyfreeWaitIdle();
    dbFreeAll(other, 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
    xmallocRegisterThread();
    const struct CMUnitTest tests[] = {
        T(test_header_layout),        T(test_embstr_sizes),         T(test_int_and_pointer_sizes),
        T(test_key_lengths),          T(test_type_encoding_flags),  T(test_access_bits),
        T(test_string_encoding_choice), T(test_inline_listpack),    T(test_type_operations),
        T(test_expire_gain_and_loss), T(test_expired_lookup),       T(test_replace_keepttl),
        T(test_unshare_string),       T(test_inline_moves),         T(test_clone_shell),
        T(test_swap_and_empty),       T(test_create_with_expire),   T(test_create_kinds_with_expire),
        T(test_keyspace_api),         T(test_link_word_keeps_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
