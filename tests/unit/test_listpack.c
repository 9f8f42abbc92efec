/* test_listpack.c -- unit tests for src/ds/listpack.c.
 *
 * The vec* blobs were recorded from redis-server 7.0.15 DUMP payloads by
 * tests/unit/gen_listpack_vectors.py (hash, zset and quicklist-node
 * listpacks); the tests check that they validate, iterate to the elements
 * Redis stored, and that building the same elements here gives the same
 * bytes.  Large cases are compared by size and FNV-1a 64.  The rest covers
 * each entry encoding at its edges, every mutation against an array model,
 * and corrupted input (run under ASan/UBSan to catch out-of-bounds reads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/rand.h"

/* HSET h a 1 b hello */
static const char vecHashSmall[] = "\x16\x00\x00\x00\x04\x00\x81\x61\x02\x01\x01\x81\x62\x02\x85\x68\x65\x6c\x6c\x6f\x06\xff";
/* HSET h f<i> <INTS[i]> ..., then s1 007 s2 -0 s3 +1 s4 '' s5 ' 1' s6 2^63 s7 -2^63-1 s8 1.5 */
static const char vecHashInts[] = "\x49\x01\x00\x00\x3e\x00\x82\x66\x30\x03\x00\x01\x82\x66\x31\x03\x01\x01\x82\x66\x32\x03\x7f\x01\x82\x66\x33\x03\xc0\x80\x02\x82\x66\x34\x03\xdf\xff\x02\x82\x66\x35\x03\xcf\xff\x02\x82\x66\x36\x03\xf1\x00\x10\x03\x82\x66\x37\x03\xd0\x00\x02\x82\x66\x38\x03\xf1\xff\xef\x03\x82\x66\x39\x03\xf1\xff\x7f\x03\x83\x66\x31\x30\x04\xf2\x00\x80\x00\x04\x83\x66\x31\x31\x04\xf1\x00\x80\x03\x83\x66\x31\x32\x04\xf2\xff\x7f\xff\x04\x83\x66\x31\x33\x04\xf2\xff\xff\x7f\x04\x83\x66\x31\x34\x04\xf3\x00\x00\x80\x00\x05\x83\x66\x31\x35\x04\xf2\x00\x00\x80\x04\x83\x66\x31\x36\x04\xf3\xff\xff\x7f\xff\x05\x83\x66\x31\x37\x04\xf3\xff\xff\xff\x7f\x05\x83\x66\x31\x38\x04\xf4\x00\x00\x00\x80\x00\x00\x00\x00\x09\x83\x66\x31\x39\x04\xf3\x00\x00\x00\x80\x05\x83\x66\x32\x30\x04\xf4\xff\xff\xff\x7f\xff\xff\xff\xff\x09\x83\x66\x32\x31\x04\xf4\xff\xff\xff\xff\xff\xff\xff\x7f\x09\x83\x66\x32\x32\x04\xf4\x00\x00\x00\x00\x00\x00\x00\x80\x09\x82\x73\x31\x03\x83\x30\x30\x37\x04\x82\x73\x32\x03\x82\x2d\x30\x03\x82\x73\x33\x03\x82\x2b\x31\x03\x82\x73\x34\x03\x80\x01\x82\x73\x35\x03\x82\x20\x31\x03\x82\x73\x36\x03\x93\x39\x32\x32\x33\x33\x37\x32\x30\x33\x36\x38\x35\x34\x37\x37\x35\x38\x30\x38\x14\x82\x73\x37\x03\x94\x2d\x39\x32\x32\x33\x33\x37\x32\x30\x33\x36\x38\x35\x34\x37\x37\x35\x38\x30\x39\x15\x82\x73\x38\x03\x83\x31\x2e\x35\x04\xff";
/* {string length, total bytes, FNV-1a 64} of HSET h f <'x' * length> */
static const struct { size_t len; size_t bytes; uint64_t fnv; } vecHashStr[] = {
    {0, 12, 0xb47fa01583968192ULL},
    {1, 13, 0x2bc452c9060c635fULL},
    {63, 75, 0xdac3235789ccddd9ULL},
    {64, 77, 0x3c22dfb85e6de026ULL},
    {125, 138, 0xeb2d68fcf9cf5edfULL},
    {126, 140, 0x9e4520d2b84aff66ULL},
    {4095, 4109, 0xd272004f900e9113ULL},
    {4096, 4113, 0x07160ac9cca419c1ULL},
    {16377, 16394, 0x0b138f7696ca5b3aULL},
    {16378, 16396, 0xed1e2bb7fbb132e6ULL},
    {16379, 16397, 0xe9ee70f5dcac8b1bULL},
    {2097145, 2097163, 0x26fcf8cbb50a1db3ULL},
    {2097146, 2097165, 0x3ce7e845aa780129ULL},
    {2097147, 2097166, 0x638870c2f8f8720bULL},
};
/* {pairs, total bytes, FNV-1a 64} of HSET h <i> <i*3> for i in 0..pairs-1 */
static const struct { long pairs; size_t bytes; uint64_t fnv; } vecHashMany[] = {
    {32767, 278354, 0x8d0252e0818da1a6ULL}, /* header count 65534 */
    {32768, 278363, 0x022246520a6c32afULL}, /* header count 65535 */
    {40000, 350683, 0x3e5aaa7349c8b02aULL}, /* header count 65535 */
};
/* ZADD z 1.5 a 2 b -3 c */
static const char vecZset[] = "\x1a\x00\x00\x00\x06\x00\x81\x63\x02\xdf\xfd\x02\x81\x61\x02\x83\x31\x2e\x35\x04\x81\x62\x02\x02\x01\xff";
/* RPUSH l a b 1 -2 'hello world' (the one packed quicklist node) */
static const char vecList[] = "\x1f\x00\x00\x00\x05\x00\x81\x61\x02\x81\x62\x02\x01\x01\xdf\xfe\x02\x8b\x68\x65\x6c\x6c\x6f\x20\x77\x6f\x72\x6c\x64\x0c\xff";

