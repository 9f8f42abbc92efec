/* test_sds.c -- unit tests for src/ds/sds.c.
 *
 * Split-args expectations were taken from redis-server 7.0.15 inline
 * commands (e.g. `ECHO "a"b` -> unbalanced quotes, `ECHO "\x4g"` -> "x4g"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/sds.h"

static int typeOfSds(const sds s) { return (unsigned char)s[-1] & SDS_TYPE_MASK; }

/* Length, bytes and terminator in one check. */
static void expectSds(const sds s, const char *bytes, size_t len) {
    assert_int_equal(sdsLen(s), len);
    assert_memory_equal(s, bytes, len);
    assert_int_equal(s[len], '\0');
}

static void test_new_and_free(void **state) {
    (void)state;
    sds s = sdsNew("hello");
    expectSds(s, "hello", 5);
    assert_int_equal(typeOfSds(s), SDS_TYPE_8);
    sdsFree(s);

    s = sdsNewLen("a\0b", 3);
    expectSds(s, "a\0b", 3);
    sdsFree(s);

    s = sdsNewLen(NULL, 4);
    expectSds(s, "\0\0\0\0", 4);
    sdsFree(s);

    s = sdsEmpty();
    expectSds(s, "", 0);
    sdsFree(s);

    s = sdsNew(NULL);
    expectSds(s, "", 0);
    sds d = sdsDup(s);
    expectSds(d, "", 0);
    sdsFree(s);
    sdsFree(d);
    sdsFree(NULL);
}

static void test_header_transitions(void **state) {
    (void)state;
    static const struct {
        size_t len;
        int type;
    } cases[] = {
        {0, SDS_TYPE_8},     {255, SDS_TYPE_8},     {256, SDS_TYPE_16},
        {65535, SDS_TYPE_16}, {65536, SDS_TYPE_32}, {1 << 20, SDS_TYPE_32},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sds s = sdsNewLen(NULL, cases[i].len);
        assert_int_equal(sdsLen(s), cases[i].len);
        assert_int_equal(typeOfSds(s), cases[i].type);
        assert_true(sdsAllocSize(s) >= cases[i].len + 1 + 3);
        assert_ptr_equal(sdsAllocPtr(s), s - (cases[i].type == SDS_TYPE_8    ? 3
                                              : cases[i].type == SDS_TYPE_16 ? 5
                                                                              : 9));
        sdsFree(s);
    }
    /* Growing across each boundary keeps the contents. */
    sds s = sdsEmpty();
    for (int i = 0; i < 70000; i++) {
        char c = (char)('a' + i % 26);
        s = sdsCatLen(s, &c, 1);
    }
    assert_int_equal(sdsLen(s), 70000);
    assert_int_equal(typeOfSds(s), SDS_TYPE_32);
    for (int i = 0; i < 70000; i++) assert_int_equal(s[i], 'a' + i % 26);
    assert_int_equal(s[70000], '\0');
    /* Shrinking to fit moves back to a narrow header. */
    sdsRange(s, 0, 9);
    s = sdsRemoveFreeSpace(s);
    expectSds(s, "abcdefghij", 10);
    assert_int_equal(typeOfSds(s), SDS_TYPE_8);
    assert_true(sdsAllocSize(s) < 64);
    sdsFree(s);
}

static void test_header_64bit(void **state) {
    (void)state;
    /* 4 GB + 1: only the 64-bit header can describe it.  The pages are never
     * touched beyond the ends, so this is cheap on Linux overcommit. */
    size_t big = ((size_t)1 << 32) + 1;
    sds s = sdsEmpty();
    s = sdsMakeRoomForNonGreedy(s, big);
    assert_int_equal(typeOfSds(s), SDS_TYPE_64);
    assert_true(sdsAvail(s) >= big);
    sdsSetLen(s, big);
    assert_int_equal(sdsLen(s), big);
    s[0] = 'x';
    sdsSetLen(s, 1);
    s = sdsRemoveFreeSpace(s);
    expectSds(s, "x", 1);
    assert_int_equal(typeOfSds(s), SDS_TYPE_8);
    sdsFree(s);
}

/* Room from the big arena: contents kept across the type change (8-bit
 * header to 32-bit) and the growth; the string is an ordinary sds after. */
