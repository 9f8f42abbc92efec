/* test_sha256.c -- unit tests for src/ds/sha256.c: the FIPS 180 example
 * vectors, the empty string, the million-'a' vector, lengths at the
 * padding's block edges, and that feeding the same bytes in pieces of
 * every size gives the one-call digest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ds/sha256.h"

static void test_sha256_vectors(void **state) {
    (void)state;
    char hex[65];
    sha256Hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256Hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256Hex(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_sha256_million_a(void **state) {
    (void)state;
    Sha256 s;
    unsigned char chunk[1000], d[32];
    char hex[65];
    memset(chunk, 'a', sizeof(chunk));
    sha256Init(&s);
    for (int i = 0; i < 1000; i++) sha256Update(&s, chunk, sizeof(chunk));
    sha256Final(&s, d);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_sha256_pieces(void **state) {
    (void)state;
    unsigned char data[300];
    for (int i = 0; i < 300; i++) data[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof(data); len += 37) {
        unsigned char whole[32];
        Sha256 s;
        sha256Init(&s);
        sha256Update(&s, data, len);
        sha256Final(&s, whole);
        for (size_t piece = 1; piece <= 70; piece++) {
            unsigned char d[32];
            sha256Init(&s);
            for (size_t off = 0; off < len; off += piece)
                sha256Update(&s, data + off, len - off < piece ? len - off : piece);
            sha256Final(&s, d);
            assert_memory_equal(d, whole, 32);
        }
    }
}

/* Lengths around the padding's edges (55 bytes fit the length in the same
 * block, 56 to 63 need one more); digests from Python's hashlib. */
static void test_sha256_padding_edges(void **state) {
    (void)state;
    static const struct {
        size_t len;
        const char *hex;
    } v[] = {
        {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
        {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
        {57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73"},
        {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
        {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
        {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
        {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
        {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
    };
    unsigned char data[120];
    for (int i = 0; i < 120; i++) data[i] = (unsigned char)(i * 7 + 3);
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        char hex[65];
        sha256Hex(data, v[i].len, hex);
        assert_string_equal(hex, v[i].hex);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_sha256_million_a),
        cmocka_unit_test(test_sha256_pieces),
        cmocka_unit_test(test_sha256_padding_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
