/* listpack.c -- Redis's listpack byte format (see listpack.h for the layout).
 *
 * Every change goes through one primitive, splice(): replace a byte range
 * (zero or one whole entries) with zero or one newly encoded entry, fixing
 * the header.  Inserting, replacing and deleting are all splices.  The
 * element count in the header is kept exact while it is below 65535; at
 * 65535 it means "unknown" and is recomputed after deletions so that it is
 * exact again as soon as it fits.
 *
 * Entry sizes and the backlen thresholds follow Redis's encoder exactly, so
 * the same sequence of operations produces the same bytes as Redis 7.0
 * (DUMP payloads and RDB files compare equal).  Reading functions trust the
 * listpack; untrusted bytes go through lpValidateIntegrity first, which
 * bounds every read by the buffer size. */
#include "ds/listpack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/util.h"

#define LP_HDR_SIZE 6
#define LP_EOF 0xFF
#define LP_COUNT_UNKNOWN 65535u
#define LP_SAFETY_SIZE (1UL << 30)
#define LP_MAX_INT_ENC 9 /* 0xF4 + 8 bytes */

/* Encoding bytes. */
#define ENC_6BIT_STR 0x80
#define ENC_13BIT_INT 0xC0
#define ENC_12BIT_STR 0xE0
#define ENC_32BIT_STR 0xF0
#define ENC_16BIT_INT 0xF1
#define ENC_24BIT_INT 0xF2
#define ENC_32BIT_INT 0xF3
#define ENC_64BIT_INT 0xF4

/* ---- Little-endian header fields ---------------------------------------- */

static uint32_t rdU32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wrU32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t hdrCount(const unsigned char *lp) { return (uint32_t)lp[4] | (uint32_t)lp[5] << 8; }

static void setHdrCount(unsigned char *lp, uint32_t n) {
    if (n > LP_COUNT_UNKNOWN) n = LP_COUNT_UNKNOWN;
    lp[4] = (unsigned char)n;
    lp[5] = (unsigned char)(n >> 8);
}

static void setHdrBytes(unsigned char *lp, size_t n) { wrU32(lp, (uint32_t)n); }

size_t lpBytes(const unsigned char *lp) { return rdU32(lp); }

/* ---- backlen ------------------------------------------------------------ */

/* Bytes Redis uses to encode backlen l (note its thresholds are "<" below
 * 2^14-1 etc., not "<=": 16383 takes three bytes). */
static size_t backlenSize(uint64_t l) {
    if (l <= 127) return 1;
    if (l < 16383) return 2;
    if (l < 2097151) return 3;
    if (l < 268435455) return 4;
    return 5;
}

/* Write backlen l into buf (backlenSize(l) bytes).  The last byte holds the
 * lowest 7 bits; every byte but the first has its top bit set, so a reader
 * walking backwards knows when to stop. */
static size_t encodeBacklen(unsigned char *buf, uint64_t l) {
    size_t n = backlenSize(l);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)((l >> (7 * (n - 1 - i))) & 127);
        if (i > 0) b |= 128;
        buf[i] = b;
    }
    return n;
}

/* Decode the backlen whose last byte is at q (trusted). */
static uint64_t decodeBacklen(const unsigned char *q, size_t *nbytes) {
    uint64_t v = 0;
    unsigned shift = 0;
    size_t n = 0;
    for (;;) {
        v |= (uint64_t)(q[0] & 127) << shift;
        n++;
        if (!(q[0] & 128) || n == 5) break;
        shift += 7;
        q--;
    }
    *nbytes = n;
    return v;
}

/* ---- Reading entries (trusted) ------------------------------------------ */

