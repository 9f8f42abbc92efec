/* hll.c -- HyperLogLog sketches in Redis's HYLL format (see hll.h).
 *
 * The sparse writer reproduces Redis's edits byte for byte: the opcode that
 * covers the register is replaced by at most five opcodes (a zero run
 * before, the new VAL, a zero run after; or the VAL split in three), and then
 * up to five opcodes from the one before it are scanned to merge adjacent
 * VALs of equal value.  Growing past the sparse limit, or a value above 32,
 * converts the sketch to dense first. */
#include "ds/hll.h"

#include <math.h>
#include <string.h>

#define HLL_Q (64 - HLL_P)
#define HLL_SEED 0xadc83b19ULL
#define HLL_ALPHA_INF 0.721347520444481703680

/* Opcode tests and fields. */
#define OP_IS_ZERO(b) (((b) & 0xc0) == 0)
#define OP_IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define OP_IS_VAL(b) (((b) & 0x80) != 0)
#define OP_ZERO_LEN(b) (((b) & 0x3f) + 1)
#define OP_VAL_VALUE(b) ((((b) >> 2) & 0x1f) + 1)
#define OP_VAL_LEN(b) (((b) & 0x3) + 1)
#define ZERO_MAX 64
#define VAL_MAX_LEN 4

static unsigned char opVal(unsigned val, unsigned len) { return (unsigned char)(0x80 | ((val - 1) << 2) | (len - 1)); }

/* Length of the XZERO at p.  A lone XZERO byte at the end reads the byte
 * after the string (end[0]: see hll.h). */
static long xzeroLen(const unsigned char *p, const unsigned char *end) {
    (void)end;
    return (long)((((unsigned)p[0] & 0x3f) << 8) | p[1]) + 1;
}

/* Writes a zero run of len (1..16384) at n; returns the bytes used. */
static int putZeroRun(unsigned char *n, long len) {
    if (len > ZERO_MAX) {
        n[0] = (unsigned char)(0x40 | ((len - 1) >> 8));
        n[1] = (unsigned char)((len - 1) & 0xff);
        return 2;
    }
    n[0] = (unsigned char)(len - 1);
    return 1;
}

