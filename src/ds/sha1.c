/* sha1.c -- SHA-1 as specified by FIPS 180-4: 512-bit blocks, five 32-bit
 * chaining words, 80 rounds in four groups of twenty, big-endian length
 * padding. */
#include "ds/sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void compress(uint32_t h[5], const unsigned char *p) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999u;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1u;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDCu;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6u;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1Init(Sha1 *s) {
    static const uint32_t iv[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
    memcpy(s->h, iv, sizeof(iv));
    s->total = 0;
    s->used = 0;
}

void sha1Update(Sha1 *s, const void *data, size_t len) {
    const unsigned char *p = data;
    s->total += len;
    if (s->used) {
        size_t n = 64 - s->used < len ? 64 - s->used : len;
        memcpy(s->block + s->used, p, n);
        s->used += n;
        p += n;
        len -= n;
        if (s->used < 64) return;
        compress(s->h, s->block);
        s->used = 0;
    }
    for (; len >= 64; p += 64, len -= 64) compress(s->h, p);
    memcpy(s->block, p, len);
    s->used = len;
}

void sha1Final(Sha1 *s, unsigned char digest[20]) {
    uint64_t bits = s->total * 8;
    unsigned char pad[72] = {0x80};
    size_t padLen = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++) pad[padLen + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1Update(s, pad, padLen + 8);
    for (int i = 0; i < 5; i++) {
        digest[4 * i] = (unsigned char)(s->h[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        digest[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void sha1Hex(const void *data, size_t len, char out[41]) {
    static const char hex[] = "0123456789abcdef";
    unsigned char d[20];
    Sha1 s;
    sha1Init(&s);
    sha1Update(&s, data, len);
    sha1Final(&s, d);
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[40] = '\0';
}
