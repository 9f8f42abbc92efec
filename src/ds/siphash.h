/* siphash.h -- keyed hash for hash tables that face client-chosen keys.
 *
 * SipHash-1-2 (one compression round per 8-byte block, two finalization
 * rounds), written from Aumasson & Bernstein's published description: fast
 * enough for every dict lookup while keeping bucket placement unpredictable
 * without the 16-byte key.  siphashRounds() exposes the general SipHash-c-d
 * so the implementation can be checked against the paper's SipHash-2-4 test
 * vectors. */
#ifndef CAIRN_SIPHASH_H
#define CAIRN_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-1-2 of in[0..len) under key. */
uint64_t siphash(const void *in, size_t len, const uint8_t key[16]);
/* SipHash-1-2 of the input with ASCII letters lowered; equal to siphash() of
 * the lowercased bytes, computed without a copy. */
uint64_t siphashNoCase(const void *in, size_t len, const uint8_t key[16]);
/* SipHash-c-d with c compression and d finalization rounds (c, d >= 1). */
uint64_t siphashRounds(const void *in, size_t len, const uint8_t key[16], int c, int d);

#endif