static long long signExtend(uint64_t u, unsigned bits) {
    uint64_t sign = UINT64_C(1) << (bits - 1);
    if (bits < 64) u &= (UINT64_C(1) << bits) - 1;
    u = (u ^ sign) - sign;
    long long v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

static uint64_t rdLE(const unsigned char *p, unsigned nbytes) {
    uint64_t u = 0;
    for (unsigned i = 0; i < nbytes; i++) u |= (uint64_t)p[i] << (8 * i);
    return u;
}

/* Decode the entry at p.  Returns 1 for an integer (*ival set) or 0 for a
 * string (*str, *slen set).  *encsize receives the size of encoding+data. */
static inline int decodeEntry(const unsigned char *p, long long *ival, const unsigned char **str, uint32_t *slen,
                              uint32_t *encsize) {
    unsigned char b = p[0];
    if (b < 0x80) {
        *ival = b;
        *encsize = 1;
        return 1;
    }
    if ((b & 0xC0) == ENC_6BIT_STR) {
        *slen = b & 0x3F;
        *str = p + 1;
        *encsize = 1 + *slen;
        return 0;
    }
    if ((b & 0xE0) == ENC_13BIT_INT) {
        *ival = signExtend(((uint64_t)(b & 0x1F) << 8) | p[1], 13);
        *encsize = 2;
        return 1;
    }
    if ((b & 0xF0) == ENC_12BIT_STR) {
        *slen = ((uint32_t)(b & 0x0F) << 8) | p[1];
        *str = p + 2;
        *encsize = 2 + *slen;
        return 0;
    }
    switch (b) {
    case ENC_32BIT_STR:
        *slen = rdU32(p + 1);
        *str = p + 5;
        *encsize = 5 + *slen;
        return 0;
    case ENC_16BIT_INT:
        *ival = signExtend(rdLE(p + 1, 2), 16);
        *encsize = 3;
        return 1;
    case ENC_24BIT_INT:
        *ival = signExtend(rdLE(p + 1, 3), 24);
        *encsize = 4;
        return 1;
    case ENC_32BIT_INT:
        *ival = signExtend(rdLE(p + 1, 4), 32);
        *encsize = 5;
        return 1;
    default: /* ENC_64BIT_INT; other bytes never occur in a valid entry */
        *ival = signExtend(rdLE(p + 1, 8), 64);
        *encsize = 9;
        return 1;
    }
}

/* Size of encoding+data of the entry at p, without decoding the value. */
static inline uint32_t encodedSize(const unsigned char *p) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    if ((b & 0xC0) == ENC_6BIT_STR) return 1 + (b & 0x3F);
    if ((b & 0xE0) == ENC_13BIT_INT) return 2;
    if ((b & 0xF0) == ENC_12BIT_STR) return 2 + (((uint32_t)(b & 0x0F) << 8) | p[1]);
    switch (b) {
    case ENC_32BIT_STR: return 5 + rdU32(p + 1);
    case ENC_16BIT_INT: return 3;
    case ENC_24BIT_INT: return 4;
    case ENC_32BIT_INT: return 5;
    default: return 9;
    }
}

static inline size_t entrySize(const unsigned char *p) {
    uint32_t e = encodedSize(p);
    return e + backlenSize(e);
}

/* ---- Navigation ---------------------------------------------------------- */

unsigned char *lpFirst(unsigned char *lp) {
    unsigned char *p = lp + LP_HDR_SIZE;
    return p[0] == LP_EOF ? NULL : p;
}

unsigned char *lpNext(unsigned char *lp, unsigned char *p) {
    (void)lp;
    p += entrySize(p);
    return p[0] == LP_EOF ? NULL : p;
}

unsigned char *lpPrev(unsigned char *lp, unsigned char *p) {
    if (p == lp + LP_HDR_SIZE) return NULL;
    size_t n;
    uint64_t l = decodeBacklen(p - 1, &n);
    return p - n - l;
}

unsigned char *lpLast(unsigned char *lp) { return lpPrev(lp, lp + lpBytes(lp) - 1); }

static unsigned long countEntries(const unsigned char *lp) {
    unsigned long n = 0;
    const unsigned char *p = lp + LP_HDR_SIZE;
    while (p[0] != LP_EOF) {
        p += entrySize(p);
        n++;
    }
    return n;
}

unsigned long lpLength(const unsigned char *lp) {
    uint32_t n = hdrCount(lp);
    if (n != LP_COUNT_UNKNOWN) return n;
    unsigned long c = countEntries(lp);
    /* Listpacks are always heap memory: caching the count is allowed. */
    if (c < LP_COUNT_UNKNOWN) setHdrCount((unsigned char *)lp, (uint32_t)c);
    return c;
}

