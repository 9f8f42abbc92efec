/* rand.c -- xoshiro256** PRNG (see rand.h).
 *
 * Invariant: the 256-bit state is never all zero (splitmix64 expansion of
 * any seed cannot produce four zero words).  randBounded uses Lemire's
 * multiply-and-reject method, so it is exactly uniform. */
#include "ds/rand.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static uint64_t state[4] = {0x9e3779b97f4a7c15ULL, 0xbf58476d1ce4e5b9ULL, 0x94d049bb133111ebULL,
                            0x2545f4914f6cdd1dULL};

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void randSeed(uint64_t seed) {
    for (int i = 0; i < 4; i++) state[i] = splitmix64(&seed);
}

/* Read len bytes of OS entropy; returns 0 on success, -1 otherwise. */
static int osEntropy(void *buf, size_t len) {
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, len, f);
    fclose(f);
    return n == len ? 0 : -1;
}

void randSeedFromOs(void) {
    uint64_t seed;
    if (osEntropy(&seed, sizeof(seed)) != 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    randSeed(seed);
}

uint64_t randNext(void) {
    uint64_t result = rotl(state[1] * 5, 7) * 9;
    uint64_t t = state[1] << 17;
    state[2] ^= state[0];
    state[3] ^= state[1];
    state[1] ^= state[2];
    state[0] ^= state[3];
    state[2] ^= t;
    state[3] = rotl(state[3], 45);
    return result;
}

uint64_t randBounded(uint64_t n) {
    if (n == 0) return 0;
    unsigned __int128 m = (unsigned __int128)randNext() * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = (0 - n) % n; /* 2^64 mod n */
        while (low < threshold) {
            m = (unsigned __int128)randNext() * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double randDouble(void) { return (double)(randNext() >> 11) * 0x1.0p-53; }

void randHex(char *dst, size_t len) {
    static const char digits[] = "0123456789abcdef";
    unsigned char buf[64];
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done < sizeof(buf) ? len - done : sizeof(buf);
        if (osEntropy(buf, chunk) != 0)
            for (size_t i = 0; i < chunk; i++) buf[i] = (unsigned char)randNext();
        for (size_t i = 0; i < chunk; i++) dst[done + i] = digits[buf[i] & 15];
        done += chunk;
    }
}