#define VEC(v) ((const unsigned char *)(v)), (sizeof(v) - 1)

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* A heap copy of exactly n bytes, so ASan flags any read past the end. */
static unsigned char *heapCopy(const unsigned char *src, size_t n) {
    unsigned char *p = xmalloc(n);
    memcpy(p, src, n);
    return p;
}

static unsigned char *appendStr(unsigned char *lp, const char *s) {
    return lpAppend(lp, (const unsigned char *)s, strlen(s));
}

/* Assert the element at p has exactly text s. */
static void assertElem(unsigned char *p, const char *s, size_t slen) {
    unsigned char buf[LP_INTBUF_SIZE];
    unsigned int len;
    assert_non_null(p);
    unsigned char *v = lpGetValue(p, &len, buf, NULL, NULL);
    if (len != slen || memcmp(v, s, slen) != 0) {
        fprintf(stderr, "element '%.*s' expected '%.*s'\n", (int)len, v, (int)slen, s);
        fail();
    }
}

/* Check lp holds exactly elems[0..n) both ways and by index. */
static void assertElems(unsigned char *lp, const char *const *elems, size_t n) {
    assert_int_equal(lpLength(lp), n);
    unsigned char *p = lpFirst(lp);
    for (size_t i = 0; i < n; i++) {
        assertElem(p, elems[i], strlen(elems[i]));
        p = lpNext(lp, p);
    }
    assert_null(p);
    p = lpLast(lp);
    for (size_t i = n; i-- > 0;) {
        assertElem(p, elems[i], strlen(elems[i]));
        assert_ptr_equal(lpSeek(lp, (long)i), p);
        assert_ptr_equal(lpSeek(lp, (long)i - (long)n), p);
        p = lpPrev(lp, p);
    }
    assert_null(p);
}

/* Validate an oracle blob, compare its elements, rebuild it byte for byte. */
static void checkOracle(const unsigned char *blob, size_t n, const char *const *elems, size_t count) {
    unsigned char *lp = heapCopy(blob, n);
    assert_int_equal(lpValidateIntegrity(lp, n, 0), 1);
    assert_int_equal(lpValidateIntegrity(lp, n, 1), 1);
    assert_int_equal(lpBytes(lp), n);
    assertElems(lp, elems, count);
    unsigned char *mine = lpNew(0);
    for (size_t i = 0; i < count; i++) mine = appendStr(mine, elems[i]);
    assert_int_equal(lpBytes(mine), n);
    assert_memory_equal(mine, blob, n);
    lpFree(mine);
    lpFree(lp);
}

static void test_oracle_small(void **state) {
    (void)state;
    static const char *const small[] = {"a", "1", "b", "hello"};
    checkOracle(VEC(vecHashSmall), small, 4);
    static const char *const zset[] = {"c", "-3", "a", "1.5", "b", "2"};
    checkOracle(VEC(vecZset), zset, 6);
    static const char *const list[] = {"a", "b", "1", "-2", "hello world"};
    checkOracle(VEC(vecList), list, 5);
}

static const char *const INTS[] = {"0", "1", "127", "128", "-1", "4095", "4096", "-4096", "-4097", "32767",
                                   "32768", "-32768", "-32769", "8388607", "8388608", "-8388608",
                                   "-8388609", "2147483647", "2147483648", "-2147483648", "-2147483649",
                                   "9223372036854775807", "-9223372036854775808"};
#define NINTS (sizeof(INTS) / sizeof(INTS[0]))

static void test_oracle_ints(void **state) {
    (void)state;
    static const char *const tail[] = {"s1", "007", "s2", "-0", "s3", "+1", "s4", "",
                                       "s5", " 1",  "s6", "9223372036854775808",
                                       "s7", "-9223372036854775809", "s8", "1.5"};
    const char *elems[2 * NINTS + 16];
    char names[NINTS][8];
    size_t n = 0;
    for (size_t i = 0; i < NINTS; i++) {
        snprintf(names[i], sizeof(names[i]), "f%zu", i);
        elems[n++] = names[i];
        elems[n++] = INTS[i];
    }
    for (size_t i = 0; i < 16; i++) elems[n++] = tail[i];
    checkOracle(VEC(vecHashInts), elems, n);
}

static void test_oracle_long_strings(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof(vecHashStr) / sizeof(vecHashStr[0]); k++) {
        size_t len = vecHashStr[k].len;
        unsigned char *s = xmalloc(len + 1);
        memset(s, 'x', len);
        unsigned char *lp = lpNew(0);
        lp = appendStr(lp, "f");
        lp = lpAppend(lp, s, len);
        assert_int_equal(lpBytes(lp), vecHashStr[k].bytes);
        assert_true(fnv1a(lp, lpBytes(lp)) == vecHashStr[k].fnv);
        assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
        /* Walk back over the long entry's backlen. */
        unsigned char *last = lpLast(lp);
        assertElem(lpPrev(lp, last), "f", 1);
        unsigned int vlen;
        unsigned char *v = lpGetValue(last, &vlen, NULL, NULL, NULL);
        assert_int_equal(vlen, len);
        assert_memory_equal(v, s, len);
        lpFree(lp);
        xfree(s);
    }
}

/* HSET h <i> <i*3> for i < pairs, built in chunks joined by lpMerge (one
 * growing listpack would cost quadratic copying under ASan). */
static unsigned char *buildMany(long pairs) {
    unsigned char *lp = lpNew(0);
    char buf[32];
    for (long start = 0; start < pairs; start += 1000) {
        unsigned char *chunk = lpNew(0);
        for (long i = start; i < pairs && i < start + 1000; i++) {
            int n = snprintf(buf, sizeof(buf), "%ld", i);
            chunk = lpAppend(chunk, (unsigned char *)buf, (size_t)n);
            chunk = lpAppendInteger(chunk, i * 3);
        }
        lp = lpMerge(&lp, &chunk);
    }
    return lp;
}