unsigned char *lpSeek(unsigned char *lp, long index) {
    unsigned long n = lpLength(lp);
    if (index < 0) {
        if ((unsigned long)-(index + 1) >= n) return NULL; /* -(index+1) avoids LONG_MIN overflow */
        index = (long)(n - (unsigned long)-(index + 1) - 1);
    } else if ((unsigned long)index >= n) {
        return NULL;
    }
    unsigned char *p;
    if ((unsigned long)index <= n / 2) {
        p = lp + LP_HDR_SIZE;
        for (long i = 0; i < index; i++) p += entrySize(p);
    } else {
        p = lpLast(lp);
        for (unsigned long i = n - 1; i > (unsigned long)index; i--) p = lpPrev(lp, p);
    }
    return p;
}

unsigned char *lpRandom(unsigned char *lp) {
    unsigned long n = lpLength(lp);
    if (n == 0) return NULL;
    return lpSeek(lp, (long)randBounded(n));
}

/* ---- Values -------------------------------------------------------------- */

unsigned char *lpGetValue(unsigned char *p, unsigned int *len, unsigned char *intbuf, int *isInt,
                          long long *ival) {
    long long v;
    const unsigned char *s;
    uint32_t slen, es;
    if (!decodeEntry(p, &v, &s, &slen, &es)) {
        if (isInt) *isInt = 0;
        *len = slen;
        return (unsigned char *)s;
    }
    if (isInt) *isInt = 1;
    if (ival) *ival = v;
    if (!intbuf) {
        *len = 0;
        return NULL;
    }
    *len = (unsigned int)longLongToString((char *)intbuf, LP_INTBUF_SIZE, v);
    return intbuf;
}

int lpCompare(unsigned char *p, const unsigned char *s, size_t len) {
    long long v, sv;
    const unsigned char *str;
    uint32_t slen, es;
    if (!decodeEntry(p, &v, &str, &slen, &es)) return slen == len && memcmp(str, s, len) == 0;
    /* An integer's text equals s exactly when s is its canonical form. */
    return stringToLongLong((const char *)s, len, &sv) && sv == v;
}

unsigned char *lpFind(unsigned char *lp, unsigned char *p, const unsigned char *s, size_t len, unsigned int skip) {
    (void)lp;
    int sIsInt = -1; /* unknown until the first integer entry is met */
    long long sval = 0;
    unsigned int toSkip = 0;
    while (p && p[0] != LP_EOF) {
        uint32_t es;
        if (toSkip == 0) {
            long long v;
            const unsigned char *str;
            uint32_t slen;
            if (!decodeEntry(p, &v, &str, &slen, &es)) {
                if (slen == len && memcmp(str, s, len) == 0) return p;
            } else {
                if (sIsInt < 0) sIsInt = stringToLongLong((const char *)s, len, &sval);
                if (sIsInt && v == sval) return p;
            }
            toSkip = skip;
        } else {
            es = encodedSize(p);
            toSkip--;
        }
        p += es + backlenSize(es);
    }
    return NULL;
}

/* ---- Encoding new entries ---------------------------------------------- */

/* A new entry ready to be written: header bytes (encoding, small data),
 * optional string payload, backlen. */
typedef struct {
    unsigned char hdr[LP_MAX_INT_ENC]; /* encoding byte(s), integer data */
    size_t hdrlen;
    const unsigned char *data; /* string bytes (NULL for integers) */
    size_t datalen;
    unsigned char bl[5]; /* backlen */
    size_t bllen;
} NewEntry;

static void finishEntry(NewEntry *e) { e->bllen = encodeBacklen(e->bl, e->hdrlen + e->datalen); }

static size_t newEntrySize(const NewEntry *e) { return e->hdrlen + e->datalen + e->bllen; }

