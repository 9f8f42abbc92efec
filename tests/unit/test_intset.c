/* test_intset.c -- unit tests for src/ds/intset.c.
 *
 * The vec* blobs are intsets recorded from redis-server 7.0.15 DUMP payloads
 * (RDB type 11) by tests/unit/gen_listpack_vectors.py; building the same
 * members here must give the same bytes.  The rest checks upgrades at every
 * width boundary, a random model against a sorted array, and corrupt input
 * (run under ASan/UBSan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/intset.h"
#include "ds/rand.h"

static const char vecIs16[] = "\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00"; /* SADD s 1 2 3 */
static const char vecIs32[] = "\x04\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\xe0\x93\x04\x00"; /* SADD s 1 2 300000 */
static const char vecIs64[] = "\x08\x00\x00\x00\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x00\x00\x00\x00\xf2\x05\x2a\x01\x00\x00\x00"; /* SADD s 5000000000 -1 2 */
static const char vecIsNeg[] = "\x04\x00\x00\x00\x03\x00\x00\x00\x90\xee\xfe\xff\xfd\xff\xff\xff\x05\x00\x00\x00"; /* SADD s -70000 5 -3 */

static intset *build(const long long *v, size_t n) {
    intset *is = intsetNew();
    for (size_t i = 0; i < n; i++) is = intsetAdd(is, v[i], NULL);
    return is;
}

static void checkOracle(const char *blob, size_t n, const long long *members, size_t count) {
    unsigned char *copy = xmalloc(n);
    memcpy(copy, blob, n);
    assert_int_equal(intsetValidateIntegrity(copy, n, 0), 1);
    assert_int_equal(intsetValidateIntegrity(copy, n, 1), 1);
    intset *is = (intset *)copy;
    assert_int_equal(intsetLen(is), count);
    assert_int_equal(intsetBlobLen(is), n);
    for (size_t i = 0; i < count; i++) assert_int_equal(intsetFind(is, members[i]), 1);
    intset *mine = build(members, count);
    assert_int_equal(intsetBlobLen(mine), n);
    assert_memory_equal(mine, blob, n);
    intsetFree(mine);
    xfree(copy);
}

#define VEC(v) (v), (sizeof(v) - 1)

static void test_oracle(void **state) {
    (void)state;
    static const long long m16[] = {1, 2, 3}, m32[] = {1, 2, 300000}, m64[] = {5000000000LL, -1, 2},
                           neg[] = {-70000, 5, -3};
    checkOracle(VEC(vecIs16), m16, 3);
    checkOracle(VEC(vecIs32), m32, 3);
    checkOracle(VEC(vecIs64), m64, 3);
    checkOracle(VEC(vecIsNeg), neg, 3);
}

static void test_basic(void **state) {
    (void)state;
    intset *is = intsetNew();
    assert_int_equal(intsetLen(is), 0);
    assert_int_equal(intsetBlobLen(is), 8);
    assert_int_equal(intsetFind(is, 0), 0);
    long long v = 42;
    assert_int_equal(intsetGet(is, 0, &v), 0);
    assert_true(v == 42);
    int added, removed;
    is = intsetAdd(is, 5, &added);
    assert_int_equal(added, 1);
    is = intsetAdd(is, 5, &added);
    assert_int_equal(added, 0);
    is = intsetAdd(is, -5, &added);
    is = intsetAdd(is, 0, &added);
    assert_int_equal(intsetLen(is), 3);
    assert_int_equal(intsetBlobLen(is), 8 + 3 * 2);
    assert_true(intsetMin(is) == -5 && intsetMax(is) == 5);
    assert_int_equal(intsetGet(is, 1, &v), 1);
    assert_true(v == 0);
    assert_int_equal(intsetGet(is, 3, &v), 0);
    /* Values wider than the encoding are never found nor removed. */
    assert_int_equal(intsetFind(is, 65536 + 5), 0);
    is = intsetRemove(is, 65536 + 5, &removed);
    assert_int_equal(removed, 0);
    is = intsetRemove(is, 7, &removed);
    assert_int_equal(removed, 0);
    is = intsetRemove(is, 0, &removed);
    assert_int_equal(removed, 1);
    assert_int_equal(intsetLen(is), 2);
    assert_int_equal(intsetFind(is, 0), 0);
    intset *d = intsetDup(is);
    assert_int_equal(intsetBlobLen(d), intsetBlobLen(is));
    assert_memory_equal(d, is, intsetBlobLen(is));
    is = intsetRemove(is, -5, NULL);
    is = intsetRemove(is, 5, NULL);
    assert_int_equal(intsetLen(is), 0);
    assert_int_equal(intsetLen(d), 2);
    intsetFree(is);
    intsetFree(d);
}

