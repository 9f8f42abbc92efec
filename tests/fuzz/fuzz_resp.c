/* fuzz_resp.c -- libFuzzer target for src/proto/resp_parse.c.
 *
 * Input layout: byte 0 holds flags, bytes 1-2 seed the chunk sizes, the rest
 * is the byte stream a client sends.  Flags:
 *   1  authRequired (the tight unauthenticated limits)
 *   2  proto-max-bulk-len of 100 bytes instead of 512 MB
 *   4  read big-argument bytes through respParserBigArgRoom
 *  24  (both bits) expand runs: 0xFE k b in the stream becomes b repeated
 *      (k+1)*512 times, so short inputs reach big arguments and the 64 KB
 *      limits.  Expansion is slow to run, hence two bits.
 * The stream is fed once whole and once in pseudo-random chunks, the way
 * the network layer does, checking: consumed <= len; errors carry a
 * "Protocol error: " text; a parser inside a big argument has consumed the
 * whole buffer; nothing leaks (xmallocUsed returns to its start); and, when
 * the stream is under the 64 KB limit (so arrival sizes cannot matter), both
 * feedings produce the same commands. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/sds.h"
#include "proto/resp_parse.h"

#define FUZZ_ASSERT(c)                                                                                       \
    do {                                                                                                     \
        if (!(c)) abort();                                                                                   \
    } while (0)

/* Expansion stops growing the stream past this (keeps runs fast). */
#define FUZZ_MAX_EXPANDED (80 * 1024)

static uint32_t rngState;

static uint32_t rng(void) {
    rngState ^= rngState << 13;
    rngState ^= rngState >> 17;
    rngState ^= rngState << 5;
    return rngState;
}

static size_t nextChunk(void) {
    uint32_t r = rng();
    switch (r & 3) {
    case 0:
        return 1;
    case 1:
        return 1 + (r >> 8) % 16;
    case 2:
        return 1 + (r >> 8) % 512;
    default:
        return 1 + (r >> 8) % 40000;
    }
}

static sds expandRuns(const uint8_t *p, size_t n) {
    sds s = sdsEmpty();
    for (size_t i = 0; i < n; i++) {
        /* Runs of line ends would only make many empty commands: slow, and
         * nothing a short input cannot show. */
        if (p[i] == 0xFE && i + 2 < n && sdsLen(s) < FUZZ_MAX_EXPANDED && p[i + 2] != '\n' &&
            p[i + 2] != '\r') {
            size_t count = ((size_t)p[i + 1] + 1) * 512;
            size_t old = sdsLen(s);
            s = sdsGrowZero(s, old + count);
            memset(s + old, p[i + 2], count);
            i += 2;
        } else {
            s = sdsCatLen(s, &p[i], 1);
        }
    }
    return s;
}

static void dropFront(sds s, size_t n) {
    size_t len = sdsLen(s);
    memmove(s, s + n, len - n);
    sdsSetLen(s, len - n);
}

/* Feed in[0..len) in chunks (chunked == 0: all at once) and return the
 * transcript of commands and errors. */
static sds feed(const char *in, size_t len, int chunked, int direct, const RespLimits *lim) {
    RespParser p;
    respParserInit(&p);
    sds t = sdsEmpty(), pend = sdsEmpty();
    size_t off = 0;
    int taken = 0;
    for (;;) {
        size_t pos = 0; /* like Redis's qb_pos: drop consumed bytes once per read */
        for (;;) {
            size_t used = (size_t)-1;
            RespStatus st = respParse(&p, pend + pos, sdsLen(pend) - pos, &used, lim);
            FUZZ_ASSERT(used <= sdsLen(pend) - pos);
            pos += used;
            if (st == RESP_ERROR) {
                FUZZ_ASSERT(p.err && strncmp(p.err, "Protocol error: ", 16) == 0);
                t = sdsCatPrintf(t, "E(%s)", p.err);
                goto done;
            }
            if (st == RESP_INCOMPLETE) break;
            FUZZ_ASSERT(st == RESP_COMPLETE);
            int argc;
            sds *argv = respParserTake(&p, &argc);
            FUZZ_ASSERT(argc >= 0 && (argc == 0) == (argv == NULL));
            t = sdsCatPrintf(t, "%d:", argc);
            for (int i = 0; i < argc; i++) {
                FUZZ_ASSERT(argv[i][sdsLen(argv[i])] == '\0');
                t = sdsCatPrintf(t, "%zu:", sdsLen(argv[i]));
                t = sdsCatSds(t, argv[i]);
            }
            /* Give most commands back for reuse (later ones are parsed into
             * pooled strings); free some, as a MULTI queue would. */
            if (++taken % 4) {
                respParserRecycle(&p, argv, argc);
            } else {
                for (int i = 0; i < argc; i++) sdsFree(argv[i]);
                xfree(argv);
            }
        }
        dropFront(pend, pos);
        char *dst;
        size_t room;
        int big = respParserBigArgRoom(&p, &dst, &room);
        if (big) FUZZ_ASSERT(sdsLen(pend) == 0 && room > 0);
        if (off == len) break;
        size_t n = chunked ? nextChunk() : len - off;
        if (n > len - off) n = len - off;
        if (direct && big) {
            if (n > room) n = room;
            memcpy(dst, in + off, n);
            respParserBigArgWrote(&p, n);
        } else {
            pend = sdsCatLen(pend, in + off, n);
        }
        off += n;
    }
    if (sdsLen(pend) || p.multibulkLen) t = sdsCat(t, "...");
done:
    respParserFree(&p);
    sdsFree(pend);
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    size_t usedBefore = xmallocUsed();
    uint8_t flags = data[0];
    rngState = ((uint32_t)data[1] << 8 | data[2]) * 2654435761u | 1;
    RespLimits lim = {flags & 2 ? 100 : RESP_DEFAULT_MAX_BULK_LEN, flags & 1};
    int direct = (flags & 4) != 0;
    sds in = (flags & 24) == 24 ? expandRuns(data + 3, size - 3) : sdsNewLen(data + 3, size - 3);

    sds whole = feed(in, sdsLen(in), 0, direct, &lim);
    sds chunked = feed(in, sdsLen(in), 1, direct, &lim);
    if (sdsLen(in) <= RESP_INLINE_MAX)
        FUZZ_ASSERT(sdsLen(whole) == sdsLen(chunked) && memcmp(whole, chunked, sdsLen(whole)) == 0);
    sdsFree(whole);
    sdsFree(chunked);
    sdsFree(in);
    FUZZ_ASSERT(xmallocUsed() == usedBefore);
    return 0;
}
