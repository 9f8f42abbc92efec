/* siphash.c -- SipHash-c-d (see siphash.h).
 *
 * State is four 64-bit words initialised from the key and the constants
 * "somepseudorandomlygeneratedbytes".  The message is absorbed in
 * little-endian 8-byte words; the last word carries the remaining bytes and
 * the length mod 256 in its top byte.  Reading is byte-wise, so input needs
 * no alignment and the result does not depend on host endianness. */
#include "ds/siphash.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

typedef struct {
    uint64_t v0, v1, v2, v3;
} SipState;

static void sipRound(SipState *s) {
    s->v0 += s->v1;
    s->v1 = ROTL(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = ROTL(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = ROTL(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = ROTL(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = ROTL(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = ROTL(s->v2, 32);
}

static uint8_t foldByte(uint8_t c, int nocase) {
    return nocase && c >= 'A' && c <= 'Z' ? (uint8_t)(c + ('a' - 'A')) : c;
}

static uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void absorb(SipState *s, uint64_t m, int c) {
    s->v3 ^= m;
    for (int i = 0; i < c; i++) sipRound(s);
    s->v0 ^= m;
}

static uint64_t sipCore(const void *in, size_t len, const uint8_t key[16], int c, int d, int nocase) {
    const uint8_t *p = in;
    uint64_t k0 = load64(key), k1 = load64(key + 8);
    SipState s = {
        k0 ^ 0x736f6d6570736575ULL,
        k1 ^ 0x646f72616e646f6dULL,
        k0 ^ 0x6c7967656e657261ULL,
        k1 ^ 0x7465646279746573ULL,
    };
    size_t full = len - len % 8;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = 0;
        for (int j = 7; j >= 0; j--) m = (m << 8) | foldByte(p[i + (size_t)j], nocase);
        absorb(&s, m, c);
    }
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (size_t j = 0; j < len % 8; j++) last |= (uint64_t)foldByte(p[full + j], nocase) << (8 * j);
    absorb(&s, last, c);
    s.v2 ^= 0xff;
    for (int i = 0; i < d; i++) sipRound(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t siphash(const void *in, size_t len, const uint8_t key[16]) { return sipCore(in, len, key, 1, 2, 0); }

uint64_t siphashNoCase(const void *in, size_t len, const uint8_t key[16]) {
    return sipCore(in, len, key, 1, 2, 1);
}

uint64_t siphashRounds(const void *in, size_t len, const uint8_t key[16], int c, int d) {
    return sipCore(in, len, key, c, d, 0);
}
