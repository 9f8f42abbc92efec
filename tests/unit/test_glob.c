/* test_glob.c -- unit tests for src/ds/glob.c.
 *
 * The table was produced on redis-server 7.0.15: for each row, FLUSHDB,
 * SET <string> 1, KEYS <pattern>, and record whether the key came back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/glob.h"

static const struct {
    const char *pat;
    size_t patlen;
    const char *str;
    size_t strlen;
    int match;
} oracle[] = {
    {"**", 2, "", 0, 0},
    {"?*", 2, "", 0, 0},
    {"[", 1, "", 0, 0},
    {"*", 1, "a", 1, 1},
    {"**", 2, "a", 1, 1},
    {"", 0, "a", 1, 0},
    {"a", 1, "a", 1, 1},
    {"a", 1, "A", 1, 0},
    {"?", 1, "a", 1, 1},
    {"?", 1, "ab", 2, 0},
    {"??", 2, "ab", 2, 1},
    {"a*", 2, "a", 1, 1},
    {"a*", 2, "abc", 3, 1},
    {"*c", 2, "abc", 3, 1},
    {"*b*", 3, "abc", 3, 1},
    {"*x*", 3, "abc", 3, 0},
    {"a*b*c", 5, "aXbYc", 5, 1},
    {"a*b*c", 5, "aXbY", 4, 0},
    {"h?llo", 5, "hello", 5, 1},
    {"h?llo", 5, "hllo", 4, 0},
    {"h*llo", 5, "hllo", 4, 1},
    {"h[ae]llo", 8, "hello", 5, 1},
    {"h[ae]llo", 8, "hillo", 5, 0},
    {"h[^e]llo", 8, "hallo", 5, 1},
    {"h[^e]llo", 8, "hello", 5, 0},
    {"h[a-b]llo", 9, "hbllo", 5, 1},
    {"h[a-b]llo", 9, "hcllo", 5, 0},
    {"h[b-a]llo", 9, "hallo", 5, 1},
    {"h[z-a]llo", 9, "hmllo", 5, 1},
    {"[abc", 4, "a", 1, 1},
    {"[abc", 4, "b", 1, 1},
    {"[abc", 4, "d", 1, 0},
    {"[abc", 4, "[", 1, 0},
    {"[abc", 4, "ab", 2, 0},
    {"a[", 2, "a", 1, 0},
    {"a[", 2, "a[", 2, 0},
    {"[^", 2, "x", 1, 1},
    {"[^", 2, "", 0, 0},
    {"[^]", 3, "x", 1, 1},
    {"[]", 2, "x", 1, 0},
    {"[]]", 3, "]", 1, 0},
    {"[]a]", 4, "a", 1, 0},
    {"[]a]", 4, "]a]", 3, 0},
    {"[]a]", 4, "]", 1, 0},
    {"[a-]", 4, "a", 1, 1},
    {"[a-]", 4, "-", 1, 0},
    {"[a-]b", 5, "ab", 2, 0},
    {"[a-]b", 5, "a", 1, 1},
    {"[a-]]", 5, "]", 1, 1},
    {"[a-]]", 5, "a]", 2, 0},
    {"[\\]]", 4, "]", 1, 1},
    {"[\\]", 3, "]", 1, 1},
    {"[\\]", 3, "\\", 1, 0},
    {"[\\\\]", 4, "\\", 1, 1},
    {"[a\\-z]", 6, "-", 1, 1},
    {"[a\\-z]", 6, "m", 1, 0},
    {"[a\\-z]", 6, "z", 1, 1},
    {"\\*", 2, "*", 1, 1},
    {"\\*", 2, "a", 1, 0},
    {"a\\", 2, "a\\", 2, 1},
    {"a\\", 2, "a", 1, 0},
    {"\\", 1, "\\", 1, 1},
    {"\\\\", 2, "\\", 1, 1},
    {"\\?", 2, "?", 1, 1},
    {"\\?", 2, "a", 1, 0},
    {"*\\", 2, "ab\\", 3, 1},
    {"[-a]", 4, "-", 1, 1},
    {"[a-c-e]", 7, "d", 1, 0},
    {"[a-c-e]", 7, "-", 1, 1},
    {"[a-c-e]", 7, "e", 1, 1},
    {"[!a]", 4, "b", 1, 0},
    {"[!a]", 4, "!", 1, 1},
    {"[^a-c]", 6, "d", 1, 1},
    {"[^a-c]", 6, "b", 1, 0},
    {"*[", 2, "ab[", 3, 0},
    {"*[a", 3, "xa", 2, 1},
    {"*a*a*b", 6, "aaab", 4, 1},
    {"*a*a*b", 6, "aab", 3, 1},
    {"*a*a*b", 6, "ab", 2, 0},
    {"a*a", 3, "a", 1, 0},
    {"a*a", 3, "aa", 2, 1},
    {"[\\\\-a]", 6, "]", 1, 0},
    {"[\\\\-a]", 6, "b", 1, 0},
    {"[\x80" "-\xff" "]", 5, "\x90" "", 1, 1},
    {"[\x80" "-\xff" "]", 5, "a", 1, 0},
    {"[a-\xff" "]", 5, "b", 1, 0},
    {"[a-\xff" "]", 5, "\x90" "", 1, 0},
    {"[a-\xff" "]", 5, "0", 1, 1},
    {"[\x01" "-\xff" "]", 5, "a", 1, 0},
    {"[\x01" "-\xff" "]", 5, "\x90" "", 1, 0},
    {"[A-Z]", 5, "m", 1, 0},
    {"*\x00" "*", 3, "a\x00" "b", 3, 1},
    {"a?c", 3, "a\x00" "c", 3, 1},
    {"\xff" "", 1, "\xff" "", 1, 1},
};

static void test_oracle_table(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof(oracle) / sizeof(oracle[0]); i++) {
        int got = globMatch(oracle[i].pat, oracle[i].patlen, oracle[i].str, oracle[i].strlen, 0);
        if (got != oracle[i].match)
            fail_msg("pattern '%s' vs '%s': got %d, redis says %d", oracle[i].pat, oracle[i].str, got,
                     oracle[i].match);
    }
}

static int m(const char *pat, const char *str, int nocase) {
    return globMatch(pat, strlen(pat), str, strlen(str), nocase);
}

static void test_nocase(void **state) {
    (void)state;
    assert_true(m("HeLLo", "hello", 1));
    assert_false(m("HeLLo", "hello", 0));
    assert_true(m("h[A-C]llo", "hbllo", 1));
    assert_true(m("h[a-c]llo", "hBllo", 1));
    assert_false(m("h[a-c]llo", "hBllo", 0));
    assert_true(m("[^X]", "y", 1));
    assert_false(m("[^X]", "x", 1));
    assert_true(m("\\A*", "abc", 1));
    assert_true(m("maxmemory-p*", "MAXMEMORY-POLICY", 1));
    assert_false(m("[@]", "`", 1)); /* only letters fold */
}

