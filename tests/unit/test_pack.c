/* test_pack.c -- unit tests for src/ds/pack.c (the packed form of small
 * listpacks and intsets).
 *
 * Round trips of chosen and random listpacks (strings, integers of every
 * width, shared prefixes, empty and binary strings, strides 1 and 2) and
 * intsets of each width; the sizes the design counts on (a 10-field hash
 * as the bench builds it, 10 consecutive int32s); a non-canonical listpack
 * refused; and hostile input (truncations, every byte flipped, random
 * bytes) that must decode to NULL or to a valid value, never crash (run
 * under ASan/UBSan by the sanitizer pass). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/intset.h"
#include "ds/listpack.h"
#include "ds/pack.h"
#include "ds/rand.h"

/* Packs lp, unpacks it, and checks the bytes are the same; returns the
 * packed size (0: refused). */
static size_t roundTrip(const unsigned char *lp, unsigned stride) {
    unsigned char out[PACK_MAX_ORIG + 64];
    size_t n = packListpack(lp, stride, out, sizeof(out));
    if (!n) return 0;
    assert_int_equal(packLength(out, n), n);
    unsigned char *back = unpackListpack(out, n, stride);
    assert_non_null(back);
    assert_int_equal(lpBytes(back), lpBytes(lp));
    assert_memory_equal(back, lp, lpBytes(lp));
    lpFree(back);
    return n;
}

/* The same for an intset: its packed length (0: not packed). */
static size_t intsetRoundTrip(const intset *is) {
    unsigned char out[PACK_MAX_ORIG + 64];
    size_t len = intsetBlobLen(is);
    size_t n = packIntset((const unsigned char *)is, len, out, sizeof(out));
    if (!n) return 0;
    size_t bytes;
    unsigned char *back = unpackIntset(out, n, &bytes);
    assert_non_null(back);
    assert_int_equal(bytes, len);
    assert_memory_equal(back, is, len);
    xfree(back);
    return n;
}

static unsigned char *appendStr(unsigned char *lp, const char *s) {
    return lpAppend(lp, (const unsigned char *)s, strlen(s));
}

static void test_bench_shapes(void **state) {
    (void)state;
    /* HSET hash:N field:0 value:N ... field:9 value:N+9 */
    unsigned char *lp = lpNew(0);
    char buf[64];
    for (int f = 0; f < 10; f++) {
        snprintf(buf, sizeof(buf), "field:%d", f);
        lp = appendStr(lp, buf);
        snprintf(buf, sizeof(buf), "value:%d", 54321 + f);
        lp = appendStr(lp, buf);
    }
    size_t n = roundTrip(lp, 2);
    assert_true(n > 0 && n <= 70);
    assert_true(lpBytes(lp) > 200);
    lpFree(lp);
    /* ZADD zset:N N member:0 ... */
    lp = lpNew(0);
    for (int m = 0; m < 10; m++) {
        snprintf(buf, sizeof(buf), "member:%d", m);
        lp = appendStr(lp, buf);
        lp = lpAppendInteger(lp, 54321 + m);
    }
    n = roundTrip(lp, 2);
    assert_true(n > 0 && n <= 50);
    lpFree(lp);
    /* 10 consecutive int32s */
    intset *is = intsetNew();
    for (int m = 0; m < 10; m++) is = intsetAdd(is, 543210 + m, NULL);
    assert_int_equal(intsetBlobLen(is), 48);
    n = intsetRoundTrip(is);
    assert_true(n > 0 && n <= 16);
    intsetFree(is);
}

static void test_edge_values(void **state) {
    (void)state;
    unsigned char *lp = lpNew(0);
    assert_true(roundTrip(lp, 1) > 0); /* empty */
    assert_true(roundTrip(lp, 2) > 0);
    lp = lpAppend(lp, (const unsigned char *)"", 0);
    lp = lpAppendInteger(lp, LLONG_MIN);
    lp = lpAppendInteger(lp, LLONG_MAX);
    lp = lpAppendInteger(lp, -1);
    lp = lpAppend(lp, (const unsigned char *)"a\0b\xff", 4);
    lp = appendStr(lp, "3.14159");
    lp = appendStr(lp, "-inf");
    lp = lpAppendInteger(lp, 0);
    lp = lpAppendInteger(lp, 127);
    lp = lpAppendInteger(lp, 128);
    lp = lpAppendInteger(lp, -4096);
    lp = lpAppendInteger(lp, 8388607);
    lp = lpAppendInteger(lp, -2147483648LL);
    char longs[5000];
    memset(longs, 'x', sizeof(longs));
    lp = lpAppend(lp, (const unsigned char *)longs, 100);
    lp = lpAppend(lp, (const unsigned char *)longs, 4095);
    lp = lpAppend(lp, (const unsigned char *)longs, 4100); /* 32-bit string length */
    lp = lpAppend(lp, (const unsigned char *)longs, 3);
    assert_true(roundTrip(lp, 1) > 0);
    assert_true(roundTrip(lp, 2) > 0);
    lpFree(lp);
    /* A non-canonical listpack: "12" stored as a string.  Built by hand. */
    unsigned char nc[] = {11, 0, 0, 0, 1, 0, 0x82, '1', '2', 3, 0xff};
    unsigned char out[64];
    assert_int_equal(packListpack(nc, 1, out, sizeof(out)), 0);
    /* Too small an output buffer: refused, nothing written past it. */
    lp = lpNew(0);
    for (int i = 0; i < 50; i++) lp = appendStr(lp, "some member text");
    unsigned char small[16 + 8];
    memset(small, 0xAB, sizeof(small));
    assert_int_equal(packListpack(lp, 1, small, 16), 0);
    for (int i = 16; i < 24; i++) assert_int_equal(small[i], 0xAB);
    lpFree(lp);
}

