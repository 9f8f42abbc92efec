/* test_util.c -- unit tests for src/ds/util.c.
 *
 * Every expected acceptance and every expected text below was observed on
 * redis-server 7.0.15: integers via INCRBY, doubles via ZADD/ZSCORE (skiplist
 * encoding for -0), long doubles via SET + INCRBYFLOAT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ds/util.h"

static int ll(const char *s, long long *out) { return stringToLongLong(s, strlen(s), out); }

static void test_string_to_long_long(void **state) {
    (void)state;
    static const struct {
        const char *in;
        long long v;
    } good[] = {
        {"0", 0},
        {"1", 1},
        {"-1", -1},
        {"10", 10},
        {"9223372036854775807", LLONG_MAX},
        {"-9223372036854775808", LLONG_MIN},
        {"-9223372036854775807", -LLONG_MAX},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        long long v = 42;
        assert_true(ll(good[i].in, &v));
        assert_true(v == good[i].v);
    }
    static const char *const bad[] = {
        "",      "-",     "+1",  " 1",    "1 ",   "01",     "00",  "-0",   "-01",
        "1e3",   "0x1",   "1.0", "abc",   "1a",   "--1",    "- 1", "\t1",
        "9223372036854775808",  /* LLONG_MAX + 1 */
        "-9223372036854775809", /* LLONG_MIN - 1 */
        "18446744073709551615", /* 20 digits, fits only unsigned */
        "99999999999999999999", /* 20 digits */
        "100000000000000000000", /* 21 digits */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long long v = 42;
        assert_false(ll(bad[i], &v));
        assert_true(v == 42); /* untouched on failure */
    }
    /* Only len bytes are read: no terminator needed, embedded NUL rejected. */
    long long v;
    assert_true(stringToLongLong("123456", 3, &v));
    assert_true(v == 123);
    assert_false(stringToLongLong("1\0002", 3, &v));
    assert_false(stringToLongLong(NULL, 0, &v));
}

static void test_string_to_long_and_unsigned(void **state) {
    (void)state;
    long l;
    assert_true(stringToLong("-42", 3, &l));
    assert_int_equal(l, -42);
    assert_false(stringToLong("x", 1, &l));

    unsigned long long u;
    assert_true(stringToUnsignedLongLong("18446744073709551615", 20, &u));
    assert_true(u == ULLONG_MAX);
    assert_true(stringToUnsignedLongLong("0", 1, &u));
    assert_true(u == 0);
    assert_false(stringToUnsignedLongLong("18446744073709551616", 20, &u));
    assert_false(stringToUnsignedLongLong("-1", 2, &u));
    assert_false(stringToUnsignedLongLong("+1", 2, &u));
    assert_false(stringToUnsignedLongLong("01", 2, &u));
    assert_false(stringToUnsignedLongLong("", 0, &u));
}

static int dbl(const char *s, double *out) { return stringToDouble(s, strlen(s), out); }

static void test_string_to_double(void **state) {
    (void)state;
    static const struct {
        const char *in;
        double v;
    } good[] = {
        {"1", 1},        {"1.5", 1.5},   {"-2", -2},      {"1e3", 1000},      {"1E3", 1000},
        {"0x10", 16},    {"0x1p-2", 0.25}, {".5", 0.5},   {"5.", 5},          {"+3", 3},
        {"inf", INFINITY}, {"+inf", INFINITY}, {"-inf", -INFINITY}, {"infinity", INFINITY},
        {"-Infinity", -INFINITY}, {"1.7976931348623157e308", 1.7976931348623157e308},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        double v = 42;
        assert_true(dbl(good[i].in, &v));
        assert_true(v == good[i].v);
    }
    double v;
    assert_true(dbl("-0.0", &v));
    assert_true(v == 0 && signbit(v));
    assert_true(dbl("1e-310", &v)); /* subnormal is fine */
    assert_true(v > 0);
    static const char *const bad[] = {"", " 1", "1 ", "\t1", "nan", "NaN", "-nan", "1.5abc",
                                      "1e", "-", "abc", "2e308", "1e400", "-1e400", "1e-400"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 42;
        assert_false(dbl(bad[i], &v));
        assert_true(v == 42);
    }
    assert_true(stringToDouble("2.5xyz", 3, &v));
    assert_true(v == 2.5);
    assert_false(stringToDouble("1\0002", 3, &v));
    /* Longer than the on-stack copy. */
    char longnum[300];
    memset(longnum, '0', sizeof(longnum));
    longnum[0] = '1';
    longnum[1] = '.';
    assert_true(stringToDouble(longnum, sizeof(longnum), &v));
    assert_true(v == 1);
}

