/* test_sha1.c -- unit tests for src/ds/sha1.c: the FIPS 180 example
 * vectors, the empty string, the million-'a' vector, and that feeding the
 * same bytes in pieces of every size gives the one-call digest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ds/sha1.h"

static void test_sha1_vectors(void **state) {
    (void)state;
    char hex[41];
    sha1Hex("", 0, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    sha1Hex("abc", 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha1Hex(two, strlen(two), hex);
    assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    sha1Hex("return 1", 8, hex); /* the SHA SCRIPT LOAD answers for it */
    assert_string_equal(hex, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

static void test_sha1_million_a(void **state) {
    (void)state;
    Sha1 s;
    unsigned char chunk[1000], d[20];
    memset(chunk, 'a', sizeof(chunk));
    sha1Init(&s);
    for (int i = 0; i < 1000; i++) sha1Update(&s, chunk, sizeof(chunk));
    sha1Final(&s, d);
    static const unsigned char want[20] = {0x34, 0xaa, 0x97, 0x3c, 0xd4, 0xc4, 0xda, 0xa4, 0xf6, 0x1e,
                                           0xeb, 0x2b, 0xdb, 0xad, 0x27, 0x31, 0x65, 0x34, 0x01, 0x6f};
    assert_memory_equal(d, want, 20);
}

static void test_sha1_pieces(void **state) {
    (void)state;
    unsigned char data[300];
    for (int i = 0; i < 300; i++) data[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof(data); len += 37) {
        unsigned char whole[20];
        Sha1 s;
        sha1Init(&s);
        sha1Update(&s, data, len);
        sha1Final(&s, whole);
        for (size_t piece = 1; piece <= 70; piece++) {
            unsigned char d[20];
            sha1Init(&s);
            for (size_t off = 0; off < len; off += piece) sha1Update(&s, data + off, len - off < piece ? len - off : piece);
            sha1Final(&s, d);
            assert_memory_equal(d, whole, 20);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_vectors),
        cmocka_unit_test(test_sha1_million_a),
        cmocka_unit_test(test_sha1_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
