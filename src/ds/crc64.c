/* crc64.c -- reflected CRC-64/Jones, eight bytes per step ("slicing by 8").
 *
 * table[0][b] is the CRC of byte value b shifted through the reflected
 * polynomial; table[k][b] is table[k-1][b] carried through one more zero
 * byte.  Eight lookups then fold eight input bytes at once: the step is
 * the same function as eight bytewise steps, which the tail still uses.
 * The tables (16 KB) are filled on first use; the server is
 * single-threaded where it computes CRCs (and a forked child inherits
 * them). */
#include "ds/crc64.h"

#include <string.h>

/* 0xad93d23594c935a9 with its 64 bits reversed. */
#define CRC64_POLY_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t table[8][256];
static int tableReady;

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

uint64_t crc64(uint64_t crc, const void *p, size_t len) {
    const unsigned char *s = p;
    if (!tableReady) buildTable();
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