/* The fast path agrees with strtod bit for bit wherever it answers. */
static void test_decimal_to_double(void **state) {
    (void)state;
    static const char *const fast[] = {"0", "-0", "1.5", "4.5", "-12.25", "0.1", "0.3", "123456789.123456",
                                       "9007199254740992", "0.0000000000000000000001", "3.14159265358979",
                                       "00012.500", "-0.0"};
    for (size_t i = 0; i < sizeof(fast) / sizeof(fast[0]); i++) {
        double v, w = strtod(fast[i], NULL);
        assert_true(decimalToDouble(fast[i], strlen(fast[i]), &v));
        assert_memory_equal(&v, &w, sizeof(v));
    }
    static const char *const slow[] = {"", "-", ".5", "5.", "+1", "1e5", "inf", "nan", " 1", "1 ", "1.2.3",
                                       "9007199254740993", "12345678901234567890", "0.00000000000000000000001",
                                       "0x10", "18446744073709551616", "36893488147419103232", "1844674407370955161.6"};
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
        double v = 42;
        assert_false(decimalToDouble(slow[i], strlen(slow[i]), &v));
        assert_true(v == 42);
    }
    /* Random short decimals. */
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char buf[64];
        int frac = (int)(x % 23);
        unsigned long long m = (x >> 8) % (1ULL << (x % 54));
        int n = snprintf(buf, sizeof(buf), "%s%llu", (x >> 63) ? "-" : "", m);
        if (frac) {
            /* Insert a point frac digits from the end (zero-padded). */
            char digits[40];
            int d = snprintf(digits, sizeof(digits), "%0*llu", frac + 1, m);
            n = snprintf(buf, sizeof(buf), "%s%.*s.%s", (x >> 63) ? "-" : "", d - frac, digits, digits + d - frac);
        }
        double v, w = strtod(buf, NULL);
        if (decimalToDouble(buf, (size_t)n, &v)) assert_memory_equal(&v, &w, sizeof(v));
    }
}

static int ldbl(const char *s, long double *out) { return stringToLongDouble(s, strlen(s), out); }

static void test_string_to_long_double(void **state) {
    (void)state;
    long double v;
    assert_true(ldbl("10.5", &v));
    assert_true(v == 10.5L);
    assert_true(ldbl("+5", &v));
    assert_true(v == 5);
    assert_true(ldbl("0x10", &v));
    assert_true(v == 16);
    /* Infinity parses; INCRBYFLOAT then refuses the infinite result. */
    assert_true(ldbl("inf", &v));
    assert_true(isinf(v) && v > 0);
    assert_true(ldbl("-inf", &v));
    assert_true(isinf(v) && v < 0);
    assert_true(ldbl("1e4900", &v)); /* beyond double, within long double */
    assert_true(ldbl("5e-4950", &v));
    static const char *const bad[] = {"", " 1", "1 ", "nan", "1e5000", "1e-5000", "abc", "1,5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 42;
        assert_false(ldbl(bad[i], &v));
        assert_true(v == 42);
    }
    static char huge[UTIL_MAX_LONG_DOUBLE_CHARS + 1];
    memset(huge, '1', sizeof(huge));
    assert_false(stringToLongDouble(huge, UTIL_MAX_LONG_DOUBLE_CHARS, &v));
    memset(huge, '0', sizeof(huge));
    assert_true(stringToLongDouble(huge, UTIL_MAX_LONG_DOUBLE_CHARS - 1, &v));
    assert_true(v == 0);
}

