/* rdb.c -- RDB snapshots and DUMP payloads (format in rdb.h).
 *
 * Writing goes through an RdbWriter (rdb_int.h): an sds buffer flushed to
 * a file descriptor every RDB_FLUSH_BYTES (or kept whole for a DUMP
 * payload), the CRC-64 folded in as bytes leave.  A snapshot's keys may be
 * serialized by several threads (rdb_threads.c): the savers below only
 * read the value they are given.  Reading works on memory: a payload, or
 * the snapshot file mapped read-only; an RdbReader is the buffer and a
 * position, and every decoder checks what remains before it reads or
 * reserves.  A snapshot's top-level loop keeps its state between records
 * in an RdbStream, so that a replica can feed it the bytes as they come
 * (a record short of bytes is retried from its start on a later feed).  Values are built outside the keyspace through the type
 * modules' load builders (hash.h, set.h, zset.h) and the quicklist API, then
 * wrapped in a key entry.  Each type's save and load are its ObjectType's
 * rdbType/rdbSave/rdbLoad slots (rdbRegisterTypes fills them at start-up):
 * the snapshot and DUMP code call them and never switch on the type. */
#include "persist/rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/crc64.h"
#include "ds/intset.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "ds/rdbcodec.h"
#include "ds/sds.h"
#include "ds/stream.h"
#include "ds/util.h"
#include "persist/digest.h"
#include "persist/rdb_int.h"
#include "script/function.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/member_ttl.h"
#include "types/set.h"
#include "types/zset.h"

#define RDB_FLUSH_BYTES (64 * 1024)
#define RDB_INCREMENTAL_FSYNC_BYTES (4 * 1024 * 1024) /* as Redis's REDIS_AUTOSYNC_BYTES */

/* ------------------------------------------------------------------------ */
/* Writing                                                                    */
/* ------------------------------------------------------------------------ */

int (*rdbReplInfoProvider)(RdbReplInfo *out);
void (*rdbLoadExpiredHook)(int dbid, const char *key, size_t len);
RdbLoadInfo rdbLastLoaded;

/* Writes p[0..n) to the file, folding it into the CRC.  Returns 0, or -1
 * after a failed write (sticky). */
static int rwWriteOut(RdbWriter *w, const char *p, size_t n, int fold) {
    if (w->failed) return -1;
    if (w->checksum && fold) w->crc = crc64(w->crc, p, n);
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(w->fd, p + off, n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && errno == EAGAIN && w->waitMs > 0) {
            struct pollfd pfd = {.fd = w->fd, .events = POLLOUT};
            if (poll(&pfd, 1, (int)w->waitMs) > 0) continue;
            errno = ETIMEDOUT;
        }
        if (k <= 0) {
            w->failed = 1;
            w->err = k < 0 ? errno : EIO;
            return -1;
        }
        off += (size_t)k;
    }
    /* Incremental fsync (rdb-save-incremental-fsync, or for an AOF base
     * aof-rewrite-incremental-fsync): the kernel never
     * holds much unwritten, so the final fsync does not stall the disk. */
    if (w->syncEvery && (w->sinceSync += n) >= w->syncEvery) {
        fdatasync(w->fd);
        w->sinceSync = 0;
    }
    return 0;
}

/* Hands the buffered bytes on: to the file, or to the sink of a save
 * thread.  Returns 0, or -1 after a failed write (sticky). */
static int rwFlush(RdbWriter *w) {
    if (w->sink) return w->sink(w);
    if (w->fd < 0 || w->failed) return w->failed ? -1 : 0;
    if (rwWriteOut(w, w->buf, sdsLen(w->buf), 1) < 0) return -1;
    sdsClear(w->buf);
    return 0;
}

int rdbWriterPutChecked(RdbWriter *w, const char *p, size_t n, uint64_t crc) {
    if (rwFlush(w) < 0) return -1;
    if (w->checksum) w->crc = crc64Combine(w->crc, crc, n);
    return rwWriteOut(w, p, n, 0);
}

static int rwMaybeFlush(RdbWriter *w) {
    return sdsLen(w->buf) >= (w->flushAt ? w->flushAt : RDB_FLUSH_BYTES) ? rwFlush(w) : 0;
}

static void rwByte(RdbWriter *w, unsigned char b) { w->buf = sdsCatLen(w->buf, &b, 1); }
static void rwLen(RdbWriter *w, uint64_t len) { w->buf = rdbEncodeLen(w->buf, len); }
static void rwString(RdbWriter *w, const void *p, size_t len) {
    w->buf = rdbEncodeString(w->buf, p, len, w->compress);
}
static void rwLe(RdbWriter *w, uint64_t v, int bytes) {
    unsigned char b[8];
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
    w->buf = sdsCatLen(w->buf, b, (size_t)bytes);
}

static int quicklistNodeSave(void *ctx, int plain, const unsigned char *data, size_t len) {
    RdbWriter *w = ctx;
    rwLen(w, plain ? QUICKLIST_NODE_PLAIN : QUICKLIST_NODE_PACKED);
    rwString(w, data, len);
    return rwMaybeFlush(w);
}

static void setMemberSave(void *priv, const char *m, size_t len) {
    RdbWriter *w = priv;
    rwString(w, m, len);
    rwMaybeFlush(w);
}

static void hashPairSave(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen) {
    RdbWriter *w = priv;
    rwString(w, f, flen);
    rwString(w, v, vlen);
    rwMaybeFlush(w);
}

static int zsetMemberSave(void *priv, const unsigned char *m, size_t len, double score) {
    RdbWriter *w = priv;
    rwString(w, m, len);
    uint64_t bits;
    memcpy(&bits, &score, 8);
    rwLe(w, bits, 8);
    rwMaybeFlush(w);
    return 1; /* go on */
}

/* --- per type: the type byte and body (ObjectType.rdbType / rdbSave) --- */

static int stringRdbType(const kvobj *o) {
    (void)o;
    return RDB_TYPE_STRING;
}

static void stringRdbSave(RdbWriter *w, const kvobj *o) {
    char buf[32];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    rwString(w, p, len);
}

static int listRdbType(const kvobj *o) {
    (void)o;
    return RDB_TYPE_LIST_QUICKLIST_2;
}

/* A bare listpack list is written as the one-node quicklist it stands
 * for: Redis 7.0's format either way.  Read only (no quicklist view is
 * lent), as a save thread needs. */
static void listRdbSave(RdbWriter *w, const kvobj *o) {
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        const unsigned char *lp = kvPtr(o);
        int nodes = lpLength(lp) > 0;
        rwLen(w, (uint64_t)nodes);
        if (nodes) quicklistNodeSave(w, 0, lp, lpBytes(lp));
        return;
    }
    Quicklist *ql = kvPtr(o);
    rwLen(w, quicklistNodeCount(ql));
    quicklistForEachNode(ql, quicklistNodeSave, w);
}

static int setRdbType(const kvobj *o) { return kvEncoding(o) == OBJ_ENC_INTSET ? RDB_TYPE_SET_INTSET : RDB_TYPE_SET; }

static void setRdbSave(RdbWriter *w, const kvobj *o) {
    if (kvEncoding(o) == OBJ_ENC_INTSET) {
        rwString(w, kvPtr(o), intsetBlobLen(kvPtr(o)));
        return;
    }
    rwLen(w, setValueLength(o));
    setValueForEach(o, setMemberSave, w);
}

static int zsetRdbType(const kvobj *o) {
    return kvEncoding(o) == OBJ_ENC_LISTPACK ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2;
}

static void zsetRdbSave(RdbWriter *w, const kvobj *o) {
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        rwString(w, kvPtr(o), lpBytes(kvPtr(o)));
        return;
    }
    unsigned long n = zsetLength(o);
    rwLen(w, n);
    /* Tail to head, as Redis writes (loading then inserts at the head). */
    zsetForEachByRank(o, 0, (long)n - 1, 1, zsetMemberSave, w);
}

/* A hash with a field TTL is written as Redis 7.4's RDB_TYPE_HASH_METADATA
 * whatever its layout: the minimum expire (8 bytes), the count, then per
 * field its TTL (0: none, else expire - minimum + 1), field and value.  Fields already expired are
 * written too (a loader drops or expires them), so that the count and the
 * fields never depend on the clock. */
typedef struct HashTtlSave {
    RdbWriter *w;
    long long min;
} HashTtlSave;

static void hashMinTtl(void *priv, const unsigned char *f, size_t flen, long long when) {
    (void)f, (void)flen;
    HashTtlSave *hs = priv;
    if (!hs->min || when < hs->min) hs->min = when;
}

static void hashTtlFieldSave(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen,
                             long long when) {
    HashTtlSave *hs = priv;
    rwLen(hs->w, when ? (uint64_t)(when - hs->min + 1) : 0);
    rwString(hs->w, f, flen);
    rwString(hs->w, v, vlen);
    rwMaybeFlush(hs->w);
}

/* A listpackex (the compact TTL layout) is written as Redis 8 writes it,
 * RDB_TYPE_HASH_LISTPACK_EX: the minimum expire (8 bytes), then the listpack of field, value, expire triples as it
 * is (Cairn keeps Redis's order: by expire, fields without one last), so
 * DUMP payloads equal Redis 8's.  Redis writes the minimum its expiry index
 * registered, which lags behind HPERSIST/HDEL until its next active pass;
 * Cairn writes the exact one, which loads the same.  A listpackex whose
 * fields have no expire left is written as a plain hash (version 10). */
static int hashRdbType(const kvobj *o) {
    if (hashValueHasTtl(o)) return kvEncoding(o) == OBJ_ENC_LISTPACK_EX ? RDB_TYPE_HASH_LISTPACK_EX : RDB_TYPE_HASH_METADATA;
    return kvEncoding(o) == OBJ_ENC_LISTPACK ? RDB_TYPE_HASH_LISTPACK : RDB_TYPE_HASH;
}

static void hashRdbSave(RdbWriter *w, const kvobj *o) {
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        rwString(w, kvPtr(o), lpBytes(kvPtr(o)));
        return;
    }
    if (kvEncoding(o) == OBJ_ENC_LISTPACK_EX && hashValueHasTtl(o)) {
        HashTtlSave hs = {w, 0};
        hashValueForEachTtl(o, hashMinTtl, &hs);
        rwLe(w, (uint64_t)hs.min, 8);
        rwString(w, kvPtr(o), lpBytes(kvPtr(o)));
        return;
    }
    if (hashValueHasTtl(o)) {
        HashTtlSave hs = {w, 0};
        hashValueForEachTtl(o, hashMinTtl, &hs);
        rwLe(w, hs.min ? (uint64_t)hs.min : (uint64_t)1 << 48, 8);
        rwLen(w, hashValueLength(o));
        hashValueForEachWithTtl(o, hashTtlFieldSave, &hs);
        return;
    }
    rwLen(w, hashValueLength(o));
    hashValueForEach(o, hashPairSave, w);
}

/* A stream: Redis 7.0's RDB_TYPE_STREAM_LISTPACKS_2.  The nodes (master
 * ID key, listpack as is), length, last ID, first ID, max deleted ID,
 * entries added; then each group: name, last ID, entries read, its PEL
 * (raw ID, delivery time, delivery count) and consumers (name, seen time,
 * the raw IDs of their pending entries). */
static int streamRdbType(const kvobj *o) {
    (void)o;
    return RDB_TYPE_STREAM_LISTPACKS_2;
}

static void rwStreamID(RdbWriter *w, const StreamID *id) {
    rwLen(w, id->ms);
    rwLen(w, id->seq);
}