/* The 65535 "count it" rule, against Redis's bytes. */
static void test_oracle_many(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof(vecHashMany) / sizeof(vecHashMany[0]); k++) {
        long pairs = vecHashMany[k].pairs;
        unsigned char *lp = buildMany(pairs);
        assert_int_equal(lpBytes(lp), vecHashMany[k].bytes);
        assert_true(fnv1a(lp, lpBytes(lp)) == vecHashMany[k].fnv);
        assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
        assert_int_equal(lpLength(lp), (unsigned long)pairs * 2);
        char want[32];
        int wn = snprintf(want, sizeof(want), "%ld", (pairs - 1) * 3);
        assertElem(lpSeek(lp, -1), want, (size_t)wn);
        wn = snprintf(want, sizeof(want), "%ld", pairs - 1);
        assertElem(lpSeek(lp, -2), want, (size_t)wn);
        assertElem(lpSeek(lp, pairs * 2 - 2), want, (size_t)wn);
        assert_null(lpSeek(lp, pairs * 2));
        /* Deleting back under 65535 makes the header exact again. */
        unsigned long n = (unsigned long)pairs * 2;
        if (n > 65537) { /* one big cut, then single steps across 65535 */
            lp = lpDeleteRange(lp, 1000, n - 65537);
            n = 65537;
            assert_int_equal(lp[4] | lp[5] << 8, 65535);
            assert_int_equal(lpLength(lp), n);
        }
        while (n > 65533) {
            lp = lpDeleteRange(lp, 0, 1);
            n--;
            unsigned hdr = lp[4] | lp[5] << 8;
            assert_int_equal(hdr, n >= 65535 ? 65535 : n);
            assert_int_equal(lpLength(lp), n);
        }
        assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
        lpFree(lp);
    }
}

/* Encoded entry sizes (encoding+data, backlen is 1 for all of these). */
static void test_int_encodings(void **state) {
    (void)state;
    static const struct {
        long long v;
        size_t encsize;
        unsigned char first;
    } cases[] = {
        {0, 1, 0x00},           {127, 1, 0x7f},          {128, 2, 0xc0},         {-1, 2, 0xdf},
        {4095, 2, 0xcf},        {4096, 3, 0xf1},         {-4096, 2, 0xd0},       {-4097, 3, 0xf1},
        {32767, 3, 0xf1},       {32768, 4, 0xf2},        {-32768, 3, 0xf1},      {-32769, 4, 0xf2},
        {8388607, 4, 0xf2},     {8388608, 5, 0xf3},      {-8388608, 4, 0xf2},    {-8388609, 5, 0xf3},
        {INT32_MAX, 5, 0xf3},   {2147483648LL, 9, 0xf4}, {INT32_MIN, 5, 0xf3},   {-2147483649LL, 9, 0xf4},
        {LLONG_MAX, 9, 0xf4},   {LLONG_MIN, 9, 0xf4},    {-4095, 2, 0xd0},       {1000, 2, 0xc3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[32];
        int tn = snprintf(text, sizeof(text), "%lld", cases[i].v);
        for (int viaText = 0; viaText < 2; viaText++) {
            unsigned char *lp = lpNew(0);
            lp = appendStr(lp, "x"); /* so the entry is not first */
            lp = viaText ? lpAppend(lp, (unsigned char *)text, (size_t)tn) : lpAppendInteger(lp, cases[i].v);
            lp = appendStr(lp, "y");
            assert_int_equal(lpBytes(lp), 7 + 3 + cases[i].encsize + 1 + 3);
            unsigned char *p = lpSeek(lp, 1);
            assert_int_equal(p[0], cases[i].first);
            int isInt = 0;
            long long v = 0;
            unsigned char buf[LP_INTBUF_SIZE];
            unsigned int len;
            unsigned char *s = lpGetValue(p, &len, buf, &isInt, &v);
            assert_int_equal(isInt, 1);
            assert_true(v == cases[i].v);
            assert_int_equal(len, (unsigned)tn);
            assert_memory_equal(s, text, len);
            /* intbuf NULL: value only. */
            v = 0;
            assert_null(lpGetValue(p, &len, NULL, &isInt, &v));
            assert_true(v == cases[i].v);
            assert_int_equal(lpCompare(p, (unsigned char *)text, (size_t)tn), 1);
            assert_ptr_equal(lpPrev(lp, lpLast(lp)), p);
            assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
            lpFree(lp);
        }
    }
}

static void test_string_encodings(void **state) {
    (void)state;
    static const struct {
        size_t len;
        size_t entry; /* encoding+data+backlen */
    } cases[] = {{0, 2},        {1, 3},        {63, 65},      {64, 67},       {125, 128},
                 {126, 130},    {4095, 4099},  {4096, 4103},  {16377, 16384}, {16378, 16386},
                 {100000, 100008}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *s = xmalloc(cases[i].len + 1);
        for (size_t j = 0; j < cases[i].len; j++) s[j] = (unsigned char)('a' + j % 26);
        unsigned char *lp = lpPrepend(lpNew(0), s, cases[i].len);
        lp = lpPrepend(lp, (unsigned char *)"head", 4);
        assert_int_equal(lpBytes(lp), 7 + 6 + cases[i].entry);
        unsigned char *p = lpLast(lp);
        int isInt = 7;
        unsigned int len;
        unsigned char *v = lpGetValue(p, &len, NULL, &isInt, NULL);
        assert_int_equal(isInt, 0);
        assert_int_equal(len, cases[i].len);
        if (len) assert_memory_equal(v, s, len);
        assert_int_equal(lpCompare(p, s, cases[i].len), 1);
        assertElem(lpPrev(lp, p), "head", 4);
        assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
        lpFree(lp);
        xfree(s);
    }
    /* Integer-looking strings that are not canonical stay strings. */
    static const char *const notInts[] = {"007", "-0", "+1", " 1", "1 ", "", "9223372036854775808",
                                          "-9223372036854775809", "1.0", "0x10", "-"};
    for (size_t i = 0; i < sizeof(notInts) / sizeof(notInts[0]); i++) {
        unsigned char *lp = appendStr(lpNew(0), notInts[i]);
        int isInt = 7;
        unsigned int len;
        lpGetValue(lpFirst(lp), &len, NULL, &isInt, NULL);
        assert_int_equal(isInt, 0);
        assert_int_equal(lpCompare(lpFirst(lp), (unsigned char *)notInts[i], strlen(notInts[i])), 1);
        lpFree(lp);
    }
}

static void test_basic_ops(void **state) {
    (void)state;
    unsigned char *lp = lpNew(64);
    assert_int_equal(lpBytes(lp), 7);
    assert_int_equal(lpLength(lp), 0);
    assert_null(lpFirst(lp));
    assert_null(lpLast(lp));
    assert_null(lpSeek(lp, 0));
    assert_null(lpSeek(lp, -1));
    assert_null(lpRandom(lp));
    assert_int_equal(lpValidateIntegrity(lp, 7, 1), 1);

    lp = appendStr(lp, "b");
    lp = appendStr(lp, "d");
    lp = lpPrepend(lp, (unsigned char *)"a", 1);
    unsigned char *p, *np;
    lp = lpInsert(lp, (unsigned char *)"c", 1, lpSeek(lp, 1), LP_AFTER, &np);
    assertElem(np, "c", 1);
    lp = lpInsert(lp, (unsigned char *)"e", 1, NULL, LP_AFTER, &np);
    assertElem(np, "e", 1);
    lp = lpInsert(lp, (unsigned char *)"-1", 2, lpFirst(lp), LP_BEFORE, &np);
    assert_ptr_equal(np, lpFirst(lp));
    static const char *const e1[] = {"-1", "a", "b", "c", "d", "e"};
    assertElems(lp, e1, 6);
    assert_null(lpSeek(lp, 6));
    assert_null(lpSeek(lp, -7));
    assert_null(lpSeek(lp, LONG_MIN));
    assert_null(lpSeek(lp, LONG_MAX));

    /* Replace with bigger, smaller, string <-> integer. */
    p = lpSeek(lp, 2);
    lp = lpReplace(lp, &p, (unsigned char *)"a much longer value", 19);
    assertElem(p, "a much longer value", 19);
    p = lpSeek(lp, 0);
    lp = lpReplace(lp, &p, (unsigned char *)"1234567", 7);
    assertElem(lpNext(lp, p), "a", 1);
    p = lpSeek(lp, -1);
    lp = lpReplace(lp, &p, (unsigned char *)"", 0);
    static const char *const e2[] = {"1234567", "a", "a much longer value", "c", "d", ""};
    assertElems(lp, e2, 6);

    /* Delete in the middle, at the end. */
    lp = lpDelete(lp, lpSeek(lp, 2), &np);
    assertElem(np, "c", 1);
    lp = lpDelete(lp, lpLast(lp), &np);
    assert_null(np);
    static const char *const e3[] = {"1234567", "a", "c", "d"};
    assertElems(lp, e3, 4);
    assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);

    /* Insert a value read from the listpack itself (aliasing). */
    unsigned int len;
    unsigned char *v = lpGetValue(lpSeek(lp, 2), &len, NULL, NULL, NULL);
    lp = lpInsert(lp, v, len, lpFirst(lp), LP_BEFORE, NULL);
    lp = lpAppend(lp, lpFirst(lp) + 1, 1);
    static const char *const e4[] = {"c", "1234567", "a", "c", "d", "c"};
    assertElems(lp, e4, 6);
    lpFree(lp);
}

