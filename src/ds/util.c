/* util.c -- number <-> text conversions and clocks (see util.h).
 *
 * The integer parsers are hand-written so the acceptance rule is exact and
 * independent of locale and errno.  The floating point parsers defer to
 * strtod/strtold on a NUL-terminated copy (the input need not be
 * terminated) and then apply Redis's extra rejections; short decimals take
 * an exact fast path first (decimalToDouble / decimalToLongDouble), as do
 * human-friendly long doubles whose "%.17Lf" text is exact.  Each behaviour was
 * checked against redis-server 7.0.15; see tests/unit/test_util.c. */
#include "ds/util.h"

#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ds/alloc.h"

/* Parse an unsigned decimal run "0" | [1-9][0-9]* covering all of s[0..len)
 * into *out, rejecting values above max. */
static int parseDigits(const char *s, size_t len, unsigned long long max, unsigned long long *out) {
    if (len == 0 || len > 20) return 0; /* 2^64 has 20 digits */
    if (s[0] == '0') {
        if (len != 1) return 0;
        *out = 0;
        return 1;
    }
    /* Up to 19 digits cannot overflow 64 bits (10^19 - 1 < 2^64): no
     * per-digit overflow check (a division) until the 20th. */
    unsigned long long v = 0;
    size_t i = 0, safe = len < 19 ? len : 19;
    for (; i < safe; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9) return 0;
        v = v * 10 + d;
    }
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9 || v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (v > max) return 0;
    *out = v;
    return 1;
}

int stringToLongLong(const char *s, size_t len, long long *out) {
    unsigned long long v;
    if (len > 0 && s[0] == '-') {
        if (!parseDigits(s + 1, len - 1, (unsigned long long)LLONG_MAX + 1, &v)) return 0;
        if (v == 0) return 0; /* "-0" */
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
        return 1;
    }
    if (!parseDigits(s, len, LLONG_MAX, &v)) return 0;
    *out = (long long)v;
    return 1;
}

int stringToLong(const char *s, size_t len, long *out) {
    long long v;
    if (!stringToLongLong(s, len, &v) || v < LONG_MIN || v > LONG_MAX) return 0;
    *out = (long)v;
    return 1;
}

int stringToUnsignedLongLong(const char *s, size_t len, unsigned long long *out) {
    return parseDigits(s, len, ULLONG_MAX, out);
}

static int isSpaceChar(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Copy s[0..len) into a NUL-terminated buffer: `stack` if it fits, else a
 * new heap block the caller frees (returned pointer != stack). */
static char *terminated(const char *s, size_t len, char *stack, size_t stacklen) {
    char *buf = len < stacklen ? stack : xmalloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

/* The shared grammar of decimalToDouble / decimalToLongDouble: the whole of
 * s[0..len) is [-]digits[.digits] with at most 19 significant digits; on
 * success *m holds them all as one integer, *frac how many follow the
 * point, *neg the sign.  0: not that form (the caller falls back). */
static int scanDecimal(const char *s, size_t len, int *neg, uint64_t *m, size_t *frac) {
    size_t i = 0, digits = 0;
    *neg = 0;
    *frac = 0;
    if (len && s[0] == '-') {
        *neg = 1;
        i = 1;
    }
    uint64_t v = 0;
    size_t start = i;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        /* Count from the first nonzero digit, before v grows: counted after,
         * a 20th digit could wrap v to exactly 0 (2^64) and escape. */
        if ((v || s[i] != '0') && ++digits > 19) return 0;
        v = v * 10 + (uint64_t)(s[i++] - '0');
    }
    if (i == start) return 0;
    if (i < len && s[i] == '.') {
        size_t fstart = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if ((v || s[i] != '0') && ++digits > 19) return 0;
            v = v * 10 + (uint64_t)(s[i++] - '0');
        }
        *frac = i - fstart;
        if (*frac == 0) return 0;
    }
    if (i != len) return 0;
    *m = v;
    return 1;
}

int decimalToDouble(const char *s, size_t len, double *out) {
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int neg;
    uint64_t m;
    size_t frac;
    if (!scanDecimal(s, len, &neg, &m, &frac)) return 0;
    /* Both m and 10^frac are exact doubles, so one IEEE division rounds
     * the decimal value correctly: what strtod returns. */
    if (m > (UINT64_C(1) << 53) || frac >= sizeof(pow10) / sizeof(pow10[0])) return 0;
    double v = (double)m / pow10[frac];
    *out = neg ? -v : v;
    return 1;
}

