/* pack.c -- the packed form of small listpacks and intsets (see pack.h for
 * the format and its contract).
 *
 * Invariants: encoders write only inside out[0..cap) and report 0 rather
 * than truncate; decoders read only inside p[0..len), allocate at most the
 * declared original size (itself at most PACK_MAX_ORIG) plus small
 * constants, and check the rebuilt value's size against the declared one. */
#include "ds/pack.h"

#include <stdint.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/listpack.h"

/* --- varints and zigzag --- */

typedef struct Out {
    unsigned char *p;
    size_t len, cap;
    int full; /* a write did not fit */
} Out;

static void outByte(Out *o, unsigned char b) {
    if (o->len < o->cap) o->p[o->len++] = b;
    else o->full = 1;
}

static void outBytes(Out *o, const void *b, size_t n) {
    if (n > o->cap - o->len) {
        o->full = 1;
        return;
    }
    memcpy(o->p + o->len, b, n);
    o->len += n;
}

static void outVarint(Out *o, uint64_t v) {
    while (v >= 0x80) {
        outByte(o, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    outByte(o, (unsigned char)v);
}

static size_t varintLen(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

typedef struct In {
    const unsigned char *p;
    size_t len, pos;
    int bad;
} In;

static unsigned inByte(In *in) {
    if (in->pos >= in->len) {
        in->bad = 1;
        return 0;
    }
    return in->p[in->pos++];
}

static uint64_t inVarint(In *in) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        unsigned b = inByte(in);
        if (in->bad) return 0;
        if (shift == 63 && b > 1) break; /* more than 64 bits */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    in->bad = 1;
    return 0;
}

static uint64_t zigzag(uint64_t d) { return (d << 1) ^ (0 - (d >> 63)); }
static uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/* --- listpacks --- */

#define ROLES 2

static void encodeInt(Out *o, uint64_t *prev, long long v) {
    uint64_t z = zigzag((uint64_t)v - *prev);
    *prev = (uint64_t)v;
    if (z < 63) {
        outByte(o, (unsigned char)(0x40 | z));
    } else {
        outByte(o, 0x7f);
        outVarint(o, z - 63);
    }
}

static void encodeStr(Out *o, const unsigned char **prevS, size_t *prevLen, const unsigned char *s, size_t len) {
    size_t p = 0, max = len < *prevLen ? len : *prevLen;
    while (p < max && s[p] == (*prevS)[p]) p++;
    size_t suf = len - p;
    if (p < 16 && suf < 8) {
        outByte(o, (unsigned char)(0x80 | (p << 3) | suf));
    } else {
        outByte(o, 0);
        outVarint(o, p);
        outVarint(o, suf);
    }
    outBytes(o, s + p, suf);
    *prevS = s;
    *prevLen = len;
}

size_t packListpack(const unsigned char *lp, unsigned stride, unsigned char *out, size_t cap) {
    if (stride < 1 || stride > ROLES) return 0;
    size_t orig = lpBytes(lp);
    if (orig > PACK_MAX_ORIG || orig < LP_EMPTY_BYTES) return 0;
    unsigned long count = lpLength(lp);
    /* The body first, in out after room for the longest length varint. */
    if (cap < 4) return 0;
    Out o = {.p = out + 3, .cap = cap - 3};
    outVarint(&o, orig);
    outVarint(&o, count);
    const unsigned char *prevS[ROLES] = {(const unsigned char *)"", (const unsigned char *)""};
    size_t prevLen[ROLES] = {0, 0};
    uint64_t prevI[ROLES] = {0, 0};
    unsigned long i = 0;
    for (unsigned char *e = lpFirst((unsigned char *)lp); e && !o.full; e = lpNext((unsigned char *)lp, e), i++) {
        unsigned role = (unsigned)(i % stride);
        unsigned int len;
        int isInt;
        long long v;
        unsigned char *s = lpGetValue(e, &len, NULL, &isInt, &v);
        if (isInt) encodeInt(&o, &prevI[role], v);
        else encodeStr(&o, &prevS[role], &prevLen[role], s, len);
    }
    if (o.full || i != count) return 0;
    size_t body = o.len, hdr = varintLen(body);
    memmove(out + hdr, out + 3, body);
    Out h = {.p = out, .cap = hdr};
    outVarint(&h, body);
    size_t total = hdr + body;
    /* Only a form that rebuilds the very same bytes. */
    unsigned char *back = unpackListpack(out, total, stride);
    int same = back && lpBytes(back) == orig && memcmp(back, lp, orig) == 0;
    if (back) lpFree(back);
    return same ? total : 0;
}

size_t packLength(const unsigned char *p, size_t avail) {
    In in = {.p = p, .len = avail};
    uint64_t body = inVarint(&in);
    if (in.bad || body > avail - in.pos) return 0;
    return in.pos + (size_t)body;
}

/* The body of the blob p[0..len): its bounds, or bad. */
static int openBody(In *in, const unsigned char *p, size_t len) {
    size_t total = packLength(p, len);
    if (!total || total != len) return -1;
    In h = {.p = p, .len = len};
    inVarint(&h);
    *in = (In){.p = p + h.pos, .len = total - h.pos};
    return 0;
}

unsigned char *unpackListpack(const unsigned char *p, size_t len, unsigned stride) {
    In in;
    if (stride < 1 || stride > ROLES || openBody(&in, p, len) < 0) return NULL;
    uint64_t orig = inVarint(&in), count = inVarint(&in);
    /* Each listpack element takes at least 2 bytes. */
    if (in.bad || orig > PACK_MAX_ORIG || orig < LP_EMPTY_BYTES || count > (orig - LP_EMPTY_BYTES) / 2) return NULL;
    /* Strings are rebuilt into scratch: their bytes all appear in the
     * listpack, so orig bytes hold them. */
    unsigned char *scratch = xmalloc((size_t)orig);
    LpItem *items = xmalloc(sizeof(LpItem) * (count ? (size_t)count : 1));
    size_t used = 0;
    const unsigned char *prevS[ROLES] = {scratch, scratch};
    size_t prevLen[ROLES] = {0, 0};
    uint64_t prevI[ROLES] = {0, 0};
    int bad = 0;
    for (uint64_t i = 0; i < count && !bad; i++) {
        unsigned role = (unsigned)(i % stride);
        unsigned tag = inByte(&in);
        if (in.bad) {
            bad = 1;
            break;
        }
        if ((tag & 0xc0) == 0x40) { /* integer */
            uint64_t z = tag & 0x3f;
            if (z == 63) {
                uint64_t more = inVarint(&in);
                if (in.bad || more > UINT64_MAX - 63) {
                    bad = 1;
                    break;
                }
                z += more;
            }
            prevI[role] += unzigzag(z);
            items[i] = (LpItem){.s = NULL, .len = 0, .v = (long long)prevI[role]};
            continue;
        }
        uint64_t pre, suf;
        if (tag & 0x80) {
            pre = (tag >> 3) & 15;
            suf = tag & 7;
        } else if (tag == 0) {
            pre = inVarint(&in);
            suf = inVarint(&in);
            if (in.bad) {
                bad = 1;
                break;
            }
        } else {
            bad = 1;
            break;
        }
        if (pre > prevLen[role] || suf > orig - used || pre > orig - used - suf || suf > in.len - in.pos) {
            bad = 1;
            break;
        }
        unsigned char *s = scratch + used;
        memmove(s, prevS[role], (size_t)pre);
        memcpy(s + pre, in.p + in.pos, (size_t)suf);
        in.pos += (size_t)suf;
        used += (size_t)(pre + suf);
        prevS[role] = s;
        prevLen[role] = (size_t)(pre + suf);
        items[i] = (LpItem){.s = s, .len = (size_t)(pre + suf), .v = 0};
    }
    unsigned char *lp = NULL;
    if (!bad && in.pos == in.len) {
        /* An item's encoding is at most its bytes + 11 (header, backlen), so
         * the sum is bounded by orig-derived sizes: no overflow. */
        lp = lpNew((size_t)orig);
        lp = lpAppendItems(lp, items, (size_t)count);
        if (lpBytes(lp) != orig) {
            lpFree(lp);
            lp = NULL;
        }
    }
    xfree(items);
    xfree(scratch);
    return lp;
}

/* --- intsets --- */

static uint32_t rdU32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wrU32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static long long rdInt(const unsigned char *p, unsigned width) {
    uint64_t u = 0;
    for (unsigned i = 0; i < width; i++) u |= (uint64_t)p[i] << (8 * i);
    if (width < 8 && (u >> (8 * width - 1)) & 1) u |= ~0ull << (8 * width); /* sign-extend */
    return (long long)u;
}

static void wrInt(unsigned char *p, unsigned width, long long v) {
    for (unsigned i = 0; i < width; i++) p[i] = (unsigned char)((uint64_t)v >> (8 * i));
}

size_t packIntset(const unsigned char *is, size_t isBytes, unsigned char *out, size_t cap) {
    if (isBytes < 8 || isBytes > PACK_MAX_ORIG || cap < 4) return 0;
    uint32_t width = rdU32(is), count = rdU32(is + 4);
    if ((width != 2 && width != 4 && width != 8) || (size_t)count * width != isBytes - 8) return 0;
    Out o = {.p = out + 3, .cap = cap - 3};
    outByte(&o, (unsigned char)width);
    outVarint(&o, count);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count && !o.full; i++) {
        long long v = rdInt(is + 8 + (size_t)i * width, width);
        outVarint(&o, zigzag((uint64_t)v - prev));
        prev = (uint64_t)v;
    }
    if (o.full) return 0;
    size_t body = o.len, hdr = varintLen(body);
    memmove(out + hdr, out + 3, body);
    Out h = {.p = out, .cap = hdr};
    outVarint(&h, body);
    size_t total = hdr + body, n;
    unsigned char *back = unpackIntset(out, total, &n);
    int same = back && n == isBytes && memcmp(back, is, n) == 0;
    if (back) xfree(back);
    return same ? total : 0;
}

unsigned char *unpackIntset(const unsigned char *p, size_t len, size_t *bytes) {
    In in;
    if (openBody(&in, p, len) < 0) return NULL;
    unsigned width = inByte(&in);
    uint64_t count = inVarint(&in);
    if (in.bad || (width != 2 && width != 4 && width != 8)) return NULL;
    /* Each value takes at least one byte of the blob. */
    if (count > in.len - in.pos || count * width > PACK_MAX_ORIG) return NULL;
    size_t n = 8 + (size_t)count * width;
    unsigned char *is = xmalloc(n);
    wrU32(is, width);
    wrU32(is + 4, (uint32_t)count);
    uint64_t prev = 0;
    long long lo = width == 8 ? INT64_MIN : -(1ll << (8 * width - 1)), hi = width == 8 ? INT64_MAX : (1ll << (8 * width - 1)) - 1;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t z = inVarint(&in);
        if (in.bad) break;
        uint64_t v = prev + unzigzag(z);
        /* Ascending, unique and within the width, as an intset must be. */
        if ((i > 0 && (long long)v <= (long long)prev) || (long long)v < lo || (long long)v > hi) {
            in.bad = 1;
            break;
        }
        wrInt(is + 8 + (size_t)i * width, width, (long long)v);
        prev = v;
    }
    if (in.bad || in.pos != in.len) {
        xfree(is);
        return NULL;
    }
    *bytes = n;
    return is;
}