static void encodeInt(NewEntry *e, long long v) {
    uint64_t u = (uint64_t)v;
    unsigned nbytes;
    e->data = NULL;
    e->datalen = 0;
    if (v >= 0 && v <= 127) {
        e->hdr[0] = (unsigned char)v;
        e->hdrlen = 1;
        finishEntry(e);
        return;
    }
    if (v >= -4096 && v <= 4095) {
        uint32_t t = (uint32_t)(u & 0x1FFF);
        e->hdr[0] = (unsigned char)(ENC_13BIT_INT | (t >> 8));
        e->hdr[1] = (unsigned char)(t & 0xFF);
        e->hdrlen = 2;
        finishEntry(e);
        return;
    }
    if (v >= INT16_MIN && v <= INT16_MAX) {
        e->hdr[0] = ENC_16BIT_INT;
        nbytes = 2;
    } else if (v >= -8388608 && v <= 8388607) {
        e->hdr[0] = ENC_24BIT_INT;
        nbytes = 3;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        e->hdr[0] = ENC_32BIT_INT;
        nbytes = 4;
    } else {
        e->hdr[0] = ENC_64BIT_INT;
        nbytes = 8;
    }
    for (unsigned i = 0; i < nbytes; i++) e->hdr[1 + i] = (unsigned char)(u >> (8 * i));
    e->hdrlen = 1 + nbytes;
    finishEntry(e);
}

static void encodeString(NewEntry *e, const unsigned char *s, size_t len) {
    long long v;
    if (len <= 20 && stringToLongLong((const char *)s, len, &v)) {
        encodeInt(e, v);
        return;
    }
    if (len > UINT32_MAX) {
        fprintf(stderr, "listpack: string of %zu bytes cannot be encoded\n", len);
        abort();
    }
    if (len < 64) {
        e->hdr[0] = (unsigned char)(ENC_6BIT_STR | len);
        e->hdrlen = 1;
    } else if (len < 4096) {
        e->hdr[0] = (unsigned char)(ENC_12BIT_STR | (len >> 8));
        e->hdr[1] = (unsigned char)(len & 0xFF);
        e->hdrlen = 2;
    } else {
        e->hdr[0] = ENC_32BIT_STR;
        wrU32(e->hdr + 1, (uint32_t)len);
        e->hdrlen = 5;
    }
    e->data = s;
    e->datalen = len;
    finishEntry(e);
}

/* ---- The one mutation primitive ----------------------------------------- */

static _Thread_local LpResizeFn *resizer;
static _Thread_local void *resizerCtx;

void lpSetResizer(LpResizeFn *fn, void *ctx) {
    resizer = fn;
    resizerCtx = ctx;
}

/* Replace the delBytes bytes at offset off (whole entries, possibly none)
 * with the entry e (or nothing if e is NULL), adjusting the element count by
 * delta.  Returns the moved listpack. */
static unsigned char *splice(unsigned char *lp, size_t off, size_t delBytes, const NewEntry *e, long delta) {
    size_t old = lpBytes(lp);
    size_t add = e ? newEntrySize(e) : 0;
    size_t total = old - delBytes + add;
    size_t tail = old - off - delBytes; /* bytes after the removed range, EOF included */
    unsigned char *tmp = NULL;
    const unsigned char *data = e ? e->data : NULL;
    if (total > UINT32_MAX) {
        fprintf(stderr, "listpack: size %zu exceeds the format limit\n", total);
        abort();
    }
    /* The payload may live inside this very listpack (a value read from it):
     * copy it before the bytes move. */
    if (data && data + e->datalen > lp && data < lp + old) {
        tmp = xmalloc(e->datalen);
        memcpy(tmp, data, e->datalen);
        data = tmp;
    }
    if (total > old) {
        /* Grow only past the block's usable size: appends into a block with
         * room (a pre-sized listpack, or slack from the size class) do not
         * move it. */
        if (resizer) lp = resizer(resizerCtx, lp, total);
        else if (total > xmallocSize(lp)) lp = xrealloc(lp, total);
        memmove(lp + off + add, lp + off + delBytes, tail);
    } else {
        memmove(lp + off + add, lp + off + delBytes, tail);
        /* Shrink only when the block would move to a smaller size class:
         * deleting one element of a big node rarely does. */
        if (total < old) {
            if (resizer) lp = resizer(resizerCtx, lp, total);
            else if (xmallocGoodSize(total) < xmallocSize(lp)) lp = xrealloc(lp, total);
        }
    }
    if (e) {
        unsigned char *w = lp + off;
        memcpy(w, e->hdr, e->hdrlen);
        w += e->hdrlen;
        if (e->datalen) memcpy(w, data, e->datalen);
        w += e->datalen;
        memcpy(w, e->bl, e->bllen);
    }
    xfree(tmp);
    setHdrBytes(lp, total);
    if (delta != 0) {
        uint32_t n = hdrCount(lp);
        if (n != LP_COUNT_UNKNOWN)
            setHdrCount(lp, (uint32_t)((long)n + delta));
        else if (delta < 0) { /* the count may fit again */
            unsigned long c = countEntries(lp);
            setHdrCount(lp, c < LP_COUNT_UNKNOWN ? (uint32_t)c : LP_COUNT_UNKNOWN);
        }
    }
    return lp;
}

