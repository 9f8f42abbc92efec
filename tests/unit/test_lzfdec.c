/* test_lzfdec.c -- unit tests for src/ds/lzfdec.c: the same bytes and the
 * same verdict as liblzf's lzf_decompress, on what lzf_compress writes and
 * on random and mutated input, with every output size around the true one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <liblzf/lzf.h>
#include <stdlib.h>
#include <string.h>

#include "ds/lzfdec.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static unsigned next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* Input that compresses: words from a small alphabet, runs, noise. */
static size_t fill(unsigned char *buf, size_t cap) {
    size_t n = 1 + next() % cap;
    for (size_t i = 0; i < n;) {
        unsigned kind = next() % 4;
        size_t run = 1 + next() % 40;
        for (size_t k = 0; k < run && i < n; k++, i++) {
            if (kind == 0) buf[i] = 'a';
            else if (kind == 1) buf[i] = (unsigned char)("item:0123456789"[next() % 15]);
            else if (kind == 2) buf[i] = (unsigned char)next();
            else buf[i] = i >= 9 ? buf[i - 9] : 'x';
        }
    }
    return n;
}

/* Both decoders agree on in[0..len) for output room `room`. */
static void agree(const unsigned char *in, size_t len, size_t room) {
    unsigned char *a = malloc(room + 1), *b = malloc(room + 1);
    unsigned ra = lzf_decompress(in, (unsigned)len, a, (unsigned)room);
    size_t rb = lzfDecompress(in, len, b, room);
    assert_int_equal(ra, rb);
    if (ra) assert_memory_equal(a, b, ra);
    free(a);
    free(b);
}

static void test_round_trips(void **state) {
    (void)state;
    static unsigned char raw[20000], comp[21000], out[20000];
    for (int i = 0; i < 3000; i++) {
        size_t n = fill(raw, i % 10 ? 600 : sizeof(raw));
        unsigned c = lzf_compress(raw, (unsigned)n, comp, sizeof(comp));
        assert_true(c > 0);
        assert_int_equal(lzfDecompress(comp, c, out, n), n);
        assert_memory_equal(out, raw, n);
        agree(comp, c, n);
        agree(comp, c, n - 1); /* too small: both refuse */
        agree(comp, c, n + 40);
    }
}

static void test_hostile_input(void **state) {
    (void)state;
    static unsigned char raw[2000], comp[2100];
    for (int i = 0; i < 20000; i++) {
        size_t n = fill(raw, sizeof(raw));
        unsigned c = lzf_compress(raw, (unsigned)n, comp, sizeof(comp));
        assert_true(c > 0);
        /* Flip a few bytes, cut the end, or replace everything. */
        unsigned how = next() % 3;
        if (how == 0) {
            for (int k = 0; k < 3; k++) comp[next() % c] = (unsigned char)next();
        } else if (how == 1) {
            c = 1 + next() % c;
        } else {
            for (unsigned k = 0; k < c; k++) comp[k] = (unsigned char)next();
        }
        agree(comp, c, n);
        agree(comp, c, next() % (n + 64));
    }
    /* A reference before the start, a literal past the input, nothing. */
    static const unsigned char before[] = {0x00, 'a', 0x20, 0x05};
    static const unsigned char past[] = {0x05, 'a', 'b'};
    unsigned char out[64];
    assert_int_equal(lzfDecompress(before, sizeof(before), out, sizeof(out)), 0);
    assert_int_equal(lzfDecompress(past, sizeof(past), out, sizeof(out)), 0);
    assert_int_equal(lzfDecompress(past, 0, out, sizeof(out)), 0);
    static const unsigned char rle[] = {0x00, 'z', 0xe0, 0x10, 0x00}; /* 'z' then 25 more */
    assert_int_equal(lzfDecompress(rle, sizeof(rle), out, sizeof(out)), 26);
    for (int k = 0; k < 26; k++) assert_int_equal(out[k], 'z');
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_hostile_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