static void test_delete_range(void **state) {
    (void)state;
    static const char *const all[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    unsigned char *lp = lpNew(0);
    for (int i = 0; i < 10; i++) lp = appendStr(lp, all[i]);
    lp = lpDeleteRange(lp, 10, 1); /* out of range: nothing */
    lp = lpDeleteRange(lp, -11, 1);
    lp = lpDeleteRange(lp, 3, 0);
    assertElems(lp, all, 10);
    lp = lpDeleteRange(lp, 2, 3);
    static const char *const a1[] = {"0", "1", "5", "6", "7", "8", "9"};
    assertElems(lp, a1, 7);
    lp = lpDeleteRange(lp, -2, 100);
    static const char *const a2[] = {"0", "1", "5", "6", "7"};
    assertElems(lp, a2, 5);
    unsigned char *p = lpSeek(lp, 1);
    lp = lpDeleteRangeWithEntry(lp, &p, 2);
    assertElem(p, "6", 1);
    static const char *const a3[] = {"0", "6", "7"};
    assertElems(lp, a3, 3);
    p = lpSeek(lp, 1);
    lp = lpDeleteRangeWithEntry(lp, &p, 50);
    assert_null(p);
    assertElems(lp, a3, 1);
    p = lpFirst(lp);
    lp = lpDeleteRangeWithEntry(lp, &p, 1);
    assert_null(p);
    assert_int_equal(lpBytes(lp), 7);
    assert_int_equal(lpLength(lp), 0);
    lpFree(lp);
}

static void test_find(void **state) {
    (void)state;
    static const char *const hash[] = {"a", "b", "b", "a", "5", "5", "x", "-7", "-7", "007", "long-field", "z"};
    unsigned char *lp = lpNew(0);
    for (size_t i = 0; i < 12; i++) lp = appendStr(lp, hash[i]);
    unsigned char *first = lpFirst(lp);
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"b", 1, 1), lpSeek(lp, 2));
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"b", 1, 0), lpSeek(lp, 1));
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"a", 1, 1), first);
    assert_ptr_equal(lpFind(lp, lpSeek(lp, 1), (unsigned char *)"a", 1, 1), lpSeek(lp, 3));
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"5", 1, 1), lpSeek(lp, 4));
    assert_ptr_equal(lpFind(lp, lpSeek(lp, 1), (unsigned char *)"5", 1, 1), lpSeek(lp, 5));
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"-7", 2, 1), lpSeek(lp, 8));
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"007", 3, 0), lpSeek(lp, 9));
    assert_ptr_equal(lpFind(lp, first, (unsigned char *)"long-field", 10, 1), lpSeek(lp, 10));
    assert_ptr_equal(lpFind(lp, lpSeek(lp, 2), (unsigned char *)"z", 1, 2), lpSeek(lp, 11));
    assert_null(lpFind(lp, first, (unsigned char *)"z", 1, 2));
    assert_null(lpFind(lp, first, (unsigned char *)"z", 1, 1));
    assert_null(lpFind(lp, first, (unsigned char *)"05", 2, 0));
    assert_null(lpFind(lp, first, (unsigned char *)"7", 1, 0));
    assert_null(lpFind(lp, first, (unsigned char *)"", 0, 0));
    assert_null(lpFind(lp, NULL, (unsigned char *)"a", 1, 0));
    assert_int_equal(lpCompare(lpSeek(lp, 4), (unsigned char *)"5", 1), 1);
    assert_int_equal(lpCompare(lpSeek(lp, 4), (unsigned char *)"05", 2), 0);
    assert_int_equal(lpCompare(lpSeek(lp, 0), (unsigned char *)"ab", 2), 0);
    lpFree(lp);
}