static void test_integer_to_string(void **state) {
    (void)state;
    char buf[UTIL_LONG_STR_SIZE];
    assert_int_equal(longLongToString(buf, sizeof(buf), 0), 1);
    assert_string_equal(buf, "0");
    assert_int_equal(longLongToString(buf, sizeof(buf), -7), 2);
    assert_string_equal(buf, "-7");
    assert_int_equal(longLongToString(buf, sizeof(buf), LLONG_MAX), 19);
    assert_string_equal(buf, "9223372036854775807");
    assert_int_equal(longLongToString(buf, sizeof(buf), LLONG_MIN), 20);
    assert_string_equal(buf, "-9223372036854775808");
    assert_int_equal(unsignedLongLongToString(buf, sizeof(buf), ULLONG_MAX), 20);
    assert_string_equal(buf, "18446744073709551615");
    /* Exactly fitting and one byte short. */
    assert_int_equal(longLongToString(buf, 3, -12), 0);
    assert_int_equal(longLongToString(buf, 4, -12), 3);
    assert_int_equal(unsignedLongLongToString(buf, 3, 100), 0);
    assert_int_equal(unsignedLongLongToString(buf, 4, 100), 3);
    assert_int_equal(longLongToString(buf, 1, -1), 0);
    assert_int_equal(longLongToString(buf, 0, 1), 0);
    /* Every power-of-ten boundary, against printf. */
    char ref[32];
    for (unsigned long long p10 = 1;; p10 *= 10) {
        unsigned long long vals[] = {p10 - 1, p10, p10 + 1, p10 * 5 + 3};
        for (int i = 0; i < 4; i++) {
            int n = unsignedLongLongToString(buf, sizeof(buf), vals[i]);
            snprintf(ref, sizeof(ref), "%llu", vals[i]);
            assert_string_equal(buf, ref);
            assert_int_equal(n, (int)strlen(ref));
            assert_int_equal(digits10(vals[i]), strlen(ref));
        }
        if (p10 > ULLONG_MAX / 10) break;
    }
    /* Round trip through the strict parser. */
    for (long long v = -1000; v <= 1000; v += 7) {
        long long back;
        int n = longLongToString(buf, sizeof(buf), v);
        assert_true(stringToLongLong(buf, (size_t)n, &back));
        assert_true(back == v);
    }
}

static void test_digits10(void **state) {
    (void)state;
    assert_int_equal(digits10(0), 1);
    assert_int_equal(digits10(9), 1);
    assert_int_equal(digits10(10), 2);
    assert_int_equal(digits10(99999), 5);
    assert_int_equal(digits10(100000), 6);
    assert_int_equal(digits10(UINT64_MAX), 20);
    assert_int_equal(digits10(10000000000000000000ULL), 20);
    assert_int_equal(digits10(9999999999999999999ULL), 19);
}

static void expectDouble(double v, const char *text) {
    char buf[UTIL_MAX_DOUBLE_CHARS];
    int n = doubleToString(buf, sizeof(buf), v);
    assert_string_equal(buf, text);
    assert_int_equal(n, (int)strlen(text));
}

static void test_double_to_string(void **state) {
    (void)state;
    /* ZADD z <v> a; ZSCORE z a on redis-server 7.0.15. */
    expectDouble(1.1, "1.1000000000000001");
    expectDouble(3, "3");
    expectDouble(1e300, "1.0000000000000001e+300");
    expectDouble(0.1 + 0.2, "0.30000000000000004");
    expectDouble(1.5e-7, "1.4999999999999999e-07");
    expectDouble(123456789012345678.0, "1.2345678901234568e+17");
    expectDouble(0.1, "0.10000000000000001");
    expectDouble(1e-310, "9.9999999999999694e-311");
    expectDouble(1.7976931348623157e308, "1.7976931348623157e+308");
    expectDouble(0.25, "0.25");
    expectDouble(INFINITY, "inf");
    expectDouble(-INFINITY, "-inf");
    expectDouble(NAN, "nan");
    /* A skiplist-encoded zset replies -0 as "-0" (listpack stores 0). */
    expectDouble(-0.0, "-0");
    /* Integers below 2^53 take a path of their own: the same text. */
    expectDouble(0.0, "0");
    expectDouble(-7, "-7");
    expectDouble(1796000000123.0, "1796000000123");
    expectDouble(-1796000000123.0, "-1796000000123");
    expectDouble(9007199254740991.0, "9007199254740991");
    expectDouble(9007199254740992.0, "9007199254740992");
    expectDouble(-9007199254740992.0, "-9007199254740992");
    expectDouble(1e16, "10000000000000000");
    expectDouble(1e17, "1e+17");
    expectDouble(1796000000123.5, "1796000000123.5");
    char small[4];
    assert_int_equal(doubleToString(small, sizeof(small), 1.5), 3);
    assert_int_equal(doubleToString(small, sizeof(small), 1.25), 0);
    assert_int_equal(doubleToString(small, sizeof(small), 123), 3);
    assert_int_equal(doubleToString(small, sizeof(small), 1234), 0);
    assert_int_equal(doubleToString(small, sizeof(small), -INFINITY), 0);
}