uint64_t hllMurmur64A(const void *key, size_t len, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    const unsigned char *data = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++) {
        uint64_t k;
        memcpy(&k, data + 8 * i, 8);
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    const unsigned char *tail = data + 8 * blocks;
    size_t rest = len & 7;
    if (rest) {
        for (size_t i = rest; i-- > 0;) h ^= (uint64_t)tail[i] << (8 * i);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hllPatLen(const unsigned char *ele, size_t len, long *index) {
    uint64_t hash = hllMurmur64A(ele, len, HLL_SEED);
    *index = (long)(hash & (HLL_REGISTERS - 1));
    hash >>= HLL_P;
    hash |= 1ULL << HLL_Q;
    return __builtin_ctzll(hash) + 1;
}

sds hllCreate(void) {
    sds s = sdsNewLen(NULL, HLL_HDR_SIZE + 2);
    unsigned char *p = (unsigned char *)s;
    memcpy(p, "HYLL", 4);
    p[4] = HLL_SPARSE;
    putZeroRun(p + HLL_HDR_SIZE, HLL_REGISTERS);
    return s;
}

int hllIsValid(const unsigned char *s, size_t len) {
    if (len < HLL_HDR_SIZE || memcmp(s, "HYLL", 4) != 0) return 0;
    if (s[4] > HLL_SPARSE) return 0;
    if (s[4] == HLL_DENSE && len != HLL_DENSE_SIZE) return 0;
    return 1;
}

int hllCacheGet(const unsigned char *s, uint64_t *card) {
    if (s[15] & 0x80) return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | s[8 + i];
    *card = v;
    return 1;
}

void hllCacheSet(unsigned char *s, uint64_t card) {
    for (int i = 0; i < 8; i++) s[8 + i] = (unsigned char)(card >> (8 * i));
}

void hllCacheInvalidate(unsigned char *s) { s[15] |= 0x80; }

unsigned hllDenseGet(const unsigned char *regs, long i) {
    size_t bit = (size_t)i * HLL_BITS, byte = bit / 8;
    unsigned fb = bit & 7;
    unsigned b0 = regs[byte];
    unsigned b1 = byte + 1 < HLL_DENSE_BYTES ? regs[byte + 1] : 0;
    return ((b0 >> fb) | (b1 << (8 - fb))) & 63;
}

void hllDenseSetReg(unsigned char *regs, long i, unsigned val) {
    size_t bit = (size_t)i * HLL_BITS, byte = bit / 8;
    unsigned fb = bit & 7;
    regs[byte] = (unsigned char)((regs[byte] & ~(63u << fb)) | (val << fb));
    if (fb > 2) {
        unsigned fb8 = 8 - fb;
        regs[byte + 1] = (unsigned char)((regs[byte + 1] & ~(63u >> fb8)) | (val >> fb8));
    }
}

/* Raise a dense register: 1 if it changed. */
static int denseRaise(unsigned char *regs, long index, unsigned val) {
    if (val <= hllDenseGet(regs, index)) return 0;
    hllDenseSetReg(regs, index, val);
    return 1;
}

int hllToDense(sds *ps) {
    const unsigned char *src = (const unsigned char *)*ps;
    size_t len = sdsLen(*ps);
    if (src[4] == HLL_DENSE) return 0;
    sds d = sdsNewLen(NULL, HLL_DENSE_SIZE);
    unsigned char *regs = (unsigned char *)d + HLL_HDR_SIZE;
    memcpy(d, src, HLL_HDR_SIZE);
    d[4] = HLL_DENSE;
    const unsigned char *p = src + HLL_HDR_SIZE, *end = src + len;
    long idx = 0;
    while (p < end && idx <= HLL_REGISTERS) {
        if (OP_IS_ZERO(*p)) {
            idx += OP_ZERO_LEN(*p);
            p++;
        } else if (OP_IS_XZERO(*p)) {
            idx += xzeroLen(p, end);
            p += 2;
        } else {
            long run = OP_VAL_LEN(*p);
            unsigned val = OP_VAL_VALUE(*p);
            if (idx + run > HLL_REGISTERS) {
                idx = -1; /* a VAL past the last register */
                break;
            }
            while (run--) hllDenseSetReg(regs, idx++, val);
            p++;
        }
    }
    if (idx != HLL_REGISTERS) {
        sdsFree(d);
        return -1;
    }
    sdsFree(*ps);
    *ps = d;
    return 0;
}

/* Merges adjacent equal VALs, scanning up to five opcodes from p. */
static void sparseMergeAround(sds s, unsigned char *p) {
    unsigned char *end = (unsigned char *)s + sdsLen(s);
    int scan = 5;
    while (p < end && scan--) {
        if (OP_IS_XZERO(*p)) {
            p += 2;
            continue;
        }
        if (OP_IS_ZERO(*p)) {
            p++;
            continue;
        }
        if (p + 1 < end && OP_IS_VAL(p[1]) && OP_VAL_VALUE(p[0]) == OP_VAL_VALUE(p[1])) {
            unsigned len = OP_VAL_LEN(p[0]) + OP_VAL_LEN(p[1]);
            if (len <= VAL_MAX_LEN) {
                p[1] = opVal(OP_VAL_VALUE(p[0]), len);
                memmove(p, p + 1, (size_t)(end - p));
                sdsIncrLen(s, -1);
                end--;
                continue;
            }
        }
        p++;
    }
}

/* The sparse writer; see the file comment. */
static int sparseSet(sds *ps, long index, unsigned count, size_t sparseMax) {
    if (count > HLL_SPARSE_VAL_MAX) goto promote;
    char after = (*ps)[sdsLen(*ps)];
    sds s = sdsMakeRoomFor(*ps, 8);
    s[sdsLen(s)] = after; /* growing keeps the byte after the string */
    *ps = s;
    unsigned char *base = (unsigned char *)s + HLL_HDR_SIZE;
    unsigned char *p = base, *end = (unsigned char *)s + sdsLen(s), *prev = NULL;
    long first = 0, span = 0;
    while (p < end) {
        long oplen = 1;
        if (OP_IS_ZERO(*p)) span = OP_ZERO_LEN(*p);
        else if (OP_IS_VAL(*p)) span = OP_VAL_LEN(*p);
        else {
            span = xzeroLen(p, end);
            oplen = 2;
        }
        if (index <= first + span - 1) break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) return -1;
    int isXzero = OP_IS_XZERO(*p), isZero = OP_IS_ZERO(*p), isVal = OP_IS_VAL(*p);
    unsigned char *next = p + (isXzero ? 2 : 1);
    if (next >= end) next = NULL;

    if (isVal) {
        if ((unsigned)OP_VAL_VALUE(*p) >= count) return 0;
        if (span == 1) {
            *p = opVal(count, 1);
            goto updated;
        }
    }
    if (isZero && span == 1) {
        *p = opVal(count, 1);
        goto updated;
    }

    unsigned char seq[5], *n = seq;
    long last = first + span - 1;
    if (isVal) {
        unsigned cur = OP_VAL_VALUE(*p);
        if (index != first) *n++ = opVal(cur, (unsigned)(index - first));
        *n++ = opVal(count, 1);
        if (index != last) *n++ = opVal(cur, (unsigned)(last - index));
    } else {
        if (index != first) n += putZeroRun(n, index - first);
        *n++ = opVal(count, 1);
        if (index != last) n += putZeroRun(n, last - index);
    }
    long seqlen = n - seq, oldlen = isXzero ? 2 : 1, delta = seqlen - oldlen;
    if (delta > 0 && sdsLen(s) + (size_t)delta > sparseMax) goto promote;
    if (delta && next) memmove(next + delta, next, (size_t)(end - next));
    sdsIncrLen(s, delta);
    memcpy(p, seq, (size_t)seqlen); /* past the end when a lone XZERO byte was split */

updated:
    sparseMergeAround(s, prev ? prev : base);
    hllCacheInvalidate((unsigned char *)s);
    return 1;

promote:
    if (hllToDense(ps) == -1) return -1;
    return denseRaise((unsigned char *)*ps + HLL_HDR_SIZE, index, count);
}

int hllSetRegister(sds *s, long index, unsigned val, size_t sparseMax) {
    if (((unsigned char *)*s)[4] == HLL_DENSE) return denseRaise((unsigned char *)*s + HLL_HDR_SIZE, index, val);
    return sparseSet(s, index, val, sparseMax);
}

int hllAdd(sds *s, const unsigned char *ele, size_t len, size_t sparseMax) {
    long index;
    int count = hllPatLen(ele, len, &index);
    return hllSetRegister(s, index, (unsigned)count, sparseMax);
}

/* Registers 4k..4k+3 of a dense sketch: the 24 little-endian bits at byte
 * 3k, 6 bits each. */
static uint32_t denseQuad(const unsigned char *regs, long k) {
    const unsigned char *q = regs + 3 * k;
    return (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16);
}

/* All 16,384 dense registers, one byte each.  Eight registers (six bytes)
 * at a time: the 48 bits are spread to 24-bit, 12-bit, then 6-bit fields
 * one byte apart. */
static void denseUnpack(const unsigned char *regs, uint8_t *out) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (long k = 0; k < HLL_REGISTERS / 8; k++) {
        uint64_t x = 0;
        memcpy(&x, regs + 6 * k, 6);
        x = (x & 0xFFFFFFULL) | ((x & 0xFFFFFF000000ULL) << 8);
        x = (x & 0x00000FFF00000FFFULL) | ((x & 0x00FFF00000FFF000ULL) << 4);
        x = (x & 0x003F003F003F003FULL) | ((x & 0x0FC00FC00FC00FC0ULL) << 2);
        memcpy(out + 8 * k, &x, 8);
    }
#else
    for (long i = 0; i < HLL_REGISTERS; i++) out[i] = (uint8_t)hllDenseGet(regs, i);
#endif
}

int hllMergeInto(uint8_t *max, const unsigned char *s, size_t len) {
    if (s[4] == HLL_DENSE) {
        /* Unpack, then a plain byte-wise max the compiler vectorizes. */
        uint8_t regs[HLL_REGISTERS];
        denseUnpack(s + HLL_HDR_SIZE, regs);
        for (long i = 0; i < HLL_REGISTERS; i++) max[i] = regs[i] > max[i] ? regs[i] : max[i];
        return 0;
    }
    const unsigned char *p = s + HLL_HDR_SIZE, *end = s + len;
    long i = 0;
    while (p < end && i <= HLL_REGISTERS) {
        if (OP_IS_ZERO(*p)) {
            i += OP_ZERO_LEN(*p);
            p++;
        } else if (OP_IS_XZERO(*p)) {
            i += xzeroLen(p, end);
            p += 2;
        } else {
            long run = OP_VAL_LEN(*p);
            unsigned val = OP_VAL_VALUE(*p);
            if (i + run > HLL_REGISTERS) return -1; /* a VAL past the last register */
            while (run--) {
                if (val > max[i]) max[i] = (uint8_t)val;
                i++;
            }
            p++;
        }
    }
    return i == HLL_REGISTERS ? 0 : -1;
}

/* Ertl's sigma and tau (arXiv:1702.01284), iterated to a fixed point. */
static double hllSigma(double x) {
    if (x == 1.) return INFINITY;
    double zPrev, y = 1, z = x;
    do {
        x *= x;
        zPrev = z;
        z += x * y;
        y += y;
    } while (zPrev != z);
    return z;
}

static double hllTau(double x) {
    if (x == 0. || x == 1.) return 0.;
    double zPrev, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        zPrev = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zPrev != z);
    return z / 3;
}