static void streamRdbSave(RdbWriter *w, const kvobj *o) {
    const Stream *s = kvPtr(o);
    unsigned char scratch[STREAM_Z_MAX_RAW]; /* not the stream's node cache: a save thread only reads */
    rwLen(w, omapSize(s->nodes));
    for (OmapNode *n = omapFirst(s->nodes); n; n = omapNext(n)) {
        size_t klen, len;
        const unsigned char *k = omapKey(n, &klen);
        const unsigned char *lp = streamNodeRead(n, scratch, &len);
        rwString(w, k, klen);
        rwString(w, lp, len);
    }
    rwLen(w, s->length);
    rwStreamID(w, &s->lastId);
    rwStreamID(w, &s->firstId);
    rwStreamID(w, &s->maxDeletedId);
    rwLen(w, s->entriesAdded);
    rwLen(w, s->groups ? omapSize(s->groups) : 0);
    if (!s->groups) return;
    for (OmapNode *g = omapFirst(s->groups); g; g = omapNext(g)) {
        size_t glen;
        const unsigned char *name = omapKey(g, &glen);
        const StreamCG *cg = omapValue(g);
        rwString(w, name, glen);
        rwStreamID(w, &cg->lastId);
        rwLen(w, (uint64_t)cg->entriesRead);
        rwLen(w, omapSize(cg->pel));
        for (OmapNode *p = omapFirst(cg->pel); p; p = omapNext(p)) {
            size_t klen;
            const StreamNACK *nack = omapValue(p);
            w->buf = sdsCatLen(w->buf, omapKey(p, &klen), STREAM_ID_BYTES);
            rwLe(w, (uint64_t)nack->deliveryTime, 8);
            rwLen(w, nack->deliveryCount);
        }
        rwLen(w, omapSize(cg->consumers));
        for (OmapNode *cn = omapFirst(cg->consumers); cn; cn = omapNext(cn)) {
            const StreamConsumer *c = omapValue(cn);
            rwString(w, c->name, sdsLen(c->name));
            rwLe(w, (uint64_t)c->seenTime, 8);
            rwLen(w, omapSize(c->pel));
            for (OmapNode *p = omapFirst(c->pel); p; p = omapNext(p)) {
                size_t klen;
                w->buf = sdsCatLen(w->buf, omapKey(p, &klen), STREAM_ID_BYTES);
            }
        }
        rwMaybeFlush(w);
    }
}

sds rdbDumpValue(const kvobj *o) {
    if (kvPacked(o)) { /* callers look the key up first; a rebuilt copy anyway */
        kvobj *copy = dbUnpackedCopy(o);
        sds out = rdbDumpValue(copy);
        kvFree(copy);
        return out;
    }
    RdbWriter w = {.buf = sdsEmpty(), .fd = -1, .compress = server.cfg.rdbcompression};
    const ObjectType *ops = objectTypeOps(kvType(o));
    rwByte(&w, (unsigned char)ops->rdbType(o));
    ops->rdbSave(&w, o);
    unsigned version = kvType(o) == OBJ_HASH && hashValueHasTtl(o) ? RDB_VERSION_FIELD_TTL : RDB_VERSION;
    unsigned char t[RDB_PAYLOAD_TRAILER] = {version & 0xff, version >> 8};
    w.buf = sdsCatLen(w.buf, t, 2);
    uint64_t crc = crc64(0, w.buf, sdsLen(w.buf));
    rwLe(&w, crc, 8);
    return w.buf;
}

size_t rdbSerializedLength(const kvobj *o) {
    if (kvPacked(o)) {
        kvobj *copy = dbUnpackedCopy(o);
        size_t n = rdbSerializedLength(copy);
        kvFree(copy);
        return n;
    }
    RdbWriter w = {.buf = sdsEmpty(), .fd = -1, .compress = server.cfg.rdbcompression};
    objectTypeOps(kvType(o))->rdbSave(&w, o);
    size_t n = sdsLen(w.buf);
    sdsFree(w.buf);
    return n;
}

int rdbPayloadIsIntact(const unsigned char *p, size_t len) {
    if (len < RDB_PAYLOAD_TRAILER) return 0;
    const unsigned char *t = p + len - RDB_PAYLOAD_TRAILER;
    unsigned version = t[0] | (unsigned)t[1] << 8;
    /* Redis 7.0's versions, and 12 for a hash with field TTLs (Redis 7.4's
     * types 22-25) only: other newer payloads are refused as 7.0 does. */
    if (version > RDB_VERSION && (version != RDB_VERSION_FIELD_TTL || len <= RDB_PAYLOAD_TRAILER || p[0] < 22 ||
                                  p[0] > 25))
        return 0;
    if (rdbSkipChecksumValidation) return 1;
    uint64_t crc = 0;
    for (int i = 0; i < 8; i++) crc |= (uint64_t)t[2 + i] << (8 * i);
    return crc64(0, p, len - 8) == crc;
}

/* --- snapshot file --- */

void rdbLogLoaded(const RdbLoadInfo *info) {
    if (info->emptySkipped)
        serverLog(LL_NOTICE, "Done loading RDB, keys loaded: %lld, keys expired: %lld, empty keys skipped: %lld.",
                  info->keysLoaded, info->keysExpired, info->emptySkipped);
    else
        serverLog(LL_NOTICE, "Done loading RDB, keys loaded: %lld, keys expired: %lld.", info->keysLoaded,
                  info->keysExpired);
}

static void rwAuxStr(RdbWriter *w, const char *k, const char *v) {
    rwByte(w, RDB_OPCODE_AUX);
    rwString(w, k, strlen(k));
    rwString(w, v, strlen(v));
}

static void rwAuxInt(RdbWriter *w, const char *k, long long v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", v);
    rwAuxStr(w, k, buf);
}

static int policyIsLru(void) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LRU || p == MAXMEMORY_ALLKEYS_LRU;
}

static int policyIsLfu(void) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_ALLKEYS_LFU;
}

/* The caller's progress hooks (persist.c), off unless set. */
static RdbSaveProgress *saveProgress;
static RdbLoadProgress *loadProgress;

void rdbSetProgressHooks(RdbSaveProgress *save, RdbLoadProgress *load) {
    saveProgress = save;
    loadProgress = load;
}

/* rdb-key-save-delay and key-load-delay (tests slow a save or a load down
 * to act while it runs): usec microseconds, or when negative 1 µs once in
 * -usec keys on average, as Redis's debug delay does. */
static void keyDelay(int usec) {
    if (usec < 0) usec = rand() % (-(long long)usec) == 0 ? 1 : 0;
    if (usec > 0) usleep((useconds_t)usec);
}

void rdbKeyBytes(RdbWriter *w, const kvobj *o, int lru, int lfu) {
    if (__builtin_expect(kvPacked(o), 0)) { /* from a rebuilt copy: the table stays as it is (db.h) */
        kvobj *copy = dbUnpackedCopy(o);
        rdbKeyBytes(w, copy, lru, lfu);
        kvFree(copy);
        return;
    }
    long long when = kvExpire(o);
    if (when != -1) {
        rwByte(w, RDB_OPCODE_EXPIRETIME_MS);
        rwLe(w, (uint64_t)when, 8);
    }
    if (lru) {
        unsigned now = dbLruClock & 0xffffff, at = kvLru(o) & 0xffffff;
        unsigned idle = now >= at ? now - at : (0x1000000 - at) + now;
        rwByte(w, RDB_OPCODE_IDLE);
        rwLen(w, idle);
    } else if (lfu) {
        rwByte(w, RDB_OPCODE_FREQ);
        rwByte(w, (unsigned char)dbLfuDecayed(o));
    }
    const ObjectType *ops = objectTypeOps(kvType(o));
    rwByte(w, (unsigned char)ops->rdbType(o));
    rwString(w, kvKey(o), kvKeyLen(o));
    ops->rdbSave(w, o);
}

void rdbKeysSaved(RdbWriter *w, long long n) {
    /* Key by key, so that a delayed save reports as it goes: at keys 1,
     * 1025, 2049, ... (a multiple of 1024 keys before it), as Redis checks
     * its progress. */
    for (long long i = 0; i < n; i++) {
        /* A delayed save (a test's) streams what it wrote before each
         * pause, as Redis's does, whatever the thread count. */
        if (server.cfg.rdbKeySaveDelay) {
            rwFlush(w); /* a failure is sticky: the save's next flush reports it */
            keyDelay(server.cfg.rdbKeySaveDelay);
        }
        w->keysDone++;
        if (saveProgress && (w->keysDone & 1023) == 1) saveProgress(w->keysDone);
    }
}

/* Writes a database's keys on this thread alone. */
static int rwDbKeys(RdbWriter *w, Db *db, int lru, int lfu) {
    DbIter it;
    dbIterInit(&it, db);
    kvobj *o;
    int rc = 0;
    while (rc == 0 && (o = dbIterNext(&it)) != NULL) {
        rdbKeyBytes(w, o, lru, lfu);
        rdbKeysSaved(w, 1);
        rc = rwMaybeFlush(w);
    }
    dbIterRelease(&it);
    return rc;
}

/* RDB_EXCLUDE_* of the snapshot being written (rdbSaveFdFiltered). */
static int saveExclude;

/* The snapshot's opening: magic, AUX fields, functions. */
static void rwSnapshotHead(RdbWriter *w, int aofBase) {
    /* Version 10 (Redis 7.0 loads it) unless a hash may hold field TTLs. */
    w->buf = sdsCat(w->buf, hashAnyFieldTtl() ? "REDIS0012" : "REDIS0010");
    rwAuxStr(w, "redis-ver", REDIS_COMPAT_VERSION);
    rwAuxInt(w, "redis-bits", (long long)sizeof(void *) * 8);
    rwAuxInt(w, "ctime", (long long)time(NULL));
    rwAuxInt(w, "used-mem", (long long)xmallocUsed());
    RdbReplInfo ri;
    if (rdbReplInfoProvider && rdbReplInfoProvider(&ri)) {
        rwAuxInt(w, "repl-stream-db", ri.streamDb);
        rwAuxStr(w, "repl-id", ri.replid);
        rwAuxInt(w, "repl-offset", ri.offset);
    }
    rwAuxInt(w, "aof-base", aofBase);
    if (rdbModuleAuxSave && !(saveExclude & RDB_EXCLUDE_DATA)) rdbModuleAuxSave(w, 1);
    if (!(saveExclude & RDB_EXCLUDE_FUNCTIONS)) w->buf = functionsRdbAppend(w->buf, w->compress);
}

/* A database's opening: SELECTDB, RESIZEDB. */
static void rwDbHead(RdbWriter *w, int j, uint64_t size, uint64_t expires) {
    rwByte(w, RDB_OPCODE_SELECTDB);
    rwLen(w, (uint64_t)j);
    if (size == 0) return;
    rwByte(w, RDB_OPCODE_RESIZEDB);
    rwLen(w, size);
    rwLen(w, expires);
}

/* The snapshot's end: EOF and the CRC-64, flushed.  0 or -1. */
static int rwSnapshotTail(RdbWriter *w) {
    rwByte(w, RDB_OPCODE_EOF);
    if (rwFlush(w) < 0) return -1;
    /* The CRC covers everything up to here; it is written unchecksummed. */
    uint64_t crc = w->checksum ? w->crc : 0;
    w->checksum = 0;
    rwLe(w, crc, 8);
    return rwFlush(w);
}

void rdbSnapshotHead(RdbWriter *w, int aofBase) { rwSnapshotHead(w, aofBase); }
void rdbSnapshotDbHead(RdbWriter *w, int j, uint64_t size, uint64_t expires) { rwDbHead(w, j, size, expires); }
int rdbSnapshotTail(RdbWriter *w) { return rwSnapshotTail(w); }
int rdbWriterMaybeFlush(RdbWriter *w) { return rwMaybeFlush(w); }
int rdbWriterFlush(RdbWriter *w) { return rwFlush(w); }
void rdbSaveMetaPolicy(int *lru, int *lfu) { *lru = policyIsLru(), *lfu = policyIsLfu(); }

