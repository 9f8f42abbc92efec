/* sha1.h -- SHA-1 (FIPS 180-4), for the script cache (EVAL keys scripts
 * by the SHA-1 of their body) and redis.sha1hex.  Not for security. */
#ifndef CAIRN_SHA1_H
#define CAIRN_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct Sha1 {
    uint32_t h[5];
    uint64_t total;        /* bytes fed so far */
    unsigned char block[64];
    size_t used;           /* bytes waiting in block */
} Sha1;

void sha1Init(Sha1 *s);
void sha1Update(Sha1 *s, const void *data, size_t len);
void sha1Final(Sha1 *s, unsigned char digest[20]);
/* One call: 40 lowercase hex digits and a NUL into out. */
void sha1Hex(const void *data, size_t len, char out[41]);

#endif
