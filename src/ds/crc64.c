/* crc64.c -- reflected CRC-64/Jones, one table lookup per byte.
 *
 * The 256-entry table holds the CRC of each byte value shifted through the
 * reflected polynomial; it is filled on first use (the computation is a few
 * microseconds and the server is single-threaded). */
#include "ds/crc64.h"

/* 0xad93d23594c935a9 with its 64 bits reversed. */
#define CRC64_POLY_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t table[256];
static int tableReady;

static void buildTable(void) {
    for (unsigned b = 0; b < 256; b++) {
        uint64_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c & 1) ? (c >> 1) ^ CRC64_POLY_REFLECTED : c >> 1;
        table[b] = c;
    }
    tableReady = 1;
}

uint64_t crc64(uint64_t crc, const void *p, size_t len) {
    const unsigned char *s = p;
    if (!tableReady) buildTable();
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
    return crc;
}