static void test_merge(void **state) {
    (void)state;
    static const char *const all[] = {"a", "1", "bb", "22", "ccc", "333", "dddd"};
    for (int split = 0; split <= 7; split++) {
        for (int pad = 0; pad < 2; pad++) {
            unsigned char *a = lpNew(0), *b = lpNew(0);
            for (int i = 0; i < split; i++) a = appendStr(a, all[i]);
            for (int i = split; i < 7; i++) b = appendStr(b, all[i]);
            unsigned char *fa = a, *fb = b;
            unsigned char *m = lpMerge(&fa, &fb);
            assert_true((fa == NULL) != (fb == NULL));
            assert_ptr_equal(fa ? fa : fb, m);
            assertElems(m, all, 7);
            assert_int_equal(lpValidateIntegrity(m, lpBytes(m), 1), 1);
            lpFree(m);
            (void)pad;
        }
    }
    unsigned char *x = appendStr(lpNew(0), "x"), *nul = NULL;
    assert_ptr_equal(lpMerge(&x, &nul), x);
    assert_ptr_equal(lpMerge(&nul, &x), x);
    assert_null(lpMerge(&nul, &nul));
    lpFree(x);
    /* Merged counts saturate at 65535. */
    unsigned char *a = buildMany(20000), *b = buildMany(20000);
    unsigned char *m = lpMerge(&a, &b);
    assert_int_equal(m[4] | m[5] << 8, 65535);
    assert_int_equal(lpLength(m), 80000);
    assert_int_equal(lpValidateIntegrity(m, lpBytes(m), 1), 1);
    lpFree(m);
}

/* lpHasDuplicates and the LpDupSet it is built on: pairs (step 2) and
 * single elements, integers equal to their text, tables past the inline
 * size. */
static void test_duplicates(void **state) {
    (void)state;
    unsigned char *lp = lpNew(0);
    for (int i = 0; i < 100; i++) {
        char f[32];
        int n = snprintf(f, sizeof(f), "field:%d", i);
        lp = lpAppend(lp, (unsigned char *)f, (size_t)n);
        lp = lpAppend(lp, (unsigned char *)"same", 4); /* values may repeat */
    }
    assert_false(lpHasDuplicates(lp, 2));
    assert_true(lpHasDuplicates(lp, 1));
    lp = lpAppend(lp, (unsigned char *)"field:7", 7);
    lp = lpAppend(lp, (unsigned char *)"v", 1);
    assert_true(lpHasDuplicates(lp, 2));
    lpFree(lp);
    /* 12 (an integer entry) equals "12"; 1000 distinct integers use a
     * heap table. */
    lp = lpNew(0);
    for (int i = 0; i < 1000; i++) lp = lpAppendInteger(lp, i * 7);
    assert_false(lpHasDuplicates(lp, 1));
    lp = lpAppend(lp, (unsigned char *)"6993", 4);
    assert_true(lpHasDuplicates(lp, 1));
    lpFree(lp);
    LpDupSet d;
    lpDupInit(&d, 2);
    lp = lpNew(0);
    lp = lpAppend(lp, (unsigned char *)"abcdefghijk", 11);
    lp = lpAppend(lp, (unsigned char *)"abcdefghijK", 11);
    unsigned char *p = lpFirst(lp), *q = lpNext(lp, p);
    assert_int_equal(lpDupAdd(&d, lp, p, (unsigned char *)"abcdefghijk", 11), 0);
    assert_int_equal(lpDupAdd(&d, lp, q, (unsigned char *)"abcdefghijK", 11), 0);
    assert_int_equal(lpDupAdd(&d, lp, q, (unsigned char *)"abcdefghijk", 11), 1);
    lpDupFree(&d);
    lpFree(lp);
}

static void test_misc(void **state) {
    (void)state;
    static const long long vals[] = {5, 300, -300, 70000, 10000000, 5000000000LL};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        unsigned char *lp = lpNew(0);
        for (int r = 0; r < 37; r++) lp = lpAppendInteger(lp, vals[i]);
        assert_int_equal(lpEstimateBytesRepeatedInteger(vals[i], 37), lpBytes(lp));
        lpFree(lp);
    }
    assert_int_equal(lpSafeToAdd(NULL, 1UL << 30), 1);
    assert_int_equal(lpSafeToAdd(NULL, (1UL << 30) + 1), 0);
    assert_int_equal(lpSafeToAdd(NULL, SIZE_MAX), 0);
    unsigned char *lp = lpNew(0);
    assert_int_equal(lpSafeToAdd(lp, (1UL << 30) - 7), 1);
    assert_int_equal(lpSafeToAdd(lp, (1UL << 30) - 6), 0);
    assert_int_equal(lpSafeToAdd(lp, SIZE_MAX), 0);
    /* lpRandom is uniform enough to hit every element. */
    for (int i = 0; i < 10; i++) lp = lpAppendInteger(lp, i);
    int seen[10] = {0};
    randSeed(7);
    for (int i = 0; i < 2000; i++) {
        long long v;
        unsigned int len;
        lpGetValue(lpRandom(lp), &len, NULL, NULL, &v);
        seen[v]++;
    }
    for (int i = 0; i < 10; i++) assert_true(seen[i] > 120 && seen[i] < 280);
    lpFree(lp);
}

/* ---- A listpack inside a larger block (lpSetResizer) -------------------- */

/* The host: a 24-byte header (a marker the resizer must preserve) followed
 * by the listpack, reallocated as one block. */
