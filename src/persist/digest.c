/* digest.c -- DEBUG DIGEST and DEBUG DIGEST-VALUE: a SHA-1 based digest of
 * the dataset that is the same bytes redis-server 7.0.15 computes for the
 * same contents, whatever the encodings, so two servers can be compared.
 *
 * The definition (Redis's): xor(d, s) xors SHA1(s) into d; mix(d, s) is
 * xor(d, s) then d = SHA1(d).  A value's digest starts at zero, mixes its
 * type as a 4-byte big-endian number, then: a string mixes its bytes; a
 * list mixes each element in order; a set xors each member; a sorted set
 * xors, per member, a fresh digest that mixed the member and its score as
 * "%.17g"; a hash xors, per field, a fresh digest that mixed field and
 * value; a stream mixes each entry's "ms.seq", fields and values; a key
 * with an expire finally xors "!!expire!!".  The dataset
 * digest, per non-empty database, mixes the database number (4 bytes big
 * endian), then xors in, per key, a digest that mixed the key name and
 * went on as the value's digest. */
#include "persist/digest.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/server.h"
#include "db/db.h"
#include "ds/quicklist.h"
#include "ds/sha1.h"
#include "ds/stream.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/zset.h"

void xorDigest(unsigned char d[20], const void *p, size_t len) {
    Sha1 s;
    unsigned char h[20];
    sha1Init(&s);
    sha1Update(&s, p, len);
    sha1Final(&s, h);
    for (int i = 0; i < 20; i++) d[i] ^= h[i];
}

void mixDigest(unsigned char d[20], const void *p, size_t len) {
    xorDigest(d, p, len);
    Sha1 s;
    sha1Init(&s);
    sha1Update(&s, d, 20);
    sha1Final(&s, d);
}

static void mixUint32(unsigned char d[20], uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    mixDigest(d, b, 4);
}

static void setMemberDigest(void *priv, const char *m, size_t len) { xorDigest(priv, m, len); }

static void hashPairDigest(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen) {
    unsigned char e[20] = {0};
    mixDigest(e, f, flen);
    mixDigest(e, v, vlen);
    xorDigest(priv, e, 20);
}

static int zsetMemberDigest(void *priv, const unsigned char *m, size_t len, double score) {
    unsigned char e[20] = {0};
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "%.17g", score);
    mixDigest(e, m, len);
    mixDigest(e, buf, (size_t)n);
    xorDigest(priv, e, 20);
    return 1;
}

/* --- per type (ObjectType.digest, registered by rdbRegisterTypes) --- */

void digestString(const kvobj *o, unsigned char d[20]) {
    char buf[32];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    mixDigest(d, p, len);
}

void digestList(const kvobj *o, unsigned char d[20]) {
    ListRef lr;
    QuicklistIter *it = quicklistIter(listOpen(&lr, (kvobj *)o), QL_HEAD);
    QlEntry e;
    while (quicklistNext(it, &e)) {
        if (e.str) {
            mixDigest(d, e.str, e.len);
        } else {
            char buf[32];
            int n = snprintf(buf, sizeof(buf), "%lld", e.ival);
            mixDigest(d, buf, (size_t)n);
        }
    }
    quicklistIterRelease(it);
    listClose(&lr, 0);
}

void digestSet(const kvobj *o, unsigned char d[20]) { setValueForEach(o, setMemberDigest, d); }

void digestZset(const kvobj *o, unsigned char d[20]) {
    unsigned long n = zsetLength(o);
    if (n) zsetForEachByRank(o, 0, (long)n - 1, 0, zsetMemberDigest, d);
}

void digestHash(const kvobj *o, unsigned char d[20]) { hashValueForEach(o, hashPairDigest, d); }

/* A stream mixes each live entry's "ms.seq", then its fields and values;
 * consumer groups are not part of Redis 7.0's digest. */
void digestStream(const kvobj *o, unsigned char d[20]) {
    StreamIter it;
    streamIterStart(&it, kvPtr(o), NULL, NULL, 0);
    StreamID id;
    long long nf;
    while (streamIterNext(&it, &id, &nf)) {
        char buf[64];
        int n = snprintf(buf, sizeof(buf), "%llu.%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
        mixDigest(d, buf, (size_t)n);
        while (nf--) {
            const unsigned char *f, *v;
            size_t flen, vlen;
            streamIterField(&it, &f, &flen, &v, &vlen);
            mixDigest(d, f, flen);
            mixDigest(d, v, vlen);
        }
    }
}

void digestValue(const kvobj *o, unsigned char d[20]) {
    if (kvPacked(o)) { /* a walk's entry: from a rebuilt copy (db.h) */
        kvobj *copy = dbUnpackedCopy(o);
        digestValue(copy, d);
        kvFree(copy);
        return;
    }
    mixUint32(d, (uint32_t)kvType(o));
    const ObjectType *ops = objectTypeOps(kvType(o));
    if (ops && ops->digest) ops->digest(o, d);
    if (kvHasExpire(o)) xorDigest(d, "!!expire!!", 10);
}

int digestDbId;

void digestDataset(unsigned char out[20]) {
    memset(out, 0, 20);
    dbVerifyAll(server.db, server.cfg.databases); /* values loaded unverified */
    for (int j = 0; j < server.cfg.databases; j++) {
        Db *db = &server.db[j];
        if (dbSize(db) == 0) continue;
        mixUint32(out, (uint32_t)j);
        digestDbId = j;
        DbIter it;
        dbIterInit(&it, db);
        kvobj *o;
        while ((o = dbIterNext(&it)) != NULL) {
            unsigned char d[20] = {0};
            mixDigest(d, kvKey(o), kvKeyLen(o));
            digestValue(o, d);
            xorDigest(out, d, 20);
        }
        dbIterRelease(&it);
    }
}
