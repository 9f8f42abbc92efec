/* t_hll.c -- the HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and
 * PFSELFTEST.
 *
 * A HyperLogLog is an ordinary string value in Redis's HYLL format (the
 * algorithms and the format live in ds/hll.c), so GET, DUMP and replication
 * see the same bytes as on Redis.  A string is accepted as a sketch when
 * hllIsValid says so (header, magic, encoding, dense length); any other
 * string answers ERR_NOT_HLL, and a sketch whose sparse opcodes do not cover
 * exactly 16,384 registers answers ERR_BAD_HLL when a command walks them.
 *
 * Every command that accepts a single sketch makes its value raw first
 * (dbUnshareString), as Redis does, even PFCOUNT: a count refreshes the
 * cached cardinality in the header, which is a write (signalled and counted
 * dirty, so it propagates).  Writers store the possibly-moved sds back with
 * kvSetPtr before returning on every path. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types/hll.h"

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/hll.h"
#include "ds/sds.h"

/* hll-sparse-max-bytes: the directive at the end of this file. */
static long long hllSparseMaxBytes;

#define ERR_NOT_HLL "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_BAD_HLL "INVALIDOBJ Corrupted HLL object detected"

static size_t sparseMax(void) {
    long long v = hllSparseMaxBytes;
    return v < 0 ? 0 : (size_t)v;
}

/* Looks up key (for writing when `write`) and checks that it holds a
 * sketch.  Returns 1 with *po set, 0 when the key is absent, -1 after
 * replying WRONGTYPE (either text). */
static int lookupHllOrReply(Client *c, const sds key, int write, kvobj **po) {
    int wrong = 0;
    kvobj *o = write ? lookupWriteOrReply(c, key, OBJ_STRING, &wrong) : lookupReadOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return -1;
    *po = o;
    if (!o) return 0;
    if (kvEncoding(o) == OBJ_ENC_INT) goto invalid;
    char buf[21];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    if (!hllIsValid((const unsigned char *)p, len)) goto invalid;
    return 1;
invalid:
    replyError(c, ERR_NOT_HLL);
    return -1;
}

/* PFADD key [element ...] */
static void pfaddCommand(Client *c) {
    const sds key = c->argv[1];
    kvobj *o;
    long long updated = 0;
    int found = lookupHllOrReply(c, key, 1, &o);
    if (found < 0) return;
    sds s;
    if (!found) {
        s = hllCreate();
        o = kvCreateRawString(key, sdsLen(key), s);
        dbAdd(c->db, o);
        updated++;
    } else {
        s = dbUnshareString(c->db, &o);
    }
    for (int j = 2; j < c->argc; j++) {
        int r = hllAdd(&s, (const unsigned char *)c->argv[j], sdsLen(c->argv[j]), sparseMax());
        if (r == -1) {
            kvSetPtr(o, s);
            replyError(c, ERR_BAD_HLL);
            return;
        }
        updated += r;
    }
    kvSetPtr(o, s);
    if (updated) {
        hllCacheInvalidate((unsigned char *)s);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyKeyspaceEvent(NOTIFY_STRING, "pfadd", key, sdsLen(key), c->db->id);
        serverIncrDirty(updated);
    }
    replyLongLong(c, updated ? 1 : 0);
}

/* Folds the sketches at argv[first..argc) into max (absent keys count as
 * empty).  Returns 0, or -1 after replying an error.  *anyDense tells
 * whether one of them was dense. */
static int mergeKeysOrReply(Client *c, int first, uint8_t *max, int *anyDense) {
    for (int j = first; j < c->argc; j++) {
        kvobj *o;
        int found = lookupHllOrReply(c, c->argv[j], 0, &o);
        if (found < 0) return -1;
        if (!found) continue;
        /* A raw value is an sds (readable at [len], see hll.h); an embstr
         * sketch is at most 44 bytes and is read from a copy. */
        sds copy = kvEncoding(o) == OBJ_ENC_RAW ? NULL : kvStringDup(o);
        const unsigned char *p = (const unsigned char *)(copy ? copy : kvPtr(o));
        size_t len = sdsLen((sds)p);
        if (p[4] == HLL_DENSE) *anyDense = 1;
        int bad = hllMergeInto(max, p, len) == -1;
        sdsFree(copy);
        if (bad) {
            replyError(c, ERR_BAD_HLL);
            return -1;
        }
    }
    return 0;
}