/* ---- Public mutations ----------------------------------------------------- */

/* capacity: bytes to reserve up front (a caller that knows what it will
 * append avoids growing through every size class). */
unsigned char *lpNew(size_t capacity) {
    unsigned char *lp = xmalloc(capacity > LP_EMPTY_BYTES ? capacity : LP_EMPTY_BYTES);
    lpInitEmpty(lp);
    return lp;
}

void lpInitEmpty(unsigned char *dst) {
    setHdrBytes(dst, LP_EMPTY_BYTES);
    setHdrCount(dst, 0);
    dst[LP_HDR_SIZE] = LP_EOF;
}

void lpFree(unsigned char *lp) { xfree(lp); }

/* Offset where an entry inserted relative to p goes. */
static size_t insertOffset(unsigned char *lp, unsigned char *p, int where) {
    if (!p || p[0] == LP_EOF) return lpBytes(lp) - 1;
    if (where == LP_AFTER) p += entrySize(p);
    return (size_t)(p - lp);
}

static unsigned char *insertEntry(unsigned char *lp, const NewEntry *e, unsigned char *p, int where,
                                  unsigned char **newp) {
    size_t off = insertOffset(lp, p, where);
    lp = splice(lp, off, 0, e, 1);
    if (newp) *newp = lp + off;
    return lp;
}

unsigned char *lpInsert(unsigned char *lp, const unsigned char *s, size_t len, unsigned char *p, int where,
                        unsigned char **newp) {
    NewEntry e;
    encodeString(&e, s, len);
    return insertEntry(lp, &e, p, where, newp);
}

unsigned char *lpAppend(unsigned char *lp, const unsigned char *s, size_t len) {
    return lpInsert(lp, s, len, NULL, LP_BEFORE, NULL);
}

unsigned char *lpPrepend(unsigned char *lp, const unsigned char *s, size_t len) {
    return lpInsert(lp, s, len, lpFirst(lp), LP_BEFORE, NULL);
}

unsigned char *lpAppendInteger(unsigned char *lp, long long v) {
    NewEntry e;
    encodeInt(&e, v);
    return insertEntry(lp, &e, NULL, LP_BEFORE, NULL);
}

unsigned char *lpAppendItems(unsigned char *lp, const LpItem *items, size_t n) {
    NewEntry stackEntries[16];
    NewEntry *e = n <= 16 ? stackEntries : xmalloc(sizeof(NewEntry) * n);
    size_t add = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].s) encodeString(&e[i], items[i].s, items[i].len);
        else encodeInt(&e[i], items[i].v);
        add += newEntrySize(&e[i]);
    }
    size_t old = lpBytes(lp), total = old + add;
    if (total > UINT32_MAX) {
        fprintf(stderr, "listpack: size %zu exceeds the format limit\n", total);
        abort();
    }
    if (resizer) lp = resizer(resizerCtx, lp, total);
    else if (total > xmallocSize(lp)) lp = xrealloc(lp, total);
    unsigned char *w = lp + old - 1; /* over the old EOF */
    for (size_t i = 0; i < n; i++) {
        memcpy(w, e[i].hdr, e[i].hdrlen);
        w += e[i].hdrlen;
        if (e[i].datalen) memcpy(w, e[i].data, e[i].datalen);
        w += e[i].datalen;
        memcpy(w, e[i].bl, e[i].bllen);
        w += e[i].bllen;
    }
    *w = LP_EOF;
    setHdrBytes(lp, total);
    uint32_t count = hdrCount(lp);
    if (count != LP_COUNT_UNKNOWN) setHdrCount(lp, (uint32_t)(count + n > LP_COUNT_UNKNOWN ? LP_COUNT_UNKNOWN : count + n));
    if (e != stackEntries) xfree(e);
    return lp;
}