static void test_make_room_big(void **state) {
    (void)state;
    sds s = sdsNew("head");
    s = sdsMakeRoomForBig(s, 1 << 20);
    assert_true(sdsAvail(s) >= (1 << 20));
    assert_true(sdsLen(s) + sdsAvail(s) < 2 * (1 << 20));
    expectSds(s, "head", 4);
    memset(s + 4, 'x', 1000);
    sdsIncrLen(s, 1000);
    s = sdsMakeRoomForBig(s, 9 << 20);
    assert_true(sdsAvail(s) >= (9 << 20));
    assert_int_equal(sdsLen(s), 1004);
    assert_memory_equal(s, "headxxx", 7);
    assert_int_equal(s[1003], 'x');
    assert_int_equal(s[1004], '\0');
    sds same = sdsMakeRoomForBig(s, 10); /* fits: no move */
    assert_ptr_equal(same, s);
    s = sdsCatLen(s, "tail", 4);
    assert_memory_equal(s + 1004, "tail", 5);
    sdsFree(s);
}

static void test_make_room(void **state) {
    (void)state;
    sds s = sdsNew("abc");
    s = sdsMakeRoomFor(s, 100);
    assert_true(sdsAvail(s) >= 100);
    /* Greedy: room for twice the needed length below 1 MB. */
    assert_true(sdsLen(s) + sdsAvail(s) >= 2 * 103);
    expectSds(s, "abc", 3);
    size_t avail = sdsAvail(s);
    sds same = sdsMakeRoomFor(s, avail); /* already fits: no move */
    assert_ptr_equal(same, s);

    /* Direct write into the spare room, then publish with IncrLen. */
    memcpy(s + 3, "def", 3);
    sdsIncrLen(s, 3);
    expectSds(s, "abcdef", 6);
    sdsIncrLen(s, -2);
    expectSds(s, "abcd", 4);
    sdsSetLen(s, 2);
    expectSds(s, "ab", 2);
    sdsFree(s);

    s = sdsNew("abc");
    s = sdsMakeRoomForNonGreedy(s, 1000);
    assert_true(sdsAvail(s) >= 1000);
    assert_true(sdsLen(s) + sdsAvail(s) < 2 * 1003);
    sdsFree(s);

    /* Above 1 MB the growth step is 1 MB, not doubling. */
    s = sdsNewLen(NULL, 2 << 20);
    s = sdsMakeRoomFor(s, sdsAvail(s) + 1); /* the allocator may round up */
    assert_true(sdsAvail(s) >= 1 << 20);
    assert_true(sdsAvail(s) < (3 << 20));
    sdsFree(s);
}

static void test_cat_cpy(void **state) {
    (void)state;
    sds s = sdsNew("foo");
    s = sdsCat(s, "bar");
    expectSds(s, "foobar", 6);
    s = sdsCatLen(s, "\0x", 2);
    expectSds(s, "foobar\0x", 8);
    sds t = sdsNewLen("\0\1", 2);
    s = sdsCatSds(s, t);
    expectSds(s, "foobar\0x\0\1", 10);
    sdsFree(t);
    t = sdsNew("0123456789");
    for (int i = 0; i < 6; i++) t = sdsCatSds(t, t); /* self-append across growth */
    assert_int_equal(sdsLen(t), 640);
    for (int i = 0; i < 640; i++) assert_int_equal(t[i], '0' + i % 10);
    s = sdsCpy(s, "a");
    expectSds(s, "a", 1);
    s = sdsCpyLen(s, "0123456789012345678901234567890123456789", 40);
    expectSds(s, "0123456789012345678901234567890123456789", 40);
    s = sdsCpyLen(s, "", 0);
    expectSds(s, "", 0);
    sdsFree(s);
    sdsFree(t);

    s = sdsNew("ab");
    s = sdsGrowZero(s, 5);
    expectSds(s, "ab\0\0\0", 5);
    s = sdsGrowZero(s, 2); /* never shrinks */
    expectSds(s, "ab\0\0\0", 5);
    sdsFree(s);
}