static void test_random_listpacks(void **state) {
    (void)state;
    char buf[80];
    for (int round = 0; round < 2000; round++) {
        unsigned char *lp = lpNew(0);
        int n = (int)(randNext() % 40);
        for (int i = 0; i < n; i++) {
            switch (randNext() % 5) {
            case 0: lp = lpAppendInteger(lp, (long long)randNext()); break;
            case 1: lp = lpAppendInteger(lp, (long long)(randNext() % 2000) - 1000); break;
            case 2: {
                size_t len = randNext() % 70;
                for (size_t k = 0; k < len; k++) buf[k] = (char)(randNext() & 0xff);
                lp = lpAppend(lp, (unsigned char *)buf, len);
                break;
            }
            default: {
                int len = snprintf(buf, sizeof(buf), "prefix:shared:%llu", (unsigned long long)(randNext() % 100000));
                lp = lpAppend(lp, (unsigned char *)buf, (size_t)len);
            }
            }
        }
        /* Random bytes may form a canonical integer text: lpAppend stores
         * those as integers, so the listpack is canonical and packs. */
        assert_true(roundTrip(lp, 1) > 0);
        assert_true(roundTrip(lp, 2) > 0);
        lpFree(lp);
    }
}

static void test_random_intsets(void **state) {
    (void)state;
    for (int round = 0; round < 2000; round++) {
        intset *is = intsetNew();
        int n = (int)(randNext() % 60);
        int kind = round % 3;
        for (int i = 0; i < n; i++) {
            long long v = kind == 0 ? (long long)(randNext() % 60000) - 30000
                          : kind == 1 ? (long long)(randNext() % 4000000000ULL) - 2000000000
                                      : (long long)randNext();
            is = intsetAdd(is, v, NULL);
        }
        assert_true(intsetRoundTrip(is) > 0);
        intsetFree(is);
    }
}

/* Decodes hostile bytes both ways; whatever comes back must be a whole,
 * valid value. */
static void decodeHostile(const unsigned char *p, size_t n) {
    for (unsigned stride = 1; stride <= 2; stride++) {
        unsigned char *lp = unpackListpack(p, n, stride);
        if (lp) {
            assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
            lpFree(lp);
        }
    }
    size_t bytes;
    unsigned char *is = unpackIntset(p, n, &bytes);
    if (is) {
        assert_int_equal(intsetValidateIntegrity(is, bytes, 1), 1);
        xfree(is);
    }
    (void)packLength(p, n);
}

static void test_hostile(void **state) {
    (void)state;
    unsigned char *lp = lpNew(0);
    lp = appendStr(lp, "field:1");
    lp = lpAppendInteger(lp, 123456);
    lp = appendStr(lp, "field:2");
    lp = lpAppendInteger(lp, -5);
    unsigned char good[256];
    size_t n = packListpack(lp, 2, good, sizeof(good));
    assert_true(n > 0);
    intset *is = intsetNew();
    for (int i = 0; i < 8; i++) is = intsetAdd(is, i * 1000, NULL);
    unsigned char goodIs[256];
    size_t m = packIntset((const unsigned char *)is, intsetBlobLen(is), goodIs, sizeof(goodIs));
    assert_true(m > 0);
    for (int which = 0; which < 2; which++) {
        const unsigned char *src = which ? goodIs : good;
        size_t len = which ? m : n;
        unsigned char bad[256];
        for (size_t cut = 0; cut < len; cut++) decodeHostile(src, cut); /* truncated */
        for (size_t i = 0; i < len; i++)
            for (int v = 0; v < 256; v++) {
                memcpy(bad, src, len);
                bad[i] = (unsigned char)v;
                decodeHostile(bad, len);
            }
    }
    for (int round = 0; round < 20000; round++) {
        unsigned char bytes[64];
        size_t len = randNext() % sizeof(bytes);
        for (size_t i = 0; i < len; i++) bytes[i] = (unsigned char)randNext();
        if (len) bytes[0] = (unsigned char)(len - 1); /* a plausible length */
        decodeHostile(bytes, len);
    }
    /* Declared sizes beyond the limit are refused before allocating. */
    unsigned char huge[] = {6, 0xff, 0xff, 0xff, 0x7f, 0x01, 0x40};
    assert_null(unpackListpack(huge, sizeof(huge), 1));
    lpFree(lp);
    intsetFree(is);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_shapes),     cmocka_unit_test(test_edge_values),
        cmocka_unit_test(test_random_listpacks), cmocka_unit_test(test_random_intsets),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
