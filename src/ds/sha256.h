/* sha256.h -- SHA-256 (FIPS 180-4), for ACL passwords: users' passwords
 * are kept only as the hex SHA-256 of their bytes, as Redis keeps them. */
#ifndef CAIRN_SHA256_H
#define CAIRN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct Sha256 {
    uint32_t h[8];
    uint64_t total;        /* bytes fed so far */
    unsigned char block[64];
    size_t used;           /* bytes waiting in block */
} Sha256;

void sha256Init(Sha256 *s);
void sha256Update(Sha256 *s, const void *data, size_t len);
void sha256Final(Sha256 *s, unsigned char digest[32]);
/* One call: 64 lowercase hex digits and a NUL into out. */
void sha256Hex(const void *data, size_t len, char out[65]);

#endif
