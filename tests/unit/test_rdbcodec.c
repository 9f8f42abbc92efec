/* test_rdbcodec.c -- unit tests for src/ds/rdbcodec.c.
 *
 * The LZF vector is a library as redis-server 7.0.15 wrote it in FUNCTION
 * DUMP (opcode byte removed); the rest checks each length form at its
 * boundaries, the integer encodings, round trips, and that every truncation
 * or corruption of a valid encoding is refused without reading past it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ds/rdbcodec.h"

static const unsigned char redisLzf[] = {
    0xc3, 0x40, 0x42, 0x40, 0x82, 0x1f, 0x23, 0x21, 0x6c, 0x75, 0x61, 0x20, 0x6e, 0x61, 0x6d,
    0x65, 0x3d, 0x73, 0x6d, 0x32, 0x0a, 0x72, 0x65, 0x64, 0x69, 0x73, 0x2e, 0x72, 0x65, 0x67,
    0x69, 0x73, 0x74, 0x65, 0x72, 0x5f, 0x66, 0x75, 0x0a, 0x6e, 0x63, 0x74, 0x69, 0x6f, 0x6e,
    0x28, 0x27, 0x62, 0x27, 0x2c, 0xe0, 0x00, 0x0c, 0x0a, 0x29, 0x20, 0x65, 0x6e, 0x64, 0x29,
    0x20, 0x2d, 0x2d, 0x20, 0x78, 0xe0, 0x38, 0x00, 0x01, 0x78, 0x78};
static const char redisLzfText[] = "#!lua name=sm2\nredis.register_function('b',function() end) -- "
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

static void test_decodes_redis_lzf_string(void **state) {
    (void)state;
    size_t pos = 0;
    sds s;
    assert_int_equal(rdbDecodeString(redisLzf, sizeof(redisLzf), &pos, &s), 0);
    assert_int_equal(pos, sizeof(redisLzf));
    assert_int_equal(sdsLen(s), strlen(redisLzfText));
    assert_memory_equal(s, redisLzfText, sdsLen(s));
    sdsFree(s);
}

static void test_length_forms(void **state) {
    (void)state;
    static const struct {
        uint64_t len;
        size_t bytes;
        unsigned char first;
    } cases[] = {{0, 1, 0x00},
                 {63, 1, 0x3f},
                 {64, 2, 0x40},
                 {16383, 2, 0x7f},
                 {16384, 5, 0x80},
                 {UINT32_MAX, 5, 0x80},
                 {UINT32_MAX + 1ULL, 9, 0x81},
                 {UINT64_MAX, 9, 0x81}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sds s = rdbEncodeLen(sdsEmpty(), cases[i].len);
        assert_int_equal(sdsLen(s), cases[i].bytes);
        assert_int_equal((unsigned char)s[0], cases[i].first);
        size_t pos = 0;
        uint64_t v;
        int special;
        assert_int_equal(rdbDecodeLen((unsigned char *)s, sdsLen(s), &pos, &v, &special), 0);
        assert_true(v == cases[i].len && !special && pos == cases[i].bytes);
        for (size_t cut = 0; cut < sdsLen(s); cut++) {
            pos = 0;
            assert_int_equal(rdbDecodeLen((unsigned char *)s, cut, &pos, &v, &special), -1);
        }
        sdsFree(s);
    }
}

static void roundTrip(const char *p, size_t len, int compress, unsigned char firstByte) {
    sds s = rdbEncodeString(sdsEmpty(), p, len, compress);
    assert_int_equal((unsigned char)s[0], firstByte);
    size_t pos = 0;
    sds back;
    assert_int_equal(rdbDecodeString((unsigned char *)s, sdsLen(s), &pos, &back), 0);
    assert_int_equal(pos, sdsLen(s));
    assert_int_equal(sdsLen(back), len);
    assert_memory_equal(back, p, len);
    sdsFree(back);
    for (size_t cut = 0; cut < sdsLen(s); cut++) {
        pos = 0;
        assert_int_equal(rdbDecodeString((unsigned char *)s, cut, &pos, &back), -1);
        assert_int_equal(pos, 0);
    }
    sdsFree(s);
}

static void test_string_encodings(void **state) {
    (void)state;
    roundTrip("", 0, 1, 0x00);
    roundTrip("hello", 5, 1, 0x05);
    roundTrip("0", 1, 1, 0xc0);
    roundTrip("-128", 4, 1, 0xc0);
    roundTrip("127", 3, 1, 0xc0);
    roundTrip("128", 3, 1, 0xc1);
    roundTrip("-32768", 6, 1, 0xc1);
    roundTrip("32768", 5, 1, 0xc2);
    roundTrip("-2147483648", 11, 1, 0xc2);
    roundTrip("2147483648", 10, 1, 0x0a); /* beyond 32 bits: plain */
    roundTrip("007", 3, 1, 0x03);         /* not canonical: plain */
    roundTrip("+7", 2, 1, 0x02);
    char big[400];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = "abcdefgh"[i % 8];
    roundTrip(big, sizeof(big), 1, 0xc3);
    roundTrip(big, sizeof(big), 0, 0x41); /* 14-bit length */
    roundTrip(big, 20, 1, 0x14);          /* too short to try LZF */
    char noise[100];
    for (size_t i = 0; i < sizeof(noise); i++)
        noise[i] = (char)((i * 1103515245u + 12345u) >> 7);
    roundTrip(noise, sizeof(noise), 1, 0x40); /* LZF would not pay */
}