/* Build `count` copies of unit followed by tail in a fresh buffer. */
static char *repeat(const char *unit, size_t count, const char *tail) {
    size_t ul = strlen(unit), tl = strlen(tail);
    char *buf = xmalloc(ul * count + tl + 1);
    for (size_t i = 0; i < count; i++) memcpy(buf + i * ul, unit, ul);
    memcpy(buf + ul * count, tail, tl + 1);
    return buf;
}

static int mRepeat(const char *unit, size_t count, const char *tail, const char *sunit, size_t scount) {
    char *pat = repeat(unit, count, tail), *str = repeat(sunit, scount, "");
    int r = m(pat, str, 0);
    xfree(pat);
    xfree(str);
    return r;
}

static void test_star_run_limit(void **state) {
    (void)state;
    /* redis-server 7.0.15 stops matching past 1000 star runs that have
     * something after them; escaped or bracketed stars do not count. */
    assert_true(mRepeat("a*", 1001, "", "a", 1200));
    assert_false(mRepeat("a*", 1002, "", "a", 1200));
    assert_true(mRepeat("*a", 1000, "", "a", 1200));
    assert_false(mRepeat("*a", 1001, "", "a", 1200));
    assert_true(mRepeat("?*", 1001, "", "a", 1200));
    assert_false(mRepeat("?*", 1002, "", "a", 1200));
    assert_true(mRepeat("*", 1002, "a", "a", 1200));
    assert_true(mRepeat("a", 1002, "*", "a", 3000));
    assert_true(mRepeat("a\\*", 1500, "*", "a*", 1500));
    assert_true(mRepeat("a[*]", 1500, "", "a*", 1500));
    assert_true(mRepeat("*[*]", 1000, "", "a*", 1500));
    assert_false(mRepeat("*[*]", 1001, "", "a*", 1500));
}

static void test_pathological(void **state) {
    (void)state;
    /* A naive backtracking matcher takes exponential time on these; the
     * test just has to finish with the right answers. */
    char *str = repeat("a", 10000, "");
    const char *pat = "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    assert_false(m(pat, str, 0));
    assert_false(m("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", str, 1));
    assert_true(m("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", str, 0));
    assert_false(m("*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*[^a]", str, 0));
    char *many = repeat("*a", 900, "b");
    for (int i = 0; i < 5; i++) assert_false(m(many, str, 0));
    str[9999] = 'b';
    assert_true(m(pat, str, 0));
    assert_true(m(many, str, 0));
    xfree(many);
    xfree(str);
}

static void test_binary_safe(void **state) {
    (void)state;
    assert_true(globMatch("a\0*", 3, "a\0bc", 4, 0));
    assert_false(globMatch("a\0*", 3, "a", 1, 0));
    assert_true(globMatch("[\0]", 3, "\0", 1, 0));
    /* Lengths are honoured: the bytes past patlen/strlen are not read. */
    assert_true(globMatch("ab*", 2, "abc", 2, 0));
    assert_false(globMatch("ab*", 2, "abc", 3, 0));
    assert_true(globMatch("", 0, "", 0, 0));
    assert_false(globMatch("", 0, "x", 1, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_table), cmocka_unit_test(test_nocase),
        cmocka_unit_test(test_star_run_limit), cmocka_unit_test(test_pathological),
        cmocka_unit_test(test_binary_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