/* Writes the snapshot body to w.  Returns 0 or -1 on a write error. */
static int rwSnapshot(RdbWriter *w, int aofBase) {
    rwSnapshotHead(w, aofBase);
    int lru = policyIsLru(), lfu = policyIsLfu(), threads = rdbSaveThreadCount();
    for (int j = 0; j < server.cfg.databases && !(saveExclude & RDB_EXCLUDE_DATA); j++) {
        Db *db = &server.db[j];
        size_t size = dbSize(db);
        if (size == 0) continue;
        rwDbHead(w, j, size, dbExpiresCount(db));
        rdbModuleDbId = j;
        int rc = threads > 1 ? rdbSaveDbThreaded(w, db, lru, lfu, threads) : 1;
        if (rc == 1) rc = rwDbKeys(w, db, lru, lfu); /* one thread, or none could start */
        rdbModuleDbId = -1;
        if (rc < 0) return -1;
    }
    if (rdbModuleAuxSave && !(saveExclude & RDB_EXCLUDE_DATA)) rdbModuleAuxSave(w, 2);
    if (!(saveExclude & RDB_EXCLUDE_DATA)) {
        /* Member TTLs (types/member_ttl.h): an AUX field after the keys,
         * which Redis 7.0's loader skips as unknown. */
        sds mt = memberTtlRdbBlob(server.db, server.cfg.databases);
        if (mt) {
            rwByte(w, RDB_OPCODE_AUX);
            rwString(w, MEMBER_TTL_AUX, strlen(MEMBER_TTL_AUX));
            rwString(w, mt, sdsLen(mt));
            sdsFree(mt);
        }
    }
    return rwSnapshotTail(w);
}

