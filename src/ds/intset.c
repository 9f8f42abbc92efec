/* intset.c -- sorted integer set in Redis's intset byte format (intset.h).
 *
 * The blob is read and written with memcpy and explicit little-endian
 * conversion, so it is valid at any alignment and on any host.  Invariants:
 * encoding is 2, 4 or 8; every stored value fits the encoding; values are
 * strictly ascending; the allocation holds exactly intsetBlobLen bytes. */
#include "ds/intset.h"

#include <string.h>

#include "ds/alloc.h"
#include "ds/rand.h"

#define IS_HDR 8 /* encoding u32 + length u32 */

struct intset {
    unsigned char bytes[1]; /* never accessed as a struct: see the helpers */
};

static uint32_t rdU32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wrU32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t encOf(const intset *is) { return rdU32((const unsigned char *)is); }
static void setEnc(intset *is, uint32_t e) { wrU32((unsigned char *)is, e); }
static void setLen(intset *is, uint32_t n) { wrU32((unsigned char *)is + 4, n); }
static unsigned char *contents(const intset *is) { return (unsigned char *)is + IS_HDR; }

/* Smallest width in bytes that holds v. */
static uint32_t widthFor(long long v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

/* Read the value at pos stored with width enc. */
static long long readAt(const unsigned char *c, uint32_t enc, uint32_t pos) {
    const unsigned char *p = c + (size_t)pos * enc;
    uint64_t u = 0;
    for (uint32_t i = 0; i < enc; i++) u |= (uint64_t)p[i] << (8 * i);
    /* Sign-extend from enc*8 bits. */
    if (enc < 8) {
        uint64_t sign = UINT64_C(1) << (enc * 8 - 1);
        u = (u ^ sign) - sign;
    }
    return (long long)u;
}

static void writeAt(unsigned char *c, uint32_t enc, uint32_t pos, long long v) {
    unsigned char *p = c + (size_t)pos * enc;
    uint64_t u = (uint64_t)v;
    for (uint32_t i = 0; i < enc; i++) p[i] = (unsigned char)(u >> (8 * i));
}

static long long getAt(const intset *is, uint32_t pos) { return readAt(contents(is), encOf(is), pos); }

/* Binary search.  Returns 1 and the position if found, else 0 and the
 * position where value would be inserted. */
static int search(const intset *is, long long value, uint32_t *pos) {
    uint32_t lo = 0, hi = intsetLen(is), enc = encOf(is);
    const unsigned char *c = contents(is);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        long long cur = readAt(c, enc, mid);
        if (cur == value) {
            *pos = mid;
            return 1;
        }
        if (cur < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

static intset *resize(intset *is, uint32_t len) {
    return xrealloc(is, IS_HDR + (size_t)len * encOf(is));
}

intset *intsetNew(void) {
    intset *is = xmalloc(IS_HDR);
    setEnc(is, 2);
    setLen(is, 0);
    return is;
}

void intsetFree(intset *is) { xfree(is); }

uint32_t intsetLen(const intset *is) { return rdU32((const unsigned char *)is + 4); }

size_t intsetBlobLen(const intset *is) { return IS_HDR + (size_t)intsetLen(is) * encOf(is); }

/* Widen every element to `enc` and add value, which does not fit the old
 * width and so is either below every member or above every member. */
static intset *upgradeAndAdd(intset *is, long long value) {
    uint32_t old = encOf(is), len = intsetLen(is);
    is = xrealloc(is, IS_HDR + (size_t)(len + 1) * widthFor(value));
    uint32_t enc = widthFor(value);
    setEnc(is, enc);
    unsigned char *c = contents(is);
    int front = value < 0;
    /* Walk backwards so no element is overwritten before it is read. */
    for (uint32_t i = len; i-- > 0;) writeAt(c, enc, i + (uint32_t)front, readAt(c, old, i));
    writeAt(c, enc, front ? 0 : len, value);
    setLen(is, len + 1);
    return is;
}

intset *intsetAdd(intset *is, long long value, int *added) {
    if (added) *added = 0;
    if (widthFor(value) > encOf(is)) {
        if (added) *added = 1;
        return upgradeAndAdd(is, value);
    }
    uint32_t pos, len = intsetLen(is);
    if (search(is, value, &pos)) return is;
    is = resize(is, len + 1);
    uint32_t enc = encOf(is);
    unsigned char *c = contents(is);
    memmove(c + (size_t)(pos + 1) * enc, c + (size_t)pos * enc, (size_t)(len - pos) * enc);
    writeAt(c, enc, pos, value);
    setLen(is, len + 1);
    if (added) *added = 1;
    return is;
}

intset *intsetRemove(intset *is, long long value, int *removed) {
    if (removed) *removed = 0;
    uint32_t pos, len = intsetLen(is), enc = encOf(is);
    if (widthFor(value) > enc || !search(is, value, &pos)) return is;
    unsigned char *c = contents(is);
    memmove(c + (size_t)pos * enc, c + (size_t)(pos + 1) * enc, (size_t)(len - pos - 1) * enc);
    setLen(is, len - 1);
    if (removed) *removed = 1;
    return resize(is, len - 1);
}

int intsetFind(const intset *is, long long value) {
    uint32_t pos;
    return widthFor(value) <= encOf(is) && search(is, value, &pos);
}

int intsetGet(const intset *is, uint32_t pos, long long *value) {
    if (pos >= intsetLen(is)) return 0;
    *value = getAt(is, pos);
    return 1;
}

long long intsetRandom(const intset *is) {
    return getAt(is, (uint32_t)randBounded(intsetLen(is)));
}

long long intsetMin(const intset *is) { return getAt(is, 0); }

long long intsetMax(const intset *is) { return getAt(is, intsetLen(is) - 1); }

intset *intsetDup(const intset *is) {
    size_t n = intsetBlobLen(is);
    intset *copy = xmalloc(n);
    memcpy(copy, is, n);
    return copy;
}

int intsetValidateIntegrity(const unsigned char *p, size_t size, int deep) {
    if (size < IS_HDR) return 0;
    uint32_t enc = rdU32(p), len = rdU32(p + 4);
    if (enc != 2 && enc != 4 && enc != 8) return 0;
    /* Redis rejects an empty intset: an empty set is never stored. */
    if (len == 0) return 0;
    if ((uint64_t)len * enc + IS_HDR != size) return 0;
    if (!deep) return 1;
    long long prev = readAt(p + IS_HDR, enc, 0);
    for (uint32_t i = 1; i < len; i++) {
        long long cur = readAt(p + IS_HDR, enc, i);
        if (cur <= prev) return 0;
        prev = cur;
    }
    return 1;
}