int stringToDouble(const char *s, size_t len, double *out) {
    if (decimalToDouble(s, len, out)) return 1;
    if (len == 0 || isSpaceChar(s[0])) return 0;
    char stack[128], *end;
    char *buf = terminated(s, len, stack, sizeof(stack));
    errno = 0;
    double v = strtod(buf, &end);
    int ok = (size_t)(end - buf) == len && !isnan(v) &&
             !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0.0));
    if (buf != stack) xfree(buf);
    if (ok) *out = v;
    return ok;
}

int decimalToLongDouble(const char *s, size_t len, long double *out) {
    static const long double pow10[] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
                                        1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
                                        1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
#if LDBL_MANT_DIG < 64
    (void)pow10;
    (void)s;
    (void)len;
    (void)out;
    return 0; /* m below would not be exact: always strtold */
#else
    int neg;
    uint64_t m;
    size_t frac;
    if (!scanDecimal(s, len, &neg, &m, &frac)) return 0;
    /* m < 10^19 < 2^64 and 10^frac (5^27 < 2^64) are exact long doubles,
     * so one division rounds the decimal value correctly, as strtold. */
    if (frac >= sizeof(pow10) / sizeof(pow10[0])) return 0;
    long double v = (long double)m / pow10[frac];
    *out = neg ? -v : v;
    return 1;
#endif
}

int stringToLongDouble(const char *s, size_t len, long double *out) {
    if (len == 0 || len >= UTIL_MAX_LONG_DOUBLE_CHARS || isSpaceChar(s[0])) return 0;
    if (decimalToLongDouble(s, len, out)) return 1;
    char stack[128], *end;
    char *buf = terminated(s, len, stack, sizeof(stack));
    errno = 0;
    long double v = strtold(buf, &end);
    int ok = (size_t)(end - buf) == len && !isnan(v) &&
             !(errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0.0L));
    if (buf != stack) xfree(buf);
    if (ok) *out = v;
    return ok;
}

uint32_t digits10(uint64_t v) {
    uint32_t n = 1;
    for (;;) { /* four digits per step: few iterations, no loop per digit */
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}

int unsignedLongLongToString(char *dst, size_t dstlen, unsigned long long v) {
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    uint32_t n = digits10(v);
    if ((size_t)n + 1 > dstlen) return 0;
    dst[n] = '\0';
    uint32_t i = n;
    while (v >= 100) { /* two digits per division */
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        dst[--i] = pairs[d + 1];
        dst[--i] = pairs[d];
    }
    if (v >= 10) {
        unsigned d = (unsigned)v * 2;
        dst[--i] = pairs[d + 1];
        dst[--i] = pairs[d];
    } else {
        dst[--i] = (char)('0' + v);
    }
    return (int)n;
}

int longLongToString(char *dst, size_t dstlen, long long v) {
    if (v >= 0) return unsignedLongLongToString(dst, dstlen, (unsigned long long)v);
    if (dstlen < 2) return 0;
    /* Negate in unsigned arithmetic so LLONG_MIN is safe. */
    unsigned long long u = (unsigned long long)0 - (unsigned long long)v;
    int n = unsignedLongLongToString(dst + 1, dstlen - 1, u);
    if (n == 0) return 0;
    dst[0] = '-';
    return n + 1;
}

/* Store a fixed word and return its length, or 0 if it does not fit. */
static int putWord(char *buf, size_t len, const char *w) {
    size_t n = strlen(w);
    if (n + 1 > len) return 0;
    memcpy(buf, w, n + 1);
    return (int)n;
}

int doubleToString(char *buf, size_t len, double v) {
    /* An integer below 2^53 (unix-ms scores, counters): "%.17g" prints
     * its digits exactly (no exponent below 1e17), so print them without
     * snprintf, which costs ~3,700 instructions.  -0 keeps "%.17g"'s "-0". */
    if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(long long)v && (v != 0 || !signbit(v)))
        return longLongToString(buf, len, (long long)v);
    if (isnan(v)) return putWord(buf, len, "nan");
    if (isinf(v)) return putWord(buf, len, v > 0 ? "inf" : "-inf");
    int n = snprintf(buf, len, "%.17g", v);
    if (n < 0 || (size_t)n >= len) return 0;
    return n;
}

/* The human-friendly text of v without snprintf when it is exact in
 * "%.17Lf": |v| < 2^64 and v a multiple of 2^-17, so its decimal expansion
 * has at most 17 fractional digits (f / 2^17 = f * 5^17 / 10^17) and
 * "%.17Lf" prints it unrounded.  Returns the length, or -1 (buf untouched
 * beyond what the caller overwrites) when v is not such a value or len is
 * below 40 (sign, 20 digits, '.', 17 digits, NUL). */
