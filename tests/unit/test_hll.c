/* test_hll.c -- unit tests for src/ds/hll.c.
 *
 * The register/value vectors are what redis-server 7.0.15's PFDEBUG DECODE
 * shows after one PFADD of the element; the corrupt sketches are the shapes
 * that must be refused rather than walked out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/hll.h"

static sds sparseOf(const unsigned char *ops, size_t n) {
    sds s = hllCreate();
    sdsSetLen(s, HLL_HDR_SIZE);
    s = sdsCatLen(s, ops, n);
    hllCacheInvalidate((unsigned char *)s);
    return s;
}

static void test_patlen_matches_redis(void **state) {
    (void)state;
    long idx;
    assert_int_equal(hllPatLen((const unsigned char *)"a", 1, &idx), 2);
    assert_int_equal(idx, 12711);
    assert_int_equal(hllPatLen((const unsigned char *)"foobar12", 8, &idx), 2);
    assert_int_equal(idx, 15489);
}

static void test_empty_sketch_bytes_and_count(void **state) {
    (void)state;
    sds s = hllCreate();
    static const unsigned char want[18] = {'H', 'Y', 'L', 'L', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff};
    assert_int_equal(sdsLen(s), 18);
    assert_memory_equal(s, want, 18);
    assert_true(hllIsValid((unsigned char *)s, sdsLen(s)));
    int bad = 0;
    assert_int_equal(hllCount((unsigned char *)s, sdsLen(s), &bad), 0);
    assert_int_equal(bad, 0);
    sds text = hllDecodeSparse((unsigned char *)s, sdsLen(s));
    assert_string_equal(text, "Z:16384");
    sdsFree(text);
    sdsFree(s);
}

static void test_dense_registers_round_trip(void **state) {
    (void)state;
    static unsigned char regs[HLL_DENSE_BYTES];
    for (long i = 0; i < HLL_REGISTERS; i++) hllDenseSetReg(regs, i, (unsigned)((i * 7 + 3) & 63));
    for (long i = 0; i < HLL_REGISTERS; i++) assert_int_equal(hllDenseGet(regs, i), (i * 7 + 3) & 63);
    hllDenseSetReg(regs, 16383, 0);
    assert_int_equal(hllDenseGet(regs, 16382), (16382 * 7 + 3) & 63);
}

static void test_sparse_and_dense_agree_and_promote(void **state) {
    (void)state;
    sds sp = hllCreate(), dn = hllCreate();
    assert_int_equal(hllToDense(&dn), 0);
    assert_int_equal(sdsLen(dn), HLL_DENSE_SIZE);
    for (int i = 0; i < 5000; i++) {
        char e[16];
        int n = snprintf(e, sizeof(e), "el%d", i);
        assert_true(hllAdd(&sp, (unsigned char *)e, (size_t)n, 3000) >= 0);
        assert_true(hllAdd(&dn, (unsigned char *)e, (size_t)n, 3000) >= 0);
    }
    assert_int_equal(((unsigned char *)sp)[4], HLL_DENSE); /* promoted */
    assert_memory_equal(sp + HLL_HDR_SIZE, dn + HLL_HDR_SIZE, HLL_DENSE_BYTES);
    int bad = 0;
    uint64_t c = hllCount((unsigned char *)sp, sdsLen(sp), &bad);
    assert_true(c > 4750 && c < 5250);
    uint8_t max[HLL_REGISTERS] = {0};
    assert_int_equal(hllMergeInto(max, (unsigned char *)dn, sdsLen(dn)), 0);
    assert_int_equal(hllCountRaw(max), c);
    sdsFree(sp);
    sdsFree(dn);
}

static void test_corrupt_sparse_is_refused(void **state) {
    (void)state;
    static const unsigned char shortRun[] = {0x7e, 0x7f};          /* 16,128 */
    static const unsigned char valPast[] = {0x7f, 0xff, 0xdf};     /* VAL after 16,384 */
    static const unsigned char valOver[] = {0x7f, 0xfe, 0xdf};     /* VAL from 16,383, 4 long */
    const unsigned char *cases[] = {shortRun, valPast, valOver};
    size_t lens[] = {sizeof(shortRun), sizeof(valPast), sizeof(valOver)};
    for (int i = 0; i < 3; i++) {
        sds s = sparseOf(cases[i], lens[i]);
        int bad = 0;
        (void)hllCount((unsigned char *)s, sdsLen(s), &bad);
        assert_int_equal(bad, 1);
        uint8_t max[HLL_REGISTERS] = {0};
        assert_int_equal(hllMergeInto(max, (unsigned char *)s, sdsLen(s)), -1);
        assert_int_equal(hllToDense(&s), -1);
        assert_int_equal(((unsigned char *)s)[4], HLL_SPARSE);
        sdsFree(s);
    }
    /* 131,073 XZEROs of 16,384 then a VAL: a 32-bit index would wrap. */
    size_t n = 131073;
    unsigned char *ops = malloc(n * 2 + 1);
    for (size_t i = 0; i < n; i++) {
        ops[2 * i] = 0x7f;
        ops[2 * i + 1] = 0xff;
    }
    ops[2 * n] = 0x93;
    sds s = sparseOf(ops, 2 * n + 1);
    free(ops);
    uint8_t max[HLL_REGISTERS] = {0};
    assert_int_equal(hllMergeInto(max, (unsigned char *)s, sdsLen(s)), -1);
    assert_int_equal(hllToDense(&s), -1);
    assert_int_equal(hllAdd(&s, (const unsigned char *)"a", 1, 1 << 30), 1); /* register 12711 is covered */
    sdsFree(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patlen_matches_redis),
        cmocka_unit_test(test_empty_sketch_bytes_and_count),
        cmocka_unit_test(test_dense_registers_round_trip),
        cmocka_unit_test(test_sparse_and_dense_agree_and_promote),
        cmocka_unit_test(test_corrupt_sparse_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
