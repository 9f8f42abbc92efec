/* sha256.c -- SHA-256 as FIPS 180-4 defines it: 64-byte blocks, eight
 * 32-bit state words, 64 rounds over a 64-word message schedule.  The
 * input is buffered until a block is full; Final pads with 0x80, zeros and
 * the bit length (big-endian). */
#include "ds/sha256.h"

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* ror(x,2)^ror(x,13)^ror(x,22) and ror(x,6)^ror(x,11)^ror(x,25), nested
 * so that x is copied once. */
#define S0(x) ror(ror(ror(x, 9) ^ (x), 11) ^ (x), 2)
#define S1(x) ror(ror(ror(x, 14) ^ (x), 5) ^ (x), 6)
#define CH(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))

/* One round, with the eight working variables named in their rotated
 * order instead of moved: eight rounds bring the names back. */
#define ROUND(a, b, c, d, e, f, g, h, i)                    \
    do {                                                    \
        uint32_t t1 = h + S1(e) + CH(e, f, g) + K[i] + w[i]; \
        d += t1;                                            \
        h = t1 + S0(a) + MAJ(a, b, c);                      \
    } while (0)

static void compress(uint32_t h[8], const unsigned char *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t x = w[i - 15], y = w[i - 2];
        uint32_t s0 = ror(ror(x, 11) ^ x, 7) ^ (x >> 3);   /* ror 7 ^ ror 18 ^ shr 3 */
        uint32_t s1 = ror(ror(y, 2) ^ y, 17) ^ (y >> 10);  /* ror 17 ^ ror 19 ^ shr 10 */
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i += 8) {
        ROUND(a, b, c, d, e, f, g, k, i);
        ROUND(k, a, b, c, d, e, f, g, i + 1);
        ROUND(g, k, a, b, c, d, e, f, i + 2);
        ROUND(f, g, k, a, b, c, d, e, i + 3);
        ROUND(e, f, g, k, a, b, c, d, i + 4);
        ROUND(d, e, f, g, k, a, b, c, i + 5);
        ROUND(c, d, e, f, g, k, a, b, i + 6);
        ROUND(b, c, d, e, f, g, k, a, i + 7);
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

void sha256Init(Sha256 *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof(iv));
    s->total = 0;
    s->used = 0;
}

void sha256Update(Sha256 *s, const void *data, size_t len) {
    const unsigned char *p = data;
    s->total += len;
    while (len) {
        size_t take = 64 - s->used;
        if (take > len) take = len;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used == 64) {
            compress(s->h, s->block);
            s->used = 0;
        }
    }
}

void sha256Final(Sha256 *s, unsigned char digest[32]) {
    uint64_t bits = s->total * 8;
    /* Padding written into the block directly: 0x80, zeros to byte 56 (of
     * this block, or of one more when fewer than 9 bytes are left), then
     * the bit length.  (Feeding it a byte at a time cost more than the
     * compression of a short password's block.) */
    s->block[s->used++] = 0x80;
    if (s->used > 56) {
        memset(s->block + s->used, 0, 64 - s->used);
        compress(s->h, s->block);
        s->used = 0;
    }
    memset(s->block + s->used, 0, 56 - s->used);
    for (int i = 0; i < 8; i++) s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    compress(s->h, s->block);
    s->used = 0;
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (unsigned char)(s->h[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        digest[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void sha256Hex(const void *data, size_t len, char out[65]) {
    static const char hex[] = "0123456789abcdef";
    Sha256 s;
    unsigned char d[32];
    sha256Init(&s);
    sha256Update(&s, data, len);
    sha256Final(&s, d);
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = '\0';
}