unsigned char *lpReplace(unsigned char *lp, unsigned char **p, const unsigned char *s, size_t len) {
    NewEntry e;
    encodeString(&e, s, len);
    size_t off = (size_t)(*p - lp);
    lp = splice(lp, off, entrySize(*p), &e, 0);
    *p = lp + off;
    return lp;
}

unsigned char *lpDelete(unsigned char *lp, unsigned char *p, unsigned char **newp) {
    size_t off = (size_t)(p - lp);
    lp = splice(lp, off, entrySize(p), NULL, -1);
    if (newp) *newp = lp[off] == LP_EOF ? NULL : lp + off;
    return lp;
}

unsigned char *lpDeleteRangeWithEntry(unsigned char *lp, unsigned char **p, unsigned long count) {
    size_t off = (size_t)(*p - lp);
    unsigned char *q = *p;
    unsigned long deleted = 0;
    while (deleted < count && q[0] != LP_EOF) {
        q += entrySize(q);
        deleted++;
    }
    if (deleted) lp = splice(lp, off, (size_t)(q - (lp + off)), NULL, -(long)deleted);
    *p = lp[off] == LP_EOF ? NULL : lp + off;
    return lp;
}

unsigned char *lpDeleteRange(unsigned char *lp, long index, unsigned long count) {
    unsigned char *p = lpSeek(lp, index);
    if (!p || count == 0) return lp;
    return lpDeleteRangeWithEntry(lp, &p, count);
}

unsigned char *lpMerge(unsigned char **first, unsigned char **second) {
    unsigned char *a = *first, *b = *second;
    if (!a || !b) return a ? a : b;
    size_t abytes = lpBytes(a), bbytes = lpBytes(b);
    size_t apay = abytes - LP_HDR_SIZE - 1, bpay = bbytes - LP_HDR_SIZE - 1;
    size_t total = abytes + bpay;
    unsigned long count = lpLength(a) + lpLength(b);
    if (total > UINT32_MAX) {
        fprintf(stderr, "listpack: merged size %zu exceeds the format limit\n", total);
        abort();
    }
    unsigned char *m;
    if (abytes >= bbytes) { /* grow the first, append the second's entries */
        m = xrealloc(a, total);
        memcpy(m + LP_HDR_SIZE + apay, b + LP_HDR_SIZE, bpay);
        xfree(b);
        *first = m;
        *second = NULL;
    } else { /* grow the second, shift its entries, put the first's in front */
        m = xrealloc(b, total);
        memmove(m + LP_HDR_SIZE + apay, m + LP_HDR_SIZE, bpay);
        memcpy(m + LP_HDR_SIZE, a + LP_HDR_SIZE, apay);
        xfree(a);
        *first = NULL;
        *second = m;
    }
    m[total - 1] = LP_EOF;
    setHdrBytes(m, total);
    setHdrCount(m, count < LP_COUNT_UNKNOWN ? (uint32_t)count : LP_COUNT_UNKNOWN);
    return m;
}

size_t lpEstimateBytesRepeatedInteger(long long v, unsigned long rep) {
    NewEntry e;
    encodeInt(&e, v);
    return LP_HDR_SIZE + newEntrySize(&e) * rep + 1;
}

int lpSafeToAdd(unsigned char *lp, size_t add) {
    size_t cur = lp ? lpBytes(lp) : 0;
    return add <= LP_SAFETY_SIZE && cur + add <= LP_SAFETY_SIZE;
}

/* ---- Validation of untrusted bytes --------------------------------------- */

/* Check the entry at p, which lies before the terminator at eof.  Returns
 * the next entry or NULL if corrupt.  Reads only within [p, eof). */
