/* sds.c -- binary-safe dynamic strings (see sds.h for the layout).
 *
 * Every size change funnels through reshape(), which picks the header width
 * for the requested capacity, reallocates in place when the width is
 * unchanged and copies into a fresh block when it is not.  The capacity
 * recorded is what the allocator really handed out, so appends use the
 * allocator's rounding for free. */
#include "ds/sds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/util.h"

/* Strings this large or larger grow by a fixed step instead of doubling. */
#define SDS_GREEDY_LIMIT (1024 * 1024)

static size_t hdrSize(int type) {
    switch (type) {
    case SDS_TYPE_8: return sizeof(struct SdsHdr8);
    case SDS_TYPE_16: return sizeof(struct SdsHdr16);
    case SDS_TYPE_32: return sizeof(struct SdsHdr32);
    default: return sizeof(struct SdsHdr64);
    }
}

static size_t typeMax(int type) {
    switch (type) {
    case SDS_TYPE_8: return UINT8_MAX;
    case SDS_TYPE_16: return UINT16_MAX;
    case SDS_TYPE_32: return UINT32_MAX;
    default: return SIZE_MAX;
    }
}

static int typeFor(size_t cap) {
    if (cap <= UINT8_MAX) return SDS_TYPE_8;
    if (cap <= UINT16_MAX) return SDS_TYPE_16;
    if ((uint64_t)cap <= UINT32_MAX) return SDS_TYPE_32;
    return SDS_TYPE_64;
}

static int typeOf(const sds s) { return (unsigned char)s[-1] & SDS_TYPE_MASK; }

/* Store len/cap in the header of s (already carrying its flags) and write
 * the terminator. */
static void setFields(sds s, size_t len, size_t cap) {
    switch (typeOf(s)) {
    case SDS_TYPE_8:
        SDS_HDR(8, s)->len = (uint8_t)len;
        SDS_HDR(8, s)->cap = (uint8_t)cap;
        break;
    case SDS_TYPE_16:
        SDS_HDR(16, s)->len = (uint16_t)len;
        SDS_HDR(16, s)->cap = (uint16_t)cap;
        break;
    case SDS_TYPE_32:
        SDS_HDR(32, s)->len = (uint32_t)len;
        SDS_HDR(32, s)->cap = (uint32_t)cap;
        break;
    default:
        SDS_HDR(64, s)->len = len;
        SDS_HDR(64, s)->cap = cap;
        break;
    }
    s[len] = '\0';
}

static void overflow(void) {
    fprintf(stderr, "cairn: sds length out of range\n");
    abort();
}

/* Block size for a header of `type` and `cap` payload bytes plus the NUL. */
static size_t blockSize(int type, size_t cap) {
    size_t hs = hdrSize(type);
    if (cap > SIZE_MAX - hs - 1) overflow();
    return hs + cap + 1;
}

/* Capacity actually available in block `mem` of header `type`. */
static size_t usableCap(void *mem, int type) {
    size_t cap = xmallocSize(mem) - hdrSize(type) - 1;
    size_t max = typeMax(type);
    return cap > max ? max : cap;
}

/* Fresh string of capacity >= cap, length 0, bytes uninitialised.  With
 * slack, the capacity includes the spare bytes of the allocator's size
 * class (worth asking for when the string is being grown); without, it is
 * exactly cap (new strings: most are never appended to, and asking the
 * allocator for the block size is not free). */
static sds allocateIn(size_t cap, int slack, int big) {
    int type = typeFor(cap);
    char *mem = big ? xreallocBig(NULL, blockSize(type, cap)) : xmalloc(blockSize(type, cap));
    sds s = mem + hdrSize(type);
    s[-1] = (char)type;
    setFields(s, 0, slack ? usableCap(mem, type) : cap);
    return s;
}

static sds allocate(size_t cap, int slack) { return allocateIn(cap, slack, 0); }

/* Give s a capacity of (at least) cap bytes, truncating the length if cap is
 * smaller.  Returns the possibly moved string. */