/* SET k <base>; INCRBYFLOAT k <incr> must reply `text`. */
static void expectIncr(const char *base, const char *incr, const char *text) {
    long double a, b;
    assert_true(stringToLongDouble(base, strlen(base), &a));
    assert_true(stringToLongDouble(incr, strlen(incr), &b));
    static char buf[UTIL_MAX_LONG_DOUBLE_CHARS];
    int n = longDoubleToString(buf, sizeof(buf), a + b, 1);
    assert_string_equal(buf, text);
    assert_int_equal(n, (int)strlen(text));
}

static void test_long_double_to_string(void **state) {
    (void)state;
    expectIncr("10.5", "0.1", "10.6");
    expectIncr("0", "3.0e3", "3000");
    expectIncr("0", "5.0e3", "5000");
    expectIncr("0", "1e-5", "0.00001");
    expectIncr("0", "1e100",
               "9999999999999999999669353532207342619498699019828496079271391541752018669482644324418977840117055488");
    expectIncr("0", "-0", "0");
    expectIncr("-0", "0", "0");
    expectIncr("0", "1.1", "1.1");
    expectIncr("0", "0.1", "0.1");
    expectIncr("0.1", "0.2", "0.3");
    expectIncr("1", "-1", "0");
    expectIncr("0", "1e17", "100000000000000000");
    expectIncr("0", "123456789.123456789", "123456789.12345678899873747");
    expectIncr("0", "3e-18", "0");
    expectIncr("0", "-3e-18", "0");
    expectIncr("0", "-1e-17", "-0.00000000000000001");
    expectIncr("0", "1e-17", "0.00000000000000001");
    expectIncr("0", "5e-18", "0");
    expectIncr("0", "-1.5", "-1.5");
    expectIncr("0", "1.0e20", "100000000000000000000");
    expectIncr("0", "2.5e-10", "0.00000000025");
    expectIncr("10", "0x10", "26");
    expectIncr("10", "+5", "15");
    expectIncr("1", "1e-4940", "1");

    static char buf[UTIL_MAX_LONG_DOUBLE_CHARS];
    long double big;
    assert_true(stringToLongDouble("1e4900", 6, &big));
    assert_int_equal(longDoubleToString(buf, sizeof(buf), big, 1), 4901);
    assert_memory_equal(buf, "10000000000000000000270831223069034983322405250407883434650293", 62);
    assert_int_equal(longDoubleToString(buf, 100, big, 1), 0);

    assert_int_equal(longDoubleToString(buf, sizeof(buf), INFINITY, 1), 3);
    assert_string_equal(buf, "inf");
    assert_int_equal(longDoubleToString(buf, sizeof(buf), -INFINITY, 0), 4);
    assert_string_equal(buf, "-inf");

    assert_int_equal(longDoubleToString(buf, sizeof(buf), 1.5L, 0), 3);
    assert_string_equal(buf, "1.5");
    longDoubleToString(buf, sizeof(buf), 1e100L, 0);
    assert_string_equal(buf, "1e+100");
    longDoubleToString(buf, sizeof(buf), 1.0L / 3, 0);
    assert_string_equal(buf, "0.33333333333333333");
}

/* The text longDoubleToString gave before its fast path: glibc's
 * "%.17Lf", trailing zeros and a bare '.' dropped, "-0" read as "0". */
static int refLongDoubleText(char *buf, size_t len, long double v) {
    int n = snprintf(buf, len, "%.17Lf", v);
    if (strchr(buf, '.')) {
        while (buf[n - 1] == '0') n--;
        if (buf[n - 1] == '.') n--;
        buf[n] = '\0';
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        buf[1] = '\0';
        n = 1;
    }
    return n;
}

/* What stringToLongDouble accepted before its fast path: strtold on the
 * whole text, no leading space, no NaN, no overflow or underflow to 0. */
static int refStringToLongDouble(const char *s, long double *out) {
    size_t len = strlen(s);
    if (len == 0 || len >= UTIL_MAX_LONG_DOUBLE_CHARS || s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) return 0;
    char *end;
    errno = 0;
    long double v = strtold(s, &end);
    if ((size_t)(end - s) != len || isnan(v) ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0.0L)))
        return 0;
    *out = v;
    return 1;
}