/* Each width boundary, from each side, upgrading at the front and back. */
static void test_upgrade(void **state) {
    (void)state;
    static const struct {
        long long v;
        unsigned enc;
    } cases[] = {{INT16_MAX, 2},        {INT16_MIN, 2},         {INT16_MAX + 1, 4},      {INT16_MIN - 1, 4},
                 {INT32_MAX, 4},        {INT32_MIN, 4},         {INT32_MAX + 1LL, 8},    {INT32_MIN - 1LL, 8},
                 {LLONG_MAX, 8},        {LLONG_MIN, 8}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        intset *is = intsetNew();
        is = intsetAdd(is, -3, NULL);
        is = intsetAdd(is, 7, NULL);
        is = intsetAdd(is, 1, NULL);
        int added;
        is = intsetAdd(is, cases[i].v, &added);
        assert_int_equal(added, 1);
        assert_int_equal(*(const unsigned char *)is, cases[i].enc);
        assert_int_equal(intsetBlobLen(is), 8 + 4 * cases[i].enc);
        long long want[4] = {-3, 1, 7, cases[i].v}, got;
        if (cases[i].v < 0) {
            memmove(want + 1, want, 3 * sizeof(long long));
            want[0] = cases[i].v;
        }
        for (uint32_t k = 0; k < 4; k++) {
            assert_int_equal(intsetGet(is, k, &got), 1);
            assert_true(got == want[k]);
            assert_int_equal(intsetFind(is, want[k]), 1);
        }
        assert_int_equal(intsetValidateIntegrity((unsigned char *)is, intsetBlobLen(is), 1), 1);
        /* Removing the wide value does not downgrade. */
        is = intsetRemove(is, cases[i].v, NULL);
        assert_int_equal(*(const unsigned char *)is, cases[i].enc);
        assert_int_equal(intsetLen(is), 3);
        assert_true(intsetMin(is) == -3 && intsetMax(is) == 7);
        intsetFree(is);
    }
}

static int cmpll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void test_random_model(void **state) {
    (void)state;
    randSeed(5);
    enum { MAXN = 500 };
    long long model[MAXN];
    size_t n = 0;
    intset *is = intsetNew();
    for (int iter = 0; iter < 20000; iter++) {
        long long v;
        unsigned shape = (unsigned)randBounded(4);
        if (shape == 0 && n > 0)
            v = model[randBounded(n)];
        else if (shape == 1)
            v = (long long)randBounded(200) - 100;
        else
            v = (long long)randNext() >> (1 + randBounded(63));
        size_t pos = 0;
        while (pos < n && model[pos] != v) pos++;
        int present = pos < n, changed;
        if (randBounded(3) == 0 || n == MAXN) {
            is = intsetRemove(is, v, &changed);
            assert_int_equal(changed, present);
            if (present) {
                memmove(model + pos, model + pos + 1, (n - pos - 1) * sizeof(long long));
                n--;
            }
        } else {
            is = intsetAdd(is, v, &changed);
            assert_int_equal(changed, !present);
            if (!present) {
                model[n++] = v;
                qsort(model, n, sizeof(long long), cmpll);
            }
        }
        assert_int_equal(intsetLen(is), n);
        assert_int_equal(intsetFind(is, v), !(present && changed) && (present || changed));
        if (iter % 50 == 0) {
            for (uint32_t k = 0; k < n; k++) {
                long long got;
                assert_int_equal(intsetGet(is, k, &got), 1);
                assert_true(got == model[k]);
            }
            if (n) {
                assert_true(intsetMin(is) == model[0] && intsetMax(is) == model[n - 1]);
                assert_int_equal(intsetValidateIntegrity((unsigned char *)is, intsetBlobLen(is), 1), 1);
            }
        }
    }
    intsetFree(is);
}