static int longDoubleToFixedExact(char *buf, size_t len, long double v) {
    if (len < 40) return -1;
    long double a = v < 0 ? -v : v;
    if (!(a < 18446744073709551616.0L)) return -1; /* 2^64; also NaN */
    uint64_t ip = (uint64_t)a;
    long double scaled = (a - (long double)ip) * 131072.0L; /* both exact */
    uint64_t f = (uint64_t)scaled;
    if ((long double)f != scaled) return -1;
    int n = 0;
    if (v < 0 && (ip | f)) buf[n++] = '-'; /* -0 prints as 0 */
    n += unsignedLongLongToString(buf + n, len - (size_t)n, ip);
    if (f) {
        uint64_t d = f * UINT64_C(762939453125); /* 5^17: < 10^17 */
        int k = 17;
        while (d % 10 == 0) { /* the trailing zeros "%.17Lf" would print */
            d /= 10;
            k--;
        }
        buf[n++] = '.';
        for (int j = k - 1; j >= 0; j--) {
            buf[n + j] = (char)('0' + d % 10);
            d /= 10;
        }
        n += k;
        buf[n] = '\0';
    }
    return n;
}

int longDoubleToString(char *buf, size_t len, long double v, int humanfriendly) {
    if (isnan(v)) return putWord(buf, len, "nan");
    if (isinf(v)) return putWord(buf, len, v > 0 ? "inf" : "-inf");
    if (humanfriendly) {
        int fast = longDoubleToFixedExact(buf, len, v);
        if (fast >= 0) return fast;
    }
    int n = snprintf(buf, len, humanfriendly ? "%.17Lf" : "%.17Lg", v);
    if (n < 0 || (size_t)n >= len) return 0;
    if (humanfriendly && strchr(buf, '.')) {
        /* "%.17Lf" always prints 17 decimals: drop the zeros and a bare '.'. */
        while (buf[n - 1] == '0') n--;
        if (buf[n - 1] == '.') n--;
        buf[n] = '\0';
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') { /* -0 reads as 0 */
        buf[0] = '0';
        buf[1] = '\0';
        n = 1;
    }
    return n;
}

long long ustime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

long long mstime(void) { return ustime() / 1000; }

long long monotonicUs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

const void *detachedThreadCpuset;

int startDetachedThread(void *(*fn)(void *), void *arg) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (detachedThreadCpuset) pthread_attr_setaffinity_np(&attr, sizeof(cpu_set_t), detachedThreadCpuset);
    int err = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return err;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Chunks of this size keep each madvise short: the call holds the address
 * space's lock for reading, which an mmap in the main thread waits for. */
#define PREFAULT_CHUNK ((size_t)2 << 20)

void prefaultRange(void *p, size_t len) {
    if (len == 0) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t end = ((uintptr_t)p + len) & ~(uintptr_t)(page - 1);
    int populate = 1;
    for (uintptr_t a = start; populate && a < end; a += PREFAULT_CHUNK) {
        size_t n = end - a < PREFAULT_CHUNK ? end - a : PREFAULT_CHUNK;
        if (madvise((void *)a, n, MADV_POPULATE_WRITE) != 0) populate = 0;
    }
    volatile char *c = p;
    for (size_t i = 0; i < len; i += page) c[i] = c[i];
    c[len - 1] = c[len - 1];
}

void (*prefaultLaterHook)(void *p, size_t len);

__attribute__((no_sanitize_address)) void prefaultReadPages(const void *p, size_t len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < len; i += page) (void)__atomic_load_n((const char *)p + i, __ATOMIC_RELAXED);
}

void prefaultPopulate(void *p, size_t len) {
    if (len == 0) return;
    /* Every page the range touches, the partial ones at its ends too: a
     * block the allocator hands out rarely starts on a page (jemalloc
     * starts a large one at a random line of its first page), and those two
     * pages faulted in the main thread's writes, two per TTL index chunk.
     * The allocator maps whole pages, so they are mapped. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
    uintptr_t end = ((uintptr_t)p + len + page - 1) & ~(uintptr_t)(page - 1);
    /* The read only when the populate succeeded (the range was mapped a
     * moment ago) and the allocator never unmaps what it got
     * (xmallocRetainsAddressSpace): a block freed meanwhile is still
     * readable. */
    if (end > start && madvise((void *)start, end - start, MADV_POPULATE_WRITE) == 0 && xmallocRetainsAddressSpace())
        prefaultReadPages((const void *)start, end - start);
}