typedef struct {
    unsigned char *block;
    int grows, shrinks;
} Host;

#define HOST_HDR 24

static unsigned char *hostResize(void *ctx, unsigned char *lp, size_t bytes) {
    Host *h = ctx;
    assert_ptr_equal(lp, h->block + HOST_HDR);
    if (bytes > lpBytes(lp)) h->grows++;
    else h->shrinks++;
    if (HOST_HDR + bytes <= xmallocSize(h->block)) return lp;
    h->block = xrealloc(h->block, HOST_HDR + bytes);
    return h->block + HOST_HDR;
}

static void test_resizer(void **state) {
    (void)state;
    Host h = {xmalloc(HOST_HDR + LP_EMPTY_BYTES), 0, 0};
    memset(h.block, 0xAB, HOST_HDR);
    lpInitEmpty(h.block + HOST_HDR);
    assert_int_equal(lpBytes(h.block + HOST_HDR), LP_EMPTY_BYTES);
    assert_int_equal(lpValidateIntegrity(h.block + HOST_HDR, LP_EMPTY_BYTES, 1), 1);
    /* The resizer applies to every listpack changed while it is set: the
     * host's changes first, then the same on a heap listpack, which must
     * give the same bytes. */
    lpSetResizer(hostResize, &h);
    unsigned char *lp = h.block + HOST_HDR;
    char buf[64];
    for (int i = 0; i < 200; i++) {
        int n = snprintf(buf, sizeof(buf), i % 3 ? "value:%d" : "%d", i * 37);
        lp = lpAppend(lp, (unsigned char *)buf, (size_t)n);
    }
    unsigned char *p = lpSeek(lp, 10);
    lp = lpReplace(lp, &p, (unsigned char *)"replaced", 8);
    p = lpFirst(lp);
    lp = lpDeleteRangeWithEntry(lp, &p, 50);
    lpSetResizer(NULL, NULL);
    unsigned char *ref = lpNew(0);
    for (int i = 0; i < 200; i++) {
        int n = snprintf(buf, sizeof(buf), i % 3 ? "value:%d" : "%d", i * 37);
        ref = lpAppend(ref, (unsigned char *)buf, (size_t)n);
    }
    unsigned char *rp = lpSeek(ref, 10);
    ref = lpReplace(ref, &rp, (unsigned char *)"replaced", 8);
    rp = lpFirst(ref);
    ref = lpDeleteRangeWithEntry(ref, &rp, 50);
    assert_ptr_equal(lp, h.block + HOST_HDR);
    assert_true(h.grows >= 200 && h.shrinks >= 1);
    assert_int_equal(lpBytes(lp), lpBytes(ref));
    assert_memory_equal(lp, ref, lpBytes(ref));
    for (int i = 0; i < HOST_HDR; i++) assert_int_equal(h.block[i], 0xAB);
    /* Cleared: heap behaviour again. */
    ref = lpAppend(ref, (unsigned char *)"x", 1);
    assert_int_equal(lpValidateIntegrity(ref, lpBytes(ref), 1), 1);
    lpFree(ref);
    xfree(h.block);
}

/* ---- Random operations against an array model -------------------------- */

typedef struct {
    char *s;
    size_t len;
} Elem;

static void randomValue(char *buf, size_t *len) {
    static const char *const edge[] = {"0", "-0", "007", "127", "128", "-4096", "-4097", "32767", "32768",
                                       "9223372036854775807", "-9223372036854775808", "", "+5"};
    switch (randBounded(5)) {
    case 0: {
        const char *e = edge[randBounded(sizeof(edge) / sizeof(edge[0]))];
        *len = strlen(e);
        memcpy(buf, e, *len);
        break;
    }
    case 1: {
        long long v = (long long)randNext() >> randBounded(64);
        *len = (size_t)snprintf(buf, 32, "%lld", v);
        break;
    }
    case 2:
        *len = randBounded(8) == 0 ? 60 + randBounded(4100) : randBounded(70);
        for (size_t i = 0; i < *len; i++) buf[i] = (char)('a' + randBounded(26));
        break;
    default:
        *len = randBounded(20);
        for (size_t i = 0; i < *len; i++) buf[i] = (char)randBounded(256);
        break;
    }
}

static void checkModel(unsigned char *lp, Elem *m, size_t n) {
    assert_int_equal(lpValidateIntegrity(lp, lpBytes(lp), 1), 1);
    assert_int_equal(lpLength(lp), n);
    unsigned char *p = lpFirst(lp);
    for (size_t i = 0; i < n; i++) {
        assertElem(p, m[i].s, m[i].len);
        assert_int_equal(lpCompare(p, (unsigned char *)m[i].s, m[i].len), 1);
        p = lpNext(lp, p);
    }
    assert_null(p);
    p = lpLast(lp);
    for (size_t i = n; i-- > 0;) {
        assertElem(p, m[i].s, m[i].len);
        p = lpPrev(lp, p);
    }
    assert_null(p);
}

/* lpAppendItems writes the bytes one lpAppend / lpAppendInteger per item
 * would, for short and long batches, from empty and from a listpack whose
 * element count no longer fits the header. */
