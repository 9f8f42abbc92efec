/* lzfdec.c -- LZF decompression of untrusted input (see lzfdec.h).
 *
 * Fast paths: a literal run (at most 32 bytes) is copied as 32 fixed bytes
 * when both buffers have that much room, then only its true length counts;
 * a back-reference whose distance is at least 8 is copied in 8-byte steps
 * (each step reads bytes already final) when the output has room for the
 * last step's overshoot.  Everything else goes byte by byte.  The bytes
 * written past the current position by an overshoot are overwritten by
 * later tokens or lie beyond the returned length. */
#include "ds/lzfdec.h"

#include <string.h>

/* The checked decoder: every token's bounds tested on its own. */
static size_t decodeChecked(const unsigned char *ip, const unsigned char *const iend, unsigned char *op,
                            unsigned char *const obeg, unsigned char *const oend) {
    while (ip < iend) {
        unsigned c = *ip++;
        if (c < 32) {
            size_t n = c + 1;
            if ((size_t)(iend - ip) < n || (size_t)(oend - op) < n) return 0;
            if (iend - ip >= 32 && oend - op >= 32) memcpy(op, ip, 32);
            else memcpy(op, ip, n);
            ip += n;
            op += n;
            continue;
        }
        size_t n = c >> 5;
        if (n == 7) {
            if (ip >= iend) return 0;
            n += *ip++;
        }
        if (ip >= iend) return 0;
        size_t dist = ((size_t)(c & 31) << 8) + *ip++ + 1;
        n += 2;
        if ((size_t)(op - obeg) < dist || (size_t)(oend - op) < n) return 0;
        const unsigned char *ref = op - dist;
        if (dist >= 8 && (size_t)(oend - op) >= n + 8) {
            unsigned char *const stop = op + n;
            do {
                memcpy(op, ref, 8);
                op += 8;
                ref += 8;
            } while (op < stop);
            op = stop;
        } else {
            for (size_t i = 0; i < n; i++) op[i] = ref[i];
            op += n;
        }
    }
    return (size_t)(op - obeg);
}

/* Room that makes one token safe without its own bounds tests: a token
 * reads at most 34 bytes (control, extra length, offset, or a 32-byte
 * literal run) and writes at most 264 (+8 of overshoot). */
#define FAST_IN 34
#define FAST_OUT (264 + 8)

size_t lzfDecompress(const void *in, size_t inLen, void *out, size_t outLen) {
    const unsigned char *ip = in, *const iend = ip + inLen;
    unsigned char *op = out, *const obeg = out, *const oend = op + outLen;
    /* Fast loop: while both buffers have a token's worth of room, only a
     * back-reference's distance needs checking. */
    if (inLen >= FAST_IN && outLen >= FAST_OUT) {
        const unsigned char *const ifast = iend - FAST_IN;
        unsigned char *const ofast = oend - FAST_OUT;
        while (ip <= ifast && op <= ofast) {
            unsigned c = *ip++;
            if (c < 32) {
                memcpy(op, ip, 32);
                ip += c + 1;
                op += c + 1;
                continue;
            }
            size_t n = (c >> 5) + 2;
            if (n == 9) n += *ip++;
            size_t dist = ((size_t)(c & 31) << 8) + *ip++ + 1;
            if ((size_t)(op - obeg) < dist) return 0;
            const unsigned char *ref = op - dist;
            unsigned char *const stop = op + n;
            if (dist >= 8) {
                do {
                    memcpy(op, ref, 8);
                    op += 8;
                    ref += 8;
                } while (op < stop);
            } else {
                do *op++ = *ref++;
                while (op < stop);
            }
            op = stop;
        }
    }
    return decodeChecked(ip, iend, op, obeg, oend);
}
