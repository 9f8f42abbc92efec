/* test_siphash.c -- unit tests for src/ds/siphash.c.
 *
 * The SipHash-2-4 vectors are the published ones from the SipHash paper's
 * reference test suite (key 00..0f, message 00..n-1); passing them checks
 * the shared core that SipHash-1-2 runs with different round counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ds/siphash.h"

static const uint64_t sip24Vectors[] = {
    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
    0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
    0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
    0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL, 0xa129ca6149be45e5ULL,
    0x3f2acc7f57c29bdbULL,
};

static void refKey(uint8_t key[16]) {
    for (int i = 0; i < 16; i++) key[i] = (uint8_t)i;
}

static void test_siphash24_vectors(void **state) {
    (void)state;
    uint8_t key[16], msg[64];
    refKey(key);
    for (int i = 0; i < 64; i++) msg[i] = (uint8_t)i;
    for (size_t n = 0; n < sizeof(sip24Vectors) / sizeof(sip24Vectors[0]); n++)
        assert_true(siphashRounds(msg, n, key, 2, 4) == sip24Vectors[n]);
}

static void test_siphash12_properties(void **state) {
    (void)state;
    uint8_t key[16], key2[16], msg[64];
    refKey(key);
    memcpy(key2, key, 16);
    key2[15] ^= 1;
    for (int i = 0; i < 64; i++) msg[i] = (uint8_t)(i * 7);
    for (size_t n = 0; n <= 64; n++) {
        uint64_t h = siphash(msg, n, key);
        assert_true(h == siphashRounds(msg, n, key, 1, 2));
        assert_true(h == siphash(msg, n, key)); /* deterministic */
        assert_true(h != siphash(msg, n, key2)); /* key matters */
        assert_true(h != siphashRounds(msg, n, key, 2, 4));
        if (n > 0) assert_true(h != siphash(msg, n - 1, key)); /* length matters */
    }
    /* Alignment does not matter. */
    uint8_t buf[80];
    for (size_t off = 0; off < 8; off++) {
        memcpy(buf + off, msg, 40);
        assert_true(siphash(buf + off, 40, key) == siphash(msg, 40, key));
    }
    /* Every single-bit flip of the input changes the hash. */
    uint64_t base = siphash(msg, 24, key);
    for (int bit = 0; bit < 24 * 8; bit++) {
        msg[bit / 8] ^= (uint8_t)(1 << (bit % 8));
        assert_true(siphash(msg, 24, key) != base);
        msg[bit / 8] ^= (uint8_t)(1 << (bit % 8));
    }
}

static void test_nocase(void **state) {
    (void)state;
    uint8_t key[16];
    refKey(key);
    const char *mixed = "Hello, WORLD! [Z@`z] 0123456789 \xc3\x89t\xc3\xa9";
    const char *lower = "hello, world! [z@`z] 0123456789 \xc3\x89t\xc3\xa9";
    size_t len = strlen(mixed);
    for (size_t n = 0; n <= len; n++) {
        assert_true(siphashNoCase(mixed, n, key) == siphash(lower, n, key));
        assert_true(siphashNoCase(lower, n, key) == siphash(lower, n, key));
    }
    assert_true(siphash(mixed, len, key) != siphash(lower, len, key));
    /* Only ASCII letters fold: '@' and '`' stay distinct. */
    assert_true(siphashNoCase("@", 1, key) != siphashNoCase("`", 1, key));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash24_vectors),
        cmocka_unit_test(test_siphash12_properties),
        cmocka_unit_test(test_nocase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