/* fsync of the directory holding path, so a rename is durable. */
static int fsyncDirOf(const char *path);
int rdbFsyncDirOf(const char *path) { return fsyncDirOf(path); }
static int fsyncDirOf(const char *path) {
    char *copy = xstrdup(path);
    int fd = open(dirname(copy), O_RDONLY);
    xfree(copy);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int rdbSaveFd(int fd, long long timeoutMs) {
    RdbWriter w = {.buf = sdsEmpty(), .fd = fd, .compress = server.cfg.rdbcompression,
                   .checksum = server.cfg.rdbchecksum, .waitMs = timeoutMs};
    int rc = rwSnapshot(&w, 0);
    sdsFree(w.buf);
    if (rc < 0) errno = w.err;
    return rc;
}

int rdbSaveFdFiltered(int fd, long long timeoutMs, int exclude) {
    saveExclude = exclude;
    int rc = rdbSaveFd(fd, timeoutMs);
    saveExclude = 0;
    return rc;
}

int rdbSaveFile(const char *filename) { return rdbSaveFileEx(filename, 0); }

int rdbSaveFileEx(const char *filename, int aofBase) {
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        int e = errno;
        char cwd[1024];
        serverLog(LL_WARNING, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                  getcwd(cwd, sizeof(cwd)) ? cwd : "unknown", strerror(e));
        errno = e;
        return -1;
    }
    RdbWriter w = {.buf = sdsEmpty(), .fd = fd, .compress = server.cfg.rdbcompression,
                   .checksum = server.cfg.rdbchecksum,
                   .syncEvery = (aofBase ? server.cfg.aofRewriteIncrementalFsync : server.cfg.rdbSaveIncrementalFsync)
                                    ? RDB_INCREMENTAL_FSYNC_BYTES
                                    : 0};
    int rc = rwSnapshot(&w, aofBase);
    int e = w.err;
    sdsFree(w.buf);
    if (rc == 0 && fsync(fd) < 0) {
        rc = -1;
        e = errno;
    }
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, filename) < 0) {
        e = errno;
        char cwd[1024];
        serverLog(LL_WARNING, "Error moving temp DB file %s on the final destination %s (in server root dir %s): %s",
                  tmp, filename, getcwd(cwd, sizeof(cwd)) ? cwd : "unknown", strerror(e));
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (rc < 0) {
        serverLog(LL_WARNING, "Write error saving DB on disk: %s", strerror(e));
        unlink(tmp);
        errno = e;
        return -1;
    }
    fsyncDirOf(filename);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct RdbReader {
    const unsigned char *p;
    size_t len, pos;
    const char *why; /* reason of the first error */
    int shallow;     /* sanitize-dump-payload off for this input (see Build) */
    int defer;       /* a shallow file or full-sync load: hash and zset
                      * listpacks are checked on first access (deferListpack) */
    RdbPrefetch *pf; /* a file load's strings expanded ahead (rdb_load_threads.c) */
    size_t pfNext;   /* with pf: the offset of the next expanded string */
    size_t pfWake;   /* with pf: the record offset to call rdbPrefetchAt at */
    int withExpire;  /* the value being read is a key's with an expire (`expire`, */
    long long expire; /* absolute ms): its entry is built with it (newEntry...) */
    int corrupt;      /* why is one of Redis's "... integrity check failed." */
    long long fieldsExpiredBefore; /* a file load on a primary: hash fields whose
                                    * TTL passed before this (ms) are dropped, as
                                    * Redis 7.4 drops them; 0: kept */
} RdbReader;

static int rrFail(RdbReader *r, const char *why) {
    if (!r->why) r->why = why;
    return -1;
}

/* A value that fails its integrity check, with Redis's reason (RESTORE
 * logs it as Redis does). */
static int rrCorrupt(RdbReader *r, const char *why) {
    if (!r->why) r->corrupt = 1;
    return rrFail(r, why);
}

static size_t rrLeft(const RdbReader *r) { return r->len - r->pos; }

/* Redis's reason for data that ends too soon. */
#define WHY_EOF "Unexpected EOF reading RDB file"

static int rrByte(RdbReader *r, unsigned char *b) {
    if (r->pos >= r->len) return rrFail(r, WHY_EOF);
    *b = r->p[r->pos++];
    return 0;
}

static int rrLe(RdbReader *r, int bytes, uint64_t *v) {
    if (rrLeft(r) < (size_t)bytes) return rrFail(r, WHY_EOF);
    uint64_t x = 0;
    for (int i = 0; i < bytes; i++) x |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += (size_t)bytes;
    *v = x;
    return 0;
}

/* Why a length (or a string's length) at pos cannot be read: the data
 * ends, or (Redis's words) its first byte is no length encoding. */
static const char *lenFailWhy(const RdbReader *r, size_t pos) {
    static char buf[64];
    if (pos >= r->len) return WHY_EOF;
    unsigned char b = r->p[pos];
    if ((b >> 6) == 2 && b != 0x80 && b != 0x81) {
        snprintf(buf, sizeof(buf), "Unknown length encoding %d in rdbLoadLen()", b);
        return buf;
    }
    return WHY_EOF;
}

/* Why the string at pos cannot be read: Redis calls a length or
 * compressed length beyond the data an EOF, and bad compressed data an
 * invalid LZF string. */
static const char *stringFailWhy(const RdbReader *r, size_t pos) {
    uint64_t n;
    int special;
    size_t i = pos;
    if (rdbDecodeLen(r->p, r->len, &i, &n, &special) < 0) return lenFailWhy(r, pos);
    if (!special) return n > r->len - i ? WHY_EOF : "bad or truncated string";
    if (n == 3) {
        size_t clen, ulen;
        if (rdbDecodeLzfHeader(r->p, r->len, &i, &clen, &ulen) < 0 || clen > r->len - i) return WHY_EOF;
        return "Invalid LZF compressed string";
    }
    if (n <= 2) return WHY_EOF; /* an integer cut off */
    return "Unknown RDB string encoding type";
}

static int rrLen(RdbReader *r, uint64_t *len) {
    int special;
    if (rdbDecodeLen(r->p, r->len, &r->pos, len, &special) < 0) return rrFail(r, lenFailWhy(r, r->pos));
    if (special) return rrFail(r, "unexpected string encoding where a length was expected");
    return 0;
}

/* A collection count: each element takes at least `min` bytes, so a count
 * the remaining bytes cannot hold is corrupt. */
static int rrCount(RdbReader *r, uint64_t *n, size_t min) {
    if (rrLen(r, n) < 0) return -1;
    if (*n > rrLeft(r) / min) return rrFail(r, "collection length exceeds the data");
    return 0;
}

/* A string (kind RDB_PF_SDS or RDB_PF_BLOB) that a load thread already
 * expanded: 1 with it in *out, r->pos past it. */
static int rrPrefetched(RdbReader *r, int kind, void **out, size_t *n) {
    size_t len, end;
    if (!rdbPrefetchTake(r->pf, r->pos, kind, out, &len, &end, &r->pfNext)) return 0;
    if (n) *n = len;
    r->pos = end;
    return 1;
}

/* A string that cannot be read: its reason, and, when the data ends, the
 * position past the length fields that were there (Redis's offset). */
static int rrStringFail(RdbReader *r) {
    const char *why = stringFailWhy(r, r->pos);
    if (!strcmp(why, WHY_EOF)) r->pos = rdbStringPrefixEnd(r->p, r->len, r->pos);
    return rrFail(r, why);
}

static int rrString(RdbReader *r, sds *out) {
    if (r->pf && r->pos >= r->pfNext && rrPrefetched(r, RDB_PF_SDS, (void **)out, NULL)) return 0;
    if (rdbDecodeString(r->p, r->len, &r->pos, out) < 0) return rrStringFail(r);
    return 0;
}

/* A string in place (*p into the input) when it is stored plain, else
 * decoded into *owned (the caller frees it): for a key, which its entry
 * copies anyway. */
static int rrStringRef(RdbReader *r, const char **p, size_t *n, sds *owned) {
    *owned = NULL;
    size_t i = r->pos;
    uint64_t len;
    int special;
    if (rdbDecodeLen(r->p, r->len, &i, &len, &special) == 0 && !special && len <= r->len - i) {
        *p = (const char *)r->p + i;
        *n = (size_t)len;
        r->pos = i + (size_t)len;
        return 0;
    }
    if (rrString(r, owned) < 0) return -1;
    *p = *owned;
    *n = sdsLen(*owned);
    return 0;
}

/* A blob (listpack, ziplist, zipmap, intset, list node) as a heap block of
 * exactly *n bytes. */
static int rrBlob(RdbReader *r, unsigned char **out, size_t *n) {
    if (r->pf && r->pos >= r->pfNext && rrPrefetched(r, RDB_PF_BLOB, (void **)out, n)) return 0;
    if (rdbDecodeBlob(r->p, r->len, &r->pos, out, n) < 0) return rrStringFail(r);
    return 0;
}

/* --- ziplist and zipmap (older encodings) --- */

typedef int ZlVisit(void *priv, const unsigned char *s, size_t len);

/* Calls fn for each entry of an untrusted ziplist zl[0..size) (integers as
 * their decimal text).  Returns the entry count, or -1 when corrupt or when
 * fn returns nonzero.  The checks are those of Redis's deep ziplist
 * validation (which 7.0 always applies to a ziplist, since it converts it):
 * the header's byte count is the size, the tail offset is within it and
 * names the last entry, each entry's previous-length is the length of the
 * entry before it (0 for the first), the entries end exactly at the end
 * byte, and the header's count (unless 65535) is the number of entries. */
static long ziplistForEach(const unsigned char *zl, size_t size, ZlVisit *fn, void *priv) {
    if (size < 11) return -1;
    uint32_t bytes = zl[0] | zl[1] << 8 | zl[2] << 16 | (uint32_t)zl[3] << 24;
    uint32_t tail = zl[4] | zl[5] << 8 | zl[6] << 16 | (uint32_t)zl[7] << 24;
    unsigned hdrCount = zl[8] | (unsigned)zl[9] << 8;
    if (bytes != size || zl[size - 1] != 0xff || tail > size - 1) return -1;
    size_t pos = 10, prevRaw = 0, last = 0;
    long count = 0;
    while (pos < size - 1 && zl[pos] != 0xff) {
        size_t start = pos, prevLen;
        if (zl[pos] == 0xfe) {
            if (size - 1 - pos < 5) return -1;
            prevLen = zl[pos + 1] | (size_t)zl[pos + 2] << 8 | (size_t)zl[pos + 3] << 16 | (size_t)zl[pos + 4] << 24;
            pos += 5;
        } else {
            prevLen = zl[pos];
            pos += 1;
        }
        if (prevLen != prevRaw) return -1;
        if (pos >= size - 1) return -1;
        unsigned char e = zl[pos];
        size_t left = size - 1 - pos;
        char buf[32];
        const unsigned char *s;
        size_t len;
        if ((e >> 6) < 3) {
            size_t hdr;
            if ((e >> 6) == 0) {
                hdr = 1;
                len = e & 0x3f;
            } else if ((e >> 6) == 1) {
                if (left < 2) return -1;
                hdr = 2;
                len = (size_t)(e & 0x3f) << 8 | zl[pos + 1];
            } else {
                if (e != 0x80 || left < 5) return -1;
                hdr = 5;
                len = (size_t)zl[pos + 1] << 24 | (size_t)zl[pos + 2] << 16 | (size_t)zl[pos + 3] << 8 | zl[pos + 4];
            }
            if (len > left - hdr) return -1;
            s = zl + pos + hdr;
            pos += hdr + len;
        } else {
            long long v;
            size_t n;
            if (e == 0xc0) n = 2;
            else if (e == 0xd0) n = 4;
            else if (e == 0xe0) n = 8;
            else if (e == 0xf0) n = 3;
            else if (e == 0xfe) n = 1;
            else if (e >= 0xf1 && e <= 0xfd) n = 0;
            else return -1;
            if (n + 1 > left) return -1;
            if (n == 0) {
                v = (e & 0x0f) - 1;
            } else {
                uint64_t u = 0;
                for (size_t i = 0; i < n; i++) u |= (uint64_t)zl[pos + 1 + i] << (8 * i);
                int shift = (int)(64 - 8 * n);
                v = (long long)(u << shift) >> shift; /* sign-extend */
            }
            len = (size_t)longLongToString(buf, sizeof(buf), v);
            s = (const unsigned char *)buf;
            pos += 1 + n;
        }
        if (fn(priv, s, len)) return -1;
        prevRaw = pos - start;
        last = start;
        count++;
    }
    if (pos != size - 1) return -1;
    if (count && last != tail) return -1;
    if (hdrCount != 65535 && (unsigned long)count != hdrCount) return -1;
    return count;
}

/* Calls fn for each key and value of an untrusted zipmap.  Returns the
 * number of pairs, or -1. */
static long zipmapForEach(const unsigned char *zm, size_t size, ZlVisit *fn, void *priv) {
    if (size < 2 || zm[size - 1] != 0xff) return -1;
    size_t pos = 1;
    long count = 0;
    for (;;) {
        if (pos >= size) return -1;
        if (zm[pos] == 0xff) {
            /* The first byte counts the pairs (254 and up: unknown). */
            if (pos != size - 1 || (zm[0] < 254 && zm[0] != count / 2)) return -1;
            return count / 2;
        }
        size_t len;
        if (zm[pos] < 254) {
            len = zm[pos];
            pos += 1;
        } else if (zm[pos] == 254) {
            if (size - pos < 5) return -1;
            len = zm[pos + 1] | (size_t)zm[pos + 2] << 8 | (size_t)zm[pos + 3] << 16 | (size_t)zm[pos + 4] << 24;
            pos += 5;
        } else {
            return -1;
        }
        size_t fr = 0;
        if (count % 2 == 1) {
            if (pos >= size) return -1;
            fr = zm[pos++];
        }
        if (len > size - pos || fr > size - pos - len) return -1;
        if (fn(priv, zm + pos, len)) return -1;
        pos += len + fr;
        count++;
    }
}

/* --- building values --- */

typedef struct Build {
    int type, enc;
    void *ptr;
    sds pending;         /* hash/zset: the field or member awaiting its pair */
    unsigned long added; /* elements (pairs) added */
    /* Without deep sanitization (sanitize-dump-payload no, or clients for
     * a file), a blob's duplicate members or fields are dropped instead of
     * refusing it, and an intset's order is not checked: the value is
     * rebuilt element by element, so neither can make it inconsistent.
     * Every check that keeps memory safe (listpack and ziplist entries
     * against the buffer, lengths, counts, scores) still runs. */
    int shallow;
    int deferred; /* list: nodes adopted with their header checked only */
} Build;

static void buildFree(Build *b) {
    if (b->ptr) {
        switch (b->type) {
        case OBJ_LIST: quicklistRelease(b->ptr); break;
        case OBJ_SET: setLoadFree(b->enc, b->ptr); break;
        case OBJ_ZSET: zsetLoadFree(b->enc, b->ptr); break;
        case OBJ_HASH: hashLoadFree(b->enc, b->ptr); break;
        default: break;
        }
    }
    b->ptr = NULL;
    sdsFree(b->pending);
    b->pending = NULL;
}

static int parseScore(const unsigned char *s, size_t len, double *out) {
    char buf[128];
    if (len == 0 || len >= sizeof(buf)) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (*end || isnan(d)) return -1;
    *out = d;
    return 0;
}

/* ZlVisit that adds one element, or every second one paired with the
 * previous, to the value being built. */
static int buildVisit(void *priv, const unsigned char *s, size_t len) {
    Build *b = priv;
    if (b->type == OBJ_LIST) {
        quicklistPush(b->ptr, s, len, QL_TAIL);
        b->added++;
        return 0;
    }
    if (b->type == OBJ_SET) {
        if (setLoadAdd(&b->enc, &b->ptr, (const char *)s, len)) b->added++;
        else if (!b->shallow) return -1;
        return 0;
    }
    if (!b->pending) {
        b->pending = sdsNewLen(s, len);
        return 0;
    }
    int ok;
    if (b->type == OBJ_HASH) {
        ok = hashLoadAdd(&b->enc, &b->ptr, b->pending, sdsLen(b->pending), s, len) || b->shallow;
    } else {
        double score;
        if (parseScore(s, len, &score) < 0) {
            ok = 0;
        } else {
            ok = zsetLoadAdd(&b->enc, &b->ptr, (unsigned char *)b->pending, sdsLen(b->pending), score) ||
                 b->shallow;
        }
    }
    sdsFree(b->pending);
    b->pending = NULL;
    b->added++;
    return ok ? 0 : -1;
}

static void buildBegin(Build *b, int type, size_t hint) {
    memset(b, 0, sizeof(*b));
    b->type = type;
    switch (type) {
    case OBJ_LIST:
        b->enc = OBJ_ENC_QUICKLIST;
        b->ptr = quicklistCreate((int)server.cfg.listMaxListpackSize, server.cfg.listCompressDepth);
        break;
    case OBJ_SET: setLoadBegin(hint, &b->enc, &b->ptr); break;
    case OBJ_ZSET: zsetLoadBegin(hint, &b->enc, &b->ptr); break;
    case OBJ_HASH: hashLoadBegin(hint, &b->enc, &b->ptr); break;
    default: break;
    }
}

/* A hash or sorted-set listpack (validated, a heap block) that is already
 * what the value's listpack encoding holds becomes the value as it is, as
 * Redis keeps it, instead of being rebuilt element by element: 1 when done
 * (the value then owns lp). */
static int adoptListpack(Build *b, int rdbType, unsigned char *lp) {
    int enc;
    void *ptr;
    int ok;
    if (rdbType == RDB_TYPE_HASH_LISTPACK) ok = hashLoadListpack(lp, &enc, &ptr);
    else if (rdbType == RDB_TYPE_ZSET_LISTPACK) ok = zsetLoadListpack(lp, &enc, &ptr);
    else return 0;
    if (!ok) return 0;
    buildFree(b);
    b->enc = enc;
    b->ptr = ptr;
    b->added = lpLength(ptr) / 2;
    return 1;
}

/* The deferred check (rdbDeferLoadChecks, rdb.h).  A hash or sorted-set
 * listpack (or a list's listpack node: loadQuicklist) of a file loaded
 * without deep sanitization becomes the value
 * with only what its header tells checked: total bytes and terminator
 * (lpValidateIntegrity shallow, as Redis checks it with
 * sanitize-dump-payload no), an element count that is known, nonzero,
 * even and within the *-max-listpack-entries limit.  Its entries, scores,
 * order, duplicates and value lengths are checked on first access
 * (rdbVerifyValue, through the db lookups), which then does what the load
 * does today.  That check was two thirds of the load time of these shapes.
 * 1 when adopted (the value owns lp). */
int rdbDeferLoadChecks = 1;
int rdbSkipChecksumValidation;

static int deferListpack(Build *b, int rdbType, unsigned char *lp, size_t n) {
    if (rdbType != RDB_TYPE_HASH_LISTPACK && rdbType != RDB_TYPE_ZSET_LISTPACK) return 0;
    if (!lpValidateIntegrity(lp, n, 0)) return 0;
    unsigned count = lp[4] | (unsigned)lp[5] << 8; /* 65535: unknown */
    long long max = rdbType == RDB_TYPE_HASH_LISTPACK ? server.cfg.hashMaxListpackEntries
                                                      : server.cfg.zsetMaxListpackEntries;
    if (count == 0 || count == 65535 || count % 2 || count / 2 > max) return 0;
    buildFree(b);
    b->enc = OBJ_ENC_LISTPACK_UNVERIFIED;
    b->ptr = lp;
    b->added = count / 2;
    dbUnverified++;
    return 1;
}

static int nodeCorrupt(void *ctx, int plain, const unsigned char *data, size_t len) {
    (void)ctx;
    return !plain && !lpValidateIntegrity((unsigned char *)data, len, 1);
}

int rdbVerifyValue(const kvobj *o, int *enc, void **ptr, const char **why) {
    unsigned char *lp = kvPtr(o);
    int type = kvType(o);
    if (type == OBJ_LIST) {
        if (!quicklistForEachNode(kvPtr(o), nodeCorrupt, NULL)) return 1;
        *why = "list listpack node integrity check failed";
        return -1;
    }
    if (!lpValidateIntegrity(lp, lpBytes(lp), 1)) {
        *why = "listpack integrity check failed";
        return -1;
    }
    int e;
    void *p;
    if (type == OBJ_HASH ? hashLoadListpack(lp, &e, &p) : zsetLoadListpack(lp, &e, &p)) return 1;
    /* Not what the encoding holds (duplicates, order, long values):
     * rebuilt element by element, as a shallow load does. */
    Build b;
    buildBegin(&b, type, 0);
    b.shallow = 1;
    int ok = 1;
    for (unsigned char *x = lpFirst(lp); x && ok; x = lpNext(lp, x)) {
        unsigned int len;
        unsigned char ib[LP_INTBUF_SIZE];
        unsigned char *s = lpGetValue(x, &len, ib, NULL, NULL);
        ok = buildVisit(&b, s, len) == 0;
    }
    if (!ok || b.pending || !b.added) {
        buildFree(&b);
        *why = type == OBJ_ZSET ? "corrupt sorted-set listpack (bad score or element count)"
                                : "corrupt hash listpack (odd element count)";
        return -1;
    }
    if (type == OBJ_ZSET && b.enc == OBJ_ENC_SKIPLIST) zsetLoadEnd(&b.enc, &b.ptr);
    *enc = b.enc;
    *ptr = b.ptr;
    return 0;
}

/* Loads a blob (ziplist, zipmap, listpack or intset) and visits its
 * elements.  Returns 0 or -1. */
long long rdbPayloadSanitizations;

static int loadBlob(RdbReader *r, Build *b, int rdbType) {
    unsigned char *blob;
    size_t n;
    if (rrBlob(r, &blob, &n) < 0) return -1;
    if (!r->shallow) rdbPayloadSanitizations++;
    const unsigned char *p = blob;
    long count = 0;
    /* A zipmap or a hash or sorted-set ziplist is converted element by
     * element, so Redis 7.0 always checks it deeply: a repeated field or
     * member is refused whatever sanitize-dump-payload says. */
    int shallow = b->shallow;
    if (rdbType == RDB_TYPE_HASH_ZIPMAP || rdbType == RDB_TYPE_ZSET_ZIPLIST || rdbType == RDB_TYPE_HASH_ZIPLIST)
        b->shallow = 0;
    switch (rdbType) {
    case RDB_TYPE_HASH_ZIPMAP: count = zipmapForEach(p, n, buildVisit, b); break;
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_HASH_ZIPLIST: count = ziplistForEach(p, n, buildVisit, b); break;
    case RDB_TYPE_SET_INTSET:
        if (!intsetValidateIntegrity(p, n, !b->shallow)) {
            count = -1;
            break;
        }
        for (uint32_t i = 0; i < intsetLen((const intset *)p) && count >= 0; i++) {
            long long v;
            char buf[32];
            intsetGet((const intset *)p, i, &v);
            int len = longLongToString(buf, sizeof(buf), v);
            if (setLoadAdd(&b->enc, &b->ptr, buf, (size_t)len)) b->added++;
            else if (!b->shallow) count = -1;
        }
        break;
    default: /* listpacks */
        if (r->defer && deferListpack(b, rdbType, blob, n)) return 0;
        if (!lpValidateIntegrity(blob, n, 1)) {
            count = -1;
            break;
        }
        if (adoptListpack(b, rdbType, blob)) return 0;
        for (unsigned char *e = lpFirst(blob); e && count >= 0; e = lpNext(blob, e)) {
            unsigned int len;
            unsigned char ib[LP_INTBUF_SIZE];
            unsigned char *s = lpGetValue(e, &len, ib, NULL, NULL);
            if (buildVisit(b, s, len) < 0) count = -1;
        }
        break;
    }
    xfree(blob);
    b->shallow = shallow;
    if (count < 0 || b->pending) {
        const char *why;
        switch (rdbType) {
        case RDB_TYPE_HASH_ZIPMAP: why = "Zipmap integrity check failed."; break;
        case RDB_TYPE_LIST_ZIPLIST: why = "List ziplist integrity check failed."; break;
        case RDB_TYPE_ZSET_ZIPLIST: why = "Zset ziplist integrity check failed."; break;
        case RDB_TYPE_HASH_ZIPLIST: why = "Hash ziplist integrity check failed."; break;
        case RDB_TYPE_SET_INTSET: why = "Intset integrity check failed."; break;
        case RDB_TYPE_HASH_LISTPACK: why = "Hash listpack integrity check failed."; break;
        case RDB_TYPE_ZSET_LISTPACK: why = "Zset listpack integrity check failed."; break;
        default: why = "Listpack integrity check failed."; break;
        }
        return rrCorrupt(r, why);
    }
    return 0;
}

/* Quicklist (v1: ziplist nodes; v2: container + plain or listpack). */
static int loadQuicklist(RdbReader *r, Build *b, int v2) {
    uint64_t nodes;
    if (rrCount(r, &nodes, 2) < 0) return -1;
    for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container = QUICKLIST_NODE_PACKED;
        if (v2 && rrLen(r, &container) < 0) return -1;
        if (container != QUICKLIST_NODE_PACKED && container != QUICKLIST_NODE_PLAIN)
            return rrCorrupt(r, "Quicklist integrity check failed.");
        unsigned char *data;
        size_t n;
        if (rrBlob(r, &data, &n) < 0) return -1;
        if (container == QUICKLIST_NODE_PLAIN) {
            quicklistAppendPlain(b->ptr, (const char *)data, n);
        } else if (!v2) {
            /* An empty ziplist node is skipped, as Redis skips it. */
            if (ziplistForEach(data, n, buildVisit, b) < 0) {
                xfree(data);
                return rrCorrupt(r, "Ziplist integrity check failed.");
            }
        } else {
            if (!r->shallow) rdbPayloadSanitizations++;
            /* Deferred (see deferListpack): a header with a known, nonzero
             * count, so that adopting the node reads nothing else. */
            unsigned hc = n >= 6 ? (data[4] | (unsigned)data[5] << 8) : 0;
            if (r->defer && hc && hc != 65535 && lpValidateIntegrity(data, n, 0) && lpSafeToAdd(NULL, n)) {
                quicklistAppendListpack(b->ptr, data);
                b->deferred = 1;
                continue;
            }
            if (!lpValidateIntegrity(data, n, 1) || !lpSafeToAdd(NULL, n)) {
                xfree(data);
                return rrCorrupt(r, "Listpack integrity check failed.");
            }
            quicklistAppendListpack(b->ptr, data); /* the node owns it */
            continue;
        }
        xfree(data);
    }
    return 0;
}