static void test_printf(void **state) {
    (void)state;
    sds s = sdsCatPrintf(sdsEmpty(), "%d-%s-%lld", 42, "x", LLONG_MIN);
    assert_string_equal(s, "42-x--9223372036854775808");
    /* Longer than the internal first-try buffer. */
    char big[1000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    s = sdsCatPrintf(s, "[%s]", big);
    assert_int_equal(sdsLen(s), 25 + 2 + 999);
    assert_int_equal(s[26], 'z');
    assert_int_equal(s[sdsLen(s) - 1], ']');
    sdsFree(s);
}

static void test_from_long_long(void **state) {
    (void)state;
    static const struct {
        long long v;
        const char *text;
    } cases[] = {{0, "0"},
                 {-1, "-1"},
                 {10, "10"},
                 {LLONG_MAX, "9223372036854775807"},
                 {LLONG_MIN, "-9223372036854775808"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sds s = sdsFromLongLong(cases[i].v);
        expectSds(s, cases[i].text, strlen(cases[i].text));
        sdsFree(s);
    }
}

static void test_cat_repr(void **state) {
    (void)state;
    const char in[] = "a\\\"\n\r\t\a\b\x00\x01\x7f\x80\xff ~";
    sds s = sdsCatRepr(sdsEmpty(), in, sizeof(in) - 1);
    assert_string_equal(s, "\"a\\\\\\\"\\n\\r\\t\\a\\b\\x00\\x01\\x7f\\x80\\xff ~\"");
    sdsFree(s);
    s = sdsCatRepr(sdsNew("x="), "", 0);
    assert_string_equal(s, "x=\"\"");
    sdsFree(s);
    /* Form feed and vertical tab are not in the short-escape list. */
    s = sdsCatRepr(sdsEmpty(), "\f\v", 2);
    assert_string_equal(s, "\"\\x0c\\x0b\"");
    sdsFree(s);
}

static void expectRange(const char *in, ssize_t start, ssize_t end, const char *out) {
    sds s = sdsNew(in);
    sdsRange(s, start, end);
    expectSds(s, out, strlen(out));
    sdsFree(s);
}

static void test_range(void **state) {
    (void)state;
    expectRange("hello", 0, -1, "hello");
    expectRange("hello", 1, 3, "ell");
    expectRange("hello", -3, -1, "llo");
    expectRange("hello", -100, 1, "he");
    expectRange("hello", 2, 100, "llo");
    expectRange("hello", 3, 1, "");
    expectRange("hello", 5, 10, "");
    expectRange("hello", 4, 4, "o");
    expectRange("hello", -1, -100, "");
    expectRange("hello", -100, -100, "h");
    expectRange("", 0, -1, "");
}

static void test_trim_case_cmp(void **state) {
    (void)state;
    sds s = sdsTrim(sdsNew("xxAyBxx"), "xy");
    expectSds(s, "AyB", 3);
    s = sdsTrim(s, "AyB");
    expectSds(s, "", 0);
    sdsFree(s);
    s = sdsTrim(sdsNew("  a  "), " ");
    expectSds(s, "a", 1);
    sdsToUpper(s);
    expectSds(s, "A", 1);
    s = sdsCat(s, "bC1\xc9");
    sdsToLower(s);
    expectSds(s, "abc1\xc9", 5);
    sdsToUpper(s);
    expectSds(s, "ABC1\xc9", 5);
    sdsClear(s);
    expectSds(s, "", 0);
    sdsFree(s);

    sds a = sdsNew("abc"), b = sdsNew("abd"), c = sdsNew("ab"), d = sdsNewLen("abc\0", 4);
    assert_true(sdsCmp(a, b) < 0);
    assert_true(sdsCmp(b, a) > 0);
    assert_true(sdsCmp(c, a) < 0);
    assert_true(sdsCmp(a, c) > 0);
    assert_true(sdsCmp(a, d) < 0);
    sds a2 = sdsDup(a);
    assert_int_equal(sdsCmp(a, a2), 0);
    sdsFree(a);
    sdsFree(b);
    sdsFree(c);
    sdsFree(d);
    sdsFree(a2);
}

static void test_resize(void **state) {
    (void)state;
    sds s = sdsNew("abcdef");
    s = sdsResize(s, 1000);
    assert_true(sdsAvail(s) >= 994);
    assert_int_equal(typeOfSds(s), SDS_TYPE_16);
    expectSds(s, "abcdef", 6);
    s = sdsResize(s, 3);
    expectSds(s, "abc", 3);
    assert_int_equal(typeOfSds(s), SDS_TYPE_8);
    sdsFree(s);
}

static void test_split_len(void **state) {
    (void)state;
    int n;
    sds *t = sdsSplitLen("a,b,,c", 6, ",", 1, &n);
    assert_int_equal(n, 4);
    assert_string_equal(t[0], "a");
    assert_string_equal(t[1], "b");
    assert_string_equal(t[2], "");
    assert_string_equal(t[3], "c");
    sdsFreeSplitRes(t, n);

    t = sdsSplitLen("--x--", 5, "--", 2, &n);
    assert_int_equal(n, 3);
    assert_string_equal(t[0], "");
    assert_string_equal(t[1], "x");
    assert_string_equal(t[2], "");
    sdsFreeSplitRes(t, n);

    t = sdsSplitLen("abc", 3, "abcd", 4, &n);
    assert_int_equal(n, 1);
    assert_string_equal(t[0], "abc");
    sdsFreeSplitRes(t, n);

    t = sdsSplitLen("", 0, ",", 1, &n);
    assert_non_null(t);
    assert_int_equal(n, 0);
    sdsFreeSplitRes(t, n);

    assert_null(sdsSplitLen("a", 1, "", 0, &n));
    assert_int_equal(n, 0);
    assert_null(sdsSplitLen("a", -1, ",", 1, &n));
    sdsFreeSplitRes(NULL, 0);
}

/* Split `line` and compare with the NULL-terminated list `want` (each entry
 * given with its length so NULs can be expected). */
static void expectArgs(const char *line, int count, const char *const *want, const size_t *lens) {
    int n = -1;
    sds *t = sdsSplitArgs(line, &n);
    assert_non_null(t);
    assert_int_equal(n, count);
    for (int i = 0; i < n; i++) {
        assert_int_equal(sdsLen(t[i]), lens[i]);
        assert_memory_equal(t[i], want[i], lens[i]);
    }
    sdsFreeSplitRes(t, n);
}

static void expectArgsError(const char *line) {
    int n = -1;
    assert_null(sdsSplitArgs(line, &n));
    assert_int_equal(n, 0);
}

static void test_split_args(void **state) {
    (void)state;
    {
        const char *w[] = {"SET", "a b", "c"};
        const size_t l[] = {3, 3, 1};
        expectArgs("SET \"a b\" c", 3, w, l);
        expectArgs("  SET\t\"a b\"   c \r\n", 3, w, l);
    }
    {
        const char *w[] = {"ECHO", "A"};
        const size_t l[] = {4, 1};
        expectArgs("ECHO \"\\x41\"", 2, w, l);
    }
    {
        /* \x needs two hex digits, else the backslash just drops. */
        const char *w[] = {"x4", "x4g", "\xff\n"};
        const size_t l[] = {2, 3, 2};
        expectArgs("\"\\x4\" \"\\x4g\" \"\\xff\\x0A\"", 3, w, l);
    }
    {
        const char *w[] = {"q\n\t\b\a\\\"\r"};
        const size_t l[] = {8};
        expectArgs("\"\\q\\n\\t\\b\\a\\\\\\\"\\r\"", 1, w, l);
    }
    {
        const char *w[] = {"it's", "a\\nb", ""};
        const size_t l[] = {4, 4, 0};
        expectArgs("'it\\'s' 'a\\nb' ''", 3, w, l);
    }
    {
        /* A quote may open mid-token. */
        const char *w[] = {"ab c", "ab c"};
        const size_t l[] = {4, 4};
        expectArgs("a\"b c\" a'b c'", 2, w, l);
    }
    {
        const char *w[] = {"", "\0", "a\vb"};
        const size_t l[] = {0, 1, 3};
        expectArgs("\"\" \"\\x00\" a\vb", 3, w, l);
    }
    {
        /* \v and \f end a quoted token (isspace) but not a bare one. */
        const char *w[] = {"a", "b"};
        const size_t l[] = {1, 1};
        expectArgs("\"a\"\v b", 2, w, l);
    }
    expectArgs("", 0, NULL, NULL);
    expectArgs("   \t\r\n", 0, NULL, NULL);

    expectArgsError("ECHO \"a\"b");
    expectArgsError("ECHO 'a'b");
    expectArgsError("ECHO ab\"c\"d");
    expectArgsError("ECHO \"abc");
    expectArgsError("ECHO 'abc");
    expectArgsError("ECHO \"\\\"");
    expectArgsError("ECHO \"\\");
    expectArgsError("a b \"c");
}

static void test_join(void **state) {
    (void)state;
    char *argv[] = {"a", "bc", "", "d"};
    sds s = sdsJoin(argv, 4, ", ");
    assert_string_equal(s, "a, bc, , d");
    sdsFree(s);
    s = sdsJoin(argv, 0, ",");
    expectSds(s, "", 0);
    sdsFree(s);
}

/* Pins: the bytes and header stay readable while pinned; the owner's
 * disown frees at once without pins, else the last unpin frees. */
static void test_pins(void **state) {
    (void)state;
    size_t sizes[] = {10, 300, 70000, 5000000};
    size_t before = xmallocUsed();
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        sds s = sdsNewLen(NULL, sizes[i]);
        size_t cap = sdsCap(s);
        assert_false(sdsIsPinned(s));
        for (int p = 0; p < SDS_PIN_MAX; p++) assert_int_equal(sdsPin(s), 0);
        assert_int_equal(sdsPin(s), -1); /* full: the caller copies */
        assert_true(sdsIsPinned(s));
        assert_int_equal(sdsLen(s), sizes[i]);
        assert_int_equal(sdsCap(s), cap);
        for (int p = 0; p < SDS_PIN_MAX; p++) sdsUnpin(s);
        assert_false(sdsIsPinned(s));
        sdsFree(s); /* no pin out: an ordinary string again */

        s = sdsNewLen("abc", 3);
        assert_int_equal(sdsPin(s), 0);
        assert_int_equal(sdsPin(s), 0);
        sdsDisown(s); /* pinned: not freed yet */
        assert_int_equal(sdsLen(s), 3);
        assert_memory_equal(s, "abc", 3);
        sdsUnpin(s);
        assert_memory_equal(s, "abc", 3);
        sdsUnpin(s); /* the last pin frees it */
    }
    sdsDisown(NULL);
    sdsDisown(sdsNew("free now"));
    assert_int_equal(xmallocUsed(), before);
}

/* The owner lets go on another thread (lazy free) while the pins go on
 * this one: each string is freed exactly once, none leaks (checked under
 * ASan/LSan: the other thread's frees are not in xmallocUsed, which
 * counts registered threads only, and a thread that exits must not be
 * registered). */
static sds raceStrings[2000];

static void *disownAll(void *arg) {
    (void)arg;
    for (int i = 0; i < 2000; i++) sdsDisown(raceStrings[i]);
    return NULL;
}

static void test_pins_across_threads(void **state) {
    (void)state;
    for (int i = 0; i < 2000; i++) {
        raceStrings[i] = sdsNewLen(NULL, 100 + (size_t)i);
        for (int p = 0; p < 1 + i % 3; p++) assert_int_equal(sdsPin(raceStrings[i]), 0);
    }
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, disownAll, NULL), 0);
    for (int i = 0; i < 2000; i++)
        for (int p = 0; p < 1 + i % 3; p++) sdsUnpin(raceStrings[i]);
    pthread_join(t, NULL);
}

