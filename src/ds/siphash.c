/* siphash.c -- SipHash-c-d (see siphash.h).
 *
 * State is four 64-bit words initialised from the key and the constants
 * "somepseudorandomlygeneratedbytes".  The message is absorbed in
 * little-endian 8-byte words; the last word carries the remaining bytes and
 * the length mod 256 in its top byte.  Reading is byte-wise, so input needs
 * no alignment and the result does not depend on host endianness. */
#include "ds/siphash.h"

#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound on four lanes held in locals (the compiler keeps them in
 * registers; a struct passed by pointer would not be). */
#define SIPROUND(v0, v1, v2, v3)                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = ROTL(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = ROTL(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = ROTL(v2, 32);                                                                         \
    } while (0)

/* Little-endian 64-bit load from any alignment. */
static inline uint64_t load64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
#endif
}

static inline uint32_t load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The last len % 8 bytes of p[0..len) as a little-endian word, without a
 * loop: one overlapping 8-byte load when len >= 8, else two overlapping
 * 4-byte loads or three single bytes (bytes read twice land on the same
 * bits, so OR-ing them is harmless). */
static inline uint64_t tailBytes(const uint8_t *p, size_t len) {
    size_t rem = len & 7;
    if (rem == 0) return 0;
    if (len >= 8) return load64(p + len - 8) >> (64 - 8 * rem);
    if (rem >= 4) return (uint64_t)load32(p) | (uint64_t)load32(p + rem - 4) << (8 * (rem - 4));
    return (uint64_t)p[0] | (uint64_t)p[rem / 2] << (8 * (rem / 2)) | (uint64_t)p[rem - 1] << (8 * (rem - 1));
}

/* ASCII lowercase of 8 bytes at once: add 32 to bytes in 'A'..'Z'. */
static inline uint64_t lower64(uint64_t m) {
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t heptets = m & (0x7f * ones);
    uint64_t geA = heptets + (0x80 - 'A') * ones; /* high bit set where byte >= 'A' */
    uint64_t gtZ = heptets + (0x80 - 'Z' - 1) * ones; /* high bit set where byte > 'Z' */
    uint64_t isUpper = geA & ~gtZ & ~m & (0x80 * ones);
    return m | (isUpper >> 2);
}

static inline uint64_t sipCore(const void *in, size_t len, const uint8_t key[16], int c, int d, int nocase) {
    const uint8_t *p = in;
    uint64_t k0 = load64(key), k1 = load64(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    size_t full = len - len % 8;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = load64(p + i);
        if (nocase) m = lower64(m);
        v3 ^= m;
        for (int r = 0; r < c; r++) SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    uint64_t tail = tailBytes(p, len);
    if (nocase) tail = lower64(tail);
    last |= tail;
    v3 ^= last;
    for (int r = 0; r < c; r++) SIPROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < d; r++) SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t siphash(const void *in, size_t len, const uint8_t key[16]) { return sipCore(in, len, key, 1, 2, 0); }

uint64_t siphashNoCase(const void *in, size_t len, const uint8_t key[16]) {
    return sipCore(in, len, key, 1, 2, 1);
}

uint64_t siphashRounds(const void *in, size_t len, const uint8_t key[16], int c, int d) {
    return sipCore(in, len, key, c, d, 0);
}