/* The estimate from a register-value histogram (hist[0..63]). */
static uint64_t estimate(const int64_t *hist) {
    double m = HLL_REGISTERS;
    double z = m * hllTau((m - (double)hist[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += (double)hist[j];
        z *= 0.5;
    }
    z += m * hllSigma((double)hist[0] / m);
    return (uint64_t)llroundl(HLL_ALPHA_INF * m * m / z);
}

uint64_t hllCountRaw(const uint8_t *regs) {
    int64_t hist[64] = {0};
    for (long i = 0; i < HLL_REGISTERS; i += 8) {
        uint64_t word;
        memcpy(&word, regs + i, 8);
        if (word == 0) { /* runs of empty registers are common */
            hist[0] += 8;
            continue;
        }
        for (int j = 0; j < 8; j++, word >>= 8) hist[word & 63]++;
    }
    return estimate(hist);
}

uint64_t hllCount(const unsigned char *s, size_t len, int *invalid) {
    int64_t hist[64] = {0};
    if (s[4] == HLL_DENSE) {
        for (long k = 0; k < HLL_REGISTERS / 4; k++) {
            uint32_t w = denseQuad(s + HLL_HDR_SIZE, k);
            hist[w & 63]++;
            hist[(w >> 6) & 63]++;
            hist[(w >> 12) & 63]++;
            hist[(w >> 18) & 63]++;
        }
        return estimate(hist);
    }
    const unsigned char *p = s + HLL_HDR_SIZE, *end = s + len;
    int64_t idx = 0;
    while (p < end) {
        if (OP_IS_ZERO(*p)) {
            idx += OP_ZERO_LEN(*p);
            hist[0] += OP_ZERO_LEN(*p);
            p++;
        } else if (OP_IS_XZERO(*p)) {
            long run = xzeroLen(p, end);
            idx += run;
            hist[0] += run;
            p += 2;
        } else {
            idx += OP_VAL_LEN(*p);
            hist[OP_VAL_VALUE(*p)] += OP_VAL_LEN(*p);
            p++;
        }
    }
    if (idx != HLL_REGISTERS) {
        if (invalid) *invalid = 1;
        return 0;
    }
    return estimate(hist);
}

sds hllDecodeSparse(const unsigned char *s, size_t len) {
    sds out = sdsEmpty();
    const unsigned char *p = s + HLL_HDR_SIZE, *end = s + len;
    while (p < end) {
        if (OP_IS_ZERO(*p)) {
            out = sdsCatPrintf(out, "z:%d ", OP_ZERO_LEN(*p));
            p++;
        } else if (OP_IS_XZERO(*p)) {
            out = sdsCatPrintf(out, "Z:%ld ", xzeroLen(p, end));
            p += 2;
        } else {
            out = sdsCatPrintf(out, "v:%d,%d ", OP_VAL_VALUE(*p), OP_VAL_LEN(*p));
            p++;
        }
    }
    if (sdsLen(out)) sdsIncrLen(out, -1);
    return out;
}