static void test_append_items(void **state) {
    (void)state;
    randSeed(11);
    static const char *strs[] = {"", "a", "12", "-7", "hello world", "18446744073709551616", "9223372036854775807",
                                 "0x10", " 5"};
    char big[5000];
    memset(big, 'z', sizeof(big));
    /* 66,000 elements: the header's count no longer fits */
    unsigned char *many = lpNew(0);
    LpItem ints[1000];
    for (int i = 0; i < 66; i++) {
        for (int j = 0; j < 1000; j++) ints[j] = (LpItem){NULL, 0, i * 1000 + j};
        many = lpAppendItems(many, ints, 1000);
    }
    assert_int_equal(lpLength(many), 66000);
    for (int round = 0; round < 200; round++) {
        unsigned char *a = lpNew(0), *b = lpNew(0);
        if (round % 50 == 49) {
            lpFree(a);
            lpFree(b);
            a = xmalloc(lpBytes(many));
            b = xmalloc(lpBytes(many));
            memcpy(a, many, lpBytes(many));
            memcpy(b, many, lpBytes(many));
        }
        size_t n = 1 + randBounded(round % 3 ? 12 : 60);
        LpItem items[64];
        for (size_t i = 0; i < n; i++) {
            unsigned r = (unsigned)randBounded(4);
            if (r == 0) {
                long long v = (long long)randNext() >> randBounded(64);
                items[i] = (LpItem){NULL, 0, v};
                a = lpAppendInteger(a, v);
            } else if (r == 1) {
                size_t len = randBounded(sizeof(big));
                items[i] = (LpItem){(unsigned char *)big, len, 0};
                a = lpAppend(a, (unsigned char *)big, len);
            } else {
                const char *t = strs[randBounded(sizeof(strs) / sizeof(strs[0]))];
                items[i] = (LpItem){(const unsigned char *)t, strlen(t), 0};
                a = lpAppend(a, (const unsigned char *)t, strlen(t));
            }
        }
        b = lpAppendItems(b, items, n);
        assert_int_equal(lpBytes(a), lpBytes(b));
        assert_memory_equal(a, b, lpBytes(a));
        assert_int_equal(lpValidateIntegrity(b, lpBytes(b), 1), 1);
        lpFree(a);
        lpFree(b);
    }
    lpFree(many);
}

static void test_random_model(void **state) {
    (void)state;
    randSeed(12345);
    enum { MAXN = 300 };
    Elem m[MAXN];
    size_t n = 0;
    char *buf = xmalloc(5000);
    unsigned char *lp = lpNew(0);
    for (int iter = 0; iter < 20000; iter++) {
        size_t len;
        randomValue(buf, &len);
        unsigned op = (unsigned)randBounded(8);
        if (n == MAXN || (n > 0 && op >= 5)) { /* delete */
            size_t i = randBounded(n), cnt = op == 7 ? 1 + randBounded(4) : 1;
            if (cnt > n - i) cnt = n - i;
            unsigned char *p = lpSeek(lp, (long)i), *np;
            if (cnt == 1 && randBounded(2)) {
                lp = lpDelete(lp, p, &np);
            } else if (randBounded(2)) {
                np = p;
                lp = lpDeleteRangeWithEntry(lp, &np, cnt);
            } else {
                lp = lpDeleteRange(lp, (long)i - (randBounded(2) ? (long)n : 0), cnt);
                np = lpSeek(lp, (long)i);
            }
            for (size_t k = i; k < i + cnt; k++) xfree(m[k].s);
            memmove(m + i, m + i + cnt, (n - i - cnt) * sizeof(Elem));
            n -= cnt;
            if (i < n)
                assertElem(np, m[i].s, m[i].len);
            else
                assert_null(np);
        } else if (n > 0 && op == 4) { /* replace */
            size_t i = randBounded(n);
            unsigned char *p = lpSeek(lp, (long)i - (long)n);
            lp = lpReplace(lp, &p, (unsigned char *)buf, len);
            assertElem(p, buf, len);
            xfree(m[i].s);
            m[i].s = (char *)heapCopy((unsigned char *)buf, len + 1);
            m[i].len = len;
        } else { /* insert */
            size_t i = n ? randBounded(n + 1) : 0;
            unsigned char *np = NULL;
            if (i == n)
                lp = op == 0 ? lpAppend(lp, (unsigned char *)buf, len)
                             : lpInsert(lp, (unsigned char *)buf, len, NULL, LP_BEFORE, &np);
            else if (i == 0 && op == 1)
                lp = lpPrepend(lp, (unsigned char *)buf, len);
            else if (i > 0 && randBounded(2))
                lp = lpInsert(lp, (unsigned char *)buf, len, lpSeek(lp, (long)i - 1), LP_AFTER, &np);
            else
                lp = lpInsert(lp, (unsigned char *)buf, len, lpSeek(lp, (long)i), LP_BEFORE, &np);
            if (np) assertElem(np, buf, len);
            memmove(m + i + 1, m + i, (n - i) * sizeof(Elem));
            m[i].s = (char *)heapCopy((unsigned char *)buf, len + 1);
            m[i].len = len;
            n++;
        }
        if (iter % 37 == 0 || n < 4) checkModel(lp, m, n);
        /* lpFind agrees with a linear search of the model. */
        if (n && iter % 5 == 0) {
            size_t want = randBounded(n);
            unsigned skip = (unsigned)randBounded(3);
            unsigned char *f = lpFind(lp, lpFirst(lp), (unsigned char *)m[want].s, m[want].len, skip);
            size_t k;
            for (k = 0; k < n; k += skip + 1)
                if (m[k].len == m[want].len && memcmp(m[k].s, m[want].s, m[k].len) == 0) break;
            if (k < n)
                assert_ptr_equal(f, lpSeek(lp, (long)k));
            else
                assert_null(f);
        }
    }
    checkModel(lp, m, n);
    for (size_t i = 0; i < n; i++) xfree(m[i].s);
    xfree(buf);
    lpFree(lp);
}

/* ---- Corrupt input -------------------------------------------------------- */

/* Validate bytes from an exact-size heap copy; if accepted, walking it every
 * way must stay in bounds (ASan checks). */
static int validateAndWalk(const unsigned char *bytes, size_t n) {
    unsigned char *lp = heapCopy(bytes, n);
    int ok = lpValidateIntegrity(lp, n, 1);
    if (ok) {
        unsigned long count = 0;
        unsigned char buf[LP_INTBUF_SIZE];
        unsigned int len;
        for (unsigned char *p = lpFirst(lp); p; p = lpNext(lp, p)) {
            lpGetValue(p, &len, buf, NULL, NULL);
            count++;
        }
        for (unsigned char *p = lpLast(lp); p; p = lpPrev(lp, p)) count--;
        assert_int_equal(count, 0);
        (void)lpFind(lp, lpFirst(lp), (unsigned char *)"zz", 2, 1);
    }
    assert_int_equal(lpValidateIntegrity(lp, n, 0), n >= 7 && (lp[0] | lp[1] << 8 | lp[2] << 16 |
                                                                (uint32_t)lp[3] << 24) == n && lp[n - 1] == 0xFF);
    xfree(lp);
    return ok;
}