/* Old-style zset score: a length byte then text, or 253/254/255 for
 * NaN/+inf/-inf. */
static int loadTextScore(RdbReader *r, double *out) {
    unsigned char len;
    if (rrByte(r, &len) < 0) return -1;
    if (len == 253) return rrFail(r, "zset with NAN score");
    if (len == 254 || len == 255) {
        *out = len == 254 ? INFINITY : -INFINITY;
        return 0;
    }
    if (rrLeft(r) < len) return rrFail(r, WHY_EOF);
    if (parseScore(r->p + r->pos, len, out) < 0) return rrFail(r, "bad zset score");
    r->pos += len;
    return 0;
}

/* A hash with field TTLs (RDB_TYPE_HASH_METADATA and its 7.4 RC form):
 * [minimum expire,] count, then TTL, field, value per field. */
static int loadHashTtls(RdbReader *r, Build *b, int rdbType) {
    uint64_t min = 0, n;
    if (rdbType == RDB_TYPE_HASH_METADATA && rrLe(r, 8, &min) < 0) return -1;
    if (rrCount(r, &n, 3) < 0) return -1;
    if (n > (uint64_t)server.cfg.hashMaxListpackEntries) {
        hashLoadFree(b->enc, b->ptr);
        hashLoadBegin(n, &b->enc, &b->ptr);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t ttl;
        sds f, v;
        if (rrLen(r, &ttl) < 0 || rrString(r, &f) < 0) return -1;
        if (rrString(r, &v) < 0) {
            sdsFree(f);
            return -1;
        }
        long long when = !ttl ? 0 : rdbType == RDB_TYPE_HASH_METADATA ? (long long)(ttl + min - 1) : (long long)ttl;
        if (when && when < r->fieldsExpiredBefore) { /* expired: dropped */
            sdsFree(f);
            sdsFree(v);
            continue;
        }
        int ok = when >= 0 && hashLoadAddTtl(&b->enc, &b->ptr, f, sdsLen(f), v, sdsLen(v), when);
        sdsFree(f);
        sdsFree(v);
        if (!ok && !b->shallow) return rrCorrupt(r, "Hash with field TTLs is corrupt (duplicate field).");
        b->added += ok;
    }
    return 0;
}

/* A hash listpack with field TTLs (RDB_TYPE_HASH_LISTPACK_EX and its RC
 * form): [minimum expire,] a listpack of field, value, expire triples. */
static int loadHashListpackEx(RdbReader *r, Build *b, int rdbType) {
    uint64_t min;
    if (rdbType == RDB_TYPE_HASH_LISTPACK_EX && rrLe(r, 8, &min) < 0) return -1;
    unsigned char *lp;
    size_t n;
    if (rrBlob(r, &lp, &n) < 0) return -1;
    if (!lpValidateIntegrity(lp, n, 1) || lpLength(lp) % 3 != 0) {
        xfree(lp);
        return rrCorrupt(r, "Hash listpack integrity check failed.");
    }
    int rc = 0;
    for (unsigned char *p = lpFirst(lp); p && rc == 0;) {
        unsigned char fb[LP_INTBUF_SIZE], vb[LP_INTBUF_SIZE];
        unsigned int fl, vl;
        int isInt = 0;
        long long when = 0;
        unsigned char *fs = lpGetValue(p, &fl, fb, NULL, NULL);
        p = lpNext(lp, p);
        unsigned char *vs = lpGetValue(p, &vl, vb, NULL, NULL);
        p = lpNext(lp, p);
        unsigned int tl;
        lpGetValue(p, &tl, NULL, &isInt, &when);
        p = lpNext(lp, p);
        if (!isInt || when < 0) {
            rc = rrCorrupt(r, "Hash listpack integrity check failed.");
            break;
        }
        if (when && when < r->fieldsExpiredBefore) continue; /* expired: dropped */
        int ok = hashLoadAddTtlKeepOrder(&b->enc, &b->ptr, fs, fl, vs, vl, when);
        if (!ok && !b->shallow) rc = rrCorrupt(r, "Hash listpack integrity check failed.");
        b->added += ok;
    }
    xfree(lp);
    return rc;
}

/* Element-by-element collections: list, set, zset (both), hash. */
static int loadElements(RdbReader *r, Build *b, int rdbType) {
    uint64_t n;
    if (rrCount(r, &n, rdbType == RDB_TYPE_HASH || rdbType == RDB_TYPE_ZSET || rdbType == RDB_TYPE_ZSET_2 ? 2 : 1) <
        0)
        return -1;
    if (b->type != OBJ_LIST) {
        int shallow = b->shallow;
        buildFree(b);
        buildBegin(b, b->type, (size_t)n);
        b->shallow = shallow;
    }
    for (uint64_t i = 0; i < n; i++) {
        sds a;
        if (rrString(r, &a) < 0) return -1;
        int ok = 1;
        if (rdbType == RDB_TYPE_LIST) {
            quicklistPush(b->ptr, a, sdsLen(a), QL_TAIL);
        } else if (rdbType == RDB_TYPE_SET) {
            ok = setLoadAdd(&b->enc, &b->ptr, a, sdsLen(a));
        } else if (rdbType == RDB_TYPE_HASH) {
            sds v;
            if (rrString(r, &v) < 0) {
                sdsFree(a);
                return -1;
            }
            /* Redis checks a hash's fields for duplicates only when it
             * sanitizes deeply (sets and sorted sets always). */
            ok = hashLoadAdd(&b->enc, &b->ptr, a, sdsLen(a), v, sdsLen(v)) || b->shallow;
            sdsFree(v);
        } else {
            double score;
            uint64_t bits;
            if (rdbType == RDB_TYPE_ZSET_2) {
                ok = rrLe(r, 8, &bits) == 0;
                memcpy(&score, &bits, 8);
                if (ok && isnan(score)) ok = 0;
            } else {
                ok = loadTextScore(r, &score) == 0;
            }
            ok = ok && zsetLoadAdd(&b->enc, &b->ptr, (unsigned char *)a, sdsLen(a), score);
        }
        sdsFree(a);
        if (!ok) return rrFail(r, "duplicate or invalid element");
        b->added++;
    }
    return 0;
}

/* --- per type: loading (ObjectType.rdbLoad) --- */

/* A loaded value's entry, with the key's expire in it from the start when
 * it has one (r->withExpire): adding it after the insert (dbSetExpire)
 * would allocate, copy and relink the entry a second time. */
static kvobj *newEntryPtr(const RdbReader *r, const char *key, size_t keylen, int type, int enc, void *ptr) {
    return r->withExpire ? kvCreatePtrExpire(key, keylen, type, enc, ptr, r->expire)
                         : kvCreatePtr(key, keylen, type, enc, ptr);
}