static void test_no_leaks(void **state) {
    (void)state;
    size_t before = xmallocUsed();
    sds s = sdsEmpty();
    for (int i = 0; i < 1000; i++) s = sdsCatPrintf(s, "%d,", i);
    int n;
    sds *t = sdsSplitLen(s, (ssize_t)sdsLen(s), ",", 1, &n);
    assert_int_equal(n, 1001);
    sdsFreeSplitRes(t, n);
    t = sdsSplitArgs("a 'b' \"c\"", &n);
    sdsFreeSplitRes(t, n);
    assert_null(sdsSplitArgs("a 'b' \"c", &n));
    sdsFree(s);
    assert_int_equal(xmallocUsed(), before);
}

int main(void) {
    xmallocRegisterThread(); /* as the server's main() does first */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_free),     cmocka_unit_test(test_header_transitions),
        cmocka_unit_test(test_header_64bit),     cmocka_unit_test(test_make_room),
        cmocka_unit_test(test_cat_cpy),          cmocka_unit_test(test_printf),
        cmocka_unit_test(test_from_long_long),   cmocka_unit_test(test_cat_repr),
        cmocka_unit_test(test_range),            cmocka_unit_test(test_trim_case_cmp),
        cmocka_unit_test(test_resize),           cmocka_unit_test(test_split_len),
        cmocka_unit_test(test_split_args),       cmocka_unit_test(test_join),
        cmocka_unit_test(test_pins),             cmocka_unit_test(test_pins_across_threads),
        cmocka_unit_test(test_no_leaks),         cmocka_unit_test(test_make_room_big),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