static void setTotal(unsigned char *b, size_t n) {
    b[0] = (unsigned char)n;
    b[1] = (unsigned char)(n >> 8);
    b[2] = (unsigned char)(n >> 16);
    b[3] = (unsigned char)(n >> 24);
}

static void test_corrupt(void **state) {
    (void)state;
    static const struct {
        const unsigned char *b;
        size_t n;
    } vecs[] = {{VEC(vecHashSmall)}, {VEC(vecHashInts)}, {VEC(vecZset)}, {VEC(vecList)}};
    static const unsigned char values[] = {0x00, 0x01, 0x3f, 0x7f, 0x80, 0x81, 0xbf, 0xc0, 0xdf, 0xe0,
                                           0xe1, 0xef, 0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xfe, 0xff};
    for (size_t k = 0; k < sizeof(vecs) / sizeof(vecs[0]); k++) {
        const unsigned char *orig = vecs[k].b;
        size_t n = vecs[k].n;
        unsigned char *b = xmalloc(n + 16);
        assert_int_equal(validateAndWalk(orig, n), 1);
        /* Every byte set to every interesting value. */
        for (size_t i = 0; i < n; i++) {
            for (size_t v = 0; v < sizeof(values); v++) {
                memcpy(b, orig, n);
                b[i] = values[v];
                validateAndWalk(b, n);
            }
            /* A flipped bit in an entry's data, length or backlen is caught
             * unless it stays a well-formed entry; a flipped count or size
             * byte always is. */
            memcpy(b, orig, n);
            b[i] ^= 0x01;
            if (i < 6 || i == n - 1) assert_int_equal(validateAndWalk(b, n), 0);
        }
        /* Truncated and extended, with the header agreeing on the size. */
        for (size_t m = 0; m < n + 16; m++) {
            memcpy(b, orig, n < m ? n : m);
            if (m > n) memset(b + n, 0xFF, m - n);
            if (m >= 4) setTotal(b, m);
            if (m >= 1) b[m - 1] = 0xFF;
            int ok = validateAndWalk(b, m);
            if (m != n) assert_int_equal(ok, 0);
        }
        xfree(b);
    }
    /* Specific corruptions of HSET h a 1 b hello. */
    unsigned char b[sizeof(vecHashSmall) - 1];
    size_t n = sizeof(b);
#define MUTATE(stmt)                                                                                           \
    do {                                                                                                       \
        memcpy(b, vecHashSmall, n);                                                                            \
        stmt;                                                                                                  \
        assert_int_equal(validateAndWalk(b, n), 0);                                                            \
    } while (0)
    MUTATE(b[4] = 3);           /* count mismatch */
    MUTATE(b[4] = 5);           /* count mismatch */
    MUTATE(b[8] = 0x03);        /* backlen of "a" wrong */
    MUTATE(b[6] = 0xf5);        /* unused encoding */
    MUTATE(b[14] = 0x86);       /* "hello" length reaches the backlen */
    MUTATE(b[14] = 0xbf);       /* string length past the end */
    MUTATE(b[14] = 0xf0);       /* 32-bit string length from the data */
    MUTATE(b[14] = 0xef);       /* 12-bit string length past the end */
    MUTATE(b[n - 1] = 0x00);    /* no terminator */
    MUTATE(b[0] = (unsigned char)(n + 1)); /* total bytes */
    MUTATE(b[3] = 0x80);        /* total bytes */
    MUTATE(b[20] = 0xff);       /* terminator in place of the last backlen */
#undef MUTATE
    /* The unknown count is accepted with any number of entries. */
    memcpy(b, vecHashSmall, n);
    b[4] = b[5] = 0xff;
    unsigned char *lp = heapCopy(b, n);
    assert_int_equal(lpValidateIntegrity(lp, n, 1), 1);
    assert_int_equal(lpLength(lp), 4);
    assert_int_equal(lp[4], 4); /* and the count is cached once known */
    xfree(lp);
    assert_int_equal(lpValidateIntegrity(NULL, 0, 1), 0);
    assert_int_equal(lpValidateIntegrity(b, 6, 1), 0);
}

/* Random garbage must never be read out of bounds, and random valid
 * listpacks with one random byte changed likewise. */
static void test_corrupt_random(void **state) {
    (void)state;
    randSeed(99);
    unsigned char *b = xmalloc(4200);
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = 7 + randBounded(60);
        for (size_t i = 0; i < n; i++) b[i] = (unsigned char)randNext();
        setTotal(b, n);
        b[n - 1] = 0xFF;
        if (randBounded(2)) b[4] = b[5] = 0xFF;
        validateAndWalk(b, n);
    }
    for (int iter = 0; iter < 3000; iter++) {
        unsigned char *lp = lpNew(0);
        int cnt = (int)randBounded(12);
        for (int i = 0; i < cnt; i++) {
            char v[5000];
            size_t len;
            randomValue(v, &len);
            lp = lpAppend(lp, (unsigned char *)v, len);
        }
        size_t n = lpBytes(lp);
        memcpy(b, lp, n < 4200 ? n : 4200);
        lpFree(lp);
        if (n > 4200) continue;
        b[randBounded(n)] = (unsigned char)randNext();
        validateAndWalk(b, n);
    }
    xfree(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_small),    cmocka_unit_test(test_oracle_ints),
        cmocka_unit_test(test_oracle_long_strings), cmocka_unit_test(test_oracle_many),
        cmocka_unit_test(test_int_encodings),   cmocka_unit_test(test_string_encodings),
        cmocka_unit_test(test_basic_ops),       cmocka_unit_test(test_delete_range),
        cmocka_unit_test(test_find),            cmocka_unit_test(test_merge),
        cmocka_unit_test(test_misc),            cmocka_unit_test(test_random_model),
        cmocka_unit_test(test_resizer),         cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_append_items),
        cmocka_unit_test(test_corrupt),         cmocka_unit_test(test_corrupt_random),
    };
    /* LP_TEST_FILTER=<glob> runs a subset. */
    if (getenv("LP_TEST_FILTER")) cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