static kvobj *newEntryString(const RdbReader *r, const char *key, size_t keylen, const char *val, size_t vlen) {
    return r->withExpire ? kvCreateStringExpire(key, keylen, val, vlen, r->expire)
                         : kvCreateString(key, keylen, val, vlen);
}

static kvobj *stringRdbLoad(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    (void)rdbType;
    *empty = 0;
    /* A short plain string or an integer goes straight into the entry
     * (kvCreateString would copy a decoded sds, then free it). */
    size_t i = r->pos;
    uint64_t n;
    int special;
    if (rdbDecodeLen(r->p, r->len, &i, &n, &special) == 0) {
        if (!special && n <= OBJ_EMBSTR_MAX && n <= r->len - i) {
            r->pos = i + (size_t)n;
            return newEntryString(r, key, keylen, (const char *)r->p + i, (size_t)n);
        }
        size_t bytes = special && n <= 2 ? (size_t)1 << n : 0;
        if (bytes && r->len - i >= bytes) {
            uint32_t u = 0;
            for (size_t k = 0; k < bytes; k++)
                u |= (uint32_t)r->p[i + k] << (8 * k);
            r->pos = i + bytes;
            long long v = bytes == 1 ? (int8_t)u : bytes == 2 ? (int16_t)u : (int32_t)u;
            return r->withExpire ? kvCreateIntExpire(key, keylen, v, r->expire) : kvCreateInt(key, keylen, v);
        }
    }
    sds s;
    if (rrString(r, &s) < 0) return NULL;
    /* A long string keeps the decoded sds (its capacity is its length);
     * kvCreateString would copy it. */
    if (sdsLen(s) > OBJ_EMBSTR_MAX) return newEntryPtr(r, key, keylen, OBJ_STRING, OBJ_ENC_RAW, s);
    kvobj *o = newEntryString(r, key, keylen, s, sdsLen(s));
    sdsFree(s);
    return o;
}

/* A collection of `type` in any of its RDB forms: element by element, a
 * quicklist, or a blob (ziplist, zipmap, intset, listpack). */
static kvobj *collectionRdbLoad(RdbReader *r, int type, int rdbType, const char *key, size_t keylen, int *empty) {
    *empty = 0;
    Build b;
    buildBegin(&b, type, 0);
    b.shallow = r->shallow;
    int rc;
    switch (rdbType) {
    case RDB_TYPE_LIST:
    case RDB_TYPE_SET:
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2:
    case RDB_TYPE_HASH: rc = loadElements(r, &b, rdbType); break;
    case RDB_TYPE_LIST_QUICKLIST: rc = loadQuicklist(r, &b, 0); break;
    case RDB_TYPE_LIST_QUICKLIST_2: rc = loadQuicklist(r, &b, 1); break;
    case RDB_TYPE_HASH_METADATA_PRE_GA:
    case RDB_TYPE_HASH_METADATA: rc = loadHashTtls(r, &b, rdbType); break;
    case RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case RDB_TYPE_HASH_LISTPACK_EX: rc = loadHashListpackEx(r, &b, rdbType); break;
    default: rc = loadBlob(r, &b, rdbType); break;
    }
    if (rc < 0) {
        buildFree(&b);
        return NULL;
    }
    if (type == OBJ_ZSET && b.enc == OBJ_ENC_SKIPLIST) zsetLoadEnd(&b.enc, &b.ptr);
    if ((type == OBJ_LIST ? quicklistCount(b.ptr) : b.added) == 0) {
        buildFree(&b);
        *empty = 1;
        return NULL;
    }
    if (type == OBJ_LIST) { /* a small list is kept as a bare listpack */
        unsigned char *lp = quicklistToListpack(b.ptr);
        if (lp) {
            b.ptr = lp;
            b.enc = OBJ_ENC_LISTPACK;
            if (b.deferred && !lpValidateIntegrity(lp, lpBytes(lp), 1)) { /* small: checked now */
                lpFree(lp);
                rrCorrupt(r, "Listpack integrity check failed.");
                return NULL;
            }
        } else if (b.deferred) {
            b.enc = OBJ_ENC_QUICKLIST_UNVERIFIED;
            dbUnverified++;
        }
    }
    return newEntryPtr(r, key, keylen, type, b.enc, b.ptr);
}

static kvobj *listRdbLoad(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    return collectionRdbLoad(r, OBJ_LIST, rdbType, key, keylen, empty);
}
static kvobj *setRdbLoad(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    return collectionRdbLoad(r, OBJ_SET, rdbType, key, keylen, empty);
}
static kvobj *zsetRdbLoad(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    return collectionRdbLoad(r, OBJ_ZSET, rdbType, key, keylen, empty);
}
static kvobj *hashRdbLoad(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    return collectionRdbLoad(r, OBJ_HASH, rdbType, key, keylen, empty);
}

/* --- streams --- */

static int rrStreamID(RdbReader *r, StreamID *id) {
    uint64_t ms, seq;
    if (rrLen(r, &ms) < 0 || rrLen(r, &seq) < 0) return -1;
    id->ms = ms;
    id->seq = seq;
    return 0;
}

static int rrRawID(RdbReader *r, unsigned char *buf) {
    if (rrLeft(r) < STREAM_ID_BYTES) return rrFail(r, WHY_EOF);
    memcpy(buf, r->p + r->pos, STREAM_ID_BYTES);
    r->pos += STREAM_ID_BYTES;
    return 0;
}

/* The nodes of a stream value into s; -1 when corrupt. */
static int streamLoadNodes(RdbReader *r, Stream *s, uint64_t *live) {
    uint64_t nodes;
    if (rrCount(r, &nodes, 2) < 0) return -1;
    StreamID prevLast;
    int have = 0;
    *live = 0;
    for (uint64_t i = 0; i < nodes; i++) {
        sds key = NULL, lp = NULL;
        if (rrString(r, &key) < 0) return -1;
        if (sdsLen(key) != STREAM_ID_BYTES) {
            sdsFree(key);
            return rrCorrupt(r, "Stream node key entry is not the size of a stream ID");
        }
        if (rrString(r, &lp) < 0) {
            sdsFree(key);
            return -1;
        }
        StreamID master, last;
        uint64_t n;
        if (!r->shallow) rdbPayloadSanitizations++;
        streamDecodeID((unsigned char *)key, &master);
        int ok = sdsLen(lp) <= STREAM_LISTPACK_MAX_SIZE &&
                 streamValidateNode((unsigned char *)lp, sdsLen(lp), &master, have ? &prevLast : NULL, &last, &n);
        if (ok) ok = streamInsertNode(s, (unsigned char *)key, (unsigned char *)lp, sdsLen(lp), 1);
        sdsFree(key);
        sdsFree(lp);
        if (!ok) return rrCorrupt(r, "Stream listpack integrity check failed.");
        prevLast = last;
        have = 1;
        *live += n;
    }
    streamCompressClosed(s);
    return 0;
}

/* One consumer group: name, last ID, [entries read], PEL, consumers. */
static int streamLoadGroup(RdbReader *r, Stream *s, int v2) {
    sds name = NULL;
    if (rrString(r, &name) < 0) return -1;
    StreamID last;
    uint64_t entriesRead = (uint64_t)STREAM_ENTRIES_READ_INVALID;
    if (rrStreamID(r, &last) < 0 || (v2 && rrLen(r, &entriesRead) < 0)) {
        sdsFree(name);
        return -1;
    }
    long long er = v2 ? (long long)entriesRead : streamEstimateDistance(s, &last);
    StreamCG *cg = streamCreateCG(s, name, sdsLen(name), &last, er);
    sdsFree(name);
    if (!cg) return rrFail(r, "duplicate consumer group");
    uint64_t pel;
    if (rrCount(r, &pel, STREAM_ID_BYTES + 9) < 0) return -1;
    for (uint64_t i = 0; i < pel; i++) {
        unsigned char id[STREAM_ID_BYTES];
        uint64_t time, count;
        if (rrRawID(r, id) < 0 || rrLe(r, 8, &time) < 0 || rrLen(r, &count) < 0) return -1;
        StreamNACK *nack = streamCreateNACK(NULL, (long long)time);
        nack->deliveryCount = count;
        if (!omapInsert(cg->pel, id, sizeof(id), nack)) {
            xfree(nack);
            return rrFail(r, "duplicate PEL entry");
        }
    }
    uint64_t consumers;
    if (rrCount(r, &consumers, 10) < 0) return -1;
    for (uint64_t i = 0; i < consumers; i++) {
        sds cname = NULL;
        uint64_t seen, n;
        if (rrString(r, &cname) < 0) return -1;
        if (rrLe(r, 8, &seen) < 0) {
            sdsFree(cname);
            return -1;
        }
        StreamConsumer *c = streamCreateConsumer(cg, cname, sdsLen(cname), (long long)seen);
        sdsFree(cname);
        if (!c) return rrFail(r, "duplicate consumer");
        if (rrCount(r, &n, STREAM_ID_BYTES) < 0) return -1;
        for (uint64_t j = 0; j < n; j++) {
            unsigned char id[STREAM_ID_BYTES];
            if (rrRawID(r, id) < 0) return -1;
            StreamNACK *nack = omapFind(cg->pel, id, sizeof(id));
            if (!nack || nack->consumer) return rrFail(r, "consumer PEL entry not in the group PEL");
            nack->consumer = c;
            omapInsert(c->pel, id, sizeof(id), nack);
        }
    }
    /* Every pending entry needs an owner. */
    for (OmapNode *p = omapFirst(cg->pel); p; p = omapNext(p))
        if (!((StreamNACK *)omapValue(p))->consumer) return rrFail(r, "PEL entry without a consumer");
    return 0;
}

static kvobj *streamRdbLoad(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    (void)empty;
    int v2 = rdbType == RDB_TYPE_STREAM_LISTPACKS_2;
    Stream *s = streamCreate();
    uint64_t live, length, added = 0, groups;
    if (streamLoadNodes(r, s, &live) < 0 || rrLen(r, &length) < 0 || rrStreamID(r, &s->lastId) < 0) goto fail;
    if (length != live) {
        rrFail(r, "stream length does not match its entries");
        goto fail;
    }
    s->length = length;
    StreamID top;
    if (streamEdgeID(s, 0, &top) && streamCompareID(&top, &s->lastId) > 0) {
        rrFail(r, "stream last ID below its entries");
        goto fail;
    }
    if (v2) {
        if (rrStreamID(r, &s->firstId) < 0 || rrStreamID(r, &s->maxDeletedId) < 0 || rrLen(r, &added) < 0) goto fail;
        s->entriesAdded = added;
    } else {
        streamUpdateFirstID(s);
        s->entriesAdded = length;
    }
    if (rrCount(r, &groups, 4) < 0) goto fail;
    for (uint64_t i = 0; i < groups; i++)
        if (streamLoadGroup(r, s, v2) < 0) goto fail;
    return newEntryPtr(r, key, keylen, OBJ_STREAM, OBJ_ENC_STREAM, s);
fail:
    streamFree(s);
    return NULL;
}

/* The object type whose rdbLoad reads values of RDB type rdbType, or -1
 * for a type Cairn does not read (a new type adds its RDB types here). */