/* PFCOUNT key [key ...] */
static void pfcountCommand(Client *c) {
    if (c->argc > 2) {
        uint8_t max[HLL_REGISTERS];
        int dense = 0;
        memset(max, 0, sizeof(max));
        if (mergeKeysOrReply(c, 1, max, &dense) == -1) return;
        replyLongLong(c, (long long)hllCountRaw(max));
        return;
    }
    const sds key = c->argv[1];
    kvobj *o;
    int found = lookupHllOrReply(c, key, 0, &o);
    if (found < 0) return;
    if (!found) {
        replyLongLong(c, 0);
        return;
    }
    sds s = dbUnshareString(c->db, &o);
    uint64_t card;
    if (!hllCacheGet((unsigned char *)s, &card)) {
        int invalid = 0;
        card = hllCount((unsigned char *)s, sdsLen(s), &invalid);
        if (invalid) {
            replyError(c, ERR_BAD_HLL);
            return;
        }
        hllCacheSet((unsigned char *)s, card);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        serverIncrDirty(1);
        effectsForce(EFFECT_ALL); /* a read-only command that wrote: Redis propagates it */
    }
    replyLongLong(c, (long long)card);
}

/* PFMERGE destkey [sourcekey ...]: destkey is a source too. */
static void pfmergeCommand(Client *c) {
    const sds key = c->argv[1];
    uint8_t max[HLL_REGISTERS];
    int dense = 0;
    memset(max, 0, sizeof(max));
    if (mergeKeysOrReply(c, 1, max, &dense) == -1) return;
    kvobj *o = dbLookupWrite(c->db, key, sdsLen(key));
    sds s;
    if (!o) {
        s = hllCreate();
        o = kvCreateRawString(key, sdsLen(key), s);
        dbAdd(c->db, o);
    } else {
        s = dbUnshareString(c->db, &o);
    }
    if (dense && hllToDense(&s) == -1) {
        replyError(c, ERR_BAD_HLL);
        return;
    }
    for (long j = 0; j < HLL_REGISTERS; j++)
        if (max[j]) (void)hllSetRegister(&s, j, max[j], sparseMax());
    kvSetPtr(o, s);
    hllCacheInvalidate((unsigned char *)s);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyKeyspaceEvent(NOTIFY_STRING, "pfadd", key, sdsLen(key), c->db->id);
    serverIncrDirty(1);
    replyOk(c);
}

/* Converts the sketch of o to dense; 1 if it was sparse, 0 if already
 * dense, -1 after replying ERR_BAD_HLL. */
static int toDenseOrReply(Client *c, kvobj *o, sds *s) {
    if ((unsigned char)(*s)[4] == HLL_DENSE) return 0;
    if (hllToDense(s) == -1) {
        replyError(c, ERR_BAD_HLL);
        return -1;
    }
    kvSetPtr(o, *s);
    serverIncrDirty(1);
    return 1;
}

/* PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.  The key is checked before
 * the subcommand, as on Redis. */