static unsigned long long xorshift(unsigned long long *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void expectSameText(long double v) {
    char got[UTIL_MAX_LONG_DOUBLE_CHARS], want[UTIL_MAX_LONG_DOUBLE_CHARS];
    int n = longDoubleToString(got, sizeof(got), v, 1);
    int w = refLongDoubleText(want, sizeof(want), v);
    if (n != w || strcmp(got, want) != 0) fail_msg("%La: got \"%s\", want \"%s\"", v, got, want);
}

/* The snprintf-free path prints exactly what "%.17Lf" did: dyadic values
 * m / 2^k around the k <= 17 limit, integers around 2^63, 2^64, 10^17 and
 * 10^19, -0, sums of short decimals (INCRBYFLOAT's results) and random bit
 * patterns. */
static void test_long_double_fast_text(void **state) {
    (void)state;
    static const long double edge[] = {0.0L, -0.0L, 0.5L, -0.5L, 1.0L, -1.0L, 0x1p-17L, -0x1p-17L, 0x1p-18L,
                                       0x1.8p-17L, 0x1p63L, 0x1p64L, -0x1p64L, 0x1p64L - 1, 0x1p64L - 0.5L,
                                       0x1p63L + 0.5L, 1e17L, 1e17L - 1, 1e17L + 1, 1e17L + 0.5L, 1e18L, 1e19L,
                                       99999999999999999.0L, 999999999999999999.0L, 12345678901234567.5L,
                                       123456789012345678.25L, 0.1L, 1.1L, 1e-17L, 3e-18L, 1e100L,
                                       (long double)LLONG_MAX, (long double)LLONG_MIN, (long double)ULLONG_MAX,
                                       131071.99999237060546875L, -131071.99999237060546875L};
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) expectSameText(edge[i]);
    unsigned long long x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 1000000; i++) {
        unsigned long long r = xorshift(&x);
        long double v;
        switch (i % 4) {
        case 0: { /* m / 2^k, k in 0..19, m of 1..64 bits */
            unsigned k = (unsigned)(r % 20);
            unsigned long long m = xorshift(&x) >> (r >> 58);
            v = ldexpl((long double)m, -(int)k);
            break;
        }
        case 1: { /* an integer near a power of ten or of two */
            static const long double base[] = {1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 0x1p53L, 0x1p63L, 0x1p64L};
            v = base[r % 8] + (long double)((long long)(xorshift(&x) % 2001) - 1000);
            break;
        }
        case 2: { /* a sum of short decimals, as INCRBYFLOAT makes */
            char a[32], b[32];
            long double p, q;
            snprintf(a, sizeof(a), "%lld.%llu", (long long)(r % 2000001) - 1000000, xorshift(&x) % 1000);
            snprintf(b, sizeof(b), "%llu.%llu", xorshift(&x) % 100, xorshift(&x) % 4 * 25);
            assert_true(stringToLongDouble(a, strlen(a), &p));
            assert_true(stringToLongDouble(b, strlen(b), &q));
            v = p + q;
            break;
        }
        default: { /* any finite pattern of moderate magnitude */
            v = ldexpl((long double)(xorshift(&x) | (1ULL << 63)), (int)(r % 160) - 100);
            break;
        }
        }
        if (r & (1ULL << 40)) v = -v;
        expectSameText(v);
    }
    /* Too small a buffer for "%.17Lf" still fails (0) as before. */
    char small[19];
    assert_int_equal(longDoubleToString(small, sizeof(small), 1.5L, 1), 0);
    char fits[20];
    assert_int_equal(longDoubleToString(fits, sizeof(fits), 1.5L, 1), 3);
    assert_string_equal(fits, "1.5");
}

/* decimalToLongDouble agrees with strtold wherever it answers, and
 * stringToLongDouble accepts and rejects exactly what it did before. */