static int objectTypeOfRdb(int rdbType) {
    switch (rdbType) {
    case RDB_TYPE_STRING: return OBJ_STRING;
    case RDB_TYPE_LIST:
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_LIST_QUICKLIST:
    case RDB_TYPE_LIST_QUICKLIST_2: return OBJ_LIST;
    case RDB_TYPE_SET:
    case RDB_TYPE_SET_INTSET: return OBJ_SET;
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_ZSET_LISTPACK: return OBJ_ZSET;
    case RDB_TYPE_HASH:
    case RDB_TYPE_HASH_ZIPMAP:
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK:
    case RDB_TYPE_HASH_METADATA_PRE_GA:
    case RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case RDB_TYPE_HASH_METADATA:
    case RDB_TYPE_HASH_LISTPACK_EX: return OBJ_HASH;
    case RDB_TYPE_STREAM_LISTPACKS:
    case RDB_TYPE_STREAM_LISTPACKS_2: return OBJ_STREAM;
    case RDB_TYPE_MODULE_2: return OBJ_MODULE;
    default: return -1;
    }
}

/* Reads a value of rdbType for key through its type's rdbLoad.  Returns
 * the entry; NULL with *empty = 1 for an empty collection (skipped when
 * loading a file), or NULL with r->why set when corrupt. */
static kvobj *loadValue(RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    *empty = 0;
    int type = objectTypeOfRdb(rdbType);
    const ObjectType *ops = type < 0 ? NULL : objectTypeOps(type);
    if (!ops || !ops->rdbLoad) {
        static char buf[48];
        snprintf(buf, sizeof(buf), "Unknown RDB encoding type %d", rdbType);
        rrFail(r, buf);
        return NULL;
    }
    return ops->rdbLoad(r, rdbType, key, keylen, empty);
}

kvobj *rdbCheckValue(const unsigned char *p, size_t len, size_t *pos, int rdbType, const char *key, size_t keylen,
                     int *empty, const char **why) {
    RdbReader r = {.p = p, .len = len, .pos = *pos};
    kvobj *o = loadValue(&r, rdbType, key, keylen, empty);
    *pos = r.pos;
    *why = r.why;
    return o;
}

kvobj *rdbRestoreValue(const char *key, size_t keylen, const unsigned char *p, size_t len, int deep,
                       int withExpire, long long expire) {
    RdbReader r = {.p = p, .len = len, .shallow = !deep, .withExpire = withExpire, .expire = expire};
    unsigned char type;
    int empty;
    if (rrByte(&r, &type) < 0) return NULL;
    kvobj *o = loadValue(&r, type, key, keylen, &empty);
    /* Redis logs a corrupt value at verbose level (a RESTORE does not
     * stop the server). */
    if (!o && r.corrupt) serverLog(LL_VERBOSE, "Internal error in RDB reading offset 0, function at rdb.c: %s", r.why);
    return o;
}

/* --- snapshot file --- */

/* Applies IDLE / FREQ metadata read before a key. */
static void applyAccess(kvobj *o, long long idle, int freq) {
    if (idle >= 0 && policyIsLru()) {
        unsigned now = dbLruClock & 0xffffff;
        unsigned long long i = (unsigned long long)idle & 0xffffff;
        kvSetLru(o, (unsigned)((now + 0x1000000ULL - i) & 0xffffff));
    } else if (freq >= 0 && policyIsLfu()) {
        kvSetLru(o, (dbInitialLru() & ~255u) | (unsigned)freq);
    }
}

static int loadAux(RdbReader *r, RdbLoadInfo *info, Db *dbs) {
    sds k, v;
    if (rrString(r, &k) < 0) return -1;
    if (rrString(r, &v) < 0) {
        sdsFree(k);
        return -1;
    }
    if (!strcasecmp(k, "redis-ver")) serverLog(LL_NOTICE, "Loading RDB produced by version %s", v);
    else if (!strcasecmp(k, "ctime")) {
        long long age = (long long)time(NULL) - strtoll(v, NULL, 10);
        if (age < 0) age = 0;
        serverLog(LL_NOTICE, "RDB age %lld seconds", age);
    } else if (!strcasecmp(k, "used-mem")) {
        info->rdbUsedMem = strtoll(v, NULL, 10);
        serverLog(LL_NOTICE, "RDB memory usage when created %.2f Mb", (double)info->rdbUsedMem / (1024 * 1024));
    } else if (!strcasecmp(k, "aof-preamble")) {
        if (strtoll(v, NULL, 10)) serverLog(LL_NOTICE, "RDB has an AOF tail");
    } else if (!strcasecmp(k, "aof-base")) {
        if (strtoll(v, NULL, 10)) serverLog(LL_NOTICE, "RDB is base AOF");
    } else if (!strcasecmp(k, "repl-stream-db"))
        info->repl.streamDb = (int)strtol(v, NULL, 10);
    else if (!strcasecmp(k, "repl-id") && sdsLen(v) == 40) {
        memcpy(info->repl.replid, v, 41);
        info->hasRepl |= 1;
    } else if (!strcasecmp(k, "repl-offset")) {
        info->repl.offset = strtoll(v, NULL, 10);
        info->hasRepl |= 2;
    } else if (!strcasecmp(k, MEMBER_TTL_AUX)) {
        /* Cairn's member TTLs, after the keys (redis-server skips the
         * field as an unknown AUX) */
        memberTtlRdbLoad(dbs, server.cfg.databases, v, sdsLen(v));
    }
    sdsFree(k);
    sdsFree(v);
    return 0;
}

static int loadFunction(RdbReader *r, int merge) {
    sds code, err = NULL;
    if (rrString(r, &code) < 0) return -1;
    int rc = functionsRdbLoadCode(code, merge, &err);
    sdsFree(code);
    if (rc < 0) {
        serverLog(LL_WARNING, "Failed loading library, %s", err ? err : "unknown error");
        sdsFree(err);
        return rrFail(r, "failed loading a function library");
    }
    return 0;
}

/* The top-level loop's state between records, so that a snapshot can be
 * parsed as its bytes arrive (a replica's diskless load): the database
 * selected, the expire / IDLE / FREQ read for the next key, the CRC-64 of
 * the bytes consumed so far. */
struct RdbStream {
    Db *dbs;            /* server.db, or the databases being filled aside */
    Db *db;             /* the SELECTDB in force */
    int merge;
    int streaming;      /* bytes come in pieces: a short record waits */
    int started, done;
    int deferFunctions; /* libraries kept for rdbStreamApplyFunctions */
    long long expire, idle;
    int freq;
    long long now;
    uint64_t crc;       /* of the bytes consumed by earlier feeds */
    size_t base;        /* bytes consumed by earlier feeds */
    size_t retryAt;     /* a record that failed short: retry at this many bytes */
    sds *functions;
    int nfunctions;
    RdbLoadInfo info;
};

/* Adds the key just read to the target database.  Returns 0 or -1. */
static int loadKey(RdbReader *r, RdbStream *s, int type) {
    RdbLoadInfo *info = &s->info;
    Db *db = s->db;
    const char *key;
    size_t keylen;
    sds owned; /* the key, when it was not stored plain */
    if (rrStringRef(r, &key, &keylen, &owned) < 0) return -1;
    int empty;
    r->withExpire = s->expire != -1; /* the entry is built with it */
    r->expire = s->expire;
    r->fieldsExpiredBefore = server.isReplica ? 0 : s->now;
    rdbModuleDbId = db->id;
    kvobj *o = loadValue(r, type, key, keylen, &empty);
    rdbModuleDbId = -1;
    r->withExpire = 0;
    r->fieldsExpiredBefore = 0;
    if (!o && !empty) {
        sdsFree(owned);
        return -1;
    }
    if (!o) {
        if (info->emptySkipped++ < 10)
            serverLog(LL_WARNING, "rdbLoadObject skipping empty key: %.*s", (int)keylen, key);
    } else if (s->expire != -1 && s->expire < s->now && !server.isReplica) {
        kvFree(o);
        info->keysExpired++;
        if (rdbLoadExpiredHook && s->dbs == server.db) rdbLoadExpiredHook(db->id, key, keylen);
    } else {
        if (s->merge) dbDelete(db, key, keylen);
        /* Keys loaded aside are nobody's yet: no event, no waiter. */
        void (*added)(Db *, const char *, size_t) = dbHooks.keyAdded;
        if (s->dbs != server.db) dbHooks.keyAdded = NULL;
        kvobj *had = NULL;
        if (s->merge) dbAdd(db, o);
        else had = dbAddUnique(db, o);
        dbHooks.keyAdded = added;
        if (had) {
            serverLog(LL_WARNING, "RDB has duplicated key '%.*s' in DB %d", (int)keylen, key, db->id);
            kvFree(o);
            sdsFree(owned);
            s->streaming = 0;
            return rrFail(r, "duplicated key");
        }
        applyAccess(o, s->idle, s->freq);
        if (kvType(o) == OBJ_HASH && hashValueTtlLayout(o)) hashIndexKey(db->id, key, keylen);
        info->keysLoaded++;
    }
    if (server.cfg.keyLoadDelay) keyDelay(server.cfg.keyLoadDelay);
    sdsFree(owned);
    s->expire = s->idle = -1;
    s->freq = -1;
    return 0;
}

/* One record at r->pos.  Returns 0, 1 after the EOF opcode and checksum,
 * or -1 (r->why). */
static int loadRecord(RdbReader *r, RdbStream *s) {
    RdbLoadInfo *info = &s->info;
    unsigned char type;
    if (rrByte(r, &type) < 0) return -1;
    uint64_t a, b;
    switch (type) {
    case RDB_OPCODE_EXPIRETIME:
        if (rrLe(r, 4, &a) < 0) return -1;
        s->expire = (long long)(int32_t)a * 1000;
        return 0;
    case RDB_OPCODE_EXPIRETIME_MS:
        if (rrLe(r, 8, &a) < 0) return -1;
        s->expire = (long long)a;
        return 0;
    case RDB_OPCODE_FREQ: {
        unsigned char f;
        if (rrByte(r, &f) < 0) return -1;
        s->freq = f;
        return 0;
    }
    case RDB_OPCODE_IDLE:
        if (rrLen(r, &a) < 0) return -1;
        s->idle = (long long)(a & 0x7fffffffffffffffULL);
        return 0;
    case RDB_OPCODE_EOF: {
        if (info->version < 5) return 1;
        size_t end = r->pos;
        uint64_t crc;
        if (rrLe(r, 8, &crc) < 0) return -1;
        if (crc == 0) {
            serverLog(LL_WARNING, "RDB file was saved with checksum disabled: no check performed.");
        } else if (server.cfg.rdbchecksum && !rdbSkipChecksumValidation && crc64(s->crc, r->p, end) != crc) {
            /* Redis's two lines: the values, then "RDB CRC error" as the
             * reason of the "Internal error" line. */
            serverLog(LL_WARNING, "Wrong RDB checksum expected: (%llx) but got (%llx). Aborting now.",
                      (unsigned long long)crc64(s->crc, r->p, end), (unsigned long long)crc);
            r->pos = end;
            s->streaming = 0; /* no byte to come changes it */
            return rrFail(r, "RDB CRC error");
        }
        return 1;
    }
    case RDB_OPCODE_SELECTDB:
        if (rrLen(r, &a) < 0) return -1;
        if (a >= (uint64_t)server.cfg.databases) {
            static char buf[128];
            snprintf(buf, sizeof(buf),
                     "FATAL: Data file was created with a Redis server configured to handle more than %d databases. "
                     "Exiting\n",
                     server.cfg.databases);
            s->streaming = 0;
            return rrFail(r, buf);
        }
        s->db = &s->dbs[a];
        return 0;
    case RDB_OPCODE_RESIZEDB: {
        if (rrLen(r, &a) < 0 || rrLen(r, &b) < 0) return -1;
        /* A hint: trusted as far as the bytes that remain could hold it
         * (streamed: the bytes are still to come, up to 8M slots). */
        size_t cap = s->streaming ? (size_t)1 << 23 : rrLeft(r);
        if (a <= cap) dbExpand(s->db, (size_t)a);
        return 0;
    }
    case RDB_OPCODE_AUX: return loadAux(r, info, s->dbs);
    case RDB_OPCODE_MODULE_AUX:
        /* Streamed and short, the record is read again once whole: the
         * module's aux_load then runs again (the last run's state stays). */
        if (rdbModuleAuxLoad) return rdbModuleAuxLoad(r);
        s->streaming = 0;
        return rrFail(r, "module data in the file, and no modules");
    case RDB_OPCODE_FUNCTION_PRE_GA: s->streaming = 0; return rrFail(r, "pre-release function format not supported");
    case RDB_OPCODE_FUNCTION2:
        if (s->deferFunctions) {
            sds code;
            if (rrString(r, &code) < 0) return -1;
            s->functions = xrealloc(s->functions, sizeof(sds) * (size_t)(s->nfunctions + 1));
            s->functions[s->nfunctions++] = code;
            return 0;
        }
        if (loadFunction(r, s->merge) < 0) {
            if (r->why && !strcmp(r->why, "failed loading a function library")) s->streaming = 0;
            return -1;
        }
        return 0;
    default: return loadKey(r, s, type);
    }
}