static unsigned char *validateEntry(unsigned char *p, unsigned char *eof) {
    size_t avail = (size_t)(eof - p);
    unsigned char b = p[0];
    uint64_t es;
    if (b < 0x80)
        es = 1;
    else if ((b & 0xC0) == ENC_6BIT_STR)
        es = 1 + (uint64_t)(b & 0x3F);
    else if ((b & 0xE0) == ENC_13BIT_INT)
        es = 2;
    else if ((b & 0xF0) == ENC_12BIT_STR) {
        if (avail < 2) return NULL;
        es = 2 + (((uint64_t)(b & 0x0F) << 8) | p[1]);
    } else {
        switch (b) {
        case ENC_32BIT_STR:
            if (avail < 5) return NULL;
            es = 5 + (uint64_t)rdU32(p + 1);
            break;
        case ENC_16BIT_INT: es = 3; break;
        case ENC_24BIT_INT: es = 4; break;
        case ENC_32BIT_INT: es = 5; break;
        case ENC_64BIT_INT: es = 9; break;
        default: return NULL; /* 0xF5..0xFE unused, 0xFF only at the end */
        }
    }
    if (es > avail) return NULL;
    if (es <= 127) { /* the common case: a one-byte backlen equal to es */
        if (es + 1 > avail || p[es] != es) return NULL;
        return p + es + 1;
    }
    unsigned char bl[5];
    size_t bllen = encodeBacklen(bl, es);
    if (es + bllen > avail || memcmp(p + es, bl, bllen) != 0) return NULL;
    return p + es + bllen;
}

int lpValidateIntegrity(unsigned char *lp, size_t size, int deep) {
    if (!lp || size < LP_HDR_SIZE + 1) return 0;
    if (rdU32(lp) != size) return 0;
    unsigned char *eof = lp + size - 1;
    if (eof[0] != LP_EOF) return 0;
    if (!deep) return 1;
    unsigned long n = 0;
    unsigned char *p = lp + LP_HDR_SIZE;
    while (p < eof) {
        p = validateEntry(p, eof);
        if (!p) return 0;
        n++;
    }
    uint32_t hc = hdrCount(lp);
    return hc == LP_COUNT_UNKNOWN || hc == n;
}

/* --- duplicates (loading hashes and sorted sets from RDB) --- */

/* A multiply-xorshift hash, eight bytes per step. */
static uint64_t textHash(const unsigned char *s, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        s += 8;
        len -= 8;
    }
    uint64_t w = 0;
    if (len >= 4) { /* two overlapping 4-byte reads cover 4..7 bytes */
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        w = (uint64_t)a << 32 | b;
    } else {
        for (size_t i = 0; i < len; i++) w |= (uint64_t)s[i] << (8 * i);
    }
    h = (h ^ w) * 0x94D049BB133111EBULL;
    return h ^ (h >> 29);
}

void lpDupInit(LpDupSet *d, unsigned long n) {
    size_t slots = 16;
    while (slots < n * 2) slots <<= 1;
    d->mask = slots - 1;
    d->slots = slots <= LP_DUP_INLINE ? d->inline_ : xmalloc(slots * sizeof(*d->slots));
    memset(d->slots, 0, slots * sizeof(*d->slots));
}

int lpDupAdd(LpDupSet *d, unsigned char *lp, unsigned char *p, const unsigned char *v, size_t len) {
    uint64_t h = textHash(v, len);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t k = (size_t)h & d->mask;
    while (d->slots[k].off) {
        if (d->slots[k].tag == tag && lpCompare(lp + d->slots[k].off, v, len)) return 1;
        k = (k + 1) & d->mask;
    }
    d->slots[k].tag = tag;
    d->slots[k].off = (uint32_t)(p - lp);
    return 0;
}

void lpDupFree(LpDupSet *d) {
    if (d->slots != d->inline_) xfree(d->slots);
}

int lpHasDuplicates(unsigned char *lp, unsigned int step) {
    unsigned long n = (lpLength(lp) + step - 1) / step;
    if (n < 2) return 0;
    LpDupSet d;
    lpDupInit(&d, n);
    int dup = 0;
    unsigned long i = 0;
    for (unsigned char *p = lpFirst(lp); p && !dup; p = lpNext(lp, p), i++) {
        if (i % step) continue;
        unsigned char buf[LP_INTBUF_SIZE];
        unsigned int len;
        unsigned char *v = lpGetValue(p, &len, buf, NULL, NULL);
        dup = lpDupAdd(&d, lp, p, v, len);
    }
    lpDupFree(&d);
    return dup;
}