static void test_random_member(void **state) {
    (void)state;
    static const long long m[] = {-100000, -2, 0, 9, 123456789012LL};
    intset *is = build(m, 5);
    int seen[5] = {0};
    randSeed(3);
    for (int i = 0; i < 5000; i++) {
        long long v = intsetRandom(is);
        int k = 0;
        while (k < 5 && m[k] != v) k++;
        assert_true(k < 5);
        seen[k]++;
    }
    for (int k = 0; k < 5; k++) assert_true(seen[k] > 800 && seen[k] < 1200);
    intsetFree(is);
}

/* Validate bytes from an exact-size heap copy (ASan checks the bounds). */
static int validate(const unsigned char *bytes, size_t n, int deep) {
    unsigned char *p = xmalloc(n ? n : 1);
    memcpy(p, bytes, n);
    int ok = intsetValidateIntegrity(p, n, deep);
    if (ok) {
        const intset *is = (const intset *)p;
        long long v;
        for (uint32_t i = 0; i < intsetLen(is); i++) assert_int_equal(intsetGet(is, i, &v), 1);
        assert_int_equal(intsetBlobLen(is), n);
    }
    xfree(p);
    return ok;
}

static void test_corrupt(void **state) {
    (void)state;
    unsigned char b[40];
    memcpy(b, vecIs32, 20);
    assert_int_equal(validate(b, 20, 1), 1);
    b[0] = 3; /* bad encoding */
    assert_int_equal(validate(b, 20, 0), 0);
    b[0] = 8; /* size no longer matches */
    assert_int_equal(validate(b, 20, 0), 0);
    memcpy(b, vecIs32, 20);
    b[4] = 4; /* length */
    assert_int_equal(validate(b, 20, 0), 0);
    b[4] = 0xff;
    b[7] = 0xff; /* length*enc overflows 32 bits */
    assert_int_equal(validate(b, 20, 0), 0);
    memcpy(b, vecIs32, 20);
    assert_int_equal(validate(b, 19, 0), 0);
    assert_int_equal(validate(b, 7, 0), 0);
    assert_int_equal(validate(b, 0, 0), 0);
    /* Out of order / duplicate: only deep notices. */
    memcpy(b, vecIs32, 20);
    b[12] = 1;
    assert_int_equal(validate(b, 20, 0), 1);
    assert_int_equal(validate(b, 20, 1), 0);
    memcpy(b, vecIs32, 20);
    b[8] = 5;
    assert_int_equal(validate(b, 20, 1), 0);
    /* Empty sets are rejected, as Redis does. */
    static const unsigned char empty[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(validate(empty, 8, 1), 0);
    /* Random garbage. */
    randSeed(11);
    for (int i = 0; i < 20000; i++) {
        size_t n = randBounded(40);
        for (size_t k = 0; k < n; k++) b[k] = (unsigned char)randNext();
        if (n >= 8 && randBounded(2)) {
            static const unsigned char encs[] = {2, 4, 8};
            uint32_t e = encs[randBounded(3)];
            memset(b, 0, 8);
            b[0] = (unsigned char)e;
            b[4] = (unsigned char)((n - 8) / e);
        }
        validate(b, n, (int)randBounded(2));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle),       cmocka_unit_test(test_basic),
        cmocka_unit_test(test_upgrade),      cmocka_unit_test(test_random_model),
        cmocka_unit_test(test_random_member), cmocka_unit_test(test_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
