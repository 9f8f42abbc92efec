/* crc64.c -- reflected CRC-64/Jones, eight bytes per step ("slicing by 8"),
 * or 64 by carry-less multiplication where the CPU has it (below).
 *
 * table[0][b] is the CRC of byte value b shifted through the reflected
 * polynomial; table[k][b] is table[k-1][b] carried through one more zero
 * byte.  Eight lookups then fold eight input bytes at once: the step is
 * the same function as eight bytewise steps, which the tail still uses.
 * The tables (16 KB, and the powers of x crc64Combine multiplies by) are
 * filled, and the CPU probed, on the first call: a program that computes
 * CRCs on several threads calls crc64Init before it starts them (the RDB
 * save threads do; a forked child inherits the tables). */
#include "ds/crc64.h"

#include <string.h>

/* 0xad93d23594c935a9 with its 64 bits reversed. */
#define CRC64_POLY_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t table[8][256];
static uint64_t xPow2[64]; /* x^(2^k) mod the polynomial, reflected */
static int tableReady;

/* a * b mod the polynomial.  Reflected: bit 63 is the coefficient of x^0,
 * bit 0 that of x^63, so shifting right multiplies by x (a CRC step over a
 * zero bit). */
static uint64_t mulMod(uint64_t a, uint64_t b) {
    uint64_t prod = 0;
    for (uint64_t m = (uint64_t)1 << 63; m; m >>= 1) {
        if (a & m) prod ^= b;
        b = (b & 1) ? (b >> 1) ^ CRC64_POLY_REFLECTED : b >> 1;
    }
    return prod;
}

static void buildTable(void) {
    for (unsigned b = 0; b < 256; b++) {
        uint64_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c & 1) ? (c >> 1) ^ CRC64_POLY_REFLECTED : c >> 1;
        table[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (unsigned b = 0; b < 256; b++)
            table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
    xPow2[0] = (uint64_t)1 << 62; /* x^1 */
    for (int k = 1; k < 64; k++) xPow2[k] = mulMod(xPow2[k - 1], xPow2[k - 1]);
    tableReady = 1;
}

/* One unaligned little-endian load (a byte loop here costs more than the
 * eight table lookups). */
static uint64_t load64le(const unsigned char *s) {
    uint64_t w;
    memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static uint64_t crc64Table(uint64_t crc, const unsigned char *s, size_t len) {
    while (len >= 8) {
        uint64_t w = crc ^ load64le(s);
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        s += 8;
        len -= 8;
    }
    while (len--) crc = table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Folding with carry-less multiplication (PCLMULQDQ), about 0.4
 * instructions a byte against the table's 4: a whole-file CRC was a fifth
 * of a sorted-set file's load.  The message is a sequence of 16-byte
 * blocks; a block x (the CRC xored into its first 8 bytes) followed by
 * D/8 bytes ending in block y has the CRC of the same message with x
 * replaced by zeros and y by y ^ fold(x): with x = hi*X^64 + lo in message
 * order, x*X^D = hi*X^(D+64) + lo*X^D, each product taken mod P through a
 * constant (X^n mod P, bit-reflected; one power less than the shift, as a
 * reflected product comes out one bit low).  Four lanes fold 64 bytes
 * ahead (D = 512) so the multiplications overlap, then fold into one
 * (D = 128); the last block and the tail go through the table.  The
 * constants were derived for the Jones polynomial and the whole function
 * is checked against the table (tests/unit/test_crc64.c). */
#include <immintrin.h>

#define CLMUL __attribute__((target("pclmul,sse2")))

/* {low lane: X^(D+63) for the later bytes, high lane: X^(D-1)} reflected:
 * _mm_set_epi64x takes the high lane first. */
#define K128_LO 0xd9d7be7d505da32cULL /* X^191 */
#define K128_HI 0x381d0015c96f4444ULL /* X^127 */
#define K512_LO 0xaf86efb16d9ab4fbULL /* X^575 */
#define K512_HI 0xf49784a634f014e4ULL /* X^511 */

static CLMUL inline __m128i fold(__m128i x, __m128i k, const unsigned char *next) {
    __m128i y = _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
    return _mm_xor_si128(y, _mm_loadu_si128((const __m128i *)(const void *)next));
}

static CLMUL uint64_t crc64Clmul(uint64_t crc, const unsigned char *s, size_t len) {
    const __m128i k128 = _mm_set_epi64x((long long)K128_HI, (long long)K128_LO);
    __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)s), _mm_cvtsi64_si128((long long)crc));
    if (len >= 128) {
        const __m128i k512 = _mm_set_epi64x((long long)K512_HI, (long long)K512_LO);
        __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        s += 64;
        len -= 64;
        while (len >= 64) {
            x = fold(x, k512, s);
            x1 = fold(x1, k512, s + 16);
            x2 = fold(x2, k512, s + 32);
            x3 = fold(x3, k512, s + 48);
            s += 64;
            len -= 64;
        }
        unsigned char b[16];
        _mm_storeu_si128((__m128i *)(void *)b, x1);
        x = fold(x, k128, b);
        _mm_storeu_si128((__m128i *)(void *)b, x2);
        x = fold(x, k128, b);
        _mm_storeu_si128((__m128i *)(void *)b, x3);
        x = fold(x, k128, b);
    } else {
        s += 16;
        len -= 16;
    }
    while (len >= 16) {
        x = fold(x, k128, s);
        s += 16;
        len -= 16;
    }
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)(void *)last, x);
    return crc64Table(crc64Table(0, last, 16), s, len);
}

static int clmulState; /* 0 unknown, 1 yes, -1 no */

static int haveClmul(void) {
    if (!clmulState) {
        __builtin_cpu_init();
        clmulState = __builtin_cpu_supports("pclmul") ? 1 : -1;
    }
    return clmulState > 0;
}
#endif

void crc64Init(void) {
    if (!tableReady) buildTable();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    haveClmul();
#endif
}

uint64_t crc64(uint64_t crc, const void *p, size_t len) {
    const unsigned char *s = p;
    if (!tableReady) buildTable();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (len >= 64 && haveClmul()) return crc64Clmul(crc, s, len);
#endif
    return crc64Table(crc, s, len);
}

/* CRC is linear with a zero start and no final xor: running crcA on over
 * B is running it over len(B) zero bytes -- crcA times x^(8 len(B)) --
 * plus the CRC of B from zero. */
uint64_t crc64Combine(uint64_t crcA, uint64_t crcB, uint64_t lenB) {
    if (!tableReady) buildTable();
    uint64_t shift = (uint64_t)1 << 63; /* x^0 */
    uint64_t bits = lenB;               /* x^(8 lenB) = (x^8)^lenB: k from 3 */
    for (int k = 3; bits && k < 64; k++, bits >>= 1)
        if (bits & 1) shift = mulMod(shift, xPow2[k]);
    return mulMod(crcA, shift) ^ crcB;
}