/* Parses the records of r from r->pos.  Returns 0 at the end of the
 * snapshot, 1 when a streamed record is not complete yet (r->pos at its
 * start), 2 when a stream's feed parsed loading-process-events-interval-
 * bytes (r->pos at a record), -1 on error (r->why, r->pos). */
static int loadSnapshot(RdbReader *r, RdbStream *s, int final) {
    RdbLoadInfo *info = &s->info;
    if (!s->started) {
        if (r->len < 9 && s->streaming && !final && (r->len < 5 || !memcmp(r->p, "REDIS", 5))) return 1;
        /* Redis's words (persist.c logs these as Redis does). */
        if (r->len < 9) return rrFail(r, WHY_EOF);
        if (memcmp(r->p, "REDIS", 5) != 0) return rrFail(r, "Wrong signature trying to load DB from file");
        int ver = 0;
        for (int i = 5; i < 9; i++) {
            if (r->p[i] < '0' || r->p[i] > '9') return rrFail(r, "Wrong signature trying to load DB from file");
            ver = ver * 10 + (r->p[i] - '0');
        }
        if (ver < 1 || (ver > RDB_VERSION && ver != RDB_VERSION_FIELD_TTL)) {
            static char buf[48];
            snprintf(buf, sizeof(buf), "Can't handle RDB format version %d", ver);
            return rrFail(r, buf);
        }
        info->version = ver;
        r->pos = 9;
        s->started = 1;
    }
    size_t nextReport = r->pos;
    if (s->streaming) nextReport += (size_t)server.cfg.loadingProcessEventsIntervalBytes;
    for (;;) {
        if (r->pos >= nextReport) {
            /* Streamed: the caller turns the loop between feeds. */
            if (s->streaming) return 2;
            if (loadProgress) loadProgress(info, r->pos, r->len);
            nextReport = r->pos + (size_t)server.cfg.loadingProcessEventsIntervalBytes;
        }
        size_t rec = r->pos;
        if (rec == r->len && s->streaming && !final) return 1;
        if (r->pf && rec >= r->pfWake) rdbPrefetchAt(r->pf, rec, &r->pfNext, &r->pfWake);
        int rc = loadRecord(r, s);
        if (rc > 0) return 0;
        if (rc == 0) continue;
        /* Streamed and short of bytes, the record may be whole later:
         * nothing it read took effect (a key's value is freed). */
        if (s->streaming && !final) {
            r->pos = rec;
            r->why = NULL;
            return 1;
        }
        return -1;
    }
}

static void streamInit(RdbStream *s, Db *dbs, int merge) {
    memset(s, 0, sizeof(*s));
    s->dbs = dbs;
    s->db = &dbs[0];
    s->merge = merge;
    s->expire = s->idle = -1;
    s->freq = -1;
    s->now = serverNowMs();
}

RdbStream *rdbStreamNew(Db *dbs, int deferFunctions) {
    RdbStream *s = xmalloc(sizeof(*s));
    streamInit(s, dbs ? dbs : server.db, 0);
    s->streaming = 1;
    s->deferFunctions = deferFunctions;
    return s;
}

long long rdbStreamFeed(RdbStream *s, const unsigned char *p, size_t len, int final, int *done, sds *err) {
    *done = s->done;
    if (s->done) return 0;
    if (!final && len < s->retryAt) return 0;
    RdbReader r = {.p = p, .len = len, .shallow = server.cfg.sanitizeDumpPayload != SANITIZE_PAYLOAD_YES};
    r.defer = r.shallow && rdbDeferLoadChecks; /* as a file load */
    int saved = dbNoLazyExpire;
    dbNoLazyExpire = 1;
    int rc = loadSnapshot(&r, s, final);
    dbNoLazyExpire = saved;
    if (rc < 0) {
        s->info.errOffset = s->base + r.pos;
        s->info.errReason = r.why ? r.why : "unknown error";
        *err = sdsCatPrintf(sdsEmpty(), "Internal error in RDB reading offset %zu, function at rdb.c: %s",
                            s->info.errOffset, s->info.errReason);
        return -1;
    }
    if (rc == 0) {
        s->done = *done = 1;
        s->info.hasRepl = s->info.hasRepl == 3;
    } else if (rc == 2) {
        *done = 2;
        s->retryAt = 0;
        if (server.cfg.rdbchecksum) s->crc = crc64(s->crc, p, r.pos);
    } else {
        /* Retry a short record once its bytes doubled: a big record that
         * arrives in small pieces is parsed O(its size) times in all. */
        size_t pending = len - r.pos;
        s->retryAt = pending ? pending * 2 : 1;
        *done = 0;
        if (server.cfg.rdbchecksum) s->crc = crc64(s->crc, p, r.pos);
    }
    s->base += r.pos;
    return (long long)r.pos;
}

const RdbLoadInfo *rdbStreamInfo(const RdbStream *s) { return &s->info; }

void rdbStreamRetry(RdbStream *s) { s->retryAt = 0; }

size_t rdbStreamConsumed(const RdbStream *s) { return s->base; }

int rdbStreamApplyFunctions(RdbStream *s, sds *err) {
    for (int i = 0; i < s->nfunctions; i++) {
        sds ferr = NULL;
        if (functionsRdbLoadCode(s->functions[i], 0, &ferr) < 0) {
            *err = sdsCatPrintf(sdsEmpty(), "Failed loading library, %s", ferr ? ferr : "unknown error");
            sdsFree(ferr);
            return -1;
        }
    }
    return 0;
}

void rdbStreamFree(RdbStream *s) {
    if (!s) return;
    for (int i = 0; i < s->nfunctions; i++) sdsFree(s->functions[i]);
    xfree(s->functions);
    xfree(s);
}

int rdbLoadFile(const char *filename, int merge, RdbLoadInfo *info, sds *err) {
    memset(info, 0, sizeof(*info));
    int fd = open(filename, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        *err = sdsCatPrintf(sdsEmpty(), "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        *err = sdsCatPrintf(sdsEmpty(), "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        close(fd);
        return -1;
    }
    if (st.st_size == 0) {
        close(fd);
        return 1;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        *err = sdsCatPrintf(sdsEmpty(), "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        return -1;
    }
    madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    size_t used;
    int rc = rdbLoadBuffer(map, (size_t)st.st_size, merge, info, &used, err);
    rdbLastLoaded = *info;
    munmap(map, (size_t)st.st_size);
    return rc < 0 ? -1 : 0;
}

int rdbLoadBuffer(const unsigned char *p, size_t len, int merge, RdbLoadInfo *info, size_t *used, sds *err) {
    RdbStream s;
    streamInit(&s, server.db, merge);
    /* A file is sanitized deeply only with sanitize-dump-payload yes. */
    RdbReader r = {.p = p, .len = len, .shallow = server.cfg.sanitizeDumpPayload != SANITIZE_PAYLOAD_YES};
    r.defer = r.shallow && rdbDeferLoadChecks;
    /* LZF strings expanded by worker threads (a streamed load has none:
     * its bytes arrive as it reads them). */
    r.pf = rdbPrefetchStart(p, len, 9, rdbLoadThreadCount());
    r.pfNext = r.pfWake = 0;
    int saved = dbNoLazyExpire;
    dbNoLazyExpire = 1;
    int rc = loadSnapshot(&r, &s, 1);
    dbNoLazyExpire = saved;
    rdbPrefetchStop(r.pf);
    *info = s.info;
    info->hasRepl = info->hasRepl == 3;
    *used = r.pos;
    if (rc < 0) {
        info->errOffset = r.pos;
        info->errReason = r.why ? r.why : "unknown error";
        *err = sdsCatPrintf(sdsEmpty(), "Internal error in RDB reading offset %zu, function at rdb.c: %s", r.pos,
                            info->errReason);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                               */
/* ------------------------------------------------------------------------ */

/* --- the primitives an upper layer's values use (rdb.h) --- */

int rdbSaveSingleThreaded;

void rdbPutLen(RdbWriter *w, uint64_t v) { rwLen(w, v); }
void rdbPutString(RdbWriter *w, const void *p, size_t len) { rwString(w, p, len); }
void rdbPutBytes(RdbWriter *w, const void *p, size_t len) { w->buf = sdsCatLen(w->buf, p, len); }

int rdbGetLen(RdbReader *r, uint64_t *v) { return r->why ? -1 : rrLen(r, v); }
int rdbGetString(RdbReader *r, sds *out) { return r->why ? -1 : rrString(r, out); }
int rdbGetBytes(RdbReader *r, void *out, size_t len) {
    if (r->why) return -1;
    if (rrLeft(r) < len) return rrFail(r, WHY_EOF);
    memcpy(out, r->p + r->pos, len);
    r->pos += len;
    return 0;
}
int rdbGetFail(RdbReader *r, const char *why) { return rrFail(r, why); }
kvobj *rdbNewEntryPtr(RdbReader *r, const char *key, size_t keylen, int type, int enc, void *ptr) {
    return newEntryPtr(r, key, keylen, type, enc, ptr);
}

void rdbRegisterTypes(void) {
    objectRegisterPersistence(OBJ_STRING, digestString, stringRdbType, stringRdbSave, stringRdbLoad);
    objectRegisterPersistence(OBJ_LIST, digestList, listRdbType, listRdbSave, listRdbLoad);
    objectRegisterPersistence(OBJ_SET, digestSet, setRdbType, setRdbSave, setRdbLoad);
    objectRegisterPersistence(OBJ_ZSET, digestZset, zsetRdbType, zsetRdbSave, zsetRdbLoad);
    objectRegisterPersistence(OBJ_HASH, digestHash, hashRdbType, hashRdbSave, hashRdbLoad);
    objectRegisterPersistence(OBJ_STREAM, digestStream, streamRdbType, streamRdbSave, streamRdbLoad);
}

/* ------------------------------------------------------------------------ */
/* Module hooks and in-memory writer/reader (rdb.h)                          */
/* ------------------------------------------------------------------------ */

void (*rdbModuleAuxSave)(struct RdbWriter *w, int when);
int (*rdbModuleAuxLoad)(struct RdbReader *r);
int rdbModuleDbId = -1;

struct RdbWriter *rdbBufferWriter(void) {
    RdbWriter *w = xcalloc(sizeof(*w));
    w->buf = sdsEmpty();
    w->fd = -1;
    w->compress = server.cfg.rdbcompression;
    return w;
}

sds rdbBufferWriterDone(struct RdbWriter *w) {
    sds b = w->buf;
    xfree(w);
    return b;
}

struct RdbReader *rdbBufferReader(const void *p, size_t len) {
    RdbReader *r = xcalloc(sizeof(*r));
    r->p = p;
    r->len = len;
    return r;
}

void rdbBufferReaderFree(struct RdbReader *r) { xfree(r); }