static sds reshapeIn(sds s, size_t cap, int big) {
    int oldType = typeOf(s), newType = typeFor(cap);
    size_t len = sdsLen(s);
    if (len > cap) len = cap;
    if (oldType == newType) {
        size_t bs = blockSize(newType, cap);
        char *mem = big ? xreallocBig(sdsAllocPtr(s), bs) : xrealloc(sdsAllocPtr(s), bs);
        s = mem + hdrSize(newType);
        setFields(s, len, usableCap(mem, newType));
        return s;
    }
    sds n = allocateIn(cap, 1, big);
    memcpy(n, s, len);
    setFields(n, len, sdsCap(n));
    sdsFree(s);
    return n;
}

static sds reshape(sds s, size_t cap) { return reshapeIn(s, cap, 0); }

sds sdsNewLen(const void *init, size_t len) {
    if (len <= UINT8_MAX) { /* most strings: 3-byte header, written directly */
        struct SdsHdr8 *h = xmalloc(sizeof(*h) + len + 1);
        h->len = h->cap = (uint8_t)len;
        h->flags = SDS_TYPE_8;
        if (init)
            memcpy(h->buf, init, len);
        else
            memset(h->buf, 0, len);
        h->buf[len] = '\0';
        return h->buf;
    }
    sds s = allocate(len, 0);
    if (init)
        memcpy(s, init, len);
    else
        memset(s, 0, len);
    setFields(s, len, sdsCap(s));
    return s;
}

sds sdsNew(const char *cstr) { return sdsNewLen(cstr ? cstr : "", cstr ? strlen(cstr) : 0); }

sds sdsEmpty(void) { return sdsNewLen("", 0); }

sds sdsEmptyCap(size_t cap) { return allocate(cap, 0); }

sds sdsDup(const sds s) { return sdsNewLen(s, sdsLen(s)); }

/* Every free of a string's block.  A big string's pages may sit in the big
 * arena, which only a purge returns: tell the allocator, so its quiet-time
 * purge comes again (a value freed after the last purge would otherwise
 * stay resident). */
static void freeBlock(sds s) {
    if (typeOf(s) >= SDS_TYPE_32 && sdsCap(s) >= XMALLOC_BIG_MIN) xmallocBigFreed();
    xfree(sdsAllocPtr(s));
}

void sdsFree(sds s) {
    if (s) freeBlock(s);
}

/* The flags byte: type in bits 0-1, SDS_ORPHAN, the pin count from bit 3.
 * Every change is a compare-and-swap of the whole byte (the type bits are
 * never changed while a pin is out: nothing reallocates a pinned string). */
#define SDS_ORPHAN 4u
#define SDS_PIN_ONE 8u

static unsigned char *flagsOf(sds s) { return (unsigned char *)s - 1; }

