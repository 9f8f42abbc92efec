/* test_globset.c -- unit tests for src/ds/globset.c: every answer must be
 * globMatch's.  Hand-picked shapes (each fast path, the empty string and
 * pattern, binary bytes, literals shorter and longer than 8 bytes), then
 * random sets of random patterns over a small alphabet (so that matches
 * are common) against random strings, with tags.  globSetMatchQuick may
 * only say yes when globMatch does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/globset.h"

/* The answer the set must give: any pattern with the tag that globMatch
 * accepts. */
static int expected(const char *const *pats, const size_t *lens, const unsigned char *tags, size_t n, const char *s,
                    size_t len, unsigned need) {
    for (size_t i = 0; i < n; i++)
        if ((tags[i] & need) == need && globMatch(pats[i], lens[i], s, len, 0)) return 1;
    return 0;
}

static void checkOne(const char *pat, size_t plen, const char *s, size_t len) {
    unsigned char tag = 3;
    GlobSet *gs = globSetCreate(&pat, &plen, &tag, 1);
    int want = globMatch(pat, plen, s, len, 0);
    if (globSetMatch(gs, s, len, 3) != want)
        fail_msg("pattern '%.*s' string '%.*s': expected %d", (int)plen, pat, (int)len, s, want);
    if (globSetMatchQuick(gs, s, len, 3) && !want)
        fail_msg("pattern '%.*s' string '%.*s': quick match", (int)plen, pat, (int)len, s);
    globSetFree(gs);
}

static void test_shapes(void **state) {
    (void)state;
    static const char *pats[] = {"",         "*",          "**",          "key:*",        "key:**",
                                 "key:",     "key",        "*:suffix",    "**x",          "k?y:*",
                                 "[k]ey:*",  "key:\\*",    "\\",          "abcdefgh*",    "abcdefghij*",
                                 "abcdefghij", "*abcdefghij", "a*b",      "a*b*",         "?",
                                 "longprefix:with:more:than:eight*", "x[", "*[ab]"};
    static const char *strs[] = {"",         "k",          "key",        "key:",         "key:1",
                                 "key:__rand_int__", "KEY:1", "a:suffix", ":suffix", "suffix",
                                 "x",        "abcdefgh",   "abcdefghi",  "abcdefghij",   "abcdefghijk",
                                 "zabcdefghij", "ab",       "a",          "b",            "key:*",
                                 "\\",       "longprefix:with:more:than:eight", "longprefix:with:more:than:eight!",
                                 "longprefix:with:more:than:eigh", "x[", "xa", "a"};
    for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
        for (size_t j = 0; j < sizeof(strs) / sizeof(strs[0]); j++)
            checkOne(pats[i], strlen(pats[i]), strs[j], strlen(strs[j]));
    /* Binary bytes, NULs included. */
    checkOne("a\0*", 3, "a\0bc", 4);
    checkOne("a\0*", 3, "a", 1);
    checkOne("\xff\x80", 2, "\xff\x80", 2);
    checkOne("*\0", 2, "abc\0", 4);
    checkOne("\0\0\0\0\0\0\0\0\0*", 10, "\0\0\0\0\0\0\0\0\0\0", 10);
    checkOne("\0\0\0\0\0\0\0\0\0*", 10, "\0\0\0\0\0\0\0\0\1\0", 10);
}

static void test_tags(void **state) {
    (void)state;
    const char *pats[] = {"r:*", "w:*", "rw:*", "*"};
    size_t lens[] = {3, 3, 4, 1};
    unsigned char tags[] = {1, 2, 3, 1};
    GlobSet *gs = globSetCreate(pats, lens, tags, 4);
    assert_true(globSetMatch(gs, "r:x", 3, 1));
    assert_true(globSetMatch(gs, "w:x", 3, 1)); /* by "*" */
    assert_true(globSetMatch(gs, "w:x", 3, 2));
    assert_false(globSetMatch(gs, "r:x", 3, 2));
    assert_false(globSetMatch(gs, "r:x", 3, 3));
    assert_true(globSetMatch(gs, "rw:x", 4, 3));
    assert_true(globSetMatch(gs, "anything", 8, 1)); /* "*" has R */
    assert_false(globSetMatch(gs, "anything", 8, 2));
    assert_true(globSetMatch(gs, "x", 1, 0));
    assert_false(globSetMatch(gs, "", 0, 0));
    globSetFree(gs);
    gs = globSetCreate(NULL, NULL, NULL, 0);
    assert_false(globSetMatch(gs, "a", 1, 0));
    assert_false(globSetMatch(gs, "", 0, 0));
    globSetFree(gs);
}

static uint64_t rng = 88172645463325252ULL;
static unsigned next(unsigned n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static size_t randomText(char *out, size_t max, const char *alphabet) {
    size_t len = next((unsigned)max + 1), na = strlen(alphabet);
    for (size_t i = 0; i < len; i++) out[i] = alphabet[next((unsigned)na)];
    return len;
}

static void test_random_sets(void **state) {
    (void)state;
    char patBuf[8][24], str[24];
    for (int round = 0; round < 20000; round++) {
        size_t n = next(8) + 1;
        const char *pats[8];
        size_t lens[8];
        unsigned char tags[8];
        for (size_t i = 0; i < n; i++) {
            /* Mostly literal patterns with stars (the fast shapes), sometimes
             * any glob. */
            const char *alpha = next(3) ? "ab:*" : "ab:*?[]\\^-";
            lens[i] = randomText(patBuf[i], next(2) ? 12 : 22, alpha);
            pats[i] = patBuf[i];
            tags[i] = (unsigned char)(next(3) + 1);
        }
        GlobSet *gs = globSetCreate(pats, lens, tags, n);
        for (int k = 0; k < 20; k++) {
            size_t len = randomText(str, next(2) ? 10 : 20, "ab:");
            unsigned need = next(4);
            int want = expected(pats, lens, tags, n, str, len, need);
            if (globSetMatch(gs, str, len, need) != want)
                fail_msg("round %d string '%.*s' need %u: expected %d", round, (int)len, str, need, want);
            if (globSetMatchQuick(gs, str, len, need) && !want)
                fail_msg("round %d string '%.*s' need %u: quick match", round, (int)len, str, need);
        }
        globSetFree(gs);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_random_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