static void test_refuses_bad_encodings(void **state) {
    (void)state;
    static const unsigned char unknownEnc[] = {0xc4};
    static const unsigned char bad82[] = {0x82, 0, 0, 0, 1};
    static const unsigned char lzfBadLen[] = {0xc3, 0x02, 0x10, 0x01, 'a', 'b'};
    static const unsigned char lzfHuge[] = {0xc3, 0x01, 0x80, 0x7f, 0xff, 0xff, 0xff, 0x00};
    static const unsigned char plainShort[] = {0x05, 'a', 'b'};
    const struct {
        const unsigned char *p;
        size_t len;
    } cases[] = {{unknownEnc, sizeof(unknownEnc)},
                 {bad82, sizeof(bad82)},
                 {lzfBadLen, sizeof(lzfBadLen)},
                 {lzfHuge, sizeof(lzfHuge)},
                 {plainShort, sizeof(plainShort)}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t pos = 0;
        sds s;
        assert_int_equal(rdbDecodeString(cases[i].p, cases[i].len, &pos, &s), -1);
    }
}

/* Where a reader stands when a string is cut off: past the length fields
 * that are whole, as Redis's reader counts them. */
static void test_string_prefix_end(void **state) {
    (void)state;
    const unsigned char plain[] = {0x05, 'h', 'e'};             /* 5 bytes announced, 2 there */
    assert_int_equal(rdbStringPrefixEnd(plain, sizeof(plain), 0), 1);
    const unsigned char wide[] = {0x80, 0x00, 0x00};            /* a 32-bit length cut off */
    assert_int_equal(rdbStringPrefixEnd(wide, sizeof(wide), 0), 0);
    const unsigned char lzf[] = {0xC3, 0x04, 0x0a, 'x'};        /* LZF: both lengths whole */
    assert_int_equal(rdbStringPrefixEnd(lzf, sizeof(lzf), 0), 3);
    const unsigned char lzfCut[] = {0xC3, 0x04};                /* LZF: the second length missing */
    assert_int_equal(rdbStringPrefixEnd(lzfCut, sizeof(lzfCut), 0), 2);
    assert_int_equal(rdbStringPrefixEnd(plain, 0, 0), 0);       /* nothing at all */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decodes_redis_lzf_string),
        cmocka_unit_test(test_length_forms),
        cmocka_unit_test(test_string_encodings),
        cmocka_unit_test(test_refuses_bad_encodings),
        cmocka_unit_test(test_string_prefix_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
