/* test_crc64.c -- unit tests for src/ds/crc64.c.
 *
 * The check value is the catalogued one for CRC-64/Jones ("123456789");
 * the DUMP vector is the trailer redis-server 7.0 gives for FUNCTION DUMP
 * with no libraries (RDB version 10, then the CRC of those two bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ds/crc64.h"

static void test_check_value(void **state) {
    (void)state;
    assert_true(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL);
    assert_true(crc64(0, "", 0) == 0);
}

static void test_empty_function_dump_trailer(void **state) {
    (void)state;
    static const unsigned char version[2] = {10, 0};
    static const unsigned char expected[8] = {0x5d, 0x9b, 0x5c, 0x40, 0x0f, 0x7f, 0xa2, 0xda};
    uint64_t c = crc64(0, version, 2);
    for (int i = 0; i < 8; i++)
        assert_int_equal((c >> (8 * i)) & 0xff, expected[i]);
}

static void test_incremental_equals_whole(void **state) {
    (void)state;
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    uint64_t whole = crc64(0, buf, sizeof(buf));
    for (size_t cut = 0; cut <= sizeof(buf); cut += 37)
        assert_true(crc64(crc64(0, buf, cut), buf + cut, sizeof(buf) - cut) == whole);
    buf[500] ^= 1;
    assert_true(crc64(0, buf, sizeof(buf)) != whole);
}

/* The eight-bytes-per-step CRC against a plain bit-by-bit one, for every
 * length up to 70 at every alignment (the tail and the 8-byte steps). */
static uint64_t bitwise(uint64_t crc, const unsigned char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        crc ^= s[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
    }
    return crc;
}

static void test_combine_joins_pieces(void **state) {
    (void)state;
    unsigned char buf[70000];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof(buf); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    size_t cuts[] = {0, 1, 7, 8, 9, 1000, 4096, 65536, 69999, 70000};
    uint64_t whole = crc64(0, buf, sizeof(buf));
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        size_t c = cuts[i], rest = sizeof(buf) - c;
        uint64_t a = crc64(0, buf, c), b = crc64(0, buf + c, rest);
        assert_true(crc64Combine(a, b, rest) == whole);
    }
    /* Three pieces, joined left to right. */
    uint64_t ab = crc64Combine(crc64(0, buf, 100), crc64(0, buf + 100, 900), 900);
    assert_true(crc64Combine(ab, crc64(0, buf + 1000, sizeof(buf) - 1000), sizeof(buf) - 1000) == whole);
}

static void test_matches_bitwise(void **state) {
    (void)state;
    unsigned char buf[96];
    for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (unsigned char)(i * 131 + 17);
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= 70; len++)
            assert_true(crc64(0x1234, buf + off, len) == bitwise(0x1234, buf + off, len));
}

/* Long inputs take the carry-less multiplication path on x86-64 CPUs
 * with PCLMULQDQ (64 bytes or more: the 4-lane loop from 128): every
 * length up to 700 at several alignments and starting CRCs. */
static void test_long_matches_bitwise(void **state) {
    (void)state;
    static unsigned char buf[720];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof(buf); i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    for (size_t off = 0; off < 16; off += 5)
        for (size_t len = 0; len <= 700; len++) {
            assert_true(crc64(0, buf + off, len) == bitwise(0, buf + off, len));
            assert_true(crc64(~0ULL, buf + off, len) == bitwise(~0ULL, buf + off, len));
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_empty_function_dump_trailer),
        cmocka_unit_test(test_incremental_equals_whole),
        cmocka_unit_test(test_matches_bitwise),
        cmocka_unit_test(test_long_matches_bitwise),
        cmocka_unit_test(test_combine_joins_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