static void pfdebugCommand(Client *c) {
    const char *sub = c->argv[1];
    kvobj *o;
    int found = lookupHllOrReply(c, c->argv[2], 1, &o);
    if (found < 0) return;
    if (!found) {
        replyError(c, "ERR The specified key does not exist");
        return;
    }
    sds s = dbUnshareString(c->db, &o);
    if (argIs(c->argv[1], "getreg")) {
        if (toDenseOrReply(c, o, &s) == -1) return;
        replyArrayLen(c, HLL_REGISTERS);
        for (long j = 0; j < HLL_REGISTERS; j++)
            replyLongLong(c, hllDenseGet((unsigned char *)s + HLL_HDR_SIZE, j));
    } else if (argIs(c->argv[1], "decode")) {
        if (s[4] != HLL_SPARSE) {
            replyError(c, "ERR HLL encoding is not sparse");
            return;
        }
        sds text = hllDecodeSparse((unsigned char *)s, sdsLen(s));
        replyBulk(c, text, sdsLen(text));
        sdsFree(text);
    } else if (argIs(c->argv[1], "encoding")) {
        replyStatus(c, s[4] == HLL_DENSE ? "dense" : "sparse");
    } else if (argIs(c->argv[1], "todense")) {
        int conv = toDenseOrReply(c, o, &s);
        if (conv >= 0) replyLongLong(c, conv);
    } else {
        sds msg = sdsCatPrintf(sdsEmpty(), "ERR Unknown PFDEBUG subcommand '%s'", sub);
        for (size_t i = 0; i < sdsLen(msg); i++)
            if (msg[i] == '\r' || msg[i] == '\n') msg[i] = ' ';
        replyErrorLen(c, msg, sdsLen(msg));
        sdsFree(msg);
    }
}

/* splitmix64: the self test's own generator (the server's is not
 * disturbed). */
static uint64_t nextRandom(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Checks the dense register packing (every register, random values) and
 * that a sketch built sparse (with promotion) and one built dense agree,
 * and stay within a few standard errors of the true count.  NULL when
 * everything holds, else the failure text. */
static const char *selftest(void) {
    static unsigned char regs[HLL_DENSE_BYTES];
    static uint8_t expect[HLL_REGISTERS];
    uint64_t r = 0x1234567;
    for (int round = 0; round < 100; round++) {
        memset(regs, 0, sizeof(regs));
        for (long i = 0; i < HLL_REGISTERS; i++) {
            expect[i] = (uint8_t)(nextRandom(&r) & 63);
            hllDenseSetReg(regs, i, expect[i]);
        }
        for (long i = 0; i < HLL_REGISTERS; i++)
            if (hllDenseGet(regs, i) != expect[i]) return "TESTFAILED Register error";
    }
    sds sparse = hllCreate(), dense = hllCreate();
    const char *err = NULL;
    if (hllToDense(&dense) == -1) err = "TESTFAILED dense conversion";
    for (long n = 1; n <= 100000 && !err; n++) {
        char ele[48];
        int len = snprintf(ele, sizeof(ele), "%ld-%llu", n, (unsigned long long)nextRandom(&r));
        if (hllAdd(&sparse, (unsigned char *)ele, (size_t)len, 3000) < 0 ||
            hllAdd(&dense, (unsigned char *)ele, (size_t)len, 3000) < 0) {
            err = "TESTFAILED add";
            break;
        }
        if (n % 1000 && n > 100) continue;
        int bad = 0;
        uint64_t a = hllCount((unsigned char *)sparse, sdsLen(sparse), &bad);
        uint64_t b = hllCount((unsigned char *)dense, sdsLen(dense), &bad);
        double rel = ((double)a - (double)n) / (double)n;
        if (bad || a != b) err = "TESTFAILED sparse and dense counts differ";
        else if (rel > 0.05 || rel < -0.05) err = "TESTFAILED too big error";
    }
    sdsFree(sparse);
    sdsFree(dense);
    return err;
}

/* PFSELFTEST */
static void pfselftestCommand(Client *c) {
    const char *err = selftest();
    if (err) replyError(c, err);
    else replyOk(c);
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command hllCommands[] = {
    {.name = "pfadd", .proc = pfaddCommand},
    {.name = "pfcount", .proc = pfcountCommand},
    {.name = "pfmerge", .proc = pfmergeCommand},
    {.name = "pfdebug", .proc = pfdebugCommand},
    {.name = "pfselftest", .proc = pfselftestCommand},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef hllConfig[] = {
    CONFIG_LL("hll-sparse-max-bytes", NULL, CF_MEMORY, hllSparseMaxBytes, 0, LONG_MAX, "3000",
              .rank = CONFIG_RANK_ENCODINGS + 9),
};

void hllRegisterConfig(void) { configRegister(hllConfig, CONFIG_COUNT_OF(hllConfig)); }