static void test_decimal_to_long_double(void **state) {
    (void)state;
    static const char *const fast[] = {"0", "-0", "1.5", "-1000000000000", "1000000000000", "0.1", "-0.0",
                                       "123456789012345678", "999999999999999999", "9999999999999999999",
                                       "0.000000000000000000000000001", "00012.500", "1.234567890123456789"};
    for (size_t i = 0; i < sizeof(fast) / sizeof(fast[0]); i++) {
        long double v, w = strtold(fast[i], NULL);
        assert_true(decimalToLongDouble(fast[i], strlen(fast[i]), &v));
        assert_true(v == w && signbit(v) == signbit(w));
    }
    static const char *const slow[] = {"", "-", ".5", "5.", "+1", "1e5", "inf", "nan", " 1", "1 ", "1.2.3",
                                       "10000000000000000000", "0.0000000000000000000000000001", "0x10", "--1",
                                       "1.2345678901234567891", "18446744073709551616", "-18446744073709551616.5",
                                       "36893488147419103232", "1844674407370955161.6"};
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
        long double v = 42;
        assert_false(decimalToLongDouble(slow[i], strlen(slow[i]), &v));
        assert_true(v == 42);
    }
    unsigned long long x = 0x2545F4914F6CDD1DULL;
    static const char alphabet[] = "0123456789012345678901234567890123456789.-+e x";
    for (int i = 0; i < 1000000; i++) {
        unsigned long long r = xorshift(&x);
        char buf[48];
        size_t n = 0;
        if (i % 2 == 0) { /* [-]digits[.digits], up to 40 characters, leading zeros too */
            if (r & 1) buf[n++] = '-';
            size_t id = 1 + (r >> 1) % 22, fd = (r >> 8) % 30;
            if ((r >> 16) % 4 == 0) fd = 0;
            for (size_t j = 0; j < id; j++) buf[n++] = (char)('0' + xorshift(&x) % 10);
            if (fd) {
                buf[n++] = '.';
                for (size_t j = 0; j < fd && n < sizeof(buf) - 1; j++) buf[n++] = (char)('0' + xorshift(&x) % 10);
            }
        } else { /* short strings over digits, '.', signs, 'e', space */
            size_t l = (r % 12);
            for (size_t j = 0; j < l; j++) buf[n++] = alphabet[xorshift(&x) % (sizeof(alphabet) - 1)];
        }
        buf[n] = '\0';
        long double got = 42, want = 42, quick;
        int g = stringToLongDouble(buf, n, &got), w = refStringToLongDouble(buf, &want);
        if (g != w || !(got == want && signbit(got) == signbit(want)))
            fail_msg("\"%s\": got %d %La, want %d %La", buf, g, got, w, want);
        if (decimalToLongDouble(buf, n, &quick) && !(quick == want && signbit(quick) == signbit(want)))
            fail_msg("\"%s\": fast %La, strtold %La", buf, quick, want);
    }
}

static void test_clocks(void **state) {
    (void)state;
    long long us = ustime(), ms = mstime();
    assert_true(us > 1600000000000000LL); /* after 2020 */
    assert_true(ms >= us / 1000 && ms - us / 1000 < 1000);
    long long a = monotonicUs(), b = monotonicUs();
    assert_true(b >= a);
}

/* Pages of p[0..npages) resident now (mincore). */
static size_t residentPages(char *p, size_t npages) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[64];
    assert_true(npages <= sizeof(vec));
    assert_int_equal(mincore(p, npages * page, vec), 0);
    size_t n = 0;
    for (size_t i = 0; i < npages; i++) n += vec[i] & 1;
    return n;
}

/* prefaultRange makes exactly the pages its range touches resident, from
 * and to any byte offset, and changes no byte. */
static void test_prefault_range(void **state) {
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), npages = 40;
    char *p = mmap(NULL, npages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    assert_int_equal(residentPages(p, npages), 0);
    /* Bytes 100 of page 3 to 100 bytes before the end of page 30: pages
     * 3..30.  Page 10 holds data that must survive. */
    memset(p + 10 * page, 0x5a, page);
    prefaultRange(p + 3 * page + 100, 27 * page + page - 200);
    unsigned char vec[40];
    assert_int_equal(mincore(p, npages * page, vec), 0);
    for (size_t i = 0; i < npages; i++) assert_int_equal(vec[i] & 1, i >= 3 && i <= 30);
    for (size_t i = 0; i < page; i++) assert_int_equal((unsigned char)p[10 * page + i], 0x5a);
    for (size_t i = 3 * page; i < 31 * page; i++)
        if (i / page != 10) assert_int_equal(p[i], 0);
    /* Within one page, and an empty range. */
    prefaultRange(p + 35 * page + 7, 1);
    prefaultRange(p + 37 * page, 0);
    assert_int_equal(residentPages(p, npages), 29);
    munmap(p, npages * page);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_to_long_long),
        cmocka_unit_test(test_string_to_long_and_unsigned),
        cmocka_unit_test(test_string_to_double),
        cmocka_unit_test(test_decimal_to_double),
        cmocka_unit_test(test_string_to_long_double),
        cmocka_unit_test(test_integer_to_string),
        cmocka_unit_test(test_digits10),
        cmocka_unit_test(test_double_to_string),
        cmocka_unit_test(test_long_double_to_string),
        cmocka_unit_test(test_long_double_fast_text),
        cmocka_unit_test(test_decimal_to_long_double),
        cmocka_unit_test(test_clocks),
        cmocka_unit_test(test_prefault_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
