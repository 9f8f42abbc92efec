/* rand.h -- fast non-cryptographic PRNG for sampling (RANDOMKEY, SRANDMEMBER,
 * eviction pools, skiplist levels) and for run ids.
 *
 * xoshiro256** (Blackman & Vigna) over one process-wide state.  Not thread
 * safe: call it from the main thread only.  Until randSeed/randSeedFromOs is
 * called the state is a fixed non-zero seed, so results are deterministic. */
#ifndef CAIRN_RAND_H
#define CAIRN_RAND_H

#include <stddef.h>
#include <stdint.h>

/* Reset the state from a 64-bit seed (expanded with splitmix64). */
void randSeed(uint64_t seed);
/* Seed from /dev/urandom; falls back to the clock and pid if unreadable. */
void randSeedFromOs(void);
/* Next 64 random bits. */
uint64_t randNext(void);
/* Uniform integer in [0, n); n must be > 0 (returns 0 for n == 0). */
uint64_t randBounded(uint64_t n);
/* Uniform double in [0, 1) with 53 random bits. */
double randDouble(void);
/* Fill dst[0..len) with random lowercase hex digits (no terminator).  Read
 * from /dev/urandom when available, else from the PRNG; used for run ids. */
void randHex(char *dst, size_t len);

#endif