int sdsPin(sds s) {
    unsigned char *p = flagsOf(s);
    unsigned char f = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    do {
        if ((f >> 3) >= SDS_PIN_MAX) return -1;
    } while (!__atomic_compare_exchange_n(p, &f, (unsigned char)(f + SDS_PIN_ONE), 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    return 0;
}

void sdsUnpin(sds s) {
    unsigned char *p = flagsOf(s);
    unsigned char f = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    do {
        if ((f >> 3) == 1 && (f & SDS_ORPHAN)) { /* the last pin of a string nobody owns */
            freeBlock(s);
            return;
        }
    } while (!__atomic_compare_exchange_n(p, &f, (unsigned char)(f - SDS_PIN_ONE), 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
}

void sdsDisown(sds s) {
    if (!s) return;
    unsigned char *p = flagsOf(s);
    unsigned char f = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    do {
        if ((f >> 3) == 0) {
            freeBlock(s);
            return;
        }
    } while (!__atomic_compare_exchange_n(p, &f, (unsigned char)(f | SDS_ORPHAN), 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
}

void sdsIncrLen(sds s, ssize_t incr) {
    size_t len = sdsLen(s);
    if (incr >= 0) {
        if ((size_t)incr > sdsCap(s) - len) overflow();
        len += (size_t)incr;
    } else {
        size_t dec = (size_t)0 - (size_t)incr;
        if (dec > len) overflow();
        len -= dec;
    }
    setFields(s, len, sdsCap(s));
}

void sdsClear(sds s) { setFields(s, 0, sdsCap(s)); }

static sds makeRoom(sds s, size_t addlen, int greedy) {
    if (sdsAvail(s) >= addlen) return s;
    size_t len = sdsLen(s);
    if (addlen > SIZE_MAX - len) overflow();
    size_t need = len + addlen;
    if (greedy) {
        if (need < SDS_GREEDY_LIMIT)
            need *= 2;
        else if (need <= SIZE_MAX - SDS_GREEDY_LIMIT)
            need += SDS_GREEDY_LIMIT;
    }
    return reshape(s, need);
}

sds sdsMakeRoomFor(sds s, size_t addlen) { return makeRoom(s, addlen, 1); }

sds sdsMakeRoomForNonGreedy(sds s, size_t addlen) { return makeRoom(s, addlen, 0); }

sds sdsMakeRoomForBig(sds s, size_t addlen) {
    if (sdsAvail(s) >= addlen) return s;
    if (addlen > SIZE_MAX - sdsLen(s)) overflow();
    return reshapeIn(s, sdsLen(s) + addlen, 1);
}

sds sdsRemoveFreeSpace(sds s) {
    if (sdsAvail(s) == 0) return s;
    return reshape(s, sdsLen(s));
}

sds sdsResize(sds s, size_t size) { return reshape(s, size); }

sds sdsGrowZero(sds s, size_t len) {
    size_t cur = sdsLen(s);
    if (len <= cur) return s;
    s = sdsMakeRoomFor(s, len - cur);
    memset(s + cur, 0, len - cur + 1);
    sdsSetLen(s, len);
    return s;
}

sds sdsCatLen(sds s, const void *t, size_t len) {
    size_t cur = sdsLen(s);
    /* t may point into s itself (sdsCatSds(s, s)); growing would free it. */
    const char *src = t;
    int inside = src >= s && src <= s + cur;
    size_t off = inside ? (size_t)(src - s) : 0;
    s = sdsMakeRoomFor(s, len);
    memmove(s + cur, inside ? s + off : src, len);
    sdsSetLen(s, cur + len);
    return s;
}

sds sdsCat(sds s, const char *t) { return sdsCatLen(s, t, strlen(t)); }

sds sdsCatSds(sds s, const sds t) { return sdsCatLen(s, t, sdsLen(t)); }

sds sdsCpyLen(sds s, const char *t, size_t len) {
    if (sdsCap(s) < len) s = sdsMakeRoomFor(s, len - sdsLen(s));
    memmove(s, t, len);
    sdsSetLen(s, len);
    return s;
}

sds sdsCpy(sds s, const char *t) { return sdsCpyLen(s, t, strlen(t)); }

sds sdsCatVPrintf(sds s, const char *fmt, va_list ap) {
    char small[256];
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(small, sizeof(small), fmt, cp);
    va_end(cp);
    if (n < 0) return s; /* encoding error: append nothing */
    if ((size_t)n < sizeof(small)) return sdsCatLen(s, small, (size_t)n);
    size_t cur = sdsLen(s);
    s = sdsMakeRoomFor(s, (size_t)n);
    va_copy(cp, ap);
    vsnprintf(s + cur, (size_t)n + 1, fmt, cp);
    va_end(cp);
    sdsSetLen(s, cur + (size_t)n);
    return s;
}

sds sdsCatPrintf(sds s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    s = sdsCatVPrintf(s, fmt, ap);
    va_end(ap);
    return s;
}

sds sdsCatRepr(sds s, const char *p, size_t len) {
    static const char hex[] = "0123456789abcdef";
    s = sdsMakeRoomFor(s, len + 2);
    s = sdsCatLen(s, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        char esc[4];
        size_t n = 2;
        esc[0] = '\\';
        switch (c) {
        case '\\': esc[1] = '\\'; break;
        case '"': esc[1] = '"'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\a': esc[1] = 'a'; break;
        case '\b': esc[1] = 'b'; break;
        default:
            if (c >= 0x20 && c <= 0x7e) {
                esc[0] = (char)c;
                n = 1;
            } else {
                esc[1] = 'x';
                esc[2] = hex[c >> 4];
                esc[3] = hex[c & 15];
                n = 4;
            }
        }
        s = sdsCatLen(s, esc, n);
    }
    return sdsCatLen(s, "\"", 1);
}

sds sdsFromLongLong(long long v) {
    char buf[UTIL_LONG_STR_SIZE];
    int n = longLongToString(buf, sizeof(buf), v);
    return sdsNewLen(buf, (size_t)n);
}

void sdsRange(sds s, ssize_t start, ssize_t end) {
    size_t len = sdsLen(s);
    if (len == 0) return;
    ssize_t slen = (ssize_t)len;
    if (start < 0) start = start + slen < 0 ? 0 : start + slen;
    if (end < 0) end = end + slen < 0 ? 0 : end + slen;
    size_t newlen = 0;
    if (start <= end && start < slen) {
        if (end >= slen) end = slen - 1;
        newlen = (size_t)(end - start) + 1;
        if (start > 0) memmove(s, s + start, newlen);
    }
    sdsSetLen(s, newlen);
}

sds sdsTrim(sds s, const char *cset) {
    size_t len = sdsLen(s), lo = 0, hi = len;
    while (lo < hi && s[lo] && strchr(cset, s[lo])) lo++;
    while (hi > lo && s[hi - 1] && strchr(cset, s[hi - 1])) hi--;
    if (lo > 0) memmove(s, s + lo, hi - lo);
    sdsSetLen(s, hi - lo);
    return s;
}

void sdsToLower(sds s) {
    size_t len = sdsLen(s);
    for (size_t i = 0; i < len; i++)
        if (s[i] >= 'A' && s[i] <= 'Z') s[i] = (char)(s[i] + ('a' - 'A'));
}

void sdsToUpper(sds s) {
    size_t len = sdsLen(s);
    for (size_t i = 0; i < len; i++)
        if (s[i] >= 'a' && s[i] <= 'z') s[i] = (char)(s[i] - ('a' - 'A'));
}

int sdsCmp(const sds a, const sds b) {
    size_t la = sdsLen(a), lb = sdsLen(b);
    int c = memcmp(a, b, la < lb ? la : lb);
    if (c) return c;
    return la < lb ? -1 : la > lb ? 1 : 0;
}

size_t sdsAllocSize(const sds s) { return xmallocSize(sdsAllocPtr(s)); }

void *sdsAllocPtr(const sds s) { return s - hdrSize(typeOf(s)); }

/* Growable array of tokens used by the splitters. */
typedef struct {
    sds *v;   /* tokens */
    int n;    /* used */
    int slots; /* allocated */
} TokenVec;

static void tokenPush(TokenVec *tv, sds tok) {
    if (tv->n == tv->slots) {
        tv->slots = tv->slots ? tv->slots * 2 : 4;
        tv->v = xrealloc(tv->v, sizeof(sds) * (size_t)tv->slots);
    }
    tv->v[tv->n++] = tok;
}

static sds *tokenFinish(TokenVec *tv, int *count) {
    if (!tv->v) tv->v = xmalloc(sizeof(sds));
    *count = tv->n;
    return tv->v;
}

sds *sdsSplitLen(const char *s, ssize_t len, const char *sep, int seplen, int *count) {
    TokenVec tv = {0};
    *count = 0;
    if (len < 0 || seplen < 1) return NULL;
    size_t ulen = (size_t)len, usep = (size_t)seplen, start = 0;
    if (ulen == 0) return tokenFinish(&tv, count);
    for (size_t i = 0; i + usep <= ulen;) {
        if (memcmp(s + i, sep, usep) == 0) {
            tokenPush(&tv, sdsNewLen(s + start, i - start));
            i += usep;
            start = i;
        } else {
            i++;
        }
    }
    tokenPush(&tv, sdsNewLen(s + start, ulen - start));
    return tokenFinish(&tv, count);
}

static int isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int hexVal(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Scan a double-quoted section; *pp points just past the opening quote and
 * is left just past the closing one.  Returns 0 on success, -1 if the quote
 * is unterminated or not followed by whitespace/end. */
static int scanDoubleQuoted(const char **pp, sds *tok) {
    const char *p = *pp;
    for (;;) {
        if (*p == '\0') return -1;
        if (p[0] == '\\' && p[1] == 'x' && hexVal(p[2]) >= 0 && hexVal(p[3]) >= 0) {
            char c = (char)(hexVal(p[2]) * 16 + hexVal(p[3]));
            *tok = sdsCatLen(*tok, &c, 1);
            p += 4;
        } else if (p[0] == '\\' && p[1]) {
            char c;
            switch (p[1]) {
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'a': c = '\a'; break;
            default: c = p[1]; break;
            }
            *tok = sdsCatLen(*tok, &c, 1);
            p += 2;
        } else if (*p == '"') {
            if (p[1] && !isSpace(p[1])) return -1;
            *pp = p + 1;
            return 0;
        } else {
            *tok = sdsCatLen(*tok, p, 1);
            p++;
        }
    }
}

/* Single-quoted counterpart of scanDoubleQuoted: only \' is an escape. */
static int scanSingleQuoted(const char **pp, sds *tok) {
    const char *p = *pp;
    for (;;) {
        if (*p == '\0') return -1;
        if (p[0] == '\\' && p[1] == '\'') {
            *tok = sdsCatLen(*tok, "'", 1);
            p += 2;
        } else if (*p == '\'') {
            if (p[1] && !isSpace(p[1])) return -1;
            *pp = p + 1;
            return 0;
        } else {
            *tok = sdsCatLen(*tok, p, 1);
            p++;
        }
    }
}

/* Length of the run of plain bytes at p: those that neither end a token
 * nor open a quoted section. */
static size_t plainRun(const char *p) {
    const char *s = p;
    while (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0' && *p != '"' && *p != '\'')
        p++;
    return (size_t)(p - s);
}

sds *sdsSplitArgs(const char *line, int *argc) {
    TokenVec tv = {0};
    const char *p = line;
    *argc = 0;
    for (;;) {
        while (*p && isSpace(*p)) p++;
        if (*p == '\0') return tokenFinish(&tv, argc);
        /* A run of plain bytes is copied at once: most tokens are just
         * that. */
        size_t run = plainRun(p);
        sds tok = sdsNewLen(p, run);
        p += run;
        int done = 0;
        while (!done) {
            int rc = 0;
            switch (*p) {
            case ' ':
            case '\n':
            case '\r':
            case '\t':
            case '\0': done = 1; break;
            case '"':
                p++;
                rc = scanDoubleQuoted(&p, &tok);
                done = 1;
                break;
            case '\'':
                p++;
                rc = scanSingleQuoted(&p, &tok);
                done = 1;
                break;
            default:
                run = plainRun(p);
                tok = sdsCatLen(tok, p, run);
                p += run;
                break;
            }
            if (rc) {
                sdsFree(tok);
                sdsFreeSplitRes(tv.v, tv.n);
                *argc = 0;
                return NULL;
            }
        }
        tokenPush(&tv, tok);
    }
}

void sdsFreeSplitRes(sds *tokens, int count) {
    if (!tokens) return;
    for (int i = 0; i < count; i++) sdsFree(tokens[i]);
    xfree(tokens);
}

sds sdsJoin(char **argv, int argc, const char *sep) {
    sds s = sdsEmpty();
    for (int i = 0; i < argc; i++) {
        if (i) s = sdsCat(s, sep);
        s = sdsCat(s, argv[i]);
    }
    return s;
}
